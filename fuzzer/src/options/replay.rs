//! `numfuzz replay`: inputs run on a target, their values and exceptions shown.

use super::ReplayTimeout;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The target, built with numfuzz-cc.
    pub target: PathBuf,
    /// Input files.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Decode inputs with this signature instead of the target's (e.g. `f64,i32`).
    #[arg(long, value_parser = super::signature)]
    pub signature: Option<String>,
    #[command(flatten)]
    pub timeout: ReplayTimeout<5000>,
}
