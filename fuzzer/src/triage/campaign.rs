//! What triage reads from a campaign's output directory: its instances, the target recorded
//! in their `cmdline`, the inputs in `crashes/` and `hangs/`, and `exceptions.jsonl`.

use numfuzz_abi::kind::ExceptionKind;
use numfuzz_engine::output::{instance_dirs, read_exceptions, ExceptionRecord};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    #[error("`{0}` does not exist; give the output directory of a campaign (numfuzz run -o OUT)")]
    Missing(PathBuf),
    #[error("`{0}` is not a directory; give the output directory of a campaign (numfuzz run -o OUT)")]
    NotADirectory(PathBuf),
    #[error("`{0}` holds no campaign instance (no */queue or */fuzzer_stats); give the output directory of a campaign (numfuzz run -o OUT)")]
    NoInstances(PathBuf),
    #[error("cannot read `{0}`: {1}")]
    Io(PathBuf, std::io::Error),
}

/// Which subdirectory an input came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum InputDir {
    Crashes,
    Hangs,
}

/// What an input's file name says it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expectation {
    /// `kind:Overflow,site:exp.c:406:17`: that exception at a site of that label.
    Exception { kind: ExceptionKind, site: String },
    /// `crash` (numfuzz) or `sig:NN` (AFL++): a real crash.
    Crash,
    /// In `hangs/`: exceeds the time limit.
    Hang,
    /// In `crashes/` without a recognisable tag, or AFL++'s `sig:06` (a numfuzz-cc target
    /// under afl-fuzz aborts on its first exception): an exception or a crash.
    Anything,
}

/// One saved input.
#[derive(Clone, Debug)]
pub struct InputFile {
    pub path: PathBuf,
    /// Path relative to the output directory (`default/crashes/id:000004,...`).
    pub rel: String,
    pub instance: String,
    pub dir: InputDir,
    pub id: u64,
    /// `time:` of the name: milliseconds since the instance started.
    pub time_ms: Option<u64>,
    pub expect: Expectation,
}

fn name_field<'a>(name: &'a str, key: &str) -> Option<&'a str> {
    name.split(',').find_map(|part| part.strip_prefix(key))
}

impl InputFile {
    fn from_name(path: PathBuf, rel: String, instance: &str, dir: InputDir) -> Option<InputFile> {
        let name = path.file_name()?.to_string_lossy().into_owned();
        let id = name_field(&name, "id:")?.parse().ok()?;
        let time_ms = name_field(&name, "time:").and_then(|t| t.parse().ok());
        let expect = match dir {
            InputDir::Hangs => Expectation::Hang,
            InputDir::Crashes => {
                let kind = name_field(&name, "kind:").and_then(|k| k.parse().ok());
                let site = name_field(&name, "site:");
                match (kind, site) {
                    (Some(kind), Some(site)) => Expectation::Exception {
                        kind,
                        site: site.to_string(),
                    },
                    _ if name_field(&name, "sig:").and_then(|s| s.parse::<i32>().ok()) == Some(libc::SIGABRT) => {
                        Expectation::Anything
                    }
                    _ if name.split(',').any(|p| p == "crash" || p.starts_with("sig:")) => Expectation::Crash,
                    _ => Expectation::Anything,
                }
            }
        };
        Some(InputFile {
            path,
            rel,
            instance: instance.to_string(),
            dir,
            id,
            time_ms,
            expect,
        })
    }
}

/// One instance directory (`OUT/default`, `OUT/core0`, ...).
#[derive(Clone, Debug)]
pub struct Instance {
    pub dir: PathBuf,
    pub name: String,
    /// Target path and arguments from `cmdline`, if present.
    pub cmdline: Option<Vec<String>>,
    pub exceptions: Vec<ExceptionRecord>,
}

/// A campaign's output directory.
#[derive(Clone, Debug)]
pub struct Campaign {
    pub root: PathBuf,
    pub instances: Vec<Instance>,
    /// Every input of `crashes/` and `hangs/`, by instance, directory and id.
    pub inputs: Vec<InputFile>,
}

fn list_inputs(instance: &Instance, sub: &str, dir: InputDir) -> Result<Vec<InputFile>, CampaignError> {
    let path = instance.dir.join(sub);
    if !path.is_dir() {
        return Ok(Vec::new());
    }
    let entries = std::fs::read_dir(&path).map_err(|e| CampaignError::Io(path.clone(), e))?;
    Ok(entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let rel = format!("{}/{sub}/{name}", instance.name);
            InputFile::from_name(e.path(), rel, &instance.name, dir)
        })
        .collect())
}

impl Campaign {
    /// Reads `root`, either a campaign directory with instance subdirectories or a single
    /// instance directory itself.
    pub fn open(root: &Path) -> Result<Campaign, CampaignError> {
        if !root.exists() {
            return Err(CampaignError::Missing(root.to_path_buf()));
        }
        if !root.is_dir() {
            return Err(CampaignError::NotADirectory(root.to_path_buf()));
        }
        let root = std::fs::canonicalize(root).map_err(|e| CampaignError::Io(root.to_path_buf(), e))?;
        let mut dirs = instance_dirs(&root);
        let single = dirs.is_empty() && root.join("queue").is_dir();
        if single {
            dirs.push(root.clone());
        }
        if dirs.is_empty() {
            return Err(CampaignError::NoInstances(root));
        }
        let mut instances = Vec::new();
        for dir in dirs {
            let name = dir
                .file_name()
                .map_or_else(|| "default".into(), |n| n.to_string_lossy().into_owned());
            let cmdline = std::fs::read_to_string(dir.join("cmdline"))
                .ok()
                .map(|t| t.lines().map(str::to_string).collect::<Vec<_>>())
                .filter(|l| l.first().is_some_and(|t| !t.trim().is_empty()));
            let exceptions = read_exceptions(&dir);
            instances.push(Instance {
                dir,
                name,
                cmdline,
                exceptions,
            });
        }
        let mut inputs = Vec::new();
        for inst in &instances {
            inputs.extend(list_inputs(inst, "crashes", InputDir::Crashes)?);
            inputs.extend(list_inputs(inst, "hangs", InputDir::Hangs)?);
        }
        if single {
            // Paths relative to the campaign directory, as for the multi-instance layout.
            let parent = root.parent().unwrap_or(&root).to_path_buf();
            return Ok(Campaign {
                root: parent,
                instances,
                inputs: sorted(inputs),
            });
        }
        Ok(Campaign {
            root,
            instances,
            inputs: sorted(inputs),
        })
    }

    /// The instance whose `cmdline` names the target, with that command line.
    pub fn recorded_command(&self) -> Option<(&Instance, &[String])> {
        self.instances.iter().find_map(|i| i.cmdline.as_deref().map(|c| (i, c)))
    }

    /// The earliest `exceptions.jsonl` record of every (source path, line, column, op, kind),
    /// over all instances, with `input` made relative to the output directory.
    pub fn first_records(&self) -> Vec<ExceptionRecord> {
        let mut all: Vec<ExceptionRecord> = Vec::new();
        for inst in &self.instances {
            for r in &inst.exceptions {
                let mut r = r.clone();
                r.input = format!("{}/{}", inst.name, r.input);
                all.push(r);
            }
        }
        all.sort_by_key(|r| r.time_ms);
        all
    }
}

fn sorted(mut inputs: Vec<InputFile>) -> Vec<InputFile> {
    inputs.sort_by(|a, b| (&a.instance, a.dir, a.id, &a.rel).cmp(&(&b.instance, b.dir, b.id, &b.rel)));
    inputs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_say_what_inputs_do() {
        let f = |name: &str, dir| InputFile::from_name(PathBuf::from(name), name.into(), "default", dir);
        let e = f(
            "id:000004,kind:Overflow,site:exprel2.c:27:15,src:000011,time:625,execs:93499",
            InputDir::Crashes,
        )
        .unwrap();
        assert_eq!((e.id, e.time_ms), (4, Some(625)));
        assert_eq!(
            e.expect,
            Expectation::Exception {
                kind: ExceptionKind::Overflow,
                site: "exprel2.c:27:15".into()
            }
        );
        let c = f("id:000007,crash,src:000002,time:90,execs:5", InputDir::Crashes).unwrap();
        assert_eq!(c.expect, Expectation::Crash);
        let afl = f(
            "id:000000,sig:11,src:000000,time:1234,execs:77,op:havoc,rep:2",
            InputDir::Crashes,
        )
        .unwrap();
        assert_eq!((afl.expect, afl.time_ms), (Expectation::Crash, Some(1234)));
        assert_eq!(
            f("id:000001,hang,time:5", InputDir::Hangs).unwrap().expect,
            Expectation::Hang
        );
        assert_eq!(f("id:000002", InputDir::Crashes).unwrap().expect, Expectation::Anything);
        assert!(f("README.txt", InputDir::Crashes).is_none());
    }
}
