//! `DIR/manifest.json` (what `numfuzz run-all DIR` reads) and `DIR/skipped.md`.

use super::plan::Plan;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// 2: `results` are objects, and every floating-point output may be primary.
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub schema_version: u32,
    /// The headers given, as absolute paths.
    pub headers: Vec<String>,
    pub harnesses: Vec<HarnessEntry>,
    pub skipped: Vec<SkippedEntry>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct HarnessEntry {
    pub function: String,
    /// Relative to DIR.
    pub source: String,
    /// The header as the harness includes it.
    pub header: String,
    pub signature: String,
    /// In declaration order: the return value, then the outputs in parameter order.
    pub results: Vec<ResultEntry>,
    /// "status" or "value" for an integer return, null otherwise.
    pub int_return: Option<String>,
    pub oracle: Option<String>,
}

/// One declared result: `return`, a parameter's name or `param.field`; primary ones are judged.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ResultEntry {
    pub name: String,
    pub primary: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SkippedEntry {
    pub function: String,
    pub header: String,
    /// The parameter that stopped it (null when the reason is the function as a whole).
    pub parameter: Option<String>,
    pub reason: String,
}

impl HarnessEntry {
    pub fn new(plan: &Plan, header: &str) -> HarnessEntry {
        HarnessEntry {
            function: plan.function.clone(),
            source: format!("src/{}.c", plan.function),
            header: header.to_string(),
            signature: plan.signature(),
            results: plan
                .results
                .iter()
                .map(|r| ResultEntry {
                    name: r.name.clone(),
                    primary: r.primary,
                })
                .collect(),
            int_return: plan.int_return.map(|r| r.name().to_string()),
            oracle: plan.oracle.clone(),
        }
    }
}

impl Manifest {
    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(self)? + "\n";
        write(&dir.join("manifest.json"), &text)?;
        write(&dir.join("skipped.md"), &self.skipped_markdown())
    }

    fn skipped_markdown(&self) -> String {
        let mut s = String::from("# Functions without a generated harness\n\n");
        if self.skipped.is_empty() {
            s.push_str("None.\n");
        }
        for k in &self.skipped {
            s.push_str(&format!("- `{}` ({}): {}\n", k.function, k.header, k.reason));
        }
        s
    }
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).map_err(|e| anyhow::anyhow!("cannot write `{}`: {e}", path.display()))
}
