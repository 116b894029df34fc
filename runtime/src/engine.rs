//! In-process campaigns: hands the harness and the runtime's maps to numfuzz's LibAFL engine.

use crate::region::Region;
use crate::{edges, report, signature, sites, Harness};
use numfuzz_abi::kind::KINDS_PER_SITE;
use numfuzz_engine::client::TargetMaps;
use numfuzz_engine::inprocess::{run, InProcessTarget};
use std::path::Path;

/// Runs the campaign configured in `config`; returns the exit code.
pub fn run_campaign(config: &Path, harness: &Harness) -> i32 {
    // Exceptions are recorded in the maps the engine observes; never printed, never fatal.
    report::set_record_only();
    crate::precise::driven_by_a_fuzzer();
    let Some(region) = Region::current() else {
        eprintln!("numfuzz: the runtime's maps are not initialised");
        return 1;
    };
    let (edges_ptr, edges_cap) = edges::map();
    let slots = sites::count() as usize * KINDS_PER_SITE as usize;
    let cmp_slots = sites::CMPS.count() as usize * 2;
    // SAFETY: the edge map and the region are leaked (static).
    let maps = unsafe {
        TargetMaps::new(
            edges_ptr,
            edges::len().min(edges_cap),
            Some(region.view()),
            slots,
            cmp_slots,
        )
    };
    let spec = signature::specs().into_iter().next();
    let table = sites::table(spec, edges::len() as u32);
    let run_one = |data: &[u8]| {
        region.clear_run_flags();
        crate::run::begin(region);
        harness.run(data)
    };
    run(
        config,
        InProcessTarget {
            run: &run_one,
            maps,
            sites: table,
            signature: signature::get().as_ref().ok().cloned(),
            bound_reruns: crate::rerun_limit::enable,
            cut_runs_at: crate::run_cut::set_limit,
        },
    )
}
