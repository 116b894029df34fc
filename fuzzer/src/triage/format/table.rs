//! The terminal report. With consequences: the bugs, each with its input, what the library
//! returned, the reference and its chain, then one line of counts for the rest (`--all`: the
//! table of every finding). Without: one aligned row per finding and a summary per kind.
//! Real crashes and hangs come first (a crash is a bug too, and the plainest one); inputs that
//! did not reproduce last.

use super::{
    consequence_note, count, elapsed, finding_cells, finding_titles, headline, judged, judgement_line, others_line,
    results_text, root_text, sources_line, unexplained_title, unexplained_why, BugView,
};
use crate::replay::{fields_decimal, fields_with_hex};
use crate::triage::report::{Finding, KindCount, Report, Unexplained};
use numfuzz_abi::kind::ExceptionKind;
use std::fmt::Write as _;

/// Rows padded to their columns' widths, two spaces apart (the last column unpadded).
pub fn aligned(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c + 1 == row.len() {
                line.push_str(cell);
            } else {
                let pad = widths[c] - cell.chars().count();
                let _ = write!(line, "{cell}{}  ", " ".repeat(pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The bug list: one block per bug, with the chain under it.
fn bugs(out: &mut String, report: &Report) {
    let bugs: Vec<&Finding> = report.bugs().collect();
    if bugs.is_empty() && report.unexplained.is_empty() {
        let _ = writeln!(
            out,
            "No bugs: no exception makes a declared result non-finite or wrong without the library reporting it.\n"
        );
        return;
    }
    let _ = writeln!(
        out,
        "Bugs ({}): exceptions that make the function return a non-finite or wrong value without reporting it\n",
        report.bug_count()
    );
    for (n, f) in bugs.iter().enumerate() {
        bug(out, report, n + 1, f);
    }
    for (n, u) in report.unexplained.iter().enumerate() {
        unexplained(out, bugs.len() + n + 1, u);
    }
}

/// `first seen` of an entry: when, and how many inputs.
fn first_seen(ms: Option<u64>, inputs: usize) -> String {
    format!("{} ({})", elapsed(ms), count(inputs, "input", "inputs"))
}

/// Bug number `n`: where, its input, what it returned and the reference, its root, its
/// reproducer and its chain.
fn bug(out: &mut String, report: &Report, n: usize, f: &Finding) {
    let v = BugView::of(f);
    let _ = writeln!(
        out,
        "{n:>2}. {} at {} in {}  [{}]",
        f.key.kind,
        f.site.location(),
        crate::replay::function_of(&f.example),
        f.id
    );
    let mut rows = vec![
        vec!["    operation".to_string(), v.expression],
        vec![
            "    input".to_string(),
            format!("{}{}", v.input, if v.minimized { " (minimised)" } else { "" }),
        ],
        vec!["    returned".to_string(), v.returned],
    ];
    if let Some(r) = v.reference {
        rows.push(vec!["    reference".to_string(), r]);
    }
    if let Some(root) = root_text(f) {
        rows.push(vec!["    root".to_string(), root]);
    }
    if let Some(r) = &f.reproducer {
        rows.push(vec!["    reproducer".to_string(), r.build.clone()]);
    }
    rows.push(vec![
        "    first seen".to_string(),
        first_seen(f.first_seen_ms, f.inputs.len()),
    ]);
    for (i, c) in report.chain(&f.key).iter().enumerate() {
        rows.push(vec![
            if i == 0 { "    chain" } else { "" }.to_string(),
            format!(
                "{} at {} in {}: {}",
                c.key.kind,
                c.site.location(),
                crate::replay::function_of(&c.example),
                c.example.expression()
            ),
        ]);
    }
    out.push_str(&aligned(&rows));
    out.push('\n');
}

/// Entry `n`: a non-finite result whose cause is not isolated, with the exceptions its input
/// raised.
fn unexplained(out: &mut String, n: usize, u: &Unexplained) {
    let _ = writeln!(out, "{n:>2}. Non-finite result, {}", unexplained_title(u));
    let origins: Vec<String> = u
        .origins
        .iter()
        .map(|k| {
            format!(
                "{} at {}:{}:{}",
                k.kind,
                crate::triage::consequences::root::file_name(&k.path),
                k.line,
                k.column
            )
        })
        .collect();
    let rows = vec![
        vec!["    input".to_string(), fields_decimal(&u.input.fields)],
        vec!["    returned".to_string(), results_text(&u.results)],
        vec![
            "    exceptions".to_string(),
            if origins.is_empty() {
                "none generated a non-finite value".into()
            } else {
                origins.join(", ")
            },
        ],
        vec!["    why".to_string(), unexplained_why(u)],
        vec![
            "    first seen".to_string(),
            first_seen(u.first_seen_ms, u.inputs.len()),
        ],
    ];
    out.push_str(&aligned(&rows));
    out.push('\n');
}

/// The escapes no reference judged: what each returned and why no reference spoke.
fn not_judged(out: &mut String, report: &Report) {
    let entries: Vec<&Finding> = report.not_judged().collect();
    if entries.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "Not judged ({}): escapes no reference could judge, so whether they are wrong is not known (not counted as bugs)\n",
        entries.len()
    );
    for (n, f) in entries.iter().enumerate() {
        let v = BugView::of(f);
        let _ = writeln!(
            out,
            "{:>2}. {} at {} in {}  [{}]",
            n + 1,
            f.key.kind,
            f.site.location(),
            crate::replay::function_of(&f.example),
            f.id
        );
        let rows = vec![
            vec!["    operation".to_string(), v.expression],
            vec!["    input".to_string(), v.input],
            vec!["    returned".to_string(), v.returned],
            vec!["    why".to_string(), f.not_judged.clone().unwrap_or_default()],
        ];
        out.push_str(&aligned(&rows));
        out.push('\n');
    }
}

pub fn render(report: &Report, all: bool) -> String {
    let mut out = String::new();
    head(&mut out, report);
    crashes(&mut out, report);
    hangs(&mut out, report);
    if report.findings.is_empty() {
        let _ = writeln!(out, "No floating-point exception findings.");
    } else {
        findings(&mut out, report, all);
    }
    not_reproduced(&mut out, report);
    out
}

/// The headline, what was triaged and where consequences and references came from.
fn head(out: &mut String, report: &Report) {
    let _ = writeln!(
        out,
        "numfuzz triage of {}: {}",
        report.out_dir.display(),
        headline(report)
    );
    let sig = report.signature.as_deref().unwrap_or("none: plain bytes");
    let _ = writeln!(
        out,
        "target {} (signature {sig}), instances {}",
        report.target.display(),
        report.instances.join(", ")
    );
    for line in [sources_line(report), judgement_line(report), consequence_note(report)]
        .into_iter()
        .flatten()
    {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
}

/// With consequences the bugs and a line of counts for the rest; the table of every finding
/// without them or with `all`.
fn findings(out: &mut String, report: &Report, all: bool) {
    let judged = judged(report);
    if judged {
        bugs(out, report);
        not_judged(out, report);
        let _ = writeln!(out, "{}", others_line(report, all));
        if !all {
            return;
        }
        let _ = writeln!(out, "\nAll findings ({}):", report.findings.len());
    }
    let minimized = report.minimized_dir.is_some();
    let mut rows = vec![finding_titles(minimized, judged)
        .iter()
        .map(|t| t.to_uppercase())
        .collect::<Vec<_>>()];
    rows.extend(report.findings.iter().map(|f| finding_cells(f, minimized, judged)));
    out.push_str(&aligned(&rows));
    out.push('\n');
    kind_summary(out, report);
    minimized_inputs(out, report);
}

/// Findings, silent and handled per kind, and in total.
fn kind_summary(out: &mut String, report: &Report) {
    let line = |label: String, c: KindCount| {
        vec![
            label,
            count(c.findings, "finding", "findings"),
            format!("({} silent, {} handled)", c.silent, c.handled),
        ]
    };
    let mut summary: Vec<Vec<String>> = ExceptionKind::ALL
        .into_iter()
        .map(|kind| line(format!("{kind}:"), report.count(Some(kind))))
        .collect();
    summary.push(line("total:".into(), report.count(None)));
    out.push_str(&aligned(&summary));
}

/// Where each minimised input was written (`--minimize`), and what it raises.
fn minimized_inputs(out: &mut String, report: &Report) {
    let Some(dir) = &report.minimized_dir else {
        return;
    };
    let _ = writeln!(out, "\nMinimised inputs ({}/<finding id>):", dir.display());
    let rows: Vec<Vec<String>> = report
        .findings
        .iter()
        .filter_map(|f| f.minimized.as_ref())
        .map(|m| vec![format!("  {}", m.path.display()), m.expression.clone()])
        .collect();
    out.push_str(&aligned(&rows));
}

fn crashes(out: &mut String, report: &Report) {
    if report.crashes.is_empty() {
        return;
    }
    let _ = writeln!(out, "Real crashes ({}):", report.crashes.len());
    for g in &report.crashes {
        let at = g
            .frame
            .as_ref()
            .map_or_else(|| "unknown location".into(), |f| f.display());
        let _ = writeln!(
            out,
            "  {} in {}: {}, first seen {}, e.g. {}",
            g.signal,
            at,
            count(g.inputs.len(), "input", "inputs"),
            elapsed(g.first_seen_ms),
            g.input.rel
        );
        let _ = writeln!(out, "    input: {}", fields_with_hex(&g.input.fields));
        if g.stack.is_empty() {
            let _ = writeln!(
                out,
                "    (no stack: the program died without the numfuzz runtime's crash report)"
            );
        }
        for (i, frame) in g.stack.iter().enumerate() {
            let _ = writeln!(out, "    #{i} {}", frame.display());
        }
    }
    out.push('\n');
}

fn hangs(out: &mut String, report: &Report) {
    if report.hangs.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "Hangs ({}, time limit {} ms):",
        report.hangs.len(),
        report.timeout_ms
    );
    for h in &report.hangs {
        let at = h
            .frame
            .as_ref()
            .map_or_else(String::new, |f| format!(", stopped in {}", f.display()));
        let _ = writeln!(
            out,
            "  {}: input {}, first seen {}{at}",
            h.input.rel,
            fields_with_hex(&h.input.fields),
            elapsed(h.first_seen_ms)
        );
    }
    out.push('\n');
}

fn not_reproduced(out: &mut String, report: &Report) {
    if report.not_reproduced.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nNot reproduced ({}):", report.not_reproduced.len());
    for n in &report.not_reproduced {
        let _ = writeln!(out, "  {}: expected {}; got {}", n.input, n.expected, n.observed);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_line_up() {
        let rows = vec![
            vec!["a".to_string(), "bb".into(), "c".into()],
            vec!["aaa".into(), "b".into(), "cc".into()],
        ];
        assert_eq!(super::aligned(&rows), "a    bb  c\naaa  b   cc\n");
    }
}
