//! The reports' JSON documents as types: what `numfuzz triage --format json` writes
//! (`triage`), what `numfuzz run-all` merges it into (`merged`), and the one way to read either
//! back (the schema version checked first). Triage builds its document from its report
//! (`triage/format/json.rs`), run-all reads the same types back; neither declares the shape
//! again.
//!
//! Enumerations of other modules (verdicts, sources, consequences) are kept here as the names
//! they serialise to, so that this module depends on no part of triage.

pub mod merged;
pub mod triage;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Which program wrote a document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

impl Default for Tool {
    /// This numfuzz.
    fn default() -> Tool {
        Tool {
            name: "numfuzz".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// A document of some schema: its version only, read before the rest.
#[derive(Deserialize)]
struct Versioned {
    schema_version: Option<u32>,
}

/// What a reader says of a document it cannot read: what it is, and how to write it anew.
pub struct Kind {
    /// `a triage report`.
    pub what: &'static str,
    pub schema: u32,
    /// What to do about another version: the commands that write it again.
    pub advice: &'static str,
}

/// `text` (read from `path`) as a document of `kind`'s schema; another version is a one-line
/// error that says how to write it again.
pub fn parse<T: DeserializeOwned>(path: &Path, text: &str, kind: &Kind) -> Result<T, String> {
    let shown = path.display();
    let versioned: Versioned =
        serde_json::from_str(text).map_err(|e| format!("{shown} is not {} (not JSON: {e})", kind.what))?;
    match versioned.schema_version {
        Some(v) if v == kind.schema => {}
        Some(v) => {
            return Err(format!(
                "{shown} is schema {v}; this numfuzz reads schema {}: {}",
                kind.schema, kind.advice
            ))
        }
        None => return Err(format!("{shown} is not {} (no schema_version)", kind.what)),
    }
    serde_json::from_str(text).map_err(|e| format!("{shown} is not {} of schema {}: {e}", kind.what, kind.schema))
}

/// The document of `kind` in the file at `path`.
pub fn read<T: DeserializeOwned>(path: &Path, kind: &Kind) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse(path, &text, kind)
}

/// Pretty JSON with a final newline, as every report file is written.
pub fn to_text<T: Serialize>(doc: &T) -> String {
    serde_json::to_string_pretty(doc).expect("JSON values serialise") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_schema_is_a_one_line_error_that_says_what_to_run() {
        let path = Path::new("OUT/triage/f/triage.json");
        let old = r#"{"schema_version": 3, "findings": []}"#;
        let e = parse::<triage::TriageDoc>(path, old, &triage::KIND).unwrap_err();
        assert_eq!(
            e,
            format!(
                "OUT/triage/f/triage.json is schema 3; this numfuzz reads schema {}: run `numfuzz run-all --retriage` (or `numfuzz triage --format json` again) to write it anew",
                triage::SCHEMA_VERSION
            )
        );
        let e = parse::<triage::TriageDoc>(path, "{}", &triage::KIND).unwrap_err();
        assert_eq!(e, "OUT/triage/f/triage.json is not a triage report (no schema_version)");
    }

    #[test]
    fn a_document_reads_back_as_it_was_written() {
        let doc = triage::TriageDoc {
            schema_version: triage::SCHEMA_VERSION,
            bugs: vec!["a".into()],
            ..Default::default()
        };
        let back: triage::TriageDoc = parse(Path::new("t.json"), &to_text(&doc), &triage::KIND).unwrap();
        assert_eq!(back, doc);
    }
}
