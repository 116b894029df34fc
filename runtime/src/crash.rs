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
//! `numfuzz triage` and `numfuzz replay` read these lines. Only standalone runs install the
//! handlers: the forkserver and the in-process engine have their own crash handling.
//! Symbolizing allocates and is not async-signal-safe; the process is dying anyway, and a
//! watchdog re-raises the signal if the handler itself gets stuck.

use numfuzz_abi::env;
use std::ffi::{c_int, c_void};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI32, Ordering};

/// First line of a crash report; the fuzzer matches on it.
pub const FATAL_PREFIX: &str = "numfuzz: fatal signal ";
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

/// Appended to the fatal-signal line when the fault hit the guard page below the stack: the
/// innermost frames are then wherever the stack ran out (often a checker), not the bug.
pub const STACK_OVERFLOW_SUFFIX: &str = " (stack overflow)";

/// How close (bytes) a faulting address must be to the interrupted stack pointer to count as
/// running off the stack: one large frame plus the guard page.
const STACK_FAULT_REACH: usize = 256 * 1024;

/// The fault address is next to the interrupted stack pointer: the stack ran out.
#[allow(unused_variables)]
fn is_stack_overflow(info: *mut libc::siginfo_t, context: *mut c_void) -> bool {
    if info.is_null() || context.is_null() {
        return false;
    }
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    {
        // SAFETY: the kernel passes a siginfo_t and a ucontext_t to SA_SIGINFO handlers.
        let (addr, sp) = unsafe {
            let uc = &*(context as *const libc::ucontext_t);
            (
                (*info).si_addr() as usize,
                uc.uc_mcontext.gregs[libc::REG_RSP as usize] as usize,
            )
        };
        return addr.abs_diff(sp) <= STACK_FAULT_REACH;
    }
    #[allow(unreachable_code)]
    false
}

/// The interrupted program counter, when the architecture is known.
#[allow(unused_variables)]
fn fault_pc(context: *mut c_void) -> Option<usize> {
    if context.is_null() {
        return None;
    }
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    {
        // SAFETY: the kernel passes a ucontext_t to SA_SIGINFO handlers.
        let uc = unsafe { &*(context as *const libc::ucontext_t) };
        return Some(uc.uc_mcontext.gregs[libc::REG_RIP as usize] as usize);
    }
    #[cfg(all(target_os = "linux", target_arch = "aarch64"))]
    {
        // SAFETY: as above.
        let uc = unsafe { &*(context as *const libc::ucontext_t) };
        return Some(uc.uc_mcontext.pc as usize);
    }
    #[allow(unreachable_code)]
    None
}

/// One symbolized frame line (several for inlined calls) appended to `out`. Returns whether
/// the frame is the harness entry (below it is only the runtime's `main`).
fn describe_frame(out: &mut String, index: &mut usize, ip: usize, exact: bool) -> bool {
    // `resolve` looks up `addr - 1` (return addresses point past the call); the faulting
    // frame's address is the instruction itself.
    let lookup = if exact { ip + 1 } else { ip };
    let mut reached_entry = false;
    let mut any = false;
    // SAFETY: single-threaded use while the process dies; see the module docs.
    unsafe {
        backtrace::resolve_unsynchronized(lookup as *mut c_void, |sym| {
            any = true;
            let name = sym.name().map_or_else(|| "??".to_string(), |n| n.to_string());
            reached_entry |= name == "LLVMFuzzerTestOneInput" || name == "main";
            let _ = write!(out, "numfuzz:     #{} {ip:#018x} in {name}", *index);
            if let (Some(file), Some(line)) = (sym.filename(), sym.lineno()) {
                let _ = write!(out, " {}:{line}", file.display());
                if let Some(col) = sym.colno().filter(|&c| c > 0) {
                    let _ = write!(out, ":{col}");
                }
            }
            out.push('\n');
            *index += 1;
        });
    }
    if !any {
        let _ = writeln!(out, "numfuzz:     #{} {ip:#018x} in ??", *index);
        *index += 1;
    }
    reached_entry
}

/// The frame is this module's signal handler.
fn is_handler_frame(ip: usize) -> bool {
    let mut found = false;
    // SAFETY: see the module docs.
    unsafe {
        backtrace::resolve_unsynchronized(ip as *mut c_void, |sym| {
            found |= sym.name().is_some_and(|n| n.to_string().contains("on_fatal_signal"));
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
    let pc = fault_pc(context);
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
    let mut out = format!("{FATAL_PREFIX}{}", signal_name(sig));
    if (sig == libc::SIGSEGV || sig == libc::SIGBUS) && is_stack_overflow(info, context) {
        out.push_str(STACK_OVERFLOW_SUFFIX);
    }
    out.push('\n');
    let mut index = 0;
    for (k, &ip) in ips.iter().enumerate().skip(first) {
        if index >= MAX_FRAMES || describe_frame(&mut out, &mut index, ip, exact && k == first) {
            break;
        }
    }
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
