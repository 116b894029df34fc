//! A self-contained HTML page of a triage report: the header (target, campaign, counts,
//! where references came from), the bugs first, then the non-finite results whose cause is
//! not isolated, the rest counted by class, and a chart of each instance's distinct exceptions
//! and escapes over time (from its `exceptions.jsonl`).

use super::{
    consequence_note, elapsed, finding_cells, finding_titles, headline, judged, key_location, others_line,
    results_text, root_text, sources_line, BugView,
};
use crate::html::chart::{self, Axes, Series};
use crate::html::{code, escape, page, paragraphs, table};
use crate::replay::fields_decimal;
use crate::triage::campaign::InstanceRecords;
use crate::triage::report::{Finding, Report};
use numfuzz_abi::kind::ExceptionKind;

fn header(report: &Report) -> String {
    let sig = report
        .signature
        .as_deref()
        .map_or_else(|| "none (plain bytes)".into(), code);
    let instances: Vec<String> = report.instances.iter().map(|i| code(i)).collect();
    format!(
        "<h1>numfuzz triage</h1>\n<p><strong>{}</strong></p>\n<p>Target {} (signature {sig}), campaign {} (instances {}).</p>\n{}",
        escape(&headline(report)),
        code(&report.target.display().to_string()),
        code(&report.out_dir.display().to_string()),
        instances.join(", "),
        paragraphs([sources_line(report), consequence_note(report)].into_iter().flatten())
    )
}

/// One `<dt>`/`<dd>` pair; `value` is HTML.
fn item(term: &str, value: &str) -> String {
    format!("<dt>{}</dt><dd>{value}</dd>\n", escape(term))
}

/// The findings that hang under `f` in its chain, as a list.
fn chain(report: &Report, f: &Finding) -> Option<String> {
    let items: Vec<String> = report
        .chain(&f.key)
        .iter()
        .map(|c| {
            format!(
                "<li>{} at {}: {}</li>",
                escape(&c.key.kind.to_string()),
                code(&c.site.location()),
                code(&c.example.expression())
            )
        })
        .collect();
    (!items.is_empty()).then(|| format!("<ul>{}</ul>", items.concat()))
}

/// One bug's entry: site and function in its heading, then what it shows.
fn bug(report: &Report, n: usize, f: &Finding) -> String {
    let v = BugView::of(f);
    let minimised = if v.minimized { " (minimised)" } else { "" };
    let mut items = vec![
        item("Operation", &code(&v.expression)),
        item("Input", &format!("{}{minimised}", code(&v.input))),
        item("Returned", &code(&v.returned)),
        item("Reference", &v.reference.map_or_else(|| "-".into(), |r| escape(&r))),
    ];
    if let Some(root) = root_text(f) {
        items.push(item("Root", &escape(&root)));
    }
    if let Some(c) = chain(report, f) {
        items.push(item("Chain", &c));
    }
    if let Some(r) = &f.reproducer {
        let shown = format!("{}<pre>{}</pre>", code(&r.path.display().to_string()), escape(&r.build));
        items.push(item("Reproducer", &shown));
    }
    format!(
        "<section class=\"bug\">\n<h3>{n}. {} at {} in {}</h3>\n<dl>\n{}</dl>\n</section>\n",
        escape(&f.key.kind.to_string()),
        code(&f.site.location()),
        code(crate::replay::function_of(&f.example)),
        items.concat()
    )
}

fn bugs(report: &Report) -> String {
    let entries: Vec<String> = report.bugs().enumerate().map(|(n, f)| bug(report, n + 1, f)).collect();
    if entries.is_empty() {
        return "<h2>No bugs</h2>\n<p>No exception makes a declared result non-finite or wrong without the library reporting it.</p>\n".into();
    }
    format!(
        "<h2>Bugs ({})</h2>\n<p>Exceptions that make the function return a non-finite or wrong value without reporting it.</p>\n{}",
        entries.len(),
        entries.concat()
    )
}

fn unexplained(report: &Report) -> String {
    if report.unexplained.is_empty() {
        return String::new();
    }
    let rows: Vec<Vec<String>> = report
        .unexplained
        .iter()
        .map(|u| {
            let origins: Vec<String> = u
                .origins
                .iter()
                .map(|k| format!("{} at {}", escape(&k.kind.to_string()), code(&key_location(k))))
                .collect();
            vec![
                code(&fields_decimal(&u.input.fields)),
                code(&results_text(&u.results)),
                origins.join("<br>"),
                u.inputs.len().to_string(),
            ]
        })
        .collect();
    format!(
        "<h2>Non-finite results whose cause is not isolated ({})</h2>\n<p>No exception's value reaches the result, and repairing any one alone leaves it non-finite.</p>\n{}",
        rows.len(),
        table(&["input", "returned", "exceptions raised", "inputs"], &rows, false)
    )
}

/// Every finding (with `--all`, or when consequences are missing), sortable, and without
/// consequences the counts per kind.
fn findings(report: &Report) -> String {
    let (minimized, judged) = (report.minimized_dir.is_some(), judged(report));
    let rows: Vec<Vec<String>> = report
        .findings
        .iter()
        .map(|f| finding_cells(f, minimized, judged).iter().map(|c| escape(c)).collect())
        .collect();
    let mut out = format!(
        "<h2>All findings ({})</h2>\n{}",
        rows.len(),
        table(&finding_titles(minimized, judged), &rows, true)
    );
    if !judged {
        let mut counts: Vec<(String, _)> = ExceptionKind::ALL
            .iter()
            .map(|&k| (k.to_string(), report.count(Some(k))))
            .collect();
        counts.push(("Total".into(), report.count(None)));
        let rows: Vec<Vec<String>> = counts
            .into_iter()
            .map(|(k, c)| vec![k, c.findings.to_string(), c.silent.to_string(), c.handled.to_string()])
            .collect();
        out.push_str(&table(&["kind", "findings", "silent", "handled"], &rows, false));
    }
    out
}

/// Real crashes, hangs and inputs that did not reproduce, briefly (the other formats say
/// more).
fn troubles(report: &Report) -> String {
    let mut out = String::new();
    if !report.crashes.is_empty() {
        let rows: Vec<Vec<String>> = report
            .crashes
            .iter()
            .map(|g| {
                vec![
                    escape(&g.signal),
                    g.frame.as_ref().map_or_else(|| "?".into(), |f| code(&f.display())),
                    g.inputs.len().to_string(),
                    elapsed(g.first_seen_ms),
                    code(&g.input.rel),
                ]
            })
            .collect();
        out.push_str("<h2>Real crashes</h2>\n");
        out.push_str(&table(
            &["signal", "top frame", "inputs", "first seen", "input"],
            &rows,
            false,
        ));
    }
    if !report.hangs.is_empty() {
        let rows: Vec<Vec<String>> = report
            .hangs
            .iter()
            .map(|h| {
                vec![
                    code(&h.input.rel),
                    h.frame.as_ref().map_or_else(|| "?".into(), |f| code(&f.display())),
                ]
            })
            .collect();
        out.push_str(&format!("<h2>Hangs (time limit {} ms)</h2>\n", report.timeout_ms));
        out.push_str(&table(&["input", "stopped in"], &rows, false));
    }
    if !report.not_reproduced.is_empty() {
        out.push_str(&paragraphs([format!(
            "{} saved inputs did not reproduce (the other formats list them).",
            report.not_reproduced.len()
        )]));
    }
    out
}

/// One line per instance: how many records (distinct exceptions and escapes) it had written
/// by each time, in seconds; escapes are dots.
pub fn timeline_series(instances: &[InstanceRecords]) -> Vec<Series> {
    instances
        .iter()
        .map(|i| {
            let mut points = vec![(0.0, 0.0)];
            let mut dots = Vec::new();
            for (n, r) in i.records.iter().enumerate() {
                let t = r.time_ms as f64 / 1000.0;
                points.extend([(t, n as f64), (t, n as f64 + 1.0)]);
                if r.escape {
                    dots.push((t, n as f64 + 1.0));
                }
            }
            Series {
                label: i.instance.clone(),
                points,
                dots,
            }
        })
        .collect()
}

fn timeline(report: &Report) -> String {
    let axes = Axes {
        title: "Distinct exceptions and escapes over time (dots: escapes)",
        x: "seconds since the instance started",
        y: "exceptions.jsonl records",
    };
    let svg = if report.records.iter().all(|i| i.records.is_empty()) {
        chart::empty(&axes, "No exceptions.jsonl records in this campaign.")
    } else {
        chart::lines(&axes, &timeline_series(&report.records), "")
    };
    format!("<h2>Over time</h2>\n{svg}")
}

pub fn render(report: &Report, all: bool) -> String {
    let mut body = header(report);
    if report.findings.is_empty() {
        body.push_str("<p>No floating-point exception findings.</p>\n");
    } else if judged(report) {
        body.push_str(&bugs(report));
        body.push_str(&unexplained(report));
        body.push_str(&paragraphs([others_line(report, all)]));
    }
    if !report.findings.is_empty() && (all || !judged(report)) {
        body.push_str(&findings(report));
    }
    body.push_str(&troubles(report));
    body.push_str(&timeline(report));
    page(&format!("numfuzz triage: {}", headline(report)), &body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::DecodedField;
    use crate::triage::consequence::Consequence;
    use crate::triage::report::{Consequences, InputView};
    use numfuzz_abi::report::{ExceptionReport, ResultReport};
    use numfuzz_outdir::{ExceptionRecord, FindingKey};
    use serde_json::json;

    /// An overflow at `lib<1>.c:LINE:14` in `scaled` (the file name needs escaping).
    fn overflow(line: u32) -> ExceptionReport {
        serde_json::from_value(json!({
            "kind": "Overflow", "id": line, "op": "fmul", "type": "f64", "file": "lib<1>.c",
            "directory": "/src", "line": line, "column": 14, "function": "scaled",
            "operands": ["1e300", "1e300"], "operands_hex": ["0x1p+996", "0x1p+996"], "result": "inf"
        }))
        .unwrap()
    }

    fn finding(line: u32, consequence: Consequence) -> Finding {
        let e = overflow(line);
        let key = FindingKey::of(e.kind, &e.site);
        let result: ResultReport =
            serde_json::from_value(json!({"index": 0, "name": null, "type": "f64", "value": "inf", "hex": "inf"}))
                .unwrap();
        Finding {
            id: format!("Overflow-lib.c-{line}-14-scaled"),
            escape_root: (consequence == Consequence::Escapes).then(|| key.clone()),
            key,
            site: e.site.clone(),
            example: e,
            input: InputView {
                rel: "default/crashes/id:000001".into(),
                fields: vec![DecodedField {
                    ty: "f64".into(),
                    value: "1e300".into(),
                    hex: "0x1p+996".into(),
                }],
            },
            input_bytes: Vec::new(),
            results: vec![result],
            inputs: vec!["default/crashes/id:000001".into()],
            handled_inputs: 0,
            silent_inputs: 1,
            first_seen_ms: Some(5),
            minimized: None,
            minimize_note: None,
            origin: true,
            input_borne: false,
            out_of_domain: false,
            consequence: Some(consequence),
            root_by: None,
            ordinariness: Default::default(),
            examples: Default::default(),
            escapes_to: Vec::new(),
            reference: None,
            reproducer: None,
        }
    }

    fn record(time_ms: u64, line: u32, escape: bool) -> ExceptionRecord {
        let e = overflow(line);
        ExceptionRecord {
            time_ms,
            kind: e.kind,
            site: e.site,
            input: "crashes/id:000001".into(),
            escape,
        }
    }

    fn instance(name: &str, records: Vec<ExceptionRecord>) -> InstanceRecords {
        InstanceRecords {
            instance: name.into(),
            records,
        }
    }

    fn report(records: Vec<InstanceRecords>) -> Report {
        Report {
            out_dir: "/tmp/out".into(),
            target: "/tmp/harness".into(),
            signature: Some("f64".into()),
            instances: records.iter().map(|i| i.instance.clone()).collect(),
            inputs_replayed: 2,
            timeout_ms: 1000,
            findings: vec![finding(7, Consequence::Absorbed), finding(3, Consequence::Escapes)],
            crashes: Vec::new(),
            hangs: Vec::new(),
            not_reproduced: Vec::new(),
            unexplained: Vec::new(),
            repair_replays: 0,
            minimized_dir: None,
            consequences: Consequences::Computed,
            taint_target: None,
            oracle: None,
            shadow_agreement: None,
            records,
        }
    }

    /// The `points` of every polyline, as (x, y) pairs.
    fn polylines(svg: &str) -> Vec<Vec<(f64, f64)>> {
        svg.split("points=\"")
            .skip(1)
            .map(|rest| {
                let points = &rest[..rest.find('"').unwrap()];
                points
                    .split(' ')
                    .map(|p| {
                        let (x, y) = p.split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_page_lists_the_bug_before_the_counts_with_report_text_escaped() {
        let page = render(&report(vec![instance("default", vec![record(5, 3, false)])]), false);
        assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
        let site = page
            .find("<code>lib&lt;1&gt;.c:3:14</code> in <code>scaled</code>")
            .expect("the bug's site");
        let counts = page.find("Other findings: ").expect("the counts of the rest");
        assert!(site < counts, "{page}");
        assert!(!page.contains("lib<1>"), "unescaped file name: {page}");
        assert!(page.contains("<code>1e300 * 1e300 = inf</code>"), "{page}");
        assert!(page.contains("1 absorbed"), "{page}");
    }

    #[test]
    fn the_chart_draws_one_line_per_instance_in_time_order() {
        let records = vec![
            instance(
                "a",
                vec![record(1000, 3, false), record(3000, 7, false), record(4000, 3, true)],
            ),
            instance("b", vec![record(2000, 3, false)]),
        ];
        let series = timeline_series(&records);
        assert_eq!(
            series[0].points,
            [
                (0.0, 0.0),
                (1.0, 0.0),
                (1.0, 1.0),
                (3.0, 1.0),
                (3.0, 2.0),
                (4.0, 2.0),
                (4.0, 3.0)
            ]
        );
        assert_eq!(series[0].dots, [(4.0, 3.0)]);
        let page = render(&report(records), false);
        let lines = polylines(&page);
        assert_eq!(lines.len(), 2, "{page}");
        for line in &lines {
            assert!(
                line.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 >= w[1].1),
                "{line:?}"
            );
        }
        assert_eq!(lines[0].len(), 7);
        assert!(page.contains(">a</text>") && page.contains(">b</text>"), "{page}");
    }

    #[test]
    fn a_campaign_without_records_says_so_in_the_svg() {
        let page = render(&report(vec![instance("default", Vec::new())]), false);
        let svg = &page[page.find("<svg").expect("an svg")..];
        assert!(
            svg.contains("No exceptions.jsonl records in this campaign.</text>"),
            "{svg}"
        );
        assert!(!svg.contains("<polyline"), "{svg}");
    }
}
