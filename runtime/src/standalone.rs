//! Standalone replay: `./target FILE...` runs each file once; no file reads stdin.

use crate::region::Region;
use crate::{report, results, taint, Harness};
use std::io::Read;

unsafe extern "C" {
    /// shadow.c: a new input's shadows start from its own values.
    fn __numfuzz_shadow_reset();
}

const USAGE: &str = "usage: TARGET [FILE...]   (no FILE: read one input from stdin)\n\
    environment: NUMFUZZ_ABORT=0 report every exception and exit 0; NUMFUZZ_REPORT=json one JSON object per exception on stderr; NUMFUZZ_SITES=PATH write the site table as JSON";

/// Runs the harness on every input named on the command line. Returns the exit code.
pub fn run(args: &[String], harness: &Harness) -> i32 {
    let mut files = Vec::new();
    for a in args.iter().skip(1) {
        match a.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return 0;
            }
            "-" => files.push(None),
            flag if flag.starts_with('-') => {
                eprintln!(
                    "numfuzz target: unknown option `{flag}`; {}",
                    USAGE.lines().next().unwrap_or_default()
                );
                return 2;
            }
            path => files.push(Some(path.to_string())),
        }
    }
    if files.is_empty() {
        files.push(None);
    }
    crate::crash::install();
    let region = Region::current().expect("region installed at start-up");
    let mut status = 0;
    for file in files {
        let data = match &file {
            None => {
                let mut buf = Vec::new();
                if let Err(e) = std::io::stdin().read_to_end(&mut buf) {
                    eprintln!("numfuzz target: cannot read stdin: {e}");
                    return 1;
                }
                buf
            }
            Some(path) => match std::fs::read(path) {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("numfuzz target: cannot read input `{path}`: {e}");
                    status = 1;
                    continue;
                }
            },
        };
        run_input(harness, region, file.clone(), &data);
    }
    report::set_input(None);
    status
}

/// Replays one input named `name` (for the JSON reports): every per-input state reset, the
/// harness run, the input's summary printed.
pub fn run_input(harness: &Harness, region: &Region, name: Option<String>, data: &[u8]) {
    report::set_input(name);
    region.reset();
    // Each input's own edges, as a fuzzer's runs have (a replay that skips precise re-runs
    // as a campaign does, `NUMFUZZ_PRECISE=campaign`, tells paths apart by them).
    crate::edges::reset();
    crate::run::begin(region);
    results::reset();
    taint::reset();
    crate::error_report::reset();
    // SAFETY: shadow.c's reset touches only its own thread-local state.
    unsafe { __numfuzz_shadow_reset() };
    harness.run(data);
    report::input_done(region.raised_count(), region.handled());
}
