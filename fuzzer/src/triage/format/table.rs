//! The terminal report. With consequences: the bugs, each with its input, what the library
//! returned, the reference and its chain, then one line of counts for the rest (`--all`: the
//! table of every finding). Without: one aligned row per finding and a summary per kind.
//! Then real crashes, hangs and inputs that did not reproduce.

use super::{
    consequence_note, count, elapsed, finding_cells, finding_titles, headline, judged, others_line, results_text,
    root_text, sources_line, BugView,
};
use crate::replay::{fields_decimal, fields_with_hex};
use crate::triage::group::{Finding, Report};
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
            format!(
                "{} ({})",
                elapsed(f.first_seen_ms),
                count(f.inputs.len(), "input", "inputs")
            ),
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
    for (n, u) in report.unexplained.iter().enumerate() {
        let _ = writeln!(out, "{:>2}. Non-finite result, cause not isolated", bugs.len() + n + 1);
        let origins: Vec<String> = u
            .origins
            .iter()
            .map(|k| format!("{} at {}:{}:{}", k.kind, file_name(&k.path), k.line, k.column))
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
            vec![
                "    why".to_string(),
                "no exception's value reaches the result, and repairing any one alone leaves it non-finite".into(),
            ],
            vec![
                "    first seen".to_string(),
                format!(
                    "{} ({})",
                    elapsed(u.first_seen_ms),
                    count(u.inputs.len(), "input", "inputs")
                ),
            ],
        ];
        out.push_str(&aligned(&rows));
        out.push('\n');
    }
}

/// The file name of a source path.
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

pub fn render(report: &Report, all: bool) -> String {
    let mut out = String::new();
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
    for line in [sources_line(report), consequence_note(report)].into_iter().flatten() {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');

    let judged = judged(report);
    if report.findings.is_empty() {
        let _ = writeln!(out, "No floating-point exception findings.");
    } else {
        if judged {
            bugs(&mut out, report);
            let _ = writeln!(out, "{}", others_line(report, all));
            if !all {
                return crashes_hangs_and_not_reproduced(out, report);
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
        let mut summary = Vec::new();
        for kind in ExceptionKind::ALL {
            let c = report.count(Some(kind));
            summary.push(vec![
                format!("{kind}:"),
                count(c.findings, "finding", "findings"),
                format!("({} silent, {} handled)", c.silent, c.handled),
            ]);
        }
        let c = report.count(None);
        summary.push(vec![
            "total:".into(),
            count(c.findings, "finding", "findings"),
            format!("({} silent, {} handled)", c.silent, c.handled),
        ]);
        out.push_str(&aligned(&summary));
        if let Some(dir) = &report.minimized_dir {
            let _ = writeln!(out, "\nMinimised inputs ({}/<finding id>):", dir.display());
            let rows: Vec<Vec<String>> = report
                .findings
                .iter()
                .filter_map(|f| f.minimized.as_ref())
                .map(|m| vec![format!("  {}", m.path.display()), m.expression.clone()])
                .collect();
            out.push_str(&aligned(&rows));
        }
    }
    crashes_hangs_and_not_reproduced(out, report)
}

/// Real crashes, hangs and inputs that did not reproduce.
fn crashes_hangs_and_not_reproduced(mut out: String, report: &Report) -> String {
    if !report.crashes.is_empty() {
        let _ = writeln!(out, "\nReal crashes ({}):", report.crashes.len());
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
    }
    if !report.hangs.is_empty() {
        let _ = writeln!(
            out,
            "\nHangs ({}, time limit {} ms):",
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
    }
    if !report.not_reproduced.is_empty() {
        let _ = writeln!(out, "\nNot reproduced ({}):", report.not_reproduced.len());
        for n in &report.not_reproduced {
            let _ = writeln!(out, "  {}: expected {}; got {}", n.input, n.expected, n.observed);
        }
    }
    out
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
