#!/usr/bin/env bash
# GSL 2.7.1 from Debian's source package, built with numfuzz-cc, and one harness per
# gsl_sf_*_e function with numeric arguments (written by `numfuzz harness` from the installed
# headers and conventions.toml).
#
#   targets/gsl/build.sh [--specfunc-only] [--no-coverage] [--no-taint] [--no-shadow] [--no-mpfr] [--afl] [--functions f1,f2,...] [--jobs N]
#
# Default: the whole library instrumented (so an exception inside a helper such as
# sys/ or complex/ is located in its own source file), a coverage build of the whole library
# (NUMFUZZ_CC_COVERAGE=1, for llvm-cov), a taint build of what the special functions link
# (NUMFUZZ_CC_TAINT=1, for the consequences numfuzz triage computes), a shadow build of the
# same (NUMFUZZ_CC_SHADOW=1, the reference triage uses without an oracle), an MPFR shadow build
# of the same (NUMFUZZ_CC_SHADOW=mpfr, asked where the x87 shadow cannot tell), the generated
# harnesses, and the harness binaries:
#   build/bin/fuzz/<function>         numfuzz-cc harness, for numfuzz run / afl-fuzz / triage
#   build/bin/fuzz/<function>.taint   its taint build (numfuzz triage finds it beside the target)
#   build/bin/fuzz/<function>.shadow  its shadow build (likewise)
#   build/bin/fuzz/<function>.mpfr    its MPFR shadow build (likewise)
#   build/bin/cov/<function>         llvm-cov build of the same harness (replays files)
# --afl also builds the baseline AFL++ at its best needs (scripts/bench-gsl.sh --afl): what the
# special functions link, compiled with afl-clang-fast (build/afl) and again with CmpLog
# (build/afl-cmplog, AFL_LLVM_CMPLOG=1), and each harness linked with targets/afl/driver.c
# (persistent mode, exceptions trapped as crashes):
#   build/bin/afl/<function>          afl-fuzz's target
#   build/bin/afl/<function>.cmplog   its CmpLog build (afl-fuzz -c)
# --specfunc-only builds only the sub-libraries the special functions need outside the
# Mathieu functions (gsl utils sys err complex specfunc, all instrumented) into
# build/specfunc (and build/specfunc-taint, -shadow, -mpfr) and its harnesses into build/bin/specfunc/. The
# README demo uses it: it is several times faster than the full build. The Mathieu harnesses
# cannot link against it and are left out there.
#
# Everything goes to targets/gsl/build/ (git-ignored; NUMFUZZ_GSL_BUILD moves it). A second
# run does nothing: each library build is keyed on the hashes of numfuzz-cc, its LLVM pass and
# its headers, each harness binary also on the numfuzz runtime, so rebuilding numfuzz
# rebuilds what depends on it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin_dir="${NUMFUZZ_BIN_DIR:-${CARGO_TARGET_DIR:-$root/target}/release}"
case "$bin_dir" in /*) ;; *) bin_dir="$root/$bin_dir" ;; esac
build="${NUMFUZZ_GSL_BUILD:-$here/build}"
case "$build" in /*) ;; *) build="$(pwd)/$build" ;; esac
cc="$bin_dir/numfuzz-cc"
gsl_version=2.7.1

specfunc_only=0
coverage=1
taint=1
shadow=1
mpfr=1
afl=0
functions=""
jobs=$(nproc)
while (($#)); do
  case "$1" in
    --specfunc-only) specfunc_only=1 ;;
    --no-coverage) coverage=0 ;;
    --no-taint) taint=0 ;;
    --no-shadow) shadow=0 ;;
    --no-mpfr) mpfr=0 ;;
    --afl) afl=1 ;;
    --functions)
      functions="${2:?--functions needs a comma-separated list}"
      shift
      ;;
    --functions=*) functions="${1#*=}" ;;
    --jobs)
      jobs="${2:?--jobs needs a number}"
      shift
      ;;
    -h | --help)
      sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "gsl/build.sh: unknown argument \`$1\` (see --help)" >&2
      exit 2
      ;;
  esac
  shift
done
case "$jobs" in '' | *[!0-9]* | 0)
  echo "gsl/build.sh: --jobs needs a positive number, got \`$jobs\`" >&2
  exit 2
  ;;
esac

say() { echo "gsl/build.sh: $*"; }
die() {
  echo "gsl/build.sh: error: $*" >&2
  exit 1
}
now() { date +%s; }

[ -x "$cc" ] || die "$cc is missing; build numfuzz first (scripts/build.sh)"
# The runtime archive links use (the lean build when it is current): binaries are keyed on it.
runtime=$("$cc" -print-numfuzz-runtime)
[ -e "$runtime" ] || die "$runtime is missing; build numfuzz first (scripts/build.sh)"
command -v python3 >/dev/null || die "python3 is missing (scripts/setup.sh installs it)"
command -v clang-19 >/dev/null || die "clang-19 is missing (scripts/setup.sh installs it)"
if ((afl)); then command -v afl-clang-fast >/dev/null || die "afl-clang-fast is missing (scripts/setup.sh installs afl++)"; fi

# --- 1. sources ------------------------------------------------------------------------------

# add_deb_src: deb-src twins of the configured Debian entries, so that `apt-get source` works.
. "$here/../../scripts/lib/deb-src.sh"

have_gsl_source_index() { apt-cache showsrc gsl 2>/dev/null | grep -q '^Package: gsl$'; }

fetch_source() {
  local dl="$build/src"
  src=""
  [ -d "$dl" ] && src=$(find "$dl" -maxdepth 1 -type d -name "gsl-$gsl_version*" | head -1)
  if [ -n "$src" ] && [ -e "$dl/.unpacked" ]; then
    return
  fi
  [ "$(id -u)" -eq 0 ] || die "fetching GSL needs root (apt-get update, and a deb-src entry if none is configured): run targets/gsl/build.sh as root once"
  command -v dpkg-source >/dev/null || die "dpkg-source is missing (apt-get install dpkg-dev, or run scripts/setup.sh)"
  if ! have_gsl_source_index; then
    if ! grep -rqsE '^[[:space:]]*deb-src[[:space:]]|^Types:.*deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
      add_deb_src
    fi
    say "apt-get update (for the source package index)"
    apt-get update -qq || die "apt-get update failed; check the network and /etc/apt/sources.list.d"
    have_gsl_source_index || die "apt knows no source package gsl even with deb-src entries; check /etc/apt/sources.list.d"
  fi
  rm -rf "$dl"
  mkdir -p "$dl"
  say "apt-get source gsl (Debian's GSL $gsl_version, ~7 MB)"
  (cd "$dl" && apt-get source -qq gsl >"$dl/apt-get-source.log" 2>&1) ||
    die "apt-get source gsl failed (log: $dl/apt-get-source.log)"
  src=$(find "$dl" -maxdepth 1 -type d -name "gsl-$gsl_version*" | head -1)
  [ -n "$src" ] || die "apt-get source gsl did not unpack GSL $gsl_version (got: $(ls "$dl")); this recipe is for Debian 12's gsl 2.7.1"
  touch "$dl/.unpacked"
}

# --- 2. libraries ----------------------------------------------------------------------------

# What an instrumented object depends on: numfuzz-cc, its pass plugin and its headers. The
# pass and header paths are the ones numfuzz-cc really uses (from its verbose command line).
toolchain_files() {
  local probe="$build/.probe"
  mkdir -p "$probe"
  echo 'int numfuzz_probe(void) { return 0; }' >"$probe/p.c"
  local cmdline
  cmdline=$(NUMFUZZ_CC_VERBOSE=1 "$cc" -c "$probe/p.c" -o "$probe/p.o" 2>&1) || die "numfuzz-cc cannot compile: $cmdline"
  local pass inc
  pass=$(grep -o -- '-fpass-plugin=[^" ]*' <<<"$cmdline" | head -1 | cut -d= -f2)
  inc=$(grep -o -- '-I[^" ]*include' <<<"$cmdline" | head -1 | cut -c3-)
  [ -n "$pass" ] && [ -e "$pass" ] || die "cannot find numfuzz-cc's LLVM pass (verbose output: $cmdline)"
  echo "$cc" "$pass" "$(dirname "$pass")/numfuzz-shadow.so" "$inc/numfuzz.h" "$inc/numfuzz_abi.h" "$inc/numfuzz_dfsan_abilist.txt"
}

key_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

# Writes KEY to FILE only when it changed, so that FILE's mtime says when the toolchain changed.
update_key() {
  local file=$1 key=$2
  if [ "$(cat "$file" 2>/dev/null)" != "$key" ]; then
    mkdir -p "$(dirname "$file")"
    echo "$key" >"$file"
  fi
}

# The doc/ directory of the dfsg tarball lacks the .rst files its stale Makefile.in wants.
stub_doc_makefile() {
  printf 'all install check clean distclean install-data install-exec uninstall installdirs:\n\t@:\n' >"$1/doc/Makefile"
}

# The environment of a variant's compiles. A taint build configures without it (configure's
# link tests would see DataFlowSanitizer's renamed symbols and conclude that functions are
# missing, and config.h must match the fuzz build's) and compiles with it; so does a shadow
# build (its config.h must match too).
# numfuzz-cc's builds name GSL's error hook (conventions.toml's `error_hook`), so that replays
# say where GSL reported an error that a caller then dropped.
variant_env() {
  local hook
  hook="NUMFUZZ_CC_ERROR_HOOK=$(sed -n 's/^error_hook *= *"\([^"]*\)".*/\1/p' "$here/conventions.toml")"
  case $1 in
    cov) echo NUMFUZZ_CC_COVERAGE=1 ;;
    taint | specfunc-taint) echo NUMFUZZ_CC_TAINT=1 "$hook" ;;
    shadow | specfunc-shadow) echo NUMFUZZ_CC_SHADOW=1 ;;
    mpfr | specfunc-mpfr) echo NUMFUZZ_CC_SHADOW=mpfr ;;
    afl) echo AFL_QUIET=1 ;;
    afl-cmplog) echo AFL_QUIET=1 AFL_LLVM_CMPLOG=1 ;;
    *) echo "$hook" ;;
  esac
}

# The compiler of a variant: afl-clang-fast for the AFL++ baseline, numfuzz-cc otherwise.
variant_cc() {
  case $1 in
    afl*) command -v afl-clang-fast ;;
    *) echo "$cc" ;;
  esac
}

# build_library VARIANT KEY [DIRS...]: configure with numfuzz-cc (env of the variant) and make
# either everything (+ install) or only DIRS.
build_library() {
  local variant=$1 key=$2
  shift 2
  local dir="$build/$variant" obj="$build/$variant/obj" prefix="$build/$variant/prefix"
  local stamp="$dir/stamp"
  if [ "$(cat "$stamp" 2>/dev/null)" = "$key" ]; then
    say "$variant library: up to date ($dir)"
    return
  fi
  local envs=() make_envs=()
  read -ra make_envs <<<"$(variant_env "$variant")"
  case $variant in *taint | *shadow | *mpfr) ;; *) envs=("${make_envs[@]}") ;; esac
  rm -f "$stamp"
  mkdir -p "$obj"
  local log="$dir/build.log" t0 t1 t2
  : >"$log"
  t0=$(now)
  if [ ! -e "$obj/config.status" ] || [ "$(cat "$dir/configured-with" 2>/dev/null)" != "$key" ]; then
    say "$variant library: configure (CC=$(basename "$(variant_cc "$variant")")${envs:+, ${envs[*]}}; log: $log)"
    rm -rf "$obj"
    mkdir -p "$obj"
    (cd "$obj" && env "${envs[@]}" "$src/configure" CC="$(variant_cc "$variant")" CFLAGS="-O2 -g" --disable-shared \
      --prefix="$prefix" >>"$log" 2>&1) || die "configure failed; see $log"
    stub_doc_makefile "$obj"
    echo "$key" >"$dir/configured-with"
  fi
  t1=$(now)
  if (($#)); then
    say "$variant library: make -j$jobs in $* (configure took $((t1 - t0)) s)"
    for d in "$@"; do
      env "${make_envs[@]}" make -C "$obj/$d" -j"$jobs" >>"$log" 2>&1 || die "make in $d failed; see $log"
    done
  else
    say "$variant library: make -j$jobs, all of GSL (configure took $((t1 - t0)) s)"
    env "${make_envs[@]}" make -C "$obj" -j"$jobs" >>"$log" 2>&1 || die "make failed; see $log"
    env "${make_envs[@]}" make -C "$obj" install >>"$log" 2>&1 || die "make install failed; see $log"
  fi
  t2=$(now)
  say "$variant library: built in $((t2 - t0)) s (configure $((t1 - t0)) s, make $((t2 - t1)) s)"
  echo "$key" >"$stamp"
}

# --- 3. harnesses ----------------------------------------------------------------------------

# build_harnesses VARIANT LIBS INCLUDE [BIN [SUFFIX]]: links the harnesses into build/bin/BIN
# (default: the variant's name) as <function>SUFFIX, with the variant's environment.
build_harnesses() {
  local variant=$1 libs=$2 include=$3 bin=${4:-$1} suffix=${5:-}
  local out="$build/bin/$bin" list=() envs=() make_vars=()
  read -ra envs <<<"$(variant_env "$variant")"
  # The baseline's harnesses get the AFL++ driver (and numfuzz.h's include directory); its
  # clang links with its own linker.
  [[ $variant == afl* ]] && make_vars=(EXTRA="-I$numfuzz_include $here/../afl/driver.c" LDFLAGS_FAST=)
  mkdir -p "$out"
  if [ -n "$functions" ]; then
    IFS=, read -ra list <<<"$functions"
  else
    mapfile -t list < <(python3 -c 'import json,sys; [print(h["function"]) for h in json.load(open(sys.argv[1]))["harnesses"]]' "$build/harness/manifest.json")
  fi
  local targets=() f
  for f in "${list[@]}"; do
    [ -e "$build/harness/src/$f.c" ] || die "no harness for \`$f\` (see $build/harness/manifest.json and $here/README.md for the list)"
    if [[ $variant == specfunc* || ($variant == afl* && $specfunc_only == 1) ]] && [[ $f == gsl_sf_mathieu_* ]]; then
      say "skipping $f in the specfunc-only build (it needs GSL's linear algebra)"
      continue
    fi
    targets+=("$out/$f$suffix")
  done
  local t0 t1
  t0=$(now)
  env "${envs[@]}" make -s -f "$here/harness.mk" -j"$jobs" CC="$(variant_cc "$variant")" SRC="$build/harness/src" OUT="$out" \
    SUFFIX="$suffix" LIBS="$libs" INCLUDE="$include" PRIVATE="$src/specfunc" KEY="$build/$variant/toolchain.key" \
    "${make_vars[@]}" "${targets[@]}" ||
    die "building the $variant harnesses failed"
  t1=$(now)
  say "$variant harnesses: ${#targets[@]} in $out ($((t1 - t0)) s)"
}

# The internal functions (internal-functions.tsv: name, private header) and their headers.
mapfile -t internal_names < <(grep -v '^#' "$here/internal-functions.tsv" | cut -f1)
mapfile -t internal_headers < <(grep -v '^#' "$here/internal-functions.tsv" | cut -f2 | sort -u)
internal_functions="^($(IFS='|'; echo "${internal_names[*]}"))\$"

# generate INCLUDE: `numfuzz harness` over the installed gsl_sf_*.h (every `_e` function) and
# over the private headers (the internal functions), with conventions.toml, into
# build/harness (src/<function>.c, manifest.json, skipped.md): one manifest for both.
generate() {
  local include=$1 gen="$build/harness" numfuzz="$bin_dir/numfuzz"
  local inputs=("$include/gsl/gsl_sf.h" "$here/conventions.toml" "$here/internal-functions.tsv" "$numfuzz" "$here/build.sh")
  local newest
  # -L: gsl_sf.h is a symbolic link, which a library build recreates; -nt reads its target.
  newest=$(ls -tL "${inputs[@]}" | head -1)
  if [ -e "$gen/manifest.json" ] && [ "$gen/manifest.json" -nt "$newest" ]; then
    return
  fi
  local log="$build/harness.log" private=()
  for h in "${internal_headers[@]}"; do private+=("$src/$h"); done
  rm -rf "$gen" "$gen-internal"
  {
    "$numfuzz" harness "$include"/gsl/gsl_sf_*.h --include '_e$' --conventions "$here/conventions.toml" \
      -o "$gen" -- -I "$include" &&
      "$numfuzz" harness "${private[@]}" --include "$internal_functions" --conventions "$here/conventions.toml" \
        -o "$gen-internal" -- -I "$include" -I "$src/specfunc"
  } >"$log" 2>&1 || die "numfuzz harness failed; see $log"
  cp "$gen-internal"/src/*.c "$gen/src/"
  python3 - "$gen/manifest.json" "$gen-internal/manifest.json" <<'PY' || die "merging the internal harnesses into $gen/manifest.json failed"
import json, sys
public, internal = (json.load(open(p)) for p in sys.argv[1:])
public["harnesses"] += internal["harnesses"]
public["headers"] += internal["headers"]
with open(sys.argv[1], "w") as fh:
    json.dump(public, fh, indent=2)
PY
  say "harnesses: $(grep -c . <<<"$(ls "$gen/src")") generated ($(head -1 "$log"))"
}

# One build at a time per build directory (tests, the benchmark and the demo share it).
mkdir -p "$build"
exec 9>"$build/.lock"
if ! flock -n 9; then
  say "waiting for another build.sh in $build"
  flock 9
fi

fetch_source
say "source: $src"
read -ra tc_files <<<"$(toolchain_files)"
lib_key=$(key_of "${tc_files[@]}")
bin_key=$(key_of "${tc_files[@]}" "$runtime")
numfuzz_include=$(dirname "${tc_files[3]:-.}")

# The per-directory archives of a partial build, as one link group.
archives() {
  local obj=$1 libs="-Wl,--start-group" d
  shift
  for d in "$@"; do
    if [ "$d" = cblas ]; then libs+=" $obj/cblas/.libs/libgslcblas.a"; else libs+=" $obj/$d/.libs/libgsl$d.a"; fi
  done
  echo "$libs -Wl,--end-group"
}

# afl_build DIRS...: the AFL++ baseline (see --afl): DIRS compiled with afl-clang-fast, with and
# without CmpLog, and the harnesses linked against each into build/bin/afl. Keyed on
# afl-clang-fast, the driver, numfuzz.h (the harnesses include it) and DIRS.
afl_build() {
  local key variant
  key=$( (cat "$(command -v afl-clang-fast)" "$here/../afl/driver.c" "$numfuzz_include/numfuzz.h" "$numfuzz_include/numfuzz_abi.h" && echo "$*") |
    sha256sum | cut -d' ' -f1)
  for variant in afl afl-cmplog; do
    build_library "$variant" "$key" "$@"
    update_key "$build/$variant/toolchain.key" "$key"
    local suffix=""
    [ "$variant" = afl-cmplog ] && suffix=.cmplog
    build_harnesses "$variant" "$(archives "$build/$variant/obj" "${@:3}")" "$build/$variant/obj" afl "$suffix"
  done
}

# replay_build VARIANT BIN SUFFIX DIRS...: a replay-only build (taint, shadow or mpfr) of DIRS, its
# harnesses linked beside the fuzzing ones in build/bin/BIN as <function>SUFFIX, against the
# archives of DIRS but gsl/ and utils/ (which build none).
replay_build() {
  local variant=$1 bin=$2 suffix=$3
  shift 3
  build_library "$variant" "$lib_key" "$@"
  update_key "$build/$variant/toolchain.key" "$bin_key"
  local vobj="$build/$variant/obj"
  build_harnesses "$variant" "$(archives "$vobj" "${@:3}")" "$vobj" "$bin" "$suffix"
}

if ((specfunc_only)); then
  dirs=(gsl utils sys err complex specfunc)
  build_library specfunc "$lib_key" "${dirs[@]}"
  obj="$build/specfunc/obj"
  generate "$obj"
  update_key "$build/specfunc/toolchain.key" "$bin_key"
  build_harnesses specfunc "$(archives "$obj" sys err complex specfunc)" "$obj"
  if ((taint)); then replay_build specfunc-taint specfunc .taint "${dirs[@]}"; fi
  if ((shadow)); then replay_build specfunc-shadow specfunc .shadow "${dirs[@]}"; fi
  if ((mpfr)); then replay_build specfunc-mpfr specfunc .mpfr "${dirs[@]}"; fi
  if ((afl)); then afl_build "${dirs[@]}" poly; fi
  exit 0
fi

build_library fuzz "$lib_key"
generate "$build/fuzz/prefix/include"
update_key "$build/fuzz/toolchain.key" "$bin_key"
prefix="$build/fuzz/prefix"
build_harnesses fuzz "$prefix/lib/libgsl.a $prefix/lib/libgslcblas.a" "$prefix/include"
# What the special functions link (the Mathieu functions need the linear algebra), as
# measured in ../shared/notes/targets.md: a third of GSL's compile units.
dirs=(gsl utils sys err complex block vector matrix permutation cblas blas linalg eigen specfunc)
# afl_build adds poly/: the CmpLog build calls gsl_poly_eval (an inline function of gsl_poly.h)
# where numfuzz-cc's inlines it, and its definition is there (without it the full build's
# CmpLog harnesses did not link).
if ((taint)); then replay_build taint fuzz .taint "${dirs[@]}"; fi
if ((shadow)); then replay_build shadow fuzz .shadow "${dirs[@]}"; fi
if ((mpfr)); then replay_build mpfr fuzz .mpfr "${dirs[@]}"; fi
if ((afl)); then afl_build "${dirs[@]}" poly; fi
if ((coverage)); then
  build_library cov "$lib_key"
  update_key "$build/cov/toolchain.key" "$bin_key"
  prefix="$build/cov/prefix"
  build_harnesses cov "$prefix/lib/libgsl.a $prefix/lib/libgslcblas.a" "$prefix/include"
fi
