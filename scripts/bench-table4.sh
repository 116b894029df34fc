#!/usr/bin/env bash
# The NumFuzz paper's Table IV: RUNS separate `scripts/bench-gsl.sh` runs of the functions that
# reach its 7 exceptions (the T4-* rows of targets/gsl/known-bugs.tsv), then the time to first
# find each exception in every run and its median (targets/gsl/table4.py). Each run's results
# directory is kept; the table also goes to results/table4-<timestamp>.md.
#
#   scripts/bench-table4.sh [--runs N] [SECONDS] [--jobs N] [--specfunc-only] [-- NUMFUZZ RUN ARGS...]
#
#   --runs N   runs (default 3)
#   --specfunc-only  the special functions' own build (bench-gsl.sh --specfunc-only: minutes to
#              relink after a runtime change, not the whole library's tens of minutes)
#   SECONDS    campaign length per function (default 60)
#   --jobs N   campaigns in parallel (default 2)
#   -- ARGS    extra `numfuzz run` arguments (e.g. `-- --no-local-search` for the ablation)
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3 seconds=60 jobs=2 run_args=() gsl_args=()
while (($#)); do
  case "$1" in
    --runs) runs="${2:-}"; shift ;;
    --jobs) jobs="${2:-}"; shift ;;
    --specfunc-only) gsl_args+=(--specfunc-only) ;;
    --) shift; run_args=("$@"); break ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench-table4.sh: unknown option \`$1\` (see --help)" >&2; exit 2 ;;
    *) seconds="$1" ;;
  esac
  shift
done
case "$runs" in '' | *[!0-9]* | 0)
  echo "bench-table4.sh: --runs needs a positive number, got \`$runs\`" >&2
  exit 2
  ;;
esac

# The public functions that reach the T4 rows' sites, from the table itself.
functions=$(awk -F'\t' '$1 ~ /^T4-/ { print $5 }' targets/gsl/known-bugs.tsv | tr ',' '\n' | sort -u | paste -sd, -)
[ -n "$functions" ] || { echo "bench-table4.sh: no T4-* rows in targets/gsl/known-bugs.tsv" >&2; exit 1; }
echo "bench-table4: $runs runs of $seconds s per function over $functions"

dirs=()
for ((k = 1; k <= runs; k++)); do
  log=$(mktemp)
  scripts/bench-gsl.sh "$seconds" --jobs "$jobs" --functions "$functions" "${gsl_args[@]}" -- "${run_args[@]}" | tee "$log" |
    grep -E '^bench-gsl: results in|^known bugs' || true
  dir=$(sed -n 's/^bench-gsl: results in //p' "$log" | head -n1)
  rm -f "$log"
  [ -d "$dir" ] || { echo "bench-table4.sh: run $k did not report its results directory" >&2; exit 1; }
  dirs+=("$dir")
  # A new results directory per run: bench-gsl names them by the second.
  sleep 1
done

out="results/table4-$(date +%Y%m%d-%H%M%S).md"
{
  echo "Table IV, $runs runs of $seconds s per function, numfuzz run args: ${run_args[*]:-(none)}"
  echo
  python3 targets/gsl/table4.py "${dirs[@]}"
  echo
  printf 'runs: %s\n' "${dirs[@]}"
} | tee "$out"
