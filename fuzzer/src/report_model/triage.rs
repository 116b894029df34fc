//! The JSON report of one campaign, `numfuzz triage --format json` (documented in the README,
//! "JSON schema"): keys come in the order of the structs below, every key is always present
//! (`null` when unknown), and `SCHEMA_VERSION` changes whenever a key is renamed, removed or
//! changes meaning.

use super::{Kind, Tool};
use numfuzz_abi::report::{Frame, ResultReport};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the schema (2: consequences, chains, references and the bug list; 3: roots by
/// repair (`root_by`, `via`), the `coincident` consequence and class, and the bugs whose cause
/// is not isolated, `unexplained`; 4: references from the shadow build, `source` in `oracle`
/// and in each `reference`, `oracle.unreliable`, the `range` and `out-of-domain` classes; 5: the
/// `not-judged` class (an escape's root no reference judged: not a bug) with each finding's
/// `not_judged` reason, the `not_judged` list, `summary.not_judged` and `summary.bugs_by`, and
/// a reference's source `mpfr`; 6: `dropped_report` of a finding and of an unexplained result
/// (the library reported an error and the function returned success), `root_by` `report`,
/// `summary.bugs_by.library`); 7: `precision_lost` of a finding (where its root's operands lost
/// their digits, from the MPFR build), `root_by` `precision`; 8: `shadow_agreement.in_domain`
/// and each disagreement's `in_domain`; 9: `shadow_agreement.unjudged`; 10: `summary.bugs_by.domain`
/// and a reference's source `domain` (`NUMFUZZ_DEFINED_IN_DOMAIN`), `shadow_agreement.in_domain.pairs`);
/// 11: `shadow_agreement.judged_by`).
pub const SCHEMA_VERSION: u32 = 11;

/// How readers name this document in their errors.
pub const KIND: Kind = Kind {
    what: "a triage report",
    schema: SCHEMA_VERSION,
    advice: "run `numfuzz run-all --retriage` (or `numfuzz triage --format json` again) to write it anew",
};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TriageDoc {
    pub schema_version: u32,
    pub tool: Tool,
    pub out_dir: String,
    pub target: String,
    pub signature: Option<String>,
    pub instances: Vec<String>,
    pub inputs_replayed: usize,
    pub timeout_ms: u64,
    /// `computed`, `no-results` or `no-taint-build`.
    pub consequences: String,
    pub taint_target: Option<String>,
    pub oracle: Option<Oracle>,
    pub shadow_agreement: Option<ShadowAgreement>,
    pub summary: Summary,
    /// The bug findings' ids, in the bug list's order.
    pub bugs: Vec<String>,
    /// The ids of the escapes' roots no reference judged, in the bug list's order.
    pub not_judged: Vec<String>,
    pub unexplained: Vec<Unexplained>,
    pub findings: Vec<Finding>,
    pub crashes: Vec<Crash>,
    pub hangs: Vec<Hang>,
    pub not_reproduced: Vec<NotReproduced>,
    pub minimized_dir: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub findings: usize,
    pub silent: usize,
    pub handled: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ByKind {
    #[serde(rename = "Invalid")]
    pub invalid: Counts,
    #[serde(rename = "DivByZero")]
    pub div_by_zero: Counts,
    #[serde(rename = "Overflow")]
    pub overflow: Counts,
    #[serde(rename = "Underflow")]
    pub underflow: Counts,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Oracle {
    /// `oracle` or `shadow`.
    pub source: String,
    pub command: String,
    pub judged: usize,
    pub unreliable: usize,
    pub tolerance: f64,
    pub error: Option<String>,
    /// The MPFR shadow build the shadow's ladder asked where x87 could not tell, if any.
    #[serde(default)]
    pub mpfr: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShadowAgreement {
    pub inputs: usize,
    pub judged_by_both: usize,
    pub agreed: usize,
    /// The same three counts over the escaping inputs inside every declared domain.
    pub in_domain: AgreementCounts,
    pub pairs: Vec<VerdictPair>,
    pub disagreements: Vec<Disagreement>,
    /// The escaping inputs the shadow did not judge, each with the ladder's reason.
    pub unjudged: Vec<ShadowUnjudged>,
    /// The escaping inputs the shadow judged, by what judged each: `shadow` (x87), `mpfr`,
    /// `domain` (a harness's NUMFUZZ_DEFINED_IN_DOMAIN).
    #[serde(default)]
    pub judged_by: BTreeMap<String, usize>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShadowUnjudged {
    pub input: String,
    pub why: Option<String>,
    /// The oracle's verdict on it.
    pub oracle: Option<String>,
    pub in_domain: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgreementCounts {
    pub inputs: usize,
    pub judged_by_both: usize,
    pub agreed: usize,
    /// The confusion table of these inputs (empty in reports of before it was written).
    #[serde(default)]
    pub pairs: Vec<VerdictPair>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VerdictPair {
    pub oracle: Option<String>,
    pub shadow: Option<String>,
    pub inputs: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Disagreement {
    pub input: String,
    pub returned: Option<String>,
    pub oracle: Option<Judged>,
    pub shadow: Option<Judged>,
    pub in_domain: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    pub value: String,
    pub verdict: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Classes {
    pub bug: usize,
    pub chained: usize,
    pub propagated: usize,
    pub undefined: usize,
    pub range: usize,
    pub handled: usize,
    pub coincident: usize,
    pub absorbed: usize,
    pub input_borne: usize,
    pub out_of_domain: usize,
    pub unjudged: usize,
    pub not_judged: usize,
}

/// The entries of the bug list by the reference that judged each.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BugsBy {
    pub oracle: usize,
    /// The x87 shadow build.
    pub shadow: usize,
    /// The MPFR shadow build.
    pub mpfr: usize,
    /// The harness's declaration that the function is defined inside its declared domains.
    #[serde(default)]
    pub domain: usize,
    /// The library's own error report, dropped by a caller (no reference judged the result).
    pub library: usize,
    /// No reference: none at all, or a non-finite result whose cause is not isolated.
    pub none: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ConsequenceCounts {
    pub escapes: usize,
    pub handled: usize,
    pub coincident: usize,
    pub absorbed: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub findings: usize,
    pub silent: usize,
    pub handled: usize,
    /// Entries of the exception bug list: the bug findings and the non-finite results whose
    /// cause is not isolated (crashes and hangs are counted apart, below).
    pub bugs: usize,
    pub bugs_by: BugsBy,
    /// Escapes' roots no reference judged (listed apart, not bugs).
    pub not_judged: usize,
    pub unexplained: usize,
    pub repair_replays: usize,
    pub wrong: usize,
    pub classes: Classes,
    pub consequences: ConsequenceCounts,
    pub by_kind: ByKind,
    pub crashes: usize,
    pub hangs: usize,
    pub not_reproduced: usize,
}

/// A saved input: its path relative to the campaign directory, and its fields.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Input {
    pub path: String,
    pub fields: Vec<Field>,
}

/// One input field: its type (`f64`, `i32`...), shortest round-trip decimal and hex.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Field {
    #[serde(rename = "type")]
    pub ty: String,
    pub value: String,
    pub hex: String,
}

impl Field {
    /// An integer field (`i32`, `u8`...), whose value is printed as it is.
    pub fn is_integer(&self) -> bool {
        self.ty.starts_with('i') || self.ty.starts_with('u')
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Examples {
    pub escapes: Option<Input>,
    pub handled: Option<Input>,
    pub coincident: Option<Input>,
    pub absorbed: Option<Input>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Reproducer {
    pub path: String,
    pub build: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Unexplained {
    pub input: Input,
    pub results: Vec<ResultReport>,
    /// The ids of the origins it raised.
    pub origins: Vec<String>,
    pub input_count: usize,
    pub inputs: Vec<String>,
    pub first_seen_ms: Option<u64>,
    /// The error its inputs reported and dropped (then they are grouped by it).
    pub dropped_report: Option<DroppedReport>,
}

/// Where precision was lost: the first operation on the path of a bug's operands whose result
/// kept less than half of its format's bits against the MPFR shadow while its operands kept more.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PrecisionLost {
    pub path: String,
    pub line: u32,
    pub column: u32,
    pub op: String,
    /// Correct bits of its result, of `bits` (the format's).
    pub correct_bits: u32,
    pub bits: u32,
    /// As the text report says it (`precision lost at trig.c:262:13 (fsub): 0 of 53 bits correct`).
    pub text: String,
}

/// An error the library reported (its error hook was called) while the function returned
/// success.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DroppedReport {
    /// Where the hook was called.
    pub file: String,
    pub line: u32,
    pub reason: Option<String>,
    pub code: i64,
    /// The function that called the hook.
    pub reporter: String,
    /// The call that dropped it, in the function the harness called; null when that function
    /// reported it itself.
    pub dropped_at: Option<Frame>,
    pub dropped_by: String,
    /// As the reports say it.
    pub text: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// `oracle` or `shadow`.
    pub source: String,
    pub value: String,
    pub verdict: String,
    pub result: u32,
    pub returned: String,
    pub tolerance: f64,
    pub input: String,
    pub reaches: Option<bool>,
    /// The shadow's limit beside the input (its value at the input is Inf or NaN).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub beside: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Location {
    pub file: String,
    pub directory: String,
    pub path: String,
    pub line: u32,
    pub column: u32,
    pub function: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Operation {
    pub op: String,
    #[serde(rename = "type")]
    pub ty: String,
    pub to: Option<String>,
    pub expression: String,
    pub operands: Vec<String>,
    pub operands_hex: Vec<String>,
    pub result: Option<String>,
    pub result_hex: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Minimized {
    pub path: String,
    pub fields: Vec<Field>,
    pub expression: String,
    pub results: Vec<ResultReport>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub id: String,
    pub key: String,
    pub kind: String,
    pub status: String,
    pub class: String,
    pub consequence: Option<String>,
    pub origin: bool,
    pub input_borne: bool,
    /// The id of its chain's root.
    pub root: Option<String>,
    pub root_by: Option<String>,
    pub via: Option<String>,
    pub escapes_to: Vec<String>,
    pub reference: Option<Reference>,
    /// Why no reference judged it (the `not-judged` class), else null.
    pub not_judged: Option<String>,
    /// The error the library reported for the input shown, which the function dropped.
    pub dropped_report: Option<DroppedReport>,
    /// Bugs only: inputs of its dropped report whose cause was not isolated otherwise.
    pub inputs_not_isolated: usize,
    /// Bugs only: where the operands of its exception lost their digits before it (the MPFR
    /// shadow build's replay of the input shown), else null.
    pub precision_lost: Option<PrecisionLost>,
    pub reproducer: Option<Reproducer>,
    pub location: Location,
    pub operation: Operation,
    pub input: Input,
    pub results: Vec<ResultReport>,
    pub examples: Examples,
    pub input_count: usize,
    pub silent_inputs: usize,
    pub handled_inputs: usize,
    pub first_seen_ms: Option<u64>,
    pub inputs: Vec<String>,
    pub minimized: Option<Minimized>,
    pub minimize_note: Option<String>,
}

/// Real crashes with the same signal and top frame.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Crash {
    pub signal: String,
    pub frame: Option<Frame>,
    pub stack: Vec<Frame>,
    pub input: Input,
    pub input_count: usize,
    pub first_seen_ms: Option<u64>,
    pub inputs: Vec<String>,
}

/// An input that exceeded the time limit, and where it was stopped.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Hang {
    pub input: Input,
    pub first_seen_ms: Option<u64>,
    pub frame: Option<Frame>,
    pub stack: Vec<Frame>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NotReproduced {
    pub input: String,
    pub expected: String,
    pub observed: String,
}

impl TriageDoc {
    /// The findings that are bugs, in the bug list's order.
    pub fn bug_findings(&self) -> impl Iterator<Item = &Finding> {
        self.bugs
            .iter()
            .filter_map(|id| self.findings.iter().find(|f| f.id == *id))
    }
}
