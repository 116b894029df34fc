//! Judging one input for one finding: does it still raise it, does it still escape (as its
//! own root), and is its result right against the reference (and does the finding's
//! value flow into a wrong one)? Used to attach references to findings and as the predicate
//! that keeps a finding's consequence through minimisation.

use crate::replay::{Replay, Replayer};
use crate::triage::consequences::{self, repair, taint, Consequence};
use crate::triage::references::oracle::Verdict;
use crate::triage::references::References;
use crate::triage::report::{Finding, Reference};
use numfuzz_abi::signature::Signature;
use numfuzz_abi::taint::TaintMode;
use numfuzz_outdir::FindingKey;
use std::io::Write;

/// What a finding's minimised input must keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Raise the (site, kind).
    Raises,
    /// Escape into a result.
    Escapes,
    /// Escape into a result as its own root (a bug).
    EscapesAsRoot,
    /// Make a result wrong as its own root (a bug found by the oracle).
    WrongAsRoot,
}

impl Keep {
    pub fn of(f: &Finding) -> Keep {
        match (f.is_bug(), f.consequence) {
            (true, Some(Consequence::Escapes)) => Keep::EscapesAsRoot,
            (true, _) => Keep::WrongAsRoot,
            (false, Some(Consequence::Escapes)) => Keep::Escapes,
            _ => Keep::Raises,
        }
    }
}

/// Replays inputs given as bytes on the campaign's target and its taint build.
pub struct Judge<'a> {
    pub replayer: &'a Replayer,
    pub taint: Option<&'a Replayer>,
    pub signature: Option<&'a Signature>,
    pub references: Option<&'a References>,
}

fn with_file<T>(bytes: &[u8], f: impl FnOnce(&std::path::Path) -> Option<T>) -> Option<T> {
    let mut file = tempfile::Builder::new().prefix("numfuzz-input-").tempfile().ok()?;
    file.write_all(bytes).ok()?;
    file.flush().ok()?;
    f(file.path())
}

impl Judge<'_> {
    /// The taint analysis of `bytes` in `mode`.
    fn taint_analysis(&self, bytes: &[u8], mode: TaintMode) -> Option<(Replay, taint::Flow)> {
        let t = self.taint?;
        with_file(bytes, |path| taint::replay(t, path, mode).ok())
    }

    /// Does `bytes` still do what `keep` asks of finding `key`?
    pub fn keeps(&self, keep: Keep, key: &FindingKey, bytes: &[u8]) -> bool {
        match keep {
            Keep::Raises => self
                .replayer
                .run_bytes(bytes)
                .is_ok_and(|r| r.exceptions.iter().any(|e| key.matches(e))),
            Keep::Escapes | Keep::EscapesAsRoot => {
                let Some(t) = self.taint else { return false };
                let analysis = with_file(bytes, |path| {
                    let replay = self.replayer.run(path).ok()?;
                    let (flow, attribution) = repair::on_taint_build(t, path, &replay, self.signature)?;
                    Some(consequences::analyze(
                        &replay,
                        Some(&flow),
                        attribution.as_ref(),
                        self.signature,
                    ))
                });
                let Some(a) = analysis else { return false };
                // The taint build's identity of the finding (its directory may differ).
                let Some(key) = a.findings.keys().find(|k| *k == key || k.loosely_equals(key)) else {
                    return false;
                };
                a.findings.get(key).is_some_and(|f| {
                    f.consequence == Some(Consequence::Escapes)
                        && (keep == Keep::Escapes || f.root.as_ref() == Some(key))
                        && !a.input_borne
                })
            }
            Keep::WrongAsRoot => self.reference(key, bytes, "").is_some_and(|r| {
                r.judged.verdict == Verdict::Wrong && r.reaches == Some(true) && r.root.as_ref() == Some(key)
            }),
        }
    }

    /// The reference judgement of `bytes` for finding `key` (`input` names it in the report):
    /// `None` without an oracle, a reference, or when the input does not raise the finding.
    pub fn reference(&self, key: &FindingKey, bytes: &[u8], input: &str) -> Option<Reference> {
        let references = self.references?;
        let replay = self.replayer.run_bytes(bytes).ok()?;
        if !replay.exceptions.iter().any(|e| key.matches(e)) {
            return None;
        }
        let judged = references.verdict(self.signature, bytes, &replay)?;
        let source = references.source_of(&judged);
        let mut reference = Reference {
            judged,
            source,
            input: input.to_string(),
            reaches: None,
            root: None,
        };
        // A finite wrong result: which findings' values flow into it.
        let finite = reference.judged.returned.parse::<f64>().is_ok_and(f64::is_finite);
        if reference.judged.verdict == Verdict::Wrong && finite {
            if let Some((_, mut flow)) = self.taint_analysis(bytes, TaintMode::Influence) {
                flow.translate_for(&replay);
                let index = reference.judged.index;
                let reach = consequences::reaching(&flow, |r| r.index == Some(index));
                let origin_at = |p: usize| {
                    replay
                        .exceptions
                        .iter()
                        .any(|e| e.origin && FindingKey::of(e.kind, &e.site) == flow.order[p])
                };
                let roots = consequences::roots(&flow, &reach, origin_at);
                let position = flow.position(key).filter(|p| reach.contains(p));
                reference.reaches = Some(position.is_some());
                reference.root = position.and_then(|p| roots[&p]).map(|q| flow.order[q].clone());
            }
        }
        Some(reference)
    }
}
