#!/usr/bin/env bash
# check-binding.sh RENAME_MAP HARNESS_OBJECT BINARY SYMBOL
#
# Fails (exit 1, one line on stderr) unless BINARY calls the fdlibm copy of the function
# under test, linked as SYMBOL (fdlibm_<name> after the rename, or __ieee754_*/__kernel_*):
#   - the harness object really calls SYMBOL: a compiler builtin (floor -> roundsd,
#     sqrt -> sqrtsd) would leave no call at all;
#   - the harness object calls no plain libm name that fdlibm defines (RENAME_MAP's left
#     column): such a call binds to glibc's libm;
#   - BINARY defines SYMBOL itself (the fdlibm object was linked, no import).
set -euo pipefail

if [ $# -ne 4 ]; then
  echo "usage: check-binding.sh RENAME_MAP HARNESS_OBJECT BINARY SYMBOL" >&2
  exit 2
fi
map=$1 obj=$2 bin=$3 sym=$4
NM=${NM:-nm}

fail() {
  echo "check-binding: $bin: $*" >&2
  exit 1
}

for f in "$map" "$obj" "$bin"; do
  [ -f "$f" ] || fail "$f does not exist"
done

undefined=$("$NM" -u "$obj" | awk '{print $NF}')
grep -qxF -- "$sym" <<<"$undefined" ||
  fail "the harness never calls $sym (did a compiler builtin replace the call? compile with -fno-builtin)"

while read -r old new; do
  [ -n "$old" ] || continue
  if grep -qxF -- "$old" <<<"$undefined"; then
    fail "the harness calls $old, which binds to glibc's libm; call $new (the renamed fdlibm copy)"
  fi
done <"$map"

"$NM" "$bin" | awk -v s="$sym" '$2 == "T" && $3 == s { found = 1 } END { exit !found }' ||
  fail "$sym is not defined in the binary (the fdlibm object was not linked)"
