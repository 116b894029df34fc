#!/usr/bin/env bash
# Execution speed of numfuzz (in-process, forkserver) and Debian's afl-fuzz (persistent,
# shared-memory test cases) on the same fdlibm function, measured in one run, as ratios.
#
#   scripts/bench-speed.sh [SECONDS]        (default 20 s per campaign)
#
# The function is fdlibm's __ieee754_exp from Debian's newlib-source. numfuzz runs its
# numfuzz-cc build (edges + FP checkers + ErrBits); afl-fuzz runs an afl-clang-fast build of
# the same harness through AFL++'s libFuzzer driver (persistent mode, shared-memory inputs).
# A row for an edges-only numfuzz-cc build (NUMFUZZ_CC_NO_CHECKS=1) separates the engine's
# speed from the checkers' cost, a --no-cmp row the cost of comparison logging and solving, and a
# --no-escape-objective row the cost of the escape objective (the harness declares its result,
# and exp returns inf for x > 709.78, so that path is taken), and a --no-local-search row the
# cost of the local-search stage (its probe executions route every operation through the runtime).
# Each campaign uses one core; they run one after another.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds="${1:-20}"
bin="${CARGO_TARGET_DIR:-$root/target}/release"
work="$root/results/bench-speed"
mkdir -p "$work"

scripts/setup.sh >/dev/null
scripts/build.sh >/dev/null

# fdlibm's exp from newlib (see targets/fdlibm for the full benchmark).
src="$work/newlib"
if [ ! -f "$src/.extracted" ]; then
  rm -rf "$src" && mkdir -p "$src"
  tar xJf /usr/src/newlib/newlib-*.tar.xz -C "$src" --strip-components=1 \
    --wildcards '*/newlib/libm/math/e_exp.c' '*/newlib/libm/common/*.h' '*/newlib/libc/include/*'
  touch "$src/.extracted"
fi
cat > "$work/harness.c" <<'EOF'
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __NUMFUZZ__
#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64");
#else
#define NUMFUZZ_RESULT(v) ((void)(v))
#endif
double __ieee754_exp(double);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = 0.0;
  memcpy(&x, data, size < sizeof x ? size : sizeof x);
  volatile double r = __ieee754_exp(x);
  NUMFUZZ_RESULT(r);
  return 0;
}
EOF
flags=(-O2 -g -fno-builtin -w -I"$src/newlib/libm/common" -idirafter "$src/newlib/libc/include")
"$bin/numfuzz-cc" "${flags[@]}" "$work/harness.c" "$src/newlib/libm/math/e_exp.c" -o "$work/exp_numfuzz"
NUMFUZZ_CC_NO_CHECKS=1 "$bin/numfuzz-cc" "${flags[@]}" "$work/harness.c" "$src/newlib/libm/math/e_exp.c" \
  -o "$work/exp_edges"
AFL_QUIET=1 afl-clang-fast "${flags[@]}" -fsanitize=fuzzer "$work/harness.c" "$src/newlib/libm/math/e_exp.c" \
  -o "$work/exp_afl" 2>/dev/null

stat() { awk -F' *: *' -v k="$2" '$1 == k { print $2 }' "$1"; }
rate() { # exec/s of an instance directory: executions over its run time
  local execs time
  execs=$(stat "$1/fuzzer_stats" execs_done)
  time=$(stat "$1/fuzzer_stats" run_time)
  awk -v e="$execs" -v t="$time" 'BEGIN { if (t > 0) printf "%.0f", e / t; else print 0 }'
}

declare -A speed
run_numfuzz() { # name, extra args, binary
  rm -rf "$work/out-$1"
  "$bin/numfuzz" run -o "$work/out-$1" -V "$seconds" --no-tui --cores 0 $2 -- "$3" >/dev/null
  speed[$1]=$(rate "$work/out-$1/default")
}
echo "measuring ${seconds} s per campaign ..."
run_numfuzz inprocess "" "$work/exp_numfuzz"
run_numfuzz inprocess-nocmp "--no-cmp" "$work/exp_numfuzz"
run_numfuzz inprocess-noesc "--no-escape-objective" "$work/exp_numfuzz"
run_numfuzz inprocess-nosearch "--no-local-search" "$work/exp_numfuzz"
run_numfuzz inprocess-edges "" "$work/exp_edges"
run_numfuzz forkserver "--executor forkserver" "$work/exp_numfuzz"

rm -rf "$work/out-afl" && mkdir -p "$work/seeds" && printf '\0\0\0\0\0\0\0\0' > "$work/seeds/zero"
AFL_SKIP_CPUFREQ=1 AFL_NO_UI=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1 \
  timeout $((seconds + 30)) afl-fuzz -V "$seconds" -i "$work/seeds" -o "$work/out-afl" -- "$work/exp_afl" >/dev/null 2>&1 || true
speed[afl]=$(rate "$work/out-afl/default")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "n/a" }'; }
echo
echo "| executor (fdlibm __ieee754_exp, ${seconds} s, 1 core) | exec/s | vs afl-fuzz |"
echo "|---|---:|---:|"
echo "| numfuzz in-process (checkers + ErrBits + comparison solving + local search: the default) | ${speed[inprocess]} | $(ratio "${speed[inprocess]}" "${speed[afl]}") |"
echo "| numfuzz in-process, --no-cmp (no comparison logging or solving) | ${speed[inprocess-nocmp]} | $(ratio "${speed[inprocess-nocmp]}" "${speed[afl]}") |"
echo "| numfuzz in-process, --no-escape-objective | ${speed[inprocess-noesc]} | $(ratio "${speed[inprocess-noesc]}" "${speed[afl]}") |"
echo "| numfuzz in-process, --no-local-search | ${speed[inprocess-nosearch]} | $(ratio "${speed[inprocess-nosearch]}" "${speed[afl]}") |"
echo "| numfuzz in-process, edges-only build | ${speed[inprocess-edges]} | $(ratio "${speed[inprocess-edges]}" "${speed[afl]}") |"
echo "| numfuzz forkserver (checkers + ErrBits) | ${speed[forkserver]} | $(ratio "${speed[forkserver]}" "${speed[afl]}") |"
echo "| afl-fuzz 4.04c persistent + shared memory | ${speed[afl]} | 1.0x |"
