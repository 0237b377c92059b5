#!/usr/bin/env python3
"""Tracked paths, end to end, with real git (docs/ignore.md, "Tracked paths").

    tracked_cli.py TRAWL_EXE

git's rule: ignore rules apply to untracked paths only. On hand-made work
trees, each answer checked against `git ls-files -co --exclude-standard`
where git has one:

 - issue 31's own commands: a committed src/gen.c that `gen.c` matches;
 - an ignored directory with tracked paths: entered, only the tracked ones
   listed, only the directories holding tracked paths entered (-t d), and a
   start directory below it (`build/**`);
 - `.ignore` and --ignore-file rules leave tracked files out (not git's);
 - the index as git writes it: format 4, split, sparse (a sparse directory
   stands for its tree), skip-worktree and intent-to-add entries, a SHA-256
   repository, a linked work tree (its own index), the root below the top;
 - the index is read only when a rule leaves something out: with a corrupt
   index a walk whose rules match nothing says nothing, one whose rules
   match reports the index (exit 3 with --strict), and so does every cached
   run of it;
 - `trawl explain` says "tracked: not ignored" and names the rule;
 - the cache: `git add -f` and `git rm --cached` of an ignored path change
   the answer (`trawl check` exit 1, the path printed); an unrelated
   `git add`, a commit, skip-worktree, a refresh change none (exit 0, no
   directory read: one index read, nothing written), and neither does the
   check after it; a checkout that changes the index changes the answer;
 - the same on an index over 1 MiB (read in a thread, only as far as the
   questions need): damage past what they need is not seen, damage before it
   makes every answer "not tracked" (the check exits 1, a walk tells why).

Exits 77 (skipped) when git is not installed.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from clitest import FAILURES, check, run, write


def lines(text):
    return [l for l in text.split("\n") if l]


class Repo:
    def __init__(self, path, env, args=()):
        self.path, self.env = path, env
        os.makedirs(path, exist_ok=True)
        self.git("init", "-q", *args)

    def git(self, *args, input=None):
        p = subprocess.run(["git", "-C", self.path] + list(args), env=self.env, input=input,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode != 0:
            raise SystemExit("git %s: %s" % (" ".join(args), p.stderr.decode()))
        return p.stdout.decode("utf-8", "surrogateescape")

    def files(self, *paths):
        for p in paths:
            write(os.path.join(self.path, p), "x\n")

    def ls(self, *pathspec):
        """git's answer: tracked files and untracked ones not ignored."""
        return sorted(lines(self.git("ls-files", "-co", "--exclude-standard", "--", *pathspec)))


def stats_of(err):
    m = re.search(r"directories opened (\d+), reused (\d+)", err)
    return (int(m.group(1)), int(m.group(2))) if m else None


def main(argv):
    trawl = os.path.abspath(argv[1])
    if shutil.which("git") is None:
        print("tracked_cli: git not found, skipping")
        return 77
    with tempfile.TemporaryDirectory(prefix="trawl-tracked-cli-") as tmp:
        env = dict(os.environ, HOME=tmp, XDG_CONFIG_HOME=os.path.join(tmp, "xdg"),
                   GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.path.join(tmp, "gitconfig"),
                   GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                   GIT_COMMITTER_EMAIL="t@t")
        write(env["GIT_CONFIG_GLOBAL"], "")

        def walk(root, *args):
            code, out, err = run(trawl, ["-C", root] + list(args), env)
            return code, lines(out), err

        # Issue 31's commands.
        t = Repo(os.path.join(tmp, "t"), env)
        t.files("src/a.c", "src/gen.c")
        t.git("add", ".")
        t.git("commit", "-qm", "x")
        write(os.path.join(t.path, ".gitignore"), "gen.c\n")
        code, out, _ = walk(t.path, "**/*.c")
        check("a committed file a rule matches is listed", (code, out), (0, ["src/a.c", "src/gen.c"]))
        check("... as git lists it", out, t.ls("*.c"))
        code, out, _ = run(trawl, ["explain", "-C", t.path, "**/*.c", "--", "src/gen.c"], env)
        check("explain: tracked, and the rule that would apply", (code, out),
              (0, "src/gen.c: selected, include **/*.c; tracked: not ignored "
                  "(else ignore rule .gitignore:1:gen.c matched src/gen.c)\n"))

        # An ignored directory with tracked paths.
        r = Repo(os.path.join(tmp, "r"), env)
        r.files("build/keep.c", "build/sub/k.c", "build/sub/deeper/d.c", "src/a.c", "build/junk.c",
                "build/empty/x.c", "build/sub/new.c", "notes.log")
        r.git("add", "build/keep.c", "build/sub/k.c", "build/sub/deeper/d.c", "src/a.c",
              "notes.log")
        r.git("commit", "-qm", "x")
        write(os.path.join(r.path, ".gitignore"), "build/\n*.log\n")
        code, out, _ = walk(r.path, "**")
        check("ignored directory: its tracked files, no other", (code, out),
              (0, ["build/keep.c", "build/sub/deeper/d.c", "build/sub/k.c", "notes.log", "src/a.c"]))
        check("... as git lists them", out, [p for p in r.ls() if p != ".gitignore"])
        _, out, _ = walk(r.path, "-t", "d", "**")
        check("only directories with tracked paths are entered and listed", out,
              ["build", "build/sub", "build/sub/deeper", "src"])
        _, _, err = walk(r.path, "--stats", "**")
        opened = re.search(r"directories opened: *(\d+)", err)
        check("... and only those opened: the root, build, build/sub, build/sub/deeper, src "
              "(not build/empty)", int(opened.group(1)) if opened else None, 5)
        _, out, _ = walk(r.path, "build/sub/**")
        check("a start directory inside the ignored one", out,
              ["build/sub/deeper/d.c", "build/sub/k.c"])
        _, out, _ = walk(r.path, "build/empty/**")
        check("a start directory with nothing tracked: nothing", out, [])
        code, out, _ = run(trawl, ["explain", "-C", r.path, "--format", "json", "**", "--",
                                   "build", "build/sub/k.c", "build/junk.c", "build/empty",
                                   "build/empty/x.c"], env)
        objs = [json.loads(l) for l in lines(out)]
        check("explain json: tracked, selected, the directory's rule",
              [(o["path"], o["tracked"], o["selected"], o["reason"], o["ignore"]["pattern"],
                o["ignore"]["match"], o["directory"]) for o in objs],
              [("build", True, False, "type", "build/", "build", None),
               ("build/sub/k.c", True, True, "included", "build/", "build", None),
               ("build/junk.c", False, False, "ignored", "build/", "build", "build"),
               ("build/empty", False, False, "ignored", "build/", "build", "build"),
               ("build/empty/x.c", False, False, "ignored", "build/", "build", "build")])

        # Rules that are not git's leave tracked files out.
        write(os.path.join(r.path, "src/.ignore"), "a.c\n")
        _, out, _ = walk(r.path, "src/**")
        check(".ignore leaves a tracked file out", out, [])
        os.unlink(os.path.join(r.path, "src/.ignore"))
        write(os.path.join(tmp, "extra"), "keep.c\n")
        _, out, _ = walk(r.path, "--ignore-file", os.path.join(tmp, "extra"), "build/*")
        check("--ignore-file leaves a tracked file out", out, [])

        # The index as git writes it.
        for form, cmds in [("format 4", [["update-index", "--index-version", "4"]]),
                           ("split index", [["update-index", "--split-index"],
                                            ["-c", "splitIndex.maxPercentChange=100", "rm", "-q",
                                             "--cached", "build/keep.c"],
                                            ["-c", "splitIndex.maxPercentChange=100", "add", "-f",
                                             "build/junk.c"]]),
                           ("skip-worktree and intent-to-add",
                            [["update-index", "--no-split-index", "--index-version", "2"],
                             ["update-index", "--skip-worktree", "build/sub/k.c"],
                             ["add", "-N", "-f", "build/empty/x.c"]])]:
            for c in cmds:
                r.git(*c)
            code, out, _ = walk(r.path, "**")
            check("%s: as git lists it" % form, (code, out), (0, [p for p in r.ls() if p != ".gitignore"]))

        # A sparse index: a sparse directory stands for its whole tree.
        s = Repo(os.path.join(tmp, "s"), env)
        s.files("in/a.c", "out/b.c", "out/deep/c.c")
        s.git("add", ".")
        s.git("commit", "-qm", "x")
        s.git("sparse-checkout", "init", "--cone", "--sparse-index")
        s.git("sparse-checkout", "set", "in")
        sparse = "040000" in s.git("ls-files", "--sparse", "-s")
        check("git wrote a sparse directory entry", sparse, True)
        # Outside the sparse cone the work tree has no files; put one back
        # (as a user copying it in would): git's index holds it (in its tree).
        s.files("out/b.c")
        write(os.path.join(s.path, ".gitignore"), "*.c\n")
        _, out, _ = walk(s.path, "**/*.c")
        check("sparse index: tracked files inside and outside the cone",
              out, ["in/a.c", "out/b.c"])

        # A SHA-256 repository.
        p = subprocess.run(["git", "init", "-q", "--object-format=sha256",
                            os.path.join(tmp, "probe")], env=env, stderr=subprocess.DEVNULL)
        if p.returncode == 0:
            h = Repo(os.path.join(tmp, "h"), env, ["--object-format=sha256"])
            h.files("a.o", "b.o", "c.c")
            h.git("add", "-f", "a.o")
            write(os.path.join(h.path, ".gitignore"), "*.o\n")
            _, out, err = walk(h.path, "*")
            check("SHA-256: the index read with 32-byte names", (out, err), (["a.o", "c.c"], ""))

        # A linked work tree has its own index; the root below the top.
        r.git("worktree", "add", "-q", "-b", "other", os.path.join(tmp, "wt"))
        wt = Repo.__new__(Repo)
        wt.path, wt.env = os.path.join(tmp, "wt"), env
        wt.files("build/other.c", "build/keep.c")
        write(os.path.join(wt.path, ".gitignore"), "build/\n")
        wt.git("add", "-f", "build/other.c")
        r.files("build/other.c")
        _, out, _ = walk(wt.path, "build/*")
        check("linked work tree: its own index", out, ["build/keep.c", "build/other.c"])
        check("... as git lists it", out, [p for p in wt.ls("build") if p.count("/") == 1])
        _, out, _ = walk(r.path, "build/*")
        check("... not the main one's", "build/other.c" in out, False)
        # The root below the top: the index is the top's, asked by paths
        # from the top. (A root that a rule above ignores is walked as a
        # root: docs/ignore.md's divergence; not this one.)
        r.files("proj/build/x.c", "proj/build/y.c", "proj/z.c")
        r.git("add", "-f", "proj/build/x.c")
        _, out, _ = walk(os.path.join(r.path, "proj"), "**")
        check("root below the top", out, ["build/x.c", "z.c"])
        check("... as git lists it", out, sorted(lines(r.git("-C", "proj", "ls-files", "-co",
                                                              "--exclude-standard"))))

        # Laziness: the index is read only when a rule leaves something out.
        lz = Repo(os.path.join(tmp, "lazy"), env)
        lz.files("a.c", "b.o")
        lz.git("add", "a.c")
        with open(os.path.join(lz.path, ".git/index"), "r+b") as f:
            f.seek(8)
            f.write(b"\xff" * 4)  # more entries than the file holds: corrupt
        write(os.path.join(lz.path, ".gitignore"), "*.tmp\n")
        code, out, err = walk(lz.path, "--strict", "*")
        check("nothing ignored: the corrupt index is never read", (code, err), (0, ""))
        write(os.path.join(lz.path, ".gitignore"), "*.o\n")
        code, out, err = walk(lz.path, "*")
        check("a rule matches: the index is read, its problem told, the walk goes on",
              (code, out, "corrupt index" in err and ".git/index" in err), (0, ["a.c"], True))
        code, _, _ = walk(lz.path, "--strict", "*")
        check("... --strict: exit 3", code, 3)
        # Cached: each run tells it as a walk does (the first walks and
        # writes; the next would replay, asking the index nothing).
        lzc = os.path.join(tmp, "lazy.cache")
        time.sleep(0.05)  # out of the racy window: the directory is replayed, not read
        for i in range(3):
            code, out, err = walk(lz.path, "--strict", "--cache", lzc, "*")
            check("cached run %d: the same answer, the problem told, exit 3" % (i + 1),
                  (code, out, "corrupt index" in err), (3, ["a.c"], True))

        # The cache.
        c = Repo(os.path.join(tmp, "c"), env)
        c.files("src/a.c", "src/gen.c", "build/keep.c", "build/junk.c", "docs/x.md")
        c.git("add", "src/a.c", "build/keep.c")
        c.git("commit", "-qm", "x")
        write(os.path.join(c.path, ".gitignore"), "gen.c\nbuild/\n")
        cache = os.path.join(tmp, "c.cache")
        code, out, _ = walk(c.path, "--cache", cache, "**/*.c")
        check("cached run", (code, out), (0, ["build/keep.c", "src/a.c"]))

        def check_cache(what, want_code, want_out, fresh):
            # Out of the racy window of the index git just wrote (else it is
            # recorded as racy, and asked again next time).
            time.sleep(0.05)
            code, out, err = run(trawl, ["check", "--stats", "--cache", cache], env)
            got = (code, [l for l in lines(out) if l.startswith(("+", "-"))])
            check("check after %s" % what, got, (want_code, want_out))
            st = stats_of(err)
            if fresh:
                check("... read no directory", st[0] if st else None, 0)
            code, _, err = run(trawl, ["check", "--stats", "--cache", cache], env)
            check("... and the next check finds nothing, reading nothing (%s)" % err.strip(),
                  (code, (stats_of(err) or (None,))[0], "written" in err), (0, 0, False))

        c.git("add", "-f", "src/gen.c")
        check_cache("git add -f of an ignored file", 1, ["+ src/gen.c"], False)
        c.git("rm", "-q", "--cached", "build/keep.c")
        check_cache("git rm --cached of a file in an ignored directory", 1, ["- build/keep.c"], False)
        c.git("add", "-f", "build/junk.c")
        check_cache("git add -f of a file in an ignored directory", 1, ["+ build/junk.c"], False)
        c.git("add", "docs/x.md")
        check_cache("git add of an unrelated file", 0, [], True)
        c.git("commit", "-qm", "y")
        check_cache("git commit", 0, [], True)
        c.git("update-index", "--skip-worktree", "src/a.c")
        check_cache("git update-index --skip-worktree", 0, [], True)
        c.git("update-index", "--really-refresh")
        c.git("status", "--short")
        check_cache("git status (an index refresh)", 0, [], True)
        # A branch whose index lacks gen.c; checked out, git removes it from
        # the work tree too; back, git puts it back.
        c.git("checkout", "-q", "-b", "side")
        c.git("rm", "-q", "--cached", "src/gen.c")
        c.git("commit", "-qm", "side")
        c.git("checkout", "-q", "-")
        check_cache("a branch made and left", 0, [], False)
        c.git("checkout", "-q", "side")
        check_cache("a checkout that changes the index", 1, ["- src/gen.c"], False)
        c.git("checkout", "-q", "-")
        check_cache("a checkout back", 1, ["+ src/gen.c"], False)

        # A large index (over 1 MiB: read in a thread of its own, only as far
        # as the questions need): 14,000 entries after `build/`, for files
        # not on the disk (trawl walks the disk; the index only answers).
        b = Repo(os.path.join(tmp, "big"), env)
        b.files("src/a.c", "build/junk.c", "docs/x.md")
        write(os.path.join(b.path, ".gitignore"), "build/\n")
        blob = b.git("hash-object", "-w", os.path.join(b.path, "src/a.c")).strip()
        b.git("update-index", "--index-info", input=("".join(
            "100644 %s\tzz/%03d/f%02d.c\n" % (blob, i // 100, i % 100) for i in range(14000))
            + "100644 %s\tsrc/a.c\n" % blob).encode())
        index = os.path.join(b.path, ".git", "index")
        check("the large index is over 1 MiB", os.path.getsize(index) > (1 << 20), True)
        cache = os.path.join(tmp, "big.cache")
        code, out, _ = walk(b.path, "--cache", cache, "**/*.c")
        check("large index: cached run", (code, out), (0, ["src/a.c"]))
        c = b  # check_cache() asks C's cache
        b.git("add", "docs/x.md")
        check_cache("large index: git add of an unrelated file", 0, [], True)
        # Damage past every entry the question needs (the file cut short):
        # not seen, as a walk does not see it (docs/ignore.md).
        time.sleep(0.05)
        shutil.copy(index, index + ".good")
        os.truncate(index, os.path.getsize(index) - 100)
        # (A walk whose question sorts after every entry sees it: the same
        # .git beside an ignored `zzz/`.)
        z = os.path.join(tmp, "big-z")
        shutil.copytree(os.path.join(b.path, ".git"), os.path.join(z, ".git"))
        write(os.path.join(z, ".gitignore"), "zzz/\n")
        write(os.path.join(z, "zzz", "a.c"), "x\n")
        code, out, err = walk(z, "**/*.c")
        check("the cut is damage a read to the end sees", (code, out, "corrupt index" in err),
              (0, [], True))
        check_cache("large index: damage past what the question needs", 0, [], True)
        os.replace(index + ".good", index)  # (git is not to read the damaged one)
        b.git("add", "-f", "build/junk.c")
        check_cache("large index: git add -f in an ignored directory", 1, ["+ build/junk.c"], False)
        # Damage before it: every answer is "not tracked", and the walk says why.
        time.sleep(0.05)
        with open(index, "r+b") as f:
            f.write(b"DIRX")
        time.sleep(0.05)
        code, out, err = run(trawl, ["check", "--cache", cache], env)
        check("large index: a damaged index changes the answer",
              (code, [l for l in lines(out) if l.startswith(("+", "-"))]),
              (1, ["- build/junk.c"]))
        code, out, err = walk(b.path, "**/*.c")
        check("... and a walk tells why",
              (code, out, "corrupt index" in err and ".git/index" in err), (0, ["src/a.c"], True))
    print("tracked_cli: %d failures" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
