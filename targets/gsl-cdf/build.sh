#!/usr/bin/env bash
# GSL's distributions (gsl_cdf_* of gsl/gsl_cdf.h and the numbers-only gsl_ran_*_pdf of
# gsl/gsl_randist.h), harnessed by `numfuzz harness` with conventions.toml, built four ways.
#
#   targets/gsl-cdf/build.sh [--jobs N]
#
# Output: targets/gsl-cdf/build/harness/ (manifest.json, src/, skipped.md) with, for each
# function F, bin/F (numfuzz-cc), bin/F.taint, bin/F.shadow (x87) and bin/F.mpfr: a harness
# directory for `numfuzz run-all`.
#
# DECISION. targets/gsl/build.sh's replay builds (taint, shadow, mpfr) cover only what the
# special functions link (no cdf/ nor randist/), and `numfuzz harness --build` builds three
# variants (fuzz, taint, shadow), not the MPFR one. So this script reuses only GSL's *source*
# (the tree targets/gsl/build.sh unpacks from Debian's source package into
# targets/gsl/build/src; it runs that script's --specfunc-only build once if the tree is
# missing), configures it once (numfuzz-cc, no variant switch, as targets/gsl/build.sh does:
# config.h must be the same for every variant), copies that configured tree once per
# variant, makes only the directories the distributions link (gsl utils sys err complex poly
# specfunc cdf rng randist) with the variant's switch, and links each harness with
# targets/gsl/harness.mk against those archives. About 340 compile units per variant.
#
# Everything goes to targets/gsl-cdf/build/ (NUMFUZZ_GSL_CDF_BUILD moves it). A second run
# does nothing: each variant's library is keyed on numfuzz-cc, its LLVM passes and headers;
# each binary also on the numfuzz runtime (harness.mk's KEY).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin_dir="${NUMFUZZ_BIN_DIR:-${CARGO_TARGET_DIR:-$root/target}/release}"
case "$bin_dir" in /*) ;; *) bin_dir="$root/$bin_dir" ;; esac
build="${NUMFUZZ_GSL_CDF_BUILD:-$here/build}"
case "$build" in /*) ;; *) build="$(pwd)/$build" ;; esac
gsl_build="${NUMFUZZ_GSL_BUILD:-$root/targets/gsl/build}"
cc="$bin_dir/numfuzz-cc"
numfuzz="$bin_dir/numfuzz"
jobs=$(nproc)
while (($#)); do
  case "$1" in
    --jobs)
      jobs="${2:?--jobs needs a number}"
      shift
      ;;
    -h | --help)
      sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "gsl-cdf/build.sh: unknown argument \`$1\` (see --help)" >&2
      exit 2
      ;;
  esac
  shift
done

say() { echo "gsl-cdf/build.sh: $*"; }
die() {
  echo "gsl-cdf/build.sh: error: $*" >&2
  exit 1
}
now() { date +%s; }

[ -x "$cc" ] || die "$cc is missing; build numfuzz first (scripts/build.sh)"
[ -x "$numfuzz" ] || die "$numfuzz is missing; build numfuzz first (scripts/build.sh)"
runtime=$("$cc" -print-numfuzz-runtime)
[ -e "$runtime" ] || die "$runtime is missing; build numfuzz first (scripts/build.sh)"

mkdir -p "$build"
exec 9>"$build/.lock"
flock -n 9 || {
  say "waiting for another build.sh in $build"
  flock 9
}

# --- GSL's source, as targets/gsl/build.sh unpacked it ----------------------------------------
find_src() { find "$gsl_build/src" -maxdepth 1 -type d -name 'gsl-2.7.1*' 2>/dev/null | head -1; }
src=$(find_src)
if [ -z "$src" ] || [ ! -e "$gsl_build/src/.unpacked" ]; then
  say "no GSL source in $gsl_build/src: running targets/gsl/build.sh --specfunc-only once to fetch it"
  "$root/targets/gsl/build.sh" --specfunc-only --no-taint --no-shadow --no-mpfr --jobs "$jobs"
  src=$(find_src)
  [ -n "$src" ] || die "targets/gsl/build.sh left no GSL source in $gsl_build/src"
fi
say "source: $src"

# --- the toolchain key ------------------------------------------------------------------------
probe="$build/.probe"
mkdir -p "$probe"
echo 'int numfuzz_probe(void) { return 0; }' >"$probe/p.c"
cmdline=$(NUMFUZZ_CC_VERBOSE=1 "$cc" -c "$probe/p.c" -o "$probe/p.o" 2>&1) || die "numfuzz-cc cannot compile: $cmdline"
pass=$(grep -o -- '-fpass-plugin=[^" ]*' <<<"$cmdline" | head -1 | cut -d= -f2)
inc=$(grep -o -- '-I[^" ]*include' <<<"$cmdline" | head -1 | cut -c3-)
[ -n "$pass" ] && [ -e "$pass" ] || die "cannot find numfuzz-cc's LLVM pass (verbose output: $cmdline)"
tc_files=("$cc" "$pass" "$inc/numfuzz.h" "$inc/numfuzz_abi.h")
[ -e "$(dirname "$pass")/numfuzz-shadow.so" ] && tc_files+=("$(dirname "$pass")/numfuzz-shadow.so")
[ -e "$inc/numfuzz_dfsan_abilist.txt" ] && tc_files+=("$inc/numfuzz_dfsan_abilist.txt")
lib_key=$( (cat "${tc_files[@]}" && echo "$src") | sha256sum | cut -d' ' -f1)
bin_key=$(cat "${tc_files[@]}" "$runtime" | sha256sum | cut -d' ' -f1)

# --- one configured tree ----------------------------------------------------------------------
tmpl="$build/configured"
if [ "$(cat "$tmpl/stamp" 2>/dev/null)" != "$lib_key" ]; then
  rm -rf "$tmpl"
  mkdir -p "$tmpl/obj"
  say "configure (CC=numfuzz-cc; log: $tmpl/configure.log)"
  t0=$(now)
  (cd "$tmpl/obj" && "$src/configure" CC="$cc" CFLAGS="-O2 -g" --disable-shared --prefix="$tmpl/prefix" \
    >"$tmpl/configure.log" 2>&1) || die "configure failed; see $tmpl/configure.log"
  # The dfsg tarball's doc/ lacks the .rst files its Makefile wants.
  printf 'all install check clean distclean install-data install-exec uninstall installdirs:\n\t@:\n' >"$tmpl/obj/doc/Makefile"
  # gsl/: the directory of header links every compile includes.
  make -C "$tmpl/obj/gsl" >>"$tmpl/configure.log" 2>&1 || die "make in gsl/ failed; see $tmpl/configure.log"
  echo "$lib_key" >"$tmpl/stamp"
  say "configured in $(($(now) - t0)) s"
fi
# The headers as real files: obj/gsl/ holds symlinks into the source tree, and `numfuzz harness`
# resolves them (then the header is no longer under the -I directory and the harnesses include
# "gsl_cdf.h" instead of "gsl/gsl_cdf.h").
include="$build/include"
if [ "$(cat "$include/stamp" 2>/dev/null)" != "$lib_key" ]; then
  rm -rf "$include"
  mkdir -p "$include"
  cp -rL "$tmpl/obj/gsl" "$include/gsl"
  echo "$lib_key" >"$include/stamp"
fi

# --- the four libraries -----------------------------------------------------------------------
dirs=(utils sys err complex poly specfunc cdf rng randist)
# The fuzz and taint builds name GSL's error hook (conventions.toml's `error_hook`), so that
# replays say where GSL reported an error that a caller dropped.
hook="NUMFUZZ_CC_ERROR_HOOK=$(sed -n 's/^error_hook *= *"\([^"]*\)".*/\1/p' "$here/conventions.toml")"
variant_env() {
  case $1 in
    fuzz) echo "$hook" ;;
    taint) echo NUMFUZZ_CC_TAINT=1 "$hook" ;;
    shadow) echo NUMFUZZ_CC_SHADOW=1 ;;
    mpfr) echo NUMFUZZ_CC_SHADOW=mpfr ;;
  esac
}
build_variant() {
  local v=$1 dir="$build/$1" envs=() d t0
  read -ra envs <<<"$(variant_env "$v")"
  if [ "$(cat "$dir/stamp" 2>/dev/null)" = "$lib_key" ]; then
    say "$v library: up to date"
    return
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  # A VPATH tree: its Makefiles name the source by absolute path and the build by relative
  # ones, so a copy (timestamps kept, so nothing reconfigures) builds in place.
  cp -a "$tmpl/obj" "$dir/obj"
  t0=$(now)
  say "$v library: make -j$jobs in ${dirs[*]}${envs:+ (${envs[*]})}; log: $dir/build.log"
  for d in "${dirs[@]}"; do
    env "${envs[@]}" make -C "$dir/obj/$d" -j"$jobs" >>"$dir/build.log" 2>&1 || die "make in $d ($v) failed; see $dir/build.log"
  done
  echo "$lib_key" >"$dir/stamp"
  say "$v library: built in $(($(now) - t0)) s"
}
archives() {
  local obj=$1 libs="-Wl,--start-group" d
  for d in "${dirs[@]}"; do
    [ "$d" = utils ] && continue
    libs+=" $obj/$d/.libs/libgsl$d.a"
  done
  echo "$libs -Wl,--end-group"
}

for v in fuzz taint shadow mpfr; do build_variant "$v"; done

# --- the harnesses ----------------------------------------------------------------------------
[ -e "$here/conventions.toml" ] || die "$here/conventions.toml is missing"
gen="$build/harness"
inputs=("$here/conventions.toml" "$numfuzz" "$here/build.sh" "$include/stamp")
if ! [ -e "$gen/manifest.json" ] || [ -n "$(find "${inputs[@]}" -newer "$gen/manifest.json" 2>/dev/null)" ]; then
  # Generated beside, then only the sources that changed are copied (their binaries relink;
  # the others, and bin/, stay as they are).
  rm -rf "$gen.new"
  "$numfuzz" harness "$include/gsl/gsl_cdf.h" "$include/gsl/gsl_randist.h" \
    --include '^gsl_cdf_|^gsl_ran_[a-z0-9_]+_pdf$' --conventions "$here/conventions.toml" \
    -o "$gen.new" -- -I "$include" >"$build/harness.log" 2>&1 || die "numfuzz harness failed; see $build/harness.log"
  mkdir -p "$gen/src"
  for f in "$gen.new"/src/*.c; do
    cmp -s "$f" "$gen/src/${f##*/}" || cp "$f" "$gen/src/"
  done
  for f in "$gen"/src/*.c; do
    [ -e "$gen.new/src/${f##*/}" ] || rm -f "$f"
  done
  cp "$gen.new/skipped.md" "$gen.new/manifest.json" "$gen/"
  rm -rf "$gen.new"
  say "harnesses: $(ls "$gen/src" | wc -l) generated ($(head -1 "$build/harness.log"))"
fi
mapfile -t functions < <(python3 -c 'import json,sys; [print(h["function"]) for h in json.load(open(sys.argv[1]))["harnesses"]]' "$gen/manifest.json")
mkdir -p "$gen/bin"
for v in fuzz taint shadow mpfr; do
  echo "$bin_key" >"$build/$v/toolchain.key.new"
  cmp -s "$build/$v/toolchain.key.new" "$build/$v/toolchain.key" || mv "$build/$v/toolchain.key.new" "$build/$v/toolchain.key"
  rm -f "$build/$v/toolchain.key.new"
  suffix=""
  [ "$v" = fuzz ] || suffix=".$v"
  read -ra envs <<<"$(variant_env "$v")"
  targets=()
  for f in "${functions[@]}"; do targets+=("$gen/bin/$f$suffix"); done
  t0=$(now)
  env "${envs[@]}" make -s -f "$root/targets/gsl/harness.mk" -j"$jobs" CC="$cc" SRC="$gen/src" OUT="$gen/bin" \
    SUFFIX="$suffix" LIBS="$(archives "$build/$v/obj")" INCLUDE="$include" PRIVATE="$src/randist" \
    KEY="$build/$v/toolchain.key" "${targets[@]}" >>"$build/link-$v.log" 2>&1 ||
    die "linking the $v harnesses failed; see $build/link-$v.log"
  say "$v harnesses: ${#targets[@]} in $gen/bin ($(($(now) - t0)) s)"
done
