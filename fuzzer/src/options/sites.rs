//! `numfuzz sites`: the checked operations of a target.

use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct SitesArgs {
    /// The target, built with numfuzz-cc.
    pub target: PathBuf,
    /// Print the site table as JSON.
    #[arg(long)]
    pub json: bool,
}
