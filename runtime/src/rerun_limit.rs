//! The time limit of an input's precise re-run in an in-process campaign.
//!
//! LibAFL's in-process executor arms a timer for every execution at the calibrated limit (five
//! times the seeds' average, at least 20 ms) and takes its SIGALRM as a time-out, which ends
//! an in-process client: the state is saved and a successor restores it. That limit is meant
//! for the program's own run, the fast one. A precise re-run costs 3 to 100 times as much,
//! and one that outlived the limit cost a client restart: GSL's hyperg_2F1, whose NaN loops
//! run 20,000 steps, started its client 124 to 573 times in 20 s.
//!
//! An input whose fast run ended within the limit ends in its re-run too (the precise copies
//! take the same path). So the re-run, and the special-result pass that may spare it (the input
//! once more on other copies), are not ended by the executor's alarm: a filter in front of
//! LibAFL's SIGALRM handler swallows an alarm that comes during a re-run (it was for the fast
//! run, which had ended) and arms a timer of the re-runs' own for what is left of the
//! campaign's ceiling (`-t`, 1000 ms by default). That timer signals SIGUSR2, which LibAFL's
//! handler also takes as a time-out, so a re-run slower than the ceiling is a time-out as
//! before. Re-runs that end before any alarm (nearly all) make no system call: blocking the
//! alarm and arming and disarming the timer around each re-run were five, a tenth of a
//! campaign of GSL's gsl_sf_cos_e. Forkserver children are timed by the fuzzer's process and
//! are left alone: nothing here is enabled there.
//!
//! A time-out ends an in-process client, and an input whose re-run outlives the ceiling is
//! usually one of many on a slow path: GSL's fermi_dirac_int at j = 10000 runs 27 ms as the
//! program does and 1.3 s checked, and a kernel of 2 ms and 70 ms under `-t 40` restarted its
//! client 113 times in 5 s, every 45 ms, and found nothing. So a re-run is not started when the
//! fast run's time times the slowdown seen in this process would outlive the ceiling; the
//! fuzzer counts those runs as `reruns_too_slow`. The slowdown is [`INITIAL_SLOWDOWN`] until a
//! re-run is measured, then follows the ratios of re-runs to their fast runs: a larger one at
//! once, smaller ones by an eighth at a time, so that one re-run descheduled on a loaded
//! machine does not stop every later re-run of a long fast run.

use crate::run_cut::{self, Verdict};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// The re-runs' own limit in milliseconds; 0 (no limit of their own) until an in-process
/// campaign sets it.
static CEILING_MS: AtomicU64 = AtomicU64::new(0);

/// The slowdown of a re-run assumed before one is measured: checked runs cost 3 to 100 times
/// the program's own, most of them under 30.
pub const INITIAL_SLOWDOWN: f64 = 32.0;

/// Fast runs shorter than this do not measure a slowdown (the clock's resolution and the
/// runtime's fixed costs would dominate).
const MEASURED_FROM: Duration = Duration::from_micros(200);

/// The slowdown measured in this process (an `f64`'s bits; 0: none yet).
static SLOWDOWN: AtomicU64 = AtomicU64::new(0);

/// Whether re-runs have a limit of their own (an in-process campaign): then fast runs are timed.
pub fn enabled() -> bool {
    CEILING_MS.load(Ordering::Relaxed) > 0
}

fn slowdown() -> f64 {
    match SLOWDOWN.load(Ordering::Relaxed) {
        0 => INITIAL_SLOWDOWN,
        bits => f64::from_bits(bits),
    }
}

/// What the re-run of a fast run that took `fast` is expected to take.
pub fn predicted(fast: Duration) -> Duration {
    fast.mul_f64(slowdown())
}

/// Whether the re-run of a fast run that took `fast` is expected to outlive the ceiling.
pub fn too_slow_to_re_run(fast: Duration) -> bool {
    let ms = CEILING_MS.load(Ordering::Relaxed);
    ms > 0 && predicted(fast).as_secs_f64() * 1000.0 > ms as f64
}

/// Learns from a re-run that took `rerun` after a fast run of `fast`.
pub fn measured(fast: Duration, rerun: Duration) {
    if fast < MEASURED_FROM {
        return;
    }
    let ratio = rerun.as_secs_f64() / fast.as_secs_f64();
    let next = match SLOWDOWN.load(Ordering::Relaxed) {
        0 => ratio,
        bits => next_slowdown(f64::from_bits(bits), ratio),
    };
    SLOWDOWN.store(next.to_bits(), Ordering::Relaxed);
}

/// The slowdown after `was` when a re-run measured `ratio`.
fn next_slowdown(was: f64, ratio: f64) -> f64 {
    ratio.max(was - (was - ratio) / 8.0)
}

/// From now on, re-runs have `ceiling` of their own (in-process campaigns only).
#[cfg_attr(not(feature = "inprocess"), allow(dead_code))]
pub fn enable(ceiling: Duration) {
    CEILING_MS.store((ceiling.as_millis() as u64).max(1), Ordering::Relaxed);
}

/// A POSIX timer that signals SIGUSR2.
struct RerunTimer(libc::timer_t);

static RERUN_TIMER: OnceLock<Option<RerunTimer>> = OnceLock::new();

// SAFETY: a timer id is a process-wide handle, usable from any thread.
unsafe impl Send for RerunTimer {}
// SAFETY: as above; the kernel serialises operations on it.
unsafe impl Sync for RerunTimer {}

impl RerunTimer {
    /// The process's timer, made on the first call.
    fn get() -> Option<&'static RerunTimer> {
        RERUN_TIMER
            .get_or_init(|| {
                // SAFETY: a zeroed sigevent is valid; the fields set are the ones SIGEV_SIGNAL reads.
                let mut event: libc::sigevent = unsafe { std::mem::zeroed() };
                event.sigev_notify = libc::SIGEV_SIGNAL;
                event.sigev_signo = libc::SIGUSR2;
                let mut id: libc::timer_t = std::ptr::null_mut();
                // SAFETY: valid pointers to a sigevent and a timer id.
                let made = unsafe { libc::timer_create(libc::CLOCK_MONOTONIC, &mut event, &mut id) } == 0;
                made.then_some(RerunTimer(id))
            })
            .as_ref()
    }

    /// The timer if [`RerunTimer::get`] made it. Async-signal-safe.
    fn created() -> Option<&'static RerunTimer> {
        RERUN_TIMER.get().and_then(Option::as_ref)
    }

    /// Arms the timer `after` from now; zero disarms it. Async-signal-safe.
    fn arm(&self, after: Duration) {
        let value = libc::timespec {
            tv_sec: after.as_secs() as libc::time_t,
            tv_nsec: after.subsec_nanos() as libc::c_long,
        };
        let zero = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        let spec = libc::itimerspec {
            it_interval: zero,
            it_value: value,
        };
        // SAFETY: a timer this process created, a valid itimerspec.
        unsafe { libc::timer_settime(self.0, 0, &spec, std::ptr::null_mut()) };
    }
}

/// When the current re-run started (CLOCK_MONOTONIC nanoseconds); 0 outside re-runs.
static RERUN_STARTED_NS: AtomicU64 = AtomicU64::new(0);
/// The alarm filter armed the re-run timer during the current re-run.
static RERUN_TIMER_ARMED: AtomicBool = AtomicBool::new(false);
/// SIGALRM's disposition before the filter: the executor's handler, called for every alarm
/// outside re-runs.
static EXECUTOR_ALARM: OnceLock<libc::sigaction> = OnceLock::new();
/// Whether the filter is installed (tried once, at the first re-run).
static FILTERED: OnceLock<bool> = OnceLock::new();

/// Puts [`filter_alarm`] in front of the executor's SIGALRM handler (LibAFL installs its
/// handlers when the executor is built, before any run). Whether it is there.
fn install_alarm_filter() -> bool {
    // SAFETY: sigaction reads and writes valid structs; the previous disposition is stored
    // before the filter, which reads it, can run.
    unsafe {
        let mut executor: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGALRM, std::ptr::null(), &mut executor) != 0 {
            return false;
        }
        let _ = EXECUTOR_ALARM.set(executor);
        run_cut::hand_time_outs_to(executor_alarm);
        let mut filter = executor;
        filter.sa_sigaction = filter_alarm as *const () as libc::sighandler_t;
        filter.sa_flags = executor.sa_flags | libc::SA_SIGINFO;
        libc::sigaction(libc::SIGALRM, &filter, std::ptr::null_mut()) == 0
    }
}

/// During a re-run: arms the re-run timer for what is left of the ceiling, once, and drops
/// the alarm. Otherwise: marks the run if it had raised an exception AFL++ traps
/// (`RUN_ALARM_AFTER_EXCEPTION`), drops the alarm during a run `run_cut` times, and calls the
/// executor's handler. Async-signal-safe (atomics, clock_gettime, timer_settime).
extern "C" fn filter_alarm(sig: c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    let started = RERUN_STARTED_NS.load(Ordering::Acquire);
    if started != 0 {
        if let Some(timer) = RerunTimer::created() {
            if !RERUN_TIMER_ARMED.swap(true, Ordering::AcqRel) {
                let ceiling = Duration::from_millis(CEILING_MS.load(Ordering::Relaxed));
                let spent = Duration::from_nanos(crate::clock::monotonic_ns().saturating_sub(started));
                // At least a millisecond: a zero would disarm it.
                timer.arm(ceiling.saturating_sub(spent).max(Duration::from_millis(1)));
            }
            return;
        }
    }
    // An alarm that does not end the run (LibAFL's batch timer re-arms when the run is younger
    // than the limit) marks it too; the mark is read only when the run timed out.
    if run_cut::interrupted_flags(context) & run_cut::TRAPPED_KINDS != 0 {
        if let Some(region) = crate::region::Region::current() {
            region.set_run_flag(numfuzz_abi::shm::RUN_ALARM_AFTER_EXCEPTION);
        }
    }
    if run_cut::judge(context) == Verdict::Wait {
        return;
    }
    executor_alarm(sig, info, context);
}

/// The executor's own handler, called as the kernel would have called it.
extern "C" fn executor_alarm(sig: c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    let Some(executor) = EXECUTOR_ALARM.get() else {
        return;
    };
    let handler = executor.sa_sigaction;
    // SAFETY: the handler the executor installed, with the arguments its flags ask for.
    unsafe {
        if executor.sa_flags & libc::SA_SIGINFO != 0 {
            let f = std::mem::transmute::<libc::sighandler_t, extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void)>(
                handler,
            );
            f(sig, info, context);
        } else if handler == libc::SIG_DFL {
            // The default action (the end of the process), as without the filter.
            libc::signal(libc::SIGALRM, libc::SIG_DFL);
            libc::raise(libc::SIGALRM);
        } else if handler != libc::SIG_IGN {
            let f = std::mem::transmute::<libc::sighandler_t, extern "C" fn(c_int)>(handler);
            f(sig);
        }
    }
}

/// Puts the alarm filter in front of the executor's handler before the first run of an
/// in-process campaign (the executor is built by then), so that a time-out of the first runs
/// is told too. Nothing elsewhere.
pub fn filter_alarms() {
    if enabled() {
        FILTERED.get_or_init(install_alarm_filter);
    }
}

/// Runs `rerun` (an input's precise re-run, after its fast run ended within the executor's
/// limit) under the re-runs' own limit, the executor's alarm filtered; outside in-process
/// campaigns, just runs it.
pub fn bounded<R>(rerun: impl FnOnce() -> R) -> R {
    let ms = CEILING_MS.load(Ordering::Relaxed);
    let Some(timer) = (ms > 0).then(RerunTimer::get).flatten() else {
        return rerun();
    };
    if !*FILTERED.get_or_init(install_alarm_filter) {
        // sigaction failed: the re-run is not timed, as before re-runs had a ceiling.
        return rerun();
    }
    RERUN_STARTED_NS.store(crate::clock::monotonic_ns().max(1), Ordering::Release);
    let result = rerun();
    RERUN_STARTED_NS.store(0, Ordering::Release);
    if RERUN_TIMER_ARMED.swap(false, Ordering::AcqRel) {
        timer.arm(Duration::ZERO);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_larger_slowdown_counts_at_once_and_an_outlier_fades() {
        assert_eq!(next_slowdown(30.0, 50.0), 50.0);
        let mut s = next_slowdown(30.0, 500.0);
        assert_eq!(s, 500.0);
        for _ in 0..40 {
            s = next_slowdown(s, 30.0);
        }
        assert!((30.0..35.0).contains(&s), "{s}");
    }

    #[test]
    fn without_a_ceiling_nothing_is_too_slow() {
        assert!(!too_slow_to_re_run(Duration::from_secs(10)));
    }
}
