//! Where precision was lost: a bug whose root exception computed on values that had already lost
//! their digits is not where the fix goes. The MPFR shadow build follows each value's origin,
//! the first operation on its path whose result kept less than half of its bits against the
//! shadow while its operands kept more (numfuzz-abi's `mpfr::TRACK`), and says which
//! operations such values reached with an Inf, NaN, zero or subnormal result. A bug whose root
//! is one of them gets the origin beside it (`precision_lost`), rooted there (`root_by`
//! precision): a range reduction that keeps no digit, not the series that overflows on what it
//! returned.
//!
//! Then one entry per formula (`merge`): bugs whose fix goes on one source line, the line of
//! their origin or else of their root site, with one verdict, are one entry. Two overflow sites
//! of one formula (`lambda*(-1.0 + 2.0*(1.0+lambda)*x*x)` overflows at three of its products),
//! or an underflow and the division by its zero on one line, are one defect; so are the cosine
//! and the sine series that overflow on one reduction's garbage. A true pole of a formula left
//! unreported and its overflow where the true value is finite (`unreported-range` and `wrong`)
//! stay two: two fixes.
//!
//! Each bug's shown input is replayed once on the MPFR build, at its default precision.

use crate::replay::Replayer;
use crate::triage::consequences::root::{file_name, RootBy, Via};
use crate::triage::parallel;
use crate::triage::references::oracle::Verdict;
use crate::triage::report::{Finding, Report};
use numfuzz_abi::report::{OpPlace, PrecisionLoss};
use numfuzz_abi::site::SiteInfo;
use numfuzz_outdir::FindingKey;
use std::collections::BTreeMap;

/// Whether `place` is the operation of `site`.
fn is_site(place: &OpPlace, site: &SiteInfo) -> bool {
    place.line == site.line
        && place.column == site.column
        && place.op == site.op
        && file_name(&place.file) == file_name(&site.file)
}

/// The origin of the digits the root operation of `f` computed on, from its shown input's
/// replay on the MPFR build: the loss that reached its site; else, when the first loss reached
/// an operation of the same kind that the optimiser left without a place (`y * y` hoisted out
/// of a series' loop, where the checker's site still has it), that one.
fn loss_of(f: &Finding, mpfr: &Replayer) -> Option<PrecisionLoss> {
    let minimized = f.minimized.as_ref().and_then(|m| std::fs::read(&m.path).ok());
    let replay = mpfr.run_bytes(minimized.as_deref().unwrap_or(&f.input_bytes)).ok()?;
    let at_site = replay.precision.iter().find(|p| is_site(&p.reached, &f.site));
    let first_unplaced = replay
        .precision
        .first()
        .filter(|p| p.reached.line == 0 && p.reached.op == f.site.op);
    // A loss that began at the site itself (an earlier pass of a loop) leaves the site the root.
    at_site
        .or(first_unplaced)
        .filter(|p| !is_site(&p.origin, &f.site))
        .cloned()
}

/// Replays each bug that has no dropped report (the report is where the library knew) on the
/// MPFR build and notes where its root's operands lost their digits.
pub fn attach(report: &mut Report, mpfr: &Replayer, jobs: usize) {
    let bugs: Vec<usize> = (0..report.findings.len())
        .filter(|&i| report.findings[i].is_bug() && report.findings[i].dropped_report.is_none())
        .collect();
    let losses = parallel::map(&bugs, jobs, |&i| loss_of(&report.findings[i], mpfr), |_| {});
    for (i, loss) in bugs.into_iter().zip(losses) {
        report.findings[i].precision_lost = loss;
    }
}

/// The source line where a bug's fix goes, its origin's or else its root site's, and its
/// verdict (`None`: a bug rooted at a dropped report, which `dropped_report::merge` placed).
fn fix_line(f: &Finding) -> Option<(String, u32, Option<Verdict>)> {
    if matches!(f.root_by, Some((RootBy::Report, _))) {
        return None;
    }
    let verdict = f.reference.as_ref().map(|r| r.judged.verdict);
    Some(match &f.precision_lost {
        Some(p) => (file_name(&p.origin.file), p.origin.line, verdict),
        None => (file_name(&f.site.file), f.site.line, verdict),
    })
}

/// Roots bugs with an origin there (`root_by` precision), then makes bugs of one fix line one
/// entry: the most ordinary stays; the others hang under it.
pub fn merge(report: &mut Report) {
    let order: Vec<FindingKey> = report.bugs().map(|f| f.key.clone()).collect();
    let mut heads: BTreeMap<(String, u32, Option<Verdict>), FindingKey> = BTreeMap::new();
    for key in order {
        let Some(f) = report.findings.iter_mut().find(|f| f.key == key) else {
            continue;
        };
        let Some(line) = fix_line(f) else {
            continue;
        };
        if f.precision_lost.is_some() {
            let via = f.root_by.map_or(Via::Data, |(_, via)| via);
            f.root_by = Some((RootBy::Precision, via));
        }
        match heads.get(&line) {
            None => {
                heads.insert(line, key);
            }
            Some(head) => f.hang_under(head),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use numfuzz_abi::op::Op;

    fn place(file: &str, line: u32, column: u32, op: Op) -> OpPlace {
        OpPlace {
            file: file.into(),
            line,
            column,
            op,
        }
    }

    #[test]
    fn a_loss_reaches_the_site_of_the_same_file_line_column_and_operation() {
        let site: SiteInfo = serde_json::from_value(serde_json::json!({
            "id": 3, "op": "fmul", "type": "f64", "file": "specfunc/cheb_eval.c",
            "directory": "/src", "line": 18, "column": 9, "function": "cheb_eval_e"
        }))
        .unwrap();
        assert!(is_site(&place("cheb_eval.c", 18, 9, Op::FMul), &site));
        assert!(!is_site(&place("cheb_eval.c", 18, 9, Op::FAdd), &site));
        assert!(!is_site(&place("cheb_eval.c", 18, 10, Op::FMul), &site));
        assert!(!is_site(&place("trig.c", 18, 9, Op::FMul), &site));
    }
}
