//! Repairing what a hard stop (kill -9 of every process, a power cut) can leave in an output
//! directory, before a campaign resumes in it.
//!
//! Inputs, `fuzzer_stats` and `cmdline` are written under a temporary name and renamed, so a
//! stop leaves at most a hidden `.NAME….tmp` beside complete files. The `.jsonl` and
//! `plot_data` files are appended one line per `write`, so a stop leaves at most a cut last
//! line, which the next append would glue to its own line and spoil both.

use crate::clients::{self, ClientHistory};
use crate::layout::{InputDir, OutDir};
use crate::records::EXCEPTIONS_FILE;
use crate::stats::PLOT_FILE;
use std::fs;
use std::io;
use std::path::Path;

/// Removes `.*.tmp` files from `dir`; returns their names.
fn remove_partial_files(dir: &Path) -> io::Result<Vec<String>> {
    let mut removed = Vec::new();
    for entry in fs::read_dir(dir)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') && name.ends_with(".tmp") && entry.file_type().is_ok_and(|t| t.is_file()) {
            fs::remove_file(entry.path())?;
            removed.push(name);
        }
    }
    Ok(removed)
}

/// Cuts `path` back to its last complete line; returns whether anything was cut.
fn cut_partial_line(path: &Path) -> io::Result<bool> {
    let Ok(bytes) = fs::read(path) else { return Ok(false) };
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return Ok(false);
    }
    let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    fs::OpenOptions::new().write(true).open(path)?.set_len(keep as u64)?;
    Ok(true)
}

/// Repairs every instance of the campaign directory `root`; returns one line per thing it
/// found, for the user: half-written files removed, cut lines dropped, and instances whose
/// last campaign ended without its clients finishing.
pub fn repair(root: &Path) -> io::Result<Vec<String>> {
    let Ok(dir) = OutDir::open(root) else {
        return Ok(Vec::new());
    };
    let mut said = Vec::new();
    for inst in &dir.instances {
        let mut removed = remove_partial_files(&inst.dir)?;
        for sub in InputDir::ALL {
            let path = inst.path(sub);
            if path.is_dir() {
                removed.extend(
                    remove_partial_files(&path)?
                        .into_iter()
                        .map(|n| format!("{}/{n}", sub.name())),
                );
            }
        }
        if !removed.is_empty() {
            said.push(format!(
                "{}: removed {} half-written file(s) ({})",
                inst.name,
                removed.len(),
                removed.join(", ")
            ));
        }
        for file in [EXCEPTIONS_FILE, clients::CLIENTS_FILE, PLOT_FILE] {
            if cut_partial_line(&inst.dir.join(file))? {
                said.push(format!("{}: dropped a cut last line of {file}", inst.name));
            }
        }
        let events = inst.client_events();
        if let Some(last) = events.last() {
            let history = ClientHistory::of(&events, last.campaign_ms());
            if let Some(pid) = history.unfinished() {
                said.push(format!(
                    "{}: the previous campaign ended without its client (pid {pid}) finishing; going on from what it left",
                    inst.name
                ));
            }
        }
    }
    Ok(said)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::ClientEvent;
    use crate::layout::InstanceDir;

    #[test]
    fn a_hard_stop_leaves_nothing_that_spoils_the_resume() {
        let root = tempfile::tempdir().unwrap();
        fs::write(root.path().join(crate::layout::MARKER), "").unwrap();
        let inst = InstanceDir::create(root.path(), "default").unwrap();
        fs::write(inst.path(InputDir::Queue).join("id:000000,orig:seed"), b"ok").unwrap();
        fs::write(inst.path(InputDir::Queue).join(".id:000001,src:000000.tmp"), b"ha").unwrap();
        fs::write(inst.dir.join(".fuzzer_stats.tmp"), b"exec").unwrap();
        fs::write(inst.dir.join(EXCEPTIONS_FILE), b"{\"a\":1}\n{\"time_ms\":").unwrap();
        inst.append_client_event(&ClientEvent::Start {
            pid: 42,
            campaign_ms: 7,
            time_ms: 0,
            restored: false,
            oom_kills: None,
        })
        .unwrap();

        let said = repair(root.path()).unwrap();
        let text = said.join("\n");
        assert!(text.contains("removed 2 half-written file(s)"), "{text}");
        assert!(text.contains("queue/.id:000001,src:000000.tmp"), "{text}");
        assert!(text.contains("cut last line of exceptions.jsonl"), "{text}");
        assert!(text.contains("client (pid 42) finishing"), "{text}");
        assert_eq!(fs::read(inst.dir.join(EXCEPTIONS_FILE)).unwrap(), b"{\"a\":1}\n");
        assert!(inst.path(InputDir::Queue).join("id:000000,orig:seed").is_file());
        assert_eq!(fs::read_dir(inst.path(InputDir::Queue)).unwrap().count(), 1);
        // Repaired once, nothing more to say but the unfinished campaign.
        assert_eq!(repair(root.path()).unwrap().len(), 1);
    }
}
