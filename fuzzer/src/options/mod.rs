//! The command line (clap derive): one module per subcommand with its options, and here what
//! several share (`-j`, the replay time limit, `-m`, `--signature`) and their value parsers.

mod cov;
#[cfg(test)]
mod doc;
mod harness;
mod replay;
mod run;
mod run_all;
mod sites;
mod triage;

pub use cov::{CovArgs, CovFormat};
pub use harness::HarnessArgs;
pub use replay::ReplayArgs;
pub use run::{ExecutorChoice, RunArgs, ScheduleChoice};
pub use run_all::{MergedFormat, RunAllArgs};
pub use sites::SitesArgs;
pub use triage::{MinimizeWhich, TriageArgs};

use clap::{Parser, Subcommand};

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

/// `-t` of the commands that replay inputs (replay, triage, cov). Each sets its own default
/// with `#[command(mut_arg("timeout_ms", ...))]`: a default in the group itself, through a
/// const generic, would be one for all of them (clap keeps a derived default in a static of a
/// generic function, which every instantiation shares).
#[derive(Debug, clap::Args)]
pub struct ReplayTimeout {
    /// Time limit per input in milliseconds; an input that runs longer is a hang.
    #[arg(short = 't', long = "timeout", value_name = "MS", value_parser = milliseconds)]
    timeout_ms: u64,
}

impl ReplayTimeout {
    pub fn duration(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.timeout_ms)
    }
}

/// `--signature`: checked when the command line is read; kept as written (campaign configs
/// store it so, and `Signature::chosen` parses it where inputs are decoded).
pub(crate) fn signature(s: &str) -> Result<String, String> {
    numfuzz_abi::signature::Signature::parse(s)
        .map(|_| s.to_string())
        .map_err(|e| format!("{e} (e.g. `f64,i32` or `f64[0,1],i32`)"))
}

/// `-t`: a time limit of at least 1 ms (0 would make every execution a hang).
pub(crate) fn milliseconds(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(ms) if ms > 0 => Ok(ms),
        _ => Err(format!(
            "`{s}` is not a time limit: give milliseconds, at least 1 (e.g. `-t 1000`)"
        )),
    }
}

/// `--budget`: a duration in whole seconds, `2h`, `90m`, `1h30m`, `2650s` or `2650`, above 0.
pub(crate) fn duration(s: &str) -> Result<u64, String> {
    let refused =
        || format!("`{s}` is not a duration: give e.g. `2h`, `90m`, `1h30m` or `600s` (a bare number is seconds)");
    if let Ok(seconds) = s.parse::<u64>() {
        return (seconds > 0).then_some(seconds).ok_or_else(refused);
    }
    let mut total = 0u64;
    let mut digits = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            'h' => 3600,
            'm' => 60,
            's' => 1,
            _ => return Err(refused()),
        };
        let n: u64 = digits.parse().map_err(|_| refused())?;
        total = n
            .checked_mul(unit)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(refused)?;
        digits.clear();
    }
    if !digits.is_empty() || total == 0 {
        return Err(refused());
    }
    Ok(total)
}

/// `-m`: a memory limit, as afl-fuzz takes it (MiB, or `none`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryLimit(pub Option<u64>);

pub(crate) fn memory_limit(s: &str) -> Result<MemoryLimit, String> {
    match s.parse::<u64>() {
        _ if s == "none" => Ok(MemoryLimit(None)),
        Ok(mb) if mb > 0 => Ok(MemoryLimit(Some(mb))),
        _ => Err(format!(
            "`{s}` is not a memory limit: give MiB, at least 1 (e.g. `-m 512`), or `none`"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_is_hours_minutes_and_seconds() {
        assert_eq!(duration("2h"), Ok(7200));
        assert_eq!(duration("1h30m"), Ok(5400));
        assert_eq!(duration("90m"), Ok(5400));
        assert_eq!(duration("2650s"), Ok(2650));
        assert_eq!(duration("2650"), Ok(2650));
        for bad in ["", "0", "0s", "2x", "h", "1h30", "-5", "99999999999999999999h"] {
            assert!(duration(bad).is_err(), "{bad}");
        }
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
    fn each_replaying_command_has_its_own_default_time_limit() {
        let timeout = |args: &[&str]| match Cli::try_parse_from(args).unwrap().command {
            Command::Replay(r) => r.timeout.duration(),
            Command::Triage(t) => t.timeout.duration(),
            Command::Cov(c) => c.timeout.duration(),
            other => panic!("{other:?}"),
        };
        let ms = std::time::Duration::from_millis;
        assert_eq!(timeout(&["numfuzz", "replay", "t", "in"]), ms(5000));
        assert_eq!(timeout(&["numfuzz", "triage", "out"]), ms(3000));
        assert_eq!(timeout(&["numfuzz", "cov", "out", "--target", "t"]), ms(2000));
        assert_eq!(timeout(&["numfuzz", "triage", "out", "-t", "7"]), ms(7));
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
