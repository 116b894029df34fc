//! The end of a turn of mutants at the campaign's deadline.
//!
//! LibAFL's mutational stage runs a turn of up to 128 mutants of one testcase, and a client
//! sees its deadline only between stages. On a target whose inputs take tens of milliseconds
//! (a precise re-run of a GSL recurrence) a turn lasts seconds: a 20 s hyperg_2F1 campaign ran
//! 61 s before this and the input-to-state and local-search checks, 20 s after.
//! [`UntilDeadline`] makes every mutation after the deadline (or a stop request) `Skipped`,
//! which the stage passes over without running it, so the turn ends within one execution.
//! The input-to-state and local-search stages stop at the deadline likewise.

use crate::stop;
use libafl::corpus::CorpusId;
use libafl::mutators::{MutationResult, Mutator};
use libafl::Error;
use libafl_bolts::Named;
use std::borrow::Cow;
use std::time::SystemTime;

/// `inner`, until the deadline.
pub struct UntilDeadline<M> {
    inner: M,
    deadline: Option<SystemTime>,
}

impl<M> UntilDeadline<M> {
    pub fn new(inner: M, deadline: Option<SystemTime>) -> UntilDeadline<M> {
        UntilDeadline { inner, deadline }
    }
}

impl<M> Named for UntilDeadline<M> {
    fn name(&self) -> &Cow<'static, str> {
        static NAME: Cow<'static, str> = Cow::Borrowed("UntilDeadline");
        &NAME
    }
}

impl<I, S, M: Mutator<I, S>> Mutator<I, S> for UntilDeadline<M> {
    fn mutate(&mut self, state: &mut S, input: &mut I) -> Result<MutationResult, Error> {
        if stop::past_deadline(self.deadline) {
            return Ok(MutationResult::Skipped);
        }
        self.inner.mutate(state, input)
    }

    fn post_exec(&mut self, state: &mut S, new_corpus_id: Option<CorpusId>) -> Result<(), Error> {
        self.inner.post_exec(state, new_corpus_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use libafl::inputs::BytesInput;
    use libafl::mutators::NopMutator;
    use std::time::Duration;

    #[test]
    fn mutants_are_skipped_once_the_deadline_has_passed() {
        let mut state = ();
        let mut input = BytesInput::new(vec![1]);
        let later = SystemTime::now() + Duration::from_secs(3600);
        let mut running = UntilDeadline::new(NopMutator::new(MutationResult::Mutated), Some(later));
        assert_eq!(running.mutate(&mut state, &mut input).unwrap(), MutationResult::Mutated);
        let mut unbounded = UntilDeadline::new(NopMutator::new(MutationResult::Mutated), None);
        assert_eq!(
            unbounded.mutate(&mut state, &mut input).unwrap(),
            MutationResult::Mutated
        );
        let past = SystemTime::now() - Duration::from_secs(1);
        let mut over = UntilDeadline::new(NopMutator::new(MutationResult::Mutated), Some(past));
        assert_eq!(over.mutate(&mut state, &mut input).unwrap(), MutationResult::Skipped);
    }
}
