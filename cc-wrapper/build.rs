//! Builds the numfuzz LLVM passes (the checker pass and the shadow builds' pass) against the pinned llvm-config and generates the ABI header.
//!
//! Exposes to the crate (as compile-time env): `NUMFUZZ_PASS_PATH`, `NUMFUZZ_SHADOW_PASS_PATH`, `NUMFUZZ_INCLUDE_DIR`,
//! `NUMFUZZ_ABILIST_PATH` (the DataFlowSanitizer ABI list of taint builds),
//! `NUMFUZZ_CLANG`, `NUMFUZZ_CLANGXX`, `NUMFUZZ_LLVM_BINDIR`.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The checker pass's sources, linked into one plugin (numfuzz-pass.h, which they share, says
/// what each piece does).
const CHECKER_PASS: &[&str] = &[
    "pass/numfuzz-pass.cc",
    "pass/numfuzz-pass-plan.cc",
    "pass/numfuzz-pass-records.cc",
    "pass/numfuzz-pass-checks.cc",
    "pass/numfuzz-pass-taint.cc",
    "pass/numfuzz-pass-cmp.cc",
    "pass/numfuzz-pass-split.cc",
    "pass/numfuzz-pass-fast.cc",
    "pass/numfuzz-pass-hooks.cc",
];

/// The shadow builds' pass.
const SHADOW_PASS: &[&str] = &["pass/numfuzz-shadow.cc"];

fn llvm_config() -> String {
    if let Ok(c) = env::var("LLVM_CONFIG") {
        return c;
    }
    // Same order as libafl_build: highest supported version first.
    for v in (15..=22).rev() {
        let name = format!("llvm-config-{v}");
        if Command::new(&name)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return name;
        }
    }
    "llvm-config".to_string()
}

fn query(cfg: &str, arg: &str) -> String {
    let out = Command::new(cfg).arg(arg).output().unwrap_or_else(|e| {
        panic!("cannot run `{cfg} {arg}` ({e}); install clang-19 llvm-19-dev (scripts/setup.sh) or set LLVM_CONFIG")
    });
    assert!(
        out.status.success(),
        "`{cfg} {arg}` failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8").trim().to_string()
}

/// The passes' compiler and LLVM's flags for code that links against it.
struct PassBuild {
    clangxx: PathBuf,
    cxxflags: String,
    ldflags: String,
    include: PathBuf,
    objects: PathBuf,
}

impl PassBuild {
    /// Every source to an object, as many at a time as cargo runs jobs: each includes much of
    /// LLVM's headers and takes seconds.
    fn compile_all(&self, sources: &[&str]) {
        std::fs::create_dir_all(&self.objects).expect("create the passes' object directory");
        let jobs = env::var("NUM_JOBS").ok().and_then(|j| j.parse().ok()).unwrap_or(1usize);
        let next = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..jobs.min(sources.len()).max(1) {
                s.spawn(|| {
                    while let Some(source) = sources.get(next.fetch_add(1, Ordering::Relaxed)) {
                        self.compile(source);
                    }
                });
            }
        });
    }

    fn compile(&self, source: &str) {
        let mut cmd = Command::new(&self.clangxx);
        cmd.args(self.cxxflags.split_whitespace())
            .args(["-c", "-fPIC", "-O2", "-Wall", "-Wno-unused-parameter"])
            .arg(format!("-I{}", self.include.display()))
            .arg(source)
            .arg("-o")
            .arg(self.object(source));
        self.run(cmd, source);
    }

    fn link(&self, sources: &[&str], plugin: &Path) {
        let mut cmd = Command::new(&self.clangxx);
        cmd.arg("-shared")
            .args(sources.iter().map(|s| self.object(s)))
            .arg("-o")
            .arg(plugin)
            .args(self.ldflags.split_whitespace());
        self.run(cmd, &plugin.display().to_string());
    }

    fn object(&self, source: &str) -> PathBuf {
        let stem = Path::new(source).file_stem().expect("a source file name");
        self.objects.join(stem).with_extension("o")
    }

    fn run(&self, mut cmd: Command, what: &str) {
        let status = cmd
            .status()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.clangxx.display()));
        assert!(status.success(), "building the numfuzz passes ({what}) failed: {cmd:?}");
    }
}

fn main() {
    println!("cargo:rerun-if-env-changed=LLVM_CONFIG");
    for source in CHECKER_PASS {
        println!("cargo:rerun-if-changed={source}");
    }
    println!("cargo:rerun-if-changed=pass/numfuzz-pass.h");
    for source in SHADOW_PASS {
        println!("cargo:rerun-if-changed={source}");
    }
    println!("cargo:rerun-if-changed=include/numfuzz.h");
    println!("cargo:rerun-if-changed=../runtime/abi/src");

    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    let include = out.join("include");
    std::fs::create_dir_all(&include).expect("create include dir");
    std::fs::write(include.join("numfuzz_abi.h"), numfuzz_abi::c_header::generate()).expect("write numfuzz_abi.h");
    std::fs::copy("include/numfuzz.h", include.join("numfuzz.h")).expect("copy numfuzz.h");
    let abilist = include.join("numfuzz_dfsan_abilist.txt");
    std::fs::write(&abilist, numfuzz_abi::c_header::dfsan_abilist()).expect("write the DataFlowSanitizer ABI list");

    let cfg = llvm_config();
    let bindir = PathBuf::from(query(&cfg, "--bindir"));
    let version = query(&cfg, "--version");
    let major: u32 = version.split('.').next().and_then(|m| m.parse().ok()).unwrap_or(0);
    assert!(
        (15..=22).contains(&major),
        "{cfg} reports LLVM {version}; numfuzz needs LLVM 15-22 (set LLVM_CONFIG)"
    );
    let clang = bindir.join("clang");
    let clangxx = bindir.join("clang++");
    let build = PassBuild {
        clangxx: clangxx.clone(),
        cxxflags: query(&cfg, "--cxxflags"),
        ldflags: query(&cfg, "--ldflags"),
        include: include.clone(),
        objects: out.join("pass"),
    };
    build.compile_all(&[CHECKER_PASS, SHADOW_PASS].concat());
    let pass = out.join("numfuzz-pass.so");
    build.link(CHECKER_PASS, &pass);
    let shadow_pass = out.join("numfuzz-shadow.so");
    build.link(SHADOW_PASS, &shadow_pass);

    println!("cargo:rustc-env=NUMFUZZ_PASS_PATH={}", pass.display());
    println!("cargo:rustc-env=NUMFUZZ_SHADOW_PASS_PATH={}", shadow_pass.display());
    println!("cargo:rustc-env=NUMFUZZ_INCLUDE_DIR={}", include.display());
    println!("cargo:rustc-env=NUMFUZZ_ABILIST_PATH={}", abilist.display());
    println!("cargo:rustc-env=NUMFUZZ_CLANG={}", clang.display());
    println!("cargo:rustc-env=NUMFUZZ_CLANGXX={}", clangxx.display());
    println!("cargo:rustc-env=NUMFUZZ_LLVM_BINDIR={}", bindir.display());
    println!("cargo:rustc-env=NUMFUZZ_LLVM_VERSION={version}");
}
