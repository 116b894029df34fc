//! Taint builds (`NUMFUZZ_CC_TAINT=1 numfuzz-cc`): which findings each value came from.
//!
//! The pass replaces every checked operation's result by what a `__numfuzz_taint_*` hook
//! returns (the same value). DataFlowSanitizer hands the hook's `__dfsw_` wrapper (the C
//! shim) the labels of the operands, and the label the runtime computes here becomes the
//! result's; DataFlowSanitizer carries it through memory, copies and uninstrumented libm
//! calls from there.
//!
//! A label names a finding of this run: the exceptional (site, kind) pairs are numbered in
//! the order of their first exception, and numbers `skip .. skip + LABELS` get label bits
//! 0..LABELS (see numfuzz-abi's `taint`). [`result_label`] is the propagation rule of the two
//! modes; every check also records which labels flowed into the findings it raised, which is
//! what root-cause chains are built from.

use crate::check::Operands;
use numfuzz_abi::env;
use numfuzz_abi::kind::ExceptionKind;
use numfuzz_abi::op::Op;
use numfuzz_abi::report::{TaintFlow, TaintReport};
use numfuzz_abi::taint::{label_list, stand_in, Repair, TaintMode, LABELS};
use numfuzz_abi::value::{Float, FloatClass};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// What an operation produced.
#[derive(Clone, Copy, Debug)]
pub enum Produced {
    Float(Float),
    /// A conversion to an integer; `invalid` when it raised Invalid (a NaN, an infinity or an
    /// out-of-range value gave an unspecified integer).
    Int {
        invalid: bool,
    },
}

fn exceptional(x: Float) -> bool {
    !matches!(x.class(), FloatClass::Normal)
}

fn same_value(x: Float, y: Float) -> bool {
    x.partial_cmp_num(y) == Some(Ordering::Equal)
}

/// Did the addend `x` leave no trace in the sum `r` of `x` and `other` (`r == other`, with
/// `other` non-zero and different from `x`)?
fn absorbed(x: Float, other: Float, r: Float) -> bool {
    !other.is_zero() && same_value(r, other) && !same_value(x, r)
}

/// Does operand `k` of `op` (labels `labels[k]`; `floats` are the operation's float operands,
/// an integer operand has no float) pass its labels into what the operation produced?
fn passes(mode: TaintMode, op: Op, floats: &[Float], k: usize, produced: Produced) -> bool {
    let x = floats.get(k).copied();
    match (mode, produced) {
        (TaintMode::NonFinite, Produced::Float(r)) => {
            exceptional(r) && (x.is_none_or(|x| x.is_finite()) || !r.is_finite())
        }
        (TaintMode::NonFinite, Produced::Int { invalid }) => invalid,
        (TaintMode::Influence, Produced::Int { .. }) => true,
        (TaintMode::Influence, Produced::Float(r)) => {
            let Some(x) = x else { return true };
            if !x.is_finite() && r.is_finite() {
                return false;
            }
            match (op, floats) {
                (Op::FAdd, [a, b]) => !absorbed(x, if k == 0 { *b } else { *a }, r),
                (Op::FSub, [a, b]) if k == 1 => !absorbed(x.neg(), *a, r),
                (Op::FSub, [_, b]) => !absorbed(x, b.neg(), r),
                _ => true,
            }
        }
    }
}

/// The label of an operation's result: the labels of the findings it raised (`own`), plus
/// the operands' labels that pass into it (`operand_labels`: the float operands in order,
/// then the integer operand). Returns (result label, the operand labels that passed).
pub fn result_label(
    mode: TaintMode,
    op: Op,
    ops: &Operands,
    operand_labels: [u8; 4],
    produced: Produced,
    own: u8,
) -> (u8, u8) {
    let (floats, n) = ops.floats(op);
    let floats = &floats[..n];
    let mut passed = 0;
    for (k, &label) in operand_labels.iter().enumerate() {
        // Slots beyond the float operands: the integer operand is the last one.
        let index = if k < n {
            k
        } else if k == 3 {
            usize::MAX
        } else {
            continue;
        };
        if label != 0 && passes(mode, op, floats, index, produced) {
            passed |= label;
        }
    }
    (own | passed, passed)
}

/// The findings of the current run and their labels.
struct State {
    mode: TaintMode,
    skip: u32,
    /// The (site, kind) whose generated results get a finite stand-in (`NUMFUZZ_REPAIR`).
    repair: Option<Repair>,
    /// A stand-in was given in this run (the repair's cascade follows it).
    repair_given: bool,
    /// Raised (site, kind) pairs in the order of their first exception.
    order: Vec<(u32, ExceptionKind)>,
    index: BTreeMap<(u32, ExceptionKind), usize>,
    /// Per finding (same order): labels that flowed into it.
    from: Vec<u8>,
}

static STATE: Mutex<State> = Mutex::new(State {
    mode: TaintMode::NonFinite,
    skip: 0,
    repair: None,
    repair_given: false,
    order: Vec::new(),
    index: BTreeMap::new(),
    from: Vec::new(),
});

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

impl State {
    fn label(&self, position: usize) -> Option<u8> {
        let p = position as u32;
        (p >= self.skip && p < self.skip + LABELS).then(|| (p - self.skip) as u8)
    }
}

/// Reads `NUMFUZZ_TAINT_SKIP`, `NUMFUZZ_TAINT_MODE` and `NUMFUZZ_REPAIR` (a bad value is a
/// start-up error).
pub fn configure_from_env() -> Result<(), String> {
    let mut st = state();
    if let Ok(v) = std::env::var(env::TAINT_SKIP) {
        st.skip = v
            .parse()
            .map_err(|_| format!("{}={v}: expected a number", env::TAINT_SKIP))?;
    }
    if let Ok(v) = std::env::var(env::TAINT_MODE) {
        st.mode =
            TaintMode::parse(&v).ok_or_else(|| format!("{}={v}: expected nonfinite or influence", env::TAINT_MODE))?;
    }
    if let Ok(v) = std::env::var(env::REPAIR) {
        st.repair = Some(
            Repair::parse(&v).ok_or_else(|| format!("{}={v}: expected SITE:KIND, e.g. 12:Overflow", env::REPAIR))?,
        );
    }
    Ok(())
}

/// The stand-in for the result `r` of a check at `site` that raised `raised` (bit per kind)
/// from finite operands (`origin`): when that (site, kind) is the one repaired, or when it
/// is the repair's cascade: an exception of the same kind whose operands carry the repaired
/// finding's label (`passed`), once a stand-in was given in this run. A stand-in at the edge
/// of the format (the largest finite value) overflows again in the next operation
/// (`2 * DBL_MAX`) where the exact value would not; that exception is the stand-in's own
/// doing and is repaired with it. Other kinds, and exceptions downstream of a repair that
/// changed nothing (a subnormal kept), are not: they belong to the input, not to the repair.
pub fn repaired(site: u32, raised: u8, origin: bool, r: Float, passed: u8) -> Option<Float> {
    let mut st = state();
    let repair = st.repair?;
    if !origin || raised & (1 << repair.kind as u8) == 0 {
        return None;
    }
    if repair.site == site {
        let x = stand_in(repair.kind, r);
        st.repair_given |= x.is_some();
        return x;
    }
    let label = st.label(*st.index.get(&(repair.site, repair.kind))?)?;
    (st.repair_given && passed & (1 << label) != 0)
        .then(|| stand_in(repair.kind, r))
        .flatten()
}

/// Forgets the previous input's findings.
pub fn reset() {
    let mut st = state();
    st.repair_given = false;
    st.order.clear();
    st.index.clear();
    st.from.clear();
}

pub fn mode() -> TaintMode {
    state().mode
}

/// Numbers the kinds of `raised` at `site` not seen before in this run; returns the label set
/// of all of them.
pub fn assign(site: u32, raised: u8) -> u8 {
    let mut st = state();
    let mut own = 0;
    for kind in ExceptionKind::ALL {
        if raised & (1 << kind as u8) == 0 {
            continue;
        }
        let position = match st.index.get(&(site, kind)) {
            Some(&p) => p,
            None => {
                let p = st.order.len();
                st.order.push((site, kind));
                st.index.insert((site, kind), p);
                st.from.push(0);
                p
            }
        };
        if let Some(label) = st.label(position) {
            own |= 1 << label;
        }
    }
    own
}

/// Records that `incoming` labels flowed into the findings `raised` at `site`.
pub fn note_flow(site: u32, raised: u8, incoming: u8) {
    if incoming == 0 {
        return;
    }
    let mut st = state();
    for kind in ExceptionKind::ALL {
        if raised & (1 << kind as u8) != 0 {
            if let Some(&p) = st.index.get(&(site, kind)) {
                st.from[p] |= incoming;
            }
        }
    }
}

/// The label of (site, kind) in this run, if it has one.
pub fn label_of(site: u32, kind: ExceptionKind) -> Option<u8> {
    let st = state();
    st.index.get(&(site, kind)).and_then(|&p| st.label(p))
}

/// Did anything assign labels in this run (a taint build)?
pub fn active() -> bool {
    !state().order.is_empty()
}

/// The run's findings with their labels and flows.
pub fn summary() -> TaintReport {
    let st = state();
    TaintReport {
        mode: st.mode,
        skip: st.skip,
        findings: st.order.len() as u32,
        flows: st
            .order
            .iter()
            .enumerate()
            .map(|(p, &(site, kind))| TaintFlow {
                site,
                kind,
                label: st.label(p),
                from: label_list(st.from[p]),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use numfuzz_abi::op::FloatType;

    fn f(x: f64) -> Float {
        Float::from_f64(x)
    }

    fn ops(a: f64, b: f64, r: f64) -> Operands {
        Operands {
            a: f(a),
            b: f(b),
            c: f(0.0),
            i: 0,
            r: f(r),
        }
    }

    fn label(mode: TaintMode, op: Op, a: f64, b: f64, r: f64, la: u8, lb: u8) -> u8 {
        result_label(mode, op, &ops(a, b, r), [la, lb, 0, 0], Produced::Float(f(r)), 0).0
    }

    const NF: TaintMode = TaintMode::NonFinite;
    const INF: TaintMode = TaintMode::Influence;

    #[test]
    fn nonfinite_labels_follow_exceptional_values_only() {
        let inf = f64::INFINITY;
        // inf * 2 = inf: the overflow's label goes on.
        assert_eq!(label(NF, Op::FMul, inf, 2.0, inf, 1, 0), 1);
        // 1 / inf = 0: killed, although 0 is an exceptional value.
        assert_eq!(label(NF, Op::FDiv, 1.0, inf, 0.0, 0, 1), 0);
        // An underflowed 0 into 1/0 = inf: passes.
        assert_eq!(label(NF, Op::FDiv, 1.0, 0.0, inf, 0, 4), 4);
        // x + 0 = x (normal): the underflow leaves no trace.
        assert_eq!(label(NF, Op::FAdd, 3.0, 0.0, 3.0, 0, 4), 0);
        // A subnormal scaled back to a normal number: dropped in this mode.
        assert_eq!(label(NF, Op::FMul, 5e-320, 1e300, 4.99e-20, 4, 0), 0);
        // 0 * x = 0 keeps the zero's label.
        assert_eq!(label(NF, Op::FMul, 0.0, 7.0, 0.0, 2, 0), 2);
        // Own labels always stay.
        let (l, passed) = result_label(
            NF,
            Op::FMul,
            &ops(1e300, 1e10, inf),
            [0, 0, 0, 0],
            Produced::Float(f(inf)),
            8,
        );
        assert_eq!((l, passed), (8, 0));
    }

    #[test]
    fn influence_labels_follow_every_value_but_killed_and_absorbed_ones() {
        let inf = f64::INFINITY;
        assert_eq!(label(INF, Op::FMul, 5e-320, 1e300, 4.99e-20, 4, 0), 4);
        assert_eq!(label(INF, Op::FDiv, 1.0, inf, 0.0, 0, 1), 0, "killed");
        // 1 + 1e-300 = 1: the small addend is absorbed, the 1 is not.
        assert_eq!(label(INF, Op::FAdd, 1.0, 1e-300, 1.0, 2, 4), 2);
        assert_eq!(label(INF, Op::FAdd, 1e-300, 1.0, 1.0, 4, 2), 2);
        // 1 - 1e-300 = 1, and 1e-300 - 1 = -1.
        assert_eq!(label(INF, Op::FSub, 1.0, 1e-300, 1.0, 2, 4), 2);
        assert_eq!(label(INF, Op::FSub, 1e-300, 1.0, -1.0, 4, 2), 2);
        // A sum both operands change keeps both.
        assert_eq!(label(INF, Op::FAdd, 1.0, 2.0, 3.0, 2, 4), 6);
        // 0 + 0 = 0: nothing absorbed (the other addend is zero).
        assert_eq!(label(INF, Op::FAdd, 0.0, 0.0, 0.0, 2, 4), 6);
    }

    #[test]
    fn conversions_and_integer_operands() {
        let o = Operands {
            a: f(f64::NAN),
            b: f(0.0),
            c: f(0.0),
            i: 0,
            r: f(0.0),
        };
        let int = |invalid| Produced::Int { invalid };
        assert_eq!(result_label(NF, Op::FPToSI, &o, [1, 0, 0, 0], int(true), 0).0, 1);
        assert_eq!(result_label(NF, Op::FPToSI, &o, [1, 0, 0, 0], int(false), 0).0, 0);
        assert_eq!(result_label(INF, Op::FPToSI, &o, [1, 0, 0, 0], int(false), 0).0, 1);
        // ldexp(x, n): the integer operand's label passes into an exceptional result.
        let l = Operands {
            a: f(1.0),
            b: f(0.0),
            c: f(0.0),
            i: 5000,
            r: f(f64::INFINITY),
        };
        let inf = Produced::Float(Float::infinity(FloatType::F64, false));
        assert_eq!(result_label(NF, Op::Ldexp, &l, [0, 0, 0, 16], inf, 0).0, 16);
        // Labels of slots beyond the operation's operands are ignored.
        assert_eq!(result_label(NF, Op::Ldexp, &l, [0, 32, 0, 0], inf, 0).0, 0);
    }

    #[test]
    fn findings_are_numbered_in_order_and_labelled_in_a_window() {
        {
            let mut st = state();
            st.skip = 1;
        }
        reset();
        let ov = 1 << ExceptionKind::Overflow as u8;
        let un = 1 << ExceptionKind::Underflow as u8;
        assert_eq!(assign(7, un), 0, "the first finding is skipped");
        assert_eq!(assign(3, ov), 1, "the second gets label 0");
        assert_eq!(
            assign(7, un | ov),
            2,
            "site 7's overflow is new: label 1; its underflow has none"
        );
        assert_eq!(label_of(3, ExceptionKind::Overflow), Some(0));
        assert_eq!(label_of(7, ExceptionKind::Underflow), None);
        note_flow(7, ov, 1);
        let s = summary();
        assert_eq!(s.findings, 3);
        assert_eq!(s.flows[2].from, [0]);
        assert_eq!(s.flows[2].label, Some(1));
        assert!(active());
        reset();
        assert!(!active());
        state().skip = 0;
    }
}
