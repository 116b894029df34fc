//! `exceptions.jsonl`: one line per (site, kind) an instance saw for the first time.

use crate::finding::FindingKey;
use numfuzz_abi::kind::ExceptionKind;
use numfuzz_abi::site::SiteInfo;
use serde::{Deserialize, Serialize};
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;

pub const EXCEPTIONS_FILE: &str = "exceptions.jsonl";

/// One line of `exceptions.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExceptionRecord {
    /// Milliseconds since the campaign started.
    pub time_ms: u64,
    pub kind: ExceptionKind,
    pub site: SiteInfo,
    /// The input that raised it, relative to the instance directory (`crashes/id:...`).
    pub input: String,
    /// The input was saved because this (site, kind), already known, reached a declared
    /// result of the harness (non-finite, unreported) for the first time.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub escape: bool,
}

impl ExceptionRecord {
    pub fn key(&self) -> FindingKey {
        FindingKey::of(self.kind, &self.site)
    }
}

/// Appends `record` to `dir/exceptions.jsonl` as one line, written with a single `write`.
pub fn append(dir: &Path, record: &ExceptionRecord) -> std::io::Result<()> {
    let mut line = serde_json::to_string(record).map_err(std::io::Error::other)?;
    line.push('\n');
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(EXCEPTIONS_FILE))?;
    f.write_all(line.as_bytes())
}

/// Reads `dir/exceptions.jsonl`, oldest first (malformed lines, e.g. one cut by a crash, are
/// skipped).
pub fn read(dir: &Path) -> Vec<ExceptionRecord> {
    fs::read_to_string(dir.join(EXCEPTIONS_FILE))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}
