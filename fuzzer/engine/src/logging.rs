//! LibAFL's diagnostics on stderr, for debugging a campaign: `NUMFUZZ_LOG=info|debug|trace`.

use log::{LevelFilter, Log, Metadata, Record};

struct StderrLog;

impl Log for StderrLog {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &Record<'_>) {
        eprintln!(
            "[{} {} pid {}] {}",
            record.level(),
            record.target(),
            std::process::id(),
            record.args()
        );
    }

    fn flush(&self) {}
}

/// Installs the logger if `NUMFUZZ_LOG` names a level.
pub fn init_from_env() {
    let level = match std::env::var("NUMFUZZ_LOG").ok().as_deref() {
        Some("error") => LevelFilter::Error,
        Some("warn") => LevelFilter::Warn,
        Some("info") => LevelFilter::Info,
        Some("debug") => LevelFilter::Debug,
        Some("trace") => LevelFilter::Trace,
        _ => return,
    };
    static LOGGER: StderrLog = StderrLog;
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(level);
    }
}
