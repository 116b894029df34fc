//! The harness directory `numfuzz harness` writes: `manifest.json` and `bin/<function>` (with
//! `.taint` and `.shadow` beside each). `run-all` needs only each harness's function name; the
//! other fields are read when present and carried into the merged report.

use anyhow::{bail, Context};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Deserialize)]
pub struct Harness {
    pub function: String,
    #[serde(default)]
    pub signature: Option<String>,
    #[serde(default)]
    pub header: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Document {
    harnesses: Vec<Harness>,
}

/// A harness directory: its manifest's harnesses and where their binaries are.
#[derive(Clone, Debug)]
pub struct HarnessDir {
    pub dir: PathBuf,
    pub harnesses: Vec<Harness>,
}

impl HarnessDir {
    pub fn open(dir: &Path) -> anyhow::Result<HarnessDir> {
        let path = dir.join("manifest.json");
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "{} has no manifest.json: give the directory `numfuzz harness -o DIR` wrote",
                dir.display()
            )
        })?;
        let doc: Document =
            serde_json::from_str(&text).with_context(|| format!("{} is not a harness manifest", path.display()))?;
        if doc.harnesses.is_empty() {
            bail!("{} lists no harness", path.display());
        }
        Ok(HarnessDir {
            dir: dir.to_path_buf(),
            harnesses: doc.harnesses,
        })
    }

    /// The fuzzing build of `function`.
    pub fn binary(&self, function: &str) -> PathBuf {
        HarnessDir::binary_in(&self.dir, function)
    }

    /// The fuzzing build of `function` in harness directory `dir` (a shard's, which a merge
    /// need not have at hand).
    pub fn binary_in(dir: &Path, function: &str) -> PathBuf {
        dir.join("bin").join(function)
    }

    /// The harnesses named in `list` (comma-separated), in the manifest's order; every name
    /// must be one of them.
    pub fn select(&self, list: Option<&str>) -> anyhow::Result<Vec<Harness>> {
        let Some(list) = list else {
            return Ok(self.harnesses.clone());
        };
        let wanted: Vec<&str> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
        if let Some(unknown) = wanted
            .iter()
            .find(|w| !self.harnesses.iter().any(|h| h.function == **w))
        {
            bail!(
                "--functions: `{unknown}` is not in {}/manifest.json (its harnesses are listed there)",
                self.dir.display()
            );
        }
        Ok(self
            .harnesses
            .iter()
            .filter(|h| wanted.contains(&h.function.as_str()))
            .cloned()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(manifest: &str) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("manifest.json"), manifest).unwrap();
        d
    }

    #[test]
    fn a_manifest_lists_harnesses_and_a_selection_keeps_its_order() {
        let d = dir_with(
            r#"{"schema_version": 1, "harnesses": [{"function": "f", "signature": "f64"}, {"function": "g"}, {"function": "h"}], "skipped": []}"#,
        );
        let h = HarnessDir::open(d.path()).unwrap();
        assert_eq!(h.harnesses.len(), 3);
        assert_eq!(h.binary("g"), d.path().join("bin/g"));
        let names = |v: Vec<Harness>| v.into_iter().map(|h| h.function).collect::<Vec<_>>();
        assert_eq!(names(h.select(Some("h, f")).unwrap()), ["f", "h"]);
        assert_eq!(names(h.select(None).unwrap()), ["f", "g", "h"]);
        let e = h.select(Some("f,nope")).unwrap_err().to_string();
        assert!(e.contains("`nope`"), "{e}");
    }

    #[test]
    fn a_directory_without_a_manifest_says_what_to_give() {
        let d = tempfile::tempdir().unwrap();
        let e = HarnessDir::open(d.path()).unwrap_err().to_string();
        assert!(e.contains("numfuzz harness"), "{e}");
        let d = dir_with(r#"{"harnesses": []}"#);
        assert!(HarnessDir::open(d.path())
            .unwrap_err()
            .to_string()
            .contains("no harness"));
    }
}
