//! Classification rules of the checkers: IEEE 754 arithmetic (re-executed on the FPU, also
//! under directed rounding), conversions, and the C11 Annex F special cases of libm calls
//! (poles versus overflow, exact tiny results, signalling NaNs), plus ErrBits boundaries.
//! libm results come from the system libm, as the instrumented program would see them.

use super::*;
use numfuzz_abi::errbits::NOT_MEASURED;
use numfuzz_abi::kind::ExceptionKind::{self, DivByZero, Invalid, Overflow, Underflow};
use numfuzz_abi::op::{FloatType, Op};
use numfuzz_abi::value::Float;
use std::ffi::c_int;
use testkit::Rng;

unsafe extern "C" {
    fn lgamma(x: f64) -> f64;
    fn tgamma(x: f64) -> f64;
    fn erfc(x: f64) -> f64;
    fn ldexp(x: f64, n: c_int) -> f64;
    fn remainder(x: f64, y: f64) -> f64;
    fn fesetround(mode: c_int) -> c_int;
    fn fegetround() -> c_int;
}

// x86-64 glibc rounding-mode values.
const FE_DOWNWARD: c_int = 0x400;
const FE_UPWARD: c_int = 0x800;
const FE_TOWARDZERO: c_int = 0xc00;

fn d(x: f64) -> Float {
    Float::from_f64(x)
}

fn ops(a: Float, b: Float, c: Float, i: i64, r: Float) -> Operands {
    Operands { a, b, c, i, r }
}

/// The kinds raised, in kind order.
fn kinds(o: Outcome) -> Vec<ExceptionKind> {
    ExceptionKind::ALL.into_iter().filter(|&k| o.raised(k)).collect()
}

fn unary(op: Op, x: f64, r: f64) -> Outcome {
    classify(op, FloatType::F64, 0, &ops(d(x), d(0.0), d(0.0), 0, d(r)))
}

fn binary(op: Op, x: f64, y: f64, r: f64) -> Outcome {
    classify(op, FloatType::F64, 0, &ops(d(x), d(y), d(0.0), 0, d(r)))
}

fn float_int(op: Op, x: f64, n: i64, r: f64) -> Outcome {
    classify(op, FloatType::F64, 0, &ops(d(x), d(0.0), d(0.0), n, d(r)))
}

/// A libm call's classification with the system libm's result.
fn call(op: Op, x: f64) -> Vec<ExceptionKind> {
    // SAFETY: plain libm calls.
    let r = unsafe {
        match op {
            Op::Sqrt => x.sqrt(),
            Op::Exp => x.exp(),
            Op::Exp2 => x.exp2(),
            Op::Expm1 => x.exp_m1(),
            Op::Log => x.ln(),
            Op::Log2 => x.log2(),
            Op::Log10 => x.log10(),
            Op::Log1p => x.ln_1p(),
            Op::Sin => x.sin(),
            Op::Cos => x.cos(),
            Op::Tan => x.tan(),
            Op::Asin => x.asin(),
            Op::Acos => x.acos(),
            Op::Atan => x.atan(),
            Op::Sinh => x.sinh(),
            Op::Cosh => x.cosh(),
            Op::Tanh => x.tanh(),
            Op::Asinh => x.asinh(),
            Op::Acosh => x.acosh(),
            Op::Atanh => x.atanh(),
            Op::Cbrt => x.cbrt(),
            Op::Lgamma => lgamma(x),
            Op::Tgamma => tgamma(x),
            Op::Erfc => erfc(x),
            _ => panic!("not a unary call: {op}"),
        }
    };
    kinds(unary(op, x, r))
}

fn call2(op: Op, x: f64, y: f64) -> Vec<ExceptionKind> {
    // SAFETY: plain libm calls.
    let r = unsafe {
        match op {
            Op::Pow => x.powf(y),
            Op::Atan2 => x.atan2(y),
            Op::Hypot => x.hypot(y),
            Op::Fmod => x % y,
            Op::Remainder => remainder(x, y),
            _ => panic!("not a binary call: {op}"),
        }
    };
    kinds(binary(op, x, y, r))
}

fn call_ldexp(x: f64, n: i32) -> Vec<ExceptionKind> {
    // SAFETY: plain libm call.
    let r = unsafe { ldexp(x, n) };
    kinds(float_int(Op::Ldexp, x, n as i64, r))
}

const SNAN: f64 = f64::from_bits(0x7ff0_0000_0000_0001);
const NONE: [ExceptionKind; 0] = [];

#[test]
fn poles_are_divisions_by_zero_and_large_results_overflows() {
    assert_eq!(call(Op::Log, 0.0), [DivByZero]);
    assert_eq!(call(Op::Log, -0.0), [DivByZero]);
    assert_eq!(call(Op::Log2, 0.0), [DivByZero]);
    assert_eq!(call(Op::Log10, -0.0), [DivByZero]);
    assert_eq!(call(Op::Log1p, -1.0), [DivByZero]);
    assert_eq!(call(Op::Atanh, 1.0), [DivByZero]);
    assert_eq!(call(Op::Atanh, -1.0), [DivByZero]);
    assert_eq!(call(Op::Lgamma, 0.0), [DivByZero]);
    assert_eq!(call(Op::Lgamma, -2.0), [DivByZero]);
    assert_eq!(
        call(Op::Lgamma, -1e300),
        [DivByZero],
        "large negative values are integers"
    );
    assert_eq!(call(Op::Tgamma, 0.0), [DivByZero]);
    assert_eq!(call(Op::Tgamma, -0.0), [DivByZero]);
    assert_eq!(call2(Op::Pow, 0.0, -1.0), [DivByZero]);
    assert_eq!(call2(Op::Pow, -0.0, -3.0), [DivByZero]);
    assert_eq!(call2(Op::Pow, 0.0, -0.5), [DivByZero]);

    assert_eq!(call(Op::Exp, 710.0), [Overflow]);
    assert_eq!(call(Op::Expm1, 710.0), [Overflow]);
    assert_eq!(call(Op::Exp2, 1024.0), [Overflow]);
    assert_eq!(call(Op::Sinh, -711.0), [Overflow]);
    assert_eq!(call(Op::Cosh, 711.0), [Overflow]);
    assert_eq!(call(Op::Tgamma, 172.0), [Overflow]);
    assert_eq!(call(Op::Lgamma, 1e306), [Overflow]);
    assert_eq!(call2(Op::Pow, 10.0, 400.0), [Overflow]);
    assert_eq!(call2(Op::Pow, -10.0, 401.0), [Overflow]);
    assert_eq!(call2(Op::Hypot, 1.5e308, 1.5e308), [Overflow]);
    assert_eq!(call_ldexp(1.0, 1024), [Overflow]);
    assert_eq!(
        kinds(float_int(Op::Scalbn, 1.5, 1023, f64::INFINITY)),
        [Overflow],
        "1.5 * 2^1023 is past the largest finite"
    );

    // Infinite arguments give infinite results exactly: nothing to report.
    assert_eq!(call(Op::Log, f64::INFINITY), NONE);
    assert_eq!(call(Op::Exp, f64::INFINITY), NONE);
    assert_eq!(call(Op::Lgamma, f64::NEG_INFINITY), NONE);
    assert_eq!(call2(Op::Pow, f64::INFINITY, 2.0), NONE);
    assert_eq!(
        call2(Op::Hypot, f64::INFINITY, f64::NAN),
        NONE,
        "hypot(inf, NaN) is inf"
    );
    // Just below the thresholds.
    assert_eq!(call(Op::Exp, 709.78), NONE);
    assert_eq!(call(Op::Lgamma, -2.5), NONE);
    assert_eq!(call(Op::Tgamma, 171.6), NONE);
    assert_eq!(call_ldexp(1.0, 1023), NONE);
}

#[test]
fn domain_errors_and_signalling_nans_are_invalid() {
    assert_eq!(call(Op::Sqrt, -1.0), [Invalid]);
    assert_eq!(call(Op::Sqrt, -0.0), NONE, "sqrt(-0) is -0");
    assert_eq!(call(Op::Log, -1.0), [Invalid]);
    assert_eq!(call(Op::Log, f64::NEG_INFINITY), [Invalid]);
    assert_eq!(call(Op::Log1p, -2.0), [Invalid]);
    assert_eq!(call(Op::Acos, 2.0), [Invalid]);
    assert_eq!(call(Op::Asin, -1.5), [Invalid]);
    assert_eq!(call(Op::Acosh, 0.5), [Invalid]);
    assert_eq!(call(Op::Atanh, 2.0), [Invalid]);
    assert_eq!(call(Op::Sin, f64::INFINITY), [Invalid]);
    assert_eq!(call(Op::Cos, f64::NEG_INFINITY), [Invalid]);
    assert_eq!(call(Op::Tgamma, -1.0), [Invalid]);
    assert_eq!(call(Op::Tgamma, f64::NEG_INFINITY), [Invalid]);
    assert_eq!(call2(Op::Pow, -8.0, 1.0 / 3.0), [Invalid]);
    assert_eq!(call2(Op::Fmod, 1.0, 0.0), [Invalid]);
    assert_eq!(call2(Op::Fmod, f64::INFINITY, 2.0), [Invalid]);
    assert_eq!(call2(Op::Remainder, 1.0, -0.0), [Invalid]);
    // Quiet NaNs propagate without an exception; pow(NaN, 0) is 1.
    assert_eq!(call(Op::Sqrt, f64::NAN), NONE);
    assert_eq!(call(Op::Log, f64::NAN), NONE);
    assert_eq!(call2(Op::Pow, f64::NAN, 0.0), NONE);
    assert_eq!(call2(Op::Fmod, f64::NAN, 0.0), NONE);
    // Signalling NaNs are invalid operands whatever the result.
    assert_eq!(kinds(unary(Op::Sqrt, SNAN, f64::NAN)), [Invalid]);
    assert_eq!(kinds(unary(Op::Exp, SNAN, f64::NAN)), [Invalid]);
    assert_eq!(kinds(binary(Op::Pow, SNAN, 0.0, f64::NAN)), [Invalid]);
    assert_eq!(kinds(binary(Op::Hypot, f64::INFINITY, SNAN, f64::INFINITY)), [Invalid]);
    assert_eq!(kinds(float_int(Op::Ldexp, SNAN, 3, f64::NAN)), [Invalid]);
}

#[test]
fn exact_tiny_results_are_not_underflows() {
    let min_sub = f64::from_bits(1);
    // exp2 of an integer is an exact power of two.
    assert_eq!(kinds(unary(Op::Exp2, -1074.0, min_sub)), NONE);
    assert_eq!(kinds(unary(Op::Exp2, -1030.0, 2f64.powi(-1030))), NONE);
    assert_eq!(call(Op::Exp2, -1074.5), [Underflow]);
    assert_eq!(call(Op::Exp2, -1075.0), [Underflow], "2^-1075 rounds to 0");
    assert_eq!(call(Op::Exp2, -1022.0), NONE);
    // ldexp scales exactly unless bits fall off the end.
    assert_eq!(call_ldexp(1.5, -1030), NONE);
    assert_eq!(call_ldexp(1.0 + f64::EPSILON, -1030), [Underflow]);
    assert_eq!(call_ldexp(1.0, -1074), NONE);
    assert_eq!(call_ldexp(1.0, -1075), [Underflow]);
    assert_eq!(call_ldexp(0.0, -2000), NONE);
    assert_eq!(kinds(float_int(Op::Scalbn, 3.0, -1074, 3.0 * min_sub)), NONE);
    // Exact powers.
    assert_eq!(kinds(binary(Op::Pow, 2.0, -1074.0, min_sub)), NONE);
    assert_eq!(kinds(binary(Op::Pow, 0.5, 1074.0, min_sub)), NONE);
    assert_eq!(kinds(binary(Op::Pow, 2f64.powi(-537), 2.0, min_sub)), NONE);
    assert_eq!(kinds(binary(Op::Pow, -(2f64.powi(-358)), 3.0, -min_sub)), NONE);
    assert_eq!(kinds(float_int(Op::Powi, 2.0, -1070, 16.0 * min_sub)), NONE);
    assert_eq!(call2(Op::Pow, 3.0, -700.0), [Underflow]);
    assert_eq!(call2(Op::Pow, 2.0, -1075.0), [Underflow]);
    assert_eq!(call2(Op::Pow, 0.0, 3.0), NONE);
    // fmod and remainder are always exact.
    assert_eq!(call2(Op::Fmod, 3.0 * min_sub, 2.0 * min_sub), NONE);
    assert_eq!(call2(Op::Remainder, 7.0 * min_sub, 2.0 * min_sub), NONE);
    assert_eq!(call2(Op::Fmod, 1e-310, 1.0), NONE);
    assert_eq!(call2(Op::Fmod, 4.0, 2.0), NONE);
    // hypot: |x| when y is zero, and exact Pythagorean triples.
    assert_eq!(call2(Op::Hypot, 1e-310, 0.0), NONE);
    assert_eq!(
        kinds(binary(Op::Hypot, 3.0 * min_sub, 4.0 * min_sub, 5.0 * min_sub)),
        NONE
    );
    assert_eq!(
        kinds(binary(Op::Hypot, 3.0 * min_sub, 3.0 * min_sub, 4.0 * min_sub)),
        [Underflow]
    );
    // Exact zeros.
    assert_eq!(call(Op::Sin, -0.0), NONE);
    assert_eq!(call(Op::Log, 1.0), NONE);
    assert_eq!(call(Op::Acos, 1.0), NONE);
    assert_eq!(call(Op::Acosh, 1.0), NONE);
    assert_eq!(call(Op::Lgamma, 1.0), NONE);
    assert_eq!(call(Op::Lgamma, 2.0), NONE);
    assert_eq!(call2(Op::Atan2, 0.0, 5.0), NONE);
    // Tiny inexact results underflow, including the ones that return their argument.
    assert_eq!(call(Op::Exp, -746.0), [Underflow]);
    assert_eq!(call(Op::Exp, -740.0), [Underflow]);
    assert_eq!(call(Op::Sin, 1e-310), [Underflow]);
    assert_eq!(call(Op::Tanh, min_sub), [Underflow]);
    assert_eq!(call(Op::Erfc, 30.0), [Underflow]);
    assert_eq!(call2(Op::Atan2, 1e-300, 1e300), [Underflow]);
    // Normal results from subnormal arguments raise nothing.
    assert_eq!(call(Op::Sqrt, min_sub), NONE);
    assert_eq!(call(Op::Cbrt, 1e-310), NONE);
    assert_eq!(call(Op::Exp, -708.0), NONE);
}

/// Runs `f` under rounding mode `mode` (per thread), restoring the previous one.
fn with_rounding<T>(mode: c_int, f: impl FnOnce() -> T) -> T {
    // SAFETY: fenv calls on this thread only.
    let saved = unsafe { fegetround() };
    // SAFETY: as above.
    assert_eq!(unsafe { fesetround(mode) }, 0);
    let out = f();
    // SAFETY: as above.
    unsafe { fesetround(saved) };
    out
}

#[test]
fn directed_rounding_overflows_to_the_largest_finite() {
    // exp(710) rounded toward zero is DBL_MAX, and it overflowed.
    assert_eq!(kinds(unary(Op::Exp, 710.0, f64::MAX)), [Overflow]);
    assert_eq!(kinds(unary(Op::Sinh, -711.0, -f64::MAX)), [Overflow]);
    assert_eq!(kinds(unary(Op::Exp2, 1024.0, f64::MAX)), [Overflow]);
    assert_eq!(kinds(float_int(Op::Ldexp, 1.0, 1024, f64::MAX)), [Overflow]);
    // DBL_MAX as the exact result is not an overflow.
    assert_eq!(kinds(float_int(Op::Ldexp, f64::MAX / 2.0, 1, f64::MAX)), NONE);
    assert_eq!(kinds(binary(Op::Pow, f64::MAX, 1.0, f64::MAX)), NONE);

    // Arithmetic is re-executed under the program's rounding mode.
    let max = d(f64::MAX);
    let arith =
        |op: Op, a: f64, b: f64, r: Float| kinds(classify(op, FloatType::F64, 0, &ops(d(a), d(b), d(0.0), 0, r)));
    with_rounding(FE_TOWARDZERO, || {
        assert_eq!(arith(Op::FMul, f64::MAX, 2.0, max), [Overflow]);
        assert_eq!(arith(Op::FAdd, f64::MAX, 1e300, max), [Overflow]);
        assert_eq!(
            arith(Op::FAdd, f64::MAX, 1.0, max),
            NONE,
            "exactly representable after rounding down"
        );
    });
    with_rounding(FE_DOWNWARD, || {
        assert_eq!(arith(Op::FMul, -f64::MAX, 2.0, d(f64::NEG_INFINITY)), [Overflow]);
        assert_eq!(arith(Op::FMul, f64::MAX, 2.0, max), [Overflow]);
    });
    with_rounding(FE_UPWARD, || {
        // A tiny product rounded up to the smallest normal still underflowed.
        let min = f64::MIN_POSITIVE;
        assert_eq!(arith(Op::FMul, min, 1.0 - f64::EPSILON / 2.0, d(min)), [Underflow]);
        assert_eq!(arith(Op::FMul, min, 0.25, d(min / 4.0)), NONE, "exact");
        // A tiny product rounded up to a subnormal.
        assert_eq!(arith(Op::FMul, 1e-300, 1e-300, d(f64::from_bits(1))), [Underflow]);
    });
    // The rounding mode is restored for the rest of this thread.
    // SAFETY: plain query.
    assert_eq!(unsafe { fegetround() }, 0);
}

#[test]
fn arithmetic_follows_ieee_754() {
    let f64op =
        |op: Op, a: f64, b: f64, r: f64| kinds(classify(op, FloatType::F64, 0, &ops(d(a), d(b), d(0.0), 0, d(r))));
    let min = f64::MIN_POSITIVE;
    assert_eq!(f64op(Op::FSub, f64::INFINITY, f64::INFINITY, f64::NAN), [Invalid]);
    assert_eq!(f64op(Op::FMul, 0.0, f64::INFINITY, f64::NAN), [Invalid]);
    assert_eq!(f64op(Op::FDiv, 0.0, 0.0, f64::NAN), [Invalid]);
    assert_eq!(f64op(Op::FDiv, f64::INFINITY, f64::INFINITY, f64::NAN), [Invalid]);
    assert_eq!(f64op(Op::FDiv, 1.0, -0.0, f64::NEG_INFINITY), [DivByZero]);
    assert_eq!(f64op(Op::FDiv, f64::INFINITY, 0.0, f64::INFINITY), NONE);
    assert_eq!(f64op(Op::FMul, f64::MAX, 2.0, f64::INFINITY), [Overflow]);
    assert_eq!(f64op(Op::FMul, min, 0.5, min / 2.0), NONE, "exact subnormal");
    let above_min = f64::from_bits(min.to_bits() + 1);
    assert_eq!(f64op(Op::FMul, above_min, 0.5, min / 2.0), [Underflow]);
    assert_eq!(
        f64op(Op::FSub, 1.5 * min, 1.25 * min, 0.25 * min),
        NONE,
        "exact difference"
    );
    assert_eq!(f64op(Op::FAdd, f64::NAN, 1.0, f64::NAN), NONE);
    assert_eq!(f64op(Op::FAdd, SNAN, 1.0, f64::NAN), [Invalid]);
    assert_eq!(f64op(Op::FMul, 3.0, 4.0, 12.0), NONE);
    // frem is exact: only invalid operands raise.
    assert_eq!(f64op(Op::FRem, 1.0, 0.0, f64::NAN), [Invalid]);
    assert_eq!(f64op(Op::FRem, f64::INFINITY, 1.0, f64::NAN), [Invalid]);
    assert_eq!(f64op(Op::FRem, SNAN, 1.0, f64::NAN), [Invalid]);
    assert_eq!(f64op(Op::FRem, f64::NAN, 0.0, f64::NAN), NONE);
    assert_eq!(f64op(Op::FRem, 3e-320, 2e-320, 1e-320), NONE);
    // fma rounds once.
    let fma = |a: f64, b: f64, c: f64| {
        kinds(classify(
            Op::Fma,
            FloatType::F64,
            0,
            &ops(d(a), d(b), d(c), 0, d(a.mul_add(b, c))),
        ))
    };
    assert_eq!(fma(f64::MAX, 2.0, -f64::MAX), NONE);
    assert_eq!(fma(1e300, 1e300, 1.0), [Overflow]);
    assert_eq!(fma(1e300, 1e300, f64::NEG_INFINITY), NONE);
    assert_eq!(fma(0.0, f64::INFINITY, 1.0), [Invalid]);

    // f32 and f80.
    let f32op = |op: Op, a: f32, b: f32, r: f32| {
        let f = Float::from_f32;
        kinds(classify(op, FloatType::F32, 0, &ops(f(a), f(b), f(0.0), 0, f(r))))
    };
    assert_eq!(f32op(Op::FMul, 3e38, 2.0, f32::INFINITY), [Overflow]);
    assert_eq!(f32op(Op::FMul, 1e-30, 1e-10, 1e-30 * 1e-10), [Underflow]);
    assert_eq!(f32op(Op::FDiv, -1.0, 0.0, f32::NEG_INFINITY), [DivByZero]);
    let x80 = |s: &str| Float::parse(FloatType::F80, s).unwrap();
    let f80op = |op: Op, a: &str, b: &str, r: Float| {
        kinds(classify(op, FloatType::F80, 0, &ops(x80(a), x80(b), x80("0"), 0, r)))
    };
    assert_eq!(
        f80op(Op::FMul, "1e4000", "1e1000", Float::infinity(FloatType::F80, false)),
        [Overflow]
    );
    assert_eq!(f80op(Op::FMul, "1e300", "1e300", x80("1e600")), NONE);
    assert_eq!(
        f80op(Op::FSub, "inf", "inf", Float::quiet_nan(FloatType::F80)),
        [Invalid]
    );
    // An x87 unnormal (exponent set, integer bit clear) is an invalid operand.
    let unnormal = Float::from_bits(FloatType::F80, 0x3fff_u128 << 64 | 1);
    let r = Float::quiet_nan(FloatType::F80);
    let out = classify(Op::FAdd, FloatType::F80, 0, &ops(unnormal, x80("1"), x80("0"), 0, r));
    assert_eq!(kinds(out), [Invalid]);
}

#[test]
fn conversions_to_integers_and_narrower_floats() {
    let to_i32 = |x: Float| {
        kinds(classify(
            Op::FPToSI,
            FloatType::F64,
            32,
            &ops(x, d(0.0), d(0.0), 0, d(0.0)),
        ))
    };
    assert_eq!(to_i32(d(1e300)), [Invalid]);
    assert_eq!(to_i32(d(f64::NAN)), [Invalid]);
    assert_eq!(to_i32(d(-2147483648.9)), NONE);
    let to_u8 = |x: f64| {
        kinds(classify(
            Op::FPToUI,
            FloatType::F64,
            8,
            &ops(d(x), d(0.0), d(0.0), 0, d(0.0)),
        ))
    };
    assert_eq!(to_u8(255.9), NONE);
    assert_eq!(to_u8(256.0), [Invalid]);
    assert_eq!(to_u8(-1.0), [Invalid]);

    let narrow = |x: f64| {
        let r = x as f32 as f64;
        kinds(classify(
            Op::FPTrunc,
            FloatType::F64,
            FloatType::F32 as u8,
            &ops(d(x), d(0.0), d(0.0), 0, d(r)),
        ))
    };
    assert_eq!(narrow(1e300), [Overflow]);
    assert_eq!(narrow(-1e39), [Overflow]);
    assert_eq!(narrow(1e-40), [Underflow]);
    assert_eq!(narrow(2f64.powi(-140)), NONE, "exact f32 subnormal");
    assert_eq!(narrow(3.4028234663852886e38), NONE, "FLT_MAX");
    assert_eq!(narrow(f64::INFINITY), NONE);
    assert_eq!(narrow(0.1), NONE);
    let snan_to_f32 = classify(
        Op::FPTrunc,
        FloatType::F64,
        FloatType::F32 as u8,
        &ops(d(SNAN), d(0.0), d(0.0), 0, d(f64::NAN)),
    );
    assert_eq!(kinds(snan_to_f32), [Invalid]);
    // Rounding toward zero narrows an overflowing value to FLT_MAX, still an overflow.
    with_rounding(FE_TOWARDZERO, || {
        let r = d(f32::MAX as f64);
        let out = classify(
            Op::FPTrunc,
            FloatType::F64,
            FloatType::F32 as u8,
            &ops(d(1e300), d(0.0), d(0.0), 0, r),
        );
        assert_eq!(kinds(out), [Overflow]);
    });
}

/// libm's `f` on `x` (of type `ty`), widened to f64.
fn libm_at(ty: FloatType, x: Float, f32_fn: fn(f32) -> f32, f64_fn: fn(f64) -> f64) -> f64 {
    match ty {
        FloatType::F32 => f32_fn(x.as_f32()) as f64,
        _ => f64_fn(x.as_f64()),
    }
}

#[test]
fn overflow_thresholds_match_libm() {
    for ty in [FloatType::F32, FloatType::F64] {
        let lim = Limits::of(ty);
        let exp = |x: Float| libm_at(ty, x, f32::exp, f64::exp);
        let sinh = |x: Float| libm_at(ty, x, f32::sinh, f64::sinh);
        let min_normal = Float::min_normal(ty, false)
            .convert_exact(FloatType::F64)
            .unwrap()
            .as_f64();
        assert!(exp(lim.exp_overflow).is_infinite(), "{ty} exp");
        assert!(exp(lim.exp_overflow.step(-1)).is_finite(), "{ty} exp");
        assert!(sinh(lim.sinh_overflow).is_infinite(), "{ty} sinh");
        assert!(sinh(lim.sinh_overflow.step(-1)).is_finite(), "{ty} sinh");
        assert!(exp(lim.exp_underflow) < min_normal, "{ty} exp tiny");
        assert!(exp(lim.exp_underflow.step(1)) >= min_normal, "{ty} exp tiny");
    }
}

#[test]
fn errbits_measure_the_distance_to_each_boundary() {
    let eb = |o: Outcome, k: ExceptionKind| o.errbits[k as usize];
    // exp: the argument's distance to the overflow threshold.
    let far = eb(unary(Op::Exp, 1.0, 1f64.exp()), Overflow);
    let near = eb(unary(Op::Exp, 709.0, 709f64.exp()), Overflow);
    assert!(far > near && near >= 1, "{far} {near}");
    assert_eq!(eb(unary(Op::Exp, 710.0, f64::INFINITY), Overflow), 0);
    let last = Limits::of(FloatType::F64).exp_overflow.step(-1).as_f64();
    assert_eq!(eb(unary(Op::Exp, last, last.exp()), Overflow), 1);
    // log: the argument's distance to the pole at zero.
    let far = eb(unary(Op::Log, 1.0, 0.0), DivByZero);
    let near = eb(unary(Op::Log, 1e-300, (1e-300f64).ln()), DivByZero);
    assert!(far > near && near >= 1);
    // sqrt: distance to the domain edge; acos: distance to ±1.
    let far = eb(unary(Op::Sqrt, 100.0, 10.0), Invalid);
    let near = eb(unary(Op::Sqrt, 1e-300, 1e-150), Invalid);
    assert!(far > near && near >= 1);
    let far = eb(unary(Op::Acos, 0.0, 0f64.acos()), Invalid);
    let near = eb(unary(Op::Acos, -0.999, (-0.999f64).acos()), Invalid);
    assert!(far > near && near >= 1);
    // lgamma: a negative argument's distance to the nearest pole (integer).
    let far = eb(unary(Op::Lgamma, -2.5, 0.0), DivByZero);
    let near = eb(unary(Op::Lgamma, -2.000001, 0.0), DivByZero);
    assert!(far > near && near >= 1);
    // Kinds without a boundary stay unmeasured.
    assert_eq!(eb(unary(Op::Cos, 1.0, 1f64.cos()), Overflow), NOT_MEASURED);
    assert_eq!(eb(unary(Op::Exp, 1.0, 1f64.exp()), Invalid), NOT_MEASURED);

    // Arithmetic: the result's distance to the largest finite and the smallest normal, the
    // divisor's distance to zero.
    let mul = |a: f64, b: f64| classify(Op::FMul, FloatType::F64, 0, &ops(d(a), d(b), d(0.0), 0, d(a * b)));
    assert!(eb(mul(1e300, 10.0), Overflow) > eb(mul(1e300, 1e8), Overflow));
    assert!(eb(mul(1e-300, 1e-5), Underflow) < eb(mul(1e-300, 1e10), Underflow));
    assert_eq!(eb(mul(1e-300, 1e-10), Underflow), 0);
    assert_eq!(eb(mul(1.0, 2.0), DivByZero), NOT_MEASURED);
    let div = |a: f64, b: f64| classify(Op::FDiv, FloatType::F64, 0, &ops(d(a), d(b), d(0.0), 0, d(a / b)));
    assert!(eb(div(1.0, 1e-300), DivByZero) < eb(div(1.0, 1.0), DivByZero));
    assert_eq!(eb(div(1.0, 0.0), DivByZero), 0);
}

/// An f64 biased toward specials and the ends of the exponent range.
fn operand(rng: &mut Rng) -> f64 {
    const SPECIALS: [f64; 9] = [
        0.0,
        -0.0,
        1.0,
        f64::MIN_POSITIVE,
        f64::MAX,
        f64::INFINITY,
        5e-324,
        -1e-310,
        f64::NAN,
    ];
    let sign_and_fraction = rng.next_u64() & 0x800f_ffff_ffff_ffff;
    match rng.next_u64() % 4 {
        0 => SPECIALS[(rng.next_u64() % SPECIALS.len() as u64) as usize],
        1 => f64::from_bits(sign_and_fraction | ((rng.next_u64() % 40) << 52)),
        2 => f64::from_bits(sign_and_fraction | ((0x7fe - rng.next_u64() % 40) << 52)),
        _ => f64::from_bits(rng.next_u64()),
    }
}

fn apply<
    T: std::ops::Add<Output = T> + std::ops::Sub<Output = T> + std::ops::Mul<Output = T> + std::ops::Div<Output = T>,
>(
    op: Op,
    a: T,
    b: T,
) -> T {
    match op {
        Op::FAdd => a + b,
        Op::FSub => a - b,
        Op::FMul => a * b,
        _ => a / b,
    }
}

#[test]
fn fast_path_agrees_with_the_full_classification() {
    let mut rng = Rng(0x5eed);
    let mut fast_hits = 0;
    for k in 0..200_000usize {
        let (a, b) = (operand(&mut rng), operand(&mut rng));
        let op = [Op::FAdd, Op::FSub, Op::FMul, Op::FDiv][k % 4];
        let f32s = |x: f32| Float::from_f32(x);
        let (a32, b32) = (a as f32, b as f32);
        for (ty, o) in [
            (FloatType::F64, ops(d(a), d(b), d(0.0), 0, d(apply(op, a, b)))),
            (
                FloatType::F32,
                ops(f32s(a32), f32s(b32), f32s(0.0), 0, f32s(apply(op, a32, b32))),
            ),
        ] {
            if let Some(fast) = arith::fast(op, ty, &o) {
                fast_hits += 1;
                assert_eq!(
                    fast,
                    classify_fully(op, ty, 0, &o),
                    "{op} {ty} {:?} {:?} = {:?}",
                    o.a,
                    o.b,
                    o.r
                );
            }
        }
    }
    assert!(fast_hits > 100_000, "the fast path took only {fast_hits} cases");
}

#[test]
fn the_f80_fast_path_agrees_with_the_full_classification() {
    let mut rng = Rng(0xf80);
    let mut fast_hits = 0;
    // Valid x86_fp80 encodings: exponents spread over the whole range and near both ends.
    let f80 = |rng: &mut Rng| {
        let exp = match rng.next_u64() % 4 {
            0 => rng.next_u64() % 0x8000,
            1 => rng.next_u64() % 40,
            2 => 0x7ffe - rng.next_u64() % 40,
            _ => 0x3fff - 20 + rng.next_u64() % 40,
        } as u128;
        let integer_bit = u128::from(exp != 0) << 63;
        let fraction = u128::from(rng.next_u64() >> 1);
        let sign = u128::from(rng.next_u64() & 1) << 79;
        Float {
            ty: FloatType::F80,
            bits: sign | exp << 64 | integer_bit | fraction,
        }
    };
    for k in 0..200_000usize {
        let op = [Op::FAdd, Op::FSub, Op::FMul, Op::FDiv][k % 4];
        let (a, b, r) = (f80(&mut rng), f80(&mut rng), f80(&mut rng));
        // r is not a op b here, so only the results that rule out a flag by their size alone
        // are compared; the exact tiny results are the next test's.
        if r.exp_field() == 0 {
            continue;
        }
        let o = ops(a, b, Float::zero(FloatType::F80, false), 0, r);
        if let Some(fast) = arith::fast(op, FloatType::F80, &o) {
            fast_hits += 1;
            assert_eq!(
                fast,
                classify_fully(op, FloatType::F80, 0, &o),
                "{op} {a:?} {b:?} = {r:?}"
            );
        }
    }
    assert!(fast_hits > 50_000, "the fast path took only {fast_hits} cases");
}

/// The f80 fast path's exact tiny results, with their true values: a sum or difference that
/// cancels or stays subnormal, a product with a zero factor, a zero dividend and an infinite
/// divisor. The full classification re-executes each on the x87, so a flag the fast path
/// wrongly rules out would show.
#[test]
fn f80_exact_tiny_results_take_the_fast_path_and_agree() {
    let mut rng = Rng(0x7e7);
    let f80 = |sign: u64, exp: u64, mant: u64| Float {
        ty: FloatType::F80,
        bits: u128::from(sign & 1) << 79 | u128::from(exp) << 64 | u128::from(mant),
    };
    let zero = f80(0, 0, 0);
    let infinity = f80(0, 0x7fff, 1 << 63);
    for _ in 0..20_000 {
        let x = f80(rng.next_u64(), 1 + rng.next_u64() % 0x7ffd, rng.next_u64() | 1 << 63);
        let (m1, m2) = (rng.next_u64() >> 2, rng.next_u64() >> 2);
        let (s1, s2) = (f80(0, 0, m1), f80(0, 0, m2));
        let cases = [
            (Op::FSub, x, x, zero),
            (Op::FAdd, x, x.neg(), zero),
            (Op::FAdd, s1, s2, f80(0, 0, m1 + m2)),
            (Op::FSub, s1, s2.neg(), f80(0, 0, m1 + m2)),
            (Op::FMul, zero, x.abs(), zero),
            (Op::FDiv, zero, x.abs(), zero),
            (Op::FDiv, x.abs(), infinity, zero),
        ];
        for (op, a, b, r) in cases {
            let o = ops(a, b, zero, 0, r);
            let fast = arith::fast(op, FloatType::F80, &o).unwrap_or_else(|| panic!("{op} {a:?} {b:?} = {r:?}: slow"));
            assert_eq!(
                fast,
                classify_fully(op, FloatType::F80, 0, &o),
                "{op} {a:?} {b:?} = {r:?}"
            );
        }
    }
}

/// Operands at and around the special values, for the raw-bits answers' tests.
const SPECIAL_OPERANDS: [f64; 14] = [
    0.0,
    -0.0,
    1.5,
    -3.0,
    f64::MIN_POSITIVE,
    5e-324,
    1e-300,
    f64::MAX,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    -f64::NAN,
    f64::from_bits(0x7ff0_0000_0000_0001), // signalling
    f64::from_bits(0xfff4_0000_0000_0000), // signalling, negative
];

/// The raw-bits answer for operations that only carry a special operand along agrees with the
/// full classification wherever it answers, and answers for the cases it is for: quiet NaNs
/// and infinities carried through, quotients measuring their divisor.
#[test]
fn carried_specials_agree_with_the_full_classification() {
    let specials = SPECIAL_OPERANDS;
    let mut answered = 0;
    for op in [Op::FAdd, Op::FSub, Op::FMul, Op::FDiv] {
        for &a in &specials {
            for &b in &specials {
                let r = apply(op, a, b);
                let o = ops(d(a), d(b), d(0.0), 0, d(r));
                if let Some(errbits) = arith::carried(op, FloatType::F64, a.to_bits(), b.to_bits(), r.to_bits()) {
                    answered += 1;
                    let full: Outcome = classify_fully(op, FloatType::F64, 0, &o);
                    assert_eq!((0, errbits), (full.raised, full.errbits), "{op} {a:e} {b:e} = {r:e}");
                }
                let (a32, b32) = (a as f32, b as f32);
                let r32 = apply(op, a32, b32);
                let f = |x: f32| u64::from(x.to_bits());
                if let Some(errbits) = arith::carried(op, FloatType::F32, f(a32), f(b32), f(r32)) {
                    let o = ops(
                        Float::from_f32(a32),
                        Float::from_f32(b32),
                        Float::from_f32(0.0),
                        0,
                        Float::from_f32(r32),
                    );
                    let full: Outcome = classify_fully(op, FloatType::F32, 0, &o);
                    assert_eq!(
                        (0, errbits),
                        (full.raised, full.errbits),
                        "{op} f32 {a32:e} {b32:e} = {r32:e}"
                    );
                }
            }
        }
    }
    assert!(answered > 150, "only {answered} f64 cases answered");
    let carried =
        |op, a: f64, b: f64| arith::carried(op, FloatType::F64, a.to_bits(), b.to_bits(), apply(op, a, b).to_bits());
    let signalling = f64::from_bits(0x7ff0_0000_0000_0001);
    assert!(carried(Op::FAdd, f64::NAN, 1.0).is_some(), "a quiet NaN carried");
    assert!(
        carried(Op::FAdd, signalling, 1.0).is_none(),
        "a signalling NaN raises Invalid"
    );
    assert!(
        carried(Op::FAdd, f64::NAN, signalling).is_none(),
        "so does one beside a quiet NaN"
    );
    assert!(carried(Op::FMul, f64::INFINITY, 2.0).is_some(), "an infinity carried");
    assert!(
        carried(Op::FSub, f64::INFINITY, f64::INFINITY).is_none(),
        "inf - inf is Invalid"
    );
    assert!(carried(Op::FMul, f64::MAX, 2.0).is_none(), "an overflow is not carried");
    assert!(carried(Op::FDiv, 1.0, 0.0).is_none(), "a pole is not carried");
    let mut by_zero = [NOT_MEASURED; 4];
    by_zero[DivByZero as usize] = 1;
    assert_eq!(
        carried(Op::FDiv, f64::INFINITY, 0.0),
        Some(by_zero),
        "inf / 0: the divisor at distance 1"
    );
    assert_eq!(
        carried(Op::FDiv, f64::NAN, f64::NAN),
        Some([NOT_MEASURED; 4]),
        "no divisor to measure"
    );
}

/// The raw-bits kind of a special result agrees with the classes the generic `recurring`
/// reads (zero or subnormal: Underflow, NaN: Invalid, infinite: Overflow, or DivByZero for a
/// quotient by zero), and so does the finiteness of the operands.
#[test]
fn special_kinds_on_bits_agree_with_the_value_classes() {
    use numfuzz_abi::value::FloatClass;
    let expected = |op: Op, r: Float, b_zero: bool, finite: bool| {
        let kind = match r.class() {
            FloatClass::Zero | FloatClass::Subnormal => Underflow,
            FloatClass::Nan { .. } => Invalid,
            FloatClass::Infinite if op != Op::FDiv => Overflow,
            FloatClass::Infinite if b_zero => DivByZero,
            _ => return None,
        };
        Some((kind, finite))
    };
    let values = SPECIAL_OPERANDS;
    let mut answered = 0;
    for op in [Op::FAdd, Op::FSub, Op::FMul, Op::FDiv] {
        for &a in &values {
            for &b in &values {
                let r = apply(op, a, b);
                let bits = arith::special_kind(op, FloatType::F64, a.to_bits(), b.to_bits(), r.to_bits());
                let finite = a.is_finite() && b.is_finite();
                assert_eq!(bits, expected(op, d(r), b == 0.0, finite), "{op} {a:e} {b:e} = {r:e}");
                answered += usize::from(bits.is_some());
                let (a32, b32) = (a as f32, b as f32);
                let r32 = apply(op, a32, b32);
                let f = |x: f32| u64::from(x.to_bits());
                let finite32 = a32.is_finite() && b32.is_finite();
                assert_eq!(
                    arith::special_kind(op, FloatType::F32, f(a32), f(b32), f(r32)),
                    expected(op, Float::from_f32(r32), b32 == 0.0, finite32),
                    "{op} f32 {a32:e} {b32:e} = {r32:e}"
                );
            }
        }
    }
    assert!(answered > 200, "only {answered} special results");
    assert_eq!(
        arith::special_kind(Op::FMul, FloatType::F64, 0, 0, 2.0f64.to_bits()),
        None
    );
    assert_eq!(
        arith::special_kind(Op::FRem, FloatType::F64, 0, 0, 0),
        None,
        "other operations"
    );
    assert_eq!(
        arith::special_kind(Op::FMul, FloatType::F80, 0, 0, 0),
        None,
        "other formats"
    );
}
