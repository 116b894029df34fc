//! A time-out without a client restart.
//!
//! LibAFL's in-process executor ends a run that outlived its limit by ending the process: its
//! alarm handler judges the input, saves the state and exits, and a successor restores the
//! state. That costs about 15 ms beyond the limit, and the successor starts without what this
//! process learnt (which re-runs to spare, the re-runs' slowdown): GSL's hyperg_2F0, whose
//! inputs past an overflow loop for minutes, started its client 148 times in 20 s.
//!
//! So the harness runs under a jump buffer (shim.c), and an alarm that finds the run past the
//! limit jumps back out of it, where the interrupted code is the program's own (the pass puts
//! every function it compiles in `CODE_SECTION`, and the edge counter, which a tight loop calls
//! at every step, is there too): no runtime, libc or libm frame is abandoned half done, only
//! the program's. The run then ends as a time-out (`ExitKind::Timeout`), judged
//! by the same feedback as before. An alarm that interrupts other code (libm, malloc, a runtime
//! hook) tries again a millisecond later, a few times, then leaves the time-out to LibAFL. What
//! the program allocated in an abandoned run is not freed, so a process cuts at most
//! [`CUTS_PER_PROCESS`] runs; later time-outs restart the client as before, which frees it all.
//! In-process campaigns only: a forkserver child is timed out by the fuzzer.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

/// Runs a process cuts before its time-outs go back to restarting it.
pub const CUTS_PER_PROCESS: u32 = 1000;

/// Alarms that came outside the program's code, each followed by another a millisecond later,
/// before the time-out is left to LibAFL's handler.
const TRIES: u32 = 20;

/// The executor's limit in nanoseconds; 0: runs are not cut (outside in-process campaigns).
static LIMIT_NS: AtomicU64 = AtomicU64::new(0);
/// When the current guarded run started (CLOCK_MONOTONIC nanoseconds); 0 between runs.
static STARTED_NS: AtomicU64 = AtomicU64::new(0);
static CUTS_LEFT: AtomicU32 = AtomicU32::new(CUTS_PER_PROCESS);
/// Retries left for the current run's time-out.
static TRIES_LEFT: AtomicU32 = AtomicU32::new(TRIES);

type TestOneInput = unsafe extern "C" fn(*const u8, usize) -> c_int;

extern "C" {
    fn numfuzz_shim_guarded_run(test_one: TestOneInput, data: *const u8, size: usize) -> c_int;
    fn numfuzz_shim_cut_run() -> !;
    fn numfuzz_shim_cut_armed() -> c_int;
    fn numfuzz_shim_in_program_code(pc: usize) -> c_int;
}

/// From now on, a run that outlives `limit` may be cut (the in-process executor's limit, set
/// again whenever the executor's changes).
#[cfg_attr(not(feature = "inprocess"), allow(dead_code))]
pub fn set_limit(limit: Duration) {
    LIMIT_NS.store(limit.as_nanos().min(u128::from(u64::MAX)) as u64, Ordering::Relaxed);
}

/// Runs the harness on `data`; whether the run was cut at the time limit.
pub fn run(test_one: TestOneInput, data: *const u8, len: usize) -> bool {
    if LIMIT_NS.load(Ordering::Relaxed) == 0 || CUTS_LEFT.load(Ordering::Relaxed) == 0 {
        // SAFETY: the harness contract: read `len` bytes at `data`.
        unsafe { test_one(data, len) };
        return false;
    }
    TRIES_LEFT.store(TRIES, Ordering::Relaxed);
    STARTED_NS.store(crate::clock::monotonic_ns().max(1), Ordering::Release);
    // SAFETY: as above; the shim calls it under its jump buffer.
    let cut = unsafe { numfuzz_shim_guarded_run(test_one, data, len) } != 0;
    STARTED_NS.store(0, Ordering::Release);
    if cut {
        unblock_alarm();
    }
    cut
}

/// The jump left the alarm blocked, as it is while its handler runs.
fn unblock_alarm() {
    // SAFETY: a valid, initialised signal set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGALRM);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
}

/// The program counter of the context a signal interrupted; 0 where it cannot be read.
fn interrupted_pc(context: *mut c_void) -> usize {
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    {
        let uc = context.cast::<libc::ucontext_t>();
        if uc.is_null() {
            return 0;
        }
        // SAFETY: the kernel's ucontext for this signal.
        unsafe { (*uc).uc_mcontext.gregs[libc::REG_RIP as usize] as usize }
    }
    #[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
    {
        let _ = context;
        0
    }
}

/// An alarm outside a re-run, before the executor's handler sees it. Cuts the run (does not
/// return) when it is past the limit in the program's code; returns true when the alarm is
/// taken care of (another will come), false when the executor's handler should have it.
/// Async-signal-safe: atomics, clock_gettime, setitimer, and the jump.
pub fn on_alarm(context: *mut c_void) -> bool {
    let started = STARTED_NS.load(Ordering::Acquire);
    let limit = LIMIT_NS.load(Ordering::Relaxed);
    // SAFETY: reads a flag of the shim's.
    if started == 0 || limit == 0 || unsafe { numfuzz_shim_cut_armed() } == 0 {
        return false;
    }
    // LibAFL times its runs from just before the harness, so its clock is a little ahead.
    if crate::clock::monotonic_ns().saturating_sub(started) < limit - limit / 16 {
        return false;
    }
    // SAFETY: a comparison of addresses.
    if unsafe { numfuzz_shim_in_program_code(interrupted_pc(context)) } != 0 {
        if CUTS_LEFT.load(Ordering::Relaxed) > 0 {
            CUTS_LEFT.fetch_sub(1, Ordering::Relaxed);
            // SAFETY: the shim's jump buffer is armed (checked above) and only the program's
            // frames lie between it and here.
            unsafe { numfuzz_shim_cut_run() }
        }
        return false;
    }
    if TRIES_LEFT.load(Ordering::Relaxed) == 0 {
        return false;
    }
    TRIES_LEFT.fetch_sub(1, Ordering::Relaxed);
    try_again_after(Duration::from_millis(1));
    true
}

/// A one-shot SIGALRM after `delay` (the real-time interval timer: LibAFL's timers are POSIX
/// timers of their own).
fn try_again_after(delay: Duration) {
    let value = libc::itimerval {
        it_interval: libc::timeval { tv_sec: 0, tv_usec: 0 },
        it_value: libc::timeval {
            tv_sec: delay.as_secs() as libc::time_t,
            tv_usec: delay.subsec_micros() as libc::suseconds_t,
        },
    };
    // SAFETY: a valid itimerval.
    unsafe { libc::setitimer(libc::ITIMER_REAL, &value, std::ptr::null_mut()) };
}
