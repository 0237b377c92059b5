#!/bin/sh
# bootstrap.sh SRCDIR OUT CC [CC-ARGS...] — compile the trawl command with
# one plain compiler command (README.md), for Meson to run while it
# configures: Meson refuses to run an executable a subproject builds
# before the build, so trawl used through a wrap is compiled here first.
#
# OUT is compiled again only when it is missing or a source under SRCDIR's
# libcore/ or plugins/cli/ is newer; it is written under a temporary name
# and renamed, so a failed or interrupted compile never leaves a broken
# OUT behind. Prints OUT's path.
set -eu
src=$1 out=$2
shift 2
[ "$#" -gt 0 ] || { echo "usage: bootstrap.sh SRCDIR OUT CC [CC-ARGS...]" >&2; exit 2; }

if [ -x "$out" ] && [ -z "$(find "$src/libcore" "$src/plugins/cli" -newer "$out" \
                           \( -name '*.c' -o -name '*.h' \) 2>/dev/null | head -n 1)" ]; then
  echo "$out"
  exit 0
fi

pkg_config=${PKG_CONFIG:-pkg-config}
if ! glib=$("$pkg_config" --cflags --libs glib-2.0); then
  echo "bootstrap.sh: $pkg_config --cflags --libs glib-2.0 failed: trawl needs GLib's headers" >&2
  exit 1
fi
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
# shellcheck disable=SC2086 # $glib is a list of flags
"$@" -std=c11 -O2 "$src"/libcore/src/*.c "$src"/plugins/cli/*.c -I"$src/libcore/include" \
  $glib -pthread -o "$tmp"
mv -f "$tmp" "$out"
trap - EXIT
echo "$out"
