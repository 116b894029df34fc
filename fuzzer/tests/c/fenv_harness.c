/* Runs every operation of fenv_ops.c on the input's operand pairs, in all three builds, and
 * prints what the program itself observes: one line per input,
 *   <id> then, per (type, operation), four characters: the kinds raised in the checked plain
 *   build, in the checked strict build and in the unchecked build (hex digits, bit 0 Invalid,
 *   1 DivByZero, 2 Overflow, 3 Underflow), and `=` if the three results are bit-identical
 *   (else `!`).
 * The operations run under the rounding mode the input selects. */
#include <fenv.h>
#include <stdio.h>
#include <string.h>
#include <numfuzz.h>

#pragma STDC FENV_ACCESS ON

NUMFUZZ_SIGNATURE("u32,u8,f32,f32,f64,f64,f80,f80");

#define DECLARE(T, S, op)                                                                       \
  T plain_##op##_##S(T, T);                                                                     \
  T strict_##op##_##S(T, T);                                                                    \
  T ref_##op##_##S(T, T);
#define DECLARE_ALL(T, S) DECLARE(T, S, add) DECLARE(T, S, sub) DECLARE(T, S, mul) DECLARE(T, S, div)
DECLARE_ALL(float, f32)
DECLARE_ALL(double, f64)
DECLARE_ALL(long double, f80)

static int kinds(void) {
  int f = fetestexcept(FE_ALL_EXCEPT);
  return ((f & FE_INVALID) ? 1 : 0) | ((f & FE_DIVBYZERO) ? 2 : 0) | ((f & FE_OVERFLOW) ? 4 : 0) |
         ((f & FE_UNDERFLOW) ? 8 : 0);
}

#define RUN(T, S, op, a, b, width)                                                              \
  do {                                                                                          \
    T r[3];                                                                                     \
    int k[3];                                                                                   \
    feclearexcept(FE_ALL_EXCEPT);                                                               \
    r[0] = plain_##op##_##S(a, b);                                                              \
    k[0] = kinds();                                                                             \
    feclearexcept(FE_ALL_EXCEPT);                                                               \
    r[1] = strict_##op##_##S(a, b);                                                             \
    k[1] = kinds();                                                                             \
    feclearexcept(FE_ALL_EXCEPT);                                                               \
    r[2] = ref_##op##_##S(a, b);                                                                \
    k[2] = kinds();                                                                             \
    int same = memcmp(&r[0], &r[2], width) == 0 && memcmp(&r[1], &r[2], width) == 0;           \
    printf(" %x%x%x%c", k[0], k[1], k[2], same ? '=' : '!');                                    \
  } while (0)

#define RUN_ALL(T, S, a, b, width)                                                              \
  RUN(T, S, add, a, b, width);                                                                  \
  RUN(T, S, sub, a, b, width);                                                                  \
  RUN(T, S, mul, a, b, width);                                                                  \
  RUN(T, S, div, a, b, width)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const int modes[4] = {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
  unsigned id = nf_u32(data, size, 0);
  int mode = modes[nf_u8(data, size, 1) % 4];
  float fa = nf_f32(data, size, 2), fb = nf_f32(data, size, 3);
  double da = nf_f64(data, size, 4), db = nf_f64(data, size, 5);
  long double la = nf_f80(data, size, 6), lb = nf_f80(data, size, 7);
  int saved = fegetround();
  fesetround(mode);
  printf("%u", id);
  RUN_ALL(float, f32, fa, fb, 4);
  RUN_ALL(double, f64, da, db, 8);
  RUN_ALL(long double, f80, la, lb, 10);
  fesetround(saved);
  printf("\n");
  return 0;
}
