//! `numfuzz triage --repro DIR`: a bug's reproducer, built with plain clang against the
//! library built without numfuzz-cc, exits 1 while the bug is there and 0 once it is fixed.

use serde_json::Value;
use std::path::Path;
use std::process::Command;
use testkit::{both, compile_with_taint, numfuzz, HandCampaign};

/// A small library: `scaled_exp` overflows in `2*exp(x)` where the true value `exp(x)/x` is
/// finite, and `magnitude` chooses a NaN in a branch after `x*x` overflowed, where |x| is.
const LIBRARY: &str = r#"#include <math.h>
double scaled_exp(double x) {
  double e = 2.0 * exp(x);
  return e / (2.0 * x);
}
double magnitude(double x) {
  double t = x * x;
  if (!isfinite(t)) return NAN;
  return sqrt(t);
}
"#;

/// The same library with both defects repaired.
const FIXED_LIBRARY: &str = r#"#include <math.h>
double scaled_exp(double x) { return exp(x - log(x)); }
double magnitude(double x) { return fabs(x); }
"#;

const HARNESS: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("u8,f64");
NUMFUZZ_FUNCTION("lib");
double scaled_exp(double x);
double magnitude(double x);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 1);
  double r = nf_u8(data, size, 0) == 1 ? scaled_exp(x) : magnitude(x);
  NUMFUZZ_RESULT(r);
  NUMFUZZ_RESULT_NAMED("x", x);
  return 0;
}
"#;

fn input(case: u8, x: f64) -> Vec<u8> {
    let mut b = vec![case];
    b.extend_from_slice(&x.to_le_bytes());
    b
}

/// Builds `repro` (a reproducer's C file) with plain clang against `library` and runs it.
fn build_and_run(dir: &Path, harness: &Path, library: &str, repro: &Path) -> std::process::Output {
    let lib = dir.join("plain-lib.c");
    std::fs::write(&lib, library).unwrap();
    let exe = dir.join("repro-exe");
    let include = repro.parent().unwrap();
    let cc = Command::new("clang-19")
        .arg(format!("-I{}", include.display()))
        .args([harness, &lib, repro])
        .args(["-lm", "-o"])
        .arg(&exe)
        .output()
        .expect("run clang-19");
    assert!(cc.status.success(), "plain clang: {}", both(&cc));
    Command::new(&exe).output().unwrap()
}

#[test]
fn a_reproducer_built_with_plain_clang_fails_while_the_bug_is_there() {
    let built = compile_with_taint("lib", &[("lib.c", LIBRARY), ("harness.c", HARNESS)], &["-O1"]);
    let out = built.path("out");
    let c = HandCampaign::new(&out, &built.exe, &["default"]);
    c.crash("default", "id:000000,time:1", &input(1, 709.9));
    c.crash("default", "id:000001,time:2", &input(2, 3e200));
    let repro_dir = built.path("repro");
    let o = numfuzz(&[
        "triage",
        out.to_str().unwrap(),
        "--repro",
        repro_dir.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", both(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let bugs = doc["bugs"].as_array().unwrap();
    assert_eq!(bugs.len(), 2, "{doc:#}");
    // The overflow of exp(709.9) is checked by its repair: the stand-in DBL_MAX overflows again
    // in `2.0 * DBL_MAX`, which the repair's cascade repairs too, and exp(x)/x comes out finite.
    let exp = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["operation"]["op"] == "exp")
        .expect("the exp overflow");
    assert_eq!(
        (&exp["class"], &exp["root_by"], &exp["via"]),
        (&"bug".into(), &"labels".into(), &"data".into()),
        "{exp:#}"
    );
    let harness = built.path("harness.c").canonicalize().unwrap();
    for f in doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["class"] == "bug")
    {
        let r = &f["reproducer"];
        let path = Path::new(r["path"].as_str().unwrap());
        assert!(path.starts_with(repro_dir.canonicalize().unwrap()), "{r:#}");
        let build = r["build"].as_str().unwrap();
        assert!(
            build.contains(harness.to_str().unwrap()),
            "the harness source is named: {build}"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let x = f["input"]["fields"][1]["value"].as_str().unwrap();
        assert!(
            text.contains(&format!("field 1 f64: {x} = ")),
            "the fields in a comment: {text}"
        );
        // Plain clang against the library as it is: the bug is there.
        let run = build_and_run(built.dir.path(), &harness, LIBRARY, path);
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert_eq!(run.status.code(), Some(1), "{}: {stdout}", f["id"]);
        assert!(stdout.contains("BUG: still there"), "{stdout}");
        assert!(stdout.contains("result 0 = "), "{stdout}");
        // And against the repaired library: fixed.
        let run = build_and_run(built.dir.path(), &harness, FIXED_LIBRARY, path);
        assert_eq!(
            run.status.code(),
            Some(0),
            "{}: {}",
            f["id"],
            String::from_utf8_lossy(&run.stdout)
        );
    }
    // The table shows each bug's build line.
    let o = numfuzz(&["triage", out.to_str().unwrap(), "--repro", repro_dir.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("reproducer  cc -I"), "{text}");
    assert!(repro_dir.join("numfuzz.h").exists() && repro_dir.join("numfuzz_abi.h").exists());
}
