//! `fuzzer_stats` and `plot_data` in AFL++ 4.x layout (`afl-whatsup` and `afl-plot` read them).

use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

pub const STATS_FILE: &str = "fuzzer_stats";
pub const PLOT_FILE: &str = "plot_data";
/// numfuzz's own `fuzzer_stats` key: the campaign's `-m` in MiB, or `none`.
pub const MEMORY_LIMIT_KEY: &str = "memory_limit_mb";

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

#[cfg(test)]
mod tests {
    use super::*;

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
