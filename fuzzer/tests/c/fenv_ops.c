/* The four arithmetic operations for float, double and long double, one function (and so one
 * numfuzz site) each. Compiled three times into one program:
 *   -DVARIANT=plain                          checked, ordinary code
 *   -DVARIANT=strict -DSTRICT                checked, under FENV_ACCESS (constrained intrinsics)
 *   -DVARIANT=ref with NUMFUZZ_CC_NO_CHECKS=1 edges only: what the program does unchecked */
#ifdef STRICT
#pragma STDC FENV_ACCESS ON
#endif

#define NAME_(v, op) v##_##op
#define NAME(v, op) NAME_(v, op)

#define OPS(T, S)                                                                               \
  T NAME(VARIANT, add_##S)(T a, T b) { return a + b; }                                          \
  T NAME(VARIANT, sub_##S)(T a, T b) { return a - b; }                                          \
  T NAME(VARIANT, mul_##S)(T a, T b) { return a * b; }                                          \
  T NAME(VARIANT, div_##S)(T a, T b) { return a / b; }

OPS(float, f32)
OPS(double, f64)
OPS(long double, f80)
