#!/usr/bin/env bash
# static-public.sh OBJCOPY AR IN.a OUT.a CC...: the installed static library.
# IN.a's objects are linked into one relocatable object, in which every
# symbol compiled hidden (all but TRAWL_API's) is then made local: calls
# between libcore's files are resolved inside the object, and a program
# linking libtrawl.a sees only the trawl_ names, as with libtrawl.so.
set -euo pipefail
objcopy=$1 ar=$2 in=$3 out=$4
shift 4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$@" -r -nostdlib -o "$tmp/trawl.o" \
  -Wl,--whole-archive "$in" -Wl,--no-whole-archive
"$objcopy" --localize-hidden "$tmp/trawl.o"
rm -f "$out"
"$ar" rcsD "$out" "$tmp/trawl.o"
