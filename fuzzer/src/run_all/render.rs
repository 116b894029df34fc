//! The merged report: its document (`report_model::merged`), and that document as Markdown
//! (what the terminal shows), JSON and SARIF; the HTML page is in `html`, from the same
//! entries (`entries`).

use super::entries::{sections, Span};
use super::merge::Merged;
use super::text::{self, findings_text, rest_text, COUNT_NOTE};
use crate::markdown::{table, Md};
use crate::report_model::merged::{Failed, FunctionCounts, MergedDoc, MergedSummary, ShardSource, SCHEMA_VERSION};
use crate::report_model::Tool;
use std::path::Path;

/// What the run was, for the report's head.
pub struct RunInfo<'a> {
    pub harness_dir: &'a Path,
    /// `-V` (0 under a budget).
    pub seconds: u64,
    /// `--budget`.
    pub budget: Option<u64>,
    pub failed: &'a [(String, String)],
    /// The run-all directories the report covers (see `MergedDoc::shards`).
    pub shards: &'a [ShardSource],
}

/// The report as its schema has it.
pub fn document(m: &Merged, info: &RunInfo) -> MergedDoc {
    MergedDoc {
        schema_version: SCHEMA_VERSION,
        tool: Tool::default(),
        harness_dir: info.harness_dir.display().to_string(),
        seconds: info.seconds,
        budget: info.budget,
        shards: info.shards.to_vec(),
        summary: MergedSummary {
            bugs: m.bug_count(),
            crashes: m.crashes.len(),
            hangs: m.hangs.len(),
            root_sites: m.bugs.len(),
            unexplained: m.unexplained.len(),
            findings: m.findings,
            functions: m.functions.len(),
            reported: m.functions.iter().filter(|f| f.findings.is_some()).count(),
        },
        crashes: m.crashes.clone(),
        hangs: m.hangs.clone(),
        bugs: m.bugs.clone(),
        unexplained: m.unexplained.clone(),
        rest: m.rest.clone(),
        functions: m.functions.clone(),
        failed: info
            .failed
            .iter()
            .map(|(function, why)| Failed {
                function: function.clone(),
                why: why.clone(),
            })
            .collect(),
    }
}

/// The one-line summary (the report's head and run-all's last line).
pub fn headline(m: &Merged, info: &RunInfo) -> String {
    text::headline(&document(m, info))
}

fn cell(spans: &[Span]) -> Md {
    Md::join(
        spans.iter().map(|s| match s {
            Span::Text(t) => Md::text(t),
            Span::Code(c) => Md::code(c),
            Span::Break => Md::br(),
        }),
        "",
    )
}

pub fn markdown(m: &Merged, info: &RunInfo) -> String {
    let doc = document(m, info);
    let mut out = format!(
        "# numfuzz run-all of {}\n\n{}{}.\n\n{COUNT_NOTE}\n\n",
        doc.harness_dir,
        text::shards_line(&doc).map(|l| l + "\n\n").unwrap_or_default(),
        text::headline(&doc)
    );
    for s in sections(&doc) {
        let mut titles = vec!["#", "entry"];
        titles.extend(s.entries[0].items.iter().map(|(name, _)| *name));
        let rows: Vec<Vec<Md>> = s
            .entries
            .iter()
            .map(|e| {
                let mut row = vec![Md::text(&e.number.to_string()), cell(&e.title)];
                row.extend(e.items.iter().map(|(_, c)| cell(c)));
                row
            })
            .collect();
        out.push_str(&format!(
            "## {}\n\n{}\n\n{}\n",
            s.heading,
            s.note,
            table(&titles, &rows)
        ));
    }
    let rest = rest_text(&doc);
    if !rest.is_empty() {
        out.push_str(&format!(
            "The other exceptions: {rest} (each function's report says where).\n\n"
        ));
    }
    out.push_str(&markdown_functions(&doc));
    out
}

/// One row per function: how long it was fuzzed, its findings, the bug entries touching it,
/// its crashes and hangs.
fn markdown_functions(doc: &MergedDoc) -> String {
    let rows: Vec<Vec<Md>> = doc
        .functions
        .iter()
        .map(|f| {
            vec![
                Md::text(&f.function),
                Md::text(&seconds_text(f)),
                Md::text(&findings_text(f, &doc.failed)),
                Md::text(&f.bug_entries.to_string()),
                Md::text(&f.crashes.to_string()),
                Md::text(&f.hangs.to_string()),
            ]
        })
        .collect();
    format!("## Per function\n\n{}\n", table(&FUNCTION_COLUMNS, &rows))
}

/// A function's seconds of fuzzing, `-` for a campaign that did not finish.
pub fn seconds_text(f: &FunctionCounts) -> String {
    f.seconds.map_or("-".to_string(), |s| s.to_string())
}

/// The per-function table's columns.
pub const FUNCTION_COLUMNS: [&str; 6] = [
    "function",
    "seconds fuzzed",
    "findings",
    "bug entries touching it",
    "crashes",
    "hangs",
];

pub fn json(m: &Merged, info: &RunInfo) -> String {
    crate::report_model::to_text(&document(m, info))
}

/// One SARIF result per entry of the bug list.
pub fn sarif(m: &Merged) -> String {
    super::sarif::render(m)
}
