//! Judging one input for one finding: does it still raise it, does it still escape (as its
//! own root), and is its result right against the reference oracle (and does the finding's
//! value flow into a wrong one)? Used to attach references to findings and as the predicate
//! that keeps a finding's consequence through minimisation.

use super::attribution;
use super::consequence::{self, Consequence};
use super::group::{Finding, Reference};
use super::oracle::{self, Oracle, Request, RequestResult, ResultVerdict, Verdict};
use super::taint;
use crate::replay::{Ending, Replay, Replayer};
use numfuzz_abi::signature::Signature;
use numfuzz_abi::taint::TaintMode;
use numfuzz_abi::value::Value;
use numfuzz_outdir::FindingKey;
use std::collections::HashMap;
use std::io::Write;
use std::sync::Mutex;

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

/// The decimal an oracle reads for a field (`inf`, `-inf`, `nan` in lower case).
fn field_decimal(v: &Value) -> String {
    let s = v.to_string();
    match s.to_ascii_lowercase().as_str() {
        "nan" | "-nan" => "nan".into(),
        "inf" | "-inf" => s.to_ascii_lowercase(),
        _ => s,
    }
}

/// The oracle and everything needed to ask it.
pub struct OracleJudge {
    pub command: String,
    oracle: Mutex<Option<Oracle>>,
    error: Mutex<Option<String>>,
    function: String,
    tolerance: f64,
    /// Answers by input bytes (`None`: the oracle knew no reference).
    answers: Mutex<HashMap<Vec<u8>, Option<ResultVerdict>>>,
    asked: Mutex<usize>,
}

impl OracleJudge {
    pub fn start(command: &str, function: &str, tolerance: f64, timeout: std::time::Duration) -> OracleJudge {
        let (oracle, error) = match Oracle::start_with_timeout(command, timeout) {
            Ok(o) => (Some(o), None),
            Err(e) => (None, Some(e.to_string())),
        };
        OracleJudge {
            command: command.to_string(),
            oracle: Mutex::new(oracle),
            error: Mutex::new(error),
            function: function.to_string(),
            tolerance,
            answers: Mutex::new(HashMap::new()),
            asked: Mutex::new(0),
        }
    }

    /// Why the oracle was given up on, if it was.
    pub fn error(&self) -> Option<String> {
        self.error.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn asked(&self) -> usize {
        *self.asked.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }

    /// The worst verdict on the primary results of `replay` (of `bytes`).
    fn verdict(&self, signature: Option<&Signature>, bytes: &[u8], replay: &Replay) -> Option<ResultVerdict> {
        if let Some(known) = self.answers.lock().unwrap_or_else(|e| e.into_inner()).get(bytes) {
            return known.clone();
        }
        let handled = replay.ending == (Ending::Completed { handled: true });
        if !matches!(replay.ending, Ending::Completed { .. }) || !replay.results.iter().any(|r| r.index.is_some()) {
            return None;
        }
        let request = Request {
            function: self.function.clone(),
            inputs: signature
                .map(|s| s.decode(bytes).iter().map(field_decimal).collect())
                .unwrap_or_default(),
            results: replay
                .results
                .iter()
                .map(|r| RequestResult {
                    index: r.index,
                    name: r.name.clone(),
                    value: r.value.clone(),
                })
                .collect(),
        };
        let judgement = {
            let mut guard = self.oracle.lock().unwrap_or_else(|e| e.into_inner());
            let oracle = guard.as_mut()?;
            *self.asked.lock().unwrap_or_else(|e| e.into_inner()) += 1;
            match oracle.ask(&request) {
                Ok(j) => j,
                Err(e) => {
                    *guard = None;
                    *self.error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.to_string());
                    return None;
                }
            }
        };
        let verdict = oracle::judge(&replay.results, &judgement, handled, self.tolerance);
        self.answers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(bytes.to_vec(), verdict.clone());
        verdict
    }
}

/// Replays inputs given as bytes on the campaign's target and its taint build.
pub struct Judge<'a> {
    pub replayer: &'a Replayer,
    pub taint: Option<&'a Replayer>,
    pub signature: Option<&'a Signature>,
    pub oracle: Option<&'a OracleJudge>,
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
                    let (flow, attribution) = attribution::on_taint_build(t, path, &replay, self.signature)?;
                    Some(consequence::analyze(
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
        let oracle = self.oracle?;
        let replay = self.replayer.run_bytes(bytes).ok()?;
        if !replay.exceptions.iter().any(|e| key.matches(e)) {
            return None;
        }
        let judged = oracle.verdict(self.signature, bytes, &replay)?;
        let mut reference = Reference {
            judged,
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
                let reach = consequence::reaching(&flow, |r| r.index == Some(index));
                let origin_at = |p: usize| {
                    replay
                        .exceptions
                        .iter()
                        .any(|e| e.origin && FindingKey::of(e.kind, &e.site) == flow.order[p])
                };
                let roots = consequence::roots(&flow, &reach, origin_at);
                let position = flow.position(key).filter(|p| reach.contains(p));
                reference.reaches = Some(position.is_some());
                reference.root = position.and_then(|p| roots[&p]).map(|q| flow.order[q].clone());
            }
        }
        Some(reference)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use numfuzz_abi::value::Float;

    #[test]
    fn oracle_decimals() {
        let f = |x: f64| field_decimal(&Value::Float(Float::from_f64(x)));
        assert_eq!(f(f64::NAN), "nan");
        assert_eq!(f(f64::NEG_INFINITY), "-inf");
        assert_eq!(f(709.6), "709.6");
        assert_eq!(f(5e-324), "5e-324");
    }
}
