#!/usr/bin/env bash
# The GSL distributions benchmark (targets/gsl-cdf): build, one run-all with the mpmath oracle
# (x87 shadow + MPFR ladder beside every harness), then the same campaigns triaged again without
# the .mpfr binaries (the x87 shadow alone), and a summary of both.
#
#   scripts/bench-gsl-cdf.sh [RESULTS_DIR] [--seconds S] [--functions f1,f2,...]
#
# RESULTS_DIR (default results/gsl-cdf-<date>) gets run-all/ (the ladder), run-all-x87/ (a copy
# re-triaged with the .mpfr binaries moved aside) and summary.md (targets/gsl-cdf/summary.py).
# Everything runs niced, one job at a time.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
numfuzz="${NUMFUZZ_BIN_DIR:-$root/target/release}/numfuzz"
results=""
seconds=5
functions=gsl_cdf_ugaussian_Q,gsl_cdf_gaussian_Pinv,gsl_cdf_gamma_P,gsl_cdf_gamma_Q,gsl_cdf_gamma_Pinv,gsl_cdf_chisq_Qinv,gsl_cdf_beta_P,gsl_cdf_beta_Qinv,gsl_cdf_fdist_Q,gsl_cdf_tdist_P,gsl_cdf_tdist_Qinv,gsl_cdf_lognormal_Q,gsl_cdf_weibull_Pinv,gsl_cdf_gumbel2_Q,gsl_cdf_binomial_Q,gsl_cdf_poisson_P,gsl_cdf_hypergeometric_P,gsl_ran_gamma_pdf,gsl_ran_fdist_pdf,gsl_ran_negative_binomial_pdf
while (($#)); do
  case "$1" in
    --seconds) seconds=${2:?}; shift ;;
    --functions) functions=${2:?}; shift ;;
    -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench-gsl-cdf: unknown option $1" >&2; exit 2 ;;
    *) results=$1 ;;
  esac
  shift
done
results=${results:-$root/results/gsl-cdf-$(date +%Y%m%d-%H%M%S)}
say() { echo "bench-gsl-cdf: $*"; }

nice -n 10 "$root/targets/gsl-cdf/build.sh" --jobs 1
harness="$root/targets/gsl-cdf/build/harness"
oracle="python3 $root/targets/gsl-cdf/oracle.py"
mkdir -p "$results"

# 1. The ladder: x87 shadow, then MPFR where x87 cannot tell; the oracle judges too.
say "run-all, ${seconds} s per function, into $results/run-all"
t0=$(date +%s)
nice -n 10 "$numfuzz" run-all "$harness" -o "$results/run-all" -V "$seconds" --jobs 1 \
  --functions "$functions" --oracle "$oracle" >"$results/run-all.md" 2>"$results/run-all.log" ||
  say "run-all exited $? (see $results/run-all.log)"
say "run-all took $(($(date +%s) - t0)) s"

# 2. The x87 shadow alone: the same campaigns, re-triaged with the .mpfr binaries aside.
rm -rf "$results/run-all-x87"
cp -a "$results/run-all" "$results/run-all-x87"
aside="$harness/mpfr-aside"
mkdir -p "$aside"
restore() { mv "$aside"/*.mpfr "$harness/bin/" 2>/dev/null || true; }
trap restore EXIT
IFS=, read -ra fns <<<"$functions"
for f in "${fns[@]}"; do mv "$harness/bin/$f.mpfr" "$aside/"; done
say "re-triage without the MPFR builds into $results/run-all-x87"
t0=$(date +%s)
nice -n 10 "$numfuzz" run-all "$harness" -o "$results/run-all-x87" -V "$seconds" --jobs 1 \
  --functions "$functions" --oracle "$oracle" --retriage >"$results/run-all-x87.md" 2>"$results/run-all-x87.log" ||
  say "run-all --retriage exited $? (see $results/run-all-x87.log)"
say "re-triage took $(($(date +%s) - t0)) s"
restore

python3 "$root/targets/gsl-cdf/summary.py" "$results/run-all" "$results/run-all-x87" | tee "$results/summary.md"
