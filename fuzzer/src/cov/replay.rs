//! Running inputs on a coverage build: many files per process (its standalone `main` runs
//! every file named on the command line), one raw profile per process.
//!
//! A profile is written when the process exits, so a process that is killed (time limit) or
//! dies of a signal loses the coverage of every file it ran. Batches that end that way are
//! therefore run again one file per process, and inputs likely to end that way (hangs, real
//! crashes) get a process each from the start; only the offending input itself is lost.

use super::CovError;
use crate::target_process::{self, Stop};
use numfuzz_outdir::SavedInput as Input;
use serde::Serialize;
use std::collections::HashMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// At most this many files per process…
const BATCH_FILES: usize = 1000;
/// …and this many bytes of arguments (well below ARG_MAX, which also holds the environment).
const BATCH_ARG_BYTES: usize = 96 * 1024;

/// An input whose coverage could not be recorded.
#[derive(Clone, Debug, Serialize)]
pub struct LostInput {
    pub path: PathBuf,
    /// `time limit` or `signal N`.
    pub reason: String,
}

/// Replays inputs on one coverage build, writing profiles into one directory.
pub struct ProfileRunner {
    target: PathBuf,
    dir: PathBuf,
    timeout: Duration,
    next_id: usize,
    /// Inputs already run one per process, with their profile or why it was lost: a time
    /// search replays prefixes of the same inputs many times, and hangs are slow.
    singles: HashMap<PathBuf, Result<PathBuf, LostInput>>,
}

enum Outcome {
    /// The process exited (with any status): its profile is complete.
    Exited,
    Killed(String),
}

impl ProfileRunner {
    pub fn new(target: &Path, dir: &Path, timeout: Duration) -> ProfileRunner {
        ProfileRunner {
            target: target.to_path_buf(),
            dir: dir.to_path_buf(),
            timeout,
            next_id: 0,
            singles: HashMap::new(),
        }
    }

    /// Runs `inputs`; returns the profiles written and the inputs whose coverage was lost.
    pub fn run(&mut self, inputs: &[&Input]) -> Result<(Vec<PathBuf>, Vec<LostInput>), CovError> {
        let mut profiles = Vec::new();
        let mut lost = Vec::new();
        let (risky, plain): (Vec<&Input>, Vec<&Input>) = inputs.iter().copied().partition(|i| i.is_risky());
        for batch in batches(&plain) {
            let limit = self.timeout + self.timeout.mul_f64(batch.len() as f64 / 20.0);
            let (outcome, profile) = self.run_process(&batch, limit)?;
            match outcome {
                Outcome::Exited => profiles.extend(profile),
                Outcome::Killed(_) => {
                    if let Some(p) = profile {
                        let _ = std::fs::remove_file(p);
                    }
                    self.run_singly(&batch, &mut profiles, &mut lost)?;
                }
            }
        }
        self.run_singly(&risky, &mut profiles, &mut lost)?;
        Ok((profiles, lost))
    }

    fn run_singly(
        &mut self,
        inputs: &[&Input],
        profiles: &mut Vec<PathBuf>,
        lost: &mut Vec<LostInput>,
    ) -> Result<(), CovError> {
        for input in inputs {
            if !self.singles.contains_key(&input.path) {
                let (outcome, profile) = self.run_process(&[input], self.timeout)?;
                let result = match outcome {
                    Outcome::Exited => profile.ok_or_else(|| LostInput {
                        path: input.path.clone(),
                        reason: "no profile written".into(),
                    }),
                    Outcome::Killed(reason) => {
                        if let Some(p) = profile {
                            let _ = std::fs::remove_file(p);
                        }
                        Err(LostInput {
                            path: input.path.clone(),
                            reason,
                        })
                    }
                };
                self.singles.insert(input.path.clone(), result);
            }
            match &self.singles[&input.path] {
                Ok(profile) => profiles.push(profile.clone()),
                Err(l) => lost.push(l.clone()),
            }
        }
        Ok(())
    }

    fn run_process(&mut self, inputs: &[&Input], limit: Duration) -> Result<(Outcome, Option<PathBuf>), CovError> {
        let id = self.next_id;
        self.next_id += 1;
        let pattern = self.dir.join(format!("run{id}-%p.profraw"));
        let mut cmd = target_process::command(&self.target);
        cmd.env("LLVM_PROFILE_FILE", &pattern)
            .env(numfuzz_abi::env::ABORT, "0")
            .args(inputs.iter().map(|i| &i.path))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut child = cmd
            .spawn()
            .map_err(|e| CovError::Spawn(self.target.clone(), e.to_string()))?;
        let profile = self.dir.join(format!("run{id}-{}.profraw", child.id()));
        let status = target_process::wait(&mut child, limit, Stop::Kill)
            .map_err(|e| CovError::Spawn(self.target.clone(), e.to_string()))?;
        let profile = profile.is_file().then_some(profile);
        let outcome = match status {
            None => Outcome::Killed(format!("time limit ({} ms)", limit.as_millis())),
            Some(s) => match s.signal() {
                Some(sig) => Outcome::Killed(format!("signal {sig} ({})", crate::replay::signal_name(sig))),
                None if profile.is_some() => Outcome::Exited,
                None => return Err(CovError::NoProfile(self.target.clone())),
            },
        };
        Ok((outcome, profile))
    }
}

/// Splits `inputs` into argument lists that fit one command line.
fn batches<'a>(inputs: &[&'a Input]) -> Vec<Vec<&'a Input>> {
    let mut out: Vec<Vec<&Input>> = Vec::new();
    let mut bytes = 0;
    for &input in inputs {
        let len = input.path.as_os_str().len() + 1;
        match out.last_mut() {
            Some(batch) if batch.len() < BATCH_FILES && bytes + len <= BATCH_ARG_BYTES => {
                batch.push(input);
                bytes += len;
            }
            _ => {
                out.push(vec![input]);
                bytes = len;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use numfuzz_outdir::{EntryName, InputDir};

    #[test]
    fn batches_respect_file_and_byte_limits() {
        let long = "x".repeat(200);
        let inputs: Vec<Input> = (0..2500)
            .map(|i| Input {
                path: PathBuf::from(format!("/{long}/id:{i:06}")),
                rel: format!("default/queue/id:{i:06}"),
                instance: "default".into(),
                dir: InputDir::Queue,
                name: EntryName::parse(&format!("id:{i:06}")).unwrap(),
            })
            .collect();
        let refs: Vec<&Input> = inputs.iter().collect();
        let b = batches(&refs);
        assert_eq!(b.iter().map(Vec::len).sum::<usize>(), 2500);
        for batch in &b {
            assert!(batch.len() <= BATCH_FILES);
            assert!(batch.iter().map(|i| i.path.as_os_str().len() + 1).sum::<usize>() <= BATCH_ARG_BYTES);
        }
        // Order is kept.
        let flat: Vec<&Path> = b.iter().flatten().map(|i| i.path.as_path()).collect();
        assert!(flat.windows(2).all(|w| w[0] < w[1]));
    }
}
