//! The numfuzz target runtime, linked into every program built by `numfuzz-cc`.
//!
//! It owns what a numfuzz target does at run time: numbering sites, the checkers called
//! after every floating-point operation, the ErrBits/exception maps, sancov edges, and the
//! program's `main` for libFuzzer-style harnesses (site table, standalone replay, AFL++
//! forkserver).

mod check;
mod cmp;
mod crash;
mod edges;
mod engine;
mod forkserver;
mod fpu;
mod region;
mod report;
mod signature;
mod sites;
mod standalone;
mod sysv_shm;

use check::Operands;
use fpu::F80Slot;
use numfuzz_abi::cmp::CmpRecord;
use numfuzz_abi::env;
use numfuzz_abi::op::{FloatType, Op};
use numfuzz_abi::site::{SiteRecord, SITE_UNASSIGNED};
use numfuzz_abi::value::Float;
use region::Region;
use std::ffi::{c_char, c_int};

type TestOneInput = unsafe extern "C" fn(*const u8, usize) -> c_int;
type Initialize = unsafe extern "C" fn(*mut c_int, *mut *mut *mut c_char) -> c_int;

/// The harness's `LLVMFuzzerTestOneInput`.
pub struct Harness {
    test_one: TestOneInput,
}

impl Harness {
    pub fn run(&self, data: &[u8]) {
        // A valid pointer even for empty inputs, as libFuzzer guarantees.
        let ptr = if data.is_empty() {
            [0u8; 1].as_ptr()
        } else {
            data.as_ptr()
        };
        // SAFETY: the harness contract: read `len` bytes at `ptr`.
        unsafe { (self.test_one)(ptr, data.len()) };
    }
}

#[inline]
unsafe fn check(site: *const SiteRecord, ops: Operands) {
    // SAFETY: the pass passes its own site record.
    let rec = unsafe { &*site };
    if rec.id == SITE_UNASSIGNED {
        return;
    }
    let Some(region) = Region::current() else { return };
    let (Some(op), Some(ty)) = (Op::from_code(rec.op), FloatType::from_code(rec.ty)) else {
        return;
    };
    let outcome = check::classify(op, ty, rec.aux, &ops);
    let fresh = region.record(rec.id, &outcome.errbits, outcome.raised);
    if fresh != 0 && report::printing() {
        report::exceptions(rec.id, fresh, op, ty, rec.aux, &ops);
    }
}

/// # Safety
/// Called by code instrumented by the numfuzz pass.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __numfuzz_check_f32(site: *const SiteRecord, a: f32, b: f32, c: f32, i: i64, r: f32) {
    let f = Float::from_f32;
    // SAFETY: forwarded contract.
    unsafe {
        check(
            site,
            Operands {
                a: f(a),
                b: f(b),
                c: f(c),
                i,
                r: f(r),
            },
        )
    }
}

/// # Safety
/// Called by code instrumented by the numfuzz pass.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __numfuzz_check_f64(site: *const SiteRecord, a: f64, b: f64, c: f64, i: i64, r: f64) {
    let f = Float::from_f64;
    // SAFETY: forwarded contract.
    unsafe {
        check(
            site,
            Operands {
                a: f(a),
                b: f(b),
                c: f(c),
                i,
                r: f(r),
            },
        )
    }
}

/// # Safety
/// Called by code instrumented by the numfuzz pass with four x86_fp80 slots a, b, c, r.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __numfuzz_check_f80(site: *const SiteRecord, abcr: *const F80Slot, i: i64) {
    // SAFETY: the pass passes an array of four 16-byte slots.
    let s = unsafe { std::slice::from_raw_parts(abcr, 4) };
    // SAFETY: forwarded contract.
    unsafe {
        check(
            site,
            Operands {
                a: s[0].value(),
                b: s[1].value(),
                c: s[2].value(),
                i,
                r: s[3].value(),
            },
        )
    }
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
    report::configure_from_env();
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
        return engine::run_campaign(std::path::Path::new(&config), &Harness { test_one });
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
    standalone::run(&args, &harness)
}
