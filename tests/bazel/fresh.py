#!/usr/bin/env python3
r"""Freshness: trawl_glob() answers for the tree as it is, within the same
Bazel command, and an edit costs what it costs glob(); the Bazel facts this
rests on (shared/INTEGRATION.md), each checked here before being relied on.

    fresh.py WORKDIR TRAWL_EXE

The workspace does not give trawl_repositories() a trawl: the repository
rule compiles one with the system C compiler (the README's command), and
the wrapper runs that one. (TRAWL_EXE is for the copied workspace only.)

 facts    /usr/bin/bazel runs WORKSPACE/tools/bazel with the real binary in
          $BAZEL_REAL; a local repository rule that names a variable in
          `environ` runs again in a server when the variable's value
          changes, and not while it stays the same; it runs at every --batch
          command; run again, linking a file that did not change, it reloads
          no package that loads that file. A rule that is not local runs
          again at a --batch command when its variable changed, and not
          while it stays the same; having read a label of a local rule's
          repository whose file changes at each run, at every --batch
          command.
 batch    through the wrapper from the first command (which says it compiles
          trawl, and how long that took): a file added, renamed, removed is
          seen and leaves the index as it is (the same kept file) and
          @trawl_index as it is (not run); a file git ignores changes the
          index; the real binary called directly indexes afresh (--batch),
          and again at its next command (a file git newly ignores is left
          out); .bazelignore edited in place; three indexes kept. (Renamed
          and removed: in server mode.)
 server   setup in the wrong order: a server started by the real binary
          before tools/bazel existed (and before .trawl/), then the wrapper
          installed: its first command sees every change. Then through the
          wrapper: a file added reloads its package alone, and no other, and
          rewrites the cache of its part of the walk alone; a
          file git ignores, a directory, the top .gitignore edited in place,
          `git add -f` of a file git ignores (tracked, it is never ignored:
          issue 31), a new package. The real binary: the first command after the
          wrapper's indexes afresh; later ones do not see what git newly
          ignores (the documented bypass), and a package they do not know
          fails with a message that says so; the wrapper's next command
          indexes.
 copy     a workspace copied with `cp -a` after a build carries the build's
          bazel-* links: `bazel query //...` loads the packages through them
          as glob() does, and trawl_glob() answers there as glob().
 noise    no DEBUG line but the test's own on any command (convenience
          links made and gone included).
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bazelws  # noqa: E402

REAL = "/usr/bin/bazel-4"

PROBE_BZL = r'''
def _impl(rctx):
    rctx.execute(["sh", "-c", "echo run >> \"$0\"", rctx.attr.log])
    rctx.file("BUILD", "")
    rctx.symlink(rctx.attr.target, "value.bzl")

probe = repository_rule(implementation = _impl, local = True, environ = ["TRAWL_PROBE"],
                        attrs = {"log": attr.string(), "target": attr.string()})

def _kept_impl(rctx):
    if rctx.os.environ.get("TRAWL_PROBE") == "now":
        rctx.path(Label("@probe_now//:now"))
    rctx.execute(["sh", "-c", "echo kept >> \"$0\"", rctx.attr.log])
    rctx.file("BUILD", "")
    rctx.file("x.bzl", "X = 1\n")

kept = repository_rule(implementation = _kept_impl, environ = ["TRAWL_PROBE"],
                       attrs = {"log": attr.string()})

def _now_impl(rctx):
    rctx.file("now", rctx.execute(["date", "+%s.%N"]).stdout)
    rctx.file("BUILD", 'exports_files(["now"])\n')

probe_now = repository_rule(implementation = _now_impl, local = True)
'''

PKG_BUILD = (b'load("@trawl//bazel:glob.bzl", "trawl_glob")\n'
             b'filegroup(name = "all", srcs = trawl_glob(["**/*.c"]))\n'
             b'print("FRESH", trawl_glob(["**/*.c"]), trawl_glob(["**/*.c"], gitignore = True))\n')
OWN = (b"FRESH", b"PROBE", b"SUB")  # the prints of this test


def main():
    workdir, trawl_exe = sys.argv[1], os.path.abspath(sys.argv[2])
    ws = bazelws.Workspace(workdir, "fresh")
    log = os.path.join(ws.base, "fresh", "probe.log")
    value = os.path.join(ws.base, "fresh", "value.bzl")
    if os.path.exists(log):
        os.remove(log)
    with open(value, "w") as f:
        f.write("VALUE = 1\n")
    with open(ws.path("WORKSPACE"), "ab") as f:
        f.write(('load("//probe:probe.bzl", "probe")\n'
                 'probe(name = "probe", log = %s, target = %s)\n' % (
                     bazelws.star(os.fsencode(log)), bazelws.star(os.fsencode(value)))).encode())
    ws.write("probe/probe.bzl", PROBE_BZL.encode())
    ws.write("probe/BUILD", b'load("@probe//:value.bzl", "VALUE")\nprint("PROBE", VALUE)\n')
    ws.write("probe2/BUILD", b'load("@probe//:value.bzl", "VALUE")\n')
    with open(ws.path("WORKSPACE"), "ab") as f:
        f.write(('load("//probe:probe.bzl", "kept", "probe_now")\n'
                 'kept(name = "kept", log = %s)\n'
                 'probe_now(name = "probe_now")\n' % bazelws.star(os.fsencode(log))).encode())
    ws.write("kept/BUILD", b'load("@kept//:x.bzl", "X")\n')
    subprocess.run(["git", "init", "-q", ws.root], check=True)
    ws.write(".gitignore", b"*.gen.c\nout/\n")
    ws.write("p/a.c", b"")
    ws.write("p/out/o.c", b"")  # git ignores p/out: gitignore = True splits p's patterns
    ws.write("p/BUILD", PKG_BUILD)
    ws.write("q/BUILD", PKG_BUILD.replace(b'print("FRESH"', b'print("Q"'))
    bad = 0

    def failed(msg):
        nonlocal bad
        print("FAIL: " + msg)
        bad += 1

    def runs(what="run"):
        return open(log).read().split().count(what) if os.path.exists(log) else 0

    def run(args, batch, binary="bazel", env=None, what=""):
        """Runs a command; checks its DEBUG lines are the test's own; returns
        the CompletedProcess and the packages it created (its profile)."""
        prof = os.path.join(ws.base, "fresh", "profile.json")
        p = ws.bazel(args[:1] + ["--profile=" + prof] + args[1:], batch=batch, binary=binary, env=env)
        for line in p.stderr.split(b"\n"):
            m = bazelws.DEBUG_RE.match(line)
            if line.startswith(b"DEBUG:") and not (m and m.group(2).split(b" ")[0] in OWN + (b"Q",)):
                failed("%s: a DEBUG line that is not the test's: %s" % (what, line.decode("latin-1")))
        created = set()
        if os.path.exists(prof):
            with open(prof) as f:
                d = json.load(f)
            created = {e.get("name") for e in (d["traceEvents"] if isinstance(d, dict) else d)
                       if e.get("cat") == "package creation"}
            os.remove(prof)
        return p, created

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

    # A local rule with `environ`, in a server: again when the value changes.
    def probe(what, env, want_runs, want_created=None):
        p, created = run(["query", "//probe:all + //probe2:all"], batch=False, binary=REAL,
                         env=env, what=what)
        if runs() != want_runs or (want_created is not None and created != want_created):
            failed("%s: runs %d, packages made %r; expected %d, %r" % (
                what, runs(), sorted(created), want_runs, want_created))
    probe("environ, first", {"TRAWL_PROBE": "a"}, 1)
    probe("environ, the same value", {"TRAWL_PROBE": "a"}, 1, set())
    # Run again, linking the same file: no package that loads it is made again.
    probe("environ, another value", {"TRAWL_PROBE": "b"}, 2, set())
    probe("environ, unset", {}, 3, set())
    before = runs()
    ws.bazel(["query", "//probe:all"], batch=True, check=0, env={"TRAWL_PROBE": "b"})
    if runs() != before + 1:
        failed("a local repository rule did not run at a --batch command (%d -> %d)" % (
            before, runs()))
    ws.shutdown()
    # A rule that is not local, at --batch commands: again only when its
    # variable changes, or at every start once it read a label of a local
    # rule's repository whose file changes at each run (@trawl_index and
    # @trawl_now rest on both).
    for i, (value, want) in enumerate([("a", 1), ("a", 1), ("b", 2), ("now", 3), ("now", 4),
                                       ("now", 5), ("b", 6), ("b", 6)]):
        ws.bazel(["query", "//kept:all"], batch=True, check=0, binary=REAL, env={"TRAWL_PROBE": value})
        if runs("kept") != want:
            failed("a rule that is not local, --batch command %d (TRAWL_PROBE=%s): it has run %d "
                   "times, expected %d" % (i + 1, value, runs("kept"), want))

    def fresh(want_all, want_gi, what, binary="bazel", batch=True, packages=None):
        p, created = run(["query", "//p/...:all"], batch=batch, binary=binary, what=what)
        lines = bazelws.debug_lines(p.stderr, b"FRESH ")
        want = ("%s %s" % (want_all, want_gi)).replace("'", '"').encode()
        if p.returncode != 0 or lines != [want]:
            failed("%s: %r, expected %r (exit %d)%s" % (what, lines, want, p.returncode,
                   "" if p.returncode == 0 else "\n" + p.stderr.decode("latin-1")[-2000:]))
        if packages is not None and created != packages:
            failed("%s: packages made %r, expected %r" % (what, sorted(created), sorted(packages)))
        return p

    def index(what, want, digest=None):
        """How the last command's @trawl_index got index.bzl: "kept" (a link
        to .trawl/index-DIGEST.bzl, the wrapper's) or "made" (the rule
        indexed, and copied it); and, given DIGEST, whether it is that
        index. Returns the digest."""
        p = os.path.join(ws.output_base, "external", "trawl_index", "index.bzl")
        got, d = "made", None
        if os.path.islink(p):
            target = os.readlink(p)
            got = "kept" if os.path.dirname(target) == ws.path(".trawl") else "link " + target
            d = os.path.basename(target)[len("index-"):-len(".bzl")]
        else:
            with open(ws.path(".trawl/stamp")) as f:
                d = f.read().split(" ")[0]
        if got != want:
            failed("%s: the index was %s, expected %s" % (what, got, want))
        if digest is not None and d != digest:
            failed("%s: the index is %s, expected %s (the same)" % (what, d, digest))
        return d

    # --batch, through the wrapper from the first command.
    os.symlink(os.path.join(bazelws.CHECKOUT, "bazel", "tools_bazel"), ws.path("tools/bazel"))
    p = fresh(["a.c", "out/o.c"], ["a.c"], "batch, first command (trawl compiled by the repository rule)")
    if b"tools/bazel: trawl is not set up here yet: this command sets it up" not in p.stderr or \
            b"tools/bazel: trawl was compiled in " not in p.stderr:
        failed("the first command did not say it compiles trawl, and how long it took:\n" +
               p.stderr.decode("latin-1")[-1500:])
    if not os.path.islink(ws.path(".trawl/trawl")) or \
            "trawl_tool" not in os.readlink(ws.path(".trawl/trawl")):
        failed("the repository rule did not compile trawl")
    index("batch, first command", "made")
    fresh(["a.c", "out/o.c"], ["a.c"], "batch, the second command")
    d0 = index("batch, the second command", "kept")
    marker = os.path.join(ws.output_base, "external", "@trawl_index.marker")

    def not_run(what, before):
        if os.stat(marker).st_mtime_ns != before:
            failed("%s: @trawl_index ran (its marker file was written again)" % what)
    m0 = os.stat(marker).st_mtime_ns
    fresh(["a.c", "out/o.c"], ["a.c"], "batch, nothing changed")
    not_run("batch, nothing changed", m0)
    ws.write("p/b.c", b"")
    fresh(["a.c", "b.c", "out/o.c"], ["a.c", "b.c"], "batch, a file added")
    index("batch, a file added", "kept", d0)
    not_run("batch, a file added", m0)
    os.remove(ws.path("p/b.c"))
    ws.write("p/x.gen.c", b"")
    fresh(["a.c", "out/o.c", "x.gen.c"], ["a.c"], "batch, a file removed, a file git ignores added")
    d1 = index("batch, a file git ignores", "kept")
    if d1 == d0:
        failed("batch, a file git ignores: the index did not change")
    ws.write("p/d.c", b"")
    fresh(["a.c", "d.c", "out/o.c", "x.gen.c"], ["a.c", "d.c"], "batch, the real binary", binary=REAL)
    index("batch, the real binary (no TRAWL_INDEX: the rule indexes)", "made")
    # Its next command indexes again (@trawl_now): what git newly ignores
    # is left out.
    ws.write("p/d.gen.c", b"")
    fresh(["a.c", "d.c", "d.gen.c", "out/o.c", "x.gen.c"], ["a.c", "d.c"],
          "batch, the real binary again, a file git ignores added", binary=REAL)
    os.remove(ws.path("p/d.gen.c"))
    # .bazelignore decides as much as the tree: edited in place (no
    # directory changes), the index is made again.
    ws.write("p/ign/x.c", b"")
    ws.write(".bazelignore", b"nothing\n")
    fresh(["a.c", "d.c", "ign/x.c", "out/o.c", "x.gen.c"], ["a.c", "d.c", "ign/x.c"],
          "batch, .bazelignore naming nothing")
    d2 = index("batch, .bazelignore naming nothing", "kept")
    ws.write(".bazelignore", b"p/ign\n")
    fresh(["a.c", "d.c", "out/o.c", "x.gen.c"], ["a.c", "d.c"], "batch, .bazelignore edited in place")
    if index("batch, .bazelignore edited in place", "kept") == d2:
        failed("batch, .bazelignore edited in place: the index did not change")
    kept = [n for n in os.listdir(ws.path(".trawl")) if n.startswith("index-")]
    if len(kept) != 3:
        failed("indexes kept in .trawl/: %d, expected the newest 3: %r" % (len(kept), kept))
    os.remove(ws.path(".bazelignore"))
    shutil.rmtree(ws.path("p/ign"))
    os.remove(ws.path("p/x.gen.c"))

    # Server mode, set up in the wrong order: a server started by the real
    # binary before tools/bazel and .trawl/ existed.
    os.remove(ws.path("tools/bazel"))
    shutil.rmtree(ws.path(".trawl"))
    ad = ["a.c", "d.c"]
    fresh(ad + ["out/o.c"], ad, "server, started without the wrapper", batch=False)
    os.symlink(os.path.join(bazelws.CHECKOUT, "bazel", "tools_bazel"), ws.path("tools/bazel"))
    ws.write("p/e.c", b"")
    ws.write("p/y.gen.c", b"")
    ws.write("p/s/BUILD", b'load("@trawl//bazel:glob.bzl", "trawl_glob")\n'
                          b'print("SUB", trawl_glob(["*.c"], gitignore = True))\n')
    ws.write("p/s/f.c", b"")
    ws.write("p/s/z.gen.c", b"")
    ade = ad + ["e.c"]
    p = fresh(ade + ["out/o.c", "y.gen.c"], ade, "server, the wrapper's first command", batch=False)
    if bazelws.debug_lines(p.stderr, b"SUB ") != [b'["f.c"]']:
        failed("server, the wrapper's first command: a new package: %r" %
               bazelws.debug_lines(p.stderr, b"SUB "))
    d3 = index("server, the wrapper's first command", "kept")
    fresh(ade + ["out/o.c", "y.gen.c"], ade, "server, nothing changed", batch=False, packages=set())
    def parts():
        d = ws.path(".trawl/parts")
        return {n: os.stat(os.path.join(d, n)).st_mtime_ns for n in os.listdir(d)}
    before = parts()
    ws.write("p/f.c", b"")
    adef = ade + ["f.c"]
    fresh(adef + ["out/o.c", "y.gen.c"], adef, "server, a file added", batch=False, packages={"p"})
    index("server, a file added", "kept", d3)
    # The check read and wrote the cache of p's part of the walk, and no
    # other file of trawl's.
    after = parts()
    changed = sorted(n for n in after if before.get(n) != after[n])
    caches = [n for n in after if n.endswith(".cache")]
    if len(caches) < 6 or len(changed) != 1 or not changed[0].endswith(".cache") or \
            set(before) != set(after):
        failed("server, a file added: of %d caches (one per directory at the top, and the top's), "
               "the files that changed: %r" % (len(caches), changed))
    os.rename(ws.path("p/f.c"), ws.path("p/g.c"))
    adeg = ade + ["g.c"]
    fresh(adeg + ["out/o.c", "y.gen.c"], adeg, "server, a file renamed", batch=False, packages={"p"})
    index("server, a file renamed", "kept", d3)
    os.remove(ws.path("p/g.c"))
    fresh(ade + ["out/o.c", "y.gen.c"], ade, "server, a file removed", batch=False, packages={"p"})
    ws.write("p/w.gen.c", b"")
    fresh(ade + ["out/o.c", "w.gen.c", "y.gen.c"], ade, "server, a file git ignores", batch=False)
    ws.write("p/t/u.c", b"")
    fresh(ade + ["out/o.c", "t/u.c", "w.gen.c", "y.gen.c"], ade + ["t/u.c"], "server, a directory",
          batch=False)
    with open(ws.path(".gitignore"), "ab") as f:
        f.write(b"e.c\n")
    fresh(ade + ["out/o.c", "t/u.c", "w.gen.c", "y.gen.c"], ad + ["t/u.c"],
          "server, the top .gitignore edited in place", batch=False)
    # Only git's index changes: the wrapper's check asks it again.
    subprocess.run(["git", "-C", ws.root, "add", "-f", "p/e.c"], check=True)
    fresh(ade + ["out/o.c", "t/u.c", "w.gen.c", "y.gen.c"], ade + ["t/u.c"],
          "server, git add -f of a file git ignores: tracked, not ignored", batch=False)

    # The real binary: its first command after the wrapper's indexes (the
    # rule runs again: TRAWL_INDEX is gone); later ones see files added and
    # removed (Bazel's listings) but not what git newly ignores.
    ws.write("p/v.c", b"")
    all1 = ade + ["out/o.c", "t/u.c", "v.c", "w.gen.c", "y.gen.c"]
    fresh(all1, ade + ["t/u.c", "v.c"], "server, the real binary's first command", binary=REAL,
          batch=False)
    index("server, the real binary's first command", "made")
    ws.write("p/r.gen.c", b"")
    all2 = sorted(all1 + ["r.gen.c"])
    fresh(all2, ade + ["r.gen.c", "t/u.c", "v.c"],
          "server, the real binary again (bypass: a file git ignores is not known)", binary=REAL,
          batch=False)
    ws.write("p/n/BUILD", b'load("@trawl//bazel:glob.bzl", "trawl_glob")\n'
                          b'print("SUB", trawl_glob(["*.c"], gitignore = True))\n')
    p = ws.bazel(["query", "//p/n:all"], batch=False, binary=REAL)
    if p.returncode == 0 or b"package 'p/n' is not in trawl's index" not in p.stderr or \
            b"did not go through tools/bazel" not in p.stderr:
        failed("server, the real binary, a new package: exit %d, expected a message naming the "
               "cause:\n%s" % (p.returncode, p.stderr.decode("latin-1")[-1500:]))
    fresh(all2, ade + ["t/u.c", "v.c"], "server, the wrapper again", batch=False)
    p = ws.bazel(["query", "//p/n:all"], batch=False)
    if bazelws.debug_lines(p.stderr, b"SUB ") != [b"[]"]:
        failed("server, the wrapper, the new package: %r" % bazelws.debug_lines(p.stderr, b"SUB "))

    # A build makes the convenience links (bazel-fresh... named after the
    # workspace's directory, "ws"); no DEBUG line follows.
    p, _ = run(["build", "//p:all"], batch=False, what="server, a build")
    if not os.path.islink(ws.path("bazel-ws")):
        failed("the build made no bazel-ws link")
    fresh(all2, ade + ["t/u.c", "v.c"], "server, after the links appeared", batch=False)
    ws.shutdown()

    # A copy of the built workspace, with its links (they lead into the first
    # workspace's output base): Bazel's `//...` enters them, and glob()
    # answers in the packages it finds there; so must trawl_glob().
    all2b = [x.encode() for x in all2]
    copy = bazelws.Workspace(workdir, "fresh-copy")
    shutil.rmtree(copy.root)
    subprocess.run(["cp", "-a", ws.root, copy.root], check=True)
    with open(copy.path("WORKSPACE"), "wb") as f:
        f.write(('local_repository(name = "trawl", path = %s)\n'
                 'load("@trawl//bazel:repositories.bzl", "trawl_repositories")\n'
                 'trawl_repositories(trawl = %s)\n' % (bazelws.star(os.fsencode(bazelws.CHECKOUT)),
                                                      bazelws.star(os.fsencode(trawl_exe)))).encode())
    shutil.rmtree(copy.path("probe"))
    p = copy.bazel(["query", "--keep_going", "//...:all"])
    blocks = bazelws.error_blocks(p.stderr, copy.root)
    trawl_errors = [t for t in blocks.values() if "trawl_glob" in t]
    # Through the link: glob()'s answer, with gitignore = True too (trawl
    # does not walk there).
    through = [line.split(b"FRESH ", 1)[1] for line in p.stderr.split(b"\n")
               if b"/bazel-ws/p/BUILD" in line and b"FRESH " in line]
    if trawl_errors or len(through) != 1:
        failed("copied workspace: trawl_glob() in the packages through bazel-ws: %r; errors: %s" % (
            through, "\n".join(trawl_errors)[-2000:]))
    elif through[0] != b" ".join([b'["' + b'", "'.join(all2b) + b'"]'] * 2):
        failed("copied workspace: %r" % through)
    copy.shutdown()
    print("fresh: %d failures" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
