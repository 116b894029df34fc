//! The shadow at an input's neighbours: its value beside an input where it has none at the
//! input itself, and whether one beyond the range is a smooth function of the input there.
//!
//! A shadow that comes out Inf or NaN says one of two things: the function has no finite
//! value there (a pole, the log of an exact zero, a domain error), or the algorithm fails
//! there in any format (an exact 0/0 at a removable singularity, a division by a parameter
//! that is exactly 0, as GSL's `bessel_Inu` at ν = 0 or `lnpoch` at x = 0). Nearby inputs tell
//! them apart: around a removable singularity the shadow is finite and settles on one value
//! (the limit) as the neighbours close in; around a pole or a logarithm it grows, across a
//! jump it differs from side to side, inside a domain error it stays NaN.
//!
//! The neighbours move every finite float field of the input at once, by a relative step (an
//! absolute one at zero and for subnormals, which a relative step cannot move), with a different weight and direction per field so that a singular
//! line such as `a + x = 0` is left rather than followed. Two steps on each side: `FAR` and
//! `NEAR`, far enough apart that a pole's growth or a log's cannot hide in the tolerance.

use numfuzz_abi::op::FloatType;
use numfuzz_abi::signature::Signature;
use numfuzz_abi::value::{Float, Value};

/// Relative steps (far, near) for a field of this format: well above its rounding, and far
/// apart (2^17 for double, 2^10 for float).
fn steps(ty: FloatType) -> Option<(f64, f64)> {
    match ty {
        FloatType::F64 => Some((2f64.powi(-17), 2f64.powi(-34))),
        FloatType::F32 => Some((2f64.powi(-6), 2f64.powi(-16))),
        // A long double field is not moved: the step would need the f80 arithmetic Rust lacks.
        FloatType::F80 => None,
    }
}

/// How closely the near values must agree, and how little they may outgrow the far ones,
/// relative to the far values' magnitude.
const SETTLED: f64 = 1e-2;

/// Which step a neighbour takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Far,
    Near,
}

/// The input beside `bytes` at `step` on `side` (+1 or -1), or `None` when no field can move,
/// a moved field leaves the format's range or the signature's declared domain.
pub fn neighbour(signature: &Signature, bytes: &[u8], step: Step, side: f64) -> Option<Vec<u8>> {
    let mut values = signature.decode(bytes);
    let mut moved = 0;
    for v in values.iter_mut() {
        let Value::Float(x) = *v else { continue };
        let Some((far, near)) = steps(x.ty) else { continue };
        let scale = if step == Step::Far { far } else { near };
        // Alternating directions, falling weights: 1, -1/2, 1/3, ...
        let weight = if moved % 2 == 0 { 1.0 } else { -1.0 } / (moved + 1) as f64;
        let delta = side * weight * scale;
        let moved_to = match x.ty {
            FloatType::F64 => {
                let x = x.as_f64();
                if !x.is_finite() {
                    continue;
                }
                Float::from_f64(if x.is_normal() { x * (1.0 + delta) } else { delta })
            }
            _ => {
                let x = x.as_f32();
                if !x.is_finite() {
                    continue;
                }
                Float::from_f32(if x.is_normal() {
                    x * (1.0 + delta as f32)
                } else {
                    delta as f32
                })
            }
        };
        if !moved_to.is_finite() {
            return None;
        }
        *v = Value::Float(moved_to);
        moved += 1;
    }
    if moved == 0 {
        return None;
    }
    let encoded = signature.encode(&values).ok()?;
    signature.in_domain(&encoded).then_some(encoded)
}

/// A decimal as sign × mantissa in [1, 10) × 10^exponent (exponents beyond any format's).
#[derive(Clone, Copy, Debug)]
struct Wide {
    mantissa: f64,
    exponent: i64,
}

impl Wide {
    /// `Some(None)` for a zero, `None` for Inf, NaN or text that is no decimal.
    fn parse(text: &str) -> Option<Option<Wide>> {
        let lower = text.trim().to_ascii_lowercase();
        if lower.contains("inf") || lower.contains("nan") {
            return None;
        }
        if let Some((mantissa, exponent)) = scientific(&lower) {
            return Some(Some(Wide { mantissa, exponent }));
        }
        lower.parse::<f64>().ok().filter(|z| *z == 0.0).map(|_| None)
    }

    /// The value in units of 10^`exponent` (0 when far below them).
    fn scaled(value: Option<Wide>, exponent: i64) -> f64 {
        value.map_or(0.0, |w| match w.exponent - exponent {
            d if d < -330 => 0.0,
            d => w.mantissa * 10f64.powi(d as i32),
        })
    }
}

/// The shadow's limit at the input from its values at the neighbours, `(far, near)` pairs of
/// decimals, one pair per side: `Some(value)` when every neighbour of the sides inside the
/// domain has a finite shadow, the near ones agree with one another and do not outgrow the
/// far ones (a removable singularity: the value is the first near one); `None` when the point
/// is a true singularity or the neighbours say nothing (non-finite, growing, different from
/// side to side).
pub fn settled(sides: &[(String, String)], one_sided: bool) -> Option<String> {
    // With `one_sided`, a side whose neighbours are both NaN lies outside the function's domain
    // (GSL's `Inu` below ν = 0): the limit is the other side's.
    let nan = |t: &str| t.to_ascii_lowercase().contains("nan");
    let sides: Vec<&(String, String)> = sides
        .iter()
        .filter(|(far, near)| !(one_sided && nan(far) && nan(near)))
        .collect();
    if sides.is_empty() {
        return None;
    }
    let parsed: Vec<(Option<Wide>, Option<Wide>)> = sides
        .iter()
        .map(|(far, near)| Some((Wide::parse(far)?, Wide::parse(near)?)))
        .collect::<Option<_>>()?;
    let top = parsed.iter().filter_map(|(far, _)| far.map(|w| w.exponent)).max()?;
    let far = parsed
        .iter()
        .map(|(f, _)| Wide::scaled(*f, top).abs())
        .fold(0.0, f64::max);
    let near: Vec<f64> = parsed.iter().map(|(_, n)| Wide::scaled(*n, top)).collect();
    let largest = near.iter().map(|n| n.abs()).fold(0.0, f64::max);
    let spread =
        near.iter().fold(f64::NEG_INFINITY, |m, n| m.max(*n)) - near.iter().fold(f64::INFINITY, |m, n| m.min(*n));
    // A limit of zero (values that shrink with the step) is not taken: the function may be 0
    // there, or undefined by its definition (C's fmod(x, 0), whose quotients shrink with y).
    let vanishing = largest < 0.5 * far;
    (!vanishing && largest <= (1.0 + SETTLED) * far && spread <= SETTLED * far).then(|| sides[0].1.clone())
}

/// Whether some float field of the input is exactly zero: the only point where a side of
/// NaN neighbours is taken as the edge of the domain rather than the input's own region
/// (`pow(-5e-324, -5e-324)` is NaN on both sides, and rightly).
pub fn at_zero(signature: &Signature, bytes: &[u8]) -> bool {
    signature.decode(bytes).iter().any(|v| match v {
        Value::Float(x) if x.ty == FloatType::F64 => x.as_f64() == 0.0,
        Value::Float(x) if x.ty == FloatType::F32 => x.as_f32() == 0.0,
        _ => false,
    })
}

/// Whether every finite float field of the input is a normal number, so that its neighbours
/// are relative ones. The smoothness test needs them: beside 5e-324 the neighbours are at
/// ±2^-17, where Γ is ±1.3e5 for a true Γ(5e-324) = 2.0e323.
pub fn moves_relatively(signature: &Signature, bytes: &[u8]) -> bool {
    signature.decode(bytes).iter().all(|v| match v {
        Value::Float(x) if x.ty == FloatType::F64 => !x.as_f64().is_finite() || x.as_f64().is_normal(),
        Value::Float(x) if x.ty == FloatType::F32 => !x.as_f32().is_finite() || x.as_f32().is_normal(),
        _ => true,
    })
}

/// Whether a shadow beyond the format's range is a smooth function of the input beside it, as
/// a true overflow is: the four neighbours' shadows (`(far, near)` per side) are finite and of
/// one sign, and the change of `ln |shadow|` between the near ones is to the change between the
/// far ones at most about as the steps are (a hundredth: the steps are 2^17 apart). A shadow
/// made of rounding noise (a cancellation of terms the wider format could not hold either)
/// changes as much, or flips sign, between the near neighbours as between the far ones. A steep
/// true overflow (`K_ν(x)` at ν = 1e16, whose logarithm moves by ν times the step) still scales
/// with the step. `None` when the neighbours cannot say (not both sides, or non-finite).
pub fn steady(sides: &[(String, String)]) -> Option<bool> {
    let [(far_plus, near_plus), (far_minus, near_minus)] = sides else {
        return None;
    };
    let values: Vec<Wide> = [far_plus, far_minus, near_plus, near_minus]
        .iter()
        .map(|t| Wide::parse(t).flatten())
        .collect::<Option<_>>()?;
    if values
        .iter()
        .any(|w| w.mantissa.signum() != values[0].mantissa.signum())
    {
        return Some(false);
    }
    // ln |a| - ln |b|, exponents subtracted as integers first (they may be 1e18).
    let log_ratio = |a: &Wide, b: &Wide| {
        (a.mantissa.abs() / b.mantissa.abs()).ln() + (a.exponent - b.exponent) as f64 * std::f64::consts::LN_10
    };
    let far = log_ratio(&values[0], &values[1]).abs();
    let near = log_ratio(&values[2], &values[3]).abs();
    // The floor: the rounding of an x87 shadow, relative to its logarithm.
    let floor = 1e-12 * (values[0].exponent as f64 * std::f64::consts::LN_10).abs().max(1.0);
    Some(near <= SETTLED * far + floor)
}

/// A decimal as (signed mantissa in [1, 10), exponent), or `None` for zero; the exponent may
/// be beyond any binary format's (`4.3e3060`).
pub(super) fn scientific(text: &str) -> Option<(f64, i64)> {
    let lower = text.trim().to_ascii_lowercase();
    let (m, e) = lower.split_once('e').unwrap_or((&lower, "0"));
    let (mut m, mut e): (f64, i64) = (m.parse().ok()?, e.parse().ok()?);
    if m == 0.0 || !m.is_finite() {
        return None;
    }
    while m.abs() >= 10.0 {
        m /= 10.0;
        e += 1;
    }
    while m.abs() < 1.0 {
        m *= 10.0;
        e -= 1;
    }
    Some((m, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settled_both(sides: &[(String, String)]) -> Option<String> {
        settled(sides, true)
    }

    fn sides(f: impl Fn(f64) -> f64, at: f64) -> Vec<(String, String)> {
        let (far, near) = steps(FloatType::F64).unwrap();
        [1.0, -1.0]
            .iter()
            .map(|s: &f64| {
                let x = |d: f64| if at == 0.0 { s * d } else { at * (1.0 + s * d) };
                (format!("{:e}", f(x(far))), format!("{:e}", f(x(near))))
            })
            .collect()
    }

    #[test]
    fn a_removable_singularity_settles_on_its_limit() {
        let limit = settled_both(&sides(|x| x.exp_m1() / x, 0.0)).expect("removable");
        assert!((limit.parse::<f64>().unwrap() - 1.0).abs() < 1e-9, "{limit}");
        let limit = settled_both(&sides(|x| x.sin() / x * 1e300, 0.0)).expect("large limit");
        assert!(limit.parse::<f64>().unwrap() > 9.9e299, "{limit}");
        // A limit of zero is not taken (x log x at 0; C's fmod(x, 0) is NaN by definition).
        assert_eq!(settled_both(&sides(|x| x * x.abs().ln(), 0.0)), None);
    }

    #[test]
    fn poles_logarithms_jumps_and_domain_errors_do_not_settle() {
        assert_eq!(settled_both(&sides(|x| 1.0 / (x - 1.0), 1.0)), None, "pole");
        assert_eq!(
            settled_both(&sides(|x| (x - 1.0).abs().ln(), 1.0)),
            None,
            "log of |x - 1|"
        );
        assert_eq!(
            settled_both(&sides(|x| (x - 1.0).ln(), 1.0)),
            None,
            "log of x - 1: NaN on one side"
        );
        assert_eq!(settled_both(&sides(|x| x / x.abs(), 0.0)), None, "jump");
        assert_eq!(settled_both(&sides(|x| (-x * x).sqrt(), 2.0)), None, "domain error");
        // Inside the domain on one side only: that side's limit (sqrt(x)/sqrt(x) at 0).
        let limit = settled_both(&sides(|x| x.sqrt() / x.sqrt(), 0.0)).expect("one-sided");
        assert_eq!(limit.parse::<f64>().unwrap(), 1.0);
        assert_eq!(
            settled_both(&sides(|x| x.ln(), 0.0)),
            None,
            "log at 0 from the right grows"
        );
        assert_eq!(settled(&[], true), None);
        // Without `one_sided`, a NaN side keeps the NaN.
        assert_eq!(settled(&sides(|x| x.sqrt() / x.sqrt(), 0.0), false), None);
    }

    #[test]
    fn limits_beyond_the_double_range_are_compared_as_decimals() {
        let s = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(
            settled_both(&[s("2.7254e481", "2.72541e481"), s("2.7255e481", "2.72541e481")]),
            Some("2.72541e481".into())
        );
        assert_eq!(settled_both(&[s("2.7e481", "2.7e489"), s("2.7e481", "2.7e489")]), None);
        assert_eq!(settled_both(&[s("0", "0"), s("-0.0", "0")]), None);
    }

    #[test]
    fn a_true_overflow_is_smooth_beside_the_input_and_noise_is_not() {
        let exp = |x: f64| format!("{:e}", x.exp());
        let (far, near) = steps(FloatType::F64).unwrap();
        let at = |x: f64, f: &dyn Fn(f64) -> String| {
            vec![
                (f(x * (1.0 + far)), f(x * (1.0 + near))),
                (f(x * (1.0 - far)), f(x * (1.0 - near))),
            ]
        };
        assert_eq!(steady(&at(700.0, &exp)), Some(true), "exp, in range here, is smooth");
        // A steep one: x^-1e6 at 0.5, in decimals beyond any format.
        let steep = |x: f64| {
            let l = -1e6 * x.log10();
            format!("{}e{}", 10f64.powf(l.fract()), l.trunc() as i64)
        };
        assert_eq!(steady(&at(0.5, &steep)), Some(true));
        let s = |v: [&str; 4]| {
            vec![
                (v[0].to_string(), v[1].to_string()),
                (v[2].to_string(), v[3].to_string()),
            ]
        };
        assert_eq!(
            steady(&s(["2.2e481", "-7.1e479", "3.0e480", "1.0e481"])),
            Some(false),
            "a sign flip"
        );
        assert_eq!(
            steady(&s(["2.2e481", "5.0e481", "3.0e480", "1.0e481"])),
            Some(false),
            "as much change near as far"
        );
        assert_eq!(steady(&s(["2.2e481", "nan", "3.0e480", "1.0e481"])), None);
        assert_eq!(
            steady(&s(["2.2e481", "2.2e481", "2.2e481", "2.2e481"])[..1]),
            None,
            "one side"
        );
    }

    #[test]
    fn neighbours_move_every_finite_float_field_and_keep_the_rest() {
        let sig = Signature::parse("i32,f64,f64,f32").unwrap();
        let at = sig.encode_text(&["7", "0", "3", "inf"]).unwrap();
        let far = sig.decode(&neighbour(&sig, &at, Step::Far, 1.0).unwrap());
        let near = sig.decode(&neighbour(&sig, &at, Step::Near, -1.0).unwrap());
        let f64_of = |v: &Value| match v {
            Value::Float(x) => x.as_f64(),
            _ => panic!("{v:?}"),
        };
        assert_eq!(far[0].to_string(), "7");
        assert_eq!(f64_of(&far[1]), 2f64.powi(-17));
        assert_eq!(f64_of(&far[2]), 3.0 * (1.0 - 2f64.powi(-17) / 2.0));
        assert_eq!(f64_of(&near[1]), -(2f64.powi(-34)));
        assert_eq!(far[3].to_string(), "inf");
        let ints = Signature::parse("i32").unwrap();
        assert_eq!(
            neighbour(&ints, &ints.encode_text(&["1"]).unwrap(), Step::Far, 1.0),
            None
        );
        let tiny = sig.encode_text(&["7", "5e-324", "3", "0"]).unwrap();
        let moved = sig.decode(&neighbour(&sig, &tiny, Step::Near, 1.0).unwrap());
        assert_eq!(f64_of(&moved[1]), 2f64.powi(-34), "a subnormal moves as zero does");
        assert!(!moves_relatively(&sig, &tiny), "5e-324 and 0 move absolutely");
        assert!(moves_relatively(
            &sig,
            &sig.encode_text(&["7", "2", "3", "inf"]).unwrap()
        ));
        let edge = sig.encode_text(&["7", "1.7976931348623157e308", "3", "0"]).unwrap();
        assert_eq!(neighbour(&sig, &edge, Step::Far, 1.0), None, "beyond the range");
    }
}
