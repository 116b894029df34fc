//! Command-line definitions (clap derive).

use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "numfuzz",
    version,
    about = "Greybox fuzzing for IEEE-754 floating-point exceptions (Overflow, Underflow, Invalid, DivByZero)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Fuzz a target: a multi-core LibAFL campaign with IEEE-754 mutators and ErrBits feedback.
    Run(RunArgs),
    /// List the checked floating-point operations (sites) of a numfuzz-cc target.
    Sites(SitesArgs),
    /// Run inputs on a target and show their decoded values and every exception they raise.
    Replay(ReplayArgs),
}

#[derive(Debug, clap::Args)]
pub struct SitesArgs {
    /// The target, built with numfuzz-cc.
    pub target: PathBuf,
    /// Print the site table as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The target, built with numfuzz-cc.
    pub target: PathBuf,
    /// Input files.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Decode inputs with this signature instead of the target's (e.g. `f64,i32`).
    #[arg(long)]
    pub signature: Option<String>,
    /// Time limit per input in milliseconds.
    #[arg(short = 't', long = "timeout", default_value_t = 5000)]
    pub timeout_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExecutorChoice {
    /// In-process for numfuzz-cc libFuzzer-style harnesses, else forkserver.
    Auto,
    /// The LibAFL engine linked into the target (numfuzz-cc harnesses).
    Inprocess,
    /// AFL++ forkserver (any AFL++-instrumented binary, or numfuzz-cc targets).
    Forkserver,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScheduleChoice {
    Mopt,
    Havoc,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Example: numfuzz run -o out -V 60 -- ./harness\n         numfuzz run -i seeds -o out --cores 0-1 -- ./program @@")]
pub struct RunArgs {
    /// Directory (or file) of initial inputs; without it, seeds are built from the signature.
    #[arg(short = 'i', long = "input")]
    pub seeds: Option<PathBuf>,
    /// Output directory (AFL++ layout); an earlier campaign of the same target there is resumed.
    #[arg(short = 'o', long = "output", required = true)]
    pub out: PathBuf,
    /// Stop after this many seconds.
    #[arg(short = 'V', long = "duration")]
    pub duration_secs: Option<u64>,
    /// Time limit per execution in milliseconds.
    #[arg(short = 't', long = "timeout", default_value_t = 1000)]
    pub timeout_ms: u64,
    /// Cores to fuzz on, one client each (e.g. `0`, `0-1`, `0,2`).
    #[arg(long, default_value = "0")]
    pub cores: String,
    /// How to execute the target.
    #[arg(long, value_enum, default_value_t = ExecutorChoice::Auto)]
    pub executor: ExecutorChoice,
    /// Input signature (e.g. `f64,i32`) instead of the one embedded in the target.
    #[arg(long)]
    pub signature: Option<String>,
    /// Switch off ErrBits feedback (ablation).
    #[arg(long)]
    pub no_errbits: bool,
    /// Switch off the IEEE-754 field mutators (ablation).
    #[arg(long)]
    pub no_fp_mutators: bool,
    /// How mutation operators are chosen: MOpt (learned weights) or uniform havoc.
    #[arg(long, value_enum, default_value_t = ScheduleChoice::Mopt)]
    pub schedule: ScheduleChoice,
    /// Dictionary file (AFL++ format); may be repeated.
    #[arg(short = 'x', long = "dict")]
    pub dictionaries: Vec<PathBuf>,
    /// Connect this campaign's LLMP broker to another machine's broker (HOST:PORT).
    #[arg(long)]
    pub broker: Option<String>,
    /// Port of this campaign's LLMP broker (default: a free port).
    #[arg(long)]
    pub port: Option<u16>,
    /// Plain status lines even on a terminal.
    #[arg(long)]
    pub no_tui: bool,
    /// The target and its arguments (`@@` is replaced by the input file).
    #[arg(last = true, required = true, value_name = "TARGET [ARGS]")]
    pub command: Vec<String>,
}
