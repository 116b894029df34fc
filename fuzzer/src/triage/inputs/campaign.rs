//! What triage reads from a campaign's output directory (through `numfuzz-outdir`): the
//! inputs of `crashes/` and `hangs/` with what each name says it does, the target recorded in
//! `cmdline`, and `exceptions.jsonl`.

use numfuzz_abi::kind::ExceptionKind;
use numfuzz_outdir::{ExceptionRecord, InputDir, OutDir, OutDirError, SavedInput, Tag};
use std::path::{Path, PathBuf};

/// What an input's file name says it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expectation {
    /// `kind:Overflow,site:exp.c:406:17`: that exception at a site of that label.
    Exception { kind: ExceptionKind, site: String },
    /// `crash` (numfuzz) or `sig:NN` (AFL++): a real crash.
    Crash,
    /// In `hangs/`: exceeds the time limit.
    Hang,
    /// `oom`: stopped by the campaign's memory limit (`-m`).
    OutOfMemory,
    /// In `crashes/` without a recognisable tag, or AFL++'s `sig:06` (a numfuzz-cc target
    /// under afl-fuzz aborts on its first exception): an exception or a crash.
    Anything,
}

impl Expectation {
    fn of(input: &SavedInput) -> Expectation {
        if input.dir == InputDir::Hangs {
            return Expectation::Hang;
        }
        match &input.name.tag {
            Tag::Exception { kind, site } => Expectation::Exception {
                kind: *kind,
                site: site.clone(),
            },
            Tag::Signal(s) if *s == libc::SIGABRT => Expectation::Anything,
            Tag::Crash | Tag::Signal(_) => Expectation::Crash,
            Tag::Hang => Expectation::Hang,
            Tag::OutOfMemory => Expectation::OutOfMemory,
            Tag::None => Expectation::Anything,
        }
    }
}

/// One saved input to replay.
#[derive(Clone, Debug)]
pub struct InputFile {
    pub path: PathBuf,
    /// Path relative to the output directory (`default/crashes/id:000004,...`).
    pub rel: String,
    pub instance: String,
    /// `time:` of the name: milliseconds since the instance started.
    pub time_ms: Option<u64>,
    pub expect: Expectation,
}

/// One instance's `exceptions.jsonl`: the distinct exceptions and escapes it saw, oldest
/// first.
#[derive(Clone, Debug)]
pub struct InstanceRecords {
    pub instance: String,
    pub records: Vec<ExceptionRecord>,
}

/// A campaign's output directory as triage sees it.
#[derive(Clone, Debug)]
pub struct Campaign {
    pub out: OutDir,
    /// Every input of `crashes/` and `hangs/`, by instance, directory and id.
    pub inputs: Vec<InputFile>,
}

impl Campaign {
    /// Reads `root`, either a campaign directory with instance subdirectories or a single
    /// instance directory itself.
    pub fn open(root: &Path) -> Result<Campaign, OutDirError> {
        let out = OutDir::open(root)?;
        let inputs = out
            .inputs(&[InputDir::Crashes, InputDir::Hangs])?
            .into_iter()
            .map(|i| InputFile {
                expect: Expectation::of(&i),
                time_ms: i.time_ms(),
                path: i.path,
                rel: i.rel,
                instance: i.instance,
            })
            .collect();
        Ok(Campaign { out, inputs })
    }

    pub fn root(&self) -> &Path {
        &self.out.root
    }

    /// The campaign's `-m` (MiB), from any instance's `fuzzer_stats`.
    pub fn memory_limit_mb(&self) -> Option<u64> {
        self.out
            .instances
            .iter()
            .find_map(|i| i.stats().and_then(|s| s.memory_limit_mb()))
    }

    /// The limit (ms) the campaign confirmed its hangs at, from any instance's `fuzzer_stats`.
    pub fn hang_timeout_ms(&self) -> Option<u64> {
        self.out
            .instances
            .iter()
            .find_map(|i| i.stats().and_then(|s| s.hang_timeout_ms()))
    }

    /// The earliest `exceptions.jsonl` record of every finding, over all instances.
    pub fn first_records(&self) -> Vec<ExceptionRecord> {
        self.out.first_exceptions()
    }

    /// Every instance's `exceptions.jsonl` records, instance by instance (by name).
    pub fn records_by_instance(&self) -> Vec<InstanceRecords> {
        self.out
            .instances
            .iter()
            .map(|i| InstanceRecords {
                instance: i.name.clone(),
                records: i.exceptions(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use numfuzz_outdir::EntryName;

    #[test]
    fn names_say_what_inputs_do() {
        let f = |name: &str, dir| {
            Expectation::of(&SavedInput {
                path: PathBuf::from(name),
                rel: name.into(),
                instance: "default".into(),
                dir,
                name: EntryName::parse(name).unwrap(),
            })
        };
        assert_eq!(
            f(
                "id:000004,kind:Overflow,site:exprel2.c:27:15,src:000011,time:625,execs:93499",
                InputDir::Crashes
            ),
            Expectation::Exception {
                kind: ExceptionKind::Overflow,
                site: "exprel2.c:27:15".into()
            }
        );
        assert_eq!(
            f("id:000007,crash,src:000002,time:90,execs:5", InputDir::Crashes),
            Expectation::Crash
        );
        assert_eq!(
            f(
                "id:000000,sig:11,src:000000,time:1234,execs:77,op:havoc,rep:2",
                InputDir::Crashes
            ),
            Expectation::Crash
        );
        assert_eq!(
            f("id:000000,sig:06,src:000000,time:1", InputDir::Crashes),
            Expectation::Anything
        );
        assert_eq!(f("id:000001,hang,time:5", InputDir::Hangs), Expectation::Hang);
        assert_eq!(
            f("id:000003,oom,src:000001", InputDir::Crashes),
            Expectation::OutOfMemory
        );
        assert_eq!(f("id:000002", InputDir::Crashes), Expectation::Anything);
    }
}
