//! Seeds for a campaign started without user seeds, built from the signature alone. A field
//! with a declared domain gets only values inside it: its extremes and their neighbours, the
//! special values that lie inside, and ordinary values between the extremes (the mutators
//! take a share of inputs outside, see [`super::domain`]).

use super::values::{int_interesting_values, special_values};
use numfuzz_abi::domain::Domain;
use numfuzz_abi::value::Float;
use numfuzz_abi::{FieldType, Signature, Value};

/// Most seeds [`seeds`] returns.
pub const MAX_SEEDS: usize = 64;

/// The values tried per field, most telling first.
fn field_values(ty: FieldType) -> Vec<Value> {
    match ty.float_type() {
        Some(t) => special_values(t).into_iter().map(Value::Float).collect(),
        None => {
            let (lo, hi) = ty.int_range().expect("integer field");
            let mut first = vec![0, 1, -1, hi, lo, 2, 16, 255, hi - 1, lo + 1, 1000, 65536];
            first.retain(|v| (lo..=hi).contains(v));
            let mut out: Vec<i128> = Vec::new();
            for v in first.into_iter().chain(int_interesting_values(ty)) {
                if !out.contains(&v) {
                    out.push(v);
                }
            }
            out.into_iter().map(|value| Value::Int { ty, value }).collect()
        }
    }
}

fn one(ty: FieldType) -> Value {
    match ty.float_type() {
        Some(t) => Value::Float(Float::one(t)),
        None => Value::Int { ty, value: 1 },
    }
}

/// The values tried for a field with a domain: its extremes, 1 and 2 steps inside them, a
/// value in the middle (the midpoint, or an extreme ± 1 when a side is unbounded), then the
/// unrestricted values that lie inside.
fn domain_values(ty: FieldType, domain: &Domain) -> Vec<Value> {
    let mut out: Vec<Value> = match (domain.float_extremes(), domain.int_extremes()) {
        (Some((lo, hi)), _) => [lo, hi, lo.step(1), hi.step(-1), lo.step(2), hi.step(-2), middle(lo, hi)]
            .map(Value::Float)
            .to_vec(),
        (_, Some((lo, hi))) => [lo, hi, lo + 1, hi - 1, lo + 2, hi - 2, lo + (hi - lo) / 2]
            .map(|value| Value::Int { ty, value })
            .to_vec(),
        (None, None) => Vec::new(),
    };
    out.extend(field_values(ty));
    let mut kept: Vec<Value> = Vec::new();
    for v in out {
        if domain.contains(&v) && !kept.contains(&v) {
            kept.push(v);
        }
    }
    kept
}

/// A value between two float extremes of the same format: their midpoint when both are
/// finite, else 1 past the finite one (0 when neither is).
fn middle(lo: Float, hi: Float) -> Float {
    let parse = |x: f64| Float::parse(lo.ty, &format!("{x:e}")).unwrap_or(lo);
    let (l, h) = (parse_f64(lo), parse_f64(hi));
    match (l.is_finite(), h.is_finite()) {
        (true, true) => parse(l / 2.0 + h / 2.0),
        (true, false) => parse(l + 1.0),
        (false, true) => parse(h - 1.0),
        (false, false) => Float::zero(lo.ty, false),
    }
}

fn parse_f64(x: Float) -> f64 {
    x.to_string().parse().unwrap_or(f64::NAN)
}

/// `value` when it lies in field `i`'s domain, else the domain's first seed value.
fn inside(sig: &Signature, i: usize, value: Value) -> Value {
    match sig.domain(i) {
        Some(d) if !d.contains(&value) => domain_values(sig.fields()[i], d)[0],
        _ => value,
    }
}

/// Up to [`MAX_SEEDS`] distinct inputs of exactly `sig.size()` bytes, in this order:
/// all zeros; all ones (1.0 / 1); then "diagonal" seeds, the j-th setting every field to its
/// j-th special value (float fields: [`special_values`], so every float field sees every
/// special; integer fields: 0, 1, -1, max, min, … cycling); then seeds where a single field
/// takes a special value and the others are 1, special by special, field by field, until the
/// limit. Never the full cartesian product. A signature without fields gets one empty input.
pub fn seeds(sig: &Signature) -> Vec<Vec<u8>> {
    let fields = sig.fields();
    if fields.is_empty() {
        return vec![Vec::new()];
    }
    let per_field: Vec<Vec<Value>> = (0..fields.len())
        .map(|i| match sig.domain(i) {
            Some(d) => domain_values(fields[i], d),
            None => field_values(fields[i]),
        })
        .collect();
    let ones: Vec<Value> = (0..fields.len()).map(|i| inside(sig, i, one(fields[i]))).collect();
    let diagonal_len = fields
        .iter()
        .zip(&per_field)
        .map(|(t, v)| if t.float_type().is_some() { v.len() } else { 0 })
        .max()
        .filter(|&n| n > 0)
        .unwrap_or(MAX_SEEDS);

    let mut out: Vec<Vec<u8>> = Vec::new();
    let mut push = |values: &[Value]| {
        let bytes = sig.encode(values).expect("values match their fields");
        if out.len() < MAX_SEEDS && !out.contains(&bytes) {
            out.push(bytes);
        }
    };
    push(&zeros(sig));
    push(&ones);
    for j in 0..diagonal_len {
        let values: Vec<Value> = per_field.iter().map(|v| v[j % v.len()]).collect();
        push(&values);
    }
    let longest = per_field.iter().map(Vec::len).max().unwrap_or(0);
    for j in 0..longest {
        for (i, values) in per_field.iter().enumerate() {
            if let Some(&v) = values.get(j) {
                let mut seed = ones.clone();
                seed[i] = v;
                push(&seed);
            }
        }
    }
    out
}

fn zeros(sig: &Signature) -> Vec<Value> {
    let zero = sig.decode(&vec![0u8; sig.size()]);
    zero.into_iter().enumerate().map(|(i, v)| inside(sig, i, v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use numfuzz_abi::FloatType;

    fn float_at(sig: &Signature, seed: &[u8], field: usize) -> Float {
        match sig.decode(seed)[field] {
            Value::Float(f) => f,
            v => panic!("field {field} is {v:?}"),
        }
    }

    #[test]
    fn a_single_f64_gets_every_special_bit_exactly() {
        let sig = Signature::parse("f64").unwrap();
        let s = seeds(&sig);
        assert!(s.len() <= MAX_SEEDS);
        let got: Vec<u64> = s
            .iter()
            .map(|b| u64::from_le_bytes(b[..].try_into().unwrap()))
            .collect();
        assert_eq!(got[0], 0);
        assert_eq!(got[1], 1f64.to_bits());
        for x in special_values(FloatType::F64) {
            assert!(got.contains(&(x.bits as u64)), "{x:?} missing");
        }
        for bits in [
            1u64,
            0x000f_ffff_ffff_ffff,
            0x7fef_ffff_ffff_ffff,
            0xfff0_0000_0000_0000,
            0x7ff8 << 48,
        ] {
            assert!(got.contains(&bits), "{bits:#x} missing");
        }
        assert_eq!(
            got.len(),
            special_values(FloatType::F64).len(),
            "zeros and ones are specials too"
        );
    }

    #[test]
    fn every_field_of_a_mixed_signature_sees_every_special() {
        let sig = Signature::parse("f32,i32,f80,u8").unwrap();
        let s = seeds(&sig);
        assert!(s.len() <= MAX_SEEDS);
        assert!(s.iter().all(|b| b.len() == sig.size()));
        assert_eq!(s[0], vec![0u8; sig.size()]);
        assert_eq!(
            sig.decode(&s[1]).iter().map(|v| v.to_string()).collect::<Vec<_>>(),
            ["1.0", "1", "1.0", "1"]
        );
        for (field, ty) in [(0, FloatType::F32), (2, FloatType::F80)] {
            let seen: Vec<Float> = s.iter().map(|b| float_at(&sig, b, field)).collect();
            for x in special_values(ty) {
                assert!(seen.contains(&x), "field {field}: {x:?} missing");
            }
        }
        let ints: Vec<Value> = s.iter().map(|b| sig.decode(b)[1]).collect();
        for value in [0, 1, -1, i32::MAX as i128, i32::MIN as i128] {
            assert!(
                ints.contains(&Value::Int {
                    ty: FieldType::I32,
                    value
                }),
                "{value} missing"
            );
        }
        // Mixed seeds: one field special, the others 1.
        let mixed = sig.encode_text(&["inf", "1", "1", "1"]).unwrap();
        assert!(s.contains(&mixed));
    }

    #[test]
    fn seeds_respect_declared_domains() {
        for spec in [
            "f64[0,1],i32",
            "f64(0,inf),u8[10,20)",
            "f32(-1,1],f80[2,3]",
            "i64(-5,5)",
        ] {
            let sig = Signature::parse(spec).unwrap();
            let s = seeds(&sig);
            assert!(s.len() > 3, "{spec}: {}", s.len());
            assert!(s.iter().all(|b| sig.in_domain(b)), "{spec}");
        }
        let sig = Signature::parse("f64[0,1]").unwrap();
        let got: Vec<String> = seeds(&sig).iter().map(|b| sig.decode(b)[0].to_string()).collect();
        for v in ["0.0", "1.0", "5e-324", "0.9999999999999999", "0.5"] {
            assert!(got.contains(&v.to_string()), "{v} missing from {got:?}");
        }
        let open = Signature::parse("f64(0,inf)").unwrap();
        let got: Vec<String> = seeds(&open).iter().map(|b| open.decode(b)[0].to_string()).collect();
        assert!(
            got.contains(&"1.7976931348623157e308".to_string()) && got.contains(&"1.0".to_string()),
            "{got:?}"
        );
    }

    #[test]
    fn many_fields_stay_within_the_limit_and_are_distinct() {
        let sig = Signature::parse(&vec!["f64"; 30].join(",")).unwrap();
        let s = seeds(&sig);
        assert_eq!(s.len(), MAX_SEEDS);
        for (i, a) in s.iter().enumerate() {
            assert!(!s[..i].contains(a));
        }
        let ints = Signature::parse("i8,u64").unwrap();
        let s = seeds(&ints);
        assert!(s.len() <= MAX_SEEDS && s.len() > 20);
        assert!(s.iter().all(|b| b.len() == 9));
    }
}
