# Sourced by the target build scripts (targets/gsl, targets/musl), which define `say` and `die`.
# shellcheck shell=bash

# Writes deb-src twins of the configured Debian entries (the ones whose suite starts with this
# release's codename) to separate files, so that `apt-get source` works.
add_deb_src() {
  local codename sources list
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || die "cannot tell the Debian release (no VERSION_CODENAME in /etc/os-release)"
  sources=/etc/apt/sources.list.d/numfuzz-deb-src.sources
  list=/etc/apt/sources.list.d/numfuzz-deb-src.list
  local deb822=() oneline=()
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] && [ "$f" != "$sources" ] && deb822+=("$f")
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -e "$f" ] && [ "$f" != "$list" ] && oneline+=("$f")
  done
  local stanzas="" lines=""
  if ((${#deb822[@]})); then
    # deb822 paragraphs: keep every field (including multi-line Signed-By), switch the type.
    stanzas=$(awk -v code="$codename" '
      function flush() {
        if (para != "" && types ~ /(^| )deb( |$)/ && enabled != "no" && suites_ok) {
          sub(/(^|\n)Types:[^\n]*/, "\nTypes: deb-src", para); sub(/^\n/, "", para)
          printf "%s\n\n", para
        }
        para = ""; types = ""; enabled = ""; suites_ok = 0
      }
      /^[ \t]*#/ { next }
      /^[ \t]*$/ { flush(); next }
      {
        para = para (para == "" ? "" : "\n") $0
        if (tolower($1) == "types:") { types = $0; sub(/^[^:]*:[ \t]*/, "", types) }
        if (tolower($1) == "enabled:") enabled = tolower($2)
        if (tolower($1) == "suites:") for (i = 2; i <= NF; i++) if (index($i, code) == 1) suites_ok = 1
      }
      END { flush() }' "${deb822[@]}")
  fi
  if ((${#oneline[@]})); then
    lines=$(awk -v code="$codename" '
      $1 == "deb" {
        i = 2; if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        if (index($(i + 1), code) == 1) { $1 = "deb-src"; print }
      }' "${oneline[@]}")
  fi
  [ -n "$stanzas$lines" ] || die "no Debian '$codename' entry in /etc/apt/sources.list{,.d} to derive a deb-src entry from; add a deb-src line for $codename and re-run"
  if [ -n "$stanzas" ]; then
    printf '# Added by numfuzz (targets/*/build.sh) for `apt-get source`.\n%s' "$stanzas" >"$sources"
    say "no deb-src entry was configured: added $sources (deb-src for the Debian $codename suites)"
  fi
  if [ -n "$lines" ]; then
    printf '# Added by numfuzz (targets/*/build.sh) for `apt-get source`.\n%s\n' "$lines" >"$list"
    say "no deb-src entry was configured: added $list (deb-src for the Debian $codename suites)"
  fi
}

