//! A campaign's configuration, as `numfuzz run` hands it to the engine (for in-process
//! campaigns through a JSON file named by `NUMFUZZ_ENGINE`).

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutorKind {
    /// The engine runs inside the target (numfuzz-cc targets).
    InProcess,
    /// AFL++-style forkserver (any AFL++-instrumented binary, or numfuzz-cc targets).
    Forkserver,
}

/// How mutation operators are chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MutatorSchedule {
    /// MOpt: particle-swarm weights learned from which operators find new inputs.
    #[default]
    Mopt,
    /// Uniform choice with havoc stacking.
    Havoc,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CampaignConfig {
    /// Absolute path of the target.
    pub target: PathBuf,
    /// Arguments after the target (`@@` stands for the input file).
    pub target_args: Vec<String>,
    pub out_dir: PathBuf,
    /// `-i`: initial inputs (a directory or a file); none means seeds from the signature.
    pub seeds: Option<PathBuf>,
    /// The ceiling of the calibrated time limit: `-t`, or 1000 ms.
    pub timeout_ms: u64,
    /// `-t` was given: every time-out at the calibrated limit, except one after an exception
    /// AFL++ traps, is run again with the whole `-t` (see `hangs`).
    #[serde(default)]
    pub timeout_given: bool,
    /// `-m`: the resident memory (MiB) one input may add (see `numfuzz_abi::env::MEM_LIMIT_MB`).
    #[serde(default)]
    pub memory_limit_mb: Option<u64>,
    /// `-V`: stop after this many seconds.
    pub duration_secs: Option<u64>,
    /// Cores in LibAFL's syntax (`0`, `0-3`, `0,2`).
    pub cores: String,
    /// Input signature override (`--signature`); else the target's.
    pub signature: Option<String>,
    /// ErrBits feedback (`--no-errbits` turns it off).
    pub errbits: bool,
    /// IEEE-754 field mutators (`--no-fp-mutators` turns them off).
    pub fp_mutators: bool,
    /// Comparison solving: branch-distance feedback and input-to-state (`--no-cmp` turns both
    /// off).
    #[serde(default = "enabled")]
    pub cmp: bool,
    /// The local-search stage (`--no-local-search` turns it off).
    #[serde(default = "enabled")]
    pub local_search: bool,
    /// Keep an input when a known (site, kind) first reaches a declared result (an origin
    /// exception in a run whose primary result went Inf or NaN, unreported, from finite
    /// inputs); `--no-escape-objective` turns it off.
    #[serde(default = "enabled")]
    pub escapes: bool,
    /// Every run precise (`--precise`): for targets that raise exceptions in threads of their
    /// own, which a fast run does not see (see `run_mode`).
    #[serde(default)]
    pub precise: bool,
    /// How operators are scheduled (`--schedule`, for measurements).
    #[serde(default)]
    pub schedule: MutatorSchedule,
    /// `-x`: dictionary files.
    pub dictionaries: Vec<PathBuf>,
    pub executor: ExecutorKind,
    /// LLMP broker port of this campaign.
    pub broker_port: u16,
    /// `--broker ADDR`: connect this campaign's broker to another machine's.
    pub remote_broker: Option<String>,
    /// LibAFL's TUI (on a terminal) or plain status lines.
    pub tui: bool,
    /// Campaign start, milliseconds since the Unix epoch (shared by all clients).
    pub start_unix_ms: u64,
    /// How numfuzz was invoked, for `fuzzer_stats`.
    pub command_line: String,
}

fn enabled() -> bool {
    true
}

impl CampaignConfig {
    pub fn load(path: &Path) -> Result<CampaignConfig, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read campaign config {}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("malformed campaign config {}: {e}", path.display()))
    }

    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, serde_json::to_string_pretty(self).map_err(std::io::Error::other)?)
    }
}
