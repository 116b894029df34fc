//! `numfuzz run-all`: a campaign and a triage per harness of a harness directory, one merged report.

use super::triage::MinimizeWhich;
use super::Jobs;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct RunAllArgs {
    /// The harness directory (`numfuzz harness -o DIR`): manifest.json and bin/<function>.
    pub dir: PathBuf,
    /// Where the campaigns, their triage reports and the merged report go.
    #[arg(short = 'o', long = "output")]
    pub out: PathBuf,
    /// Seconds of fuzzing per function.
    #[arg(short = 'V', value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub seconds: u64,
    #[command(flatten)]
    pub jobs: Jobs,
    /// The oracle every triage asks (see `numfuzz triage --oracle`).
    #[arg(long, value_name = "CMD")]
    pub oracle: Option<String>,
    /// Only these functions (comma-separated names from the manifest).
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
