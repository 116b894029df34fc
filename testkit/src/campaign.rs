//! Short `numfuzz run` campaigns and what a test asserts on their output directory, read
//! through `numfuzz-outdir` (the same code triage and the summary use).

use crate::{both, numfuzz};
use numfuzz_abi::ExceptionKind;
use numfuzz_outdir::InstanceDir;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

/// Campaigns compete for the machine's cores, and a campaign starved of CPU misses what it
/// should find: the campaign tests of one test binary take turns through this lock.
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `numfuzz run -o OUT -V SECONDS --no-tui EXTRA... -- TARGET` (one core, `run`'s
/// default, unless `extra` has `--cores`), asserts that it succeeded, and returns its first
/// instance.
pub fn fuzz(target: &Path, out: &Path, seconds: u32, extra: &[&str]) -> InstanceDir {
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
    let o = numfuzz(&args);
    assert!(o.status.success(), "numfuzz {}:\n{}", args.join(" "), both(&o));
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
