//! Shadow builds (`NUMFUZZ_CC_SHADOW=1 numfuzz-cc`): the contract between the shadow pass and
//! the runtime's `shadow.c`.
//!
//! Every `float` and `double` the program computes carries a shadow, the same computation in
//! x87 extended precision (64-bit significand, 15-bit exponent). An overflow that a later
//! division would have brought back, an underflow that `log` turns into −Inf, or `inf - inf`
//! of two overflowed intermediates stays finite in the shadow, so a declared result whose
//! shadow is finite and inside the format's range was made non-finite by the format, not by
//! the mathematics. Triage uses it as a reference where there is no oracle.
//!
//! How a shadow travels:
//! - in SSA values, as an `x86_fp80` value beside each float or double;
//! - through memory, in a table keyed by address that also keeps the bits stored: a load whose
//!   bits differ from the stored ones (the memory was written some other way) restarts the
//!   shadow from the loaded value;
//! - across calls, in thread-local slots keyed by the callee's address and the values passed:
//!   a callee that was not called by instrumented code (or not with these values) restarts
//!   from its arguments;
//! - through the ~40 libm functions the checkers know, by their `long double` versions, unless
//!   the program defines and instruments the function itself (a libm under test), whose own
//!   shadow then comes back as from any call.
//!
//! A shadow is *unreliable* when the program looked at a value the format lost in a way the
//! shadow cannot follow: a branch on a value whose shadow would have gone the other way (the
//! real program's path is the one followed, so the shadow's result is not what the wider
//! program would return), or the bits of such a value read as an integer (bit tricks). The
//! results of an input then say so, and triage leaves them unjudged.

/// The significand of the x87 quiet NaN a shadow takes when it is born from an infinity
/// (`0·∞`, `∞ − ∞`, `∞/∞`, a libm function of `∞`), where the default NaN (significand
/// `0xC000_0000_0000_0000`) is born from finite operands (`0/0`, `sqrt(−1)`, `log(−1)`). x87
/// arithmetic passes a NaN operand's significand on (the larger one of two), so a result's
/// shadow NaN says where it came from. An infinity in a shadow is the algorithm's (a constant
/// such as an overflow branch's `GSL_POSINF`, a division by an exact zero), so a NaN made from
/// one says nothing about whether the true value exists: that result's shadow is unreliable,
/// not `undefined`. The marker sits in the significand's top 52 bits, which a double keeps.
pub const NAN_FROM_INFINITY: u64 = 0xC0A7_E000_0000_0000;

/// Why a result whose shadow is the NaN born from an infinity is unreliable. Triage still looks
/// for the shadow's limit beside such an input (the algorithm may fail at that point only), and
/// leaves the result unjudged when there is none.
pub const NAN_FROM_INFINITY_REASON: &str = "the shadow's NaN came from an infinity (0*inf, inf-inf, inf/inf, f(inf)): \
a step of the algorithm, which says nothing of whether the true value exists";

/// The significand of the x87 quiet NaN a shadow takes when it comes from a constant the program
/// chose on a branch of its own:
/// - an infinity stored as a constant (GSL's `OVERFLOW_ERROR` writes `GSL_POSINF` into the result);
/// - an infinity a function returns as a constant, where its caller computes on it (`gsl_sf_fact`
///   returns its `_e`'s overflow value and `hermite_deriv` multiplies by it); where the caller
///   only passes it on (a wrapper returning its kernel's pole) it stays the infinity;
/// - a division by, or the log of, a zero stored as a constant (`UNDERFLOW_ERROR` writes 0.0),
///   directly or through products, numerators and sign changes.
///
/// The wider format would have computed a finite value there, had the algorithm let it: the
/// constant is the double algorithm's answer on an overflow or underflow branch, often one whose
/// status the caller drops. The shadow keeps the NaN through the rest of the computation (x87
/// passes a NaN operand's significand on), and a result made from it judges only through its
/// limit beside the input, as [`NAN_FROM_INFINITY`] does. An infinity or zero the program
/// computes (`1/x` at an input 0, `log` of an input 0) or returns as its own answer (fdlibm's
/// `-two54/zero`) stays what it is: a pole.
pub const NAN_FROM_CONSTANT: u64 = 0xC0C0_5700_0000_0000;

/// The shadow a function returns for a constant infinity of its own, between its `return` and
/// its caller: the caller computes on it as [`NAN_FROM_CONSTANT`] and passes the infinity on
/// where it does not compute (bit 0 tells it from a stored constant's NaN that an infinite
/// result carries; doubles drop it).
pub const NAN_FROM_RETURNED_CONSTANT: u64 = NAN_FROM_CONSTANT | 1;

/// How a callee's constant infinity enters its caller's arithmetic: as the least magnitude
/// beyond the format. An overflow branch's infinity says the true value is at least that large,
/// so a result that only multiplies by it has a shadow no larger than its true value: beyond
/// the format, the true value is beyond it too (a true overflow, judged `unreported-range`);
/// within the format, the shadow says nothing (the true value may be anywhere above), and the
/// result is provisional with [`NAN_FROM_CONSTANT_REASON`]. (`hermite_deriv` multiplies
/// `gsl_sf_fact`'s overflow value by a Hermite polynomial: huge, the product is a true
/// overflow; tiny, it may be finite.)
pub const RETURNED_CONSTANT_BOUND: &str = "2^1024 (2^128 for a float)";

/// Why a result whose shadow is the NaN from a stored constant is provisional (see
/// [`NAN_FROM_CONSTANT`]).
pub const NAN_FROM_CONSTANT_REASON: &str =
    "the shadow came from a constant the program stored or returned on a branch \
(an infinity, or a zero it divided by or took the log of): the double algorithm's answer, not a value the wider \
format computed";

/// Added to a store's `width` when the stored value is a constant of the program.
pub const STORED_CONSTANT: u32 = 1 << 8;

/// Why a steered MPFR run's result judges nothing where the exact values' path ended on an exact
/// zero, an infinity or a NaN: a constant or a pole of that path (an underflow branch's 0.0),
/// not necessarily the function's value. Triage still judges a NaN the program returned against
/// an exact zero there: no rounding of whatever value the constant stands for is NaN.
pub const STEERED_NOT_A_NUMBER_REASON: &str = "the steered run's exact value is no nonzero number (an exact zero, an \
infinity or a NaN is a constant or a pole of the exact path, not necessarily the function's)";

/// Whether a result's shadow is provisional: a NaN whose payload says it came from a step of the
/// algorithm rather than from the mathematics; triage judges it only through a limit beside the
/// input.
pub fn is_provisional(reason: &str) -> bool {
    reason == NAN_FROM_INFINITY_REASON || reason == NAN_FROM_CONSTANT_REASON
}

/// Why an x87 shadow is unreliable when some shadow of the run went beyond x87's own range
/// (its overflow or underflow flag): a non-finite or zero shadow may be x87's range error, not
/// the true value's (`log(exp(-1e5))`: x87 stops near 1e-4951). Triage asks the MPFR shadow.
pub const X87_RANGE_REASON: &str = "a shadow went beyond the range of its own format (x87 overflow or underflow)";

/// Why a shadow is not the program's value when a comparison on a value the format lost came out
/// the other way on the shadows (the shadows then follow the program's path, not their own).
/// Triage replays such an input steered by its shadows
/// ([`env::SHADOW_STEER`](crate::env::SHADOW_STEER)) on the MPFR build.
pub const LOST_BRANCH_REASON: &str = "a branch on a value the format lost went the other way in the shadow";

/// MPFR shadow builds (`NUMFUZZ_CC_SHADOW=mpfr numfuzz-cc`, file `TARGET.mpfr`): the same
/// shadows as the x87 build, each an MPFR value with the widest exponent MPFR has (2^±(2^62))
/// and a precision chosen per run ([`env::SHADOW_PRECISION`](crate::env::SHADOW_PRECISION) in
/// bits, default [`DEFAULT_PRECISION`](mpfr::DEFAULT_PRECISION)). Triage replays it where the
/// x87 shadow cannot decide, at two precisions: a result that moves between them is unjudged.
///
/// The pass calls the entry points of [`symbols`] with [`PREFIX`](mpfr::PREFIX) in place of
/// `__numfuzz_shadow_`, a shadow handle (`void *`, an MPFR value of the run) in place of each
/// `long double`, and these differences: `SET_RET` takes a fourth argument, `int constant` (the
/// returned value is a constant of the program; the runtime tags a constant infinity as
/// [`NAN_FROM_RETURNED_CONSTANT`] does), and `BOUND` takes `(handle s, double v, unsigned width)`
/// (the handle's tag says whether it came from a returned constant). A NaN's tag ([`NAN_FROM_INFINITY`],
/// [`NAN_FROM_CONSTANT`]) lives beside the MPFR value, which has no payload. Arithmetic,
/// conversions, comparisons and libm calls are runtime calls too ([`mpfr::symbols`]).
pub mod mpfr {
    /// What an MPFR build's entry points start with instead of `__numfuzz_shadow_`.
    pub const PREFIX: &str = "__numfuzz_mpfr_";
    /// Bits of precision when the environment names none.
    pub const DEFAULT_PRECISION: u32 = 128;
    /// The second precision triage replays at: a result that differs from the first's beyond
    /// rounding depends on precision no shadow had.
    pub const CHECK_PRECISION: u32 = 512;
    /// Values one run may create (each lives until the next input); past it the run's shadows
    /// are unreliable with [`EXHAUSTED_REASON`].
    pub const MAX_VALUES: u64 = 1 << 21;
    pub const EXHAUSTED_REASON: &str = "the MPFR shadow ran out of its 2097152 values for one run";

    /// Operation codes of MPFR calls that have no checked operation of their own (the others
    /// pass their [`Op`](crate::op::Op) code): LLVM intrinsics the program may call.
    pub mod op {
        pub const FABS: u32 = 1000;
        pub const FLOOR: u32 = 1001;
        pub const CEIL: u32 = 1002;
        pub const TRUNC: u32 = 1003;
        pub const RINT: u32 = 1004;
        pub const ROUND: u32 = 1005;
        pub const ROUNDEVEN: u32 = 1006;
        pub const COPYSIGN: u32 = 1007;
        pub const MINNUM: u32 = 1008;
        pub const MAXNUM: u32 = 1009;
        pub const EXP10: u32 = 1010;
        pub const ALL: [(&str, u32); 11] = [
            ("FABS", FABS),
            ("FLOOR", FLOOR),
            ("CEIL", CEIL),
            ("TRUNC", TRUNC),
            ("RINT", RINT),
            ("ROUND", ROUND),
            ("ROUNDEVEN", ROUNDEVEN),
            ("COPYSIGN", COPYSIGN),
            ("MINNUM", MINNUM),
            ("MAXNUM", MAXNUM),
            ("EXP10", EXP10),
        ];
    }

    /// The MPFR build's own entry points (`handle` is `void *`).
    pub mod symbols {
        /// `handle (double v)`: a value with no shadow (a constant, an argument from code that
        /// was not instrumented) starts from itself.
        pub const FROM_F64: &str = "__numfuzz_mpfr_from_f64";
        /// `handle (long double v)`.
        pub const FROM_F80: &str = "__numfuzz_mpfr_from_f80";
        /// `handle (int64_t v, int is_unsigned)`: `sitofp`/`uitofp` (an unsigned is passed as
        /// its 64 bits).
        pub const FROM_INT: &str = "__numfuzz_mpfr_from_int";
        /// `handle (unsigned op, handle a, handle b)`: `fadd`…`frem` by their [`Op`](crate::op::Op) code.
        pub const ARITH: &str = "__numfuzz_mpfr_arith";
        /// `handle (handle a)`.
        pub const NEG: &str = "__numfuzz_mpfr_neg";
        /// `handle (unsigned op, handle a)`, `(op, a, b)`, `(op, a, b, c)`, `(op, a, int n)`:
        /// a libm function or intrinsic by its code.
        pub const CALL1: &str = "__numfuzz_mpfr_call1";
        pub const CALL2: &str = "__numfuzz_mpfr_call2";
        pub const CALL3: &str = "__numfuzz_mpfr_call3";
        pub const CALL_INT: &str = "__numfuzz_mpfr_call_int";
        /// `int (unsigned predicate, handle a, handle b)`: an `fcmp` (LLVM's predicate numbers).
        pub const COMPARE: &str = "__numfuzz_mpfr_compare";
        /// `int (handle a, unsigned mask)`: `llvm.is.fpclass` on the shadow, as an infinitely
        /// wide float (never subnormal).
        pub const IS_FPCLASS: &str = "__numfuzz_mpfr_is_fpclass";
        /// `int64_t (int64_t real, double v, handle s, int is_signed, unsigned bits)`:
        /// `fptosi`/`fptoui` of `v` (widened), whose conversion is `real` (sign- or
        /// zero-extended from `bits`): the integer the program goes on with (`real`, or the
        /// shadow's, truncated toward zero, in a steered run where it fits).
        pub const TO_INT: &str = "__numfuzz_mpfr_to_int";
        /// `handle (handle s, double v)`: the caller's shadow of a call's result `v` whose
        /// callee returned `s`: the infinity itself for a constant infinity the callee returned.
        pub const RETURNED: &str = "__numfuzz_mpfr_returned";
        /// `void (void)`: a new input (called by `__numfuzz_shadow_reset`).
        pub const RESET: &str = "__numfuzz_mpfr_reset";
        /// `void (handle r, double v, unsigned width, handle a, handle b, const char *file,
        /// unsigned line, unsigned column, unsigned op)`: after each operation with an
        /// [`Op`](crate::op::Op) code and a source place, whose result `v` has the shadow `r`
        /// and whose operands' shadows are `a` and `b` (null when absent): where precision was
        /// lost, and where a value that lost it went non-finite, zero or subnormal
        /// ([`ReportEvent::PrecisionLost`](crate::report::ReportEvent::PrecisionLost)).
        pub const TRACK: &str = "__numfuzz_mpfr_track";
    }
}

/// Runtime entry points a shadow build calls (`long double` is `x86_fp80` by value).
pub mod symbols {
    /// `long double (const void *fn, unsigned index, unsigned count, double v)`: argument
    /// `index` of `count` float arguments at the entry of `fn` (the last one ends the call).
    pub const ARG: &str = "__numfuzz_shadow_arg";
    /// `void (const void *callee)`: a call with float arguments or a float result follows.
    pub const CALL: &str = "__numfuzz_shadow_call";
    /// `void (unsigned index, double v, long double s)`: the call's float argument `index`.
    pub const SET_ARG: &str = "__numfuzz_shadow_set_arg";
    /// `void (const void *fn, double v, long double s)`: `fn` returns `v`.
    pub const SET_RET: &str = "__numfuzz_shadow_set_ret";
    /// `long double (const void *callee, double v, long double otherwise)`: the shadow of what
    /// `callee` returned (`otherwise` when the callee set none for `v`: it was not
    /// instrumented; for a libm call `otherwise` is its long double version).
    pub const GET_RET: &str = "__numfuzz_shadow_get_ret";
    /// `long double (const void *p, double v, unsigned width)`: a load of `v` (`width` 4 or 8).
    pub const LOAD: &str = "__numfuzz_shadow_load";
    /// `void (void *p, double v, long double s, unsigned width)`: a store (`width` plus
    /// [`STORED_CONSTANT`](super::STORED_CONSTANT) when `v` is a constant of the program).
    pub const STORE: &str = "__numfuzz_shadow_store";
    /// `void (void *dst, const void *src, uint64_t n)`: `memcpy`/`memmove` copied `n` bytes.
    pub const COPY: &str = "__numfuzz_shadow_copy";
    /// `void (const void *p, unsigned width, const char *where)`: an integer load (a bit
    /// trick reading a float's bits through memory).
    pub const INT_LOAD: &str = "__numfuzz_shadow_int_load";
    /// `void (double v, long double s, const char *where)`: a float's bits become an integer.
    pub const BITS: &str = "__numfuzz_shadow_bits";
    /// `int (int real, int shadow, double a, long double sa, double b, long double sb,
    /// const char *where)`: a comparison's outcome on the values and on their shadows; returns
    /// the outcome the program goes on with (`real`, or `shadow` in an MPFR run steered by
    /// [`SHADOW_STEER`](crate::env::SHADOW_STEER)).
    pub const CMP: &str = "__numfuzz_shadow_cmp";
    /// `long double (long double s, long double operand, const void *p)`: `s`, the shadow of a
    /// division or a log whose divisor or argument `operand` was loaded from `p`, or the NaN
    /// from a constant when `operand` is a zero the program stored there as a constant.
    pub const POLE: &str = "__numfuzz_shadow_pole";
    /// `long double (long double s, int returned_constant, double v, unsigned width)`: the
    /// shadow arithmetic computes on for a call's result `v` whose callee returned shadow `s`:
    /// `s`, or, for a constant infinity the callee returned (`returned_constant`), the least
    /// magnitude beyond the format (2^1024, or 2^128 for `width` 4), which makes every shadow
    /// of the run a bound (see [`RETURNED_CONSTANT_BOUND`](super::RETURNED_CONSTANT_BOUND)).
    pub const BOUND: &str = "__numfuzz_shadow_bound";
    /// `void (const char *name, double v, long double s, unsigned width)`: a declared result
    /// (replaces `numfuzz_result_f64`, and `numfuzz_result_f32` with its value widened and
    /// `width` 4).
    pub const RESULT: &str = "__numfuzz_shadow_result";
}

#[cfg(test)]
mod tests {
    use super::symbols::*;

    #[test]
    fn entry_points_are_numfuzz_internal() {
        for s in [
            ARG, CALL, SET_ARG, SET_RET, GET_RET, LOAD, STORE, COPY, INT_LOAD, BITS, CMP, POLE, BOUND, RESULT,
        ] {
            assert!(s.starts_with("__numfuzz_shadow_"), "{s}");
        }
    }

    #[test]
    fn mpfr_entry_points_share_the_prefix_and_op_codes_miss_every_op() {
        use super::mpfr::symbols::*;
        for s in [
            FROM_F64, FROM_F80, FROM_INT, ARITH, NEG, CALL1, CALL2, CALL3, CALL_INT, COMPARE, IS_FPCLASS, TO_INT,
            RETURNED, RESET,
        ] {
            assert!(s.starts_with(super::mpfr::PREFIX), "{s}");
        }
        for (_, code) in super::mpfr::op::ALL {
            assert!(crate::op::Op::from_code(code as u16).is_none() && code < u16::MAX as u32);
        }
    }
}
