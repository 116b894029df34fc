//! IEEE-754 field-aware mutators (the NumFuzz paper's operators, per typed input field) as
//! LibAFL mutators, the special values they draw from, and signature-derived seeds.
//!
//! Every mutator holds the input [`Signature`] (shared as an `Arc`) and works on one random
//! field of its kind, rewriting exactly that field's bytes. Before it mutates, the input is
//! made exactly `sig.size()` bytes long: a short input is zero-padded (as the harness reads
//! it), a long one truncated (the harness never sees those bytes). A mutator whose kind of
//! field (float / integer) is absent from the signature returns `Skipped` and leaves the input
//! as it is.
//!
//! Float operators ([`float_mutations`], one mutator each, so a scheduler weights them
//! separately):
//! - `FloatSignFlip`: flips the sign bit.
//! - `FloatExponentFlip{1,2,3,4,8}`: flips a run of 1/2/3/4/8 adjacent bits anywhere in the
//!   exponent field.
//! - `FloatMantissaFlip{1,2,3,4,8,16}`: flips a run of adjacent bits anywhere in the mantissa
//!   (23 bits of f32, 52 of f64, the 63 fraction bits of f80).
//! - `FloatExponentAdd`: biased exponent ± k, k in 1..=32, saturating at 0 and all ones.
//! - `FloatMantissaAdd`: mantissa ± (2^m − 1), m in 1..=33 (≤ 23 for f32), saturating at 0
//!   and all ones (the value stays in its binade).
//! - `FloatRandomChunk`: overwrites a random contiguous run of the field's bits with random bits.
//! - `FloatSpecialValue`: one of [`boundary_values`] (±0, ±min/max subnormal, ±min normal,
//!   ±max finite, ±inf, qNaN, sNaN, ±1).
//! - `FloatInterestingValue`: one of [`interesting_constants`] (±0.5, ±2, ±1±ulp, π/2, π,
//!   ln(max), ln(min normal), ln(min subnormal), sqrt(max), sqrt(min normal)).
//! - `FloatUlpStep`: moves the value by ±1..=32 ulps (`Float::step`).
//! - `FloatPowerOfTwo`: ±2^k, k over the whole range of the format.
//!
//! Integer operators ([`int_mutations`]): `IntArith` (± 1..=35, wrapping), `IntInteresting`
//! ([`int_interesting_values`]), `IntBitFlip` (one bit). Field crossover
//! ([`FieldCrossoverMutator`], needs `HasCorpus`): one field copied from another corpus entry.
//! Havoc stacking is LibAFL's: `HavocScheduledMutator::new(fp_mutations(&sig))` applies a
//! random stack of these per execution (or merge them with `havoc_mutations()`).
//!
//! f80: the explicit integer bit is kept canonical (set exactly when the exponent is
//! non-zero) by every operator except the sign flip, so the mutators never produce unnormals,
//! which the x87 rejects as invalid operands regardless of the code under test (byte-level
//! havoc still can).

pub mod crossover;
pub mod deadline;
pub mod domain;
mod field;
pub mod float_ops;
pub mod int_ops;
pub mod layout;
pub mod seeds;
#[cfg(test)]
mod test_support;
pub mod values;

pub use crossover::FieldCrossoverMutator;
pub use domain::DomainSteering;
pub use float_ops::{
    ExponentAdd, ExponentFlip, FloatFieldMutator, FloatOp, InterestingValue, MantissaAdd, MantissaFlip, PowerOfTwo,
    RandomChunk, SignFlip, SpecialValue, UlpStep,
};
pub use int_ops::{IntArith, IntBitFlip, IntFieldMutator, IntInteresting, IntOp};
pub use seeds::{seeds, MAX_SEEDS};
pub use values::{boundary_values, int_interesting_values, interesting_constants, special_values};

use libafl_bolts::tuples::{merge_tuple_list_type, tuple_list, tuple_list_type, Merge};
use numfuzz_abi::Signature;
use std::sync::Arc;

/// The tuple [`float_mutations`] returns.
pub type FloatMutationsType = tuple_list_type!(
    FloatFieldMutator<SignFlip>,
    FloatFieldMutator<ExponentFlip>,
    FloatFieldMutator<ExponentFlip>,
    FloatFieldMutator<ExponentFlip>,
    FloatFieldMutator<ExponentFlip>,
    FloatFieldMutator<ExponentFlip>,
    FloatFieldMutator<MantissaFlip>,
    FloatFieldMutator<MantissaFlip>,
    FloatFieldMutator<MantissaFlip>,
    FloatFieldMutator<MantissaFlip>,
    FloatFieldMutator<MantissaFlip>,
    FloatFieldMutator<MantissaFlip>,
    FloatFieldMutator<ExponentAdd>,
    FloatFieldMutator<MantissaAdd>,
    FloatFieldMutator<RandomChunk>,
    FloatFieldMutator<SpecialValue>,
    FloatFieldMutator<InterestingValue>,
    FloatFieldMutator<UlpStep>,
    FloatFieldMutator<PowerOfTwo>,
);

/// The tuple [`int_mutations`] returns.
pub type IntMutationsType = tuple_list_type!(
    IntFieldMutator<IntArith>,
    IntFieldMutator<IntInteresting>,
    IntFieldMutator<IntBitFlip>,
);

/// The tuple [`fp_mutations`] returns.
pub type FpMutationsType = merge_tuple_list_type!(
    FloatMutationsType,
    IntMutationsType,
    tuple_list_type!(FieldCrossoverMutator)
);

/// The 19 float-field mutators (see the module docs). Needs only `S: HasRand`.
pub fn float_mutations(sig: &Arc<Signature>) -> FloatMutationsType {
    let [e1, e2, e3, e4, e8] =
        float_ops::EXPONENT_FLIP_RUNS.map(|run| FloatFieldMutator::new(sig, ExponentFlip { run }));
    let [m1, m2, m3, m4, m8, m16] =
        float_ops::MANTISSA_FLIP_RUNS.map(|run| FloatFieldMutator::new(sig, MantissaFlip { run }));
    tuple_list!(
        FloatFieldMutator::new(sig, SignFlip),
        e1,
        e2,
        e3,
        e4,
        e8,
        m1,
        m2,
        m3,
        m4,
        m8,
        m16,
        FloatFieldMutator::new(sig, ExponentAdd),
        FloatFieldMutator::new(sig, MantissaAdd),
        FloatFieldMutator::new(sig, RandomChunk),
        FloatFieldMutator::new(sig, SpecialValue::default()),
        FloatFieldMutator::new(sig, InterestingValue::default()),
        FloatFieldMutator::new(sig, UlpStep),
        FloatFieldMutator::new(sig, PowerOfTwo),
    )
}

/// The 3 integer-field mutators. Needs only `S: HasRand`.
pub fn int_mutations(sig: &Arc<Signature>) -> IntMutationsType {
    tuple_list!(
        IntFieldMutator::new(sig, IntArith),
        IntFieldMutator::new(sig, IntInteresting::default()),
        IntFieldMutator::new(sig, IntBitFlip),
    )
}

/// Everything: [`float_mutations`], [`int_mutations`] and [`FieldCrossoverMutator`] (23
/// mutators; needs `S: HasRand + HasCorpus<I>`).
pub fn fp_mutations(sig: &Arc<Signature>) -> FpMutationsType {
    float_mutations(sig)
        .merge(int_mutations(sig))
        .merge(tuple_list!(FieldCrossoverMutator::new(sig)))
}

#[cfg(test)]
mod tests {
    use super::test_support::{field_changes, seeded_state};
    use super::*;
    use libafl::corpus::{Corpus, InMemoryCorpus, Testcase};
    use libafl::feedbacks::ConstFeedback;
    use libafl::inputs::{BytesInput, HasMutatorBytes};
    use libafl::mutators::{havoc_mutations, HavocScheduledMutator, MutationResult, Mutator};
    use libafl::state::{HasCorpus, NopState, StdState};
    use libafl_bolts::rands::StdRand;
    use libafl_bolts::tuples::NamedTuple;
    use std::collections::BTreeSet;

    #[test]
    fn tuples_have_distinct_names() {
        let sig = Arc::new(Signature::parse("f64,i32").unwrap());
        let names = fp_mutations(&sig).names();
        assert_eq!(names.len(), 23);
        let unique: BTreeSet<&str> = names.iter().map(|n| n.as_ref()).collect();
        assert_eq!(unique.len(), 23, "{names:?}");
        assert!(unique.contains("FloatExponentFlip8") && unique.contains("FloatMantissaFlip16"));
        assert_eq!(float_mutations(&sig).names().len(), 19);
        assert_eq!(int_mutations(&sig).names().len(), 3);
    }

    #[test]
    fn havoc_over_the_field_mutators_keeps_the_layout() {
        // Stacked field mutations on a state without a corpus: length fixed, and across runs
        // every field gets mutated.
        let sig = Arc::new(Signature::parse("f64,i32,f80,f32").unwrap());
        let mut havoc = HavocScheduledMutator::new(float_mutations(&sig).merge(int_mutations(&sig)));
        let mut state: NopState<BytesInput> = seeded_state(1);
        let start = sig.encode_text(&["1.5", "3", "-2", "0.25"]).unwrap();
        let mut touched = BTreeSet::new();
        for _ in 0..500 {
            let mut input = BytesInput::new(start.clone());
            havoc.mutate(&mut state, &mut input).unwrap();
            assert_eq!(input.mutator_bytes().len(), sig.size());
            touched.extend(
                field_changes(&sig, &start, input.mutator_bytes())
                    .into_iter()
                    .map(|(f, _)| f),
            );
        }
        assert_eq!(touched, (0..4).collect());
    }

    #[test]
    fn fp_mutations_work_beside_libafl_havoc_with_a_corpus() {
        let sig = Arc::new(Signature::parse("f64,u8").unwrap());
        let mut state = StdState::new(
            StdRand::with_seed(2),
            InMemoryCorpus::<BytesInput>::new(),
            InMemoryCorpus::new(),
            &mut ConstFeedback::False,
            &mut ConstFeedback::False,
        )
        .unwrap();
        let seed_inputs = seeds(&sig);
        for s in &seed_inputs {
            state
                .corpus_mut()
                .add(Testcase::new(BytesInput::new(s.clone())))
                .unwrap();
        }
        assert_eq!(state.corpus().count(), seed_inputs.len());
        let mut mutator = HavocScheduledMutator::new(havoc_mutations().merge(fp_mutations(&sig)));
        let mut mutated = 0;
        for i in 0..300 {
            let mut input = BytesInput::new(seed_inputs[i % seed_inputs.len()].clone());
            if mutator.mutate(&mut state, &mut input).unwrap() == MutationResult::Mutated {
                mutated += 1;
            }
        }
        assert!(mutated > 250, "{mutated}");
    }
}
