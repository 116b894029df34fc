//! SARIF 2.1.0: one result per finding (`ruleId` = its kind, located at its site) and one per
//! real-crash group (`ruleId` = `Crash`, located at its top frame). Source files are given
//! relative to the `SRCROOT` base (`--srcroot`, by default the directory all of them share).

use crate::replay::{fields_decimal, Frame};
use crate::triage::group::{Report, Status};
use numfuzz_abi::kind::ExceptionKind;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const SCHEMA_URI: &str = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
const BASE_ID: &str = "SRCROOT";
const CRASH_RULE: &str = "Crash";

/// The rule of each kind: (id, name, description). Index = the kind's index; `Crash` last.
pub(crate) fn rules() -> Vec<(&'static str, &'static str, &'static str)> {
    let mut rules: Vec<_> = ExceptionKind::ALL
        .iter()
        .map(|k| match k {
            ExceptionKind::Invalid => (
                "Invalid",
                "FloatingPointInvalid",
                "Invalid operation: the result is NaN (e.g. sqrt(-1), 0/0, inf-inf) or a conversion to an integer is out of range",
            ),
            ExceptionKind::DivByZero => (
                "DivByZero",
                "FloatingPointDivByZero",
                "Division by zero or a pole (e.g. 1/0, log(0)): an exact infinite result from finite operands",
            ),
            ExceptionKind::Overflow => {
                ("Overflow", "FloatingPointOverflow", "Overflow: the rounded result is too large and became infinite")
            }
            ExceptionKind::Underflow => {
                ("Underflow", "FloatingPointUnderflow", "Underflow: the result is tiny and inexact (subnormal or zero)")
            }
        })
        .collect();
    rules.push((CRASH_RULE, "Crash", "The program died by a signal (e.g. SIGSEGV)"));
    rules
}

/// Percent-encodes a path for a URI (unreserved characters and `/` stay).
fn uri_path(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The directory every absolute path shares (`None` if only `/`).
pub(crate) fn common_dir<'a>(paths: impl Iterator<Item = &'a Path>) -> Option<PathBuf> {
    let mut common: Option<PathBuf> = None;
    for p in paths.filter(|p| p.is_absolute()) {
        let dir = p.parent().unwrap_or(p);
        common = Some(match common {
            None => dir.to_path_buf(),
            Some(c) => c
                .components()
                .zip(dir.components())
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a)
                .collect(),
        });
    }
    common.filter(|c| c.components().count() > 1)
}

/// An artifact location: relative to the base when under it, else an absolute file URI (or
/// the path as given when it is relative).
fn artifact(path: &str, base: Option<&Path>) -> Value {
    let p = Path::new(path);
    if let Some(rel) = base.and_then(|b| p.strip_prefix(b).ok()) {
        return json!({"uri": uri_path(&rel.to_string_lossy()), "uriBaseId": BASE_ID});
    }
    if p.is_absolute() {
        json!({"uri": format!("file://{}", uri_path(path))})
    } else {
        json!({"uri": uri_path(path)})
    }
}

fn region(line: u32, column: u32) -> Option<Value> {
    match (line, column) {
        (0, _) => None,
        (l, 0) => Some(json!({"startLine": l})),
        (l, c) => Some(json!({"startLine": l, "startColumn": c})),
    }
}

pub(crate) fn physical(path: &str, line: u32, column: u32, base: Option<&Path>) -> Value {
    let mut loc = json!({"artifactLocation": artifact(path, base)});
    if let Some(r) = region(line, column) {
        loc["region"] = r;
    }
    loc
}

fn frame_location(f: &Frame, base: Option<&Path>) -> Option<Value> {
    let file = f.file.as_deref().filter(|p| p.starts_with('/'))?;
    Some(json!({
        "physicalLocation": physical(file, f.line.unwrap_or(0), f.column.unwrap_or(0), base),
        "logicalLocations": [{"name": f.function, "kind": "function"}],
    }))
}

/// The SARIF log as a JSON value.
pub fn to_value(report: &Report, srcroot: Option<&Path>) -> Value {
    let crash_files = report
        .crashes
        .iter()
        .filter_map(|g| g.frame.as_ref()?.file.as_deref().map(Path::new));
    let default_base = common_dir(
        report
            .findings
            .iter()
            .map(|f| Path::new(&f.key.path))
            .chain(crash_files),
    );
    let base: Option<PathBuf> = srcroot.map(Path::to_path_buf).or(default_base);
    let rules = rules();
    let rule_index = |id: &str| rules.iter().position(|r| r.0 == id).expect("listed rule");
    let mut results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            let kind = f.key.kind.name();
            let mut text = format!(
                "{kind} in {}: {} ({}: {} of {} inputs raising it did not call NUMFUZZ_HANDLED()); first input {} = ({})",
                crate::replay::function_of(&f.example),
                f.example.expression(),
                f.status().name(),
                f.silent_inputs,
                f.inputs.len(),
                f.input.rel,
                fields_decimal(&f.input.fields),
            );
            if let Some(m) = &f.minimized {
                text.push_str(&format!("; minimised: ({}) gives {}", fields_decimal(&m.fields), m.expression));
            }
            text.push('.');
            // With consequences: bugs are errors and everything else context; without, the
            // silent/handled split.
            let level = if super::judged(report) {
                if f.is_bug() {
                    "error"
                } else {
                    "note"
                }
            } else if f.status() == Status::Silent {
                "warning"
            } else {
                "note"
            };
            if let Some(c) = f.consequence {
                text.pop();
                text.push_str(&format!("; {} ({})", f.class().name(), c.name()));
                if let Some(r) = &f.reference {
                    text.push_str(&format!(
                        "; returned {} where the reference ({}) is {} ({})",
                        r.judged.returned,
                        r.source.name(),
                        super::short_decimal(&r.judged.reference),
                        r.judged.verdict.name()
                    ));
                }
                text.push('.');
            }
            json!({
                "ruleId": kind,
                "ruleIndex": rule_index(kind),
                "level": level,
                "message": {"text": text},
                "locations": [{
                    "physicalLocation": physical(&f.key.path, f.site.line, f.site.column, base.as_deref()),
                    "logicalLocations": [{"name": f.site.function, "kind": "function"}],
                }],
                "partialFingerprints": {"numfuzzFinding/v1": f.id},
                "properties": {
                    "status": f.status().name(),
                    "class": f.class().name(),
                    "consequence": f.consequence.map(|c| c.name()),
                    "bug": f.is_bug(),
                    "operation": f.site.op.name(),
                    "inputCount": f.inputs.len(),
                    "silentInputs": f.silent_inputs,
                    "handledInputs": f.handled_inputs,
                    "firstSeenMs": f.first_seen_ms,
                    "input": f.input.rel,
                },
            })
        })
        .collect();
    for g in &report.crashes {
        let at = g
            .frame
            .as_ref()
            .map_or_else(|| "an unknown location".into(), Frame::display);
        let mut result = json!({
            "ruleId": CRASH_RULE,
            "ruleIndex": rule_index(CRASH_RULE),
            "level": "error",
            "message": {"text": format!(
                "{} in {at}: {} input(s), first {} = ({}).",
                g.signal,
                g.inputs.len(),
                g.input.rel,
                fields_decimal(&g.input.fields)
            )},
            "properties": {"signal": g.signal, "inputCount": g.inputs.len(), "input": g.input.rel},
        });
        if let Some(loc) = g.frame.as_ref().and_then(|f| frame_location(f, base.as_deref())) {
            result["locations"] = json!([loc]);
        }
        results.push(result);
    }
    log(results, base.as_deref())
}

/// A SARIF log of one run of numfuzz with `results` (ruleIndex into [`rules`]), locations
/// relative to `base` when given.
pub(crate) fn log(results: Vec<Value>, base: Option<&Path>) -> Value {
    let mut run = json!({
        "tool": {"driver": {
            "name": "numfuzz",
            "version": env!("CARGO_PKG_VERSION"),
            "rules": rules().iter().map(|(id, name, text)| json!({
                "id": id,
                "name": name,
                "shortDescription": {"text": text},
                "defaultConfiguration": {"level": if *id == CRASH_RULE { "error" } else { "warning" }},
            })).collect::<Vec<_>>(),
        }},
        "results": results,
    });
    if let Some(b) = base {
        let mut dir = uri_path(&b.to_string_lossy());
        if !dir.ends_with('/') {
            dir.push('/');
        }
        run["originalUriBaseIds"] = json!({BASE_ID: {"uri": format!("file://{dir}")}});
    }
    json!({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]})
}

pub fn render(report: &Report, srcroot: Option<&Path>) -> String {
    let mut text = serde_json::to_string_pretty(&to_value(report, srcroot)).expect("JSON values serialise");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_are_relative_to_the_shared_directory() {
        let base = common_dir([Path::new("/src/lib/a.c"), Path::new("/src/lib/sub/b.c")].into_iter());
        assert_eq!(base.as_deref(), Some(Path::new("/src/lib")));
        assert_eq!(artifact("/src/lib/sub/b.c", base.as_deref())["uri"], "sub/b.c");
        assert_eq!(
            artifact("/other/x y.c", base.as_deref())["uri"],
            "file:///other/x%20y.c"
        );
        assert_eq!(common_dir([Path::new("/a.c"), Path::new("/b/c.c")].into_iter()), None);
    }
}
