//! `numfuzz triage OUT`: replays every saved input of a campaign out of process, groups the
//! floating-point exceptions by (site, kind), real crashes by (signal, top frame), lists
//! hangs and inputs that no longer reproduce, tells what each exception did to the declared
//! results (`consequences`: replays on the taint build), judges results against a reference
//! oracle, optionally minimises each finding's input keeping what makes it matter, and
//! renders the result, bugs first, as a table, Markdown, JSON or SARIF.

pub mod consequences;
pub mod findings;
pub mod format;
pub mod inputs;
mod parallel;
pub mod references;
pub mod report;
mod timing;

use crate::replay::{Replay, Replayer};
use crate::target::{Target, TargetError};
use consequences::root::Attribution;
use consequences::{taint, Consequence};
use findings::judge::{Judge, Keep};
use inputs::campaign::{Campaign, Expectation};
use numfuzz_abi::signature::Signature;
use numfuzz_outdir::OutDirError;
use references::{References, Source};
use report::{view_fields, Consequences, Finding, Minimized, OracleUse, Reference, Report};
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
    #[error("cannot write reproducers to `{0}`: {1}")]
    Repro(PathBuf, std::io::Error),
    #[error("--repro needs the target's NUMFUZZ_SIGNATURE (a reproducer embeds the input's fields)")]
    ReproWithoutSignature,
    #[error("--taint-target `{0}` is not a taint build; build it with NUMFUZZ_CC_TAINT=1 numfuzz-cc (same sources and flags as the target)")]
    NotTaint(PathBuf),
    #[error("--shadow-target `{0}` is not a shadow build; build it with NUMFUZZ_CC_SHADOW=1 numfuzz-cc (same sources and flags as the target)")]
    NotShadow(PathBuf),
    #[error("--mpfr-target `{0}` is not an MPFR shadow build; build it with NUMFUZZ_CC_SHADOW=mpfr numfuzz-cc (same sources and flags as the target, the library too)")]
    NotMpfrShadow(PathBuf),
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
    /// Memory limit per replay in MiB: `None` takes the campaign's `-m`, `Some(None)` none.
    pub memory_limit_mb: Option<Option<u64>>,
    /// Minimise each finding's input and write it into this directory.
    pub minimize_into: Option<PathBuf>,
    /// Only the bugs' inputs.
    pub minimize_bugs_only: bool,
    /// The taint build (default: `TARGET.taint` beside the target, when it is one).
    pub taint_target: Option<PathBuf>,
    /// The shadow build (default: `TARGET.shadow` beside the target, when it is one), the
    /// reference without an oracle.
    pub shadow_target: Option<PathBuf>,
    /// The MPFR shadow build (default: `TARGET.mpfr` beside the target, when it is one), asked
    /// where the shadow build cannot tell.
    pub mpfr_target: Option<PathBuf>,
    /// The reference oracle's command line.
    pub oracle: Option<String>,
    /// How long it may take to answer one input.
    pub oracle_timeout: Duration,
    /// Relative tolerance of the `wrong` verdict.
    pub tolerance: f64,
    /// Write a C reproducer per bug into this directory.
    pub repro_into: Option<PathBuf>,
    /// The plain library's link arguments for the reproducers' build lines (`--repro-link`).
    pub repro_link: Option<String>,
}

/// The taint build to replay on: `explicit`, else `TARGET.taint` beside the target when that
/// is one.
fn resolve_taint(explicit: Option<&Path>, target: &Target) -> Result<Option<PathBuf>, TriageError> {
    if let Some(path) = explicit {
        let t = Target::inspect_numfuzz(path)?;
        if !t.is_taint {
            return Err(TriageError::NotTaint(path.to_path_buf()));
        }
        return Ok(Some(path.to_path_buf()));
    }
    let beside = default_taint_path(&target.path);
    Ok(Target::inspect_numfuzz(&beside)
        .ok()
        .filter(|t| t.is_taint)
        .map(|_| beside))
}

/// The shadow build to take references from: `explicit`, else `TARGET.shadow` beside the
/// target when that is one.
fn resolve_shadow(explicit: Option<&Path>, target: &Target) -> Result<Option<PathBuf>, TriageError> {
    if let Some(path) = explicit {
        let t = Target::inspect_numfuzz(path)?;
        if !t.is_shadow {
            return Err(TriageError::NotShadow(path.to_path_buf()));
        }
        return Ok(Some(path.to_path_buf()));
    }
    let beside = beside_target(&target.path, ".shadow");
    Ok(Target::inspect_numfuzz(&beside)
        .ok()
        .filter(|t| t.is_shadow)
        .map(|_| beside))
}

/// The MPFR shadow build: `explicit`, else `TARGET.mpfr` beside the target when that is one.
fn resolve_mpfr(explicit: Option<&Path>, target: &Target) -> Result<Option<PathBuf>, TriageError> {
    if let Some(path) = explicit {
        if !Target::inspect_numfuzz(path)?.is_mpfr_shadow {
            return Err(TriageError::NotMpfrShadow(path.to_path_buf()));
        }
        return Ok(Some(path.to_path_buf()));
    }
    let beside = beside_target(&target.path, ".mpfr");
    Ok(Target::inspect_numfuzz(&beside)
        .ok()
        .filter(|t| t.is_mpfr_shadow)
        .map(|_| beside))
}

/// `TARGET.taint`.
pub fn default_taint_path(target: &Path) -> PathBuf {
    beside_target(target, ".taint")
}

fn beside_target(target: &Path, suffix: &str) -> PathBuf {
    let mut name = target.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    target.with_file_name(name)
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

/// Replays, analyses, groups, judges and (optionally) minimises. `progress(done, total)` is
/// called as replays finish.
pub fn triage(opts: &Options, progress: impl Fn(usize, usize) + Sync) -> Result<Report, TriageError> {
    let campaign = Campaign::open(&opts.out)?;
    let builds = builds(opts, &campaign)?;
    let signature = builds.target.signature.as_ref();
    let total = campaign.inputs.len();
    let hang_timeout = hang_timeout(opts, &campaign);
    let mut phases = timing::Phases::start();
    let replays: Vec<std::io::Result<Replay>> = parallel::map(
        &campaign.inputs,
        opts.jobs,
        |input| match input.expect {
            Expectation::Hang => builds.replayer.run_within(&input.path, hang_timeout),
            _ => builds.replayer.run(&input.path),
        },
        |done| progress(done, total),
    );
    phases.end("replays");

    let (analyses, repair_replays) =
        analyse_consequences(&campaign, &replays, builds.taint.as_ref(), signature, opts.jobs);
    phases.end("consequences");
    let consequences = consequences_of(&analyses, &replays, &builds);
    let (references, shadow_agreement) = references(
        opts,
        &campaign,
        &replays,
        (builds.shadow.as_ref(), builds.mpfr.as_ref()),
        &builds.target,
        signature,
    );
    phases.end("references");
    let timeout_ms = opts.timeout.as_millis() as u64;
    let judged = consequences == Consequences::Computed;
    let hang_ms = hang_timeout.as_millis() as u64;
    let grouped = findings::group::group(&campaign, replays, &analyses, judged, signature, hang_ms);
    let mut report = Report {
        out_dir: std::fs::canonicalize(&opts.out).unwrap_or_else(|_| opts.out.clone()),
        target: std::fs::canonicalize(&builds.target.path).unwrap_or_else(|_| builds.target.path.clone()),
        signature: signature.map(Signature::to_string),
        instances: campaign.out.instance_names(),
        inputs_replayed: total,
        timeout_ms,
        findings: grouped.findings,
        crashes: grouped.crashes,
        hangs: grouped.hangs,
        not_reproduced: grouped.not_reproduced,
        unexplained: grouped.unexplained,
        repair_replays,
        minimized_dir: None,
        consequences,
        taint_target: builds.taint.as_ref().map(|t| t.target.clone()),
        oracle: None,
        shadow_agreement,
        records: campaign.records_by_instance(),
    };
    judge_findings(&mut report, opts, &builds, references.as_ref())?;
    phases.end("judging");
    phases.log(&[
        ("target", Some(&builds.replayer)),
        ("taint", builds.taint.as_ref()),
        ("shadow", builds.shadow.as_ref()),
        ("MPFR", builds.mpfr.as_ref()),
    ]);
    Ok(report)
}

/// What triage replays on: the target as the campaign ran it and, when there are, its taint
/// build and its shadow build.
struct Builds {
    target: Target,
    replayer: Replayer,
    taint: Option<Replayer>,
    shadow: Option<Replayer>,
    mpfr: Option<Replayer>,
}

/// The limit the campaign's hangs are replayed at: the one it confirmed them at, if it recorded
/// it and it is shorter than `-t` (an input that ran past it was a hang to the campaign; more
/// time only delays the report), else `-t`.
fn hang_timeout(opts: &Options, campaign: &Campaign) -> Duration {
    campaign
        .hang_timeout_ms()
        .map_or(opts.timeout, |ms| opts.timeout.min(Duration::from_millis(ms)))
}

/// The target (`--target`, else the campaign's) and the builds beside it, with their limits.
fn builds(opts: &Options, campaign: &Campaign) -> Result<Builds, TriageError> {
    let (target, args) = resolve_target(campaign, opts.target.as_deref())?;
    let taint_target = resolve_taint(opts.taint_target.as_deref(), &target)?;
    let shadow = resolve_shadow(opts.shadow_target.as_deref(), &target)?;
    let mpfr = resolve_mpfr(opts.mpfr_target.as_deref(), &target)?;
    // DataFlowSanitizer costs time, so a replay that completed on the target gets room; its
    // shadow memory and labels are its own: only the target build is held to -m.
    let taint = taint_target.map(|t| Replayer::with(&t, args.clone(), opts.timeout * 4, None));
    // Every operation of a shadow build calls the runtime, and MPFR's cost tens of x87 ones;
    // the shadows are the build's own, so no memory limit either.
    let shadow = shadow.map(|s| Replayer::with(&s, args.clone(), opts.timeout * X87_SLOWER, None));
    let mpfr = mpfr.map(|m| Replayer::with(&m, args.clone(), opts.timeout * MPFR_SLOWER, None));
    let memory_limit_mb = opts.memory_limit_mb.unwrap_or_else(|| campaign.memory_limit_mb());
    let replayer = Replayer::with(&target.path, args, opts.timeout, memory_limit_mb);
    Ok(Builds {
        target,
        replayer,
        taint,
        shadow,
        mpfr,
    })
}

/// Whether consequences could be computed: they need declared results, and a taint build
/// when some input returned Inf or NaN unreported.
fn consequences_of(
    analyses: &[Option<consequences::InputAnalysis>],
    replays: &[std::io::Result<Replay>],
    builds: &Builds,
) -> Consequences {
    if !analyses.iter().flatten().any(|a| a.has_results) {
        Consequences::NoResults
    } else if builds.taint.is_none() && replays.iter().flatten().any(consequences::needs_taint) {
        Consequences::NoTaintBuild {
            expected: default_taint_path(&builds.target.path),
        }
    } else {
        Consequences::Computed
    }
}

/// Judges the inputs the findings show against the references, minimises them (`--minimize`),
/// writes the bugs' reproducers (`--repro`) and records how the references were used.
fn judge_findings(
    report: &mut Report,
    opts: &Options,
    builds: &Builds,
    references: Option<&References>,
) -> Result<(), TriageError> {
    let signature = builds.target.signature.as_ref();
    let judge = Judge {
        replayer: &builds.replayer,
        taint: builds.taint.as_ref(),
        signature,
        references,
    };
    // References of the inputs shown (they decide which findings are bugs by a wrong result).
    if references.is_some() {
        attach_references(report, &judge, opts.jobs, false);
    }
    if let Some(dir) = &opts.minimize_into {
        minimize_findings(report, &judge, opts, signature, dir)?;
    }
    if let Some(o) = references {
        record_reference_use(report, o);
    }
    // One entry per dropped error report, once the references have said which are bugs; then
    // one per line where the others' fix goes (where precision was lost, else the root site).
    findings::dropped_report::merge(report);
    if let Some(mpfr) = &builds.mpfr {
        findings::precision_lost::attach(report, mpfr, opts.jobs);
    }
    findings::precision_lost::merge(report);
    if let Some(dir) = &opts.repro_into {
        write_reproducers(report, &builds.target, opts.repro_link.as_deref(), dir)?;
    }
    Ok(())
}

/// Writes the bugs' C reproducers into `dir` and notes each on its bug; `link`: the plain
/// library's link arguments.
fn write_reproducers(report: &mut Report, target: &Target, link: Option<&str>, dir: &Path) -> Result<(), TriageError> {
    let sig = target.signature.as_ref().ok_or(TriageError::ReproWithoutSignature)?;
    let written = format::repro::write(report, sig, target.harness_source.as_deref(), link, dir)
        .map_err(|e| TriageError::Repro(dir.to_path_buf(), e))?;
    for (id, r) in written {
        if let Some(f) = report.findings.iter_mut().find(|f| f.id == id) {
            f.reproducer = Some(r);
        }
    }
    Ok(())
}

/// Each replay's consequence analysis (`None`: not replayed): the inputs that returned Inf or
/// NaN unreported go to the taint build, and those with a non-finite primary result get their
/// root by repair there. Also the replays the repairs spent.
fn analyse_consequences(
    campaign: &Campaign,
    replays: &[std::io::Result<Replay>],
    taint: Option<&Replayer>,
    signature: Option<&Signature>,
    jobs: usize,
) -> (Vec<Option<consequences::InputAnalysis>>, usize) {
    let needs: Vec<usize> = (0..replays.len())
        .filter(|&i| replays[i].as_ref().is_ok_and(consequences::needs_taint))
        .collect();
    let on_taint: Vec<Option<(taint::Flow, Option<Attribution>)>> = match taint {
        Some(t) => parallel::map(
            &needs,
            jobs,
            |&i| {
                let replay = replays[i].as_ref().ok()?;
                consequences::repair::on_taint_build(t, &campaign.inputs[i].path, replay, signature)
            },
            |_| {},
        ),
        None => vec![None; needs.len()],
    };
    let mut taint_of: Vec<Option<&(taint::Flow, Option<Attribution>)>> = vec![None; replays.len()];
    for (&i, t) in needs.iter().zip(&on_taint) {
        taint_of[i] = t.as_ref();
    }
    let repair_replays = on_taint
        .iter()
        .flatten()
        .filter_map(|(_, a)| a.as_ref())
        .map(|a| a.replays)
        .sum();
    let analyses = replays
        .iter()
        .zip(&taint_of)
        .map(|(r, t)| {
            let r = r.as_ref().ok()?;
            let (flow, attribution) = match t {
                Some((flow, a)) => (Some(flow), a.as_ref()),
                None => (None, None),
            };
            Some(consequences::analyze(r, flow, attribution, signature))
        })
        .collect();
    (analyses, repair_replays)
}

/// How much longer than the target a shadow build may take on an input.
const X87_SLOWER: u32 = 4;
const MPFR_SLOWER: u32 = 20;

/// The references results are judged by: the oracle when there is one, else the shadow build;
/// with both, the shadow measured against the oracle on every escaping input.
fn references(
    opts: &Options,
    campaign: &Campaign,
    replays: &[std::io::Result<Replay>],
    (shadow, mpfr): (Option<&Replayer>, Option<&Replayer>),
    target: &Target,
    signature: Option<&Signature>,
) -> (Option<References>, Option<references::shadow_agreement::Agreement>) {
    let shadow = shadow.map(|shadow| {
        References::shadow(shadow.clone(), mpfr.cloned(), &target.function_name(), opts.tolerance)
            .defined_in_domain(target.defined_in_domain)
    });
    let oracle = opts
        .oracle
        .as_deref()
        .map(|cmd| References::oracle(cmd, &target.function_name(), opts.tolerance, opts.oracle_timeout));
    let agreement = match (&oracle, &shadow) {
        (Some(o), Some(s)) => {
            let names: Vec<String> = campaign.inputs.iter().map(|i| i.rel.clone()).collect();
            Some(references::shadow_agreement::compare(
                o, s, replays, &names, signature, opts.jobs,
            ))
        }
        _ => None,
    };
    (oracle.or(shadow), agreement)
}

/// Minimises each finding's input (the bugs' only with `--minimize=bugs`) into `dir`, then
/// judges the minimised inputs, which are what the report shows.
fn minimize_findings(
    report: &mut Report,
    judge: &Judge,
    opts: &Options,
    signature: Option<&Signature>,
    dir: &Path,
) -> Result<(), TriageError> {
    if !report.findings.is_empty() {
        std::fs::create_dir_all(dir).map_err(|e| TriageError::MinimizedDir(dir.to_path_buf(), e))?;
        report.minimized_dir = Some(dir.to_path_buf());
    }
    let results = parallel::map(
        &report.findings,
        opts.jobs,
        |f| (!opts.minimize_bugs_only || f.is_bug()).then(|| minimize_finding(f, judge, signature, dir)),
        |_| {},
    );
    for (f, r) in report.findings.iter_mut().zip(results) {
        match r {
            Some(Ok(m)) => f.minimized = Some(m),
            Some(Err(note)) => f.minimize_note = Some(note),
            None => {}
        }
    }
    if judge.references.is_some() {
        attach_references(report, judge, opts.jobs, true);
    }
    Ok(())
}

/// What the report says of its references; an oracle given up on leaves no partial ones.
fn record_reference_use(report: &mut Report, references: &References) {
    let error = references.error();
    if error.is_some() {
        // As without any reference: escapes are bugs again, none is "not judged".
        for f in &mut report.findings {
            f.reference = None;
            f.not_judged = None;
        }
    }
    report.oracle = Some(OracleUse {
        source: references.source(),
        command: references.describe(),
        judged: references.asked(),
        unreliable: references.unreliable(),
        error,
        tolerance: references.tolerance(),
        mpfr: references.mpfr_build(),
    });
}

/// Judges the input each finding shows (its minimised one with `minimized`) against the
/// oracle. Input-borne findings are not judged (they are never bugs).
fn attach_references(report: &mut Report, judge: &Judge<'_>, jobs: usize, minimized: bool) {
    let refs = parallel::map(
        &report.findings,
        jobs,
        |f| {
            if f.input_borne {
                return (None, None);
            }
            let Some(references) = judge.references else {
                return (None, None);
            };
            let (bytes, name) = match (&f.minimized, minimized) {
                (Some(m), true) => match std::fs::read(&m.path) {
                    Ok(bytes) => (bytes, m.path.display().to_string()),
                    Err(_) => return (None, None),
                },
                (None, true) => return (f.reference.clone(), f.not_judged.clone()),
                (_, false) => (f.input_bytes.clone(), f.input.rel.clone()),
            };
            let reference = judge.reference(&f.key, &bytes, &name);
            let not_judged = why_not_judged(f, &reference, references, &bytes);
            (reference, not_judged)
        },
        |_| {},
    );
    for (f, (reference, not_judged)) in report.findings.iter_mut().zip(refs) {
        f.reference = reference;
        f.not_judged = not_judged;
    }
}

/// Why an escape's root on `bytes` got no reference from `references` (`None`: it got one, or
/// it is no escape's root).
fn why_not_judged(f: &Finding, reference: &Option<Reference>, references: &References, bytes: &[u8]) -> Option<String> {
    let escape_root = f.consequence == Some(Consequence::Escapes) && f.escape_root.as_ref() == Some(&f.key);
    if reference.is_some() || !escape_root {
        return None;
    }
    Some(
        references
            .why_unjudged(bytes)
            .unwrap_or_else(|| match references.source() {
                Source::Oracle => "the oracle gave no reference for its input".to_string(),
                Source::Shadow | Source::Mpfr | Source::Domain => {
                    "the shadow build gave no reference for its input".to_string()
                }
            }),
    )
}

/// Minimises one finding's input, keeping what makes it matter ([`Keep`]), and writes it to
/// `dir/<finding id>`.
fn minimize_finding(
    f: &Finding,
    judge: &Judge<'_>,
    signature: Option<&Signature>,
    dir: &Path,
) -> Result<Minimized, String> {
    let Some(sig) = signature else {
        return Err("the target declares no NUMFUZZ_SIGNATURE, so its input has no fields to minimise".into());
    };
    let keep = Keep::of(f);
    let holds = |bytes: &[u8]| judge.keeps(keep, &f.key, bytes);
    let Some(values) = inputs::minimize::minimize_input(sig, &f.input_bytes, holds) else {
        return Err(match keep {
            Keep::Raises => "the input re-encoded by the signature no longer raises it".into(),
            _ => "the input re-encoded by the signature no longer does what makes it matter".into(),
        });
    };
    let bytes = sig.encode(&values).map_err(|e| e.to_string())?;
    let path = dir.join(&f.id);
    std::fs::write(&path, &bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let replay = judge
        .replayer
        .run(&path)
        .map_err(|e| format!("cannot replay {}: {e}", path.display()))?;
    let expression = findings::group::example_exception(&replay, &f.key)
        .map(|e| e.expression())
        .ok_or_else(|| format!("{} no longer raises it on replay", path.display()))?;
    Ok(Minimized {
        path,
        fields: view_fields(Some(sig), &bytes),
        expression,
        results: replay.results,
    })
}
