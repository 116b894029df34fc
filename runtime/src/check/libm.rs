//! libm calls and their intrinsics, classified by C11 Annex F.
//!
//! - Invalid: a signalling NaN argument, or a NaN result from non-NaN arguments (every
//!   domain error of Annex F returns NaN).
//! - DivByZero: an infinite result from finite arguments at an exact pole (log(±0),
//!   log1p(-1), atanh(±1), pow(±0, y<0), lgamma at non-positive integers, tgamma(±0)).
//! - Overflow: an infinite result from finite arguments anywhere else, or the largest finite
//!   value where the arguments show the exact result is larger (exp, exp2, expm1, sinh, cosh,
//!   ldexp, scalbn under directed rounding).
//! - Underflow: a result below the smallest normal from finite arguments that is inexact
//!   (the exact tiny results — sin(±0), fmod, exact ldexp scaling, exp2 of an integer, exact
//!   powers, exact hypot, log(1), … — raise nothing).

use super::{Gaps, Limits, Operands, Outcome};
use num_bigint::BigUint;
use numfuzz_abi::decimal::{round_to_format, Rounding};
use numfuzz_abi::errbits::gap;
use numfuzz_abi::kind::ExceptionKind::{DivByZero, Invalid, Overflow, Underflow};
use numfuzz_abi::op::{FloatType, Op, OpShape};
use numfuzz_abi::value::{Float, FloatFormat};
use std::cmp::Ordering;

struct Call {
    op: Op,
    ty: FloatType,
    x: Float,
    /// Second float argument (pow, atan2, hypot, fmod, remainder).
    y: Option<Float>,
    /// Integer argument (ldexp, scalbn, powi).
    n: Option<i64>,
    r: Float,
}

impl Call {
    fn args_finite(&self) -> bool {
        self.x.is_finite() && self.y.is_none_or(|y| y.is_finite())
    }
    fn args_nan(&self) -> bool {
        self.x.is_nan() || self.y.is_some_and(|y| y.is_nan())
    }
    fn args_signaling(&self) -> bool {
        self.x.is_signaling() || self.y.is_some_and(|y| y.is_signaling())
    }
    fn eq(&self, v: Float, w: Float) -> bool {
        v.partial_cmp_num(w) == Some(Ordering::Equal)
    }
    fn lt(&self, v: Float, w: Float) -> bool {
        v.partial_cmp_num(w) == Some(Ordering::Less)
    }
}

fn is_pole(c: &Call, lim: &Limits) -> bool {
    let x = c.x;
    match c.op {
        Op::Log | Op::Log2 | Op::Log10 | Op::Tgamma => x.is_zero(),
        Op::Log1p => c.eq(x, lim.one.neg()),
        Op::Atanh => c.eq(x.abs(), lim.one),
        Op::Pow => x.is_zero() && c.y.is_some_and(|y| y.is_negative() && !y.is_zero()),
        Op::Powi => x.is_zero() && c.n.is_some_and(|n| n < 0),
        Op::Lgamma => x.is_integer() && (x.is_zero() || x.is_negative()),
        _ => false,
    }
}

/// `x^k` is exactly representable and equals `r`.
fn exact_power(ty: FloatType, x: Float, k: i128, r: Float) -> bool {
    if x.is_zero() {
        return r.is_zero();
    }
    let Some((mut m, mut e)) = x.decompose() else {
        return false;
    };
    let tz = m.trailing_zeros();
    m >>= tz;
    e += tz as i32;
    let negative = x.is_negative() && k % 2 != 0;
    let exp = e as i128 * k;
    if exp.abs() > 100_000 {
        return false;
    }
    let value = if m == 1 {
        BigUint::from(1u32)
    } else if k > 0 && k < 128 {
        let mut p = BigUint::from(1u32);
        for _ in 0..k {
            p *= m;
            if p.bits() > 64 {
                return false;
            }
        }
        p
    } else {
        return false;
    };
    round_to_format(ty, negative, &value, exp as i32, Rounding::Exact) == Some(r)
}

/// The tiny finite result `r` of finite arguments is the exact mathematical value.
fn exact_tiny(c: &Call, lim: &Limits) -> bool {
    let (x, r) = (c.x, c.r);
    if r.is_zero() {
        return match c.op {
            Op::Sin
            | Op::Tan
            | Op::Asin
            | Op::Atan
            | Op::Sinh
            | Op::Tanh
            | Op::Asinh
            | Op::Atanh
            | Op::Erf
            | Op::Expm1
            | Op::Log1p
            | Op::Cbrt
            | Op::Sqrt
            | Op::Ldexp
            | Op::Scalbn
            | Op::Pow
            | Op::Powi
            | Op::Atan2 => x.is_zero(),
            Op::Log | Op::Log2 | Op::Log10 | Op::Acosh | Op::Acos => c.eq(x, lim.one),
            Op::Lgamma => c.eq(x, lim.one) || c.eq(x, Float::pow2(c.ty, 1)),
            Op::Hypot => x.is_zero() && c.y.is_some_and(|y| y.is_zero()),
            Op::Fmod | Op::Remainder => true,
            _ => false,
        };
    }
    match c.op {
        Op::Fmod | Op::Remainder => true,
        Op::Ldexp | Op::Scalbn => match (x.decompose(), c.n) {
            (Some((m, e)), Some(n)) => {
                let e = (e as i64).saturating_add(n).clamp(-100_000, 100_000) as i32;
                round_to_format(c.ty, x.is_negative(), &BigUint::from(m), e, Rounding::Exact) == Some(r)
            }
            _ => false,
        },
        // exp2 of an integer is a power of two, exact when representable (subnormal range).
        Op::Exp2 => int_value(x).is_some_and(|k| (-100_000..0).contains(&k) && Float::pow2(c.ty, k as i32) == r),
        Op::Pow => {
            c.y.is_some_and(|y| y.is_integer() && int_value(y).is_some_and(|k| exact_power(c.ty, x, k, r)))
        }
        Op::Powi => c.n.is_some_and(|n| exact_power(c.ty, x, n as i128, r)),
        Op::Hypot => c.y.is_some_and(|y| exact_hypot(x, y, r)),
        _ => false,
    }
}

/// `r * r == x * x + y * y` exactly (hypot(x, 0) = |x|, and Pythagorean triples).
fn exact_hypot(x: Float, y: Float, r: Float) -> bool {
    let square = |v: Float| v.decompose().map(|(m, e)| (BigUint::from(m) * m, 2 * e as i64));
    let Some((rr, er)) = square(r) else { return false };
    let terms: Vec<(BigUint, i64)> = [x, y].into_iter().filter_map(square).collect();
    let base = terms.iter().map(|t| t.1).fold(er, i64::min);
    // Tiny results only: every exponent lies within a few thousand of the others.
    let at = |(m, e): &(BigUint, i64)| m << (e - base) as u64;
    terms.iter().map(at).sum::<BigUint>() == at(&(rr, er))
}

/// The exact result exceeds the largest finite value, known from the arguments alone for
/// these functions. Under directed rounding such a result is the largest finite value, not
/// infinity, and it still overflowed.
fn overflows_by_argument(c: &Call, lim: &Limits) -> bool {
    let x = c.x;
    match c.op {
        Op::Exp | Op::Expm1 => !c.lt(x, lim.exp_overflow),
        Op::Exp2 => !c.lt(x, lim.exp2_overflow),
        Op::Sinh | Op::Cosh => !c.lt(x.abs(), lim.sinh_overflow),
        Op::Ldexp | Op::Scalbn => match (x.decompose(), c.n) {
            (Some((m, e)), Some(n)) => {
                // floor(log2 |x|) + n > emax
                let log2 = e as i64 + 63 - m.leading_zeros() as i64;
                log2.saturating_add(n) > FloatFormat::of(c.ty).emax() as i64
            }
            _ => false,
        },
        _ => false,
    }
}

/// The value of an integral float if it fits an i128 (None for non-integers).
fn int_value(x: Float) -> Option<i128> {
    if !x.is_integer() {
        return None;
    }
    if x.is_zero() {
        return Some(0);
    }
    let (m, e) = x.decompose()?;
    let mag: i128 = if e >= 0 {
        if e > 60 {
            return None;
        }
        (m as i128) << e
    } else {
        (m >> (-e).min(63)) as i128
    };
    Some(if x.is_negative() { -mag } else { mag })
}

/// Nearest integer to a finite value, in the same format.
fn nearest_integer(x: Float) -> Float {
    if x.is_integer() {
        return x;
    }
    let (m, e) = x.decompose().expect("finite non-integer");
    let shift = (-e) as u32;
    let (int, round_up) = if shift >= 64 {
        (0u64, shift == 64 && m >> 63 == 1)
    } else {
        (m >> shift, (m >> (shift - 1)) & 1 == 1)
    };
    let n = int + round_up as u64;
    round_to_format(x.ty, x.is_negative(), &BigUint::from(n), 0, Rounding::NearestEven).expect("rounding never fails")
}

pub fn classify<G: Gaps>(op: Op, ty: FloatType, ops: &Operands) -> Outcome<G> {
    let lim = Limits::of(ty);
    let c = Call {
        op,
        ty,
        x: ops.a,
        y: matches!(op.shape(), OpShape::Binary).then_some(ops.b),
        n: matches!(op.shape(), OpShape::FloatInt).then_some(ops.i),
        r: ops.r,
    };
    let mut out = Outcome::new();
    // The common case: finite arguments and a result strictly inside the normal range raise
    // nothing (every flag of Annex F comes with a NaN, infinite, extreme or tiny result), so
    // only the distances remain to be measured.
    if lim.strictly_normal(c.r) && c.args_finite() {
        measure(&c, lim, &mut out);
        return out;
    }
    if c.args_signaling() || (c.r.is_nan() && !c.args_nan()) {
        out.raise(Invalid);
    }
    if c.r.is_infinite() && c.args_finite() {
        out.raise(if is_pole(&c, lim) { DivByZero } else { Overflow });
    }
    if c.args_finite() && c.eq(c.r.abs(), lim.max) && overflows_by_argument(&c, lim) {
        out.raise(Overflow);
    }
    if c.args_finite() && c.r.is_finite() && c.lt(c.r.abs(), lim.min_normal) && !exact_tiny(&c, lim) {
        out.raise(Underflow);
    }
    measure(&c, lim, &mut out);
    out
}

fn measure<G: Gaps>(c: &Call, lim: &Limits, out: &mut Outcome<G>) {
    out.measure(Overflow, || overflow_gap(c, lim));
    out.measure(Underflow, || underflow_gap(c, lim));
    out.measure(DivByZero, || pole_gap(c, lim));
    out.measure(Invalid, || invalid_gap(c, lim));
}

/// How far the call is from overflowing: the argument from its overflow threshold, or the
/// result from the largest finite value.
fn overflow_gap(c: &Call, lim: &Limits) -> Option<u128> {
    let (x, r) = (c.x, c.r);
    let finite_x = x.is_finite();
    match c.op {
        Op::Exp | Op::Expm1 if finite_x => gap(x, lim.exp_overflow),
        Op::Exp2 if finite_x => gap(x, lim.exp2_overflow),
        Op::Sinh | Op::Cosh if finite_x => gap(x.abs(), lim.sinh_overflow),
        Op::Pow | Op::Powi | Op::Hypot | Op::Ldexp | Op::Scalbn | Op::Tgamma | Op::Lgamma if r.is_finite() => {
            gap(r.abs(), lim.max)
        }
        _ => None,
    }
}

/// How far the call is from underflowing: the argument from its underflow threshold, or the
/// result from the least normal.
fn underflow_gap(c: &Call, lim: &Limits) -> Option<u128> {
    let (x, r) = (c.x, c.r);
    let finite_x = x.is_finite();
    match c.op {
        Op::Exp if finite_x => gap(x, lim.exp_underflow),
        Op::Exp2 if finite_x => gap(x, lim.exp2_underflow),
        Op::Sin
        | Op::Tan
        | Op::Asin
        | Op::Atan
        | Op::Atan2
        | Op::Sinh
        | Op::Tanh
        | Op::Asinh
        | Op::Atanh
        | Op::Erf
        | Op::Erfc
        | Op::Expm1
        | Op::Log1p
        | Op::Pow
        | Op::Powi
        | Op::Hypot
        | Op::Ldexp
        | Op::Scalbn
        | Op::Tgamma
            if r.is_finite() && !r.is_zero() =>
        {
            gap(r.abs(), lim.min_normal)
        }
        _ => None,
    }
}

/// How far a finite argument is from a pole of the function.
fn pole_gap(c: &Call, lim: &Limits) -> Option<u128> {
    let x = c.x;
    if !x.is_finite() {
        return None;
    }
    match c.op {
        Op::Log | Op::Log2 | Op::Log10 | Op::Tgamma => gap(x.abs(), lim.zero),
        Op::Log1p => gap(x, lim.one.neg()),
        Op::Atanh => gap(x.abs(), lim.one),
        Op::Pow if c.y.is_some_and(|y| y.is_finite() && y.is_negative()) => gap(x.abs(), lim.zero),
        Op::Powi if c.n.is_some_and(|n| n < 0) => gap(x.abs(), lim.zero),
        Op::Lgamma if x.is_negative() => gap(x, nearest_integer(x)),
        Op::Lgamma => gap(x, lim.zero),
        _ => None,
    }
}

/// How far finite arguments are from the edge of the function's domain.
fn invalid_gap(c: &Call, lim: &Limits) -> Option<u128> {
    let x = c.x;
    if !x.is_finite() {
        return None;
    }
    match c.op {
        Op::Sqrt | Op::Log | Op::Log2 | Op::Log10 => gap(x, lim.zero),
        Op::Log1p => gap(x, lim.one.neg()),
        Op::Acosh => gap(x, lim.one),
        Op::Asin | Op::Acos | Op::Atanh => gap(x.abs(), lim.one),
        Op::Sin | Op::Cos | Op::Tan => gap(x.abs(), lim.inf),
        Op::Fmod | Op::Remainder => match c.y {
            Some(y) if y.is_finite() => gap(y.abs(), lim.zero),
            _ => None,
        },
        Op::Pow => match c.y {
            Some(y) if y.is_finite() && !y.is_integer() => gap(x, lim.zero),
            _ => None,
        },
        Op::Tgamma if x.is_negative() => gap(x, nearest_integer(x)),
        _ => None,
    }
}
