//! Keeping mutated values inside the fields' declared domains (`f64[0,1]`).
//!
//! [`DomainSteering`] wraps the whole mutation step (field operators, byte havoc and tokens
//! alike, so no operator needs to know about domains). After the inner mutator ran, every
//! field with a domain whose value changed and now lies outside is moved back inside with
//! probability [`STEER_INSIDE_PERCENT`]; the rest stay outside, since how a function behaves
//! just past its domain is still worth seeing, only not most of the time (its exceptions
//! there are expected, and triage classes findings only such inputs raise `out-of-domain`).
//! Fields the mutation did not touch are left as they are, so an outside input kept in the
//! corpus is still explored where it is.
//!
//! How a value is moved inside, one of three ways at random:
//! - **near a bound**: the bound nearer to the value (an open end's first inside value),
//!   moved 0..=16 ulps (or units) inward: domain code breaks at its edges (p near 0 or 1);
//! - **ordinary**: uniform between finite bounds, or a bound plus a log-uniform magnitude in
//!   1e-6..1e6 when the domain is unbounded on that side: the values a user passes;
//! - **reflected**: mirrored across the bound it crossed, which keeps the mutation's distance
//!   (a small step out becomes a small step in); when that lands outside too (a narrow domain,
//!   an infinity, a NaN) the value goes near a bound instead.

use super::field::below;
use super::layout::{read_le, write_le};
use libafl::corpus::CorpusId;
use libafl::inputs::{HasMutatorBytes, ResizableMutator};
use libafl::mutators::{MutationResult, Mutator};
use libafl::state::HasRand;
use libafl::Error;
use libafl_bolts::rands::Rand;
use libafl_bolts::Named;
use numfuzz_abi::domain::Domain;
use numfuzz_abi::value::Float;
use numfuzz_abi::{FieldType, FloatType, Signature, Value};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::Arc;

/// Share (in percent) of out-of-domain mutated values moved back inside.
pub const STEER_INSIDE_PERCENT: u64 = 90;

/// Most ulps (or integer units) a value near a bound is moved inward.
const NEAR_BOUND_STEPS: u64 = 16;

/// A mutator that keeps most of `inner`'s mutated field values inside their domains.
pub struct DomainSteering<M> {
    inner: M,
    /// Only a signature with some domain (else this is `inner` alone).
    sig: Option<Arc<Signature>>,
    before: Vec<u8>,
}

impl<M> DomainSteering<M> {
    pub fn new(inner: M, sig: Option<&Arc<Signature>>) -> DomainSteering<M> {
        DomainSteering {
            inner,
            sig: sig.filter(|s| s.has_domains()).cloned(),
            before: Vec::new(),
        }
    }
}

impl<M> Named for DomainSteering<M> {
    fn name(&self) -> &Cow<'static, str> {
        static NAME: Cow<'static, str> = Cow::Borrowed("DomainSteering");
        &NAME
    }
}

impl<I, S, M> Mutator<I, S> for DomainSteering<M>
where
    I: HasMutatorBytes + ResizableMutator<u8>,
    S: HasRand,
    M: Mutator<I, S>,
{
    fn mutate(&mut self, state: &mut S, input: &mut I) -> Result<MutationResult, Error> {
        let Some(sig) = &self.sig else {
            return self.inner.mutate(state, input);
        };
        self.before.clear();
        self.before.extend_from_slice(input.mutator_bytes());
        let result = self.inner.mutate(state, input)?;
        if result == MutationResult::Mutated {
            steer_changed_fields(state.rand_mut(), sig, &self.before, input);
        }
        Ok(result)
    }

    fn post_exec(&mut self, state: &mut S, new_corpus_id: Option<CorpusId>) -> Result<(), Error> {
        self.inner.post_exec(state, new_corpus_id)
    }
}

/// The field's bytes as the harness reads them (zero-padded past the end of the input).
fn field_bits(sig: &Signature, bytes: &[u8], field: usize) -> u128 {
    let range = sig.range(field);
    let end = range.end.min(bytes.len());
    read_le(bytes.get(range.start..end).unwrap_or(&[]))
}

/// Moves each changed field that went outside its domain back inside, most of the time.
fn steer_changed_fields<I, R>(rand: &mut R, sig: &Signature, before: &[u8], input: &mut I)
where
    I: HasMutatorBytes + ResizableMutator<u8>,
    R: Rand,
{
    for field in 0..sig.len() {
        let Some(domain) = sig.domain(field) else { continue };
        let after = field_bits(sig, input.mutator_bytes(), field);
        let stays_outside = below(rand, 100) as u64 >= STEER_INSIDE_PERCENT;
        if after == field_bits(sig, before, field) || stays_outside {
            continue;
        }
        let ty = sig.fields()[field];
        let Some(inside) = steer_into(rand, ty, domain, after) else {
            continue;
        };
        if input.mutator_bytes().len() < sig.range(field).end {
            // The harness reads a short input zero-padded: padding it changes nothing else.
            input.resize(sig.range(field).end, 0);
        }
        write_le(&mut input.mutator_bytes_mut()[sig.range(field)], inside);
    }
}

/// The bits of a value inside `domain` for the field value `bits`, or `None` when it is
/// inside already.
pub fn steer_into<R: Rand>(rand: &mut R, ty: FieldType, domain: &Domain, bits: u128) -> Option<u128> {
    let size = ty.size();
    let value = ty.decode(&bits.to_le_bytes()[..size]);
    if domain.contains(&value) {
        return None;
    }
    Some(match value {
        Value::Float(x) => steer_float(rand, domain, x).bits,
        Value::Int { value, .. } => steer_int(rand, domain, value) as u128,
    })
}

fn steer_float<R: Rand>(rand: &mut R, domain: &Domain, x: Float) -> Float {
    let (lo, hi) = domain.float_extremes().expect("float domain");
    let moved = match below(rand, 3) {
        0 => None,
        1 => Some(ordinary_float(rand, lo, hi)),
        _ => reflect_float(x, lo, hi),
    };
    match moved.filter(|v| domain.contains(&Value::Float(*v))) {
        Some(v) => v,
        None => near_float_bound(rand, x, lo, hi),
    }
}

/// The inside extreme nearer to `x` (a random one for a NaN), moved a few ulps inward but
/// not past the other extreme.
fn near_float_bound<R: Rand>(rand: &mut R, x: Float, lo: Float, hi: Float) -> Float {
    let steps = below(rand, NEAR_BOUND_STEPS as usize + 1) as i64;
    let from_lo = match x.partial_cmp_num(lo) {
        Some(Ordering::Less) => true,
        Some(_) => false,
        None => rand.coinflip(0.5),
    };
    if from_lo {
        min_float(lo.step(steps), hi)
    } else {
        max_float(hi.step(-steps), lo)
    }
}

fn min_float(a: Float, b: Float) -> Float {
    if a.partial_cmp_num(b) == Some(Ordering::Greater) {
        b
    } else {
        a
    }
}

fn max_float(a: Float, b: Float) -> Float {
    if a.partial_cmp_num(b) == Some(Ordering::Less) {
        b
    } else {
        a
    }
}

/// Uniform between finite extremes half the time, else an extreme plus or minus a
/// log-uniform magnitude in 1e-6..1e6 (either sign when both ends are infinite).
fn ordinary_float<R: Rand>(rand: &mut R, lo: Float, hi: Float) -> Float {
    let (l, h) = (approx_f64(lo), approx_f64(hi));
    let magnitude = 10f64.powf(rand.next_float() * 12.0 - 6.0);
    let x = if l.is_finite() && h.is_finite() && rand.coinflip(0.5) {
        let u = rand.next_float();
        l * (1.0 - u) + h * u
    } else if l.is_finite() && (!h.is_finite() || rand.coinflip(0.5)) {
        l + magnitude
    } else if h.is_finite() {
        h - magnitude
    } else if rand.coinflip(0.5) {
        magnitude
    } else {
        -magnitude
    };
    from_f64(lo.ty, x)
}

/// `x` mirrored across the extreme it lies beyond (computed in f64).
fn reflect_float(x: Float, lo: Float, hi: Float) -> Option<Float> {
    let v = approx_f64(x);
    let mirrored = match x.partial_cmp_num(lo)? {
        Ordering::Less => 2.0 * approx_f64(lo) - v,
        _ => 2.0 * approx_f64(hi) - v,
    };
    mirrored.is_finite().then(|| from_f64(x.ty, mirrored))
}

/// The nearest f64 (f80 values beyond its range become infinities).
fn approx_f64(x: Float) -> f64 {
    match x.ty {
        FloatType::F64 => x.as_f64(),
        FloatType::F32 => f64::from(x.as_f32()),
        FloatType::F80 => x.to_string().parse().unwrap_or(f64::NAN),
    }
}

fn from_f64(ty: FloatType, x: f64) -> Float {
    match ty {
        FloatType::F64 => Float::from_f64(x),
        FloatType::F32 => Float::from_f32(x as f32),
        FloatType::F80 => Float::from_f64(x)
            .convert_exact(FloatType::F80)
            .expect("f80 holds every f64"),
    }
}

/// The integer counterpart of [`steer_float`]: near a bound, ordinary or reflected.
fn steer_int<R: Rand>(rand: &mut R, domain: &Domain, x: i128) -> i128 {
    let (lo, hi) = domain.int_extremes().expect("integer domain");
    let steps = below(rand, NEAR_BOUND_STEPS as usize + 1) as i128;
    let moved = match below(rand, 3) {
        0 if x < lo => lo + steps,
        0 => hi - steps,
        1 if hi - lo < 1_000_000 => lo + below(rand, (hi - lo + 1) as usize) as i128,
        1 => lo + 10f64.powf(rand.next_float() * 6.0) as i128,
        _ if x < lo => 2 * lo - x,
        _ => 2 * hi - x,
    };
    moved.clamp(lo, hi)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::seeded_state;
    use super::super::{float_mutations, int_mutations};
    use super::*;
    use libafl::inputs::BytesInput;
    use libafl::mutators::HavocScheduledMutator;
    use libafl::state::NopState;
    use libafl_bolts::tuples::Merge;

    /// Of `n` mutations of `start` by the field operators wrapped in [`DomainSteering`], how
    /// many left each field inside its domain (mutations that changed nothing left out).
    fn inside_counts(spec: &str, start: &[&str], n: usize) -> (Vec<usize>, usize) {
        let sig = Arc::new(Signature::parse(spec).unwrap());
        let ops = float_mutations(&sig).merge(int_mutations(&sig));
        let mut steering = DomainSteering::new(HavocScheduledMutator::new(ops), Some(&sig));
        let mut state: NopState<BytesInput> = seeded_state(7);
        let start = sig.encode_text(start).unwrap();
        let (mut inside, mut mutated) = (vec![0; sig.len()], 0);
        for _ in 0..n {
            let mut input = BytesInput::new(start.clone());
            if steering.mutate(&mut state, &mut input).unwrap() != MutationResult::Mutated {
                continue;
            }
            mutated += 1;
            let values = sig.decode(input.mutator_bytes());
            for (i, v) in values.iter().enumerate() {
                inside[i] += usize::from(sig.domain(i).is_none_or(|d| d.contains(v)));
            }
        }
        (inside, mutated)
    }

    #[test]
    fn most_mutations_of_a_unit_field_stay_inside_and_some_do_not() {
        let (inside, mutated) = inside_counts("f64[0,1]", &["0.5"], 10_000);
        assert!(mutated > 9_000, "{mutated}");
        let share = inside[0] as f64 / mutated as f64;
        assert!((0.85..0.99).contains(&share), "{inside:?} of {mutated}");
    }

    #[test]
    fn open_and_integer_domains_and_other_formats() {
        for (spec, start) in [
            ("f64(0,inf)", "1"),
            ("f32[-1,1)", "0.25"),
            ("f80(0,1)", "0.5"),
            ("i32[0,100]", "50"),
            ("u8(10,20)", "15"),
        ] {
            let (inside, mutated) = inside_counts(spec, &[start], 4_000);
            let share = inside[0] as f64 / mutated as f64;
            assert!(share > 0.85 && share < 1.0, "{spec}: {inside:?} of {mutated}");
        }
    }

    #[test]
    fn unrestricted_fields_and_signatures_are_left_alone() {
        let (inside, mutated) = inside_counts("f64[0,1],f64", &["0.5", "0.5"], 2_000);
        assert!(inside[0] as f64 > 0.85 * mutated as f64, "{inside:?}");
        assert_eq!(inside[1], mutated, "no domain: everything is inside");
        let plain = Arc::new(Signature::parse("f64").unwrap());
        assert!(DomainSteering::new((), Some(&plain)).sig.is_none());
    }

    #[test]
    fn steered_values_are_inside_and_near_the_bounds_often() {
        let sig = Signature::parse("f64[0,1]").unwrap();
        let domain = sig.domain(0).unwrap();
        let mut rand = libafl_bolts::rands::StdRand::with_seed(3);
        let mut at_bounds = 0;
        for x in [-1e-300, -0.5, 1.5, 1e308, f64::INFINITY, f64::NAN, -f64::INFINITY] {
            for _ in 0..300 {
                let bits = steer_into(&mut rand, sig.fields()[0], domain, u128::from(x.to_bits())).unwrap();
                let y = f64::from_bits(bits as u64);
                assert!((0.0..=1.0).contains(&y), "{x} -> {y}");
                at_bounds += usize::from(!(1e-12..=1.0 - 1e-12).contains(&y));
            }
        }
        assert!(at_bounds > 300, "{at_bounds}");
        assert_eq!(
            steer_into(&mut rand, sig.fields()[0], domain, u128::from(0.5f64.to_bits())),
            None
        );
    }
}
