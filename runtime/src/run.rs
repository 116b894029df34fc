//! The start of one run, in one place: the region's side of it, then what the fuzzer asked of
//! the run (comparison hooks, the probe, a fast or a precise run) handed to the modules that act
//! on it. The region only reads its header; it calls none of them.

use crate::region::Region;

/// Starts a run on `region` (after its flags, or its maps and flags, were cleared).
pub fn begin(region: &Region) {
    let settings = region.begin_run();
    crate::cmp::set_mode(settings.cmp_mode);
    crate::probe::set(settings.probe);
    crate::precise::ask_fast(settings.fast);
}
