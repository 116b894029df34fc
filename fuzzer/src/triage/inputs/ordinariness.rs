//! How ordinary an input is: the bug list leads with the bugs a maintainer's users will meet,
//! and each bug shows its most ordinary input.
//!
//! An input is as unusual as its most unusual field: a field's magnitude is `|log10 |x||` (0
//! for 1.0 and for 0, 3 for 1000 and for 0.001; an integer n counts as `log10(|n| + 1)`).
//! Fields at the edges of their format come after every other input whatever their
//! magnitude: subnormals, and values within [`EDGE_ULPS`] ulps of the largest finite value
//! or of the smallest normal one (a fuzzer's boundary values, which real callers seldom pass).
//! NaN and infinite fields are input-borne and never bugs; they sort last.

use numfuzz_abi::signature::Signature;
use numfuzz_abi::value::{Float, FloatClass, Value};
use std::cmp::Ordering;

/// Ulps from a format's limits within which a value counts as an edge value.
pub const EDGE_ULPS: i128 = 4;

/// An input's ordinariness; smaller is more ordinary.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ordinariness {
    /// Some field is NaN, infinite, subnormal or at a format's limit.
    pub edge: bool,
    /// The largest field magnitude (`|log10 |x||`).
    pub magnitude: f64,
}

impl Eq for Ordinariness {}

impl PartialOrd for Ordinariness {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ordinariness {
    fn cmp(&self, other: &Self) -> Ordering {
        self.edge
            .cmp(&other.edge)
            .then(self.magnitude.total_cmp(&other.magnitude))
    }
}

/// Is `x` subnormal, non-finite, or within [`EDGE_ULPS`] of the largest finite or the smallest
/// normal value of its format?
fn at_edge(x: Float) -> bool {
    if !matches!(x.class(), FloatClass::Normal | FloatClass::Zero) {
        return true;
    }
    if x.is_zero() {
        return false;
    }
    let a = x.abs().ord();
    let near = |limit: Float| (a - limit.ord()).abs() < EDGE_ULPS;
    near(Float::max_finite(x.ty, false)) || near(Float::min_normal(x.ty, false))
}

fn magnitude(v: &Value) -> f64 {
    match v {
        Value::Float(f) if f.is_zero() || !f.is_finite() => 0.0,
        Value::Float(f) => {
            let (m, e) = f.decompose().unwrap_or((1, 0));
            // log2 |x| = log2 m + e, without converting an f80 to f64 (it may not fit).
            ((m as f64).log2() + e as f64).abs() * std::f64::consts::LOG10_2
        }
        Value::Int { value, .. } => (value.unsigned_abs() as f64 + 1.0).log10(),
    }
}

/// The ordinariness of an input's bytes as `signature` decodes them (without a signature,
/// every input is as ordinary as any other).
pub fn of(signature: Option<&Signature>, bytes: &[u8]) -> Ordinariness {
    let Some(sig) = signature else {
        return Ordinariness::default();
    };
    sig.decode(bytes)
        .iter()
        .fold(Ordinariness::default(), |acc, v| Ordinariness {
            edge: acc.edge || matches!(v, Value::Float(f) if at_edge(*f)),
            magnitude: acc.magnitude.max(magnitude(v)),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f64s(xs: &[f64]) -> Vec<u8> {
        xs.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn the_most_unusual_field_decides_and_edges_come_last() {
        let sig = Signature::parse("f64,f64").unwrap();
        let o = |xs: &[f64]| of(Some(&sig), &f64s(xs));
        assert!((o(&[1000.0, 0.5]).magnitude - 3.0).abs() < 1e-9);
        assert!((o(&[0.001, 0.0]).magnitude - 3.0).abs() < 1e-9);
        assert!(o(&[709.7, 1.0]) < o(&[1e10, 1.0]));
        assert!(o(&[1e300, 1.0]) < o(&[5e-324, 1.0]), "a subnormal is an edge value");
        assert!(o(&[1.0, f64::MAX]).edge);
        assert!(o(&[1.0, f64::MIN_POSITIVE]).edge);
        assert!(!o(&[1.0, 1e-300]).edge);
        assert!(o(&[1.0, f64::NAN]).edge);
        let ints = Signature::parse("i32").unwrap();
        assert!((of(Some(&ints), &99i32.to_le_bytes()).magnitude - 2.0).abs() < 1e-9);
        assert_eq!(of(None, &[1, 2, 3]), Ordinariness::default());
    }
}
