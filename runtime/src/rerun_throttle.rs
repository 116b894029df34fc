//! Per-site throttle of precise re-runs that teach nothing.
//!
//! A fast run that raised a flag is re-run precisely unless its key (edge path, flags, special
//! sites: `precise.rs`) ran precisely before. On code whose loops run a number of steps that
//! depends on the input, nearly every run has a path of its own, so nearly every raised run
//! re-ran: GSL's fermi_dirac_int skipped none. What a fast turn's re-run can teach is a
//! finding: a (site, kind) new to the process, or a known one that is an origin, or an origin
//! in a run whose declared result went Inf or NaN (the escape objective).
//!
//! So each operation that gave a special result (`fast_specials`) keeps a count of the re-runs
//! in which it was special and which taught nothing, and the flags those runs raised. A fast
//! run whose special operations have all been in [`FRUITLESS_BEFORE_THROTTLE`] such re-runs, and
//! whose flags (and non-finite result) are among theirs, is not re-run; one in [`TRICKLE`] of
//! those still is, so an operation that starts raising something new is found again, and a
//! re-run that teaches something starts its operations' counts over. Precise turns re-run
//! everything and are not throttled.
//!
//! Deciding needs the special operations, a second pass of the input (28 % of a legendre_Pl
//! campaign's cycles). Skipping that pass for an outcome (flags, non-finite result) whose last 64
//! passes had each spared the re-run was tried on 2026-12-06: 1.5x on legendre_Pl, but an
//! operation newly raising a flag other operations raise went unseen (an input imported from
//! another instance with its Overflow at a new site was not re-run), so it was dropped.

use std::collections::HashMap;

/// Fruitless re-runs an operation must have been special in before its runs may skip theirs.
pub const FRUITLESS_BEFORE_THROTTLE: u16 = 8;
/// One in this many runs the throttle would skip re-runs anyway.
pub const TRICKLE: u32 = 32;

/// One special operation's record.
#[derive(Clone, Copy, Debug, Default)]
struct SiteRecord {
    fruitless: u16,
    /// The outcomes (flags, non-finite result) of the fruitless re-runs it was special in.
    outcomes: u32,
}

/// The records of this process's special operations.
#[derive(Debug, Default)]
pub struct Throttle {
    sites: HashMap<u64, SiteRecord>,
    throttled_since_trickle: u32,
}

/// Every special operation of a pass, as a number: the word's place (`fast_specials`) and the
/// bit.
fn operations(words: &[(u64, u64)]) -> impl Iterator<Item = u64> + '_ {
    words
        .iter()
        .flat_map(|&(place, bits)| (0..64).filter(move |b| bits >> b & 1 != 0).map(move |b| place << 6 | b))
}

impl Throttle {
    /// Whether a fast run with these special operations and `outcome` skips its re-run.
    pub fn skips(&mut self, words: &[(u64, u64)], outcome: u32) -> bool {
        let mut known = 0;
        let mut any = false;
        for op in operations(words) {
            match self.sites.get(&op) {
                Some(r) if r.fruitless >= FRUITLESS_BEFORE_THROTTLE => known |= r.outcomes,
                _ => return false,
            }
            any = true;
        }
        if !any || outcome & !known != 0 {
            return false;
        }
        self.throttled_since_trickle += 1;
        if self.throttled_since_trickle >= TRICKLE {
            self.throttled_since_trickle = 0;
            return false;
        }
        true
    }

    /// A re-run of a fast run with these special operations and `outcome` ended; `taught` says
    /// whether it recorded something new to the process.
    pub fn note(&mut self, words: &[(u64, u64)], outcome: u32, taught: bool) {
        for op in operations(words) {
            let r = self.sites.entry(op).or_default();
            if taught {
                r.fruitless = 0;
            } else {
                r.fruitless = r.fruitless.saturating_add(1);
                r.outcomes |= outcome;
            }
        }
    }
}

/// Records what a re-run recorded into `ever` (a byte per exception-map slot, grown as needed):
/// whether any slot got a mark it never had in this process. `escaped` (the run's declared
/// result went Inf or NaN) gives origins a mark of their own.
pub fn learn(ever: &mut Vec<u8>, recorded: &[u8], escaped: bool) -> bool {
    use numfuzz_abi::kind::EXC_ORIGIN;
    const ESCAPED_ORIGIN: u8 = 0x80;
    if ever.len() < recorded.len() {
        ever.resize(recorded.len(), 0);
    }
    let mut taught = false;
    for (i, &b) in recorded.iter().enumerate() {
        if b == 0 {
            continue;
        }
        let marks = b | if escaped && b & EXC_ORIGIN != 0 {
            ESCAPED_ORIGIN
        } else {
            0
        };
        taught |= marks & !ever[i] != 0;
        ever[i] |= marks;
    }
    taught
}

#[cfg(test)]
mod tests {
    use super::*;
    use numfuzz_abi::kind::{EXC_ORIGIN, EXC_RAISED};

    #[test]
    fn operations_throttle_after_fruitless_re_runs_with_the_same_flags() {
        let mut t = Throttle::default();
        let words = [(3u64, 0b101u64)];
        for _ in 0..FRUITLESS_BEFORE_THROTTLE {
            assert!(!t.skips(&words, 0b10));
            t.note(&words, 0b10, false);
        }
        assert!(t.skips(&words, 0b10));
        assert!(!t.skips(&words, 0b100), "a flag those re-runs never raised");
        assert!(!t.skips(&[(3, 0b111)], 0b10), "an operation never special before");
        assert!(!t.skips(&[], 0b10), "no special operation: nothing to judge by");
        t.note(&words, 0b10, true);
        assert!(!t.skips(&words, 0b10), "a re-run that taught something starts over");
    }

    #[test]
    fn one_in_trickle_throttled_runs_re_runs_anyway() {
        let mut t = Throttle::default();
        let words = [(0u64, 1u64)];
        for _ in 0..FRUITLESS_BEFORE_THROTTLE {
            t.note(&words, 1, false);
        }
        let re_run = (0..TRICKLE * 4).filter(|_| !t.skips(&words, 1)).count();
        assert_eq!(re_run, 4);
    }

    #[test]
    fn a_re_run_teaches_a_new_slot_a_new_origin_or_a_first_escape() {
        let mut ever = Vec::new();
        assert!(learn(&mut ever, &[0, EXC_RAISED], false));
        assert!(!learn(&mut ever, &[0, EXC_RAISED], false));
        assert!(learn(&mut ever, &[0, EXC_RAISED | EXC_ORIGIN], false));
        assert!(
            learn(&mut ever, &[0, EXC_RAISED | EXC_ORIGIN], true),
            "its first escape"
        );
        assert!(!learn(&mut ever, &[0, EXC_RAISED | EXC_ORIGIN], true));
        assert!(learn(&mut ever, &[0, 0, EXC_RAISED], false), "the map grew");
    }
}
