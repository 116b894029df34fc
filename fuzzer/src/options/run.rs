//! `numfuzz run`: a campaign on one target.

use super::MemoryLimit;
use std::path::PathBuf;

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
    /// Hang limit in milliseconds (default 1000). Runs get a limit calibrated from the seeds
    /// like AFL++ (five times their average rounded up to 20 ms, at most this); one that
    /// exceeds it is run again with this whole limit, unless it had raised Invalid,
    /// DivByZero or Overflow first (`cut_after_raise`) or hit only a saved hang's edges
    /// (`repeated_timeouts`; one in ten ceilings is). In-process, a run is stopped between
    /// one and two limits after it started (a timer armed once per batch of runs).
    #[arg(short = 't', long = "timeout", value_parser = super::milliseconds)]
    pub timeout_ms: Option<u64>,
    /// Memory limit in MiB (or `none`, the default): an input that makes the target's resident
    /// memory grow by more is stopped and saved to crashes/ as `oom`; the campaign goes on.
    #[arg(short = 'm', long = "memory-limit", value_name = "MB", value_parser = super::memory_limit)]
    pub memory_limit_mb: Option<MemoryLimit>,
    /// Cores to fuzz on, one client each (e.g. `0`, `0-1`, `0,2`, `all`).
    #[arg(long, default_value = "0", value_parser = cores_of_this_machine)]
    pub cores: String,
    /// How to execute the target.
    #[arg(long, value_enum, default_value_t = ExecutorChoice::Auto)]
    pub executor: ExecutorChoice,
    /// Input signature (e.g. `f64,i32`) instead of the one embedded in the target.
    #[arg(long, value_parser = super::signature)]
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
}
