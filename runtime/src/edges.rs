//! sancov `trace-pc-guard` edge coverage with AFL-style hit counts.
//!
//! Guards are numbered from 1 (0 marks an unnumbered guard range). The map is local memory
//! until a fuzzer hands over its own (AFL++'s `__AFL_SHM_ID`).

use crate::sysv_shm;
use numfuzz_abi::env;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering};

const LOCAL_SIZE: usize = 1 << 21;
static mut LOCAL: [u8; LOCAL_SIZE] = [0; LOCAL_SIZE];

static MAP: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static MAP_LEN: AtomicUsize = AtomicUsize::new(0);
static NEXT: AtomicU32 = AtomicU32::new(1);

fn ensure_map() {
    if MAP.load(Ordering::Relaxed).is_null() {
        MAP_LEN.store(LOCAL_SIZE, Ordering::Relaxed);
        MAP.store((&raw mut LOCAL).cast(), Ordering::Release);
    }
}

/// Map entries in use: guards + the unused entry 0.
pub fn len() -> usize {
    NEXT.load(Ordering::Acquire) as usize
}

/// The current map (local or a fuzzer's).
pub fn map() -> (*mut u8, usize) {
    ensure_map();
    (MAP.load(Ordering::Acquire), MAP_LEN.load(Ordering::Acquire))
}

/// Redirects edge counting into `ptr[..len]` (a fuzzer's shared memory).
pub fn use_map(ptr: *mut u8, len: usize) {
    MAP_LEN.store(0, Ordering::Release);
    MAP.store(ptr, Ordering::Release);
    MAP_LEN.store(len, Ordering::Release);
}

/// Counts edges into the AFL++ coverage map named by `__AFL_SHM_ID`, if set. Returns whether
/// it was. The usable length is the segment's size, capped by `AFL_MAP_SIZE` when given:
/// afl-fuzz 4.04c announces a provisional 8 MiB `AFL_MAP_SIZE` while probing the target's
/// map size with a 64 KiB segment, so the announced size alone is not safe to write to.
pub fn attach_afl_map() -> Result<bool, String> {
    if std::env::var_os(env::AFL_SHM_ID).is_none() {
        return Ok(false);
    }
    let seg = sysv_shm::attach(env::AFL_SHM_ID, false)?;
    let announced = std::env::var(env::AFL_MAP_SIZE)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0);
    let len = announced.map_or(seg.len, |n| n.min(seg.len));
    use_map(seg.ptr, len);
    Ok(true)
}

/// Runs `f` with edges counted into a scratch map that is then forgotten: the current map
/// keeps exactly what it held (a precise re-run of an input must not count its edges twice).
pub fn discarding(f: impl FnOnce()) {
    static SCRATCH: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
    static SCRATCH_LEN: AtomicUsize = AtomicUsize::new(0);
    let (ptr, cap) = map();
    if SCRATCH_LEN.load(Ordering::Relaxed) < cap {
        // Allocated when first needed (again if the map grew), its pages zeroed lazily by the
        // kernel; a smaller one it replaces is leaked (once, a few MiB at most).
        let scratch: &'static mut [u8] = Box::leak(vec![0u8; cap].into_boxed_slice());
        SCRATCH.store(scratch.as_mut_ptr(), Ordering::Relaxed);
        SCRATCH_LEN.store(cap, Ordering::Relaxed);
    }
    use_map(SCRATCH.load(Ordering::Relaxed), cap);
    f();
    use_map(ptr, cap);
}

/// AFL's hit-count buckets (1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128+), numbered.
const fn bucket(count: u8) -> u8 {
    match count {
        0..=3 => count,
        4..=7 => 4,
        8..=15 => 5,
        16..=31 => 6,
        32..=127 => 7,
        _ => 8,
    }
}

const BUCKETS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = bucket(i as u8);
        i += 1;
    }
    t
};

/// A hash of the current run's edge path: the edges in use with their hit counts in AFL's
/// buckets, so that a loop that runs 9 or 12 times takes one path, as AFL++ sees it.
pub fn path_hash() -> u64 {
    let (ptr, cap) = map();
    let n = len().min(cap);
    // SAFETY: the map holds `cap` bytes, of which the first `n` are in use.
    let entries = unsafe { std::slice::from_raw_parts(ptr, n) };
    let mut h: u64 = 0x9E37_79B9_7F4A_7C15;
    let (words, rest) = entries.as_chunks::<8>();
    let mut mix = |index: usize, count: u8| {
        h = (h ^ ((index as u64) << 8 | BUCKETS[count as usize] as u64)).wrapping_mul(0x0100_0000_01B3);
        h ^= h >> 29;
    };
    for (w, word) in words.iter().enumerate() {
        if u64::from_ne_bytes(*word) == 0 {
            continue;
        }
        for (k, &count) in word.iter().enumerate() {
            if count != 0 {
                mix(w * 8 + k, count);
            }
        }
    }
    for (k, &count) in rest.iter().enumerate() {
        if count != 0 {
            mix(words.len() * 8 + k, count);
        }
    }
    h
}

/// Zeroes the entries in use.
pub fn reset() {
    let (ptr, cap) = map();
    // SAFETY: the map holds `cap` bytes.
    unsafe { std::ptr::write_bytes(ptr, 0, len().min(cap)) };
}

/// # Safety
/// Called by sancov-instrumented module constructors with their guard section.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __sanitizer_cov_trace_pc_guard_init(start: *mut u32, stop: *mut u32) {
    ensure_map();
    // SAFETY: sancov passes a valid guard range.
    unsafe {
        if start == stop || *start != 0 {
            return;
        }
        let n = stop.offset_from(start) as u32;
        let first = NEXT.fetch_add(n, Ordering::AcqRel);
        for k in 0..n {
            *start.add(k as usize) = first + k;
        }
    }
}

/// # Safety
/// Called by instrumented code with a guard numbered by `__sanitizer_cov_trace_pc_guard_init`.
// In the program's code section: a run cut at its time limit (`run_cut`) may be interrupted
// here, in a tight loop nearly always, and a half-done count leaves nothing inconsistent.
#[unsafe(no_mangle)]
#[unsafe(link_section = "__numfuzz_code")]
pub unsafe extern "C" fn __sanitizer_cov_trace_pc_guard(guard: *mut u32) {
    // SAFETY: valid guard pointer from the instrumentation.
    let idx = unsafe { *guard } as usize;
    let ptr = MAP.load(Ordering::Relaxed);
    if idx < MAP_LEN.load(Ordering::Relaxed) {
        // SAFETY: idx is below the map length.
        unsafe {
            let e = ptr.add(idx);
            *e = (*e).wrapping_add(1);
        }
    }
}
