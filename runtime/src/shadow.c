/* x87 shadow builds' runtime (NUMFUZZ_CC_SHADOW=1): the entry points the shadow pass calls.
 *
 * See numfuzz-abi's shadow.rs for the contract. A shadow is a `long double` (x87 extended
 * precision) beside a float or double; shadow_core.c keeps it in memory and across calls.
 *
 * Only the path of an input that triage replays runs this code, never a campaign. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <float.h>
#include <math.h>

#include "numfuzz_abi.h"
#include "shadow_core.h"

void numfuzz_rt_result_shadowed(const char *name, double v, unsigned width, const long double *shadow,
                                const char *unreliable);

/* shadow_mpfr.c's reset, present when an MPFR build pulled that object in. */
extern void __numfuzz_mpfr_reset(void) __attribute__((weak));

static union nf_shadow x87(long double s) {
  union nf_shadow u;
  memset(&u, 0, sizeof u);
  u.x87 = s;
  return u;
}

/* The shadow holds what the format lost: the value went Inf, NaN, zero or subnormal where
 * its shadow did not, or the two differ beyond rounding noise. */
static int lossy(double v, long double s) {
  if (isnan(v) || isnan(s))
    return isnan(v) != isnan(s);
  if (isinf(v) || isinf(s))
    return v != s;
  long double d = fabsl((long double)v - s);
  long double m = fmaxl(fabsl((long double)v), fabsl(s));
  return d > m * 0x1p-30L;
}

static int lossy_cell(double v, union nf_shadow s) { return lossy(v, s.x87); }

/* NUMFUZZ_SHADOW_PRECISION=53: the x87 unit rounds shadows to a 53-bit significand (its
 * precision control; the exponent keeps its 15 bits). Set per input: code may reset it. */
static void set_precision(void) {
#if defined(__x86_64__) || defined(__i386__)
  const char *p = getenv(NUMFUZZ_ENV_SHADOW_PRECISION);
  if (!p || strcmp(p, "53") != 0)
    return;
  uint16_t cw;
  __asm__ volatile("fnstcw %0" : "=m"(cw));
  cw = (uint16_t)((cw & ~0x300u) | 0x200u);
  __asm__ volatile("fldcw %0" : : "m"(cw));
#endif
}

/* The x87 status word's overflow and underflow flags: some shadow went beyond the range of its
 * own format (inf, or below 1e-4931), so a non-finite or zero shadow may be the wider format's
 * own range error, not the true value's. (A pole or log(0) raises divide-by-zero instead.) */
#define X87_OVERFLOW 0x08u
#define X87_UNDERFLOW 0x10u

static unsigned x87_status(void) {
#if defined(__x86_64__) || defined(__i386__)
  uint16_t sw;
  __asm__ volatile("fnstsw %0" : "=m"(sw));
  return sw;
#else
  return 0;
#endif
}

static void x87_clear(void) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__ volatile("fnclex");
#endif
}

/* A new input: its shadows start from its own values. */
void __numfuzz_shadow_reset(void) {
  x87_clear();
  set_precision();
  nf_core_reset();
  if (__numfuzz_mpfr_reset)
    __numfuzz_mpfr_reset();
}

long double __numfuzz_shadow_arg(const void *fn, unsigned index, unsigned count, double v) {
  union nf_shadow s;
  return nf_core_arg(fn, index, count, v, &s) ? s.x87 : v;
}

void __numfuzz_shadow_call(const void *callee) { nf_core_call(callee); }

void __numfuzz_shadow_set_arg(unsigned index, double v, long double s) { nf_core_set_arg(index, v, x87(s)); }

void __numfuzz_shadow_set_ret(const void *fn, double v, long double s) { nf_core_set_ret(fn, v, x87(s)); }

long double __numfuzz_shadow_get_ret(const void *callee, double v, long double otherwise) {
  union nf_shadow s;
  return nf_core_get_ret(callee, v, &s) ? s.x87 : otherwise;
}

long double __numfuzz_shadow_load(const void *p, double v, unsigned width) {
  union nf_shadow s;
  return nf_core_load(p, v, width, &s) ? s.x87 : v;
}

/* The x87 quiet NaN whose significand is `significand`. */
static long double tagged_nan(uint64_t significand) {
  long double s = 0;
  uint16_t top = 0x7fff;
  memcpy(&s, &significand, sizeof significand); /* x87: the significand's 64 bits come first */
  memcpy((char *)&s + sizeof significand, &top, sizeof top);
  return s;
}

void __numfuzz_shadow_store(void *p, double v, long double s, unsigned width) {
  int constant = (width & NUMFUZZ_SHADOW_STORED_CONSTANT) != 0;
  width &= ~NUMFUZZ_SHADOW_STORED_CONSTANT;
  /* A stored constant infinity is an overflow branch's answer (numfuzz-abi's NAN_FROM_CONSTANT). */
  long double kept = constant && isinf(v) ? tagged_nan(NUMFUZZ_SHADOW_NAN_FROM_CONSTANT) : s;
  nf_core_store(p, v, x87(kept), width, constant && v == 0);
}

long double __numfuzz_shadow_pole(long double s, long double operand, const void *p) {
  if (operand == 0 && nf_core_constant_zero_at(p))
    return tagged_nan(NUMFUZZ_SHADOW_NAN_FROM_CONSTANT);
  return s;
}

long double __numfuzz_shadow_bound(long double s, int returned_constant, double v, unsigned width) {
  if (!returned_constant)
    return s;
  nf_core_set_bounded();
  long double least = width == 4 ? 0x1p128L : 0x1p1024L;
  return v < 0 ? -least : least;
}

void __numfuzz_shadow_copy(void *dst, const void *src, uint64_t n) { nf_core_copy(dst, src, n); }

/* An integer load over a float whose shadow holds what its bits lost: a bit trick reads a
 * value the shadow cannot follow. */
void __numfuzz_shadow_int_load(const void *p, unsigned width, const char *where) {
  nf_core_int_load(p, width, where, lossy_cell);
}

void __numfuzz_shadow_bits(double v, long double s, const char *where) {
  if (lossy(v, s))
    nf_core_mark_unreliable(NF_LOST_BITS, where);
}

/* The x87 build never steers: the program goes on with its own outcome. */
int __numfuzz_shadow_cmp(int real, int shadow, double a, long double sa, double b, long double sb,
                         const char *where) {
  if (real != shadow && (lossy(a, sa) || lossy(b, sb)))
    nf_core_mark_unreliable(NF_LOST_BRANCH, where);
  return real;
}

/* Why s is a provisional shadow: a NaN whose payload says a step of the algorithm made it
 * (numfuzz-abi's shadow.rs), NULL otherwise. */
static const char *provisional(long double s) {
  if (s == s)
    return NULL;
  uint64_t significand;
  memcpy(&significand, &s, sizeof significand); /* x87: the significand's 64 bits come first */
  if (significand == NUMFUZZ_SHADOW_NAN_FROM_INFINITY)
    return NUMFUZZ_SHADOW_NAN_FROM_INFINITY_REASON;
  if (significand == NUMFUZZ_SHADOW_NAN_FROM_CONSTANT)
    return NUMFUZZ_SHADOW_NAN_FROM_CONSTANT_REASON;
  return NULL;
}

void __numfuzz_shadow_result(const char *name, double v, long double s, unsigned width) {
  if (x87_status() & (X87_OVERFLOW | X87_UNDERFLOW))
    nf_core_mark_unreliable(NUMFUZZ_SHADOW_X87_RANGE_REASON, NULL);
  const char *why = nf_core_unreliable();
  if (!why)
    why = provisional(s);
  /* A bound within the format (or a NaN made from one) says nothing of the true value. */
  if (!why && nf_core_bounded() && !(fabsl(s) > (width == 4 ? FLT_MAX : DBL_MAX)))
    why = NUMFUZZ_SHADOW_NAN_FROM_CONSTANT_REASON;
  numfuzz_rt_result_shadowed(name, v, width, &s, why);
}
