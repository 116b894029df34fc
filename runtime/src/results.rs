//! Declared results (`NUMFUZZ_RESULT(v)`, `NUMFUZZ_RESULT_NAMED("err", v)`): in a campaign
//! they mark the run (a primary result went Inf or NaN); on replay with
//! `NUMFUZZ_REPORT=json` each one is printed, with its labels in a taint build.

use crate::fpu::F80Slot;
use crate::region::Region;
use crate::report;
use numfuzz_abi::report::{ReportEvent, ResultReport, ShadowValue};
use numfuzz_abi::taint::label_list;
use numfuzz_abi::value::Float;
use std::ffi::{c_char, CStr};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// Number of the next primary result in this run.
static NEXT_PRIMARY: AtomicU32 = AtomicU32::new(0);

/// Starts a new input's numbering.
pub fn reset() {
    NEXT_PRIMARY.store(0, Ordering::Relaxed);
}

/// One declared result; `labels` in a taint build.
///
/// # Safety
/// `name` is null or a NUL-terminated string.
pub unsafe fn declare(name: *const c_char, v: Float, labels: Option<u8>, shadow: Option<ShadowValue>) {
    // The fast run just before it declared the same.
    if crate::copies::in_specials_run() {
        return;
    }
    let primary = name.is_null();
    if let Some(region) = Region::current() {
        region.note_result(primary, !v.is_finite());
    }
    if !(report::printing() && report::json()) {
        return;
    }
    let (index, name) = if primary {
        (Some(NEXT_PRIMARY.fetch_add(1, Ordering::Relaxed)), None)
    } else {
        // SAFETY: caller guarantees a C string.
        (
            None,
            Some(unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()),
        )
    };
    let event = ReportEvent::Result(ResultReport {
        index,
        name,
        ty: v.ty,
        value: v.to_string(),
        hex: v.to_hex(),
        labels: labels.map(label_list),
        shadow,
    });
    if crate::copies::in_fast_run() {
        deferred().push(event);
    } else {
        report::event(&event);
    }
}

/// Results a fast run declared: printed when the run stands, dropped when a precise re-run
/// declares them again.
fn deferred() -> std::sync::MutexGuard<'static, Vec<ReportEvent>> {
    static DEFERRED: Mutex<Vec<ReportEvent>> = Mutex::new(Vec::new());
    DEFERRED.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The fast run is over: print its results, or (`rerun`) drop them and number the re-run's
/// from 0 again.
pub fn settle_fast_run(rerun: bool) {
    let events = std::mem::take(&mut *deferred());
    if rerun {
        reset();
    } else {
        for event in &events {
            report::event(event);
        }
    }
}

/// # Safety
/// `name` is null or a NUL-terminated string (numfuzz.h's `NUMFUZZ_RESULT`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn numfuzz_result_f32(name: *const c_char, v: f32) {
    // SAFETY: forwarded contract.
    unsafe { declare(name, Float::from_f32(v), None, None) }
}

/// # Safety
/// As [`numfuzz_result_f32`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn numfuzz_result_f64(name: *const c_char, v: f64) {
    // SAFETY: forwarded contract.
    unsafe { declare(name, Float::from_f64(v), None, None) }
}

/// # Safety
/// As [`numfuzz_result_f32`]; `v` points to a `long double`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn numfuzz_result_f80(name: *const c_char, v: *const F80Slot) {
    // SAFETY: forwarded contract.
    unsafe { declare(name, (*v).value(), None, None) }
}

/// Taint builds: the shim's `__dfsw_numfuzz_result_*` wrappers, with the value's label.
///
/// # Safety
/// As [`numfuzz_result_f32`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn numfuzz_rt_result_f32(name: *const c_char, v: f32, label: u8) {
    // SAFETY: forwarded contract.
    unsafe { declare(name, Float::from_f32(v), Some(label), None) }
}

/// # Safety
/// As [`numfuzz_result_f32`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn numfuzz_rt_result_f64(name: *const c_char, v: f64, label: u8) {
    // SAFETY: forwarded contract.
    unsafe { declare(name, Float::from_f64(v), Some(label), None) }
}

/// # Safety
/// As [`numfuzz_result_f80`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn numfuzz_rt_result_f80(name: *const c_char, v: *const F80Slot, label: u8) {
    // SAFETY: forwarded contract.
    unsafe { declare(name, (*v).value(), Some(label), None) }
}

/// MPFR shadow builds: `shadow_mpfr.c`'s `__numfuzz_mpfr_result`, with the shadow as a
/// decimal (its exponent may be far beyond any hardware format's).
///
/// # Safety
/// As [`numfuzz_result_f32`]; `shadow` is a NUL-terminated string; `unreliable` is null or a
/// NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn numfuzz_rt_result_shadowed_text(
    name: *const c_char,
    v: f64,
    width: u32,
    shadow: *const c_char,
    unreliable: *const c_char,
) {
    // SAFETY: forwarded contract.
    let shadow = unsafe {
        ShadowValue {
            value: CStr::from_ptr(shadow).to_string_lossy().into_owned(),
            unreliable: (!unreliable.is_null()).then(|| CStr::from_ptr(unreliable).to_string_lossy().into_owned()),
        }
    };
    // SAFETY: forwarded contract.
    unsafe { declare(name, widened(v, width), None, Some(shadow)) }
}

/// A result that arrived as a double: a float's value again when `width` is 4.
fn widened(v: f64, width: u32) -> Float {
    if width == 4 {
        Float::from_f32(v as f32)
    } else {
        Float::from_f64(v)
    }
}

/// Shadow builds: `shadow.c`'s `__numfuzz_shadow_result`, with the result's width in bytes (a
/// float arrives widened), its shadow and why
/// it is unreliable (null: it is not).
///
/// # Safety
/// As [`numfuzz_result_f32`]; `shadow` points to a `long double`; `unreliable` is null or a
/// NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn numfuzz_rt_result_shadowed(
    name: *const c_char,
    v: f64,
    width: u32,
    shadow: *const F80Slot,
    unreliable: *const c_char,
) {
    // SAFETY: forwarded contract.
    let shadow = unsafe {
        ShadowValue {
            value: (*shadow).value().to_string(),
            unreliable: (!unreliable.is_null()).then(|| CStr::from_ptr(unreliable).to_string_lossy().into_owned()),
        }
    };
    // SAFETY: forwarded contract.
    unsafe { declare(name, widened(v, width), None, Some(shadow)) }
}
