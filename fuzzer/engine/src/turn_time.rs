//! Turns of slow testcases end early, so the campaign's time goes where mutants are cheap.
//!
//! LibAFL's mutational stage gives every testcase a turn of 1 to 128 mutants, whatever a mutant
//! costs. On code whose loops run a number of steps that the input sets (GSL's
//! fermi_dirac_int sums `j` terms of a series for `fd_UMseries_int`; the IEEE-754 field
//! mutator and comparison solving find large `j` quickly), one testcase's mutants cost a
//! thousand times another's, and the slow ones took most of the campaign: 41 % of a 20 s
//! fermi_dirac_int campaign's cycles ran in one such loop (`hyperg_zaU_asymp`), at 315 exec/s
//! against AFL++'s 10,000 on the same harness. AFL++ gives a testcase fewer havoc mutants the
//! slower it runs against the queue's average (`calculate_score`); this does the same by time:
//! a turn ends once it has run as long as [`TURN_MUTANTS`] mutants at the campaign's typical
//! cost, so a testcase whose mutants cost k times that gets about `TURN_MUTANTS / k` of them
//! (at least [`MIN_MUTANTS`]), and one at the typical cost is not cut.
//!
//! The input-to-state stage gets the same budget, 256 mutants at the typical cost per testcase
//! ([`TurnClock::budget`], `i2s.rs`), and no tracing run for a testcase whose own run took longer
//! than that: its 256 candidates of a fermi_dirac_int testcase of half a second each held a
//! client for minutes, and its tracing runs alone took 5 of 15 s. A local-search descent is cut
//! once it has run its budget of probes at 16 times the typical cost (`local_search`). Together,
//! on `scripts/bench-gsl.sh 20 --afl` (2026-12-06, two runs): fermi_dirac_int 293 to 649-720
//! exec/s, bessel_Jnu 10,531 to 14,188-14,356, legendre_Pl 13,639 to 17,813-23,286, with more
//! bugs found (15-16, was 13).
//!
//! The typical cost is a geometric mean of the time from one mutant to the next (its run, the
//! feedbacks, the corpus), over the client's mutants: the costs are heavy-tailed, and an
//! arithmetic mean is the tail's, which would cut nothing. It is kept in the client (a restart
//! measures it again from its first mutants).

use crate::run_mode::RunModeRecord;
use libafl::corpus::CorpusId;
use libafl::mutators::{MutationResult, Mutator};
use libafl::stages::Stage;
use libafl::{Error, HasMetadata};
use libafl_bolts::Named;
use std::borrow::Cow;
use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// A turn lasts at most as long as this many mutants at the typical cost (LibAFL's longest turn).
pub const TURN_MUTANTS: f64 = 128.0;
/// Mutants every turn runs, however slow.
pub const MIN_MUTANTS: u32 = 4;
/// Mutants measured before turns are cut: the typical cost must be known first.
const WARM_UP: u32 = 16;
/// The geometric mean's weight of each new mutant (an exponential moving average of the log).
const WEIGHT: f64 = 1.0 / 512.0;

/// The clock of the current turn and the campaign's typical mutant cost, shared by the stage
/// that starts turns and the mutator that ends them.
#[derive(Clone, Debug, Default)]
pub struct TurnClock(Rc<ClockState>);

#[derive(Debug, Default)]
struct ClockState {
    /// When the turn started, and when its last mutant was made.
    started: Cell<Option<Instant>>,
    last: Cell<Option<Instant>>,
    mutants: Cell<u32>,
    /// Whether the turn was already counted as cut (`timed_turns`).
    cut: Cell<bool>,
    /// ln(nanoseconds) of a mutant's cost, averaged.
    log_cost: Cell<f64>,
    measured: Cell<u32>,
}

impl TurnClock {
    fn start_turn(&self, now: Instant) {
        let s = &self.0;
        s.started.set(Some(now));
        s.last.set(None);
        s.mutants.set(0);
        s.cut.set(false);
    }

    /// Marks the current turn as cut: true the first time in that turn.
    fn first_cut(&self) -> bool {
        !self.0.cut.replace(true)
    }

    /// Asks for a mutant at `now`: whether the turn still has time for it. The last mutant's
    /// cost is measured here, up to now.
    fn mutant(&self, now: Instant) -> bool {
        let s = &self.0;
        if let Some(last) = s.last.take() {
            self.measure(now.saturating_duration_since(last));
        }
        let Some(started) = s.started.get() else {
            return true;
        };
        if s.mutants.get() >= MIN_MUTANTS {
            if let Some(budget) = self.budget(TURN_MUTANTS) {
                if now.saturating_duration_since(started) > budget {
                    return false;
                }
            }
        }
        s.mutants.set(s.mutants.get() + 1);
        true
    }

    /// The mutant asked for at `now` runs (a skipped one costs nothing and is not measured).
    fn runs(&self, now: Instant) {
        self.0.last.set(Some(now));
    }

    /// How long `mutants` mutants at the typical cost take; `None` while it is not known yet.
    pub fn budget(&self, mutants: f64) -> Option<Duration> {
        let s = &self.0;
        (s.measured.get() >= WARM_UP).then(|| Duration::from_secs_f64(mutants * s.log_cost.get().exp() * 1e-9))
    }

    fn measure(&self, cost: Duration) {
        let s = &self.0;
        let x = (cost.as_nanos().max(1) as f64).ln();
        let n = s.measured.get();
        // The first mutants set the mean; later ones move it by WEIGHT.
        let w = (1.0 / f64::from(n + 1)).max(WEIGHT);
        s.log_cost.set(s.log_cost.get() + w * (x - s.log_cost.get()));
        s.measured.set(n.saturating_add(1));
    }
}

/// Starts the clock of each turn; it goes just before the mutational stage.
pub struct TurnClockStage {
    clock: TurnClock,
}

impl TurnClockStage {
    pub fn new(clock: TurnClock) -> Self {
        TurnClockStage { clock }
    }
}

impl<E, EM, S, Z> Stage<E, EM, S, Z> for TurnClockStage {
    fn perform(&mut self, _: &mut Z, _: &mut E, _: &mut S, _: &mut EM) -> Result<(), Error> {
        self.clock.start_turn(Instant::now());
        Ok(())
    }
}

restarts_from_scratch!(TurnClockStage);

/// `inner`, whose mutants after the turn's time are `Skipped` (the stage passes over them
/// without running them).
pub struct TimedTurns<M> {
    inner: M,
    clock: TurnClock,
}

impl<M> TimedTurns<M> {
    pub fn new(inner: M, clock: TurnClock) -> Self {
        TimedTurns { inner, clock }
    }
}

impl<M> Named for TimedTurns<M> {
    fn name(&self) -> &Cow<'static, str> {
        static NAME: Cow<'static, str> = Cow::Borrowed("TimedTurns");
        &NAME
    }
}

impl<I, S: HasMetadata, M: Mutator<I, S>> Mutator<I, S> for TimedTurns<M> {
    fn mutate(&mut self, state: &mut S, input: &mut I) -> Result<MutationResult, Error> {
        let now = Instant::now();
        if !self.clock.mutant(now) {
            if self.clock.first_cut() {
                state.metadata_or_insert_with(RunModeRecord::default).timed_turns += 1;
            }
            return Ok(MutationResult::Skipped);
        }
        let result = self.inner.mutate(state, input)?;
        if result != MutationResult::Skipped {
            self.clock.runs(now);
        }
        Ok(result)
    }

    fn post_exec(&mut self, state: &mut S, new_corpus_id: Option<CorpusId>) -> Result<(), Error> {
        self.inner.post_exec(state, new_corpus_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asks for a mutant at `now` and runs it if the turn has time.
    fn step(clock: &TurnClock, now: Instant) -> bool {
        let runs = clock.mutant(now);
        if runs {
            clock.runs(now);
        }
        runs
    }

    /// A clock whose typical cost was measured at `cost` per mutant, over as many mutants as
    /// the first seconds of a campaign run.
    fn warmed(cost: Duration) -> (TurnClock, Instant) {
        let clock = TurnClock::default();
        let mut now = Instant::now();
        for _ in 0..20 {
            clock.start_turn(now);
            for _ in 0..100 {
                assert!(step(&clock, now), "a turn at the typical cost is not cut");
                now += cost;
            }
        }
        (clock, now)
    }

    /// Mutants a turn gets when each costs `cost`.
    fn turn_length(clock: &TurnClock, mut now: Instant, cost: Duration) -> u32 {
        clock.start_turn(now);
        let mut mutants = 0;
        while mutants < 1000 && step(clock, now) {
            mutants += 1;
            now += cost;
        }
        mutants
    }

    #[test]
    fn a_testcase_at_the_typical_cost_keeps_every_mutant_of_a_turn() {
        let cost = Duration::from_micros(100);
        let (clock, now) = warmed(cost);
        assert!(turn_length(&clock, now, cost) > 120);
    }

    #[test]
    fn a_testcase_ten_times_slower_gets_a_tenth_of_the_mutants_and_never_fewer_than_the_minimum() {
        let typical = Duration::from_micros(100);
        let (clock, now) = warmed(typical);
        let slow = turn_length(&clock, now, typical * 10);
        assert!((12..=15).contains(&slow), "{slow} mutants");
        let (clock, now) = warmed(typical);
        assert_eq!(turn_length(&clock, now, typical * 10_000), MIN_MUTANTS);
    }

    #[test]
    fn a_few_very_slow_mutants_do_not_make_the_typical_cost_theirs() {
        let typical = Duration::from_micros(100);
        let (clock, mut now) = warmed(typical);
        // One turn of slow mutants in ten: the arithmetic mean would be 100x the typical cost.
        for turn in 0..50 {
            let cost = if turn % 10 == 0 { typical * 1000 } else { typical };
            clock.start_turn(now);
            for _ in 0..64 {
                if !step(&clock, now) {
                    break;
                }
                now += cost;
            }
        }
        let slow = turn_length(&clock, now, typical * 10);
        assert!(slow < 40, "{slow} mutants");
    }
}
