//! The numfuzz map region: header, ErrBits map, exception map.
//!
//! Under `numfuzz` it is the shared-memory region named by `NUMFUZZ_SHM_ID` (forkserver) or
//! memory the in-process engine observes; standalone it is local memory that the replay
//! driver resets per input (its exception map also de-duplicates reports within an input).

use crate::sysv_shm;
use numfuzz_abi::cmp::{CmpLogEntry, CmpLogHeader, CMP_LOG, CMP_LOG_CAPACITY, CMP_LOG_PER_SITE};
use numfuzz_abi::env;
use numfuzz_abi::errbits::NOT_MEASURED;
use numfuzz_abi::kind::{EXC_ORIGIN, EXC_RAISED, KINDS_PER_SITE};
use numfuzz_abi::shm::{ShmHeader, HEADER_SIZE, RUN_HANDLED, RUN_RESULTS, RUN_RESULT_NONFINITE, RUN_TRUNCATED};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicPtr, Ordering};

/// What one check added to the exception map (bit per kind).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fresh {
    /// Raised for the first time in this run.
    pub raised: u8,
    /// An origin for the first time in this run.
    pub origin: u8,
}

impl Fresh {
    /// Kinds worth a report line: new, or newly an origin.
    pub fn any(self) -> u8 {
        self.raised | self.origin
    }
}

pub struct Region {
    header: *mut ShmHeader,
    errbits: *mut u8,
    exceptions: *mut u8,
    slots: usize,
    /// Comparison distance map (two bytes per comparison), if the region has one.
    cmp_distances: *mut u8,
    cmp_slots: usize,
    /// Operand log (header + entries), if the region has one.
    cmp_log: *mut CmpLogHeader,
    cmp_log_capacity: usize,
    /// Entries logged per comparison in this run (to keep a loop from filling the log).
    cmp_logged: Box<[UnsafeCell<u8>]>,
}

// SAFETY: the region is plain bytes shared with the fuzzer; races between program threads
// only lose ErrBits minima, never memory safety (all indices are bounds-checked).
unsafe impl Send for Region {}
unsafe impl Sync for Region {}

static CURRENT: AtomicPtr<Region> = AtomicPtr::new(std::ptr::null_mut());

/// The installed region's ErrBits map and its slot count, read by the checks the pass inlines
/// (numfuzz-abi `c_header::symbols::ERRBITS_MAP` / `ERRBITS_SLOTS`).
#[unsafe(no_mangle)]
pub static mut __numfuzz_errbits_map: *mut u8 = std::ptr::null_mut();
#[unsafe(no_mangle)]
pub static mut __numfuzz_errbits_slots: u64 = 0;

impl Region {
    /// A region in process memory with room for `sites` sites and `cmps` comparisons.
    pub fn local(sites: u32, cmps: u32) -> &'static Region {
        // Headroom for records registered late (dlopen).
        let slots = (sites as usize * KINDS_PER_SITE as usize).max(1) * 2 + 1024;
        let cmp_slots = (cmps as usize * 2).max(1) * 2 + 1024;
        let header = ShmHeader::layout(slots as u32, cmp_slots as u32, CMP_LOG_CAPACITY);
        let mem: &'static mut [u64] = Box::leak(vec![0u64; header.region_size().div_ceil(8)].into_boxed_slice());
        // SAFETY: the allocation holds the whole region and is 8-aligned.
        unsafe { Region::at(mem.as_mut_ptr().cast(), header, sites, cmps) }
    }

    /// Adopts a region whose header is already filled in (shared memory from the fuzzer).
    ///
    /// # Safety
    /// `base` must point to `header.region_size()` writable bytes.
    pub unsafe fn adopt(base: *mut u8, sites: u32, cmps: u32) -> Option<&'static Region> {
        // SAFETY: caller guarantees the header is readable.
        let header = unsafe { base.cast::<ShmHeader>().read_unaligned() };
        if !header.is_valid() {
            return None;
        }
        // SAFETY: same memory, header validated.
        Some(unsafe { Region::at_existing(base, header, sites, cmps) })
    }

    /// The fuzzer's region named by `NUMFUZZ_SHM_ID` (None if unset), with room for `sites`
    /// sites. Errors say what is wrong with it.
    pub fn attach_from_env(sites: u32, cmps: u32) -> Result<Option<&'static Region>, String> {
        if std::env::var_os(env::SHM_ID).is_none() {
            return Ok(None);
        }
        let seg = sysv_shm::attach(env::SHM_ID, false)?;
        let mismatch = || {
            format!(
                "{} does not name a numfuzz region of this version (ABI {}); run the target with the numfuzz that built it",
                env::SHM_ID,
                numfuzz_abi::ABI_VERSION
            )
        };
        if seg.len < HEADER_SIZE {
            return Err(mismatch());
        }
        // SAFETY: the segment holds at least a header.
        let header = unsafe { seg.ptr.cast::<ShmHeader>().read_unaligned() };
        if !header.is_valid() {
            return Err(mismatch());
        }
        if header.region_size() > seg.len {
            return Err(format!(
                "{}: the region header describes {} bytes but the segment has {}",
                env::SHM_ID,
                header.region_size(),
                seg.len
            ));
        }
        // SAFETY: the segment holds the whole region its valid header describes.
        unsafe { Region::adopt(seg.ptr, sites, cmps) }
            .map(Some)
            .ok_or_else(mismatch)
    }

    unsafe fn at(base: *mut u8, header: ShmHeader, sites: u32, cmps: u32) -> &'static Region {
        // SAFETY: base holds the region (caller).
        unsafe { base.cast::<ShmHeader>().write_unaligned(header) };
        // SAFETY: as above.
        unsafe { Region::at_existing(base, header, sites, cmps) }
    }

    unsafe fn at_existing(base: *mut u8, header: ShmHeader, sites: u32, cmps: u32) -> &'static Region {
        let slots = header.slot_capacity as usize;
        let offset = |off: u32| {
            // SAFETY: offsets come from a valid header describing this memory.
            unsafe { base.add(off as usize) }
        };
        let has_log = header.cmp_log_offset != 0 && header.cmp_log_capacity != 0;
        let region = Box::leak(Box::new(Region {
            header: base.cast(),
            errbits: offset(header.errbits_offset),
            exceptions: offset(header.exceptions_offset),
            slots,
            cmp_distances: if header.cmp_offset == 0 {
                std::ptr::null_mut()
            } else {
                offset(header.cmp_offset)
            },
            cmp_slots: if header.cmp_offset == 0 {
                0
            } else {
                header.cmp_slots as usize
            },
            cmp_log: if has_log {
                offset(header.cmp_log_offset).cast()
            } else {
                std::ptr::null_mut()
            },
            cmp_log_capacity: if has_log { header.cmp_log_capacity as usize } else { 0 },
            cmp_logged: (0..cmps).map(|_| UnsafeCell::new(0)).collect(),
        }));
        // SAFETY: header is at base.
        unsafe {
            (*region.header).site_count = sites;
            (*region.header).cmp_count = cmps;
            if sites as usize * KINDS_PER_SITE as usize > slots {
                (*region.header).run_flags |= RUN_TRUNCATED;
            }
        }
        region
    }

    /// Start of one run: take up what the fuzzer asks to record for comparisons, and empty the
    /// operand log when it is to be filled.
    pub fn begin_run(&self) {
        // SAFETY: header is valid.
        let mode = unsafe { (*self.header).cmp_mode } as u8;
        crate::cmp::set_mode(mode);
        if mode & CMP_LOG != 0 && !self.cmp_log.is_null() {
            // SAFETY: the log header is inside the region.
            unsafe { (*self.cmp_log).count = 0 };
            for c in self.cmp_logged.iter() {
                // SAFETY: runs are single-threaded with respect to this bookkeeping.
                unsafe { *c.get() = 0 };
            }
        }
    }

    /// Lowers the distances of comparison `cmp` to its two outcomes.
    #[inline]
    pub fn record_cmp(&self, cmp: u32, distances: [u8; 2]) {
        let base = cmp as usize * 2;
        if base + 2 > self.cmp_slots {
            return;
        }
        // SAFETY: base + 2 <= cmp_slots bytes of the distance map.
        unsafe {
            for (k, &d) in distances.iter().enumerate() {
                let slot = self.cmp_distances.add(base + k);
                if d < *slot {
                    *slot = d;
                }
            }
        }
    }

    /// Appends one comparison's operands to the log (a few per comparison and run).
    pub fn log_cmp(&self, entry: &CmpLogEntry) {
        let Some(logged) = self.cmp_logged.get(entry.cmp as usize) else {
            return;
        };
        if self.cmp_log.is_null() {
            return;
        }
        // SAFETY: the counter belongs to this region; the log lies inside it with room for
        // `cmp_log_capacity` entries after its header.
        unsafe {
            if *logged.get() as u32 >= CMP_LOG_PER_SITE {
                return;
            }
            *logged.get() += 1;
            let header = &mut *self.cmp_log;
            let index = header.count as usize;
            header.count = header.count.saturating_add(1);
            if index < self.cmp_log_capacity {
                let entries = self.cmp_log.add(1).cast::<CmpLogEntry>();
                entries.add(index).write_unaligned(*entry);
            }
        }
    }

    /// The comparison areas, for the in-process engine: distances (pointer, bytes), the log
    /// (pointer to its header, entries), and the header's mode word.
    pub fn cmp_areas(&self) -> (*mut u8, usize, *mut u8, usize, *mut u32) {
        // SAFETY: header is valid.
        let mode = unsafe { &raw mut (*self.header).cmp_mode };
        (
            self.cmp_distances,
            self.cmp_slots,
            self.cmp_log.cast(),
            self.cmp_log_capacity,
            mode,
        )
    }

    /// Makes this the region checks record into.
    pub fn install(&'static self) {
        CURRENT.store(self as *const Region as *mut Region, Ordering::Release);
        // SAFETY: written at start-up, before instrumented code reads it (the pass inlines
        // the ErrBits update of normal arithmetic results against this map).
        unsafe {
            __numfuzz_errbits_map = self.errbits;
            __numfuzz_errbits_slots = self.slots as u64;
        }
    }

    pub fn current() -> Option<&'static Region> {
        let p = CURRENT.load(Ordering::Acquire);
        // SAFETY: only leaked (static) regions are installed.
        (!p.is_null()).then(|| unsafe { &*p })
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Records one check: ErrBits minima for the site's four slots and the raised kinds,
    /// marking them as origins when `origin` (every floating-point operand was finite).
    /// Returns the kinds raised for the first time since the last reset, and the kinds whose
    /// first origin this is (bit per kind).
    #[inline]
    pub fn record(&self, site: u32, errbits: &[u8; 4], raised: u8, origin: bool) -> Fresh {
        let base = site as usize * KINDS_PER_SITE as usize;
        let mut fresh = Fresh::default();
        if base + 4 > self.slots {
            return fresh;
        }
        let mark = EXC_RAISED | if origin { EXC_ORIGIN } else { 0 };
        // SAFETY: base + 4 <= slots, both maps hold `slots` bytes.
        unsafe {
            for (k, &e) in errbits.iter().enumerate() {
                let slot = self.errbits.add(base + k);
                if e < *slot {
                    *slot = e;
                }
                if raised & (1 << k) != 0 {
                    let x = self.exceptions.add(base + k);
                    let old = *x;
                    if old == 0 {
                        fresh.raised |= 1 << k;
                    }
                    if origin && old & EXC_ORIGIN == 0 {
                        fresh.origin |= 1 << k;
                    }
                    *x = old | mark;
                }
            }
        }
        fresh
    }

    /// A declared result: `primary` ones that are Inf or NaN mark the run.
    pub fn note_result(&self, primary: bool, non_finite: bool) {
        let flags = RUN_RESULTS | if primary && non_finite { RUN_RESULT_NONFINITE } else { 0 };
        // SAFETY: header is valid.
        unsafe { (*self.header).run_flags |= flags };
    }

    /// Clears the maps and the run flags (what the fuzzer does before each run), then starts
    /// the run.
    pub fn reset(&self) {
        // SAFETY: maps hold `slots` / `cmp_slots` bytes; the header is valid.
        unsafe {
            std::ptr::write_bytes(self.errbits, NOT_MEASURED, self.slots);
            std::ptr::write_bytes(self.exceptions, 0, self.slots);
            if !self.cmp_distances.is_null() {
                std::ptr::write_bytes(self.cmp_distances, NOT_MEASURED, self.cmp_slots);
            }
            (*self.header).run_flags &= RUN_TRUNCATED;
        }
        self.begin_run();
    }

    /// Clears the per-run flags only (the maps are reset by whoever observes them), then
    /// starts the run.
    pub fn clear_run_flags(&self) {
        // SAFETY: header is valid.
        unsafe { (*self.header).run_flags &= RUN_TRUNCATED };
        self.begin_run();
    }

    pub fn set_handled(&self) {
        // SAFETY: header is valid.
        unsafe { (*self.header).run_flags |= RUN_HANDLED };
    }

    pub fn handled(&self) -> bool {
        // SAFETY: header is valid.
        unsafe { (*self.header).run_flags & RUN_HANDLED != 0 }
    }

    /// The header's per-run flags word (for the in-process engine's observer).
    pub fn run_flags_ptr(&self) -> *mut u32 {
        // SAFETY: the header is valid; only its address is taken.
        unsafe { &raw mut (*self.header).run_flags }
    }

    /// The exception map (for the in-process engine's observer).
    pub fn exceptions_ptr(&self) -> *mut u8 {
        self.exceptions
    }

    pub fn errbits_ptr(&self) -> *mut u8 {
        self.errbits
    }

    /// Distinct (site, kind) pairs raised since the last reset.
    pub fn raised_count(&self) -> u32 {
        // SAFETY: map holds `slots` bytes.
        unsafe { std::slice::from_raw_parts(self.exceptions, self.slots) }
            .iter()
            .filter(|&&x| x != 0)
            .count() as u32
    }
}
