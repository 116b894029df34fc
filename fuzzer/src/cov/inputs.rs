//! The inputs of a campaign directory, read through `numfuzz-outdir`: every instance's
//! queue, crashes and hangs, in the layout numfuzz and afl-fuzz share.

use super::CovError;
use numfuzz_outdir::{InputDir, OutDir, SavedInput};
use std::path::Path;

/// Every saved input (`id:*` files) of every instance under `out`, instance by instance,
/// queue then crashes then hangs, each in id order.
pub fn collect(out: &Path) -> Result<Vec<SavedInput>, CovError> {
    Ok(OutDir::open(out)?.inputs(&InputDir::ALL)?)
}
