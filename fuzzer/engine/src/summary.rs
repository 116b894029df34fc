//! The end-of-campaign summary: what all instances of an output directory found.

use numfuzz_abi::kind::ExceptionKind;
use numfuzz_outdir::{ClientHistory, EndReason, ExceptionRecord, InputDir, OutDir};
use std::fmt;
use std::path::Path;

#[derive(Debug, Default)]
pub struct Summary {
    pub instances: usize,
    pub execs: u64,
    /// First record of each distinct (file, line, column, operation, kind), over all instances.
    pub exceptions: Vec<ExceptionRecord>,
    pub crash_files: usize,
    pub real_crashes: u64,
    /// Of the real crashes, inputs the memory limit (`-m`) stopped.
    pub out_of_memory: u64,
    pub hangs: u64,
    /// Per instance, its clients during the campaign (see [`Summary::read_campaign`]).
    pub clients: Vec<(String, ClientHistory)>,
    /// The `-V` budget in seconds, if the campaign had one.
    pub budget_secs: Option<u64>,
}

impl Summary {
    pub fn read(out: &Path) -> Summary {
        let mut s = Summary::default();
        let Ok(dir) = OutDir::open(out) else { return s };
        for inst in &dir.instances {
            s.instances += 1;
            if let Some(stats) = inst.stats() {
                s.execs += stats.get_u64("execs_done").unwrap_or(0);
                s.real_crashes += stats.get_u64("real_crashes").unwrap_or(0);
                s.out_of_memory += stats.get_u64("out_of_memory").unwrap_or(0);
                s.hangs += stats.get_u64("saved_hangs").unwrap_or(0);
            }
        }
        s.crash_files = dir.inputs(&[InputDir::Crashes]).map_or(0, |i| i.len());
        s.exceptions = dir.first_exceptions();
        s.exceptions
            .sort_by_key(|r| (r.kind, r.site.file.clone(), r.site.line, r.site.column));
        s
    }

    /// [`Summary::read`] plus the clients of the campaign that started at `campaign_ms`
    /// (Unix milliseconds) with a budget of `budget_secs`.
    pub fn read_campaign(out: &Path, campaign_ms: u64, budget_secs: Option<u64>) -> Summary {
        let mut s = Summary::read(out);
        s.budget_secs = budget_secs;
        if let Ok(dir) = OutDir::open(out) {
            s.clients = dir
                .instances
                .iter()
                .map(|i| (i.name.clone(), ClientHistory::of(&i.client_events(), campaign_ms)))
                .filter(|(_, h)| h.last_start.is_some())
                .collect();
        }
        s
    }

    /// Why the campaign did not spend its budget, one line per instance that did not: a
    /// client that gave up after repeated deaths, one that died and was not replaced (its
    /// restarter or the broker was killed), or a stop by a signal before the `-V` deadline.
    pub fn cut_short(&self) -> Vec<String> {
        let mut why = Vec::new();
        for (name, h) in &self.clients {
            match &h.end {
                None => why.push(format!(
                    "{name}: its client (pid {}) ended without finishing and was not replaced{}",
                    h.last_start.map_or(0, |s| s.0),
                    h.dying.as_ref().map_or(String::new(), |d| format!(" ({d})"))
                )),
                Some((_, EndReason::GaveUp | EndReason::Failed, message)) => {
                    why.push(message.clone().unwrap_or_else(|| format!("{name}: failed")))
                }
                Some((t, EndReason::Signal, _)) => {
                    if let Some(budget) = self.budget_secs {
                        if *t + 1000 < budget * 1000 {
                            why.push(format!(
                                "{name}: stopped by a signal after {:.1} s of the {budget} s budget",
                                *t as f64 / 1000.0
                            ));
                        }
                    }
                }
                Some((_, EndReason::Budget, _)) => {}
            }
        }
        why
    }

    pub fn count(&self, kind: ExceptionKind) -> usize {
        self.exceptions.iter().filter(|r| r.kind == kind).count()
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kinds: Vec<String> = ExceptionKind::ALL
            .iter()
            .map(|&k| format!("{} {k}", self.count(k)))
            .collect();
        writeln!(
            f,
            "{} distinct floating-point exceptions ({}), {} real crashes{}, {} hangs, {} executions in {} instance(s)",
            self.exceptions.len(),
            kinds.join(", "),
            self.real_crashes,
            match self.out_of_memory {
                0 => String::new(),
                n => format!(" ({n} out of memory)"),
            },
            self.hangs,
            self.execs,
            self.instances
        )?;
        for (name, h) in &self.clients {
            for (t, cause) in &h.restarts {
                writeln!(
                    f,
                    "  restart   {name}: a client died at {:.1}s and was replaced: {cause}",
                    *t as f64 / 1000.0
                )?;
            }
        }
        for r in &self.exceptions {
            writeln!(
                f,
                "  {:<9} {:<28} {:<10} in {:<24} first after {:.1}s  ({})",
                r.kind.name(),
                r.site.location(),
                r.site.op.name(),
                r.site.function,
                r.time_ms as f64 / 1000.0,
                r.input
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(end: Option<(u64, EndReason, Option<String>)>, restarts: usize) -> ClientHistory {
        ClientHistory {
            restarts: (0..restarts).map(|i| (i as u64 * 1000, "killed".to_string())).collect(),
            last_start: Some((42, 0, None)),
            end,
            dying: None,
        }
    }

    fn summary(budget_secs: Option<u64>, clients: Vec<(&str, ClientHistory)>) -> Summary {
        Summary {
            budget_secs,
            clients: clients.into_iter().map(|(n, h)| (n.to_string(), h)).collect(),
            ..Summary::default()
        }
    }

    #[test]
    fn a_spent_budget_is_not_cut_short_even_after_restarts() {
        let s = summary(
            Some(30),
            vec![("core0", history(Some((30_000, EndReason::Budget, None)), 2))],
        );
        assert!(s.cut_short().is_empty());
        assert!(s
            .to_string()
            .contains("core0: a client died at 1.0s and was replaced: killed"));
        // Ctrl-C without a budget is the normal end.
        let s = summary(
            None,
            vec![("default", history(Some((5_000, EndReason::Signal, None)), 0))],
        );
        assert!(s.cut_short().is_empty());
    }

    #[test]
    fn each_way_of_ending_early_is_named() {
        let s = summary(
            Some(60),
            vec![
                ("core0", history(Some((3_900, EndReason::Signal, None)), 0)),
                ("core1", history(None, 0)),
                (
                    "core2",
                    history(Some((100, EndReason::Failed, Some("core2: disk full".into()))), 0),
                ),
            ],
        );
        let why = s.cut_short();
        assert_eq!(why.len(), 3, "{why:?}");
        assert!(
            why[0].contains("stopped by a signal after 3.9 s of the 60 s budget"),
            "{why:?}"
        );
        assert!(
            why[1].contains("(pid 42) ended without finishing and was not replaced"),
            "{why:?}"
        );
        assert_eq!(why[2], "core2: disk full");
    }
}
