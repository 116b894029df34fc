//! The end-of-campaign summary: what all instances of an output directory found.

use numfuzz_abi::kind::ExceptionKind;
use numfuzz_outdir::{ExceptionRecord, InputDir, OutDir};
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

impl Summary {
    pub fn read(out: &Path) -> Summary {
        let mut s = Summary::default();
        let Ok(dir) = OutDir::open(out) else { return s };
        for inst in &dir.instances {
            s.instances += 1;
            if let Some(stats) = inst.stats() {
                s.execs += stats.get_u64("execs_done").unwrap_or(0);
                s.real_crashes += stats.get_u64("real_crashes").unwrap_or(0);
                s.hangs += stats.get_u64("saved_hangs").unwrap_or(0);
            }
        }
        s.crash_files = dir.inputs(&[InputDir::Crashes]).map_or(0, |i| i.len());
        s.exceptions = dir.first_exceptions();
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
