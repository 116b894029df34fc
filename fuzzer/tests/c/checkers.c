/* One checked operation per selector value, each on its own line marked `@name` so the tests
 * can find the line a report must point at. Every operand comes from the input: constants
 * would be folded by clang before any check could see them. */
#include <math.h>
#include <numfuzz.h>
#include <xmmintrin.h>

NUMFUZZ_SIGNATURE("u8,f64,f64,f64,f32,f32,f80,f80");

typedef double v2d __attribute__((vector_size(16)));

volatile double sink;
volatile float sink_f;
volatile long double sink_l;
volatile int sink_i;
volatile short sink_s;
volatile unsigned sink_u;
volatile v2d sink_v;

/* Code that asks for IEEE semantics: clang emits constrained intrinsics here. */
static double strict_mul(double a, double b) {
#pragma STDC FENV_ACCESS ON
  return a * b; /* @strict */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double a = nf_f64(data, size, 1), b = nf_f64(data, size, 2), c = nf_f64(data, size, 3);
  float fa = nf_f32(data, size, 4), fb = nf_f32(data, size, 5);
  long double la = nf_f80(data, size, 6), lb = nf_f80(data, size, 7);
  switch (nf_u8(data, size, 0)) {
  case 0:
    sink = a - b; /* @fsub */
    break;
  case 1:
    sink = a * b; /* @fmul */
    break;
  case 2:
    sink = a / b; /* @fdiv */
    break;
  case 3:
    sink = a + b; /* @fadd */
    break;
  case 4:
    sink_i = (int)a; /* @fptosi */
    break;
  case 5:
    sink_f = (float)a; /* @fptrunc */
    break;
  case 6:
    sink = sqrt(a); /* @sqrt */
    break;
  case 7:
    sink = log(a); /* @log */
    break;
  case 8:
    sink = pow(a, b); /* @pow */
    break;
  case 9:
    sink = exp(a); /* @exp */
    break;
  case 10:
    sink = acos(a); /* @acos */
    break;
  case 11:
    sink = lgamma(a); /* @lgamma */
    break;
  case 12:
    sink_f = fa * fb; /* @fmul_f32 */
    break;
  case 13:
    sink_l = la * lb; /* @fmul_f80 */
    break;
  case 14:
    sink = a * b + c; /* @fused */
    break;
  case 15:
    sink = fma(a, b, c); /* @fma */
    break;
  case 16: {
    v2d x = {a, b}, y = {c, c};
    sink_v = x * y; /* @vector */
    break;
  }
  case 17:
    sink_l = logl(la); /* @logl */
    break;
  case 18:
    sink = strict_mul(a, b);
    break;
  case 19:
    sink_s = (short)a; /* @fptosi_i16 */
    break;
  case 20:
    sink_u = (unsigned)a; /* @fptoui_u32 */
    break;
  case 21:
    _mm_setcsr(_mm_getcsr() | 0x8000); /* flush-to-zero */
    sink = a - b; /* @fsub_ftz */
    _mm_setcsr(_mm_getcsr() & ~0x8000u);
    break;
  }
  return 0;
}
