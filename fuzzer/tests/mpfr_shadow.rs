//! The MPFR shadow build as the ladder's second rung: C functions whose true result needs more
//! than x87's 15-bit exponent or 64-bit significand (a log of a value below x87's range, a log
//! of a difference that x87 rounds to zero, inf - inf of two x87 overflows whose true
//! difference is finite), and ones whose Inf is the answer (a true overflow, a pole, the log
//! of an exact zero). Each is built with numfuzz-cc as the target, a taint build, an x87 shadow
//! build and an MPFR one (`NUMFUZZ_CC_SHADOW=mpfr`); what the MPFR build reports, and the bug
//! list triage makes with and without it.

use serde_json::Value;
use std::collections::BTreeMap;
use testkit::{both, compile_with_every_build, numfuzz, primary_shadow, triage_roots, Built};

const CASES: &str = r#"#include <numfuzz.h>
#include <math.h>
NUMFUZZ_SIGNATURE("i32,f64");
NUMFUZZ_FUNCTION("wide");
__attribute__((noinline)) static double log_of_tiny(double x) { return log(exp(-x)); }
__attribute__((noinline)) static double log_of_difference(double x) { return log((1.0 + x) - 1.0); }
__attribute__((noinline)) static double cancelled_overflows(double x) { return (exp(x) - exp(x - 0.1)) / exp(x); }
__attribute__((noinline)) static double true_overflow(double x) { return exp(x) * exp(x); }
__attribute__((noinline)) static double pole(double x) { return 1.0 / (x - 1.0); }
__attribute__((noinline)) static double log_of_zero(double x) { return log(x - 1.0); }
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int c = nf_i32(data, size, 0);
  double x = nf_f64(data, size, 1), r = 0;
  switch (c) {
  case 1: r = log_of_tiny(x); break;
  case 2: r = log_of_difference(x); break;
  case 3: r = cancelled_overflows(x); break;
  case 4: r = true_overflow(x); break;
  case 5: r = pole(x); break;
  case 6: r = log_of_zero(x); break;
  }
  NUMFUZZ_RESULT(r);
  return 0;
}
"#;

const LINE_LOG_OF_TINY: u64 = 5;
const LINE_LOG_OF_DIFFERENCE: u64 = 6;
const LINE_CANCELLED_OVERFLOWS: u64 = 7;
const LINE_TRUE_OVERFLOW: u64 = 8;
const LINE_POLE: u64 = 9;
const LINE_LOG_OF_ZERO: u64 = 10;

/// x = 1e5: e^-x is 1e-43430, below x87's 1e-4951. x = 1e-30: 1 + x is 1 at 64 bits.
/// x = 12000: e^x overflows x87 (beyond 1.2e4932), e^x - e^(x-0.1) over e^x is 0.0952.
const INPUTS: [(i32, f64); 6] = [(1, 1e5), (2, 1e-30), (3, 12000.0), (4, 400.0), (5, 1.0), (6, 1.0)];

fn build() -> Built {
    compile_with_every_build("wide", &[("wide.c", CASES)], &["-O2"])
}

/// The MPFR build's shadow of the primary result, at `bits` of precision.
fn mpfr_shadow(built: &Built, bytes: &[u8], bits: &str) -> (String, Option<String>) {
    primary_shadow(&built.path("wide.mpfr"), bytes, &[("NUMFUZZ_SHADOW_PRECISION", bits)])
}

#[test]
fn the_mpfr_build_computes_beyond_x87s_range_and_precision() {
    let built = build();
    // (1 + 1e-30 at 128 bits keeps 8 of the 1e-30's digits: its log is off in the 11th.)
    let near = |case: i32, x: f64, want: f64, tolerance: f64| {
        for bits in ["128", "512"] {
            let (value, unreliable) = mpfr_shadow(&built, &testkit::case_input(case, x), bits);
            assert_eq!(unreliable, None, "case {case} at {bits} bits");
            let got: f64 = value.parse().unwrap_or_else(|_| panic!("`{value}` is not a decimal"));
            let error = ((got - want) / want).abs();
            assert!(error < tolerance, "case {case} at {bits} bits: {value}, want {want}");
        }
    };
    near(1, 1e5, -1e5, 1e-15);
    near(2, 1e-30, (1e-30f64).ln(), 1e-9);
    near(3, 12000.0, 1.0 - (-0.1f64).exp(), 1e-15);
    let (value, _) = mpfr_shadow(&built, &testkit::case_input(4, 400.0), "128");
    assert!(value.ends_with("e+347"), "e^800: {value}");
    assert_eq!(mpfr_shadow(&built, &testkit::case_input(5, 1.0), "128").0, "inf");
    assert_eq!(mpfr_shadow(&built, &testkit::case_input(6, 1.0), "128").0, "-inf");
}

/// Triage over one saved input per case: each root's class and reference by line, and the
/// JSON's summary.
fn triage(built: &Built, name: &str) -> (BTreeMap<u64, (String, Value)>, Value) {
    let inputs: Vec<(String, Vec<u8>)> = (INPUTS.iter().enumerate())
        .map(|(k, (case, x))| (format!("id:{k:06},case:{case}"), testkit::case_input(*case, *x)))
        .collect();
    let (roots, doc) = triage_roots(built, name, &inputs);
    let by_line = (roots.into_iter())
        .map(|(line, f)| (line, (f["class"].as_str().unwrap().to_string(), f["reference"].clone())))
        .collect();
    (by_line, doc["summary"].clone())
}

#[test]
fn where_x87_cannot_tell_the_mpfr_build_judges() {
    let built = build();
    let (with, summary) = triage(&built, "out");
    assert_eq!(
        (&summary["bugs"], &summary["bugs_by"]["mpfr"], &summary["not_judged"]),
        (&3.into(), &3.into(), &0.into()),
        "{summary:#}"
    );
    for line in [LINE_LOG_OF_TINY, LINE_LOG_OF_DIFFERENCE, LINE_CANCELLED_OVERFLOWS] {
        let (class, reference) = &with[&line];
        assert_eq!(class, "bug", "line {line}: {with:#?}");
        assert_eq!(
            (&reference["source"], &reference["verdict"]),
            (&"mpfr".into(), &"wrong".into()),
            "line {line}: {reference:#}"
        );
    }
    // True range errors stay what they are: MPFR says so at both precisions.
    for line in [LINE_TRUE_OVERFLOW, LINE_POLE, LINE_LOG_OF_ZERO] {
        assert_eq!(with[&line].0, "range", "line {line}: {with:#?}");
    }
    // The report's head names both rungs of the ladder.
    let text = both(&numfuzz(&["triage", built.path("out").to_str().unwrap()]));
    assert!(
        text.contains("then the MPFR build ") && text.contains("wide.mpfr where it cannot tell"),
        "{text}"
    );

    // Without the MPFR build: the log of a difference equal at 64 bits is a true -inf to x87 (a
    // real bug hidden), the two beyond x87's range are escapes no reference judged, which are
    // said as such and not counted as bugs.
    std::fs::remove_file(built.path("wide.mpfr")).unwrap();
    let (without, summary) = triage(&built, "out-without");
    assert_eq!(
        (&summary["bugs"], &summary["not_judged"]),
        (&0.into(), &2.into()),
        "{summary:#}"
    );
    assert_eq!(without[&LINE_LOG_OF_DIFFERENCE].0, "range", "{without:#?}");
    for line in [LINE_LOG_OF_TINY, LINE_CANCELLED_OVERFLOWS] {
        assert_eq!(
            (without[&line].0.as_str(), &without[&line].1),
            ("not-judged", &Value::Null),
            "line {line}: {without:#?}"
        );
    }
    // The terminal report says it in its headline, counts it in the line of the rest, and lists
    // each after the bugs with why.
    let o = numfuzz(&["triage", built.path("out-without").to_str().unwrap()]);
    let text = both(&o);
    assert!(text.contains("0 bugs and 2 escapes not judged in"), "{text}");
    assert!(text.contains("Not judged (2)"), "{text}");
    assert!(text.contains("2 not-judged"), "{text}");
    assert!(
        text.contains("why") && text.contains("x87 shadow: a shadow went beyond the range of its own format"),
        "{text}"
    );
    let md = both(&numfuzz(&[
        "triage",
        built.path("out-without").to_str().unwrap(),
        "--format",
        "md",
    ]));
    assert!(
        md.contains("### Not judged (2)") && md.contains("Why not judged"),
        "{md}"
    );
    let sarif = numfuzz(&[
        "triage",
        built.path("out-without").to_str().unwrap(),
        "--format",
        "sarif",
    ]);
    let sarif: Value = serde_json::from_slice(&sarif.stdout).unwrap();
    let run = &sarif["runs"][0];
    assert_eq!(
        (&run["properties"]["notJudged"], &run["properties"]["bugs"]),
        (&2.into(), &0.into())
    );
    let warned = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["level"] == "warning"
                && r["message"]["text"]
                    .as_str()
                    .unwrap()
                    .contains("not judged: x87 shadow")
        })
        .count();
    assert_eq!(warned, 2, "{run:#}");
}
