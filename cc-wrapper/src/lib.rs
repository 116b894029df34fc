//! `numfuzz-cc` / `numfuzz-c++`: drop-in clang wrappers.
//!
//! A compile gets sancov `trace-pc-guard` edges, `-ffp-contract=off` (so `a*b+c` stays two
//! checked operations), the numfuzz LLVM pass and `numfuzz.h` on the include path; a link of
//! an executable gets the numfuzz runtime. Four environment switches change the build:
//! `NUMFUZZ_CC_NO_CHECKS=1` (edges only, for overhead measurements),
//! `NUMFUZZ_CC_COVERAGE=1` (llvm-cov source coverage, no numfuzz instrumentation) and
//! `NUMFUZZ_CC_TAINT=1` (the replay-only taint build of `numfuzz triage`: checkers plus
//! DataFlowSanitizer, whose labels carry each exceptional value's findings to the results)
//! and `NUMFUZZ_CC_SHADOW=1` (the replay-only shadow build: every float and double carries
//! a shadow in x87 extended precision, which triage reads as a reference; `=mpfr`: the same
//! shadows as MPFR values, linked with `-lmpfr -lgmp`, which triage asks where x87 cannot tell).
//!
//! Compiles and links go through libafl_cc's `ClangWrapper`. Invocations that only ask clang
//! something (`--version`, `-print-*`, `-dumpmachine`), preprocess (`-E`, `-M`) or compile
//! several files without `-o` are passed to clang directly, because `ClangWrapper` would
//! invent an output file for them. One question is the wrapper's own:
//! `numfuzz-cc -print-numfuzz-runtime` prints the runtime archive a link would use in the
//! current mode (build
//! scripts key their binaries on it).

pub mod lean_runtime;
pub mod signature_check;

use libafl_cc::{ClangWrapper, CompilerWrapper, ToolWrapper};
use numfuzz_abi::{c_header::symbols, env as abi_env};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the build instruments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Edges, checkers, ErrBits and the runtime.
    Fuzz,
    /// Edges and the runtime, no checkers.
    EdgesOnly,
    /// llvm-cov source coverage and the runtime's replay `main`; no numfuzz instrumentation.
    Coverage,
    /// Checkers and DataFlowSanitizer (labels follow exceptional values), no edges: a build
    /// triage replays to learn which exceptions reach the declared results.
    Taint,
    /// Every float and double carries a shadow in x87 extended precision (the shadow pass),
    /// no edges, no checkers: a build triage replays for a reference where there is no
    /// oracle.
    Shadow,
    /// The shadow build with MPFR shadows (`NUMFUZZ_CC_SHADOW=mpfr`): the widest exponent range
    /// and a precision chosen per run, asked where the x87 shadow cannot tell.
    MpfrShadow,
}

impl Mode {
    /// Builds that triage or `numfuzz cov` only replay: they need no in-process engine.
    pub fn replay_only(self) -> bool {
        matches!(self, Mode::Taint | Mode::Shadow | Mode::MpfrShadow | Mode::Coverage)
    }

    pub fn from_env() -> Mode {
        let on = |name: &str| std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0");
        if on(abi_env::CC_COVERAGE) {
            Mode::Coverage
        } else if on(abi_env::CC_TAINT) {
            Mode::Taint
        } else if std::env::var(abi_env::CC_SHADOW).is_ok_and(|v| v == "mpfr") {
            Mode::MpfrShadow
        } else if on(abi_env::CC_SHADOW) {
            Mode::Shadow
        } else if on(abi_env::CC_NO_CHECKS) {
            Mode::EdgesOnly
        } else {
            Mode::Fuzz
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum WrapperError {
    #[error("the numfuzz runtime library is missing: {0} does not exist; build it with `scripts/build.sh` in the numfuzz checkout (or point NUMFUZZ_RUNTIME_DIR at its directory)")]
    MissingRuntime(PathBuf),
    #[error("the numfuzz LLVM pass is missing: {0} does not exist; rebuild numfuzz-cc with `cargo build --release`")]
    MissingPass(PathBuf),
    #[error("cannot run {0}: {1}")]
    Spawn(String, std::io::Error),
    #[error("{0:?}")]
    Wrapper(libafl_cc::Error),
    #[error("{}: invalid NUMFUZZ_SIGNATURE: {}; fix the declaration (the output {} was removed)", .0.source.display(), .0.error, .1.display())]
    BadSignature(signature_check::BadSignature, PathBuf),
}

/// How clang is being invoked, from the arguments alone.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Invocation {
    /// Only a question to the driver (`--version`, `-print-file-name=…`, `-v` alone, …).
    pub query_only: bool,
    /// `-E`, `-M` or `-MM`: preprocessing, output to stdout unless `-o`.
    pub preprocess: bool,
    /// `-c`, `-S` or `-fsyntax-only`.
    pub compile_only: bool,
    pub shared: bool,
    pub has_output: bool,
    /// Number of source files (by extension, or any input after `-x LANG`).
    pub sources: usize,
}

const SOURCE_EXTS: &[&str] = &[
    "c", "cc", "cp", "cpp", "cxx", "c++", "C", "i", "ii", "m", "mm", "s", "S", "sx",
];

impl Invocation {
    pub fn parse(args: &[String]) -> Invocation {
        let mut inv = Invocation::default();
        let mut lang_set = false;
        let mut i = 0;
        let mut flags_only = true;
        while i < args.len() {
            let a = args[i].as_str();
            match a {
                "-E" | "-M" | "-MM" => inv.preprocess = true,
                // -fsyntax-only: a compile that stops before code generation, never a link.
                "-c" | "-S" | "-fsyntax-only" => inv.compile_only = true,
                "-shared" => inv.shared = true,
                "-o" => {
                    inv.has_output = true;
                    i += 1;
                }
                "-x" => {
                    lang_set = args.get(i + 1).is_some_and(|l| l != "none");
                    i += 1;
                }
                // Options whose next argument is a separate value.
                "-I" | "-D" | "-U" | "-include" | "-isystem" | "-idirafter" | "-iquote" | "-MF" | "-MT" | "-MQ"
                | "-L" | "-l" | "-Xlinker" | "-Xclang" | "-Xassembler" | "-mllvm" | "-target" | "--target"
                | "-arch" | "-imacros" | "-isysroot" | "--sysroot" | "-T" | "-u" | "-z" => {
                    i += 1;
                }
                _ if a.starts_with("-o") && a.len() > 2 => inv.has_output = true,
                _ if !a.starts_with('-') || a == "-" => {
                    flags_only = false;
                    let is_source = Path::new(a)
                        .extension()
                        .and_then(|e| e.to_str())
                        .is_some_and(|e| SOURCE_EXTS.contains(&e));
                    if is_source || lang_set {
                        inv.sources += 1;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        let query = |a: &String| {
            matches!(
                a.as_str(),
                "--version" | "-v" | "-dumpversion" | "-dumpmachine" | "--help" | "-###" | "-V" | "-qversion"
            ) || a.starts_with("-print-")
                || a.starts_with("--print-")
        };
        inv.query_only = flags_only && args.iter().any(query);
        inv
    }

    pub fn links(&self) -> bool {
        !self.query_only && !self.preprocess && !self.compile_only
    }
}

/// Paths baked in at build time (overridable by environment for relocated installs).
pub struct Toolchain {
    pub clang: PathBuf,
    pub clangxx: PathBuf,
    pub pass: PathBuf,
    /// The shadow builds' pass.
    pub shadow_pass: PathBuf,
    pub include: PathBuf,
    /// numfuzz's DataFlowSanitizer ABI list (the runtime's entry points), for taint builds.
    pub abilist: PathBuf,
    /// The runtime archive a link gets before stripping ([`lean_runtime::newest_archive`]; for
    /// replay-only builds, [`lean_runtime::replay_only_archive`]).
    pub runtime: PathBuf,
    /// Strips the runtime's debug sections ([`lean_runtime`]).
    pub objcopy: PathBuf,
}

impl Toolchain {
    pub fn locate(mode: Mode) -> Toolchain {
        let exe_dir = std::env::current_exe()
            .ok()
            .and_then(|p| p.canonicalize().ok())
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_else(|| PathBuf::from("."));
        let runtime = match std::env::var_os(abi_env::CC_RUNTIME_DIR) {
            Some(dir) => Path::new(&dir).join(lean_runtime::ARCHIVE),
            None => lean_runtime::newest_archive(&exe_dir),
        };
        let runtime = if mode.replay_only() {
            lean_runtime::replay_only_archive(&runtime)
        } else {
            runtime
        };
        Toolchain {
            clang: PathBuf::from(env!("NUMFUZZ_CLANG")),
            clangxx: PathBuf::from(env!("NUMFUZZ_CLANGXX")),
            pass: PathBuf::from(env!("NUMFUZZ_PASS_PATH")),
            shadow_pass: PathBuf::from(env!("NUMFUZZ_SHADOW_PASS_PATH")),
            include: PathBuf::from(env!("NUMFUZZ_INCLUDE_DIR")),
            abilist: PathBuf::from(env!("NUMFUZZ_ABILIST_PATH")),
            runtime,
            objcopy: Path::new(env!("NUMFUZZ_LLVM_BINDIR")).join("llvm-objcopy"),
        }
    }

    /// What a link gets: the runtime without its debug sections where a copy can be made.
    pub fn linked_runtime(&self) -> PathBuf {
        lean_runtime::linked_archive(&self.runtime, &self.objcopy)
    }
}

/// What changes preprocessing: `numfuzz.h` on the include path and the macros every
/// compile sees (ClangWrapper's fuzzing-build macro is repeated so that invocations clang
/// runs directly, such as `-E`, `-c a.c` without `-o` or `-S`, see it too).
pub fn preprocessor_flags(tc: &Toolchain) -> Vec<String> {
    vec![
        format!("-I{}", tc.include.display()),
        "-D__NUMFUZZ__=1".to_string(),
        "-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION=1".to_string(),
    ]
}

/// Flags added to every invocation that compiles source files.
pub fn compile_flags(mode: Mode, tc: &Toolchain) -> Vec<String> {
    // Source-level semantics: each `a*b+c` is two checked, separately rounded operations.
    let mut flags = vec!["-ffp-contract=off".to_string()];
    flags.extend(preprocessor_flags(tc));
    match mode {
        Mode::Fuzz => {
            // Site records take file and line from the debug info.
            flags.push("-g".into());
            flags.push("-fsanitize-coverage=trace-pc-guard".into());
            flags.push(format!("-fpass-plugin={}", tc.pass.display()));
        }
        Mode::Taint => {
            flags.push("-g".into());
            // The pass reads NUMFUZZ_CC_TAINT from the environment clang inherits.
            flags.push(format!("-fpass-plugin={}", tc.pass.display()));
            flags.push("-fsanitize=dataflow".into());
            flags.push(format!("-fsanitize-ignorelist={}", tc.abilist.display()));
            // Labels follow values, not control: a select's condition and a pointer's label do
            // not flow into what is selected or loaded.
            for opt in [
                "-dfsan-track-select-control-flow=false",
                "-dfsan-combine-pointer-labels-on-load=false",
            ] {
                flags.push("-mllvm".into());
                flags.push(opt.into());
            }
        }
        // The pass reads NUMFUZZ_CC_SHADOW from the environment clang inherits.
        Mode::Shadow | Mode::MpfrShadow => {
            flags.push("-g".into());
            flags.push(format!("-fpass-plugin={}", tc.shadow_pass.display()));
            // Vectors carry no shadows: keep the program's float code scalar.
            flags.push("-fno-vectorize".into());
            flags.push("-fno-slp-vectorize".into());
        }
        Mode::EdgesOnly => flags.push("-fsanitize-coverage=trace-pc-guard".into()),
        Mode::Coverage => {
            flags.push("-fprofile-instr-generate".into());
            flags.push("-fcoverage-mapping".into());
        }
    }
    flags
}

/// Flags added when linking an executable.
pub fn link_flags(mode: Mode, tc: &Toolchain) -> Vec<String> {
    let mut flags = vec![
        tc.linked_runtime().display().to_string(),
        // Pull in the runtime's constructor (forkserver) and marker even when the program
        // has its own main and references nothing else of the runtime.
        format!("-Wl,-u,{}", symbols::ANCHOR),
    ];
    // The register-preserving entry points live in their own object of the runtime archive,
    // which nothing in the executable may reference when only a shared library it links has
    // checks (see runtime/src/preserving.rs).
    if cfg!(target_arch = "x86_64") {
        for sym in [
            symbols::CHECK_F32_PRESERVING,
            symbols::CHECK_F64_PRESERVING,
            symbols::CMP_INT_PRESERVING,
            symbols::CMP_F32_PRESERVING,
            symbols::CMP_F64_PRESERVING,
        ] {
            flags.push(format!("-Wl,-u,{sym}"));
        }
    }
    match mode {
        // DataFlowSanitizer's runtime (there is no sancov to pull in UBSan's).
        Mode::Taint => flags.push("-fsanitize=dataflow".into()),
        // clang >= 19 links UBSan's runtime for -fsanitize-coverage alone; it would turn a
        // SIGSEGV into `exit(1)` and shadow the runtime's own coverage callbacks.
        _ => flags.push("-fno-sanitize-link-runtime".into()),
    }
    if mode == Mode::Coverage {
        flags.push("-fprofile-instr-generate".into());
    }
    if mode == Mode::MpfrShadow {
        flags.extend(["-lmpfr", "-lgmp"].map(String::from));
    }
    // Native libraries the Rust runtime needs (`rustc --print native-static-libs`).
    flags.extend(["-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl"].map(String::from));
    flags
}

fn verbose() -> bool {
    std::env::var(abi_env::CC_VERBOSE).is_ok_and(|v| !v.is_empty() && v != "0")
}

fn run_direct(compiler: &Path, args: &[String], extra: &[String]) -> Result<i32, WrapperError> {
    let mut cmd = Command::new(compiler);
    cmd.args(args).args(extra);
    if verbose() {
        eprintln!("numfuzz-cc: {cmd:?}");
    }
    let status = cmd
        .status()
        .map_err(|e| WrapperError::Spawn(compiler.display().to_string(), e))?;
    Ok(status.code().unwrap_or(1))
}

/// The wrapper's own query: which runtime archive a link uses.
pub const PRINT_RUNTIME: &str = "-print-numfuzz-runtime";

/// Runs the wrapper on `args` (without argv\[0\]); returns clang's exit code.
pub fn run(args: &[String], cpp: bool) -> Result<i32, WrapperError> {
    let mode = Mode::from_env();
    let tc = Toolchain::locate(mode);
    if args.len() == 1 && args[0] == PRINT_RUNTIME {
        println!("{}", tc.runtime.display());
        return Ok(0);
    }
    let compiler = if cpp { &tc.clangxx } else { &tc.clang };
    let inv = Invocation::parse(args);

    if inv.query_only || args.is_empty() {
        return run_direct(compiler, args, &[]);
    }
    if inv.preprocess {
        // Only what changes preprocessing: configure scripts treat any stderr output of
        // `$CC -E` (such as "argument unused") as a broken preprocessor.
        return run_direct(compiler, args, &preprocessor_flags(&tc));
    }
    let plugin = if matches!(mode, Mode::Shadow | Mode::MpfrShadow) {
        &tc.shadow_pass
    } else {
        &tc.pass
    };
    if matches!(mode, Mode::Fuzz | Mode::Taint | Mode::Shadow | Mode::MpfrShadow) && inv.sources > 0 && !plugin.exists()
    {
        return Err(WrapperError::MissingPass(plugin.clone()));
    }
    let links = inv.links() && !inv.shared;
    if links && !tc.runtime.exists() {
        return Err(WrapperError::MissingRuntime(tc.runtime.clone()));
    }
    let compile = if inv.sources > 0 {
        compile_flags(mode, &tc)
    } else {
        Vec::new()
    };
    if !inv.has_output && !inv.links() {
        // `-c a.c b.c` or `-S a.c`: clang names the outputs itself.
        return run_direct(compiler, args, &compile);
    }

    let mut cc = ClangWrapper::new();
    let name = if cpp { "numfuzz-c++" } else { "numfuzz-cc" };
    let mut argv = vec![name.to_string()];
    argv.extend(args.iter().cloned());
    cc.wrapped_cc(tc.clang.display().to_string())
        .wrapped_cxx(tc.clangxx.display().to_string())
        .dont_optimize()
        .cpp(cpp)
        .silence(!verbose())
        .parse_args(&argv)
        .map_err(WrapperError::Wrapper)?;
    cc.add_args(&compile);
    if links {
        cc.add_link_args(&link_flags(mode, &tc));
    }
    let code = cc.run().map_err(WrapperError::Wrapper)?.unwrap_or(1);
    if code == 0 {
        check_signature(args)?;
    }
    Ok(code)
}

/// Refuses (and deletes) an output whose NUMFUZZ_SIGNATURE the fuzzer would refuse (see
/// [`signature_check`]).
fn check_signature(args: &[String]) -> Result<(), WrapperError> {
    let Some(output) = signature_check::output_of(args) else {
        return Ok(());
    };
    signature_check::check(&output).map_err(|bad| {
        let _ = std::fs::remove_file(&output);
        WrapperError::BadSignature(bad, output)
    })
}

/// Entry point shared by both binaries.
pub fn main_with(cpp: bool) -> ! {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args, cpp) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("{}: error: {e}", if cpp { "numfuzz-c++" } else { "numfuzz-cc" });
            std::process::exit(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inv(args: &str) -> Invocation {
        Invocation::parse(&args.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn classifies_invocations() {
        assert!(inv("--version").query_only);
        assert!(inv("-print-file-name=libgcc.a").query_only);
        assert!(!inv("-v foo.c").query_only);
        let c = inv("-O2 -c foo.c -o foo.o");
        assert!(c.compile_only && c.has_output && c.sources == 1 && !c.links());
        let l = inv("foo.o bar.o -lm -o prog");
        assert!(l.links() && l.sources == 0);
        let one = inv("foo.c -o prog");
        assert!(one.links() && one.sources == 1);
        assert!(inv("-E foo.c").preprocess);
        assert!(inv("-MM foo.c").preprocess);
        assert!(!inv("-MD -c foo.c").preprocess);
        assert!(inv("-shared -fPIC a.o -o liba.so").shared);
        assert_eq!(inv("-x c - -o x").sources, 1);
        assert_eq!(inv("-c a.c b.cpp -I inc").sources, 2);
        assert!(inv("-ofoo foo.c").has_output);
        assert!(!inv("-fsyntax-only foo.c").links());
    }
}
