//! A time-out without a client restart, and a run past a trapped exception cut early.
//!
//! LibAFL's in-process executor ends a run that outlived its limit by ending the process: its
//! alarm handler judges the input, saves the state and exits, and a successor restores the
//! state. That costs about 15 ms beyond the limit, and the successor starts without what this
//! process learnt (which re-runs to spare, the re-runs' slowdown): GSL's hyperg_2F0, whose
//! inputs past an overflow loop for minutes, started its client 148 times in 20 s.
//!
//! So the program's own run (the fast one, or a precise one the fuzzer asked for; not a
//! re-run) runs under a jump buffer (shim.c), and a timer of this module's ticks eight times a
//! limit on the thread that runs it. A tick that finds the run past the limit jumps back out
//! of it, where the interrupted code is the program's own: the pass puts every function it
//! compiles in `CODE_SECTION`, and the edge counter, which a tight loop calls at every step, is
//! there too. No runtime, libc or libm frame is abandoned half done, only the program's. The
//! run then ends as a time-out (`ExitKind::Timeout`), judged by the same feedback as before. A
//! tick that interrupts other code (libm, malloc, a runtime hook) leaves the run to the next,
//! [`TRIES`] times, then hands the time-out to LibAFL's handler. LibAFL's own alarm during such
//! a run is dropped: the ticks time it.
//!
//! A run that has raised Invalid, DivByZero or Overflow (the FPU's sticky flags in the
//! interrupted context) is cut at a quarter of the limit: AFL++'s trapping harnesses stop at
//! the first such exception, and a program that overflowed often loops (hyperg_2F0 again), each
//! such run costing the whole limit.
//!
//! What the program allocated in an abandoned run is not freed, so a process stops cutting once
//! its heap has grown by [`LEAK_ALLOWANCE`] since its first cut, or after [`CUTS_PER_PROCESS`]
//! cuts (for what is not on the heap: a file the program had opened); later time-outs restart
//! the client as before, which frees it all. In-process campaigns only: a forkserver child is
//! timed out by the fuzzer.

use numfuzz_abi::shm::RUN_ALARM_AFTER_EXCEPTION;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// Runs a process cuts before its time-outs go back to restarting it.
pub const CUTS_PER_PROCESS: u32 = 10_000;

/// Heap growth since a process's first cut past which it cuts no more.
pub const LEAK_ALLOWANCE: u64 = 256 << 20;

/// The heap in use after this process's first cut (bytes; 0: no cut yet).
static HEAP_AT_FIRST_CUT: AtomicU64 = AtomicU64::new(0);

/// Ticks per limit: a run is cut between 1 and 1 1/8 limits.
const TICKS_PER_LIMIT: u32 = 8;

/// A run past an exception AFL++ traps is cut at the limit divided by this.
const AFTER_RAISE_DIVISOR: u64 = 4;

/// Ticks that came outside the program's code, once the run was due, before its time-out is
/// handed to LibAFL's handler (two limits).
const TRIES: u32 = 2 * TICKS_PER_LIMIT;

/// Invalid, DivByZero and Overflow: the exceptions AFL++'s trapping harnesses stop at. Their
/// bits are the same in MXCSR and in the x87 status word.
pub const TRAPPED_KINDS: u32 = 0x01 | 0x04 | 0x08;

/// The executor's limit in nanoseconds; 0: runs are not cut (outside in-process campaigns, or
/// the ticks could not be set up).
static LIMIT_NS: AtomicU64 = AtomicU64::new(0);
/// When the current guarded run started (CLOCK_MONOTONIC nanoseconds); 0 between runs.
static STARTED_NS: AtomicU64 = AtomicU64::new(0);
static CUTS_LEFT: AtomicU32 = AtomicU32::new(CUTS_PER_PROCESS);
/// Ticks left for the current run once it is due.
static TRIES_LEFT: AtomicU32 = AtomicU32::new(TRIES);
/// The next harness call is the program's own run (a re-run is never cut).
static OWN_RUN: AtomicBool = AtomicBool::new(false);
/// LibAFL's SIGALRM handler, handed over by `rerun_limit`, which puts its filter in front.
static EXECUTOR_HANDLER: OnceLock<AlarmHandler> = OnceLock::new();
/// The thread's signal mask outside handlers, put back after a jump out of one.
static RUN_MASK: OnceLock<libc::sigset_t> = OnceLock::new();

type TestOneInput = unsafe extern "C" fn(*const u8, usize) -> c_int;
/// A signal handler as SA_SIGINFO calls it.
pub type AlarmHandler = extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void);

extern "C" {
    fn numfuzz_shim_guarded_run(test_one: TestOneInput, data: *const u8, size: usize) -> c_int;
    fn numfuzz_shim_cut_run() -> !;
    fn numfuzz_shim_cut_armed() -> c_int;
    fn numfuzz_shim_in_program_code(pc: usize) -> c_int;
}

/// From now on, a run that outlives `limit` is cut, and one past a trapped exception at a
/// quarter of it (the in-process executor's limit, set again whenever the executor's changes).
/// Nothing is cut if the ticks cannot be set up.
#[cfg_attr(not(feature = "inprocess"), allow(dead_code))]
pub fn set_limit(limit: Duration) {
    let Some(ticks) = Ticks::get() else {
        return;
    };
    let period = (limit / TICKS_PER_LIMIT).max(Duration::from_millis(1));
    ticks.every(period);
    LIMIT_NS.store(limit.as_nanos().min(u128::from(u64::MAX)) as u64, Ordering::Relaxed);
}

/// Where an alarm the filter does not keep goes: LibAFL's handler.
pub fn hand_time_outs_to(handler: AlarmHandler) {
    let _ = EXECUTOR_HANDLER.set(handler);
}

/// Runs `run`, the program's own run of an input, so that its harness call may be cut.
pub fn own_run<R>(run: impl FnOnce() -> R) -> R {
    OWN_RUN.store(true, Ordering::Relaxed);
    let result = run();
    OWN_RUN.store(false, Ordering::Relaxed);
    result
}

/// Calls the harness on `data`; whether the run was cut.
pub fn run(test_one: TestOneInput, data: *const u8, len: usize) -> bool {
    let guarded = OWN_RUN.load(Ordering::Relaxed)
        && LIMIT_NS.load(Ordering::Relaxed) > 0
        && CUTS_LEFT.load(Ordering::Relaxed) > 0
        && EXECUTOR_HANDLER.get().is_some();
    if !guarded {
        // SAFETY: the harness contract: read `len` bytes at `data`.
        unsafe { test_one(data, len) };
        return false;
    }
    let mask = RUN_MASK.get_or_init(current_mask);
    TRIES_LEFT.store(TRIES, Ordering::Relaxed);
    STARTED_NS.store(crate::clock::monotonic_ns().max(1), Ordering::Release);
    // SAFETY: as above; the shim calls it under its jump buffer.
    let cut = unsafe { numfuzz_shim_guarded_run(test_one, data, len) } != 0;
    STARTED_NS.store(0, Ordering::Release);
    if cut {
        // The jump left the handler's mask in force (the tick, or the alarm, blocked).
        // SAFETY: a mask read from this thread.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, mask, std::ptr::null_mut()) };
        stop_cutting_past_the_allowance();
    }
    cut
}

/// After a cut: no more cuts once the heap has grown by [`LEAK_ALLOWANCE`] since the first.
fn stop_cutting_past_the_allowance() {
    // SAFETY: a plain query of the allocator's statistics, outside any signal handler.
    let info = unsafe { libc::mallinfo2() };
    let in_use = (info.uordblks + info.hblkhd) as u64;
    let first = match HEAP_AT_FIRST_CUT.load(Ordering::Relaxed) {
        0 => {
            HEAP_AT_FIRST_CUT.store(in_use.max(1), Ordering::Relaxed);
            in_use
        }
        first => first,
    };
    if in_use > first + LEAK_ALLOWANCE {
        CUTS_LEFT.store(0, Ordering::Relaxed);
    }
}

fn current_mask() -> libc::sigset_t {
    // SAFETY: a zeroed sigset_t is filled by pthread_sigmask.
    unsafe {
        let mut mask: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_SETMASK, std::ptr::null(), &mut mask);
        mask
    }
}

/// The sticky exception flags (SSE and x87) of the context a signal interrupted; 0 where they
/// cannot be read. Async-signal-safe. (The handler itself starts with clear flags: the kernel
/// saves the interrupted FPU state in the signal frame.)
pub fn interrupted_flags(context: *mut c_void) -> u32 {
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    {
        let uc = context.cast::<libc::ucontext_t>();
        if uc.is_null() {
            return 0;
        }
        // SAFETY: the kernel's ucontext for this signal; `fpregs` points into the same frame.
        unsafe {
            let fp = (*uc).uc_mcontext.fpregs;
            if fp.is_null() {
                return 0;
            }
            (*fp).mxcsr | u32::from((*fp).swd)
        }
    }
    #[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
    {
        let _ = context;
        0
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

/// What a signal found the current run to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// No guarded run: the signal is not this module's business.
    Unguarded,
    /// Not due yet, or due while outside the program's code: the next tick looks again.
    Wait,
    /// Due, and no tick found it in the program's code: LibAFL's handler ends it.
    TimeOut,
}

/// Judges the current run for a signal that interrupted `context`; cuts it (does not return)
/// when it is due and the program's code was interrupted. Async-signal-safe: atomics,
/// clock_gettime, and the jump.
pub fn judge(context: *mut c_void) -> Verdict {
    let started = STARTED_NS.load(Ordering::Acquire);
    let limit = LIMIT_NS.load(Ordering::Relaxed);
    // SAFETY: reads a flag of the shim's.
    if started == 0 || limit == 0 || unsafe { numfuzz_shim_cut_armed() } == 0 {
        return Verdict::Unguarded;
    }
    let trapped = interrupted_flags(context) & TRAPPED_KINDS != 0;
    let age = crate::clock::monotonic_ns().saturating_sub(started);
    // LibAFL times its runs from just before the harness, so its clock is a little ahead.
    let due = age >= limit - limit / 16 || (trapped && age >= limit / AFTER_RAISE_DIVISOR);
    if !due {
        return Verdict::Wait;
    }
    if trapped {
        if let Some(region) = crate::region::Region::current() {
            region.set_run_flag(RUN_ALARM_AFTER_EXCEPTION);
        }
    }
    // SAFETY: a comparison of addresses.
    if unsafe { numfuzz_shim_in_program_code(interrupted_pc(context)) } != 0 && CUTS_LEFT.load(Ordering::Relaxed) > 0 {
        CUTS_LEFT.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: the shim's jump buffer is armed (checked above) and only the program's frames
        // lie between it and here.
        unsafe { numfuzz_shim_cut_run() }
    }
    if TRIES_LEFT.load(Ordering::Relaxed) == 0 {
        return Verdict::TimeOut;
    }
    TRIES_LEFT.fetch_sub(1, Ordering::Relaxed);
    Verdict::Wait
}

/// A tick: cuts the run when it is due, hands a due run no tick could cut to LibAFL.
extern "C" fn on_tick(_: c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    if judge(context) == Verdict::TimeOut {
        if let Some(handler) = EXECUTOR_HANDLER.get() {
            handler(libc::SIGALRM, info, context);
        }
    }
}

/// The tick signal: a real-time one, which neither LibAFL nor the runtime uses otherwise.
fn tick_signal() -> c_int {
    libc::SIGRTMIN() + 6
}

/// A POSIX timer that signals the thread that made it.
struct Ticks(libc::timer_t);

static TICKS: OnceLock<Option<Ticks>> = OnceLock::new();

// SAFETY: a timer id is a process-wide handle, usable from any thread.
unsafe impl Send for Ticks {}
// SAFETY: as above; the kernel serialises operations on it.
unsafe impl Sync for Ticks {}

impl Ticks {
    /// The timer, made with its handler on the first call, on the thread that runs inputs.
    fn get() -> Option<&'static Ticks> {
        TICKS.get_or_init(Ticks::make).as_ref()
    }

    fn make() -> Option<Ticks> {
        // SAFETY: sigaction and timer_create on valid, zero-initialised structs; the handler
        // is async-signal-safe.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_tick as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(tick_signal(), &action, std::ptr::null_mut()) != 0 {
                return None;
            }
            let mut event: libc::sigevent = std::mem::zeroed();
            event.sigev_notify = libc::SIGEV_THREAD_ID;
            event.sigev_signo = tick_signal();
            event.sigev_notify_thread_id = libc::gettid();
            let mut id: libc::timer_t = std::ptr::null_mut();
            (libc::timer_create(libc::CLOCK_MONOTONIC, &mut event, &mut id) == 0).then_some(Ticks(id))
        }
    }

    /// Ticks every `period` from now on.
    fn every(&self, period: Duration) {
        let spec = libc::timespec {
            tv_sec: period.as_secs() as libc::time_t,
            tv_nsec: period.subsec_nanos() as libc::c_long,
        };
        let value = libc::itimerspec {
            it_interval: spec,
            it_value: spec,
        };
        // SAFETY: a timer this process made, a valid itimerspec.
        unsafe { libc::timer_settime(self.0, 0, &value, std::ptr::null_mut()) };
    }
}
