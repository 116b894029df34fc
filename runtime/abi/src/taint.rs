//! The taint build's contract (`NUMFUZZ_CC_TAINT=1 numfuzz-cc`): a replay-only build in which
//! clang's DataFlowSanitizer carries, with every value, the set of findings (exceptional
//! (site, kind) pairs of the run) it was computed from. It tells triage which exceptions
//! reach a declared result (`NUMFUZZ_RESULT`) and through which others.
//!
//! Labels are DataFlowSanitizer's 8-bit label sets, so one run labels at most [`LABELS`]
//! findings: the exceptional (site, kind) pairs of a run are numbered in the order of their
//! first exception, and the run labels numbers `skip .. skip + LABELS` (`NUMFUZZ_TAINT_SKIP`).
//! An input with more findings is replayed again with a larger skip; every run still reports,
//! for every finding, which labelled findings flowed into it, so the flow graph is complete
//! after `ceil(findings / LABELS)` runs.

use crate::kind::ExceptionKind;
use crate::value::Float;
use serde::{Deserialize, Serialize};

/// Findings one run can label (DataFlowSanitizer's label width).
pub const LABELS: u32 = 8;

/// What a label follows (`NUMFUZZ_TAINT_MODE`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaintMode {
    /// The exceptional value itself: a label passes through an operation only into a result
    /// that is exceptional too (Inf, NaN, zero or subnormal), and an Inf or NaN operand's
    /// label only into an Inf or NaN result (`1/inf = 0` kills it, as EXCVATE's Kill). Decides
    /// whether an exception makes a declared result non-finite.
    #[default]
    NonFinite,
    /// Any influence: a label passes into every result computed from a labelled value, except
    /// from an Inf or NaN operand into a finite result, and from an addend that did not change
    /// the sum (`x + 1e-300 == x`). Decides which exceptions a finite but wrong result
    /// (reference oracle) came from.
    Influence,
}

impl TaintMode {
    pub fn name(self) -> &'static str {
        match self {
            TaintMode::NonFinite => "nonfinite",
            TaintMode::Influence => "influence",
        }
    }

    pub fn parse(s: &str) -> Option<TaintMode> {
        match s {
            "nonfinite" | "" => Some(TaintMode::NonFinite),
            "influence" => Some(TaintMode::Influence),
            _ => None,
        }
    }
}

/// The label numbers in a label set (bit k = label k).
pub fn label_list(set: u8) -> Vec<u8> {
    (0..LABELS as u8).filter(|k| set & (1 << k) != 0).collect()
}

/// The label set of a list of label numbers.
pub fn label_set(labels: &[u8]) -> u8 {
    labels
        .iter()
        .filter(|&&k| (k as u32) < LABELS)
        .fold(0, |s, &k| s | (1 << k))
}

/// A repair (`NUMFUZZ_REPAIR=SITE:KIND`): in a taint build's run, every exception of `kind` at
/// the build's site `site` that an operation generated from finite operands gets a finite
/// stand-in for its result ([`stand_in`]), and the program goes on with it. Triage replays an
/// input with one exception repaired at a time: the exception whose repair alone makes the
/// declared result finite is the one a maintainer must fix (an intervention, which also sees
/// a cause that reaches the result through a branch, where labels do not go).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Repair {
    pub site: u32,
    pub kind: ExceptionKind,
}

impl Repair {
    /// `SITE:KIND`, e.g. `12:Overflow`.
    pub fn parse(s: &str) -> Option<Repair> {
        let (site, kind) = s.split_once(':')?;
        Some(Repair {
            site: site.trim().parse().ok()?,
            kind: kind.trim().parse().ok()?,
        })
    }

    pub fn to_env(self) -> String {
        format!("{}:{}", self.site, self.kind)
    }
}

/// The finite value a repaired exception's result `r` is replaced by, or `None` when the
/// result needs none (it is not the exceptional value the kind makes):
/// - Overflow and DivByZero: the largest finite value of the result's sign and format (what
///   the exact result would round to with a wider exponent range is beyond it, and the
///   largest finite value is the nearest thing the format has);
/// - Underflow to zero: the smallest normal value of the result's sign (a non-zero value of
///   the right sign keeps later divisions, logarithms and zero tests on the path the exact
///   value would take). A subnormal result needs none: it is already the value of the
///   format nearest the exact one, so a stand-in would change the value, not its rounding
///   (the smallest normal is 10^15 times `π * 5e-324`, and made `gamma(5e-324)` finite by
///   changing the mathematics, hiding the overflow of `1/(π x g)` that is its cause);
/// - Invalid: +0. An Invalid from finite operands is `0/0`, `sqrt`, `log` or `acos` of an
///   argument just outside the domain, `fmod(x, 0)` or a conversion out of range; in
///   numerical code it is mostly an argument that rounding pushed past the domain's
///   boundary, where these functions' value is 0 (`sqrt(-1e-17)`), and 0 is the value that
///   ends in the fewest new exceptions downstream.
pub fn stand_in(kind: ExceptionKind, r: Float) -> Option<Float> {
    let ty = r.ty;
    let negative = r.is_negative();
    match kind {
        ExceptionKind::Overflow | ExceptionKind::DivByZero => r.is_infinite().then(|| Float::max_finite(ty, negative)),
        ExceptionKind::Underflow => r.is_zero().then(|| Float::min_normal(ty, negative)),
        ExceptionKind::Invalid => r.is_nan().then(|| Float::zero(ty, false)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_sets_and_lists_round_trip() {
        assert_eq!(label_list(0b1000_0101), [0, 2, 7]);
        assert_eq!(label_set(&[0, 2, 7]), 0b1000_0101);
        assert_eq!(label_set(&[9]), 0, "labels beyond the width are dropped");
        assert_eq!(TaintMode::parse("influence"), Some(TaintMode::Influence));
        assert_eq!(
            TaintMode::parse(TaintMode::NonFinite.name()),
            Some(TaintMode::NonFinite)
        );
        assert_eq!(TaintMode::parse("x"), None);
    }

    #[test]
    fn repairs_parse_and_stand_ins_are_finite_of_the_right_sign() {
        let r = Repair::parse("12:Overflow").unwrap();
        assert_eq!(
            r,
            Repair {
                site: 12,
                kind: ExceptionKind::Overflow
            }
        );
        assert_eq!(Repair::parse(&r.to_env()), Some(r));
        assert_eq!(Repair::parse("12"), None);
        assert_eq!(Repair::parse("x:Overflow"), None);
        assert_eq!(Repair::parse("3:Overfl"), None);
        let f = Float::from_f64;
        let v = |k, x: f64| stand_in(k, f(x)).map(Float::as_f64);
        assert_eq!(v(ExceptionKind::Overflow, f64::NEG_INFINITY), Some(-f64::MAX));
        assert_eq!(v(ExceptionKind::DivByZero, f64::INFINITY), Some(f64::MAX));
        assert_eq!(v(ExceptionKind::Underflow, -0.0), Some(-f64::MIN_POSITIVE));
        assert_eq!(v(ExceptionKind::Underflow, 5e-324), None, "a subnormal is kept");
        assert_eq!(v(ExceptionKind::Invalid, f64::NAN), Some(0.0));
        // Not the kind's exceptional value: nothing to repair.
        assert_eq!(v(ExceptionKind::Overflow, 1.0), None);
        assert_eq!(v(ExceptionKind::Underflow, 1e-300), None);
        let x = stand_in(ExceptionKind::Overflow, Float::from_f32(f32::INFINITY)).unwrap();
        assert_eq!(x.as_f32(), f32::MAX);
    }
}
