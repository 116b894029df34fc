//! Reporting exceptions outside numfuzz: a UBSan-style line (or JSON) on stderr, and an
//! abort on the first one unless `NUMFUZZ_ABORT=0`.

use crate::check::Operands;
use crate::fpu::FenvGuard;
use crate::region::Fresh;
use crate::{sites, taint};
use numfuzz_abi::env;
use numfuzz_abi::kind::ExceptionKind;
use numfuzz_abi::op::{FloatType, Op, OpShape};
use numfuzz_abi::report::{ExceptionReport, InputSummary, ReportEvent};
use numfuzz_abi::value::Float;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static PRINT: AtomicBool = AtomicBool::new(true);
static JSON: AtomicBool = AtomicBool::new(false);
static ABORT: AtomicBool = AtomicBool::new(true);
static INPUT: Mutex<Option<String>> = Mutex::new(None);

/// Reads `NUMFUZZ_REPORT` and `NUMFUZZ_ABORT`.
pub fn configure_from_env() {
    JSON.store(
        std::env::var(env::REPORT).is_ok_and(|v| v.eq_ignore_ascii_case("json")),
        Ordering::Relaxed,
    );
    ABORT.store(std::env::var(env::ABORT).map_or(true, |v| v != "0"), Ordering::Relaxed);
}

/// Under numfuzz, exceptions are only recorded in the maps: no printing, no abort.
pub fn set_record_only() {
    PRINT.store(false, Ordering::Relaxed);
    ABORT.store(false, Ordering::Relaxed);
}

/// Whether exceptions are only recorded in the maps (numfuzz's own campaigns), so that a run
/// that would record nothing new need not run.
pub fn record_only() -> bool {
    !PRINT.load(Ordering::Relaxed) && !ABORT.load(Ordering::Relaxed)
}

/// The harness called `exit()` in the middle of an input (see `Harness::run`).
pub fn note_exit_in_harness() {
    if printing() {
        eprintln!("numfuzz: LLVMFuzzerTestOneInput called exit() before returning; numfuzz treats that as a crash of this input (SIGABRT)");
    }
}

pub fn printing() -> bool {
    PRINT.load(Ordering::Relaxed)
}

pub fn json() -> bool {
    JSON.load(Ordering::Relaxed)
}

/// Names the input being replayed (for JSON reports).
pub fn set_input(name: Option<String>) {
    *INPUT.lock().unwrap_or_else(|e| e.into_inner()) = name;
}

/// The operation's float operands, integer operand and result, as reports show them.
fn values(op: Op, aux: u8, ops: &Operands) -> (Vec<Float>, Option<i64>, Option<Float>) {
    let (floats, n) = ops.floats(op);
    let floats = floats[..n].to_vec();
    match op.shape() {
        OpShape::ToInt => (floats, None, None),
        OpShape::Narrow => {
            let r = FloatType::from_code(aux)
                .and_then(|t| ops.r.convert_exact(t))
                .unwrap_or(ops.r);
            (floats, None, Some(r))
        }
        OpShape::FloatInt => (floats, Some(ops.i), Some(ops.r)),
        OpShape::Infix(_) | OpShape::Binary | OpShape::Ternary | OpShape::Unary => (floats, None, Some(ops.r)),
    }
}

/// Prints one JSON event line on stderr.
pub fn event(e: &ReportEvent) {
    let line = serde_json::to_string(e).unwrap_or_default();
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{line}");
}

/// Prints the kinds of one check that are new in this run, or newly an origin (and aborts on
/// a new one if so configured).
pub fn exceptions(site: u32, fresh: Fresh, origin: bool, op: Op, aux: u8, ops: &Operands) {
    let _env = FenvGuard::new();
    let Some(info) = sites::info(site) else { return };
    let (floats, int, result) = values(op, aux, ops);
    let mut operands: Vec<String> = floats.iter().map(Float::to_string).collect();
    let mut operands_hex: Vec<String> = floats.iter().map(|f| f.to_hex()).collect();
    if let Some(i) = int {
        operands.push(i.to_string());
        operands_hex.push(format!("{i:#x}"));
    }
    let input = INPUT.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let mut stderr = std::io::stderr().lock();
    for kind in ExceptionKind::ALL {
        let bit = 1 << kind as u8;
        if fresh.any() & bit == 0 {
            continue;
        }
        // The human format reports each (site, kind) once per input.
        if !json() && fresh.raised & bit == 0 {
            continue;
        }
        let report = ExceptionReport {
            kind,
            site: info.clone(),
            operands: operands.clone(),
            operands_hex: operands_hex.clone(),
            result: result.map(|r| r.to_string()),
            result_hex: result.map(|r| r.to_hex()),
            input: input.clone(),
            origin,
            label: taint::label_of(site, kind),
        };
        let line = if json() {
            serde_json::to_string(&ReportEvent::Exception(report)).unwrap_or_default()
        } else {
            report.human_line()
        };
        let _ = writeln!(stderr, "{line}");
    }
    let _ = stderr.flush();
    if ABORT.load(Ordering::Relaxed) && fresh.raised != 0 {
        std::process::abort();
    }
}

/// The end of one input's replay (JSON mode only), after the taint summary of a taint build.
pub fn input_done(exceptions: u32, handled: bool) {
    if !json() {
        return;
    }
    if taint::active() {
        event(&ReportEvent::Taint(taint::summary()));
    }
    let input = INPUT.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let event = ReportEvent::InputDone(InputSummary {
        input,
        exceptions,
        handled,
    });
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{}", serde_json::to_string(&event).unwrap_or_default());
}
