//! `numfuzz run`: a fuzzing campaign.

use crate::options::{ExecutorChoice, RunArgs, ScheduleChoice};
use anyhow::{bail, Context};
use numfuzz::target::Target;
use numfuzz_abi::signature::Signature;
use numfuzz_engine::config::{CampaignConfig, ExecutorKind, MutatorSchedule};
use numfuzz_engine::summary::Summary;
use numfuzz_outdir::{prepare, OutState};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

/// Name of the campaign configuration file inside `-o`.
const CONFIG_FILE: &str = ".numfuzz-campaign.json";

fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("finding a free port for the LLMP broker")?;
    Ok(listener.local_addr()?.port())
}

fn resolve_target(path: &Path) -> anyhow::Result<PathBuf> {
    let found = if path.components().count() == 1 && !path.exists() {
        // A bare name: look it up on PATH like a shell would.
        which::which(path).unwrap_or_else(|_| path.to_path_buf())
    } else {
        path.to_path_buf()
    };
    if !found.exists() {
        bail!(
            "target `{}` does not exist (build it with numfuzz-cc, or check the path)",
            path.display()
        );
    }
    Ok(std::fs::canonicalize(&found)?)
}

pub fn run(args: RunArgs) -> anyhow::Result<()> {
    let Some((target_arg, target_args)) = args.command.split_first() else {
        bail!("no target given; usage: numfuzz run -o OUT [OPTIONS] -- TARGET [ARGS... @@]");
    };
    let target_path = resolve_target(Path::new(target_arg))?;
    let target = Target::inspect(&target_path)?;
    refuse_what_cannot_run(&args, &target, &target_path)?;
    let executor = executor(&args, &target, &target_path)?;
    if args.memory_limit_mb.is_some_and(|m| m.0.is_some()) && !target.is_numfuzz() {
        bail!(
            "-m: the memory limit is kept by the numfuzz runtime inside the target, and `{}` was not built with numfuzz-cc; rebuild it with numfuzz-cc or drop -m",
            target_path.display()
        );
    }
    if executor == ExecutorKind::InProcess && !target_args.is_empty() {
        bail!("the in-process executor passes inputs directly to LLVMFuzzerTestOneInput; drop the arguments after the target ({})", target_args.join(" "));
    }
    let state = prepare(&args.out, &target_path)?;
    let out = std::fs::canonicalize(&args.out)?;
    if state == OutState::Resume {
        let repaired = numfuzz_outdir::repair::repair(&out)
            .with_context(|| format!("repairing {} before resuming", out.display()))?;
        for line in repaired {
            eprintln!("numfuzz: resuming in {}: {line}", out.display());
        }
    }
    let tui = !args.no_tui && std::io::stdout().is_terminal() && std::env::var_os("CI").is_none();
    let cfg = config(&args, &target_path, target_args, &out, executor, tui)?;
    let config_path = out.join(CONFIG_FILE);
    cfg.save(&config_path)
        .with_context(|| format!("writing {}", config_path.display()))?;
    if !tui {
        announce(&args, &target, &cfg, state == OutState::Resume)?;
    }
    let lost = execute(&cfg, &target, &config_path)?;
    conclude(&cfg, lost)
}

/// Seeds and dictionaries that are not there, and builds no campaign can use.
fn refuse_what_cannot_run(args: &RunArgs, target: &Target, target_path: &Path) -> anyhow::Result<()> {
    if let Some(seeds) = &args.seeds {
        if !seeds.exists() {
            bail!("-i {}: no such file or directory (give a directory of seed inputs, or omit -i to start from seeds built from the signature)", seeds.display());
        }
    }
    for d in &args.dictionaries {
        if !d.is_file() {
            bail!("-x {}: no such file", d.display());
        }
    }
    if target.is_coverage {
        bail!(
            "`{}` is a coverage build (NUMFUZZ_CC_COVERAGE=1): it has no edge coverage and no floating-point checkers, so a campaign on it finds nothing; fuzz the numfuzz-cc build of the same harness and give this one to `numfuzz cov`",
            target_path.display()
        );
    }
    if target.runtime_abi.is_some() && !target.is_numfuzz() {
        Target::inspect_numfuzz(target_path)?;
    }
    Ok(())
}

/// The executor `--executor` asks for, checked against what the target is.
fn executor(args: &RunArgs, target: &Target, target_path: &Path) -> anyhow::Result<ExecutorKind> {
    Ok(match args.executor {
        ExecutorChoice::Inprocess => {
            if !target.is_numfuzz() || !target.has_harness {
                bail!(
                "--executor inprocess needs a libFuzzer-style harness (LLVMFuzzerTestOneInput) built with numfuzz-cc; `{}` is not one (use --executor forkserver)",
                target_path.display()
            );
            }
            ExecutorKind::InProcess
        }
        ExecutorChoice::Forkserver => ExecutorKind::Forkserver,
        ExecutorChoice::Auto if target.is_numfuzz() && target.has_harness => ExecutorKind::InProcess,
        ExecutorChoice::Auto => {
            if !target.is_numfuzz() {
                eprintln!(
                "numfuzz: warning: `{}` was not built with numfuzz-cc: fuzzing it through the AFL++ forkserver with edge coverage only (no floating-point exception detection)",
                target_path.display()
            );
            }
            ExecutorKind::Forkserver
        }
    })
}

/// The campaign's configuration, as the clients read it from OUT.
fn config(
    args: &RunArgs,
    target_path: &Path,
    target_args: &[String],
    out: &Path,
    executor: ExecutorKind,
    tui: bool,
) -> anyhow::Result<CampaignConfig> {
    Ok(CampaignConfig {
        target: target_path.to_path_buf(),
        target_args: target_args.to_vec(),
        out_dir: out.to_path_buf(),
        seeds: args.seeds.as_ref().map(std::fs::canonicalize).transpose()?,
        timeout_ms: args.timeout_ms.unwrap_or(1000),
        timeout_given: args.timeout_ms.is_some(),
        memory_limit_mb: args.memory_limit_mb.and_then(|m| m.0),
        duration_secs: args.duration_secs,
        cores: args.cores.clone(),
        signature: args.signature.clone(),
        errbits: !args.no_errbits,
        fp_mutators: !args.no_fp_mutators,
        cmp: !args.no_cmp,
        local_search: !args.no_local_search,
        precise: args.precise,
        escapes: !args.no_escape_objective,
        schedule: match args.schedule {
            ScheduleChoice::Mopt => MutatorSchedule::Mopt,
            ScheduleChoice::Havoc => MutatorSchedule::Havoc,
        },
        dictionaries: args
            .dictionaries
            .iter()
            .map(std::fs::canonicalize)
            .collect::<Result<_, _>>()?,
        executor,
        broker_port: match args.port {
            Some(p) => p,
            None => free_port()?,
        },
        remote_broker: args.broker.clone(),
        tui,
        start_unix_ms: SystemTime::now().duration_since(UNIX_EPOCH)?.as_millis() as u64,
        command_line: std::env::args().collect::<Vec<_>>().join(" "),
    })
}

/// The line a campaign without the screen starts with.
fn announce(args: &RunArgs, target: &Target, cfg: &CampaignConfig, resuming: bool) -> anyhow::Result<()> {
    let sig = Signature::chosen(args.signature.as_deref(), target.signature.as_ref())?
        .map_or_else(|| "none (plain bytes)".to_string(), |s| s.to_string());
    println!(
        "numfuzz: {} campaign on {} (signature {sig}), {} in {}{}{}",
        match cfg.executor {
            ExecutorKind::InProcess => "in-process",
            ExecutorKind::Forkserver => "forkserver",
        },
        cfg.target.display(),
        if args.cores.contains(['-', ',']) {
            format!("cores {}", args.cores)
        } else {
            format!("core {}", args.cores)
        },
        cfg.out_dir.display(),
        if resuming { " (resuming)" } else { "" },
        args.duration_secs.map_or(String::new(), |s| format!(", {s} s")),
    );
    Ok(())
}

/// Runs the campaign to its end; what ended its processes early, besides what the clients
/// wrote down.
fn execute(cfg: &CampaignConfig, target: &Target, config_path: &Path) -> anyhow::Result<Vec<String>> {
    let target_path = &cfg.target;
    let mut lost = Vec::new();
    match cfg.executor {
        ExecutorKind::InProcess => {
            // This process is the broker and the monitor; each client is the target,
            // started once per core, with the engine linked into it.
            let exits = numfuzz_engine::campaign::serve(cfg, |slot| {
                let mut client = Command::new(target_path);
                client
                    .env(numfuzz_abi::env::ENGINE, config_path)
                    .env(numfuzz_abi::env::CLIENT, slot.to_env())
                    .stdin(Stdio::null());
                if let Some(mb) = cfg.memory_limit_mb {
                    client.env(numfuzz_abi::env::MEM_LIMIT_MB, mb.to_string());
                }
                client.spawn()
            })
            .with_context(|| format!("running the campaign on {}", target_path.display()))?;
            for exit in exits.iter().filter(|e| !e.status.success()) {
                lost.push(format!(
                    "the client process for core {} (pid {}, `{}`) ended with {}",
                    exit.slot.core,
                    exit.pid,
                    target_path.display(),
                    exit.status
                ));
            }
        }
        ExecutorKind::Forkserver => {
            numfuzz::forkserver::run_campaign(cfg, target)?;
        }
    }
    Ok(lost)
}

/// The campaign's summary, and an error when it did not run to its end.
fn conclude(cfg: &CampaignConfig, lost: Vec<String>) -> anyhow::Result<()> {
    let out = &cfg.out_dir;
    let summary = Summary::read_campaign(out, cfg.start_unix_ms, cfg.duration_secs);
    print!("{summary}");
    let mut cut_short = lost;
    cut_short.extend(summary.cut_short());
    let silent = summary.clients.iter().any(|(_, h)| h.end.is_none());
    if silent && disk_full(out) {
        // A client that meets a full disk may not be able to write down why it stopped.
        cut_short.push(format!(
            "the disk holding {} is full; free some space and run the same command again to resume",
            out.display()
        ));
    }
    if !cut_short.is_empty() {
        bail!(
            "the campaign did not run to its end (what it found is kept in {}): {}",
            out.display(),
            cut_short.join("; ")
        );
    }
    Ok(())
}

/// No space left for an unprivileged writer on the file system holding `dir`.
fn disk_full(dir: &Path) -> bool {
    nix::sys::statvfs::statvfs(dir).is_ok_and(|s| s.blocks_available() == 0)
}
