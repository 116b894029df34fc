//! A true value beyond the format, against what the program returned: an infinity of the right
//! sign for a true overflow is the format's answer (`range`, no bug without an oracle); a NaN is
//! no rounding of any value, so it is `wrong` whether the true value overflows or underflows (the
//! rounded answer was ±Inf or 0), as GSL's `gaussian_pdf(2.2e-308, 1e-323)` = NaN for 10^(-1.1e30).
//! Judged by the shadow builds, without an oracle.

use testkit::{compile_with_every_build, triage_roots};

const CASES: &str = r#"#include <numfuzz.h>
#include <math.h>
NUMFUZZ_SIGNATURE("i32,f64");
NUMFUZZ_FUNCTION("beyond");
__attribute__((noinline)) static double nan_for_underflow(double x) { return exp(x) * exp(-x) * exp(-x); }
__attribute__((noinline)) static double nan_for_overflow(double x) { return exp(x) * exp(x) * ((exp(x) - exp(x - 0.1)) / exp(x)); }
__attribute__((noinline)) static double inf_for_overflow(double x) { return exp(x) * exp(x); }
__attribute__((noinline)) static double nan_for_jagged(double x) { uint64_t b; memcpy(&b, &x, 8); double e = exp(x); return e * e * (__builtin_parityll(b) ? 3.0 : -3.0) * (e - e + 1.0); }
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int c = nf_i32(data, size, 0);
  double x = nf_f64(data, size, 1), r = 0;
  switch (c) {
  case 1: r = nan_for_underflow(x); break;
  case 2: r = nan_for_overflow(x); break;
  case 3: r = inf_for_overflow(x); break;
  case 4: r = nan_for_jagged(x); break;
  }
  NUMFUZZ_RESULT(r);
  return 0;
}
"#;

/// e^800 · e^-800 is Inf · 0 in binary64; the true e^-800 is 3.7e-348, which rounds to 0.
const LINE_NAN_FOR_UNDERFLOW: u64 = 5;
/// e^1600 · 0.0952 is 7.1e693; binary64 makes Inf · NaN of it.
const LINE_NAN_FOR_OVERFLOW: u64 = 6;
/// e^800 overflows, and the program says Inf: a true overflow.
const LINE_INF_FOR_OVERFLOW: u64 = 7;
/// ±3·e^1600 · (e^800 - e^800 + 1): its sign follows the parity of x's bits, so the shadow, beyond
/// the range, flips sign beside the input (no smooth function of it); binary64 makes NaN of
/// Inf - Inf. Whatever the value, NaN is no rounding of it.
const LINE_NAN_FOR_JAGGED: u64 = 8;

#[test]
fn a_nan_for_a_value_beyond_the_format_is_wrong_and_an_infinity_for_an_overflow_is_range() {
    let built = compile_with_every_build("beyond", &[("beyond.c", CASES)], &["-O2"]);
    let inputs: Vec<(String, Vec<u8>)> = [(1, 800.0), (2, 800.0), (3, 400.0), (4, 800.0)]
        .into_iter()
        .map(|(case, x)| (format!("id:{case:06},case:{case}"), testkit::case_input(case, x)))
        .collect();
    let (roots, _) = triage_roots(&built, "out", &inputs);
    let verdict = |line: u64| {
        let f = &roots[&line];
        let r = &f["reference"];
        (
            f["class"].as_str().unwrap_or("").to_string(),
            r["verdict"].as_str().unwrap_or("").to_string(),
            r["value"].as_str().unwrap_or("").to_string(),
        )
    };
    let (class, judged, value) = verdict(LINE_NAN_FOR_UNDERFLOW);
    assert_eq!((class.as_str(), judged.as_str()), ("bug", "wrong"), "{roots:#?}");
    assert!(value.contains("e-348"), "e^-800 is 3.7e-348: {value}");
    let (class, judged, value) = verdict(LINE_NAN_FOR_OVERFLOW);
    assert_eq!((class.as_str(), judged.as_str()), ("bug", "wrong"), "{roots:#?}");
    assert!(
        value.starts_with("7.07") && value.ends_with("e+693"),
        "e^1600 * 0.0952: {value}"
    );
    let (class, judged, value) = verdict(LINE_NAN_FOR_JAGGED);
    assert_eq!((class.as_str(), judged.as_str()), ("bug", "wrong"), "{roots:#?}");
    assert!(value.ends_with("e+695"), "3 e^1600: {value}");
    let (class, judged, _) = verdict(LINE_INF_FOR_OVERFLOW);
    assert_eq!(
        (class.as_str(), judged.as_str()),
        ("range", "unreported-range"),
        "{roots:#?}"
    );
}
