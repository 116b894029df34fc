//! The one writer of an instance's saved inputs: `queue/`, `crashes/` and `hangs/` with
//! AFL++-style names (numfuzz-outdir's `EntryName`), numbered by the instance's counters, with
//! the provenance of the run that found them, and the `exceptions.jsonl` lines of an exception
//! finding. Feedbacks decide what is saved and why; they write nothing themselves.

use crate::context::Instance;
use crate::meta::AflCounters;
use libafl::corpus::Corpus;
use libafl::state::{HasCorpus, HasExecutions};
use libafl::{Error, HasMetadata};
use numfuzz_abi::kind::{site_and_kind, ExceptionKind};
use numfuzz_outdir::{site_label, EntryName, ExceptionRecord, InputDir, Provenance, Tag};

/// What a saved input is, and so where it goes and what its name says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SavedInput {
    /// `queue/`, with why it was kept besides new edges (`exc`, `errbits`, `cmp`).
    Queue(Vec<&'static str>),
    /// `hangs/`.
    Hang,
    /// `crashes/`: a real crash, or one the memory limit caused (`oom`).
    Crash { out_of_memory: bool },
    /// `crashes/`: a floating-point exception finding, named after the (site, kind) `slot`;
    /// `escaped` when it was saved because an origin reached a declared result (`+esc`).
    Exception { slot: u32, escaped: bool },
}

/// Saves `bytes` as `what` in the instance directory; its name.
pub fn save<S, I>(instance: &Instance, state: &mut S, what: SavedInput, bytes: &[u8]) -> Result<EntryName, Error>
where
    S: HasMetadata + HasExecutions + HasCorpus<I>,
{
    let now = instance.elapsed_ms();
    let provenance = Provenance {
        src: state.corpus().current().map(|id| id.0 as u64),
        time_ms: now,
        execs: *state.executions(),
    };
    let counters = state.metadata_mut::<AflCounters>()?;
    let (dir, id, tag, why) = match what {
        SavedInput::Queue(why) => {
            counters.last_find_ms = Some(now);
            (InputDir::Queue, next(&mut counters.queue), Tag::None, why)
        }
        SavedInput::Hang => {
            counters.last_hang_ms = Some(now);
            (InputDir::Hangs, next(&mut counters.hangs), Tag::Hang, Vec::new())
        }
        SavedInput::Crash { out_of_memory } => {
            counters.last_crash_ms = Some(now);
            counters.real_crashes += 1;
            counters.out_of_memory += u64::from(out_of_memory);
            let tag = if out_of_memory { Tag::OutOfMemory } else { Tag::Crash };
            (InputDir::Crashes, next(&mut counters.crashes), tag, Vec::new())
        }
        SavedInput::Exception { slot, escaped } => {
            counters.last_crash_ms = Some(now);
            let (site, kind) = site_and_kind(slot as usize);
            let site = instance
                .sites
                .get(site)
                .map_or_else(|| format!("site{site}"), site_label);
            let why = if escaped { vec!["esc"] } else { Vec::new() };
            (
                InputDir::Crashes,
                next(&mut counters.crashes),
                Tag::Exception { kind, site },
                why,
            )
        }
    };
    let name = EntryName::new(id, tag, provenance, &why);
    instance
        .out
        .save(dir, &name, bytes)
        .map_err(|e| Error::os_error(e, format!("writing {}", name)))?;
    Ok(name)
}

/// The `exceptions.jsonl` lines of the input saved as `crashes/name`: one per new (site, kind)
/// slot in `fresh`, and one per slot in `escaped` first seen reaching a result. Returns the
/// kinds of the new ones.
pub fn record_exceptions(
    instance: &Instance,
    name: &EntryName,
    fresh: &[u32],
    escaped: &[u32],
) -> Result<Vec<ExceptionKind>, Error> {
    // The time of the input's name: a record and its input tell the same moment.
    let now = name.time_ms.unwrap_or_else(|| instance.elapsed_ms());
    let mut kinds_found = Vec::new();
    for (&slot, escape) in fresh
        .iter()
        .map(|s| (s, false))
        .chain(escaped.iter().map(|s| (s, true)))
    {
        let (site, kind) = site_and_kind(slot as usize);
        if !escape {
            kinds_found.push(kind);
        }
        if let Some(info) = instance.sites.get(site) {
            let record = ExceptionRecord {
                time_ms: now,
                kind,
                site: info.clone(),
                input: format!("crashes/{name}"),
                escape,
            };
            instance
                .out
                .append_exception(&record)
                .map_err(|e| Error::os_error(e, "writing exceptions.jsonl"))?;
        }
    }
    Ok(kinds_found)
}

/// The next number of a directory's counter.
fn next(counter: &mut u64) -> u64 {
    *counter += 1;
    *counter - 1
}
