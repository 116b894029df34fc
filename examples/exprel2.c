/* A numfuzz example: the relative exponential (e^x - 1 - x) * 2 / x^2, written the way
 * special-function libraries write it: a series near 0, a direct formula in the middle, and a
 * range check that reports overflow for large x. The check is one step too late: for x just
 * below ln(DBL_MAX), e^x fits but 2*e^x does not, so the function "succeeds" with +inf.
 *
 *   numfuzz-cc -O2 exprel2.c -o exprel2 && numfuzz run -o out -V 30 -- ./exprel2
 *   NUMFUZZ_CC_TAINT=1 numfuzz-cc -O2 exprel2.c -o exprel2.taint   (what triage replays)
 *   numfuzz triage out --minimize --oracle examples/exprel2_oracle.py
 */
#include <math.h>
#include <numfuzz.h>

NUMFUZZ_SIGNATURE("f64");
NUMFUZZ_FUNCTION("exprel2");

/* Returns 0 on success, 1 when it reports overflow itself. */
static int exprel2(double x, double *result) {
  const double ln_max = 7.0978271289338397e+02;
  if (fabs(x) < 1e-4) {
    *result = 1.0 + x / 3.0 * (1.0 + x / 4.0);
    return 0;
  }
  if (x < -50.0) {
    *result = 2.0 / (x * x) * (-1.0 - x);
    return 0;
  }
  if (x < ln_max) {
    double ex = exp(x);
    *result = 2.0 * (ex - 1.0 - x) / (x * x);
    return 0;
  }
  *result = INFINITY;
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double r;
  if (exprel2(nf_f64(data, size, 0), &r) != 0)
    NUMFUZZ_HANDLED();
  NUMFUZZ_RESULT(r); /* what the function returned: triage checks what reaches it */
  return 0;
}
