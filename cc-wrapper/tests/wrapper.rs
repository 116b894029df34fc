//! numfuzz-cc as a drop-in compiler: driver queries, preprocessing, compile-only, assembly,
//! shared libraries, one-step builds, Makefile and autotools projects, the NO_CHECKS and
//! COVERAGE modes, and how the resulting targets treat their input files.

use numfuzz_abi::op::Op;
use numfuzz_abi::site::SiteTable;
use numfuzz_abi::ExceptionKind;
use std::path::Path;
use std::process::{Command, Output};
use testkit::{TempDir, Tools};

/// Runs numfuzz-cc in `dir`.
fn cc(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(Tools::get().cc())
        .current_dir(dir)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("run numfuzz-cc")
}

fn ok(out: Output) -> Output {
    assert!(
        out.status.success(),
        "failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn site_table(exe: &Path, env: &[(&str, &str)]) -> SiteTable {
    let mut env = env.to_vec();
    env.push(("NUMFUZZ_SITES", "-"));
    let out = ok(testkit::run(exe, &[], &[], &env));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("site table of {}: {e}", exe.display()))
}

/// (file name, line, op) of every site.
fn sites(table: &SiteTable) -> Vec<(String, u32, Op)> {
    let mut v: Vec<_> = table
        .sites
        .iter()
        .map(|s| {
            let name = Path::new(&s.file).file_name().unwrap().to_string_lossy().into_owned();
            (name, s.line, s.op)
        })
        .collect();
    v.sort_by(|a, b| (&a.0, a.1, a.2 as u16).cmp(&(&b.0, b.1, b.2 as u16)));
    v
}

fn write(dir: &Path, name: &str, content: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

/// A libFuzzer-style harness with one fmul on line 5.
const HARNESS: &str = "#include <numfuzz.h>\n\
NUMFUZZ_SIGNATURE(\"f64,f64\");\n\
volatile double sink;\n\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n\
  sink = nf_f64(data, size, 0) * nf_f64(data, size, 1);\n\
  return 0;\n\
}\n";

#[test]
fn driver_queries_go_straight_to_clang() {
    let dir = TempDir::new().unwrap();
    let out = ok(cc(dir.path(), &["--version"], &[]));
    assert!(text(&out.stdout).contains("clang version"), "{}", text(&out.stdout));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    let out = ok(cc(dir.path(), &["-print-prog-name=ld"], &[]));
    assert!(text(&out.stdout).trim().ends_with("ld"), "{}", text(&out.stdout));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "queries write no files"
    );
}

#[test]
fn preprocessing_writes_to_stdout_without_noise() {
    let dir = TempDir::new().unwrap();
    write(
        dir.path(),
        "prog.c",
        "#include <numfuzz.h>\nint marker = __NUMFUZZ__ + 41;\nint fuzzing = FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION;\n",
    );
    let out = ok(cc(dir.path(), &["-E", "prog.c"], &[]));
    let pre = text(&out.stdout);
    assert!(pre.contains("int marker = 1 + 41;"), "{pre}");
    assert!(pre.contains("int fuzzing = 1;"), "the same macros as a compile: {pre}");
    assert!(pre.contains("numfuzz_handled"), "numfuzz.h is on the include path");
    assert!(
        out.stderr.is_empty(),
        "configure scripts reject any stderr: {}",
        text(&out.stderr)
    );

    let out = ok(cc(dir.path(), &["-M", "prog.c"], &[]));
    let deps = text(&out.stdout);
    assert!(deps.starts_with("prog.o:"), "{deps}");
    assert!(deps.contains("prog.c") && deps.contains("numfuzz.h"), "{deps}");
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    let out = ok(cc(dir.path(), &["-MM", "prog.c"], &[]));
    assert!(text(&out.stdout).starts_with("prog.o: prog.c"), "{}", text(&out.stdout));

    // A syntax check is not a link: no linker inputs, no warnings about them.
    let out = ok(cc(dir.path(), &["-fsyntax-only", "prog.c"], &[]));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));

    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(files, ["prog.c"], "preprocessing and syntax checks write no files");
}

#[test]
fn compile_only_with_and_without_output_names() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    write(d, "a.c", "double fa(double x, double y) {\n  return x / y;\n}\n");
    write(d, "b.c", "double fb(double x) {\n  return x - 1.0;\n}\n");
    write(d, "c.c", "double fc(double x) {\n  return x * x;\n}\n");
    write(d, "e.c", "double fe(double x) {\n\n  return x + 2.0;\n}\n");
    write(
        d,
        "main.c",
        "#include <numfuzz.h>\nNUMFUZZ_SIGNATURE(\"f64\");\ndouble fa(double, double), fb(double), fc(double), fe(double);\n\
         volatile double s;\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {\n  double x = nf_f64(d, n, 0);\n\
         s = fa(x, fb(x)) + fc(x) + fe(x);\n  return 0;\n}\n",
    );
    ok(cc(d, &["-c", "a.c"], &[]));
    assert!(d.join("a.o").exists());
    std::fs::create_dir(d.join("obj")).unwrap();
    ok(cc(d, &["-O2", "-c", "b.c", "-o", "obj/b.o"], &[]));
    assert!(d.join("obj/b.o").exists());
    ok(cc(d, &["-c", "c.c", "e.c"], &[]));
    assert!(d.join("c.o").exists() && d.join("e.o").exists());
    ok(cc(d, &["-c", "main.c", "-omain.o"], &[]));
    assert!(d.join("main.o").exists());
    ok(cc(d, &["main.o", "a.o", "obj/b.o", "c.o", "e.o", "-o", "prog"], &[]));

    let table = site_table(&d.join("prog"), &[]);
    let got = sites(&table);
    let expect = [
        ("a.c", 2, Op::FDiv),
        ("b.c", 2, Op::FSub),
        ("c.c", 2, Op::FMul),
        ("e.c", 3, Op::FAdd),
        ("main.c", 7, Op::FAdd),
        ("main.c", 7, Op::FAdd),
    ];
    let expect: Vec<(String, u32, Op)> = expect.iter().map(|(f, l, o)| (f.to_string(), *l, *o)).collect();
    assert_eq!(got, expect);

    // x = 1: fb gives 0 and fa divides by it.
    let reports = testkit::reports(&d.join("prog"), &testkit::f64s(&[1.0]));
    assert_eq!(reports.len(), 1, "{reports:#?}");
    assert_eq!(reports[0].kind, ExceptionKind::DivByZero);
    assert_eq!((reports[0].site.file.as_str(), reports[0].site.line), ("a.c", 2));
}

#[test]
fn assembly_output_calls_the_checker() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "h.c", HARNESS);
    ok(cc(dir.path(), &["-S", "h.c"], &[]));
    let asm = std::fs::read_to_string(dir.path().join("h.s")).unwrap();
    assert!(asm.contains("__numfuzz_check_f64"), "{asm}");
    assert!(asm.contains("__numfuzz_sites"), "site records in their section");
    ok(cc(dir.path(), &["-O2", "-S", "h.c", "-o", "named.s"], &[]));
    assert!(std::fs::read_to_string(dir.path().join("named.s"))
        .unwrap()
        .contains("__numfuzz_check_f64"));
}

/// A split function (x86-64): the fast copy is the program's code with nothing added but the
/// coverage guards of the edges-only build and the dispatch to the other copies (one guard on
/// its hot path, one on the one cold call of either); the precise copy holds every check and
/// comparison hook, and guards of its own (a program with its own main runs only precise
/// copies); the special-result copy holds neither checks nor hooks.
#[test]
#[cfg(target_arch = "x86_64")]
fn a_split_function_keeps_checks_and_hooks_out_of_its_fast_copy() {
    let dir = TempDir::new().unwrap();
    write(
        dir.path(),
        "k.c",
        "double k(double x, double y, long n) {\n  double r = x * y + x / y - y;\n  return n > 3 ? r : -r;\n}\n",
    );
    let body = |env: &[(&str, &str)], out: &str, function: &str| {
        ok(cc(dir.path(), &["-O2", "-S", "k.c", "-o", out], env));
        let asm = std::fs::read_to_string(dir.path().join(out)).unwrap();
        let start = asm
            .find(&format!("\n{function}:"))
            .unwrap_or_else(|| panic!("no {function} in\n{asm}"));
        let end = asm[start..].find(".Lfunc_end").map_or(asm.len(), |e| start + e);
        asm[start..end].to_string()
    };
    let guards = |asm: &str| asm.matches("__sanitizer_cov_trace_pc_guard").count();
    let edges = body(&[("NUMFUZZ_CC_NO_CHECKS", "1")], "edges.s", "k");
    let fast = body(&[], "checked.s", "k");
    let precise = body(&[], "checked.s", "k.numfuzz.precise");
    assert!(guards(&edges) >= 1, "{edges}");
    assert_eq!(guards(&fast), guards(&edges) + 2, "fast copy:\n{fast}");
    assert!(fast.contains("__numfuzz_precise"), "{fast}");
    assert!(
        !fast.contains("__numfuzz_check") && !fast.contains("__numfuzz_cmp"),
        "{fast}"
    );
    // The precise copy keeps coverage guards of its own (a program with its own main runs
    // only precise copies), as many as the program's: the checks add no block.
    assert_eq!(guards(&precise), guards(&edges), "precise copy:\n{precise}");
    assert_eq!(
        precise.matches("__numfuzz_check_f64_preserving").count(),
        4,
        "{precise}"
    );
    // The program's one comparison (n > 3), not the checks' own integer tests.
    assert_eq!(precise.matches("__numfuzz_cmp_int_preserving").count(), 1, "{precise}");
    let specials = body(&[], "checked.s", "k.numfuzz.specials");
    assert!(
        !specials.contains("__numfuzz_check") && !specials.contains("__numfuzz_cmp"),
        "{specials}"
    );
    assert!(fast.contains("k.numfuzz.specials"), "the dispatch reaches it:\n{fast}");
}

/// Symbols `nm` lists for a file: (type letter, name).
fn symbols(file: &Path, dynamic: bool) -> Vec<(String, String)> {
    let mut cmd = Command::new("nm");
    if dynamic {
        cmd.arg("-D");
    }
    let out = ok(cmd.arg(file).output().expect("nm (binutils) is installed"));
    text(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace().rev();
            let name = parts.next()?.to_string();
            let kind = parts.next()?.to_string();
            Some((kind, name))
        })
        .collect()
}

#[test]
fn shared_libraries_get_checks_but_not_the_runtime() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    write(
        d,
        "lib/scale.c",
        "double scale(double x, double y) {\n  return x * y;\n}\n",
    );
    ok(cc(
        d,
        &["-shared", "-fPIC", "-O1", "lib/scale.c", "-o", "lib/libscale.so"],
        &[],
    ));
    let syms = symbols(&d.join("lib/libscale.so"), true);
    assert!(
        syms.iter()
            .any(|(k, n)| k == "U" && n.starts_with("__numfuzz_check_f64")),
        "{syms:?}"
    );
    assert!(
        !syms
            .iter()
            .any(|(_, n)| n == "numfuzz_rt_main" || n == "__numfuzz_anchor"),
        "the runtime belongs to the executable only: {syms:?}"
    );

    write(
        d,
        "main.c",
        "#include <numfuzz.h>\nNUMFUZZ_SIGNATURE(\"f64,f64\");\ndouble scale(double, double);\nvolatile double s;\n\
         int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {\n  s = scale(nf_f64(d, n, 0), nf_f64(d, n, 1));\n  return 0;\n}\n",
    );
    ok(cc(
        d,
        &["main.c", "-Llib", "-lscale", "-Wl,-rpath,$ORIGIN/lib", "-o", "prog"],
        &[],
    ));
    let reports = testkit::reports(&d.join("prog"), &testkit::f64s(&[1e300, -1e300]));
    assert_eq!(reports.len(), 1, "{reports:#?}");
    let r = &reports[0];
    assert_eq!((r.kind, r.site.op, r.site.line), (ExceptionKind::Overflow, Op::FMul, 2));
    assert!(r.site.file.ends_with("scale.c"), "{}", r.site.file);
    assert_eq!(r.site.function, "scale");
}

#[test]
fn one_step_compile_and_link() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "h.c", HARNESS);
    ok(cc(dir.path(), &["-O1", "h.c", "-o", "h", "-lm"], &[]));
    let exe = dir.path().join("h");
    assert_eq!(sites(&site_table(&exe, &[])), [("h.c".to_string(), 5, Op::FMul)]);
    let reports = testkit::reports(&exe, &testkit::f64s(&[0.0, f64::INFINITY]));
    assert_eq!(reports.len(), 1);
    assert_eq!((reports[0].kind, reports[0].site.line), (ExceptionKind::Invalid, 5));
    assert!(testkit::reports(&exe, &testkit::f64s(&[2.0, 3.0])).is_empty());
}

#[test]
fn makefile_project_with_its_own_main() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    write(
        d,
        "src/stats.h",
        "double mean(const double *v, int n);\ndouble variance(const double *v, int n);\n",
    );
    write(
        d,
        "src/stats.c",
        "#include \"stats.h\"\n\
         double mean(const double *v, int n) {\n  double s = 0;\n  for (int i = 0; i < n; i++)\n    s += v[i];\n  return s / n;\n}\n\
         double variance(const double *v, int n) {\n  double m = mean(v, n), s = 0;\n  for (int i = 0; i < n; i++)\n    s += (v[i] - m) * (v[i] - m);\n  return s / (n - 1);\n}\n",
    );
    write(
        d,
        "src/main.c",
        "#include <stdio.h>\n#include <stdlib.h>\n#include \"stats.h\"\n\
         int main(int argc, char **argv) {\n  double v[16];\n  int n = 0;\n\
         for (int i = 1; i < argc && n < 16; i++)\n    v[n++] = strtod(argv[i], 0);\n\
         printf(\"%g %g\\n\", mean(v, n), variance(v, n));\n  return 0;\n}\n",
    );
    write(
        d,
        "Makefile",
        "CFLAGS ?= -O1\nOBJS = src/main.o src/stats.o\n\nstats: $(OBJS)\n\t$(CC) $(CFLAGS) -o $@ $(OBJS)\n\n\
         src/%.o: src/%.c src/stats.h\n\t$(CC) $(CFLAGS) -c $< -o $@\n\nclean:\n\trm -f stats $(OBJS)\n",
    );
    let make = Command::new("make")
        .current_dir(d)
        .arg(format!("CC={}", Tools::get().cc().display()))
        .output()
        .expect("make is installed (scripts/setup.sh)");
    ok(make);
    let exe = d.join("stats");

    // Ordinary values: the program's own output, nothing reported.
    let out = ok(testkit::run(&exe, &["1", "2", "3"], &[], &[]));
    assert_eq!(text(&out.stdout), "2 1\n");
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));

    // One value: variance divides 0 by 0. Outside numfuzz the first exception aborts the
    // program (what AFL++ sees as a crash) after a UBSan-style line.
    let out = testkit::run(&exe, &["5"], &[], &[]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("stats.c:")
            && err.contains("floating-point exception: Invalid in fdiv (0.0 / 0.0 = NaN) in variance"),
        "{err}"
    );
    // NUMFUZZ_ABORT=0 reports every exception and lets the program finish.
    let out = ok(testkit::run(
        &exe,
        &["1e308", "1e308"],
        &[],
        &[("NUMFUZZ_ABORT", "0"), ("NUMFUZZ_REPORT", "json")],
    ));
    let events = testkit::events(&text(&out.stderr));
    let kinds: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            numfuzz_abi::report::ReportEvent::Exception(r) => Some((r.kind, r.site.function.as_str(), r.site.line)),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, [(ExceptionKind::Overflow, "mean", 5)], "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "inf inf\n");
}

#[test]
fn autotools_project_with_a_libtool_library() {
    for tool in ["autoreconf", "libtoolize", "automake"] {
        assert!(
            Command::new("sh")
                .args(["-c", &format!("command -v {tool}")])
                .output()
                .unwrap()
                .status
                .success(),
            "{tool} is missing: run scripts/setup.sh"
        );
    }
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    write(
        d,
        "configure.ac",
        "AC_INIT([poly], [1.0])\nAC_CONFIG_SRCDIR([src/poly.c])\nAC_CONFIG_AUX_DIR([build-aux])\n\
         AC_CONFIG_MACRO_DIRS([m4])\nAM_INIT_AUTOMAKE([foreign subdir-objects])\nAC_PROG_CC\nLT_INIT\n\
         AC_CHECK_LIB([m], [cos])\nAC_CONFIG_FILES([Makefile])\nAC_OUTPUT\n",
    );
    write(
        d,
        "Makefile.am",
        "ACLOCAL_AMFLAGS = -I m4\nlib_LTLIBRARIES = libpoly.la\nlibpoly_la_SOURCES = src/poly.c src/poly.h\n\
         bin_PROGRAMS = poly poly_fuzz\npoly_SOURCES = src/main.c\npoly_LDADD = libpoly.la\n\
         poly_fuzz_SOURCES = src/fuzz.c\npoly_fuzz_LDADD = libpoly.la\n",
    );
    write(
        d,
        "src/poly.h",
        "double poly_horner(const double *c, int n, double x);\n",
    );
    write(
        d,
        "src/poly.c",
        "#include \"poly.h\"\n\
         double poly_horner(const double *c, int n, double x) {\n  double r = 0;\n  for (int i = n - 1; i >= 0; i--)\n    r = r * x + c[i];\n  return r;\n}\n",
    );
    write(
        d,
        "src/main.c",
        "#include <stdio.h>\n#include <stdlib.h>\n#include \"poly.h\"\n\
         int main(int argc, char **argv) {\n  double c[3] = {1, 2, 3};\n\
         printf(\"%g\\n\", poly_horner(c, 3, argc > 1 ? strtod(argv[1], 0) : 0));\n  return 0;\n}\n",
    );
    write(
        d,
        "src/fuzz.c",
        "#include <numfuzz.h>\n#include \"poly.h\"\nNUMFUZZ_SIGNATURE(\"f64\");\nvolatile double sink;\n\
         int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n  double c[3] = {1, 2, 3};\n\
           sink = poly_horner(c, 3, nf_f64(data, size, 0));\n  return 0;\n}\n",
    );
    let cc_path = Tools::get().cc().display().to_string();
    let script = format!("autoreconf -fi && ./configure CC={cc_path} && make");
    let out = Command::new("sh")
        .current_dir(d)
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "autotools build failed:\n{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let configure_log = text(&out.stdout);
    assert!(
        configure_log.contains("checking whether the C compiler works... yes"),
        "{configure_log}"
    );

    // libtool's wrapper scripts run the real programs with the library path set.
    let out = ok(testkit::run(&d.join("poly"), &["2"], &[], &[]));
    assert_eq!(text(&out.stdout), "17\n");
    let table = site_table(&d.join("poly_fuzz"), &[]);
    let got = sites(&table);
    assert_eq!(
        got,
        [("poly.c".to_string(), 5, Op::FAdd), ("poly.c".to_string(), 5, Op::FMul)],
        "the library's sites, registered from its shared object"
    );
    let reports = testkit::reports(&d.join("poly_fuzz"), &testkit::f64s(&[1e200]));
    let kinds: Vec<_> = reports.iter().map(|r| (r.kind, r.site.op, r.site.line)).collect();
    assert_eq!(kinds, [(ExceptionKind::Overflow, Op::FMul, 5)]);
}

#[test]
fn no_checks_mode_keeps_edges_only() {
    let built = testkit::compile("h", &[("h.c", HARNESS)], &[], &[("NUMFUZZ_CC_NO_CHECKS", "1")]);
    let table = site_table(&built.exe, &[]);
    assert!(table.sites.is_empty(), "{:?}", table.sites);
    assert!(table.edges > 0);
    assert_eq!(table.signature.as_deref(), Some("f64,f64"));
    assert!(testkit::reports(&built.exe, &testkit::f64s(&[1e300, 1e300])).is_empty());
    let checked = testkit::compile("h", &[("h.c", HARNESS)], &[], &[]);
    assert_eq!(site_table(&checked.exe, &[]).sites.len(), 1);
}

#[test]
fn coverage_mode_writes_an_llvm_profile() {
    let built = testkit::compile("h", &[("h.c", HARNESS)], &[], &[("NUMFUZZ_CC_COVERAGE", "1")]);
    let table = site_table(&built.exe, &[]);
    assert!(table.sites.is_empty());
    let profile = built.path("run.profraw");
    let input = built.path("input");
    std::fs::write(&input, testkit::f64s(&[1.5, 2.0])).unwrap();
    let profile_env = profile.display().to_string();
    let out = testkit::run(
        &built.exe,
        &[input.to_str().unwrap()],
        &[],
        &[("LLVM_PROFILE_FILE", profile_env.as_str())],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let raw = std::fs::read(&profile).expect("the run wrote LLVM_PROFILE_FILE");
    // The raw profile's magic number (`\xffl...` little-endian, 64-bit).
    assert!(raw.len() > 8);
    assert_eq!(u64::from_le_bytes(raw[..8].try_into().unwrap()), 0xff6c_7072_6f66_7281);
}

#[test]
fn targets_read_missing_empty_and_large_inputs() {
    let built = testkit::compile("h", &[("h.c", HARNESS)], &[], &[]);
    let missing = built.path("no-such-input");
    let out = testkit::run(&built.exe, &[missing.to_str().unwrap()], &[], &[]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no-such-input"), "{err}");

    let empty = built.path("empty");
    std::fs::write(&empty, b"").unwrap();
    let large = built.path("large");
    // 1 MiB whose first two fields are 1.5 and 2.0; the rest is ignored.
    let mut big = testkit::f64s(&[1.5, 2.0]);
    big.resize(1 << 20, 0x7f);
    std::fs::write(&large, big).unwrap();
    let out = testkit::run(
        &built.exe,
        &[empty.to_str().unwrap(), large.to_str().unwrap()],
        &[],
        &[("NUMFUZZ_ABORT", "0"), ("NUMFUZZ_REPORT", "json")],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let summaries = testkit::summaries(&text(&out.stderr));
    assert_eq!(summaries.len(), 2, "{}", text(&out.stderr));
    assert!(summaries.iter().all(|s| s.exceptions == 0), "{summaries:?}");
}

/// A harness whose only field declares `range`.
fn harness_with_range(range: &str) -> String {
    HARNESS.replace("\"f64,f64\"", &format!("\"f64{range},f64\""))
}

#[test]
fn a_bad_signature_range_fails_the_build_and_leaves_no_output() {
    let dir = TempDir::new().unwrap();
    for (range, why) in [("[1,0]", "above the upper bound"), ("[0,1", "missing closing")] {
        write(dir.path(), "bad.c", &harness_with_range(range));
        for args in [&["-O1", "bad.c", "-o", "bad"][..], &["-c", "bad.c", "-o", "bad.o"]] {
            let out = cc(dir.path(), args, &[]);
            let err = text(&out.stderr);
            assert!(!out.status.success(), "{args:?} {range}: built anyway");
            assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
            assert!(
                err.contains("invalid NUMFUZZ_SIGNATURE") && err.contains(why) && err.contains("bad.c"),
                "{err}"
            );
            let output = dir.path().join(args[3]);
            assert!(!output.exists(), "{} left behind", output.display());
        }
    }
    write(dir.path(), "good.c", &harness_with_range("(0, inf)"));
    ok(cc(dir.path(), &["-O1", "good.c", "-o", "good"], &[]));
    let table = site_table(&dir.path().join("good"), &[]);
    assert_eq!(table.signature.as_deref(), Some("f64(0, inf),f64"));
}
