//! The inputs of a campaign directory: every instance's queue, crashes and hangs, in the
//! layout numfuzz and afl-fuzz share (`OUT/<instance>/{queue,crashes,hangs}/id:…`).

use super::CovError;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Where an input was saved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    Queue,
    Crashes,
    Hangs,
}

impl InputKind {
    pub const ALL: [InputKind; 3] = [InputKind::Queue, InputKind::Crashes, InputKind::Hangs];

    pub fn dir_name(self) -> &'static str {
        match self {
            InputKind::Queue => "queue",
            InputKind::Crashes => "crashes",
            InputKind::Hangs => "hangs",
        }
    }
}

/// One saved input.
#[derive(Clone, Debug)]
pub struct Input {
    pub path: PathBuf,
    pub kind: InputKind,
    /// Milliseconds since the instance started (the `time:` field of the name), if named so.
    pub time_ms: Option<u64>,
}

impl Input {
    /// Inputs that may kill or stall the coverage build: hangs, and crashes that were real
    /// signals (numfuzz names them `…,crash,…`, afl-fuzz `…,sig:NN,…`) rather than
    /// floating-point exceptions. They are replayed one process each.
    pub fn is_risky(&self) -> bool {
        match self.kind {
            InputKind::Hangs => true,
            InputKind::Crashes => {
                let name = self
                    .path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                name.split(',').any(|part| part == "crash" || part.starts_with("sig:"))
            }
            InputKind::Queue => false,
        }
    }
}

/// The `time:` field of an AFL-style file name (`id:000012,src:000003,time:812,…`).
pub fn time_field(name: &str) -> Option<u64> {
    name.split(',')
        .find_map(|part| part.strip_prefix("time:"))
        .and_then(|t| t.parse().ok())
}

/// The instance directories under `out`: `out` itself when it has a `queue/`, else every
/// subdirectory that has one (numfuzz's `default`/`coreN`, afl-fuzz's `default`/`-M`/`-S` names).
pub fn instances(out: &Path) -> Result<Vec<PathBuf>, CovError> {
    if !out.is_dir() {
        return Err(CovError::NoOutDir(out.to_path_buf()));
    }
    if out.join("queue").is_dir() {
        return Ok(vec![out.to_path_buf()]);
    }
    let entries = std::fs::read_dir(out).map_err(|e| CovError::Io(out.to_path_buf(), e))?;
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("queue").is_dir())
        .collect();
    found.sort();
    if found.is_empty() {
        return Err(CovError::NoQueue(out.to_path_buf()));
    }
    Ok(found)
}

/// Every saved input (`id:*` files) of every instance under `out`, instance by instance,
/// queue then crashes then hangs, each in name order.
pub fn collect(out: &Path) -> Result<Vec<Input>, CovError> {
    let mut inputs = Vec::new();
    for instance in instances(out)? {
        for kind in InputKind::ALL {
            let dir = instance.join(kind.dir_name());
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            let mut files: Vec<(String, PathBuf)> = entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                .filter(|(name, _)| name.starts_with("id:"))
                .collect();
            files.sort();
            inputs.extend(files.into_iter().map(|(name, path)| Input {
                time_ms: time_field(&name),
                path,
                kind,
            }));
        }
    }
    Ok(inputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_fields_of_numfuzz_and_afl_names() {
        assert_eq!(
            time_field("id:000012,src:000003,time:812,execs:90321,+errbits"),
            Some(812)
        );
        assert_eq!(time_field("id:000000,time:0,execs:0,orig:zero"), Some(0));
        assert_eq!(
            time_field("id:000004,kind:Overflow,site:exprel2.c:27:15,src:000011,time:625,execs:9"),
            Some(625)
        );
        assert_eq!(time_field("id:000001,orig:seed"), None);
    }

    #[test]
    fn collects_instances_kinds_and_skips_other_files() {
        let dir = tempfile::tempdir().unwrap();
        for (rel, risky) in [
            ("default/queue/id:000000,time:0,orig:seed", false),
            ("default/queue/id:000001,src:000000,time:7,+cov", false),
            ("default/crashes/id:000000,kind:Overflow,site:a.c:1:2,time:9", false),
            ("default/crashes/id:000001,crash,src:000001,time:11", true),
            ("core1/crashes/id:000000,sig:11,src:000000,time:3,execs:5", true),
            ("core1/hangs/id:000000,hang,src:000000,time:4", true),
            ("core1/queue/id:000000,time:1", false),
        ] {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, b"x").unwrap();
            let input = Input {
                path: p,
                kind: kind_of(rel),
                time_ms: None,
            };
            assert_eq!(input.is_risky(), risky, "{rel}");
        }
        std::fs::write(dir.path().join("default/crashes/README.txt"), b"afl notes").unwrap();
        std::fs::create_dir_all(dir.path().join("default/queue/.state")).unwrap();
        let inputs = collect(dir.path()).unwrap();
        let names: Vec<String> = inputs
            .iter()
            .map(|i| i.path.strip_prefix(dir.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
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
        assert_eq!(inputs[4].time_ms, Some(7));
        // An instance directory itself is accepted too.
        assert_eq!(collect(&dir.path().join("default")).unwrap().len(), 4);
        let empty = tempfile::tempdir().unwrap();
        assert!(matches!(collect(empty.path()), Err(CovError::NoQueue(_))));
    }

    fn kind_of(rel: &str) -> InputKind {
        if rel.contains("/hangs/") {
            InputKind::Hangs
        } else if rel.contains("/crashes/") {
            InputKind::Crashes
        } else {
            InputKind::Queue
        }
    }
}
