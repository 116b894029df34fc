//! The numfuzz map region: header, ErrBits map, exception map.
//!
//! Under `numfuzz` it is the shared-memory region named by `NUMFUZZ_SHM_ID` (forkserver) or
//! memory the in-process engine observes; standalone it is local memory that the replay
//! driver resets per input (its exception map also de-duplicates reports within an input).

use crate::sysv_shm;
use numfuzz_abi::cmp::{CmpLogEntry, CmpLogHeader, CMP_DISTANCES, CMP_LOG, CMP_LOG_CAPACITY, CMP_LOG_PER_SITE};
use numfuzz_abi::env;
use numfuzz_abi::errbits::NOT_MEASURED;
use numfuzz_abi::kind::{ExceptionKind, EXC_ORIGIN, EXC_RAISED, EXC_UNPRECEDED, KINDS_PER_SITE, PRECEDING_KINDS};
use numfuzz_abi::probe::{self, Probe};
use numfuzz_abi::region_view::{Area, HeaderWord, RegionView};
use numfuzz_abi::shm::{ShmHeader, MODE_FAST, RUN_HANDLED, RUN_RESULTS, RUN_RESULT_NONFINITE, RUN_TRUNCATED};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU8, Ordering};

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

/// The maps and header of one region. Every access that a run may make concurrently with
/// another thread of the program (or that the fuzzer's observer makes) is atomic: the maps are
/// `AtomicU8`s, the header's per-run words `AtomicU32`s. Updates are relaxed load-then-store,
/// not read-modify-write instructions, so two threads racing on one slot may lose a minimum
/// (never memory safety) and the hot path stays plain moves.
pub struct Region {
    /// The whole region, validated once (numfuzz-abi's one reading of the layout): its header
    /// words and areas come from it.
    view: RegionView,
    /// ErrBits minimum per (site, kind) slot.
    errbits: &'static [AtomicU8],
    /// Raised/origin bits per (site, kind) slot.
    exceptions: &'static [AtomicU8],
    /// Comparison distance map (two bytes per comparison); empty if the region has none.
    cmp_distances: &'static [AtomicU8],
    /// Operand log (header + entries), if the region has one.
    cmp_log: *mut CmpLogHeader,
    cmp_log_capacity: usize,
    /// Entries logged per comparison in this run (to keep a loop from filling the log).
    cmp_logged: Box<[AtomicU8]>,
    /// An Invalid, DivByZero or Overflow was recorded in this run: later origins are not
    /// [`EXC_UNPRECEDED`].
    preceded: AtomicBool,
}

// SAFETY: the pointers refer to leaked or process-long shared memory; every access through
// a shared reference is atomic (see the type's docs) except the log entries, each of which is
// written by the one caller that reserved its index with an atomic add.
unsafe impl Send for Region {}
unsafe impl Sync for Region {}

/// An area of the region as atomics; empty for an empty area.
///
/// # Safety
/// A non-empty area must stay valid for the rest of the process.
unsafe fn atomic_bytes(area: Area) -> &'static [AtomicU8] {
    let (ptr, len) = (area.ptr, area.len);
    if ptr.is_null() || len == 0 {
        return &[];
    }
    // SAFETY: caller; AtomicU8 has the size and alignment of u8.
    unsafe { std::slice::from_raw_parts(ptr.cast::<AtomicU8>(), len) }
}

/// Lowers `slot` to `value` if that is smaller (see [`Region`] on why not `fetch_min`).
#[inline(always)]
fn lower(slot: &AtomicU8, value: u8) {
    if value < slot.load(Ordering::Relaxed) {
        slot.store(value, Ordering::Relaxed);
    }
}

/// Sets every byte of `map` to `value`, at memset speed: byte by byte, the maps of a library
/// with thousands of sites took longer to reset than a short input took to run.
fn fill(map: &[AtomicU8], value: u8) {
    // SAFETY: `AtomicU8` has the layout of `u8` and its bytes may be written through a shared
    // reference; maps are reset between runs, when neither another thread nor the fuzzer's
    // process accesses them.
    unsafe { std::ptr::write_bytes(map.as_ptr().cast_mut().cast::<u8>(), value, map.len()) };
}

/// The bytes of `map` read as plain memory, for a scan the compiler vectorises.
///
/// # Safety
/// Only between runs, when nothing writes the map.
unsafe fn settled(map: &[AtomicU8]) -> &[u8] {
    // SAFETY: `AtomicU8` has the layout of `u8`; the caller guarantees no concurrent writes.
    unsafe { std::slice::from_raw_parts(map.as_ptr().cast::<u8>(), map.len()) }
}

static CURRENT: AtomicPtr<Region> = AtomicPtr::new(std::ptr::null_mut());

/// The installed region's ErrBits map and its slot count, read by the checks the pass inlines
/// (numfuzz-abi `c_header::symbols::ERRBITS_MAP` / `ERRBITS_SLOTS`).
#[unsafe(no_mangle)]
pub static mut __numfuzz_errbits_map: *mut u8 = std::ptr::null_mut();
#[unsafe(no_mangle)]
pub static mut __numfuzz_errbits_slots: u64 = 0;

/// What the fuzzer asked of one run through the region's header, for the modules that act on
/// it (`crate::run::begin` hands it to them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunSettings {
    /// Comparison hooks: distances, the operand log.
    pub cmp_mode: u8,
    /// The one slot whose exact gap is measured, if any.
    pub probe: Option<Probe>,
    /// A fast run (the FPU's flags watch it; a flag raised runs it again precisely).
    pub fast: bool,
}

impl Region {
    /// A region in process memory with room for `sites` sites and `cmps` comparisons.
    pub fn local(sites: u32, cmps: u32) -> &'static Region {
        // Headroom for records registered late (dlopen).
        let slots = (sites as usize * KINDS_PER_SITE as usize).max(1) * 2 + 1024;
        let cmp_slots = (cmps as usize * 2).max(1) * 2 + 1024;
        let mut header = ShmHeader::layout(slots as u32, cmp_slots as u32, CMP_LOG_CAPACITY);
        // Without a fuzzer nobody reads distances: runs are fast (replays, afl-fuzz).
        header.cmp_mode = MODE_FAST;
        let mem: &'static mut [u64] = Box::leak(vec![0u64; header.region_size().div_ceil(8)].into_boxed_slice());
        // SAFETY: the allocation is 8-aligned and holds at least a header.
        unsafe { mem.as_mut_ptr().cast::<ShmHeader>().write(header) };
        // SAFETY: leaked, so valid for the process; the header just written describes it.
        let view = unsafe { RegionView::new(mem.as_mut_ptr().cast(), mem.len() * 8) }
            .expect("a region laid out by ShmHeader::layout fits its own size");
        Region::on(view, sites, cmps)
    }

    /// The fuzzer's region named by `NUMFUZZ_SHM_ID` (None if unset), with room for `sites`
    /// sites. Errors say what is wrong with it.
    pub fn attach_from_env(sites: u32, cmps: u32) -> Result<Option<&'static Region>, String> {
        if std::env::var_os(env::SHM_ID).is_none() {
            return Ok(None);
        }
        let seg = sysv_shm::attach(env::SHM_ID, false)?;
        // SAFETY: the attached segment is `seg.len` bytes, page-aligned, for the process.
        let view = unsafe { RegionView::new(seg.ptr, seg.len) }.map_err(|e| {
            format!(
                "{}: {e}; run the target with the numfuzz that built it (ABI {})",
                env::SHM_ID,
                numfuzz_abi::ABI_VERSION
            )
        })?;
        Ok(Some(Region::on(view, sites, cmps)))
    }

    /// The region over `view`, which must stay valid for the rest of the process (leaked, or
    /// the fuzzer's segment); writes the target's counts into its header.
    fn on(view: RegionView, sites: u32, cmps: u32) -> &'static Region {
        let (cmp_log, cmp_log_capacity) = match view.cmp_log() {
            Some((log, capacity)) => (log.ptr.cast(), capacity),
            None => (std::ptr::null_mut(), 0),
        };
        // SAFETY (the three maps): areas of the view, valid for the process (see above).
        let region = Box::leak(Box::new(Region {
            view,
            errbits: unsafe { atomic_bytes(view.errbits()) },
            exceptions: unsafe { atomic_bytes(view.exceptions()) },
            cmp_distances: unsafe { atomic_bytes(view.cmp_distances()) },
            cmp_log,
            cmp_log_capacity,
            cmp_logged: (0..cmps).map(|_| AtomicU8::new(0)).collect(),
            preceded: AtomicBool::new(false),
        }));
        view.set_counts(sites, cmps);
        if sites as usize * KINDS_PER_SITE as usize > region.slots() {
            region.run_flags().fetch_or(RUN_TRUNCATED, Ordering::Relaxed);
        }
        region
    }

    /// The header's per-run flags word.
    fn run_flags(&self) -> &AtomicU32 {
        self.view.word(HeaderWord::RunFlags)
    }

    /// The header's comparison mode word (set by the fuzzer between runs).
    fn cmp_mode(&self) -> &AtomicU32 {
        self.view.word(HeaderWord::CmpMode)
    }

    /// Lowers the probed slot's gap of this run to `gap` if that is smaller. (Two words, so
    /// threads racing here may lose a minimum, as with the maps.)
    pub fn lower_probe_gap(&self, gap: u128) {
        let new = probe::encode_gap(gap);
        if new < self.view.probe_gap() {
            self.view.set_probe_gap(new);
        }
    }

    /// The operand log's entry counter, if the region has a log.
    fn cmp_log_count(&self) -> Option<&AtomicU32> {
        self.view.cmp_log_count()
    }

    /// Start of one run on the region's side (the probe's gap, the operand log when it is to be
    /// filled, the inlined ErrBits bound); what the fuzzer asked of the run.
    pub fn begin_run(&self) -> RunSettings {
        self.preceded.store(false, Ordering::Relaxed);
        let word = self.cmp_mode().load(Ordering::Acquire);
        let cmp_mode = word as u8;
        let probe = Probe::decode(self.view.word(HeaderWord::Probe).load(Ordering::Acquire));
        if probe.is_some() {
            self.view.set_probe_gap(probe::GAP_NOT_MEASURED);
        }
        // An ErrBits probe needs every check in the runtime, so the inlined ErrBits update of
        // normal arithmetic is switched off for the run: it falls back to the runtime when
        // the map "has no room".
        let inline_slots = match probe {
            Some(Probe::ErrBits(_)) => 0,
            _ => self.slots() as u64,
        };
        // SAFETY: written between runs, read by instrumented code of the same thread.
        unsafe { __numfuzz_errbits_slots = inline_slots };
        if cmp_mode & CMP_LOG != 0 {
            if let Some(count) = self.cmp_log_count() {
                count.store(0, Ordering::Relaxed);
                fill(&self.cmp_logged, 0);
            }
        }
        // An ErrBits probe is a local-search step that reads its slot's gap alone: the
        // comparison hooks of its run only refreshed a map the descent does not read (a fifth
        // of GSL ellint_Pcomp's campaign, whose probes were a fifth of its runs).
        // Probes measure in the precise copies (checks and comparison hooks are there).
        let fast = word & MODE_FAST != 0 && probe.is_none();
        // A fast run's precise re-run (a flag went up) is for its exceptions: the fuzzer did
        // not ask this run for distances.
        let cmp_mode = match probe {
            Some(Probe::ErrBits(_)) => cmp_mode & !CMP_DISTANCES,
            None if fast => cmp_mode & !CMP_DISTANCES,
            _ => cmp_mode,
        };
        RunSettings { cmp_mode, probe, fast }
    }

    /// Lowers the distances of comparison `cmp` to its two outcomes.
    #[inline]
    pub fn record_cmp(&self, cmp: u32, distances: [u8; 2]) {
        let base = cmp as usize * 2;
        if let Some(slots) = self.cmp_distances.get(base..base + 2) {
            lower(&slots[0], distances[0]);
            lower(&slots[1], distances[1]);
        }
    }

    /// Appends one comparison's operands to the log (a few per comparison and run).
    pub fn log_cmp(&self, entry: &CmpLogEntry) {
        let (Some(logged), Some(count)) = (self.cmp_logged.get(entry.cmp as usize), self.cmp_log_count()) else {
            return;
        };
        let n = logged.load(Ordering::Relaxed);
        if n as u32 >= CMP_LOG_PER_SITE {
            return;
        }
        logged.store(n + 1, Ordering::Relaxed);
        let index = count.fetch_add(1, Ordering::Relaxed) as usize;
        if index < self.cmp_log_capacity {
            // SAFETY: the log has room for `cmp_log_capacity` entries after its header, and
            // the atomic add gave this call the entry at `index` alone.
            unsafe {
                let entries = self.cmp_log.add(1).cast::<CmpLogEntry>();
                entries.add(index).write_unaligned(*entry);
            }
        }
    }

    /// Makes this the region checks record into.
    pub fn install(&'static self) {
        CURRENT.store(self as *const Region as *mut Region, Ordering::Release);
        // SAFETY: written at start-up, before instrumented code reads it (the pass inlines
        // the ErrBits update of normal arithmetic results against this map).
        unsafe {
            __numfuzz_errbits_map = self.errbits_ptr();
            __numfuzz_errbits_slots = self.slots() as u64;
        }
    }

    pub fn current() -> Option<&'static Region> {
        let p = CURRENT.load(Ordering::Acquire);
        // SAFETY: only leaked (static) regions are installed.
        (!p.is_null()).then(|| unsafe { &*p })
    }

    pub fn slots(&self) -> usize {
        self.errbits.len()
    }

    /// Records one check: ErrBits minima for the site's four slots and the raised kinds,
    /// marking them as origins when `origin` (every floating-point operand was finite).
    /// Returns the kinds raised for the first time since the last reset, and the kinds whose
    /// first origin this is (bit per kind).
    #[inline]
    pub fn record(&self, site: u32, errbits: &[u8; 4], raised: u8, origin: bool) -> Fresh {
        let base = site as usize * KINDS_PER_SITE as usize;
        let mut fresh = Fresh::default();
        let (Some(distances), Some(exceptions)) =
            (self.errbits.get(base..base + 4), self.exceptions.get(base..base + 4))
        else {
            return fresh;
        };
        let unprecedented = origin && raised != 0 && !self.preceded.load(Ordering::Relaxed);
        let mark = EXC_RAISED | if origin { EXC_ORIGIN } else { 0 } | if unprecedented { EXC_UNPRECEDED } else { 0 };
        if raised & PRECEDING_KINDS != 0 {
            self.preceded.store(true, Ordering::Relaxed);
        }
        for (k, &e) in errbits.iter().enumerate() {
            lower(&distances[k], e);
            if raised & (1 << k) != 0 {
                let old = exceptions[k].load(Ordering::Relaxed);
                if old == 0 {
                    fresh.raised |= 1 << k;
                }
                if origin && old & EXC_ORIGIN == 0 {
                    fresh.origin |= 1 << k;
                }
                exceptions[k].store(old | mark, Ordering::Relaxed);
            }
        }
        fresh
    }

    /// Whether `kind` at `site` is already recorded in this run's map, from finite operands when
    /// `origin` (so recording it again would add nothing).
    pub fn recorded(&self, site: u32, kind: ExceptionKind, origin: bool) -> bool {
        let slot = site as usize * KINDS_PER_SITE as usize + kind as usize;
        let want = EXC_RAISED | if origin { EXC_ORIGIN } else { 0 };
        self.exceptions
            .get(slot)
            .is_some_and(|e| e.load(Ordering::Relaxed) & want == want)
    }

    /// A declared result: `primary` ones that are Inf or NaN mark the run.
    pub fn note_result(&self, primary: bool, non_finite: bool) {
        let flags = RUN_RESULTS | if primary && non_finite { RUN_RESULT_NONFINITE } else { 0 };
        self.run_flags().fetch_or(flags, Ordering::Relaxed);
    }

    /// Clears the maps and the run flags (what the fuzzer does before each run); the run then
    /// starts with `crate::run::begin`.
    pub fn reset(&self) {
        fill(self.errbits, NOT_MEASURED);
        fill(self.exceptions, 0);
        fill(self.cmp_distances, NOT_MEASURED);
        self.clear_run_flags();
        self.preceded.store(false, Ordering::Relaxed);
    }

    /// Clears the per-run flags only (the maps are reset by whoever observes them).
    pub fn clear_run_flags(&self) {
        self.run_flags().fetch_and(RUN_TRUNCATED, Ordering::Relaxed);
    }

    /// Marks the current run (any thread may call it).
    pub fn set_run_flag(&self, flag: u32) {
        self.run_flags().fetch_or(flag, Ordering::Relaxed);
    }

    /// Whether the current run carries `flag`.
    pub fn run_flag(&self, flag: u32) -> bool {
        self.run_flags().load(Ordering::Relaxed) & flag != 0
    }

    pub fn set_handled(&self) {
        self.run_flags().fetch_or(RUN_HANDLED, Ordering::Relaxed);
    }

    pub fn handled(&self) -> bool {
        self.run_flags().load(Ordering::Relaxed) & RUN_HANDLED != 0
    }

    /// The region as numfuzz-abi sees it (for the in-process engine's maps and words).
    #[cfg(feature = "inprocess")]
    pub fn view(&self) -> RegionView {
        self.view
    }

    pub fn errbits_ptr(&self) -> *mut u8 {
        self.errbits.as_ptr().cast_mut().cast()
    }

    /// The exception map as the run left it (called between runs).
    pub fn exception_map(&self) -> &[u8] {
        // SAFETY: read after a run has ended, before the next starts.
        unsafe { settled(self.exceptions) }
    }

    /// Distinct (site, kind) pairs raised since the last reset (called between runs).
    pub fn raised_count(&self) -> u32 {
        // SAFETY: read after a run has ended, before the next starts.
        let exceptions = unsafe { settled(self.exceptions) };
        // Word by word: the map of a large library is mostly zero.
        let raised = |bytes: &[u8]| bytes.iter().filter(|&&x| x != 0).count();
        let words = exceptions.chunks_exact(8);
        let rest = raised(words.remainder());
        let in_words: usize = words
            .filter(|w| u64::from_ne_bytes((*w).try_into().expect("8 bytes")) != 0)
            .map(raised)
            .sum();
        (in_words + rest) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use numfuzz_abi::kind::EXC_RAISED;

    #[test]
    fn a_kind_is_recorded_for_the_run_with_its_origin() {
        let region = Region::local(2, 1);
        region.reset();
        let underflow = 1 << ExceptionKind::Underflow as u8;
        assert!(!region.recorded(1, ExceptionKind::Underflow, false));
        region.record(1, &[0; 4], underflow, false);
        assert!(region.recorded(1, ExceptionKind::Underflow, false));
        assert!(!region.recorded(1, ExceptionKind::Underflow, true), "propagated only");
        assert!(!region.recorded(0, ExceptionKind::Underflow, false), "another site");
        region.record(1, &[0; 4], underflow, true);
        assert!(region.recorded(1, ExceptionKind::Underflow, true));
        assert!(!region.recorded(1, ExceptionKind::Invalid, false));
        assert!(!region.recorded(9, ExceptionKind::Underflow, false), "beyond the map");
        region.reset();
        assert!(!region.recorded(1, ExceptionKind::Underflow, false), "a new run");
    }

    #[test]
    fn a_check_lowers_errbits_and_marks_each_kind_once() {
        let region = Region::local(2, 1);
        region.reset();
        let slot = |i: usize| region.errbits[i].load(Ordering::Relaxed);
        assert_eq!(region.record(1, &[30, 40, NOT_MEASURED, 7], 0, true), Fresh::default());
        assert_eq!((slot(4), slot(5), slot(6), slot(7)), (30, 40, NOT_MEASURED, 7));
        // A larger distance never raises a minimum.
        region.record(1, &[31, 2, 9, 8], 0, true);
        assert_eq!((slot(4), slot(5), slot(6), slot(7)), (30, 2, 9, 7));
        // Kind 0 raised by propagation, then as an origin: new once, origin once.
        let propagated = region.record(1, &[0; 4], 0b0001, false);
        assert_eq!((propagated.raised, propagated.origin), (1, 0));
        let generated = region.record(1, &[0; 4], 0b0001, true);
        assert_eq!((generated.raised, generated.origin), (0, 1));
        assert_eq!(region.record(1, &[0; 4], 0b0001, true), Fresh::default());
        assert_eq!(region.exceptions[4].load(Ordering::Relaxed), EXC_RAISED | EXC_ORIGIN);
        assert_eq!(region.raised_count(), 1);
        region.reset();
        assert_eq!((slot(4), region.raised_count()), (NOT_MEASURED, 0));
    }

    #[test]
    fn an_origin_before_any_invalid_divbyzero_or_overflow_of_the_run_is_unprecedented() {
        let region = Region::local(3, 1);
        region.reset();
        let mark =
            |site: usize, kind: ExceptionKind| region.exceptions[site * 4 + kind as usize].load(Ordering::Relaxed);
        let (underflow, overflow) = (1 << ExceptionKind::Underflow as u8, 1 << ExceptionKind::Overflow as u8);
        // An Underflow does not precede: the Overflow after it is unprecedented too.
        region.record(0, &[0; 4], underflow, true);
        region.record(1, &[0; 4], overflow, true);
        region.record(2, &[0; 4], underflow, true);
        assert_eq!(
            mark(0, ExceptionKind::Underflow),
            EXC_RAISED | EXC_ORIGIN | EXC_UNPRECEDED
        );
        assert_eq!(
            mark(1, ExceptionKind::Overflow),
            EXC_RAISED | EXC_ORIGIN | EXC_UNPRECEDED
        );
        assert_eq!(
            mark(2, ExceptionKind::Underflow),
            EXC_RAISED | EXC_ORIGIN,
            "after the Overflow"
        );
        region.reset();
        region.record(2, &[0; 4], underflow, true);
        assert_eq!(
            mark(2, ExceptionKind::Underflow),
            EXC_RAISED | EXC_ORIGIN | EXC_UNPRECEDED,
            "a new run"
        );
    }

    #[test]
    fn sites_and_comparisons_beyond_the_maps_are_ignored() {
        let region = Region::local(1, 1);
        region.reset();
        let beyond = region.slots() as u32;
        assert_eq!(region.record(beyond, &[0; 4], 0b1111, true), Fresh::default());
        region.record_cmp(u32::MAX / 2, [0, 0]);
        assert_eq!(region.raised_count(), 0);
    }

    #[test]
    fn run_flags_keep_truncation_across_runs() {
        let region = Region::local(1, 0);
        region.set_handled();
        region.note_result(true, true);
        let flags = region.run_flags().load(Ordering::Relaxed);
        assert_eq!(
            flags & (RUN_HANDLED | RUN_RESULTS | RUN_RESULT_NONFINITE),
            RUN_HANDLED | RUN_RESULTS | RUN_RESULT_NONFINITE
        );
        region.run_flags().fetch_or(RUN_TRUNCATED, Ordering::Relaxed);
        region.clear_run_flags();
        assert_eq!(region.run_flags().load(Ordering::Relaxed), RUN_TRUNCATED);
        assert!(!region.handled());
    }

    #[test]
    fn a_fast_run_asks_for_no_branch_distances_and_a_precise_one_does() {
        let region = Region::local(1, 2);
        region
            .cmp_mode()
            .store(u32::from(CMP_DISTANCES) | MODE_FAST, Ordering::Relaxed);
        let fast = region.begin_run();
        assert!(fast.fast);
        assert_eq!(fast.cmp_mode & CMP_DISTANCES, 0, "its re-run is for its exceptions");
        region.cmp_mode().store(u32::from(CMP_DISTANCES), Ordering::Relaxed);
        let precise = region.begin_run();
        assert!(!precise.fast);
        assert_eq!(precise.cmp_mode, CMP_DISTANCES);
    }

    #[test]
    fn the_operand_log_takes_a_few_entries_per_comparison_and_run() {
        let region = Region::local(1, 2);
        region.cmp_mode().store(CMP_LOG as u32, Ordering::Relaxed);
        region.begin_run();
        let entry = |cmp: u32| CmpLogEntry {
            cmp,
            ..Default::default()
        };
        for _ in 0..10 {
            region.log_cmp(&entry(1));
        }
        region.log_cmp(&entry(0));
        let count = region.cmp_log_count().unwrap().load(Ordering::Relaxed);
        assert_eq!(count, CMP_LOG_PER_SITE + 1);
        // A comparison the region does not know is not logged.
        region.log_cmp(&entry(7));
        assert_eq!(region.cmp_log_count().unwrap().load(Ordering::Relaxed), count);
        region.begin_run();
        assert_eq!(region.cmp_log_count().unwrap().load(Ordering::Relaxed), 0);
    }

    #[test]
    fn threads_recording_at_once_leave_each_slot_at_one_of_their_values() {
        let region = Region::local(64, 0);
        region.reset();
        std::thread::scope(|s| {
            for t in 0..4u8 {
                s.spawn(move || {
                    for site in 0..64 {
                        region.record(site, &[10 + t, 20 + t, 30 + t, 40 + t], 0b0010, t % 2 == 0);
                    }
                });
            }
        });
        for site in 0..64usize {
            let e = region.errbits[site * 4].load(Ordering::Relaxed);
            assert!((10..14).contains(&e), "{e}");
            assert_ne!(region.exceptions[site * 4 + 1].load(Ordering::Relaxed) & EXC_RAISED, 0);
        }
    }
}
