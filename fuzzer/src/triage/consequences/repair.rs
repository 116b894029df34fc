//! Which exception of an input is the root of its non-finite result: the one whose repair
//! alone makes the result finite.
//!
//! DataFlowSanitizer's labels say which exceptional values reached a result. They miss a
//! cause that acts through a branch (`t = a*b; if (!isfinite(t)) return NAN;`: the NaN is a
//! constant, no label reaches it), and when several exceptional values reach the result
//! they do not say which one made it non-finite (a harmless underflow added to an overflowed
//! Inf). An intervention answers both: the input is replayed on the taint build with one
//! exception's results replaced by a finite stand-in (numfuzz-abi's `taint::stand_in`), one
//! origin at a time, and the first whose repair alone makes every primary result finite is
//! the root.
//!
//! The order, and what each outcome is called (`root_by`):
//! - one origin reaches the result by labels and its repair fixes it: `labels` (checked);
//! - else the origins the labels name (earliest first), then every other origin of the input
//!   in the order it first raised: the first whose repair fixes it is the root, `repair`
//!   (`via` control when no label of it reached the result);
//! - no single repair fixes it: the earliest label root, `earliest`; without one the input is
//!   still a bug, with no root ("cause not isolated").

use super::root::{Attribution, RootBy, Via};
use super::taint::Flow;
use crate::replay::{Replay, ReplayEnding, Replayer};
use numfuzz_abi::signature::Signature;
use numfuzz_abi::taint::{Repair, TaintMode};
use std::collections::BTreeSet;
use std::path::Path;

/// Repairs tried per input at most; an input with more origins than that and no root among
/// them is left with its cause not isolated (and says how many were tried).
pub const MAX_REPAIRS: usize = 16;

/// The origins a repair is tried on, in order: the label roots (`label_roots`, positions in
/// `flow`), then the other origins in the order they first raised.
fn candidates(flow: &Flow, label_roots: &[usize], origin: impl Fn(usize) -> bool) -> Vec<usize> {
    let rest = (0..flow.order.len()).filter(|p| origin(*p) && !label_roots.contains(p));
    label_roots.iter().copied().chain(rest).collect()
}

/// Did the repaired run end with every primary result finite (or the library reporting an
/// error: then it is not a silent non-finite result either)?
pub fn fixed(run: &Replay) -> bool {
    match run.ending {
        ReplayEnding::Completed { handled: true } => true,
        ReplayEnding::Completed { handled: false } => run
            .results
            .iter()
            .filter(|r| r.index.is_some())
            .all(|r| super::result_finite(&r.value)),
        _ => false,
    }
}

/// Attributes one input's non-finite result. `flow` is its flow graph (keys as the plain
/// replay names them), `reach` the findings whose labels reach a non-finite primary result,
/// `label_roots` the origins among them no other reaching origin flowed into (positions,
/// earliest first), `origin(p)` whether finding `p` is an origin in this input. `repaired`
/// replays the input with one repair (the taint build in triage; a stand-in in tests).
pub fn attribute(
    flow: &Flow,
    reach: &BTreeSet<usize>,
    label_roots: &[usize],
    origin: impl Fn(usize) -> bool,
    mut repaired: impl FnMut(Repair) -> Option<Replay>,
) -> Attribution {
    let mut out = Attribution {
        root: None,
        replays: 0,
        untried: 0,
    };
    let order = candidates(flow, label_roots, origin);
    let mut fixes = |p: usize| {
        let (site, kind) = flow.ids[p];
        out.replays += 1;
        repaired(Repair { site, kind }).is_some_and(|run| fixed(&run))
    };
    let tried = order.len().min(MAX_REPAIRS);
    let found = order[..tried].iter().copied().find(|&p| fixes(p));
    out.untried = order.len() - tried;
    out.root = match found {
        Some(p) => {
            let by = if label_roots == [p] {
                RootBy::Labels
            } else {
                RootBy::Repair
            };
            let via = if reach.contains(&p) { Via::Data } else { Via::Control };
            Some((flow.order[p].clone(), by, via))
        }
        None => label_roots
            .first()
            .map(|&p| (flow.order[p].clone(), RootBy::Earliest, Via::Data)),
    };
    out
}

/// What the taint build tells of an input that needed it (`consequences::needs_taint`): its
/// flow graph (keys as `replay`, the input's replay on the campaign's target, names them) and,
/// when a primary result is non-finite, the attribution of it, its repairs replayed on the
/// taint build. `None` when the taint build could not replay it.
pub fn on_taint_build(
    taint: &Replayer,
    input: &Path,
    replay: &Replay,
    signature: Option<&Signature>,
) -> Option<(Flow, Option<Attribution>)> {
    let (_, mut flow) = super::taint::replay(taint, input, TaintMode::NonFinite).ok()?;
    flow.translate_for(replay);
    if !super::needs_attribution(replay, signature) {
        return Some((flow, None));
    }
    let origin = super::origins(replay);
    let escape = super::Escape::of(&flow, &origin);
    let origin_at = |p: usize| origin.get(&flow.order[p]).copied().unwrap_or(false);
    let attribution = attribute(&flow, &escape.reach, &escape.label_roots(), origin_at, |repair| {
        super::taint::replay_repaired(taint, input, repair).ok()
    });
    Some((flow, Some(attribution)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use numfuzz_abi::kind::ExceptionKind;
    use numfuzz_abi::report::ResultReport;
    use numfuzz_abi::FloatType;
    use numfuzz_outdir::FindingKey;

    fn key(line: u32, kind: ExceptionKind) -> FindingKey {
        FindingKey {
            kind,
            path: "/s/a.c".into(),
            line,
            column: 1,
            op: "fmul".into(),
        }
    }

    fn run(value: &str) -> Replay {
        Replay {
            input: "x".into(),
            bytes: vec![],
            exceptions: vec![],
            results: vec![ResultReport {
                index: Some(0),
                name: None,
                ty: FloatType::F64,
                value: value.into(),
                hex: String::new(),
                labels: None,
                shadow: None,
            }],
            taint: None,
            errors: Vec::new(),
            statuses: Vec::new(),
            precision: Vec::new(),
            ending: ReplayEnding::Completed { handled: false },
        }
    }

    const U: ExceptionKind = ExceptionKind::Underflow;
    const O: ExceptionKind = ExceptionKind::Overflow;

    /// Three findings: an underflow (site 10), an overflow (site 11), an underflow (site 12).
    fn flow() -> Flow {
        Flow {
            order: vec![key(1, U), key(2, O), key(3, U)],
            ids: vec![(10, U), (11, O), (12, U)],
            ..Flow::default()
        }
    }

    /// Replays in which repairing site `good` fixes the result; records the sites tried.
    fn repairs(good: Option<u32>, tried: &mut Vec<u32>) -> impl FnMut(Repair) -> Option<Replay> + '_ {
        move |r| {
            tried.push(r.site);
            Some(run(if Some(r.site) == good { "1.5" } else { "inf" }))
        }
    }

    #[test]
    fn one_label_root_is_checked_by_its_repair() {
        let mut tried = vec![];
        let a = attribute(
            &flow(),
            &BTreeSet::from([1]),
            &[1],
            |_| true,
            repairs(Some(11), &mut tried),
        );
        assert_eq!(a.root, Some((key(2, O), RootBy::Labels, Via::Data)));
        assert_eq!((a.replays, tried), (1, vec![11]));
    }

    #[test]
    fn of_two_label_roots_the_one_whose_repair_fixes_it_wins() {
        let mut tried = vec![];
        let reach = BTreeSet::from([0, 1]);
        let a = attribute(&flow(), &reach, &[0, 1], |_| true, repairs(Some(11), &mut tried));
        assert_eq!(a.root, Some((key(2, O), RootBy::Repair, Via::Data)));
        assert_eq!(tried, [10, 11]);
    }

    #[test]
    fn without_labels_a_repair_finds_a_control_flow_root() {
        let mut tried = vec![];
        let a = attribute(&flow(), &BTreeSet::new(), &[], |_| true, repairs(Some(12), &mut tried));
        assert_eq!(a.root, Some((key(3, U), RootBy::Repair, Via::Control)));
        assert_eq!(tried, [10, 11, 12], "every origin in order");
        // Only origins are repaired.
        let mut tried = vec![];
        attribute(&flow(), &BTreeSet::new(), &[], |p| p != 1, repairs(None, &mut tried));
        assert_eq!(tried, [10, 12]);
    }

    #[test]
    fn when_no_repair_fixes_it_the_earliest_label_root_or_nothing() {
        let mut tried = vec![];
        let reach = BTreeSet::from([1, 2]);
        let a = attribute(&flow(), &reach, &[2, 1], |_| true, repairs(None, &mut tried));
        assert_eq!(a.root, Some((key(3, U), RootBy::Earliest, Via::Data)));
        assert_eq!(tried, [12, 11, 10], "label roots first");
        let mut tried = vec![];
        let a = attribute(&flow(), &BTreeSet::new(), &[], |_| true, repairs(None, &mut tried));
        assert_eq!((a.root, a.replays, a.untried), (None, 3, 0));
    }

    #[test]
    fn a_run_that_reports_the_error_or_returns_finite_is_fixed() {
        assert!(fixed(&run("-1e300")));
        assert!(!fixed(&run("nan")));
        assert!(!fixed(&run("-inf")));
        let mut handled = run("nan");
        handled.ending = ReplayEnding::Completed { handled: true };
        assert!(fixed(&handled));
    }
}
