//! The one writer of an instance's saved inputs: `queue/`, `crashes/` and `hangs/` with
//! AFL++-style names (numfuzz-outdir's `EntryName`), numbered by the instance's counters, with
//! the provenance of the run that found them, and the `exceptions.jsonl` lines of an exception
//! finding.
//!
//! Feedbacks decide: what is saved, under which name ([`name`]) and with which records
//! ([`exception_records`]); they leave that on the testcase ([`plan`]) and write nothing. The
//! corpora write it when LibAFL adds the testcase ([`SavingCorpus`]), as LibAFL's
//! `OnDiskCorpus` writes on `add`: the corpus feedback's decisions land with the corpus, the
//! objective's with the solutions.

use crate::context::Instance;
use crate::meta::AflCounters;
use libafl::corpus::{Corpus, CorpusId, Testcase};
use libafl::inputs::HasTargetBytes;
use libafl::state::{HasCorpus, HasExecutions};
use libafl::{Error, HasMetadata};
use libafl_bolts::impl_serdeany;
use numfuzz_abi::kind::{site_and_kind, ExceptionKind};
use numfuzz_outdir::{site_label, EntryName, ExceptionRecord, InputDir, Provenance, Tag};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::sync::Arc;

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
    /// `escaped` when it was saved because an origin reached a declared result (`+esc`);
    /// `alone` when only because a (site, kind) first met after another exception was raised
    /// before any (`+alone`).
    Exception { slot: u32, escaped: bool, alone: bool },
}

/// Where `what` goes and its name, numbered by the instance's counters (which count it).
pub fn name<S, I>(instance: &Instance, state: &mut S, what: SavedInput) -> Result<(InputDir, EntryName), Error>
where
    S: HasMetadata + HasExecutions + HasCorpus<I>,
{
    let now = instance.elapsed_ms();
    let provenance = Provenance {
        src: state.corpus().current().map(|id| id.0 as u64),
        time_ms: now,
        execs: *state.executions(),
    };
    let counters = counters(instance, state);
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
        SavedInput::Exception { slot, escaped, alone } => {
            counters.last_crash_ms = Some(now);
            let (site, kind) = site_and_kind(slot as usize);
            let site = instance
                .sites
                .get(site)
                .map_or_else(|| format!("site{site}"), site_label);
            let why = [(escaped, "esc"), (alone, "alone")]
                .into_iter()
                .filter_map(|(on, tag)| on.then_some(tag))
                .collect();
            (
                InputDir::Crashes,
                next(&mut counters.crashes),
                Tag::Exception { kind, site },
                why,
            )
        }
    };
    Ok((dir, EntryName::new(id, tag, provenance, &why)))
}

/// The instance's counters, continuing after what an earlier run left in its directories.
pub fn counters<'a, S: HasMetadata>(instance: &Instance, state: &'a mut S) -> &'a mut AflCounters {
    state.metadata_or_insert_with(|| instance.initial_counters())
}

/// The `exceptions.jsonl` lines of the input named `crashes/name`: one per new (site, kind)
/// slot in `fresh`, and one per slot in `escaped` first seen reaching a result; and the kinds
/// of the new ones.
pub fn exception_records(
    instance: &Instance,
    name: &EntryName,
    fresh: &[u32],
    escaped: &[u32],
) -> (Vec<ExceptionRecord>, Vec<ExceptionKind>) {
    // The time of the input's name: a record and its input tell the same moment.
    let now = name.time_ms.unwrap_or_else(|| instance.elapsed_ms());
    let mut records = Vec::new();
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
            records.push(ExceptionRecord {
                time_ms: now,
                kind,
                site: info.clone(),
                input: format!("crashes/{name}"),
                escape,
            });
        }
    }
    (records, kinds_found)
}

/// One decided save of a testcase: its directory, its file name and the records naming it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingSave {
    pub dir: InputDir,
    pub file: String,
    pub records: Vec<ExceptionRecord>,
}

/// On a testcase: what the feedbacks decided to save of it, written by the corpus that adds it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PendingSaves(pub Vec<PendingSave>);
impl_serdeany!(PendingSaves);

/// Leaves on `testcase` that it is saved as `dir/name`, with `records` appended to
/// `exceptions.jsonl`.
pub fn plan<I>(testcase: &mut Testcase<I>, dir: InputDir, name: &EntryName, records: Vec<ExceptionRecord>) {
    let save = PendingSave {
        dir,
        file: name.to_string(),
        records,
    };
    match testcase.metadata_map_mut().get_mut::<PendingSaves>() {
        Some(saves) => saves.0.push(save),
        None => testcase.add_metadata(PendingSaves(vec![save])),
    }
}

/// A corpus that writes the saves its testcases carry ([`PendingSaves`]) as it adds them.
///
/// The instance is not part of the state LibAFL serializes across a client's restart: a
/// restored corpus is [`attach`](Self::attach)ed to the new client's instance again, and one
/// that is not refuses a testcase with saves rather than drop them.
#[derive(Clone, Serialize, Deserialize)]
pub struct SavingCorpus<C> {
    inner: C,
    #[serde(skip)]
    instance: Option<Arc<Instance>>,
}

impl<C> SavingCorpus<C> {
    pub fn new(inner: C, instance: Arc<Instance>) -> Self {
        SavingCorpus {
            inner,
            instance: Some(instance),
        }
    }

    /// A corpus with nowhere to write (unit tests).
    pub fn detached(inner: C) -> Self {
        SavingCorpus { inner, instance: None }
    }

    /// Writes to `instance` from now on (a state restored after a restart).
    pub fn attach(&mut self, instance: Arc<Instance>) {
        self.instance = Some(instance);
    }

    fn write<I: HasTargetBytes>(&self, testcase: &mut Testcase<I>) -> Result<(), Error> {
        if !testcase.has_metadata::<PendingSaves>() {
            return Ok(());
        }
        let instance = self.instance.as_ref().ok_or_else(|| {
            Error::illegal_state("a testcase to save reached a corpus with no instance directory attached")
        })?;
        let saves = testcase.metadata_map_mut().remove::<PendingSaves>().unwrap_or_default();
        let bytes = testcase
            .input()
            .as_ref()
            .map(|i| i.target_bytes().to_vec())
            .unwrap_or_default();
        for save in saves.0 {
            instance
                .out
                .save_as(save.dir, &save.file, &bytes)
                .map_err(|e| Error::os_error(e, format!("writing {}/{}", save.dir.name(), save.file)))?;
            for record in &save.records {
                instance
                    .out
                    .append_exception(record)
                    .map_err(|e| Error::os_error(e, "writing exceptions.jsonl"))?;
            }
        }
        Ok(())
    }
}

impl<C: std::fmt::Debug> std::fmt::Debug for SavingCorpus<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SavingCorpus")
            .field("inner", &self.inner)
            .field("attached", &self.instance.is_some())
            .finish()
    }
}

impl<C: Corpus<I>, I: HasTargetBytes> Corpus<I> for SavingCorpus<C> {
    fn count(&self) -> usize {
        self.inner.count()
    }
    fn count_disabled(&self) -> usize {
        self.inner.count_disabled()
    }
    fn count_all(&self) -> usize {
        self.inner.count_all()
    }
    fn add(&mut self, mut testcase: Testcase<I>) -> Result<CorpusId, Error> {
        self.write(&mut testcase)?;
        self.inner.add(testcase)
    }
    fn add_disabled(&mut self, mut testcase: Testcase<I>) -> Result<CorpusId, Error> {
        self.write(&mut testcase)?;
        self.inner.add_disabled(testcase)
    }
    fn replace(&mut self, id: CorpusId, testcase: Testcase<I>) -> Result<Testcase<I>, Error> {
        self.inner.replace(id, testcase)
    }
    fn remove(&mut self, id: CorpusId) -> Result<Testcase<I>, Error> {
        self.inner.remove(id)
    }
    fn get(&self, id: CorpusId) -> Result<&RefCell<Testcase<I>>, Error> {
        self.inner.get(id)
    }
    fn get_from_all(&self, id: CorpusId) -> Result<&RefCell<Testcase<I>>, Error> {
        self.inner.get_from_all(id)
    }
    fn current(&self) -> &Option<CorpusId> {
        self.inner.current()
    }
    fn current_mut(&mut self) -> &mut Option<CorpusId> {
        self.inner.current_mut()
    }
    fn next(&self, id: CorpusId) -> Option<CorpusId> {
        self.inner.next(id)
    }
    fn peek_free_id(&self) -> CorpusId {
        self.inner.peek_free_id()
    }
    fn prev(&self, id: CorpusId) -> Option<CorpusId> {
        self.inner.prev(id)
    }
    fn first(&self) -> Option<CorpusId> {
        self.inner.first()
    }
    fn last(&self) -> Option<CorpusId> {
        self.inner.last()
    }
    fn nth_from_all(&self, nth: usize) -> CorpusId {
        self.inner.nth_from_all(nth)
    }
    fn load_input_into(&self, testcase: &mut Testcase<I>) -> Result<(), Error> {
        self.inner.load_input_into(testcase)
    }
    fn store_input_from(&self, testcase: &Testcase<I>) -> Result<(), Error> {
        self.inner.store_input_from(testcase)
    }
}

/// The next number of a directory's counter.
fn next(counter: &mut u64) -> u64 {
    *counter += 1;
    *counter - 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::empty_state;
    use crate::feedbacks::{Record, Recorder};
    use libafl::corpus::InMemoryCorpus;
    use libafl::events::NopEventManager;
    use libafl::executors::ExitKind;
    use libafl::feedbacks::{ConstFeedback, Feedback, StateInitializer};
    use libafl::inputs::BytesInput;
    use numfuzz_abi::site::SiteTable;
    use numfuzz_outdir::InstanceDir;

    fn instance() -> (tempfile::TempDir, Arc<Instance>) {
        let dir = tempfile::tempdir().unwrap();
        let out = InstanceDir::create(dir.path(), "default").unwrap();
        (dir, Arc::new(Instance::new(out, SiteTable::default(), 0)))
    }

    fn files(instance: &Instance, dir: InputDir) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(instance.out.path(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// What an accepting corpus feedback leaves on `testcase`, as the fuzzer calls it.
    fn judged(instance: &Arc<Instance>, testcase: &mut Testcase<BytesInput>, exit: ExitKind) {
        let mut state = empty_state();
        let record = if exit == ExitKind::Ok {
            Record::Queue
        } else {
            Record::Findings
        };
        let mut feedback = Recorder::new(ConstFeedback::new(true), instance.clone(), record);
        feedback.init_state(&mut state).unwrap();
        let mut mgr = NopEventManager::new();
        let input = testcase.input().clone().unwrap();
        assert!(feedback
            .is_interesting(&mut state, &mut mgr, &input, &(), &exit)
            .unwrap());
        feedback.append_metadata(&mut state, &mut mgr, &(), testcase).unwrap();
    }

    #[test]
    fn feedbacks_decide_and_the_corpus_that_adds_the_input_writes_it() {
        let (_dir, instance) = instance();
        let mut testcase = Testcase::new(BytesInput::new(b"\x01\x02".to_vec()));
        judged(&instance, &mut testcase, ExitKind::Ok);
        assert!(
            files(&instance, InputDir::Queue).is_empty(),
            "a feedback writes nothing"
        );
        let saves = testcase.metadata::<PendingSaves>().unwrap().clone();
        assert_eq!(saves.0.len(), 1);
        assert_eq!(saves.0[0].dir, InputDir::Queue);
        assert!(saves.0[0].file.starts_with("id:000000,"), "{}", saves.0[0].file);

        let mut corpus = SavingCorpus::new(InMemoryCorpus::new(), instance.clone());
        let id = corpus.add(testcase).unwrap();
        assert_eq!(files(&instance, InputDir::Queue), vec![saves.0[0].file.clone()]);
        let written = std::fs::read(instance.out.path(InputDir::Queue).join(&saves.0[0].file)).unwrap();
        assert_eq!(written, b"\x01\x02");
        let kept = corpus.get(id).unwrap().borrow();
        assert!(
            !kept.has_metadata::<PendingSaves>(),
            "written once, not again on a later add"
        );
    }

    #[test]
    fn a_timeout_goes_to_hangs_and_a_detached_corpus_refuses_to_drop_it() {
        let (_dir, instance) = instance();
        let mut testcase = Testcase::new(BytesInput::new(b"x".to_vec()));
        judged(&instance, &mut testcase, ExitKind::Timeout);
        let saves = testcase.metadata::<PendingSaves>().unwrap().clone();
        assert_eq!(saves.0[0].dir, InputDir::Hangs);
        let mut detached = SavingCorpus::detached(InMemoryCorpus::new());
        assert!(
            detached.add(testcase.clone()).is_err(),
            "an unattached corpus would lose the hang"
        );
        detached.attach(instance.clone());
        detached.add(testcase).unwrap();
        assert_eq!(files(&instance, InputDir::Hangs), vec![saves.0[0].file.clone()]);
    }
}
