//! When a client stops: the `-V` deadline, Ctrl-C / SIGTERM, or the death of its restarter.
//! Every loop of a client (the stats stage, seeding, hang confirmation) asks here, so none of
//! them needs the others.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::SystemTime;

/// Set by the SIGINT/SIGTERM handler of a fuzzing client; the stats stage turns it into a
/// clean stop.
static STOP_REQUESTED: AtomicBool = AtomicBool::new(false);

/// The restarter of this client process (0 in any other process).
static RESTARTER: AtomicU32 = AtomicU32::new(0);

/// Whether this client was asked to stop: by SIGINT/SIGTERM, or by the death of its
/// restarter (see `campaign::become_client`).
pub fn stop_requested() -> bool {
    STOP_REQUESTED.load(Ordering::Relaxed) || restarter_gone()
}

/// [`campaign_over`] for loops that ask once per execution: the deadline and a SIGINT/SIGTERM
/// (a clock read and an atomic), not the restarter's death (a system call), which the stats
/// stage notices between stages.
pub fn past_deadline(deadline: Option<SystemTime>) -> bool {
    STOP_REQUESTED.load(Ordering::Relaxed) || deadline.is_some_and(|d| SystemTime::now() >= d)
}

/// Whether the campaign is over: a stop was requested or its `-V` deadline has passed.
pub fn campaign_over(deadline: Option<SystemTime>) -> bool {
    restarter_gone() || past_deadline(deadline)
}

/// This process is the client of `restarter`: its death is a request to stop.
pub fn watch_restarter(restarter: u32) {
    RESTARTER.store(restarter, Ordering::Relaxed);
}

/// Whether this is a client process whose restarter is gone.
fn restarter_gone() -> bool {
    let restarter = RESTARTER.load(Ordering::Relaxed);
    restarter != 0 && std::os::unix::process::parent_id() != restarter
}

extern "C" fn on_stop_signal(_: libc::c_int) {
    STOP_REQUESTED.store(true, Ordering::SeqCst);
}

/// Replaces the client's SIGINT/SIGTERM handling with a request to stop after the current
/// input, so that the output directory is complete and the stats are final.
pub fn install_stop_handler() {
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_stop_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_stop_signal as *const () as libc::sighandler_t);
    }
}
