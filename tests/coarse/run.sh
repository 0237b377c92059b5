#!/bin/sh
# run.sh COMMAND [ARG...]: run COMMAND with /tmp on ramfs, in a mount
# namespace of its own (nothing outside it sees the mount; it goes when the
# command ends). ramfs keeps no multigrain timestamps: every change is
# stamped with the kernel's coarse clock, as every file system was before
# Linux 6.13 (tests/coarse/meson.build, docs/cache.md).
#
# As root, a mount namespace is enough (the tests can still become nobody);
# otherwise a user namespace makes the mount possible. A machine that allows
# neither fails here, loudly: the coarse tests are not skipped. The mount is
# made only by the shell unshare starts, inside the new namespace.
set -eu
inside='mount -t ramfs -o mode=1777 trawl-coarse /tmp && TMPDIR=/tmp exec "$@"'
if [ "$(id -u)" = 0 ]; then
  exec unshare --mount --propagation private -- sh -c "$inside" run.sh "$@"
fi
exec unshare --user --map-root-user --mount --propagation private -- sh -c "$inside" run.sh "$@"
