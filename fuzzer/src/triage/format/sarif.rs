//! SARIF 2.1.0: one result per finding (`ruleId` = its kind, located at its site) and one per
//! real-crash group (`ruleId` = `Crash`, located at its top frame). Source files are given
//! relative to the `SRCROOT` base (`--srcroot`, by default the directory all of them share).
//! The log is made of the `serde-sarif` crate's types, generated from the SARIF schema.

use crate::replay::{fields_decimal, Frame};
use crate::triage::report::{CrashGroup, Finding, Report, Status};
use numfuzz_abi::kind::ExceptionKind;
use serde_json::{json, Value};
use serde_sarif::sarif::{
    self, ArtifactLocation, Location, LogicalLocation, MultiformatMessageString, PhysicalLocation, PropertyBag, Region,
    ReportingConfiguration, ReportingConfigurationLevel, ReportingDescriptor, ResultLevel, Run, Sarif, Tool,
    ToolComponent, Version,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const SCHEMA_URI: &str = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
const BASE_ID: &str = "SRCROOT";
pub(crate) const CRASH_RULE: &str = "Crash";

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

/// The index of rule `id` in [`rules`].
pub(crate) fn rule_index(id: &str) -> i64 {
    rules().iter().position(|r| r.0 == id).expect("listed rule") as i64
}

/// A rule as the log's driver lists it.
fn rule((id, name, description): (&str, &str, &str)) -> ReportingDescriptor {
    let level = if id == CRASH_RULE {
        ReportingConfigurationLevel::Error
    } else {
        ReportingConfigurationLevel::Warning
    };
    ReportingDescriptor::builder()
        .id(id)
        .name(name)
        .short_description(MultiformatMessageString::builder().text(description).build())
        // The schema leaves this level untyped; the crate's enum spells it.
        .default_configuration(ReportingConfiguration {
            level: Some(json!(level)),
            ..Default::default()
        })
        .build()
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
fn artifact(path: &str, base: Option<&Path>) -> ArtifactLocation {
    let p = Path::new(path);
    let (uri, uri_base_id) = match base.and_then(|b| p.strip_prefix(b).ok()) {
        Some(rel) => (uri_path(&rel.to_string_lossy()), Some(BASE_ID.to_string())),
        None if p.is_absolute() => (format!("file://{}", uri_path(path)), None),
        None => (uri_path(path), None),
    };
    ArtifactLocation {
        uri: Some(uri),
        uri_base_id,
        ..Default::default()
    }
}

/// Line 0 is unknown, column 0 the whole line.
fn region(line: u32, column: u32) -> Option<Region> {
    (line > 0).then(|| Region {
        start_line: Some(line.into()),
        start_column: (column > 0).then_some(column.into()),
        ..Default::default()
    })
}

pub(crate) fn physical(path: &str, line: u32, column: u32, base: Option<&Path>) -> PhysicalLocation {
    PhysicalLocation {
        artifact_location: Some(artifact(path, base)),
        region: region(line, column),
        ..Default::default()
    }
}

/// A place in the source and the function it is in.
pub(crate) fn location(physical: PhysicalLocation, function: &str) -> Location {
    Location {
        physical_location: Some(physical),
        logical_locations: Some(vec![LogicalLocation {
            name: Some(function.to_string()),
            kind: Some("function".into()),
            ..Default::default()
        }]),
        ..Default::default()
    }
}

/// Only frames in a source file (an absolute path) have a location.
pub(crate) fn frame_location(f: &Frame, base: Option<&Path>) -> Option<Location> {
    let file = f.file.as_deref().filter(|p| p.starts_with('/'))?;
    let physical = physical(file, f.line.unwrap_or(0), f.column.unwrap_or(0), base);
    Some(location(physical, &f.function))
}

/// A property bag holding `entries`.
pub(crate) fn properties<const N: usize>(entries: [(&str, Value); N]) -> PropertyBag {
    PropertyBag {
        additional_properties: entries.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        ..Default::default()
    }
}

/// The base locations are relative to: `srcroot`, else the directory the sources of every
/// finding and crash share.
fn base(report: &Report, srcroot: Option<&Path>) -> Option<PathBuf> {
    if let Some(root) = srcroot {
        return Some(root.to_path_buf());
    }
    let crash_files = report
        .crashes
        .iter()
        .filter_map(|g| g.frame.as_ref()?.file.as_deref().map(Path::new));
    common_dir(
        report
            .findings
            .iter()
            .map(|f| Path::new(&f.key.path))
            .chain(crash_files),
    )
}

/// With consequences, bugs are errors and everything else context; without, the
/// silent/handled split.
fn finding_level(report: &Report, f: &Finding) -> ResultLevel {
    if super::judged(report) {
        if f.is_bug() {
            ResultLevel::Error
        } else if f.not_judged.is_some() {
            // An escape nothing could judge: maybe a bug, maybe the answer.
            ResultLevel::Warning
        } else {
            ResultLevel::Note
        }
    } else if f.status() == Status::Silent {
        ResultLevel::Warning
    } else {
        ResultLevel::Note
    }
}

/// The exception, how many of its inputs went unreported, its first input (and minimised
/// one) and, with consequences, its class and reference.
fn finding_message(f: &Finding) -> String {
    let mut text = format!(
        "{} in {}: {} ({}: {} of {} inputs raising it did not call NUMFUZZ_HANDLED()); first input {} = ({})",
        f.key.kind.name(),
        crate::replay::function_of(&f.example),
        f.example.expression(),
        f.status().name(),
        f.silent_inputs,
        f.inputs.len(),
        f.input.rel,
        fields_decimal(&f.input.fields),
    );
    if let Some(m) = &f.minimized {
        text.push_str(&format!(
            "; minimised: ({}) gives {}",
            fields_decimal(&m.fields),
            m.expression
        ));
    }
    if let Some(c) = f.consequence {
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
        if let Some(why) = &f.not_judged {
            text.push_str(&format!("; not judged: {why}"));
        }
    }
    text.push('.');
    text
}

fn finding_properties(f: &Finding) -> PropertyBag {
    properties([
        ("status", f.status().name().into()),
        ("class", f.class().name().into()),
        ("consequence", f.consequence.map(|c| c.name()).into()),
        ("bug", f.is_bug().into()),
        ("operation", f.site.op.name().into()),
        ("inputCount", f.inputs.len().into()),
        ("silentInputs", f.silent_inputs.into()),
        ("handledInputs", f.handled_inputs.into()),
        ("firstSeenMs", f.first_seen_ms.into()),
        ("input", f.input.rel.as_str().into()),
    ])
}

/// A finding's identity across runs (`partialFingerprints`): its id, the (site, kind) key.
pub(crate) fn fingerprint(id: &str) -> BTreeMap<String, String> {
    BTreeMap::from([("numfuzzFinding/v1".to_string(), id.to_string())])
}

fn finding_result(report: &Report, f: &Finding, base: Option<&Path>) -> sarif::Result {
    let kind = f.key.kind.name();
    let site = physical(&f.key.path, f.site.line, f.site.column, base);
    sarif::Result::builder()
        .rule_id(kind)
        .rule_index(rule_index(kind))
        .level(finding_level(report, f))
        .message(&finding_message(f))
        .locations(vec![location(site, &f.site.function)])
        .partial_fingerprints(fingerprint(&f.id))
        .properties(finding_properties(f))
        .build()
}

fn crash_result(g: &CrashGroup, base: Option<&Path>) -> sarif::Result {
    let at = g
        .frame
        .as_ref()
        .map_or_else(|| "an unknown location".into(), Frame::display);
    let text = format!(
        "{} in {at}: {} input(s), first {} = ({}).",
        g.signal,
        g.inputs.len(),
        g.input.rel,
        fields_decimal(&g.input.fields)
    );
    let mut result = sarif::Result::builder()
        .rule_id(CRASH_RULE)
        .rule_index(rule_index(CRASH_RULE))
        .level(ResultLevel::Error)
        .message(&text)
        .properties(properties([
            ("signal", g.signal.as_str().into()),
            ("inputCount", g.inputs.len().into()),
            ("input", g.input.rel.as_str().into()),
        ]))
        .build();
    result.locations = g.frame.as_ref().and_then(|f| frame_location(f, base)).map(|l| vec![l]);
    result
}

/// The SARIF log of a report.
pub fn to_log(report: &Report, srcroot: Option<&Path>) -> Sarif {
    let base = base(report, srcroot);
    let findings = report
        .findings
        .iter()
        .map(|f| finding_result(report, f, base.as_deref()));
    let crashes = report.crashes.iter().map(|g| crash_result(g, base.as_deref()));
    let mut sarif = log(findings.chain(crashes).collect(), base.as_deref());
    if let Some(run) = sarif.runs.first_mut() {
        run.properties = Some(judgement_properties(report));
    }
    sarif
}

/// The run's bug count by the reference that judged each, and the escapes none judged (the
/// triage JSON's `summary.bugs_by` and `summary.not_judged`).
fn judgement_properties(report: &Report) -> PropertyBag {
    let by = report.bugs_by();
    properties([
        ("bugs", report.bug_count().into()),
        (
            "bugsBy",
            json!({"oracle": by.oracle, "shadow": by.shadow, "mpfr": by.mpfr, "domain": by.domain, "library": by.library, "none": by.unreferenced}),
        ),
        ("notJudged", report.not_judged().count().into()),
    ])
}

/// A SARIF log of one run of numfuzz with `results` (ruleIndex into [`rules`]), locations
/// relative to `base` when given.
pub(crate) fn log(results: Vec<sarif::Result>, base: Option<&Path>) -> Sarif {
    let driver = ToolComponent::builder()
        .name("numfuzz")
        .version(env!("CARGO_PKG_VERSION"))
        .rules(rules().into_iter().map(rule).collect::<Vec<_>>())
        .build();
    let mut run = Run::builder().tool(Tool::from(driver)).results(results).build();
    run.original_uri_base_ids = base.map(|b| {
        let mut dir = uri_path(&b.to_string_lossy());
        if !dir.ends_with('/') {
            dir.push('/');
        }
        let uri = ArtifactLocation {
            uri: Some(format!("file://{dir}")),
            ..Default::default()
        };
        BTreeMap::from([(BASE_ID.to_string(), uri)])
    });
    Sarif::builder()
        .schema(SCHEMA_URI)
        .version(json!(Version::V2_1_0))
        .runs(vec![run])
        .build()
}

pub fn render(report: &Report, srcroot: Option<&Path>) -> String {
    let mut text = serde_json::to_string_pretty(&to_log(report, srcroot)).expect("SARIF logs serialise");
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
        let sub = artifact("/src/lib/sub/b.c", base.as_deref());
        assert_eq!(sub.uri.as_deref(), Some("sub/b.c"));
        assert_eq!(sub.uri_base_id.as_deref(), Some(BASE_ID));
        let other = artifact("/other/x y.c", base.as_deref());
        assert_eq!(other.uri.as_deref(), Some("file:///other/x%20y.c"));
        assert_eq!(other.uri_base_id, None);
        assert_eq!(common_dir([Path::new("/a.c"), Path::new("/b/c.c")].into_iter()), None);
    }
}
