//! The end-of-campaign summary: what all instances of an output directory found.

use crate::output::{instance_dirs, read_exceptions, ExceptionRecord};
use numfuzz_abi::kind::ExceptionKind;
use std::collections::BTreeMap;
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
    pub hangs: u64,
}

fn stat(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim().parse().ok())?
    })
}

impl Summary {
    pub fn read(out: &Path) -> Summary {
        let mut s = Summary::default();
        let mut first: BTreeMap<(String, u32, u32, String, ExceptionKind), ExceptionRecord> = BTreeMap::new();
        for dir in instance_dirs(out) {
            s.instances += 1;
            let stats = std::fs::read_to_string(dir.join("fuzzer_stats")).unwrap_or_default();
            s.execs += stat(&stats, "execs_done").unwrap_or(0);
            s.real_crashes += stat(&stats, "real_crashes").unwrap_or(0);
            s.hangs += stat(&stats, "saved_hangs").unwrap_or(0);
            s.crash_files += std::fs::read_dir(dir.join("crashes")).map_or(0, |d| {
                d.flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with("id:"))
                    .count()
            });
            for mut r in read_exceptions(&dir) {
                let key = (
                    r.site.path().display().to_string(),
                    r.site.line,
                    r.site.column,
                    r.site.op.to_string(),
                    r.kind,
                );
                r.input = format!(
                    "{}/{}",
                    dir.file_name()
                        .map_or(String::new(), |n| n.to_string_lossy().into_owned()),
                    r.input
                );
                match first.get(&key) {
                    Some(old) if old.time_ms <= r.time_ms => {}
                    _ => {
                        first.insert(key, r);
                    }
                }
            }
        }
        s.exceptions = first.into_values().collect();
        s.exceptions
            .sort_by_key(|r| (r.kind, r.site.file.clone(), r.site.line, r.site.column));
        s
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
            "{} distinct floating-point exceptions ({}), {} real crashes, {} hangs, {} executions in {} instance(s)",
            self.exceptions.len(),
            kinds.join(", "),
            self.real_crashes,
            self.hangs,
            self.execs,
            self.instances
        )?;
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
