#!/usr/bin/env bash
# Overhead of numfuzz's checkers: builds a few floating-point kernels twice with numfuzz-cc,
# edges only (NUMFUZZ_CC_NO_CHECKS=1) and fully instrumented, times each kernel over the same
# varied inputs and prints the time per call and the ratio checked / edges-only per kernel and
# overall (geometric mean).
#
#   scripts/bench-overhead.sh [CALLS]        (default 2000000 calls per kernel)
#
# Needs the release tools (scripts/build.sh). Uses -O2, as a campaign's target would.
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
  '' | *[!0-9]*)
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
EOF

cat >"$work/bench.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double horner(double), softplus_gauss(double), dot(double), newton(double);
static const struct { const char *name; double (*fn)(double); } kernels[] = {
    {"horner", horner}, {"softplus_gauss", softplus_gauss}, {"dot", dot}, {"newton", newton}};

volatile double sink;

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: bench KERNEL CALLS\n");
    return 2;
  }
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
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < calls; i++)
    acc += fn(in[i & 1023]);
  clock_gettime(CLOCK_MONOTONIC, &t1);
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

printf '%-16s %14s %14s %8s\n' kernel "edges ns/call" "checked ns/call" ratio
logsum=0
n=0
for k in horner softplus_gauss dot newton; do
  e=$(best "$work/edges" "$k" "$calls")
  c=$(NUMFUZZ_ABORT=0 best "$work/checked" "$k" "$calls")
  ratio=$(awk -v c="$c" -v e="$e" 'BEGIN { printf "%.2f", c / e }')
  printf '%-16s %14s %14s %7sx\n' "$k" "$e" "$c" "$ratio"
  logsum=$(awk -v s="$logsum" -v r="$ratio" 'BEGIN { printf "%.6f", s + log(r) }')
  n=$((n + 1))
done
overall=$(awk -v s="$logsum" -v n="$n" 'BEGIN { printf "%.2f", exp(s / n) }')
echo "overall (geometric mean): ${overall}x checked / edges-only  ($calls calls per kernel, -O2)"
