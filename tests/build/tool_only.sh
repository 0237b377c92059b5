#!/usr/bin/env bash
# The install of just the tool, as the README gives it: `-Dtests=false`
# configures with no C++ compiler and no GoogleTest, builds no test and no
# benchmark, and `meson install` puts the command, the library and the CMake
# package in place; the command runs.
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# No C++ compiler to be found: the configure must not need one.
CXX=/nonexistent-c++ meson setup "$tmp/build" "$src" -Dtests=false --buildtype=release \
  >"$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log"; fail "meson setup -Dtests=false"; }
ninja -C "$tmp/build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "ninja"; }
built=$(find "$tmp/build" -name '*_test' -o -name 'unit-*' -o -name 'walk-*' -o -name 'cache-*' \
  -o -name 'bench_*' \
  -type f | head -n 3)
[ -z "$built" ] || fail "tests or benchmarks built: $built"
meson install -C "$tmp/build" --destdir "$tmp/stage" >/dev/null
exe=$(find "$tmp/stage" -path '*/bin/trawl' -type f)
[ -x "$exe" ] || fail "no bin/trawl"
[ -n "$(find "$tmp/stage" -name TrawlConfig.cmake)" ] || fail "no TrawlConfig.cmake"
[ -n "$(find "$tmp/stage" -name trawl.h)" ] || fail "no headers"
mkdir -p "$tmp/t/src" && touch "$tmp/t/src/a.c" "$tmp/t/src/b.h"
out=$("$exe" -C "$tmp/t" '**/*.c')
[ "$out" = "src/a.c" ] || fail "the installed trawl printed '$out'"
echo "ok: tool-only build and install"
