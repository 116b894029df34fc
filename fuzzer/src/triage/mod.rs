//! `numfuzz triage OUT`: replays every saved input of a campaign out of process, groups the
//! floating-point exceptions by (site, kind), real crashes by (signal, top frame), lists
//! hangs and inputs that no longer reproduce, optionally minimises each finding's input,
//! and renders the result as a table, Markdown, JSON or SARIF.

pub mod campaign;
pub mod format;
pub mod group;
pub mod minimize;
mod pool;

use crate::replay::{Replay, Replayer};
use crate::target::{Target, TargetError};
use campaign::Campaign;
use numfuzz_outdir::OutDirError;
use group::{view_fields, Finding, Minimized, Report};
use numfuzz_abi::signature::Signature;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum TriageError {
    #[error(transparent)]
    Campaign(#[from] OutDirError),
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error("no instance of `{0}` has a cmdline naming its target; pass --target TARGET")]
    NoCmdline(PathBuf),
    #[error("the campaign's target `{target}` (from {cmdline}) does not exist; pass --target with a numfuzz-cc build of the same harness")]
    RecordedTargetMissing { target: PathBuf, cmdline: String },
    #[error("the campaign's target `{target}` (from {cmdline}) was not built with numfuzz-cc; pass --target with a numfuzz-cc build of the same harness")]
    RecordedTargetNotNumfuzz { target: PathBuf, cmdline: String },
    #[error("cannot write minimised inputs to `{0}`: {1}")]
    MinimizedDir(PathBuf, std::io::Error),
}

/// What to triage and how.
#[derive(Clone, Debug)]
pub struct Options {
    pub out: PathBuf,
    /// The target to replay on, instead of the one in the campaign's `cmdline`.
    pub target: Option<PathBuf>,
    /// Parallel replays.
    pub jobs: usize,
    /// Time limit per replay.
    pub timeout: Duration,
    /// Minimise each finding's input and write it into this directory.
    pub minimize_into: Option<PathBuf>,
}

/// The target to replay on and the arguments the campaign ran it with.
fn resolve_target(campaign: &Campaign, explicit: Option<&Path>) -> Result<(Target, Vec<String>), TriageError> {
    let recorded = campaign.out.recorded_command();
    let args: Vec<String> = recorded.as_ref().map(|(_, c)| c[1..].to_vec()).unwrap_or_default();
    if let Some(path) = explicit {
        return Ok((Target::inspect_numfuzz(path)?, args));
    }
    let Some((instance, cmdline)) = recorded else {
        return Err(TriageError::NoCmdline(campaign.root().to_path_buf()));
    };
    let mut target = PathBuf::from(cmdline[0].trim());
    // afl-fuzz records the path as typed: relative to where it ran, often next to OUT.
    if target.is_relative() && !target.exists() {
        if let Some(beside_out) = campaign.root().parent().map(|p| p.join(&target)).filter(|p| p.exists()) {
            target = beside_out;
        }
    }
    let cmdline_file = instance.dir.join("cmdline").display().to_string();
    match Target::inspect_numfuzz(&target) {
        Ok(t) => Ok((t, args)),
        Err(TargetError::Missing(_)) => Err(TriageError::RecordedTargetMissing {
            target,
            cmdline: cmdline_file,
        }),
        Err(TargetError::NotNumfuzz(_) | TargetError::NotElf(..)) => Err(TriageError::RecordedTargetNotNumfuzz {
            target,
            cmdline: cmdline_file,
        }),
        Err(e) => Err(e.into()),
    }
}

/// Replays, groups and (optionally) minimises. `progress(done, total)` is called as replays
/// finish.
pub fn triage(opts: &Options, progress: impl Fn(usize, usize) + Sync) -> Result<Report, TriageError> {
    let campaign = Campaign::open(&opts.out)?;
    let (target, args) = resolve_target(&campaign, opts.target.as_deref())?;
    let replayer = Replayer {
        target: target.path.clone(),
        args,
        timeout: opts.timeout,
    };
    let signature = target.signature.clone();
    let total = campaign.inputs.len();
    let replays: Vec<std::io::Result<Replay>> = pool::map(
        &campaign.inputs,
        opts.jobs,
        |input| replayer.run(&input.path),
        |done| progress(done, total),
    );
    let timeout_ms = opts.timeout.as_millis() as u64;
    let (findings, crashes, hangs, not_reproduced) = group::group(&campaign, replays, signature.as_ref(), timeout_ms);
    let mut report = Report {
        out_dir: std::fs::canonicalize(&opts.out).unwrap_or_else(|_| opts.out.clone()),
        target: std::fs::canonicalize(&target.path).unwrap_or_else(|_| target.path.clone()),
        signature: signature.as_ref().map(Signature::to_string),
        instances: campaign.out.instance_names(),
        inputs_replayed: total,
        timeout_ms,
        findings,
        crashes,
        hangs,
        not_reproduced,
        minimized_dir: None,
    };
    if let Some(dir) = &opts.minimize_into {
        if !report.findings.is_empty() {
            std::fs::create_dir_all(dir).map_err(|e| TriageError::MinimizedDir(dir.clone(), e))?;
            report.minimized_dir = Some(dir.clone());
        }
        let results = pool::map(
            &report.findings,
            opts.jobs,
            |f| minimize_finding(f, &replayer, signature.as_ref(), dir),
            |_| {},
        );
        for (f, r) in report.findings.iter_mut().zip(results) {
            match r {
                Ok(m) => f.minimized = Some(m),
                Err(note) => f.minimize_note = Some(note),
            }
        }
    }
    Ok(report)
}

/// Minimises one finding's input and writes it to `dir/<finding id>`.
fn minimize_finding(
    f: &Finding,
    replayer: &Replayer,
    signature: Option<&Signature>,
    dir: &Path,
) -> Result<Minimized, String> {
    let Some(sig) = signature else {
        return Err("the target declares no NUMFUZZ_SIGNATURE, so its input has no fields to minimise".into());
    };
    let raises = |bytes: &[u8]| {
        replayer
            .run_bytes(bytes)
            .is_ok_and(|r| r.exceptions.iter().any(|e| f.key.matches(e)))
    };
    let Some(values) = minimize::minimize_input(sig, &f.input_bytes, raises) else {
        return Err("the input re-encoded by the signature no longer raises it".into());
    };
    let bytes = sig.encode(&values).map_err(|e| e.to_string())?;
    let path = dir.join(&f.id);
    std::fs::write(&path, &bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let replay = replayer
        .run(&path)
        .map_err(|e| format!("cannot replay {}: {e}", path.display()))?;
    let expression = replay
        .exceptions
        .iter()
        .find(|e| f.key.matches(e))
        .map(|e| e.expression())
        .ok_or_else(|| format!("{} no longer raises it on replay", path.display()))?;
    Ok(Minimized {
        path,
        fields: view_fields(Some(sig), &bytes),
        expression,
    })
}
