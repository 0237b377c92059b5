#!/usr/bin/env python3
"""Two Bazel indexers, the same index: each workspace indexed by both, from
nothing and then after each of a series of edits (each indexer keeping its
own state, so that the second and later runs take the re-check's path), the
two index.bzl compared byte for byte but their first line (which names the
program that made it). For a change to the indexer that must not change its
output (issue 23: bazel/index.c made `trawl bazel-index`).

usage: bench/bazel_index_same.py 'OLD COMMAND' 'NEW COMMAND' WORKSPACE...

A command is the indexer without --root and --state, e.g.
'/tmp/old/trawl-bazel-index --trawl /tmp/old/trawl' and
'build/plugins/cli/trawl bazel-index'. Each gets its own state directory in
the workspace (.trawl-old, .trawl-new), both named in .bazelignore, so that
neither walks the other's. The edits (in the first directory at the top
that is not hidden): a file added, a file git ignores added and removed, a
directory git ignores, a package added and removed, a .gitignore edited,
`git add -f` and `git rm --cached` of an ignored file, a directory at the
top added, a bazel-* link at the top. Every edit is undone at the end.
Exit 1 if any index differs.
"""
import os
import shlex
import shutil
import subprocess
import sys


def index(cmd, ws, state):
    p = subprocess.run(shlex.split(cmd) + ["--root", ws, "--state", state],
                       stdout=subprocess.PIPE, check=True)
    digest = p.stdout.decode().strip()
    with open(os.path.join(ws, state, "index-%s.bzl" % digest), "rb") as f:
        return f.read().split(b"\n", 1)[1]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    old, new, spaces = sys.argv[1], sys.argv[2], sys.argv[3:]
    bad = 0
    for ws in spaces:
        ws = os.path.abspath(ws)
        bi = os.path.join(ws, ".bazelignore")
        saved = open(bi, "rb").read() if os.path.exists(bi) else None
        with open(bi, "ab") as f:
            f.write(b"\n.trawl-old\n.trawl-new\n")
        for s in (".trawl-old", ".trawl-new"):
            shutil.rmtree(os.path.join(ws, s), ignore_errors=True)
            os.mkdir(os.path.join(ws, s))
        top = sorted(d for d in os.listdir(ws) if not d.startswith(".") and not d.startswith("bazel-")
                     and os.path.isdir(os.path.join(ws, d)) and not os.path.islink(os.path.join(ws, d)))[0]
        d = os.path.join(ws, top)
        git = ["git", "-C", ws]
        steps = [
            ("from nothing", lambda: None),
            ("nothing changed", lambda: None),
            ("a file added", lambda: open(os.path.join(d, "zz_same.c"), "w").close()),
            ("a file git ignores", lambda: open(os.path.join(d, "zz_same.o"), "w").close()),
            ("a directory git ignores", lambda: os.makedirs(os.path.join(d, "zz_out", "x"))),
            ("it removed", lambda: os.remove(os.path.join(d, "zz_same.o"))),
            ("a package", lambda: (os.makedirs(os.path.join(d, "zz_pkg")),
                                   open(os.path.join(d, "zz_pkg", "BUILD"), "w").close())),
            ("a .gitignore", lambda: open(os.path.join(d, "zz_pkg", ".gitignore"), "w").write("*.c\n")),
            ("git add -f", lambda: (open(os.path.join(d, "zz_pkg", "k.c"), "w").close(),
                                    subprocess.run(git + ["add", "-f", os.path.join(d, "zz_pkg", "k.c")],
                                                   check=True))),
            ("git rm --cached", lambda: subprocess.run(
                git + ["rm", "-q", "--cached", os.path.join(d, "zz_pkg", "k.c")], check=True)),
            ("the package removed", lambda: shutil.rmtree(os.path.join(d, "zz_pkg"))),
            ("a directory at the top", lambda: os.makedirs(os.path.join(ws, "zz_top", "y"))),
            ("a bazel-* link", lambda: os.symlink(top, os.path.join(ws, "bazel-zz"))),
        ]
        gi = os.path.join(ws, ".gitignore")
        saved_gi = open(gi, "rb").read() if os.path.exists(gi) else None
        with open(gi, "ab") as f:
            f.write(b"\n*.o\nzz_out/\n")
        try:
            for what, edit in steps:
                edit()
                a, b = index(old, ws, ".trawl-old"), index(new, ws, ".trawl-new")
                same = a == b
                bad += not same
                print("%s  %7d bytes  %s: %s" % ("same  " if same else "DIFFER", len(b), ws, what))
        finally:
            for path, text in ((gi, saved_gi), (bi, saved)):
                if text is None:
                    os.remove(path)
                else:
                    with open(path, "wb") as f:
                        f.write(text)
            for p in ("zz_same.c", "zz_same.o", "zz_out", "zz_pkg"):
                p = os.path.join(d, p)
                shutil.rmtree(p) if os.path.isdir(p) else (os.path.exists(p) and os.remove(p))
            shutil.rmtree(os.path.join(ws, "zz_top"), ignore_errors=True)
            if os.path.islink(os.path.join(ws, "bazel-zz")):
                os.remove(os.path.join(ws, "bazel-zz"))
            for s in (".trawl-old", ".trawl-new"):
                shutil.rmtree(os.path.join(ws, s), ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
