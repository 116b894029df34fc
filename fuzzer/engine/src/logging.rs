//! LibAFL's diagnostics on stderr, for debugging a campaign: `NUMFUZZ_LOG=info|debug|trace`.

use std::io::Write;

/// Whether `NUMFUZZ_LOG` asks for diagnostics.
pub fn enabled() -> bool {
    std::env::var_os("NUMFUZZ_LOG").is_some()
}

/// Installs the logger if `NUMFUZZ_LOG` names a level (`error`, `warn`, `info`, `debug`,
/// `trace`, or `env_logger`'s filter syntax); each line names its process, since a campaign's
/// broker and clients share the terminal.
pub fn init_from_env() {
    let Ok(filter) = std::env::var("NUMFUZZ_LOG") else {
        return;
    };
    let _ = env_logger::Builder::new()
        .parse_filters(&filter)
        .format(|buf, record| {
            writeln!(
                buf,
                "[{} {} pid {}] {}",
                record.level(),
                record.target(),
                std::process::id(),
                record.args()
            )
        })
        .try_init();
}
