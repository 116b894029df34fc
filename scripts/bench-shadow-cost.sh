#!/usr/bin/env bash
# What a shadow build costs on the GSL harnesses: its size and its replay time against the
# fuzzing build and the taint build of the same harness, on the same inputs (random doubles of
# ordinary magnitude, every input in one process, as `numfuzz triage` replays). Ratios, not
# seconds: the three builds run back to back on this machine.
#
#   scripts/bench-shadow-cost.sh [INPUTS] [FUNCTIONS...]
#     INPUTS     inputs per harness (default 2000)
#     FUNCTIONS  gsl_sf_*_e names (default: ten spread over the special functions)
# Needs targets/gsl/build.sh's full build (bin/fuzz/<f>, <f>.taint, <f>.shadow).
set -euo pipefail
cd "$(dirname "$0")/.."
bins="${NUMFUZZ_GSL_BUILD:-targets/gsl/build}/bin/fuzz"
count="${1:-2000}"
case "$count" in '' | *[!0-9]* | 0) echo "bench-shadow-cost.sh: INPUTS must be a positive number, got \`$count\`" >&2; exit 2 ;; esac
shift || true
functions=("$@")
((${#functions[@]})) || functions=(gsl_sf_exprel_2_e gsl_sf_gamma_e gsl_sf_bessel_J0_e gsl_sf_expint_E1_e
  gsl_sf_erf_e gsl_sf_lngamma_e gsl_sf_hyperg_1F1_e gsl_sf_legendre_Pl_e gsl_sf_zeta_e gsl_sf_psi_e)
inputs=$(mktemp -d)
trap 'rm -rf "$inputs"' EXIT
python3 - "$inputs" "$count" <<'EOF'
import os, random, struct, sys
out, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(20261128)
for i in range(n):
    fields = [rng.choice([-1, 1]) * 10 ** rng.uniform(-3, 3) for _ in range(4)]
    # Integer fields read the low bytes of the doubles: small orders and indices.
    with open(os.path.join(out, f"{i:06}"), "wb") as fh:
        fh.write(struct.pack("<4d", *fields))
EOF
seconds_of() { # seconds_of BINARY: wall time of one run over every input
  local t0 t1
  t0=$(date +%s.%N)
  NUMFUZZ_ABORT=0 NUMFUZZ_REPORT=json "$1" "$inputs"/* >/dev/null 2>&1 || true
  t1=$(date +%s.%N)
  echo "$t0 $t1" | awk '{ printf "%.3f", $2 - $1 }'
}
printf '%-28s %9s %9s %9s %12s %12s\n' function "plain MB" "taint x" "shadow x" "taint time" "shadow time"
for f in "${functions[@]}"; do
  b="$bins/$f"
  if [ ! -x "$b" ] || [ ! -x "$b.taint" ] || [ ! -x "$b.shadow" ]; then
    echo "bench-shadow-cost.sh: $b (with .taint and .shadow) is missing; run targets/gsl/build.sh" >&2
    exit 1
  fi
  plain=$(seconds_of "$b")
  taint=$(seconds_of "$b.taint")
  shadow=$(seconds_of "$b.shadow")
  size() { stat -c %s "$1"; }
  awk -v f="$f" -v p="$plain" -v t="$taint" -v s="$shadow" -v sp="$(size "$b")" -v st="$(size "$b.taint")" \
    -v ss="$(size "$b.shadow")" 'BEGIN {
      printf "%-28s %9.1f %8.2fx %8.2fx %11.2fx %11.2fx\n", f, sp / 1048576, st / sp, ss / sp, t / p, s / p }'
done
echo "(taint x, shadow x: size against the fuzzing build; times: replay of $count inputs against the fuzzing build)"
