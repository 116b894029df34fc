//! Integer-field operators: small arithmetic, interesting values, bit flips.
//!
//! Values are handled as the field's two's-complement bits; arithmetic wraps at the field's
//! width, as the harness's integer type would.

use super::field::{below, rewrite_one_field};
use super::layout::field_indices;
use super::values::int_interesting_values;
use libafl::corpus::CorpusId;
use libafl::inputs::{HasMutatorBytes, ResizableMutator};
use libafl::mutators::{MutationResult, Mutator};
use libafl::state::HasRand;
use libafl::Error;
use libafl_bolts::rands::Rand;
use libafl_bolts::Named;
use numfuzz_abi::{FieldType, Signature};
use std::borrow::Cow;
use std::sync::Arc;

/// Largest k of [`IntArith`] (AFL's ARITH_MAX).
pub const INT_ARITH_MAX: u32 = 35;

/// One operation on the raw bits of an integer field.
pub trait IntOp {
    /// Mutator name, e.g. `IntArith`.
    fn name(&self) -> String;
    /// The new bits for a field of integer type `ty` holding `bits` (its low 8–64 bits).
    fn apply<R: Rand>(&self, rand: &mut R, ty: FieldType, bits: u128) -> u128;
}

/// A LibAFL mutator applying one [`IntOp`] to one random integer field of the signature.
/// Skipped when the signature has no integer field.
#[derive(Debug, Clone)]
pub struct IntFieldMutator<O> {
    sig: Arc<Signature>,
    int_fields: Vec<usize>,
    op: O,
    name: Cow<'static, str>,
}

impl<O: IntOp> IntFieldMutator<O> {
    pub fn new(sig: &Arc<Signature>, op: O) -> Self {
        IntFieldMutator {
            sig: Arc::clone(sig),
            int_fields: field_indices(sig, |t| t.float_type().is_none()),
            name: Cow::Owned(op.name()),
            op,
        }
    }
}

impl<O> Named for IntFieldMutator<O> {
    fn name(&self) -> &Cow<'static, str> {
        &self.name
    }
}

impl<I, S, O> Mutator<I, S> for IntFieldMutator<O>
where
    I: HasMutatorBytes + ResizableMutator<u8>,
    S: HasRand,
    O: IntOp,
{
    fn mutate(&mut self, state: &mut S, input: &mut I) -> Result<MutationResult, Error> {
        let op = &self.op;
        Ok(rewrite_one_field(
            state.rand_mut(),
            input,
            &self.sig,
            &self.int_fields,
            |rand, ty, bits| op.apply(rand, ty, bits),
        ))
    }

    fn post_exec(&mut self, _state: &mut S, _new_corpus_id: Option<CorpusId>) -> Result<(), Error> {
        Ok(())
    }
}

fn width_mask(ty: FieldType) -> u128 {
    (1u128 << (ty.size() * 8)) - 1
}

/// Adds ±k (k in 1..=35), wrapping at the field's width.
#[derive(Debug, Clone, Copy)]
pub struct IntArith;

impl IntOp for IntArith {
    fn name(&self) -> String {
        "IntArith".into()
    }
    fn apply<R: Rand>(&self, rand: &mut R, ty: FieldType, bits: u128) -> u128 {
        let k = rand.between(1, INT_ARITH_MAX as usize) as u128;
        let new = if rand.coinflip(0.5) {
            bits.wrapping_add(k)
        } else {
            bits.wrapping_sub(k)
        };
        new & width_mask(ty)
    }
}

/// Replaces the value by one of [`int_interesting_values`] for the field's type (0, ±1, min,
/// max, min+1, max−1, ±2^k, 2^k−1 masks, AFL's interesting values).
#[derive(Debug, Clone)]
pub struct IntInteresting {
    /// Indexed by `FieldType::code()`; empty for float types.
    tables: Vec<Vec<i128>>,
}

impl Default for IntInteresting {
    fn default() -> Self {
        let tables = FieldType::ALL
            .iter()
            .map(|&t| {
                if t.float_type().is_some() {
                    Vec::new()
                } else {
                    int_interesting_values(t)
                }
            })
            .collect();
        IntInteresting { tables }
    }
}

impl IntOp for IntInteresting {
    fn name(&self) -> String {
        "IntInteresting".into()
    }
    fn apply<R: Rand>(&self, rand: &mut R, ty: FieldType, _bits: u128) -> u128 {
        let table = &self.tables[ty.code() as usize];
        (table[below(rand, table.len())] as u128) & width_mask(ty)
    }
}

/// Flips one random bit.
#[derive(Debug, Clone, Copy)]
pub struct IntBitFlip;

impl IntOp for IntBitFlip {
    fn name(&self) -> String {
        "IntBitFlip".into()
    }
    fn apply<R: Rand>(&self, rand: &mut R, ty: FieldType, bits: u128) -> u128 {
        bits ^ (1u128 << below(rand, ty.size() * 8))
    }
}

#[cfg(test)]
mod tests {
    use super::super::layout::read_le;
    use super::super::test_support::{field_changes, random_canonical_input, seeded_state};
    use super::*;
    use libafl::inputs::BytesInput;
    use libafl::state::NopState;
    use numfuzz_abi::Value;
    use std::collections::{BTreeSet, HashMap};

    fn mixed_sig() -> Arc<Signature> {
        Arc::new(Signature::parse("f64,i8,u16,f32,i32,u64,f80,u8,i64,i16,u32").unwrap())
    }

    struct Change {
        ty: FieldType,
        old: u128,
        new: u128,
    }

    fn run_op<O: IntOp>(op: O, n: usize, seed: u64) -> Vec<Change> {
        let sig = mixed_sig();
        let mut mutator = IntFieldMutator::new(&sig, op);
        let mut state: NopState<BytesInput> = seeded_state(seed);
        let mut out = Vec::new();
        for i in 0..n {
            let before = random_canonical_input(&sig, seed * 7919 + i as u64);
            let mut input = BytesInput::new(before.clone());
            let result = mutator.mutate(&mut state, &mut input).unwrap();
            let after = input.mutator_bytes().to_vec();
            let changes = field_changes(&sig, &before, &after);
            assert!(changes.len() <= 1, "changed fields {changes:?}");
            assert_eq!(result == MutationResult::Mutated, changes.len() == 1);
            if let Some(&(field, _)) = changes.first() {
                let ty = sig.fields()[field];
                assert!(ty.float_type().is_none(), "only integer fields change");
                let r = sig.range(field);
                out.push(Change {
                    ty,
                    old: read_le(&before[r.clone()]),
                    new: read_le(&after[r]),
                });
            }
        }
        out
    }

    #[test]
    fn arithmetic_wraps_by_at_most_35() {
        let mut deltas = BTreeSet::new();
        let mut wrapped = false;
        for c in run_op(IntArith, 4000, 1) {
            let m = width_mask(c.ty);
            let up = c.new.wrapping_sub(c.old) & m;
            let down = c.old.wrapping_sub(c.new) & m;
            let d = if up <= 35 { up as i64 } else { -(down as i64) };
            assert!((1..=35).contains(&d.abs()), "{}: {:#x} -> {:#x}", c.ty, c.old, c.new);
            deltas.insert(d);
            wrapped |= (d > 0) != (c.new > c.old);
        }
        assert_eq!(deltas, (-35..=35).filter(|&d| d != 0).collect());
        assert!(wrapped, "u8/i8 fields wrap around in 4000 tries");
    }

    #[test]
    fn interesting_values_are_in_range_for_the_field() {
        let mut seen: HashMap<FieldType, BTreeSet<i128>> = HashMap::new();
        for c in run_op(IntInteresting::default(), 4000, 2) {
            let bytes = &c.new.to_le_bytes()[..c.ty.size()];
            let Value::Int { value, .. } = c.ty.decode(bytes) else {
                panic!("integer field decodes to an integer")
            };
            assert!(int_interesting_values(c.ty).contains(&value), "{}: {value}", c.ty);
            seen.entry(c.ty).or_default().insert(value);
        }
        assert!(seen[&FieldType::I8].contains(&-128) && seen[&FieldType::I8].contains(&127));
        assert_eq!(
            seen[&FieldType::U8],
            int_interesting_values(FieldType::U8).into_iter().collect()
        );
        assert!(seen[&FieldType::I32].contains(&-1));
    }

    #[test]
    fn bit_flips_flip_one_bit_and_reach_the_top_bit() {
        let mut top = BTreeSet::new();
        for c in run_op(IntBitFlip, 3000, 3) {
            let diff = c.old ^ c.new;
            assert_eq!(diff.count_ones(), 1);
            assert!(diff <= width_mask(c.ty));
            if diff.trailing_zeros() as usize == c.ty.size() * 8 - 1 {
                top.insert(c.ty.code());
            }
        }
        assert_eq!(top.len(), 8, "the sign/top bit of every integer type: {top:?}");
    }

    #[test]
    fn float_only_signatures_are_skipped_and_short_inputs_padded() {
        let mut state: NopState<BytesInput> = seeded_state(4);
        let floats = Arc::new(Signature::parse("f64,f32").unwrap());
        let mut input = BytesInput::new(vec![1]);
        let mut mutator = IntFieldMutator::new(&floats, IntBitFlip);
        assert_eq!(mutator.mutate(&mut state, &mut input).unwrap(), MutationResult::Skipped);
        assert_eq!(input.mutator_bytes(), [1]);

        let ints = Arc::new(Signature::parse("u16,u32").unwrap());
        let mut mutator = IntFieldMutator::new(&ints, IntArith);
        for _ in 0..50 {
            let mut input = BytesInput::new(vec![7]);
            assert_eq!(mutator.mutate(&mut state, &mut input).unwrap(), MutationResult::Mutated);
            let b = input.mutator_bytes();
            assert_eq!(b.len(), 6);
            // Exactly one of the two fields moved away from its zero-padded value 7 / 0.
            let a = u16::from_le_bytes([b[0], b[1]]);
            let c = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
            assert!((a == 7) != (c == 0), "{a} {c}");
        }
    }
}
