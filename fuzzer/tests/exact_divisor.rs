//! GSL airy_Ai's DivByZero at airy.c:274 (the NumFuzz paper's Table IV) in the shape that lost
//! it: a library whose every call returns a status, built with its error hook named
//! (NUMFUZZ_CC_ERROR_HOOK), so that numfuzz-cc tests `__numfuzz_error_pending` after each of
//! those calls; and a division by a fitted value that is exactly 0 at one double, in one mode
//! only. The other modes have a root too, where the value comes within 2^-70 of 0 and never
//! reaches it, and they are the closer ones where the search starts (the plateau of a huge
//! |x|). Only the local-search stage reaches such a divisor: it must not spend its descents on
//! the status flags, and must try the other modes where a descent ends on the wrong root.

use numfuzz_abi::ExceptionKind;
use testkit::campaign::{found, fuzz, one_at_a_time};
use testkit::compile;

/// Seconds of the campaign. The division was reached in 0.4 to 6.1 s in 20 of 20 runs of 20 s
/// (one core, the other idle). Before a descent went on from the closest input of the last one
/// on its target and was cut only at twice its time, 11 of 15 such runs reached it (and a CI
/// run missed it): two in three descents were cut with all they learned, and one that had come
/// within 2.5e-7 of the one double left nothing for the next. The engine that lost airy.c:274
/// (every flag an equality to solve first, a descent kept on the mode it drifted to, a target
/// left alone after two descents that met only the plateau) reached it in 0 of 2 runs of 10 s,
/// and after 8.5 s in a run of 20 s.
const BUDGET_SECS: u32 = 20;

/// The library's status helpers and its error hook, in a file of their own so that every call
/// of them stays a call (and gets its flag test).
const STATUS: &str = r#"#include <math.h>
void fit_error(const char *reason, int code);
void fit_error(const char *reason, int code) {
  (void)reason;
  (void)code;
}
int fit_finite(double v) {
  if (isfinite(v))
    return 0;
  fit_error("not finite", 1);
  return 1;
}
int fit_unit(double z) {
  if (z >= -1.0 && z <= 1.0)
    return 0;
  fit_error("outside [-1, 1]", 2);
  return 2;
}
"#;

/// The fit: z of x as airy_mod_phase computes its Chebyshev argument (z in (0.5, 1) below
/// x = -2, in [-1, 1] up to -1), and a value that is 0 where z is exactly 0.07099196720249726
/// in mode 0 (x = -1.2345678901234567: about 47 ulps of z per ulp of x, so that one double)
/// and never 0 in modes 1 and 2, whose roots (z = 0.7461303371433379: x near -1.618 and
/// -2.507) are the closer ones at z = 1, where every |x| above about 2^18 lands. Each CHECKS
/// is eight calls, each with its flag test: 75 in all.
const FIT: &str = r#"#include <math.h>
int fit_finite(double v);
int fit_unit(double z);
#define CHECKS(v) (fit_finite(v) | fit_unit((v) * 0.25) | fit_finite((v) * 0.5) | fit_unit((v) * 0.125) | fit_finite((v) - 1.0) | fit_unit((v) * 0.0625) | fit_finite((v) + 1.0) | fit_unit((v) * 0.03125))
struct fit { double val, err; };
int fit_eval(double z, unsigned mode, struct fit *f) {
  int s = CHECKS(z) | CHECKS(z * z) | CHECKS(z + 1.0);
  if (mode == 0)
    f->val = (z - 0.07099196720249726) * (0.75 + 0.125 * z);
  else
    f->val = (z - 0.7461303371433379) * (0.75 + 0.125 * z) + 0x1p-70;
  f->err = 1e-16 * fabs(z) + 1e-17;
  return s | CHECKS(f->val) | CHECKS(f->err);
}
int modulus_e(double x, unsigned mode, struct fit *out) {
  struct fit f;
  double z;
  int s = CHECKS(x) | CHECKS(x * x) | CHECKS(x * x * x);
  if (x < -2.0)
    z = 4.0 / (x * x * x) + 1.0;
  else if (x <= -1.0)
    z = (16.0 / (x * x * x) + 9.0) / 7.0;
  else
    return s | fit_unit(2.0);
  s |= fit_eval(z, mode, &f);
  out->val = 0.3125 + f.val;
  out->err = fabs(out->val) * (2.2e-16 + fabs(f.err / f.val));
  return s | CHECKS(out->val);
}
"#;

/// Line of the division by the fitted value in `FIT`.
const DIVISION_LINE: u32 = 27;

/// GSL's harness shape: a double and a mode of three values, the status handled.
const HARNESS: &str = r#"#include <numfuzz.h>
struct fit { double val, err; };
int modulus_e(double x, unsigned mode, struct fit *out);
NUMFUZZ_SIGNATURE("f64,u32[0,2]");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct fit r;
  if (modulus_e(nf_f64(data, size, 0), nf_u32(data, size, 1), &r) != 0)
    NUMFUZZ_HANDLED();
  NUMFUZZ_RESULT(r.val);
  return 0;
}
"#;

#[test]
fn an_exact_divisor_of_one_mode_behind_status_flags_is_reached() {
    let _turn = one_at_a_time();
    let sources = [("status.c", STATUS), ("fit.c", FIT), ("h.c", HARNESS)];
    let built = compile(
        "fit",
        &sources,
        &["-O1", "-g"],
        &[("NUMFUZZ_CC_ERROR_HOOK", "fit_error")],
    );
    let instance = fuzz(&built.exe, &built.path("out"), BUDGET_SECS, &[]);
    let stats = instance.stats().expect("fuzzer_stats");
    assert!(
        found(&instance, ExceptionKind::DivByZero, None, DIVISION_LINE),
        "no DivByZero at fit.c:{DIVISION_LINE} in {BUDGET_SECS} s: {:?}\n{}",
        instance.exceptions(),
        stats.render()
    );
}
