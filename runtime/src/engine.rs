//! In-process campaigns: hands the harness and the runtime's maps to numfuzz's LibAFL engine.

use crate::region::Region;
use crate::{edges, report, signature, sites, Harness};
use numfuzz_abi::kind::KINDS_PER_SITE;
use numfuzz_engine::client::TargetMaps;
use numfuzz_engine::i2s::CmpTrace;
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
    let slots = (sites::count() as usize * KINDS_PER_SITE as usize).min(region.slots());
    let (cmp_distances, cmp_capacity, cmp_log, cmp_log_capacity, cmp_mode) = region.cmp_areas();
    let maps = TargetMaps {
        edges: edges_ptr,
        edges_len: edges::len().min(edges_cap),
        errbits: region.errbits_ptr(),
        exceptions: region.exceptions_ptr(),
        slots,
        cmp_distances,
        cmp_slots: (sites::CMPS.count() as usize * 2).min(cmp_capacity),
        // SAFETY: the region is leaked (static) and its areas are laid out by its header.
        cmp_trace: (!cmp_log.is_null()).then(|| unsafe { CmpTrace::new(cmp_log, cmp_log_capacity, cmp_mode) }),
        run_flags: region.run_flags_ptr(),
        // SAFETY: the region (and so its header) is leaked (static).
        probe: Some(unsafe { numfuzz_engine::local_search::ProbeWords::new(region.header_ptr()) }),
        // SAFETY: as above.
        run_mode: Some(unsafe { numfuzz_engine::run_mode::RunModeWord::new(region.header_ptr()) }),
    };
    let spec = signature::specs().into_iter().next();
    let table = sites::table(spec, edges::len() as u32);
    let run_one = |data: &[u8]| {
        region.clear_run_flags();
        crate::run::begin(region);
        harness.run(data);
    };
    run(
        config,
        InProcessTarget {
            run: &run_one,
            maps,
            sites: table,
            signature: signature::get().as_ref().ok().cloned(),
        },
    )
}
