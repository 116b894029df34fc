/* mathlib: the example library of `numfuzz harness` (see mathlib.h). Some of its formulas are
 * the textbook ones, which is what makes them fail: each known defect is marked BUG. */
#include "mathlib.h"

#include <float.h>
#include <math.h>

/* BUG: e^x overflows for x > 709.78 although 2 e^x / x^2 stays below DBL_MAX up to x ~ 721.
 * exp(x - 2 log|x|) would not overflow first. */
double ml_exp_ratio(double x) { return 2 * exp(x) / (x * x); }

/* BUG: for x < -745, e^x underflows to 0 and log(0) is -inf where the true value is ~x; for
 * x > 709.78, e^x is inf and inf / inf is NaN where the true value is ~ -e^-x. */
double ml_log_sigmoid(ml_real x) {
  double e = exp(x);
  return log(e / (1 + e));
}

/* BUG: x*x overflows in single precision for |x| > 1.8e19 although the hypotenuse does not. */
float ml_hypotf(float x, float y) { return sqrtf(x * x + y * y); }

long double ml_expm1l(long double x) { return expl(x) - 1; }

double ml_round(double x, ml_mode mode) {
  switch (mode) {
  case ML_DOWN:
    return floor(x);
  case ML_UP:
    return ceil(x);
  default:
    return nearbyint(x);
  }
}

double ml_scale(double x, int8_t e, _Bool negate) {
  double r = ldexp(x, e);
  return negate ? -r : r;
}

int ml_pow_int_e(double x, int n, double *out) {
  if (x == 0 && n < 0) {
    *out = NAN;
    return ML_EDOM;
  }
  unsigned m = n < 0 ? -(unsigned)n : (unsigned)n;
  double r = 1, b = x;
  while (m) {
    if (m & 1)
      r *= b;
    m >>= 1;
    if (m)
      b *= b;
  }
  *out = n < 0 ? 1 / r : r;
  return isfinite(*out) ? ML_SUCCESS : ML_ERANGE;
}

/* BUG: x * y overflows for large x and y (1e200, 1e200: the mean is 1e200), and the status
 * stays ML_SUCCESS. */
int ml_harmonic_mean_e(double x, double y, ml_result *result) {
  double s = x + y;
  if (s == 0) {
    result->val = NAN;
    result->err = NAN;
    return ML_EDOM;
  }
  result->val = 2 * x * y / s;
  result->err = 4 * DBL_EPSILON * fabs(result->val);
  return ML_SUCCESS;
}

void ml_sincos(double x, double *s, double *c) {
  *s = sin(x);
  *c = cos(x);
}

/* BUG: log2(0) is -inf and converting it to int is an invalid operation (ilogb(0) is FP_ILOGB0). */
int ml_exponent(double x) { return (int)floor(log2(fabs(x))); }

double ml_mean(const double *xs, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    s += xs[i];
  return s / n;
}

double ml_integrate(double (*f)(double), double a, double b, int steps) {
  double h = (b - a) / steps, s = f(a) + f(b);
  for (int i = 1; i < steps; i++)
    s += f(a + i * h) * (i % 2 ? 4 : 2);
  return s * h / 3;
}

int ml_digits(long n) {
  int d = 1;
  while (n >= 10 || n <= -10) {
    n /= 10;
    d++;
  }
  return d;
}
