#!/usr/bin/env bash
# Fault injection on a real campaign: does numfuzz survive what long campaigns meet, and is
# nothing it found ever lost?
#
#   scripts/chaos.sh [SECONDS] [FUNCTION]     (default 600 s on gsl_sf_bessel_Jnu_e)
#
# A 2-core `numfuzz run` on a GSL harness (built like the README demo). During the budget:
#   - every 30 s, SIGKILL to a random fuzzing client (what the kernel's OOM killer does);
#   - once, SIGSTOP to a client for 10 s, then SIGCONT;
#   - once, the output directory's disk fills up (it lives on a small tmpfs; a filler file
#     takes the free space), the campaign must end with a clear error, the space is freed
#     and the same command resumes;
#   - once, SIGKILL to every numfuzz process at once (a power cut), then the same command
#     resumes.
# Each resume gets what is left of the budget. Every 2 s the script reads every instance's
# exceptions.jsonl and whether its client is fuzzing (it rewrites fuzzer_stats every 2 s). At
# the end it prints: the kills survived (client restarts), every finding ever announced in
# exceptions.jsonl against what is there and on disk at the end (lost must be 0), the share of
# core-time with a client fuzzing, and the exit code of each `numfuzz run`.
#
# The tmpfs needs root (mount); without it the output directory is an ordinary one and the
# full-disk fault is skipped (said in the report). Results: results/chaos-<timestamp>/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
budget="${1:-600}"
function="${2:-gsl_sf_bessel_Jnu_e}"
case "$budget" in '' | *[!0-9]*)
  echo "chaos.sh: SECONDS must be a number of seconds, e.g. scripts/chaos.sh 600" >&2
  exit 2
  ;;
esac
if ((budget < 120)); then
  echo "chaos.sh: give at least 120 s (the faults are spread over the budget)" >&2
  exit 2
fi

scripts/setup.sh >/dev/null
scripts/build.sh >/dev/null
targets/gsl/build.sh --specfunc-only --no-coverage --no-taint --functions "$function" >/dev/null
exe="${NUMFUZZ_GSL_BUILD:-$root/targets/gsl/build}/bin/specfunc/$function"
numfuzz="${CARGO_TARGET_DIR:-$root/target}/release/numfuzz"

results="$root/results/chaos-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$results"
disk="$results/disk"
mkdir -p "$disk"
tmpfs=0
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=256m numfuzz-chaos "$disk" 2>/dev/null; then
  tmpfs=1
  trap 'umount "$disk" 2>/dev/null || true' EXIT
fi
out="$disk/out"
log="$results/chaos.log"
: >"$log"
say() { echo "[chaos $(($(date +%s) - start))s] $*" | tee -a "$log"; }

# The pid of each instance's current client (the last start in its clients.jsonl, if alive).
clients() {
  local f pid
  for f in "$out"/*/clients.jsonl; do
    [ -f "$f" ] || continue
    pid=$(grep -o '"event":"start","pid":[0-9]*' "$f" | tail -1 | grep -o '[0-9]*$' || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "$pid"; fi
  done
}

# Every finding ever announced: each line ever seen in an exceptions.jsonl, as
# "instance<TAB>input<TAB>line", accumulated in $announced.
announced="$results/announced.txt"
: >"$announced"
samples="$results/samples.txt"
: >"$samples"
observe() {
  local f inst now line
  for f in "$out"/*/exceptions.jsonl; do
    [ -f "$f" ] || continue
    inst=$(basename "$(dirname "$f")")
    sed -n "s/^\(.*\"input\":\"\([^\"]*\)\".*\)\$/$inst\t\2\t\1/p" "$f" >>"$announced" || true
  done
  sort -u -o "$announced" "$announced"
  # One sample: for each instance, whether its client is fuzzing (it rewrites fuzzer_stats
  # every 2 s while it fuzzes; a dead, stopped or reloading client does not).
  now=$(date +%s)
  line="$now"
  for f in "$out"/*/fuzzer_stats; do
    [ -f "$f" ] || continue
    line+=" $(basename "$(dirname "$f")")=$((now - $(stat -c %Y "$f") <= 4 ? 1 : 0))"
  done
  echo "$line" >>"$samples"
}

start=$(date +%s)
end=$((start + budget))
codes=()
segment=0
run_pid=""
launch() {
  local left=$((end - $(date +%s)))
  segment=$((segment + 1))
  say "segment $segment: numfuzz run for the $left s left"
  setsid "$numfuzz" run -o "$out" -V "$left" --cores 0-1 -t 1000 --no-tui -- "$exe" \
    </dev/null >"$results/run-$segment.log" 2>&1 &
  run_pid=$!
}
# Waits for the current `numfuzz run` and records its exit code.
reap() {
  local code=0
  wait "$run_pid" || code=$?
  codes+=("segment $segment: exit $code")
  say "segment $segment ended with exit $code: $(tail -1 "$results/run-$segment.log")"
}

launch
next_kill=$((start + 30))
stop_at=$((start + budget * 15 / 100))
fill_at=$((start + budget * 40 / 100))
power_cut_at=$((start + budget * 70 / 100))
stopped=0
filled=0
cut=0
kills=0
while (($(date +%s) < end)); do
  sleep 2
  observe
  now=$(date +%s)
  if ! kill -0 "$run_pid" 2>/dev/null; then
    reap
    if ((filled == 1)); then
      rm -f "$disk/filler"
      filled=2
      say "freed the disk"
    fi
    if (($(date +%s) < end - 10)); then launch; else break; fi
    continue
  fi
  if ((now >= next_kill)); then
    mapfile -t pids < <(clients)
    if ((${#pids[@]})); then
      victim=${pids[RANDOM % ${#pids[@]}]}
      kill -KILL "$victim" 2>/dev/null && kills=$((kills + 1)) && say "SIGKILL client $victim"
    fi
    next_kill=$((now + 30))
  fi
  if ((stopped == 0 && now >= stop_at)); then
    mapfile -t pids < <(clients)
    if ((${#pids[@]})); then
      victim=${pids[0]}
      kill -STOP "$victim" && say "SIGSTOP client $victim"
      sleep 10
      kill -CONT "$victim" && say "SIGCONT client $victim"
      stopped=1
    fi
  fi
  if ((tmpfs && filled == 0 && now >= fill_at)); then
    say "filling the disk of $out"
    dd if=/dev/zero of="$disk/filler" bs=1M 2>/dev/null || true
    filled=1
  fi
  if ((cut == 0 && filled != 1 && now >= power_cut_at)); then
    say "power cut: SIGKILL to every numfuzz process"
    kill -KILL -- "-$run_pid" 2>/dev/null || true
    cut=1
  fi
done
if kill -0 "$run_pid" 2>/dev/null; then reap; fi
observe

# The report. A finding is lost when its line left exceptions.jsonl or its input left the disk.
lost=0
lost_list=""
while IFS=$'\t' read -r inst input record; do
  if [ ! -f "$out/$inst/$input" ] || ! grep -qxF -- "$record" "$out/$inst/exceptions.jsonl"; then
    lost=$((lost + 1))
    lost_list+="  $inst/$input"$'\n'
  fi
done <"$announced"
records=$(wc -l <"$announced")
inputs=$(cut -f1,2 "$announced" | sort -u | wc -l)
restarts=0
for f in "$out"/*/clients.jsonl; do
  n=$(grep -c '"event":"restart"' "$f" || true)
  restarts=$((restarts + n))
done
# Share of the budget spent fuzzing: of the (2 instances x samples), those with a live client.
read -r busy total < <(awk '
  NR > 1 { for (i = 2; i <= NF; i++) { split($i, kv, "="); total++; busy += kv[2] } }
  END { print busy + 0, total + 0 }' "$samples")
{
  echo
  echo "# chaos.sh: $function, $budget s, 2 cores, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo
  echo "- clients killed with SIGKILL: $kills; client restarts recorded: $restarts"
  echo "- SIGSTOP/SIGCONT: $([ "$stopped" = 1 ] && echo "once, 10 s" || echo "not done")"
  echo "- full disk: $([ "$tmpfs" = 1 ] && { [ "$filled" = 2 ] && echo "once, then freed and resumed" || echo "not reached"; } || echo "skipped (no tmpfs: not root)")"
  echo "- power cut (SIGKILL to every process): $([ "$cut" = 1 ] && echo "once, then resumed" || echo "not reached")"
  echo "- findings ever announced in exceptions.jsonl: $records (site, kind) records in $inputs input files; **lost: $lost** (a record gone from exceptions.jsonl, or its input gone from the disk)"
  [ -n "$lost_list" ] && printf '%s' "$lost_list"
  if ((total > 0)); then
    echo "- share of the budget spent fuzzing: $((100 * busy / total)) % of core-time ($busy of $total instance samples, every 2 s, with a client fuzzing)"
  fi
  echo "- numfuzz run exit codes: ${codes[*]:-none}"
  echo
  echo "Logs: $results (chaos.log, run-N.log); the campaign: $out$([ "$tmpfs" = 1 ] && echo " (on a tmpfs: copied to $results/out)")"
} | tee "$results/report.md"
if ((tmpfs)); then cp -a "$out" "$results/out"; fi
((lost == 0))
