//! The library's own error reports as evidence: a library built with `NUMFUZZ_CC_ERROR_HOOK`
//! naming its error hook reports each call of it, and triage roots a result the function
//! returned as a success after such a report at the dropped report: one entry, at the call
//! that dropped it, with the exceptions of its inputs under it.

use serde_json::Value;
use std::path::{Path, PathBuf};
use testkit::{both, compile, f64s, numfuzz, run, Built, HandCampaign};

/// A status-returning helper that overflows at two sites on two lines (exp, then the product:
/// two formulas, which without the report are two entries), reports it
/// through the library's hook and returns Inf with the status; `scaled_e` passes the status
/// on, `scaled_dropped_e` ignores it and returns success. Line numbers matter below.
const LIBRARY: &str = r#"#include <math.h>
void report_error(const char *reason, const char *file, int line, int code);
void report_error(const char *reason, const char *file, int line, int code) {
  (void)reason; (void)file; (void)line; (void)code;
}
static int scaled_exp_e(double x, double *out) {
  double e = exp(x);
  double r = e * 4.0;
  *out = r;
  if (isinf(r)) {
    report_error("overflow", __FILE__, __LINE__, 16);
    return 16;
  }
  return 0;
}
int scaled_dropped_e(double x, double *res) {
  double t;
  scaled_exp_e(x, &t);
  *res = t / 2.0 + 1.0;
  return 0;
}
int scaled_e(double x, double *res) {
  double t;
  int status = scaled_exp_e(x, &t);
  *res = t / 2.0 + 1.0;
  return status;
}
"#;

/// Line of the hook call in `LIBRARY`, and of the call that drops its status.
const REPORT_LINE: u64 = 11;
const DROP_LINE: u64 = 18;

fn harness(function: &str) -> String {
    format!(
        "#include <numfuzz.h>\nint {function}(double x, double *res);\nNUMFUZZ_SIGNATURE(\"f64\");\n\
         int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {{\n  double r;\n  \
         if ({function}(nf_f64(d, n, 0), &r) != 0) NUMFUZZ_HANDLED();\n  NUMFUZZ_RESULT(r);\n  return 0;\n}}\n"
    )
}

/// The target and its taint build, with the hook named to numfuzz-cc or not.
fn build(function: &str, hook: bool) -> Built {
    build_library(LIBRARY, function, hook)
}

fn build_library(library: &str, function: &str, hook: bool) -> Built {
    let harness = harness(function);
    let sources = [("lib.c", library), ("h.c", harness.as_str())];
    let env: &[(&str, &str)] = if hook {
        &[("NUMFUZZ_CC_ERROR_HOOK", "report_error")]
    } else {
        &[]
    };
    let built = compile("t", &sources, &["-O1", "-g"], env);
    let mut taint_env = env.to_vec();
    taint_env.push(("NUMFUZZ_CC_TAINT", "1"));
    let taint = compile("t", &sources, &["-O1", "-g"], &taint_env);
    std::fs::copy(&taint.exe, built.path("t.taint")).expect("copy the taint build");
    built
}

/// Two inputs: exp overflows at 800; at 709.78 exp is finite and the product overflows.
fn campaign(built: &Built) -> PathBuf {
    let root = built.path("out");
    let c = HandCampaign::new(&root, &built.exe, &["default"]);
    c.crash("default", "id:000000,time:1", &f64s(&[800.0]));
    c.crash("default", "id:000001,time:2", &f64s(&[709.78]));
    root
}

fn triage_json(out: &Path) -> Value {
    let o = numfuzz(&["triage", out.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "{}", both(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("triage JSON does not parse: {e}\n{}", both(&o)))
}

fn finding<'a>(doc: &'a Value, id: &Value) -> &'a Value {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == *id)
        .unwrap()
}

#[test]
fn a_dropped_error_report_is_the_root_of_one_entry_at_the_call_that_dropped_it() {
    let built = build("scaled_dropped_e", true);
    let out = campaign(&built);
    let doc = triage_json(&out);
    let bugs = doc["bugs"].as_array().unwrap();
    assert_eq!(
        bugs.len(),
        1,
        "two overflow sites, one dropped report: one entry\n{doc:#}"
    );
    let bug = finding(&doc, &bugs[0]);
    assert_eq!(bug["root_by"], "report", "{bug:#}");
    let dropped = &bug["dropped_report"];
    assert_eq!(dropped["file"], "lib.c");
    assert_eq!(dropped["line"], REPORT_LINE);
    assert_eq!(dropped["reason"], "overflow");
    assert_eq!(dropped["code"], 16);
    assert_eq!(dropped["reporter"], "scaled_exp_e");
    assert_eq!(dropped["dropped_by"], "scaled_dropped_e");
    assert_eq!(dropped["dropped_at"]["line"], DROP_LINE, "{dropped:#}");
    // The other overflow site hangs under the entry.
    let chained: Vec<&Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["root"] == bugs[0] && f["id"] != bugs[0])
        .collect();
    assert_eq!(chained.len(), 1, "{doc:#}");
    assert_eq!(chained[0]["kind"], "Overflow");
    assert_eq!(doc["summary"]["bugs"], 1);

    let table = numfuzz(&["triage", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains(&format!(
            "root        error reported at lib.c:{REPORT_LINE} (\"overflow\", code 16) in scaled_exp_e, dropped by its caller scaled_dropped_e at lib.c:{DROP_LINE}"
        )),
        "{text}"
    );
}

#[test]
fn without_the_hook_the_same_inputs_are_two_entries_at_two_overflow_sites() {
    let built = build("scaled_dropped_e", false);
    let doc = triage_json(&campaign(&built));
    let bugs = doc["bugs"].as_array().unwrap();
    assert_eq!(bugs.len(), 2, "{doc:#}");
    for id in bugs {
        assert_eq!(finding(&doc, id)["dropped_report"], Value::Null);
    }
}

#[test]
fn a_report_passed_on_as_a_status_is_handled_not_dropped() {
    let built = build("scaled_e", true);
    let doc = triage_json(&campaign(&built));
    assert_eq!(doc["bugs"].as_array().unwrap().len(), 0, "{doc:#}");
    assert!(doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["dropped_report"].is_null()));
}

#[test]
fn a_standalone_run_prints_each_report_and_a_replay_carries_its_callers() {
    let built = build("scaled_dropped_e", true);
    let o = run(&built.exe, &[], &f64s(&[800.0]), &[("NUMFUZZ_ABORT", "0")]);
    let text = both(&o);
    assert!(
        text.contains(&format!(
            "lib.c:{REPORT_LINE}: error reported \"overflow\" (code 16) [numfuzz]"
        )),
        "{text}"
    );
    let o = run(
        &built.exe,
        &[],
        &f64s(&[800.0]),
        &[("NUMFUZZ_ABORT", "0"), ("NUMFUZZ_REPORT", "json")],
    );
    let reports: Vec<Value> = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] == "error_reported")
        .collect();
    assert_eq!(reports.len(), 1, "{}", both(&o));
    let callers: Vec<&str> = reports[0]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["function"].as_str().unwrap())
        .collect();
    assert_eq!(callers.first(), Some(&"scaled_exp_e"), "{callers:?}");
    assert!(callers.contains(&"scaled_dropped_e"), "{callers:?}");
    assert_eq!(callers.last(), Some(&"LLVMFuzzerTestOneInput"), "{callers:?}");
}

/// A helper inside the entry point drops the status its callee returned; the entry point passes
/// the helper's (zero) status on. Line numbers matter below.
const NESTED: &str = r#"#include <math.h>
void report_error(const char *reason, const char *file, int line, int code);
void report_error(const char *reason, const char *file, int line, int code) {
  (void)reason; (void)file; (void)line; (void)code;
}
static int inner_e(double x, double *out) {
  double r = exp(x) * 4.0;
  *out = r;
  if (isinf(r)) {
    report_error("overflow", __FILE__, __LINE__, 16);
    return 16;
  }
  return 0;
}
static int helper_e(double x, double *out) {
  double t;
  inner_e(x, &t);
  *out = t + 1.0;
  return 0;
}
int nested_e(double x, double *res) {
  double u;
  int status = helper_e(x, &u);
  *res = u / 2.0;
  return status;
}
"#;

#[test]
fn the_returned_statuses_put_the_drop_at_the_helper_that_stopped_the_status() {
    let built = build_library(NESTED, "nested_e", true);
    let doc = triage_json(&campaign(&built));
    let bugs = doc["bugs"].as_array().unwrap();
    assert_eq!(bugs.len(), 1, "{doc:#}");
    let dropped = &finding(&doc, &bugs[0])["dropped_report"];
    // Not nested_e's call of helper_e (line 23), which passed helper_e's status on.
    assert_eq!(dropped["dropped_by"], "helper_e", "{dropped:#}");
    assert_eq!(dropped["dropped_at"]["line"], 17, "{dropped:#}");
}
