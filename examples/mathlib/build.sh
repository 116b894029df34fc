#!/bin/sh
# Builds libmathlib.a with $CC into $NUMFUZZ_BUILD_DIR (default: build/ beside this script).
# `numfuzz harness --build` runs it three times, with CC=numfuzz-cc and NUMFUZZ_CC_TAINT=1 or
# NUMFUZZ_CC_SHADOW=1 for the taint and shadow builds, each into a directory of its own.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${NUMFUZZ_BUILD_DIR:-$here/build}
mkdir -p "$out"
${CC:-cc} -O2 -c "$here/mathlib.c" -o "$out/mathlib.o"
rm -f "$out/libmathlib.a"
ar rcs "$out/libmathlib.a" "$out/mathlib.o"
