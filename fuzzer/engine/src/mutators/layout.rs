//! Where a field lives in an input, and where sign, exponent and mantissa live in a float.
//!
//! Float fields are handled as their raw bits in the low 32, 64 or 80 bits of a `u128`, read
//! little-endian from exactly the field's bytes, so a mutation can never reach a neighbour.

use libafl::inputs::{HasMutatorBytes, ResizableMutator};
use numfuzz_abi::value::FloatFormat;
use numfuzz_abi::{FieldType, FloatType, Signature};

/// The explicit integer bit of an x87 f80 significand.
pub const F80_INTEGER_BIT: u128 = 1 << 63;

/// Bit positions of sign, exponent and mantissa in one float format.
///
/// The mantissa is the stored fraction: 23 bits for f32, 52 for f64 and the 63 fraction bits
/// of f80. The f80 integer bit is not part of it: it is redundant with the exponent in every
/// value an FPU produces, and the operators keep it canonical (see [`canonical`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FloatLayout {
    /// Total width in bits (32, 64, 80).
    pub width: u32,
    /// Width of the biased exponent field.
    pub exp_bits: u32,
    /// Position of the exponent field's lowest bit.
    pub exp_shift: u32,
    /// Width of the mantissa (fraction) field, which starts at bit 0.
    pub mant_bits: u32,
}

impl FloatLayout {
    pub const fn of(ty: FloatType) -> FloatLayout {
        let f = FloatFormat::of(ty);
        let mant_bits = match ty {
            FloatType::F80 => 63,
            _ => f.precision - 1,
        };
        FloatLayout {
            width: f.width,
            exp_bits: f.exp_bits,
            exp_shift: f.width - 1 - f.exp_bits,
            mant_bits,
        }
    }

    pub const fn sign_mask(&self) -> u128 {
        1 << (self.width - 1)
    }

    /// Largest biased exponent (all ones: infinities and NaNs).
    pub const fn exp_max(&self) -> u32 {
        (1 << self.exp_bits) - 1
    }

    pub const fn exp_mask(&self) -> u128 {
        (self.exp_max() as u128) << self.exp_shift
    }

    pub const fn mant_mask(&self) -> u128 {
        (1 << self.mant_bits) - 1
    }

    pub const fn exp(&self, bits: u128) -> u32 {
        ((bits >> self.exp_shift) as u32) & self.exp_max()
    }

    pub const fn with_exp(&self, bits: u128, exp: u32) -> u128 {
        (bits & !self.exp_mask()) | (((exp & self.exp_max()) as u128) << self.exp_shift)
    }

    pub const fn mant(&self, bits: u128) -> u128 {
        bits & self.mant_mask()
    }

    pub const fn with_mant(&self, bits: u128, mant: u128) -> u128 {
        (bits & !self.mant_mask()) | (mant & self.mant_mask())
    }
}

/// Sets the f80 integer bit to what the exponent implies (1 unless the exponent is 0), so an
/// operator never turns a value into an unnormal or pseudo-denormal, which the x87 rejects as
/// an invalid operand no matter what the code under test does. f32/f64 bits pass unchanged.
pub const fn canonical(ty: FloatType, bits: u128) -> u128 {
    match ty {
        FloatType::F80 => {
            if FloatLayout::of(ty).exp(bits) == 0 {
                bits & !F80_INTEGER_BIT
            } else {
                bits | F80_INTEGER_BIT
            }
        }
        _ => bits,
    }
}

/// Reads up to 16 little-endian bytes as an unsigned integer.
pub fn read_le(bytes: &[u8]) -> u128 {
    let mut w = [0u8; 16];
    w[..bytes.len()].copy_from_slice(bytes);
    u128::from_le_bytes(w)
}

/// Writes the low `bytes.len()` bytes of `value` little-endian.
pub fn write_le(bytes: &mut [u8], value: u128) {
    let n = bytes.len();
    bytes.copy_from_slice(&value.to_le_bytes()[..n]);
}

/// Makes the input exactly as long as the signature: a short input is zero-padded (which is
/// how the harness reads it anyway) and a long one truncated (bytes past the signature never
/// reach the harness, so keeping them only makes corpus entries differ without reason).
/// Returns whether the length changed.
pub fn fit_to_signature<I>(input: &mut I, sig: &Signature) -> bool
where
    I: HasMutatorBytes + ResizableMutator<u8>,
{
    let size = sig.size();
    if input.mutator_bytes().len() == size {
        return false;
    }
    input.resize(size, 0);
    true
}

/// Indices of the signature's fields that `keep` selects.
pub fn field_indices(sig: &Signature, keep: impl Fn(FieldType) -> bool) -> Vec<usize> {
    (0..sig.len()).filter(|&i| keep(sig.fields()[i])).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_the_ieee_formats() {
        let f32l = FloatLayout::of(FloatType::F32);
        assert_eq!(f32l.sign_mask(), 0x8000_0000);
        assert_eq!(f32l.exp_mask(), 0x7f80_0000);
        assert_eq!(f32l.mant_mask(), 0x007f_ffff);
        let f64l = FloatLayout::of(FloatType::F64);
        assert_eq!(f64l.sign_mask(), 0x8000_0000_0000_0000);
        assert_eq!(f64l.exp_mask(), 0x7ff0_0000_0000_0000);
        assert_eq!(f64l.mant_mask(), 0x000f_ffff_ffff_ffff);
        let f80l = FloatLayout::of(FloatType::F80);
        assert_eq!(f80l.sign_mask(), 1 << 79);
        assert_eq!(f80l.exp_mask(), 0x7fff << 64);
        assert_eq!(f80l.mant_mask(), 0x7fff_ffff_ffff_ffff);
        // Sign, exponent, mantissa and (f80) integer bit partition the width.
        for ty in FloatType::ALL {
            let l = FloatLayout::of(ty);
            let int_bit = if ty == FloatType::F80 { F80_INTEGER_BIT } else { 0 };
            let parts = [l.sign_mask(), l.exp_mask(), l.mant_mask(), int_bit];
            assert_eq!(parts.iter().fold(0, |a, p| a | p), (1u128 << l.width) - 1, "{ty}");
            assert_eq!(parts.iter().map(|p| p.count_ones()).sum::<u32>(), l.width, "{ty}");
        }
    }

    #[test]
    fn f80_integer_bit_follows_the_exponent() {
        let one = 0x3fffu128 << 64 | F80_INTEGER_BIT;
        assert_eq!(canonical(FloatType::F80, one & !F80_INTEGER_BIT), one);
        assert_eq!(canonical(FloatType::F80, F80_INTEGER_BIT | 5), 5);
        assert_eq!(canonical(FloatType::F64, 0x7ff0_0000_0000_0000), 0x7ff0_0000_0000_0000);
    }
}
