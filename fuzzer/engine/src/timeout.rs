//! Execution time limits: `-t` as given, or calibrated from the seeds like AFL++ does
//! (five times their average execution time, rounded up to 20 ms, at most the `-t` ceiling),
//! so a target whose slow inputs would each cost a full second does not starve the campaign.

use libafl::executors::forkserver::ForkserverExecutor;
use libafl::executors::hooks::inprocess::HasTimeout;
use libafl::executors::hooks::timer::TimerStruct;
use libafl::executors::hooks::ExecutorHooksTuple;
use libafl::executors::inprocess::GenericInProcessExecutor;
use libafl::executors::{ExitKind, SetTimeout};
use libafl::inputs::Input;
use libafl::observers::ObserversTuple;
use libafl::state::{HasCurrentTestcase, HasExecutions, HasSolutions};
use std::borrow::BorrowMut;
use std::sync::OnceLock;
use std::time::Duration;

/// Executors whose time limit can change after construction.
pub trait AdjustTimeout {
    fn adjust_timeout(&mut self, limit: Duration);
}

impl<EM, H, HB, HT, I, OT, S, Z> AdjustTimeout for GenericInProcessExecutor<EM, H, HB, HT, I, OT, S, Z>
where
    H: FnMut(&I) -> ExitKind + Sized,
    HB: BorrowMut<H>,
    HT: ExecutorHooksTuple<I, S>,
    OT: ObserversTuple<I, S>,
    S: HasCurrentTestcase<I> + HasExecutions + HasSolutions<I>,
    I: Input,
{
    fn adjust_timeout(&mut self, limit: Duration) {
        // LibAFL 0.16.1's in-process executor has no setter; its timer is replaced instead.
        // In batch mode: LibAFL's default arms and disarms a POSIX timer around every
        // execution, two system calls that took a third of a campaign of GSL's gsl_sf_cos_e
        // (perf: timer_settime and the kernel's timer lock). A batch timer stays armed across
        // executions and, when it fires, ends only a run that has itself lasted `limit`, so a
        // hang is caught within one to two limits. An alarm of a timer replaced here (LibAFL
        // does not delete its timers) is checked against the current run the same way. Where
        // the target's runtime cuts runs in place (its `run_cut`, told the limit below), its
        // own ticks time the run, within 1 1/8 limits, and this timer is the fallback.
        *self.hooks_mut().0.timer_mut() = TimerStruct::batch_mode(limit);
        if let Some(listener) = IN_PROCESS_LIMIT.get() {
            listener(limit);
        }
    }
}

/// Told the in-process executor's limit whenever it changes (the target's runtime, which cuts
/// runs that outlive it in place of LibAFL's handler).
static IN_PROCESS_LIMIT: OnceLock<fn(Duration)> = OnceLock::new();

/// Tells `listener` every limit the in-process executor is given from now on.
pub fn on_in_process_limit(listener: fn(Duration)) {
    let _ = IN_PROCESS_LIMIT.set(listener);
}

impl<I, OT, S, SHM> AdjustTimeout for ForkserverExecutor<I, OT, S, SHM> {
    fn adjust_timeout(&mut self, limit: Duration) {
        self.set_timeout(limit);
    }
}

/// The smallest time limit AFL++ calibrates to.
pub const MIN_LIMIT: Duration = Duration::from_millis(20);

/// The calibrated limit for seeds that ran in `times` on average, capped at `ceiling`.
pub fn calibrated(times: &[Duration], ceiling: Duration) -> Option<Duration> {
    if times.is_empty() {
        return None;
    }
    let avg = times.iter().sum::<Duration>() / times.len() as u32;
    let five = (avg * 5).as_millis() as u64;
    let rounded = Duration::from_millis(five.div_ceil(20).max(1) * 20);
    Some(rounded.max(MIN_LIMIT).min(ceiling))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_times_the_average_rounded_up_to_20ms_and_capped() {
        let ms = Duration::from_millis;
        let us = Duration::from_micros;
        assert_eq!(calibrated(&[us(30), us(50)], ms(1000)), Some(ms(20)));
        assert_eq!(calibrated(&[ms(7)], ms(1000)), Some(ms(40)));
        assert_eq!(calibrated(&[ms(400)], ms(1000)), Some(ms(1000)));
        assert_eq!(calibrated(&[], ms(1000)), None);
    }
}
