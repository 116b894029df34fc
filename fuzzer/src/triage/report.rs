//! The triage report: findings grouped by (site, kind) with their consequences, references and
//! classes, real crashes grouped by (signal, top frame), hangs, inputs that did not reproduce
//! and unexplained non-finite results. `findings::group` builds it from replays; every format and
//! `run-all` read it.

use super::consequences::root::{DroppedReport, RootBy, Via};
use super::consequences::Consequence;
use super::inputs::ordinariness::Ordinariness;
use super::references::oracle::{ResultVerdict, Verdict};
use super::references::Source;
use crate::replay::{decode_fields, DecodedField, Frame};
use numfuzz_abi::kind::ExceptionKind;
use numfuzz_abi::report::{ExceptionReport, PrecisionLoss, ResultReport};
use numfuzz_abi::signature::Signature;
use numfuzz_abi::site::SiteInfo;
use numfuzz_outdir::FindingKey;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Whether the library reported the exception itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// At least one input raising it did not end in `NUMFUZZ_HANDLED()`.
    Silent,
    /// Every input raising it ended in `NUMFUZZ_HANDLED()`.
    Handled,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Silent => "silent",
            Status::Handled => "handled",
        }
    }
}

/// An input as reports show it: its path relative to the output directory and its fields.
#[derive(Clone, Debug)]
pub struct InputView {
    pub rel: String,
    pub fields: Vec<DecodedField>,
}

/// Decoded fields of `bytes`; without a signature, the raw bytes.
pub fn view_fields(signature: Option<&Signature>, bytes: &[u8]) -> Vec<DecodedField> {
    match signature {
        Some(sig) => decode_fields(sig, bytes),
        None => {
            let hex: String = bytes.iter().take(64).map(|b| format!("{b:02x}")).collect();
            let more = if bytes.len() > 64 { "..." } else { "" };
            vec![DecodedField {
                ty: "bytes".into(),
                value: format!("{} bytes", bytes.len()),
                hex: format!("0x{hex}{more}"),
            }]
        }
    }
}

/// The minimised input of a finding.
#[derive(Clone, Debug)]
pub struct Minimized {
    /// Where it was written.
    pub path: PathBuf,
    pub fields: Vec<DecodedField>,
    /// The exception as the minimised input raises it.
    pub expression: String,
    /// The results the harness declared for it.
    pub results: Vec<ResultReport>,
}

/// A finding's reference judgement: the true value (the oracle's, or the shadow build's) of
/// the worst-judged primary result of the input shown (the minimised one when there is one).
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    pub judged: ResultVerdict,
    pub source: Source,
    /// The input judged (relative to the output directory, or the minimised file).
    pub input: String,
    /// Taint build, influence mode (a `wrong` finite result): the finding's value flows into
    /// the judged result.
    pub reaches: Option<bool>,
    /// Of the findings whose values flow into that wrong result, the root this one hangs under.
    pub root: Option<FindingKey>,
}

/// Where a finding belongs in the report, from most to least important.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FindingClass {
    /// Reaches a result (non-finite and unreported, or wrong against the reference) and is
    /// its own root.
    Bug,
    /// Reaches a result, downstream of a bug (listed under it).
    Chained,
    /// Never generated the exceptional value itself: an operand was already Inf or NaN.
    Propagated,
    /// Escapes as a NaN where the reference says the true value is undefined: the library's
    /// NaN is the answer.
    Undefined,
    /// Escapes where the shadow build says the true value is beyond the format too (a true
    /// overflow or underflow, a pole, the log of an exact zero): the ±Inf or 0 is the answer.
    Range,
    Handled,
    /// Raised in inputs whose non-finite result another exception explains (or none could).
    Coincident,
    Absorbed,
    /// Only inputs holding NaN or an infinity raise it.
    InputBorne,
    /// Only inputs outside the signature's declared domain raise it (`f64[0,1]`).
    OutOfDomain,
    /// Consequences were not computed (no declared results, or no taint build).
    Unjudged,
    /// The root of an escape that no reference judged, although triage had one (an oracle, a
    /// shadow build): whether the Inf or NaN is wrong is not known, so it is not a bug; the
    /// finding says why no reference spoke ([`Finding::not_judged`]).
    NotJudged,
}

impl FindingClass {
    pub fn name(self) -> &'static str {
        match self {
            FindingClass::Bug => "bug",
            FindingClass::Chained => "chained",
            FindingClass::Propagated => "propagated",
            FindingClass::Undefined => "undefined",
            FindingClass::Range => "range",
            FindingClass::Handled => "handled",
            FindingClass::Coincident => "coincident",
            FindingClass::Absorbed => "absorbed",
            FindingClass::InputBorne => "input-borne",
            FindingClass::OutOfDomain => "out-of-domain",
            FindingClass::Unjudged => "unjudged",
            FindingClass::NotJudged => "not-judged",
        }
    }
}

/// One distinct floating-point exception: a (site, kind).
#[derive(Clone, Debug)]
pub struct Finding {
    /// Stable name (`Overflow-exp.c-406-17-exp`), also the minimised input's file name.
    pub id: String,
    pub key: FindingKey,
    pub site: SiteInfo,
    /// The exception as the input shown raised it (operands, result).
    pub example: ExceptionReport,
    /// The input shown: the example of its worst consequence when consequences are known,
    /// else the first input that raised it.
    pub input: InputView,
    pub input_bytes: Vec<u8>,
    /// The results the harness declared for the input shown.
    pub results: Vec<ResultReport>,
    /// Every input raising it (relative paths, in replay order).
    pub inputs: Vec<String>,
    pub handled_inputs: usize,
    pub silent_inputs: usize,
    /// Earliest time any instance saw it, in ms since that instance's start.
    pub first_seen_ms: Option<u64>,
    pub minimized: Option<Minimized>,
    /// Why minimisation was not possible, when it was asked for.
    pub minimize_note: Option<String>,
    /// Some input's exception of it had only finite operands.
    pub origin: bool,
    /// Every input raising it holds a NaN or an infinity.
    pub input_borne: bool,
    /// No ordinary input raising it lies inside the declared domain.
    pub out_of_domain: bool,
    /// Its worst consequence over its inputs (`None`: not computed).
    pub consequence: Option<Consequence>,
    /// Escaping findings: the root of their chain (their own key for a root).
    pub escape_root: Option<FindingKey>,
    /// A root: how it was chosen, and how it reaches the result, in the input shown.
    pub root_by: Option<(RootBy, Via)>,
    /// How ordinary the input shown is (bugs are listed most ordinary first).
    pub ordinariness: Ordinariness,
    /// One input per consequence.
    pub examples: BTreeMap<Consequence, InputView>,
    /// Secondary results (`NUMFUZZ_RESULT_NAMED`) it made Inf or NaN.
    pub escapes_to: Vec<String>,
    pub reference: Option<Reference>,
    /// The root of an escape whose input no reference judged while triage had references:
    /// why (the shadow's own range or precision, at which site; the oracle's silence).
    pub not_judged: Option<String>,
    /// The input shown completed as a success after the library reported an error inside
    /// (see `findings::dropped_report`): the report is the root of what it returned.
    pub dropped_report: Option<DroppedReport>,
    /// Inputs of its dropped report whose cause was not isolated otherwise, merged into it.
    pub inputs_not_isolated: usize,
    /// A bug's root computed on digits lost before it: where (see `findings::precision_lost`), from the MPFR
    /// build's replay of the input shown.
    pub precision_lost: Option<PrecisionLoss>,
    /// Its C reproducer (`--repro`), bugs only.
    pub reproducer: Option<Reproducer>,
}

impl Finding {
    /// No longer its own root: it hangs under `head` in the report (one entry per dropped
    /// report, per origin of lost precision).
    pub fn hang_under(&mut self, head: &FindingKey) {
        if self.escape_root.as_ref() == Some(&self.key) {
            self.escape_root = Some(head.clone());
        }
        if let Some(r) = self.reference.as_mut().filter(|r| r.root.as_ref() == Some(&self.key)) {
            r.root = Some(head.clone());
        }
    }

    pub fn status(&self) -> Status {
        if self.silent_inputs > 0 {
            Status::Silent
        } else {
            Status::Handled
        }
    }

    /// The root of the chain it belongs to: of the non-finite results it reaches, else of the
    /// wrong result it flows into.
    pub fn root(&self) -> Option<&FindingKey> {
        if self.undefined_result() || self.true_range() {
            return None;
        }
        if self.consequence == Some(Consequence::Escapes) {
            return self.escape_root.as_ref();
        }
        self.reference
            .as_ref()
            .filter(|r| r.judged.verdict == Verdict::Wrong && r.reaches == Some(true))
            .and_then(|r| r.root.as_ref())
    }

    /// It escapes, and the oracle says the result it reaches is undefined and was returned
    /// as NaN.
    fn undefined_result(&self) -> bool {
        self.consequence == Some(Consequence::Escapes)
            && self
                .reference
                .as_ref()
                .is_some_and(|r| r.judged.verdict == Verdict::Undefined)
    }

    /// It escapes, and the shadow build says the true value is beyond the format too. (An
    /// oracle's `unreported-range` stays a bug: an oracle speaks for a library that promises
    /// to report range errors, as GSL does; the shadow knows no such promise.)
    fn true_range(&self) -> bool {
        self.dropped_report.is_none()
            && self.consequence == Some(Consequence::Escapes)
            && self
                .reference
                .as_ref()
                .is_some_and(|r| r.source != Source::Oracle && r.judged.verdict == Verdict::UnreportedRange)
    }

    /// An exception that makes the library return a non-finite or wrong value without saying
    /// so, and is the root of that.
    pub fn is_bug(&self) -> bool {
        !self.input_borne
            && !self.out_of_domain
            && (self.not_judged.is_none() || self.dropped_report.is_some())
            && self.root() == Some(&self.key)
    }

    pub fn class(&self) -> FindingClass {
        if self.input_borne {
            return FindingClass::InputBorne;
        }
        if self.out_of_domain {
            return FindingClass::OutOfDomain;
        }
        if self.is_bug() {
            return FindingClass::Bug;
        }
        if self.not_judged.is_some() && self.dropped_report.is_none() && self.root() == Some(&self.key) {
            return FindingClass::NotJudged;
        }
        if self.root().is_some() {
            return FindingClass::Chained;
        }
        let Some(c) = self.consequence else {
            return FindingClass::Unjudged;
        };
        if !self.origin {
            return FindingClass::Propagated;
        }
        if self.undefined_result() {
            return FindingClass::Undefined;
        }
        if self.true_range() {
            return FindingClass::Range;
        }
        match c {
            Consequence::Handled => FindingClass::Handled,
            Consequence::Coincident => FindingClass::Coincident,
            // Escaping without an escaping origin before it is a propagation (handled above).
            Consequence::Absorbed | Consequence::Escapes => FindingClass::Absorbed,
        }
    }
}

/// Real crashes with the same signal and top frame.
#[derive(Clone, Debug)]
pub struct CrashGroup {
    pub signal: String,
    /// The frame that names it (see [`Replay::crash_frame`]).
    pub frame: Option<Frame>,
    /// The first input's stack, innermost first.
    pub stack: Vec<Frame>,
    pub input: InputView,
    pub inputs: Vec<String>,
    pub first_seen_ms: Option<u64>,
}

/// An input that exceeded the time limit.
#[derive(Clone, Debug)]
pub struct Hang {
    pub input: InputView,
    pub first_seen_ms: Option<u64>,
    /// Where it was when it was stopped: the innermost frame of the program's own code, and
    /// the whole stack (innermost first; empty when the program could not say).
    pub frame: Option<Frame>,
    pub stack: Vec<Frame>,
}

/// An input that did not do on replay what it did in the campaign.
#[derive(Clone, Debug)]
pub struct NotReproduced {
    pub input: String,
    pub expected: String,
    pub observed: String,
}

/// Inputs whose primary result is non-finite and unreported, with no exception whose repair
/// alone makes it finite and none whose value reaches it: a bug whose cause is not isolated.
/// Inputs raising the same origins are one entry.
#[derive(Clone, Debug)]
pub struct Unexplained {
    /// The entry's most ordinary input, its results, and the origins it raised.
    pub input: InputView,
    pub results: Vec<ResultReport>,
    pub origins: Vec<FindingKey>,
    /// Every input of the entry (relative paths).
    pub inputs: Vec<String>,
    pub first_seen_ms: Option<u64>,
    /// Of the input shown: the entry's most ordinary.
    pub ordinariness: Ordinariness,
    /// Its inputs completed as a success after the library reported an error inside: the
    /// entry's root (inputs are grouped by it instead of by their origins).
    pub dropped_report: Option<DroppedReport>,
}

/// Whether the report could tell what each exception did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Consequences {
    /// From the declared results and the taint build.
    Computed,
    /// The harness declares no results (`NUMFUZZ_RESULT`).
    NoResults,
    /// Some input returned Inf or NaN, and there is no taint build to tell which exception
    /// caused it (expected at this path).
    NoTaintBuild { expected: PathBuf },
}

/// How the reference (the oracle, or the shadow build) was used.
#[derive(Clone, Debug, PartialEq)]
pub struct OracleUse {
    pub source: Source,
    /// The oracle's command line, or the shadow build's path.
    pub command: String,
    /// Inputs it judged.
    pub judged: usize,
    /// Shadow: inputs left unjudged because their shadows were unreliable.
    pub unreliable: usize,
    /// Why it was given up on, if it was.
    pub error: Option<String>,
    pub tolerance: f64,
    /// The shadow's MPFR build (the ladder's second rung), if it had one.
    pub mpfr: Option<String>,
}

/// Everything triage found.
#[derive(Clone, Debug)]
pub struct Report {
    pub out_dir: PathBuf,
    pub target: PathBuf,
    pub signature: Option<String>,
    pub instances: Vec<String>,
    pub inputs_replayed: usize,
    pub timeout_ms: u64,
    pub findings: Vec<Finding>,
    pub crashes: Vec<CrashGroup>,
    pub hangs: Vec<Hang>,
    pub not_reproduced: Vec<NotReproduced>,
    /// Non-finite results no exception could be isolated as the root of.
    pub unexplained: Vec<Unexplained>,
    /// Repaired replays on the taint build (the cost of attributing roots by repair).
    pub repair_replays: usize,
    /// Where minimised inputs were written (with `--minimize`).
    pub minimized_dir: Option<PathBuf>,
    pub consequences: Consequences,
    /// The taint build replayed for consequences.
    pub taint_target: Option<PathBuf>,
    pub oracle: Option<OracleUse>,
    /// With both an oracle and a shadow build: the shadow's verdicts against the oracle's.
    pub shadow_agreement: Option<super::references::shadow_agreement::Agreement>,
    /// Every instance's `exceptions.jsonl` (the HTML report charts them over time).
    pub records: Vec<super::inputs::campaign::InstanceRecords>,
}

/// How bad what an input returned looks: 0 all primary results finite (a wrong value), 1 a NaN,
/// 2 an infinity.
pub(crate) fn returned_rank(results: &[ResultReport]) -> u8 {
    results
        .iter()
        .filter(|r| r.index.is_some())
        .map(|r| value_rank(&r.value))
        .max()
        .unwrap_or(0)
}

/// How a returned value ranks in the bug list's order: 0 finite (wrong), 1 NaN, 2 an infinity.
pub fn value_rank(value: &str) -> u8 {
    match value.trim_start_matches('-').to_ascii_lowercase().as_str() {
        "inf" => 2,
        "nan" => 1,
        _ => 0,
    }
}

/// The entries of a bug list by the reference that judged each: the oracle, the x87 shadow
/// build, the MPFR shadow build, the library's own error report (dropped by a caller, no
/// reference having judged), or none (no reference at all, or a non-finite result whose cause
/// is not isolated).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BugsBy {
    pub oracle: usize,
    pub shadow: usize,
    pub mpfr: usize,
    pub domain: usize,
    pub library: usize,
    pub unreferenced: usize,
}

/// Findings, silent and handled counts of one kind (or of all kinds with `None`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KindCount {
    pub findings: usize,
    pub silent: usize,
    pub handled: usize,
}

impl Report {
    /// The bugs, most ordinary input first (see `inputs::ordinariness`); at equal ordinariness a wrong
    /// finite value before a NaN before an infinity, then in finding order.
    pub fn bugs(&self) -> impl Iterator<Item = &Finding> {
        let mut bugs: Vec<&Finding> = self.findings.iter().filter(|f| f.is_bug()).collect();
        bugs.sort_by_key(|f| (f.ordinariness, returned_rank(&f.results)));
        bugs.into_iter()
    }

    /// Entries of the bug list: the bug findings and the non-finite results whose cause is not
    /// isolated.
    pub fn bug_count(&self) -> usize {
        self.bugs().count() + self.unexplained.len()
    }

    /// The escapes' roots no reference judged ([`FindingClass::NotJudged`]), in the bug list's
    /// order: listed after the bugs, never counted as bugs.
    pub fn not_judged(&self) -> impl Iterator<Item = &Finding> {
        let mut found: Vec<&Finding> = self
            .findings
            .iter()
            .filter(|f| f.class() == FindingClass::NotJudged)
            .collect();
        found.sort_by_key(|f| (f.ordinariness, returned_rank(&f.results)));
        found.into_iter()
    }

    /// The entries of the bug list by what judged them.
    pub fn bugs_by(&self) -> BugsBy {
        let mut by = BugsBy {
            unreferenced: self.unexplained.len(),
            ..BugsBy::default()
        };
        for f in self.bugs() {
            if f.dropped_report.is_some() && (f.not_judged.is_some() || f.reference.is_none()) {
                by.library += 1;
                continue;
            }
            match f.reference.as_ref().map(|r| r.source) {
                Some(Source::Oracle) => by.oracle += 1,
                Some(Source::Shadow) => by.shadow += 1,
                Some(Source::Mpfr) => by.mpfr += 1,
                Some(Source::Domain) => by.domain += 1,
                None => by.unreferenced += 1,
            }
        }
        by
    }

    /// The findings of a class.
    pub fn class_count(&self, class: FindingClass) -> usize {
        self.findings.iter().filter(|f| f.class() == class).count()
    }

    /// The findings hanging under `root` in its chain.
    pub fn chain(&self, root: &FindingKey) -> Vec<&Finding> {
        self.findings
            .iter()
            .filter(|f| f.key != *root && f.root() == Some(root))
            .collect()
    }

    /// A finding's id by key.
    pub fn id_of(&self, key: &FindingKey) -> Option<&str> {
        self.findings.iter().find(|f| f.key == *key).map(|f| f.id.as_str())
    }

    pub fn count(&self, kind: Option<ExceptionKind>) -> KindCount {
        let mut c = KindCount::default();
        for f in self.findings.iter().filter(|f| kind.is_none_or(|k| f.key.kind == k)) {
            c.findings += 1;
            match f.status() {
                Status::Silent => c.silent += 1,
                Status::Handled => c.handled += 1,
            }
        }
        c
    }
}

/// The reproducer of one bug.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reproducer {
    pub path: PathBuf,
    /// A command that builds and runs it (`HARNESS.c` and `PLAIN_LIBRARY` stand for what
    /// numfuzz does not know).
    pub build: String,
}
