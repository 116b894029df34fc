//! The numfuzz target runtime, linked into every program built by `numfuzz-cc`.
//!
//! It owns what a numfuzz target does at run time: numbering sites, the checkers called
//! after every floating-point operation, the ErrBits/exception maps, sancov edges, and the
//! program's `main` for libFuzzer-style harnesses (site table, standalone replay, AFL++
//! forkserver).

mod check;
mod clock;
mod cmp;
mod copies;
mod crash;
mod edges;
#[cfg(feature = "inprocess")]
mod engine;
mod error_report;
mod fast_specials;
mod forkserver;
mod fpu;
mod memlimit;
mod operands;
mod precise;
mod precision;
mod preserving;
mod probe;
mod region;
mod report;
mod rerun_limit;
mod rerun_throttle;
mod results;
mod run;
mod run_cut;
mod serve;
mod signature;
mod sites;
mod standalone;
mod sysv_shm;
mod taint;

use fpu::F80Slot;
use numfuzz_abi::cmp::CmpRecord;
use numfuzz_abi::env;
use numfuzz_abi::errbits::NOT_MEASURED;
use numfuzz_abi::kind::ExceptionKind;
use numfuzz_abi::op::{FloatType, Op, OpShape};
use numfuzz_abi::site::{SiteRecord, SITE_UNASSIGNED};
use numfuzz_abi::value::Float;
use operands::Operands;
use region::Region;
use std::ffi::{c_char, c_int};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

type TestOneInput = unsafe extern "C" fn(*const u8, usize) -> c_int;
type Initialize = unsafe extern "C" fn(*mut c_int, *mut *mut *mut c_char) -> c_int;

/// The harness's `LLVMFuzzerTestOneInput`.
pub struct Harness {
    test_one: TestOneInput,
}

/// Set while `LLVMFuzzerTestOneInput` runs. A harness that calls `exit()` then has not
/// finished its input: like libFuzzer ("fuzz target exited"), numfuzz makes that a crash of
/// this input (so the campaign saves it and goes on) instead of the silent end of the process.
static IN_HARNESS: AtomicBool = AtomicBool::new(false);
static EXIT_HOOK: Once = Once::new();

extern "C" fn exit_during_run() {
    if IN_HARNESS.load(Ordering::Relaxed) {
        report::note_exit_in_harness();
        // SAFETY: ends the process with SIGABRT, which the engine's crash handler (or the
        // forkserver's parent) sees as a crash of the current input.
        unsafe { libc::abort() };
    }
}

/// An input is running in `LLVMFuzzerTestOneInput` (read by the memory limit's watchdog).
pub(crate) fn in_harness() -> bool {
    IN_HARNESS.load(Ordering::Relaxed)
}

impl Harness {
    /// Runs the harness on `data`; whether the run was cut at the in-process executor's time
    /// limit (`run_cut`).
    pub fn run(&self, data: &[u8]) -> bool {
        // SAFETY: registering a plain function with atexit.
        EXIT_HOOK.call_once(|| unsafe {
            libc::atexit(exit_during_run);
        });
        // A valid pointer even for empty inputs, as libFuzzer guarantees.
        let ptr = if data.is_empty() {
            [0u8; 1].as_ptr()
        } else {
            data.as_ptr()
        };
        memlimit::arm();
        IN_HARNESS.store(true, Ordering::Relaxed);
        let len = data.len();
        let cut = precise::run(|| run_cut::run(self.test_one, ptr, len));
        IN_HARNESS.store(false, Ordering::Relaxed);
        cut
    }
}

/// Labels of a checked operation's operands in a taint build: the float operands a, b, c,
/// then the integer one.
type OperandLabels = [u8; 4];

/// What a taint build's check tells the hook: the label of the operation's result, and the
/// finite stand-in that replaces the result when this (site, kind) is repaired.
#[derive(Clone, Copy, Default)]
struct Tainted {
    label: u8,
    repaired: Option<Float>,
}

/// Whether this check would only repeat what its site recorded earlier in the run: a zero or
/// subnormal result where the site's Underflow, a NaN where its Invalid, or an infinite sum,
/// difference or product where its Overflow (a quotient by zero where its DivByZero) is already
/// recorded (from finite operands, if these are). An underflowing or overflowing recurrence
/// calls the runtime at every step; its first step says all the run can learn there (that
/// kind's ErrBits is 0, the other kinds' distances do not come from such results), and the rest
/// need no classification. An infinite quotient of a non-zero divisor is checked: its
/// divisor's distance to zero is measured.
/// Probed sites (local search measures their exact gap) and taint builds (every result gets a
/// label) are always checked.
fn recurring(region: &Region, site: u32, op: Op, ops: &Operands) -> bool {
    use numfuzz_abi::value::FloatClass;
    let kind = match ops.r.class() {
        _ if op.shape() == OpShape::ToInt => return false,
        FloatClass::Zero | FloatClass::Subnormal => ExceptionKind::Underflow,
        FloatClass::Nan { .. } => ExceptionKind::Invalid,
        FloatClass::Infinite => match op {
            Op::FAdd | Op::FSub | Op::FMul => ExceptionKind::Overflow,
            Op::FDiv if ops.b.is_zero() => ExceptionKind::DivByZero,
            _ => return false,
        },
        _ => return false,
    };
    region.recorded(site, kind, ops.all_finite(op)) && probe::probed_kind(site).is_none()
}

/// Checks one operation: classifies it, records it in the region and reports what is new.
/// In a taint build (`labels` of the operands) it also numbers the findings it raised and
/// returns the label of the operation's result and its repair.
///
/// # Safety
/// `site` is a site record emitted by the pass.
#[inline]
unsafe fn check(site: *const SiteRecord, ops: Operands, labels: Option<OperandLabels>) -> Tainted {
    // SAFETY: the pass passes its own site record.
    let rec = unsafe { &*site };
    if rec.id == SITE_UNASSIGNED {
        return Tainted::default();
    }
    let Some(region) = Region::current() else {
        return Tainted::default();
    };
    let (Some(op), Some(ty)) = (Op::from_code(rec.op), FloatType::from_code(rec.ty)) else {
        return Tainted::default();
    };
    if labels.is_none() && recurring(region, rec.id, op, &ops) {
        return Tainted::default();
    }
    let outcome = check::classify(op, ty, rec.aux, &ops);
    let origin = outcome.raised != 0 && ops.all_finite(op);
    let fresh = region.record(rec.id, &outcome.errbits, outcome.raised, origin);
    if let Some(kind) = probe::probed_kind(rec.id) {
        if let Some(gap) = check::gap_of(op, ty, rec.aux, &ops, kind) {
            region.lower_probe_gap(gap);
        }
    }
    let own = match labels {
        Some(_) if outcome.raised != 0 => taint::assign(rec.id, outcome.raised),
        _ => 0,
    };
    if fresh.any() != 0 && report::printing() {
        report::exceptions(rec.id, fresh, origin, op, rec.aux, &ops);
    }
    let Some(operand_labels) = labels else {
        return Tainted::default();
    };
    let to_int = op.shape() == OpShape::ToInt;
    let produced = if to_int {
        taint::Produced::Int {
            invalid: outcome.raised != 0,
        }
    } else {
        taint::Produced::Float(ops.r)
    };
    let (label, passed) = taint::result_label(taint::mode(), op, &ops, operand_labels, produced, own);
    taint::note_flow(rec.id, outcome.raised, passed);
    // A conversion's integer result has no float stand-in: its Invalid is not repaired.
    let repaired = (outcome.raised != 0 && !to_int)
        .then(|| taint::repaired(rec.id, outcome.raised, origin, ops.r, passed))
        .flatten();
    Tainted { label, repaired }
}

/// The check of a `+ - * /` that only carries a special operand along ([`check::carried`]),
/// done on the raw bits: true when there is nothing more to do. Probed sites take the full
/// check, which measures their exact gap.
///
/// # Safety
/// `site` is a site record emitted by the pass for an operation on `ty`.
#[inline]
unsafe fn checked_as_carried(site: *const SiteRecord, ty: FloatType, a: u64, b: u64, r: u64) -> bool {
    // SAFETY: the pass passes its own site record.
    let rec = unsafe { &*site };
    let Some(errbits) = Op::from_code(rec.op).and_then(|op| check::carried(op, ty, a, b, r)) else {
        return false;
    };
    if rec.id == SITE_UNASSIGNED {
        return true;
    }
    if probe::probed_kind(rec.id).is_some() {
        return false;
    }
    // Only a quotient by a finite divisor measures a distance; the rest would record nothing.
    if errbits != [NOT_MEASURED; 4] {
        if let Some(region) = Region::current() {
            region.record(rec.id, &errbits, 0, false);
        }
    }
    true
}

/// [`recurring`] for a `+ - * /` on f32/f64, done on the raw bits ([`check::special_kind`]):
/// true when its special result repeats what its site recorded earlier in the run.
///
/// # Safety
/// `site` is a site record emitted by the pass for an operation on `ty`.
#[inline]
unsafe fn checked_as_recurring(site: *const SiteRecord, ty: FloatType, a: u64, b: u64, r: u64) -> bool {
    // SAFETY: the pass passes its own site record.
    let rec = unsafe { &*site };
    let Some((kind, finite)) = Op::from_code(rec.op).and_then(|op| check::special_kind(op, ty, a, b, r)) else {
        return false;
    };
    Region::current().is_some_and(|region| region.recorded(rec.id, kind, finite))
        && probe::probed_kind(rec.id).is_none()
}

fn float_ops(a: Float, b: Float, c: Float, i: i64, r: Float) -> Operands {
    Operands { a, b, c, i, r }
}

/// The operands in the f80 checker's four slots.
///
/// # Safety
/// `abcr` points to four 16-byte slots.
unsafe fn f80_ops(abcr: *const F80Slot, i: i64) -> Operands {
    // SAFETY: caller guarantees four slots.
    let s = unsafe { std::slice::from_raw_parts(abcr, 4) };
    float_ops(s[0].value(), s[1].value(), s[2].value(), i, s[3].value())
}

/// # Safety
/// Called by code instrumented by the numfuzz pass.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __numfuzz_check_f32(site: *const SiteRecord, a: f32, b: f32, c: f32, i: i64, r: f32) {
    let bits = |x: f32| u64::from(x.to_bits());
    // SAFETY: forwarded contract.
    if unsafe {
        checked_as_carried(site, FloatType::F32, bits(a), bits(b), bits(r))
            || checked_as_recurring(site, FloatType::F32, bits(a), bits(b), bits(r))
    } {
        return;
    }
    let f = Float::from_f32;
    // SAFETY: forwarded contract.
    unsafe { check(site, float_ops(f(a), f(b), f(c), i, f(r)), None) };
}

/// # Safety
/// Called by code instrumented by the numfuzz pass.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __numfuzz_check_f64(site: *const SiteRecord, a: f64, b: f64, c: f64, i: i64, r: f64) {
    let (a_bits, b_bits, r_bits) = (a.to_bits(), b.to_bits(), r.to_bits());
    // SAFETY: forwarded contract.
    if unsafe {
        checked_as_carried(site, FloatType::F64, a_bits, b_bits, r_bits)
            || checked_as_recurring(site, FloatType::F64, a_bits, b_bits, r_bits)
    } {
        return;
    }
    let f = Float::from_f64;
    // SAFETY: forwarded contract.
    unsafe { check(site, float_ops(f(a), f(b), f(c), i, f(r)), None) };
}

/// # Safety
/// Called by code instrumented by the numfuzz pass with four x86_fp80 slots a, b, c, r.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __numfuzz_check_f80(site: *const SiteRecord, abcr: *const F80Slot, i: i64) {
    // SAFETY: forwarded contract.
    unsafe { check(site, f80_ops(abcr, i), None) };
}

// Taint builds. The pass calls `__numfuzz_taint_*`, which DataFlowSanitizer turns into calls
// of the shim's `__dfsw___numfuzz_taint_*`, which pass the operand labels to
// `numfuzz_rt_taint_*` and give the result the label they return. The plain versions are
// what a taint-mode object linked without DataFlowSanitizer calls: checkers that return the
// result.

/// # Safety
/// Called by code instrumented by the numfuzz pass in taint mode.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __numfuzz_taint_f32(site: *const SiteRecord, a: f32, b: f32, c: f32, i: i64, r: f32) -> f32 {
    // SAFETY: forwarded contract.
    unsafe { __numfuzz_check_f32(site, a, b, c, i, r) };
    r
}

/// # Safety
/// As [`__numfuzz_taint_f32`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __numfuzz_taint_f64(site: *const SiteRecord, a: f64, b: f64, c: f64, i: i64, r: f64) -> f64 {
    // SAFETY: forwarded contract.
    unsafe { __numfuzz_check_f64(site, a, b, c, i, r) };
    r
}

/// # Safety
/// As [`__numfuzz_check_f80`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __numfuzz_taint_f80(site: *const SiteRecord, abcr: *const F80Slot, i: i64) {
    // SAFETY: forwarded contract.
    unsafe { __numfuzz_check_f80(site, abcr, i) };
}

/// # Safety
/// Called by code instrumented by the numfuzz pass in taint mode (a conversion to an integer).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __numfuzz_taint_int_f32(site: *const SiteRecord, a: f32, r: i64) -> i64 {
    let z = Float::from_f32(0.0);
    // SAFETY: forwarded contract.
    unsafe { check(site, float_ops(Float::from_f32(a), z, z, 0, z), None) };
    r
}

/// # Safety
/// As [`__numfuzz_taint_int_f32`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __numfuzz_taint_int_f64(site: *const SiteRecord, a: f64, r: i64) -> i64 {
    let z = Float::from_f64(0.0);
    // SAFETY: forwarded contract.
    unsafe { check(site, float_ops(Float::from_f64(a), z, z, 0, z), None) };
    r
}

/// # Safety
/// As [`__numfuzz_taint_int_f32`]; `a` points to a `long double`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __numfuzz_taint_int_f80(site: *const SiteRecord, a: *const F80Slot, r: i64) -> i64 {
    let z = Float::zero(numfuzz_abi::FloatType::F80, false);
    // SAFETY: forwarded contract.
    unsafe { check(site, float_ops((*a).value(), z, z, 0, z), None) };
    r
}

/// # Safety
/// Called by the shim's `__dfsw___numfuzz_taint_f32` with the operands' labels.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn numfuzz_rt_taint_f32(
    site: *const SiteRecord,
    a: f32,
    b: f32,
    c: f32,
    i: i64,
    r: f32,
    labels: *const u8,
    out: *mut f32,
) -> u8 {
    let f = Float::from_f32;
    // SAFETY: the shim passes four labels.
    let l = unsafe { *labels.cast::<OperandLabels>() };
    // SAFETY: forwarded contract.
    let t = unsafe { check(site, float_ops(f(a), f(b), f(c), i, f(r)), Some(l)) };
    if let Some(x) = t.repaired {
        // SAFETY: the shim passes the result's slot.
        unsafe { *out = x.as_f32() };
    }
    t.label
}

/// # Safety
/// Called by the shim's `__dfsw___numfuzz_taint_f64` with the operands' labels.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn numfuzz_rt_taint_f64(
    site: *const SiteRecord,
    a: f64,
    b: f64,
    c: f64,
    i: i64,
    r: f64,
    labels: *const u8,
    out: *mut f64,
) -> u8 {
    let f = Float::from_f64;
    // SAFETY: the shim passes four labels.
    let l = unsafe { *labels.cast::<OperandLabels>() };
    // SAFETY: forwarded contract.
    let t = unsafe { check(site, float_ops(f(a), f(b), f(c), i, f(r)), Some(l)) };
    if let Some(x) = t.repaired {
        // SAFETY: the shim passes the result's slot.
        unsafe { *out = x.as_f64() };
    }
    t.label
}

/// # Safety
/// Called by the shim's `__dfsw___numfuzz_taint_f80` with the labels of the four slots'
/// operands (a, b, c, then the integer operand); a repaired result is written to slot 3,
/// which the instrumented code reads back as the operation's result.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn numfuzz_rt_taint_f80(
    site: *const SiteRecord,
    abcr: *mut F80Slot,
    i: i64,
    labels: *const u8,
) -> u8 {
    // SAFETY: forwarded contract.
    let (ops, l) = unsafe { (f80_ops(abcr, i), *labels.cast::<OperandLabels>()) };
    // SAFETY: forwarded contract.
    let t = unsafe { check(site, ops, Some(l)) };
    if let Some(x) = t.repaired {
        // SAFETY: the caller's four slots; slot 3 is the result.
        unsafe { *abcr.add(3) = F80Slot::of(x) };
    }
    t.label
}

/// A conversion's check in a taint build; `a` is the operand, `label` its label.
///
/// # Safety
/// `site` is a site record emitted by the pass.
unsafe fn taint_int(site: *const SiteRecord, a: Float, label: u8) -> u8 {
    let z = Float::zero(a.ty, false);
    // SAFETY: forwarded contract.
    unsafe { check(site, float_ops(a, z, z, 0, z), Some([label, 0, 0, 0])) }.label
}

/// # Safety
/// Called by the shim's `__dfsw___numfuzz_taint_int_f32`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn numfuzz_rt_taint_int_f32(site: *const SiteRecord, a: f32, label: u8) -> u8 {
    // SAFETY: forwarded contract.
    unsafe { taint_int(site, Float::from_f32(a), label) }
}

/// # Safety
/// Called by the shim's `__dfsw___numfuzz_taint_int_f64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn numfuzz_rt_taint_int_f64(site: *const SiteRecord, a: f64, label: u8) -> u8 {
    // SAFETY: forwarded contract.
    unsafe { taint_int(site, Float::from_f64(a), label) }
}

/// # Safety
/// Called by the shim's `__dfsw___numfuzz_taint_int_f80`; `a` points to a `long double`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn numfuzz_rt_taint_int_f80(site: *const SiteRecord, a: *const F80Slot, label: u8) -> u8 {
    // SAFETY: forwarded contract.
    unsafe { taint_int(site, (*a).value(), label) }
}

/// # Safety
/// Called by the shim's `__numfuzz_register_sites` with a module's site section bounds.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn numfuzz_rt_register_sites(start: *mut SiteRecord, stop: *mut SiteRecord) {
    // SAFETY: forwarded contract.
    unsafe { sites::SITES.register(start, stop) }
}

/// # Safety
/// Called by the shim's `__numfuzz_register_cmps` with a module's comparison section bounds.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn numfuzz_rt_register_cmps(start: *mut CmpRecord, stop: *mut CmpRecord) {
    // SAFETY: forwarded contract.
    unsafe { sites::CMPS.register(start, stop) }
}

/// The harness reports that the library handled the error itself.
#[unsafe(no_mangle)]
pub extern "C" fn numfuzz_handled() {
    if let Some(r) = Region::current() {
        r.set_handled();
    }
}

/// Start-up, from the shim's constructor: after sites and guards are numbered, before the
/// program's own constructors. `argc` is the program's argument count; `libfuzzer_harness`
/// says the runtime's `main` will run `LLVMFuzzerTestOneInput`.
///
/// Maps come first so that the forkserver's children inherit them.
#[unsafe(no_mangle)]
pub extern "C" fn numfuzz_rt_early_init(argc: c_int, libfuzzer_harness: c_int) {
    fpu::check_layout();
    // A program with its own main never reaches the runtime's: the site table is written
    // here, before the program starts (the runtime's main does it for harnesses).
    if libfuzzer_harness == 0 {
        if let Ok(path) = std::env::var(env::SITES) {
            std::process::exit(write_sites(&path));
        }
    }
    report::configure_from_env();
    if let Err(e) = taint::configure_from_env() {
        startup_error(&e);
    }
    match Region::attach_from_env(sites::count(), sites::CMPS.count()) {
        Ok(Some(region)) => {
            // numfuzz's own campaigns: record every exception, never abort.
            region.install();
            report::set_record_only();
        }
        Ok(None) => Region::local(sites::count(), sites::CMPS.count()).install(),
        Err(e) => startup_error(&e),
    }
    if let Err(e) = edges::attach_afl_map() {
        startup_error(&e);
    }
    forkserver::start(libfuzzer_harness != 0, argc > 1);
    // A program with its own main, run standalone (a replay): its whole run is the input, as in
    // a forkserver child (where `start` armed it already).
    if libfuzzer_harness == 0 && !forkserver::in_child() {
        memlimit::arm_whole_process();
    }
}

fn startup_error(msg: &str) -> ! {
    eprintln!("numfuzz target: {msg}");
    std::process::exit(1)
}

fn write_sites(path: &str) -> i32 {
    let sig = signature::specs().into_iter().next();
    let table = sites::table(sig, edges::len() as u32);
    let text = match serde_json::to_string_pretty(&table) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("numfuzz target: cannot encode the site table: {e}");
            return 1;
        }
    };
    let written = if path == "-" {
        use std::io::Write;
        writeln!(std::io::stdout(), "{text}")
    } else {
        std::fs::write(path, text + "\n")
    };
    match written {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("numfuzz target: cannot write the site table to `{path}`: {e}");
            1
        }
    }
}

#[cfg(feature = "inprocess")]
fn in_process_campaign(config: &std::path::Path, harness: &Harness) -> i32 {
    engine::run_campaign(config, harness)
}

/// Replay-only builds (taint, shadow, llvm-cov) link the runtime without the engine.
#[cfg(not(feature = "inprocess"))]
fn in_process_campaign(_: &std::path::Path, _: &Harness) -> i32 {
    eprintln!(
        "numfuzz target: this is a replay-only build (NUMFUZZ_CC_TAINT, NUMFUZZ_CC_SHADOW or NUMFUZZ_CC_COVERAGE), \
         without the in-process engine; fuzz the program built by numfuzz-cc without those switches"
    );
    1
}

/// The program's `main` when it has none of its own (libFuzzer-style harness).
///
/// # Safety
/// Called by the shim's `main` with the process arguments and the harness entry points.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn numfuzz_rt_main(
    mut argc: c_int,
    mut argv: *mut *mut c_char,
    test_one: Option<TestOneInput>,
    initialize: Option<Initialize>,
) -> c_int {
    if let Ok(path) = std::env::var(env::SITES) {
        return write_sites(&path);
    }
    let Some(test_one) = test_one else {
        eprintln!("numfuzz target: this program defines neither main() nor LLVMFuzzerTestOneInput()");
        return 1;
    };
    if let Some(config) = std::env::var_os(env::ENGINE) {
        if let Some(init) = initialize {
            // SAFETY: libFuzzer's contract for LLVMFuzzerInitialize.
            unsafe { init(&mut argc, &mut argv) };
        }
        return in_process_campaign(std::path::Path::new(&config), &Harness { test_one });
    }
    if let Some(init) = initialize {
        // SAFETY: libFuzzer's contract for LLVMFuzzerInitialize.
        unsafe { init(&mut argc, &mut argv) };
    }
    // SAFETY: argv holds argc C strings.
    let args: Vec<String> = (0..argc as usize)
        .map(|k| {
            unsafe { std::ffi::CStr::from_ptr(*argv.add(k)) }
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let harness = Harness { test_one };
    if forkserver::in_child() {
        return forkserver::run_harness(&args, &harness);
    }
    if std::env::var_os(env::SERVE).is_some() {
        return serve::run(&harness);
    }
    standalone::run(&args, &harness)
}
