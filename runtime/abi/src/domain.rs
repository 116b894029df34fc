//! Declared input domains: the range a harness says one field's values are meant to lie in
//! (`NUMFUZZ_SIGNATURE("f64[0,1], f64(0,inf), i32[0,100]")`).
//!
//! `[`/`]` are closed ends, `(`/`)` open ones. Float bounds are decimals, hex floats, `inf` or
//! `-inf`, rounded to the field's format; integer bounds are integers within the field's type.
//! A domain is never empty. Values outside it are still legal inputs: the mutators keep most
//! values inside and triage never calls a finding a bug when only such inputs raise it.

use crate::value::{FieldType, Float, Value};
use std::cmp::Ordering;
use std::fmt;

/// A range of values of type `T` with closed or open ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Interval<T> {
    pub lo: T,
    pub lo_closed: bool,
    pub hi: T,
    pub hi_closed: bool,
}

/// The declared domain of one field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Domain {
    /// Of a float field: bounds in the field's own format, never NaN.
    Float(Interval<Float>),
    /// Of an integer field: bounds within the field's type.
    Int(Interval<i128>),
}

impl Domain {
    /// Parses `[lo,hi]`, `(lo,hi)`, `[lo,hi)` or `(lo,hi]` for a field of type `ty`; the
    /// error is the reason alone (the caller names the field).
    pub fn parse(ty: FieldType, text: &str) -> Result<Domain, String> {
        let t = text.trim();
        let lo_closed = match t.chars().next() {
            Some('[') => true,
            Some('(') => false,
            _ => return Err("a range starts with `[` or `(`".into()),
        };
        let hi_closed = match t.chars().last() {
            Some(']') if t.len() > 1 => true,
            Some(')') if t.len() > 1 => false,
            _ => return Err("missing closing `]` or `)`".into()),
        };
        let inner = &t[1..t.len() - 1];
        let Some((lo, hi)) = inner.split_once(',').filter(|(_, hi)| !hi.contains(',')) else {
            return Err(format!("`{t}` needs exactly two bounds separated by one comma"));
        };
        let domain = match ty.float_type() {
            Some(ft) => Domain::Float(Interval {
                lo: float_bound(ft, lo)?,
                lo_closed,
                hi: float_bound(ft, hi)?,
                hi_closed,
            }),
            None => Domain::Int(Interval {
                lo: int_bound(ty, lo)?,
                lo_closed,
                hi: int_bound(ty, hi)?,
                hi_closed,
            }),
        };
        domain.check_not_empty()?;
        Ok(domain)
    }

    /// Refuses lo > hi and ranges with nothing inside (`(1,1)`, `i32(3,4)`).
    fn check_not_empty(&self) -> Result<(), String> {
        let inhabited = match (self.float_extremes(), self.int_extremes()) {
            (Some((a, b)), _) => a.partial_cmp_num(b) != Some(Ordering::Greater),
            (_, Some((a, b))) => a <= b,
            (None, None) => false,
        };
        if inhabited {
            return Ok(());
        }
        let (lo, hi) = self.bounds_text();
        if self.bounds_ordered() {
            Err(format!("`{self}` holds no value between {lo} and {hi}"))
        } else {
            Err(format!("the lower bound {lo} is above the upper bound {hi}"))
        }
    }

    fn bounds_ordered(&self) -> bool {
        match self {
            Domain::Float(i) => i.lo.partial_cmp_num(i.hi) != Some(Ordering::Greater),
            Domain::Int(i) => i.lo <= i.hi,
        }
    }

    fn bounds_text(&self) -> (String, String) {
        match self {
            Domain::Float(i) => (i.lo.to_string(), i.hi.to_string()),
            Domain::Int(i) => (i.lo.to_string(), i.hi.to_string()),
        }
    }

    /// Whether `value` lies inside (a NaN never does; a value of another type neither).
    pub fn contains(&self, value: &Value) -> bool {
        match (self, value) {
            (Domain::Float(i), Value::Float(x)) if x.ty == i.lo.ty => {
                let above = match x.partial_cmp_num(i.lo) {
                    Some(Ordering::Greater) => true,
                    Some(Ordering::Equal) => i.lo_closed,
                    _ => false,
                };
                let below = match x.partial_cmp_num(i.hi) {
                    Some(Ordering::Less) => true,
                    Some(Ordering::Equal) => i.hi_closed,
                    _ => false,
                };
                above && below
            }
            (Domain::Int(_), Value::Int { value, .. }) => {
                let (lo, hi) = self.int_extremes().expect("integer domain");
                (lo..=hi).contains(value)
            }
            _ => false,
        }
    }

    /// The smallest and largest float inside (an open end moves one value inward); `None`
    /// for an integer domain.
    pub fn float_extremes(&self) -> Option<(Float, Float)> {
        match self {
            Domain::Float(i) => Some((
                if i.lo_closed { i.lo } else { i.lo.step(1) },
                if i.hi_closed { i.hi } else { i.hi.step(-1) },
            )),
            Domain::Int(_) => None,
        }
    }

    /// The smallest and largest integer inside; `None` for a float domain.
    pub fn int_extremes(&self) -> Option<(i128, i128)> {
        match self {
            Domain::Int(i) => Some((
                if i.lo_closed { i.lo } else { i.lo + 1 },
                if i.hi_closed { i.hi } else { i.hi - 1 },
            )),
            Domain::Float(_) => None,
        }
    }
}

/// A float bound: finite decimals that round to infinity are refused (write `inf`), NaN too.
fn float_bound(ty: crate::op::FloatType, text: &str) -> Result<Float, String> {
    let t = text.trim();
    let x = Float::parse(ty, t).map_err(|_| format!("`{t}` is not a number (a decimal, a hex float, inf or -inf)"))?;
    if x.is_nan() {
        return Err("NaN cannot bound a range".into());
    }
    if x.is_infinite() && !t.to_ascii_lowercase().contains("inf") {
        return Err(format!("`{t}` is beyond the largest finite {ty} (write inf)"));
    }
    Ok(x)
}

/// An integer bound within the field's type.
fn int_bound(ty: FieldType, text: &str) -> Result<i128, String> {
    let t = text.trim();
    let parsed = match t.strip_prefix("-") {
        Some(abs) => abs.parse::<i128>().ok().map(|v| -v),
        None => t.strip_prefix('+').unwrap_or(t).parse::<i128>().ok(),
    };
    let Some(v) = parsed.filter(|_| !t.is_empty()) else {
        return Err(format!("`{t}` is not an integer, as a bound of a {ty} field must be"));
    };
    let (lo, hi) = ty.int_range().expect("integer field");
    if !(lo..=hi).contains(&v) {
        return Err(format!("{v} is outside the range of {ty} ({lo}..={hi})"));
    }
    Ok(v)
}

/// `[0.0,1.0]`, `(0.0,inf)`, `[0,100]`: bounds as [`Float`]'s shortest round-trip decimal,
/// so the text parses back to the same domain.
impl fmt::Display for Domain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (lo_closed, hi_closed) = match self {
            Domain::Float(i) => (i.lo_closed, i.hi_closed),
            Domain::Int(i) => (i.lo_closed, i.hi_closed),
        };
        let (lo, hi) = self.bounds_text();
        let open = if lo_closed { '[' } else { '(' };
        let close = if hi_closed { ']' } else { ')' };
        write!(f, "{open}{lo},{hi}{close}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::FloatType;

    const F64: FieldType = FieldType::Float(FloatType::F64);

    fn f64_value(x: f64) -> Value {
        Value::Float(Float::from_f64(x))
    }

    #[test]
    fn closed_and_open_ends() {
        let unit = Domain::parse(F64, "[0,1]").unwrap();
        assert!(unit.contains(&f64_value(0.0)) && unit.contains(&f64_value(1.0)));
        assert!(!unit.contains(&f64_value(-1e-300)) && !unit.contains(&f64_value(1.0000000000000002)));
        assert!(!unit.contains(&f64_value(f64::NAN)));
        let positive = Domain::parse(F64, "(0, inf)").unwrap();
        assert!(!positive.contains(&f64_value(0.0)) && positive.contains(&f64_value(5e-324)));
        assert!(!positive.contains(&f64_value(f64::INFINITY)) && positive.contains(&f64_value(f64::MAX)));
        let half = Domain::parse(F64, "[-0x1p+3, 0.5)").unwrap();
        assert!(half.contains(&f64_value(-8.0)) && !half.contains(&f64_value(0.5)));
        let percent = Domain::parse(FieldType::I32, "[0,100)").unwrap();
        let int = |value| Value::Int {
            ty: FieldType::I32,
            value,
        };
        assert!(percent.contains(&int(0)) && percent.contains(&int(99)) && !percent.contains(&int(100)));
        assert!(!percent.contains(&int(-1)));
    }

    #[test]
    fn display_round_trips() {
        for (ty, text) in [
            (F64, "[0.0,1.0]"),
            (F64, "(0.0,inf)"),
            (F64, "(-inf,1e-300]"),
            (FieldType::Float(FloatType::F32), "[0.1,0.2)"),
            (FieldType::Float(FloatType::F80), "(0.0,1.0)"),
            (FieldType::U8, "(0,255]"),
        ] {
            let d = Domain::parse(ty, text).unwrap();
            assert_eq!(d.to_string(), text);
            assert_eq!(Domain::parse(ty, &d.to_string()).unwrap(), d);
        }
        assert_eq!(Domain::parse(F64, "[ 0 , 1 ]").unwrap().to_string(), "[0.0,1.0]");
    }

    #[test]
    fn bad_ranges_say_why() {
        let err = |ty, text| Domain::parse(ty, text).unwrap_err();
        assert!(
            err(F64, "[1,0]").contains("above the upper bound"),
            "{}",
            err(F64, "[1,0]")
        );
        assert!(err(F64, "(1,1)").contains("no value"));
        assert!(err(F64, "[1,1)").contains("no value"));
        assert!(Domain::parse(F64, "[1,1]").is_ok());
        assert!(err(F64, "(1,0x1.0000000000001p+0)").contains("no value"));
        assert!(err(FieldType::I32, "(3,4)").contains("no value"));
        assert!(err(F64, "[nan,1]").contains("NaN"));
        assert!(err(F64, "[0,1e400]").contains("write inf"));
        assert!(err(F64, "[zero,1]").contains("not a number"));
        assert!(err(FieldType::I32, "[0,1.5]").contains("not an integer"));
        assert!(err(FieldType::I8, "[0,300]").contains("outside the range of i8"));
        assert!(err(FieldType::U16, "[-1,3]").contains("outside the range of u16"));
        assert!(err(F64, "[0,1").contains("missing closing"));
        assert!(err(F64, "[0]").contains("two bounds"));
        assert!(err(F64, "[0,1,2]").contains("two bounds"));
        assert!(err(F64, "{0,1}").contains("starts with"));
    }
}
