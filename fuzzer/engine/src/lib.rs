//! numfuzz's LibAFL components, shared by the `numfuzz` binary (forkserver campaigns) and
//! the runtime linked into targets (in-process campaigns).

pub mod mutators;
