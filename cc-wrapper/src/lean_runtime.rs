//! The runtime archive as it is linked: a copy without debug sections.
//!
//! Rust's precompiled standard library carries debug information into the runtime archive
//! (about 5 MB in every linked program, a third of a small harness), and nothing reads it:
//! a crash report symbolises the program's frames from the program's own debug information,
//! and the runtime's frames by their symbol names. So the wrapper links a copy stripped of
//! debug sections, made with `llvm-objcopy` beside the archive the first time a link needs
//! it after a runtime build. When no copy can be made (no `llvm-objcopy`, a read-only
//! install), the archive itself is linked: the program is the same, only larger.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The stripped copy's name beside `archive`.
pub fn stripped_name(archive: &Path) -> PathBuf {
    archive.with_extension("nodebug.a")
}

/// Whether `copy` was made from the current `archive` (it is not older).
fn is_fresh(copy: &Path, archive: &Path) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match (modified(copy), modified(archive)) {
        (Some(c), Some(a)) => c >= a,
        _ => false,
    }
}

/// The archive to link in place of `archive`: its stripped copy, made with `objcopy` when
/// missing or stale, else `archive` itself.
pub fn linked_archive(archive: &Path, objcopy: &Path) -> PathBuf {
    let copy = stripped_name(archive);
    if is_fresh(&copy, archive) {
        return copy;
    }
    // Parallel links (make -j) each write their own file; the last rename wins, and every
    // one of them is a complete copy of the same archive.
    let partial = archive.with_extension(format!("nodebug.{}.tmp", std::process::id()));
    let stripped = Command::new(objcopy)
        .arg("--strip-debug")
        .arg(archive)
        .arg(&partial)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if stripped && std::fs::rename(&partial, &copy).is_ok() {
        return copy;
    }
    let _ = std::fs::remove_file(&partial);
    archive.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archive_in(dir: &Path) -> PathBuf {
        let archive = dir.join("libx.a");
        std::fs::write(&archive, b"!<arch>\n").unwrap();
        archive
    }

    #[test]
    fn without_objcopy_the_archive_itself_is_linked_and_nothing_is_left_behind() {
        let dir = tempfile::tempdir().unwrap();
        let archive = archive_in(dir.path());
        let linked = linked_archive(&archive, Path::new("/nonexistent/llvm-objcopy"));
        assert_eq!(linked, archive);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["libx.a"]);
    }

    #[test]
    fn a_copy_older_than_its_archive_is_made_again() {
        let dir = tempfile::tempdir().unwrap();
        let archive = archive_in(dir.path());
        let copy = stripped_name(&archive);
        assert_eq!(copy, dir.path().join("libx.nodebug.a"));
        std::fs::write(&copy, b"stale").unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(&copy)
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert!(!is_fresh(&copy, &archive));
        // `true` "strips" by leaving no file: the stale copy must not be linked.
        assert_eq!(linked_archive(&archive, Path::new("true")), archive);
    }
}
