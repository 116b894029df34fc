//! Renderings of a triage report: an aligned terminal table, GitHub-flavoured Markdown,
//! JSON (a stable, documented schema) and SARIF 2.1.0.

pub mod json;
pub mod markdown;
pub mod sarif;
pub mod table;

use super::group::{Finding, Report};
use crate::replay::fields_with_hex;
use std::path::Path;

/// Output format of `numfuzz triage`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Table,
    Markdown,
    Json,
    Sarif,
}

/// The report in `format`. `srcroot` is the base SARIF locations are made relative to
/// (default: the directory all source files share).
pub fn render(report: &Report, format: Format, srcroot: Option<&Path>) -> String {
    match format {
        Format::Table => table::render(report),
        Format::Markdown => markdown::render(report),
        Format::Json => json::render(report),
        Format::Sarif => sarif::render(report, srcroot),
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
    format!(
        "{}, {}, {}, {} not reproduced ({} replayed from {})",
        count(report.findings.len(), "finding", "findings"),
        count(report.crashes.len(), "real crash", "real crashes"),
        count(report.hangs.len(), "hang", "hangs"),
        report.not_reproduced.len(),
        count(report.inputs_replayed, "input", "inputs"),
        count(report.instances.len(), "instance", "instances"),
    )
}

/// The cells of one finding's row: kind, location, function, operation, input, status,
/// first seen, inputs (and the minimised input when `minimized`).
pub fn finding_cells(f: &Finding, minimized: bool) -> Vec<String> {
    let mut cells = vec![
        f.key.kind.name().to_string(),
        f.site.location(),
        crate::replay::function_of(&f.example).to_string(),
        f.example.expression(),
        fields_with_hex(&f.input.fields),
        f.status().name().to_string(),
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
pub fn finding_titles(minimized: bool) -> Vec<&'static str> {
    let mut t = vec![
        "kind",
        "location",
        "function",
        "operation",
        "input",
        "status",
        "first seen",
        "inputs",
    ];
    if minimized {
        t.push("minimized");
    }
    t
}
