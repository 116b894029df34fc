//! Renderings of a triage report: an aligned terminal table, GitHub-flavoured Markdown,
//! JSON (a stable, documented schema), SARIF 2.1.0 and a self-contained HTML page; and of
//! each bug, a standalone C reproducer (`repro`).

pub mod html;
pub mod json;
pub mod markdown;
pub mod repro;
pub mod sarif;
pub mod table;

use super::references::shadow_agreement;
use super::references::Source;
use super::report::{Consequences, Finding, FindingClass, Report};
use crate::replay::{fields_decimal, fields_with_hex};
use numfuzz_abi::op::FloatType;
use numfuzz_abi::report::ResultReport;
use numfuzz_abi::value::Float;
use std::path::Path;

/// Output format of `numfuzz triage` (`--format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Aligned terminal table.
    Table,
    /// GitHub-flavoured Markdown (for an issue tracker).
    #[value(name = "md")]
    Markdown,
    /// JSON (schema in the README).
    Json,
    /// SARIF 2.1.0 (code-scanning tools).
    Sarif,
    /// Self-contained HTML page (bug list, counts, exceptions over time).
    Html,
}

/// The report in `format`. `srcroot` is the base SARIF locations are made relative to
/// (default: the directory all source files share); `all` lists every finding, not only the
/// bugs (table, Markdown and HTML).
pub fn render(report: &Report, format: ReportFormat, srcroot: Option<&Path>, all: bool) -> String {
    match format {
        ReportFormat::Table => table::render(report, all),
        ReportFormat::Markdown => markdown::render(report, all),
        ReportFormat::Json => json::render(report),
        ReportFormat::Sarif => sarif::render(report, srcroot),
        ReportFormat::Html => html::render(report, all),
    }
}

/// Consequences were computed (the report leads with the bugs).
pub fn judged(report: &Report) -> bool {
    report.consequences == Consequences::Computed
}

/// Why consequences are missing, as one sentence (`None` when they were computed).
pub fn consequence_note(report: &Report) -> Option<String> {
    match &report.consequences {
        Consequences::Computed => None,
        Consequences::NoResults => Some(
            "Consequences need declared results: the harness calls no NUMFUZZ_RESULT(v), so findings are only silent or handled."
                .into(),
        ),
        Consequences::NoTaintBuild { expected } => Some(format!(
            "Consequences need a taint build: some inputs returned Inf or NaN; build the harness again with NUMFUZZ_CC_TAINT=1 numfuzz-cc (same sources and flags) as {}, or pass --taint-target.",
            expected.display()
        )),
    }
}

/// Where consequences and references came from, as one sentence.
pub fn sources_line(report: &Report) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(t) = &report.taint_target {
        if judged(report) {
            parts.push(format!("consequences from the taint build {}", t.display()));
            if report.repair_replays > 0 {
                parts.push(format!(
                    "roots by repair ({})",
                    count(report.repair_replays, "repaired replay", "repaired replays")
                ));
            }
        }
    }
    if let Some(o) = &report.oracle {
        parts.push(match (&o.error, o.source) {
            (None, Source::Oracle) => format!(
                "references from `{}` (tolerance {:e}, {} inputs judged)",
                o.command, o.tolerance, o.judged
            ),
            (None, Source::Shadow | Source::Mpfr | Source::Domain) => format!(
                "references of non-finite results from the shadow build {}{} ({} inputs asked, {} with unreliable shadows)",
                o.command,
                o.mpfr
                    .as_ref()
                    .map_or(String::new(), |m| format!(", then the MPFR build {m} where it cannot tell")),
                o.judged,
                o.unreliable
            ),
            (Some(_), _) => format!("no references: the oracle `{}` failed", o.command),
        });
    }
    if let Some(a) = &report.shadow_agreement {
        let both = a.judged_by_both();
        let mut line = format!(
            "the shadow build agrees with it on {} of the {both} non-finite results both judged ({:.1} %, {} escaping inputs)",
            a.agreed(),
            100.0 * a.agreed() as f64 / both.max(1) as f64,
            a.inputs()
        );
        let inside = shadow_agreement::judged_by_both(&a.in_domain);
        if inside != both {
            let alike = shadow_agreement::agreed(&a.in_domain);
            line += &format!(
                ", on {alike} of {inside} inside the declared domains ({:.1} %)",
                100.0 * alike as f64 / inside.max(1) as f64
            );
        }
        parts.push(line);
    }
    (!parts.is_empty()).then(|| {
        let mut text = parts.join("; ");
        if let Some(first) = text.get(..1) {
            text = first.to_uppercase() + &text[1..];
        }
        text + "."
    })
}

/// `Other findings: 7 absorbed, 1 handled, ...` (with consequences), with what `--all` does.
pub fn others_line(report: &Report, all: bool) -> String {
    let classes = [
        FindingClass::Chained,
        FindingClass::Coincident,
        FindingClass::Absorbed,
        FindingClass::Handled,
        FindingClass::Undefined,
        FindingClass::Propagated,
        FindingClass::InputBorne,
    ];
    let mut counts: Vec<String> = classes
        .iter()
        .map(|&c| format!("{} {}", report.class_count(c), c.name()))
        .collect();
    // Only references and signatures with domains make these; the line stays as it was
    // without them.
    for class in [FindingClass::Range, FindingClass::OutOfDomain, FindingClass::NotJudged] {
        let n = report.class_count(class);
        if n > 0 {
            counts.push(format!("{n} {}", class.name()));
        }
    }
    let wrong = report
        .findings
        .iter()
        .filter(|f| {
            !f.is_bug()
                && f.reference
                    .as_ref()
                    .is_some_and(|r| r.judged.verdict == super::references::oracle::Verdict::Wrong)
        })
        .count();
    let wrong = if wrong > 0 {
        format!("; {wrong} more with a wrong result that their values do not reach")
    } else {
        String::new()
    };
    format!(
        "Other findings: {}{wrong}{}",
        counts.join(", "),
        if all { "." } else { " (--all lists every finding)." }
    )
}

/// A decimal as reports show it: the shortest round-trip decimal of the nearest double when
/// it is one, else as given (`1e400`).
pub fn short_decimal(text: &str) -> String {
    match Float::parse(FloatType::F64, text) {
        Ok(f) if f.is_finite() || text.trim_start_matches('-').eq_ignore_ascii_case("inf") => f.to_string(),
        _ => text.to_string(),
    }
}

/// The declared results as reports show them: primary ones, then named ones in parentheses
/// (`inf (err inf)`).
pub fn results_text(results: &[ResultReport]) -> String {
    let primary: Vec<&str> = results
        .iter()
        .filter(|r| r.index.is_some())
        .map(|r| r.value.as_str())
        .collect();
    let named: Vec<String> = results
        .iter()
        .filter_map(|r| r.name.as_ref().map(|n| format!("{n} {}", r.value)))
        .collect();
    let mut text = if primary.is_empty() {
        "-".to_string()
    } else {
        primary.join(", ")
    };
    if !named.is_empty() {
        text.push_str(&format!(" ({})", named.join(", ")));
    }
    text
}

/// `path:line:col` of a finding key (the origins of a non-finite result no single cause explains).
pub fn key_location(k: &numfuzz_outdir::FindingKey) -> String {
    format!("{}:{}:{}", k.path, k.line, k.column)
}

/// What an unexplained entry is, as its title says: `error report dropped` when its inputs
/// dropped one (that is its root), else `cause not isolated`.
pub fn unexplained_title(u: &crate::triage::report::Unexplained) -> &'static str {
    if u.dropped_report.is_some() {
        "error report dropped"
    } else {
        "cause not isolated"
    }
}

/// Why an unexplained entry has no exception for a root: the dropped report that is its root,
/// or that none could be isolated.
pub fn unexplained_why(u: &crate::triage::report::Unexplained) -> String {
    let isolated = "no exception's value reaches the result, and repairing any one alone leaves it non-finite";
    match &u.dropped_report {
        Some(d) => format!("{}; {isolated}", d.describe()),
        None => isolated.to_string(),
    }
}

/// How a bug's root was chosen, as reports say it (`root_by` and `via` in the JSON).
pub fn root_text(f: &Finding) -> Option<String> {
    use crate::triage::consequences::root::{RootBy, Via};
    let (by, via) = f.root_by?;
    if let (RootBy::Report, Some(dropped)) = (by, &f.dropped_report) {
        let merged = match f.inputs_not_isolated {
            0 => String::new(),
            n => format!(
                "; with {} whose cause was not isolated otherwise",
                count(n, "input", "inputs")
            ),
        };
        return Some(format!(
            "{}; the exceptions below hang under it{merged}",
            dropped.describe()
        ));
    }
    if let (RootBy::Precision, Some(loss)) = (by, &f.precision_lost) {
        return Some(format!(
            "{}, then this {} computed on what was left; the exceptions below hang under it",
            loss.describe(),
            f.site.op
        ));
    }
    let how = match via {
        Via::Data => "its value reaches the result",
        Via::Control => "only a branch it decides leads to the result",
    };
    Some(match by {
        RootBy::Labels | RootBy::Repair => format!(
            "repairing it alone makes the result finite; {how} (by {}, via {})",
            by.name(),
            via.name()
        ),
        RootBy::Report | RootBy::Precision | RootBy::Earliest => format!(
            "no single repair makes the result finite; the earliest exception whose value reaches it (by {}, via {})",
            by.name(),
            via.name()
        ),
    })
}

/// With references: which judged the bugs and how many escapes none could judge, e.g. `Bugs
/// judged by the x87 shadow build: 3, by the MPFR shadow build: 1; 2 escapes not judged
/// (after the bugs, each with why).`
pub fn judgement_line(report: &Report) -> Option<String> {
    if !judged(report) || report.oracle.is_none() {
        return None;
    }
    let by = report.bugs_by();
    let parts: Vec<String> = [
        (by.oracle, "the oracle"),
        (by.shadow, "the x87 shadow build"),
        (by.mpfr, "the MPFR shadow build"),
        (by.domain, "the function's declared domains (NaN where it is defined)"),
        (by.library, "the library's own error report, dropped"),
        (by.unreferenced, "no reference (a cause not isolated)"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("by {what}: {n}"))
    .collect();
    let bugs = if parts.is_empty() {
        "No bugs judged".to_string()
    } else {
        format!("Bugs judged {}", parts.join(", "))
    };
    let escapes = match report.not_judged().count() {
        0 => "every escape judged".to_string(),
        n => format!(
            "{} not judged (listed after the bugs, each with why; not counted as bugs)",
            count(n, "escape", "escapes")
        ),
    };
    Some(format!("{bugs}; {escapes}."))
}

/// What a bug shows: its input (minimised when it was), the results returned for it and the
/// reference.
pub struct BugView {
    pub input: String,
    pub minimized: bool,
    pub expression: String,
    pub returned: String,
    pub reference: Option<String>,
}

impl BugView {
    pub fn of(f: &Finding) -> BugView {
        let (input, minimized, expression, results) = match &f.minimized {
            Some(m) => (fields_decimal(&m.fields), true, m.expression.clone(), &m.results),
            None => (
                fields_decimal(&f.input.fields),
                false,
                f.example.expression(),
                &f.results,
            ),
        };
        BugView {
            input,
            minimized,
            expression,
            returned: results_text(results),
            reference: f.reference.as_ref().map(|r| {
                let by = match (r.source, r.judged.beside) {
                    (Source::Oracle, _) => "",
                    (Source::Shadow, false) => ", by the shadow build",
                    (Source::Mpfr, false) => ", by the MPFR shadow build",
                    (Source::Domain, _) => ", by the harness's NUMFUZZ_DEFINED_IN_DOMAIN",
                    (Source::Shadow | Source::Mpfr, true) => ", the shadow build's limit beside the input",
                };
                format!(
                    "{} ({}, result {}{by})",
                    short_decimal(&r.judged.reference),
                    r.judged.verdict.name(),
                    r.judged.index
                )
            }),
        }
    }
}

/// `625ms`, `12.3s`, `5m07s`, `2h03m`; `-` when unknown.
pub fn elapsed(ms: Option<u64>) -> String {
    match ms {
        None => "-".into(),
        Some(ms) if ms < 1000 => format!("{ms}ms"),
        Some(ms) if ms < 60_000 => format!("{:.1}s", ms as f64 / 1000.0),
        Some(ms) if ms < 3_600_000 => format!("{}m{:02}s", ms / 60_000, ms % 60_000 / 1000),
        Some(ms) => format!("{}h{:02}m", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
}

/// `1 finding`, `2 findings`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The one-line headline: what was replayed and what came out.
pub fn headline(report: &Report) -> String {
    let not_judged = report.not_judged().count();
    let bugs = match (judged(report), not_judged) {
        (false, _) => String::new(),
        (true, 0) => format!("{} in ", count(report.bug_count(), "bug", "bugs")),
        (true, n) => format!(
            "{} and {} not judged in ",
            count(report.bug_count(), "bug", "bugs"),
            count(n, "escape", "escapes")
        ),
    };
    format!(
        "{bugs}{}, {}, {}, {} not reproduced ({} replayed from {})",
        count(report.findings.len(), "finding", "findings"),
        count(report.crashes.len(), "real crash", "real crashes"),
        count(report.hangs.len(), "hang", "hangs"),
        report.not_reproduced.len(),
        count(report.inputs_replayed, "input", "inputs"),
        count(report.instances.len(), "instance", "instances"),
    )
}

/// The cells of one finding's row: kind, location, function, operation, input, what the
/// input returned, status (its class when consequences are `judged`), first seen, inputs (and
/// the minimised input when `minimized`).
pub fn finding_cells(f: &Finding, minimized: bool, judged: bool) -> Vec<String> {
    let mut cells = vec![
        f.key.kind.name().to_string(),
        f.site.location(),
        crate::replay::function_of(&f.example).to_string(),
        f.example.expression(),
        fields_with_hex(&f.input.fields),
        results_text(&f.results),
        if judged {
            f.class().name().to_string()
        } else {
            f.status().name().to_string()
        },
        elapsed(f.first_seen_ms),
        f.inputs.len().to_string(),
    ];
    if minimized {
        cells.push(match (&f.minimized, &f.minimize_note) {
            (Some(m), _) => crate::replay::fields_decimal(&m.fields),
            (None, Some(note)) => format!("({note})"),
            (None, None) => "-".into(),
        });
    }
    cells
}

/// Column titles matching [`finding_cells`].
pub fn finding_titles(minimized: bool, judged: bool) -> Vec<&'static str> {
    let mut t = vec![
        "kind",
        "location",
        "function",
        "operation",
        "input",
        "returned",
        if judged { "class" } else { "status" },
        "first seen",
        "inputs",
    ];
    if minimized {
        t.push("minimized");
    }
    t
}
