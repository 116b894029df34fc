//! Running a target once for a replay: started with a clean replay environment, waited for
//! under a time limit, stopped when it is over. Triage's replays and `numfuzz cov`'s profile
//! runs both start their processes here.

use std::io;
use std::path::Path;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// A command for `target` whose environment holds none of numfuzz_abi's
/// [`CAMPAIGN_ONLY`](numfuzz_abi::env::CAMPAIGN_ONLY) variables: a replay started from inside a
/// campaign (a run-all worker, a shell with a campaign's variables) runs as from a clean shell.
pub fn command(target: &Path) -> Command {
    let mut cmd = Command::new(target);
    for var in numfuzz_abi::env::CAMPAIGN_ONLY {
        cmd.env_remove(var);
    }
    cmd
}

/// How a process that ran out of time is stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// SIGKILL.
    Kill,
    /// SIGABRT first, on which the runtime's crash handler prints where the program was
    /// (`NUMFUZZ_ABORT=0`), then SIGKILL if it is still there after a grace period.
    AbortForAStack,
}

/// Waits for `child` until `limit`, then stops it as `stop` says. `None`: it ran out of time.
pub fn wait(child: &mut Child, limit: Duration, stop: Stop) -> io::Result<Option<ExitStatus>> {
    if let Some(status) = wait_until(child, Instant::now() + limit)? {
        return Ok(Some(status));
    }
    if stop == Stop::AbortForAStack {
        // SAFETY: signalling our own child process, which has not been reaped.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGABRT) };
        if wait_until(child, Instant::now() + ABORT_GRACE)?.is_some() {
            return Ok(None);
        }
    }
    let _ = child.kill();
    child.wait()?;
    Ok(None)
}

/// How long a process stopped with SIGABRT has to print its stack.
const ABORT_GRACE: Duration = Duration::from_secs(2);

/// Polls `child` until it exits or `deadline` passes, first often (most replays take well under
/// a millisecond) and then at most every 20 ms.
fn wait_until(child: &mut Child, deadline: Instant) -> io::Result<Option<ExitStatus>> {
    let mut pause = Duration::from_micros(100);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn campaign_variables_do_not_reach_a_replay() {
        let cmd = command(Path::new("/bin/true"));
        for var in numfuzz_abi::env::CAMPAIGN_ONLY {
            assert!(
                cmd.get_envs().any(|(k, v)| k == *var && v.is_none()),
                "{var} is not cleared"
            );
        }
    }

    #[test]
    fn a_process_that_ends_in_time_gives_its_status_and_one_that_does_not_is_stopped() {
        let mut quick = Command::new("/bin/sh").args(["-c", "exit 3"]).spawn().unwrap();
        let status = wait(&mut quick, Duration::from_secs(10), Stop::Kill).unwrap();
        assert_eq!(status.and_then(|s| s.code()), Some(3));
        for stop in [Stop::Kill, Stop::AbortForAStack] {
            let mut slow = Command::new("/bin/sleep").arg("30").spawn().unwrap();
            let started = Instant::now();
            assert_eq!(wait(&mut slow, Duration::from_millis(50), stop).unwrap(), None);
            assert!(started.elapsed() < Duration::from_secs(10));
            // Reaped: the status is there, and it was a signal.
            assert!(slow.try_wait().unwrap().is_some_and(|s| s.signal().is_some()));
        }
    }
}
