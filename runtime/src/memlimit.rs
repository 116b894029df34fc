//! The memory limit (`numfuzz run -m MB`, [`env::MEM_LIMIT_MB`]).
//!
//! A watchdog thread, started in the process that runs inputs when it runs its first one,
//! reads the process's resident memory every [`PERIOD_MS`] ms. When an input has made it grow
//! by more than the limit since that first input, the watchdog marks the run
//! ([`RUN_OUT_OF_MEMORY`]) and ends the input with SIGABRT on the thread running it, so every
//! driver sees a crash of that input: the in-process engine's crash handler saves it, the
//! forkserver's parent reports the child's signal, and a standalone replay prints the stack of
//! where the input was.
//!
//! Why growth and not the total: the total includes what the target holds before any input
//! (its binary, the fuzzer's maps and, in-process, the whole engine), which the user cannot
//! know. Growth is counted from the first input of the process: a forkserver child that runs
//! one input measures exactly that input; a persistent child or an in-process client also
//! counts what earlier inputs leaked (and, in-process, the engine's own slow growth), as
//! libFuzzer's `-rss_limit_mb` does. Memory that is allocated but never touched is not
//! resident and does not count.
//!
//! Sampling, not interception: no allocation is slowed down, and a target that allocates
//! faster than the period can go past the limit by what it allocates in one period before it
//! is stopped.

use crate::region::Region;
use crate::report;
use numfuzz_abi::env;
use numfuzz_abi::report::{CrashReport, MemoryExceeded, ReportEvent};
use numfuzz_abi::shm::RUN_OUT_OF_MEMORY;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// How often the watchdog reads the resident memory.
const PERIOD_MS: u64 = 10;
/// How long the input may take to die once it was signalled (its SIGABRT handler may be stuck
/// on a lock the interrupted allocation held) before the watchdog ends the process itself.
const GRACE: Duration = Duration::from_secs(5);
const MIB: u64 = 1 << 20;

/// The limit in bytes, from the environment (None: no limit).
fn limit() -> Option<u64> {
    static LIMIT: OnceLock<Option<u64>> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var(env::MEM_LIMIT_MB)
            .ok()
            .and_then(|v| parse_limit_mb(&v))
            .map(|mb| mb * MIB)
    })
}

/// `NUMFUZZ_MEM_LIMIT_MB`: a positive number of MiB; `0`, `none` or anything else: no limit.
fn parse_limit_mb(text: &str) -> Option<u64> {
    text.trim().parse::<u64>().ok().filter(|&mb| mb > 0)
}

/// The watchdog runs in this process (reset in a forked child, where threads do not survive).
static WATCHING: AtomicBool = AtomicBool::new(false);
/// The whole process is one input (a program with its own `main` in a forkserver child).
static WHOLE_PROCESS: AtomicBool = AtomicBool::new(false);
/// The thread that runs inputs (`pthread_t`).
static INPUT_THREAD: AtomicU64 = AtomicU64::new(0);
/// Resident bytes the input had added when the watchdog stopped it (0: it did not).
static EXCEEDED_BY: AtomicU64 = AtomicU64::new(0);

/// Called by the thread that is about to run an input: starts the watchdog on the first
/// input of this process. Costs one atomic load afterwards.
pub fn arm() {
    if WATCHING.load(Ordering::Relaxed) {
        return;
    }
    let Some(limit) = limit() else {
        return;
    };
    start(limit);
}

/// Called in a forkserver child of a program with its own `main`: the child's whole life is
/// its input.
pub fn arm_whole_process() {
    WHOLE_PROCESS.store(true, Ordering::Relaxed);
    WATCHING.store(false, Ordering::Relaxed);
    arm();
}

fn start(limit: u64) {
    extern "C" fn forked_child() {
        WATCHING.store(false, Ordering::Relaxed);
    }
    static AT_FORK: std::sync::Once = std::sync::Once::new();
    // SAFETY: registering a plain function that only stores to an atomic.
    AT_FORK.call_once(|| unsafe {
        libc::pthread_atfork(None, None, Some(forked_child));
    });
    let Some(base) = resident_bytes() else {
        return;
    };
    // SAFETY: pthread_self has no preconditions.
    INPUT_THREAD.store(unsafe { libc::pthread_self() } as u64, Ordering::Relaxed);
    WATCHING.store(true, Ordering::Relaxed);
    let spawned = std::thread::Builder::new()
        .name("numfuzz-memlimit".into())
        .stack_size(64 * 1024)
        .spawn(move || watch(base, limit));
    if spawned.is_err() {
        WATCHING.store(false, Ordering::Relaxed);
    }
}

fn watch(base: u64, limit: u64) {
    loop {
        std::thread::sleep(Duration::from_millis(PERIOD_MS));
        if !(WHOLE_PROCESS.load(Ordering::Relaxed) || crate::in_harness()) {
            continue;
        }
        let Some(now) = resident_bytes() else {
            continue;
        };
        let grown = now.saturating_sub(base);
        if grown > limit {
            stop_the_input(grown);
        }
    }
}

fn stop_the_input(grown: u64) -> ! {
    EXCEEDED_BY.store(grown.max(1), Ordering::SeqCst);
    if let Some(region) = Region::current() {
        region.set_run_flag(RUN_OUT_OF_MEMORY);
    }
    if let Some(exceeded) = exceeded() {
        // A harness's JSON replay gets it in the crash handler's event. A program with its own
        // main has no crash handler: its event (without a stack: this is another thread) is
        // printed here. A plain standalone run may have no handler that prints the SIGABRT.
        if report::json() && WHOLE_PROCESS.load(Ordering::Relaxed) {
            report::event(&ReportEvent::Crash(CrashReport {
                signal: "SIGABRT".into(),
                stack_overflow: false,
                out_of_memory: Some(exceeded),
                frames: Vec::new(),
            }));
        } else if report::printing() && !report::json() {
            eprintln!("numfuzz: {} (-m); ending the input with SIGABRT", exceeded.describe());
        }
    }
    // SAFETY: signalling a thread of this process that is still running (the input thread
    // lives as long as the process runs inputs).
    unsafe { libc::pthread_kill(INPUT_THREAD.load(Ordering::Relaxed) as libc::pthread_t, libc::SIGABRT) };
    std::thread::sleep(GRACE);
    // SAFETY: ending our own process; SIGKILL cannot be caught.
    unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    unreachable!("SIGKILL ends the process")
}

/// The input that is ending was stopped by the memory limit: by how much.
pub fn exceeded() -> Option<MemoryExceeded> {
    let by = EXCEEDED_BY.load(Ordering::SeqCst);
    let limit = limit()?;
    (by > 0).then(|| MemoryExceeded {
        grown_mb: by.div_ceil(MIB),
        limit_mb: limit / MIB,
    })
}

/// This process's resident memory in bytes, from `/proc/self/statm`, read without allocating
/// (the watchdog may sample while the input thread holds the allocator's lock).
fn resident_bytes() -> Option<u64> {
    let mut buf = [0u8; 128];
    // SAFETY: a NUL-terminated path; read into an owned buffer; the descriptor is closed.
    let n = unsafe {
        let fd = libc::open(c"/proc/self/statm".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        n
    };
    if n <= 0 {
        return None;
    }
    let pages = resident_pages(&buf[..n as usize])?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * page.max(1) as u64)
}

/// The second field of `statm` (resident pages).
fn resident_pages(statm: &[u8]) -> Option<u64> {
    let field = statm.split(|&b| b == b' ').nth(1)?;
    let mut pages = 0u64;
    for &d in field {
        if !d.is_ascii_digit() {
            return None;
        }
        pages = pages.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    (!field.is_empty()).then_some(pages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_a_positive_number_of_mib() {
        assert_eq!(parse_limit_mb("512"), Some(512));
        assert_eq!(parse_limit_mb(" 64\n"), Some(64));
        assert_eq!(parse_limit_mb("0"), None);
        assert_eq!(parse_limit_mb("none"), None);
        assert_eq!(parse_limit_mb("-5"), None);
    }

    #[test]
    fn statm_gives_resident_pages() {
        assert_eq!(resident_pages(b"10863 1434 1199 231 0 201 0\n"), Some(1434));
        assert_eq!(resident_pages(b"10863"), None);
        assert_eq!(resident_pages(b"10863 x 1"), None);
        let own = resident_bytes().expect("/proc/self/statm is readable");
        assert!(own > 0);
    }

    #[test]
    fn touching_memory_shows_in_the_resident_size() {
        let before = resident_bytes().unwrap();
        let block = vec![1u8; 64 << 20];
        let after = resident_bytes().unwrap();
        assert!(after >= before + (48 << 20), "{before} -> {after}");
        drop(std::hint::black_box(block));
    }
}
