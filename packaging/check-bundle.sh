#!/usr/bin/env bash
# Checks an installed NormLab tree (a `cmake --install` prefix, the .deb's usr/ or the
# .tar.gz's top folder) for what must travel with what it bundles:
#   - share/doc/normlab/copyright, in Debian's machine-readable format, whose Files
#     paragraphs cover every file in the tree, name each file in lib/normlab literally
#     (no pattern), name none that is not there, and use only licenses it has texts for;
#   - share/doc/normlab/changelog.gz, a Debian changelog compressed with gzip -9n;
#   - with --stripped: no library in lib/normlab and no program in bin with a symbol table.
#   packaging/check-bundle.sh [--stripped] TREE
# Paths in the copyright file are those of the .deb (usr/...). Exit status 1 and a line per
# problem when something is wrong; 2 when called wrongly.
set -uo pipefail

stripped=
[ "${1:-}" = --stripped ] && { stripped=1; shift; }
[ $# -eq 1 ] || { echo "usage: packaging/check-bundle.sh [--stripped] TREE" >&2; exit 2; }
tree=${1%/}
[ -d "$tree" ] || { echo "check-bundle: $tree is not a folder" >&2; exit 2; }

problems=0
problem() { echo "check-bundle: $*" >&2; problems=$((problems + 1)); }

copyright=$tree/share/doc/normlab/copyright
if [ ! -f "$copyright" ]; then
  problem "no share/doc/normlab/copyright in $tree"
else
  head -n1 "$copyright" | grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ||
    problem "$copyright does not start with the machine-readable format's Format: line"
  # One line per Files paragraph: its patterns, a tab, its License expression; and one
  # "license<TAB>name" line per stand-alone License paragraph that has a text.
  parsed=$(awk '
    function flush() {
      if (license != "" && body) print "license\t" license  # its text is here
      if (files != "") print "files\t" files "\t" license
      files = ""; license = ""; body = 0; field = ""
    }
    /^[ \t]*$/ { flush(); next }
    /^[^ \t]/ {
      field = $0; sub(/:.*/, "", field); value = $0; sub(/^[^:]*:[ \t]*/, "", value)
      if (field == "Files") files = value
      else if (field == "License") license = value
      next
    }
    { if (field == "Files") files = files " " $0; else if (field == "License") body = 1 }
    END { flush() }' "$copyright")
  declare -a patterns=() pending=()
  declare -A defined=() literal=()
  while IFS=$'\t' read -r kind first second; do
    case $kind in
      license) defined[$first]=1 ;;
      files)
        for pattern in $first; do
          patterns+=("$pattern")
          case $pattern in *[*?]*) ;; *) literal[$pattern]=1 ;; esac
        done
        [ -n "$second" ] || problem "a Files paragraph ($first) has no License"
        # "A and B", "A or B": each name needs its text.
        expression=${second// and /$'\n'}; expression=${expression// or /$'\n'}
        while IFS= read -r name; do
          name=${name#(}; name=${name%)}
          [ -z "$name" ] || [ -n "${defined[$name]:-}" ] || pending+=("$name")
        done <<< "$expression" ;;
    esac
  done <<< "$parsed"
  for name in "${pending[@]:-}"; do
    [ -z "$name" ] || [ -n "${defined[$name]:-}" ] ||
      problem "License '$name' is used but has no License paragraph with its text"
  done
  [ ${#patterns[@]} -gt 0 ] || problem "$copyright has no Files paragraph"

  # Every file in the tree is covered; lib/normlab's are named one by one.
  while IFS= read -r -d '' file; do
    path=usr/${file#"$tree"/}
    case $path in
      usr/lib/normlab/*)
        [ -n "${literal[$path]:-}" ] ||
          problem "$path is bundled, but no Files paragraph names it (packaging/copyright.in)" ;;
      *)
        covered=
        for pattern in "${patterns[@]}"; do
          # shellcheck disable=SC2053  # a glob on purpose: * matches / in this format
          [[ $path == $pattern ]] && { covered=1; break; }
        done
        [ -n "$covered" ] || problem "$path is in no Files paragraph" ;;
    esac
  done < <(find "$tree" \( -type f -o -type l \) -print0)
  for path in "${!literal[@]}"; do
    [ -e "$tree/${path#usr/}" ] || [ -L "$tree/${path#usr/}" ] ||
      problem "the copyright file names $path, which is not in the tree"
  done
fi

changelog=$tree/share/doc/normlab/changelog.gz
if [ ! -f "$changelog" ]; then
  problem "no share/doc/normlab/changelog.gz in $tree"
elif ! gzip -t "$changelog" 2>/dev/null; then
  problem "$changelog is not gzip data"
else
  gzip -dc "$changelog" | head -n1 | grep -Eq '^normlab \([^)]+\) [a-z-]+; urgency=' ||
    problem "$changelog does not start with a Debian changelog entry"
fi

if [ -n "$stripped" ]; then
  command -v readelf >/dev/null || { echo "check-bundle: --stripped needs readelf (binutils)" >&2; exit 2; }
  for file in "$tree"/lib/normlab/* "$tree"/bin/*; do
    [ -f "$file" ] || continue
    sections=$(readelf -S -W "$file" 2>/dev/null) || continue  # not ELF
    grep -q ' \.symtab ' <<< "$sections" && problem "${file#"$tree"/} is not stripped (has .symtab)"
  done
fi

if [ $problems -gt 0 ]; then
  echo "check-bundle: $problems problem(s) in $tree" >&2
  exit 1
fi
echo "check-bundle: $tree: copyright covers every file, changelog present${stripped:+, stripped}"
