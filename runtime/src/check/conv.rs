//! fptosi, fptoui (Invalid when NaN or out of the integer range) and fptrunc.

use super::{Gaps, Limits, Operands, Outcome};
use crate::fpu;
use num_bigint::BigUint;
use numfuzz_abi::decimal::{round_to_format, Rounding};
use numfuzz_abi::errbits::gap;
use numfuzz_abi::kind::ExceptionKind::Invalid;
use numfuzz_abi::op::FloatType;
use numfuzz_abi::value::Float;

/// `trunc(x)` as (negative, magnitude), `None` for NaN/inf or magnitudes ≥ 2^128.
fn trunc(x: Float) -> Option<(bool, u128)> {
    if x.is_zero() {
        return Some((false, 0));
    }
    let (m, e) = x.decompose()?;
    let mag = if e >= 0 {
        if e + (64 - m.leading_zeros() as i32) > 128 {
            return None;
        }
        (m as u128) << e
    } else if -e >= 64 {
        0
    } else {
        (m >> -e) as u128
    };
    Some((x.is_negative(), mag))
}

/// Range of an integer of `bits` bits as (largest negative magnitude, largest positive).
fn range(signed: bool, bits: u32) -> (u128, u128) {
    let bits = bits.min(128);
    let full = if bits == 128 { u128::MAX } else { (1u128 << bits) - 1 };
    if signed {
        (1u128 << (bits - 1), full >> 1)
    } else {
        (0, full)
    }
}

fn from_int(ty: FloatType, negative: bool, mag: u128) -> Float {
    round_to_format(ty, negative, &BigUint::from(mag), 0, Rounding::NearestEven).expect("rounding never fails")
}

pub fn to_int<G: Gaps>(signed: bool, bits: u8, x: Float) -> Outcome<G> {
    let bits = (bits as u32).max(1);
    let (neg_max, pos_max) = range(signed, bits);
    let mut out = Outcome::new();
    let valid = match trunc(x) {
        None => false,
        Some((false, m)) => m <= pos_max,
        Some((true, m)) => m <= neg_max,
    };
    if !valid {
        out.raise(Invalid);
    }
    out.measure(Invalid, || {
        if !x.is_finite() {
            return None;
        }
        // The first invalid value on x's side of zero.
        let first_invalid = if x.is_negative() {
            let v = from_int(x.ty, true, neg_max + 1);
            if trunc(v).is_some_and(|(_, m)| m <= neg_max) {
                v.step(-1)
            } else {
                v
            }
        } else {
            let v = from_int(x.ty, false, pos_max.saturating_add(1));
            if trunc(v).is_some_and(|(_, m)| m <= pos_max) {
                v.step(1)
            } else {
                v
            }
        };
        gap(x, first_invalid)
    });
    out
}

pub fn narrow<G: Gaps>(src: FloatType, dst: FloatType, ops: &Operands) -> Outcome<G> {
    let lim = Limits::of(dst);
    let mut out = Outcome::new();
    // The narrowed result travels widened back to the source type (exactly).
    let Some(r) = ops.r.convert_exact(dst) else { return out };
    if !lim.strictly_normal(r) {
        out.raised = fpu::reexec_narrow(src, dst, ops.a);
    }
    out.measure_result_range(r, lim);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::NoGaps;

    /// The checker as normal runs use it (no gaps kept).
    fn to_int(signed: bool, bits: u8, x: Float) -> Outcome {
        super::to_int::<NoGaps>(signed, bits, x)
    }

    #[test]
    fn int_ranges() {
        let f = |x: f64| Float::from_f64(x);
        assert!(!to_int(true, 32, f(2147483647.9)).raised(Invalid));
        assert!(to_int(true, 32, f(2147483648.0)).raised(Invalid));
        assert!(!to_int(true, 32, f(-2147483648.9)).raised(Invalid));
        assert!(to_int(true, 32, f(-2147483649.0)).raised(Invalid));
        assert!(to_int(true, 32, f(f64::NAN)).raised(Invalid));
        assert!(to_int(true, 64, f(1e300)).raised(Invalid));
        assert!(!to_int(false, 32, f(-0.99)).raised(Invalid));
        assert!(to_int(false, 32, f(-1.0)).raised(Invalid));
        assert!(!to_int(false, 64, f(18446744073709549568.0)).raised(Invalid));
        assert!(to_int(false, 64, f(18446744073709551616.0)).raised(Invalid));
        assert!(!to_int(true, 8, f(127.5)).raised(Invalid));
        assert!(to_int(true, 8, f(128.0)).raised(Invalid));
    }

    #[test]
    fn int_errbits_shrink_toward_the_limit() {
        let eb = |x: f64| to_int(true, 32, Float::from_f64(x)).errbits[Invalid as usize];
        assert!(eb(1.0) > eb(1e9) && eb(1e9) > eb(2147483647.0));
        assert_eq!(eb(2147483648.0), 0);
        assert!(eb(-2147483648.5) >= 1);
        assert_eq!(eb(-2147483649.0), 0);
        let f32_eb = to_int(true, 32, Float::from_f32(2147483520.0)).errbits[Invalid as usize];
        assert_eq!(f32_eb, 1, "the next f32 above 2147483520 is 2^31, invalid");
    }
}
