#!/usr/bin/env python3
"""The Bazel wrapper's check, with and without watchman, without Bazel.

usage: bench/bazel_wrapper_check.py [--fixtures DIR] [--rounds N] [SHAPE...]

SHAPE: repo (default; bench/fixtures.py: a git work tree, 2,600 sources and
51,000 files in a gitignored node_modules/) or any other fixture. It is
copied into a temporary directory (made a git repository unless it is one)
and watched by a private watchman daemon (bench/watched_tree.py; never the
user's), and set up as docs/bazel.md's workspace is for the wrapper:
tools/bazel is bazel/tools_bazel, and .trawl/trawl links to this checkout's
trawl (what @trawl_tool makes). Every command through the wrapper runs
`trawl bazel-index --root WS --state .trawl` before Bazel; here the real
binary is `true` (BAZEL_REAL), so what is timed is the wrapper's check of an
unchanged workspace and nothing of Bazel's. Arms, interleaved, order rotated:

  tools/bazel, stat path        the wrapper (bash, the indexer, `true`),
                                TRAWL_WATCHMAN=off
  tools/bazel, watchman         the same, TRAWL_WATCHMAN=auto with the
                                private socket
  trawl bazel-index, stat path  the indexer alone
  trawl bazel-index, watchman

Before timing, the indexer prints the same digest in both environments, and
`trawl check --stats` of each part's cache (.trawl/parts) in the watchman
environment is printed: the indexer's walks follow links, as glob() does, and
a walk that follows links never asks watchman ("links are followed", docs/
cache.md), so the watchman arms take the stat path and pay only the
connection. Only ratios between arms run side by side mean anything on a
shared machine.
"""
import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TRAWL = os.path.join(ROOT, "build", "plugins", "cli", "trawl")
sys.path.insert(0, HERE)
import watched_tree  # noqa: E402


def timed(argv, env):
    start = time.perf_counter()
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return time.perf_counter() - start, p


def bench_shape(shape, fixtures, rounds):
    src = os.path.join(fixtures, shape)
    if not os.path.isdir(src):
        sys.exit("bazel_wrapper_check: no %s (bench/fixtures.py)" % src)
    with watched_tree.WatchedTree(src, shape) as w:
        ws = w.tree
        os.makedirs(os.path.join(ws, "tools"))
        shutil.copy(os.path.join(ROOT, "bazel", "tools_bazel"), os.path.join(ws, "tools", "bazel"))
        os.makedirs(os.path.join(ws, ".trawl"))
        os.symlink(TRAWL, os.path.join(ws, ".trawl", "trawl"))
        true = shutil.which("true")
        env = {"stat path": dict(w.env_stat, BAZEL_REAL=true),
               "watchman": dict(w.env_watchman, BAZEL_REAL=true)}
        index = [TRAWL, "bazel-index", "--root", ws, "--state", ".trawl"]
        wrapper = [os.path.join(ws, "tools", "bazel"), "version"]
        digests = {}
        for name in ("watchman", "stat path", "watchman"):   # the first: from nothing
            _, p = timed(index, env[name])
            if p.returncode != 0:
                sys.exit("bazel_wrapper_check: the indexer failed: %s" % p.stderr.decode())
            digests.setdefault(name, set()).add(p.stdout.strip())
        if len(set.union(*digests.values())) != 1:
            sys.exit("bazel_wrapper_check: the digests differ: %s" % digests)
        print("\n### %s: the indexer's digest %s in both environments" % (
            shape, next(iter(digests["watchman"])).decode()))
        for cache in sorted(glob.glob(os.path.join(ws, ".trawl", "parts", "**", "*cache*"),
                                      recursive=True)):
            p = subprocess.run([TRAWL, "check", "--stats", "--cache", cache], env=env["watchman"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            print("- check, watchman (exit %d): %s" % (
                p.returncode, p.stderr.decode(errors="replace").strip().replace(ws + "/", "")))
        arms = [("tools/bazel, stat path", wrapper, env["stat path"]),
                ("tools/bazel, watchman", wrapper, env["watchman"]),
                ("trawl bazel-index, stat path", index, env["stat path"]),
                ("trawl bazel-index, watchman", index, env["watchman"])]
        walls = {a: [] for a, _, _ in arms}
        for r in range(rounds + 2):
            k = r % len(arms)
            for label, argv, e in arms[k:] + arms[:k]:
                wall, p = timed(argv, e)
                if p.returncode != 0 or p.stderr:
                    sys.exit("bazel_wrapper_check: %s: exit %d: %s" % (
                        label, p.returncode, p.stderr.decode()))
                if r >= 2:
                    walls[label].append(wall)
        print("\n%d rounds after 2 warm-up; ms, each a process started from Python:\n" % rounds)
        print("| arm | wall median (min-max) | watchman / stat path, per round |")
        print("|---|---:|---:|")
        for label, _, _ in arms:
            w_ = walls[label]
            cell = ""
            if label.endswith("watchman"):
                base = walls[label.replace("watchman", "stat path")]
                cell = "%.3f" % statistics.median(a / b for a, b in zip(w_, base))
            print("| %s | %.2f (%.2f-%.2f) | %s |" % (label, 1e3 * statistics.median(w_),
                                                      1e3 * min(w_), 1e3 * max(w_), cell))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shapes", nargs="*", default=["repo"])
    ap.add_argument("--fixtures", default=os.path.join(HERE, "fixtures"))
    ap.add_argument("--rounds", type=int, default=15)
    a = ap.parse_args()
    if not os.access(TRAWL, os.X_OK):
        sys.exit("bazel_wrapper_check: build trawl first (%s)" % TRAWL)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    print("- Date: %s; trawl commit %s; watchman %s" % (
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), commit,
        subprocess.run(["watchman", "--version"], capture_output=True, text=True).stdout.strip()))
    for shape in a.shapes:
        bench_shape(shape, os.path.abspath(a.fixtures), a.rounds)


if __name__ == "__main__":
    main()
