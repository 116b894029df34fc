//! Site registration: every instrumented module's constructor hands over its site section;
//! records get process-wide numbers in registration order.

use numfuzz_abi::site::{SiteInfo, SiteRecord, SiteTable, SITE_UNASSIGNED};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// Records by id (stored as addresses so the registry is `Send`).
static REGISTRY: Mutex<Vec<usize>> = Mutex::new(Vec::new());
static COUNT: AtomicU32 = AtomicU32::new(0);

/// Numbers the records in `[start, stop)` unless that range was registered before (every
/// module of an executable passes the same, linker-merged, bounds).
///
/// # Safety
/// The range must be a site section emitted by the numfuzz pass.
pub unsafe fn register(start: *mut SiteRecord, stop: *mut SiteRecord) {
    if start.is_null() || stop <= start {
        return;
    }
    let mut reg = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: per the contract, start..stop are records.
    unsafe {
        if (*start).id != SITE_UNASSIGNED {
            return;
        }
        let n = stop.offset_from(start) as usize;
        for k in 0..n {
            let rec = start.add(k);
            (*rec).id = reg.len() as u32;
            reg.push(rec as usize);
        }
    }
    COUNT.store(reg.len() as u32, Ordering::Release);
}

/// Number of registered sites.
pub fn count() -> u32 {
    COUNT.load(Ordering::Acquire)
}

/// The site with number `id`.
pub fn info(id: u32) -> Option<SiteInfo> {
    let addr = *REGISTRY.lock().unwrap_or_else(|e| e.into_inner()).get(id as usize)?;
    // SAFETY: registered addresses are records that live as long as the program.
    unsafe { SiteInfo::from_record(&*(addr as *const SiteRecord)) }
}

/// Every site, for `NUMFUZZ_SITES=path`.
pub fn table(signature: Option<String>, edges: u32) -> SiteTable {
    let sites = (0..count()).filter_map(info).collect();
    SiteTable {
        abi_version: numfuzz_abi::ABI_VERSION,
        signature,
        edges,
        sites,
    }
}
