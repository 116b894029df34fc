//! Command-line definitions (clap derive).

use clap::{Parser, Subcommand};
use numfuzz::triage::format::ReportFormat;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "numfuzz",
    version,
    about = "Greybox fuzzing for IEEE-754 floating-point exceptions (Overflow, Underflow, Invalid, DivByZero)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Fuzz a target: a multi-core LibAFL campaign with IEEE-754 mutators and ErrBits feedback.
    Run(RunArgs),
    /// List the checked floating-point operations (sites) of a numfuzz-cc target.
    Sites(SitesArgs),
    /// Run inputs on a target and show their decoded values and every exception they raise.
    Replay(ReplayArgs),
    /// Replay a campaign's findings: distinct exceptions by (site, kind), located, decoded, minimised.
    Triage(TriageArgs),
    /// Branch coverage of a campaign's inputs, measured with llvm-cov on a coverage build.
    Cov(CovArgs),
    /// One campaign per harness of a harness directory, each triaged, then one merged report.
    #[command(
        name = "run-all",
        after_help = "Example: numfuzz run-all harnesses -o out -V 60 --jobs 2\n         numfuzz run-all harnesses -o out -V 60 --continue   (after a kill: keeps what finished)"
    )]
    RunAll(RunAllArgs),
    /// Write one harness per function of a library's headers whose inputs are numbers (and
    /// build them with --build).
    Harness(HarnessArgs),
}

#[derive(Debug, clap::Args)]
pub struct RunAllArgs {
    /// The harness directory (`numfuzz harness -o DIR`): manifest.json and bin/<function>.
    pub dir: PathBuf,
    /// Where the campaigns, their triage reports and the merged report go.
    #[arg(short = 'o', long = "output")]
    pub out: PathBuf,
    /// Seconds of fuzzing per function.
    #[arg(short = 'V', value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub seconds: u64,
    #[command(flatten)]
    pub jobs: Jobs,
    /// The oracle every triage asks (see `numfuzz triage --oracle`).
    #[arg(long, value_name = "CMD")]
    pub oracle: Option<String>,
    /// Only these functions (comma-separated names from the manifest).
    #[arg(long, value_name = "LIST")]
    pub functions: Option<String>,
    /// Resume a run-all in OUT that was stopped: functions with a report are kept.
    #[arg(long = "continue")]
    pub resume: bool,
    /// Triage every finished campaign in OUT again and merge (after a numfuzz or oracle
    /// update); campaigns that did not finish are run.
    #[arg(long, conflicts_with = "resume")]
    pub retriage: bool,
    /// Minimise the findings' inputs in every triage (see `numfuzz triage --minimize`).
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "all", require_equals = true)]
    pub minimize: Option<MinimizeWhich>,
    /// The format printed on stdout (all four are written to OUT/report.*).
    #[arg(long, value_enum, default_value_t = MergedFormat::Md)]
    pub format: MergedFormat,
    /// Arguments for every `numfuzz run` (e.g. `-- -t 1000 --no-local-search`).
    #[arg(last = true, value_name = "RUN ARGS")]
    pub run_args: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MergedFormat {
    /// GitHub-flavoured Markdown.
    Md,
    /// JSON (schema in the README).
    Json,
    /// SARIF 2.1.0.
    Sarif,
    /// Self-contained HTML page (bug list, per-function table and chart).
    Html,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example: numfuzz harness examples/mathlib/mathlib.h -o mathlib-harnesses \\\n           --conventions examples/mathlib/conventions.toml --build examples/mathlib/build.sh\n\n\
The build command runs three times (plain, NUMFUZZ_CC_TAINT=1, NUMFUZZ_CC_SHADOW=1) with CC/CXX set to\n\
numfuzz-cc/numfuzz-c++ and must put its static library into $NUMFUZZ_BUILD_DIR (README: \"Fuzz your own library\")."
)]
pub struct HarnessArgs {
    /// The library's headers; functions declared in them (not in the headers they include) get harnesses.
    #[arg(required = true, value_name = "HEADER")]
    pub headers: Vec<PathBuf>,
    /// Output directory: src/F.c, manifest.json, skipped.md (and bin/, build/ with --build).
    #[arg(short = 'o', long = "output", required = true, value_name = "DIR")]
    pub out: PathBuf,
    /// Only functions whose name this regular expression matches.
    #[arg(long, value_name = "REGEX", value_parser = regex)]
    pub include: Option<regex::Regex>,
    /// Leave out functions whose name this regular expression matches.
    #[arg(long, value_name = "REGEX", value_parser = regex)]
    pub exclude: Option<regex::Regex>,
    /// The library's conventions (TOML: integer returns, struct values, skips, oracle names,
    /// domains; see the README).
    #[arg(long, value_name = "FILE")]
    pub conventions: Option<PathBuf>,
    /// Build the library with this shell command three times and link every harness against it.
    #[arg(long, value_name = "COMMAND")]
    pub build: Option<String>,
    /// What a harness links (with --build; may be repeated; `$NUMFUZZ_BUILD_DIR` is the variant's
    /// build directory; default: every *.a the build command put there).
    #[arg(long = "lib", value_name = "LINKARGS", allow_hyphen_values = true)]
    pub libs: Vec<String>,
    /// The clang that reads the headers.
    #[arg(long, default_value = "clang-19")]
    pub clang: String,
    /// Arguments for clang when it reads the headers and compiles the harnesses (e.g. `-I include -DNDEBUG`).
    #[arg(last = true, value_name = "CLANG ARGS")]
    pub clang_args: Vec<String>,
}

fn regex(s: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(s).map_err(|e| {
        format!(
            "not a regular expression: {}",
            e.to_string().lines().last().unwrap_or("")
        )
    })
}

#[derive(Debug, clap::Args)]
pub struct SitesArgs {
    /// The target, built with numfuzz-cc.
    pub target: PathBuf,
    /// Print the site table as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The target, built with numfuzz-cc.
    pub target: PathBuf,
    /// Input files.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Decode inputs with this signature instead of the target's (e.g. `f64,i32`).
    #[arg(long, value_parser = signature)]
    pub signature: Option<String>,
    /// Time limit per input in milliseconds.
    #[arg(short = 't', long = "timeout", default_value_t = 5000, value_parser = milliseconds)]
    pub timeout_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExecutorChoice {
    /// In-process for numfuzz-cc libFuzzer-style harnesses, else forkserver.
    Auto,
    /// The LibAFL engine linked into the target (numfuzz-cc harnesses).
    Inprocess,
    /// AFL++ forkserver (any AFL++-instrumented binary, or numfuzz-cc targets).
    Forkserver,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScheduleChoice {
    Mopt,
    Havoc,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example: numfuzz run -o out -V 60 -- ./harness\n         numfuzz run -i seeds -o out --cores 0-1 -- ./program @@"
)]
pub struct RunArgs {
    /// Directory (or file) of initial inputs; without it, seeds are built from the signature.
    #[arg(short = 'i', long = "input")]
    pub seeds: Option<PathBuf>,
    /// Output directory (AFL++ layout); an earlier campaign of the same target there is resumed.
    #[arg(short = 'o', long = "output", required = true)]
    pub out: PathBuf,
    /// Stop after this many seconds.
    #[arg(short = 'V', long = "duration")]
    pub duration_secs: Option<u64>,
    /// Time limit per execution in milliseconds (default: calibrated from the seeds like
    /// AFL++, five times their average rounded up to 20 ms, at most 1000).
    #[arg(short = 't', long = "timeout", value_parser = milliseconds)]
    pub timeout_ms: Option<u64>,
    /// Memory limit in MiB (or `none`, the default): an input that makes the target's resident
    /// memory grow by more is stopped and saved to crashes/ as `oom`; the campaign goes on.
    #[arg(short = 'm', long = "memory-limit", value_name = "MB", value_parser = memory_limit)]
    pub memory_limit_mb: Option<MemoryLimit>,
    /// Cores to fuzz on, one client each (e.g. `0`, `0-1`, `0,2`, `all`).
    #[arg(long, default_value = "0", value_parser = cores_of_this_machine)]
    pub cores: String,
    /// How to execute the target.
    #[arg(long, value_enum, default_value_t = ExecutorChoice::Auto)]
    pub executor: ExecutorChoice,
    /// Input signature (e.g. `f64,i32`) instead of the one embedded in the target.
    #[arg(long, value_parser = signature)]
    pub signature: Option<String>,
    /// Switch off ErrBits feedback (ablation).
    #[arg(long)]
    pub no_errbits: bool,
    /// Switch off the IEEE-754 field mutators (ablation).
    #[arg(long)]
    pub no_fp_mutators: bool,
    /// Switch off the local-search stage, which descends on the exact distance to a site or
    /// branch the campaign has come close to (ablation).
    #[arg(long)]
    pub no_local_search: bool,
    /// Switch off comparison solving: branch-distance feedback and input-to-state (ablation).
    #[arg(long)]
    pub no_cmp: bool,
    /// Run every input precisely (every check, every distance) instead of fast runs that the
    /// FPU's flags watch. For targets that raise exceptions in threads of their own, whose
    /// flags a fast run does not see; and for measurements.
    #[arg(long)]
    pub precise: bool,
    /// Do not save an input because a known exception first reaches a declared result (the
    /// escape objective; for ablations).
    #[arg(long)]
    pub no_escape_objective: bool,
    /// How mutation operators are chosen: MOpt (learned weights) or uniform havoc.
    #[arg(long, value_enum, default_value_t = ScheduleChoice::Mopt)]
    pub schedule: ScheduleChoice,
    /// Dictionary file (AFL++ format); may be repeated.
    #[arg(short = 'x', long = "dict")]
    pub dictionaries: Vec<PathBuf>,
    /// Connect this campaign's LLMP broker to another machine's broker (HOST:PORT).
    #[arg(long)]
    pub broker: Option<String>,
    /// Port of this campaign's LLMP broker (default: a free port).
    #[arg(long)]
    pub port: Option<u16>,
    /// Plain status lines even on a terminal.
    #[arg(long)]
    pub no_tui: bool,
    /// The target and its arguments (`@@` is replaced by the input file).
    #[arg(last = true, required = true, value_name = "TARGET [ARGS]")]
    pub command: Vec<String>,
}

/// Which findings `--minimize` minimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MinimizeWhich {
    All,
    Bugs,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Consequences (which exceptions reach a declared result) need the harness's NUMFUZZ_RESULT declarations and a taint build:\n  NUMFUZZ_CC_TAINT=1 numfuzz-cc <same sources and flags> -o TARGET.taint\n\
Example: numfuzz triage out\n         numfuzz triage out --minimize --oracle targets/gsl/oracle.py --format md --output findings.md"
)]
pub struct TriageArgs {
    /// The campaign's output directory (`numfuzz run -o OUT`).
    pub out: PathBuf,
    /// Replay on this numfuzz-cc target instead of the one in OUT/*/cmdline.
    #[arg(long)]
    pub target: Option<PathBuf>,
    /// The taint build of the target (NUMFUZZ_CC_TAINT=1 numfuzz-cc), which tells which
    /// exceptions reach a declared result (default: TARGET.taint beside the target, if present).
    #[arg(long)]
    pub taint_target: Option<PathBuf>,
    /// The shadow build of the target (NUMFUZZ_CC_SHADOW=1 numfuzz-cc), which judges Inf and
    /// NaN results when there is no --oracle (default: TARGET.shadow beside the target, if
    /// present).
    #[arg(long)]
    pub shadow_target: Option<PathBuf>,
    /// A reference oracle: a command that reads one JSON line per input and answers the true
    /// value of each declared result (protocol in the README), e.g. targets/gsl/oracle.py.
    #[arg(long, value_name = "CMD")]
    pub oracle: Option<String>,
    /// Relative error above which a result is `wrong` against the oracle's reference (an
    /// oracle may answer a looser one for an input).
    #[arg(long, default_value_t = numfuzz::triage::oracle::DEFAULT_TOLERANCE, value_parser = positive_tolerance)]
    pub tolerance: f64,
    /// Seconds the oracle may take to answer one input before it is given up on.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub oracle_timeout: u64,
    /// List every finding, not only the bugs (table, Markdown and HTML).
    #[arg(long)]
    pub all: bool,
    /// Report format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    pub format: ReportFormat,
    /// Write the report to this file (default: stdout).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Minimise each finding's input (shortest decimals, smallest integers) and write it to
    /// <report dir>/minimized/<finding id> (OUT/minimized without --output); `--minimize=bugs`
    /// only the bugs' inputs.
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "all", require_equals = true)]
    pub minimize: Option<MinimizeWhich>,
    /// Write one standalone C reproducer per bug into this directory (with numfuzz.h): it runs
    /// the harness on the bug's input (minimised with --minimize) against the library built
    /// without numfuzz-cc and exits 1 while the bug is there; the report prints how to build it.
    #[arg(long, value_name = "DIR")]
    pub repro: Option<PathBuf>,
    #[command(flatten)]
    pub jobs: Jobs,
    /// Time limit per replay in milliseconds; inputs running longer are hangs.
    #[arg(short = 't', long = "timeout", default_value_t = 3000, value_parser = milliseconds)]
    pub timeout_ms: u64,
    /// Memory limit per replay in MiB, or `none` (default: the campaign's `-m`).
    #[arg(short = 'm', long = "memory-limit", value_name = "MB", value_parser = memory_limit)]
    pub memory_limit_mb: Option<MemoryLimit>,
    /// SARIF: make source locations relative to this directory (default: the directory all
    /// source files share).
    #[arg(long)]
    pub srcroot: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CovFormat {
    Table,
    Json,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "The coverage build is the same harness built with `NUMFUZZ_CC_COVERAGE=1 numfuzz-cc`.\n\
Example: numfuzz cov out --target ./harness-cov\n         numfuzz cov out --target ./harness-cov --function __ieee754_acos --format json"
)]
pub struct CovArgs {
    /// Output directory of the campaign (numfuzz run or afl-fuzz `-o`), or one instance in it.
    pub out: PathBuf,
    /// The coverage build of the campaign's harness.
    #[arg(long)]
    pub target: PathBuf,
    /// Measure this function (llvm-cov's name: static functions are FILE:NAME) instead of the
    /// function under test, which is inferred as the one the harness calls once per input.
    #[arg(long, conflicts_with = "file")]
    pub function: Option<String>,
    /// Measure every function of this source file (its path, or its last components).
    #[arg(long)]
    pub file: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CovFormat::Table)]
    pub format: CovFormat,
    /// Also find when the final coverage was first reached (by the inputs' `time:` field).
    #[arg(long)]
    pub time_to_final: bool,
    /// Time limit per input in milliseconds (hangs and crashing inputs run one per process).
    #[arg(short = 't', long = "timeout", default_value_t = 2000, value_parser = milliseconds)]
    pub timeout_ms: u64,
    /// Directory of llvm-profdata and llvm-cov (default: `$LLVM_CONFIG --bindir`, LLVM_CONFIG
    /// defaulting to llvm-config-19).
    #[arg(long)]
    pub llvm_bindir: Option<PathBuf>,
    /// Keep the merged profile in this file (for `llvm-cov show`).
    #[arg(long)]
    pub profdata: Option<PathBuf>,
}

/// `-j`: how many run at once.
#[derive(Debug, clap::Args)]
pub struct Jobs {
    /// How many run at a time: campaigns (run-all, each on its own core) or replays (triage)
    /// (default: the machine's cores).
    #[arg(short = 'j', long = "jobs", value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
}

impl Jobs {
    pub fn get(&self) -> usize {
        self.jobs.map_or_else(
            || std::thread::available_parallelism().map_or(1, usize::from),
            usize::from,
        )
    }
}

/// `--signature`: checked when the command line is read; kept as written (campaign configs
/// store it so, and `Signature::chosen` parses it where inputs are decoded).
fn signature(s: &str) -> Result<String, String> {
    numfuzz_abi::signature::Signature::parse(s)
        .map(|_| s.to_string())
        .map_err(|e| format!("{e} (e.g. `f64,i32` or `f64[0,1],i32`)"))
}

fn positive_tolerance(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if t > 0.0 && t.is_finite() => Ok(t),
        _ => Err(format!("`{s}` is not a positive number (a relative error, e.g. 1e-6)")),
    }
}

/// `-t`: a time limit of at least 1 ms (0 would make every execution a hang).
fn milliseconds(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(ms) if ms > 0 => Ok(ms),
        _ => Err(format!(
            "`{s}` is not a time limit: give milliseconds, at least 1 (e.g. `-t 1000`)"
        )),
    }
}

/// `-m`: a memory limit, as afl-fuzz takes it (MiB, or `none`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryLimit(pub Option<u64>);

fn memory_limit(s: &str) -> Result<MemoryLimit, String> {
    match s.parse::<u64>() {
        _ if s == "none" => Ok(MemoryLimit(None)),
        Ok(mb) if mb > 0 => Ok(MemoryLimit(Some(mb))),
        _ => Err(format!(
            "`{s}` is not a memory limit: give MiB, at least 1 (e.g. `-m 512`), or `none`"
        )),
    }
}

/// `--cores`: a LibAFL core list whose cores this machine has, checked before anything starts
/// (a core that does not exist would only fail once the clients are being spawned).
fn cores_of_this_machine(s: &str) -> Result<String, String> {
    let available = std::thread::available_parallelism().map_or(1, usize::from);
    let hint = format!(
        "this machine has cores 0-{}; e.g. `--cores 0`, `--cores 0-{}` or `--cores all`",
        available - 1,
        available - 1
    );
    let cores =
        libafl_bolts::core_affinity::Cores::from_cmdline(s).map_err(|_| format!("`{s}` is not a core list: {hint}"))?;
    match cores.ids.iter().find(|c| c.0 >= available) {
        Some(c) => Err(format!("core {} does not exist: {hint}", c.0)),
        None if cores.ids.is_empty() => Err(format!("`{s}` names no core: {hint}")),
        None => Ok(s.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores_must_exist_on_this_machine() {
        assert_eq!(cores_of_this_machine("0").as_deref(), Ok("0"));
        assert!(cores_of_this_machine("all").is_ok());
        let err = cores_of_this_machine("4096").unwrap_err();
        assert!(
            err.starts_with("core 4096 does not exist: this machine has cores 0-"),
            "{err}"
        );
        let err = cores_of_this_machine("0-x").unwrap_err();
        assert!(err.contains("is not a core list"), "{err}");
    }

    #[test]
    fn a_time_limit_is_at_least_one_millisecond() {
        assert_eq!(milliseconds("1"), Ok(1));
        assert_eq!(milliseconds("1000"), Ok(1000));
        for bad in ["0", "-5", "1.5", "fast"] {
            let err = milliseconds(bad).unwrap_err();
            assert!(err.contains("at least 1 (e.g. `-t 1000`)"), "{bad}: {err}");
        }
    }

    #[test]
    fn jobs_and_time_limits_are_refused_below_one_by_clap() {
        for cmd in [
            &["numfuzz", "triage", "out", "-j", "0"][..],
            &["numfuzz", "triage", "out", "-t", "0"],
        ] {
            let err = Cli::try_parse_from(cmd).unwrap_err();
            assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation, "{cmd:?}: {err}");
        }
        let Command::Triage(t) = Cli::try_parse_from(["numfuzz", "triage", "out", "-j", "3"])
            .unwrap()
            .command
        else {
            panic!("not triage");
        };
        assert_eq!(t.jobs.get(), 3);
        let Command::RunAll(r) = Cli::try_parse_from(["numfuzz", "run-all", "h", "-o", "o", "-V", "1"])
            .unwrap()
            .command
        else {
            panic!("not run-all");
        };
        assert!(r.jobs.get() >= 1);
    }

    #[test]
    fn a_memory_limit_is_mib_or_none() {
        assert_eq!(memory_limit("512"), Ok(MemoryLimit(Some(512))));
        assert_eq!(memory_limit("none"), Ok(MemoryLimit(None)));
        for bad in ["0", "-1", "1.5", "lots"] {
            let err = memory_limit(bad).unwrap_err();
            assert!(err.contains("e.g. `-m 512`"), "{bad}: {err}");
        }
    }
}
