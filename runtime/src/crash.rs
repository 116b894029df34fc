//! Real crashes in standalone replays: on SIGSEGV, SIGBUS, SIGFPE, SIGILL (and SIGABRT when
//! the runtime itself does not abort on exceptions) print the signal and a short symbolized
//! stack to stderr, then die by the same signal so the exit status is unchanged.
//!
//! ```text
//! numfuzz: fatal signal SIGSEGV
//! numfuzz:     #0 0x000055d0c1a2b3c4 in poke_null /src/h.c:9:25
//! numfuzz:     #1 0x000055d0c1a2b400 in LLVMFuzzerTestOneInput /src/h.c:20:5
//! ```
//!
//! With `NUMFUZZ_REPORT=json` (how `numfuzz triage` and `numfuzz replay` run a target) the
//! same report is one JSON `crash` event instead. Only standalone runs install the
//! handlers: the forkserver and the in-process engine have their own crash handling.
//! Symbolizing allocates and is not async-signal-safe; the process is dying anyway, and a
//! watchdog re-raises the signal if the handler itself gets stuck.

use crate::report;
use numfuzz_abi::env;
use numfuzz_abi::report::{CrashReport, Frame, ReportEvent};
use std::ffi::{c_int, c_void};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI32, Ordering};

/// Frames printed at most.
const MAX_FRAMES: usize = 16;
/// Seconds the handler may take before the watchdog re-raises the signal.
const WATCHDOG_SECS: u32 = 3;
/// Alternate signal stack, so a stack overflow still gets its report.
const ALT_STACK_SIZE: usize = 256 * 1024;

/// The signal being handled (for the watchdog).
static HANDLING: AtomicI32 = AtomicI32::new(0);

/// Installs the handlers (standalone mode only).
pub fn install() {
    // Default standalone mode aborts on the first floating-point exception after printing
    // it: that SIGABRT is the runtime's report, not a crash of the program.
    let runtime_aborts = std::env::var(env::ABORT).map_or(true, |v| v != "0");
    let stack: &'static mut [u8] = Box::leak(vec![0u8; ALT_STACK_SIZE].into_boxed_slice());
    let alt = libc::stack_t {
        ss_sp: stack.as_mut_ptr().cast(),
        ss_flags: 0,
        ss_size: ALT_STACK_SIZE,
    };
    // SAFETY: the stack is leaked, so it lives as long as the process.
    unsafe { libc::sigaltstack(&alt, std::ptr::null_mut()) };
    let mut signals = vec![libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGILL];
    if !runtime_aborts {
        signals.push(libc::SIGABRT);
    }
    for sig in signals {
        // SAFETY: plain sigaction with a handler of the SA_SIGINFO shape. SA_RESETHAND makes a
        // fault inside the handler fatal at once instead of recursing.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_fatal_signal as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESETHAND;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// Name of a fatal signal.
fn signal_name(sig: c_int) -> String {
    match sig {
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGBUS => "SIGBUS".into(),
        libc::SIGFPE => "SIGFPE".into(),
        libc::SIGILL => "SIGILL".into(),
        libc::SIGABRT => "SIGABRT".into(),
        other => format!("signal {other}"),
    }
}

/// How close (bytes) a faulting address must be to the interrupted stack pointer to count as
/// running off the stack: one large frame plus the guard page.
const STACK_FAULT_REACH: usize = 256 * 1024;

/// The interrupted thread's program counter and stack pointer, read once from the signal
/// context when the architecture is known.
#[derive(Clone, Copy, Default)]
struct Interrupted {
    pc: Option<usize>,
    sp: Option<usize>,
}

impl Interrupted {
    #[allow(unused_variables)]
    fn read(context: *mut c_void) -> Interrupted {
        if context.is_null() {
            return Interrupted::default();
        }
        // SAFETY: the kernel passes a ucontext_t to SA_SIGINFO handlers.
        #[allow(unused_unsafe)]
        let uc = unsafe { &*(context as *const libc::ucontext_t) };
        #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
        return Interrupted {
            pc: Some(uc.uc_mcontext.gregs[libc::REG_RIP as usize] as usize),
            sp: Some(uc.uc_mcontext.gregs[libc::REG_RSP as usize] as usize),
        };
        #[cfg(all(target_os = "linux", target_arch = "aarch64"))]
        return Interrupted {
            pc: Some(uc.uc_mcontext.pc as usize),
            sp: Some(uc.uc_mcontext.sp as usize),
        };
        #[allow(unreachable_code)]
        Interrupted::default()
    }

    /// The fault address is next to the interrupted stack pointer: the stack ran out.
    fn ran_off_the_stack(self, info: *mut libc::siginfo_t) -> bool {
        let Some(sp) = self.sp.filter(|_| !info.is_null()) else {
            return false;
        };
        // SAFETY: the kernel passes a siginfo_t to SA_SIGINFO handlers.
        let addr = unsafe { (*info).si_addr() } as usize;
        addr.abs_diff(sp) <= STACK_FAULT_REACH
    }
}

/// The symbolized frames at `ip` (several for inlined calls), appended to `frames`. Returns
/// whether the frame is the harness entry (below it is only the runtime's `main`). Not
/// synchronized: callers are the dying process's handler and `error_report`, which holds a lock.
pub(crate) fn symbolize(frames: &mut Vec<(usize, Frame)>, ip: usize, exact: bool) -> bool {
    // `resolve` looks up `addr - 1` (return addresses point past the call); the faulting
    // frame's address is the instruction itself.
    let lookup = if exact { ip + 1 } else { ip };
    let mut reached_entry = false;
    let before = frames.len();
    // SAFETY: single-threaded use while the process dies; see the module docs.
    unsafe {
        backtrace::resolve_unsynchronized(lookup as *mut c_void, |sym| {
            let function = sym.name().map_or_else(|| "??".to_string(), |n| n.to_string());
            reached_entry |= function == "LLVMFuzzerTestOneInput" || function == "main";
            let line = sym.lineno();
            frames.push((
                ip,
                Frame {
                    function,
                    file: line.and(sym.filename()).map(|f| f.display().to_string()),
                    line: sym.filename().and(line),
                    column: line.and(sym.colno()).filter(|&c| c > 0),
                },
            ));
        });
    }
    if frames.len() == before {
        frames.push((
            ip,
            Frame {
                function: "??".into(),
                file: None,
                line: None,
                column: None,
            },
        ));
    }
    reached_entry
}

/// The report as people read it (`numfuzz: fatal signal SIGSEGV`, then one line per frame).
fn human_report(report: &CrashReport, ips: &[usize]) -> String {
    let mut out = format!("numfuzz: fatal signal {}", report.signal);
    if report.stack_overflow {
        out.push_str(" (stack overflow)");
    }
    if let Some(oom) = &report.out_of_memory {
        let _ = write!(out, " ({})", oom.describe());
    }
    out.push('\n');
    for (index, (frame, ip)) in report.frames.iter().zip(ips).enumerate() {
        let _ = write!(out, "numfuzz:     #{index} {ip:#018x} in {}", frame.function);
        if let (Some(file), Some(line)) = (&frame.file, frame.line) {
            let _ = write!(out, " {file}:{line}");
            if let Some(col) = frame.column {
                let _ = write!(out, ":{col}");
            }
        }
        out.push('\n');
    }
    out
}

/// The frame is this module's signal handler.
fn is_handler_frame(ip: usize) -> bool {
    let mut found = false;
    // SAFETY: see the module docs.
    unsafe {
        backtrace::resolve_unsynchronized(ip as *mut c_void, |sym| {
            found |= sym.name().is_some_and(|n| n.to_string().contains(HANDLER_SYMBOL));
        })
    };
    found
}

fn write_stderr(text: &str) {
    let mut rest = text.as_bytes();
    while !rest.is_empty() {
        // SAFETY: writing an owned buffer to fd 2.
        let n = unsafe { libc::write(2, rest.as_ptr().cast(), rest.len()) };
        if n <= 0 {
            break;
        }
        rest = &rest[n as usize..];
    }
}

extern "C" fn watchdog(_: c_int) {
    let sig = HANDLING.load(Ordering::SeqCst);
    // SAFETY: async-signal-safe calls only.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
        libc::_exit(128 + sig);
    }
}

unsafe extern "C" {
    /// Writes the llvm-cov profile of a coverage build (no-op otherwise), so the inputs a
    /// coverage replay ran before the crash still count.
    fn numfuzz_shim_flush_profile();
}

/// The handler's symbol, global so that it survives the stripped link of the runtime
/// (cc-wrapper's lean_runtime keeps no local symbols) and [`is_handler_frame`] can find it.
const HANDLER_SYMBOL: &str = "__numfuzz_on_fatal_signal";

#[unsafe(export_name = "__numfuzz_on_fatal_signal")]
extern "C" fn on_fatal_signal(sig: c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    HANDLING.store(sig, Ordering::SeqCst);
    // SAFETY: installing a handler and arming an alarm.
    unsafe {
        libc::signal(libc::SIGALRM, watchdog as *const () as libc::sighandler_t);
        libc::alarm(WATCHDOG_SECS);
    }
    let mut ips = Vec::with_capacity(64);
    // SAFETY: see the module docs.
    unsafe {
        backtrace::trace_unsynchronized(|frame| {
            ips.push(frame.ip() as usize);
            ips.len() < 256
        })
    };
    // Frames above the interrupted one belong to this handler and the signal trampoline.
    let at = Interrupted::read(context);
    let pc = at.pc;
    let start = pc.and_then(|pc| ips.iter().position(|&ip| ip == pc));
    let (first, exact) = match start {
        Some(i) => (i, true),
        // Unknown architecture, or the unwinder reported the pc differently: skip up to
        // this handler's own frame (the next one is the signal trampoline).
        None => (
            ips.iter().position(|&ip| is_handler_frame(ip)).map_or(0, |i| i + 1),
            false,
        ),
    };
    let stack_overflow = (sig == libc::SIGSEGV || sig == libc::SIGBUS) && at.ran_off_the_stack(info);
    let mut frames = Vec::new();
    for (k, &ip) in ips.iter().enumerate().skip(first) {
        if frames.len() >= MAX_FRAMES || symbolize(&mut frames, ip, exact && k == first) {
            break;
        }
    }
    frames.truncate(MAX_FRAMES);
    let (ips, frames): (Vec<usize>, Vec<Frame>) = frames.into_iter().unzip();
    let report = CrashReport {
        signal: signal_name(sig),
        stack_overflow,
        out_of_memory: (sig == libc::SIGABRT).then(crate::memlimit::exceeded).flatten(),
        frames,
    };
    // Replays (`NUMFUZZ_REPORT=json`) read the report as one more event of the stream.
    let out = if report::json() {
        let event = serde_json::to_string(&ReportEvent::Crash(report)).unwrap_or_default();
        format!("{event}\n")
    } else {
        human_report(&report, &ips)
    };
    write_stderr(&out);
    // SAFETY: the shim calls the profile runtime's writer if this is an llvm-cov build.
    unsafe { numfuzz_shim_flush_profile() };
    // SAFETY: with the default action restored (SA_RESETHAND), the re-raised signal is
    // delivered when the handler returns and ends the process the way the original would.
    unsafe {
        libc::alarm(0);
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}
