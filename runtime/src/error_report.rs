//! The library's own error reports: `numfuzz_error_reported`, which numfuzz-cc calls before
//! each call of a `NUMFUZZ_CC_ERROR_HOOK` function (and a harness may call from its handler).
//!
//! A replay (`NUMFUZZ_REPORT=json`) prints each of an input's first `MAX_ERROR_REPORTS` as an
//! `error_reported` event with the symbolized callers, then raises `__numfuzz_error_pending`,
//! after which the integer each call returns is a `status_returned` event: triage reads both
//! to find the call whose callee received a status and returned success. A standalone run
//! prints one line; a campaign ignores them (the fast path pays one load and a branch).

use crate::crash;
use crate::fpu::FenvGuard;
use crate::report;
use numfuzz_abi::report::{ErrorReport, Frame, ReportEvent, StatusReport, MAX_ERROR_REPORTS, MAX_STATUS_REPORTS};
use std::ffi::{c_char, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Reports of the current input so far.
static REPORTED: AtomicUsize = AtomicUsize::new(0);
/// Integer returns of the current input printed so far.
static STATUSES: AtomicUsize = AtomicUsize::new(0);

/// Non-zero once this input's replay reported an error: code built with an error hook tests it
/// after each call that returns an integer, and calls `__numfuzz_status_returned` then.
#[unsafe(no_mangle)]
pub static mut __numfuzz_error_pending: u8 = 0;

fn set_pending(on: bool) {
    // SAFETY: written by the replaying thread between and during its own runs.
    unsafe { __numfuzz_error_pending = on as u8 };
}
/// Symbolizing is not thread-safe (see `crash::symbolize`).
static SYMBOLIZING: Mutex<()> = Mutex::new(());
/// Callers kept per report.
const MAX_CALLERS: usize = 16;

/// A new input begins: its reports count from zero.
pub fn reset() {
    REPORTED.store(0, Ordering::Relaxed);
    STATUSES.store(0, Ordering::Relaxed);
    set_pending(false);
}

fn text(s: *const c_char) -> Option<String> {
    // SAFETY: the pass passes a constant C string or NULL; a harness is told to do the same.
    (!s.is_null()).then(|| unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned())
}

/// The program's frames above this call, innermost first, down to the harness entry: the
/// runtime's own frames (up to this entry point) are skipped.
fn callers() -> Vec<Frame> {
    let _lock = SYMBOLIZING.lock().unwrap_or_else(|e| e.into_inner());
    let mut ips = Vec::with_capacity(64);
    backtrace::trace(|frame| {
        ips.push(frame.ip() as usize);
        ips.len() < 128
    });
    let mut frames = Vec::new();
    let mut above_entry = false;
    for ip in ips {
        let mut here = Vec::new();
        let entry = crash::symbolize(&mut here, ip, false);
        if !above_entry {
            above_entry = here.iter().any(|(_, f)| f.function == "numfuzz_error_reported");
            continue;
        }
        frames.extend(here.into_iter().map(|(_, f)| f));
        if entry || frames.len() >= MAX_CALLERS {
            break;
        }
    }
    frames.truncate(MAX_CALLERS);
    frames
}

/// The library reported an error at `file:line`.
///
/// # Safety
/// `file` and `reason` are NULL or NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn numfuzz_error_reported(file: *const c_char, line: u32, reason: *const c_char, code: i64) {
    if report::record_only() || !report::printing() {
        return;
    }
    // Symbolizing must leave the program's flags as they were.
    let _env = FenvGuard::new();
    let error = ErrorReport {
        file: text(file).unwrap_or_else(|| "??".into()),
        line,
        reason: text(reason),
        code,
        frames: Vec::new(),
    };
    if !report::json() {
        let why = error.reason.as_deref().map_or(String::new(), |r| format!(" \"{r}\""));
        eprintln!("{}:{line}: error reported{why} (code {code}) [numfuzz]", error.file);
        return;
    }
    if REPORTED.fetch_add(1, Ordering::Relaxed) >= MAX_ERROR_REPORTS {
        return;
    }
    let error = ErrorReport {
        frames: callers(),
        ..error
    };
    report::event(&ReportEvent::ErrorReported(error));
    set_pending(true);
}

/// A call at `file:line` of `callee` returned `value`, after an error report.
///
/// # Safety
/// `file` and `callee` are NULL or NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __numfuzz_status_returned(file: *const c_char, line: u32, callee: *const c_char, value: i64) {
    if !report::json() || STATUSES.fetch_add(1, Ordering::Relaxed) >= MAX_STATUS_REPORTS {
        return;
    }
    report::event(&ReportEvent::StatusReturned(StatusReport {
        file: text(file).unwrap_or_else(|| "??".into()),
        line,
        callee: text(callee).unwrap_or_default(),
        value,
    }));
}
