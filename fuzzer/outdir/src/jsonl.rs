//! The output directory's append-only JSON-lines files (`exceptions.jsonl`, `clients.jsonl`).
//!
//! Each value is one line written with a single `write`, so a stop at any moment cuts at most
//! the last line; a line that does not parse is skipped when read (and dropped by
//! [`crate::repair`] before a resume appends again).

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;

/// Appends `value` to `path` as one line.
pub fn append<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let mut line = serde_json::to_string(value).map_err(std::io::Error::other)?;
    line.push('\n');
    let mut f = OpenOptions::new().create(true).append(true).open(path)?;
    f.write_all(line.as_bytes())
}

/// The values of `path`, oldest first; nothing if it does not exist.
pub fn read<T: DeserializeOwned>(path: &Path) -> Vec<T> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}
