//! `numfuzz cov OUT --target COVERAGE_BUILD`: branch coverage of a campaign's inputs.

use crate::options::{CovArgs, CovFormat};
use numfuzz::cov::{measure, CovOptions, CovReport, ScopeRequest};
use std::fmt::Write;
use std::path::Path;

pub fn run(args: CovArgs) -> anyhow::Result<()> {
    let scope = match (args.function, args.file) {
        (Some(name), _) => ScopeRequest::Function(name),
        (None, Some(path)) => ScopeRequest::File(path),
        (None, None) => ScopeRequest::FunctionUnderTest,
    };
    let report = measure(&CovOptions {
        out: args.out,
        target: args.target,
        scope,
        timeout: args.timeout.duration(),
        llvm_bindir: args.llvm_bindir,
        time_to_final: args.time_to_final,
        profdata: args.profdata,
    })?;
    match args.format {
        CovFormat::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        CovFormat::Table => print!("{}", table(&report)),
    }
    Ok(())
}

fn short(path: &Path) -> String {
    path.file_name()
        .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}

fn table(r: &CovReport) -> String {
    let mut s = String::new();
    let percent = r.percent.map_or("no branches".to_string(), |p| format!("{p:.1} %"));
    let _ = writeln!(s, "scope:    {}", r.scope);
    let _ = writeln!(s, "branches: {}/{} outcomes covered ({percent})", r.covered, r.total);
    let _ = writeln!(
        s,
        "inputs:   {} replayed on {} (queue {}, crashes {}, hangs {}){}",
        r.inputs.queue + r.inputs.crashes + r.inputs.hangs,
        r.target.display(),
        r.inputs.queue,
        r.inputs.crashes,
        r.inputs.hangs,
        if r.lost.is_empty() {
            String::new()
        } else {
            format!(", {} lost", r.lost.len())
        }
    );
    for l in &r.lost {
        let _ = writeln!(s, "  lost:   {} ({})", l.path.display(), l.reason);
    }
    if let Some(t) = &r.time_to_final {
        let _ = writeln!(
            s,
            "final coverage first reached at {:.3} s by {}",
            t.time_ms as f64 / 1000.0,
            short(&t.input)
        );
    }
    if !r.missed.is_empty() {
        let _ = writeln!(s, "missed outcomes:");
        for m in &r.missed {
            let _ = writeln!(
                s,
                "  {}:{}:{}  {}",
                short(Path::new(&m.file)),
                m.line,
                m.column,
                if m.outcome {
                    "true never taken"
                } else {
                    "false never taken"
                }
            );
        }
    }
    s
}
