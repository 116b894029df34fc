//! Field-level crossover: one field's value taken from another corpus entry.

use super::field::below;
use super::layout::fit_to_signature;
use libafl::corpus::{Corpus, CorpusId};
use libafl::inputs::{HasMutatorBytes, ResizableMutator};
use libafl::mutators::{MutationResult, Mutator};
use libafl::state::{HasCorpus, HasRand};
use libafl::Error;
use libafl_bolts::Named;
use numfuzz_abi::Signature;
use std::borrow::Cow;
use std::sync::Arc;

/// Copies one random field (float or integer) of a random other corpus entry into the same
/// field of the input. The donor is read zero-padded, as the harness reads it. Skipped when
/// the corpus is empty, the donor is the entry being mutated, or the field already holds the
/// donor's value.
#[derive(Debug, Clone)]
pub struct FieldCrossoverMutator {
    sig: Arc<Signature>,
    name: Cow<'static, str>,
}

impl FieldCrossoverMutator {
    pub fn new(sig: &Arc<Signature>) -> Self {
        FieldCrossoverMutator {
            sig: Arc::clone(sig),
            name: Cow::Borrowed("FieldCrossover"),
        }
    }
}

impl Named for FieldCrossoverMutator {
    fn name(&self) -> &Cow<'static, str> {
        &self.name
    }
}

impl<I, S> Mutator<I, S> for FieldCrossoverMutator
where
    I: HasMutatorBytes + ResizableMutator<u8>,
    S: HasCorpus<I> + HasRand,
{
    fn mutate(&mut self, state: &mut S, input: &mut I) -> Result<MutationResult, Error> {
        let count = state.corpus().count_all();
        if self.sig.is_empty() || count == 0 {
            return Ok(MutationResult::Skipped);
        }
        let nth = below(state.rand_mut(), count);
        let id = state.corpus().nth_from_all(nth);
        if *state.corpus().current() == Some(id) {
            return Ok(MutationResult::Skipped);
        }
        let field = below(state.rand_mut(), self.sig.len());
        let range = self.sig.range(field);
        let donor = {
            let mut testcase = state.corpus().get_from_all(id)?.borrow_mut();
            let other = testcase.load_input(state.corpus())?.mutator_bytes();
            let mut value = vec![0u8; range.len()];
            if let Some(available) = other.get(range.start..other.len().min(range.end)) {
                value[..available.len()].copy_from_slice(available);
            }
            value
        };
        let resized = fit_to_signature(input, &self.sig);
        let target = &mut input.mutator_bytes_mut()[range];
        if !resized && *target == donor[..] {
            return Ok(MutationResult::Skipped);
        }
        target.copy_from_slice(&donor);
        Ok(MutationResult::Mutated)
    }

    fn post_exec(&mut self, _state: &mut S, _new_corpus_id: Option<CorpusId>) -> Result<(), Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::field_changes;
    use super::*;
    use libafl::corpus::{InMemoryCorpus, Testcase};
    use libafl::feedbacks::ConstFeedback;
    use libafl::inputs::BytesInput;
    use libafl::state::StdState;
    use libafl_bolts::rands::StdRand;
    use std::collections::BTreeSet;

    #[test]
    fn one_field_is_copied_from_a_corpus_entry() {
        let sig = Arc::new(Signature::parse("f64,i32,f80").unwrap());
        let donors = [
            sig.encode_text(&["1.5", "-7", "1e4000"]).unwrap(),
            // A short entry: its missing bytes read as zeros.
            vec![0x11; 10],
        ];
        let mut state = StdState::new(
            StdRand::with_seed(3),
            InMemoryCorpus::<BytesInput>::new(),
            InMemoryCorpus::new(),
            &mut ConstFeedback::False,
            &mut ConstFeedback::False,
        )
        .unwrap();
        for d in &donors {
            state
                .corpus_mut()
                .add(Testcase::new(BytesInput::new(d.clone())))
                .unwrap();
        }
        let padded: Vec<Vec<u8>> = donors
            .iter()
            .map(|d| {
                let mut p = d.clone();
                p.resize(sig.size(), 0);
                p
            })
            .collect();
        let mut mutator = FieldCrossoverMutator::new(&sig);
        let start = vec![0xa5u8; sig.size()];
        let mut crossed = BTreeSet::new();
        for _ in 0..300 {
            let mut input = BytesInput::new(start.clone());
            let result = mutator.mutate(&mut state, &mut input).unwrap();
            let after = input.mutator_bytes();
            let changes = field_changes(&sig, &start, after);
            assert_eq!(result == MutationResult::Mutated, changes.len() == 1);
            for (field, _) in changes {
                let r = sig.range(field);
                let from = padded.iter().position(|p| p[r.clone()] == after[r.clone()]);
                assert!(from.is_some(), "field {field} copied from no donor");
                crossed.insert((field, from.unwrap()));
            }
        }
        assert_eq!(crossed.len(), 6, "every field from every donor: {crossed:?}");
    }

    #[test]
    fn empty_corpus_is_skipped() {
        let sig = Arc::new(Signature::parse("f64").unwrap());
        let mut state = StdState::new(
            StdRand::with_seed(3),
            InMemoryCorpus::<BytesInput>::new(),
            InMemoryCorpus::new(),
            &mut ConstFeedback::False,
            &mut ConstFeedback::False,
        )
        .unwrap();
        let mut input = BytesInput::new(vec![1, 2]);
        let result = FieldCrossoverMutator::new(&sig).mutate(&mut state, &mut input).unwrap();
        assert_eq!(result, MutationResult::Skipped);
        assert_eq!(input.mutator_bytes(), [1, 2]);
    }
}
