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
}
