//! `numfuzz triage`: a campaign's findings replayed, grouped, judged and reported.

use super::{Jobs, MemoryLimit, ReplayTimeout};
use numfuzz::triage::format::ReportFormat;
use std::path::PathBuf;

/// Which findings `--minimize` minimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MinimizeWhich {
    All,
    Bugs,
}

#[derive(Debug, clap::Args)]
#[command(mut_arg("timeout_ms", |a| a.default_value("3000").required(false)))]
#[command(
    after_help = "Consequences (which exceptions reach a declared result) need the harness's NUMFUZZ_RESULT declarations and a taint build:\n  NUMFUZZ_CC_TAINT=1 numfuzz-cc <same sources and flags> -o TARGET.taint\n\
Example: numfuzz triage out\n         numfuzz triage out --minimize --oracle targets/gsl/oracle.py --format md --output findings.md"
)]
pub struct TriageArgs {
    /// The campaign's output directory (`numfuzz run -o OUT`).
    pub out: PathBuf,
    /// Replay on this numfuzz-cc target instead of the one in OUT/*/cmdline.
    #[arg(long)]
    pub target: Option<PathBuf>,
    /// The taint build of the target (NUMFUZZ_CC_TAINT=1 numfuzz-cc), which tells which
    /// exceptions reach a declared result (default: TARGET.taint beside the target, if present).
    #[arg(long)]
    pub taint_target: Option<PathBuf>,
    /// The shadow build of the target (NUMFUZZ_CC_SHADOW=1 numfuzz-cc), which judges Inf and
    /// NaN results when there is no --oracle (default: TARGET.shadow beside the target, if
    /// present).
    #[arg(long)]
    pub shadow_target: Option<PathBuf>,
    /// The MPFR shadow build of the target (NUMFUZZ_CC_SHADOW=mpfr numfuzz-cc), asked where
    /// the shadow build cannot tell: beyond x87's range or precision, or when it calls a
    /// result a true range error or undefined (default: TARGET.mpfr beside the target, if
    /// present).
    #[arg(long)]
    pub mpfr_target: Option<PathBuf>,
    /// A reference oracle: a command that reads one JSON line per input and answers the true
    /// value of each declared result (protocol in the README), e.g. targets/gsl/oracle.py.
    #[arg(long, value_name = "CMD")]
    pub oracle: Option<String>,
    /// Relative error above which a result is `wrong` against the oracle's reference (an
    /// oracle may answer a looser one for an input).
    #[arg(long, default_value_t = numfuzz::triage::references::oracle::DEFAULT_TOLERANCE, value_parser = positive_tolerance)]
    pub tolerance: f64,
    /// Seconds the oracle may take to answer one input before it is given up on.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub oracle_timeout: u64,
    /// List every finding, not only the bugs (table, Markdown and HTML).
    #[arg(long)]
    pub all: bool,
    /// Report format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    pub format: ReportFormat,
    /// Write the report to this file (default: stdout).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Minimise each finding's input (shortest decimals, smallest integers) and write it to
    /// <report dir>/minimized/<finding id> (OUT/minimized without --output); `--minimize=bugs`
    /// only the bugs' inputs.
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "all", require_equals = true)]
    pub minimize: Option<MinimizeWhich>,
    /// Write one standalone C reproducer per bug into this directory (with numfuzz.h): it runs
    /// the harness on the bug's input (minimised with --minimize) against the library built
    /// without numfuzz-cc and exits 1 while the bug is there; the report prints how to build it.
    #[arg(long, value_name = "DIR")]
    pub repro: Option<PathBuf>,
    /// The link arguments of the library built without numfuzz-cc, put as they are into the
    /// reproducers' build lines (e.g. '-lgsl -lgslcblas', or /path/libfoo.a; add -I for its
    /// headers where the harness needs one, e.g. '-I/usr/include/gsl -lgsl -lgslcblas' for the
    /// GSL harnesses); without them the lines say PLAIN_LIBRARY where they go. Needs --repro.
    #[arg(long, value_name = "ARGS", value_parser = link_args, allow_hyphen_values = true)]
    pub repro_link: Option<String>,
    #[command(flatten)]
    pub jobs: Jobs,
    #[command(flatten)]
    pub timeout: ReplayTimeout,
    /// Memory limit per replay in MiB, or `none` (default: the campaign's `-m`).
    #[arg(short = 'm', long = "memory-limit", value_name = "MB", value_parser = super::memory_limit)]
    pub memory_limit_mb: Option<MemoryLimit>,
    /// SARIF: make source locations relative to this directory (default: the directory all
    /// source files share).
    #[arg(long)]
    pub srcroot: Option<PathBuf>,
}

/// `--repro-link`'s value: shell words on one line (it goes into a build line and a C comment).
fn link_args(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err("empty: give the plain library's link arguments, e.g. '-lgsl -lgslcblas' or /path/libfoo.a".into());
    }
    if s.chars().any(char::is_control) {
        return Err("a control character (a newline?): give the link arguments on one line".into());
    }
    if s.contains("*/") {
        return Err("`*/` would end the reproducer's comment".into());
    }
    Ok(s.trim().to_string())
}

fn positive_tolerance(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if t > 0.0 && t.is_finite() => Ok(t),
        _ => Err(format!("`{s}` is not a positive number (a relative error, e.g. 1e-6)")),
    }
}
