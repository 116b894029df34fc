//! One validated view of a numfuzz shared-memory region ([`crate::shm`]), for both sides.
//!
//! The header's offsets are checked against the region's length once, when the view is made;
//! every area is then a pointer and a length inside the region, and every header word an
//! atomic. The fuzzer (which creates the region) and the runtime (which attaches to it) take
//! their maps, the operand log and the words they exchange between runs from here, so the
//! layout is read in one place.

use crate::cmp::{cmp_log_bytes, CmpLogHeader};
use crate::shm::{ShmHeader, HEADER_SIZE};
use std::sync::atomic::{AtomicU32, Ordering};

/// A region whose header describes memory it does not have, or that is not numfuzz's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegionViewError {
    #[error("the region is {0} bytes, less than its header")]
    TooSmall(usize),
    #[error(
        "the region's header is not numfuzz's of ABI {} (another numfuzz version, or not a numfuzz region)",
        crate::ABI_VERSION
    )]
    NotNumfuzz,
    #[error("the region's header describes {needed} bytes but the region has {len}")]
    Truncated { needed: usize, len: usize },
    #[error("the region is not 8-aligned")]
    Misaligned,
}

/// Bytes of the region: a pointer to the first and their count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Area {
    pub ptr: *mut u8,
    pub len: usize,
}

impl Area {
    const EMPTY: Area = Area {
        ptr: std::ptr::null_mut(),
        len: 0,
    };

    pub fn is_empty(&self) -> bool {
        self.len == 0 || self.ptr.is_null()
    }
}

/// A header word the two sides exchange between runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderWord {
    /// Set by the target during a run (`shm::RUN_*`).
    RunFlags,
    /// Set by the fuzzer before a run: comparison recording and `shm::MODE_FAST`.
    CmpMode,
    /// Set by the fuzzer before a run: the probed slot ([`crate::probe::Probe`] encoded).
    Probe,
}

/// A region whose header was found valid and whose areas all lie inside it.
///
/// Invariant (established by the `unsafe` [`RegionView::new`]): `base` points to `len`
/// bytes, 8-aligned, readable and writable for as long as the view (and its copies) are used;
/// the header at `base` is numfuzz's and its areas lie within `len`. The header's layout
/// fields are not changed afterwards (only its words are).
#[derive(Clone, Copy, Debug)]
pub struct RegionView {
    base: *mut u8,
    len: usize,
}

// SAFETY: the view only hands out atomics and raw areas; what is shared is the region, which
// both processes and every thread already share.
unsafe impl Send for RegionView {}
unsafe impl Sync for RegionView {}

impl RegionView {
    /// Checks the region at `base` (`len` bytes) once.
    ///
    /// # Safety
    /// `base` must point to `len` readable and writable bytes that stay valid for as long as
    /// the view and its copies are used.
    pub unsafe fn new(base: *mut u8, len: usize) -> Result<RegionView, RegionViewError> {
        if len < HEADER_SIZE {
            return Err(RegionViewError::TooSmall(len));
        }
        if base.align_offset(8) != 0 {
            return Err(RegionViewError::Misaligned);
        }
        // SAFETY: at least a header's bytes (caller, checked above).
        let header = unsafe { base.cast::<ShmHeader>().read() };
        if !header.is_valid() {
            return Err(RegionViewError::NotNumfuzz);
        }
        let needed = header.region_size();
        if needed > len || (header.cmp_log_capacity != 0 && header.cmp_log_offset % 8 != 0) {
            return Err(RegionViewError::Truncated { needed, len });
        }
        Ok(RegionView { base, len })
    }

    /// A copy of the header as it is now.
    pub fn header(&self) -> ShmHeader {
        // SAFETY: by the invariant, a valid header at `base`.
        unsafe { self.base.cast::<ShmHeader>().read_volatile() }
    }

    /// The start of the region (its header).
    pub fn base(&self) -> *mut u8 {
        self.base
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn area(&self, offset: u32, len: usize) -> Area {
        if offset == 0 || len == 0 {
            return Area::EMPTY;
        }
        // SAFETY: by the invariant the header's areas lie inside the region.
        Area {
            ptr: unsafe { self.base.add(offset as usize) },
            len,
        }
    }

    /// The ErrBits map: a byte per (site, kind) slot.
    pub fn errbits(&self) -> Area {
        let h = self.header();
        self.area(h.errbits_offset, h.slot_capacity as usize)
    }

    /// The exception map: a byte per (site, kind) slot.
    pub fn exceptions(&self) -> Area {
        let h = self.header();
        self.area(h.exceptions_offset, h.slot_capacity as usize)
    }

    /// The comparison distance map (empty without one).
    pub fn cmp_distances(&self) -> Area {
        let h = self.header();
        self.area(h.cmp_offset, h.cmp_slots as usize)
    }

    /// The operand log (a [`CmpLogHeader`] and its entries) and its capacity in entries;
    /// `None` without one.
    pub fn cmp_log(&self) -> Option<(Area, usize)> {
        let h = self.header();
        let capacity = h.cmp_log_capacity;
        (capacity != 0 && h.cmp_log_offset != 0)
            .then(|| (self.area(h.cmp_log_offset, cmp_log_bytes(capacity)), capacity as usize))
    }

    /// The operand log's entry counter (reset by the target at the start of a tracing run).
    pub fn cmp_log_count(&self) -> Option<&AtomicU32> {
        let (log, _) = self.cmp_log()?;
        // SAFETY: the log lies inside the region and is 8-aligned (checked at `new`); its
        // header's first field is a u32.
        Some(unsafe { AtomicU32::from_ptr(log.ptr.cast::<CmpLogHeader>().cast::<u32>()) })
    }

    /// One of the header's words, as an atomic both sides may touch.
    pub fn word(&self, which: HeaderWord) -> &AtomicU32 {
        let header = self.base.cast::<ShmHeader>();
        // SAFETY: by the invariant, a valid, 8-aligned header; each field is an aligned u32.
        unsafe {
            AtomicU32::from_ptr(match which {
                HeaderWord::RunFlags => &raw mut (*header).run_flags,
                HeaderWord::CmpMode => &raw mut (*header).cmp_mode,
                HeaderWord::Probe => &raw mut (*header).probe,
            })
        }
    }

    fn probe_gap_words(&self) -> [&AtomicU32; 2] {
        let header = self.base.cast::<ShmHeader>();
        // SAFETY: as for `word`.
        unsafe {
            [
                AtomicU32::from_ptr(&raw mut (*header).probe_gap[0]),
                AtomicU32::from_ptr(&raw mut (*header).probe_gap[1]),
            ]
        }
    }

    /// The probed slot's gap word ([`crate::probe::encode_gap`]; low word first in the header).
    pub fn probe_gap(&self) -> u64 {
        let [lo, hi] = self.probe_gap_words();
        lo.load(Ordering::Acquire) as u64 | (hi.load(Ordering::Acquire) as u64) << 32
    }

    /// Sets the probed slot's gap word. (Two stores: threads racing here may lose a minimum,
    /// as with the maps.)
    pub fn set_probe_gap(&self, word: u64) {
        let [lo, hi] = self.probe_gap_words();
        lo.store(word as u32, Ordering::Release);
        hi.store((word >> 32) as u32, Ordering::Release);
    }

    /// Writes the target's counts into the header (at attach).
    pub fn set_counts(&self, sites: u32, cmps: u32) {
        let header = self.base.cast::<ShmHeader>();
        // SAFETY: by the invariant, a valid header the target may write.
        unsafe {
            (&raw mut (*header).site_count).write_volatile(sites);
            (&raw mut (*header).cmp_count).write_volatile(cmps);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shm::RUN_HANDLED;

    fn region(header: ShmHeader) -> Vec<u64> {
        let mut mem = vec![0u64; header.region_size().div_ceil(8)];
        // SAFETY: the buffer holds the region, 8-aligned.
        unsafe { mem.as_mut_ptr().cast::<ShmHeader>().write(header) };
        mem
    }

    #[test]
    fn the_areas_are_where_the_header_says_and_words_are_shared() {
        let header = ShmHeader::layout(100, 20, 8);
        let mut mem = region(header);
        let bytes = mem.len() * 8;
        // SAFETY: the test's own buffer, alive for the test.
        let view = unsafe { RegionView::new(mem.as_mut_ptr().cast(), bytes) }.unwrap();
        let base = view.base() as usize;
        assert_eq!(view.errbits().ptr as usize - base, header.errbits_offset as usize);
        assert_eq!(view.exceptions().len, 100);
        assert_eq!(view.cmp_distances().len, 20);
        let (log, capacity) = view.cmp_log().unwrap();
        assert_eq!((log.ptr as usize - base, capacity), (header.cmp_log_offset as usize, 8));
        view.word(HeaderWord::RunFlags).fetch_or(RUN_HANDLED, Ordering::Relaxed);
        assert_eq!(view.header().run_flags, RUN_HANDLED);
        view.set_probe_gap(0x1234_5678_9abc_def0);
        assert_eq!(view.header().probe_gap, [0x9abc_def0, 0x1234_5678]);
        assert_eq!(view.probe_gap(), 0x1234_5678_9abc_def0);
        view.set_counts(7, 3);
        assert_eq!((view.header().site_count, view.header().cmp_count), (7, 3));
    }

    #[test]
    fn a_region_without_comparisons_has_empty_comparison_areas() {
        let mut mem = region(ShmHeader::for_slots(16));
        // SAFETY: as above.
        let view = unsafe { RegionView::new(mem.as_mut_ptr().cast(), mem.len() * 8) }.unwrap();
        assert!(view.cmp_distances().is_empty());
        assert!(view.cmp_log().is_none() && view.cmp_log_count().is_none());
    }

    #[test]
    fn a_short_or_foreign_region_is_refused_once_at_the_start() {
        let header = ShmHeader::layout(100, 20, 8);
        let mut mem = region(header);
        let ptr = mem.as_mut_ptr().cast::<u8>();
        // SAFETY: a prefix of the test's buffer.
        let short = unsafe { RegionView::new(ptr, header.region_size() - 1) }.unwrap_err();
        assert!(matches!(short, RegionViewError::Truncated { .. }), "{short}");
        // SAFETY: as above.
        assert_eq!(
            unsafe { RegionView::new(ptr, 10) }.unwrap_err(),
            RegionViewError::TooSmall(10)
        );
        mem[0] = 0;
        // SAFETY: as above.
        assert_eq!(
            unsafe { RegionView::new(ptr, header.region_size()) }.unwrap_err(),
            RegionViewError::NotNumfuzz
        );
    }
}
