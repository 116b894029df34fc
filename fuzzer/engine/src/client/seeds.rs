//! A client's starting corpus: what an earlier run of the same instance directory found, the
//! user's seeds (`-i`), or seeds built from the input signature.

use super::{Fuzzer, LoopParts, Mgr, Observers, State};
use crate::config::CampaignConfig;
use crate::context::Instance;
use crate::stop::stop_requested;
use libafl::corpus::Corpus;
use libafl::executors::{Executor, HasObservers};
use libafl::fuzzer::Evaluator;
use libafl::inputs::BytesInput;
use libafl::state::HasCorpus;
use libafl::Error;
use numfuzz_abi::signature::Signature;
use numfuzz_outdir::InputDir;
use std::path::{Path, PathBuf};

/// Files under `path` (or `path` itself), sorted, skipping hidden ones.
fn collect_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        out.push(path.to_path_buf());
    } else if let Ok(entries) = std::fs::read_dir(path) {
        let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            let hidden = p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
            if !hidden {
                collect_files(&p, out);
            }
        }
    }
}

/// Seeds when the user gave none: built from the signature, or a few byte patterns.
fn default_seeds(signature: Option<&Signature>) -> Vec<Vec<u8>> {
    match signature {
        Some(sig) => crate::mutators::seeds(sig),
        None => vec![
            vec![0u8; 8],
            vec![0xffu8; 8],
            b"1.0".to_vec(),
            vec![0x3f, 0xf0, 0, 0, 0, 0, 0, 0],
        ],
    }
}

/// The instance directory holds an earlier run's queue (`numfuzz run` on an existing `-o`).
pub fn resuming(instance: &Instance) -> bool {
    instance
        .out
        .path(InputDir::Queue)
        .read_dir()
        .is_ok_and(|mut d| d.next().is_some())
}

/// Fills the corpus of a client that starts afresh (not a restarted one, whose state already
/// has it). An earlier run's findings are re-read first, without being written again, so their
/// exceptions count as seen; then its queue. Without an earlier run: the user's seeds, else
/// the default ones.
pub fn load<E>(
    cfg: &CampaignConfig,
    instance: &Instance,
    resuming: bool,
    signature: Option<&Signature>,
    parts: LoopParts<'_, E>,
) -> Result<(), Error>
where
    E: Executor<Mgr, BytesInput, State, Fuzzer> + HasObservers<Observers = Observers>,
{
    let LoopParts {
        fuzzer,
        executor,
        state,
        mgr,
    } = parts;
    if resuming {
        instance.set_importing(true);
        let mut files = Vec::new();
        collect_files(&instance.out.path(InputDir::Crashes), &mut files);
        collect_files(&instance.out.path(InputDir::Queue), &mut files);
        for f in files {
            // A stop asked for while a big campaign is re-read: what is left is re-read next time.
            if stop_requested() {
                instance.set_importing(false);
                return Err(Error::shutting_down());
            }
            if let Ok(bytes) = std::fs::read(&f) {
                fuzzer.evaluate_input(state, executor, mgr, &BytesInput::new(bytes))?;
            }
        }
        instance.set_importing(false);
    }
    if state.corpus().count() > 0 {
        return Ok(());
    }
    let mut inputs = Vec::new();
    if let Some(seeds) = &cfg.seeds {
        let mut files = Vec::new();
        collect_files(seeds, &mut files);
        inputs.extend(files.iter().filter_map(|f| std::fs::read(f).ok()));
    }
    if inputs.is_empty() {
        inputs = default_seeds(signature);
    }
    for bytes in inputs {
        fuzzer.add_input(state, executor, mgr, BytesInput::new(bytes))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_files_are_read_in_order_without_hidden_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        for name in ["b", "a", ".hidden", "sub/c"] {
            std::fs::write(dir.path().join(name), name).unwrap();
        }
        let mut files = Vec::new();
        collect_files(dir.path(), &mut files);
        let names: Vec<String> = files
            .iter()
            .map(|f| f.strip_prefix(dir.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["a", "b", "sub/c"]);
    }

    #[test]
    fn default_seeds_follow_the_signature() {
        let sig: Signature = "f64,i32".parse().unwrap();
        let seeds = default_seeds(Some(&sig));
        assert!(!seeds.is_empty() && seeds.iter().all(|s| s.len() == 12), "{seeds:?}");
        assert!(default_seeds(None).iter().all(|s| !s.is_empty()));
    }
}
