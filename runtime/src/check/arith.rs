//! fadd, fsub, fmul, fdiv, frem, fmuladd, fma.

use super::{Gaps, Limits, Operands, Outcome};
use crate::fpu;
use numfuzz_abi::errbits::{gap, NOT_MEASURED};
use numfuzz_abi::kind::ExceptionKind::{self, DivByZero, Invalid, Overflow, Underflow};
use numfuzz_abi::op::{FloatType, Op};
use numfuzz_abi::value::Float;

/// Bit-level constants of a binary interchange format, for the fast path.
struct Binary {
    sign: u64,
    min_normal: u64,
    max: u64,
    inf: u64,
    /// The significand's top bit: set in a quiet NaN, clear in a signalling one.
    quiet: u64,
}

const F32: Binary = Binary {
    sign: 1 << 31,
    min_normal: 0x0080_0000,
    max: 0x7f7f_ffff,
    inf: 0x7f80_0000,
    quiet: 1 << 22,
};
const F64: Binary = Binary {
    sign: 1 << 63,
    min_normal: 0x0010_0000_0000_0000,
    max: 0x7fef_ffff_ffff_ffff,
    inf: 0x7ff0_0000_0000_0000,
    quiet: 1 << 51,
};

/// `ceil(log2(1 + d))` for the fast path (distances of f32/f64 stay below 2^64).
#[inline]
fn bits(d: u64) -> u8 {
    (64 - d.leading_zeros()) as u8
}

/// The common cases, decided on raw f32/f64 bits without the generic model. No flag is
/// possible when the result is finite and below the largest finite in magnitude, and
/// - above the smallest normal (a tiny result rounded up to it may have underflowed), or
/// - the operation is a sum or difference (tiny ones are exact; not under flush-to-zero, which
///   turns them into zeros and raises Underflow), or
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
            // Tiny sums are exact, unless flush-to-zero made a zero of one (Underflow).
            Op::FAdd | Op::FSub => !fpu::flushes_tiny(),
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

/// The format of a `+ - * /` on f32/f64, which the raw-bits answers below are for.
#[inline]
fn basic_operation(op: Op, ty: FloatType) -> Option<&'static Binary> {
    let f = match ty {
        FloatType::F64 => &F64,
        FloatType::F32 => &F32,
        FloatType::F80 => return None,
    };
    matches!(op, Op::FAdd | Op::FSub | Op::FMul | Op::FDiv).then_some(f)
}

/// A `+ - * /` on f32/f64 that only carries a special operand along, decided on the raw bits:
/// a NaN result of NaN operands none of which signals, or an infinite result of an infinite
/// operand. Neither raises anything (see `known::propagated`), and a result that is not
/// finite has no distance to overflow or underflow; a quotient still measures its finite
/// divisor's distance to zero. A loop that has gone NaN or infinite reaches the runtime at
/// every operation of every step (GSL's hyperg_2F1 iterates 20,000 times on a NaN), so these
/// are answered before the generic model is built. `Some(errbits)` for such an operation,
/// `None` when it needs [`classify`].
#[inline]
pub fn carried(op: Op, ty: FloatType, a: u64, b: u64, r: u64) -> Option<[u8; 4]> {
    let f = basic_operation(op, ty)?;
    let (a, b, r) = (a & !f.sign, b & !f.sign, r & !f.sign);
    let nan = |x: u64| x > f.inf;
    let signalling = |x: u64| nan(x) && x & f.quiet == 0;
    let quietly_nan = nan(r) && (nan(a) || nan(b)) && !signalling(a) && !signalling(b);
    let infinite_of_infinite = r == f.inf && (a == f.inf || b == f.inf);
    if !quietly_nan && !infinite_of_infinite {
        return None;
    }
    let mut errbits = [NOT_MEASURED; 4];
    if op == Op::FDiv && b < f.inf {
        errbits[DivByZero as usize] = bits(b).max(1);
    }
    Some(errbits)
}

/// The kind a special result of a `+ - * /` on f32/f64 would raise again if its site has
/// raised it (the runtime's `recurring`), read off the raw bits, and whether both operands
/// were finite: Underflow for a zero or subnormal, Invalid for a NaN, Overflow for an infinite
/// sum, difference or product, DivByZero for an infinite quotient by zero. `None` for other
/// results, operations and formats, which take the generic path. A recurrence that underflows
/// at every step reaches the runtime at every step; this answers it without building operands.
#[inline]
pub fn special_kind(op: Op, ty: FloatType, a: u64, b: u64, r: u64) -> Option<(ExceptionKind, bool)> {
    let f = basic_operation(op, ty)?;
    let (a, b, r) = (a & !f.sign, b & !f.sign, r & !f.sign);
    let kind = match r {
        r if r < f.min_normal => Underflow,
        r if r > f.inf => Invalid,
        r if r == f.inf => match op {
            Op::FDiv if b == 0 => DivByZero,
            Op::FDiv => return None,
            _ => Overflow,
        },
        _ => return None,
    };
    Some((kind, a < f.inf && b < f.inf))
}

/// The magnitude of an x86_fp80 zero, subnormal or normal as its ordered position (what
/// [`Float::ord`](numfuzz_abi::value::Float::ord) gives for a non-negative value), read off
/// the bits; `None` for infinities, NaNs, pseudo-denormals and unnormals, which the full
/// classification handles.
#[inline]
fn f80_magnitude(x: Float) -> Option<u128> {
    const FRACTION: u64 = (1 << 63) - 1;
    let exp = (x.bits >> 64) as u32 & 0x7fff;
    let mant = x.bits as u64;
    let integer_bit = mant >> 63 == 1;
    match exp {
        0 if !integer_bit => Some(u128::from(mant)),
        0 | 0x7fff => None,
        _ if integer_bit => Some((u128::from(exp) << 63) | u128::from(mant & FRACTION)),
        _ => None,
    }
}

/// x86_fp80 (which has no inline path, so every operation reaches the runtime): the same
/// cases as [`fast`], decided on the bits. Ordered positions: the smallest normal is 2^63, the
/// largest finite 0x7ffe·2^63 + 2^63 − 1.
#[inline]
fn fast_f80(op: Op, ops: &Operands) -> Option<Outcome> {
    const MIN_NORMAL: u128 = 1 << 63;
    const MAX: u128 = (0x7ffe << 63) | ((1 << 63) - 1);
    const INF_BITS: u128 = 0x7fff_8000_0000_0000_0000;
    if !matches!(op, Op::FAdd | Op::FSub | Op::FMul | Op::FDiv | Op::FMulAdd | Op::Fma) {
        return None;
    }
    let r = f80_magnitude(ops.r)?;
    if r >= MAX {
        return None;
    }
    let abs_bits = |x: Float| x.bits & !(1u128 << 79);
    let is_zero = |x: Float| abs_bits(x) == 0;
    let flagless = r > MIN_NORMAL
        || match op {
            Op::FAdd | Op::FSub => true,
            Op::FMul => r == 0 && (is_zero(ops.a) || is_zero(ops.b)),
            Op::FDiv => r == 0 && (is_zero(ops.a) || abs_bits(ops.b) == INF_BITS),
            _ => false,
        };
    if !flagless {
        return None;
    }
    let underflow = match r {
        0 => NOT_MEASURED,
        r => bits128(r.abs_diff(MIN_NORMAL).max(1)),
    };
    let mut errbits = [NOT_MEASURED, NOT_MEASURED, bits128(MAX - r), underflow];
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
        let known = super::known::propagated(op, a, b, r)
            .or_else(|| super::known::underflowed(op, ty, a, b, r).map(|inexact| u8::from(inexact) << Underflow as u8));
        out.raised = known.unwrap_or_else(|| fpu::reexec(op, ty, ops));
    }
    out.measure_result_range(r, lim);
    if op == Op::FDiv {
        out.measure(DivByZero, || if b.is_finite() { gap(b.abs(), lim.zero) } else { None });
    }
    out
}
