//! `exceptions.jsonl`: one line per (site, kind) an instance saw for the first time.

use crate::finding::FindingKey;
use crate::jsonl;
use numfuzz_abi::kind::ExceptionKind;
use numfuzz_abi::site::SiteInfo;
use serde::{Deserialize, Serialize};
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

/// Appends `record` to `dir/exceptions.jsonl` as one line.
pub fn append(dir: &Path, record: &ExceptionRecord) -> std::io::Result<()> {
    jsonl::append(&dir.join(EXCEPTIONS_FILE), record)
}

/// Reads `dir/exceptions.jsonl`, oldest first (malformed lines, e.g. one cut by a crash, are
/// skipped).
pub fn read(dir: &Path) -> Vec<ExceptionRecord> {
    jsonl::read(&dir.join(EXCEPTIONS_FILE))
}
