//! Values beyond MPFR's own exponent range (2^±(2^62)), which GSL's distributions reach with
//! extreme parameters (e^(-x·1e15), a power of 1e308): MPFR holds them as a zero or an infinity
//! tagged as clamped, with the log2 of their magnitude beside them. Where such a value is absorbed
//! (1 + e^(-1.2e19), 1 + 1/e^(e^12000)) the result is still judged, and so it is where its log
//! brings it back within reach (the log of e^(-1.2e19) is -1.2e19, a double; of e^(-x)·e^(-x),
//! -2x). Where it is the result itself (e^(e^12000)), its magnitude is printed, and the two
//! precisions judge it as they judge a number: the same leading digits of its exponent at both,
//! a true overflow. Where its magnitude is lost (e^(-x) - e^(-x)) or is rounding noise (the cube
//! of e^(-x/3) times e^x at x = 1e300), nothing judges it, and triage says why.

use serde_json::Value;
use std::collections::BTreeMap;
use testkit::{compile_with_every_build, primary_shadow, triage_roots, Built};

const CASES: &str = r#"#include <numfuzz.h>
#include <math.h>
NUMFUZZ_SIGNATURE("i32,f64");
NUMFUZZ_FUNCTION("beyond");
__attribute__((noinline)) static double absorbed(double x) { return (1.0 + exp(-x * 1e15)) * ((exp(x) - exp(x - 0.1)) / exp(x)); }
__attribute__((noinline)) static double log_of_vanished(double x) { return log(exp(-x * 1e15)); }
__attribute__((noinline)) static double grows(double x) { return exp(exp(x)); }
__attribute__((noinline)) static double absorbed_reciprocal(double x) { return (1.0 + 1.0 / exp(exp(x))) * ((exp(x) - exp(x - 0.1)) / exp(x)); }
__attribute__((noinline)) static double times_undefined(double x) { return exp(-x * 1e15) * ((x - x) / (x - x)); }
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int c = nf_i32(data, size, 0);
  double x = nf_f64(data, size, 1), r = 0;
  switch (c) {
  case 1: r = absorbed(x); break;
  case 2: r = log_of_vanished(x); break;
  case 3: r = grows(x); break;
  case 4: r = absorbed_reciprocal(x); break;
  case 5: r = times_undefined(x); break;
  }
  NUMFUZZ_RESULT(r);
  return 0;
}
"#;

/// 1 + e^(-1.2e19) is 1; (e^x - e^(x-0.1)) / e^x is 0.0952, NaN in binary64 and in x87.
const LINE_ABSORBED: u64 = 5;
/// log(e^(-1.2e19)) is -1.2e19; MPFR holds e^(-1.2e19) as a clamped zero of magnitude
/// 2^(-1.2e19·log2 e).
const LINE_LOG_OF_VANISHED: u64 = 6;
/// e^(e^12000) is beyond every format, MPFR's too: a true overflow.
const LINE_GROWS: u64 = 7;
/// 1 / e^(e^12000) is a clamped zero, which 1 + absorbs.
const LINE_ABSORBED_RECIPROCAL: u64 = 8;
/// e^(-1.2e19) times 0/0: NaN whatever the clamped factor is, undefined as 0/0 is.
const LINE_TIMES_UNDEFINED: u64 = 9;
const X: f64 = 12000.0;

fn build() -> Built {
    compile_with_every_build("beyond", &[("beyond.c", CASES)], &["-O2"])
}

#[test]
fn the_mpfr_build_keeps_values_beyond_its_exponents_where_they_decide_nothing() {
    let built = build();
    let shadow = |case: i32| primary_shadow(&built.path("beyond.mpfr"), &testkit::case_input(case, X), &[]);
    let (value, unreliable) = shadow(1);
    assert_eq!(unreliable, None, "absorbed: {value}");
    let got: f64 = value.parse().unwrap();
    assert!((got - (1.0 - (-0.1f64).exp())).abs() < 1e-15, "absorbed: {value}");
    let (value, unreliable) = shadow(2);
    assert_eq!(unreliable, None, "log of a clamped zero: {value}");
    assert!(close(&value, -X * 1e15), "log of a clamped zero: {value}");
    // e^(e^12000) is 10^(1.48445538782066306512e5211): its exponent in full, no digit of its
    // mantissa known at 128 bits.
    let (value, unreliable) = shadow(3);
    assert!(value.starts_with("1e+148445538782066306512"), "{}", &value[..40]);
    assert_eq!(value.len(), "1e+".len() + 5212, "{}", &value[..40]);
    assert_eq!(unreliable, None, "its magnitude is known");
}

/// Each root's class and reference by line.
fn triage(built: &Built) -> BTreeMap<u64, (String, Value)> {
    let inputs: Vec<(String, Vec<u8>)> = (1..=5)
        .map(|case| (format!("id:{case:06},case:{case}"), testkit::case_input(case, X)))
        .collect();
    let (roots, _) = triage_roots(built, "out", &inputs);
    (roots.into_iter())
        .map(|(line, f)| (line, (f["class"].as_str().unwrap().to_string(), f.clone())))
        .collect()
}

#[test]
fn values_beyond_mpfrs_exponents_judge_where_they_are_absorbed_or_logged() {
    let built = build();
    let roots = triage(&built);
    for line in [LINE_ABSORBED, LINE_ABSORBED_RECIPROCAL, LINE_LOG_OF_VANISHED] {
        let (class, finding) = &roots[&line];
        assert_eq!(class, "bug", "line {line}: {roots:#?}");
        let reference = &finding["reference"];
        assert_eq!(
            (&reference["source"], &reference["verdict"]),
            (&"mpfr".into(), &"wrong".into()),
            "line {line}: {reference:#}"
        );
    }
    let reference = roots[&LINE_LOG_OF_VANISHED].1["reference"]["value"].as_str().unwrap();
    assert!(close(reference, -X * 1e15), "{reference}");
    // A NaN times a clamped value is the NaN's: 0/0 is undefined, so is the product.
    let (class, finding) = &roots[&LINE_TIMES_UNDEFINED];
    assert_eq!(class, "undefined", "{roots:#?}");
    assert_eq!(finding["reference"]["source"], "mpfr", "{finding:#}");
    // e^(e^12000) overflows in truth: the same exponent at 128 and 512 bits.
    let (class, finding) = &roots[&LINE_GROWS];
    assert_eq!(class, "range", "{roots:#?}");
    let reference = &finding["reference"];
    assert_eq!(
        (&reference["source"], &reference["verdict"]),
        (&"mpfr".into(), &"unreported-range".into()),
        "{reference:#}"
    );
}

/// Logs of values beyond MPFR's exponents, at x = 1e300 (the double 1.0000000000000000525e300).
const LOGS: &str = r#"#include <numfuzz.h>
#include <math.h>
NUMFUZZ_SIGNATURE("i32,f64");
NUMFUZZ_FUNCTION("logs");
__attribute__((noinline)) static double log_of_vanished(double x) { return log(exp(-x)); }
__attribute__((noinline)) static double log_of_product(double x) { return log(exp(-x) * exp(-x)); }
__attribute__((noinline)) static double log_of_balanced(double x) { return log(exp(-x) * exp(x)); }
__attribute__((noinline)) static double log_of_noise(double x) { double t = exp(-x / 3); return log(t * t * t * exp(x)); }
__attribute__((noinline)) static double log_of_cancelled(double x) { double t = exp(-x); return log(t - exp(-x)); }
__attribute__((noinline)) static double back_in_range(double x) { return pow(exp(-x), 1 / x); }
__attribute__((noinline)) static double log10_of_root(double x) { return log10(sqrt(exp(x))); }
__attribute__((noinline)) static double vanished(double x) { return exp(-x); }
__attribute__((noinline)) static double held_zero_over_vanished(double x) { return (x - x) / exp(-x); }
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int c = nf_i32(data, size, 0);
  double x = nf_f64(data, size, 1), r = 0;
  switch (c) {
  case 1: r = log_of_vanished(x); break;
  case 2: r = log_of_product(x); break;
  case 3: r = log_of_balanced(x); break;
  case 4: r = log_of_noise(x); break;
  case 5: r = log_of_cancelled(x); break;
  case 6: r = back_in_range(x); break;
  case 7: r = log10_of_root(x); break;
  case 8: r = vanished(x); break;
  case 9: r = held_zero_over_vanished(x); break;
  }
  NUMFUZZ_RESULT(r);
  return 0;
}
"#;

/// The x of [`LOGS`].
const HUGE: f64 = 1e300;
/// Each case of [`LOGS`], its line, and the true value (None: no shadow may judge it).
const LOG_CASES: [(i32, u64, Option<f64>); 9] = [
    (1, 5, Some(-HUGE)),
    (2, 6, Some(-2.0 * HUGE)),
    // e^(-x)·e^x is 1: the two magnitudes round alike, and cancel exactly.
    (3, 7, Some(0.0)),
    // 3·(-x/3) + x rounds differently at each precision: -2^486 at 512 bits (its log -1.4e146),
    // 0 at 128.
    (4, 8, None),
    // Two clamped values of one magnitude and opposite signs: what is left is below their rounding.
    (5, 9, None),
    // (e^(-x))^(1/x) is 1/e, a number again.
    (6, 10, Some(0.36787944117144233)),
    // log10(sqrt(e^x)) is x·log10(e)/2.
    (7, 11, Some(2.1714724095162593e299)),
    // A result still clamped: 10^(-4.3e299), which the program's 0 is (not judged: finite).
    (8, 12, None),
    // An exact 0 over a clamped zero (a nonzero) is 0, where MPFR's 0/0 is NaN.
    (9, 13, Some(0.0)),
];

fn log_input(case: i32) -> Vec<u8> {
    let mut b = case.to_le_bytes().to_vec();
    b.extend_from_slice(&HUGE.to_le_bytes());
    b
}

/// Whether a decimal is `want` to 1e-15 relative (0 exactly).
fn close(got: &str, want: f64) -> bool {
    got.parse::<f64>().is_ok_and(|g| {
        if want == 0.0 {
            g == 0.0
        } else {
            (g / want - 1.0).abs() < 1e-15
        }
    })
}

#[test]
fn the_mpfr_build_takes_logs_of_clamped_values_from_their_magnitudes() {
    let built = compile_with_every_build("logs", &[("logs.c", LOGS)], &["-O2"]);
    for bits in ["128", "512"] {
        let shadow = |case: i32| {
            primary_shadow(
                &built.path("logs.mpfr"),
                &log_input(case),
                &[("NUMFUZZ_SHADOW_PRECISION", bits)],
            )
        };
        for (case, _, truth) in LOG_CASES {
            let (value, unreliable) = shadow(case);
            match (case, truth) {
                (_, Some(t)) => {
                    assert_eq!(unreliable, None, "case {case} at {bits} bits: {value}");
                    assert!(close(&value, t), "case {case} at {bits} bits: {value}, not {t:e}");
                }
                (5, None) => assert!(
                    unreliable
                        .as_deref()
                        .is_some_and(|why| why.contains("beyond MPFR's own exponent range")),
                    "case 5 at {bits} bits: {value} {unreliable:?}"
                ),
                // Rounding noise: reliable to the run, told apart by the two precisions (below).
                (4, None) => assert_eq!(unreliable, None, "case 4 at {bits} bits: {value}"),
                _ => {
                    // e^(-x) is 10^(-4.3429448190325185045365657140505698400e299): its exponent
                    // in full (300 digits), known to 38 of them at 128 bits.
                    assert!(value.starts_with("1e-4342944819032518504536565714050569840"), "{value}");
                    assert_eq!(value.len(), "1e-".len() + 300, "{value}");
                    // Its magnitude is known: triage compares it between the two precisions (the
                    // program's 0 is finite, so nothing judges it here).
                    assert_eq!(unreliable, None, "case {case} at {bits} bits");
                }
            }
        }
    }
    let noise = |bits: &str| {
        primary_shadow(
            &built.path("logs.mpfr"),
            &log_input(4),
            &[("NUMFUZZ_SHADOW_PRECISION", bits)],
        )
        .0
    };
    let (wide, narrow) = (noise("512"), noise("128"));
    assert_ne!(wide, narrow, "rounding noise is the same at both precisions");
}

#[test]
fn logs_of_values_beyond_mpfrs_exponents_are_judged_by_their_magnitudes() {
    let built = compile_with_every_build("logs", &[("logs.c", LOGS)], &["-O2"]);
    // Only non-finite results are judged: those of cases 1 to 5, 7 and 9.
    let inputs: Vec<(String, Vec<u8>)> = [1, 2, 3, 4, 5, 7, 9]
        .into_iter()
        .map(|case| (format!("id:{case:06},case:{case}"), log_input(case)))
        .collect();
    let (roots, _) = triage_roots(&built, "out", &inputs);
    for (case, line, truth) in LOG_CASES {
        if [6, 8].contains(&case) {
            continue;
        }
        let finding = &roots[&line];
        let class = finding["class"].as_str().unwrap();
        match truth {
            Some(t) => {
                assert_eq!(class, "bug", "case {case}: {finding:#}");
                let reference = &finding["reference"];
                assert_eq!(
                    (&reference["source"], &reference["verdict"]),
                    (&"mpfr".into(), &"wrong".into()),
                    "case {case}: {reference:#}"
                );
                let value = reference["value"].as_str().unwrap();
                assert!(close(value, t), "case {case}: {value}, not {t:e}");
            }
            None => {
                assert_eq!(class, "not-judged", "case {case}: {finding:#}");
                let why = finding["not_judged"].to_string();
                let expected = if case == 4 {
                    "changes with its own precision"
                } else {
                    "beyond MPFR's own exponent range"
                };
                assert!(why.contains(expected), "case {case}: {why}");
            }
        }
    }
}
