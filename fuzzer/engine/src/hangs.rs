//! Hangs are confirmed at the full time limit before they are saved.
//!
//! The calibrated limit (see [`crate::timeout`]) can be as short as 20 ms of wall clock, so an
//! input that is merely slow, or a run descheduled on a loaded machine, exceeds it without
//! hanging. AFL++ re-runs such an input with its longer `hang_tmout` and saves it to `hangs/`
//! only if it times out again; numfuzz does the same with its ceiling (`-t`, 1000 ms by
//! default):
//! - [`HangConfirmation`], which judges a time-out before the objective looks at its edges, lets a time-out through only when
//!   it hit an edge no earlier time-out hit, and only at the ceiling. A time-out at the
//!   calibrated limit with a new edge is set aside in the state's [`HangCheck`] instead.
//!   Without `-t`, as AFL++ does with `virgin_tmout`, the edges are marked when the time-out
//!   happens, not when it is confirmed: GSL's hyperg_2F0 times out on many inputs, and with
//!   the edges marked only on confirmation, the same loop was set aside again and again, each
//!   confirmed at the full second (13 hangs saved in 20 s, three from one testcase in a row).
//!   With `-t`, a time-out on edges no confirmed hang hit is confirmed, so that such a run
//!   gets the whole `-t` as under AFL++, and its edges are judged at the ceiling. One on a
//!   confirmed hang's edges is confirmed only every [`CONFIRM_SPACING`] ceilings: GSL's
//!   hermite_zero loops O(n) per Newton step for large `n`, and confirming each such time-out
//!   for the whole second took 20 s campaigns down to 171 executions a second (4,550 without
//!   `-t`), every confirmation a hang already saved. Both drops count as `repeated_timeouts`.
//! - A time-out at the calibrated limit (in-process: a quarter of it, runtime `run_cut`) of a
//!   run that had raised Invalid, DivByZero or Overflow (the runtime reads the interrupted FPU
//!   flags) is one AFL++, which traps those, never runs into. It is confirmed only on new edges and only every
//!   [`CONFIRM_SPACING`] ceilings; the others are cut (`cut_after_raise`).
//! - [`HangConfirmStage`] runs the inputs set aside at the ceiling, through the normal feedback
//!   and objective: a real hang times out again and is saved; a slow input completes, is
//!   counted (`hangs_dismissed` in `fuzzer_stats`) and kept if its coverage is new.
//!
//! One mechanism serves both executors. With the forkserver, the stage confirms at the start
//! of the next turn. In-process, a time-out ends the client (LibAFL's timeout handler runs the
//! objective, saves the state and exits); the state, with the inputs set aside, is restored in
//! its successor, whose stage confirms them.

use crate::run_flags::RunFlagsObserver;
use crate::stop::campaign_over;
use crate::timeout::AdjustTimeout;
use libafl::executors::{ExitKind, HasObservers};
use libafl::feedbacks::{Feedback, StateInitializer};
use libafl::fuzzer::{ExecutesInput, ExecutionProcessor};
use libafl::inputs::{BytesInput, HasTargetBytes};
use libafl::observers::{ExplicitTracking, MapObserver};
use libafl::stages::Stage;
use libafl::{Error, HasMetadata};
use libafl_bolts::tuples::{Handle, Handled, MatchName, MatchNameRef};
use libafl_bolts::Named;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::time::{Duration, SystemTime};

/// At most this many inputs wait for confirmation; later time-outs are dropped until the stage
/// has run (a target that hangs on most inputs would otherwise grow the state without bound).
pub const MAX_PENDING: usize = 16;

/// After a time-out that followed an exception AFL++ traps was set aside, the next such one
/// waits this many ceilings, and so does the next repeated hang under `-t` after one: confirming
/// each kind takes at most about a tenth of a campaign.
pub const CONFIRM_SPACING: u32 = 10;

/// When the next confirmation of one kind of time-out may be made ([`CONFIRM_SPACING`]).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct Spacing {
    next: Option<SystemTime>,
}

impl Spacing {
    /// Whether a confirmation is due now; if so, the next one waits [`CONFIRM_SPACING`] ceilings.
    fn take(&mut self, ceiling_ms: u64) -> bool {
        let now = SystemTime::now();
        if self.next.is_some_and(|at| now < at) {
            return false;
        }
        self.next = Some(now + Duration::from_millis(ceiling_ms) * CONFIRM_SPACING);
        true
    }
}

/// The time limits in force and the inputs waiting to be confirmed as hangs, kept in the state
/// so that they survive an in-process client's restart.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HangCheck {
    /// The calibrated per-execution limit.
    pub limit_ms: u64,
    /// The limit a hang is confirmed at: `-t`, or its default.
    pub ceiling_ms: u64,
    /// `-t` was given: every time-out at `limit_ms` is confirmed, not only one on an edge new
    /// to time-outs, so that every run AFL++ would run whole (no trapped exception first) has
    /// the whole `-t`; the edges are then marked when the confirming run times out.
    #[serde(default)]
    pub confirm_every: bool,
    /// Inputs that timed out at `limit_ms` on a new path.
    pub pending: Vec<Vec<u8>>,
    /// Time-outs at `limit_ms` that completed at `ceiling_ms`.
    pub dismissed: u64,
    /// Time-outs at `limit_ms` of runs that had raised an exception AFL++ traps: not hangs.
    #[serde(default)]
    pub cut_after_raise: u64,
    /// When the next time-out after such an exception may be confirmed.
    #[serde(default)]
    after_raise: Spacing,
    /// Time-outs at `limit_ms` on edges an earlier (without `-t`) or a confirmed (with `-t`)
    /// time-out hit, not confirmed: the same hang again.
    #[serde(default)]
    pub repeated_timeouts: u64,
    /// With `-t`: when the next time-out on a confirmed hang's edges may be confirmed.
    #[serde(default)]
    repeated: Spacing,
    /// One bit per edge some time-out hit (hit or not: a loop cut at a different count is
    /// the same hang).
    #[serde(default)]
    hang_edges: Vec<u64>,
    /// Set while the stage runs a pending input at the ceiling. Not serialized: a client
    /// restored after a confirming run timed out starts with it clear.
    #[serde(skip)]
    confirming: bool,
}
libafl_bolts::impl_serdeany!(HangCheck);

impl HangCheck {
    /// Records the limits a client runs with (after calibration, and again after a restart).
    pub fn set_limits<S: HasMetadata>(state: &mut S, limit: Duration, ceiling: Duration, confirm_every: bool) {
        if !state.has_metadata::<HangCheck>() {
            state.add_metadata(HangCheck::default());
        }
        let check = state.metadata_mut::<HangCheck>().expect("added above");
        check.limit_ms = limit.as_millis() as u64;
        check.ceiling_ms = ceiling.as_millis() as u64;
        check.confirm_every = confirm_every;
    }

    /// Whether a time-out now counts as a hang: the run had the whole ceiling.
    fn at_ceiling(&self) -> bool {
        self.confirming || self.limit_ms >= self.ceiling_ms
    }

    /// Keeps `input` for confirmation, if fewer than [`MAX_PENDING`] wait.
    fn set_aside(&mut self, input: Vec<u8>) {
        if self.pending.len() < MAX_PENDING {
            self.pending.push(input);
        }
    }

    /// Whether a timed-out run hit an edge new to time-outs; with `mark`, its edges are
    /// time-outs' edges from now on.
    fn new_hang_edges(&mut self, edges: &impl HitEdges, mark: bool) -> bool {
        let mut new = false;
        edges.for_each_hit(|edge| {
            let (word, bit) = (edge / 64, 1u64 << (edge % 64));
            new |= self.hang_edges.get(word).is_none_or(|w| w & bit == 0);
            if mark {
                if self.hang_edges.len() <= word {
                    self.hang_edges.resize(word + 1, 0);
                }
                self.hang_edges[word] |= bit;
            }
        });
        new
    }
}

/// The edges a run hit, whatever their counts.
pub trait HitEdges {
    fn for_each_hit(&self, f: impl FnMut(usize));
}

impl<M: MapObserver<Entry = u8>, const INDICES: bool, const NOVELTIES: bool> HitEdges
    for ExplicitTracking<M, INDICES, NOVELTIES>
{
    fn for_each_hit(&self, mut f: impl FnMut(usize)) {
        let map = self.as_ref();
        (0..map.usable_count()).filter(|&i| map.get(i) != 0).for_each(&mut f);
    }
}

/// Judges a time-out before the objective's `crash_edges`: a time-out is a finding only if it hit an edge no time-out hit
/// before, and only at the ceiling; one at the calibrated limit is set aside for
/// [`HangConfirmStage`]. A time-out after the program's own (fast) run
/// had ended is none: the precise re-run, 3 to 100 times slower, outlived its limit (GSL's
/// fermi_dirac_int at j = 10000: 27 ms as the program runs, 1.3 s checked), which
/// `rerun_timeouts` counts. Every other exit passes.
#[derive(Debug)]
pub struct HangConfirmation<E> {
    run_flags: Option<Handle<RunFlagsObserver>>,
    edges: Option<Handle<E>>,
}

impl<E> Default for HangConfirmation<E> {
    fn default() -> Self {
        HangConfirmation {
            run_flags: None,
            edges: None,
        }
    }
}

impl<E: Named> HangConfirmation<E> {
    /// Tells a time-out in a precise re-run by the target's run flags, and a repeated hang by
    /// the edges it hit.
    pub fn new(run_flags: &RunFlagsObserver, edges: &E) -> Self {
        HangConfirmation {
            run_flags: Some(run_flags.handle()),
            edges: Some(edges.handle()),
        }
    }
}

impl<E> Named for HangConfirmation<E> {
    fn name(&self) -> &Cow<'static, str> {
        static NAME: Cow<'static, str> = Cow::Borrowed("hang_confirmation");
        &NAME
    }
}

impl<E, S> StateInitializer<S> for HangConfirmation<E> {}

impl<E, EM, I, OT, S> Feedback<EM, I, OT, S> for HangConfirmation<E>
where
    E: HitEdges,
    S: HasMetadata,
    I: HasTargetBytes,
    OT: MatchName,
{
    fn is_interesting(
        &mut self,
        state: &mut S,
        _: &mut EM,
        input: &I,
        observers: &OT,
        exit_kind: &ExitKind,
    ) -> Result<bool, Error> {
        if *exit_kind != ExitKind::Timeout {
            return Ok(true);
        }
        let flags = self.run_flags.as_ref().and_then(|h| observers.get(h));
        if flags.is_some_and(RunFlagsObserver::fast_run_ended) {
            return Ok(false);
        }
        let after_exception = flags.is_some_and(RunFlagsObserver::alarm_after_exception);
        // Without limits recorded (seeds run before calibration), the limit is the ceiling.
        if !state.has_metadata::<HangCheck>() {
            state.add_metadata(HangCheck::default());
        }
        let check = state.metadata_mut::<HangCheck>()?;
        let edges = self.edges.as_ref().and_then(|h| observers.get(h));
        if check.confirming {
            // Without `-t`, an exception-free input's edges were marked when it was set aside.
            let new = edges.is_none_or(|edges| check.new_hang_edges(edges, true));
            return Ok(new || !check.confirm_every);
        }
        if after_exception && !check.at_ceiling() {
            // AFL++ would have stopped at the exception. Such a hang is a finding still (the
            // program never returns), but confirming every one cost GSL's hyperg_2F0 most of
            // its campaign: one on new edges is confirmed, then none for a while.
            let new = edges.is_none_or(|edges| check.new_hang_edges(edges, false));
            if !new || !check.after_raise.take(check.ceiling_ms) {
                check.cut_after_raise += 1;
                return Ok(false);
            }
            check.set_aside(input.target_bytes().to_vec());
            return Ok(false);
        }
        if check.at_ceiling() {
            return Ok(edges.is_none_or(|edges| check.new_hang_edges(edges, true)));
        }
        // Without `-t` the edges count from now; with it, from the confirming run's time-out.
        let mark = !check.confirm_every;
        let new = edges.is_none_or(|edges| check.new_hang_edges(edges, mark));
        let confirmed_again = new || (check.confirm_every && check.repeated.take(check.ceiling_ms));
        if !confirmed_again {
            check.repeated_timeouts += 1;
            return Ok(false);
        }
        check.set_aside(input.target_bytes().to_vec());
        Ok(false)
    }
}

/// Runs the inputs set aside by [`HangConfirmation`] once more with the ceiling as limit,
/// until the campaign is over (a confirmation costs up to the ceiling, which must not delay
/// the end of the `-V` budget).
#[derive(Debug, Default)]
pub struct HangConfirmStage {
    deadline: Option<SystemTime>,
}

impl HangConfirmStage {
    pub fn new(deadline: Option<SystemTime>) -> Self {
        HangConfirmStage { deadline }
    }
}

impl<E, EM, S, Z> Stage<E, EM, S, Z> for HangConfirmStage
where
    E: HasObservers + AdjustTimeout,
    S: HasMetadata,
    Z: ExecutesInput<E, EM, BytesInput, S> + ExecutionProcessor<EM, BytesInput, E::Observers, S>,
{
    fn perform(&mut self, fuzzer: &mut Z, executor: &mut E, state: &mut S, mgr: &mut EM) -> Result<(), Error> {
        let Ok(check) = state.metadata_mut::<HangCheck>() else {
            return Ok(());
        };
        if check.pending.is_empty() {
            return Ok(());
        }
        let limit = Duration::from_millis(check.limit_ms);
        let ceiling = Duration::from_millis(check.ceiling_ms);
        // A batch timer like the runs' (LibAFL's timers are never deleted, so none is made per
        // run): an alarm of the runs' timer still pending then only re-arms this one, where a
        // per-run timer's handler would take it for this run's time-out.
        executor.adjust_timeout(ceiling);
        // One at a time out of the state: in-process, a real hang ends the client during its
        // run (after the objective saved it), and the successor finds the rest still pending.
        while !campaign_over(self.deadline) {
            let Some(bytes) = state.metadata_mut::<HangCheck>()?.pending.pop() else {
                break;
            };
            let input = BytesInput::new(bytes);
            state.metadata_mut::<HangCheck>()?.confirming = true;
            let exit_kind = fuzzer.execute_input(state, executor, mgr, &input)?;
            // The objective judges this run while `confirming` is set.
            fuzzer.evaluate_execution(state, mgr, &input, &*executor.observers(), &exit_kind, true)?;
            let check = state.metadata_mut::<HangCheck>()?;
            check.confirming = false;
            if exit_kind != ExitKind::Timeout {
                check.dismissed += 1;
                log::info!("an input over the {limit:?} time limit ended within {ceiling:?}: slow, not a hang");
            }
        }
        executor.adjust_timeout(limit);
        Ok(())
    }
}

restarts_from_scratch!(HangConfirmStage);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{empty_state, State};
    use libafl::events::NopEventManager;
    use libafl::observers::{CanTrack, HitcountsMapObserver, Observer, StdMapObserver};
    use libafl_bolts::tuples::tuple_list;
    use numfuzz_abi::shm::{RUN_ALARM_AFTER_EXCEPTION, RUN_FAST_ENDED, RUN_PRECISE};
    use std::sync::atomic::Ordering;

    fn state(limit_ms: u64, ceiling_ms: u64) -> State {
        with_limits(limit_ms, ceiling_ms, false)
    }

    fn with_limits(limit_ms: u64, ceiling_ms: u64, confirm_every: bool) -> State {
        let mut state = empty_state();
        HangCheck::set_limits(
            &mut state,
            Duration::from_millis(limit_ms),
            Duration::from_millis(ceiling_ms),
            confirm_every,
        );
        state
    }

    type Edges = ExplicitTracking<HitcountsMapObserver<StdMapObserver<'static, u8, false>>, true, false>;

    fn edges(hits: &[(usize, u8)]) -> Edges {
        let mut map = vec![0u8; 256];
        for &(edge, count) in hits {
            map[edge] = count;
        }
        HitcountsMapObserver::new(StdMapObserver::owned("edges", map)).track_indices()
    }

    fn judge(state: &mut State, bytes: &[u8], exit: ExitKind) -> bool {
        HangConfirmation::<Edges>::default()
            .is_interesting(
                state,
                &mut NopEventManager::new(),
                &BytesInput::new(bytes.to_vec()),
                &(),
                &exit,
            )
            .unwrap()
    }

    fn pending(state: &State) -> Vec<Vec<u8>> {
        state.metadata::<HangCheck>().unwrap().pending.clone()
    }

    #[test]
    fn a_time_out_under_the_calibrated_limit_waits_for_confirmation() {
        let mut state = state(20, 1000);
        assert!(!judge(&mut state, b"slow", ExitKind::Timeout));
        assert_eq!(pending(&state), vec![b"slow".to_vec()]);
        // Crashes and normal ends are not this feedback's business.
        assert!(judge(&mut state, b"crash", ExitKind::Crash));
        assert!(judge(&mut state, b"ok", ExitKind::Ok));
        assert_eq!(pending(&state).len(), 1);
    }

    #[test]
    fn a_time_out_at_the_ceiling_is_a_hang_at_once() {
        // `-t` given: the limit is the ceiling.
        let mut state = state(1000, 1000);
        assert!(judge(&mut state, b"hang", ExitKind::Timeout));
        assert!(pending(&state).is_empty());
        // A confirming run under a calibrated limit.
        let mut state = self::state(20, 1000);
        state.metadata_mut::<HangCheck>().unwrap().confirming = true;
        assert!(judge(&mut state, b"hang", ExitKind::Timeout));
        assert!(pending(&state).is_empty());
    }

    #[test]
    fn a_time_out_after_the_fast_run_ended_is_no_hang() {
        crate::registry::register();
        let (mut flags, word) = RunFlagsObserver::on_leaked_word(0);
        for ceiling in [1000, 20] {
            let mut state = state(20, ceiling);
            for (bits, set_aside) in [(RUN_FAST_ENDED | RUN_PRECISE, false), (0, ceiling > 20)] {
                Observer::<BytesInput, State>::pre_exec(&mut flags, &mut state, &BytesInput::new(vec![])).unwrap();
                // The "target" runs between pre_exec and post_exec.
                word.fetch_or(bits, Ordering::Relaxed);
                let input = BytesInput::new(b"slow".to_vec());
                Observer::<BytesInput, State>::post_exec(&mut flags, &mut state, &input, &ExitKind::Timeout).unwrap();
                let mut judge = HangConfirmation::<Edges> {
                    run_flags: Some(flags.handle()),
                    edges: None,
                };
                let observers = tuple_list!(flags.clone());
                let hang = judge
                    .is_interesting(
                        &mut state,
                        &mut NopEventManager::new(),
                        &input,
                        &observers,
                        &ExitKind::Timeout,
                    )
                    .unwrap();
                // In the fast run: a hang at the ceiling, set aside under a calibrated limit.
                assert_eq!(hang, bits == 0 && ceiling == 20, "flags {bits}, ceiling {ceiling}");
                assert_eq!(pending(&state).len(), usize::from(set_aside));
            }
        }
    }

    /// Judges a time-out whose run hit `hits` (edge, count) with run flags `bits`.
    fn timed_out(state: &mut State, hits: &[(usize, u8)], bits: u32) -> bool {
        crate::registry::register();
        let (mut flags, word) = RunFlagsObserver::on_leaked_word(0);
        let input = BytesInput::new(vec![hits.len() as u8]);
        Observer::<BytesInput, State>::pre_exec(&mut flags, state, &input).unwrap();
        word.fetch_or(bits, Ordering::Relaxed);
        Observer::<BytesInput, State>::post_exec(&mut flags, state, &input, &ExitKind::Timeout).unwrap();
        let edges = edges(hits);
        let mut judge = HangConfirmation::new(&flags, &edges);
        judge
            .is_interesting(
                state,
                &mut NopEventManager::new(),
                &input,
                &tuple_list!(flags, edges),
                &ExitKind::Timeout,
            )
            .unwrap()
    }

    #[test]
    fn a_time_out_that_hits_no_edge_new_to_time_outs_is_dropped_at_once() {
        // Without `-t`: the loop cut at another count is the same hang, so it is not set aside
        // (and confirmed at the ceiling) again; a new edge is.
        let mut state = state(20, 1000);
        assert!(!timed_out(&mut state, &[(1, 1), (2, 9)], 0));
        assert!(!timed_out(&mut state, &[(1, 1), (2, 200)], 0));
        assert_eq!(pending(&state).len(), 1);
        assert!(!timed_out(&mut state, &[(1, 1), (3, 1)], 0));
        assert_eq!(pending(&state).len(), 2);
        // The confirming run of an input set aside goes through: its edges are marked already.
        state.metadata_mut::<HangCheck>().unwrap().confirming = true;
        assert!(timed_out(&mut state, &[(1, 1), (2, 9)], 0));
        // At the ceiling: a hang on new edges only.
        let mut state = self::state(1000, 1000);
        assert!(timed_out(&mut state, &[(1, 1), (2, 9)], 0));
        assert!(!timed_out(&mut state, &[(2, 3)], 0));
        assert!(timed_out(&mut state, &[(4, 1)], 0));
    }

    #[test]
    fn with_t_given_every_time_out_gets_the_whole_limit_and_repeats_are_dropped_there() {
        let mut state = with_limits(20, 1000, true);
        for _ in 0..3 {
            assert!(!timed_out(&mut state, &[(1, 1), (2, 9)], 0));
        }
        assert_eq!(pending(&state).len(), 3, "each is run again with the whole -t");
        state.metadata_mut::<HangCheck>().unwrap().confirming = true;
        assert!(
            timed_out(&mut state, &[(1, 1), (2, 9)], 0),
            "the first to time out again is a hang"
        );
        assert!(
            !timed_out(&mut state, &[(1, 1), (2, 30)], 0),
            "the same hang again is not"
        );
    }

    #[test]
    fn with_t_given_a_confirmed_hang_s_edges_are_confirmed_again_only_now_and_then() {
        let repeated = |state: &State| state.metadata::<HangCheck>().unwrap().repeated_timeouts;
        let mut state = with_limits(20, 1000, true);
        assert!(!timed_out(&mut state, &[(1, 1), (2, 9)], 0));
        state.metadata_mut::<HangCheck>().unwrap().confirming = true;
        assert!(timed_out(&mut state, &[(1, 1), (2, 9)], 0), "confirmed: a hang");
        state.metadata_mut::<HangCheck>().unwrap().confirming = false;
        // The same loop cut at another count: the first repeat gets the whole -t, the next
        // waits ten ceilings.
        assert!(!timed_out(&mut state, &[(1, 1), (2, 40)], 0));
        assert_eq!((pending(&state).len(), repeated(&state)), (2, 0));
        assert!(!timed_out(&mut state, &[(2, 3)], 0));
        assert_eq!((pending(&state).len(), repeated(&state)), (2, 1));
        // A new edge is confirmed whenever it comes.
        assert!(!timed_out(&mut state, &[(2, 3), (5, 1)], 0));
        assert_eq!((pending(&state).len(), repeated(&state)), (3, 1));
        // Without -t a repeat is dropped at once, and counted the same way.
        let mut state = with_limits(20, 1000, false);
        assert!(!timed_out(&mut state, &[(1, 1)], 0));
        assert!(!timed_out(&mut state, &[(1, 7)], 0));
        assert_eq!((pending(&state).len(), repeated(&state)), (1, 1));
    }

    #[test]
    fn a_time_out_after_an_exception_afl_traps_is_confirmed_now_and_then() {
        let cut = |state: &State| state.metadata::<HangCheck>().unwrap().cut_after_raise;
        for confirm_every in [false, true] {
            let mut state = with_limits(20, 1000, confirm_every);
            assert!(!timed_out(&mut state, &[(1, 1)], RUN_ALARM_AFTER_EXCEPTION));
            assert_eq!(pending(&state).len(), 1, "the first is confirmed");
            assert_eq!(cut(&state), 0);
            // The next, even on new edges, waits ten ceilings; its edges stay unmarked, so
            // an exception-free time-out there is set aside.
            assert!(!timed_out(&mut state, &[(2, 1)], RUN_ALARM_AFTER_EXCEPTION));
            assert_eq!((pending(&state).len(), cut(&state)), (1, 1));
            assert!(!timed_out(&mut state, &[(2, 1)], 0));
            assert_eq!(pending(&state).len(), 2);
            // Confirmed (timing out at the ceiling), it is a hang, and marks its edges.
            state.metadata_mut::<HangCheck>().unwrap().confirming = true;
            assert!(timed_out(&mut state, &[(1, 1)], RUN_ALARM_AFTER_EXCEPTION));
            state.metadata_mut::<HangCheck>().unwrap().confirming = false;
            // When the next is due: on new edges only.
            state.metadata_mut::<HangCheck>().unwrap().after_raise = Spacing::default();
            assert!(!timed_out(&mut state, &[(1, 1)], RUN_ALARM_AFTER_EXCEPTION));
            assert_eq!((pending(&state).len(), cut(&state)), (2, 2));
        }
        // At the ceiling the program had the whole limit: a hang, exception or not.
        let mut state = state(1000, 1000);
        assert!(timed_out(&mut state, &[(1, 1)], RUN_ALARM_AFTER_EXCEPTION));
    }

    #[test]
    fn before_calibration_every_time_out_is_a_hang() {
        let mut state = empty_state();
        assert!(judge(&mut state, b"seed", ExitKind::Timeout));
    }

    #[test]
    fn at_most_max_pending_inputs_wait() {
        let mut state = state(20, 1000);
        for i in 0..MAX_PENDING + 5 {
            assert!(!judge(&mut state, &[i as u8], ExitKind::Timeout));
        }
        assert_eq!(pending(&state).len(), MAX_PENDING);
    }

    #[test]
    fn a_restored_state_keeps_the_pending_inputs_but_not_the_confirming_mark() {
        let mut check = HangCheck {
            limit_ms: 20,
            ceiling_ms: 1000,
            confirm_every: true,
            pending: vec![b"slow".to_vec()],
            dismissed: 3,
            cut_after_raise: 2,
            after_raise: Spacing {
                next: Some(SystemTime::UNIX_EPOCH),
            },
            repeated_timeouts: 4,
            repeated: Spacing {
                next: Some(SystemTime::UNIX_EPOCH),
            },
            hang_edges: vec![6],
            confirming: true,
        };
        let restored: HangCheck = serde_json::from_str(&serde_json::to_string(&check).unwrap()).unwrap();
        check.confirming = false;
        assert_eq!(format!("{restored:?}"), format!("{check:?}"));
    }
}
