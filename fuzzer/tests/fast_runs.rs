//! Fast runs end to end (runtime/src/precise.rs): under a fuzzer an input first runs on the
//! fast copies, watched by the FPU's sticky flags, and runs again precisely only when one went
//! up or a sentinel fired. What must hold: the program sees exactly the flags it would see
//! without numfuzz, a fast run misses no exception (even one whose flag the program cleared
//! itself), an input that raises nothing runs once, and a campaign's fast runs find what
//! precise runs find.
//!
//! Replays are precise and run once; `NUMFUZZ_PRECISE=0` makes a replay run as a fuzzer's run
//! does, which is how the fast path is observed here input by input. The harness prints one
//! line per run, so the tests count the runs of each input.

use numfuzz_abi::report::{ExceptionReport, ReportEvent};
use numfuzz_abi::ExceptionKind::{self, DivByZero, Overflow, Underflow};
use std::sync::OnceLock;
use testkit::{campaign, Rng};

const OPS_C: &str = include_str!("c/fast_fenv_ops.c");
const HARNESS_C: &str = include_str!("c/fast_fenv_harness.c");

/// The harness with the operations built checked and, as the reference, edges-only.
fn harness() -> &'static testkit::Built {
    static BUILT: OnceLock<testkit::Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let objects = testkit::TempDir::new().unwrap();
        let checked = testkit::compile_object(objects.path(), "ops.c", OPS_C, &["-O2", "-DVARIANT=checked"], &[]);
        let unchecked = testkit::compile_object(
            objects.path(),
            "ops.c",
            OPS_C,
            &["-O2", "-DVARIANT=unchecked"],
            &[("NUMFUZZ_CC_NO_CHECKS", "1")],
        );
        let (checked, unchecked) = (checked.display().to_string(), unchecked.display().to_string());
        testkit::compile(
            "fast_fenv",
            &[("harness.c", HARNESS_C)],
            &["-O2", &checked, &unchecked],
            &[],
        )
    })
}

fn line_of(marker: &str) -> u32 {
    let tag = format!("/* @{marker} */");
    1 + OPS_C.lines().position(|l| l.contains(&tag)).expect("marker") as u32
}

/// An exception reported: its kind and line.
type Found = (ExceptionKind, u32);

/// One replay of `input`: how many times the harness ran, and the (kind, line) of every
/// exception reported, in order.
fn replay(input: &[f64; 3], fast: bool) -> (usize, Vec<Found>) {
    let mut env = vec![("NUMFUZZ_ABORT", "0"), ("NUMFUZZ_REPORT", "json")];
    if fast {
        env.push(("NUMFUZZ_PRECISE", "0"));
    }
    let out = testkit::run(&harness().exe, &[], &testkit::f64s(input), &env);
    // The harness aborts when the program's flags differ from the edges-only build's.
    assert!(
        out.status.success(),
        "{input:?} (fast: {fast}): {}",
        testkit::both(&out)
    );
    let runs = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("run "))
        .count();
    let reports: Vec<ExceptionReport> = testkit::events(&String::from_utf8_lossy(&out.stderr))
        .into_iter()
        .filter_map(|e| match e {
            ReportEvent::Exception(r) => Some(r),
            _ => None,
        })
        .collect();
    (runs, reports.iter().map(|r| (r.kind, r.site.line)).collect())
}

#[test]
fn the_program_sees_its_own_flags_and_a_fast_run_keeps_what_it_clears() {
    let (product, quotient) = (line_of("product"), line_of("quotient"));
    // (a, b, c) → what a * b and c / b raise
    let cases: [([f64; 3], Vec<Found>); 5] = [
        ([1.5, 2.0, 3.0], vec![]),
        // The product overflows and the program clears the flag before the quotient: the fast
        // run's flags end clear, and only the barrier before feclearexcept keeps the overflow.
        ([1e308, 10.0, 1.0], vec![(Overflow, product)]),
        ([1e-300, 1e-200, 1.0], vec![(Underflow, product)]),
        ([1.0, 0.0, 1.0], vec![(DivByZero, quotient)]),
        ([1e300, 1e10, 1e-300], vec![(Overflow, product), (Underflow, quotient)]),
    ];
    for (input, expected) in cases {
        let (precise_runs, precise) = replay(&input, false);
        assert_eq!(precise_runs, 1, "{input:?}: a replay runs once");
        assert_eq!(precise, expected, "{input:?}: precise replay");
        let (fast_runs, fast) = replay(&input, true);
        assert_eq!(fast, expected, "{input:?}: fast run, then precise re-run");
        let expected_runs = if expected.is_empty() { 1 } else { 2 };
        assert_eq!(fast_runs, expected_runs, "{input:?}: runs of a fast replay");
    }
}

#[test]
fn a_campaign_of_fast_runs_finds_the_exceptions_and_never_changes_the_flags() {
    let _turn = campaign::one_at_a_time();
    let out = testkit::TempDir::new().unwrap();
    let instance = campaign::fuzz(&harness().exe, &out.path().join("out"), 10, &[]);
    // A flag the program saw differently would have aborted the harness: a real crash.
    assert_eq!(campaign::stat(&instance, "real_crashes"), 0);
    assert!(
        campaign::stat(&instance, "fast_turns") > 0,
        "the campaign made fast runs"
    );
    for (kind, marker) in [(Overflow, "product"), (DivByZero, "quotient")] {
        assert!(
            campaign::found(&instance, kind, None, line_of(marker)),
            "{kind:?} at @{marker} not found: {:#?}",
            instance.exceptions()
        );
    }
}

/// The libm functions the pass classifies, by shape: (name, 'u'nary, 'b'inary, float-'i'nt).
const LIBM: [(&str, char); 31] = [
    ("cbrt", 'u'),
    ("exp", 'u'),
    ("exp2", 'u'),
    ("expm1", 'u'),
    ("log", 'u'),
    ("log2", 'u'),
    ("log10", 'u'),
    ("log1p", 'u'),
    ("sin", 'u'),
    ("cos", 'u'),
    ("tan", 'u'),
    ("asin", 'u'),
    ("acos", 'u'),
    ("atan", 'u'),
    ("sinh", 'u'),
    ("cosh", 'u'),
    ("tanh", 'u'),
    ("asinh", 'u'),
    ("acosh", 'u'),
    ("atanh", 'u'),
    ("lgamma", 'u'),
    ("tgamma", 'u'),
    ("erf", 'u'),
    ("erfc", 'u'),
    ("pow", 'b'),
    ("atan2", 'b'),
    ("hypot", 'b'),
    ("fmod", 'b'),
    ("remainder", 'b'),
    ("ldexp", 'i'),
    ("scalbn", 'i'),
];

/// A harness calling every libm function of [`LIBM`] in float, double and long double, chosen
/// by the input's first byte.
fn libm_harness() -> String {
    let mut c = String::from(
        "#include <math.h>\n#include <numfuzz.h>\nNUMFUZZ_SIGNATURE(\"u8,f64,f64,i32,f32,f32,f80,f80\");\n\
         volatile double sd;\nvolatile float sf;\nvolatile long double sl;\n\
         int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n\
         double a = nf_f64(data, size, 1), b = nf_f64(data, size, 2);\nint n = nf_i32(data, size, 3);\n\
         float fa = nf_f32(data, size, 4), fb = nf_f32(data, size, 5);\n\
         long double la = nf_f80(data, size, 6), lb = nf_f80(data, size, 7);\nswitch (nf_u8(data, size, 0)) {\n",
    );
    let mut case = 0;
    for (name, shape) in LIBM {
        for (suffix, x, y, sink) in [("", "a", "b", "sd"), ("f", "fa", "fb", "sf"), ("l", "la", "lb", "sl")] {
            let args = match shape {
                'u' => x.to_string(),
                'b' => format!("{x}, {y}"),
                _ => format!("{x}, n"),
            };
            c += &format!("case {case}: {sink} = {name}{suffix}({args}); break;\n");
            case += 1;
        }
    }
    c + "}\nreturn 0;\n}\n"
}

/// Specials, values of every binary exponent (the range boundaries of exp, pow, ldexp,
/// tgamma...), and moderate values (the domains of acos, atanh, log1p...).
fn argument(rng: &mut Rng) -> f64 {
    const SPECIAL: [f64; 14] = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        2.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        5e-324,
        f64::MIN_POSITIVE,
        f64::MAX,
        -5e-324,
        1e-310,
    ];
    let sign = if rng.chance(50) { 1.0 } else { -1.0 };
    match rng.below(20) {
        0..=2 => rng.pick(&SPECIAL),
        3..=9 => sign * rng.unit() * 2f64.powi(rng.range(-1074, 1023) as i32),
        10..=15 => (rng.unit() - 0.5) * 1600.0,
        _ => sign * rng.unit() * 2f64.powi(rng.range(-150, 149) as i32),
    }
}

/// x86 extended precision of a double, little-endian (exact: every double is an f80).
fn f80_bytes(x: f64) -> [u8; 10] {
    let sign = if x.is_sign_negative() { 0x8000u16 } else { 0 };
    let (mantissa, exponent) = if x.is_nan() {
        (0xc000_0000_0000_0000u64, 0x7fffu16)
    } else if x.is_infinite() {
        (1 << 63, 0x7fff)
    } else if x == 0.0 {
        (0, 0)
    } else {
        let bits = x.abs().to_bits();
        let (frac, exp) = (bits & ((1 << 52) - 1), (bits >> 52) as i32);
        // Normalise a subnormal double: f80's exponent range holds it as a normal number.
        let (m, e) = if exp == 0 {
            let shift = frac.leading_zeros() - 11;
            (frac << shift, 1 - shift as i32)
        } else {
            (frac | 1 << 52, exp)
        };
        (m << 11, (e - 1023 + 16383) as u16)
    };
    let mut out = [0u8; 10];
    out[..8].copy_from_slice(&mantissa.to_le_bytes());
    out[8..].copy_from_slice(&(exponent | sign).to_le_bytes());
    out
}

/// Fast runs trust the libm to raise the flag of every exception the precise classification
/// (C11 Annex F) reports; on this machine's libm, for every function numfuzz classifies, in
/// three types, on special, boundary and random arguments, a fast replay (re-run precisely
/// only when the FPU saw something) reports exactly what a precise replay reports.
#[test]
fn the_libm_raises_every_flag_a_fast_run_relies_on() {
    let built = testkit::compile("libm_flags", &[("libm.c", &libm_harness())], &["-O2", "-lm"], &[]);
    let inputs = testkit::TempDir::new().unwrap();
    let mut rng = Rng(0x5eed_f1a9);
    let mut files = Vec::new();
    for case in 0..LIBM.len() * 3 {
        for k in 0..80 {
            let (a, b) = (argument(&mut rng), argument(&mut rng));
            let n = match rng.below(3) {
                0 => rng.range(-2100, 2100),
                1 => rng.range(-200, 200),
                _ => rng.range(0, 1),
            } as i32;
            let mut data = vec![case as u8];
            data.extend(a.to_le_bytes());
            data.extend(b.to_le_bytes());
            data.extend(n.to_le_bytes());
            data.extend((a as f32).to_le_bytes());
            data.extend((b as f32).to_le_bytes());
            data.extend(f80_bytes(a));
            data.extend(f80_bytes(b));
            let path = inputs.path().join(format!("{case:03}-{k:02}"));
            std::fs::write(&path, data).unwrap();
            files.push(path.display().to_string());
        }
    }
    let args: Vec<&str> = files.iter().map(String::as_str).collect();
    let reported = |fast: bool| {
        let mut env = vec![("NUMFUZZ_ABORT", "0"), ("NUMFUZZ_REPORT", "json")];
        if fast {
            env.push(("NUMFUZZ_PRECISE", "0"));
        }
        let out = testkit::run(&built.exe, &args, &[], &env);
        assert!(out.status.success(), "{}", testkit::both(&out));
        let mut seen: Vec<(String, ExceptionKind, u32)> = testkit::events(&String::from_utf8_lossy(&out.stderr))
            .into_iter()
            .filter_map(|e| match e {
                ReportEvent::Exception(r) => Some((r.input.clone().unwrap_or_default(), r.kind, r.site.line)),
                _ => None,
            })
            .collect();
        seen.sort_by(|x, y| (&x.0, x.1 as u8, x.2).cmp(&(&y.0, y.1 as u8, y.2)));
        seen
    };
    let precise = reported(false);
    let fast = reported(true);
    // Every kind occurs, so the comparison means something.
    for kind in [Overflow, Underflow, DivByZero, ExceptionKind::Invalid] {
        assert!(
            precise.iter().any(|(_, k, _)| *k == kind),
            "no {kind:?} among {} reports",
            precise.len()
        );
    }
    let missed: Vec<_> = precise.iter().filter(|p| !fast.contains(p)).collect();
    assert!(
        missed.is_empty(),
        "fast runs missed {} of {}: {missed:#?}",
        missed.len(),
        precise.len()
    );
    assert_eq!(
        fast.len(),
        precise.len(),
        "fast runs reported what precise runs did not"
    );
}
