#!/usr/bin/env bash
# The CMake and Bazel plugins compile trawl with one plain compiler command
# when no installed trawl exists. Prove that command works: no Meson, no
# generated sources, strict warnings as errors, for every C compiler we have.
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$src"
status=0
for cc in gcc clang; do
  command -v "$cc" >/dev/null || continue
  # shellcheck disable=SC2046
  if ! "$cc" -std=c11 -O2 -Wall -Wextra -Wshadow -Wstrict-prototypes \
      -Wmissing-prototypes -Werror \
      libcore/src/*.c plugins/cli/*.c -Ilibcore/include \
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
