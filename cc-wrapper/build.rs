//! Builds the numfuzz LLVM passes (the checker pass and the shadow builds' pass) against the pinned llvm-config and generates the ABI header.
//!
//! Exposes to the crate (as compile-time env): `NUMFUZZ_PASS_PATH`, `NUMFUZZ_SHADOW_PASS_PATH`, `NUMFUZZ_INCLUDE_DIR`,
//! `NUMFUZZ_ABILIST_PATH` (the DataFlowSanitizer ABI list of taint builds),
//! `NUMFUZZ_CLANG`, `NUMFUZZ_CLANGXX`, `NUMFUZZ_LLVM_BINDIR`.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

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

fn main() {
    println!("cargo:rerun-if-env-changed=LLVM_CONFIG");
    println!("cargo:rerun-if-changed=pass/numfuzz-pass.cc");
    println!("cargo:rerun-if-changed=pass/numfuzz-shadow.cc");
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
    let build_plugin = |source: &str, plugin: &Path| {
        let mut cmd = Command::new(&clangxx);
        cmd.args(query(&cfg, "--cxxflags").split_whitespace())
            .args(["-shared", "-fPIC", "-O2", "-Wall", "-Wno-unused-parameter"])
            .arg(format!("-I{}", include.display()))
            .arg(Path::new(source))
            .arg("-o")
            .arg(plugin)
            .args(query(&cfg, "--ldflags").split_whitespace());
        let status = cmd
            .status()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", clangxx.display()));
        assert!(status.success(), "building the numfuzz pass {source} failed: {cmd:?}");
    };
    let pass = out.join("numfuzz-pass.so");
    build_plugin("pass/numfuzz-pass.cc", &pass);
    let shadow_pass = out.join("numfuzz-shadow.so");
    build_plugin("pass/numfuzz-shadow.cc", &shadow_pass);

    println!("cargo:rustc-env=NUMFUZZ_PASS_PATH={}", pass.display());
    println!("cargo:rustc-env=NUMFUZZ_SHADOW_PASS_PATH={}", shadow_pass.display());
    println!("cargo:rustc-env=NUMFUZZ_INCLUDE_DIR={}", include.display());
    println!("cargo:rustc-env=NUMFUZZ_ABILIST_PATH={}", abilist.display());
    println!("cargo:rustc-env=NUMFUZZ_CLANG={}", clang.display());
    println!("cargo:rustc-env=NUMFUZZ_CLANGXX={}", clangxx.display());
    println!("cargo:rustc-env=NUMFUZZ_LLVM_BINDIR={}", bindir.display());
    println!("cargo:rustc-env=NUMFUZZ_LLVM_VERSION={version}");
}
