//! `numfuzz cov` on a tiny coverage build: its numbers are llvm-cov's own (`llvm-cov report`
//! run by hand on the same inputs), for the inferred function under test, a named function and
//! a whole file; a crashing input loses only its own coverage.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use testkit::{compile, Tools};

const LIB: &str = r#"int classify(double x, int n) {
  int r = 0;
  if (x > 1.0 && x < 10.0)
    r += 1;
  switch (n) {
  case 0: r += 2; break;
  case 1: r += 3; break;
  default: r -= 1;
  }
  for (int i = 0; i < n && i < 3; i++)
    r += i;
  r += (x < 0) ? 5 : 6;
  if (x == 12345.0) {
    volatile int *p = 0;
    *p = 1;
  }
  return r;
}
int helper(int k) { return k > 2 ? k : -k; }
"#;

const HARNESS: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64,i32");
int classify(double x, int n);
int helper(int k);
static volatile int sink;
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0);
  int n = nf_i32(data, size, 1);
  sink = classify(x, n);
  if (n == 7)
    sink += helper(n);
  return 0;
}
"#;

fn input(x: f64, n: i32) -> Vec<u8> {
    let mut v = x.to_le_bytes().to_vec();
    v.extend(n.to_le_bytes());
    v
}

fn numfuzz_cov(args: &[&str]) -> Output {
    Command::new(Tools::get().numfuzz())
        .arg("cov")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run numfuzz cov")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn llvm_bindir() -> PathBuf {
    let config = std::env::var("LLVM_CONFIG").unwrap_or_else(|_| "llvm-config-19".into());
    let out = Command::new(&config)
        .arg("--bindir")
        .output()
        .expect("llvm-config (scripts/setup.sh installs llvm-19)");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// (total, covered) branch outcomes of the line of `llvm-cov report` whose first column is `name`.
fn report_branches(report: &str, name: &str) -> (u64, u64) {
    let line = report
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no line for {name} in llvm-cov report:\n{report}"));
    let cols: Vec<&str> = line.split_whitespace().collect();
    // Name Regions Miss Cover Lines Miss Cover Branches Miss Cover
    let total: u64 = cols[cols.len() - 3].parse().unwrap();
    let miss: u64 = cols[cols.len() - 2].parse().unwrap();
    (total, total - miss)
}

fn json_report(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "numfuzz cov failed:\n{}", text(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", text(o)))
}

fn covered_total(r: &serde_json::Value) -> (u64, u64) {
    (r["total"].as_u64().unwrap(), r["covered"].as_u64().unwrap())
}

#[test]
fn numbers_agree_with_llvm_cov_report_and_a_crash_loses_only_itself() {
    let built = compile(
        "classify-cov",
        &[("lib.c", LIB), ("harness.c", HARNESS)],
        &["-O0", "-g"],
        &[("NUMFUZZ_CC_COVERAGE", "1")],
    );
    let good = [input(2.0, 0), input(-3.0, 5), input(20.0, 7)];
    let crash = input(12345.0, 1);

    // A campaign directory: the crashing input sits in the queue under an ordinary name, so
    // it shares a process with the others, which must not lose their coverage.
    let out = built.path("out");
    let queue = out.join("default/queue");
    std::fs::create_dir_all(&queue).unwrap();
    std::fs::create_dir_all(out.join("default/crashes")).unwrap();
    let mut good_files = Vec::new();
    for (i, bytes) in good.iter().enumerate() {
        let f = queue.join(format!("id:{i:06},time:{}", 10 * i));
        std::fs::write(&f, bytes).unwrap();
        good_files.push(f);
    }
    let crash_file = queue.join("id:000003,time:40");
    std::fs::write(&crash_file, &crash).unwrap();
    std::fs::write(out.join("default/crashes/README.txt"), "not an input").unwrap();

    // llvm-cov by hand on the inputs that do not crash.
    let prof = built.path("by-hand");
    std::fs::create_dir_all(&prof).unwrap();
    let run = Command::new(&built.exe)
        .args(&good_files)
        .env("LLVM_PROFILE_FILE", prof.join("%p.profraw"))
        .env("NUMFUZZ_ABORT", "0")
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", text(&run));
    let bindir = llvm_bindir();
    let profraws: Vec<PathBuf> = std::fs::read_dir(&prof).unwrap().flatten().map(|e| e.path()).collect();
    let profdata = built.path("by-hand.profdata");
    let merged = Command::new(bindir.join("llvm-profdata"))
        .args(["merge", "-sparse", "-o"])
        .arg(&profdata)
        .args(&profraws)
        .output()
        .unwrap();
    assert!(merged.status.success(), "{}", text(&merged));
    let report = Command::new(bindir.join("llvm-cov"))
        .arg("report")
        .arg(&built.exe)
        .arg(format!("-instr-profile={}", profdata.display()))
        .arg("-show-functions")
        .arg(built.path("lib.c"))
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", text(&report));
    let report = String::from_utf8_lossy(&report.stdout).into_owned();
    let classify = report_branches(&report, "classify");
    let helper = report_branches(&report, "helper");
    let file = report_branches(&report, "TOTAL");
    // if(&&) 2 regions, 3 switch labels, for(&&) 2 regions, ?: 1, if 1 = 9 regions.
    assert_eq!(classify.0, 18, "{report}");
    assert!(classify.1 > 10 && classify.1 < 18, "{report}");

    let out_s = out.to_str().unwrap();
    let exe = built.exe.to_str().unwrap();
    // Default scope: the function the harness calls once per input (helper runs only for n == 7).
    let inferred = json_report(&numfuzz_cov(&[
        out_s,
        "--target",
        exe,
        "--format",
        "json",
        "--time-to-final",
    ]));
    assert_eq!(inferred["scope"]["kind"], "function");
    assert_eq!(inferred["scope"]["name"], "classify");
    assert_eq!(inferred["scope"]["inferred"], true);
    assert_eq!(covered_total(&inferred), classify);
    assert_eq!(
        inferred["missed"].as_array().unwrap().len() as u64,
        classify.0 - classify.1
    );
    assert_eq!(inferred["inputs"]["queue"], 4);
    let lost = inferred["lost"].as_array().unwrap();
    assert_eq!(lost.len(), 1, "{inferred}");
    assert_eq!(lost[0]["path"].as_str().unwrap(), crash_file.to_str().unwrap());
    assert!(lost[0]["reason"].as_str().unwrap().contains("signal 11"), "{inferred}");
    // Each good input adds outcomes, so only all three reach the final coverage.
    assert_eq!(inferred["time_to_final"]["time_ms"], 20, "{inferred}");

    let named = json_report(&numfuzz_cov(&[
        out_s,
        "--target",
        exe,
        "--function",
        "helper",
        "--format",
        "json",
    ]));
    assert_eq!(named["scope"]["inferred"], false);
    assert_eq!(covered_total(&named), helper);

    let whole = json_report(&numfuzz_cov(&[
        out_s, "--target", exe, "--file", "lib.c", "--format", "json",
    ]));
    assert_eq!(whole["scope"]["kind"], "file");
    assert_eq!(covered_total(&whole), file);

    // The table says which scope the number has.
    let table = numfuzz_cov(&[out_s, "--target", exe]);
    assert!(table.status.success(), "{}", text(&table));
    let t = text(&table);
    assert!(t.contains("scope:    function classify ("), "{t}");
    assert!(
        t.contains(&format!("branches: {}/{} outcomes covered", classify.1, classify.0)),
        "{t}"
    );
}

#[test]
fn bad_arguments_get_one_line_that_says_what_to_do() {
    let fuzz_build = compile("plain", &[("harness.c", HARNESS), ("lib.c", LIB)], &["-O0"], &[]);
    let out = fuzz_build.path("out");
    std::fs::create_dir_all(out.join("default/queue")).unwrap();
    std::fs::write(out.join("default/queue/id:000000,time:0"), input(1.0, 1)).unwrap();
    let exe = fuzz_build.exe.to_str().unwrap();

    let o = numfuzz_cov(&[out.to_str().unwrap(), "--target", exe]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("is not a coverage build") && text(&o).contains("NUMFUZZ_CC_COVERAGE=1"),
        "{}",
        text(&o)
    );

    let empty = fuzz_build.path("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let o = numfuzz_cov(&[empty.to_str().unwrap(), "--target", exe]);
    assert!(!o.status.success());
    assert!(text(&o).contains("holds no campaign instance"), "{}", text(&o));

    let o = numfuzz_cov(&[out.to_str().unwrap(), "--target", &format!("{exe}-missing")]);
    assert!(!o.status.success());
    assert!(text(&o).contains("does not exist"), "{}", text(&o));
}

#[test]
fn an_unknown_function_is_named_in_the_error() {
    let built = compile(
        "cov2",
        &[("lib.c", LIB), ("harness.c", HARNESS)],
        &["-O0"],
        &[("NUMFUZZ_CC_COVERAGE", "1")],
    );
    let out = built.path("out");
    std::fs::create_dir_all(out.join("q/queue")).unwrap();
    std::fs::write(out.join("q/queue/id:000000,time:0"), input(1.0, 1)).unwrap();
    let o = numfuzz_cov(&[
        out.to_str().unwrap(),
        "--target",
        built.exe.to_str().unwrap(),
        "--function",
        "fdlibm_sin",
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("no function `fdlibm_sin`"), "{}", text(&o));
    assert_eq!(text(&o).trim().lines().count(), 1, "{}", text(&o));
}
