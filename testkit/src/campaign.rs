//! Short `numfuzz run` campaigns and what a test asserts on their output directory, read
//! through `numfuzz-outdir` (the same code triage and the summary use).

use crate::procs::Session;
use crate::{both, numfuzz, Tools};
use numfuzz_abi::ExceptionKind;
use numfuzz_outdir::{ClientEvent, InstanceDir};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A harness with an overflow behind a narrow window of x (width ~0.05 near 1392.7), inside a
/// region the fuzzer reaches at once: no branch leads to the exception, only ErrBits does.
/// Above the window exp itself overflows (another site, line 7), so the window is where the
/// fmul at [`STEEP_LINE`] overflows with a finite operand. Compile it as `steep.c`.
pub const STEEP: &str = r#"#include <numfuzz.h>
#include <math.h>
NUMFUZZ_SIGNATURE("f64");
static double steep(double x) {
  if (x < 1.0 || x > 2000.0)
    return 0.0;
  double e = exp(x * 40.0 - 55000.0);
  double scaled = e * 7.0;
  return scaled;
}
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  volatile double r = steep(nf_f64(data, size, 0));
  (void)r;
  return 0;
}
"#;

/// The line of `e * 7.0` in [`STEEP`].
pub const STEEP_LINE: u32 = 8;

/// Campaigns compete for the machine's cores, and a campaign starved of CPU misses what it
/// should find: the campaign tests of one test binary take turns through this lock.
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `numfuzz run -o OUT -V SECONDS --no-tui EXTRA... -- TARGET` (one core, `run`'s
/// default, unless `extra` has `--cores`) and returns what it printed.
pub fn run(target: &Path, out: &Path, seconds: u32, extra: &[&str]) -> Output {
    let seconds = seconds.to_string();
    let mut args = vec![
        "run",
        "-o",
        out.to_str().expect("UTF-8 path"),
        "-V",
        &seconds,
        "--no-tui",
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", target.to_str().expect("UTF-8 path")]);
    numfuzz(&args)
}

/// Starts `numfuzz run -o OUT -V SECONDS --no-tui EXTRA -- TARGET` in the background, in a
/// session of its own (so a test can kill the whole campaign at once, and what is left of it
/// is killed when the test ends).
pub fn start(target: &Path, out: &Path, seconds: u32, extra: &[&str]) -> Session {
    // `-t 1000` unless the test sets its own: a limit calibrated from the seeds (20 ms, wall
    // clock) is met by chance on a loaded machine, and each time-out respawns the in-process
    // client with a new pid, which is not what the fault tests are about.
    let limit: &[&str] = if extra.contains(&"-t") { &[] } else { &["-t", "1000"] };
    Session::spawn(
        Command::new(Tools::get().numfuzz())
            .args([
                "run",
                "-o",
                out.to_str().expect("UTF-8 path"),
                "-V",
                &seconds.to_string(),
                "--no-tui",
            ])
            .args(limit)
            .args(extra)
            .arg("--")
            .arg(target)
            .env("CI", "1")
            .stdin(std::process::Stdio::null()),
    )
}

/// The pid of the instance's running client, once it has started and written its stats.
pub fn client_pid(instance: &Path) -> u32 {
    let inst = InstanceDir::at(instance);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if inst.dir.join("fuzzer_stats").exists() {
            if let Some(ClientEvent::Start { pid, .. }) = inst
                .client_events()
                .iter()
                .rev()
                .find(|e| matches!(e, ClientEvent::Start { .. }))
            {
                return *pid;
            }
        }
        assert!(Instant::now() < deadline, "no client started in {}", instance.display());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// How many times a client of the instance started (a first start, and one per restart).
pub fn client_starts(instance: &InstanceDir) -> usize {
    instance
        .client_events()
        .iter()
        .filter(|e| matches!(e, ClientEvent::Start { .. }))
        .count()
}

/// [`run`], asserting that it succeeded; returns the first instance.
pub fn fuzz(target: &Path, out: &Path, seconds: u32, extra: &[&str]) -> InstanceDir {
    let o = run(target, out, seconds, extra);
    assert!(o.status.success(), "numfuzz run on {}:\n{}", target.display(), both(&o));
    InstanceDir::at(&out.join("default"))
}

/// Whether the instance recorded `kind` at `line` (of `file`, when given: a site's file is
/// the path the compiler was given).
pub fn found(instance: &InstanceDir, kind: ExceptionKind, file: Option<&str>, line: u32) -> bool {
    instance
        .exceptions()
        .iter()
        .any(|e| e.kind == kind && e.site.line == line && file.is_none_or(|f| e.site.file == f))
}

/// A numeric `fuzzer_stats` entry of the instance; panics, with the file, when it is missing.
pub fn stat(instance: &InstanceDir, key: &str) -> u64 {
    let stats = instance.stats().expect("fuzzer_stats");
    stats
        .get_u64(key)
        .unwrap_or_else(|| panic!("no numeric {key} in fuzzer_stats:\n{}", stats.render()))
}
