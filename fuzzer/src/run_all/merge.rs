//! One report over many functions, from each function's `numfuzz triage --format json`.
//!
//! Its bug list (see `report_model::merged` for what "bugs" counts): real crashes and hangs
//! first, merged by stack (`crashes`); then one entry per root site that is a bug in some
//! function's report, a finding being a (site, kind) named by its `key` (kind, source path,
//! line, column, operation), so a helper reached from twenty functions counts once, with the
//! functions it is a bug in and, over all of them, the most ordinary input; then the
//! non-finite results whose cause no single repair isolates, per function. Everything else is
//! counted by class.

use super::crashes::{crash_key, earliest, hang_key, Groups, Origin};
use super::order::order_of;
use crate::report_model::merged::{Example, FunctionCounts, MergedBug, MergedCrash, MergedUnexplained};
use crate::report_model::triage::{DroppedReport, Finding, Location, TriageDoc, Unexplained};
use crate::triage::report;
use numfuzz_abi::report::ResultReport;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One function's triage report (`None`: it has none), and where its inputs are.
pub struct FunctionReport<'a> {
    pub function: &'a str,
    pub doc: Option<&'a TriageDoc>,
    pub binary: &'a Path,
    /// The campaign directory its report's input paths are relative to.
    pub campaign: &'a Path,
    /// Seconds its campaign was fuzzed (`None`: it did not finish).
    pub seconds: Option<u64>,
}

#[derive(Clone, Debug, Default)]
pub struct Merged {
    pub crashes: Vec<MergedCrash>,
    pub hangs: Vec<MergedCrash>,
    pub bugs: Vec<MergedBug>,
    pub unexplained: Vec<MergedUnexplained>,
    /// Distinct (site, kind) findings over every function.
    pub findings: usize,
    /// The distinct findings that are no bug anywhere, by the class they have in the first
    /// function that reports them (`chained`, `absorbed`, ...).
    pub rest: BTreeMap<String, usize>,
    pub functions: Vec<FunctionCounts>,
}

impl Merged {
    /// Entries of the bug list: crashes, hangs, root sites and unexplained results.
    pub fn bug_count(&self) -> usize {
        self.crashes.len() + self.hangs.len() + self.bugs.len() + self.unexplained.len()
    }
}

/// The entries of the merged bug list that one function's report touches, by name: merged
/// reports count their bugs as the distinct names over every function (the progress line
/// too), so every count agrees.
pub fn entry_keys(function: &str, doc: &TriageDoc) -> BTreeSet<String> {
    let crashes = doc.crashes.iter().map(crash_key);
    let hangs = doc.hangs.iter().map(hang_key);
    let roots = doc.bug_findings().map(bug_key);
    let unexplained = doc
        .unexplained
        .iter()
        .enumerate()
        .map(|(n, u)| unexplained_key(function, n, u));
    crashes.chain(hangs).chain(roots).chain(unexplained).collect()
}

/// A bug entry's name: the dropped report or the origin of lost precision it is rooted at (one
/// defect, whatever the site in each function), else its finding's key.
fn bug_key(f: &Finding) -> String {
    match (f.root_by.as_deref(), &f.dropped_report, &f.precision_lost) {
        (Some("report"), Some(d), _) => report_key(d),
        (Some("precision"), _, Some(p)) => format!("precision lost at {}:{}:{} ({})", p.path, p.line, p.column, p.op),
        _ => f.key.clone(),
    }
}

/// `report FILE:LINE dropped at FILE:LINE`.
fn report_key(d: &DroppedReport) -> String {
    let at = d.dropped_at.as_ref().map_or(String::new(), |a| {
        let file = a
            .file
            .as_deref()
            .map(crate::triage::consequences::root::file_name)
            .unwrap_or_default();
        format!("{file}:{}", a.line.unwrap_or(0))
    });
    format!("report {}:{} dropped at {at}", d.file, d.line)
}

/// An unexplained entry's name: its dropped report, which functions share, else its place in
/// its function's report.
fn unexplained_key(function: &str, n: usize, u: &Unexplained) -> String {
    match &u.dropped_report {
        Some(d) => report_key(d),
        None => format!("non-finite result {n} of {function}"),
    }
}

/// `path:line:col` with the path shortened to its last two components.
pub fn site(l: &Location) -> String {
    let parts: Vec<&str> = l.path.rsplit('/').take(2).collect();
    let short: Vec<&str> = parts.into_iter().rev().collect();
    format!("{}:{}:{}", short.join("/"), l.line, l.column)
}

fn example_of(function: &str, f: &Finding, doc: &TriageDoc) -> Example {
    let (input, expression, returned, minimized) = match &f.minimized {
        Some(m) => (m.fields.clone(), m.expression.clone(), m.results.clone(), true),
        None => (
            f.input.fields.clone(),
            f.operation.expression.clone(),
            f.results.clone(),
            false,
        ),
    };
    let chain = doc
        .findings
        .iter()
        .filter(|c| c.root.as_deref() == Some(f.id.as_str()) && c.id != f.id)
        .map(|c| format!("{} at {}", c.kind, site(&c.location)))
        .collect();
    Example {
        function: function.to_string(),
        input,
        minimized,
        expression,
        returned,
        reference: f.reference.clone(),
        chain,
    }
}

fn new_bug(function: &str, f: &Finding, example: Example) -> MergedBug {
    MergedBug {
        key: bug_key(f),
        kind: f.kind.clone(),
        site: site(&f.location),
        path: f.location.path.clone(),
        line: f.location.line,
        column: f.location.column,
        op: f.operation.op.clone(),
        in_function: Some(f.location.function.clone()).filter(|s| !s.is_empty()),
        functions: vec![function.to_string()],
        inputs: f.input_count,
        first_seen_ms: f.first_seen_ms,
        example,
        dropped_report: f.dropped_report.as_ref().map(|d| d.text.clone()),
        precision_lost: f.precision_lost.as_ref().map(|p| p.text.clone()),
    }
}

/// The merge in progress.
#[derive(Default)]
struct Merging {
    merged: Merged,
    crashes: Groups,
    hangs: Groups,
    /// Every finding's key, with its class in the first report that has it.
    seen: BTreeMap<String, String>,
    /// The unexplained entries by name (see `unexplained_key`).
    unexplained: Vec<(String, MergedUnexplained)>,
    /// The keys of the findings that are a bug in some function.
    bug_findings: BTreeSet<String>,
}

impl Merging {
    fn add_bug(&mut self, function: &str, f: &Finding, doc: &TriageDoc) {
        self.bug_findings.insert(f.key.clone());
        let example = example_of(function, f, doc);
        let key = bug_key(f);
        match self.merged.bugs.iter_mut().find(|b| b.key == key) {
            Some(b) => {
                // Two bugs of one function share a key when one dropped report or one origin
                // roots both (with two verdicts, triage keeps them apart).
                if !b.functions.iter().any(|g| g == function) {
                    b.functions.push(function.to_string());
                }
                b.inputs += f.input_count;
                b.first_seen_ms = earliest(b.first_seen_ms, f.first_seen_ms);
                if order_of(&example.input) < order_of(&b.example.input) {
                    b.example = example;
                }
            }
            None => self.merged.bugs.push(new_bug(function, f, example)),
        }
    }

    /// One more unexplained result: an entry of its own, or one more function of the entry of
    /// its dropped report.
    fn add_unexplained(&mut self, function: &str, n: usize, u: &Unexplained) {
        let key = unexplained_key(function, n, u);
        match self.unexplained.iter_mut().find(|(k, _)| *k == key) {
            Some((_, m)) => {
                if !m.functions.iter().any(|f| f == function) {
                    m.functions.push(function.to_string());
                }
                m.inputs += u.input_count;
            }
            None => self.unexplained.push((
                key,
                MergedUnexplained {
                    function: function.to_string(),
                    input: u.input.fields.clone(),
                    returned: u.results.clone(),
                    inputs: u.input_count,
                    dropped_report: u.dropped_report.as_ref().map(|d| d.text.clone()),
                    functions: vec![function.to_string()],
                },
            )),
        }
    }

    /// Adds one function's report.
    fn add(&mut self, r: &FunctionReport) {
        let Some(doc) = r.doc else {
            self.merged.functions.push(FunctionCounts {
                function: r.function.to_string(),
                seconds: r.seconds,
                ..FunctionCounts::default()
            });
            return;
        };
        let origin = Origin {
            function: r.function,
            binary: r.binary,
            campaign: r.campaign,
        };
        for c in &doc.crashes {
            self.crashes.add(c.into(), &origin);
        }
        for h in &doc.hangs {
            self.hangs.add(h.into(), &origin);
        }
        for f in &doc.findings {
            self.seen.entry(f.key.clone()).or_insert_with(|| f.class.clone());
        }
        for f in doc.bug_findings() {
            self.add_bug(r.function, f, doc);
        }
        for (n, u) in doc.unexplained.iter().enumerate() {
            self.add_unexplained(r.function, n, u);
        }
        self.merged.functions.push(FunctionCounts {
            function: r.function.to_string(),
            seconds: r.seconds,
            findings: Some(doc.summary.findings),
            bug_entries: entry_keys(r.function, doc).len(),
            crashes: doc.crashes.len(),
            hangs: doc.hangs.len(),
        });
    }

    /// Ends the merge: counts the findings that are no bug anywhere and orders the bug list
    /// (most ordinary example first, then finite wrong results before NaN before Inf).
    fn finish(self) -> Merged {
        let mut m = self.merged;
        m.crashes = self.crashes.list;
        m.hangs = self.hangs.list;
        m.findings = self.seen.len();
        m.unexplained = self.unexplained.into_iter().map(|(_, u)| u).collect();
        for (key, class) in self.seen {
            if !self.bug_findings.contains(&key) {
                *m.rest.entry(class).or_default() += 1;
            }
        }
        m.bugs.sort_by(|a, b| {
            order_of(&a.example.input)
                .cmp(&order_of(&b.example.input))
                .then(returned_rank(&a.example.returned).cmp(&returned_rank(&b.example.returned)))
                .then(a.site.cmp(&b.site))
        });
        m
    }
}

/// The worst of the primary results, as triage orders its own bug list.
fn returned_rank(results: &[ResultReport]) -> u8 {
    results
        .iter()
        .filter(|r| r.index.is_some())
        .map(|r| report::value_rank(&r.value))
        .max()
        .unwrap_or(0)
}

/// Merges the reports of every function, in order.
pub fn merge<'a>(reports: impl IntoIterator<Item = FunctionReport<'a>>) -> Merged {
    let mut merging = Merging::default();
    for r in reports {
        merging.add(&r);
    }
    merging.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_all::fixtures::{crash, doc, finding, hang, reports};

    #[test]
    fn a_site_that_is_a_bug_in_two_functions_is_one_entry_with_the_most_ordinary_input() {
        let f = doc(
            vec![
                finding("a", "Overflow", 10, "bug", "710", Some("a")),
                finding("b", "Overflow", 20, "chained", "710", Some("a")),
            ],
            &["a"],
        );
        let g = doc(
            vec![
                finding("a", "Overflow", 10, "bug", "1e300", Some("a")),
                finding("c", "Overflow", 30, "absorbed", "2", None),
            ],
            &["a"],
        );
        let m = merge(
            reports(&[("f", Some(&f)), ("g", Some(&g)), ("h", None)])
                .iter()
                .map(|r| r.get()),
        );
        assert_eq!(m.bugs.len(), 1);
        let b = &m.bugs[0];
        assert_eq!(
            (b.site.as_str(), b.functions.clone(), b.inputs),
            ("lib/exp.c:10:5", vec!["f".to_string(), "g".into()], 4)
        );
        assert_eq!(
            (b.example.function.as_str(), b.example.input[0].value.as_str()),
            ("f", "710")
        );
        assert_eq!(b.example.chain, ["Overflow at lib/exp.c:20:5"]);
        assert_eq!(m.findings, 3);
        assert_eq!(
            m.rest,
            BTreeMap::from([("absorbed".to_string(), 1), ("chained".to_string(), 1)])
        );
        let counts: Vec<_> = m
            .functions
            .iter()
            .map(|c| (c.function.as_str(), c.findings, c.bug_entries))
            .collect();
        assert_eq!(counts, [("f", Some(2), 1), ("g", Some(2), 1), ("h", None, 0)]);
    }

    #[test]
    fn one_report_dropped_at_one_call_is_one_entry_whatever_the_sites() {
        let dropped = |at: u32| DroppedReport {
            file: "gamma.c".into(),
            line: 1489,
            code: 16,
            dropped_at: Some(numfuzz_abi::report::Frame {
                function: "hermite".into(),
                file: Some("/src/hermite.c".into()),
                line: Some(at),
                column: Some(3),
            }),
            text: format!("error reported at gamma.c:1489, dropped at hermite.c:{at}"),
            ..DroppedReport::default()
        };
        let rooted = |id: &str, line: u32, at: u32| {
            let mut f = finding(id, "Overflow", line, "bug", "710", Some(id));
            f.root_by = Some("report".into());
            f.dropped_report = Some(dropped(at));
            f
        };
        let mut f = doc(vec![rooted("a", 10, 323)], &["a"]);
        let mut g = doc(vec![rooted("b", 20, 323)], &["b"]);
        // A result whose cause was not isolated, dropping another report at one call in each.
        for d in [&mut f, &mut g] {
            d.unexplained.push(crate::report_model::triage::Unexplained {
                input_count: 2,
                dropped_report: Some(DroppedReport {
                    file: "exp.c".into(),
                    ..dropped(323)
                }),
                ..Default::default()
            });
        }
        let h = doc(vec![rooted("c", 30, 400)], &["c"]);
        let m = merge(
            reports(&[("f", Some(&f)), ("g", Some(&g)), ("h", Some(&h))])
                .iter()
                .map(|r| r.get()),
        );
        assert_eq!(m.bugs.len(), 2, "{:#?}", m.bugs);
        assert_eq!(m.bugs[0].functions, ["f", "g"]);
        assert_eq!(m.bugs[0].key, "report gamma.c:1489 dropped at hermite.c:323");
        assert_eq!(
            m.bugs[0].dropped_report.as_deref(),
            Some("error reported at gamma.c:1489, dropped at hermite.c:323")
        );
        assert_eq!(entry_keys("f", &f), entry_keys("g", &g));
        assert_eq!(m.unexplained.len(), 1, "{:#?}", m.unexplained);
        assert_eq!(
            (m.unexplained[0].functions.clone(), m.unexplained[0].inputs),
            (vec!["f".into(), "g".into()], 4)
        );
        assert_eq!(m.bug_count(), 3);
    }

    #[test]
    fn one_origin_of_lost_precision_is_one_entry_whatever_the_sites() {
        let rooted = |id: &str, line: u32, origin_line: u32| {
            let mut f = finding(id, "Overflow", line, "bug", "1e40", Some(id));
            f.root_by = Some("precision".into());
            f.precision_lost = Some(crate::report_model::triage::PrecisionLost {
                path: "specfunc/trig.c".into(),
                line: origin_line,
                column: 29,
                op: "fsub".into(),
                correct_bits: 0,
                bits: 53,
                text: format!("precision lost at trig.c:{origin_line}:29 (fsub): 0 of 53 bits correct"),
            });
            f
        };
        let cos = doc(vec![rooted("a", 281, 275)], &["a"]);
        let sin = doc(vec![rooted("b", 290, 275), rooted("c", 300, 276)], &["b", "c"]);
        let m = merge(
            reports(&[("cos", Some(&cos)), ("sin", Some(&sin))])
                .iter()
                .map(|r| r.get()),
        );
        assert_eq!(m.bugs.len(), 2, "{:#?}", m.bugs);
        assert_eq!(m.bugs[0].key, "precision lost at specfunc/trig.c:275:29 (fsub)");
        assert_eq!(m.bugs[0].functions, ["cos", "sin"]);
        assert_eq!(
            m.bugs[0].precision_lost.as_deref(),
            Some("precision lost at trig.c:275:29 (fsub): 0 of 53 bits correct")
        );
    }

    #[test]
    fn crashes_and_hangs_are_entries_merged_by_stack_and_counted_once() {
        let mut f = doc(vec![finding("a", "Overflow", 10, "bug", "710", Some("a"))], &["a"]);
        f.crashes = vec![crash("SIGSEGV", "poke", 7, "1e300")];
        f.hangs = vec![hang("spin", 9, 11, "2"), hang("spin", 9, 38, "3")];
        let mut g = doc(Vec::new(), &[]);
        g.crashes = vec![crash("SIGSEGV", "poke", 7, "0.5"), crash("SIGABRT", "poke", 7, "1")];
        let m = merge(reports(&[("f", Some(&f)), ("g", Some(&g))]).iter().map(|r| r.get()));
        let signals: Vec<_> = m.crashes.iter().map(|c| c.signal.as_deref()).collect();
        assert_eq!(signals, [Some("SIGSEGV"), Some("SIGABRT")]);
        let segv = &m.crashes[0];
        assert_eq!(
            (segv.functions.clone(), segv.inputs),
            (vec!["f".to_string(), "g".into()], 2)
        );
        assert_eq!(segv.example.function, "g", "0.5 is more ordinary than 1e300");
        assert_eq!(
            segv.example.reproduce,
            "numfuzz replay /h/bin/g /o/campaigns/g/default/crashes/id:000001"
        );
        assert_eq!(m.hangs.len(), 1, "two columns of one line are one place: {:?}", m.hangs);
        assert_eq!(m.hangs[0].inputs, 2);
        assert_eq!(m.bug_count(), 2 + 1 + 1);
        let union: BTreeSet<String> = entry_keys("f", &f).into_iter().chain(entry_keys("g", &g)).collect();
        assert_eq!(
            union.len(),
            m.bug_count(),
            "the progress line counts what the report lists"
        );
        let entries: Vec<usize> = m.functions.iter().map(|c| c.bug_entries).collect();
        assert_eq!(entries, [3, 2]);
    }
}
