#!/bin/sh
# bootstrap.sh SRCDIR OUT CC [CC-ARGS...] — compile the trawl command with
# one plain compiler command (README.md) from the one list of its sources
# (SRCDIR/sources.txt), for Meson to run while it configures: Meson refuses
# to run an executable a subproject builds before the build, so trawl used
# through a wrap is compiled here first.
#
# OUT is compiled again only when it is missing, or the list or a source or
# header in a folder it names (or a public header) is newer; it is written
# under a temporary name and renamed, so a failed or interrupted compile
# never leaves a broken OUT behind. Prints OUT's path.
set -eu
src=$1 out=$2
shift 2
[ "$#" -gt 0 ] || { echo "usage: bootstrap.sh SRCDIR OUT CC [CC-ARGS...]" >&2; exit 2; }

# The list's lines, and the folders they name (a line is FOLDER/GLOB).
globs=$(grep -v '^#' "$src/sources.txt")
dirs=$(printf '%s\n' "$globs" | sed 's|/[^/]*$||' | sort -u)
newer() {
  # shellcheck disable=SC2086 # $dirs is a list of folders without blanks
  (cd "$src" && find sources.txt libcore/include/trawl $dirs -maxdepth 1 -newer "$out" \
     \( -name '*.c' -o -name '*.h' -o -name sources.txt \) 2>/dev/null | head -n 1)
}
if [ -x "$out" ] && [ -z "$(newer)" ]; then
  echo "$out"
  exit 0
fi

pkg_config=${PKG_CONFIG:-pkg-config}
if ! glib=$("$pkg_config" --cflags --libs glib-2.0); then
  echo "bootstrap.sh: $pkg_config --cflags --libs glib-2.0 failed: trawl needs GLib's headers" >&2
  exit 1
fi
case $out in
  /*) tmp="$out.tmp.$$" ;;
  *) tmp="$PWD/$out.tmp.$$" ;;
esac
trap 'rm -f "$tmp"' EXIT
# In SRCDIR, where the list's globs are relative to.
# shellcheck disable=SC2086 # $globs and $glib are lists
(cd "$src" && "$@" -std=c11 -O2 $globs -Ilibcore/include $glib -pthread -o "$tmp")
mv -f "$tmp" "$out"
trap - EXIT
echo "$out"
