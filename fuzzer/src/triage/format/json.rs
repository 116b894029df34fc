//! The JSON report: the triage report as the document `report_model::triage` declares (the
//! one set of types run-all reads back).

use crate::replay::DecodedField;
use crate::report_model::triage::{
    AgreementCounts, BugsBy, ByKind, Classes, ConsequenceCounts, Counts, Crash, Disagreement, DroppedReport, Examples,
    Field, Finding, Hang, Input, Judged, Location, Minimized, NotReproduced, Operation, Oracle, PrecisionLost,
    Reference, Reproducer, ShadowAgreement, ShadowUnjudged, Summary, TriageDoc, Unexplained, VerdictPair,
    SCHEMA_VERSION,
};
use crate::report_model::Tool;
use crate::triage::consequences::Consequence;
use crate::triage::references::oracle::{ResultVerdict, Verdict};
use crate::triage::references::shadow_agreement::{self, Agreement};
use crate::triage::report::{self, Consequences, CrashGroup, FindingClass, InputView, KindCount, OracleUse, Report};
use numfuzz_abi::kind::ExceptionKind;
use serde::Serialize;

/// The name an enumeration's value serialises to (`wrong`, `shadow`, `escapes`).
fn name_of<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        other => panic!("not a unit variant: {other:?}"),
    }
}

fn counts(c: KindCount) -> Counts {
    Counts {
        findings: c.findings,
        silent: c.silent,
        handled: c.handled,
    }
}

fn fields(fields: &[DecodedField]) -> Vec<Field> {
    fields
        .iter()
        .map(|f| Field {
            ty: f.ty.clone(),
            value: f.value.clone(),
            hex: f.hex.clone(),
        })
        .collect()
}

fn input(v: &InputView) -> Input {
    Input {
        path: v.rel.clone(),
        fields: fields(&v.fields),
    }
}

fn judged(v: &Option<ResultVerdict>) -> Option<Judged> {
    v.as_ref().map(|v| Judged {
        value: v.reference.clone(),
        verdict: name_of(&v.verdict),
    })
}

fn verdict_pairs(pairs: &shadow_agreement::Pairs) -> Vec<VerdictPair> {
    (pairs.iter())
        .map(|(&(oracle, shadow), &inputs)| VerdictPair {
            oracle: oracle.as_ref().map(name_of),
            shadow: shadow.as_ref().map(name_of),
            inputs,
        })
        .collect()
}

fn shadow_agreement(a: &Agreement) -> ShadowAgreement {
    ShadowAgreement {
        inputs: a.inputs(),
        judged_by_both: a.judged_by_both(),
        agreed: a.agreed(),
        in_domain: AgreementCounts {
            inputs: a.in_domain.values().sum(),
            judged_by_both: shadow_agreement::judged_by_both(&a.in_domain),
            agreed: shadow_agreement::agreed(&a.in_domain),
            pairs: verdict_pairs(&a.in_domain),
        },
        pairs: verdict_pairs(&a.pairs),
        judged_by: (a.judged_by.iter()).map(|(k, n)| (k.to_string(), *n)).collect(),
        disagreements: a
            .disagreements
            .iter()
            .map(|d| Disagreement {
                input: d.input.clone(),
                returned: d.oracle.as_ref().or(d.shadow.as_ref()).map(|v| v.returned.clone()),
                oracle: judged(&d.oracle),
                shadow: judged(&d.shadow),
                in_domain: d.in_domain,
            })
            .collect(),
        unjudged: a
            .unjudged
            .iter()
            .map(|u| ShadowUnjudged {
                input: u.input.clone(),
                why: u.why.clone(),
                oracle: u.oracle.as_ref().map(name_of),
                in_domain: u.in_domain,
            })
            .collect(),
    }
}

/// The report as the schema has it.
pub fn document(report: &Report) -> TriageDoc {
    TriageDoc {
        schema_version: SCHEMA_VERSION,
        tool: Tool::default(),
        out_dir: report.out_dir.display().to_string(),
        target: report.target.display().to_string(),
        signature: report.signature.clone(),
        instances: report.instances.clone(),
        inputs_replayed: report.inputs_replayed,
        timeout_ms: report.timeout_ms,
        consequences: match report.consequences {
            Consequences::Computed => "computed",
            Consequences::NoResults => "no-results",
            Consequences::NoTaintBuild { .. } => "no-taint-build",
        }
        .into(),
        taint_target: report.taint_target.as_ref().map(|t| t.display().to_string()),
        oracle: report.oracle.as_ref().map(oracle),
        shadow_agreement: report.shadow_agreement.as_ref().map(shadow_agreement),
        summary: summary(report),
        bugs: report.bugs().map(|f| f.id.clone()).collect(),
        not_judged: report.not_judged().map(|f| f.id.clone()).collect(),
        unexplained: report.unexplained.iter().map(|u| unexplained(report, u)).collect(),
        findings: report.findings.iter().map(|f| finding(report, f)).collect(),
        crashes: report.crashes.iter().map(crash).collect(),
        hangs: report.hangs.iter().map(hang).collect(),
        not_reproduced: report.not_reproduced.iter().map(not_reproduced).collect(),
        minimized_dir: report.minimized_dir.as_ref().map(|d| d.display().to_string()),
    }
}

fn oracle(o: &OracleUse) -> Oracle {
    Oracle {
        source: name_of(&o.source),
        command: o.command.clone(),
        judged: o.judged,
        unreliable: o.unreliable,
        tolerance: o.tolerance,
        error: o.error.clone(),
        mpfr: o.mpfr.clone(),
    }
}

/// A non-finite result whose cause is not isolated; its origins by finding id.
fn unexplained(report: &Report, u: &report::Unexplained) -> Unexplained {
    Unexplained {
        input: input(&u.input),
        results: u.results.clone(),
        origins: u
            .origins
            .iter()
            .filter_map(|k| report.id_of(k))
            .map(str::to_string)
            .collect(),
        input_count: u.inputs.len(),
        inputs: u.inputs.clone(),
        first_seen_ms: u.first_seen_ms,
        dropped_report: u.dropped_report.as_ref().map(dropped_report),
    }
}

fn precision_lost(p: &numfuzz_abi::report::PrecisionLoss) -> PrecisionLost {
    PrecisionLost {
        path: p.origin.file.clone(),
        line: p.origin.line,
        column: p.origin.column,
        op: p.origin.op.name().into(),
        correct_bits: p.correct_bits,
        bits: p.bits,
        text: p.describe(),
    }
}

fn dropped_report(d: &crate::triage::consequences::root::DroppedReport) -> DroppedReport {
    DroppedReport {
        file: d.file.clone(),
        line: d.line,
        reason: d.reason.clone(),
        code: d.code,
        reporter: d.reporter.clone(),
        dropped_at: d.dropped_at.clone(),
        dropped_by: d.dropped_by.clone(),
        text: d.describe(),
    }
}

fn crash(g: &CrashGroup) -> Crash {
    Crash {
        signal: g.signal.clone(),
        frame: g.frame.clone(),
        stack: g.stack.clone(),
        input: input(&g.input),
        input_count: g.inputs.len(),
        first_seen_ms: g.first_seen_ms,
        inputs: g.inputs.clone(),
    }
}

fn hang(h: &report::Hang) -> Hang {
    Hang {
        input: input(&h.input),
        first_seen_ms: h.first_seen_ms,
        frame: h.frame.clone(),
        stack: h.stack.clone(),
    }
}

fn not_reproduced(n: &report::NotReproduced) -> NotReproduced {
    NotReproduced {
        input: n.input.clone(),
        expected: n.expected.clone(),
        observed: n.observed.clone(),
    }
}

/// A finding as the schema has it.
fn finding(report: &Report, f: &report::Finding) -> Finding {
    // How the root was chosen is said of the bugs only.
    let root_by = f.is_bug().then_some(f.root_by).flatten();
    Finding {
        id: f.id.clone(),
        key: f.key.to_string(),
        kind: f.key.kind.name().into(),
        status: f.status().name().into(),
        class: f.class().name().into(),
        consequence: f.consequence.as_ref().map(name_of),
        origin: f.origin,
        input_borne: f.input_borne,
        root: f.root().and_then(|k| report.id_of(k)).map(str::to_string),
        root_by: root_by.map(|(by, _)| name_of(&by)),
        via: root_by.map(|(_, via)| name_of(&via)),
        escapes_to: f.escapes_to.clone(),
        reference: f.reference.as_ref().map(reference),
        not_judged: f.not_judged.clone(),
        dropped_report: f.dropped_report.as_ref().map(dropped_report),
        inputs_not_isolated: f.inputs_not_isolated,
        precision_lost: f.precision_lost.as_ref().map(precision_lost),
        reproducer: f.reproducer.as_ref().map(|r| Reproducer {
            path: r.path.display().to_string(),
            build: r.build.clone(),
        }),
        location: location(f),
        operation: operation(f),
        input: input(&f.input),
        results: f.results.clone(),
        examples: examples(f),
        input_count: f.inputs.len(),
        silent_inputs: f.silent_inputs,
        handled_inputs: f.handled_inputs,
        first_seen_ms: f.first_seen_ms,
        inputs: f.inputs.clone(),
        minimized: f.minimized.as_ref().map(minimized),
        minimize_note: f.minimize_note.clone(),
    }
}

fn reference(r: &report::Reference) -> Reference {
    Reference {
        source: name_of(&r.source),
        value: r.judged.reference.clone(),
        verdict: name_of(&r.judged.verdict),
        result: r.judged.index,
        returned: r.judged.returned.clone(),
        tolerance: r.judged.tolerance,
        input: r.input.clone(),
        reaches: r.reaches,
        beside: r.judged.beside,
    }
}

fn location(f: &report::Finding) -> Location {
    Location {
        file: f.site.file.clone(),
        directory: f.site.directory.clone(),
        path: f.key.path.clone(),
        line: f.site.line,
        column: f.site.column,
        function: f.site.function.clone(),
    }
}

/// The operation at the finding's site, as the input shown raised it.
fn operation(f: &report::Finding) -> Operation {
    let e = &f.example;
    Operation {
        op: f.site.op.name().into(),
        ty: f.site.ty.name().into(),
        to: f.site.to.clone(),
        expression: e.expression(),
        operands: e.operands.clone(),
        operands_hex: e.operands_hex.clone(),
        result: e.result.clone(),
        result_hex: e.result_hex.clone(),
    }
}

fn examples(f: &report::Finding) -> Examples {
    let example = |c: Consequence| f.examples.get(&c).map(input);
    Examples {
        escapes: example(Consequence::Escapes),
        handled: example(Consequence::Handled),
        coincident: example(Consequence::Coincident),
        absorbed: example(Consequence::Absorbed),
    }
}

fn minimized(m: &report::Minimized) -> Minimized {
    Minimized {
        path: m.path.display().to_string(),
        fields: fields(&m.fields),
        expression: m.expression.clone(),
        results: m.results.clone(),
    }
}

/// The counts of the report.
fn summary(report: &Report) -> Summary {
    let total = report.count(None);
    let kind = |k: ExceptionKind| counts(report.count(Some(k)));
    Summary {
        findings: total.findings,
        silent: total.silent,
        handled: total.handled,
        bugs: report.bug_count(),
        bugs_by: {
            let by = report.bugs_by();
            BugsBy {
                oracle: by.oracle,
                shadow: by.shadow,
                mpfr: by.mpfr,
                domain: by.domain,
                library: by.library,
                none: by.unreferenced,
            }
        },
        not_judged: report.not_judged().count(),
        unexplained: report.unexplained.len(),
        repair_replays: report.repair_replays,
        wrong: report
            .findings
            .iter()
            .filter(|f| f.reference.as_ref().is_some_and(|r| r.judged.verdict == Verdict::Wrong))
            .count(),
        classes: classes(report),
        consequences: ConsequenceCounts {
            escapes: consequence_count(report, Consequence::Escapes),
            handled: consequence_count(report, Consequence::Handled),
            coincident: consequence_count(report, Consequence::Coincident),
            absorbed: consequence_count(report, Consequence::Absorbed),
        },
        by_kind: ByKind {
            invalid: kind(ExceptionKind::Invalid),
            div_by_zero: kind(ExceptionKind::DivByZero),
            overflow: kind(ExceptionKind::Overflow),
            underflow: kind(ExceptionKind::Underflow),
        },
        crashes: report.crashes.len(),
        hangs: report.hangs.len(),
        not_reproduced: report.not_reproduced.len(),
    }
}

fn classes(report: &Report) -> Classes {
    let n = |c: FindingClass| report.class_count(c);
    Classes {
        bug: n(FindingClass::Bug),
        chained: n(FindingClass::Chained),
        propagated: n(FindingClass::Propagated),
        undefined: n(FindingClass::Undefined),
        range: n(FindingClass::Range),
        handled: n(FindingClass::Handled),
        coincident: n(FindingClass::Coincident),
        absorbed: n(FindingClass::Absorbed),
        input_borne: n(FindingClass::InputBorne),
        out_of_domain: n(FindingClass::OutOfDomain),
        unjudged: n(FindingClass::Unjudged),
        not_judged: n(FindingClass::NotJudged),
    }
}

fn consequence_count(report: &Report, c: Consequence) -> usize {
    report.findings.iter().filter(|f| f.consequence == Some(c)).count()
}

pub fn render(report: &Report) -> String {
    crate::report_model::to_text(&document(report))
}
