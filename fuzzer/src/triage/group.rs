//! The triage model: findings grouped by (site, kind), real crashes grouped by (signal, top
//! frame), hangs, and inputs that did not reproduce; and the grouping of replays into it.

use super::attribution::{RootBy, Via};
use super::campaign::{Campaign, Expectation, InputFile};
use super::consequence::{self, Consequence, InputAnalysis};
use super::oracle::{ResultVerdict, Verdict};
use super::ordinary::Ordinariness;
use super::references::Source;
use crate::replay::{decode_fields, DecodedField, Frame, Replay, ReplayEnding};
use numfuzz_abi::kind::ExceptionKind;
use numfuzz_abi::report::{ExceptionReport, ResultReport};
use numfuzz_abi::signature::Signature;
use numfuzz_abi::site::SiteInfo;
use numfuzz_outdir::{site_label, FindingKey};
use std::collections::{BTreeMap, HashMap, HashSet};
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
    /// Its C reproducer (`--repro`), bugs only.
    pub reproducer: Option<super::repro::Reproducer>,
}

impl Finding {
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
        self.consequence == Some(Consequence::Escapes)
            && self
                .reference
                .as_ref()
                .is_some_and(|r| r.source == Source::Shadow && r.judged.verdict == Verdict::UnreportedRange)
    }

    /// An exception that makes the library return a non-finite or wrong value without saying
    /// so, and is the root of that.
    pub fn is_bug(&self) -> bool {
        !self.input_borne && !self.out_of_domain && self.root() == Some(&self.key)
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
    pub shadow_agreement: Option<super::agreement::Agreement>,
    /// Every instance's `exceptions.jsonl` (the HTML report charts them over time).
    pub records: Vec<super::campaign::InstanceRecords>,
}

/// How bad what an input returned looks: 0 all primary results finite (a wrong value), 1 a NaN,
/// 2 an infinity.
fn returned_rank(results: &[ResultReport]) -> u8 {
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

/// Findings, silent and handled counts of one kind (or of all kinds with `None`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KindCount {
    pub findings: usize,
    pub silent: usize,
    pub handled: usize,
}

impl Report {
    /// The bugs, most ordinary input first (see `ordinary`); at equal ordinariness a wrong
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

fn expected_text(e: &Expectation, timeout_ms: u64) -> String {
    match e {
        Expectation::Exception { kind, site } => format!("{kind} at {site}"),
        Expectation::Crash => "a crash".into(),
        Expectation::Hang => format!("a hang (no end within {timeout_ms} ms)"),
        Expectation::OutOfMemory => "an out-of-memory stop (the campaign's -m)".into(),
        Expectation::Anything => "an exception, a crash or a hang".into(),
    }
}

fn observed_text(replay: &Replay) -> String {
    let raised: Vec<String> = replay
        .exceptions
        .iter()
        .map(|e| format!("{} at {}", e.kind, site_label(&e.site)))
        .collect();
    let raised = if raised.is_empty() {
        "no exception".to_string()
    } else {
        raised.join(", ")
    };
    match &replay.ending {
        ReplayEnding::Completed { .. } => format!("{raised}; completed"),
        ReplayEnding::Crashed { .. } => format!("{raised}; crashed with {}", replay.crash_name().unwrap_or_default()),
        ReplayEnding::TimedOut { .. } => format!("{raised}; timed out"),
        ReplayEnding::Failed { status, output_tail } => {
            let last = output_tail.lines().last().map_or(String::new(), |l| format!(" ({l})"));
            format!(
                "{raised}; exited with status {}{last}",
                status.map_or("?".into(), |c| c.to_string())
            )
        }
    }
}

fn reproduces(e: &Expectation, replay: &Replay) -> bool {
    match e {
        Expectation::Exception { kind, site } => replay.raises(*kind, |r| site_label(&r.site) == *site),
        Expectation::Crash => matches!(replay.ending, ReplayEnding::Crashed { .. }),
        Expectation::Hang => matches!(replay.ending, ReplayEnding::TimedOut { .. }),
        Expectation::OutOfMemory => replay.out_of_memory(),
        Expectation::Anything => {
            !replay.exceptions.is_empty()
                || matches!(
                    replay.ending,
                    ReplayEnding::Crashed { .. } | ReplayEnding::TimedOut { .. }
                )
        }
    }
}

fn min_time(times: impl Iterator<Item = Option<u64>>) -> Option<u64> {
    times.flatten().min()
}

/// The exception of `key` in `replay` to show: its first origin when it has one (the
/// operands that generated the exceptional value), else its first exception.
pub fn example_exception<'a>(replay: &'a Replay, key: &FindingKey) -> Option<&'a ExceptionReport> {
    let mut of_key = replay.exceptions.iter().filter(|e| key.matches(e));
    let first = of_key.next()?;
    Some(if first.origin {
        first
    } else {
        of_key.find(|e| e.origin).unwrap_or(first)
    })
}

/// A campaign's replays grouped.
pub struct Grouped {
    pub findings: Vec<Finding>,
    pub crashes: Vec<CrashGroup>,
    pub hangs: Vec<Hang>,
    pub not_reproduced: Vec<NotReproduced>,
    pub unexplained: Vec<Unexplained>,
}

/// Groups the replays of a campaign's inputs (`replays[i]` is the replay of
/// `campaign.inputs[i]`). `analyses[i]` is the consequence analysis of `replays[i]` (`None`
/// when it was not replayed); `judge` says whether consequences count (they are left out when
/// they could not be computed).
pub fn group(
    campaign: &Campaign,
    replays: Vec<std::io::Result<Replay>>,
    analyses: &[Option<InputAnalysis>],
    judge: bool,
    signature: Option<&Signature>,
    timeout_ms: u64,
) -> Grouped {
    let mut g = Grouping {
        signature,
        timeout_ms,
        findings: BTreeMap::new(),
        crashes: BTreeMap::new(),
        hangs: Vec::new(),
        not_reproduced: Vec::new(),
        unexplained: BTreeMap::new(),
        replayed: HashMap::new(),
        analysed: BTreeMap::new(),
    };
    for (index, (input, result)) in campaign.inputs.iter().zip(replays).enumerate() {
        let replay = match result {
            Ok(r) => r,
            Err(e) => {
                g.not_reproduced.push(NotReproduced {
                    input: input.rel.clone(),
                    expected: expected_text(&input.expect, timeout_ms),
                    observed: format!("could not be replayed: {e}"),
                });
                continue;
            }
        };
        g.add_exceptions(index, input, &replay);
        g.add_ending(input, &replay);
        if judge {
            if let Some(a) = analyses.get(index).and_then(Option::as_ref).filter(|a| a.unexplained) {
                g.add_unexplained(input, &replay, a);
            }
        }
        g.replayed.insert(input.rel.clone(), (input, replay));
    }
    g.finish(campaign, analyses, judge)
}

/// What [`group`] gathers while it goes through the replays.
struct Grouping<'a> {
    signature: Option<&'a Signature>,
    timeout_ms: u64,
    findings: BTreeMap<FindingKey, Finding>,
    crashes: BTreeMap<(String, String), CrashGroup>,
    hangs: Vec<Hang>,
    not_reproduced: Vec<NotReproduced>,
    unexplained: BTreeMap<Vec<FindingKey>, Unexplained>,
    replayed: HashMap<String, (&'a InputFile, Replay)>,
    /// Per finding, the analyses of the inputs raising it (indices into the analyses).
    analysed: BTreeMap<FindingKey, Vec<usize>>,
}

impl<'a> Grouping<'a> {
    fn view(&self, input: &InputFile, bytes: &[u8]) -> InputView {
        InputView {
            rel: input.rel.clone(),
            fields: view_fields(self.signature, bytes),
        }
    }

    /// Each distinct (site, kind) the replay raised, as a new finding or one more input of one.
    fn add_exceptions(&mut self, index: usize, input: &InputFile, replay: &Replay) {
        let handled = replay.ending == ReplayEnding::Completed { handled: true };
        let mut seen = HashSet::new();
        for e in &replay.exceptions {
            let key = FindingKey::of(e.kind, &e.site);
            if !seen.insert(key.clone()) {
                continue;
            }
            self.analysed.entry(key.clone()).or_default().push(index);
            let view = self.view(input, &replay.bytes);
            let f = self.findings.entry(key.clone()).or_insert_with(|| Finding {
                id: String::new(),
                key,
                site: e.site.clone(),
                example: e.clone(),
                input: view,
                input_bytes: replay.bytes.clone(),
                results: replay.results.clone(),
                inputs: Vec::new(),
                handled_inputs: 0,
                silent_inputs: 0,
                first_seen_ms: None,
                minimized: None,
                minimize_note: None,
                origin: false,
                input_borne: false,
                out_of_domain: false,
                consequence: None,
                escape_root: None,
                root_by: None,
                ordinariness: Ordinariness::default(),
                examples: BTreeMap::new(),
                escapes_to: Vec::new(),
                reference: None,
                reproducer: None,
            });
            f.inputs.push(input.rel.clone());
            if handled {
                f.handled_inputs += 1;
            } else {
                f.silent_inputs += 1;
            }
        }
    }

    /// A crash (grouped by signal and top frame), a hang, and an input that did not do again
    /// what its name says.
    fn add_ending(&mut self, input: &InputFile, replay: &Replay) {
        match &replay.ending {
            ReplayEnding::Crashed { stack, .. } => {
                let frame = replay.crash_frame().cloned();
                let name = replay.crash_name().unwrap_or_default();
                let group_key = (name.clone(), frame.as_ref().map_or_else(String::new, Frame::display));
                let view = self.view(input, &replay.bytes);
                let g = self.crashes.entry(group_key).or_insert_with(|| CrashGroup {
                    signal: name,
                    frame,
                    stack: stack.clone(),
                    input: view,
                    inputs: Vec::new(),
                    first_seen_ms: None,
                });
                g.inputs.push(input.rel.clone());
                g.first_seen_ms = min_time([g.first_seen_ms, input.time_ms].into_iter());
            }
            ReplayEnding::TimedOut { stack } => {
                self.hangs.push(Hang {
                    input: self.view(input, &replay.bytes),
                    first_seen_ms: input.time_ms,
                    frame: replay.crash_frame().cloned(),
                    stack: stack.clone(),
                });
            }
            ReplayEnding::Completed { .. } | ReplayEnding::Failed { .. } => {}
        }
        if !reproduces(&input.expect, replay) {
            self.not_reproduced.push(NotReproduced {
                input: input.rel.clone(),
                expected: expected_text(&input.expect, self.timeout_ms),
                observed: observed_text(replay),
            });
        }
    }

    /// A non-finite result no finding explains, grouped by its origins; the most ordinary
    /// input is shown.
    fn add_unexplained(&mut self, input: &InputFile, replay: &Replay, a: &InputAnalysis) {
        let origins: Vec<FindingKey> = a
            .findings
            .iter()
            .filter(|(_, f)| f.origin)
            .map(|(k, _)| k.clone())
            .collect();
        let view = self.view(input, &replay.bytes);
        let u = self.unexplained.entry(origins.clone()).or_insert_with(|| Unexplained {
            input: view.clone(),
            results: replay.results.clone(),
            origins,
            inputs: Vec::new(),
            first_seen_ms: None,
            ordinariness: a.ordinariness,
        });
        if a.ordinariness < u.ordinariness {
            u.input = view;
            u.results = replay.results.clone();
            u.ordinariness = a.ordinariness;
        }
        u.inputs.push(input.rel.clone());
        u.first_seen_ms = min_time([u.first_seen_ms, input.time_ms].into_iter());
    }

    /// The findings settled (first seen, consequences, the input shown, ids) and the rest in
    /// report order.
    fn finish(mut self, campaign: &Campaign, analyses: &[Option<InputAnalysis>], judge: bool) -> Grouped {
        // First seen: the earliest exceptions.jsonl record of the same identity over all
        // instances; for campaigns without one (afl-fuzz), the earliest `time:` of its inputs.
        let records = campaign.first_records();
        let time_of: BTreeMap<&str, Option<u64>> =
            campaign.inputs.iter().map(|i| (i.rel.as_str(), i.time_ms)).collect();
        let findings = std::mem::take(&mut self.findings);
        let ids = FindingKey::ids(findings.keys());
        let mut out = Vec::new();
        for ((key, mut f), id) in findings.into_iter().zip(ids) {
            let first = records.iter().find(|r| FindingKey::of(r.kind, &r.site) == key);
            f.first_seen_ms = match first {
                Some(r) => Some(r.time_ms),
                None => min_time(f.inputs.iter().map(|i| time_of.get(i.as_str()).copied().flatten())),
            };
            // The input shown is the one that record names, when it still raises it, unless
            // the consequences name a worse one.
            let show = first.and_then(|r| self.replayed.get(&r.input));
            let show = self
                .settle_consequences(&mut f, &key, campaign, analyses, judge)
                .or(show);
            if let Some((input, replay)) = show {
                if let Some(e) = example_exception(replay, &key) {
                    f.example = e.clone();
                    f.input = self.view(input, &replay.bytes);
                    f.input_bytes = replay.bytes.clone();
                    f.results = replay.results.clone();
                }
            }
            f.ordinariness = super::ordinary::of(self.signature, &f.input_bytes);
            f.id = id;
            out.push(f);
        }
        let mut unexplained: Vec<Unexplained> = self.unexplained.into_values().collect();
        unexplained.sort_by_key(|u| (u.ordinariness, returned_rank(&u.results)));
        Grouped {
            findings: out,
            crashes: self.crashes.into_values().collect(),
            hangs: self.hangs,
            not_reproduced: self.not_reproduced,
            unexplained,
        }
    }

    /// `f`'s consequences, merged over the inputs raising it; the replay of the example of the
    /// worst one, which is the input to show.
    fn settle_consequences(
        &self,
        f: &mut Finding,
        key: &FindingKey,
        campaign: &Campaign,
        analyses: &[Option<InputAnalysis>],
        judge: bool,
    ) -> Option<&(&'a InputFile, Replay)> {
        let with: Vec<(&InputAnalysis, &consequence::InInput, usize)> = self
            .analysed
            .get(key)
            .into_iter()
            .flatten()
            .filter_map(|&i| {
                let a = analyses.get(i)?.as_ref()?;
                Some((a, a.findings.get(key)?, i))
            })
            .collect();
        let pairs: Vec<(&InputAnalysis, &consequence::InInput)> = with.iter().map(|&(a, f, _)| (a, f)).collect();
        let merged = consequence::merge(key, &pairs);
        f.origin = merged.origin;
        f.input_borne = merged.input_borne;
        f.out_of_domain = merged.out_of_domain;
        if !judge {
            return None;
        }
        f.consequence = merged.consequence;
        f.escape_root = merged.root.clone();
        f.root_by = merged.root_by;
        f.escapes_to = merged.named.iter().cloned().collect();
        let replay_of = |k: usize| self.replayed.get(&campaign.inputs[with[k].2].rel);
        for (&c, &k) in &merged.examples {
            if let Some((input, replay)) = replay_of(k) {
                f.examples.insert(c, self.view(input, &replay.bytes));
            }
        }
        merged
            .consequence
            .and_then(|c| merged.examples.get(&c))
            .and_then(|&k| replay_of(k))
    }
}
