//! A numfuzz campaign: LibAFL's `Launcher` (one client per core, LLMP between them and, with
//! `--broker`, to another machine) and the broker; each client is assembled in
//! [`crate::client`].

use crate::client::{Mgr, State};
use crate::config::CampaignConfig;
use crate::monitor::StatusMonitor;
use libafl::events::llmp::{setup_restarting_mgr_llmp, ManagerKind};
use libafl::events::{ClientDescription, EventConfig, Launcher, ShouldSaveState, StdLlmpEventHook};
use libafl::inputs::BytesInput;
use libafl::monitors::tui::TuiMonitor;
use libafl::monitors::Monitor;
use libafl::Error;
use libafl_bolts::core_affinity::Cores;
use libafl_bolts::llmp::{Broker, LlmpBroker, LlmpHookTuple};
use libafl_bolts::shmem::ShMem;
use libafl_bolts::shmem::{ShMemProvider, StdShMemProvider};
use libafl_bolts::tuples::tuple_list;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

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

/// Asks the kernel to send `signal` to this process when its parent dies, and ends at once
/// if the parent (`parent`) is already gone. A campaign whose broker was killed must not
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
            Some(client_description) => {
                // This process becomes the core's restarter: it ends with the broker.
                end_with_parent(libc::SIGKILL, main_pid);
                let restarter = std::process::id();
                // OOM-safe: the restarter respawns a client even when it was killed without
                // saving its state (see `crate::supervisor`).
                let client = setup_restarting_mgr_llmp(
                    shmem.clone(),
                    configuration,
                    None::<MT>,
                    cfg.broker_port,
                    ManagerKind::Client { client_description },
                    None,
                    ShouldSaveState::OOMSafeOnRestart,
                    tuple_list!(),
                );
                if client.is_ok() {
                    // The client: a dead restarter (so a dead broker) stops it cleanly.
                    end_with_parent(libc::SIGTERM, restarter);
                }
                client
            }
            None => {
                let monitor = monitor.ok_or_else(|| Error::illegal_state("the broker has no monitor"))?;
                let hook = StdLlmpEventHook::<BytesInput, MT>::new(monitor)?;
                let mut broker = LlmpBroker::create_attach_to_tcp(shmem.clone(), tuple_list!(hook), cfg.broker_port)?;
                run_broker(&mut broker, remote, cores.ids.len())
            }
        }
    };
    let run = |state: Option<State>, mgr: Mgr, desc: ClientDescription| client(state, mgr, desc);
    // The target's own output would cover the status line; the clients' diagnostics stay on
    // the terminal only when `NUMFUZZ_LOG` asks for them.
    let client_stderr = crate::logging::enabled().then_some("/dev/stderr");
    let result = Launcher::builder()
        .shmem_provider(shmem.clone())
        .configuration(configuration)
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
