//! The numbers a campaign shows, taken from LibAFL's client statistics at one moment, with
//! what only a running monitor knows (when each count last grew, the newest escaping site).

use crate::i2s::I2S_STATS;
use crate::local_search::{SEARCH_EXECS_STAT, SEARCH_REACHED_STAT};
use crate::maps::EDGES_MAP;
use crate::stats::{CLIENT_RESTARTS_STAT, PRECISE_STATS};
use crate::user_stats::{ESCAPES_STAT, EXCEPTION_STATS, LAST_ESCAPE_STAT};
use libafl::monitors::stats::{ClientStatsManager, UserStatsValue};
use libafl_bolts::ClientId;
use numfuzz_abi::kind::ExceptionKind;
use std::time::{Duration, Instant};

/// One client's line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CoreLine {
    pub client: u32,
    pub execs: u64,
    pub execs_per_sec: f64,
    pub corpus: u64,
    pub exceptions: u64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    pub elapsed: Duration,
    /// The `-V` budget in seconds.
    pub budget: Option<u64>,
    pub execs: u64,
    pub execs_per_sec: f64,
    pub corpus: u64,
    /// (hit, total) edges.
    pub edges: Option<(u64, u64)>,
    /// Crashes and hangs (LibAFL's objectives).
    pub objectives: u64,
    /// Distinct (site, kind) exceptions, in `ExceptionKind::ALL` order.
    pub by_kind: [u64; 4],
    /// How long ago each kind's count last grew.
    pub kind_last_new: [Option<Duration>; 4],
    /// Origins whose input escaped: a result non-finite from finite fields, unreported.
    pub escapes: u64,
    /// The newest escaping origin (`Overflow exp.c:406:22 fmul`) and how long ago it came.
    pub newest_escape: Option<(String, Duration)>,
    /// Local search: (inputs that reached a new exception, executions spent).
    pub search: Option<(u64, u64)>,
    /// Input-to-state: (testcases traced, candidates tried, candidates kept).
    pub i2s: Option<(u64, u64, u64)>,
    /// Clients that died and were replaced.
    pub client_restarts: u64,
    /// (precise runs, raised runs whose re-run a path key skipped, re-runs throttled per site).
    pub precise: Option<(u64, u64, u64)>,
    pub cores: Vec<CoreLine>,
}

impl Snapshot {
    pub fn exceptions(&self) -> u64 {
        self.by_kind.iter().sum()
    }

    /// The same snapshot `by` later: the clocks run on between two events.
    pub fn aged(&self, by: Duration) -> Snapshot {
        let mut s = self.clone();
        s.elapsed += by;
        for d in s.kind_last_new.iter_mut().flatten() {
            *d += by;
        }
        if let Some((_, d)) = &mut s.newest_escape {
            *d += by;
        }
        s
    }

    /// The precise runs' share of the executions, in percent.
    pub fn precise_percent(&self) -> Option<f64> {
        self.precise
            .map(|(runs, _, _)| runs as f64 * 100.0 / self.execs.max(1) as f64)
    }

    /// How long ago the newest exception of any kind came.
    pub fn last_exception(&self) -> Option<Duration> {
        self.kind_last_new.iter().flatten().min().copied()
    }
}

/// What a monitor remembers between two displays.
#[derive(Debug)]
pub struct Tracker {
    started: Instant,
    budget: Option<u64>,
    by_kind: [u64; 4],
    kind_grew: [Option<Instant>; 4],
    escape_texts: Vec<(ClientId, String)>,
    newest_escape: Option<(String, Instant)>,
}

fn number(stats: &ClientStatsManager, name: &str) -> Option<u64> {
    stats.aggregated().get(name).and_then(UserStatsValue::as_u64)
}

/// The edge map's coverage (hit, total), the best client's. LibAFL's `edges_coverage` sums
/// the ratios of all of a client's map feedbacks, so the objective's `crash_edges` map counted
/// too once it had fired: the screen's total doubled at the first crash or hang.
fn edge_coverage(stats: &ClientStatsManager) -> Option<(u64, u64)> {
    stats
        .client_stats()
        .values()
        .filter_map(|client| match client.get_user_stats(EDGES_MAP)?.value() {
            UserStatsValue::Ratio(hit, total) if *total > 0 => Some((*hit, *total)),
            _ => None,
        })
        .max_by_key(|&(hit, total)| u128::from(hit) * 1_000_000 / u128::from(total))
}

impl Tracker {
    pub fn new(budget: Option<u64>) -> Tracker {
        Tracker {
            started: Instant::now(),
            budget,
            by_kind: [0; 4],
            kind_grew: [None; 4],
            escape_texts: Vec::new(),
            newest_escape: None,
        }
    }

    /// The snapshot after an event from `sender`: a new escape text from it is the newest.
    pub fn update(&mut self, stats: &mut ClientStatsManager, sender: ClientId) -> Snapshot {
        let now = Instant::now();
        for (k, name) in EXCEPTION_STATS.iter().enumerate() {
            let n = number(stats, name).unwrap_or(0);
            if n > self.by_kind[k] {
                self.by_kind[k] = n;
                self.kind_grew[k] = Some(now);
            }
        }
        self.note_escape(stats, sender, now);
        let g = stats.global_stats();
        let (execs, execs_per_sec, corpus, objectives) =
            (g.total_execs, g.execs_per_sec, g.corpus_size, g.objective_size);
        let search = number(stats, SEARCH_REACHED_STAT).zip(number(stats, SEARCH_EXECS_STAT));
        let [traced, tried, kept] = I2S_STATS.map(|n| number(stats, n));
        let i2s = traced.zip(tried).zip(kept).map(|((a, b), c)| (a, b, c));
        let [runs, skipped, throttled] = PRECISE_STATS.map(|n| number(stats, n));
        let precise = runs.zip(skipped).zip(throttled).map(|((a, b), c)| (a, b, c));
        Snapshot {
            elapsed: self.started.elapsed(),
            budget: self.budget,
            execs,
            execs_per_sec,
            corpus,
            edges: edge_coverage(stats),
            objectives,
            by_kind: self.by_kind,
            kind_last_new: self.kind_grew.map(|t| t.map(|t| now - t)),
            escapes: number(stats, ESCAPES_STAT).unwrap_or(0),
            newest_escape: self.newest_escape.as_ref().map(|(s, t)| (s.clone(), now - *t)),
            search,
            i2s,
            client_restarts: number(stats, CLIENT_RESTARTS_STAT).unwrap_or(0),
            precise,
            cores: cores(stats),
        }
    }

    fn note_escape(&mut self, stats: &ClientStatsManager, sender: ClientId, now: Instant) {
        let Ok(client) = stats.get(sender) else {
            return;
        };
        let Some(UserStatsValue::String(text)) = client.get_user_stats(LAST_ESCAPE_STAT).map(|u| u.value()) else {
            return;
        };
        match self.escape_texts.iter_mut().find(|(c, _)| *c == sender) {
            Some((_, known)) if known == text => return,
            Some((_, known)) => *known = text.to_string(),
            None => self.escape_texts.push((sender, text.to_string())),
        }
        self.newest_escape = Some((text.to_string(), now));
    }
}

/// One line per client that has reported, in client order.
fn cores(stats: &mut ClientStatsManager) -> Vec<CoreLine> {
    let ids = stats.client_ids_sorted().to_vec();
    let now = libafl_bolts::current_time();
    let mut lines = Vec::new();
    for id in ids {
        let exceptions = stats.get(id).map_or(0, |c| {
            EXCEPTION_STATS
                .iter()
                .filter_map(|n| c.get_user_stats(n).and_then(|u| u.value().as_u64()))
                .sum()
        });
        let line = stats.update_client_stats_for(id, |c| CoreLine {
            client: id.0,
            execs: c.executions(),
            execs_per_sec: c.execs_per_sec(now),
            corpus: c.corpus_size(),
            exceptions,
        });
        if let Ok(line) = line {
            if line.execs > 0 {
                lines.push(line);
            }
        }
    }
    lines
}

/// `ExceptionKind::ALL` with each kind's count, for display.
pub fn kinds(s: &Snapshot) -> impl Iterator<Item = (ExceptionKind, u64, Option<Duration>)> + '_ {
    ExceptionKind::ALL
        .iter()
        .enumerate()
        .map(|(k, kind)| (*kind, s.by_kind[k], s.kind_last_new[k]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use libafl::monitors::stats::{AggregatorOps, UserStats};

    fn ratio(hit: u64, total: u64) -> UserStats {
        UserStats::new(UserStatsValue::Ratio(hit, total), AggregatorOps::Avg)
    }

    #[test]
    fn the_edges_on_screen_are_the_edge_map_s_alone() {
        let mut stats = ClientStatsManager::new();
        let client = ClientId(1);
        stats.client_stats_insert(client).unwrap();
        assert_eq!(edge_coverage(&stats), None);
        stats
            .update_client_stats_for(client, |c| {
                c.update_user_stats(EDGES_MAP.into(), ratio(146, 8973));
                c.update_user_stats("crash_edges".into(), ratio(110, 8973));
            })
            .unwrap();
        assert_eq!(edge_coverage(&stats), Some((146, 8973)));
    }
}
