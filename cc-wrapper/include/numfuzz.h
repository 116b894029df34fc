/* numfuzz.h: the harness API of numfuzz targets (shipped with numfuzz-cc, on its include path).
 *
 *   #include <numfuzz.h>
 *   NUMFUZZ_SIGNATURE("f64,i32");
 *   int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
 *     double x = nf_f64(data, size, 0);
 *     int n = nf_i32(data, size, 1);
 *     if (my_function(x, n) != 0) NUMFUZZ_HANDLED();
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
 * f32 f64 f80 (x87 long double) i8 i16 i32 i64 u8 u16 u32 u64. The string is embedded in
 * the binary, where numfuzz reads it without running the target. Use it once per program. */
#define NUMFUZZ_SIGNATURE(spec)                                                                 \
  __attribute__((used, section(NUMFUZZ_SIGNATURE_SECTION))) static const char numfuzz_signature_[] = spec

/* The library under test reported the error itself (non-zero status, errno, ...): the
 * exceptions of this input are "handled" rather than "silent" in numfuzz triage. */
#define NUMFUZZ_HANDLED() numfuzz_handled()

/* Runtime entry points (the readers below are the intended interface). */
size_t numfuzz_field_offset(unsigned field, unsigned type_code);
void numfuzz_handled(void);

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

#ifdef __cplusplus
}
#endif

#endif /* NUMFUZZ_H */
