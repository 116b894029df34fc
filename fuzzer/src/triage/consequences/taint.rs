//! Replays on the taint build (`NUMFUZZ_CC_TAINT=1 numfuzz-cc`): which findings of an input
//! flowed into which, and into which declared results.
//!
//! One run labels at most eight findings (numfuzz-abi's `taint::LABELS`), so an input with
//! more is replayed once per window of eight (`NUMFUZZ_TAINT_SKIP`). Every run reports, for
//! every finding, the labelled ones that flowed into it; the union over the windows is the
//! whole flow graph.

use crate::replay::{Replay, ReplayEnding, Replayer};
use numfuzz_abi::env;
use numfuzz_abi::kind::ExceptionKind;
use numfuzz_abi::report::ResultReport;
use numfuzz_abi::taint::{Repair, TaintMode, LABELS};
use numfuzz_outdir::FindingKey;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The flow graph of one input's replay on the taint build. Findings are numbered by their
/// first exception in the run (`order`); sets hold those numbers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Flow {
    pub mode: Option<TaintMode>,
    /// Findings in the order of their first exception.
    pub order: Vec<FindingKey>,
    /// Per finding: its (site number, kind) in the taint build, what a repair names.
    pub ids: Vec<(u32, ExceptionKind)>,
    /// Per finding: the findings whose exceptional values flowed into it.
    pub from: Vec<BTreeSet<usize>>,
    /// Per declared result (in declaration order): the findings it came from.
    pub results: Vec<(ResultReport, BTreeSet<usize>)>,
}

impl Flow {
    pub fn position(&self, key: &FindingKey) -> Option<usize> {
        self.order.iter().position(|k| k == key)
    }

    /// Renames the findings to the identities `keys` has for them (the replay of the same
    /// input on the campaign's target): the same key, else the one key that is the same up to
    /// the directory (a taint build made in another directory).
    pub fn translate(&mut self, keys: &[FindingKey]) {
        for k in &mut self.order {
            if keys.contains(k) {
                continue;
            }
            let mut loose = keys.iter().filter(|other| other.loosely_equals(k));
            if let (Some(one), None) = (loose.next(), loose.next()) {
                *k = one.clone();
            }
        }
    }

    /// [`Flow::translate`] to the identities `replay` (the same input on the campaign's
    /// target) names its exceptions by.
    pub fn translate_for(&mut self, replay: &Replay) {
        let keys: Vec<FindingKey> = replay
            .exceptions
            .iter()
            .map(|e| FindingKey::of(e.kind, &e.site))
            .collect();
        self.translate(&keys);
    }

    /// Every finding that flowed into `p`, directly or through others.
    pub fn ancestors(&self, p: usize) -> BTreeSet<usize> {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<usize> = self
            .from
            .get(p)
            .map(|s| s.iter().copied().collect())
            .unwrap_or_default();
        while let Some(q) = todo.pop() {
            if q != p && seen.insert(q) {
                todo.extend(self.from[q].iter().copied());
            }
        }
        seen
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TaintError {
    #[error("cannot run the taint build: {0}")]
    Run(#[from] std::io::Error),
    #[error("the taint build did not complete the input ({0})")]
    NotCompleted(String),
    #[error("the taint build printed no taint report (is it a NUMFUZZ_CC_TAINT=1 build?)")]
    NoReport,
}

/// Merges the runs (one per label window) of one input into its flow graph.
pub fn merge(runs: &[Replay]) -> Result<Flow, TaintError> {
    let mut flow = Flow::default();
    // Site numbers of the taint build -> source identity, from the exception events.
    let mut keys: BTreeMap<(u32, ExceptionKind), FindingKey> = BTreeMap::new();
    for run in runs {
        for e in &run.exceptions {
            keys.insert((e.site.id, e.kind), FindingKey::of(e.kind, &e.site));
        }
    }
    for run in runs {
        let report = run.taint.as_ref().ok_or(TaintError::NoReport)?;
        flow.mode = Some(report.mode);
        if flow.order.is_empty() {
            for f in &report.flows {
                let key = keys.get(&(f.site, f.kind)).cloned().unwrap_or_else(|| FindingKey {
                    kind: f.kind,
                    path: format!("site {}", f.site),
                    line: 0,
                    column: 0,
                    op: String::new(),
                });
                flow.order.push(key);
                flow.ids.push((f.site, f.kind));
                flow.from.push(BTreeSet::new());
            }
        }
        // Label l of this run is finding number skip + l.
        let finding = |l: &u8| report.skip as usize + *l as usize;
        for (p, f) in report.flows.iter().enumerate().take(flow.from.len()) {
            flow.from[p].extend(f.from.iter().map(finding));
        }
        for (i, r) in run.results.iter().enumerate() {
            let labels: BTreeSet<usize> = r.labels.iter().flatten().map(finding).collect();
            match flow.results.get_mut(i) {
                Some((_, set)) => set.extend(labels),
                None => {
                    let mut plain = r.clone();
                    plain.labels = None;
                    flow.results.push((plain, labels));
                }
            }
        }
    }
    Ok(flow)
}

/// Replays `input` on the taint build in `mode`, as many times as its findings need. Returns
/// the first run (its exceptions, results and ending are those of any run) and the flow graph.
pub fn replay(taint: &Replayer, input: &Path, mode: TaintMode) -> Result<(Replay, Flow), TaintError> {
    let mut runs = Vec::new();
    let mut skip = 0u32;
    loop {
        let run = taint.run_with_env(
            input,
            &[
                (env::TAINT_SKIP, skip.to_string()),
                (env::TAINT_MODE, mode.name().to_string()),
            ],
        )?;
        if !matches!(run.ending, ReplayEnding::Completed { .. }) {
            return Err(TaintError::NotCompleted(format!("{:?}", run.ending)));
        }
        let findings = run.taint.as_ref().map_or(0, |t| t.findings);
        if run.taint.is_none() && !run.exceptions.is_empty() {
            return Err(TaintError::NoReport);
        }
        runs.push(run);
        skip += LABELS;
        if skip >= findings {
            break;
        }
    }
    let flow = if runs.iter().all(|r| r.taint.is_none()) {
        // No exception at all: nothing to label.
        Flow {
            mode: Some(mode),
            results: runs[0].results.iter().map(|r| (r.clone(), BTreeSet::new())).collect(),
            ..Flow::default()
        }
    } else {
        merge(&runs)?
    };
    Ok((runs.swap_remove(0), flow))
}

/// Replays `input` once on the taint build with `repair` applied: what the program returns
/// when that one exception's result is replaced by its finite stand-in.
pub fn replay_repaired(taint: &Replayer, input: &Path, repair: Repair) -> std::io::Result<Replay> {
    taint.run_with_env(input, &[(env::REPAIR, repair.to_env())])
}

#[cfg(test)]
mod tests {
    use super::*;
    use numfuzz_abi::report::{ExceptionReport, TaintFlow, TaintReport};
    use numfuzz_abi::site::SiteInfo;
    use numfuzz_abi::{FloatType, Op};

    fn exception(site: u32, kind: ExceptionKind) -> ExceptionReport {
        ExceptionReport {
            kind,
            site: SiteInfo {
                id: site,
                op: Op::FMul,
                ty: FloatType::F64,
                to: None,
                file: "/s/a.c".into(),
                directory: String::new(),
                line: site,
                column: 1,
                function: "f".into(),
            },
            operands: vec![],
            operands_hex: vec![],
            result: None,
            result_hex: None,
            input: None,
            origin: true,
            label: None,
        }
    }

    fn result(labels: &[u8]) -> ResultReport {
        ResultReport {
            index: Some(0),
            name: None,
            ty: FloatType::F64,
            value: "inf".into(),
            hex: "inf".into(),
            labels: Some(labels.to_vec()),
            shadow: None,
        }
    }

    /// Ten findings, two windows: the second window's labels are findings 8 and 9.
    #[test]
    fn windows_merge_into_one_graph() {
        let ov = ExceptionKind::Overflow;
        let exceptions: Vec<ExceptionReport> = (0..10).map(|s| exception(s, ov)).collect();
        let run = |skip: u32, from9: Vec<u8>, from2: Vec<u8>, res: &[u8]| Replay {
            input: "x".into(),
            bytes: vec![],
            exceptions: exceptions.clone(),
            results: vec![result(res)],
            taint: Some(TaintReport {
                mode: TaintMode::NonFinite,
                skip,
                findings: 10,
                flows: (0..10)
                    .map(|s| TaintFlow {
                        site: s,
                        kind: ov,
                        label: None,
                        from: match s {
                            9 => from9.clone(),
                            2 => from2.clone(),
                            _ => vec![],
                        },
                    })
                    .collect(),
            }),
            errors: Vec::new(),
            statuses: Vec::new(),
            precision: Vec::new(),
            ending: ReplayEnding::Completed { handled: false },
        };
        // Window 0: finding 2 came from finding 1; finding 9 from finding 2; result from 1, 2, 9.
        // Window 1 (skip 8): finding 9's label is 1; the result carries it.
        let flow = merge(&[run(0, vec![2], vec![1], &[1, 2]), run(8, vec![], vec![], &[1])]).unwrap();
        assert_eq!(flow.order.len(), 10);
        assert_eq!(flow.order[3].line, 3);
        assert_eq!(flow.from[2], BTreeSet::from([1]));
        assert_eq!(flow.from[9], BTreeSet::from([2]));
        assert_eq!(flow.results[0].1, BTreeSet::from([1, 2, 9]));
        assert_eq!(flow.results[0].0.labels, None);
        assert_eq!(flow.ancestors(9), BTreeSet::from([1, 2]));
        assert!(flow.ancestors(1).is_empty());
    }
}
