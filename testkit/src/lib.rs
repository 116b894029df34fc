//! Test support for numfuzz's integration tests.
//!
//! Integration tests use the *release* tools built by `scripts/build.sh` (the same ones a
//! user runs): `numfuzz-cc`, `numfuzz-c++`, `numfuzz` and `libnumfuzz_runtime.a` in
//! `target/release` (or `$NUMFUZZ_BIN_DIR`).

use numfuzz_abi::report::{ExceptionReport, InputSummary, ReportEvent};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub use tempfile::TempDir;

pub mod campaign;
pub mod procs;

/// The built numfuzz tools.
pub struct Tools {
    pub bin_dir: PathBuf,
}

impl Tools {
    pub fn get() -> &'static Tools {
        static TOOLS: OnceLock<Tools> = OnceLock::new();
        TOOLS.get_or_init(|| {
            let bin_dir = std::env::var_os("NUMFUZZ_BIN_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
                        .parent()
                        .expect("workspace root")
                        .to_path_buf();
                    let target = std::env::var_os("CARGO_TARGET_DIR")
                        .map(PathBuf::from)
                        .unwrap_or(root.join("target"));
                    target.join("release")
                });
            for needed in ["numfuzz-cc", "numfuzz", "libnumfuzz_runtime.a"] {
                assert!(
                    bin_dir.join(needed).exists(),
                    "{} is missing: run scripts/build.sh (cargo build --release --workspace) before the tests",
                    bin_dir.join(needed).display()
                );
            }
            let cxx = bin_dir.join("numfuzz-c++");
            if !cxx.exists() {
                let _ = std::os::unix::fs::symlink("numfuzz-cc", &cxx);
            }
            Tools { bin_dir }
        })
    }

    pub fn cc(&self) -> PathBuf {
        self.bin_dir.join("numfuzz-cc")
    }
    pub fn cxx(&self) -> PathBuf {
        self.bin_dir.join("numfuzz-c++")
    }
    pub fn numfuzz(&self) -> PathBuf {
        self.bin_dir.join("numfuzz")
    }
}

/// A program compiled into its own temporary directory.
pub struct Built {
    pub dir: TempDir,
    pub exe: PathBuf,
}

impl Built {
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

impl Drop for Built {
    /// Whatever still runs the test's programs ends with the test, pass or fail, also when it
    /// left its process group (a forkserver is a session of its own).
    fn drop(&mut self) {
        procs::end_all_under(self.dir.path());
    }
}

/// Writes `sources` (file name, text) to a fresh directory and builds them with
/// `numfuzz-cc` (or `numfuzz-c++` for C++ names) into `exe_name`. `env` adds environment
/// variables (e.g. `NUMFUZZ_CC_NO_CHECKS=1`). Panics with clang's output on failure.
pub fn compile(exe_name: &str, sources: &[(&str, &str)], flags: &[&str], env: &[(&str, &str)]) -> Built {
    let dir = tempfile::Builder::new()
        .prefix("numfuzz-test-")
        .tempdir()
        .expect("temp dir");
    let mut cpp = false;
    let mut files = Vec::new();
    for (name, text) in sources {
        let p = dir.path().join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&p, text).expect("write source");
        cpp |= name.ends_with(".cc") || name.ends_with(".cpp");
        if !name.ends_with(".h") {
            files.push(p);
        }
    }
    let tools = Tools::get();
    let exe = dir.path().join(exe_name);
    let out = Command::new(if cpp { tools.cxx() } else { tools.cc() })
        .current_dir(dir.path())
        .args(flags)
        .args(&files)
        .arg("-o")
        .arg(&exe)
        .envs(env.iter().copied())
        .output()
        .expect("run numfuzz-cc");
    assert!(
        out.status.success(),
        "numfuzz-cc failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Built { dir, exe }
}

/// Compiles one C source `name` (text `source`) to an object in `dir` with `numfuzz-cc -c`,
/// extra flags and environment (e.g. `NUMFUZZ_CC_NO_CHECKS=1` for an edges-only reference);
/// returns the object's path. Panics with clang's output on failure.
pub fn compile_object(dir: &Path, name: &str, source: &str, flags: &[&str], env: &[(&str, &str)]) -> PathBuf {
    let src = dir.join(name);
    std::fs::write(&src, source).expect("write source");
    static OBJECTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = OBJECTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let obj = dir.join(format!("{}-{n}.o", Path::new(name).with_extension("").display()));
    let out = Command::new(Tools::get().cc())
        .current_dir(dir)
        .arg("-c")
        .args(flags)
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .envs(env.iter().copied())
        .output()
        .expect("run numfuzz-cc");
    assert!(
        out.status.success(),
        "numfuzz-cc -c {name} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    obj
}

/// [`compile`], plus the taint build of the same sources as `<exe_name>.taint` beside it (where
/// `numfuzz triage` looks for it).
pub fn compile_with_taint(exe_name: &str, sources: &[(&str, &str)], flags: &[&str]) -> Built {
    let built = compile(exe_name, sources, flags, &[]);
    let taint = compile(exe_name, sources, flags, &[("NUMFUZZ_CC_TAINT", "1")]);
    std::fs::copy(&taint.exe, built.path(&format!("{exe_name}.taint"))).expect("copy the taint build");
    built
}

/// [`compile_with_taint`], plus the shadow build as `<exe_name>.shadow` beside it.
pub fn compile_with_taint_and_shadow(exe_name: &str, sources: &[(&str, &str)], flags: &[&str]) -> Built {
    let built = compile_with_taint(exe_name, sources, flags);
    let shadow = compile(exe_name, sources, flags, &[("NUMFUZZ_CC_SHADOW", "1")]);
    std::fs::copy(&shadow.exe, built.path(&format!("{exe_name}.shadow"))).expect("copy the shadow build");
    built
}

/// [`compile_with_taint_and_shadow`], plus the MPFR shadow build as `<exe_name>.mpfr` beside it:
/// the whole ladder triage climbs.
pub fn compile_with_every_build(exe_name: &str, sources: &[(&str, &str)], flags: &[&str]) -> Built {
    let built = compile_with_taint_and_shadow(exe_name, sources, flags);
    let mpfr = compile(exe_name, sources, flags, &[("NUMFUZZ_CC_SHADOW", "mpfr")]);
    std::fs::copy(&mpfr.exe, built.path(&format!("{exe_name}.mpfr"))).expect("copy the MPFR build");
    built
}

/// An output directory laid out by hand the way `numfuzz run` writes it: instance
/// directories with a `cmdline` naming `target`, and inputs written into them.
pub struct HandCampaign {
    pub root: PathBuf,
}

impl HandCampaign {
    pub fn new(root: &Path, target: &Path, instances: &[&str]) -> HandCampaign {
        for inst in instances {
            for sub in ["queue", "crashes", "hangs"] {
                std::fs::create_dir_all(root.join(inst).join(sub)).expect("mkdir");
            }
            std::fs::write(root.join(inst).join("cmdline"), format!("{}\n", target.display())).expect("cmdline");
        }
        HandCampaign {
            root: root.to_path_buf(),
        }
    }

    /// Saves `bytes` as `instance/crashes/name`; returns the path relative to the root.
    pub fn crash(&self, instance: &str, name: &str, bytes: &[u8]) -> String {
        std::fs::write(self.root.join(instance).join("crashes").join(name), bytes).expect("write input");
        format!("{instance}/crashes/{name}")
    }
}

/// Triage of a hand-laid campaign of `built` under `built.path(out)` holding `inputs`
/// (name, bytes) as crashes of one instance: the JSON report, and its root findings (the
/// classes a root of an escape gets: bug, range, undefined, not-judged) by line.
pub fn triage_roots(built: &Built, out: &str, inputs: &[(String, Vec<u8>)]) -> (BTreeMap<u64, Value>, Value) {
    let root = built.path(out);
    let c = HandCampaign::new(&root, &built.exe, &["default"]);
    for (name, bytes) in inputs {
        c.crash("default", name, bytes);
    }
    let o = numfuzz(&["triage", root.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "{}", both(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("triage JSON");
    let roots = doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| ["bug", "range", "undefined", "not-judged"].contains(&f["class"].as_str().unwrap_or_default()))
        .map(|f| (f["location"]["line"].as_u64().expect("line"), f.clone()))
        .collect();
    (roots, doc)
}

/// Runs `numfuzz` with `args` (empty stdin; `CI=1`, as on a CI machine: no terminal UI), in a
/// session of its own that ends with it (see [`procs::Session`]).
pub fn numfuzz(args: &[&str]) -> Output {
    procs::output(Command::new(Tools::get().numfuzz()).args(args).env("CI", "1"), &[])
}

/// stdout then stderr of a run, for assertions and their messages.
pub fn both(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs `exe` with `args`, `stdin` bytes and extra environment, in a session of its own that
/// ends with it (see [`procs::Session`]).
pub fn run(exe: &Path, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
    procs::output(Command::new(exe).args(args).envs(env.iter().copied()), stdin)
}

/// Runs `exe` on one input through stdin and returns its JSON reports: every (site, kind) it
/// raised once, in order, `origin` when any of its exceptions was one (no abort).
pub fn reports(exe: &Path, input: &[u8]) -> Vec<ExceptionReport> {
    reports_with(exe, input, &[])
}

/// [`reports`] with extra environment (e.g. `NUMFUZZ_PRECISE=0`: a fast run first, re-run
/// precisely only when the FPU's flags or a sentinel show an exception, as under a fuzzer).
pub fn reports_with(exe: &Path, input: &[u8], env: &[(&str, &str)]) -> Vec<ExceptionReport> {
    let mut vars = vec![("NUMFUZZ_ABORT", "0"), ("NUMFUZZ_REPORT", "json")];
    vars.extend_from_slice(env);
    let out = run(exe, &[], input, &vars);
    assert!(
        out.status.success(),
        "target failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut merged: Vec<ExceptionReport> = Vec::new();
    for e in events(&String::from_utf8_lossy(&out.stderr)) {
        let ReportEvent::Exception(r) = e else { continue };
        match merged.iter_mut().find(|m| m.kind == r.kind && m.site.id == r.site.id) {
            Some(m) => m.origin |= r.origin,
            None => merged.push(r),
        }
    }
    merged
}

/// The input summaries of a JSON report stream.
pub fn summaries(stderr: &str) -> Vec<InputSummary> {
    events(stderr)
        .into_iter()
        .filter_map(|e| match e {
            ReportEvent::InputDone(s) => Some(s),
            _ => None,
        })
        .collect()
}

/// Parses the JSON lines of a report stream (other lines are ignored).
pub fn events(stderr: &str) -> Vec<ReportEvent> {
    stderr
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad report line {l}: {e}")))
        .collect()
}

/// The shadow of the primary result (index 0) and why it is unreliable, from one run of a
/// shadow build (x87 or MPFR) on `bytes` with `env` added; panics with stderr when there is none.
pub fn primary_shadow(exe: &Path, bytes: &[u8], env: &[(&str, &str)]) -> (String, Option<String>) {
    let mut all = vec![("NUMFUZZ_REPORT", "json"), ("NUMFUZZ_ABORT", "0")];
    all.extend_from_slice(env);
    let out = run(exe, &[], bytes, &all);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    events(&stderr)
        .into_iter()
        .find_map(|e| match e {
            ReportEvent::Result(r) if r.index == Some(0) => r.shadow,
            _ => None,
        })
        .map(|s| (s.value, s.unreliable))
        .unwrap_or_else(|| panic!("no shadowed result:\n{stderr}"))
}

/// The input of the tests' C cases that read a case number and one double (`int case; double
/// x;`, little-endian, no padding: the harnesses read the fields one by one).
pub fn case_input(case: i32, x: f64) -> Vec<u8> {
    let mut b = case.to_le_bytes().to_vec();
    b.extend_from_slice(&x.to_le_bytes());
    b
}

/// Little-endian encoding of f64 fields.
pub fn f64s(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Little-endian encoding of f32 fields.
pub fn f32s(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// SplitMix64: a small seeded generator for the property tests' operands, so that a failure
/// reproduces from its seed.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// One of `items`.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}
