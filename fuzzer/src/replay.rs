//! Out-of-process replay of inputs on a numfuzz target: every exception each input raises,
//! whether the harness called `NUMFUZZ_HANDLED()`, crashes and hangs. Used by
//! `numfuzz replay` and `numfuzz triage`.

use numfuzz_abi::report::{ExceptionReport, ReportEvent};
use numfuzz_abi::signature::Signature;
use numfuzz_abi::value::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a replay ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The harness returned; `handled` is whether it called `NUMFUZZ_HANDLED()`.
    Completed { handled: bool },
    /// Killed by a signal (a real crash), with the last lines it printed.
    Crashed { signal: i32, output_tail: String },
    /// Exceeded the time limit.
    TimedOut,
    /// Exited without completing the input (non-zero status, no summary).
    Failed { status: Option<i32>, output_tail: String },
}

/// One input's replay.
#[derive(Clone, Debug)]
pub struct Replay {
    pub input: PathBuf,
    pub bytes: Vec<u8>,
    pub exceptions: Vec<ExceptionReport>,
    pub ending: Ending,
}

impl Replay {
    /// The input decoded by `signature`.
    pub fn values(&self, signature: &Signature) -> Vec<Value> {
        signature.decode(&self.bytes)
    }
}

fn tail(text: &str, lines: usize) -> String {
    let kept: Vec<&str> = text.lines().filter(|l| !l.starts_with('{')).collect();
    kept[kept.len().saturating_sub(lines)..].join("\n")
}

/// Replays `input` on `target` (each input in its own process, so one input's state never
/// leaks into another's).
pub fn replay(target: &Path, input: &Path, timeout: Duration) -> std::io::Result<Replay> {
    let bytes = std::fs::read(input)?;
    let mut child = Command::new(target)
        .arg(input)
        .env(numfuzz_abi::env::ABORT, "0")
        .env(numfuzz_abi::env::REPORT, "json")
        .env_remove(numfuzz_abi::env::SHM_ID)
        .env_remove(numfuzz_abi::env::AFL_SHM_ID)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stderr = child.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf);
        buf
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break Some(s);
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let text = String::from_utf8_lossy(&reader.join().unwrap_or_default()).into_owned();
    let mut exceptions = Vec::new();
    let mut summary = None;
    for line in text.lines().filter(|l| l.starts_with('{')) {
        match serde_json::from_str::<ReportEvent>(line) {
            Ok(ReportEvent::Exception(r)) => exceptions.push(r),
            Ok(ReportEvent::InputDone(s)) => summary = Some(s),
            Err(_) => {}
        }
    }
    use std::os::unix::process::ExitStatusExt;
    let ending = match (status, summary) {
        (None, _) => Ending::TimedOut,
        (Some(s), _) if s.signal().is_some() => Ending::Crashed {
            signal: s.signal().unwrap_or(0),
            output_tail: tail(&text, 8),
        },
        (Some(s), Some(sum)) if s.success() => Ending::Completed { handled: sum.handled },
        (Some(s), _) => Ending::Failed {
            status: s.code(),
            output_tail: tail(&text, 8),
        },
    };
    Ok(Replay {
        input: input.to_path_buf(),
        bytes,
        exceptions,
        ending,
    })
}

/// Name of a signal number (`SIGSEGV`).
pub fn signal_name(signal: i32) -> String {
    nix::sys::signal::Signal::try_from(signal)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {signal}"))
}

/// Plain-text description of one replay, as `numfuzz replay` prints it.
pub fn describe(replay: &Replay, signature: Option<&Signature>) -> String {
    let mut s = format!("{} ({} bytes)\n", replay.input.display(), replay.bytes.len());
    if let Some(sig) = signature {
        for (i, (field, value)) in sig.fields().iter().zip(replay.values(sig)).enumerate() {
            s.push_str(&format!("  [{i}] {field:<3} = {value}  ({})\n", value.to_hex()));
        }
    }
    for e in &replay.exceptions {
        s.push_str(&format!(
            "  {:<9} {} in {}: {}\n",
            e.kind.name(),
            e.site.location(),
            if e.site.function.is_empty() {
                "?"
            } else {
                &e.site.function
            },
            e.expression()
        ));
    }
    match &replay.ending {
        Ending::Completed { handled } => {
            let n = replay.exceptions.len();
            let what = if n == 0 {
                "no exception".to_string()
            } else {
                format!(
                    "{n} exception{}, {}",
                    if n == 1 { "" } else { "s" },
                    if *handled { "handled" } else { "silent" }
                )
            };
            s.push_str(&format!("  => {what}\n"));
        }
        Ending::Crashed { signal, output_tail } => {
            s.push_str(&format!("  => crashed with {}\n", signal_name(*signal)));
            for l in output_tail.lines() {
                s.push_str(&format!("     | {l}\n"));
            }
        }
        Ending::TimedOut => s.push_str("  => timed out\n"),
        Ending::Failed { status, output_tail } => {
            s.push_str(&format!(
                "  => exited with status {}\n",
                status.map_or("?".into(), |c| c.to_string())
            ));
            for l in output_tail.lines() {
                s.push_str(&format!("     | {l}\n"));
            }
        }
    }
    s
}
