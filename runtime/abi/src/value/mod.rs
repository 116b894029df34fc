//! Bit-level view of f32, f64 and x87 f80 values, and typed input field values.
//!
//! Everything here works on integer bit patterns only: the runtime uses it inside checkers,
//! where any floating-point instruction could raise a flag the program did not raise.

pub mod decimal;

use crate::op::FloatType;
use std::cmp::Ordering;
use std::fmt;

/// IEEE class of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatClass {
    Zero,
    Subnormal,
    Normal,
    Infinite,
    /// `quiet` is false for a signalling NaN (and for x87 pseudo-NaNs and unnormals, which
    /// the FPU treats as invalid operands).
    Nan {
        quiet: bool,
    },
}

/// A floating-point value of one of the three formats, stored as its raw bits in the low
/// 32, 64 or 80 bits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Float {
    pub ty: FloatType,
    pub bits: u128,
}

/// FloatFormat parameters.
#[derive(Clone, Copy, Debug)]
pub struct FloatFormat {
    /// Significand precision in bits, including the leading bit.
    pub precision: u32,
    /// Exponent bias.
    pub bias: i32,
    /// Width of the exponent field.
    pub exp_bits: u32,
    /// Total width in bits.
    pub width: u32,
}

impl FloatFormat {
    pub const fn of(ty: FloatType) -> FloatFormat {
        match ty {
            FloatType::F32 => FloatFormat {
                precision: 24,
                bias: 127,
                exp_bits: 8,
                width: 32,
            },
            FloatType::F64 => FloatFormat {
                precision: 53,
                bias: 1023,
                exp_bits: 11,
                width: 64,
            },
            FloatType::F80 => FloatFormat {
                precision: 64,
                bias: 16383,
                exp_bits: 15,
                width: 80,
            },
        }
    }
    /// Smallest exponent of a normal number (unbiased).
    pub const fn emin(&self) -> i32 {
        1 - self.bias
    }
    /// Largest exponent of a finite number (unbiased).
    pub const fn emax(&self) -> i32 {
        self.bias
    }
    const fn exp_mask(&self) -> u32 {
        (1 << self.exp_bits) - 1
    }
    /// Bits of the stored fraction (without the leading bit, which f80 stores explicitly).
    const fn frac_bits(&self) -> u32 {
        match self.width {
            80 => 63,
            _ => self.precision - 1,
        }
    }
}

impl Float {
    pub const fn from_f32(x: f32) -> Float {
        Float {
            ty: FloatType::F32,
            bits: x.to_bits() as u128,
        }
    }
    pub const fn from_f64(x: f64) -> Float {
        Float {
            ty: FloatType::F64,
            bits: x.to_bits() as u128,
        }
    }
    /// An f80 from its 10 little-endian bytes (as stored in memory).
    pub fn from_f80_bytes(b: [u8; 10]) -> Float {
        let mut w = [0u8; 16];
        w[..10].copy_from_slice(&b);
        Float {
            ty: FloatType::F80,
            bits: u128::from_le_bytes(w),
        }
    }
    pub fn from_bits(ty: FloatType, bits: u128) -> Float {
        let width = FloatFormat::of(ty).width;
        Float {
            ty,
            bits: bits & ((1u128 << width) - 1),
        }
    }
    pub fn to_f80_bytes(self) -> [u8; 10] {
        let b = self.bits.to_le_bytes();
        let mut out = [0u8; 10];
        out.copy_from_slice(&b[..10]);
        out
    }
    /// The value as an f64 (only meaningful for `ty == F64`).
    pub fn as_f64(self) -> f64 {
        f64::from_bits(self.bits as u64)
    }
    pub fn as_f32(self) -> f32 {
        f32::from_bits(self.bits as u32)
    }

    pub fn format(self) -> FloatFormat {
        FloatFormat::of(self.ty)
    }

    pub fn is_negative(self) -> bool {
        let f = self.format();
        (self.bits >> (f.width - 1)) & 1 == 1
    }

    /// Biased exponent field.
    pub fn exp_field(self) -> u32 {
        let f = self.format();
        ((self.bits >> (f.width - 1 - f.exp_bits)) as u32) & f.exp_mask()
    }

    /// Stored fraction/mantissa field (for f80 including the explicit integer bit).
    pub fn mant_field(self) -> u64 {
        let f = self.format();
        let bits = if f.width == 80 { 64 } else { f.frac_bits() };
        (self.bits & ((1u128 << bits) - 1)) as u64
    }

    pub fn class(self) -> FloatClass {
        let f = self.format();
        let exp = self.exp_field();
        let mant = self.mant_field();
        let quiet_bit = 1u64 << (f.frac_bits() - 1);
        if f.width == 80 {
            let int_bit = mant >> 63 == 1;
            let frac = mant & !(1u64 << 63);
            if exp == f.exp_mask() {
                if !int_bit {
                    return FloatClass::Nan { quiet: false };
                }
                return if frac == 0 {
                    FloatClass::Infinite
                } else {
                    FloatClass::Nan {
                        quiet: frac & quiet_bit != 0,
                    }
                };
            }
            if exp == 0 {
                return if mant == 0 {
                    FloatClass::Zero
                } else {
                    FloatClass::Subnormal
                };
            }
            if !int_bit {
                // Unnormal: an invalid operand for the x87.
                return FloatClass::Nan { quiet: false };
            }
            return FloatClass::Normal;
        }
        if exp == f.exp_mask() {
            if mant == 0 {
                FloatClass::Infinite
            } else {
                FloatClass::Nan {
                    quiet: mant & quiet_bit != 0,
                }
            }
        } else if exp == 0 {
            if mant == 0 {
                FloatClass::Zero
            } else {
                FloatClass::Subnormal
            }
        } else {
            FloatClass::Normal
        }
    }

    pub fn is_nan(self) -> bool {
        matches!(self.class(), FloatClass::Nan { .. })
    }
    pub fn is_signaling(self) -> bool {
        matches!(self.class(), FloatClass::Nan { quiet: false })
    }
    pub fn is_infinite(self) -> bool {
        self.class() == FloatClass::Infinite
    }
    pub fn is_finite(self) -> bool {
        matches!(
            self.class(),
            FloatClass::Zero | FloatClass::Subnormal | FloatClass::Normal
        )
    }
    pub fn is_zero(self) -> bool {
        self.class() == FloatClass::Zero
    }

    pub fn abs(self) -> Float {
        let f = self.format();
        Float {
            ty: self.ty,
            bits: self.bits & !(1u128 << (f.width - 1)),
        }
    }
    /// The value with its sign flipped (also available as unary `-`; the method reads better
    /// in chains like `one.neg().step(1)`).
    #[allow(clippy::should_implement_trait)]
    pub fn neg(self) -> Float {
        let f = self.format();
        Float {
            ty: self.ty,
            bits: self.bits ^ (1u128 << (f.width - 1)),
        }
    }

    /// Finite non-zero value as `m * 2^e` with an integer significand `m`.
    pub fn decompose(self) -> Option<(u64, i32)> {
        let f = self.format();
        let exp = self.exp_field() as i32;
        let mant = self.mant_field();
        match self.class() {
            FloatClass::Zero | FloatClass::Infinite | FloatClass::Nan { .. } => None,
            FloatClass::Subnormal => Some((mant, f.emin() - (f.precision as i32 - 1))),
            FloatClass::Normal => {
                let m = if f.width == 80 {
                    mant
                } else {
                    mant | (1u64 << f.frac_bits())
                };
                Some((m, exp - f.bias - (f.precision as i32 - 1)))
            }
        }
    }

    /// Builds the value `(-1)^neg * m * 2^e` if it is exactly representable.
    pub fn compose(ty: FloatType, negative: bool, m: u64, e: i32) -> Option<Float> {
        decimal::round_to_format(ty, negative, &num_bigint::BigUint::from(m), e, decimal::Rounding::Exact)
    }

    /// Position in the ordered sequence of values of this format (Herbie's "bits of error"
    /// ordinal): consecutive values differ by 1, +0 and -0 are both 0. NaNs have no
    /// meaningful position.
    pub fn ord(self) -> i128 {
        let f = self.format();
        let mag: i128 = if f.width == 80 {
            let exp = self.exp_field() as i128;
            let mant = self.mant_field() as i128;
            if exp == 0 {
                mant
            } else {
                (exp << 63) | (mant & ((1i128 << 63) - 1))
            }
        } else {
            (self.bits & ((1u128 << (f.width - 1)) - 1)) as i128
        };
        if self.is_negative() {
            -mag
        } else {
            mag
        }
    }

    /// Inverse of [`Float::ord`] (positions past infinity saturate to infinity).
    pub fn from_ord(ty: FloatType, ord: i128) -> Float {
        let f = FloatFormat::of(ty);
        let negative = ord < 0;
        let inf = Float::infinity(ty, false).ord();
        let mag = ord.unsigned_abs().min(inf as u128);
        let bits = if f.width == 80 {
            let exp = mag >> 63;
            let frac = mag & ((1u128 << 63) - 1);
            if exp == 0 {
                frac
            } else {
                (exp << 64) | (1u128 << 63) | frac
            }
        } else {
            mag
        };
        let sign = if negative { 1u128 << (f.width - 1) } else { 0 };
        Float { ty, bits: bits | sign }
    }

    /// The next value toward +infinity (`steps` may be negative); saturates at ±infinity.
    pub fn step(self, steps: i64) -> Float {
        if self.is_nan() {
            return self;
        }
        let o = self.ord().saturating_add(steps as i128);
        let inf = Float::infinity(self.ty, false).ord();
        Float::from_ord(self.ty, o.clamp(-inf, inf))
    }

    pub fn zero(ty: FloatType, negative: bool) -> Float {
        Float::from_ord(ty, 0).with_sign(negative)
    }
    pub fn infinity(ty: FloatType, negative: bool) -> Float {
        let f = FloatFormat::of(ty);
        let exp = (f.exp_mask() as u128) << (f.width - 1 - f.exp_bits);
        let int_bit = if f.width == 80 { 1u128 << 63 } else { 0 };
        Float {
            ty,
            bits: exp | int_bit,
        }
        .with_sign(negative)
    }
    pub fn quiet_nan(ty: FloatType) -> Float {
        let inf = Float::infinity(ty, false);
        let f = FloatFormat::of(ty);
        Float {
            ty,
            bits: inf.bits | (1u128 << (f.frac_bits() - 1)),
        }
    }
    pub fn max_finite(ty: FloatType, negative: bool) -> Float {
        Float::from_ord(ty, Float::infinity(ty, false).ord() - 1).with_sign(negative)
    }
    pub fn min_normal(ty: FloatType, negative: bool) -> Float {
        let f = FloatFormat::of(ty);
        let one_exp = 1u128 << (f.width - 1 - f.exp_bits);
        let int_bit = if f.width == 80 { 1u128 << 63 } else { 0 };
        Float {
            ty,
            bits: one_exp | int_bit,
        }
        .with_sign(negative)
    }
    pub fn min_subnormal(ty: FloatType, negative: bool) -> Float {
        Float::from_ord(ty, 1).with_sign(negative)
    }
    /// `2^e`, saturating to zero/infinity outside the format's range.
    pub fn pow2(ty: FloatType, e: i32) -> Float {
        let f = FloatFormat::of(ty);
        if e > f.emax() {
            return Float::infinity(ty, false);
        }
        let lowest = f.emin() - (f.precision as i32 - 1);
        if e < lowest {
            return Float::zero(ty, false);
        }
        Float::compose(ty, false, 1, e).expect("power of two in range is exact")
    }
    pub fn one(ty: FloatType) -> Float {
        Float::pow2(ty, 0)
    }
    pub fn with_sign(self, negative: bool) -> Float {
        if self.is_negative() == negative {
            self
        } else {
            self.neg()
        }
    }

    /// True when the value is a finite integer.
    pub fn is_integer(self) -> bool {
        match self.class() {
            FloatClass::Zero => true,
            FloatClass::Subnormal | FloatClass::Normal => {
                let (m, e) = self.decompose().expect("finite");
                e >= 0 || (-e < 64 && m & ((1u64 << -e) - 1) == 0)
            }
            _ => false,
        }
    }

    /// True when the value is an odd integer.
    pub fn is_odd_integer(self) -> bool {
        match self.decompose() {
            Some((m, e)) if self.is_integer() => {
                if e > 0 {
                    false
                } else {
                    -e < 64 && (m >> -e) & 1 == 1
                }
            }
            _ => false,
        }
    }

    /// Numeric comparison (None if either is NaN). Values of different types are compared
    /// exactly.
    pub fn partial_cmp_num(self, other: Float) -> Option<Ordering> {
        if self.is_nan() || other.is_nan() {
            return None;
        }
        if self.ty == other.ty {
            return Some(self.ord().cmp(&other.ord()));
        }
        Some(decimal::cmp_exact(self, other))
    }

    /// Converts exactly to another format when the value is representable there (always
    /// the case when widening).
    pub fn convert_exact(self, ty: FloatType) -> Option<Float> {
        match self.class() {
            FloatClass::Zero => Some(Float::zero(ty, self.is_negative())),
            FloatClass::Infinite => Some(Float::infinity(ty, self.is_negative())),
            FloatClass::Nan { .. } => Some(Float::quiet_nan(ty)),
            FloatClass::Subnormal | FloatClass::Normal => {
                let (m, e) = self.decompose().expect("finite");
                Float::compose(ty, self.is_negative(), m, e)
            }
        }
    }

    /// Parses a decimal (`1.5e-3`), hexadecimal (`0x1.8p+1`), `inf` or `nan` literal,
    /// rounding to nearest-even.
    pub fn parse(ty: FloatType, s: &str) -> Result<Float, decimal::ParseFloatError> {
        decimal::parse(ty, s)
    }

    /// C99 `%a` style hexadecimal, normalised (`0x1.8p+1`, `-0x1p-1074`).
    pub fn to_hex(self) -> String {
        decimal::to_hex(self)
    }
}

impl std::ops::Neg for Float {
    type Output = Float;
    fn neg(self) -> Float {
        Float::neg(self)
    }
}

/// Shortest decimal that parses back to the same value (`709.78271289338511`, `1e-300`,
/// `inf`, `-0.0`, `NaN`).
impl fmt::Display for Float {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&decimal::to_shortest(*self))
    }
}

impl fmt::Debug for Float {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.ty, self)
    }
}

/// Type of one input field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldType {
    Float(FloatType),
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
}

impl FieldType {
    pub const ALL: [FieldType; 11] = [
        FieldType::Float(FloatType::F32),
        FieldType::Float(FloatType::F64),
        FieldType::Float(FloatType::F80),
        FieldType::I8,
        FieldType::I16,
        FieldType::I32,
        FieldType::I64,
        FieldType::U8,
        FieldType::U16,
        FieldType::U32,
        FieldType::U64,
    ];

    /// Code used by `numfuzz.h`'s typed readers to say which type they expect.
    pub fn code(self) -> u32 {
        FieldType::ALL.iter().position(|&t| t == self).expect("listed") as u32
    }

    pub fn from_code(code: u32) -> Option<FieldType> {
        FieldType::ALL.get(code as usize).copied()
    }

    pub fn name(self) -> &'static str {
        match self {
            FieldType::Float(t) => t.name(),
            FieldType::I8 => "i8",
            FieldType::I16 => "i16",
            FieldType::I32 => "i32",
            FieldType::I64 => "i64",
            FieldType::U8 => "u8",
            FieldType::U16 => "u16",
            FieldType::U32 => "u32",
            FieldType::U64 => "u64",
        }
    }

    /// Encoded size in bytes.
    pub fn size(self) -> usize {
        match self {
            FieldType::Float(FloatType::F32) => 4,
            FieldType::Float(FloatType::F64) => 8,
            FieldType::Float(FloatType::F80) => 10,
            FieldType::I8 | FieldType::U8 => 1,
            FieldType::I16 | FieldType::U16 => 2,
            FieldType::I32 | FieldType::U32 => 4,
            FieldType::I64 | FieldType::U64 => 8,
        }
    }

    pub fn is_signed(self) -> bool {
        matches!(self, FieldType::I8 | FieldType::I16 | FieldType::I32 | FieldType::I64)
    }

    pub fn float_type(self) -> Option<FloatType> {
        match self {
            FieldType::Float(t) => Some(t),
            _ => None,
        }
    }

    /// Smallest and largest value of an integer field.
    pub fn int_range(self) -> Option<(i128, i128)> {
        if self.float_type().is_some() {
            return None;
        }
        let bits = self.size() as u32 * 8;
        Some(if self.is_signed() {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        })
    }

    /// Decodes one field from exactly `self.size()` bytes.
    pub fn decode(self, bytes: &[u8]) -> Value {
        assert_eq!(bytes.len(), self.size());
        match self {
            FieldType::Float(FloatType::F32) => {
                Value::Float(Float::from_f32(f32::from_le_bytes(bytes.try_into().expect("4 bytes"))))
            }
            FieldType::Float(FloatType::F64) => {
                Value::Float(Float::from_f64(f64::from_le_bytes(bytes.try_into().expect("8 bytes"))))
            }
            FieldType::Float(FloatType::F80) => {
                Value::Float(Float::from_f80_bytes(bytes.try_into().expect("10 bytes")))
            }
            int => {
                let mut w = [0u8; 16];
                w[..bytes.len()].copy_from_slice(bytes);
                let raw = u128::from_le_bytes(w);
                let bits = int.size() as u32 * 8;
                let value = if int.is_signed() && (raw >> (bits - 1)) & 1 == 1 {
                    (raw | (u128::MAX << bits)) as i128
                } else {
                    raw as i128
                };
                Value::Int { ty: int, value }
            }
        }
    }
}

/// One decoded input field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Float(Float),
    Int { ty: FieldType, value: i128 },
}

impl Value {
    pub fn field_type(&self) -> FieldType {
        match self {
            Value::Float(f) => FieldType::Float(f.ty),
            Value::Int { ty, .. } => *ty,
        }
    }

    /// Hexadecimal rendering: C99 hex floats, two's-complement hex for integers.
    pub fn to_hex(&self) -> String {
        match self {
            Value::Float(f) => f.to_hex(),
            Value::Int { ty, value } => {
                let bits = ty.size() * 8;
                let mask = if bits == 128 { u128::MAX } else { (1u128 << bits) - 1 };
                format!("0x{:0width$x}", (*value as u128) & mask, width = ty.size() * 2)
            }
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Float(x) => x.fmt(f),
            Value::Int { value, .. } => value.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_of_specials() {
        for ty in FloatType::ALL {
            assert_eq!(Float::zero(ty, true).class(), FloatClass::Zero);
            assert_eq!(Float::infinity(ty, false).class(), FloatClass::Infinite);
            assert_eq!(Float::quiet_nan(ty).class(), FloatClass::Nan { quiet: true });
            assert_eq!(Float::min_subnormal(ty, false).class(), FloatClass::Subnormal);
            assert_eq!(Float::min_normal(ty, false).class(), FloatClass::Normal);
            assert_eq!(Float::max_finite(ty, false).class(), FloatClass::Normal);
            assert_eq!(Float::min_normal(ty, false).step(-1).class(), FloatClass::Subnormal);
            assert_eq!(Float::max_finite(ty, false).step(1), Float::infinity(ty, false));
        }
    }

    #[test]
    fn specials_match_rust_constants() {
        assert_eq!(Float::max_finite(FloatType::F64, false).as_f64(), f64::MAX);
        assert_eq!(Float::min_normal(FloatType::F64, false).as_f64(), f64::MIN_POSITIVE);
        assert_eq!(Float::min_subnormal(FloatType::F32, true).as_f32(), -f32::from_bits(1));
        assert_eq!(Float::one(FloatType::F32).as_f32(), 1.0);
        assert_eq!(
            Float::one(FloatType::F80).to_f80_bytes(),
            [0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0x3f]
        );
        assert_eq!(Float::pow2(FloatType::F64, -1074).as_f64(), f64::from_bits(1));
    }

    #[test]
    fn ord_is_monotone_and_consecutive() {
        for ty in FloatType::ALL {
            let vals = [
                Float::infinity(ty, true),
                Float::max_finite(ty, true),
                Float::one(ty).neg(),
                Float::min_normal(ty, true),
                Float::min_subnormal(ty, true),
                Float::zero(ty, false),
                Float::min_subnormal(ty, false),
                Float::min_normal(ty, false).step(-1),
                Float::min_normal(ty, false),
                Float::one(ty),
                Float::max_finite(ty, false),
                Float::infinity(ty, false),
            ];
            for w in vals.windows(2) {
                assert!(w[0].ord() < w[1].ord(), "{ty}: {:?} !< {:?}", w[0], w[1]);
            }
            assert_eq!(Float::zero(ty, true).ord(), Float::zero(ty, false).ord());
            assert_eq!(
                Float::min_normal(ty, false).ord() - Float::min_normal(ty, false).step(-1).ord(),
                1
            );
            let x = Float::one(ty);
            assert_eq!(Float::from_ord(ty, x.ord()), x);
        }
    }

    #[test]
    fn integers_and_parity() {
        let f = |x: f64| Float::from_f64(x);
        assert!(f(3.0).is_odd_integer());
        assert!(!f(4.0).is_odd_integer());
        assert!(f(4.0).is_integer());
        assert!(!f(0.5).is_integer());
        assert!(f(1e300).is_integer() && !f(1e300).is_odd_integer());
        assert!(f(-7.0).is_odd_integer());
        assert!(!f(f64::INFINITY).is_integer());
        let third = Float::parse(FloatType::F80, "0.3333333333333333").unwrap();
        assert!(!third.is_integer());
        assert!(Float::parse(FloatType::F80, "-9").unwrap().is_odd_integer());
    }

    #[test]
    fn exact_conversions() {
        let x = Float::from_f32(0.1f32);
        assert_eq!(x.convert_exact(FloatType::F64).unwrap().as_f64(), 0.1f32 as f64);
        assert!(Float::from_f64(0.1).convert_exact(FloatType::F32).is_none());
        let y = Float::from_f64(-1.5e-310);
        assert_eq!(
            y.convert_exact(FloatType::F80)
                .unwrap()
                .convert_exact(FloatType::F64)
                .unwrap(),
            y
        );
    }
}
