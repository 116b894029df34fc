//! The probe: one (map, slot) whose exact gap a run measures, for the fuzzer's local search.
//!
//! The maps hold ErrBits, the bit length of a gap, which is all a keep/discard decision
//! needs; a descent needs the gap itself, or it stands on plateaus (every f64 from 2^-51 to
//! the largest has the same ErrBits to zero). The fuzzer writes the slot into the header's
//! `probe` word before a run; the target then routes every check through the runtime for
//! that run and keeps the slot's smallest gap in `probe_gap`.

/// A slot of one of the two distance maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Probe {
    /// ErrBits map slot: site × [`crate::kind::KINDS_PER_SITE`] + kind.
    ErrBits(u32),
    /// Comparison distance map slot: comparison × 2 + outcome (0 false, 1 true).
    Cmp(u32),
}

/// The header word when nothing is probed.
pub const PROBE_NONE: u32 = 0;
const CMP_MAP: u32 = 1 << 31;

/// `probe_gap` before anything was measured (larger than any encoded gap).
pub const GAP_NOT_MEASURED: u64 = u64::MAX;

impl Probe {
    /// The header word (never [`PROBE_NONE`]).
    pub fn encode(self) -> u32 {
        match self {
            Probe::ErrBits(slot) => (slot + 1) & !CMP_MAP,
            Probe::Cmp(slot) => ((slot + 1) & !CMP_MAP) | CMP_MAP,
        }
    }

    pub fn decode(word: u32) -> Option<Probe> {
        let slot = (word & !CMP_MAP).checked_sub(1)?;
        Some(if word & CMP_MAP != 0 {
            Probe::Cmp(slot)
        } else {
            Probe::ErrBits(slot)
        })
    }
}

/// A gap as the header holds it: the bits of the nearest f64, which order like the gaps
/// (53 significant bits are plenty for a search; exact up to 2^53).
pub fn encode_gap(gap: u128) -> u64 {
    (gap as f64).to_bits()
}

/// The gap a header holds, or `None` when it was not measured.
pub fn decode_gap(word: u64) -> Option<f64> {
    (word != GAP_NOT_MEASURED).then(|| f64::from_bits(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_round_trip_and_none_is_distinct() {
        for p in [
            Probe::ErrBits(0),
            Probe::ErrBits(77),
            Probe::Cmp(0),
            Probe::Cmp(123_456),
        ] {
            assert_ne!(p.encode(), PROBE_NONE);
            assert_eq!(Probe::decode(p.encode()), Some(p));
        }
        assert_eq!(Probe::decode(PROBE_NONE), None);
    }

    #[test]
    fn encoded_gaps_order_like_gaps() {
        let gaps = [0u128, 1, 2, 3, 1 << 52, (1 << 53) + 1, 1 << 80, u128::MAX];
        for w in gaps.windows(2) {
            assert!(encode_gap(w[0]) <= encode_gap(w[1]), "{w:?}");
        }
        assert!(encode_gap(u128::MAX) < GAP_NOT_MEASURED);
        assert_eq!(decode_gap(encode_gap(12345)), Some(12345.0));
        assert_eq!(decode_gap(GAP_NOT_MEASURED), None);
    }
}
