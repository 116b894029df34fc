#!/usr/bin/env bash
# Builds numfuzz (release), the runtime as harnesses link it (profile `harness`: LTO, about
# half the size in every program; numfuzz-cc links it while it is current) and adds the
# `numfuzz-c++` name next to `numfuzz-cc` (cargo cannot name a binary with `+`).
#
# usage: scripts/build.sh [--no-lean] [CARGO BUILD ARGS...]
#   --no-lean  skip the LTO build of the runtime (1–2 min after a change to the engine;
#              `scripts/test.sh --fast` uses it): links get the release profile's runtime
set -euo pipefail
cd "$(dirname "$0")/.."
lean=1
if [ "${1:-}" = --no-lean ]; then
  lean=0
  shift
fi
cargo build --release --workspace "$@"
if ((lean)); then
  cargo build --profile harness -p numfuzz-runtime "$@"
fi
target="${CARGO_TARGET_DIR:-target}"
bin="$target/release"
ln -sf numfuzz-cc "$bin/numfuzz-c++"
echo "build.sh: tools in $bin: numfuzz numfuzz-cc numfuzz-c++; links use $("$bin/numfuzz-cc" -print-numfuzz-runtime)"
