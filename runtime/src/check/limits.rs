//! Per-format constants the checkers compare against, built once.

use numfuzz_abi::op::FloatType;
use numfuzz_abi::value::Float;
use std::sync::OnceLock;

pub struct Limits {
    pub zero: Float,
    pub one: Float,
    pub max: Float,
    pub min_normal: Float,
    pub inf: Float,
    /// Smallest argument whose `exp` overflows (ln of the largest finite, rounded up).
    pub exp_overflow: Float,
    /// Argument below which `exp` is subnormal (ln of the smallest normal).
    pub exp_underflow: Float,
    /// Smallest |argument| whose `sinh`/`cosh` overflows (ln of twice the largest finite).
    pub sinh_overflow: Float,
    /// `exp2` overflows at emax + 1 and is subnormal below emin.
    pub exp2_overflow: Float,
    pub exp2_underflow: Float,
}

fn build(ty: FloatType) -> Limits {
    // High-precision logarithms (computed with Python's decimal module at 40 digits).
    let (ln_max, ln_min, ln_2max) = match ty {
        FloatType::F32 => (
            "88.72283905206835305365817656",
            "-87.33654475055310898657124730",
            "89.41598623262829836307540868",
        ),
        FloatType::F64 => (
            "709.7827128933839967322233899",
            "-708.3964185322641062244112281",
            "710.4758600739439420416406220",
        ),
        FloatType::F80 => (
            "11356.52340629414394949187686",
            "-11355.13711193302405887309661",
            "11357.21655347470389480129409",
        ),
    };
    let parse = |s: &str| Float::parse(ty, s).expect("valid constant");
    let up = |s: &str| {
        // Round the threshold up to the first value that is past it.
        let x = parse(s);
        x.step(1)
    };
    let emax = numfuzz_abi::value::Format::of(ty).emax();
    let emin = numfuzz_abi::value::Format::of(ty).emin();
    Limits {
        zero: Float::zero(ty, false),
        one: Float::one(ty),
        max: Float::max_finite(ty, false),
        min_normal: Float::min_normal(ty, false),
        inf: Float::infinity(ty, false),
        exp_overflow: up(ln_max),
        exp_underflow: parse(ln_min),
        sinh_overflow: up(ln_2max),
        exp2_overflow: parse(&(emax + 1).to_string()),
        exp2_underflow: parse(&emin.to_string()),
    }
}

impl Limits {
    pub fn of(ty: FloatType) -> &'static Limits {
        static ALL: OnceLock<[Limits; 3]> = OnceLock::new();
        &ALL.get_or_init(|| [build(FloatType::F32), build(FloatType::F64), build(FloatType::F80)])[ty as usize]
    }

    /// True for finite values with min_normal < |x| < max: an arithmetic result there
    /// cannot carry an exception flag (overflow under directed rounding gives max, underflow
    /// under rounding up gives min_normal).
    #[inline]
    pub fn strictly_normal(&self, x: Float) -> bool {
        let o = x.abs().ord();
        x.is_finite() && o > self.min_normal.ord() && o < self.max.ord()
    }
}
