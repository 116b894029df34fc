#!/usr/bin/env bash
# The project's test command (what CI runs): install, build, unit + integration tests,
# clippy and rustfmt. Integration tests compile real C with the release numfuzz-cc.
#
#   scripts/test.sh          everything (CI): also the GSL and fdlibm suites, which build
#                            GSL and newlib's libm from Debian's sources on first use
#   scripts/test.sh --fast   the developer's loop (under 3 minutes on 2 cores once built): unit
#                            tests, clippy, rustfmt, and the integration tests that compile small C
#                            files and replay them or fuzz for seconds; not the suites that build
#                            GSL or fdlibm, the campaign-length tests (campaign, cmp_solving,
#                            local_search, faults) or the exactness property (fenv_property,
#                            1.2 million operations); no setup step
set -euo pipefail
cd "$(dirname "$0")/.."

fast=0
case "${1:-}" in
  "") ;;
  --fast) fast=1 ;;
  *)
    echo "test.sh: unknown argument \`$1\`; use \`scripts/test.sh\` or \`scripts/test.sh --fast\`" >&2
    exit 2
    ;;
esac

if ((fast)); then
  start=$SECONDS
  scripts/build.sh --no-lean
  # Every integration test of the numfuzz crate but the slow ones (see above).
  quick=()
  for t in fuzzer/tests/*.rs; do
    name=$(basename "$t" .rs)
    case "$name" in
      gsl | fdlibm | campaign | cmp_solving | local_search | faults | fenv_property) ;;
      *) quick+=(--test "$name") ;;
    esac
  done
  cargo test --release --workspace --lib --bins
  cargo test --release -p numfuzz-cc --tests
  cargo test --release -p numfuzz "${quick[@]}"
  cargo clippy --release --workspace --all-targets -- -D warnings
  cargo fmt --all -- --check
  echo "test.sh --fast: all checks passed in $((SECONDS - start)) s (scripts/test.sh runs the rest)"
  exit 0
fi

scripts/setup.sh
scripts/build.sh
cargo test --release --workspace
cargo clippy --release --workspace --all-targets -- -D warnings
cargo fmt --all -- --check
echo "test.sh: all checks passed"
