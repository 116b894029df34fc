//! Declared input domains end to end: a harness whose probability field is `f64[0,1]`,
//! built with numfuzz-cc and as a taint build, triaged on inputs inside and outside the
//! domain (the outside-only finding is `out-of-domain`, never a bug), and a target whose
//! signature range is bad, refused by `numfuzz run` and `numfuzz triage` in one line.

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use testkit::{both, compile_with_taint, numfuzz, Built, HandCampaign};

/// The weight of a probability's odds. Inside [0,1] only p = 1 goes wrong (1/0: the real
/// bug); outside it the odds are negative and sqrt turns them into NaN, which is what a
/// probability outside [0,1] deserves.
const ODDS: &str = r#"#include <numfuzz.h>
#include <math.h>
NUMFUZZ_SIGNATURE("f64[0,1]");
NUMFUZZ_FUNCTION("odds_weight");
static double odds_weight(double p) {
  double odds = p / (1.0 - p);
  return sqrt(odds);
}
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  NUMFUZZ_RESULT(odds_weight(nf_f64(data, size, 0)));
  return 0;
}
"#;

const LINE_ODDS: u64 = 6;
const LINE_SQRT: u64 = 7;

fn build() -> Built {
    compile_with_taint("odds", &[("odds.c", ODDS)], &["-O1"])
}

/// An output directory holding one crash file per value of p.
fn campaign(built: &Built, ps: &[f64]) -> PathBuf {
    let root = built.path("out");
    let c = HandCampaign::new(&root, &built.exe, &["default"]);
    for (k, p) in ps.iter().enumerate() {
        c.crash(
            "default",
            &format!("id:{k:06},time:{}", 100 * (k + 1)),
            &p.to_le_bytes(),
        );
    }
    root
}

fn triage(out: &Path, format: &str) -> String {
    let o = numfuzz(&["triage", out.to_str().unwrap(), "--format", format]);
    assert!(o.status.success(), "{}", both(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn finding<'a>(doc: &'a Value, kind: &str, line: u64) -> &'a Value {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == kind && f["location"]["line"] == line)
        .unwrap_or_else(|| panic!("no {kind} at line {line}: {doc:#}"))
}

#[test]
fn a_finding_only_outside_the_domain_is_out_of_domain_and_the_bug_inside_is_listed() {
    let built = build();
    let out = campaign(&built, &[2.0, 1.0, -0.5, 1e308]);
    let doc: Value = serde_json::from_str(&triage(&out, "json")).unwrap();
    assert_eq!(doc["signature"], "f64[0.0,1.0]");
    let bug = finding(&doc, "DivByZero", LINE_ODDS);
    assert_eq!(bug["class"], "bug", "{bug:#}");
    assert_eq!(bug["input"]["fields"][0]["value"], "1.0");
    let outside = finding(&doc, "Invalid", LINE_SQRT);
    assert_eq!(outside["class"], "out-of-domain", "{outside:#}");
    assert_eq!(outside["input_count"], 3);
    assert_eq!(doc["bugs"].as_array().unwrap().len(), 1, "{:#}", doc["bugs"]);
    assert_eq!(doc["summary"]["classes"]["out_of_domain"], 1);
    assert_eq!(doc["summary"]["bugs"], 1);

    let table = triage(&out, "table");
    assert!(
        table.contains("Bugs (1)") && table.contains("DivByZero at odds.c:6"),
        "{table}"
    );
    let others = table.lines().find(|l| l.starts_with("Other findings:")).unwrap();
    assert!(others.contains("1 out-of-domain"), "{others}");
    let md = triage(&out, "md");
    assert!(md.contains("1 out-of-domain"), "{md}");
    let sarif: Value = serde_json::from_str(&triage(&out, "sarif")).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let level = |rule: &str| {
        results
            .iter()
            .find(|r| r["ruleId"] == rule)
            .unwrap_or_else(|| panic!("{rule}: {sarif:#}"))["level"]
            .clone()
    };
    assert_eq!((level("DivByZero"), level("Invalid")), ("error".into(), "note".into()));
}

#[test]
fn an_outside_input_does_not_make_an_inside_finding_a_bug() {
    // Only an outside input: its NaN escapes unreported, and still no bug.
    let built = build();
    let out = campaign(&built, &[-0.5]);
    let doc: Value = serde_json::from_str(&triage(&out, "json")).unwrap();
    assert_eq!(finding(&doc, "Invalid", LINE_SQRT)["class"], "out-of-domain");
    assert_eq!(doc["bugs"].as_array().unwrap().len(), 0, "{:#}", doc["bugs"]);
    assert_eq!(doc["summary"]["bugs"], 0);
}

/// A copy of the built target whose signature section reads `bad` instead of `f64[0,1]`
/// (same length), as a numfuzz-cc of before the build-time check could have left it.
fn with_signature(built: &Built, bad: &str) -> PathBuf {
    use object::{Object, ObjectSection};
    let mut bytes = std::fs::read(&built.exe).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let section = file.section_by_name(numfuzz_abi::SIGNATURE_SECTION).unwrap();
    let (at, size) = section.file_range().unwrap();
    let at = at as usize;
    assert_eq!(&bytes[at..at + size as usize], b"f64[0,1]\0");
    bytes[at..at + bad.len()].copy_from_slice(bad.as_bytes());
    let path = built.path("patched");
    std::fs::write(&path, bytes).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn run_and_triage_refuse_a_target_with_a_bad_range_in_one_line() {
    let built = build();
    let patched = with_signature(&built, "f64[1,0]");
    let out = campaign(&built, &[1.0]);
    let run_out = built.path("run-out");
    for args in [
        vec![
            "run",
            "-o",
            run_out.to_str().unwrap(),
            "-V",
            "5",
            "--",
            patched.to_str().unwrap(),
        ],
        vec!["triage", out.to_str().unwrap(), "--target", patched.to_str().unwrap()],
    ] {
        let o = numfuzz(&args);
        assert!(!o.status.success(), "{args:?}: {}", both(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
        for says in [
            "invalid NUMFUZZ_SIGNATURE",
            "above the upper bound",
            "rebuild the target",
        ] {
            assert!(err.contains(says), "{args:?}: expected `{says}` in: {err}");
        }
    }
}
