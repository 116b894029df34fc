//! `fuzzer_stats` and `plot_data` in AFL++ 4.x layout (so `afl-whatsup` and `afl-plot` read
//! them), and the end of a campaign: the `-V` budget and Ctrl-C / SIGTERM.
//!
//! Written by numfuzz rather than LibAFL's `AflStatsStage`, whose 0.16.1 version reports total
//! executions as executions per second and never counts saved crashes.

use crate::context::Instance;
use crate::meta::{AflCounters, DistanceHistory, ExceptionsSeen};
use crate::output::write_atomic;
use libafl::corpus::Corpus;
use libafl::feedbacks::MapFeedbackMetadata;
use libafl::schedulers::minimizer::IsFavoredMetadata;
use libafl::stages::{Restartable, Stage};
use libafl::state::{HasCorpus, HasExecutions, HasImported, Stoppable};
use libafl::{Error, HasMetadata, HasNamedMetadata};
use numfuzz_abi::kind::ExceptionKind;
use std::fs::OpenOptions;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Set by the SIGINT/SIGTERM handler of a fuzzing client; the stats stage turns it into a
/// clean stop.
pub static STOP_REQUESTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_: libc::c_int) {
    STOP_REQUESTED.store(true, Ordering::SeqCst);
}

/// Replaces the client's SIGINT/SIGTERM handling with a request to stop after the current
/// input, so that the output directory is complete and the stats are final.
pub fn install_stop_handler() {
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_stop_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_stop_signal as *const () as libc::sighandler_t);
    }
}

pub const PLOT_HEADER: &str = "# relative_time, cycles_done, cur_item, corpus_count, pending_total, pending_favs, map_size, saved_crashes, saved_hangs, max_depth, execs_per_sec, total_execs, edges_found";

/// Writes the stats files every `interval` and stops the client when the campaign is over.
pub struct StatsStage {
    instance: Arc<Instance>,
    interval: Duration,
    last_write: Option<Instant>,
    last_execs: u64,
    /// End of the campaign (`-V`), as wall-clock time shared by all clients.
    deadline: Option<SystemTime>,
    exec_timeout_ms: u64,
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
            total_edges,
            command_line,
            banner,
        }
    }

    /// Writes `fuzzer_stats` and a `plot_data` line now.
    pub fn write<S, I>(&mut self, state: &mut S) -> Result<(), Error>
    where
        S: HasCorpus<I> + HasExecutions + HasMetadata + HasNamedMetadata + HasImported,
    {
        let now = Instant::now();
        let execs = *state.executions();
        let since_last = self.last_write.map_or(Duration::ZERO, |t| now.duration_since(t));
        let run_time = self.instance.elapsed_ms() / 1000;
        // Executions per second over the campaign: the state (and its execution count) survives
        // the client restarts that crashes and hangs of an in-process target cause.
        let execs_per_sec = execs as f64 / (self.instance.elapsed_ms() as f64 / 1000.0).max(1e-3);
        let recent = if since_last.as_secs_f64() > 0.0 {
            (execs.saturating_sub(self.last_execs)) as f64 / since_last.as_secs_f64()
        } else {
            execs_per_sec
        };
        self.last_execs = execs;
        self.last_write = Some(now);

        let corpus_count = state.corpus().count();
        let mut pending_total = 0;
        let mut pending_favs = 0;
        let mut favored = 0;
        for id in state.corpus().ids() {
            let tc = state.corpus().get(id)?.borrow();
            let fav = tc.has_metadata::<IsFavoredMetadata>();
            favored += usize::from(fav);
            if tc.scheduled_count() == 0 {
                pending_total += 1;
                pending_favs += usize::from(fav);
            }
        }
        let cur_item = state.corpus().current().map_or(0, |id| id.0);
        let edges_found = state
            .named_metadata_map()
            .get::<MapFeedbackMetadata<u8>>("edges")
            .map_or(0, |m| m.num_covered_map_indexes);
        let counters = state.metadata::<AflCounters>().cloned().unwrap_or_default();
        let seen = state.metadata::<ExceptionsSeen>().map_or(0, |s| s.slots.len());
        let history = |name: &str| {
            state
                .named_metadata_map()
                .get::<DistanceHistory>(name)
                .cloned()
                .unwrap_or_default()
        };
        let (errbits, cmps) = (history("errbits"), history("cmp_distances"));
        let start_unix = self
            .instance
            .start
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let now_unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let to_unix = |ms: Option<u64>| ms.map_or(0, |m| start_unix + m / 1000);
        let cvg = if self.total_edges > 0 {
            edges_found as f64 * 100.0 / self.total_edges as f64
        } else {
            0.0
        };

        let mut s = String::new();
        let mut kv = |k: &str, v: String| s.push_str(&format!("{k:<18}: {v}\n"));
        kv("start_time", start_unix.to_string());
        kv("last_update", now_unix.to_string());
        kv("run_time", run_time.to_string());
        kv("fuzzer_pid", std::process::id().to_string());
        kv("cycles_done", "0".into());
        kv("cycles_wo_finds", "0".into());
        kv("execs_done", execs.to_string());
        kv("execs_per_sec", format!("{execs_per_sec:.2}"));
        kv("execs_ps_last_min", format!("{recent:.2}"));
        kv("corpus_count", corpus_count.to_string());
        kv("corpus_favored", favored.to_string());
        kv("corpus_found", counters.queue.to_string());
        kv("corpus_imported", state.imported().to_string());
        kv("corpus_variable", "0".into());
        kv("max_depth", "0".into());
        kv("cur_item", cur_item.to_string());
        kv("pending_favs", pending_favs.to_string());
        kv("pending_total", pending_total.to_string());
        kv("stability", "100.00%".into());
        kv("bitmap_cvg", format!("{cvg:.2}%"));
        kv("saved_crashes", counters.crashes.to_string());
        kv("saved_hangs", counters.hangs.to_string());
        kv("last_find", to_unix(counters.last_find_ms).to_string());
        kv("last_crash", to_unix(counters.last_crash_ms).to_string());
        kv("last_hang", to_unix(counters.last_hang_ms).to_string());
        kv("exec_timeout", self.exec_timeout_ms.to_string());
        kv("edges_found", edges_found.to_string());
        kv("total_edges", self.total_edges.to_string());
        kv("fp_exceptions", seen.to_string());
        for kind in ExceptionKind::ALL {
            kv(
                &format!("fp_{}", kind.name().to_lowercase()),
                counters.exceptions_by_kind[kind as usize].to_string(),
            );
        }
        kv("real_crashes", counters.real_crashes.to_string());
        kv("errbits_slots", errbits.measured.to_string());
        // Comparison outcomes reached (a branch direction taken) out of those measured.
        kv("cmp_outcomes", format!("{}/{}", cmps.reached, cmps.measured));
        kv("afl_banner", self.banner.clone());
        kv("afl_version", format!("numfuzz-{}", env!("CARGO_PKG_VERSION")));
        kv("target_mode", "default".into());
        kv("command_line", self.command_line.clone());
        write_atomic(&self.instance.out.dir, "fuzzer_stats", s.as_bytes())
            .map_err(|e| Error::os_error(e, "writing fuzzer_stats"))?;

        let plot = self.instance.out.dir.join("plot_data");
        let fresh = !plot.exists();
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&plot)
            .map_err(|e| Error::os_error(e, "writing plot_data"))?;
        let mut line = String::new();
        if fresh {
            line.push_str(PLOT_HEADER);
            line.push('\n');
        }
        line.push_str(&format!(
            "{}, 0, {cur_item}, {corpus_count}, {pending_total}, {pending_favs}, {cvg:.2}%, {}, {}, 0, {recent:.2}, {execs}, {edges_found}\n",
            run_time, counters.crashes, counters.hangs
        ));
        f.write_all(line.as_bytes())
            .map_err(|e| Error::os_error(e, "writing plot_data"))?;
        Ok(())
    }

    fn over(&self) -> bool {
        STOP_REQUESTED.load(Ordering::Relaxed) || self.deadline.is_some_and(|d| SystemTime::now() >= d)
    }
}

impl<E, EM, S, Z> Stage<E, EM, S, Z> for StatsStage
where
    S: HasCorpus<libafl::inputs::BytesInput> + HasExecutions + HasMetadata + HasNamedMetadata + Stoppable + HasImported,
{
    fn perform(&mut self, _fuzzer: &mut Z, _executor: &mut E, state: &mut S, _manager: &mut EM) -> Result<(), Error> {
        let due = self.last_write.is_none_or(|t| t.elapsed() >= self.interval);
        if self.over() {
            self.write(state)?;
            state.request_stop();
        } else if due {
            self.write(state)?;
        }
        Ok(())
    }
}

impl<S> Restartable<S> for StatsStage {
    fn should_restart(&mut self, _state: &mut S) -> Result<bool, Error> {
        Ok(true)
    }

    fn clear_progress(&mut self, _state: &mut S) -> Result<(), Error> {
        Ok(())
    }
}
