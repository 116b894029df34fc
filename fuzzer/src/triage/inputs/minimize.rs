//! `--minimize`: the simplest input that still raises a finding's (site, kind).
//!
//! Fields are minimised one after another, each seeing the earlier ones' minimised values.
//! A float field becomes the decimal with the fewest significant digits that still raises
//! it: for p = 1, 2, ... the two p-digit decimals around the value (the nearest first, then
//! the one on the other side) are tried, and the first p with a candidate that works ends
//! the search. An integer field becomes the smallest-magnitude value among 0, ±1, its
//! decimal truncations toward 0 and the powers of two below it that still raises it.
//! Decimals are parsed straight into the field's format (f32 and f80 never go through f64).

use numfuzz_abi::decimal::to_decimal_digits;
use numfuzz_abi::op::FloatType;
use numfuzz_abi::signature::{FieldType, Signature};
use numfuzz_abi::value::{Float, Value};

/// Significant decimal digits that always round-trip a value of the format.
fn max_digits(ty: FloatType) -> u32 {
    match ty {
        FloatType::F32 => 9,
        FloatType::F64 => 17,
        FloatType::F80 => 21,
    }
}

/// The p-digit decimals around `x` (finite, non-zero), as parsed values of its format:
/// the nearest first, then its neighbour on the other side of `x`. `None` in place of a
/// candidate that is `x` itself (x has a p-digit decimal form).
fn candidates(x: Float, p: u32) -> Vec<Option<Float>> {
    let (digits, exp10) = to_decimal_digits(x.abs(), p);
    let scale = exp10 - p as i32 + 1;
    let d: u128 = digits.parse().expect("at most 21 digits");
    let parse = |m: u128| {
        let text = format!("{}{m}e{scale}", if x.is_negative() { "-" } else { "" });
        Float::parse(x.ty, &text).expect("a decimal literal")
    };
    let nearest = parse(d);
    if nearest == x {
        return vec![None];
    }
    // Parsing rounds monotonically, so the parsed value's side of x is the decimal's side.
    let above = nearest.abs().partial_cmp_num(x.abs()) == Some(std::cmp::Ordering::Greater);
    let other = if above {
        d.checked_sub(1).filter(|&m| m > 0).map(parse)
    } else {
        Some(parse(d + 1))
    };
    let mut out = vec![Some(nearest)];
    if let Some(o) = other.filter(|&o| o != nearest) {
        out.push(if o == x { None } else { Some(o) });
    }
    out
}

/// The float with the fewest significant decimal digits for which `raises` holds, closest to
/// `x` among those of that length; `x` if none shorter works.
pub fn shortest_float(x: Float, mut raises: impl FnMut(Float) -> bool) -> Float {
    if !x.is_finite() || x.is_zero() {
        return x;
    }
    for p in 1..=max_digits(x.ty) {
        for c in candidates(x, p) {
            match c {
                // x itself is this short: nothing shorter worked, and x does.
                None => return x,
                Some(y) if y.is_finite() && raises(y) => return y,
                Some(_) => {}
            }
        }
    }
    x
}

/// The smallest-magnitude integer among a few cheap candidates for which `raises` holds;
/// `v` if none does.
pub fn smallest_int(ty: FieldType, v: i128, mut raises: impl FnMut(i128) -> bool) -> i128 {
    let Some((lo, hi)) = ty.int_range() else { return v };
    let mut cands: Vec<i128> = vec![0, 1, -1];
    let mut t = v / 10;
    while t != 0 {
        cands.push(t);
        t /= 10;
    }
    let sign = if v < 0 { -1 } else { 1 };
    let mut pow = 2i128;
    while pow < v.unsigned_abs() as i128 {
        cands.push(sign * pow);
        pow *= 2;
    }
    cands.retain(|&c| (lo..=hi).contains(&c) && c.unsigned_abs() < v.unsigned_abs());
    cands.sort_by_key(|&c| (c.unsigned_abs(), c < 0));
    cands.dedup();
    cands.into_iter().find(|&c| raises(c)).unwrap_or(v)
}

/// Minimises every field of `start` in turn; `raises` says whether an encoded input still
/// raises the finding. `None` when the input re-encoded by the signature no longer does
/// (e.g. it relied on bytes past the signature).
pub fn minimize_input(
    signature: &Signature,
    start: &[u8],
    mut raises: impl FnMut(&[u8]) -> bool,
) -> Option<Vec<Value>> {
    let mut values = signature.decode(start);
    let encode = |v: &[Value]| signature.encode(v).expect("values of the signature's own types");
    if !raises(&encode(&values)) {
        return None;
    }
    for i in 0..values.len() {
        let mut with = |v: Value, values: &[Value]| {
            let mut trial = values.to_vec();
            trial[i] = v;
            raises(&encode(&trial))
        };
        values[i] = match values[i] {
            Value::Float(x) => Value::Float(shortest_float(x, |y| with(Value::Float(y), &values))),
            Value::Int { ty, value } => Value::Int {
                ty,
                value: smallest_int(ty, value, |c| with(Value::Int { ty, value: c }, &values)),
            },
        };
    }
    Some(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f64v(x: f64) -> Float {
        Float::from_f64(x)
    }

    #[test]
    fn an_exp_overflow_input_shortens_to_one_digit() {
        // exp(x) overflows for x > 709.782712893384.
        let tried = std::cell::RefCell::new(Vec::new());
        let y = shortest_float(f64v(709.7827128933851), |c| {
            tried.borrow_mut().push(c.as_f64());
            c.as_f64() > 709.782712893384
        });
        assert_eq!(y.as_f64(), 800.0);
        assert_eq!(
            tried.borrow()[..2],
            [700.0, 800.0],
            "nearest first, then the other side"
        );
    }

    #[test]
    fn the_closest_candidate_wins_and_longer_decimals_follow() {
        // Only values in [709.79, 709.795] work: 5 digits are needed.
        let y = shortest_float(f64v(709.7912345), |c| (709.79..=709.795).contains(&c.as_f64()));
        assert_eq!(y.to_string(), "709.79");
        // Negative values keep their sign.
        let n = shortest_float(f64v(-0.0312345), |c| c.as_f64() < -0.03);
        assert_eq!(n.to_string(), "-0.04");
        // A value that is already short stays.
        assert_eq!(shortest_float(f64v(2.5), |c| c.as_f64() == 2.5).to_string(), "2.5");
        // Nothing shorter works: the original value.
        let x = f64v(0.1 + 0.2);
        assert_eq!(shortest_float(x, |c| c == x), x);
    }

    #[test]
    fn f32_and_f80_are_parsed_in_their_own_format() {
        // 4e38 overflows f32 and is skipped.
        let x = Float::from_f32(3.3999e38f32);
        let y = shortest_float(x, |c| c.as_f32() > 3.0e38);
        assert_eq!((y.ty, y.to_string()), (FloatType::F32, "3.4e38".to_string()));
        let f80 = |s: &str| Float::parse(FloatType::F80, s).unwrap();
        let (lo, hi) = (f80("11356.52"), f80("11356.6"));
        let z = shortest_float(f80("11356.5234062941439494"), |c| {
            use std::cmp::Ordering::*;
            c.partial_cmp_num(lo) == Some(Greater) && c.partial_cmp_num(hi) != Some(Greater)
        });
        assert_eq!((z.ty, z.to_string()), (FloatType::F80, "11356.6".to_string()));
    }

    #[test]
    fn integers_go_toward_zero() {
        assert_eq!(smallest_int(FieldType::I32, 123456, |c| c >= 100), 123);
        assert_eq!(smallest_int(FieldType::I32, 1000, |c| c > 300), 512);
        assert_eq!(smallest_int(FieldType::I32, -77, |c| c < 0), -1);
        assert_eq!(smallest_int(FieldType::U8, 200, |_| true), 0);
        assert_eq!(smallest_int(FieldType::I64, 7, |c| c == 7), 7);
    }

    #[test]
    fn fields_are_minimised_in_turn() {
        let sig = Signature::parse("f64,i32").unwrap();
        let start = sig.encode_text(&["709.78271289338511", "1234"]).unwrap();
        // Raises when x > 709.78 and n is odd.
        let values = minimize_input(&sig, &start, |b| {
            let v = sig.decode(b);
            let (Value::Float(x), Value::Int { value, .. }) = (v[0], v[1]) else {
                unreachable!()
            };
            x.as_f64() > 709.782712893384 && value % 2 != 0
        });
        assert!(values.is_none(), "1234 is even: the start does not raise it");
        let start = sig.encode_text(&["709.78271289338511", "1235"]).unwrap();
        let values = minimize_input(&sig, &start, |b| {
            let v = sig.decode(b);
            let (Value::Float(x), Value::Int { value, .. }) = (v[0], v[1]) else {
                unreachable!()
            };
            x.as_f64() > 709.782712893384 && value % 2 != 0
        })
        .unwrap();
        assert_eq!(values[0].to_string(), "800.0");
        assert_eq!(values[1].to_string(), "1");
    }
}
