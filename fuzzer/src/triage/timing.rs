//! Where a triage's time went, for `NUMFUZZ_LOG` (set to anything): the seconds of each
//! phase, then each build's replays (served by a long-lived process, run in a process of their
//! own, or answered from memory) and the seconds they took. Whatever a phase spent beyond its
//! replays was the oracle's or numfuzz's own.

use crate::replay::Replayer;
use std::time::{Duration, Instant};

/// The phases of one triage, timed one after another.
pub struct Phases {
    started: Instant,
    done: Vec<(&'static str, Duration)>,
}

impl Phases {
    pub fn start() -> Phases {
        Phases {
            started: Instant::now(),
            done: Vec::new(),
        }
    }

    /// Ends the phase `name` (the time since the previous one ended).
    pub fn end(&mut self, name: &'static str) {
        self.done.push((name, self.started.elapsed()));
        self.started = Instant::now();
    }

    /// Prints the phases and the replays of `builds` (name, replayer) when `NUMFUZZ_LOG` is set.
    pub fn log(&self, builds: &[(&str, Option<&Replayer>)]) {
        if std::env::var_os("NUMFUZZ_LOG").is_none() {
            return;
        }
        let phases: Vec<String> = self
            .done
            .iter()
            .map(|(name, d)| format!("{name} {:.2} s", d.as_secs_f64()))
            .collect();
        eprintln!("numfuzz: triage phases: {}", phases.join(", "));
        for (name, replayer) in builds {
            let Some(s) = replayer.map(Replayer::spent) else {
                continue;
            };
            eprintln!(
                "numfuzz: {name} build: {} served, {} in their own process, {} remembered; {:.2} s",
                s.served, s.own_process, s.remembered, s.seconds
            );
        }
    }
}
