//! Which slot this run probes (see numfuzz-abi's `probe`), as the checks and comparison hooks
//! ask it: one relaxed load and a compare on their slow paths.

use numfuzz_abi::kind::{ExceptionKind, KINDS_PER_SITE};
use numfuzz_abi::probe::Probe;
use std::sync::atomic::{AtomicU32, Ordering};

/// The probed slot + 1 of the ErrBits map, and of the comparison map (0: none).
static ERRBITS_SLOT: AtomicU32 = AtomicU32::new(0);
static CMP_SLOT: AtomicU32 = AtomicU32::new(0);

/// Takes up the run's probe (at the start of every run).
pub fn set(probe: Option<Probe>) {
    let (errbits, cmp) = match probe {
        Some(Probe::ErrBits(slot)) => (slot + 1, 0),
        Some(Probe::Cmp(slot)) => (0, slot + 1),
        None => (0, 0),
    };
    ERRBITS_SLOT.store(errbits, Ordering::Relaxed);
    CMP_SLOT.store(cmp, Ordering::Relaxed);
}

/// The kind probed at `site`, if the probe is one of its slots.
#[inline]
pub fn probed_kind(site: u32) -> Option<ExceptionKind> {
    let slot = ERRBITS_SLOT.load(Ordering::Relaxed).checked_sub(1)?;
    if slot / KINDS_PER_SITE != site {
        return None;
    }
    ExceptionKind::from_index(slot % KINDS_PER_SITE)
}

/// The outcome (0 false, 1 true) probed at comparison `cmp`, if any.
#[inline]
pub fn probed_outcome(cmp: u32) -> Option<usize> {
    let slot = CMP_SLOT.load(Ordering::Relaxed).checked_sub(1)?;
    (slot / 2 == cmp).then_some((slot % 2) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_probed_slot_answers() {
        set(Some(Probe::ErrBits(4 * 7 + 2)));
        assert_eq!(probed_kind(7), ExceptionKind::from_index(2));
        assert_eq!(probed_kind(6), None);
        assert_eq!(probed_outcome(7), None);
        set(Some(Probe::Cmp(2 * 9 + 1)));
        assert_eq!(probed_outcome(9), Some(1));
        assert_eq!(probed_kind(7), None);
        set(None);
        assert_eq!(probed_outcome(9), None);
    }
}
