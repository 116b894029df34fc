//! The checkers: which exceptions an operation raised (exactly) and how far it was from the
//! others (ErrBits).
//!
//! Classification works on bit patterns only ([`Float`] never executes a floating-point
//! instruction). When a result lies where flags are possible (non-normal, or at the edge of
//! the normal range) arithmetic is re-executed on the FPU with cleared flags under a saved
//! and restored environment; libm calls are classified by C11 Annex F.

mod arith;
mod conv;
mod known;
mod libm;
mod limits;

use numfuzz_abi::errbits::{gap, of_gap, NOT_MEASURED};
use numfuzz_abi::kind::ExceptionKind;
use numfuzz_abi::op::{FloatType, Op};
use numfuzz_abi::value::Float;

pub use crate::operands::Operands;
pub use arith::{carried, special_kind};
pub use limits::Limits;

/// Where a measurement's exact gaps go: nowhere in normal checks ([`NoGaps`], which the
/// compiler removes), kept per kind when a probing run asks for one slot's gap ([`AllGaps`]).
pub trait Gaps: Copy + Default {
    fn set(&mut self, kind: ExceptionKind, gap: Option<u128>);
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoGaps;

impl Gaps for NoGaps {
    #[inline(always)]
    fn set(&mut self, _: ExceptionKind, _: Option<u128>) {}
}

/// The gap of every kind (see `numfuzz_abi::errbits::gap`; `None`: not measured).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AllGaps(pub [Option<u128>; 4]);

impl Gaps for AllGaps {
    fn set(&mut self, kind: ExceptionKind, gap: Option<u128>) {
        self.0[kind as usize] = gap;
    }
}

/// What the checker concluded: kinds raised (bit = [`ExceptionKind`] index), ErrBits per
/// kind and, when asked for, the gaps ErrBits are the bit lengths of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome<G: Gaps = NoGaps> {
    pub raised: u8,
    pub errbits: [u8; 4],
    pub gaps: G,
}

impl<G: Gaps> Outcome<G> {
    pub fn new() -> Outcome<G> {
        Outcome {
            raised: 0,
            errbits: [NOT_MEASURED; 4],
            gaps: G::default(),
        }
    }

    pub fn raised(&self, kind: ExceptionKind) -> bool {
        self.raised & (1 << kind as u8) != 0
    }

    pub fn raise(&mut self, kind: ExceptionKind) {
        self.raised |= 1 << kind as u8;
    }

    /// Sets the gap of `kind` and its ErrBits: 0 if it was raised, else `measure()` (which
    /// must be ≥ 1, or `None` for not measured).
    pub fn measure(&mut self, kind: ExceptionKind, measure: impl FnOnce() -> Option<u128>) {
        let gap = if self.raised(kind) { Some(0) } else { measure() };
        self.errbits[kind as usize] = of_gap(gap);
        self.gaps.set(kind, gap);
    }

    /// Gaps of a result to the edges of the finite normal range: to the largest finite value
    /// (Overflow) and, for non-zero results, to the smallest normal (Underflow).
    pub fn measure_result_range(&mut self, r: Float, lim: &Limits) {
        self.measure(ExceptionKind::Overflow, || {
            if r.is_finite() {
                gap(r.abs(), lim.max)
            } else {
                None
            }
        });
        self.measure(ExceptionKind::Underflow, || {
            if r.is_finite() && !r.is_zero() {
                gap(r.abs(), lim.min_normal)
            } else {
                None
            }
        });
    }

    /// Fills the ErrBits (and gaps) of raised kinds that were not measured with 0.
    pub fn finish(mut self) -> Outcome<G> {
        for k in ExceptionKind::ALL {
            if self.raised(k) {
                self.errbits[k as usize] = 0;
                self.gaps.set(k, Some(0));
            }
        }
        self
    }
}

impl<G: Gaps> Default for Outcome<G> {
    fn default() -> Self {
        Outcome::new()
    }
}

/// Classifies one operation. `aux` is the site record's auxiliary byte.
#[inline]
pub fn classify(op: Op, ty: FloatType, aux: u8, ops: &Operands) -> Outcome {
    if let Some(out) = arith::fast(op, ty, ops) {
        return out;
    }
    classify_fully(op, ty, aux, ops)
}

/// The exact gap of one kind for a probing run (the slow path, which measures every kind).
pub fn gap_of(op: Op, ty: FloatType, aux: u8, ops: &Operands, kind: ExceptionKind) -> Option<u128> {
    classify_fully::<AllGaps>(op, ty, aux, ops).gaps.0[kind as usize]
}

fn classify_fully<G: Gaps>(op: Op, ty: FloatType, aux: u8, ops: &Operands) -> Outcome<G> {
    let out = match op {
        Op::FAdd | Op::FSub | Op::FMul | Op::FDiv | Op::FRem | Op::FMulAdd | Op::Fma => arith::classify(op, ty, ops),
        Op::FPToSI | Op::FPToUI => conv::to_int(op == Op::FPToSI, aux, ops.a),
        Op::FPTrunc => match FloatType::from_code(aux) {
            Some(dst) => conv::narrow(ty, dst, ops),
            None => Outcome::new(),
        },
        _ => libm::classify(op, ty, ops),
    };
    out.finish()
}

#[cfg(test)]
mod tests;
