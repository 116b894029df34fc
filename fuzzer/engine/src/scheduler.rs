//! Scheduling that fuzzes inputs kept for distance progress (ErrBits, branch distances).
//!
//! LibAFL's minimizer scheduler favours, per edge, the smallest/fastest input covering it and
//! skips non-favoured inputs 95 % of the time; an input kept only because it came closer to an
//! exception (or to flipping a comparison) covers no new edge and would hardly ever be fuzzed.
//! [`DistanceFavoring`] also favours, per (distance map, slot), the input holding the current
//! best distance (and un-favours the one it replaced, which the minimizer re-favours if it is
//! still best for an edge).

use crate::meta::{DistanceProgress, DistanceTopRated};
use libafl::corpus::{Corpus, CorpusId, Testcase};
use libafl::schedulers::minimizer::IsFavoredMetadata;
use libafl::schedulers::{HasQueueCycles, RemovableScheduler, Scheduler};
use libafl::state::HasCorpus;
use libafl::{Error, HasMetadata};
use libafl_bolts::tuples::MatchName;

pub struct DistanceFavoring<CS> {
    inner: CS,
}

impl<CS> DistanceFavoring<CS> {
    pub fn new(inner: CS) -> Self {
        DistanceFavoring { inner }
    }

    fn favour<I, S>(state: &mut S, id: CorpusId) -> Result<(), Error>
    where
        S: HasCorpus<I> + HasMetadata,
    {
        let maps = match state
            .corpus()
            .get(id)?
            .borrow()
            .metadata_map()
            .get::<DistanceProgress>()
        {
            Some(p) => p.maps.clone(),
            None => return Ok(()),
        };
        if !state.has_metadata::<DistanceTopRated>() {
            state.add_metadata(DistanceTopRated::default());
        }
        let top = state.metadata_mut::<DistanceTopRated>()?;
        let mut replaced = Vec::new();
        for slot in maps
            .into_iter()
            .flat_map(|(m, slots)| slots.into_iter().map(move |s| (m.clone(), s)))
        {
            if let Some(old) = top.by_slot.insert(slot, id) {
                if old != id {
                    replaced.push(old);
                }
            }
        }
        let still_best: Vec<bool> = replaced
            .iter()
            .map(|old| top.by_slot.values().any(|v| v == old))
            .collect();
        for (old, keep) in replaced.into_iter().zip(still_best) {
            if !keep {
                if let Ok(tc) = state.corpus().get(old) {
                    drop(tc.borrow_mut().metadata_map_mut().remove::<IsFavoredMetadata>());
                }
            }
        }
        state.corpus().get(id)?.borrow_mut().add_metadata(IsFavoredMetadata {});
        Ok(())
    }
}

impl<CS, I, S> Scheduler<I, S> for DistanceFavoring<CS>
where
    CS: Scheduler<I, S>,
    S: HasCorpus<I> + HasMetadata,
{
    fn on_add(&mut self, state: &mut S, id: CorpusId) -> Result<(), Error> {
        self.inner.on_add(state, id)?;
        Self::favour(state, id)
    }

    fn on_evaluation<OT: MatchName>(&mut self, state: &mut S, input: &I, observers: &OT) -> Result<(), Error> {
        self.inner.on_evaluation(state, input, observers)
    }

    fn next(&mut self, state: &mut S) -> Result<CorpusId, Error> {
        self.inner.next(state)
    }

    fn set_current_scheduled(&mut self, state: &mut S, next_id: Option<CorpusId>) -> Result<(), Error> {
        self.inner.set_current_scheduled(state, next_id)
    }
}

impl<CS, I, S> RemovableScheduler<I, S> for DistanceFavoring<CS>
where
    CS: RemovableScheduler<I, S>,
{
    fn on_remove(&mut self, state: &mut S, id: CorpusId, testcase: &Option<Testcase<I>>) -> Result<(), Error> {
        self.inner.on_remove(state, id, testcase)
    }

    fn on_replace(&mut self, state: &mut S, id: CorpusId, prev: &Testcase<I>) -> Result<(), Error> {
        self.inner.on_replace(state, id, prev)
    }
}

impl<CS: HasQueueCycles> HasQueueCycles for DistanceFavoring<CS> {
    fn queue_cycles(&self) -> u64 {
        self.inner.queue_cycles()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use libafl::inputs::BytesInput;
    use libafl::schedulers::QueueScheduler;

    use crate::client::{empty_state, State as TestState};

    /// Adds an input that lowered the best distance of `slots` in the ErrBits map.
    fn add(scheduler: &mut DistanceFavoring<QueueScheduler>, state: &mut TestState, slots: &[u32]) -> CorpusId {
        let mut testcase = Testcase::new(BytesInput::new(vec![slots.len() as u8]));
        if !slots.is_empty() {
            testcase.add_metadata(DistanceProgress {
                maps: vec![("errbits".into(), slots.to_vec())],
                first_measures: false,
            });
        }
        let id = state.corpus_mut().add(testcase).unwrap();
        scheduler.on_add(state, id).unwrap();
        id
    }

    fn favoured(state: &TestState, id: CorpusId) -> bool {
        state
            .corpus()
            .get(id)
            .unwrap()
            .borrow()
            .has_metadata::<IsFavoredMetadata>()
    }

    #[test]
    fn the_input_holding_a_best_distance_is_favoured_until_beaten_everywhere() {
        let mut state = empty_state();
        let mut scheduler = DistanceFavoring::new(QueueScheduler::new());
        let plain = add(&mut scheduler, &mut state, &[]);
        let a = add(&mut scheduler, &mut state, &[1, 2]);
        assert!(!favoured(&state, plain), "no distance progress, nothing to favour");
        assert!(favoured(&state, a));
        // b beats a in slot 1 only: a still holds slot 2's best and stays favoured.
        let b = add(&mut scheduler, &mut state, &[1]);
        assert!(favoured(&state, a) && favoured(&state, b));
        // c beats a in slot 2 too: a holds nothing any more.
        let c = add(&mut scheduler, &mut state, &[2]);
        assert!(!favoured(&state, a));
        assert!(favoured(&state, b) && favoured(&state, c));
    }
}
