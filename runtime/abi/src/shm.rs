//! Layout of the numfuzz shared-memory region (`NUMFUZZ_SHM_ID`).
//!
//! ```text
//! offset 0                   ShmHeader (64 bytes; its last three words carry the probe)
//! errbits_offset             u8 per (site, kind) slot: ErrBits minimum of this run, 0xFF = not measured
//! exceptions_offset          u8 per slot: non-zero = that exception happened in this run
//! cmp_offset                 u8 per (comparison, outcome): distance to that outcome (see `cmp`)
//! cmp_log_offset             CmpLogHeader + CmpLogEntry[cmp_log_capacity] (tracing runs)
//! ```
//! The fuzzer creates the region, fills in the header's capacity and offsets and resets both
//! maps before every run; the target checks magic and version, writes its site count, and
//! only ever writes slots below the capacity.

/// `"NFZ1"` little-endian.
pub const SHM_MAGIC: u32 = 0x315a_464e;

/// Header of the region. All fields little-endian `u32`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShmHeader {
    pub magic: u32,
    pub abi_version: u32,
    /// Slots available in each map (set by the fuzzer).
    pub slot_capacity: u32,
    /// Sites in the target (set by the target at attach time).
    pub site_count: u32,
    /// Per-run flags set by the target: [`RUN_HANDLED`], [`RUN_TRUNCATED`], [`RUN_RESULTS`],
    /// [`RUN_RESULT_NONFINITE`], [`RUN_OUT_OF_MEMORY`].
    pub run_flags: u32,
    pub errbits_offset: u32,
    pub exceptions_offset: u32,
    /// Offset of the comparison distance map (0 = none).
    pub cmp_offset: u32,
    /// Bytes of the distance map (two per comparison; set by the fuzzer).
    pub cmp_slots: u32,
    /// Comparisons in the target (set by the target at attach time).
    pub cmp_count: u32,
    /// Offset of the operand log (0 = none).
    pub cmp_log_offset: u32,
    /// Entries the operand log holds.
    pub cmp_log_capacity: u32,
    /// What the target records in the next run (set by the fuzzer before each run): in the
    /// low byte `cmp::CMP_DISTANCES | cmp::CMP_LOG`; [`MODE_FAST`] asks for a fast run.
    pub cmp_mode: u32,
    /// The one (map, slot) whose exact gap the next run measures ([`crate::probe::Probe`]
    /// encoded; 0 = none). Set by the fuzzer's local-search stage before its runs.
    pub probe: u32,
    /// The probed slot's smallest gap in the run ([`crate::probe::encode_gap`], low word
    /// first; [`crate::probe::GAP_NOT_MEASURED`] until measured). Reset by the target at the
    /// start of a probing run.
    pub probe_gap: [u32; 2],
}

pub const HEADER_SIZE: usize = std::mem::size_of::<ShmHeader>();
const _: () = assert!(HEADER_SIZE == 64);

/// The harness called `NUMFUZZ_HANDLED()` during this run.
pub const RUN_HANDLED: u32 = 1;
/// The target has more slots than the region holds; some sites are not recorded.
pub const RUN_TRUNCATED: u32 = 2;
/// The harness declared at least one result (`NUMFUZZ_RESULT`) during this run.
pub const RUN_RESULTS: u32 = 4;
/// A primary declared result (`NUMFUZZ_RESULT`, not `NUMFUZZ_RESULT_NAMED`) was Inf or NaN.
pub const RUN_RESULT_NONFINITE: u32 = 8;
/// The run exceeded the memory limit ([`crate::env::MEM_LIMIT_MB`]); the runtime then ends it
/// with SIGABRT, so the fuzzer sees a crash and names it out-of-memory.
pub const RUN_OUT_OF_MEMORY: u32 = 16;
/// The input ran again on the precise copies of a split build (a fast run saw a flag, or the
/// fuzzer asked for distances).
pub const RUN_PRECISE: u32 = 32;
/// A fast run saw a flag, but on an edge path where the same flags had already run precisely
/// in this process: the precise re-run was skipped (the runtime's `precise.rs`).
pub const RUN_PRECISE_SKIPPED: u32 = 64;
/// A fast run that saw a flag (or is re-run in any case) has ended. In-process, what runs now
/// (its special-result pass, its precise re-run) has the re-runs' own time limit, not the
/// executor's calibrated one; the fuzzer counts time-outs with this bit as `rerun_timeouts`.
pub const RUN_FAST_ENDED: u32 = 128;
/// In-process, a fast run that would have been re-run was not: its re-run, predicted from its
/// time and the slowdown measured so far, would have outlived the time limit (the runtime's
/// `rerun_limit.rs`; `reruns_too_slow` in `fuzzer_stats`).
pub const RUN_RERUN_TOO_SLOW: u32 = 256;
/// A fast run that would have been re-run was not: every operation that gave a special result
/// in it had been special in re-runs that taught nothing, with the same flags (the runtime's
/// `rerun_throttle.rs`; `reruns_throttled` in `fuzzer_stats`).
pub const RUN_RERUN_THROTTLED: u32 = 512;
/// The input ran on the fast copies (and maybe their special-result pass) and no precise run
/// followed: the region's exception, ErrBits and comparison maps hold nothing of this run, and
/// the fuzzer does not read them. Never set where every run is precise (programs without fast
/// copies, programs with their own `main`), nor for a run that ended in a crash or time-out.
pub const RUN_FAST_ONLY: u32 = 1024;
/// The executor's alarm came during the program's own run after it had raised Invalid,
/// DivByZero or Overflow (the FPU's sticky flags in the interrupted context): a time-out then
/// is one AFL++ with those exceptions trapped never runs into, and the fuzzer does not confirm
/// it as a hang below the ceiling (`cut_after_raise` in `fuzzer_stats`). In-process only.
pub const RUN_ALARM_AFTER_EXCEPTION: u32 = 2048;

/// Bit of the header's `cmp_mode` word: run the fast copies of split functions (no checks,
/// no ErrBits) and re-run the input precisely only when the FPU's sticky flags show an
/// exception (or the program has no fast copies). Clear: every check and every ErrBits
/// measure, as in a run before this bit existed. The fuzzer sets it on the runs whose
/// distances it does not need.
pub const MODE_FAST: u32 = 1 << 8;

impl ShmHeader {
    /// The header for a region of `slots` (site, kind) slots and no comparison areas.
    pub fn for_slots(slots: u32) -> ShmHeader {
        ShmHeader::layout(slots, 0, 0)
    }

    /// The header for `slots` (site, kind) slots, `cmp_slots` comparison-distance bytes and
    /// an operand log of `log_capacity` entries, back to back after the header (the log
    /// 8-aligned).
    pub fn layout(slots: u32, cmp_slots: u32, log_capacity: u32) -> ShmHeader {
        let maps_end = HEADER_SIZE as u32 + 2 * slots;
        let (cmp_offset, log_offset) = if cmp_slots == 0 && log_capacity == 0 {
            (0, 0)
        } else {
            (maps_end, (maps_end + cmp_slots).next_multiple_of(8))
        };
        ShmHeader {
            magic: SHM_MAGIC,
            abi_version: crate::ABI_VERSION,
            slot_capacity: slots,
            site_count: 0,
            run_flags: 0,
            errbits_offset: HEADER_SIZE as u32,
            exceptions_offset: HEADER_SIZE as u32 + slots,
            cmp_offset,
            cmp_slots,
            cmp_count: 0,
            cmp_log_offset: if log_capacity == 0 { 0 } else { log_offset },
            cmp_log_capacity: log_capacity,
            cmp_mode: 0,
            probe: 0,
            probe_gap: [0; 2],
        }
    }

    /// Bytes the region needs.
    pub fn region_size(&self) -> usize {
        let maps_end = (self.exceptions_offset + self.slot_capacity) as usize;
        let cmp_end = (self.cmp_offset + self.cmp_slots) as usize;
        let log_end = if self.cmp_log_capacity == 0 {
            0
        } else {
            self.cmp_log_offset as usize + crate::cmp::cmp_log_bytes(self.cmp_log_capacity)
        };
        maps_end.max(cmp_end).max(log_end)
    }

    pub fn is_valid(&self) -> bool {
        self.magic == SHM_MAGIC && self.abi_version == crate::ABI_VERSION
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparison_areas_follow_the_maps() {
        let h = ShmHeader::layout(400, 30, 100);
        assert_eq!(h.cmp_offset as usize, HEADER_SIZE + 800);
        assert_eq!(h.cmp_log_offset % 8, 0);
        assert!(h.cmp_log_offset >= h.cmp_offset + 30);
        assert_eq!(
            h.region_size(),
            h.cmp_log_offset as usize + crate::cmp::cmp_log_bytes(100)
        );
        assert_eq!(ShmHeader::for_slots(8).cmp_offset, 0);
    }

    #[test]
    fn maps_follow_the_header_without_overlap() {
        let h = ShmHeader::for_slots(400);
        assert!(h.is_valid());
        assert_eq!(h.errbits_offset as usize, HEADER_SIZE);
        assert_eq!(h.exceptions_offset, h.errbits_offset + 400);
        assert_eq!(h.region_size(), HEADER_SIZE + 800);
    }
}
