//! The root of one input's non-finite result, as `repair` finds it and `consequences`
//! and the report use it.

use numfuzz_abi::report::Frame;
use numfuzz_outdir::FindingKey;
use serde::Serialize;
use std::path::Path;

/// How an input's root was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RootBy {
    /// The one origin whose labels reach the result, and its repair fixes it.
    Labels,
    /// The first origin whose repair alone fixes the result.
    Repair,
    /// No single repair fixes it: the earliest origin the labels name.
    Earliest,
    /// The library reported an error inside and the function returned success: the dropped
    /// report is the root (`findings::dropped_report`), this exception the entry's first.
    Report,
    /// The root's operands had lost their digits at an earlier operation (`findings::precision_lost`): that
    /// operation is the entry's root, this exception where it first showed.
    Precision,
}

impl RootBy {
    pub fn name(self) -> &'static str {
        match self {
            RootBy::Labels => "labels",
            RootBy::Repair => "repair",
            RootBy::Earliest => "earliest",
            RootBy::Report => "report",
            RootBy::Precision => "precision",
        }
    }
}

/// How the root's exception reaches the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Via {
    /// Its value, or one computed from it, is the result (labels).
    Data,
    /// Only a branch taken because of it leads to the result (no label reaches it).
    Control,
}

impl Via {
    pub fn name(self) -> &'static str {
        match self {
            Via::Data => "data",
            Via::Control => "control",
        }
    }
}

/// The root of one input's non-finite result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attribution {
    /// `None`: no label reaches the result and no single repair fixes it.
    pub root: Option<(FindingKey, RootBy, Via)>,
    /// Repaired replays it took.
    pub replays: usize,
    /// Origins whose repair was not tried (past `repair::MAX_REPAIRS`).
    pub untried: usize,
}

/// A report the function that received it did not pass on.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DroppedReport {
    /// Where the library reported the error (`gamma.c`, the hook call's line).
    pub file: String,
    pub line: u32,
    pub reason: Option<String>,
    pub code: i64,
    /// The function that reported it.
    pub reporter: String,
    /// The call that dropped it (`None`: the function the harness called reported it itself
    /// and returned success).
    pub dropped_at: Option<Frame>,
    /// The function that dropped it.
    pub dropped_by: String,
}

impl DroppedReport {
    /// Reports of one defect: the same report dropped at the same call.
    pub fn key(&self) -> String {
        let at = self.dropped_at.as_ref().map_or(String::new(), |f| {
            let file = f.file.as_deref().map(file_name).unwrap_or_default();
            format!("{file}:{}", f.line.unwrap_or(0))
        });
        format!("{}:{} dropped at {at}", self.file, self.line)
    }

    /// `error reported at gamma.c:1093 ("overflow", code 16) in gsl_sf_fact_e, dropped by its
    /// caller gsl_sf_hermite_deriv_e at hermite.c:433`.
    pub fn describe(&self) -> String {
        let reason = self.reason.as_ref().map_or(String::new(), |r| format!("\"{r}\", "));
        let reported = format!(
            "error reported at {}:{} ({reason}code {}) in {}",
            self.file, self.line, self.code, self.reporter
        );
        match &self.dropped_at {
            Some(f) => {
                let at = match (&f.file, f.line) {
                    (Some(file), Some(line)) => format!(" at {}:{line}", file_name(file)),
                    _ => String::new(),
                };
                format!("{reported}, dropped by its caller {}{at}", self.dropped_by)
            }
            None => format!("{reported}, and {} returned success", self.dropped_by),
        }
    }
}

/// A path's last component (`gamma.c`).
pub fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map_or_else(|| path.to_string(), |f| f.to_string_lossy().into_owned())
}
