#!/usr/bin/env bash
# Builds the fdlibm benchmark: the fdlibm-derived libm of Debian's newlib-source and one
# harness per function of functions.tsv, in up to four variants:
#   fuzz  numfuzz-cc (checkers, ErrBits, edges)              -> BUILD/bin/fuzz/<name>
#   cov   NUMFUZZ_CC_COVERAGE=1 numfuzz-cc -O0 -g (llvm-cov) -> BUILD/bin/cov/<name>
#   shadow NUMFUZZ_CC_SHADOW=1 numfuzz-cc (triage's reference) -> BUILD/bin/shadow/<name>
#   afl   Debian's afl-clang-fast -fsanitize=fuzzer          -> BUILD/bin/afl/<name>
# Everything is cached; a variant is rebuilt when its compiler or flags change.
#
# usage: build.sh [--variants fuzz,cov,afl,shadow] [--functions f1,f2,...] [--jobs N]
# environment: FDLIBM_BUILD_DIR (default targets/fdlibm/build), NUMFUZZ_CC (default: the
#   checkout's target/release/numfuzz-cc), AFL_CC (default afl-clang-fast), FDLIBM_OPT
#   (optimisation of the fuzz and afl variants, default -O0), NEWLIB_TARBALL.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${FDLIBM_BUILD_DIR:-$here/build}
variants=fuzz,cov
functions=""
jobs=$(nproc 2>/dev/null || echo 2)

die() {
  echo "fdlibm/build.sh: $*" >&2
  exit 1
}

while (($#)); do
  case $1 in
    --variants) variants=${2:?--variants needs a list, e.g. fuzz,cov,afl}; shift 2 ;;
    --functions) functions=${2:?--functions needs a list, e.g. sin,pow}; shift 2 ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
    -h | --help) sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument \`$1\` (see --help)" ;;
  esac
done

IFS=, read -r -a variant_list <<<"$variants"
for v in "${variant_list[@]}"; do
  case $v in fuzz | cov | afl | shadow) ;; *) die "unknown variant \`$v\` (use fuzz, cov, afl, shadow)" ;; esac
done

# One build at a time per build directory (the benchmark and the tests share it).
mkdir -p "$build"
exec 9>"$build/.lock"
if command -v flock >/dev/null; then
  flock 9
fi

# --- the function table ------------------------------------------------------------------
declare -A fn_source fn_symbol fn_returns fn_params
all_names=()
while IFS=$'\t' read -r name source symbol returns params; do
  [[ -z $name || $name == \#* ]] && continue
  all_names+=("$name")
  fn_source[$name]=$source fn_symbol[$name]=$symbol fn_returns[$name]=$returns fn_params[$name]=$params
done <"$here/functions.tsv"

names=()
if [ -n "$functions" ]; then
  IFS=, read -r -a names <<<"$functions"
  for n in "${names[@]}"; do
    [ -n "${fn_source[$n]+x}" ] || die "unknown function \`$n\` (the names are the first column of functions.tsv)"
  done
else
  names=("${all_names[@]}")
fi

# Linked name of a symbol: fdlibm's public names are renamed (see rename_map below).
linked_symbol() {
  case $1 in __*) echo "$1" ;; *) echo "fdlibm_$1" ;; esac
}

# --- sources: newlib-source's tarball, extracted once ---------------------------------------
tarball=${NEWLIB_TARBALL:-}
if [ -z "$tarball" ]; then
  tarball=$(ls /usr/src/newlib/newlib-*.tar.* 2>/dev/null | head -n1 || true)
fi
[ -n "$tarball" ] && [ -f "$tarball" ] ||
  die "newlib's source tarball is missing (/usr/src/newlib/newlib-*.tar.*): run scripts/setup.sh (installs newlib-source) or set NEWLIB_TARBALL"

src=$build/src
stamp="$tarball $(stat -c '%s %Y' "$tarball")"
if [ "$(cat "$src/.extracted" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$src"
  mkdir -p "$src"
  tar -C "$src" -xf "$tarball" --wildcards '*/newlib/libm/*' '*/newlib/libc/include/*' ||
    die "cannot extract $tarball"
  echo "$stamp" >"$src/.extracted"
fi
nl=$(ls -d "$src"/*/newlib 2>/dev/null | head -n1)
[ -n "$nl" ] && [ -d "$nl/libm/math" ] || die "$tarball has no newlib/libm directory"

# The 44 files of the table, the two helpers they call (k_rem_pio2.c: __kernel_rem_pio2,
# math_err.c: __math_oflow & co.) and the three that -fno-builtin turns into calls
# (fabs, copysign, finite), so that no fdlibm code calls into glibc's libm.
lib_sources=$(
  {
    for n in "${all_names[@]}"; do echo "${fn_source[$n]}"; done
    printf '%s\n' math/k_rem_pio2.c common/math_err.c math/s_fabs.c common/s_copysign.c common/s_finite.c
  } | sort -u
)
includes=(-I"$nl/libm/common" -idirafter "$nl/libc/include" -w)

# --- compilers -------------------------------------------------------------------------------
numfuzz_cc=${NUMFUZZ_CC:-$root/target/release/numfuzz-cc}
afl_cc=${AFL_CC:-afl-clang-fast}
opt=${FDLIBM_OPT:--O0}

compiler_of() {
  case $1 in
    fuzz | cov | shadow)
      [ -x "$numfuzz_cc" ] || die "$numfuzz_cc is missing: run scripts/build.sh (or set NUMFUZZ_CC)"
      echo "$numfuzz_cc"
      ;;
    afl)
      command -v "$afl_cc" >/dev/null || die "$afl_cc not found: run scripts/setup.sh (installs afl++) or set AFL_CC"
      command -v "$afl_cc"
      ;;
  esac
}

# Compile flags per variant. Harnesses and fdlibm get the same ones, and -fno-builtin always:
# without it clang turns floor/ceil/rint/sqrt/fabs into instructions and the fdlibm code never runs.
cflags_of() {
  case $1 in
    fuzz | shadow) echo "$opt -fno-builtin" ;;
    cov) echo "-O0 -g -fno-builtin" ;;
    afl) echo "$opt -g -fno-builtin -ffp-contract=off -fsanitize=fuzzer" ;;
  esac
}

env_of() {
  case $1 in
    fuzz) echo "NUMFUZZ_CC_COVERAGE=0 NUMFUZZ_CC_NO_CHECKS=0" ;;
    cov) echo "NUMFUZZ_CC_COVERAGE=1" ;;
    shadow) echo "NUMFUZZ_CC_SHADOW=1" ;;
    # AFL_DONT_OPTIMIZE: keep our -O level (afl-cc adds -O3 otherwise).
    afl) echo "AFL_DONT_OPTIMIZE=1 AFL_QUIET=1" ;;
  esac
}

# What invalidates a variant's objects: its compiler, flags and this script. What invalidates
# its binaries: also the numfuzz runtime linked into them.
fingerprint_of() { # fingerprint_of VARIANT compile|link
  local v=$1 cc
  cc=$(compiler_of "$v")
  {
    echo "$v $(cflags_of "$v") $(env_of "$v")"
    stat -L -c '%n %s %Y' "$cc" "$here/build.sh" "$here/fdlibm_harness.h"
    if [ "$2" = link ] && [ "$v" != afl ]; then
      stat -L -c '%n %s %Y' "$("$cc" -print-numfuzz-runtime)"
    fi
  } 2>/dev/null
}

# --- a small job pool ---------------------------------------------------------------------------
failed_jobs=$build/.failed-jobs
pool_start() { : >"$failed_jobs"; }
# pool_run LOG CMD...: runs CMD in the background (at most $jobs at once); on failure the log
# is kept and named in $failed_jobs.
pool_run() {
  local log=$1
  shift
  while (($(jobs -rp | wc -l) >= jobs)); do
    wait -n || true
  done
  ("$@" >"$log" 2>&1 && rm -f "$log" || echo "$log" >>"$failed_jobs") &
}
pool_wait() {
  wait || true
  if [ -s "$failed_jobs" ]; then
    while read -r log; do
      echo "---- $log" >&2
      cat "$log" >&2
    done <"$failed_jobs"
    die "build steps failed (logs above)"
  fi
}

run_in_env() { # run_in_env "VAR=1 VAR2=2" CMD...
  local assignments=$1
  shift
  # shellcheck disable=SC2086
  env $assignments "$@"
}

# --- harness generation --------------------------------------------------------------------
# One C file per function, from its prototype: non-pointer parameters are fuzzed fields,
# pointer parameters are locals.
generate_harness() {
  local name=$1 out=$2
  local symbol=${fn_symbol[$name]} returns=${fn_returns[$name]} params=${fn_params[$name]}
  local linked field=0 offset=0 sig=() decl=() reads=() locals=() args=() p
  linked=$(linked_symbol "$symbol")
  IFS=, read -r -a plist <<<"$params"
  for p in "${plist[@]}"; do
    case $p in
      double)
        sig+=(f64) decl+=(double)
        reads+=("  double a$field = FD_F64(data, size, $field, $offset);")
        args+=("a$field")
        field=$((field + 1)) offset=$((offset + 8))
        ;;
      int)
        sig+=(i32) decl+=(int)
        reads+=("  int a$field = FD_I32(data, size, $field, $offset);")
        args+=("a$field")
        field=$((field + 1)) offset=$((offset + 4))
        ;;
      double\*)
        decl+=("double *")
        locals+=("  double out${#locals[@]}[2] = {0, 0};")
        args+=("out$((${#locals[@]} - 1))")
        ;;
      int\*)
        decl+=("int *")
        locals+=("  int out${#locals[@]}[1] = {0};")
        args+=("out$((${#locals[@]} - 1))")
        ;;
      *) die "functions.tsv: $name: unsupported parameter type \`$p\`" ;;
    esac
  done
  local sink
  case $returns in
    double) sink=fd_sink_double ;;
    int) sink=fd_sink_int ;;
    *) die "functions.tsv: $name: unsupported return type \`$returns\`" ;;
  esac
  # The results numfuzz triage judges (targets/fdlibm/ORACLE.md): the return value, and the
  # outputs that are values of the function; an int output that qualifies the value (a sign,
  # an exponent) and rem_pio2's n and tail y[1] are reported but never judged.
  local results=()
  case $name in
    rem_pio2)
      results=('  FD_RESULT_NAMED("n", (double)r);' '  FD_RESULT(out0[0]);' '  FD_RESULT_NAMED("tail", out0[1]);')
      ;;
    lgamma_r) results=('  FD_RESULT(r);' '  FD_RESULT_NAMED("sign", (double)out0[0]);') ;;
    frexp) results=('  FD_RESULT(r);' '  FD_RESULT_NAMED("exp", (double)out0[0]);') ;;
    modf) results=('  FD_RESULT(r);' '  FD_RESULT(out0[0]);') ;;
    *)
      [ -z "${locals[*]}" ] || die "functions.tsv: $name: say which of its outputs are results (generate_harness)"
      results=('  FD_RESULT((double)r);')
      ;;
  esac
  local IFS=,
  {
    echo "/* Harness for fdlibm's $name ($symbol in newlib/libm/${fn_source[$name]}), generated by"
    echo " * targets/fdlibm/build.sh from functions.tsv. Input: ${sig[*]}, packed little-endian. */"
    echo '#include "fdlibm_harness.h"'
    echo
    echo "FD_SIGNATURE(\"${sig[*]}\");"
    echo "FD_FUNCTION(\"$name\");"
    echo
    echo "$returns $linked(${decl[*]});"
    echo
    echo "int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {"
    printf '%s\n' "${reads[@]}"
    ((${#locals[@]})) && printf '%s\n' "${locals[@]}"
    echo "  $returns r = $linked(${args[*]// /});"
    echo "  $sink = r;"
    printf '%s\n' "${results[@]}"
    echo "  return 0;"
    echo "}"
  } >"$out.tmp"
  # Keep the old file (and its time stamp) when nothing changed.
  if cmp -s "$out.tmp" "$out"; then rm -f "$out.tmp"; else mv "$out.tmp" "$out"; fi
}

mkdir -p "$build/harness"
for n in "${names[@]}"; do
  generate_harness "$n" "$build/harness/$n.c"
done

# --- per variant: objects, rename, archive, harnesses, checks --------------------------------
# The rename (H2 in the notes): objcopy --redefine-syms maps every public fdlibm name (the
# defined globals not starting with __: sin, floor, ...) to fdlibm_<name>, in definitions and
# in references between fdlibm files. fdlibm and glibc's libm then coexist in one binary, and
# nothing (the harness, the numfuzz runtime, the LibAFL engine linked into the target) can bind
# to the other's copy by accident.
rename_map() { # rename_map OBJECTS... > map
  nm --defined-only -g "$@" | awk 'NF == 3 && $3 !~ /^__/ { print $3 " fdlibm_" $3 }' | sort -u
}

# Undefined references that are not fdlibm's own: instrumentation runtimes, and nan() and errno
# from glibc. Anything else would be a libm function silently taken from glibc.
check_archive() { # check_archive VARIANT_DIR
  local dir=$1 defined undefined bad
  defined=$(nm --defined-only -g "$dir"/obj/*.o | awk 'NF == 3 { print $3 }' | sort -u)
  undefined=$(nm -u "$dir"/obj/*.o | awk 'NF == 2 { print $2 }' | sort -u)
  bad=$(comm -23 <(echo "$undefined") <(echo "$defined") |
    grep -Ev '^(nan|__errno_location|__numfuzz_.*|__sanitizer_.*|__start_.*|__stop_.*|__afl_.*|__llvm_.*|__cmplog_.*)$' || true)
  # A shadow build computes fdlibm's own libm calls again in long double (expl for exp),
  # glibc's, in case the callee is not instrumented.
  [[ $dir == */shadow ]] && bad=$(for b in $bad; do grep -qx "fdlibm_${b%l}" <<<"$defined" || echo "$b"; done)
  [ -z "$bad" ] || die "$dir: fdlibm code calls $(echo $bad) outside the fdlibm build (it would bind to glibc's libm)"
  local plain
  plain=$(nm --defined-only -g "$dir"/obj/*.o | awk 'NF == 3 && $3 !~ /^(__|fdlibm_)/ { print $3 }')
  [ -z "$plain" ] || die "$dir: $(echo $plain) kept their plain names after the rename"
}

# Compiles and links one harness, then checks that it calls the fdlibm copy.
build_harness() { # build_harness VARIANT NAME
  local v=$1 n=$2 dir=$build/$1 cc flags env ho bin
  cc=$(compiler_of "$v")
  flags=$(cflags_of "$v")
  env=$(env_of "$v")
  ho=$dir/harness/$n.o
  bin=$build/bin/$v/$n
  # shellcheck disable=SC2086
  run_in_env "$env" "$cc" $flags -I"$here" "${includes[@]}" -c "$build/harness/$n.c" -o "$ho"
  # shellcheck disable=SC2086
  run_in_env "$env" "$cc" $flags "$ho" "$dir/libfdlibm.a" -lm -o "$bin.tmp"
  "$here/check-binding.sh" "$dir/rename.map" "$ho" "$bin.tmp" "$(linked_symbol "${fn_symbol[$n]}")"
  mv "$bin.tmp" "$bin"
}

build_variant() {
  local v=$1 dir=$build/$v cc flags env fp link_fp
  cc=$(compiler_of "$v")
  flags=$(cflags_of "$v")
  env=$(env_of "$v")
  fp=$(fingerprint_of "$v" compile)
  if [ "$(cat "$dir/.fingerprint" 2>/dev/null)" != "$fp" ]; then
    rm -rf "$dir" "$build/bin/$v"
  fi
  link_fp=$(fingerprint_of "$v" link)
  if [ "$(cat "$build/bin/$v/.fingerprint" 2>/dev/null)" != "$link_fp" ]; then
    rm -rf "$build/bin/$v"
  fi
  mkdir -p "$dir/raw" "$dir/obj" "$dir/harness" "$dir/logs" "$build/bin/$v"
  echo "$fp" >"$dir/.fingerprint"
  echo "$link_fp" >"$build/bin/$v/.fingerprint"

  # 1. fdlibm objects
  pool_start
  local f o changed=0
  for f in $lib_sources; do
    o=$dir/raw/$(echo "${f%.c}" | tr / _).o
    if [ ! -f "$o" ] || [ "$nl/libm/$f" -nt "$o" ]; then
      changed=1
      # shellcheck disable=SC2086
      pool_run "$dir/logs/$(basename "$o").log" run_in_env "$env" "$cc" $flags "${includes[@]}" -c "$nl/libm/$f" -o "$o"
    fi
  done
  pool_wait

  # 2. rename and archive
  if ((changed)) || [ ! -f "$dir/libfdlibm.a" ]; then
    rename_map "$dir"/raw/*.o >"$dir/rename.map"
    rm -f "$dir"/obj/*.o "$dir/libfdlibm.a"
    for o in "$dir"/raw/*.o; do
      objcopy --redefine-syms="$dir/rename.map" "$o" "$dir/obj/$(basename "$o")"
    done
    check_archive "$dir"
    ar rcs "$dir/libfdlibm.a" "$dir"/obj/*.o
  fi

  # 3. harnesses
  pool_start
  local n
  for n in "${names[@]}"; do
    if [ ! -f "$build/bin/$v/$n" ] || [ "$build/harness/$n.c" -nt "$build/bin/$v/$n" ] ||
      [ "$dir/libfdlibm.a" -nt "$build/bin/$v/$n" ]; then
      rm -f "$build/bin/$v/$n"
      pool_run "$dir/logs/$n.log" build_harness "$v" "$n"
    fi
  done
  pool_wait
}

for v in "${variant_list[@]}"; do
  build_variant "$v"
done
echo "fdlibm: ${#names[@]} harnesses built ($variants) in $build/bin"
