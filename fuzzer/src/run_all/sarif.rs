//! The merged report as SARIF: an error per crash and hang (rule `Crash`, at the top frame)
//! and per exception root site (at the site), in the bug list's order.

use super::merge::Merged;
use super::text::{fields_text, results_text};
use crate::report_model::merged::{MergedBug, MergedCrash};
use crate::triage::format::{sarif, short_decimal};
use serde_json::json;
use serde_sarif::sarif::{Location, Result as SarifResult, ResultLevel};
use std::path::{Path, PathBuf};

fn crash_result(c: &MergedCrash, base: Option<&Path>) -> SarifResult {
    let e = &c.example;
    let what = c.signal.as_deref().unwrap_or("Hang");
    let at = c
        .frame
        .as_ref()
        .map_or_else(|| "an unknown place".into(), |f| f.display());
    let text = format!(
        "{what} in {at}, in {}; e.g. {}({}); reproduce: {}",
        c.functions.join(", "),
        e.function,
        fields_text(&e.input),
        e.reproduce
    );
    let mut result = SarifResult::builder()
        .rule_id(sarif::CRASH_RULE)
        .rule_index(sarif::rule_index(sarif::CRASH_RULE))
        .level(ResultLevel::Error)
        .message(&text)
        .properties(sarif::properties([
            ("signal", json!(c.signal)),
            ("hang", json!(c.signal.is_none())),
            ("functions", json!(c.functions)),
            ("inputCount", json!(c.inputs)),
            ("input", json!(e.path)),
        ]))
        .build();
    result.locations = c
        .frame
        .as_ref()
        .and_then(|f| sarif::frame_location(f, base))
        .map(|l| vec![l]);
    result
}

fn bug_result(b: &MergedBug, base: Option<&Path>) -> SarifResult {
    let e = &b.example;
    let reference = e.reference.as_ref().map_or(String::new(), |r| {
        format!(
            " where the reference ({}) is {} ({})",
            r.source,
            short_decimal(&r.value),
            r.verdict
        )
    });
    let text = format!(
        "{} at {}: `{}`; a bug in {}; e.g. {}({}) returned {}{reference}.",
        b.kind,
        b.site,
        e.expression,
        b.functions.join(", "),
        e.function,
        fields_text(&e.input),
        results_text(&e.returned)
    );
    let site = sarif::physical(&b.path, b.line, b.column, base);
    SarifResult::builder()
        .rule_id(b.kind.as_str())
        .rule_index(sarif::rule_index(&b.kind))
        .level(ResultLevel::Error)
        .message(&text)
        .locations(vec![match b.in_function.as_deref() {
            Some(function) => sarif::location(site, function),
            None => Location {
                physical_location: Some(site),
                ..Default::default()
            },
        }])
        .partial_fingerprints(sarif::fingerprint(&b.key))
        .properties(sarif::properties([
            ("functions", json!(b.functions)),
            ("inputCount", json!(b.inputs)),
            ("operation", json!(b.op)),
        ]))
        .build()
}

pub fn render(m: &Merged) -> String {
    let frames = m
        .crashes
        .iter()
        .chain(&m.hangs)
        .filter_map(|c| c.frame.as_ref()?.file.clone());
    let paths: Vec<PathBuf> = m
        .bugs
        .iter()
        .map(|b| PathBuf::from(&b.path))
        .chain(frames.map(PathBuf::from))
        .collect();
    let base = sarif::common_dir(paths.iter().map(PathBuf::as_path));
    let crashes = m
        .crashes
        .iter()
        .chain(&m.hangs)
        .map(|c| crash_result(c, base.as_deref()));
    let bugs = m.bugs.iter().map(|b| bug_result(b, base.as_deref()));
    let results = crashes.chain(bugs).collect();
    crate::report_model::to_text(&sarif::log(results, base.as_deref()))
}
