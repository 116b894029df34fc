//! The AFL++ forkserver, started from the runtime's constructor so that every numfuzz-cc
//! program (libFuzzer-style harness or its own `main`) can be driven by AFL++ tools.
//!
//! Supported peers: AFL++ 4.04c (Debian 12) `afl-fuzz`, `afl-showmap`, `afl-tmin`, and
//! LibAFL 0.16.1's `ForkserverExecutor`, all through AFL++'s pre-4.20c ("old") protocol.
//! The newer handshake (a `0x41464c01` version word answered by its complement) is not
//! spoken: afl-fuzz 4.04c cannot parse it, and LibAFL accepts the old one.
//!
//! Protocol (control fd 198 fuzzer → target, status fd 199 target → fuzzer, `u32`s):
//! 1. Hello: `FS_OPT_ENABLED | FS_OPT_MAPSIZE | (map size - 1) << 1`, plus
//!    `FS_OPT_SHDMEM_FUZZ` when test cases may come through shared memory. A failed write
//!    means no forkserver parent: the program runs normally.
//! 2. Only if shared-memory test cases were offered, the fuzzer may answer with
//!    `FS_OPT_ENABLED | FS_OPT_SHDMEM_FUZZ` (afl-fuzz always answers or gives up; LibAFL
//!    answers only if it accepts). Any other word is the first fork request.
//! 3. Per run: read `was_killed`; fork a child (or SIGCONT the one stopped in persistent
//!    mode; if the fuzzer killed it meanwhile, reap it and fork); write the child's pid;
//!    `waitpid` (`WUNTRACED` in persistent mode); write the wait status.
//!
//! Not offered: auto-dictionaries, snapshots, and `FS_OPT_NEWCMPLOG` (there is no cmplog
//! instrumentation, so afl-fuzz's `-c` refuses these targets instead of running blind).
//!
//! Inputs reach a libFuzzer-style harness through shared memory (`__AFL_SHM_FUZZ_ID`: u32
//! length, then the bytes) when offered and accepted, else from the file named on the command
//! line (`@@`), else from stdin. Shared memory is offered only to libFuzzer-style harnesses
//! (the runtime reads the input for them) whose command line names no input: afl-fuzz would
//! otherwise stop writing the `@@` file the user asked for. In persistent mode
//! (`__AFL_PERSISTENT`, which afl-fuzz sets because of the shim's `##SIG_AFL_PERSISTENT##`)
//! one child runs up to `NUMFUZZ_LOOP` (10000) inputs, stopping itself with SIGSTOP between
//! them as `__AFL_LOOP` does.

use crate::region::Region;
use crate::{edges, sysv_shm, Harness};
use numfuzz_abi::env;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicUsize, Ordering};

const CONTROL_FD: i32 = env::FORKSRV_FD;
const STATUS_FD: i32 = env::FORKSRV_FD + 1;

// AFL++ `include/types.h` (4.04c) option bits of the old handshake.
const FS_OPT_ENABLED: u32 = 0x8000_0001;
const FS_OPT_MAPSIZE: u32 = 0x4000_0000;
const FS_OPT_SHDMEM_FUZZ: u32 = 0x0100_0000;
/// Largest map size the hello word can carry (23 bits of `size - 1`, shifted by one).
const FS_OPT_MAX_MAPSIZE: usize = (0x00ff_fffe >> 1) + 1;

/// Inputs per persistent child unless `NUMFUZZ_LOOP` says otherwise (AFL++'s usual `__AFL_LOOP`).
const DEFAULT_LOOP: u32 = 10_000;

static IN_CHILD: AtomicBool = AtomicBool::new(false);
static PERSISTENT: AtomicBool = AtomicBool::new(false);
static LOOP: AtomicUsize = AtomicUsize::new(1);
/// The shared-memory test case (null unless negotiated) and its segment size.
static TESTCASE: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static TESTCASE_LEN: AtomicUsize = AtomicUsize::new(0);
/// The running child, for the forkserver's SIGTERM handler.
static CHILD_PID: AtomicI32 = AtomicI32::new(0);

/// The hello word: options for a map of `map_size` entries.
fn hello(map_size: usize, offer_shared_input: bool) -> u32 {
    let mut status = 0;
    // Sizes 0 and 1 encode as 0, which the fuzzer reads back as 1: harmless.
    if map_size <= FS_OPT_MAX_MAPSIZE {
        status |= FS_OPT_MAPSIZE | ((map_size.max(1) as u32 - 1) << 1);
    }
    if offer_shared_input {
        status |= FS_OPT_SHDMEM_FUZZ;
    }
    if status != 0 {
        status |= FS_OPT_ENABLED;
    }
    status
}

fn debug() -> bool {
    std::env::var_os("AFL_DEBUG").is_some_and(|v| !v.is_empty() && v != "0")
}

fn fd_is_open(fd: i32) -> bool {
    // SAFETY: F_GETFD only queries the descriptor table.
    unsafe { libc::fcntl(fd, libc::F_GETFD) != -1 }
}

/// One `u32` from the fuzzer; the error says why not (the fuzzer closing its end is the
/// usual way to stop a forkserver).
fn read_u32(fd: i32) -> Result<u32, String> {
    let mut buf = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        // SAFETY: reading into the rest of `buf`.
        let n = unsafe { libc::read(fd, buf[got..].as_mut_ptr().cast(), 4 - got) };
        if n > 0 {
            got += n as usize;
        } else if n == 0 {
            return Err("the fuzzer closed the control pipe".into());
        } else {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e.to_string());
            }
        }
    }
    Ok(u32::from_ne_bytes(buf))
}

fn write_u32(fd: i32, value: u32) -> Result<(), String> {
    let buf = value.to_ne_bytes();
    let mut put = 0;
    while put < 4 {
        // SAFETY: writing from the rest of `buf`.
        let n = unsafe { libc::write(fd, buf[put..].as_ptr().cast(), 4 - put) };
        if n > 0 {
            put += n as usize;
        } else {
            let e = std::io::Error::last_os_error();
            if n == 0 || e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e.to_string());
            }
        }
    }
    Ok(())
}

/// Ends the forkserver process (the fuzzer sees its pipe close).
fn die(why: &str) -> ! {
    if debug() {
        eprintln!("numfuzz forkserver: exiting: {why}");
    }
    // SAFETY: terminating without running the program's atexit handlers, as AFL++ does.
    unsafe { libc::_exit(1) }
}

/// Parses `NUMFUZZ_LOOP`.
fn loop_count() -> Result<u32, String> {
    match std::env::var(env::LOOP) {
        Err(_) => Ok(DEFAULT_LOOP),
        Ok(v) => v.trim().parse::<u32>().ok().filter(|&n| n >= 1).ok_or_else(|| {
            format!(
                "{}=`{v}` is not a positive number of inputs per process (1 = a fresh process per input)",
                env::LOOP
            )
        }),
    }
}

extern "C" fn kill_child_and_exit(_sig: libc::c_int) {
    let pid = CHILD_PID.load(Ordering::Relaxed);
    // SAFETY: kill and _exit are async-signal-safe. A stopped persistent child would
    // otherwise outlive the fuzzer.
    unsafe {
        if pid > 0 {
            libc::kill(pid, libc::SIGKILL);
        }
        libc::_exit(0);
    }
}

/// Runs the forkserver if a fuzzer started this process as one (fds 198/199 open and
/// `__AFL_SHM_ID` set). Returns at once otherwise, and in every forked child; the
/// forkserver process itself never returns.
///
/// `libfuzzer_harness`: the runtime's `main` will run `LLVMFuzzerTestOneInput`.
/// `input_named`: the command line has arguments (afl-fuzz's `@@` file).
pub fn start(libfuzzer_harness: bool, input_named: bool) {
    if std::env::var_os(env::AFL_SHM_ID).is_none() || !fd_is_open(CONTROL_FD) || !fd_is_open(STATUS_FD) {
        return;
    }
    let persistent = std::env::var_os(env::AFL_PERSISTENT).is_some();
    // SAFETY: getppid cannot fail.
    let fuzzer = unsafe { libc::getppid() };
    match loop_count() {
        Ok(n) => LOOP.store(n as usize, Ordering::Relaxed),
        Err(e) => {
            eprintln!("numfuzz target: {e}");
            std::process::exit(1);
        }
    }
    let offer_shared_input = libfuzzer_harness && !input_named && std::env::var_os(env::AFL_SHM_FUZZ_ID).is_some();
    let status = hello(edges::len(), offer_shared_input);
    if debug() {
        eprintln!(
            "numfuzz forkserver: hello {status:#010x} (map size {}, shared-memory input offered: {offer_shared_input}, persistent: {persistent})",
            edges::len()
        );
    }
    if write_u32(STATUS_FD, status).is_err() {
        // Nobody listens: run as a normal program.
        return;
    }
    end_with_parent(fuzzer);
    let mut first_request = None;
    if offer_shared_input {
        let reply = read_u32(CONTROL_FD).unwrap_or_else(|e| die(&format!("options reply: {e}")));
        let accepted = FS_OPT_ENABLED | FS_OPT_SHDMEM_FUZZ;
        if reply & accepted == accepted {
            let seg = sysv_shm::attach(env::AFL_SHM_FUZZ_ID, true)
                .and_then(|seg| {
                    if seg.len >= 4 {
                        Ok(seg)
                    } else {
                        Err(format!("{} is too small for a test case", env::AFL_SHM_FUZZ_ID))
                    }
                })
                .unwrap_or_else(|e| {
                    eprintln!("numfuzz target: {e}");
                    // SAFETY: leaving before any child exists.
                    unsafe { libc::_exit(1) }
                });
            TESTCASE_LEN.store(seg.len, Ordering::Relaxed);
            TESTCASE.store(seg.ptr, Ordering::Release);
        } else {
            first_request = Some(reply);
        }
        if debug() {
            eprintln!("numfuzz forkserver: options reply {reply:#010x}");
        }
    }
    PERSISTENT.store(persistent, Ordering::Relaxed);
    serve(persistent, libfuzzer_harness, first_request);
}

/// Has the kernel SIGKILL this process when its parent (`parent`) dies, and ends it at once if
/// the parent is already gone. For the forkserver and its children, which hold nothing to
/// save: a closed control pipe or a SIGTERM does not reach a stopped process (a persistent
/// child stops itself between inputs), SIGKILL does. (The kernel sends it when the thread that
/// started this process ends; AFL++ and LibAFL drive the forkserver from that thread.)
fn end_with_parent(parent: libc::pid_t) {
    // SAFETY: prctl with integer arguments; getppid and _exit cannot fail.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
        if libc::getppid() != parent {
            libc::_exit(1);
        }
    }
}

/// The fork loop. Returns only in a fresh child.
fn serve(persistent: bool, libfuzzer_harness: bool, mut first_request: Option<u32>) {
    // SAFETY: installing a handler that only calls async-signal-safe functions; the old
    // handler is restored in children.
    let old_sigterm = unsafe {
        let handler = kill_child_and_exit as extern "C" fn(libc::c_int);
        libc::signal(libc::SIGTERM, handler as libc::sighandler_t)
    };
    // SAFETY: getpid cannot fail.
    let forkserver = unsafe { libc::getpid() };
    let mut child: libc::pid_t = 0;
    let mut child_stopped = false;
    loop {
        let was_killed = match first_request.take() {
            Some(w) => w,
            None => read_u32(CONTROL_FD).unwrap_or_else(|e| die(&format!("fork request: {e}"))),
        };
        let mut status: libc::c_int = 0;
        if child_stopped && was_killed != 0 {
            // The fuzzer killed the stopped child (timeout) after it stopped: reap it.
            child_stopped = false;
            if let Err(e) = wait_for(child, &mut status, 0) {
                die(&format!("reaping the killed child: {e}"));
            }
        }
        if child_stopped {
            // SAFETY: resuming our own stopped child.
            unsafe { libc::kill(child, libc::SIGCONT) };
        } else {
            // SAFETY: the forkserver is single-threaded (it runs before main).
            child = unsafe { libc::fork() };
            if child < 0 {
                die(&format!("fork: {}", std::io::Error::last_os_error()));
            }
            if child == 0 {
                end_with_parent(forkserver);
                // SAFETY: restoring the program's handler and dropping the fuzzer's pipes.
                unsafe {
                    libc::signal(libc::SIGTERM, old_sigterm);
                    libc::close(CONTROL_FD);
                    libc::close(STATUS_FD);
                }
                IN_CHILD.store(true, Ordering::Relaxed);
                // A program with its own main runs one input per child: take up what the
                // fuzzer asks to record for this run (a harness loop does it per input).
                if let Some(region) = Region::current() {
                    crate::run::begin(region);
                }
                if !libfuzzer_harness {
                    crate::memlimit::arm_whole_process();
                }
                return;
            }
            CHILD_PID.store(child, Ordering::Relaxed);
        }
        if let Err(e) = write_u32(STATUS_FD, child as u32) {
            die(&format!("writing the child pid: {e}"));
        }
        if let Err(e) = wait_for(child, &mut status, if persistent { libc::WUNTRACED } else { 0 }) {
            die(&format!("waitpid: {e}"));
        }
        child_stopped = libc::WIFSTOPPED(status);
        if !child_stopped {
            CHILD_PID.store(0, Ordering::Relaxed);
        }
        if let Err(e) = write_u32(STATUS_FD, status as u32) {
            die(&format!("writing the child status: {e}"));
        }
    }
}

fn wait_for(pid: libc::pid_t, status: &mut libc::c_int, flags: libc::c_int) -> Result<(), std::io::Error> {
    loop {
        // SAFETY: waiting for our own child.
        if unsafe { libc::waitpid(pid, status, flags) } >= 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// This process is a child forked by the forkserver.
pub fn in_child() -> bool {
    IN_CHILD.load(Ordering::Relaxed)
}

/// Where a forkserver child's libFuzzer-style harness gets its inputs.
enum Source {
    SharedMemory { base: *const u8, capacity: usize },
    File(String),
    Stdin,
}

impl Source {
    fn for_child(args: &[String]) -> Source {
        let base = TESTCASE.load(Ordering::Acquire);
        if !base.is_null() {
            return Source::SharedMemory {
                base,
                capacity: TESTCASE_LEN.load(Ordering::Relaxed) - 4,
            };
        }
        match args.get(1) {
            Some(path) if path != "-" => Source::File(path.clone()),
            _ => Source::Stdin,
        }
    }

    /// The current input, into `buf` (a copy, so the harness cannot read past its end into
    /// fuzzer memory, and the fuzzer cannot change it under the harness).
    fn read(&self, buf: &mut Vec<u8>) -> Result<(), String> {
        buf.clear();
        match self {
            Source::SharedMemory { base, capacity } => {
                // SAFETY: the segment holds a u32 length followed by `capacity` bytes.
                unsafe {
                    let len = (base.cast::<u32>().read_unaligned() as usize).min(*capacity);
                    buf.extend_from_slice(std::slice::from_raw_parts(base.add(4), len));
                }
                Ok(())
            }
            Source::File(path) => {
                *buf = std::fs::read(path).map_err(|e| format!("cannot read input `{path}`: {e}"))?;
                Ok(())
            }
            Source::Stdin => read_stdin(buf).map_err(|e| format!("cannot read stdin: {e}")),
        }
    }
}

/// Reads all of stdin. afl-fuzz's stdin is a file it rewrites for every input and shares
/// the offset with, so a regular file is read from its start with `pread`.
fn read_stdin(buf: &mut Vec<u8>) -> std::io::Result<()> {
    use std::io::Read;
    // SAFETY: fstat fills a plain-data struct we own.
    let regular = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(0, &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFREG
    };
    if !regular {
        return std::io::stdin().lock().read_to_end(buf).map(|_| ());
    }
    let mut chunk = [0u8; 64 * 1024];
    loop {
        // SAFETY: reading into `chunk` at the current end of the data.
        let n = unsafe { libc::pread(0, chunk.as_mut_ptr().cast(), chunk.len(), buf.len() as libc::off_t) };
        match n {
            0 => return Ok(()),
            n if n > 0 => buf.extend_from_slice(&chunk[..n as usize]),
            _ => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
}

/// Runs a libFuzzer-style harness in a forkserver child: one input, or in persistent mode up
/// to `NUMFUZZ_LOOP` inputs with a SIGSTOP after each but the last. Returns the exit code.
pub fn run_harness(args: &[String], harness: &Harness) -> i32 {
    let source = Source::for_child(args);
    let runs = if PERSISTENT.load(Ordering::Relaxed) {
        LOOP.load(Ordering::Relaxed)
    } else {
        1
    };
    let region = Region::current().expect("region installed at start-up");
    crate::precise::driven_by_a_fuzzer();
    // Start-up (constructors, LLVMFuzzerInitialize) ran only in the first run of a
    // persistent child; erase its traces so every run measures just its input.
    edges::reset();
    let mut data = Vec::new();
    for run in 0..runs {
        if run > 0 {
            // SAFETY: stopping ourselves; the forkserver resumes us for the next input.
            unsafe { libc::raise(libc::SIGSTOP) };
        }
        // Exception de-duplication is per input. (Under numfuzz the fuzzer resets its region
        // before each run too; doing it here as well keeps other drivers correct.)
        region.reset();
        crate::run::begin(region);
        if let Err(e) = source.read(&mut data) {
            eprintln!("numfuzz target: {e}");
            return 1;
        }
        harness.run(&data);
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_encodes_map_size_as_afl_reads_it() {
        // afl-fuzz 4.04c decodes the size as ((status & 0x00fffffe) >> 1) + 1.
        let decode = |s: u32| ((s & 0x00ff_fffe) >> 1) + 1;
        for size in [2usize, 14, 65_536, 70_001, FS_OPT_MAX_MAPSIZE] {
            let s = hello(size, false);
            assert_eq!(s & FS_OPT_ENABLED, FS_OPT_ENABLED);
            assert_eq!(s & FS_OPT_MAPSIZE, FS_OPT_MAPSIZE);
            assert_eq!(s & FS_OPT_SHDMEM_FUZZ, 0);
            assert_eq!(decode(s) as usize, size);
        }
        // What an afl-clang-fast 4.04c target with 14 map entries and shared-memory input
        // sends, minus FS_OPT_NEWCMPLOG (0x02000000).
        assert_eq!(hello(14, true), 0xc300_001b & !0x0200_0000);
        // Too large to announce: no size, the fuzzer keeps its own.
        assert_eq!(hello(FS_OPT_MAX_MAPSIZE + 1, false), 0);
        assert_eq!(hello(FS_OPT_MAX_MAPSIZE + 1, true), FS_OPT_ENABLED | FS_OPT_SHDMEM_FUZZ);
    }
}
