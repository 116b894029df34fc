//! One report over many functions, from each function's `numfuzz triage --format json`.
//!
//! A finding is a (site, kind), named by its `key` (kind, source path, line, column,
//! operation): a helper reached from twenty functions counts once. The bug list has one entry
//! per root site that is a bug in some function's report, with the functions it is a bug in
//! and, over all of them, the most ordinary input; non-finite results whose cause no single
//! repair isolates follow, per function. Everything else is counted by class.

use crate::triage::ordinary::{self, Ordinariness};
use crate::triage::report;
use numfuzz_abi::signature::Signature;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The parts of a triage JSON document (schema 4) the merge reads.
#[derive(Clone, Debug, Deserialize)]
pub struct TriageDoc {
    pub schema_version: u32,
    #[serde(default)]
    pub signature: Option<String>,
    pub summary: Summary,
    #[serde(default)]
    pub bugs: Vec<String>,
    #[serde(default)]
    pub unexplained: Vec<Unexplained>,
    pub findings: Vec<FindingDoc>,
    #[serde(default)]
    pub crashes: Vec<serde_json::Value>,
    #[serde(default)]
    pub hangs: Vec<serde_json::Value>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Summary {
    pub findings: usize,
    #[serde(default)]
    pub classes: BTreeMap<String, usize>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Field {
    #[serde(rename = "type")]
    pub ty: String,
    pub value: String,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct ResultDoc {
    /// The primary results' index (`None`: a named result).
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(default)]
    pub name: Option<String>,
    pub value: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct InputDoc {
    pub fields: Vec<Field>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Location {
    pub path: String,
    pub line: u32,
    pub column: u32,
    #[serde(default)]
    pub function: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Operation {
    pub op: String,
    pub expression: String,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct ReferenceDoc {
    pub source: String,
    pub value: String,
    pub verdict: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Minimized {
    pub fields: Vec<Field>,
    pub expression: String,
    pub results: Vec<ResultDoc>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct FindingDoc {
    pub id: String,
    pub key: String,
    pub kind: String,
    pub class: String,
    pub location: Location,
    pub operation: Operation,
    #[serde(default)]
    pub reference: Option<ReferenceDoc>,
    pub input: InputDoc,
    pub results: Vec<ResultDoc>,
    #[serde(default)]
    pub root: Option<String>,
    #[serde(default)]
    pub minimized: Option<Minimized>,
    pub input_count: usize,
    #[serde(default)]
    pub first_seen_ms: Option<u64>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Unexplained {
    pub input: InputDoc,
    pub results: Vec<ResultDoc>,
    pub input_count: usize,
}

/// A bug's shown example: the most ordinary over the functions it is a bug in.
#[derive(Clone, Debug, Serialize)]
pub struct Example {
    pub function: String,
    pub input: Vec<Field>,
    pub minimized: bool,
    pub expression: String,
    pub returned: Vec<ResultDoc>,
    pub reference: Option<ReferenceDoc>,
    /// The findings listed under it as chained, `Kind at file:line:col`.
    pub chain: Vec<String>,
    #[serde(skip)]
    order: Ordinariness,
}

/// One root site that is a bug in at least one function.
#[derive(Clone, Debug, Serialize)]
pub struct MergedBug {
    pub key: String,
    pub kind: String,
    pub site: String,
    pub path: String,
    pub line: u32,
    pub column: u32,
    pub op: String,
    /// The C function the site is in.
    pub in_function: Option<String>,
    /// The harnessed functions whose report has it as a bug.
    pub functions: Vec<String>,
    /// Inputs behind it, over those functions.
    pub inputs: usize,
    pub first_seen_ms: Option<u64>,
    pub example: Example,
}

/// A non-finite result of one function whose cause no single repair isolates.
#[derive(Clone, Debug, Serialize)]
pub struct MergedUnexplained {
    pub function: String,
    pub input: Vec<Field>,
    pub returned: Vec<ResultDoc>,
    pub inputs: usize,
}

/// One function's line of the merged report.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FunctionCounts {
    pub function: String,
    /// `None`: no triage report (the campaign or its triage failed; see its log).
    pub findings: Option<usize>,
    pub bugs: usize,
    pub crashes: usize,
    pub hangs: usize,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Merged {
    pub bugs: Vec<MergedBug>,
    pub unexplained: Vec<MergedUnexplained>,
    /// Distinct (site, kind) findings over every function.
    pub findings: usize,
    /// The distinct findings that are no bug anywhere, by the class they have in the first
    /// function that reports them (`chained`, `absorbed`, ...).
    pub rest: BTreeMap<String, usize>,
    pub functions: Vec<FunctionCounts>,
}

/// `path:line:col` with the path shortened to its last two components.
pub fn site(l: &Location) -> String {
    let parts: Vec<&str> = l.path.rsplit('/').take(2).collect();
    let short: Vec<&str> = parts.into_iter().rev().collect();
    format!("{}:{}:{}", short.join("/"), l.line, l.column)
}

/// How ordinary a list of decoded fields is (unparsable fields count as edge values).
fn order_of(fields: &[Field]) -> Ordinariness {
    let types: Vec<&str> = fields.iter().map(|f| f.ty.as_str()).collect();
    let encoded = Signature::parse(&types.join(",")).ok().and_then(|sig| {
        let values: Vec<&str> = fields.iter().map(|f| f.value.as_str()).collect();
        sig.encode_text(&values).ok().map(|bytes| (sig, bytes))
    });
    match encoded {
        Some((sig, bytes)) => ordinary::of(Some(&sig), &bytes),
        None => Ordinariness {
            edge: true,
            magnitude: f64::INFINITY,
        },
    }
}

fn example_of(function: &str, f: &FindingDoc, doc: &TriageDoc) -> Example {
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
        order: order_of(&input),
        input,
        minimized,
        expression,
        returned,
        reference: f.reference.clone(),
        chain,
    }
}

impl Merged {
    /// Adds one function's report (`None`: it has none).
    pub fn add(&mut self, function: &str, doc: Option<&TriageDoc>, seen: &mut BTreeMap<String, String>) {
        let Some(doc) = doc else {
            self.functions.push(FunctionCounts {
                function: function.to_string(),
                ..FunctionCounts::default()
            });
            return;
        };
        for f in &doc.findings {
            seen.entry(f.key.clone()).or_insert_with(|| f.class.clone());
            if !doc.bugs.contains(&f.id) {
                continue;
            }
            let example = example_of(function, f, doc);
            match self.bugs.iter_mut().find(|b| b.key == f.key) {
                Some(b) => {
                    b.functions.push(function.to_string());
                    b.inputs += f.input_count;
                    b.first_seen_ms = match (b.first_seen_ms, f.first_seen_ms) {
                        (Some(a), Some(c)) => Some(a.min(c)),
                        (a, c) => a.or(c),
                    };
                    if example.order < b.example.order {
                        b.example = example;
                    }
                }
                None => self.bugs.push(MergedBug {
                    key: f.key.clone(),
                    kind: f.kind.clone(),
                    site: site(&f.location),
                    path: f.location.path.clone(),
                    line: f.location.line,
                    column: f.location.column,
                    op: f.operation.op.clone(),
                    in_function: f.location.function.clone(),
                    functions: vec![function.to_string()],
                    inputs: f.input_count,
                    first_seen_ms: f.first_seen_ms,
                    example,
                }),
            }
        }
        self.unexplained
            .extend(doc.unexplained.iter().map(|u| MergedUnexplained {
                function: function.to_string(),
                input: u.input.fields.clone(),
                returned: u.results.clone(),
                inputs: u.input_count,
            }));
        self.functions.push(FunctionCounts {
            function: function.to_string(),
            findings: Some(doc.summary.findings),
            bugs: doc.bugs.len() + doc.unexplained.len(),
            crashes: doc.crashes.len(),
            hangs: doc.hangs.len(),
        });
    }

    /// Ends the merge: counts the findings that are no bug anywhere and orders the bug list
    /// (most ordinary example first, then finite wrong results before NaN before Inf).
    pub fn finish(mut self, seen: BTreeMap<String, String>) -> Merged {
        self.findings = seen.len();
        for (key, class) in seen {
            if !self.bugs.iter().any(|b| b.key == key) {
                *self.rest.entry(class).or_default() += 1;
            }
        }
        self.bugs.sort_by(|a, b| {
            a.example
                .order
                .cmp(&b.example.order)
                .then(returned_rank(&a.example.returned).cmp(&returned_rank(&b.example.returned)))
                .then(a.site.cmp(&b.site))
        });
        self
    }
}

/// The worst of the primary results, as triage orders its own bug list.
fn returned_rank(results: &[ResultDoc]) -> u8 {
    results
        .iter()
        .filter(|r| r.index.is_some())
        .map(|r| report::value_rank(&r.value))
        .max()
        .unwrap_or(0)
}

/// Merges the reports of `functions` (`None`: that function has no report).
pub fn merge<'a>(reports: impl IntoIterator<Item = (&'a str, Option<&'a TriageDoc>)>) -> Merged {
    let mut merged = Merged::default();
    let mut seen = BTreeMap::new();
    for (function, doc) in reports {
        merged.add(function, doc, &mut seen);
    }
    merged.finish(seen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn finding(id: &str, line: u32, class: &str, x: &str, root: Option<&str>) -> serde_json::Value {
        json!({
            "id": id, "key": format!("Overflow /src/lib/exp.c:{line}:5 fmul"), "kind": "Overflow", "class": class,
            "location": {"path": "/src/lib/exp.c", "line": line, "column": 5, "function": "helper"},
            "operation": {"op": "fmul", "expression": "1e300 * 1e300 = inf"},
            "reference": null, "input": {"fields": [{"type": "f64", "value": x}]},
            "results": [{"index": 0, "name": null, "value": "inf"}],
            "root": root, "minimized": null, "input_count": 2, "first_seen_ms": 10
        })
    }

    fn doc(findings: Vec<serde_json::Value>, bugs: &[&str]) -> TriageDoc {
        serde_json::from_value(json!({
            "schema_version": 4, "signature": "f64",
            "summary": {"findings": findings.len(), "classes": {}},
            "bugs": bugs, "unexplained": [], "findings": findings, "crashes": [], "hangs": []
        }))
        .unwrap()
    }

    #[test]
    fn a_site_that_is_a_bug_in_two_functions_is_one_entry_with_the_most_ordinary_input() {
        let f = doc(
            vec![
                finding("a", 10, "bug", "710", Some("a")),
                finding("b", 20, "chained", "710", Some("a")),
            ],
            &["a"],
        );
        let g = doc(
            vec![
                finding("a", 10, "bug", "1e300", Some("a")),
                finding("c", 30, "absorbed", "2", None),
            ],
            &["a"],
        );
        let m = merge([("f", Some(&f)), ("g", Some(&g)), ("h", None)]);
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
            .map(|c| (c.function.as_str(), c.findings, c.bugs))
            .collect();
        assert_eq!(counts, [("f", Some(2), 1), ("g", Some(2), 1), ("h", None, 0)]);
    }
}
