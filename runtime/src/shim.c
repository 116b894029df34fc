/* numfuzz runtime: the parts that must be C.
 *
 * - a weak main() (a program with its own main keeps it; a libFuzzer-style harness gets ours),
 * - weak references to the harness entry points, so programs without them still link,
 * - the bounds of the signature section,
 * - the strings AFL++'s afl-fuzz looks for in a binary,
 * - re-execution of one floating-point operation with cleared flags under a saved and
 *   restored environment, which is how the runtime learns exactly what the FPU raises.
 */
#include <fenv.h>
#include <stddef.h>
#include <stdint.h>

#include "numfuzz_abi.h"

#pragma STDC FENV_ACCESS ON

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) __attribute__((weak));
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

int numfuzz_rt_main(int argc, char **argv, int (*test_one)(const uint8_t *, size_t),
                    int (*initialize)(int *, char ***));
void numfuzz_rt_register_sites(void *start, void *stop);
void numfuzz_rt_register_cmps(void *start, void *stop);
void numfuzz_rt_early_init(int argc, int libfuzzer_harness);

void numfuzz_shim_taint_entry(int (**test_one)(const uint8_t *, size_t), int (**initialize)(int *, char ***));

static int numfuzz_shim_main(int argc, char **argv) {
  int (*test_one)(const uint8_t *, size_t) = LLVMFuzzerTestOneInput;
  int (*initialize)(int *, char ***) = LLVMFuzzerInitialize;
  if (!test_one) /* a taint build renames the harness's definitions (taint_shim.c) */
    numfuzz_shim_taint_entry(&test_one, &initialize);
  return numfuzz_rt_main(argc, argv, test_one, initialize);
}
/* A weak alias, so the constructor can tell whether the program's own main won. */
int main(int argc, char **argv) __attribute__((weak, alias("numfuzz_shim_main")));

static int numfuzz_shim_main_is_ours(void) {
  /* Through a volatile pointer: the compiler must not assume which main the linker picked. */
  int (*volatile linked)(int, char **) = main;
  return linked == numfuzz_shim_main;
}

/* Referenced by every instrumented module's constructor, so this object (with its
 * constructor and markers) is linked whenever numfuzz code is. */
void __numfuzz_register_sites(void *start, void *stop) { numfuzz_rt_register_sites(start, stop); }
void __numfuzz_register_cmps(void *start, void *stop) { numfuzz_rt_register_cmps(start, stop); }

/* numfuzz-cc passes -Wl,-u,__numfuzz_anchor so this object is linked even into programs
 * with their own main and no checked operation. */
const char __numfuzz_anchor[] = NUMFUZZ_RUNTIME_MARKER;

__attribute__((used, section(NUMFUZZ_RUNTIME_SECTION))) static const char numfuzz_runtime_marker[] =
    NUMFUZZ_RUNTIME_MARKER;
/* This runtime serves replay requests (numfuzz-abi's serve.rs); triage reads it before asking. */
__attribute__((used, section(NUMFUZZ_RUNTIME_SECTION))) static const char numfuzz_serve_marker[] =
    NUMFUZZ_SERVE_MARKER;

/* afl-fuzz 4.04c refuses binaries without the shared-memory variable's name and detects
 * persistent mode by this signature; the runtime implements both. */
__attribute__((used)) static const char numfuzz_afl_shm_marker[] = "__AFL_SHM_ID";
__attribute__((used)) static const char numfuzz_afl_persistent_marker[] = "##SIG_AFL_PERSISTENT##";

extern const char __start___numfuzz_sig[] __attribute__((weak, visibility("hidden")));
extern const char __stop___numfuzz_sig[] __attribute__((weak, visibility("hidden")));

const char *numfuzz_shim_signature(size_t *len) {
  if (!__start___numfuzz_sig || !__stop___numfuzz_sig) {
    *len = 0;
    return NULL;
  }
  *len = (size_t)(__stop___numfuzz_sig - __start___numfuzz_sig);
  return __start___numfuzz_sig;
}

/* In an llvm-cov build, writes the profile now (a crashing replay would lose it). */
int __llvm_profile_write_file(void) __attribute__((weak));
void numfuzz_shim_flush_profile(void) {
  if (__llvm_profile_write_file)
    __llvm_profile_write_file();
}

/* Runs before ordinary constructors of the program but after the site and guard
 * constructors (priority 2). glibc passes constructors the program's arguments. */
__attribute__((constructor(50))) static void numfuzz_shim_ctor(int argc, char **argv, char **envp) {
  (void)argv;
  (void)envp;
  numfuzz_rt_early_init(argc, numfuzz_shim_main_is_ours() && LLVMFuzzerTestOneInput != NULL);
}

/* --- exact flags by re-execution ------------------------------------------------------- */

enum { NF_ADD = 0, NF_SUB = 1, NF_MUL = 2, NF_DIV = 3, NF_FMA = 4, NF_TO_F32 = 5, NF_TO_F64 = 6 };

/* numfuzz kind bits: Invalid, DivByZero, Overflow, Underflow (ExceptionKind indices). */
static unsigned kinds_of(int flags) {
  return ((flags & FE_INVALID) ? 1u : 0u) | ((flags & FE_DIVBYZERO) ? 2u : 0u) | ((flags & FE_OVERFLOW) ? 4u : 0u) |
         ((flags & FE_UNDERFLOW) ? 8u : 0u);
}

/* The volatile reads and writes pin the operation between clearing and testing the flags,
 * whatever the compiler knows about floating-point side effects. */
#define NF_OPERATE(T, FMA)                                                                      \
  volatile T x = *a, y = *b, z = *c;                                                            \
  T r;                                                                                          \
  switch (op) {                                                                                 \
  case NF_ADD: r = x + y; break;                                                                \
  case NF_SUB: r = x - y; break;                                                                \
  case NF_MUL: r = x * y; break;                                                                \
  case NF_DIV: r = x / y; break;                                                                \
  case NF_FMA: r = FMA(x, y, z); break;                                                         \
  default: r = x; break;                                                                        \
  }                                                                                             \
  volatile T sink = r;                                                                          \
  (void)sink;

#define NF_REEXEC(T, FMA)                                                                       \
  fenv_t env;                                                                                   \
  fegetenv(&env);                                                                               \
  feclearexcept(FE_ALL_EXCEPT);                                                                 \
  NF_OPERATE(T, FMA)                                                                            \
  int flags = fetestexcept(FE_ALL_EXCEPT);                                                      \
  fesetenv(&env);                                                                               \
  return kinds_of(flags);

#if defined(__x86_64__)
/* float and double arithmetic is SSE on x86-64: its flags are MXCSR's low six bits (IE, DE, ZE,
 * OE, UE, PE), and saving, clearing and restoring them there costs a few cycles, where glibc's
 * fegetenv/feclearexcept/fesetenv also save and reload the x87 environment (about half of a
 * precise run's time on GSL code whose recurrences underflow at every step). The x87 status is
 * not touched by these operations and is left alone. A fused multiply-add may be a libm call
 * (without FMA hardware), which may use the x87 or glibc's environment functions: it keeps the
 * full save and restore. */
static inline unsigned numfuzz_get_mxcsr(void) {
  unsigned m;
  __asm__ volatile("stmxcsr %0" : "=m"(m));
  return m;
}
static inline void numfuzz_set_mxcsr(unsigned m) { __asm__ volatile("ldmxcsr %0" : : "m"(m)); }
static unsigned kinds_of_mxcsr(unsigned m) {
  return ((m & 0x01u) ? 1u : 0u) | ((m & 0x04u) ? 2u : 0u) | ((m & 0x08u) ? 4u : 0u) | ((m & 0x10u) ? 8u : 0u);
}
#define NF_REEXEC_SSE(T, FMA)                                                                   \
  if (op == NF_FMA) {                                                                           \
    NF_REEXEC(T, FMA)                                                                           \
  }                                                                                             \
  unsigned saved = numfuzz_get_mxcsr();                                                         \
  numfuzz_set_mxcsr(saved & ~0x3Fu);                                                            \
  NF_OPERATE(T, FMA)                                                                            \
  unsigned raised = numfuzz_get_mxcsr();                                                        \
  numfuzz_set_mxcsr(saved);                                                                     \
  return kinds_of_mxcsr(raised);
#else
#define NF_REEXEC_SSE(T, FMA) NF_REEXEC(T, FMA)
#endif

/* Non-zero when SSE flushes tiny results to zero or reads subnormal operands as zero (MXCSR's
 * FTZ and DAZ), which change what a tiny product or quotient is, or when the mode cannot be read
 * (the checkers then re-execute: fpu.rs's flushes_tiny). */
int numfuzz_flush_modes(void) {
#if defined(__x86_64__)
  return (numfuzz_get_mxcsr() & 0x8040u) != 0;
#else
  return 1;
#endif
}

unsigned numfuzz_reexec_f32(int op, const float *a, const float *b, const float *c) { NF_REEXEC_SSE(float, __builtin_fmaf) }
unsigned numfuzz_reexec_f64(int op, const double *a, const double *b, const double *c) { NF_REEXEC_SSE(double, __builtin_fma) }
unsigned numfuzz_reexec_f80(int op, const long double *a, const long double *b, const long double *c) {
  NF_REEXEC(long double, __builtin_fmal)
}

/* Narrowing conversions of a value of type `from` (NUMFUZZ_TYPE_*) to `op` (NF_TO_F32/64). */
unsigned numfuzz_reexec_narrow(int from, int op, const void *value) {
#if defined(__x86_64__)
  if (from == NUMFUZZ_TYPE_F64) { /* cvtsd2ss: SSE, as above */
    unsigned saved = numfuzz_get_mxcsr();
    numfuzz_set_mxcsr(saved & ~0x3Fu);
    volatile double x = *(const double *)value;
    volatile float r = (float)x;
    (void)r;
    unsigned raised = numfuzz_get_mxcsr();
    numfuzz_set_mxcsr(saved);
    return kinds_of_mxcsr(raised);
  }
#endif
  fenv_t env;
  fegetenv(&env);
  feclearexcept(FE_ALL_EXCEPT);
  if (from == NUMFUZZ_TYPE_F64) {
    volatile double x = *(const double *)value;
    volatile float r = (float)x;
    (void)r;
  } else {
    volatile long double x = *(const long double *)value;
    if (op == NF_TO_F32) {
      volatile float r = (float)x;
      (void)r;
    } else {
      volatile double r = (double)x;
      (void)r;
    }
  }
  int flags = fetestexcept(FE_ALL_EXCEPT);
  fesetenv(&env);
  return kinds_of(flags);
}

/* Environment save/restore around runtime code that may touch the FPU (reporting). */
void numfuzz_fenv_save(fenv_t *env) { fegetenv(env); }
void numfuzz_fenv_restore(const fenv_t *env) { fesetenv(env); }
size_t numfuzz_fenv_size(void) { return sizeof(fenv_t); }

/* Fast runs (precise.rs). Every module with split functions defines this weak marker; the
 * weak reference is null in programs without one. */
extern const uint8_t __numfuzz_split_build __attribute__((weak));
int numfuzz_split_build(void) { return &__numfuzz_split_build != NULL; }

/* Set by the fast copies' sentinels (a conversion to an integer out of range) and by
 * __numfuzz_fenv_barrier: the run must be re-run precisely although the flags may be down
 * (precise.rs). */
uint8_t __numfuzz_fast_recheck; /* numfuzz-abi symbols::FAST_RECHECK */

/* A fast run starts with Invalid, DivByZero, Overflow and Underflow clear and afterwards asks
 * whether one of them went up (inexact and the denormal-operand flag are not exceptions
 * numfuzz reports, and stay as the program left them). The flags are sticky in MXCSR (SSE)
 * and the x87 status word; on x86-64 both are read directly and written only when one of the
 * four is up (ldmxcsr and fnclex cost tens of cycles, the reads a few), where glibc's
 * feclearexcept would save and reload the whole x87 environment every time. */
#if defined(__x86_64__)
#define NUMFUZZ_WATCHED_BITS 0x1Du /* IE | ZE | OE | UE, the same bits in both registers */
static unsigned numfuzz_mxcsr(void) {
  unsigned mxcsr;
  __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
  return mxcsr;
}
static unsigned numfuzz_x87_status(void) {
  unsigned short status;
  __asm__ volatile("fnstsw %0" : "=am"(status));
  return status;
}
static int numfuzz_flags_up(void) { return ((numfuzz_mxcsr() | numfuzz_x87_status()) & NUMFUZZ_WATCHED_BITS) != 0; }
void numfuzz_clear_watched_flags(void) {
  unsigned mxcsr = numfuzz_mxcsr();
  if (mxcsr & NUMFUZZ_WATCHED_BITS) {
    mxcsr &= ~NUMFUZZ_WATCHED_BITS;
    __asm__ volatile("ldmxcsr %0" : : "m"(mxcsr));
  }
  if (numfuzz_x87_status() & NUMFUZZ_WATCHED_BITS)
    feclearexcept(FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW);
  __numfuzz_fast_recheck = 0;
}
#else
static int numfuzz_flags_up(void) { return fetestexcept(FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW) != 0; }
void numfuzz_clear_watched_flags(void) {
  feclearexcept(FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW);
  __numfuzz_fast_recheck = 0;
}
#endif
int numfuzz_watched_flags_raised(void) { return __numfuzz_fast_recheck || numfuzz_flags_up(); }

/* Which of the four flags are up (fetestexcept's bits), and 0x10000 when the sentinel fired. */
unsigned numfuzz_watched_flags(void) {
  unsigned up = (unsigned)fetestexcept(FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW);
  return up | (__numfuzz_fast_recheck ? 0x10000u : 0u);
}

/* Called by fast copies just before the program clears or replaces the flags itself: what it
 * is about to erase is kept in the sentinel byte. Reads the flags only. */
void __numfuzz_fenv_barrier(void) { /* numfuzz-abi symbols::FENV_BARRIER */
  if (numfuzz_flags_up())
    __numfuzz_fast_recheck = 1;
}

/* Runs in place of a time-out's client restart (runtime/src/run_cut.rs): the harness is
 * called under a jump buffer, and the alarm filter jumps back to it from a run that outlived
 * its limit while the interrupted code was the program's own (section NUMFUZZ_CODE_SECTION):
 * no runtime, libc or libm frame is left half done. _setjmp saves no signal mask (a system call
 * per run); run_cut.rs unblocks the alarm after a jump. The FPU's control words are put back
 * as the run found them: the signal handler runs, and so returns here, in the kernel's
 * initial FPU state. */
#include <setjmp.h>

extern const char __start___numfuzz_code[] __attribute__((weak, visibility("hidden")));
extern const char __stop___numfuzz_code[] __attribute__((weak, visibility("hidden")));

static jmp_buf numfuzz_cut_buffer;
static volatile int numfuzz_cut_armed;

int numfuzz_shim_in_program_code(uintptr_t pc) {
  if (!__start___numfuzz_code || !__stop___numfuzz_code)
    return 0;
  return pc >= (uintptr_t)__start___numfuzz_code && pc < (uintptr_t)__stop___numfuzz_code;
}

int numfuzz_shim_cut_armed(void) { return numfuzz_cut_armed; }

/* 1 when the run was cut, else 0. */
int numfuzz_shim_guarded_run(int (*test_one)(const uint8_t *, size_t), const uint8_t *data, size_t size) {
#if defined(__x86_64__)
  unsigned int mxcsr = __builtin_ia32_stmxcsr();
  unsigned short x87_control;
  __asm__ volatile("fnstcw %0" : "=m"(x87_control));
#endif
  if (_setjmp(numfuzz_cut_buffer)) {
    numfuzz_cut_armed = 0;
#if defined(__x86_64__)
    __builtin_ia32_ldmxcsr(mxcsr & ~0x3fu);
    __asm__ volatile("fldcw %0" : : "m"(x87_control));
#endif
    return 1;
  }
  numfuzz_cut_armed = 1;
  test_one(data, size);
  numfuzz_cut_armed = 0;
  return 0;
}

/* From the alarm filter only, while numfuzz_shim_cut_armed(). */
void numfuzz_shim_cut_run(void) { _longjmp(numfuzz_cut_buffer, 1); }
