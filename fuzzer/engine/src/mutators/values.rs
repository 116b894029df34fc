//! Value tables: IEEE-754 boundary values, the constants at which numerical code changes
//! behaviour, and the integer values that guard integer code.

use numfuzz_abi::value::{Float, FloatFormat};
use numfuzz_abi::{FieldType, FloatType};

/// Decimal expansions (40 significant digits, computed with mpmath at 80 digits) of
/// thresholds that depend on the format: above `ln_max` exp() overflows, below
/// `ln_min_normal` it underflows, below `ln_min_subnormal` it is 0, above `sqrt_max` x*x
/// overflows. Parsing rounds them to nearest-even in the format.
struct Thresholds {
    ln_max: &'static str,
    ln_min_normal: &'static str,
    ln_min_subnormal: &'static str,
    sqrt_max: &'static str,
}

const fn thresholds(ty: FloatType) -> Thresholds {
    match ty {
        FloatType::F32 => Thresholds {
            ln_max: "8.872283905206835305365817656031404273372e+1",
            ln_min_normal: "-8.733654475055310898657124730373024757751e+1",
            ln_min_subnormal: "-1.032789299034318511031675860972683086432e+2",
            sqrt_max: "1.84467435239537295359997558593659050526e+19",
        },
        FloatType::F64 => Thresholds {
            ln_max: "7.09782712893383996732223389910657145504e+2",
            ln_min_normal: "-7.083964185322641062244112281302564525732e+2",
            ln_min_subnormal: "-7.444400719213812623141072984460816341131e+2",
            sqrt_max: "1.340780792994259635529117131950436954697e+154",
        },
        FloatType::F80 => Thresholds {
            ln_max: "1.135652340629414394949187686786214061613e+4",
            ln_min_normal: "-1.135513711193302405887309661372784853821e+4",
            ln_min_subnormal: "-1.1398805384308300613366382237379713662e+4",
            sqrt_max: "1.09074813561941592943341945727695575314e+2466",
        },
    }
}

const PI: &str = "3.141592653589793238462643383279502884197";
const FRAC_PI_2: &str = "1.570796326794896619231321691639751442099";

fn parse(ty: FloatType, text: &str) -> Float {
    Float::parse(ty, text).expect("constant table holds valid literals")
}

/// Largest subnormal: the value just below the smallest normal.
pub fn max_subnormal(ty: FloatType, negative: bool) -> Float {
    Float::min_normal(ty, false).step(-1).with_sign(negative)
}

/// The signalling NaN with the quiet bit clear and the next fraction bit set (what C's
/// `__builtin_nans("")` gives: 0x7ff4000000000000 for f64).
pub fn signalling_nan(ty: FloatType) -> Float {
    let inf = Float::infinity(ty, false);
    let frac_bits = match ty {
        FloatType::F80 => 63,
        _ => FloatFormat::of(ty).precision - 1,
    };
    Float::from_bits(ty, inf.bits | (1u128 << (frac_bits - 2)))
}

/// IEEE boundary values: ±0, ±smallest subnormal, ±largest subnormal, ±smallest normal,
/// ±largest finite, ±infinity, quiet NaN, signalling NaN, ±1.
pub fn boundary_values(ty: FloatType) -> Vec<Float> {
    let mut out = Vec::with_capacity(18);
    for negative in [false, true] {
        out.extend([
            Float::zero(ty, negative),
            Float::min_subnormal(ty, negative),
            max_subnormal(ty, negative),
            Float::min_normal(ty, negative),
            Float::max_finite(ty, negative),
            Float::infinity(ty, negative),
            Float::one(ty).with_sign(negative),
        ]);
    }
    out.push(Float::quiet_nan(ty));
    out.push(signalling_nan(ty));
    out
}

/// Constants that guard numerical code: ±0.5, ±2, 1±ulp, -1±ulp, π/2, π, ln(max),
/// ln(min normal), ln(min subnormal), sqrt(max), sqrt(min normal) (= 2^(emin/2), exact).
pub fn interesting_constants(ty: FloatType) -> Vec<Float> {
    let t = thresholds(ty);
    let one = Float::one(ty);
    let half = Float::pow2(ty, -1);
    let two = Float::pow2(ty, 1);
    vec![
        half,
        half.neg(),
        two,
        two.neg(),
        one.step(1),
        one.step(-1),
        one.neg().step(1),
        one.neg().step(-1),
        parse(ty, FRAC_PI_2),
        parse(ty, PI),
        parse(ty, t.ln_max),
        parse(ty, t.ln_min_normal),
        parse(ty, t.ln_min_subnormal),
        parse(ty, t.sqrt_max),
        Float::pow2(ty, FloatFormat::of(ty).emin() / 2),
    ]
}

/// Every special value of a format: [`boundary_values`] then [`interesting_constants`]
/// (no duplicates). Used by the special-value mutator and for seeds.
pub fn special_values(ty: FloatType) -> Vec<Float> {
    let mut out = boundary_values(ty);
    for c in interesting_constants(ty) {
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// Integer values that guard integer code, all within the field's range, ascending: 0, ±1,
/// min, min+1, max, max-1, ±2^k, 2^k-1 masks (0x7f…, 0xff…), and AFL's interesting values
/// (16, 32, 64, 100, 1000, 1024, 4096, 65535, -129, -32769, …).
///
/// Panics on a float field type.
pub fn int_interesting_values(ty: FieldType) -> Vec<i128> {
    let (lo, hi) = ty
        .int_range()
        .expect("int_interesting_values takes an integer field type");
    let bits = ty.size() as u32 * 8;
    let mut out = vec![0, 1, -1, lo, lo + 1, hi, hi - 1];
    for k in 0..=bits {
        let p = 1i128 << k;
        out.extend([p, p - 1, -p, p + 1]);
    }
    out.extend([
        16,
        32,
        64,
        100,
        127,
        128,
        255,
        256,
        512,
        1000,
        1024,
        4096,
        32767,
        32768,
        65535,
        65536,
        -128,
        -129,
        -32768,
        -32769,
        100_663_045,
        -100_663_046,
        2_147_483_647,
        -2_147_483_648,
    ]);
    out.retain(|v| (lo..=hi).contains(v));
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use numfuzz_abi::value::FloatClass;

    fn bits64(x: Float) -> u64 {
        assert_eq!(x.ty, FloatType::F64);
        x.bits as u64
    }

    #[test]
    fn f64_boundaries_are_bit_exact() {
        let ty = FloatType::F64;
        assert_eq!(bits64(Float::min_subnormal(ty, false)), 0x0000_0000_0000_0001);
        assert_eq!(bits64(Float::min_subnormal(ty, true)), 0x8000_0000_0000_0001);
        assert_eq!(bits64(max_subnormal(ty, false)), 0x000f_ffff_ffff_ffff);
        assert_eq!(bits64(Float::min_normal(ty, false)), 0x0010_0000_0000_0000);
        assert_eq!(bits64(Float::max_finite(ty, false)), 0x7fef_ffff_ffff_ffff);
        assert_eq!(bits64(Float::max_finite(ty, true)), 0xffef_ffff_ffff_ffff);
        assert_eq!(bits64(Float::infinity(ty, true)), 0xfff0_0000_0000_0000);
        assert_eq!(bits64(Float::quiet_nan(ty)), 0x7ff8_0000_0000_0000);
        assert_eq!(bits64(signalling_nan(ty)), 0x7ff4_0000_0000_0000);
        assert_eq!(bits64(Float::zero(ty, true)), 0x8000_0000_0000_0000);
        let values = boundary_values(ty);
        assert_eq!(values.len(), 16);
        for x in [
            0.0,
            -0.0,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1.0,
            -1.0,
        ] {
            assert!(values.contains(&Float::from_f64(x)), "{x} missing");
        }
    }

    #[test]
    fn f32_boundaries_match_rust() {
        let ty = FloatType::F32;
        let values: Vec<u32> = boundary_values(ty).iter().map(|x| x.bits as u32).collect();
        for x in [
            f32::from_bits(1),
            f32::from_bits(0x007f_ffff),
            f32::MIN_POSITIVE,
            f32::MAX,
            f32::INFINITY,
        ] {
            assert!(values.contains(&x.to_bits()), "{x:e} missing");
            assert!(values.contains(&(-x).to_bits()), "{:e} missing", -x);
        }
        assert!(values.contains(&0x7fc0_0000) && values.contains(&0x7fa0_0000));
    }

    #[test]
    fn f80_boundaries_are_bit_exact() {
        let ty = FloatType::F80;
        let split = |x: Float| ((x.bits >> 64) as u16, x.bits as u64);
        assert_eq!(split(Float::max_finite(ty, false)), (0x7ffe, 0xffff_ffff_ffff_ffff));
        assert_eq!(split(Float::max_finite(ty, true)), (0xfffe, 0xffff_ffff_ffff_ffff));
        assert_eq!(split(Float::min_normal(ty, false)), (0x0001, 0x8000_0000_0000_0000));
        assert_eq!(split(max_subnormal(ty, false)), (0x0000, 0x7fff_ffff_ffff_ffff));
        assert_eq!(split(Float::min_subnormal(ty, false)), (0x0000, 1));
        assert_eq!(split(Float::infinity(ty, false)), (0x7fff, 0x8000_0000_0000_0000));
        assert_eq!(split(Float::quiet_nan(ty)), (0x7fff, 0xc000_0000_0000_0000));
        assert_eq!(split(signalling_nan(ty)), (0x7fff, 0xa000_0000_0000_0000));
        assert_eq!(signalling_nan(ty).class(), FloatClass::Nan { quiet: false });
    }

    #[test]
    fn every_special_has_the_intended_class() {
        for ty in FloatType::ALL {
            let classes: Vec<FloatClass> = boundary_values(ty).iter().map(|x| x.class()).collect();
            let count = |c: FloatClass| classes.iter().filter(|&&k| k == c).count();
            assert_eq!(count(FloatClass::Zero), 2, "{ty}");
            assert_eq!(count(FloatClass::Subnormal), 4, "{ty}");
            assert_eq!(count(FloatClass::Normal), 6, "{ty}");
            assert_eq!(count(FloatClass::Infinite), 2, "{ty}");
            assert_eq!(count(FloatClass::Nan { quiet: true }), 1, "{ty}");
            assert_eq!(count(FloatClass::Nan { quiet: false }), 1, "{ty}");
            for c in interesting_constants(ty) {
                assert_eq!(c.class(), FloatClass::Normal, "{ty} {c:?}");
            }
            let all = special_values(ty);
            for (i, x) in all.iter().enumerate() {
                assert!(!all[..i].contains(x), "{ty}: {x:?} twice");
            }
        }
    }

    /// Distance in ulps between two values of one format.
    fn ulps(a: Float, b: Float) -> i128 {
        (a.ord() - b.ord()).abs()
    }

    #[test]
    fn f64_constants_match_the_standard_library() {
        let ty = FloatType::F64;
        let c = interesting_constants(ty);
        let has = |x: f64, tolerance: i128| c.iter().any(|&v| ulps(v, Float::from_f64(x)) <= tolerance);
        assert!(has(std::f64::consts::FRAC_PI_2, 0));
        assert!(has(std::f64::consts::PI, 0));
        assert!(has(f64::MAX.sqrt(), 0), "sqrt is correctly rounded");
        assert!(has(f64::MIN_POSITIVE.sqrt(), 0));
        assert!(has(1.0 + f64::EPSILON, 0) && has(1.0 - f64::EPSILON / 2.0, 0));
        assert!(has(0.5, 0) && has(-2.0, 0));
        // libm's log is within an ulp.
        assert!(has(f64::MAX.ln(), 1));
        assert!(has(f64::MIN_POSITIVE.ln(), 1));
        assert!(has(f64::from_bits(1).ln(), 1));
        // The thresholds do what they are for, up to one ulp.
        let ln_max = Float::parse(ty, thresholds(ty).ln_max).unwrap();
        assert!(ln_max.step(-1).as_f64().exp().is_finite());
        assert!(ln_max.step(1).as_f64().exp().is_infinite());
        let sqrt_max = Float::parse(ty, thresholds(ty).sqrt_max).unwrap().as_f64();
        assert!((sqrt_max * sqrt_max).is_finite());
        let above = Float::from_f64(sqrt_max).step(1).as_f64();
        assert!((above * above).is_infinite());
    }

    #[test]
    fn f32_constants_match_the_standard_library() {
        let c = interesting_constants(FloatType::F32);
        let has = |x: f32| c.iter().any(|&v| ulps(v, Float::from_f32(x)) <= 1);
        assert!(has(std::f32::consts::FRAC_PI_2));
        assert!(has(f32::MAX.sqrt()));
        assert!(has((f32::MAX as f64).ln() as f32));
        assert!(has((f32::MIN_POSITIVE as f64).ln() as f32));
        assert!(has((f32::from_bits(1) as f64).ln() as f32));
    }

    #[test]
    fn logarithm_thresholds_are_multiples_of_ln2() {
        // ln(max) = (emax+1)·ln2 + ln(1-2^-p), ln(min normal) = emin·ln2, ln(min subnormal) =
        // (emin-p+1)·ln2: computed here in f64 (a couple of ulps of error) as an independent
        // check of the tables' leading 16 digits, f80 included.
        use std::f64::consts::LN_2;
        for ty in FloatType::ALL {
            let f = FloatFormat::of(ty);
            let t = thresholds(ty);
            let p = f.precision as i32;
            // Compared in f32 for f32, in f64 for f64 and f80.
            let near = |s: &str, expected: f64| {
                let (got, want) = match ty {
                    FloatType::F32 => (parse(ty, s), Float::from_f32(expected as f32)),
                    _ => (
                        Float::parse(FloatType::F64, &parse(ty, s).to_string()).unwrap(),
                        Float::from_f64(expected),
                    ),
                };
                let d = ulps(got, want);
                assert!(d <= 2, "{ty}: {s} is {d} ulps from {expected}");
            };
            near(t.ln_max, (f.emax() + 1) as f64 * LN_2 + (-(2f64.powi(-p))).ln_1p());
            near(t.ln_min_normal, f.emin() as f64 * LN_2);
            near(t.ln_min_subnormal, (f.emin() - p + 1) as f64 * LN_2);
        }
    }

    #[test]
    fn sqrt_max_is_correctly_rounded_in_every_format() {
        // With s = m·2^e (ulp 2^e), sqrt(max) must lie within half an ulp of s:
        // (2m-1)²·2^(2e-2) <= max <= (2m+1)²·2^(2e-2), checked in exact integers.
        use num_bigint::BigUint;
        for ty in FloatType::ALL {
            let s = parse(ty, thresholds(ty).sqrt_max);
            let (m, e) = s.decompose().unwrap();
            assert_eq!(
                m >> (FloatFormat::of(ty).precision - 1),
                1,
                "{ty}: normal, full-width significand"
            );
            let (big_m, big_e) = Float::max_finite(ty, false).decompose().unwrap();
            // Scale both sides by 2^-(2e-2); big_e - (2e-2) is small and non-negative here.
            let shift = big_e - (2 * e - 2);
            assert!((0..200).contains(&shift), "{ty}: shift {shift}");
            let max = BigUint::from(big_m) << shift as u32;
            let low = BigUint::from(2 * m as u128 - 1).pow(2);
            let high = BigUint::from(2 * m as u128 + 1).pow(2);
            assert!(low <= max && max <= high, "{ty}: {s} is not sqrt(max) rounded");
        }
    }

    #[test]
    fn integer_values_are_in_range_and_include_the_edges() {
        for ty in FieldType::ALL.into_iter().filter(|t| t.float_type().is_none()) {
            let (lo, hi) = ty.int_range().unwrap();
            let v = int_interesting_values(ty);
            assert!(v.iter().all(|x| (lo..=hi).contains(x)), "{ty}");
            for must in [0, 1, lo, lo + 1, hi, hi - 1] {
                assert!(v.contains(&must), "{ty} lacks {must}");
            }
            assert!(v.windows(2).all(|w| w[0] < w[1]), "{ty} sorted and unique");
        }
        assert!(int_interesting_values(FieldType::I32).contains(&0x7fff_ffff));
        assert!(int_interesting_values(FieldType::I32).contains(&-1));
        assert!(int_interesting_values(FieldType::U32).contains(&0xffff_ffff));
        assert!(int_interesting_values(FieldType::I8).contains(&-128));
        assert!(!int_interesting_values(FieldType::U8).contains(&-1));
        assert!(int_interesting_values(FieldType::I64).contains(&(1 << 40)));
    }
}
