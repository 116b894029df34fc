//! The processes a test starts, and ending them when the test ends, pass or fail: a test that
//! fails half-way through a campaign must not leave its clients fuzzing (or stopped) for hours.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long the processes of a [`Session`] may outlive its leader before
/// [`Session::finish`] kills them: a client stopping cleanly once its broker was killed (what
/// the fault tests do) takes far less.
pub const GRACE: Duration = Duration::from_secs(10);

/// A process started as the leader of a session of its own (as a service manager, `setsid` or
/// `scripts/chaos.sh` start `numfuzz run`), and everything it starts there. Dropping it, or
/// [`Session::finish`], kills whatever of the session is left.
///
/// A session rather than only a process group: the kernel's job-control clean-up (SIGHUP and
/// SIGCONT to a stopped group orphaned in its session) does not reach it, so a test sees what
/// numfuzz itself does about stopped processes.
pub struct Session {
    child: Option<Child>,
}

impl Session {
    /// Starts `cmd` with its stdout and stderr piped.
    pub fn spawn(cmd: &mut Command) -> Session {
        // SAFETY: setsid is async-signal-safe, as a pre_exec hook must be.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            })
        };
        let child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
        Session { child: Some(child) }
    }

    fn child(&mut self) -> &mut Child {
        self.child.as_mut().expect("the session's leader")
    }

    /// The leader's pid, which is also the session's and its process group's id.
    pub fn id(&self) -> u32 {
        self.child.as_ref().expect("the session's leader").id()
    }

    /// Writes `bytes` to the leader's stdin (when piped) and closes it, from a thread of its
    /// own: a program that prints much before it reads must not block on a full pipe.
    pub fn feed(&mut self, bytes: &[u8]) {
        if let Some(mut input) = self.child().stdin.take() {
            let bytes = bytes.to_vec();
            // The program may exit before reading everything.
            std::thread::spawn(move || input.write_all(&bytes));
        }
    }

    /// Whether the leader has exited. It stays unreaped (a zombie) until [`Session::finish`],
    /// so that its pid, the group's id, cannot be taken by another process meanwhile.
    pub fn leader_exited(&mut self) -> bool {
        self.wait_unreaped(libc::WNOHANG)
    }

    fn wait_unreaped(&mut self, flags: libc::c_int) -> bool {
        let pid = self.id();
        loop {
            // SAFETY: siginfo_t is plain data; waitid fills it.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: waiting for our own child without reaping it.
            let r = unsafe { libc::waitid(libc::P_PID, pid, &mut info, libc::WEXITED | libc::WNOWAIT | flags) };
            if r == 0 {
                // SAFETY: waitid filled in the pid field (0 when nothing has exited yet).
                return unsafe { info.si_pid() } != 0;
            }
            let e = std::io::Error::last_os_error();
            assert_eq!(e.kind(), std::io::ErrorKind::Interrupted, "waitid {pid}: {e}");
        }
    }

    /// Waits for the leader, collecting what it printed, gives the rest of its process group
    /// [`GRACE`] to end, kills what is left and reaps the leader.
    pub fn finish(mut self) -> Output {
        let child = self.child();
        let stdout = reader(child.stdout.take());
        let stderr = reader(child.stderr.take());
        self.wait_unreaped(0);
        let deadline = Instant::now() + GRACE;
        let id = self.id();
        while Instant::now() < deadline && processes().iter().any(|p| p.group == id && p.pid != id) {
            std::thread::sleep(Duration::from_millis(50));
        }
        self.end();
        let status = self.child().wait().expect("reaping the session's leader");
        self.child = None;
        // The pipes close once every process that held them is gone, as now.
        Output {
            status,
            stdout: stdout.join().expect("stdout reader"),
            stderr: stderr.join().expect("stderr reader"),
        }
    }

    /// SIGKILL to every process of the session that is still in its process group.
    fn end(&mut self) {
        // SAFETY: signalling the group the leader created; its unreaped pid keeps the id ours.
        unsafe { libc::killpg(self.id() as libc::pid_t, libc::SIGKILL) };
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.child.is_some() {
            self.end();
            let _ = self.child().kill();
            let _ = self.child().wait();
        }
    }
}

fn reader(pipe: Option<impl Read + Send + 'static>) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// Runs `cmd` in a [`Session`] to its end and returns what it printed; whatever it left
/// running is killed.
pub fn output(cmd: &mut Command, stdin: &[u8]) -> Output {
    let mut session = Session::spawn(cmd.stdin(Stdio::piped()));
    session.feed(stdin);
    session.finish()
}

/// A live process, as `/proc` shows it.
#[derive(Clone, Debug)]
pub struct Process {
    pub pid: u32,
    /// Its process group and session.
    pub group: u32,
    pub session: u32,
    /// The state letter (`R`, `S`, `T` stopped, ...).
    pub state: char,
    pub exe: PathBuf,
}

/// Every process of this machine but zombies (which hold nothing but their pid).
pub fn processes() -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // `pid (comm) state ppid pgrp session ...`; comm may hold spaces and parentheses.
            let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
            let state = fields.next()?.chars().next()?;
            let group = fields.nth(1)?.parse().ok()?;
            let session = fields.next()?.parse().ok()?;
            let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
            (state != 'Z').then_some(Process {
                pid,
                group,
                session,
                state,
                exe,
            })
        })
        .collect()
}

/// The children of `pid`, their children and so on, from /proc.
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut next = vec![pid];
    while let Some(parent) = next.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{parent}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let children = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                found.push(child);
                next.push(child);
            }
        }
    }
    found
}

/// The live processes running a program under `dir` (a test's temporary directory: the
/// targets it built, their client, restarter and forkserver processes, whatever session they
/// run in).
pub fn running_under(dir: &Path) -> Vec<Process> {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    processes().into_iter().filter(|p| p.exe.starts_with(&dir)).collect()
}

/// SIGKILL to every process running a program under `dir`, until none is left (a forkserver
/// may fork once more meanwhile).
pub fn end_all_under(dir: &Path) {
    for _ in 0..10 {
        let left = running_under(dir);
        if left.is_empty() {
            return;
        }
        for p in left {
            // SAFETY: signalling a process that runs one of the test's own programs.
            unsafe { libc::kill(p.pid as libc::pid_t, libc::SIGKILL) };
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
