//! The in-process campaign's client: the LibAFL engine linked into a numfuzz-cc target (the
//! way libFuzzer is). `numfuzz run` runs the broker and starts the target once per core with
//! `NUMFUZZ_ENGINE=<config.json>` and `NUMFUZZ_CLIENT=<slot>` (see [`crate::campaign::serve`]).

use crate::campaign::{join, ClientSlot};
use crate::client::{run_client, TargetInfo, TargetMaps};
use crate::config::CampaignConfig;
use libafl::executors::{ExitKind, InProcessExecutor};
use libafl::inputs::{BytesInput, HasTargetBytes};
use numfuzz_abi::signature::Signature;
use numfuzz_abi::site::SiteTable;
use std::path::Path;
use std::time::Duration;

/// What the runtime hands over: how to run one input, and the target's maps.
pub struct InProcessTarget<'a> {
    /// Runs the harness on one input (the runtime resets its per-run state around it); true
    /// when the run outlived the executor's limit and was cut (a time-out without a restart).
    pub run: &'a dyn Fn(&[u8]) -> bool,
    pub maps: TargetMaps,
    pub sites: SiteTable,
    pub signature: Option<Signature>,
    /// Called once with the campaign's ceiling (`-t`): the target gives an input's precise
    /// re-run a time limit of its own, since the executor's calibrated limit is for the fast
    /// run (runtime `rerun_limit`).
    pub bound_reruns: fn(Duration),
    /// Called with the executor's time limit whenever it is set: the runtime may then end a run
    /// that outlived it in place, where LibAFL's handler would end the client (runtime
    /// `run_cut`).
    pub cut_runs_at: fn(Duration),
}

/// Runs the campaign described by the config file; returns the process exit code.
pub fn run(config_path: &Path, target: InProcessTarget<'_>) -> i32 {
    let cfg = match CampaignConfig::load(config_path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("numfuzz: {e}");
            return 1;
        }
    };
    let signature = match Signature::chosen(cfg.signature.as_deref(), target.signature.as_ref()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("numfuzz: --signature: {e}");
            return 1;
        }
    };
    let slot = match std::env::var(numfuzz_abi::env::CLIENT) {
        Ok(text) => ClientSlot::parse(&text),
        Err(_) => Err(libafl::Error::illegal_argument(format!(
            "{} is set but {} is not: in-process campaigns are started by `numfuzz run`",
            numfuzz_abi::env::ENGINE,
            numfuzz_abi::env::CLIENT
        ))),
    };
    let slot = match slot {
        Ok(slot) => slot,
        Err(e) => {
            eprintln!("numfuzz: {e}");
            return 1;
        }
    };
    (target.bound_reruns)(Duration::from_millis(cfg.timeout_ms));
    crate::timeout::on_in_process_limit(target.cut_runs_at);
    let result = join(&cfg, slot, |state, mgr, description| {
        let info = TargetInfo {
            sites: target.sites.clone(),
            signature: signature.clone(),
            maps: target.maps,
        };
        let mut harness = |input: &BytesInput| {
            if (target.run)(&input.target_bytes()) {
                ExitKind::Timeout
            } else {
                ExitKind::Ok
            }
        };
        run_client(&cfg, info, state, mgr, description, |observers, fuzzer, state, mgr| {
            InProcessExecutor::builder()
                .harness(&mut harness)
                .observers(observers)
                .fuzzer(fuzzer)
                .state(state)
                .event_mgr(mgr)
                .timeout(Duration::from_millis(cfg.timeout_ms))
                .build()
        })?;
        // The client ended cleanly; this process must not continue into the launcher's code.
        std::process::exit(0)
    });
    match result {
        // The restarter, once its client has ended for good.
        Ok(()) | Err(libafl::Error::ShuttingDown) => 0,
        Err(e) => {
            eprintln!("numfuzz: campaign failed: {e}");
            1
        }
    }
}
