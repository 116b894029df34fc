/* MPFR shadow builds' runtime (NUMFUZZ_CC_SHADOW=mpfr): the entry points the shadow pass calls
 * in an MPFR build (see numfuzz-abi's shadow.rs, module `mpfr`).
 *
 * A shadow is a handle to an MPFR value of the run, with the widest exponent range MPFR has
 * and the precision NUMFUZZ_SHADOW_PRECISION names (bits). Values are never freed during a
 * run: they come from an arena that the next input reuses, so a handle stays valid wherever
 * the program keeps it (memory, call slots). A NaN carries a tag beside it, the x87 build's
 * payload: born from an infinity, from a stored constant, from a returned constant. A zero or
 * an infinity MPFR made by leaving its own exponent range (2^-(2^62) to 2^(2^62)) carries a tag
 * too: its true value is a nonzero beyond any binary format, which operations that scale it keep
 * (see `ranged`), and, where the operation that clamped it tells it, the base-2 logarithm of its
 * magnitude (see `magnitude` below), from which products, powers and logs of it are computed.
 *
 * This object is pulled out of the runtime archive only by an MPFR build, which links
 * -lmpfr -lgmp; shadow.c's reset calls ours through a weak reference. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <float.h>

#include <mpfr.h>

#include "numfuzz_abi.h"
#include "shadow_core.h"

void numfuzz_rt_result_shadowed_text(const char *name, double v, unsigned width, const char *shadow,
                                     const char *unreliable);
void numfuzz_rt_precision_lost(const char *origin_file, unsigned origin_line, unsigned origin_column,
                               unsigned origin_op, unsigned correct_bits, unsigned bits, const char *file,
                               unsigned line, unsigned column, unsigned op);

/* A NaN's origin, ordered as the x87 payloads (the larger one wins when two NaNs meet); and, on
 * a zero or an infinity, that MPFR's exponent range clamped it. */
enum tag {
  TAG_NONE = 0,
  TAG_FROM_INFINITY = 1,
  TAG_FROM_CONSTANT = 2,
  TAG_FROM_RETURNED_CONSTANT = 3,
  TAG_BEYOND_EXPONENTS = 4
};

#define BEYOND_EXPONENTS_LOST "a value beyond MPFR's own exponent range reached an operation that does not scale it"
#define STEERED_CONVERSION_LOST                                                                                  \
  "a steered run converted to an integer a shadow no integer of the program's type holds, where the "            \
  "program's own value fitted"
#define BEYOND_EXPONENTS_RESULT                                                                                  \
  "the result's shadow is beyond MPFR's own exponent range with no magnitude kept, where its two precisions "     \
  "cannot tell a true value from rounding noise"

typedef struct nf_mp {
  mpfr_t v;
  int tag;
  /* Where the program's value lost most of its correct digits on its way here: an index into
   * `origins` plus one (0: it kept them, or it was never measured). */
  unsigned origin;
  /* On a value clamped beyond MPFR's exponents (TAG_BEYOND_EXPONENTS): log2 of its true magnitude,
   * a value of the run at the run's precision (its sign is `v`'s); NULL where no operation told it.
   * An MPFR value rather than a double: a clamped value's magnitude can be beyond a double's range
   * (exp(exp(12000)) is 2^(1.7e5211)), and where magnitudes cancel (exp(-x/3)^3·exp(x) for x =
   * 1e300, which is 1) a double's rounding would be the same at both of the ladder's precisions,
   * so the two would agree on noise; at the run's precision the noise differs between them and the
   * ladder sees it. Where nothing cancels, a magnitude of 1.4e300 known to 2^-128 relative gives a
   * log of it to 2^-128 relative as well: more than a double's 53 bits. */
  struct nf_mp *magnitude;
} nf_mp;

/* An operation of the source, as the pass passes it to __numfuzz_mpfr_track. */
struct place {
  const char *file;
  unsigned line, column, op;
};

/* The run's origins of lost precision, and the operations a value carrying one reached with
 * an exceptional result (each reported once). */
static __thread struct {
  struct place at;
  unsigned correct, bits;
} origins[NUMFUZZ_MAX_PRECISION_LOSSES];
static __thread unsigned origin_count;
static __thread struct place reached[NUMFUZZ_MAX_PRECISION_LOSSES];
static __thread unsigned reached_count;

#define CHUNK 4096
static __thread nf_mp **chunks;
static __thread size_t chunk_count;
static __thread uint64_t used;       /* values handed out this run */
static __thread uint64_t initialised; /* values with limbs at `precision` */
static __thread mpfr_prec_t precision;
static __thread nf_mp exhausted;     /* what every operation returns once the arena is full */
static __thread int exhausted_ready;
/* A run steered by its shadows (NUMFUZZ_SHADOW_STEER=1): comparisons and conversions to integers
 * take the shadows' outcomes, so the program follows the path of its exact values. */
static __thread int steered;

static mpfr_prec_t wanted_precision(void) {
  const char *p = getenv(NUMFUZZ_ENV_SHADOW_PRECISION);
  long bits = p ? strtol(p, NULL, 10) : 0;
  if (bits < MPFR_PREC_MIN || bits > 1 << 16)
    bits = NUMFUZZ_MPFR_DEFAULT_PRECISION;
  return (mpfr_prec_t)bits;
}

void __numfuzz_mpfr_reset(void) {
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  mpfr_clear_flags();
  const char *steer = getenv(NUMFUZZ_ENV_SHADOW_STEER);
  steered = steer && strcmp(steer, "1") == 0;
  mpfr_prec_t p = wanted_precision();
  if (p != precision) {
    for (uint64_t i = 0; i < initialised; i++)
      mpfr_set_prec(chunks[i / CHUNK][i % CHUNK].v, p);
    precision = p;
  }
  if (!exhausted_ready) {
    mpfr_init2(exhausted.v, 53);
    mpfr_set_nan(exhausted.v);
    exhausted_ready = 1;
  }
  used = 0;
  origin_count = 0;
  reached_count = 0;
}

/* A fresh value of the run (tag none; its number is whatever the caller sets). */
static nf_mp *fresh(void) {
  if (!precision)
    __numfuzz_mpfr_reset();
  if (used >= NUMFUZZ_MPFR_MAX_VALUES) {
    nf_core_mark_unreliable(NUMFUZZ_MPFR_EXHAUSTED_REASON, NULL);
    return &exhausted;
  }
  if (used / CHUNK >= chunk_count) {
    chunks = realloc(chunks, (chunk_count + 1) * sizeof *chunks);
    if (!chunks || !(chunks[chunk_count] = malloc(CHUNK * sizeof(nf_mp))))
      abort();
    chunk_count++;
  }
  nf_mp *x = &chunks[used / CHUNK][used % CHUNK];
  if (used >= initialised) {
    mpfr_init2(x->v, precision);
    initialised = used + 1;
  }
  used++;
  x->tag = TAG_NONE;
  x->origin = 0;
  x->magnitude = NULL;
  return x;
}

static union nf_shadow handle(nf_mp *x) {
  union nf_shadow u;
  memset(&u, 0, sizeof u);
  u.handle = x;
  return u;
}

static nf_mp *tagged_nan(int tag) {
  nf_mp *x = fresh();
  mpfr_set_nan(x->v);
  x->tag = tag;
  return x;
}

nf_mp *__numfuzz_mpfr_from_f64(double v) {
  nf_mp *x = fresh();
  mpfr_set_d(x->v, v, MPFR_RNDN);
  return x;
}

nf_mp *__numfuzz_mpfr_from_f80(long double v) {
  nf_mp *x = fresh();
  mpfr_set_ld(x->v, v, MPFR_RNDN);
  return x;
}

nf_mp *__numfuzz_mpfr_from_int(int64_t v, int is_unsigned) {
  nf_mp *x = fresh();
  if (is_unsigned)
    mpfr_set_ui(x->v, (unsigned long)(uint64_t)v, MPFR_RNDN);
  else
    mpfr_set_si(x->v, (long)v, MPFR_RNDN);
  return x;
}

static int beyond(const nf_mp *x) { return x && x->tag == TAG_BEYOND_EXPONENTS; }

/* Clears MPFR's range flags before an operation, which `ranged` reads after it. */
static void range_flags_cleared(void) {
  mpfr_clear_overflow();
  mpfr_clear_underflow();
}

/* Log-magnitudes: what is known of a value beyond MPFR's exponents. Every magnitude is a value of
 * the run at the run's precision; the scratch values below are too. */

static void scratch(mpfr_ptr t) { mpfr_init2(t, precision); }

/* log2|x| into l: 1 where it is known (x a nonzero number, or a clamped value that kept it). */
static int log2_magnitude(mpfr_ptr l, const nf_mp *x) {
  if (beyond(x)) {
    if (!x->magnitude)
      return 0;
    mpfr_set(l, x->magnitude->v, MPFR_RNDN);
    return 1;
  }
  if (!mpfr_regular_p(x->v))
    return 0;
  mpfr_abs(l, x->v, MPFR_RNDN);
  mpfr_log2(l, l, MPFR_RNDN);
  return 1;
}

/* Keeps l as the magnitude of r, a zero or an infinity MPFR clamped (none once the arena is full). */
static void keep_magnitude(nf_mp *r, mpfr_srcptr l) {
  if (r == &exhausted)
    return;
  nf_mp *m = fresh();
  if (m == &exhausted)
    return;
  mpfr_set(m->v, l, MPFR_RNDN);
  r->magnitude = m;
}

/* r = ±2^l: a number where MPFR holds it, else a zero or an infinity clamped that keeps l. */
static nf_mp *at_magnitude(nf_mp *r, mpfr_srcptr l, int negative) {
  range_flags_cleared();
  mpfr_exp2(r->v, l, MPFR_RNDN);
  r->tag = TAG_NONE;
  r->magnitude = NULL;
  if (mpfr_overflow_p() || mpfr_underflow_p()) {
    if (mpfr_sgn(l) > 0)
      mpfr_set_inf(r->v, 1);
    else
      mpfr_set_zero(r->v, 1);
    r->tag = TAG_BEYOND_EXPONENTS;
    keep_magnitude(r, l);
  }
  if (negative)
    mpfr_neg(r->v, r->v, MPFR_RNDN);
  return r;
}

/* r = x, negated when `negate`: its value, its tag, its magnitude. */
static nf_mp *copied(nf_mp *r, const nf_mp *x, int negate) {
  if (negate)
    mpfr_neg(r->v, x->v, MPFR_RNDN);
  else
    mpfr_set(r->v, x->v, MPFR_RNDN);
  r->tag = x->tag;
  r->magnitude = x->magnitude;
  return r;
}

/* r = a·v (a regular `by`): a function whose value at a clamped zero is that value times a
 * constant to every precision (sin(t) = t·(1 - t²/6 ...), erf(t) = 2t/√π·(1 - t²/3 ...)). */
static nf_mp *times_constant(nf_mp *r, const nf_mp *a, mpfr_srcptr by) {
  mpfr_t l;
  scratch(l);
  mpfr_abs(l, by, MPFR_RNDN);
  mpfr_log2(l, l, MPFR_RNDN);
  mpfr_add(l, l, a->magnitude->v, MPFR_RNDN);
  at_magnitude(r, l, (mpfr_signbit(a->v) != 0) != (mpfr_signbit(by) != 0));
  mpfr_clear(l);
  return r;
}

/* A clamped operand whose result has no true value (the log of a negative one): NaN, and the
 * run's shadows say why. */
static nf_mp *undefined_beyond(nf_mp *r) {
  mpfr_set_nan(r->v);
  r->tag = TAG_NONE;
  r->magnitude = NULL;
  nf_core_mark_unreliable(BEYOND_EXPONENTS_LOST, NULL);
  return r;
}

/* What decides x + y, of magnitudes lx, ly (log2) and signs nx, ny (1: negative). */
enum sum_by {
  /* Two of opposite signs within a factor of 2 of each other: what is left of them, down to 0,
   * is below the magnitudes' own rounding. */
  SUM_UNKNOWN,
  /* One is smaller than the other by more than the precision: the other, exactly. */
  SUM_X,
  SUM_Y,
  /* 2^max·(1 ± 2^-d), d the difference of the magnitudes, within the precision: l and *negative. */
  SUM_BOTH
};

static enum sum_by sum_magnitude(mpfr_ptr l, int *negative, mpfr_srcptr lx, int nx, mpfr_srcptr ly, int ny) {
  mpfr_t d, t;
  scratch(d);
  scratch(t);
  mpfr_sub(d, lx, ly, MPFR_RNDN);
  int x_larger = mpfr_sgn(d) >= 0;
  enum sum_by by;
  if (mpfr_cmpabs_ui(d, (unsigned long)precision + 1) > 0) {
    by = x_larger ? SUM_X : SUM_Y;
  } else if (nx != ny && mpfr_cmpabs_ui(d, 1) < 0) {
    by = SUM_UNKNOWN;
  } else {
    /* log2(1 ± 2^-|d|), 2^-|d| at most 1/2 where the signs differ. */
    mpfr_abs(d, d, MPFR_RNDN);
    mpfr_neg(d, d, MPFR_RNDN);
    mpfr_exp2(t, d, MPFR_RNDN);
    if (nx != ny)
      mpfr_neg(t, t, MPFR_RNDN);
    mpfr_log1p(t, t, MPFR_RNDN);
    mpfr_const_log2(d, MPFR_RNDN);
    mpfr_div(t, t, d, MPFR_RNDN);
    mpfr_add(l, x_larger ? lx : ly, t, MPFR_RNDN);
    *negative = x_larger ? nx : ny;
    by = SUM_BOTH;
  }
  mpfr_clear(d);
  mpfr_clear(t);
  return by;
}

/* r = x + y (y negated when `minus`) from their magnitudes, one of them clamped: 1 when that
 * decides it. A zero the program held adds nothing; an infinity or a NaN is MPFR's to add. */
static int sum_by_magnitude(nf_mp *r, nf_mp *x, nf_mp *y, int minus) {
  if (!beyond(x) && mpfr_zero_p(x->v))
    return copied(r, y, minus), 1;
  if (!beyond(y) && mpfr_zero_p(y->v))
    return copied(r, x, 0), 1;
  mpfr_t lx, ly, l;
  scratch(lx);
  scratch(ly);
  scratch(l);
  int negative = 0, done = 0;
  if (log2_magnitude(lx, x) && log2_magnitude(ly, y)) {
    int nx = mpfr_signbit(x->v) != 0, ny = (mpfr_signbit(y->v) != 0) != minus;
    switch (sum_magnitude(l, &negative, lx, nx, ly, ny)) {
    case SUM_X: copied(r, x, 0), done = 1; break;
    case SUM_Y: copied(r, y, minus), done = 1; break;
    case SUM_BOTH: at_magnitude(r, l, negative), done = 1; break;
    case SUM_UNKNOWN: break;
    }
  }
  mpfr_clear(lx);
  mpfr_clear(ly);
  mpfr_clear(l);
  return done;
}

/* The magnitude of a·b (a/b when `quotient`) into l: 1 where both operands' are known. */
static int product_magnitude(mpfr_ptr l, const nf_mp *a, const nf_mp *b, int quotient) {
  mpfr_t lb;
  scratch(lb);
  int known = log2_magnitude(l, a) && log2_magnitude(lb, b);
  if (known) {
    if (quotient)
      mpfr_sub(l, l, lb, MPFR_RNDN);
    else
      mpfr_add(l, l, lb, MPFR_RNDN);
  }
  mpfr_clear(lb);
  return known;
}

/* r beyond MPFR's exponents from operands that were not: the magnitude is the operation's. */
static int newly_clamped(const nf_mp *r, const nf_mp *a, const nf_mp *b, const nf_mp *c) {
  return beyond(r) && !r->magnitude && !beyond(a) && !beyond(b) && !beyond(c);
}

/* How an operation treats an operand beyond MPFR's exponents (see `ranged`). */
enum scaling {
  NO_SCALING,
  /* Products, quotients, powers, roots, exponentials: a held zero or infinity operand decides. */
  SCALES,
  /* Sums: a held zero operand is the identity; a held infinity decides. */
  SUMS
};

/* A held zero or infinity operand that decides a non-number result by itself (0·t is 0). */
static int held_decides(const nf_mp *x, enum scaling how) {
  if (!x || beyond(x) || mpfr_nan_p(x->v) || mpfr_regular_p(x->v))
    return 0;
  return how == SCALES || mpfr_inf_p(x->v);
}

/* r = an operation on a, b, c (NULL where absent), run after `range_flags_cleared`: a zero or an
 * infinity MPFR clamped there carries TAG_BEYOND_EXPONENTS. From one such operand, a number is
 * exact to every precision (an addend that small or that large absorbs or dominates; a continuous
 * function's value at zero or at its far end), and a zero or an infinity stays beyond where the
 * operation scales (a result still beyond judges nothing: see __numfuzz_mpfr_result); anything
 * else, log(0) for a value the program had and MPFR could not hold, has no true value here, and
 * the run's shadows say so. A NaN is `born`'s to judge. (Each entry point first asks the
 * operands' magnitudes, `arith_by_magnitude` and its kin: only what they do not decide, a clamped
 * value whose magnitude is unknown or a function they have no rule for, comes here; and a value
 * newly clamped here gets its magnitude from the operation after, `arith_clamped` and its kin.) */
static nf_mp *ranged(nf_mp *r, const nf_mp *a, const nf_mp *b, const nf_mp *c, enum scaling how) {
  int from_beyond = beyond(a) + beyond(b) + beyond(c);
  int clamped = mpfr_overflow_p() || mpfr_underflow_p();
  if (mpfr_nan_p(r->v))
    return r;
  if (!from_beyond) {
    if (clamped && !mpfr_regular_p(r->v))
      r->tag = TAG_BEYOND_EXPONENTS;
    return r;
  }
  if (mpfr_regular_p(r->v)) {
    if (from_beyond > 1)
      nf_core_mark_unreliable(BEYOND_EXPONENTS_LOST, NULL);
    return r;
  }
  if (how == NO_SCALING)
    nf_core_mark_unreliable(BEYOND_EXPONENTS_LOST, NULL);
  else if (!held_decides(a, how) && !held_decides(b, how) && !held_decides(c, how))
    r->tag = TAG_BEYOND_EXPONENTS;
  return r;
}

/* r's tag from its operands, as x87 payloads travel: a NaN operand's tag passes on (the largest
 * of them); a NaN that operands without NaNs but with an infinity made is born from it. A NaN
 * made from a clamped operand (t/t of a value MPFR could not hold) has no true value here. */
static nf_mp *born(nf_mp *r, nf_mp *a, nf_mp *b, nf_mp *c) {
  if (!mpfr_nan_p(r->v))
    return r;
  /* A NaN operand makes the NaN whatever the others are (a clamped factor of a NaN is not what
   * made it: 54 of gsl-cdf's 89 runs marked here were that); only a NaN made by a clamped stand-in
   * (0·∞, ∞ − ∞ of magnitudes that do not decide) has no true value here. */
  int from_nan = (a && mpfr_nan_p(a->v)) || (b && mpfr_nan_p(b->v)) || (c && mpfr_nan_p(c->v));
  if (!from_nan && (beyond(a) || beyond(b) || beyond(c)))
    nf_core_mark_unreliable(BEYOND_EXPONENTS_LOST, NULL);
  nf_mp *ops[3] = {a, b, c};
  int any_nan = 0, any_inf = 0, tag = TAG_NONE;
  for (int i = 0; i < 3; i++) {
    if (!ops[i])
      continue;
    if (mpfr_nan_p(ops[i]->v)) {
      any_nan = 1;
      tag = ops[i]->tag > tag ? ops[i]->tag : tag;
    }
    any_inf |= mpfr_inf_p(ops[i]->v) != 0;
  }
  r->tag = any_nan ? tag : any_inf ? TAG_FROM_INFINITY : TAG_NONE;
  return r;
}

/* A zero or an infinity the program held (not clamped, not NaN). */
static int held_extreme(const nf_mp *x) { return !beyond(x) && !mpfr_nan_p(x->v) && !mpfr_regular_p(x->v); }

/* A sum, product or quotient with a clamped operand, from magnitudes: 1 when they decide it. A
 * held zero or infinity decides a product or a quotient with a clamped value, which is a finite
 * nonzero (0 / e^(-1e300) is 0, where MPFR's 0/0 is NaN). */
static int arith_by_magnitude(unsigned op, nf_mp *r, nf_mp *a, nf_mp *b) {
  if (op == NUMFUZZ_OP_FADD || op == NUMFUZZ_OP_FSUB)
    return sum_by_magnitude(r, a, b, op == NUMFUZZ_OP_FSUB);
  if (op != NUMFUZZ_OP_FMUL && op != NUMFUZZ_OP_FDIV)
    return 0;
  if (held_extreme(a) || held_extreme(b)) {
    int negative = (mpfr_signbit(a->v) != 0) != (mpfr_signbit(b->v) != 0);
    /* Infinite: a held infinity in a product or a numerator, a held zero as a divisor. */
    int infinite = held_extreme(a) ? mpfr_inf_p(a->v) != 0
                   : op == NUMFUZZ_OP_FMUL ? mpfr_inf_p(b->v) != 0
                                           : mpfr_zero_p(b->v) != 0;
    if (infinite)
      mpfr_set_inf(r->v, negative ? -1 : 1);
    else
      mpfr_set_zero(r->v, negative ? -1 : 1);
    r->tag = TAG_NONE;
    r->magnitude = NULL;
    return 1;
  }
  mpfr_t l;
  scratch(l);
  int known = product_magnitude(l, a, b, op == NUMFUZZ_OP_FDIV);
  if (known)
    at_magnitude(r, l, (mpfr_signbit(a->v) != 0) != (mpfr_signbit(b->v) != 0));
  mpfr_clear(l);
  return known;
}

/* The magnitude of a sum, product or quotient of numbers that MPFR clamped. */
static void arith_clamped(unsigned op, nf_mp *r, nf_mp *a, nf_mp *b) {
  mpfr_t l, la, lb;
  scratch(l);
  scratch(la);
  scratch(lb);
  int negative;
  if (op == NUMFUZZ_OP_FMUL || op == NUMFUZZ_OP_FDIV) {
    if (product_magnitude(l, a, b, op == NUMFUZZ_OP_FDIV))
      keep_magnitude(r, l);
  } else if ((op == NUMFUZZ_OP_FADD || op == NUMFUZZ_OP_FSUB) && log2_magnitude(la, a) && log2_magnitude(lb, b)) {
    int nb = (mpfr_signbit(b->v) != 0) != (op == NUMFUZZ_OP_FSUB);
    if (sum_magnitude(l, &negative, la, mpfr_signbit(a->v) != 0, lb, nb) == SUM_BOTH)
      keep_magnitude(r, l);
  }
  mpfr_clear(l);
  mpfr_clear(la);
  mpfr_clear(lb);
}

nf_mp *__numfuzz_mpfr_arith(unsigned op, nf_mp *a, nf_mp *b) {
  nf_mp *r = fresh();
  if (r != &exhausted && (beyond(a) || beyond(b)) && arith_by_magnitude(op, r, a, b))
    return r;
  range_flags_cleared();
  switch (op) {
  case NUMFUZZ_OP_FADD: mpfr_add(r->v, a->v, b->v, MPFR_RNDN); break;
  case NUMFUZZ_OP_FSUB: mpfr_sub(r->v, a->v, b->v, MPFR_RNDN); break;
  case NUMFUZZ_OP_FMUL: mpfr_mul(r->v, a->v, b->v, MPFR_RNDN); break;
  case NUMFUZZ_OP_FDIV: mpfr_div(r->v, a->v, b->v, MPFR_RNDN); break;
  case NUMFUZZ_OP_FREM: mpfr_fmod(r->v, a->v, b->v, MPFR_RNDN); break;
  default: mpfr_set_nan(r->v);
  }
  enum scaling how = op == NUMFUZZ_OP_FADD || op == NUMFUZZ_OP_FSUB ? SUMS : op == NUMFUZZ_OP_FREM ? NO_SCALING : SCALES;
  r = born(ranged(r, a, b, NULL, how), a, b, NULL);
  if (newly_clamped(r, a, b, NULL))
    arith_clamped(op, r, a, b);
  return r;
}

nf_mp *__numfuzz_mpfr_neg(nf_mp *a) {
  nf_mp *r = fresh();
  mpfr_neg(r->v, a->v, MPFR_RNDN);
  r->tag = a->tag;
  r->origin = a->origin;
  r->magnitude = a->magnitude;
  return r;
}

/* One-argument functions by their op code (the checked libm ops and the intrinsics with an
 * MPFR op code of their own); 0 when `op` is none of them. */
static int unary(unsigned op, mpfr_ptr r, mpfr_srcptr a) {
  int sign;
  switch (op) {
  case NUMFUZZ_OP_SQRT: return mpfr_sqrt(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_CBRT: return mpfr_cbrt(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_EXP: return mpfr_exp(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_EXP2: return mpfr_exp2(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_MPFR_OP_EXP10: return mpfr_exp10(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_EXPM1: return mpfr_expm1(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_LOG: return mpfr_log(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_LOG2: return mpfr_log2(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_LOG10: return mpfr_log10(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_LOG1P: return mpfr_log1p(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_SIN: return mpfr_sin(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_COS: return mpfr_cos(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_TAN: return mpfr_tan(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_ASIN: return mpfr_asin(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_ACOS: return mpfr_acos(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_ATAN: return mpfr_atan(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_SINH: return mpfr_sinh(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_COSH: return mpfr_cosh(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_TANH: return mpfr_tanh(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_ASINH: return mpfr_asinh(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_ACOSH: return mpfr_acosh(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_ATANH: return mpfr_atanh(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_LGAMMA: return mpfr_lgamma(r, &sign, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_TGAMMA: return mpfr_gamma(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_ERF: return mpfr_erf(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_OP_ERFC: return mpfr_erfc(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_MPFR_OP_FABS: return mpfr_abs(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_MPFR_OP_FLOOR: return mpfr_floor(r, a), 1;
  case NUMFUZZ_MPFR_OP_CEIL: return mpfr_ceil(r, a), 1;
  case NUMFUZZ_MPFR_OP_TRUNC: return mpfr_trunc(r, a), 1;
  case NUMFUZZ_MPFR_OP_RINT: return mpfr_rint(r, a, MPFR_RNDN), 1;
  case NUMFUZZ_MPFR_OP_ROUND: return mpfr_round(r, a), 1;
  case NUMFUZZ_MPFR_OP_ROUNDEVEN: return mpfr_roundeven(r, a), 1;
  default: return 0;
  }
}

/* Whether a one-argument function keeps a value beyond MPFR's exponents beyond (a power of it,
 * or an exponential: sqrt(2^-(2^62)) and exp(2^(2^62)) are no number of any format either). */
static enum scaling scales_unary(unsigned op) {
  switch (op) {
  case NUMFUZZ_OP_SQRT:
  case NUMFUZZ_OP_CBRT:
  case NUMFUZZ_OP_EXP:
  case NUMFUZZ_OP_EXP2:
  case NUMFUZZ_MPFR_OP_EXP10:
  case NUMFUZZ_OP_EXPM1:
  case NUMFUZZ_OP_SINH:
  case NUMFUZZ_OP_COSH:
  case NUMFUZZ_MPFR_OP_FABS: return SCALES;
  default: return NO_SCALING;
  }
}

static int binary(unsigned op, mpfr_ptr r, mpfr_srcptr a, mpfr_srcptr b) {
  switch (op) {
  case NUMFUZZ_OP_POW: return mpfr_pow(r, a, b, MPFR_RNDN), 1;
  case NUMFUZZ_OP_ATAN2: return mpfr_atan2(r, a, b, MPFR_RNDN), 1;
  case NUMFUZZ_OP_HYPOT: return mpfr_hypot(r, a, b, MPFR_RNDN), 1;
  case NUMFUZZ_OP_FMOD: return mpfr_fmod(r, a, b, MPFR_RNDN), 1;
  case NUMFUZZ_OP_REMAINDER: return mpfr_remainder(r, a, b, MPFR_RNDN), 1;
  case NUMFUZZ_MPFR_OP_COPYSIGN: return mpfr_copysign(r, a, b, MPFR_RNDN), 1;
  case NUMFUZZ_MPFR_OP_MINNUM: return mpfr_min(r, a, b, MPFR_RNDN), 1;
  case NUMFUZZ_MPFR_OP_MAXNUM: return mpfr_max(r, a, b, MPFR_RNDN), 1;
  default: return 0;
  }
}

/* A one-argument function of a clamped value, from its magnitude l: 1 when that decides it. Its
 * log is a number again (log(v) = l·ln 2), as lgamma and log1p of a huge one are; roots and
 * powers scale l; a function that is its argument times a constant near 0 (sin, expm1, erf...)
 * keeps a clamped zero clamped, 1/t of Γ(t) too. */
static int unary_by_magnitude(unsigned op, nf_mp *r, const nf_mp *a) {
  if (!a->magnitude)
    return 0;
  int negative = mpfr_signbit(a->v) != 0, zero = mpfr_zero_p(a->v) != 0;
  mpfr_t l, t;
  scratch(l);
  scratch(t);
  mpfr_set(l, a->magnitude->v, MPFR_RNDN);
  int done = 1;
  switch (op) {
  case NUMFUZZ_OP_SQRT:
    if (negative)
      undefined_beyond(r);
    else
      mpfr_div_2ui(l, l, 1, MPFR_RNDN), at_magnitude(r, l, 0);
    break;
  case NUMFUZZ_OP_CBRT: mpfr_div_ui(l, l, 3, MPFR_RNDN), at_magnitude(r, l, negative); break;
  case NUMFUZZ_MPFR_OP_FABS: copied(r, a, negative); break;
  case NUMFUZZ_OP_LOG1P: /* log1p(t) = t·(1 - t/2 ...); log(1 + v) is log(v) to every precision */
  case NUMFUZZ_OP_LOG:
  case NUMFUZZ_OP_LOG2:
  case NUMFUZZ_OP_LOG10:
    if (op == NUMFUZZ_OP_LOG1P && zero) {
      copied(r, a, 0);
      break;
    }
    if (negative) {
      undefined_beyond(r);
      break;
    }
    if (op == NUMFUZZ_OP_LOG || op == NUMFUZZ_OP_LOG1P) {
      mpfr_const_log2(t, MPFR_RNDN);
      mpfr_mul(r->v, l, t, MPFR_RNDN);
    } else if (op == NUMFUZZ_OP_LOG10) {
      mpfr_set_ui(t, 2, MPFR_RNDN);
      mpfr_log10(t, t, MPFR_RNDN);
      mpfr_mul(r->v, l, t, MPFR_RNDN);
    } else {
      mpfr_set(r->v, l, MPFR_RNDN);
    }
    break;
  case NUMFUZZ_OP_LGAMMA:
    /* lgamma(t) = -log|t| - γt + ...: a number from a clamped zero, where γt is below any precision. */
    if (!zero) {
      done = 0;
      break;
    }
    mpfr_const_log2(t, MPFR_RNDN);
    mpfr_mul(r->v, l, t, MPFR_RNDN);
    mpfr_neg(r->v, r->v, MPFR_RNDN);
    break;
  case NUMFUZZ_OP_TGAMMA: /* Γ(t) = 1/t - γ + ... */
    if (!zero) {
      done = 0;
      break;
    }
    mpfr_neg(l, l, MPFR_RNDN);
    at_magnitude(r, l, negative);
    break;
  case NUMFUZZ_OP_ERF:
    if (!zero) {
      done = 0;
      break;
    }
    mpfr_const_pi(t, MPFR_RNDN);
    mpfr_rec_sqrt(t, t, MPFR_RNDN);
    mpfr_mul_2ui(t, t, 1, MPFR_RNDN);
    times_constant(r, a, t);
    break;
  case NUMFUZZ_OP_SIN:
  case NUMFUZZ_OP_TAN:
  case NUMFUZZ_OP_ASIN:
  case NUMFUZZ_OP_ATAN:
  case NUMFUZZ_OP_SINH:
  case NUMFUZZ_OP_TANH:
  case NUMFUZZ_OP_ASINH:
  case NUMFUZZ_OP_ATANH:
  case NUMFUZZ_OP_EXPM1:
    if (zero)
      copied(r, a, 0);
    else
      done = 0;
    break;
  default: done = 0;
  }
  mpfr_clear(l);
  mpfr_clear(t);
  return done;
}

/* The magnitude of an exponential (or Γ) of a number that MPFR clamped: exp(z) is 2^(z·log2 e),
 * cosh(z) and |sinh(z)| 2^(|z|·log2 e - 1), Γ(z) 2^(lgamma(z)/ln 2). */
static void unary_clamped(unsigned op, nf_mp *r, const nf_mp *a) {
  mpfr_t l, t;
  scratch(l);
  scratch(t);
  int known = 1, sign;
  mpfr_const_log2(t, MPFR_RNDN);
  switch (op) {
  case NUMFUZZ_OP_EXP:
  case NUMFUZZ_OP_EXPM1: mpfr_div(l, a->v, t, MPFR_RNDN); break;
  case NUMFUZZ_OP_EXP2: mpfr_set(l, a->v, MPFR_RNDN); break;
  case NUMFUZZ_MPFR_OP_EXP10:
    mpfr_set_ui(t, 10, MPFR_RNDN);
    mpfr_log2(t, t, MPFR_RNDN);
    mpfr_mul(l, a->v, t, MPFR_RNDN);
    break;
  case NUMFUZZ_OP_SINH:
  case NUMFUZZ_OP_COSH:
    mpfr_abs(l, a->v, MPFR_RNDN);
    mpfr_div(l, l, t, MPFR_RNDN);
    mpfr_sub_ui(l, l, 1, MPFR_RNDN);
    break;
  case NUMFUZZ_OP_TGAMMA:
    mpfr_lgamma(l, &sign, a->v, MPFR_RNDN);
    mpfr_div(l, l, t, MPFR_RNDN);
    break;
  default: known = 0;
  }
  if (known && mpfr_number_p(l))
    keep_magnitude(r, l);
  mpfr_clear(l);
  mpfr_clear(t);
}

nf_mp *__numfuzz_mpfr_call1(unsigned op, nf_mp *a) {
  nf_mp *r = fresh();
  if (r != &exhausted && beyond(a) && unary_by_magnitude(op, r, a))
    return r;
  range_flags_cleared();
  if (!unary(op, r->v, a->v))
    mpfr_set_nan(r->v);
  /* fabs and the roundings pass a NaN's tag on; they make no NaN of their own. */
  r = born(ranged(r, a, NULL, NULL, scales_unary(op)), a, NULL, NULL);
  if (newly_clamped(r, a, NULL, NULL))
    unary_clamped(op, r, a);
  return r;
}

/* x^y of a number x (a regular y): its magnitude y·log2|x| into l and its sign (-1: none, a
 * negative x to a power that is no integer); 0 when x's magnitude is unknown. */
static int power_magnitude(mpfr_ptr l, int *negative, const nf_mp *x, mpfr_srcptr y) {
  if (!log2_magnitude(l, x))
    return 0;
  mpfr_mul(l, l, y, MPFR_RNDN);
  *negative = 0;
  if (mpfr_signbit(x->v)) {
    mpfr_t half;
    scratch(half);
    mpfr_div_2ui(half, y, 1, MPFR_RNDN);
    *negative = !mpfr_integer_p(y) ? -1 : !mpfr_integer_p(half);
    mpfr_clear(half);
  }
  return 1;
}

/* hypot(x, y) from magnitudes into l: 2^max·(1 + 2^-2d)^(1/2) (SUM_X, SUM_Y: |x|, |y| decides,
 * and l is its magnitude); SUM_UNKNOWN where one of them is unknown. */
static enum sum_by hypot_magnitude(mpfr_ptr l, const nf_mp *x, const nf_mp *y) {
  mpfr_t lx, ly;
  scratch(lx);
  scratch(ly);
  int negative;
  enum sum_by by = SUM_UNKNOWN;
  if (log2_magnitude(lx, x) && log2_magnitude(ly, y)) {
    mpfr_mul_2ui(lx, lx, 1, MPFR_RNDN);
    mpfr_mul_2ui(ly, ly, 1, MPFR_RNDN);
    by = sum_magnitude(l, &negative, lx, 0, ly, 0);
    mpfr_div_2ui(l, by == SUM_X ? lx : by == SUM_Y ? ly : l, 1, MPFR_RNDN);
  }
  mpfr_clear(lx);
  mpfr_clear(ly);
  return by;
}

/* A two-argument function with a clamped operand, from magnitudes: 1 when they decide it. */
static int binary_by_magnitude(unsigned op, nf_mp *r, const nf_mp *a, const nf_mp *b) {
  if (op == NUMFUZZ_MPFR_OP_COPYSIGN) {
    if (!beyond(a))
      return 0;
    copied(r, a, (mpfr_signbit(a->v) != 0) != (mpfr_signbit(b->v) != 0));
    return 1;
  }
  mpfr_t l;
  scratch(l);
  int negative = 0, done = 0;
  if (op == NUMFUZZ_OP_POW && !beyond(b) && mpfr_regular_p(b->v) && power_magnitude(l, &negative, a, b->v)) {
    if (negative < 0)
      undefined_beyond(r);
    else
      at_magnitude(r, l, negative);
    done = 1;
  } else if (op == NUMFUZZ_OP_HYPOT) {
    const nf_mp *held_zero = !beyond(a) && mpfr_zero_p(a->v) ? a : !beyond(b) && mpfr_zero_p(b->v) ? b : NULL;
    enum sum_by by = held_zero ? (held_zero == a ? SUM_Y : SUM_X) : hypot_magnitude(l, a, b);
    const nf_mp *decides = by == SUM_X ? a : by == SUM_Y ? b : NULL;
    if (decides)
      copied(r, decides, mpfr_signbit(decides->v) != 0);
    else if (by == SUM_BOTH)
      at_magnitude(r, l, 0);
    done = by != SUM_UNKNOWN;
  }
  mpfr_clear(l);
  return done;
}

/* The magnitude of a power or a hypot of numbers that MPFR clamped. */
static void binary_clamped(unsigned op, nf_mp *r, const nf_mp *a, const nf_mp *b) {
  mpfr_t l;
  scratch(l);
  int negative;
  if (op == NUMFUZZ_OP_POW ? mpfr_regular_p(b->v) && power_magnitude(l, &negative, a, b->v)
                           : op == NUMFUZZ_OP_HYPOT && hypot_magnitude(l, a, b) != SUM_UNKNOWN)
    keep_magnitude(r, l);
  mpfr_clear(l);
}

nf_mp *__numfuzz_mpfr_call2(unsigned op, nf_mp *a, nf_mp *b) {
  nf_mp *r = fresh();
  if (r != &exhausted && (beyond(a) || beyond(b)) && binary_by_magnitude(op, r, a, b))
    return r;
  range_flags_cleared();
  if (!binary(op, r->v, a->v, b->v))
    mpfr_set_nan(r->v);
  /* copysign's second operand gives a sign only. */
  enum scaling how = op == NUMFUZZ_OP_HYPOT ? SUMS : op == NUMFUZZ_MPFR_OP_COPYSIGN ? SCALES : NO_SCALING;
  r = born(ranged(r, a, op == NUMFUZZ_MPFR_OP_COPYSIGN ? NULL : b, NULL, how), a, b, NULL);
  if (newly_clamped(r, a, b, NULL))
    binary_clamped(op, r, a, b);
  return r;
}

/* a·b + c from magnitudes into l and *negative (the sum as `sum_magnitude` decides it: SUM_X, the
 * product decides, and l and *negative are its own); c held zero: the product alone. */
static enum sum_by fma_magnitude(mpfr_ptr l, int *negative, const nf_mp *a, const nf_mp *b, const nf_mp *c) {
  if (!product_magnitude(l, a, b, 0))
    return SUM_UNKNOWN;
  int np = (mpfr_signbit(a->v) != 0) != (mpfr_signbit(b->v) != 0);
  if (!beyond(c) && mpfr_zero_p(c->v)) {
    *negative = np;
    return SUM_X;
  }
  mpfr_t lp, lc;
  scratch(lp);
  scratch(lc);
  mpfr_set(lp, l, MPFR_RNDN);
  enum sum_by by = SUM_UNKNOWN;
  if (log2_magnitude(lc, c)) {
    by = sum_magnitude(l, negative, lp, np, lc, mpfr_signbit(c->v) != 0);
    if (by == SUM_X) {
      mpfr_set(l, lp, MPFR_RNDN);
      *negative = np;
    }
  }
  mpfr_clear(lp);
  mpfr_clear(lc);
  return by;
}

nf_mp *__numfuzz_mpfr_call3(unsigned op, nf_mp *a, nf_mp *b, nf_mp *c) {
  nf_mp *r = fresh();
  int fma = op == NUMFUZZ_OP_FMA || op == NUMFUZZ_OP_FMULADD;
  if (r != &exhausted && fma && (beyond(a) || beyond(b) || beyond(c))) {
    mpfr_t l;
    scratch(l);
    int negative = 0;
    enum sum_by by = fma_magnitude(l, &negative, a, b, c);
    /* A product of numbers that absorbs a clamped addend is MPFR's to round (below). */
    if (by == SUM_X && !beyond(a) && !beyond(b))
      by = SUM_UNKNOWN;
    if (by == SUM_BOTH || by == SUM_X)
      at_magnitude(r, l, negative);
    else if (by == SUM_Y)
      copied(r, c, 0);
    mpfr_clear(l);
    if (by != SUM_UNKNOWN)
      return r;
  }
  range_flags_cleared();
  if (fma)
    mpfr_fma(r->v, a->v, b->v, c->v, MPFR_RNDN);
  else
    mpfr_set_nan(r->v);
  r = born(ranged(r, a, b, c, SCALES), a, b, c);
  if (fma && newly_clamped(r, a, b, c)) {
    mpfr_t l;
    scratch(l);
    int negative;
    enum sum_by by = fma_magnitude(l, &negative, a, b, c);
    if (by == SUM_BOTH || by == SUM_X)
      keep_magnitude(r, l);
    mpfr_clear(l);
  }
  return r;
}

/* ldexp(x, n): log2|x| + n; powi(x, n): n·log2|x|, negative for a negative x to an odd n. */
static int int_magnitude(unsigned op, mpfr_ptr l, int *negative, const nf_mp *x, int n) {
  if (!log2_magnitude(l, x) || (op != NUMFUZZ_OP_LDEXP && op != NUMFUZZ_OP_SCALBN && op != NUMFUZZ_OP_POWI))
    return 0;
  int odd = n % 2 != 0;
  *negative = mpfr_signbit(x->v) && (op != NUMFUZZ_OP_POWI || odd);
  if (op == NUMFUZZ_OP_POWI)
    mpfr_mul_si(l, l, n, MPFR_RNDN);
  else
    mpfr_add_si(l, l, n, MPFR_RNDN);
  return 1;
}

nf_mp *__numfuzz_mpfr_call_int(unsigned op, nf_mp *a, int n) {
  nf_mp *r = fresh();
  mpfr_t l;
  int negative, known;
  if (r != &exhausted && beyond(a) && n != 0) {
    scratch(l);
    if ((known = int_magnitude(op, l, &negative, a, n)))
      at_magnitude(r, l, negative);
    mpfr_clear(l);
    if (known)
      return r;
  }
  range_flags_cleared();
  if (op == NUMFUZZ_OP_LDEXP || op == NUMFUZZ_OP_SCALBN)
    mpfr_mul_2si(r->v, a->v, n, MPFR_RNDN);
  else if (op == NUMFUZZ_OP_POWI)
    mpfr_pow_si(r->v, a->v, n, MPFR_RNDN);
  else
    mpfr_set_nan(r->v);
  r = born(ranged(r, a, NULL, NULL, n != 0 ? SCALES : NO_SCALING), a, NULL, NULL);
  if (newly_clamped(r, a, NULL, NULL)) {
    scratch(l);
    if (int_magnitude(op, l, &negative, a, n))
      keep_magnitude(r, l);
    mpfr_clear(l);
  }
  return r;
}

/* LLVM's fcmp predicates are masks: bit 0 equal, 1 greater, 2 less, 3 unordered. */
/* A value beyond MPFR's exponents compares as what it stands for: a clamped zero as a nonzero of
 * its sign, a clamped infinity as a finite number, against a held value equal to it; two clamped
 * values that kept their magnitudes, by sign and magnitude. */
int __numfuzz_mpfr_compare(unsigned predicate, nf_mp *a, nf_mp *b) {
  if (mpfr_nan_p(a->v) || mpfr_nan_p(b->v))
    return (predicate >> 3) & 1;
  int c = mpfr_cmp(a->v, b->v);
  if (beyond(a) && beyond(b) && a->magnitude && b->magnitude) {
    int na = mpfr_signbit(a->v) != 0, nb = mpfr_signbit(b->v) != 0;
    int larger = mpfr_cmp(a->magnitude->v, b->magnitude->v);
    larger = larger > 0 ? 1 : larger < 0 ? -1 : 0;
    c = na != nb ? (na ? -1 : 1) : na ? -larger : larger;
  } else if (c == 0 && beyond(a) != beyond(b)) {
    nf_mp *clamped = beyond(a) ? a : b;
    int sign = mpfr_signbit(clamped->v) ? -1 : 1;
    int order = mpfr_zero_p(clamped->v) ? sign : -sign; /* the clamped one's order to the other */
    c = beyond(a) ? order : -order;
  }
  return (predicate >> (c == 0 ? 0 : c > 0 ? 1 : 2)) & 1;
}

/* llvm.is.fpclass's mask bits: 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -subnormal, 5 -zero,
 * 6 +zero, 7 +subnormal, 8 +normal, 9 +inf. A shadow is never subnormal. */
int __numfuzz_mpfr_is_fpclass(nf_mp *a, unsigned mask) {
  int bit;
  if (mpfr_nan_p(a->v))
    bit = 1;
  else if (mpfr_inf_p(a->v))
    bit = mpfr_signbit(a->v) ? 2 : 9;
  else if (mpfr_zero_p(a->v))
    bit = mpfr_signbit(a->v) ? 5 : 6;
  else
    bit = mpfr_signbit(a->v) ? 3 : 8;
  return (mask >> bit) & 1;
}

/* The value lost what its shadow holds: Inf, NaN, zero or subnormal where the shadow is not, or
 * the two differ beyond rounding noise (2^-30 relative). */
static int lossy(double v, nf_mp *s) {
  if (beyond(s))
    return 1;
  if (isnan(v) || mpfr_nan_p(s->v))
    return isnan(v) != (mpfr_nan_p(s->v) != 0);
  if (isinf(v) || mpfr_inf_p(s->v))
    return mpfr_cmp_d(s->v, v) != 0;
  mpfr_t d;
  mpfr_init2(d, 64);
  mpfr_sub_d(d, s->v, v, MPFR_RNDN);
  mpfr_abs(d, d, MPFR_RNDN);
  mpfr_mul_2si(d, d, 30, MPFR_RNDN);
  int far = mpfr_cmpabs(d, s->v) > 0 && mpfr_cmp_d(d, fabs(v)) > 0;
  mpfr_clear(d);
  return far;
}

static int lossy_cell(double v, union nf_shadow s) { return lossy(v, s.handle); }

nf_mp *__numfuzz_mpfr_arg(const void *fn, unsigned index, unsigned count, double v) {
  union nf_shadow s;
  return nf_core_arg(fn, index, count, v, &s) ? s.handle : __numfuzz_mpfr_from_f64(v);
}

void __numfuzz_mpfr_call(const void *callee) { nf_core_call(callee); }

void __numfuzz_mpfr_set_arg(unsigned index, double v, nf_mp *s) { nf_core_set_arg(index, v, handle(s)); }

/* A constant infinity the function returns on a branch of its own travels as the NaN from a
 * returned constant (see the x87 pass's visitReturn). */
void __numfuzz_mpfr_set_ret(const void *fn, double v, nf_mp *s, int constant) {
  if (constant && mpfr_inf_p(s->v))
    s = tagged_nan(TAG_FROM_RETURNED_CONSTANT);
  nf_core_set_ret(fn, v, handle(s));
}

nf_mp *__numfuzz_mpfr_get_ret(const void *callee, double v, nf_mp *otherwise) {
  union nf_shadow s;
  return nf_core_get_ret(callee, v, &s) ? s.handle : otherwise;
}

nf_mp *__numfuzz_mpfr_returned(nf_mp *s, double v) {
  return s->tag == TAG_FROM_RETURNED_CONSTANT ? __numfuzz_mpfr_from_f64(v) : s;
}

nf_mp *__numfuzz_mpfr_bound(nf_mp *s, double v, unsigned width) {
  if (s->tag != TAG_FROM_RETURNED_CONSTANT)
    return s;
  nf_core_set_bounded();
  nf_mp *r = fresh();
  mpfr_set_si_2exp(r->v, v < 0 ? -1 : 1, width == 4 ? 128 : 1024, MPFR_RNDN);
  return r;
}

nf_mp *__numfuzz_mpfr_load(const void *p, double v, unsigned width) {
  union nf_shadow s;
  return nf_core_load(p, v, width, &s) ? s.handle : __numfuzz_mpfr_from_f64(v);
}

void __numfuzz_mpfr_store(void *p, double v, nf_mp *s, unsigned width) {
  int constant = (width & NUMFUZZ_SHADOW_STORED_CONSTANT) != 0;
  width &= ~NUMFUZZ_SHADOW_STORED_CONSTANT;
  /* A stored constant infinity is an overflow branch's answer (numfuzz-abi's NAN_FROM_CONSTANT). */
  nf_mp *kept = constant && isinf(v) ? tagged_nan(TAG_FROM_CONSTANT) : s;
  nf_core_store(p, v, handle(kept), width, constant && v == 0);
}

nf_mp *__numfuzz_mpfr_pole(nf_mp *s, nf_mp *operand, const void *p) {
  if (mpfr_zero_p(operand->v) && nf_core_constant_zero_at(p))
    return tagged_nan(TAG_FROM_CONSTANT);
  return s;
}

void __numfuzz_mpfr_copy(void *dst, const void *src, uint64_t n) { nf_core_copy(dst, src, n); }

void __numfuzz_mpfr_int_load(const void *p, unsigned width, const char *where) {
  nf_core_int_load(p, width, where, lossy_cell);
}

void __numfuzz_mpfr_bits(double v, nf_mp *s, const char *where) {
  if (lossy(v, s))
    nf_core_mark_unreliable(NF_LOST_BITS, where);
}

/* Whether the run steers now: asked for, and the shadows still computed (once the arena is full,
 * every shadow is the same NaN and the program goes its own way again, so a loop that the exact
 * values never leave ends where the program's own does). */
static int steering(void) { return steered && used < NUMFUZZ_MPFR_MAX_VALUES; }

/* A steered run takes the shadows' outcome: no branch goes the other way in it. */
int __numfuzz_mpfr_cmp(int real, int shadow, double a, nf_mp *sa, double b, nf_mp *sb, const char *where) {
  if (steering())
    return shadow;
  if (real != shadow && (lossy(a, sa) || lossy(b, sb)))
    nf_core_mark_lost_branch(where);
  return real;
}

/* Whether the integer part of `t` (an integer already, or NaN/Inf) fits `bits` signed or not. */
static int fits_int(mpfr_t t, int is_signed, unsigned bits) {
  if (!mpfr_number_p(t))
    return 0;
  if (bits >= 64)
    return is_signed ? mpfr_fits_intmax_p(t, MPFR_RNDZ) : mpfr_fits_uintmax_p(t, MPFR_RNDZ);
  long lo = is_signed ? -(1L << (bits - 1)) : 0;
  long hi = is_signed ? (1L << (bits - 1)) - 1 : (long)((1UL << bits) - 1);
  return mpfr_cmp_si(t, lo) >= 0 && mpfr_cmp_si(t, hi) <= 0;
}

/* A steered run converts the shadow, truncated toward zero, where the integer fits in `bits`
 * (signed or not). Where it does not (a NaN, an infinity, a value beyond MPFR's exponents or out
 * of range) the program keeps its own integer: no worse than the program itself where its double
 * was out of range as well, and an integer off the exact path, which makes the run unreliable,
 * where the double fitted. */
int64_t __numfuzz_mpfr_to_int(int64_t real, double v, nf_mp *s, int is_signed, unsigned bits) {
  if (!steering() || !s)
    return real;
  mpfr_t t;
  mpfr_init2(t, mpfr_get_prec(s->v) > 64 ? mpfr_get_prec(s->v) : 64);
  mpfr_trunc(t, s->v);
  int64_t out = real;
  if (!beyond(s) && fits_int(t, is_signed, bits)) {
    out = is_signed ? (int64_t)mpfr_get_sj(t, MPFR_RNDZ) : (int64_t)mpfr_get_uj(t, MPFR_RNDZ);
  } else {
    mpfr_set_d(t, trunc(v), MPFR_RNDN);
    if (fits_int(t, is_signed, bits))
      nf_core_mark_unreliable(STEERED_CONVERSION_LOST, NULL);
  }
  mpfr_clear(t);
  return out;
}

static const char *provisional(nf_mp *s) {
  if (!mpfr_nan_p(s->v))
    return NULL;
  if (s->tag == TAG_FROM_INFINITY)
    return NUMFUZZ_SHADOW_NAN_FROM_INFINITY_REASON;
  if (s->tag == TAG_FROM_CONSTANT)
    return NUMFUZZ_SHADOW_NAN_FROM_CONSTANT_REASON;
  return NULL;
}

/* |s| is larger than the format's largest finite value (NaN is not). */
static int beyond_format(nf_mp *s, unsigned width) {
  if (mpfr_nan_p(s->v))
    return 0;
  mpfr_t largest;
  mpfr_init2(largest, 53);
  mpfr_set_d(largest, width == 4 ? FLT_MAX : DBL_MAX, MPFR_RNDN);
  int beyond = mpfr_cmpabs(s->v, largest) > 0;
  mpfr_clear(largest);
  return beyond;
}

/* A clamped value in decimal, a number beyond every format, which triage's decimals read as such
 * (mpfr_free_str it). From its magnitude l: m·10^e with e = floor(l·log10 2) in full and m to the
 * digits l's precision leaves of its fraction (1 when none: at 128 bits, a magnitude of 1.4e300
 * knows e to 38 digits and nothing of m); without one, the bound it lies beyond (2^emax is
 * 1e+1388255822130839282). */
static char *beyond_text(const nf_mp *s) {
  const char *sign = mpfr_signbit(s->v) ? "-" : "";
  char *text;
  if (!s->magnitude) {
    /* |exponent| · log10(2) to the unit: 19 digits of log10(2), in 128-bit integers. */
    int zero = mpfr_zero_p(s->v);
    unsigned __int128 exponent = (unsigned __int128)(zero ? -mpfr_get_emin() : mpfr_get_emax());
    unsigned __int128 scaled = exponent * (unsigned __int128)3010299956639811952ULL;
    unsigned long long decimal = (unsigned long long)(scaled / 10000000000000000000ULL);
    mpfr_asprintf(&text, "%s1e%s%llu", sign, zero ? "-" : "+", decimal);
    return text;
  }
  mpfr_t d, e, m;
  scratch(d);
  scratch(e);
  scratch(m);
  mpfr_set_ui(m, 2, MPFR_RNDN);
  mpfr_log10(m, m, MPFR_RNDN);
  mpfr_mul(d, s->magnitude->v, m, MPFR_RNDN);
  mpfr_floor(e, d);
  mpfr_sub(m, d, e, MPFR_RNDN);
  /* d is known to about 2^(exponent - precision): its fraction to that many bits. */
  long digits = ((long)precision - (long)mpfr_get_exp(d)) * 3 / 10 - 1;
  digits = digits > 17 ? 17 : digits;
  char mantissa[32] = "1";
  if (digits > 0) {
    mpfr_exp10(m, m, MPFR_RNDN);
    mpfr_snprintf(mantissa, sizeof mantissa, "%.*Rf", (int)digits - 1, m);
    if (strncmp(mantissa, "10", 2) == 0) { /* 9.99... rounded up */
      snprintf(mantissa, sizeof mantissa, "1");
      mpfr_add_ui(e, e, 1, MPFR_RNDN);
    }
  }
  mpfr_asprintf(&text, "%s%se%s%.0Rf", sign, mantissa, mpfr_sgn(e) < 0 ? "" : "+", e);
  mpfr_clear(d);
  mpfr_clear(e);
  mpfr_clear(m);
  return text;
}

void __numfuzz_mpfr_result(const char *name, double v, nf_mp *s, unsigned width) {
  const char *why = nf_core_unreliable();
  /* After a lost branch the shadow is the exact value of the program's own path: a nonzero number
   * within the format says rounding on that path made the Inf, NaN or garbage; anything else may
   * be the path's doing and judges nothing. */
  if (!why && !(mpfr_regular_p(s->v) && !beyond_format(s, width)))
    why = nf_core_lost_branch();
  if (!why)
    why = provisional(s);
  /* A bound within the format (or a NaN made from one) says nothing of the true value. */
  if (!why && nf_core_bounded() && !beyond_format(s, width))
    why = NUMFUZZ_SHADOW_NAN_FROM_CONSTANT_REASON;
  /* Without a magnitude every precision clamps alike, so its two runs cannot show whether
   * rounding noise (a cancellation of huge terms before an exp) put it there. With one, the
   * magnitude is printed (`beyond_text`) and noise shows as it does for a number: exp(a - b) of
   * a ≈ b ≈ 1e300 is 2^(±1e261) at 128 bits and 2^(±1e146) at 512, where a true 2^(-3.6e30)
   * is that at both (gsl_ran_gaussian_pdf(2.2e-308, 1e-323), which GSL returns as NaN). */
  if (!why && beyond(s) && !s->magnitude)
    why = BEYOND_EXPONENTS_RESULT;
  /* A steered run judges where the exact values' path gave a number: its exact zeros are the
   * program's constants (an underflow branch's 0.0), not values that underflowed (as one beyond
   * MPFR's exponents with its magnitude is). */
  if (!why && steered && !mpfr_regular_p(s->v) && !(beyond(s) && s->magnitude))
    why = NUMFUZZ_SHADOW_STEERED_NOT_A_NUMBER_REASON;
  /* 21 significant digits, the x87 build's, in a form triage's decimals parse (nan, inf). */
  char text[96];
  char *long_text = NULL;
  if (beyond(s))
    long_text = beyond_text(s);
  else if (mpfr_nan_p(s->v))
    snprintf(text, sizeof text, "nan");
  else if (mpfr_inf_p(s->v))
    snprintf(text, sizeof text, mpfr_signbit(s->v) ? "-inf" : "inf");
  else
    mpfr_snprintf(text, sizeof text, "%.20Re", s->v);
  numfuzz_rt_result_shadowed_text(name, v, width, long_text ? long_text : text, why);
  if (long_text)
    mpfr_free_str(long_text);
}

/* -exponent (the bits a relative difference of 2^exponent leaves correct) within 0..bits. */
static unsigned clamped_bits(long exponent, unsigned bits) {
  return exponent > 0 ? 0 : -exponent > (long)bits ? bits : (unsigned)-exponent;
}

/* How many leading bits of `v` agree with its shadow, out of the format's `bits`: the binary
 * exponent of their relative difference, negated (all of them when equal; none when one of
 * them is zero, infinite or NaN and the other is not the same). */
static unsigned correct_bits(double v, nf_mp *s, unsigned bits) {
  if (isnan(v) || mpfr_nan_p(s->v))
    return isnan(v) && mpfr_nan_p(s->v) ? bits : 0;
  if (isinf(v) || mpfr_inf_p(s->v) || v == 0 || mpfr_zero_p(s->v))
    return mpfr_cmp_d(s->v, v) == 0 ? bits : 0;
  /* Every operation asks: where the shadow is a normal double, doubles tell the exponent. */
  double near = mpfr_get_d(s->v, MPFR_RNDN);
  if (near == v)
    return bits;
  if (isnormal(near)) {
    int exponent;
    frexp((v - near) / near, &exponent);
    return clamped_bits(exponent, bits);
  }
  mpfr_t d;
  mpfr_init2(d, 64);
  mpfr_sub_d(d, s->v, v, MPFR_RNDN);
  mpfr_div(d, d, s->v, MPFR_RNDN);
  long exponent = mpfr_zero_p(d) ? -(long)bits : (long)mpfr_get_exp(d);
  mpfr_clear(d);
  return clamped_bits(exponent, bits);
}

static unsigned new_origin(struct place at, unsigned correct, unsigned bits) {
  if (origin_count >= NUMFUZZ_MAX_PRECISION_LOSSES)
    return 0;
  origins[origin_count].at = at;
  origins[origin_count].correct = correct;
  origins[origin_count].bits = bits;
  return ++origin_count;
}

static int same_place(struct place a, struct place b) {
  if (!a.file || !b.file)
    return a.file == b.file && a.op == b.op;
  return a.line == b.line && a.column == b.column && a.op == b.op && strcmp(a.file, b.file) == 0;
}

/* A value that carries `origin` reached `at` with an exceptional result: said once per place. */
static void reach(unsigned origin, struct place at) {
  for (unsigned i = 0; i < reached_count; i++)
    if (same_place(reached[i], at))
      return;
  if (reached_count >= NUMFUZZ_MAX_PRECISION_LOSSES)
    return;
  reached[reached_count++] = at;
  struct place o = origins[origin - 1].at;
  numfuzz_rt_precision_lost(o.file, o.line, o.column, o.op, origins[origin - 1].correct, origins[origin - 1].bits,
                            at.file, at.line, at.column, at.op);
}

/* After an operation at (file, line, column, op) whose result `v` has the shadow `r`, the
 * operands' shadows `a` and `b`: a value that keeps more than half of its bits carries no
 * origin; one that lost them carries its operands' origin, else this operation becomes one (when
 * its shadow is a finite number: a NaN or infinite shadow is the algorithm's own, not precision
 * lost; and when it has a place and a checked op to name). An Inf, NaN, zero or subnormal result
 * of operands that carried an origin reached here from it when the operation on the shadows is a
 * number: a division by an exact zero or a pole is the operation's own, whatever its numerator
 * lost. (Not "a number within the format": where the shadow's precision fell short too, as for
 * sin(1e56) at 128 bits, its result may leave the format as well.) It is said for a checked op,
 * with no place when the optimiser rewrote the operation (the first such one of the run). The
 * program's own value stands in for the operation on rounded operands: the two agree where the
 * operands kept their bits. */
void __numfuzz_mpfr_track(nf_mp *r, double v, unsigned width, nf_mp *a, nf_mp *b, const char *file, unsigned line,
                          unsigned column, unsigned op) {
  if (r == &exhausted)
    return;
  unsigned bits = width == 4 ? 24 : 53;
  unsigned correct = correct_bits(v, r, bits);
  if (2 * correct > bits) {
    r->origin = 0;
    return;
  }
  /* A quotient goes non-finite through its divisor first: a lost divisor is the one to name. */
  nf_mp *first = op == NUMFUZZ_OP_FDIV ? b : a, *second = op == NUMFUZZ_OP_FDIV ? a : b;
  unsigned carried = first && first->origin ? first->origin : second && second->origin ? second->origin : 0;
  struct place here = {file, line, column, op};
  int checked = op < NUMFUZZ_MPFR_OP_FABS, nameable = file && checked;
  double least = width == 4 ? FLT_MIN : DBL_MIN;
  int exceptional = !isfinite(v) || (fabs(v) < least && !mpfr_zero_p(r->v));
  if (carried) {
    r->origin = carried;
    if (exceptional && checked && mpfr_number_p(r->v))
      reach(carried, here);
  } else if (nameable && isfinite(v) && mpfr_number_p(r->v)) {
    r->origin = new_origin(here, correct, bits);
  }
}
