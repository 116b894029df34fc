//! Comparison hooks: the branch distance of every comparison (for the distance feedback) and,
//! in tracing runs, its operands (for input-to-state). See numfuzz-abi's `cmp` module.

use crate::region::Region;
use numfuzz_abi::cmp::{
    distances_of, float_gaps, int_gaps, CmpLogEntry, CmpOperand, CmpRecord, Gaps, Predicate, CMP_DISTANCES, CMP_LOG,
};
use numfuzz_abi::site::SITE_UNASSIGNED;
use numfuzz_abi::value::Float;

/// What comparisons record now (`CMP_*` bits); instrumented code reads it before calling a
/// hook. Set from the region header at the start of every run.
#[unsafe(no_mangle)]
pub static mut __numfuzz_cmp_mode: u8 = 0;

pub fn set_mode(mode: u8) {
    // SAFETY: written between runs; read by instrumented code of the same thread.
    unsafe { __numfuzz_cmp_mode = mode };
}

fn mode() -> u8 {
    // SAFETY: see `set_mode`.
    unsafe { __numfuzz_cmp_mode }
}

#[inline]
fn record(rec: &CmpRecord, gaps: impl FnOnce(Predicate) -> Gaps, operands: impl FnOnce() -> ([u8; 16], [u8; 16])) {
    if rec.id == SITE_UNASSIGNED {
        return;
    }
    let (Some(region), Some(pred)) = (Region::current(), Predicate::from_code(rec.predicate)) else {
        return;
    };
    let mode = mode();
    if mode & CMP_DISTANCES != 0 {
        let gaps = gaps(pred);
        region.record_cmp(rec.id, distances_of(gaps));
        if let Some(outcome) = crate::probe::probed_outcome(rec.id) {
            if let Some(gap) = gaps[outcome] {
                region.lower_probe_gap(gap);
            }
        }
    }
    if mode & CMP_LOG != 0 {
        let (a, b) = operands();
        region.log_cmp(&CmpLogEntry {
            cmp: rec.id,
            operand: rec.operand,
            predicate: rec.predicate,
            reserved: 0,
            a,
            b,
        });
    }
}

fn bytes(v: &[u8]) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..v.len()].copy_from_slice(v);
    out
}

/// # Safety
/// Called by instrumented code with its comparison record.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __numfuzz_cmp_int(rec: *const CmpRecord, a: u64, b: u64) {
    // SAFETY: the pass passes its own record.
    let rec = unsafe { &*rec };
    let bits = CmpOperand::from_code(rec.operand)
        .and_then(CmpOperand::int_bits)
        .unwrap_or(64);
    record(
        rec,
        |p| int_gaps(p, bits, a, b),
        || (bytes(&a.to_le_bytes()), bytes(&b.to_le_bytes())),
    );
}

/// # Safety
/// Called by instrumented code with its comparison record.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __numfuzz_cmp_f32(rec: *const CmpRecord, a: f32, b: f32) {
    // SAFETY: the pass passes its own record.
    let rec = unsafe { &*rec };
    let (x, y) = (Float::from_f32(a), Float::from_f32(b));
    record(
        rec,
        |p| float_gaps(p, x, y),
        || (bytes(&a.to_bits().to_le_bytes()), bytes(&b.to_bits().to_le_bytes())),
    );
}

/// # Safety
/// Called by instrumented code with its comparison record.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __numfuzz_cmp_f64(rec: *const CmpRecord, a: f64, b: f64) {
    // SAFETY: the pass passes its own record.
    let rec = unsafe { &*rec };
    let (x, y) = (Float::from_f64(a), Float::from_f64(b));
    record(
        rec,
        |p| float_gaps(p, x, y),
        || (bytes(&a.to_bits().to_le_bytes()), bytes(&b.to_bits().to_le_bytes())),
    );
}

/// # Safety
/// Called by instrumented code with its comparison record and two x86_fp80 slots.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __numfuzz_cmp_f80(rec: *const CmpRecord, ab: *const crate::fpu::F80Slot) {
    // SAFETY: the pass passes its own record and an array of two 16-byte slots.
    let (rec, slots) = unsafe { (&*rec, std::slice::from_raw_parts(ab, 2)) };
    let (x, y) = (slots[0].value(), slots[1].value());
    record(
        rec,
        |p| float_gaps(p, x, y),
        || (bytes(&x.to_f80_bytes()), bytes(&y.to_f80_bytes())),
    );
}
