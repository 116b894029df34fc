//! numfuzz's feedbacks.
//!
//! - [`ExceptionFeedback`]: a (site, kind) this instance has not seen raises → the input is
//!   saved in `crashes/` (named `id:…,kind:…,site:…`), logged in `exceptions.jsonl`, and kept in
//!   the corpus (an input at an exception is a good place to look for the next one).
//!   Exceptions are feedback, not LibAFL objectives: an objective input is never added to the
//!   corpus, and one abort per exception would cost ~10⁴× speed. The escape objective: when a
//!   run's declared result went Inf or NaN unreported from an input of finite fields, every
//!   (site, kind) that was an origin in it and never before in such a run is saved too
//!   (`+esc`), so a site first met absorbed is also kept where it can reach the result; triage
//!   tells which ones really do.
//! - [`DistanceFeedback`]: a new minimum in a distance map — ErrBits at any (site, kind) slot,
//!   or the branch distance of any (comparison, outcome) — → keep the input. numfuzz's own
//!   instead of LibAFL's `MapFeedback<…, MinReducer>` so it records *which* slots improved (for
//!   the scheduler) and skips untouched words of the map.
//! - [`Recorder`] wraps the corpus feedback and the objective and decides where what they
//!   accept is saved: `queue/`, `crashes/` or `hangs/`.
//!
//! Feedbacks only judge and name: what they decide to save travels on the testcase and is
//! written by the corpus that adds it ([`crate::saved_inputs`]).

use crate::context::Instance;
use crate::maps::{ByteMapObserver, CMP_MAP, ERRBITS_MAP};
use crate::meta::{
    DistanceHistory, DistanceProgress, EscapesSeen, ExceptionsSeen, NewEdges, NewExceptions, UnprecededSeen,
};
use crate::run_flags::RunFlagsObserver;
use crate::saved_inputs::{self, SavedInput};
use crate::user_stats::{fire_count, fire_text, ESCAPES_STAT, EXCEPTION_STATS, LAST_ESCAPE_STAT};
use libafl::corpus::Testcase;
use libafl::events::EventFirer;
use libafl::executors::ExitKind;
use libafl::feedbacks::{Feedback, StateInitializer};
use libafl::inputs::HasTargetBytes;
use libafl::state::{HasCorpus, HasExecutions};
use libafl::{Error, HasMetadata, HasNamedMetadata};
use libafl_bolts::tuples::{Handle, Handled, MatchName, MatchNameRef};
use libafl_bolts::Named;
use numfuzz_abi::errbits::NOT_MEASURED;
use numfuzz_abi::kind::{site_and_kind, ExceptionKind, EXC_ORIGIN, EXC_UNPRECEDED};
use numfuzz_abi::signature::Signature;
use numfuzz_abi::value::Value;
use numfuzz_outdir::site_label;
use std::borrow::Cow;
use std::sync::Arc;

/// Indices of bytes of `map` for which `pick(index, value)` holds, skipping 8-byte words
/// equal to `skip` (untouched slots) without looking at their bytes.
fn scan(map: &[u8], skip: u8, mut pick: impl FnMut(usize, u8)) {
    let word_skip = u64::from_ne_bytes([skip; 8]);
    let mut chunks = map.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        let w = u64::from_ne_bytes(chunk.try_into().expect("8 bytes"));
        if w != word_skip {
            for (k, &v) in chunk.iter().enumerate() {
                if v != skip {
                    pick(base + k, v);
                }
            }
        }
        base += 8;
    }
    for (k, &v) in chunks.remainder().iter().enumerate() {
        if v != skip {
            pick(base + k, v);
        }
    }
}

/// The run flags, if the campaign has them: whether the run was fast only (`RUN_FAST_ONLY`),
/// so that the region's maps hold nothing of it: most runs of a campaign, whose maps need not
/// be read (three scans of a slot-sized map per execution on code with thousands of checked
/// operations).
struct FastOnly(Option<Handle<RunFlagsObserver>>);

impl FastOnly {
    fn of(run_flags: Option<&RunFlagsObserver>) -> FastOnly {
        FastOnly(run_flags.map(RunFlagsObserver::handle))
    }

    fn flags<'o, OT: MatchName>(&self, observers: &'o OT) -> Option<&'o RunFlagsObserver> {
        self.0.as_ref().and_then(|h| observers.get(h))
    }

    fn was<OT: MatchName>(&self, observers: &OT) -> bool {
        self.flags(observers).is_some_and(RunFlagsObserver::fast_only)
    }
}

/// New (site, kind) exceptions, and known ones reaching a result: see the module docs.
pub struct ExceptionFeedback {
    map: Handle<ByteMapObserver>,
    run_flags: FastOnly,
    /// The escape objective, told by the run flags: `Some` when it is on, with the signature
    /// that tells finite inputs (`None` inside: no fields to check).
    escapes: Option<Option<Signature>>,
    instance: Arc<Instance>,
    fresh: Vec<u32>,
    /// Known slots that were origins in this escaping run and never before.
    escaped: Vec<u32>,
    /// Every origin slot of this run, when it escaped.
    origins: Vec<u32>,
    /// Slots raised before any Invalid, DivByZero or Overflow of this run: `unprecedented`
    /// those never so before, `alone` those of them that are not new (a slot first met after
    /// another exception, here on its own: saved too).
    unprecedented: Vec<u32>,
    alone: Vec<u32>,
}

impl ExceptionFeedback {
    pub fn new(
        observer: &ByteMapObserver,
        run_flags: Option<&RunFlagsObserver>,
        escapes: Option<Option<Signature>>,
        instance: Arc<Instance>,
    ) -> Self {
        ExceptionFeedback {
            map: observer.handle(),
            run_flags: FastOnly::of(run_flags),
            escapes,
            instance,
            fresh: Vec::new(),
            escaped: Vec::new(),
            origins: Vec::new(),
            unprecedented: Vec::new(),
            alone: Vec::new(),
        }
    }
}

/// Every float field of `bytes` is finite (inputs holding NaN or Inf never count as
/// escapes; without a signature there are no fields to check).
fn finite_input(signature: Option<&Signature>, bytes: &[u8]) -> bool {
    signature.is_none_or(|sig| {
        sig.decode(bytes)
            .iter()
            .all(|v| !matches!(v, Value::Float(f) if !f.is_finite()))
    })
}

impl Named for ExceptionFeedback {
    fn name(&self) -> &Cow<'static, str> {
        static NAME: Cow<'static, str> = Cow::Borrowed("exceptions");
        &NAME
    }
}

impl<S: HasMetadata> StateInitializer<S> for ExceptionFeedback {
    fn init_state(&mut self, state: &mut S) -> Result<(), Error> {
        if !state.has_metadata::<ExceptionsSeen>() {
            state.add_metadata(ExceptionsSeen::default());
        }
        if !state.has_metadata::<EscapesSeen>() {
            state.add_metadata(EscapesSeen::default());
        }
        if !state.has_metadata::<UnprecededSeen>() {
            state.add_metadata(UnprecededSeen::default());
        }
        saved_inputs::counters(&self.instance, state);
        Ok(())
    }
}

impl<EM, I, OT, S> Feedback<EM, I, OT, S> for ExceptionFeedback
where
    OT: MatchName,
    S: HasMetadata + HasExecutions + HasCorpus<I>,
    EM: EventFirer<I, S>,
    I: HasTargetBytes,
{
    fn is_interesting(
        &mut self,
        state: &mut S,
        _: &mut EM,
        input: &I,
        observers: &OT,
        _: &ExitKind,
    ) -> Result<bool, Error> {
        self.fresh.clear();
        self.escaped.clear();
        self.origins.clear();
        self.unprecedented.clear();
        self.alone.clear();
        if self.run_flags.was(observers) {
            return Ok(false);
        }
        let map = observers
            .get(&self.map)
            .ok_or_else(|| Error::key_not_found("exceptions observer"))?;
        let seen = &state.metadata::<ExceptionsSeen>()?.slots;
        let unpreceded_before = &state.metadata::<UnprecededSeen>()?.slots;
        let (fresh, unprecedented, alone) = (&mut self.fresh, &mut self.unprecedented, &mut self.alone);
        scan(map, 0, |i, v| {
            let new = !seen.contains(i as u32);
            if new {
                fresh.push(i as u32);
            }
            if v & EXC_UNPRECEDED != 0 && !unpreceded_before.contains(i as u32) {
                unprecedented.push(i as u32);
                if !new {
                    alone.push(i as u32);
                }
            }
        });
        if let Some(signature) = &self.escapes {
            let flags = (self.run_flags.flags(observers)).ok_or_else(|| Error::key_not_found("run_flags observer"))?;
            // Cheap first: most runs end with finite results.
            if flags.result_non_finite() && !flags.handled() && finite_input(signature.as_ref(), &input.target_bytes())
            {
                let escaped_before = &state.metadata::<EscapesSeen>()?.slots;
                let (origins, escaped, fresh) = (&mut self.origins, &mut self.escaped, &self.fresh);
                scan(map, 0, |i, v| {
                    if v & EXC_ORIGIN != 0 {
                        origins.push(i as u32);
                        if !escaped_before.contains(i as u32) && !fresh.contains(&(i as u32)) {
                            escaped.push(i as u32);
                        }
                    }
                });
            }
        }
        Ok(!self.fresh.is_empty() || !self.escaped.is_empty() || !self.alone.is_empty())
    }

    fn append_metadata(
        &mut self,
        state: &mut S,
        manager: &mut EM,
        _: &OT,
        testcase: &mut Testcase<I>,
    ) -> Result<(), Error> {
        let unprecedented = std::mem::take(&mut self.unprecedented);
        state
            .metadata_mut::<UnprecededSeen>()?
            .slots
            .extend(unprecedented.iter().copied());
        let alone = std::mem::take(&mut self.alone);
        if self.fresh.is_empty() && self.escaped.is_empty() && alone.is_empty() {
            return Ok(());
        }
        let fresh = std::mem::take(&mut self.fresh);
        let escaped = std::mem::take(&mut self.escaped);
        let origins = std::mem::take(&mut self.origins);
        state
            .metadata_mut::<ExceptionsSeen>()?
            .slots
            .extend(fresh.iter().copied());
        let escapes = &mut state.metadata_mut::<EscapesSeen>()?.slots;
        let newly_escaping = origins.iter().filter(|&&o| escapes.insert(o)).count() as u64;
        if !fresh.is_empty() {
            testcase.add_metadata(NewExceptions { slots: fresh.clone() });
        }
        if self.instance.importing() {
            saved_inputs::counters(&self.instance, state).escapes += newly_escaping;
            return Ok(());
        }
        // Named after its first new (site, kind), else the first one it saw escape, else the
        // first one it raised alone.
        let named = fresh
            .first()
            .or(escaped.first())
            .or(alone.first())
            .copied()
            .unwrap_or_default();
        let what = SavedInput::Exception {
            slot: named,
            escaped: !origins.is_empty(),
            alone: fresh.is_empty() && escaped.is_empty(),
        };
        let (dir, name) = saved_inputs::name(&self.instance, state, what)?;
        let (records, kinds_found) = saved_inputs::exception_records(&self.instance, &name, &fresh, &escaped);
        saved_inputs::plan(testcase, dir, &name, records);
        let counters = saved_inputs::counters(&self.instance, state);
        counters.escapes += newly_escaping;
        for &kind in &kinds_found {
            counters.exceptions_by_kind[kind as usize] += 1;
        }
        let by_kind = counters.exceptions_by_kind;
        let escapes = counters.escapes;
        if newly_escaping > 0 {
            fire_count(manager, state, ESCAPES_STAT, escapes)?;
            let (site, kind) = site_and_kind(origins.first().copied().unwrap_or_default() as usize);
            if let Some(info) = self.instance.sites.get(site) {
                let text = format!("{kind} {} {}", site_label(info), info.op);
                fire_text(manager, state, LAST_ESCAPE_STAT, text)?;
            }
        }
        for kind in ExceptionKind::ALL {
            if kinds_found.contains(&kind) {
                fire_count(manager, state, EXCEPTION_STATS[kind as usize], by_kind[kind as usize])?;
            }
        }
        Ok(())
    }
}

/// New minima in a distance map (ErrBits, comparison distances): see the module docs.
pub struct DistanceFeedback {
    name: Cow<'static, str>,
    map: Handle<ByteMapObserver>,
    run_flags: FastOnly,
    improved: Vec<u32>,
    /// `--no-errbits` / `--no-cmp` keep the component (one campaign type) but switch it off.
    enabled: bool,
}

impl DistanceFeedback {
    pub fn new(observer: &ByteMapObserver, run_flags: Option<&RunFlagsObserver>, enabled: bool) -> Self {
        DistanceFeedback {
            name: observer.name().clone(),
            map: observer.handle(),
            run_flags: FastOnly::of(run_flags),
            improved: Vec::new(),
            enabled,
        }
    }
}

impl Named for DistanceFeedback {
    fn name(&self) -> &Cow<'static, str> {
        &self.name
    }
}

impl<S: HasNamedMetadata> StateInitializer<S> for DistanceFeedback {
    fn init_state(&mut self, state: &mut S) -> Result<(), Error> {
        if !state.has_named_metadata::<DistanceHistory>(&self.name) {
            state.add_named_metadata(&self.name, DistanceHistory::default());
        }
        Ok(())
    }
}

impl<EM, I, OT, S> Feedback<EM, I, OT, S> for DistanceFeedback
where
    OT: MatchName,
    S: HasNamedMetadata + HasExecutions,
    EM: EventFirer<I, S>,
{
    fn is_interesting(
        &mut self,
        state: &mut S,
        _: &mut EM,
        _: &I,
        observers: &OT,
        _: &ExitKind,
    ) -> Result<bool, Error> {
        self.improved.clear();
        if !self.enabled || self.run_flags.was(observers) {
            return Ok(false);
        }
        let map = observers
            .get(&self.map)
            .ok_or_else(|| Error::key_not_found(self.name.to_string()))?;
        let best = &state.named_metadata::<DistanceHistory>(&self.name)?.best;
        let improved = &mut self.improved;
        scan(map, NOT_MEASURED, |i, v| {
            if v < best.get(i).copied().unwrap_or(NOT_MEASURED) {
                improved.push(i as u32);
            }
        });
        Ok(!self.improved.is_empty())
    }

    fn append_metadata(
        &mut self,
        state: &mut S,
        manager: &mut EM,
        observers: &OT,
        testcase: &mut Testcase<I>,
    ) -> Result<(), Error> {
        if !self.enabled {
            return Ok(());
        }
        // Whatever made the input interesting, its distances count from now on (like the
        // history update of LibAFL's MapFeedback).
        let map = observers
            .get(&self.map)
            .ok_or_else(|| Error::key_not_found(self.name.to_string()))?;
        let history = state.named_metadata_mut::<DistanceHistory>(&self.name)?;
        if history.best.len() < map.len() {
            history.best.resize(map.len(), NOT_MEASURED);
        }
        let measured_before = history.measured;
        let (best, measured, reached) = (&mut history.best, &mut history.measured, &mut history.reached);
        scan(map, NOT_MEASURED, |i, v| {
            if best[i] == NOT_MEASURED {
                *measured += 1;
            }
            if v < best[i] {
                if v == 0 {
                    *reached += 1;
                }
                best[i] = v;
            }
        });
        let measured = *measured;
        if !self.improved.is_empty() {
            let slots = std::mem::take(&mut self.improved);
            let first_measures = measured > measured_before;
            match testcase.metadata_map_mut().get_mut::<DistanceProgress>() {
                Some(p) => {
                    p.maps.push((self.name.to_string(), slots));
                    p.first_measures |= first_measures;
                }
                None => testcase.add_metadata(DistanceProgress {
                    maps: vec![(self.name.to_string(), slots)],
                    first_measures,
                }),
            }
            fire_count(
                manager,
                state,
                if self.name == ERRBITS_MAP {
                    "errbits_slots"
                } else {
                    "cmp_slots"
                },
                measured,
            )?;
        }
        Ok(())
    }
}

/// The edge feedback of the corpus, marking the testcases it keeps with [`NewEdges`] (the run
/// mode tells testcases that reached new code from those kept for a distance alone).
pub struct MarksNewEdges<F> {
    inner: F,
    interesting: bool,
}

impl<F> MarksNewEdges<F> {
    pub fn new(inner: F) -> Self {
        MarksNewEdges {
            inner,
            interesting: false,
        }
    }
}

impl<F: Named> Named for MarksNewEdges<F> {
    fn name(&self) -> &Cow<'static, str> {
        self.inner.name()
    }
}

impl<F: StateInitializer<S>, S> StateInitializer<S> for MarksNewEdges<F> {
    fn init_state(&mut self, state: &mut S) -> Result<(), Error> {
        self.inner.init_state(state)
    }
}

impl<EM, I, OT, S, F: Feedback<EM, I, OT, S>> Feedback<EM, I, OT, S> for MarksNewEdges<F> {
    fn is_interesting(
        &mut self,
        state: &mut S,
        manager: &mut EM,
        input: &I,
        observers: &OT,
        exit_kind: &ExitKind,
    ) -> Result<bool, Error> {
        self.interesting = self.inner.is_interesting(state, manager, input, observers, exit_kind)?;
        Ok(self.interesting)
    }

    fn append_metadata(
        &mut self,
        state: &mut S,
        manager: &mut EM,
        observers: &OT,
        testcase: &mut Testcase<I>,
    ) -> Result<(), Error> {
        if std::mem::take(&mut self.interesting) {
            testcase.add_metadata(NewEdges);
        }
        self.inner.append_metadata(state, manager, observers, testcase)
    }
}

/// What a [`Recorder`] writes down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    /// Inputs the corpus feedback keeps, to `queue/`.
    Queue,
    /// Inputs the objective accepts, to `crashes/` (a real crash) or `hangs/` (a timeout).
    Findings,
}

/// Wraps a feedback and decides where what it accepts is saved in the instance directory
/// (written by the corpus that adds it: [`crate::saved_inputs`]).
pub struct Recorder<F> {
    inner: F,
    instance: Arc<Instance>,
    record: Record,
    exit: ExitKind,
    /// The target's run flags, which tell a crash the memory limit caused (`Findings` only).
    run_flags: Option<Handle<RunFlagsObserver>>,
    out_of_memory: bool,
}

impl<F> Recorder<F> {
    pub fn new(inner: F, instance: Arc<Instance>, record: Record) -> Self {
        Recorder {
            inner,
            instance,
            record,
            exit: ExitKind::Ok,
            run_flags: None,
            out_of_memory: false,
        }
    }

    /// Names a crash that the target's memory limit caused `oom` instead of `crash`.
    pub fn with_run_flags(mut self, run_flags: &RunFlagsObserver) -> Self {
        self.run_flags = Some(run_flags.handle());
        self
    }
}

impl<F: Named> Named for Recorder<F> {
    fn name(&self) -> &Cow<'static, str> {
        self.inner.name()
    }
}

impl<F: StateInitializer<S>, S: HasMetadata> StateInitializer<S> for Recorder<F> {
    fn init_state(&mut self, state: &mut S) -> Result<(), Error> {
        saved_inputs::counters(&self.instance, state);
        self.inner.init_state(state)
    }
}

impl<EM, F, I, OT, S> Feedback<EM, I, OT, S> for Recorder<F>
where
    F: Feedback<EM, I, OT, S>,
    S: HasMetadata + HasExecutions + HasCorpus<I>,
    I: HasTargetBytes,
    OT: MatchName,
{
    fn is_interesting(
        &mut self,
        state: &mut S,
        manager: &mut EM,
        input: &I,
        observers: &OT,
        exit_kind: &ExitKind,
    ) -> Result<bool, Error> {
        self.exit = *exit_kind;
        self.out_of_memory = *exit_kind == ExitKind::Crash
            && self
                .run_flags
                .as_ref()
                .and_then(|h| observers.get(h))
                .is_some_and(RunFlagsObserver::out_of_memory);
        self.inner.is_interesting(state, manager, input, observers, exit_kind)
    }

    fn append_metadata(
        &mut self,
        state: &mut S,
        manager: &mut EM,
        observers: &OT,
        testcase: &mut Testcase<I>,
    ) -> Result<(), Error> {
        self.inner.append_metadata(state, manager, observers, testcase)?;
        if self.instance.importing() {
            return Ok(());
        }
        let what = match self.record {
            Record::Queue => {
                let mut why = Vec::new();
                if testcase.has_metadata::<NewExceptions>() {
                    why.push("exc");
                }
                if let Some(p) = testcase.metadata_map().get::<DistanceProgress>() {
                    if p.has(ERRBITS_MAP) {
                        why.push("errbits");
                    }
                    if p.has(CMP_MAP) {
                        why.push("cmp");
                    }
                }
                SavedInput::Queue(why)
            }
            Record::Findings if self.exit == ExitKind::Timeout => SavedInput::Hang,
            Record::Findings => SavedInput::Crash {
                out_of_memory: self.out_of_memory,
            },
        };
        let (dir, name) = saved_inputs::name(&self.instance, state, what)?;
        saved_inputs::plan(testcase, dir, &name, Vec::new());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{empty_state as state, State as TestState};
    use libafl::events::NopEventManager;
    use libafl::inputs::BytesInput;
    use libafl_bolts::tuples::tuple_list;

    #[test]
    fn scan_finds_every_touched_byte() {
        let mut map = vec![0xFFu8; 37];
        map[0] = 3;
        map[8] = 0;
        map[17] = 9;
        map[36] = 1;
        let mut found = Vec::new();
        scan(&map, 0xFF, |i, v| found.push((i, v)));
        assert_eq!(found, vec![(0, 3), (8, 0), (17, 9), (36, 1)]);
        let mut none = Vec::new();
        scan(&[0u8; 16], 0, |i, _| none.push(i));
        assert!(none.is_empty());
    }

    /// Runs one "execution" whose distance map reads `run`, through a [`DistanceFeedback`]
    /// (kept in the corpus when interesting). Returns whether it was interesting and the
    /// slots recorded as improved on the testcase.
    fn evaluate(feedback: &mut DistanceFeedback, state: &mut TestState, run: &[u8]) -> (bool, Vec<u32>) {
        let mut map = run.to_vec();
        // SAFETY: the map outlives the observer, which lives only in this function.
        let observer = unsafe { ByteMapObserver::from_mut_ptr("errbits", map.as_mut_ptr(), map.len()) };
        let observers = tuple_list!(observer);
        let mut mgr = NopEventManager::new();
        let input = BytesInput::new(vec![0]);
        let interesting = feedback
            .is_interesting(state, &mut mgr, &input, &observers, &ExitKind::Ok)
            .unwrap();
        let mut testcase = Testcase::new(input);
        if interesting {
            feedback
                .append_metadata(state, &mut mgr, &observers, &mut testcase)
                .unwrap();
        }
        let improved = testcase
            .metadata_map()
            .get::<DistanceProgress>()
            .map(|p| p.maps.iter().flat_map(|(_, s)| s.clone()).collect())
            .unwrap_or_default();
        (interesting, improved)
    }

    fn distance_feedback(enabled: bool, state: &mut TestState) -> DistanceFeedback {
        let mut map = vec![NOT_MEASURED; 4];
        // SAFETY: only the observer's name and handle are used after this function.
        let observer = unsafe { ByteMapObserver::from_mut_ptr("errbits", map.as_mut_ptr(), map.len()) };
        let mut feedback = DistanceFeedback::new(&observer, None, enabled);
        StateInitializer::<TestState>::init_state(&mut feedback, state).unwrap();
        feedback
    }

    #[test]
    fn a_smaller_distance_in_any_slot_keeps_the_input() {
        let mut state = state();
        let mut fb = distance_feedback(true, &mut state);
        let x = NOT_MEASURED;
        // The first measurement of a slot is progress.
        assert_eq!(evaluate(&mut fb, &mut state, &[x, 40, x, x]), (true, vec![1]));
        // The same distance again, or a worse one, is not.
        assert_eq!(evaluate(&mut fb, &mut state, &[x, 40, x, x]), (false, vec![]));
        assert_eq!(evaluate(&mut fb, &mut state, &[x, 41, x, x]), (false, vec![]));
        // Closer in slot 1 and a new slot 3 at once: both recorded.
        assert_eq!(evaluate(&mut fb, &mut state, &[x, 12, x, 30]), (true, vec![1, 3]));
        // The exception itself (0) is the last step.
        assert_eq!(evaluate(&mut fb, &mut state, &[x, 0, x, 31]), (true, vec![1]));
        let history = state.named_metadata::<DistanceHistory>("errbits").unwrap();
        assert_eq!(history.best, vec![x, 0, x, 30]);
        assert_eq!((history.measured, history.reached), (2, 1));
    }

    #[test]
    fn a_switched_off_distance_feedback_keeps_nothing() {
        let mut state = state();
        let mut fb = distance_feedback(false, &mut state);
        assert_eq!(evaluate(&mut fb, &mut state, &[3, 2, 1, 0]), (false, vec![]));
        let history = state.named_metadata::<DistanceHistory>("errbits").unwrap();
        assert!(history.best.is_empty());
    }

    /// The runtime marks a run that nothing re-ran precisely `RUN_FAST_ONLY`: its maps hold
    /// nothing of it, and whatever they hold is not read. The same map after a precise run is.
    #[test]
    fn the_maps_of_a_fast_only_run_are_not_read() {
        use libafl::observers::Observer;
        use numfuzz_abi::shm::{RUN_FAST_ONLY, RUN_PRECISE};
        let x = NOT_MEASURED;
        for (flags, read) in [(RUN_FAST_ONLY, false), (RUN_PRECISE, true), (0, true)] {
            let mut state = state();
            let mut map = vec![x, 40, x, x];
            let mut word = flags;
            // SAFETY: both outlive the observers, which live only in this loop's body.
            let (errbits, mut run_flags) = unsafe {
                (
                    ByteMapObserver::from_mut_ptr("errbits", map.as_mut_ptr(), map.len()),
                    RunFlagsObserver::new(&mut word),
                )
            };
            let input = BytesInput::new(vec![0]);
            Observer::<BytesInput, TestState>::post_exec(&mut run_flags, &mut state, &input, &ExitKind::Ok).unwrap();
            let mut fb = DistanceFeedback::new(&errbits, Some(&run_flags), true);
            StateInitializer::<TestState>::init_state(&mut fb, &mut state).unwrap();
            let observers = tuple_list!(errbits, run_flags);
            let interesting = fb
                .is_interesting(
                    &mut state,
                    &mut NopEventManager::new(),
                    &input,
                    &observers,
                    &ExitKind::Ok,
                )
                .unwrap();
            assert_eq!(interesting, read, "run flags {flags:#x}");
        }
    }
}
