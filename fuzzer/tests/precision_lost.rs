//! Where precision was lost: a range reduction that keeps no digit of a large argument raises
//! nothing, and the cosine and sine series that overflow on what it returned raise at two sites.
//! With the MPFR build beside the target, the bug list has one entry, rooted at the reduction;
//! without it, two entries at the two overflow sites (escapes the x87 shadow cannot judge: its 64
//! bits keep no digit of the reduction either).

use serde_json::Value;
use testkit::{both, compile, compile_with_every_build, compile_with_taint_and_shadow, numfuzz, Built, HandCampaign};

const WAVE: &str = r#"#include <numfuzz.h>
#include <math.h>
NUMFUZZ_SIGNATURE("f64");
NUMFUZZ_FUNCTION("wave");
static const double half_pi = 1.5707963267948966;
__attribute__((noinline)) static double reduce(double x) {
  double k = floor(x / half_pi);
  return x - k * half_pi;
}
__attribute__((noinline)) static double cos_series(double y) {
  double sum = 1, term = 1;
  for (int k = 1; k < 20; k++) {
    term *= -(y * y) / ((2 * k - 1) * (2 * k));
    sum += term;
  }
  return sum;
}
__attribute__((noinline)) static double sin_series(double y) {
  double sum = y, term = y;
  for (int k = 1; k < 20; k++) {
    term *= -(y * y) / ((2 * k) * (2 * k + 1));
    sum += term;
  }
  return sum;
}
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0);
  NUMFUZZ_RESULT(x >= 0 ? cos_series(reduce(x)) : sin_series(reduce(-x)));
  return 0;
}
"#;

const LINE_REDUCTION: u64 = 8;
const LINE_COS_OVERFLOW: u64 = 13;
const LINE_SIN_OVERFLOW: u64 = 21;

/// 3e26 and -1.234e26: `k * half_pi` rounds away tens of units, so the reduced argument is
/// -3.4e10 and 1.7e10 where the true one is below 1.6, and the series overflow at k = 18.
const INPUTS: [f64; 2] = [3e26, -1.234e26];

fn build() -> Built {
    compile_with_every_build("wave", &[("wave.c", WAVE)], &["-O2"])
}

fn triage(built: &Built, name: &str) -> Value {
    let root = built.path(name);
    let c = HandCampaign::new(&root, &built.exe, &["default"]);
    for (k, x) in INPUTS.iter().enumerate() {
        c.crash("default", &format!("id:{k:06},x:{x}"), &x.to_le_bytes());
    }
    let o = numfuzz(&["triage", root.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "{}", both(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn of_class<'a>(doc: &'a Value, class: &str) -> Vec<&'a Value> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["class"] == class)
        .collect()
}

#[test]
fn the_mpfr_replay_says_where_the_digits_went_before_the_series_overflowed() {
    let built = build();
    let input = built.path("cos-input");
    std::fs::write(&input, INPUTS[0].to_le_bytes()).unwrap();
    let o = std::process::Command::new(built.path("wave.mpfr"))
        .arg(&input)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "wave.c:13:10 (fmul): non-finite, zero or subnormal after precision lost at wave.c:8:12 (fsub): 0 of 53 bits correct [numfuzz]"
        ),
        "{err}"
    );
}

#[test]
fn two_overflow_sites_on_one_lost_reduction_are_one_entry_rooted_at_the_reduction() {
    let built = build();
    let doc = triage(&built, "out");
    let bugs_with = of_class(&doc, "bug");
    assert_eq!(bugs_with.len(), 1, "{:#}", doc["findings"]);
    let bug = bugs_with[0];
    assert_eq!(bug["root_by"], "precision", "{bug:#}");
    let lost = &bug["precision_lost"];
    assert_eq!(
        (&lost["line"], &lost["op"], &lost["correct_bits"], &lost["bits"]),
        (&LINE_REDUCTION.into(), &"fsub".into(), &0.into(), &53.into()),
        "{lost:#}"
    );
    assert_eq!(
        lost["text"],
        "precision lost at wave.c:8:12 (fsub): 0 of 53 bits correct"
    );
    // The other series' overflow hangs under it.
    let under: Vec<u64> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "Overflow" && f["root"] == bug["id"] && f["id"] != bug["id"])
        .map(|f| f["location"]["line"].as_u64().unwrap())
        .collect();
    let lines = [bug["location"]["line"].as_u64().unwrap(), under[0]];
    assert!(
        lines.contains(&LINE_COS_OVERFLOW) && lines.contains(&LINE_SIN_OVERFLOW),
        "{lines:?}"
    );
    assert_eq!(doc["summary"]["bugs"], 1, "{:#}", doc["summary"]);

    // Without the MPFR build nothing says where the digits went: two entries at the two sites.
    std::fs::remove_file(built.path("wave.mpfr")).unwrap();
    let doc = triage(&built, "out-without");
    let entries = of_class(&doc, "not-judged");
    let mut lines: Vec<u64> = entries
        .iter()
        .map(|f| f["location"]["line"].as_u64().unwrap())
        .collect();
    lines.sort();
    assert_eq!(lines, [LINE_COS_OVERFLOW, LINE_SIN_OVERFLOW], "{:#}", doc["findings"]);
    assert!(entries.iter().all(|f| f["precision_lost"].is_null()));
}

/// One formula, overflowing at two of its products for two inputs: `a * b` (1e200 * 1e200)
/// and `(a * b) * c` (1e300 * 1e100); both quotients are 1e200 (wrong results), and both are
/// fixed on that line.
const FORMULA: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64,f64,f64,f64");
NUMFUZZ_FUNCTION("ratio");
__attribute__((noinline)) static double ratio(double a, double b, double c, double d) {
  return a * b * c / d;
}
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  NUMFUZZ_RESULT(ratio(nf_f64(data, size, 0), nf_f64(data, size, 1), nf_f64(data, size, 2), nf_f64(data, size, 3)));
  return 0;
}
"#;

#[test]
fn sites_of_one_formula_with_one_verdict_are_one_entry() {
    let built = compile_with_taint_and_shadow("ratio", &[("ratio.c", FORMULA)], &["-O2"]);
    let root = built.path("out");
    let c = HandCampaign::new(&root, &built.exe, &["default"]);
    let inputs: [[f64; 4]; 2] = [[1e200, 1e200, 1.0, 1e200], [1e150, 1e150, 1e100, 1e200]];
    for (k, fields) in inputs.iter().enumerate() {
        let bytes: Vec<u8> = fields.iter().flat_map(|v| v.to_le_bytes()).collect();
        c.crash("default", &format!("id:{k:06}"), &bytes);
    }
    let o = numfuzz(&["triage", root.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "{}", both(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    // Two overflow sites, each the root of its input's infinity...
    let sites: std::collections::BTreeSet<u64> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "Overflow" && f["origin"] == true)
        .map(|f| f["location"]["column"].as_u64().unwrap())
        .collect();
    assert!(sites.len() >= 2, "{:#}", doc["findings"]);
    // ...and one entry.
    let bugs = of_class(&doc, "bug");
    assert_eq!(bugs.len(), 1, "{:#}", doc["findings"]);
    assert_eq!(bugs[0]["location"]["line"], 5);
    assert_eq!(doc["summary"]["bugs"], 1, "{:#}", doc["summary"]);
}

/// Both operands of a quotient lost their digits; the quotient went non-finite through its
/// divisor, whose origin is named.
const QUOTIENT: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64");
__attribute__((noinline)) static double quotient(double x) {
  double num = (x + 1e30) - x;
  double den = (x + 1e20) - x;
  return num / den;
}
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  NUMFUZZ_RESULT(quotient(nf_f64(data, size, 0)));
  return 0;
}
"#;

#[test]
fn a_quotient_that_lost_both_operands_names_its_divisors_origin() {
    let mpfr = compile(
        "quotient",
        &[("quotient.c", QUOTIENT)],
        &["-O2"],
        &[("NUMFUZZ_CC_SHADOW", "mpfr")],
    );
    let input = mpfr.path("x");
    std::fs::write(&input, 1e40f64.to_le_bytes()).unwrap();
    let o = std::process::Command::new(&mpfr.exe).arg(&input).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    // 0 / 0 where the shadows are 1e30 / 1e20.
    assert!(
        err.contains(
            "quotient.c:6:14 (fdiv): non-finite, zero or subnormal after precision lost at quotient.c:5:27 (fsub)"
        ),
        "{err}"
    );
}
