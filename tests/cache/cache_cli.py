#!/usr/bin/env python3
"""The result cache from the command line: `trawl --cache`, `trawl check`.

    cache_cli.py TRAWL_EXE

On a hand-made tree: a cached walk prints what a plain walk prints, the
second run reads no directory (--stats), a one-file change reads exactly one
(--stats: "directories opened: 1"); a bad cache file is one warning and the
right answer; `trawl check` exits 0 and writes nothing when nothing changed,
and when something did prints "+ path" / "- path", rewrites the cache,
touches (--touch) or rewrites (--bump, a digest of the results) the stamp and
exits 1; several caches in one call; a cache that cannot be read counts as
a change; changed names shown escaped, and headed by a labels file beside the
cache when there is one; usage errors exit 2.
"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "walk"))

from clitest import FAILURES, check, run
from clitest import write as write_text


def write(path, text="x"):
    write_text(path, text)


def stat_line(err, name):
    for line in err.splitlines():
        if line.startswith("trawl: " + name + ":"):
            return line.split(":", 2)[2].strip()
    return None


def settle():
    # Older than the racy window (two ticks of the coarse clock).
    time.sleep(0.05)


def work_tree(trawl, tmp, env):
    """Issue 13, as a user meets it: inside a git work tree whose top is the
    root, a .gitignore below the root edited in place, replaced by a rename,
    or created in a directory already recorded. A cached run then answers
    as a fresh walk does, and `trawl check` says "changed" exactly once —
    whichever of the two comes first."""
    import subprocess

    def edit(t):
        with open(os.path.join(t, "src/.gitignore"), "a") as f:
            f.write("*.o\n")

    def replace(t):
        write(os.path.join(t, "src/.gitignore.new"), "*.zzz\n*.o\n")
        os.rename(os.path.join(t, "src/.gitignore.new"), os.path.join(t, "src/.gitignore"))

    def create(t):
        write(os.path.join(t, "src/build/.gitignore"), "e\n")

    cases = (("edited in place", edit, "- src/b.o"), ("replaced by a rename", replace, "- src/b.o"),
             ("created", create, "- src/build/e"))
    for name, change, removed in cases:
        for first in ("run", "check"):
            t = os.path.join(tmp, "wt-%s-%s" % (name.replace(" ", "-"), first))
            subprocess.run(["git", "init", "-q", t], check=True, env=env)
            for f in ("src/a.c", "src/b.o", "src/build/e"):
                write(os.path.join(t, f))
            write(os.path.join(t, "src/.gitignore"), "*.zzz\n")
            c = t + ".cache"
            settle()
            before = run(trawl, ["-C", t, "--cache", c, "**/*"], env)
            check("work tree, %s: the first cached run" % name, before[1],
                  "src/a.c\nsrc/b.o\nsrc/build/e\n")
            settle()
            change(t)
            settle()
            fresh = run(trawl, ["-C", t, "**/*"], env)[1]
            what = "work tree, .gitignore below the root %s, %s first" % (name, first)
            check(what + ": the fresh answer differs", fresh != before[1], True)
            if first == "run":
                got = run(trawl, ["-C", t, "--cache", c, "**/*"], env)
                check(what + ": the cached run answers as a fresh walk", got[1], fresh)
                code, out, _ = run(trawl, ["check", "--cache", c], env)
                check(what + ": then check, unchanged", (code, out), (0, ""))
            else:
                code, out, _ = run(trawl, ["check", "--cache", c], env)
                check(what + ": check exits 1 with the change", (code, out.splitlines()),
                      (1, ["%s: query 0 (%s)" % (c, t), removed]))
                code, out, _ = run(trawl, ["check", "--cache", c], env)
                check(what + ": then check, unchanged", (code, out), (0, ""))
                got = run(trawl, ["-C", t, "--cache", c, "**/*"], env)
                check(what + ": then the cached run answers as a fresh walk", got[1], fresh)


def shown_names(trawl, tmp, env):
    """trawl check shows each changed name as messages show names (report.h):
    valid UTF-8 as it is, '\\' doubled, control bytes and bytes that are not
    UTF-8 escaped, so that a name cannot forge a line or stop a reader that
    decodes UTF-8; and a cache's labels file (CACHE.labels, written by trawl
    meson) heads the changes and prefixes the paths instead."""
    tree = os.fsencode(os.path.join(tmp, "names"))
    os.makedirs(tree)
    cache = os.path.join(tmp, "names.cache")
    run(trawl, ["-C", os.fsdecode(tree), "--cache", cache, "**"], env)
    for name in (b"w\xff.c", b"t\tab.c", b"back\\slash.c", "\u00e9.c".encode(), b"n\nl.c"):
        with open(os.path.join(tree, name), "wb"):
            pass
    settle()
    code, out, _ = run(trawl, ["check", "--cache", cache], env)
    check("check, names: shown escaped, one line each", (code, out.splitlines()),
          (1, ["%s: query 0 (%s)" % (cache, os.fsdecode(tree)), "+ back\\\\slash.c",
               "+ n\\nl.c", "+ t\\tab.c", "+ w\\xff.c", "+ \u00e9.c"]))
    with open(cache + ".labels", "wb") as f:
        f.write(b"trawl check labels 1\nsrc/meson.build: list 1: '**'\0../names/\0")
    os.unlink(os.path.join(tree, b"t\tab.c"))
    settle()
    code, out, _ = run(trawl, ["check", "--cache", cache], env)
    check("check, labelled: the label and the prefixed path", (code, out.splitlines()),
          (1, ["src/meson.build: list 1: '**'", "- ../names/t\\tab.c"]))
    with open(cache + ".labels", "wb") as f:
        f.write(b"trawl check labels 1\na\0\0b\0\0")  # two entries, one query
    os.unlink(os.path.join(tree, b"n\nl.c"))
    settle()
    code, out, _ = run(trawl, ["check", "--cache", cache], env)
    check("check, labels of another cache: not used", (code, out.splitlines()),
          (1, ["%s: query 0 (%s)" % (cache, os.fsdecode(tree)), "- n\\nl.c"]))


def main(argv):
    trawl = os.path.abspath(argv[1])
    with tempfile.TemporaryDirectory(prefix="trawl-cache-cli-") as tmp:
        env = dict(os.environ, HOME=tmp, XDG_CONFIG_HOME=os.path.join(tmp, "xdg"),
                   GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.path.join(tmp, "gitconfig"))
        tree = os.path.join(tmp, "tree")
        for f in ("a.c", "b.h", "src/c.c", "src/d/e.c", "lib/f.c", "lib/g.md", "docs/h.md"):
            write(os.path.join(tree, f))
        cache = os.path.join(tmp, "c.cache")
        settle()

        plain = run(trawl, ["-C", tree, "**/*.c"], env)
        first = run(trawl, ["-C", tree, "--cache", cache, "--stats", "**/*.c"], env)
        check("first cached run prints what a plain walk prints", first[:2], plain[:2])
        check("first cached run reads every directory", stat_line(first[2], "directories opened"), "5")
        check("first cached run warns of nothing", [l for l in first[2].splitlines()
                                                    if "cache" in l and "cache:" not in l], [])
        check("the cache file exists", os.path.isfile(cache), True)
        second = run(trawl, ["-C", tree, "--cache", cache, "--stats", "**/*.c"], env)
        check("second run: same output", second[:2], plain[:2])
        check("second run reads nothing", stat_line(second[2], "directories opened"), "0")
        check("second run reuses every directory", stat_line(second[2], "directories reused"), "5")

        write(os.path.join(tree, "src/d/new.c"))
        settle()
        third = run(trawl, ["-C", tree, "--cache", cache, "--stats", "**/*.c"], env)
        check("one new file: the new answer", third[:2], run(trawl, ["-C", tree, "**/*.c"], env)[:2])
        check("one new file: exactly one directory read", stat_line(third[2], "directories opened"), "1")

        # A bad cache: one warning, the right answer, replaced.
        with open(cache, "r+b") as f:
            f.truncate(30)
        bad = run(trawl, ["-C", tree, "--cache", cache, "**/*.c"], env)
        check("truncated cache: the right answer", bad[:2], third[:2])
        warn = [l for l in bad[2].splitlines() if l.startswith("trawl: cache")]
        check("truncated cache: one warning naming it", len(warn) == 1 and cache in warn[0]
              and "truncated" in warn[0], True)
        again = run(trawl, ["-C", tree, "--cache", cache, "--stats", "**/*.c"], env)
        check("replaced cache trusted", stat_line(again[2], "cache"), "trusted")

        # trawl check: nothing changed.
        stamp = os.path.join(tmp, "stamp")
        settle()
        before = os.stat(cache).st_mtime_ns
        code, out, err = run(trawl, ["check", "--cache", cache, "--touch", stamp], env)
        check("check, unchanged: exit 0", code, 0)
        check("check, unchanged: prints nothing", out, "")
        check("check, unchanged: no stamp made", os.path.exists(stamp), False)
        check("check, unchanged: cache not rewritten", os.stat(cache).st_mtime_ns, before)

        # A file added, one removed.
        write(os.path.join(tree, "lib/new.c"))
        os.unlink(os.path.join(tree, "a.c"))
        settle()
        code, out, err = run(trawl, ["check", "--cache", cache, "--touch", stamp, "--stats"], env)
        check("check, changed: exit 1", code, 1)
        check("check, changed: the changes", out.splitlines(),
              ["%s: query 0 (%s)" % (cache, tree), "- a.c", "+ lib/new.c"])
        check("check, changed: stamp touched", os.path.exists(stamp), True)
        check("check, changed: two directories read", "directories opened 2," in err, True)
        code, out, _ = run(trawl, ["check", "--cache", cache, "--touch", stamp], env)
        check("check again: nothing changed since", (code, out), (0, ""))

        # A directory racy when cached (changed in the tick of the write) is
        # read again by the next check; once it has settled, that check
        # rewrites the cache, and the one after reads nothing.
        # (Forced: its mtime 0.3 s ahead when cached, settled 0.35 s later.)
        write(os.path.join(tree, "src/d/racy.c"))
        ahead = time.time_ns() + 300000000
        os.utime(os.path.join(tree, "src/d"), ns=(ahead, ahead))
        run(trawl, ["-C", tree, "--cache", cache, "**/*.c"], env)
        time.sleep(0.35)
        code, out, err = run(trawl, ["check", "--cache", cache, "--stats"], env)
        check("racy when cached: the check reads it again", "directories opened 1," in err, True)
        check("racy when cached: unchanged, exit 0", (code, out), (0, ""))
        code, out, err = run(trawl, ["check", "--cache", cache, "--stats"], env)
        check("racy when cached: the next check reads nothing", "directories opened 0," in err, True)
        os.unlink(os.path.join(tree, "src/d/racy.c"))
        run(trawl, ["-C", tree, "--cache", cache, "**/*.c"], env)
        settle()

        # --bump writes a digest of the results, so content-hashing builds see
        # a change only when there is one; several caches in one call.
        cache2 = os.path.join(tmp, "c2.cache")
        run(trawl, ["-C", tree, "--cache", cache2, "**/*.md"], env)
        bump = os.path.join(tmp, "bump")
        code, out, _ = run(trawl, ["check", "--cache", cache, "--cache", cache2, "--bump", bump], env)
        check("two caches, unchanged: exit 0", (code, out), (0, ""))
        write(os.path.join(tree, "docs/new.md"))
        settle()
        code, out, _ = run(trawl, ["check", "--cache", cache, "--cache", cache2, "--bump", bump], env)
        check("two caches, one changed: exit 1", code, 1)
        check("two caches, one changed: its change only", out.splitlines(),
              ["%s: query 0 (%s)" % (cache2, tree), "+ docs/new.md"])
        with open(bump) as f:
            digest = f.read()
        check("--bump writes a digest", len(digest.strip()), 64)
        os.unlink(os.path.join(tree, "docs/new.md"))
        settle()
        run(trawl, ["check", "--cache", cache, "--cache", cache2, "--bump", bump], env)
        with open(bump) as f:
            check("--bump: another answer, another digest", f.read() != digest, True)

        # trawl batch --cache: one cache for several queries, re-checked whole.
        queries = os.path.join(tmp, "q.jsonl")
        write(queries, '{"id": "c", "root": "%s", "include": ["**/*.c"]}\n'
                       '{"id": "md", "root": "%s", "include": ["**/*.md"]}\n' % (tree, tree))
        bcache = os.path.join(tmp, "b.cache")
        code, out1, err = run(trawl, ["batch", "--cache", bcache, "--stats", queries], env)
        check("batch --cache: exit 0", code, 0)
        settle()
        run(trawl, ["batch", "--cache", bcache, queries], env)
        code, out2, err = run(trawl, ["batch", "--cache", bcache, "--stats", queries], env)
        check("batch --cache, second run: same answer", out2, out1)
        check("batch --cache, second run: nothing read", "1 walk, 0 directories read" in err, True)
        ndirs = sum(1 for _ in os.walk(tree))
        check("batch --cache, second run: every directory reused",
              ", %d reused (cache trusted)" % ndirs in err, True)
        check("batch without --cache: same answer", run(trawl, ["batch", queries], env)[1], out1)
        code, out, _ = run(trawl, ["check", "--cache", bcache], env)
        check("check of a batch cache, unchanged: exit 0", (code, out), (0, ""))
        write(os.path.join(tree, "src/new.md"))
        settle()
        code, out, _ = run(trawl, ["check", "--cache", bcache], env)
        check("check of a batch cache, changed: the second query's change",
              (code, out.splitlines()), (1, ["%s: query 1 (%s)" % (bcache, tree), "+ src/new.md"]))

        # batch --bump: the digest `check --bump` writes for the same results
        # (Bazel's index rule names its kept index by it: docs/bazel.md), and
        # the stamp rewritten only when it holds another.
        bbump = os.path.join(tmp, "b.bump")
        code, _, _ = run(trawl, ["batch", "--cache", bcache, "--bump", bbump, queries], env)
        check("batch --bump: exit 0", code, 0)
        with open(bbump) as f:
            batch_digest = f.read()
        check("batch --bump: a digest", len(batch_digest.strip()), 64)
        os.utime(bbump, ns=(1, 1))
        run(trawl, ["batch", "--cache", bcache, "--bump", bbump, queries], env)
        check("batch --bump, same results: the stamp not rewritten", os.stat(bbump).st_mtime_ns, 1)
        cbump = os.path.join(tmp, "c.bump")
        os.unlink(os.path.join(tree, "src/new.md"))
        settle()
        code, _, _ = run(trawl, ["check", "--cache", bcache, "--bump", cbump], env)
        check("check --bump after a change", code, 1)
        with open(cbump) as f:
            without = f.read()
        check("check --bump: another digest", without != batch_digest, True)
        write(os.path.join(tree, "src/new.md"))
        settle()
        run(trawl, ["check", "--cache", bcache, "--bump", cbump], env)
        with open(cbump) as f:
            check("check --bump and batch --bump: one digest for one answer", f.read(), batch_digest)
        os.unlink(os.path.join(tree, "src/new.md"))
        settle()
        run(trawl, ["batch", "--cache", bcache, "--bump", bbump, queries], env)
        with open(bbump) as f:
            check("batch --bump, results changed: rewritten as check wrote it", f.read(), without)
        # A stamp that cannot be written: said, exit 3.
        code, _, err = run(trawl, ["batch", "--cache", bcache, "--bump",
                                   os.path.join(queries, "stamp"), queries], env)
        check("batch --bump, unwritable: exit 3", code, 3)
        check("batch --bump, unwritable: says so", "--bump" in err, True)

        # --bump over more caches than the process may hold open: a cache
        # whose check found nothing changed stays open for the digest, up to
        # an eighth of the descriptors; beyond, it is let go and read again
        # if the digest is needed. Under `ulimit -n 64`, 150 caches: the same
        # exit, lines, digest and caches as with descriptors to spare, and
        # nothing on stderr (before, each cache past the limit failed with
        # "Too many open files" and counted as a change at every check).
        many = os.path.join(tmp, "many")
        for k in range(5):
            write(os.path.join(many, "d%d" % k, "f.c"))
        settle()
        mcaches = [os.path.join(tmp, "m", "c%d" % i) for i in range(150)]
        os.makedirs(os.path.join(tmp, "m"))
        for i, c in enumerate(mcaches):
            run(trawl, ["-C", many, "--cache", c, "d%d/*.c" % (i % 5)], env)

        def low_limit():
            resource.setrlimit(resource.RLIMIT_NOFILE,
                               (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

        def check_many(caches, stamp, limited):
            args = [trawl, "check", "--bump", stamp]
            for c in caches:
                args += ["--cache", c]
            p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                               preexec_fn=low_limit if limited else None)
            return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")

        code, _, err = check_many(mcaches, os.path.join(tmp, "m.bump"), True)
        check("--bump, 150 caches, 64 descriptors, unchanged: exit 0", code, 0)
        check("--bump, 150 caches, 64 descriptors, unchanged: nothing on stderr", err, "")
        write(os.path.join(many, "d3", "g.c"))
        settle()
        twin = os.path.join(tmp, "m2")
        shutil.copytree(os.path.join(tmp, "m"), twin)
        free = check_many([os.path.join(twin, os.path.basename(c)) for c in mcaches],
                          os.path.join(tmp, "m2.bump"), False)
        low = check_many(mcaches, os.path.join(tmp, "m.bump"), True)
        check("--bump, 150 caches, 64 descriptors, one change: exit 1", low[0], 1)
        check("--bump, 150 caches, 64 descriptors: nothing on stderr", low[2], "")
        check("--bump, 150 caches, 64 descriptors: the lines as with descriptors to spare",
              low[1], free[1].replace(twin, os.path.join(tmp, "m")))
        check("--bump, 150 caches: the changed caches listed", low[1].count("+ d3/g.c"), 30)
        with open(os.path.join(tmp, "m.bump")) as f, open(os.path.join(tmp, "m2.bump")) as g:
            check("--bump, 150 caches, 64 descriptors: the digest as with descriptors to spare",
                  f.read(), g.read())
        code, _, err = check_many(mcaches, os.path.join(tmp, "m.bump"), True)
        check("--bump, 150 caches, 64 descriptors, after: exit 0", code, 0)
        check("--bump, 150 caches, 64 descriptors, after: nothing on stderr", err, "")

        # A cache that cannot be read counts as a change.
        code, out, err = run(trawl, ["check", "--cache", os.path.join(tmp, "none"),
                                     "--touch", os.path.join(tmp, "stamp2")], env)
        check("missing cache: exit 1", code, 1)
        check("missing cache: stamp touched", os.path.exists(os.path.join(tmp, "stamp2")), True)
        check("missing cache: says so", "counted as a change" in err, True)

        # A walk with a problem (an ignore file that is a link, not read) is
        # walked again, not re-checked by stamps alone: the problem is told
        # again, and --strict fails again.
        ptree = os.path.join(tmp, "ptree")
        write(os.path.join(ptree, "a/x.c"))
        write(os.path.join(ptree, "y.c"))
        write(os.path.join(tmp, "rules"), "*.o\n")
        os.symlink(os.path.join(tmp, "rules"), os.path.join(ptree, "a/.ignore"))
        pcache = os.path.join(tmp, "p.cache")
        settle()
        for n in ("first", "second"):
            code, out, err = run(trawl, ["-C", ptree, "--cache", pcache, "--strict", "**/*.c"], env)
            check("problem, %s cached run: the answer" % n, out, "a/x.c\ny.c\n")
            check("problem, %s cached run: told" % n, "ignore file is a symbolic link" in err, True)
            check("problem, %s cached run: --strict exits 3" % n, code, 3)

        work_tree(trawl, tmp, env)
        shown_names(trawl, tmp, env)

        # Usage.
        for args in (["check"], ["check", "--cache", cache, "--touch", stamp, "--bump", bump],
                     ["check", "--cache", cache, "stray"]):
            code, out, _ = run(trawl, args, env)
            check("usage %r: exit 2, nothing printed" % args[1:], (code, out), (2, ""))
        code, _, err = run(trawl, ["-C", tree, "--cache", cache, "--unsorted", "**"], env)
        check("--cache with --unsorted: exit 2", code, 2)

        # The watchman back-end's switch (docs/cache.md, "Watchman"): a value
        # of its own or exit 2 naming it; no daemon at the socket named: the
        # stat path, said by --stats. (No daemon is started here: the suite
        # 'watchman' has its own.)
        code, out, err = run(trawl, ["check", "--cache", cache], dict(env, TRAWL_WATCHMAN="sometimes"))
        check("TRAWL_WATCHMAN=sometimes: exit 2, named", (code, out, "TRAWL_WATCHMAN='sometimes'" in err),
              (2, "", True))
        none = dict(env, TRAWL_WATCHMAN="auto", TRAWL_WATCHMAN_SOCK=os.path.join(tmp, "no-sock"))
        code, _, err = run(trawl, ["check", "--stats", "--cache", cache], none)
        check("no watchman: the stat path, said", (code, "watchman not used (not running" in err),
              (0, True))
        code, _, err = run(trawl, ["check", "--stats", "--cache", cache], dict(env, TRAWL_WATCHMAN="off"))
        check("TRAWL_WATCHMAN=off: not a word of it", (code, "watchman" in err), (0, False))

    print("%d failed" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
