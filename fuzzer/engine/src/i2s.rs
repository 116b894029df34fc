//! Input-to-state for floating-point code: when a logged comparison operand equals a value the
//! input carries — directly, or through what numerical code does to it (the high or low 32-bit
//! word of a double, the sign-masked word, the absolute value, the negation, a conversion
//! between float formats, an x87 widening) — write the other operand back into that input
//! field, together with its neighbours so strict inequalities flip too.
//!
//! Typed by the input signature; inputs without one get a byte-level substitution of the
//! operand's little-endian bytes.

use crate::turn_time::TurnClock;
use numfuzz_abi::cmp::{CmpLogEntry, CmpOperand, Predicate, Relation};
use numfuzz_abi::op::FloatType;
use numfuzz_abi::region_view::{Area, HeaderWord, RegionView};
use numfuzz_abi::signature::Signature;
use numfuzz_abi::value::Float;
use std::collections::HashSet;

/// One logged comparison, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comparison {
    pub operand: CmpOperand,
    pub predicate: Predicate,
    pub a: [u8; 16],
    pub b: [u8; 16],
}

impl Comparison {
    pub fn from_entry(e: &CmpLogEntry) -> Option<Comparison> {
        Some(Comparison {
            operand: CmpOperand::from_code(e.operand)?,
            predicate: Predicate::from_code(e.predicate)?,
            a: e.a,
            b: e.b,
        })
    }

    fn int(bytes: &[u8; 16], bits: u32) -> u64 {
        let v = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
        if bits >= 64 {
            v
        } else {
            v & ((1u64 << bits) - 1)
        }
    }

    fn float(bytes: &[u8; 16], ty: FloatType) -> Float {
        match ty {
            FloatType::F32 => Float::from_f32(f32::from_le_bytes(bytes[..4].try_into().expect("4"))),
            FloatType::F64 => Float::from_f64(f64::from_le_bytes(bytes[..8].try_into().expect("8"))),
            FloatType::F80 => Float::from_f80_bytes(bytes[..10].try_into().expect("10")),
        }
    }

    /// Whether values next to the target matter (order comparisons flip one step away).
    fn ordered(&self) -> bool {
        !matches!(self.predicate.relation(), Relation::Eq | Relation::Ne | Relation::None)
    }
}

/// Collects distinct candidate inputs up to a limit.
struct Candidates<'a> {
    original: &'a [u8],
    seen: HashSet<Vec<u8>>,
    out: Vec<Vec<u8>>,
    limit: usize,
}

impl Candidates<'_> {
    fn full(&self) -> bool {
        self.out.len() >= self.limit
    }

    fn push(&mut self, input: Vec<u8>) {
        if !self.full() && input != self.original && self.seen.insert(input.clone()) {
            self.out.push(input);
        }
    }

    /// The input with `bytes` written at `at`.
    fn with(&mut self, at: usize, bytes: &[u8]) {
        let mut v = self.original.to_vec();
        if v.len() < at + bytes.len() {
            v.resize(at + bytes.len(), 0);
        }
        v[at..at + bytes.len()].copy_from_slice(bytes);
        self.push(v);
    }
}

fn encode(f: Float) -> Vec<u8> {
    match f.ty {
        FloatType::F32 => (f.bits as u32).to_le_bytes().to_vec(),
        FloatType::F64 => (f.bits as u64).to_le_bytes().to_vec(),
        FloatType::F80 => f.to_f80_bytes().to_vec(),
    }
}

/// `target` and, for order comparisons, its neighbours, as values of the field's format.
fn around(target: Float, field: FloatType, ordered: bool) -> Vec<Float> {
    let t = target.convert_exact(field).unwrap_or_else(|| round_to(target, field));
    if ordered {
        vec![t, t.step(1), t.step(-1)]
    } else {
        vec![t]
    }
}

/// `x` rounded to nearest in another format.
fn round_to(x: Float, ty: FloatType) -> Float {
    match x.decompose() {
        Some((m, e)) => numfuzz_abi::decimal::round_to_format(
            ty,
            x.is_negative(),
            &num_bigint::BigUint::from(m),
            e,
            numfuzz_abi::decimal::Rounding::NearestEven,
        )
        .expect("rounding never fails"),
        None => x.convert_exact(ty).unwrap_or(Float::quiet_nan(ty)),
    }
}

/// Float field `v` against a float comparison of format `cty` whose operand `x` is compared
/// with `y`: direct (also through a format conversion), absolute value, negation.
fn float_vs_float(c: &mut Candidates<'_>, at: usize, v: Float, x: Float, y: Float, ordered: bool) {
    let as_cmp = |f: Float| f.convert_exact(x.ty).unwrap_or_else(|| round_to(f, x.ty));
    let vx = as_cmp(v);
    if vx.is_nan() || x.is_nan() || y.is_nan() {
        return;
    }
    let field = v.ty;
    if vx == x {
        for t in around(y, field, ordered) {
            c.with(at, &encode(t));
        }
    }
    if vx.abs() == x && vx != x {
        for t in around(y, field, ordered) {
            c.with(at, &encode(t.with_sign(v.is_negative())));
        }
    }
    if vx.neg() == x {
        for t in around(y.neg(), field, ordered) {
            c.with(at, &encode(t));
        }
    }
}

/// Puts a new value of an integer view back into a float's bits.
type PutWord = Box<dyn Fn(u64) -> u128>;

/// Integer views of a float field's bits that fdlibm-style code compares: (value, how to
/// put a new value back into the bits).
fn words(v: Float) -> Vec<(u64, PutWord)> {
    let bits = v.bits;
    match v.ty {
        FloatType::F64 => {
            let hi = (bits >> 32) as u64;
            let lo = (bits & 0xffff_ffff) as u64;
            let sign = hi & 0x8000_0000;
            vec![
                (bits as u64, Box::new(|n| n as u128)),
                (hi, Box::new(move |n| ((n & 0xffff_ffff) as u128) << 32 | lo as u128)),
                (
                    hi & 0x7fff_ffff,
                    Box::new(move |n| (((n & 0x7fff_ffff) | sign) as u128) << 32 | lo as u128),
                ),
                (lo, Box::new(move |n| (hi as u128) << 32 | (n & 0xffff_ffff) as u128)),
            ]
        }
        FloatType::F32 => {
            let sign = bits as u64 & 0x8000_0000;
            vec![
                (bits as u64, Box::new(|n| (n & 0xffff_ffff) as u128)),
                (
                    bits as u64 & 0x7fff_ffff,
                    Box::new(move |n| ((n & 0x7fff_ffff) | sign) as u128),
                ),
            ]
        }
        FloatType::F80 => {
            let se = (bits >> 64) as u64 & 0xffff;
            let mant = bits as u64;
            vec![
                (se, Box::new(move |n| ((n & 0xffff) as u128) << 64 | mant as u128)),
                (
                    se & 0x7fff,
                    Box::new(move |n| (((n & 0x7fff) | (se & 0x8000)) as u128) << 64 | mant as u128),
                ),
                (
                    mant >> 32,
                    Box::new(move |n| (se as u128) << 64 | ((n & 0xffff_ffff) << 32 | mant & 0xffff_ffff) as u128),
                ),
            ]
        }
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Candidate inputs for one tracing run's comparisons (at most `limit`).
pub fn candidates(signature: Option<&Signature>, input: &[u8], cmps: &[Comparison], limit: usize) -> Vec<Vec<u8>> {
    let mut c = Candidates {
        original: input,
        seen: HashSet::new(),
        out: Vec::new(),
        limit,
    };
    match signature {
        Some(sig) => typed(&mut c, sig, input, cmps),
        None => untyped(&mut c, cmps),
    }
    c.out
}

fn typed(c: &mut Candidates<'_>, sig: &Signature, input: &[u8], cmps: &[Comparison]) {
    let values = sig.decode(input);
    for cmp in cmps {
        for (x_bytes, y_bytes) in [(&cmp.a, &cmp.b), (&cmp.b, &cmp.a)] {
            for (i, value) in values.iter().enumerate() {
                if c.full() {
                    return;
                }
                let at = sig.range(i).start;
                match (value, cmp.operand.float_type(), cmp.operand.int_bits()) {
                    (numfuzz_abi::Value::Float(v), Some(cty), _) => {
                        let (x, y) = (Comparison::float(x_bytes, cty), Comparison::float(y_bytes, cty));
                        float_vs_float(c, at, *v, x, y, cmp.ordered());
                    }
                    (numfuzz_abi::Value::Float(v), None, Some(w)) => {
                        let (x, y) = (Comparison::int(x_bytes, w), Comparison::int(y_bytes, w));
                        for (word, put) in words(*v) {
                            if word & mask(w) == x {
                                let steps: &[i64] = if cmp.ordered() { &[0, 1, -1] } else { &[0] };
                                for s in steps {
                                    let n = y.wrapping_add_signed(*s) & mask(w);
                                    // Keep the word's bits above the comparison's width.
                                    let bits = put((word & !mask(w)) | n);
                                    c.with(at, &encode(Float::from_bits(v.ty, bits)));
                                }
                            }
                        }
                    }
                    (numfuzz_abi::Value::Int { ty, value: v }, _, Some(w)) => {
                        let (x, y) = (Comparison::int(x_bytes, w), Comparison::int(y_bytes, w));
                        if (*v as u64) & mask(w) == x {
                            let steps: &[i64] = if cmp.ordered() { &[0, 1, -1] } else { &[0] };
                            for s in steps {
                                let n = y.wrapping_add_signed(*s);
                                // Sign-extend from the comparison's width into the field.
                                let ext = if w < 64 && (n >> (w - 1)) & 1 == 1 {
                                    n | !mask(w)
                                } else {
                                    n & mask(w)
                                };
                                c.with(at, &(ext as i128).to_le_bytes()[..ty.size()]);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

/// No signature: find the operand's little-endian bytes anywhere in the input and put the
/// other operand there.
fn untyped(c: &mut Candidates<'_>, cmps: &[Comparison]) {
    for cmp in cmps {
        let n = cmp.operand.size();
        for (x, y) in [(&cmp.a, &cmp.b), (&cmp.b, &cmp.a)] {
            let (x, y) = (&x[..n], &y[..n]);
            if x.iter().all(|&b| b == 0) {
                // Zero bytes are everywhere; substituting them is noise.
                continue;
            }
            let original = c.original.to_vec();
            for at in 0..original.len().saturating_sub(n - 1) {
                if c.full() {
                    return;
                }
                if &original[at..at + n] == x {
                    c.with(at, y);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f64cmp(pred: Predicate, a: f64, b: f64) -> Comparison {
        let mut ea = [0u8; 16];
        let mut eb = [0u8; 16];
        ea[..8].copy_from_slice(&a.to_le_bytes());
        eb[..8].copy_from_slice(&b.to_le_bytes());
        Comparison {
            operand: CmpOperand::F64,
            predicate: pred,
            a: ea,
            b: eb,
        }
    }

    fn intcmp(pred: Predicate, operand: CmpOperand, a: u64, b: u64) -> Comparison {
        let mut ea = [0u8; 16];
        let mut eb = [0u8; 16];
        ea[..8].copy_from_slice(&a.to_le_bytes());
        eb[..8].copy_from_slice(&b.to_le_bytes());
        Comparison {
            operand,
            predicate: pred,
            a: ea,
            b: eb,
        }
    }

    fn f64s(inputs: &[Vec<u8>]) -> Vec<f64> {
        inputs
            .iter()
            .map(|i| f64::from_le_bytes(i[..8].try_into().unwrap()))
            .collect()
    }

    #[test]
    fn exact_double_equality_is_solved_directly() {
        let sig = Signature::parse("f64").unwrap();
        let input = 2.5f64.to_le_bytes().to_vec();
        let e = std::f64::consts::E;
        let got = f64s(&candidates(Some(&sig), &input, &[f64cmp(Predicate::Oeq, 2.5, e)], 16));
        assert_eq!(got, vec![e]);
    }

    #[test]
    fn strict_inequalities_get_neighbours() {
        let sig = Signature::parse("f64").unwrap();
        let input = 1.0f64.to_le_bytes().to_vec();
        let got = f64s(&candidates(Some(&sig), &input, &[f64cmp(Predicate::Olt, 1.0, 1e6)], 16));
        assert!(got.contains(&1e6) && got.contains(&f64::from_bits(1e6f64.to_bits() + 1)));
        assert!(got.contains(&f64::from_bits(1e6f64.to_bits() - 1)));
    }

    #[test]
    fn absolute_value_and_negation() {
        let sig = Signature::parse("f64").unwrap();
        let input = (-3.0f64).to_le_bytes().to_vec();
        // fabs(x) == 7.25 seen as 3.0 vs 7.25: keep the sign.
        let got = f64s(&candidates(
            Some(&sig),
            &input,
            &[f64cmp(Predicate::Oeq, 3.0, 7.25)],
            16,
        ));
        assert!(got.contains(&-7.25), "{got:?}");
        // -x == 9.5 seen as 3.0 vs 9.5.
        let got = f64s(&candidates(Some(&sig), &input, &[f64cmp(Predicate::Oeq, 3.0, 9.5)], 16));
        assert!(got.contains(&-9.5), "{got:?}");
    }

    #[test]
    fn high_word_equality_and_low_word_bound_fdlibm_style() {
        let sig = Signature::parse("f64").unwrap();
        let x = 1.0f64;
        let input = x.to_le_bytes().to_vec();
        let hx = x.to_bits() >> 32;
        // if (ix == 0x408633ce): sign-masked high word compared as i32.
        let got = candidates(
            Some(&sig),
            &input,
            &[intcmp(Predicate::IEq, CmpOperand::I32, hx, 0x4086_33ce)],
            16,
        );
        let bits: Vec<u64> = got
            .iter()
            .map(|i| u64::from_le_bytes(i[..8].try_into().unwrap()))
            .collect();
        assert!(
            bits.iter().any(|b| b >> 32 == 0x4086_33ce && b & 0xffff_ffff == 0),
            "{bits:x?}"
        );
        // if (lx <= 0x8fb9f87d): the low word, with neighbours for the bound.
        let y = f64::from_bits(0x4086_33ce_0000_0000);
        let input = y.to_le_bytes().to_vec();
        let got = candidates(
            Some(&sig),
            &input,
            &[intcmp(Predicate::IUle, CmpOperand::I32, 0, 0x8fb9_f87d)],
            16,
        );
        let bits: Vec<u64> = got
            .iter()
            .map(|i| u64::from_le_bytes(i[..8].try_into().unwrap()))
            .collect();
        assert!(
            bits.contains(&0x4086_33ce_8fb9_f87d) && bits.contains(&0x4086_33ce_8fb9_f87e),
            "{bits:x?}"
        );
    }

    #[test]
    fn sign_masked_word_keeps_the_sign() {
        let sig = Signature::parse("f64").unwrap();
        let input = (-1.0f64).to_le_bytes().to_vec();
        let masked = ((-1.0f64).to_bits() >> 32) & 0x7fff_ffff;
        let got = candidates(
            Some(&sig),
            &input,
            &[intcmp(Predicate::ISgt, CmpOperand::I32, masked, 0x7ff0_0000)],
            16,
        );
        let vals = f64s(&got);
        assert!(vals.contains(&f64::NEG_INFINITY), "{vals:?}");
    }

    #[test]
    fn float_against_double_and_long_double_comparisons() {
        // (float)x == 0.1f with an f32 field read into a double comparison.
        let sig = Signature::parse("f32").unwrap();
        let input = 0.5f32.to_le_bytes().to_vec();
        let cmp = f64cmp(Predicate::Oeq, 0.5, 0.1f32 as f64);
        let got = candidates(Some(&sig), &input, &[cmp], 16);
        assert_eq!(got, vec![0.1f32.to_le_bytes().to_vec()]);
        // An f80 field compared as a long double.
        let sig = Signature::parse("f80").unwrap();
        let x = Float::parse(FloatType::F80, "1.5").unwrap();
        let y = Float::parse(FloatType::F80, "2.718281828459045235360287471352662").unwrap();
        let mut a = [0u8; 16];
        let mut b = [0u8; 16];
        a[..10].copy_from_slice(&x.to_f80_bytes());
        b[..10].copy_from_slice(&y.to_f80_bytes());
        let cmp = Comparison {
            operand: CmpOperand::F80,
            predicate: Predicate::Oeq,
            a,
            b,
        };
        let got = candidates(Some(&sig), &x.to_f80_bytes(), &[cmp], 16);
        assert_eq!(got, vec![y.to_f80_bytes().to_vec()]);
    }

    #[test]
    fn integer_fields_and_untyped_inputs() {
        let sig = Signature::parse("f64,i32").unwrap();
        let mut input = 1.0f64.to_le_bytes().to_vec();
        input.extend_from_slice(&7i32.to_le_bytes());
        let got = candidates(
            Some(&sig),
            &input,
            &[intcmp(Predicate::IEq, CmpOperand::I32, 7, (-42i32) as u32 as u64)],
            16,
        );
        assert_eq!(got.len(), 1);
        assert_eq!(i32::from_le_bytes(got[0][8..12].try_into().unwrap()), -42);

        let input = b"xxxxMAGIyy".to_vec();
        let cmp = intcmp(
            Predicate::IEq,
            CmpOperand::I32,
            u32::from_le_bytes(*b"MAGI") as u64,
            u32::from_le_bytes(*b"CODE") as u64,
        );
        assert_eq!(candidates(None, &input, &[cmp], 16), vec![b"xxxxCODEyy".to_vec()]);
    }

    #[test]
    fn the_limit_holds_and_the_original_is_never_a_candidate() {
        let sig = Signature::parse("f64").unwrap();
        let input = 1.0f64.to_le_bytes().to_vec();
        let cmps: Vec<Comparison> = (0..50).map(|k| f64cmp(Predicate::Olt, 1.0, k as f64 + 10.0)).collect();
        assert_eq!(candidates(Some(&sig), &input, &cmps, 20).len(), 20);
        assert!(candidates(Some(&sig), &input, &[f64cmp(Predicate::Oeq, 1.0, 1.0)], 20).is_empty());
    }
}

/// The comparison log and mode word of numfuzz's region (shared memory or the runtime's own).
/// The target writes the log only during a run and the fuzzer reads it only between runs (the
/// executor waits for the run).
#[derive(Clone, Copy, Debug)]
pub struct CmpTrace {
    region: RegionView,
    log: Area,
    capacity: usize,
}

impl CmpTrace {
    /// The region's operand log, if it has one.
    pub fn new(region: RegionView) -> Option<CmpTrace> {
        let (log, capacity) = region.cmp_log()?;
        Some(CmpTrace { region, log, capacity })
    }

    /// Sets what the next runs record; they run precisely (the fast bit of the word is cleared).
    pub fn set_mode(&self, mode: u8) {
        // The target reads it at the start of each run.
        self.region
            .word(HeaderWord::CmpMode)
            .store(mode as u32, std::sync::atomic::Ordering::Release);
    }

    /// Makes the next runs fast (`MODE_FAST`), as a fast turn's mutants run.
    pub fn set_fast(&self) {
        crate::run_mode::RunModeWord::new(self.region).set_fast(true);
    }

    /// The comparisons the last tracing run logged.
    pub fn read(&self) -> Vec<Comparison> {
        use numfuzz_abi::cmp::CmpLogHeader;
        // SAFETY: the view's log area holds a header and `capacity` entries, and no run writes
        // it while the fuzzer reads; unaligned reads because the region is bytes.
        unsafe {
            let header = self.log.ptr.cast::<CmpLogHeader>().read_unaligned();
            let entries = self
                .log
                .ptr
                .add(std::mem::size_of::<CmpLogHeader>())
                .cast::<CmpLogEntry>();
            (0..(header.count as usize).min(self.capacity))
                .filter_map(|k| Comparison::from_entry(&entries.add(k).read_unaligned()))
                .collect()
        }
    }
}

/// Candidate inputs tried per traced testcase.
pub const CANDIDATES_PER_TESTCASE: usize = 256;

/// The input-to-state stage: the first time a testcase is fuzzed, one tracing run logs its
/// comparisons' operands, and each candidate built from them is evaluated like any input.
///
/// The tracing run is precise (the comparison log is the precise copies'); the candidates run
/// fast, as a fast turn's mutants do. A candidate is there for the branch it flips, an edge the
/// fast run sees, and a flag it raises re-runs it precisely unless the runtime's key or
/// throttle spares that; its distances are measured on its own first turn if it is kept. Run
/// precisely, the candidates of GSL's fermi_dirac_int took 36-64 % of a 20 s campaign: a
/// candidate that sets `j` to a bound of 10,000 runs a loop for half a second, and the stage's
/// budget is checked between candidates. Fast, and with the runtime's throttle weighing a
/// fruitless re-run by its cost (`rerun_throttle.rs`), the campaign ran 2.4-2.8x the executions
/// and found more exceptions (101-103 against 92-96) in paired runs of 20 s on 2026-12-06.
/// Either change alone bought nothing: fast candidates that raised a flag were re-run anyway,
/// and the weighted throttle has no say over runs the fuzzer asks to be precise.
pub struct I2SStage {
    trace: Option<CmpTrace>,
    signature: Option<std::sync::Arc<Signature>>,
    /// Testcases traced, candidates evaluated, candidates kept (corpus or finding): the
    /// screen's input-to-state line.
    counts: [u64; 3],
    /// No candidate runs after it (a testcase's 256 can take seconds on a slow target).
    deadline: Option<std::time::SystemTime>,
    /// The campaign's typical mutant cost: a testcase's tracing run and candidates stop after
    /// as long as [`CANDIDATES_PER_TESTCASE`] mutants at that cost.
    clock: Option<TurnClock>,
    /// Candidates run precisely too (`--precise`); by default they run fast.
    precise_candidates: bool,
}

/// User-stat names of the input-to-state counts (testcases traced, candidates tried, kept).
pub const I2S_STATS: [&str; 3] = ["i2s_traced", "i2s_tried", "i2s_kept"];

impl I2SStage {
    /// `trace` is `None` when comparison solving is off (`--no-cmp`) or the target has no
    /// comparison log.
    pub fn new(trace: Option<CmpTrace>, signature: Option<std::sync::Arc<Signature>>) -> Self {
        I2SStage {
            trace,
            signature,
            counts: [0; 3],
            deadline: None,
            clock: None,
            precise_candidates: false,
        }
    }

    /// Runs the candidates precisely (`--precise`, where every run is).
    pub fn precise_candidates(self, precise: bool) -> Self {
        I2SStage {
            precise_candidates: precise,
            ..self
        }
    }

    /// Stops a slow testcase's candidates by the campaign's typical mutant cost.
    pub fn timed(self, clock: TurnClock) -> Self {
        I2SStage {
            clock: Some(clock),
            ..self
        }
    }

    /// Runs no candidate after `deadline`.
    pub fn until(self, deadline: Option<std::time::SystemTime>) -> Self {
        I2SStage { deadline, ..self }
    }
}

mod stage {
    use super::{candidates, I2SStage, CANDIDATES_PER_TESTCASE, I2S_STATS};
    use crate::client_types::{Fuzzer, Mgr, Observers, State};
    use crate::meta::Traced;
    use crate::stop::past_deadline;
    use crate::user_stats::fire_count;
    use libafl::corpus::HasCurrentCorpusId;
    use libafl::executors::{Executor, HasObservers};
    use libafl::fuzzer::ExecuteInputResult;
    use libafl::fuzzer::{Evaluator, ExecutesInput};
    use libafl::inputs::{BytesInput, HasTargetBytes};
    use libafl::stages::Stage;
    use libafl::state::HasCurrentTestcase;
    use libafl::{Error, HasMetadata};
    use numfuzz_abi::cmp::{CMP_DISTANCES, CMP_LOG};

    impl<E> Stage<E, Mgr, State, Fuzzer> for I2SStage
    where
        E: Executor<Mgr, BytesInput, State, Fuzzer> + HasObservers<Observers = Observers>,
    {
        fn perform(
            &mut self,
            fuzzer: &mut Fuzzer,
            executor: &mut E,
            state: &mut State,
            mgr: &mut Mgr,
        ) -> Result<(), Error> {
            let Some(trace) = self.trace else { return Ok(()) };
            if state.current_corpus_id()?.is_none() {
                return Ok(());
            }
            // A testcase whose runs cost hundreds of times the typical mutant gets few candidates,
            // or no tracing run at all when its own run was that slow (fermi_dirac_int's inputs
            // of half a second took a third of its campaign here).
            let budget = (self.clock.as_ref()).and_then(|c| c.budget(CANDIDATES_PER_TESTCASE as f64));
            {
                let mut tc = state.current_testcase_mut()?;
                if tc.has_metadata::<Traced>() {
                    return Ok(());
                }
                tc.add_metadata(Traced);
                // Its execution time (LibAFL's time feedback), precise re-run included.
                if tc.exec_time().zip(budget).is_some_and(|(cost, budget)| cost > budget) {
                    return Ok(());
                }
            }
            let input = state.current_input_cloned()?;
            let started = std::time::Instant::now();
            trace.set_mode(CMP_DISTANCES | CMP_LOG);
            let traced = fuzzer.execute_input(state, executor, mgr, &input);
            trace.set_mode(CMP_DISTANCES);
            if !self.precise_candidates {
                trace.set_fast();
            }
            traced?;
            let cmps = trace.read();
            let bytes = input.target_bytes().to_vec();
            self.counts[0] += 1;
            let all = candidates(self.signature.as_deref(), &bytes, &cmps, CANDIDATES_PER_TESTCASE);
            for candidate in all {
                let out_of_time = budget.is_some_and(|b| started.elapsed() > b);
                if out_of_time || past_deadline(self.deadline) {
                    break;
                }
                let (result, _) = fuzzer.evaluate_input(state, executor, mgr, &BytesInput::new(candidate))?;
                self.counts[1] += 1;
                self.counts[2] += u64::from(result != ExecuteInputResult::None);
            }
            for (name, count) in I2S_STATS.iter().zip(self.counts) {
                fire_count(mgr, state, name, count)?;
            }
            Ok(())
        }
    }

    restarts_from_scratch!(I2SStage);
}
