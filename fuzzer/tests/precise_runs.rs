//! Precise re-runs only where they can teach something: a campaign on a target whose every
//! input raises the same flag on the same edge path re-runs a few inputs precisely and then
//! skips the re-run of the rest, while a new flag on that path still runs precisely and is
//! found. Counted with `fuzzer_stats`' `precise_runs` and `skipped_reruns`.

use numfuzz_abi::ExceptionKind::{Overflow, Underflow};
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
