//! ErrBits seen the way the fuzzer sees it: through the shared-memory region named by
//! `NUMFUZZ_SHM_ID` (header from `ShmHeader::for_slots`, maps reset to 0xFF / 0 before each
//! run). An input closer to an exception gives a smaller ErrBits at that site's slot, and 0
//! (with the exception map set) when the exception happens.

use numfuzz_abi::errbits::NOT_MEASURED;
use numfuzz_abi::kind::slot;
use numfuzz_abi::op::Op;
use numfuzz_abi::shm::ShmHeader;
use numfuzz_abi::site::SiteTable;
use numfuzz_abi::ExceptionKind::{self, DivByZero, Invalid, Overflow, Underflow};
use std::path::Path;
use std::sync::OnceLock;

const HARNESS: &str = "#include <math.h>\n#include <numfuzz.h>\n\
NUMFUZZ_SIGNATURE(\"f64,f64\");\n\
volatile double sink;\n\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n\
  double a = nf_f64(data, size, 0), b = nf_f64(data, size, 1);\n\
  sink = a * b;\n\
  sink = a / b;\n\
  sink = sqrt(b);\n\
  return 0;\n\
}\n";

/// A SysV shared-memory region laid out like the fuzzer's, removed when dropped.
struct Region {
    id: i32,
    base: *mut u8,
    header: ShmHeader,
}

impl Region {
    fn new(slots: u32) -> Region {
        let header = ShmHeader::for_slots(slots);
        // SAFETY: plain SysV calls; the segment is private to this test.
        unsafe {
            let id = libc::shmget(libc::IPC_PRIVATE, header.region_size(), libc::IPC_CREAT | 0o600);
            assert!(id >= 0, "shmget: {}", std::io::Error::last_os_error());
            let base = libc::shmat(id, std::ptr::null(), 0);
            assert_ne!(base as isize, -1, "shmat: {}", std::io::Error::last_os_error());
            let base = base.cast::<u8>();
            base.cast::<ShmHeader>().write_unaligned(header);
            Region { id, base, header }
        }
    }

    /// What the fuzzer does before each run.
    fn reset(&self) {
        // SAFETY: both maps lie inside the segment (region_size).
        unsafe {
            std::ptr::write_bytes(
                self.base.add(self.header.errbits_offset as usize),
                NOT_MEASURED,
                self.header.slot_capacity as usize,
            );
            std::ptr::write_bytes(
                self.base.add(self.header.exceptions_offset as usize),
                0,
                self.header.slot_capacity as usize,
            );
        }
    }

    fn errbits(&self, slot: usize) -> u8 {
        assert!(slot < self.header.slot_capacity as usize);
        // SAFETY: bounds checked above.
        unsafe { *self.base.add(self.header.errbits_offset as usize + slot) }
    }

    fn raised(&self, slot: usize) -> bool {
        assert!(slot < self.header.slot_capacity as usize);
        // SAFETY: bounds checked above.
        unsafe { *self.base.add(self.header.exceptions_offset as usize + slot) != 0 }
    }

    fn header(&self) -> ShmHeader {
        // SAFETY: the header is at the start of the segment.
        unsafe { self.base.cast::<ShmHeader>().read_unaligned() }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: detaching and removing the segment this value created.
        unsafe {
            libc::shmdt(self.base.cast());
            libc::shmctl(self.id, libc::IPC_RMID, std::ptr::null_mut());
        }
    }
}

fn target() -> &'static testkit::Built {
    static BUILT: OnceLock<testkit::Built> = OnceLock::new();
    BUILT.get_or_init(|| testkit::compile("errbits", &[("errbits.c", HARNESS)], &["-lm"], &[]))
}

fn site_of(table: &SiteTable, op: Op) -> u32 {
    let found: Vec<u32> = table.sites.iter().filter(|s| s.op == op).map(|s| s.id).collect();
    assert_eq!(found.len(), 1, "one {op} site in {table:?}");
    found[0]
}

fn sites(exe: &Path) -> SiteTable {
    let out = testkit::run(exe, &[], &[], &[("NUMFUZZ_SITES", "-")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("site table")
}

/// Runs the target once on `(a, b)` with the region attached; returns the region.
fn run(a: f64, b: f64) -> Region {
    let built = target();
    let region = Region::new(1024);
    region.reset();
    let input = tempfile_with(&testkit::f64s(&[a, b]));
    let id = region.id.to_string();
    let out = testkit::run(
        &built.exe,
        &[input.path().join("input").to_str().unwrap()],
        &[],
        &[("NUMFUZZ_SHM_ID", id.as_str()), ("NUMFUZZ_ABORT", "0")],
    );
    assert!(
        out.status.success(),
        "target failed on ({a}, {b}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    region
}

fn tempfile_with(bytes: &[u8]) -> testkit::TempDir {
    let dir = testkit::TempDir::new().unwrap();
    std::fs::write(dir.path().join("input"), bytes).unwrap();
    dir
}

/// ErrBits of `op`'s site for `kind` after one run on `(a, b)`, and whether it was raised.
fn errbits(op: Op, kind: ExceptionKind, a: f64, b: f64) -> (u8, bool) {
    let table = sites(&target().exe);
    let s = slot(site_of(&table, op), kind);
    let region = run(a, b);
    (region.errbits(s), region.raised(s))
}

#[test]
fn the_target_announces_its_sites_in_the_header() {
    let table = sites(&target().exe);
    let region = run(1.0, 2.0);
    assert_eq!(region.header().site_count as usize, table.sites.len());
    assert!(region.header().is_valid());
}

#[test]
fn overflow_errbits_shrink_toward_dbl_max() {
    let far = errbits(Op::FMul, Overflow, 1e300, 10.0);
    let nearer = errbits(Op::FMul, Overflow, 1e300, 1e7);
    let nearest = errbits(Op::FMul, Overflow, 1e300, 1.7e8);
    assert!(!far.1 && !nearer.1 && !nearest.1);
    assert!(
        far.0 > nearer.0 && nearer.0 > nearest.0,
        "{far:?} {nearer:?} {nearest:?}"
    );
    assert!(nearest.0 >= 1, "not raised is never 0");
    assert_eq!(errbits(Op::FMul, Overflow, 1e300, 1e9), (0, true));
    // The exact last step: DBL_MAX itself is not an overflow and is 1 bit away.
    assert_eq!(errbits(Op::FMul, Overflow, f64::MAX, 1.0), (1, false));
}

#[test]
fn other_kinds_are_measured_at_their_own_boundaries() {
    // Underflow: results closer to DBL_MIN.
    let far = errbits(Op::FMul, Underflow, 1e-200, 1e-10);
    let near = errbits(Op::FMul, Underflow, 1e-200, 1e-100);
    assert!(far.0 > near.0 && near.0 >= 1, "{far:?} {near:?}");
    assert_eq!(errbits(Op::FMul, Underflow, 1e-200, 1e-120).0, 0);
    // DivByZero: divisors closer to zero.
    let far = errbits(Op::FDiv, DivByZero, 1.0, 1e10);
    let near = errbits(Op::FDiv, DivByZero, 1.0, 1e-300);
    assert!(far.0 > near.0 && near.0 >= 1, "{far:?} {near:?}");
    assert_eq!(errbits(Op::FDiv, DivByZero, 1.0, 0.0), (0, true));
    // Invalid for sqrt: arguments closer to zero from above.
    let far = errbits(Op::Sqrt, Invalid, 1.0, 1e300);
    let near = errbits(Op::Sqrt, Invalid, 1.0, 1e-300);
    assert!(far.0 > near.0 && near.0 >= 1, "{far:?} {near:?}");
    assert_eq!(errbits(Op::Sqrt, Invalid, 1.0, -1e-300), (0, true));
    // fmul has no DivByZero boundary.
    assert_eq!(errbits(Op::FMul, DivByZero, 1.0, 2.0), (NOT_MEASURED, false));
}

/// The pass inlines the ErrBits update of `+ - * /` results strictly inside the normal range,
/// and of the exact zeros of a zero factor or dividend, and calls the runtime for the rest;
/// either way the values are the ABI's formula exactly (a zero has no distance to underflow).
#[test]
fn inlined_and_runtime_errbits_agree_with_the_formula() {
    use numfuzz_abi::errbits::not_raised;
    use numfuzz_abi::op::FloatType;
    use numfuzz_abi::value::Float;
    let max = Float::max_finite(FloatType::F64, false);
    let min = Float::min_normal(FloatType::F64, false);
    let cases = [
        (3.0, 7.0),
        (-1e300, 1.7e8),
        (1e-200, 1e-100),
        (f64::MIN_POSITIVE, 1.0),                // exactly the smallest normal: runtime
        (f64::MIN_POSITIVE, 1.0 + f64::EPSILON), // one step above it: inline
        (f64::MAX, 1.0),                         // exactly the largest finite: runtime
        (f64::MAX, 1.0 - f64::EPSILON / 2.0),    // one step below it: inline
        (-2.5e-308, 0.5),                        // subnormal result: runtime
        (0.0, 7.0),                              // exact zeros: inline
        (-0.0, 1e300),
        (0.0, 5e-324), // a subnormal divisor's distance to zero
        (1e-300, 0.0), // a zero factor; a zero divisor: runtime
    ];
    for (a, b) in cases {
        let region = run(a, b);
        let s = site_of(&sites(&target().exe), Op::FMul);
        let r = Float::from_f64((a * b).abs());
        let expect = |kind: ExceptionKind, boundary: Float| {
            let raised = match kind {
                Overflow => r.is_infinite(),
                _ => (a * b) != 0.0 && (a * b).abs() < f64::MIN_POSITIVE,
            };
            if raised {
                0
            } else if kind == Underflow && r.is_zero() {
                NOT_MEASURED
            } else {
                not_raised(r, boundary)
            }
        };
        assert_eq!(
            region.errbits(slot(s, Overflow)),
            expect(Overflow, max),
            "overflow ErrBits of {a:e} * {b:e}"
        );
        assert_eq!(
            region.errbits(slot(s, Underflow)),
            expect(Underflow, min),
            "underflow ErrBits of {a:e} * {b:e}"
        );
        let d = site_of(&sites(&target().exe), Op::FDiv);
        let q = a / b;
        if q.is_normal() || (q == 0.0 && a == 0.0 && b != 0.0) {
            assert_eq!(
                region.errbits(slot(d, DivByZero)),
                not_raised(Float::from_f64(b.abs()), Float::zero(FloatType::F64, false)),
                "divide-by-zero ErrBits of {a:e} / {b:e}"
            );
        }
    }
}
