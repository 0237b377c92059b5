#!/usr/bin/env bash
# The installed Bazel repository (bazel/meson.build, docs/bazel.md "Setup"):
# `meson install` puts PREFIX/share/trawl, a workspace points
# local_repository at it and trawl_repositories() at the installed command,
# with no checkout of trawl anywhere in it. One `bazel --batch query`
# through the installed tools/bazel wrapper lists what trawl_glob(gitignore
# = True) gives: the .c files git does not ignore (asked of git itself),
# none that it does, and the wrapper ran the installed trawl.
#
#   installed.sh BUILD_ROOT WORKDIR
set -euo pipefail
build=$(cd "$1" && pwd)
mkdir -p "$2"
tmp=$(cd "$(mktemp -d "$2/installed.XXXXXX")" && pwd)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

meson install --no-rebuild --quiet -C "$build" --destdir "$tmp/stage" >/dev/null
# --destdir stages under the configured prefix; find it.
top=$(find "$tmp/stage" -path '*/share/trawl/WORKSPACE' | head -n1)
[ -n "$top" ] || fail "no share/trawl/WORKSPACE installed"
repo=${top%/WORKSPACE}
prefix=${repo%/share/trawl}
for f in BUILD.bazel bazel/BUILD.bazel bazel/glob.bzl bazel/repositories.bzl; do
  [ -f "$repo/$f" ] || fail "share/trawl/$f not installed"
done
[ -x "$repo/bazel/tools_bazel" ] || fail "share/trawl/bazel/tools_bazel not installed executable"
[ ! -e "$repo/sources.txt" ] || fail "the sources are installed"
exe=$prefix/bin/trawl
[ -x "$exe" ] || fail "no bin/trawl"

ws=$tmp/ws
mkdir -p "$ws/src/sub" "$ws/gen" "$ws/tools"
touch "$ws/top.c" "$ws/src/a.c" "$ws/src/sub/b.c" "$ws/src/sub/skip.c" "$ws/src/a.h" \
  "$ws/gen/out.c" "$ws/src/c.tmp.c"
printf 'gen/\n*.tmp.c\n' >"$ws/.gitignore"
printf 'skip.c\n' >"$ws/src/sub/.gitignore"
git -C "$ws" init -q
cat >"$ws/WORKSPACE" <<WS
local_repository(name = "trawl", path = "$repo")
load("@trawl//bazel:repositories.bzl", "trawl_repositories")
trawl_repositories(trawl = "$exe")
WS
cat >"$ws/BUILD.bazel" <<'B'
load("@trawl//bazel:glob.bzl", "trawl_glob")
filegroup(name = "srcs", srcs = trawl_glob(["**/*.c"], gitignore = True))
B
ln -s "$repo/bazel/tools_bazel" "$ws/tools/bazel"

# What git keeps and what it ignores of the .c files (the workspace's own
# files, WORKSPACE and BUILD.bazel, are no .c).
git -C "$ws" ls-files --others --exclude-standard -- '*.c' | sort >"$tmp/want"
git -C "$ws" ls-files --others --ignored --exclude-standard -- '*.c' | sort >"$tmp/ignored"
[ "$(wc -l <"$tmp/want")" -ge 3 ] && [ "$(wc -l <"$tmp/ignored")" -ge 3 ] ||
  fail "the tree does not have both kinds: $(cat "$tmp/want" "$tmp/ignored")"

# /usr/bin/bazel runs tools/bazel (the real binary in $BAZEL_REAL).
(cd "$ws" && env -u BAZEL_REAL -u TRAWL_INDEX bazel --output_user_root="$tmp/user-root" \
  --output_base="$tmp/ob" --batch query 'labels(srcs, //:srcs)') >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err" >&2; fail "bazel query"; }
sed -n 's|^//:||p' "$tmp/out" | sort >"$tmp/got"
[ "$(wc -l <"$tmp/got")" = "$(wc -l <"$tmp/out")" ] || fail "labels outside //: $(cat "$tmp/out")"
diff -u "$tmp/want" "$tmp/got" >&2 || fail "trawl_glob() is not what git keeps (- git, + bazel)"
while read -r p; do
  ! grep -qxF "$p" "$tmp/got" || fail "git ignores $p, trawl_glob() lists it"
done <"$tmp/ignored"
# The wrapper's trawl is the installed one (@trawl_tool linked it).
[ "$(readlink -f "$ws/.trawl/trawl")" = "$(readlink -f "$exe")" ] ||
  fail ".trawl/trawl is $(readlink -f "$ws/.trawl/trawl"), not the installed $exe"
grep -q 'trawl is not set up here yet: this command sets it up' "$tmp/err" ||
  fail "the wrapper did not run (tools/bazel -> the installed tools_bazel)"
# Nothing was compiled (an install has no sources).
! grep -q 'trawl was compiled in' "$tmp/err" || fail "the wrapper says trawl was compiled"
echo "ok: $(wc -l <"$tmp/got") files from the installed repository, $(wc -l <"$tmp/ignored") ignored left out"
