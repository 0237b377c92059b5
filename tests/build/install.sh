#!/usr/bin/env bash
# `meson install` into a staging prefix puts headers, both libraries, the
# pkg-config file and the CLI in place; a program built against the installed
# pkg-config file links and runs; the shared library exports only trawl_ names;
# api_every.c (EVERY), which calls every public function and checks its
# answer, runs as C and as C++ against both libraries.
set -euo pipefail
build=$1
every_src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
meson install --no-rebuild --quiet -C "$build" --destdir "$tmp/stage" >/dev/null
# --destdir stages under the configured prefix; find it.
root=$(find "$tmp/stage" -name trawl.h -path '*/include/trawl/*' | head -n1)
[ -n "$root" ] || { echo "FAIL: no installed trawl/trawl.h"; exit 1; }
prefix=${root%/include/trawl/trawl.h}
fail() { echo "FAIL: $*" >&2; exit 1; }
for h in trawl.h export.h version.h pattern.h walk.h; do
  [ -f "$prefix/include/trawl/$h" ] || fail "header $h not installed"
done
libdir=$(dirname "$(find "$prefix" -name 'libtrawl.so.*.*.*' | head -n1)")
[ -d "$libdir" ] || fail "no versioned shared library"
[ -f "$libdir/libtrawl.a" ] || fail "no static library"
soname=$(objdump -p "$libdir"/libtrawl.so.*.*.* | awk '/SONAME/ {print $2}')
[[ "$soname" == libtrawl.so.[0-9]* ]] || fail "unexpected soname '$soname'"
[ -x "$prefix/bin/trawl" ] || fail "trawl CLI not installed"
pc=$(find "$prefix" -name trawl.pc | head -n1)
[ -f "$pc" ] || fail "no trawl.pc"

# Only the public API is exported.
bad=$(nm -D --defined-only "$libdir/libtrawl.so" | awk '$2 ~ /[TDBR]/ {print $3}' | grep -v '^trawl_' || true)
[ -z "$bad" ] || fail "non-API symbols exported: $bad"
nm -D --defined-only "$libdir/libtrawl.so" | grep -q ' T trawl_pattern_compile$' ||
  fail "trawl_pattern_compile not exported"

cat >"$tmp/use.c" <<'C'
#include <trawl/trawl.h>
#include <stdio.h>
#include <string.h>
int main(void) {
  GError *error = NULL;
  TrawlPattern *p = trawl_pattern_compile("src/**/*.c", 10, TRAWL_DIALECT_TRAWL, 0, &error);
  if (!p) { fprintf(stderr, "%s\n", error->message); return 1; }
  int ok = trawl_pattern_match(p, "src/x/y.c", 9) && !trawl_pattern_match(p, "lib/y.c", 7);
  trawl_pattern_free(p);
  printf("%s %s\n", trawl_version(), ok ? "ok" : "wrong");
  return ok ? 0 : 1;
}
C
# Point pkg-config at the staged prefix (only trawl's own: glib stays where
# the system has it).
mkdir -p "$tmp/pc"
sed "s|^prefix=.*|prefix=$prefix|" "$pc" >"$tmp/pc/trawl.pc"
export PKG_CONFIG_PATH="$tmp/pc"
flags=$(pkg-config --cflags --libs trawl)
# shellcheck disable=SC2086
cc -std=c11 -Wall -Werror "$tmp/use.c" $flags -o "$tmp/use"
LD_LIBRARY_PATH="$libdir" "$tmp/use"

# pkg-config resolves with only what trawl depends on: the system's .pc files
# without libxxhash's (XXH3 is compiled in; a Requires.private naming it made
# `pkg-config --libs trawl` fail where libxxhash-dev is not installed).
mkdir -p "$tmp/pc-only"
cp "$tmp/pc/trawl.pc" "$tmp/pc-only/"
for d in $(pkg-config --variable pc_path pkg-config | tr : ' '); do
  for f in "$d"/*.pc; do
    [ -e "$f" ] || continue
    case $(basename "$f") in libxxhash.pc|trawl.pc) continue ;; esac
    [ -e "$tmp/pc-only/$(basename "$f")" ] || ln -s "$f" "$tmp/pc-only/"
  done
done
PKG_CONFIG_LIBDIR="$tmp/pc-only" PKG_CONFIG_PATH= pkg-config --cflags --libs trawl >/dev/null ||
  fail "pkg-config cannot resolve trawl without libxxhash.pc"
PKG_CONFIG_LIBDIR="$tmp/pc-only" PKG_CONFIG_PATH= pkg-config --static --libs trawl >/dev/null ||
  fail "pkg-config --static cannot resolve trawl without libxxhash.pc"

# Every function the headers declare TRAWL_API, and nothing else, is what
# both libraries export; the static one has no other global (a program with
# its own dir_check() once clashed with, or bound to, libcore's).
declared=$(cat "$prefix"/include/trawl/*.h | tr '\n' ' ' |
  grep -o 'TRAWL_API[^;(]*(' | grep -o 'trawl_[A-Za-z0-9_]*[[:space:]]*($' |
  tr -d ' (' | sort -u)
[ -n "$declared" ] || fail "no TRAWL_API declarations found in the headers"
shared=$(nm -D --defined-only "$libdir/libtrawl.so" | awk '$2 ~ /[TDBRVW]/ {print $3}' | sort -u)
static=$(nm -g --defined-only "$libdir/libtrawl.a" | awk 'NF == 3 {print $3}' | sort -u)
[ "$declared" = "$shared" ] ||
  fail "shared exports differ from the headers' TRAWL_API: $(diff <(echo "$declared") <(echo "$shared") | grep '^[<>]' | tr '\n' ' ')"
[ "$declared" = "$static" ] ||
  fail "static library's globals differ from the headers' TRAWL_API: $(diff <(echo "$declared") <(echo "$static") | grep '^[<>]' | tr '\n' ' ')"

# A program with functions named as libcore's internals links the static
# library and gets its own back, while trawl's walk works.
cat >"$tmp/own.c" <<'C'
#include <trawl/trawl.h>
#include <stdio.h>
int dir_check(void) { return 41; }
int cache_load(void) { return 1; }
int item_free(void) { return 0; }
int main(void) {
  GError *error = NULL;
  TrawlPattern *p = trawl_pattern_compile("*.c", 3, TRAWL_DIALECT_TRAWL, 0, &error);
  if (!p) { fprintf(stderr, "%s\n", error->message); return 1; }
  int ok = trawl_pattern_match(p, "a.c", 3) && dir_check() + cache_load() + item_free() == 42;
  trawl_pattern_free(p);
  puts(ok ? "ok" : "wrong");
  return ok ? 0 : 1;
}
C
# shellcheck disable=SC2086
cc -std=c11 -Wall -Werror -Wno-missing-prototypes "$tmp/own.c" "$libdir/libtrawl.a" \
  $(pkg-config --cflags --libs --static trawl | sed 's/-ltrawl//') -o "$tmp/own" ||
  fail "a program with its own dir_check() does not link against libtrawl.a"
"$tmp/own" >/dev/null || fail "a program with its own dir_check() gets libcore's"

# C++ links every public function (version.h once declared trawl_version
# outside extern "C": the name was mangled and the link failed), against
# the shared library and against the static one.
{
  echo '#include <trawl/trawl.h>'
  echo '#include <cstdio>'
  echo 'int main() {'
  echo '  void (*fns[])() = {'
  for f in $declared; do echo "    reinterpret_cast<void (*)()>(&$f),"; done
  echo '  };'
  echo '  std::printf("%s %zu\n", trawl_version(), sizeof fns / sizeof *fns);'
  echo '  return 0;'
  echo '}'
} >"$tmp/every.cpp"
# shellcheck disable=SC2086
c++ -std=c++11 -Wall -Werror "$tmp/every.cpp" $flags -o "$tmp/every" ||
  fail "C++ does not link every public function against libtrawl.so"
LD_LIBRARY_PATH="$libdir" "$tmp/every" >/dev/null || fail "C++ program against libtrawl.so did not run"
# shellcheck disable=SC2086
c++ -std=c++11 -Wall -Werror "$tmp/every.cpp" "$libdir/libtrawl.a" \
  $(pkg-config --cflags --libs --static trawl | sed 's/-ltrawl//') -o "$tmp/every-static" ||
  fail "C++ does not link every public function against libtrawl.a"
"$tmp/every-static" >/dev/null || fail "C++ program against libtrawl.a did not run"

# Every public function called, its answer checked, from C and from C++:
# api_every.c is both. It must call each function the headers declare
# TRAWL_API (a function added to a header without a call there fails here).
for f in $declared; do
  grep -qE "\b$f[[:space:]]*\(" "$every_src" || fail "api_every.c does not call $f"
done
mkdir -p "$tmp/t/tree/src/d" "$tmp/t/tree/build" "$tmp/t/other"
touch "$tmp/t/tree/a.c" "$tmp/t/tree/b.h" "$tmp/t/tree/src/c.c" "$tmp/t/tree/src/d/e.c" \
  "$tmp/t/tree/build/gen.c" "$tmp/t/other/x.c"
echo 'build/' >"$tmp/t/tree/.ignore"
echo '*.h' >"$tmp/t/ignore"
run_every() { # NAME: run $tmp/NAME on a fresh cache path
  rm -f "$tmp/t/c.cache"
  TRAWL_WATCHMAN=off LD_LIBRARY_PATH="$libdir" "$tmp/$1" "$tmp/t/tree" "$tmp/t/other" \
    "$tmp/t/c.cache" "$tmp/t/ignore" >"$tmp/$1.out" 2>&1 ||
    fail "$1: $(cat "$tmp/$1.out")"
  grep -q '^ok [0-9]' "$tmp/$1.out" || fail "$1 printed $(cat "$tmp/$1.out")"
}
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror -x c "$every_src" -x none $flags -o "$tmp/every-c" ||
  fail "api_every.c does not build as C against libtrawl.so"
run_every every-c
# shellcheck disable=SC2086
c++ -std=c++11 -Wall -Wextra -Werror -x c++ "$every_src" -x none $flags -o "$tmp/every-cxx" ||
  fail "api_every.c does not build as C++ against libtrawl.so"
run_every every-cxx
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror -x c "$every_src" -x none "$libdir/libtrawl.a" \
  $(pkg-config --cflags --libs --static trawl | sed 's/-ltrawl//') -o "$tmp/every-c-static" ||
  fail "api_every.c does not build as C against libtrawl.a"
run_every every-c-static
echo "ok: install into $prefix ($(echo "$declared" | wc -l) public functions, each called from C and C++: $(cat "$tmp/every-c.out"))"
