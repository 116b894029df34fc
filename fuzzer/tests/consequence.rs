//! Consequences end to end: C targets that declare their results, built with numfuzz-cc and as
//! taint builds, inputs known to hit each case, and `numfuzz triage` on them: what each
//! exception did (escapes, absorbed, handled; origin; input-borne), the root-cause chains, the
//! bug list, references from an oracle (and oracles that fail), minimisation that keeps an
//! escape, and the campaign's escape objective.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use testkit::{both, compile, compile_with_taint, numfuzz, Built, HandCampaign};

/// One case per value of the i32 field. Each line holds one case, so a finding's line says
/// which case it is.
const SCENARIOS: &str = r#"#include <numfuzz.h>
#include <math.h>
NUMFUZZ_SIGNATURE("i32,f64");
NUMFUZZ_FUNCTION("scenarios");
static volatile double big = 1e300, tiny = 1e-300;
static double keep;
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int c = nf_i32(data, size, 0);
  double x = nf_f64(data, size, 1), r = 0;
  switch (c) {
  case 1: r = x * big; break;
  case 2: { double t = x * big; r = 1.0 / t; break; }
  case 3: { double t = x * tiny; r = 1.0 / t; break; }
  case 4: { double a = x * big; if (a > 1.0) r = x * (2 * big); else r = 0; break; }
  case 5: r = x - x; break;
  case 6: r = x * big * 2.0; break;
  case 7: r = x * big; NUMFUZZ_HANDLED(); break;
  case 8: { double t = x * 0.5; keep = t; r = 1.0 + t; break; }
  case 9: { double t = x * tiny; r = t / tiny; break; }
  case 10: { double z = x - x; r = z / z; break; }
  }
  NUMFUZZ_RESULT(r);
  NUMFUZZ_RESULT_NAMED("err", fabs(r) * 1e-16);
  return 0;
}
"#;

/// Lines of SCENARIOS.
const LINE_OVERFLOW_ESCAPES: u32 = 11;
const LINE_KILLED: u32 = 12;
const LINE_UNDERFLOW_DIV: u32 = 13;
const LINE_TWO_OVERFLOWS: u32 = 14;
const LINE_INF_INPUT: u32 = 15;
const LINE_OVERFLOWS_AGAIN: u32 = 16;
const LINE_HANDLED: u32 = 17;
const LINE_SUBNORMAL_INPUT: u32 = 18;
const LINE_WRONG: u32 = 19;
const LINE_UNDEFINED: u32 = 20;

/// The inputs of cases 1-8 (cases 9 and 10 are the oracle's).
fn scenario_inputs() -> Vec<(i32, Vec<u8>)> {
    vec![
        (1, testkit::case_input(1, 1e10)),
        (2, testkit::case_input(2, 1e10)),
        (3, testkit::case_input(3, 1e-30)),
        (4, testkit::case_input(4, 1e10)),
        (5, testkit::case_input(5, f64::INFINITY)),
        (6, testkit::case_input(6, 1e10)),
        (7, testkit::case_input(7, 1e10)),
        (8, testkit::case_input(8, 5e-324)),
    ]
}

fn build() -> Built {
    compile_with_taint("scenarios", &[("scenarios.c", SCENARIOS)], &["-O2"])
}

/// An output directory holding `inputs` as crash files of one instance.
fn campaign(built: &Built, name: &str, inputs: &[(i32, Vec<u8>)]) -> PathBuf {
    let root = built.path(name);
    let c = HandCampaign::new(&root, &built.exe, &["default"]);
    for (k, (case, bytes)) in inputs.iter().enumerate() {
        c.crash("default", &format!("id:{k:06},time:{}", 100 * case), bytes);
    }
    root
}

fn triage_json(out: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["triage", out.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    let o = numfuzz(&args);
    assert!(o.status.success(), "{}", both(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("triage JSON does not parse: {e}\n{}", both(&o)))
}

/// The findings of a report by (kind, line).
fn by_line(doc: &Value) -> BTreeMap<(String, u64), Value> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                (
                    f["kind"].as_str().unwrap().to_string(),
                    f["location"]["line"].as_u64().unwrap(),
                ),
                f.clone(),
            )
        })
        .collect()
}

fn get<'a>(findings: &'a BTreeMap<(String, u64), Value>, kind: &str, line: u32) -> &'a Value {
    findings
        .get(&(kind.to_string(), line as u64))
        .unwrap_or_else(|| panic!("no {kind} at line {line}: {findings:#?}"))
}

/// consequence, origin, input_borne, class of a finding.
fn classed(f: &Value) -> (&str, bool, bool, &str) {
    (
        f["consequence"].as_str().unwrap_or("null"),
        f["origin"].as_bool().unwrap(),
        f["input_borne"].as_bool().unwrap(),
        f["class"].as_str().unwrap(),
    )
}

#[test]
fn every_scenario_is_classed_right_with_its_chain_and_the_bug_list() {
    let built = build();
    let out = campaign(&built, "out", &scenario_inputs());
    let doc = triage_json(&out, &[]);
    assert_eq!(doc["schema_version"], 11);
    assert_eq!(doc["consequences"], "computed");
    let taint = built.path("scenarios.taint").canonicalize().unwrap();
    assert_eq!(doc["taint_target"].as_str().map(PathBuf::from), Some(taint));
    let f = by_line(&doc);

    // An overflow that reaches the result: a bug, its own root.
    let o1 = get(&f, "Overflow", LINE_OVERFLOW_ESCAPES);
    assert_eq!(classed(o1), ("escapes", true, false, "bug"));
    assert_eq!(o1["root"], o1["id"]);
    assert_eq!((&o1["root_by"], &o1["via"]), (&"labels".into(), &"data".into()));
    assert_eq!(o1["results"][0]["value"], "inf");
    assert_eq!(
        o1["escapes_to"],
        serde_json::json!(["err"]),
        "the named err is non-finite too"
    );
    assert_eq!(o1["operation"]["expression"], "10000000000.0 * 1e300 = inf");
    assert!(o1["examples"]["escapes"]["path"]
        .as_str()
        .unwrap()
        .starts_with("default/crashes/"));
    assert_eq!(o1["examples"]["absorbed"], Value::Null);

    // An overflow killed by 1/inf: absorbed, no root.
    let killed = get(&f, "Overflow", LINE_KILLED);
    assert_eq!(classed(killed), ("absorbed", true, false, "absorbed"));
    assert_eq!(killed["root"], Value::Null);

    // An underflow to 0 whose 1/0 reaches the result: the underflow is the root, the
    // DivByZero hangs under it.
    let under = get(&f, "Underflow", LINE_UNDERFLOW_DIV);
    let div = get(&f, "DivByZero", LINE_UNDERFLOW_DIV);
    assert_eq!(classed(under), ("escapes", true, false, "bug"));
    assert_eq!(classed(div), ("escapes", true, false, "chained"));
    assert_eq!(div["root"], under["id"]);
    assert_eq!(under["root"], under["id"]);

    // Two overflows in one run: the first only feeds a comparison that its repair would not
    // change (coincident: the result is inf, but not through it), the second reaches the
    // result (a bug).
    let overflows: Vec<&Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["kind"] == "Overflow" && x["location"]["line"] == LINE_TWO_OVERFLOWS)
        .collect();
    assert_eq!(overflows.len(), 2, "{overflows:#?}");
    let (first, second) = if overflows[0]["location"]["column"].as_u64() < overflows[1]["location"]["column"].as_u64() {
        (overflows[0], overflows[1])
    } else {
        (overflows[1], overflows[0])
    };
    assert_eq!(classed(first), ("coincident", true, false, "coincident"));
    assert_eq!(classed(second), ("escapes", true, false, "bug"));

    // An Invalid from an infinite input: input-borne, never a bug, not an origin.
    let invalid = get(&f, "Invalid", LINE_INF_INPUT);
    assert_eq!(classed(invalid), ("escapes", false, true, "input-borne"));
    assert_eq!(invalid["root"], Value::Null);

    // inf * 2 raises nothing: the one overflow is the cause, and a bug.
    let again = get(&f, "Overflow", LINE_OVERFLOWS_AGAIN);
    assert_eq!(classed(again), ("escapes", true, false, "bug"));

    // The library reported it.
    assert_eq!(
        classed(get(&f, "Overflow", LINE_HANDLED)),
        ("handled", true, false, "handled")
    );

    // A harmless underflow of a subnormal input (subnormal inputs are ordinary inputs).
    assert_eq!(
        classed(get(&f, "Underflow", LINE_SUBNORMAL_INPUT)),
        ("absorbed", true, false, "absorbed")
    );

    // The bug list: exactly the roots.
    let mut bugs: Vec<&str> = doc["bugs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap())
        .collect();
    bugs.sort_unstable();
    let mut expected: Vec<&str> = [o1, under, second, again]
        .iter()
        .map(|x| x["id"].as_str().unwrap())
        .collect();
    expected.sort_unstable();
    assert_eq!(bugs, expected);
    let s = &doc["summary"];
    assert_eq!(s["bugs"], 4);
    assert_eq!(s["classes"]["chained"], 1);
    assert_eq!(s["classes"]["absorbed"], 2);
    assert_eq!(s["classes"]["coincident"], 1);
    assert_eq!(s["classes"]["handled"], 1);
    assert_eq!(s["classes"]["input_borne"], 1);
    assert_eq!(s["consequences"]["escapes"], 6);

    // The table leads with the bugs and shows the chain under the underflow.
    let o = numfuzz(&["triage", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", both(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("4 bugs in 10 findings"), "{text}");
    let bugs_at = text.find("Bugs (4)").expect("a bug list");
    let others_at = text
        .find(
            "Other findings: 1 chained, 1 coincident, 2 absorbed, 1 handled, 0 undefined, 0 propagated, 1 input-borne",
        )
        .expect("counts");
    assert!(bugs_at < others_at, "{text}");
    let block = &text[text
        .find(&format!("Underflow at scenarios.c:{LINE_UNDERFLOW_DIV}"))
        .expect("the underflow bug")..];
    let block = &block[..block.find("\n\n").unwrap()];
    assert!(
        block.contains("chain") && block.contains(&format!("DivByZero at scenarios.c:{LINE_UNDERFLOW_DIV}")),
        "{block}"
    );
    assert!(block.contains("returned    inf (err inf)"), "{block}");
    assert!(
        !text.contains("Underflow at scenarios.c:18"),
        "absorbed findings are not listed without --all:\n{text}"
    );
    let all = numfuzz(&["triage", out.to_str().unwrap(), "--all"]);
    assert!(String::from_utf8_lossy(&all.stdout).contains(&format!("scenarios.c:{LINE_SUBNORMAL_INPUT}")));

    // Markdown: the same bugs in a table; SARIF: bugs are errors, the rest notes.
    let md = numfuzz(&["triage", out.to_str().unwrap(), "--format", "md"]);
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(
        md.contains("### Bugs (4)") && md.contains("| # | Kind | Location |"),
        "{md}"
    );
    let sarif = numfuzz(&["triage", out.to_str().unwrap(), "--format", "sarif"]);
    let sarif: Value = serde_json::from_slice(&sarif.stdout).unwrap();
    let levels: Vec<(&str, &str)> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["partialFingerprints"]["numfuzzFinding/v1"].as_str().unwrap(),
                r["level"].as_str().unwrap(),
            )
        })
        .collect();
    for (id, level) in levels {
        assert_eq!(level == "error", expected.contains(&id), "{id}: {level}");
    }
}

/// Non-finite results a branch chooses, roots that labels get wrong, and what stays finite.
/// Each function's first line is the one its exception is raised on.
const SHAPES: &str = r#"#include <numfuzz.h>
#include <math.h>
#include <float.h>
NUMFUZZ_SIGNATURE("i32,f64,f64");
NUMFUZZ_FUNCTION("shapes");
static volatile double big = 1e300, tiny = 1e-300;
static double branch_nan(double x) {
  double t = x * big;
  if (!isfinite(t)) return NAN;
  return t / big;
}
static double log_scale(double x, int log_p) {
  double p = exp(-x * x);
  if (p == 0) return log_p ? -INFINITY : 0.0;
  return log_p ? log(p) : p;
}
static double fallback(double x) {
  double t = x * big;
  if (!isfinite(t)) return DBL_MAX;
  return t;
}
static double two_roots(double x, double y) {
  double u = x * tiny;
  double t = y * big;
  return t + u;
}
static double both_needed(double x, double y) {
  double a = x * big, b = y * big;
  if (!isfinite(a) || !isfinite(b)) return NAN;
  return a + b;
}
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int c = nf_i32(data, size, 0);
  double x = nf_f64(data, size, 1), y = nf_f64(data, size, 2), r = 0;
  switch (c) {
  case 1: r = branch_nan(x); break;
  case 2: r = log_scale(x, 1); break;
  case 3: r = fallback(x); break;
  case 4: r = x * big; if (!isfinite(r)) NUMFUZZ_HANDLED(); break;
  case 5: r = two_roots(x, y); break;
  case 6: r = both_needed(x, y); break;
  }
  NUMFUZZ_RESULT(r);
  return 0;
}
"#;

/// Lines of SHAPES.
const LINE_BRANCH_NAN: u32 = 8;
const LINE_LOG_SCALE: u32 = 13;
const LINE_FALLBACK: u32 = 18;
const LINE_HARMLESS_UNDERFLOW: u32 = 23;
const LINE_OVERFLOW_INTO_SUM: u32 = 24;
const LINE_BOTH_NEEDED: u32 = 28;
const LINE_REPORTED: u32 = 39;

fn shape_input(case: i32, x: f64, y: f64) -> Vec<u8> {
    let mut b = testkit::case_input(case, x);
    b.extend_from_slice(&y.to_le_bytes());
    b
}

/// root, root_by, via of a finding (ids for the root).
fn rooted(f: &Value) -> (&str, &str, &str) {
    (
        f["root"].as_str().unwrap_or("null"),
        f["root_by"].as_str().unwrap_or("null"),
        f["via"].as_str().unwrap_or("null"),
    )
}

#[test]
fn roots_are_the_exceptions_whose_repair_fixes_the_result_also_through_a_branch() {
    let built = compile_with_taint("shapes", &[("shapes.c", SHAPES)], &["-O2"]);
    let inputs = [
        (1, shape_input(1, 1e300, 0.0)),
        (1, shape_input(1, 1e10, 0.0)),
        (2, shape_input(2, 40.0, 0.0)),
        (3, shape_input(3, 1e10, 0.0)),
        (4, shape_input(4, 1e10, 0.0)),
        (5, shape_input(5, 1e-20, 1e10)),
        (6, shape_input(6, 1e10, 1e10)),
    ];
    let out = campaign(&built, "out", &inputs);
    let doc = triage_json(&out, &[]);
    assert_eq!(doc["schema_version"], 11);
    let f = by_line(&doc);

    // An overflow, then `return NAN` in the branch it decides: a bug through control flow.
    let nan = get(&f, "Overflow", LINE_BRANCH_NAN);
    assert_eq!(classed(nan), ("escapes", true, false, "bug"), "{nan:#}");
    assert_eq!(rooted(nan), (nan["id"].as_str().unwrap(), "repair", "control"));
    assert_eq!(nan["results"][0]["value"], "NaN");
    assert_eq!(
        nan["input"]["fields"][1]["value"], "10000000000.0",
        "of its two inputs (1e300 first), the more ordinary one is shown"
    );
    // A probability that underflowed to 0 becomes a -inf constant on the log scale.
    let log = get(&f, "Underflow", LINE_LOG_SCALE);
    assert_eq!(classed(log), ("escapes", true, false, "bug"), "{log:#}");
    assert_eq!(rooted(log), (log["id"].as_str().unwrap(), "repair", "control"));
    // A finite fallback: the result stayed finite.
    let fallback = get(&f, "Overflow", LINE_FALLBACK);
    assert_eq!(classed(fallback), ("absorbed", true, false, "absorbed"));
    assert_eq!(fallback["results"][0]["value"], "1.7976931348623157e308");
    // The library reported it.
    assert_eq!(
        classed(get(&f, "Overflow", LINE_REPORTED)),
        ("handled", true, false, "handled")
    );
    // A harmless underflow flows into the sum an overflow made inf: both are label roots, and
    // repairing the overflow alone fixes it; the underflow is listed under it.
    let over = get(&f, "Overflow", LINE_OVERFLOW_INTO_SUM);
    let under = get(&f, "Underflow", LINE_HARMLESS_UNDERFLOW);
    assert_eq!(classed(over), ("escapes", true, false, "bug"), "{over:#}");
    assert_eq!(rooted(over), (over["id"].as_str().unwrap(), "repair", "data"));
    assert_eq!(classed(under), ("escapes", true, false, "chained"), "{under:#}");
    assert_eq!(under["root"], over["id"]);
    // Two overflows that only make the result NaN together: no single repair fixes it and no
    // value reaches it. Still a bug, with no root; the overflows are coincident, not absorbed.
    let both_needed: Vec<&Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["location"]["line"] == LINE_BOTH_NEEDED)
        .collect();
    assert_eq!(both_needed.len(), 2);
    for x in &both_needed {
        assert_eq!(classed(x), ("coincident", true, false, "coincident"), "{x:#}");
    }
    let unexplained = doc["unexplained"].as_array().unwrap();
    assert_eq!(unexplained.len(), 1, "{unexplained:#?}");
    assert_eq!(unexplained[0]["results"][0]["value"], "NaN");
    assert_eq!(unexplained[0]["input"]["fields"][0]["value"], "6");
    let mut origins: Vec<&str> = unexplained[0]["origins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect();
    origins.sort_unstable();
    let mut expected_origins: Vec<&str> = both_needed.iter().map(|x| x["id"].as_str().unwrap()).collect();
    expected_origins.sort_unstable();
    assert_eq!(origins, expected_origins);

    // The bug list: exactly the three roots, plus the unexplained result, most ordinary input
    // first (largest |log10 |x||: 40 is 1.6, 1e10 is 10, 1e-20 is 20).
    let bugs: Vec<&str> = doc["bugs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap())
        .collect();
    let expected: Vec<&str> = [log, nan, over].iter().map(|x| x["id"].as_str().unwrap()).collect();
    assert_eq!(bugs, expected);
    assert_eq!(doc["summary"]["bugs"], 4);
    assert_eq!(doc["summary"]["unexplained"], 1);
    assert!(doc["summary"]["repair_replays"].as_u64().unwrap() >= 4);

    // The table says how each root was found and lists the unexplained result.
    let o = numfuzz(&["triage", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("4 bugs in 8 findings"), "{text}");
    let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("no {needle}:\n{text}"));
    assert!(
        at(&format!("Underflow at shapes.c:{LINE_LOG_SCALE}")) < at(&format!("Overflow at shapes.c:{LINE_BRANCH_NAN}")),
        "{text}"
    );
    assert!(text.contains("(by repair, via control)"), "{text}");
    assert!(text.contains("Non-finite result, cause not isolated"), "{text}");
    assert!(
        text.contains("Other findings: 1 chained, 2 coincident, 1 absorbed, 1 handled"),
        "{text}"
    );
    // --all shows what each finding's input returned.
    let all = numfuzz(&["triage", out.to_str().unwrap(), "--all"]);
    let all = String::from_utf8_lossy(&all.stdout);
    let row = all
        .lines()
        .find(|l| l.contains(&format!("shapes.c:{LINE_FALLBACK}:")))
        .expect("the fallback's row");
    assert!(
        row.contains("1.7976931348623157e308") && row.contains("absorbed"),
        "{row}"
    );
    let md = numfuzz(&["triage", out.to_str().unwrap(), "--format", "md"]);
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.contains("### Bugs (4)") && md.contains("cause not isolated"), "{md}");
}

/// A test oracle: the true value of case 9 ((x * 1e-300) / 1e-300 is x), case 10's 0/0 is
/// undefined; unknown elsewhere.
const ORACLE: &str = r#"import json, sys
for line in sys.stdin:
    req = json.loads(line)
    refs = [None] * len(req["results"])
    if req["function"] == "scenarios" and req["inputs"][0] == "9":
        refs[0] = req["inputs"][1]
    if req["function"] == "scenarios" and req["inputs"][0] == "10":
        refs[0] = "nan"
    print(json.dumps({"results": refs}), flush=True)
"#;

fn oracle_cmd(built: &Built) -> String {
    let path = built.path("oracle.py");
    std::fs::write(&path, ORACLE).unwrap();
    format!("python3 {}", path.display())
}

#[test]
fn a_finite_wrong_result_makes_an_absorbed_underflow_a_bug_against_the_oracle() {
    let built = build();
    // x * 1e-300 = 1e-320: a subnormal keeps ~10 bits, so the result is ~1e-5 off.
    let out = campaign(&built, "out", &[(9, testkit::case_input(9, 1e-20))]);
    let doc = triage_json(&out, &["--oracle", &oracle_cmd(&built)]);
    let f = by_line(&doc);
    let under = get(&f, "Underflow", LINE_WRONG);
    assert_eq!(classed(under), ("absorbed", true, false, "bug"), "{under:#}");
    let r = &under["reference"];
    assert_eq!(r["verdict"], "wrong", "{under:#}");
    assert_eq!(r["value"], "1e-20");
    assert_eq!(r["result"], 0);
    assert_eq!(r["reaches"], true);
    assert_ne!(r["returned"], "1e-20");
    assert_eq!(doc["bugs"], serde_json::json!([under["id"]]));
    assert_eq!(doc["summary"]["wrong"], 1);
    assert_eq!(doc["oracle"]["judged"], 1);
    assert_eq!(doc["oracle"]["error"], Value::Null);
    // Within a looser tolerance the result is right, and the underflow is context again.
    let loose = triage_json(&out, &["--oracle", &oracle_cmd(&built), "--tolerance", "1e-3"]);
    let under = get(&by_line(&loose), "Underflow", LINE_WRONG).clone();
    assert_eq!(under["reference"]["verdict"], "right");
    assert_eq!(under["class"], "absorbed");
}

#[test]
fn a_nan_where_the_oracle_says_the_value_is_undefined_is_no_bug() {
    let built = build();
    let out = campaign(&built, "out", &[(10, testkit::case_input(10, 3.0))]);
    // Without a reference, 0/0's NaN escapes unreported: a bug.
    let doc = triage_json(&out, &[]);
    let invalid = get(&by_line(&doc), "Invalid", LINE_UNDEFINED).clone();
    assert_eq!(classed(&invalid), ("escapes", true, false, "bug"), "{invalid:#}");
    // The oracle says the true value is undefined: the NaN is the answer.
    let doc = triage_json(&out, &["--oracle", &oracle_cmd(&built)]);
    let invalid = get(&by_line(&doc), "Invalid", LINE_UNDEFINED).clone();
    assert_eq!(classed(&invalid), ("escapes", true, false, "undefined"), "{invalid:#}");
    assert_eq!(invalid["reference"]["verdict"], "undefined", "{invalid:#}");
    assert_eq!(invalid["reference"]["value"], "nan");
    assert_eq!(invalid["root"], Value::Null);
    assert_eq!(doc["bugs"], serde_json::json!([]));
    assert_eq!(doc["summary"]["classes"]["undefined"], 1);
}

#[test]
fn an_oracle_that_crashes_hangs_or_prints_garbage_is_named_and_the_report_is_still_written() {
    let built = build();
    let out = campaign(
        &built,
        "out",
        &[(9, testkit::case_input(9, 1e-20)), (1, testkit::case_input(1, 1e10))],
    );
    let cases = [
        (
            "crashes",
            "echo 'cannot import mpmath' >&2; exit 3",
            "exited with exit status: 3 (cannot import mpmath)",
        ),
        ("hangs", "sleep 600", "gave no answer within 1 s"),
        ("garbage", "while read l; do echo 'hello'; done", "answered `hello`"),
    ];
    for (name, cmd, says) in cases {
        let report = built.path(&format!("{name}.json"));
        let o = numfuzz(&[
            "triage",
            out.to_str().unwrap(),
            "--format",
            "json",
            "--output",
            report.to_str().unwrap(),
            "--oracle",
            cmd,
            "--oracle-timeout",
            "1",
        ]);
        assert!(!o.status.success(), "{name}: {}", both(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        let error_lines: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
        assert_eq!(error_lines.len(), 1, "{name}: {err}");
        assert!(
            error_lines[0].contains(&format!("oracle `{cmd}`")) && error_lines[0].contains(says),
            "{name}: {err}"
        );
        // Nothing lost: the report is there, with consequences and without references.
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(
            doc["bugs"].as_array().unwrap().len(),
            1,
            "{name}: the overflow is still a bug"
        );
        assert!(doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["reference"].is_null()));
        assert!(doc["oracle"]["error"].as_str().unwrap().contains(says));
    }
}

/// Significant digits of a decimal (`70000000000.0` has 1, `1.25e-30` has 3).
fn significant_digits(decimal: &str) -> usize {
    let mantissa = decimal.trim_start_matches('-').split(['e', 'E']).next().unwrap();
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    digits.trim_start_matches('0').trim_end_matches('0').len()
}

#[test]
fn minimisation_keeps_an_escape_as_its_own_root() {
    let built = build();
    let out = campaign(
        &built,
        "out",
        &[
            (1, testkit::case_input(1, 7.123456789e10)),
            (3, testkit::case_input(3, 1.23456789e-30)),
        ],
    );
    let doc = triage_json(&out, &["--minimize"]);
    let f = by_line(&doc);
    for (kind, line) in [("Overflow", LINE_OVERFLOW_ESCAPES), ("Underflow", LINE_UNDERFLOW_DIV)] {
        let x = get(&f, kind, line);
        assert_eq!(x["class"], "bug", "{x:#}");
        let m = &x["minimized"];
        assert_eq!(
            m["results"][0]["value"], "inf",
            "{kind}: the minimised input still escapes: {x:#}"
        );
        let value = m["fields"][1]["value"].as_str().unwrap();
        assert!(
            significant_digits(value) <= 2,
            "{kind}: minimised to a short decimal, got {value}"
        );
        // Replayed on its own, the minimised input is still this bug.
        let dir = built.path(&format!("min-{kind}"));
        let c = HandCampaign::new(&dir, &built.exe, &["default"]);
        c.crash(
            "default",
            "id:000000,time:1",
            &std::fs::read(m["path"].as_str().unwrap()).unwrap(),
        );
        let again = triage_json(&dir, &[]);
        assert!(again["bugs"].as_array().unwrap().contains(&x["id"]), "{again:#}");
    }
}

#[test]
fn without_results_or_without_a_taint_build_the_report_says_what_consequences_need() {
    let no_results = compile(
        "plain",
        &[(
            "plain.c",
            "#include <numfuzz.h>\nNUMFUZZ_SIGNATURE(\"f64\");\nvolatile double sink;\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { sink = nf_f64(d, n, 0) * 1e300; return 0; }\n",
        )],
        &["-O1"],
        &[],
    );
    let out = no_results.path("out");
    HandCampaign::new(&out, &no_results.exe, &["default"]).crash("default", "id:000000,time:1", &1e10f64.to_le_bytes());
    let doc = triage_json(&out, &[]);
    assert_eq!(doc["consequences"], "no-results");
    assert_eq!(doc["findings"][0]["status"], "silent", "today's behaviour");
    assert_eq!(doc["findings"][0]["consequence"], Value::Null);
    let o = numfuzz(&["triage", out.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("Consequences need declared results"),
        "{}",
        both(&o)
    );

    // Results but no taint build beside the target: it says how to make one.
    let no_taint = compile("scenarios", &[("scenarios.c", SCENARIOS)], &["-O2"], &[]);
    let out = campaign(&no_taint, "out", &[(1, testkit::case_input(1, 1e10))]);
    let doc = triage_json(&out, &[]);
    assert_eq!(doc["consequences"], "no-taint-build");
    assert_eq!(doc["bugs"], serde_json::json!([]));
    let o = numfuzz(&["triage", out.to_str().unwrap()]);
    let text = both(&o);
    assert!(
        text.contains("NUMFUZZ_CC_TAINT=1") && text.contains("scenarios.taint"),
        "{text}"
    );
    // A --taint-target that is not one is refused in one line.
    let o = numfuzz(&[
        "triage",
        out.to_str().unwrap(),
        "--taint-target",
        no_taint.exe.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("is not a taint build") && err.trim_end().lines().count() == 1,
        "{err}"
    );
}

/// An overflow the seed meets absorbed (mode 0: 1/inf); with mode 7 it reaches the result.
const ESCAPE_LATER: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64,f64,u8");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0), y = nf_f64(data, size, 1);
  unsigned mode = nf_u8(data, size, 2);
  double a = x * y;
  double r = mode == 7 ? a : 1.0 / a;
  NUMFUZZ_RESULT(r);
  return 0;
}
"#;

/// Crash files of the campaign's one instance.
fn crash_names(out: &Path) -> Vec<String> {
    std::fs::read_dir(out.join("default/crashes"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn the_escape_objective_keeps_a_site_where_it_first_reaches_the_result() {
    let built = compile_with_taint("later", &[("later.c", ESCAPE_LATER)], &["-O1"]);
    let seeds = built.path("seeds");
    std::fs::create_dir_all(&seeds).unwrap();
    let mut seed = 1e200f64.to_le_bytes().to_vec();
    seed.extend_from_slice(&1e200f64.to_le_bytes());
    seed.push(0);
    std::fs::write(seeds.join("absorbed"), &seed).unwrap();
    let run = |name: &str, extra: &[&str]| {
        let out = built.path(name);
        let mut args = vec![
            "run",
            "-i",
            seeds.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "-V",
            "5",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", built.exe.to_str().unwrap()]);
        let o = numfuzz(&args);
        assert!(o.status.success(), "{}", both(&o));
        out
    };
    let site = "kind:Overflow,site:later.c:6:16";

    let with = run("with", &[]);
    let names = crash_names(&with);
    assert!(
        names.iter().any(|n| n.contains(site) && n.ends_with(",+esc")),
        "an escaping input of the known overflow is saved: {names:?}"
    );
    let stats = std::fs::read_to_string(with.join("default/fuzzer_stats")).unwrap();
    assert!(
        stats
            .lines()
            .any(|l| l.starts_with("fp_escapes") && !l.ends_with(": 0")),
        "{stats}"
    );
    let doc = triage_json(&with, &[]);
    let overflow = get(&by_line(&doc), "Overflow", 6).clone();
    assert_eq!(overflow["class"], "bug", "{overflow:#}");

    // Ablation: only the first (absorbed) input of the overflow is kept.
    let without = run("without", &["--no-escape-objective"]);
    let names = crash_names(&without);
    assert!(!names.iter().any(|n| n.contains("+esc")), "{names:?}");
    assert_eq!(names.iter().filter(|n| n.contains(site)).count(), 1, "{names:?}");
    let doc = triage_json(&without, &[]);
    let overflow = get(&by_line(&doc), "Overflow", 6).clone();
    assert_eq!(overflow["consequence"], "absorbed", "{overflow:#}");
}
