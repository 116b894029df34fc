//! `numfuzz triage --format html` in a real browser: a campaign laid out by hand (one spurious
//! overflow the shadow build judges a bug, and its `exceptions.jsonl`), its page loaded by
//! headless Chromium, which must show the bug's site and the chart, and draw a screenshot.

use numfuzz_abi::kind::ExceptionKind;
use numfuzz_outdir::ExceptionRecord;
use std::path::Path;
use std::process::{Command, Output};
use testkit::{both, compile_with_taint_and_shadow, f64s, numfuzz, procs, reports, HandCampaign};

/// `scaled` overflows for |x| > 1.8e8 although its result is x (line 3).
const HARNESS: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64");
__attribute__((noinline)) static double scaled(double x) { return x * 1e300 / 1e300; }
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  NUMFUZZ_RESULT(scaled(nf_f64(data, size, 0)));
  return 0;
}
"#;

/// Runs Chromium headless on `page` with `args`; fails, saying how to install it, when there
/// is none.
fn chromium(page: &Path, args: &[&str], profile: &Path) -> Output {
    match Command::new("chromium").arg("--version").output() {
        Ok(o) if o.status.success() => {}
        _ => panic!("chromium is not installed (the HTML report's browser test needs it): run scripts/setup.sh"),
    }
    let mut cmd = Command::new("chromium");
    cmd.args(["--headless", "--no-sandbox", "--disable-gpu"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()));
    let o = procs::output(&mut cmd, &[]);
    assert!(o.status.success(), "chromium {args:?} failed: {}", both(&o));
    o
}

/// An `exceptions.jsonl` for `dir` as a campaign writes it: the overflow found at 0.4 s, and
/// its escape into the result at 1.2 s.
fn write_records(dir: &Path, exe: &Path) {
    let site = reports(exe, &f64s(&[1e10]))
        .into_iter()
        .find(|e| e.kind == ExceptionKind::Overflow)
        .expect("1e10 overflows")
        .site;
    let lines: Vec<String> = [(400, false), (1200, true)]
        .into_iter()
        .map(|(time_ms, escape)| {
            let r = ExceptionRecord {
                time_ms,
                kind: ExceptionKind::Overflow,
                site: site.clone(),
                input: "crashes/id:000000".into(),
                escape,
            };
            serde_json::to_string(&r).unwrap()
        })
        .collect();
    std::fs::write(dir.join("exceptions.jsonl"), lines.join("\n") + "\n").unwrap();
}

#[test]
fn the_html_report_shows_the_bug_and_the_chart_in_a_browser() {
    let built = compile_with_taint_and_shadow("scaled", &[("scaled.c", HARNESS)], &["-O1"]);
    let root = built.path("out");
    let c = HandCampaign::new(&root, &built.exe, &["default"]);
    c.crash("default", "id:000000,kind:Overflow", &f64s(&[1e10]));
    write_records(&root.join("default"), &built.exe);
    let page = built.path("page.html");
    let o = numfuzz(&[
        "triage",
        root.to_str().unwrap(),
        "--format",
        "html",
        "--output",
        page.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", both(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("1 bug in 1 finding"), "{html}");

    let profile = built.path("chromium-profile");
    let dom = chromium(&page, &["--dump-dom"], &profile);
    let dom = String::from_utf8_lossy(&dom.stdout).into_owned();
    assert!(dom.contains("scaled.c:3:"), "the bug's site is not in the DOM:\n{dom}");
    assert!(
        dom.contains("<svg") && dom.contains("<polyline"),
        "no chart in the DOM:\n{dom}"
    );
    let bug = dom.find("scaled.c:3:").unwrap();
    assert!(bug < dom.find("<svg").unwrap(), "the bug list comes first:\n{dom}");

    let png = built.path("page.png");
    chromium(
        &page,
        &[&format!("--screenshot={}", png.display()), "--window-size=1280,2000"],
        &profile,
    );
    let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
    assert!(size > 10_000, "the screenshot {} has {size} bytes", png.display());
}
