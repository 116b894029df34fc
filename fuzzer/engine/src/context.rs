//! What one fuzzing instance (client) shares between its components: its output directory,
//! the target's site table and the campaign clock.

use crate::meta::AflCounters;
use numfuzz_abi::site::SiteTable;
use numfuzz_outdir::{InputDir, InstanceDir};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub struct Instance {
    pub out: InstanceDir,
    pub sites: SiteTable,
    /// When the campaign started (all instances share it).
    pub start: SystemTime,
    /// Clients of this instance that died silently during this campaign and were replaced.
    pub client_restarts: usize,
    /// While re-reading an earlier campaign's queue and findings on resume, nothing is
    /// written again.
    importing: AtomicBool,
}

impl Instance {
    pub fn new(out: InstanceDir, sites: SiteTable, start_unix_ms: u64) -> Instance {
        Instance {
            out,
            sites,
            start: UNIX_EPOCH + Duration::from_millis(start_unix_ms),
            client_restarts: 0,
            importing: AtomicBool::new(false),
        }
    }

    pub fn elapsed_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(self.start)
            .unwrap_or_default()
            .as_millis() as u64
    }

    pub fn importing(&self) -> bool {
        self.importing.load(Ordering::Relaxed)
    }

    pub fn set_importing(&self, on: bool) {
        self.importing.store(on, Ordering::Relaxed);
    }

    /// Counters that continue after whatever an earlier run left in the directories.
    pub fn initial_counters(&self) -> AflCounters {
        let mut c = AflCounters {
            queue: self.out.next_id(InputDir::Queue),
            crashes: self.out.next_id(InputDir::Crashes),
            hangs: self.out.next_id(InputDir::Hangs),
            ..AflCounters::default()
        };
        for record in self.out.exceptions() {
            c.exceptions_by_kind[record.kind as usize] += 1;
        }
        c
    }
}
