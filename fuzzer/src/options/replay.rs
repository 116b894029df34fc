//! `numfuzz replay`: inputs run on a target, their values and exceptions shown.

use super::ReplayTimeout;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(mut_arg("timeout_ms", |a| a.default_value("5000").required(false)))]
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
    pub timeout: ReplayTimeout,
}
