#!/usr/bin/env bash
# The shadow build against mpmath on fdlibm: fuzzes each of the 48 fdlibm functions
# (targets/fdlibm) for a short time, triages each campaign with the mpmath oracle
# (targets/fdlibm/oracle.py) and the function's shadow build, which judges every input whose
# result came out Inf or NaN unreported both ways, and sums the agreement
# (targets/gsl/shadow_agreement.py). fdlibm reads and writes doubles through their integer
# words everywhere, so this is where shadows are most often unreliable.
#
#   scripts/bench-shadow-fdlibm.sh [SECONDS] [--functions f1,f2,...] [--jobs N]
#     SECONDS  fuzzing time per function (default 10)
# Results: results/fdlibm-shadow-<timestamp>/ (campaigns/, triage/numfuzz/<name>/triage.json,
# agreement.md).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=10
functions=""
jobs=$(nproc 2>/dev/null || echo 1)
die() {
  echo "bench-shadow-fdlibm.sh: $*" >&2
  exit 1
}
while (($#)); do
  case $1 in
    --functions) functions=${2:?--functions needs a list}; shift 2 ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
    '' | *[!0-9]*) die "unknown argument \`$1\` (usage: [SECONDS] [--functions f1,f2,...] [--jobs N])" ;;
    *) seconds=$1; shift ;;
  esac
done
((seconds > 0)) || die "SECONDS must be positive"
bin="${CARGO_TARGET_DIR:-$root/target}/release"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
[ -x "$bin/numfuzz" ] || die "$bin/numfuzz is missing; run scripts/build.sh first"
build=${FDLIBM_BUILD_DIR:-$root/targets/fdlibm/build}
"$root/targets/fdlibm/build.sh" --variants fuzz,shadow ${functions:+--functions "$functions"} --jobs "$jobs"
results="$root/results/fdlibm-shadow-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$results/campaigns" "$results/triage/numfuzz" "$results/logs"
if [ -n "$functions" ]; then
  IFS=, read -ra names <<<"$functions"
else
  mapfile -t names < <(awk -F'\t' '$1 !~ /^#/ && NF { print $1 }' "$root/targets/fdlibm/functions.tsv")
fi

one() { # one NAME CORE
  local n=$1 core=$2 out="$results/triage/numfuzz/$1"
  "$bin/numfuzz" run -o "$results/campaigns/$n" -V "$seconds" --cores "$core" --no-tui -- "$build/bin/fuzz/$n" \
    </dev/null >"$results/logs/$n.run.log" 2>&1 || echo "bench-shadow-fdlibm: numfuzz run on $n failed (logs/$n.run.log)"
  mkdir -p "$out"
  "$bin/numfuzz" triage "$results/campaigns/$n" --format json --jobs 1 --oracle "$root/targets/fdlibm/oracle.py" \
    --shadow-target "$build/bin/shadow/$n" --output "$out/triage.json" >"$results/logs/$n.triage.log" 2>&1 ||
    echo "bench-shadow-fdlibm: triage of $n failed (logs/$n.triage.log)"
}

slot=0
for n in "${names[@]}"; do
  one "$n" $((slot % $(nproc))) &
  slot=$((slot + 1))
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
done
wait
python3 "$root/targets/gsl/shadow_agreement.py" "$results" | tee "$results/agreement.md"
echo "bench-shadow-fdlibm: results in $results"
