//! Out-of-process replay of inputs on a numfuzz target: every exception each input raises,
//! whether the harness called `NUMFUZZ_HANDLED()`, crashes (with the stack the runtime
//! prints) and hangs; and the decoded, printable view of inputs and exceptions that
//! `numfuzz replay` and `numfuzz triage` both show.

use crate::replay_server::{Served, Servers};
use crate::target_process::{self, Stop};
use numfuzz_abi::kind::ExceptionKind;
use numfuzz_abi::report::{
    ErrorReport, ExceptionReport, MemoryExceeded, PrecisionLoss, ReportEvent, ResultReport, StatusReport, TaintReport,
};
use numfuzz_abi::signature::{FieldType, Signature};
use numfuzz_abi::value::Value;
use serde::Serialize;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use numfuzz_abi::report::Frame;

/// How a replay ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplayEnding {
    /// The harness returned; `handled` is whether it called `NUMFUZZ_HANDLED()`.
    Completed { handled: bool },
    /// Killed by a signal (a real crash): the stack the runtime printed (innermost first;
    /// empty when the program died without one) and the last lines it printed.
    Crashed {
        signal: i32,
        /// What the runtime said of the signal, e.g. "stack overflow" or "out of memory: more
        /// than 64 MiB" (the memory limit stopped it).
        cause: Option<String>,
        /// The memory limit stopped the input: by how much it went past.
        out_of_memory: Option<MemoryExceeded>,
        stack: Vec<Frame>,
        output_tail: String,
    },
    /// Exceeded the time limit: where the runtime said it was when it was stopped (innermost
    /// first; empty when it could not say).
    TimedOut { stack: Vec<Frame> },
    /// Exited without completing the input (non-zero status, no summary).
    Failed { status: Option<i32>, output_tail: String },
}

/// One input's replay.
#[derive(Clone, Debug)]
pub struct Replay {
    pub input: PathBuf,
    pub bytes: Vec<u8>,
    /// Every exception event, in order: one per (site, kind), plus a second one when its
    /// first origin came after its first exception.
    pub exceptions: Vec<ExceptionReport>,
    /// The results the harness declared, in order.
    pub results: Vec<ResultReport>,
    /// A taint build's flows.
    pub taint: Option<TaintReport>,
    /// The library's own error reports, in order (the first `MAX_ERROR_REPORTS`).
    pub errors: Vec<ErrorReport>,
    /// The integers calls returned after the first error report, in order.
    pub statuses: Vec<StatusReport>,
    /// An MPFR shadow build's places where a value that lost its digits went non-finite, zero
    /// or subnormal, in order.
    pub precision: Vec<PrecisionLoss>,
    pub ending: ReplayEnding,
}

impl Replay {
    /// The input decoded by `signature`.
    pub fn values(&self, signature: &Signature) -> Vec<Value> {
        signature.decode(&self.bytes)
    }

    /// The frame that names a crash: the innermost one in the program's own code (an
    /// absolute source path; system libraries' frames such as `raise`/`abort` have
    /// relative or no paths; the numfuzz runtime's are skipped), else the innermost one.
    /// A stack overflow often strikes inside a checker called from the recursion.
    pub fn crash_frame(&self) -> Option<&Frame> {
        match &self.ending {
            ReplayEnding::Crashed { stack, .. } | ReplayEnding::TimedOut { stack } => stack
                .iter()
                .find(|f| f.file.as_deref().is_some_and(|p| p.starts_with('/')) && !f.is_numfuzz_runtime())
                .or_else(|| stack.first()),
            _ => None,
        }
    }

    /// How a crashed replay is named: the signal, plus the runtime's cause when it gave one
    /// (`SIGSEGV (stack overflow)`).
    pub fn crash_name(&self) -> Option<String> {
        match &self.ending {
            ReplayEnding::Crashed { signal, cause, .. } => Some(match cause {
                Some(c) => format!("{} ({c})", signal_name(*signal)),
                None => signal_name(*signal),
            }),
            _ => None,
        }
    }

    /// The memory limit stopped the input.
    pub fn out_of_memory(&self) -> bool {
        matches!(
            &self.ending,
            ReplayEnding::Crashed {
                out_of_memory: Some(_),
                ..
            }
        )
    }

    /// The input raised `kind` at a site for which `at` is true.
    pub fn raises(&self, kind: ExceptionKind, at: impl Fn(&ExceptionReport) -> bool) -> bool {
        self.exceptions.iter().any(|e| e.kind == kind && at(e))
    }
}

/// How to run a target on one input: its path, and the arguments recorded for the campaign
/// (`@@` is replaced by the input file; other arguments get the input on stdin, as afl-fuzz
/// does; no arguments: the input file is the only argument, as the runtime's `main` reads).
///
/// Every input runs in a process of its own, so one input's state never leaks into another's:
/// a child forked by a long-lived server of the target when it serves replays
/// ([`replay_server`](crate::replay_server)), else a process started for it. A replay is
/// deterministic, so the same bytes replayed again with the same variables are answered from
/// memory; clones share their servers and what they remember.
#[derive(Clone)]
pub struct Replayer {
    pub target: PathBuf,
    pub args: Vec<String>,
    pub timeout: Duration,
    /// The campaign's `-m` (MiB): an input that needs more ends as an out-of-memory crash.
    pub memory_limit_mb: Option<u64>,
    servers: Arc<Servers>,
    remembered: Arc<Mutex<HashMap<ReplayKey, Replay>>>,
    spent: Arc<Mutex<Spent>>,
}

/// How a replayer's replays went (for `NUMFUZZ_LOG`'s account of where triage's time goes).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spent {
    /// Replays run by a server's child.
    pub served: usize,
    /// Replays run in a process started for them.
    pub own_process: usize,
    /// Replays answered from memory.
    pub remembered: usize,
    /// Wall-clock seconds the replays that ran took.
    pub seconds: f64,
}

impl std::fmt::Debug for Replayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replayer")
            .field("target", &self.target)
            .field("args", &self.args)
            .field("timeout", &self.timeout)
            .field("memory_limit_mb", &self.memory_limit_mb)
            .finish_non_exhaustive()
    }
}

/// What makes two replays the same: the bytes, the variables and the limits they ran under.
#[derive(Clone, PartialEq, Eq, Hash)]
struct ReplayKey {
    bytes: Vec<u8>,
    vars: Vec<(String, String)>,
    timeout: Duration,
    memory_limit_mb: Option<u64>,
}

impl Replayer {
    pub fn new(target: &Path, timeout: Duration) -> Replayer {
        Replayer::with(target, Vec::new(), timeout, None)
    }

    /// A replayer of `target` run with `args`, `timeout` per input and `memory_limit_mb`.
    pub fn with(target: &Path, args: Vec<String>, timeout: Duration, memory_limit_mb: Option<u64>) -> Replayer {
        Replayer {
            target: target.to_path_buf(),
            args,
            timeout,
            memory_limit_mb,
            servers: Arc::new(Servers::new(target, memory_limit_mb)),
            remembered: Arc::default(),
            spent: Arc::default(),
        }
    }

    /// What this replayer and its clones have spent so far.
    pub fn spent(&self) -> Spent {
        *lock(&self.spent)
    }

    /// Replays the input file `input` in its own process, so one input's state never leaks
    /// into another's.
    pub fn run(&self, input: &Path) -> std::io::Result<Replay> {
        self.run_with_env(input, &[])
    }

    /// [`Replayer::run`] with extra environment variables.
    pub fn run_with_env(&self, input: &Path, extra_env: &[(&str, String)]) -> std::io::Result<Replay> {
        let bytes = std::fs::read(input)?;
        self.replay(Some(input), bytes, extra_env, self.timeout)
    }

    /// [`Replayer::run`] with its own time limit (a hang is replayed at the limit its campaign
    /// confirmed it at: a longer one only spends the difference).
    pub fn run_within(&self, input: &Path, timeout: Duration) -> std::io::Result<Replay> {
        let bytes = std::fs::read(input)?;
        self.replay(Some(input), bytes, &[], timeout)
    }

    /// Replays `bytes`.
    pub fn run_bytes(&self, bytes: &[u8]) -> std::io::Result<Replay> {
        self.run_bytes_with_env(bytes, &[])
    }

    /// Replays `bytes` with `extra_env`.
    pub fn run_bytes_with_env(&self, bytes: &[u8], extra_env: &[(&str, String)]) -> std::io::Result<Replay> {
        self.replay(None, bytes.to_vec(), extra_env, self.timeout)
    }

    /// Replays `bytes` (from the file `input`, when they came from one) within `timeout`:
    /// remembered, served, or in a process of its own.
    fn replay(
        &self,
        input: Option<&Path>,
        bytes: Vec<u8>,
        extra_env: &[(&str, String)],
        timeout: Duration,
    ) -> std::io::Result<Replay> {
        let key = ReplayKey {
            bytes,
            vars: extra_env.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
            timeout,
            memory_limit_mb: self.memory_limit_mb,
        };
        let name = input.map_or_else(PathBuf::new, Path::to_path_buf);
        if let Some(known) = lock(&self.remembered).get(&key) {
            lock(&self.spent).remembered += 1;
            return Ok(renamed(known.clone(), &name));
        }
        let started = std::time::Instant::now();
        let served = self.served(&key.bytes, extra_env, timeout);
        let was_served = served.is_some();
        let replay = match served {
            Some(served) => renamed(
                parse_run(&name, key.bytes.clone(), served.status, &served.stderr),
                &name,
            ),
            None => match input {
                Some(path) => self.run_process(path, key.bytes.clone(), extra_env, timeout)?,
                None => {
                    let mut file = tempfile::Builder::new().prefix("numfuzz-input-").tempfile()?;
                    file.write_all(&key.bytes)?;
                    file.flush()?;
                    let mut replay = self.run_process(file.path(), key.bytes.clone(), extra_env, timeout)?;
                    replay.input = name.clone();
                    replay
                }
            },
        };
        let mut spent = lock(&self.spent);
        spent.seconds += started.elapsed().as_secs_f64();
        match was_served {
            true => spent.served += 1,
            false => spent.own_process += 1,
        }
        drop(spent);
        lock(&self.remembered).insert(key, replay.clone());
        Ok(replay)
    }

    /// The replay through a server of the target, when it serves this one.
    fn served(&self, bytes: &[u8], extra_env: &[(&str, String)], timeout: Duration) -> Option<Served> {
        let servable = self.args.is_empty() && self.servers.serve_for(&self.target, self.memory_limit_mb);
        servable
            .then(|| self.servers.replay(bytes, extra_env, timeout))
            .flatten()
    }

    /// Replays the file `input` (holding `bytes`) in a process started for it.
    fn run_process(
        &self,
        input: &Path,
        bytes: Vec<u8>,
        extra_env: &[(&str, String)],
        timeout: Duration,
    ) -> std::io::Result<Replay> {
        let mut cmd = crate::target_process::command(&self.target);
        let on_stdin = !self.args.is_empty() && !self.args.iter().any(|a| a.contains("@@"));
        if self.args.is_empty() {
            cmd.arg(input);
        } else {
            cmd.args(self.args.iter().map(|a| a.replace("@@", &input.to_string_lossy())));
        }
        cmd.env(numfuzz_abi::env::ABORT, "0")
            .env(numfuzz_abi::env::REPORT, "json")
            .envs(
                self.memory_limit_mb
                    .map(|mb| (numfuzz_abi::env::MEM_LIMIT_MB, mb.to_string())),
            )
            .envs(extra_env.iter().map(|(k, v)| (k, v)))
            .stdin(if on_stdin { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn()?;
        if let Some(mut stdin) = child.stdin.take() {
            let data = bytes.clone();
            // The target may exit before reading everything.
            std::thread::spawn(move || {
                let _ = stdin.write_all(&data);
            });
        }
        let mut stderr = child.stderr.take().expect("piped stderr");
        let reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stderr.read_to_end(&mut buf);
            buf
        });
        let status = target_process::wait(&mut child, timeout, Stop::AbortForAStack)?;
        let text = String::from_utf8_lossy(&reader.join().unwrap_or_default()).into_owned();
        Ok(parse_run(input, bytes, status, &text))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// `replay` as a replay of the file `input` reads (the runtime names the input file in its
/// events; a served child or a remembered replay named none, or another).
fn renamed(mut replay: Replay, input: &Path) -> Replay {
    let name = (!input.as_os_str().is_empty()).then(|| input.to_string_lossy().into_owned());
    for e in &mut replay.exceptions {
        e.input.clone_from(&name);
    }
    replay.input = input.to_path_buf();
    replay
}

/// Replays `input` on `target` with no arguments and time limit `timeout`.
pub fn replay(target: &Path, input: &Path, timeout: Duration) -> std::io::Result<Replay> {
    Replayer::new(target, timeout).run(input)
}

/// The last `lines` lines that are neither JSON reports nor the crash stack.
fn tail(text: &str, lines: usize) -> String {
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('{') && !l.starts_with("numfuzz:"))
        .collect();
    kept[kept.len().saturating_sub(lines)..].join("\n")
}

fn parse_run(input: &Path, bytes: Vec<u8>, status: Option<std::process::ExitStatus>, text: &str) -> Replay {
    use std::os::unix::process::ExitStatusExt;
    let mut exceptions = Vec::new();
    let mut results = Vec::new();
    let mut taint = None;
    let mut summary = None;
    let mut crash = None;
    let mut errors = Vec::new();
    let mut statuses = Vec::new();
    let mut precision = Vec::new();
    for line in text.lines().filter(|l| l.starts_with('{')) {
        match serde_json::from_str::<ReportEvent>(line) {
            Ok(ReportEvent::Exception(r)) => exceptions.push(r),
            Ok(ReportEvent::Result(r)) => results.push(r),
            Ok(ReportEvent::Taint(t)) => taint = Some(t),
            Ok(ReportEvent::InputDone(s)) => summary = Some(s),
            Ok(ReportEvent::Crash(c)) => crash = Some(c),
            Ok(ReportEvent::ErrorReported(e)) => errors.push(e),
            Ok(ReportEvent::StatusReturned(s)) => statuses.push(s),
            Ok(ReportEvent::PrecisionLost(p)) => precision.push(p),
            // The program's own output may start with '{' too.
            Err(_) => {}
        }
    }
    let cause = crash.as_ref().and_then(|c| match (c.stack_overflow, c.out_of_memory) {
        (true, _) => Some("stack overflow".to_string()),
        // The limit, not the growth at the moment it was seen, so that one cause groups.
        (_, Some(oom)) => Some(format!("out of memory: more than {} MiB", oom.limit_mb)),
        _ => None,
    });
    let out_of_memory = crash.as_ref().and_then(|c| c.out_of_memory);
    let stack = crash.map(|c| c.frames).unwrap_or_default();
    let ending = match (status, summary) {
        (None, _) => ReplayEnding::TimedOut { stack },
        (Some(s), _) if s.signal().is_some() => ReplayEnding::Crashed {
            signal: s.signal().unwrap_or(0),
            cause,
            out_of_memory,
            stack,
            output_tail: tail(text, 8),
        },
        (Some(s), Some(sum)) if s.success() => ReplayEnding::Completed { handled: sum.handled },
        // A program with its own main() prints no summary; it completed all the same.
        (Some(s), None) if s.success() => ReplayEnding::Completed { handled: false },
        (Some(s), _) => ReplayEnding::Failed {
            status: s.code(),
            output_tail: tail(text, 8),
        },
    };
    Replay {
        input: input.to_path_buf(),
        bytes,
        exceptions,
        results,
        taint,
        errors,
        statuses,
        precision,
        ending,
    }
}

/// Name of a signal number (`SIGSEGV`).
pub fn signal_name(signal: i32) -> String {
    nix::sys::signal::Signal::try_from(signal)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {signal}"))
}

/// One input field as numfuzz prints it: type, shortest round-trip decimal, hex.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DecodedField {
    #[serde(rename = "type")]
    pub ty: String,
    pub value: String,
    pub hex: String,
}

impl DecodedField {
    pub fn of(field: FieldType, value: &Value) -> DecodedField {
        DecodedField {
            ty: field.name().to_string(),
            value: value.to_string(),
            hex: value.to_hex(),
        }
    }
}

/// Every field of `bytes` decoded by `signature`.
pub fn decode_fields(signature: &Signature, bytes: &[u8]) -> Vec<DecodedField> {
    signature
        .fields()
        .iter()
        .zip(signature.decode(bytes))
        .map(|(f, v)| DecodedField::of(*f, &v))
        .collect()
}

/// `709.7827128933851, 3` (decimals only).
pub fn fields_decimal(fields: &[DecodedField]) -> String {
    fields.iter().map(|f| f.value.as_str()).collect::<Vec<_>>().join(", ")
}

/// `709.7827128933851 (0x1.62e42fefa39f9p+9), 3 (0x00000003)`.
pub fn fields_with_hex(fields: &[DecodedField]) -> String {
    fields
        .iter()
        .map(|f| format!("{} ({})", f.value, f.hex))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Function of a site, `?` when the debug info had none.
pub fn function_of(e: &ExceptionReport) -> &str {
    if e.site.function.is_empty() {
        "?"
    } else {
        &e.site.function
    }
}

/// Plain-text description of one replay, as `numfuzz replay` prints it.
pub fn describe(replay: &Replay, signature: Option<&Signature>) -> String {
    let mut s = format!("{} ({} bytes)\n", replay.input.display(), replay.bytes.len());
    if let Some(sig) = signature {
        for (i, field) in decode_fields(sig, &replay.bytes).iter().enumerate() {
            s.push_str(&format!("  [{i}] {:<3} = {}  ({})\n", field.ty, field.value, field.hex));
        }
    }
    for e in &replay.exceptions {
        s.push_str(&format!(
            "  {:<9} {} in {}: {}\n",
            e.kind.name(),
            e.site.location(),
            function_of(e),
            e.expression()
        ));
    }
    match &replay.ending {
        ReplayEnding::Completed { handled } => {
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
        ReplayEnding::Crashed {
            stack,
            output_tail,
            out_of_memory,
            ..
        } => {
            match out_of_memory {
                Some(oom) => s.push_str(&format!("  => stopped by the memory limit: {}\n", oom.describe())),
                None => s.push_str(&format!(
                    "  => crashed with {}\n",
                    replay.crash_name().unwrap_or_default()
                )),
            }
            for (i, f) in stack.iter().enumerate() {
                s.push_str(&format!("     #{i} {}\n", f.display()));
            }
            for l in output_tail.lines() {
                s.push_str(&format!("     | {l}\n"));
            }
        }
        ReplayEnding::TimedOut { stack } => {
            s.push_str("  => timed out\n");
            for (i, f) in stack.iter().enumerate() {
                s.push_str(&format!("     #{i} {}\n", f.display()));
            }
        }
        ReplayEnding::Failed { status, output_tail } => {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The runtime's `crash` event for `frames` (function, file, line, column).
    fn crash_event(signal: &str, stack_overflow: bool, frames: &[(&str, &str, u32, u32)]) -> String {
        let report = numfuzz_abi::report::CrashReport {
            signal: signal.into(),
            stack_overflow,
            out_of_memory: None,
            frames: frames
                .iter()
                .map(|&(function, file, line, column)| Frame {
                    function: function.into(),
                    file: Some(file.into()),
                    line: Some(line),
                    column: Some(column),
                })
                .collect(),
        };
        serde_json::to_string(&ReportEvent::Crash(report)).unwrap()
    }

    #[test]
    fn a_crash_report_is_read_with_its_stack_and_exceptions() {
        let exception =
            "{\"event\":\"exception\",\"kind\":\"Overflow\",\"id\":1,\"op\":\"exp\",\"type\":\"f64\",\"file\":\"h.c\",\
                    \"directory\":\"/s\",\"line\":5,\"column\":3,\"function\":\"g\",\"operands\":[\"710.0\"],\
                    \"operands_hex\":[\"0x1.63p+9\"],\"result\":\"inf\",\"result_hex\":\"inf\"}";
        let crash = crash_event(
            "SIGABRT",
            false,
            &[
                ("raise", "./signal/raise.c", 26, 13),
                ("check", "/s/h.c", 9, 3),
                ("LLVMFuzzerTestOneInput", "/s/h.c", 20, 5),
            ],
        );
        // The program's own output around the events is ignored.
        let text = format!("{exception}\n{{not json\n{crash}\nbye\n");
        use std::os::unix::process::ExitStatusExt;
        let status = std::process::ExitStatus::from_raw(libc::SIGABRT);
        let r = parse_run(Path::new("x"), vec![], Some(status), &text);
        assert_eq!(r.exceptions.len(), 1);
        let ReplayEnding::Crashed { signal, stack, .. } = &r.ending else {
            panic!("{:?}", r.ending)
        };
        assert_eq!((*signal, stack.len()), (libc::SIGABRT, 3));
        assert_eq!(r.crash_frame().unwrap().function, "check");
        assert_eq!(r.crash_frame().unwrap().display(), "check (/s/h.c:9:3)");
        assert_eq!(r.crash_name().as_deref(), Some("SIGABRT"));
    }

    #[test]
    fn a_stack_overflow_is_named_and_located_in_the_program_not_the_checker() {
        // Infinite recursion runs out of stack inside whatever it calls last, here a checker.
        let text = crash_event(
            "SIGSEGV",
            true,
            &[
                ("numfuzz_reexec_f64", "/work/numfuzz/runtime/src/shim.c", 116, 90),
                ("classify", "/work/numfuzz/runtime/src/check/libm.rs", 221, 12),
                ("__numfuzz_check_f64", "/work/numfuzz/runtime/src/lib.rs", 98, 9),
                ("dive", "/s/h.c", 12, 7),
                ("dive", "/s/h.c", 13, 3),
            ],
        );
        use std::os::unix::process::ExitStatusExt;
        let status = std::process::ExitStatus::from_raw(libc::SIGSEGV);
        let r = parse_run(Path::new("x"), vec![], Some(status), &text);
        assert_eq!(r.crash_name().as_deref(), Some("SIGSEGV (stack overflow)"));
        let f = r.crash_frame().unwrap();
        assert_eq!((f.function.as_str(), f.line), ("dive", Some(12)));
        assert!(describe(&r, None).contains("crashed with SIGSEGV (stack overflow)"));
    }
}
