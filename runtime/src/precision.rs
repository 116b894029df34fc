//! Where precision was lost, as an MPFR shadow build's runtime (`shadow_mpfr.c`'s
//! `__numfuzz_mpfr_track`) finds it: each time a value that lost most of its correct digits
//! reaches an operation with a non-finite, zero or subnormal result, a replay
//! (`NUMFUZZ_REPORT=json`) prints a `precision_lost` event, which triage reads to put a bug's
//! root where the digits went; a standalone run prints one line.

use crate::report;
use numfuzz_abi::op::Op;
use numfuzz_abi::report::{OpPlace, PrecisionLoss, ReportEvent};
use std::ffi::{c_char, CStr};

/// An operation's place (an empty file and line 0 when the optimiser left it none).
///
/// # Safety
/// `file` is NULL or a NUL-terminated string.
unsafe fn place(file: *const c_char, line: u32, column: u32, op: u32) -> Option<OpPlace> {
    let op = Op::from_code(u16::try_from(op).ok()?)?;
    // SAFETY: the pass passes a constant C string or NULL.
    let file = if file.is_null() {
        String::new()
    } else {
        unsafe { CStr::from_ptr(file) }.to_string_lossy().into_owned()
    };
    Some(OpPlace { file, line, column, op })
}

/// A value whose digits were lost at the origin reached `file:line:column` (`op`).
///
/// # Safety
/// `origin_file` and `file` are NULL or NUL-terminated strings.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)] // one C call carries both places: a struct buys nothing across it
pub unsafe extern "C" fn numfuzz_rt_precision_lost(
    origin_file: *const c_char,
    origin_line: u32,
    origin_column: u32,
    origin_op: u32,
    correct_bits: u32,
    bits: u32,
    file: *const c_char,
    line: u32,
    column: u32,
    op: u32,
) {
    if report::record_only() || !report::printing() {
        return;
    }
    // SAFETY: forwarded contract.
    let places = unsafe {
        (
            place(origin_file, origin_line, origin_column, origin_op),
            place(file, line, column, op),
        )
    };
    let (Some(origin), Some(reached)) = places else {
        return;
    };
    let loss = PrecisionLoss {
        origin,
        correct_bits,
        bits,
        reached,
    };
    if report::json() {
        report::event(&ReportEvent::PrecisionLost(loss));
    } else {
        eprintln!(
            "{} ({}): non-finite, zero or subnormal after {} [numfuzz]",
            loss.reached.location(),
            loss.reached.op,
            loss.describe()
        );
    }
}
