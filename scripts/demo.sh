#!/usr/bin/env bash
# The README's demo: set up, build numfuzz, build an example numerical function with
# numfuzz-cc, fuzz it, and show what it found.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin="${CARGO_TARGET_DIR:-$root/target}/release"
work="${NUMFUZZ_DEMO_DIR:-$root/results/demo}"
seconds="${1:-30}"

echo "== [1/5] system packages (clang-19, llvm-19, AFL++ ...)"
scripts/setup.sh
echo "== [2/5] building numfuzz (release; a few minutes the first time)"
scripts/build.sh >/dev/null
mkdir -p "$work"
echo "== [3/5] compiling examples/exprel2.c with numfuzz-cc"
"$bin/numfuzz-cc" -O2 examples/exprel2.c -o "$work/exprel2"
"$bin/numfuzz" sites "$work/exprel2"
echo "== [4/5] fuzzing it for ${seconds} s (numfuzz run)"
rm -rf "$work/out"
"$bin/numfuzz" run -o "$work/out" -V "$seconds" --no-tui -- "$work/exprel2"
echo "== [5/5] replaying each finding"
"$bin/numfuzz" replay "$work/exprel2" "$work"/out/default/crashes/id:*
