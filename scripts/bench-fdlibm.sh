#!/usr/bin/env bash
# The NumFuzz paper's Table III, reproduced: branch coverage of the 48 fdlibm functions
# (Debian's newlib-source), numfuzz and optionally Debian's AFL++ on the same harnesses for
# the same time, measured by `numfuzz cov` on one llvm-cov build, beside the paper's columns.
#
# usage: scripts/bench-fdlibm.sh [SECONDS] [--afl] [--functions f1,f2,...] [--no-build]
#                                [NUMFUZZ RUN ARGS...] [-- NUMFUZZ RUN ARGS...]
#   SECONDS      fuzzing time per function and fuzzer (default 10)
#   --afl        also run afl-fuzz (persistent mode, one all-zero seed) and add its column
#   --functions  a subset (names as in targets/fdlibm/functions.tsv)
#   --no-build   use the numfuzz already built in target/release (default: scripts/build.sh)
#   other arguments go to `numfuzz run` (e.g. --no-errbits, --schedule havoc)
# Results: results/fdlibm-<timestamp>/ (table.md, missed.md, per-function campaigns and
# coverage JSON). With two or more cores, numfuzz runs on core 0 and afl-fuzz on core 1 at the
# same time; with one core they take turns.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fdlibm=$root/targets/fdlibm
seconds=""
afl=0
functions=""
build=1
run_args=()

die() {
  echo "bench-fdlibm.sh: $*" >&2
  exit 1
}

while (($#)); do
  case $1 in
    --afl) afl=1; shift ;;
    --functions) functions=${2:?--functions needs a list, e.g. sin,pow}; shift 2 ;;
    --no-build) build=0; shift ;;
    -h | --help) sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; run_args+=("$@"); break ;;
    *)
      if [ -z "$seconds" ] && [[ $1 =~ ^[0-9]+$ ]]; then
        seconds=$1
      else
        run_args+=("$1")
      fi
      shift
      ;;
  esac
done
seconds=${seconds:-10}
((seconds > 0)) || die "SECONDS must be a positive number of seconds"

command -v python3 >/dev/null || die "python3 is missing: run scripts/setup.sh"
if ((afl)); then
  command -v afl-fuzz >/dev/null || die "afl-fuzz is missing: run scripts/setup.sh (installs afl++)"
fi

# --- build ------------------------------------------------------------------------------------
if ((build)); then
  "$root/scripts/build.sh" >/dev/null
fi
numfuzz=$root/target/release/numfuzz
[ -x "$numfuzz" ] || die "$numfuzz is missing: run scripts/build.sh"
variants=fuzz,cov
((afl)) && variants+=,afl
build_args=(--variants "$variants")
[ -n "$functions" ] && build_args+=(--functions "$functions")
"$fdlibm/build.sh" "${build_args[@]}"
bin=${FDLIBM_BUILD_DIR:-$fdlibm/build}/bin

# --- the functions ------------------------------------------------------------------------------
declare -A symbol_of seed_size_of
names=()
while IFS=$'\t' read -r name _source symbol _returns params; do
  [[ -z $name || $name == \#* ]] && continue
  size=0
  IFS=, read -r -a plist <<<"$params"
  for p in "${plist[@]}"; do
    case $p in double) size=$((size + 8)) ;; int) size=$((size + 4)) ;; esac
  done
  symbol_of[$name]=$symbol seed_size_of[$name]=$size
  names+=("$name")
done <"$fdlibm/functions.tsv"
if [ -n "$functions" ]; then
  IFS=, read -r -a names <<<"$functions"
fi

results=$root/results/fdlibm-$(date +%Y%m%d-%H%M%S)
mkdir -p "$results"/{numfuzz,afl,cov,seeds,logs}
cores=$(nproc 2>/dev/null || echo 1)
{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(uname -srm), $cores cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "seconds per function: $seconds"
  echo "numfuzz run args: ${run_args[*]:-(none)}"
  echo "numfuzz: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet 2>/dev/null || echo ' (modified)')"
  ((afl)) && echo "afl-fuzz: $(afl-fuzz -h 2>&1 | grep -o 'afl-fuzz++[0-9a-z.]*' | head -n1)"
} >"$results/environment.txt"

echo "bench-fdlibm: ${#names[@]} functions, ${seconds} s each$( ((afl)) && echo ', numfuzz and afl-fuzz'), results in $results"

numfuzz_campaign() { # numfuzz_campaign NAME
  CI=1 "$numfuzz" run -o "$results/numfuzz/$1" -V "$seconds" --cores 0 --no-tui "${run_args[@]}" -- "$bin/fuzz/$1" \
    >"$results/logs/numfuzz-$1.log" 2>&1
}

afl_campaign() { # afl_campaign NAME
  local seeds=$results/seeds/$1 bind=()
  mkdir -p "$seeds"
  head -c "${seed_size_of[$1]}" /dev/zero >"$seeds/zeros"
  ((cores >= 2)) && bind=(-b 1)
  AFL_SKIP_CPUFREQ=1 AFL_NO_UI=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
    afl-fuzz -i "$seeds" -o "$results/afl/$1" -V "$seconds" "${bind[@]}" -- "$bin/afl/$1" \
    >"$results/logs/afl-$1.log" 2>&1
}

coverage() { # coverage NAME FUZZER
  "$numfuzz" cov "$results/$2/$1" --target "$bin/cov/$1" --function "${symbol_of[$1]}" --time-to-final \
    --format json --profdata "$results/cov/$1-$2.profdata" >"$results/cov/$1-$2.json" 2>"$results/logs/cov-$2-$1.log"
}

for n in "${names[@]}"; do
  [ -n "${symbol_of[$n]+x}" ] || die "unknown function \`$n\` (see targets/fdlibm/functions.tsv)"
  printf '  %-11s' "$n"
  status=ok
  if ((afl)) && ((cores >= 2)); then
    numfuzz_campaign "$n" &
    nf_pid=$!
    afl_campaign "$n" || status="afl-fuzz failed (logs/afl-$n.log)"
    wait "$nf_pid" || status="numfuzz failed (logs/numfuzz-$n.log)"
  else
    numfuzz_campaign "$n" || status="numfuzz failed (logs/numfuzz-$n.log)"
    if ((afl)); then afl_campaign "$n" || status="afl-fuzz failed (logs/afl-$n.log)"; fi
  fi
  coverage "$n" numfuzz || status="numfuzz cov failed (logs/cov-numfuzz-$n.log)"
  if ((afl)); then coverage "$n" afl || status="numfuzz cov failed (logs/cov-afl-$n.log)"; fi
  echo " $status"
done

# --- the table ---------------------------------------------------------------------------------
python3 - "$results" "$fdlibm/paper-table3.tsv" "$afl" "$seconds" "${names[@]}" <<'EOF'
import json, os, sys

results, paper_path, afl, seconds, names = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4], sys.argv[5:]
paper = {}
for line in open(paper_path):
    if line.startswith("#") or not line.strip():
        continue
    f, nf, cm, af = line.rstrip("\n").split("\t")
    paper[f] = (nf, cm, af)

def cov(name, fuzzer):
    try:
        return json.load(open(os.path.join(results, "cov", f"{name}-{fuzzer}.json")))
    except (OSError, ValueError):
        return None

def execs_per_sec(name, fuzzer):
    """Executions per second of the whole campaign: execs_done / run_time summed over its
    instances, computed the same way for both tools from fuzzer_stats (numfuzz's own
    execs_per_sec there is the same whole-run average; plot_data's is per interval)."""
    total, seen = 0.0, False
    base = os.path.join(results, fuzzer, name)
    for inst in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        stats = {}
        try:
            for l in open(os.path.join(base, inst, "fuzzer_stats")):
                k, _, v = l.partition(":")
                stats[k.strip()] = v.strip()
            execs, secs = float(stats["execs_done"]), float(stats["run_time"])
        except (OSError, KeyError, ValueError):
            continue
        if secs > 0:
            total += execs / secs
            seen = True
    if not seen:
        return "?"
    return f"{total / 1000:.0f}k" if total >= 10000 else f"{total:.0f}"

def pct(r):
    return "fail" if r is None or r.get("percent") is None else f"{r['percent']:.1f}"

def ttf(r):
    t = r and r.get("time_to_final")
    return f"{t['time_ms'] / 1000:.2f}" if t else "?"

head = ["function", "branches", "numfuzz %", "time to final (s)", "numfuzz exec/s"]
if afl:
    head += ["AFL++ %", "AFL++ time to final (s)", "AFL++ exec/s"]
head += ["paper NumFuzz %", "paper CoverMe %", "paper AFL %"]
rows, sums = [], {"numfuzz": [], "afl": [], "pn": [], "pc": [], "pa": []}
missed_lines = []
for n in names:
    r = cov(n, "numfuzz")
    row = [n, str(r["total"]) if r else "?", pct(r), ttf(r), execs_per_sec(n, "numfuzz")]
    if r and r.get("percent") is not None:
        sums["numfuzz"].append(r["percent"])
    if r and r["missed"]:
        missed_lines.append(f"- **{n}** ({r['scope']['name']}, {r['covered']}/{r['total']}): " + ", ".join(
            f"{os.path.basename(m['file'])}:{m['line']}:{m['column']} {'true' if m['outcome'] else 'false'}" for m in r["missed"]))
    if afl:
        a = cov(n, "afl")
        row += [pct(a), ttf(a), execs_per_sec(n, "afl")]
        if a and a.get("percent") is not None:
            sums["afl"].append(a["percent"])
    p = paper.get(n, ("?", "?", "?"))
    row += list(p)
    for key, v in zip(("pn", "pc", "pa"), p):
        try:
            sums[key].append(float(v))
        except ValueError:
            pass
    rows.append(row)

def mean(xs):
    # Half up, as the paper rounds its means (91.85 -> 91.9).
    return f"{round(sum(xs) / len(xs) + 1e-9, 1):.1f}" if xs else "-"

out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
out += ["| " + " | ".join(r) + " |" for r in rows]
summary = f"means over {len(names)} functions ({seconds} s each): numfuzz {mean(sums['numfuzz'])} %"
if afl:
    summary += f", AFL++ {mean(sums['afl'])} %"
    nf = {n: cov(n, "numfuzz") for n in names}
    af = {n: cov(n, "afl") for n in names}
    both = [n for n in names if nf[n] and af[n] and nf[n].get("percent") is not None and af[n].get("percent") is not None]
    above = sum(nf[n]["covered"] > af[n]["covered"] for n in both)
    below = sum(nf[n]["covered"] < af[n]["covered"] for n in both)
    summary += f" (numfuzz above AFL++ on {above}, below on {below}, equal on {len(both) - above - below})"
summary += f"; paper: NumFuzz {mean(sums['pn'])} %, CoverMe {mean(sums['pc'])} % ({len(sums['pc'])} functions), AFL {mean(sums['pa'])} %"
text = "\n".join(out) + "\n\n" + summary + "\n"
open(os.path.join(results, "table.md"), "w").write(text)
open(os.path.join(results, "missed.md"), "w").write(
    "Branch outcomes numfuzz missed (file:line:col and the outcome never taken):\n\n" + "\n".join(missed_lines) + "\n")
print()
print(text)
EOF
echo "bench-fdlibm: table in $results/table.md, missed outcomes in $results/missed.md"
