#!/usr/bin/env python3
"""With watchman, a cached walk after a change stats only what it names.

    watchman_vouch.py TRAWL

Issue 25: "only the directories the changes touch go through dir_check()".
A git work tree of 60 directories is walked into two caches, one with the
watchman back-end on (a private daemon started here, as watchman_cache.py
starts it) and one with it off; each cache is walked once more so that no
record is racy. Then, for each change below, each cache's cached walk runs
under strace, and:

  - both answer exactly as a fresh walk does;
  - with watchman off every one of the 60 directories is stat'ed (dir_check()
    of each record);
  - with watchman on (its --stats says it was used) none is stat'ed but the
    one the change is in: the others are vouched for, replayed without a stat.

The changes: a file added, a file removed, a subdirectory added (its
directory's record changes, the new one is read), and a .gitignore written
in one directory (its rules change: it is read again, and so is everything
below it, as without watchman).

Then `trawl check` with watchman on a second tree of 421 directories, enough
that the names watchman gives are found through the index's marks rather
than by reading every entry (docs/cache.md, "Finding what was named"), once
for `**/*.c` and once for `a03/**/*.c` (a start directory, stat'ed every
time): with only a file in .git named (as any git command writes one), it
exits 0 and stats no recorded directory but the root and the start
directory (--stats: "1 directory stat'ed", or 2 with it); with a file added four levels
down, it exits 1 and names the file, having stat'ed that directory and none
off the way to it (the check's own count with a change is pinned by
Cache.WatchmansNamesAreFoundThroughTheMarks, suite cache: the walk that
follows a change stats too). With only the name in .git and from the root,
it also reads the cache's directory entries a block at a time (format 10:
docs/cache.md, "Reading only the blocks it needs"): past its first read of
the file, no read of the cache is longer than half the region of entries
(the tree's 423 entries are seven blocks).

Last, `.git`, where watchman reports nothing (check_vcs): a walk from the top
of a third tree with hidden files and no ignore rules (it enters `.git`), and
one whose root is `.git/refs`, each cached; a new branch's ref written; the
check exits 1 and names it (watchman used from the top, the stat path for the
root in `.git`, whose cache has no clock), and the cached walk then equals a
fresh one. Before format 11 both checks answered "unchanged". And a walk
that follows links (check_follow): its check never connects to watchman.
"""
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import watchman_cache  # noqa: E402

N_DIRS = 60
STAT_CALLS = re.compile(r'^\d+\s+(?:newfstatat|fstatat64|statx|stat|lstat)\((?:AT_FDCWD|\d+), "([^"]*)"')
OPEN_CALL = re.compile(r'^\d+\s+openat\(AT_FDCWD, "([^"]*)", .*\) = (\d+)$')
PREAD_CALL = re.compile(r'^\d+\s+pread64\((\d+), .*, (\d+), (\d+)\) = (-?\d+)')


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def settle():
    # Out of the racy window of the last write (nanosecond timestamps here;
    # the suite 'coarse' is where coarse ones are tried).
    time.sleep(0.05)


def under_strace(argv, env, log, recorded):
    """Run ARGV under strace: the process, and the directories it stats
    whose paths (relative to the root, as trawl names them) match the
    regular expression RECORDED."""
    # LeakSanitizer cannot run under ptrace (the sanitize setup's build):
    # leaks are looked for by the other runs of this test and the suites.
    env = dict(env, ASAN_OPTIONS=env.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    p = subprocess.run(["strace", "-f", "-qq", "-e", "trace=newfstatat,statx,stat,lstat", "-o", log] +
                       argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stated = set()
    with open(log) as f:
        for line in f:
            m = STAT_CALLS.match(line)
            if m and re.fullmatch(recorded, m.group(1)):
                stated.add(m.group(1))
    return p, stated


def dirs_stated(trawl, tree, cache, env, log):
    """The directories of TREE a cached walk of it stats, and its output."""
    p, stated = under_strace([trawl, "-C", tree, "--cache", cache, "--stats", "**/*.c"], env, log,
                             r"d\d\d(/sub)?")
    if p.returncode != 0:
        fail("trawl exited %d: %s" % (p.returncode, p.stderr.decode(errors="replace")))
    return stated, p.stdout, p.stderr.decode(errors="replace")


def check_stated(trawl, tree, cache, env, log):
    """`trawl check` of CACHE under strace: its exit status, the recorded
    directories of TREE it stats (a[0-9]{2}/b[0-9]{2}... by their paths
    relative to the root), its output and its --stats."""
    env = dict(env, ASAN_OPTIONS=env.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    p = subprocess.run(["strace", "-f", "-qq", "-e", "trace=newfstatat,statx,stat,lstat,openat,pread64", "-o",
                        log, trawl, "check", "--cache", cache, "--stats"],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stated = set()
    fds, reads = set(), []  # the reads of CACHE: (offset, bytes asked)
    with open(log) as f:
        for line in f:
            m = STAT_CALLS.match(line)
            if m and re.fullmatch(r"a\d\d(/b\d\d)*", m.group(1)):
                stated.add(m.group(1))
            m = OPEN_CALL.match(line)
            if m and m.group(1) == cache:
                fds.add(m.group(2))
            m = PREAD_CALL.match(line)
            if m and m.group(1) in fds:
                reads.append((int(m.group(3)), int(m.group(2))))
    check_stated.reads = reads
    return p.returncode, stated, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def check_names(trawl, tmp, env, log):
    tree = os.path.join(tmp, "tree2")
    os.mkdir(tree)
    subprocess.run(["git", "init", "-q", tree], check=True)
    deep = "a07/b11/b00/b00"
    for i in range(20):
        for k in range(20):
            d = os.path.join(tree, "a%02d" % i, "b%02d" % k)
            os.makedirs(d)
            open(os.path.join(d, "f.c"), "w").close()
    os.makedirs(os.path.join(tree, deep))  # 421 + 2 directories recorded from the root
    open(os.path.join(tree, deep, "g.c"), "w").close()
    for pattern, start in (("**/*.c", set()), ("a07/**/*.c", {"a07"})):
        cache = os.path.join(tmp, "names-%d.cache" % len(start))
        settle()
        for _ in range(2):  # written, then written again with nothing racy
            subprocess.run([trawl, "-C", tree, "--cache", cache, pattern], env=env,
                           stdout=subprocess.DEVNULL, check=True)
            settle()
        with open(os.path.join(tree, ".git", "x-%d" % len(start)), "w") as f:
            f.write("as git writes its files\n")
        settle()
        code, stated, out, err = check_stated(trawl, tree, cache, env, log)
        if "watchman used: " not in err or "0 paths changed" in err:
            fail("check %s, a name in .git: watchman not used, or named nothing: %s" % (pattern, err))
        if code != 0 or out:
            fail("check %s, a name in .git: exit %d, %r" % (pattern, code, out))
        counted = "1 directory stat'ed" if not start else "%d directories stat'ed" % (1 + len(start))
        if stated != start or counted not in err:
            fail("check %s, a name in .git: stat'ed %s, %s; only %s and the root expected" %
                 (pattern, sorted(stated)[:10], err.strip(), sorted(start)))
        if not start:  # a block at a time: no read past the first as long as half the entries
            with open(cache, "rb") as f:
                dirs_len = struct.unpack_from("<Q", f.read(56), 48)[0]
            reads = check_stated.reads
            if not reads or reads[0][0] != 0 or any(n > dirs_len // 2 for _, n in reads[1:]):
                fail("check %s, a name in .git: the cache read as %s (offset, bytes), its "
                     "entries %d bytes" % (pattern, reads, dirs_len))
            print("ok: check %s: the cache read as %s (offset, bytes), its entries %d bytes" %
                  (pattern, reads, dirs_len))
        new = os.path.join(tree, deep, "new-%d.c" % len(start))
        open(new, "w").close()
        settle()
        code, stated, out, err = check_stated(trawl, tree, cache, env, log)
        if code != 1 or os.path.relpath(new, tree) not in out:
            fail("check %s, a file added in %s: exit %d, %r" % (pattern, deep, code, out))
        # The check stats that directory, finds it changed, and walks: the
        # walk reads it (and opens the way to it), replaying the others
        # without a stat.
        way = {deep.rsplit("/", k)[0] for k in range(deep.count("/") + 1)}
        if deep not in stated or not stated <= way | start:
            fail("check %s, a file added in %s: stat'ed %s" % (pattern, deep, sorted(stated)[:10]))
        print("ok: check %s: a name in .git stat'ed %s and the root; a file added in %s: %s" %
              (pattern, sorted(start) or "nothing", deep, sorted(stated)))


def check_vcs(trawl, tmp, env):
    """Watchman reports nothing that changes in .git: a walk that enters it
    (hidden files, no ignore rules: CMake's GLOB_RECURSE from the top) must
    stat what it recorded there, and a walk whose root is in .git must not
    ask watchman at all. Until format 11 the check vouched for .git's
    directories, and a new branch's ref was missing from the answer."""
    tree = os.path.join(tmp, "tree3")
    os.mkdir(tree)
    subprocess.run(["git", "init", "-q", tree], check=True)
    for d in ("src", "src/lib"):
        os.makedirs(os.path.join(tree, d), exist_ok=True)
        open(os.path.join(tree, d, "a.c"), "w").close()
    refs = os.path.join(tree, ".git", "refs", "heads")
    for name, root, pattern, ref, used in (
            ("from the top", tree, "**", ".git/refs/heads/topic", True),
            ("from .git/refs", os.path.join(tree, ".git", "refs"), "**", "heads/other", False)):
        cache = os.path.join(tmp, "vcs-%s.cache" % ref.replace("/", "-"))
        settle()
        for _ in range(2):  # written, then written again with nothing racy
            subprocess.run([trawl, "-C", root, "-H", "-I", "--cache", cache, pattern], env=env,
                           stdout=subprocess.DEVNULL, check=True)
            settle()
        with open(os.path.join(refs, os.path.basename(ref)), "w") as f:
            f.write("0" * 40 + "\n")
        settle()
        p = subprocess.run([trawl, "check", "--stats", "--cache", cache], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
        if p.returncode != 1 or ("+ " + ref) not in out.splitlines():
            fail("check %s, a ref added in .git: exit %d, %r (expected 1 and + %s); %s" %
                 (name, p.returncode, out, ref, err))
        if used and "watchman used: " not in err:
            fail("check %s: watchman not used: %s" % (name, err))
        # A root in .git: no clock was recorded (wm_clock_of() refuses it),
        # so the check takes the stat path.
        if not used and "watchman not used (the cache has no clock" not in err:
            fail("check %s: watchman asked for a root in .git: %s" % (name, err))
        fresh = subprocess.run([trawl, "-C", root, "-H", "-I", pattern], env=env,
                               stdout=subprocess.PIPE, check=True).stdout
        cached = subprocess.run([trawl, "-C", root, "-H", "-I", "--cache", cache, pattern],
                                env=env, stdout=subprocess.PIPE, check=True).stdout
        if cached != fresh:
            fail("check %s: the cached walk after it is not the fresh walk" % name)
        print("ok: check %s: a ref added in .git found (+ %s), watchman %s" %
              (name, ref, "used" if used else "not asked"))


def check_follow(trawl, tmp, env, log):
    """A plan whose walks all follow links can use no answer from watchman
    and records no clock: its check says so and does not even connect (the
    Bazel wrapper's indexer follows links, as glob() does, before every
    Bazel command)."""
    tree = os.path.join(tmp, "tree2")  # check_names's, watched
    cache = os.path.join(tmp, "follow.cache")
    for _ in range(2):
        subprocess.run([trawl, "-C", tree, "-L", "--cache", cache, "a01/**/*.c"], env=env,
                       stdout=subprocess.DEVNULL, check=True)
    env = dict(env, ASAN_OPTIONS=env.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    p = subprocess.run(["strace", "-f", "-qq", "-e", "trace=connect", "-o", log, trawl, "check",
                        "--stats", "--cache", cache], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    err = p.stderr.decode(errors="replace")
    with open(log) as f:
        connects = [l for l in f if "connect(" in l]
    if p.returncode != 0 or "watchman not used (links are followed" not in err or connects:
        fail("check of a walk that follows links: exit %d, %r, connect calls %r" %
             (p.returncode, err, connects))
    print("ok: check of a walk that follows links: watchman not asked, no connection")


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    for tool in ("watchman", "strace", "git"):
        if shutil.which(tool) is None:
            print("%s is not installed (scripts/bootstrap installs it)" % tool, file=sys.stderr)
            return 1
    trawl = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="trawl-vouch-")
    d = os.path.join(tmp, "daemon")
    os.mkdir(d)
    try:
        watchman_cache.start(d, as_nobody=False)
        tree = os.path.join(tmp, "tree")
        os.mkdir(tree)
        subprocess.run(["git", "init", "-q", tree], check=True)
        for i in range(N_DIRS):
            os.mkdir(os.path.join(tree, "d%02d" % i))
            for k in range(3):
                open(os.path.join(tree, "d%02d" % i, "f%d.c" % k), "w").close()
        base = {k: v for k, v in os.environ.items() if k != "WATCHMAN_SOCK"}
        arms = {
            "on": (dict(base, TRAWL_WATCHMAN="on", TRAWL_WATCHMAN_SOCK=os.path.join(d, "sock")),
                   os.path.join(tmp, "on.cache")),
            "off": (dict(base, TRAWL_WATCHMAN="off"), os.path.join(tmp, "off.cache")),
        }
        log = os.path.join(tmp, "strace.log")
        settle()
        for env, cache in arms.values():
            for _ in range(2):  # written, then written again with nothing racy
                subprocess.run([trawl, "-C", tree, "--cache", cache, "**/*.c"], env=env,
                               stdout=subprocess.DEVNULL, check=True)
                settle()

        def add_file():
            open(os.path.join(tree, "d17", "new.c"), "w").close()
            return {"d17"}

        def remove_file():
            os.unlink(os.path.join(tree, "d23", "f1.c"))
            return {"d23"}

        def add_dir():
            os.mkdir(os.path.join(tree, "d31", "sub"))
            open(os.path.join(tree, "d31", "sub", "g.c"), "w").close()
            return {"d31"}  # the new one is read, not stat'ed against a record

        def ignore_file():
            with open(os.path.join(tree, "d40", ".gitignore"), "w") as f:
                f.write("f0.c\n")
            return {"d40"}

        checked = 0
        for change in (add_file, remove_file, add_dir, ignore_file):
            touched = change()
            settle()
            fresh = subprocess.run([trawl, "-C", tree, "**/*.c"], env=arms["off"][0],
                                   stdout=subprocess.PIPE, check=True).stdout
            stated = {}
            for name, (env, cache) in arms.items():
                stated[name], out, err = dirs_stated(trawl, tree, cache, env, log)
                if out != fresh:
                    fail("%s, watchman %s: the cached walk is not the fresh walk" %
                         (change.__name__, name))
                if name == "on" and "watchman used" not in err:
                    fail("%s: watchman was not used: %s" % (change.__name__, err))
            everyone = {"d%02d" % i for i in range(N_DIRS)}
            if not everyone <= stated["off"]:
                fail("%s, watchman off: not every directory stat'ed (%d of %d): the stat path "
                     "changed, and this test with it" % (change.__name__, len(stated["off"] & everyone),
                                                          N_DIRS))
            if not stated["on"] <= touched:
                fail("%s, watchman on: stat'ed %s, where only %s changed" %
                     (change.__name__, sorted(stated["on"] - touched)[:10], sorted(touched)))
            print("ok: %s: watchman off stat'ed %d directories, on stat'ed %s" %
                  (change.__name__, len(stated["off"] & everyone), sorted(stated["on"])))
            checked += 1
            settle()
            for env, cache in arms.values():  # nothing racy before the next change
                subprocess.run([trawl, "-C", tree, "--cache", cache, "**/*.c"], env=env,
                               stdout=subprocess.DEVNULL, check=True)
            settle()
        print("%d changes, each cached walk equal to a fresh one" % checked)
        check_names(trawl, tmp, arms["on"][0], log)
        check_vcs(trawl, tmp, arms["on"][0])
        check_follow(trawl, tmp, arms["on"][0], log)
        return 0
    finally:
        watchman_cache.stop(d, signal.SIGTERM)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
