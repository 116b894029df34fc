/* numfuzz.h: the harness API of numfuzz targets (shipped with numfuzz-cc, on its include path).
 *
 *   #include <numfuzz.h>
 *   NUMFUZZ_SIGNATURE("f64,i32");
 *   int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
 *     double x = nf_f64(data, size, 0);
 *     int n = nf_i32(data, size, 1);
 *     double err, r;
 *     if (my_function(x, n, &r, &err) != 0) NUMFUZZ_HANDLED();
 *     NUMFUZZ_RESULT(r);                  (what the function returned, judged by triage)
 *     NUMFUZZ_RESULT_NAMED("err", err);   (a secondary output: reported, never judged)
 *     return 0;
 *   }
 *
 * Fields are little-endian and packed in signature order. A short input reads as if
 * zero-padded and a long one is truncated, so no input length is undefined behaviour.
 */
#ifndef NUMFUZZ_H
#define NUMFUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "numfuzz_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Declares the argument vector the harness decodes, e.g. "f64,f64,i32". Field types:
 * f32 f64 f80 (x87 long double) i8 i16 i32 i64 u8 u16 u32 u64. A field may declare the
 * domain its values are meant to lie in, "f64[0,1], f64(0,inf), i32[0,100]" ([ ] closed,
 * ( ) open ends): fuzzing stays mostly inside and triage never calls a finding only inputs
 * outside raise a bug; numfuzz-cc refuses a bad range. The string is embedded in the binary,
 * where numfuzz reads it without running the target. Use it once per program. */
#define NUMFUZZ_SIGNATURE(spec)                                                                 \
  __attribute__((used, section(NUMFUZZ_SIGNATURE_SECTION))) static const char numfuzz_signature_[] = spec

/* Names the function under test, e.g. NUMFUZZ_FUNCTION("gsl_sf_exprel_2_e"): what
 * `numfuzz triage --oracle` asks the reference oracle about (default: the target's file
 * name). Embedded in the binary like the signature. Use it once per program. */
#define NUMFUZZ_FUNCTION(name)                                                                  \
  __attribute__((used, section(NUMFUZZ_FUNCTION_SECTION))) static const char numfuzz_function_[] = name

/* Declares the function defined wherever every field lies inside its declared domain (a CDF
 * at any x, a quantile at any p in [0,1]): a NaN result there is a wrong answer, whatever the
 * code computes in exact arithmetic. Without an oracle, triage then calls such a NaN `wrong` (a
 * bug, reference "domain") where the shadow builds would call it `undefined` or not judge it.
 * Embedded in the binary like the signature. */
#define NUMFUZZ_DEFINED_IN_DOMAIN()                                                             \
  __attribute__((used, section(NUMFUZZ_DEFINED_SECTION))) static const char numfuzz_defined_[] = "defined"

/* The library under test reported the error itself (non-zero status, errno, ...): the
 * exceptions of this input are "handled" rather than "silent" in numfuzz triage. */
#define NUMFUZZ_HANDLED() numfuzz_handled()

/* The library reported an error at file:line (a reason, may be NULL, and its code), e.g. from
 * the error handler a harness installs. numfuzz-cc reports each call of the functions
 * NUMFUZZ_CC_ERROR_HOOK names by itself; triage roots a result the library returned as a
 * success after such a report at the dropped report. */
#define NUMFUZZ_ERROR_REPORTED(file, line, reason, code) numfuzz_error_reported(file, line, reason, code)

/* Runtime entry points (the readers and macros below are the intended interface). */
size_t numfuzz_field_offset(unsigned field, unsigned type_code);
void numfuzz_handled(void);
void numfuzz_error_reported(const char *file, uint32_t line, const char *reason, int64_t code);
void numfuzz_result_f32(const char *name, float v);
void numfuzz_result_f64(const char *name, double v);
void numfuzz_result_f80(const char *name, const long double *v);

/* A long double travels by address (the runtime reads the x87 bytes). */
static inline __attribute__((unused)) void numfuzz_result_f80_(const char *name, long double v) {
  numfuzz_result_f80(name, &v);
}

/* Declares a result of the function under test for this input: a float, double or long
 * double (integers are converted to double). Call it once per output value, after the call
 * under test; each call is one numbered result (0, 1, ...). Triage uses the results to tell
 * which exceptions reach them (an Inf or NaN the library returned without reporting it) and
 * compares them with a reference oracle. NUMFUZZ_RESULT_NAMED("err", v) declares a secondary
 * output, such as an error estimate: reported, but never what makes a finding a bug. A
 * harness without results works as before; triage then says consequences need them. */
#ifdef __cplusplus
} /* extern "C" */
static inline void numfuzz_result_(const char *name, float v) { numfuzz_result_f32(name, v); }
static inline void numfuzz_result_(const char *name, double v) { numfuzz_result_f64(name, v); }
static inline void numfuzz_result_(const char *name, long double v) { numfuzz_result_f80_(name, v); }
template <typename T> static inline void numfuzz_result_(const char *name, T v) {
  numfuzz_result_f64(name, static_cast<double>(v));
}
#define NUMFUZZ_RESULT(v) numfuzz_result_(nullptr, (v))
#define NUMFUZZ_RESULT_NAMED(name, v) numfuzz_result_((name), (v))
extern "C" {
#else
#define NUMFUZZ_RESULT_AS_(name, v)                                                             \
  _Generic((v), float: numfuzz_result_f32, long double: numfuzz_result_f80_, default: numfuzz_result_f64)(name, (v))
#define NUMFUZZ_RESULT(v) NUMFUZZ_RESULT_AS_((const char *)0, v)
#define NUMFUZZ_RESULT_NAMED(name, v) NUMFUZZ_RESULT_AS_((name), v)
#endif

#if defined(__clang__)
#define NUMFUZZ_READER_ static inline __attribute__((no_sanitize("coverage"), unused))
#else
#define NUMFUZZ_READER_ static inline __attribute__((unused))
#endif

/* Copies field `field` (of `width` bytes) into `out`, zero-padding what the input lacks. */
NUMFUZZ_READER_ void numfuzz_read_(const uint8_t *data, size_t size, unsigned field, unsigned type_code,
                                   void *out, size_t width) {
  size_t off = numfuzz_field_offset(field, type_code);
  size_t have = off < size ? size - off : 0;
  if (have > width)
    have = width;
  memset(out, 0, width);
  if (have)
    memcpy(out, data + off, have);
}

#define NUMFUZZ_DEFINE_READER_(fn, ctype, code, width)                                          \
  NUMFUZZ_READER_ ctype fn(const uint8_t *data, size_t size, unsigned field) {                 \
    unsigned char b[16];                                                                        \
    ctype v;                                                                                    \
    numfuzz_read_(data, size, field, code, b, width);                                          \
    memset(&v, 0, sizeof v);                                                                    \
    memcpy(&v, b, width);                                                                       \
    return v;                                                                                   \
  }

NUMFUZZ_DEFINE_READER_(nf_f32, float, NUMFUZZ_FIELD_F32, 4)
NUMFUZZ_DEFINE_READER_(nf_f64, double, NUMFUZZ_FIELD_F64, 8)
NUMFUZZ_DEFINE_READER_(nf_f80, long double, NUMFUZZ_FIELD_F80, 10)
NUMFUZZ_DEFINE_READER_(nf_i8, int8_t, NUMFUZZ_FIELD_I8, 1)
NUMFUZZ_DEFINE_READER_(nf_i16, int16_t, NUMFUZZ_FIELD_I16, 2)
NUMFUZZ_DEFINE_READER_(nf_i32, int32_t, NUMFUZZ_FIELD_I32, 4)
NUMFUZZ_DEFINE_READER_(nf_i64, int64_t, NUMFUZZ_FIELD_I64, 8)
NUMFUZZ_DEFINE_READER_(nf_u8, uint8_t, NUMFUZZ_FIELD_U8, 1)
NUMFUZZ_DEFINE_READER_(nf_u16, uint16_t, NUMFUZZ_FIELD_U16, 2)
NUMFUZZ_DEFINE_READER_(nf_u32, uint32_t, NUMFUZZ_FIELD_U32, 4)
NUMFUZZ_DEFINE_READER_(nf_u64, uint64_t, NUMFUZZ_FIELD_U64, 8)

#undef NUMFUZZ_DEFINE_READER_

/* Plain mode: a program built with any C compiler, without numfuzz-cc and its runtime (a
 * reproducer written by `numfuzz triage --repro`). Exactly one file of the program defines
 * NUMFUZZ_PLAIN_RUNTIME before including this header: it gets the entry points the harness
 * calls, which record the declared results and whether the library reported an error, and it
 * defines the input's field offsets (numfuzz_plain_offsets, numfuzz_plain_fields). The
 * harness's own file includes the header as usual. */
#ifdef NUMFUZZ_PLAIN_RUNTIME
#define NUMFUZZ_PLAIN_MAX_RESULTS 64
struct numfuzz_plain_result {
  const char *name; /* NULL for a primary result (NUMFUZZ_RESULT) */
  long double value;
};
extern const size_t numfuzz_plain_offsets[];
extern const unsigned numfuzz_plain_fields;
struct numfuzz_plain_result numfuzz_plain_results[NUMFUZZ_PLAIN_MAX_RESULTS];
unsigned numfuzz_plain_count;
int numfuzz_plain_handled;

size_t numfuzz_field_offset(unsigned field, unsigned type_code) {
  (void)type_code;
  return field < numfuzz_plain_fields ? numfuzz_plain_offsets[field] : (size_t)-1;
}
void numfuzz_handled(void) { numfuzz_plain_handled = 1; }
void numfuzz_error_reported(const char *file, uint32_t line, const char *reason, int64_t code) {
  (void)file, (void)line, (void)reason, (void)code;
}
static void numfuzz_plain_record_(const char *name, long double v) {
  if (numfuzz_plain_count < NUMFUZZ_PLAIN_MAX_RESULTS) {
    numfuzz_plain_results[numfuzz_plain_count].name = name;
    numfuzz_plain_results[numfuzz_plain_count].value = v;
    numfuzz_plain_count++;
  }
}
void numfuzz_result_f32(const char *name, float v) { numfuzz_plain_record_(name, v); }
void numfuzz_result_f64(const char *name, double v) { numfuzz_plain_record_(name, v); }
void numfuzz_result_f80(const char *name, const long double *v) { numfuzz_plain_record_(name, *v); }
#endif

#ifdef __cplusplus
}
#endif

#endif /* NUMFUZZ_H */
