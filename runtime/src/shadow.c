/* Shadow builds' runtime: where shadows live between the SSA values the pass gives them.
 *
 * See numfuzz-abi's shadow.rs for the contract. A shadow is a `long double` (x87 extended
 * precision) beside a float or double. Memory shadows sit in a table keyed by address that
 * keeps the bits stored with them; call shadows in slots keyed by the callee. Everything is
 * thread-local: a value written by another thread restarts from its bits, which is safe and
 * only loses precision there (replays run the harness in one thread).
 *
 * Only the path of an input that triage replays runs this code, never a campaign. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <float.h>
#include <math.h>

#include "numfuzz_abi.h"

void numfuzz_rt_result_shadowed(const char *name, double v, unsigned width, const long double *shadow,
                                const char *unreliable);

/* One memory shadow: the bits stored at the address and their shadow. */
struct shadow_cell {
  uintptr_t addr; /* 0: empty */
  uint64_t bits;
  uint32_t width; /* 4 or 8 */
  uint32_t constant_zero; /* the program stored a constant 0 here */
  long double shadow;
};

struct shadow_table {
  struct shadow_cell *cells;
  size_t mask; /* capacity - 1 (a power of two) */
  size_t used;
};

#define NUMFUZZ_SHADOW_MAX_ARGS 16

static __thread struct shadow_table table;
/* The call in flight: its callee and its float arguments' bits and shadows. */
static __thread const void *call_callee;
static __thread unsigned call_args;
static __thread uint64_t arg_bits[NUMFUZZ_SHADOW_MAX_ARGS];
static __thread long double arg_shadow[NUMFUZZ_SHADOW_MAX_ARGS];
/* The last return: the function, its bits and shadow. */
static __thread const void *ret_fn;
static __thread uint64_t ret_bits;
static __thread long double ret_shadow;
/* Why this input's shadows stopped telling the wider program's results (NULL: they did not). */
static __thread const char *unreliable;
/* A callee's constant infinity entered arithmetic as a bound (numfuzz-abi's RETURNED_CONSTANT_BOUND). */
static __thread int bounded;
static __thread char unreliable_text[256];

static uint64_t bits_of(double v) {
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

static size_t slot_of(uintptr_t addr, size_t mask) {
  uint64_t h = (uint64_t)addr * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 20) & mask;
}

static void grow(struct shadow_table *t) {
  size_t cap = t->cells ? (t->mask + 1) * 2 : 4096;
  struct shadow_cell *cells = calloc(cap, sizeof *cells);
  if (!cells)
    abort();
  for (size_t i = 0; t->cells && i <= t->mask; i++) {
    struct shadow_cell *c = &t->cells[i];
    if (!c->addr)
      continue;
    size_t j = slot_of(c->addr, cap - 1);
    while (cells[j].addr)
      j = (j + 1) & (cap - 1);
    cells[j] = *c;
  }
  free(t->cells);
  t->cells = cells;
  t->mask = cap - 1;
}

/* The cell of `addr`, created when `create` (NULL when absent and not created). */
static struct shadow_cell *cell(uintptr_t addr, int create) {
  struct shadow_table *t = &table;
  if (!t->cells) {
    if (!create)
      return NULL;
    grow(t);
  }
  size_t i = slot_of(addr, t->mask);
  while (t->cells[i].addr) {
    if (t->cells[i].addr == addr)
      return &t->cells[i];
    i = (i + 1) & t->mask;
  }
  if (!create)
    return NULL;
  if ((t->used + 1) * 2 > t->mask + 1) {
    grow(t);
    return cell(addr, create);
  }
  t->used++;
  t->cells[i].addr = addr;
  return &t->cells[i];
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

static void mark_unreliable(const char *why, const char *where) {
  if (unreliable)
    return;
  size_t n = 0;
  for (const char *p = why; *p && n + 1 < sizeof unreliable_text; p++)
    unreliable_text[n++] = *p;
  if (where && *where) {
    const char *at = " at ";
    for (const char *p = at; *p && n + 1 < sizeof unreliable_text; p++)
      unreliable_text[n++] = *p;
    for (const char *p = where; *p && n + 1 < sizeof unreliable_text; p++)
      unreliable_text[n++] = *p;
  }
  unreliable_text[n] = 0;
  unreliable = unreliable_text;
}

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
  if (table.cells)
    memset(table.cells, 0, (table.mask + 1) * sizeof *table.cells);
  table.used = 0;
  call_callee = NULL;
  call_args = 0;
  ret_fn = NULL;
  unreliable = NULL;
  bounded = 0;
}

long double __numfuzz_shadow_arg(const void *fn, unsigned index, unsigned count, double v) {
  long double s = v;
  if (call_callee == fn && index < call_args && index < NUMFUZZ_SHADOW_MAX_ARGS && arg_bits[index] == bits_of(v))
    s = arg_shadow[index];
  if (index + 1 >= count)
    call_callee = NULL;
  return s;
}

void __numfuzz_shadow_call(const void *callee) {
  call_callee = callee;
  call_args = 0;
}

void __numfuzz_shadow_set_arg(unsigned index, double v, long double s) {
  if (index >= NUMFUZZ_SHADOW_MAX_ARGS)
    return;
  arg_bits[index] = bits_of(v);
  arg_shadow[index] = s;
  if (index + 1 > call_args)
    call_args = index + 1;
}

void __numfuzz_shadow_set_ret(const void *fn, double v, long double s) {
  ret_fn = fn;
  ret_bits = bits_of(v);
  ret_shadow = s;
}

long double __numfuzz_shadow_get_ret(const void *callee, double v, long double otherwise) {
  long double s = (ret_fn == callee && ret_bits == bits_of(v)) ? ret_shadow : otherwise;
  ret_fn = NULL;
  /* A call that did not go through an instrumented entry leaves its arguments unread. */
  call_callee = NULL;
  return s;
}

static uint64_t stored_bits(const void *p, unsigned width) {
  if (width == 4) {
    uint32_t w;
    memcpy(&w, p, 4);
    return w;
  }
  uint64_t w;
  memcpy(&w, p, 8);
  return w;
}

/* Floats arrive widened to double; their bits in memory are compared as floats. */
static uint64_t value_bits(double v, unsigned width) {
  if (width == 4) {
    float f = (float)v;
    uint32_t w;
    memcpy(&w, &f, 4);
    return w;
  }
  return bits_of(v);
}

long double __numfuzz_shadow_load(const void *p, double v, unsigned width) {
  struct shadow_cell *c = cell((uintptr_t)p, 0);
  if (c && c->width == width && c->bits == stored_bits(p, width) && c->bits == value_bits(v, width))
    return c->shadow;
  return v;
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
  struct shadow_cell *c = cell((uintptr_t)p, 1);
  c->bits = value_bits(v, width);
  c->width = width;
  /* A stored constant infinity is an overflow branch's answer (numfuzz-abi's NAN_FROM_CONSTANT). */
  c->shadow = constant && isinf(v) ? tagged_nan(NUMFUZZ_SHADOW_NAN_FROM_CONSTANT) : s;
  c->constant_zero = constant && v == 0;
}

long double __numfuzz_shadow_pole(long double s, long double operand, const void *p) {
  if (operand != 0)
    return s;
  struct shadow_cell *c = cell((uintptr_t)p, 0);
  if (c && c->constant_zero && c->bits == stored_bits(p, c->width))
    return tagged_nan(NUMFUZZ_SHADOW_NAN_FROM_CONSTANT);
  return s;
}

long double __numfuzz_shadow_bound(long double s, int returned_constant, double v, unsigned width) {
  if (!returned_constant)
    return s;
  bounded = 1;
  long double least = width == 4 ? 0x1p128L : 0x1p1024L;
  return v < 0 ? -least : least;
}

void __numfuzz_shadow_copy(void *dst, const void *src, uint64_t n) {
  uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
  if (!table.cells || n == 0 || d == s)
    return;
  /* Collected first: the ranges may overlap (memmove). Floats sit at 4-byte offsets. */
  size_t found = 0, cap = 0;
  struct shadow_cell *moved = NULL;
  for (uint64_t off = 0; off + 4 <= n; off += 4) {
    struct shadow_cell *c = cell(s + off, 0);
    if (!c || off + c->width > n)
      continue;
    if (found == cap) {
      cap = cap ? cap * 2 : 16;
      moved = realloc(moved, cap * sizeof *moved);
      if (!moved)
        abort();
    }
    moved[found] = *c;
    moved[found++].addr = d + off;
  }
  for (size_t i = 0; i < found; i++) {
    struct shadow_cell *c = cell(moved[i].addr, 1);
    uintptr_t addr = c->addr;
    *c = moved[i];
    c->addr = addr;
  }
  free(moved);
}

/* An integer load over a float whose shadow holds what its bits lost: a bit trick reads a
 * value the shadow cannot follow. */
void __numfuzz_shadow_int_load(const void *p, unsigned width, const char *where) {
  if (!table.cells || unreliable)
    return;
  uintptr_t a = (uintptr_t)p;
  for (uintptr_t start = a >= 4 ? a - 4 : 0; start < a + width; start += 4) {
    struct shadow_cell *c = cell(start, 0);
    if (!c || start + c->width <= a || c->bits != stored_bits((const void *)start, c->width))
      continue;
    double v;
    if (c->width == 4) {
      float f;
      uint32_t w = (uint32_t)c->bits;
      memcpy(&f, &w, 4);
      v = f;
    } else {
      memcpy(&v, &c->bits, 8);
    }
    if (lossy(v, c->shadow))
      mark_unreliable("the bits of a value the format lost were read as an integer", where);
  }
}

void __numfuzz_shadow_bits(double v, long double s, const char *where) {
  if (lossy(v, s))
    mark_unreliable("the bits of a value the format lost were read as an integer", where);
}

void __numfuzz_shadow_cmp(int real, int shadow, double a, long double sa, double b, long double sb,
                          const char *where) {
  if (real != shadow && (lossy(a, sa) || lossy(b, sb)))
    mark_unreliable("a branch on a value the format lost went the other way in the shadow", where);
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
    mark_unreliable("a shadow went beyond the range of its own format (x87 overflow or underflow)", NULL);
  const char *why = unreliable;
  if (!why)
    why = provisional(s);
  /* A bound within the format (or a NaN made from one) says nothing of the true value. */
  if (!why && bounded && !(fabsl(s) > (width == 4 ? FLT_MAX : DBL_MAX)))
    why = NUMFUZZ_SHADOW_NAN_FROM_CONSTANT_REASON;
  numfuzz_rt_result_shadowed(name, v, width, &s, why);
}
