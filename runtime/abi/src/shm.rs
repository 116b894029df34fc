//! Layout of the numfuzz shared-memory region (`NUMFUZZ_SHM_ID`).
//!
//! ```text
//! offset 0                   ShmHeader (64 bytes)
//! errbits_offset             u8 per (site, kind) slot: ErrBits minimum of this run, 0xFF = not measured
//! exceptions_offset          u8 per slot: non-zero = that exception happened in this run
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
    /// Per-run flags set by the target: [`RUN_HANDLED`], [`RUN_TRUNCATED`].
    pub run_flags: u32,
    pub errbits_offset: u32,
    pub exceptions_offset: u32,
    /// Offset of the comparison map (0 = none).
    pub cmp_offset: u32,
    /// Size of the comparison map in bytes.
    pub cmp_size: u32,
    pub reserved: [u32; 7],
}

pub const HEADER_SIZE: usize = std::mem::size_of::<ShmHeader>();
const _: () = assert!(HEADER_SIZE == 64);

/// The harness called `NUMFUZZ_HANDLED()` during this run.
pub const RUN_HANDLED: u32 = 1;
/// The target has more slots than the region holds; some sites are not recorded.
pub const RUN_TRUNCATED: u32 = 2;

impl ShmHeader {
    /// The header for a region of `slots` slots, laid out back to back after the header.
    pub fn for_slots(slots: u32) -> ShmHeader {
        ShmHeader {
            magic: SHM_MAGIC,
            abi_version: crate::ABI_VERSION,
            slot_capacity: slots,
            site_count: 0,
            run_flags: 0,
            errbits_offset: HEADER_SIZE as u32,
            exceptions_offset: HEADER_SIZE as u32 + slots,
            cmp_offset: 0,
            cmp_size: 0,
            reserved: [0; 7],
        }
    }

    /// Bytes the region needs.
    pub fn region_size(&self) -> usize {
        let maps_end = (self.exceptions_offset + self.slot_capacity) as usize;
        maps_end.max((self.cmp_offset + self.cmp_size) as usize)
    }

    pub fn is_valid(&self) -> bool {
        self.magic == SHM_MAGIC && self.abi_version == crate::ABI_VERSION
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_follow_the_header_without_overlap() {
        let h = ShmHeader::for_slots(400);
        assert!(h.is_valid());
        assert_eq!(h.errbits_offset as usize, HEADER_SIZE);
        assert_eq!(h.exceptions_offset, h.errbits_offset + 400);
        assert_eq!(h.region_size(), HEADER_SIZE + 800);
    }
}
