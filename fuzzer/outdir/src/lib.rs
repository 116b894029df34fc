//! The numfuzz output directory (`numfuzz run -o OUT`), owned in one place.
//!
//! ```text
//! OUT/.numfuzz                                 marker: a numfuzz output directory
//! OUT/<instance>/queue/id:NNNNNN,...           corpus entries (AFL++ names, see [`name`])
//! OUT/<instance>/crashes/id:NNNNNN,kind:K,site:S,...   first input of each new (site, kind)
//! OUT/<instance>/crashes/id:NNNNNN,crash,...   real crashes (signals)
//! OUT/<instance>/hangs/id:NNNNNN,hang,...      time-outs
//! OUT/<instance>/exceptions.jsonl              one [`ExceptionRecord`] per new (site, kind)
//! OUT/<instance>/fuzzer_stats, plot_data       AFL++ 4.x layout ([`stats`])
//! OUT/<instance>/cmdline                       target and arguments, one per line
//! OUT/<instance>/clients.jsonl                 each client process's start, restart and end ([`clients`])
//! ```
//!
//! `<instance>` is `default` for one core and `coreN` per core otherwise; afl-fuzz's own
//! directories (`default`, `-M`/`-S` names) read the same way. The engine writes through this
//! crate, and triage, cov, replay and the end-of-run summary read through it; a finding's
//! identity ([`FindingKey`]) is defined here once.

pub mod clients;
pub mod finding;
pub mod jsonl;
pub mod layout;
pub mod name;
pub mod records;
pub mod repair;
pub mod stats;

pub use clients::{ClientEvent, ClientHistory, EndReason};
pub use finding::{site_label, FindingKey};
pub use layout::{prepare, InputDir, InstanceDir, OutDir, OutDirError, OutState, SavedInput};
pub use name::{EntryName, Provenance, Tag};
pub use records::ExceptionRecord;
pub use stats::FuzzerStats;
