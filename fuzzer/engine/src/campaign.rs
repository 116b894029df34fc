//! A numfuzz campaign: one LLMP broker and one client per core, in one of two shapes.
//!
//! - [`launch`]: all in this process, through LibAFL's `Launcher`, which forks a client per
//!   core and runs the broker. Forkserver campaigns: `numfuzz run` is every part of it.
//! - [`serve`] and [`join`]: the broker and the monitor in `numfuzz run`, and each client in a
//!   process of its own that `serve` starts. In-process campaigns: the client process is the
//!   target, with the engine linked into it, so the target carries only the client's side
//!   (no Launcher, no TUI), and a `numfuzz run` that dies takes its clients with it.
//!
//! Either way a client is assembled in [`crate::client`], and a client process is a
//! restarter (LibAFL's, see [`crate::supervisor`]) whose forked child fuzzes.

use crate::client::{Mgr, State};
use crate::config::CampaignConfig;
use crate::monitor::{ScreenMonitor, StatusMonitor};
use libafl::events::llmp::{setup_restarting_mgr_llmp, ManagerKind};
use libafl::events::{ClientDescription, EventConfig, Launcher, ShouldSaveState, StdLlmpEventHook};
use libafl::inputs::BytesInput;
use libafl::monitors::{Monitor, NopMonitor};
use libafl::Error;
use libafl_bolts::core_affinity::{CoreId, Cores};
use libafl_bolts::llmp::{Broker, LlmpBroker, LlmpHookTuple};
use libafl_bolts::shmem::ShMem;
use libafl_bolts::shmem::{ShMemProvider, StdShMemProvider};
use libafl_bolts::tuples::tuple_list;
use std::net::{SocketAddr, ToSocketAddrs};
use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// LibAFL's event configuration: clients of the same configuration reuse each other's
/// observers instead of re-running an input they receive.
const CONFIGURATION: &str = "numfuzz";

/// The children of process `pid` (of this one: the per-core client restarters), from /proc.
fn child_pids(pid: u32) -> Vec<i32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
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

/// What a process does first once LibAFL's restarting manager has made it a client (forked it
/// off `restarter`, the core's restarter): that manager has just installed a SIGTERM/SIGINT
/// handler that `_exit`s on the spot, so a stop asked for while the client starts (a respawned
/// one restoring its state, a resumed one re-reading its queue, or `end_with_parent` finding
/// the restarter gone) would end it without its end record. From here on a stop is a request,
/// honoured at the next check; and a dead restarter (so a dead broker) asks for one.
///
/// The client holds state worth a clean stop (its final stats, its end record), so its
/// restarter's death wakes it rather than kills it: the kernel sends SIGCONT, which resumes a
/// stopped client (SIGSTOP, job control, a debugger let go; a stopped process leaves SIGTERM
/// pending for good), and the client's stop check sees the restarter gone. SIGCONT keeps its
/// default disposition: a handler would make the syscall it interrupts fail with EINTR (the
/// forkserver executor's poll), which ends the client with an error on any SIGCONT. The
/// restarter holds nothing to save and gets SIGKILL (see [`join`] and [`launch`]).
fn become_client(restarter: u32) {
    crate::stop::install_stop_handler();
    crate::stop::watch_restarter(restarter);
    end_with_parent(libc::SIGCONT, restarter);
}

/// Asks the kernel to send `signal` to this process when its parent dies, and sends it at
/// once if the parent (`parent`) is already gone. A campaign whose broker was killed must not
/// leave clients fuzzing with nobody to report to.
fn end_with_parent(signal: libc::c_int, parent: u32) {
    // SAFETY: prctl with integer arguments only.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong) };
    if std::os::unix::process::parent_id() != parent {
        // SAFETY: raising a signal on this process.
        unsafe { libc::raise(signal) };
    }
}

/// The broker's loop, with LibAFL 0.16.1's broker-to-broker link made usable:
///
/// - The link is connected only once the local clients have registered: a link made earlier
///   takes the client id the first local client then also gets, and the link drops that
///   client's messages as its own echo, so nothing reaches the other machine.
/// - LibAFL's `loop_with_timeouts` ends once as many clients as expected have come and gone,
///   and a link counts as a client (it can leave and be re-added), which can end a linked
///   broker before its local client starts. This loop runs until `clients_done` says the
///   local client processes have exited instead.
/// - Ctrl-C is left to the clients, which stop cleanly and write their final stats.
fn broker_loop<HT, SHM, SP>(
    broker: &mut LlmpBroker<HT, SHM, SP>,
    mut remote: Option<SocketAddr>,
    local_clients: usize,
    mut clients_done: impl FnMut() -> bool,
) -> Result<(), Error>
where
    HT: LlmpHookTuple<SHM, SP>,
    SHM: ShMem,
    SP: ShMemProvider<ShMem = SHM>,
{
    // SAFETY: ignoring SIGINT in the broker process only.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    let started = std::time::Instant::now();
    let mut last_timeout = started;
    while !clients_done() {
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
    Ok(())
}

/// `--broker ADDR`, resolved.
fn remote_broker(cfg: &CampaignConfig) -> Result<Option<SocketAddr>, Error> {
    let Some(addr) = &cfg.remote_broker else {
        return Ok(None);
    };
    let resolved = addr
        .to_socket_addrs()
        .map_err(|e| Error::illegal_argument(format!("--broker {addr}: {e}")))?
        .next()
        .ok_or_else(|| Error::illegal_argument(format!("--broker {addr}: no address")))?;
    Ok(Some(resolved))
}

/// Runs `with` on the campaign's monitor: numfuzz's screen on a terminal, else status lines.
macro_rules! with_monitor {
    ($cfg:expr, $with:expr) => {
        if $cfg.tui {
            let title = $cfg.target.file_name().map_or_else(
                || $cfg.target.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            $with(ScreenMonitor::new(title, $cfg.duration_secs))
        } else {
            $with(StatusMonitor::new($cfg.duration_secs))
        }
    };
}

/// Starts the broker and one client per core; returns in the original process when every
/// client has finished (other processes of the launcher exit).
pub fn launch<C>(cfg: &CampaignConfig, client: C) -> Result<(), Error>
where
    C: FnMut(Option<State>, Mgr, ClientDescription) -> Result<(), Error>,
{
    with_monitor!(cfg, |monitor| launch_with_monitor(cfg, monitor, client))
}

fn launch_with_monitor<C, MT>(cfg: &CampaignConfig, monitor: MT, mut client: C) -> Result<(), Error>
where
    C: FnMut(Option<State>, Mgr, ClientDescription) -> Result<(), Error>,
    MT: Monitor,
{
    crate::logging::init_from_env();
    crate::registry::register();
    let main_pid = std::process::id();
    let cores = Cores::from_cmdline(&cfg.cores)?;
    let shmem = StdShMemProvider::new()?;
    let remote = remote_broker(cfg)?;
    // LibAFL 0.16.1's Launcher drops `remote_broker_addr` on the floor for LLMP brokers, so the
    // broker (and its broker-to-broker link for multi-machine campaigns) is set up here.
    let spawn = |_: &Launcher<'_, _, MT, StdShMemProvider>,
                 description: Option<ClientDescription>,
                 monitor: Option<MT>| match description {
        Some(description) => restarting_client::<MT>(&shmem, cfg.broker_port, description, main_pid),
        None => {
            let monitor = monitor.ok_or_else(|| Error::illegal_state("the broker has no monitor"))?;
            launched_broker(&shmem, monitor, cfg.broker_port, remote, cores.ids.len())
        }
    };
    let run = |state: Option<State>, mgr: Mgr, desc: ClientDescription| client(state, mgr, desc);
    // The target's own output would cover the status line; the clients' diagnostics stay on
    // the terminal only when `NUMFUZZ_LOG` asks for them.
    let client_stderr = crate::logging::enabled().then_some("/dev/stderr");
    let result = Launcher::builder()
        .shmem_provider(shmem.clone())
        .configuration(EventConfig::from_name(CONFIGURATION))
        .monitor(monitor)
        .run_client(run)
        .cores(&cores)
        .broker_port(cfg.broker_port)
        .stdout_file(Some("/dev/null"))
        .stderr_file(client_stderr)
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

/// A launched core's process: it becomes the core's restarter, and the restarting manager
/// forks the client off it.
fn restarting_client<MT: Monitor>(
    shmem: &StdShMemProvider,
    broker_port: u16,
    description: ClientDescription,
    main_pid: u32,
) -> Result<(Option<State>, Mgr), Error> {
    // The restarter ends with the broker, by SIGKILL, which also ends a stopped process; a
    // restarter has nothing to save.
    end_with_parent(libc::SIGKILL, main_pid);
    let restarter = std::process::id();
    // OOM-safe: the restarter respawns a client even when it was killed without saving its
    // state (see `crate::supervisor`).
    let client = setup_restarting_mgr_llmp(
        shmem.clone(),
        EventConfig::from_name(CONFIGURATION),
        None::<MT>,
        broker_port,
        ManagerKind::Client {
            client_description: description,
        },
        None,
        ShouldSaveState::OOMSafeOnRestart,
        tuple_list!(),
    );
    if client.is_ok() {
        become_client(restarter);
    }
    client
}

/// The launcher's broker: serves until every client restarter it forked has exited.
fn launched_broker<MT: Monitor>(
    shmem: &StdShMemProvider,
    monitor: MT,
    broker_port: u16,
    remote: Option<SocketAddr>,
    local_clients: usize,
) -> Result<(Option<State>, Mgr), Error> {
    let hook = StdLlmpEventHook::<BytesInput, MT>::new(monitor)?;
    let mut broker = LlmpBroker::create_attach_to_tcp(shmem.clone(), tuple_list!(hook), broker_port)?;
    let clients = child_pids(std::process::id());
    broker_loop(&mut broker, remote, local_clients, || {
        clients.iter().all(|&p| exited(p))
    })?;
    Err(Error::shutting_down())
}

/// Which client of a [`serve`]d campaign a process is: `numfuzz run` hands it to each client
/// process in `NUMFUZZ_CLIENT` (`numfuzz_abi::env::CLIENT`) as `ID,CORE,BROKER_PID`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientSlot {
    /// LibAFL's client id: 1, 2, … in the order of the cores, as the Launcher numbers them.
    pub id: usize,
    /// The core the client is bound to (and names its instance directory, `coreN`).
    pub core: usize,
    /// The `numfuzz run` process that runs the broker: the client ends with it.
    pub broker_pid: u32,
}

impl ClientSlot {
    pub fn to_env(&self) -> String {
        format!("{},{},{}", self.id, self.core, self.broker_pid)
    }

    pub fn parse(text: &str) -> Result<ClientSlot, Error> {
        let fields: Vec<&str> = text.split(',').collect();
        let number = |k: usize| fields.get(k).and_then(|f| f.trim().parse::<u64>().ok());
        match (fields.len(), number(0), number(1), number(2)) {
            (3, Some(id), Some(core), Some(pid)) if id > 0 && pid > 0 => Ok(ClientSlot {
                id: id as usize,
                core: core as usize,
                broker_pid: pid as u32,
            }),
            _ => Err(Error::illegal_argument(format!(
                "{}=`{text}` is not ID,CORE,BROKER_PID; client processes are started by `numfuzz run`",
                numfuzz_abi::env::CLIENT
            ))),
        }
    }

    fn description(&self) -> ClientDescription {
        ClientDescription::new(self.id, 0, CoreId(self.core))
    }
}

/// Set by `numfuzz run`'s SIGTERM handler while it serves a campaign.
static TERMINATE: AtomicBool = AtomicBool::new(false);

extern "C" fn on_terminate(_: libc::c_int) {
    TERMINATE.store(true, Ordering::Relaxed);
}

/// How a client process started by [`serve`] ended.
#[derive(Debug)]
pub struct ClientExit {
    pub slot: ClientSlot,
    pub pid: u32,
    pub status: ExitStatus,
}

/// The broker's side of a campaign whose clients are processes of their own: runs the LLMP
/// broker and the monitor in this process, starts one client process per core of
/// `cfg.cores` with `spawn` (which must pass the slot on in `NUMFUZZ_CLIENT`; the process then
/// calls [`join`]), and serves until all of them have exited. Returns how each ended.
pub fn serve<S>(cfg: &CampaignConfig, spawn: S) -> Result<Vec<ClientExit>, Error>
where
    S: FnMut(&ClientSlot) -> std::io::Result<Child>,
{
    with_monitor!(cfg, |monitor| serve_with_monitor(cfg, monitor, spawn))
}

fn serve_with_monitor<MT, S>(cfg: &CampaignConfig, monitor: MT, spawn: S) -> Result<Vec<ClientExit>, Error>
where
    MT: Monitor,
    S: FnMut(&ClientSlot) -> std::io::Result<Child>,
{
    crate::logging::init_from_env();
    crate::registry::register();
    let cores = Cores::from_cmdline(&cfg.cores)?;
    let remote = remote_broker(cfg)?;
    let hook = StdLlmpEventHook::<BytesInput, MT>::new(monitor)?;
    let mut broker = LlmpBroker::create_attach_to_tcp(StdShMemProvider::new()?, tuple_list!(hook), cfg.broker_port)?;
    let mut clients = ClientProcesses::start(&cores, spawn)?;
    let local = clients.0.len();
    // SIGTERM to `numfuzz run` stops the campaign as Ctrl-C does: the clients are asked to
    // stop (a client process ignores it: it is the restarter, whose child fuzzes), and the
    // broker serves them until they have written their final stats.
    TERMINATE.store(false, Ordering::Relaxed);
    // SAFETY: the handler only stores to an atomic.
    unsafe { libc::signal(libc::SIGTERM, on_terminate as *const () as libc::sighandler_t) };
    let mut last_forward: Option<std::time::Instant> = None;
    broker_loop(&mut broker, remote, local, || {
        // Again every half second: a client may not have been forked yet at the first try.
        if TERMINATE.load(Ordering::Relaxed) && last_forward.is_none_or(|t| t.elapsed() >= Duration::from_millis(500)) {
            last_forward = Some(std::time::Instant::now());
            clients.terminate();
        }
        clients.all_exited()
    })?;
    // SAFETY: restoring the default disposition.
    unsafe { libc::signal(libc::SIGTERM, libc::SIG_DFL) };
    Ok(clients.exits())
}

/// The client processes of a [`serve`]d campaign, each with its exit status once it is known.
struct ClientProcesses(Vec<(ClientSlot, Child, Option<ExitStatus>)>);

impl ClientProcesses {
    /// One process per core of `cores`, started by `spawn`; when one fails to start, those
    /// already started are killed.
    fn start<S>(cores: &Cores, mut spawn: S) -> Result<ClientProcesses, Error>
    where
        S: FnMut(&ClientSlot) -> std::io::Result<Child>,
    {
        let mut clients = ClientProcesses(Vec::new());
        for (k, core) in cores.ids.iter().enumerate() {
            let slot = ClientSlot {
                id: k + 1,
                core: core.0,
                broker_pid: std::process::id(),
            };
            match spawn(&slot) {
                Ok(child) => clients.0.push((slot, child, None)),
                Err(e) => {
                    for (_, child, _) in &mut clients.0 {
                        let _ = child.kill();
                        let _ = child.wait();
                    }
                    return Err(Error::os_error(
                        e,
                        format!("starting the client process for core {}", core.0),
                    ));
                }
            }
        }
        Ok(clients)
    }

    fn running(&self) -> impl Iterator<Item = &Child> {
        self.0.iter().filter(|c| c.2.is_none()).map(|c| &c.1)
    }

    /// Reaps the clients that have exited; whether all have.
    fn all_exited(&mut self) -> bool {
        for (_, child, status) in self.0.iter_mut().filter(|c| c.2.is_none()) {
            *status = child.try_wait().ok().flatten();
        }
        self.0.iter().all(|c| c.2.is_some())
    }

    /// Asks every running client to stop: SIGTERM to the fuzzing child of each client process
    /// (the restarter ignores it), then SIGCONT, as a stopped client would leave SIGTERM
    /// pending until resumed.
    fn terminate(&self) {
        for child in self.running() {
            for pid in child_pids(child.id()) {
                // SAFETY: signalling a client process of this campaign.
                unsafe {
                    libc::kill(pid, libc::SIGTERM);
                    libc::kill(pid, libc::SIGCONT);
                }
            }
        }
    }

    /// How each ended, once [`all_exited`](Self::all_exited) holds.
    fn exits(self) -> Vec<ClientExit> {
        self.0
            .into_iter()
            .map(|(slot, child, status)| ClientExit {
                slot,
                pid: child.id(),
                status: status.expect("every client process has exited"),
            })
            .collect()
    }
}

/// Sends this process's stdout to /dev/null, and its stderr too unless `NUMFUZZ_LOG` asks for
/// diagnostics: the target's own output would cover the broker's status line.
fn quiet_client_output() -> Result<(), Error> {
    let null = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .map_err(|e| Error::os_error(e, "opening /dev/null"))?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&null);
    let mut targets = vec![libc::STDOUT_FILENO];
    if !crate::logging::enabled() {
        targets.push(libc::STDERR_FILENO);
    }
    for target in targets {
        // SAFETY: duplicating an open descriptor onto a standard one.
        if unsafe { libc::dup2(fd, target) } < 0 {
            return Err(Error::os_error(
                std::io::Error::last_os_error(),
                "redirecting the client's output",
            ));
        }
    }
    Ok(())
}

/// The client's side of [`serve`], in a process it started: binds to the slot's core, joins
/// the broker and becomes the core's restarter, whose forked child runs `client`. Returns in
/// the child with `client`'s result, and in the restarter with `Error::ShuttingDown` once the
/// client has ended for good (any other error: the restarter could not go on).
pub fn join<C>(cfg: &CampaignConfig, slot: ClientSlot, mut client: C) -> Result<(), Error>
where
    C: FnMut(Option<State>, Mgr, ClientDescription) -> Result<(), Error>,
{
    crate::logging::init_from_env();
    crate::registry::register();
    // The restarter ends with `numfuzz run` (the broker), by SIGKILL, which also ends a stopped
    // process (a restarter has nothing to save); its client, below, stops with the restarter.
    end_with_parent(libc::SIGKILL, slot.broker_pid);
    let description = slot.description();
    description.core_id().set_affinity()?;
    quiet_client_output()?;
    let restarter = std::process::id();
    let (state, mgr) = setup_restarting_mgr_llmp(
        StdShMemProvider::new()?,
        EventConfig::from_name(CONFIGURATION),
        None::<NopMonitor>,
        cfg.broker_port,
        ManagerKind::Client {
            client_description: description.clone(),
        },
        None,
        // OOM-safe: the restarter respawns a client even when it was killed without saving
        // its state (see `crate::supervisor`).
        ShouldSaveState::OOMSafeOnRestart,
        tuple_list!(),
    )?;
    become_client(restarter);
    client(state, mgr, description)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_slot_survives_the_environment_and_bad_ones_are_refused() {
        let slot = ClientSlot {
            id: 2,
            core: 5,
            broker_pid: 4242,
        };
        assert_eq!(ClientSlot::parse(&slot.to_env()).unwrap(), slot);
        for bad in ["", "1,2", "1,2,3,4", "0,1,99", "1,x,99", "1,2,0"] {
            let e = ClientSlot::parse(bad).unwrap_err().to_string();
            assert!(e.contains("numfuzz run"), "{bad}: {e}");
        }
    }
}
