#!/usr/bin/env bash
# The README's demo: on a fresh Debian 12 machine (as root, with Rust installed), one command
# installs what numfuzz needs, builds numfuzz, builds GSL 2.7.1's special functions from Debian's
# source package with numfuzz-cc (and their taint build), fuzzes gsl_sf_exprel_2_e for 60 s and
# prints the triage, judged against mpmath. Expected: 1 bug, the Overflow at specfunc/exp.c:406
# (GSL returns +inf with GSL_SUCCESS for 709.09 < x < 709.78 where the true value is finite),
# and every other finding (harmless underflows) counted as absorbed. The bug's C reproducer
# (numfuzz triage --repro) is written to results/demo/repro and the demo prints the line that
# builds it against Debian's plain GSL (libgsl-dev: -I/usr/include/gsl, since the generated
# harness includes "gsl_sf_exp.h" without the gsl/ prefix, -lgsl -lgslcblas) and runs it: it
# exits 1.
#
#   scripts/demo.sh [SECONDS]        (default 60; about 6-9 minutes in all on 2 cores, 12 on a
#                                    fresh machine, where setup.sh installs the packages first)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin="${CARGO_TARGET_DIR:-$root/target}/release"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
work="${NUMFUZZ_DEMO_DIR:-$root/results/demo}"
seconds="${1:-60}"
function=gsl_sf_exprel_2_e
case "$seconds" in '' | *[!0-9]* | 0)
  echo "demo.sh: SECONDS must be a positive number, got \`$seconds\`" >&2
  exit 2
  ;;
esac
start=$(date +%s)
step() { echo; echo "== [$1/5] $2  ($(($(date +%s) - start)) s so far)"; }

step 1 "system packages: clang-19, LLVM 19, lld, AFL++, dpkg-dev, a plain GSL (scripts/setup.sh)"
scripts/setup.sh

step 2 "building numfuzz in release mode (cargo; several minutes the first time)"
scripts/build.sh >/dev/null
echo "numfuzz, numfuzz-cc and the runtime are in $bin"

step 3 "GSL 2.7.1 from Debian's source package, built with numfuzz-cc"
echo "Only what $function needs: configure, then the special functions and the helpers they"
echo "call (gsl utils sys err complex specfunc), every floating-point operation instrumented;"
echo "then the same as a taint build ($function.taint), which triage replays to tell which"
echo "exceptions reach the results GSL returns, and as a shadow build ($function.shadow), which"
echo "recomputes every double in x87 extended precision (the reference where there is no oracle)."
targets/gsl/build.sh --specfunc-only --functions "$function"
exe="${NUMFUZZ_GSL_BUILD:-$root/targets/gsl/build}/bin/specfunc/$function"

step 4 "fuzzing $function for $seconds s (numfuzz run)"
echo "Input: one f64 (the harness's signature). The fuzzer mutates IEEE-754 fields and follows"
echo "ErrBits, the distance of each operation to an exception, besides edge coverage."
mkdir -p "$work"
rm -rf "$work/out"
"$bin/numfuzz" run -o "$work/out" -V "$seconds" --no-tui -- "$exe"

step 5 "triage: which exceptions reach what GSL returns, judged against mpmath (numfuzz triage)"
echo "Every finding is replayed; the taint build tells which exceptions reach the result, the"
echo "oracle (targets/gsl/oracle.py, mpmath) gives the true value; bugs come first, minimised."
echo "Each bug gets a standalone C reproducer (--repro) that links the plain GSL Debian ships"
echo "(--repro-link: libgsl-dev, built without numfuzz-cc) and exits 1 while the bug is there."
oracle="$root/targets/gsl/oracle.py"
repro=(--repro "$work/repro" --repro-link '-I/usr/include/gsl -lgsl -lgslcblas')
"$bin/numfuzz" triage "$work/out" --oracle "$oracle" --minimize "${repro[@]}" --output "$work/triage.txt" 2>/dev/null
cat "$work/triage.txt"
"$bin/numfuzz" triage "$work/out" --oracle "$oracle" --minimize "${repro[@]}" --format json --output "$work/triage.json" 2>/dev/null
echo
if ! python3 - "$work/triage.json" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
bugs = [f for f in report["findings"] if f["id"] in report["bugs"]]
hits = [f for f in bugs if f["kind"] == "Overflow"
        and f["location"]["path"].endswith("specfunc/exp.c") and f["location"]["line"] == 406]
if not hits:
    sys.exit(1)
f = hits[0]
# The minimised input when there is one: the report above shows it, and the reference is its.
shown = f["minimized"] or {**f["input"], "expression": f["operation"]["expression"], "results": f["results"]}
x = shown["fields"][0]["value"]
returned = shown["results"][0]["value"]
ref = f["reference"]
true = f"{float(ref['value']):.8g}" if ref else "unknown"
others = report["summary"]["classes"]
print(f"{len(bugs)} bug{'s' if len(bugs) != 1 else ''}: the Overflow at specfunc/exp.c:406 in {f['location']['function']}. "
      f"For x = {x}, 2.0*(exp(x) - 1.0 - x)/(x*x) computes {shown['expression']} before dividing by x*x:")
print(f"GSL returns {returned} with GSL_SUCCESS where the true value (mpmath) is {true}.")
print(f"The other findings: {others['absorbed']} absorbed (the result stays right), {others['handled']} handled, "
      f"{others['chained']} chained, {others['input_borne']} input-borne.")
if f.get("reproducer"):
    print(f"Its reproducer, {f['reproducer']['path']}, for x = {x}: this builds it against Debian's plain GSL and")
    print("runs it (exit status 1 while the bug is there):")
    print(f"  {f['reproducer']['build']}")
EOF
then
  echo "This run did not reach the Overflow at specfunc/exp.c:406; try a longer run: scripts/demo.sh 120"
fi
"$bin/numfuzz" triage "$work/out" --oracle "$oracle" --minimize "${repro[@]}" --format html --output "$work/report.html" 2>/dev/null ||
  echo "demo.sh: the HTML report could not be written (see: $bin/numfuzz triage $work/out --format html)"
echo "Campaign and reports: $work (replay a finding: $bin/numfuzz replay $exe $work/out/default/crashes/id:...)"
[ -f "$work/report.html" ] && echo "HTML report (open it in a browser): $work/report.html"
echo "demo.sh: done in $(($(date +%s) - start)) s"
