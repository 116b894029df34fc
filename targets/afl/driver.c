/* AFL++ at its best on a numfuzz harness: the NumFuzz paper's baseline, in which a
 * floating-point exception is a crash, built with afl-clang-fast instead of numfuzz-cc.
 *
 *   afl-clang-fast -O2 -I<numfuzz include> harness.c targets/afl/driver.c <library> -lm
 *
 * - Persistent mode with the shared-memory testcase (__AFL_FUZZ_TESTCASE_BUF, __AFL_LOOP):
 *   one process runs many inputs, as numfuzz's in-process engine does.
 * - feenableexcept(FE_OVERFLOW | FE_DIVBYZERO | FE_INVALID) around each input, and FE_UNDERFLOW
 *   too when NUMFUZZ_AFL_UNDERFLOW=1: the first such exception is a SIGFPE, which afl-fuzz
 *   saves as a crash. `numfuzz triage` replays those crashes on the numfuzz-cc build of the same
 *   harness, so both tools are judged by the same replay and oracle.
 * - The harness's numfuzz.h entry points: fields at the packed offsets of its NUMFUZZ_SIGNATURE
 *   (the layout numfuzz-abi's signature.rs gives), so an input means the same to both builds;
 *   declared results and NUMFUZZ_HANDLED are ignored (a crash is the only verdict here).
 * Without afl-fuzz the binary reads one input from stdin (AFL++'s fallback), for checking. */
#define _GNU_SOURCE
#include <fenv.h>
#include <numfuzz.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__AFL_FUZZ_INIT();

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The signature string NUMFUZZ_SIGNATURE placed in its section (absent: no typed fields). */
extern const char __start___numfuzz_sig[] __attribute__((weak));
extern const char __stop___numfuzz_sig[] __attribute__((weak));

#define MAX_FIELDS 64
static size_t field_offsets[MAX_FIELDS];
static unsigned field_count;

/* Bytes of one signature token ("f64", "i32", ...), 0 when unknown. */
static size_t token_width(const char *t, size_t n) {
  static const struct {
    const char *name;
    size_t width;
  } widths[] = {{"f32", 4}, {"f64", 8}, {"f80", 10}, {"i8", 1},  {"u8", 1},  {"i16", 2},
                {"u16", 2}, {"i32", 4}, {"u32", 4},  {"i64", 8}, {"u64", 8}};
  for (size_t k = 0; k < sizeof widths / sizeof widths[0]; k++)
    if (strlen(widths[k].name) == n && memcmp(widths[k].name, t, n) == 0)
      return widths[k].width;
  return 0;
}

/* Fields are split at the commas outside a domain's brackets ("f64[0,1], i32"); a field's type
 * is its text up to the domain. */
static void read_signature(void) {
  if (!__start___numfuzz_sig || __stop___numfuzz_sig <= __start___numfuzz_sig)
    return;
  const char *s = __start___numfuzz_sig, *end = __stop___numfuzz_sig;
  size_t at = 0;
  while (s < end && *s && field_count < MAX_FIELDS) {
    while (s < end && *s == ' ')
      s++;
    const char *t = s, *type_end = NULL;
    int depth = 0;
    for (; s < end && *s && (depth > 0 || *s != ','); s++) {
      if (*s == '[' || *s == '(') {
        if (depth++ == 0 && !type_end)
          type_end = s;
      } else if (*s == ']' || *s == ')') {
        depth--;
      }
    }
    const char *e = type_end ? type_end : s;
    while (e > t && e[-1] == ' ')
      e--;
    size_t width = token_width(t, (size_t)(e - t));
    if (width == 0)
      abort(); /* a type this driver does not know: better no campaign than a wrong layout */
    field_offsets[field_count++] = at;
    at += width;
    if (s < end && *s == ',')
      s++;
  }
}

size_t numfuzz_field_offset(unsigned field, unsigned type_code) {
  (void)type_code;
  return field < field_count ? field_offsets[field] : (size_t)-1;
}
void numfuzz_handled(void) {}
void numfuzz_result_f32(const char *name, float v) { (void)name, (void)v; }
void numfuzz_result_f64(const char *name, double v) { (void)name, (void)v; }
void numfuzz_result_f80(const char *name, const long double *v) { (void)name, (void)v; }

int main(int argc, char **argv) {
  read_signature();
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  const char *underflow = getenv("NUMFUZZ_AFL_UNDERFLOW");
  int traps = FE_OVERFLOW | FE_DIVBYZERO | FE_INVALID;
  if (underflow && strcmp(underflow, "1") == 0)
    traps |= FE_UNDERFLOW;
  __AFL_INIT();
  unsigned char *buf = __AFL_FUZZ_TESTCASE_BUF;
  while (__AFL_LOOP(100000)) {
    int len = __AFL_FUZZ_TESTCASE_LEN;
    feclearexcept(FE_ALL_EXCEPT);
    feenableexcept(traps);
    LLVMFuzzerTestOneInput(buf, (size_t)len);
    fedisableexcept(FE_ALL_EXCEPT);
  }
  return 0;
}
