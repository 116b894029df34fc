//! No process left behind: a client that is stopped (SIGSTOP, as a scheduler, a debugger or
//! job control does) when `numfuzz run` is killed, or asked to stop, still ends, and writes its
//! end record, within 10 s, with either executor. A stopped process leaves SIGTERM pending until it is resumed,
//! so "it ends with its parent by SIGTERM" is not enough there.

use numfuzz_outdir::{ClientHistory, EndReason, InstanceDir};
use std::path::Path;
use std::time::{Duration, Instant};
use testkit::campaign::{client_pid, one_at_a_time, start, STEEP};
use testkit::procs::{processes, Process};
use testkit::{both, compile};

/// The processes of a campaign: everything in `numfuzz run`'s session (its restarters and
/// clients), and whatever runs the target, which in forkserver campaigns is a session of its
/// own (the forkserver and its children).
fn campaign_processes(session: u32, dir: &Path) -> Vec<Process> {
    let dir = std::fs::canonicalize(dir).unwrap();
    processes()
        .into_iter()
        .filter(|p| p.session == session || p.exe.starts_with(&dir))
        .collect()
}

/// The state letter of `pid` (`T`: stopped), once it is `want`; fails after 10 s.
fn wait_for_state(pid: u32, want: char) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let state = processes().into_iter().find(|p| p.pid == pid).map(|p| p.state);
        if state == Some(want) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "process {pid} is in state {state:?}, not {want}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill(pid: u32, signal: i32) {
    // SAFETY: signalling a process of our own campaign.
    assert_eq!(unsafe { libc::kill(pid as i32, signal) }, 0, "kill {pid}");
}

/// A 2-core campaign; core 0's client is stopped with SIGSTOP, then `numfuzz run` gets
/// `signal`. Within 10 s no process of the campaign is left, and both clients wrote their end.
fn a_stopped_client_ends_with_numfuzz_run(signal: i32, extra: &[&str]) {
    let _turn = one_at_a_time();
    let built = compile("steep", &[("steep.c", STEEP)], &["-O1"], &[]);
    let out = built.path("out");
    let mut args = vec!["--cores", "0-1"];
    args.extend_from_slice(extra);
    let mut run = start(&built.exe, &out, 120, &args);
    let (core0, core1) = (out.join("core0"), out.join("core1"));
    let stopped = client_pid(&core0);
    client_pid(&core1);
    kill(stopped, libc::SIGSTOP);
    wait_for_state(stopped, 'T');
    kill(run.id(), signal);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !run.leader_exited() {
        assert!(Instant::now() < deadline, "`numfuzz run` outlived signal {signal}");
        std::thread::sleep(Duration::from_millis(20));
    }
    loop {
        let left = campaign_processes(run.id(), built.dir.path());
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "10 s after signal {signal} to `numfuzz run`, with client {stopped} stopped, these processes of the campaign are left: {left:#?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let o = run.finish();
    for inst in [&core0, &core1] {
        let events = InstanceDir::at(inst).client_events();
        let h = ClientHistory::of(&events, events[0].campaign_ms());
        assert_eq!(
            h.end.as_ref().map(|e| e.1),
            Some(EndReason::Signal),
            "{} did not stop cleanly: {h:?}\n{}",
            inst.display(),
            both(&o)
        );
    }
}

#[test]
fn a_stopped_in_process_client_ends_with_a_killed_numfuzz_run() {
    a_stopped_client_ends_with_numfuzz_run(libc::SIGKILL, &[]);
}

#[test]
fn a_stopped_forkserver_client_ends_with_a_killed_numfuzz_run() {
    a_stopped_client_ends_with_numfuzz_run(libc::SIGKILL, &["--executor", "forkserver"]);
}

#[test]
fn a_stopped_in_process_client_ends_with_a_terminated_numfuzz_run() {
    a_stopped_client_ends_with_numfuzz_run(libc::SIGTERM, &[]);
}

#[test]
fn a_stopped_forkserver_client_ends_with_a_terminated_numfuzz_run() {
    a_stopped_client_ends_with_numfuzz_run(libc::SIGTERM, &["--executor", "forkserver"]);
}
