//! Fast runs end to end (runtime/src/precise.rs): under a fuzzer an input first runs on the
//! fast copies, watched by the FPU's sticky flags, and runs again precisely only when one went
//! up or a sentinel fired. What must hold: the program sees exactly the flags it would see
//! without numfuzz, a fast run misses no exception (even one whose flag the program cleared
//! itself), an input that raises nothing runs once, and a campaign's fast runs find what
//! precise runs find.
//!
//! Replays are precise and run once; `NUMFUZZ_PRECISE=0` makes a replay run as a fuzzer's run
//! does, which is how the fast path is observed here input by input. The harness prints one
//! line per run, so the tests count the runs of each input.

use numfuzz_abi::report::{ExceptionReport, ReportEvent};
use numfuzz_abi::ExceptionKind::{self, DivByZero, Overflow, Underflow};
use std::sync::OnceLock;
use testkit::campaign;

const OPS_C: &str = include_str!("c/fast_fenv_ops.c");
const HARNESS_C: &str = include_str!("c/fast_fenv_harness.c");

/// The harness with the operations built checked and, as the reference, edges-only.
fn harness() -> &'static testkit::Built {
    static BUILT: OnceLock<testkit::Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let objects = testkit::TempDir::new().unwrap();
        let checked = testkit::compile_object(objects.path(), "ops.c", OPS_C, &["-O2", "-DVARIANT=checked"], &[]);
        let unchecked = testkit::compile_object(
            objects.path(),
            "ops.c",
            OPS_C,
            &["-O2", "-DVARIANT=unchecked"],
            &[("NUMFUZZ_CC_NO_CHECKS", "1")],
        );
        let (checked, unchecked) = (checked.display().to_string(), unchecked.display().to_string());
        testkit::compile(
            "fast_fenv",
            &[("harness.c", HARNESS_C)],
            &["-O2", &checked, &unchecked],
            &[],
        )
    })
}

fn line_of(marker: &str) -> u32 {
    let tag = format!("/* @{marker} */");
    1 + OPS_C.lines().position(|l| l.contains(&tag)).expect("marker") as u32
}

/// An exception reported: its kind and line.
type Found = (ExceptionKind, u32);

/// One replay of `input`: how many times the harness ran, and the (kind, line) of every
/// exception reported, in order.
fn replay(input: &[f64; 3], fast: bool) -> (usize, Vec<Found>) {
    let mut env = vec![("NUMFUZZ_ABORT", "0"), ("NUMFUZZ_REPORT", "json")];
    if fast {
        env.push(("NUMFUZZ_PRECISE", "0"));
    }
    let out = testkit::run(&harness().exe, &[], &testkit::f64s(input), &env);
    // The harness aborts when the program's flags differ from the edges-only build's.
    assert!(
        out.status.success(),
        "{input:?} (fast: {fast}): {}",
        testkit::both(&out)
    );
    let runs = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("run "))
        .count();
    let reports: Vec<ExceptionReport> = testkit::events(&String::from_utf8_lossy(&out.stderr))
        .into_iter()
        .filter_map(|e| match e {
            ReportEvent::Exception(r) => Some(r),
            _ => None,
        })
        .collect();
    (runs, reports.iter().map(|r| (r.kind, r.site.line)).collect())
}

#[test]
fn the_program_sees_its_own_flags_and_a_fast_run_keeps_what_it_clears() {
    let (product, quotient) = (line_of("product"), line_of("quotient"));
    // (a, b, c) → what a * b and c / b raise
    let cases: [([f64; 3], Vec<Found>); 5] = [
        ([1.5, 2.0, 3.0], vec![]),
        // The product overflows and the program clears the flag before the quotient: the fast
        // run's flags end clear, and only the barrier before feclearexcept keeps the overflow.
        ([1e308, 10.0, 1.0], vec![(Overflow, product)]),
        ([1e-300, 1e-200, 1.0], vec![(Underflow, product)]),
        ([1.0, 0.0, 1.0], vec![(DivByZero, quotient)]),
        ([1e300, 1e10, 1e-300], vec![(Overflow, product), (Underflow, quotient)]),
    ];
    for (input, expected) in cases {
        let (precise_runs, precise) = replay(&input, false);
        assert_eq!(precise_runs, 1, "{input:?}: a replay runs once");
        assert_eq!(precise, expected, "{input:?}: precise replay");
        let (fast_runs, fast) = replay(&input, true);
        assert_eq!(fast, expected, "{input:?}: fast run, then precise re-run");
        let expected_runs = if expected.is_empty() { 1 } else { 2 };
        assert_eq!(fast_runs, expected_runs, "{input:?}: runs of a fast replay");
    }
}

#[test]
fn a_campaign_of_fast_runs_finds_the_exceptions_and_never_changes_the_flags() {
    let _turn = campaign::one_at_a_time();
    let out = testkit::TempDir::new().unwrap();
    let instance = campaign::fuzz(&harness().exe, &out.path().join("out"), 10, &[]);
    // A flag the program saw differently would have aborted the harness: a real crash.
    assert_eq!(campaign::stat(&instance, "real_crashes"), 0);
    assert!(
        campaign::stat(&instance, "fast_turns") > 0,
        "the campaign made fast runs"
    );
    for (kind, marker) in [(Overflow, "product"), (DivByZero, "quotient")] {
        assert!(
            campaign::found(&instance, kind, None, line_of(marker)),
            "{kind:?} at @{marker} not found: {:#?}",
            instance.exceptions()
        );
    }
}
