//! The requester's side of served replays (numfuzz-abi's `serve`): long-lived target
//! processes, one per replay running at a time, each forking a child per input. A replay
//! through a server costs a fork instead of an exec, the dynamic loader and the program's
//! start-up (its debug information read again for every stack it prints).
//!
//! Only targets that say they serve (the runtime's [`MARKER`](numfuzz_abi::serve::MARKER))
//! and run with no arguments are served; for the others, for variables a server cannot
//! change per input, and when a server fails, [`Servers::replay`] answers `None` and the
//! replay runs in a process of its own.

use crate::target::Target;
use crate::target_process;
use numfuzz_abi::serve::{self, Request};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// `NUMFUZZ_REPLAY_SERVER=0` replays every input in a process started for it (to compare, or
/// to rule the servers out when a replay looks wrong).
pub const SWITCH: &str = "NUMFUZZ_REPLAY_SERVER";

/// How long a server may take to start (a taint build maps its shadow memory first).
const START_LIMIT: Duration = Duration::from_secs(30);
/// How long a child stopped with SIGABRT has to print its stack, as for a replay process.
const ABORT_GRACE: Duration = Duration::from_secs(2);
/// How long the server may take to report a child it was told is dead.
const REAP_LIMIT: Duration = Duration::from_secs(10);

/// What a served replay gives back: the child's status (`None`: it ran out of time and was
/// stopped) and what it printed on stderr.
pub struct Served {
    pub status: Option<ExitStatus>,
    pub stderr: String,
}

/// The servers of one build, for one memory limit.
pub struct Servers {
    target: PathBuf,
    memory_limit_mb: Option<u64>,
    /// `None` until the target was read; `Some(false)`: it does not serve (or failed to).
    serves: Mutex<Option<bool>>,
    idle: Mutex<Vec<Server>>,
}

impl Servers {
    pub fn new(target: &Path, memory_limit_mb: Option<u64>) -> Servers {
        Servers {
            target: target.to_path_buf(),
            memory_limit_mb,
            serves: Mutex::new(None),
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Whether these servers run `target` under `memory_limit_mb`.
    pub fn serve_for(&self, target: &Path, memory_limit_mb: Option<u64>) -> bool {
        self.target == target && self.memory_limit_mb == memory_limit_mb
    }

    /// Replays `input` with `vars` set, within `limit`; `None` when it cannot be served here
    /// (the caller replays it in a process of its own).
    pub fn replay(&self, input: &[u8], vars: &[(&str, String)], limit: Duration) -> Option<Served> {
        if !vars.iter().all(|(k, _)| serve::PER_INPUT.contains(k)) || !self.serves() {
            return None;
        }
        let mut server = match self.take_idle() {
            Some(s) => s,
            None => match Server::start(&self.target, self.memory_limit_mb) {
                Ok(s) => s,
                Err(e) => {
                    log_failure(&self.target, "start", &e);
                    *lock(&self.serves) = Some(false);
                    return None;
                }
            },
        };
        let request = Request {
            input: input.to_vec(),
            vars: vars.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        };
        match server.replay(&request, limit) {
            Ok(served) => {
                lock(&self.idle).push(server);
                Some(served)
            }
            Err(e) => {
                // The server is dropped (and killed); the next replay starts another.
                log_failure(&self.target, "replay", &e);
                None
            }
        }
    }

    fn take_idle(&self) -> Option<Server> {
        lock(&self.idle).pop()
    }

    /// Whether the target says it serves (read once).
    fn serves(&self) -> bool {
        let mut serves = lock(&self.serves);
        *serves.get_or_insert_with(|| {
            let switched_off = std::env::var_os(SWITCH).is_some_and(|v| v == "0");
            !switched_off && Target::inspect(&self.target).is_ok_and(|t| t.serves_replays && t.has_harness)
        })
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn log_failure(target: &Path, what: &str, e: &io::Error) {
    if std::env::var_os("NUMFUZZ_LOG").is_some() {
        eprintln!(
            "numfuzz: served replays of {}: {what} failed ({e}); replaying in processes of their own",
            target.display()
        );
    }
}

/// One running server.
struct Server {
    process: Child,
    requests: ChildStdin,
    replies: ChildStdout,
}

impl Server {
    fn start(target: &Path, memory_limit_mb: Option<u64>) -> io::Result<Server> {
        let mut process = target_process::command(target)
            .env(numfuzz_abi::env::SERVE, "1")
            .env(numfuzz_abi::env::ABORT, "0")
            .env(numfuzz_abi::env::REPORT, "json")
            .envs(memory_limit_mb.map(|mb| (numfuzz_abi::env::MEM_LIMIT_MB, mb.to_string())))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let requests = process.stdin.take().expect("piped stdin");
        let replies = process.stdout.take().expect("piped stdout");
        let mut server = Server {
            process,
            requests,
            replies,
        };
        let hello = server.read_u32_by(Instant::now() + START_LIMIT)?;
        if hello != Some(serve::HELLO) {
            return Err(io::Error::other(format!("no hello ({hello:?})")));
        }
        Ok(server)
    }

    fn replay(&mut self, request: &Request, limit: Duration) -> io::Result<Served> {
        self.requests.write_all(&request.encode())?;
        self.requests.flush()?;
        let pid = self
            .read_u32_by(Instant::now() + START_LIMIT)?
            .ok_or_else(|| io::Error::other("no child pid"))? as libc::pid_t;
        let mut timed_out = false;
        let mut status = self.read_u32_by(Instant::now() + limit)?;
        if status.is_none() {
            timed_out = true;
            // As a replay process is stopped: SIGABRT for its stack, then SIGKILL.
            // SAFETY: the child is the server's and not yet reaped, so the pid is still its.
            unsafe { libc::kill(pid, libc::SIGABRT) };
            status = self.read_u32_by(Instant::now() + ABORT_GRACE)?;
            if status.is_none() {
                // SAFETY: as above.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                status = self.read_u32_by(Instant::now() + REAP_LIMIT)?;
            }
        }
        let status = status.ok_or_else(|| io::Error::other("no status of a killed child"))?;
        let len = self
            .read_u32_by(Instant::now() + REAP_LIMIT)?
            .ok_or_else(|| io::Error::other("no output length"))?;
        let mut text = vec![0u8; len as usize];
        if !self.read_exact_by(&mut text, Instant::now() + REAP_LIMIT)? {
            return Err(io::Error::other("output cut short"));
        }
        use std::os::unix::process::ExitStatusExt;
        Ok(Served {
            status: (!timed_out).then(|| ExitStatus::from_raw(status as i32)),
            stderr: String::from_utf8_lossy(&text).into_owned(),
        })
    }

    /// One `u32` of a reply, or `None` when `deadline` passed first.
    fn read_u32_by(&mut self, deadline: Instant) -> io::Result<Option<u32>> {
        let mut b = [0u8; 4];
        Ok(self.read_exact_by(&mut b, deadline)?.then(|| u32::from_le_bytes(b)))
    }

    /// Fills `buf` from the replies; `false` when `deadline` passed before the first byte came.
    /// Once a field began, the rest of it is read whatever the deadline.
    fn read_exact_by(&mut self, buf: &mut [u8], deadline: Instant) -> io::Result<bool> {
        if buf.is_empty() {
            return Ok(true);
        }
        if !wait_readable(self.replies.as_raw_fd(), deadline)? {
            return Ok(false);
        }
        self.replies.read_exact(buf)?;
        Ok(true)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Its children die with it (they asked for SIGKILL when their parent ends).
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// Waits until `fd` has data (or its writer closed it) or `deadline` passes.
fn wait_readable(fd: i32, deadline: Instant) -> io::Result<bool> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: polling one descriptor we own.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        if n > 0 {
            return Ok(true);
        }
        if n == 0 {
            if Instant::now() >= deadline {
                return Ok(false);
            }
            continue;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}
