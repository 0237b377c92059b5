#!/usr/bin/env python3
r"""Freshness: trawl_glob() answers for the tree as it is, within the same
Bazel command, through the tools/bazel wrapper; and the Bazel facts it rests
on (shared/INTEGRATION.md), each checked here before being relied on.

    fresh.py WORKDIR

The workspace does not give trawl_repositories() a trawl: the repository
rule compiles one with the system C compiler (the README's command), and
the wrapper runs that one.

 facts    /usr/bin/bazel runs WORKSPACE/tools/bazel with the real binary in
          $BAZEL_REAL; a repository rule runs again when a file it read by
          label changes content (and the same command sees the new
          result), not when a directory gains a file; a local repository
          rule runs again at every --batch command.
 batch    files added are seen by the next command, through the wrapper and
          also with the real binary called directly (the local rule runs
          at each start of Bazel). Through the wrapper, a command after no
          change takes the index kept under the stamp's digest (no process),
          also after a command with the real binary, and after a change
          undone; an edit of .bazelignore in place (no directory changes)
          is indexed again; three indexes are kept.
 server   through the wrapper: a file added, a gitignored file added, a file
          removed, a directory added, the top .gitignore edited in place,
          `git add -f` of a gitignored file (tracked, it is never ignored:
          issue 31), a new package; calling the real binary directly bypasses the
          wrapper and the answer is the old one (as docs/bazel.md says),
          until `sync` (which indexes: the wrapper's TRAWL_CHECKED is in
          the command's environment, not the server's) or the next command
          through the wrapper.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bazelws  # noqa: E402

REAL = "/usr/bin/bazel-4"

PROBE_BZL = r'''
def _impl(rctx):
    text = rctx.read(Label("//probe:input.txt"))
    rctx.execute(["sh", "-c", "echo run >> \"$0\"", rctx.attr.log])
    rctx.file("BUILD", "")
    rctx.file("value.bzl", "VALUE = %r\n" % text.strip())

probe = repository_rule(implementation = _impl, attrs = {"log": attr.string()})

def _local_impl(rctx):
    rctx.execute(["sh", "-c", "echo run >> \"$0\"", rctx.attr.log])
    rctx.file("BUILD", "")
    rctx.file("value.bzl", "VALUE = 1\n")

local_probe = repository_rule(implementation = _local_impl, local = True,
                              attrs = {"log": attr.string()})
'''


def main():
    workdir = sys.argv[1]
    ws = bazelws.Workspace(workdir, "fresh")
    log = os.path.join(ws.base, "fresh", "probe.log")
    llog = os.path.join(ws.base, "fresh", "local.log")
    for p in (log, llog):
        if os.path.exists(p):
            os.remove(p)
    with open(ws.path("WORKSPACE"), "ab") as f:
        f.write(('load("//probe:probe.bzl", "probe", "local_probe")\n'
                 'probe(name = "probe", log = %s)\n'
                 'local_probe(name = "local_probe", log = %s)\n' % (
                     bazelws.star(os.fsencode(log)), bazelws.star(os.fsencode(llog)))).encode())
    ws.write("probe/probe.bzl", PROBE_BZL.encode())
    ws.write("probe/input.txt", b"one\n")
    ws.write("probe/BUILD", b'load("@probe//:value.bzl", "VALUE")\n'
                            b'load("@local_probe//:value.bzl", L = "VALUE")\n'
                            b'print("PROBE", VALUE)\n')
    subprocess.run(["git", "init", "-q", ws.root], check=True)
    ws.write(".gitignore", b"*.gen.c\n")
    ws.write("p/a.c", b"")
    ws.write("p/BUILD", b'load("@trawl//bazel:glob.bzl", "trawl_glob")\n'
                        b'print("FRESH", trawl_glob(["**/*.c"]), trawl_glob(["**/*.c"], gitignore = True))\n')
    bad = 0

    def failed(msg):
        nonlocal bad
        print("FAIL: " + msg)
        bad += 1

    def runs(path):
        return open(path).read().count("run") if os.path.exists(path) else 0

    # /usr/bin/bazel runs tools/bazel, with the real binary in BAZEL_REAL.
    seen = os.path.join(ws.base, "fresh", "wrapper.env")
    ws.write("tools/bazel", b'#!/bin/sh\necho "$BAZEL_REAL" > "%s"\nexec "$BAZEL_REAL" "$@"\n' %
             os.fsencode(seen))
    os.chmod(ws.path("tools/bazel"), 0o755)
    ws.bazel(["--version"], batch=False, check=0)
    got = open(seen).read().strip() if os.path.exists(seen) else None
    if not got or not os.access(got, os.X_OK) or os.path.realpath(got) != os.path.realpath(REAL):
        failed("tools/bazel was not run with BAZEL_REAL=%s: %r" % (REAL, got))
    os.remove(ws.path("tools/bazel"))
    os.symlink(os.path.join(bazelws.CHECKOUT, "bazel", "tools_bazel"), ws.path("tools/bazel"))

    def fresh(want_all, want_gi, what, binary="bazel", batch=True):
        p = ws.bazel(["query", "//p/...:all"], batch=batch, binary=binary)
        lines = bazelws.debug_lines(p.stderr, b"FRESH ")
        want = ("%s %s" % (want_all, want_gi)).replace("'", '"').encode()
        if p.returncode != 0 or lines != [want]:
            failed("%s: %r, expected %r (exit %d)%s" % (what, lines, want, p.returncode,
                   "" if p.returncode == 0 else "\n" + p.stderr.decode("latin-1")[-2000:]))

    def indexed(what, want):
        """How the last command's @trawl_index got its index.bzl: "kept" (a
        link to the index kept in .trawl/ under the stamp's digest) or
        "made" (the indexer ran)."""
        p = os.path.join(ws.output_base, "external", "trawl_index", "index.bzl")
        got = "made"
        if os.path.islink(p):
            target = os.readlink(p)
            with open(ws.path(".trawl/stamp")) as f:
                digest = f.read().strip()
            got = "kept" if os.path.dirname(target) == ws.path(".trawl") and \
                os.path.basename(target).startswith("index-%s-" % digest) else "link " + target
        if got != want:
            failed("%s: the index was %s, expected %s" % (what, got, want))

    # --batch
    fresh(["a.c"], ["a.c"], "batch, first command (trawl compiled by the repository rule)")
    if not os.path.islink(ws.path(".trawl/trawl")) or \
            "trawl_tool" not in os.readlink(ws.path(".trawl/trawl")):
        failed("the repository rule did not compile trawl")
    indexed("batch, first command", "made")
    fresh(["a.c"], ["a.c"], "batch, nothing changed")
    indexed("batch, nothing changed", "kept")
    ws.write("p/b.c", b"")
    fresh(["a.c", "b.c"], ["a.c", "b.c"], "batch, a file added, through the wrapper")
    indexed("batch, a file added", "made")
    ws.write("p/c.c", b"")
    fresh(["a.c", "b.c", "c.c"], ["a.c", "b.c", "c.c"], "batch, a file added, real binary",
          binary=REAL)
    indexed("batch, real binary (no check: TRAWL_CHECKED unset)", "made")
    fresh(["a.c", "b.c", "c.c"], ["a.c", "b.c", "c.c"], "batch, then through the wrapper")
    indexed("batch, through the wrapper after the real binary", "kept")
    os.remove(ws.path("p/c.c"))
    fresh(["a.c", "b.c"], ["a.c", "b.c"], "batch, a file added and removed again")
    indexed("batch, a change undone (the earlier answer's index)", "kept")
    # .bazelignore decides as much as the tree: edited in place (no
    # directory changes, the stamp stays), the index is made again.
    ws.write("p/ign/x.c", b"")
    ws.write(".bazelignore", b"nothing\n")
    fresh(["a.c", "b.c", "ign/x.c"], ["a.c", "b.c", "ign/x.c"], "batch, .bazelignore naming nothing")
    ws.write(".bazelignore", b"p/ign\n")
    fresh(["a.c", "b.c"], ["a.c", "b.c"], "batch, .bazelignore edited in place")
    indexed("batch, .bazelignore edited in place", "made")
    os.remove(ws.path(".bazelignore"))
    os.remove(ws.path("p/ign/x.c"))
    os.rmdir(ws.path("p/ign"))
    ws.write("p/c.c", b"")
    fresh(["a.c", "b.c", "c.c"], ["a.c", "b.c", "c.c"], "batch, .bazelignore gone")
    kept = [n for n in os.listdir(ws.path(".trawl")) if n.startswith("index-")]
    if len(kept) != 3:
        failed("indexes kept in .trawl/: %d, expected the newest 3: %r" % (len(kept), kept))

    # Facts of repository rules, in server mode.
    def probe(what, want_value, want_runs):
        p = ws.bazel(["query", "//probe:all"], batch=False)
        v = bazelws.debug_lines(p.stderr, b"PROBE ")
        if v != [want_value] or runs(log) != want_runs:
            failed("%s: value %r, runs %d; expected %r, %d" % (what, v, runs(log), want_value,
                                                                want_runs))
    probe("probe, first", b"one", 1)
    probe("probe, again", b"one", 1)
    ws.write("probe/new.txt", b"")
    probe("probe, its directory gained a file", b"one", 1)
    ws.write("probe/input.txt", b"two\n")
    probe("probe, the file it read by label changed", b"two", 2)
    before = runs(llog)
    ws.bazel(["query", "//probe:all"], batch=True, check=0)
    ws.bazel(["query", "//probe:all"], batch=True, check=0)
    if runs(llog) != before + 2:
        failed("a local repository rule did not run at each --batch command (%d -> %d)" % (
            before, runs(llog)))

    # Server mode, through the wrapper.
    abc = ["a.c", "b.c", "c.c"]
    fresh(abc, abc, "server, first", batch=False)
    ws.write("p/d.c", b"")
    fresh(abc + ["d.c"], abc + ["d.c"], "server, a file added", batch=False)
    ws.write("p/e.gen.c", b"")
    fresh(abc + ["d.c", "e.gen.c"], abc + ["d.c"], "server, a gitignored file added", batch=False)
    os.remove(ws.path("p/d.c"))
    ws.write("p/sub/f.c", b"")
    fresh(abc + ["e.gen.c", "sub/f.c"], abc + ["sub/f.c"], "server, a file removed, a directory added",
          batch=False)
    ws.write("p/g.c", b"")
    fresh(abc + ["e.gen.c", "sub/f.c"], abc + ["sub/f.c"],
          "server, the real binary called directly (bypass: the old answer)", binary=REAL,
          batch=False)
    # TRAWL_CHECKED is the command's environment, not the server's (which a
    # command through the wrapper started): `sync` with the real binary
    # indexes, it does not take the kept index of the last check.
    ws.bazel(["sync", "--only=trawl_index"], batch=False, binary=REAL, check=0)
    indexed("server, sync with the real binary", "made")
    fresh(abc + ["e.gen.c", "g.c", "sub/f.c"], abc + ["g.c", "sub/f.c"],
          "server, after sync with the real binary", binary=REAL, batch=False)
    fresh(abc + ["e.gen.c", "g.c", "sub/f.c"], abc + ["g.c", "sub/f.c"],
          "server, the next command through the wrapper", batch=False)
    with open(ws.path(".gitignore"), "ab") as f:
        f.write(b"g.c\n")
    fresh(abc + ["e.gen.c", "g.c", "sub/f.c"], abc + ["sub/f.c"],
          "server, the top .gitignore edited in place", batch=False)
    # Only the index changes: the wrapper's check asks it again.
    subprocess.run(["git", "-C", ws.root, "add", "-f", "p/g.c"], check=True)
    fresh(abc + ["e.gen.c", "g.c", "sub/f.c"], abc + ["g.c", "sub/f.c"],
          "server, git add -f of a gitignored file: tracked, not ignored", batch=False)
    ws.write("p/sub/BUILD", b'load("@trawl//bazel:glob.bzl", "trawl_glob")\n'
                            b'print("SUB", trawl_glob(["*.c"]))\n')
    fresh(abc + ["e.gen.c", "g.c"], abc + ["g.c"], "server, a new package", batch=False)
    p = ws.bazel(["query", "//p/sub:all"], batch=False)
    if bazelws.debug_lines(p.stderr, b"SUB ") != [b'["f.c"]']:
        failed("the new package's trawl_glob: %r" % bazelws.debug_lines(p.stderr, b"SUB "))
    ws.shutdown()
    print("fresh: %d failures" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
