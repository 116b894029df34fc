//! The Alternating Variable Method (FloPSy's search) over an input's typed fields, minimising
//! the exact gap of one slot.
//!
//! A field moves along its ordered values: ulps for floats (crossing zero and binades; a step
//! of 2^52 ulps is one binade of an f64, so large steps are the exponent moves), units for
//! integers. Per field, steps of 2^k are tried upward from k = 0 in both directions until they
//! stop improving, the best is taken and then repeated while it improves (the pattern move).
//! When no single field improves, pairs of fields move together by the same step (a relation
//! such as `x * y == c` is followed by moving x up as y goes down); then by unequal steps of a
//! few ulps each (the lattice moves: a rounding window narrower than one ulp of either field,
//! as fdlibm pow's `z == -1075` with the exact y·log2(x) just above it, is met only where x's
//! and y's ulps nearly cancel in some other ratio than 1:1); and when nothing improves, a few
//! sideways moves (no worse) leave a plateau before the search gives up. Where a round
//! improves nothing and no step of a float field measured another gap (only integer fields
//! such as a mode switch do), the input is on a flat plateau, which sideways moves do not
//! leave: the search ends there ([`SearchEnding::Flat`]).

use libafl::Error;
use libafl_bolts::rands::Rand;
use numfuzz_abi::signature::{FieldType, Signature};
use numfuzz_abi::value::{Float, Value};

/// A slot's gap in one run (`f64::INFINITY` when the run did not measure it).
pub type Gap = f64;

/// Sideways moves tried once nothing improves, before the search stalls.
const SIDEWAYS_MOVES: usize = 24;

/// Executions without a lower gap after which the search stalls. Every move of a round that
/// changes nothing costs a whole ladder (64 steps for an f64), so a round on a plateau costs
/// hundreds of executions; the sign flip and one more round (fdlibm pow's e_pow.c:281 takes
/// 1636 executions from its plateau) fit, a walk over a plateau that never tilts does not.
const PLATEAU_EXECS: u64 = 2048;

/// Largest step, in positions, of either field of a lattice move.
const LATTICE_REACH: i128 = 4;

/// Why a search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchEnding {
    /// The gap reached 0: the exception happened, the comparison went the other way.
    Reached,
    /// No move improves any more.
    Stalled,
    /// A round improved nothing and every step of a float field measured the same gap or none:
    /// a flat plateau (GSL's airy.c:274 at x = -DBL_MAX, where 16/x^3 + 1 is 1 for every
    /// neighbour of x and the divisor with it).
    Flat,
    /// The execution budget is spent.
    Budget,
}

/// Ends the search early (inside the move loops).
enum Halt {
    SearchEnding(SearchEnding),
    Failed(Error),
}

impl From<Error> for Halt {
    fn from(e: Error) -> Self {
        Halt::Failed(e)
    }
}

/// One descent from a starting input.
pub struct Search<'s, R> {
    signature: &'s Signature,
    rand: R,
    /// The best input so far and its gap.
    pub best: Vec<u8>,
    pub best_gap: Gap,
    /// Executions spent, and when the gap last went down.
    pub execs: u64,
    improved_at: u64,
    budget: u64,
    /// A ladder of float fields measured another gap than its origin's, this round.
    float_slope: bool,
    /// Per field: no move changes it.
    held: Vec<bool>,
}

/// `input` with field `field` moved by `delta` positions, or `None` when the move changes
/// nothing (a NaN, a saturated value) .
pub fn moved(signature: &Signature, input: &[u8], field: usize, delta: i128) -> Option<Vec<u8>> {
    let mut values = signature.decode(input);
    let new = match values[field] {
        Value::Float(f) if f.is_nan() => return None,
        Value::Float(f) => {
            let inf = Float::infinity(f.ty, false).ord();
            let ord = f.ord().saturating_add(delta).clamp(-inf, inf);
            Value::Float(Float::from_ord(f.ty, ord))
        }
        Value::Int { ty, value } => {
            let (lo, hi) = ty.int_range().expect("an integer field");
            Value::Int {
                ty,
                value: value.saturating_add(delta).clamp(lo, hi),
            }
        }
    };
    if new == values[field] {
        return None;
    }
    values[field] = new;
    Some(encoded(signature, input, &values))
}

/// `values` encoded in place of `input`'s fields; bytes past the signature (if any) travel
/// unchanged.
fn encoded(signature: &Signature, input: &[u8], values: &[Value]) -> Vec<u8> {
    let mut out = signature.encode(values).expect("values of the signature's own types");
    if input.len() > out.len() {
        out.extend_from_slice(&input[out.len()..]);
    }
    out
}

/// Integer fields whose declared domain holds at most this many values are switches (a mode,
/// a flag, a variant): a descent tries their other values from where a search ended.
const SWITCH_VALUES: i128 = 8;

/// `input` with each switch field (a declared integer domain of at most [`SWITCH_VALUES`]
/// values) set in turn to each of its other values, lowest first, with the field. A search
/// from a switched input holds the field ([`Search::holding`]). A search moves such a field
/// like any other and keeps the value whose gap is lowest where it is, which need not be the
/// value whose root has an exact solution: GSL airy_Ai's mode 1 and 2 evaluate the modulus'
/// Chebyshev series to a lower order, and no double within a million ulps of that root makes
/// it exactly 0, while mode 0's root has three; on the plateau of a huge |x| mode 1 is
/// marginally closer, so the search took mode 1 and ended on its root.
pub fn switched(signature: &Signature, input: &[u8]) -> Vec<(Vec<u8>, usize)> {
    let values = signature.decode(input);
    let mut out = Vec::new();
    for (field, value) in values.iter().enumerate() {
        let Value::Int { ty, value: current } = *value else {
            continue;
        };
        let Some((lo, hi)) = signature.domain(field).and_then(|d| d.int_extremes()) else {
            continue;
        };
        if hi - lo >= SWITCH_VALUES {
            continue;
        }
        for other in (lo..=hi).filter(|&v| v != current) {
            let mut moved = values.clone();
            moved[field] = Value::Int { ty, value: other };
            out.push((encoded(signature, input, &moved), field));
        }
    }
    out
}

/// `input` with float field `field` negated, or `None` for an integer field, a zero or a NaN.
pub fn mirrored(signature: &Signature, input: &[u8], field: usize) -> Option<Vec<u8>> {
    let mut values = signature.decode(input);
    let Value::Float(f) = values[field] else { return None };
    if f.is_nan() || f.ord() == 0 {
        return None;
    }
    values[field] = Value::Float(Float::from_ord(f.ty, -f.ord()));
    Some(encoded(signature, input, &values))
}

/// Largest k of a 2^k step for a field: its positions span about 2^bits.
fn max_step_pow(field: FieldType) -> u32 {
    match field {
        FieldType::Float(t) => numfuzz_abi::value::FloatFormat::of(t).width - 1,
        int => int.size() as u32 * 8 - 1,
    }
}

impl<'s, R: Rand> Search<'s, R> {
    /// A search from `start` (whose gap `start_gap` is known) spending at most `budget`
    /// executions.
    pub fn new(signature: &'s Signature, rand: R, start: Vec<u8>, start_gap: Gap, budget: u64) -> Self {
        Search {
            signature,
            rand,
            best: start,
            best_gap: start_gap,
            execs: 0,
            improved_at: 0,
            budget,
            float_slope: false,
            held: vec![false; signature.len()],
        }
    }

    /// The same search with `field` held at its start's value.
    pub fn holding(mut self, field: usize) -> Self {
        self.held[field] = true;
        self
    }

    fn movable(&self, field: usize) -> bool {
        !self.held[field]
    }

    /// Runs the search; `eval` executes one input and returns the probed gap.
    pub fn run(&mut self, eval: &mut impl FnMut(&[u8]) -> Result<Gap, Error>) -> Result<SearchEnding, Error> {
        match self.descend(eval) {
            Ok(ending) | Err(Halt::SearchEnding(ending)) => Ok(ending),
            Err(Halt::Failed(e)) => Err(e),
        }
    }

    fn descend(&mut self, eval: &mut impl FnMut(&[u8]) -> Result<Gap, Error>) -> Result<SearchEnding, Halt> {
        let fields = self.signature.len();
        if fields == 0 {
            return Ok(SearchEnding::Stalled);
        }
        let mut sideways = 0;
        loop {
            if self.best_gap == 0.0 {
                return Ok(SearchEnding::Reached);
            }
            let mut improved = false;
            self.float_slope = false;
            let first = self.rand.below(core::num::NonZero::new(fields).expect("fields > 0"));
            for i in 0..fields {
                let field = (first + i) % fields;
                if self.movable(field) {
                    improved |= self.field_moves(eval, field)?;
                }
            }
            if !improved {
                improved = self.pair_moves(eval)?;
            }
            if !improved {
                improved = self.lattice_moves(eval)?;
            }
            if !improved && !self.float_slope && self.signature.fields().iter().any(|f| f.float_type().is_some()) {
                return Ok(SearchEnding::Flat);
            }
            if !improved {
                if sideways >= SIDEWAYS_MOVES {
                    return Ok(SearchEnding::Stalled);
                }
                self.sideways_move(eval, sideways)?;
                sideways += 1;
            }
        }
    }

    /// Counts one execution, or ends the search: the budget is spent, or the gap has not gone
    /// down for [`PLATEAU_EXECS`].
    fn spend(&mut self) -> Result<(), Halt> {
        if self.execs >= self.budget {
            return Err(Halt::SearchEnding(SearchEnding::Budget));
        }
        if self.execs - self.improved_at >= PLATEAU_EXECS {
            return Err(Halt::SearchEnding(SearchEnding::Stalled));
        }
        self.execs += 1;
        Ok(())
    }

    /// The new best input (a lower gap, or an equal one off a plateau).
    fn take(&mut self, candidate: Vec<u8>, gap: Gap) {
        if gap < self.best_gap {
            self.improved_at = self.execs;
        }
        self.best = candidate;
        self.best_gap = gap;
    }

    /// Executes `candidate`; takes it if it is better. Returns its gap.
    fn try_input(
        &mut self,
        eval: &mut impl FnMut(&[u8]) -> Result<Gap, Error>,
        candidate: Vec<u8>,
    ) -> Result<Gap, Halt> {
        self.spend()?;
        let gap = eval(&candidate)?;
        if gap < self.best_gap {
            self.take(candidate, gap);
            if gap == 0.0 {
                return Err(Halt::SearchEnding(SearchEnding::Reached));
            }
        }
        Ok(gap)
    }

    /// The best step 2^k (k going up until the gap stops improving) in each direction of
    /// one field, or of two fields moving together (`signs` per field); then the pattern
    /// move. Returns whether the best input changed.
    fn ladder(
        &mut self,
        eval: &mut impl FnMut(&[u8]) -> Result<Gap, Error>,
        moves: &[(usize, i128)],
    ) -> Result<bool, Halt> {
        let kmax = moves
            .iter()
            .map(|&(f, _)| max_step_pow(self.signature.fields()[f]))
            .min()
            .unwrap_or(0);
        let start_gap = self.best_gap;
        let origin = self.best.clone();
        let float_moves = moves
            .iter()
            .all(|&(f, _)| self.signature.fields()[f].float_type().is_some());
        // Best (gap, k) over the ladder; the search keeps the best input itself.
        let mut best_k: Option<u32> = None;
        let mut best_gap = start_gap;
        for k in 0..=kmax {
            let Some(candidate) = self.shift(&origin, moves, 1i128 << k) else {
                continue;
            };
            // Not through `try_input`'s acceptance: compare against the ladder's origin.
            self.spend()?;
            let gap = eval(&candidate)?;
            self.float_slope |= float_moves && gap.is_finite() && gap != start_gap;
            if gap < best_gap {
                best_gap = gap;
                best_k = Some(k);
                if gap < self.best_gap {
                    self.take(candidate, gap);
                }
                if gap == 0.0 {
                    return Err(Halt::SearchEnding(SearchEnding::Reached));
                }
            } else if best_k.is_some() {
                // Past the basin: larger steps overshoot.
                break;
            }
        }
        let Some(k) = best_k else { return Ok(false) };
        // Pattern move: repeat the step while it improves.
        while let Some(candidate) = self.shift(&self.best.clone(), moves, 1i128 << k) {
            let before = self.best_gap;
            self.try_input(eval, candidate)?;
            if self.best_gap >= before {
                break;
            }
        }
        Ok(self.best_gap < start_gap)
    }

    /// `input` with each `(field, sign)` moved by `sign * step`.
    fn shift(&self, input: &[u8], moves: &[(usize, i128)], step: i128) -> Option<Vec<u8>> {
        let mut out = input.to_vec();
        for &(field, sign) in moves {
            out = moved(self.signature, &out, field, sign * step)?;
        }
        Some(out)
    }

    fn field_moves(&mut self, eval: &mut impl FnMut(&[u8]) -> Result<Gap, Error>, field: usize) -> Result<bool, Halt> {
        let up = self.ladder(eval, &[(field, 1)])?;
        let down = self.ladder(eval, &[(field, -1)])?;
        Ok(up || down)
    }

    fn pair_moves(&mut self, eval: &mut impl FnMut(&[u8]) -> Result<Gap, Error>) -> Result<bool, Halt> {
        let n = self.signature.len();
        let held = self.held.clone();
        let mut improved = false;
        for i in 0..n {
            for j in (i + 1..n).filter(|&j| !held[i] && !held[j]) {
                for (si, sj) in [(1, -1), (-1, 1), (1, 1), (-1, -1)] {
                    improved |= self.ladder(eval, &[(i, si), (j, sj)])?;
                }
            }
        }
        Ok(improved)
    }

    /// Every pair of fields moved by (a, b) positions with 1 <= |a|, |b| <= LATTICE_REACH and
    /// |a| != |b| (equal steps are the pair moves'), each taken if better. Returns whether the
    /// best input changed.
    fn lattice_moves(&mut self, eval: &mut impl FnMut(&[u8]) -> Result<Gap, Error>) -> Result<bool, Halt> {
        let n = self.signature.len();
        let held = self.held.clone();
        let start_gap = self.best_gap;
        for i in 0..n {
            for j in (i + 1..n).filter(|&j| !held[i] && !held[j]) {
                for a in -LATTICE_REACH..=LATTICE_REACH {
                    for b in -LATTICE_REACH..=LATTICE_REACH {
                        if a == 0 || b == 0 || a.abs() == b.abs() {
                            continue;
                        }
                        let origin = self.best.clone();
                        let Some(candidate) =
                            moved(self.signature, &origin, i, a).and_then(|c| moved(self.signature, &c, j, b))
                        else {
                            continue;
                        };
                        self.try_input(eval, candidate)?;
                    }
                }
            }
        }
        Ok(self.best_gap < start_gap)
    }

    /// The `nth` move off a plateau where every single and paired step is worse, taken if it
    /// is no worse. The first ones flip the sign of each float field in turn: a gap that
    /// depends on |x| (pow's y·log2|x|) is the same at -x, where moves that a negative x
    /// forbids (pow's non-integer y) become open. Then small random moves of one field (an
    /// exact product that no neighbour of x hits at this y may be hit at the next y), one in
    /// four a sign flip again.
    fn sideways_move(&mut self, eval: &mut impl FnMut(&[u8]) -> Result<Gap, Error>, nth: usize) -> Result<(), Halt> {
        let fields = self.signature.len();
        let field = match nth < fields {
            true => nth,
            false => self.rand.below(core::num::NonZero::new(fields).expect("fields > 0")),
        };
        if !self.movable(field) {
            return Ok(());
        }
        let size = 1 + self.rand.below(core::num::NonZero::new(16).expect("16 > 0")) as i128;
        let sign = if self.rand.coinflip(0.5) { 1 } else { -1 };
        let flip = nth < fields || self.rand.coinflip(0.25);
        let candidate = match flip {
            true => mirrored(self.signature, &self.best, field),
            false => None,
        }
        .or_else(|| moved(self.signature, &self.best, field, sign * size));
        let Some(candidate) = candidate else {
            return Ok(());
        };
        self.spend()?;
        let gap = eval(&candidate)?;
        if gap <= self.best_gap {
            self.take(candidate, gap);
            if gap == 0.0 {
                return Err(Halt::SearchEnding(SearchEnding::Reached));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use libafl_bolts::rands::StdRand;

    fn f64s(input: &[u8]) -> Vec<f64> {
        input
            .chunks(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    fn encode(values: &[f64]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    /// The gap of `x == target` as the runtime measures it: ordered-float positions apart.
    fn positions(a: f64, b: f64) -> f64 {
        let (a, b) = (Float::from_f64(a).ord(), Float::from_f64(b).ord());
        a.abs_diff(b) as f64
    }

    fn search<'s>(sig: &'s Signature, start: Vec<u8>, budget: u64) -> Search<'s, StdRand> {
        Search::new(sig, StdRand::with_seed(7), start, f64::INFINITY, budget)
    }

    #[test]
    fn one_field_descends_to_an_exact_value_across_binades() {
        let sig = Signature::parse("f64").unwrap();
        let target = -1_234.567_890_123_4_f64;
        let mut s = search(&sig, encode(&[3.5e-300]), 20_000);
        let mut eval = |i: &[u8]| Ok(positions(f64s(i)[0], target));
        assert_eq!(s.run(&mut eval).unwrap(), SearchEnding::Reached);
        assert_eq!(f64s(&s.best)[0], target);
        assert!(s.execs < 20_000, "{}", s.execs);
    }

    #[test]
    fn a_two_field_product_is_hit_exactly() {
        // x * y == 1234.5678 with y kept in (1.5, 1.6): not measured outside.
        let sig = Signature::parse("f64,f64").unwrap();
        let c = 1234.5678f64;
        let mut eval = |i: &[u8]| {
            let v = f64s(i);
            let (x, y) = (v[0], v[1]);
            if !(y > 1.5 && y < 1.6) {
                return Ok(f64::INFINITY);
            }
            Ok(positions(x * y, c))
        };
        let mut s = search(&sig, encode(&[3.0, 1.55]), 50_000);
        assert_eq!(s.run(&mut eval).unwrap(), SearchEnding::Reached);
        let v = f64s(&s.best);
        assert_eq!(v[0] * v[1], c);
    }

    #[test]
    fn a_window_narrower_than_an_ulp_is_met_by_unequal_steps() {
        // fdlibm pow's `z == -1075` branch as positions: one step of x moves the exact
        // y·log2(x) by 350 units, one of y by -200, and z stays -1075 (the comparison is
        // measured) only while the exact value is within 114 units of it; the outcome wanted
        // needs it above -1075. From 30 units below, every single step, every equal pair of
        // steps (+-150, +-550) and every sideways step leaves the branch; x + 2 and y + 3
        // (+100) lands in the window.
        let sig = Signature::parse("i32,i32").unwrap();
        let at = |i: &[u8]| {
            let u = i32::from_le_bytes(i[0..4].try_into().unwrap()) as i64;
            let v = i32::from_le_bytes(i[4..8].try_into().unwrap()) as i64;
            -30 + 350 * u - 200 * v
        };
        let mut eval = |i: &[u8]| {
            let s = at(i);
            Ok(if s.abs() > 114 {
                f64::INFINITY
            } else if s > 0 {
                0.0
            } else {
                (1 - s) as f64
            })
        };
        let start = [0i32.to_le_bytes(), 0i32.to_le_bytes()].concat();
        let mut s = Search::new(&sig, StdRand::with_seed(11), start, 31.0, 10_000);
        assert_eq!(s.run(&mut eval).unwrap(), SearchEnding::Reached);
        let reached = at(&s.best);
        assert!(reached > 0 && reached <= 114, "{reached}");
    }

    #[test]
    fn a_window_open_only_to_a_positive_x_is_reached_through_a_sign_flip() {
        // pow's `z == -1075` outcome as floats: z = fl(|x| * y) must be exactly -2150 with the
        // exact product above it, and a negative x needs an integer y (pow's NaN otherwise).
        // From x = -2, y = -1075 (z exact, the gap 1), every move of y leaves the integers and
        // no move of x alone lands in the window; at x = +2 the lattice step (x - 2 ulps,
        // y - 1 ulp) does (0.0996 of y's ulp above).
        let sig = Signature::parse("f64,f64").unwrap();
        let mut eval = |i: &[u8]| {
            let v = f64s(i);
            let (x, y) = (v[0], v[1]);
            if x < 0.0 && y.fract() != 0.0 {
                return Ok(f64::INFINITY);
            }
            let z = x.abs() * y;
            Ok(if z != -2150.0 {
                1.0 + positions(z, -2150.0)
            } else if x.abs().mul_add(y, 2150.0) > 0.0 {
                0.0
            } else {
                1.0
            })
        };
        let mut s = Search::new(&sig, StdRand::with_seed(5), encode(&[-2.0, -1075.0]), 1.0, 20_000);
        assert_eq!(s.run(&mut eval).unwrap(), SearchEnding::Reached);
        let v = f64s(&s.best);
        assert!(v[0] > 0.0 && v[0].abs() * v[1] == -2150.0, "{v:?}");
    }

    #[test]
    fn integer_and_f32_fields_move_in_their_own_units() {
        let sig = Signature::parse("i32,f32").unwrap();
        let mut eval = |i: &[u8]| {
            let n = i32::from_le_bytes(i[0..4].try_into().unwrap());
            let x = f32::from_le_bytes(i[4..8].try_into().unwrap());
            let fx = (Float::from_f32(x).ord() - Float::from_f32(0.3).ord()).unsigned_abs();
            Ok((n as i64 - 70_000).unsigned_abs() as f64 + fx as f64)
        };
        let mut start = 5i32.to_le_bytes().to_vec();
        start.extend_from_slice(&1e30f32.to_le_bytes());
        let mut s = Search::new(&sig, StdRand::with_seed(3), start, f64::INFINITY, 20_000);
        assert_eq!(s.run(&mut eval).unwrap(), SearchEnding::Reached);
        assert_eq!(i32::from_le_bytes(s.best[0..4].try_into().unwrap()), 70_000);
        assert_eq!(f32::from_le_bytes(s.best[4..8].try_into().unwrap()), 0.3);
    }

    #[test]
    fn the_budget_is_kept_and_a_flat_gap_stalls() {
        let sig = Signature::parse("f64").unwrap();
        let mut s = search(&sig, encode(&[1.0]), 100);
        let mut far = |i: &[u8]| Ok(positions(f64s(i)[0], 1e300) + 1e9);
        assert_eq!(s.run(&mut far).unwrap(), SearchEnding::Budget);
        assert_eq!(s.execs, 100);
        // Worse everywhere: sideways moves, then a stall.
        let mut s = Search::new(&sig, StdRand::with_seed(7), encode(&[1.0]), 5.0, 100_000);
        let mut pit = |i: &[u8]| Ok(if f64s(i)[0] == 1.0 { 5.0 } else { 6.0 });
        assert_eq!(s.run(&mut pit).unwrap(), SearchEnding::Stalled);
        assert!(s.execs <= PLATEAU_EXECS, "{}", s.execs);
        // The same gap everywhere, or none: a flat plateau, left after one round.
        let mut s = Search::new(&sig, StdRand::with_seed(7), encode(&[-1e300]), 5.0, 100_000);
        let mut flat = |i: &[u8]| Ok(if f64s(i)[0] < -1.0 { 5.0 } else { f64::INFINITY });
        assert_eq!(s.run(&mut flat).unwrap(), SearchEnding::Flat);
        assert!(s.execs <= 2 * 64, "{}", s.execs);
        // Also when an integer field (a mode) changes the gap but only for the worse.
        let sig = Signature::parse("f64,u32").unwrap();
        let mut start = (-1e300f64).to_le_bytes().to_vec();
        start.extend_from_slice(&0u32.to_le_bytes());
        let mut s = Search::new(&sig, StdRand::with_seed(7), start, 5.0, 100_000);
        let mut flat = |i: &[u8]| {
            let mode = u32::from_le_bytes(i[8..12].try_into().unwrap());
            Ok(if f64s(&i[..8])[0] < -1.0 {
                5.0 + mode as f64
            } else {
                f64::INFINITY
            })
        };
        assert_eq!(s.run(&mut flat).unwrap(), SearchEnding::Flat);
        assert!(s.execs < PLATEAU_EXECS / 4, "{}", s.execs);
        // A gap that goes down now and then keeps the search going past the plateau limit.
        let mut s = search(&sig, encode(&[1.0]), 100_000);
        let mut calls = 0u64;
        let mut slow = |_: &[u8]| {
            calls += 1;
            Ok(1e9 - (calls / 50) as f64)
        };
        assert_eq!(s.run(&mut slow).unwrap(), SearchEnding::Budget);
        assert_eq!(s.execs, 100_000);
    }

    #[test]
    fn moves_saturate_and_skip_nans() {
        let sig = Signature::parse("f64,u8").unwrap();
        let mut input = f64::MAX.to_le_bytes().to_vec();
        input.push(250);
        let up = moved(&sig, &input, 0, 1).unwrap();
        assert_eq!(f64s(&up[..8])[0], f64::INFINITY);
        assert_eq!(moved(&sig, &up, 0, 5), None, "infinity saturates");
        assert_eq!(moved(&sig, &input, 1, 100).unwrap()[8], 255);
        let nan = f64::NAN.to_le_bytes().to_vec();
        assert_eq!(moved(&Signature::parse("f64").unwrap(), &nan, 0, 1), None);
    }
    /// An input of `f64,u32` and its mode.
    fn with_mode(x: f64, mode: u32) -> Vec<u8> {
        let mut input = x.to_le_bytes().to_vec();
        input.extend_from_slice(&mode.to_le_bytes());
        input
    }

    fn mode_of(input: &[u8]) -> u32 {
        u32::from_le_bytes(input[8..12].try_into().unwrap())
    }

    #[test]
    fn a_small_integer_domain_is_a_switch() {
        let sig = Signature::parse("f64,u32[0,2]").unwrap();
        let others: Vec<(u32, usize)> = switched(&sig, &with_mode(-2.0, 1))
            .iter()
            .map(|(input, field)| (mode_of(input), *field))
            .collect();
        assert_eq!(others, [(0, 1), (2, 1)]);
        assert_eq!(f64s(&switched(&sig, &with_mode(-2.0, 1))[0].0[..8])[0], -2.0);
        for wide in ["f64,u32[0,8]", "f64,u32", "f64,f64[0,1]"] {
            let sig = Signature::parse(wide).unwrap();
            assert!(switched(&sig, &with_mode(-2.0, 1)).is_empty(), "{wide}");
        }
    }

    /// Mode 0 has an exact solution at x = 3; modes 1 and 2 come within 0.5 of one at 3.5. A
    /// search on mode 1's root stays there (mode 0 is far worse at x = 3.5); from its end
    /// switched to mode 0 and held there, it reaches x = 3.
    #[test]
    fn a_held_switch_keeps_the_search_on_its_own_root() {
        let sig = Signature::parse("f64,u32[0,2]").unwrap();
        let mut gap = |i: &[u8]| -> Result<Gap, Error> {
            let x = f64s(&i[..8])[0];
            Ok(match mode_of(i) {
                0 => positions(x, 3.0),
                _ => positions(x, 3.5) / 2.0 + 0.5,
            })
        };
        let mut free = Search::new(&sig, StdRand::with_seed(7), with_mode(3.5, 1), 0.5, 20_000);
        assert_ne!(free.run(&mut gap).unwrap(), SearchEnding::Reached);
        assert_ne!(mode_of(&free.best), 0);
        let (start, field) = switched(&sig, &free.best)
            .into_iter()
            .find(|(input, _)| mode_of(input) == 0)
            .expect("mode 0 among the switches");
        let start_gap = gap(&start).unwrap();
        let mut held = Search::new(&sig, StdRand::with_seed(7), start, start_gap, 20_000).holding(field);
        assert_eq!(held.run(&mut gap).unwrap(), SearchEnding::Reached);
        assert_eq!((f64s(&held.best[..8])[0], mode_of(&held.best)), (3.0, 0));
    }
}
