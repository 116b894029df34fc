//! Precise re-runs only where they can teach something: a campaign on a target whose every
//! input raises the same flag on the same edge path re-runs a few inputs precisely and then
//! skips the re-run of the rest, while a new flag on that path, or the same flag at a second
//! site of it, still runs precisely and is found. Counted with `fuzzer_stats`' `precise_runs`
//! and `skipped_reruns`.

use numfuzz_abi::op::Op;
use numfuzz_abi::ExceptionKind::{Overflow, Underflow};
use std::collections::BTreeSet;
use testkit::campaign;

/// The same underflow on every input, on one path, with distances that never move (the
/// operands are constants): nothing after the first precise run is new.
const SAME_FLAG: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64");
volatile double tiny = 1e-300;
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  (void)nf_f64(data, size, 0);
  NUMFUZZ_RESULT(tiny * tiny);
  return 0;
}
"#;

/// One path for every input; which flag `x * x` raises depends on `x` (line 4).
const FLAG_BY_VALUE: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0); NUMFUZZ_RESULT(x * x);
  return 0;
}
"#;

#[test]
fn the_same_flag_on_the_same_path_is_re_run_precisely_only_a_few_times() {
    let _turn = campaign::one_at_a_time();
    let built = testkit::compile("same_flag", &[("same_flag.c", SAME_FLAG)], &["-O2"], &[]);
    let instance = campaign::fuzz(&built.exe, &built.path("out"), 5, &[]);
    let execs = campaign::stat(&instance, "execs_done");
    let precise = campaign::stat(&instance, "precise_runs");
    let skipped = campaign::stat(&instance, "skipped_reruns");
    assert!(
        campaign::found(&instance, Underflow, None, 6),
        "{:#?}",
        instance.exceptions()
    );
    // Every run raises the flag; without the skip each one would run twice. What still runs
    // precisely is each testcase's first turn of mutants (distances are measured there).
    assert!(execs > 2000, "{execs} executions");
    assert!(
        precise * 20 < execs,
        "{precise} precise runs in {execs} executions ({skipped} re-runs skipped)"
    );
    assert!(skipped * 10 > execs * 9, "{skipped} of {execs} re-runs skipped");
}

#[test]
fn a_new_flag_on_a_known_path_still_runs_precisely() {
    let _turn = campaign::one_at_a_time();
    let built = testkit::compile("flag_by_value", &[("flag_by_value.c", FLAG_BY_VALUE)], &["-O2"], &[]);
    let seeds = built.path("seeds");
    std::fs::create_dir_all(&seeds).unwrap();
    std::fs::write(seeds.join("tiny"), 1e-200f64.to_le_bytes()).unwrap();
    // Without ErrBits no distance leads to the overflow: it is found by a fast run whose flags
    // are new on the path the underflow took.
    let instance = campaign::fuzz(
        &built.exe,
        &built.path("out"),
        5,
        &["-i", seeds.to_str().unwrap(), "--no-errbits", "--no-local-search"],
    );
    for kind in [Underflow, Overflow] {
        assert!(
            campaign::found(&instance, kind, None, 4),
            "{kind:?} at line 4: {:#?}",
            instance.exceptions()
        );
    }
    assert!(campaign::stat(&instance, "skipped_reruns") > 0);
}

/// One path for every input; either product overflows, depending on its own field (line 5).
const TWO_PRODUCTS: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64,f64");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0), y = nf_f64(data, size, 1);
  double r = x * 1e300 + y * 1e300;
  NUMFUZZ_RESULT(r);
  return 0;
}
"#;

#[test]
fn a_second_site_raising_the_same_flag_on_a_known_path_is_found() {
    let _turn = campaign::one_at_a_time();
    let built = testkit::compile("two_products", &[("two_products.c", TWO_PRODUCTS)], &["-O2"], &[]);
    let seeds = built.path("seeds");
    std::fs::create_dir_all(&seeds).unwrap();
    // The first product overflows, the second does not.
    let seed: Vec<u8> = [1e10f64, 1.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(seeds.join("first"), seed).unwrap();
    // Without ErrBits no distance leads to the second overflow: it is found by a fast run
    // whose path and flags are the seed's.
    let instance = campaign::fuzz(
        &built.exe,
        &built.path("out"),
        5,
        &["-i", seeds.to_str().unwrap(), "--no-errbits", "--no-local-search"],
    );
    let columns: BTreeSet<u32> = instance
        .exceptions()
        .iter()
        .filter(|e| e.kind == Overflow && e.site.line == 5 && e.site.op == Op::FMul)
        .map(|e| e.site.column)
        .collect();
    assert_eq!(
        columns.len(),
        2,
        "both products' overflows: {:#?}",
        instance.exceptions()
    );
    let (execs, precise, skipped) = (
        campaign::stat(&instance, "execs_done"),
        campaign::stat(&instance, "precise_runs"),
        campaign::stat(&instance, "skipped_reruns"),
    );
    assert!(precise > 0 && precise <= execs, "{precise} precise runs of {execs}");
    // The skip was at work: the seed's own overflow recurred without a re-run.
    assert!(skipped > 0, "{skipped} re-runs skipped of {execs}");
}

/// Replays `inputs` with `exe` as a campaign runs them (fast first, re-runs skipped where a key
/// says so), going on past exceptions; the output and the exceptions reported.
fn replay_as_campaign(
    exe: &std::path::Path,
    inputs: &[&str],
) -> (std::process::Output, Vec<numfuzz_abi::report::ExceptionReport>) {
    let env = [
        ("NUMFUZZ_ABORT", "0"),
        ("NUMFUZZ_REPORT", "json"),
        ("NUMFUZZ_PRECISE", "campaign"),
    ];
    let out = testkit::run(exe, inputs, &[], &env);
    assert!(out.status.success(), "{}", testkit::both(&out));
    let reports = testkit::events(&String::from_utf8_lossy(&out.stderr))
        .into_iter()
        .filter_map(|e| match e {
            numfuzz_abi::report::ReportEvent::Exception(r) => Some(r),
            _ => None,
        })
        .collect();
    (out, reports)
}

/// Writes each (name, doubles) input beside `built` and replays them in that order with
/// [`replay_as_campaign`].
fn replay_f64_inputs_as_campaign(
    built: &testkit::Built,
    inputs: &[(&str, &[f64])],
) -> (std::process::Output, Vec<numfuzz_abi::report::ExceptionReport>) {
    let paths: Vec<String> = inputs
        .iter()
        .map(|(name, values)| {
            let path = built.path(name);
            std::fs::write(&path, testkit::f64s(values)).unwrap();
            path.to_str().unwrap().to_string()
        })
        .collect();
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    replay_as_campaign(&built.exe, &args)
}

/// The same rule, input by input: a replay that skips re-runs as a campaign does
/// (`NUMFUZZ_PRECISE=campaign`) re-runs the second product's overflow, whose path and flags are
/// the first's but whose special site is not, and skips the first's when it comes again.
#[test]
fn a_replay_as_a_campaign_tells_the_two_products_apart_by_their_special_sites() {
    let built = testkit::compile(
        "two_products_replay",
        &[("two_products.c", TWO_PRODUCTS)],
        &["-O2"],
        &[],
    );
    let inputs: [(&str, &[f64]); 3] = [
        ("first", &[1e10, 1.0]),
        ("second", &[1.0, 1e10]),
        ("first_again", &[2e10, 1.0]),
    ];
    let (out, reports) = replay_f64_inputs_as_campaign(&built, &inputs);
    let overflows = |input: &str| -> BTreeSet<u32> {
        reports
            .iter()
            .filter(|r| r.kind == Overflow && r.site.op == Op::FMul)
            .filter(|r| r.input.as_deref().is_some_and(|i| i.ends_with(input)))
            .map(|r| r.site.column)
            .collect()
    };
    let (first, second) = (overflows("/first"), overflows("/second"));
    assert_eq!((first.len(), second.len()), (1, 1), "{}", testkit::both(&out));
    assert_ne!(first, second, "each input's own product");
    assert!(
        overflows("/first_again").is_empty(),
        "the first product's overflow again: its re-run skipped\n{}",
        testkit::both(&out)
    );
}

/// Inputs above 1 take a million steps of long double arithmetic: about 2 ms as the program runs
/// them, about 70 ms checked (each x87 operation is classified through the runtime); the sum
/// then underflows, so those inputs re-run precisely.
const SLOW_WHEN_CHECKED: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0);
  long double sum = 0.0L;
  if (x > 1.0 && x < 2.0)
    for (int k = 0; k < 1000000; k++)
      sum = sum * 0.5L + (long double)x * (k & 1023);
  NUMFUZZ_RESULT((double)sum * 1e-320);
  return 0;
}
"#;

/// [`SLOW_WHEN_CHECKED`] built as `name`, fuzzed for 5 s from a quick seed with `extra`; the
/// build is returned with the instance, which lives in its directory.
fn fuzz_slow_when_checked(name: &str, extra: &[&str]) -> (testkit::Built, numfuzz_outdir::InstanceDir) {
    let built = testkit::compile(name, &[("slow_checked.c", SLOW_WHEN_CHECKED)], &["-O2"], &[]);
    let seeds = built.path("seeds");
    std::fs::create_dir_all(&seeds).unwrap();
    std::fs::write(seeds.join("quick"), 0.5f64.to_le_bytes()).unwrap();
    let args: Vec<&str> = ["-i", seeds.to_str().unwrap()]
        .into_iter()
        .chain(extra.iter().copied())
        .collect();
    let instance = campaign::fuzz(&built.exe, &built.path("out"), 5, &args);
    (built, instance)
}

/// The time limit calibrated from a quick seed (20 ms) is for the program's own run: a precise
/// re-run longer than that is no time-out (`rerun_timeouts`), and costs the in-process client
/// no restart. A fast run descheduled past 20 ms on a loaded machine may cost one (the
/// successor calibrates from the slow input too); a re-run under the calibrated limit timed out
/// at the slow input's first re-run, every time.
#[test]
fn a_precise_re_run_longer_than_the_calibrated_limit_is_not_a_time_out() {
    let _turn = campaign::one_at_a_time();
    let (_built, instance) = fuzz_slow_when_checked("slow_checked", &[]);
    assert!(
        campaign::found(&instance, Underflow, None, 9),
        "the slow path's underflow: {:#?}",
        instance.exceptions()
    );
    assert!(campaign::stat(&instance, "precise_runs") >= 1);
    assert_eq!(campaign::stat(&instance, "rerun_timeouts"), 0);
    assert!(
        campaign::client_starts(&instance) <= 2,
        "client starts: {:#?}",
        instance.client_events()
    );
}

/// A precise re-run slower than the whole time limit (`-t 40`: 2 ms as the program runs, about
/// 70 ms checked) is not started (`reruns_too_slow`, predicted from the fast run's time), or,
/// started, is cut off (`rerun_timeouts`); either way the program did not hang: nothing is
/// saved to `hangs/`, and the client is not restarted at every slow input (it was, 113 times in
/// 5 s).
#[test]
fn a_precise_re_run_slower_than_the_time_limit_is_no_hang() {
    let _turn = campaign::one_at_a_time();
    let (_built, instance) = fuzz_slow_when_checked("slow_checked_t40", &["-t", "40"]);
    let too_slow = campaign::stat(&instance, "reruns_too_slow") + campaign::stat(&instance, "rerun_timeouts");
    assert!(too_slow >= 1, "the slow path was reached");
    assert_eq!(campaign::stat(&instance, "saved_hangs"), 0);
    assert!(
        campaign::client_starts(&instance) <= 2,
        "client starts: {:#?}",
        instance.client_events()
    );
    let hangs = std::fs::read_dir(instance.path(numfuzz_outdir::InputDir::Hangs)).map_or(0, |d| d.count());
    assert_eq!(hangs, 0, "hangs/ holds no input");
}

/// Every run underflows at `tiny * tiny`; `x * one` is exact, and special (zero, subnormal, the
/// least normal, infinite, NaN) or not with `x`. Its result is stored, not declared, so only
/// its special-result bit tells the runs apart.
const SPECIAL_OR_NOT: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("FIELD");
volatile CTYPE one = 1, tiny = TINY, sink;
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  CTYPE x = nf_FIELD(data, size, 0);
  sink = tiny * tiny;
  sink = x * one;
  return 0;
}
"#;

/// A replay that skips re-runs as a campaign does re-runs an input exactly when the set of
/// operations with a special result is new: after a normal product, each value's own input is
/// re-run when `x * one` is special for it. So its special-result bit must hold for zero,
/// subnormals and the least normal, and for nothing from the next value above the least normal
/// to the largest finite one, in both formats; nor for an infinity or a NaN that `x` brings,
/// which the product passes on without raising anything.
#[test]
fn special_results_are_told_from_normal_ones_at_the_edges_of_the_range() {
    fn case<T: Copy + std::fmt::Debug>(
        ty: &str,
        c_type: &str,
        tiny: &str,
        values: &[(T, bool)],
        bytes: fn(T) -> Vec<u8>,
    ) {
        let source = SPECIAL_OR_NOT
            .replace("FIELD", ty)
            .replace("CTYPE", c_type)
            .replace("TINY", tiny);
        let built = testkit::compile(
            &format!("special_or_not_{ty}"),
            &[("special_or_not.c", &source)],
            &["-O2"],
            &[],
        );
        let normal = built.path("normal");
        std::fs::write(&normal, bytes(values[0].0)).unwrap();
        for (k, &(value, special)) in values.iter().enumerate() {
            let path = built.path(&format!("value{k}"));
            std::fs::write(&path, bytes(value)).unwrap();
            let (out, reports) = replay_as_campaign(&built.exe, &[normal.to_str().unwrap(), path.to_str().unwrap()]);
            let own = format!("/value{k}");
            let rerun = reports
                .iter()
                .any(|r| r.kind == Underflow && r.input.as_deref().is_some_and(|i| i.ends_with(&own)));
            assert_eq!(rerun, special, "{ty} {value:?}: special? {}", testkit::both(&out));
        }
    }
    case(
        "f64",
        "double",
        "1e-300",
        &[
            (1.5, false),
            (f64::from_bits(f64::MIN_POSITIVE.to_bits() + 1), false),
            (-f64::MAX, false),
            (f64::MIN_POSITIVE, true),
            (-f64::MIN_POSITIVE, true),
            (1e-310, true),
            (0.0, true),
            (-0.0, true),
            (f64::INFINITY, false),
            (f64::NAN, false),
        ],
        |v| v.to_le_bytes().to_vec(),
    );
    case(
        "f32",
        "float",
        "1e-30f",
        &[
            (1.5, false),
            (f32::from_bits(f32::MIN_POSITIVE.to_bits() + 1), false),
            (f32::MAX, false),
            (f32::MIN_POSITIVE, true),
            (-1e-40, true),
            (0.0, true),
            (f32::NEG_INFINITY, false),
            (f32::NAN, false),
        ],
        |v| v.to_le_bytes().to_vec(),
    );
}

/// `big * big` overflows in every run; `x * two` (line 6) carries an infinite `x` through and
/// overflows itself for a large finite one. Both runs take one edge path and raise Overflow.
const CARRIED_OR_MADE: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64");
volatile double big = 1e300, two = 2, sink;
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sink = big * big;
  sink = nf_f64(data, size, 0) * two;
  return 0;
}
"#;

/// An infinity an operation passes on is not its special result: after inputs whose `x * two`
/// only carries `x`'s infinity, the input for which that product overflows is re-run, and its
/// Overflow reported at line 6. (Keyed on every infinite result, the runs' special sites were
/// the same, and the re-run that finds it was skipped.)
#[test]
fn an_overflow_at_a_site_that_carried_infinities_before_is_re_run() {
    let built = testkit::compile(
        "carried_or_made",
        &[("carried_or_made.c", CARRIED_OR_MADE)],
        &["-O2"],
        &[],
    );
    let inputs: [(&str, &[f64]); 3] = [
        ("carried", &[f64::INFINITY]),
        ("carried_again", &[-f64::INFINITY]),
        ("made", &[1.5e308]),
    ];
    let (out, reports) = replay_f64_inputs_as_campaign(&built, &inputs);
    let at_line = |input: &str, line: u32| {
        reports.iter().any(|r| {
            r.kind == Overflow && r.site.line == line && r.input.as_deref().is_some_and(|i| i.ends_with(input))
        })
    };
    assert!(at_line("/carried", 5), "the first run re-runs: {}", testkit::both(&out));
    assert!(
        !at_line("/carried", 6) && !at_line("/carried_again", 6),
        "{}",
        testkit::both(&out)
    );
    assert!(
        at_line("/made", 6),
        "the product's own overflow: {}",
        testkit::both(&out)
    );
}

/// Sixteen bits of a hash of the input pick sixteen branches, so nearly every input takes an
/// edge path of its own, and on every one of them `s * 0.3` underflows at line 10 (the loop
/// runs at least 40 times from 1e-300): a path key seldom skips the re-run. A DivByZero waits
/// behind a comparison (line 12).
const PATH_PER_INPUT: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64,f64");
volatile int taken[16];
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0), y = nf_f64(data, size, 1), s = 1e-300, t = 1.0;
  uint64_t a, b; memcpy(&a, &x, 8); memcpy(&b, &y, 8);
  uint64_t h = (a ^ b * 31) * 0x9E3779B97F4A7C15u;
  for (int k = 0; k < 16; k++) if (h >> (48 + k) & 1) taken[k] = k;
  for (int k = 0; k < 40 + (int)(a & 7); k++)
    s = s * 0.3;
  if (y == 1234.5)
    t = t / (y - 1234.5);
  NUMFUZZ_RESULT(s + t);
  return 0;
}
"#;

/// There the per-site throttle takes over: once the underflow's operation has been special in
/// a few re-runs that recorded nothing new, fast runs whose only special operation it is, with
/// the same flags, are not re-run (`reruns_throttled`); the DivByZero, a new flag at a new
/// site, still runs precisely and is found.
#[test]
fn re_runs_that_teach_nothing_are_throttled_per_site_and_new_flags_still_found() {
    let _turn = campaign::one_at_a_time();
    let built = testkit::compile("path_per_input", &[("path_per_input.c", PATH_PER_INPUT)], &["-O2"], &[]);
    let instance = campaign::fuzz(&built.exe, &built.path("out"), 5, &[]);
    assert!(
        campaign::found(&instance, Underflow, None, 10),
        "{:#?}",
        instance.exceptions()
    );
    assert!(
        campaign::found(&instance, numfuzz_abi::ExceptionKind::DivByZero, None, 12),
        "{:#?}",
        instance.exceptions()
    );
    let (execs, throttled, skipped) = (
        campaign::stat(&instance, "execs_done"),
        campaign::stat(&instance, "reruns_throttled"),
        campaign::stat(&instance, "skipped_reruns"),
    );
    assert!(
        throttled * 4 > execs,
        "{throttled} re-runs throttled in {execs} executions ({skipped} skipped by their path)"
    );
}

/// A recurrence that underflows at every input, run long enough that its executions' time
/// shows in milliseconds.
const SLOW_UNDERFLOW: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0), p = 1e-300;
  for (int i = 0; i < 20000; i++) p = p * 0.5 + x * 0.0;
  NUMFUZZ_RESULT(p);
  return 0;
}
"#;

/// `fuzzer_stats` says where the campaign's time went: its executions by how they ran and its
/// stages. Under `--precise` every execution is a precise one; otherwise the re-runs the
/// special-result pass spared are counted apart.
#[test]
fn the_stats_say_where_the_time_went() {
    let _turn = campaign::one_at_a_time();
    let built = testkit::compile("slow_underflow", &[("slow_underflow.c", SLOW_UNDERFLOW)], &["-O1"], &[]);
    let ms = campaign::stat;
    let precise = campaign::fuzz(&built.exe, &built.path("precise"), 4, &["--precise"]);
    assert_eq!((ms(&precise, "fast_runs_ms"), ms(&precise, "spared_runs_ms")), (0, 0));
    assert!(ms(&precise, "precise_runs_ms") > 0);
    let default = campaign::fuzz(&built.exe, &built.path("default"), 4, &[]);
    assert!(ms(&default, "spared_runs_ms") > 0, "no re-run was spared");
    for instance in [&precise, &default] {
        let runs: u64 = ["fast_runs_ms", "spared_runs_ms", "precise_runs_ms"]
            .iter()
            .map(|k| ms(instance, k))
            .sum();
        let stages: u64 = ["i2s_ms", "havoc_ms", "search_ms"]
            .iter()
            .map(|k| ms(instance, k))
            .sum();
        let wall = ms(instance, "run_time") * 1000 + 1000;
        assert!(ms(instance, "havoc_ms") > 0);
        assert!(
            runs <= wall && stages <= wall,
            "runs {runs} ms, stages {stages} ms in {wall} ms"
        );
    }
}
