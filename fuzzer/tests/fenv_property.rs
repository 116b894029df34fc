//! Property: for fadd, fsub, fmul and fdiv on f32, f64 and f80, the kinds the checker reports
//! equal the flags the program itself reads with `fetestexcept` for the same operation (and
//! the checker changes neither those flags nor the result), on 10^5 random and special
//! operand pairs per operation and type, some under directed rounding.
//!
//! Only public behaviour is used: the harness (tests/c/fenv_harness.c) brackets each
//! operation with feclearexcept/fetestexcept and prints the flags; the target replays many
//! input files in one process with `NUMFUZZ_REPORT=json NUMFUZZ_ABORT=0`, which reports each
//! (site, kind) once per input and ends every input with an `input_done` line.

use numfuzz_abi::op::FloatType;
use numfuzz_abi::report::ReportEvent;
use numfuzz_abi::value::{Float, FloatFormat};
use numfuzz_abi::ExceptionKind;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const OPS_C: &str = include_str!("c/fenv_ops.c");
const HARNESS_C: &str = include_str!("c/fenv_harness.c");

/// Inputs (operand pairs per operation and type).
const INPUTS: usize = 100_000;
/// Inputs per target process (keeps the command line far below ARG_MAX).
const BATCH: usize = 5_000;
const OPS: [&str; 4] = ["add", "sub", "mul", "div"];
const TYPES: [FloatType; 3] = [FloatType::F32, FloatType::F64, FloatType::F80];

use testkit::Rng;

/// A finite value `(-1)^neg * 1.m * 2^exp` with a random significand, or the subnormal /
/// infinite value its exponent falls to (exponent in unbiased terms).
fn with_exponent(rng: &mut Rng, ty: FloatType, exp: i64) -> Float {
    let f = FloatFormat::of(ty);
    let frac_bits = f.precision - 1;
    let frac = (rng.next_u64() as u128) & ((1u128 << frac_bits) - 1);
    // Sparse significands (few low bits set) make exact results likely.
    let frac = if rng.chance(30) {
        frac & !((1u128 << rng.below(frac_bits as u64)) - 1)
    } else {
        frac
    };
    let biased = exp + f.bias as i64;
    let max_biased = (1i64 << f.exp_bits) - 1;
    let bits = if biased <= 0 {
        // Subnormal: shift the significand (with its leading one) down.
        let shift = (1 - biased) as u32;
        let sig = (1u128 << frac_bits) | frac;
        let sig = if shift > frac_bits + 1 { 0 } else { sig >> shift };
        Float::from_bits(ty, sig).bits
    } else if biased >= max_biased {
        Float::infinity(ty, false).bits
    } else {
        let int_bit = if ty == FloatType::F80 { 1u128 << 63 } else { 0 };
        ((biased as u128) << (f.width - 1 - f.exp_bits)) | int_bit | frac
    };
    let x = Float::from_bits(ty, bits);
    x.with_sign(rng.chance(50))
}

fn specials(ty: FloatType) -> Vec<Float> {
    let mut v = Vec::new();
    let signalling = {
        let inf = Float::infinity(ty, false);
        Float::from_bits(ty, inf.bits | 1)
    };
    let sqrt_max = Float::pow2(ty, FloatFormat::of(ty).emax() / 2);
    let sqrt_min = Float::pow2(ty, FloatFormat::of(ty).emin() / 2);
    for x in [
        Float::zero(ty, false),
        Float::min_subnormal(ty, false),
        Float::min_subnormal(ty, false).step(1),
        Float::min_normal(ty, false),
        Float::min_normal(ty, false).step(-1),
        Float::min_normal(ty, false).step(1),
        Float::max_finite(ty, false),
        Float::max_finite(ty, false).step(-1),
        Float::infinity(ty, false),
        Float::one(ty),
        Float::one(ty).step(-1),
        Float::one(ty).step(1),
        Float::pow2(ty, 1),
        Float::pow2(ty, -1),
        sqrt_max,
        sqrt_max.step(-1),
        sqrt_max.step(1),
        sqrt_min,
        sqrt_min.step(-1),
        sqrt_min.step(1),
    ] {
        v.push(x);
        v.push(x.neg());
    }
    v.push(Float::quiet_nan(ty));
    v.push(signalling);
    v
}

/// One operand pair of type `ty`, from a mix of strategies aimed at every boundary.
fn pair(rng: &mut Rng, ty: FloatType) -> (Float, Float) {
    let f = FloatFormat::of(ty);
    let (emin, emax, p) = (f.emin() as i64, f.emax() as i64, f.precision as i64);
    let specials = specials(ty);
    let special = |rng: &mut Rng| specials[rng.below(specials.len() as u64) as usize];
    let any_exp = |rng: &mut Rng| rng.range(emin - p - 1, emax + 1);
    match rng.below(11) {
        // Raw bit patterns (for f80 also unnormals and pseudo-NaNs).
        0 | 1 => {
            let raw = |rng: &mut Rng| Float::from_bits(ty, (rng.next_u64() as u128) << 64 | rng.next_u64() as u128);
            (raw(rng), raw(rng))
        }
        // Specials with specials or with anything.
        2 => (special(rng), special(rng)),
        3 => {
            let e = any_exp(rng);
            let x = with_exponent(rng, ty, e);
            if rng.chance(50) {
                (special(rng), x)
            } else {
                (x, special(rng))
            }
        }
        // Exponents whose sum or difference lands near the overflow or underflow boundary
        // (products and quotients), including deep in the subnormal range.
        4 | 5 => {
            let target = match rng.below(4) {
                0 => emax + rng.range(-2, 1),
                1 => emin + rng.range(-2, 1),
                2 => rng.range(emin - p - 2, emin),
                _ => any_exp(rng),
            };
            let ea = rng.range((target - emax).max(emin - p), emax.min(target - emin + p));
            let eb = if rng.chance(50) { target - ea } else { ea - target };
            (with_exponent(rng, ty, ea), with_exponent(rng, ty, eb))
        }
        // Close values: differences that are exact subnormals, sums near the largest finite.
        6 => {
            let e = match rng.below(3) {
                0 => emin + rng.range(0, 1),
                1 => emax - rng.range(0, 1),
                _ => any_exp(rng),
            };
            let a = with_exponent(rng, ty, e);
            let b = a.step(rng.range(-1000, 1000));
            (a, if rng.chance(50) { b.neg() } else { b })
        }
        // Products landing exactly on, or a few ulps around, the smallest normal and the
        // largest finite: (1 ± k ulp) * (boundary ± j ulp) and 2^k * (boundary / 2^k).
        7 => {
            let boundary = if rng.chance(50) {
                Float::min_normal(ty, false)
            } else {
                Float::max_finite(ty, false)
            };
            let a = Float::one(ty).step(rng.range(-3, 3));
            let b = boundary.step(rng.range(-3, 3));
            if rng.chance(50) {
                (a, b)
            } else {
                (b, a)
            }
        }
        8 => {
            let k = rng.range(1, p + 2);
            let k = if rng.chance(50) { k } else { -k };
            let min = Float::min_normal(ty, false);
            let (m, e) = min.decompose().unwrap();
            let scaled = Float::compose(ty, false, m, e - k as i32).unwrap_or(min);
            let a = Float::pow2(ty, k as i32).step(rng.range(-1, 1));
            (a, scaled.step(rng.range(-1, 1)))
        }
        // Finite values over signed zeros (division by zero) and the reverse.
        9 => {
            let e = any_exp(rng);
            let x = with_exponent(rng, ty, e);
            let zero = Float::zero(ty, rng.chance(50));
            if rng.chance(75) {
                (x, zero)
            } else {
                (zero, x)
            }
        }
        // Fully random finite values.
        _ => {
            let ea = any_exp(rng);
            let eb = any_exp(rng);
            (with_exponent(rng, ty, ea), with_exponent(rng, ty, eb))
        }
    }
}

fn encode(ty: FloatType, x: Float) -> Vec<u8> {
    match ty {
        FloatType::F32 => (x.bits as u32).to_le_bytes().to_vec(),
        FloatType::F64 => (x.bits as u64).to_le_bytes().to_vec(),
        FloatType::F80 => x.to_f80_bytes().to_vec(),
    }
}

struct Case {
    rounding: u8,
    pairs: [(Float, Float); 3],
}

fn cases(seed: u64, n: usize) -> Vec<Case> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|_| Case {
            // One input in five runs under a directed rounding mode.
            rounding: if rng.chance(80) { 0 } else { rng.range(1, 3) as u8 },
            pairs: TYPES.map(|ty| pair(&mut rng, ty)),
        })
        .collect()
}

fn input_bytes(id: u32, case: &Case) -> Vec<u8> {
    let mut v = id.to_le_bytes().to_vec();
    v.push(case.rounding);
    for (k, ty) in TYPES.iter().enumerate() {
        v.extend(encode(*ty, case.pairs[k].0));
        v.extend(encode(*ty, case.pairs[k].1));
    }
    v
}

/// The harness with the operations compiled checked (plain and strict) and unchecked.
fn harness() -> &'static Path {
    static BUILT: OnceLock<testkit::Built> = OnceLock::new();
    &BUILT.get_or_init(build).exe
}

fn build() -> testkit::Built {
    let objects = testkit::TempDir::new().unwrap();
    // (variant, extra flag, environment)
    let variants = [
        ("plain", None, None),
        ("strict", Some("-DSTRICT"), None),
        ("ref", None, Some(("NUMFUZZ_CC_NO_CHECKS", "1"))),
    ];
    let objs: Vec<String> = variants
        .into_iter()
        .map(|(name, flag, env)| {
            let variant = format!("-DVARIANT={name}");
            let mut flags = vec![variant.as_str()];
            flags.extend(flag);
            let env: Vec<(&str, &str)> = env.into_iter().collect();
            testkit::compile_object(objects.path(), "fenv_ops.c", OPS_C, &flags, &env)
                .display()
                .to_string()
        })
        .collect();
    let flags: Vec<&str> = objs.iter().map(String::as_str).collect();
    let built = testkit::compile("fenv", &[("fenv_harness.c", HARNESS_C)], &flags, &[]);
    drop(objects);
    built
}

/// What the program printed for one input: per (type, op) the flags of the three builds and
/// whether their results agree.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Observed {
    plain: u8,
    strict: u8,
    unchecked: u8,
    same_result: bool,
}

fn parse_line(line: &str) -> (u32, Vec<Observed>) {
    let mut parts = line.split(' ');
    let id = parts.next().unwrap().parse().unwrap();
    let obs = parts
        .map(|p| {
            let b = p.as_bytes();
            assert_eq!(b.len(), 4, "bad harness output {line}");
            let hex = |c: u8| (c as char).to_digit(16).unwrap() as u8;
            Observed {
                plain: hex(b[0]),
                strict: hex(b[1]),
                unchecked: hex(b[2]),
                same_result: b[3] == b'=',
            }
        })
        .collect();
    (id, obs)
}

/// Index of a (type, op) group in the harness output and of its functions' names.
fn group(function: &str) -> Option<(bool, usize)> {
    let (variant, rest) = function.split_once('_')?;
    let strict = match variant {
        "plain" => false,
        "strict" => true,
        _ => return None,
    };
    let (op, ty) = rest.split_once('_')?;
    let o = OPS.iter().position(|x| *x == op)?;
    let t = TYPES.iter().position(|x| x.name() == ty)?;
    Some((strict, t * OPS.len() + o))
}

fn kind_bit(k: ExceptionKind) -> u8 {
    1 << k as u8
}

struct Mismatch {
    id: usize,
    group: usize,
    what: String,
}

/// Runs one batch and returns the mismatches it found.
fn run_batch(exe: &Path, dir: &Path, first: usize, cases: &[Case]) -> (usize, Vec<Mismatch>) {
    let files: Vec<PathBuf> = cases
        .iter()
        .enumerate()
        .map(|(k, case)| {
            let id = first + k;
            let path = dir.join(format!("{id}"));
            std::fs::write(&path, input_bytes(id as u32, case)).unwrap();
            path
        })
        .collect();
    let out = Command::new(exe)
        .args(&files)
        .env("NUMFUZZ_ABORT", "0")
        .env("NUMFUZZ_REPORT", "json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for f in &files {
        std::fs::remove_file(f).unwrap();
    }

    // Reported kinds per input and group, plain and strict.
    let index: HashMap<String, usize> = files
        .iter()
        .enumerate()
        .map(|(k, f)| (f.display().to_string(), k))
        .collect();
    let groups = TYPES.len() * OPS.len();
    let mut reported = vec![[vec![0u8; groups], vec![0u8; groups]]; cases.len()];
    let mut done = 0;
    for event in testkit::events(&String::from_utf8_lossy(&out.stderr)) {
        match event {
            ReportEvent::Exception(r) => {
                let input = r.input.as_deref().expect("replayed file named in the report");
                let k = index[input];
                let (strict, g) = group(&r.site.function).unwrap_or_else(|| panic!("unexpected site {r:?}"));
                reported[k][strict as usize][g] |= kind_bit(r.kind);
            }
            ReportEvent::InputDone(s) => {
                assert_eq!(s.input.as_deref().map(|i| index[i]), Some(done), "inputs run in order");
                done += 1;
            }
            ReportEvent::Result(_)
            | ReportEvent::Taint(_)
            | ReportEvent::ErrorReported(_)
            | ReportEvent::StatusReturned(_)
            | ReportEvent::PrecisionLost(_) => {}
            ReportEvent::Crash(c) => panic!("the replay crashed: {c:?}"),
        }
    }
    assert_eq!(done, cases.len(), "one input_done per input");

    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), cases.len(), "one output line per input");
    let mut mismatches = Vec::new();
    let mut checked = 0;
    for (k, line) in lines.iter().enumerate() {
        let (id, obs) = parse_line(line);
        assert_eq!(id as usize, first + k);
        assert_eq!(obs.len(), groups);
        for (g, o) in obs.iter().enumerate() {
            checked += 1;
            let plain = reported[k][0][g];
            let strict = reported[k][1][g];
            let mut what = Vec::new();
            if o.plain != plain {
                what.push(format!(
                    "plain build: program saw {:#x}, checker said {plain:#x}",
                    o.plain
                ));
            }
            if o.strict != strict {
                what.push(format!(
                    "strict build: program saw {:#x}, checker said {strict:#x}",
                    o.strict
                ));
            }
            if o.plain != o.unchecked || o.strict != o.unchecked {
                what.push(format!(
                    "flags differ from the unchecked build: {:#x}/{:#x} vs {:#x}",
                    o.plain, o.strict, o.unchecked
                ));
            }
            if !o.same_result {
                what.push("results differ from the unchecked build".into());
            }
            if !what.is_empty() {
                mismatches.push(Mismatch {
                    id: first + k,
                    group: g,
                    what: what.join("; "),
                });
            }
        }
    }
    (checked, mismatches)
}

fn describe(case: &Case, m: &Mismatch) -> String {
    let ty = TYPES[m.group / OPS.len()];
    let op = OPS[m.group % OPS.len()];
    let (a, b) = case.pairs[m.group / OPS.len()];
    format!(
        "input {}: {op} {ty} ({} [{}], {} [{}]) rounding mode #{}: {}",
        m.id,
        a,
        a.to_hex(),
        b,
        b.to_hex(),
        case.rounding,
        m.what
    )
}

#[test]
fn checker_kinds_equal_the_fpu_flags_and_leave_them_untouched() {
    let exe = harness();
    let cases = cases(0x6e75_6d66_757a_7a01, INPUTS);
    let dir = testkit::TempDir::new().unwrap();
    // Two target processes at a time (reports of f80 values are slow to format).
    let batches: Vec<(usize, &[Case])> = cases.chunks(BATCH).enumerate().collect();
    let results: Vec<(usize, Vec<Mismatch>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = batches
            .chunks(batches.len().div_ceil(2))
            .map(|mine| {
                let dir = dir.path();
                scope.spawn(move || {
                    mine.iter()
                        .map(|(b, chunk)| run_batch(exe, dir, b * BATCH, chunk))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    let checked: usize = results.iter().map(|(n, _)| n).sum();
    let mismatches: Vec<Mismatch> = results.into_iter().flat_map(|(_, m)| m).collect();
    assert_eq!(checked, INPUTS * TYPES.len() * OPS.len());
    let shown: Vec<String> = mismatches.iter().take(30).map(|m| describe(&cases[m.id], m)).collect();
    assert!(
        mismatches.is_empty(),
        "{} of {checked} operations disagree, e.g.:\n{}",
        mismatches.len(),
        shown.join("\n")
    );
}

#[test]
fn operand_generator_reaches_every_kind_and_rounding_mode() {
    // Guards the property test against a generator that never exercises a kind: count how
    // often each kind occurs in the unchecked build for a small sample.
    let exe = harness();
    let cases = cases(7, 4_000);
    let dir = testkit::TempDir::new().unwrap();
    let files: Vec<PathBuf> = cases
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let p = dir.path().join(format!("{k}"));
            std::fs::write(&p, input_bytes(k as u32, c)).unwrap();
            p
        })
        .collect();
    let out = Command::new(exe)
        .args(&files)
        .env("NUMFUZZ_ABORT", "0")
        .env("NUMFUZZ_REPORT", "json")
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Per type and kind: how many operations raised it.
    let mut counts = [[0usize; 4]; 3];
    for line in stdout.lines() {
        let (_, obs) = parse_line(line);
        for (g, o) in obs.iter().enumerate() {
            for k in ExceptionKind::ALL {
                if o.unchecked & kind_bit(k) != 0 {
                    counts[g / OPS.len()][k as usize] += 1;
                }
            }
        }
    }
    for (t, ty) in TYPES.iter().enumerate() {
        for k in ExceptionKind::ALL {
            assert!(
                counts[t][k as usize] >= 50,
                "{ty} {k}: only {} of 16000",
                counts[t][k as usize]
            );
        }
    }
    let directed = cases.iter().filter(|c| c.rounding != 0).count();
    assert!(
        (400..=1200).contains(&directed),
        "{directed} inputs under directed rounding"
    );
}
