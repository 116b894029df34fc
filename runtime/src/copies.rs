//! Which copy of a split function runs: the fast one or the precise one (see `precise`). Split
//! functions read `__numfuzz_precise` at their entry; `precise` sets it around each run, and
//! what a run reports asks it whether a re-run may supersede the report.

/// Read by split functions at their entry (numfuzz-abi `c_header::symbols::PRECISE`).
#[unsafe(no_mangle)]
pub static mut __numfuzz_precise: u8 = 1;

/// Makes the next calls of split functions take their precise (`true`) or fast copies.
pub fn set_precise(precise: bool) {
    // SAFETY: written between runs of the harness thread, which is the one that reads it.
    unsafe { __numfuzz_precise = u8::from(precise) };
}

/// A fast run is under way (what it reports may be superseded by a re-run).
pub fn in_fast_run() -> bool {
    // SAFETY: see `set_precise`.
    unsafe { __numfuzz_precise == 0 }
}
