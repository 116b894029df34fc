//! GitHub-flavoured Markdown for an issue tracker. With consequences: the bug table (root
//! site, kind, function, minimal input, returned value, reference, chain) and one line of
//! counts for the rest (`--all`: the table of every finding). Without: the findings table and
//! a summary per kind. Then real crashes, hangs and inputs that did not reproduce.

use super::{
    consequence_note, count, elapsed, finding_cells, finding_titles, headline, judged, key_location, others_line,
    results_text, root_text, sources_line, BugView,
};
use crate::replay::{fields_decimal, DecodedField};
use crate::triage::report::{Finding, Report, Unexplained};
use numfuzz_abi::kind::ExceptionKind;
use std::fmt::Write as _;

/// Text safe inside a table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// Text as inline code, safe inside a table cell.
fn code(text: &str) -> String {
    if text.is_empty() {
        return String::new();
    }
    let fence = if text.contains('`') { "``" } else { "`" };
    format!("{fence}{}{fence}", cell(text))
}

fn fields(fields: &[DecodedField]) -> String {
    fields
        .iter()
        .map(|f| format!("{} ({})", code(&f.value), code(&f.hex)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A table with `titles` and `rows`.
fn table(out: &mut String, titles: &[&str], rows: &[Vec<String>]) {
    let _ = writeln!(out, "| {} |", titles.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(titles.len()));
    for r in rows {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
}

/// The bug table's row of bug number `n`.
fn bug_row(report: &Report, n: usize, f: &Finding) -> Vec<String> {
    let v = BugView::of(f);
    let chain: Vec<String> = report
        .chain(&f.key)
        .iter()
        .map(|c| {
            format!(
                "{} at {}: {}",
                c.key.kind,
                code(&c.site.location()),
                code(&c.example.expression())
            )
        })
        .collect();
    vec![
        n.to_string(),
        f.key.kind.to_string(),
        code(&f.site.location()),
        code(crate::replay::function_of(&f.example)),
        code(&v.expression),
        format!("{}{}", code(&v.input), if v.minimized { " (minimised)" } else { "" }),
        code(&v.returned),
        v.reference.map_or_else(|| "-".into(), |r| cell(&r)),
        root_text(f).map_or_else(|| "-".into(), |r| cell(&r)),
        if chain.is_empty() {
            "-".into()
        } else {
            chain.join("<br>")
        },
    ]
}

/// The bug table's row of entry `n`, a non-finite result whose cause is not isolated.
fn unexplained_row(n: usize, u: &Unexplained) -> Vec<String> {
    let origins: Vec<String> = u
        .origins
        .iter()
        .map(|k| format!("{} at {}", k.kind, code(&key_location(k))))
        .collect();
    vec![
        n.to_string(),
        "non-finite result".into(),
        "cause not isolated".into(),
        "-".into(),
        "-".into(),
        code(&fields_decimal(&u.input.fields)),
        code(&results_text(&u.results)),
        "-".into(),
        "no exception's value reaches the result, and repairing any one alone leaves it non-finite".into(),
        if origins.is_empty() {
            "-".into()
        } else {
            origins.join("<br>")
        },
    ]
}

/// The bug table.
fn bugs(out: &mut String, report: &Report) {
    let mut rows: Vec<Vec<String>> = report
        .bugs()
        .enumerate()
        .map(|(n, f)| bug_row(report, n + 1, f))
        .collect();
    let first = rows.len();
    rows.extend(
        report
            .unexplained
            .iter()
            .enumerate()
            .map(|(n, u)| unexplained_row(first + n + 1, u)),
    );
    if rows.is_empty() {
        let _ = writeln!(
            out,
            "### No bugs\n\nNo exception makes a declared result non-finite or wrong without the library reporting it.\n"
        );
        return;
    }
    let _ = writeln!(
        out,
        "### Bugs ({})\n\nExceptions that make the function return a non-finite or wrong value without reporting it.\n",
        rows.len()
    );
    let titles = [
        "#",
        "Kind",
        "Location",
        "Function",
        "Operation",
        "Input",
        "Returned",
        "Reference",
        "Root",
        "Chain",
    ];
    table(out, &titles, &rows);
    out.push('\n');
    reproducers(out, report);
}

/// How to build and run each bug's reproducer (`--repro`).
fn reproducers(out: &mut String, report: &Report) {
    let repros: Vec<String> = report
        .bugs()
        .enumerate()
        .filter_map(|(n, f)| {
            f.reproducer
                .as_ref()
                .map(|r| format!("# {}. {}\n{}", n + 1, f.id, r.build))
        })
        .collect();
    if !repros.is_empty() {
        let _ = writeln!(
            out,
            "Reproducers (LIBRARY: the library built without numfuzz-cc; each exits 1 while its bug is there):\n\n```sh\n{}\n```\n",
            repros.join("\n")
        );
    }
}

pub fn render(report: &Report, all: bool) -> String {
    let mut out = String::new();
    head(&mut out, report);
    let judged = judged(report);
    if report.findings.is_empty() {
        let _ = writeln!(out, "No floating-point exception findings.\n");
    } else if judged && !all {
        bugs(&mut out, report);
        let _ = writeln!(out, "{}\n", others_line(report, all));
    } else {
        if judged {
            bugs(&mut out, report);
            let _ = writeln!(
                out,
                "{}\n\n### All findings ({})\n",
                others_line(report, all),
                report.findings.len()
            );
        }
        findings(&mut out, report, judged);
        kind_summary(&mut out, report);
        if let Some(dir) = &report.minimized_dir {
            let _ = writeln!(out, "Minimised inputs are in {}.\n", code(&dir.display().to_string()));
        }
    }
    crashes(&mut out, report);
    hangs(&mut out, report);
    not_reproduced(&mut out, report);
    out
}

/// The title (the headline), what was triaged and where consequences and references came from.
fn head(out: &mut String, report: &Report) {
    let _ = writeln!(out, "## numfuzz triage: {}\n", headline(report));
    let sig = report
        .signature
        .as_deref()
        .map_or_else(|| "none (plain bytes)".to_string(), code);
    let _ = writeln!(
        out,
        "Target {} (signature {sig}), campaign {} (instances {}).\n",
        code(&report.target.display().to_string()),
        code(&report.out_dir.display().to_string()),
        report.instances.iter().map(|i| code(i)).collect::<Vec<_>>().join(", ")
    );
    for line in [sources_line(report), consequence_note(report)].into_iter().flatten() {
        let _ = writeln!(out, "{line}\n");
    }
}

/// The table of every finding.
fn findings(out: &mut String, report: &Report, judged: bool) {
    let minimized = report.minimized_dir.is_some();
    let titles: Vec<String> = finding_titles(minimized, judged)
        .iter()
        .map(|t| {
            let mut c = t.chars();
            c.next()
                .map_or_else(String::new, |f| f.to_uppercase().collect::<String>() + c.as_str())
        })
        .collect();
    let rows: Vec<Vec<String>> = report
        .findings
        .iter()
        .map(|f| {
            let mut cells = finding_cells(f, minimized, judged);
            // Code spans for what is code or data.
            cells[1] = code(&cells[1]);
            cells[2] = code(&cells[2]);
            cells[3] = code(&cells[3]);
            cells[4] = fields(&f.input.fields);
            if let (true, Some(m)) = (minimized, &f.minimized) {
                cells[8] = code(&crate::replay::fields_decimal(&m.fields));
            }
            cells
                .iter()
                .map(|c| if c.starts_with('`') { c.clone() } else { cell(c) })
                .collect()
        })
        .collect();
    table(out, &titles.iter().map(String::as_str).collect::<Vec<_>>(), &rows);
    out.push('\n');
}

/// Findings, silent and handled per kind, and in total.
fn kind_summary(out: &mut String, report: &Report) {
    let mut summary = Vec::new();
    for kind in ExceptionKind::ALL {
        let c = report.count(Some(kind));
        summary.push(vec![
            kind.to_string(),
            c.findings.to_string(),
            c.silent.to_string(),
            c.handled.to_string(),
        ]);
    }
    let c = report.count(None);
    summary.push(vec![
        "**Total**".into(),
        c.findings.to_string(),
        c.silent.to_string(),
        c.handled.to_string(),
    ]);
    table(out, &["Kind", "Findings", "Silent", "Handled"], &summary);
    out.push('\n');
}

fn crashes(out: &mut String, report: &Report) {
    if report.crashes.is_empty() {
        return;
    }
    let _ = writeln!(out, "### Real crashes\n");
    let rows: Vec<Vec<String>> = report
        .crashes
        .iter()
        .map(|g| {
            let stack: Vec<String> = g.stack.iter().map(|f| code(&f.display())).collect();
            vec![
                g.signal.clone(),
                g.frame.as_ref().map_or_else(|| "?".into(), |f| code(&f.display())),
                g.inputs.len().to_string(),
                elapsed(g.first_seen_ms),
                format!("{} {}", code(&g.input.rel), fields(&g.input.fields)),
                stack.join(" ← "),
            ]
        })
        .collect();
    table(
        out,
        &["Signal", "Top frame", "Inputs", "First seen", "Input", "Stack"],
        &rows,
    );
    out.push('\n');
}

fn hangs(out: &mut String, report: &Report) {
    if report.hangs.is_empty() {
        return;
    }
    let _ = writeln!(out, "### Hangs (time limit {} ms)\n", report.timeout_ms);
    for h in &report.hangs {
        let at = h
            .frame
            .as_ref()
            .map_or_else(String::new, |f| format!(", stopped in {}", code(&f.display())));
        let _ = writeln!(
            out,
            "- {}: {}, first seen {}{at}",
            code(&h.input.rel),
            fields(&h.input.fields),
            elapsed(h.first_seen_ms)
        );
    }
    out.push('\n');
}

fn not_reproduced(out: &mut String, report: &Report) {
    if report.not_reproduced.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "### Not reproduced ({})\n",
        count(report.not_reproduced.len(), "input", "inputs")
    );
    for n in &report.not_reproduced {
        let _ = writeln!(out, "- {}: expected {}; got {}", code(&n.input), n.expected, n.observed);
    }
    out.push('\n');
}
