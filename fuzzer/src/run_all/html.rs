//! The merged report as one self-contained HTML page: the headline and what it counts, the
//! bug list (crashes, hangs, exception root sites, non-finite results of no single cause: the
//! entries `entries` builds for the Markdown too), the rest by class, a table per function
//! that sorts by the clicked column, and a bar chart of findings and bug entries per function.

use super::entries::{sections, Span};
use super::merge::Merged;
use super::render::{document, seconds_text, RunInfo, FUNCTION_COLUMNS};
use super::text::{findings_text, headline, rest_text, shards_line, COUNT_NOTE};
use crate::html::{chart, code, entry, heading, page, paragraphs, table, Html};
use crate::report_model::merged::MergedDoc;

fn cell(spans: &[Span]) -> Html {
    spans
        .iter()
        .map(|s| match s {
            Span::Text(t) => Html::text(t),
            Span::Code(c) => code(c),
            Span::Break => Html::br(),
        })
        .collect()
}

/// Every section of the bug list, an entry box each.
fn bug_list(doc: &MergedDoc) -> Html {
    let all = sections(doc);
    if all.is_empty() {
        return heading(2, "No bugs");
    }
    all.iter()
        .map(|s| {
            let entries: Html = s
                .entries
                .iter()
                .map(|e| {
                    let mut title = Html::text(&format!("{}. ", e.number));
                    title.push(cell(&e.title));
                    entry(title, e.items.iter().map(|(name, c)| (*name, cell(c))).collect())
                })
                .collect();
            Html::concat([
                heading(2, s.heading.as_str()),
                paragraphs([s.note.to_string()]),
                entries,
            ])
        })
        .collect()
}

/// The per-function table (sortable) and its bar chart.
fn functions(doc: &MergedDoc) -> Html {
    let rows: Vec<Vec<Html>> = doc
        .functions
        .iter()
        .map(|f| {
            vec![
                code(&f.function),
                Html::text(&seconds_text(f)),
                Html::text(&findings_text(f, &doc.failed)),
                Html::text(&f.bug_entries.to_string()),
                Html::text(&f.crashes.to_string()),
                Html::text(&f.hangs.to_string()),
            ]
        })
        .collect();
    let bars: Vec<(String, Vec<usize>)> = doc
        .functions
        .iter()
        .filter_map(|f| Some((f.function.clone(), vec![f.findings?, f.bug_entries])))
        .collect();
    Html::concat([
        heading(2, "Per function"),
        Html::with_class("p", "muted", "Click a column's header to sort by it.").line(),
        table(&FUNCTION_COLUMNS, &rows, true),
        chart::bars(
            "Findings and bug entries per function",
            &["findings", "bug entries"],
            &bars,
        ),
    ])
}

pub fn render(m: &Merged, info: &RunInfo) -> String {
    let doc = document(m, info);
    let title = format!("numfuzz run-all of {}", doc.harness_dir);
    let mut body = Html::concat([
        heading(1, title.as_str()),
        paragraphs(shards_line(&doc)),
        Html::element("p", Html::element("strong", format!("{}.", headline(&doc)))).line(),
        paragraphs([COUNT_NOTE.to_string()]),
        bug_list(&doc),
    ]);
    let rest = rest_text(&doc);
    if !rest.is_empty() {
        body.push(paragraphs([format!(
            "The other exceptions: {rest} (each function's report says where)."
        )]));
    }
    body.push(functions(&doc));
    page(&title, body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_all::fixtures::{crash, doc, finding, reports};
    use crate::run_all::merge::merge;
    use std::path::Path;

    /// A report of one function with an overflow bug at `lib<1>.c:10:5`, an absorbed
    /// underflow and a crash.
    fn report() -> crate::report_model::triage::TriageDoc {
        let mut bug = finding("a", "Overflow", 10, "bug", "2.5", Some("a"));
        let mut absorbed = finding("b", "Underflow", 20, "absorbed", "2.5", None);
        for f in [&mut bug, &mut absorbed] {
            f.location.path = "/src/lib<1>.c".into();
            f.key = f.key.replace("/src/lib/exp.c", "/src/lib<1>.c");
        }
        let mut d = doc(vec![bug, absorbed], &["a"]);
        d.crashes = vec![crash("SIGSEGV", "poke<T>", 7, "1")];
        d
    }

    #[test]
    fn the_page_lists_crashes_then_bugs_then_a_sortable_table_and_chart_per_function() {
        let d = report();
        let m = merge(reports(&[("f", Some(&d)), ("g", None)]).iter().map(|r| r.get()));
        let failed = [("g".to_string(), "bin/g is missing".to_string())];
        let info = RunInfo {
            harness_dir: Path::new("/h"),
            seconds: 4,
            budget: None,
            failed: &failed,
            shards: &[],
        };
        let page = render(&m, &info);
        let crash = page
            .find("1. SIGSEGV in <code>poke&lt;T&gt; (/src/lib.c:7:3)</code>")
            .expect("the crash");
        let site = page
            .find("2. Overflow at <code>src/lib&lt;1&gt;.c:10:5</code> in <code>helper</code>")
            .expect("the site");
        let rest = page.find("1 absorbed").expect("the rest by class");
        let table = page.find("<table class=\"sortable\">").expect("a sortable table");
        assert!(crash < site && site < rest && rest < table, "{page}");
        assert!(page.contains("<strong>2 bugs over 2 functions"), "{page}");
        assert!(
            page.contains("<code>f(2.5)</code>") && page.contains("2.5 (wrong, shadow)"),
            "{page}"
        );
        assert!(page.contains("f (1 input)") && page.contains("f (2 inputs)"), "{page}");
        assert!(page.contains("- (bin/g is missing)"), "{page}");
        assert!(
            page.contains("<svg") && page.contains("addEventListener('click'"),
            "{page}"
        );
        assert!(!page.contains("lib<1>") && !page.contains("poke<T>"), "{page}");
    }
}
