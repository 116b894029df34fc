/* mathlib: a small numerical library for numfuzz's `numfuzz harness` example (README, "Fuzz
 * your own library"). Its prototypes mix the shapes a real library has: plain double, float
 * and long double functions, integer and enum flags, a status return with a result struct or
 * an out pointer, and a few functions no scalar harness can call. */
#ifndef MATHLIB_H
#define MATHLIB_H

#include <stdint.h>

typedef double ml_real;

/* How ml_round rounds. */
typedef enum { ML_NEAREST, ML_DOWN, ML_UP } ml_mode;

/* A value with its absolute error estimate, as GSL's gsl_sf_result. */
typedef struct {
  double val;
  double err;
} ml_result;

/* Error codes of the _e functions. */
#define ML_SUCCESS 0
#define ML_EDOM 1
#define ML_ERANGE 2

/* 2 e^x / x^2. */
double ml_exp_ratio(double x);

/* log(e^x / (1 + e^x)), the log of the logistic function. */
double ml_log_sigmoid(ml_real x);

/* sqrt(x^2 + y^2) in single precision. */
float ml_hypotf(float x, float y);

/* e^x - 1 in extended precision. */
long double ml_expm1l(long double x);

/* x rounded to an integer as `mode` says. */
double ml_round(double x, ml_mode mode);

/* x * 2^e, negated when `negate` is true. */
double ml_scale(double x, int8_t e, _Bool negate);

/* x^n by repeated squaring; ML_EDOM for 0^n with n < 0. */
int ml_pow_int_e(double x, int n, double *out);

/* The harmonic mean of x and y with its error estimate; ML_EDOM when x + y is 0. */
int ml_harmonic_mean_e(double x, double y, ml_result *result);

/* sin and cos of x at once. */
void ml_sincos(double x, double *s, double *c);

/* The binary exponent of x, as ilogb. */
int ml_exponent(double x);

/* The mean of n values: needs an array, so no generated harness. */
double ml_mean(const double *xs, int n);

/* The integral of f over [a, b] by Simpson's rule: needs a callback. */
double ml_integrate(double (*f)(double), double a, double b, int steps);

/* The number of decimal digits of n: no floating-point value. */
int ml_digits(long n);

#endif
