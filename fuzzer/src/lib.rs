//! numfuzz as a library: what the `numfuzz` subcommands are built from.

pub mod replay;
pub mod target;
