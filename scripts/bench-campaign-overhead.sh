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
# so neither replaces the other. Two figures per harness:
#   campaign     exec/s of the two campaigns (fuzzer_stats: execs_done / run_time), and their
#                ratio. They do not run the same inputs: the checked one is guided by exceptions
#                and distances too, and a special function's cost depends on its arguments by
#                orders of magnitude (legendre_Pl's recurrence runs l steps), so the edges each
#                found are printed beside, the share of the checked campaign's mutational
#                turns that ran precisely (`precise_turns`) and of its executions that ran
#                precisely (`precise_runs`: a precise turn, or a flag in a fast run whose edge
#                path, flags and special-result sites had not run precisely before).
#   same inputs  the checked campaign's queue replayed in one process per build, the list
#                repeated REPS times (as many as make the edges-only replay last about a
#                second, at most 20,000 runs; the same REPS for every build): each input comes
#                back as a campaign's mutants come back to the paths they know, and the first
#                pass's precise re-runs are shared among its returns. Time per input on the
#                edges-only build; on the checked build as a campaign's fast runs go
#                (`fast`, NUMFUZZ_PRECISE=campaign: precise again only when an exception shows
#                and its key, as above, has not re-run in the process); without the skip
#                (`rerun`, NUMFUZZ_PRECISE=0: every fast run that raised a flag runs again
#                precisely); and precisely (`precise`, every check).
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

# Runs $1 on the input files named after it (in $work/inputs), reporting and going on past
# every exception; a run that could not start stops the benchmark rather than timing nothing.
run_inputs() {
  local exe=$1 status=0
  shift
  (cd "$work/inputs" && NUMFUZZ_ABORT=0 NUMFUZZ_REPORT=json "$exe" "$@" >/dev/null 2>&1) || status=$?
  if ((status >= 126)); then
    echo "bench-campaign-overhead.sh: $exe did not run on $# inputs (status $status)" >&2
    exit 1
  fi
}

# How many times to replay the files listed in $2 with $1 so that the replay lasts about a
# second (at most 20,000 runs): sized on the edges-only build, and used for every build, so the
# three replays run the same inputs the same number of times.
replay_reps() {
  local exe=$1 list=$2 files
  mapfile -t files <"$list"
  local n=${#files[@]} t0 t1
  ((n > 0)) || {
    echo 1
    return
  }
  t0=$(date +%s%N)
  run_inputs "$exe" "${files[@]}"
  t1=$(date +%s%N)
  local per=$(((t1 - t0) / n + 1)) reps
  reps=$((1000000000 / (per * n) + 1))
  ((reps * n > 20000)) && reps=$((20000 / n + 1))
  echo "$reps"
}

# Nanoseconds per input of replaying the files listed in $2 with $1, $3 times over, in one
# process, under the environment given after them.
replay_ns() {
  local exe=$1 list=$2 reps=$3
  shift 3
  local files
  mapfile -t files <"$list"
  local n=${#files[@]}
  ((n > 0)) || {
    echo 0
    return
  }
  local args=() t0 t1
  for ((k = 0; k < reps; k++)); do args+=("${files[@]}"); done
  t0=$(date +%s%N)
  (
    [ $# -eq 0 ] || export "$@"
    run_inputs "$exe" "${args[@]}"
  )
  t1=$(date +%s%N)
  echo $(((t1 - t0) / (reps * n)))
}

printf '%-26s | %22s %22s %6s %14s | %10s %8s %8s %8s\n' function "campaign: edges exec/s" "checked exec/s" ratio "precise: turns/runs" \
  "inputs: ns" fast rerun precise
campaign_log=0
fast_log=0
rerun_log=0
precise_log=0
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
  stats="$work/out/default/fuzzer_stats"
  share=$(awk -F' *: *' '$1 == "fast_turns" { fa = $2 } $1 == "precise_turns" { p = $2 }
    $1 == "precise_runs" { r = $2 } $1 == "execs_done" { e = $2 }
    END { printf "%.0f%%/%.0f%%", (fa + p > 0) ? 100 * p / (fa + p) : 0, (e > 0) ? 100 * r / e : 0 }' "$stats")
  # Short names, so that 20,000 of them fit on one command line (the queue's own names are
  # about 40 bytes each, and a longer list than the kernel takes would not run at all).
  rm -rf "$work/inputs"
  mkdir -p "$work/inputs"
  k=0
  while read -r q; do
    cp "$q" "$work/inputs/$k"
    k=$((k + 1))
  done < <(find "$work/out/default/queue" -type f -name 'id:*' | sort)
  (cd "$work/inputs" && ls | sort -n) >"$work/inputs.txt"
  reps=$(replay_reps "$edges_dir/$f" "$work/inputs.txt")
  edges_ns=$(replay_ns "$edges_dir/$f" "$work/inputs.txt" "$reps")
  fast_ns=$(replay_ns "$checked_dir/$f" "$work/inputs.txt" "$reps" NUMFUZZ_PRECISE=campaign)
  rerun_ns=$(replay_ns "$checked_dir/$f" "$work/inputs.txt" "$reps" NUMFUZZ_PRECISE=0)
  precise_ns=$(replay_ns "$checked_dir/$f" "$work/inputs.txt" "$reps")
  ratio=$(awk -v c="$c" -v e="$e" 'BEGIN { printf "%.2f", (c > 0) ? e / c : 0 }')
  fast=$(awk -v a="$fast_ns" -v b="$edges_ns" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
  rerun=$(awk -v a="$rerun_ns" -v b="$edges_ns" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
  precise=$(awk -v a="$precise_ns" -v b="$edges_ns" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
  printf '%-26s | %22s %22s %5sx %14s | %10s %7sx %7sx %7sx\n' "$f" "$e ($eg edges)" "$c ($cg edges)" "$ratio" "$share" \
    "$edges_ns" "$fast" "$rerun" "$precise"
  campaign_log=$(awk -v s="$campaign_log" -v r="$ratio" 'BEGIN { printf "%.6f", s + log(r) }')
  fast_log=$(awk -v s="$fast_log" -v r="$fast" 'BEGIN { printf "%.6f", s + log(r) }')
  rerun_log=$(awk -v s="$rerun_log" -v r="$rerun" 'BEGIN { printf "%.6f", s + log(r) }')
  precise_log=$(awk -v s="$precise_log" -v r="$precise" 'BEGIN { printf "%.6f", s + log(r) }')
  n=$((n + 1))
done
gm() { awk -v s="$1" -v n="$n" 'BEGIN { printf "%.2f", exp(s / n) }'; }
echo "geometric means of $n harnesses ($seconds s per campaign, 1 core): campaign exec/s $(gm "$campaign_log")x slower checked than edges-only;"
echo "  the same inputs: fast runs $(gm "$fast_log")x (re-runs skipped as a campaign skips them), $(gm "$rerun_log")x (every flagged run re-run),"
echo "  precise runs $(gm "$precise_log")x the edges-only time"
