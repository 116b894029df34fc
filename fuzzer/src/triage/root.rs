//! The root of one input's non-finite result, as `attribution` finds it and `consequence`
//! and the report use it.

use numfuzz_outdir::FindingKey;
use serde::Serialize;

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
}

impl RootBy {
    pub fn name(self) -> &'static str {
        match self {
            RootBy::Labels => "labels",
            RootBy::Repair => "repair",
            RootBy::Earliest => "earliest",
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
    /// Origins whose repair was not tried (past `attribution::MAX_REPAIRS`).
    pub untried: usize,
}
