//! The floating-point exception checkers end to end: C compiled with the real numfuzz-cc, run
//! on inputs, the JSON reports asserted (kind, file, line, operation, operands, result), and
//! silence for inputs that raise nothing.

use numfuzz_abi::op::{FloatType, Op};
use numfuzz_abi::report::ExceptionReport;
use numfuzz_abi::signature::Signature;
use numfuzz_abi::site::SiteTable;
use numfuzz_abi::ExceptionKind::{self, DivByZero, Invalid, Overflow, Underflow};
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use testkit::Built;

const HARNESS: &str = include_str!("c/checkers.c");
const SIGNATURE: &str = "u8,f64,f64,f64,f32,f32,f80,f80";

/// The harness built at -O0 and at -O2: the pass runs before the optimizer, so both must
/// report the same.
fn builds() -> [&'static Built; 2] {
    static O0: OnceLock<Built> = OnceLock::new();
    static O2: OnceLock<Built> = OnceLock::new();
    let build = |opt: &str| testkit::compile("checkers", &[("checkers.c", HARNESS)], &[opt, "-lm"], &[]);
    [O0.get_or_init(|| build("-O0")), O2.get_or_init(|| build("-O2"))]
}

/// Line of the harness that carries the marker `@name`.
fn line_of(source: &str, name: &str) -> u32 {
    let marker = format!("/* @{name} */");
    let found: Vec<usize> = source
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(&marker))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(found.len(), 1, "marker {marker} must occur once");
    found[0] as u32
}

/// The harness selector of each case.
fn selector(name: &str) -> u8 {
    const CASES: [&str; 22] = [
        "fsub",
        "fmul",
        "fdiv",
        "fadd",
        "fptosi",
        "fptrunc",
        "sqrt",
        "log",
        "pow",
        "exp",
        "acos",
        "lgamma",
        "fmul_f32",
        "fmul_f80",
        "fused",
        "fma",
        "vector",
        "logl",
        "strict",
        "fptosi_i16",
        "fptoui_u32",
        "fsub_ftz",
    ];
    CASES.iter().position(|c| *c == name).expect("known case") as u8
}

/// An input for case `name`: f64 operands a, b, c (text), f32 and f80 operands from the
/// optional slices (the harness's other fields are zero).
struct Input<'a> {
    case: &'a str,
    f64s: &'a [&'a str],
    f32s: &'a [&'a str],
    f80s: &'a [&'a str],
}

impl Input<'_> {
    fn f64(case: &str, ops: &[&str]) -> Vec<u8> {
        Input {
            case,
            f64s: ops,
            f32s: &[],
            f80s: &[],
        }
        .encode()
    }

    fn encode(&self) -> Vec<u8> {
        let pad = |ops: &[&str], n: usize| {
            let mut v: Vec<String> = ops.iter().map(|s| s.to_string()).collect();
            v.resize(n, "0".into());
            v
        };
        let mut fields = vec![selector(self.case).to_string()];
        fields.extend(pad(self.f64s, 3));
        fields.extend(pad(self.f32s, 2));
        fields.extend(pad(self.f80s, 2));
        let text: Vec<&str> = fields.iter().map(String::as_str).collect();
        Signature::parse(SIGNATURE)
            .unwrap()
            .encode_text(&text)
            .expect("valid input")
    }
}

/// Replaces the 8 bytes of f64 field `field` (1-based like the harness) by `bits`.
fn with_f64_bits(mut input: Vec<u8>, field: usize, bits: u64) -> Vec<u8> {
    let at = 1 + 8 * (field - 1);
    input[at..at + 8].copy_from_slice(&bits.to_le_bytes());
    input
}

/// An expected result that is not checked (a rounded value the test cannot compute).
const ANY: &str = "<any>";

struct Expect<'a> {
    kind: ExceptionKind,
    op: Op,
    ty: FloatType,
    marker: &'a str,
    operands: &'a [&'a str],
    result: Option<&'a str>,
}

fn assert_report(r: &ExceptionReport, e: &Expect, source: &str, file: &str) {
    let what = format!("{r:?}");
    assert_eq!(r.kind, e.kind, "{what}");
    assert_eq!(r.site.op, e.op, "{what}");
    assert_eq!(r.site.ty, e.ty, "{what}");
    assert_eq!(
        Path::new(&r.site.file).file_name().and_then(|f| f.to_str()),
        Some(file),
        "{what}"
    );
    assert_eq!(r.site.line, line_of(source, e.marker), "{what}");
    assert!(r.site.column > 0, "{what}");
    assert_eq!(r.operands, e.operands, "{what}");
    if e.result != Some(ANY) {
        assert_eq!(r.result.as_deref(), e.result, "{what}");
    }
}

/// How each input is run: both builds precisely (as a replay runs), and the -O2 build as a
/// fuzzer runs it, fast first and precisely again only when the FPU's flags or a sentinel
/// show an exception (`NUMFUZZ_PRECISE=0`): a fast run must miss nothing.
fn runs() -> [(&'static Built, &'static [(&'static str, &'static str)]); 3] {
    let [o0, o2] = builds();
    [(o0, &[]), (o2, &[]), (o2, &[("NUMFUZZ_PRECISE", "0")])]
}

/// Runs `input` on both builds and checks the reports are exactly `expected`, in order.
fn check(input: &[u8], expected: &[Expect]) {
    for (built, env) in runs() {
        let reports = testkit::reports_with(&built.exe, input, env);
        assert_eq!(
            reports.len(),
            expected.len(),
            "{} {env:?}: expected {} reports, got {reports:#?}",
            built.exe.display(),
            expected.len()
        );
        for (r, e) in reports.iter().zip(expected) {
            assert_report(r, e, HARNESS, "checkers.c");
        }
    }
}

fn check_silent(input: &[u8]) {
    check(input, &[]);
}

fn f64_case<'a>(
    kind: ExceptionKind,
    op: Op,
    case: &'a str,
    operands: &'a [&'a str],
    result: Option<&'a str>,
) -> Expect<'a> {
    Expect {
        kind,
        op,
        ty: FloatType::F64,
        marker: case,
        operands,
        result,
    }
}

#[test]
fn invalid_arithmetic() {
    check(
        &Input::f64("fsub", &["inf", "inf"]),
        &[f64_case(Invalid, Op::FSub, "fsub", &["inf", "inf"], Some("NaN"))],
    );
    check(
        &Input::f64("fmul", &["0", "-inf"]),
        &[f64_case(Invalid, Op::FMul, "fmul", &["0.0", "-inf"], Some("NaN"))],
    );
    check(
        &Input::f64("fdiv", &["0", "0"]),
        &[f64_case(Invalid, Op::FDiv, "fdiv", &["0.0", "0.0"], Some("NaN"))],
    );
    check_silent(&Input::f64("fsub", &["inf", "1e308"]));
    check_silent(&Input::f64("fmul", &["0", "1e308"]));
}

#[test]
fn division_by_zero() {
    check(
        &Input::f64("fdiv", &["1.5", "-0"]),
        &[f64_case(DivByZero, Op::FDiv, "fdiv", &["1.5", "-0.0"], Some("-inf"))],
    );
    check_silent(&Input::f64("fdiv", &["1.5", "1e-300"]));
    // An infinite dividend divided by zero is exact: no exception.
    check_silent(&Input::f64("fdiv", &["inf", "0"]));
}

#[test]
fn overflow() {
    check(
        &Input::f64("fmul", &["1.7976931348623157e308", "2"]),
        &[f64_case(
            Overflow,
            Op::FMul,
            "fmul",
            &["1.7976931348623157e308", "2.0"],
            Some("inf"),
        )],
    );
    check(
        &Input::f64("fadd", &["1.7976931348623157e308", "1e292"]),
        &[f64_case(
            Overflow,
            Op::FAdd,
            "fadd",
            &["1.7976931348623157e308", "1e292"],
            Some("inf"),
        )],
    );
    // Rounds back to DBL_MAX: not an overflow.
    check_silent(&Input::f64("fadd", &["1.7976931348623157e308", "1e291"]));
}

#[test]
fn underflow_needs_a_tiny_inexact_result() {
    // DBL_MIN (1 + 2^-52) * 0.5 is tiny and must round (to even, 2^-1023): Underflow.
    check(
        &Input::f64("fmul", &["0x1.0000000000001p-1022", "0.5"]),
        &[f64_case(
            Underflow,
            Op::FMul,
            "fmul",
            &["2.225073858507202e-308", "0.5"],
            Some("1.1125369292536007e-308"),
        )],
    );
    check(
        &Input::f64("fdiv", &["1e-300", "1e10"]),
        &[f64_case(
            Underflow,
            Op::FDiv,
            "fdiv",
            &["1e-300", "10000000000.0"],
            Some("1e-310"),
        )],
    );
}

#[test]
fn exact_subnormal_results_are_not_underflows() {
    // DBL_MIN * 0.5 and DBL_MIN / 2^40 are exact subnormals: IEEE raises nothing.
    check_silent(&Input::f64("fmul", &["0x1p-1022", "0.5"]));
    check_silent(&Input::f64("fdiv", &["0x1p-1022", "0x1p40"]));
    // Two close normals whose difference is an exact subnormal.
    check_silent(&Input::f64("fsub", &["0x1.8p-1022", "0x1.4p-1022"]));
    // The smallest subnormal times one is exact too.
    check_silent(&Input::f64("fmul", &["5e-324", "1"]));
}

#[test]
fn under_flush_to_zero_an_exact_subnormal_difference_is_an_underflow() {
    // The same exact subnormal difference as above, with MXCSR's FTZ set: the FPU returns 0
    // and raises Underflow, and so must the checker (it cannot reason from the operands there).
    check(
        &Input::f64("fsub_ftz", &["0x1.8p-1022", "0x1.4p-1022"]),
        &[f64_case(
            Underflow,
            Op::FSub,
            "fsub_ftz",
            &["3.337610787760802e-308", "2.7813423231340017e-308"],
            Some("0.0"),
        )],
    );
}

#[test]
fn nan_operands_propagate_quietly_but_signalling_nans_are_invalid() {
    check_silent(&Input::f64("fmul", &["nan", "2"]));
    check_silent(&Input::f64("fadd", &["nan", "inf"]));
    check_silent(&Input::f64("sqrt", &["nan"]));
    let snan = with_f64_bits(Input::f64("fmul", &["0", "2"]), 1, 0x7ff0_0000_0000_0001);
    for built in builds() {
        let reports = testkit::reports(&built.exe, &snan);
        assert_eq!(reports.len(), 1, "{reports:#?}");
        assert_eq!(reports[0].kind, Invalid);
        assert_eq!(reports[0].site.op, Op::FMul);
        assert_eq!(reports[0].operands_hex[1], "0x1p+1");
        assert_eq!(reports[0].operands[0], "NaN");
    }
}

#[test]
fn conversions() {
    check(
        &Input::f64("fptosi", &["1e300"]),
        &[f64_case(Invalid, Op::FPToSI, "fptosi", &["1e300"], None)],
    );
    check(
        &Input::f64("fptosi", &["-2147483649"]),
        &[f64_case(Invalid, Op::FPToSI, "fptosi", &["-2147483649.0"], None)],
    );
    check_silent(&Input::f64("fptosi", &["-2147483648.9"]));
    // x86-64 converts to a short or an unsigned int through a wider signed integer and raises
    // nothing for these: a fast run's sentinel must still catch them.
    check(
        &Input::f64("fptosi_i16", &["40000"]),
        &[f64_case(Invalid, Op::FPToSI, "fptosi_i16", &["40000.0"], None)],
    );
    check_silent(&Input::f64("fptosi_i16", &["-32768.5"]));
    check(
        &Input::f64("fptoui_u32", &["-1"]),
        &[f64_case(Invalid, Op::FPToUI, "fptoui_u32", &["-1.0"], None)],
    );
    check(
        &Input::f64("fptoui_u32", &["4294967296"]),
        &[f64_case(Invalid, Op::FPToUI, "fptoui_u32", &["4294967296.0"], None)],
    );
    check_silent(&Input::f64("fptoui_u32", &["-0.75"]));
    check_silent(&Input::f64("fptoui_u32", &["4294967295.5"]));
    check(
        &Input::f64("fptrunc", &["1e300"]),
        &[f64_case(Overflow, Op::FPTrunc, "fptrunc", &["1e300"], Some("inf"))],
    );
    check(
        &Input::f64("fptrunc", &["1e-40"]),
        &[f64_case(Underflow, Op::FPTrunc, "fptrunc", &["1e-40"], Some("1e-40"))],
    );
    // An f32 subnormal that narrows exactly.
    check_silent(&Input::f64("fptrunc", &["0x1p-140"]));
    check_silent(&Input::f64("fptrunc", &["3.4028234663852886e38"]));
    for built in builds() {
        let reports = testkit::reports(&built.exe, &Input::f64("fptosi", &["1e300"]));
        assert_eq!(reports[0].site.to.as_deref(), Some("i32"));
        let reports = testkit::reports(&built.exe, &Input::f64("fptrunc", &["1e300"]));
        assert_eq!(reports[0].site.to.as_deref(), Some("f32"));
    }
}

#[test]
fn libm_domain_errors_poles_and_range_errors() {
    // (case, input operands, kind, operation, reported operands, reported result)
    let raising = |case: &str, input: &[&str], kind, op, operands: &[&str], result: &str| {
        check(
            &Input::f64(case, input),
            &[Expect {
                kind,
                op,
                ty: FloatType::F64,
                marker: case,
                operands,
                result: Some(result),
            }],
        )
    };
    raising("sqrt", &["-1"], Invalid, Op::Sqrt, &["-1.0"], "NaN");
    raising("log", &["0"], DivByZero, Op::Log, &["0.0"], "-inf");
    raising("log", &["-1"], Invalid, Op::Log, &["-1.0"], "NaN");
    raising("pow", &["0", "-1"], DivByZero, Op::Pow, &["0.0", "-1.0"], "inf");
    let third = "0.3333333333333333";
    raising("pow", &["-8", third], Invalid, Op::Pow, &["-8.0", third], "NaN");
    raising("pow", &["10", "400"], Overflow, Op::Pow, &["10.0", "400.0"], "inf");
    raising("exp", &["710"], Overflow, Op::Exp, &["710.0"], "inf");
    raising("exp", &["-746"], Underflow, Op::Exp, &["-746.0"], "0.0");
    raising("exp", &["-740"], Underflow, Op::Exp, &["-740.0"], "4.2e-322");
    raising("acos", &["2"], Invalid, Op::Acos, &["2.0"], "NaN");
    raising("lgamma", &["-2"], DivByZero, Op::Lgamma, &["-2.0"], "inf");
    raising("lgamma", &["1e306"], Overflow, Op::Lgamma, &["1e306"], "inf");
    for (case, input) in [
        ("sqrt", &["-0"][..]),
        ("sqrt", &["4"]),
        ("log", &["1"]),
        ("log", &["5e-324"]),
        ("pow", &["0", "1"]),
        ("pow", &["-8", "3"]),
        ("pow", &["2", "-1074"]),
        ("exp", &["709.7"]),
        ("exp", &["-708"]),
        ("exp", &["-inf"]),
        ("acos", &["1"]),
        ("lgamma", &["-2.5"]),
        ("lgamma", &["1"]),
    ] {
        check_silent(&Input::f64(case, input));
    }
}

#[test]
fn float_and_long_double_operations() {
    let f32_input = Input {
        case: "fmul_f32",
        f64s: &[],
        f32s: &["3e38", "-2"],
        f80s: &[],
    }
    .encode();
    check(
        &f32_input,
        &[Expect {
            kind: Overflow,
            op: Op::FMul,
            ty: FloatType::F32,
            marker: "fmul_f32",
            operands: &["3e38", "-2.0"],
            result: Some("-inf"),
        }],
    );
    let f80 = |a: &'static [&'static str]| {
        Input {
            case: "fmul_f80",
            f64s: &[],
            f32s: &[],
            f80s: a,
        }
        .encode()
    };
    check(
        &f80(&["1e4000", "1e1000"]),
        &[Expect {
            kind: Overflow,
            op: Op::FMul,
            ty: FloatType::F80,
            marker: "fmul_f80",
            operands: &["1e4000", "1e1000"],
            result: Some("inf"),
        }],
    );
    // 1e300 * 1e300 overflows a double, not a long double.
    check_silent(&f80(&["1e300", "1e300"]));
    check(
        &f80(&["1e-4000", "1e-940"]),
        &[Expect {
            kind: Underflow,
            op: Op::FMul,
            ty: FloatType::F80,
            marker: "fmul_f80",
            operands: &["1e-4000", "1e-940"],
            result: Some(ANY),
        }],
    );
    let logl = Input {
        case: "logl",
        f64s: &[],
        f32s: &[],
        f80s: &["-0"],
    }
    .encode();
    check(
        &logl,
        &[Expect {
            kind: DivByZero,
            op: Op::Log,
            ty: FloatType::F80,
            marker: "logl",
            operands: &["-0.0"],
            result: Some("-inf"),
        }],
    );
}

#[test]
fn source_level_multiply_add_is_two_checked_operations() {
    // a*b overflows, and inf + (-inf) is invalid: both operations are checked separately.
    check(
        &Input::f64("fused", &["1e300", "1e300", "-inf"]),
        &[
            f64_case(Overflow, Op::FMul, "fused", &["1e300", "1e300"], Some("inf")),
            f64_case(Invalid, Op::FAdd, "fused", &["inf", "-inf"], Some("NaN")),
        ],
    );
    let max = "1.7976931348623157e308";
    check(
        &Input::f64("fused", &[max, "2", &format!("-{max}")]),
        &[f64_case(Overflow, Op::FMul, "fused", &[max, "2.0"], Some("inf"))],
    );
    // fma rounds once: DBL_MAX * 2 - DBL_MAX is DBL_MAX exactly.
    check_silent(&Input::f64("fma", &[max, "2", &format!("-{max}")]));
    check(
        &Input::f64("fma", &["1e300", "1e300", "1"]),
        &[f64_case(
            Overflow,
            Op::Fma,
            "fma",
            &["1e300", "1e300", "1.0"],
            Some("inf"),
        )],
    );
    check(
        &Input::f64("fma", &["0", "inf", "1"]),
        &[f64_case(Invalid, Op::Fma, "fma", &["0.0", "inf", "1.0"], Some("NaN"))],
    );
    // The two operations have their own columns on the same line.
    let reports = testkit::reports(&builds()[0].exe, &Input::f64("fused", &["1e300", "1e300", "-inf"]));
    assert!(reports[0].site.column < reports[1].site.column, "{reports:#?}");
}

#[test]
fn vector_lanes_are_checked_one_by_one() {
    // The premise: the harness's `x * y` is one <2 x double> multiplication in the IR.
    let dir = testkit::TempDir::new().unwrap();
    let src = dir.path().join("checkers.c");
    std::fs::write(&src, HARNESS).unwrap();
    let ir = Command::new(testkit::Tools::get().cc())
        .args(["-S", "-emit-llvm", "-o", "-"])
        .arg(&src)
        .output()
        .unwrap();
    assert!(ir.status.success(), "{}", String::from_utf8_lossy(&ir.stderr));
    assert!(String::from_utf8_lossy(&ir.stdout).contains("fmul <2 x double>"));

    // Lane 0 overflows.
    check(
        &Input::f64("vector", &["1e300", "1", "1e10"]),
        &[f64_case(
            Overflow,
            Op::FMul,
            "vector",
            &["1e300", "10000000000.0"],
            Some("inf"),
        )],
    );
    // Lane 1 overflows.
    check(
        &Input::f64("vector", &["1", "2e300", "1e10"]),
        &[f64_case(
            Overflow,
            Op::FMul,
            "vector",
            &["2e300", "10000000000.0"],
            Some("inf"),
        )],
    );
    // Lane 0 underflows and lane 1 overflows: two kinds at one site, in lane order.
    check(
        &Input::f64("vector", &["1e-320", "1e305", "100000.1"]),
        &[
            f64_case(Underflow, Op::FMul, "vector", &["1e-320", "100000.1"], Some(ANY)),
            f64_case(Overflow, Op::FMul, "vector", &["1e305", "100000.1"], Some("inf")),
        ],
    );
    check_silent(&Input::f64("vector", &["1", "2", "1e10"]));
    // One site for both lanes.
    let table = site_table(&builds()[0].exe);
    let line = line_of(HARNESS, "vector");
    assert_eq!(table.sites.iter().filter(|s| s.line == line).count(), 1);
}

#[test]
fn code_with_fenv_access_is_checked() {
    check(
        &Input::f64("strict", &["1e300", "-1e300"]),
        &[f64_case(
            Overflow,
            Op::FMul,
            "strict",
            &["1e300", "-1e300"],
            Some("-inf"),
        )],
    );
    check_silent(&Input::f64("strict", &["1e150", "-1e150"]));
}

#[test]
fn ordinary_inputs_raise_nothing_anywhere() {
    for case in [
        "fsub", "fmul", "fdiv", "fadd", "fptosi", "fptrunc", "sqrt", "log", "pow", "exp", "acos", "lgamma", "fused",
        "fma", "vector", "strict",
    ] {
        check_silent(&Input::f64(case, &["0.75", "1.5", "2.5"]));
    }
    for case in ["fmul_f32", "fmul_f80", "logl"] {
        check_silent(
            &Input {
                case,
                f64s: &[],
                f32s: &["0.75", "1.5"],
                f80s: &["0.75", "1.5"],
            }
            .encode(),
        );
    }
}

fn site_table(exe: &Path) -> SiteTable {
    let out = testkit::run(exe, &[], &[], &[("NUMFUZZ_SITES", "-")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("site table JSON")
}

#[test]
fn every_operation_of_the_harness_is_a_site() {
    for built in builds() {
        let table = site_table(&built.exe);
        let mut expected: Vec<(u32, Op)> = [
            ("fsub", Op::FSub),
            ("fmul", Op::FMul),
            ("fdiv", Op::FDiv),
            ("fadd", Op::FAdd),
            ("fptosi", Op::FPToSI),
            ("fptrunc", Op::FPTrunc),
            ("sqrt", Op::Sqrt),
            ("log", Op::Log),
            ("pow", Op::Pow),
            ("exp", Op::Exp),
            ("acos", Op::Acos),
            ("lgamma", Op::Lgamma),
            ("fmul_f32", Op::FMul),
            ("fmul_f80", Op::FMul),
            ("fused", Op::FMul),
            ("fused", Op::FAdd),
            ("fma", Op::Fma),
            ("vector", Op::FMul),
            ("logl", Op::Log),
            ("strict", Op::FMul),
            ("fptosi_i16", Op::FPToSI),
            ("fptoui_u32", Op::FPToUI),
            ("fsub_ftz", Op::FSub),
        ]
        .iter()
        .map(|(m, op)| (line_of(HARNESS, m), *op))
        .collect();
        let mut found: Vec<(u32, Op)> = table.sites.iter().map(|s| (s.line, s.op)).collect();
        expected.sort_by_key(|(l, op)| (*l, *op as u16));
        found.sort_by_key(|(l, op)| (*l, *op as u16));
        assert_eq!(found, expected, "{}", built.exe.display());
    }
}

#[test]
fn operation_in_a_static_library_is_located_in_the_library_source() {
    let dir = testkit::TempDir::new().unwrap();
    let lib_dir = dir.path().join("lib");
    std::fs::create_dir(&lib_dir).unwrap();
    std::fs::write(
        lib_dir.join("scale.c"),
        "double lib_scale(double x, double y) {\n  double r = x * y;\n  return r / y;\n}\n",
    )
    .unwrap();
    let tools = testkit::Tools::get();
    let cc = Command::new(tools.cc())
        .current_dir(&lib_dir)
        .args(["-O1", "-c", "scale.c"])
        .output()
        .unwrap();
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));
    let ar = Command::new("ar")
        .current_dir(&lib_dir)
        .args(["rcs", "libscale.a", "scale.o"])
        .output()
        .expect("ar (binutils) is installed");
    assert!(ar.status.success(), "{}", String::from_utf8_lossy(&ar.stderr));
    std::fs::write(
        dir.path().join("harness.c"),
        "#include <numfuzz.h>\nNUMFUZZ_SIGNATURE(\"f64,f64\");\ndouble lib_scale(double, double);\n\
         volatile double sink;\n\
         int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n\
           sink = lib_scale(nf_f64(data, size, 0), nf_f64(data, size, 1));\n  return 0;\n}\n",
    )
    .unwrap();
    let link = Command::new(tools.cc())
        .current_dir(dir.path())
        .args(["harness.c", "-Llib", "-lscale", "-o", "harness"])
        .output()
        .unwrap();
    assert!(link.status.success(), "{}", String::from_utf8_lossy(&link.stderr));
    let exe = dir.path().join("harness");

    let reports = testkit::reports(&exe, &testkit::f64s(&[1e300, 1e300]));
    assert_eq!(reports.len(), 1, "{reports:#?}");
    let r = &reports[0];
    assert_eq!((r.kind, r.site.op, r.site.line), (Overflow, Op::FMul, 2));
    assert_eq!(r.site.file, "scale.c");
    assert!(r.site.directory.ends_with("lib"), "{}", r.site.directory);
    assert_eq!(r.site.function, "lib_scale");
    assert_eq!(r.operands, ["1e300", "1e300"]);

    let reports = testkit::reports(&exe, &testkit::f64s(&[1.0, 0.0]));
    assert_eq!(reports.len(), 1, "{reports:#?}");
    assert_eq!(
        (reports[0].kind, reports[0].site.op, reports[0].site.line),
        (Invalid, Op::FDiv, 3)
    );
    assert!(testkit::reports(&exe, &testkit::f64s(&[3.0, 4.0])).is_empty());
}

const CPP_HARNESS: &str = r#"#include <numfuzz.h>
#include <cmath>

NUMFUZZ_SIGNATURE("f64,f64,f32,f32");

template <typename T> inline T scaled(T x, T y) {
  return x * y; // @scaled
}

struct Ratio {
  double num, den;
  double value() const { return num / den; } // @value
};

volatile double sink;
volatile float sink_f;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double a = nf_f64(data, size, 0), b = nf_f64(data, size, 1);
  float fa = nf_f32(data, size, 2), fb = nf_f32(data, size, 3);
  sink = scaled(a, b);
  sink_f = scaled(fa, fb);
  sink = Ratio{a, b}.value();
  sink = std::sqrt(b - a); // @sqrt
  return 0;
}
"#;

#[test]
fn cxx_templates_and_inline_members_are_checked() {
    let built = testkit::compile("harness", &[("harness.cc", CPP_HARNESS)], &["-O1"], &[]);
    let line = |marker: &str| {
        CPP_HARNESS
            .lines()
            .position(|l| l.contains(&format!("// @{marker}")))
            .unwrap() as u32
            + 1
    };
    let input = |a: f64, b: f64, fa: f32, fb: f32| {
        let mut v = testkit::f64s(&[a, b]);
        v.extend(testkit::f32s(&[fa, fb]));
        v
    };
    let reports = testkit::reports(&built.exe, &input(1e300, 1e300, 2.0, 3.0));
    let got: Vec<_> = reports
        .iter()
        .map(|r| (r.kind, r.site.op, r.site.ty, r.site.line, r.site.function.as_str()))
        .collect();
    assert_eq!(
        got,
        [(
            Overflow,
            Op::FMul,
            FloatType::F64,
            line("scaled"),
            "double scaled<double>(double, double)"
        )]
    );
    assert!(reports[0].site.file.ends_with("harness.cc"));

    let reports = testkit::reports(&built.exe, &input(2.0, 0.0, 3e38, 3e38));
    let got: Vec<_> = reports
        .iter()
        .map(|r| (r.kind, r.site.op, r.site.ty, r.site.line, r.site.function.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (
                Overflow,
                Op::FMul,
                FloatType::F32,
                line("scaled"),
                "float scaled<float>(float, float)"
            ),
            (
                DivByZero,
                Op::FDiv,
                FloatType::F64,
                line("value"),
                "Ratio::value() const"
            ),
            (
                Invalid,
                Op::Sqrt,
                FloatType::F64,
                line("sqrt"),
                "LLVMFuzzerTestOneInput"
            ),
        ]
    );
    assert!(testkit::reports(&built.exe, &input(2.0, 3.0, 2.0, 3.0)).is_empty());
}

/// Recurrences: after a site's Overflow is recorded, its later infinite results need no
/// classification, but the same quotient dividing by zero is still a DivByZero of its own; an
/// infinity or a quiet NaN carried along a loop raises nothing at any step.
#[test]
fn recurring_and_carried_results_are_reported_once_and_only_where_raised() {
    const SOURCE: &str = include_str!("c/recurrences.c");
    static BUILT: OnceLock<Built> = OnceLock::new();
    let built = BUILT.get_or_init(|| testkit::compile("recurrences", &[("recurrences.c", SOURCE)], &["-O2"], &[]));
    let input = testkit::f64s(&[1e300, 1e-300, f64::NAN]);
    for env in [&[][..], &[("NUMFUZZ_PRECISE", "0")][..]] {
        let reports = testkit::reports_with(&built.exe, &input, env);
        let seen: Vec<_> = reports.iter().map(|r| (r.kind, r.site.op, r.site.line)).collect();
        let line = |marker| line_of(SOURCE, marker);
        assert_eq!(
            seen,
            [
                (Overflow, Op::FDiv, line("quotient")),
                (DivByZero, Op::FDiv, line("quotient")),
                (Overflow, Op::FMul, line("doubling")),
            ],
            "{env:?}: {reports:#?}"
        );
        assert_eq!(reports[0].operands, ["1e300", "1e-300"], "{env:?}");
        assert_eq!(reports[1].operands, ["1e300", "0.0"], "{env:?}");
        assert_eq!(reports[2].operands[1], "2.0", "{env:?}");
        assert_eq!(reports[2].result.as_deref(), Some("inf"), "{env:?}");
    }
}
