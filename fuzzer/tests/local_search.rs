//! The local-search stage end to end: exceptions that random mutation with every other
//! guidance (ErrBits, branch distances, input-to-state) does not reach in the budget, and the
//! stage does. Each target is fuzzed twice on one core with the same seeds (built from the
//! signature) and the same budget, with the stage and with `--no-local-search`.

use numfuzz_abi::ExceptionKind;
use numfuzz_outdir::InstanceDir;
use testkit::campaign::{fuzz, one_at_a_time, stat};
use testkit::compile;

/// Seconds per campaign. Measured on 2 cores: with the stage each exception below is found in
/// under 0.2 s; without it none was found in 20 s.
const BUDGET_SECS: u32 = 15;

/// x * y must round to exactly 1024 with y in (1.5, 1.6): the divisor is a multiple of
/// 1024's ulp, so its ErrBits to zero is the same (63) for every input but the solution, and
/// no comparison leads there. The exact gap does.
const PRODUCT: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64,f64");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0), y = nf_f64(data, size, 1);
  if (y > 1.5 && y < 1.6 && x > 600.0 && x < 700.0) {
    volatile double r = 1.0 / (x * y - 1024.0);
    (void)r;
  }
  return 0;
}
"#;

/// DivByZero only for x in [c, c + 1e-9), c = 1.8427611519777 (GSL bug 52359's Airy zero,
/// rounded): about 4.5 million doubles, none of them special.
const WINDOW: &str = r#"#include <numfuzz.h>
#include <math.h>
NUMFUZZ_SIGNATURE("f64");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0);
  double steps = floor((x - 1.8427611519777) * 1e9);
  volatile double r = 1.0 / steps;
  (void)r;
  return 0;
}
"#;

/// fdlibm's way of testing a double against a constant, on its two words (pow's "z is exactly
/// 1024"): behind it, an Overflow unrelated to z. x * 5 - 7 is exactly 1024 for one or two
/// doubles near 206.2.
const WORDS: &str = r#"#include <numfuzz.h>
#include <float.h>
#include <string.h>
NUMFUZZ_SIGNATURE("f64");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0), z = x * 5.0 - 7.0;
  uint64_t w; memcpy(&w, &z, 8);
  int32_t j = (int32_t)(w >> 32); uint32_t i = (uint32_t)w;
  if (j >= 0x40900000 && ((j - 0x40900000) | i) == 0) {
    volatile double r = DBL_MAX * (x - 200.0);
    (void)r;
  }
  return 0;
}
"#;

/// Overflow when the f80 field cancels e times the f32 field to within ~8e-13: both fields
/// together, in their own formats.
const MIXED: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f32,f80");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  float a = nf_f32(data, size, 0);
  long double b = nf_f80(data, size, 1);
  if (a >= 1.0f && a < 2.0f && b > -7.0L && b < -2.0L) {
    long double d = (long double)a * 2.718281828459045235L + b;
    volatile long double y = 1e4920L / d;
    (void)y;
  }
  return 0;
}
"#;

/// GSL's airy.c:274 in miniature (airy_mod_phase: a Chebyshev argument z of x, and an error
/// estimate divided by the series' value): the divisor is 0 only where z rounds to exactly
/// 0.9204436182286305 (x = -1.8427611519777436 and its few neighbours, and a few doubles near
/// -5.85). The first input to reach the division is the seed x = -DBL_MAX with mode 1, which
/// holds its ErrBits (62, as every divisor's) and lies on a plateau: 16/x^3 + 1 is 1 for
/// |x| above about 2^19, so no move of x changes the gap; most corpus entries that reach the
/// division are there too, and the rest never reach it (x > -1). A descent must leave such
/// starts quickly and restart from the few that lie on the slope (x = -708, -1.125).
const PLATEAU: &str = r#"#include <numfuzz.h>
#include <math.h>
NUMFUZZ_SIGNATURE("f64,u32[0,2]");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0), z;
  uint32_t mode = nf_u32(data, size, 1);
  if (mode > 2)
    return 0;
  if (x > -1.0) {
    volatile double y = x > 1.0 ? exp(-x * (mode + 1)) : cos(x) * (x + 0.5 * mode);
    (void)y;
    return 0;
  }
  if (x < -2.0)
    z = 16.0 / (x * x * x) + 1.0;
  else
    z = (16.0 / (x * x * x) + 9.0) / 7.0;
  double m = z - 0.9204436182286305;
  volatile double err = 1e-16 / m;
  (void)err;
  return 0;
}
"#;

/// Runs a campaign (with `extra` flags) on one core and returns its instance directory.
fn campaign(built: &testkit::Built, name: &str, extra: &[&str]) -> InstanceDir {
    fuzz(&built.exe, &built.path(name), BUDGET_SECS, extra)
}

fn found(instance: &InstanceDir, kind: ExceptionKind, line: u32) -> bool {
    testkit::campaign::found(instance, kind, None, line)
}

/// With the stage the exception is found and the stage's work shows in `fuzzer_stats`;
/// without it, on the same seeds and budget, it is not.
fn reached_only_with_the_stage(name: &str, source: &str, kind: ExceptionKind, line: u32) {
    let _turn = one_at_a_time();
    let file = format!("{name}.c");
    let built = compile(name, &[(&file, source)], &["-O1"], &[]);
    let with = campaign(&built, "out", &[]);
    let stats = with.stats().expect("fuzzer_stats");
    assert!(
        found(&with, kind, line),
        "no {kind} at {file}:{line} with local search: {:?}\n{}",
        with.exceptions(),
        stats.render()
    );
    assert!(stat(&with, "search_execs") > 0, "{}", stats.render());
    assert!(stat(&with, "search_descents") > 0, "{}", stats.render());

    let without = campaign(&built, "out-no-search", &["--no-local-search"]);
    assert!(
        !found(&without, kind, line),
        "{kind} at {file}:{line} reached without local search: the stage shows no effect"
    );
    assert_eq!(stat(&without, "search_execs"), 0);
}

#[test]
fn an_exact_two_field_product_is_reached_by_local_search_only() {
    reached_only_with_the_stage("product", PRODUCT, ExceptionKind::DivByZero, 6);
}

#[test]
fn a_window_1e_9_wide_is_reached_by_local_search_only() {
    reached_only_with_the_stage("window", WINDOW, ExceptionKind::DivByZero, 7);
}

/// The airy_Ai DivByZero of the NumFuzz paper's Table IV was lost this way when GSL's
/// harnesses took `f64,u32[0,2]` for `f64,u8`: with `u8` the seed x = -DBL_MAX came with mode
/// 9, out of range, and the holder was x = -708 on the slope.
#[test]
fn a_division_held_on_a_plateau_is_reached_by_local_search_only() {
    reached_only_with_the_stage("plateau", PLATEAU, ExceptionKind::DivByZero, 19);
}

#[test]
fn an_f32_and_f80_cancellation_is_reached_by_local_search_only() {
    reached_only_with_the_stage("mixed", MIXED, ExceptionKind::Overflow, 8);
}

/// The pass gives `(a | b) == 0` on two words the distance of the word pair to (0, 0), which
/// the stage descends on. (Not an ablation: the distance is also what the comparison feedback
/// keeps, so mutation alone may get there in the budget too.)
#[test]
fn a_double_tested_through_its_two_words_is_reached() {
    let _turn = one_at_a_time();
    let built = compile("words", &[("words.c", WORDS)], &["-O1"], &[]);
    let with = campaign(&built, "out", &[]);
    assert!(
        found(&with, ExceptionKind::Overflow, 10),
        "{:?}\n{}",
        with.exceptions(),
        with.stats().map(|s| s.render()).unwrap_or_default()
    );
}

/// The stage works through the forkserver too (the probe words live in the shared region).
#[test]
fn local_search_works_through_the_forkserver() {
    let _turn = one_at_a_time();
    let built = compile("product", &[("product.c", PRODUCT)], &["-O1"], &[]);
    let with = campaign(&built, "out-fs", &["--executor", "forkserver"]);
    assert!(
        found(&with, ExceptionKind::DivByZero, 6),
        "{:?}\n{}",
        with.exceptions(),
        with.stats().map(|s| s.render()).unwrap_or_default()
    );
}
