#!/usr/bin/env bash
# The install of just the tool, as the README gives it: `-Dtests=false`
# configures with no C++ compiler and no GoogleTest, builds no test and no
# benchmark, and `meson install` puts the command, the library, the CMake
# package and the Bazel repository (share/trawl; tests/bazel/installed.sh
# runs Bazel on it) in place; the command runs. Then the README's library-user recipe
# with a prefix of one's own: pkg-config through the multiarch libdir, the
# rpath, and a program that runs with no LD_LIBRARY_PATH.
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
[ -x "$(find "$tmp/stage" -path '*/share/trawl/bazel/tools_bazel')" ] || fail "no Bazel repository"
mkdir -p "$tmp/t/src" && touch "$tmp/t/src/a.c" "$tmp/t/src/b.h"
out=$("$exe" -C "$tmp/t" '**/*.c')
[ "$out" = "src/a.c" ] || fail "the installed trawl printed '$out'"

prefix="$tmp/prefix"
meson configure "$tmp/build" --prefix="$prefix" >/dev/null
meson install -C "$tmp/build" >/dev/null
cat >"$tmp/my.c" <<'C'
#include <trawl/trawl.h>
#include <stdio.h>
int main(void) {
  GError *error = NULL;
  TrawlPattern *p = trawl_pattern_compile("**/*.c", 6, TRAWL_DIALECT_TRAWL, 0, &error);
  if (!p) { fprintf(stderr, "%s\n", error->message); return 1; }
  int ok = trawl_pattern_match(p, "src/a.c", 7);
  trawl_pattern_free(p);
  printf("trawl %s\n", trawl_version());
  return ok ? 0 : 1;
}
C
# The README's two lines, as written there.
export PKG_CONFIG_PATH="$prefix/lib/$(cc -print-multiarch)/pkgconfig"
cc -std=c11 "$tmp/my.c" $(pkg-config --cflags --libs trawl) \
  -Wl,-rpath,"$(pkg-config --variable=libdir trawl)" -o "$tmp/my" ||
  fail "the README's library recipe does not compile"
env -u LD_LIBRARY_PATH "$tmp/my" | grep -q '^trawl ' || fail "the recipe's program does not run"

# CMake's way in: Trawl::libcore from the installed package, a C++ program
# (the imported library's soname is the one the library has).
mkdir -p "$tmp/cm"
cat >"$tmp/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(use_trawl CXX)
find_package(Trawl CONFIG REQUIRED COMPONENTS libcore)
add_executable(use use.cpp)
target_link_libraries(use PRIVATE Trawl::libcore)
CM
cat >"$tmp/cm/use.cpp" <<'CPP'
#include <trawl/trawl.h>
#include <cstdio>
int main() { std::printf("trawl %s\n", trawl_version()); return 0; }
CPP
cmake -S "$tmp/cm" -B "$tmp/cm/b" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/cm.log" 2>&1 &&
  cmake --build "$tmp/cm/b" >>"$tmp/cm.log" 2>&1 || { cat "$tmp/cm.log"; fail "Trawl::libcore from C++"; }
LD_LIBRARY_PATH="$(pkg-config --variable=libdir trawl)" "$tmp/cm/b/use" | grep -q '^trawl ' ||
  fail "the CMake consumer does not run"
echo "ok: tool-only build and install, library recipe, Trawl::libcore"
