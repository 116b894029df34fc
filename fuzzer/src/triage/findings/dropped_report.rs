//! Dropped error reports: the library reported an error inside the function (its error hook
//! was called; see numfuzz-cc's `NUMFUZZ_CC_ERROR_HOOK`) and the function still returned
//! success. A non-finite or wrong result of such an input is rooted at the report: that is
//! where the library knew, and the call that dropped it is where the fix goes. The exceptions of
//! the input hang under it, and bugs of one dropped report are one entry (`merge`).
//!
//! Which call dropped it, from the first report's stack (innermost first, down to the harness):
//! the call, inside the function the harness called, through which the report came. A status
//! passed on from callee to caller does not show in a stack, so the rule takes the outermost
//! call: `gsl_sf_hermite_deriv_e` calling `gsl_sf_fact`, whose `gsl_sf_fact_e` reported the
//! overflow, is dropped at that call in hermite.c. When the function the harness called
//! reported itself, it dropped the report by returning success.

use crate::replay::{Replay, ReplayEnding};
use crate::triage::consequences::root::{file_name, DroppedReport, RootBy, Via};
use crate::triage::report::Report;
use numfuzz_abi::report::{ErrorReport, Frame, StatusReport};
use numfuzz_outdir::FindingKey;
use std::collections::BTreeMap;

/// The stack's frames without the copies a split build adds: the dispatch from a function to
/// its precise copy is a frame of the same function without a column.
fn frames(error: &ErrorReport) -> Vec<&Frame> {
    let mut out: Vec<&Frame> = Vec::new();
    for f in &error.frames {
        if out
            .last()
            .is_some_and(|inner| inner.function == f.function && f.column.is_none())
        {
            continue;
        }
        out.push(f);
    }
    out
}

fn is_entry(f: &Frame) -> bool {
    f.function == "LLVMFuzzerTestOneInput" || f.function == "main"
}

/// The dropped report of an input's replay: it completed without the harness saying the
/// library reported an error, and the library's hook was called.
pub fn of(replay: &Replay) -> Option<DroppedReport> {
    if replay.ending != (ReplayEnding::Completed { handled: false }) {
        return None;
    }
    let first = replay.errors.first()?;
    let stack = frames(first);
    let library: Vec<&Frame> = stack.iter().copied().take_while(|f| !is_entry(f)).collect();
    let entry = stack.get(library.len()).copied();
    let reporter = library.first().map_or_else(|| "??".to_string(), |f| f.function.clone());
    let (dropped_at, dropped_by) = drop_point(&library, entry, &replay.statuses);
    Some(DroppedReport {
        file: file_name(&first.file),
        line: first.line,
        reason: first.reason.clone(),
        code: first.code,
        reporter,
        dropped_at,
        dropped_by,
    })
}

/// Where the report stopped travelling out. Walking out from the reporter (`library[0]`), the
/// call of each function is the next frame out (`entry` for the last). A function passed it on
/// when its call returned non-zero; the first whose call returned zero dropped it, at the call
/// inside it through which the report came (the reporter: by returning success); the first
/// whose call returned no integer (a value, GSL's `gsl_sf_fact`) left it to its caller, which
/// dropped it at that call. Without any recorded return (a build without the records), the
/// call in the function the harness called.
fn drop_point(library: &[&Frame], entry: Option<&Frame>, statuses: &[StatusReport]) -> (Option<Frame>, String) {
    let Some(reporter) = library.first() else {
        return (None, "??".into());
    };
    if statuses.is_empty() {
        return match library.len() {
            1 => (None, reporter.function.clone()),
            n => (Some(library[n - 1].clone()), library[n - 1].function.clone()),
        };
    }
    for (i, callee) in library.iter().enumerate() {
        let call = library.get(i + 1).copied().or(entry);
        let Some(call) = call else { break };
        match returned(statuses, call, &callee.function) {
            Some(v) if v != 0 => continue,
            Some(_) if i == 0 => return (None, callee.function.clone()),
            Some(_) => return (Some((*callee).clone()), callee.function.clone()),
            None if i + 1 < library.len() => return (Some(call.clone()), call.function.clone()),
            None => return (None, callee.function.clone()),
        }
    }
    let outermost = library[library.len() - 1];
    (None, outermost.function.clone())
}

/// What the call at `call`'s line of `callee` first returned after the report.
fn returned(statuses: &[StatusReport], call: &Frame, callee: &str) -> Option<i64> {
    let file = call.file.as_deref().map(file_name);
    statuses
        .iter()
        .find(|s| s.callee == callee && Some(s.line) == call.line && Some(file_name(&s.file)) == file)
        .map(|s| s.value)
}

/// Bugs whose inputs dropped the same report become one entry: the most ordinary (first in the
/// bug list) stays, rooted at the report (`root_by` report); the others hang under it. Entries of
/// results whose cause was not isolated join a bug of their report, when there is one.
pub fn merge(report: &mut Report) {
    let order: Vec<FindingKey> = report.bugs().map(|f| f.key.clone()).collect();
    let mut heads: BTreeMap<_, FindingKey> = BTreeMap::new();
    for key in order {
        let Some(f) = report.findings.iter_mut().find(|f| f.key == key) else {
            continue;
        };
        let Some(dropped) = f.dropped_report.clone() else {
            continue;
        };
        match heads.get(&dropped.key()) {
            None => {
                let via = f.root_by.map_or(Via::Data, |(_, via)| via);
                f.root_by = Some((RootBy::Report, via));
                heads.insert(dropped.key(), key);
            }
            Some(head) => f.hang_under(head),
        }
    }
    let unexplained = std::mem::take(&mut report.unexplained);
    for u in unexplained {
        let head = u.dropped_report.as_ref().and_then(|d| heads.get(&d.key()));
        match head.and_then(|h| report.findings.iter_mut().find(|f| f.key == *h)) {
            Some(f) => f.inputs_not_isolated += u.inputs.len(),
            None => report.unexplained.push(u),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use numfuzz_abi::report::ErrorReport;

    fn frame(function: &str, line: u32, column: Option<u32>) -> Frame {
        Frame {
            function: function.into(),
            file: Some(format!("/src/{function}.c")),
            line: Some(line),
            column,
        }
    }

    fn replay(handled: bool, frames: Vec<Frame>) -> Replay {
        Replay {
            input: "x".into(),
            bytes: vec![],
            exceptions: vec![],
            results: vec![],
            taint: None,
            errors: vec![ErrorReport {
                file: "specfunc/gamma.c".into(),
                line: 1489,
                reason: Some("overflow".into()),
                code: 16,
                frames,
            }],
            statuses: vec![],
            precision: vec![],
            ending: ReplayEnding::Completed { handled },
        }
    }

    #[test]
    fn the_drop_is_the_call_in_the_function_the_harness_called() {
        let r = replay(
            false,
            vec![
                frame("gsl_sf_fact_e", 1489, Some(5)),
                // A split build's dispatch to the precise copy: not a frame of its own.
                frame("gsl_sf_fact_e", 1475, None),
                frame("gsl_sf_fact", 1634, Some(3)),
                frame("gsl_sf_hermite_deriv_e", 323, Some(37)),
                frame("LLVMFuzzerTestOneInput", 67, Some(13)),
            ],
        );
        let d = of(&r).unwrap();
        assert_eq!(d.reporter, "gsl_sf_fact_e");
        assert_eq!(d.dropped_by, "gsl_sf_hermite_deriv_e");
        assert_eq!(
            d.describe(),
            "error reported at gamma.c:1489 (\"overflow\", code 16) in gsl_sf_fact_e, dropped by its caller gsl_sf_hermite_deriv_e at gsl_sf_hermite_deriv_e.c:323"
        );
    }

    #[test]
    fn a_function_that_reports_and_returns_success_drops_it_itself() {
        let r = replay(
            false,
            vec![
                frame("gsl_sf_exp_e", 40, Some(5)),
                frame("LLVMFuzzerTestOneInput", 9, Some(3)),
            ],
        );
        let d = of(&r).unwrap();
        assert_eq!(d.dropped_at, None);
        assert!(d
            .describe()
            .ends_with("in gsl_sf_exp_e, and gsl_sf_exp_e returned success"));
    }

    #[test]
    fn a_report_the_function_returned_as_its_status_is_not_dropped() {
        let r = replay(true, vec![frame("f_e", 4, Some(1))]);
        assert_eq!(of(&r), None);
        let none = Replay {
            errors: vec![],
            ..replay(false, vec![])
        };
        assert_eq!(of(&none), None);
    }

    fn returned(file: &str, line: u32, callee: &str, value: i64) -> StatusReport {
        StatusReport {
            file: file.into(),
            line,
            callee: callee.into(),
            value,
        }
    }

    /// fact_e reports inside fact, which hermite calls through a helper that checks nothing.
    fn chain() -> Vec<Frame> {
        vec![
            frame("fact_e", 10, Some(5)),
            frame("fact", 20, Some(3)),
            frame("helper_e", 30, Some(7)),
            frame("api_e", 40, Some(9)),
            frame("LLVMFuzzerTestOneInput", 50, Some(1)),
        ]
    }

    /// Who dropped the report of `chain()` given these returns, and at which line.
    fn dropped_with(statuses: Vec<StatusReport>) -> (String, Option<Option<u32>>) {
        let d = of(&Replay {
            statuses,
            ..replay(false, chain())
        })
        .unwrap();
        (d.dropped_by, d.dropped_at.map(|f| f.line))
    }

    #[test]
    fn with_the_returns_the_drop_is_the_first_call_that_stopped_the_status() {
        // fact_e passes the status on to fact, which returns a value: helper_e's call of fact
        // dropped it.
        assert_eq!(
            dropped_with(vec![
                returned("fact.c", 20, "fact_e", 16),
                returned("api_e.c", 40, "helper_e", 0),
            ]),
            ("helper_e".into(), Some(Some(30)))
        );
        // A helper that got the status back from a status function and returned success.
        assert_eq!(
            dropped_with(vec![
                returned("fact.c", 20, "fact_e", 16),
                returned("helper_e.c", 30, "fact", 16),
                returned("api_e.c", 40, "helper_e", 0),
            ]),
            ("helper_e".into(), Some(Some(30)))
        );
        // The reporter itself returned success.
        assert_eq!(
            dropped_with(vec![returned("fact.c", 20, "fact_e", 0)]),
            ("fact_e".into(), None)
        );
    }
}
