//! The JSON report of a run-all, `OUT/report.json`: one bug list over every function.
//!
//! **What "bugs" counts**: the entries of that list, each once however many functions reach
//! it: a real crash per (signal, top frame), a hang per place the time limit stopped it, an
//! exception per root site (a (site, kind) that is a bug in some function's report), and a
//! non-finite result of no single cause per function and entry of its report. Crashes and
//! hangs come first. `summary.bugs` is the length of the four lists together; a function's
//! `bug_entries` counts the entries that touch it, so that column can sum to more.

use super::triage::{Field, Reference};
use super::{Kind, Tool};
use numfuzz_abi::report::{Frame, ResultReport};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the schema (1: bugs, unexplained, rest and per-function counts; 2: `summary`,
/// crashes and hangs merged by stack with a reproducer, `bug_entries` per function instead of
/// `bugs`, inputs and results with every field the triage report has; 3: `shards`, the
/// run-all directories a report of `--shard` or of `run-all merge` covers; 4: a bug's
/// `dropped_report`, one entry per error report dropped at one call, whatever its sites; 5: a
/// bug's `precision_lost`, one entry per origin of lost precision, whatever its sites; 6:
/// `budget`, and each function's `seconds` of fuzzing).
pub const SCHEMA_VERSION: u32 = 6;

/// How readers name this document in their errors.
pub const KIND: Kind = Kind {
    what: "a run-all report",
    schema: SCHEMA_VERSION,
    advice: "run `numfuzz run-all --continue` with this numfuzz to write it anew",
};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MergedDoc {
    pub schema_version: u32,
    pub tool: Tool,
    pub harness_dir: String,
    /// `-V`: seconds of fuzzing per function; 0 under `--budget`.
    pub seconds: u64,
    /// `--budget`: seconds of fuzzing for every function together (each one's are in
    /// `functions`); `None` under `-V`.
    pub budget: Option<u64>,
    /// The run-all directories this report covers and the shard each ran: one for a run of
    /// `--shard K/N`, one per directory for `run-all merge`, none for one run of every
    /// function.
    pub shards: Vec<ShardSource>,
    pub summary: MergedSummary,
    pub crashes: Vec<MergedCrash>,
    pub hangs: Vec<MergedCrash>,
    pub bugs: Vec<MergedBug>,
    pub unexplained: Vec<MergedUnexplained>,
    /// The distinct findings that are no bug anywhere, by the class they have in the first
    /// function that reports them (`chained`, `absorbed`, ...).
    pub rest: BTreeMap<String, usize>,
    pub functions: Vec<FunctionCounts>,
    /// Functions without a report, and why.
    pub failed: Vec<Failed>,
}

/// A run-all directory a report covers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardSource {
    /// `K/N` (K from 1); `None`: a run-all without `--shard`.
    pub shard: Option<String>,
    /// The directory, as given on the command line.
    pub out: String,
}

/// The counts of the report; `bugs` is the sum of the four lists.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergedSummary {
    pub bugs: usize,
    pub crashes: usize,
    pub hangs: usize,
    pub root_sites: usize,
    pub unexplained: usize,
    /// Distinct (site, kind) findings over every function.
    pub findings: usize,
    pub functions: usize,
    /// Functions with a triage report.
    pub reported: usize,
}

/// A real crash (`signal` set) or a hang (`signal` null) over the functions it happens in,
/// one per signal and top frame (a hang: the frame it was stopped in, without its column).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MergedCrash {
    pub signal: Option<String>,
    pub frame: Option<Frame>,
    /// The shown input's innermost frames (at most five).
    pub stack: Vec<Frame>,
    pub functions: Vec<String>,
    /// Inputs behind it, over those functions.
    pub inputs: usize,
    pub first_seen_ms: Option<u64>,
    pub example: CrashExample,
}

/// The most ordinary input of a crash or hang, and how to run it again.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrashExample {
    pub function: String,
    pub input: Vec<Field>,
    /// The saved input file.
    pub path: String,
    /// A shell command that runs it on the function's harness.
    pub reproduce: String,
}

/// A bug's shown example: the most ordinary over the functions it is a bug in.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Example {
    pub function: String,
    pub input: Vec<Field>,
    pub minimized: bool,
    pub expression: String,
    pub returned: Vec<ResultReport>,
    pub reference: Option<Reference>,
    /// The findings listed under it as chained, `Kind at file:line:col`.
    pub chain: Vec<String>,
}

/// One root site that is a bug in at least one function, or one error report dropped at one
/// call (then the site is the first function's).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MergedBug {
    /// The finding's key, or `report FILE:LINE dropped at FILE:LINE`.
    pub key: String,
    pub kind: String,
    pub site: String,
    pub path: String,
    pub line: u32,
    pub column: u32,
    pub op: String,
    /// The C function the site is in.
    pub in_function: Option<String>,
    /// The harnessed functions whose report has it as a bug.
    pub functions: Vec<String>,
    /// Inputs behind it, over those functions.
    pub inputs: usize,
    pub first_seen_ms: Option<u64>,
    pub example: Example,
    /// The dropped report that is its root, as the triage reports say it.
    pub dropped_report: Option<String>,
    /// Where the precision was lost that is its root, as the triage reports say it.
    pub precision_lost: Option<String>,
}

/// A non-finite result of one function whose cause no single repair isolates, or of the
/// functions that dropped one error report at one call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MergedUnexplained {
    /// The function its input is shown for.
    pub function: String,
    pub input: Vec<Field>,
    pub returned: Vec<ResultReport>,
    pub inputs: usize,
    /// The dropped report that is its root, as the triage reports say it.
    pub dropped_report: Option<String>,
    /// Every function with it (one unless it has a dropped report).
    pub functions: Vec<String>,
}

/// One function's line of the merged report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionCounts {
    pub function: String,
    /// Seconds its campaign was fuzzed (`None`: its campaign did not finish).
    pub seconds: Option<u64>,
    /// `None`: no triage report (the campaign or its triage failed; see its log).
    pub findings: Option<usize>,
    /// Entries of the bug list that touch this function.
    pub bug_entries: usize,
    /// Crash groups and hanging inputs of its own report.
    pub crashes: usize,
    pub hangs: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failed {
    pub function: String,
    pub why: String,
}
