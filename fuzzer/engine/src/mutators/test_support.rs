//! Helpers shared by the mutator tests.

use super::layout::{canonical, read_le, write_le};
use libafl::state::{HasRand, NopState};
use libafl_bolts::rands::{Rand, StdRand};
use numfuzz_abi::Signature;

/// A minimal state with a fixed-seed random generator.
pub fn seeded_state<I>(seed: u64) -> NopState<I> {
    let mut state = NopState::new();
    state.rand_mut().set_seed(seed);
    state
}

/// `sig.size()` random bytes, with every f80 field made canonical.
pub fn random_canonical_input(sig: &Signature, seed: u64) -> Vec<u8> {
    let mut rand = StdRand::with_seed(seed);
    let mut bytes: Vec<u8> = (0..sig.size()).map(|_| rand.next() as u8).collect();
    for (i, field) in sig.fields().iter().enumerate() {
        if let Some(ty) = field.float_type() {
            let range = sig.range(i);
            let bits = canonical(ty, read_le(&bytes[range.clone()]));
            write_le(&mut bytes[range], bits);
        }
    }
    bytes
}

/// The fields whose bytes differ, each with the XOR of its old and new value.
pub fn field_changes(sig: &Signature, before: &[u8], after: &[u8]) -> Vec<(usize, u128)> {
    (0..sig.len())
        .filter_map(|i| {
            let r = sig.range(i);
            let diff = read_le(&before[r.clone()]) ^ read_le(&after[r]);
            (diff != 0).then_some((i, diff))
        })
        .collect()
}
