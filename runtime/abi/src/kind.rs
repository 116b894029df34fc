//! Exception kinds and the (site, kind) slot numbering.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// An IEEE-754 exception that numfuzz reports. Inexact is deliberately absent: nearly every
/// floating-point operation raises it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[repr(u8)]
pub enum ExceptionKind {
    Invalid = 0,
    DivByZero = 1,
    Overflow = 2,
    Underflow = 3,
}

/// Number of kinds, and so the number of map slots per site.
pub const KINDS_PER_SITE: u32 = 4;

impl ExceptionKind {
    pub const ALL: [ExceptionKind; 4] = [
        ExceptionKind::Invalid,
        ExceptionKind::DivByZero,
        ExceptionKind::Overflow,
        ExceptionKind::Underflow,
    ];

    pub const fn index(self) -> u32 {
        self as u32
    }

    pub const fn from_index(i: u32) -> Option<Self> {
        match i {
            0 => Some(ExceptionKind::Invalid),
            1 => Some(ExceptionKind::DivByZero),
            2 => Some(ExceptionKind::Overflow),
            3 => Some(ExceptionKind::Underflow),
            _ => None,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            ExceptionKind::Invalid => "Invalid",
            ExceptionKind::DivByZero => "DivByZero",
            ExceptionKind::Overflow => "Overflow",
            ExceptionKind::Underflow => "Underflow",
        }
    }
}

impl fmt::Display for ExceptionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, thiserror::Error)]
#[error("unknown exception kind `{0}` (expected Invalid, DivByZero, Overflow or Underflow)")]
pub struct UnknownKind(pub String);

impl FromStr for ExceptionKind {
    type Err = UnknownKind;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ExceptionKind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownKind(s.to_string()))
    }
}

/// Exception-map value bit: the (site, kind) was raised in this run (any non-zero value means
/// raised).
pub const EXC_RAISED: u8 = 1;
/// Exception-map value bit: at least one of those raises was an *origin*: every floating-point
/// operand of the operation was finite (not Inf, not NaN), so the operation generated the
/// exceptional value rather than propagating one.
pub const EXC_ORIGIN: u8 = 2;
/// Exception-map value bit: at least one of those origins came before any Invalid, DivByZero
/// or Overflow of the run, so no earlier exception can have caused it (a campaign keeps the
/// first such input of a (site, kind) first met downstream of another exception, for triage
/// to judge it on its own).
pub const EXC_UNPRECEDED: u8 = 4;
/// The kinds (a bit per [`ExceptionKind`] index) after which an origin is not
/// [`EXC_UNPRECEDED`]: Underflows are too common, and too rarely a cause, to count.
pub const PRECEDING_KINDS: u8 = 0b0111;

/// Map slot of a (site, kind) pair in the ErrBits and exception maps.
pub const fn slot(site: u32, kind: ExceptionKind) -> usize {
    (site as usize) * KINDS_PER_SITE as usize + kind as usize
}

/// Inverse of [`slot`].
pub const fn site_and_kind(slot: usize) -> (u32, ExceptionKind) {
    let site = (slot / KINDS_PER_SITE as usize) as u32;
    let kind = match ExceptionKind::from_index((slot % KINDS_PER_SITE as usize) as u32) {
        Some(k) => k,
        None => unreachable!(),
    };
    (site, kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_round_trip() {
        for site in [0u32, 1, 7, 100_000] {
            for kind in ExceptionKind::ALL {
                assert_eq!(site_and_kind(slot(site, kind)), (site, kind));
            }
        }
        assert_eq!(slot(3, ExceptionKind::Overflow), 14);
    }

    #[test]
    fn kinds_parse_case_insensitively() {
        assert_eq!("overflow".parse::<ExceptionKind>().unwrap(), ExceptionKind::Overflow);
        assert_eq!("DivByZero".parse::<ExceptionKind>().unwrap(), ExceptionKind::DivByZero);
        assert!("inexact".parse::<ExceptionKind>().is_err());
    }
}
