//! A function declared defined inside its declared domains (`NUMFUZZ_DEFINED_IN_DOMAIN()`, what
//! `numfuzz harness` writes for `defined_in_domain = true`): a CDF that takes the square root of
//! an x below its support returns NaN where the true answer is 0, as GSL's `fdist_P(x < 0)` does.
//! The shadows compute the same NaN (`undefined`, no bug); the declaration makes it `wrong`, a
//! bug judged by "domain", inside the domains only. Without an oracle.

use testkit::{both, compile_with_every_build, numfuzz, triage_roots, Built};

const CDF: &str = r#"#include <numfuzz.h>
#include <math.h>
NUMFUZZ_SIGNATURE("f64,f64(0,inf)");
NUMFUZZ_FUNCTION("toy_cdf");
#ifdef DEFINED
NUMFUZZ_DEFINED_IN_DOMAIN();
#endif
__attribute__((noinline)) static double toy_cdf(double x, double k) { return 1.0 - exp(-k * sqrt(x)); }
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  NUMFUZZ_RESULT(toy_cdf(nf_f64(data, size, 0), nf_f64(data, size, 1)));
  return 0;
}
"#;

/// sqrt(-4) is NaN: Invalid at the CDF's line.
const LINE_SQRT: u64 = 8;

fn triage(built: &Built, out: &str, k: f64) -> (String, serde_json::Value, serde_json::Value) {
    let inputs = vec![("id:000000,x:-4".to_string(), testkit::f64s(&[-4.0, k]))];
    let (_, doc) = triage_roots(built, out, &inputs);
    let findings = doc["findings"].as_array().expect("findings");
    let root = (findings.iter())
        .find(|f| f["location"]["line"] == LINE_SQRT)
        .unwrap_or_else(|| panic!("no finding at line {LINE_SQRT}: {doc:#}"));
    (
        root["class"].as_str().unwrap_or_default().to_string(),
        root["reference"].clone(),
        doc["summary"].clone(),
    )
}

#[test]
fn a_nan_inside_the_domains_of_a_function_declared_defined_there_is_a_bug() {
    let defined = compile_with_every_build("defined", &[("cdf.c", CDF)], &["-O1", "-DDEFINED"]);
    let (class, reference, summary) = triage(&defined, "inside", 2.0);
    assert_eq!(class, "bug", "{reference:#}");
    assert_eq!(
        (&reference["source"], &reference["verdict"]),
        (&"domain".into(), &"wrong".into()),
        "{reference:#}"
    );
    assert_eq!(summary["bugs_by"]["domain"], 1, "{summary:#}");
    let text = both(&numfuzz(&["triage", defined.path("inside").to_str().unwrap()]));
    assert!(text.contains("NUMFUZZ_DEFINED_IN_DOMAIN"), "{text}");

    // Outside the declared domains (k = -1) the declaration says nothing.
    let (class, reference, _) = triage(&defined, "outside", -1.0);
    assert_eq!(class, "out-of-domain", "{reference:#}");
    assert_ne!(reference["source"], "domain", "{reference:#}");

    // Without the declaration the same NaN is the code's exact answer: undefined, no bug.
    let plain = compile_with_every_build("plain", &[("cdf.c", CDF)], &["-O1"]);
    let (class, reference, _) = triage(&plain, "inside", 2.0);
    assert_eq!(class, "undefined", "{reference:#}");
}

/// The toy's true P below its support: 0, whatever k.
const ORACLE: &str = r#"import json, sys
for line in sys.stdin:
    print(json.dumps({"results": ["0"]}), flush=True)
"#;

#[test]
fn beside_an_oracle_the_report_says_the_declaration_judged_the_nan() {
    let defined = compile_with_every_build("defined", &[("cdf.c", CDF)], &["-O1", "-DDEFINED"]);
    triage(&defined, "inside", 2.0);
    let oracle = defined.path("oracle.py");
    std::fs::write(&oracle, ORACLE).unwrap();
    let cmd = format!("python3 {}", oracle.display());
    let out = defined.path("inside");
    let o = numfuzz(&["triage", out.to_str().unwrap(), "--format", "json", "--oracle", &cmd]);
    assert!(o.status.success(), "{}", both(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let a = &doc["shadow_agreement"];
    // The shadows follow the code to NaN (undefined); the declaration judges it, as mpmath does.
    assert_eq!(a["judged_by"], serde_json::json!({"domain": 1}), "{a:#}");
    assert_eq!((&a["judged_by_both"], &a["agreed"]), (&1.into(), &1.into()), "{a:#}");
}
