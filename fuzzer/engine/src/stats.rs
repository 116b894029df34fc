//! `fuzzer_stats` and `plot_data` in AFL++ 4.x layout (so `afl-whatsup` and `afl-plot` read
//! them); the stage that writes them also ends the client when the campaign is over (`stop`).
//!
//! Written by numfuzz rather than LibAFL's `AflStatsStage`, whose 0.16.1 version reports total
//! executions as executions per second and never counts saved crashes.

use crate::context::Instance;
use crate::hangs::HangCheck;
use crate::local_search::LocalSearchRecord;
use crate::maps::{CMP_MAP, ERRBITS_MAP};
use crate::meta::{AflCounters, DistanceHistory, ExceptionsSeen};
use crate::run_mode::RunModeRecord;
use crate::stop::campaign_over;
use crate::time_use::{TimeUse, TimedStage};
use libafl::corpus::Corpus;
use libafl::events::{std_report_progress, EventFirer};
use libafl::inputs::BytesInput;
use libafl::schedulers::minimizer::IsFavoredMetadata;
use libafl::stages::Stage;
use libafl::state::{HasCorpus, HasExecutions, HasImported, HasLastReportTime, MaybeHasClientPerfMonitor, Stoppable};
use libafl::{Error, HasMetadata, HasNamedMetadata};
use numfuzz_outdir::stats::{CampaignStats, PlotRow};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The corpus entries AFL++ counts: favoured, and not yet fuzzed (of them, favoured).
struct QueueCounts {
    favored: usize,
    pending: usize,
    pending_favored: usize,
}

impl QueueCounts {
    fn of<S: HasCorpus<I>, I>(state: &S) -> Result<QueueCounts, Error> {
        let mut counts = QueueCounts {
            favored: 0,
            pending: 0,
            pending_favored: 0,
        };
        for id in state.corpus().ids() {
            let tc = state.corpus().get(id)?.borrow();
            let favored = usize::from(tc.has_metadata::<IsFavoredMetadata>());
            counts.favored += favored;
            if tc.scheduled_count() == 0 {
                counts.pending += 1;
                counts.pending_favored += favored;
            }
        }
        Ok(counts)
    }
}

/// Writes the stats files every `interval` and stops the client when the campaign is over.
pub struct StatsStage {
    instance: Arc<Instance>,
    interval: Duration,
    last_write: Option<Instant>,
    last_execs: u64,
    /// End of the campaign (`-V`), as wall-clock time shared by all clients.
    deadline: Option<SystemTime>,
    exec_timeout_ms: u64,
    /// `-t`: the limit time-outs are confirmed at as hangs (see `hangs`).
    hang_timeout_ms: u64,
    /// `-m` (MiB), recorded so that triage replays under the same limit.
    memory_limit_mb: Option<u64>,
    total_edges: usize,
    command_line: String,
    banner: String,
}

impl StatsStage {
    pub fn new(
        instance: Arc<Instance>,
        deadline: Option<SystemTime>,
        exec_timeout_ms: u64,
        total_edges: usize,
        command_line: String,
        banner: String,
    ) -> Self {
        StatsStage {
            instance,
            interval: Duration::from_secs(2),
            last_write: None,
            last_execs: 0,
            deadline,
            exec_timeout_ms,
            hang_timeout_ms: exec_timeout_ms,
            memory_limit_mb: None,
            total_edges,
            command_line,
            banner,
        }
    }

    /// Records the limit the campaign's hangs are confirmed at (its `-t`), which triage replays
    /// them at.
    pub fn with_hang_timeout(mut self, ms: u64) -> Self {
        self.hang_timeout_ms = ms;
        self
    }

    /// Records the campaign's memory limit in `fuzzer_stats`.
    pub fn with_memory_limit(mut self, mb: Option<u64>) -> Self {
        self.memory_limit_mb = mb;
        self
    }

    /// Writes `fuzzer_stats` and a `plot_data` line now.
    pub fn write<S, I>(&mut self, state: &mut S) -> Result<(), Error>
    where
        S: HasCorpus<I> + HasExecutions + HasMetadata + HasNamedMetadata + HasImported,
    {
        let stats = self.snapshot(state)?;
        let out = &self.instance.out;
        out.write_stats(&stats.to_file())
            .map_err(|e| Error::os_error(e, "writing fuzzer_stats"))?;
        out.append_plot(&PlotRow {
            run_time_s: stats.run_time,
            cur_item: stats.cur_item,
            corpus_count: stats.corpus_count,
            pending_total: stats.pending_total,
            pending_favs: stats.pending_favs,
            map_size: stats.bitmap_cvg,
            saved_crashes: stats.saved_crashes,
            saved_hangs: stats.saved_hangs,
            execs_per_sec: stats.execs_ps_last_min,
            total_execs: stats.execs_done,
            edges_found: stats.edges_found,
            exceptions: stats.fp_by_kind,
            escapes: stats.fp_escapes,
        })
        .map_err(|e| Error::os_error(e, "writing plot_data"))?;
        Ok(())
    }

    /// The instance's figures now, from the state and its metadata.
    fn snapshot<S, I>(&mut self, state: &mut S) -> Result<CampaignStats, Error>
    where
        S: HasCorpus<I> + HasExecutions + HasMetadata + HasNamedMetadata + HasImported,
    {
        let execs = *state.executions();
        let (execs_per_sec, recent) = self.exec_rates(execs);
        let queue = QueueCounts::of(state)?;
        let edges_found = crate::maps::edges_covered(state);
        let counters = state.metadata::<AflCounters>().cloned().unwrap_or_default();
        let history = |name: &str| {
            state
                .named_metadata_map()
                .get::<DistanceHistory>(name)
                .cloned()
                .unwrap_or_default()
        };
        let (errbits, cmps) = (history(ERRBITS_MAP), history(CMP_MAP));
        let search = state.metadata::<LocalSearchRecord>().cloned().unwrap_or_default();
        let modes = state.metadata::<RunModeRecord>().cloned().unwrap_or_default();
        let time = state.metadata::<TimeUse>().cloned().unwrap_or_default();
        let [fast_runs_ms, spared_runs_ms, precise_runs_ms] = time.runs_ms();
        let unix = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let start_unix = unix(self.instance.start);
        let to_unix = |ms: Option<u64>| ms.map_or(0, |m| start_unix + m / 1000);
        let hangs = state.metadata::<HangCheck>().ok();
        // One field per line of `fuzzer_stats`: the literal is as long as the file.
        Ok(CampaignStats {
            start_time: start_unix,
            last_update: unix(SystemTime::now()),
            run_time: self.instance.elapsed_ms() / 1000,
            fuzzer_pid: std::process::id(),
            execs_done: execs,
            execs_per_sec,
            execs_ps_last_min: recent,
            corpus_count: state.corpus().count(),
            corpus_favored: queue.favored,
            corpus_found: counters.queue,
            corpus_imported: *state.imported(),
            cur_item: state.corpus().current().map_or(0, |id| id.0),
            pending_favs: queue.pending_favored,
            pending_total: queue.pending,
            bitmap_cvg: if self.total_edges > 0 {
                edges_found as f64 * 100.0 / self.total_edges as f64
            } else {
                0.0
            },
            saved_crashes: counters.crashes,
            saved_hangs: counters.hangs,
            last_find: to_unix(counters.last_find_ms),
            last_crash: to_unix(counters.last_crash_ms),
            last_hang: to_unix(counters.last_hang_ms),
            exec_timeout: self.exec_timeout_ms,
            hang_timeout: self.hang_timeout_ms,
            memory_limit_mb: self.memory_limit_mb,
            edges_found,
            total_edges: self.total_edges,
            fp_exceptions: state.metadata::<ExceptionsSeen>().map_or(0, |s| s.slots.len()),
            fp_by_kind: counters.exceptions_by_kind,
            fp_escapes: counters.escapes,
            real_crashes: counters.real_crashes,
            out_of_memory: counters.out_of_memory,
            hangs_dismissed: hangs.map_or(0, |h| h.dismissed),
            cut_after_raise: hangs.map_or(0, |h| h.cut_after_raise),
            repeated_timeouts: hangs.map_or(0, |h| h.repeated_timeouts),
            errbits_slots: errbits.measured,
            cmp_reached: cmps.reached,
            cmp_measured: cmps.measured,
            search_execs: search.execs,
            search_descents: search.descents,
            search_reached: search.reached,
            fast_turns: modes.fast_turns,
            precise_turns: modes.precise_turns,
            fast_first_turns: modes.fast_first_turns,
            capped_turns: modes.capped_turns,
            timed_turns: modes.timed_turns,
            barren_turns: modes.barren_turns,
            precise_runs: modes.precise_runs,
            skipped_reruns: modes.skipped_reruns,
            rerun_timeouts: modes.rerun_timeouts,
            reruns_too_slow: modes.reruns_too_slow,
            reruns_throttled: modes.reruns_throttled,
            fast_runs_ms,
            spared_runs_ms,
            precise_runs_ms,
            i2s_ms: time.stage_ms(TimedStage::InputToState),
            havoc_ms: time.stage_ms(TimedStage::Havoc),
            search_ms: time.stage_ms(TimedStage::LocalSearch),
            client_restarts: self.instance.client_restarts,
            afl_banner: self.banner.clone(),
            command_line: self.command_line.clone(),
        })
    }

    /// Executions per second over the campaign and since the last write. The state (and its
    /// execution count) survives the client restarts that crashes and hangs of an in-process
    /// target cause, so the first is over the whole campaign.
    fn exec_rates(&mut self, execs: u64) -> (f64, f64) {
        let now = Instant::now();
        let since_last = self.last_write.map_or(Duration::ZERO, |t| now.duration_since(t));
        let overall = execs as f64 / (self.instance.elapsed_ms() as f64 / 1000.0).max(1e-3);
        let recent = if since_last.as_secs_f64() > 0.0 {
            (execs.saturating_sub(self.last_execs)) as f64 / since_last.as_secs_f64()
        } else {
            overall
        };
        self.last_execs = execs;
        self.last_write = Some(now);
        (overall, recent)
    }

    /// The campaign is over: its `-V` budget is spent or a stop was requested.
    pub fn over(&self) -> bool {
        campaign_over(self.deadline)
    }

    /// The end of the `-V` budget, if any.
    pub fn deadline(&self) -> Option<SystemTime> {
        self.deadline
    }
}

/// User-stat name of the clients of an instance that died and were replaced.
pub const CLIENT_RESTARTS_STAT: &str = "client_restarts";

/// User-stat names of the precise runs, and of the fast runs that raised a flag and were not
/// re-run: skipped by their path, throttled per site (`RunModeRecord`).
pub const PRECISE_STATS: [&str; 3] = ["precise_runs", "skipped_reruns", "reruns_throttled"];

impl<E, EM, S, Z> Stage<E, EM, S, Z> for StatsStage
where
    S: HasCorpus<BytesInput>
        + HasExecutions
        + HasMetadata
        + HasNamedMetadata
        + Stoppable
        + HasImported
        + HasLastReportTime
        + MaybeHasClientPerfMonitor,
    EM: EventFirer<BytesInput, S>,
{
    fn perform(&mut self, _fuzzer: &mut Z, _executor: &mut E, state: &mut S, manager: &mut EM) -> Result<(), Error> {
        let due = self.last_write.is_none_or(|t| t.elapsed() >= self.interval);
        if self.over() || due {
            self.write(state)?;
            // LibAFL's fuzz loop tells the broker the executions only every 15 s; the status
            // line would repeat stale counts in between. The heartbeat goes through the
            // restarting manager's `fire`, not `report_progress`: 0.16.1's restarting manager
            // passes `report_progress` to the inner manager without refreshing the LLMP
            // position it keeps for a respawned client, and a client respawned after a
            // SIGKILL would then panic on its first message ("never got committed").
            std_report_progress(manager, state)?;
            let restarts = self.instance.client_restarts as u64;
            if restarts > 0 {
                crate::user_stats::fire_count(manager, state, CLIENT_RESTARTS_STAT, restarts)?;
            }
            let modes = state.metadata::<RunModeRecord>().cloned().unwrap_or_default();
            let counts = [modes.precise_runs, modes.skipped_reruns, modes.reruns_throttled];
            for (name, count) in PRECISE_STATS.into_iter().zip(counts) {
                crate::user_stats::fire_count(manager, state, name, count)?;
            }
            if self.over() {
                state.request_stop();
            }
        }
        Ok(())
    }
}

restarts_from_scratch!(StatsStage);
