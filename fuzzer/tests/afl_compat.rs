//! AFL++ compatibility: Debian's AFL++ 4.04c tools drive numfuzz-cc targets through the
//! runtime's forkserver. afl-fuzz must find a floating-point exception (recorded as a crash
//! that replays to the right kind and line) with file input, with persistent shared-memory
//! input, and in a program with its own `main`; afl-showmap must see the target's edges,
//! also for a map larger than AFL++'s default 64 KiB.

use numfuzz_abi::op::Op;
use numfuzz_abi::report::ExceptionReport;
use numfuzz_abi::ExceptionKind;
use numfuzz_outdir::FuzzerStats;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use testkit::Built;

/// A libFuzzer-style harness with an overflow behind two comparisons: the fuzzer needs a few
/// thousand inputs to get from the seed 1.0 into [1e10, 1e30).
const HARNESS: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64");
static volatile double sink;
static volatile int stepping_stones;
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0);
  if (x > 1e5) {
    stepping_stones++;
    if (x > 1e10 && x < 1e30)
      sink = x * x * x * 1e280; /* @overflow */
  }
  return 0;
}
"#;

/// The same search problem in a program with its own `main` reading the file in argv[1].
const OWN_MAIN: &str = r#"#include <stdio.h>
int main(int argc, char **argv) {
  double x = 0;
  FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
  if (!f) return 2;
  if (fread(&x, sizeof x, 1, f) != 1) x = 0;
  fclose(f);
  volatile double y = 1;
  if (x > 1e5) {
    y = 2;
    if (x > 1e10 && x < 1e30)
      y = x * x * x * 1e280; /* @overflow */
  }
  printf("%g\n", (double)y);
  return 0;
}
"#;

/// Appends its pid to `$PID_LOG` for every input, so a test can count the processes that ran
/// them; overflows for inputs above 1e300.
const PID_LOGGER: &str = r#"#include <numfuzz.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
NUMFUZZ_SIGNATURE("f64");
static volatile double sink;
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FILE *log = fopen(getenv("PID_LOG"), "a");
  if (log) {
    fprintf(log, "%d\n", (int)getpid());
    fclose(log);
  }
  double x = nf_f64(data, size, 0);
  if (x > 1e300)
    sink = x * 1e10; /* @overflow */
  return 0;
}
"#;

/// Line of `source` that carries `/* @name */`.
fn line_of(source: &str, name: &str) -> u32 {
    let marker = format!("/* @{name} */");
    let lines: Vec<usize> = source
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(&marker))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(lines.len(), 1, "marker {marker} must occur once");
    lines[0] as u32
}

/// An AFL++ tool from PATH; a missing AFL++ is a test failure, not a skip.
fn afl_tool(name: &str) -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("{name} not found: install AFL++ 4.04c (Debian package afl++, installed by scripts/setup.sh)")
        })
}

fn f64_file(dir: &Path, name: &str, x: f64) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, x.to_le_bytes()).expect("write input");
    path
}

/// What afl-fuzz left behind when stopped at its first crash.
struct Campaign {
    crash: PathBuf,
    log: String,
    stats: String,
}

fn stop(child: &mut Child) {
    // afl-fuzz stops cleanly (and writes fuzzer_stats) on SIGTERM.
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if child.try_wait().expect("wait for afl-fuzz").is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Runs `afl-fuzz -V 60` on `exe` from the seed 1.0 until it saves its first crash, then
/// stops it. Panics with afl-fuzz's output if no crash appears.
fn fuzz_until_crash(built: &Built, tag: &str, target_args: &[&str], env: &[(&str, &str)]) -> Campaign {
    let work = built.path(tag);
    let seeds = work.join("seeds");
    std::fs::create_dir_all(&seeds).expect("mkdir seeds");
    f64_file(&seeds, "one", 1.0);
    let out = work.join("out");
    let log_path = work.join("afl-fuzz.log");
    let log_file = std::fs::File::create(&log_path).expect("create log");
    let mut child = Command::new(afl_tool("afl-fuzz"))
        .arg("-i")
        .arg(&seeds)
        .arg("-o")
        .arg(&out)
        .args(["-V", "60", "--"])
        .arg(&built.exe)
        .args(target_args)
        .envs([
            ("AFL_SKIP_CPUFREQ", "1"),
            ("AFL_NO_UI", "1"),
            ("AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES", "1"),
            ("AFL_NO_AFFINITY", "1"),
        ])
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().expect("log fd"))
        .stderr(log_file)
        .spawn()
        .expect("start afl-fuzz");
    let crashes = out.join("default").join("crashes");
    let deadline = Instant::now() + Duration::from_secs(120);
    let crash = loop {
        let found = std::fs::read_dir(&crashes).ok().and_then(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("id:")))
        });
        if let Some(path) = found {
            break Some(path);
        }
        if Instant::now() > deadline || child.try_wait().expect("poll afl-fuzz").is_some() {
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    stop(&mut child);
    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
    let Some(crash) = crash else {
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        panic!(
            "afl-fuzz saved no crash in {}; its output ends with:\n{}",
            crashes.display(),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    };
    let stats = std::fs::read_to_string(out.join("default").join("fuzzer_stats")).unwrap_or_default();
    Campaign { crash, log, stats }
}

/// The exceptions a standalone replay of `input` reports (every one, JSON).
fn replay(exe: &Path, input: &Path) -> Vec<ExceptionReport> {
    let input = input.to_str().expect("utf-8 path");
    let out = testkit::run(
        exe,
        &[input],
        b"",
        &[("NUMFUZZ_ABORT", "0"), ("NUMFUZZ_REPORT", "json")],
    );
    assert!(
        out.status.success(),
        "replay failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    testkit::events(&String::from_utf8_lossy(&out.stderr))
        .into_iter()
        .filter_map(|e| match e {
            numfuzz_abi::report::ReportEvent::Exception(r) => Some(r),
            _ => None,
        })
        .collect()
}

/// The crash afl-fuzz saved is the harness's overflow: replayed standalone it raises exactly
/// one exception, an Overflow of the fmul on the marked line.
fn assert_overflow_at_marker(exe: &Path, crash: &Path, file: &str, source: &str) {
    let reports = replay(exe, crash);
    assert_eq!(
        reports.len(),
        1,
        "crash {} should raise one exception: {reports:?}",
        crash.display()
    );
    let r = &reports[0];
    assert_eq!(r.kind, ExceptionKind::Overflow);
    assert_eq!(r.site.op, Op::FMul);
    assert!(r.site.file.ends_with(file), "reported file {}", r.site.file);
    assert_eq!(r.site.line, line_of(source, "overflow"));
    assert_eq!(r.result.as_deref(), Some("inf"));
}

/// A numeric entry of afl-fuzz's `fuzzer_stats` (the format numfuzz writes too).
fn stat(stats: &str, key: &str) -> Option<f64> {
    FuzzerStats::parse(stats).get_f64(key)
}

fn report_speed(mode: &str, campaign: &Campaign) {
    if let Some(speed) = stat(&campaign.stats, "execs_per_sec") {
        eprintln!("afl-fuzz on the numfuzz-cc harness, {mode}: {speed} exec/s");
    }
}

#[test]
fn afl_fuzz_finds_the_overflow_with_file_input_and_a_process_per_input() {
    let built = testkit::compile("harness", &[("harness.c", HARNESS)], &["-O1"], &[]);
    // `@@`: afl-fuzz writes each input to a file; NUMFUZZ_LOOP=1 forks a process per input.
    let campaign = fuzz_until_crash(&built, "file", &["@@"], &[("NUMFUZZ_LOOP", "1")]);
    assert!(
        !campaign.log.contains("SHARED MEMORY FUZZING"),
        "a target given `@@` must read the file, not ask for shared-memory input:\n{}",
        campaign.log
    );
    assert_overflow_at_marker(&built.exe, &campaign.crash, "harness.c", HARNESS);
    report_speed("file input, fork per input", &campaign);
}

#[test]
fn afl_fuzz_finds_the_overflow_with_persistent_shared_memory_input() {
    let built = testkit::compile("harness", &[("harness.c", HARNESS)], &["-O1"], &[]);
    let campaign = fuzz_until_crash(&built, "shm", &[], &[]);
    assert!(
        campaign.log.contains("Persistent mode binary detected"),
        "{}",
        campaign.log
    );
    assert!(
        campaign.log.contains("Using SHARED MEMORY FUZZING feature"),
        "the harness should take its inputs from afl-fuzz's shared memory:\n{}",
        campaign.log
    );
    assert_overflow_at_marker(&built.exe, &campaign.crash, "harness.c", HARNESS);
    report_speed("persistent, shared-memory input", &campaign);
}

#[test]
fn afl_fuzz_drives_a_program_with_its_own_main() {
    let built = testkit::compile("own_main", &[("own_main.c", OWN_MAIN)], &["-O1"], &[]);
    let campaign = fuzz_until_crash(&built, "own", &["@@"], &[]);
    assert_overflow_at_marker(&built.exe, &campaign.crash, "own_main.c", OWN_MAIN);
    let execs = stat(&campaign.stats, "execs_done").unwrap_or(0.0);
    assert!(execs > 0.0, "fuzzer_stats: {}", campaign.stats);
    // Its main has checked operations, so the pass split it; a program with its own main runs
    // the precise copy (one run per process cannot be repeated), whose branches must show.
    let small = showmap_single(&built, &f64_file(built.dir.path(), "small", 1.0));
    let large = showmap_single(&built, &f64_file(built.dir.path(), "large", 1e7));
    assert_ne!(small, large, "x = 1 and x = 1e7 take different branches of main");
}

/// afl-showmap's edges for one input file (no forkserver: afl-showmap runs the target once).
fn showmap_single(built: &Built, input: &Path) -> Vec<(u32, u32)> {
    let map = built.path("single.map");
    let out = Command::new(afl_tool("afl-showmap"))
        .arg("-q")
        .arg("-o")
        .arg(&map)
        .arg("--")
        .arg(&built.exe)
        .arg(input)
        .output()
        .expect("run afl-showmap");
    assert!(
        out.status.success(),
        "afl-showmap failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    parse_map(&std::fs::read_to_string(&map).expect("read map"))
}

/// afl-showmap's `edge:count` lines.
fn parse_map(text: &str) -> Vec<(u32, u32)> {
    text.lines()
        .filter_map(|l| {
            let (e, c) = l.split_once(':')?;
            Some((e.trim().parse().ok()?, c.trim().parse().ok()?))
        })
        .collect()
}

#[test]
fn afl_showmap_sees_the_edges_each_input_takes() {
    let built = testkit::compile("harness", &[("harness.c", HARNESS)], &["-O1"], &[]);
    let small = showmap_single(&built, &f64_file(built.dir.path(), "small", 1.0));
    let large = showmap_single(&built, &f64_file(built.dir.path(), "large", 1e7));
    assert!(!small.is_empty() && !large.is_empty(), "no edges: {small:?} {large:?}");
    assert_ne!(small, large, "x = 1 and x = 1e7 take different branches");
    assert_eq!(
        small,
        showmap_single(&built, &built.path("small")),
        "same input, same edges"
    );
}

/// Runs afl-showmap over a directory of inputs (through the forkserver); returns the
/// per-input maps by file name, the pids that ran the harness, and the target's stderr.
fn showmap_dir(built: &Built, inputs: &[(&str, f64)], args: &[&str], env: &[(&str, &str)]) -> ShowmapRun {
    let dir = built.path("inputs");
    let out = built.path("maps");
    let pid_log = built.path("pid.log");
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_file(&pid_log);
    std::fs::create_dir_all(&dir).expect("mkdir inputs");
    for (name, x) in inputs {
        f64_file(&dir, name, *x);
    }
    let run = Command::new(afl_tool("afl-showmap"))
        .arg("-i")
        .arg(&dir)
        .arg("-o")
        .arg(&out)
        .arg("--")
        .arg(&built.exe)
        .args(args)
        .env("PID_LOG", &pid_log)
        // Show the target's stderr (the exception reports).
        .env("AFL_DEBUG_CHILD", "1")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("run afl-showmap");
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(
        run.status.success(),
        "afl-showmap failed ({}): {}{stderr}",
        run.status,
        String::from_utf8_lossy(&run.stdout)
    );
    let maps = inputs
        .iter()
        .map(|(name, _)| {
            let text = std::fs::read_to_string(out.join(name)).unwrap_or_default();
            (name.to_string(), parse_map(&text))
        })
        .collect();
    let pids = std::fs::read_to_string(&pid_log).unwrap_or_default();
    let mut distinct: Vec<&str> = pids.lines().collect();
    distinct.sort_unstable();
    distinct.dedup();
    ShowmapRun {
        maps,
        runs: pids.lines().count(),
        processes: distinct.len(),
        stderr,
    }
}

struct ShowmapRun {
    maps: Vec<(String, Vec<(u32, u32)>)>,
    runs: usize,
    processes: usize,
    stderr: String,
}

impl ShowmapRun {
    fn map(&self, name: &str) -> &[(u32, u32)] {
        &self.maps.iter().find(|(n, _)| n == name).expect("input").1
    }
}

const PID_INPUTS: [(&str, f64); 6] = [
    ("a", 1.0),
    ("b", 1e301),
    ("c", 2.0),
    ("d", 3.0),
    ("e", 1e302),
    ("f", 4.0),
];

#[test]
fn persistent_mode_runs_many_inputs_per_process_and_resets_between_them() {
    let built = testkit::compile("pids", &[("pids.c", PID_LOGGER)], &["-O1"], &[]);
    let overflow_line = line_of(PID_LOGGER, "overflow");
    // Every exception reported (not just the first) so that each input's reports show.
    let env = [("NUMFUZZ_ABORT", "0"), ("NUMFUZZ_REPORT", "json")];
    // Every input runs once, fast; the two that overflow run a second time, precisely, because
    // the FPU's flags showed an exception (see runtime/src/precise.rs).
    let overflowing = PID_INPUTS.iter().filter(|(_, x)| *x > 1e300).count();
    for args in [&[][..], &["@@"][..]] {
        let run = showmap_dir(&built, &PID_INPUTS, args, &env);
        assert_eq!(
            run.runs,
            PID_INPUTS.len() + overflowing,
            "args {args:?}: every input runs once, again if it raised an exception"
        );
        assert_eq!(run.processes, 1, "args {args:?}: persistent mode keeps one process");
        // The exception de-duplication is per input: both overflowing inputs report.
        let overflows = testkit::events(&run.stderr)
            .into_iter()
            .filter(|e| {
                matches!(e, numfuzz_abi::report::ReportEvent::Exception(r)
                    if r.kind == ExceptionKind::Overflow && r.site.line == overflow_line)
            })
            .count();
        assert_eq!(overflows, 2, "args {args:?}: target stderr:\n{}", run.stderr);
        // Each input's map shows only its own run.
        assert_eq!(run.map("a"), run.map("c"), "args {args:?}");
        assert_eq!(run.map("b"), run.map("e"), "args {args:?}");
        assert_ne!(run.map("a"), run.map("b"), "args {args:?}");
    }
    let fresh = showmap_dir(&built, &PID_INPUTS, &["@@"], &[("NUMFUZZ_LOOP", "1")]);
    assert_eq!(fresh.runs, PID_INPUTS.len() + overflowing);
    assert_eq!(fresh.processes, PID_INPUTS.len(), "NUMFUZZ_LOOP=1: a process per input");
}

#[test]
fn a_map_larger_than_afl_default_is_negotiated() {
    // 34 000 two-way branches: about 68 000 edges, more than AFL++'s default 65 536.
    let mut source = String::from(
        "#include <numfuzz.h>\nNUMFUZZ_SIGNATURE(\"u8,u8,u8,u8\");\nstatic volatile unsigned acc;\n\
         int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size) {\n  if (size < 4) return 0;\n",
    );
    for k in 0..34_000u32 {
        source.push_str(&format!("  if (d[{}] == {}) acc += {k};\n", k % 4, k % 251));
    }
    source.push_str("  return 0;\n}\n");
    let built = testkit::compile("wide", &[("wide.c", &source)], &["-O0"], &[]);
    let sites = testkit::run(&built.exe, &[], b"", &[("NUMFUZZ_SITES", "-")]);
    let table: numfuzz_abi::site::SiteTable = serde_json::from_slice(&sites.stdout).expect("site table");
    assert!(
        table.edges > 65_536,
        "the generated target has only {} edges",
        table.edges
    );
    let run = showmap_dir(&built, &[("zeros", 0.0)], &[], &[]);
    let map = run.map("zeros");
    let highest = map.iter().map(|&(e, _)| e).max().unwrap_or(0);
    assert!(
        highest > 65_536 && highest < table.edges,
        "edges beyond 64 KiB must be recorded (highest {highest} of {}): {}",
        table.edges,
        run.stderr
    );
}

/// A numfuzz region (`NUMFUZZ_SHM_ID`) in a SysV segment the test owns, as a numfuzz
/// forkserver campaign creates it; removed on drop.
struct RegionShm {
    id: libc::c_int,
    base: *mut u8,
    header: numfuzz_abi::shm::ShmHeader,
}

impl RegionShm {
    fn new(slots: u32) -> RegionShm {
        let header = numfuzz_abi::shm::ShmHeader::for_slots(slots);
        // SAFETY: creating and attaching a private segment of the region's size.
        unsafe {
            let id = libc::shmget(libc::IPC_PRIVATE, header.region_size(), libc::IPC_CREAT | 0o600);
            assert!(id >= 0, "shmget: {}", std::io::Error::last_os_error());
            let base = libc::shmat(id, std::ptr::null(), 0).cast::<u8>();
            assert!(base as isize != -1, "shmat: {}", std::io::Error::last_os_error());
            base.cast::<numfuzz_abi::shm::ShmHeader>().write_unaligned(header);
            let mut region = RegionShm { id, base, header };
            let (errbits, exceptions) = region.maps_mut();
            errbits.fill(numfuzz_abi::errbits::NOT_MEASURED);
            exceptions.fill(0);
            region
        }
    }

    /// The ErrBits and exception maps.
    fn maps_mut(&mut self) -> (&mut [u8], &mut [u8]) {
        let n = self.header.slot_capacity as usize;
        // SAFETY: both maps lie inside the attached segment, disjoint.
        unsafe {
            (
                std::slice::from_raw_parts_mut(self.base.add(self.header.errbits_offset as usize), n),
                std::slice::from_raw_parts_mut(self.base.add(self.header.exceptions_offset as usize), n),
            )
        }
    }
}

impl Drop for RegionShm {
    fn drop(&mut self) {
        // SAFETY: detaching and removing our own segment.
        unsafe {
            libc::shmdt(self.base.cast());
            libc::shmctl(self.id, libc::IPC_RMID, std::ptr::null_mut());
        }
    }
}

#[test]
fn with_a_numfuzz_region_exceptions_are_recorded_not_aborted() {
    let built = testkit::compile("harness", &[("harness.c", HARNESS)], &["-O1"], &[]);
    let sites = testkit::run(&built.exe, &[], b"", &[("NUMFUZZ_SITES", "-")]);
    let table: numfuzz_abi::site::SiteTable = serde_json::from_slice(&sites.stdout).expect("site table");
    let mut region = RegionShm::new(64);
    let input = f64_file(built.dir.path(), "in_band", 1e20);
    let out = testkit::run(
        &built.exe,
        &[input.to_str().expect("utf-8 path")],
        b"",
        &[("NUMFUZZ_SHM_ID", &region.id.to_string())],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the run must not abort: {stderr}");
    assert!(
        !stderr.contains("floating-point exception"),
        "nothing printed: {stderr}"
    );
    let (errbits, exceptions) = region.maps_mut();
    let raised: Vec<usize> = (0..exceptions.len()).filter(|&s| exceptions[s] != 0).collect();
    assert_eq!(raised.len(), 1, "one (site, kind) raised: {raised:?}");
    let (site, kind) = (raised[0] / 4, raised[0] % 4);
    assert_eq!(kind, ExceptionKind::Overflow as usize);
    let info = table
        .sites
        .iter()
        .find(|s| s.id as usize == site)
        .expect("raised site in the table");
    assert_eq!((info.op, info.line), (Op::FMul, line_of(HARNESS, "overflow")));
    assert_eq!(errbits[raised[0]], 0, "ErrBits is 0 where the exception happened");
    // SAFETY: the header is at the segment's start.
    let header = unsafe { region.base.cast::<numfuzz_abi::shm::ShmHeader>().read_unaligned() };
    assert_eq!(
        header.site_count as usize,
        table.sites.len(),
        "the target wrote its site count"
    );
}

#[test]
fn a_bad_numfuzz_region_id_is_a_one_line_error() {
    let built = testkit::compile("harness", &[("harness.c", HARNESS)], &["-O1"], &[]);
    let out = testkit::run(&built.exe, &[], b"", &[("NUMFUZZ_SHM_ID", "not-a-number")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("NUMFUZZ_SHM_ID"), "{stderr}");
}
