//! `clients.jsonl`: when each fuzzing-client process of an instance started and how it ended.
//!
//! A client can die without a word (SIGKILL, the kernel's OOM killer) and be respawned by its
//! restarter. The record lets the successor see that its predecessor never wrote an end, say
//! so, and count restarts; and it lets `numfuzz run` tell a campaign that spent its budget
//! from one that was cut short. Lines are appended with one `write` each; a line cut by a
//! crash is skipped when read.

use crate::jsonl;
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const CLIENTS_FILE: &str = "clients.jsonl";

/// Why a client stopped fuzzing on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// The `-V` budget was spent.
    Budget,
    /// SIGINT / SIGTERM (Ctrl-C, or the campaign's broker went away).
    Signal,
    /// Too many restarts in a short time: the client refused to go on.
    GaveUp,
    /// An error the client could not fuzz past (e.g. a target that does not start).
    Failed,
}

/// One line of `clients.jsonl`. `campaign_ms` is the start of the `numfuzz run` it belongs to
/// (Unix milliseconds), `time_ms` milliseconds since then.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ClientEvent {
    /// A client process began. `restored` is true when LibAFL's restarter handed it the state
    /// its predecessor saved (the normal restart after a crash or time-out of an in-process
    /// target), false when it started from the output directory.
    Start {
        pid: u32,
        campaign_ms: u64,
        time_ms: u64,
        restored: bool,
        /// The kernel's `oom_kill` counter (`/proc/vmstat`) at the start, to tell an OOM kill
        /// from other silent deaths.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        oom_kills: Option<u64>,
    },
    /// A client about to die wrote why (a panic in the engine).
    Dying {
        pid: u32,
        campaign_ms: u64,
        time_ms: u64,
        cause: String,
    },
    /// A client started in place of one that ended without an end record.
    Restart {
        pid: u32,
        previous_pid: u32,
        campaign_ms: u64,
        time_ms: u64,
        cause: String,
    },
    /// A client stopped on its own.
    End {
        pid: u32,
        campaign_ms: u64,
        time_ms: u64,
        reason: EndReason,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
}

impl ClientEvent {
    pub fn campaign_ms(&self) -> u64 {
        match self {
            ClientEvent::Start { campaign_ms, .. }
            | ClientEvent::Dying { campaign_ms, .. }
            | ClientEvent::Restart { campaign_ms, .. }
            | ClientEvent::End { campaign_ms, .. } => *campaign_ms,
        }
    }

    pub fn pid(&self) -> u32 {
        match self {
            ClientEvent::Start { pid, .. }
            | ClientEvent::Dying { pid, .. }
            | ClientEvent::Restart { pid, .. }
            | ClientEvent::End { pid, .. } => *pid,
        }
    }
}

/// Appends `event` to `dir/clients.jsonl` as one line.
pub fn append(dir: &Path, event: &ClientEvent) -> std::io::Result<()> {
    jsonl::append(&dir.join(CLIENTS_FILE), event)
}

/// Reads `dir/clients.jsonl`, oldest first, skipping malformed lines.
pub fn read(dir: &Path) -> Vec<ClientEvent> {
    jsonl::read(&dir.join(CLIENTS_FILE))
}

/// One instance's clients during one campaign, from its events.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientHistory {
    /// (time_ms, cause) of each restart after a silent death.
    pub restarts: Vec<(u64, String)>,
    /// The last client's start: (pid, time_ms, oom_kills), if any client started.
    pub last_start: Option<(u32, u64, Option<u64>)>,
    /// The last client's end, if it wrote one: (time_ms, reason, message).
    pub end: Option<(u64, EndReason, Option<String>)>,
    /// What the last client wrote before dying, if it did.
    pub dying: Option<String>,
}

impl ClientHistory {
    /// The history of campaign `campaign_ms` in `events`.
    pub fn of(events: &[ClientEvent], campaign_ms: u64) -> ClientHistory {
        let mut h = ClientHistory::default();
        for e in events.iter().filter(|e| e.campaign_ms() == campaign_ms) {
            match e {
                ClientEvent::Start {
                    pid,
                    time_ms,
                    oom_kills,
                    ..
                } => {
                    h.last_start = Some((*pid, *time_ms, *oom_kills));
                    h.end = None;
                    h.dying = None;
                }
                ClientEvent::Dying { pid, cause, .. } if h.last_start.is_some_and(|s| s.0 == *pid) => {
                    h.dying = Some(cause.clone());
                }
                ClientEvent::Restart { time_ms, cause, .. } => h.restarts.push((*time_ms, cause.clone())),
                ClientEvent::End {
                    pid,
                    time_ms,
                    reason,
                    message,
                    ..
                } if h.last_start.is_some_and(|s| s.0 == *pid) => {
                    h.end = Some((*time_ms, *reason, message.clone()));
                }
                _ => {}
            }
        }
        h
    }

    /// The last client started and never wrote an end: it died, or is still running.
    pub fn unfinished(&self) -> Option<u32> {
        match (self.last_start, &self.end) {
            (Some((pid, ..)), None) => Some(pid),
            _ => None,
        }
    }

    /// Restarts at or after `since_ms`.
    pub fn restarts_since(&self, since_ms: u64) -> usize {
        self.restarts.iter().filter(|(t, _)| *t >= since_ms).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn start(pid: u32, campaign_ms: u64, time_ms: u64) -> ClientEvent {
        ClientEvent::Start {
            pid,
            campaign_ms,
            time_ms,
            restored: false,
            oom_kills: Some(3),
        }
    }

    #[test]
    fn a_client_without_an_end_is_unfinished_and_its_successor_counts_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        append(dir.path(), &start(10, 5, 0)).unwrap();
        let h = ClientHistory::of(&read(dir.path()), 5);
        assert_eq!(h.unfinished(), Some(10));
        append(
            dir.path(),
            &ClientEvent::Restart {
                pid: 11,
                previous_pid: 10,
                campaign_ms: 5,
                time_ms: 9000,
                cause: "killed".into(),
            },
        )
        .unwrap();
        append(dir.path(), &start(11, 5, 9000)).unwrap();
        append(
            dir.path(),
            &ClientEvent::End {
                pid: 11,
                campaign_ms: 5,
                time_ms: 20000,
                reason: EndReason::Budget,
                message: None,
            },
        )
        .unwrap();
        // A cut line (a crash mid-write) is skipped.
        std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join(CLIENTS_FILE))
            .unwrap()
            .write_all(b"{\"event\":\"sta")
            .unwrap();
        let h = ClientHistory::of(&read(dir.path()), 5);
        assert_eq!(h.unfinished(), None);
        assert_eq!(h.restarts, vec![(9000, "killed".to_string())]);
        assert_eq!(h.restarts_since(9001), 0);
        assert_eq!(h.end, Some((20000, EndReason::Budget, None)));
        // Another campaign in the same directory (a resume) has its own history.
        assert_eq!(ClientHistory::of(&read(dir.path()), 6), ClientHistory::default());
    }

    #[test]
    fn an_end_or_dying_note_of_an_earlier_client_does_not_belong_to_the_last() {
        let events = vec![
            start(1, 5, 0),
            ClientEvent::Dying {
                pid: 1,
                campaign_ms: 5,
                time_ms: 10,
                cause: "panicked".into(),
            },
            start(2, 5, 20),
        ];
        let h = ClientHistory::of(&events, 5);
        assert_eq!(h.unfinished(), Some(2));
        assert_eq!(h.dying, None);
    }
}
