//! Comparisons: what the pass records about every `fcmp` and integer `icmp`, the branch
//! distance numfuzz minimises to flip them, and the operand log its input-to-state stage reads.
//!
//! - Each comparison gets a [`CmpRecord`] in the `__numfuzz_cmps` section, numbered at
//!   start-up like FP sites (its own numbering).
//! - Distance map (in the shared region, `cmp_offset`): one byte per (comparison, outcome),
//!   slot `cmp * 2 + outcome` (outcome 1 = the comparison is true). The byte is the
//!   ErrBits-style distance of this run's operands to making the comparison have that outcome:
//!   `ceil(log2(1 + |ord(a) - ord(b)|))` for floats (ordered-float positions, as ErrBits),
//!   the same over the integers' values for `icmp`; 0 = it had that outcome.
//! - Operand log (`cmp_log_offset`), only in tracing runs: [`CmpLogHeader`] then
//!   [`CmpLogEntry`]s, a few per comparison per run, in execution order.
//! - `cmp_mode` in the header says what the target records in a run ([`CMP_DISTANCES`],
//!   [`CMP_LOG`]); the pass checks the runtime's copy of it inline, so a comparison costs a
//!   load and a branch when nothing is recorded.

use crate::op::FloatType;
use crate::value::Float;
use serde::{Deserialize, Serialize};
use std::ffi::{c_char, CStr};

/// Record distances to both outcomes of every comparison.
pub const CMP_DISTANCES: u8 = 1;
/// Also log operand values (tracing runs of the input-to-state stage).
pub const CMP_LOG: u8 = 2;

/// Name of the ELF section holding [`CmpRecord`]s.
pub const CMPS_SECTION: &str = "__numfuzz_cmps";

/// Log entries recorded per comparison and run (a loop's comparison would fill the log).
pub const CMP_LOG_PER_SITE: u32 = 4;

/// Operand type of a comparison: the [`FloatType`] code for floats, the width for integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum CmpOperand {
    F32 = 0,
    F64 = 1,
    F80 = 2,
    I8 = 8,
    I16 = 16,
    I32 = 32,
    I64 = 64,
}

impl CmpOperand {
    pub const fn from_code(code: u8) -> Option<CmpOperand> {
        match code {
            0 => Some(CmpOperand::F32),
            1 => Some(CmpOperand::F64),
            2 => Some(CmpOperand::F80),
            8 => Some(CmpOperand::I8),
            16 => Some(CmpOperand::I16),
            32 => Some(CmpOperand::I32),
            64 => Some(CmpOperand::I64),
            _ => None,
        }
    }

    pub const fn float_type(self) -> Option<FloatType> {
        match self {
            CmpOperand::F32 => Some(FloatType::F32),
            CmpOperand::F64 => Some(FloatType::F64),
            CmpOperand::F80 => Some(FloatType::F80),
            _ => None,
        }
    }

    /// Width of an integer operand in bits.
    pub const fn int_bits(self) -> Option<u32> {
        match self {
            CmpOperand::I8 => Some(8),
            CmpOperand::I16 => Some(16),
            CmpOperand::I32 => Some(32),
            CmpOperand::I64 => Some(64),
            _ => None,
        }
    }

    /// Bytes an operand value takes in a log entry.
    pub const fn size(self) -> usize {
        match self {
            CmpOperand::F32 | CmpOperand::I32 => 4,
            CmpOperand::F64 | CmpOperand::I64 => 8,
            CmpOperand::F80 => 10,
            CmpOperand::I8 => 1,
            CmpOperand::I16 => 2,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            CmpOperand::F32 => "f32",
            CmpOperand::F64 => "f64",
            CmpOperand::F80 => "f80",
            CmpOperand::I8 => "i8",
            CmpOperand::I16 => "i16",
            CmpOperand::I32 => "i32",
            CmpOperand::I64 => "i64",
        }
    }
}

/// A comparison predicate, numbered as LLVM's `CmpInst::Predicate` (which the pass stores).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum Predicate {
    FFalse = 0,
    Oeq = 1,
    Ogt = 2,
    Oge = 3,
    Olt = 4,
    Ole = 5,
    One = 6,
    Ord = 7,
    Uno = 8,
    Ueq = 9,
    Ugt = 10,
    Uge = 11,
    Ult = 12,
    Ule = 13,
    Une = 14,
    FTrue = 15,
    IEq = 32,
    INe = 33,
    IUgt = 34,
    IUge = 35,
    IUlt = 36,
    IUle = 37,
    ISgt = 38,
    ISge = 39,
    ISlt = 40,
    ISle = 41,
}

/// What a predicate tests, once NaNs are set aside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `ord`, `uno`, `true`, `false`: nothing but NaN-ness.
    None,
}

impl Predicate {
    pub const ALL: [Predicate; 26] = [
        Predicate::FFalse,
        Predicate::Oeq,
        Predicate::Ogt,
        Predicate::Oge,
        Predicate::Olt,
        Predicate::Ole,
        Predicate::One,
        Predicate::Ord,
        Predicate::Uno,
        Predicate::Ueq,
        Predicate::Ugt,
        Predicate::Uge,
        Predicate::Ult,
        Predicate::Ule,
        Predicate::Une,
        Predicate::FTrue,
        Predicate::IEq,
        Predicate::INe,
        Predicate::IUgt,
        Predicate::IUge,
        Predicate::IUlt,
        Predicate::IUle,
        Predicate::ISgt,
        Predicate::ISge,
        Predicate::ISlt,
        Predicate::ISle,
    ];

    pub fn from_code(code: u8) -> Option<Predicate> {
        Predicate::ALL.into_iter().find(|p| *p as u8 == code)
    }

    pub const fn relation(self) -> Relation {
        use Predicate::*;
        match self {
            Oeq | Ueq | IEq => Relation::Eq,
            One | Une | INe => Relation::Ne,
            Olt | Ult | IUlt | ISlt => Relation::Lt,
            Ole | Ule | IUle | ISle => Relation::Le,
            Ogt | Ugt | IUgt | ISgt => Relation::Gt,
            Oge | Uge | IUge | ISge => Relation::Ge,
            FFalse | FTrue | Ord | Uno => Relation::None,
        }
    }

    /// Integer predicates that compare signed values.
    pub const fn is_signed(self) -> bool {
        matches!(
            self,
            Predicate::ISgt | Predicate::ISge | Predicate::ISlt | Predicate::ISle
        )
    }

    /// Float predicates that are true when an operand is NaN.
    pub const fn is_unordered(self) -> bool {
        matches!(
            self,
            Predicate::Uno
                | Predicate::Ueq
                | Predicate::Ugt
                | Predicate::Uge
                | Predicate::Ult
                | Predicate::Ule
                | Predicate::Une
                | Predicate::FTrue
        )
    }
}

/// Gaps (to false, to true) of one comparison: `Some(0)` for the outcome it had, the
/// distance to the other one (at least 1), `None` where nothing is measured.
pub type Gaps = [Option<u128>; 2];

/// The distance map's bytes for [`Gaps`]: their bit lengths (0 only for the outcome taken).
pub fn distances_of(gaps: Gaps) -> [u8; 2] {
    gaps.map(crate::errbits::of_gap)
}

/// Gaps of a comparison of two positions `a` and `b` on a line (ordered-float positions, or
/// integer values), given what it tests.
pub fn gaps(relation: Relation, a: i128, b: i128) -> Gaps {
    let d = a.abs_diff(b);
    // Distance to make `a <op> b` true / false when it is not.
    let (holds, to_flip) = match relation {
        Relation::Eq => (a == b, if a == b { 1 } else { d }),
        Relation::Ne => (a != b, if a != b { d } else { 1 }),
        // a < b flips to false at a = b, to true at a = b - 1.
        Relation::Lt => (a < b, if a < b { d } else { d + 1 }),
        Relation::Le => (a <= b, if a <= b { d + 1 } else { d }),
        Relation::Gt => (a > b, if a > b { d } else { d + 1 }),
        Relation::Ge => (a >= b, if a >= b { d + 1 } else { d }),
        Relation::None => return [None; 2],
    };
    let to_flip = Some(to_flip.max(1));
    if holds {
        [to_flip, Some(0)]
    } else {
        [Some(0), to_flip]
    }
}

/// Distances (to false, to true): the bit lengths of [`gaps`].
pub fn distances(relation: Relation, a: i128, b: i128) -> [u8; 2] {
    distances_of(gaps(relation, a, b))
}

/// Gaps of a float comparison. With a NaN operand the outcome is fixed by the predicate's
/// (un)orderedness and no distance is measured.
pub fn float_gaps(pred: Predicate, a: Float, b: Float) -> Gaps {
    if a.is_nan() || b.is_nan() {
        let mut g = [None; 2];
        g[pred.is_unordered() as usize] = Some(0);
        return g;
    }
    match pred {
        Predicate::FTrue | Predicate::Ord => [None, Some(0)],
        Predicate::FFalse | Predicate::Uno => [Some(0), None],
        p => gaps(p.relation(), a.ord(), b.ord()),
    }
}

/// Distances (to false, to true) of a float comparison: the bit lengths of [`float_gaps`].
pub fn float_distances(pred: Predicate, a: Float, b: Float) -> [u8; 2] {
    distances_of(float_gaps(pred, a, b))
}

/// Gaps of an integer comparison of `bits`-wide values (given zero-extended to 64 bits, as
/// the pass passes them).
pub fn int_gaps(pred: Predicate, bits: u32, a: u64, b: u64) -> Gaps {
    let extend = |v: u64| -> i128 {
        let v = if bits >= 64 { v } else { v & ((1u64 << bits) - 1) };
        if pred.is_signed() && bits < 128 && (v >> (bits - 1)) & 1 == 1 {
            v as i128 - (1i128 << bits)
        } else {
            v as i128
        }
    };
    gaps(pred.relation(), extend(a), extend(b))
}

/// Distances (to false, to true) of an integer comparison: the bit lengths of [`int_gaps`].
pub fn int_distances(pred: Predicate, bits: u32, a: u64, b: u64) -> [u8; 2] {
    distances_of(int_gaps(pred, bits, a, b))
}

/// One comparison, as emitted by the pass into [`CMPS_SECTION`].
#[repr(C)]
#[derive(Debug)]
pub struct CmpRecord {
    /// Global comparison number, [`crate::site::SITE_UNASSIGNED`] until numbered.
    pub id: u32,
    /// [`Predicate`] code.
    pub predicate: u8,
    /// [`CmpOperand`] code.
    pub operand: u8,
    pub reserved: u16,
    pub line: u32,
    pub column: u32,
    pub file: *const c_char,
    pub directory: *const c_char,
    pub function: *const c_char,
}
const _: () = assert!(std::mem::size_of::<CmpRecord>() == 40);

/// A comparison as the fuzzer sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CmpInfo {
    pub id: u32,
    pub predicate: Predicate,
    pub operand: CmpOperand,
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub function: String,
}

impl CmpInfo {
    /// # Safety
    /// `rec` must be a record emitted by the numfuzz pass.
    pub unsafe fn from_record(rec: &CmpRecord) -> Option<CmpInfo> {
        let text = |p: *const c_char| {
            if p.is_null() {
                String::new()
            } else {
                // SAFETY: the pass emits NUL-terminated constant strings.
                unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
            }
        };
        Some(CmpInfo {
            id: rec.id,
            predicate: Predicate::from_code(rec.predicate)?,
            operand: CmpOperand::from_code(rec.operand)?,
            file: text(rec.file),
            line: rec.line,
            column: rec.column,
            function: text(rec.function),
        })
    }
}

/// Start of the operand log.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CmpLogHeader {
    /// Entries the run tried to log (only the first `capacity` are stored).
    pub count: u32,
    pub reserved: u32,
}

/// One logged comparison: its id, operand type and predicate, and both operands
/// (little-endian, in the first [`CmpOperand::size`] bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CmpLogEntry {
    pub cmp: u32,
    pub operand: u8,
    pub predicate: u8,
    pub reserved: u16,
    pub a: [u8; 16],
    pub b: [u8; 16],
}
const _: () = assert!(std::mem::size_of::<CmpLogEntry>() == 40);

/// Entries in the log area (sized for loops over many comparisons).
pub const CMP_LOG_CAPACITY: u32 = 4096;

/// Bytes of the log area.
pub const fn cmp_log_bytes(capacity: u32) -> usize {
    std::mem::size_of::<CmpLogHeader>() + capacity as usize * std::mem::size_of::<CmpLogEntry>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicates_round_trip_with_llvm_numbers() {
        for p in Predicate::ALL {
            assert_eq!(Predicate::from_code(p as u8), Some(p));
        }
        assert_eq!(Predicate::Olt as u8, 4);
        assert_eq!(Predicate::IEq as u8, 32);
        assert_eq!(Predicate::ISle as u8, 41);
    }

    #[test]
    fn equality_distance_shrinks_and_is_zero_when_taken() {
        let f = |x: f64| Float::from_f64(x);
        let target = f(std::f64::consts::E);
        let far = float_distances(Predicate::Oeq, f(1.0), target)[1];
        let near = float_distances(Predicate::Oeq, f(2.7), target)[1];
        let next = float_distances(Predicate::Oeq, target.step(1), target)[1];
        assert!(far > near && near > next && next == 1, "{far} {near} {next}");
        assert_eq!(float_distances(Predicate::Oeq, target, target), [1, 0]);
        assert_eq!(float_distances(Predicate::Une, target, target), [0, 1]);
    }

    #[test]
    fn order_distances_flip_at_the_boundary() {
        // a < b: at a = b - 1 it is true, and one step up makes it false.
        assert_eq!(distances(Relation::Lt, 9, 10), [1, 0]);
        assert_eq!(distances(Relation::Lt, 10, 10), [0, 1]);
        assert_eq!(distances(Relation::Le, 10, 10), [1, 0]);
        assert_eq!(distances(Relation::Ge, 10, 10), [1, 0]);
        assert_eq!(distances(Relation::Gt, 10, 10), [0, 1]);
        assert_eq!(distances(Relation::Gt, 0, 1000)[1], 10);
    }

    #[test]
    fn integer_widths_and_signedness() {
        // 0x7ff00000 vs the high word of a negative double, compared signed as i32.
        let hi = 0xc086_33ce_u64;
        assert_eq!(
            int_distances(Predicate::ISlt, 32, hi, 0x4086_33ce)[1],
            0,
            "negative < positive"
        );
        assert_eq!(
            int_distances(Predicate::IUlt, 32, hi, 0x4086_33ce)[0],
            0,
            "unsigned: larger"
        );
        assert_eq!(int_distances(Predicate::IEq, 32, 0x4086_33ce, 0x4086_33ce), [1, 0]);
        assert_eq!(
            int_distances(Predicate::IEq, 8, 0x1ff, 0xff),
            [1, 0],
            "only the low 8 bits count"
        );
    }

    /// The gap is exact: moving `a` that many steps towards the other outcome flips the
    /// comparison, one step fewer does not (what local search descends on).
    #[test]
    fn gaps_are_the_exact_number_of_steps_to_the_other_outcome() {
        let holds = |r: Relation, a: i128, b: i128| match r {
            Relation::Eq => a == b,
            Relation::Ne => a != b,
            Relation::Lt => a < b,
            Relation::Le => a <= b,
            Relation::Gt => a > b,
            Relation::Ge => a >= b,
            Relation::None => unreachable!(),
        };
        let relations = [
            Relation::Eq,
            Relation::Ne,
            Relation::Lt,
            Relation::Le,
            Relation::Gt,
            Relation::Ge,
        ];
        for r in relations {
            for a in -6i128..=6 {
                for b in -3i128..=3 {
                    let g = gaps(r, a, b);
                    let now = holds(r, a, b);
                    assert_eq!(g[now as usize], Some(0), "{r:?} {a} {b}");
                    let gap = g[!now as usize].unwrap() as i128;
                    // The fewest steps of `a`, either way, that flip the outcome.
                    let fewest = (1..=20)
                        .find(|&k| holds(r, a + k, b) != now || holds(r, a - k, b) != now)
                        .unwrap();
                    assert_eq!(gap, fewest, "{r:?} a={a} b={b}");
                }
            }
        }
        // On floats the steps are ulps, across binades and zero alike.
        let f = Float::from_f64;
        let one = f(1.0);
        assert_eq!(float_gaps(Predicate::Oeq, one.step(7), one), [Some(0), Some(7)]);
        assert_eq!(float_gaps(Predicate::Olt, one.step(-3), one), [Some(3), Some(0)]);
        assert_eq!(
            float_gaps(Predicate::Oge, f(-0.0).step(-2), f(0.0).step(2)),
            [Some(0), Some(4)]
        );
        assert_eq!(int_gaps(Predicate::ISlt, 16, 0xffff, 5), [Some(6), Some(0)], "-1 < 5");
    }

    #[test]
    fn nan_operands_fix_the_outcome() {
        let nan = Float::quiet_nan(FloatType::F64);
        let one = Float::from_f64(1.0);
        assert_eq!(
            float_distances(Predicate::Olt, nan, one),
            [0, crate::errbits::NOT_MEASURED]
        );
        assert_eq!(
            float_distances(Predicate::Ult, nan, one),
            [crate::errbits::NOT_MEASURED, 0]
        );
    }
}
