//! Input signatures: the typed argument vector a harness decodes from its input bytes.
//!
//! Fields are little-endian, packed in order, without padding. A shorter input reads as if
//! zero-padded; a longer one is truncated. A field may declare its domain, the range of values
//! it is meant to take (`f64[0,1]`, see [`crate::domain`]).

use crate::domain::Domain;
use crate::op::FloatType;
use crate::value::{Float, Value};
use std::fmt;
use std::ops::Range;
use std::str::FromStr;

pub use crate::value::FieldType;

impl fmt::Display for FieldType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("unknown field type `{field}` in signature `{spec}` (expected a comma-separated list of f32, f64, f80, i8, i16, i32, i64, u8, u16, u32, u64)")]
    UnknownType { field: String, spec: String },
    #[error("empty signature (expected a comma-separated list of field types such as `f64,i32`)")]
    Empty,
    #[error("{0}")]
    BadValue(String),
    #[error("bad range in field `{field}` of signature `{spec}`: {reason} (expected TYPE[lo,hi] with `[`/`]` closed and `(`/`)` open ends, lo <= hi, e.g. `f64[0,1], f64(0,inf), i32[0,100]`)")]
    BadRange {
        field: String,
        spec: String,
        reason: String,
    },
    #[error("signature `{spec}` has {expected} fields but {got} values were given")]
    Arity { spec: String, expected: usize, got: usize },
}

impl FromStr for FieldType {
    type Err = SignatureError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FieldType::ALL
            .into_iter()
            .find(|t| t.name() == s.trim())
            .ok_or_else(|| SignatureError::UnknownType {
                field: s.trim().to_string(),
                spec: s.to_string(),
            })
    }
}

/// A harness's argument vector.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Signature {
    fields: Vec<FieldType>,
    offsets: Vec<usize>,
    /// The declared domain of each field (`None`: unrestricted).
    domains: Vec<Option<Domain>>,
}

/// Splits a signature at the commas between fields (not those inside a range's brackets).
fn split_fields(spec: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in spec.char_indices() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&spec[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&spec[start..]);
    parts
}

/// One field's text: its type and its domain, if it declares one.
fn parse_field(field: &str, spec: &str) -> Result<(FieldType, Option<Domain>), SignatureError> {
    let field = field.trim();
    let (name, range) = match field.find(['[', '(']) {
        Some(at) => (&field[..at], Some(&field[at..])),
        None => (field, None),
    };
    let ty = name.parse::<FieldType>().map_err(|_| SignatureError::UnknownType {
        field: field.to_string(),
        spec: spec.to_string(),
    })?;
    let domain = range
        .map(|r| Domain::parse(ty, r))
        .transpose()
        .map_err(|reason| SignatureError::BadRange {
            field: field.to_string(),
            spec: spec.to_string(),
            reason,
        })?;
    Ok((ty, domain))
}

impl Signature {
    pub fn new(fields: Vec<FieldType>) -> Signature {
        let mut offsets = Vec::with_capacity(fields.len());
        let mut at = 0;
        for f in &fields {
            offsets.push(at);
            at += f.size();
        }
        let domains = vec![None; fields.len()];
        Signature {
            fields,
            offsets,
            domains,
        }
    }

    /// The signature inputs are decoded with: a `--signature` given by the user, else the one
    /// embedded in the target (`None`: plain bytes). The one place this choice is made.
    pub fn chosen(given: Option<&str>, embedded: Option<&Signature>) -> Result<Option<Signature>, SignatureError> {
        match given {
            Some(spec) => Signature::parse(spec).map(Some),
            None => Ok(embedded.cloned()),
        }
    }

    /// Parses `f64,i32` or, with domains, `f64[0,1], f64(0,inf), i32[0,100]`.
    pub fn parse(spec: &str) -> Result<Signature, SignatureError> {
        if spec.trim().is_empty() {
            return Err(SignatureError::Empty);
        }
        let parsed = split_fields(spec)
            .into_iter()
            .map(|f| parse_field(f, spec))
            .collect::<Result<Vec<_>, _>>()?;
        let (fields, domains): (Vec<FieldType>, Vec<Option<Domain>>) = parsed.into_iter().unzip();
        Ok(Signature {
            domains,
            ..Signature::new(fields)
        })
    }

    pub fn fields(&self) -> &[FieldType] {
        &self.fields
    }

    /// The declared domain of field `i` (`None`: unrestricted).
    pub fn domain(&self, i: usize) -> Option<&Domain> {
        self.domains[i].as_ref()
    }

    /// Some field declares a domain.
    pub fn has_domains(&self) -> bool {
        self.domains.iter().any(Option::is_some)
    }

    /// Every field of the input (zero-padded when short) lies in its declared domain.
    pub fn in_domain(&self, input: &[u8]) -> bool {
        self.decode(input)
            .iter()
            .zip(&self.domains)
            .all(|(v, d)| d.as_ref().is_none_or(|d| d.contains(v)))
    }

    pub fn len(&self) -> usize {
        self.fields.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Encoded size of one complete input.
    pub fn size(&self) -> usize {
        self.offsets
            .last()
            .map_or(0, |o| o + self.fields.last().expect("non-empty").size())
    }

    /// Byte range of field `i`.
    pub fn range(&self, i: usize) -> Range<usize> {
        self.offsets[i]..self.offsets[i] + self.fields[i].size()
    }

    /// Decodes every field, zero-padding a short input.
    pub fn decode(&self, input: &[u8]) -> Vec<Value> {
        let mut padded = input.to_vec();
        if padded.len() < self.size() {
            padded.resize(self.size(), 0);
        }
        (0..self.len())
            .map(|i| self.fields[i].decode(&padded[self.range(i)]))
            .collect()
    }

    /// Encodes values (one per field, of the field's type).
    pub fn encode(&self, values: &[Value]) -> Result<Vec<u8>, SignatureError> {
        if values.len() != self.len() {
            return Err(SignatureError::Arity {
                spec: self.to_string(),
                expected: self.len(),
                got: values.len(),
            });
        }
        let mut out = Vec::with_capacity(self.size());
        for (field, value) in self.fields.iter().zip(values) {
            match (field, value) {
                (FieldType::Float(FloatType::F32), Value::Float(f)) if f.ty == FloatType::F32 => {
                    out.extend_from_slice(&(f.bits as u32).to_le_bytes())
                }
                (FieldType::Float(FloatType::F64), Value::Float(f)) if f.ty == FloatType::F64 => {
                    out.extend_from_slice(&(f.bits as u64).to_le_bytes())
                }
                (FieldType::Float(FloatType::F80), Value::Float(f)) if f.ty == FloatType::F80 => {
                    out.extend_from_slice(&f.to_f80_bytes())
                }
                (int, Value::Int { ty, value }) if int == ty => {
                    out.extend_from_slice(&value.to_le_bytes()[..int.size()]);
                }
                _ => {
                    return Err(SignatureError::BadValue(format!(
                        "a {} value cannot go into a {field} field",
                        value.field_type()
                    )))
                }
            }
        }
        Ok(out)
    }

    /// Parses one textual value per field (`"709.78, 3"`) and encodes them.
    pub fn encode_text(&self, values: &[&str]) -> Result<Vec<u8>, SignatureError> {
        if values.len() != self.len() {
            return Err(SignatureError::Arity {
                spec: self.to_string(),
                expected: self.len(),
                got: values.len(),
            });
        }
        let parsed = self
            .fields
            .iter()
            .zip(values)
            .map(|(f, v)| parse_value(*f, v))
            .collect::<Result<Vec<_>, _>>()?;
        self.encode(&parsed)
    }
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fields: Vec<String> = self
            .fields
            .iter()
            .zip(&self.domains)
            .map(|(t, d)| match d {
                Some(d) => format!("{t}{d}"),
                None => t.name().to_string(),
            })
            .collect();
        f.write_str(&fields.join(","))
    }
}

impl FromStr for Signature {
    type Err = SignatureError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Signature::parse(s)
    }
}

/// Parses a value of type `ty` from text (decimal/hex float literals, integers).
fn parse_value(ty: FieldType, text: &str) -> Result<Value, SignatureError> {
    match ty {
        FieldType::Float(t) => Float::parse(t, text)
            .map(Value::Float)
            .map_err(|e| SignatureError::BadValue(e.to_string())),
        int => {
            let t = text.trim();
            let parsed = if let Some(h) = t.strip_prefix("0x") {
                i128::from_str_radix(h, 16).ok()
            } else {
                t.parse::<i128>().ok()
            };
            let (lo, hi) = int.int_range().expect("integer type");
            match parsed {
                Some(v) if (lo..=hi).contains(&v) => Ok(Value::Int { ty: int, value: v }),
                _ => Err(SignatureError::BadValue(format!(
                    "`{t}` is not a {} (range {lo}..={hi})",
                    int.name()
                ))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_packed_little_endian() {
        let sig = Signature::parse("f64, i32,f80,u8").unwrap();
        assert_eq!(sig.to_string(), "f64,i32,f80,u8");
        assert_eq!(sig.size(), 8 + 4 + 10 + 1);
        assert_eq!(sig.range(2), 12..22);
        let bytes = sig.encode_text(&["709.78271289338511", "-3", "1", "255"]).unwrap();
        assert_eq!(&bytes[..8], &709.782_712_893_385_1_f64.to_le_bytes());
        assert_eq!(&bytes[8..12], &(-3i32).to_le_bytes());
        assert_eq!(bytes[22], 255);
        let values = sig.decode(&bytes);
        assert_eq!(values[0].to_string(), "709.7827128933851");
        assert_eq!(
            values[1],
            Value::Int {
                ty: FieldType::I32,
                value: -3
            }
        );
        assert_eq!(values[2].to_string(), "1.0");
        assert_eq!(
            values[3],
            Value::Int {
                ty: FieldType::U8,
                value: 255
            }
        );
    }

    #[test]
    fn short_inputs_read_as_zero_padded() {
        let sig = Signature::parse("f64,i32").unwrap();
        let values = sig.decode(&[0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x05, 0x01]);
        assert_eq!(values[0].to_string(), "1.0");
        assert_eq!(values[1].to_string(), "261");
        let values = sig.decode(&[0, 0, 0, 0, 0, 0, 0xf0]);
        assert_eq!(values[0].to_string(), "3.645561009778199e-304");
        assert_eq!(values[1].to_string(), "0");
        assert_eq!(sig.decode(&[]).len(), 2);
    }

    #[test]
    fn bad_signatures_say_what_is_expected() {
        let e = Signature::parse("f64,double").unwrap_err().to_string();
        assert!(e.contains("`double`") && e.contains("f64, f80"), "{e}");
        assert_eq!(Signature::parse(" ").unwrap_err(), SignatureError::Empty);
        assert!(Signature::parse("i8").unwrap().encode_text(&["300"]).is_err());
        assert!(Signature::parse("i8,i8").unwrap().encode_text(&["1"]).is_err());
    }

    #[test]
    fn fields_declare_domains() {
        let sig = Signature::parse("f64[0,1], f64(0,inf), i32[0,100], u8").unwrap();
        assert_eq!(sig.len(), 4);
        assert_eq!(sig.to_string(), "f64[0.0,1.0],f64(0.0,inf),i32[0,100],u8");
        assert_eq!(Signature::parse(&sig.to_string()).unwrap(), sig);
        assert!(sig.domain(0).is_some() && sig.domain(3).is_none() && sig.has_domains());
        assert!(!Signature::parse("f64,i32").unwrap().has_domains());
        let inside = sig.encode_text(&["0.5", "1e-300", "100", "7"]).unwrap();
        assert!(sig.in_domain(&inside));
        for outside in [
            ["-0.5", "1", "3", "7"],
            ["0.5", "0", "3", "7"],
            ["0.5", "1", "101", "7"],
        ] {
            assert!(!sig.in_domain(&sig.encode_text(&outside).unwrap()), "{outside:?}");
        }
    }

    #[test]
    fn bad_ranges_are_refused_in_one_line() {
        for (spec, why) in [
            ("f64[1,0]", "above the upper bound"),
            ("f64(0,0)", "no value"),
            ("f64[nan,1]", "NaN"),
            ("i32[0,0.5]", "not an integer"),
            ("i8[0,1000]", "outside the range of i8"),
            ("f64[0,1", "missing closing"),
            ("f64[0,1, i32", "missing closing"),
            ("f64[0;1]", "two bounds"),
            ("f64[a,b]", "not a number"),
        ] {
            let e = Signature::parse(spec).unwrap_err();
            assert!(matches!(e, SignatureError::BadRange { .. }), "{spec}: {e:?}");
            let text = e.to_string();
            assert!(
                text.contains(why) && text.contains("expected TYPE[lo,hi]"),
                "{spec}: {text}"
            );
            assert!(!text.contains('\n'), "{text}");
        }
        let e = Signature::parse("f64 [0,1]x").unwrap_err().to_string();
        assert!(e.contains("missing closing"), "{e}");
    }

    #[test]
    fn codes_round_trip() {
        for t in FieldType::ALL {
            assert_eq!(FieldType::from_code(t.code()), Some(t));
            assert_eq!(t.name().parse::<FieldType>().unwrap(), t);
        }
    }

    #[test]
    fn hex_of_values() {
        let sig = Signature::parse("i16,f32").unwrap();
        let v = sig.decode(&sig.encode_text(&["-1", "0.5"]).unwrap());
        assert_eq!(v[0].to_hex(), "0xffff");
        assert_eq!(v[1].to_hex(), "0x1p-1");
    }
}
