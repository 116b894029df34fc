//! The campaigns and triages of a run-all, `jobs` at a time: each a `numfuzz` child process
//! (this same binary), so that a function's campaign is exactly what `numfuzz run` does and a
//! crash of one leaves the others running.

use super::layout::Layout;
use super::merge::entry_keys;
use crate::report_model::triage::TriageDoc;
use std::collections::{BTreeSet, VecDeque};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What every job runs with.
#[derive(Clone, Debug)]
pub struct JobSettings {
    pub numfuzz: PathBuf,
    pub seconds: u64,
    pub oracle: Option<String>,
    /// `--minimize=all|bugs` for every triage.
    pub minimize: Option<&'static str>,
    pub run_args: Vec<String>,
}

/// How one function ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Its triage report is written.
    Triaged,
    /// It has no report; why, in one line.
    Failed(String),
}

/// What the terminal shows while jobs run.
#[derive(Debug, Default)]
pub struct Progress {
    pub total: usize,
    pub done: usize,
    pub failed: usize,
    pub running: Vec<(String, Instant)>,
    /// The merged bug list's entries over the reports so far (see `merge::entry_keys`).
    pub bug_keys: BTreeSet<String>,
    /// Seconds a finished job took, for the estimate.
    pub job_seconds: Vec<f64>,
}

impl Progress {
    /// `run-all: 3/20 functions done (1 failed), 2 running, 4 bugs so far, about 5m10s left`.
    pub fn line(&self, jobs: usize, seconds: u64) -> String {
        let per_job = if self.job_seconds.is_empty() {
            seconds as f64 + 5.0
        } else {
            self.job_seconds.iter().sum::<f64>() / self.job_seconds.len() as f64
        };
        let waiting = self.total - self.done - self.running.len();
        let running_left: f64 = self
            .running
            .iter()
            .map(|(_, t)| (per_job - t.elapsed().as_secs_f64()).max(0.0))
            .fold(0.0, f64::max);
        let left = running_left + (waiting as f64 / jobs.max(1) as f64).ceil() * per_job;
        let failed = if self.failed > 0 {
            format!(" ({} failed)", self.failed)
        } else {
            String::new()
        };
        format!(
            "run-all: {}/{} functions done{failed}, {} running, {} bugs so far, about {} left",
            self.done,
            self.total,
            self.running.len(),
            self.bug_keys.len(),
            crate::triage::format::elapsed(Some((left * 1000.0) as u64))
        )
    }
}

/// A child that ends when this thread does (a killed run-all leaves no campaign behind);
/// its output goes to `log`, after what the log holds when `append`.
fn spawn_logged(mut cmd: Command, log: &Path, append: bool) -> std::io::Result<std::process::ExitStatus> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(log)?;
    cmd.stdin(Stdio::null()).stdout(file.try_clone()?).stderr(file);
    // SAFETY: prctl with integer arguments only, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong);
            Ok(())
        });
    }
    cmd.status()
}

/// The campaign of `function` on `core`, unless a finished one is kept from an earlier run.
fn campaign(settings: &JobSettings, layout: &Layout, function: &str, binary: &Path, core: usize) -> Result<(), String> {
    let dir = layout.campaign(function);
    if layout.campaign_done(function).exists() {
        return Ok(());
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .map_err(|e| format!("cannot remove the unfinished campaign {}: {e}", dir.display()))?;
    }
    run_campaign(settings, layout, function, binary, settings.seconds, core, false)?;
    mark_done(layout, function, settings.seconds)
}

/// `numfuzz run -V seconds` on `function`'s campaign directory (resuming the campaign there),
/// on `core`, its output into the function's run log.
fn run_campaign(
    settings: &JobSettings,
    layout: &Layout,
    function: &str,
    binary: &Path,
    seconds: u64,
    core: usize,
    append_log: bool,
) -> Result<(), String> {
    let mut cmd = Command::new(&settings.numfuzz);
    cmd.arg("run")
        .arg("-o")
        .arg(layout.campaign(function))
        .args(["-V", &seconds.to_string(), "--cores", &core.to_string(), "--no-tui"])
        .args(&settings.run_args)
        .arg("--")
        .arg(binary);
    let log = layout.log(function, "run");
    let status = spawn_logged(cmd, &log, append_log).map_err(|e| format!("cannot start numfuzz run: {e}"))?;
    if !status.success() {
        return Err(format!("numfuzz run failed ({status}); see {}", log.display()));
    }
    Ok(())
}

/// Marks `function`'s campaign finished after `seconds` of fuzzing in all (the marker holds
/// them, for the report's per-function table).
pub fn mark_done(layout: &Layout, function: &str, seconds: u64) -> Result<(), String> {
    std::fs::write(layout.campaign_done(function), format!("{seconds}\n")).map_err(|e| e.to_string())
}

/// One slice of a budget (`budget`): `seconds` more of `function`'s campaign, which resumes
/// where the last slice left it; the run log keeps every slice's output.
pub fn slice(
    settings: &JobSettings,
    layout: &Layout,
    function: &str,
    binary: &Path,
    seconds: u64,
    core: usize,
) -> Result<(), String> {
    if !binary.is_file() {
        return Err(missing(binary));
    }
    run_campaign(settings, layout, function, binary, seconds, core, true)
}

fn missing(binary: &Path) -> String {
    format!(
        "{} is missing: build the harnesses (`numfuzz harness ... --build`)",
        binary.display()
    )
}

/// The triage of `function`'s campaign into its report (written whole or not at all: to a
/// partial file renamed when it ends, and the log then names the report).
fn triage(settings: &JobSettings, layout: &Layout, function: &str, binary: &Path) -> Result<TriageDoc, String> {
    let report = layout.report(function);
    let partial = report.with_extension("json.partial");
    if let Some(dir) = report.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let mut cmd = Command::new(&settings.numfuzz);
    cmd.arg("triage")
        .arg(layout.campaign(function))
        .arg("--target")
        .arg(binary)
        .args(["--format", "json", "--jobs", "1", "--output"])
        .arg(&partial);
    if let Some(oracle) = &settings.oracle {
        cmd.args(["--oracle", oracle]);
    }
    if let Some(which) = settings.minimize {
        cmd.arg(format!("--minimize={which}"));
    }
    let log = layout.log(function, "triage");
    let status = spawn_logged(cmd, &log, false).map_err(|e| format!("cannot start numfuzz triage: {e}"))?;
    if !status.success() {
        return Err(format!("numfuzz triage failed ({status}); see {}", log.display()));
    }
    std::fs::rename(&partial, &report).map_err(|e| e.to_string())?;
    rename_in_log(&log, &partial, &report);
    super::read_report(&report)
}

/// Says `to` where the log says `from` (triage wrote through the partial file; the user
/// looks for the report).
fn rename_in_log(log: &Path, from: &Path, to: &Path) {
    if let Ok(text) = std::fs::read_to_string(log) {
        let renamed = text.replace(&from.display().to_string(), &to.display().to_string());
        let _ = std::fs::write(log, renamed);
    }
}

/// One function: its campaign, then its triage.
fn one(
    settings: &JobSettings,
    layout: &Layout,
    function: &str,
    binary: &Path,
    core: usize,
) -> Result<TriageDoc, String> {
    if !binary.is_file() {
        return Err(missing(binary));
    }
    campaign(settings, layout, function, binary, core)?;
    triage(settings, layout, function, binary)
}

/// Runs every `(function, binary)` of `queue`, `jobs` at a time (see `in_slots`); `progress`
/// follows them. Returns each function's outcome.
pub fn run_queue(
    settings: &JobSettings,
    layout: &Layout,
    queue: Vec<(String, PathBuf)>,
    jobs: usize,
    progress: &Arc<Mutex<Progress>>,
) -> Vec<(String, Outcome)> {
    in_slots(queue, jobs, |(function, binary), core| {
        let started = Instant::now();
        with(progress, |p| p.running.push((function.clone(), started)));
        let result = one(settings, layout, &function, &binary, core);
        with(progress, |p| {
            p.running.retain(|(f, _)| *f != function);
            p.done += 1;
            p.job_seconds.push(started.elapsed().as_secs_f64());
            match &result {
                Ok(doc) => p.bug_keys.extend(entry_keys(&function, doc)),
                Err(_) => p.failed += 1,
            }
        });
        let outcome = match result {
            Ok(_) => Outcome::Triaged,
            Err(why) => Outcome::Failed(why),
        };
        (function, outcome)
    })
}

/// `work` on every item, `slots` at a time in the queue's order, slot k on core k mod the
/// machine's cores; the results in the order the items ended.
pub fn in_slots<T: Send, R: Send>(items: Vec<T>, slots: usize, work: impl Fn(T, usize) -> R + Sync) -> Vec<R> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let queue = Mutex::new(items.into_iter().collect::<VecDeque<_>>());
    let results = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for slot in 0..slots {
            let (queue, results, work) = (&queue, &results, &work);
            scope.spawn(move || loop {
                // Its own statement: a guard in a `while let` would hold the queue, and so
                // every other slot, until the work ended.
                let next = lock(queue).pop_front();
                let Some(item) = next else {
                    break;
                };
                let result = work(item, slot % cores);
                lock(results).push(result);
            });
        }
    });
    results.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// The mutex's value, also after another slot panicked holding it.
pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn with<T>(progress: &Mutex<Progress>, f: impl FnOnce(&mut Progress) -> T) -> T {
    f(&mut lock(progress))
}

/// Prints the progress line every `every` until `finished` is set: over itself on a terminal,
/// else only when the count of finished functions changes.
pub fn show_progress(progress: &Mutex<Progress>, finished: &Mutex<bool>, jobs: usize, seconds: u64, every: Duration) {
    use std::io::IsTerminal;
    let terminal = std::io::stderr().is_terminal();
    let mut last_done = usize::MAX;
    loop {
        let done = *finished.lock().unwrap_or_else(|e| e.into_inner());
        let (line, count) = with(progress, |p| (p.line(jobs, seconds), p.done));
        if terminal {
            eprint!("\r\x1b[K{line}");
        } else if count != last_done {
            eprintln!("{line}");
        }
        last_done = count;
        if done {
            if terminal {
                eprintln!();
            }
            return;
        }
        std::thread::sleep(every);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn slots_work_at_the_same_time() {
        // Each item waits for the other's message: with the slots taking turns, the first
        // would wait for a message that only comes after it ends.
        let (to_a, from_b) = channel();
        let (to_b, from_a) = channel();
        let ends = Mutex::new(vec![(to_b, from_b), (to_a, from_a)]);
        let met = in_slots(vec![0, 1], 2, |_, _| {
            let (tell, hear) = lock(&ends).pop().expect("one end per item");
            tell.send(()).expect("the other item listens");
            hear.recv_timeout(Duration::from_secs(30)).is_ok()
        });
        assert_eq!(met, [true, true]);
    }

    #[test]
    fn every_item_is_worked_once_in_any_number_of_slots() {
        for slots in [1, 3, 8] {
            let mut done = in_slots((0..20).collect(), slots, |i, core| (i, core));
            done.sort();
            assert_eq!(
                done.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
                (0..20).collect::<Vec<_>>()
            );
        }
    }
}
