//! The JSON report. Its schema is documented in the README ("Triage") and pinned by a test:
//! keys come in the order of the structs below, every key is always present (`null` when
//! unknown), and `schema_version` changes whenever a key is renamed, removed or changes
//! meaning.

use crate::replay::{DecodedField, Frame};
use crate::triage::agreement::Agreement;
use crate::triage::consequence::Consequence;
use crate::triage::oracle::{ResultVerdict, Verdict};
use crate::triage::references::Source;
use crate::triage::report::{self, Consequences, CrashGroup, FindingClass, InputView, KindCount, OracleUse, Report};
use crate::triage::root::{RootBy, Via};
use numfuzz_abi::kind::ExceptionKind;
use numfuzz_abi::report::ResultReport;
use serde::Serialize;

/// Version of the JSON schema (2: consequences, chains, references and the bug list; 3: roots
/// by repair (`root_by`, `via`), the `coincident` consequence and class, and the bugs whose
/// cause is not isolated, `unexplained`; 4: references from the shadow build, `source` in
/// `oracle` and in each `reference`, `oracle.unreliable`, the `range` and `out-of-domain`
/// classes).
pub const SCHEMA_VERSION: u32 = 4;

#[derive(Serialize)]
struct Document<'a> {
    schema_version: u32,
    tool: Tool,
    out_dir: String,
    target: String,
    signature: Option<&'a str>,
    instances: &'a [String],
    inputs_replayed: usize,
    timeout_ms: u64,
    consequences: &'static str,
    taint_target: Option<String>,
    oracle: Option<Oracle<'a>>,
    shadow_agreement: Option<ShadowAgreement<'a>>,
    summary: Summary,
    bugs: Vec<&'a str>,
    unexplained: Vec<Unexplained<'a>>,
    findings: Vec<Finding<'a>>,
    crashes: Vec<Crash<'a>>,
    hangs: Vec<Hang<'a>>,
    not_reproduced: Vec<NotReproduced<'a>>,
    minimized_dir: Option<String>,
}

#[derive(Serialize)]
struct Tool {
    name: &'static str,
    version: &'static str,
}

#[derive(Serialize)]
struct Counts {
    findings: usize,
    silent: usize,
    handled: usize,
}

impl From<KindCount> for Counts {
    fn from(c: KindCount) -> Counts {
        Counts {
            findings: c.findings,
            silent: c.silent,
            handled: c.handled,
        }
    }
}

#[derive(Serialize)]
#[allow(non_snake_case)]
struct ByKind {
    Invalid: Counts,
    DivByZero: Counts,
    Overflow: Counts,
    Underflow: Counts,
}

#[derive(Serialize)]
struct Oracle<'a> {
    source: Source,
    command: &'a str,
    judged: usize,
    unreliable: usize,
    tolerance: f64,
    error: Option<&'a str>,
}

#[derive(Serialize)]
struct ShadowAgreement<'a> {
    inputs: usize,
    judged_by_both: usize,
    agreed: usize,
    pairs: Vec<VerdictPair>,
    disagreements: Vec<Disagreement<'a>>,
}

#[derive(Serialize)]
struct VerdictPair {
    oracle: Option<Verdict>,
    shadow: Option<Verdict>,
    inputs: usize,
}

#[derive(Serialize)]
struct Disagreement<'a> {
    input: &'a str,
    returned: Option<&'a str>,
    oracle: Option<Judged<'a>>,
    shadow: Option<Judged<'a>>,
}

#[derive(Serialize)]
struct Judged<'a> {
    value: &'a str,
    verdict: Verdict,
}

fn judged(v: &Option<ResultVerdict>) -> Option<Judged<'_>> {
    v.as_ref().map(|v| Judged {
        value: &v.reference,
        verdict: v.verdict,
    })
}

fn shadow_agreement(a: &Agreement) -> ShadowAgreement<'_> {
    ShadowAgreement {
        inputs: a.inputs(),
        judged_by_both: a.judged_by_both(),
        agreed: a.agreed(),
        pairs: a
            .pairs
            .iter()
            .map(|(&(oracle, shadow), &inputs)| VerdictPair { oracle, shadow, inputs })
            .collect(),
        disagreements: a
            .disagreements
            .iter()
            .map(|d| Disagreement {
                input: &d.input,
                returned: d.oracle.as_ref().or(d.shadow.as_ref()).map(|v| v.returned.as_str()),
                oracle: judged(&d.oracle),
                shadow: judged(&d.shadow),
            })
            .collect(),
    }
}

#[derive(Serialize)]
struct Classes {
    bug: usize,
    chained: usize,
    propagated: usize,
    undefined: usize,
    range: usize,
    handled: usize,
    coincident: usize,
    absorbed: usize,
    input_borne: usize,
    out_of_domain: usize,
    unjudged: usize,
}

#[derive(Serialize)]
struct ConsequenceCounts {
    escapes: usize,
    handled: usize,
    coincident: usize,
    absorbed: usize,
}

#[derive(Serialize)]
struct Summary {
    findings: usize,
    silent: usize,
    handled: usize,
    bugs: usize,
    unexplained: usize,
    repair_replays: usize,
    wrong: usize,
    classes: Classes,
    consequences: ConsequenceCounts,
    by_kind: ByKind,
    crashes: usize,
    hangs: usize,
    not_reproduced: usize,
}

#[derive(Serialize)]
struct Examples<'a> {
    escapes: Option<Input<'a>>,
    handled: Option<Input<'a>>,
    coincident: Option<Input<'a>>,
    absorbed: Option<Input<'a>>,
}

#[derive(Serialize)]
struct Reproducer<'a> {
    path: String,
    build: &'a str,
}

#[derive(Serialize)]
struct Unexplained<'a> {
    input: Input<'a>,
    results: &'a [ResultReport],
    origins: Vec<String>,
    input_count: usize,
    inputs: &'a [String],
    first_seen_ms: Option<u64>,
}

#[derive(Serialize)]
struct Reference<'a> {
    source: Source,
    value: &'a str,
    verdict: Verdict,
    result: u32,
    returned: &'a str,
    tolerance: f64,
    input: &'a str,
    reaches: Option<bool>,
    /// The shadow's limit beside the input (its value at the input is Inf or NaN).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    beside: bool,
}

#[derive(Serialize)]
struct Input<'a> {
    path: &'a str,
    fields: &'a [DecodedField],
}

impl<'a> From<&'a InputView> for Input<'a> {
    fn from(v: &'a InputView) -> Input<'a> {
        Input {
            path: &v.rel,
            fields: &v.fields,
        }
    }
}

#[derive(Serialize)]
struct Location<'a> {
    file: &'a str,
    directory: &'a str,
    path: &'a str,
    line: u32,
    column: u32,
    function: &'a str,
}

#[derive(Serialize)]
struct Operation<'a> {
    op: &'static str,
    #[serde(rename = "type")]
    ty: &'static str,
    to: Option<&'a str>,
    expression: String,
    operands: &'a [String],
    operands_hex: &'a [String],
    result: Option<&'a str>,
    result_hex: Option<&'a str>,
}

#[derive(Serialize)]
struct Minimized<'a> {
    path: String,
    fields: &'a [DecodedField],
    expression: &'a str,
    results: &'a [ResultReport],
}

#[derive(Serialize)]
struct Finding<'a> {
    id: &'a str,
    key: String,
    kind: &'static str,
    status: &'static str,
    class: &'static str,
    consequence: Option<Consequence>,
    origin: bool,
    input_borne: bool,
    root: Option<&'a str>,
    root_by: Option<RootBy>,
    via: Option<Via>,
    escapes_to: &'a [String],
    reference: Option<Reference<'a>>,
    reproducer: Option<Reproducer<'a>>,
    location: Location<'a>,
    operation: Operation<'a>,
    input: Input<'a>,
    results: &'a [ResultReport],
    examples: Examples<'a>,
    input_count: usize,
    silent_inputs: usize,
    handled_inputs: usize,
    first_seen_ms: Option<u64>,
    inputs: &'a [String],
    minimized: Option<Minimized<'a>>,
    minimize_note: Option<&'a str>,
}

#[derive(Serialize)]
struct Crash<'a> {
    signal: &'a str,
    frame: Option<&'a Frame>,
    stack: &'a [Frame],
    input: Input<'a>,
    input_count: usize,
    first_seen_ms: Option<u64>,
    inputs: &'a [String],
}

#[derive(Serialize)]
struct Hang<'a> {
    input: Input<'a>,
    first_seen_ms: Option<u64>,
    frame: Option<&'a Frame>,
    stack: &'a [Frame],
}

#[derive(Serialize)]
struct NotReproduced<'a> {
    input: &'a str,
    expected: &'a str,
    observed: &'a str,
}

/// The report as a JSON value.
pub fn to_value(report: &Report) -> serde_json::Value {
    serde_json::to_value(document(report)).expect("JSON values serialise")
}

fn document(report: &Report) -> Document<'_> {
    Document {
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "numfuzz",
            version: env!("CARGO_PKG_VERSION"),
        },
        out_dir: report.out_dir.display().to_string(),
        target: report.target.display().to_string(),
        signature: report.signature.as_deref(),
        instances: &report.instances,
        inputs_replayed: report.inputs_replayed,
        timeout_ms: report.timeout_ms,
        consequences: match report.consequences {
            Consequences::Computed => "computed",
            Consequences::NoResults => "no-results",
            Consequences::NoTaintBuild { .. } => "no-taint-build",
        },
        taint_target: report.taint_target.as_ref().map(|t| t.display().to_string()),
        oracle: report.oracle.as_ref().map(oracle),
        shadow_agreement: report.shadow_agreement.as_ref().map(shadow_agreement),
        summary: summary(report),
        bugs: report.bugs().map(|f| f.id.as_str()).collect(),
        unexplained: report.unexplained.iter().map(|u| unexplained(report, u)).collect(),
        findings: report.findings.iter().map(|f| finding(report, f)).collect(),
        crashes: report.crashes.iter().map(crash).collect(),
        hangs: report.hangs.iter().map(hang).collect(),
        not_reproduced: report.not_reproduced.iter().map(not_reproduced).collect(),
        minimized_dir: report.minimized_dir.as_ref().map(|d| d.display().to_string()),
    }
}

fn oracle(o: &OracleUse) -> Oracle<'_> {
    Oracle {
        source: o.source,
        command: &o.command,
        judged: o.judged,
        unreliable: o.unreliable,
        tolerance: o.tolerance,
        error: o.error.as_deref(),
    }
}

/// A non-finite result whose cause is not isolated; its origins by finding id.
fn unexplained<'a>(report: &'a Report, u: &'a report::Unexplained) -> Unexplained<'a> {
    Unexplained {
        input: (&u.input).into(),
        results: &u.results,
        origins: u
            .origins
            .iter()
            .filter_map(|k| report.id_of(k))
            .map(str::to_string)
            .collect(),
        input_count: u.inputs.len(),
        inputs: &u.inputs,
        first_seen_ms: u.first_seen_ms,
    }
}

fn crash(g: &CrashGroup) -> Crash<'_> {
    Crash {
        signal: &g.signal,
        frame: g.frame.as_ref(),
        stack: &g.stack,
        input: (&g.input).into(),
        input_count: g.inputs.len(),
        first_seen_ms: g.first_seen_ms,
        inputs: &g.inputs,
    }
}

fn hang(h: &report::Hang) -> Hang<'_> {
    Hang {
        input: (&h.input).into(),
        first_seen_ms: h.first_seen_ms,
        frame: h.frame.as_ref(),
        stack: &h.stack,
    }
}

fn not_reproduced(n: &report::NotReproduced) -> NotReproduced<'_> {
    NotReproduced {
        input: &n.input,
        expected: &n.expected,
        observed: &n.observed,
    }
}

/// A finding as the schema has it.
fn finding<'a>(report: &'a Report, f: &'a report::Finding) -> Finding<'a> {
    // How the root was chosen is said of the bugs only.
    let root_by = f.is_bug().then_some(f.root_by).flatten();
    Finding {
        id: &f.id,
        key: f.key.to_string(),
        kind: f.key.kind.name(),
        status: f.status().name(),
        class: f.class().name(),
        consequence: f.consequence,
        origin: f.origin,
        input_borne: f.input_borne,
        root: f.root().and_then(|k| report.id_of(k)),
        root_by: root_by.map(|(by, _)| by),
        via: root_by.map(|(_, via)| via),
        escapes_to: &f.escapes_to,
        reference: f.reference.as_ref().map(reference),
        reproducer: f.reproducer.as_ref().map(|r| Reproducer {
            path: r.path.display().to_string(),
            build: &r.build,
        }),
        location: location(f),
        operation: operation(f),
        input: (&f.input).into(),
        results: &f.results,
        examples: examples(f),
        input_count: f.inputs.len(),
        silent_inputs: f.silent_inputs,
        handled_inputs: f.handled_inputs,
        first_seen_ms: f.first_seen_ms,
        inputs: &f.inputs,
        minimized: f.minimized.as_ref().map(minimized),
        minimize_note: f.minimize_note.as_deref(),
    }
}

fn reference(r: &report::Reference) -> Reference<'_> {
    Reference {
        source: r.source,
        value: &r.judged.reference,
        verdict: r.judged.verdict,
        result: r.judged.index,
        returned: &r.judged.returned,
        tolerance: r.judged.tolerance,
        input: &r.input,
        reaches: r.reaches,
        beside: r.judged.beside,
    }
}

fn location(f: &report::Finding) -> Location<'_> {
    Location {
        file: &f.site.file,
        directory: &f.site.directory,
        path: &f.key.path,
        line: f.site.line,
        column: f.site.column,
        function: &f.site.function,
    }
}

/// The operation at the finding's site, as the input shown raised it.
fn operation(f: &report::Finding) -> Operation<'_> {
    let e = &f.example;
    Operation {
        op: f.site.op.name(),
        ty: f.site.ty.name(),
        to: f.site.to.as_deref(),
        expression: e.expression(),
        operands: &e.operands,
        operands_hex: &e.operands_hex,
        result: e.result.as_deref(),
        result_hex: e.result_hex.as_deref(),
    }
}

fn examples(f: &report::Finding) -> Examples<'_> {
    let example = |c: Consequence| f.examples.get(&c).map(Input::from);
    Examples {
        escapes: example(Consequence::Escapes),
        handled: example(Consequence::Handled),
        coincident: example(Consequence::Coincident),
        absorbed: example(Consequence::Absorbed),
    }
}

fn minimized(m: &report::Minimized) -> Minimized<'_> {
    Minimized {
        path: m.path.display().to_string(),
        fields: &m.fields,
        expression: &m.expression,
        results: &m.results,
    }
}

/// The counts of the report.
fn summary(report: &Report) -> Summary {
    let total = report.count(None);
    let kind = |k: ExceptionKind| Counts::from(report.count(Some(k)));
    Summary {
        findings: total.findings,
        silent: total.silent,
        handled: total.handled,
        bugs: report.bug_count(),
        unexplained: report.unexplained.len(),
        repair_replays: report.repair_replays,
        wrong: report
            .findings
            .iter()
            .filter(|f| f.reference.as_ref().is_some_and(|r| r.judged.verdict == Verdict::Wrong))
            .count(),
        classes: Classes {
            bug: report.class_count(FindingClass::Bug),
            chained: report.class_count(FindingClass::Chained),
            propagated: report.class_count(FindingClass::Propagated),
            undefined: report.class_count(FindingClass::Undefined),
            range: report.class_count(FindingClass::Range),
            handled: report.class_count(FindingClass::Handled),
            coincident: report.class_count(FindingClass::Coincident),
            absorbed: report.class_count(FindingClass::Absorbed),
            input_borne: report.class_count(FindingClass::InputBorne),
            out_of_domain: report.class_count(FindingClass::OutOfDomain),
            unjudged: report.class_count(FindingClass::Unjudged),
        },
        consequences: ConsequenceCounts {
            escapes: consequence_count(report, Consequence::Escapes),
            handled: consequence_count(report, Consequence::Handled),
            coincident: consequence_count(report, Consequence::Coincident),
            absorbed: consequence_count(report, Consequence::Absorbed),
        },
        by_kind: ByKind {
            Invalid: kind(ExceptionKind::Invalid),
            DivByZero: kind(ExceptionKind::DivByZero),
            Overflow: kind(ExceptionKind::Overflow),
            Underflow: kind(ExceptionKind::Underflow),
        },
        crashes: report.crashes.len(),
        hangs: report.hangs.len(),
        not_reproduced: report.not_reproduced.len(),
    }
}

fn consequence_count(report: &Report, c: Consequence) -> usize {
    report.findings.iter().filter(|f| f.consequence == Some(c)).count()
}

pub fn render(report: &Report) -> String {
    let mut text = serde_json::to_string_pretty(&document(report)).expect("JSON values serialise");
    text.push('\n');
    text
}
