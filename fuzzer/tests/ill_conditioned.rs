//! A path that cancels everything its argument held (GSL's sin at 1.8e308 reduces by a split of
//! pi/4 and is left with 1e284 in exact arithmetic): the x87 shadow moves with its own precision
//! there, and MPFR's value, stable at 128 and 512 bits, is the exact value of a formula that may
//! no longer compute the function. A value of it beyond the range judges nothing: the Inf is not
//! judged a true overflow. A NaN is judged all the same: no rounding of any number is NaN.

use testkit::{compile_with_every_build, triage_roots};

const REDUCTION: &str = r#"#include <numfuzz.h>
#include <math.h>
NUMFUZZ_SIGNATURE("f64");
NUMFUZZ_FUNCTION("reduce");
__attribute__((noinline)) static double reduced_square(double x) {
  double z = (x + 1e292) - x;
#ifdef NAN_OF_IT
  return z * z * 2.0 - z * z;
#else
  return z * z;
#endif
}
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  NUMFUZZ_RESULT(reduced_square(nf_f64(data, size, 0)));
  return 0;
}
"#;

/// z * z at x = 1e308: z is 1e292 in exact arithmetic and at 128 bits, so z * z is 1e584; in
/// binary64, where one unit in the last place of x is 1.5e292, z is that unit and z * z is Inf;
/// in x87, 1e292 within 1e289 with a 64-bit significand and the double's answer with 53 bits.
const LINE_SQUARE: u64 = 10;
/// 2 z^2 - z^2 at x = 1e308: 1e584 exactly, Inf - Inf = NaN in binary64.
const LINE_NAN: u64 = 8;

#[test]
fn a_value_beyond_the_range_on_an_ill_conditioned_path_is_not_a_true_overflow() {
    let built = compile_with_every_build("reduce", &[("reduce.c", REDUCTION)], &["-O2"]);
    let input = vec![("id:000000,1e308".to_string(), 1e308f64.to_le_bytes().to_vec())];
    let (roots, _) = triage_roots(&built, "out", &input);
    let finding = roots.get(&LINE_SQUARE).unwrap_or_else(|| panic!("{roots:#?}"));
    assert_eq!(finding["class"], "not-judged", "{roots:#?}");
    let why = finding["not_judged"].to_string();
    assert!(why.contains("ill-conditioned"), "{why}");
}

#[test]
fn a_nan_on_an_ill_conditioned_path_is_wrong_whatever_the_value_beyond_the_range() {
    let built = compile_with_every_build("reduce_nan", &[("reduce.c", REDUCTION)], &["-O2", "-DNAN_OF_IT"]);
    let input = vec![("id:000000,1e308".to_string(), 1e308f64.to_le_bytes().to_vec())];
    let (roots, _) = triage_roots(&built, "out", &input);
    let finding = roots.get(&LINE_NAN).unwrap_or_else(|| panic!("{roots:#?}"));
    assert_eq!(finding["class"], "bug", "{roots:#?}");
    let reference = &finding["reference"];
    assert_eq!(
        (&reference["source"], &reference["verdict"]),
        (&"mpfr".into(), &"wrong".into()),
        "{reference:#}"
    );
}
