/* What the two shadow runtimes share (shadow.c: x87 shadows; shadow_mpfr.c: MPFR shadows):
 * where a shadow lives between the SSA values the pass gives it. A shadow is a payload, a
 * `long double` in an x87 build and a handle to an MPFR value in an MPFR build; the memory
 * table and the call slots keep it with the bits of the value it shadows, and hand it back only
 * while those bits are still the value's (anything else restarts from the value itself).
 *
 * Internal to the runtime archive: hidden, so a target sees only the entry points. */
#ifndef NUMFUZZ_SHADOW_CORE_H
#define NUMFUZZ_SHADOW_CORE_H

#include <stdint.h>

#include "numfuzz_abi.h"

#define NF_HIDDEN __attribute__((visibility("hidden")))

union nf_shadow {
  long double x87;
  void *handle;
};

/* A new input: no memory shadow, no call in flight, reliable, no bound. */
NF_HIDDEN void nf_core_reset(void);

/* The call slots (see numfuzz-abi's shadow.rs): each returns 1 and sets *out when the slot
 * holds a shadow for `v`. */
NF_HIDDEN int nf_core_arg(const void *fn, unsigned index, unsigned count, double v, union nf_shadow *out);
NF_HIDDEN void nf_core_call(const void *callee);
NF_HIDDEN void nf_core_set_arg(unsigned index, double v, union nf_shadow s);
NF_HIDDEN void nf_core_set_ret(const void *fn, double v, union nf_shadow s);
NF_HIDDEN int nf_core_get_ret(const void *callee, double v, union nf_shadow *out);

/* Memory: a load finds the shadow stored at `p` while the bits there are still `v`'s. */
NF_HIDDEN int nf_core_load(const void *p, double v, unsigned width, union nf_shadow *out);
/* `width` 4 or 8; `constant_zero`: the program stored a constant 0 (a pole's witness). */
NF_HIDDEN void nf_core_store(void *p, double v, union nf_shadow s, unsigned width, int constant_zero);
/* Whether the zero at `p` is one the program stored as a constant, still there. */
NF_HIDDEN int nf_core_constant_zero_at(const void *p);
NF_HIDDEN void nf_core_copy(void *dst, const void *src, uint64_t n);
/* An integer load over floats: `lossy` says whether a stored value lost what its shadow holds. */
NF_HIDDEN void nf_core_int_load(const void *p, unsigned width, const char *where,
                                int (*lossy)(double v, union nf_shadow s));

/* Why this input's shadows stopped telling the wider program's results (NULL: they did not). */
NF_HIDDEN void nf_core_mark_unreliable(const char *why, const char *where);
NF_HIDDEN const char *nf_core_unreliable(void);
/* A branch on a value the format lost went the other way in the shadow: the shadow goes on along
 * the program's path, so its result is the exact value of that path, which judges a result only
 * where it is a nonzero number within the format (the MPFR runtime; the x87 one calls it unreliable). */
NF_HIDDEN void nf_core_mark_lost_branch(const char *where);
NF_HIDDEN const char *nf_core_lost_branch(void);
/* A callee's constant infinity entered arithmetic as a bound (numfuzz-abi's RETURNED_CONSTANT_BOUND). */
NF_HIDDEN void nf_core_set_bounded(void);
NF_HIDDEN int nf_core_bounded(void);

NF_HIDDEN uint64_t nf_bits_of(double v);

/* The messages both runtimes give when a program reads what its shadow cannot follow. */
#define NF_LOST_BITS "the bits of a value the format lost were read as an integer"
#define NF_LOST_BRANCH NUMFUZZ_SHADOW_LOST_BRANCH_REASON

#endif
