#!/usr/bin/env bash
# The GSL exception benchmark: the harnesses `numfuzz harness` writes for GSL 2.7.1's special
# functions (targets/gsl/build.sh, conventions.toml), fuzzed and triaged by `numfuzz run-all`
# (consequences from the taint builds, references from the mpmath oracle targets/gsl/oracle.py,
# the bugs' inputs minimised); then bench_report.py merges the findings into unique (site, kind)
# pairs over all functions, and
# reports the bug list first, then bugs / escapes / wrong / absorbed / handled / input-borne
# beside the raw count and the NumFuzz paper's figures, then the known bugs of
# targets/gsl/known-bugs.tsv.
#
#   scripts/bench-gsl.sh [SECONDS_PER_FUNCTION] [--afl] [--budget] [--jobs N] [--functions f1,f2,... | --sample N[:SEED]]
#                        [-- NUMFUZZ RUN ARGS...]
#   scripts/bench-gsl.sh --report-only results/gsl-YYYYmmdd-HHMMSS   (re-triage, re-merge)
#   scripts/bench-gsl.sh --continue results/gsl-YYYYmmdd-HHMMSS      (finish an interrupted run)
#   scripts/bench-gsl.sh --compare RUN_A RUN_B   (two runs side by side over the functions both
#                         triaged, e.g. with and without `-- --no-local-search`; Markdown)
#
#   SECONDS_PER_FUNCTION  campaign length per function and tool (default 60)
#   --afl                 also run AFL++ at its best for the same time per function: Debian's
#                         afl-fuzz on the same harnesses built with afl-clang-fast (persistent
#                         mode, targets/afl/driver.c) with a CmpLog build beside (-c, -l 2AT),
#                         Overflow/DivByZero/Invalid trapped as crashes (the NumFuzz paper's
#                         baseline), then a second run with Underflow trapped too; the crashes
#                         of both are triaged by numfuzz triage on the numfuzz-cc build against
#                         the same oracle (tools `afl` and `afl-underflow` in the report, with
#                         exec/s, bugs and the bugs only one tool found); the report's first
#                         lines give the per-function floor (numfuzz's exec/s >= afl-fuzz's on
#                         every function, geometric mean >= 5x), the functions below it, and
#                         those where an AFL++ run counted more bugs than numfuzz
#   --budget              one budget of SECONDS_PER_FUNCTION x the functions for numfuzz (`run-all
#                         --budget`: rounds where findings still grow) instead of equal shares;
#                         compare with a run of equal shares with --compare
#   --jobs N              campaigns in parallel, each on one core (default 1)
#   --functions LIST      only these functions (comma-separated gsl_sf_*_e names)
#   --specfunc-only       build only what the special functions link outside the Mathieu family
#                         (targets/gsl/build.sh --specfunc-only: minutes, not tens of minutes)
#   --sample N[:SEED]     N public functions drawn with Python's random.Random(SEED) (default
#                         seed 1) from the sorted public harnesses outside the Mathieu family
#   -- ARGS...            extra `numfuzz run` arguments for every campaign, for ablations
#                         (e.g. `-- --no-local-search`); kept in config.json for --continue
#
# Results go to results/gsl-<timestamp>/: run-all/ (numfuzz run-all's output: campaigns/,
# triage/<function>/triage.json with minimized/, logs/, its own merged report), the same seen as
# campaigns/numfuzz and triage/numfuzz (links, beside campaigns/afl and triage/afl), logs/, the
# benchmark's report.md and report.json, and the numfuzz and harnesses used (numfuzz, harness/:
# the manifest and bin/, hard links into targets/gsl/build with each harness's .taint and
# .shadow builds beside it).
# 262 functions at 60 s take about 4.5 hours on one job (2.3 hours with --jobs 2; three
# times that with --afl).
set -euo pipefail

# The whole script is one function, parsed before it runs: editing this file while a
# benchmark of hours is running cannot change the running one.
main() {
cd "$(dirname "$0")/.."
root=$(pwd)
bin_dir="${NUMFUZZ_BIN_DIR:-${CARGO_TARGET_DIR:-$root/target}/release}"
case "$bin_dir" in /*) ;; *) bin_dir="$root/$bin_dir" ;; esac
gsl_build="${NUMFUZZ_GSL_BUILD:-$root/targets/gsl/build}"

seconds=60
afl=0
jobs=1
jobs_given=0
functions=""
sample=""
budget=0
specfunc_only=0
mode=run
results=""
run_args=()
while (($#)); do
  case "$1" in
    --afl) afl=1 ;;
    --budget) budget=1 ;;
    --specfunc-only) specfunc_only=1 ;;
    --)
      shift
      run_args=("$@")
      break
      ;;
    --jobs)
      jobs="${2:-}"
      jobs_given=1
      shift
      ;;
    --jobs=*)
      jobs="${1#*=}"
      jobs_given=1
      ;;
    --functions)
      functions="${2:-}"
      shift
      ;;
    --functions=*) functions="${1#*=}" ;;
    --sample)
      sample="${2:-}"
      shift
      ;;
    --sample=*) sample="${1#*=}" ;;
    --report-only | --continue)
      mode="${1#--}"
      results="${2:-}"
      [ -n "$results" ] || { echo "bench-gsl.sh: $1 needs the results directory of an earlier run" >&2; exit 2; }
      shift
      ;;
    --compare)
      [ $# -eq 3 ] || { echo "bench-gsl.sh: --compare needs two results directories (and nothing else)" >&2; exit 2; }
      exec python3 "$root/targets/gsl/bench_compare.py" "$2" "$3"
      ;;
    -h | --help)
      sed -n '2,/^set -euo/{/^set/!p}' "$0" | sed 's/^# \{0,1\}//'
      return 0
      ;;
    -*)
      echo "bench-gsl.sh: unknown option \`$1\` (see --help)" >&2
      exit 2
      ;;
    *)
      seconds="$1"
      ;;
  esac
  shift
done
case "$seconds" in '' | *[!0-9]* | 0)
  echo "bench-gsl.sh: SECONDS_PER_FUNCTION must be a positive number, got \`$seconds\`" >&2
  exit 2
  ;;
esac
case "$jobs" in '' | *[!0-9]* | 0)
  echo "bench-gsl.sh: --jobs needs a positive number, got \`$jobs\`" >&2
  exit 2
  ;;
esac

say() { echo "bench-gsl: $*"; }
die() {
  echo "bench-gsl.sh: error: $*" >&2
  exit 1
}

# --- configuration: a new run, or the one in an earlier results directory ---------------------

if [ "$mode" = run ]; then
  [ -x "$bin_dir/numfuzz" ] || die "$bin_dir/numfuzz is missing; run scripts/build.sh first"
  if [ -n "$sample" ]; then
    [ -z "$functions" ] || die "--sample and --functions exclude each other"
    [ -e "$gsl_build/harness/manifest.json" ] || targets/gsl/build.sh --no-coverage --functions gsl_sf_exp_e
    functions=$(python3 "$root/targets/gsl/bench_config.py" sample "$gsl_build/harness/manifest.json" \
      "$root/targets/gsl/internal-functions.tsv" "$sample") || exit 2
  fi
  say "building GSL and the harnesses (targets/gsl/build.sh; cached after the first run)"
  build_args=(--no-coverage)
  ((afl)) && build_args+=(--afl)
  ((specfunc_only)) && build_args+=(--specfunc-only)
  [ -n "$functions" ] && build_args+=(--functions "$functions")
  targets/gsl/build.sh "${build_args[@]}"
  results="$root/results/gsl-$(date +%Y%m%d-%H%M%S)"
  mkdir -p "$results"
  # numfuzz and the harnesses are rebuilt while people work, and a campaign binary must match
  # the numfuzz that fuzzes and triages it: a run of hours uses one snapshot throughout. The
  # harnesses are hard links (no copy); a rebuild writes new files and leaves these alone.
  cp "$bin_dir/numfuzz" "$results/numfuzz"
  mkdir -p "$results/harness"
  cp "$gsl_build/harness/manifest.json" "$results/harness/"
  bin_kind=fuzz
  ((specfunc_only)) && bin_kind=specfunc
  cp -al "$gsl_build/bin/$bin_kind" "$results/harness/bin"
  ((afl)) && cp -al "$gsl_build/bin/afl" "$results/harness/afl"
  python3 "$root/targets/gsl/bench_config.py" new "$gsl_build/harness/manifest.json" "$results/config.json" \
    "$seconds" "$jobs" "$afl" "$functions" "$results/harness/bin" "${run_args[@]}" || exit 1
  [ -n "$sample" ] && python3 "$root/targets/gsl/bench_config.py" set "$results/config.json" sample "$sample"
  ((budget)) && python3 "$root/targets/gsl/bench_config.py" set "$results/config.json" budget 1
  ((afl)) && python3 "$root/targets/gsl/bench_config.py" set "$results/config.json" afl_build persistent-cmplog
  say "results in $results"
else
  case "$results" in /*) ;; *) results="$root/$results" ;; esac
  [ -f "$results/config.json" ] || die "$results is not a bench-gsl results directory (no config.json)"
fi

cfg() { python3 "$root/targets/gsl/bench_config.py" get "$results/config.json" "$1"; }
seconds=$(cfg seconds)
# --continue and --report-only keep the run's job count unless --jobs says otherwise.
((jobs_given)) || jobs=$(cfg jobs)
afl=$(cfg afl)
bins=$(cfg binaries)
read -ra fns <<<"$(cfg functions)"
# Runs from before run_args was recorded have none.
read -ra run_args <<<"$(cfg run_args)"
numfuzz="$results/numfuzz"
[ -x "$numfuzz" ] || numfuzz="$bin_dir/numfuzz"
tools=(numfuzz)
# afl-fuzz's runs: on numfuzz-cc binaries (runs before afl_build was recorded), or on the
# afl-clang-fast builds with Overflow/DivByZero/Invalid trapped, then with Underflow too.
afl_build=$(cfg afl_build)
afl_tools=()
if ((afl)); then
  afl_tools=(afl)
  [ "$afl_build" = persistent-cmplog ] && afl_tools+=(afl-underflow)
fi
tools+=("${afl_tools[@]}")
mkdir -p "$results/logs" "$results/triage" "$results/campaigns"
for t in "${afl_tools[@]}"; do mkdir -p "$results/triage/$t" "$results/campaigns/$t" "$results/seeds"; done
# Runs before run-all kept numfuzz's campaigns and reports in campaigns/numfuzz and
# triage/numfuzz themselves; later ones see run-all's there.
run_all_dir="$results/run-all"
uses_run_all=1
if [ -d "$results/triage/numfuzz" ] && [ ! -L "$results/triage/numfuzz" ]; then uses_run_all=0; fi
if ((uses_run_all)); then
  for d in triage campaigns; do
    [ -e "$results/$d/numfuzz" ] || ln -s "../run-all/$d" "$results/$d/numfuzz"
  done
fi

triage_tool() {
  # The copy taken at the start may predate `numfuzz triage`; the current build may have it.
  if "$numfuzz" triage --help >/dev/null 2>&1; then echo "$numfuzz"; else echo "$bin_dir/numfuzz"; fi
}

# --- numfuzz: one run-all over the functions -------------------------------------------------

# MODE: "" (a new run), --continue or --retriage.
numfuzz_run_all() {
  local mode=$1 list
  list=$(IFS=,; echo "${fns[*]}")
  local time=(-V "$seconds")
  [ "$(cfg budget)" = 1 ] && time=(--budget "$((seconds * ${#fns[@]}))s")
  local args=("$results/harness" -o "$run_all_dir" "${time[@]}" --jobs "$jobs" --functions "$list"
    --oracle "$root/targets/gsl/oracle.py" --minimize=bugs)
  [ -n "$mode" ] && args+=("$mode")
  "$numfuzz" run-all "${args[@]}" -- -t 1000 "${run_args[@]}" >"$results/logs/run-all.md" 2>"$results/logs/run-all.log" &
  local pid=$!
  tail --pid=$pid -n +1 -F "$results/logs/run-all.log" 2>/dev/null | sed -u 's/^/bench-gsl: /' &
  wait $pid || die "numfuzz run-all failed (see $results/logs/run-all.log)"
}

# --- afl-fuzz: one job, a campaign and its triage ---------------------------------------------

# afl-fuzz starts from two neutral seeds, every field 0 and every field 1; numfuzz builds its
# own seeds from the signature (0, 1 and special values), which is part of what is compared.
afl_seeds() {
  local fn=$1 dir="$results/seeds/$1"
  [ -d "$dir" ] && return
  mkdir -p "$dir"
  python3 "$root/targets/gsl/bench_config.py" seeds "$results/config.json" "$fn" "$dir"
}

# afl_triage TOOL FUNCTION: the tool's crashes (and queue) replayed on the numfuzz-cc build.
afl_triage() {
  local tool=$1 fn=$2
  local campaign="$results/campaigns/$tool/$fn" out="$results/triage/$tool/$fn"
  [ -d "$campaign" ] || return 0
  mkdir -p "$out"
  # The taint and shadow builds beside the harness ($bins/$fn.taint, .shadow) are found there.
  "$(triage_tool)" triage "$campaign" --target "$bins/$fn" --format json --jobs 1 \
    --oracle "$root/targets/gsl/oracle.py" --minimize=bugs \
    --output "$out/triage.json" >>"$results/logs/$tool-$fn.triage.log" 2>&1 ||
    echo "bench-gsl: triage of $tool/$fn failed (see logs/$tool-$fn.triage.log)"
}

# afl_fuzz TOOL FUNCTION CORE
afl_fuzz() {
  local tool=$1 fn=$2 core=$3
  local campaign="$results/campaigns/$tool/$fn" log="$results/logs/$tool-$fn.log"
  if [ ! -e "$campaign/.done" ]; then
    rm -rf "$campaign"
    afl_seeds "$fn"
    local target=("$bins/$fn") envs=()
    if [ "$afl_build" = persistent-cmplog ]; then
      target=(-c "$results/harness/afl/$fn.cmplog" -l 2AT -- "$results/harness/afl/$fn")
      [ "$tool" = afl-underflow ] && envs=(NUMFUZZ_AFL_UNDERFLOW=1)
    else
      target=(-- "${target[@]}")
    fi
    env "${envs[@]}" AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1 \
      AFL_SKIP_CRASHES=1 \
      taskset -c "$core" afl-fuzz -i "$results/seeds/$fn" -o "$campaign" -V "$seconds" -t 1000 "${target[@]}" \
      </dev/null >"$log" 2>&1 || echo "bench-gsl: afl-fuzz ($tool) on $fn failed (see $log)"
    [ -d "$campaign" ] && touch "$campaign/.done"
  fi
  afl_triage "$tool" "$fn"
  return 0
}

# KIND (fuzz or triage) of TOOL over FUNCTIONS: N slots, slot k on core k mod nproc.
afl_queue() {
  local kind=$1 tool=$2
  shift 2
  local cores
  cores=$(nproc)
  local -A slot_of=()
  local free=() k pid total=$# started=0
  for ((k = 0; k < jobs; k++)); do free+=("$k"); done
  for fn in "$@"; do
    # wait -n also reaps the shell's other jobs (run-all's log follower): only a slot's own
    # job frees it.
    while ((${#free[@]} == 0)); do
      pid=""
      wait -n -p pid || true
      if [ -n "$pid" ] && [ -n "${slot_of[$pid]+set}" ]; then
        free+=("${slot_of[$pid]}")
        unset "slot_of[$pid]"
      fi
    done
    k=${free[0]}
    free=("${free[@]:1}")
    started=$((started + 1))
    if [ "$kind" = fuzz ]; then
      echo "bench-gsl: $tool [$started/$total] $(date +%H:%M:%S) $fn (core $((k % cores)))"
      afl_fuzz "$tool" "$fn" $((k % cores)) &
    else
      afl_triage "$tool" "$fn" &
    fi
    slot_of[$!]=$k
  done
  wait
}

# --- the run ----------------------------------------------------------------------------------

if [ "$mode" != report-only ]; then
  ((afl)) && ! command -v afl-fuzz >/dev/null && die "afl-fuzz is missing (scripts/setup.sh installs afl++)"
  start=$(date +%s)
  say "${#fns[@]} functions x ${#tools[@]} tool(s) x ${seconds} s on $jobs job(s): about $(((${#fns[@]} * ${#tools[@]} * seconds + jobs - 1) / jobs / 60)) min"
  ((uses_run_all)) || die "$results predates numfuzz run-all; --report-only re-merges it"
  if [ -e "$run_all_dir/run-all.json" ]; then numfuzz_run_all --continue; else numfuzz_run_all ""; fi
  for t in "${afl_tools[@]}"; do afl_queue fuzz "$t" "${fns[@]}"; done
  say "campaigns done in $((($(date +%s) - start) / 60)) min"
else
  if ((uses_run_all)); then
    say "re-triaging the numfuzz campaigns (run-all --retriage, $jobs job(s))"
    numfuzz_run_all --retriage
  else
    say "$results predates numfuzz run-all: its numfuzz reports are merged as they are"
  fi
  for t in "${afl_tools[@]}"; do afl_queue triage "$t" "${fns[@]}"; done
fi
python3 targets/gsl/bench_report.py "$results"
}

main "$@"
exit
