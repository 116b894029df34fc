//! Registration of the pass's static records (FP sites and comparisons): every instrumented
//! module's constructor hands over its section; records get process-wide numbers in
//! registration order.

use numfuzz_abi::cmp::{CmpInfo, CmpRecord};
use numfuzz_abi::site::{SiteInfo, SiteRecord, SiteTable, SITE_UNASSIGNED};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// A record whose first field is its number, as both record kinds of the ABI are.
pub trait Numbered {
    fn number(&mut self) -> &mut u32;
}

impl Numbered for SiteRecord {
    fn number(&mut self) -> &mut u32 {
        &mut self.id
    }
}

impl Numbered for CmpRecord {
    fn number(&mut self) -> &mut u32 {
        &mut self.id
    }
}

/// Records of one kind, by number (stored as addresses so the registry is `Send`).
pub struct Registry {
    records: Mutex<Vec<usize>>,
    count: AtomicU32,
}

pub static SITES: Registry = Registry::new();
pub static CMPS: Registry = Registry::new();

impl Registry {
    const fn new() -> Registry {
        Registry {
            records: Mutex::new(Vec::new()),
            count: AtomicU32::new(0),
        }
    }

    /// Numbers the records in `[start, stop)` unless that range was registered before (every
    /// module of an executable passes the same, linker-merged, bounds).
    ///
    /// # Safety
    /// The range must be a section of `R` records emitted by the numfuzz pass.
    pub unsafe fn register<R: Numbered>(&self, start: *mut R, stop: *mut R) {
        if start.is_null() || stop <= start {
            return;
        }
        let mut reg = self.records.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: per the contract, start..stop are records.
        unsafe {
            if *(*start).number() != SITE_UNASSIGNED {
                return;
            }
            let n = stop.offset_from(start) as usize;
            for k in 0..n {
                let rec = start.add(k);
                *(*rec).number() = reg.len() as u32;
                reg.push(rec as usize);
            }
        }
        self.count.store(reg.len() as u32, Ordering::Release);
    }

    /// Number of registered records.
    pub fn count(&self) -> u32 {
        self.count.load(Ordering::Acquire)
    }

    /// The record with number `id`.
    fn get<R>(&self, id: u32) -> Option<&'static R> {
        let addr = *self
            .records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id as usize)?;
        // SAFETY: registered addresses are records that live as long as the program.
        Some(unsafe { &*(addr as *const R) })
    }
}

/// Number of registered FP sites.
pub fn count() -> u32 {
    SITES.count()
}

/// The FP site with number `id`.
pub fn info(id: u32) -> Option<SiteInfo> {
    // SAFETY: the sites registry holds site records.
    SITES
        .get::<SiteRecord>(id)
        .and_then(|r| unsafe { SiteInfo::from_record(r) })
}

/// The comparison with number `id`.
pub fn cmp_info(id: u32) -> Option<CmpInfo> {
    // SAFETY: the comparisons registry holds comparison records.
    CMPS.get::<CmpRecord>(id)
        .and_then(|r| unsafe { CmpInfo::from_record(r) })
}

/// Every site and comparison, for `NUMFUZZ_SITES=path`.
pub fn table(signature: Option<String>, edges: u32) -> SiteTable {
    SiteTable {
        abi_version: numfuzz_abi::ABI_VERSION,
        signature,
        edges,
        sites: (0..count()).filter_map(info).collect(),
        cmps: (0..CMPS.count()).filter_map(cmp_info).collect(),
    }
}
