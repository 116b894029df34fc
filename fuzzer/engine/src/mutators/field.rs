//! The step every field mutator shares: fit the input to the signature, pick one field of the
//! right kind, and rewrite exactly that field's bytes.

use super::layout::{fit_to_signature, read_le, write_le};
use libafl::inputs::{HasMutatorBytes, ResizableMutator};
use libafl::mutators::MutationResult;
use libafl_bolts::rands::Rand;
use numfuzz_abi::{FieldType, Signature};
use std::num::NonZero;

/// A uniform index below `n` (`n > 0`).
pub(crate) fn below<R: Rand>(rand: &mut R, n: usize) -> usize {
    rand.below(NonZero::new(n).expect("choice among at least one item"))
}

/// 128 random bits.
pub(crate) fn random_u128<R: Rand>(rand: &mut R) -> u128 {
    (u128::from(rand.next()) << 64) | u128::from(rand.next())
}

/// Rewrites one randomly chosen field out of `fields` (indices into `sig`) with `rewrite`,
/// which gets the field's type and its little-endian value and returns the new value (bits
/// above the field's width are ignored).
///
/// Skipped, with the input untouched, when `fields` is empty; otherwise the input is first
/// made exactly `sig.size()` bytes long. Mutated when any byte changed (padding included).
pub(crate) fn rewrite_one_field<I, R>(
    rand: &mut R,
    input: &mut I,
    sig: &Signature,
    fields: &[usize],
    rewrite: impl FnOnce(&mut R, FieldType, u128) -> u128,
) -> MutationResult
where
    I: HasMutatorBytes + ResizableMutator<u8>,
    R: Rand,
{
    if fields.is_empty() {
        return MutationResult::Skipped;
    }
    let resized = fit_to_signature(input, sig);
    let field = fields[below(rand, fields.len())];
    let bytes = &mut input.mutator_bytes_mut()[sig.range(field)];
    let old = read_le(bytes);
    let new = rewrite(rand, sig.fields()[field], old);
    write_le(bytes, new);
    if resized || read_le(bytes) != old {
        MutationResult::Mutated
    } else {
        MutationResult::Skipped
    }
}
