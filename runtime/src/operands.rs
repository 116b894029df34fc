//! What one checked operation read and produced, as the checkers and the FPU's re-execution
//! both take it.

use numfuzz_abi::op::{Op, OpShape};
use numfuzz_abi::value::Float;

/// Operands and result of one checked operation (unused ones are zero).
#[derive(Clone, Copy, Debug)]
pub struct Operands {
    pub a: Float,
    pub b: Float,
    pub c: Float,
    pub i: i64,
    pub r: Float,
}

impl Operands {
    /// The floating-point operands the operation reads (by its shape), and how many.
    pub fn floats(&self, op: Op) -> ([Float; 3], usize) {
        let n = match op.shape() {
            OpShape::Infix(_) | OpShape::Binary => 2,
            OpShape::Ternary => 3,
            OpShape::ToInt | OpShape::Narrow | OpShape::Unary | OpShape::FloatInt => 1,
        };
        ([self.a, self.b, self.c], n)
    }

    /// Every floating-point operand is finite (not Inf, not NaN): an exception of this
    /// operation is an origin (it generated the exceptional value).
    pub fn all_finite(&self, op: Op) -> bool {
        let (f, n) = self.floats(op);
        f[..n].iter().all(|x| x.is_finite())
    }
}
