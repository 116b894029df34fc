//! Generates `numfuzz_abi.h`, the C view of this contract, for the LLVM pass and `numfuzz.h`.

use crate::cmp::CmpOperand;
use crate::op::{FloatType, Op, OpShape};
use crate::shadow::mpfr::symbols as mpfr;
use crate::shadow::symbols as shadow;
use crate::signature::FieldType;
use crate::site::SITE_UNASSIGNED;
use std::fmt::Write;

/// Runtime entry points called by instrumented code.
pub mod symbols {
    /// `void (const numfuzz_site_t *, float a, float b, float c, int64_t i, float r)`
    pub const CHECK_F32: &str = "__numfuzz_check_f32";
    /// `void (const numfuzz_site_t *, double a, double b, double c, int64_t i, double r)`
    pub const CHECK_F64: &str = "__numfuzz_check_f64";
    /// x86-64: [`CHECK_F32`] behind a thunk that preserves every register it may clobber
    /// (rax, rcx, rdx, rsi, rdi, r8-r11, xmm0-15), so inlined code can call it from an inline
    /// `asm` without a branch of its own and without spilling the program's values. Arguments
    /// as for [`CHECK_F32`]; the stack may be misaligned.
    pub const CHECK_F32_PRESERVING: &str = "__numfuzz_check_f32_preserving";
    /// x86-64: [`CHECK_F64`] behind the same kind of thunk.
    pub const CHECK_F64_PRESERVING: &str = "__numfuzz_check_f64_preserving";
    /// `void (const numfuzz_site_t *, const long double abcr[4], int64_t i)`: x86_fp80
    /// operands a, b, c and result r in 16-byte slots.
    pub const CHECK_F80: &str = "__numfuzz_check_f80";
    /// `void (numfuzz_site_t *start, numfuzz_site_t *stop)`: called by every instrumented
    /// module's constructor with the bounds of the site section.
    pub const REGISTER_SITES: &str = "__numfuzz_register_sites";
    /// `size_t (unsigned field, unsigned type_code)`: offset of a field of the harness's
    /// signature, checking its type.
    pub const FIELD_OFFSET: &str = "numfuzz_field_offset";
    /// `void (void)`: the harness reports that the library handled the error.
    pub const HANDLED: &str = "numfuzz_handled";
    /// `void (const char *file, uint32_t line, const char *reason, int64_t code)`: the library
    /// reported an error (called before each call of a `NUMFUZZ_CC_ERROR_HOOK` function, or by
    /// a harness's own error handler; `reason` may be NULL).
    pub const ERROR_REPORTED: &str = "numfuzz_error_reported";
    /// `uint8_t`: non-zero once the library reported an error in this input's replay; code
    /// built with an error hook tests it after each call that returns an integer.
    pub const ERROR_PENDING: &str = "__numfuzz_error_pending";
    /// `void (const char *file, uint32_t line, const char *callee, int64_t value)`: the integer
    /// a call returned, while an error report is pending.
    pub const STATUS_RETURNED: &str = "__numfuzz_status_returned";
    /// `void (const numfuzz_cmp_t *, uint64_t a, uint64_t b)`: an integer comparison, operands
    /// zero-extended.
    pub const CMP_INT: &str = "__numfuzz_cmp_int";
    /// `void (const numfuzz_cmp_t *, float a, float b)`
    pub const CMP_F32: &str = "__numfuzz_cmp_f32";
    /// `void (const numfuzz_cmp_t *, double a, double b)`
    pub const CMP_F64: &str = "__numfuzz_cmp_f64";
    /// x86-64: [`CMP_INT`], [`CMP_F32`] and [`CMP_F64`] behind register-preserving thunks
    /// (see [`CHECK_F64_PRESERVING`]).
    pub const CMP_INT_PRESERVING: &str = "__numfuzz_cmp_int_preserving";
    pub const CMP_F32_PRESERVING: &str = "__numfuzz_cmp_f32_preserving";
    pub const CMP_F64_PRESERVING: &str = "__numfuzz_cmp_f64_preserving";
    /// `void (const numfuzz_cmp_t *, const long double ab[2])`
    pub const CMP_F80: &str = "__numfuzz_cmp_f80";
    /// `void (numfuzz_cmp_t *start, numfuzz_cmp_t *stop)`
    pub const REGISTER_CMPS: &str = "__numfuzz_register_cmps";
    /// `uint8_t`: what the runtime records for comparisons now (`cmp::CMP_*` bits); the pass
    /// calls the comparison hooks only when it is non-zero.
    pub const CMP_MODE: &str = "__numfuzz_cmp_mode";
    /// `uint8_t *`: the current ErrBits map (null without one), for the checks the pass inlines.
    pub const ERRBITS_MAP: &str = "__numfuzz_errbits_map";
    /// `uint64_t`: slots in that map.
    pub const ERRBITS_SLOTS: &str = "__numfuzz_errbits_slots";
    /// `uint8_t`, which copy of a split function runs (`copies`): a function the pass split
    /// into a fast copy (no checks), a precise one (`<name>.numfuzz.precise`, every check) and
    /// one with special-result bits (`<name>.numfuzz.specials`) reads it at entry and goes to
    /// the copy it names (see the runtime's `precise.rs`). 1 unless a fuzzer drives the runs.
    pub const PRECISE: &str = "__numfuzz_precise";
    /// `uint8_t`, defined (weak, 1) by every module that has split functions: the runtime makes
    /// fast runs only in programs that have fast copies.
    pub const SPLIT_BUILD: &str = "__numfuzz_split_build";
    /// `uint8_t`: a fast copy sets it to 1 when a sentinel fired (a conversion to an integer
    /// out of range): the run is re-run precisely.
    pub const FAST_RECHECK: &str = "__numfuzz_fast_recheck";
    /// `void (uint64_t *words, uint64_t count, uint8_t *dirty)`: a module's constructor hands
    /// the runtime its fast copies' special-result words (a bit per checked operation, set
    /// when its result was zero, subnormal, infinite or NaN) and the byte each return sets when
    /// it set one (see the runtime's `fast_specials.rs`).
    pub const REGISTER_FAST_SPECIALS: &str = "__numfuzz_register_fast_specials";
    /// `void (void)`: a fast copy calls it just before the program clears or replaces the FP
    /// flags itself (`feclearexcept`, `fesetenv`, ...); the runtime keeps what they would erase.
    pub const FENV_BARRIER: &str = "__numfuzz_fenv_barrier";
    /// A symbol that `numfuzz-cc` forces into every link so the runtime's constructor (AFL++
    /// forkserver) and marker are present even in programs with their own `main`.
    pub const ANCHOR: &str = "__numfuzz_anchor";
    /// `void (const char *name, float v)`: a declared result (`name` null for a primary one).
    pub const RESULT_F32: &str = "numfuzz_result_f32";
    /// `void (const char *name, double v)`
    pub const RESULT_F64: &str = "numfuzz_result_f64";
    /// `void (const char *name, const long double *v)`
    pub const RESULT_F80: &str = "numfuzz_result_f80";
    /// Taint builds: `float (const numfuzz_site_t *, float a, float b, float c, int64_t i,
    /// float r)`, the checker that returns `r`, which instrumented code uses in place of the
    /// operation's result, so the result's label is the one the runtime chose.
    pub const TAINT_F32: &str = "__numfuzz_taint_f32";
    /// `double (const numfuzz_site_t *, double a, double b, double c, int64_t i, double r)`
    pub const TAINT_F64: &str = "__numfuzz_taint_f64";
    /// `void (const numfuzz_site_t *, long double abcr[4], int64_t i)`: the runtime labels
    /// slot 3 (the result), which instrumented code reads back.
    pub const TAINT_F80: &str = "__numfuzz_taint_f80";
    /// `int64_t (const numfuzz_site_t *, float a, int64_t r)`: conversions to integers.
    pub const TAINT_INT_F32: &str = "__numfuzz_taint_int_f32";
    /// `int64_t (const numfuzz_site_t *, double a, int64_t r)`
    pub const TAINT_INT_F64: &str = "__numfuzz_taint_int_f64";
    /// `int64_t (const numfuzz_site_t *, const long double *a, int64_t r)`
    pub const TAINT_INT_F80: &str = "__numfuzz_taint_int_f80";

    pub const ALL: [&str; 7] = [
        CHECK_F32,
        CHECK_F64,
        CHECK_F80,
        REGISTER_SITES,
        FIELD_OFFSET,
        HANDLED,
        ANCHOR,
    ];
}

/// Runtime entry points as DataFlowSanitizer must see them in a taint build: every one is
/// uninstrumented (the Rust runtime), and either `discard` (its return value carries no label)
/// or `custom` (the runtime's `__dfsw_<name>` wrapper gets the arguments' labels and sets the
/// return value's).
pub fn dfsan_entry_points() -> Vec<(&'static str, &'static str)> {
    use symbols::*;
    let mut all: Vec<(&str, &str)> = [
        FIELD_OFFSET,
        HANDLED,
        ERROR_REPORTED,
        STATUS_RETURNED,
        REGISTER_SITES,
        REGISTER_CMPS,
        CHECK_F32,
        CHECK_F64,
        CHECK_F80,
        CMP_INT,
        CMP_F32,
        CMP_F64,
        CMP_F80,
    ]
    .into_iter()
    .map(|f| (f, "discard"))
    .collect();
    all.extend(
        [
            RESULT_F32,
            RESULT_F64,
            RESULT_F80,
            TAINT_F32,
            TAINT_F64,
            TAINT_F80,
            TAINT_INT_F32,
            TAINT_INT_F64,
            TAINT_INT_F80,
        ]
        .into_iter()
        .map(|f| (f, "custom")),
    );
    all
}

/// The DataFlowSanitizer ABI list numfuzz-cc passes to taint builds (next to clang's own list,
/// which covers the C library).
pub fn dfsan_abilist() -> String {
    let mut s = String::from("# numfuzz runtime entry points (generated from the numfuzz-abi crate)\n");
    for (f, how) in dfsan_entry_points() {
        s.push_str(&format!("fun:{f}=uninstrumented\nfun:{f}={how}\n"));
    }
    s
}

/// Stride of an x86_fp80 slot in the operand array passed to the f80 checker.
pub const F80_SLOT: usize = 16;

fn shape_code(shape: OpShape) -> u32 {
    match shape {
        OpShape::Infix(_) => 0,
        OpShape::Ternary => 1,
        OpShape::ToInt => 2,
        OpShape::Narrow => 3,
        OpShape::Unary => 4,
        OpShape::Binary => 5,
        OpShape::FloatInt => 6,
    }
}

/// The header text.
pub fn generate() -> String {
    let mut h = String::new();
    h.push_str("/* numfuzz_abi.h: generated from the numfuzz-abi crate. Do not edit. */\n");
    h.push_str("#ifndef NUMFUZZ_ABI_H\n#define NUMFUZZ_ABI_H\n\n#include <stdint.h>\n\n");
    constants(&mut h);
    codes(&mut h);
    libm_calls(&mut h);
    records(&mut h);
    entry_points(&mut h);
    h.push_str("\n#endif /* NUMFUZZ_ABI_H */\n");
    h
}

/// `#define NAME value` for each `(NAME, value)` (the value as C writes it).
fn defines(w: &mut String, defines: &[(&str, String)]) {
    for (name, value) in defines {
        writeln!(w, "#define NUMFUZZ_{name} {value}").unwrap();
    }
}

fn quoted(s: &str) -> String {
    format!("\"{s}\"")
}

/// Versions, section names, environment variables and the shadow build's markers.
fn constants(w: &mut String) {
    defines(
        w,
        &[
            ("ABI_VERSION", format!("{}u", crate::ABI_VERSION)),
            ("SIGNATURE_SECTION", quoted(crate::SIGNATURE_SECTION)),
            ("SITES_SECTION", quoted(crate::SITES_SECTION)),
            ("RUNTIME_SECTION", quoted(crate::RUNTIME_SECTION)),
            ("FUNCTION_SECTION", quoted(crate::FUNCTION_SECTION)),
            ("DEFINED_SECTION", quoted(crate::DEFINED_SECTION)),
            ("TAINT_SECTION", quoted(crate::TAINT_SECTION)),
            ("HARNESS_SECTION", quoted(crate::HARNESS_SECTION)),
            ("CODE_SECTION", quoted(crate::CODE_SECTION)),
            ("ENV_CC_TAINT", quoted(crate::env::CC_TAINT)),
            ("SHADOW_SECTION", quoted(crate::SHADOW_SECTION)),
            ("ENV_SHADOW_PRECISION", quoted(crate::env::SHADOW_PRECISION)),
            ("ENV_SHADOW_STEER", quoted(crate::env::SHADOW_STEER)),
            (
                "SHADOW_NAN_FROM_INFINITY",
                format!("0x{:X}ull", crate::shadow::NAN_FROM_INFINITY),
            ),
            (
                "SHADOW_NAN_FROM_INFINITY_REASON",
                quoted(crate::shadow::NAN_FROM_INFINITY_REASON),
            ),
            (
                "SHADOW_NAN_FROM_CONSTANT",
                format!("0x{:X}ull", crate::shadow::NAN_FROM_CONSTANT),
            ),
            (
                "SHADOW_NAN_FROM_RETURNED_CONSTANT",
                format!("0x{:X}ull", crate::shadow::NAN_FROM_RETURNED_CONSTANT),
            ),
            (
                "SHADOW_NAN_FROM_CONSTANT_REASON",
                quoted(crate::shadow::NAN_FROM_CONSTANT_REASON),
            ),
            ("SHADOW_STORED_CONSTANT", format!("{}u", crate::shadow::STORED_CONSTANT)),
            ("SHADOW_X87_RANGE_REASON", quoted(crate::shadow::X87_RANGE_REASON)),
            ("SHADOW_LOST_BRANCH_REASON", quoted(crate::shadow::LOST_BRANCH_REASON)),
            (
                "SHADOW_STEERED_NOT_A_NUMBER_REASON",
                quoted(crate::shadow::STEERED_NOT_A_NUMBER_REASON),
            ),
            ("MPFR_PREFIX", quoted(crate::shadow::mpfr::PREFIX)),
            (
                "MPFR_DEFAULT_PRECISION",
                format!("{}u", crate::shadow::mpfr::DEFAULT_PRECISION),
            ),
            ("MPFR_MAX_VALUES", format!("{}ull", crate::shadow::mpfr::MAX_VALUES)),
            (
                "MAX_PRECISION_LOSSES",
                format!("{}u", crate::report::MAX_PRECISION_LOSSES),
            ),
            ("MPFR_EXHAUSTED_REASON", quoted(crate::shadow::mpfr::EXHAUSTED_REASON)),
            ("ENV_CC_SHADOW", quoted(crate::env::CC_SHADOW)),
            ("ENV_CC_ERROR_HOOK", quoted(crate::env::CC_ERROR_HOOK)),
            ("TAINT_LABELS", crate::taint::LABELS.to_string()),
            (
                "RUNTIME_MARKER",
                quoted(&format!("{}{}", crate::RUNTIME_MARKER_PREFIX, crate::ABI_VERSION)),
            ),
            ("SERVE_MARKER", quoted(crate::serve::MARKER)),
            ("SITE_UNASSIGNED", format!("0x{SITE_UNASSIGNED:X}u")),
            ("F80_SLOT", F80_SLOT.to_string()),
            ("COPY_FAST", format!("{}u", crate::copies::FAST)),
            ("COPY_PRECISE", format!("{}u", crate::copies::PRECISE)),
            ("COPY_SPECIALS", format!("{}u", crate::copies::SPECIALS)),
        ],
    );
}

/// The numbering of float types, exception kinds, field types, operations and operand shapes.
fn codes(w: &mut String) {
    w.push('\n');
    for t in FloatType::ALL {
        writeln!(w, "#define NUMFUZZ_TYPE_{} {}", t.name().to_uppercase(), t as u8).unwrap();
    }
    w.push_str("\n/* Exception kinds: the slot of (site, kind) is site * 4 + kind. */\n");
    for k in crate::kind::ExceptionKind::ALL {
        writeln!(w, "#define NUMFUZZ_KIND_{} {}", k.name().to_uppercase(), k as u8).unwrap();
    }
    w.push('\n');
    for t in FieldType::ALL {
        writeln!(w, "#define NUMFUZZ_FIELD_{} {}u", t.name().to_uppercase(), t.code()).unwrap();
    }
    w.push('\n');
    for &op in Op::ALL {
        writeln!(w, "#define NUMFUZZ_OP_{} {}", op.name().to_uppercase(), op as u16).unwrap();
    }
    w.push_str("\n/* Operand shapes. */\n");
    for (name, shape) in [
        ("INFIX", OpShape::Infix("")),
        ("TERNARY", OpShape::Ternary),
        ("TO_INT", OpShape::ToInt),
        ("NARROW", OpShape::Narrow),
        ("UNARY", OpShape::Unary),
        ("BINARY", OpShape::Binary),
        ("FLOAT_INT", OpShape::FloatInt),
    ] {
        writeln!(w, "#define NUMFUZZ_SHAPE_{name} {}", shape_code(shape)).unwrap();
    }
}

/// Every libm name the pass recognises, as an X-macro.
fn libm_calls(w: &mut String) {
    w.push_str("\n/* Every libm name the pass recognises: X(\"name\", type, op, shape). */\n");
    w.push_str("#define NUMFUZZ_LIBM_CALLS(X) \\\n");
    for &op in Op::ALL.iter().filter(|op| op.is_libm()) {
        for t in FloatType::ALL {
            for name in op.call_names(t) {
                writeln!(
                    w,
                    "  X(\"{name}\", NUMFUZZ_TYPE_{}, NUMFUZZ_OP_{}, {}) \\",
                    t.name().to_uppercase(),
                    op.name().to_uppercase(),
                    shape_code(op.shape())
                )
                .unwrap();
            }
        }
    }
    w.push_str("\n\n");
}

/// The site and comparison records the pass emits into their sections.
fn records(w: &mut String) {
    w.push_str(
        "/* One per checked operation, in section NUMFUZZ_SITES_SECTION; see numfuzz-abi's site.rs. */\n\
         typedef struct numfuzz_site {\n  uint32_t id;\n  uint16_t op;\n  uint8_t ty;\n  uint8_t aux;\n  \
         uint32_t line;\n  uint32_t column;\n  const char *file;\n  const char *directory;\n  const char *function;\n\
         } numfuzz_site_t;\n\n",
    );
    writeln!(w, "#define NUMFUZZ_CMPS_SECTION \"{}\"", crate::cmp::CMPS_SECTION).unwrap();
    for op in [
        CmpOperand::F32,
        CmpOperand::F64,
        CmpOperand::F80,
        CmpOperand::I8,
        CmpOperand::I16,
        CmpOperand::I32,
        CmpOperand::I64,
    ] {
        writeln!(w, "#define NUMFUZZ_CMP_{} {}", op.name().to_uppercase(), op as u8).unwrap();
    }
    w.push_str(
        "\n/* One per comparison, in section NUMFUZZ_CMPS_SECTION; see numfuzz-abi's cmp.rs. */\n\
         typedef struct numfuzz_cmp {\n  uint32_t id;\n  uint8_t predicate;\n  uint8_t operand;\n  uint16_t reserved;\n  \
         uint32_t line;\n  uint32_t column;\n  const char *file;\n  const char *directory;\n  const char *function;\n\
         } numfuzz_cmp_t;\n\n",
    );
}

/// The runtime entry points the passes call, by name.
fn entry_points(w: &mut String) {
    for (name, sym) in [
        ("CMP_INT", symbols::CMP_INT),
        ("CMP_F32", symbols::CMP_F32),
        ("CMP_F64", symbols::CMP_F64),
        ("CMP_F80", symbols::CMP_F80),
        ("REGISTER_CMPS", symbols::REGISTER_CMPS),
        ("CMP_MODE", symbols::CMP_MODE),
        ("ERRBITS_MAP", symbols::ERRBITS_MAP),
        ("ERRBITS_SLOTS", symbols::ERRBITS_SLOTS),
        ("PRECISE", symbols::PRECISE),
        ("SPLIT_BUILD", symbols::SPLIT_BUILD),
        ("FAST_RECHECK", symbols::FAST_RECHECK),
        ("REGISTER_FAST_SPECIALS", symbols::REGISTER_FAST_SPECIALS),
        ("FENV_BARRIER", symbols::FENV_BARRIER),
        ("CHECK_F32", symbols::CHECK_F32),
        ("CHECK_F64", symbols::CHECK_F64),
        ("CHECK_F32_PRESERVING", symbols::CHECK_F32_PRESERVING),
        ("CMP_INT_PRESERVING", symbols::CMP_INT_PRESERVING),
        ("CMP_F32_PRESERVING", symbols::CMP_F32_PRESERVING),
        ("CMP_F64_PRESERVING", symbols::CMP_F64_PRESERVING),
        ("CHECK_F64_PRESERVING", symbols::CHECK_F64_PRESERVING),
        ("CHECK_F80", symbols::CHECK_F80),
        ("REGISTER_SITES", symbols::REGISTER_SITES),
        ("FIELD_OFFSET", symbols::FIELD_OFFSET),
        ("HANDLED", symbols::HANDLED),
        ("ERROR_REPORTED", symbols::ERROR_REPORTED),
        ("ERROR_PENDING", symbols::ERROR_PENDING),
        ("STATUS_RETURNED", symbols::STATUS_RETURNED),
        ("ANCHOR", symbols::ANCHOR),
        ("RESULT_F32", symbols::RESULT_F32),
        ("RESULT_F64", symbols::RESULT_F64),
        ("RESULT_F80", symbols::RESULT_F80),
        ("TAINT_F32", symbols::TAINT_F32),
        ("TAINT_F64", symbols::TAINT_F64),
        ("TAINT_F80", symbols::TAINT_F80),
        ("TAINT_INT_F32", symbols::TAINT_INT_F32),
        ("TAINT_INT_F64", symbols::TAINT_INT_F64),
        ("TAINT_INT_F80", symbols::TAINT_INT_F80),
        ("SHADOW_ARG", shadow::ARG),
        ("SHADOW_CALL", shadow::CALL),
        ("SHADOW_SET_ARG", shadow::SET_ARG),
        ("SHADOW_SET_RET", shadow::SET_RET),
        ("SHADOW_GET_RET", shadow::GET_RET),
        ("SHADOW_LOAD", shadow::LOAD),
        ("SHADOW_STORE", shadow::STORE),
        ("SHADOW_COPY", shadow::COPY),
        ("SHADOW_INT_LOAD", shadow::INT_LOAD),
        ("SHADOW_BITS", shadow::BITS),
        ("SHADOW_CMP", shadow::CMP),
        ("SHADOW_POLE", shadow::POLE),
        ("SHADOW_BOUND", shadow::BOUND),
        ("SHADOW_RESULT", shadow::RESULT),
        ("MPFR_FROM_F64", mpfr::FROM_F64),
        ("MPFR_FROM_F80", mpfr::FROM_F80),
        ("MPFR_FROM_INT", mpfr::FROM_INT),
        ("MPFR_ARITH", mpfr::ARITH),
        ("MPFR_NEG", mpfr::NEG),
        ("MPFR_CALL1", mpfr::CALL1),
        ("MPFR_CALL2", mpfr::CALL2),
        ("MPFR_CALL3", mpfr::CALL3),
        ("MPFR_CALL_INT", mpfr::CALL_INT),
        ("MPFR_COMPARE", mpfr::COMPARE),
        ("MPFR_IS_FPCLASS", mpfr::IS_FPCLASS),
        ("MPFR_TO_INT", mpfr::TO_INT),
        ("MPFR_RETURNED", mpfr::RETURNED),
        ("MPFR_RESET", mpfr::RESET),
        ("MPFR_TRACK", mpfr::TRACK),
    ] {
        writeln!(w, "#define NUMFUZZ_SYM_{name} \"{sym}\"").unwrap();
    }
    for (name, code) in crate::shadow::mpfr::op::ALL {
        writeln!(w, "#define NUMFUZZ_MPFR_OP_{name} {code}u").unwrap();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn header_lists_the_contract() {
        let h = super::generate();
        assert!(h.contains("#define NUMFUZZ_OP_FMUL 3"));
        assert!(h.contains("X(\"expl\", NUMFUZZ_TYPE_F80, NUMFUZZ_OP_EXP, 4)"));
        assert!(h.contains("X(\"lgammaf_r\", NUMFUZZ_TYPE_F32, NUMFUZZ_OP_LGAMMA, 4)"));
        assert!(h.contains("#define NUMFUZZ_FIELD_U64 10u"));
        assert!(h.contains("#define NUMFUZZ_SYM_CHECK_F64 \"__numfuzz_check_f64\""));
        assert!(h.contains("#define NUMFUZZ_CMP_I32 32"));
        assert!(h.contains("typedef struct numfuzz_cmp {"));
        assert!(h.contains("#define NUMFUZZ_SYM_TAINT_F64 \"__numfuzz_taint_f64\""));
    }

    #[test]
    fn the_abi_list_names_every_entry_point_once() {
        let list = super::dfsan_abilist();
        assert!(list.contains("fun:numfuzz_field_offset=uninstrumented\nfun:numfuzz_field_offset=discard\n"));
        assert!(list.contains("fun:__numfuzz_taint_f64=uninstrumented\nfun:__numfuzz_taint_f64=custom\n"));
        assert!(list.contains("fun:numfuzz_result_f80=custom"));
        let names: Vec<&str> = super::dfsan_entry_points().iter().map(|(f, _)| *f).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
    }
}
