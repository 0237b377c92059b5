#!/bin/sh
# run.sh COMMAND [ARG...]: run COMMAND with TMPDIR on ramfs, in a mount
# namespace of its own (nothing outside it sees the mount; it goes when the
# command ends). ramfs keeps no multigrain timestamps: every change is
# stamped with the kernel's coarse clock, as every file system was before
# Linux 6.13 (tests/coarse/meson.build, docs/cache.md).
#
# The ramfs goes on a new empty directory, not over /tmp: a checkout or a
# build directory under /tmp (a CI clone in `mktemp -d`) stays visible to
# the command. Every test makes its trees under TMPDIR (Python's tempfile,
# GLib's g_get_tmp_dir()).
#
# As root, a mount namespace is enough (the tests can still become nobody);
# otherwise a user namespace makes the mount possible. A machine that allows
# neither fails here, loudly: the coarse tests are not skipped. The mount is
# made only by the shell unshare starts, inside the new namespace.
set -eu
dir=$(mktemp -d "${TMPDIR:-/tmp}/trawl-coarse.XXXXXX")
chmod 1777 "$dir"
inside='mount -t ramfs -o mode=1777 trawl-coarse "$0" && TMPDIR="$0" exec "$@"'
status=0
if [ "$(id -u)" = 0 ]; then
  unshare --mount --propagation private -- sh -c "$inside" "$dir" "$@" || status=$?
else
  unshare --user --map-root-user --mount --propagation private -- sh -c "$inside" "$dir" "$@" ||
    status=$?
fi
rmdir "$dir" 2>/dev/null || true
exit "$status"
