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
    /// Smallest argument whose `exp` (and `expm1`) overflows: the first value above
    /// ln(largest finite).
    pub exp_overflow: Float,
    /// Largest argument whose `exp` is below the smallest normal: the first value below
    /// ln(smallest normal).
    pub exp_underflow: Float,
    /// Smallest |argument| whose `sinh`/`cosh` overflows: the first value above
    /// ln(2 * largest finite).
    pub sinh_overflow: Float,
    /// `exp2` overflows from emax + 1 on and is below the smallest normal under emin.
    pub exp2_overflow: Float,
    pub exp2_underflow: Float,
}

fn build(ty: FloatType) -> Limits {
    // The first values past each logarithm, found with exact rational arithmetic (100-digit
    // logarithms, then the neighbouring values of the format); checked against libm in the
    // unit tests for f32 and f64.
    let (exp_overflow, exp_underflow, sinh_overflow) = match ty {
        FloatType::F32 => ("0x1.62e43p+6", "-0x1.5d58ap+6", "0x1.65a9fap+6"),
        FloatType::F64 => ("0x1.62e42fefa39fp+9", "-0x1.6232bdd7abcd3p+9", "0x1.633ce8fb9f87ep+9"),
        FloatType::F80 => (
            "0x1.62e42fefa39ef358p+13",
            "-0x1.62d918ce2421d66p+13",
            "0x1.62e9bb80635d81d4p+13",
        ),
    };
    let exact = |s: &str| Float::parse(ty, s).expect("valid constant");
    let format = numfuzz_abi::value::FloatFormat::of(ty);
    Limits {
        zero: Float::zero(ty, false),
        one: Float::one(ty),
        max: Float::max_finite(ty, false),
        min_normal: Float::min_normal(ty, false),
        inf: Float::infinity(ty, false),
        exp_overflow: exact(exp_overflow),
        exp_underflow: exact(exp_underflow),
        sinh_overflow: exact(sinh_overflow),
        exp2_overflow: exact(&(format.emax() + 1).to_string()),
        exp2_underflow: exact(&format.emin().to_string()).step(-1),
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
