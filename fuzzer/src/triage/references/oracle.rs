//! Reference oracles (`numfuzz triage --oracle CMD`): the differential half of triage.
//!
//! CMD runs once, through `sh -c`, as a co-process. For every input to be judged numfuzz
//! writes one JSON line on its stdin and reads one line back:
//!
//! ```text
//! -> {"function": "gsl_sf_exprel_2_e", "inputs": ["709.6"],
//!     "results": [{"index": 0, "name": null, "value": "inf"}, {"index": null, "name": "err", "value": "inf"}]}
//! <- {"results": ["6.1213586926380437e302", null]}
//! ```
//!
//! `inputs` are the input's fields in signature order as decimals (`inf`, `-inf`, `nan`);
//! `results` are the declared results in declaration order with what the library returned
//! (an oracle may read them only where the true value is defined relative to them, such as a
//! returned exponent). The answer has one entry per result: the true value as a decimal
//! string, `"inf"`/`"-inf"`, `"nan"` (undefined there) or `null` (unknown), and optionally
//! `"tolerance"`, a relative tolerance for this input replacing `--tolerance`.
//!
//! Verdicts, per primary result (secondary ones are never judged):
//! - `wrong`: the library did not report an error, the true value is finite and
//!   representable (a normal number or zero), and the library returned Inf or NaN, or a value
//!   whose relative error exceeds the tolerance (for a true zero: a value of normal magnitude);
//! - `unreported-range`: the true value overflows the format (or is infinite) or underflows
//!   it (below the smallest normal), and the library did not report an error;
//! - `right`: otherwise (an undefined true value, a reported error, whose value the library
//!   did not claim, or a close enough result).
//!
//! An oracle that cannot start, dies, stops answering or answers garbage is given up on with
//! a one-line error naming it; triage goes on without references.

use numfuzz_abi::op::FloatType;
use numfuzz_abi::report::ResultReport;
use numfuzz_abi::value::Float;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Default relative tolerance of `wrong`: a result off in its sixth significant digit is
/// wrong; double rounding noise (~1e-16) and the last-digit errors of good special-function
/// code are far below it.
pub const DEFAULT_TOLERANCE: f64 = 1e-6;

#[derive(Debug, thiserror::Error)]
pub enum OracleError {
    #[error("oracle `{cmd}` could not be started: {error}")]
    Start { cmd: String, error: std::io::Error },
    #[error("oracle `{cmd}` exited{status}{stderr}; the report has no reference values")]
    Died {
        cmd: String,
        status: String,
        stderr: String,
    },
    #[error("oracle `{cmd}` gave no answer within {secs} s; the report has no reference values")]
    Hung { cmd: String, secs: u64 },
    #[error("oracle `{cmd}` answered `{line}`, not {{\"results\": [...]}} with {expected} entries; the report has no reference values")]
    Garbage { cmd: String, line: String, expected: usize },
}

/// One declared result as the oracle is told about it.
#[derive(Clone, Debug, Serialize)]
pub struct RequestResult {
    pub index: Option<u32>,
    pub name: Option<String>,
    pub value: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Request {
    pub function: String,
    pub inputs: Vec<String>,
    pub results: Vec<RequestResult>,
}

#[derive(Clone, Debug, Deserialize)]
struct Answer {
    results: Vec<Option<String>>,
    #[serde(default)]
    tolerance: Option<f64>,
}

/// What the oracle said of one input.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    /// One per declared result.
    pub references: Vec<Option<String>>,
    pub tolerance: Option<f64>,
}

/// The running oracle.
pub struct Oracle {
    cmd: String,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr_tail: Arc<Mutex<String>>,
    timeout: Duration,
}

impl Oracle {
    pub fn start_with_timeout(cmd: &str, timeout: Duration) -> Result<Oracle, OracleError> {
        let start = |error| OracleError::Start {
            cmd: cmd.to_string(),
            error,
        };
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(start)?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr = child.stderr.take().expect("piped stderr");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // The last lines the oracle said on stderr, for the error message.
        let stderr_tail = Arc::new(Mutex::new(String::new()));
        let tail = stderr_tail.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
                t.push_str(&String::from_utf8_lossy(&buf[..n]));
                if t.len() > 4000 {
                    let cut = t.len() - 2000;
                    let cut = (cut..t.len()).find(|&i| t.is_char_boundary(i)).unwrap_or(t.len());
                    t.drain(..cut);
                }
            }
        });
        Ok(Oracle {
            cmd: cmd.to_string(),
            child,
            stdin,
            lines,
            stderr_tail,
            timeout,
        })
    }

    fn died(&mut self) -> OracleError {
        // Give its stderr reader a moment to collect the last words.
        std::thread::sleep(Duration::from_millis(50));
        let status = match self.child.try_wait() {
            Ok(Some(s)) => format!(" with {s}"),
            _ => " (closed its output)".to_string(),
        };
        let tail = self.stderr_tail.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let last = tail.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
        OracleError::Died {
            cmd: self.cmd.clone(),
            status,
            stderr: if last.is_empty() {
                String::new()
            } else {
                format!(" ({last})")
            },
        }
    }

    /// Asks about one input.
    pub fn ask(&mut self, request: &Request) -> Result<Judgement, OracleError> {
        let mut line = serde_json::to_string(request).expect("a request serialises");
        line.push('\n');
        if self
            .stdin
            .write_all(line.as_bytes())
            .and_then(|_| self.stdin.flush())
            .is_err()
        {
            return Err(self.died());
        }
        let answer = match self.lines.recv_timeout(self.timeout) {
            Ok(a) => a,
            Err(RecvTimeoutError::Timeout) => {
                return Err(OracleError::Hung {
                    cmd: self.cmd.clone(),
                    secs: self.timeout.as_secs(),
                })
            }
            Err(RecvTimeoutError::Disconnected) => return Err(self.died()),
        };
        let expected = request.results.len();
        match serde_json::from_str::<Answer>(&answer) {
            Ok(a) if a.results.len() == expected => Ok(Judgement {
                references: a.results,
                tolerance: a.tolerance.filter(|t| t.is_finite() && *t >= 0.0),
            }),
            _ => Err(OracleError::Garbage {
                cmd: self.cmd.clone(),
                line: answer.chars().take(80).collect(),
                expected,
            }),
        }
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How a result compares with the truth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Verdict {
    #[serde(rename = "right")]
    Right,
    /// The true value is undefined (the oracle's `nan`) and the library returned NaN without
    /// an error: its NaN is the answer, so the exception behind it is no bug.
    #[serde(rename = "undefined")]
    Undefined,
    /// The true value is beyond the format, the library returned what rounding it gives (±Inf
    /// of its sign, or a number for an underflow) and reported no error.
    #[serde(rename = "unreported-range")]
    UnreportedRange,
    #[serde(rename = "wrong")]
    Wrong,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Right => "right",
            Verdict::Undefined => "undefined",
            Verdict::UnreportedRange => "unreported-range",
            Verdict::Wrong => "wrong",
        }
    }
}

fn is_exact_zero(decimal: &str) -> bool {
    let mantissa = decimal
        .trim_start_matches(['-', '+'])
        .split(['e', 'E'])
        .next()
        .unwrap_or("");
    !mantissa.is_empty() && mantissa.chars().all(|c| c == '0' || c == '.')
}

/// Where a true value falls against the format of the value returned for it.
enum Place {
    NotANumber,
    /// Beyond the range: an infinity or a finite value that rounds to one (`overflow`), or a
    /// nonzero that rounds to zero or to a subnormal.
    Beyond {
        negative: bool,
        overflow: bool,
    },
    /// Representable as a normal number, or an exact zero (`zero`).
    Inside {
        zero: bool,
    },
}

/// The place of `reference` for `ty`; `None` when it cannot be read.
fn place(ty: FloatType, reference: &str) -> Option<Place> {
    let reference = reference.trim();
    let lower = reference.to_ascii_lowercase();
    let negative = lower.starts_with('-');
    match lower.trim_start_matches(['-', '+']) {
        "nan" => return Some(Place::NotANumber),
        "inf" | "infinity" => {
            return Some(Place::Beyond {
                negative,
                overflow: true,
            })
        }
        _ => {}
    }
    let v = Float::parse(ty, reference).ok()?;
    let zero = is_exact_zero(reference);
    let lost = v.is_zero() || v.class() == numfuzz_abi::value::FloatClass::Subnormal;
    Some(if v.is_infinite() || (!zero && lost) {
        Place::Beyond {
            negative,
            overflow: v.is_infinite(),
        }
    } else {
        Place::Inside { zero }
    })
}

/// Whether a true value (`reference`) lies beyond the range of `ty`: an infinity, a finite value
/// that rounds to one, or a nonzero that rounds to zero or to a subnormal. `None` when it cannot
/// be read or is NaN.
pub fn beyond_format(ty: FloatType, reference: &str) -> Option<bool> {
    match place(ty, reference)? {
        Place::NotANumber => None,
        Place::Beyond { .. } => Some(true),
        Place::Inside { .. } => Some(false),
    }
}

/// A returned non-number, or a number, against a true value beyond the format (`overflow`: on
/// the infinite side, of sign `negative`): the format's answer with its range error unreported,
/// unless it is no rounding of that value at all. A NaN (GSL's `gaussian_pdf(2.2e-308, 1e-323)`,
/// 10^(-1.1e30)), an infinity of the other sign, or an infinity where the value underflows is
/// `wrong`: the rounded value was ±Inf or 0.
fn beyond_verdict(returned: &str, negative: bool, overflow: bool) -> Verdict {
    match returned.trim().parse::<f64>() {
        Ok(r) if r.is_nan() => Verdict::Wrong,
        Ok(r) if r.is_infinite() && (!overflow || (r < 0.0) != negative) => Verdict::Wrong,
        _ => Verdict::UnreportedRange,
    }
}

/// The verdict on one returned value (`returned`, of type `ty`) against its true value
/// (`reference`), for an input the library reported an error for or not (`handled`). `None`
/// when the reference cannot be read.
pub fn verdict(ty: FloatType, returned: &str, reference: &str, handled: bool, tolerance: f64) -> Option<Verdict> {
    let reference = reference.trim();
    let zero = match place(ty, reference)? {
        Place::NotANumber if !handled && returned.trim().parse::<f64>().is_ok_and(f64::is_nan) => {
            return Some(Verdict::Undefined)
        }
        Place::NotANumber => return Some(Verdict::Right),
        _ if handled => return Some(Verdict::Right),
        Place::Beyond { negative, overflow } => return Some(beyond_verdict(returned, negative, overflow)),
        Place::Inside { zero } => zero,
    };
    let r: f64 = returned.trim().parse().ok()?;
    if !r.is_finite() {
        return Some(Verdict::Wrong);
    }
    if zero {
        let min_normal: f64 = Float::min_normal(ty, false).to_string().parse().ok()?;
        return Some(if r.abs() >= min_normal {
            Verdict::Wrong
        } else {
            Verdict::Right
        });
    }
    let t: f64 = reference.parse().ok()?;
    let error = ((r - t) / t).abs();
    Some(if error > tolerance {
        Verdict::Wrong
    } else {
        Verdict::Right
    })
}

/// The judgement of one primary result.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultVerdict {
    pub index: u32,
    pub returned: String,
    pub reference: String,
    pub verdict: Verdict,
    pub tolerance: f64,
    /// The reference is the shadow's limit beside the input (see `neighbours`), not its value at it.
    pub beside: bool,
    /// The reference is the MPFR shadow's, where the x87 shadow could not tell.
    pub by_mpfr: bool,
    /// The reference is the harness's declaration that the function is defined inside its
    /// declared domains (a NaN there is wrong).
    pub by_domain: bool,
}

/// The worst verdict over an input's primary results (`None` when no reference is known).
/// `undefined` only when every non-finite primary result is an undefined NaN: one whose truth
/// is unknown keeps the input's escape a bug.
pub fn judge(results: &[ResultReport], j: &Judgement, handled: bool, tolerance: f64) -> Option<ResultVerdict> {
    let tolerance = j.tolerance.unwrap_or(tolerance);
    let worst = results
        .iter()
        .zip(&j.references)
        .filter_map(|(r, reference)| {
            let index = r.index?;
            let reference = reference.as_ref()?;
            let verdict = verdict(r.ty, &r.value, reference, handled, tolerance)?;
            Some(ResultVerdict {
                index,
                returned: r.value.clone(),
                reference: reference.clone(),
                verdict,
                tolerance,
                beside: false,
                by_mpfr: false,
                by_domain: false,
            })
        })
        // The first of the worst: `max_by_key` keeps the last, which showed an imaginary part's
        // reference beside a complex function's real part.
        .fold(None, |worst: Option<ResultVerdict>, v| match worst {
            Some(w) if w.verdict >= v.verdict => Some(w),
            _ => Some(v),
        });
    let unjudged_non_finite = results.iter().zip(&j.references).any(|(r, reference)| {
        r.index.is_some() && reference.is_none() && r.value.trim().parse::<f64>().is_ok_and(|v| !v.is_finite())
    });
    worst.map(|mut w| {
        if w.verdict == Verdict::Undefined && unjudged_non_finite {
            w.verdict = Verdict::Right;
        }
        w
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const F64: FloatType = FloatType::F64;
    const T: f64 = DEFAULT_TOLERANCE;
    const T_ANSWER: Duration = Duration::from_secs(10);

    #[test]
    fn verdicts() {
        let v = |ret, reference, handled| verdict(F64, ret, reference, handled, T);
        // exprel_2(709.6): GSL's inf against a representable true value.
        assert_eq!(v("inf", "6.1213586926380437e302", false), Some(Verdict::Wrong));
        assert_eq!(v("1.0000001", "1.0", false), Some(Verdict::Right));
        assert_eq!(v("1.00001", "1.0", false), Some(Verdict::Wrong));
        assert_eq!(
            v("NaN", "0.5", true),
            Some(Verdict::Right),
            "a reported error claims no value"
        );
        // A true value at the edge of the format is representable: an infinity there is wrong
        // (a spurious overflow of `x * 1e300 / 1e300` at the largest double).
        assert_eq!(v("inf", "1.7976931348623157e308", false), Some(Verdict::Wrong));
        // True values beyond the format.
        assert_eq!(v("inf", "1e400", false), Some(Verdict::UnreportedRange));
        assert_eq!(v("inf", "1e400", true), Some(Verdict::Right));
        assert_eq!(
            v("1.7976931348623157e308", "-inf", false),
            Some(Verdict::UnreportedRange)
        );
        assert_eq!(
            v("0.0", "1e-310", false),
            Some(Verdict::UnreportedRange),
            "subnormal truth"
        );
        assert_eq!(v("0.0", "1e-400", false), Some(Verdict::UnreportedRange));
        // A NaN, or an infinity that is no rounding of the true value, is wrong there.
        assert_eq!(v("NaN", "1e400", false), Some(Verdict::Wrong));
        assert_eq!(v("NaN", "-inf", false), Some(Verdict::Wrong));
        assert_eq!(
            v("NaN", "4.1e-1101067321320929692930183543656", false),
            Some(Verdict::Wrong)
        );
        assert_eq!(v("inf", "1e-400", false), Some(Verdict::Wrong));
        assert_eq!(v("-inf", "1e400", false), Some(Verdict::Wrong));
        assert_eq!(v("-inf", "-1e400", false), Some(Verdict::UnreportedRange));
        assert_eq!(v("NaN", "1e400", true), Some(Verdict::Right), "reported");
        assert_eq!(beyond_format(F64, "1e400"), Some(true));
        assert_eq!(beyond_format(F64, "-1e-310"), Some(true));
        assert_eq!(beyond_format(F64, "0.0"), Some(false));
        assert_eq!(beyond_format(F64, "1e300"), Some(false));
        assert_eq!(beyond_format(F64, "nan"), None);
        // Zero and undefined truths.
        assert_eq!(v("0.0", "0.000", false), Some(Verdict::Right));
        assert_eq!(v("1e-320", "0", false), Some(Verdict::Right));
        assert_eq!(v("1e-300", "0", false), Some(Verdict::Wrong));
        assert_eq!(v("5.0", "nan", false), Some(Verdict::Right));
        assert_eq!(v("NaN", "nan", false), Some(Verdict::Undefined));
        assert_eq!(v("-nan", "nan", false), Some(Verdict::Undefined));
        assert_eq!(v("NaN", "nan", true), Some(Verdict::Right));
        assert_eq!(v("inf", "nan", false), Some(Verdict::Right));
        assert_eq!(v("5.0", "garbage", false), None);
        // The smallest normal is in range.
        assert_eq!(
            v("2.2250738585072014e-308", "2.2250738585072014e-308", false),
            Some(Verdict::Right)
        );
    }

    #[test]
    fn the_worst_primary_result_is_the_inputs_verdict() {
        let res = |index: Option<u32>, name: Option<&str>, value: &str| ResultReport {
            index,
            name: name.map(str::to_string),
            ty: F64,
            value: value.into(),
            hex: String::new(),
            labels: None,
            shadow: None,
        };
        let results = [
            res(Some(0), None, "1.0"),
            res(None, Some("err"), "inf"),
            res(Some(1), None, "2.5"),
        ];
        let j = Judgement {
            references: vec![Some("1.0".into()), Some("0.0".into()), Some("2.0".into())],
            tolerance: None,
        };
        let w = judge(&results, &j, false, T).unwrap();
        assert_eq!((w.index, w.verdict), (1, Verdict::Wrong));
        // The oracle's tolerance replaces the default for this input.
        let loose = Judgement {
            tolerance: Some(0.5),
            ..j.clone()
        };
        assert_eq!(judge(&results, &loose, false, T).unwrap().verdict, Verdict::Right);
        let unknown = Judgement {
            references: vec![None, None, None],
            tolerance: None,
        };
        assert_eq!(judge(&results, &unknown, false, T), None);
        // complex_psi(5e-324, 5e-324): both parts overflow; the real part (result 0) is shown.
        let both = [res(Some(0), None, "-inf"), res(Some(1), None, "inf")];
        let refs = Judgement {
            references: vec![Some("-1.012e323".into()), Some("1.012e323".into())],
            tolerance: None,
        };
        let w = judge(&both, &refs, false, T).unwrap();
        assert_eq!(
            (w.index, w.verdict, w.reference.as_str()),
            (0, Verdict::UnreportedRange, "-1.012e323")
        );
    }

    #[test]
    fn a_conversation_and_every_way_an_oracle_fails() {
        let req = Request {
            function: "f".into(),
            inputs: vec!["1.5".into()],
            results: vec![RequestResult {
                index: Some(0),
                name: None,
                value: "inf".into(),
            }],
        };
        let mut echo = Oracle::start_with_timeout(
            r#"while read l; do echo '{"results": ["2.5"], "tolerance": 0.1}'; done"#,
            T_ANSWER,
        )
        .unwrap();
        let j = echo.ask(&req).unwrap();
        assert_eq!(j.references, [Some("2.5".to_string())]);
        assert_eq!(j.tolerance, Some(0.1));
        assert_eq!(echo.ask(&req).unwrap().references.len(), 1, "a second question");

        let died = Oracle::start_with_timeout("echo 'oracle: no mpmath' >&2; exit 3", T_ANSWER)
            .unwrap()
            .ask(&req)
            .unwrap_err();
        let text = died.to_string();
        assert!(
            text.contains("exited with exit status: 3") && text.contains("(oracle: no mpmath)"),
            "{text}"
        );
        assert_eq!(text.lines().count(), 1);

        let garbage = Oracle::start_with_timeout("while read l; do echo hello; done", T_ANSWER)
            .unwrap()
            .ask(&req)
            .unwrap_err();
        assert!(garbage.to_string().contains("answered `hello`"), "{garbage}");
        let short = Oracle::start_with_timeout(r#"while read l; do echo '{"results": []}'; done"#, T_ANSWER)
            .unwrap()
            .ask(&req)
            .unwrap_err();
        assert!(short.to_string().contains("with 1 entries"), "{short}");

        let hung = Oracle::start_with_timeout("sleep 30", Duration::from_millis(300))
            .unwrap()
            .ask(&req)
            .unwrap_err();
        assert!(matches!(hung, OracleError::Hung { .. }), "{hung}");
    }
}
