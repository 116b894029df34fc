//! Forkserver campaigns: any AFL++-instrumented binary, or a numfuzz-cc target run with
//! `--executor forkserver` (then numfuzz's ErrBits and exception maps travel in a second
//! shared-memory region named by `NUMFUZZ_SHM_ID`).

use crate::target::Target;
use libafl::executors::forkserver::ForkserverExecutor;
use libafl::executors::StdChildArgs;
use libafl::Error;
use libafl_bolts::shmem::{ShMem, ShMemProvider, StdShMemProvider};
use libafl_bolts::target_args::StdTargetArgs;
use numfuzz_abi::cmp::CMP_LOG_CAPACITY;
use numfuzz_abi::env as abi_env;
use numfuzz_abi::kind::KINDS_PER_SITE;
use numfuzz_abi::region_view::RegionView;
use numfuzz_abi::shm::ShmHeader;
use numfuzz_abi::site::SiteTable;
use numfuzz_engine::campaign::launch;
use numfuzz_engine::client::{run_client, TargetInfo, TargetMaps};
use numfuzz_engine::config::CampaignConfig;
use std::time::Duration;

/// AFL++'s default coverage map size.
const AFL_DEFAULT_MAP: usize = 65536;

type Segment = <StdShMemProvider as ShMemProvider>::ShMem;

pub fn run_campaign(cfg: &CampaignConfig, target: &Target) -> anyhow::Result<()> {
    let sites = if target.is_numfuzz() {
        target.site_table()?
    } else {
        SiteTable::default()
    };
    let slots = sites.sites.len() * KINDS_PER_SITE as usize;
    let cmp_slots = sites.cmps.len() * 2;
    let map_size = edge_map_size(target, &sites);
    let signature = numfuzz_abi::signature::Signature::chosen(cfg.signature.as_deref(), target.signature.as_ref())?;
    launch(cfg, |state, mgr, description| {
        let mut provider = StdShMemProvider::new()?;
        let mut edges = provider.new_shmem(map_size)?;
        // SAFETY: single-threaded client set-up, before the target is spawned.
        unsafe {
            edges.write_to_env(abi_env::AFL_SHM_ID)?;
            std::env::set_var(abi_env::AFL_MAP_SIZE, map_size.to_string());
            if let Some(mb) = cfg.memory_limit_mb {
                std::env::set_var(abi_env::MEM_LIMIT_MB, mb.to_string());
            }
        }
        let mut region = numfuzz_region(&mut provider, slots, cmp_slots)?;
        let view = match region.as_mut() {
            // SAFETY: the segment lives as long as the campaign (dropped after the client).
            Some(shm) => Some(
                unsafe { RegionView::new(shm.as_mut_ptr(), shm.len()) }
                    .map_err(|e| Error::illegal_state(format!("numfuzz's own region: {e}")))?,
            ),
            None => None,
        };
        // SAFETY: the edge segment lives as long as the campaign, like the region.
        let maps = unsafe { TargetMaps::new(edges.as_mut_ptr(), map_size, view, slots, cmp_slots) };
        let info = TargetInfo {
            sites: sites.clone(),
            signature: signature.clone(),
            maps,
        };
        run_client(
            cfg,
            info,
            state,
            mgr,
            description,
            |observers, _fuzzer, _state, _mgr| {
                let (edges_observer, others) = observers;
                ForkserverExecutor::builder()
                    .program(cfg.target.clone())
                    .parse_afl_cmdline(&cfg.target_args)
                    .shmem_provider(&mut provider)
                    .coverage_map_size(map_size)
                    .is_persistent(true)
                    .timeout(Duration::from_millis(cfg.timeout_ms))
                    .build_dynamic_map(edges_observer, others)
                    .map_err(|e| no_handshake_explained(cfg, e))
            },
        )?;
        drop(region);
        drop(edges);
        std::process::exit(0)
    })
    .map_err(|e: Error| anyhow::anyhow!("forkserver campaign failed: {e}"))
}

/// The edge map's size: numfuzz targets know their edge count; for others `AFL_MAP_SIZE` is
/// honoured, as afl-fuzz does.
fn edge_map_size(target: &Target, sites: &SiteTable) -> usize {
    if target.is_numfuzz() {
        (sites.edges as usize + 1).next_multiple_of(64).max(64)
    } else {
        std::env::var(abi_env::AFL_MAP_SIZE)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(AFL_DEFAULT_MAP)
    }
}

/// numfuzz's own region (ErrBits, exceptions, comparison distances and log) for a target with
/// sites or comparisons, its header written and its id in the environment the target inherits.
fn numfuzz_region(provider: &mut StdShMemProvider, slots: usize, cmp_slots: usize) -> Result<Option<Segment>, Error> {
    if slots == 0 && cmp_slots == 0 {
        return Ok(None);
    }
    let log = if cmp_slots > 0 { CMP_LOG_CAPACITY } else { 0 };
    let header = ShmHeader::layout(slots as u32, cmp_slots as u32, log);
    let mut shm = provider.new_shmem(header.region_size())?;
    // SAFETY: the region is at least a header long and page-aligned; the header is plain data.
    unsafe { shm.as_mut_ptr().cast::<ShmHeader>().write(header) };
    // SAFETY: single-threaded client set-up, before the target is spawned.
    unsafe { shm.write_to_env(abi_env::SHM_ID)? };
    Ok(Some(shm))
}

/// No handshake on the status pipe: the program ran without a forkserver (not instrumented)
/// or died before answering; other errors pass unchanged.
fn no_handshake_explained(cfg: &CampaignConfig, e: Error) -> Error {
    match e {
        Error::IllegalState(msg, _) if msg.contains("forkserver") => Error::illegal_argument(format!(
            "`{}` did not answer the forkserver handshake: it was not built with numfuzz-cc (or afl-cc), or it exits before main reaches the fuzzed code; run it by hand to check",
            cfg.target.display()
        )),
        other => other,
    }
}
