//! `numfuzz harness` end to end on examples/mathlib: the manifest's harnesses, signatures and
//! skipped functions; `--build` with the example's build.sh (four binaries per function, one
//! replayed to its overflow and triaged against the example's oracle); and the one-line
//! errors of a header clang cannot parse, an unknown conventions key and a failing build.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use testkit::{both, numfuzz, HandCampaign, TempDir};

fn mathlib() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/mathlib")
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn tempdir() -> TempDir {
    tempfile::Builder::new().prefix("numfuzz-harness-").tempdir().unwrap()
}

/// `numfuzz harness mathlib.h -o OUT --conventions conventions.toml EXTRA...`.
fn harness(out: &Path, extra: &[&str]) -> std::process::Output {
    let header = mathlib().join("mathlib.h");
    let conventions = mathlib().join("conventions.toml");
    let mut args = vec![
        "harness",
        path(&header),
        "-o",
        path(out),
        "--conventions",
        path(&conventions),
    ];
    args.extend_from_slice(extra);
    numfuzz(&args)
}

fn manifest(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap()
}

/// `results` as `(name, primary)` pairs.
fn entry(function: &str, signature: &str, results: &[(&str, bool)], int_return: Value, oracle: Value) -> Value {
    let results: Vec<Value> = results
        .iter()
        .map(|(name, primary)| json!({"name": name, "primary": primary}))
        .collect();
    json!({"function": function, "source": format!("src/{function}.c"), "header": "mathlib.h",
           "signature": signature, "results": results, "int_return": int_return, "oracle": oracle})
}

#[test]
fn the_example_library_gets_one_harness_per_scalar_function_and_the_rest_are_listed_with_reasons() {
    let dir = tempdir();
    let out = dir.path().join("h");
    let o = harness(&out, &[]);
    assert!(o.status.success(), "{}", both(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("harnessed 10 functions of 13 in 1 headers; skipped 3 (see "),
        "{stdout}"
    );
    let m = manifest(&out);
    assert_eq!(m["schema_version"], 2);
    let header = mathlib().join("mathlib.h").canonicalize().unwrap();
    assert_eq!(m["headers"], json!([header.to_str().unwrap()]));
    let null = Value::Null;
    let expected = json!([
        entry(
            "ml_exp_ratio",
            "f64",
            &[("return", true)],
            null.clone(),
            json!("ml_exp_ratio")
        ),
        entry(
            "ml_log_sigmoid",
            "f64",
            &[("return", true)],
            null.clone(),
            json!("ml_log_sigmoid")
        ),
        entry(
            "ml_hypotf",
            "f32,f32",
            &[("return", true)],
            null.clone(),
            json!("ml_hypotf")
        ),
        entry("ml_expm1l", "f80", &[("return", true)], null.clone(), null.clone()),
        entry(
            "ml_round",
            "f64,i32[0,2]",
            &[("return", true)],
            null.clone(),
            null.clone()
        ),
        entry(
            "ml_scale",
            "f64,i8,u8[0,1]",
            &[("return", true)],
            null.clone(),
            null.clone()
        ),
        entry(
            "ml_pow_int_e",
            "f64,i32[-1000,1000]",
            &[("out", true)],
            json!("status"),
            json!("ml_pow_int_e")
        ),
        entry(
            "ml_harmonic_mean_e",
            "f64,f64",
            &[("result.val", true), ("result.err", false)],
            json!("status"),
            json!("ml_harmonic_mean_e")
        ),
        entry(
            "ml_sincos",
            "f64",
            &[("s", true), ("c", true)],
            null.clone(),
            null.clone()
        ),
        entry(
            "ml_exponent",
            "f64",
            &[("return", false)],
            json!("value"),
            json!("ml_exponent")
        ),
    ]);
    assert_eq!(m["harnesses"], expected, "{:#}", m["harnesses"]);
    let skipped = json!([
        {"function": "ml_mean", "header": "mathlib.h", "parameter": "xs",
         "reason": "`const double *xs` is not a scalar input or a floating-point output (a pointer to input data)"},
        {"function": "ml_integrate", "header": "mathlib.h", "parameter": null,
         "reason": "needs a callback (the integrand)"},
        {"function": "ml_digits", "header": "mathlib.h", "parameter": null, "reason": "no floating-point value"},
    ]);
    assert_eq!(m["skipped"], skipped, "{:#}", m["skipped"]);
    let md = std::fs::read_to_string(out.join("skipped.md")).unwrap();
    assert!(
        md.contains("- `ml_digits` (mathlib.h): no floating-point value"),
        "{md}"
    );
    for h in expected.as_array().unwrap() {
        assert!(out.join(h["source"].as_str().unwrap()).is_file(), "{h}");
    }
    // The status convention and the int bound show in the C text.
    let pow = std::fs::read_to_string(out.join("src/ml_pow_int_e.c")).unwrap();
    assert!(pow.contains("  int ret = ml_pow_int_e(in_x, in_n, &out_out);"), "{pow}");
    assert!(pow.contains("    NUMFUZZ_HANDLED();"), "{pow}");
    assert!(pow.contains("  if (beyond_bound(in_n))"), "{pow}");
}

#[test]
fn include_and_exclude_select_functions_by_name() {
    let dir = tempdir();
    let out = dir.path().join("h");
    let o = harness(&out, &["--include", "^ml_(exp|log)", "--exclude", "sigmoid"]);
    assert!(o.status.success(), "{}", both(&o));
    let m = manifest(&out);
    let names: Vec<&str> = m["harnesses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["function"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ml_exp_ratio", "ml_expm1l", "ml_exponent"]);
}

#[test]
fn build_makes_four_binaries_per_harness_and_the_fuzz_one_replays_to_the_overflow() {
    let dir = tempdir();
    let out = dir.path().join("h");
    let build = mathlib().join("build.sh");
    let o = harness(
        &out,
        &["--include", "^ml_(exp_ratio|harmonic_mean_e)$", "--build", path(&build)],
    );
    assert!(o.status.success(), "{}", both(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("built 8 of 8 harness binaries"),
        "{}",
        both(&o)
    );
    for f in ["ml_exp_ratio", "ml_harmonic_mean_e"] {
        for suffix in ["", ".taint", ".shadow", ".mpfr"] {
            assert!(out.join("bin").join(format!("{f}{suffix}")).is_file(), "{f}{suffix}");
        }
    }
    for v in ["fuzz", "taint", "shadow", "mpfr"] {
        assert!(out.join("build").join(v).join("libmathlib.a").is_file(), "{v}");
    }
    let exe = out.join("bin/ml_exp_ratio");
    let input = dir.path().join("x710");
    std::fs::write(&input, 710.0f64.to_le_bytes()).unwrap();
    let r = numfuzz(&["replay", path(&exe), path(&input)]);
    let text = both(&r);
    assert!(r.status.success(), "{text}");
    assert!(
        text.contains("Overflow  ")
            && text.contains("mathlib.c:10:44")
            && text.contains("in ml_exp_ratio: exp(710.0) = inf"),
        "{text}"
    );

    // Triage with the taint build beside it and the example's oracle: one bug, a wrong value.
    let camp = HandCampaign::new(&dir.path().join("out"), &exe, &["default"]);
    camp.crash("default", "id:000000,time:1", &710.0f64.to_le_bytes());
    let oracle = mathlib().join("oracle.py");
    let t = numfuzz(&[
        "triage",
        path(&camp.root),
        "--format",
        "json",
        "--oracle",
        path(&oracle),
    ]);
    assert!(t.status.success(), "{}", both(&t));
    let doc: Value = serde_json::from_slice(&t.stdout).unwrap();
    assert_eq!(doc["summary"]["bugs"], 1, "{doc:#}");
}

#[test]
fn the_conventions_error_hook_is_named_to_every_build_of_the_library() {
    let dir = tempdir();
    let out = dir.path().join("h");
    let conventions = dir.path().join("conventions.toml");
    let text = std::fs::read_to_string(mathlib().join("conventions.toml")).unwrap();
    let text = text.replacen("[defaults]\n", "[defaults]\nerror_hook = \"ml_report\"\n", 1);
    std::fs::write(&conventions, text).unwrap();
    let build = format!(
        "echo \"$NUMFUZZ_CC_ERROR_HOOK\" > \"$NUMFUZZ_BUILD_DIR/hook\" && sh {}",
        path(&mathlib().join("build.sh"))
    );
    let header = mathlib().join("mathlib.h");
    let o = numfuzz(&[
        "harness",
        path(&header),
        "-o",
        path(&out),
        "--conventions",
        path(&conventions),
        "--include",
        "^ml_exp_ratio$",
        "--build",
        &build,
    ]);
    assert!(o.status.success(), "{}", both(&o));
    for v in ["fuzz", "taint", "shadow", "mpfr"] {
        let hook = std::fs::read_to_string(out.join("build").join(v).join("hook")).unwrap();
        assert_eq!(hook.trim(), "ml_report", "{v}");
    }
}

#[test]
fn a_failing_library_build_names_its_variant_and_log_in_one_line() {
    let dir = tempdir();
    let out = dir.path().join("h");
    let o = harness(
        &out,
        &[
            "--include",
            "^ml_exp_ratio$",
            "--build",
            "echo no compiler here; exit 3",
        ],
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    let log = out.join("build/fuzz.log");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("the fuzz build of the library failed") && err.contains(path(&log)),
        "{err}"
    );
    assert!(std::fs::read_to_string(&log).unwrap().contains("no compiler here"));
}

#[test]
fn a_header_clang_cannot_parse_is_one_line_naming_the_file_and_line() {
    let dir = tempdir();
    let h = dir.path().join("broken.h");
    std::fs::write(&h, "double fine(double x);\ndouble broken(double x, );\n").unwrap();
    let out = dir.path().join("h");
    let o = numfuzz(&["harness", path(&h), "-o", path(&out)]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&format!("{}:2:", h.display())), "{err}");
    assert!(err.starts_with("numfuzz: error: clang cannot parse"), "{err}");
}

#[test]
fn an_unknown_conventions_key_is_one_line_naming_the_file_and_line() {
    let dir = tempdir();
    let conv = dir.path().join("conv.toml");
    std::fs::write(
        &conv,
        "[defaults]\nint_return = \"status\"\n\n[function.ml_exp_ratio]\norcale = \"x\"\n",
    )
    .unwrap();
    let header = mathlib().join("mathlib.h");
    let out = dir.path().join("h");
    let o = numfuzz(&["harness", path(&header), "-o", path(&out), "--conventions", path(&conv)]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "conventions file `{}`:5: unknown field `orcale`",
            conv.display()
        )),
        "{err}"
    );
}

/// A header of one function whose prototype has no parameter names, as many libraries write.
const UNNAMED_HEADER: &str = "double cdf(double, double, double, int, int);\nint cdf_e(double x, double *sgn);\n";

/// `numfuzz harness unnamed.h -o DIR/h --conventions DIR/conv.toml EXTRA...` with `conventions`.
fn harness_unnamed(dir: &Path, conventions: &str, extra: &[&str]) -> std::process::Output {
    let header = dir.join("unnamed.h");
    std::fs::write(&header, UNNAMED_HEADER).unwrap();
    let conv = dir.join("conv.toml");
    std::fs::write(&conv, conventions).unwrap();
    let out = dir.join("h");
    let mut args = vec!["harness", path(&header), "-o", path(&out), "--conventions", path(&conv)];
    args.extend_from_slice(extra);
    numfuzz(&args)
}

/// The one line of a failed run's stderr; asserts that it failed and wrote nothing.
fn one_line_error(dir: &Path, o: &std::process::Output) -> String {
    assert!(!o.status.success(), "{}", both(o));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!dir.join("h").exists(), "an error wrote {}", dir.join("h").display());
    err
}

#[test]
fn unnamed_parameters_are_named_by_position_in_the_conventions() {
    let dir = tempdir();
    let o = harness_unnamed(dir.path(), "[function.cdf]\ndomain = { arg0 = \"[0,1]\" }\n", &[]);
    assert!(o.status.success(), "{}", both(&o));
    let m = manifest(&dir.path().join("h"));
    assert_eq!(m["harnesses"][0]["signature"], "f64[0,1],f64,f64,i32,i32", "{m:#}");

    let dir = tempdir();
    let o = harness_unnamed(dir.path(), "[function.cdf]\n\ndomain = { x = \"[0,1]\" }\n", &[]);
    let err = one_line_error(dir.path(), &o);
    let conv = dir.path().join("conv.toml");
    assert!(
        err.contains(&format!(
            "conventions file `{}`:3: [function.cdf] domain names `x`, which is no parameter of cdf \
             (its parameters: arg0, arg1, arg2, arg3, arg4; a parameter the header leaves unnamed is argK",
            conv.display()
        )),
        "{err}"
    );
}

#[test]
fn a_parameter_table_that_matches_no_parameter_is_one_line_naming_the_parameters() {
    let dir = tempdir();
    let o = harness_unnamed(
        dir.path(),
        "[defaults]\nint_bound = 10\n[parameter.log_p]\nresult = \"named\"\n",
        &[],
    );
    let err = one_line_error(dir.path(), &o);
    assert!(
        err.contains(":3: [parameter.log_p] names no parameter of any function the headers declare (their parameters: arg0, arg1, arg2, arg3, arg4, sgn, x;"),
        "{err}"
    );
}

#[test]
fn a_role_that_names_no_parameter_of_its_function_is_one_line_naming_them() {
    let dir = tempdir();
    let o = harness_unnamed(dir.path(), "[function.cdf]\nrole = { sgn = \"output\" }\n", &[]);
    let err = one_line_error(dir.path(), &o);
    assert!(
        err.contains(":2: [function.cdf] role names `sgn`, which is no parameter of cdf (its parameters: arg0, arg1,"),
        "{err}"
    );
}

#[test]
fn a_function_no_header_declares_is_an_error_unless_the_conventions_describe_other_headers_too() {
    let conventions = "[function.cdf_e]\nresult = { sgn = \"named\" }\n[function.pdf]\nskip = \"no\"\n";
    let dir = tempdir();
    let err = one_line_error(dir.path(), &harness_unnamed(dir.path(), conventions, &[]));
    assert!(
        err.contains(":3: [function.pdf] names no function the headers declare"),
        "{err}"
    );

    // A file that describes other headers too: a warning, and the harnesses are written.
    let shared = format!("[defaults]\nother_headers = true\n{conventions}");
    let o = harness_unnamed(dir.path(), &shared, &[]);
    assert!(o.status.success(), "{}", both(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("warning: ") && err.contains("[function.pdf] names no function"),
        "{err}"
    );

    // A function the filters leave out is still declared: its table is no mistake.
    let dir = tempdir();
    let o = harness_unnamed(
        dir.path(),
        conventions.split("[function.pdf]").next().unwrap(),
        &["--include", "^cdf$"],
    );
    assert!(o.status.success(), "{}", both(&o));
}

#[test]
fn list_prints_each_function_s_parameters_types_and_uses_and_writes_nothing() {
    let dir = tempdir();
    let o = harness_unnamed(
        dir.path(),
        "[function.cdf_e]\nresult = { sgn = \"named\" }\n",
        &["--list"],
    );
    assert!(o.status.success(), "{}", both(&o));
    assert!(!dir.path().join("h").exists(), "--list wrote to -o");
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split_whitespace().collect()).collect();
    let expected: &[&[&str]] = &[
        &["cdf", "(unnamed.h):", "harnessed,", "signature", "f64,f64,f64,i32,i32"],
        &["arg0", "(unnamed)", "double", "input", "f64"],
        &["arg1", "(unnamed)", "double", "input", "f64"],
        &["arg2", "(unnamed)", "double", "input", "f64"],
        &["arg3", "(unnamed)", "int", "input", "i32"],
        &["arg4", "(unnamed)", "int", "input", "i32"],
        &["return", "double", "result", "return", "(primary)"],
        &["cdf_e", "(unnamed.h):", "harnessed,", "signature", "f64"],
        &["x", "double", "input", "f64"],
        &["sgn", "double", "*", "result", "sgn", "(named)"],
        &["return", "int", "result", "return", "(named)"],
    ];
    assert_eq!(lines, expected, "{text}");

    // Without -o, filtered.
    let header = dir.path().join("unnamed.h");
    let o = numfuzz(&["harness", path(&header), "--list", "--include", "_e$"]);
    assert!(o.status.success(), "{}", both(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.starts_with("cdf_e (unnamed.h): ") && !text.contains("\ncdf "),
        "{text}"
    );
}

/// A header that is a symlink under an include directory (GSL's build tree links
/// `gsl/gsl_cdf.h` to `cdf/gsl_cdf.h`) is included by its path there, which the include
/// directory finds, not by its target's file name, which nothing on the include path does.
#[test]
fn a_symlinked_header_is_included_by_its_path_under_the_include_directory() {
    let dir = tempdir();
    let src = dir.path().join("src/cdf");
    let inc = dir.path().join("include/lib");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(&inc).unwrap();
    std::fs::write(src.join("lib_cdf.h"), "double lib_cdf_Q(double x);\n").unwrap();
    std::os::unix::fs::symlink("../../src/cdf/lib_cdf.h", inc.join("lib_cdf.h")).unwrap();
    let out = dir.path().join("h");
    let include = dir.path().join("include");
    let o = numfuzz(&[
        "harness",
        path(&inc.join("lib_cdf.h")),
        "-o",
        path(&out),
        "--",
        &format!("-I{}", include.display()),
    ]);
    assert!(o.status.success(), "{}", both(&o));
    let source = std::fs::read_to_string(out.join("src/lib_cdf_Q.c")).unwrap();
    assert!(source.contains("#include \"lib/lib_cdf.h\""), "{source}");
}
