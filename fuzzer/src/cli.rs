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
