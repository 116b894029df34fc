//! Float-field operators: the NumFuzz paper's IEEE-754 mutations on sign, exponent and
//! mantissa, plus special values, ulp steps and powers of two.
//!
//! Each operator is a [`FloatOp`]; [`FloatFieldMutator`] turns one into a LibAFL mutator that
//! applies it to one random float field of the signature. Every operator writes a canonical
//! f80 (integer bit set exactly when the exponent is non-zero, see [`canonical`]) except
//! [`SignFlip`], which flips the sign bit and nothing else.

use super::field::{below, random_u128, rewrite_one_field};
use super::layout::{canonical, field_indices, FloatLayout};
use super::values::{boundary_values, interesting_constants};
use libafl::corpus::CorpusId;
use libafl::inputs::{HasMutatorBytes, ResizableMutator};
use libafl::mutators::{MutationResult, Mutator};
use libafl::state::HasRand;
use libafl::Error;
use libafl_bolts::rands::Rand;
use libafl_bolts::Named;
use numfuzz_abi::value::{Float, FloatFormat};
use numfuzz_abi::{FloatType, Signature};
use std::borrow::Cow;
use std::sync::Arc;

/// Largest k of [`ExponentAdd`].
pub const EXPONENT_ADD_MAX: u32 = 32;
/// Largest m of [`MantissaAdd`] (which adds ±(2^m − 1)).
pub const MANTISSA_ADD_MAX_POW: u32 = 33;
/// Largest step of [`UlpStep`].
pub const ULP_STEP_MAX: u32 = 32;
/// Run widths of [`ExponentFlip`] in [`super::float_mutations`].
pub const EXPONENT_FLIP_RUNS: [u32; 5] = [1, 2, 3, 4, 8];
/// Run widths of [`MantissaFlip`] in [`super::float_mutations`].
pub const MANTISSA_FLIP_RUNS: [u32; 6] = [1, 2, 3, 4, 8, 16];

/// One operation on the raw bits of a float field.
pub trait FloatOp {
    /// Mutator name, e.g. `FloatExponentFlip2`.
    fn name(&self) -> String;
    /// The new bits for a field of type `ty` holding `bits` (low 32/64/80 bits).
    fn apply<R: Rand>(&self, rand: &mut R, ty: FloatType, bits: u128) -> u128;
}

/// A LibAFL mutator applying one [`FloatOp`] to one random float field of the signature.
/// Skipped when the signature has no float field.
#[derive(Debug, Clone)]
pub struct FloatFieldMutator<O> {
    sig: Arc<Signature>,
    float_fields: Vec<usize>,
    op: O,
    name: Cow<'static, str>,
}

impl<O: FloatOp> FloatFieldMutator<O> {
    pub fn new(sig: &Arc<Signature>, op: O) -> Self {
        FloatFieldMutator {
            sig: Arc::clone(sig),
            float_fields: field_indices(sig, |t| t.float_type().is_some()),
            name: Cow::Owned(op.name()),
            op,
        }
    }
}

impl<O> Named for FloatFieldMutator<O> {
    fn name(&self) -> &Cow<'static, str> {
        &self.name
    }
}

impl<I, S, O> Mutator<I, S> for FloatFieldMutator<O>
where
    I: HasMutatorBytes + ResizableMutator<u8>,
    S: HasRand,
    O: FloatOp,
{
    fn mutate(&mut self, state: &mut S, input: &mut I) -> Result<MutationResult, Error> {
        let op = &self.op;
        Ok(rewrite_one_field(
            state.rand_mut(),
            input,
            &self.sig,
            &self.float_fields,
            |rand, ty, bits| {
                let ty = ty.float_type().expect("float fields only");
                op.apply(rand, ty, bits)
            },
        ))
    }

    fn post_exec(&mut self, _state: &mut S, _new_corpus_id: Option<CorpusId>) -> Result<(), Error> {
        Ok(())
    }
}

/// Flips the sign bit.
#[derive(Debug, Clone, Copy)]
pub struct SignFlip;

impl FloatOp for SignFlip {
    fn name(&self) -> String {
        "FloatSignFlip".into()
    }
    fn apply<R: Rand>(&self, _rand: &mut R, ty: FloatType, bits: u128) -> u128 {
        bits ^ FloatLayout::of(ty).sign_mask()
    }
}

/// Flips a run of `run` adjacent bits at a random position of the exponent field.
#[derive(Debug, Clone, Copy)]
pub struct ExponentFlip {
    pub run: u32,
}

impl FloatOp for ExponentFlip {
    fn name(&self) -> String {
        format!("FloatExponentFlip{}", self.run)
    }
    fn apply<R: Rand>(&self, rand: &mut R, ty: FloatType, bits: u128) -> u128 {
        let l = FloatLayout::of(ty);
        let run = self.run.clamp(1, l.exp_bits);
        let start = below(rand, (l.exp_bits - run + 1) as usize) as u32;
        canonical(ty, bits ^ (((1u128 << run) - 1) << (l.exp_shift + start)))
    }
}

/// Flips a run of `run` adjacent bits at a random position of the mantissa (23 bits of f32,
/// 52 of f64, the 63 fraction bits of f80).
#[derive(Debug, Clone, Copy)]
pub struct MantissaFlip {
    pub run: u32,
}

impl FloatOp for MantissaFlip {
    fn name(&self) -> String {
        format!("FloatMantissaFlip{}", self.run)
    }
    fn apply<R: Rand>(&self, rand: &mut R, ty: FloatType, bits: u128) -> u128 {
        let l = FloatLayout::of(ty);
        let run = self.run.clamp(1, l.mant_bits);
        let start = below(rand, (l.mant_bits - run + 1) as usize) as u32;
        canonical(ty, bits ^ (((1u128 << run) - 1) << start))
    }
}

/// Adds ±k (k in 1..=32) to the biased exponent, saturating at 0 and at all ones (so a large
/// step from a big value lands on infinity/NaN, one from a tiny value on zero/subnormal).
#[derive(Debug, Clone, Copy)]
pub struct ExponentAdd;

impl FloatOp for ExponentAdd {
    fn name(&self) -> String {
        "FloatExponentAdd".into()
    }
    fn apply<R: Rand>(&self, rand: &mut R, ty: FloatType, bits: u128) -> u128 {
        let l = FloatLayout::of(ty);
        let k = rand.between(1, EXPONENT_ADD_MAX as usize) as u32;
        let exp = l.exp(bits);
        let new = if rand.coinflip(0.5) {
            exp.saturating_add(k).min(l.exp_max())
        } else {
            exp.saturating_sub(k)
        };
        canonical(ty, l.with_exp(bits, new))
    }
}

/// Adds ±(2^m − 1) (m in 1..=33, at most the mantissa width) to the mantissa, saturating at
/// 0 and all ones so the value stays in its binade (reaching its edges: e.g. the largest
/// finite value from any value of the top binade).
#[derive(Debug, Clone, Copy)]
pub struct MantissaAdd;

impl FloatOp for MantissaAdd {
    fn name(&self) -> String {
        "FloatMantissaAdd".into()
    }
    fn apply<R: Rand>(&self, rand: &mut R, ty: FloatType, bits: u128) -> u128 {
        let l = FloatLayout::of(ty);
        let m = rand.between(1, MANTISSA_ADD_MAX_POW.min(l.mant_bits) as usize) as u32;
        let delta = (1u128 << m) - 1;
        let mant = l.mant(bits);
        let new = if rand.coinflip(0.5) {
            (mant + delta).min(l.mant_mask())
        } else {
            mant.saturating_sub(delta)
        };
        canonical(ty, l.with_mant(bits, new))
    }
}

/// Overwrites a random contiguous run of bits (anywhere in the whole field, 1 bit up to the
/// full width) with random bits.
#[derive(Debug, Clone, Copy)]
pub struct RandomChunk;

impl FloatOp for RandomChunk {
    fn name(&self) -> String {
        "FloatRandomChunk".into()
    }
    fn apply<R: Rand>(&self, rand: &mut R, ty: FloatType, bits: u128) -> u128 {
        let width = FloatLayout::of(ty).width;
        let len = rand.between(1, width as usize) as u32;
        let start = below(rand, (width - len + 1) as usize) as u32;
        let mask = ((1u128 << len) - 1) << start;
        canonical(ty, (bits & !mask) | (random_u128(rand) & mask))
    }
}

/// One table of values per float type, indexed by `FloatType as usize`.
#[derive(Debug, Clone)]
struct ValueTables([Vec<Float>; 3]);

impl ValueTables {
    fn build(values: impl Fn(FloatType) -> Vec<Float>) -> Self {
        ValueTables(FloatType::ALL.map(values))
    }
    fn pick<R: Rand>(&self, rand: &mut R, ty: FloatType) -> Float {
        let table = &self.0[ty as usize];
        table[below(rand, table.len())]
    }
}

/// Replaces the value by an IEEE boundary value ([`boundary_values`]: ±0, ±smallest and
/// largest subnormal, ±smallest normal, ±largest finite, ±inf, quiet and signalling NaN, ±1).
#[derive(Debug, Clone)]
pub struct SpecialValue {
    tables: ValueTables,
}

impl Default for SpecialValue {
    fn default() -> Self {
        SpecialValue {
            tables: ValueTables::build(boundary_values),
        }
    }
}

impl FloatOp for SpecialValue {
    fn name(&self) -> String {
        "FloatSpecialValue".into()
    }
    fn apply<R: Rand>(&self, rand: &mut R, ty: FloatType, _bits: u128) -> u128 {
        self.tables.pick(rand, ty).bits
    }
}

/// Replaces the value by a constant that guards numerical code ([`interesting_constants`]:
/// ±0.5, ±2, ±1±ulp, π/2, π, ln(max), ln(min normal), ln(min subnormal), sqrt(max),
/// sqrt(min normal)).
#[derive(Debug, Clone)]
pub struct InterestingValue {
    tables: ValueTables,
}

impl Default for InterestingValue {
    fn default() -> Self {
        InterestingValue {
            tables: ValueTables::build(interesting_constants),
        }
    }
}

impl FloatOp for InterestingValue {
    fn name(&self) -> String {
        "FloatInterestingValue".into()
    }
    fn apply<R: Rand>(&self, rand: &mut R, ty: FloatType, _bits: u128) -> u128 {
        self.tables.pick(rand, ty).bits
    }
}

/// Moves the value by ±1..=32 ulps along the ordered sequence of values (crossing zero and
/// binades; saturating at ±inf). NaNs stay as they are.
#[derive(Debug, Clone, Copy)]
pub struct UlpStep;

impl FloatOp for UlpStep {
    fn name(&self) -> String {
        "FloatUlpStep".into()
    }
    fn apply<R: Rand>(&self, rand: &mut R, ty: FloatType, bits: u128) -> u128 {
        let steps = rand.between(1, ULP_STEP_MAX as usize) as i64;
        let steps = if rand.coinflip(0.5) { steps } else { -steps };
        Float::from_bits(ty, bits).step(steps).bits
    }
}

/// Replaces the value by ±2^k, k uniform over the whole range of the format, from the
/// smallest subnormal to the largest power of two.
#[derive(Debug, Clone, Copy)]
pub struct PowerOfTwo;

impl FloatOp for PowerOfTwo {
    fn name(&self) -> String {
        "FloatPowerOfTwo".into()
    }
    fn apply<R: Rand>(&self, rand: &mut R, ty: FloatType, _bits: u128) -> u128 {
        let f = FloatFormat::of(ty);
        let lowest = f.emin() - (f.precision as i32 - 1);
        let k = lowest + rand.between(0, (f.emax() - lowest) as usize) as i32;
        let sign = if rand.coinflip(0.5) {
            FloatLayout::of(ty).sign_mask()
        } else {
            0
        };
        pow2_bits(ty, k) | sign
    }
}

/// Bits of 2^k for k from the smallest subnormal's exponent to emax, built directly rather
/// than with `Float::pow2` (which goes through big-integer rounding) as this runs per mutation.
fn pow2_bits(ty: FloatType, k: i32) -> u128 {
    let f = FloatFormat::of(ty);
    let l = FloatLayout::of(ty);
    if k >= f.emin() {
        canonical(ty, l.with_exp(0, (k + f.bias) as u32))
    } else {
        let lowest = f.emin() - (f.precision as i32 - 1);
        1u128 << (k - lowest)
    }
}

#[cfg(test)]
mod tests {
    use super::super::layout::{read_le, F80_INTEGER_BIT};
    use super::super::test_support::{field_changes, random_canonical_input, seeded_state};
    use super::*;
    use libafl::inputs::BytesInput;
    use libafl::state::NopState;
    use std::collections::{BTreeSet, HashMap};

    /// A signature with float fields of every format between integer fields, so that any
    /// write outside the chosen field shows.
    fn mixed_sig() -> Arc<Signature> {
        Arc::new(Signature::parse("i32,f64,u8,f80,f32,i16").unwrap())
    }

    struct Change {
        ty: FloatType,
        old: u128,
        new: u128,
    }

    /// Runs `op` `n` times, each on a fresh random canonical input, and returns the change to
    /// the one float field it touched, checking that nothing else changed.
    fn run_op<O: FloatOp>(op: O, n: usize, seed: u64) -> Vec<Change> {
        let sig = mixed_sig();
        let mut mutator = FloatFieldMutator::new(&sig, op);
        let mut state: NopState<BytesInput> = seeded_state(seed);
        let mut out = Vec::new();
        for i in 0..n {
            let before = random_canonical_input(&sig, seed.wrapping_mul(1000) + i as u64);
            let mut input = BytesInput::new(before.clone());
            let result = mutator.mutate(&mut state, &mut input).unwrap();
            let after = input.mutator_bytes().to_vec();
            assert_eq!(after.len(), sig.size());
            let changes = field_changes(&sig, &before, &after);
            assert!(changes.len() <= 1, "{}: changed fields {changes:?}", mutator.name());
            assert_eq!(result == MutationResult::Mutated, changes.len() == 1);
            if let Some(&(field, _)) = changes.first() {
                let ty = sig.fields()[field].float_type().expect("only float fields change");
                let range = sig.range(field);
                out.push(Change {
                    ty,
                    old: read_le(&before[range.clone()]),
                    new: read_le(&after[range]),
                });
            }
        }
        out
    }

    /// The f80 integer bit of `bits` is what its exponent implies.
    fn is_canonical(ty: FloatType, bits: u128) -> bool {
        canonical(ty, bits) == bits
    }

    fn int_bit(ty: FloatType) -> u128 {
        if ty == FloatType::F80 {
            F80_INTEGER_BIT
        } else {
            0
        }
    }

    /// True when `x` is one run of exactly `run` adjacent ones.
    fn is_run(x: u128, run: u32) -> bool {
        x.count_ones() == run && (x >> x.trailing_zeros()).count_ones() == (x >> x.trailing_zeros()).trailing_ones()
    }

    #[test]
    fn sign_flip_flips_exactly_the_sign_bit() {
        let changes = run_op(SignFlip, 300, 1);
        assert_eq!(changes.len(), 300);
        for c in &changes {
            assert_eq!(c.old ^ c.new, FloatLayout::of(c.ty).sign_mask());
        }
    }

    #[test]
    fn exponent_flips_change_a_run_of_exponent_bits_only_and_cover_the_field() {
        for run in EXPONENT_FLIP_RUNS {
            let mut flipped: HashMap<FloatType, u128> = HashMap::new();
            for c in run_op(ExponentFlip { run }, 3000, u64::from(run)) {
                let l = FloatLayout::of(c.ty);
                let diff = c.old ^ c.new;
                assert_eq!(
                    diff & !(l.exp_mask() | int_bit(c.ty)),
                    0,
                    "run {run}: only the exponent"
                );
                assert!(
                    is_run(diff & l.exp_mask(), run),
                    "run {run}: {:#x}",
                    diff & l.exp_mask()
                );
                assert!(is_canonical(c.ty, c.new));
                *flipped.entry(c.ty).or_default() |= diff & l.exp_mask();
            }
            for ty in FloatType::ALL {
                assert_eq!(
                    flipped[&ty],
                    FloatLayout::of(ty).exp_mask(),
                    "run {run} {ty}: every exponent bit"
                );
            }
        }
    }

    #[test]
    fn mantissa_flips_change_a_run_of_mantissa_bits_only_and_reach_every_bit() {
        for run in MANTISSA_FLIP_RUNS {
            let mut flipped: HashMap<FloatType, u128> = HashMap::new();
            for c in run_op(MantissaFlip { run }, 4000, 100 + u64::from(run)) {
                let l = FloatLayout::of(c.ty);
                let diff = c.old ^ c.new;
                assert_eq!(
                    diff & !l.mant_mask(),
                    0,
                    "run {run}: only the mantissa of a canonical input"
                );
                assert!(is_run(diff, run), "run {run}: {diff:#x}");
                *flipped.entry(c.ty).or_default() |= diff;
            }
            // Includes bit 0 and the top fraction bit (bit 51 of f64, 22 of f32, 62 of f80).
            for ty in FloatType::ALL {
                assert_eq!(flipped[&ty], FloatLayout::of(ty).mant_mask(), "run {run} {ty}");
            }
        }
    }

    #[test]
    fn f80_exponent_changes_set_the_integer_bit_canonically() {
        // Start at the normal/subnormal border, where exponent operators cross exponent 0.
        let sig = Arc::new(Signature::parse("f80").unwrap());
        let starts = [
            Float::min_normal(FloatType::F80, false),
            super::super::values::max_subnormal(FloatType::F80, false),
            Float::min_subnormal(FloatType::F80, true),
        ];
        let mut state: NopState<BytesInput> = seeded_state(43);
        let mut flip = FloatFieldMutator::new(&sig, ExponentFlip { run: 1 });
        let mut add = FloatFieldMutator::new(&sig, ExponentAdd);
        let (mut to_zero, mut from_zero) = (0, 0);
        for i in 0..600 {
            let start = starts[i % starts.len()];
            let mut input = BytesInput::new(start.to_f80_bytes().to_vec());
            if i % 2 == 0 {
                flip.mutate(&mut state, &mut input).unwrap();
            } else {
                add.mutate(&mut state, &mut input).unwrap();
            }
            let new = read_le(input.mutator_bytes());
            let new_exp = (new >> 64) as u16 & 0x7fff;
            assert_eq!(new & F80_INTEGER_BIT != 0, new_exp != 0, "{new:#x}");
            match (start.exp_field() == 0, new_exp == 0) {
                (false, true) => to_zero += 1,
                (true, false) => from_zero += 1,
                _ => {}
            }
        }
        assert!(to_zero > 0 && from_zero > 0, "{to_zero} {from_zero}");
    }

    #[test]
    fn f80_operators_repair_a_missing_integer_bit() {
        // An unnormal (exponent 0x3fff, integer bit clear), e.g. from byte havoc.
        let sig = Arc::new(Signature::parse("f80").unwrap());
        let mut bytes = [0u8; 10];
        bytes[8..].copy_from_slice(&0x3fffu16.to_le_bytes());
        let mut state: NopState<BytesInput> = seeded_state(5);
        let mut mutator = FloatFieldMutator::new(&sig, MantissaFlip { run: 1 });
        let mut input = BytesInput::new(bytes.to_vec());
        mutator.mutate(&mut state, &mut input).unwrap();
        let bits = read_le(input.mutator_bytes());
        assert_ne!(bits & F80_INTEGER_BIT, 0);
        assert_eq!((bits >> 64) as u16, 0x3fff);
    }

    #[test]
    fn exponent_add_moves_the_exponent_by_k_and_saturates() {
        let mut deltas = BTreeSet::new();
        for c in run_op(ExponentAdd, 5000, 7) {
            let l = FloatLayout::of(c.ty);
            let diff = c.old ^ c.new;
            assert_eq!(diff & !(l.exp_mask() | int_bit(c.ty)), 0, "only the exponent");
            assert!(is_canonical(c.ty, c.new));
            let (old, new) = (i64::from(l.exp(c.old)), i64::from(l.exp(c.new)));
            let d = new - old;
            let saturated = new == 0 || new == i64::from(l.exp_max());
            assert!(
                (1..=32).contains(&d.abs()) || saturated && d.abs() < 32,
                "{:?}: {old} -> {new}",
                c.ty
            );
            if !saturated {
                deltas.insert(d);
            }
        }
        let all: BTreeSet<i64> = (-32..=32).filter(|&d| d != 0).collect();
        assert_eq!(deltas, all);
    }

    #[test]
    fn exponent_add_saturates_at_all_ones_and_zero() {
        let sig = Arc::new(Signature::parse("f64").unwrap());
        let mut state: NopState<BytesInput> = seeded_state(9);
        let mut mutator = FloatFieldMutator::new(&sig, ExponentAdd);
        let mut mutate = |x: f64| {
            let mut input = BytesInput::new(x.to_le_bytes().to_vec());
            mutator.mutate(&mut state, &mut input).unwrap();
            f64::from_le_bytes(input.mutator_bytes().try_into().unwrap())
        };
        let from_max: Vec<f64> = (0..300).map(|_| mutate(f64::MAX)).collect();
        let from_min: Vec<f64> = (0..300).map(|_| mutate(f64::MIN_POSITIVE)).collect();
        // DBL_MAX has exponent 0x7fe and an all-ones mantissa: +k saturates at 0x7ff (NaN).
        assert!(from_max.iter().any(|x| x.is_nan()));
        assert!(from_max.iter().all(|x| x.is_nan() || x.is_finite() && *x < f64::MAX));
        // DBL_MIN has exponent 1 and a zero mantissa: -k saturates at exponent 0 (+0).
        assert!(from_min.contains(&0.0));
        assert!(from_min.iter().all(|&x| x == 0.0 || x > f64::MIN_POSITIVE));
    }

    #[test]
    fn mantissa_add_adds_a_mersenne_number_within_the_binade() {
        let mut pows: HashMap<FloatType, BTreeSet<u32>> = HashMap::new();
        for c in run_op(MantissaAdd, 6000, 11) {
            let l = FloatLayout::of(c.ty);
            assert_eq!((c.old ^ c.new) & !l.mant_mask(), 0, "only the mantissa");
            let (old, new) = (l.mant(c.old) as i128, l.mant(c.new) as i128);
            let d = (new - old).unsigned_abs() + 1;
            if d.is_power_of_two() {
                pows.entry(c.ty).or_default().insert(d.trailing_zeros());
            } else {
                assert!(
                    new == 0 || new == l.mant_mask() as i128,
                    "{:?}: {old:#x} -> {new:#x}",
                    c.ty
                );
            }
        }
        assert_eq!(pows[&FloatType::F64], (1..=33).collect());
        assert_eq!(pows[&FloatType::F80], (1..=33).collect());
        // For f32, m = 23 adds the whole mantissa mask and nearly always saturates.
        let f32_pows = &pows[&FloatType::F32];
        assert!(f32_pows.is_superset(&(1..=22).collect()) && f32_pows.iter().all(|&m| m <= 23));
    }

    #[test]
    fn random_chunk_stays_in_its_field_and_reaches_both_ends() {
        let mut touched: HashMap<FloatType, u128> = HashMap::new();
        for c in run_op(RandomChunk, 3000, 13) {
            assert!(is_canonical(c.ty, c.new));
            *touched.entry(c.ty).or_default() |= (c.old ^ c.new) & !int_bit(c.ty);
        }
        for ty in FloatType::ALL {
            let width = FloatLayout::of(ty).width;
            assert_eq!(touched[&ty], ((1u128 << width) - 1) & !int_bit(ty), "{ty}");
        }
    }

    #[test]
    fn special_values_are_written_bit_exactly_and_all_reached() {
        let mut seen: HashMap<FloatType, BTreeSet<u128>> = HashMap::new();
        for c in run_op(SpecialValue::default(), 3000, 17) {
            seen.entry(c.ty).or_default().insert(c.new);
        }
        for ty in FloatType::ALL {
            let table: BTreeSet<u128> = boundary_values(ty).iter().map(|x| x.bits).collect();
            assert_eq!(seen[&ty], table, "{ty}");
        }
        assert!(seen[&FloatType::F64].contains(&1));
        assert!(seen[&FloatType::F80].contains(&(0x7ffe << 64 | 0xffff_ffff_ffff_ffff)));
    }

    #[test]
    fn interesting_values_come_from_the_table() {
        let mut seen: HashMap<FloatType, BTreeSet<u128>> = HashMap::new();
        for c in run_op(InterestingValue::default(), 3000, 19) {
            seen.entry(c.ty).or_default().insert(c.new);
        }
        for ty in FloatType::ALL {
            let table: BTreeSet<u128> = interesting_constants(ty).iter().map(|x| x.bits).collect();
            assert_eq!(seen[&ty], table, "{ty}");
        }
        assert!(seen[&FloatType::F64].contains(&std::f64::consts::FRAC_PI_2.to_bits().into()));
    }

    #[test]
    fn ulp_steps_move_the_ordinal_by_1_to_32() {
        let mut steps = BTreeSet::new();
        for c in run_op(UlpStep, 5000, 23) {
            let (old, new) = (Float::from_bits(c.ty, c.old), Float::from_bits(c.ty, c.new));
            assert!(!old.is_nan());
            let d = new.ord() - old.ord();
            // Saturating at infinity only shortens a step.
            assert!((1..=32).contains(&d.abs()), "{old:?} -> {new:?}");
            if !new.is_infinite() {
                steps.insert(d);
            }
        }
        let all: BTreeSet<i128> = (-32..=32).filter(|&d| d != 0).collect();
        assert_eq!(steps, all);
    }

    #[test]
    fn ulp_steps_leave_nan_alone() {
        let sig = Arc::new(Signature::parse("f64").unwrap());
        let mut state: NopState<BytesInput> = seeded_state(29);
        let mut mutator = FloatFieldMutator::new(&sig, UlpStep);
        let mut input = BytesInput::new(f64::NAN.to_le_bytes().to_vec());
        assert_eq!(mutator.mutate(&mut state, &mut input).unwrap(), MutationResult::Skipped);
        assert_eq!(input.mutator_bytes(), f64::NAN.to_le_bytes());
    }

    #[test]
    fn powers_of_two_span_the_whole_range() {
        let mut exps: HashMap<FloatType, BTreeSet<i32>> = HashMap::new();
        for c in run_op(PowerOfTwo, 6000, 31) {
            let x = Float::from_bits(c.ty, c.new);
            let (m, e) = x.decompose().expect("finite non-zero");
            assert!(m.is_power_of_two(), "{x:?}");
            exps.entry(c.ty).or_default().insert(e + m.trailing_zeros() as i32);
        }
        for ty in FloatType::ALL {
            let f = FloatFormat::of(ty);
            let lowest = f.emin() - (f.precision as i32 - 1);
            let seen = &exps[&ty];
            assert!(seen.iter().all(|e| (lowest..=f.emax()).contains(e)), "{ty}");
            // Both subnormal powers and powers near the top were produced.
            assert!(seen.iter().any(|&e| e < f.emin()), "{ty}: no subnormal power");
            assert!(seen.iter().any(|&e| e > f.emax() * 9 / 10), "{ty}: no huge power");
        }
        let f32_all: BTreeSet<i32> = (-149..=127).collect();
        assert_eq!(exps[&FloatType::F32], f32_all);
    }

    #[test]
    fn powers_of_two_are_built_exactly() {
        for ty in FloatType::ALL {
            let f = FloatFormat::of(ty);
            let lowest = f.emin() - (f.precision as i32 - 1);
            for k in lowest..=f.emax() {
                assert_eq!(pow2_bits(ty, k), Float::pow2(ty, k).bits, "{ty} 2^{k}");
            }
        }
    }

    #[test]
    fn short_inputs_are_zero_padded_and_long_ones_truncated() {
        let sig = Arc::new(Signature::parse("i32,f64").unwrap());
        let mut state: NopState<BytesInput> = seeded_state(37);
        let mut mutator = FloatFieldMutator::new(&sig, SignFlip);
        let mut input = BytesInput::new(vec![1, 2, 3, 4, 5]);
        assert_eq!(mutator.mutate(&mut state, &mut input).unwrap(), MutationResult::Mutated);
        assert_eq!(input.mutator_bytes(), [1, 2, 3, 4, 5, 0, 0, 0, 0, 0, 0, 0x80]);
        let mut long = BytesInput::new((1..=20).collect());
        mutator.mutate(&mut state, &mut long).unwrap();
        assert_eq!(long.mutator_bytes(), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 ^ 0x80]);
    }

    #[test]
    fn signatures_without_floats_are_skipped_untouched() {
        let sig = Arc::new(Signature::parse("i32,u8").unwrap());
        let mut state: NopState<BytesInput> = seeded_state(41);
        let mut mutator = FloatFieldMutator::new(&sig, RandomChunk);
        let mut input = BytesInput::new(vec![9, 9]);
        assert_eq!(mutator.mutate(&mut state, &mut input).unwrap(), MutationResult::Skipped);
        assert_eq!(input.mutator_bytes(), [9, 9]);
    }
}
