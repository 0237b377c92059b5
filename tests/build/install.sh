#!/usr/bin/env bash
# `meson install` into a staging prefix puts headers, both libraries, the
# pkg-config file and the CLI in place; a program built against the installed
# pkg-config file links and runs; the shared library exports only trawl_ names.
set -euo pipefail
build=$1
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
  trawl_pattern *p = trawl_pattern_compile("src/**/*.c", 10, TRAWL_DIALECT_TRAWL, 0, &error);
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
echo "ok: install into $prefix"
