#!/usr/bin/env bash
# The project's test command (what CI runs): install, build, unit + integration tests,
# clippy and rustfmt. Integration tests compile real C with the release numfuzz-cc.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cargo test --release --workspace
cargo clippy --release --workspace --all-targets -- -D warnings
cargo fmt --all -- --check
echo "test.sh: all checks passed"
