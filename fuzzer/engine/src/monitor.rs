//! Plain status lines for campaigns not on a terminal (CI, pipes, log files).

use crate::feedbacks::EXCEPTION_STATS;
use libafl::monitors::stats::ClientStatsManager;
use libafl::monitors::Monitor;
use libafl::Error;
use libafl_bolts::ClientId;
use numfuzz_abi::kind::ExceptionKind;
use std::time::{Duration, Instant};

/// Prints a status line every few seconds, and at once when a new exception is found.
pub struct StatusMonitor {
    started: Instant,
    last_print: Option<Instant>,
    last_exceptions: u64,
    last_find: Option<Instant>,
    budget: Option<u64>,
}

impl StatusMonitor {
    pub fn new(budget_secs: Option<u64>) -> Self {
        StatusMonitor {
            started: Instant::now(),
            last_print: None,
            last_exceptions: 0,
            last_find: None,
            budget: budget_secs,
        }
    }
}

fn human(n: f64) -> String {
    if n >= 1e6 {
        format!("{:.2}M", n / 1e6)
    } else if n >= 1e3 {
        format!("{:.1}k", n / 1e3)
    } else {
        format!("{n:.0}")
    }
}

impl Monitor for StatusMonitor {
    fn display(&mut self, stats: &mut ClientStatsManager, _event: &str, _sender: ClientId) -> Result<(), Error> {
        let by_kind: Vec<u64> = EXCEPTION_STATS
            .iter()
            .map(|name| stats.aggregated().get(*name).and_then(|v| v.as_u64()).unwrap_or(0))
            .collect();
        let total: u64 = by_kind.iter().sum();
        let new_exception = total > self.last_exceptions;
        if new_exception {
            self.last_exceptions = total;
            self.last_find = Some(Instant::now());
        }
        let due = self.last_print.is_none_or(|t| t.elapsed() >= Duration::from_secs(5));
        if !due && !new_exception {
            return Ok(());
        }
        self.last_print = Some(Instant::now());
        let edges = stats
            .edges_coverage()
            .map_or("-".to_string(), |e| format!("{}/{}", e.edges_hit, e.edges_total));
        let g = stats.global_stats();
        let (execs, speed, corpus, objectives) = (g.total_execs, g.execs_per_sec, g.corpus_size, g.objective_size);
        let kinds: Vec<String> = ExceptionKind::ALL
            .iter()
            .zip(&by_kind)
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        let stat = |name: &str| stats.aggregated().get(name).and_then(|v| v.as_u64());
        let search = match (
            stat(crate::local_search::SEARCH_EXECS_STAT),
            stat(crate::local_search::SEARCH_REACHED_STAT),
        ) {
            (Some(execs), Some(reached)) => format!("  search {reached} reached in {}", human(execs as f64)),
            _ => String::new(),
        };
        let elapsed = self.started.elapsed().as_secs();
        let budget = self.budget.map_or(String::new(), |b| format!("/{b}s"));
        let last = self
            .last_find
            .map_or("none yet".to_string(), |t| format!("{}s ago", t.elapsed().as_secs()));
        println!(
            "[numfuzz] {elapsed}s{budget}  execs {} ({}/s)  corpus {corpus}  edges {edges}  exceptions {total}{}  crashes+hangs {objectives}{search}  last exception {last}",
            human(execs as f64),
            human(speed),
            if kinds.is_empty() { String::new() } else { format!(" ({})", kinds.join(", ")) },
        );
        Ok(())
    }
}
