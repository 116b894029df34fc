//! Values beyond MPFR's own exponent range (2^±(2^62)), which GSL's distributions reach with
//! extreme parameters (e^(-x·1e15), a power of 1e308): MPFR holds them as a zero or an infinity
//! tagged as clamped. Where such a value is absorbed (1 + e^(-1.2e19), 1 + 1/e^(e^12000)) the
//! result is still judged. Where an operation brings it back within reach (the log of
//! e^(-1.2e19) is -1.2e19, a double), or it is the result itself (e^(e^12000): every precision
//! clamps alike, so two of them cannot tell it from rounding noise), nothing judges it, and
//! triage says why.

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
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int c = nf_i32(data, size, 0);
  double x = nf_f64(data, size, 1), r = 0;
  switch (c) {
  case 1: r = absorbed(x); break;
  case 2: r = log_of_vanished(x); break;
  case 3: r = grows(x); break;
  case 4: r = absorbed_reciprocal(x); break;
  }
  NUMFUZZ_RESULT(r);
  return 0;
}
"#;

/// 1 + e^(-1.2e19) is 1; (e^x - e^(x-0.1)) / e^x is 0.0952, NaN in binary64 and in x87.
const LINE_ABSORBED: u64 = 5;
/// log(e^(-1.2e19)) is -1.2e19; MPFR holds e^(-1.2e19) as a clamped zero.
const LINE_LOG_OF_VANISHED: u64 = 6;
/// e^(e^12000) is beyond every format, MPFR's too.
const LINE_GROWS: u64 = 7;
/// 1 / e^(e^12000) is a clamped zero, which 1 + absorbs.
const LINE_ABSORBED_RECIPROCAL: u64 = 8;
const X: f64 = 12000.0;

fn input(case: i32) -> Vec<u8> {
    let mut b = case.to_le_bytes().to_vec();
    b.extend_from_slice(&X.to_le_bytes());
    b
}

fn build() -> Built {
    compile_with_every_build("beyond", &[("beyond.c", CASES)], &["-O2"])
}

#[test]
fn the_mpfr_build_keeps_values_beyond_its_exponents_where_they_decide_nothing() {
    let built = build();
    let shadow = |case: i32| primary_shadow(&built.path("beyond.mpfr"), &input(case), &[]);
    let (value, unreliable) = shadow(1);
    assert_eq!(unreliable, None, "absorbed: {value}");
    let got: f64 = value.parse().unwrap();
    assert!((got - (1.0 - (-0.1f64).exp())).abs() < 1e-15, "absorbed: {value}");
    let (value, unreliable) = shadow(2);
    assert!(
        unreliable
            .as_deref()
            .is_some_and(|why| why.contains("beyond MPFR's own exponent range")),
        "log of a clamped zero: {value} {unreliable:?}"
    );
    // Beyond 2^(2^62), which is 1e+1388255822130839282, at every precision alike.
    let (value, unreliable) = shadow(3);
    assert_eq!(value, "1e+1388255822130839282");
    assert!(
        unreliable
            .as_deref()
            .is_some_and(|why| why.contains("cannot tell a true value from rounding noise")),
        "{unreliable:?}"
    );
}

/// Each root's class and reference by line.
fn triage(built: &Built) -> BTreeMap<u64, (String, Value)> {
    let inputs: Vec<(String, Vec<u8>)> = (1..=4)
        .map(|case| (format!("id:{case:06},case:{case}"), input(case)))
        .collect();
    let (roots, _) = triage_roots(built, "out", &inputs);
    (roots.into_iter())
        .map(|(line, f)| (line, (f["class"].as_str().unwrap().to_string(), f.clone())))
        .collect()
}

#[test]
fn values_beyond_mpfrs_exponents_judge_where_they_are_absorbed() {
    let built = build();
    let roots = triage(&built);
    for line in [LINE_ABSORBED, LINE_ABSORBED_RECIPROCAL] {
        let (class, finding) = &roots[&line];
        assert_eq!(class, "bug", "line {line}: {roots:#?}");
        let reference = &finding["reference"];
        assert_eq!(
            (&reference["source"], &reference["verdict"]),
            (&"mpfr".into(), &"wrong".into()),
            "line {line}: {reference:#}"
        );
    }
    for line in [LINE_LOG_OF_VANISHED, LINE_GROWS] {
        let (class, finding) = &roots[&line];
        assert_eq!(class, "not-judged", "line {line}: {roots:#?}");
        let why = finding["not_judged"].to_string();
        assert!(why.contains("beyond MPFR's own exponent range"), "line {line}: {why}");
    }
}
