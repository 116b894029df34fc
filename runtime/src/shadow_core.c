/* Where shadows live between SSA values, for both shadow runtimes (see shadow_core.h and
 * numfuzz-abi's shadow.rs). Memory shadows sit in a table keyed by address that keeps the bits
 * stored with them; call shadows in slots keyed by the callee. Everything is thread-local: a
 * value written by another thread restarts from its bits, which is safe and only loses
 * precision there (replays run the harness in one thread).
 *
 * Only the path of an input that triage replays runs this code, never a campaign. */

#include <stdlib.h>
#include <string.h>

#include "shadow_core.h"

/* One memory shadow: the bits stored at the address and their shadow. */
struct shadow_cell {
  uintptr_t addr; /* 0: empty */
  uint64_t bits;
  uint32_t width; /* 4 or 8 */
  uint32_t constant_zero; /* the program stored a constant 0 here */
  union nf_shadow shadow;
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
static __thread union nf_shadow arg_shadow[NUMFUZZ_SHADOW_MAX_ARGS];
/* The last return: the function, its bits and shadow. */
static __thread const void *ret_fn;
static __thread uint64_t ret_bits;
static __thread union nf_shadow ret_shadow;
static __thread const char *unreliable;
static __thread const char *lost_branch;
static __thread int bounded;
static __thread char unreliable_text[256];
static __thread char lost_branch_text[256];

uint64_t nf_bits_of(double v) {
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

/* Writes "why at where" (or "why") into text[256]. */
static const char *compose(char *text, const char *why, const char *where) {
  size_t n = 0;
  for (const char *p = why; *p && n + 1 < 256; p++)
    text[n++] = *p;
  if (where && *where) {
    for (const char *p = " at "; *p && n + 1 < 256; p++)
      text[n++] = *p;
    for (const char *p = where; *p && n + 1 < 256; p++)
      text[n++] = *p;
  }
  text[n] = 0;
  return text;
}

void nf_core_mark_unreliable(const char *why, const char *where) {
  if (!unreliable)
    unreliable = compose(unreliable_text, why, where);
}

const char *nf_core_unreliable(void) { return unreliable; }

void nf_core_mark_lost_branch(const char *where) {
  if (!lost_branch)
    lost_branch = compose(lost_branch_text, NF_LOST_BRANCH, where);
}

const char *nf_core_lost_branch(void) { return lost_branch; }

void nf_core_set_bounded(void) { bounded = 1; }

int nf_core_bounded(void) { return bounded; }

void nf_core_reset(void) {
  if (table.cells)
    memset(table.cells, 0, (table.mask + 1) * sizeof *table.cells);
  table.used = 0;
  call_callee = NULL;
  call_args = 0;
  ret_fn = NULL;
  unreliable = NULL;
  lost_branch = NULL;
  bounded = 0;
}

int nf_core_arg(const void *fn, unsigned index, unsigned count, double v, union nf_shadow *out) {
  int found = call_callee == fn && index < call_args && index < NUMFUZZ_SHADOW_MAX_ARGS &&
              arg_bits[index] == nf_bits_of(v);
  if (found)
    *out = arg_shadow[index];
  if (index + 1 >= count)
    call_callee = NULL;
  return found;
}

void nf_core_call(const void *callee) {
  call_callee = callee;
  call_args = 0;
}

void nf_core_set_arg(unsigned index, double v, union nf_shadow s) {
  if (index >= NUMFUZZ_SHADOW_MAX_ARGS)
    return;
  arg_bits[index] = nf_bits_of(v);
  arg_shadow[index] = s;
  if (index + 1 > call_args)
    call_args = index + 1;
}

void nf_core_set_ret(const void *fn, double v, union nf_shadow s) {
  ret_fn = fn;
  ret_bits = nf_bits_of(v);
  ret_shadow = s;
}

int nf_core_get_ret(const void *callee, double v, union nf_shadow *out) {
  int found = ret_fn == callee && ret_bits == nf_bits_of(v);
  if (found)
    *out = ret_shadow;
  ret_fn = NULL;
  /* A call that did not go through an instrumented entry leaves its arguments unread. */
  call_callee = NULL;
  return found;
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
  return nf_bits_of(v);
}

int nf_core_load(const void *p, double v, unsigned width, union nf_shadow *out) {
  struct shadow_cell *c = cell((uintptr_t)p, 0);
  if (c && c->width == width && c->bits == stored_bits(p, width) && c->bits == value_bits(v, width)) {
    *out = c->shadow;
    return 1;
  }
  return 0;
}

void nf_core_store(void *p, double v, union nf_shadow s, unsigned width, int constant_zero) {
  struct shadow_cell *c = cell((uintptr_t)p, 1);
  c->bits = value_bits(v, width);
  c->width = width;
  c->shadow = s;
  c->constant_zero = constant_zero;
}

int nf_core_constant_zero_at(const void *p) {
  struct shadow_cell *c = cell((uintptr_t)p, 0);
  return c && c->constant_zero && c->bits == stored_bits(p, c->width);
}

void nf_core_copy(void *dst, const void *src, uint64_t n) {
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

void nf_core_int_load(const void *p, unsigned width, const char *where, int (*lossy)(double v, union nf_shadow s)) {
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
      nf_core_mark_unreliable(NF_LOST_BITS, where);
  }
}
