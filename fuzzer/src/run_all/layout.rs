//! Where a run-all keeps things under its output directory:
//!
//! ```text
//! OUT/run-all.json              what was asked (harness directory, seconds, run arguments)
//! OUT/campaigns/F/              numfuzz run -o, with .run-all-done once the campaign ended
//!                               (it holds the seconds the function was fuzzed)
//! OUT/budget.json               under --budget, every slice given (budget::Ledger)
//! OUT/triage/F/triage.json      numfuzz triage --format json (written whole or not at all),
//!                               with minimized/ beside it under --minimize
//! OUT/logs/F.run.log, F.triage.log
//! OUT/report.md, report.json, report.sarif, report.html
//! ```
//!
//! A function is done when its triage report exists: `--continue` skips it, and re-triages a
//! finished campaign whose triage did not end; `--retriage` triages every finished campaign
//! again.

use std::path::{Path, PathBuf};

pub const STATE: &str = "run-all.json";

#[derive(Clone, Debug)]
pub struct Layout {
    pub out: PathBuf,
}

impl Layout {
    pub fn new(out: &Path) -> Layout {
        Layout { out: out.to_path_buf() }
    }

    pub fn state(&self) -> PathBuf {
        self.out.join(STATE)
    }

    pub fn campaign(&self, function: &str) -> PathBuf {
        self.out.join("campaigns").join(function)
    }

    pub fn campaign_done(&self, function: &str) -> PathBuf {
        self.campaign(function).join(".run-all-done")
    }

    pub fn report(&self, function: &str) -> PathBuf {
        self.out.join("triage").join(function).join("triage.json")
    }

    /// The slices a `--budget` gave, for `--continue` and the report.
    pub fn budget(&self) -> PathBuf {
        self.out.join("budget.json")
    }

    pub fn log(&self, function: &str, stage: &str) -> PathBuf {
        self.out.join("logs").join(format!("{function}.{stage}.log"))
    }

    pub fn merged(&self, extension: &str) -> PathBuf {
        self.out.join(format!("report.{extension}"))
    }

    pub fn create(&self) -> std::io::Result<()> {
        for d in ["campaigns", "triage", "logs"] {
            std::fs::create_dir_all(self.out.join(d))?;
        }
        Ok(())
    }
}
