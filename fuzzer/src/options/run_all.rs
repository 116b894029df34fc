//! `numfuzz run-all`: a campaign and a triage per harness of a harness directory, one merged
//! report; `numfuzz run-all merge`: one report from the output directories of shards.
//!
//! `merge` is a clap subcommand of `run-all`, so that it has its own `--help` and options.
//! clap reads a first word `merge` as the subcommand, never as DIR; a harness directory
//! named `merge` is given as `./merge`. The run's own options conflict with the subcommand
//! (`run-all -V 5 merge ...` is refused), and DIR, -o and -V are required only without it.

use super::triage::MinimizeWhich;
use super::Jobs;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    disable_help_subcommand = true
)]
pub struct RunAllArgs {
    #[command(subcommand)]
    pub merge: Option<RunAllMerge>,
    /// The harness directory (`numfuzz harness -o DIR`): manifest.json and bin/<function>. A
    /// directory named `merge` is given as `./merge` (`numfuzz run-all merge` merges shards:
    /// see its --help).
    #[arg(required = true)]
    pub dir: Option<PathBuf>,
    /// Where the campaigns, their triage reports and the merged report go.
    #[arg(short = 'o', long = "output", required = true)]
    pub out: Option<PathBuf>,
    /// Seconds of fuzzing per function (with --continue or --retriage, the earlier run's when
    /// neither this nor --budget is given).
    #[arg(short = 'V', value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..),
          required_unless_present_any = ["budget", "resume", "retriage"], conflicts_with = "budget")]
    pub seconds: Option<u64>,
    /// One fuzzing time for every function together, instead of -V (e.g. `2h`, `90m`, `2650s`;
    /// a bare number is seconds). The first round gives each function half its equal share;
    /// the rest goes in rounds to the functions whose findings and edges still grew at the end
    /// of their last slice (a UCB bandit, see the run-all guide). The report says how long each
    /// got. It is fuzzing time summed over the functions, as -V times their number: the
    /// campaigns take about BUDGET / --jobs, then the triages.
    #[arg(long, value_name = "DURATION", value_parser = super::duration)]
    pub budget: Option<u64>,
    /// Only shard K of N (K from 1 to N): the functions at positions K-1, K-1+N, ... of the
    /// name-sorted list, the same share on every machine. Each shard's OUT has its own report;
    /// `numfuzz run-all merge OUT... -o MERGED` makes the report of the whole run from them.
    /// `--continue` keeps the shard OUT was made with.
    // A string, checked by `run-all` itself: clap's error for a bad value takes three lines.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    #[command(flatten)]
    pub jobs: Jobs,
    /// The oracle every triage asks (see `numfuzz triage --oracle`; with --continue or
    /// --retriage, the earlier run's when not given).
    #[arg(long, value_name = "CMD")]
    pub oracle: Option<String>,
    /// Only these functions (comma-separated names from the manifest; with --continue or
    /// --retriage, the earlier run's when not given).
    #[arg(long, value_name = "LIST")]
    pub functions: Option<String>,
    /// Resume a run-all in OUT that was stopped: functions with a report are kept.
    #[arg(long = "continue")]
    pub resume: bool,
    /// Triage every finished campaign in OUT again and merge (after a numfuzz or oracle
    /// update); campaigns that did not finish are run.
    #[arg(long, conflicts_with = "resume")]
    pub retriage: bool,
    /// Minimise the findings' inputs in every triage (see `numfuzz triage --minimize`).
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "all", require_equals = true)]
    pub minimize: Option<MinimizeWhich>,
    /// The format printed on stdout (all four are written to OUT/report.*).
    #[arg(long, value_enum, default_value_t = MergedFormat::Md)]
    pub format: MergedFormat,
    /// Arguments for every `numfuzz run` (e.g. `-- -t 1000 --no-local-search`).
    #[arg(last = true, value_name = "RUN ARGS")]
    pub run_args: Vec<String>,
}

impl RunAllArgs {
    /// The arguments of `run-all merge`, when that is what was asked.
    pub fn merging(&self) -> Option<&MergeArgs> {
        self.merge.as_ref().map(|RunAllMerge::Merge(m)| m)
    }
}

#[derive(Debug, clap::Subcommand)]
pub enum RunAllMerge {
    /// Merge the output directories of the shards of one run-all (`--shard K/N`) into the
    /// report one run over all of them would have written.
    #[command(
        after_help = "Example: numfuzz run-all merge out-1 out-2 out-3 out-4 -o merged\n\nRefused: directories of different harness directories, a function in two of them, a missing shard, a non-empty MERGED."
    )]
    Merge(MergeArgs),
}

#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// The run-all directories of the shards, every shard once, in any order.
    #[arg(required = true, value_name = "OUT")]
    pub outs: Vec<PathBuf>,
    /// A new (or empty) directory for the merged report.md, report.json, report.sarif and
    /// report.html.
    #[arg(short = 'o', long = "output", value_name = "MERGED")]
    pub merged: PathBuf,
    /// The format printed on stdout (all four are written to MERGED/report.*).
    #[arg(long, value_enum, default_value_t = MergedFormat::Md)]
    pub format: MergedFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MergedFormat {
    /// GitHub-flavoured Markdown.
    Md,
    /// JSON (schema in the README).
    Json,
    /// SARIF 2.1.0.
    Sarif,
    /// Self-contained HTML page (bug list, per-function table and chart).
    Html,
}
