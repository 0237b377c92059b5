#!/usr/bin/env python3
"""A Bazel workspace whose sources live partly in a real git submodule
(issue 24), with real Bazel 4.2.3, git and the tools/bazel wrapper.

    submodule.py WORKDIR TRAWL_EXE

`p/third_party` is `git submodule add`ed from a local bare repository whose
`.gitignore` ignores `*.o.c`; package p prints native glob() and
trawl_glob(gitignore = True) of `**/*.c`. In one Bazel server:
- the first command: trawl_glob() is native glob() less what git ignores,
  asked of git itself in each repository (the submodule's own rules apply
  inside it, docs/ignore.md, "Nested repositories"): the submodule's files
  are listed, its ignored one is not;
- a no-op command keeps the index (the same digest), rewrites none of the
  parts' caches, and `trawl check --stats` of every part's cache then opens
  no directory and writes nothing (the submodule's sources — its `.git`
  file, `.git/modules/p/third_party`'s HEAD, info/exclude, config — are
  stamped, docs/cache.md);
- a file added inside the submodule is in the next command's answer, and
  one its `.gitignore` ignores is in glob()'s alone.
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bazelws  # noqa: E402

SUB = "p/third_party"
BUILD = (b'load("@trawl//bazel:glob.bzl", "trawl_glob")\n'
         b'print("SUBMOD", glob(["**/*.c"]))\n'
         b'print("SUBMOD", trawl_glob(["**/*.c"], gitignore = True))\n')


def main():
    workdir, trawl = sys.argv[1], os.path.abspath(sys.argv[2])
    ws = bazelws.Workspace(workdir, "submodule", trawl=trawl)
    base = os.path.join(ws.base, "submodule")
    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.path.join(base, "gitconfig"),
               GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    # (trawl, through the wrapper, reads the same configuration as git.)
    gitenv = {k: env[k] for k in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")}
    with open(env["GIT_CONFIG_GLOBAL"], "w") as f:
        # Local submodules need protocol.file.allow.
        f.write("[protocol \"file\"]\n\tallow = always\n")
    bad = 0

    def failed(msg):
        nonlocal bad
        print("FAIL: " + msg)
        bad += 1

    def git(args, cwd=ws.root):
        p = subprocess.run(["git"] + args, cwd=cwd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        if p.returncode != 0:
            raise SystemExit("FAIL: git %s: %s" % (" ".join(args), p.stderr.decode()))
        return p.stdout.decode()

    src = os.path.join(base, "remote-src")
    os.makedirs(os.path.join(src, "lib"), exist_ok=True)
    for name, text in {"lib/a.c": "", "lib/b.c": "", "lib/skip.o.c": "", ".gitignore": "*.o.c\n"}.items():
        with open(os.path.join(src, name), "w") as f:
            f.write(text)
    git(["init", "-q"], cwd=src)
    git(["add", "-A"], cwd=src)
    git(["commit", "-qm", "remote"], cwd=src)
    remote = os.path.join(base, "remote.git")
    git(["clone", "-q", "--bare", src, remote], cwd=base)

    git(["init", "-q"])
    ws.write("p/BUILD", BUILD)
    ws.write("p/own.c", b"")
    ws.write("p/gen.o.c", b"")  # the top's rules do not ignore it; the submodule's would
    git(["submodule", "add", "-q", remote, SUB])
    # The untracked file the submodule's .gitignore ignores (its clone has
    # only what was committed).
    with open(ws.path(SUB + "/lib/skip.o.c"), "w"):
        pass
    # The wrapper copied, not linked (docs/bazel.md allows both): the
    # indexer walks as glob() does, following links, and a directory with a
    # link to follow is read at every check (docs/cache.md), which would
    # hide what this test looks at: that nothing else is.
    os.makedirs(ws.path("tools"))
    shutil.copy(os.path.join(bazelws.CHECKOUT, "bazel", "tools_bazel"), ws.path("tools/bazel"))

    def ignored():
        """What git ignores below p, asked of each repository: the top's
        (which does not enter the submodule) and the submodule's own."""
        out = {l[2:] for l in git(["ls-files", "-o", "-i", "--exclude-standard", "--", "p"])
               .splitlines()}
        out |= {SUB[2:] + "/" + l for l in git(["ls-files", "-o", "-i", "--exclude-standard"],
                                                cwd=ws.path(SUB)).splitlines()}
        return out

    def query(what, must_have, must_not_have):
        """One command through the wrapper: trawl_glob() against native
        glob() less what git ignores; MUST_HAVE in both, MUST_NOT_HAVE in
        glob()'s alone."""
        p = ws.bazel(["query", "//p:all"], batch=False, env=gitenv)
        lines = bazelws.debug_lines(p.stderr, b"SUBMOD ")
        if p.returncode != 0 or len(lines) != 2:
            failed("%s: exit %d, lines %r\n%s" % (what, p.returncode, lines,
                                                  p.stderr.decode("latin-1")[-2000:]))
            return
        # (Starlark prints a list of plain names as JSON would.)
        native, got = (json.loads(line.decode()) for line in lines)
        ign = ignored()
        want = [x for x in native if x not in ign]
        if got != want:
            failed("%s: trawl_glob %r, expected glob() less what git ignores %r" % (what, got, want))
        for x in must_have:
            if x not in native or x not in got:
                failed("%s: %s not in glob()'s and trawl_glob()'s answers: %r, %r" % (what, x, native, got))
        for x in must_not_have:
            if x not in native or x in got:
                failed("%s: %s not in glob()'s answer alone: %r, %r" % (what, x, native, got))

    def index_digest():
        with open(ws.path(".trawl/stamp")) as f:
            return f.read().split(" ")[0]

    def caches():
        d = ws.path(".trawl/parts")
        return {n: os.stat(os.path.join(d, n)).st_mtime_ns for n in os.listdir(d)
                if n.endswith(".cache")}

    sub_files = ["third_party/lib/a.c", "third_party/lib/b.c"]
    query("first command", ["own.c", "gen.o.c"] + sub_files, ["third_party/lib/skip.o.c"])
    query("nothing changed", [], [])  # the racy directories of the first walk read again
    digest, before = index_digest(), caches()
    query("nothing changed, again", sub_files, ["third_party/lib/skip.o.c"])
    if index_digest() != digest or caches() != before:
        failed("a no-op command: the index %s -> %s, the parts' caches rewritten: %r" % (
            digest, index_digest(), sorted(n for n in caches() if before.get(n) != caches()[n])))
    if not before:
        failed("no part caches in .trawl/parts")
    for name in sorted(before):
        p = subprocess.run([trawl, "check", "--stats", "--cache=" + os.path.join(".trawl/parts", name)],
                           cwd=ws.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        err = p.stderr.decode()
        if p.returncode != 0 or "directories opened 0," not in err or "cache written" in err:
            failed("trawl check --stats of the unchanged part %s: exit %d, %s" % (
                name, p.returncode, err.strip()))

    ws.write(SUB + "/lib/new.c", b"")
    query("a file added inside the submodule", ["third_party/lib/new.c"] + sub_files,
          ["third_party/lib/skip.o.c"])
    ws.write(SUB + "/lib/new.o.c", b"")
    query("a file the submodule's .gitignore ignores added inside it", ["third_party/lib/new.c"],
          ["third_party/lib/new.o.c", "third_party/lib/skip.o.c"])
    ws.shutdown()
    print("submodule: %d failures" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
