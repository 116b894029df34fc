//! numfuzz as a library: what the `numfuzz` subcommands are built from.

pub mod forkserver;
pub mod replay;
pub mod target;
