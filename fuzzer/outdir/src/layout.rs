//! The directories: preparing `-o` for a campaign, opening one to read it, and one instance's
//! directory with its files.

use crate::clients::{self, ClientEvent};
use crate::name::{EntryName, Tag};
use crate::records::{self, ExceptionRecord};
use crate::stats::{self, FuzzerStats, PlotRow};
use crate::FindingKey;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Marker file that makes a directory recognisably a numfuzz output directory.
pub const MARKER: &str = ".numfuzz";

#[derive(Debug, thiserror::Error)]
pub enum OutDirError {
    #[error("-o {0}: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("-o {path} holds something that is not a numfuzz or AFL++ output directory ({found}); choose a new or empty directory")]
    Foreign { path: PathBuf, found: String },
    #[error("-o {path} holds a campaign of another target ({other}); use a new -o, or the same target to resume it")]
    OtherCampaign { path: PathBuf, other: String },
    #[error("-o {0} is a file, not a directory")]
    NotADirectory(PathBuf),
    #[error("`{0}` does not exist; give the output directory of a campaign (numfuzz run -o OUT, or afl-fuzz -o OUT)")]
    Missing(PathBuf),
    #[error(
        "`{0}` is not a directory; give the output directory of a campaign (numfuzz run -o OUT, or afl-fuzz -o OUT)"
    )]
    NotACampaignDirectory(PathBuf),
    #[error("`{0}` holds no campaign instance (no queue/ or fuzzer_stats, neither itself nor in a subdirectory); give the output directory of a campaign (numfuzz run -o OUT, or afl-fuzz -o OUT)")]
    NoInstances(PathBuf),
    #[error("cannot read `{0}`: {1}")]
    Read(PathBuf, std::io::Error),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> OutDirError + '_ {
    move |e| OutDirError::Io(path.to_path_buf(), e)
}

/// The subdirectories that hold inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum InputDir {
    Queue,
    Crashes,
    Hangs,
}

impl InputDir {
    pub const ALL: [InputDir; 3] = [InputDir::Queue, InputDir::Crashes, InputDir::Hangs];

    pub fn name(self) -> &'static str {
        match self {
            InputDir::Queue => "queue",
            InputDir::Crashes => "crashes",
            InputDir::Hangs => "hangs",
        }
    }
}

/// Is `dir` an instance directory (numfuzz's or afl-fuzz's)?
fn is_instance(dir: &Path) -> bool {
    dir.join("queue").is_dir() || dir.join("fuzzer_stats").is_file()
}

/// Instance directories below `root`, by name.
fn instance_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| is_instance(p))
        .collect();
    dirs.sort();
    dirs
}

/// What `-o` holds before a campaign starts.
#[derive(Debug, PartialEq, Eq)]
pub enum OutState {
    /// Nothing yet (created or empty).
    Fresh,
    /// A previous campaign of the same target: resume it.
    Resume,
}

/// Validates `-o` for a campaign on `target` and creates it if needed: a new or empty
/// directory starts fresh, one holding this target's campaign resumes, anything else is
/// refused without touching it.
pub fn prepare(root: &Path, target: &Path) -> Result<OutState, OutDirError> {
    if root.exists() && !root.is_dir() {
        return Err(OutDirError::NotADirectory(root.to_path_buf()));
    }
    let mark = || fs::write(root.join(MARKER), "numfuzz output directory\n").map_err(io(root));
    if !root.exists() {
        fs::create_dir_all(root).map_err(io(root))?;
        mark()?;
        return Ok(OutState::Fresh);
    }
    let entries: Vec<String> = fs::read_dir(root)
        .map_err(io(root))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if entries.is_empty() {
        mark()?;
        return Ok(OutState::Fresh);
    }
    let instances = instance_dirs(root);
    if instances.is_empty() && !entries.iter().any(|e| e == MARKER) {
        let mut shown: Vec<&str> = entries.iter().map(String::as_str).take(3).collect();
        if entries.len() > 3 {
            shown.push("...");
        }
        return Err(OutDirError::Foreign {
            path: root.to_path_buf(),
            found: shown.join(", "),
        });
    }
    let recorded = instances
        .iter()
        .find_map(|d| InstanceDir::at(d).cmdline())
        .and_then(|c| c.into_iter().next());
    if let Some(other) = recorded {
        let same = Path::new(&other) == target
            || fs::canonicalize(&other)
                .ok()
                .zip(fs::canonicalize(target).ok())
                .is_some_and(|(a, b)| a == b);
        if !same {
            return Err(OutDirError::OtherCampaign {
                path: root.to_path_buf(),
                other,
            });
        }
    }
    if !root.join(MARKER).exists() {
        mark()?;
    }
    Ok(if instances.is_empty() {
        OutState::Fresh
    } else {
        OutState::Resume
    })
}

/// Writes `bytes` to `dir/name` atomically (a temporary name, then a rename), so a campaign
/// stopped at any moment leaves only complete files behind.
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    use std::io::Write;
    let path = dir.join(name);
    // A hidden `.NAME<random>.tmp` (the shape `repair` removes after a hard stop), deleted
    // when the write fails (a full disk leaves no half-written file behind).
    // Readable as a file `fs::write` creates (tempfile's default is owner-only).
    let readable = std::os::unix::fs::PermissionsExt::from_mode(0o666);
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}"))
        .suffix(".tmp")
        .permissions(readable)
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(&path).map_err(|e| e.error)?;
    Ok(path)
}

/// One instance's directory (`OUT/default`, `OUT/core1`, an afl-fuzz `OUT/default`).
#[derive(Clone, Debug)]
pub struct InstanceDir {
    pub dir: PathBuf,
    pub name: String,
}

impl InstanceDir {
    /// The instance directory at `dir` (not created).
    pub fn at(dir: &Path) -> InstanceDir {
        InstanceDir {
            dir: dir.to_path_buf(),
            name: dir
                .file_name()
                .map_or_else(|| "default".into(), |n| n.to_string_lossy().into_owned()),
        }
    }

    /// Creates (or reopens) `root/name` with its subdirectories, for writing.
    pub fn create(root: &Path, name: &str) -> Result<InstanceDir, OutDirError> {
        let dir = root.join(name);
        for sub in InputDir::ALL {
            fs::create_dir_all(dir.join(sub.name())).map_err(io(&dir))?;
        }
        Ok(InstanceDir {
            dir,
            name: name.to_string(),
        })
    }

    pub fn path(&self, sub: InputDir) -> PathBuf {
        self.dir.join(sub.name())
    }

    /// Saves an input as `sub/name` atomically.
    pub fn save(&self, sub: InputDir, name: &EntryName, bytes: &[u8]) -> std::io::Result<PathBuf> {
        self.save_as(sub, &name.to_string(), bytes)
    }

    /// Saves an input as `sub/file` atomically (`file` an entry name already rendered).
    pub fn save_as(&self, sub: InputDir, file: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
        write_atomic(&self.path(sub), file, bytes)
    }

    /// The next free `id:` in `sub` (one more than the largest there).
    pub fn next_id(&self, sub: InputDir) -> u64 {
        fs::read_dir(self.path(sub))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| EntryName::parse(&e.file_name().to_string_lossy()).map(|n| n.id))
            .max()
            .map_or(0, |m| m + 1)
    }

    /// Writes `cmdline` (target and arguments, one per line, as AFL++ does).
    pub fn write_cmdline(&self, target: &Path, args: &[String]) -> std::io::Result<()> {
        let mut text = format!("{}\n", target.display());
        for a in args {
            text.push_str(a);
            text.push('\n');
        }
        write_atomic(&self.dir, "cmdline", text.as_bytes()).map(|_| ())
    }

    /// Target path and arguments from `cmdline`, if present and naming a target.
    pub fn cmdline(&self) -> Option<Vec<String>> {
        fs::read_to_string(self.dir.join("cmdline"))
            .ok()
            .map(|t| t.lines().map(str::to_string).collect::<Vec<_>>())
            .filter(|l| l.first().is_some_and(|t| !t.trim().is_empty()))
    }

    pub fn append_exception(&self, record: &ExceptionRecord) -> std::io::Result<()> {
        records::append(&self.dir, record)
    }

    /// The instance's `exceptions.jsonl`, oldest first.
    pub fn exceptions(&self) -> Vec<ExceptionRecord> {
        records::read(&self.dir)
    }

    pub fn append_client_event(&self, event: &ClientEvent) -> std::io::Result<()> {
        clients::append(&self.dir, event)
    }

    /// The instance's `clients.jsonl`, oldest first.
    pub fn client_events(&self) -> Vec<ClientEvent> {
        clients::read(&self.dir)
    }

    pub fn write_stats(&self, stats: &FuzzerStats) -> std::io::Result<()> {
        write_atomic(&self.dir, stats::STATS_FILE, stats.render().as_bytes()).map(|_| ())
    }

    pub fn stats(&self) -> Option<FuzzerStats> {
        FuzzerStats::read(&self.dir)
    }

    pub fn append_plot(&self, row: &PlotRow) -> std::io::Result<()> {
        stats::append_plot(&self.dir, row)
    }

    /// The instance's `plot_data` rows, oldest first.
    pub fn plot(&self) -> Vec<PlotRow> {
        stats::read_plot(&self.dir)
    }

    /// The saved inputs of `sub` (`id:*` files; others, hidden files and directories are
    /// skipped), by name. `rel_base` is the name their `rel` path starts with.
    fn inputs(&self, sub: InputDir, rel_base: &str) -> Result<Vec<SavedInput>, OutDirError> {
        let path = self.path(sub);
        if !path.is_dir() {
            return Ok(Vec::new());
        }
        let entries = fs::read_dir(&path).map_err(|e| OutDirError::Read(path.clone(), e))?;
        let mut found: Vec<SavedInput> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| {
                let file = e.file_name().to_string_lossy().into_owned();
                let name = EntryName::parse(&file)?;
                Some(SavedInput {
                    path: e.path(),
                    rel: format!("{rel_base}/{}/{file}", sub.name()),
                    instance: self.name.clone(),
                    dir: sub,
                    name,
                })
            })
            .collect();
        found.sort_by(|a, b| (a.name.id, &a.rel).cmp(&(b.name.id, &b.rel)));
        Ok(found)
    }
}

/// One saved input of a campaign.
#[derive(Clone, Debug)]
pub struct SavedInput {
    pub path: PathBuf,
    /// Path relative to the output directory (`default/crashes/id:000004,...`).
    pub rel: String,
    pub instance: String,
    pub dir: InputDir,
    pub name: EntryName,
}

impl SavedInput {
    /// Milliseconds since the instance started, from the name's `time:`.
    pub fn time_ms(&self) -> Option<u64> {
        self.name.time_ms
    }

    /// A hang, or a crash file that is a real signal (`crash`, `sig:NN`, `oom`) rather than a
    /// floating-point exception: an input that may kill or stall a replay.
    pub fn is_risky(&self) -> bool {
        self.dir == InputDir::Hangs
            || matches!(
                self.name.tag,
                Tag::Crash | Tag::Signal(_) | Tag::Hang | Tag::OutOfMemory
            )
    }
}

/// A campaign's output directory, opened for reading.
#[derive(Clone, Debug)]
pub struct OutDir {
    /// The directory input paths are relative to: the campaign directory, or the parent of a
    /// single instance directory given directly.
    pub root: PathBuf,
    pub instances: Vec<InstanceDir>,
}

impl OutDir {
    /// Opens `path`: a campaign directory with instance subdirectories, or one instance
    /// directory itself.
    pub fn open(path: &Path) -> Result<OutDir, OutDirError> {
        if !path.exists() {
            return Err(OutDirError::Missing(path.to_path_buf()));
        }
        if !path.is_dir() {
            return Err(OutDirError::NotACampaignDirectory(path.to_path_buf()));
        }
        let root = fs::canonicalize(path).map_err(|e| OutDirError::Read(path.to_path_buf(), e))?;
        let dirs = instance_dirs(&root);
        if !dirs.is_empty() {
            let instances = dirs.iter().map(|d| InstanceDir::at(d)).collect();
            return Ok(OutDir { root, instances });
        }
        if root.join("queue").is_dir() {
            let parent = root.parent().unwrap_or(&root).to_path_buf();
            return Ok(OutDir {
                instances: vec![InstanceDir::at(&root)],
                root: parent,
            });
        }
        Err(OutDirError::NoInstances(root))
    }

    pub fn instance_names(&self) -> Vec<String> {
        self.instances.iter().map(|i| i.name.clone()).collect()
    }

    /// Every saved input of the given subdirectories, instance by instance (by name), then
    /// subdirectory (in the order given), then id.
    pub fn inputs(&self, subs: &[InputDir]) -> Result<Vec<SavedInput>, OutDirError> {
        let mut all = Vec::new();
        for inst in &self.instances {
            for &sub in subs {
                all.extend(inst.inputs(sub, &inst.name)?);
            }
        }
        Ok(all)
    }

    /// The instance whose `cmdline` names the target, with that command line.
    pub fn recorded_command(&self) -> Option<(&InstanceDir, Vec<String>)> {
        self.instances.iter().find_map(|i| i.cmdline().map(|c| (i, c)))
    }

    /// The earliest `exceptions.jsonl` record of every finding over all instances, in time
    /// order, with `input` made relative to [`OutDir::root`].
    pub fn first_exceptions(&self) -> Vec<ExceptionRecord> {
        let mut first: BTreeMap<FindingKey, ExceptionRecord> = BTreeMap::new();
        for inst in &self.instances {
            for mut r in inst.exceptions() {
                r.input = format!("{}/{}", inst.name, r.input);
                let key = r.key();
                match first.get(&key) {
                    Some(old) if old.time_ms <= r.time_ms => {}
                    _ => {
                        first.insert(key, r);
                    }
                }
            }
        }
        let mut all: Vec<ExceptionRecord> = first.into_values().collect();
        all.sort_by_key(|r| r.time_ms);
        all
    }

    /// Every `exceptions.jsonl` record of every instance, `input` relative to the root.
    pub fn all_exceptions(&self) -> Vec<ExceptionRecord> {
        let mut all = Vec::new();
        for inst in &self.instances {
            for mut r in inst.exceptions() {
                r.input = format!("{}/{}", inst.name, r.input);
                all.push(r);
            }
        }
        all.sort_by_key(|r| r.time_ms);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name::Provenance;
    use numfuzz_abi::kind::ExceptionKind;

    #[test]
    fn fresh_resume_and_refusals() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let target = Path::new("/bin/true");
        assert_eq!(prepare(&out, target).unwrap(), OutState::Fresh);
        let inst = InstanceDir::create(&out, "default").unwrap();
        inst.write_cmdline(target, &["@@".into()]).unwrap();
        assert_eq!(inst.cmdline().unwrap(), ["/bin/true", "@@"]);
        assert_eq!(prepare(&out, target).unwrap(), OutState::Resume);
        let other = prepare(&out, Path::new("/bin/false")).unwrap_err().to_string();
        assert!(other.contains("another target (/bin/true)"), "{other}");

        let foreign = tmp.path().join("foreign");
        fs::create_dir_all(&foreign).unwrap();
        fs::write(foreign.join("notes.txt"), "x").unwrap();
        let e = prepare(&foreign, target).unwrap_err().to_string();
        assert!(e.contains("not a numfuzz or AFL++ output directory (notes.txt)"), "{e}");
        assert!(foreign.join("notes.txt").exists(), "nothing lost");

        let file = tmp.path().join("file");
        fs::write(&file, "x").unwrap();
        assert!(matches!(prepare(&file, target), Err(OutDirError::NotADirectory(_))));
    }

    #[test]
    fn ids_continue_after_existing_files_and_saves_are_atomic() {
        let tmp = tempfile::tempdir().unwrap();
        let inst = InstanceDir::create(tmp.path(), "default").unwrap();
        assert_eq!(inst.next_id(InputDir::Crashes), 0);
        let prov = Provenance {
            src: None,
            time_ms: 5,
            execs: 1,
        };
        inst.save(InputDir::Crashes, &EntryName::new(7, Tag::Crash, prov, &[]), b"x")
            .unwrap();
        inst.save(InputDir::Crashes, &EntryName::new(2, Tag::Hang, prov, &[]), b"x")
            .unwrap();
        assert_eq!(inst.next_id(InputDir::Crashes), 8);
        assert_eq!(inst.next_id(InputDir::Queue), 0);
        let names: Vec<String> = fs::read_dir(inst.path(InputDir::Crashes))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    }

    #[test]
    fn reading_a_campaign_of_several_instances_or_one_instance_dir() {
        let tmp = tempfile::tempdir().unwrap();
        for rel in [
            "default/queue/id:000000,time:0,orig:seed",
            "default/queue/id:000001,src:000000,time:7,+cov",
            "default/crashes/id:000000,kind:Overflow,site:a.c:1:2,time:9",
            "default/crashes/id:000001,crash,src:000001,time:11",
            "core1/crashes/id:000000,sig:11,src:000000,time:3,execs:5",
            "core1/hangs/id:000000,hang,src:000000,time:4",
            "core1/queue/id:000000,time:1",
        ] {
            let p = tmp.path().join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, b"x").unwrap();
        }
        fs::write(tmp.path().join("default/crashes/README.txt"), b"afl notes").unwrap();
        fs::create_dir_all(tmp.path().join("default/queue/.state")).unwrap();
        let out = OutDir::open(tmp.path()).unwrap();
        assert_eq!(out.instance_names(), ["core1", "default"]);
        let inputs = out.inputs(&InputDir::ALL).unwrap();
        let rels: Vec<&str> = inputs.iter().map(|i| i.rel.as_str()).collect();
        assert_eq!(
            rels,
            [
                "core1/queue/id:000000,time:1",
                "core1/crashes/id:000000,sig:11,src:000000,time:3,execs:5",
                "core1/hangs/id:000000,hang,src:000000,time:4",
                "default/queue/id:000000,time:0,orig:seed",
                "default/queue/id:000001,src:000000,time:7,+cov",
                "default/crashes/id:000000,kind:Overflow,site:a.c:1:2,time:9",
                "default/crashes/id:000001,crash,src:000001,time:11",
            ]
        );
        let risky: Vec<bool> = inputs.iter().map(SavedInput::is_risky).collect();
        assert_eq!(risky, [false, true, true, false, false, false, true]);
        assert_eq!(inputs[4].time_ms(), Some(7));
        assert_eq!(
            inputs[5].name.tag,
            Tag::Exception {
                kind: ExceptionKind::Overflow,
                site: "a.c:1:2".into()
            }
        );

        // One instance directory given directly: paths stay relative to its parent.
        let one = OutDir::open(&tmp.path().join("default")).unwrap();
        assert_eq!(one.instance_names(), ["default"]);
        assert_eq!(
            one.inputs(&InputDir::ALL).unwrap()[0].rel,
            "default/queue/id:000000,time:0,orig:seed"
        );

        let empty = tempfile::tempdir().unwrap();
        assert!(matches!(OutDir::open(empty.path()), Err(OutDirError::NoInstances(_))));
        assert!(matches!(
            OutDir::open(&empty.path().join("nothing")),
            Err(OutDirError::Missing(_))
        ));
    }

    #[test]
    fn the_first_record_of_each_finding_over_instances() {
        use numfuzz_abi::site::SiteInfo;
        use numfuzz_abi::{FloatType, Op};
        let tmp = tempfile::tempdir().unwrap();
        let site = |line| SiteInfo {
            id: 0,
            op: Op::FMul,
            ty: FloatType::F64,
            to: None,
            file: "/s/a.c".into(),
            directory: String::new(),
            line,
            column: 3,
            function: "f".into(),
        };
        let rec = |time_ms, line, input: &str| ExceptionRecord {
            time_ms,
            kind: ExceptionKind::Overflow,
            site: site(line),
            input: input.into(),
            escape: false,
        };
        let a = InstanceDir::create(tmp.path(), "core0").unwrap();
        let b = InstanceDir::create(tmp.path(), "core1").unwrap();
        a.append_exception(&rec(50, 1, "crashes/id:000000")).unwrap();
        a.append_exception(&rec(70, 2, "crashes/id:000001")).unwrap();
        b.append_exception(&rec(20, 1, "crashes/id:000000")).unwrap();
        let out = OutDir::open(tmp.path()).unwrap();
        let first = out.first_exceptions();
        let got: Vec<(u64, u32, &str)> = first
            .iter()
            .map(|r| (r.time_ms, r.site.line, r.input.as_str()))
            .collect();
        assert_eq!(
            got,
            [(20, 1, "core1/crashes/id:000000"), (70, 2, "core0/crashes/id:000001")]
        );
        assert_eq!(out.all_exceptions().len(), 3);
    }
}
