//! A branch on a value the format lost, which goes the other way in the shadow. The shadow goes
//! on along the program's path; the MPFR build judges the result from that path's exact value
//! where it is a number within the format (the escape is rounding's doing). Where that path's
//! exact value is no such number, triage replays the MPFR build steered by its shadows (every
//! comparison and conversion to an integer takes the exact values' outcome) and judges from the
//! exact values' own path, where that is a nonzero number. The x87 build calls all of them unreliable, which is what sends them
//! up the ladder.

use serde_json::Value;
use std::collections::BTreeMap;
use testkit::{compile_with_every_build, primary_shadow, triage_roots, Built};

const PATH: &str = r#"#include <numfuzz.h>
#include <math.h>
NUMFUZZ_SIGNATURE("i32,f64");
NUMFUZZ_FUNCTION("path");
/* step is (x + 1) - x: 0 in binary64 from x = 2^53 on, 1 in both shadows at x = 2^60. */
__attribute__((noinline)) static double ratio_on_lost_step(double x) {
  double step = (x + 1.0) - x;
  if (step < 0.5)
    return 2.0 / step;
  return step;
}
__attribute__((noinline)) static double growth_on_lost_step(double x) {
  double step = (x + 1.0) - x;
  if (step < 0.5)
    return exp(x);
  return step;
}
__attribute__((noinline)) static double count_on_lost_step(double x) {
  double step = (x + 1.0) - x;
  int n = (int)(step * 3.0);
  if (step < 0.5)
    return exp(x);
  return 10.0 / (n - 2);
}
__attribute__((noinline)) static double cutoff_on_lost_step(double x) {
  double step = (x + 1.0) - x;
  if (step < 0.5)
    return exp(x);
  return 0.0;
}
__attribute__((noinline)) static double nan_beside_cutoff(double x) {
  double step = (x + 1.0) - x;
  if (step < 0.5)
    return exp(x) - exp(x);
  return 0.0;
}
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int c = nf_i32(data, size, 0);
  double x = nf_f64(data, size, 1);
  NUMFUZZ_RESULT(c == 1   ? ratio_on_lost_step(x)
                 : c == 2 ? growth_on_lost_step(x)
                 : c == 3 ? count_on_lost_step(x)
                 : c == 4 ? cutoff_on_lost_step(x)
                          : nan_beside_cutoff(x));
  return 0;
}
"#;

/// 2 / step: the program divides by its 0, the shadow of its path by 1.
const LINE_RATIO: u64 = 9;
/// exp(2^60): beyond the format in the program and in the shadow of its path; the exact values
/// return step, 1.
const LINE_GROWTH: u64 = 15;
/// exp(2^60) again, where the exact values' path returns 10 / (n - 2) with n = (int)(3 step):
/// 10 from the exact n = 3, and -5 if n were the program's 0.
const LINE_COUNT: u64 = 22;
/// exp(2^60) once more, where the exact values' path returns the constant 0.0: a cutoff of the
/// program, not a value, so not judged.
const LINE_CUTOFF: u64 = 28;
/// exp(2^60) - exp(2^60), Inf - Inf = NaN in the program, where the exact values' path returns
/// the constant 0.0: whatever value that cutoff stands for, NaN is no rounding of it.
const LINE_NAN_BESIDE_CUTOFF: u64 = 34;
const X: f64 = 1152921504606846976.0; // 2^60

fn build() -> Built {
    compile_with_every_build("path", &[("path.c", PATH)], &["-O2"])
}

#[test]
fn the_mpfr_build_reports_the_paths_exact_value_after_a_lost_branch() {
    let built = build();
    for bits in ["128", "512"] {
        let env = [("NUMFUZZ_SHADOW_PRECISION", bits)];
        let (value, unreliable) = primary_shadow(&built.path("path.mpfr"), &testkit::case_input(1, X), &env);
        assert_eq!(
            (value.parse::<f64>().ok(), unreliable),
            (Some(2.0), None),
            "{bits} bits"
        );
        let (value, unreliable) = primary_shadow(&built.path("path.mpfr"), &testkit::case_input(2, X), &env);
        assert_eq!(
            value.parse::<f64>().ok(),
            Some(f64::INFINITY),
            "beyond binary64: {value}"
        );
        let why = unreliable.unwrap_or_else(|| panic!("exp(2^60) = {value} judged at {bits} bits"));
        assert!(why.contains("went the other way in the shadow at path.c:14"), "{why}");
    }
    // The x87 build calls both unreliable at the branch.
    for case in [1, 2] {
        let (_, unreliable) = primary_shadow(&built.path("path.shadow"), &testkit::case_input(case, X), &[]);
        assert!(
            unreliable.as_deref().is_some_and(|w| w.contains("went the other way")),
            "case {case}: {unreliable:?}"
        );
    }
}

/// Each root's class, reference and why not judged, by line.
fn triage(built: &Built, name: &str) -> BTreeMap<u64, (String, Value, Value)> {
    let inputs: Vec<(String, Vec<u8>)> = [1, 2, 3, 4, 5]
        .iter()
        .map(|case| (format!("id:{case:06},case:{case}"), testkit::case_input(*case, X)))
        .collect();
    let (roots, _) = triage_roots(built, name, &inputs);
    (roots.into_iter())
        .map(|(line, f)| {
            let class = f["class"].as_str().unwrap().to_string();
            (line, (class, f["reference"].clone(), f["not_judged"].clone()))
        })
        .collect()
}

#[test]
fn after_a_lost_branch_a_number_on_the_programs_path_judges_and_else_the_steered_run_does() {
    let built = build();
    let with = triage(&built, "out");
    let (class, reference, _) = &with[&LINE_RATIO];
    assert_eq!(class, "bug", "{with:#?}");
    assert_eq!(
        (&reference["source"], &reference["verdict"]),
        (&"mpfr".into(), &"wrong".into()),
        "{reference:#}"
    );
    for (line, exact) in [(LINE_GROWTH, 1.0), (LINE_COUNT, 10.0)] {
        let (class, reference, why) = &with[&line];
        assert_eq!(class, "bug", "line {line}: {why:#}\n{with:#?}");
        assert_eq!(
            (&reference["source"], &reference["verdict"]),
            (&"mpfr".into(), &"wrong".into()),
            "line {line}: {reference:#}"
        );
        let value = reference["value"].as_str().and_then(|v| v.parse::<f64>().ok());
        assert_eq!(value, Some(exact), "line {line}: {reference:#}");
    }

    let (class, _, why) = &with[&LINE_CUTOFF];
    assert_eq!(class, "not-judged", "{with:#?}");
    assert!(
        why.to_string()
            .contains("steered run's exact value is no nonzero number"),
        "{why:#}"
    );
    let (class, reference, _) = &with[&LINE_NAN_BESIDE_CUTOFF];
    assert_eq!(class, "bug", "{with:#?}");
    assert_eq!(
        (&reference["source"], &reference["verdict"], &reference["value"]),
        (&"mpfr".into(), &"wrong".into(), &"0.00000000000000000000e+00".into()),
        "{reference:#}"
    );

    // Without the MPFR build all stay not judged: the x87 shadow refuses at the branch.
    std::fs::remove_file(built.path("path.mpfr")).unwrap();
    let without = triage(&built, "out-without");
    for line in [LINE_RATIO, LINE_GROWTH, LINE_COUNT, LINE_CUTOFF] {
        assert_eq!(without[&line].0, "not-judged", "line {line}: {without:#?}");
    }
}

#[test]
fn a_steered_mpfr_run_follows_the_exact_values_through_branches_and_conversions() {
    let built = build();
    let steered = [("NUMFUZZ_SHADOW_STEER", "1")];
    for (case, exact) in [(2, 1.0), (3, 10.0)] {
        let (value, unreliable) = primary_shadow(&built.path("path.mpfr"), &testkit::case_input(case, X), &steered);
        assert_eq!(
            (value.parse::<f64>().ok(), unreliable),
            (Some(exact), None),
            "case {case}"
        );
    }
}
