#!/usr/bin/env bash
# The CMake, Meson and Bazel plugins compile trawl with one plain compiler
# command when no installed trawl exists, from the one list of its sources
# (sources.txt). Prove that command works: no Meson, no generated sources,
# strict warnings as errors, for every C compiler we have; and that the
# README gives it from the list, and every line of the list names a source.
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$src"
status=0
# shellcheck disable=SC2016 # the README's text, not expanded here
readme_line='cc -std=c11 -O2 $(grep -v '"'^#'"' sources.txt) -Ilibcore/include \'
if ! grep -qxF "$readme_line" README.md; then
  echo "FAIL: README.md does not give the one-command build from sources.txt" >&2
  status=1
fi
while read -r glob; do
  # shellcheck disable=SC2086 # the line is a glob
  set -- $glob
  if [ ! -e "$1" ]; then
    echo "FAIL: sources.txt: $glob names no file" >&2
    status=1
  fi
done < <(grep -v '^#' sources.txt)
for cc in gcc clang; do
  command -v "$cc" >/dev/null || continue
  # shellcheck disable=SC2046
  if ! "$cc" -std=c11 -O2 -Wall -Wextra -Wshadow -Wstrict-prototypes \
      -Wmissing-prototypes -Werror \
      $(grep -v '^#' sources.txt) -Ilibcore/include \
      $(pkg-config --cflags --libs glib-2.0) -o "$tmp/trawl-$cc"; then
    echo "FAIL: plain $cc build" >&2
    status=1
    continue
  fi
  out=$(printf 'src/a.c\nsrc/x/y.c\nsrc/a.h\nlib/b.c\n' | "$tmp/trawl-$cc" match 'src/**/*.c' -)
  if [ "$out" != $'src/a.c\nsrc/x/y.c' ]; then
    echo "FAIL: plain $cc build gave: $out" >&2
    status=1
  else
    echo "ok: plain $cc build"
  fi
done
exit $status
