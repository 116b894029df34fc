//! The AFL++-style output directory: `OUT/<instance>/{queue,crashes,hangs}/id:NNNNNN,...`,
//! `fuzzer_stats`, `plot_data`, `cmdline`, and numfuzz's `exceptions.jsonl`.
//!
//! Files are written to a temporary name and renamed, so a campaign stopped at any moment
//! (Ctrl-C, `-V`, a crash of the fuzzer) leaves only complete files behind.

use numfuzz_abi::kind::ExceptionKind;
use numfuzz_abi::site::SiteInfo;
use serde::{Deserialize, Serialize};
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Marker file that makes a directory recognisably a numfuzz output directory.
pub const MARKER: &str = ".numfuzz";

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("-o {0}: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("-o {path} holds something that is not a numfuzz or AFL++ output directory ({found}); choose a new or empty directory")]
    Foreign { path: PathBuf, found: String },
    #[error("-o {path} holds a campaign of another target ({other}); use a new -o, or the same target to resume it")]
    OtherCampaign { path: PathBuf, other: String },
    #[error("-o {0} is a file, not a directory")]
    NotADirectory(PathBuf),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> OutputError + '_ {
    move |e| OutputError::Io(path.to_path_buf(), e)
}

/// What `-o` holds before a campaign starts.
#[derive(Debug, PartialEq, Eq)]
pub enum OutState {
    /// Nothing yet (created or empty).
    Fresh,
    /// A previous campaign of the same target: resume it.
    Resume,
}

/// Instance directories (those with a `queue/` or `fuzzer_stats`) below `root`.
pub fn instance_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("queue").is_dir() || p.join("fuzzer_stats").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// The target a campaign directory was run on (first line of an instance's `cmdline`).
fn recorded_target(root: &Path) -> Option<String> {
    instance_dirs(root)
        .iter()
        .find_map(|d| fs::read_to_string(d.join("cmdline")).ok())
        .and_then(|text| text.lines().next().map(str::to_string))
}

/// Validates `-o` for a campaign on `target` and creates it if needed.
pub fn prepare(root: &Path, target: &Path) -> Result<OutState, OutputError> {
    if root.exists() && !root.is_dir() {
        return Err(OutputError::NotADirectory(root.to_path_buf()));
    }
    if !root.exists() {
        fs::create_dir_all(root).map_err(io(root))?;
        fs::write(root.join(MARKER), "numfuzz output directory\n").map_err(io(root))?;
        return Ok(OutState::Fresh);
    }
    let entries: Vec<String> = fs::read_dir(root)
        .map_err(io(root))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if entries.is_empty() {
        fs::write(root.join(MARKER), "numfuzz output directory\n").map_err(io(root))?;
        return Ok(OutState::Fresh);
    }
    let instances = instance_dirs(root);
    if instances.is_empty() && !entries.iter().any(|e| e == MARKER) {
        let mut shown: Vec<&str> = entries.iter().map(String::as_str).take(3).collect();
        if entries.len() > 3 {
            shown.push("...");
        }
        return Err(OutputError::Foreign {
            path: root.to_path_buf(),
            found: shown.join(", "),
        });
    }
    if let Some(other) = recorded_target(root) {
        let same = Path::new(&other) == target
            || fs::canonicalize(&other)
                .ok()
                .zip(fs::canonicalize(target).ok())
                .is_some_and(|(a, b)| a == b);
        if !same {
            return Err(OutputError::OtherCampaign {
                path: root.to_path_buf(),
                other,
            });
        }
    }
    if !root.join(MARKER).exists() {
        fs::write(root.join(MARKER), "numfuzz output directory\n").map_err(io(root))?;
    }
    Ok(if instances.is_empty() {
        OutState::Fresh
    } else {
        OutState::Resume
    })
}

/// Writes `bytes` to `dir/name` atomically.
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let tmp = dir.join(format!(".{name}.tmp"));
    fs::write(&tmp, bytes)?;
    let path = dir.join(name);
    fs::rename(&tmp, &path)?;
    Ok(path)
}

/// Characters that cannot appear in an AFL-style file name component.
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == '/' || c == ',' || c.is_whitespace() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// `site:exp.c:406:17`: the file's last component (the name must stay a single path
/// component; the full path is in exceptions.jsonl).
pub fn site_label(site: &SiteInfo) -> String {
    let file = Path::new(&site.file)
        .file_name()
        .map_or(site.file.clone(), |f| f.to_string_lossy().into_owned());
    format!("{}:{}:{}", sanitize(&file), site.line, site.column)
}

/// Largest `id:NNNNNN` in a directory, plus one.
pub fn next_id(dir: &Path) -> u64 {
    fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix("id:")?.split(',').next()?.parse::<u64>().ok()
        })
        .max()
        .map_or(0, |m| m + 1)
}

/// One line of `exceptions.jsonl`: a (site, kind) seen for the first time by this instance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExceptionRecord {
    /// Milliseconds since the campaign started.
    pub time_ms: u64,
    pub kind: ExceptionKind,
    pub site: SiteInfo,
    /// The input that raised it, relative to the instance directory (`crashes/id:...`).
    pub input: String,
}

/// One instance's directory.
#[derive(Clone, Debug)]
pub struct InstanceDir {
    pub dir: PathBuf,
    pub name: String,
}

impl InstanceDir {
    /// Creates (or reopens) `root/name` with its subdirectories.
    pub fn open(root: &Path, name: &str) -> Result<InstanceDir, OutputError> {
        let dir = root.join(name);
        for sub in ["queue", "crashes", "hangs"] {
            fs::create_dir_all(dir.join(sub)).map_err(io(&dir))?;
        }
        Ok(InstanceDir {
            dir,
            name: name.to_string(),
        })
    }

    pub fn queue(&self) -> PathBuf {
        self.dir.join("queue")
    }
    pub fn crashes(&self) -> PathBuf {
        self.dir.join("crashes")
    }
    pub fn hangs(&self) -> PathBuf {
        self.dir.join("hangs")
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

    /// Appends one line to `exceptions.jsonl`.
    pub fn append_exception(&self, record: &ExceptionRecord) -> std::io::Result<()> {
        let mut line = serde_json::to_string(record).map_err(std::io::Error::other)?;
        line.push('\n');
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("exceptions.jsonl"))?;
        f.write_all(line.as_bytes())
    }

    /// The instance's `exceptions.jsonl`, oldest first.
    pub fn exceptions(&self) -> Vec<ExceptionRecord> {
        read_exceptions(&self.dir)
    }
}

/// Reads `dir/exceptions.jsonl` (malformed lines are skipped: a line cut by a crash).
pub fn read_exceptions(dir: &Path) -> Vec<ExceptionRecord> {
    fs::read_to_string(dir.join("exceptions.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_resume_and_refusals() {
        let tmp = tempfile_dir();
        let out = tmp.join("out");
        let target = Path::new("/bin/true");
        assert_eq!(prepare(&out, target).unwrap(), OutState::Fresh);
        let inst = InstanceDir::open(&out, "default").unwrap();
        inst.write_cmdline(target, &["@@".into()]).unwrap();
        assert_eq!(prepare(&out, target).unwrap(), OutState::Resume);
        let other = prepare(&out, Path::new("/bin/false")).unwrap_err().to_string();
        assert!(other.contains("another target (/bin/true)"), "{other}");

        let foreign = tmp.join("foreign");
        fs::create_dir_all(&foreign).unwrap();
        fs::write(foreign.join("notes.txt"), "x").unwrap();
        let e = prepare(&foreign, target).unwrap_err().to_string();
        assert!(e.contains("not a numfuzz or AFL++ output directory (notes.txt)"), "{e}");
        assert!(foreign.join("notes.txt").exists(), "nothing lost");

        let file = tmp.join("file");
        fs::write(&file, "x").unwrap();
        assert!(matches!(prepare(&file, target), Err(OutputError::NotADirectory(_))));
        fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn ids_continue_after_existing_files() {
        let tmp = tempfile_dir();
        assert_eq!(next_id(&tmp), 0);
        write_atomic(&tmp, "id:000007,time:5", b"x").unwrap();
        write_atomic(&tmp, "id:000002,kind:Overflow", b"x").unwrap();
        assert_eq!(next_id(&tmp), 8);
        assert!(!tmp.join(".id:000007,time:5.tmp").exists());
        fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn site_labels_are_one_path_component() {
        let site = SiteInfo {
            id: 0,
            op: numfuzz_abi::Op::FMul,
            ty: numfuzz_abi::FloatType::F64,
            to: None,
            file: "specfunc/exp.c".into(),
            directory: "/b".into(),
            line: 406,
            column: 17,
            function: "f".into(),
        };
        assert_eq!(site_label(&site), "exp.c:406:17");
    }

    fn tempfile_dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "numfuzz-out-test-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }
}
