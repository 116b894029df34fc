//! Surviving a client's death.
//!
//! LibAFL's restarter (one per core, the client's parent) respawns a client that dies, since
//! the campaign runs with `ShouldSaveState::OOMSafeOnRestart`: even a client killed without a
//! chance to save its state (SIGKILL, the kernel's OOM killer) is replaced, and the successor
//! rebuilds its corpus from the instance directory ([`crate::client::seeds`]). This module is
//! the client's side of it: each client notes its start and its end in `clients.jsonl`, so a
//! successor sees that its predecessor never wrote an end, logs the restart with what it can
//! learn of the cause, and refuses to go on after too many restarts in a short time instead
//! of looping. `numfuzz run` reads the same file to tell a spent budget from a cut-short one.

use numfuzz_outdir::{ClientEvent, ClientHistory, EndReason, InstanceDir};
use std::cell::Cell;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// More silent deaths than this within [`RESTART_WINDOW`] end the instance: something kills
/// every client soon after it starts, and restarting again would only loop.
pub const MAX_RESTARTS: usize = 5;
pub const RESTART_WINDOW: Duration = Duration::from_secs(60);

/// How this client came to be.
#[derive(Clone, Debug, PartialEq)]
pub enum Arrival {
    /// The first client of the campaign in this instance.
    First,
    /// LibAFL's restarter handed over the state its predecessor saved: the normal restart
    /// after a crash or time-out of an in-process target.
    Restored,
    /// The predecessor died without an end record; the cause is what could be learnt.
    Restarted { previous_pid: u32, cause: String },
}

/// This client's record keeper.
pub struct ClientLife {
    out: InstanceDir,
    campaign_ms: u64,
    pid: u32,
    pub arrival: Arrival,
    /// Silent deaths in this instance during this campaign, this one's predecessor included.
    pub restarts: usize,
    ended: Cell<Option<EndReason>>,
}

/// The kernel's count of processes its OOM killer ended, if readable.
fn oom_kills() -> Option<u64> {
    let vmstat = std::fs::read_to_string("/proc/vmstat").ok()?;
    vmstat
        .lines()
        .find_map(|l| l.strip_prefix("oom_kill "))
        .and_then(|v| v.trim().parse().ok())
}

fn now_ms_since(campaign_ms: u64) -> u64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64;
    now.saturating_sub(campaign_ms)
}

/// What a client that left no end record most likely died of.
fn cause_of_silent_death(history: &ClientHistory, oom_now: Option<u64>) -> String {
    if let Some(note) = &history.dying {
        return note.clone();
    }
    let oom_then = history.last_start.and_then(|(_, _, o)| o);
    match (oom_then, oom_now) {
        (Some(then), Some(now)) if now > then => {
            "killed by the kernel's OOM killer (its oom_kill count rose while it ran)".into()
        }
        _ => "killed without a chance to say why (SIGKILL, or a crash outside the target)".into(),
    }
}

impl ClientLife {
    /// Records this client's start in `out`. `restored` is whether LibAFL handed over a saved
    /// state. Returns the record keeper, and the reason to give up when the instance has had
    /// more than [`MAX_RESTARTS`] silent deaths within [`RESTART_WINDOW`].
    pub fn begin(out: &InstanceDir, campaign_ms: u64, restored: bool) -> (ClientLife, Option<String>) {
        let pid = std::process::id();
        let time_ms = now_ms_since(campaign_ms);
        let history = ClientHistory::of(&out.client_events(), campaign_ms);
        let oom_now = oom_kills();
        let arrival = match history.unfinished() {
            Some(_) if restored => Arrival::Restored,
            Some(previous_pid) => Arrival::Restarted {
                previous_pid,
                cause: cause_of_silent_death(&history, oom_now),
            },
            None => Arrival::First,
        };
        let mut restarts = history.restarts.len();
        let mut give_up = None;
        if let Arrival::Restarted { previous_pid, cause } = &arrival {
            restarts += 1;
            log::warn!("client {previous_pid} ended without finishing ({cause}); client {pid} takes over");
            let _ = out.append_client_event(&ClientEvent::Restart {
                pid,
                previous_pid: *previous_pid,
                campaign_ms,
                time_ms,
                cause: cause.clone(),
            });
            let window_start = time_ms.saturating_sub(RESTART_WINDOW.as_millis() as u64);
            let recent = history.restarts_since(window_start) + 1;
            if recent > MAX_RESTARTS {
                give_up = Some(format!(
                    "instance {}: {recent} clients died within {} s, the last one {cause}; not restarting again",
                    out.name,
                    RESTART_WINDOW.as_secs()
                ));
            }
        }
        let _ = out.append_client_event(&ClientEvent::Start {
            pid,
            campaign_ms,
            time_ms,
            restored,
            oom_kills: oom_now,
        });
        let life = ClientLife {
            out: out.clone(),
            campaign_ms,
            pid,
            arrival,
            restarts,
            ended: Cell::new(None),
        };
        (life, give_up)
    }

    /// Records that this client stopped on its own.
    pub fn end(&self, reason: EndReason, message: Option<String>) {
        self.ended.set(Some(reason));
        let _ = self.out.append_client_event(&ClientEvent::End {
            pid: self.pid,
            campaign_ms: self.campaign_ms,
            time_ms: now_ms_since(self.campaign_ms),
            reason,
            message,
        });
    }

    /// How this client ended, once it has.
    pub fn ended(&self) -> Option<EndReason> {
        self.ended.get()
    }

    /// Makes an engine panic leave its message in `clients.jsonl` before the process dies, so
    /// the successor can say why. Installed before the executor, whose own hook (LibAFL's,
    /// for panics inside the target) calls this one first.
    pub fn note_panics(&self) {
        static NOTED: Mutex<Option<(InstanceDir, u64)>> = Mutex::new(None);
        let first = {
            let mut noted = NOTED.lock().unwrap_or_else(|e| e.into_inner());
            let first = noted.is_none();
            *noted = Some((self.out.clone(), self.campaign_ms));
            first
        };
        if !first {
            return;
        }
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let Ok(noted) = NOTED.try_lock() {
                if let Some((out, campaign_ms)) = noted.as_ref() {
                    let _ = out.append_client_event(&ClientEvent::Dying {
                        pid: std::process::id(),
                        campaign_ms: *campaign_ms,
                        time_ms: now_ms_since(*campaign_ms),
                        cause: format!("the engine panicked: {info}").replace('\n', " "),
                    });
                }
            }
            previous(info);
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance() -> (tempfile::TempDir, InstanceDir) {
        let dir = tempfile::tempdir().unwrap();
        let out = InstanceDir::create(dir.path(), "default").unwrap();
        (dir, out)
    }

    /// A client's start record as if written by another process.
    fn foreign_start(out: &InstanceDir, pid: u32, campaign_ms: u64, oom_kills: Option<u64>) {
        out.append_client_event(&ClientEvent::Start {
            pid,
            campaign_ms,
            time_ms: 0,
            restored: false,
            oom_kills,
        })
        .unwrap();
    }

    #[test]
    fn a_client_whose_predecessor_left_no_end_is_a_restart_with_a_cause() {
        let (_d, out) = instance();
        let (first, give_up) = ClientLife::begin(&out, 1000, false);
        assert_eq!(first.arrival, Arrival::First);
        assert!(give_up.is_none());
        // The first client dies without an end; the next one (this process again) sees it.
        let (second, give_up) = ClientLife::begin(&out, 1000, false);
        match &second.arrival {
            Arrival::Restarted { previous_pid, cause } => {
                assert_eq!(*previous_pid, std::process::id());
                assert!(cause.contains("SIGKILL"), "{cause}");
            }
            other => panic!("not a restart: {other:?}"),
        }
        assert_eq!(second.restarts, 1);
        assert!(give_up.is_none());
        // A client that ended writes an end; its successor in the next campaign is a first.
        second.end(EndReason::Budget, None);
        let (third, _) = ClientLife::begin(&out, 2000, false);
        assert_eq!(third.arrival, Arrival::First);
        assert_eq!(third.restarts, 0);
    }

    #[test]
    fn a_restored_state_is_the_normal_restart_after_a_target_crash() {
        let (_d, out) = instance();
        ClientLife::begin(&out, 1000, false);
        let (life, _) = ClientLife::begin(&out, 1000, true);
        assert_eq!(life.arrival, Arrival::Restored);
        assert_eq!(life.restarts, 0);
    }

    #[test]
    fn an_oom_kill_or_a_dying_note_names_the_cause() {
        let (_d, out) = instance();
        foreign_start(&out, 7, 1000, Some(0));
        let history = ClientHistory::of(&out.client_events(), 1000);
        assert!(cause_of_silent_death(&history, Some(1)).contains("OOM killer"));
        assert!(cause_of_silent_death(&history, Some(0)).contains("SIGKILL"));
        assert!(cause_of_silent_death(&history, None).contains("SIGKILL"));
        out.append_client_event(&ClientEvent::Dying {
            pid: 7,
            campaign_ms: 1000,
            time_ms: 5,
            cause: "the engine panicked: boom".into(),
        })
        .unwrap();
        let history = ClientHistory::of(&out.client_events(), 1000);
        assert_eq!(cause_of_silent_death(&history, Some(1)), "the engine panicked: boom");
    }

    #[test]
    fn too_many_deaths_in_a_short_time_give_up() {
        let (_d, out) = instance();
        foreign_start(&out, 1, 1000, None);
        let mut last = None;
        for _ in 0..=MAX_RESTARTS {
            let (_, give_up) = ClientLife::begin(&out, 1000, false);
            last = give_up;
        }
        let reason = last.expect("gave up");
        assert!(reason.contains("6 clients died within 60 s"), "{reason}");
    }
}
