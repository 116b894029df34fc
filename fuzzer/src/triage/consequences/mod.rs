//! What each exception did: its consequence for the declared results, whether it generated
//! the exceptional value or propagated one, whether the input itself held it, and the
//! root-cause chains of the findings that reach a result.
//!
//! Beside it: `taint` replays an input on the taint build (which findings flowed into which
//! results), `root` is the root of one input's non-finite result, and `repair` finds that root
//! by repairing one exception at a time.
//!
//! Per input (after EXCVATE, ARITH 2025, and the origin/propagation split of GPU-FPX and
//! FloatTracker):
//! - `origin`: some exception of the (site, kind) had only finite operands (Generate); one
//!   with an Inf or NaN operand propagates;
//! - `input_borne`: a float field of the input is NaN or infinite (subnormal inputs are
//!   ordinary inputs);
//! - `out_of_domain`: a field lies outside the domain the signature declares for it
//!   (`f64[0,1]`): the function was called where it is not meant to work;
//! - `consequence`: `handled` when the library reported an error for the input; `escapes`
//!   when the taint build shows the exception's value (or one computed from it) in a primary
//!   declared result that is Inf or NaN; `absorbed` otherwise (every result finite, or the
//!   value killed on the way, as `1/inf = 0`).
//! - roots: an input whose primary result is non-finite has one root, the exception whose
//!   repair alone makes the result finite (see `repair`); every finding whose labels
//!   reach the result hangs under it (escapes), and the rest of the input's findings are
//!   `coincident`: never `absorbed` in an input whose result is non-finite. Input-borne
//!   inputs keep the labels' roots: the origins no other escaping origin flowed into.
//!
//! A finding takes its worst consequence over its inputs (escapes > handled > absorbed),
//! judged on inputs that are neither input-borne nor out of domain when it has any.

pub mod repair;
pub mod root;
pub mod taint;

use super::inputs::ordinariness::{self, Ordinariness};
use crate::replay::{Replay, ReplayEnding};
use numfuzz_abi::signature::Signature;
use numfuzz_abi::value::Value;
use numfuzz_outdir::FindingKey;
use root::{Attribution, RootBy, Via};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use taint::Flow;

/// What an exception did to the declared results of one input. Ordered by severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Consequence {
    /// Every primary result stayed finite (an Inf killed on the way, as `1/inf = 0`, or a
    /// value that never reached a result).
    Absorbed,
    /// Raised in an input whose primary result is non-finite, where another exception is the
    /// root and its own value does not reach the result (or no root could be isolated).
    Coincident,
    /// The library reported an error for the input.
    Handled,
    /// The exception made a primary result Inf or NaN and the library did not report it.
    Escapes,
}

impl Consequence {
    pub fn name(self) -> &'static str {
        match self {
            Consequence::Absorbed => "absorbed",
            Consequence::Coincident => "coincident",
            Consequence::Handled => "handled",
            Consequence::Escapes => "escapes",
        }
    }
}

/// One finding in one input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InInput {
    pub origin: bool,
    /// `None` when it cannot be told (the input did not complete, or an input with a
    /// non-finite result was not replayed on a taint build).
    pub consequence: Option<Consequence>,
    /// Escaping findings: the root of its chain in this input (itself for a root); `None`
    /// for a propagated value with no escaping origin before it.
    pub root: Option<FindingKey>,
    /// Names of secondary results (`NUMFUZZ_RESULT_NAMED`) it made Inf or NaN.
    pub named: Vec<String>,
    /// The input's root: how it was chosen and how it reaches the result.
    pub root_by: Option<(RootBy, Via)>,
}

/// One input's analysis.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputAnalysis {
    pub input_borne: bool,
    /// A field lies outside its declared domain.
    pub out_of_domain: bool,
    /// The harness declared results for this input.
    pub has_results: bool,
    /// A primary result is non-finite, unreported, and no exception could be isolated as its
    /// root: a bug with no root site.
    pub unexplained: bool,
    /// How ordinary the input is (the most ordinary one is the example a bug shows).
    pub ordinariness: Ordinariness,
    pub findings: BTreeMap<FindingKey, InInput>,
}

/// A float field of the input is NaN or infinite.
pub fn input_borne(signature: Option<&Signature>, bytes: &[u8]) -> bool {
    signature.is_some_and(|sig| {
        sig.decode(bytes)
            .iter()
            .any(|v| matches!(v, Value::Float(f) if !f.is_finite()))
    })
}

/// Does the input need a taint replay to tell its findings' consequences? Yes when it
/// completed unreported with a non-finite result (a primary one, or a named one, which is
/// reported) and raised something.
pub fn needs_taint(replay: &Replay) -> bool {
    replay.ending == (ReplayEnding::Completed { handled: false })
        && !replay.exceptions.is_empty()
        && replay.results.iter().any(|r| !result_finite(&r.value))
}

/// Does the input need its non-finite primary result attributed (see `repair`)? Yes
/// when it needs a taint replay for a primary result and holds no NaN or infinity.
pub fn needs_attribution(replay: &Replay, signature: Option<&Signature>) -> bool {
    needs_taint(replay)
        && replay
            .results
            .iter()
            .any(|r| r.index.is_some() && !result_finite(&r.value))
        && !input_borne(signature, &replay.bytes)
}

/// Whether each finding of the replay is an origin in it (some exception of it had only
/// finite operands).
pub fn origins(replay: &Replay) -> BTreeMap<FindingKey, bool> {
    let mut origin: BTreeMap<FindingKey, bool> = BTreeMap::new();
    for e in &replay.exceptions {
        *origin.entry(FindingKey::of(e.kind, &e.site)).or_default() |= e.origin;
    }
    origin
}

/// The findings whose labels reach a non-finite primary result, and per finding the earliest
/// label root it came from (positions in the flow graph).
pub struct Escape {
    pub reach: BTreeSet<usize>,
    pub roots: BTreeMap<usize, Option<usize>>,
}

impl Escape {
    pub fn of(flow: &Flow, origin: &BTreeMap<FindingKey, bool>) -> Escape {
        let reach = reaching(flow, |r| !result_finite(&r.value));
        let origin_at = |p: usize| origin.get(&flow.order[p]).copied().unwrap_or(false);
        let roots = roots(flow, &reach, origin_at);
        Escape { reach, roots }
    }

    /// The distinct label roots, earliest first.
    pub fn label_roots(&self) -> Vec<usize> {
        let set: BTreeSet<usize> = self.roots.values().flatten().copied().collect();
        set.into_iter().collect()
    }
}

pub fn result_finite(value: &str) -> bool {
    !matches!(value.to_ascii_lowercase().trim_start_matches('-'), "inf" | "nan")
}

/// The findings of `flow` that reach a primary result for which `bad` holds, and the named
/// results each reaches with a non-finite value.
pub fn reaching(flow: &Flow, bad: impl Fn(&numfuzz_abi::report::ResultReport) -> bool) -> BTreeSet<usize> {
    flow.results
        .iter()
        .filter(|(r, _)| r.index.is_some() && bad(r))
        .flat_map(|(_, set)| set.iter().copied())
        .collect()
}

/// Roots among `reach` (findings that reached a bad result): origins that no other origin in
/// `reach` flowed into. Returns, per finding of `reach`, the earliest root it came from.
pub fn roots(flow: &Flow, reach: &BTreeSet<usize>, origin: impl Fn(usize) -> bool) -> BTreeMap<usize, Option<usize>> {
    let ancestors: BTreeMap<usize, BTreeSet<usize>> = reach.iter().map(|&p| (p, flow.ancestors(p))).collect();
    let is_root = |p: usize| origin(p) && !ancestors[&p].iter().any(|&q| reach.contains(&q) && origin(q));
    reach
        .iter()
        .map(|&p| {
            let root = std::iter::once(p)
                .chain(ancestors[&p].iter().copied())
                .filter(|&q| reach.contains(&q) && is_root(q))
                .min();
            (p, root)
        })
        .collect()
}

/// Analyses one input from its replay on the campaign's target and, when it needed one, its
/// flow graph from the taint build and the attribution of its non-finite result.
pub fn analyze(
    replay: &Replay,
    flow: Option<&Flow>,
    attribution: Option<&Attribution>,
    signature: Option<&Signature>,
) -> InputAnalysis {
    let translated = flow.map(|f| {
        let mut f = f.clone();
        f.translate_for(replay);
        f
    });
    let flow = translated.as_ref();
    let origin = origins(replay);
    let completed = matches!(replay.ending, ReplayEnding::Completed { .. });
    let handled = replay.ending == (ReplayEnding::Completed { handled: true });
    let out_of_domain = signature.is_some_and(|s| !s.in_domain(&replay.bytes));
    let mut out = InputAnalysis {
        input_borne: input_borne(signature, &replay.bytes),
        out_of_domain,
        has_results: !replay.results.is_empty(),
        // Outside the domain a non-finite result is expected: never a bug without a root.
        unexplained: completed && !handled && !out_of_domain && attribution.is_some_and(|a| a.root.is_none()),
        ordinariness: ordinariness::of(signature, &replay.bytes),
        findings: BTreeMap::new(),
    };
    let escape = flow.map(|flow| Escape::of(flow, &origin));
    for (key, &is_origin) in &origin {
        let mut finding = InInput {
            origin: is_origin,
            consequence: None,
            root: None,
            named: Vec::new(),
            root_by: None,
        };
        if completed && out.has_results {
            finding.consequence = if handled {
                Some(Consequence::Handled)
            } else if !needs_taint(replay) {
                Some(Consequence::Absorbed)
            } else {
                match (flow, &escape) {
                    (Some(flow), Some(escape)) => Some(escaping(flow, escape, attribution, key, &mut finding)),
                    _ => None,
                }
            };
        }
        out.findings.insert(key.clone(), finding);
    }
    out
}

/// The consequence of `key` in an input with a non-finite result (named or primary), and its
/// root: the attribution's when the input has one, else the labels' earliest root.
fn escaping(
    flow: &Flow,
    escape: &Escape,
    attribution: Option<&Attribution>,
    key: &FindingKey,
    finding: &mut InInput,
) -> Consequence {
    let position = flow.position(key);
    if let Some(p) = position {
        finding.named = flow
            .results
            .iter()
            .filter(|(r, set)| r.index.is_none() && !result_finite(&r.value) && set.contains(&p))
            .filter_map(|(r, _)| r.name.clone())
            .collect();
    }
    let reaches = position.is_some_and(|p| escape.reach.contains(&p));
    let Some(attribution) = attribution else {
        return match position.filter(|_| reaches) {
            Some(p) => {
                finding.root = escape.roots[&p].map(|q| flow.order[q].clone());
                Consequence::Escapes
            }
            None => Consequence::Absorbed,
        };
    };
    match &attribution.root {
        Some((root, by, via)) if root == key => {
            finding.root = Some(root.clone());
            finding.root_by = Some((*by, *via));
            Consequence::Escapes
        }
        Some((root, ..)) if reaches => {
            finding.root = Some(root.clone());
            Consequence::Escapes
        }
        _ => Consequence::Coincident,
    }
}

/// A finding's consequences merged over its inputs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Merged {
    pub origin: bool,
    /// Every input raising it is input-borne.
    pub input_borne: bool,
    /// Not input-borne, and no input raising it is an ordinary one inside the declared domain.
    pub out_of_domain: bool,
    pub consequence: Option<Consequence>,
    /// Escaping: the root of its chain; itself when some input shows it as its own root.
    pub root: Option<FindingKey>,
    /// One input (its index in the merged list) per consequence.
    pub examples: BTreeMap<Consequence, usize>,
    /// Secondary results it made non-finite in some input.
    pub named: BTreeSet<String>,
    /// A root: how it was chosen in the input shown.
    pub root_by: Option<(RootBy, Via)>,
}

/// Merges one finding's per-input analyses (`inputs[i]` = its analysis in input i).
pub fn merge(key: &FindingKey, inputs: &[(&InputAnalysis, &InInput)]) -> Merged {
    let ordinary: Vec<usize> = (0..inputs.len()).filter(|&i| !inputs[i].0.input_borne).collect();
    let in_domain: Vec<usize> = ordinary
        .iter()
        .copied()
        .filter(|&i| !inputs[i].0.out_of_domain)
        .collect();
    let judged: Vec<usize> = match (in_domain.is_empty(), ordinary.is_empty()) {
        (false, _) => in_domain.clone(),
        (true, false) => ordinary.clone(),
        (true, true) => (0..inputs.len()).collect(),
    };
    let mut m = Merged {
        input_borne: !inputs.is_empty() && ordinary.is_empty(),
        out_of_domain: !ordinary.is_empty() && in_domain.is_empty(),
        ..Merged::default()
    };
    for &i in &judged {
        let f = inputs[i].1;
        m.origin |= f.origin;
        m.named.extend(f.named.iter().cloned());
        if let Some(c) = f.consequence {
            m.examples.entry(c).or_insert(i);
            m.consequence = m.consequence.max(Some(c));
        }
    }
    if m.consequence == Some(Consequence::Escapes) {
        let escaping = || {
            judged
                .iter()
                .map(|&i| inputs[i].1)
                .filter(|f| f.consequence == Some(Consequence::Escapes))
        };
        // Its own root in some input: a bug of its own (the most ordinary such input becomes
        // the example).
        let own_root = judged
            .iter()
            .copied()
            .filter(|&i| inputs[i].1.root.as_ref() == Some(key))
            .min_by_key(|&i| inputs[i].0.ordinariness);
        if let Some(i) = own_root {
            m.root = Some(key.clone());
            m.root_by = inputs[i].1.root_by;
            m.examples.insert(Consequence::Escapes, i);
        } else {
            m.root = escaping().find_map(|f| f.root.clone());
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::ReplayEnding;
    use numfuzz_abi::kind::ExceptionKind;
    use numfuzz_abi::report::{ExceptionReport, ResultReport};
    use numfuzz_abi::site::SiteInfo;
    use numfuzz_abi::{FloatType, Op};

    fn site(line: u32) -> SiteInfo {
        SiteInfo {
            id: line,
            op: Op::FMul,
            ty: FloatType::F64,
            to: None,
            file: "/s/a.c".into(),
            directory: String::new(),
            line,
            column: 1,
            function: "f".into(),
        }
    }

    fn exc(line: u32, kind: ExceptionKind, origin: bool) -> ExceptionReport {
        ExceptionReport {
            kind,
            site: site(line),
            operands: vec![],
            operands_hex: vec![],
            result: None,
            result_hex: None,
            input: None,
            origin,
            label: None,
        }
    }

    fn res(index: Option<u32>, name: Option<&str>, value: &str) -> ResultReport {
        ResultReport {
            index,
            name: name.map(str::to_string),
            ty: FloatType::F64,
            value: value.into(),
            hex: String::new(),
            labels: None,
            shadow: None,
        }
    }

    fn replay(exceptions: Vec<ExceptionReport>, results: Vec<ResultReport>, handled: bool) -> Replay {
        Replay {
            input: "x".into(),
            bytes: 1.0f64.to_le_bytes().to_vec(),
            exceptions,
            results,
            taint: None,
            errors: Vec::new(),
            statuses: Vec::new(),
            precision: Vec::new(),
            ending: ReplayEnding::Completed { handled },
        }
    }

    fn key(line: u32, kind: ExceptionKind) -> FindingKey {
        FindingKey::of(kind, &site(line))
    }

    const U: ExceptionKind = ExceptionKind::Underflow;
    const D: ExceptionKind = ExceptionKind::DivByZero;
    const O: ExceptionKind = ExceptionKind::Overflow;

    /// Underflow to 0 (line 1), 1/0 (line 2) into the result: the underflow is the root and
    /// the DivByZero hangs under it; an unrelated underflow (line 3) is absorbed.
    #[test]
    fn an_underflow_is_the_root_of_the_division_it_feeds() {
        let r = replay(
            vec![exc(1, U, true), exc(2, D, true), exc(3, U, true)],
            vec![res(Some(0), None, "inf"), res(None, Some("err"), "inf")],
            false,
        );
        let flow = Flow {
            mode: None,
            order: vec![key(1, U), key(2, D), key(3, U)],
            ids: vec![],
            from: vec![BTreeSet::new(), BTreeSet::from([0]), BTreeSet::new()],
            results: vec![
                (res(Some(0), None, "inf"), BTreeSet::from([0, 1])),
                (res(None, Some("err"), "inf"), BTreeSet::from([0, 1])),
            ],
        };
        let a = analyze(&r, Some(&flow), None, None);
        let u = &a.findings[&key(1, U)];
        assert_eq!(
            (u.consequence, u.root.clone()),
            (Some(Consequence::Escapes), Some(key(1, U)))
        );
        assert_eq!(u.named, ["err"]);
        let d = &a.findings[&key(2, D)];
        assert_eq!(
            (d.consequence, d.root.clone()),
            (Some(Consequence::Escapes), Some(key(1, U)))
        );
        assert_eq!(a.findings[&key(3, U)].consequence, Some(Consequence::Absorbed));
    }

    #[test]
    fn handled_absorbed_and_unknown() {
        let handled = replay(vec![exc(1, O, true)], vec![res(Some(0), None, "inf")], true);
        assert_eq!(
            analyze(&handled, None, None, None).findings[&key(1, O)].consequence,
            Some(Consequence::Handled)
        );
        let finite = replay(vec![exc(1, U, true)], vec![res(Some(0), None, "1.0")], false);
        assert!(!needs_taint(&finite));
        assert_eq!(
            analyze(&finite, None, None, None).findings[&key(1, U)].consequence,
            Some(Consequence::Absorbed)
        );
        // A non-finite result without a taint replay: cannot be told.
        let inf = replay(vec![exc(1, O, true)], vec![res(Some(0), None, "-inf")], false);
        assert!(needs_taint(&inf));
        assert_eq!(analyze(&inf, None, None, None).findings[&key(1, O)].consequence, None);
        // No declared results: no consequences at all.
        let none = replay(vec![exc(1, O, true)], vec![], false);
        let a = analyze(&none, None, None, None);
        assert!(!a.has_results);
        assert_eq!(a.findings[&key(1, O)].consequence, None);
    }

    #[test]
    fn a_propagation_is_not_a_root_and_nan_inputs_are_input_borne() {
        let nan = f64::NAN.to_le_bytes().to_vec();
        let sig = Signature::parse("f64").unwrap();
        let mut r = replay(
            vec![exc(1, ExceptionKind::Invalid, false)],
            vec![res(Some(0), None, "NaN")],
            false,
        );
        r.bytes = nan;
        let flow = Flow {
            mode: None,
            order: vec![key(1, ExceptionKind::Invalid)],
            ids: vec![],
            from: vec![BTreeSet::new()],
            results: vec![(res(Some(0), None, "NaN"), BTreeSet::from([0]))],
        };
        let a = analyze(&r, Some(&flow), None, Some(&sig));
        assert!(a.input_borne);
        let f = &a.findings[&key(1, ExceptionKind::Invalid)];
        assert_eq!(
            (f.origin, f.consequence, f.root.clone()),
            (false, Some(Consequence::Escapes), None)
        );
        assert!(input_borne(Some(&sig), &f64::INFINITY.to_le_bytes()));
        assert!(
            !input_borne(Some(&sig), &5e-324f64.to_le_bytes()),
            "subnormal inputs are ordinary"
        );
    }

    #[test]
    fn merging_takes_the_worst_consequence_and_an_own_root_wins() {
        let k = key(1, O);
        let plain = InputAnalysis::default();
        let borne = InputAnalysis {
            input_borne: true,
            ..InputAnalysis::default()
        };
        let f = |c, root: Option<FindingKey>| InInput {
            origin: true,
            consequence: Some(c),
            root,
            named: vec![],
            root_by: None,
        };
        let absorbed = f(Consequence::Absorbed, None);
        let chained = f(Consequence::Escapes, Some(key(9, U)));
        let own = f(Consequence::Escapes, Some(k.clone()));
        let handled = f(Consequence::Handled, None);
        let m = merge(&k, &[(&plain, &absorbed), (&plain, &chained), (&plain, &handled)]);
        assert_eq!(m.consequence, Some(Consequence::Escapes));
        assert_eq!(m.root, Some(key(9, U)));
        assert_eq!(m.examples.len(), 3);
        let m = merge(&k, &[(&plain, &chained), (&plain, &own)]);
        assert_eq!((m.root, m.examples[&Consequence::Escapes]), (Some(k.clone()), 1));
        // Input-borne inputs do not count while there are others...
        let m = merge(&k, &[(&borne, &own), (&plain, &absorbed)]);
        assert_eq!((m.input_borne, m.consequence), (false, Some(Consequence::Absorbed)));
        // ... and when there are only those, the finding is input-borne.
        let m = merge(&k, &[(&borne, &own)]);
        assert!(m.input_borne);
        // Inputs outside the declared domain count only when there are no others...
        let outside = InputAnalysis {
            out_of_domain: true,
            ..InputAnalysis::default()
        };
        let m = merge(&k, &[(&outside, &own), (&plain, &absorbed)]);
        assert_eq!((m.out_of_domain, m.root.clone()), (false, None));
        assert_eq!(m.consequence, Some(Consequence::Absorbed));
        // ... and then the finding is out of domain (input-borne first).
        let m = merge(&k, &[(&outside, &own), (&outside, &absorbed)]);
        assert_eq!((m.out_of_domain, m.root), (true, Some(k.clone())));
        let m = merge(&k, &[(&borne, &own)]);
        assert!(!m.out_of_domain);
    }
}
