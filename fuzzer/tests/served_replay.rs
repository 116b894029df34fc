//! Served replays: triage replays through one long-lived process per build that forks a child
//! per input. The report is the one replays in processes of their own give (escapes and their
//! roots by repair, shadow references, a crash, a hang, minimised inputs), and no input's state
//! reaches the next.

use serde_json::Value;
use std::process::Command;
use testkit::{both, compile_with_taint_and_shadow, f64s, HandCampaign, Tools};

/// One case per value of the i32 field; `runs` counts the inputs this process ran, so an input
/// that came after another in the same process overflows at LINE_LEAKED.
const HARNESS: &str = r#"#include <numfuzz.h>
#include <math.h>
NUMFUZZ_SIGNATURE("i32,f64");
static volatile double big = 1e300;
static int runs;
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int c = nf_i32(data, size, 0);
  double x = nf_f64(data, size, 1), r = x;
  if (++runs > 1) r = x * big * big;
  switch (c) {
  case 1: r = x * big; break;
  case 2: { double t = x * big; r = t - t; break; }
  case 3: { double t = x * big; r = t > 1.0 ? 0.0 / (x - x) : x; break; }
  case 4: r = *(volatile double *)0; break;
  case 5: { volatile double y = x; for (;;) y = y * 0.5 + 1.0; }
  }
  NUMFUZZ_RESULT(r);
  return 0;
}
"#;
const LINE_LEAKED: u64 = 9;

fn input(case: i32, x: f64) -> Vec<u8> {
    let mut bytes = case.to_le_bytes().to_vec();
    bytes.extend(f64s(&[x]));
    bytes
}

/// The JSON report of `numfuzz triage OUT`, with the served replays switched on or off, and what
/// it logged.
fn triage(out: &std::path::Path, served: bool) -> (Value, String) {
    let o = Command::new(Tools::get().numfuzz())
        .args([
            "triage",
            out.to_str().unwrap(),
            "--format",
            "json",
            "-t",
            "500",
            "--minimize",
        ])
        .env("CI", "1")
        .env("NUMFUZZ_LOG", "1")
        .env("NUMFUZZ_REPLAY_SERVER", if served { "1" } else { "0" })
        .output()
        .expect("run numfuzz");
    assert!(o.status.success(), "{}", both(&o));
    let mut doc: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}\n{}", both(&o)));
    // Times, paths and the directory of the minimised inputs belong to this run.
    for key in ["generated", "duration_ms", "command_line", "minimized_dir"] {
        doc.as_object_mut().unwrap().remove(key);
    }
    // How many inputs the references were asked about varies between runs of either kind
    // now and then (3 or 4 here, replays in their own processes too), so it is not compared.
    doc["oracle"]["judged"] = Value::Null;
    // Where in its loop a hang was stopped (a line of it, or a checker it called) is the
    // moment's, not the replay's.
    for hang in doc["hangs"].as_array_mut().into_iter().flatten() {
        hang["frame"] = Value::Null;
        hang["stack"] = Value::Null;
    }
    (doc, String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn served_replays_give_the_report_of_replays_in_their_own_processes_and_keep_inputs_apart() {
    let built = compile_with_taint_and_shadow("cases", &[("cases.c", HARNESS)], &["-O2"]);
    let out = built.path("out");
    let c = HandCampaign::new(&out, &built.exe, &["default"]);
    let inputs = [
        input(1, 1e10),
        input(1, 3e10),
        input(2, 1e20),
        input(3, 2e10),
        input(4, 1.0),
        input(5, 1.0),
    ];
    for (k, bytes) in inputs.iter().enumerate() {
        c.crash("default", &format!("id:{k:06}"), bytes);
    }
    let minimized = built.path("minimized");
    let (own, own_log) = triage(&out, false);
    std::fs::rename(out.join("minimized"), &minimized).expect("keep the first minimised inputs");
    let (served, served_log) = triage(&out, true);
    assert!(own_log.contains(" 0 served,"), "{own_log}");
    assert!(
        served_log.contains("target build: ") && !served_log.contains("target build: 0 served"),
        "the target build served no replay:\n{served_log}"
    );
    assert!(!served_log.contains("taint build: 0 served"), "{served_log}");
    assert_eq!(
        served, own,
        "served:\n{served:#}\nown processes:\n{own:#}\n{served_log}\n{own_log}"
    );

    let findings = served["findings"].as_array().expect("findings");
    assert!(findings.iter().any(|f| f["consequence"] == "escapes"), "{served:#}");
    assert!(
        !findings.iter().any(|f| f["location"]["line"] == LINE_LEAKED),
        "one input's state reached another's replay:\n{served:#}"
    );
    assert_eq!(served["crashes"].as_array().map(Vec::len), Some(1), "{served:#}");
    assert_eq!(served["hangs"].as_array().map(Vec::len), Some(1), "{served:#}");
    for entry in std::fs::read_dir(&minimized).expect("minimised inputs") {
        let entry = entry.unwrap();
        let again = std::fs::read(out.join("minimized").join(entry.file_name())).expect("minimised again");
        assert_eq!(std::fs::read(entry.path()).unwrap(), again, "{:?}", entry.file_name());
    }
}
