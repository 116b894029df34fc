//! The exception report a target prints (one JSON object per line with
//! `NUMFUZZ_REPORT=json`, a UBSan-style line otherwise).

use crate::kind::ExceptionKind;
use crate::op::FloatType as ValueType;
use crate::op::{FloatType, Op, OpShape};
use crate::site::SiteInfo;
use crate::taint::TaintMode;
use serde::{Deserialize, Serialize};

/// One line of a target's JSON report stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
// A wire format read one line at a time: boxing the large variant would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum ReportEvent {
    /// An exception raised at a site (once per (site, kind) per input).
    Exception(ExceptionReport),
    /// A result the harness declared (`NUMFUZZ_RESULT`, `NUMFUZZ_RESULT_NAMED`).
    Result(ResultReport),
    /// Taint builds, before `input_done`: which findings flowed into which.
    Taint(TaintReport),
    /// The end of one input's run.
    InputDone(InputSummary),
    /// A fatal signal in a standalone run: a crash, or the SIGABRT with which a replay that
    /// ran out of time is stopped. Printed by the runtime's signal handler, last.
    Crash(CrashReport),
    /// The library reported an error through its error hook (the first
    /// [`MAX_ERROR_REPORTS`] of an input).
    ErrorReported(ErrorReport),
    /// After an error report: an integer a call returned (the first [`MAX_STATUS_REPORTS`]).
    StatusReturned(StatusReport),
    /// MPFR shadow builds: a value that had lost most of its correct digits reached an
    /// operation whose result is Inf, NaN, zero or subnormal (once per operation and input, the
    /// first [`MAX_PRECISION_LOSSES`]).
    PrecisionLost(PrecisionLoss),
}

/// Precision losses an input's MPFR replay carries at most.
pub const MAX_PRECISION_LOSSES: usize = 64;

/// An operation of the program's source: where it is and what it computes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct OpPlace {
    /// The file as the compiler named it (the site records' `file`); empty, with line and
    /// column 0, for an operation the optimiser rewrote without a place (only where a value
    /// reached, never an origin).
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub op: Op,
}

impl OpPlace {
    /// `trig.c:262:13` (the file's last component), `an operation without a place`.
    pub fn location(&self) -> String {
        if self.line == 0 {
            return "an operation without a place".into();
        }
        let file = self.file.rsplit('/').next().unwrap_or(&self.file);
        format!("{file}:{}:{}", self.line, self.column)
    }
}

/// Where precision was lost (the first operation on a value's path whose result kept less
/// than half of its format's bits against the MPFR shadow while its operands kept more), and
/// the operation that value, or one computed from it, reached with a non-finite, zero or
/// subnormal result (the first such operation without a place is said too).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrecisionLoss {
    pub origin: OpPlace,
    /// Correct bits of the origin's result (0 when it lost them all).
    pub correct_bits: u32,
    /// The bits of its format (53 for a double, 24 for a float).
    pub bits: u32,
    pub reached: OpPlace,
}

impl PrecisionLoss {
    /// `precision lost at trig.c:262:13 (fsub): 0 of 53 bits correct`.
    pub fn describe(&self) -> String {
        format!(
            "precision lost at {} ({}): {} of {} bits correct",
            self.origin.location(),
            self.origin.op,
            self.correct_bits,
            self.bits
        )
    }
}

/// Integer returns an input's replay carries at most after its first error report.
pub const MAX_STATUS_REPORTS: usize = 256;

/// An integer a call of library code returned after the library reported an error: where a
/// status was passed on (non-zero) and where it stopped (zero, where the callee received one).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusReport {
    /// The call's place.
    pub file: String,
    pub line: u32,
    /// The function called.
    pub callee: String,
    pub value: i64,
}

/// Error reports an input's replay carries at most: the first says where the error began,
/// the later ones where it travelled; a loop that reports at every step adds nothing.
pub const MAX_ERROR_REPORTS: usize = 8;

/// A call of the library's error hook (`NUMFUZZ_CC_ERROR_HOOK` names it to numfuzz-cc, which
/// reports each call of it; a harness may call `numfuzz_error_reported` itself from a handler).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorReport {
    /// Where the hook was called (the library's own `GSL_ERROR` line).
    pub file: String,
    pub line: u32,
    /// The hook's first constant-string argument (GSL's reason: `overflow`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The hook's last integer argument (GSL's error number), 0 without one.
    pub code: i64,
    /// Symbolized callers, innermost first (the function that called the hook, then its
    /// callers), down to the harness entry: the way the error would have travelled out.
    pub frames: Vec<Frame>,
}

/// Where a program was when a fatal signal struck.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrashReport {
    /// `SIGSEGV`, `SIGABRT`, ...
    pub signal: String,
    /// The fault hit the guard page below the stack: the innermost frames are wherever the
    /// stack ran out (often a checker), not the bug.
    #[serde(default)]
    pub stack_overflow: bool,
    /// The runtime ended the input because it exceeded the memory limit (the signal is then
    /// the runtime's SIGABRT, and the frames are where the input was at that moment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_of_memory: Option<MemoryExceeded>,
    /// Symbolized frames, innermost first, down to the harness entry (inlined calls are
    /// frames of their own).
    pub frames: Vec<Frame>,
}

/// How far an input went past the memory limit (`numfuzz run -m`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryExceeded {
    /// Resident memory the input had added when it was stopped, in MiB.
    pub grown_mb: u64,
    /// The limit, in MiB.
    pub limit_mb: u64,
}

impl MemoryExceeded {
    /// `out of memory: +612 MiB resident, limit 500 MiB`.
    pub fn describe(&self) -> String {
        format!(
            "out of memory: +{} MiB resident, limit {} MiB",
            self.grown_mb, self.limit_mb
        )
    }
}

/// One symbolized frame of a crash stack.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Frame {
    /// `??` when the symbolizer found no name.
    pub function: String,
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub line: Option<u32>,
    #[serde(default)]
    pub column: Option<u32>,
}

impl Frame {
    /// A frame of the numfuzz runtime (its Rust code, or the C shim's `numfuzz_*` helpers),
    /// which a crash can only reach as the innermost callee of the program's own code.
    pub fn is_numfuzz_runtime(&self) -> bool {
        self.file.as_deref().is_some_and(|p| p.ends_with(".rs"))
            || self.function.starts_with("numfuzz_")
            || self.function.starts_with("__numfuzz")
    }

    /// `poke_null (h.c:9:25)`, or just the function.
    pub fn display(&self) -> String {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => match self.column {
                Some(col) => format!("{} ({file}:{line}:{col})", self.function),
                None => format!("{} ({file}:{line})", self.function),
            },
            _ => self.function.clone(),
        }
    }
}

/// One declared result of the function under test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultReport {
    /// Number of a primary result (`NUMFUZZ_RESULT`: 0, 1, ... in call order); `None` for a
    /// named one.
    pub index: Option<u32>,
    /// Name of a secondary result (`NUMFUZZ_RESULT_NAMED("err", v)`); `None` for a primary one.
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub ty: ValueType,
    /// Shortest round-trip decimal.
    pub value: String,
    /// C99 hex float.
    pub hex: String,
    /// Taint builds: the labels of the findings the value came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<u8>>,
    /// Shadow builds: the value computed in x87 extended precision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shadow: Option<ShadowValue>,
}

/// A declared result's shadow (see [`crate::shadow`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShadowValue {
    /// Shortest round-trip decimal of the x87 extended value (`inf`, `nan` as for values).
    pub value: String,
    /// Why the shadow does not tell what the program would have returned in the wider
    /// format (`None`: it does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreliable: Option<String>,
}

/// What a taint run saw: the exceptional (site, kind) pairs of the run with their labels and
/// the labels that flowed into each (see [`crate::taint`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaintReport {
    pub mode: TaintMode,
    /// Findings, in the order of their first exception, that got no label before the
    /// labelled ones (`NUMFUZZ_TAINT_SKIP`).
    pub skip: u32,
    /// Distinct (site, kind) pairs raised in the run.
    pub findings: u32,
    /// One entry per raised (site, kind), in the order of its first exception.
    pub flows: Vec<TaintFlow>,
}

/// One raised (site, kind) of a taint run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaintFlow {
    /// Site number in the taint build (as in the exception events).
    pub site: u32,
    pub kind: ExceptionKind,
    /// Its label, when it is one of the labelled findings of this run.
    pub label: Option<u8>,
    /// Labels of the findings whose exceptional values flowed into its result.
    pub from: Vec<u8>,
}

/// A floating-point exception at a site, with the operation's values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExceptionReport {
    pub kind: ExceptionKind,
    #[serde(flatten)]
    pub site: SiteInfo,
    /// Operands as shortest round-trip decimals (integers in decimal).
    pub operands: Vec<String>,
    /// Operands as C99 hex floats (integers in hex).
    pub operands_hex: Vec<String>,
    /// Result as a shortest round-trip decimal, when the operation has a float result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_hex: Option<String>,
    /// The input file being replayed (absent for stdin and in-process runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// Every floating-point operand was finite (not Inf, not NaN): the operation generated
    /// the exception rather than propagating an exceptional operand. A (site, kind) whose
    /// first exception in a run propagates is reported again at its first origin, if any.
    #[serde(default)]
    pub origin: bool,
    /// Taint builds: this (site, kind)'s label in this run, if it is one of the labelled ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<u8>,
}

/// Summary after one input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputSummary {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// Distinct (site, kind) pairs raised.
    pub exceptions: u32,
    /// The harness called `NUMFUZZ_HANDLED()`.
    pub handled: bool,
}

fn callee(op: Op, ty: FloatType) -> String {
    format!("{}{}", op.name(), ty.libm_suffix())
}

impl ExceptionReport {
    /// The operation with its values, e.g. `2.6e154 * 1.1e155 = inf` or `exp(710.0) = inf`.
    pub fn expression(&self) -> String {
        let ops = &self.operands;
        let arg = |i: usize| ops.get(i).map(String::as_str).unwrap_or("?");
        let result = self.result.as_deref().unwrap_or("?");
        let site = &self.site;
        match site.op.shape() {
            OpShape::Infix(sym) => format!("{} {sym} {} = {result}", arg(0), arg(1)),
            OpShape::Ternary => format!("{}({}, {}, {}) = {result}", site.op, arg(0), arg(1), arg(2)),
            OpShape::ToInt => format!("{} {} to {}", site.op, arg(0), site.to.as_deref().unwrap_or("int")),
            OpShape::Narrow => {
                format!(
                    "{} {} to {} = {result}",
                    site.op,
                    arg(0),
                    site.to.as_deref().unwrap_or("?")
                )
            }
            OpShape::Unary => format!("{}({}) = {result}", callee(site.op, site.ty), arg(0)),
            OpShape::Binary | OpShape::FloatInt => {
                format!("{}({}, {}) = {result}", callee(site.op, site.ty), arg(0), arg(1))
            }
        }
    }

    /// The UBSan-style line printed by a standalone target:
    /// `exprel.c:55:21: floating-point exception: Overflow in fmul (2.6e154 * 1.1e155 = inf) [numfuzz]`.
    pub fn human_line(&self) -> String {
        let what = if self.site.op.is_libm() {
            callee(self.site.op, self.site.ty)
        } else {
            self.site.op.to_string()
        };
        format!(
            "{}: floating-point exception: {} in {} ({}) in {} [numfuzz]",
            self.site.location(),
            self.kind,
            what,
            self.expression(),
            if self.site.function.is_empty() {
                "?"
            } else {
                &self.site.function
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(op: Op, operands: &[&str], result: Option<&str>) -> ExceptionReport {
        ExceptionReport {
            kind: ExceptionKind::Overflow,
            site: SiteInfo {
                id: 3,
                op,
                ty: FloatType::F64,
                to: None,
                file: "exprel.c".into(),
                directory: "/src".into(),
                line: 55,
                column: 21,
                function: "exprel".into(),
            },
            operands: operands.iter().map(|s| s.to_string()).collect(),
            operands_hex: vec![],
            result: result.map(str::to_string),
            result_hex: None,
            input: None,
            origin: true,
            label: None,
        }
    }

    #[test]
    fn human_line_reads_like_ubsan() {
        let r = report(Op::FMul, &["2.6e154", "1.1e155"], Some("inf"));
        assert_eq!(
            r.human_line(),
            "exprel.c:55:21: floating-point exception: Overflow in fmul (2.6e154 * 1.1e155 = inf) in exprel [numfuzz]"
        );
        assert_eq!(
            report(Op::Exp, &["710.0"], Some("inf")).expression(),
            "exp(710.0) = inf"
        );
    }

    #[test]
    fn json_lines_are_tagged_and_flat() {
        let r = ReportEvent::Exception(report(Op::Pow, &["0.0", "-1.0"], Some("inf")));
        let text = serde_json::to_string(&r).unwrap();
        assert!(
            text.starts_with(r#"{"event":"exception","kind":"Overflow","id":3,"op":"pow""#),
            "{text}"
        );
        let back: ReportEvent = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        let result = ReportEvent::Result(ResultReport {
            index: Some(0),
            name: None,
            ty: ValueType::F64,
            value: "inf".into(),
            hex: "inf".into(),
            labels: Some(vec![0, 3]),
            shadow: Some(ShadowValue {
                value: "6.1e302".into(),
                unreliable: None,
            }),
        });
        let text = serde_json::to_string(&result).unwrap();
        assert!(
            text.starts_with(r#"{"event":"result","index":0,"name":null,"type":"f64","value":"inf""#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<ReportEvent>(&text).unwrap(), result);
        let done: ReportEvent =
            serde_json::from_str(r#"{"event":"input_done","exceptions":2,"handled":true}"#).unwrap();
        assert_eq!(
            done,
            ReportEvent::InputDone(InputSummary {
                input: None,
                exceptions: 2,
                handled: true
            })
        );
    }
}
