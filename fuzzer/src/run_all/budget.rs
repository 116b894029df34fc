//! `run-all --budget`: one fuzzing time for a whole library, spent in rounds where findings
//! still grow.
//!
//! **Round 0** gives every function half its equal share (`budget / 2n`): none is starved, and
//! each one's growth is measured. **Later rounds** each give out a quarter of the budget (the
//! last one what remains) as slices, in proportion to an upper-confidence index per function:
//!
//! ```text
//! index = rate + scale * sqrt(2 ln(slices so far) / slices it had)
//! ```
//!
//! `rate` is what its last slice gained in distinct exceptions, escapes, hangs and a tenth of
//! its new edges, per second, over the **second half** of that slice only: every campaign finds
//! most at its start, and what it still finds late is what another slice buys. `scale` is the
//! mean rate, so the exploration term is in the rates' unit (all zero: slices in equal shares).
//!
//! Why UCB1 (with the last slice as the arm's estimate, since a campaign's yield only falls):
//! it is deterministic, so the same measurements give the same plan and `--continue` replans a
//! round exactly; it needs no prior; and a function whose one slice found nothing late still
//! gets another look while the others pile up slices. Thompson sampling or EXP3 would need
//! randomness and a reward scale they assume, neither of which a library's functions share.
//!
//! A slice is `numfuzz run -V SLICE` on the function's campaign directory, which resumes it
//! (queue and findings re-read, not written again). Slices shorter than [`MIN_SLICE`] are not
//! given: they would be mostly that re-reading.

use super::jobs::{self, JobSettings};
use super::layout::Layout;
use anyhow::Context;
use numfuzz_outdir::layout::OutDir;
use numfuzz_outdir::stats::PlotRow;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The shortest slice given, in seconds.
pub const MIN_SLICE: u64 = 3;
/// Later rounds give out `budget / LATER_ROUND_PARTS` each: two rounds after round 0. Every
/// slice after the first re-reads its campaign's queue and findings before it fuzzes (6 s of a
/// 14 s slice of GSL's bessel_Jnu), so fewer, longer slices waste less than many short ones.
const LATER_ROUND_PARTS: u64 = 4;
/// What one new edge weighs against one new finding in a slice's growth.
const EDGE_WEIGHT: f64 = 0.1;

/// Every slice given so far, in `OUT/budget.json` (rewritten after each slice, for
/// `--continue`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Ledger {
    pub budget: u64,
    pub slices: Vec<Slice>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Slice {
    pub round: usize,
    pub function: String,
    pub seconds: u64,
    /// The campaign's totals when the slice ended.
    pub end: Totals,
    /// Growth per second over the slice's second half (see the module's note).
    pub rate: f64,
    /// Why the slice's campaign failed: the function gets no more slices and no report, and
    /// the slice counts 0 seconds.
    pub failed: Option<String>,
}

/// A campaign's running totals: distinct exceptions, escapes and hangs; edges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    pub findings: u64,
    pub edges: u64,
}

impl Totals {
    fn of(row: &PlotRow) -> Totals {
        Totals {
            findings: row.exceptions.iter().sum::<u64>() + row.escapes + row.saved_hangs,
            edges: row.edges_found as u64,
        }
    }

    fn max(self, other: Totals) -> Totals {
        Totals {
            findings: self.findings.max(other.findings),
            edges: self.edges.max(other.edges),
        }
    }
}

impl Ledger {
    pub fn read(path: &Path) -> anyhow::Result<Option<Ledger>> {
        if !path.exists() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        let ledger = serde_json::from_str(&text).with_context(|| format!("{} is damaged", path.display()))?;
        Ok(Some(ledger))
    }

    fn write(&self, path: &Path) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        let partial = path.with_extension("json.partial");
        std::fs::write(&partial, text).with_context(|| format!("cannot write {}", partial.display()))?;
        std::fs::rename(&partial, path).with_context(|| format!("cannot write {}", path.display()))
    }

    /// Seconds given to `function` over every slice.
    pub fn seconds_of(&self, function: &str) -> u64 {
        self.slices
            .iter()
            .filter(|s| s.function == function)
            .map(|s| s.seconds)
            .sum()
    }

    /// Why `function`'s campaign failed, if one of its slices did.
    pub fn failure_of(&self, function: &str) -> Option<&str> {
        self.slices
            .iter()
            .find(|s| s.function == function && s.failed.is_some())
            .and_then(|s| s.failed.as_deref())
    }

    fn last_of(&self, function: &str) -> Option<&Slice> {
        self.slices.iter().rev().find(|s| s.function == function)
    }

    /// The ledger as it stood before `round` began.
    fn before(&self, round: usize) -> Ledger {
        Ledger {
            budget: self.budget,
            slices: self.slices.iter().filter(|s| s.round < round).cloned().collect(),
        }
    }
}

/// Refuses a budget that gives some function less than [`MIN_SLICE`] in round 0.
pub fn check(budget: u64, functions: usize) -> anyhow::Result<()> {
    let least = 2 * MIN_SLICE * functions as u64;
    if budget < least {
        anyhow::bail!(
            "--budget {budget}s gives each of the {functions} functions less than {MIN_SLICE} s in its first round; \
             give at least {least}s, fewer functions (--functions, --shard), or -V"
        );
    }
    Ok(())
}

/// The slices of `round` (function, seconds), from the slices of the rounds before it; empty
/// when the budget is spent. `functions` in the run's order.
pub fn plan(functions: &[String], before: &Ledger, round: usize) -> Vec<(String, u64)> {
    let budget = before.budget;
    let alive: Vec<&String> = functions.iter().filter(|f| before.failure_of(f).is_none()).collect();
    if alive.is_empty() {
        return Vec::new();
    }
    if round == 0 {
        let first = budget / 2 / functions.len() as u64;
        return alive.iter().map(|f| (f.to_string(), first)).collect();
    }
    let spent: u64 = before.slices.iter().map(|s| s.seconds).sum();
    let remaining = budget.saturating_sub(spent);
    if remaining < MIN_SLICE {
        return Vec::new();
    }
    let mut pool = budget.div_ceil(LATER_ROUND_PARTS).min(remaining);
    if remaining - pool < MIN_SLICE {
        pool = remaining;
    }
    let index = indexes(&alive, before);
    alive
        .iter()
        .zip(allocate(pool, &index))
        .filter(|(_, s)| *s > 0)
        .map(|(f, s)| (f.to_string(), s))
        .collect()
}

/// Each function's upper-confidence index (see the module's note).
fn indexes(functions: &[&String], before: &Ledger) -> Vec<f64> {
    let rates: Vec<f64> = functions
        .iter()
        .map(|f| before.last_of(f).map_or(0.0, |s| s.rate))
        .collect();
    let mean = rates.iter().sum::<f64>() / rates.len() as f64;
    let scale = if mean > 0.0 { mean } else { 1.0 };
    let total = before.slices.len().max(2) as f64;
    functions
        .iter()
        .zip(&rates)
        .map(|(f, rate)| {
            let had = before.slices.iter().filter(|s| &s.function == *f).count().max(1) as f64;
            rate + scale * (2.0 * total.ln() / had).sqrt()
        })
        .collect()
}

/// `pool` seconds in proportion to `weights`, in whole seconds: a share below [`MIN_SLICE`]
/// is not given and its weight goes to the others (the smallest weight drops first, the later
/// one on a tie); the seconds rounding leaves go to the largest remainders, earliest first.
fn allocate(pool: u64, weights: &[f64]) -> Vec<u64> {
    let mut taking: Vec<usize> = (0..weights.len()).filter(|&i| weights[i] > 0.0).collect();
    loop {
        let total: f64 = taking.iter().map(|&i| weights[i]).sum();
        let share = |i: usize| pool as f64 * weights[i] / total;
        let smallest = taking
            .iter()
            .copied()
            .min_by(|&a, &b| weights[a].total_cmp(&weights[b]).then(b.cmp(&a)));
        match smallest {
            Some(i) if taking.len() > 1 && share(i) < MIN_SLICE as f64 => taking.retain(|&j| j != i),
            _ => break,
        }
    }
    let mut seconds = vec![0u64; weights.len()];
    if taking.is_empty() {
        return seconds;
    }
    let total: f64 = taking.iter().map(|&i| weights[i]).sum();
    let exact: Vec<(usize, f64)> = taking.iter().map(|&i| (i, pool as f64 * weights[i] / total)).collect();
    for &(i, x) in &exact {
        seconds[i] = x.floor() as u64;
    }
    let mut left = pool - seconds.iter().sum::<u64>();
    let mut by_remainder = exact.clone();
    by_remainder.sort_by(|a, b| (b.1 - b.1.floor()).total_cmp(&(a.1 - a.1.floor())).then(a.0.cmp(&b.0)));
    for (i, _) in by_remainder.iter().cycle() {
        if left == 0 {
            break;
        }
        seconds[*i] += 1;
        left -= 1;
    }
    seconds
}

/// What a slice gained over its second half, per second, from the campaign's plot rows written
/// during it and its totals before it (which the slice re-reads at its start and does not
/// find anew). Returns the totals at its end and the rate.
pub fn late_growth(rows: &[PlotRow], seconds: u64, before: Totals) -> (Totals, f64) {
    let Some(last) = rows.last() else {
        return (before, 0.0);
    };
    let end = Totals::of(last).max(before);
    let half = last.run_time_s.saturating_sub(seconds.div_ceil(2));
    let base_row = rows.iter().rev().find(|r| r.run_time_s <= half).unwrap_or(&rows[0]);
    let base = Totals::of(base_row).max(before);
    let window = last.run_time_s.saturating_sub(base_row.run_time_s).max(1) as f64;
    let gained = (end.findings - base.findings) as f64 + EDGE_WEIGHT * (end.edges - base.edges) as f64;
    (end, gained / window)
}

/// The plot rows of a run-all campaign (one instance), oldest first; none before it exists.
fn plot_rows(campaign: &Path) -> Vec<PlotRow> {
    OutDir::open(campaign)
        .ok()
        .and_then(|d| d.instances.first().map(|i| i.plot()))
        .unwrap_or_default()
}

/// Runs every round of the budget over `queue` (function, harness), `jobs` slices at a time,
/// recording each slice in `OUT/budget.json`; on `--continue`, the slices recorded there are
/// not run again. Returns the ledger.
pub fn spend(
    settings: &JobSettings,
    layout: &Layout,
    budget: u64,
    queue: &[(String, PathBuf)],
    at_once: usize,
) -> anyhow::Result<Ledger> {
    let path = layout.budget();
    let mut ledger = match Ledger::read(&path)? {
        Some(l) if l.budget == budget => l,
        Some(l) => anyhow::bail!(
            "--continue: {} was run with --budget {}s, not {budget}s; give the same budget",
            layout.out.display(),
            l.budget
        ),
        None => Ledger {
            budget,
            slices: Vec::new(),
        },
    };
    let functions: Vec<String> = queue.iter().map(|(f, _)| f.clone()).collect();
    for round in 0.. {
        let planned = plan(&functions, &ledger.before(round), round);
        if planned.is_empty() {
            break;
        }
        let mut todo: Vec<(String, u64)> = planned
            .iter()
            .filter(|(f, _)| !ledger.slices.iter().any(|s| s.round == round && &s.function == f))
            .cloned()
            .collect();
        say_round(round, &planned, &ledger);
        // Longest first: the round's slices then end closest together over the job slots.
        todo.sort_by_key(|(_, seconds)| std::cmp::Reverse(*seconds));
        let shared = Mutex::new(&mut ledger);
        let outcome = jobs::in_slots(todo, at_once, |(function, seconds), core| {
            let binary = &queue
                .iter()
                .find(|(f, _)| *f == function)
                .expect("planned from the queue")
                .1;
            let campaign = layout.campaign(&function);
            let before = plot_rows(&campaign).len();
            let started = jobs::lock(&shared)
                .last_of(&function)
                .map(|s| s.end)
                .unwrap_or_default();
            let failed = jobs::slice(settings, layout, &function, binary, seconds, core).err();
            let rows = plot_rows(&campaign);
            let (end, rate) = late_growth(rows.get(before..).unwrap_or(&[]), seconds, started);
            let mut ledger = jobs::lock(&shared);
            ledger.slices.push(Slice {
                round,
                function,
                // A failed campaign fuzzed nothing worth counting: its time goes to the others.
                seconds: if failed.is_some() { 0 } else { seconds },
                end,
                rate,
                failed,
            });
            ledger.write(&path)
        });
        outcome.into_iter().collect::<anyhow::Result<Vec<()>>>()?;
    }
    Ok(ledger)
}

/// `run-all: budget round 2: 100 s over 7 functions (most: f 41 s); 400 s of 600 s given`.
fn say_round(round: usize, planned: &[(String, u64)], ledger: &Ledger) {
    let given: u64 = planned.iter().map(|(_, s)| s).sum();
    let spent: u64 = ledger
        .slices
        .iter()
        .filter(|s| s.round < round)
        .map(|s| s.seconds)
        .sum();
    let most = planned
        .iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(f, s)| format!(" (most: {f} {s} s)"))
        .unwrap_or_default();
    eprintln!(
        "run-all: budget round {round}: {given} s over {} functions{most}; {} s of {} s given after it",
        planned.len(),
        spent + given,
        ledger.budget
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("f{i}")).collect()
    }

    fn slice(round: usize, function: &str, seconds: u64, rate: f64) -> Slice {
        Slice {
            round,
            function: function.into(),
            seconds,
            end: Totals::default(),
            rate,
            failed: None,
        }
    }

    fn row(t: u64, findings: u64, edges: usize) -> PlotRow {
        PlotRow {
            run_time_s: t,
            exceptions: [findings, 0, 0, 0],
            edges_found: edges,
            ..PlotRow::default()
        }
    }

    #[test]
    fn round_zero_gives_every_function_half_its_equal_share() {
        let ledger = Ledger {
            budget: 600,
            slices: vec![],
        };
        let plan = plan(&names(60), &ledger, 0);
        assert_eq!(plan.len(), 60);
        assert!(plan.iter().all(|(_, s)| *s == 5), "{plan:?}");
    }

    #[test]
    fn later_rounds_favour_functions_still_growing_and_spend_the_budget_exactly() {
        let functions = names(4);
        let mut ledger = Ledger {
            budget: 240,
            slices: vec![],
        };
        let rates = [0.0, 0.0, 2.0, 0.1];
        for (f, rate) in functions.iter().zip(rates) {
            ledger.slices.push(slice(0, f, 30, rate));
        }
        let mut round = 1;
        loop {
            let planned = plan(&functions, &ledger.before(round), round);
            if planned.is_empty() {
                break;
            }
            for (f, s) in &planned {
                assert!(*s >= MIN_SLICE, "{planned:?}");
                let rate = rates[functions.iter().position(|g| g == f).unwrap()];
                ledger.slices.push(slice(round, f, *s, rate));
            }
            round += 1;
        }
        assert_eq!(ledger.slices.iter().map(|s| s.seconds).sum::<u64>(), 240);
        let got: Vec<u64> = functions.iter().map(|f| ledger.seconds_of(f)).collect();
        assert!(got[2] > got[3] && got[3] > got[0], "{got:?}");
        assert!(got.iter().all(|&s| s >= 30), "round 0 starves none: {got:?}");
        assert_eq!(round, 3, "two rounds after round 0");
    }

    #[test]
    fn nothing_growing_anywhere_splits_a_round_evenly() {
        let functions = names(3);
        let ledger = Ledger {
            budget: 120,
            slices: functions.iter().map(|f| slice(0, f, 20, 0.0)).collect(),
        };
        let planned = plan(&functions, &ledger, 1);
        let seconds: Vec<u64> = planned.iter().map(|(_, s)| *s).collect();
        assert_eq!(seconds, [10, 10, 10]);
    }

    #[test]
    fn a_failed_function_gets_no_more_slices() {
        let functions = names(2);
        let mut failed = slice(0, "f0", 10, 0.0);
        failed.failed = Some("numfuzz run failed".into());
        let ledger = Ledger {
            budget: 60,
            slices: vec![failed, slice(0, "f1", 10, 1.0)],
        };
        let planned = plan(&functions, &ledger, 1);
        assert_eq!(planned, [("f1".to_string(), 15)]);
    }

    #[test]
    fn shares_below_the_shortest_slice_go_to_the_others() {
        let seconds = allocate(20, &[10.0, 10.0, 0.5, 0.4]);
        assert_eq!(seconds, [10, 10, 0, 0]);
        assert_eq!(
            allocate(2, &[1.0, 1.0]),
            [2, 0],
            "one slice at least, even below the shortest"
        );
        assert_eq!(allocate(10, &[1.0, 1.0, 1.0]), [4, 3, 3]);
    }

    #[test]
    fn growth_is_measured_over_the_second_half_above_what_was_reread() {
        // Re-reading brings the totals back to 10 findings at the start; 2 found late.
        let rows = [
            row(2, 6, 100),
            row(4, 10, 120),
            row(6, 10, 120),
            row(8, 11, 130),
            row(10, 12, 140),
        ];
        let before = Totals {
            findings: 10,
            edges: 120,
        };
        let (end, rate) = late_growth(&rows, 10, before);
        assert_eq!(
            end,
            Totals {
                findings: 12,
                edges: 140
            }
        );
        assert!((rate - (2.0 + 0.1 * 20.0) / 6.0).abs() < 1e-9, "{rate}");
        assert_eq!(late_growth(&[], 10, before), (before, 0.0));
    }

    #[test]
    fn a_budget_too_small_for_round_zero_is_refused() {
        let err = check(100, 60).unwrap_err().to_string();
        assert!(err.contains("give at least 360s"), "{err}");
        assert!(check(360, 60).is_ok());
    }
}
