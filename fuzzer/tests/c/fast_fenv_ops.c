/* Operations a program brackets with its own flag tests, compiled twice into one harness:
 * checked by numfuzz (VARIANT=checked) and edges-only (VARIANT=unchecked, the reference for
 * what the program would see without numfuzz). As C requires of a program that tests the
 * flags, it says so with FENV_ACCESS: without it the compiler may move a floating-point
 * operation across the flag tests, and does so differently in differently built code. */
#include <fenv.h>
#pragma STDC FENV_ACCESS ON

#define WATCHED (FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW)

/* Flags after a * b in the low byte, after c / b in the next one; the program clears the
 * flags before each, so a fast run must keep what the first clear would erase. */
int VARIANT(double a, double b, double c, double *out) {
  feclearexcept(FE_ALL_EXCEPT);
  double p = a * b; /* @product */
  int first = fetestexcept(WATCHED);
  feclearexcept(FE_ALL_EXCEPT);
  double q = c / b; /* @quotient */
  int second = fetestexcept(WATCHED);
  *out = q + (p > 1.0 ? 1.0 : 0.0);
  return first | second << 8;
}
