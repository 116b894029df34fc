//! `numfuzz run-all`: one campaign per harness of a harness directory, each triaged as it
//! ends, then one report merged over every function.

pub mod budget;
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
pub mod shard;
pub mod shards;
mod text;

use crate::report_model::merged::ShardSource;
use crate::report_model::triage::{self, TriageDoc};
use anyhow::{bail, Context};
use jobs::{JobSettings, Outcome, Progress};
use layout::Layout;
use manifest::HarnessDir;
use merge::{FunctionReport, Merged};
use serde::{Deserialize, Serialize};
use shard::Shard;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a run-all was asked, kept in `OUT/run-all.json` for `--continue`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct State {
    pub harness_dir: PathBuf,
    /// `-V` (0 under a budget).
    pub seconds: u64,
    /// `--budget`: seconds for every function of this directory together.
    #[serde(default)]
    pub budget: Option<u64>,
    pub functions: Vec<String>,
    pub run_args: Vec<String>,
    pub oracle: Option<String>,
    /// `--shard K/N`; `functions` is then this shard's share of `selection`.
    #[serde(default)]
    pub shard: Option<Shard>,
    /// Every function the run was asked for (all shards together), in the manifest's order;
    /// empty in a run-all.json of an older numfuzz, whose `functions` are the whole run.
    #[serde(default)]
    pub selection: Vec<String>,
    /// `shard::digest` of the manifest, so that a merge can tell shards of different harness
    /// directories apart on a machine that has none of them.
    #[serde(default)]
    pub manifest: Option<String>,
}

impl State {
    /// `-V 10` or `--budget 470s`, as the run was asked.
    pub fn fuzzing_time(&self) -> String {
        fuzzing_time(self.seconds, self.budget)
    }

    /// The whole run's functions, of which `functions` is this directory's share.
    pub fn selection(&self) -> &[String] {
        if self.selection.is_empty() {
            &self.functions
        } else {
            &self.selection
        }
    }
}

pub struct Options {
    pub harness_dir: PathBuf,
    pub out: PathBuf,
    /// `-V` (`None` under a budget, or when neither is given: on `--continue` or `--retriage`,
    /// the earlier run's time is taken).
    pub seconds: Option<u64>,
    /// `--budget`: seconds for every function together, instead of `seconds` each.
    pub budget: Option<u64>,
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
    /// `--shard K/N`: only this share of the functions. `None` with `resume`: the shard
    /// OUT was made with, if any.
    pub shard: Option<Shard>,
}

/// What a run-all (or a merge of shards) leaves.
pub struct Finished {
    pub merged: Merged,
    /// Functions without a report, and why, in the run's order.
    pub failed: Vec<(String, String)>,
    /// Where the report goes.
    pub layout: Layout,
    pub harness_dir: PathBuf,
    pub seconds: u64,
    pub budget: Option<u64>,
    /// The run-all directories the report covers, for its head (none for one unsharded run).
    pub shards: Vec<ShardSource>,
}

impl Finished {
    /// What the report's head says of the run.
    pub fn info(&self) -> render::RunInfo<'_> {
        render::RunInfo {
            harness_dir: &self.harness_dir,
            seconds: self.seconds,
            budget: self.budget,
            failed: &self.failed,
            shards: &self.shards,
        }
    }
}

/// One function's triage report; another schema's is a one-line error saying what to run.
pub fn read_report(path: &Path) -> Result<TriageDoc, String> {
    crate::report_model::read(path, &triage::KIND)
}

/// The `run-all.json` of a run-all directory.
pub fn read_state(out: &Path) -> anyhow::Result<State> {
    let path = Layout::new(out).state();
    if !path.is_file() {
        bail!("{} is not a run-all directory (no {})", out.display(), layout::STATE);
    }
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is damaged", path.display()))
}

impl Options {
    /// The flag that resumes the run-all in OUT (`--retriage` implies `--continue`), named in
    /// what is refused.
    fn resumed_by(&self) -> Option<&'static str> {
        if self.retriage {
            Some("--retriage")
        } else {
            self.resume.then_some("--continue")
        }
    }
}

/// With `--continue` or `--retriage` (`resumed_by`), the run-all already in OUT, which must be
/// of the same harness directory; without, nothing: an OUT that holds anything is refused.
fn earlier_run(layout: &Layout, harness_dir: &Path, resumed_by: Option<&str>) -> anyhow::Result<Option<State>> {
    let out = &layout.out;
    let Some(flag) = resumed_by else {
        let occupied = out.read_dir().is_ok_and(|mut d| d.next().is_some());
        if occupied {
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
        return Ok(None);
    };
    if !layout.state().exists() {
        bail!(
            "{flag}: {} holds no run-all (no {}); drop {flag} to start one",
            out.display(),
            layout::STATE
        );
    }
    let earlier = read_state(out)?;
    if earlier.harness_dir != harness_dir {
        bail!(
            "{flag}: {} is a run-all of {}, not of {}",
            out.display(),
            earlier.harness_dir.display(),
            harness_dir.display()
        );
    }
    Ok(Some(earlier))
}

/// The shard this run takes: the one asked, or on `--continue` the one OUT was made with
/// (another is refused: OUT would then hold functions of two shares).
fn shard_of(opts: &Options, earlier: Option<&State>) -> anyhow::Result<Option<Shard>> {
    let (asked, out) = (opts.shard, opts.out.display());
    let (Some(earlier), Some(flag)) = (earlier, opts.resumed_by()) else {
        return Ok(asked);
    };
    match (asked, earlier.shard) {
        (Some(a), Some(e)) if a != e => bail!("{flag}: {out} holds shard {e}, not {a}; drop --shard to resume it"),
        (Some(a), None) => {
            bail!("{flag}: {out} holds a run-all of every function, not shard {a}; drop --shard to resume it")
        }
        (_, recorded) => Ok(recorded),
    }
}

/// Writes what was asked into OUT, creating its directories.
fn prepare(layout: &Layout, state: &State) -> anyhow::Result<()> {
    layout
        .create()
        .with_context(|| format!("cannot create {}", layout.out.display()))?;
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
    let layout = Layout::new(&opts.out);
    let earlier = earlier_run(&layout, &harness_dir, opts.resumed_by())?;
    let shard = shard_of(&opts, earlier.as_ref())?;
    let (seconds, budget) = fuzzing_time_of(&opts, earlier.as_ref())?;
    // Resumed without --functions or --oracle: the earlier run's, not every harness and no
    // oracle (a run of a few functions would grow into the whole directory, and a retriage
    // would judge without the oracle the rest was judged by).
    let asked = match (&opts.functions, &earlier) {
        (None, Some(e)) => Some(e.selection().join(",")),
        (asked, _) => asked.clone(),
    };
    let oracle = opts
        .oracle
        .clone()
        .or_else(|| earlier.as_ref().and_then(|e| e.oracle.clone()));
    let selection: Vec<String> = harnesses
        .select(asked.as_deref())?
        .into_iter()
        .map(|h| h.function)
        .collect();
    let manifest = std::fs::read(harness_dir.join("manifest.json"))?;
    let state = State {
        harness_dir: harness_dir.clone(),
        seconds,
        budget,
        functions: shard.map_or_else(|| selection.clone(), |s| s.share(&selection)),
        run_args: opts.run_args.clone(),
        oracle: oracle.clone(),
        shard,
        selection,
        manifest: Some(shard::digest(&manifest)),
    };
    if let Some(budget) = budget {
        budget::check(budget, state.functions.len())?;
    }
    prepare(&layout, &state)?;

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
        seconds,
        oracle: oracle.clone(),
        minimize: opts.minimize,
        run_args: opts.run_args.clone(),
    };
    let mut failed = Vec::new();
    if let Some(budget) = budget {
        let every: Vec<(String, PathBuf)> = state
            .functions
            .iter()
            .map(|f| (f.clone(), harnesses.binary(f)))
            .collect();
        failed = spend_budget(&settings, &layout, budget, &every, opts.jobs)?;
    }
    let queue = queue
        .into_iter()
        .filter(|(f, _)| !failed.iter().any(|(g, _)| g == f))
        .collect();
    failed.extend(run_jobs(&settings, &layout, queue, opts.jobs, &progress));
    // In the run's order, not the order the jobs ended in: the report is then the same
    // whichever machine made it, and the same as a merge of shards.
    failed.sort_by_key(|(f, _)| state.functions.iter().position(|g| g == f));
    let sources: Vec<Source> = state
        .functions
        .iter()
        .map(|f| Source {
            function: f,
            layout: &layout,
            harness_dir: &harness_dir,
            seconds: state.seconds,
        })
        .collect();
    let merged = merge_reports(&sources)?;
    let shards = shard
        .map(|s| ShardSource {
            shard: Some(s.to_string()),
            out: opts.out.display().to_string(),
        })
        .into_iter()
        .collect();
    Ok(Finished {
        merged,
        failed,
        layout,
        harness_dir,
        seconds,
        budget,
        shards,
    })
}

/// The fuzzing time asked, or on `--continue`/`--retriage` without one, OUT's run's. Another
/// than OUT's is refused: its campaigns would then be of two lengths, or its budget's rounds
/// planned for another total.
fn fuzzing_time_of(opts: &Options, earlier: Option<&State>) -> anyhow::Result<(u64, Option<u64>)> {
    let asked = match (opts.seconds, opts.budget) {
        (None, None) => None,
        (seconds, budget) => Some((seconds.unwrap_or(0), budget)),
    };
    match (asked, earlier) {
        (Some(asked), Some(e)) if asked != (e.seconds, e.budget) => bail!(
            "{}: {} was run with {}, not {}; give the same or neither",
            opts.resumed_by().unwrap_or("--continue"),
            opts.out.display(),
            e.fuzzing_time(),
            fuzzing_time(asked.0, asked.1)
        ),
        (Some(asked), _) => Ok(asked),
        (None, Some(e)) => Ok((e.seconds, e.budget)),
        (None, None) => bail!("run-all needs -V SECONDS or --budget DURATION"),
    }
}

/// How a run's fuzzing time was asked: `-V 10` or `--budget 470s`.
fn fuzzing_time(seconds: u64, budget: Option<u64>) -> String {
    budget.map_or(format!("-V {seconds}"), |b| format!("--budget {b}s"))
}

/// Spends the budget over the campaigns of every function of the run (see `budget`; on
/// `--continue`, what OUT's ledger holds is not run again), then marks each campaign finished
/// with the seconds it got. Returns the functions whose campaign failed, with why.
fn spend_budget(
    settings: &JobSettings,
    layout: &Layout,
    budget: u64,
    every: &[(String, PathBuf)],
    at_once: usize,
) -> anyhow::Result<Vec<(String, String)>> {
    let ledger = budget::spend(settings, layout, budget, every, at_once)?;
    let mut failed = Vec::new();
    for (function, _) in every {
        if let Some(why) = ledger.failure_of(function) {
            failed.push((function.clone(), why.to_string()));
        } else if !layout.campaign_done(function).exists() {
            jobs::mark_done(layout, function, ledger.seconds_of(function)).map_err(anyhow::Error::msg)?;
        }
    }
    Ok(failed)
}

/// Where one function's campaign and report are, and its harness directory.
pub struct Source<'a> {
    pub function: &'a str,
    pub layout: &'a Layout,
    pub harness_dir: &'a Path,
    /// The run's `-V`: how long a campaign finished by an older numfuzz, whose marker is
    /// empty, was fuzzed.
    pub seconds: u64,
}

/// Seconds `function`'s finished campaign was fuzzed, from its marker (`jobs::mark_done`).
fn fuzzed(s: &Source) -> Option<u64> {
    let text = std::fs::read_to_string(s.layout.campaign_done(s.function)).ok()?;
    Some(text.trim().parse().unwrap_or(s.seconds))
}

/// The merged report of `sources`, in order. A report of another schema stops the merge:
/// merging without it would drop its bugs without a word.
pub fn merge_reports(sources: &[Source]) -> anyhow::Result<Merged> {
    let mut docs = Vec::new();
    for s in sources {
        let path = s.layout.report(s.function);
        let doc = match read_report(&path) {
            Ok(doc) => Some(doc),
            Err(_) if !path.exists() => None,
            Err(why) => bail!("{why}"),
        };
        let binary = HarnessDir::binary_in(s.harness_dir, s.function);
        docs.push((s.function, doc, binary, s.layout.campaign(s.function), fuzzed(s)));
    }
    Ok(merge::merge(docs.iter().map(
        |(function, doc, binary, campaign, seconds)| FunctionReport {
            function,
            doc: doc.as_ref(),
            binary,
            campaign,
            seconds: *seconds,
        },
    )))
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
