//! Short `numfuzz run` campaigns and what a test asserts on their output directory, read
//! through `numfuzz-outdir` (the same code triage and the summary use).

use crate::{both, numfuzz};
use numfuzz_abi::ExceptionKind;
use numfuzz_outdir::InstanceDir;
use std::path::Path;
use std::process::Output;
use std::sync::{Mutex, MutexGuard};

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
