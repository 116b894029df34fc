//! `fuzzer_stats` and `plot_data` in AFL++ 4.x layout (`afl-whatsup` and `afl-plot` read them).

use numfuzz_abi::kind::ExceptionKind;
use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

pub const STATS_FILE: &str = "fuzzer_stats";
pub const PLOT_FILE: &str = "plot_data";
/// numfuzz's own `fuzzer_stats` key: the campaign's `-m` in MiB, or `none`.
pub const MEMORY_LIMIT_KEY: &str = "memory_limit_mb";
/// numfuzz's own `fuzzer_stats` key: the time limit (ms) its hangs were confirmed at (`-t`, the
/// ceiling of a calibrated `exec_timeout`).
pub const HANG_TIMEOUT_KEY: &str = "hang_timeout_ms";

/// AFL++ 4.x's `plot_data` header, then numfuzz's columns: the distinct exceptions by kind and
/// the escaping origins (afl-plot reads columns by position and ignores the extra ones; its
/// crash graph already counts the exception findings, which are `crashes/`).
pub const PLOT_HEADER: &str = "# relative_time, cycles_done, cur_item, corpus_count, pending_total, pending_favs, map_size, saved_crashes, saved_hangs, max_depth, execs_per_sec, total_execs, edges_found, fp_invalid, fp_divbyzero, fp_overflow, fp_underflow, fp_escapes";

/// The `key : value` lines of `fuzzer_stats`, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FuzzerStats {
    entries: Vec<(String, String)>,
}

impl FuzzerStats {
    pub fn new() -> FuzzerStats {
        FuzzerStats::default()
    }

    /// Sets `key` (appended the first time, replaced after).
    pub fn set(&mut self, key: &str, value: impl ToString) -> &mut Self {
        let value = value.to_string();
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((key.to_string(), value)),
        }
        self
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    pub fn get_u64(&self, key: &str) -> Option<u64> {
        self.get(key)?.parse().ok()
    }

    pub fn get_f64(&self, key: &str) -> Option<f64> {
        self.get(key)?.trim_end_matches('%').parse().ok()
    }

    /// The campaign's memory limit in MiB (None: none, or not recorded).
    pub fn memory_limit_mb(&self) -> Option<u64> {
        self.get_u64(MEMORY_LIMIT_KEY).filter(|&mb| mb > 0)
    }

    /// The limit the campaign's hangs were confirmed at (None: not recorded, an older
    /// numfuzz or afl-fuzz).
    pub fn hang_timeout_ms(&self) -> Option<u64> {
        self.get_u64(HANG_TIMEOUT_KEY).filter(|&ms| ms > 0)
    }

    /// Parses `fuzzer_stats` text (AFL++'s and numfuzz's).
    pub fn parse(text: &str) -> FuzzerStats {
        let entries = text
            .lines()
            .filter_map(|l| {
                let (k, v) = l.split_once(':')?;
                Some((k.trim().to_string(), v.trim().to_string()))
            })
            .collect();
        FuzzerStats { entries }
    }

    /// `dir/fuzzer_stats`, if readable.
    pub fn read(dir: &Path) -> Option<FuzzerStats> {
        std::fs::read_to_string(dir.join(STATS_FILE))
            .ok()
            .map(|t| FuzzerStats::parse(&t))
    }

    /// The text AFL++ writes: `key` padded to 18 columns, `: `, value.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for (k, v) in &self.entries {
            let _ = writeln!(s, "{k:<18}: {v}");
        }
        s
    }
}

/// What a numfuzz instance writes into `fuzzer_stats`: AFL++ 4.x's keys, in its order, then
/// numfuzz's own (rendered by [`CampaignStats::to_file`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CampaignStats {
    /// Unix seconds.
    pub start_time: u64,
    pub last_update: u64,
    /// Seconds since the campaign started.
    pub run_time: u64,
    pub fuzzer_pid: u32,
    pub execs_done: u64,
    pub execs_per_sec: f64,
    pub execs_ps_last_min: f64,
    pub corpus_count: usize,
    pub corpus_favored: usize,
    pub corpus_found: u64,
    pub corpus_imported: usize,
    pub cur_item: usize,
    pub pending_favs: usize,
    pub pending_total: usize,
    /// Edge coverage in percent.
    pub bitmap_cvg: f64,
    pub saved_crashes: u64,
    pub saved_hangs: u64,
    /// Unix seconds of the last queue entry, crash and hang (0: none).
    pub last_find: u64,
    pub last_crash: u64,
    pub last_hang: u64,
    /// Milliseconds.
    pub exec_timeout: u64,
    /// Milliseconds: `-t`, at which time-outs are confirmed as hangs.
    pub hang_timeout: u64,
    /// `-m` in MiB (None: `none`).
    pub memory_limit_mb: Option<u64>,
    pub edges_found: usize,
    pub total_edges: usize,
    /// Distinct (site, kind) exceptions, and by kind (Invalid, DivByZero, Overflow, Underflow).
    pub fp_exceptions: usize,
    pub fp_by_kind: [u64; 4],
    /// (site, kind) seen reaching a declared result.
    pub fp_escapes: u64,
    pub real_crashes: u64,
    pub out_of_memory: u64,
    /// Time-outs at the calibrated limit that ended when run at the full one: slow inputs, not
    /// saved as hangs.
    pub hangs_dismissed: u64,
    /// Time-outs at the calibrated limit of runs that had raised Invalid, DivByZero or Overflow
    /// first (AFL++ with those trapped stops there): not confirmed, not saved as hangs.
    pub cut_after_raise: u64,
    /// Time-outs at the calibrated limit on a known hang's edges (hit by an earlier time-out;
    /// with `-t`, by a confirmed hang) that were not run again: the same hang.
    pub repeated_timeouts: u64,
    pub errbits_slots: u64,
    /// Comparison outcomes reached (a branch direction taken) out of those measured.
    pub cmp_reached: u64,
    pub cmp_measured: u64,
    /// The local-search stage: executions spent, descents, and targets they reached.
    pub search_execs: u64,
    pub search_descents: u64,
    pub search_reached: u64,
    /// Mutational turns whose runs were fast (watched by the FPU's flags) or precise (distances
    /// measured), executions that ran again precisely, and those whose re-run was skipped
    /// (their edge path, flags and special-result sites had run precisely before).
    pub fast_turns: u64,
    pub precise_turns: u64,
    /// First turns run fast: their testcase was kept only for lowering distances already
    /// measured.
    pub fast_first_turns: u64,
    /// Precise turns whose mutants after the first few ran fast.
    pub capped_turns: u64,
    /// Turns ended early because their mutants were slow against the campaign's typical one.
    pub timed_turns: u64,
    /// Precise turns that found no edge, exception input or distance slot measured for the
    /// first time; each halves its testcase's chance of another.
    pub barren_turns: u64,
    pub precise_runs: u64,
    pub skipped_reruns: u64,
    /// Time-outs after an execution's fast run had ended: in-process, its precise re-run has
    /// the ceiling as its own limit, so only a re-run slower than that counts.
    pub rerun_timeouts: u64,
    /// Re-runs not started because they were predicted to outlive that limit.
    pub reruns_too_slow: u64,
    /// Re-runs not started because every operation that gave a special result in the fast run
    /// had been special in re-runs that taught nothing, with the same flags.
    pub reruns_throttled: u64,
    /// Milliseconds of the clients' executions by how they ran: fast only; fast, then a
    /// special-result pass that spared the precise re-run; precisely (fast run included).
    pub fast_runs_ms: u64,
    pub spared_runs_ms: u64,
    pub precise_runs_ms: u64,
    /// Milliseconds in the input-to-state, havoc and local-search stages (executions included).
    pub i2s_ms: u64,
    pub havoc_ms: u64,
    pub search_ms: u64,
    /// Clients of this instance that died silently and were replaced (`clients.jsonl`).
    pub client_restarts: usize,
    pub afl_banner: String,
    pub command_line: String,
}

impl CampaignStats {
    /// The `fuzzer_stats` lines. Keys AFL++ writes that numfuzz has no counterpart for (cycles,
    /// depth, stability, variable paths) are written with the value a tool reading them expects
    /// from a campaign that has none.
    pub fn to_file(&self) -> FuzzerStats {
        let mut s = FuzzerStats::new();
        s.set("start_time", self.start_time)
            .set("last_update", self.last_update)
            .set("run_time", self.run_time)
            .set("fuzzer_pid", self.fuzzer_pid)
            .set("cycles_done", 0)
            .set("cycles_wo_finds", 0)
            .set("execs_done", self.execs_done)
            .set("execs_per_sec", format!("{:.2}", self.execs_per_sec))
            .set("execs_ps_last_min", format!("{:.2}", self.execs_ps_last_min))
            .set("corpus_count", self.corpus_count)
            .set("corpus_favored", self.corpus_favored)
            .set("corpus_found", self.corpus_found)
            .set("corpus_imported", self.corpus_imported)
            .set("corpus_variable", 0)
            .set("max_depth", 0)
            .set("cur_item", self.cur_item)
            .set("pending_favs", self.pending_favs)
            .set("pending_total", self.pending_total)
            .set("stability", "100.00%")
            .set("bitmap_cvg", format!("{:.2}%", self.bitmap_cvg))
            .set("saved_crashes", self.saved_crashes)
            .set("saved_hangs", self.saved_hangs)
            .set("last_find", self.last_find)
            .set("last_crash", self.last_crash)
            .set("last_hang", self.last_hang)
            .set("exec_timeout", self.exec_timeout)
            .set(HANG_TIMEOUT_KEY, self.hang_timeout)
            .set(
                MEMORY_LIMIT_KEY,
                self.memory_limit_mb.map_or("none".to_string(), |mb| mb.to_string()),
            )
            .set("edges_found", self.edges_found)
            .set("total_edges", self.total_edges)
            .set("fp_exceptions", self.fp_exceptions);
        for kind in ExceptionKind::ALL {
            s.set(
                &format!("fp_{}", kind.name().to_lowercase()),
                self.fp_by_kind[kind as usize],
            );
        }
        s.set("fp_escapes", self.fp_escapes)
            .set("real_crashes", self.real_crashes)
            .set("out_of_memory", self.out_of_memory)
            .set("hangs_dismissed", self.hangs_dismissed)
            .set("cut_after_raise", self.cut_after_raise)
            .set("repeated_timeouts", self.repeated_timeouts)
            .set("errbits_slots", self.errbits_slots)
            .set("cmp_outcomes", format!("{}/{}", self.cmp_reached, self.cmp_measured))
            .set("search_execs", self.search_execs)
            .set("search_descents", self.search_descents)
            .set("search_reached", self.search_reached)
            .set("fast_turns", self.fast_turns)
            .set("precise_turns", self.precise_turns)
            .set("fast_first_turns", self.fast_first_turns)
            .set("capped_turns", self.capped_turns)
            .set("timed_turns", self.timed_turns)
            .set("barren_turns", self.barren_turns)
            .set("precise_runs", self.precise_runs)
            .set("skipped_reruns", self.skipped_reruns)
            .set("rerun_timeouts", self.rerun_timeouts)
            .set("reruns_too_slow", self.reruns_too_slow)
            .set("reruns_throttled", self.reruns_throttled)
            .set("fast_runs_ms", self.fast_runs_ms)
            .set("spared_runs_ms", self.spared_runs_ms)
            .set("precise_runs_ms", self.precise_runs_ms)
            .set("i2s_ms", self.i2s_ms)
            .set("havoc_ms", self.havoc_ms)
            .set("search_ms", self.search_ms)
            .set("client_restarts", self.client_restarts)
            .set("afl_banner", &self.afl_banner)
            .set("afl_version", format!("numfuzz-{}", env!("CARGO_PKG_VERSION")))
            .set("target_mode", "default")
            .set("command_line", &self.command_line);
        s
    }
}

/// One `plot_data` row.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlotRow {
    pub run_time_s: u64,
    pub cur_item: usize,
    pub corpus_count: usize,
    pub pending_total: usize,
    pub pending_favs: usize,
    /// Edge coverage in percent.
    pub map_size: f64,
    pub saved_crashes: u64,
    pub saved_hangs: u64,
    pub execs_per_sec: f64,
    pub total_execs: u64,
    pub edges_found: usize,
    /// Distinct exceptions by kind (Invalid, DivByZero, Overflow, Underflow).
    pub exceptions: [u64; 4],
    pub escapes: u64,
}

/// Appends `row` to `dir/plot_data`, writing the header first into a new file.
pub fn append_plot(dir: &Path, row: &PlotRow) -> std::io::Result<()> {
    let path = dir.join(PLOT_FILE);
    let fresh = !path.exists();
    let mut f = OpenOptions::new().create(true).append(true).open(&path)?;
    let mut line = String::new();
    if fresh {
        line.push_str(PLOT_HEADER);
        line.push('\n');
    }
    let _ = writeln!(
        line,
        "{}, 0, {}, {}, {}, {}, {:.2}%, {}, {}, 0, {:.2}, {}, {}, {}, {}, {}, {}, {}",
        row.run_time_s,
        row.cur_item,
        row.corpus_count,
        row.pending_total,
        row.pending_favs,
        row.map_size,
        row.saved_crashes,
        row.saved_hangs,
        row.execs_per_sec,
        row.total_execs,
        row.edges_found,
        row.exceptions[0],
        row.exceptions[1],
        row.exceptions[2],
        row.exceptions[3],
        row.escapes
    );
    f.write_all(line.as_bytes())
}

/// The rows of `dir/plot_data` that numfuzz wrote, oldest first; lines of another layout
/// (afl-fuzz's, with fewer columns) and damaged ones are skipped.
pub fn read_plot(dir: &Path) -> Vec<PlotRow> {
    let text = std::fs::read_to_string(dir.join(PLOT_FILE)).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(PlotRow::parse)
        .collect()
}

impl PlotRow {
    /// One line as `append_plot` writes it.
    fn parse(line: &str) -> Option<PlotRow> {
        let cols: Vec<&str> = line.split(',').map(str::trim).collect();
        if cols.len() != PLOT_HEADER.split(',').count() {
            return None;
        }
        let int = |i: usize| cols[i].parse::<u64>().ok();
        let float = |i: usize| cols[i].trim_end_matches('%').parse::<f64>().ok();
        Some(PlotRow {
            run_time_s: int(0)?,
            cur_item: int(2)? as usize,
            corpus_count: int(3)? as usize,
            pending_total: int(4)? as usize,
            pending_favs: int(5)? as usize,
            map_size: float(6)?,
            saved_crashes: int(7)?,
            saved_hangs: int(8)?,
            execs_per_sec: float(10)?,
            total_execs: int(11)?,
            edges_found: int(12)? as usize,
            exceptions: [int(13)?, int(14)?, int(15)?, int(16)?],
            escapes: int(17)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plot_rows_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let row = PlotRow {
            run_time_s: 7,
            cur_item: 2,
            corpus_count: 9,
            map_size: 1.25,
            saved_hangs: 1,
            execs_per_sec: 1500.5,
            total_execs: 10_000,
            edges_found: 321,
            exceptions: [1, 0, 2, 3],
            escapes: 4,
            ..PlotRow::default()
        };
        append_plot(dir.path(), &row).unwrap();
        let mut file = OpenOptions::new()
            .append(true)
            .open(dir.path().join(PLOT_FILE))
            .unwrap();
        file.write_all(b"12, 0, 1, 2\n").unwrap();
        append_plot(dir.path(), &PlotRow { run_time_s: 9, ..row }).unwrap();
        let rows = read_plot(dir.path());
        assert_eq!(rows.len(), 2, "the short line is skipped: {rows:?}");
        assert_eq!(rows[0], row);
        assert_eq!(rows[1].run_time_s, 9);
        assert!(read_plot(&dir.path().join("missing")).is_empty());
    }

    #[test]
    fn stats_round_trip_in_afl_layout() {
        let mut s = FuzzerStats::new();
        s.set("execs_done", 1234)
            .set("bitmap_cvg", "12.50%")
            .set("execs_done", 1235);
        let text = s.render();
        assert_eq!(text, "execs_done        : 1235\nbitmap_cvg        : 12.50%\n");
        let back = FuzzerStats::parse(&text);
        assert_eq!(back, s);
        assert_eq!(back.get_u64("execs_done"), Some(1235));
        assert_eq!(back.get_f64("bitmap_cvg"), Some(12.5));
        assert_eq!(back.get("missing"), None);
    }

    #[test]
    fn campaign_stats_are_written_in_afl_order_with_numfuzz_keys_after() {
        let stats = CampaignStats {
            execs_done: 42,
            bitmap_cvg: 12.5,
            fp_by_kind: [1, 2, 3, 4],
            cmp_reached: 3,
            cmp_measured: 7,
            ..CampaignStats::default()
        };
        let file = stats.to_file();
        let text = file.render();
        let keys: Vec<&str> = text.lines().map(|l| l.split(':').next().unwrap().trim()).collect();
        assert_eq!(&keys[..4], ["start_time", "last_update", "run_time", "fuzzer_pid"]);
        assert!(keys.iter().position(|k| *k == "saved_crashes") < keys.iter().position(|k| *k == "fp_exceptions"));
        assert_eq!(keys.last(), Some(&"command_line"));
        assert_eq!(file.get_u64("execs_done"), Some(42));
        assert_eq!(file.get("bitmap_cvg"), Some("12.50%"));
        assert_eq!(file.get(MEMORY_LIMIT_KEY), Some("none"));
        assert_eq!(file.memory_limit_mb(), None);
        assert_eq!(
            ["fp_invalid", "fp_divbyzero", "fp_overflow", "fp_underflow"].map(|k| file.get_u64(k)),
            [Some(1), Some(2), Some(3), Some(4)]
        );
        assert_eq!(file.get("cmp_outcomes"), Some("3/7"));
    }

    #[test]
    fn plot_rows_get_a_header_once() {
        let dir = tempfile::tempdir().unwrap();
        let row = PlotRow {
            run_time_s: 3,
            total_execs: 10,
            exceptions: [1, 0, 2, 3],
            escapes: 1,
            ..PlotRow::default()
        };
        append_plot(dir.path(), &row).unwrap();
        append_plot(dir.path(), &row).unwrap();
        let text = std::fs::read_to_string(dir.path().join(PLOT_FILE)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], PLOT_HEADER);
        assert_eq!(lines[1], "3, 0, 0, 0, 0, 0, 0.00%, 0, 0, 0, 0.00, 10, 0, 1, 0, 2, 3, 1");
    }
}
