//! Where a client's time goes, for `fuzzer_stats`: its executions by how they ran (fast only;
//! fast, then the special-result pass that spared a re-run; precisely), and its stages
//! (input-to-state, havoc, local search).
//!
//! A slow campaign is slow for different reasons on different targets: a precise re-run that
//! iterates a recurrence through the runtime, inputs whose loops run long even fast, a local
//! search on inputs that cost a hundred mutants. The exec/s figure alone does not say which; these
//! do, from the campaign itself rather than a profiler attached to it.

use libafl::stages::{Restartable, Stage};
use libafl::{Error, HasMetadata};
use numfuzz_abi::shm::{RUN_FAST_ENDED, RUN_PRECISE};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// A client's time by executions and by stages, in nanoseconds, kept in the state (it survives
/// client restarts).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TimeUse {
    /// Executions that ran fast and raised nothing (or were not re-run for their time).
    pub fast_runs: u64,
    /// Executions that raised a flag and whose special-result pass spared the precise re-run.
    pub spared_runs: u64,
    /// Executions that ran precisely: a re-run, or a precise run asked for (its fast run
    /// included).
    pub precise_runs: u64,
    /// Stages, by [`TimedStage`].
    pub stages: [u64; TimedStage::COUNT],
}
libafl_bolts::impl_serdeany!(TimeUse);

/// The stages whose time is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimedStage {
    InputToState,
    Havoc,
    LocalSearch,
}

impl TimedStage {
    pub const COUNT: usize = 3;
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

fn ms(nanos: u64) -> u64 {
    nanos / 1_000_000
}

impl TimeUse {
    /// Counts one execution of `took` whose run flags were `flags`.
    pub fn add_run(&mut self, flags: u32, took: Duration) {
        let bucket = if flags & RUN_PRECISE != 0 {
            &mut self.precise_runs
        } else if flags & RUN_FAST_ENDED != 0 {
            &mut self.spared_runs
        } else {
            &mut self.fast_runs
        };
        *bucket = bucket.saturating_add(nanos(took));
    }

    pub fn add_stage(&mut self, stage: TimedStage, took: Duration) {
        let slot = &mut self.stages[stage as usize];
        *slot = slot.saturating_add(nanos(took));
    }

    /// Milliseconds of the fast, spared and precise runs.
    pub fn runs_ms(&self) -> [u64; 3] {
        [self.fast_runs, self.spared_runs, self.precise_runs].map(ms)
    }

    /// Milliseconds of a stage.
    pub fn stage_ms(&self, stage: TimedStage) -> u64 {
        ms(self.stages[stage as usize])
    }
}

/// `inner`, its time counted as `stage` in the state's [`TimeUse`].
pub struct Timed<S> {
    inner: S,
    stage: TimedStage,
}

impl<S> Timed<S> {
    pub fn new(stage: TimedStage, inner: S) -> Self {
        Timed { inner, stage }
    }
}

impl<S, E, EM, ST, Z> Stage<E, EM, ST, Z> for Timed<S>
where
    S: Stage<E, EM, ST, Z>,
    ST: HasMetadata,
{
    fn perform(&mut self, fuzzer: &mut Z, executor: &mut E, state: &mut ST, manager: &mut EM) -> Result<(), Error> {
        let started = Instant::now();
        let result = self.inner.perform(fuzzer, executor, state, manager);
        state
            .metadata_or_insert_with(TimeUse::default)
            .add_stage(self.stage, started.elapsed());
        result
    }
}

impl<S: Restartable<ST>, ST> Restartable<ST> for Timed<S> {
    fn should_restart(&mut self, state: &mut ST) -> Result<bool, Error> {
        self.inner.should_restart(state)
    }

    fn clear_progress(&mut self, state: &mut ST) -> Result<(), Error> {
        self.inner.clear_progress(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use numfuzz_abi::shm::RUN_PRECISE_SKIPPED;

    #[test]
    fn runs_go_to_the_bucket_of_how_they_ran() {
        let mut t = TimeUse::default();
        let ms = Duration::from_millis;
        t.add_run(0, ms(1));
        t.add_run(RUN_FAST_ENDED | RUN_PRECISE_SKIPPED, ms(2));
        t.add_run(RUN_FAST_ENDED | RUN_PRECISE, ms(4));
        // A build without fast copies runs precisely only.
        t.add_run(RUN_PRECISE, ms(8));
        assert_eq!(
            (t.fast_runs, t.spared_runs, t.precise_runs),
            (1_000_000, 2_000_000, 12_000_000)
        );
        t.add_stage(TimedStage::LocalSearch, ms(3));
        assert_eq!(t.stage_ms(TimedStage::LocalSearch), 3);
        assert_eq!(t.stage_ms(TimedStage::Havoc), 0);
    }
}
