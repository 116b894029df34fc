//! A numfuzz campaign: LibAFL's `Launcher` (one client per core, LLMP between them and, with
//! `--broker`, to another machine), and per client the numfuzz components around an executor
//! supplied by the caller (in-process inside the target, or a forkserver).

use crate::config::{CampaignConfig, MutatorSchedule};
use crate::context::Instance;
use crate::feedbacks::{ByteMapObserver, DistanceFeedback, ExceptionFeedback, Record, Recorder};
use crate::i2s::{CmpTrace, I2SStage};
use crate::monitor::StatusMonitor;
use crate::mutators::fp_mutations;
use crate::run_flags::RunFlagsObserver;
use crate::scheduler::DistanceFavoring;
use crate::stats::{install_stop_handler, StatsStage};
use crate::timeout::{calibrated, AdjustTimeout};
use libafl::corpus::{Corpus, InMemoryCorpus};
use libafl::events::llmp::{setup_restarting_mgr_llmp, ManagerKind};
use libafl::events::{
    ClientDescription, EventConfig, Launcher, LlmpRestartingEventManager, ShouldSaveState, StdLlmpEventHook,
};
use libafl::executors::{Executor, HasObservers};
use libafl::feedbacks::CombinedFeedback;
use libafl::feedbacks::{
    CrashFeedback, LogicEagerOr, LogicFastAnd, LogicFastOr, MaxMapFeedback, TimeFeedback, TimeoutFeedback,
};
use libafl::fuzzer::{Evaluator, Fuzzer as _, StdFuzzer};
use libafl::inputs::{BytesInput, BytesInputConverter};
use libafl::monitors::tui::TuiMonitor;
use libafl::monitors::Monitor;
use libafl::mutators::{havoc_mutations, tokens_mutations, HavocScheduledMutator, Mutator, StdMOptMutator, Tokens};
use libafl::observers::{CanTrack, ExplicitTracking, HitcountsMapObserver, StdMapObserver, TimeObserver};
use libafl::schedulers::{IndexesLenTimeMinimizerScheduler, QueueScheduler};
use libafl::stages::StdMutationalStage;
use libafl::state::{HasCorpus, StdState};
use libafl::{feedback_and_fast, feedback_or, feedback_or_fast, Error, HasMetadata, NopInputFilter};
use libafl_bolts::core_affinity::Cores;
use libafl_bolts::llmp::{Broker, LlmpBroker, LlmpHookTuple};
use libafl_bolts::rands::StdRand;
use libafl_bolts::shmem::ShMem;
use libafl_bolts::shmem::{ShMemProvider, StdShMemProvider};
use libafl_bolts::tuples::{tuple_list, tuple_list_type, Merge};
use numfuzz_abi::signature::Signature;
use numfuzz_abi::site::SiteTable;
use numfuzz_outdir::{InputDir, InstanceDir};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub type State = StdState<InMemoryCorpus<BytesInput>, BytesInput, StdRand, InMemoryCorpus<BytesInput>>;
pub type Hitcounts = HitcountsMapObserver<ByteMapObserver>;
pub type EdgesObserver = ExplicitTracking<Hitcounts, true, false>;
pub type Observers = tuple_list_type!(
    EdgesObserver,
    ByteMapObserver,
    ByteMapObserver,
    ByteMapObserver,
    TimeObserver,
    RunFlagsObserver
);
pub type EdgesFeedback = MaxMapFeedback<EdgesObserver, Hitcounts>;
pub type CorpusFeedback = Recorder<
    CombinedFeedback<
        ExceptionFeedback,
        CombinedFeedback<
            EdgesFeedback,
            CombinedFeedback<
                DistanceFeedback,
                CombinedFeedback<DistanceFeedback, TimeFeedback, LogicEagerOr>,
                LogicEagerOr,
            >,
            LogicEagerOr,
        >,
        LogicEagerOr,
    >,
>;
pub type Objective = Recorder<
    CombinedFeedback<CombinedFeedback<CrashFeedback, TimeoutFeedback, LogicFastOr>, EdgesFeedback, LogicFastAnd>,
>;
pub type Sched = DistanceFavoring<IndexesLenTimeMinimizerScheduler<QueueScheduler, BytesInput, EdgesObserver>>;
pub type Fuzzer = StdFuzzer<Sched, CorpusFeedback, BytesInputConverter, NopInputFilter, Objective>;
pub type Mgr =
    LlmpRestartingEventManager<(), BytesInput, State, <StdShMemProvider as ShMemProvider>::ShMem, StdShMemProvider>;

/// The target's maps as raw memory: edges (sancov or AFL++ shared memory) and numfuzz's
/// ErrBits and exception maps (absent for targets not built with numfuzz-cc).
#[derive(Clone, Copy, Debug)]
pub struct TargetMaps {
    pub edges: *mut u8,
    pub edges_len: usize,
    pub errbits: *mut u8,
    pub exceptions: *mut u8,
    /// Slots in each numfuzz map (0: none).
    pub slots: usize,
    /// Comparison distance map (two bytes per comparison; 0 bytes: none).
    pub cmp_distances: *mut u8,
    pub cmp_slots: usize,
    /// Comparison operand log and the mode word (absent for targets without comparisons).
    pub cmp_trace: Option<CmpTrace>,
    /// The region header's per-run flags (null: no numfuzz region).
    pub run_flags: *mut u32,
}

impl TargetMaps {
    /// The observers over these maps.
    ///
    /// # Safety
    /// The pointers must stay valid for the whole campaign.
    pub unsafe fn observers(&self) -> Observers {
        // SAFETY: caller guarantees validity.
        let edges = unsafe { StdMapObserver::from_mut_ptr("edges", self.edges, self.edges_len) };
        let (mut errbits, exceptions) = if self.slots == 0 {
            (
                StdMapObserver::owned("errbits", Vec::new()),
                StdMapObserver::owned("exceptions", Vec::new()),
            )
        } else {
            // SAFETY: caller guarantees validity.
            unsafe {
                (
                    StdMapObserver::from_mut_ptr("errbits", self.errbits, self.slots),
                    StdMapObserver::from_mut_ptr("exceptions", self.exceptions, self.slots),
                )
            }
        };
        let mut cmp_distances = if self.cmp_slots == 0 {
            StdMapObserver::owned("cmp_distances", Vec::new())
        } else {
            // SAFETY: caller guarantees validity.
            unsafe { StdMapObserver::from_mut_ptr("cmp_distances", self.cmp_distances, self.cmp_slots) }
        };
        // Reset before every run to "not measured"; the run lowers what it measures.
        *errbits.initial_mut() = numfuzz_abi::errbits::NOT_MEASURED;
        *cmp_distances.initial_mut() = numfuzz_abi::errbits::NOT_MEASURED;
        tuple_list!(
            HitcountsMapObserver::new(edges).track_indices(),
            errbits,
            exceptions,
            cmp_distances,
            TimeObserver::new("time"),
            // SAFETY: the caller guarantees validity; the target only writes it during a run.
            unsafe { RunFlagsObserver::new(self.run_flags) }
        )
    }
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

/// Runs one client until the campaign ends. On a clean end (the `-V` budget, Ctrl-C) the
/// broker and the restarter have been told and `Ok` is returned: the caller releases what it
/// holds (shared memory) and ends the client process.
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
    let name = instance_name(cores, &description);
    let out = InstanceDir::create(&cfg.out_dir, &name).map_err(|e| Error::illegal_state(e.to_string()))?;
    let resuming_dir = out
        .path(InputDir::Queue)
        .read_dir()
        .is_ok_and(|mut d| d.next().is_some());
    out.write_cmdline(&cfg.target, &cfg.target_args)
        .map_err(|e| Error::os_error(e, "writing cmdline"))?;
    let instance = Arc::new(Instance::new(out, target.sites, cfg.start_unix_ms));

    // SAFETY: the maps live as long as the target process / the fuzzer's shared memory.
    let observers = unsafe { target.maps.observers() };
    let total_edges = target.maps.edges_len;
    let (edges, errbits, exceptions, cmp_distances, time, run_flags) = (
        &observers.0,
        &observers.1 .0,
        &observers.1 .1 .0,
        &observers.1 .1 .1 .0,
        &observers.1 .1 .1 .1 .0,
        &observers.1 .1 .1 .1 .1 .0,
    );
    let escapes = cfg.escapes.then(|| (run_flags, target.signature.clone()));
    let mut feedback = Recorder::new(
        feedback_or!(
            ExceptionFeedback::new(exceptions, escapes, instance.clone()),
            MaxMapFeedback::new(edges),
            DistanceFeedback::new(errbits, cfg.errbits),
            DistanceFeedback::new(cmp_distances, cfg.cmp),
            TimeFeedback::new(time)
        ),
        instance.clone(),
        Record::Queue,
    );
    let mut objective = Recorder::new(
        feedback_and_fast!(
            feedback_or_fast!(CrashFeedback::new(), TimeoutFeedback::new()),
            MaxMapFeedback::with_name("crash_edges", edges)
        ),
        instance.clone(),
        Record::Findings,
    );
    let restarted = state.is_some();
    let mut state = match state {
        Some(s) => s,
        None => StdState::new(
            StdRand::new(),
            InMemoryCorpus::new(),
            InMemoryCorpus::new(),
            &mut feedback,
            &mut objective,
        )?,
    };
    let scheduler = DistanceFavoring::new(IndexesLenTimeMinimizerScheduler::new(edges, QueueScheduler::new()));
    let mut fuzzer = StdFuzzer::new(scheduler, feedback, objective);
    let mut executor = make_executor(observers, &mut fuzzer, &mut state, &mut mgr)?;
    // Comparison distances are recorded in every run from here on (unless --no-cmp); the
    // input-to-state stage adds operand logging to its tracing runs.
    let cmp_trace = target.maps.cmp_trace.filter(|_| cfg.cmp);
    if let Some(trace) = target.maps.cmp_trace {
        trace.set_mode(if cfg.cmp { numfuzz_abi::cmp::CMP_DISTANCES } else { 0 });
    }

    if !state.has_metadata::<Tokens>() && !cfg.dictionaries.is_empty() {
        let tokens = Tokens::new().add_from_files(&cfg.dictionaries)?;
        state.add_metadata(tokens);
    }

    if !restarted {
        if resuming_dir {
            // Re-read what an earlier run of this instance found, without writing it again:
            // findings first (so their exceptions count as seen), then the queue.
            instance.set_importing(true);
            let mut files = Vec::new();
            collect_files(&instance.out.path(InputDir::Crashes), &mut files);
            collect_files(&instance.out.path(InputDir::Queue), &mut files);
            for f in files {
                if let Ok(bytes) = std::fs::read(&f) {
                    fuzzer.evaluate_input(&mut state, &mut executor, &mut mgr, &BytesInput::new(bytes))?;
                }
            }
            instance.set_importing(false);
        }
        if state.corpus().count() == 0 {
            let mut inputs = Vec::new();
            if let Some(seeds) = &cfg.seeds {
                let mut files = Vec::new();
                collect_files(seeds, &mut files);
                inputs.extend(files.iter().filter_map(|f| std::fs::read(f).ok()));
            }
            if inputs.is_empty() {
                inputs = default_seeds(target.signature.as_ref());
            }
            for bytes in inputs {
                fuzzer.add_input(&mut state, &mut executor, &mut mgr, BytesInput::new(bytes))?;
            }
        }
    }

    let mut timeout_ms = cfg.timeout_ms;
    if cfg.calibrate_timeout {
        let times: Vec<Duration> = state
            .corpus()
            .ids()
            .filter_map(|id| state.corpus().get(id).ok()?.borrow().exec_time().as_ref().copied())
            .collect();
        if let Some(limit) = calibrated(&times, Duration::from_millis(cfg.timeout_ms)) {
            executor.adjust_timeout(limit);
            timeout_ms = limit.as_millis() as u64;
            log::info!("time limit calibrated from {} inputs: {limit:?}", times.len());
        }
    }
    let deadline = cfg.duration_secs.map(|s| instance.start + Duration::from_secs(s));
    let banner = cfg
        .target
        .file_name()
        .map_or("target".into(), |n| n.to_string_lossy().into_owned());
    let stats = StatsStage::new(
        instance.clone(),
        deadline,
        timeout_ms,
        total_edges,
        cfg.command_line.clone(),
        banner,
    );
    install_stop_handler();
    // Typed inputs get the IEEE-754 field operators next to LibAFL's byte havoc (which still
    // finds what no typed operator would: lengths, unusual encodings); untyped ones get havoc.
    let signature = target.signature.map(Arc::new);
    let i2s = I2SStage::new(cmp_trace, signature.clone());
    let typed = signature.filter(|_| cfg.fp_mutators);
    let ended = match (typed, cfg.schedule) {
        (Some(sig), MutatorSchedule::Mopt) => {
            let ops = fp_mutations(&sig).merge(havoc_mutations()).merge(tokens_mutations());
            let mutator = StdMOptMutator::new(&mut state, ops, 7, 5)?;
            fuzz(&mut fuzzer, &mut executor, &mut state, &mut mgr, i2s, mutator, stats)
        }
        (Some(sig), MutatorSchedule::Havoc) => {
            let ops = fp_mutations(&sig).merge(havoc_mutations()).merge(tokens_mutations());
            fuzz(
                &mut fuzzer,
                &mut executor,
                &mut state,
                &mut mgr,
                i2s,
                HavocScheduledMutator::new(ops),
                stats,
            )
        }
        (None, MutatorSchedule::Mopt) => {
            let mutator = StdMOptMutator::new(&mut state, havoc_mutations().merge(tokens_mutations()), 7, 5)?;
            fuzz(&mut fuzzer, &mut executor, &mut state, &mut mgr, i2s, mutator, stats)
        }
        (None, MutatorSchedule::Havoc) => {
            let mutator = HavocScheduledMutator::new(havoc_mutations().merge(tokens_mutations()));
            fuzz(&mut fuzzer, &mut executor, &mut state, &mut mgr, i2s, mutator, stats)
        }
    };
    match ended {
        Err(Error::ShuttingDown) | Ok(()) => Ok(()),
        Err(e) => Err(e),
    }
}

/// The fuzzing loop with a given mutator: input-to-state on a testcase's first turn, mutate,
/// then write stats (and stop when due).
#[allow(clippy::too_many_arguments)]
fn fuzz<E, M>(
    fuzzer: &mut Fuzzer,
    executor: &mut E,
    state: &mut State,
    mgr: &mut Mgr,
    i2s: I2SStage,
    mutator: M,
    stats: StatsStage,
) -> Result<(), Error>
where
    E: Executor<Mgr, BytesInput, State, Fuzzer> + HasObservers<Observers = Observers>,
    M: Mutator<BytesInput, State>,
{
    let mut stages = tuple_list!(i2s, StdMutationalStage::new(mutator), stats);
    fuzzer.fuzz_loop(&mut stages, executor, state, mgr)
}

/// Processes this process forked (the per-core client restarters), from /proc.
fn child_pids() -> Vec<i32> {
    let me = std::process::id();
    std::fs::read_to_string(format!("/proc/{me}/task/{me}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// True once `pid` has exited (gone, or a zombie waiting to be reaped).
fn exited(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// The broker's loop, with LibAFL 0.16.1's broker-to-broker link made usable:
///
/// - The link is connected only once the local clients have registered: a link made earlier
///   takes the client id the first local client then also gets, and the link drops that
///   client's messages as its own echo, so nothing reaches the other machine.
/// - LibAFL's `loop_with_timeouts` ends once as many clients as expected have come and gone,
///   and a link counts as a client (it can leave and be re-added), which can end a linked
///   broker before its local client starts. This loop runs until the local client processes
///   have exited instead.
/// - Ctrl-C is left to the clients, which stop cleanly and write their final stats.
fn run_broker<HT, SHM, SP>(
    broker: &mut LlmpBroker<HT, SHM, SP>,
    mut remote: Option<SocketAddr>,
    local_clients: usize,
) -> Result<(Option<State>, Mgr), Error>
where
    HT: LlmpHookTuple<SHM, SP>,
    SHM: ShMem,
    SP: ShMemProvider<ShMem = SHM>,
{
    // SAFETY: ignoring SIGINT in the broker process only.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    let clients = child_pids();
    let started = std::time::Instant::now();
    let mut last_timeout = started;
    while !clients.iter().all(|&p| exited(p)) {
        let busy = broker.broker_once()?;
        if let Some(addr) = remote {
            let registered = broker.num_clients_seen().saturating_sub(broker.nb_listeners());
            if registered >= local_clients || started.elapsed() > Duration::from_secs(60) {
                broker.inner_mut().connect_b2b(addr)?;
                remote = None;
            }
        }
        if last_timeout.elapsed() >= Duration::from_secs(30) {
            broker.on_timeout()?;
            last_timeout = std::time::Instant::now();
        }
        if !busy {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    // Deliver what the last clients sent (final stats) to the monitor.
    while broker.broker_once()? {}
    Err(Error::shutting_down())
}

/// Starts the broker and one client per core; returns in the original process when every
/// client has finished (other processes of the launcher exit).
pub fn launch<C>(cfg: &CampaignConfig, client: C) -> Result<(), Error>
where
    C: FnMut(Option<State>, Mgr, ClientDescription) -> Result<(), Error>,
{
    if cfg.tui {
        let monitor = TuiMonitor::builder()
            .title("numfuzz")
            .version(env!("CARGO_PKG_VERSION"))
            .enhanced_graphics(false)
            .build();
        launch_with_monitor(cfg, monitor, client)
    } else {
        launch_with_monitor(cfg, StatusMonitor::new(cfg.duration_secs), client)
    }
}

fn launch_with_monitor<C, MT>(cfg: &CampaignConfig, monitor: MT, mut client: C) -> Result<(), Error>
where
    C: FnMut(Option<State>, Mgr, ClientDescription) -> Result<(), Error>,
    MT: Monitor,
{
    crate::logging::init_from_env();
    let main_pid = std::process::id();
    let cores = Cores::from_cmdline(&cfg.cores)?;
    let shmem = StdShMemProvider::new()?;
    let remote: Option<SocketAddr> = match &cfg.remote_broker {
        Some(addr) => Some(
            addr.to_socket_addrs()
                .map_err(|e| Error::illegal_argument(format!("--broker {addr}: {e}")))?
                .next()
                .ok_or_else(|| Error::illegal_argument(format!("--broker {addr}: no address")))?,
        ),
        None => None,
    };
    let configuration = EventConfig::from_name("numfuzz");
    // LibAFL 0.16.1's Launcher drops `remote_broker_addr` on the floor for LLMP brokers, so the
    // broker (and its broker-to-broker link for multi-machine campaigns) is set up here.
    let spawn = |_: &Launcher<'_, _, MT, StdShMemProvider>,
                 description: Option<ClientDescription>,
                 monitor: Option<MT>| {
        match description {
            Some(client_description) => setup_restarting_mgr_llmp(
                shmem.clone(),
                configuration,
                None::<MT>,
                cfg.broker_port,
                ManagerKind::Client { client_description },
                None,
                ShouldSaveState::OnRestart,
                tuple_list!(),
            ),
            None => {
                let monitor = monitor.ok_or_else(|| Error::illegal_state("the broker has no monitor"))?;
                let hook = StdLlmpEventHook::<BytesInput, MT>::new(monitor)?;
                let mut broker = LlmpBroker::create_attach_to_tcp(shmem.clone(), tuple_list!(hook), cfg.broker_port)?;
                run_broker(&mut broker, remote, cores.ids.len())
            }
        }
    };
    let run = |state: Option<State>, mgr: Mgr, desc: ClientDescription| client(state, mgr, desc);
    let result = Launcher::builder()
        .shmem_provider(shmem.clone())
        .configuration(configuration)
        .monitor(monitor)
        .run_client(run)
        .cores(&cores)
        .broker_port(cfg.broker_port)
        .stdout_file(Some("/dev/null"))
        .build()
        .launch_with_manager(spawn);
    if std::process::id() != main_pid {
        // A per-core restarter process whose client ended cleanly.
        std::process::exit(0);
    }
    match result {
        Ok(()) | Err(Error::ShuttingDown) => Ok(()),
        Err(e) => Err(e),
    }
}
