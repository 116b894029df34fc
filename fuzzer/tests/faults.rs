//! Faults a real campaign meets: a client killed with SIGKILL (what the OOM killer does), one
//! client of two killed, a client process (the core's restarter) killed, `numfuzz run` (the
//! broker) killed, targets that cannot be fuzzed. Each campaign is a real `numfuzz run` on C
//! compiled with numfuzz-cc; the kills are real signals.

use numfuzz_abi::ExceptionKind;
use numfuzz_outdir::{ClientEvent, ClientHistory, EndReason, InputDir, InstanceDir};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use testkit::campaign::{client_pid, found, fuzz, one_at_a_time, start, stat, STEEP};
use testkit::procs::descendants;
use testkit::{both, compile, Built};

fn steep() -> Built {
    compile("steep", &[("steep.c", STEEP)], &["-O1"], &[])
}

fn kill(pid: u32, signal: i32) {
    // SAFETY: signalling a process of our own campaign.
    assert_eq!(unsafe { libc::kill(pid as i32, signal) }, 0, "kill {pid}");
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}

/// The one campaign recorded in the instance's `clients.jsonl`.
fn history(instance: &Path) -> ClientHistory {
    let events = InstanceDir::at(instance).client_events();
    let campaign = events.first().expect("clients.jsonl is empty").campaign_ms();
    ClientHistory::of(&events, campaign)
}

/// Every finding announced in `exceptions.jsonl` has its input on disk.
fn assert_no_finding_lost(instance: &Path) {
    let inst = InstanceDir::at(instance);
    let records = inst.exceptions();
    assert!(!records.is_empty(), "nothing found in {}", instance.display());
    for r in records {
        assert!(inst.dir.join(&r.input).is_file(), "finding {} lost", r.input);
    }
}

/// Kills the client after a few seconds; what the client had started (a forkserver and its
/// child, which sits stopped between inputs) ends with it, the restarter replaces it, the
/// successor goes on from the instance directory, and the campaign spends its whole budget.
fn a_killed_client_is_replaced(extra: &[&str]) {
    let _turn = one_at_a_time();
    let built = steep();
    let out = built.path("out");
    let inst = out.join("default");
    let child = start(&built.exe, &out, 16, extra);
    let first = client_pid(&inst);
    std::thread::sleep(Duration::from_secs(4));
    let execs_before = stat(&InstanceDir::at(&inst), "execs_done");
    let queue_before = InstanceDir::at(&inst).next_id(InputDir::Queue);
    let started_by_first = descendants(first);
    kill(first, libc::SIGKILL);
    let deadline = Instant::now() + Duration::from_secs(10);
    while let Some(left) = started_by_first.iter().find(|&&pid| alive(pid)) {
        assert!(
            Instant::now() < deadline,
            "process {left}, started by the killed client {first}, outlived it by 10 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let o = child.finish();
    assert!(
        o.status.success(),
        "the campaign did not survive the kill:\n{}",
        both(&o)
    );
    let h = history(&inst);
    assert_eq!(h.restarts.len(), 1, "{h:?}");
    assert!(h.restarts[0].1.contains("SIGKILL"), "cause: {}", h.restarts[0].1);
    assert_eq!(h.end.as_ref().map(|e| e.1), Some(EndReason::Budget), "{h:?}");
    assert_ne!(h.last_start.unwrap().0, first, "the same client ended the campaign");
    assert!(
        both(&o).contains("a client died at") && both(&o).contains("was replaced"),
        "the summary does not mention the restart:\n{}",
        both(&o)
    );
    let instance = InstanceDir::at(&inst);
    assert_eq!(stat(&instance, "client_restarts"), 1);
    // The successor counted on from its predecessor and kept fuzzing.
    assert!(
        stat(&instance, "execs_done") > execs_before * 2,
        "the successor barely fuzzed: {} executions after {execs_before}",
        stat(&instance, "execs_done")
    );
    assert!(instance.next_id(InputDir::Queue) >= queue_before, "queue entries lost");
    assert_no_finding_lost(&inst);
    assert!(found(&instance, ExceptionKind::Overflow, None, 7));
}

#[test]
fn a_killed_in_process_client_is_replaced_and_the_campaign_goes_on() {
    a_killed_client_is_replaced(&[]);
}

#[test]
fn a_killed_forkserver_client_is_replaced_and_the_campaign_goes_on() {
    a_killed_client_is_replaced(&["--executor", "forkserver"]);
}

#[test]
fn killing_one_client_of_two_leaves_the_other_running() {
    let _turn = one_at_a_time();
    let built = steep();
    let out = built.path("out");
    let child = start(&built.exe, &out, 14, &["--cores", "0-1"]);
    let (core0, core1) = (out.join("core0"), out.join("core1"));
    let victim = client_pid(&core0);
    client_pid(&core1);
    std::thread::sleep(Duration::from_secs(3));
    kill(victim, libc::SIGKILL);
    std::thread::sleep(Duration::from_secs(1));
    // core1's current client (under load it may have restarted with its saved state after a
    // target time-out, with a new pid: see below) is still there.
    assert!(alive(client_pid(&core1)), "core1's client died with core0's");
    let o = child.finish();
    assert!(o.status.success(), "{}", both(&o));
    let (h0, h1) = (history(&core0), history(&core1));
    assert_eq!(h0.restarts.len(), 1, "{h0:?}");
    assert_eq!(h1.restarts.len(), 0, "{h1:?}");
    // core1's client may restart with its saved state after a time-out of the target (LibAFL's
    // normal in-process restart), but it never started over from the output directory.
    let fresh_starts = InstanceDir::at(&core1)
        .client_events()
        .iter()
        .filter(|e| matches!(e, ClientEvent::Start { restored: false, .. }))
        .count();
    assert_eq!(fresh_starts, 1, "core1's client was replaced: {h1:?}");
    for h in [&h0, &h1] {
        assert_eq!(h.end.as_ref().map(|e| e.1), Some(EndReason::Budget), "{h:?}");
    }
    assert_no_finding_lost(&core0);
    assert_no_finding_lost(&core1);
}

/// The parent of `pid`, from /proc.
fn parent(pid: u32) -> u32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let (_, rest) = stat.rsplit_once(')').unwrap();
    rest.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Waits until `pid` has exited; fails after 20 s.
fn wait_gone(pid: u32, what: &str) {
    let started = Instant::now();
    while alive(pid) {
        assert!(started.elapsed() < Duration::from_secs(20), "{what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_killed_client_process_ends_the_campaign_with_an_error_and_keeps_the_findings() {
    let _turn = one_at_a_time();
    let built = steep();
    let out = built.path("out");
    let inst = out.join("default");
    // In-process: numfuzz (the broker) → the target (the core's restarter) → its client.
    let child = start(&built.exe, &out, 60, &[]);
    let client = client_pid(&inst);
    let restarter = parent(client);
    assert_eq!(parent(restarter), child.id(), "unexpected process tree");
    std::thread::sleep(Duration::from_secs(2));
    kill(restarter, libc::SIGKILL);
    let o = child.finish();
    assert!(
        !o.status.success(),
        "a killed client process went unnoticed:\n{}",
        both(&o)
    );
    let text = both(&o);
    assert!(
        text.contains("client process for core 0") && text.contains("SIGKILL") && text.contains(out.to_str().unwrap()),
        "the error does not say what ended the campaign:\n{text}"
    );
    // The client does not go on without its restarter: it stops cleanly.
    wait_gone(client, "the client outlived its restarter");
    let h = history(&inst);
    assert_eq!(h.end.as_ref().map(|e| e.1), Some(EndReason::Signal), "{h:?}");
    assert_no_finding_lost(&inst);
}

#[test]
fn a_killed_numfuzz_run_takes_its_clients_with_it_and_keeps_the_findings() {
    let _turn = one_at_a_time();
    let built = steep();
    let out = built.path("out");
    let core0 = out.join("core0");
    let core1 = out.join("core1");
    // `numfuzz run` is the broker: with it gone, nobody would collect what the clients find.
    let child = start(&built.exe, &out, 60, &["--cores", "0-1"]);
    let clients = [client_pid(&core0), client_pid(&core1)];
    let restarters = clients.map(parent);
    std::thread::sleep(Duration::from_secs(2));
    kill(child.id(), libc::SIGKILL);
    let o = child.finish();
    assert!(!o.status.success());
    for pid in restarters.iter().chain(&clients) {
        wait_gone(*pid, "a client process outlived `numfuzz run`");
    }
    for inst in [&core0, &core1] {
        let h = history(inst);
        assert_eq!(h.end.as_ref().map(|e| e.1), Some(EndReason::Signal), "{h:?}");
        assert_no_finding_lost(inst);
    }
}

#[test]
fn targets_that_cannot_be_fuzzed_get_an_error_naming_the_cause() {
    let _turn = one_at_a_time();
    // A program without the forkserver handshake.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = testkit::campaign::run(Path::new("/bin/true"), &out, 5, &[]);
    assert!(!o.status.success(), "{}", both(&o));
    let err = both(&o);
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.contains("did not answer the forkserver handshake") && last.contains("numfuzz-cc"),
        "{err}"
    );
    // A coverage build: no edges, no checkers.
    let cov = compile(
        "steep_cov",
        &[("steep.c", STEEP)],
        &["-O1"],
        &[("NUMFUZZ_CC_COVERAGE", "1")],
    );
    let out: PathBuf = cov.path("out");
    let o = testkit::campaign::run(&cov.exe, &out, 5, &[]);
    assert!(!o.status.success(), "{}", both(&o));
    assert!(
        both(&o).contains("is a coverage build") && both(&o).contains("numfuzz cov"),
        "{}",
        both(&o)
    );
    assert!(!out.exists(), "a refused campaign created its output directory");
    // A memory limit of 0, and one the target cannot keep (no numfuzz runtime inside).
    let o = testkit::campaign::run(&cov.exe, &out, 5, &["-m", "0"]);
    assert!(
        !o.status.success() && both(&o).contains("`0` is not a memory limit"),
        "{}",
        both(&o)
    );
    let o = testkit::campaign::run(Path::new("/bin/true"), &out, 5, &["-m", "64"]);
    assert!(!o.status.success(), "{}", both(&o));
    assert!(
        both(&o).contains("-m: the memory limit is kept by the numfuzz runtime"),
        "{}",
        both(&o)
    );
    assert!(!out.exists(), "a refused campaign created its output directory");
}

#[test]
fn a_hard_stop_of_every_process_resumes_with_nothing_lost() {
    let _turn = one_at_a_time();
    let built = steep();
    let out = built.path("out");
    let inst = out.join("default");
    let child = start(&built.exe, &out, 60, &[]);
    let client = client_pid(&inst);
    std::thread::sleep(Duration::from_secs(3));
    // A power cut: every process of the campaign at once.
    // SAFETY: signalling our own child's process group.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    child.finish();
    while alive(client) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let instance = InstanceDir::at(&inst);
    let before = instance.exceptions();
    let queue_before = instance.next_id(InputDir::Queue);
    // What a stop in the middle of a write leaves: a temporary input and a cut line.
    std::fs::write(
        instance.path(InputDir::Queue).join(".id:999999,src:000000.tmp"),
        b"\x01",
    )
    .unwrap();
    let mut records = std::fs::OpenOptions::new()
        .append(true)
        .open(inst.join("exceptions.jsonl"))
        .unwrap();
    std::io::Write::write_all(&mut records, b"{\"time_ms\":12,\"kind\":\"Ov").unwrap();
    drop(records);

    let o = testkit::campaign::run(&built.exe, &out, 6, &[]);
    assert!(o.status.success(), "{}", both(&o));
    let text = both(&o);
    for said in [
        "(resuming)",
        "removed 1 half-written file(s) (queue/.id:999999",
        "dropped a cut last line of exceptions.jsonl",
        &format!("client (pid {client}) finishing"),
    ] {
        assert!(text.contains(said), "the resume does not say `{said}`:\n{text}");
    }
    let after = instance.exceptions();
    assert_eq!(
        after[..before.len()],
        before[..],
        "findings of the stopped campaign changed"
    );
    let lines = std::fs::read_to_string(inst.join("exceptions.jsonl"))
        .unwrap()
        .lines()
        .count();
    assert_eq!(lines, after.len(), "exceptions.jsonl holds a line that does not parse");
    assert!(instance.next_id(InputDir::Queue) >= queue_before);
    assert_no_finding_lost(&inst);
}

#[test]
fn a_harness_that_calls_exit_has_that_input_saved_as_a_crash_and_the_campaign_goes_on() {
    let _turn = one_at_a_time();
    let built = compile(
        "exiter",
        &[(
            "exiter.c",
            r#"#include <numfuzz.h>
#include <stdlib.h>
NUMFUZZ_SIGNATURE("f64");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0);
  if (x > 1000.0 && x < 1e6) exit(3);
  volatile double y = x * 3.0; (void)y;
  return 0;
}
"#,
        )],
        &["-O1"],
        &[],
    );
    let out = built.path("out");
    let instance = fuzz(&built.exe, &out, 8, &[]);
    // The exit() input is saved as a crash.
    let crash = named(&crash_files(&instance), ",crash").clone();
    let x = f64::from_le_bytes(std::fs::read(&crash).unwrap()[..8].try_into().unwrap());
    assert!(x > 1000.0 && x < 1e6, "{x} does not take the exit() branch");
    assert!(
        stat(&instance, "execs_done") > 1000,
        "the campaign stopped at the exit()"
    );
    assert_eq!(
        history(&out.join("default")).restarts.len(),
        0,
        "an exit() counted as a silent death"
    );
    // Replayed by hand, the input says what happened.
    let r = testkit::run(&built.exe, &[crash.to_str().unwrap()], &[], &[]);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(r.status.signal(), Some(libc::SIGABRT), "{}", both(&r));
    assert!(both(&r).contains("called exit()"), "{}", both(&r));
}

/// A target that hangs on almost every input: each time-out ends the in-process client, and
/// its successor resumes in the stage that timed out, where it times out again. The campaign
/// still ends at its budget, on its own and as a budget's end, with its hangs saved.
#[test]
fn a_target_that_hangs_on_most_inputs_still_ends_at_its_budget() {
    let _turn = one_at_a_time();
    let built = compile(
        "hanger",
        &[(
            "hanger.c",
            r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0);
  volatile int spin = x != 0.0;
  while (spin) {
  }
  volatile double y = x * 3.0; (void)y;
  return 0;
}
"#,
        )],
        &["-O1"],
        &[],
    );
    let out = built.path("out");
    let mut child = start(&built.exe, &out, 5, &["-t", "200"]);
    // Far more than the budget: a campaign that never ends is stopped here (and killed as the
    // test ends) and fails.
    let waited = Instant::now();
    while !child.leader_exited() {
        assert!(
            waited.elapsed() < Duration::from_secs(180),
            "a campaign of 5 s on a target that hangs was still running after 180 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let o = child.finish();
    let text = both(&o);
    assert!(o.status.success(), "{text}");
    let inst = out.join("default");
    let h = history(&inst);
    assert!(
        matches!(h.end, Some((_, EndReason::Budget, _))),
        "the campaign did not end as a budget's end: {:?}\n{text}",
        h.end
    );
    assert!(
        std::fs::read_dir(InstanceDir::at(&inst).path(InputDir::Hangs))
            .unwrap()
            .count()
            > 0,
        "no hang saved:\n{text}"
    );
}

/// A harness whose inputs in (1000, 1e6) touch 256 MiB, and whose inputs in [1, 100] touch
/// 16 MiB (under the limit the tests give).
const MEMORY_HOG: &str = r#"#include <numfuzz.h>
#include <stdlib.h>
#include <string.h>
NUMFUZZ_SIGNATURE("f64");
static void touch(size_t mib) {
  size_t n = mib << 20;
  char *p = malloc(n);
  if (!p) return;
  memset(p, 1, n);
  volatile char last = p[n - 1]; (void)last;
  free(p);
}
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0);
  if (x > 1000.0 && x < 1e6) touch(256);
  else if (x >= 1.0 && x <= 100.0) touch(16);
  volatile double y = x * 3.0; (void)y;
  return 0;
}
"#;

/// The files of the instance's `crashes/`.
fn crash_files(instance: &InstanceDir) -> Vec<PathBuf> {
    std::fs::read_dir(instance.path(InputDir::Crashes))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect()
}

/// The first of `files` whose name has `tag` (`,oom`, `,crash`).
fn named<'a>(files: &'a [PathBuf], tag: &str) -> &'a PathBuf {
    files
        .iter()
        .find(|p| p.to_string_lossy().contains(tag))
        .unwrap_or_else(|| panic!("no {tag} input among {files:?}"))
}

/// `-m 64`: the hog's input is saved as `oom`, the campaign goes on to its end, and triage
/// replays it under the campaign's limit and names it.
fn a_memory_hog_is_stopped_and_saved_as_oom(extra: &[&str]) {
    let _turn = one_at_a_time();
    let built = compile("hog", &[("hog.c", MEMORY_HOG)], &["-O1"], &[]);
    let out = built.path("out");
    // A time limit the 256 MiB memset stays well inside, so that it is the memory limit
    // that stops it (under a calibrated one of 20 ms it would be a hang first).
    let mut args = vec!["-m", "64", "-t", "5000"];
    args.extend_from_slice(extra);
    let instance = fuzz(&built.exe, &out, 10, &args);
    let saved = crash_files(&instance);
    let oom = named(&saved, ",oom");
    let x = f64::from_le_bytes(std::fs::read(oom).unwrap()[..8].try_into().unwrap());
    assert!(x > 1000.0 && x < 1e6, "{x} does not take the 256 MiB branch");
    assert!(
        !saved.iter().any(|p| p.to_string_lossy().contains(",crash")),
        "an out-of-memory stop was saved as a plain crash: {saved:?}"
    );
    assert!(stat(&instance, "execs_done") > 1000, "the campaign stopped at the hog");
    assert_eq!(instance.stats().unwrap().memory_limit_mb(), Some(64));
    assert!(stat(&instance, "out_of_memory") >= 1);

    // Triage replays under the campaign's limit: the input reproduces as what it was saved as.
    let t = testkit::numfuzz(&["triage", out.to_str().unwrap()]);
    let text = both(&t);
    assert!(t.status.success(), "{text}");
    assert!(text.contains("out of memory: more than 64 MiB"), "{text}");
    assert!(text.contains(", 0 not reproduced"), "{text}");
    assert!(
        text.contains("in touch ("),
        "the stop names where the memory went:\n{text}"
    );

    // By hand: without a limit the input completes; with one it is stopped and says why.
    let free = testkit::run(&built.exe, &[oom.to_str().unwrap()], &[], &[]);
    assert!(free.status.success(), "{}", both(&free));
    let limited = testkit::run(
        &built.exe,
        &[oom.to_str().unwrap()],
        &[],
        &[("NUMFUZZ_MEM_LIMIT_MB", "64")],
    );
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(limited.status.signal(), Some(libc::SIGABRT), "{}", both(&limited));
    assert!(both(&limited).contains("limit 64 MiB"), "{}", both(&limited));
}

#[test]
fn an_in_process_memory_hog_is_stopped_and_saved_as_oom() {
    a_memory_hog_is_stopped_and_saved_as_oom(&[]);
}

#[test]
fn a_forkserver_memory_hog_is_stopped_and_saved_as_oom() {
    a_memory_hog_is_stopped_and_saved_as_oom(&["--executor", "forkserver"]);
}

/// A tmpfs of `mib` MiB mounted at `dir` for the life of the value (None when this process may
/// not mount: not root).
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(dir: &Path, mib: u32) -> Option<SmallDisk> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return None;
        }
        std::fs::create_dir_all(dir).unwrap();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "numfuzz-test"])
            .arg(dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "root could not mount a tmpfs: {}", both(&o));
        Some(SmallDisk(dir.to_path_buf()))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// The disk holding `-o` fills up: the campaign ends with an error that says to free space and
/// run again, no half-written input is left, and the same command resumes once there is room,
/// with every finding kept. (Needs root for the tmpfs; as another user outside CI it prints SKIPPED
/// and passes.)
#[test]
fn a_full_disk_ends_the_campaign_with_an_error_and_a_resume_goes_on() {
    let _turn = one_at_a_time();
    let built = steep();
    let disk = built.path("disk");
    let Some(_mounted) = SmallDisk::mount(&disk, 8) else {
        // CI runs as root (it installs packages): there a missing mount is a failure, not a skip.
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run this test as root: it mounts a small tmpfs"
        );
        eprintln!("SKIPPED a_full_disk_ends_the_campaign_with_an_error_and_a_resume_goes_on: mounting a small tmpfs needs root");
        return;
    };
    let out = disk.join("out");
    // Room for the campaign to start and save its first findings, then none.
    let filler = disk.join("filler");
    let o = Command::new("dd")
        .args(["if=/dev/zero", "bs=4096"])
        .arg(format!("of={}", filler.display()))
        .arg(format!("count={}", (8 << 20) / 4096 - 48))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", both(&o));
    let o = testkit::campaign::run(&built.exe, &out, 30, &[]);
    let text = both(&o);
    assert!(!o.status.success(), "a campaign on a full disk exited 0:\n{text}");
    assert!(
        text.contains("is full") && text.contains("run the same command again"),
        "the error does not say what to do:\n{text}"
    );
    let inst = out.join("default");
    for dir in [InputDir::Queue, InputDir::Crashes] {
        let leftovers: Vec<String> = std::fs::read_dir(InstanceDir::at(&inst).path(dir))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "half-written inputs left: {leftovers:?}");
    }
    let before = InstanceDir::at(&inst).exceptions();

    // Free the space and run the same command: it resumes and keeps everything.
    std::fs::remove_file(&filler).unwrap();
    let o = testkit::campaign::run(&built.exe, &out, 5, &[]);
    assert!(o.status.success(), "the resume failed:\n{}", both(&o));
    assert!(both(&o).contains("resuming"), "{}", both(&o));
    let after = InstanceDir::at(&inst).exceptions();
    for r in &before {
        assert!(
            after.iter().any(|a| a.input == r.input),
            "finding {} lost by the resume",
            r.input
        );
    }
    assert_no_finding_lost(&inst);
}

/// An `-o` that cannot be created gets a one-line error naming it.
#[test]
fn an_output_directory_that_cannot_be_created_is_refused() {
    let built = steep();
    for out in ["/proc/version/out", "/sys/numfuzz-out"] {
        let o = testkit::campaign::run(&built.exe, Path::new(out), 5, &[]);
        assert!(!o.status.success(), "{}", both(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        let last = err.lines().last().unwrap_or_default();
        assert!(last.contains(out), "the error does not name {out}:\n{err}");
        assert_eq!(
            err.lines()
                .filter(|l| l.starts_with("Error") || l.starts_with("numfuzz: error"))
                .count(),
            1,
            "{err}"
        );
    }
}

/// A program with its own `main` (fuzzed through the forkserver, one input per child): the
/// whole run is the input, and the limit holds there and in triage's replays too.
#[test]
fn a_memory_hog_with_its_own_main_is_stopped_and_saved_as_oom() {
    let _turn = one_at_a_time();
    let built = compile(
        "hog_main",
        &[(
            "hog_main.c",
            r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
  FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
  int c = f ? fgetc(f) : EOF;
  if (c >= 'M') {
    size_t n = (size_t)256 << 20;
    char *p = malloc(n);
    if (p) { memset(p, 1, n); printf("%d\n", p[n - 1]); free(p); }
  }
  return 0;
}
"#,
        )],
        &["-O1"],
        &[],
    );
    let out = built.path("out");
    let o = testkit::numfuzz(&[
        "run",
        "-o",
        out.to_str().unwrap(),
        "-V",
        "8",
        "--no-tui",
        "-m",
        "64",
        "-t",
        "5000",
        "--",
        built.exe.to_str().unwrap(),
        "@@",
    ]);
    assert!(o.status.success(), "{}", both(&o));
    let instance = InstanceDir::at(&out.join("default"));
    let oom = named(&crash_files(&instance), ",oom").clone();
    assert!(std::fs::read(&oom).unwrap()[0] >= b'M');
    let t = testkit::numfuzz(&["triage", out.to_str().unwrap()]);
    let text = both(&t);
    assert!(t.status.success(), "{text}");
    assert!(text.contains("out of memory: more than 64 MiB"), "{text}");
    assert!(text.contains(", 0 not reproduced"), "{text}");
}
