#!/usr/bin/env python3
"""An unchanged `trawl check` on a tree with nested repositories (issue 24).

usage: bench/nested_check.py [--fixtures DIR] [--build DIR] [--runs N] [--base DIR]

Three arms, side by side in one run, each a copy of `flat20k`
(bench/fixtures.py) made a git work tree (`git init` at its root, a
`.gitignore` of `*.o`), with 0, 1 and 20 of its directories (d000, d000 to
d019) made repositories of their own (`git init` there: a vendored clone; the
nested repositories' sources are then recorded with their directories,
docs/cache.md). Each arm: `trawl --cache` of `**/*.ts` (the first walk), then
`trawl check` until one opens no directory (the racy window past), then N
checks in turn with the other arms' (round robin, so that the machine's load
falls on every arm alike).

Before any time is taken, every arm's answer is checked: the cache's results
the same 5,000 paths in every arm, each timed check exit 0, opening no
directory, writing nothing (no "cache written" in `--stats`, the file's
mtime and inode unchanged). The time is the check's own (`--stats`, from its
start to its end, in the process), the median over N; the ratio to the arm
with none is the evidence (docs/benchmarks.md). Exit 1 when a check fails.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ARMS = (0, 1, 20)
STATS = re.compile(r"directories opened (\d+), reused (\d+)(, cache written)?, ([0-9.]+) ms")


def run(args, cwd=None, env=None):
    p = subprocess.run(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def check(exe, cache, env):
    """One `trawl check --stats`: (exit, opened, written, ms)."""
    code, _, err = run([exe, "check", "--stats", "--cache", cache], env=env)
    m = STATS.search(err)
    if m is None:
        sys.exit("nested_check: no stats in: %s" % err)
    return code, int(m.group(1)), m.group(3) is not None, float(m.group(4))


def make_arm(fixtures, work, n, env):
    tree = os.path.join(work, "nested%d" % n)
    subprocess.run(["cp", "-r", os.path.join(fixtures, "flat20k"), tree], check=True)
    subprocess.run(["git", "init", "-q", tree], check=True, env=env)
    with open(os.path.join(tree, ".gitignore"), "w") as f:
        f.write("*.o\n")
    for i in range(n):
        subprocess.run(["git", "init", "-q", os.path.join(tree, "d%03d" % i)], check=True, env=env)
    return tree


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fixtures", default=os.path.join(HERE, "fixtures"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--base", default="/var/tmp")
    a = ap.parse_args(argv)
    exe = os.path.join(a.build, "plugins", "cli", "trawl")
    if not os.path.isdir(os.path.join(a.fixtures, "flat20k")):
        sys.exit("nested_check: no flat20k in %s (bench/fixtures.py --only flat20k)" % a.fixtures)
    work = tempfile.mkdtemp(dir=a.base, prefix="nested-check-")
    env = dict(os.environ)
    # git's configuration of this run alone: the same excludes file for
    # every arm.
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.path.join(work, "gitconfig"),
                "XDG_CONFIG_HOME": os.path.join(work, "xdg"), "HOME": work})
    open(os.path.join(work, "gitconfig"), "w").close()
    failed = False
    try:
        caches, results = {}, {}
        for n in ARMS:
            tree = make_arm(a.fixtures, work, n, env)
            cache = os.path.join(work, "c%d.cache" % n)
            code, out, err = run([exe, "-C", tree, "--cache", cache, "**/*.ts"], env=env)
            if code != 0:
                sys.exit("nested_check: first walk of %d: exit %d\n%s" % (n, code, err))
            results[n] = sorted(out.splitlines())
            caches[n] = cache
            # Past the racy window: a check that opens nothing.
            for _ in range(20):
                time.sleep(0.05)
                if check(exe, cache, env)[1] == 0:
                    break
        same = all(results[n] == results[0] for n in ARMS) and len(results[0]) == 5000
        print("results: %s" % ("the same 5,000 paths in every arm" if same else "DIFFER"))
        failed = not same
        times = {n: [] for n in ARMS}
        for _ in range(a.runs):
            for n in ARMS:
                before = os.stat(caches[n])
                code, opened, written, ms = check(exe, caches[n], env)
                after = os.stat(caches[n])
                if code != 0 or opened != 0 or written or \
                        (before.st_ino, before.st_mtime_ns) != (after.st_ino, after.st_mtime_ns):
                    print("arm %d: exit %d, opened %d, written %s" % (n, code, opened, written))
                    failed = True
                times[n].append(ms)
        base = statistics.median(times[0])
        print("| nested repositories | directories opened | cache written | median ms (of %d) "
              "| ratio to none |" % a.runs)
        print("|--:|--:|---|--:|--:|")
        for n in ARMS:
            med = statistics.median(times[n])
            print("| %d | 0 | no | %.3f | %.2f× |" % (n, med, med / base))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
