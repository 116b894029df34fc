//! `--build`: the library built four ways by the user's own command, and every harness
//! compiled and linked against each build.
//!
//! The command runs through `sh -c` in the current directory, once per variant, with `CC`/`CXX`
//! set to the numfuzz-cc/numfuzz-c++ beside this numfuzz, the variant's switch exported
//! (`NUMFUZZ_CC_TAINT=1`, `NUMFUZZ_CC_SHADOW=1`, `NUMFUZZ_CC_SHADOW=mpfr`, none for the fuzz
//! build) and `NUMFUZZ_BUILD_DIR` naming DIR/build/<variant>, where the command must put its
//! objects and its static library: the four builds must not share object files. The
//! conventions' `error_hook` is exported as `NUMFUZZ_CC_ERROR_HOOK`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Fuzz,
    Taint,
    Shadow,
    /// The shadow build with MPFR shadows, which triage asks where the x87 one cannot tell.
    Mpfr,
}

pub const VARIANTS: [Variant; 4] = [Variant::Fuzz, Variant::Taint, Variant::Shadow, Variant::Mpfr];

const SWITCHES: [&str; 2] = ["NUMFUZZ_CC_TAINT", "NUMFUZZ_CC_SHADOW"];

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Fuzz => "fuzz",
            Variant::Taint => "taint",
            Variant::Shadow => "shadow",
            Variant::Mpfr => "mpfr",
        }
    }

    /// Appended to a harness binary's name (where triage looks for the taint and shadow builds).
    pub fn suffix(self) -> &'static str {
        match self {
            Variant::Fuzz => "",
            Variant::Taint => ".taint",
            Variant::Shadow => ".shadow",
            Variant::Mpfr => ".mpfr",
        }
    }

    /// Sets this variant's compiler switch and clears the others'.
    fn configure(self, cmd: &mut Command) {
        for s in SWITCHES {
            cmd.env_remove(s);
        }
        match self {
            Variant::Fuzz => {}
            Variant::Taint => {
                cmd.env("NUMFUZZ_CC_TAINT", "1");
            }
            Variant::Shadow => {
                cmd.env("NUMFUZZ_CC_SHADOW", "1");
            }
            Variant::Mpfr => {
                cmd.env("NUMFUZZ_CC_SHADOW", "mpfr");
            }
        }
    }
}

pub struct BuildOptions<'a> {
    pub command: &'a str,
    /// `--lib` words (`$NUMFUZZ_BUILD_DIR` is replaced); empty: every `*.a` of the build dir.
    pub libs: &'a [String],
    /// Include directories and the clang arguments given after `--`.
    pub compile_flags: Vec<String>,
    /// The conventions' `error_hook`, named to numfuzz-cc while the library builds.
    pub error_hook: Option<&'a str>,
}

/// A harness that did not compile, with the log saying why.
pub struct Failure {
    pub binary: String,
    pub log: PathBuf,
}

/// The wrappers beside this executable.
struct Wrappers {
    cc: PathBuf,
    cxx: PathBuf,
}

impl Wrappers {
    fn locate() -> anyhow::Result<Wrappers> {
        let exe = std::env::current_exe()?.canonicalize()?;
        let dir = exe.parent().unwrap_or(Path::new("."));
        let cc = dir.join("numfuzz-cc");
        anyhow::ensure!(
            cc.is_file(),
            "{} is missing: build the workspace (scripts/build.sh) so that numfuzz-cc is beside numfuzz",
            cc.display()
        );
        let cxx = ["numfuzz-c++", "numfuzz-cxx"]
            .iter()
            .map(|n| dir.join(n))
            .find(|p| p.is_file())
            .unwrap_or_else(|| cc.clone());
        Ok(Wrappers { cc, cxx })
    }
}

/// Builds the library four ways, then every harness of `functions` (DIR/src/F.c) into
/// DIR/bin/F, F.taint, F.shadow and F.mpfr. A failing library build is an error; failing harnesses
/// are returned.
pub fn build(dir: &Path, functions: &[String], opts: &BuildOptions) -> anyhow::Result<Vec<Failure>> {
    let tools = Wrappers::locate()?;
    let dir = std::path::absolute(dir)?;
    let mut links = Vec::new();
    for v in VARIANTS {
        let build_dir = build_library(&dir, v, opts, &tools)?;
        links.push((v, link_args(&build_dir, v, opts.libs)?));
    }
    std::fs::create_dir_all(dir.join("bin"))?;
    std::fs::create_dir_all(dir.join("build/harness"))?;
    let jobs: Vec<(&String, Variant, &Vec<String>)> = functions
        .iter()
        .flat_map(|f| links.iter().map(move |(v, libs)| (f, *v, libs)))
        .collect();
    let failures = run_jobs(&jobs, |(f, v, libs)| compile_harness(&dir, f, *v, libs, opts, &tools));
    Ok(failures.into_iter().flatten().collect())
}

/// Runs the user's command for one variant; returns the build directory.
fn build_library(dir: &Path, v: Variant, opts: &BuildOptions, tools: &Wrappers) -> anyhow::Result<PathBuf> {
    let build_dir = dir.join("build").join(v.name());
    std::fs::create_dir_all(&build_dir)?;
    let log_path = dir.join("build").join(format!("{}.log", v.name()));
    let log = std::fs::File::create(&log_path)?;
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(opts.command)
        .env("CC", &tools.cc)
        .env("CXX", &tools.cxx)
        .env("NUMFUZZ_BUILD_DIR", &build_dir)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    v.configure(&mut cmd);
    if let Some(hook) = opts.error_hook {
        cmd.env(numfuzz_abi::env::CC_ERROR_HOOK, hook);
    }
    let status = cmd
        .status()
        .map_err(|e| anyhow::anyhow!("cannot run the build command through sh: {e}"))?;
    anyhow::ensure!(
        status.success(),
        "the {} build of the library failed ({status}); see {}",
        v.name(),
        log_path.display()
    );
    Ok(build_dir)
}

/// What a harness of variant `v` links: `--lib` with the build directory substituted, or
/// every static library the command put into it; then libm.
fn link_args(build_dir: &Path, v: Variant, libs: &[String]) -> anyhow::Result<Vec<String>> {
    let d = build_dir.display().to_string();
    let mut out: Vec<String> = libs
        .iter()
        .flat_map(|l| {
            l.replace("${NUMFUZZ_BUILD_DIR}", &d)
                .replace("$NUMFUZZ_BUILD_DIR", &d)
                .split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    if out.is_empty() {
        let mut archives: Vec<String> = std::fs::read_dir(build_dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "a"))
            .map(|p| p.display().to_string())
            .collect();
        archives.sort();
        anyhow::ensure!(
            !archives.is_empty(),
            "the {} build put no static library (*.a) into {d}; make the build command install it into $NUMFUZZ_BUILD_DIR, or say what to link with --lib",
            v.name()
        );
        out = archives;
    }
    out.push("-lm".into());
    Ok(out)
}

/// Compiles DIR/src/F.c into DIR/bin/F<suffix>; a failure names its log.
fn compile_harness(
    dir: &Path,
    function: &str,
    v: Variant,
    libs: &[String],
    opts: &BuildOptions,
    tools: &Wrappers,
) -> Option<Failure> {
    let binary = format!("{function}{}", v.suffix());
    let out = dir.join("bin").join(&binary);
    let tmp = dir.join("bin").join(format!(".{binary}.tmp"));
    let log = dir.join("build/harness").join(format!("{binary}.log"));
    let mut cmd = Command::new(&tools.cc);
    cmd.arg("-O2")
        .args(&opts.compile_flags)
        .arg(dir.join("src").join(format!("{function}.c")))
        .args(libs)
        .arg("-o")
        .arg(&tmp)
        .stdin(Stdio::null());
    v.configure(&mut cmd);
    let ok = match cmd.output() {
        Ok(o) => {
            let _ = std::fs::write(&log, [o.stdout, o.stderr].concat());
            o.status.success() && std::fs::rename(&tmp, &out).is_ok()
        }
        Err(e) => {
            let _ = std::fs::write(&log, format!("cannot run {}: {e}\n", tools.cc.display()));
            false
        }
    };
    let _ = std::fs::remove_file(&tmp);
    (!ok).then_some(Failure { binary, log })
}

/// Runs `work` on every job, on as many threads as the machine has cores.
fn run_jobs<J: Sync, R: Send>(jobs: &[J], work: impl Fn(&J) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(jobs.len().max(1));
    let next = Mutex::new(0usize);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().expect("job counter");
                    *n += 1;
                    *n - 1
                };
                let Some(job) = jobs.get(i) else { break };
                let r = work(job);
                results.lock().expect("results").push((i, r));
            });
        }
    });
    let mut results = results.into_inner().expect("results");
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}
