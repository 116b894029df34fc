//! `numfuzz cov`: branch coverage of a campaign's inputs, measured with llvm-cov on a separate
//! coverage build of the same harness (`NUMFUZZ_CC_COVERAGE=1 numfuzz-cc …`).
//!
//! Every input of every instance (queue, crashes, hangs) is replayed on the coverage build,
//! many files per process; the raw profiles are merged with `llvm-profdata merge -sparse` and
//! exported with `llvm-cov export`; the branch outcomes are counted as `llvm-cov report` counts
//! them ([`branches`]), for one function (the function under test by default) or one file.

pub mod branches;
pub mod inputs;
pub mod llvm;
pub mod replay;

use branches::{CoverageData, MissedOutcome, Outcomes};
use llvm::LlvmTools;
use numfuzz_outdir::{InputDir, OutDirError, SavedInput as Input};
use replay::{LostInput, ProfileRunner};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum CovError {
    #[error(transparent)]
    OutDir(#[from] OutDirError),
    #[error("`{0}` holds no inputs (no id:* files in queue/, crashes/ or hangs/)")]
    NoInputs(PathBuf),
    #[error("cannot read `{0}`: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("coverage build `{0}` does not exist (build it with NUMFUZZ_CC_COVERAGE=1 numfuzz-cc, or check the path)")]
    TargetMissing(PathBuf),
    #[error(
        "`{0}` is not a coverage build (no llvm-cov mapping inside); build it with NUMFUZZ_CC_COVERAGE=1 numfuzz-cc"
    )]
    NotCoverageBuild(PathBuf),
    #[error(
        "cannot run `{0} --bindir` ({1}); install LLVM 19 (scripts/setup.sh), set LLVM_CONFIG, or pass --llvm-bindir"
    )]
    LlvmConfig(String, String),
    #[error("{0} does not exist (bin directory from {1}); install LLVM 19 (scripts/setup.sh), set LLVM_CONFIG, or pass --llvm-bindir")]
    MissingTool(PathBuf, String),
    #[error("{0} failed: {1}")]
    Tool(PathBuf, String),
    #[error("llvm-cov export: {0}")]
    Export(String),
    #[error("cannot run `{0}`: {1}")]
    Spawn(PathBuf, String),
    #[error("`{0}` exited without writing a profile; give a coverage build of a harness that runs the files named on its command line (NUMFUZZ_CC_COVERAGE=1 numfuzz-cc)")]
    NoProfile(PathBuf),
    #[error(
        "no input of `{0}` ran to the end on the coverage build (all crashed or hit the time limit; see --timeout)"
    )]
    AllLost(PathBuf),
    #[error("no function `{0}` in the coverage build (llvm-cov names static functions FILE:NAME, and renamed symbols by their source name)")]
    NoFunction(String),
    #[error("several functions are named `{0}`: {1}; give the full name")]
    AmbiguousFunction(String, String),
    #[error(
        "no file `{0}` in the coverage build; give its path as compiled, or its last components (e.g. math/e_acos.c)"
    )]
    NoFile(String),
    #[error("several files match `{0}`: {1}; give more of the path")]
    AmbiguousFile(String, String),
    #[error("the coverage build has no LLVMFuzzerTestOneInput, so the function under test cannot be inferred; pass --function NAME or --file PATH")]
    NoHarness,
    #[error("no input reached LLVMFuzzerTestOneInput, so the function under test cannot be inferred; pass --function NAME or --file PATH")]
    NothingRan,
    #[error(
        "cannot tell the function under test: no function outside the harness ran once per input; pass --function NAME"
    )]
    NoFunctionUnderTest,
    #[error("cannot tell the function under test: {0} each ran once per input; pass --function NAME")]
    AmbiguousFunctionUnderTest(String),
}

/// What the number covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScopeRequest {
    /// The function the harness calls (see [`CoverageData::function_under_test`]).
    FunctionUnderTest,
    Function(String),
    File(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Scope {
    /// One function; `inferred` when it was found as the function under test.
    Function { name: String, file: String, inferred: bool },
    /// Every function of one file.
    File { file: String },
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scope::Function {
                name,
                file,
                inferred: true,
            } => {
                write!(
                    f,
                    "function {name} ({file}), the function under test (inferred: the harness calls it once per input)"
                )
            }
            Scope::Function {
                name,
                file,
                inferred: false,
            } => write!(f, "function {name} ({file})"),
            Scope::File { file } => write!(f, "file {file} (all its functions)"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct CovOptions {
    pub out: PathBuf,
    pub target: PathBuf,
    pub scope: ScopeRequest,
    /// Time limit of one input (batches get proportionally more).
    pub timeout: Duration,
    pub llvm_bindir: Option<PathBuf>,
    /// Also find when the final coverage was first reached.
    pub time_to_final: bool,
    /// Keep the merged profile here (for `llvm-cov show`).
    pub profdata: Option<PathBuf>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct InputCounts {
    pub queue: usize,
    pub crashes: usize,
    pub hangs: usize,
}

/// The input that completed the final coverage, in `time:` order.
#[derive(Clone, Debug, Serialize)]
pub struct FinalReached {
    /// Its `time:` (milliseconds after its instance started).
    pub time_ms: u64,
    pub input: PathBuf,
}

#[derive(Clone, Debug, Serialize)]
pub struct CovReport {
    pub target: PathBuf,
    pub out: PathBuf,
    pub scope: Scope,
    pub covered: u64,
    pub total: u64,
    /// `None` when the scope has no branch.
    pub percent: Option<f64>,
    pub missed: Vec<MissedOutcome>,
    pub inputs: InputCounts,
    /// Inputs whose coverage could not be recorded (killed by a signal or the time limit).
    pub lost: Vec<LostInput>,
    pub time_to_final: Option<FinalReached>,
}

/// Checks that `target` carries llvm-cov's coverage mapping.
pub fn check_coverage_build(target: &Path) -> Result<(), CovError> {
    if !target.is_file() {
        return Err(CovError::TargetMissing(target.to_path_buf()));
    }
    let data = std::fs::read(target).map_err(|e| CovError::Io(target.to_path_buf(), e))?;
    let file = object::File::parse(&*data).map_err(|_| CovError::NotCoverageBuild(target.to_path_buf()))?;
    if !crate::target::has_coverage_mapping(&file) {
        return Err(CovError::NotCoverageBuild(target.to_path_buf()));
    }
    Ok(())
}

/// Replays inputs, merges their profiles and exports the coverage.
struct Measurer {
    target: PathBuf,
    tools: LlvmTools,
    runner: ProfileRunner,
    dir: tempfile::TempDir,
    merges: usize,
}

impl Measurer {
    fn coverage(&mut self, inputs: &[&Input]) -> Result<(CoverageData, Vec<LostInput>, PathBuf), CovError> {
        let (profiles, lost) = self.runner.run(inputs)?;
        if profiles.is_empty() {
            return Err(CovError::AllLost(self.target.clone()));
        }
        self.merges += 1;
        let profdata = self.dir.path().join(format!("merged{}.profdata", self.merges));
        self.tools.merge(&profiles, &profdata)?;
        let json = self.tools.export(&self.target, &profdata)?;
        Ok((CoverageData::from_export(&json)?, lost, profdata))
    }
}

fn resolve(data: &CoverageData, scope: &ScopeRequest) -> Result<(Scope, Outcomes, Vec<MissedOutcome>), CovError> {
    Ok(match scope {
        ScopeRequest::FunctionUnderTest | ScopeRequest::Function(_) => {
            let (f, inferred) = match scope {
                ScopeRequest::Function(name) => (data.function(name)?, false),
                _ => (data.function_under_test()?, true),
            };
            (
                Scope::Function {
                    name: f.name.clone(),
                    file: f.file.clone(),
                    inferred,
                },
                f.outcomes(),
                f.missed(),
            )
        }
        ScopeRequest::File(path) => {
            let file = data.file(path)?;
            let missed = data
                .functions
                .iter()
                .filter(|f| f.file == file.name)
                .flat_map(|f| f.missed())
                .collect();
            (
                Scope::File {
                    file: file.name.clone(),
                },
                file.outcomes,
                missed,
            )
        }
    })
}

/// Measures the branch coverage of every input under `opts.out`.
pub fn measure(opts: &CovOptions) -> Result<CovReport, CovError> {
    let all = inputs::collect(&opts.out)?;
    if all.is_empty() {
        return Err(CovError::NoInputs(opts.out.clone()));
    }
    check_coverage_build(&opts.target)?;
    let target = std::fs::canonicalize(&opts.target).map_err(|e| CovError::Io(opts.target.clone(), e))?;
    let out = std::fs::canonicalize(&opts.out).map_err(|e| CovError::Io(opts.out.clone(), e))?;
    let tools = LlvmTools::locate(opts.llvm_bindir.as_deref())?;
    let dir = tempfile::Builder::new()
        .prefix("numfuzz-cov-")
        .tempdir()
        .map_err(|e| CovError::Io(std::env::temp_dir(), e))?;
    let runner = ProfileRunner::new(&target, dir.path(), opts.timeout);
    let mut m = Measurer {
        target: target.clone(),
        tools,
        runner,
        dir,
        merges: 0,
    };

    let refs: Vec<&Input> = all.iter().collect();
    let (data, lost, profdata) = m.coverage(&refs)?;
    let (scope, outcomes, missed) = resolve(&data, &opts.scope)?;
    if let Some(keep) = &opts.profdata {
        std::fs::copy(&profdata, keep).map_err(|e| CovError::Io(keep.clone(), e))?;
    }
    // The search below names the scope exactly, so it cannot drift to another function.
    let fixed = match &scope {
        Scope::Function { name, .. } => ScopeRequest::Function(name.clone()),
        Scope::File { file } => ScopeRequest::File(file.clone()),
    };
    let time_to_final = if opts.time_to_final {
        Some(first_reached(&mut m, &all, &fixed, outcomes.covered)?)
    } else {
        None
    };

    let count = |k: InputDir| all.iter().filter(|i| i.dir == k).count();
    Ok(CovReport {
        target,
        out,
        scope,
        covered: outcomes.covered,
        total: outcomes.total,
        percent: outcomes.percent(),
        missed,
        inputs: InputCounts {
            queue: count(InputDir::Queue),
            crashes: count(InputDir::Crashes),
            hangs: count(InputDir::Hangs),
        },
        lost,
        time_to_final,
    })
}

/// The earliest input (in `time:` order; unnamed times count as 0) by which the inputs so far
/// cover `final_covered` outcomes: a binary search over prefixes, since the coverage of a
/// prefix only grows with its length.
fn first_reached(
    m: &mut Measurer,
    all: &[Input],
    scope: &ScopeRequest,
    final_covered: u64,
) -> Result<FinalReached, CovError> {
    let mut order: Vec<&Input> = all.iter().collect();
    order.sort_by_key(|i| i.time_ms().unwrap_or(0));
    let reached = |i: &Input| FinalReached {
        time_ms: i.time_ms().unwrap_or(0),
        input: i.path.clone(),
    };
    if final_covered == 0 {
        return Ok(reached(order[0]));
    }
    // Invariant: the first `lo` inputs fall short, the first `hi` reach it.
    let (mut lo, mut hi) = (0, order.len());
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let covered = match m.coverage(&order[..mid]) {
            Ok((data, _, _)) => resolve(&data, scope)?.1.covered,
            // Every input of this prefix was lost: it covers nothing.
            Err(CovError::AllLost(_)) => 0,
            Err(e) => return Err(e),
        };
        if covered >= final_covered {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(reached(order[hi - 1]))
}
