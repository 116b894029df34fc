/* Compares the flags the program reads in the checked build with those of the edges-only
 * build of the same code, and aborts when they differ: numfuzz must never change what a
 * program sees with fetestexcept. */
#include <numfuzz.h>
#include <stdio.h>
#include <stdlib.h>

NUMFUZZ_SIGNATURE("f64,f64,f64");
int checked(double a, double b, double c, double *out);
int unchecked(double a, double b, double c, double *out);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double a = nf_f64(data, size, 0), b = nf_f64(data, size, 1), c = nf_f64(data, size, 2);
  double r, ref;
  int seen = checked(a, b, c, &r), expected = unchecked(a, b, c, &ref);
  if (seen != expected) {
    fprintf(stderr, "flags differ: the program saw %#x, without numfuzz %#x\n", seen, expected);
    abort();
  }
  /* One line per run: a test counts the runs of an input. */
  printf("run %#x\n", seen);
  NUMFUZZ_RESULT(r);
  return 0;
}
