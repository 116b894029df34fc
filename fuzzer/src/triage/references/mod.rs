//! Where the true value of a declared result comes from: the user's oracle (`--oracle`), or,
//! without one, the target's shadow build (`TARGET.shadow`, built with
//! `NUMFUZZ_CC_SHADOW=1 numfuzz-cc`), which computes every float and double again in x87
//! extended precision.
//!
//! The shadow answers one question, for the results that came out Inf or NaN: is the true
//! result representable in the format? A shadow that is finite and in range says the format
//! made the result non-finite (`wrong`, reference = the shadow); one beyond the range says the
//! result is a true overflow or underflow (`unreported-range`, unless the result is a NaN or an
//! infinity that is no rounding of it: `wrong`, see `oracle::verdict`); a NaN shadow, that the wider
//! program has no value either (`undefined`). Finite results are not judged by the shadow
//! (its last digits are not a reference for an accurate library), nor are results whose
//! shadow the run marked unreliable.
//!
//! x87 has a 15-bit exponent and a 64-bit significand. Where that is not enough, the MPFR
//! shadow build (`TARGET.mpfr`, `NUMFUZZ_CC_SHADOW=mpfr`) is the next rung of a ladder: it is
//! replayed, at 128 and 512 bits, only for the results the x87 shadow cannot decide (unreliable,
//! provisional, or saying `range` or `undefined`), and its answer replaces x87's when it is the
//! same at both precisions; when it is not, the result is left unjudged, with MPFR's reason.
//! Where a branch on a value the format lost went the other way in MPFR too, the shadows of the
//! program's own path are not the exact program's; the last rung replays the MPFR build steered
//! by its shadows (comparisons and conversions to integers take the exact values' outcomes) and
//! judges from the exact value of the exact values' own path, on the same terms.
//!
//! Beside it: `oracle` speaks the oracle's protocol and gives the verdicts, `neighbours` reads
//! the shadow at the inputs beside one where its value there says nothing, and
//! `shadow_agreement` measures the shadow against the oracle.

pub mod neighbours;
pub mod oracle;
pub mod shadow_agreement;

use crate::replay::{Replay, ReplayEnding, Replayer};
use neighbours::scientific;
use numfuzz_abi::op::FloatType;
use numfuzz_abi::report::ResultReport;
use numfuzz_abi::shadow::{is_provisional, mpfr, LOST_BRANCH_REASON, STEERED_NOT_A_NUMBER_REASON};
use numfuzz_abi::signature::Signature;
use numfuzz_abi::value::Value;
use oracle::{Judgement, Oracle, Request, RequestResult, ResultVerdict};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// Which reference judged a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Oracle,
    /// The x87 shadow build.
    Shadow,
    /// The MPFR shadow build, where the x87 one could not tell.
    Mpfr,
    /// The harness's declaration that the function is defined inside its declared domains
    /// (`NUMFUZZ_DEFINED_IN_DOMAIN`): a NaN there is wrong whatever the shadows say.
    Domain,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Oracle => "oracle",
            Source::Shadow => "shadow",
            Source::Mpfr => "mpfr",
            Source::Domain => "domain",
        }
    }
}

/// The decimal an oracle reads for a field (`inf`, `-inf`, `nan` in lower case).
fn field_decimal(v: &Value) -> String {
    let s = v.to_string();
    match s.to_ascii_lowercase().as_str() {
        "nan" | "-nan" => "nan".into(),
        "inf" | "-inf" => s.to_ascii_lowercase(),
        _ => s,
    }
}

enum Backend {
    Oracle {
        command: String,
        oracle: Mutex<Option<Oracle>>,
        error: Mutex<Option<String>>,
    },
    Shadow {
        replayer: Replayer,
        /// The MPFR shadow build, the ladder's second rung.
        mpfr: Option<Replayer>,
        /// Inputs whose shadows the run marked unreliable.
        unreliable: Mutex<usize>,
    },
}

/// A reference and everything needed to ask it, with its answers by input.
pub struct References {
    backend: Backend,
    function: String,
    tolerance: f64,
    /// Answers by input bytes (`None`: no reference known).
    answers: Mutex<HashMap<Vec<u8>, Option<ResultVerdict>>>,
    /// Why a non-finite primary result of an input got no reference, by input bytes.
    unjudged: Mutex<HashMap<Vec<u8>, String>>,
    asked: Mutex<usize>,
    /// The function is declared defined inside its declared domains (shadow references only:
    /// an oracle knows where it is defined).
    defined_in_domain: bool,
}

/// The reference of a NaN the harness declares wrong (`NUMFUZZ_DEFINED_IN_DOMAIN`).
const DEFINED_IN_DOMAIN_REFERENCE: &str = "a number (declared defined in its domains)";

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl References {
    fn new(backend: Backend, function: &str, tolerance: f64) -> References {
        References {
            backend,
            function: function.to_string(),
            tolerance,
            answers: Mutex::new(HashMap::new()),
            unjudged: Mutex::new(HashMap::new()),
            asked: Mutex::new(0),
            defined_in_domain: false,
        }
    }

    /// Shadow references that call a NaN inside the declared domains wrong (the target's
    /// `NUMFUZZ_DEFINED_IN_DOMAIN`).
    pub fn defined_in_domain(mut self, defined: bool) -> References {
        self.defined_in_domain = defined && matches!(self.backend, Backend::Shadow { .. });
        self
    }

    /// The oracle `command`, started now (a failure to start is kept as its error).
    pub fn oracle(command: &str, function: &str, tolerance: f64, timeout: Duration) -> References {
        let (oracle, error) = match Oracle::start_with_timeout(command, timeout) {
            Ok(o) => (Some(o), None),
            Err(e) => (None, Some(e.to_string())),
        };
        let backend = Backend::Oracle {
            command: command.to_string(),
            oracle: Mutex::new(oracle),
            error: Mutex::new(error),
        };
        References::new(backend, function, tolerance)
    }

    /// The shadow build `replayer` runs, with the MPFR shadow build `mpfr` runs above it.
    pub fn shadow(replayer: Replayer, mpfr: Option<Replayer>, function: &str, tolerance: f64) -> References {
        let backend = Backend::Shadow {
            replayer,
            mpfr,
            unreliable: Mutex::new(0),
        };
        References::new(backend, function, tolerance)
    }

    pub fn source(&self) -> Source {
        match self.backend {
            Backend::Oracle { .. } => Source::Oracle,
            Backend::Shadow { .. } => Source::Shadow,
        }
    }

    /// What judged `judged`, one of this backend's verdicts: the declared domains, the MPFR
    /// rung, or the backend itself.
    pub fn source_of(&self, judged: &ResultVerdict) -> Source {
        if judged.by_domain {
            Source::Domain
        } else if judged.by_mpfr {
            Source::Mpfr
        } else {
            self.source()
        }
    }

    /// The oracle's command line, or the shadow build's path.
    pub fn describe(&self) -> String {
        match &self.backend {
            Backend::Oracle { command, .. } => command.clone(),
            Backend::Shadow { replayer, .. } => replayer.target.display().to_string(),
        }
    }

    /// Why the oracle was given up on, if it was.
    pub fn error(&self) -> Option<String> {
        match &self.backend {
            Backend::Oracle { error, .. } => lock(error).clone(),
            Backend::Shadow { .. } => None,
        }
    }

    /// Inputs asked about.
    pub fn asked(&self) -> usize {
        *lock(&self.asked)
    }

    /// The MPFR shadow build's path, when the ladder has one.
    pub fn mpfr_build(&self) -> Option<String> {
        match &self.backend {
            Backend::Shadow { mpfr: Some(m), .. } => Some(m.target.display().to_string()),
            _ => None,
        }
    }

    /// Why no reference judged `bytes`' non-finite result (asked before with [`Self::verdict`]).
    pub fn why_unjudged(&self, bytes: &[u8]) -> Option<String> {
        lock(&self.unjudged).get(bytes).cloned()
    }

    /// Shadow: inputs whose shadows were unreliable.
    pub fn unreliable(&self) -> usize {
        match &self.backend {
            Backend::Shadow { unreliable, .. } => *lock(unreliable),
            Backend::Oracle { .. } => 0,
        }
    }

    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }

    /// The worst verdict on the primary results of `replay` (of `bytes`).
    pub fn verdict(&self, signature: Option<&Signature>, bytes: &[u8], replay: &Replay) -> Option<ResultVerdict> {
        if let Some(known) = lock(&self.answers).get(bytes) {
            return known.clone();
        }
        let handled = replay.ending == (ReplayEnding::Completed { handled: true });
        if !matches!(replay.ending, ReplayEnding::Completed { .. }) || !replay.results.iter().any(|r| r.index.is_some())
        {
            return None;
        }
        *lock(&self.asked) += 1;
        // Result indices whose reference is the shadow's limit beside the input, or MPFR's.
        let mut beside: Vec<u32> = Vec::new();
        let mut by_mpfr: Vec<u32> = Vec::new();
        let judgement = match &self.backend {
            Backend::Oracle { oracle, error, .. } => self.ask_oracle(oracle, error, signature, bytes, replay)?,
            Backend::Shadow {
                replayer,
                mpfr,
                unreliable,
            } => {
                let mut shadow = replayer.run_bytes(bytes).ok()?;
                let narrow = replayer
                    .run_bytes_with_env(bytes, &[(numfuzz_abi::env::SHADOW_PRECISION, "53".into())])
                    .ok()?;
                let moved_in_x87 = mark_unstable(&mut shadow.results, &narrow.results, X87_PRECISIONS);
                let (mut judgement, mut provisional) = shadow_judgement(&replay.results, &shadow.results);
                let mut why = unjudged_reasons(&replay.results, &shadow.results, "x87");
                if let Some(mpfr) = mpfr {
                    let ladder = Ladder {
                        returned: &replay.results,
                        judgement: &mut judgement,
                        provisional: &mut provisional,
                        why: &mut why,
                        moved_in_x87: &moved_in_x87,
                    };
                    by_mpfr = ladder.climb(mpfr, bytes);
                }
                let marked = shadow
                    .results
                    .iter()
                    .any(|r| r.shadow.as_ref().is_some_and(|s| s.unreliable.is_some()));
                let mut noisy = false;
                if let Some(s) = signature {
                    let dropped;
                    (beside, dropped) = check_beside(replayer, s, bytes, &replay.results, &provisional, &mut judgement);
                    noisy = !dropped.is_empty();
                    for k in dropped {
                        why[k] = Some(BEYOND_RANGE_NOT_STEADY.into());
                    }
                }
                // A NaN from an infinity judges only through its limit beside the input.
                for (r, reference) in replay.results.iter().zip(judgement.references.iter_mut()) {
                    if r.index
                        .is_some_and(|i| provisional.contains(&i) && !beside.contains(&i))
                    {
                        *reference = None;
                        noisy = true;
                    }
                }
                if judgement.references.iter().all(Option::is_none) && (marked || noisy) {
                    *lock(unreliable) += 1;
                }
                let first_reason = why
                    .iter()
                    .zip(&judgement.references)
                    .find_map(|(w, r)| r.is_none().then_some(w.as_ref()).flatten());
                if let Some(reason) = first_reason {
                    lock(&self.unjudged).insert(bytes.to_vec(), reason.clone());
                }
                judgement
            }
        };
        let mut verdict = oracle::judge(&replay.results, &judgement, handled, self.tolerance);
        if let Some(v) = verdict.as_mut() {
            v.beside = beside.contains(&v.index);
            v.by_mpfr = !v.beside && by_mpfr.contains(&v.index);
        }
        if self.defined_in_domain && !handled && signature.is_some_and(|s| s.in_domain(bytes)) {
            if let Some(v) = nan_in_domain(&replay.results, verdict.as_ref(), self.tolerance) {
                lock(&self.unjudged).remove(bytes);
                verdict = Some(v);
            }
        }
        lock(&self.answers).insert(bytes.to_vec(), verdict.clone());
        verdict
    }

    fn ask_oracle(
        &self,
        oracle: &Mutex<Option<Oracle>>,
        error: &Mutex<Option<String>>,
        signature: Option<&Signature>,
        bytes: &[u8],
        replay: &Replay,
    ) -> Option<Judgement> {
        let request = Request {
            function: self.function.clone(),
            inputs: signature
                .map(|s| s.decode(bytes).iter().map(field_decimal).collect())
                .unwrap_or_default(),
            results: replay
                .results
                .iter()
                .map(|r| RequestResult {
                    index: r.index,
                    name: r.name.clone(),
                    value: r.value.clone(),
                })
                .collect(),
        };
        let mut guard = lock(oracle);
        match guard.as_mut()?.ask(&request) {
            Ok(j) => Some(j),
            Err(e) => {
                *guard = None;
                *lock(error) = Some(e.to_string());
                None
            }
        }
    }
}

/// Why MPFR's value beyond the range does not judge where x87's shadow moved with its precision.
const ILL_CONDITIONED_RANGE: &str = "MPFR shadow: beyond the format's range, but on a path whose x87 shadow \
moved with its own precision: the exact value of an ill-conditioned formula, not necessarily the function's";

/// Why a shadow beyond the format's range was dropped by [`check_beside`].
const BEYOND_RANGE_NOT_STEADY: &str =
    "the shadow is beyond the format's range here but moves unevenly at the inputs beside it: rounding noise";

/// How [`mark_unstable`] names the two precisions of the x87 shadow and of the MPFR one.
pub const X87_PRECISIONS: (&str, &str) = ("a 64-bit significand", "53 bits");
pub const MPFR_PRECISIONS: (&str, &str) = ("512 bits (MPFR)", "128 bits");

/// A steered run's exact zero is a constant of the exact values' path (an underflow branch's
/// 0.0), which judges nothing of an infinity; but against a NaN the program returned (on its own
/// path: the steered run returns what the exact values chose) it judges all the same, since NaN
/// is no rounding of whatever value the constant stands for (GSL's `bessel_Inu`).
fn zeros_against_nan(returned: &[ResultReport], steered: &mut [ResultReport]) {
    for r in steered.iter_mut() {
        let program_nan = (returned.iter())
            .find(|p| p.index.is_some() && p.index == r.index)
            .is_some_and(|p| returned_is(&p.value, f64::is_nan));
        if let Some(s) = r.shadow.as_mut().filter(|_| program_nan) {
            if s.unreliable.as_deref() == Some(STEERED_NOT_A_NUMBER_REASON) && s.value.parse::<f64>() == Ok(0.0) {
                s.unreliable = None;
            }
        }
    }
}

/// Inside the declared domains of a function declared defined there: the first NaN primary
/// result is wrong, unless the input is judged wrong already.
fn nan_in_domain(returned: &[ResultReport], judged: Option<&ResultVerdict>, tolerance: f64) -> Option<ResultVerdict> {
    if judged.is_some_and(|v| v.verdict == oracle::Verdict::Wrong) {
        return None;
    }
    let (index, r) = returned
        .iter()
        .find_map(|r| Some((r.index?, r)).filter(|(_, r)| returned_is(&r.value, f64::is_nan)))?;
    Some(ResultVerdict {
        index,
        returned: r.value.clone(),
        reference: DEFINED_IN_DOMAIN_REFERENCE.into(),
        verdict: oracle::Verdict::Wrong,
        tolerance,
        beside: false,
        by_mpfr: false,
        by_domain: true,
    })
}

/// Whether a returned decimal is a number (`NaN` and `inf` included) for which `what` holds.
fn returned_is(value: &str, what: fn(f64) -> bool) -> bool {
    value.trim().parse::<f64>().is_ok_and(what)
}

/// Whether a returned decimal is Inf or NaN.
fn non_finite(value: &str) -> bool {
    returned_is(value, |v| !v.is_finite())
}

/// Why each primary non-finite result of `returned` has no reference in `shadowed` (a run of
/// the shadow build called `build`), aligned with `returned`: `None` where it has one.
fn unjudged_reasons(returned: &[ResultReport], shadowed: &[ResultReport], build: &str) -> Vec<Option<String>> {
    returned
        .iter()
        .map(|r| {
            if r.index.is_none() || !non_finite(&r.value) {
                return None;
            }
            let twin = shadowed.iter().find(|s| s.index == r.index);
            match twin.and_then(|t| t.shadow.as_ref()) {
                None => Some(format!("the {build} shadow build declared no such result")),
                Some(s) => s.unreliable.as_ref().map(|why| format!("{build} shadow: {why}")),
            }
        })
        .collect()
}

/// How the MPFR build runs an input: its shadows along the program's own path, or the program
/// steered by its shadows (comparisons and conversions to integers take the shadows' outcomes:
/// the exact values' own path, where a branch on a value the format lost went the other way).
#[derive(Clone, Copy)]
enum MpfrRun {
    OwnPath,
    Steered,
}

/// The ladder's second rung on one input: the MPFR shadow build asked about the results the x87
/// shadow left undecided, the judgement and its reasons updated in place.
struct Ladder<'a> {
    returned: &'a [ResultReport],
    judgement: &'a mut Judgement,
    /// Indices whose x87 reference is a provisional NaN (see [`shadow_judgement`]).
    provisional: &'a mut Vec<u32>,
    why: &'a mut Vec<Option<String>>,
    /// Indices whose x87 shadow moved between its two precisions: an ill-conditioned path.
    moved_in_x87: &'a [u32],
}

impl Ladder<'_> {
    /// Positions of the primary non-finite results x87 does not call `wrong` with a reliable,
    /// finite reference: unreliable, provisional, `range` or `undefined`.
    fn undecided(&self) -> Vec<usize> {
        let decided = |r: &ResultReport, reference: &Option<String>| {
            reference.as_deref().is_some_and(|v| {
                r.index.is_some_and(|i| !self.provisional.contains(&i))
                    && oracle::beyond_format(r.ty, v) == Some(false)
                    && oracle::verdict(r.ty, &r.value, v, false, 0.0) == Some(oracle::Verdict::Wrong)
            })
        };
        (self.returned.iter().zip(&self.judgement.references))
            .enumerate()
            .filter(|(_, (r, reference))| r.index.is_some() && non_finite(&r.value) && !decided(r, reference))
            .map(|(k, _)| k)
            .collect()
    }

    /// Replays `mpfr` at both precisions when something is undecided, then, for what a branch
    /// on a lost value left undecided, again steered by its shadows; returns the indices of the
    /// results its references now judge.
    fn climb(mut self, mpfr: &Replayer, bytes: &[u8]) -> Vec<u32> {
        let undecided = self.undecided();
        if undecided.is_empty() {
            return Vec::new();
        }
        let mut judged = self.rung(mpfr, bytes, &undecided, MpfrRun::OwnPath);
        let lost_branch: Vec<usize> = (undecided.into_iter())
            .filter(|&k| self.judgement.references[k].is_none())
            .filter(|&k| self.why[k].as_deref().is_some_and(|w| w.contains(LOST_BRANCH_REASON)))
            .collect();
        if !lost_branch.is_empty() {
            judged.extend(self.rung(mpfr, bytes, &lost_branch, MpfrRun::Steered));
        }
        judged
    }

    /// One rung of MPFR runs at both precisions for the results at `undecided`.
    fn rung(&mut self, mpfr: &Replayer, bytes: &[u8], undecided: &[usize], how: MpfrRun) -> Vec<u32> {
        let steer = matches!(how, MpfrRun::Steered);
        let run = |bits: u32| {
            let mut env = vec![(numfuzz_abi::env::SHADOW_PRECISION, bits.to_string())];
            if steer {
                env.push((numfuzz_abi::env::SHADOW_STEER, "1".to_string()));
            }
            mpfr.run_bytes_with_env(bytes, &env)
                .ok()
                .filter(|r| matches!(r.ending, ReplayEnding::Completed { .. }))
        };
        let build = if steer { "MPFR (steered)" } else { "MPFR" };
        let runs = (run(mpfr::CHECK_PRECISION), run(mpfr::DEFAULT_PRECISION));
        let (Some(mut wide), Some(mut narrow)) = runs else {
            let failed = format!("the {build} shadow build did not complete this input");
            self.settle(undecided, None, &vec![Some(failed); self.returned.len()]);
            return Vec::new();
        };
        if steer {
            zeros_against_nan(self.returned, &mut wide.results);
            zeros_against_nan(self.returned, &mut narrow.results);
        }
        let _ = mark_unstable(&mut wide.results, &narrow.results, MPFR_PRECISIONS);
        let (answer, provisional) = shadow_judgement(self.returned, &wide.results);
        let reasons = unjudged_reasons(self.returned, &wide.results, build);
        // A provisional NaN in MPFR too is no answer: x87's limit beside the input may still be.
        let references: Vec<Option<String>> = (answer.references.into_iter().zip(self.returned))
            .map(|(a, r)| a.filter(|_| r.index.is_none_or(|i| !provisional.contains(&i))))
            .collect();
        self.settle(undecided, Some(&references), &reasons)
    }

    /// Takes MPFR's reference for each undecided result that has one; one without keeps x87's
    /// provisional NaN (judged beside the input, or not at all) and otherwise loses x87's answer,
    /// which only MPFR could have confirmed: a `range` or `undefined` stands only where MPFR says
    /// it at both precisions. Where x87's two precisions disagreed, the path is ill-conditioned
    /// there, and a value beyond the range is its exact value, not the function's (GSL's sin
    /// reduces 1.8e308 by three parts of pi/4 and sums a Chebyshev series of the 1e284 left:
    /// 7.6e4074 at every precision, where sin is 0.005): no `range` from it. A NaN returned is
    /// judged all the same: it is no rounding of that value nor of any other number (GSL's
    /// `bessel_Jnu` and `Ynu` at 1e308: NaN, their true values below 1e-154).
    fn settle(
        &mut self,
        undecided: &[usize],
        references: Option<&[Option<String>]>,
        reasons: &[Option<String>],
    ) -> Vec<u32> {
        let mut judged = Vec::new();
        for &k in undecided {
            let Some(index) = self.returned[k].index else { continue };
            let returned = &self.returned[k];
            let ill_conditioned_range = |reference: &String| {
                self.moved_in_x87.contains(&index)
                    && oracle::beyond_format(returned.ty, reference) == Some(true)
                    && returned_is(&returned.value, f64::is_infinite)
            };
            match references.and_then(|r| r[k].clone()) {
                Some(reference) if ill_conditioned_range(&reference) => {
                    self.judgement.references[k] = None;
                    self.why[k] = Some(format!("{ILL_CONDITIONED_RANGE} ({reference})"));
                }
                Some(reference) => {
                    self.judgement.references[k] = Some(reference);
                    self.provisional.retain(|&i| i != index);
                    self.why[k] = None;
                    judged.push(index);
                }
                None => {
                    if !self.provisional.contains(&index) {
                        self.judgement.references[k] = None;
                    }
                    if let Some(why) = reasons[k].clone() {
                        self.why[k] = Some(why);
                    }
                }
            }
        }
        judged
    }
}

/// Relative difference under which two shadows of one result, run with a 64-bit and a 53-bit
/// significand, are the same value: a stable computation differs in its last digits
/// (condition number times 1e-16); rounding noise, as the cancellation of two values the
/// format could not hold, differs in every digit, or by orders of magnitude.
const STABLE: f64 = 1e-3;

/// Relative difference under which two shadows that are both beyond the format's range give
/// the same answer to the question a shadow answers for an Inf or NaN result (is the true
/// value representable?), though their digits differ by more than [`STABLE`]: musl's tgamma
/// at 184 shadows as 1.209e336 with a 64-bit significand and 1.211e336 with 53 bits (its
/// `exp` and `pow` build their scale from integer words), 28 orders of magnitude beyond the
/// range either way. Noise differs between the two by about 2^11.
const RANGE_STABLE: f64 = 0.1;

/// Are two shadows of one result the same value (see [`STABLE`])?
fn same_value(a: &str, b: &str) -> bool {
    close(a, b, STABLE)
}

/// Are two shadows of one result, of type `ty`, both beyond its range on one side and close
/// (see [`RANGE_STABLE`])?
fn same_range_answer(ty: FloatType, a: &str, b: &str) -> bool {
    let beyond = |t: &str| {
        let finite = !t.to_ascii_lowercase().contains(['i', 'n']);
        finite && oracle::beyond_format(ty, t) == Some(true)
    };
    beyond(a) && beyond(b) && close(a, b, RANGE_STABLE)
}

/// Are two decimals within `rel` of each other (infinities and NaNs only equal to themselves)?
fn close(a: &str, b: &str, rel: f64) -> bool {
    let special = |t: &str| {
        let t = t.trim().to_ascii_lowercase();
        (t.contains("inf") || t.contains("nan")).then_some(t)
    };
    match (special(a), special(b)) {
        (None, None) => {}
        (x, y) => return x == y,
    }
    match (scientific(a), scientific(b)) {
        (None, None) => match (far_exponent(a), far_exponent(b)) {
            (Some(x), Some(y)) => x.close_to(&y, rel),
            (x, y) => x.is_none() && y.is_none(),
        },
        (Some((ma, ea)), Some((mb, eb))) if (ea - eb).abs() <= 1 => {
            let e = ea.max(eb);
            let (x, y) = (ma * 10f64.powi((ea - e) as i32), mb * 10f64.powi((eb - e) as i32));
            (x - y).abs() <= rel * x.abs().max(y.abs())
        }
        _ => false,
    }
}

/// The decimal exponent of a value beyond every format, one whose exponent no `i64` holds (the
/// MPFR build prints a value beyond its own exponents as `m·10^e` from the log of its magnitude:
/// e^(-2.5e30) is `4.1116e-1101067321320929692930183543656`, and e^(e^12000) has 5212 digits of
/// exponent). Its last digits are as noisy as the magnitude's precision leaves them, so two
/// such values are compared by their exponents' leading digits: rounding noise (a cancellation
/// before an exp) changes an exponent's length or its first digits between two precisions.
#[derive(Debug, PartialEq)]
struct FarExponent {
    negative: bool,
    negative_exponent: bool,
    digits: usize,
    /// The exponent's first 17 digits, as a number.
    leading: f64,
}

impl FarExponent {
    fn close_to(&self, other: &FarExponent, rel: f64) -> bool {
        (self.negative, self.negative_exponent, self.digits) == (other.negative, other.negative_exponent, other.digits)
            && (self.leading - other.leading).abs() <= rel * self.leading.max(other.leading)
    }
}

fn far_exponent(text: &str) -> Option<FarExponent> {
    let lower = text.trim().to_ascii_lowercase();
    let (mantissa, exponent) = lower.split_once('e')?;
    let negative = mantissa.starts_with('-');
    let m: f64 = mantissa.parse().ok()?;
    let negative_exponent = exponent.starts_with('-');
    let digits = exponent.trim_start_matches(['-', '+']).trim_start_matches('0');
    let plain = m != 0.0 && m.is_finite() && digits.bytes().all(|c| c.is_ascii_digit());
    if !plain || digits.parse::<i64>().is_ok() {
        return None;
    }
    Some(FarExponent {
        negative,
        negative_exponent,
        digits: digits.len(),
        leading: digits[..digits.len().min(17)].parse().ok()?,
    })
}

/// Marks unreliable each shadow of `wide` (the run at the higher precision) whose twin in
/// `narrow` is a different value or missing; `names` names the two precisions.
/// Returns the indices of the results whose two runs gave different values.
pub fn mark_unstable(wide: &mut [ResultReport], narrow: &[ResultReport], names: (&str, &str)) -> Vec<u32> {
    let mut moved = Vec::new();
    for r in wide.iter_mut() {
        let twin = narrow
            .iter()
            .find(|n| n.index == r.index && n.name == r.name)
            .and_then(|n| n.shadow.as_ref());
        let Some(shadow) = r.shadow.as_mut().filter(|s| s.unreliable.is_none()) else {
            continue;
        };
        match twin {
            Some(t) if same_value(&shadow.value, &t.value) || same_range_answer(r.ty, &shadow.value, &t.value) => {}
            Some(t) => {
                shadow.unreliable = Some(format!(
                    "the shadow changes with its own precision ({} with {}, {} with {}): rounding noise",
                    shadow.value, names.0, t.value, names.1
                ));
                moved.extend(r.index);
            }
            None => shadow.unreliable = Some(format!("the run with {} declared no such result", names.1)),
        }
    }
    moved
}

/// Checks the shadow references of `judgement` beside the input (see [`neighbours`]): a non-finite
/// one becomes the shadow's limit there when it has one; one beyond the format's range that
/// is no smooth function of the input there is rounding noise and is dropped. `provisional`
/// results (a NaN from an infinity) look for their limit too. Returns the indices of the
/// results given a limit, and the positions (in `returned`) of the references dropped.
fn check_beside(
    replayer: &Replayer,
    signature: &Signature,
    bytes: &[u8],
    returned: &[ResultReport],
    provisional: &[u32],
    judgement: &mut Judgement,
) -> (Vec<u32>, Vec<usize>) {
    let non_finite = |v: &str| v.contains("inf") || v.contains("nan");
    // A finite shadow beyond the range is tested for smoothness only beside an input whose
    // neighbours are relative ones, and only against an infinity returned: whether it is the
    // rounding of a true overflow hangs on it, where a NaN is no rounding of any number. A
    // non-finite one always looks for its limit.
    let smoothness = neighbours::moves_relatively(signature, bytes);
    let needs = |r: &ResultReport, reference: &Option<String>| {
        let smooth_range = |v: &str| {
            smoothness && returned_is(&r.value, f64::is_infinite) && oracle::beyond_format(r.ty, v) == Some(true)
        };
        r.index.is_some_and(|i| provisional.contains(&i))
            || reference.as_deref().is_some_and(|v| non_finite(v) || smooth_range(v))
    };
    if !returned.iter().zip(&judgement.references).any(|(r, v)| needs(r, v)) {
        return (Vec::new(), Vec::new());
    }
    // Per side, the far and the near neighbour's shadow run.
    let runs: Vec<(Vec<ResultReport>, Vec<ResultReport>)> = [1.0, -1.0]
        .iter()
        .filter_map(|&side| {
            let run = |step| {
                let at = neighbours::neighbour(signature, bytes, step, side)?;
                replayer.run_bytes(&at).ok().map(|r| r.results)
            };
            Some((run(neighbours::Step::Far)?, run(neighbours::Step::Near)?))
        })
        .collect();
    let shadow_of = |results: &[ResultReport], index: u32| {
        let s = results.iter().find(|r| r.index == Some(index))?.shadow.as_ref()?;
        s.unreliable.is_none().then(|| s.value.to_ascii_lowercase())
    };
    let (mut replaced, mut dropped) = (Vec::new(), Vec::new());
    for (k, (r, reference)) in returned.iter().zip(judgement.references.iter_mut()).enumerate() {
        let Some(index) = r.index.filter(|_| needs(r, reference)) else {
            continue;
        };
        let sides: Option<Vec<(String, String)>> = runs
            .iter()
            .map(|(far, near)| Some((shadow_of(far, index)?, shadow_of(near, index)?)))
            .collect();
        if reference.as_deref().is_some_and(non_finite) {
            // One side only for a NaN at an exact zero (a domain's edge); an infinity needs both
            // (`pow(-0.0, -1e-45)` is +Inf, its right side tends to 1 too slowly to tell).
            let one_sided =
                reference.as_deref().is_some_and(|v| v.contains("nan")) && neighbours::at_zero(signature, bytes);
            if let Some(value) = sides.and_then(|s| neighbours::settled(&s, one_sided)) {
                *reference = Some(value);
                replaced.push(index);
            }
        } else if sides.and_then(|s| neighbours::steady(&s)) == Some(false) {
            *reference = None;
            dropped.push(k);
        }
    }
    (replaced, dropped)
}

/// The shadow build's references for the results the target declared: a primary result that
/// came out Inf or NaN gets its shadow (when the shadow run declared the same result and its
/// shadow is reliable); every other result gets none. A shadow that is a NaN a step of the
/// algorithm made (born from an infinity, or from a constant the program stored) is a
/// provisional `nan`: its index is returned too, and it judges only through a
/// limit beside the input.
pub fn shadow_judgement(returned: &[ResultReport], shadowed: &[ResultReport]) -> (Judgement, Vec<u32>) {
    let mut provisional = Vec::new();
    let references = returned
        .iter()
        .map(|r| {
            let non_finite = returned_is(&r.value, |v| !v.is_finite());
            if r.index.is_none() || !non_finite {
                return None;
            }
            let twin = shadowed.iter().find(|s| s.index == r.index)?;
            let shadow = twin.shadow.as_ref()?;
            match shadow.unreliable.as_deref() {
                None => Some(shadow.value.to_ascii_lowercase()),
                Some(why) if is_provisional(why) => {
                    provisional.extend(r.index);
                    Some("nan".into())
                }
                Some(_) => None,
            }
        })
        .collect();
    let judgement = Judgement {
        references,
        tolerance: None,
    };
    (judgement, provisional)
}

#[cfg(test)]
mod tests {
    use super::*;
    use numfuzz_abi::op::FloatType;
    use numfuzz_abi::report::ShadowValue;
    use numfuzz_abi::shadow::{NAN_FROM_CONSTANT_REASON, NAN_FROM_INFINITY_REASON};
    use numfuzz_abi::value::Float;

    #[test]
    fn oracle_decimals() {
        let f = |x: f64| field_decimal(&Value::Float(Float::from_f64(x)));
        assert_eq!(f(f64::NAN), "nan");
        assert_eq!(f(f64::NEG_INFINITY), "-inf");
        assert_eq!(f(709.6), "709.6");
        assert_eq!(f(5e-324), "5e-324");
    }

    fn result(index: Option<u32>, value: &str, shadow: Option<(&str, bool)>) -> ResultReport {
        ResultReport {
            index,
            name: index.is_none().then(|| "err".to_string()),
            ty: FloatType::F64,
            value: value.into(),
            hex: String::new(),
            labels: None,
            shadow: shadow.map(|(v, reliable)| ShadowValue {
                value: v.into(),
                unreliable: (!reliable).then(|| "a branch".to_string()),
            }),
        }
    }

    #[test]
    fn the_shadow_judges_only_reliable_non_finite_primary_results() {
        let returned = [
            result(Some(0), "inf", None),
            result(Some(1), "2.5", None),
            result(None, "inf", None),
            result(Some(2), "NaN", None),
        ];
        let shadowed = [
            result(Some(0), "inf", Some(("7.26e302", true))),
            result(Some(1), "2.5", Some(("2.5000000001", true))),
            result(None, "inf", Some(("1.0", true))),
            result(Some(2), "NaN", Some(("NaN", false))),
        ];
        let (j, provisional) = shadow_judgement(&returned, &shadowed);
        assert_eq!(j.references, vec![Some("7.26e302".to_string()), None, None, None]);
        assert!(provisional.is_empty());
        let v = oracle::judge(&returned, &j, false, oracle::DEFAULT_TOLERANCE).unwrap();
        assert_eq!((v.index, v.verdict), (0, oracle::Verdict::Wrong));
    }

    #[test]
    fn a_nan_from_an_infinity_is_a_provisional_reference() {
        let returned = [result(Some(0), "NaN", None)];
        let mut shadowed = [result(Some(0), "NaN", Some(("NaN", false)))];
        for reason in [NAN_FROM_INFINITY_REASON, NAN_FROM_CONSTANT_REASON] {
            shadowed[0].shadow.as_mut().unwrap().unreliable = Some(reason.into());
            let (j, provisional) = shadow_judgement(&returned, &shadowed);
            assert_eq!(j.references, vec![Some("nan".to_string())]);
            assert_eq!(provisional, vec![0]);
        }
    }

    #[test]
    fn shadows_that_change_with_their_precision_are_unreliable() {
        assert!(same_value("7.26074627267430674e302", "7.2607462726743071e302"));
        assert!(same_value("-800.0", "-8.00000000000001e2"));
        assert!(same_value("inf", "inf") && same_value("NaN", "nan") && same_value("0.0", "-0.0"));
        assert!(!same_value("-4.347160850917251769e3060", "-4.1e3060"));
        assert!(!same_value("1.2e4074", "3.4e4045"));
        assert!(!same_value("inf", "1e400") && !same_value("0.0", "1e-320"));
        // Beyond the range on one side, close enough to agree that it is beyond.
        let f64 = FloatType::F64;
        assert!(same_range_answer(
            f64,
            "1.2089993224776409332e336",
            "1.2110790106247267277e336"
        ));
        assert!(
            same_range_answer(f64, "-3e-330", "-3.1e-330"),
            "both below the subnormals"
        );
        assert!(!same_range_answer(f64, "1.2e4074", "3.4e4045"), "noise");
        assert!(!same_range_answer(f64, "1.2e336", "-1.2e336"), "opposite signs");
        assert!(!same_range_answer(f64, "7.2e302", "7.3e302"), "in range");
        assert!(!same_range_answer(f64, "inf", "inf"), "not finite");
        let mut wide = [
            result(Some(0), "inf", Some(("7.26074627267430674e302", true))),
            result(Some(1), "NaN", Some(("1.2e4074", true))),
        ];
        let narrow = [
            result(Some(0), "inf", Some(("7.2607462726743071e302", true))),
            result(Some(1), "NaN", Some(("-5.5e4045", true))),
        ];
        mark_unstable(&mut wide, &narrow, X87_PRECISIONS);
        assert_eq!(wide[0].shadow.as_ref().unwrap().unreliable, None);
        let mut beyond = [result(Some(0), "inf", Some(("1.2089993224776409332e336", true)))];
        mark_unstable(
            &mut beyond,
            &[result(Some(0), "inf", Some(("1.2110790106247267277e336", true)))],
            X87_PRECISIONS,
        );
        assert_eq!(beyond[0].shadow.as_ref().unwrap().unreliable, None, "tgamma(184)");
        let why = wide[1].shadow.as_ref().unwrap().unreliable.clone().unwrap();
        assert!(why.contains("1.2e4074") && why.contains("53 bits"), "{why}");
    }

    #[test]
    fn values_beyond_mpfrs_exponents_are_the_same_where_their_exponents_lead_alike() {
        // e^(-2.5e30) at 128 and at 512 bits: the exponent known in full at both.
        let (at_128, at_512) = (
            "4.111624e-1101067321320929692930183543656",
            "4.1116242189797978e-1101067321320929692930183543656",
        );
        assert!(same_value(at_128, at_512));
        assert!(same_range_answer(FloatType::F64, at_128, at_512));
        // e^(1.2e300): the exponent's last digits are the magnitude's rounding at each precision.
        let e300 = |tail: &str| format!("1e+{}{tail}", "52115".repeat(60));
        assert!(same_value(&e300("123"), &e300("987")));
        // Rounding noise: exp of a cancellation, 2^(±1e261) at 128 bits and 2^(±1e146) at 512.
        let noise = |digits: usize| format!("1e+{}", "3".repeat(digits));
        assert!(!same_value(&noise(261), &noise(146)));
        assert!(!same_value(
            &format!("1e+{}", "3".repeat(40)),
            &format!("1e+{}", "4".repeat(40))
        ));
        assert!(
            !same_value(at_128, &at_128.replace("e-", "e+")),
            "a zero and an infinity"
        );
        assert!(!same_value(at_128, &format!("-{at_128}")), "opposite signs");
        assert!(!same_value(at_128, "4.1e-1101"), "one within i64's exponents");
    }

    #[test]
    fn shadow_verdicts_tell_true_range_errors_and_undefined_results() {
        let judge = |ret: &str, shadow: &str| {
            let returned = [result(Some(0), ret, None)];
            let (j, _) = shadow_judgement(&returned, &[result(Some(0), ret, Some((shadow, true)))]);
            oracle::judge(&returned, &j, false, oracle::DEFAULT_TOLERANCE).map(|v| v.verdict)
        };
        assert_eq!(
            judge("inf", "2.7263745721125665673e347"),
            Some(oracle::Verdict::UnreportedRange)
        );
        assert_eq!(judge("-inf", "-inf"), Some(oracle::Verdict::UnreportedRange));
        assert_eq!(judge("NaN", "NaN"), Some(oracle::Verdict::Undefined));
        assert_eq!(judge("-inf", "-800.0"), Some(oracle::Verdict::Wrong));
        assert_eq!(judge("0.0", "1e-400"), None, "a finite result is not judged");
    }
}
