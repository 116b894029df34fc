#!/usr/bin/env bash
# Installs what numfuzz needs on Debian 12 (idempotent). Run as root, or with sudo available.
#   clang-19/llvm-19-dev/libclang-rt-19-dev/lld-19: the compiler numfuzz-cc wraps and the pass API
#   afl++: Debian's AFL++ 4.04c, the peer we are compatible with and benchmark against
#   autoconf/automake/libtool: building autotools projects (tests, GSL)
#   newlib-source: the fdlibm sources of the coverage benchmark; xz-utils unpacks them, binutils
#   (nm, objcopy, ar) builds and checks the fdlibm library
#   tmux: the terminal the campaign-screen test (fuzzer/tests/screen.rs) drives
#   python3-mpmath: the reference oracles of the GSL and fdlibm benchmarks (targets/*/oracle.py,
#   run by Debian's /usr/bin/python3)
#   chromium: the HTML report's test loads the page in headless Chromium (fuzzer/tests/html.rs)
#   libmpfr-dev: the MPFR shadow builds (NUMFUZZ_CC_SHADOW=mpfr): the runtime compiles against
#   mpfr.h and such a build links -lmpfr -lgmp
#   libgsl-dev: a plain GSL (Debian's 2.7.1, built without numfuzz-cc) that the demo's reproducer
#   (numfuzz triage --repro, scripts/demo.sh) builds against with -lgsl -lgslcblas
set -euo pipefail

packages=(clang-19 llvm-19-dev libclang-rt-19-dev lld-19 afl++ autoconf automake libtool make tmux
          newlib-source xz-utils binutils dpkg-dev python3 python3-mpmath gnuplot-nox chromium
          libmpfr-dev libgsl-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      SUDO="sudo"
    else
      echo "setup.sh: need root to install: ${missing[*]} (run as root or install sudo)" >&2
      exit 1
    fi
  fi
  echo "setup.sh: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup.sh: cargo not found; install Rust (https://rustup.rs) and re-run" >&2
  exit 1
fi
# cargo-machete finds dependencies a crate declares and never uses (scripts/test.sh): a fixed
# version, installed once with cargo.
machete_version=0.9.2
if [ "$(cargo machete --version 2>/dev/null)" != "$machete_version" ]; then
  echo "setup.sh: installing cargo-machete $machete_version (cargo install, a minute the first time)"
  cargo install cargo-machete --version "$machete_version" --locked --quiet
fi
# mdbook builds the book (docs/, scripts/test.sh): a fixed version, installed once with cargo.
# Only its search feature: CI builds the book and never serves or watches it.
mdbook_version=0.5.4
if [ "$(mdbook --version 2>/dev/null)" != "mdbook v$mdbook_version" ]; then
  echo "setup.sh: installing mdbook $mdbook_version (cargo install, a few minutes the first time)"
  cargo install mdbook --version "$mdbook_version" --locked --no-default-features --features search --quiet
fi
echo "setup.sh: system packages and mdbook ready"
