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
//! A re-run counts by its cost: one that took k times the process's typical re-run (a geometric
//! mean: the costs are heavy-tailed) counts as k fruitless re-runs, and a run the throttle would
//! skip takes its one-in-[`TRICKLE`] turn only after k times as many skipped runs. On loops whose
//! step count follows the input the costs of re-runs differ by 10,000 times: in a 20 s campaign
//! of GSL's fermi_dirac_int half the time went to 18 re-runs of 0.4-0.9 s each (the median run
//! took 2 us), every one re-run because the count of fruitless re-runs was per re-run; on
//! legendre_Pl and bessel_Jnu a tenth of the re-runs (0.7-6 ms against a median of 4-28 us) took
//! most of the campaign. Cost is known in in-process campaigns, where the runtime times fast runs
//! (`rerun_limit`); elsewhere every re-run counts one.
//!
//! Deciding needs the special operations, a second pass of the input (28 % of a legendre_Pl
//! campaign's cycles). Skipping that pass for an outcome (flags, non-finite result) whose last 64
//! passes had each spared the re-run was tried on 2026-12-06: 1.5x on legendre_Pl, but an
//! operation newly raising a flag other operations raise went unseen (an input imported from
//! another instance with its Overflow at a new site was not re-run), so it was dropped.

use std::collections::HashMap;
use std::time::Duration;

/// Fruitless re-runs an operation must have been special in before its runs may skip theirs.
pub const FRUITLESS_BEFORE_THROTTLE: u32 = 8;
/// One in this many runs the throttle would skip re-runs anyway.
pub const TRICKLE: u32 = 32;

/// Re-runs timed before their typical cost is trusted; until then each counts one.
const WARM_UP: u32 = 16;

/// One special operation's record.
#[derive(Clone, Copy, Debug, Default)]
struct SiteRecord {
    /// Fruitless re-runs it was special in, each weighted by its cost ([`TypicalCost::weight`]).
    fruitless: u32,
    /// The outcomes (flags, non-finite result) of the fruitless re-runs it was special in.
    outcomes: u32,
}

/// The typical re-run's cost in this process: the geometric mean of the re-runs' times.
#[derive(Debug, Default)]
struct TypicalCost {
    /// The mean of ln(nanoseconds).
    log_ns: f64,
    measured: u32,
}

impl TypicalCost {
    fn add(&mut self, took: Duration) {
        let x = (took.as_nanos().max(1) as f64).ln();
        self.measured = self.measured.saturating_add(1);
        self.log_ns += (x - self.log_ns) / f64::from(self.measured);
    }

    /// How many typical re-runs a re-run of `cost` is worth: at least 1, and 1 while the typical
    /// cost is not known.
    fn weight(&self, cost: Option<Duration>) -> u32 {
        match cost {
            Some(cost) if self.measured >= WARM_UP => {
                // The mean is of logs of at least 1 ns, so the divisor is at least 1; the cast
                // saturates at u32::MAX.
                let ratio = cost.as_nanos() as f64 / self.log_ns.exp();
                (ratio.round() as u32).max(1)
            }
            _ => 1,
        }
    }
}

/// The records of this process's special operations.
#[derive(Debug, Default)]
pub struct Throttle {
    sites: HashMap<u64, SiteRecord>,
    throttled_since_trickle: u32,
    rerun_cost: TypicalCost,
}

/// Every special operation of a pass, as a number: the word's place (`fast_specials`) and the
/// bit.
fn operations(words: &[(u64, u64)]) -> impl Iterator<Item = u64> + '_ {
    words
        .iter()
        .flat_map(|&(place, bits)| (0..64).filter(move |b| bits >> b & 1 != 0).map(move |b| place << 6 | b))
}

impl Throttle {
    /// Whether a fast run with these special operations and `outcome` skips its re-run, which
    /// would take `predicted` (when known).
    pub fn skips(&mut self, words: &[(u64, u64)], outcome: u32, predicted: Option<Duration>) -> bool {
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
        self.throttled_since_trickle = self.throttled_since_trickle.saturating_add(1);
        if self.throttled_since_trickle >= TRICKLE.saturating_mul(self.rerun_cost.weight(predicted)) {
            self.throttled_since_trickle = 0;
            return false;
        }
        true
    }

    /// A re-run of a fast run with these special operations and `outcome` ended after `took`
    /// (when timed); `taught` says whether it recorded something new to the process.
    pub fn note(&mut self, words: &[(u64, u64)], outcome: u32, taught: bool, took: Option<Duration>) {
        let weight = self.rerun_cost.weight(took);
        if let Some(took) = took {
            self.rerun_cost.add(took);
        }
        for op in operations(words) {
            let r = self.sites.entry(op).or_default();
            if taught {
                r.fruitless = 0;
            } else {
                r.fruitless = r.fruitless.saturating_add(weight);
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
            assert!(!t.skips(&words, 0b10, None));
            t.note(&words, 0b10, false, None);
        }
        assert!(t.skips(&words, 0b10, None));
        assert!(!t.skips(&words, 0b100, None), "a flag those re-runs never raised");
        assert!(!t.skips(&[(3, 0b111)], 0b10, None), "an operation never special before");
        assert!(!t.skips(&[], 0b10, None), "no special operation: nothing to judge by");
        t.note(&words, 0b10, true, None);
        assert!(
            !t.skips(&words, 0b10, None),
            "a re-run that taught something starts over"
        );
    }

    #[test]
    fn one_in_trickle_throttled_runs_re_runs_anyway() {
        let mut t = Throttle::default();
        let words = [(0u64, 1u64)];
        for _ in 0..FRUITLESS_BEFORE_THROTTLE {
            t.note(&words, 1, false, None);
        }
        let re_run = (0..TRICKLE * 4).filter(|_| !t.skips(&words, 1, None)).count();
        assert_eq!(re_run, 4);
    }

    /// A process whose re-runs typically take `typical`, with no operation throttled yet.
    fn timed_throttle(typical: Duration) -> Throttle {
        let mut t = Throttle::default();
        for k in 0..WARM_UP as u64 {
            // Re-runs that taught something, so that no operation counts as fruitless.
            t.note(&[(100 + k, 1)], 1, true, Some(typical));
        }
        t
    }

    #[test]
    fn one_fruitless_re_run_at_a_thousand_times_the_typical_cost_throttles_its_operations() {
        let typical = Duration::from_micros(20);
        let mut t = timed_throttle(typical);
        let words = [(7u64, 0b11u64)];
        assert!(!t.skips(&words, 0b10, Some(typical * 1000)));
        t.note(&words, 0b10, false, Some(typical * 1000));
        assert!(
            t.skips(&words, 0b10, Some(typical * 1000)),
            "its next slow run is spared"
        );
        assert!(
            !t.skips(&words, 0b110, Some(typical * 1000)),
            "a flag it never raised still re-runs"
        );
        // At the typical cost a fruitless re-run counts one, as untimed ones do.
        let cheap = [(9u64, 1u64)];
        t.note(&cheap, 0b10, false, Some(typical));
        assert!(!t.skips(&cheap, 0b10, Some(typical)));
    }

    #[test]
    fn a_slow_run_takes_its_trickle_turn_after_as_many_more_throttled_runs_as_it_costs() {
        let typical = Duration::from_micros(20);
        let mut t = timed_throttle(typical);
        let words = [(7u64, 1u64)];
        for _ in 0..FRUITLESS_BEFORE_THROTTLE {
            t.note(&words, 1, false, None);
        }
        let re_run =
            |t: &mut Throttle, cost: Duration| (0..TRICKLE * 40).filter(|_| !t.skips(&words, 1, Some(cost))).count();
        assert_eq!(re_run(&mut t, typical), 40);
        assert_eq!(re_run(&mut t, typical * 10), 4);
        assert_eq!(re_run(&mut t, typical * 1000), 0);
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
