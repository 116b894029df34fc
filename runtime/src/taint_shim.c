/* numfuzz runtime, taint builds (NUMFUZZ_CC_TAINT=1 numfuzz-cc): the DataFlowSanitizer side.
 *
 * In a taint build clang's DataFlowSanitizer instruments the program; the numfuzz runtime
 * stays uninstrumented. numfuzz-cc's ABI list (numfuzz-abi's c_header::dfsan_abilist) makes
 * every call of a runtime entry point marked `custom` a call of `__dfsw_<name>` here, with
 * one label per argument and a pointer for the return value's label. These wrappers hand the
 * labels to the Rust runtime (numfuzz_rt_*), which decides the result's label (see
 * runtime/src/taint.rs).
 *
 * DataFlowSanitizer also renames every instrumented definition to `<name>.dfsan`, so the
 * harness entry points of a taint build are `LLVMFuzzerTestOneInput.dfsan` and
 * `LLVMFuzzerInitialize.dfsan`; numfuzz_shim_taint_entry() hands them to the runtime's main.
 *
 * Everything DataFlowSanitizer provides is referenced weakly: this file is linked into every
 * numfuzz target, and only taint builds (which link the DataFlowSanitizer runtime) call it.
 */
#include <stddef.h>
#include <stdint.h>

typedef uint8_t numfuzz_label;
typedef struct numfuzz_site numfuzz_site_t;
typedef struct {
  _Alignas(16) unsigned char bytes[16];
} numfuzz_f80_slot;

numfuzz_label dfsan_read_label(const void *addr, size_t size) __attribute__((weak));
void dfsan_set_label(numfuzz_label label, void *addr, size_t size) __attribute__((weak));
void dfsan_clear_thread_local_state(void) __attribute__((weak));

uint8_t numfuzz_rt_taint_f32(const numfuzz_site_t *site, float a, float b, float c, int64_t i, float r,
                             const numfuzz_label *labels, float *out);
uint8_t numfuzz_rt_taint_f64(const numfuzz_site_t *site, double a, double b, double c, int64_t i, double r,
                             const numfuzz_label *labels, double *out);
uint8_t numfuzz_rt_taint_f80(const numfuzz_site_t *site, numfuzz_f80_slot *abcr, int64_t i,
                             const numfuzz_label *labels);
uint8_t numfuzz_rt_taint_int_f32(const numfuzz_site_t *site, float a, numfuzz_label label);
uint8_t numfuzz_rt_taint_int_f64(const numfuzz_site_t *site, double a, numfuzz_label label);
uint8_t numfuzz_rt_taint_int_f80(const numfuzz_site_t *site, const numfuzz_f80_slot *a, numfuzz_label label);
void numfuzz_rt_result_f32(const char *name, float v, numfuzz_label label);
void numfuzz_rt_result_f64(const char *name, double v, numfuzz_label label);
void numfuzz_rt_result_f80(const char *name, const numfuzz_f80_slot *v, numfuzz_label label);

/* The label of a long double in memory (x87 values occupy 10 bytes of their slot). */
static numfuzz_label f80_label(const void *p) { return dfsan_read_label ? dfsan_read_label(p, 10) : 0; }

float __dfsw___numfuzz_taint_f32(const numfuzz_site_t *site, float a, float b, float c, int64_t i, float r,
                                 numfuzz_label ls, numfuzz_label la, numfuzz_label lb, numfuzz_label lc,
                                 numfuzz_label li, numfuzz_label lr, numfuzz_label *ret) {
  (void)ls;
  (void)lr;
  numfuzz_label labels[4] = {la, lb, lc, li};
  /* The runtime replaces the result when this exception is the one repaired (NUMFUZZ_REPAIR). */
  float out = r;
  *ret = numfuzz_rt_taint_f32(site, a, b, c, i, r, labels, &out);
  return out;
}

double __dfsw___numfuzz_taint_f64(const numfuzz_site_t *site, double a, double b, double c, int64_t i, double r,
                                  numfuzz_label ls, numfuzz_label la, numfuzz_label lb, numfuzz_label lc,
                                  numfuzz_label li, numfuzz_label lr, numfuzz_label *ret) {
  (void)ls;
  (void)lr;
  numfuzz_label labels[4] = {la, lb, lc, li};
  /* The runtime replaces the result when this exception is the one repaired (NUMFUZZ_REPAIR). */
  double out = r;
  *ret = numfuzz_rt_taint_f64(site, a, b, c, i, r, labels, &out);
  return out;
}

/* The f80 operands and result are in four slots of the caller's frame; the result's label (and
 * a repaired result) is set on slot 3, which the instrumented code reads back as the
 * operation's result. */
void __dfsw___numfuzz_taint_f80(const numfuzz_site_t *site, numfuzz_f80_slot *abcr, int64_t i, numfuzz_label ls,
                                numfuzz_label labcr, numfuzz_label li) {
  (void)ls;
  (void)labcr;
  numfuzz_label labels[4] = {f80_label(&abcr[0]), f80_label(&abcr[1]), f80_label(&abcr[2]), li};
  numfuzz_label l = numfuzz_rt_taint_f80(site, abcr, i, labels);
  if (dfsan_set_label)
    dfsan_set_label(l, &abcr[3], sizeof abcr[3]);
}

int64_t __dfsw___numfuzz_taint_int_f32(const numfuzz_site_t *site, float a, int64_t r, numfuzz_label ls,
                                       numfuzz_label la, numfuzz_label lr, numfuzz_label *ret) {
  (void)ls;
  (void)lr;
  *ret = numfuzz_rt_taint_int_f32(site, a, la);
  return r;
}

int64_t __dfsw___numfuzz_taint_int_f64(const numfuzz_site_t *site, double a, int64_t r, numfuzz_label ls,
                                       numfuzz_label la, numfuzz_label lr, numfuzz_label *ret) {
  (void)ls;
  (void)lr;
  *ret = numfuzz_rt_taint_int_f64(site, a, la);
  return r;
}

int64_t __dfsw___numfuzz_taint_int_f80(const numfuzz_site_t *site, const numfuzz_f80_slot *a, int64_t r,
                                       numfuzz_label ls, numfuzz_label la, numfuzz_label lr, numfuzz_label *ret) {
  (void)ls;
  (void)la;
  (void)lr;
  *ret = numfuzz_rt_taint_int_f80(site, a, f80_label(a));
  return r;
}

void __dfsw_numfuzz_result_f32(const char *name, float v, numfuzz_label lname, numfuzz_label lv) {
  (void)lname;
  numfuzz_rt_result_f32(name, v, lv);
}

void __dfsw_numfuzz_result_f64(const char *name, double v, numfuzz_label lname, numfuzz_label lv) {
  (void)lname;
  numfuzz_rt_result_f64(name, v, lv);
}

void __dfsw_numfuzz_result_f80(const char *name, const numfuzz_f80_slot *v, numfuzz_label lname,
                               numfuzz_label lv) {
  (void)lname;
  (void)lv;
  numfuzz_rt_result_f80(name, v, f80_label(v));
}

/* The instrumented harness of a taint build. */
int numfuzz_taint_test_one_(const uint8_t *data, size_t size) __asm__("LLVMFuzzerTestOneInput.dfsan")
    __attribute__((weak));
int numfuzz_taint_initialize_(int *argc, char ***argv) __asm__("LLVMFuzzerInitialize.dfsan") __attribute__((weak));

/* Uninstrumented code calling instrumented code: start every input with no stale argument or
 * return labels in DataFlowSanitizer's thread-local state. */
static int numfuzz_taint_test_one(const uint8_t *data, size_t size) {
  if (dfsan_clear_thread_local_state)
    dfsan_clear_thread_local_state();
  return numfuzz_taint_test_one_(data, size);
}

static int numfuzz_taint_initialize(int *argc, char ***argv) {
  if (dfsan_clear_thread_local_state)
    dfsan_clear_thread_local_state();
  return numfuzz_taint_initialize_(argc, argv);
}

/* The harness entry points of a taint build, or null where there are none. */
void numfuzz_shim_taint_entry(int (**test_one)(const uint8_t *, size_t), int (**initialize)(int *, char ***)) {
  *test_one = numfuzz_taint_test_one_ ? numfuzz_taint_test_one : NULL;
  *initialize = numfuzz_taint_initialize_ ? numfuzz_taint_initialize : NULL;
}
