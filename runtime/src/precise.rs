//! Fast runs, and precise re-runs when the FPU saw an exception.
//!
//! The pass splits every function that has checked operations into a fast copy (the
//! program's own code, with its coverage guards and a few cheap sentinels, below), a precise
//! copy (`<name>.numfuzz.precise`: every check, every ErrBits measure, the comparison hooks) and
//! a special-result copy (`<name>.numfuzz.specials`: the program's code with a bit per checked
//! operation, below). Each split function reads `__numfuzz_precise` at its entry and goes to
//! the copy it names (numfuzz-abi `copies`).
//!
//! Under a fuzzer (the in-process engine, or a forkserver child) every input first runs on the
//! fast copies with the FPU's sticky Invalid, DivByZero, Overflow and Underflow flags cleared,
//! and those flags are read back afterwards. That run's edges are the input's coverage. The
//! input runs again on the precise copies, with its edges counted into a scratch map, when:
//! - one of the four flags went up (the checkers' kinds are the FPU's flags: the exactness
//!   property; the precise run finds the sites and operands), or a sentinel fired:
//!   - a conversion to an integer outside its range (x86-64 converts to a narrower integer
//!     through a wider one and raises nothing),
//!   - the program itself cleared or replaced the flags (`feclearexcept`, `fesetenv`,
//!     `feholdexcept`, `feupdateenv`, `fesetexceptflag`) while one of the four was up: the
//!     pass calls `__numfuzz_fenv_barrier` before those, which keeps what they would erase;
//!
//!   libm calls are trusted to raise what Annex F asks for (the integration test
//!   `fast_runs.rs` checks glibc's against the precise classification); a flag a libm raises
//!   that Annex F does not ask for only costs a re-run, whose classification decides;
//! - or the fuzzer wants this run's distances or comparison operands (the region header's
//!   `MODE_FAST` is clear), or probes a slot.
//!
//! So coverage always comes from the fast copies, and a precise run is what it was before
//! split builds: every check on every operation.
//!
//! A precise re-run that can teach nothing is skipped: when the fast run's edge path (AFL's
//! hit-count buckets), the flags it raised, the checked operations whose results were special
//! (zero, subnormal, infinite, NaN, from finite operands: `fast_specials`) and whether a
//! declared result went Inf or NaN are those of an earlier precise run in this process, and the
//! fuzzer did not ask for distances. The special results come from a second pass of the input
//! on the special-result copies, made only where such a skip is possible: bits on the fast
//! copies themselves cost every fast run 2-5x on straight-line FP code
//! (`scripts/bench-overhead.sh`), while most fast runs raise nothing. Every exception from
//! finite operands leaves a special result at its site, so a site that raises is in the key:
//! two operations of one path raising the same flag for different inputs (`a*b + c*d`) differ
//! there, and so does a site that carried an infinity in one run and overflows in the next
//! (`fuzzer/tests/precise_runs.rs`). What the key cannot tell is a site whose special result
//! was quiet in the remembered run (an exact zero) and raises in the new one while another site
//! raises that flag in both, and an Invalid made from infinities at a new site; the campaign's
//! precise turns, which always re-run, find those.
//! And a re-run is throttled where the special operations of the fast run have all been special
//! in re-runs that taught nothing, with the same flags (`rerun_throttle`): on loops whose step
//! count follows the input, nearly every run has a path of its own.
//! Forkserver children that run one input each start with no paths seen and so never skip; under
//! AFL++ (afl-fuzz, afl-showmap), where every input's exceptions are printed or abort it, nothing
//! is skipped.
//!
//! Without a fuzzer (replays by triage or by hand) every run is precise and runs once: a
//! harness's own output appears once per input, and nothing depends on the flags.
//! Programs with their own `main` never come here; their one run per process cannot be
//! repeated, so `__numfuzz_precise` keeps its initial 1 and they run the precise copies, whose
//! coverage guards are their own. Programs without split functions (taint builds) have
//! nothing to choose.
//!
//! `NUMFUZZ_PRECISE=1` makes every fuzzed run re-run precisely (`numfuzz run --precise` does
//! the same through the header); `NUMFUZZ_PRECISE=0` makes replays fast-first too, so what a
//! fast run would have caught can be checked input by input.
//!
//! What a fast run cannot see: flags raised only in a thread other than the harness's (an
//! OpenMP worker's), an operation the compiler folded at build time or removed because its
//! result was unused, and flags a program cleared with inline assembly. Campaigns still run a
//! share of their inputs precisely (the engine's `run_mode`).

use crate::copies::set_copy;
use numfuzz_abi::shm::{
    RUN_FAST_ENDED, RUN_FAST_ONLY, RUN_PRECISE, RUN_PRECISE_SKIPPED, RUN_RERUN_THROTTLED, RUN_RERUN_TOO_SLOW,
    RUN_RESULT_NONFINITE,
};
use numfuzz_abi::{copies, env};
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

unsafe extern "C" {
    fn numfuzz_split_build() -> c_int;
    fn numfuzz_clear_watched_flags();
    fn numfuzz_watched_flags_raised() -> c_int;
    fn numfuzz_watched_flags() -> std::ffi::c_uint;
}

/// Whether the current run may be fast (set at the start of every run from the region).
static FAST_ASKED: AtomicBool = AtomicBool::new(false);
/// A fuzzer drives this process: runs are fast first, for their coverage.
static FUZZED: AtomicBool = AtomicBool::new(false);

/// What `NUMFUZZ_PRECISE` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Choice {
    /// Unset: fuzzed runs fast first, replays precise.
    Default,
    /// `1`: every run precise (after the fast run that gives a fuzzed run its coverage).
    Always,
    /// `0`: replays fast first too.
    FastReplays,
    /// `campaign`: replays as a campaign's runs go, skipping too (for benchmarks).
    CampaignReplays,
}

fn choice() -> Choice {
    static CHOICE: OnceLock<Choice> = OnceLock::new();
    *CHOICE.get_or_init(|| match std::env::var(env::PRECISE).as_deref().map(str::trim) {
        Ok("1") => Choice::Always,
        Ok("0") => Choice::FastReplays,
        Ok("campaign") => Choice::CampaignReplays,
        _ => Choice::Default,
    })
}

/// The program has fast copies.
fn split_build() -> bool {
    static SPLIT: OnceLock<bool> = OnceLock::new();
    // SAFETY: plain query of a weak symbol's address.
    *SPLIT.get_or_init(|| unsafe { numfuzz_split_build() } != 0)
}

/// A fuzzer drives the runs from now on (the in-process engine, a forkserver child).
pub fn driven_by_a_fuzzer() {
    FUZZED.store(true, Ordering::Relaxed);
}

/// Whether the next run may be fast: the region's `MODE_FAST`, and no ErrBits probe.
pub fn ask_fast(fast: bool) {
    FAST_ASKED.store(fast, Ordering::Relaxed);
}

/// How one input runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Plan {
    /// Once, precisely.
    Precise,
    /// Fast; precisely again only when the FPU or a sentinel saw an exception.
    FastWatched,
    /// Fast (for its coverage), then precisely in any case.
    FastThenPrecise,
}

fn plan(split: bool, fuzzed: bool, fast_asked: bool, choice: Choice) -> Plan {
    match (split, fuzzed, choice) {
        (false, _, _) => Plan::Precise,
        (true, false, Choice::FastReplays | Choice::CampaignReplays) => Plan::FastWatched,
        (true, false, _) => Plan::Precise,
        (true, true, Choice::Always) => Plan::FastThenPrecise,
        (true, true, _) if fast_asked => Plan::FastWatched,
        (true, true, _) => Plan::FastThenPrecise,
    }
}

/// Runs one input through `input` (which says whether the run was cut at the executor's time
/// limit) as its [`Plan`] says; whether the program's own run was cut. A cut run is a time-out:
/// nothing of it is re-run.
pub fn run(input: impl Fn() -> bool) -> bool {
    crate::rerun_limit::filter_alarms();
    let choice = choice();
    let fuzzed = FUZZED.load(Ordering::Relaxed);
    let plan = plan(split_build(), fuzzed, FAST_ASKED.load(Ordering::Relaxed), choice);
    // SAFETY: plain C calls on the FP environment and the sentinel byte. Cleared before a
    // precise run too, as a fresh process has them, so that the flags a time-out finds are this
    // run's (`rerun_limit::filter_alarms`).
    unsafe { numfuzz_clear_watched_flags() };
    if plan == Plan::Precise {
        return crate::run_cut::own_run(&input);
    }
    set_copy(copies::FAST);
    let started = crate::rerun_limit::enabled().then(Instant::now);
    if crate::run_cut::own_run(&input) {
        set_copy(copies::PRECISE);
        return true;
    }
    let fast = started.map(|s| s.elapsed());
    // SAFETY: as above.
    let (raised, flags) = unsafe { (numfuzz_watched_flags_raised() != 0, numfuzz_watched_flags()) };
    set_copy(copies::PRECISE);

    let region = crate::region::Region::current();
    if !raised && plan == Plan::FastWatched {
        settle(region, false, false);
        return false;
    }
    // Under AFL++ each input's exceptions are printed or abort it (its crashes): never skipped.
    let skips =
        plan == Plan::FastWatched && ((fuzzed && crate::report::record_only()) || choice == Choice::CampaignReplays);
    // The fast run ended within the executor's time limit; what follows runs the input again
    // (its special-result pass, its precise re-run), so it has the re-runs' own limit.
    if let Some(region) = region {
        region.set_run_flag(RUN_FAST_ENDED);
    }
    if fast.is_some_and(crate::rerun_limit::too_slow_to_re_run) {
        settle(region, false, false);
        if let Some(region) = region {
            region.set_run_flag(RUN_RERUN_TOO_SLOW);
        }
        return false;
    }
    crate::rerun_limit::bounded(|| {
        let specials = (raised && skips).then(|| special_sites(&input));
        let non_finite = region.is_some_and(|r| r.run_flag(RUN_RESULT_NONFINITE));
        let outcome = flags << 1 | u32::from(non_finite);
        let path = specials.as_ref().map(|s| PathKey::of_fast_run(outcome, s.hash));
        let skip = path.is_some_and(|p| SEEN.with_borrow(|seen| seen.contains(p)));
        let predicted = fast.map(crate::rerun_limit::predicted);
        let throttled = !skip
            && specials
                .as_ref()
                .is_some_and(|s| THROTTLE.with_borrow_mut(|t| t.skips(&s.words, outcome, predicted)));
        let rerun = (raised && !skip && !throttled) || plan == Plan::FastThenPrecise;
        settle(region, rerun, skip);
        if throttled {
            if let Some(region) = region {
                region.set_run_flag(RUN_RERUN_THROTTLED);
            }
        }
        if !rerun {
            return;
        }
        // Timed to learn the slowdown from a fast run's time and to weigh the re-run's cost.
        let started = fast.map(|_| Instant::now());
        crate::edges::discarding(|| {
            // SAFETY: as above; the re-run starts from the flags the fast run started from.
            unsafe { numfuzz_clear_watched_flags() };
            input();
        });
        let took = started.map(|s| s.elapsed());
        if let (Some(fast), Some(took)) = (fast, took) {
            crate::rerun_limit::measured(fast, took);
        }
        if let Some(p) = path {
            SEEN.with_borrow_mut(|seen| seen.insert(p));
        }
        if let (Some(specials), Some(region)) = (specials, region) {
            let taught = EVER_RECORDED
                .with_borrow_mut(|ever| crate::rerun_throttle::learn(ever, region.exception_map(), non_finite));
            THROTTLE.with_borrow_mut(|t| t.note(&specials.words, outcome, taught, took));
        }
    });
    false
}

/// Settles the fast run's results and marks the region's run as re-run, or as fast only
/// (skipped, or nothing to re-run).
fn settle(region: Option<&crate::region::Region>, rerun: bool, skip: bool) {
    crate::results::settle_fast_run(rerun);
    if let Some(region) = region {
        region.set_run_flag(match (rerun, skip) {
            (true, _) => RUN_PRECISE,
            (false, true) => RUN_PRECISE_SKIPPED | RUN_FAST_ONLY,
            (false, false) => RUN_FAST_ONLY,
        });
    }
}

/// The fast run's input again on the special-result copies (edges discarded): a hash of the
/// checked operations whose results were special (`fast_specials`). The fast copies carry no
/// such bits, so that the runs that raise nothing (most, in most programs) cost what the
/// program costs; only the runs whose precise re-run a key may spare pay for this pass.
fn special_sites(input: &impl Fn() -> bool) -> crate::fast_specials::SpecialSites {
    crate::edges::discarding(|| {
        set_copy(copies::SPECIALS);
        // SAFETY: plain C call on the FP environment and the sentinel byte.
        unsafe { numfuzz_clear_watched_flags() };
        input();
        set_copy(copies::PRECISE);
    });
    crate::fast_specials::take()
}

/// What a fast run that raised a flag looked like: its edge path, the flags, the checked
/// operations whose results were special (`fast_specials`), whether a primary result went Inf
/// or NaN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PathKey(u64);

impl PathKey {
    /// `outcome`: the flags, shifted left by one, and whether a primary result went Inf or NaN.
    fn of_fast_run(outcome: u32, specials: u64) -> PathKey {
        let h = crate::edges::path_hash()
            ^ specials.rotate_left(23)
            ^ u64::from(outcome).wrapping_mul(0xA24B_AED4_963E_E407);
        // 0 marks an empty cell of the table.
        PathKey(h.max(1))
    }
}

/// The keys of fast runs re-run precisely in this process: an open-addressing table of a fixed
/// size, forgotten whole when half full (the paths then run precisely once more).
struct SeenPaths {
    cells: Vec<u64>,
    used: usize,
}

impl SeenPaths {
    const CELLS: usize = 1 << 16;

    fn slot(&self, key: PathKey) -> usize {
        let mask = self.cells.len() - 1;
        let mut i = (key.0 >> 20) as usize & mask;
        while self.cells[i] != 0 && self.cells[i] != key.0 {
            i = (i + 1) & mask;
        }
        i
    }

    fn contains(&self, key: PathKey) -> bool {
        !self.cells.is_empty() && self.cells[self.slot(key)] == key.0
    }

    fn insert(&mut self, key: PathKey) {
        if self.cells.is_empty() || self.used * 2 >= self.cells.len() {
            self.cells = vec![0; Self::CELLS];
            self.used = 0;
        }
        let i = self.slot(key);
        if self.cells[i] == 0 {
            self.cells[i] = key.0;
            self.used += 1;
        }
    }
}

thread_local! {
    static SEEN: std::cell::RefCell<SeenPaths> = const { std::cell::RefCell::new(SeenPaths { cells: Vec::new(), used: 0 }) };
    static THROTTLE: std::cell::RefCell<crate::rerun_throttle::Throttle> = std::cell::RefCell::default();
    /// Every mark the exception map has had after a re-run in this process.
    static EVER_RECORDED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replays_run_once_and_precisely_unless_asked() {
        for fast_asked in [false, true] {
            assert_eq!(plan(true, false, fast_asked, Choice::Default), Plan::Precise);
            assert_eq!(plan(true, false, fast_asked, Choice::Always), Plan::Precise);
            assert_eq!(plan(true, false, fast_asked, Choice::FastReplays), Plan::FastWatched);
        }
    }

    #[test]
    fn fuzzed_runs_are_fast_first_and_precise_when_distances_are_wanted() {
        assert_eq!(plan(true, true, true, Choice::Default), Plan::FastWatched);
        assert_eq!(plan(true, true, false, Choice::Default), Plan::FastThenPrecise);
        assert_eq!(plan(true, true, true, Choice::Always), Plan::FastThenPrecise);
    }

    #[test]
    fn campaign_replays_are_fast_first() {
        assert_eq!(plan(true, false, false, Choice::CampaignReplays), Plan::FastWatched);
    }

    #[test]
    fn a_path_is_seen_once_inserted_and_forgotten_when_the_table_fills() {
        let mut seen = SeenPaths {
            cells: Vec::new(),
            used: 0,
        };
        assert!(!seen.contains(PathKey(7)));
        seen.insert(PathKey(7));
        seen.insert(PathKey(7));
        assert!(seen.contains(PathKey(7)) && !seen.contains(PathKey(8)));
        assert_eq!(seen.used, 1);
        for k in 0..SeenPaths::CELLS as u64 / 2 {
            seen.insert(PathKey(100 + (k << 20)));
        }
        assert!(!seen.contains(PathKey(7)), "forgotten at half full");
        assert!(seen.used <= SeenPaths::CELLS / 2);
    }

    #[test]
    fn programs_without_fast_copies_always_run_once() {
        for (fuzzed, fast_asked) in [(false, false), (true, true), (true, false)] {
            for choice in [
                Choice::Default,
                Choice::Always,
                Choice::FastReplays,
                Choice::CampaignReplays,
            ] {
                assert_eq!(plan(false, fuzzed, fast_asked, choice), Plan::Precise);
            }
        }
    }
}
