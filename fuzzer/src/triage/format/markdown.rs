//! GitHub-flavoured Markdown for an issue tracker: real crashes and hangs first (a crash is a
//! bug too), then, with consequences, the bug table (root site, kind, function, minimal input,
//! returned value, reference, chain) and one line of counts for the rest (`--all`: the table of
//! every finding); without, the findings table and a summary per kind. Inputs that did not
//! reproduce last. Cells go through `crate::markdown`, which escapes them.

use super::{
    consequence_note, count, elapsed, finding_cells, finding_titles, headline, judged, judgement_line, key_location,
    others_line, results_text, root_text, sources_line, unexplained_title, unexplained_why, BugView,
};
use crate::markdown::{table, Md};
use crate::replay::{fields_decimal, DecodedField};
use crate::triage::report::{Finding, Report, Unexplained};
use numfuzz_abi::kind::ExceptionKind;
use std::fmt::Write as _;

fn fields(fields: &[DecodedField]) -> Md {
    Md::join(
        fields.iter().map(|f| {
            let mut m = Md::code(&f.value);
            m.push(Md::join([Md::text(" ("), Md::code(&f.hex), Md::text(")")], ""));
            m
        }),
        ", ",
    )
}

/// The bug table's row of bug number `n`.
fn bug_row(report: &Report, n: usize, f: &Finding) -> Vec<Md> {
    let v = BugView::of(f);
    let chain: Vec<Md> = report
        .chain(&f.key)
        .iter()
        .map(|c| {
            Md::join(
                [
                    Md::text(&format!("{} at ", c.key.kind)),
                    Md::code(&c.site.location()),
                    Md::text(": "),
                    Md::code(&c.example.expression()),
                ],
                "",
            )
        })
        .collect();
    let mut row = exception_cells(n, f, &v);
    row.extend([
        Md::text(v.reference.as_deref().unwrap_or("-")),
        Md::text(root_text(f).as_deref().unwrap_or("-")),
        or_dash(chain),
    ]);
    row
}

/// The cells a row of the bug table and of the not-judged table begin with: number, kind,
/// location, function, operation, input (minimised or not), returned.
fn exception_cells(n: usize, f: &Finding, v: &BugView) -> Vec<Md> {
    let mut input = Md::code(&v.input);
    if v.minimized {
        input.push(" (minimised)");
    }
    vec![
        Md::text(&n.to_string()),
        Md::text(&f.key.kind.to_string()),
        Md::code(&f.site.location()),
        Md::code(crate::replay::function_of(&f.example)),
        Md::code(&v.expression),
        input,
        Md::code(&v.returned),
    ]
}

/// Items on lines of their own in one cell, or `-` for none.
fn or_dash(items: Vec<Md>) -> Md {
    if items.is_empty() {
        Md::text("-")
    } else {
        Md::lines(items)
    }
}

/// The bug table's row of entry `n`, a non-finite result whose cause is not isolated.
fn unexplained_row(n: usize, u: &Unexplained) -> Vec<Md> {
    let origins: Vec<Md> = u
        .origins
        .iter()
        .map(|k| Md::join([Md::text(&format!("{} at ", k.kind)), Md::code(&key_location(k))], ""))
        .collect();
    vec![
        Md::text(&n.to_string()),
        Md::text("non-finite result"),
        Md::text(unexplained_title(u)),
        Md::text("-"),
        Md::text("-"),
        Md::code(&fields_decimal(&u.input.fields)),
        Md::code(&results_text(&u.results)),
        Md::text("-"),
        Md::text(&unexplained_why(u)),
        or_dash(origins),
    ]
}

/// The bug table.
fn bugs(out: &mut String, report: &Report) {
    let mut rows: Vec<Vec<Md>> = report
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
    out.push_str(&table(&titles, &rows));
    out.push('\n');
    reproducers(out, report);
}

/// The escapes no reference judged, each with why.
fn not_judged(out: &mut String, report: &Report) {
    let rows: Vec<Vec<Md>> = report
        .not_judged()
        .enumerate()
        .map(|(n, f)| {
            let mut row = exception_cells(n + 1, f, &BugView::of(f));
            row.push(Md::text(f.not_judged.as_deref().unwrap_or("-")));
            row
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "### Not judged ({})\n\nEscapes no reference could judge: whether they are wrong is not known, so they are not counted as bugs.\n",
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
        "Why not judged",
    ];
    out.push_str(&table(&titles, &rows));
    out.push('\n');
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
        let placeholder = super::repro::PLACEHOLDER;
        let stands = if repros.iter().any(|r| r.contains(placeholder)) {
            format!("; {placeholder}: its link arguments, which --repro-link puts there")
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "Reproducers (built against the library built without numfuzz-cc{stands}; each exits 1 while its bug is there):\n\n```sh\n{}\n```\n",
            repros.join("\n")
        );
    }
}

pub fn render(report: &Report, all: bool) -> String {
    let mut out = String::new();
    head(&mut out, report);
    crashes(&mut out, report);
    hangs(&mut out, report);
    let judged = judged(report);
    if report.findings.is_empty() {
        let _ = writeln!(out, "No floating-point exception findings.\n");
    } else if judged && !all {
        bugs(&mut out, report);
        not_judged(&mut out, report);
        let _ = writeln!(out, "{}\n", others_line(report, all));
    } else {
        if judged {
            bugs(&mut out, report);
            not_judged(&mut out, report);
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
            let _ = writeln!(
                out,
                "Minimised inputs are in {}.\n",
                Md::code(&dir.display().to_string())
            );
        }
    }
    not_reproduced(&mut out, report);
    out
}

/// The title (the headline), what was triaged and where consequences and references came from.
fn head(out: &mut String, report: &Report) {
    let _ = writeln!(out, "## numfuzz triage: {}\n", headline(report));
    let sig = report
        .signature
        .as_deref()
        .map_or_else(|| Md::text("none (plain bytes)"), Md::code);
    let _ = writeln!(
        out,
        "Target {} (signature {sig}), campaign {} (instances {}).\n",
        Md::code(&report.target.display().to_string()),
        Md::code(&report.out_dir.display().to_string()),
        Md::join(report.instances.iter().map(|i| Md::code(i)), ", ")
    );
    for line in [sources_line(report), judgement_line(report), consequence_note(report)]
        .into_iter()
        .flatten()
    {
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
    let rows: Vec<Vec<Md>> = report
        .findings
        .iter()
        .map(|f| {
            let cells = finding_cells(f, minimized, judged);
            // Code spans for what is code or data.
            cells
                .iter()
                .enumerate()
                .map(|(i, c)| match i {
                    1..=3 => Md::code(c),
                    4 => fields(&f.input.fields),
                    9 if f.minimized.is_some() => Md::code(c),
                    _ => Md::text(c),
                })
                .collect()
        })
        .collect();
    out.push_str(&table(&titles.iter().map(String::as_str).collect::<Vec<_>>(), &rows));
    out.push('\n');
}

/// Findings, silent and handled per kind, and in total.
fn kind_summary(out: &mut String, report: &Report) {
    let row = |label: Md, c: crate::triage::report::KindCount| {
        vec![
            label,
            Md::text(&c.findings.to_string()),
            Md::text(&c.silent.to_string()),
            Md::text(&c.handled.to_string()),
        ]
    };
    let mut summary: Vec<Vec<Md>> = ExceptionKind::ALL
        .into_iter()
        .map(|kind| row(Md::text(&kind.to_string()), report.count(Some(kind))))
        .collect();
    summary.push(row(Md::text("**Total**"), report.count(None)));
    out.push_str(&table(&["Kind", "Findings", "Silent", "Handled"], &summary));
    out.push('\n');
}

fn crashes(out: &mut String, report: &Report) {
    if report.crashes.is_empty() {
        return;
    }
    let _ = writeln!(out, "### Real crashes\n");
    let rows: Vec<Vec<Md>> = report
        .crashes
        .iter()
        .map(|g| {
            let mut input = Md::code(&g.input.rel);
            input.push(Md::join([Md::text(" "), fields(&g.input.fields)], ""));
            vec![
                Md::text(&g.signal),
                g.frame
                    .as_ref()
                    .map_or_else(|| Md::text("?"), |f| Md::code(&f.display())),
                Md::text(&g.inputs.len().to_string()),
                Md::text(&elapsed(g.first_seen_ms)),
                input,
                Md::join(g.stack.iter().map(|f| Md::code(&f.display())), " ← "),
            ]
        })
        .collect();
    out.push_str(&table(
        &["Signal", "Top frame", "Inputs", "First seen", "Input", "Stack"],
        &rows,
    ));
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
            .map_or_else(String::new, |f| format!(", stopped in {}", Md::code(&f.display())));
        let _ = writeln!(
            out,
            "- {}: {}, first seen {}{at}",
            Md::code(&h.input.rel),
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
        let _ = writeln!(
            out,
            "- {}: expected {}; got {}",
            Md::code(&n.input),
            n.expected,
            n.observed
        );
    }
    out.push('\n');
}
