//! `numfuzz run-all` over a harness directory laid out as `numfuzz harness` writes it: three
//! harnesses of a small C library (two reach the same spurious overflow in a shared helper,
//! one has no exception) and one whose binary is missing; campaigns of a few seconds, the
//! merged report in its four formats, `--continue` and the refusals; `--shard` and
//! `run-all merge`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use testkit::{both, compile_with_taint_and_shadow, numfuzz};

/// The library: `scaled` overflows for |x| > 1.8e8 although its result is x.
const LIBRARY: &str = "static double scaled(double x) { return x * 1e300 / 1e300; }\n";

/// A harness of `function`; it includes the library from one place, as every harness of a real
/// library links the same source (a site is named by its path).
fn harness(library: &Path, function: &str, signature: &str, call: &str) -> String {
    format!(
        r#"#include <numfuzz.h>
#include "{}"
NUMFUZZ_SIGNATURE("{signature}");
NUMFUZZ_FUNCTION("{function}");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {{
  double x = nf_f64(data, size, 0);
  NUMFUZZ_RESULT({call});
  return 0;
}}
"#,
        library.display()
    )
}

/// DIR/manifest.json and DIR/bin/<f> (+ .taint, .shadow) for `one`, `two` and `quiet`; the
/// manifest also lists `absent`, which has no binary.
fn harness_dir(root: &Path) -> PathBuf {
    let dir = root.join("harnesses");
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    let library = root.join("lib.c");
    std::fs::write(&library, LIBRARY).unwrap();
    let cases = [
        ("one", "f64", "scaled(x)"),
        ("two", "f64,i32", "0.5 * scaled(x)"),
        ("quiet", "f64", "x * 0.5"),
    ];
    for (function, signature, call) in cases {
        let source = harness(&library, function, signature, call);
        let built = compile_with_taint_and_shadow(function, &[(&format!("{function}.c"), source.as_str())], &["-O1"]);
        for suffix in ["", ".taint", ".shadow"] {
            let name = format!("{function}{suffix}");
            std::fs::copy(built.path(&name), dir.join("bin").join(&name)).unwrap();
        }
    }
    let manifest = serde_json::json!({
        "schema_version": 1,
        "headers": ["lib.h"],
        "harnesses": [
            {"function": "one", "signature": "f64"},
            {"function": "two", "signature": "f64,i32"},
            {"function": "quiet", "signature": "f64"},
            {"function": "absent", "signature": "f64"},
        ],
        "skipped": [],
    });
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
    dir
}

fn run_all(dir: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run-all",
        dir.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "-V",
        "4",
        "--jobs",
        "2",
    ];
    args.extend_from_slice(extra);
    numfuzz(&args)
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn run_all_fuzzes_every_harness_and_merges_one_bug_list() {
    let root = tempfile::tempdir().unwrap();
    let dir = harness_dir(root.path());
    let out = root.path().join("out");
    let o = run_all(&dir, &out, &["--", "-t", "1000"]);
    assert!(o.status.success(), "{}", both(&o));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.starts_with("# numfuzz run-all of "), "{text}");

    let report = json(&out.join("report.json"));
    let bugs = report["bugs"].as_array().unwrap();
    // The helper's overflow is one entry, a bug in both functions that reach it.
    let overflow: Vec<&Value> = bugs.iter().filter(|b| b["kind"] == "Overflow").collect();
    assert_eq!(overflow.len(), 1, "{report:#}");
    let b = overflow[0];
    assert!(b["site"].as_str().unwrap().contains("lib.c:1:"), "{b:#}");
    let two = std::fs::read_to_string(out.join("triage/two/triage.json")).unwrap();
    assert_eq!(b["functions"], serde_json::json!(["one", "two"]), "{two}");
    assert_eq!(
        b["example"]["reference"]["source"], "shadow",
        "judged by the shadow build: {b:#}"
    );
    assert_eq!(b["example"]["reference"]["verdict"], "wrong", "{b:#}");
    assert!(text.contains("lib.c:1:"), "{text}");

    let functions: Vec<(String, Value)> = report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["function"].as_str().unwrap().to_string(), f["bug_entries"].clone()))
        .collect();
    assert_eq!(
        functions.iter().map(|(f, _)| f.as_str()).collect::<Vec<_>>(),
        ["one", "two", "quiet", "absent"]
    );
    assert_eq!(functions[2].1, 0, "quiet has no bug");
    let seconds: Vec<&Value> = report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["seconds"])
        .collect();
    assert_eq!(
        seconds,
        [&Value::from(4), &Value::from(4), &Value::from(4), &Value::Null]
    );
    assert_eq!(report["budget"], Value::Null);
    assert_eq!(report["functions"][3]["findings"], Value::Null, "absent has no report");
    let failed = report["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 1);
    assert!(
        failed[0]["why"].as_str().unwrap().contains("bin/absent is missing"),
        "{failed:?}"
    );
    assert!(both(&o).contains("absent"), "{}", both(&o));

    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(html.contains("lib.c:1:"), "the overflow's site: {html}");
    assert!(
        html.contains("<table class=\"sortable\">")
            && html.contains("<th>function</th><th>seconds fuzzed</th><th>findings</th>"),
        "the per-function table: {html}"
    );

    let sarif = json(&out.join("report.sarif"));
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), bugs.len());
    assert!(results.iter().any(|r| r["ruleId"] == "Overflow"), "{sarif:#}");

    // Without --continue, the same -o is refused, in one line, and nothing is touched.
    let again = run_all(&dir, &out, &[]);
    assert!(!again.status.success());
    let err = String::from_utf8_lossy(&again.stderr).into_owned();
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--continue"), "{err}");
    assert!(out.join("triage/one/triage.json").is_file());

    // --continue keeps what finished: a finished campaign whose report is gone is only
    // triaged again, not fuzzed again.
    let marker = out.join("campaigns/one/kept");
    std::fs::write(&marker, b"").unwrap();
    std::fs::remove_file(out.join("triage/one/triage.json")).unwrap();
    let resumed = run_all(&dir, &out, &["--continue", "--format", "json"]);
    assert!(resumed.status.success(), "{}", both(&resumed));
    assert!(marker.exists(), "the campaign of `one` was run again");
    assert!(both(&resumed).contains("2 functions kept"), "{}", both(&resumed));
    let doc: Value = serde_json::from_slice(&resumed.stdout).unwrap();
    assert_eq!(doc["bugs"], report["bugs"]);

    // --retriage triages every finished campaign again, here minimising the bugs' inputs
    // beside each function's report, and fuzzes nothing again; without -V it takes the run's.
    let out_arg = out.to_str().unwrap();
    let retriaged = numfuzz(&[
        "run-all",
        dir.to_str().unwrap(),
        "-o",
        out_arg,
        "--retriage",
        "--minimize=bugs",
        "--format",
        "json",
    ]);
    assert!(retriaged.status.success(), "{}", both(&retriaged));
    assert!(marker.exists(), "the campaign of `one` was run again");
    assert!(
        !both(&retriaged).contains("kept from the earlier run"),
        "{}",
        both(&retriaged)
    );
    for f in ["one", "two"] {
        let minimized = out.join("triage").join(f).join("minimized");
        assert!(
            minimized.read_dir().is_ok_and(|mut d| d.next().is_some()),
            "no minimised input in {}",
            minimized.display()
        );
    }
    let doc: Value = serde_json::from_slice(&retriaged.stdout).unwrap();
    assert_eq!(
        doc["bugs"].as_array().map(Vec::len),
        report["bugs"].as_array().map(Vec::len)
    );
    assert_eq!(doc["functions"].as_array().map(Vec::len), Some(4));
    assert_eq!(doc["functions"][0]["seconds"], 4, "{doc:#}");
}

/// `run-all --budget` over the harness directory: whatever the rounds give each function.
fn run_all_with_budget(dir: &Path, out: &Path, budget: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run-all",
        dir.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--budget",
        budget,
    ];
    args.extend_from_slice(&["--jobs", "2", "--format", "json"]);
    args.extend_from_slice(extra);
    numfuzz(&args)
}

#[test]
fn a_budget_is_spent_in_rounds_and_the_report_says_how_long_each_function_got() {
    let root = tempfile::tempdir().unwrap();
    let dir = harness_dir(root.path());
    let out = root.path().join("out");
    let o = run_all_with_budget(&dir, &out, "40s", &["--", "-t", "1000"]);
    assert!(o.status.success(), "{}", both(&o));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["budget"], 40);

    // Round 0 gives each of the 4 functions 40/2/4 = 5 s; `absent` fails there, and the
    // seconds it did not use go to the three others in later rounds: all 40 are spent.
    let ledger = json(&out.join("budget.json"));
    let slices = ledger["slices"].as_array().unwrap();
    let round_0: Vec<&Value> = slices.iter().filter(|s| s["round"] == 0).collect();
    assert_eq!(round_0.len(), 4, "{ledger:#}");
    assert!(
        round_0.iter().all(|s| s["seconds"] == 5 || s["function"] == "absent"),
        "{ledger:#}"
    );
    assert!(
        slices.iter().any(|s| s["round"].as_u64() >= Some(2)),
        "several rounds: {ledger:#}"
    );
    assert!(
        !slices.iter().any(|s| s["function"] == "absent" && s["round"] != 0),
        "a failed function gets no more slices: {ledger:#}"
    );
    let given: Vec<(String, u64)> = report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| Some((f["function"].as_str()?.to_string(), f["seconds"].as_u64()?)))
        .collect();
    assert_eq!(
        given.iter().map(|(f, _)| f.as_str()).collect::<Vec<_>>(),
        ["one", "two", "quiet"]
    );
    assert_eq!(given.iter().map(|(_, s)| s).sum::<u64>(), 40, "{given:?}");
    assert!(given.iter().all(|(_, s)| *s >= 5), "{given:?}");

    // Each slice resumed its campaign: the bug of the -V run is found, once, in both.
    let overflow: Vec<&Value> = report["bugs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["kind"] == "Overflow")
        .collect();
    assert_eq!(overflow.len(), 1, "{report:#}");
    assert_eq!(overflow[0]["functions"], serde_json::json!(["one", "two"]));
    assert!(report["failed"][0]["why"]
        .as_str()
        .unwrap()
        .contains("bin/absent is missing"));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("a budget of 40 s: "), "the headline says the budget: {md}");
    assert!(md.contains("| seconds fuzzed |"), "{md}");

    // --continue with the same budget runs no slice again; with another, it is refused.
    let before = std::fs::read_to_string(out.join("budget.json")).unwrap();
    std::fs::remove_file(out.join("triage/one/triage.json")).unwrap();
    let resumed = run_all_with_budget(&dir, &out, "40s", &["--continue", "--", "-t", "1000"]);
    assert!(resumed.status.success(), "{}", both(&resumed));
    assert_eq!(std::fs::read_to_string(out.join("budget.json")).unwrap(), before);
    let again: Value = serde_json::from_slice(&resumed.stdout).unwrap();
    assert_eq!(again["functions"], report["functions"]);
    assert_one_line(
        &run_all_with_budget(&dir, &out, "1m", &["--continue"]),
        "was run with --budget 40s, not --budget 60s",
    );
    assert_one_line(
        &run_all(&dir, &out, &["--continue"]),
        "was run with --budget 40s, not -V 4",
    );

    // Too small a budget, or both -V and --budget, are refused before anything runs.
    let small = root.path().join("small");
    assert_one_line(&run_all_with_budget(&dir, &small, "20s", &[]), "give at least 24s");
    assert!(!small.exists(), "{}", small.display());
    assert!(!run_all(&dir, &small, &["--budget", "1h"]).status.success());
    let bad = run_all_with_budget(&dir, &small, "2x", &[]);
    assert!(
        !bad.status.success() && both(&bad).contains("is not a duration"),
        "{}",
        both(&bad)
    );
}

#[test]
fn run_all_refuses_what_it_cannot_run_in_one_line() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("out");
    let one_line = |o: &std::process::Output, want: &str| {
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(want), "want `{want}` in: {err}");
    };
    // No manifest.
    one_line(&run_all(root.path(), &out, &[]), "numfuzz harness");
    let dir = root.path().join("h");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("manifest.json"), r#"{"harnesses": [{"function": "f"}]}"#).unwrap();
    one_line(&run_all(&dir, &out, &["--functions", "f,g"]), "`g`");
    one_line(&run_all(&dir, &out, &["--continue"]), "--continue: ");
    // The refusal names the flag given.
    one_line(&run_all(&dir, &out, &["--retriage"]), "--retriage: ");
    one_line(&run_all(&dir, &out, &["--retriage"]), "holds no run-all");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("notes.txt"), b"mine").unwrap();
    one_line(&run_all(&dir, &out, &[]), "holds other files");
    assert_eq!(std::fs::read(out.join("notes.txt")).unwrap(), b"mine");
}

/// A library that dereferences NULL in `poke` (mode 7) and loops forever in `spin` (mode 9).
const RISKY: &str = r#"__attribute__((noinline)) static double poke(double x) { volatile double *p = 0; return *p + x; }
__attribute__((noinline)) static double spin(double x) { for (volatile int i = 0;; i++) {} return x; }
static double risky(double x, int mode) { return mode == 7 ? poke(x) : mode == 9 ? spin(x) : x * 0.5; }
"#;

/// A harness of `risky` named `function` (signature `f64,i32`).
fn risky_harness(library: &Path, function: &str) -> String {
    format!(
        r#"#include <numfuzz.h>
#include "{}"
NUMFUZZ_SIGNATURE("f64,i32");
NUMFUZZ_FUNCTION("{function}");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {{
  NUMFUZZ_RESULT(risky(nf_f64(data, size, 0), nf_i32(data, size, 1)));
  return 0;
}}
"#,
        library.display()
    )
}

fn risky_input(x: f64, mode: i32) -> Vec<u8> {
    let mut b = x.to_le_bytes().to_vec();
    b.extend_from_slice(&mode.to_le_bytes());
    b
}

/// A run-all directory whose campaigns of `first` and `second` ended (laid out by hand, as
/// `numfuzz run` leaves them): both crashed in `poke`, `first` also hung in `spin`. Their
/// triage is all that is left for `--continue`.
fn finished_risky_campaigns(root: &Path) -> (PathBuf, PathBuf) {
    let dir = root.join("harnesses");
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    let library = root.join("risky.c");
    std::fs::write(&library, RISKY).unwrap();
    let functions = ["first", "second"];
    for f in functions {
        let built = testkit::compile(
            f,
            &[(&format!("{f}.c"), risky_harness(&library, f).as_str())],
            &["-O1"],
            &[],
        );
        std::fs::copy(built.path(f), dir.join("bin").join(f)).unwrap();
    }
    let manifest = serde_json::json!({
        "schema_version": 1, "headers": ["risky.h"], "skipped": [],
        "harnesses": [{"function": "first", "signature": "f64,i32"}, {"function": "second", "signature": "f64,i32"}],
    });
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
    let out = root.join("out");
    let state = serde_json::json!({
        "harness_dir": dir.canonicalize().unwrap(), "seconds": 4, "functions": functions,
        "run_args": [], "oracle": null,
    });
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("run-all.json"), state.to_string()).unwrap();
    for (f, crash_x) in [("first", 1e300), ("second", 0.5)] {
        let campaign = out.join("campaigns").join(f);
        let hand = testkit::HandCampaign::new(&campaign, &dir.join("bin").join(f), &["default"]);
        hand.crash(
            "default",
            "id:000000,sig:11,src:000000,time:300,execs:10",
            &risky_input(crash_x, 7),
        );
        if f == "first" {
            let hang = campaign.join("default/hangs/id:000000,src:000000,time:500,execs:20");
            std::fs::write(hang, risky_input(2.0, 9)).unwrap();
        }
        std::fs::write(campaign.join(".run-all-done"), b"").unwrap();
    }
    (dir, out)
}

#[test]
fn crashes_and_hangs_are_listed_first_and_counted_as_bugs() {
    let root = tempfile::tempdir().unwrap();
    let (dir, out) = finished_risky_campaigns(root.path());
    let o = run_all(&dir, &out, &["--continue"]);
    assert!(o.status.success(), "{}", both(&o));
    let md = String::from_utf8_lossy(&o.stdout).into_owned();

    // One count: two entries (the crash both functions share, the hang), in the headline, the
    // last line on the terminal and the JSON.
    assert!(md.contains("2 bugs over 2 functions"), "{md}");
    assert!(md.contains("1 real crash, 1 hang, 0 exception root sites"), "{md}");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let last = err.trim().lines().last().unwrap_or_default();
    assert!(
        last.contains("2 bugs over") && last.contains("1 real crash, 1 hang"),
        "{err}"
    );
    let report = json(&out.join("report.json"));
    assert_eq!(report["schema_version"], 6);
    assert_eq!(report["summary"]["bugs"], 2, "{report:#}");

    // Crashes first, then hangs, each with its function, input, top frames and a reproducer.
    let crash = md.find("## Crashes (1)").expect("a crash section");
    let hang = md.find("## Hangs (1)").expect("a hang section");
    let per_function = md.find("## Per function").unwrap();
    assert!(crash < hang && hang < per_function, "{md}");
    let c = &report["crashes"][0];
    assert!(c["signal"].as_str().unwrap().starts_with("SIGSEGV"), "{c:#}");
    assert_eq!(c["frame"]["function"], "poke", "{c:#}");
    assert_eq!(
        c["functions"],
        serde_json::json!(["first", "second"]),
        "deduplicated by stack"
    );
    assert_eq!(c["example"]["function"], "second", "0.5 is the more ordinary input");
    let reproduce = c["example"]["reproduce"].as_str().unwrap();
    assert!(
        reproduce.starts_with("numfuzz replay ") && reproduce.contains("/bin/second"),
        "{c:#}"
    );
    let h = &report["hangs"][0];
    assert_eq!(
        (&h["signal"], &h["frame"]["function"]),
        (&Value::Null, &Value::from("spin")),
        "{h:#}"
    );
    let entries: Vec<&Value> = report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["bug_entries"])
        .collect();
    assert_eq!(entries, [2, 1]);

    // The reproducer does what it says.
    let words: Vec<&str> = reproduce.split(' ').collect();
    let replayed = numfuzz(&words[1..]);
    assert!(both(&replayed).contains("SIGSEGV"), "{}", both(&replayed));

    // Integer fields as integers, counts in the singular where they are one.
    assert!(md.contains("`second(0.5, 7)`"), "{md}");
    assert!(!md.contains("7.0"), "{md}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let (crash, hang) = (
        html.find("1. SIGSEGV").expect("the crash"),
        html.find("2. hang").expect("the hang"),
    );
    assert!(crash < hang && hang < html.find("Per function").unwrap(), "{html}");
    assert!(
        html.contains("first (1 input)") && !html.contains("(1 inputs)"),
        "{html}"
    );
    let sarif = json(&out.join("report.sarif"));
    let rules: Vec<&Value> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["ruleId"])
        .collect();
    assert_eq!(rules, ["Crash", "Crash"]);

    // Each triage log names the report it made, not the file it was written through.
    let log = std::fs::read_to_string(out.join("logs/first.triage.log")).unwrap();
    assert!(
        log.contains("wrote ") && log.contains("triage/first/triage.json:"),
        "{log}"
    );
    assert!(!log.contains(".partial"), "{log}");
}

#[test]
fn a_triage_report_of_another_schema_is_a_one_line_error() {
    let root = tempfile::tempdir().unwrap();
    let (dir, out) = finished_risky_campaigns(root.path());
    let report = out.join("triage/first/triage.json");
    std::fs::create_dir_all(report.parent().unwrap()).unwrap();
    std::fs::write(&report, r#"{"schema_version": 3, "findings": []}"#).unwrap();
    let o = run_all(&dir, &out, &["--continue"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // The schema this numfuzz reads, as triage declares it (it moves when triage's JSON does).
    let reads = numfuzz::report_model::triage::SCHEMA_VERSION;
    let want = format!(
        "triage/first/triage.json is schema 3; this numfuzz reads schema {reads}: run `numfuzz run-all --retriage`"
    );
    assert!(err.contains(&want), "{err}");
}

/// Copies the tree `from` into `to` (made as needed).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// `numfuzz run-all merge OUTS -o MERGED --format json`.
fn merge(outs: &[&Path], merged: &Path) -> std::process::Output {
    let mut args = vec!["run-all", "merge"];
    args.extend(outs.iter().map(|o| o.to_str().unwrap()));
    args.extend(["-o", merged.to_str().unwrap(), "--format", "json"]);
    numfuzz(&args)
}

fn function_names(report: &Value) -> Vec<String> {
    report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["function"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn two_shards_merge_into_the_report_of_one_run_over_their_campaigns() {
    let root = tempfile::tempdir().unwrap();
    let dir = harness_dir(root.path());
    let outs: Vec<PathBuf> = (1..=2).map(|k| root.path().join(format!("out-{k}"))).collect();
    for (k, out) in outs.iter().enumerate() {
        let shard = format!("{}/2", k + 1);
        let o = run_all(&dir, out, &["--shard", &shard, "--", "-t", "1000"]);
        assert!(o.status.success(), "{}", both(&o));
        let md = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            md.contains(&format!("Shard {shard} (")),
            "the report says which shard: {md}"
        );
    }
    // Shard 1 takes the names at even positions of absent, one, quiet, two; each report
    // covers its share, in the manifest's order.
    let first = json(&outs[0].join("report.json"));
    assert_eq!(function_names(&first), ["quiet", "absent"]);
    assert_eq!(first["shards"][0]["shard"], "1/2");
    assert_eq!(function_names(&json(&outs[1].join("report.json"))), ["one", "two"]);

    // Given in any order.
    let merged = root.path().join("merged");
    let o = merge(&[&outs[1], &outs[0]], &merged);
    assert!(o.status.success(), "{}", both(&o));
    let mut from_shards: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(from_shards, json(&merged.join("report.json")));
    for f in ["md", "sarif", "html"] {
        assert!(merged.join(format!("report.{f}")).is_file(), "report.{f}");
    }

    // One run over the same campaign directories: both shards' campaigns and reports in one
    // OUT of an unsharded run-all (run-all.json as an older numfuzz wrote it), resumed, so
    // that it merges the same triage reports (and fails `absent` again).
    let one = root.path().join("one");
    for out in &outs {
        for sub in ["campaigns", "triage"] {
            copy_tree(&out.join(sub), &one.join(sub));
        }
    }
    let state = serde_json::json!({
        "harness_dir": dir.canonicalize().unwrap(), "seconds": 4,
        "functions": ["one", "two", "quiet", "absent"], "run_args": ["-t", "1000"], "oracle": null,
    });
    std::fs::write(one.join("run-all.json"), state.to_string()).unwrap();
    let o = run_all(&dir, &one, &["--continue", "--", "-t", "1000"]);
    assert!(o.status.success(), "{}", both(&o));
    assert!(both(&o).contains("3 functions kept"), "{}", both(&o));
    let mut single = json(&one.join("report.json"));

    // What legitimately differs: `shards` (the merge names its two directories, one run none).
    // The paths to inputs (crashes' `example.path` and `reproduce`) would lead into each
    // shard's directory too; this library neither crashes nor hangs.
    assert_eq!(from_shards["shards"].as_array().map(Vec::len), Some(2));
    assert_eq!(single["shards"], serde_json::json!([]));
    for doc in [&mut from_shards, &mut single] {
        doc.as_object_mut().unwrap().remove("shards");
    }
    assert!(single["bugs"].as_array().is_some_and(|b| !b.is_empty()), "{single:#}");
    assert_eq!(from_shards, single);
    // The other formats: the same but for the line naming the shards (SARIF has none).
    for format in ["md", "sarif", "html"] {
        let read = |d: &Path| std::fs::read_to_string(d.join(format!("report.{format}"))).unwrap();
        let merged_text: String = read(&merged)
            .lines()
            .filter(|l| !l.contains("Merged from 2 run-all directories"))
            .map(|l| format!("{l}\n"))
            .collect();
        let single_text: String = read(&one).lines().map(|l| format!("{l}\n")).collect();
        assert_eq!(merged_text.replace("\n\n\n", "\n\n"), single_text, "report.{format}");
    }

    // MERGED is new: merging again into it is refused.
    let again = merge(&[&outs[0], &outs[1]], &merged);
    assert_one_line(&again, "is not empty");
}

fn assert_one_line(o: &std::process::Output, want: &str) {
    assert!(!o.status.success(), "{}", both(o));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(want), "want `{want}` in: {err}");
}

/// A harness directory whose manifest lists `functions` and has no binary: a run-all of it
/// fails every function at once, and leaves a run-all directory to merge.
fn manifest_only(root: &Path, name: &str, functions: &[&str]) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let harnesses: Vec<Value> = functions.iter().map(|f| serde_json::json!({"function": f})).collect();
    let manifest = serde_json::json!({"harnesses": harnesses});
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
    dir
}

#[test]
fn a_bad_shard_and_a_merge_of_what_is_not_one_run_are_one_line_errors() {
    let root = tempfile::tempdir().unwrap();
    let h1 = manifest_only(root.path(), "h1", &["f", "g", "h"]);
    let h2 = manifest_only(root.path(), "h2", &["f", "g", "k"]);
    let out = |name: &str| root.path().join(name);
    for bad in ["0/2", "3/2", "2", "a/b"] {
        assert_one_line(&run_all(&h1, &out("bad"), &["--shard", bad]), "K counts from 1");
    }
    let made = |dir: &Path, name: &str, shard: &str| {
        let o = run_all(dir, &out(name), &["--shard", shard]);
        assert!(out(name).join("run-all.json").is_file(), "{}", both(&o));
        out(name)
    };
    let (a, b, other) = (made(&h1, "a", "1/2"), made(&h1, "b", "2/2"), made(&h2, "c", "2/2"));

    // --continue keeps the shard OUT was made with, and refuses another.
    let resumed = run_all(&h1, &a, &["--continue"]);
    let doc: Value = serde_json::from_slice(&resumed.stdout).unwrap_or_default();
    assert!(
        String::from_utf8_lossy(&resumed.stdout).contains("Shard 1/2"),
        "{}",
        both(&resumed)
    );
    assert_eq!(doc, Value::Null, "Markdown is printed");
    assert_eq!(json(&a.join("report.json"))["shards"][0]["shard"], "1/2");
    assert_one_line(&run_all(&h1, &a, &["--continue", "--shard", "2/2"]), "holds shard 1/2");

    let merged = out("merged");
    assert_one_line(&merge(&[&a, &other], &merged), "different harness directories");
    assert_one_line(&merge(&[&a], &merged), "shard 2/2 missing");
    assert_one_line(&merge(&[&a, &a, &b], &merged), "is in both");
    assert_one_line(&merge(&[&a, &h1], &merged), "is not a run-all directory");
    assert!(!merged.exists(), "a refused merge writes nothing");
    let o = merge(&[&a, &b], &merged);
    assert!(o.status.success(), "{}", both(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(function_names(&doc), ["f", "g", "h"]);
    assert_eq!(doc["failed"].as_array().map(Vec::len), Some(3), "{doc:#}");
}
