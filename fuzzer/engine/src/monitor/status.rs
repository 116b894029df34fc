//! Plain status lines for campaigns not on a terminal (CI, pipes, log files, `--no-tui`): the
//! screen's numbers, one line every few seconds and at once when a new exception comes.

use super::draw::{human, span};
use super::snapshot::Tracker;
use libafl::monitors::stats::ClientStatsManager;
use libafl::monitors::Monitor;
use libafl::Error;
use libafl_bolts::ClientId;
use std::time::{Duration, Instant};

pub struct StatusMonitor {
    tracker: Tracker,
    last_print: Option<Instant>,
    last_exceptions: u64,
}

impl StatusMonitor {
    pub fn new(budget_secs: Option<u64>) -> Self {
        StatusMonitor {
            tracker: Tracker::new(budget_secs),
            last_print: None,
            last_exceptions: 0,
        }
    }
}

impl Monitor for StatusMonitor {
    fn display(&mut self, stats: &mut ClientStatsManager, _event: &str, sender: ClientId) -> Result<(), Error> {
        let s = self.tracker.update(stats, sender);
        let new_exception = s.exceptions() > self.last_exceptions;
        self.last_exceptions = s.exceptions();
        let due = self.last_print.is_none_or(|t| t.elapsed() >= Duration::from_secs(5));
        if !due && !new_exception {
            return Ok(());
        }
        self.last_print = Some(Instant::now());
        let edges = s.edges.map_or("-".to_string(), |(hit, total)| format!("{hit}/{total}"));
        let kinds: Vec<String> = super::snapshot::kinds(&s)
            .filter(|(_, n, _)| *n > 0)
            .map(|(k, n, _)| format!("{k} {n}"))
            .collect();
        let kinds = if kinds.is_empty() {
            String::new()
        } else {
            format!(" ({})", kinds.join(", "))
        };
        let search = s.search.map_or(String::new(), |(reached, execs)| {
            format!("  search {reached} reached in {}", human(execs as f64))
        });
        let i2s = s.i2s.map_or(String::new(), |(_, tried, kept)| {
            format!("  i2s {kept} kept of {}", human(tried as f64))
        });
        let restarts = if s.client_restarts > 0 {
            format!("  restarts {}", s.client_restarts)
        } else {
            String::new()
        };
        let share = s.precise_percent().unwrap_or(0.0);
        let precise = s.precise.map_or(String::new(), |(_, _, throttled)| {
            format!("  precise {share:.0}% (throttled {})", human(throttled as f64))
        });
        let escapes = match &s.newest_escape {
            Some((site, _)) => format!("  escapes {} (newest {site})", s.escapes),
            None => format!("  escapes {}", s.escapes),
        };
        let budget = s.budget.map_or(String::new(), |b| format!("/{b}s"));
        let last = s
            .last_exception()
            .map_or("none yet".to_string(), |d| format!("{} ago", span(d)));
        println!(
            "[numfuzz] {}s{budget}  execs {} ({}/s)  corpus {}  edges {edges}  exceptions {}{kinds}{escapes}  crashes+hangs {}{restarts}{precise}{search}{i2s}  last exception {last}",
            s.elapsed.as_secs(),
            human(s.execs as f64),
            human(s.execs_per_sec),
            s.corpus,
            s.exceptions(),
            s.objectives,
        );
        Ok(())
    }
}
