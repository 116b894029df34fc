//! Which executions are precise: the fuzzer's side of fast runs (see the runtime's
//! `precise.rs`).
//!
//! Every execution first runs the input on the target's fast copies, which give its coverage
//! and cost about what the program costs; the target re-runs it precisely when the FPU's flags
//! or a sentinel show an exception, so a fast run misses no finding. What it does not give is
//! distances (ErrBits and comparison distances), which only precise runs measure. So the
//! mutants of a testcase are also run precisely (the region header's `MODE_FAST` clear) when
//! distances may pay:
//! - the first turn of every testcase that brought something new (an edge, an exception, a
//!   distance slot measured for the first time), so that new distances are measured wherever
//!   coverage leads;
//! - any turn of a testcase kept for a smaller distance with probability [`DISTANCE_SHARE`]
//!   (it holds progress toward an exception or a branch outcome, and its neighbourhood is where
//!   the distance guides). A testcase kept only for lowering distances already measured gets
//!   no precise first turn of its own (`fast_first_turns`): on slow GSL functions nearly
//!   every precise mutant lowers one of a thousand known ErrBits slots by a little, so giving
//!   each such testcase a precise first turn made every turn precise (fermi_dirac_int: 43 of 43
//!   turns, 100 % of its runs, 240 exec/s against AFL++'s 9,750). The descent on one distance
//!   is the local-search stage's work, which probes precisely wherever a distance comes close.
//!
//! Measured on the GSL harnesses of `scripts/bench-campaign-overhead.sh`, where almost every
//! testcase is kept for a smaller distance: the policy before (such testcases always, a quarter
//! of the others) ran 88–96 % of the turns precisely; one that kept a testcase precise while its
//! precise turns kept anything with a smaller distance ran 100 % (on slow harnesses every turn
//! keeps something); see the README for the figures.
//!
//! A testcase's first turn is marked on the testcase ([`FirstTurnDone`]), in the corpus: an
//! in-process client restarts at every time-out and crash, and a mark kept in the stage gave
//! every testcase a first turn again after each restart (GSL's hyperg_2F1, which restarts
//! every few turns at its calibrated 20 ms, ran 100 % of its turns precisely).
//!
//! A time budget for precise turns (at most half of the turn time, the rest fast) was tried
//! on those five harnesses and dropped: it held the precise turns to 11–60 %, but 79–95 % of
//! the executions still ran precisely (in a fast turn on GSL nearly every mutant raises a flag
//! on a path not seen before), so exec/s stayed within run-to-run noise while distances were
//! measured half as often.
//!
//! A testcase's precise turns that pay nothing (no edge, no exception input, no distance slot
//! measured for the first time: [`pay`]) halve its chance of another ([`BarrenPreciseTurns`];
//! `barren_turns`); one that pays restores it. On GSL's bessel_Jnu a precise turn costs about
//! six fast ones, its coin turns were two in three of its precise turns, and nine in ten of its
//! precise turns pay nothing: with the halving, 8.3-9.7k exec/s against 7.0-7.9k and 390-404
//! exceptions against 381-385 in paired 20 s runs.
//!
//! A precise turn runs its first [`PRECISE_MUTANTS_PER_TURN`] mutants precisely and the rest
//! fast ([`PreciseQuota`]; `capped_turns`). Tried alone on 2026-11-29 it bought nothing: the
//! share of precise runs went from 97-100 % to 79-97 % on hyperg_2F1, bessel_Jnu and gamma_inc,
//! because the fast mutants raised flags under re-run keys not seen before and re-ran anyway.
//! With the runtime's per-site throttle of re-runs that teach nothing (`rerun_throttle.rs`)
//! those fast mutants stay fast.
//!
//! The seeds, the input-to-state stage's tracing runs (it sets the word's comparison bits,
//! which clears the fast bit) and the local-search stage's probes (the target makes every
//! probing run precise) are precise too. The input-to-state candidates run fast (`i2s.rs`).
//! `--precise` makes every run precise.

use crate::meta::{DistanceHistory, DistanceProgress, NewEdges, NewExceptions};
use libafl::corpus::HasCurrentCorpusId;
use libafl::mutators::{MutationResult, Mutator};
use libafl::stages::Stage;
use libafl::state::{HasCurrentTestcase, HasRand};
use libafl::{Error, HasMetadata, HasNamedMetadata};
use libafl_bolts::rands::Rand;
use libafl_bolts::Named;
use numfuzz_abi::region_view::{HeaderWord, RegionView};
use numfuzz_abi::shm::MODE_FAST;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};

/// Probability that a later turn of a testcase kept for a smaller distance runs precisely.
pub const DISTANCE_SHARE: f64 = 0.125;

/// Mutants of a precise turn that run precisely; the rest of the turn runs fast.
pub const PRECISE_MUTANTS_PER_TURN: u32 = 32;

/// The most a testcase's coin is halved for precise turns that paid nothing: 1/128 at the
/// least, so that a testcase whose neighbourhood changes (the corpus grows around it) still
/// gets a precise turn now and then.
const MOST_HALVINGS: u32 = 4;

/// The region header's mode word, of which this owns the [`MODE_FAST`] bit.
#[derive(Clone, Copy, Debug)]
pub struct RunModeWord {
    region: RegionView,
}

impl RunModeWord {
    pub fn new(region: RegionView) -> RunModeWord {
        RunModeWord { region }
    }

    fn word(&self) -> &AtomicU32 {
        // The target reads it at the start of each run.
        self.region.word(HeaderWord::CmpMode)
    }

    /// Makes the next runs fast or precise.
    pub fn set_fast(&self, fast: bool) {
        if fast {
            self.word().fetch_or(MODE_FAST, Ordering::Release);
        } else {
            self.word().fetch_and(!MODE_FAST, Ordering::Release);
        }
    }

    pub fn is_fast(&self) -> bool {
        self.word().load(Ordering::Acquire) & MODE_FAST != 0
    }
}

/// Mutational turns by mode, and executions that ran precisely or skipped a precise re-run
/// (the target's run flags), kept in the state (it survives client restarts) for
/// `fuzzer_stats`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunModeRecord {
    pub fast_turns: u64,
    pub precise_turns: u64,
    #[serde(default)]
    pub precise_runs: u64,
    #[serde(default)]
    pub skipped_reruns: u64,
    /// Time-outs after the fast run had ended (in its special-result pass or precise re-run).
    #[serde(default)]
    pub rerun_timeouts: u64,
    /// Re-runs not started: predicted to outlive the time limit.
    #[serde(default)]
    pub reruns_too_slow: u64,
    /// Re-runs not started: their fast run's special operations had been special in re-runs
    /// that taught nothing (the runtime's `rerun_throttle`).
    #[serde(default)]
    pub reruns_throttled: u64,
    /// First turns run fast: their testcase only lowered distances already measured.
    #[serde(default)]
    pub fast_first_turns: u64,
    /// Precise turns whose later mutants ran fast ([`PRECISE_MUTANTS_PER_TURN`]).
    #[serde(default)]
    pub capped_turns: u64,
    /// Turns ended early: their mutants cost more than the campaign's typical mutant
    /// (`mutators::turn_time`).
    #[serde(default)]
    pub timed_turns: u64,
    /// Precise turns that paid nothing ([`pay`]).
    #[serde(default)]
    pub barren_turns: u64,
}
libafl_bolts::impl_serdeany!(RunModeRecord);

/// On a testcase: its precise turns since the last that paid ([`pay`]), which halve the chance
/// of another (up to [`MOST_HALVINGS`] times).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct BarrenPreciseTurns(pub u32);
libafl_bolts::impl_serdeany!(BarrenPreciseTurns);

/// What a precise turn is paid in: the campaign's progress (edges covered, exception inputs
/// saved: [`crate::maps::progress`]) and distance slots measured at least once. Not
/// lower distances at slots already measured: on a slow GSL function nearly every precise
/// mutant lowers one of a thousand slots by a little.
pub fn pay<S: HasMetadata + HasNamedMetadata>(state: &S) -> u64 {
    let measured = [crate::maps::ERRBITS_MAP, crate::maps::CMP_MAP]
        .iter()
        .filter_map(|map| state.named_metadata::<DistanceHistory>(map).ok())
        .map(|history| history.measured)
        .sum::<u64>();
    crate::maps::progress(state) + measured
}

/// On a testcase: its first turn, precise, is done (in the corpus, so a restarted client does
/// not give every testcase a first turn again).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct FirstTurnDone;
libafl_bolts::impl_serdeany!(FirstTurnDone);

/// The precise mutants left in the current turn (`None`: no limit), shared by the stage that
/// decides the turn and the mutator that counts its mutants.
#[derive(Clone, Debug, Default)]
pub struct TurnQuota(Rc<Cell<Option<u32>>>);

/// The [`pay`] when the current turn started, if it is precise; shared by the stage that
/// decides the turn and the one that closes it ([`PreciseTurnEnd`]).
#[derive(Clone, Debug, Default)]
struct OpenTurn(Rc<Cell<Option<u64>>>);

/// Decides, before the mutational stage, how the current testcase's mutants run.
pub struct RunModeStage {
    word: Option<RunModeWord>,
    always_precise: bool,
    quota: TurnQuota,
    open: OpenTurn,
}

impl RunModeStage {
    /// `word` is `None` without a numfuzz region; `always_precise` is `--precise`; `quota` is
    /// shared with the mutational stage's [`PreciseQuota`].
    pub fn new(word: Option<RunModeWord>, always_precise: bool, quota: TurnQuota) -> Self {
        RunModeStage {
            word,
            always_precise,
            quota,
            open: OpenTurn::default(),
        }
    }

    /// The stage that closes this one's precise turns, after the mutational stage.
    pub fn turn_end(&self) -> PreciseTurnEnd {
        PreciseTurnEnd {
            open: self.open.clone(),
        }
    }
}

/// After the mutational stage: a precise turn that paid nothing ([`pay`]) counts against its
/// testcase ([`BarrenPreciseTurns`]); one that paid clears the count.
pub struct PreciseTurnEnd {
    open: OpenTurn,
}

impl<E, EM, S, Z> Stage<E, EM, S, Z> for PreciseTurnEnd
where
    S: HasMetadata + HasNamedMetadata + HasCurrentTestcase<libafl::inputs::BytesInput>,
{
    fn perform(&mut self, _: &mut Z, _: &mut E, state: &mut S, _: &mut EM) -> Result<(), Error> {
        let Some(at_start) = self.open.0.take() else {
            return Ok(());
        };
        let barren = pay(state) == at_start;
        let mut testcase = state.current_testcase_mut()?;
        let count = testcase.metadata_or_insert_with(BarrenPreciseTurns::default);
        count.0 = if barren { count.0 + 1 } else { 0 };
        drop(testcase);
        if barren {
            state.metadata_or_insert_with(RunModeRecord::default).barren_turns += 1;
        }
        Ok(())
    }
}

restarts_from_scratch!(PreciseTurnEnd);

/// `inner`, which makes the rest of a precise turn fast once its quota of precise mutants ran.
pub struct PreciseQuota<M> {
    inner: M,
    quota: TurnQuota,
    word: Option<RunModeWord>,
}

impl<M> PreciseQuota<M> {
    pub fn new(inner: M, quota: TurnQuota, word: Option<RunModeWord>) -> Self {
        PreciseQuota { inner, quota, word }
    }
}

impl<M> Named for PreciseQuota<M> {
    fn name(&self) -> &Cow<'static, str> {
        static NAME: Cow<'static, str> = Cow::Borrowed("PreciseQuota");
        &NAME
    }
}

impl<I, S: HasMetadata, M: Mutator<I, S>> Mutator<I, S> for PreciseQuota<M> {
    fn mutate(&mut self, state: &mut S, input: &mut I) -> Result<MutationResult, Error> {
        let result = self.inner.mutate(state, input)?;
        // A skipped mutant does not run.
        if result == MutationResult::Skipped {
            return Ok(result);
        }
        match self.quota.0.get() {
            Some(0) => {
                self.quota.0.set(None);
                if let Some(word) = self.word {
                    word.set_fast(true);
                }
                state.metadata_or_insert_with(RunModeRecord::default).capped_turns += 1;
            }
            Some(left) => self.quota.0.set(Some(left - 1)),
            None => {}
        }
        Ok(result)
    }

    fn post_exec(&mut self, state: &mut S, new_corpus_id: Option<libafl::corpus::CorpusId>) -> Result<(), Error> {
        self.inner.post_exec(state, new_corpus_id)
    }
}

/// What a turn's decision knows about its testcase.
#[derive(Clone, Copy, Debug, Default)]
struct TurnFacts {
    /// The seeds (no testcase yet).
    seeds: bool,
    /// The testcase has not had its first turn.
    first: bool,
    kept_for_distance: bool,
    /// Kept for nothing but distances lower than those already measured at the same slots.
    lowered_only: bool,
    /// Its precise turns since the last that paid ([`BarrenPreciseTurns`]).
    barren: u32,
}

impl TurnFacts {
    /// A first turn that runs precisely.
    fn precise_first(self) -> bool {
        self.first && !self.lowered_only
    }
}

impl TurnFacts {
    /// The chance of a later precise turn, for a testcase kept for a distance: [`DISTANCE_SHARE`]
    /// halved for each barren precise turn.
    fn coin_chance(self) -> f64 {
        DISTANCE_SHARE / f64::from(1u32 << self.barren.min(MOST_HALVINGS))
    }
}

/// Whether the mutants run precisely; `coin` draws with the probability it is given
/// ([`TurnFacts::coin_chance`]).
fn precise_turn(always_precise: bool, facts: TurnFacts, coin: impl FnOnce(f64) -> bool) -> bool {
    always_precise || facts.seeds || facts.precise_first() || (facts.kept_for_distance && coin(facts.coin_chance()))
}

impl<E, EM, S, Z> Stage<E, EM, S, Z> for RunModeStage
where
    S: HasMetadata + HasNamedMetadata + HasRand + HasCurrentCorpusId + HasCurrentTestcase<libafl::inputs::BytesInput>,
{
    fn perform(&mut self, _: &mut Z, _: &mut E, state: &mut S, _: &mut EM) -> Result<(), Error> {
        let Some(word) = self.word else { return Ok(()) };
        let seeds = state.current_corpus_id()?.is_none();
        let facts = if seeds {
            TurnFacts {
                seeds,
                ..TurnFacts::default()
            }
        } else {
            let testcase = state.current_testcase()?;
            let progress = testcase.metadata_map().get::<DistanceProgress>();
            TurnFacts {
                seeds,
                first: !testcase.has_metadata::<FirstTurnDone>(),
                kept_for_distance: progress.is_some(),
                lowered_only: progress.is_some_and(|p| !p.first_measures)
                    && !testcase.has_metadata::<NewExceptions>()
                    && !testcase.has_metadata::<NewEdges>(),
                barren: testcase.metadata_map().get::<BarrenPreciseTurns>().map_or(0, |b| b.0),
            }
        };
        let precise = precise_turn(self.always_precise, facts, |p| state.rand_mut().coinflip(p));
        if facts.first {
            state.current_testcase_mut()?.add_metadata(FirstTurnDone);
        }
        let record = state.metadata_or_insert_with(RunModeRecord::default);
        if precise {
            record.precise_turns += 1;
        } else {
            record.fast_turns += 1;
        }
        if facts.first && !precise {
            record.fast_first_turns += 1;
        }
        // The seeds and `--precise` run every input precisely.
        let capped = precise && !self.always_precise && !facts.seeds;
        self.quota.0.set(capped.then_some(PRECISE_MUTANTS_PER_TURN));
        // The seeds have no testcase to count against; `--precise` has nothing to throttle.
        self.open.0.set(capped.then(|| pay(state)));
        word.set_fast(!precise);
        Ok(())
    }
}

restarts_from_scratch!(RunModeStage);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::AflCounters;
    use numfuzz_abi::errbits::NOT_MEASURED;

    fn facts(first: bool, kept_for_distance: bool) -> TurnFacts {
        TurnFacts {
            first,
            kept_for_distance,
            ..TurnFacts::default()
        }
    }

    #[test]
    fn a_testcase_runs_precisely_on_its_first_turn_and_later_by_chance_if_kept_for_a_distance() {
        let never = |_| false;
        let always = |_| true;
        let seeds = TurnFacts {
            seeds: true,
            ..TurnFacts::default()
        };
        assert!(precise_turn(false, seeds, never), "the seeds");
        // Kept for coverage alone: its first turn only.
        assert!(precise_turn(false, facts(true, false), never));
        assert!(!precise_turn(false, facts(false, false), always));
        // Kept for a distance: its first turn, then when the coin says so.
        assert!(precise_turn(false, facts(true, true), never));
        assert!(!precise_turn(false, facts(false, true), never));
        assert!(precise_turn(false, facts(false, true), always));
    }

    #[test]
    fn a_testcase_kept_only_for_lowering_known_distances_has_no_precise_first_turn() {
        let lowered = TurnFacts {
            lowered_only: true,
            ..facts(true, true)
        };
        assert!(!lowered.precise_first());
        assert!(!precise_turn(false, lowered, |_| false));
        assert!(
            precise_turn(false, lowered, |_| true),
            "its turns still run precisely by chance"
        );
        assert!(precise_turn(true, lowered, |_| false), "--precise");
    }

    /// A precise turn's mutants after the quota run fast, counted once per turn; a turn with
    /// no quota (the seeds, `--precise`, a fast turn) is left as it is.
    #[test]
    fn a_precise_turn_runs_fast_after_its_quota_of_precise_mutants() {
        use libafl::inputs::BytesInput;
        use libafl::mutators::NopMutator;
        crate::registry::register();
        let header = numfuzz_abi::shm::ShmHeader::layout(1, 1, 0);
        let mut mem = vec![0u64; header.region_size().div_ceil(8)];
        // SAFETY: the buffer holds the region, 8-aligned, and outlives the view.
        let view = unsafe {
            mem.as_mut_ptr().cast::<numfuzz_abi::shm::ShmHeader>().write(header);
            RegionView::new(mem.as_mut_ptr().cast(), mem.len() * 8)
        }
        .unwrap();
        let word = RunModeWord::new(view);
        let quota = TurnQuota::default();
        let mut state = libafl::state::NopState::<BytesInput>::new();
        let mut input = BytesInput::new(vec![0]);
        let mut mutator = PreciseQuota::new(NopMutator::new(MutationResult::Mutated), quota.clone(), Some(word));
        let mut turn = |limit: Option<u32>, mutants: u32, state: &mut libafl::state::NopState<BytesInput>| {
            quota.0.set(limit);
            word.set_fast(false);
            (0..mutants)
                .map(|_| {
                    mutator.mutate(state, &mut input).unwrap();
                    word.is_fast()
                })
                .collect::<Vec<bool>>()
        };
        let modes = turn(Some(PRECISE_MUTANTS_PER_TURN), PRECISE_MUTANTS_PER_TURN + 3, &mut state);
        assert!(modes[..PRECISE_MUTANTS_PER_TURN as usize].iter().all(|fast| !fast));
        assert!(modes[PRECISE_MUTANTS_PER_TURN as usize..].iter().all(|&fast| fast));
        assert_eq!(state.metadata::<RunModeRecord>().unwrap().capped_turns, 1);
        let unlimited = turn(None, PRECISE_MUTANTS_PER_TURN * 2, &mut state);
        assert!(unlimited.iter().all(|fast| !fast), "no quota: precise throughout");
        let short = turn(Some(PRECISE_MUTANTS_PER_TURN), 5, &mut state);
        assert!(short.iter().all(|fast| !fast));
        assert_eq!(state.metadata::<RunModeRecord>().unwrap().capped_turns, 1);
    }

    #[test]
    fn each_barren_precise_turn_halves_the_testcase_s_chance_of_another() {
        let barren = |n, first| TurnFacts {
            barren: n,
            ..facts(first, true)
        };
        assert_eq!(barren(0, false).coin_chance(), DISTANCE_SHARE);
        assert_eq!(barren(1, false).coin_chance(), DISTANCE_SHARE / 2.0);
        assert_eq!(barren(MOST_HALVINGS + 3, false).coin_chance(), DISTANCE_SHARE / 16.0);
        let mut drawn = None;
        let precise = precise_turn(false, barren(2, false), |p| {
            drawn = Some(p);
            false
        });
        assert_eq!((precise, drawn), (false, Some(DISTANCE_SHARE / 4.0)));
        // A first turn that brought something new is precise however barren.
        assert!(precise_turn(false, barren(9, true), |_| false));
    }

    /// New edges, exception inputs and distance slots measured pay; lower distances at slots
    /// already measured do not.
    #[test]
    fn a_precise_turn_is_paid_in_edges_exceptions_and_first_measures() {
        crate::registry::register();
        let mut state = libafl::state::NopState::<libafl::inputs::BytesInput>::new();
        assert_eq!(pay(&state), 0);
        let history = DistanceHistory {
            best: vec![40, 50, NOT_MEASURED],
            measured: 2,
            reached: 0,
        };
        state.add_named_metadata(crate::maps::ERRBITS_MAP, history);
        state.add_metadata(AflCounters {
            crashes: 3,
            ..AflCounters::default()
        });
        let before = pay(&state);
        assert_eq!(before, 5);
        let history = state
            .named_metadata_mut::<DistanceHistory>(crate::maps::ERRBITS_MAP)
            .unwrap();
        history.best[0] = 20;
        assert_eq!(pay(&state), before, "a lower distance");
        let history = state
            .named_metadata_mut::<DistanceHistory>(crate::maps::ERRBITS_MAP)
            .unwrap();
        history.best[2] = 60;
        history.measured += 1;
        assert_eq!(pay(&state), before + 1, "a slot measured for the first time");
    }

    #[test]
    fn precise_always_means_always() {
        assert!(precise_turn(true, facts(false, false), |_| false));
    }

    /// The mark is metadata of the testcase, so it travels with the corpus through the state
    /// a restarted client restores.
    #[test]
    fn the_first_turn_mark_survives_a_restart() {
        crate::registry::register();
        let mut testcase = libafl::corpus::Testcase::new(libafl::inputs::BytesInput::new(vec![1]));
        testcase.add_metadata(FirstTurnDone);
        let restored: libafl::corpus::Testcase<libafl::inputs::BytesInput> =
            serde_json::from_str(&serde_json::to_string(&testcase).unwrap()).unwrap();
        assert!(restored.has_metadata::<FirstTurnDone>());
    }
}
