//! Which executions are precise: the fuzzer's side of fast runs (see the runtime's
//! `precise.rs`).
//!
//! Every execution first runs the input on the target's fast copies, which give its coverage
//! and cost about what the program costs; the target re-runs it precisely when the FPU's flags
//! or a sentinel show an exception, so a fast run misses no finding. What it does not give is
//! distances (ErrBits and comparison distances), which only precise runs measure. So the
//! mutants of a testcase are also run precisely (the region header's `MODE_FAST` clear) when
//! distances may pay:
//! - every testcase's first turn, so that new distances are measured wherever coverage leads,
//!   and a testcase kept for a smaller distance has its neighbourhood measured at once; a mutant
//!   that lowers the distance further is kept and has its own first turn, so a descent goes on
//!   from testcase to testcase;
//! - later turns of a testcase kept for a smaller distance with probability
//!   [`DISTANCE_SHARE`] (it holds progress toward an exception or a branch outcome, and its
//!   neighbourhood is where the distance guides).
//!
//! Measured on the GSL harnesses of `scripts/bench-campaign-overhead.sh`, where almost every
//! testcase is kept for a smaller distance: the policy before (such testcases always, a quarter
//! of the others) ran 88–96 % of the turns precisely; one that kept a testcase precise while its
//! precise turns kept anything with a smaller distance ran 100 % (on slow harnesses every turn
//! keeps something); see the README for the figures.
//!
//! The seeds, the input-to-state stage's tracing and candidate runs (it sets the word's
//! comparison bits, which clears the fast bit) and the local-search stage's probes (the target
//! makes every probing run precise) are precise too. `--precise` makes every run precise.

use crate::meta::DistanceProgress;
use libafl::corpus::{CorpusId, HasCurrentCorpusId};
use libafl::stages::{Restartable, Stage};
use libafl::state::{HasCurrentTestcase, HasRand};
use libafl::{Error, HasMetadata};
use libafl_bolts::rands::Rand;
use numfuzz_abi::region_view::{HeaderWord, RegionView};
use numfuzz_abi::shm::MODE_FAST;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU32, Ordering};

/// Probability that a later turn of a testcase kept for a smaller distance runs precisely.
pub const DISTANCE_SHARE: f64 = 0.125;

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
}
libafl_bolts::impl_serdeany!(RunModeRecord);

/// Decides, before the mutational stage, how the current testcase's mutants run.
pub struct RunModeStage {
    word: Option<RunModeWord>,
    always_precise: bool,
    /// The testcases that had their first turn (this client's; a restarted client gives each
    /// one a first turn again).
    turned: HashSet<CorpusId>,
}

impl RunModeStage {
    /// `word` is `None` without a numfuzz region; `always_precise` is `--precise`.
    pub fn new(word: Option<RunModeWord>, always_precise: bool) -> Self {
        RunModeStage {
            word,
            always_precise,
            turned: HashSet::new(),
        }
    }

    /// Whether the mutants of `id` (`None`: the seeds) run precisely; `coin` is a draw with
    /// probability [`DISTANCE_SHARE`].
    fn decide(&mut self, id: Option<CorpusId>, kept_for_distance: bool, coin: impl FnOnce() -> bool) -> bool {
        let Some(id) = id else { return true };
        let first = self.turned.insert(id);
        self.always_precise || first || (kept_for_distance && coin())
    }
}

impl<E, EM, S, Z> Stage<E, EM, S, Z> for RunModeStage
where
    S: HasMetadata + HasRand + HasCurrentCorpusId + HasCurrentTestcase<libafl::inputs::BytesInput>,
{
    fn perform(&mut self, _: &mut Z, _: &mut E, state: &mut S, _: &mut EM) -> Result<(), Error> {
        let Some(word) = self.word else { return Ok(()) };
        let id = state.current_corpus_id()?;
        let kept_for_distance = id.is_some() && state.current_testcase()?.has_metadata::<DistanceProgress>();
        let precise = self.decide(id, kept_for_distance, || state.rand_mut().coinflip(DISTANCE_SHARE));
        let record = state.metadata_or_insert_with(RunModeRecord::default);
        if precise {
            record.precise_turns += 1;
        } else {
            record.fast_turns += 1;
        }
        word.set_fast(!precise);
        Ok(())
    }
}

impl<S> Restartable<S> for RunModeStage {
    fn should_restart(&mut self, _state: &mut S) -> Result<bool, Error> {
        Ok(true)
    }

    fn clear_progress(&mut self, _state: &mut S) -> Result<(), Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_testcase_runs_precisely_on_its_first_turn_and_later_by_chance_if_kept_for_a_distance() {
        let mut stage = RunModeStage::new(None, false);
        let (a, b) = (CorpusId(0), CorpusId(1));
        let never = || false;
        let always = || true;
        assert!(stage.decide(None, false, never), "the seeds");
        // Kept for coverage alone: its first turn only.
        assert!(stage.decide(Some(a), false, never));
        assert!(!stage.decide(Some(a), false, always));
        // Kept for a distance: its first turn, then when the coin says so.
        assert!(stage.decide(Some(b), true, never));
        assert!(!stage.decide(Some(b), true, never));
        assert!(stage.decide(Some(b), true, always));
    }

    #[test]
    fn precise_always_means_always() {
        let mut stage = RunModeStage::new(None, true);
        for _ in 0..5 {
            assert!(stage.decide(Some(CorpusId(0)), false, || false));
        }
    }
}
