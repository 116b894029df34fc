//! fadd, fsub, fmul, fdiv, frem, fmuladd, fma.

use super::{Gaps, Limits, Operands, Outcome};
use crate::fpu;
use numfuzz_abi::errbits::{gap, NOT_MEASURED};
use numfuzz_abi::kind::ExceptionKind::{DivByZero, Invalid};
use numfuzz_abi::op::{FloatType, Op};

/// Bit-level constants of a binary interchange format, for the fast path.
struct Binary {
    sign: u64,
    min_normal: u64,
    max: u64,
    inf: u64,
}

const F32: Binary = Binary {
    sign: 1 << 31,
    min_normal: 0x0080_0000,
    max: 0x7f7f_ffff,
    inf: 0x7f80_0000,
};
const F64: Binary = Binary {
    sign: 1 << 63,
    min_normal: 0x0010_0000_0000_0000,
    max: 0x7fef_ffff_ffff_ffff,
    inf: 0x7ff0_0000_0000_0000,
};

/// `ceil(log2(1 + d))` for the fast path (distances of f32/f64 stay below 2^64).
#[inline]
fn bits(d: u64) -> u8 {
    (64 - d.leading_zeros()) as u8
}

/// The common cases, decided on raw f32/f64 bits without the generic model. No flag is
/// possible when the result is finite and below the largest finite in magnitude, and
/// - above the smallest normal (a tiny result rounded up to it may have underflowed), or
/// - the operation is a sum or difference (tiny ones are exact), or
/// - it is a zero product with a zero factor, or a zero quotient of a zero dividend or an
///   infinite divisor (exact).
///
/// For these formats `ord` of a non-negative finite value is its bit pattern, so ErrBits are
/// plain differences. None when the result needs the full classification.
#[inline]
pub fn fast(op: Op, ty: FloatType, ops: &Operands) -> Option<Outcome> {
    let f = match ty {
        FloatType::F64 => &F64,
        FloatType::F32 => &F32,
        FloatType::F80 => return fast_f80(op, ops),
    };
    let r = ops.r.bits as u64 & !f.sign;
    if r >= f.max {
        return None;
    }
    let (a, b) = (ops.a.bits as u64 & !f.sign, ops.b.bits as u64 & !f.sign);
    let flagless = r > f.min_normal
        || match op {
            Op::FAdd | Op::FSub => true,
            Op::FMul => r == 0 && (a == 0 || b == 0),
            Op::FDiv => r == 0 && (a == 0 || b == f.inf),
            _ => false,
        };
    if !flagless || !matches!(op, Op::FAdd | Op::FSub | Op::FMul | Op::FDiv | Op::FMulAdd | Op::Fma) {
        return None;
    }
    let underflow = match r {
        0 => NOT_MEASURED,
        r => bits(r.abs_diff(f.min_normal)).max(1),
    };
    // r < max, so the overflow distance is at least 1.
    let mut errbits = [NOT_MEASURED, NOT_MEASURED, bits(f.max - r), underflow];
    if op == Op::FDiv && b < f.inf {
        errbits[DivByZero as usize] = bits(b).max(1);
    }
    Some(Outcome {
        raised: 0,
        errbits,
        gaps: Default::default(),
    })
}

/// x86_fp80 (which has no inline path, so every operation reaches the runtime): strictly
/// normal results of `+ - * /` and fused multiply-adds, where no flag is possible, decided on
/// the ordered positions `ord` gives, the same numbers the full classification measures.
#[inline]
fn fast_f80(op: Op, ops: &Operands) -> Option<Outcome> {
    if !matches!(op, Op::FAdd | Op::FSub | Op::FMul | Op::FDiv | Op::FMulAdd | Op::Fma) {
        return None;
    }
    let lim = Limits::of(FloatType::F80);
    if !lim.strictly_normal(ops.r) {
        return None;
    }
    let r = ops.r.abs().ord().unsigned_abs();
    let (max, min_normal) = (lim.max.ord().unsigned_abs(), lim.min_normal.ord().unsigned_abs());
    let mut errbits = [NOT_MEASURED, NOT_MEASURED, bits128(max - r), bits128(r - min_normal)];
    if op == Op::FDiv && ops.b.is_finite() {
        errbits[DivByZero as usize] = bits128(ops.b.abs().ord().unsigned_abs().max(1));
    }
    Some(Outcome {
        raised: 0,
        errbits,
        gaps: Default::default(),
    })
}

fn bits128(d: u128) -> u8 {
    numfuzz_abi::errbits::of_gap(Some(d))
}

pub fn classify<G: Gaps>(op: Op, ty: FloatType, ops: &Operands) -> Outcome<G> {
    let lim = Limits::of(ty);
    let (a, b, r) = (ops.a, ops.b, ops.r);
    let mut out = Outcome::new();
    if op == Op::FRem {
        // fmod is exact: only Invalid (x infinite or y zero, no NaN operand; or a
        // signalling NaN operand).
        let invalid =
            (a.is_signaling() || b.is_signaling()) || (!a.is_nan() && !b.is_nan() && (a.is_infinite() || b.is_zero()));
        if invalid {
            out.raise(Invalid);
        }
        out.measure(Invalid, || {
            if a.is_finite() && b.is_finite() {
                gap(b.abs(), lim.zero)
            } else {
                None
            }
        });
        return out;
    }
    if !lim.strictly_normal(r) {
        out.raised = fpu::reexec(op, ty, ops);
    }
    out.measure_result_range(r, lim);
    if op == Op::FDiv {
        out.measure(DivByZero, || if b.is_finite() { gap(b.abs(), lim.zero) } else { None });
    }
    out
}
