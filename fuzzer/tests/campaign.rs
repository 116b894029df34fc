//! `numfuzz run` end to end: real C compiled with numfuzz-cc, real campaigns of a few
//! seconds, assertions on what lands in the output directory.

use numfuzz_abi::ExceptionKind;
use numfuzz_outdir::{ExceptionRecord, InstanceDir};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use testkit::campaign::{self, found, one_at_a_time, STEEP, STEEP_LINE};
use testkit::procs::Session;
use testkit::{both, compile, numfuzz, Tools};

const CRASHY: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0);
  if (x > 1000.0 && x < 1e6) { volatile int *p = 0; *p = 1; }
  if (x < -1000.0 && x > -1e6) { for (volatile int i = 0;; i++) {} }
  volatile double y = x * 3.0; (void)y;
  return 0;
}
"#;

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.retain(|n| n.starts_with("id:"));
    v.sort();
    v
}

fn exceptions(instance: &Path) -> Vec<ExceptionRecord> {
    InstanceDir::at(instance).exceptions()
}

fn has_overflow_at(instance: &Path, line: u32) -> bool {
    found(&InstanceDir::at(instance), ExceptionKind::Overflow, None, line)
}

fn assert_afl_shaped(instance: &Path) {
    for sub in ["queue", "crashes", "hangs"] {
        assert!(instance.join(sub).is_dir(), "{} lacks {sub}/", instance.display());
    }
    for f in ["fuzzer_stats", "plot_data", "cmdline"] {
        assert!(instance.join(f).is_file(), "{} lacks {f}", instance.display());
    }
    let stats = std::fs::read_to_string(instance.join("fuzzer_stats")).unwrap();
    for key in [
        "start_time",
        "execs_done",
        "execs_per_sec",
        "corpus_count",
        "saved_crashes",
        "saved_hangs",
        "fuzzer_pid",
    ] {
        assert!(
            stats.lines().any(|l| l.starts_with(key)),
            "fuzzer_stats lacks {key}:\n{stats}"
        );
    }
    let plot = std::fs::read_to_string(instance.join("plot_data")).unwrap();
    assert!(
        plot.starts_with("# relative_time, cycles_done"),
        "plot_data header: {plot}"
    );
    // numfuzz's columns after AFL++'s: the distinct exceptions by kind and the escapes, as
    // fuzzer_stats counts them at the end.
    let header = plot.lines().next().unwrap();
    assert!(
        header.ends_with("edges_found, fp_invalid, fp_divbyzero, fp_overflow, fp_underflow, fp_escapes"),
        "{header}"
    );
    let last: Vec<&str> = plot.lines().last().unwrap().split(", ").collect();
    assert_eq!(last.len(), 18, "{plot}");
    let exceptions: u64 = last[13..17].iter().map(|v| v.parse::<u64>().unwrap()).sum();
    assert_eq!(exceptions, stat(instance, "fp_exceptions"), "{plot}");
    assert!(
        !files(&instance.join("queue")).is_empty(),
        "empty queue in {}",
        instance.display()
    );
}

fn stat(instance: &Path, key: &str) -> u64 {
    testkit::campaign::stat(&InstanceDir::at(instance), key)
}

#[test]
fn errbits_guides_to_a_narrow_overflow_window() {
    let _turn = one_at_a_time();
    let built = compile("steep", &[("steep.c", STEEP)], &["-O1"], &[]);
    let exe = built.exe.to_str().unwrap().to_string();
    let out = built.path("out");
    let o = numfuzz(&["run", "-o", out.to_str().unwrap(), "-V", "30", "--", &exe]);
    assert!(o.status.success(), "{}", both(&o));
    let inst = out.join("default");
    assert_afl_shaped(&inst);
    assert!(
        has_overflow_at(&inst, STEEP_LINE),
        "no Overflow at steep.c:{STEEP_LINE} in 30 s with ErrBits:\n{}\n{:?}",
        both(&o),
        exceptions(&inst)
    );
    let crash = files(&inst.join("crashes"))
        .into_iter()
        .find(|n| n.contains(&format!("kind:Overflow,site:steep.c:{STEEP_LINE}:")))
        .expect("a crash file named by kind and site");
    // The saved input really is in the window: replaying it reports the same exception.
    let reports = testkit::reports(&built.exe, &std::fs::read(inst.join("crashes").join(&crash)).unwrap());
    assert!(reports
        .iter()
        .any(|r| r.kind.name() == "Overflow" && r.site.line == STEEP_LINE && r.site.op.name() == "fmul"));
}

/// An overflow in a window 5e-4 wide (about 1e-7 of x) around a centre that is not a constant of the program
/// (so no dictionary or comparison leads there), behind straight-line code (no edge changes
/// on the way): only the ErrBits distance of `bump * 1e308` to DBL_MAX points at it.
const HIDDEN_BUMP: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64");
static volatile double k = 1234.5678;
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0);
  double d = (x - k * 1.1) * 1e3;
  double bump = 1.9 / (1.0 + d * d);
  volatile double y = bump * 1e308;
  (void)y;
  return 0;
}
"#;

/// The line of `bump * 1e308` in HIDDEN_BUMP.
const HIDDEN_BUMP_LINE: u32 = 8;

#[test]
fn without_errbits_the_hidden_window_is_not_reached() {
    let _turn = one_at_a_time();
    let built = compile("bump", &[("bump.c", HIDDEN_BUMP)], &["-O1"], &[]);
    let exe = built.exe.to_str().unwrap().to_string();
    // Same target, same seeds (built from the signature), same budget; only ErrBits differs.
    // Measured on 2 cores: found in 0.3-2 s with ErrBits (once in 5 runs not within 20 s,
    // while a build ran beside it), in none of 4 runs of 30 s without.
    let campaign = |name: &str, extra: &[&str]| {
        let out = built.path(name);
        let mut args = vec!["run", "-o", out.to_str().unwrap(), "-V", "30", "--no-tui"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", &exe]);
        let o = numfuzz(&args);
        assert!(o.status.success(), "{}", both(&o));
        out.join("default")
    };
    let with = campaign("out", &[]);
    assert!(
        has_overflow_at(&with, HIDDEN_BUMP_LINE),
        "no Overflow at bump.c:{HIDDEN_BUMP_LINE} in 30 s with ErrBits: {:?}",
        exceptions(&with)
    );
    let without = campaign("out-no-errbits", &["--no-errbits"]);
    // The campaign itself ran: the far-away overflow of `d * d` is found either way.
    assert!(has_overflow_at(&without, 7), "{:?}", exceptions(&without));
    assert!(
        !has_overflow_at(&without, HIDDEN_BUMP_LINE),
        "Overflow at bump.c:{HIDDEN_BUMP_LINE} reached without ErrBits: the ablation shows no effect"
    );
    // And no input was kept for ErrBits progress when ErrBits is off.
    let queue = files(&without.join("queue"));
    assert!(!queue.iter().any(|n| n.contains("+errbits")), "{queue:?}");
}

/// `866.0k` -> 866000, `1.23M` -> 1230000, `42` -> 42.
fn human_number(text: &str) -> f64 {
    let (digits, scale) = match text.chars().last() {
        Some('k') => (&text[..text.len() - 1], 1e3),
        Some('M') => (&text[..text.len() - 1], 1e6),
        _ => (text, 1.0),
    };
    digits.parse::<f64>().expect("a number") * scale
}

#[test]
fn the_status_line_shows_the_current_counts() {
    let _turn = one_at_a_time();
    let built = compile("steep", &[("steep.c", STEEP)], &["-O1"], &[]);
    let out = built.path("out");
    let o = campaign::run(&built.exe, &out, 20, &[]);
    assert!(o.status.success(), "{}", both(&o));
    // `[numfuzz] 10s/16s  execs 866.0k (86.6k/s)  ...`: (elapsed, executions) of every line.
    let lines: Vec<(u64, f64)> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("[numfuzz] ")?;
            let elapsed = rest.split('s').next()?.parse().ok()?;
            let execs = rest.split("execs ").nth(1)?.split(' ').next()?;
            Some((elapsed, human_number(execs)))
        })
        .collect();
    // The monitor prints about every 6 s once the clients have reported.
    let periodic: Vec<&(u64, f64)> = lines.iter().filter(|(t, _)| *t >= 3).collect();
    assert!(periodic.len() >= 2, "status lines: {lines:?}\n{}", both(&o));
    // Lines seconds apart report new executions, not a count repeated from an earlier line.
    for w in periodic.windows(2) {
        if w[1].0 > w[0].0 + 2 {
            assert!(w[1].1 > w[0].1, "a stale count: {w:?} in {lines:?}");
        }
    }
}

#[test]
fn two_cores_give_two_afl_instances_that_both_fuzz() {
    let _turn = one_at_a_time();
    let built = compile("steep", &[("steep.c", STEEP)], &["-O1"], &[]);
    let out = built.path("out");
    let o = campaign::run(&built.exe, &out, 20, &["--cores", "0-1"]);
    assert!(o.status.success(), "{}", both(&o));
    let instances: Vec<PathBuf> = ["core0", "core1"].iter().map(|n| out.join(n)).collect();
    for inst in &instances {
        assert_afl_shaped(inst);
        assert!(stat(inst, "execs_done") > 1000, "{} barely ran", inst.display());
    }
    assert!(
        instances.iter().any(|i| has_overflow_at(i, STEEP_LINE)),
        "neither instance found the overflow:\n{}",
        both(&o)
    );
    // afl-whatsup (Debian's AFL++) reads the directory.
    let w = Command::new("afl-whatsup")
        .arg("-s")
        .arg(&out)
        .output()
        .expect("afl-whatsup (scripts/setup.sh installs afl++)");
    let wt = both(&w);
    assert!(
        wt.contains("Dead or remote : 2"),
        "afl-whatsup did not see both instances:\n{wt}"
    );
    // afl-plot (with gnuplot, both from scripts/setup.sh) draws an instance's plot_data.
    let plots = out.join("plots");
    let p = Command::new("afl-plot")
        .arg(&instances[0])
        .arg(&plots)
        .output()
        .expect("afl-plot (scripts/setup.sh installs afl++ and gnuplot-nox)");
    assert!(p.status.success(), "afl-plot failed:\n{}", both(&p));
    for png in ["exec_speed.png", "edges.png", "high_freq.png"] {
        let size = std::fs::metadata(plots.join(png)).map(|m| m.len()).unwrap_or(0);
        assert!(size > 1000, "afl-plot drew no {png}:\n{}", both(&p));
    }
}

#[test]
fn resume_keeps_findings_and_writes_nothing_twice() {
    let _turn = one_at_a_time();
    let built = compile("crashy", &[("crashy.c", CRASHY)], &["-O1"], &[]);
    let out = built.path("out");
    let exe = built.exe.to_str().unwrap().to_string();
    let o = numfuzz(&["run", "-o", out.to_str().unwrap(), "-V", "8", "-t", "100", "--", &exe]);
    assert!(o.status.success(), "{}", both(&o));
    let inst = out.join("default");
    let (queue1, crashes1, exc1) = (
        files(&inst.join("queue")),
        files(&inst.join("crashes")),
        exceptions(&inst),
    );
    assert!(!crashes1.is_empty());
    let o = numfuzz(&["run", "-o", out.to_str().unwrap(), "-V", "5", "-t", "100", "--", &exe]);
    assert!(o.status.success(), "{}", both(&o));
    assert!(both(&o).contains("(resuming)"), "{}", both(&o));
    let (queue2, crashes2, exc2) = (
        files(&inst.join("queue")),
        files(&inst.join("crashes")),
        exceptions(&inst),
    );
    for f in &queue1 {
        assert!(queue2.contains(f), "queue entry {f} lost on resume");
    }
    for f in &crashes1 {
        assert!(crashes2.contains(f), "finding {f} lost on resume");
    }
    assert_eq!(exc2[..exc1.len()], exc1[..], "exceptions.jsonl rewritten");
    let mut pairs: Vec<(String, String)> = exc2
        .iter()
        .map(|e| (e.kind.to_string(), format!("{}:{}", e.site.line, e.site.column)))
        .collect();
    let n = pairs.len();
    pairs.sort();
    pairs.dedup();
    assert_eq!(pairs.len(), n, "an exception recorded twice after resume: {exc2:?}");
}

#[test]
fn a_segfault_and_a_hang_are_saved_and_fuzzing_goes_on() {
    let _turn = one_at_a_time();
    let built = compile("crashy", &[("crashy.c", CRASHY)], &["-O1"], &[]);
    let out = built.path("out");
    let o = campaign::run(&built.exe, &out, 15, &["-t", "100"]);
    assert!(o.status.success(), "{}", both(&o));
    let inst = out.join("default");
    assert!(
        stat(&inst, "exec_timeout") < 100,
        "under -t the limit of a run is calibrated too"
    );
    let crashes = files(&inst.join("crashes"));
    let crash = crashes
        .iter()
        .find(|n| n.contains(",crash"))
        .unwrap_or_else(|| panic!("no crash saved: {crashes:?}"));
    let hang = files(&inst.join("hangs")).into_iter().next().expect("no hang saved");
    let execs_at = |name: &str| {
        name.split(',')
            .find_map(|p| p.strip_prefix("execs:"))
            .unwrap()
            .parse::<u64>()
            .unwrap()
    };
    assert!(
        stat(&inst, "execs_done") > execs_at(crash).max(execs_at(&hang)),
        "fuzzing stopped at the crash"
    );
    // The saved inputs reproduce: a signal, and a run past the time limit.
    let bytes = std::fs::read(inst.join("crashes").join(crash)).unwrap();
    let r = testkit::run(&built.exe, &[], &bytes, &[("NUMFUZZ_ABORT", "0")]);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(r.status.signal(), Some(libc::SIGSEGV));
    let x = f64::from_le_bytes(
        std::fs::read(inst.join("hangs").join(&hang)).unwrap()[..8]
            .try_into()
            .unwrap(),
    );
    assert!(x < -1000.0 && x > -1e6, "hang input {x} is not in the looping range");
}

/// Inputs in (1000, 1e6) take 150 ms of wall clock, and inputs in (-1e6, -1000) never end.
const SLOW_OR_HANGING: &str = r#"#include <numfuzz.h>
#include <time.h>
NUMFUZZ_SIGNATURE("f64");
static long elapsed_ms(const struct timespec *from) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - from->tv_sec) * 1000 + (now.tv_nsec - from->tv_nsec) / 1000000;
}
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0);
  if (x > 1000.0 && x < 1e6) {
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (elapsed_ms(&start) < 150) {}
  }
  if (x < -1000.0 && x > -1e6) { for (volatile int i = 0;; i++) {} }
  volatile double y = x * 3.0; (void)y;
  return 0;
}
"#;

/// Without `-t` the limit is calibrated from the seeds (20 ms here). A time-out under it is
/// run again at the full limit (1000 ms) before it is saved, as AFL++ does: the 150 ms inputs
/// end then and are not hangs; the endless loop is saved.
fn only_confirmed_hangs_are_saved(extra: &[&str]) {
    let _turn = one_at_a_time();
    let built = compile("slow", &[("slow.c", SLOW_OR_HANGING)], &["-O1"], &[]);
    let out = built.path("out");
    let o = campaign::run(&built.exe, &out, 20, extra);
    assert!(o.status.success(), "{}", both(&o));
    let inst = out.join("default");
    assert!(
        stat(&inst, "exec_timeout") < 150,
        "the calibrated limit does not cut the slow inputs short"
    );
    assert_eq!(
        stat(&inst, "hang_timeout_ms"),
        1000,
        "the limit hangs were confirmed at"
    );
    let hangs = hang_values(&inst);
    assert!(!hangs.is_empty(), "the endless loop was not saved as a hang");
    for x in &hangs {
        assert!(*x < -1000.0 && *x > -1e6, "x = {x} is saved as a hang but ends");
    }
    assert_eq!(stat(&inst, "saved_hangs"), hangs.len() as u64);
    assert!(
        stat(&inst, "hangs_dismissed") >= 1,
        "no slow input was run again at the full limit"
    );
}

#[test]
fn an_in_process_campaign_saves_only_confirmed_hangs() {
    only_confirmed_hangs_are_saved(&[]);
}

#[test]
fn a_forkserver_campaign_saves_only_confirmed_hangs() {
    only_confirmed_hangs_are_saved(&["--executor", "forkserver"]);
}

/// The `f64` each saved hang starts with.
fn hang_values(inst: &Path) -> Vec<f64> {
    files(&inst.join("hangs"))
        .iter()
        .map(|hang| {
            let bytes = std::fs::read(inst.join("hangs").join(hang)).unwrap();
            f64::from_le_bytes(bytes[..8].try_into().unwrap())
        })
        .collect()
}

/// Line 6 underflows for a small `y`; with a large `x` the Overflow at line 5 comes first. The
/// seed raises both.
const UNDERFLOW_AFTER_AN_OVERFLOW: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64,f64");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0), y = nf_f64(data, size, 1);
  volatile double big = x * 1e300;
  volatile double u = y * 1e-300;
  NUMFUZZ_RESULT(big + u);
  return 0;
}
"#;

/// A (site, kind) first met after another exception is saved once more when an input raises it
/// before any Invalid, DivByZero or Overflow (`+alone`), so that triage can judge it on its own:
/// GSL's lnbeta Underflow at beta.c:67 was met only after a gamma Overflow and classed as that
/// Overflow's consequence, where afl-fuzz's input showed it a bug of its own.
#[test]
fn an_exception_first_met_after_another_is_saved_again_on_its_own() {
    let _turn = one_at_a_time();
    let built = compile("alone", &[("alone.c", UNDERFLOW_AFTER_AN_OVERFLOW)], &["-O1"], &[]);
    let seeds = built.path("seeds");
    std::fs::create_dir_all(&seeds).unwrap();
    let seed: Vec<u8> = [1e200f64, 1e-10].iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(seeds.join("both"), seed).unwrap();
    let out = built.path("out");
    let o = campaign::run(&built.exe, &out, 8, &["-i", seeds.to_str().unwrap()]);
    assert!(o.status.success(), "{}", both(&o));
    let instance = InstanceDir::at(&out.join("default"));
    assert!(
        instance
            .exceptions()
            .iter()
            .any(|e| e.kind == ExceptionKind::Underflow && e.site.line == 6 && e.input.contains("orig:seed")),
        "the seed's Underflow after the Overflow: {:#?}",
        instance.exceptions()
    );
    let crashes = out.join("default/crashes");
    let names = files(&crashes);
    let alone: Vec<&String> = names
        .iter()
        .filter(|n| n.contains("kind:Underflow,site:alone.c:6:") && n.ends_with(",+alone"))
        .collect();
    assert_eq!(alone.len(), 1, "{names:?}");
    let bytes = std::fs::read(crashes.join(alone[0])).unwrap();
    let x = f64::from_le_bytes(bytes[..8].try_into().unwrap());
    // An infinite or NaN x raises nothing at line 5 (an infinite operand gives an exact
    // infinity), so such an input is alone too; a finite x above 1e8 overflows there.
    assert!(
        !(x.is_finite() && x.abs() * 1e300 > f64::MAX),
        "x = {x} overflows at line 5 before the Underflow"
    );
}

/// Above 2 the product overflows and the loop waits for ever for the infinity to end, as GSL's
/// hyperg_2F0 loops past its overflows. AFL++ with Overflow trapped stops at the product;
/// below -1000 the loop has no exception before it (half the doubles: a narrower window was
/// missed in a 20 s campaign of a CI run).
const LOOPS_AFTER_AN_OVERFLOW: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0);
  if (x > 2.0) {
    volatile double t = x * 1e308;
    while (t > 1.7976931348623157e308) {}
  }
  if (x < -1000.0) { for (volatile int i = 0;; i++) {} }
  return 0;
}
"#;

/// The loop past the Overflow is cut at the calibrated limit (20 ms) and run again with the
/// whole second only on edges new to time-outs, and only now and then: under `-t 1000` it was a
/// second or two per input, most of such a campaign. The first is still saved as a hang, and so
/// is the loop without an exception before it. (Without `-t`: with it, each exception-free
/// time-out is run again with the whole `-t`, as AFL++ would, and half the inputs hang here.)
/// The loops are the program's own code, so the time-outs after the seeds are cut in place and
/// the client is not restarted for them (each restart cost about 15 ms and what the client had
/// learnt).
#[test]
fn a_loop_past_an_overflow_is_saved_once_and_a_loop_without_an_exception_too() {
    let _turn = one_at_a_time();
    let built = compile("overflow_loop", &[("loop.c", LOOPS_AFTER_AN_OVERFLOW)], &["-O1"], &[]);
    let out = built.path("out");
    let o = campaign::run(&built.exe, &out, 20, &[]);
    assert!(o.status.success(), "{}", both(&o));
    let inst = out.join("default");
    assert!(
        stat(&inst, "cut_after_raise") >= 1,
        "no time-out past the Overflow was cut at the calibrated limit"
    );
    assert!(
        stat(&inst, "repeated_timeouts") >= 1,
        "no time-out of the loop below -1000 was dropped as the saved hang again"
    );
    let hangs = hang_values(&inst);
    // One: the loops past the Overflow all hit the same edges.
    let past_overflow = hangs.iter().filter(|&&x| x > 2.0).count();
    assert_eq!(past_overflow, 1, "hangs past the Overflow saved: {hangs:?}");
    assert!(
        hangs.iter().any(|&x| x < -1000.0),
        "the loop without an exception was not saved: {hangs:?}"
    );
    let starts = InstanceDir::at(&inst)
        .client_events()
        .iter()
        .filter(|e| matches!(e, numfuzz_outdir::ClientEvent::Start { .. }))
        .count() as u64;
    let timeouts = stat(&inst, "cut_after_raise") + stat(&inst, "repeated_timeouts") + hangs.len() as u64;
    assert!(
        starts * 10 <= timeouts,
        "the client started {starts} times for {timeouts} time-outs: they were not cut in place"
    );
}

/// The int field sets a loop's step count, as GSL's fermi_dirac_int's `j` does: a step count
/// near 2^20 costs milliseconds checked, a thousand times a small one, and a smaller product at
/// line 8 (closer to an Underflow) keeps such inputs in the corpus. A DivByZero waits behind a
/// comparison at line 10.
const STEPS_SET_BY_THE_INPUT: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("i32,f64");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int32_t n = nf_i32(data, size, 0);
  double y = nf_f64(data, size, 1), s = 1.0, t = 1.0;
  int steps = n & 0xfffff;
  for (int k = 0; k < steps; k++)
    s = s * 0.99999;
  if (y == 77.25)
    t = t / (y - 77.25);
  NUMFUZZ_RESULT(s + t);
  return 0;
}
"#;

/// A slow testcase's turn ends once it has run as long as the campaign's typical turn
/// (`timed_turns`), and the cheap inputs' DivByZero is still found.
#[test]
fn turns_of_slow_testcases_end_early_and_the_cheap_inputs_still_get_their_time() {
    let _turn = one_at_a_time();
    let built = compile("steps", &[("steps.c", STEPS_SET_BY_THE_INPUT)], &["-O1"], &[]);
    let instance = campaign::fuzz(&built.exe, &built.path("out"), 8, &[]);
    assert!(
        found(&instance, ExceptionKind::DivByZero, None, 10),
        "{:#?}",
        instance.exceptions()
    );
    let (timed, turns) = (
        campaign::stat(&instance, "timed_turns"),
        campaign::stat(&instance, "fast_turns") + campaign::stat(&instance, "precise_turns"),
    );
    assert!(timed >= 1, "no turn of {turns} was cut for time");
    assert!(timed < turns, "every one of {turns} turns was cut for time");
}

#[test]
fn a_target_not_built_with_numfuzz_cc_is_fuzzed_through_the_forkserver() {
    let _turn = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("prog.c");
    std::fs::write(
        &src,
        "#include <stdio.h>\n#include <stdlib.h>\nint main(int c, char **v) { char b[8] = {0}; FILE *f = fopen(v[1], \"rb\");\n\
         if (!f) return 1; size_t n = fread(b, 1, 7, f); fclose(f);\n\
         if (n > 2 && b[0] == 'N' && b[1] == 'F') abort(); return 0; }\n",
    )
    .unwrap();
    let exe = dir.path().join("prog");
    let cc = Command::new("afl-cc")
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("afl-cc (scripts/setup.sh installs afl++)");
    assert!(cc.status.success(), "{}", both(&cc));
    let out = dir.path().join("out");
    let o = numfuzz(&[
        "run",
        "-o",
        out.to_str().unwrap(),
        "-V",
        "10",
        "--",
        exe.to_str().unwrap(),
        "@@",
    ]);
    assert!(o.status.success(), "{}", both(&o));
    let t = both(&o);
    assert!(
        t.contains("not built with numfuzz-cc") && t.contains("forkserver"),
        "no warning:\n{t}"
    );
    let inst = out.join("default");
    assert_afl_shaped(&inst);
    assert!(stat(&inst, "execs_done") > 100, "the forkserver campaign barely ran");
}

#[test]
fn bad_invocations_get_one_line_errors_and_lose_nothing() {
    let _turn = one_at_a_time();
    let built = compile("crashy", &[("crashy.c", CRASHY)], &["-O1"], &[]);
    let exe = built.exe.to_str().unwrap();
    let foreign = built.path("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("thesis.tex"), "precious").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["run", "-o", foreign.to_str().unwrap(), "--", exe],
            "not a numfuzz or AFL++ output directory",
        ),
        (
            vec!["run", "-o", "/tmp/x", "--", "/nonexistent/target"],
            "does not exist",
        ),
        (
            vec!["run", "-o", "/tmp/x", "-i", "/nonexistent/seeds", "--", exe],
            "-i /nonexistent/seeds",
        ),
        (
            vec!["run", "-o", "/tmp/x", "--signature", "f64,double", "--", exe],
            "unknown field type `double`",
        ),
        (
            vec!["run", "-o", "/tmp/x", "--bogus", "--", exe],
            "unexpected argument '--bogus'",
        ),
        (vec!["run", "-o", "/tmp/x", "--", exe, "@@"], "drop the arguments"),
        (
            vec!["run", "-o", "/tmp/x", "-t", "0", "--", exe],
            "give milliseconds, at least 1",
        ),
    ];
    for (args, expected) in cases {
        let o = numfuzz(&args);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(
            both(&o).contains(expected),
            "{args:?}: expected `{expected}` in:\n{}",
            both(&o)
        );
    }
    assert_eq!(std::fs::read_to_string(foreign.join("thesis.tex")).unwrap(), "precious");
    // Another target's campaign directory is refused too.
    let out = built.path("out");
    let o = numfuzz(&["run", "-o", out.to_str().unwrap(), "-V", "2", "--", exe]);
    assert!(o.status.success(), "{}", both(&o));
    let other = compile("steep", &[("steep.c", STEEP)], &[], &[]);
    let o = campaign::run(&other.exe, &out, 2, &[]);
    assert!(
        !o.status.success() && both(&o).contains("campaign of another target"),
        "{}",
        both(&o)
    );
}

#[test]
fn two_launchers_linked_broker_to_broker_share_inputs() {
    let _turn = one_at_a_time();
    let built = compile("bump", &[("bump.c", HIDDEN_BUMP)], &["-O1"], &[]);
    let exe = built.exe.to_str().unwrap().to_string();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // "Machine" A fuzzes without ErrBits: on its own it does not reach the hidden window (see
    // `without_errbits_the_hidden_window_is_not_reached`). "Machine" B (full numfuzz) joins
    // A's broker and finds it; A must receive B's input and record B's finding as its own.
    let out_a = built.path("out-a");
    let out_b = built.path("out-b");
    let a = Session::spawn(
        Command::new(Tools::get().numfuzz())
            .args([
                "run",
                "-o",
                out_a.to_str().unwrap(),
                "--port",
                &port.to_string(),
                "-V",
                "30",
            ])
            .args(["--no-errbits", "--", &exe])
            .env("CI", "1")
            .stdin(Stdio::null()),
    );
    let start = Instant::now();
    while !out_a.join("default/fuzzer_stats").exists() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let broker = format!("127.0.0.1:{port}");
    let b = numfuzz(&[
        "run",
        "-o",
        out_b.to_str().unwrap(),
        "--broker",
        &broker,
        "-V",
        "20",
        "--",
        &exe,
    ]);
    assert!(b.status.success(), "{}", both(&b));
    let a = a.finish();
    assert!(a.status.success(), "{}", both(&a));
    let inst_a = out_a.join("default");
    assert!(
        has_overflow_at(&out_b.join("default"), HIDDEN_BUMP_LINE),
        "B (with ErrBits) did not reach the hidden window in 20 s:\n{}",
        both(&b)
    );
    assert!(
        stat(&inst_a, "corpus_imported") > 0,
        "A imported nothing from B:\n{}",
        both(&a)
    );
    assert!(
        has_overflow_at(&inst_a, HIDDEN_BUMP_LINE),
        "B's overflow input did not reach A:\n{}",
        both(&a)
    );
}

#[test]
fn ctrl_c_stops_cleanly_with_final_stats() {
    // Like a terminal's Ctrl-C: SIGINT to the whole process group.
    // SAFETY: signalling our own child's process group.
    stops_cleanly_with_final_stats(|numfuzz| unsafe { libc::kill(-(numfuzz as i32), libc::SIGINT) });
}

#[test]
fn sigterm_to_numfuzz_run_stops_cleanly_with_final_stats() {
    // Like `kill PID` or a service manager: SIGTERM to `numfuzz run` alone.
    // SAFETY: signalling our own child.
    stops_cleanly_with_final_stats(|numfuzz| unsafe { libc::kill(numfuzz as i32, libc::SIGTERM) });
}

/// A campaign without `-V`, stopped by `stop(pid of numfuzz run)` after a few seconds, ends
/// with exit 0, a summary and `fuzzer_stats` written at the stop.
fn stops_cleanly_with_final_stats(stop: impl FnOnce(u32) -> i32) {
    let _turn = one_at_a_time();
    let built = compile("steep", &[("steep.c", STEEP)], &["-O1"], &[]);
    let out = built.path("out");
    // In a session (so a process group) of its own, as under a terminal.
    let mut child = Session::spawn(
        Command::new(Tools::get().numfuzz())
            .args(["run", "-o", out.to_str().unwrap(), "--", built.exe.to_str().unwrap()])
            .env("CI", "1")
            .stdin(Stdio::null()),
    );
    let inst = out.join("default");
    let start = Instant::now();
    while !inst.join("fuzzer_stats").exists() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(stop(child.id()), 0);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !child.leader_exited() {
        assert!(Instant::now() < deadline, "numfuzz did not stop");
        std::thread::sleep(Duration::from_millis(100));
    }
    let o = child.finish();
    assert!(o.status.success(), "exit {:?}: {}", o.status, both(&o));
    assert_afl_shaped(&inst);
    let updated = stat(&inst, "last_update");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(now - updated <= 3, "fuzzer_stats not written at the stop");
    assert!(
        both(&o).contains("distinct floating-point exceptions"),
        "no summary:\n{}",
        both(&o)
    );
}
