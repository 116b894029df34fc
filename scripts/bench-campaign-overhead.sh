#!/usr/bin/env bash
# The checkers' cost where it matters: `numfuzz run` exec/s of GSL harnesses with heavy
# numerics, built fully checked and edges-only (NUMFUZZ_CC_NO_CHECKS=1, library included),
# measured in one run, as ratios.
#
#   scripts/bench-campaign-overhead.sh [SECONDS] [FUNCTIONS]
#       SECONDS    per campaign (default 20); each harness runs one in-process campaign per build
#       FUNCTIONS  comma-separated gsl_sf_*_e names (default: the five below)
#
# Both builds are targets/gsl/build.sh --specfunc-only builds: the checked one in the usual
# directory, the edges-only one in results/bench-campaign-overhead/gsl-edges (NUMFUZZ_GSL_BUILD),
# so neither replaces the other. exec/s is the campaign's whole-run average (fuzzer_stats:
# execs_done / run_time); the slowdown is edges-only exec/s / checked exec/s. The two campaigns
# do not run the same inputs: the checked one is guided by exceptions and ErrBits too, and a
# special function's cost depends on its arguments by orders of magnitude (legendre_Pl's
# recurrence runs l steps), so the edges column (edges found) is printed beside each to show
# how far the paths differ. Read the per-call cost of the checks from bench-overhead.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds="${1:-20}"
functions="${2:-gsl_sf_hyperg_2F1_e,gsl_sf_bessel_Jnu_e,gsl_sf_gamma_inc_e,gsl_sf_zeta_e,gsl_sf_legendre_Pl_e}"
case "$seconds" in
  '' | *[!0-9]* | 0*)
    echo "bench-campaign-overhead.sh: SECONDS must be a positive integer, got \`$seconds\`" >&2
    exit 2
    ;;
esac
numfuzz="${CARGO_TARGET_DIR:-$root/target}/release/numfuzz"
work="$root/results/bench-campaign-overhead"
mkdir -p "$work"

scripts/setup.sh >/dev/null
scripts/build.sh >/dev/null
echo "building the checked and the edges-only GSL harnesses ($functions)" >&2
targets/gsl/build.sh --specfunc-only --no-coverage --no-taint --functions "$functions" >"$work/build-checked.log" 2>&1
NUMFUZZ_CC_NO_CHECKS=1 NUMFUZZ_GSL_BUILD="$work/gsl-edges" \
  targets/gsl/build.sh --specfunc-only --no-coverage --no-taint --functions "$functions" >"$work/build-edges.log" 2>&1
checked_dir="${NUMFUZZ_GSL_BUILD:-$root/targets/gsl/build}/bin/specfunc"
edges_dir="$work/gsl-edges/bin/specfunc"

# "EXECS_PER_SEC EDGES_FOUND" of one campaign on $1.
campaign() {
  local out="$work/out"
  rm -rf "$out"
  "$numfuzz" run -o "$out" -V "$seconds" --no-tui -- "$1" >"$work/last-run.log" 2>&1
  awk -F' *: *' '$1 == "execs_done" { e = $2 } $1 == "run_time" { t = $2 } $1 == "edges_found" { g = $2 }
    END { printf "%.0f %d", (t > 0) ? e / t : 0, g }' "$out/default/fuzzer_stats"
}

printf '%-26s %20s %20s %9s\n' function "edges-only exec/s" "checked exec/s" slowdown
logsum=0
n=0
for f in ${functions//,/ }; do
  for d in "$checked_dir" "$edges_dir"; do
    if [ ! -x "$d/$f" ]; then
      echo "bench-campaign-overhead.sh: $d/$f was not built (see $work/build-*.log)" >&2
      exit 1
    fi
  done
  read -r e eg <<<"$(campaign "$edges_dir/$f")"
  read -r c cg <<<"$(campaign "$checked_dir/$f")"
  ratio=$(awk -v c="$c" -v e="$e" 'BEGIN { printf "%.2f", (c > 0) ? e / c : 0 }')
  printf '%-26s %20s %20s %8sx\n' "$f" "$e ($eg edges)" "$c ($cg edges)" "$ratio"
  logsum=$(awk -v s="$logsum" -v r="$ratio" 'BEGIN { printf "%.6f", s + log(r) }')
  n=$((n + 1))
done
overall=$(awk -v s="$logsum" -v n="$n" 'BEGIN { printf "%.2f", exp(s / n) }')
echo "overall (geometric mean of $n harnesses): ${overall}x slower checked than edges-only  ($seconds s per campaign, 1 core)"
