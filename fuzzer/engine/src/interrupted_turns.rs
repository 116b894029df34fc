//! A turn that keeps ending its client is skipped, not its testcase.
//!
//! In-process, a time-out or a crash ends the client, and its successor resumes the turn that
//! was running. LibAFL's mutational stage gives a turn three such resumes; at the fourth its
//! `RetryCountRestartHelper` skips the turn and puts the testcase on a list that the stage
//! skips for the rest of the campaign. On code whose mutants often hang (GSL's hermite_zero
//! and hyperg_2F0 loop for minutes on large parameters), testcase after testcase went on that
//! list; once all were, the client looped through its stages without running anything: a toy
//! target whose mutants hang one time in three ran nothing for the last 22 s of a 30 s
//! campaign. [`SkipTurnOnly`] empties the list after each turn, so the testcase's next turn,
//! with other mutants, runs.

use libafl::stages::{Restartable, RetryCountRestartHelper, Stage};
use libafl::{Error, HasNamedMetadata};
use libafl_bolts::Named;

/// A mutational stage whose testcases are never skipped for good.
pub struct SkipTurnOnly<S> {
    inner: S,
}

impl<S> SkipTurnOnly<S> {
    pub fn new(inner: S) -> Self {
        SkipTurnOnly { inner }
    }
}

impl<S, E, EM, ST, Z> Stage<E, EM, ST, Z> for SkipTurnOnly<S>
where
    S: Stage<E, EM, ST, Z>,
{
    fn perform(&mut self, fuzzer: &mut Z, executor: &mut E, state: &mut ST, manager: &mut EM) -> Result<(), Error> {
        self.inner.perform(fuzzer, executor, state, manager)
    }
}

impl<S: Restartable<ST> + Named, ST: HasNamedMetadata> Restartable<ST> for SkipTurnOnly<S> {
    fn should_restart(&mut self, state: &mut ST) -> Result<bool, Error> {
        self.inner.should_restart(state)
    }

    /// Called after every turn, run or skipped: the retry count starts again (as LibAFL does)
    /// and so does the list of skipped testcases.
    fn clear_progress(&mut self, state: &mut ST) -> Result<(), Error> {
        self.inner.clear_progress(state)?;
        state.remove_named_metadata::<RetryCountRestartHelper>(self.inner.name());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{empty_state, State};
    use libafl::corpus::{Corpus, HasCurrentCorpusId, Testcase};
    use libafl::inputs::BytesInput;
    use libafl::state::HasCorpus;
    use std::borrow::Cow;

    /// A stage that uses LibAFL's retry helper as its mutational stage does.
    struct Retried;

    impl Named for Retried {
        fn name(&self) -> &Cow<'static, str> {
            static NAME: Cow<'static, str> = Cow::Borrowed("retried");
            &NAME
        }
    }

    impl Restartable<State> for Retried {
        fn should_restart(&mut self, state: &mut State) -> Result<bool, Error> {
            RetryCountRestartHelper::should_restart(state, "retried", 3)
        }

        fn clear_progress(&mut self, state: &mut State) -> Result<(), Error> {
            RetryCountRestartHelper::clear_progress(state, "retried")
        }
    }

    /// Whether a turn that the client's death interrupted `interrupted` times in a row runs,
    /// and then whether the testcase's next turn runs.
    fn turns(stage: &mut impl Restartable<State>, interrupted: usize) -> (bool, bool) {
        let mut state = empty_state();
        let id = state.corpus_mut().add(Testcase::new(BytesInput::new(vec![1]))).unwrap();
        state.set_corpus_id(id).unwrap();
        for _ in 0..interrupted {
            // Each successor resumes the turn and dies in it again: no clear_progress.
            assert!(stage.should_restart(&mut state).unwrap());
        }
        let this_turn = stage.should_restart(&mut state).unwrap();
        stage.clear_progress(&mut state).unwrap();
        let next_turn = stage.should_restart(&mut state).unwrap();
        (this_turn, next_turn)
    }

    #[test]
    fn a_turn_interrupted_three_times_is_skipped_but_the_testcase_s_next_turn_runs() {
        assert_eq!(
            turns(&mut Retried, 3),
            (false, false),
            "LibAFL skips the testcase for good"
        );
        assert_eq!(turns(&mut SkipTurnOnly::new(Retried), 3), (false, true));
        assert_eq!(turns(&mut SkipTurnOnly::new(Retried), 1), (true, true));
    }
}
