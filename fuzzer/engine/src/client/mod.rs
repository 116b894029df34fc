//! One fuzzing client (one core): numfuzz's LibAFL components around an executor supplied by
//! the caller (in-process inside the target, or a forkserver), assembled from one module per
//! concern: [`observers`] (the target's maps, by typed handle), [`feedback`] (the corpus
//! feedback and the objective), [`seeds`] (the starting corpus) and [`stages`] (the loop).

pub mod feedback;
pub mod observers;
pub mod seeds;
pub mod stages;

pub use feedback::{CorpusFeedback, Objective};
pub use observers::{EdgesObserver, Hitcounts, ObserverHandles, Observers, TargetMaps};

use crate::config::CampaignConfig;
use crate::context::Instance;
use crate::hangs::HangCheck;
use crate::saved_inputs::SavingCorpus;
use crate::scheduler::DistanceFavoring;
use crate::stats::StatsStage;
use crate::stop::stop_requested;
use crate::supervisor::{Arrival, ClientLife};
use crate::timeout::{calibrated, AdjustTimeout};
use libafl::corpus::{Corpus, InMemoryCorpus};
use libafl::events::ClientDescription;
use libafl::events::SendExiting;
use libafl::executors::{Executor, HasObservers};
use libafl::fuzzer::StdFuzzer;
use libafl::inputs::BytesInput;
use libafl::mutators::Tokens;
use libafl::schedulers::{IndexesLenTimeMinimizerScheduler, QueueScheduler};
use libafl::state::{HasCorpus, HasExecutions, HasSolutions, StdState};
use libafl::{Error, HasMetadata};
use libafl_bolts::core_affinity::Cores;
use libafl_bolts::rands::StdRand;
use libafl_bolts::tuples::MatchNameRef;
use numfuzz_abi::signature::Signature;
use numfuzz_abi::site::SiteTable;
use numfuzz_outdir::{EndReason, InstanceDir};
use std::sync::Arc;
use std::time::Duration;

pub use crate::client_types::{ClientCorpus, Fuzzer, Mgr, Sched, State};

/// An empty client state with a fixed seed, its metadata types registered (for unit tests).
#[cfg(test)]
pub(crate) fn empty_state() -> State {
    crate::registry::register();
    StdState::new(
        StdRand::with_seed(1),
        SavingCorpus::detached(InMemoryCorpus::new()),
        SavingCorpus::detached(InMemoryCorpus::new()),
        &mut (),
        &mut (),
    )
    .expect("a state with no feedback to initialise")
}

/// Everything a client needs to know about the target besides how to execute it.
pub struct TargetInfo {
    pub sites: SiteTable,
    pub signature: Option<Signature>,
    pub maps: TargetMaps,
}

/// Name of a client's instance directory.
pub fn instance_name(cores: usize, description: &ClientDescription) -> String {
    if cores <= 1 {
        "default".to_string()
    } else {
        format!("core{}", description.core_id().0)
    }
}

/// The four things every step of a client's loop works on, borrowed together.
pub struct LoopParts<'a, E> {
    pub fuzzer: &'a mut Fuzzer,
    pub executor: &'a mut E,
    pub state: &'a mut State,
    pub mgr: &'a mut Mgr,
}

/// Favours, per edge, the smallest and fastest input (LibAFL's minimizer) and, per distance
/// slot, the input holding the best distance.
fn scheduler(edges: &EdgesObserver) -> Sched {
    DistanceFavoring::new(IndexesLenTimeMinimizerScheduler::new(edges, QueueScheduler::new()))
}

/// Runs one client until the campaign ends. On a clean end (the `-V` budget, Ctrl-C) the
/// broker and the restarter have been told and `Ok` is returned: the caller releases what it
/// holds (shared memory) and ends the client process. A client that fails (or gives up after
/// too many silent deaths, see [`crate::supervisor`]) records why in `clients.jsonl`, tells its
/// restarter not to respawn it, and returns the error.
pub fn run_client<E, F>(
    cfg: &CampaignConfig,
    target: TargetInfo,
    state: Option<State>,
    mut mgr: Mgr,
    description: ClientDescription,
    make_executor: F,
) -> Result<(), Error>
where
    F: FnOnce(Observers, &mut Fuzzer, &mut State, &mut Mgr) -> Result<E, Error>,
    E: Executor<Mgr, BytesInput, State, Fuzzer> + HasObservers<Observers = Observers> + AdjustTimeout,
{
    let cores = Cores::from_cmdline(&cfg.cores)?.ids.len();
    let out = InstanceDir::create(&cfg.out_dir, &instance_name(cores, &description))
        .map_err(|e| Error::illegal_state(e.to_string()))?;
    out.write_cmdline(&cfg.target, &cfg.target_args)
        .map_err(|e| Error::os_error(e, "writing cmdline"))?;
    let (life, give_up) = ClientLife::begin(&out, cfg.start_unix_ms, state.is_some());
    let result = match give_up {
        Some(reason) => {
            life.end(EndReason::GaveUp, Some(reason.clone()));
            Err(Error::illegal_state(reason))
        }
        None => {
            life.note_panics();
            fuzz_until_the_end(cfg, target, state, &mut mgr, out, &life, make_executor)
        }
    };
    match result {
        Ok(()) | Err(Error::ShuttingDown) => {
            let reason = if stop_requested() {
                EndReason::Signal
            } else {
                EndReason::Budget
            };
            life.end(reason, None);
            Ok(())
        }
        Err(e) => {
            if !matches!(life.ended(), Some(EndReason::GaveUp)) {
                let text = match &e {
                    Error::IllegalArgument(msg, _) | Error::IllegalState(msg, _) | Error::Unknown(msg, _) => {
                        msg.clone()
                    }
                    // By kind, not errno: tempfile wraps its errors with the path and keeps only the kind.
                    Error::OsError(io, what, _) if io.kind() == std::io::ErrorKind::StorageFull => format!(
                        "the disk holding {} is full ({what}); free some space and run the same command again to resume",
                        cfg.out_dir.display()
                    ),
                    other => other.to_string(),
                };
                life.end(
                    EndReason::Failed,
                    Some(format!("{}: {text}", instance_name(cores, &description))),
                );
            }
            // Tell the restarter not to respawn a client that would fail the same way.
            let _ = mgr.on_shutdown();
            Err(e)
        }
    }
}

/// The client's work, from its corpus to the end of the campaign.
fn fuzz_until_the_end<E, F>(
    cfg: &CampaignConfig,
    target: TargetInfo,
    state: Option<State>,
    mgr: &mut Mgr,
    out: InstanceDir,
    life: &ClientLife,
    make_executor: F,
) -> Result<(), Error>
where
    F: FnOnce(Observers, &mut Fuzzer, &mut State, &mut Mgr) -> Result<E, Error>,
    E: Executor<Mgr, BytesInput, State, Fuzzer> + HasObservers<Observers = Observers> + AdjustTimeout,
{
    // A successor of a client that died silently goes on counting its executions.
    let inherited_execs = match life.arrival {
        Arrival::Restarted { .. } => out.stats().and_then(|s| s.get_u64("execs_done")).unwrap_or(0),
        _ => 0,
    };
    let exact = crate::local_search::ExactSlots::of(&target.sites);
    let mut instance = Instance::new(out, target.sites, cfg.start_unix_ms);
    instance.client_restarts = life.restarts;
    let instance = Arc::new(instance);
    let resuming = seeds::resuming(&instance);

    // SAFETY: the maps live as long as the target process / the fuzzer's shared memory.
    let (observers, handles) = unsafe { target.maps.observers() };
    let mut feedback = feedback::corpus_feedback(&observers, &handles, cfg, target.signature.clone(), &instance);
    let mut objective = feedback::objective(&observers, &handles, &instance);
    let restarted = state.is_some();
    let mut state = client_state(state, &instance, &mut feedback, &mut objective)?;
    let edges = observers.get(&handles.edges).expect("the edge observer");
    if inherited_execs > 0 {
        *state.executions_mut() = inherited_execs;
    }
    let mut fuzzer = StdFuzzer::new(scheduler(edges), feedback, objective);
    let mut executor = make_executor(observers, &mut fuzzer, &mut state, mgr)?;
    // Comparison distances are recorded in every run from here on (unless --no-cmp); the
    // input-to-state stage adds operand logging to its tracing runs.
    let cmp_trace = target.maps.cmp_trace().filter(|_| cfg.cmp);
    if let Some(trace) = target.maps.cmp_trace() {
        trace.set_mode(if cfg.cmp { numfuzz_abi::cmp::CMP_DISTANCES } else { 0 });
    }
    // Seeds run precisely, so their distances are known; the run-mode stage decides later turns.
    if let Some(word) = target.maps.run_mode() {
        word.set_fast(false);
    }
    if !state.has_metadata::<Tokens>() && !cfg.dictionaries.is_empty() {
        let tokens = Tokens::new().add_from_files(&cfg.dictionaries)?;
        state.add_metadata(tokens);
    }
    if !restarted {
        let signature = target.signature.as_ref();
        let parts = LoopParts {
            fuzzer: &mut fuzzer,
            executor: &mut executor,
            state: &mut state,
            mgr: &mut *mgr,
        };
        seeds::load(cfg, &instance, resuming, signature, parts)?;
    }

    let timeout_ms = calibrate_timeout(cfg, &mut state, &mut executor);
    let stats = stats_stage(cfg, &instance, timeout_ms, target.maps.edges_len());
    let signature = target.signature.map(Arc::new);
    let parts = LoopParts {
        fuzzer: &mut fuzzer,
        executor: &mut executor,
        state: &mut state,
        mgr: &mut *mgr,
    };
    let words = stages::RegionWords {
        cmp_trace,
        probe: target.maps.probe(),
        run_mode: target.maps.run_mode(),
    };
    stages::fuzz(cfg, signature, words, exact, stats, parts)
}

/// The client's state: the one a restart restored, its corpora writing to `instance` again, or
/// a new one.
fn client_state(
    restored: Option<State>,
    instance: &Arc<Instance>,
    feedback: &mut CorpusFeedback,
    objective: &mut Objective,
) -> Result<State, Error> {
    match restored {
        Some(mut state) => {
            state.corpus_mut().attach(instance.clone());
            state.solutions_mut().attach(instance.clone());
            Ok(state)
        }
        None => StdState::new(
            StdRand::new(),
            SavingCorpus::new(InMemoryCorpus::new(), instance.clone()),
            SavingCorpus::new(InMemoryCorpus::new(), instance.clone()),
            feedback,
            objective,
        ),
    }
}

/// The stage that writes `fuzzer_stats` and `plot_data` and ends the campaign at its deadline.
fn stats_stage(cfg: &CampaignConfig, instance: &Arc<Instance>, timeout_ms: u64, edges: usize) -> StatsStage {
    let deadline = cfg.duration_secs.map(|s| instance.start + Duration::from_secs(s));
    let banner = cfg
        .target
        .file_name()
        .map_or("target".into(), |n| n.to_string_lossy().into_owned());
    StatsStage::new(
        instance.clone(),
        deadline,
        timeout_ms,
        edges,
        cfg.command_line.clone(),
        banner,
    )
    .with_memory_limit(cfg.memory_limit_mb)
    .with_hang_timeout(cfg.timeout_ms)
}

/// The per-execution time limit, calibrated from the seeds' run times like AFL++, at most the
/// ceiling (`-t`, or 1000 ms): a time-out under it is confirmed at the ceiling, see
/// [`crate::hangs`]. Without seed times, the ceiling.
fn calibrate_timeout<E: AdjustTimeout>(cfg: &CampaignConfig, state: &mut State, executor: &mut E) -> u64 {
    let ceiling = Duration::from_millis(cfg.timeout_ms);
    let times: Vec<Duration> = state
        .corpus()
        .ids()
        .filter_map(|id| state.corpus().get(id).ok()?.borrow().exec_time().as_ref().copied())
        .collect();
    let limit = calibrated(&times, ceiling).unwrap_or(ceiling);
    HangCheck::set_limits(state, limit, ceiling, cfg.timeout_given);
    log::info!("time limit calibrated from {} inputs: {limit:?}", times.len());
    // Always: the executor was built with LibAFL's per-execution timer, this installs the
    // batch timer (`timeout.rs`).
    executor.adjust_timeout(limit);
    limit.as_millis() as u64
}
