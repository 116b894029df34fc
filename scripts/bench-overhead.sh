#!/usr/bin/env bash
# Overhead of numfuzz's checkers: builds a few floating-point kernels twice with numfuzz-cc,
# edges only (NUMFUZZ_CC_NO_CHECKS=1) and fully instrumented, times each kernel over the same
# varied inputs and prints the time per call and the ratio to edges-only per kernel and overall
# (geometric mean), for the two kinds of run (runtime/src/precise.rs):
#   fast     the fast copies, as most runs of a campaign execute (no checks: the FPU's sticky
#            flags are read once per run, and only a run that raised one is re-run precisely);
#            the flag read is a fixed cost per run, printed on its own line
#   precise  every check and ErrBits measure, as the runs whose distances a campaign wants and
#            every re-run execute
#
#   scripts/bench-overhead.sh [CALLS]        (default 2000000)
#
# The kernels, each a `double f(double)` run on 1024 arguments in [0.25, 2.25):
#   horner          degree-10 polynomial by Horner's rule (straight-line double + and *)
#   softplus_gauss  exp, log1p and a division (libm calls next to arithmetic)
#   dot             a 32-term dot product of values built from the argument (a strict
#                   reduction: not vectorised even edges-only, but unrolled by 2)
#   newton          Newton iterations for 1/sqrt, then a rational correction (divisions)
#   kahan_ld        compensated (Kahan) sum of 24 terms 1/(x+i) in long double (x86_fp80)
#   saxpy           y = a*x + y over 256 floats in static arrays filled from the argument;
#                   the edges-only build vectorises both loops (width 4, interleaved 2)
#   libm_mix        8 terms pow(x, k+1/4) * exp(-k x) / log(k+1+x) (libm-heavy)
#   hyperg_1f1      Kummer's 1F1(a; b; x) power series with GSL's convergence test
#                   `if (fabs(term) < eps * fabs(sum)) break;` (branchy, data-dependent trip count)
#   bessel_j1       J_1(x) by Miller's backward recurrence from n = 30, normalised by
#                   J_0 + 2 sum J_2k = 1 (a three-term recurrence as in GSL's Bessel functions)
# None of them raises an exception on these arguments (the script checks that the checked build
# reports nothing), so the figures are the cost of the checks on the path a campaign's inputs
# mostly take. The light kernels run CALLS calls, the heavier ones CALLS/DIV (DIV listed with
# each kernel below), so that a run stays within a few seconds; the time is per call.
#
# Needs the release tools (scripts/build.sh), or NUMFUZZ_BIN_DIR naming a directory with
# numfuzz-cc and libnumfuzz_runtime.a. Uses -O2, as a campaign's target would.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${NUMFUZZ_BIN_DIR:-${CARGO_TARGET_DIR:-target}/release}"
cc="$bin/numfuzz-cc"
if [ ! -x "$cc" ]; then
  echo "bench-overhead.sh: $cc is missing; run scripts/build.sh first" >&2
  exit 1
fi
calls="${1:-2000000}"
case "$calls" in
  '' | *[!0-9]* | 0*)
    echo "bench-overhead.sh: CALLS must be a positive integer, got \`$calls\`" >&2
    exit 2
    ;;
esac

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cat >"$work/kernels.c" <<'EOF'
/* Self-contained floating-point kernels of the kinds numfuzz targets contain. */
#include <math.h>

/* Degree-10 polynomial by Horner's rule. */
double horner(double x) {
  static const double c[11] = {1.0, -0.5, 0.25, -0.125, 0.0625, -0.03125,
                               0.015625, -0.0078125, 0.00390625, -0.001953125, 0.0009765625};
  double r = c[10];
  for (int i = 9; i >= 0; i--)
    r = r * x + c[i];
  return r;
}

/* A log-sum-exp / softplus style function built on exp and log. */
double softplus_gauss(double x) {
  double g = exp(-0.5 * x * x) / 2.5066282746310002;
  return log1p(exp(x)) + g * x;
}

/* A dot product of 32 products of the argument with itself shifted. */
double dot(double x) {
  double s = 0.0;
  for (int i = 0; i < 32; i++) {
    double a = x + i * 0.125, b = x - i * 0.0625;
    s += a * b;
  }
  return s;
}

/* Newton iterations for the reciprocal square root, then a rational correction. */
double newton(double x) {
  double y = 1.0 / x;
  for (int i = 0; i < 6; i++)
    y = y * (1.5 - 0.5 * x * y * y);
  return (y * x + 1.0) / (y + 2.0);
}

/* Compensated (Kahan) sum of 1/(x+i), i < 24, in long double (x87, x86_fp80). */
double kahan_ld(double x) {
  long double s = 0.0L, c = 0.0L, lx = x;
  for (int i = 0; i < 24; i++) {
    long double y = 1.0L / (lx + i) - c;
    long double t = s + y;
    c = (t - s) - y;
    s = t;
  }
  return (double)s;
}

/* saxpy over 256 floats in static arrays filled from the argument: clang -O2 vectorises both
   loops edges-only (-Rpass=loop-vectorize: width 4, interleaved 2). The checked build of
   11eca21 does not: the inlined check's branch and its slow-path call are control flow and a
   call in the loop body ("control flow cannot be substituted for a select", "call
   instruction cannot be vectorized"), so it runs 256 scalar iterations per loop. */
static float sx[256], sy[256];
double saxpy(double x) {
  float a = (float)x;
  for (int i = 0; i < 256; i++) {
    sx[i] = a + (float)i * 0.0078125f;
    sy[i] = a - (float)i * 0.00390625f;
  }
  for (int i = 0; i < 256; i++)
    sy[i] = a * sx[i] + sy[i];
  return (double)sy[17] + (double)sy[255];
}

/* libm-heavy: pow, exp and log in every term (exponents the optimizer cannot turn into
   sqrt or products). */
double libm_mix(double x) {
  double s = 0.0;
  for (int k = 1; k <= 8; k++)
    s += pow(x, k + 0.25) * exp(-k * x) / log(k + 1.0 + x);
  return s;
}

/* Kummer's 1F1(a; b; x) by its power series, stopping on GSL's test (hyperg_1F1_series). */
double hyperg_1f1(double x) {
  double a = 0.75, b = 1.5 + 0.5 * x, sum = 1.0, term = 1.0;
  for (int n = 0; n < 500; n++) {
    term *= (a + n) / (b + n) * x / (n + 1.0);
    sum += term;
    if (fabs(term) < 1e-16 * fabs(sum))
      break;
  }
  return sum;
}

/* J_1(x) by Miller's backward recurrence J_{n-1} = (2n/x) J_n - J_{n+1} from n = 30,
   normalised by J_0 + 2 (J_2 + J_4 + ...) = 1. */
double bessel_j1(double x) {
  double jp = 0.0, j = 1.0, norm = 0.0, j1 = 0.0;
  for (int n = 30; n > 0; n--) {
    double jm = 2.0 * n / x * j - jp;
    jp = j;
    j = jm;
    if (n - 1 == 1)
      j1 = j;
    if (((n - 1) & 1) == 0)
      norm += (n - 1 == 0 ? 1.0 : 2.0) * j;
  }
  return j1 / norm;
}
EOF

cat >"$work/bench.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double horner(double), softplus_gauss(double), dot(double), newton(double), kahan_ld(double), saxpy(double),
    libm_mix(double), hyperg_1f1(double), bessel_j1(double);
static const struct { const char *name; double (*fn)(double); } kernels[] = {
    {"horner", horner},       {"softplus_gauss", softplus_gauss}, {"dot", dot},
    {"newton", newton},       {"kahan_ld", kahan_ld},             {"saxpy", saxpy},
    {"libm_mix", libm_mix},   {"hyperg_1f1", hyperg_1f1},         {"bessel_j1", bessel_j1}};

volatile double sink;
/* The runtime's fast-run switch and flag watch (runtime/src/precise.rs, shim.c); they exist in
   both builds, and the edges-only one has no split functions to switch. */
extern unsigned char __numfuzz_precise;
void numfuzz_clear_watched_flags(void);
int numfuzz_watched_flags_raised(void);

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: bench KERNEL CALLS fast|precise|flags\n");
    return 2;
  }
  int fast = strcmp(argv[3], "fast") == 0, flags = strcmp(argv[3], "flags") == 0;
  if (fast)
    __numfuzz_precise = 0;
  double (*fn)(double) = 0;
  for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++)
    if (strcmp(argv[1], kernels[k].name) == 0)
      fn = kernels[k].fn;
  if (!fn) {
    fprintf(stderr, "bench: unknown kernel %s\n", argv[1]);
    return 2;
  }
  long calls = atol(argv[2]);
  /* Varied, exception-free arguments in [0.25, 2.25). */
  double in[1024];
  unsigned s = 12345;
  for (int i = 0; i < 1024; i++) {
    s = s * 1103515245u + 12345u;
    in[i] = 0.25 + (s >> 8) / 8388608.0;
  }
  struct timespec t0, t1;
  double acc = 0;
  numfuzz_clear_watched_flags();
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (flags) {
    /* What a fast run adds once per run: clear the watched flags before, read them after. */
    for (long i = 0; i < calls; i++) {
      numfuzz_clear_watched_flags();
      acc += numfuzz_watched_flags_raised();
    }
  } else {
    for (long i = 0; i < calls; i++)
      acc += fn(in[i & 1023]);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (fast && numfuzz_watched_flags_raised()) {
    fprintf(stderr, "bench: %s raised an exception flag in a fast run\n", argv[1]);
    return 3;
  }
  sink = acc;
  double ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / calls;
  printf("%.3f\n", ns);
  return 0;
}
EOF

NUMFUZZ_CC_NO_CHECKS=1 "$cc" -O2 "$work/kernels.c" "$work/bench.c" -o "$work/edges" -lm
"$cc" -O2 "$work/kernels.c" "$work/bench.c" -o "$work/checked" -lm

# The best of three runs each, to damp noise from other processes.
best() {
  local min=""
  for _ in 1 2 3; do
    local t
    t=$("$@")
    if [ -z "$min" ] || awk -v a="$t" -v b="$min" 'BEGIN { exit !(a < b) }'; then
      min="$t"
    fi
  done
  echo "$min"
}

# Each kernel with the divisor of CALLS it runs (the slow ones fewer calls).
kernels=(horner:1 softplus_gauss:1 dot:1 newton:1 kahan_ld:8 saxpy:8 libm_mix:4 hyperg_1f1:2 bessel_j1:2)

# The checked build must report nothing on the benchmark's inputs (1024 calls see them all):
# an exception takes the runtime's slow path and would be measured instead of the checks.
for kd in "${kernels[@]}"; do
  k="${kd%%:*}"
  NUMFUZZ_ABORT=0 "$work/checked" "$k" 1024 precise >/dev/null 2>"$work/reports"
  if [ -s "$work/reports" ]; then
    echo "bench-overhead.sh: kernel $k raises floating-point exceptions on the benchmark's inputs:" >&2
    cat "$work/reports" >&2
    exit 1
  fi
done

ratio() { awk -v c="$1" -v e="$2" 'BEGIN { printf "%.2f", c / e }'; }
printf '%-16s %12s %12s %8s %12s %8s\n' kernel "edges ns" "fast ns" ratio "precise ns" ratio
fast_logsum=0
precise_logsum=0
n=0
for kd in "${kernels[@]}"; do
  k="${kd%%:*}"
  kcalls=$((calls / ${kd#*:}))
  [ "$kcalls" -gt 0 ] || kcalls=1
  e=$(best "$work/edges" "$k" "$kcalls" precise)
  f=$(best "$work/checked" "$k" "$kcalls" fast)
  p=$(NUMFUZZ_ABORT=0 best "$work/checked" "$k" "$((kcalls / 4 + 1))" precise)
  fr=$(ratio "$f" "$e")
  pr=$(ratio "$p" "$e")
  printf '%-16s %12s %12s %7sx %12s %7sx\n' "$k" "$e" "$f" "$fr" "$p" "$pr"
  fast_logsum=$(awk -v s="$fast_logsum" -v r="$fr" 'BEGIN { printf "%.6f", s + log(r) }')
  precise_logsum=$(awk -v s="$precise_logsum" -v r="$pr" 'BEGIN { printf "%.6f", s + log(r) }')
  n=$((n + 1))
done
geomean() { awk -v s="$1" -v n="$n" 'BEGIN { printf "%.2f", exp(s / n) }'; }
echo "overall (geometric mean of $n kernels, CALLS=$calls, -O2): fast runs $(geomean "$fast_logsum")x, precise runs $(geomean "$precise_logsum")x edges-only"
echo "per run, fast runs also clear and read the FPU's flags: $(best "$work/checked" horner "$calls" flags) ns (once per execution, not per operation)"
