#!/usr/bin/env python3
"""What reading the index costs (issue 31): the reader against libgit2, the
gitignore lanes with and without the index reader, and the cache's re-check
after an index write.

usage: bench/index_bench.py [--fixtures DIR] [--rounds N] [--no-callgrind]
                            [--only reader,walks,recheck] BEFORE_TRAWL AFTER_TRAWL

BEFORE_TRAWL is a build without the index reader, AFTER_TRAWL one with it,
both built the same way (the README's one compiler command, say). For the
recheck lane alone BEFORE_TRAWL may be any other build (an older one).

reader   build/bench/bench_index (the reader against libgit2, answers
         compared first) on a 100,000-entry index in formats 2 and 4, split,
         and sparse, made with `git update-index --index-info` in a
         temporary directory.
walks    each lane run by both binaries, the outputs compared byte for byte
         first; then (unless --no-callgrind) the instructions of each under
         callgrind; then N rounds (default 21) interleaved, the order
         alternating, and the median of the per-round ratios AFTER/BEFORE:
           repo-gitignore      trawl -j1 -C repo -H '**' (node_modules/
                               ignored: the index, 2,601 entries, is asked
                               about it)
           tracked100k         trawl -j1 -C tracked100k -H '**' (100,000
                               tracked files; 2,000 untracked *.o and an
                               untracked build/ ignored: the index is read
                               and asked 2,001 times)
           tracked100k-ts      trawl -j1 -C tracked100k '**/*.ts'
           tracked100k-none    trawl -j1 -C tracked100k 'packages/**/*.ts'
                               (no rule leaves anything out: the index is
                               never read)
recheck  `trawl check --cache` on tracked100k, BEFORE's and AFTER's taking
         turns (each with a cache of its own): unchanged, and right
         after an index write that changes no answer (`git update-index
         --add` of an unrelated path, then --force-remove of it, in turns),
         each round waiting out the racy window first; the write's re-check
         must exit 0 having read no directory. The median of the per-round
         ratios (after the write / unchanged). A check does not rewrite the
         cache after such a write (it would cost more than asking again),
         so each round first makes the cache anew with a walk (not timed),
         out of the racy window: then the unchanged check reads no index,
         and the one after the next write reads it.

The fixture tracked100k is made under --fixtures (default bench/fixtures)
the first time: 100,000 empty files packages/pkgNN/src/dirNN/fileNN.ts in
the index (by --index-info: git's stat data is not what trawl reads), a
fileNN.o beside each directory's files, and build/ with 500 files;
.gitignore "*.o" and "build/". Only ratios mean anything on a shared
machine, and only beside the instruction counts.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # the empty file
GIT_ENV = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null",
               GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@b")


def git(cwd, *args, input=None):
    return subprocess.run(["git", "-C", cwd] + list(args), input=input, env=GIT_ENV,
                          stdout=subprocess.PIPE, check=True).stdout


def index_info(n_pkgs=40, n_dirs=50, n_files=50):
    paths = ["packages/pkg%02d/src/dir%02d/file%02d.ts" % (p, d, f)
             for p in range(n_pkgs) for d in range(n_dirs) for f in range(n_files)]
    return paths, "".join("100644 %s 0\t%s\n" % (BLOB, p) for p in paths).encode()


def make_tracked100k(fixtures):
    root = os.path.join(fixtures, "tracked100k")
    stamp = os.path.join(root, ".git", "trawl-bench-done")
    if os.path.exists(stamp):
        return root
    subprocess.run(["rm", "-rf", root], check=True)
    os.makedirs(root)
    git(root, "init", "-q")
    paths, info = index_info()
    dirs = sorted(set(os.path.dirname(p) for p in paths))
    for d in dirs:
        os.makedirs(os.path.join(root, d))
        open(os.path.join(root, d, "file00.o"), "w").close()
    for p in paths:
        open(os.path.join(root, p), "w").close()
    os.makedirs(os.path.join(root, "build"))
    for i in range(500):
        open(os.path.join(root, "build", "out%03d.o" % i), "w").close()
    with open(os.path.join(root, ".gitignore"), "w") as f:
        f.write("*.o\nbuild/\n")
    git(root, "update-index", "--index-info", input=info)
    git(root, "add", ".gitignore")
    open(stamp, "w").close()
    return root


def reader(tmp):
    exe = os.path.join(ROOT, "build", "bench", "bench_index")
    if not os.path.exists(exe):
        print("reader: %s not built (libgit2-dev missing?)" % exe)
        return
    _, info = index_info()
    made = []
    for form in ("2", "4", "split", "sparse"):
        r = os.path.join(tmp, "index-" + form)
        git(tmp, "init", "-q", r)
        git(r, "update-index", "--index-info", input=info)
        if form == "4":
            git(r, "update-index", "--index-version", "4")
        elif form == "split":
            git(r, "update-index", "--split-index")
            git(r, "-c", "splitIndex.maxPercentChange=100", "update-index", "--index-info",
                input=("100644 %s 0\tpackages/zz/new.ts\n" % BLOB).encode())
        elif form == "sparse":
            git(r, "hash-object", "-w", "/dev/null")
            git(r, "commit", "-qm", "x")
            git(r, "sparse-checkout", "init", "--cone", "--sparse-index")
            git(r, "sparse-checkout", "set", "packages/pkg00/src/dir00")
        made.append(os.path.join(r, ".git", "index"))
    print("\n## reader: %s" % exe)
    sys.stdout.flush()
    subprocess.run([exe, "--rounds", "15"] + made, check=True)


def callgrind(argv, tmp):
    out = os.path.join(tmp, "cg.out")
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + argv,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    m = re.search(rb"Collected : (\d+)", p.stderr)
    return int(m.group(1)) if m else None


def timed(argv):
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def walks(before, after, fixtures, rounds, use_callgrind, tmp):
    repo = os.path.join(fixtures, "repo")
    t100k = make_tracked100k(fixtures)
    lanes = [("repo-gitignore", ["-j1", "-C", repo, "-H", "**"]),
             ("tracked100k", ["-j1", "-C", t100k, "-H", "**"]),
             ("tracked100k-ts", ["-j1", "-C", t100k, "**/*.ts"]),
             ("tracked100k-none", ["-j1", "-C", t100k, "packages/**/*.ts"])]
    if not os.path.isdir(repo):
        print("walks: no %s (bench/fixtures.py makes it); its lane is left out" % repo)
        lanes = lanes[1:]
    print("\n## walks: BEFORE %s, AFTER %s, %d rounds" % (before, after, rounds))
    print("%-18s %9s %14s %14s %8s %10s %10s %8s" % (
        "lane", "results", "instr before", "instr after", "ratio", "ms before", "ms after",
        "ratio"))
    for name, args in lanes:
        outs = [subprocess.run([t] + args, stdout=subprocess.PIPE, check=True).stdout
                for t in (before, after)]
        if outs[0] != outs[1]:
            sys.exit("walks: %s: the two builds print different results" % name)
        ib = ia = None
        if use_callgrind:
            ib, ia = callgrind([before] + args, tmp), callgrind([after] + args, tmp)
        tb, ta, ratios = [], [], []
        for i in range(rounds):
            pair = [(before, tb), (after, ta)]
            if i % 2:
                pair.reverse()
            for exe, into in pair:
                into.append(timed([exe] + args))
            ratios.append(ta[-1] / tb[-1])
        print("%-18s %9d %14s %14s %8s %10.2f %10.2f %8.3f" % (
            name, outs[0].count(b"\n"), "{:,}".format(ib) if ib else "-",
            "{:,}".format(ia) if ia else "-", "%.4f" % (ia / ib) if ib and ia else "-",
            1e3 * statistics.median(tb), 1e3 * statistics.median(ta), statistics.median(ratios)))
        sys.stdout.flush()


def recheck(binaries, fixtures, rounds, tmp):
    t100k = make_tracked100k(fixtures)
    other = "unrelated-%d.txt" % os.getpid()
    caches = [os.path.join(tmp, "recheck-%d.cache" % i) for i in range(len(binaries))]

    def check(trawl, cache):
        t0 = time.perf_counter()
        p = subprocess.run([trawl, "check", "--stats", "--cache", cache],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        t = time.perf_counter() - t0
        m = re.search(rb"directories opened (\d+)", p.stderr)
        return t, p.returncode, int(m.group(1)) if m else -1

    def index_write(i):
        if i % 2 == 0:
            git(t100k, "update-index", "--add", "--cacheinfo", "100644,%s,%s" % (BLOB, other))
        else:
            git(t100k, "update-index", "--force-remove", other)
        time.sleep(0.05)  # out of the racy window: the stamps recorded are trusted

    unchanged = [[] for _ in binaries]
    written = [[] for _ in binaries]
    for i in range(rounds):
        index_write(2 * i)
        # The caches made anew, recording the index as it is now (a cached
        # run would not write it: nothing it recorded changed an answer).
        for trawl, cache in zip(binaries, caches):
            if os.path.exists(cache):
                os.unlink(cache)
            subprocess.run([trawl, "-C", t100k, "--cache", cache, "**/*.ts"],
                           stdout=subprocess.DEVNULL, check=True)
        time.sleep(0.05)
        # The binaries take turns, the first alternating round by round.
        order = list(range(len(binaries)))
        if i % 2:
            order.reverse()
        for k in order:
            tu, code, opened = check(binaries[k], caches[k])
            if code != 0 or opened != 0:
                sys.exit("recheck: %s unchanged, the check exited %d, read %d"
                         % (binaries[k], code, opened))
            unchanged[k].append(tu)
        index_write(2 * i + 1)
        for k in order:
            tw, code, opened = check(binaries[k], caches[k])
            if code != 0 or opened != 0:
                sys.exit("recheck: %s after an unrelated index write the check exited %d, "
                         "read %d directories" % (binaries[k], code, opened))
            written[k].append(tw)
    print("\n## recheck: check --cache (**/*.ts of tracked100k: one question asked of the index "
          "recorded, about build/), %d rounds, the binaries taking turns" % rounds)
    for k, trawl in enumerate(binaries):
        ratios = [w / u for u, w in zip(unchanged[k], written[k])]
        print("%s: unchanged %.2f ms, after an unrelated index write %.2f ms (the index read, the "
              "questions asked again, nothing written); median ratio %.3f (min %.3f, max %.3f)"
              % (trawl, 1e3 * statistics.median(unchanged[k]), 1e3 * statistics.median(written[k]),
                 statistics.median(ratios), min(ratios), max(ratios)))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fixtures", default=os.path.join(ROOT, "bench", "fixtures"))
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--only", default="reader,walks,recheck")
    ap.add_argument("before")
    ap.add_argument("after")
    a = ap.parse_args(argv[1:])
    before, after = os.path.abspath(a.before), os.path.abspath(a.after)
    only = set(a.only.split(","))
    print("index_bench: %s UTC" % time.strftime("%Y-%m-%d %H:%M", time.gmtime()))
    with tempfile.TemporaryDirectory(prefix="trawl-index-bench-") as tmp:
        if "reader" in only:
            reader(tmp)
        if "walks" in only:
            walks(before, after, a.fixtures, a.rounds, not a.no_callgrind, tmp)
        if "recheck" in only:
            recheck([before, after], a.fixtures, a.rounds, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
