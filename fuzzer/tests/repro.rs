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

/// The one bug of a triage's JSON document.
fn the_bug(doc: &Value) -> &Value {
    let bugs: Vec<&Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["class"] == "bug")
        .collect();
    assert_eq!(bugs.len(), 1, "one bug: {doc:#}");
    bugs[0]
}

#[test]
fn a_minimised_bugs_reproducer_embeds_the_minimised_input() {
    let built = compile_with_taint("lib", &[("lib.c", LIBRARY), ("harness.c", HARNESS)], &["-O1"]);
    let out = built.path("out");
    let c = HandCampaign::new(&out, &built.exe, &["default"]);
    let original = 709.7827128933839_f64;
    let crash = c.crash("default", "id:000000,time:1", &input(1, original));
    let repro_dir = built.path("repro");
    let o = numfuzz(&[
        "triage",
        out.to_str().unwrap(),
        "--minimize",
        "--repro",
        repro_dir.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", both(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = the_bug(&doc);
    let shown = f["minimized"]["fields"][1]["value"]
        .as_str()
        .expect("a minimised input");
    let campaign = f["input"]["fields"][1]["value"].as_str().unwrap();
    assert_eq!(campaign.parse::<f64>().unwrap(), original);
    let minimised: f64 = shown.parse().unwrap();
    assert_ne!(minimised, original, "{f:#}");
    let path = Path::new(f["reproducer"]["path"].as_str().unwrap());
    let text = std::fs::read_to_string(path).unwrap();
    // The comment shows the minimised input's fields, says it is the minimised one and where the
    // campaign's original is, and never shows the original's value.
    assert!(text.contains(&format!("field 1 f64: {shown} = ")), "{text}");
    assert!(text.contains("the minimised input the report shows"), "{text}");
    assert!(
        text.contains(&format!("the campaign's original is {}", out.join(&crash).display())),
        "{text}"
    );
    assert!(!text.contains(campaign), "the original's {campaign} in: {text}");
    // The bytes embedded are the minimised input's.
    let bytes: Vec<String> = input(1, minimised).iter().map(|b| format!("0x{b:02x}")).collect();
    assert!(
        text.contains(&format!("input[9] = {{{}}};", bytes.join(", "))),
        "{text}"
    );
    // And the program runs the harness on it: the named result `x` is the minimised value.
    let harness = built.path("harness.c").canonicalize().unwrap();
    let run = build_and_run(built.dir.path(), &harness, LIBRARY, path);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(1), "{stdout}");
    let x = stdout
        .lines()
        .find_map(|l| l.strip_prefix("x = "))
        .unwrap_or_else(|| panic!("x printed: {stdout}"));
    assert_eq!(x.parse::<f64>().unwrap(), minimised, "{stdout}");
}

#[test]
fn the_build_line_links_repro_link_as_given_and_builds_and_fails_as_printed() {
    let built = compile_with_taint("lib", &[("lib.c", LIBRARY), ("harness.c", HARNESS)], &["-O1"]);
    let out = built.path("out");
    let c = HandCampaign::new(&out, &built.exe, &["default"]);
    c.crash("default", "id:000000,time:1", &input(1, 709.9));
    c.crash("default", "id:000001,time:2", &input(2, 3e200));
    // The plain library: the same source built with plain cc into an archive, in a directory
    // whose name the shell would split, so the link arguments must be passed as shell words.
    let lib_dir = built.path("plain lib");
    std::fs::create_dir_all(&lib_dir).unwrap();
    std::fs::write(lib_dir.join("lib.c"), LIBRARY).unwrap();
    let obj = lib_dir.join("lib.o");
    let cc = Command::new("cc")
        .arg("-c")
        .arg(lib_dir.join("lib.c"))
        .arg("-o")
        .arg(&obj)
        .output()
        .expect("run cc");
    assert!(cc.status.success(), "cc: {}", both(&cc));
    let ar = Command::new("ar")
        .arg("rcs")
        .arg(lib_dir.join("libplain.a"))
        .arg(&obj)
        .output()
        .expect("run ar");
    assert!(ar.status.success(), "ar: {}", both(&ar));
    let link = format!("-L'{}' -lplain", lib_dir.display());
    let repro_dir = built.path("repro");
    let triage = |extra: &[&str]| {
        let mut args = vec!["triage", out.to_str().unwrap(), "--repro", repro_dir.to_str().unwrap()];
        args.extend_from_slice(extra);
        numfuzz(&args)
    };
    let o = triage(&["--repro-link", &link, "--format", "json"]);
    assert!(o.status.success(), "{}", both(&o));
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("--repro-link"),
        "no hint: {}",
        both(&o)
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let bugs: Vec<&Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["class"] == "bug")
        .collect();
    assert_eq!(bugs.len(), 2, "{doc:#}");
    for f in bugs {
        let build = f["reproducer"]["build"].as_str().unwrap();
        assert!(build.contains(&format!(" {link} -lm -o ")), "{build}");
        assert!(!build.contains("PLAIN_LIBRARY"), "{build}");
        let text = std::fs::read_to_string(f["reproducer"]["path"].as_str().unwrap()).unwrap();
        assert!(
            text.contains(&format!(" *   {build}\n")),
            "the line in the comment: {text}"
        );
        // The line as printed, through the shell: it builds, and the program says the bug is there.
        let run = Command::new("sh").args(["-c", build]).output().unwrap();
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert_eq!(run.status.code(), Some(1), "{}: {}", f["id"], both(&run));
        assert!(stdout.contains("BUG: still there"), "built and ran: {}", both(&run));
        assert!(repro_dir.join(f["id"].as_str().unwrap()).exists());
    }
    // The Markdown report's reproducer block has the same line.
    let o = triage(&["--repro-link", &link, "--format", "md"]);
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(
        md.contains(&format!(" {link} -lm -o ")) && !md.contains("PLAIN_LIBRARY"),
        "{md}"
    );
    // Without it: the placeholder, said in the report, and a one-line hint.
    let o = triage(&["--format", "md"]);
    assert!(o.status.success(), "{}", both(&o));
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(
        md.contains(" PLAIN_LIBRARY -lm -o ") && md.contains("PLAIN_LIBRARY: its link arguments"),
        "{md}"
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    let hint: Vec<&str> = stderr.lines().filter(|l| l.contains("--repro-link")).collect();
    assert_eq!(hint.len(), 1, "{stderr}");
    // Bad values and --repro-link without --repro: a one-line error.
    for bad in [&["--repro-link", " "][..], &["--repro-link", "-lfoo\n-lbar"]] {
        let o = triage(bad);
        assert!(!o.status.success());
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("--repro-link"),
            "{}",
            both(&o)
        );
    }
    let o = numfuzz(&["triage", out.to_str().unwrap(), "--repro-link", "-lplain"]);
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--repro-link needs --repro"), "{stderr}");
}
