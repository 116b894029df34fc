//! The flags of an arithmetic operation whose result is not a normal number, told from the
//! operands' bits instead of running the operation again, where that is certain.
//!
//! Re-executing costs a hundred cycles or more where the FPU handles subnormals in microcode,
//! and a recurrence that underflows, or carries a NaN or an infinity along, does it at every
//! step (more than half of a precise run's time on GSL's Bessel continued fractions).
//!
//! A NaN operand gives a NaN and raises Invalid only when it is signalling; an infinite result
//! of an infinite operand raises nothing (`inf * 0` and `inf - inf` give NaN, not an infinity).
//!
//! With finite non-zero
//! operands and a zero or subnormal result nothing but Underflow can be raised, and Underflow
//! is raised exactly when the result is inexact (x86's masked underflow: tiny and inexact). The
//! exact value is `ma·mb·2^(ea+eb)` for a product of `ma·2^ea` and `mb·2^eb`, which the format
//! holds in its subnormal range exactly when it is a multiple of the smallest subnormal; a
//! quotient is exact when `r·b` is `a`. Both are integer arithmetic. Flush-to-zero and
//! denormals-are-zero change what the FPU computes there: with either set (or where the mode
//! cannot be read), `None`, and the caller re-executes.

use numfuzz_abi::kind::ExceptionKind;
use numfuzz_abi::op::{FloatType, Op};
use numfuzz_abi::value::{Float, FloatClass};

/// `Some(inexact)` for a float or double `FMul`/`FDiv` of finite non-zero operands whose result
/// `r` is zero or subnormal (inexact means Underflow was raised); `None` when the operation must
/// be re-executed to tell.
pub fn underflowed(op: Op, ty: FloatType, a: Float, b: Float, r: Float) -> Option<bool> {
    if !matches!(ty, FloatType::F32 | FloatType::F64) || !matches!(r.class(), FloatClass::Zero | FloatClass::Subnormal)
    {
        return None;
    }
    let (ma, ea) = parts(a)?;
    let (mb, eb) = parts(b)?;
    if crate::fpu::flushes_tiny() {
        return None;
    }
    let quantum = if ty == FloatType::F64 { -1074 } else { -149 };
    match op {
        Op::FMul => {
            let p = ma as u128 * mb as u128;
            Some((p.trailing_zeros() as i32) + ea + eb < quantum)
        }
        Op::FDiv => {
            let Some((mr, er)) = parts(r) else {
                // A zero quotient of non-zero operands lost all of it.
                return Some(true);
            };
            Some(!same_value(mr as u128 * mb as u128, er + eb, ma as u128, ea))
        }
        _ => None,
    }
}

/// `Some(raised)` for `+ - * /` with a NaN operand, or an infinite result of an infinite
/// operand (for floats, doubles and long doubles alike); `None` otherwise.
pub fn propagated(op: Op, a: Float, b: Float, r: Float) -> Option<u8> {
    if !matches!(op, Op::FAdd | Op::FSub | Op::FMul | Op::FDiv) {
        return None;
    }
    if a.is_nan() || b.is_nan() {
        let signalling = a.is_signaling() || b.is_signaling();
        return Some(u8::from(signalling) << ExceptionKind::Invalid as u8);
    }
    (r.is_infinite() && (a.is_infinite() || b.is_infinite())).then_some(0)
}

/// `x` as `m·2^e` with an integer `m` (None for zeros, infinities and NaNs).
fn parts(x: Float) -> Option<(u64, i32)> {
    let (fraction_bits, exponent_mask, bias) = match x.ty {
        FloatType::F64 => (52, 0x7ff, 1075),
        FloatType::F32 => (23, 0xff, 150),
        FloatType::F80 => return None,
    };
    let bits = x.bits as u64;
    let exponent = ((bits >> fraction_bits) & exponent_mask) as i32;
    let fraction = bits & ((1 << fraction_bits) - 1);
    match x.class() {
        FloatClass::Normal => Some((fraction | 1 << fraction_bits, exponent - bias)),
        FloatClass::Subnormal => Some((fraction, 1 - bias)),
        _ => None,
    }
}

/// Whether `p·2^ep == q·2^eq` (p, q < 2^107).
fn same_value(p: u128, ep: i32, q: u128, eq: i32) -> bool {
    let shift = ep - eq;
    let (small, large, shift) = if shift >= 0 { (p, q, shift) } else { (q, p, -shift) };
    // small·2^shift == large
    shift < 128 && small.leading_zeros() as i32 >= shift && small << shift == large
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Operands;
    use numfuzz_abi::kind::ExceptionKind::Underflow;

    /// The FPU's own answer, re-executing the operation.
    fn fpu_underflow(op: Op, ty: FloatType, a: Float, b: Float) -> (Float, bool) {
        let r = match (ty, op) {
            (FloatType::F64, Op::FMul) => Float::from_f64(std::hint::black_box(a.as_f64()) * b.as_f64()),
            (FloatType::F64, _) => Float::from_f64(std::hint::black_box(a.as_f64()) / b.as_f64()),
            (_, Op::FMul) => Float::from_f32(std::hint::black_box(a.as_f32()) * b.as_f32()),
            _ => Float::from_f32(std::hint::black_box(a.as_f32()) / b.as_f32()),
        };
        let ops = Operands {
            a,
            b,
            c: Float::zero(ty, false),
            i: 0,
            r,
        };
        (r, crate::fpu::reexec(op, ty, &ops) & (1 << Underflow as u8) != 0)
    }

    #[test]
    fn tiny_products_and_quotients_agree_with_the_fpu() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut told = [0usize; 2];
        for k in 0..400_000 {
            let op = if k % 2 == 0 { Op::FMul } else { Op::FDiv };
            let ty = if k % 4 < 2 { FloatType::F64 } else { FloatType::F32 };
            // Operands whose exact result lands near or below the smallest normal: few
            // significant bits often (exact results), any bits otherwise.
            let (a, b) = if ty == FloatType::F64 {
                let x = next();
                let keep = if x & 1 == 0 { !0u64 << (x >> 1 & 63).min(52) } else { !0 };
                let ea = (x >> 8) % 1100;
                let a = f64::from_bits(((ea.max(1)) << 52 | next() >> 12) & keep & !(1 << 63));
                let target = -1074.0 + (next() % 60) as f64;
                let want = 2f64.powf(target - a.log2());
                let b = if op == Op::FMul { want } else { 1.0 / want };
                (Float::from_f64(a), Float::from_f64(f64::from_bits(b.to_bits() & keep)))
            } else {
                let x = next();
                let keep = if x & 1 == 0 { !0u32 << (x >> 1 & 31).min(23) } else { !0 };
                let ea = ((x >> 8) % 250) as u32;
                let a = f32::from_bits(((ea.max(1)) << 23 | (next() >> 41) as u32) & keep & !(1 << 31));
                let target = -149.0 + (next() % 30) as f32;
                let want = 2f32.powf(target - a.log2());
                let b = if op == Op::FMul { want } else { 1.0 / want };
                (Float::from_f32(a), Float::from_f32(f32::from_bits(b.to_bits() & keep)))
            };
            let (r, fpu) = fpu_underflow(op, ty, a, b);
            if let Some(told_inexact) = underflowed(op, ty, a, b, r) {
                assert_eq!(told_inexact, fpu, "{op:?} {ty:?} {a:?} {b:?} = {r:?}");
                told[usize::from(fpu)] += 1;
            }
        }
        assert!(
            told[0] > 1000 && told[1] > 1000,
            "exact and inexact cases both met: {told:?}"
        );
    }

    #[test]
    fn nans_and_infinities_carried_along_agree_with_the_fpu() {
        let quiet = f64::NAN;
        let signalling = f64::from_bits(0x7FF0_0000_0000_0001);
        let values = [
            quiet,
            -quiet,
            signalling,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
            1.5,
            1e-310,
            1e308,
        ];
        let mut told = 0;
        for op in [Op::FAdd, Op::FSub, Op::FMul, Op::FDiv] {
            for &x in &values {
                for &y in &values {
                    let (a, b) = (Float::from_f64(x), Float::from_f64(y));
                    let x = std::hint::black_box(x);
                    let r = Float::from_f64(match op {
                        Op::FAdd => x + y,
                        Op::FSub => x - y,
                        Op::FMul => x * y,
                        _ => x / y,
                    });
                    let ops = Operands {
                        a,
                        b,
                        c: Float::from_f64(0.0),
                        i: 0,
                        r,
                    };
                    if let Some(raised) = propagated(op, a, b, r) {
                        assert_eq!(raised, crate::fpu::reexec(op, FloatType::F64, &ops), "{op:?} {x} {y}");
                        told += 1;
                    }
                }
            }
        }
        assert!(told > 150, "{told}");
    }

    #[test]
    fn what_is_not_a_tiny_result_of_finite_operands_is_left_to_the_fpu() {
        let f = Float::from_f64;
        assert_eq!(underflowed(Op::FMul, FloatType::F64, f(2.0), f(3.0), f(6.0)), None);
        assert_eq!(underflowed(Op::FMul, FloatType::F64, f(0.0), f(3.0), f(0.0)), None);
        assert_eq!(
            underflowed(Op::FAdd, FloatType::F64, f(1e-310), f(1e-310), f(2e-310)),
            None
        );
        assert_eq!(
            underflowed(Op::FDiv, FloatType::F64, f(1e-300), f(f64::INFINITY), f(0.0)),
            None
        );
        assert_eq!(
            underflowed(Op::FDiv, FloatType::F64, f(1e-300), f(1e300), f(0.0)),
            Some(true)
        );
        assert_eq!(
            underflowed(Op::FMul, FloatType::F64, f(5e-324), f(2.0), f(1e-323)),
            Some(false)
        );
    }
}
