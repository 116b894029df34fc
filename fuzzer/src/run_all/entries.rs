//! The merged bug list as sections of numbered entries, built once and drawn by the Markdown
//! table and the HTML page alike: crashes, hangs, exception root sites, then non-finite
//! results of no single cause, numbered on through the sections (the last number is the count
//! of bugs).

use super::text::{fields_text, functions_shown, reference_text, results_text};
use crate::report_model::merged::{MergedBug, MergedCrash, MergedDoc, MergedUnexplained};
use crate::triage::format::{count, elapsed};
use numfuzz_abi::report::Frame;

/// A piece of a cell: plain text, code, or a line break.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Span {
    Text(String),
    Code(String),
    Break,
}

pub type Cell = Vec<Span>;

fn text(t: impl Into<String>) -> Cell {
    vec![Span::Text(t.into())]
}

fn code(t: impl Into<String>) -> Cell {
    vec![Span::Code(t.into())]
}

/// `items` one a line.
fn lines(items: impl IntoIterator<Item = Cell>) -> Cell {
    let mut out = Vec::new();
    for (n, item) in items.into_iter().enumerate() {
        if n > 0 {
            out.push(Span::Break);
        }
        out.extend(item);
    }
    if out.is_empty() {
        out.push(Span::Text("-".into()));
    }
    out
}

pub struct Entry {
    pub number: usize,
    pub title: Cell,
    pub items: Vec<(&'static str, Cell)>,
}

pub struct Section {
    pub heading: String,
    pub note: &'static str,
    pub entries: Vec<Entry>,
}

/// `function (file:line:col)`.
fn frame_text(f: Option<&Frame>) -> String {
    f.map_or_else(|| "an unknown place".into(), Frame::display)
}

fn crash_entry(number: usize, c: &MergedCrash) -> Entry {
    let e = &c.example;
    let what = c.signal.as_deref().unwrap_or("hang");
    let mut title = text(format!("{what} in "));
    title.extend(code(frame_text(c.frame.as_ref())));
    Entry {
        number,
        title,
        items: vec![
            (
                "functions",
                text(format!(
                    "{} ({})",
                    functions_shown(&c.functions),
                    count(c.inputs, "input", "inputs")
                )),
            ),
            ("input", code(format!("{}({})", e.function, fields_text(&e.input)))),
            ("reproduce", code(&e.reproduce)),
            ("top frames", lines(c.stack.iter().map(|f| code(f.display())))),
            ("first seen", text(elapsed(c.first_seen_ms))),
        ],
    }
}

fn bug_entry(number: usize, b: &MergedBug) -> Entry {
    let e = &b.example;
    let mut title = text(format!("{} at ", b.kind));
    title.extend(code(&b.site));
    if let Some(f) = &b.in_function {
        title.push(Span::Text(" in ".into()));
        title.extend(code(f));
    }
    let mut input = code(format!("{}({})", e.function, fields_text(&e.input)));
    if e.minimized {
        input.push(Span::Text(" (minimised)".into()));
    }
    let mut items = vec![
        ("operation", code(&e.expression)),
        (
            "functions",
            text(format!(
                "{} ({})",
                functions_shown(&b.functions),
                count(b.inputs, "input", "inputs")
            )),
        ),
        ("input", input),
        ("returned", code(results_text(&e.returned))),
        ("reference", text(reference_text(e))),
    ];
    if let Some(root) = b.dropped_report.as_ref().or(b.precision_lost.as_ref()) {
        items.push(("root", text(root)));
    }
    items.push(("chain", lines(e.chain.iter().map(text))));
    items.push(("first seen", text(elapsed(b.first_seen_ms))));
    Entry { number, title, items }
}

fn unexplained_entry(number: usize, u: &MergedUnexplained) -> Entry {
    let mut items = vec![
        ("input", code(format!("{}({})", u.function, fields_text(&u.input)))),
        ("returned", code(results_text(&u.returned))),
        ("inputs", text(u.inputs.to_string())),
    ];
    let title = match &u.dropped_report {
        Some(d) => {
            items.insert(1, ("functions", text(functions_shown(&u.functions))));
            items.push(("root", text(d)));
            text(format!("non-finite result of {}, error report dropped", u.function))
        }
        None => text(format!("non-finite result of {}", u.function)),
    };
    Entry { number, title, items }
}

/// The sections with entries, numbered on from 1.
pub fn sections(doc: &MergedDoc) -> Vec<Section> {
    let mut next = 1;
    let mut numbered = |n: usize| {
        let first = next;
        next += n;
        first..next
    };
    let crashes: Vec<Entry> = numbered(doc.crashes.len())
        .zip(&doc.crashes)
        .map(|(n, c)| crash_entry(n, c))
        .collect();
    let hangs: Vec<Entry> = numbered(doc.hangs.len())
        .zip(&doc.hangs)
        .map(|(n, c)| crash_entry(n, c))
        .collect();
    let bugs: Vec<Entry> = numbered(doc.bugs.len())
        .zip(&doc.bugs)
        .map(|(n, b)| bug_entry(n, b))
        .collect();
    let unexplained: Vec<Entry> = numbered(doc.unexplained.len())
        .zip(&doc.unexplained)
        .map(|(n, u)| unexplained_entry(n, u))
        .collect();
    let all = [
        (
            "Crashes",
            "Real crashes, one per signal and top frame; the most ordinary input over the functions it happens in.",
            crashes,
        ),
        (
            "Hangs",
            "Inputs that ran past the time limit, one per place they were stopped.",
            hangs,
        ),
        (
            "Exception bugs",
            "One per root site; the most ordinary input over the functions it is a bug in.",
            bugs,
        ),
        (
            "Non-finite results whose cause no single repair isolates",
            "Per function.",
            unexplained,
        ),
    ];
    all.into_iter()
        .filter(|(_, _, entries)| !entries.is_empty())
        .map(|(heading, note, entries): (&str, &'static str, Vec<Entry>)| Section {
            heading: format!("{heading} ({})", entries.len()),
            note,
            entries,
        })
        .collect()
}
