//! The observers over a target's maps, and typed handles to find each one again.

use crate::i2s::CmpTrace;
use crate::local_search::ProbeWords;
pub use crate::maps::{ByteMapObserver, CMP_MAP, ERRBITS_MAP};
use crate::run_flags::RunFlagsObserver;
use crate::run_mode::RunModeWord;
use libafl::observers::{CanTrack, ExplicitTracking, HitcountsMapObserver, StdMapObserver, TimeObserver};
use libafl_bolts::tuples::{tuple_list, tuple_list_type, Handle, Handled};

pub type Hitcounts = HitcountsMapObserver<ByteMapObserver>;
pub type EdgesObserver = ExplicitTracking<Hitcounts, true, false>;
pub type Observers = tuple_list_type!(
    EdgesObserver,
    ByteMapObserver,
    ByteMapObserver,
    ByteMapObserver,
    TimeObserver,
    RunFlagsObserver
);

/// Where each observer is in [`Observers`]: components look their observer up by handle
/// (`observers.get(&handles.errbits)`), never by position or by a name spelled again.
#[derive(Clone, Debug)]
pub struct ObserverHandles {
    /// Edge hit counts (sancov or AFL++'s map).
    pub edges: Handle<EdgesObserver>,
    /// Smallest ErrBits per (site, kind) slot in the run.
    pub errbits: Handle<ByteMapObserver>,
    /// Non-zero per (site, kind) slot that raised in the run.
    pub exceptions: Handle<ByteMapObserver>,
    /// Branch distance per (comparison, outcome).
    pub cmp_distances: Handle<ByteMapObserver>,
    pub time: Handle<TimeObserver>,
    /// The region header's per-run flags (handled, results declared, a result escaped).
    pub run_flags: Handle<RunFlagsObserver>,
}

/// The target's maps as raw memory: edges (sancov or AFL++ shared memory) and numfuzz's
/// ErrBits and exception maps (absent for targets not built with numfuzz-cc).
#[derive(Clone, Copy, Debug)]
pub struct TargetMaps {
    pub edges: *mut u8,
    pub edges_len: usize,
    pub errbits: *mut u8,
    pub exceptions: *mut u8,
    /// Slots in each numfuzz map (0: none).
    pub slots: usize,
    /// Comparison distance map (two bytes per comparison; 0 bytes: none).
    pub cmp_distances: *mut u8,
    pub cmp_slots: usize,
    /// Comparison operand log and the mode word (absent for targets without comparisons).
    pub cmp_trace: Option<CmpTrace>,
    /// The region header's per-run flags (null: no numfuzz region).
    pub run_flags: *mut u32,
    /// The region header's probe words (absent without a numfuzz region).
    pub probe: Option<ProbeWords>,
    /// The region header's fast-run bit (absent without a numfuzz region).
    pub run_mode: Option<RunModeWord>,
}

/// A map observer over `len` bytes at `ptr`, or an empty owned one when there is no map.
///
/// # Safety
/// A non-empty map must stay valid for the whole campaign.
unsafe fn byte_map(name: &'static str, ptr: *mut u8, len: usize) -> ByteMapObserver {
    if len == 0 || ptr.is_null() {
        StdMapObserver::owned(name, Vec::new())
    } else {
        // SAFETY: the caller guarantees validity.
        unsafe { StdMapObserver::from_mut_ptr(name, ptr, len) }
    }
}

impl TargetMaps {
    /// The observers over these maps, and the handles to find each of them.
    ///
    /// # Safety
    /// The pointers must stay valid for the whole campaign.
    pub unsafe fn observers(&self) -> (Observers, ObserverHandles) {
        // SAFETY (all four maps): the caller guarantees validity.
        let edges = unsafe { byte_map("edges", self.edges, self.edges_len) };
        let mut errbits = unsafe { byte_map(ERRBITS_MAP, self.errbits, self.slots) };
        let exceptions = unsafe { byte_map("exceptions", self.exceptions, self.slots) };
        let mut cmp_distances = unsafe { byte_map(CMP_MAP, self.cmp_distances, self.cmp_slots) };
        // Reset before every run to "not measured"; the run lowers what it measures.
        *errbits.initial_mut() = numfuzz_abi::errbits::NOT_MEASURED;
        *cmp_distances.initial_mut() = numfuzz_abi::errbits::NOT_MEASURED;
        let edges = HitcountsMapObserver::new(edges).track_indices();
        let time = TimeObserver::new("time");
        // SAFETY: the caller guarantees validity; the target only writes it during a run.
        let run_flags = unsafe { RunFlagsObserver::new(self.run_flags) };
        let handles = ObserverHandles {
            edges: edges.handle(),
            errbits: errbits.handle(),
            exceptions: exceptions.handle(),
            cmp_distances: cmp_distances.handle(),
            time: time.handle(),
            run_flags: run_flags.handle(),
        };
        (
            tuple_list!(edges, errbits, exceptions, cmp_distances, time, run_flags),
            handles,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use libafl::observers::MapObserver;
    use libafl_bolts::tuples::MatchNameRef;

    #[test]
    fn every_handle_finds_its_own_map() {
        let mut edges = vec![0u8; 8];
        let mut errbits = vec![0u8; 3];
        let mut exceptions = vec![0u8; 3];
        let mut cmp = vec![0u8; 4];
        let mut flags = 0u32;
        let maps = TargetMaps {
            edges: edges.as_mut_ptr(),
            edges_len: edges.len(),
            errbits: errbits.as_mut_ptr(),
            exceptions: exceptions.as_mut_ptr(),
            slots: 3,
            cmp_distances: cmp.as_mut_ptr(),
            cmp_slots: cmp.len(),
            cmp_trace: None,
            run_flags: &mut flags,
            probe: None,
            run_mode: None,
        };
        // SAFETY: the vectors outlive the observers.
        let (observers, h) = unsafe { maps.observers() };
        assert_eq!(observers.get(&h.edges).unwrap().as_ref().len(), 8);
        assert_eq!(observers.get(&h.errbits).unwrap().len(), 3);
        assert_eq!(observers.get(&h.cmp_distances).unwrap().len(), 4);
        // Same type, different maps: the handle, not the type, tells them apart.
        exceptions[1] = 1;
        assert_eq!(observers.get(&h.exceptions).unwrap().get(1), 1);
        assert_eq!(observers.get(&h.errbits).unwrap().get(1), 0);
        // Distance maps start every run at "not measured".
        assert_eq!(
            observers.get(&h.errbits).unwrap().initial(),
            numfuzz_abi::errbits::NOT_MEASURED
        );
        assert!(observers.get(&h.time).is_some() && observers.get(&h.run_flags).is_some());
    }

    #[test]
    fn a_target_without_numfuzz_maps_gets_empty_ones() {
        let mut edges = vec![0u8; 8];
        let maps = TargetMaps {
            edges: edges.as_mut_ptr(),
            edges_len: edges.len(),
            errbits: std::ptr::null_mut(),
            exceptions: std::ptr::null_mut(),
            slots: 0,
            cmp_distances: std::ptr::null_mut(),
            cmp_slots: 0,
            cmp_trace: None,
            run_flags: std::ptr::null_mut(),
            probe: None,
            run_mode: None,
        };
        // SAFETY: the edge vector outlives the observers; the others are not dereferenced.
        let (observers, h) = unsafe { maps.observers() };
        assert_eq!(observers.get(&h.errbits).unwrap().len(), 0);
        assert_eq!(observers.get(&h.cmp_distances).unwrap().len(), 0);
    }
}
