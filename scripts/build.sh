#!/usr/bin/env bash
# Builds numfuzz (release), the runtime as harnesses link it (profile `harness`: LTO, about
# half the size in every program; numfuzz-cc links it while it is current) and adds the
# `numfuzz-c++` name next to `numfuzz-cc` (cargo cannot name a binary with `+`). Beside the
# runtime archive it puts libnumfuzz_runtime_core.a, the runtime without the in-process engine,
# which numfuzz-cc links into replay-only builds (taint, shadow, llvm-cov).
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
target="${CARGO_TARGET_DIR:-target}"
# The runtime of PROFILE, and beside it the same built without the engine. Cargo gives both
# builds' archive the same name, so the full one is built first, the core one copied out after
# it (numfuzz-cc links the copy only while it is not older than the full archive), and the
# full one put back into place (cargo links its unchanged build again).
runtime_archives() {
  local profile="$1" dir="$1"
  shift
  [ "$profile" = release ] || dir="$profile"
  cargo build --profile "$profile" -p numfuzz-runtime "$@"
  cargo build --profile "$profile" -p numfuzz-runtime --no-default-features "$@"
  cp "$target/$dir/libnumfuzz_runtime.a" "$target/$dir/libnumfuzz_runtime_core.a.tmp"
  mv "$target/$dir/libnumfuzz_runtime_core.a.tmp" "$target/$dir/libnumfuzz_runtime_core.a"
  cargo build --profile "$profile" -p numfuzz-runtime "$@"
}
cargo build --release --workspace "$@"
if ((lean)); then
  runtime_archives harness "$@"
else
  runtime_archives release "$@"
fi
bin="$target/release"
ln -sf numfuzz-cc "$bin/numfuzz-c++"
echo "build.sh: tools in $bin: numfuzz numfuzz-cc numfuzz-c++; links use $("$bin/numfuzz-cc" -print-numfuzz-runtime) (replay-only builds: $(NUMFUZZ_CC_TAINT=1 "$bin/numfuzz-cc" -print-numfuzz-runtime))"
