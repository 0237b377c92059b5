#!/usr/bin/env python3
"""`trawl check --checked MARK --depfile FILE`: what the caches depend on,
for Ninja (plugins/cli/depfile.h, docs/cli.md).

    depfile_cli.py TRAWL_EXE

In a git work tree with ignore files at several depths (where users are):
the depfile's target is the mark; it lists every directory the cache
recorded, the ignore files in them, info/exclude and the root's parent, and
no ignored directory; right after the check nothing listed is newer than
the mark (so Ninja runs nothing on a no-op), while any later change that
the check would report moves a listed path past it. A directory that
appears holding only files that do not match is written back to the cache
and so listed: a matching file created in it later is seen. Names with a
blank are escaped as Ninja reads them. A cache that no list can prove (a
record racy, a walk with a problem, a cache that cannot be read) lists a
path that is never there, so the check runs every time. Usage errors exit 2
and write nothing; a depfile that cannot be written exits 3 naming it.
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "walk"))

from clitest import FAILURES, check, run, write


def settle():
    # Older than the racy window (two ticks of the coarse clock).
    time.sleep(0.05)


def parse(path):
    """(target, [paths]) of a depfile as Ninja reads it: lines joined at a
    backslash-newline, words split at blanks not escaped, `\\ ` and `\\#`
    unescaped, `$$` a dollar."""
    text = open(path).read().replace("\\\n", " ")
    words, cur, i = [], "", 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] in " #":
            cur += text[i + 1]
            i += 2
            continue
        if c == "$" and text[i + 1:i + 2] == "$":
            cur += "$"
            i += 2
            continue
        if c in " \n":
            if cur:
                words.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    if cur:
        words.append(cur)
    if not words or not words[0].endswith(":"):
        return None, words
    return words[0][:-1], words[1:]


def newer(path, mark):
    """Would Ninja take PATH as newer than MARK (or missing)?"""
    try:
        return os.stat(path).st_mtime_ns > os.stat(mark).st_mtime_ns
    except OSError:
        return True


def main(argv):
    trawl = os.path.abspath(argv[1])
    with tempfile.TemporaryDirectory(prefix="trawl-depfile-cli-") as tmp:
        env = dict(os.environ, HOME=tmp, XDG_CONFIG_HOME=os.path.join(tmp, "xdg"),
                   GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.path.join(tmp, "gitconfig"))
        t = os.path.join(tmp, "wt")
        subprocess.run(["git", "init", "-q", t], check=True, env=env)
        for f in ("src/a.c", "src/lib/b.c", "src/lib/deep/c.c", "with space/d.c", "out/gen.c",
                  "docs/x.md"):
            write(os.path.join(t, f), "x")
        write(os.path.join(t, ".gitignore"), "out/\n")
        write(os.path.join(t, "src/lib/.gitignore"), "*.o\n")
        write(os.path.join(t, "src/.ignore"), "*.tmp\n")
        write(os.path.join(t, ".git/info/exclude"), "*.bak\n")
        # Beside the tree, as a build directory is: the root's parent is
        # watched, and writing the mark there would change it every time.
        b = os.path.join(tmp, "b")
        os.mkdir(b)
        cache = os.path.join(b, "c.cache")
        mark = os.path.join(b, "checked")
        dep = os.path.join(b, "checked.d")
        check_args = ["check", "--checked", mark, "--depfile", dep, "--cache", cache]
        settle()
        code, out, err = run(trawl, ["-C", t, "--cache", cache, "**/*.c"], env)
        check("the cached run", (code, out), (0, "src/a.c\nsrc/lib/b.c\nsrc/lib/deep/c.c\n"
                                              "with space/d.c\n"))
        settle()

        code, out, err = run(trawl, check_args, env)
        check("nothing changed: exit 0, nothing printed", (code, out, err), (0, "", ""))
        target, paths = parse(dep)
        check("the depfile's target is the mark", target, mark)
        for d in ("", "/src", "/src/lib", "/src/lib/deep", "/with space", "/docs"):
            check("the directory %r is listed" % (d or "(root)"), t + d in paths, True)
        for f in ("/.gitignore", "/src/lib/.gitignore", "/src/.ignore", "/.git/info/exclude"):
            check("the ignore file %s is listed" % f, t + f in paths, True)
        check("the root's parent is listed",
              any(os.path.realpath(p) == os.path.realpath(tmp) for p in paths), True)
        check("the ignored directory out/ is not listed", t + "/out" in paths, False)
        check("no path that is never there", [p for p in paths if p.endswith(".always")], [])
        check("right after the check, no listed path is newer than the mark",
              [p for p in paths if newer(p, mark)], [])

        # Each change the check reports moves a listed path past the mark.
        changes = (
            ("a matching file created", lambda: write(os.path.join(t, "src/lib/deep/n.c"), "x"),
             "+ src/lib/deep/n.c"),
            ("a nested .gitignore edited in place",
             lambda: open(os.path.join(t, "src/lib/.gitignore"), "a").write("b.c\n"),
             "- src/lib/b.c"),
            ("info/exclude edited in place",
             lambda: open(os.path.join(t, ".git/info/exclude"), "a").write("a.c\n"),
             "- src/a.c"),
            ("a directory removed", lambda: (os.remove(os.path.join(t, "with space/d.c")),
                                             os.rmdir(os.path.join(t, "with space"))),
             "- with space/d.c"),
        )
        for what, change, line in changes:
            settle()
            change()
            settle()
            check(what + ": a listed path is newer than the mark",
                  any(newer(p, mark) for p in paths), True)
            code, out, _ = run(trawl, check_args, env)
            check(what + ": the check reports it", (code, line in out.splitlines()), (1, True))
            target, paths = parse(dep)
            check(what + ": then nothing listed is newer than the mark",
                  [p for p in paths if newer(p, mark)], [])

        # A directory that appears with nothing that matches: the answers
        # are the same, and the directory is listed all the same.
        settle()
        write(os.path.join(t, "src/new/readme.txt"), "x")
        settle()
        code, out, _ = run(trawl, check_args, env)
        check("a new directory, nothing matching: exit 0", (code, out), (0, ""))
        target, paths = parse(dep)
        check("a new directory, nothing matching: it is listed", t + "/src/new" in paths, True)
        settle()
        write(os.path.join(t, "src/new/m.c"), "x")
        check("then a matching file in it: a listed path is newer",
              any(newer(p, mark) for p in paths), True)
        code, out, _ = run(trawl, check_args, env)
        check("then a matching file in it: reported", (code, out.splitlines()), (1, ["%s: query 0 (%s)"
              % (cache, t), "+ src/new/m.c"]))

        # A record racy (its directory's time not yet two clock ticks in
        # the past: here, in the future): no list proves it, so a path
        # never there is listed.
        settle()
        src = os.path.join(t, "src")
        os.utime(src, (time.time() + 3600, time.time() + 3600))
        code, out, _ = run(trawl, check_args, env)
        check("a racy record: exit 0", (code, out), (0, ""))
        target, paths = parse(dep)
        never = [p for p in paths if p == dep + ".always"]
        check("a racy record: a path never there is listed", (never, os.path.exists(dep + ".always")),
              ([dep + ".always"], False))
        os.utime(src, (time.time() - 10, time.time() - 10))
        settle()
        code, out, _ = run(trawl, check_args, env)
        target, paths = parse(dep)
        check("settled, and read once more: no longer", dep + ".always" in paths, False)

        # The same for a directory on the way to where a walk starts
        # ('lib/**' starts in lib/: the root is stamped, never read), as a
        # wrap that Meson cloned just before its configure's walk is: once
        # settled, the first check writes it trusted, and the second no
        # longer lists the path never there.
        way = os.path.join(tmp, "way")
        write(os.path.join(way, "lib/w.c"), "x")
        wcache = os.path.join(b, "way.cache")
        os.utime(way, (time.time() + 3600, time.time() + 3600))
        run(trawl, ["-C", way, "--cache", wcache, "lib/**/*.c"], env)
        way_args = ["check", "--checked", mark, "--depfile", dep, "--cache", wcache]
        run(trawl, way_args, env)
        check("a racy directory on the way: a path never there is listed",
              dep + ".always" in parse(dep)[1], True)
        os.utime(way, (time.time() - 10, time.time() - 10))
        settle()
        code, out, _ = run(trawl, way_args, env)
        check("settled, a check: no change", (code, out), (0, ""))
        code, out, _ = run(trawl, way_args, env)
        check("and the check after it: no longer listed", dep + ".always" in parse(dep)[1], False)

        # A walk with a problem (an ignore file that is a link) is read
        # every time: always.
        p = os.path.join(tmp, "ptree")
        write(os.path.join(p, "a/x.c"), "x")
        write(os.path.join(tmp, "rules"), "*.o\n")
        os.symlink(os.path.join(tmp, "rules"), os.path.join(p, "a/.ignore"))
        pcache = os.path.join(tmp, "p.cache")
        settle()
        run(trawl, ["-C", p, "--cache", pcache, "**/*.c"], env)
        settle()
        code, _, _ = run(trawl, ["check", "--checked", mark, "--depfile", dep, "--cache", pcache],
                         env)
        check("a walk with a problem: exit 0", code, 0)
        check("a walk with a problem: a path never there is listed", dep + ".always" in parse(dep)[1],
              True)

        # A cache that cannot be read: a change, and always.
        code, _, err = run(trawl, ["check", "--checked", mark, "--depfile", dep, "--cache",
                                   os.path.join(tmp, "missing.cache")], env)
        check("a missing cache: exit 1", code, 1)
        check("a missing cache: a path never there is listed", dep + ".always" in parse(dep)[1], True)

        # Every printable byte in a directory name, the depfile read by the
        # real Ninja (`ninja -t deps`): it reads each path as written, and
        # a name it cannot carry is left out for a path never there.
        names = [c for c in map(chr, range(0x20, 0x7f)) if c != "/"]
        n = os.path.join(tmp, "names")
        for c in names:
            write(os.path.join(n, "d%sx" % c, "f.c"), "x")
        write(os.path.join(n, "tail\\", "f.c"), "x")
        # Ninja reads "\$$" as "\$" and a '$' ending the path (found by
        # fuzz_depfile, tests/hardening/replay.py).
        write(os.path.join(n, "back\\$dollar", "f.c"), "x")
        ncache = os.path.join(b, "n.cache")
        settle()
        run(trawl, ["-C", n, "--cache", ncache, "**/*.c"], env)
        settle()
        nd = os.path.join(b, "n.d")
        code, _, err = run(trawl, ["check", "--checked", mark, "--depfile", nd, "--cache", ncache],
                           env)
        check("names: exit 0", (code, err), (0, ""))
        ours = parse(nd)[1]
        nb = os.path.join(tmp, "ninja")
        os.mkdir(nb)
        # The edge's output is the depfile's target, the mark, as in a build.
        write(os.path.join(nb, "build.ninja"),
              "rule r\n command = cp %s out.d\n depfile = out.d\n deps = gcc\n"
              "build %s: r\n" % (nd, mark))
        built = subprocess.run(["ninja", "-C", nb], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        check("names: Ninja takes the depfile", (built.returncode, b"error" in built.stdout),
              (0, False))
        if built.returncode != 0:
            print(built.stdout.decode(errors="replace")[-2000:])
        deps = subprocess.run(["ninja", "-C", nb, "-t", "deps", mark], stdout=subprocess.PIPE,
                              check=True).stdout.decode("utf-8", "surrogateescape")
        theirs = [l.strip() for l in deps.splitlines()[1:] if l.strip()]
        check("names: Ninja reads the paths as written", theirs, ours)
        check("names: never \"/\", which Ninja cannot record (\"/..\" instead)",
              ("/" in ours, "/.." in ours), (False, True))
        uncarried = set("\"&'*;<>?^`|:")
        for c in names:
            d = os.path.join(n, "d%sx" % c)
            check("names: %r %s" % (c, "left out" if c in uncarried else "listed"), d in ours,
                  c not in uncarried)
        check("names: a backslash at the end, left out", os.path.join(n, "tail\\") in ours, False)
        check("names: a backslash before a '$', left out",
              os.path.join(n, "back\\$dollar") in ours, False)
        check("names: so a path never there is listed", nd + ".always" in ours, True)

        # --watch-limit: at the count, the list; one below it, the path
        # never there alone.
        code, _, _ = run(trawl, check_args, env)
        n_paths = len(parse(dep)[1])
        code, _, _ = run(trawl, check_args + ["--watch-limit", str(n_paths)], env)
        check("--watch-limit at the count: the same list", (code, len(parse(dep)[1])),
              (0, n_paths))
        code, _, _ = run(trawl, check_args + ["--watch-limit", str(n_paths - 1)], env)
        check("--watch-limit one below: a path never there, alone", (code, parse(dep)[1]),
              (0, [dep + ".always"]))
        for args, why in ((["--watch-limit", "x"], "--watch-limit 'x'"),
                          (["--watch-limit", "-1"], "--watch-limit '-1'")):
            code, out, err = run(trawl, check_args + args, env)
            check("--watch-limit %s: exit 2, says why" % args[1], (code, why in err), (2, True))
        code, out, err = run(trawl, ["check", "--checked", mark, "--watch-limit", "3", "--cache",
                                     cache], env)
        check("--watch-limit without --depfile: exit 2", (code, "goes with --depfile" in err),
              (2, True))

        # Usage, and a depfile that cannot be written.
        other = os.path.join(b, "other.d")
        code, out, err = run(trawl, ["check", "--depfile", other, "--cache", cache], env)
        check("--depfile without --checked: exit 2, nothing written",
              (code, out, os.path.exists(other)), (2, "", False))
        check("--depfile without --checked: says why", "--depfile goes with --checked" in err, True)
        bad = os.path.join(tmp, "no-such-dir", "x.d")
        code, out, err = run(trawl, ["check", "--checked", mark, "--depfile", bad, "--cache",
                                     cache], env)
        check("an unwritable depfile: exit 3", code, 3)
        check("an unwritable depfile: the message names it", bad in err, True)

    print("%d failed" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
