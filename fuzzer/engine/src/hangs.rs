//! Hangs are confirmed at the full time limit before they are saved.
//!
//! The calibrated limit (see [`crate::timeout`]) can be as short as 20 ms of wall clock, so an
//! input that is merely slow, or a run descheduled on a loaded machine, exceeds it without
//! hanging. AFL++ re-runs such an input with its longer `hang_tmout` and saves it to `hangs/`
//! only if it times out again; numfuzz does the same with its ceiling (`-t`, 1000 ms by
//! default):
//! - [`HangConfirmation`], the last part of the objective, lets a time-out through only when
//!   it happened at the ceiling. A time-out at the calibrated limit on a new path (the objective
//!   checks the path first) is set aside in the state's [`HangCheck`] instead.
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

/// The time limits in force and the inputs waiting to be confirmed as hangs, kept in the state
/// so that they survive an in-process client's restart.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HangCheck {
    /// The calibrated per-execution limit.
    pub limit_ms: u64,
    /// The limit a hang is confirmed at: `-t`, or its default.
    pub ceiling_ms: u64,
    /// Inputs that timed out at `limit_ms` on a new path.
    pub pending: Vec<Vec<u8>>,
    /// Time-outs at `limit_ms` that completed at `ceiling_ms`.
    pub dismissed: u64,
    /// Set while the stage runs a pending input at the ceiling. Not serialized: a client
    /// restored after a confirming run timed out starts with it clear.
    #[serde(skip)]
    confirming: bool,
}
libafl_bolts::impl_serdeany!(HangCheck);

impl HangCheck {
    /// Records the limits a client runs with (after calibration, and again after a restart).
    pub fn set_limits<S: HasMetadata>(state: &mut S, limit: Duration, ceiling: Duration) {
        if !state.has_metadata::<HangCheck>() {
            state.add_metadata(HangCheck::default());
        }
        let check = state.metadata_mut::<HangCheck>().expect("added above");
        check.limit_ms = limit.as_millis() as u64;
        check.ceiling_ms = ceiling.as_millis() as u64;
    }

    /// Whether a time-out now counts as a hang: the run had the whole ceiling.
    fn at_ceiling(&self) -> bool {
        self.confirming || self.limit_ms >= self.ceiling_ms
    }
}

/// The objective's last part: a time-out is a finding only at the ceiling; one at the calibrated
/// limit is set aside for [`HangConfirmStage`]. A time-out after the program's own (fast) run
/// had ended is none: the precise re-run, 3 to 100 times slower, outlived its limit (GSL's
/// fermi_dirac_int at j = 10000: 27 ms as the program runs, 1.3 s checked), which
/// `rerun_timeouts` counts. Every other exit passes.
#[derive(Debug, Default)]
pub struct HangConfirmation {
    run_flags: Option<Handle<RunFlagsObserver>>,
}

impl HangConfirmation {
    /// Tells a time-out in a precise re-run by the target's run flags.
    pub fn new(run_flags: &RunFlagsObserver) -> Self {
        HangConfirmation {
            run_flags: Some(run_flags.handle()),
        }
    }
}

impl Named for HangConfirmation {
    fn name(&self) -> &Cow<'static, str> {
        static NAME: Cow<'static, str> = Cow::Borrowed("hang_confirmation");
        &NAME
    }
}

impl<S> StateInitializer<S> for HangConfirmation {}

impl<EM, I, OT, S> Feedback<EM, I, OT, S> for HangConfirmation
where
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
        let in_rerun = self.run_flags.as_ref().and_then(|h| observers.get(h));
        if in_rerun.is_some_and(RunFlagsObserver::fast_run_ended) {
            return Ok(false);
        }
        // Without limits recorded (seeds run before calibration), the limit is the ceiling.
        let Ok(check) = state.metadata_mut::<HangCheck>() else {
            return Ok(true);
        };
        if check.at_ceiling() {
            return Ok(true);
        }
        if check.pending.len() < MAX_PENDING {
            check.pending.push(input.target_bytes().to_vec());
        }
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
    use libafl::observers::Observer;
    use libafl_bolts::tuples::tuple_list;
    use numfuzz_abi::shm::{RUN_FAST_ENDED, RUN_PRECISE};
    use std::sync::atomic::Ordering;

    fn state(limit_ms: u64, ceiling_ms: u64) -> State {
        let mut state = empty_state();
        HangCheck::set_limits(
            &mut state,
            Duration::from_millis(limit_ms),
            Duration::from_millis(ceiling_ms),
        );
        state
    }

    fn judge(state: &mut State, bytes: &[u8], exit: ExitKind) -> bool {
        HangConfirmation::default()
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
                let mut judge = HangConfirmation::new(&flags);
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
            pending: vec![b"slow".to_vec()],
            dismissed: 3,
            confirming: true,
        };
        let restored: HangCheck = serde_json::from_str(&serde_json::to_string(&check).unwrap()).unwrap();
        check.confirming = false;
        assert_eq!(format!("{restored:?}"), format!("{check:?}"));
    }
}
