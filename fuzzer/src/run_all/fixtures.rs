//! Triage reports made by hand for the merged report's unit tests.

use super::merge::FunctionReport;
use crate::report_model::triage::{Crash, Field, Finding, Hang, Input, Location, Operation, Reference, TriageDoc};
use numfuzz_abi::report::{Frame, ResultReport};
use std::path::PathBuf;

fn fields(x: &str) -> Vec<Field> {
    vec![Field {
        ty: "f64".into(),
        value: x.into(),
        hex: String::new(),
    }]
}

pub fn result(value: &str) -> ResultReport {
    serde_json::from_value(serde_json::json!({"index": 0, "name": null, "type": "f64", "value": value, "hex": ""}))
        .expect("a result")
}

/// A finding of `kind` at `/src/lib/exp.c:LINE:5` in `helper`, shown with input `x`.
pub fn finding(id: &str, kind: &str, line: u32, class: &str, x: &str, root: Option<&str>) -> Finding {
    Finding {
        id: id.into(),
        key: format!("{kind} /src/lib/exp.c:{line}:5 fmul"),
        kind: kind.into(),
        class: class.into(),
        root: root.map(str::to_string),
        location: Location {
            path: "/src/lib/exp.c".into(),
            line,
            column: 5,
            function: "helper".into(),
            ..Location::default()
        },
        operation: Operation {
            op: "fmul".into(),
            expression: "1e300 * 1e300 = inf".into(),
            ..Operation::default()
        },
        reference: Some(Reference {
            source: "shadow".into(),
            value: "2.5".into(),
            verdict: "wrong".into(),
            ..Reference::default()
        }),
        input: Input {
            path: "default/crashes/id:000000".into(),
            fields: fields(x),
        },
        results: vec![result("inf")],
        input_count: 2,
        first_seen_ms: Some(10),
        ..Finding::default()
    }
}

pub fn doc(findings: Vec<Finding>, bugs: &[&str]) -> TriageDoc {
    let mut d = TriageDoc {
        schema_version: crate::report_model::triage::SCHEMA_VERSION,
        signature: Some("f64".into()),
        bugs: bugs.iter().map(|b| b.to_string()).collect(),
        findings,
        ..TriageDoc::default()
    };
    d.summary.findings = d.findings.len();
    d
}

fn frame(function: &str, line: u32, column: u32) -> Frame {
    Frame {
        function: function.into(),
        file: Some("/src/lib.c".into()),
        line: Some(line),
        column: Some(column),
    }
}

/// A crash group of one input `x`, stopped in `function` at `lib.c:LINE`.
pub fn crash(signal: &str, function: &str, line: u32, x: &str) -> Crash {
    Crash {
        signal: signal.into(),
        frame: Some(frame(function, line, 3)),
        stack: vec![frame(function, line, 3), frame("LLVMFuzzerTestOneInput", 20, 3)],
        input: Input {
            path: "default/crashes/id:000001".into(),
            fields: fields(x),
        },
        input_count: 1,
        first_seen_ms: Some(100),
        inputs: vec!["default/crashes/id:000001".into()],
    }
}

/// A hang of input `x`, stopped in `function` at `lib.c:LINE:COLUMN`.
pub fn hang(function: &str, line: u32, column: u32, x: &str) -> Hang {
    Hang {
        input: Input {
            path: "default/hangs/id:000000".into(),
            fields: fields(x),
        },
        first_seen_ms: Some(200),
        frame: Some(frame(function, line, column)),
        stack: vec![frame(function, line, column)],
    }
}

/// What `FunctionReport` borrows, for functions `f` of harness directory `/h` and run-all
/// directory `/o`.
pub struct Owned<'a> {
    function: &'a str,
    doc: Option<&'a TriageDoc>,
    binary: PathBuf,
    campaign: PathBuf,
}

impl Owned<'_> {
    pub fn get(&self) -> FunctionReport<'_> {
        FunctionReport {
            function: self.function,
            doc: self.doc,
            binary: &self.binary,
            campaign: &self.campaign,
            seconds: self.doc.map(|_| 4),
        }
    }
}

pub fn reports<'a>(docs: &[(&'a str, Option<&'a TriageDoc>)]) -> Vec<Owned<'a>> {
    docs.iter()
        .map(|&(function, doc)| Owned {
            function,
            doc,
            binary: PathBuf::from("/h/bin").join(function),
            campaign: PathBuf::from("/o/campaigns").join(function),
        })
        .collect()
}
