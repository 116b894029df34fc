//! Which executions are precise: the fuzzer's side of fast runs (see the runtime's
//! `precise.rs`).
//!
//! Every execution first runs the input on the target's fast copies, which give its coverage
//! and cost about what the program costs; the target re-runs it precisely when the FPU's flags
//! or a sentinel show an exception, so a fast run misses no finding. What it does not give is
//! distances (ErrBits and comparison distances), which only precise runs measure. So the
//! mutants of a testcase are also run precisely (the region header's `MODE_FAST` clear) when
//! distances are what it is worth:
//! - a testcase kept for a smaller distance (it holds progress toward an exception or a branch
//!   outcome, and its neighbourhood is where the distance guides), always;
//! - any other testcase with probability [`PRECISE_SHARE`], so that new distances are measured
//!   wherever coverage leads.
//!
//! The seeds, the input-to-state stage's tracing and candidate runs (it sets the word's
//! comparison bits, which clears the fast bit) and the local-search stage's probes (the target
//! makes every probing run precise) are precise too. `--precise` makes every run precise.

use crate::meta::DistanceProgress;
use libafl::corpus::HasCurrentCorpusId;
use libafl::stages::{Restartable, Stage};
use libafl::state::{HasCurrentTestcase, HasRand};
use libafl::{Error, HasMetadata};
use libafl_bolts::rands::Rand;
use numfuzz_abi::shm::{ShmHeader, MODE_FAST};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU32, Ordering};

/// Probability that the mutants of a testcase kept for coverage alone are run precisely.
pub const PRECISE_SHARE: f64 = 0.25;

/// The region header's mode word, of which this owns the [`MODE_FAST`] bit.
///
/// Invariant (established by the `unsafe` [`RunModeWord::new`]): `header` points to the
/// region's [`ShmHeader`], aligned and valid for the rest of the process.
#[derive(Clone, Copy, Debug)]
pub struct RunModeWord {
    header: *mut ShmHeader,
}

impl RunModeWord {
    /// # Safety
    /// See the type's invariant.
    pub unsafe fn new(header: *mut u8) -> RunModeWord {
        RunModeWord { header: header.cast() }
    }

    fn word(&self) -> &AtomicU32 {
        // SAFETY: by the invariant, an aligned u32 of the header, valid for the process; the
        // target reads it at the start of each run.
        unsafe { AtomicU32::from_ptr(&raw mut (*self.header).cmp_mode) }
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

/// Mutational turns by mode, kept in the state (it survives client restarts) for
/// `fuzzer_stats`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunModeRecord {
    pub fast_turns: u64,
    pub precise_turns: u64,
}
libafl_bolts::impl_serdeany!(RunModeRecord);

/// Decides, before the mutational stage, how the current testcase's mutants run.
pub struct RunModeStage {
    word: Option<RunModeWord>,
    always_precise: bool,
}

impl RunModeStage {
    /// `word` is `None` without a numfuzz region; `always_precise` is `--precise`.
    pub fn new(word: Option<RunModeWord>, always_precise: bool) -> Self {
        RunModeStage { word, always_precise }
    }
}

impl<E, EM, S, Z> Stage<E, EM, S, Z> for RunModeStage
where
    S: HasMetadata + HasRand + HasCurrentCorpusId + HasCurrentTestcase<libafl::inputs::BytesInput>,
{
    fn perform(&mut self, _: &mut Z, _: &mut E, state: &mut S, _: &mut EM) -> Result<(), Error> {
        let Some(word) = self.word else { return Ok(()) };
        let precise = self.always_precise
            || state.current_corpus_id()?.is_none()
            || state.current_testcase()?.has_metadata::<DistanceProgress>()
            || state.rand_mut().coinflip(PRECISE_SHARE);
        if !state.has_metadata::<RunModeRecord>() {
            state.add_metadata(RunModeRecord::default());
        }
        let record = state.metadata_mut::<RunModeRecord>()?;
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
