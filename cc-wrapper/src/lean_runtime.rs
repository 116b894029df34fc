//! The runtime archive as it is linked: the lean build when it is current
//! ([`newest_archive`]), through a copy without debug sections and local symbols.
//!
//! Rust's precompiled standard library carries debug information into the runtime archive
//! (about 5 MB in every linked program, a third of a small harness), and the LTO build turns
//! almost every Rust symbol into a local one (3 MB of names); nothing reads either. A crash
//! report symbolises the program's frames from the program's own debug information and stops
//! at `LLVMFuzzerTestOneInput`; a panic of the runtime names its source line without them.
//! So the wrapper links a copy made with `llvm-objcopy --strip-debug --strip-unneeded`
//! (what relocations and the program's own symbols need stays) beside the archive, the first
//! time a link needs it after a runtime build. When no copy can be made (no `llvm-objcopy`,
//! a read-only install), the archive itself is linked: the program is the same, only larger.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The runtime archive's file name.
pub const ARCHIVE: &str = "libnumfuzz_runtime.a";

/// The runtime without the in-process engine (numfuzz-runtime's `inprocess` feature off), which
/// `scripts/build.sh` puts beside [`ARCHIVE`]: replay-only builds (taint, shadow, llvm-cov)
/// are never fuzzed in-process, and LibAFL was most of what they linked.
pub const CORE_ARCHIVE: &str = "libnumfuzz_runtime_core.a";

/// Cargo's profile for the runtime as harnesses link it (the workspace's Cargo.toml): the
/// release build with whole-program LTO in one codegen unit, which halves the code it brings
/// into every program (LibAFL's generic code, instantiated once per crate otherwise).
pub const LEAN_PROFILE: &str = "harness";

/// The archive beside the tools in `exe_dir` (`target/release`), or the one of the
/// [`LEAN_PROFILE`] build (`target/harness`) when that one is at least as new: a developer who
/// rebuilds only the release profile links the code they just built, a full build
/// (`scripts/build.sh`) the lean one.
pub fn newest_archive(exe_dir: &Path) -> PathBuf {
    let release = exe_dir.join(ARCHIVE);
    let Some(lean) = exe_dir.parent().map(|target| target.join(LEAN_PROFILE).join(ARCHIVE)) else {
        return release;
    };
    match (modified(&lean), modified(&release)) {
        (Some(built), release_built) if Some(built) >= release_built => lean,
        _ => release,
    }
}

/// What a replay-only build links in place of `archive`: the core archive beside it when it
/// was made from the same build (it is not older), else `archive` itself (a runtime rebuilt by
/// `cargo build` alone has no current core archive; the program is the same, only larger).
pub fn replay_only_archive(archive: &Path) -> PathBuf {
    let core = archive.with_file_name(CORE_ARCHIVE);
    match (modified(&core), modified(archive)) {
        (Some(core_built), Some(built)) if core_built >= built => core,
        _ => archive.to_path_buf(),
    }
}

fn modified(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The stripped copy's name beside `archive`.
pub fn stripped_name(archive: &Path) -> PathBuf {
    archive.with_extension("nodebug.a")
}

/// Whether `copy` was made from the current `archive` (it is not older).
fn is_fresh(copy: &Path, archive: &Path) -> bool {
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
        .args(["--strip-debug", "--strip-unneeded"])
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

    /// Makes `path` a minute old.
    fn age(path: &Path) {
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(old).unwrap();
    }

    #[test]
    fn links_use_the_lean_build_unless_the_release_build_is_newer() {
        let target = tempfile::tempdir().unwrap();
        let (release, lean) = (target.path().join("release"), target.path().join(LEAN_PROFILE));
        std::fs::create_dir_all(&release).unwrap();
        let runtime_in = |dir: &Path| {
            let archive = dir.join(ARCHIVE);
            std::fs::write(&archive, b"!<arch>\n").unwrap();
            archive
        };
        let release_archive = runtime_in(&release);
        assert_eq!(newest_archive(&release), release_archive, "no lean build");
        std::fs::create_dir_all(&lean).unwrap();
        let lean_archive = runtime_in(&lean);
        age(&release_archive);
        assert_eq!(newest_archive(&release), lean_archive);
        age(&lean_archive);
        std::fs::write(&release_archive, b"!<arch>\n").unwrap();
        assert_eq!(newest_archive(&release), release_archive, "rebuilt in release only");
    }

    #[test]
    fn replay_only_builds_link_the_core_archive_only_when_it_is_current() {
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join(ARCHIVE);
        std::fs::write(&archive, b"!<arch>\n").unwrap();
        assert_eq!(replay_only_archive(&archive), archive, "no core archive");
        let core = dir.path().join(CORE_ARCHIVE);
        std::fs::write(&core, b"!<arch>\n").unwrap();
        age(&archive);
        assert_eq!(replay_only_archive(&archive), core);
        age(&core);
        std::fs::write(&archive, b"!<arch>\n").unwrap();
        assert_eq!(replay_only_archive(&archive), archive, "runtime rebuilt since");
    }

    #[test]
    fn a_copy_older_than_its_archive_is_made_again() {
        let dir = tempfile::tempdir().unwrap();
        let archive = archive_in(dir.path());
        let copy = stripped_name(&archive);
        assert_eq!(copy, dir.path().join("libx.nodebug.a"));
        std::fs::write(&copy, b"stale").unwrap();
        age(&copy);
        assert!(!is_fresh(&copy, &archive));
        // `true` "strips" by leaving no file: the stale copy must not be linked.
        assert_eq!(linked_archive(&archive, Path::new("true")), archive);
    }
}
