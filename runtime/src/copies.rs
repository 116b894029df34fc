//! Which copy of a split function runs: the fast one, the precise one or the one with
//! special-result bits (numfuzz-abi `copies`; see `precise`). Split functions read
//! `__numfuzz_precise` at their entry; `precise` sets it around each run, and what a run
//! reports asks it whether a re-run may supersede the report.

use numfuzz_abi::copies;

/// Read by split functions at their entry (numfuzz-abi `c_header::symbols::PRECISE`).
#[unsafe(no_mangle)]
pub static mut __numfuzz_precise: u8 = copies::PRECISE;

/// Makes the next calls of split functions take the copy `copy` names (a `copies` value).
pub fn set_copy(copy: u8) {
    // SAFETY: written between runs of the harness thread, which is the one that reads it.
    unsafe { __numfuzz_precise = copy };
}

fn current() -> u8 {
    // SAFETY: see `set_copy`.
    unsafe { __numfuzz_precise }
}

/// A fast run is under way (what it reports may be superseded by a re-run).
pub fn in_fast_run() -> bool {
    current() == copies::FAST
}

/// The special-result copies run: the fast run's second pass, which reports nothing.
pub fn in_specials_run() -> bool {
    current() == copies::SPECIALS
}
