//! numfuzz as a library: what the `numfuzz` subcommands are built from.

pub mod cov;
pub mod forkserver;
pub mod harness;
pub mod html;
pub mod markdown;
pub mod replay;
pub mod replay_server;
pub mod report_model;
pub mod run_all;
pub mod target;
pub mod target_process;
pub mod triage;
