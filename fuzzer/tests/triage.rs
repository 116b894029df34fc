//! `numfuzz triage` end to end: real C compiled with numfuzz-cc, output directories laid out
//! by hand the way `numfuzz run` writes them (deterministic: inputs known to raise specific
//! exceptions) and one real two-core campaign; assertions on the findings, their grouping,
//! handled/silent, minimised inputs, crashes, hangs and every output format.

use numfuzz_abi::report::ExceptionReport;
use numfuzz_outdir::{ExceptionRecord, InstanceDir};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use testkit::{both, campaign, compile, numfuzz, Built, Tools};

/// Several exceptions at different sites, selected by the i32 field: an exp overflow
/// (silent), a division by zero the harness reports as handled, a sqrt of a negative number
/// that is handled in mode 3 and silent in mode 2, a segfault in a named function and a hang.
const HARNESS: &str = r#"#include <numfuzz.h>
#include <math.h>
NUMFUZZ_SIGNATURE("f64,i32");
static double grow(double x) { return exp(x); }
static int checked_inverse(double x, double *out) {
  *out = 1.0 / x;
  return x == 0.0 ? -1 : 0;
}
static double root(double x) { return sqrt(x); }
__attribute__((noinline)) static void poke_null(int n) { volatile int *p = 0; *p = n; }
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0);
  int mode = nf_i32(data, size, 1);
  volatile double r = 0.0;
  double q;
  switch (mode) {
  case 0: r = grow(x); break;
  case 1: if (checked_inverse(x, &q) != 0) NUMFUZZ_HANDLED(); break;
  case 2: r = root(x); break;
  case 3: r = root(x); if (r != r) NUMFUZZ_HANDLED(); break;
  case 4: poke_null(mode); break;
  case 5: for (volatile int i = 0;; i++) {} break;
  }
  (void)r;
  return 0;
}
"#;

const EXP_LINE: u32 = 4;
const DIV_LINE: u32 = 6;
const SQRT_LINE: u32 = 9;
const POKE_LINE: u32 = 10;

/// 709.78271289338511, just above log(DBL_MAX): exp overflows.
const EXP_EDGE: f64 = 709.782_712_893_385_1;

/// Mode values of HARNESS.
const OVERFLOW: i32 = 0;
const DIV_HANDLED: i32 = 1;
const SQRT_SILENT: i32 = 2;
const SQRT_HANDLED: i32 = 3;
const SEGFAULT: i32 = 4;
const HANG: i32 = 5;

fn input(x: f64, mode: i32) -> Vec<u8> {
    let mut b = x.to_le_bytes().to_vec();
    b.extend_from_slice(&mode.to_le_bytes());
    b
}

fn build() -> Built {
    compile("harness", &[("harness.c", HARNESS)], &["-O1"], &[])
}

/// An output directory in the layout `numfuzz run` writes.
struct Out {
    root: PathBuf,
    exe: PathBuf,
}

impl Out {
    fn new(built: &Built, name: &str, instances: &[&str]) -> Out {
        let root = built.path(name);
        for inst in instances {
            for sub in ["queue", "crashes", "hangs"] {
                std::fs::create_dir_all(root.join(inst).join(sub)).unwrap();
            }
            std::fs::write(root.join(inst).join("cmdline"), format!("{}\n", built.exe.display())).unwrap();
        }
        Out {
            root,
            exe: built.exe.clone(),
        }
    }

    /// Saves a crash file; returns its path relative to the output directory.
    fn crash(&self, instance: &str, name: &str, bytes: &[u8]) -> String {
        std::fs::write(self.root.join(instance).join("crashes").join(name), bytes).unwrap();
        format!("{instance}/crashes/{name}")
    }

    fn hang(&self, instance: &str, name: &str, bytes: &[u8]) -> String {
        std::fs::write(self.root.join(instance).join("hangs").join(name), bytes).unwrap();
        format!("{instance}/hangs/{name}")
    }

    /// Appends the `exceptions.jsonl` records the campaign would have written for the crash
    /// file `name` at `time_ms` (one per exception it raises).
    fn record(&self, instance: &str, name: &str, time_ms: u64) {
        let bytes = std::fs::read(self.root.join(instance).join("crashes").join(name)).unwrap();
        let dir = InstanceDir::at(&self.root.join(instance));
        for r in testkit::reports(&self.exe, &bytes) {
            let rec = ExceptionRecord {
                time_ms,
                kind: r.kind,
                site: r.site,
                input: format!("crashes/{name}"),
                escape: false,
            };
            dir.append_exception(&rec).unwrap();
        }
    }
}

/// The AFL-style name `numfuzz run` gives an exception input.
fn exception_name(id: u32, exe: &Path, bytes: &[u8], time_ms: u64) -> String {
    let reports: Vec<ExceptionReport> = testkit::reports(exe, bytes);
    let r = reports.first().expect("the input raises an exception");
    format!(
        "id:{id:06},kind:{},site:harness.c:{}:{},src:000000,time:{time_ms},execs:{}",
        r.kind,
        r.site.line,
        r.site.column,
        100 + id
    )
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn triage_json(out: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["triage", out.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    let o = numfuzz(&args);
    assert!(o.status.success(), "{}", both(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("triage JSON does not parse: {e}\n{}", stdout(&o)))
}

fn finding<'a>(doc: &'a Value, kind: &str, line: u32) -> &'a Value {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == kind && f["location"]["line"] == line)
        .unwrap_or_else(|| panic!("no {kind} finding at line {line}: {doc:#}"))
}

/// The campaign of the main tests: 3 inputs raising the same Overflow, 2 the handled
/// DivByZero, 2 the sqrt Invalid (one handled, one silent), a segfault, a hang, and an
/// exception file whose bytes raise nothing.
struct Fixture {
    built: Built,
    out: Out,
    overflow_inputs: Vec<String>,
    stale: String,
}

fn fixture() -> Fixture {
    let built = build();
    let out = Out::new(&built, "out", &["default"]);
    let exe = built.exe.clone();
    let mut overflow_inputs = Vec::new();
    for (i, x) in [EXP_EDGE, 710.5, 800.0].into_iter().enumerate() {
        let bytes = input(x, OVERFLOW);
        let name = exception_name(i as u32, &exe, &bytes, 1500 + i as u64);
        overflow_inputs.push(out.crash("default", &name, &bytes));
        if i == 0 {
            out.record("default", &name, 1500);
        }
    }
    for (i, x) in [0.0, -0.0].into_iter().enumerate() {
        let bytes = input(x, DIV_HANDLED);
        let name = exception_name(3 + i as u32, &exe, &bytes, 100);
        out.crash("default", &name, &bytes);
        if i == 0 {
            out.record("default", &name, 100);
        }
    }
    let sqrt_silent = input(-1.0, SQRT_SILENT);
    let name = exception_name(5, &exe, &sqrt_silent, 300);
    out.crash("default", &name, &sqrt_silent);
    out.record("default", &name, 300);
    let sqrt_handled = input(-2.0, SQRT_HANDLED);
    out.crash("default", &exception_name(6, &exe, &sqrt_handled, 400), &sqrt_handled);
    out.crash(
        "default",
        "id:000007,crash,src:000001,time:500,execs:300",
        &input(1.0, SEGFAULT),
    );
    // Named like an Overflow input, but exp(1) overflows nothing: e.g. the target changed.
    let stale = out.crash(
        "default",
        "id:000008,kind:Overflow,site:harness.c:4:39,src:000002,time:600,execs:400",
        &input(1.0, OVERFLOW),
    );
    out.hang(
        "default",
        "id:000000,hang,src:000003,time:700,execs:500",
        &input(1.0, HANG),
    );
    Fixture {
        built,
        out,
        overflow_inputs,
        stale,
    }
}

/// Every key path of a JSON document (`findings[].location.line`).
fn key_paths(v: &Value, prefix: &str, into: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                into.insert(p.clone());
                key_paths(child, &p, into);
            }
        }
        Value::Array(items) => {
            for item in items {
                key_paths(item, &format!("{prefix}[]"), into);
            }
        }
        _ => {}
    }
}

/// The schema of `--format json` (README, "Triage"), pinned.
const JSON_KEYS: &[&str] = &[
    "bugs",
    "consequences",
    "crashes",
    "crashes[].first_seen_ms",
    "crashes[].frame",
    "crashes[].frame.column",
    "crashes[].frame.file",
    "crashes[].frame.function",
    "crashes[].frame.line",
    "crashes[].input",
    "crashes[].input.fields",
    "crashes[].input.fields[].hex",
    "crashes[].input.fields[].type",
    "crashes[].input.fields[].value",
    "crashes[].input.path",
    "crashes[].input_count",
    "crashes[].inputs",
    "crashes[].signal",
    "crashes[].stack",
    "crashes[].stack[].column",
    "crashes[].stack[].file",
    "crashes[].stack[].function",
    "crashes[].stack[].line",
    "findings",
    "findings[].class",
    "findings[].consequence",
    "findings[].escapes_to",
    "findings[].examples",
    "findings[].examples.absorbed",
    "findings[].examples.coincident",
    "findings[].examples.escapes",
    "findings[].examples.handled",
    "findings[].first_seen_ms",
    "findings[].handled_inputs",
    "findings[].id",
    "findings[].input",
    "findings[].input.fields",
    "findings[].input.fields[].hex",
    "findings[].input.fields[].type",
    "findings[].input.fields[].value",
    "findings[].input.path",
    "findings[].input_borne",
    "findings[].input_count",
    "findings[].inputs",
    "findings[].key",
    "findings[].kind",
    "findings[].location",
    "findings[].location.column",
    "findings[].location.directory",
    "findings[].location.file",
    "findings[].location.function",
    "findings[].location.line",
    "findings[].location.path",
    "findings[].minimize_note",
    "findings[].minimized",
    "findings[].operation",
    "findings[].operation.expression",
    "findings[].operation.op",
    "findings[].operation.operands",
    "findings[].operation.operands_hex",
    "findings[].operation.result",
    "findings[].operation.result_hex",
    "findings[].operation.to",
    "findings[].operation.type",
    "findings[].origin",
    "findings[].reference",
    "findings[].not_judged",
    "findings[].dropped_report",
    "findings[].inputs_not_isolated",
    "findings[].precision_lost",
    "findings[].reproducer",
    "findings[].results",
    "findings[].root",
    "findings[].root_by",
    "findings[].silent_inputs",
    "findings[].status",
    "findings[].via",
    "hangs",
    "hangs[].first_seen_ms",
    "hangs[].frame",
    "hangs[].frame.column",
    "hangs[].frame.file",
    "hangs[].frame.function",
    "hangs[].frame.line",
    "hangs[].input",
    "hangs[].input.fields",
    "hangs[].input.fields[].hex",
    "hangs[].input.fields[].type",
    "hangs[].input.fields[].value",
    "hangs[].input.path",
    "hangs[].stack",
    "hangs[].stack[].column",
    "hangs[].stack[].file",
    "hangs[].stack[].function",
    "hangs[].stack[].line",
    "inputs_replayed",
    "instances",
    "minimized_dir",
    "not_reproduced",
    "not_reproduced[].expected",
    "not_reproduced[].input",
    "not_reproduced[].observed",
    "oracle",
    "out_dir",
    "schema_version",
    "shadow_agreement",
    "signature",
    "summary",
    "summary.bugs",
    "summary.bugs_by",
    "summary.bugs_by.domain",
    "summary.bugs_by.library",
    "summary.bugs_by.mpfr",
    "summary.bugs_by.none",
    "summary.bugs_by.oracle",
    "summary.bugs_by.shadow",
    "summary.not_judged",
    "summary.classes.not_judged",
    "not_judged",
    "summary.by_kind",
    "summary.by_kind.DivByZero",
    "summary.by_kind.DivByZero.findings",
    "summary.by_kind.DivByZero.handled",
    "summary.by_kind.DivByZero.silent",
    "summary.by_kind.Invalid",
    "summary.by_kind.Invalid.findings",
    "summary.by_kind.Invalid.handled",
    "summary.by_kind.Invalid.silent",
    "summary.by_kind.Overflow",
    "summary.by_kind.Overflow.findings",
    "summary.by_kind.Overflow.handled",
    "summary.by_kind.Overflow.silent",
    "summary.by_kind.Underflow",
    "summary.by_kind.Underflow.findings",
    "summary.by_kind.Underflow.handled",
    "summary.by_kind.Underflow.silent",
    "summary.classes",
    "summary.classes.absorbed",
    "summary.classes.bug",
    "summary.classes.chained",
    "summary.classes.coincident",
    "summary.classes.handled",
    "summary.classes.input_borne",
    "summary.classes.out_of_domain",
    "summary.classes.propagated",
    "summary.classes.range",
    "summary.classes.undefined",
    "summary.classes.unjudged",
    "summary.consequences",
    "summary.consequences.absorbed",
    "summary.consequences.coincident",
    "summary.consequences.escapes",
    "summary.consequences.handled",
    "summary.crashes",
    "summary.findings",
    "summary.handled",
    "summary.hangs",
    "summary.not_reproduced",
    "summary.repair_replays",
    "summary.silent",
    "summary.unexplained",
    "summary.wrong",
    "taint_target",
    "target",
    "timeout_ms",
    "tool",
    "tool.name",
    "tool.version",
    "unexplained",
];

/// The keys of a minimised input (`findings[].minimized` when `--minimize` is given).
const MINIMIZED_KEYS: &[&str] = &[
    "findings[].minimized.expression",
    "findings[].minimized.fields",
    "findings[].minimized.fields[].hex",
    "findings[].minimized.fields[].type",
    "findings[].minimized.fields[].value",
    "findings[].minimized.path",
    "findings[].minimized.results",
];

#[test]
fn findings_are_grouped_by_site_and_kind_with_handled_and_silent() {
    let fx = fixture();
    let doc = triage_json(&fx.out.root, &["--timeout", "1000"]);
    assert_eq!(doc["schema_version"], 11);
    assert_eq!(doc["inputs_replayed"], 10);
    assert_eq!(doc["summary"]["findings"], 3, "{doc:#}");
    let kinds: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["Invalid", "DivByZero", "Overflow"], "sorted by kind");

    let overflow = finding(&doc, "Overflow", EXP_LINE);
    assert_eq!(overflow["input_count"], 3, "three inputs, one (site, kind)");
    let inputs: Vec<&str> = overflow["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_str().unwrap())
        .collect();
    assert_eq!(inputs, fx.overflow_inputs);
    assert_eq!(overflow["status"], "silent");
    assert_eq!(
        (&overflow["silent_inputs"], &overflow["handled_inputs"]),
        (&Value::from(3), &Value::from(0))
    );
    assert_eq!(overflow["location"]["function"], "grow");
    assert_eq!(overflow["location"]["file"], "harness.c");
    assert_eq!(overflow["operation"]["op"], "exp");
    assert_eq!(overflow["operation"]["expression"], "exp(709.7827128933851) = inf");
    assert_eq!(overflow["first_seen_ms"], 1500);
    assert_eq!(overflow["input"]["path"], fx.overflow_inputs[0].as_str());
    assert_eq!(
        overflow["input"]["fields"][0],
        serde_json::json!({"type": "f64", "value": "709.7827128933851", "hex": "0x1.62e42fefa39f9p+9"})
    );

    let div = finding(&doc, "DivByZero", DIV_LINE);
    assert_eq!(
        (&div["status"], &div["input_count"], &div["handled_inputs"]),
        (&Value::from("handled"), &Value::from(2), &Value::from(2))
    );
    assert_eq!(div["location"]["function"], "checked_inverse");
    assert_eq!(div["operation"]["expression"], "1.0 / 0.0 = inf");

    let sqrt = finding(&doc, "Invalid", SQRT_LINE);
    assert_eq!(
        sqrt["status"], "silent",
        "one of its two inputs did not call NUMFUZZ_HANDLED()"
    );
    assert_eq!(
        (&sqrt["silent_inputs"], &sqrt["handled_inputs"]),
        (&Value::from(1), &Value::from(1))
    );
    assert_eq!(sqrt["operation"]["expression"], "sqrt(-1.0) = NaN");

    let by_kind = &doc["summary"]["by_kind"];
    assert_eq!(
        by_kind["Overflow"],
        serde_json::json!({"findings": 1, "silent": 1, "handled": 0})
    );
    assert_eq!(
        by_kind["DivByZero"],
        serde_json::json!({"findings": 1, "silent": 0, "handled": 1})
    );
    assert_eq!(by_kind["Underflow"]["findings"], 0);
    assert_eq!(
        (&doc["summary"]["silent"], &doc["summary"]["handled"]),
        (&Value::from(2), &Value::from(1))
    );

    assert_eq!(doc["not_reproduced"].as_array().unwrap().len(), 1);
    assert_eq!(doc["not_reproduced"][0]["input"], fx.stale.as_str());

    // The schema: exactly these keys.
    let mut keys = BTreeSet::new();
    key_paths(&doc, "", &mut keys);
    let expected: BTreeSet<String> = JSON_KEYS.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        keys, expected,
        "JSON keys changed: update the README schema and schema_version"
    );

    // And a full example, key order included, paths made independent of the temporary
    // directory.
    let o = numfuzz(&[
        "triage",
        fx.out.root.to_str().unwrap(),
        "--timeout",
        "1000",
        "--format",
        "json",
    ]);
    let dir = fx.built.dir.path().canonicalize().unwrap().display().to_string();
    let text = hang_columns_masked(&stdout(&o).replace(&dir, "$DIR"));
    let expected_text = FULL_EXAMPLE.replace("$VERSION", env!("CARGO_PKG_VERSION"));
    if text != expected_text {
        let (got, want): (Vec<&str>, Vec<&str>) = (text.lines().collect(), expected_text.lines().collect());
        let at = got
            .iter()
            .zip(&want)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(want.len()));
        panic!(
            "full JSON example changed at line {}:\n  got:  {:?}\n  want: {:?}\n{text}",
            at + 1,
            got.get(at),
            want.get(at)
        );
    }
}

/// A hang is located where the time limit stopped it, and which instruction of the loop on
/// line 22 that is (the `for` at column 11 or the `i++` at column 38) depends on timing. The
/// line is asserted; the column is masked so that the full example compares deterministically.
fn hang_columns_masked(json: &str) -> String {
    let Some(at) = json.find("\"hangs\": [") else {
        return json.to_string();
    };
    let (head, hangs) = json.split_at(at);
    let end = hangs.find("\n  ],").map_or(hangs.len(), |e| e + 1);
    let (hangs, tail) = hangs.split_at(end);
    let masked: Vec<String> = hangs
        .lines()
        .map(|l| match l.trim_start().strip_prefix("\"column\": ") {
            Some(_) => format!("{}\"column\": $COLUMN", &l[..l.len() - l.trim_start().len()]),
            None => l.to_string(),
        })
        .collect();
    format!("{head}{}\n{tail}", masked.join("\n"))
}

#[test]
fn table_markdown_and_sarif_show_the_same_findings() {
    let fx = fixture();
    let out = fx.out.root.to_str().unwrap();

    let o = numfuzz(&["triage", out, "--timeout", "1000"]);
    assert!(o.status.success(), "{}", both(&o));
    let table = stdout(&o);
    let row = |kind: &str, line: u32| {
        table
            .lines()
            .find(|l| l.starts_with(kind) && l.contains(&format!("harness.c:{line}:")))
            .unwrap_or_else(|| panic!("no {kind} row at line {line}:\n{table}"))
            .to_string()
    };
    let overflow = row("Overflow", EXP_LINE);
    for part in [
        "grow",
        "exp(709.7827128933851) = inf",
        "709.7827128933851 (0x1.62e42fefa39f9p+9), 0 (0x00000000)",
        "silent",
        "1.5s",
    ] {
        assert!(overflow.contains(part), "Overflow row lacks `{part}`: {overflow}");
    }
    assert!(overflow.trim_end().ends_with(" 3"), "3 inputs: {overflow}");
    let header = table.lines().find(|l| l.starts_with("KIND")).expect("a header row");
    // Aligned: every column of the rows starts where its title does.
    for title in ["LOCATION", "FUNCTION", "OPERATION", "INPUT", "STATUS"] {
        let at = header.find(title).unwrap();
        for l in table
            .lines()
            .filter(|l| ["Invalid ", "DivByZero ", "Overflow "].iter().any(|k| l.starts_with(k)))
        {
            assert_ne!(l.as_bytes()[at], b' ', "column {title} misaligned:\n{table}");
            assert_eq!(l.as_bytes()[at - 1], b' ', "column {title} misaligned:\n{table}");
        }
    }
    assert!(row("DivByZero", DIV_LINE).contains("handled"));
    assert!(
        table.contains("Overflow:   1 finding   (1 silent, 0 handled)"),
        "{table}"
    );
    assert!(
        table.contains("total:      3 findings  (2 silent, 1 handled)"),
        "{table}"
    );
    assert!(table.contains("SIGSEGV in poke_null"), "{table}");
    assert!(table.contains("Hangs (1, time limit 1000 ms)"), "{table}");
    assert!(
        table.contains(&format!("{}: expected Overflow at harness.c:4:39", fx.stale)),
        "{table}"
    );

    let o = numfuzz(&["triage", out, "--timeout", "1000", "--format", "md"]);
    assert!(o.status.success(), "{}", both(&o));
    let md = stdout(&o);
    let lines: Vec<&str> = md.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.starts_with("| Kind | Location |"))
        .unwrap_or_else(|| panic!("no table:\n{md}"));
    // GFM table cells: split on unescaped pipes.
    let cells = |l: &str| l.replace("\\|", "").matches('|').count() - 1;
    let columns = cells(lines[head]);
    assert_eq!(columns, 9);
    assert_eq!(lines[head + 1], format!("|{}", "---|".repeat(columns)), "separator row");
    let rows: Vec<&&str> = lines[head + 2..].iter().take_while(|l| l.starts_with('|')).collect();
    assert_eq!(rows.len(), 3, "{md}");
    for r in &rows {
        assert_eq!(cells(r), columns, "row with another column count: {r}");
    }
    assert!(
        rows[2].starts_with("| Overflow | `harness.c:4:39` | `grow` | `exp(709.7827128933851) = inf` |"),
        "{}",
        rows[2]
    );

    let o = numfuzz(&["triage", out, "--timeout", "1000", "--format", "sarif"]);
    assert!(o.status.success(), "{}", both(&o));
    let sarif: Value = serde_json::from_slice(&o.stdout).unwrap();
    let schema = sarif_schema();
    let validator = jsonschema::draft7::new(&schema).expect("the SARIF schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&sarif)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "SARIF does not validate:\n{}\n{sarif:#}",
        errors.join("\n")
    );
    let mut broken = sarif.clone();
    broken["runs"][0]["results"][0]["level"] = Value::from("severe");
    assert!(
        !validator.is_valid(&broken),
        "the validator accepts an invalid result level"
    );
    let run = &sarif["runs"][0];
    let rules: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["Invalid", "DivByZero", "Overflow", "Underflow", "Crash"]);
    let results = run["results"].as_array().unwrap();
    let fp: Vec<&Value> = results.iter().filter(|r| r["ruleId"] != "Crash").collect();
    assert_eq!(fp.len(), 3, "one result per finding");
    let overflow = fp.iter().find(|r| r["ruleId"] == "Overflow").unwrap();
    let loc = &overflow["locations"][0]["physicalLocation"];
    assert_eq!(
        loc["artifactLocation"],
        serde_json::json!({"uri": "harness.c", "uriBaseId": "SRCROOT"})
    );
    assert_eq!(loc["region"]["startLine"], EXP_LINE);
    assert!(loc["region"]["startColumn"].as_u64().unwrap() > 0);
    let base = run["originalUriBaseIds"]["SRCROOT"]["uri"].as_str().unwrap();
    assert_eq!(
        base,
        format!("file://{}/", fx.built.dir.path().canonicalize().unwrap().display())
    );
    assert!(overflow["message"]["text"]
        .as_str()
        .unwrap()
        .contains("exp(709.7827128933851) = inf"));
    assert_eq!(overflow["level"], "warning");
    assert_eq!(
        fp.iter().find(|r| r["ruleId"] == "DivByZero").unwrap()["level"],
        "note",
        "handled"
    );
    let crash = results.iter().find(|r| r["ruleId"] == "Crash").expect("the segfault");
    assert_eq!(
        crash["locations"][0]["physicalLocation"]["region"]["startLine"],
        POKE_LINE
    );
}

#[test]
fn minimize_shortens_an_exp_overflow_and_reports_an_input_that_no_longer_reproduces() {
    let built = build();
    let out = Out::new(&built, "out", &["default"]);
    let bytes = input(EXP_EDGE, OVERFLOW);
    let name = exception_name(0, &built.exe, &bytes, 20);
    out.crash("default", &name, &bytes);
    out.record("default", &name, 20);
    let stale = out.crash(
        "default",
        "id:000001,kind:Overflow,site:harness.c:4:39,time:30,execs:9",
        &input(1.0, OVERFLOW),
    );
    let report = built.path("report/triage.json");
    std::fs::create_dir_all(report.parent().unwrap()).unwrap();
    let o = numfuzz(&[
        "triage",
        out.root.to_str().unwrap(),
        "--minimize",
        "--format",
        "json",
        "--output",
        report.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", both(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("1 finding"), "{}", both(&o));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let f = finding(&doc, "Overflow", EXP_LINE);
    let m = &f["minimized"];
    let x = m["fields"][0]["value"].as_str().unwrap();
    let digits = x.trim_end_matches(".0").replace(['.', '-'], "");
    let significant = digits.trim_start_matches('0').trim_end_matches('0').len();
    assert!(significant <= 3, "minimised {x} is not short");
    assert_eq!(m["fields"][1]["value"], "0");
    let file = PathBuf::from(m["path"].as_str().unwrap());
    assert_eq!(file, built.path("report/minimized").join(f["id"].as_str().unwrap()));
    // The written file really raises it, with that value.
    let written = std::fs::read(&file).unwrap();
    assert_eq!(
        f64::from_le_bytes(written[..8].try_into().unwrap()),
        x.parse::<f64>().unwrap()
    );
    let again = testkit::reports(&built.exe, &written);
    assert!(
        again
            .iter()
            .any(|r| r.kind.name() == "Overflow" && r.site.line == EXP_LINE && r.site.op.name() == "exp"),
        "{again:?}"
    );
    assert_eq!(m["expression"], format!("exp({x}) = inf"));

    let nr = doc["not_reproduced"].as_array().unwrap();
    assert_eq!(nr.len(), 1, "{doc:#}");
    assert_eq!(nr[0]["input"], stale.as_str());
    assert_eq!(nr[0]["expected"], "Overflow at harness.c:4:39");
    assert_eq!(nr[0]["observed"], "no exception; completed");

    let mut keys = BTreeSet::new();
    key_paths(&doc, "", &mut keys);
    let expected: BTreeSet<String> = JSON_KEYS.iter().chain(MINIMIZED_KEYS).map(|s| s.to_string()).collect();
    let missing: Vec<&String> = expected
        .iter()
        .filter(|k| !keys.contains(*k) && (k.starts_with("findings") || k.starts_with("summary")))
        .collect();
    assert!(missing.is_empty(), "missing keys {missing:?}");
    assert!(
        keys.is_subset(&expected),
        "unexpected keys {:?}",
        keys.difference(&expected).collect::<Vec<_>>()
    );

    // The table shows the minimised values.
    let o = numfuzz(&[
        "triage",
        out.root.to_str().unwrap(),
        "--minimize",
        "--output",
        built.path("report/triage.txt").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", both(&o));
    let table = std::fs::read_to_string(built.path("report/triage.txt")).unwrap();
    assert!(
        table.contains("MINIMIZED") && table.contains(&format!("{x}, 0")),
        "{table}"
    );
}

#[test]
fn two_instances_merge_into_one_finding_with_the_earliest_time() {
    let built = build();
    let out = Out::new(&built, "out", &["core0", "core1"]);
    let a = input(710.0, OVERFLOW);
    let name_a = exception_name(0, &built.exe, &a, 900);
    let in_core0 = out.crash("core0", &name_a, &a);
    out.record("core0", &name_a, 900);
    let b = input(720.0, OVERFLOW);
    let name_b = exception_name(0, &built.exe, &b, 300);
    let in_core1 = out.crash("core1", &name_b, &b);
    out.record("core1", &name_b, 300);
    let c = input(-4.0, SQRT_SILENT);
    let name_c = exception_name(1, &built.exe, &c, 50);
    out.crash("core1", &name_c, &c);
    out.record("core1", &name_c, 50);

    let doc = triage_json(&out.root, &["--jobs", "2"]);
    assert_eq!(doc["instances"], serde_json::json!(["core0", "core1"]));
    assert_eq!(doc["findings"].as_array().unwrap().len(), 2, "{doc:#}");
    let f = finding(&doc, "Overflow", EXP_LINE);
    assert_eq!(f["input_count"], 2);
    assert_eq!(f["inputs"], serde_json::json!([in_core0, in_core1]));
    assert_eq!(f["first_seen_ms"], 300, "the earlier of the two instances");
    assert_eq!(f["input"]["path"], in_core1.as_str(), "the input that hit it first");
    assert_eq!(f["operation"]["expression"], "exp(720.0) = inf");
    assert_eq!(finding(&doc, "Invalid", SQRT_LINE)["first_seen_ms"], 50);
}

#[test]
fn an_afl_fuzz_campaign_of_a_numfuzz_cc_target_is_triaged() {
    // afl-fuzz's layout: names with `sig:06` (the runtime aborts on the first exception under
    // afl-fuzz), a README in crashes/, and the target recorded as typed, relative to where
    // afl-fuzz ran (here: beside OUT), followed by `@@`.
    let built = build();
    let out = Out::new(&built, "afl-out", &["default"]);
    std::fs::write(out.root.join("default/cmdline"), "./harness\n@@\n").unwrap();
    std::fs::write(
        out.root.join("default/crashes/README.txt"),
        "Command line used to find this crash: ...\n",
    )
    .unwrap();
    let abort = out.crash(
        "default",
        "id:000000,sig:06,src:000000,time:12,execs:40,op:havoc,rep:2",
        &input(1e3, OVERFLOW),
    );
    let o = Command::new(Tools::get().numfuzz())
        .args(["triage", out.root.to_str().unwrap(), "--format", "json"])
        .current_dir("/")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", both(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["inputs_replayed"], 1);
    assert_eq!(doc["target"], built.exe.canonicalize().unwrap().to_str().unwrap());
    let f = finding(&doc, "Overflow", EXP_LINE);
    assert_eq!(
        (&f["input"]["path"], &f["first_seen_ms"]),
        (&Value::from(abort), &Value::from(12))
    );
    assert_eq!(f["operation"]["expression"], "exp(1000.0) = inf");
    assert_eq!(
        doc["not_reproduced"],
        serde_json::json!([]),
        "SIGABRT under afl-fuzz was the exception"
    );
}

/// A few exceptions any campaign finds within seconds.
const EASY: &str = r#"#include <numfuzz.h>
#include <math.h>
NUMFUZZ_SIGNATURE("f64,f64");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0), y = nf_f64(data, size, 1);
  volatile double a = exp(x);
  volatile double b = x / y;
  volatile double c = sqrt(y);
  (void)a; (void)b; (void)c;
  return 0;
}
"#;

#[test]
fn a_two_core_campaign_triages_into_one_finding_per_site_and_kind() {
    let built = compile("easy", &[("easy.c", EASY)], &["-O1"], &[]);
    let out = built.path("out");
    let o = campaign::run(&built.exe, &out, 10, &["--cores", "0-1"]);
    assert!(o.status.success(), "{}", both(&o));
    let doc = triage_json(&out, &[]);
    assert_eq!(doc["instances"], serde_json::json!(["core0", "core1"]));
    // Earliest record of each identity over both instances.
    let mut recorded: BTreeMap<(String, u64, u64, String), u64> = BTreeMap::new();
    for inst in ["core0", "core1"] {
        let text = std::fs::read_to_string(out.join(inst).join("exceptions.jsonl")).unwrap_or_default();
        for l in text.lines() {
            let r: Value = serde_json::from_str(l).unwrap();
            let key = (
                r["kind"].as_str().unwrap().to_string(),
                r["site"]["line"].as_u64().unwrap(),
                r["site"]["column"].as_u64().unwrap(),
                r["site"]["op"].as_str().unwrap().to_string(),
            );
            let t = r["time_ms"].as_u64().unwrap();
            recorded.entry(key).and_modify(|m| *m = (*m).min(t)).or_insert(t);
        }
    }
    assert!(!recorded.is_empty(), "the campaign found nothing: {}", both(&o));
    let findings = doc["findings"].as_array().unwrap();
    let mut seen = BTreeSet::new();
    for f in findings {
        let key = (
            f["kind"].as_str().unwrap().to_string(),
            f["location"]["line"].as_u64().unwrap(),
            f["location"]["column"].as_u64().unwrap(),
            f["operation"]["op"].as_str().unwrap().to_string(),
        );
        assert!(seen.insert(key.clone()), "{key:?} listed twice");
        if let Some(t) = recorded.get(&key) {
            assert_eq!(f["first_seen_ms"].as_u64(), Some(*t), "{key:?}");
        }
    }
    for key in recorded.keys() {
        assert!(
            seen.contains(key),
            "{key:?} recorded by the campaign but not a finding: {doc:#}"
        );
    }
    // Triage replays crashes/ and hangs/ (a loaded machine can make an input time out).
    let saved: usize = ["core0", "core1"]
        .iter()
        .flat_map(|i| ["crashes", "hangs"].map(|d| out.join(i).join(d)))
        .map(|d| std::fs::read_dir(d).map_or(0, |e| e.count()))
        .sum();
    assert_eq!(doc["inputs_replayed"].as_u64().unwrap() as usize, saved);
    // Every exception input reproduces (a time-out under load may not).
    let not_reproduced: Vec<&Value> = doc["not_reproduced"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| !n["input"].as_str().unwrap().contains("/hangs/"))
        .collect();
    assert!(not_reproduced.is_empty(), "{not_reproduced:?}");
}

#[test]
fn a_real_crash_shows_its_signal_and_stack_and_a_hang_is_listed() {
    let built = build();
    let out = Out::new(&built, "out", &["default"]);
    let crash = out.crash(
        "default",
        "id:000000,crash,src:000000,time:42,execs:7",
        &input(2.0, SEGFAULT),
    );
    out.crash(
        "default",
        "id:000001,crash,src:000000,time:50,execs:9",
        &input(3.0, SEGFAULT),
    );
    let hang = out.hang(
        "default",
        "id:000000,hang,src:000000,time:77,execs:8",
        &input(2.0, HANG),
    );
    let doc = triage_json(&out.root, &["--timeout", "1000"]);
    let crashes = doc["crashes"].as_array().unwrap();
    assert_eq!(crashes.len(), 1, "same signal and frame: one group {doc:#}");
    let c = &crashes[0];
    assert_eq!(c["signal"], "SIGSEGV");
    assert_eq!(c["input_count"], 2);
    assert_eq!(c["input"]["path"], crash.as_str());
    assert_eq!(c["first_seen_ms"], 42);
    assert_eq!(c["frame"]["function"], "poke_null");
    assert_eq!(c["frame"]["line"], POKE_LINE);
    assert!(c["frame"]["file"].as_str().unwrap().ends_with("/harness.c"));
    let stack: Vec<&str> = c["stack"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["function"].as_str().unwrap())
        .collect();
    assert_eq!(stack.first(), Some(&"poke_null"));
    assert!(stack.contains(&"LLVMFuzzerTestOneInput"), "{stack:?}");
    let hangs = doc["hangs"].as_array().unwrap();
    assert_eq!(hangs.len(), 1);
    assert_eq!(hangs[0]["input"]["path"], hang.as_str());
    assert_eq!(hangs[0]["input"]["fields"][1]["value"], "5");
    assert_eq!(doc["findings"], serde_json::json!([]));
    assert_eq!(doc["not_reproduced"], serde_json::json!([]));

    // The target still dies by the signal, and prints the stack, outside triage too.
    let r = testkit::run(&built.exe, &[], &input(2.0, SEGFAULT), &[("NUMFUZZ_ABORT", "0")]);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(r.status.signal(), Some(libc::SIGSEGV));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("numfuzz: fatal signal SIGSEGV") && err.contains("in poke_null "),
        "{err}"
    );
    // The default standalone abort on an exception prints the exception, not a stack.
    let r = testkit::run(&built.exe, &[], &input(800.0, OVERFLOW), &[]);
    assert_eq!(r.status.signal(), Some(libc::SIGABRT));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("Overflow in exp") && !err.contains("fatal signal"),
        "{err}"
    );
}

/// Sleeps 1.5 s when its i32 is 1: a hang to a campaign of `-t 300`, not to one of 3 s.
const SLOW: &str = r#"#include <numfuzz.h>
#include <unistd.h>
NUMFUZZ_SIGNATURE("f64,i32");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (nf_i32(data, size, 1) == 1) usleep(1500000);
  return 0;
}
"#;

#[test]
fn a_hang_is_replayed_at_the_limit_its_campaign_confirmed_it_at() {
    let built = compile("slow", &[("slow.c", SLOW)], &["-O1"], &[]);
    let out = Out::new(&built, "out", &["default"]);
    let hang = out.hang("default", "id:000000,hang,src:000000,time:9,execs:3", &input(1.0, 1));
    // What `numfuzz run -t 300` records: hangs confirmed at 300 ms.
    let stats = out.root.join("default/fuzzer_stats");
    std::fs::write(&stats, "exec_timeout      : 40\nhang_timeout_ms   : 300\n").unwrap();
    let doc = triage_json(&out.root, &[]);
    assert_eq!(doc["hangs"][0]["input"]["path"], hang.as_str(), "{doc:#}");
    assert_eq!(doc["not_reproduced"], serde_json::json!([]));
    assert_eq!(doc["timeout_ms"], 3000, "the other replays keep triage's -t");

    // A campaign that recorded no limit (an older numfuzz, afl-fuzz): replayed at -t, 3 s by
    // default, the slow input ends, and the report says it did not hang again.
    std::fs::remove_file(&stats).unwrap();
    let doc = triage_json(&out.root, &[]);
    assert_eq!(doc["hangs"], serde_json::json!([]), "{doc:#}");
    assert_eq!(doc["not_reproduced"][0]["expected"], "a hang (no end within 3000 ms)");
}

#[test]
fn replay_shares_the_decoding_and_shows_the_crash_stack() {
    let built = build();
    let dir = built.path("inputs");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("overflow"), input(EXP_EDGE, OVERFLOW)).unwrap();
    std::fs::write(dir.join("segv"), input(1.0, SEGFAULT)).unwrap();
    let o = numfuzz(&[
        "replay",
        built.exe.to_str().unwrap(),
        dir.join("overflow").to_str().unwrap(),
        dir.join("segv").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", both(&o));
    let text = stdout(&o);
    assert!(
        text.contains("[0] f64 = 709.7827128933851  (0x1.62e42fefa39f9p+9)"),
        "{text}"
    );
    assert!(
        text.contains("Overflow  harness.c:4:39 in grow: exp(709.7827128933851) = inf"),
        "{text}"
    );
    assert!(
        text.contains("=> crashed with SIGSEGV") && text.contains("#0 poke_null ("),
        "{text}"
    );
}

/// Unbounded recursion through checked operations (GSL's hyperg_1F1_U ↔ hyperg_1F1_ab_neg
/// does this on NaN arguments): the stack runs out inside a checker.
const DIVE: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64");
__attribute__((noinline)) double dive(double x) {
  volatile double pad[32];
  pad[0] = x * 1.5;
  return dive(pad[0] - x) + pad[1];
}
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  volatile double r = dive(nf_f64(data, size, 0));
  (void)r;
  return 0;
}
"#;

#[test]
fn a_stack_overflow_is_named_and_located_in_the_recursing_function() {
    let built = compile("dive", &[("dive.c", DIVE)], &["-O1"], &[]);
    let dir = built.path("inputs");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("x"), 2.0f64.to_le_bytes()).unwrap();
    let o = numfuzz(&["replay", built.exe.to_str().unwrap(), dir.join("x").to_str().unwrap()]);
    assert!(o.status.success(), "{}", both(&o));
    let text = stdout(&o);
    assert!(text.contains("=> crashed with SIGSEGV (stack overflow)"), "{text}");
    assert!(text.contains(" dive ("), "{text}");
}

#[test]
fn bad_campaign_directories_and_targets_get_one_line_errors() {
    let built = build();
    let one_line_error = |args: &[&str], says: &str| {
        let o = numfuzz(args);
        assert!(!o.status.success(), "{args:?} succeeded: {}", both(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
        assert!(err.contains(says), "{args:?}: expected `{says}` in: {err}");
    };
    let missing = built.path("nothing");
    one_line_error(
        &["triage", missing.to_str().unwrap()],
        "does not exist; give the output directory of a campaign",
    );
    let empty = built.path("empty");
    std::fs::create_dir_all(&empty).unwrap();
    one_line_error(&["triage", empty.to_str().unwrap()], "holds no campaign instance");

    // No crash files: valid, no findings.
    let quiet = Out::new(&built, "quiet", &["default"]);
    let o = numfuzz(&["triage", quiet.root.to_str().unwrap()]);
    assert!(o.status.success(), "{}", both(&o));
    assert!(
        stdout(&o).contains("No floating-point exception findings."),
        "{}",
        both(&o)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no findings"),
        "{}",
        both(&o)
    );

    // The recorded target is gone, or is no numfuzz-cc build (an AFL++ campaign's OUT).
    let out = Out::new(&built, "out", &["default"]);
    out.crash("default", "id:000000,time:1", &input(800.0, OVERFLOW));
    std::fs::write(
        out.root.join("default/cmdline"),
        format!("{}\n@@\n", built.path("deleted").display()),
    )
    .unwrap();
    one_line_error(
        &["triage", out.root.to_str().unwrap()],
        "pass --target with a numfuzz-cc build of the same harness",
    );
    std::fs::write(out.root.join("default/cmdline"), "/bin/true\n@@\n").unwrap();
    one_line_error(
        &["triage", out.root.to_str().unwrap()],
        "was not built with numfuzz-cc; pass --target with a numfuzz-cc build of the same harness",
    );
    one_line_error(
        &["triage", out.root.to_str().unwrap(), "--target", "/bin/true"],
        "not built with numfuzz-cc",
    );
    one_line_error(
        &[
            "triage",
            out.root.to_str().unwrap(),
            "--target",
            missing.to_str().unwrap(),
        ],
        "does not exist",
    );
    // --target replaces it; the recorded `@@` passes the input file.
    let doc = triage_json(&out.root, &["--target", built.exe.to_str().unwrap()]);
    assert_eq!(finding(&doc, "Overflow", EXP_LINE)["input_count"], 1);
}

/// The official SARIF 2.1.0 JSON schema (OASIS), as shipped in the source of the
/// `serde-sarif` crate on crates.io (`src/schema.json`). Not committed here (a third-party
/// file): cargo fetches the crate into its registry cache and `cargo metadata` says where.
fn sarif_schema() -> Value {
    let probe = tempfile::tempdir().unwrap();
    std::fs::write(
        probe.path().join("Cargo.toml"),
        "[package]\nname = \"sarif-schema-probe\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[workspace]\n\n\
         [dependencies]\nserde-sarif = { version = \"=0.8.0\", default-features = false }\n",
    )
    .unwrap();
    std::fs::create_dir_all(probe.path().join("src")).unwrap();
    std::fs::write(probe.path().join("src/lib.rs"), "").unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let metadata = |offline: bool| {
        let mut cmd = Command::new(&cargo);
        cmd.args(["metadata", "--format-version", "1", "--manifest-path"])
            .arg(probe.path().join("Cargo.toml"));
        if offline {
            cmd.arg("--offline");
        }
        cmd.output().expect("run cargo metadata")
    };
    let mut o = metadata(false);
    if !o.status.success() {
        o = metadata(true);
    }
    assert!(
        o.status.success(),
        "cannot fetch serde-sarif 0.8.0 from crates.io for the SARIF schema: {}",
        both(&o)
    );
    let meta: Value = serde_json::from_slice(&o.stdout).unwrap();
    let manifest = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "serde-sarif")
        .and_then(|p| p["manifest_path"].as_str())
        .expect("serde-sarif in the metadata");
    let schema_path = Path::new(manifest).parent().unwrap().join("src/schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&schema_path).unwrap()).unwrap();
    assert_eq!(
        schema["title"],
        "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    );
    escape_lone_bracket(schema)
}

/// The schema's `language` patterns `^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$` have a lone
/// `]`: a literal in ECMA-262's web-compatibility grammar, but the validator's stricter regex
/// check rejects the whole schema for it. Escaping it keeps the patterns' meaning (our SARIF
/// has no `language` anyway) and the rest of the schema untouched.
fn escape_lone_bracket(mut schema: Value) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for (k, child) in m.iter_mut() {
                    if k == "pattern" && child == "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$" {
                        *child = Value::from("^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\\]?$");
                    } else {
                        walk(child);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut schema);
    schema
}
/// `numfuzz triage --format json` on the fixture; `$DIR` stands for the test's temporary
/// directory (source, target and OUT are inside it).
const FULL_EXAMPLE: &str = r#"{
  "schema_version": 11,
  "tool": {
    "name": "numfuzz",
    "version": "$VERSION"
  },
  "out_dir": "$DIR/out",
  "target": "$DIR/harness",
  "signature": "f64,i32",
  "instances": [
    "default"
  ],
  "inputs_replayed": 10,
  "timeout_ms": 1000,
  "consequences": "no-results",
  "taint_target": null,
  "oracle": null,
  "shadow_agreement": null,
  "summary": {
    "findings": 3,
    "silent": 2,
    "handled": 1,
    "bugs": 0,
    "bugs_by": {
      "oracle": 0,
      "shadow": 0,
      "mpfr": 0,
      "domain": 0,
      "library": 0,
      "none": 0
    },
    "not_judged": 0,
    "unexplained": 0,
    "repair_replays": 0,
    "wrong": 0,
    "classes": {
      "bug": 0,
      "chained": 0,
      "propagated": 0,
      "undefined": 0,
      "range": 0,
      "handled": 0,
      "coincident": 0,
      "absorbed": 0,
      "input_borne": 0,
      "out_of_domain": 0,
      "unjudged": 3,
      "not_judged": 0
    },
    "consequences": {
      "escapes": 0,
      "handled": 0,
      "coincident": 0,
      "absorbed": 0
    },
    "by_kind": {
      "Invalid": {
        "findings": 1,
        "silent": 1,
        "handled": 0
      },
      "DivByZero": {
        "findings": 1,
        "silent": 0,
        "handled": 1
      },
      "Overflow": {
        "findings": 1,
        "silent": 1,
        "handled": 0
      },
      "Underflow": {
        "findings": 0,
        "silent": 0,
        "handled": 0
      }
    },
    "crashes": 1,
    "hangs": 1,
    "not_reproduced": 1
  },
  "bugs": [],
  "not_judged": [],
  "unexplained": [],
  "findings": [
    {
      "id": "Invalid-harness.c-9-39-sqrt",
      "key": "Invalid $DIR/harness.c:9:39 sqrt",
      "kind": "Invalid",
      "status": "silent",
      "class": "unjudged",
      "consequence": null,
      "origin": true,
      "input_borne": false,
      "root": null,
      "root_by": null,
      "via": null,
      "escapes_to": [],
      "reference": null,
      "not_judged": null,
      "dropped_report": null,
      "inputs_not_isolated": 0,
      "precision_lost": null,
      "reproducer": null,
      "location": {
        "file": "harness.c",
        "directory": "$DIR",
        "path": "$DIR/harness.c",
        "line": 9,
        "column": 39,
        "function": "root"
      },
      "operation": {
        "op": "sqrt",
        "type": "f64",
        "to": null,
        "expression": "sqrt(-1.0) = NaN",
        "operands": [
          "-1.0"
        ],
        "operands_hex": [
          "-0x1p+0"
        ],
        "result": "NaN",
        "result_hex": "nan"
      },
      "input": {
        "path": "default/crashes/id:000005,kind:Invalid,site:harness.c:9:39,src:000000,time:300,execs:105",
        "fields": [
          {
            "type": "f64",
            "value": "-1.0",
            "hex": "-0x1p+0"
          },
          {
            "type": "i32",
            "value": "2",
            "hex": "0x00000002"
          }
        ]
      },
      "results": [],
      "examples": {
        "escapes": null,
        "handled": null,
        "coincident": null,
        "absorbed": null
      },
      "input_count": 2,
      "silent_inputs": 1,
      "handled_inputs": 1,
      "first_seen_ms": 300,
      "inputs": [
        "default/crashes/id:000005,kind:Invalid,site:harness.c:9:39,src:000000,time:300,execs:105",
        "default/crashes/id:000006,kind:Invalid,site:harness.c:9:39,src:000000,time:400,execs:106"
      ],
      "minimized": null,
      "minimize_note": null
    },
    {
      "id": "DivByZero-harness.c-6-14-fdiv",
      "key": "DivByZero $DIR/harness.c:6:14 fdiv",
      "kind": "DivByZero",
      "status": "handled",
      "class": "unjudged",
      "consequence": null,
      "origin": true,
      "input_borne": false,
      "root": null,
      "root_by": null,
      "via": null,
      "escapes_to": [],
      "reference": null,
      "not_judged": null,
      "dropped_report": null,
      "inputs_not_isolated": 0,
      "precision_lost": null,
      "reproducer": null,
      "location": {
        "file": "harness.c",
        "directory": "$DIR",
        "path": "$DIR/harness.c",
        "line": 6,
        "column": 14,
        "function": "checked_inverse"
      },
      "operation": {
        "op": "fdiv",
        "type": "f64",
        "to": null,
        "expression": "1.0 / 0.0 = inf",
        "operands": [
          "1.0",
          "0.0"
        ],
        "operands_hex": [
          "0x1p+0",
          "0x0p+0"
        ],
        "result": "inf",
        "result_hex": "inf"
      },
      "input": {
        "path": "default/crashes/id:000003,kind:DivByZero,site:harness.c:6:14,src:000000,time:100,execs:103",
        "fields": [
          {
            "type": "f64",
            "value": "0.0",
            "hex": "0x0p+0"
          },
          {
            "type": "i32",
            "value": "1",
            "hex": "0x00000001"
          }
        ]
      },
      "results": [],
      "examples": {
        "escapes": null,
        "handled": null,
        "coincident": null,
        "absorbed": null
      },
      "input_count": 2,
      "silent_inputs": 0,
      "handled_inputs": 2,
      "first_seen_ms": 100,
      "inputs": [
        "default/crashes/id:000003,kind:DivByZero,site:harness.c:6:14,src:000000,time:100,execs:103",
        "default/crashes/id:000004,kind:DivByZero,site:harness.c:6:14,src:000000,time:100,execs:104"
      ],
      "minimized": null,
      "minimize_note": null
    },
    {
      "id": "Overflow-harness.c-4-39-exp",
      "key": "Overflow $DIR/harness.c:4:39 exp",
      "kind": "Overflow",
      "status": "silent",
      "class": "unjudged",
      "consequence": null,
      "origin": true,
      "input_borne": false,
      "root": null,
      "root_by": null,
      "via": null,
      "escapes_to": [],
      "reference": null,
      "not_judged": null,
      "dropped_report": null,
      "inputs_not_isolated": 0,
      "precision_lost": null,
      "reproducer": null,
      "location": {
        "file": "harness.c",
        "directory": "$DIR",
        "path": "$DIR/harness.c",
        "line": 4,
        "column": 39,
        "function": "grow"
      },
      "operation": {
        "op": "exp",
        "type": "f64",
        "to": null,
        "expression": "exp(709.7827128933851) = inf",
        "operands": [
          "709.7827128933851"
        ],
        "operands_hex": [
          "0x1.62e42fefa39f9p+9"
        ],
        "result": "inf",
        "result_hex": "inf"
      },
      "input": {
        "path": "default/crashes/id:000000,kind:Overflow,site:harness.c:4:39,src:000000,time:1500,execs:100",
        "fields": [
          {
            "type": "f64",
            "value": "709.7827128933851",
            "hex": "0x1.62e42fefa39f9p+9"
          },
          {
            "type": "i32",
            "value": "0",
            "hex": "0x00000000"
          }
        ]
      },
      "results": [],
      "examples": {
        "escapes": null,
        "handled": null,
        "coincident": null,
        "absorbed": null
      },
      "input_count": 3,
      "silent_inputs": 3,
      "handled_inputs": 0,
      "first_seen_ms": 1500,
      "inputs": [
        "default/crashes/id:000000,kind:Overflow,site:harness.c:4:39,src:000000,time:1500,execs:100",
        "default/crashes/id:000001,kind:Overflow,site:harness.c:4:39,src:000000,time:1501,execs:101",
        "default/crashes/id:000002,kind:Overflow,site:harness.c:4:39,src:000000,time:1502,execs:102"
      ],
      "minimized": null,
      "minimize_note": null
    }
  ],
  "crashes": [
    {
      "signal": "SIGSEGV",
      "frame": {
        "function": "poke_null",
        "file": "$DIR/harness.c",
        "line": 10,
        "column": 82
      },
      "stack": [
        {
          "function": "poke_null",
          "file": "$DIR/harness.c",
          "line": 10,
          "column": 82
        },
        {
          "function": "LLVMFuzzerTestOneInput",
          "file": "$DIR/harness.c",
          "line": 21,
          "column": 11
        }
      ],
      "input": {
        "path": "default/crashes/id:000007,crash,src:000001,time:500,execs:300",
        "fields": [
          {
            "type": "f64",
            "value": "1.0",
            "hex": "0x1p+0"
          },
          {
            "type": "i32",
            "value": "4",
            "hex": "0x00000004"
          }
        ]
      },
      "input_count": 1,
      "first_seen_ms": 500,
      "inputs": [
        "default/crashes/id:000007,crash,src:000001,time:500,execs:300"
      ]
    }
  ],
  "hangs": [
    {
      "input": {
        "path": "default/hangs/id:000000,hang,src:000003,time:700,execs:500",
        "fields": [
          {
            "type": "f64",
            "value": "1.0",
            "hex": "0x1p+0"
          },
          {
            "type": "i32",
            "value": "5",
            "hex": "0x00000005"
          }
        ]
      },
      "first_seen_ms": 700,
      "frame": {
        "function": "LLVMFuzzerTestOneInput",
        "file": "$DIR/harness.c",
        "line": 22,
        "column": $COLUMN
      },
      "stack": [
        {
          "function": "LLVMFuzzerTestOneInput",
          "file": "$DIR/harness.c",
          "line": 22,
          "column": $COLUMN
        }
      ]
    }
  ],
  "not_reproduced": [
    {
      "input": "default/crashes/id:000008,kind:Overflow,site:harness.c:4:39,src:000002,time:600,execs:400",
      "expected": "Overflow at harness.c:4:39",
      "observed": "no exception; completed"
    }
  ],
  "minimized_dir": null
}
"#;

/// A real crash and a hang are bugs too: every format lists them before the exceptions.
#[test]
fn crashes_and_hangs_come_before_the_exceptions_in_every_format() {
    let fx = fixture();
    let out = fx.out.root.to_str().unwrap();
    let text = |format: &str| {
        let o = numfuzz(&["triage", out, "--timeout", "1000", "--format", format]);
        assert!(o.status.success(), "{}", both(&o));
        stdout(&o)
    };
    let before = |text: &str, first: &str, then: &str| {
        let (a, b) = (text.find(first), text.find(then));
        assert!(
            a.is_some() && b.is_some() && a < b,
            "`{first}` not before `{then}`:\n{text}"
        );
    };
    let table = text("table");
    before(&table, "Real crashes (1):", "Hangs (1, ");
    before(&table, "Hangs (1, ", "\nKIND ");
    let md = text("md");
    before(&md, "### Real crashes", "### Hangs");
    before(&md, "### Hangs", "| Kind | Location |");
    let html = text("html");
    before(&html, "<h2>Real crashes (1)</h2>", "<h2>Hangs (1, ");
    before(&html, "<h2>Hangs (1, ", "<h2>All findings");
}
