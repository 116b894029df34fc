//! Fast runs, and precise re-runs when the FPU saw an exception.
//!
//! The pass splits every function that has checked operations into a fast copy (the
//! program's own code, nothing added but the coverage guards) and a precise copy
//! (`<name>.numfuzz.precise`: every check, every ErrBits measure, the comparison hooks). Each
//! split function reads `__numfuzz_precise` at its entry and goes to the precise copy when it
//! is set.
//!
//! A fast run clears the FPU's sticky Invalid, DivByZero, Overflow and Underflow flags, runs the
//! input on the fast copies and reads the flags back. When none is up, no check could have
//! reported anything (the checkers' kinds are the FPU's flags: the exactness property), so the
//! input ran at the program's own speed and the run is done. When one is up, the input runs
//! again on the precise copies, which find the sites and operands. That run's edges go to a
//! scratch map: the coverage is the fast run's, counted once.
//!
//! A run is precise from the start (as every run was before split builds):
//! - when the fuzzer asks for distances or comparison operands (the region header's
//!   `MODE_FAST` is clear), or probes a slot;
//! - in programs with their own `main`, whose one run per process cannot be repeated (they never
//!   come here, and `__numfuzz_precise` keeps its initial 1);
//! - in programs without split functions (taint builds), and under `NUMFUZZ_PRECISE=1`.
//!
//! What a fast run cannot see: flags raised only in a thread other than the harness's (an
//! OpenMP worker's), and a check whose operation the compiler folded at build time. Campaigns
//! still run a share of their inputs precisely (see the engine's `run_mode`), and
//! `numfuzz run --precise` makes every run precise.

use numfuzz_abi::env;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// Read by split functions at their entry (numfuzz-abi `c_header::symbols::PRECISE`).
#[unsafe(no_mangle)]
pub static mut __numfuzz_precise: u8 = 1;

unsafe extern "C" {
    fn numfuzz_split_build() -> c_int;
    fn numfuzz_clear_watched_flags();
    fn numfuzz_watched_flags_raised() -> c_int;
}

/// Whether the current run may be fast (set at the start of every run from the region).
static FAST_ASKED: AtomicBool = AtomicBool::new(false);

fn set_precise(precise: bool) {
    // SAFETY: written between runs of the harness thread, which is the one that reads it.
    unsafe { __numfuzz_precise = u8::from(precise) };
}

/// The program has fast copies and the user did not ask for precise runs only.
fn fast_possible() -> bool {
    static POSSIBLE: OnceLock<bool> = OnceLock::new();
    *POSSIBLE.get_or_init(|| {
        // SAFETY: plain query of a weak symbol's address.
        let split = unsafe { numfuzz_split_build() } != 0;
        split && std::env::var(env::PRECISE).map_or(true, |v| v.trim() != "1")
    })
}

/// A fast run is under way (what it reports may be superseded by a re-run).
pub fn in_fast_run() -> bool {
    // SAFETY: see `set_precise`.
    unsafe { __numfuzz_precise == 0 }
}

/// Whether the next run may be fast: the region's `MODE_FAST`, and no ErrBits probe.
pub fn ask_fast(fast: bool) {
    FAST_ASKED.store(fast, Ordering::Relaxed);
}

/// Runs one input through `input`: fast, then precisely again if the FPU saw an exception;
/// or precisely when a fast run is not possible or not asked for.
pub fn run(input: impl Fn()) {
    if !(FAST_ASKED.load(Ordering::Relaxed) && fast_possible()) {
        input();
        return;
    }
    set_precise(false);
    // SAFETY: plain C calls on the FP environment.
    unsafe { numfuzz_clear_watched_flags() };
    input();
    // SAFETY: as above.
    let raised = unsafe { numfuzz_watched_flags_raised() } != 0;
    set_precise(true);
    crate::results::settle_fast_run(raised);
    if !raised {
        return;
    }
    crate::edges::discarding(|| {
        // SAFETY: as above; the re-run starts from the flags the fast run started from.
        unsafe { numfuzz_clear_watched_flags() };
        input();
    });
}
