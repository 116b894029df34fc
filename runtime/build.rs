//! Compiles the runtime's C shims: weak main, AFL++ markers, FP re-execution (shim.c) and the
//! DataFlowSanitizer wrappers of taint builds (taint_shim.c) and the shadow builds' memory
//! and call shadows (shadow_core.c, with the x87 entry points in shadow.c and the MPFR ones in
//! shadow_mpfr.c).

fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    println!("cargo:rerun-if-changed=src/taint_shim.c");
    println!("cargo:rerun-if-changed=src/shadow.c");
    println!("cargo:rerun-if-changed=src/shadow_core.c");
    println!("cargo:rerun-if-changed=src/shadow_core.h");
    println!("cargo:rerun-if-changed=src/shadow_mpfr.c");
    println!("cargo:rerun-if-changed=abi/src");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out.join("numfuzz_abi.h"), numfuzz_abi::c_header::generate()).expect("write numfuzz_abi.h");
    cc::Build::new()
        .file("src/shim.c")
        .file("src/taint_shim.c")
        .file("src/shadow.c")
        .file("src/shadow_core.c")
        // Pulled out of the archive by MPFR shadow builds only (they link -lmpfr -lgmp).
        .file("src/shadow_mpfr.c")
        .include(&out)
        // Exact IEEE semantics for the re-executed operations: no contraction, honour the
        // dynamic rounding mode, keep trapping semantics.
        .flag_if_supported("-ffp-contract=off")
        .flag_if_supported("-frounding-math")
        .flag_if_supported("-fno-fast-math")
        .flag_if_supported("-Wno-unknown-pragmas")
        .flag_if_supported("-Wno-prio-ctor-dtor")
        // gcc notes that passing a union holding a `long double` changed ABI in gcc 4.4; the
        // shadow core's unions never cross to code built by anything older.
        .flag_if_supported("-Wno-psabi")
        .opt_level(2)
        .compile("numfuzz_shim");
}
