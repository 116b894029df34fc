//! Environment variables read by numfuzz targets (and set by the fuzzer).

/// SysV shared-memory id of the numfuzz region (header, ErrBits map, exception map). When it
/// is set, the runtime records exceptions into the region and keeps running.
pub const SHM_ID: &str = "NUMFUZZ_SHM_ID";
/// `0` makes a standalone run report every exception and exit 0 instead of aborting on the
/// first one.
pub const ABORT: &str = "NUMFUZZ_ABORT";
/// `json` makes the runtime print one JSON object per exception (and one per input) on stderr.
pub const REPORT: &str = "NUMFUZZ_REPORT";
/// A path (or `-` for stdout): the target writes its site table as JSON there and exits.
pub const SITES: &str = "NUMFUZZ_SITES";
/// Path of an in-process campaign configuration written by `numfuzz run`. When set, the
/// target's `main` runs the LibAFL engine linked into it instead of replaying files.
pub const ENGINE: &str = "NUMFUZZ_ENGINE";
/// Set with [`ENGINE`] on each client process `numfuzz run` starts: which client this process
/// is (`ID,CORE,BROKER_PID`: its client id, the core it is bound to, and the pid of the
/// `numfuzz run` process whose broker it joins and with which it ends).
pub const CLIENT: &str = "NUMFUZZ_CLIENT";
/// Set by `numfuzz-cc` users: build with edge coverage only, without checkers (for overhead
/// measurements).
pub const CC_NO_CHECKS: &str = "NUMFUZZ_CC_NO_CHECKS";
/// Set by `numfuzz-cc` users: build for llvm-cov source coverage, without any numfuzz
/// instrumentation.
pub const CC_COVERAGE: &str = "NUMFUZZ_CC_COVERAGE";
/// Set by `numfuzz-cc` users: build the replay-only taint build (DataFlowSanitizer labels
/// carry each exceptional value's findings to the declared results; see `taint`). numfuzz-cc
/// and its LLVM pass both read it.
pub const CC_TAINT: &str = "NUMFUZZ_CC_TAINT";
/// Set by `numfuzz-cc` users: build the replay-only shadow build (every float and double the
/// program computes carries a shadow in x87 extended precision; declared results report it;
/// see `shadow`).
pub const CC_SHADOW: &str = "NUMFUZZ_CC_SHADOW";
/// Set by `numfuzz-cc` users: the library's error-report hooks, comma-separated (`gsl_error`).
/// The pass puts a call of the runtime's `numfuzz_error_reported` before each call of one, so
/// that a replay says where the library reported an error (triage roots a result the library
/// returned as a success after such a report at the dropped report).
pub const CC_ERROR_HOOK: &str = "NUMFUZZ_CC_ERROR_HOOK";
/// Shadow builds: `53` runs the shadows with a 53-bit significand (the x87 precision
/// control), keeping the 15-bit exponent. Triage replays an input both ways: a shadow whose
/// value changes with its own precision is rounding noise (cancellation of values the format
/// could not hold), not a reference.
pub const SHADOW_PRECISION: &str = "NUMFUZZ_SHADOW_PRECISION";
/// MPFR shadow builds: `1` steers the run by its shadows. Every floating-point comparison takes
/// the outcome its operands' shadows give, and every conversion of a float to an integer the
/// shadow's integer, so the program follows the path its exact values take and the result's
/// shadow is the exact value of that path. Triage replays an input so where a branch on a value
/// the format lost went the other way (see `shadow`).
pub const SHADOW_STEER: &str = "NUMFUZZ_SHADOW_STEER";
/// Taint builds: how many exceptional (site, kind) pairs, in the order of their first
/// exception in the run, get no label (labels are 8 bits, so the 9th and later findings of an
/// input are labelled in further runs with a larger skip). Default 0.
pub const TAINT_SKIP: &str = "NUMFUZZ_TAINT_SKIP";
/// Taint builds: `nonfinite` (default: a label follows Inf, NaN, zero and subnormal values)
/// or `influence` (a label follows every value computed from a labelled one); see `taint`.
pub const TAINT_MODE: &str = "NUMFUZZ_TAINT_MODE";
/// Taint builds: `SITE:KIND` (the build's site number and an exception kind's name) replaces
/// every result of that (site, kind) whose operands were all finite by a finite stand-in
/// (see `taint::Repair`), so that triage can ask whether repairing one exception alone makes
/// a declared result finite. Unset: no repair.
pub const REPAIR: &str = "NUMFUZZ_REPAIR";
/// Makes `numfuzz-cc` print the clang command lines it runs.
pub const CC_VERBOSE: &str = "NUMFUZZ_CC_VERBOSE";
/// Overrides where `numfuzz-cc` looks for `libnumfuzz_runtime.a`.
pub const CC_RUNTIME_DIR: &str = "NUMFUZZ_RUNTIME_DIR";

/// `numfuzz run -m MB`: the most resident memory (MiB) one input may add to what the target
/// process held when the input started. An input that needs more is ended with SIGABRT and
/// reported as out-of-memory. Unset: no limit.
pub const MEM_LIMIT_MB: &str = "NUMFUZZ_MEM_LIMIT_MB";

/// How a split build's runs go (the runtime's `precise.rs`). Unset: under a fuzzer an input
/// runs on the fast copies first (its coverage) and again precisely when the FPU's flags or a
/// sentinel show an exception or the fuzzer wants distances; a replay runs once, precisely.
/// `1`: every fuzzed input is re-run precisely (for targets that raise exceptions in threads
/// of their own, whose flags a fast run does not see; `numfuzz run --precise` asks the same
/// through the region header). `0`: replays run fast first too, each input re-run precisely
/// when it raises a flag (to check, input by input, what fast runs catch). `campaign`: replays
/// run as a campaign's runs do, also skipping the re-run of an edge path and flags already re-run
/// in the process (for benchmarks).
pub const PRECISE: &str = "NUMFUZZ_PRECISE";

/// Set (to anything) by triage: a libFuzzer-style harness serves replay requests on stdin and
/// stdout, one forked child per input, instead of replaying files (see `serve`).
pub const SERVE: &str = "NUMFUZZ_SERVE";

/// AFL++'s coverage map id (SysV shared memory).
pub const AFL_SHM_ID: &str = "__AFL_SHM_ID";
/// AFL++'s shared-memory test case id.
pub const AFL_SHM_FUZZ_ID: &str = "__AFL_SHM_FUZZ_ID";
/// AFL++'s coverage map size.
pub const AFL_MAP_SIZE: &str = "AFL_MAP_SIZE";
/// Set by a fuzzer that drives the target in persistent mode.
pub const AFL_PERSISTENT: &str = "__AFL_PERSISTENT";
/// The AFL forkserver's control (read) file descriptor; status is this + 1.
pub const FORKSRV_FD: i32 = 198;
/// Inputs one forked process runs when a forkserver drives a libFuzzer-style harness in
/// persistent mode (default 10000); `1` gives every input a fresh process.
pub const LOOP: &str = "NUMFUZZ_LOOP";

/// What a caller's environment may hold that makes a numfuzz target do something other than
/// replay its input once, as from a clean shell: the variables a campaign sets to drive it
/// (its maps, the forkserver, persistent loops, AFL++'s shared input) and the replay knobs each
/// replay sets for itself when it wants them. Every replay a numfuzz tool starts clears them.
pub const CAMPAIGN_ONLY: &[&str] = &[
    SHM_ID,
    SITES,
    ENGINE,
    CLIENT,
    REPORT,
    MEM_LIMIT_MB,
    PRECISE,
    LOOP,
    REPAIR,
    TAINT_SKIP,
    TAINT_MODE,
    SHADOW_PRECISION,
    SHADOW_STEER,
    SERVE,
    AFL_SHM_ID,
    AFL_SHM_FUZZ_ID,
    AFL_MAP_SIZE,
    AFL_PERSISTENT,
];
