#!/usr/bin/env bash
# Builds numfuzz (release) and adds the `numfuzz-c++` name next to `numfuzz-cc`
# (cargo cannot name a binary with `+`).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --workspace "$@"
bin="${CARGO_TARGET_DIR:-target}/release"
ln -sf numfuzz-cc "$bin/numfuzz-c++"
echo "build.sh: tools in $bin: numfuzz numfuzz-cc numfuzz-c++ libnumfuzz_runtime.a"
