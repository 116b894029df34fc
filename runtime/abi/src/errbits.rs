//! ErrBits: how far (in bits of error) an operation was from raising an exception.
//!
//! `ErrBits(O, E) = ceil(log2(1 + |ord(O) - ord(E)|))`, where `ord` is the position of a value
//! in the ordered sequence of its format ([`Float::ord`]) and `E` the boundary of the
//! exception kind for that operation. 0 means the exception happened; [`NOT_MEASURED`]
//! means the kind has no meaningful boundary for that operation (or it did not run).

use crate::value::Float;

/// ErrBits of a slot that was not measured.
pub const NOT_MEASURED: u8 = 0xFF;
/// ErrBits of a slot whose exception happened.
pub const RAISED: u8 = 0;
/// Largest ErrBits value of an exception that did not happen (f80 distances reach 80 bits).
pub const MAX_MEASURED: u8 = 0xFE;

/// `|ord(a) - ord(b)|` for two non-NaN values of the same format.
pub fn distance(a: Float, b: Float) -> u128 {
    debug_assert_eq!(a.ty, b.ty);
    a.ord().abs_diff(b.ord())
}

/// `ceil(log2(1 + d))`, which is the bit length of `d`.
pub fn bits(d: u128) -> u8 {
    ((128 - d.leading_zeros()) as u8).min(MAX_MEASURED)
}

/// The gap of a value that did *not* raise the exception: its distance to the boundary in
/// ordered-float positions, never 0 (0 is reserved for "it happened", even when the value
/// sits exactly on the boundary); `None` (not measured) with a NaN.
pub fn gap(value: Float, boundary: Float) -> Option<u128> {
    if value.is_nan() || boundary.is_nan() {
        return None;
    }
    Some(distance(value, boundary).max(1))
}

/// ErrBits of a gap: its bit length (0 only for a gap of 0), or [`NOT_MEASURED`].
pub fn of_gap(gap: Option<u128>) -> u8 {
    gap.map_or(NOT_MEASURED, bits)
}

/// ErrBits of a value that did *not* raise the exception: never 0 (see [`gap`]).
pub fn not_raised(value: Float, boundary: Float) -> u8 {
    of_gap(gap(value, boundary))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::FloatType;

    #[test]
    fn bits_is_ceil_log2_of_one_plus_d() {
        assert_eq!(bits(0), 0);
        assert_eq!(bits(1), 1);
        assert_eq!(bits(2), 2);
        assert_eq!(bits(3), 2);
        assert_eq!(bits(4), 3);
        assert_eq!(bits(7), 3);
        assert_eq!(bits(8), 4);
        assert_eq!(bits(u64::MAX as u128), 64);
        assert_eq!(bits(u128::MAX), 128);
        for d in 1u128..2000 {
            let exact = ((1 + d) as f64).log2().ceil() as u8;
            assert_eq!(bits(d), exact, "d={d}");
        }
    }

    #[test]
    fn distance_to_max_shrinks_toward_the_boundary() {
        let max = Float::max_finite(FloatType::F64, false);
        let far = not_raised(Float::from_f64(1.0), max);
        let nearer = not_raised(Float::from_f64(1e300), max);
        let nearest = not_raised(Float::from_f64(f64::MAX / 2.0), max);
        let next = not_raised(max.step(-1), max);
        assert!(
            far > nearer && nearer > nearest && nearest > next,
            "{far} {nearer} {nearest} {next}"
        );
        assert_eq!(next, 1);
        assert_eq!(not_raised(max, max), 1, "on the boundary but not raised is still 1");
        assert_eq!(far, 62);
    }

    #[test]
    fn distances_cross_zero_and_sign() {
        let min = Float::min_normal(FloatType::F32, false);
        assert_eq!(
            distance(Float::zero(FloatType::F32, true), Float::zero(FloatType::F32, false)),
            0
        );
        assert_eq!(
            distance(
                Float::min_subnormal(FloatType::F32, true),
                Float::min_subnormal(FloatType::F32, false)
            ),
            2
        );
        assert_eq!(distance(min, min.step(-1)), 1);
        assert_eq!(not_raised(Float::quiet_nan(FloatType::F32), min), NOT_MEASURED);
        assert_eq!(gap(min.step(-3), min), Some(3));
        assert_eq!(gap(min, min), Some(1), "not raised on the boundary is a gap of 1");
    }
}
