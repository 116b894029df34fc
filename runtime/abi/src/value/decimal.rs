//! Exact conversions between binary floating-point values and decimal/hexadecimal text.
//!
//! f32 and f64 use Rust's own shortest round-trip printing and correctly rounded parsing;
//! f80 (which Rust has no type for) goes through exact big-integer arithmetic here. The
//! generic code is tested against Rust's for f32/f64.

use super::{Float, FloatClass, FloatFormat};
use crate::op::FloatType;
use num_bigint::BigUint;
use num_traits::{One, Zero};
use std::cmp::Ordering;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a number (expected a decimal like 1.5e-3, a hex float like 0x1.8p+1, inf or nan)")]
pub struct ParseFloatError {
    pub text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// Round to nearest, ties to even; overflow gives infinity.
    NearestEven,
    /// Only exactly representable values; anything else is `None`.
    Exact,
}

fn bit_len(x: &BigUint) -> i64 {
    x.bits() as i64
}

/// Rounds the positive rational `num / den` to the format of `ty`. Returns the value and
/// whether it was exact.
fn round_rational(ty: FloatType, negative: bool, num: &BigUint, den: &BigUint) -> (Float, bool) {
    let fmt = FloatFormat::of(ty);
    if num.is_zero() {
        return (Float::zero(ty, negative), true);
    }
    // floor(log2(num/den)) is lb or lb - 1.
    let lb = bit_len(num) - bit_len(den);
    let ge = if lb >= 0 {
        *num >= (den << lb as u64)
    } else {
        (num << (-lb) as u64) >= *den
    };
    let floor_log2 = if ge { lb } else { lb - 1 };
    let mut exp = floor_log2.max(fmt.emin() as i64);
    let shift = fmt.precision as i64 - 1 - exp;
    let (n, d) = if shift >= 0 {
        (num << shift as u64, den.clone())
    } else {
        (num.clone(), den << (-shift) as u64)
    };
    let mut q = &n / &d;
    let r = &n - &q * &d;
    let exact = r.is_zero();
    let twice = &r << 1u32;
    if twice > d || (twice == d && q.bit(0)) {
        q += 1u32;
    }
    let full = BigUint::one() << fmt.precision;
    if q == full {
        q >>= 1u32;
        exp += 1;
    }
    if exp > fmt.emax() as i64 {
        return (Float::infinity(ty, negative), false);
    }
    let q: u64 = q.try_into().expect("significand fits in 64 bits");
    if q == 0 {
        return (Float::zero(ty, negative), exact);
    }
    let normal = q >> (fmt.precision - 1) == 1;
    let exp_field: u128 = if normal { (exp + fmt.bias as i64) as u128 } else { 0 };
    let mant: u128 = if fmt.width == 80 || !normal {
        q as u128
    } else {
        (q as u128) & ((1u128 << (fmt.precision - 1)) - 1)
    };
    let mant_width = if fmt.width == 80 { 64 } else { fmt.precision - 1 };
    let bits = (exp_field << mant_width) | mant;
    (Float::from_bits(ty, bits).with_sign(negative), exact)
}

/// `(-1)^negative * m * 2^e` in the format of `ty`.
pub fn round_to_format(ty: FloatType, negative: bool, m: &BigUint, e: i32, rounding: Rounding) -> Option<Float> {
    let (num, den) = if e >= 0 {
        (m << e as u64, BigUint::one())
    } else {
        (m.clone(), BigUint::one() << (-e) as u64)
    };
    let (v, exact) = round_rational(ty, negative, &num, &den);
    match rounding {
        Rounding::NearestEven => Some(v),
        Rounding::Exact => exact.then_some(v),
    }
}

/// Exact numeric order of two non-NaN values of possibly different formats. Every f32 and
/// f64 value is exactly representable as an f80, so compare there.
pub fn cmp_exact(a: Float, b: Float) -> Ordering {
    let wide = |x: Float| {
        x.convert_exact(FloatType::F80)
            .expect("f32/f64/f80 widen exactly to f80")
    };
    wide(a).ord().cmp(&wide(b).ord())
}

fn pow10(k: u32) -> BigUint {
    BigUint::from(10u32).pow(k)
}

/// `p` significant decimal digits of the finite non-zero `|x|`, rounded to nearest-even,
/// and the decimal exponent of the first digit.
pub fn to_decimal_digits(x: Float, p: u32) -> (String, i32) {
    let (m, e) = x.decompose().expect("finite non-zero");
    let l2 = 63 - m.leading_zeros() as i64 + e as i64;
    // floor(l2 * log10(2)) with log10(2) ~ 78913 / 2^18; floor(log10(x)) is this or one more.
    let est = (l2 * 78913).div_euclid(1 << 18);
    let mut k = est - p as i64 + 1;
    let lo = pow10(p - 1);
    let hi = pow10(p);
    loop {
        let mut num = BigUint::from(m);
        let mut den = BigUint::one();
        if e >= 0 {
            num <<= e as u64;
        } else {
            den <<= (-e) as u64;
        }
        if k >= 0 {
            den *= pow10(k as u32);
        } else {
            num *= pow10((-k) as u32);
        }
        let mut q = &num / &den;
        let r = &num - &q * &den;
        let twice = &r << 1u32;
        if twice > den || (twice == den && q.bit(0)) {
            q += 1u32;
        }
        if q >= hi {
            k += 1;
        } else if q < lo {
            k -= 1;
        } else {
            return (q.to_string(), (k + p as i64 - 1) as i32);
        }
    }
}

/// Renders `0.d1d2d3 × 10^(exp10+1)` the way Rust's `{:?}` renders floats: plain notation
/// for exponents -4..=15, scientific (`1.5e-7`, `1e16`) otherwise.
fn render(negative: bool, digits: &str, exp10: i32) -> String {
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let mut s = String::new();
    if negative {
        s.push('-');
    }
    if (-4..16).contains(&exp10) {
        if exp10 >= 0 {
            let int_len = exp10 as usize + 1;
            if digits.len() <= int_len {
                s.push_str(digits);
                s.extend(std::iter::repeat_n('0', int_len - digits.len()));
                s.push_str(".0");
            } else {
                s.push_str(&digits[..int_len]);
                s.push('.');
                s.push_str(&digits[int_len..]);
            }
        } else {
            s.push_str("0.");
            s.extend(std::iter::repeat_n('0', (-exp10 - 1) as usize));
            s.push_str(digits);
        }
    } else {
        s.push_str(&digits[..1]);
        if digits.len() > 1 {
            s.push('.');
            s.push_str(&digits[1..]);
        }
        s.push('e');
        s.push_str(&exp10.to_string());
    }
    s
}

/// Shortest decimal that parses back to exactly `x`.
pub fn to_shortest(x: Float) -> String {
    match x.ty {
        FloatType::F32 => return format!("{:?}", x.as_f32()),
        FloatType::F64 => return format!("{:?}", x.as_f64()),
        FloatType::F80 => {}
    }
    match x.class() {
        FloatClass::Nan { .. } => return "NaN".into(),
        FloatClass::Infinite => return if x.is_negative() { "-inf".into() } else { "inf".into() },
        FloatClass::Zero => return if x.is_negative() { "-0.0".into() } else { "0.0".into() },
        FloatClass::Subnormal | FloatClass::Normal => {}
    }
    let abs = x.abs();
    for p in 1..=21 {
        let (digits, exp10) = to_decimal_digits(abs, p);
        let text = format!("{digits}e{}", exp10 - p as i32 + 1);
        if parse(x.ty, &text).ok() == Some(abs) {
            return render(x.is_negative(), &digits, exp10);
        }
    }
    unreachable!("21 significant digits always round-trip an f80")
}

/// C99 `%a`-style hexadecimal, normalised to a leading `1`.
pub fn to_hex(x: Float) -> String {
    let sign = if x.is_negative() { "-" } else { "" };
    match x.class() {
        FloatClass::Nan { .. } => "nan".into(),
        FloatClass::Infinite => format!("{sign}inf"),
        FloatClass::Zero => format!("{sign}0x0p+0"),
        FloatClass::Subnormal | FloatClass::Normal => {
            let (m, e) = x.decompose().expect("finite");
            let top = 63 - m.leading_zeros();
            let exp = e + top as i32;
            let frac = m & ((1u64 << top).wrapping_sub(1));
            if frac == 0 {
                return format!("{sign}0x1p{exp:+}");
            }
            let hex_bits = top.div_ceil(4) * 4;
            let frac = (frac as u128) << (hex_bits - top);
            let hex = format!("{frac:0width$x}", width = (hex_bits / 4) as usize);
            format!("{sign}0x1.{}p{exp:+}", hex.trim_end_matches('0'))
        }
    }
}

/// A decimal exponent. One of more digits than an `i64` holds (the MPFR build prints a value
/// beyond its own exponents from its magnitude: e^(-2.5e30) is `4.1e-1101067321320929692930183543656`)
/// saturates at 2^62, beyond every format either way.
fn decimal_exponent(text: &str) -> Option<i64> {
    text.parse::<i64>().ok().or_else(|| {
        let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
        let long = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        long.then(|| if text.starts_with('-') { -(1 << 62) } else { 1 << 62 })
    })
}

/// Parses decimal, hexadecimal, `inf`/`infinity` and `nan` (case-insensitive, optional sign),
/// correctly rounded to nearest-even.
pub fn parse(ty: FloatType, text: &str) -> Result<Float, ParseFloatError> {
    let err = || ParseFloatError { text: text.to_string() };
    let s = text.trim();
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    if lower == "inf" || lower == "infinity" {
        return Ok(Float::infinity(ty, negative));
    }
    if lower == "nan" {
        return Ok(Float::quiet_nan(ty).with_sign(negative));
    }
    if let Some(hex) = lower.strip_prefix("0x") {
        let (mant, exp) = match hex.split_once('p') {
            Some((m, e)) => (m, e.parse::<i64>().map_err(|_| err())?),
            None => (hex, 0),
        };
        let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
        if int.is_empty() && frac.is_empty() {
            return Err(err());
        }
        let digits: String = format!("{int}{frac}");
        let m = BigUint::parse_bytes(digits.as_bytes(), 16).ok_or_else(err)?;
        let e = exp - 4 * frac.len() as i64;
        if m.is_zero() {
            return Ok(Float::zero(ty, negative));
        }
        let e = e.clamp(-40000, 40000) as i32;
        return Ok(round_to_format(ty, negative, &m, e, Rounding::NearestEven).expect("rounding never fails"));
    }
    let (mant, exp) = match lower.split_once('e') {
        Some((m, e)) => (m, decimal_exponent(e).ok_or_else(err)?),
        None => (lower.as_str(), 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    if (int.is_empty() && frac.is_empty()) || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return Err(err());
    }
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Ok(Float::zero(ty, negative));
    }
    let d = BigUint::parse_bytes(digits.as_bytes(), 10).ok_or_else(err)?;
    let k = exp - frac.len() as i64;
    // Magnitude of the value is about 10^(k + digits): beyond f80's range either way, the
    // answer is known without building enormous integers.
    let magnitude = k + digits.len() as i64;
    if magnitude > 5000 {
        return Ok(Float::infinity(ty, negative));
    }
    if magnitude < -5000 {
        return Ok(Float::zero(ty, negative));
    }
    let (num, den) = if k >= 0 {
        (d * pow10(k as u32), BigUint::one())
    } else {
        (d, pow10((-k) as u32))
    };
    Ok(round_rational(ty, negative, &num, &den).0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn f80(s: &str) -> Float {
        parse(FloatType::F80, s).unwrap()
    }

    #[test]
    fn exponents_past_an_i64_are_beyond_every_format() {
        let tiny = f80("4.111624e-1101067321320929692930183543656");
        assert!(tiny.is_zero() && !tiny.is_negative());
        assert!(f80("-1e+52115521155211552115521155211552115").is_infinite());
        assert!(parse(FloatType::F64, "1e+12x4567890123456789012345").is_err());
        assert!(parse(FloatType::F64, "1e-").is_err());
    }

    #[test]
    fn f80_known_values() {
        assert_eq!(f80("1").to_f80_bytes(), [0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0x3f]);
        assert_eq!(f80("-2").to_f80_bytes(), [0, 0, 0, 0, 0, 0, 0, 0x80, 0x00, 0xc0]);
        // LDBL_MAX = 1.18973149535723176502e+4932
        assert_eq!(
            f80("1.18973149535723176502e4932"),
            Float::max_finite(FloatType::F80, false)
        );
        assert!(f80("1.2e4932").is_infinite());
        // LDBL_TRUE_MIN = 3.64519953188247460253e-4951
        assert_eq!(
            f80("3.64519953188247460253e-4951"),
            Float::min_subnormal(FloatType::F80, false)
        );
        assert_eq!(f80("0.1").to_string(), "0.1");
        assert_eq!(f80("709.78271289338511").to_string(), "709.78271289338511");
        assert_eq!(f80("1e300").to_string(), "1e300");
        assert_eq!(f80("-1.5e-7").to_string(), "-1.5e-7");
        assert_eq!(f80("123456").to_string(), "123456.0");
        assert_eq!(
            Float::max_finite(FloatType::F80, false).to_string(),
            "1.189731495357231765e4932"
        );
    }

    #[test]
    fn hex_rendering() {
        assert_eq!(to_hex(Float::from_f64(1.0)), "0x1p+0");
        assert_eq!(to_hex(Float::from_f64(-3.0)), "-0x1.8p+1");
        assert_eq!(to_hex(Float::from_f64(f64::from_bits(1))), "0x1p-1074");
        assert_eq!(to_hex(Float::from_f64(f64::MAX)), "0x1.fffffffffffffp+1023");
        assert_eq!(to_hex(Float::from_f32(0.1)), "0x1.99999ap-4");
        assert_eq!(to_hex(f80("1")), "0x1p+0");
        assert_eq!(to_hex(Float::zero(FloatType::F64, true)), "-0x0p+0");
        for s in ["0x1.fffffffffffffp+1023", "-0x1.8p+1", "0x1p-1074", "0x1.99999ap-4"] {
            assert_eq!(to_hex(parse(FloatType::F64, s).unwrap()), s);
        }
    }

    #[test]
    fn specials_parse() {
        assert!(parse(FloatType::F64, "-inf").unwrap().is_negative());
        assert!(parse(FloatType::F32, "NaN").unwrap().is_nan());
        assert!(parse(FloatType::F64, "1e-400").unwrap().is_zero());
        assert!(parse(FloatType::F64, "abc").is_err());
        assert!(parse(FloatType::F64, "1.5e").is_err());
        assert!(parse(FloatType::F64, ".").is_err());
    }

    proptest! {
        #[test]
        fn f64_parse_matches_rust(bits in any::<u64>()) {
            let x = f64::from_bits(bits);
            prop_assume!(x.is_finite());
            for s in [format!("{x:e}"), format!("{:.5e}", x), format!("{:.25e}", x)] {
                let ours = parse(FloatType::F64, &s).unwrap();
                let rust: f64 = s.parse().unwrap();
                prop_assert_eq!(ours.bits as u64, rust.to_bits(), "{}", s);
            }
        }

        #[test]
        fn f32_parse_matches_rust(bits in any::<u32>(), digits in 1usize..12) {
            let x = f32::from_bits(bits);
            prop_assume!(x.is_finite());
            let s = format!("{:.*e}", digits, x as f64);
            let ours = parse(FloatType::F32, &s).unwrap();
            let rust: f32 = s.parse().unwrap();
            prop_assert_eq!(ours.bits as u32, rust.to_bits(), "{}", s);
        }

        #[test]
        fn f64_digits_match_rust(bits in any::<u64>(), p in 1u32..20) {
            let x = f64::from_bits(bits);
            prop_assume!(x.is_finite() && x != 0.0);
            let (digits, exp10) = to_decimal_digits(Float::from_f64(x.abs()), p);
            let rust = format!("{:.*e}", p as usize - 1, x.abs());
            let (rm, re) = rust.split_once('e').unwrap();
            prop_assert_eq!(digits, rm.replace('.', ""));
            prop_assert_eq!(exp10, re.parse::<i32>().unwrap());
        }

        #[test]
        fn f80_shortest_round_trips(exp in 0u16..0x7fff, mant in any::<u64>(), neg in any::<bool>()) {
            let mant = if exp == 0 { mant & !(1 << 63) } else { mant | (1 << 63) };
            let mut b = [0u8; 10];
            b[..8].copy_from_slice(&mant.to_le_bytes());
            b[8..].copy_from_slice(&(exp | if neg { 0x8000 } else { 0 }).to_le_bytes());
            let x = Float::from_f80_bytes(b);
            let s = x.to_string();
            prop_assert_eq!(parse(FloatType::F80, &s).unwrap(), x, "{}", s);
            prop_assert_eq!(parse(FloatType::F80, &to_hex(x)).unwrap(), x);
        }

        #[test]
        fn hex_round_trips_f64(bits in any::<u64>()) {
            let x = Float::from_f64(f64::from_bits(bits));
            prop_assume!(!x.is_nan());
            prop_assert_eq!(parse(FloatType::F64, &to_hex(x)).unwrap(), x);
        }
    }
}
