//! `numfuzz triage OUT`: the campaign's distinct findings, located, decoded and optionally
//! minimised, as a table, Markdown, JSON, SARIF or an HTML page.

use crate::options::{MinimizeWhich, TriageArgs};
use anyhow::{bail, Context};
use numfuzz::triage::format::{headline, render};
use numfuzz::triage::{triage, Options};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

pub fn run(args: TriageArgs) -> anyhow::Result<()> {
    let jobs = args.jobs.get();
    if let Some(out) = &args.output {
        if out.is_dir() {
            bail!("--output {} is a directory; give a file name", out.display());
        }
    }
    if args.repro_link.is_some() && args.repro.is_none() {
        bail!("--repro-link needs --repro DIR: it goes into the build lines of the reproducers written there");
    }
    let minimize_into = args.minimize.is_some().then(|| match &args.output {
        Some(file) => match file.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(dir) => dir.join("minimized"),
            None => PathBuf::from("minimized"),
        },
        None => args.out.join("minimized"),
    });
    let opts = Options {
        out: args.out.clone(),
        target: args.target.clone(),
        jobs,
        timeout: args.timeout.duration(),
        memory_limit_mb: args.memory_limit_mb.map(|m| m.0),
        minimize_into,
        minimize_bugs_only: args.minimize == Some(MinimizeWhich::Bugs),
        taint_target: args.taint_target.clone(),
        shadow_target: args.shadow_target.clone(),
        mpfr_target: args.mpfr_target.clone(),
        oracle: args.oracle.clone(),
        oracle_timeout: Duration::from_secs(args.oracle_timeout),
        tolerance: args.tolerance,
        repro_into: args.repro.clone(),
        repro_link: args.repro_link.clone(),
    };
    let show_progress = std::io::stderr().is_terminal();
    let report = triage(&opts, |done, total| {
        if show_progress {
            eprint!("\rnumfuzz: replayed {done}/{total} inputs");
            if done == total {
                eprintln!();
            }
        }
    })?;
    if report.inputs_replayed == 0 {
        eprintln!(
            "numfuzz: no findings: {} holds no inputs in */crashes or */hangs",
            args.out.display()
        );
    }
    if args.repro_link.is_none() && report.findings.iter().any(|f| f.reproducer.is_some()) {
        eprintln!(
            "numfuzz: the reproducers' build lines say {}: pass --repro-link 'ARGS' with the plain library's link arguments (e.g. '-lgsl -lgslcblas', or /path/libfoo.a) to put them there",
            numfuzz::triage::format::repro::PLACEHOLDER
        );
    }
    let text = render(&report, args.format, args.srcroot.as_deref(), args.all);
    match &args.output {
        Some(file) => {
            std::fs::write(file, &text).with_context(|| format!("writing {}", file.display()))?;
            eprintln!("numfuzz: wrote {}: {}", file.display(), headline(&report));
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(text.as_bytes())?;
            stdout.flush()?;
        }
    }
    // The report is written either way; an oracle that failed is an error all the same.
    if let Some(error) = report.oracle.as_ref().and_then(|o| o.error.clone()) {
        bail!("{error}");
    }
    Ok(())
}
