//! The target's per-run flags (numfuzz-abi `shm::RUN_*`: the library reported an error, a
//! declared result went Inf or NaN, the input ran precisely or its precise re-run was skipped),
//! observed after every run.

use crate::run_mode::RunModeRecord;
use crate::time_use::TimeUse;
use libafl::executors::ExitKind;
use libafl::observers::Observer;
use libafl::Error;
use libafl::HasMetadata;
use libafl_bolts::Named;
use numfuzz_abi::shm::{
    RUN_ALARM_AFTER_EXCEPTION, RUN_FAST_ENDED, RUN_FAST_ONLY, RUN_HANDLED, RUN_OUT_OF_MEMORY, RUN_PRECISE,
    RUN_PRECISE_SKIPPED, RUN_RERUN_THROTTLED, RUN_RERUN_TOO_SLOW, RUN_RESULTS, RUN_RESULT_NONFINITE, RUN_TRUNCATED,
};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

/// The flags word of the target's region header, shared with the target (in-process: the
/// same memory; forkserver: shared memory).
#[derive(Clone, Copy, Debug)]
struct FlagsWord(&'static AtomicU32);

/// Observes the region header's `run_flags`: cleared before each run (but for
/// `RUN_TRUNCATED`, which describes the target), read after it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunFlagsObserver {
    name: Cow<'static, str>,
    /// None: the target has no numfuzz region (or this is a copy received from another
    /// client, which carries `last` only).
    #[serde(skip)]
    word: Option<FlagsWord>,
    last: u32,
    /// When the current run started (its time goes to [`TimeUse`] by the flags).
    #[serde(skip)]
    started: Option<Instant>,
}

impl RunFlagsObserver {
    /// The observer of the flags word at `word` (null: no region).
    ///
    /// # Safety
    /// A non-null `word` must be a 4-byte-aligned `u32` that stays valid for the rest of the
    /// process and is only accessed atomically (the target writes it with plain stores in
    /// its own run, which never overlaps with the observer's accesses).
    pub unsafe fn new(word: *mut u32) -> RunFlagsObserver {
        RunFlagsObserver {
            name: Cow::Borrowed("run_flags"),
            // SAFETY: the caller guarantees a valid, aligned, process-long u32.
            word: (!word.is_null()).then(|| FlagsWord(unsafe { AtomicU32::from_ptr(word) })),
            last: 0,
            started: None,
        }
    }

    /// The flags of the last run.
    pub fn flags(&self) -> u32 {
        self.last
    }

    pub fn handled(&self) -> bool {
        self.last & RUN_HANDLED != 0
    }

    pub fn declared_results(&self) -> bool {
        self.last & RUN_RESULTS != 0
    }

    /// A primary declared result was Inf or NaN.
    pub fn result_non_finite(&self) -> bool {
        self.last & RUN_RESULT_NONFINITE != 0
    }

    /// The run's fast part had ended: what ran on was its special-result pass or precise re-run.
    pub fn fast_run_ended(&self) -> bool {
        self.last & RUN_FAST_ENDED != 0
    }

    /// The run was fast and nothing re-ran it precisely: the exception, ErrBits and
    /// comparison maps hold nothing of it.
    pub fn fast_only(&self) -> bool {
        self.last & RUN_FAST_ONLY != 0
    }

    /// The executor's alarm came after the run had raised Invalid, DivByZero or Overflow.
    pub fn alarm_after_exception(&self) -> bool {
        self.last & RUN_ALARM_AFTER_EXCEPTION != 0
    }

    /// The target stopped the run because it went past the memory limit.
    pub fn out_of_memory(&self) -> bool {
        self.last & RUN_OUT_OF_MEMORY != 0
    }
}

impl Named for RunFlagsObserver {
    fn name(&self) -> &Cow<'static, str> {
        &self.name
    }
}

impl<I, S: HasMetadata> Observer<I, S> for RunFlagsObserver {
    fn pre_exec(&mut self, _state: &mut S, _input: &I) -> Result<(), Error> {
        if let Some(FlagsWord(w)) = self.word {
            w.fetch_and(RUN_TRUNCATED, Ordering::Relaxed);
        }
        self.last = 0;
        self.started = Some(Instant::now());
        Ok(())
    }

    fn post_exec(&mut self, state: &mut S, _input: &I, exit_kind: &ExitKind) -> Result<(), Error> {
        if let Some(FlagsWord(w)) = self.word {
            self.last = w.load(Ordering::Relaxed);
        }
        if let Some(started) = self.started.take() {
            let took = started.elapsed();
            state.metadata_or_insert_with(TimeUse::default).add_run(self.last, took);
        }
        let rerun_timeout = *exit_kind == ExitKind::Timeout && self.fast_run_ended();
        if self.last & (RUN_PRECISE | RUN_PRECISE_SKIPPED | RUN_RERUN_TOO_SLOW | RUN_RERUN_THROTTLED) != 0
            || rerun_timeout
        {
            let record = state.metadata_or_insert_with(RunModeRecord::default);
            record.precise_runs += u64::from(self.last & RUN_PRECISE != 0);
            record.skipped_reruns += u64::from(self.last & RUN_PRECISE_SKIPPED != 0);
            record.reruns_too_slow += u64::from(self.last & RUN_RERUN_TOO_SLOW != 0);
            record.reruns_throttled += u64::from(self.last & RUN_RERUN_THROTTLED != 0);
            record.rerun_timeouts += u64::from(rerun_timeout);
        }
        Ok(())
    }
}

#[cfg(test)]
impl RunFlagsObserver {
    /// An observer over a leaked word starting at `initial`, and the word, which a test writes
    /// as a target's run would.
    pub(crate) fn on_leaked_word(initial: u32) -> (RunFlagsObserver, &'static AtomicU32) {
        let word: &'static mut u32 = Box::leak(Box::new(initial));
        let ptr: *mut u32 = word;
        // SAFETY: a leaked, aligned u32 that only the test and this observer touch.
        unsafe { (RunFlagsObserver::new(ptr), AtomicU32::from_ptr(ptr)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state with metadata only.
    #[derive(Default)]
    struct Meta(libafl_bolts::serdeany::SerdeAnyMap);

    impl HasMetadata for Meta {
        fn metadata_map(&self) -> &libafl_bolts::serdeany::SerdeAnyMap {
            &self.0
        }
        fn metadata_map_mut(&mut self) -> &mut libafl_bolts::serdeany::SerdeAnyMap {
            &mut self.0
        }
    }

    #[test]
    fn precise_skipped_and_timed_out_re_runs_are_counted() {
        crate::registry::register();
        let (mut obs, flags) = RunFlagsObserver::on_leaked_word(0);
        let mut state = Meta::default();
        let runs = [
            (RUN_FAST_ENDED | RUN_PRECISE, ExitKind::Ok),
            (RUN_FAST_ENDED | RUN_PRECISE_SKIPPED, ExitKind::Ok),
            (RUN_FAST_ENDED | RUN_PRECISE_SKIPPED, ExitKind::Ok),
            (0, ExitKind::Ok),
            // Timed out in the fast run, then in a special-result pass (no decision yet).
            (0, ExitKind::Timeout),
            (RUN_FAST_ENDED, ExitKind::Timeout),
            (RUN_FAST_ENDED | RUN_RERUN_TOO_SLOW, ExitKind::Ok),
            (RUN_FAST_ENDED | RUN_RERUN_THROTTLED, ExitKind::Ok),
        ];
        for (bits, exit) in runs {
            Observer::<(), Meta>::pre_exec(&mut obs, &mut state, &()).unwrap();
            flags.fetch_or(bits, Ordering::Relaxed);
            Observer::<(), Meta>::post_exec(&mut obs, &mut state, &(), &exit).unwrap();
        }
        let record = state.metadata::<RunModeRecord>().unwrap();
        assert_eq!((record.precise_runs, record.skipped_reruns), (1, 2));
        assert_eq!((record.rerun_timeouts, record.reruns_too_slow), (1, 1));
        assert_eq!(record.reruns_throttled, 1);
    }

    #[test]
    fn flags_are_cleared_before_and_read_after_a_run() {
        crate::registry::register();
        let (mut obs, flags) = RunFlagsObserver::on_leaked_word(RUN_TRUNCATED | RUN_HANDLED);
        let mut state = Meta::default();
        Observer::<(), Meta>::pre_exec(&mut obs, &mut state, &()).unwrap();
        assert_eq!(
            flags.load(Ordering::Relaxed),
            RUN_TRUNCATED,
            "handled was the previous run's"
        );
        flags.fetch_or(RUN_RESULTS | RUN_RESULT_NONFINITE, Ordering::Relaxed);
        Observer::<(), Meta>::post_exec(&mut obs, &mut state, &(), &ExitKind::Ok).unwrap();
        assert!(obs.result_non_finite() && obs.declared_results() && !obs.handled());
        assert!(!obs.out_of_memory());
        // A copy received from another client carries the flags, not the pointer.
        let copy: RunFlagsObserver = serde_json::from_str(&serde_json::to_string(&obs).unwrap()).unwrap();
        assert_eq!(copy.flags(), obs.flags());
        // SAFETY: null means no region.
        let mut none = unsafe { RunFlagsObserver::new(std::ptr::null_mut()) };
        Observer::<(), Meta>::post_exec(&mut none, &mut state, &(), &ExitKind::Ok).unwrap();
        assert_eq!(none.flags(), 0);
    }
}
