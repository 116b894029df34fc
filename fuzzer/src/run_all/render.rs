//! The merged report as Markdown (what the terminal shows), JSON and SARIF (the HTML page is
//! in `html`, from the same helpers).

use super::merge::{Example, Field, FunctionCounts, Merged, MergedBug, ResultDoc};
use crate::triage::format::{count, elapsed, sarif, short_decimal};
use serde_json::{json, Value};
use serde_sarif::sarif::{Location, Result as SarifResult, ResultLevel};
use std::path::Path;

/// What the run was, for the report's head.
pub struct RunInfo<'a> {
    pub harness_dir: &'a Path,
    pub seconds: u64,
    pub failed: &'a [(String, String)],
}

pub(super) fn fields_text(fields: &[Field]) -> String {
    fields
        .iter()
        .map(|f| short_decimal(&f.value))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn results_text(results: &[ResultDoc]) -> String {
    results
        .iter()
        .map(|r| match &r.name {
            Some(n) => format!("{n} = {}", short_decimal(&r.value)),
            None => short_decimal(&r.value),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn row(cells: &[String]) -> String {
    format!("| {} |", cells.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | "))
}

/// A bug's functions, the first three and how many more.
pub(super) fn functions_shown(b: &MergedBug) -> String {
    if b.functions.len() > 3 {
        format!("{} (+{} more)", b.functions[..3].join(", "), b.functions.len() - 3)
    } else {
        b.functions.join(", ")
    }
}

/// `1.5 (wrong, shadow)`, or `-` without a reference.
pub(super) fn reference_text(e: &Example) -> String {
    e.reference.as_ref().map_or("-".into(), |r| {
        format!("{} ({}, {})", short_decimal(&r.value), r.verdict, r.source)
    })
}

/// A function's findings, or why it has no report.
pub(super) fn findings_text(f: &FunctionCounts, info: &RunInfo) -> String {
    match f.findings {
        Some(n) => n.to_string(),
        None => {
            let why = info
                .failed
                .iter()
                .find(|(g, _)| *g == f.function)
                .map_or("no report", |(_, w)| w.as_str());
            format!("- ({why})")
        }
    }
}

/// `3 chained, 12 absorbed, 1 input-borne`.
pub(super) fn rest_text(m: &Merged) -> String {
    m.rest
        .iter()
        .map(|(class, n)| format!("{n} {class}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn headline(m: &Merged, info: &RunInfo) -> String {
    let reported = m.functions.iter().filter(|f| f.findings.is_some()).count();
    format!(
        "{} over {} ({} with a report, {} s each): {} in {} distinct exceptions, {}",
        count(m.bugs.len() + m.unexplained.len(), "bug", "bugs"),
        count(m.functions.len(), "function", "functions"),
        reported,
        info.seconds,
        count(m.bugs.len(), "root site", "root sites"),
        m.findings,
        count(
            m.unexplained.len(),
            "non-finite result of no single cause",
            "non-finite results of no single cause"
        ),
    )
}

pub fn markdown(m: &Merged, info: &RunInfo) -> String {
    let mut out = vec![
        format!("# numfuzz run-all of {}", info.harness_dir.display()),
        String::new(),
        headline(m, info) + ".",
        String::new(),
    ];
    markdown_bugs(m, &mut out);
    markdown_unexplained(m, &mut out);
    let rest = rest_text(m);
    if !rest.is_empty() {
        out.push(format!(
            "The other exceptions: {rest} (each function's report says where)."
        ));
        out.push(String::new());
    }
    markdown_functions(m, info, &mut out);
    out.join("\n")
}

/// The bug list: one row per root site.
fn markdown_bugs(m: &Merged, out: &mut Vec<String>) {
    if m.bugs.is_empty() {
        return;
    }
    out.push("## Bugs (one per root site; the most ordinary input over the functions it is a bug in)".into());
    out.push(String::new());
    out.push(row(&[
        "#",
        "kind",
        "site",
        "operation",
        "functions",
        "inputs",
        "input",
        "returned",
        "reference",
        "first",
    ]
    .map(String::from)));
    out.push("|---".repeat(10) + "|");
    for (n, b) in m.bugs.iter().enumerate() {
        let e = &b.example;
        let minimized = if e.minimized { " (minimised)" } else { "" };
        out.push(row(&[
            (n + 1).to_string(),
            b.kind.clone(),
            b.site.clone(),
            format!("`{}`", e.expression),
            functions_shown(b),
            b.inputs.to_string(),
            format!("{}({}){minimized}", e.function, fields_text(&e.input)),
            results_text(&e.returned),
            reference_text(e),
            elapsed(b.first_seen_ms),
        ]));
    }
    out.push(String::new());
}

/// Non-finite results no single repair explains.
fn markdown_unexplained(m: &Merged, out: &mut Vec<String>) {
    if m.unexplained.is_empty() {
        return;
    }
    out.push("## Non-finite results whose cause no single repair isolates".into());
    out.push(String::new());
    out.push(row(&["function", "input", "returned", "inputs"].map(String::from)));
    out.push("|---".repeat(4) + "|");
    for u in &m.unexplained {
        out.push(row(&[
            u.function.clone(),
            fields_text(&u.input),
            results_text(&u.returned),
            u.inputs.to_string(),
        ]));
    }
    out.push(String::new());
}

/// One row per function: its findings, bugs, crashes and hangs.
fn markdown_functions(m: &Merged, info: &RunInfo, out: &mut Vec<String>) {
    out.push("## Per function".into());
    out.push(String::new());
    out.push(row(
        &["function", "findings", "bugs", "crashes", "hangs"].map(String::from)
    ));
    out.push("|---".repeat(5) + "|");
    for f in &m.functions {
        out.push(row(&[
            f.function.clone(),
            findings_text(f, info),
            f.bugs.to_string(),
            f.crashes.to_string(),
            f.hangs.to_string(),
        ]));
    }
    out.push(String::new());
}

pub fn json(m: &Merged, info: &RunInfo) -> String {
    let failed: Vec<Value> = info
        .failed
        .iter()
        .map(|(f, why)| json!({"function": f, "why": why}))
        .collect();
    let doc = json!({
        "schema_version": 1,
        "tool": {"name": "numfuzz", "version": env!("CARGO_PKG_VERSION")},
        "harness_dir": info.harness_dir,
        "seconds": info.seconds,
        "findings": m.findings,
        "bugs": m.bugs,
        "unexplained": m.unexplained,
        "rest": m.rest,
        "functions": m.functions,
        "failed": failed,
    });
    serde_json::to_string_pretty(&doc).expect("JSON values serialise") + "\n"
}

/// One SARIF result per merged bug (an error at its root site).
pub fn sarif(m: &Merged) -> String {
    let base = sarif::common_dir(m.bugs.iter().map(|b| Path::new(&b.path)));
    let results = m
        .bugs
        .iter()
        .map(|b| {
            let e = &b.example;
            let reference = e.reference.as_ref().map_or(String::new(), |r| {
                format!(
                    " where the reference ({}) is {} ({})",
                    r.source,
                    short_decimal(&r.value),
                    r.verdict
                )
            });
            let text = format!(
                "{} at {}: `{}`; a bug in {}; e.g. {}({}) returned {}{reference}.",
                b.kind,
                b.site,
                e.expression,
                b.functions.join(", "),
                e.function,
                fields_text(&e.input),
                results_text(&e.returned)
            );
            let site = sarif::physical(&b.path, b.line, b.column, base.as_deref());
            SarifResult::builder()
                .rule_id(b.kind.as_str())
                .rule_index(sarif::rule_index(&b.kind))
                .level(ResultLevel::Error)
                .message(&text)
                .locations(vec![match b.in_function.as_deref() {
                    Some(function) => sarif::location(site, function),
                    None => Location {
                        physical_location: Some(site),
                        ..Default::default()
                    },
                }])
                .partial_fingerprints(sarif::fingerprint(&b.key))
                .properties(sarif::properties([
                    ("functions", json!(b.functions)),
                    ("inputCount", json!(b.inputs)),
                    ("operation", json!(b.op)),
                ]))
                .build()
        })
        .collect();
    serde_json::to_string_pretty(&sarif::log(results, base.as_deref())).expect("JSON values serialise") + "\n"
}
