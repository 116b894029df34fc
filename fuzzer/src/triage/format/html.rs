//! A self-contained HTML page of a triage report: the header (target, campaign, counts,
//! where references came from), real crashes and hangs first, then the bugs, the non-finite
//! results whose cause is not isolated, the rest counted by class, and a chart of each
//! instance's distinct exceptions and escapes over time (from its `exceptions.jsonl`).

use super::{
    consequence_note, count, elapsed, finding_cells, finding_titles, headline, judged, judgement_line, key_location,
    others_line, results_text, root_text, sources_line, unexplained_why, BugView,
};
use crate::html::chart::{self, Axes, Series};
use crate::html::{code, entry, heading, list, page, paragraphs, table, Html};
use crate::replay::fields_decimal;
use crate::triage::inputs::campaign::InstanceRecords;
use crate::triage::report::{Finding, Report};
use numfuzz_abi::kind::ExceptionKind;

fn header(report: &Report) -> Html {
    let sig = report
        .signature
        .as_deref()
        .map_or_else(|| Html::text("none (plain bytes)"), code);
    let instances = Html::join(report.instances.iter().map(|i| code(i)), &Html::text(", "));
    let mut about = Html::text("Target ");
    about.push(code(&report.target.display().to_string()));
    about.push(" (signature ");
    about.push(sig);
    about.push("), campaign ");
    about.push(code(&report.out_dir.display().to_string()));
    about.push(" (instances ");
    about.push(instances);
    about.push(").");
    Html::concat([
        heading(1, "numfuzz triage"),
        Html::element("p", Html::element("strong", headline(report))).line(),
        Html::element("p", about).line(),
        paragraphs(
            [sources_line(report), judgement_line(report), consequence_note(report)]
                .into_iter()
                .flatten(),
        ),
    ])
}

/// `Kind at location: expression`, of a finding under a bug.
fn chained(report: &Report, f: &Finding) -> Option<Html> {
    let items: Vec<Html> = report
        .chain(&f.key)
        .iter()
        .map(|c| {
            let mut item = Html::text(&format!("{} at ", c.key.kind));
            item.push(code(&c.site.location()));
            item.push(": ");
            item.push(code(&c.example.expression()));
            item
        })
        .collect();
    (!items.is_empty()).then(|| list(items))
}

/// `kind at site in function`, a bug's heading after its number.
fn at(n: usize, kind: &str, site: &str, function: &str) -> Html {
    let mut title = Html::text(&format!("{n}. {kind} at "));
    title.push(code(site));
    title.push(" in ");
    title.push(code(function));
    title
}

/// One bug's entry: site and function in its heading, then what it shows.
fn bug(report: &Report, n: usize, f: &Finding) -> Html {
    let v = BugView::of(f);
    let mut input = code(&v.input);
    if v.minimized {
        input.push(" (minimised)");
    }
    let mut items = vec![
        ("Operation", code(&v.expression)),
        ("Input", input),
        ("Returned", code(&v.returned)),
        ("Reference", Html::text(v.reference.as_deref().unwrap_or("-"))),
    ];
    if let Some(root) = root_text(f) {
        items.push(("Root", Html::text(&root)));
    }
    if let Some(c) = chained(report, f) {
        items.push(("Chain", c));
    }
    if let Some(r) = &f.reproducer {
        let shown = Html::concat([
            code(&r.path.display().to_string()),
            Html::element("pre", r.build.as_str()),
        ]);
        items.push(("Reproducer", shown));
    }
    let title = at(
        n,
        &f.key.kind.to_string(),
        &f.site.location(),
        crate::replay::function_of(&f.example),
    );
    entry(title, items)
}

fn bugs(report: &Report) -> Html {
    let entries: Html = report.bugs().enumerate().map(|(n, f)| bug(report, n + 1, f)).collect();
    let n = report.bugs().count();
    if n == 0 {
        return Html::concat([
            heading(2, "No bugs"),
            paragraphs([
                "No exception makes a declared result non-finite or wrong without the library reporting it."
                    .to_string(),
            ]),
        ]);
    }
    Html::concat([
        heading(2, format!("Bugs ({n})")),
        paragraphs([
            "Exceptions that make the function return a non-finite or wrong value without reporting it.".to_string(),
        ]),
        entries,
    ])
}

fn unexplained(report: &Report) -> Html {
    if report.unexplained.is_empty() {
        return Html::default();
    }
    let rows: Vec<Vec<Html>> = report
        .unexplained
        .iter()
        .map(|u| {
            let origins = u.origins.iter().map(|k| {
                let mut o = Html::text(&format!("{} at ", k.kind));
                o.push(code(&key_location(k)));
                o
            });
            vec![
                code(&fields_decimal(&u.input.fields)),
                code(&results_text(&u.results)),
                Html::join(origins, &Html::br()),
                Html::text(&unexplained_why(u)),
                Html::text(&u.inputs.len().to_string()),
            ]
        })
        .collect();
    Html::concat([
        heading(
            2,
            format!("Non-finite results whose cause is not isolated ({})", rows.len()),
        ),
        paragraphs([
            "No exception's value reaches the result, and repairing any one alone leaves it non-finite; where the library reported an error and the function returned success, that dropped report is the root.".to_string(),
        ]),
        table(&["input", "returned", "exceptions raised", "why", "inputs"], &rows, false),
    ])
}

/// The escapes no reference judged, each with why.
fn not_judged(report: &Report) -> Html {
    let rows: Vec<Vec<Html>> = report
        .not_judged()
        .map(|f| {
            let v = BugView::of(f);
            let mut at = Html::text(&format!("{} at ", f.key.kind));
            at.push(code(&f.site.location()));
            vec![
                at,
                code(&v.expression),
                code(&v.input),
                code(&v.returned),
                Html::text(f.not_judged.as_deref().unwrap_or("-")),
            ]
        })
        .collect();
    if rows.is_empty() {
        return Html::default();
    }
    Html::concat([
        heading(2, format!("Not judged ({})", rows.len())),
        paragraphs([
            "Escapes no reference could judge: whether they are wrong is not known, so they are not counted as bugs."
                .to_string(),
        ]),
        table(
            &["exception", "operation", "input", "returned", "why not judged"],
            &rows,
            false,
        ),
    ])
}

/// Every finding (with `--all`, or when consequences are missing), sortable, and without
/// consequences the counts per kind.
fn findings(report: &Report) -> Html {
    let (minimized, judged) = (report.minimized_dir.is_some(), judged(report));
    let rows: Vec<Vec<Html>> = report
        .findings
        .iter()
        .map(|f| {
            finding_cells(f, minimized, judged)
                .into_iter()
                .map(Html::from)
                .collect()
        })
        .collect();
    let mut out = Html::concat([
        heading(2, format!("All findings ({})", rows.len())),
        table(&finding_titles(minimized, judged), &rows, true),
    ]);
    if !judged {
        let mut counts: Vec<(String, _)> = ExceptionKind::ALL
            .iter()
            .map(|&k| (k.to_string(), report.count(Some(k))))
            .collect();
        counts.push(("Total".into(), report.count(None)));
        let rows: Vec<Vec<Html>> = counts
            .into_iter()
            .map(|(k, c)| {
                [k, c.findings.to_string(), c.silent.to_string(), c.handled.to_string()]
                    .map(Html::from)
                    .to_vec()
            })
            .collect();
        out.push(table(&["kind", "findings", "silent", "handled"], &rows, false));
    }
    out
}

/// Real crashes and hangs: what they are, where, and an input of each.
fn crashes_and_hangs(report: &Report) -> Html {
    let mut out = Html::default();
    if !report.crashes.is_empty() {
        let rows: Vec<Vec<Html>> = report
            .crashes
            .iter()
            .map(|g| {
                vec![
                    Html::text(&g.signal),
                    g.frame.as_ref().map_or_else(|| Html::text("?"), |f| code(&f.display())),
                    Html::text(&g.inputs.len().to_string()),
                    Html::text(&elapsed(g.first_seen_ms)),
                    code(&g.input.rel),
                    code(&fields_decimal(&g.input.fields)),
                ]
            })
            .collect();
        out.push(heading(2, format!("Real crashes ({})", report.crashes.len())));
        out.push(table(
            &["signal", "top frame", "inputs", "first seen", "input", "values"],
            &rows,
            false,
        ));
    }
    if !report.hangs.is_empty() {
        let rows: Vec<Vec<Html>> = report
            .hangs
            .iter()
            .map(|h| {
                vec![
                    code(&h.input.rel),
                    code(&fields_decimal(&h.input.fields)),
                    h.frame.as_ref().map_or_else(|| Html::text("?"), |f| code(&f.display())),
                ]
            })
            .collect();
        out.push(heading(
            2,
            format!("Hangs ({}, time limit {} ms)", report.hangs.len(), report.timeout_ms),
        ));
        out.push(table(&["input", "values", "stopped in"], &rows, false));
    }
    out
}

/// Inputs that did not reproduce, briefly (the other formats list them).
fn not_reproduced(report: &Report) -> Html {
    if report.not_reproduced.is_empty() {
        return Html::default();
    }
    paragraphs([format!(
        "{} did not reproduce (the other formats list them).",
        count(report.not_reproduced.len(), "saved input", "saved inputs")
    )])
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

fn timeline(report: &Report) -> Html {
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
    Html::concat([heading(2, "Over time"), svg])
}

pub fn render(report: &Report, all: bool) -> String {
    let mut body = header(report);
    body.push(crashes_and_hangs(report));
    if report.findings.is_empty() {
        body.push(paragraphs(["No floating-point exception findings.".to_string()]));
    } else if judged(report) {
        body.push(bugs(report));
        body.push(unexplained(report));
        body.push(not_judged(report));
        body.push(paragraphs([others_line(report, all)]));
    }
    if !report.findings.is_empty() && (all || !judged(report)) {
        body.push(findings(report));
    }
    body.push(not_reproduced(report));
    body.push(timeline(report));
    page(&format!("numfuzz triage: {}", headline(report)), body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::DecodedField;
    use crate::triage::consequences::Consequence;
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
            not_judged: None,
            dropped_report: None,
            inputs_not_isolated: 0,
            precision_lost: None,
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
