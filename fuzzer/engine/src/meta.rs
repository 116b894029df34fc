//! Metadata numfuzz keeps in the LibAFL state (it survives client restarts) and on testcases.

use fixedbitset::FixedBitSet;
use libafl_bolts::impl_serdeany;
use serde::{Deserialize, Serialize};

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

/// A set of dense slot numbers (the exception map's (site, kind) slots), looked up on every
/// execution: one bit per slot.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SlotSet(FixedBitSet);

impl SlotSet {
    pub fn contains(&self, slot: u32) -> bool {
        self.0.contains(slot as usize)
    }

    /// Adds `slot`; whether it was new.
    pub fn insert(&mut self, slot: u32) -> bool {
        let slot = slot as usize;
        if slot >= self.0.len() {
            self.0.grow(slot + 1);
        }
        !self.0.put(slot)
    }

    pub fn len(&self) -> usize {
        self.0.count_ones(..)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_clear()
    }
}

impl Extend<u32> for SlotSet {
    fn extend<T: IntoIterator<Item = u32>>(&mut self, slots: T) {
        for s in slots {
            self.insert(s);
        }
    }
}

/// The (site, kind) slots whose exception this instance has seen.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ExceptionsSeen {
    pub slots: SlotSet,
}
impl_serdeany!(ExceptionsSeen);

/// The (site, kind) slots seen raised before any Invalid, DivByZero or Overflow of their run
/// (`numfuzz_abi::kind::EXC_UNPRECEDED`): the first such input of a slot first met after another
/// exception is saved too.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct UnprecededSeen {
    pub slots: SlotSet,
}
impl_serdeany!(UnprecededSeen);

/// The (site, kind) slots seen as origins in a run whose declared result went Inf or NaN
/// unreported (the escape objective saves the first such input of each).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EscapesSeen {
    pub slots: SlotSet,
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
    /// Some of those slots had never been measured (new code reached, not only a known
    /// distance lowered).
    #[serde(default)]
    pub first_measures: bool,
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

/// On a testcase: it was kept for an edge (or an edge's hit count) not seen before.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct NewEdges;
impl_serdeany!(NewEdges);

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

#[cfg(test)]
mod tests {
    use super::SlotSet;

    #[test]
    fn a_slot_set_grows_and_tells_new_slots() {
        let mut s = SlotSet::default();
        assert!(s.is_empty() && !s.contains(70_000));
        assert!(s.insert(70_000));
        assert!(!s.insert(70_000));
        s.extend([3, 5, 3]);
        assert_eq!(s.len(), 3);
        assert!(s.contains(5) && !s.contains(4) && !s.contains(1 << 30));
    }
}
