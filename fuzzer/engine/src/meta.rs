//! Metadata numfuzz keeps in the LibAFL state (it survives client restarts) and on testcases.

use libafl_bolts::impl_serdeany;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// Per-instance counters behind the AFL-style file names and `fuzzer_stats`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AflCounters {
    pub queue: u64,
    pub crashes: u64,
    pub hangs: u64,
    /// Crash files that are real crashes (signals) rather than FP exceptions.
    pub real_crashes: u64,
    /// Of the real crashes, inputs the memory limit stopped (`oom`).
    #[serde(default)]
    pub out_of_memory: u64,
    /// Milliseconds since the campaign start of the last new queue entry / crash / hang.
    pub last_find_ms: Option<u64>,
    pub last_crash_ms: Option<u64>,
    pub last_hang_ms: Option<u64>,
    /// Distinct (site, kind) found, by kind index.
    pub exceptions_by_kind: [u64; 4],
    /// (site, kind) seen reaching a declared result (escape objective).
    #[serde(default)]
    pub escapes: u64,
}
impl_serdeany!(AflCounters);

/// The (site, kind) slots whose exception this instance has seen.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ExceptionsSeen {
    pub slots: HashSet<u32>,
}
impl_serdeany!(ExceptionsSeen);

/// The (site, kind) slots seen as origins in a run whose declared result went Inf or NaN
/// unreported (the escape objective saves the first such input of each).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EscapesSeen {
    pub slots: HashSet<u32>,
}
impl_serdeany!(EscapesSeen);

/// The best (lowest) distance seen per slot of one distance map (ErrBits, comparison
/// distances), kept as named metadata under the map's name.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DistanceHistory {
    pub best: Vec<u8>,
    /// Slots measured at least once.
    pub measured: u64,
    /// Slots whose best distance is 0 (the exception happened, the comparison went that way).
    pub reached: u64,
}
impl_serdeany!(DistanceHistory);

/// On a testcase: per distance map, the slots where it lowered the best distance.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DistanceProgress {
    pub maps: Vec<(String, Vec<u32>)>,
}
impl_serdeany!(DistanceProgress);

impl DistanceProgress {
    pub fn has(&self, map: &str) -> bool {
        self.maps.iter().any(|(m, s)| m == map && !s.is_empty())
    }
}

/// On a testcase: the input-to-state stage has traced it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Traced;
impl_serdeany!(Traced);

/// On a testcase: the (site, kind) slots it raised first.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct NewExceptions {
    pub slots: Vec<u32>,
}
impl_serdeany!(NewExceptions);

/// Which testcase is currently best for each (distance map, slot) (the scheduler's favourites).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DistanceTopRated {
    pub by_slot: std::collections::HashMap<(String, u32), libafl::corpus::CorpusId>,
}
impl_serdeany!(DistanceTopRated);
