/* Loops whose steps reach the runtime again and again: a quotient that overflows, then
 * divides by zero, at one site; a value that overflows and is then carried along as an
 * infinity; and a NaN carried along. Each (site, kind) must be reported once, and nothing
 * for the steps that only carry a special value. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

volatile double sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double in[3];
  if (size < sizeof in)
    return 0;
  memcpy(in, data, sizeof in);
  double divisors[6] = {in[1], in[1], in[1], 0.0, in[1], 0.0};
  for (int k = 0; k < 6; k++)
    sink = in[0] / divisors[k]; /* @quotient */
  double big = in[0], carried = in[2];
  for (int k = 0; k < 1000; k++) {
    big = big * 2.0; /* @doubling */
    carried = carried * 0.5; /* @halving */
  }
  sink = big + carried; /* @sum */
  return 0;
}
