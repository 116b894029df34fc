//! `numfuzz run-all`: one campaign per harness of a harness directory, each triaged as it
//! ends, then one report merged over every function.

mod crashes;
mod entries;
#[cfg(test)]
mod fixtures;
pub mod html;
pub mod jobs;
pub mod layout;
pub mod manifest;
pub mod merge;
mod order;
pub mod render;
mod sarif;
mod text;

use crate::report_model::triage::{self, TriageDoc};
use anyhow::{bail, Context};
use jobs::{JobSettings, Outcome, Progress};
use layout::Layout;
use manifest::HarnessDir;
use merge::{FunctionReport, Merged};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a run-all was asked, kept in `OUT/run-all.json` for `--continue`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct State {
    pub harness_dir: PathBuf,
    pub seconds: u64,
    pub functions: Vec<String>,
    pub run_args: Vec<String>,
    pub oracle: Option<String>,
}

pub struct Options {
    pub harness_dir: PathBuf,
    pub out: PathBuf,
    pub seconds: u64,
    pub jobs: usize,
    pub oracle: Option<String>,
    pub functions: Option<String>,
    pub resume: bool,
    /// Triage every finished campaign again (implies `resume`).
    pub retriage: bool,
    /// `--minimize=all|bugs` for every triage.
    pub minimize: Option<&'static str>,
    pub run_args: Vec<String>,
    /// The numfuzz binary the campaigns and triages run (this one).
    pub numfuzz: PathBuf,
}

/// What a run-all leaves.
pub struct Finished {
    pub merged: Merged,
    /// Functions without a report, and why.
    pub failed: Vec<(String, String)>,
    pub layout: Layout,
}

/// One function's triage report; another schema's is a one-line error saying what to run.
pub fn read_report(path: &Path) -> Result<TriageDoc, String> {
    crate::report_model::read(path, &triage::KIND)
}

/// Refuses an output directory that holds something else, or, with `--continue`, one that
/// holds no run-all of the same harness directory.
fn prepare(layout: &Layout, state: &State, resume: bool) -> anyhow::Result<()> {
    let out = &layout.out;
    let occupied = out.read_dir().is_ok_and(|mut d| d.next().is_some());
    if resume {
        let text = std::fs::read_to_string(layout.state()).with_context(|| {
            format!(
                "--continue: {} holds no run-all (no {}); drop --continue to start one",
                out.display(),
                layout::STATE
            )
        })?;
        let earlier: State =
            serde_json::from_str(&text).with_context(|| format!("{} is damaged", layout.state().display()))?;
        if earlier.harness_dir != state.harness_dir {
            bail!(
                "--continue: {} is a run-all of {}, not of {}",
                out.display(),
                earlier.harness_dir.display(),
                state.harness_dir.display()
            );
        }
    } else if occupied {
        let what = if layout.state().exists() {
            "another run-all"
        } else {
            "other files"
        };
        bail!(
            "{} holds {what}: pass --continue to resume a run-all there, or choose another -o",
            out.display()
        );
    }
    layout
        .create()
        .with_context(|| format!("cannot create {}", out.display()))?;
    std::fs::write(layout.state(), serde_json::to_string_pretty(state)?)
        .with_context(|| format!("cannot write {}", layout.state().display()))
}

pub fn run(opts: Options) -> anyhow::Result<Finished> {
    let harness_dir = opts.harness_dir.canonicalize().with_context(|| {
        format!(
            "{} does not exist: give the directory `numfuzz harness -o DIR` wrote",
            opts.harness_dir.display()
        )
    })?;
    let harnesses = HarnessDir::open(&harness_dir)?;
    let selected = harnesses.select(opts.functions.as_deref())?;
    let layout = Layout::new(&opts.out);
    let state = State {
        harness_dir: harness_dir.clone(),
        seconds: opts.seconds,
        functions: selected.iter().map(|h| h.function.clone()).collect(),
        run_args: opts.run_args.clone(),
        oracle: opts.oracle.clone(),
    };
    prepare(&layout, &state, opts.resume || opts.retriage)?;

    let kept: Vec<String> = state
        .functions
        .iter()
        .filter(|f| !opts.retriage && layout.report(f).is_file())
        .cloned()
        .collect();
    let queue: Vec<(String, PathBuf)> = state
        .functions
        .iter()
        .filter(|f| !kept.contains(f))
        .map(|f| (f.clone(), harnesses.binary(f)))
        .collect();
    let progress = progress_after(&layout, &state, &kept)?;
    if !kept.is_empty() {
        eprintln!("run-all: {} functions kept from the earlier run", kept.len());
    }
    let settings = JobSettings {
        numfuzz: opts.numfuzz.clone(),
        seconds: opts.seconds,
        oracle: opts.oracle.clone(),
        minimize: opts.minimize,
        run_args: opts.run_args.clone(),
    };
    let failed = run_jobs(&settings, &layout, queue, opts.jobs, &progress);
    let merged = merge_reports(&layout, &harnesses, &state.functions)?;
    Ok(Finished { merged, failed, layout })
}

/// The merged report of `functions`. A report of another schema stops the merge: merging
/// without it would drop its bugs without a word.
fn merge_reports(layout: &Layout, harnesses: &HarnessDir, functions: &[String]) -> anyhow::Result<Merged> {
    let mut docs = Vec::new();
    for f in functions {
        let path = layout.report(f);
        let doc = match read_report(&path) {
            Ok(doc) => Some(doc),
            Err(_) if !path.exists() => None,
            Err(why) => bail!("{why}"),
        };
        docs.push((f, doc, harnesses.binary(f), layout.campaign(f)));
    }
    Ok(merge::merge(docs.iter().map(|(function, doc, binary, campaign)| {
        FunctionReport {
            function,
            doc: doc.as_ref(),
            binary,
            campaign,
        }
    })))
}

/// The progress shown, counting the functions whose reports are `kept` from an earlier run as
/// done (with their bugs); a kept report this numfuzz cannot read stops the run before any
/// campaign starts.
fn progress_after(layout: &Layout, state: &State, kept: &[String]) -> anyhow::Result<Arc<Mutex<Progress>>> {
    let progress = Arc::new(Mutex::new(Progress {
        total: state.functions.len(),
        done: kept.len(),
        ..Progress::default()
    }));
    for f in kept {
        let doc = read_report(&layout.report(f)).map_err(anyhow::Error::msg)?;
        jobs::with(&progress, |p| p.bug_keys.extend(merge::entry_keys(f, &doc)));
    }
    Ok(progress)
}

/// Runs the queue's campaigns and triages, `at_once` at a time, showing progress every second;
/// the functions that failed and why.
fn run_jobs(
    settings: &JobSettings,
    layout: &Layout,
    queue: Vec<(String, PathBuf)>,
    at_once: usize,
    progress: &Arc<Mutex<Progress>>,
) -> Vec<(String, String)> {
    let finished = Mutex::new(false);
    let outcomes = std::thread::scope(|scope| {
        let shown =
            scope.spawn(|| jobs::show_progress(progress, &finished, at_once, settings.seconds, Duration::from_secs(1)));
        let outcomes = jobs::run_queue(settings, layout, queue, at_once, progress);
        *finished.lock().unwrap_or_else(|e| e.into_inner()) = true;
        let _ = shown.join();
        outcomes
    });
    outcomes
        .into_iter()
        .filter_map(|(f, o)| match o {
            Outcome::Failed(why) => Some((f, why)),
            Outcome::Triaged => None,
        })
        .collect()
}
