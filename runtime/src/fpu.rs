//! The C shim's exact re-execution of an operation, and FP environment save/restore.

use numfuzz_abi::op::{FloatType, Op};
use numfuzz_abi::value::Float;
use std::ffi::{c_int, c_uint, c_void};

use crate::operands::Operands;

unsafe extern "C" {
    fn numfuzz_reexec_f32(op: c_int, a: *const f32, b: *const f32, c: *const f32) -> c_uint;
    fn numfuzz_reexec_f64(op: c_int, a: *const f64, b: *const f64, c: *const f64) -> c_uint;
    fn numfuzz_reexec_f80(op: c_int, a: *const F80Slot, b: *const F80Slot, c: *const F80Slot) -> c_uint;
    fn numfuzz_reexec_narrow(from: c_int, op: c_int, value: *const c_void) -> c_uint;
    fn numfuzz_fenv_save(env: *mut c_void);
    fn numfuzz_fenv_restore(env: *const c_void);
    fn numfuzz_fenv_size() -> usize;
    fn numfuzz_flush_modes() -> c_int;
}

/// Whether SSE flushes tiny results to zero or reads subnormal operands as zero (MXCSR's FTZ
/// and DAZ), or the mode cannot be read: what the FPU computes near zero is then not what the
/// operands' bits say, and a checker that reasons from them must re-execute instead.
pub fn flushes_tiny() -> bool {
    // SAFETY: reads the SSE control register.
    unsafe { numfuzz_flush_modes() != 0 }
}

// Operation codes of the shim (NF_* in shim.c).
const NF_ADD: c_int = 0;
const NF_SUB: c_int = 1;
const NF_MUL: c_int = 2;
const NF_DIV: c_int = 3;
const NF_FMA: c_int = 4;
const NF_TO_F32: c_int = 5;
const NF_TO_F64: c_int = 6;

/// An x87 value in a `long double`-sized, aligned slot.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct F80Slot(pub [u8; 16]);

impl F80Slot {
    pub fn of(x: Float) -> F80Slot {
        let mut s = [0u8; 16];
        s[..10].copy_from_slice(&x.to_f80_bytes());
        F80Slot(s)
    }
    pub fn value(&self) -> Float {
        let mut b = [0u8; 10];
        b.copy_from_slice(&self.0[..10]);
        Float::from_f80_bytes(b)
    }
}

/// Kinds (bit per ExceptionKind index) the FPU raises for `op` on these operands.
pub fn reexec(op: Op, ty: FloatType, ops: &Operands) -> u8 {
    let code = match op {
        Op::FAdd => NF_ADD,
        Op::FSub => NF_SUB,
        Op::FMul => NF_MUL,
        Op::FDiv => NF_DIV,
        Op::FMulAdd | Op::Fma => NF_FMA,
        _ => return 0,
    };
    // SAFETY: the shim reads three values of the named type through valid pointers.
    let kinds = unsafe {
        match ty {
            FloatType::F32 => {
                let (a, b, c) = (ops.a.as_f32(), ops.b.as_f32(), ops.c.as_f32());
                numfuzz_reexec_f32(code, &a, &b, &c)
            }
            FloatType::F64 => {
                let (a, b, c) = (ops.a.as_f64(), ops.b.as_f64(), ops.c.as_f64());
                numfuzz_reexec_f64(code, &a, &b, &c)
            }
            FloatType::F80 => {
                let (a, b, c) = (F80Slot::of(ops.a), F80Slot::of(ops.b), F80Slot::of(ops.c));
                numfuzz_reexec_f80(code, &a, &b, &c)
            }
        }
    };
    kinds as u8
}

/// Kinds raised by narrowing `x` (of type `src`) to `dst`.
pub fn reexec_narrow(src: FloatType, dst: FloatType, x: Float) -> u8 {
    let op = if dst == FloatType::F32 { NF_TO_F32 } else { NF_TO_F64 };
    // SAFETY: the shim reads one value of type `src`.
    let kinds = unsafe {
        match src {
            FloatType::F64 => {
                let v = x.as_f64();
                numfuzz_reexec_narrow(FloatType::F64 as c_int, op, (&v as *const f64).cast())
            }
            FloatType::F80 => {
                let v = F80Slot::of(x);
                numfuzz_reexec_narrow(FloatType::F80 as c_int, op, (&v as *const F80Slot).cast())
            }
            FloatType::F32 => 0,
        }
    };
    kinds as u8
}

/// Saves the whole floating-point environment (flags, masks, rounding of SSE and x87) and
/// restores it when dropped, around runtime code that is not flag-neutral.
pub struct FenvGuard {
    env: [u64; 16],
}

impl FenvGuard {
    pub fn new() -> FenvGuard {
        let mut g = FenvGuard { env: [0; 16] };
        // SAFETY: the buffer is larger than fenv_t (checked in `check_layout`).
        unsafe { numfuzz_fenv_save(g.env.as_mut_ptr().cast()) };
        g
    }
}

impl Default for FenvGuard {
    fn default() -> Self {
        FenvGuard::new()
    }
}

impl Drop for FenvGuard {
    fn drop(&mut self) {
        // SAFETY: restores what `new` saved.
        unsafe { numfuzz_fenv_restore(self.env.as_ptr().cast()) };
    }
}

/// Verifies the guard's buffer holds the C library's `fenv_t`.
pub fn check_layout() {
    // SAFETY: plain query.
    let size = unsafe { numfuzz_fenv_size() };
    assert!(
        size <= std::mem::size_of::<[u64; 16]>(),
        "fenv_t of {size} bytes does not fit FenvGuard"
    );
}
