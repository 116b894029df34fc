//! fadd, fsub, fmul, fdiv, frem, fmuladd, fma.

use super::{Limits, Operands, Outcome};
use crate::fpu;
use numfuzz_abi::errbits::{not_raised, NOT_MEASURED};
use numfuzz_abi::kind::ExceptionKind::{DivByZero, Invalid, Overflow, Underflow};
use numfuzz_abi::op::{FloatType, Op};

pub fn classify(op: Op, ty: FloatType, ops: &Operands) -> Outcome {
    let lim = Limits::of(ty);
    let (a, b, r) = (ops.a, ops.b, ops.r);
    let mut out = Outcome::new();
    if op == Op::FRem {
        // fmod is exact: only Invalid (x infinite or y zero, no NaN operand; or a
        // signalling NaN operand).
        let invalid =
            (a.is_signaling() || b.is_signaling()) || (!a.is_nan() && !b.is_nan() && (a.is_infinite() || b.is_zero()));
        if invalid {
            out.raise(Invalid);
        }
        out.measure(Invalid, || {
            if a.is_finite() && b.is_finite() {
                not_raised(b.abs(), lim.zero)
            } else {
                NOT_MEASURED
            }
        });
        return out;
    }
    if !lim.strictly_normal(r) {
        out.raised = fpu::reexec(op, ty, ops);
    }
    out.measure(Overflow, || {
        if r.is_finite() {
            not_raised(r.abs(), lim.max)
        } else {
            NOT_MEASURED
        }
    });
    out.measure(Underflow, || {
        if r.is_finite() && !r.is_zero() {
            not_raised(r.abs(), lim.min_normal)
        } else {
            NOT_MEASURED
        }
    });
    if op == Op::FDiv {
        out.measure(DivByZero, || {
            if b.is_finite() {
                not_raised(b.abs(), lim.zero)
            } else {
                NOT_MEASURED
            }
        });
    }
    out
}
