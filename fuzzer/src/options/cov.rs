//! `numfuzz cov`: branch coverage of a campaign's inputs with llvm-cov.

use super::ReplayTimeout;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CovFormat {
    Table,
    Json,
}

#[derive(Debug, clap::Args)]
#[command(mut_arg("timeout_ms", |a| a.default_value("2000").required(false)))]
#[command(
    after_help = "The coverage build is the same harness built with `NUMFUZZ_CC_COVERAGE=1 numfuzz-cc`.\n\
Example: numfuzz cov out --target ./harness-cov\n         numfuzz cov out --target ./harness-cov --function __ieee754_acos --format json"
)]
pub struct CovArgs {
    /// Output directory of the campaign (numfuzz run or afl-fuzz `-o`), or one instance in it.
    pub out: PathBuf,
    /// The coverage build of the campaign's harness.
    #[arg(long)]
    pub target: PathBuf,
    /// Measure this function (llvm-cov's name: static functions are FILE:NAME) instead of the
    /// function under test, which is inferred as the one the harness calls once per input.
    #[arg(long, conflicts_with = "file")]
    pub function: Option<String>,
    /// Measure every function of this source file (its path, or its last components).
    #[arg(long)]
    pub file: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CovFormat::Table)]
    pub format: CovFormat,
    /// Also find when the final coverage was first reached (by the inputs' `time:` field).
    #[arg(long)]
    pub time_to_final: bool,
    #[command(flatten)]
    pub timeout: ReplayTimeout,
    /// Directory of llvm-profdata and llvm-cov (default: `$LLVM_CONFIG --bindir`, LLVM_CONFIG
    /// defaulting to llvm-config-19).
    #[arg(long)]
    pub llvm_bindir: Option<PathBuf>,
    /// Keep the merged profile in this file (for `llvm-cov show`).
    #[arg(long)]
    pub profdata: Option<PathBuf>,
}
