//! The observers over a target's maps, and typed handles to find each one again.

use crate::i2s::CmpTrace;
use crate::local_search::ProbeWords;
pub use crate::maps::{ByteMapObserver, CMP_MAP, ERRBITS_MAP};
use crate::run_flags::RunFlagsObserver;
use crate::run_mode::RunModeWord;
use libafl::observers::{CanTrack, HitcountsMapObserver, StdMapObserver, TimeObserver};
use libafl_bolts::tuples::{tuple_list, Handle, Handled};
use numfuzz_abi::region_view::{Area, HeaderWord, RegionView};

pub use crate::client_types::{EdgesObserver, Hitcounts, Observers};

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

/// The target's maps: edges (sancov or AFL++ shared memory) and numfuzz's region (absent for
/// targets not built with numfuzz-cc), from which the ErrBits, exception and comparison maps,
/// the operand log and the header's words are taken (numfuzz-abi's `RegionView`).
#[derive(Clone, Copy, Debug)]
pub struct TargetMaps {
    edges: *mut u8,
    edges_len: usize,
    region: Option<RegionView>,
    /// Slots of the region's (site, kind) maps in use, and bytes of its distance map in use.
    slots: usize,
    cmp_slots: usize,
}

impl TargetMaps {
    /// The maps of one campaign. The region's maps are observed up to `slots` and `cmp_slots`
    /// (what the target has; at most the region's capacities).
    ///
    /// # Safety
    /// `edges` must point to `edges_len` bytes valid for the whole campaign.
    pub unsafe fn new(
        edges: *mut u8,
        edges_len: usize,
        region: Option<RegionView>,
        slots: usize,
        cmp_slots: usize,
    ) -> TargetMaps {
        let (slots, cmp_slots) = match region {
            Some(r) => (slots.min(r.errbits().len), cmp_slots.min(r.cmp_distances().len)),
            None => (0, 0),
        };
        TargetMaps {
            edges,
            edges_len,
            region,
            slots,
            cmp_slots,
        }
    }

    pub fn edges_len(&self) -> usize {
        self.edges_len
    }

    /// The comparison log and mode word (absent for targets without comparisons).
    pub fn cmp_trace(&self) -> Option<CmpTrace> {
        self.region.filter(|_| self.cmp_slots > 0).and_then(CmpTrace::new)
    }

    /// The header's probe words (absent without a numfuzz region).
    pub fn probe(&self) -> Option<ProbeWords> {
        self.region.map(ProbeWords::new)
    }

    /// The header's fast-run bit (absent without a numfuzz region).
    pub fn run_mode(&self) -> Option<RunModeWord> {
        self.region.map(RunModeWord::new)
    }
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
    /// The maps must stay valid for the whole campaign.
    pub unsafe fn observers(&self) -> (Observers, ObserverHandles) {
        let area = |f: fn(&RegionView) -> Area| self.region.as_ref().map_or(std::ptr::null_mut(), |r| f(r).ptr);
        // SAFETY (all four maps): the edges by `new`'s contract, the others areas of the
        // region's view, at most as long as they are.
        let edges = unsafe { byte_map(crate::maps::EDGES_MAP, self.edges, self.edges_len) };
        let mut errbits = unsafe { byte_map(ERRBITS_MAP, area(RegionView::errbits), self.slots) };
        let exceptions = unsafe { byte_map("exceptions", area(RegionView::exceptions), self.slots) };
        let mut cmp_distances = unsafe { byte_map(CMP_MAP, area(RegionView::cmp_distances), self.cmp_slots) };
        // Reset before every run to "not measured"; the run lowers what it measures.
        *errbits.initial_mut() = numfuzz_abi::errbits::NOT_MEASURED;
        *cmp_distances.initial_mut() = numfuzz_abi::errbits::NOT_MEASURED;
        let edges = HitcountsMapObserver::new(edges).track_indices();
        let time = TimeObserver::new("time");
        let flags_word = self
            .region
            .map_or(std::ptr::null_mut(), |r| r.word(HeaderWord::RunFlags).as_ptr());
        // SAFETY: a word of the region's header, valid for the campaign; the target only
        // writes it during a run.
        let run_flags = unsafe { RunFlagsObserver::new(flags_word) };
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

    /// A region laid out for `slots` slots and `cmp_slots` distance bytes, in a test's buffer.
    fn region(slots: u32, cmp_slots: u32, mem: &mut Vec<u64>) -> RegionView {
        let header = numfuzz_abi::shm::ShmHeader::layout(slots, cmp_slots, 0);
        *mem = vec![0u64; header.region_size().div_ceil(8)];
        // SAFETY: the buffer holds the region, 8-aligned.
        unsafe { mem.as_mut_ptr().cast::<numfuzz_abi::shm::ShmHeader>().write(header) };
        // SAFETY: the buffer outlives the view (the test's).
        unsafe { RegionView::new(mem.as_mut_ptr().cast(), mem.len() * 8) }.unwrap()
    }

    #[test]
    fn every_handle_finds_its_own_map() {
        let mut edges = vec![0u8; 8];
        let mut mem = Vec::new();
        let view = region(3, 4, &mut mem);
        // SAFETY: the vectors outlive the maps and observers.
        let maps = unsafe { TargetMaps::new(edges.as_mut_ptr(), edges.len(), Some(view), 3, 100) };
        // SAFETY: as above.
        let (observers, h) = unsafe { maps.observers() };
        assert_eq!(observers.get(&h.edges).unwrap().as_ref().len(), 8);
        assert_eq!(observers.get(&h.errbits).unwrap().len(), 3);
        assert_eq!(
            observers.get(&h.cmp_distances).unwrap().len(),
            4,
            "at most the region's"
        );
        // Same type, different maps: the handle, not the type, tells them apart.
        // SAFETY: slot 1 of the region's exception map.
        unsafe { view.exceptions().ptr.add(1).write(1) };
        assert_eq!(observers.get(&h.exceptions).unwrap().get(1), 1);
        assert_eq!(observers.get(&h.errbits).unwrap().get(1), 0);
        // Distance maps start every run at "not measured".
        assert_eq!(
            observers.get(&h.errbits).unwrap().initial(),
            numfuzz_abi::errbits::NOT_MEASURED
        );
        assert!(observers.get(&h.time).is_some() && observers.get(&h.run_flags).is_some());
        assert!(maps.probe().is_some() && maps.run_mode().is_some() && maps.cmp_trace().is_none());
    }

    #[test]
    fn a_target_without_numfuzz_maps_gets_empty_ones() {
        let mut edges = vec![0u8; 8];
        // SAFETY: the edge vector outlives the maps and observers.
        let maps = unsafe { TargetMaps::new(edges.as_mut_ptr(), edges.len(), None, 10, 10) };
        // SAFETY: as above.
        let (observers, h) = unsafe { maps.observers() };
        assert_eq!(observers.get(&h.errbits).unwrap().len(), 0);
        assert_eq!(observers.get(&h.cmp_distances).unwrap().len(), 0);
        assert!(maps.probe().is_none() && maps.run_mode().is_none());
    }
}
