//! The merged report as one self-contained HTML page: the headline, the bug list (one entry
//! per root site), the non-finite results of no single cause, the rest by class, a table per
//! function that sorts by the clicked column, and a bar chart of findings and bugs per
//! function.

use super::merge::{Merged, MergedBug};
use super::render::{
    fields_text, findings_text, functions_shown, headline, reference_text, rest_text, results_text, RunInfo,
};
use crate::html::{chart, code, escape, page, paragraphs, table};
use crate::triage::format::elapsed;

/// One `<dt>`/`<dd>` pair; `value` is HTML.
fn item(term: &str, value: &str) -> String {
    format!("<dt>{}</dt><dd>{value}</dd>\n", escape(term))
}

fn bug(n: usize, b: &MergedBug) -> String {
    let e = &b.example;
    let minimised = if e.minimized { " (minimised)" } else { "" };
    let mut items = vec![
        item("Operation", &code(&e.expression)),
        item(
            "Functions",
            &format!("{} ({} inputs)", escape(&functions_shown(b)), b.inputs),
        ),
        item(
            "Input",
            &format!(
                "{}{minimised}",
                code(&format!("{}({})", e.function, fields_text(&e.input)))
            ),
        ),
        item("Returned", &code(&results_text(&e.returned))),
        item("Reference", &escape(&reference_text(e))),
    ];
    if !e.chain.is_empty() {
        let chain: String = e.chain.iter().map(|c| format!("<li>{}</li>", escape(c))).collect();
        items.push(item("Chain", &format!("<ul>{chain}</ul>")));
    }
    items.push(item("First seen", &escape(&elapsed(b.first_seen_ms))));
    let within = b
        .in_function
        .as_deref()
        .map_or_else(String::new, |f| format!(" in {}", code(f)));
    format!(
        "<section class=\"bug\">\n<h3>{n}. {} at {}{within}</h3>\n<dl>\n{}</dl>\n</section>\n",
        escape(&b.kind),
        code(&b.site),
        items.concat()
    )
}

fn bugs(m: &Merged) -> String {
    if m.bugs.is_empty() {
        return "<h2>No bugs</h2>\n".into();
    }
    let entries: String = m.bugs.iter().enumerate().map(|(n, b)| bug(n + 1, b)).collect();
    format!(
        "<h2>Bugs ({})</h2>\n<p>One per root site; the most ordinary input over the functions it is a bug in.</p>\n{entries}",
        m.bugs.len()
    )
}

fn unexplained(m: &Merged) -> String {
    if m.unexplained.is_empty() {
        return String::new();
    }
    let rows: Vec<Vec<String>> = m
        .unexplained
        .iter()
        .map(|u| {
            vec![
                code(&u.function),
                code(&fields_text(&u.input)),
                code(&results_text(&u.returned)),
                u.inputs.to_string(),
            ]
        })
        .collect();
    format!(
        "<h2>Non-finite results whose cause no single repair isolates</h2>\n{}",
        table(&["function", "input", "returned", "inputs"], &rows, true)
    )
}

/// The per-function table (sortable) and its bar chart.
fn functions(m: &Merged, info: &RunInfo) -> String {
    let rows: Vec<Vec<String>> = m
        .functions
        .iter()
        .map(|f| {
            vec![
                code(&f.function),
                escape(&findings_text(f, info)),
                f.bugs.to_string(),
                f.crashes.to_string(),
                f.hangs.to_string(),
            ]
        })
        .collect();
    let bars: Vec<(String, Vec<usize>)> = m
        .functions
        .iter()
        .filter_map(|f| Some((f.function.clone(), vec![f.findings?, f.bugs])))
        .collect();
    format!(
        "<h2>Per function</h2>\n<p class=\"muted\">Click a column's header to sort by it.</p>\n{}{}",
        table(&["function", "findings", "bugs", "crashes", "hangs"], &rows, true),
        chart::bars("Findings and bugs per function", &["findings", "bugs"], &bars)
    )
}

pub fn render(m: &Merged, info: &RunInfo) -> String {
    let title = format!("numfuzz run-all of {}", info.harness_dir.display());
    let rest = rest_text(m);
    let mut body = format!(
        "<h1>{}</h1>\n<p><strong>{}.</strong></p>\n",
        escape(&title),
        escape(&headline(m, info))
    );
    body.push_str(&bugs(m));
    body.push_str(&unexplained(m));
    if !rest.is_empty() {
        body.push_str(&paragraphs([format!(
            "The other exceptions: {rest} (each function's report says where)."
        )]));
    }
    body.push_str(&functions(m, info));
    page(&title, &body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_all::merge::{merge, TriageDoc};
    use serde_json::json;
    use std::path::Path;

    /// A report of one function with an overflow bug at `lib<1>.c:10:5` and an absorbed
    /// underflow.
    fn doc() -> TriageDoc {
        let finding = |id: &str, kind: &str, line: u32, class: &str| {
            json!({
                "id": id, "key": format!("{kind} /src/lib<1>.c:{line}:5 fmul"), "kind": kind, "class": class,
                "location": {"path": "/src/lib<1>.c", "line": line, "column": 5, "function": "helper"},
                "operation": {"op": "fmul", "expression": "1e300 * 1e300 = inf"},
                "reference": {"source": "shadow", "value": "2.5", "verdict": "wrong"},
                "input": {"fields": [{"type": "f64", "value": "2.5"}]},
                "results": [{"index": 0, "name": null, "value": "inf"}],
                "root": if class == "bug" { Some(id) } else { None }, "minimized": null,
                "input_count": 2, "first_seen_ms": 10
            })
        };
        serde_json::from_value(json!({
            "schema_version": 4, "signature": "f64", "summary": {"findings": 2, "classes": {}},
            "bugs": ["a"], "unexplained": [],
            "findings": [finding("a", "Overflow", 10, "bug"), finding("b", "Underflow", 20, "absorbed")],
            "crashes": [], "hangs": []
        }))
        .unwrap()
    }

    #[test]
    fn the_page_lists_the_bug_then_a_sortable_table_and_chart_per_function() {
        let d = doc();
        let m = merge([("f", Some(&d)), ("g", None)]);
        let failed = [("g".to_string(), "bin/g is missing".to_string())];
        let info = RunInfo {
            harness_dir: Path::new("/h"),
            seconds: 4,
            failed: &failed,
        };
        let page = render(&m, &info);
        let site = page
            .find("<code>src/lib&lt;1&gt;.c:10:5</code> in <code>helper</code>")
            .expect("the site");
        let rest = page.find("1 absorbed").expect("the rest by class");
        let table = page.find("<table class=\"sortable\">").expect("a sortable table");
        assert!(site < rest && rest < table, "{page}");
        assert!(
            page.contains("<code>f(2.5)</code>") && page.contains("2.5 (wrong, shadow)"),
            "{page}"
        );
        assert!(page.contains("- (bin/g is missing)"), "{page}");
        assert!(
            page.contains("<svg") && page.contains("addEventListener('click'"),
            "{page}"
        );
        assert!(!page.contains("lib<1>"), "{page}");
    }
}
