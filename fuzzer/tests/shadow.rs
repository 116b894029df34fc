//! The shadow build as a reference without an oracle: C functions whose Inf or NaN the format
//! made (a spurious overflow, an underflow that log turns into -Inf, inf - inf of two overflows
//! that cancel, an overflow kept in a struct in memory, the 0/0 of a removable singularity) and
//! ones whose Inf or NaN is the answer (a true overflow, a pole, the log of an exact zero, the
//! sign of zero), built with numfuzz-cc, as a taint build and as a
//! shadow build; what the shadow build reports for each, and the bug list `numfuzz triage`
//! makes from it with and without the shadow build.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use testkit::{both, compile, compile_with_taint_and_shadow, numfuzz, primary_shadow, Built, HandCampaign};

/// One case per value of the i32 field; each function on its own line.
const CASES: &str = r#"#include <numfuzz.h>
#include <math.h>
#include <stdint.h>
NUMFUZZ_SIGNATURE("i32,f64");
NUMFUZZ_FUNCTION("shadowed");
struct pair { double num, den; };
__attribute__((noinline)) static double ratio(const struct pair *p) { return p->num / p->den; }
__attribute__((noinline)) static double spurious(double x) { return 2 * exp(x) / (x * x); }
__attribute__((noinline)) static double log_of_underflow(double x) { return log(exp(-x)); }
__attribute__((noinline)) static double cancelled(double x) { return (exp(x) - exp(x - 0.1)) / exp(x); }
__attribute__((noinline)) static double true_overflow(double x) { return exp(x) * exp(x); }
__attribute__((noinline)) static double pole(double x) { return 1.0 / (x - 1.0); }
__attribute__((noinline)) static double log_of_zero(double x) { return log(x - 1.0); }
__attribute__((noinline)) static double in_memory(double x) { struct pair p = {2 * exp(x), x * x}; return ratio(&p); }
__attribute__((noinline)) static double bit_trick(double x) {
  union { double d; uint64_t u; } w = {2 * exp(x)};
  if ((w.u >> 52 & 0x7ff) == 0x7ff) return w.d;
  return w.d / (x * x);
}
/* A libm function the program defines itself (a libm under test): its own shadow, not cbrtl's. */
__attribute__((noinline)) double cbrt(double x) { return x * 1e300 / 1e300; }
__attribute__((noinline)) static double removable(double x) { return (exp(x) - 1.0) / x; }
__attribute__((noinline)) static double jump(double x) { return x / fabs(x); }
__attribute__((noinline)) static double from_constant(double x) { double b = x > 1e300 ? INFINITY : x * x; return b * (x - x); }
__attribute__((noinline)) static int exps(double x, struct pair *r) { if (x > 700) { r->num = 0.0; r->den = INFINITY; return 1; } r->num = exp(-x); r->den = exp(x); return 0; }
__attribute__((noinline)) static double stored_zero(double x) { struct pair a, b; exps(x, &a); exps(x + 1, &b); return log(b.num / a.num); }
__attribute__((noinline)) static double stored_infinity(double x) { struct pair a; exps(x, &a); return a.den * 1e-300 + x / 3 * 1e-320 * 0; }
__attribute__((noinline)) static double zero_quotient(double x) { struct pair b; exps(x + 1, &b); return log(b.num / exp(-x)); }
__attribute__((noinline)) static double capped_exp(double x) { return x > 700 ? INFINITY : exp(x); }
__attribute__((noinline)) static double returned_infinity(double x) { return capped_exp(x) * 1e-300 + x / 3 * 1e-320 * 0; }
__attribute__((noinline)) static double returned_overflow(double x) { return capped_exp(x) * 1e300 + x / 3 * 1e-320 * 0; }
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int c = nf_i32(data, size, 0);
  double x = nf_f64(data, size, 1), r = 0;
  switch (c) {
  case 1: r = spurious(x); break;
  case 2: r = log_of_underflow(x); break;
  case 3: r = cancelled(x); break;
  case 4: r = true_overflow(x); break;
  case 5: r = pole(x); break;
  case 6: r = log_of_zero(x); break;
  case 7: r = in_memory(x); break;
  case 8: r = bit_trick(x); break;
  case 9: r = cbrt(x); break;
  case 10: r = removable(x); break;
  case 11: r = jump(x); break;
  case 12: r = from_constant(x); break;
  case 13: r = stored_zero(x); break;
  case 14: r = stored_infinity(x); break;
  case 15: r = zero_quotient(x); break;
  case 16: r = returned_infinity(x); break;
  case 17: r = capped_exp(x); break;
  case 18: r = returned_overflow(x); break;
  }
  NUMFUZZ_RESULT(r);
  return 0;
}
"#;

const LINE_SPURIOUS: u64 = 8;
const LINE_LOG_OF_UNDERFLOW: u64 = 9;
const LINE_CANCELLED: u64 = 10;
const LINE_TRUE_OVERFLOW: u64 = 11;
const LINE_POLE: u64 = 12;
const LINE_LOG_OF_ZERO: u64 = 13;
const LINE_IN_MEMORY: u64 = 14;
const LINE_BIT_TRICK: u64 = 16;
const LINE_REMOVABLE: u64 = 22;
const LINE_JUMP: u64 = 23;
/// An overflow branch's constant infinity times an exact zero: the NaN is the algorithm's.
const LINE_FROM_CONSTANT: u64 = 24;
/// An underflow branch's stored 0, divided by: the wider format would have had e^-x there.
const LINE_STORED_ZERO: u64 = 26;
/// An overflow branch's stored infinity, scaled back into the range: e^710 · 1e-300 = 2.2e8.
const LINE_STORED_INFINITY: u64 = 27;
/// The log of a quotient whose numerator is an underflow branch's stored 0: log(e^-(x+1) / e^-x) = -1.
const LINE_ZERO_QUOTIENT: u64 = 28;
/// A callee's returned constant infinity, scaled back into the range: e^710 · 1e-300.
const LINE_RETURNED_INFINITY: u64 = 30;
/// The same constant times 1e300: beyond the format even from the least value it stands for.
const LINE_RETURNED_OVERFLOW: u64 = 31;

fn inputs() -> Vec<(i32, Vec<u8>)> {
    [
        (1, 709.8),
        (2, 800.0),
        (3, 709.9),
        (4, 400.0),
        (5, 1.0),
        (6, 1.0),
        (7, 709.8),
        (8, 709.8),
        (10, 0.0),
        (11, 0.0),
        (12, 1e301),
        (13, 800.0),
        (14, 710.0),
        (15, 699.5),
        (16, 710.0),
        (18, 710.0),
    ]
    .into_iter()
    .map(|(c, x)| (c, testkit::case_input(c, x)))
    .collect()
}

/// The shadow of the primary result and why it is unreliable, from one run of a shadow build.
fn shadow_of(exe: &Path, bytes: &[u8]) -> (String, Option<String>) {
    primary_shadow(exe, bytes, &[])
}

fn magnitude(decimal: &str) -> f64 {
    decimal
        .parse()
        .unwrap_or_else(|_| panic!("`{decimal}` is not a decimal"))
}

#[test]
fn the_shadow_build_reports_what_the_wider_format_computes() {
    for opt in ["-O0", "-O2"] {
        let built = compile(
            "shadowed",
            &[("shadowed.c", CASES)],
            &[opt],
            &[("NUMFUZZ_CC_SHADOW", "1")],
        );
        let shadow = |c: i32, x: f64| shadow_of(&built.exe, &testkit::case_input(c, x));
        let finite_near = |c: i32, x: f64, want: f64| {
            let (value, unreliable) = shadow(c, x);
            assert_eq!(unreliable, None, "{opt} case {c}");
            let got = magnitude(&value);
            assert!(
                ((got - want) / want).abs() < 1e-12,
                "{opt} case {c}: shadow {value}, want {want}"
            );
        };
        // 2 e^709.8 / 709.8^2, the division bringing the overflow back.
        finite_near(1, 709.8, 7.260_746_272_674_307e302);
        finite_near(2, 800.0, -800.0);
        finite_near(3, 709.9, 1.0 - (-0.1f64).exp());
        // Through a struct in memory and a call taking its address.
        finite_near(7, 709.8, 7.260_746_272_674_307e302);
        // Beyond the format, or infinite, in the shadow too.
        let (value, _) = shadow(4, 400.0);
        assert!(
            value.contains("e347"),
            "{opt}: e^800 in extended precision, got {value}"
        );
        assert_eq!(shadow(5, 1.0), ("inf".to_string(), None), "{opt}");
        assert_eq!(shadow(6, 1.0), ("-inf".to_string(), None), "{opt}");
        // The exponent bits of an overflowed value, read as an integer: the shadow cannot say
        // what the program would have done with a finite value there. (-O2 turns the bit test
        // into a comparison with infinity, which the shadow sees as a branch going the other
        // way.)
        let (_, unreliable) = shadow(8, 709.8);
        let why = unreliable.unwrap_or_else(|| panic!("{opt}: the bit trick's shadow is marked unreliable"));
        let how = if opt == "-O0" { "read as an integer" } else { "branch" };
        assert!(why.contains(how), "{opt}: {why}");
        assert!(why.contains("shadowed.c:1"), "{opt}: where: {why}");
        // The program's own cbrt is shadowed as any function: its overflow comes back.
        finite_near(9, 1e10, 1e10);
        // A NaN made from an infinity (the branch's constant) is the algorithm's, not the
        // function's: the shadow says so instead of calling it undefined.
        let (value, unreliable) = shadow(12, 1e301);
        assert!(value.eq_ignore_ascii_case("nan"), "{opt}: {value}");
        let why = unreliable.unwrap_or_else(|| panic!("{opt}: a NaN born from an infinity is unreliable"));
        // (-O0 keeps `b` in memory, where the infinity is a stored constant.)
        let how = if opt == "-O0" {
            "constant the program stored"
        } else {
            "came from an infinity"
        };
        assert!(why.contains(how), "{opt}: {why}");
        // A zero or an infinity the program stored on a range branch is the algorithm's answer:
        // what comes of it (0/0 then log; Inf · 1e-300) is marked, not undefined or beyond range.
        for (c, x) in [(13, 800.0), (14, 710.0), (15, 699.5)] {
            let (value, unreliable) = shadow(c, x);
            assert!(value.eq_ignore_ascii_case("nan"), "{opt} case {c}: {value}");
            let why = unreliable.unwrap_or_else(|| panic!("{opt} case {c}: a stored constant's result is marked"));
            assert!(why.contains("constant the program stored"), "{opt} case {c}: {why}");
        }
        // Beside the branch, the same functions are shadowed as any: e^-x and e^x come through.
        finite_near(13, 600.0, -1.0);
        finite_near(14, 690.0, 690f64.exp() * 1e-300);
        finite_near(15, 600.0, -1.0);
        finite_near(16, 690.0, 690f64.exp() * 1e-300);
        // A returned constant infinity enters arithmetic as 2^1024, the least it stands for: a
        // product within the format says nothing (marked), one beyond it is a true overflow.
        let (value, unreliable) = shadow(16, 710.0);
        let least = 2f64.powi(1023) * 1e-300 * 2.0;
        assert!((magnitude(&value) - least).abs() < 1e-6 * least, "{opt}: {value}");
        let why = unreliable.unwrap_or_else(|| panic!("{opt}: a bound within the format is marked"));
        assert!(why.contains("constant the program stored or returned"), "{opt}: {why}");
        let (value, unreliable) = shadow(18, 710.0);
        assert!(
            magnitude(&value) > f64::MAX && unreliable.is_none(),
            "{opt}: {value} {unreliable:?}"
        );
        // A returned constant infinity that is only passed on stays the infinity it is.
        assert_eq!(shadow(17, 710.0), ("inf".to_string(), None), "{opt}");
        // An ordinary input: the shadow is the value, to rounding.
        finite_near(1, 3.0, 2.0 * 3f64.exp() / 9.0);
    }
}

fn build() -> Built {
    compile_with_taint_and_shadow("shadowed", &[("shadowed.c", CASES)], &["-O2"])
}

fn triage_json(built: &Built, name: &str) -> Value {
    let root = built.path(name);
    let c = HandCampaign::new(&root, &built.exe, &["default"]);
    for (k, (case, bytes)) in inputs().iter().enumerate() {
        c.crash("default", &format!("id:{k:06},case:{case}"), bytes);
    }
    let o = numfuzz(&["triage", root.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "{}", both(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("triage JSON does not parse: {e}\n{}", both(&o)))
}

fn findings(doc: &Value) -> &Vec<Value> {
    doc["findings"].as_array().expect("findings")
}

/// Lines of the findings that are bugs.
fn bug_lines(doc: &Value) -> BTreeSet<u64> {
    findings(doc)
        .iter()
        .filter(|f| f["class"] == "bug")
        .map(|f| f["location"]["line"].as_u64().unwrap())
        .collect()
}

fn classes_at(doc: &Value, line: u64) -> BTreeSet<String> {
    findings(doc)
        .iter()
        .filter(|f| f["location"]["line"] == line)
        .map(|f| f["class"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn without_an_oracle_the_shadow_tells_spurious_infinities_from_true_ones() {
    let built = build();
    let doc = triage_json(&built, "out");
    assert_eq!(doc["schema_version"], 11);
    assert_eq!(doc["oracle"]["source"], "shadow", "{:#}", doc["oracle"]);
    let spurious = [
        LINE_SPURIOUS,
        LINE_LOG_OF_UNDERFLOW,
        LINE_CANCELLED,
        LINE_IN_MEMORY,
        LINE_BIT_TRICK,
        LINE_REMOVABLE,
        LINE_STORED_ZERO,
        LINE_STORED_INFINITY,
        LINE_ZERO_QUOTIENT,
        LINE_RETURNED_INFINITY,
    ];
    // Escapes whose shadow is unreliable (the bit trick) or provisional (what comes of a stored
    // or returned constant) are not judged: said as such, not counted as bugs.
    let not_judged = [
        LINE_BIT_TRICK,
        LINE_STORED_ZERO,
        LINE_STORED_INFINITY,
        LINE_ZERO_QUOTIENT,
        LINE_RETURNED_INFINITY,
    ];
    let judged_bugs: BTreeSet<u64> = spurious.iter().copied().filter(|l| !not_judged.contains(l)).collect();
    assert_eq!(bug_lines(&doc), judged_bugs, "{doc:#}");
    for line in not_judged {
        assert!(classes_at(&doc, line).contains("not-judged"), "line {line}: {doc:#}");
    }
    // The shadow of 0/0 is NaN too; beside the input it settles on the limit, 1.
    let removable = findings(&doc)
        .iter()
        .find(|f| f["location"]["line"] == LINE_REMOVABLE && f["class"] == "bug")
        .expect("the removable singularity is a bug");
    assert_eq!(removable["reference"]["beside"], true, "{removable:#}");
    assert!(
        (magnitude(removable["reference"]["value"].as_str().unwrap()) - 1.0).abs() < 1e-6,
        "{removable:#}"
    );
    // A NaN the algorithm made from its own infinity (inf * 0, no exception before it to
    // repair) is not called undefined: it stays an unexplained non-finite result.
    assert!(!classes_at(&doc, LINE_FROM_CONSTANT).contains("undefined"), "{doc:#}");
    let unexplained: Vec<&str> = doc["unexplained"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["input"]["path"].as_str().unwrap())
        .collect();
    assert!(unexplained.iter().any(|p| p.ends_with("case:12")), "{unexplained:?}");
    // What comes of a stored or returned constant is not judged either: the 0/0 of the stored
    // zeros, the log of a stored zero's quotient and the inputs of the stored and returned
    // infinities are not judged (no reference), where the shadow alone would have called them
    // undefined and beyond the range.
    let from_constants = [
        LINE_STORED_ZERO,
        LINE_STORED_INFINITY,
        LINE_ZERO_QUOTIENT,
        LINE_RETURNED_INFINITY,
    ];
    for line in from_constants {
        let classes = classes_at(&doc, line);
        assert!(
            !classes.contains("undefined") && !classes.contains("range"),
            "line {line}: {doc:#}"
        );
    }
    // Across a jump the neighbours differ: the NaN stays the answer.
    assert_eq!(classes_at(&doc, LINE_JUMP), BTreeSet::from(["undefined".to_string()]));
    for line in [LINE_TRUE_OVERFLOW, LINE_POLE, LINE_LOG_OF_ZERO, LINE_RETURNED_OVERFLOW] {
        assert_eq!(
            classes_at(&doc, line),
            BTreeSet::from(["range".to_string()]),
            "line {line}"
        );
    }
    for f in findings(&doc).iter().filter(|f| f["class"] == "not-judged") {
        assert_eq!(f["reference"], Value::Null, "an unreliable shadow judges nothing");
    }
    for f in findings(&doc).iter().filter(|f| f["class"] == "bug") {
        let line = f["location"]["line"].as_u64().unwrap();
        let reference = &f["reference"];
        assert_eq!(
            (&reference["source"], &reference["verdict"]),
            (&"shadow".into(), &"wrong".into()),
            "line {line}: {reference:#}"
        );
        assert!(
            magnitude(reference["value"].as_str().unwrap()).is_finite(),
            "{reference:#}"
        );
    }
    assert_eq!(
        doc["oracle"]["unreliable"], 6,
        "the bit trick's input, the NaN from a constant infinity and the four from stored or returned constants"
    );

    // Without the shadow build, every Inf is a bug.
    std::fs::remove_file(built.path("shadowed.shadow")).unwrap();
    let doc = triage_json(&built, "out-without");
    assert_eq!(doc["oracle"], Value::Null);
    let mut all = BTreeSet::from(spurious);
    all.extend([
        LINE_TRUE_OVERFLOW,
        LINE_POLE,
        LINE_LOG_OF_ZERO,
        LINE_JUMP,
        LINE_RETURNED_OVERFLOW,
    ]);
    assert_eq!(bug_lines(&doc), all);
}

#[test]
fn a_shadow_target_that_is_not_one_is_refused_in_one_line() {
    let built = build();
    let root = built.path("out");
    let c = HandCampaign::new(&root, &built.exe, &["default"]);
    c.crash("default", "id:000000", &testkit::case_input(1, 709.8));
    let taint = built.path("shadowed.taint");
    let o = numfuzz(&[
        "triage",
        root.to_str().unwrap(),
        "--shadow-target",
        taint.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let text = both(&o);
    assert_eq!(text.trim().lines().count(), 1, "{text}");
    assert!(
        text.contains("not a shadow build") && text.contains("NUMFUZZ_CC_SHADOW=1"),
        "{text}"
    );
}

/// The true value of each case, with mpmath (the protocol of `--oracle`).
const ORACLE: &str = r#"import json, sys
from mpmath import mp, mpf, exp, expm1, log, sign
mp.prec = 200
for line in sys.stdin:
    q = json.loads(line)
    c, x = int(q["inputs"][0]), mpf(q["inputs"][1])
    if c in (1, 7, 8):
        v = 2 * exp(x) / (x * x)
    elif c == 2:
        v = -x
    elif c == 3:
        v = 1 - exp(mpf("-0.1"))
    elif c == 4:
        v = exp(2 * x)
    elif c == 5:
        v = "inf" if x == 1 else 1 / (x - 1)
    elif c == 6:
        v = "-inf" if x == 1 else log(x - 1)
    elif c == 10:
        v = 1 if x == 0 else expm1(x) / x
    elif c == 12:
        v = 0
    elif c == 13:
        v = -1
    elif c in (14, 16):
        v = exp(x) * mpf("1e-300")
    elif c == 18:
        v = exp(x) * mpf("1e300")
    elif c == 15:
        v = -1
    else:
        v = "nan" if x == 0 else sign(x)
    print(json.dumps({"results": [str(v)]}), flush=True)
"#;

#[test]
fn beside_an_oracle_the_shadow_is_measured_against_it() {
    let built = build();
    let oracle = built.path("oracle.py");
    std::fs::write(&oracle, ORACLE).unwrap();
    let root = built.path("out");
    let c = HandCampaign::new(&root, &built.exe, &["default"]);
    for (k, (case, bytes)) in inputs().iter().enumerate() {
        c.crash("default", &format!("id:{k:06},case:{case}"), bytes);
    }
    let cmd = format!("python3 {}", oracle.display());
    let o = numfuzz(&["triage", root.to_str().unwrap(), "--format", "json", "--oracle", &cmd]);
    assert!(o.status.success(), "{}", both(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["oracle"]["source"], "oracle");
    let a = &doc["shadow_agreement"];
    // Every input escapes; the bit trick's shadow and the NaNs from constants judge nothing.
    assert_eq!(
        (&a["inputs"], &a["judged_by_both"], &a["agreed"]),
        (&16.into(), &10.into(), &10.into()),
        "{a:#}"
    );
    assert_eq!(a["disagreements"], serde_json::json!([]));
    // No declared domains: every input is inside them, with the same table of verdict pairs.
    let inside = &a["in_domain"];
    assert_eq!(
        (&inside["inputs"], &inside["judged_by_both"], &inside["agreed"]),
        (&16.into(), &10.into(), &10.into()),
        "{inside:#}"
    );
    assert_eq!(inside["pairs"], a["pairs"], "{a:#}");
    let pair = |o: &str, s: Value| {
        a["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["oracle"] == o && p["shadow"] == s)
            .map(|p| p["inputs"].as_u64().unwrap())
    };
    assert_eq!(pair("wrong", "wrong".into()), Some(5));
    assert_eq!(pair("unreported-range", "unreported-range".into()), Some(4));
    assert_eq!(pair("undefined", "undefined".into()), Some(1));
    assert_eq!(pair("wrong", Value::Null), Some(6));
    // What judged the 10 the shadow judged: the x87 build alone here (no domains declared).
    assert_eq!(a["judged_by"], serde_json::json!({"shadow": 10}), "{a:#}");
    // The references shown are the oracle's.
    for f in findings(&doc).iter().filter(|f| !f["reference"].is_null()) {
        assert_eq!(f["reference"]["source"], "oracle", "{f:#}");
    }
    let text = numfuzz(&["triage", root.to_str().unwrap(), "--oracle", &cmd]);
    assert!(
        both(&text).contains("the shadow build agrees with it on 10 of the 10 non-finite results both judged"),
        "{}",
        both(&text)
    );
}
