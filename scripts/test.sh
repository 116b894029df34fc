#!/usr/bin/env bash
# The project's test command (what CI runs): install, build, unit + integration tests,
# clippy, rustfmt, the module-cycle check (scripts/lib/module_cycles.py), the book's links
# (scripts/lib/check_links.py), unused dependencies (cargo machete) and the book itself
# (mdbook build docs). Integration
# tests compile real C with the release numfuzz-cc.
#
#   scripts/test.sh          everything (CI): also the GSL and fdlibm suites, which build
#                            GSL and newlib's libm from Debian's sources on first use
#   scripts/test.sh --fast   the developer's loop (under 3 minutes on 2 cores once built): unit
#                            tests, clippy, rustfmt, and the integration tests that compile small C
#                            files and replay them or fuzz for seconds; not the suites that build
#                            GSL or fdlibm, the campaign-length tests (campaign, cmp_solving,
#                            local_search, faults), the exactness property (fenv_property,
#                            1.2 million operations) or the book's tour (book_tour, 30 builds
#                            and a campaign); no setup step and no book build (its links are
#                            checked)
#
# Either way it fails if a process started by a test outlives the suite (see `leftovers`).
set -euo pipefail
cd "$(dirname "$0")/.."

# Every process the tests start inherits this mark (numfuzz passes its environment on to
# targets, clients and forkservers); one that still carries it once the suite has ended
# outlived its test, whatever session it moved to.
mark="NUMFUZZ_TEST_RUN=$$-$(date +%s%N)"
leftovers() {
  local env pid
  for env in /proc/[0-9]*/environ; do
    pid=${env#/proc/}
    pid=${pid%/environ}
    if grep -qzxF "$mark" "$env" 2>/dev/null; then echo "$pid"; fi
  done
}
# At the end, pass or fail: 10 s for what is still stopping, then each leftover is shown and
# killed, and the suite fails. `passed` is what to say when everything passed.
passed=""
check_leftovers() {
  local code=$? pids until=$((SECONDS + 10))
  unset NUMFUZZ_TEST_RUN # the check's own commands must not carry the mark
  while mapfile -t pids < <(leftovers) && ((${#pids[@]} && SECONDS < until)); do
    sleep 0.2
  done
  if ((${#pids[@]})); then
    echo "test.sh: ${#pids[@]} process(es) started by the tests outlived them:" >&2
    ps -o pid,ppid,stat,etime,args -p "$(
      IFS=,
      echo "${pids[*]}"
    )" >&2 || true
    kill -KILL "${pids[@]}" 2>/dev/null || true
    code=1
  fi
  if ((code == 0)); then echo "$passed"; fi
  exit "$code"
}

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
      gsl | fdlibm | campaign | cmp_solving | local_search | faults | fenv_property | book_tour) ;;
      *) quick+=(--test "$name") ;;
    esac
  done
  export "$mark"
  trap check_leftovers EXIT
  cargo test --release --workspace --lib --bins
  cargo test --release -p numfuzz-cc --tests
  cargo test --release -p numfuzz "${quick[@]}"
  cargo clippy --release --workspace --all-targets -- -D warnings
  cargo fmt --all -- --check
  python3 scripts/lib/module_cycles.py --self-test
  python3 scripts/lib/module_cycles.py
  python3 scripts/lib/check_links.py
  passed="test.sh --fast: all checks passed in $((SECONDS - start)) s (scripts/test.sh runs the rest)"
  exit 0
fi

scripts/setup.sh
scripts/build.sh
export "$mark"
trap check_leftovers EXIT
cargo test --release --workspace
cargo clippy --release --workspace --all-targets -- -D warnings
cargo fmt --all -- --check
python3 scripts/lib/module_cycles.py --self-test
python3 scripts/lib/module_cycles.py
python3 scripts/lib/check_links.py
cargo machete
mdbook build docs
passed="test.sh: all checks passed"
