#!/usr/bin/env python3
"""Two checkouts of trawl against each other in real Bazel: the cold cost
of one trawl_glob() query, interleaved, with the answers checked equal.

usage: bench/bazel_ab.py OLD_CHECKOUT NEW_CHECKOUT [--runs N] [--workdir DIR]
       [--trawl EXE] [--warm]

The `repo` fixture is copied into WORKDIR/ws-old and WORKDIR/ws-new, each a
workspace whose @trawl is one checkout (docs/bazel.md's setup, the given
trawl, that checkout's tools/bazel wrapper), with the top BUILD file
`trawl_glob(["**/*.ts", "**/*.tsx"], gitignore = True)`: the `trawl-gi` arm
of bench/bazel_glob.py. Each run is `bazel --batch query` in one of them (with
--warm: a query in its running server, the BUILD file given a new comment);
the order alternates. Prints the medians and the median of the rounds'
differences (new - old). For a change to the Bazel rules or the indexer,
where the full bench's arms cannot tell two commits apart.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(HERE)
BUILD = ('load("@trawl//bazel:glob.bzl", "trawl_glob")\n'
         'filegroup(name = "srcs", srcs = trawl_glob(["**/*.ts", "**/*.tsx"], gitignore = True))\n')


def setup(workdir, arm, checkout, trawl):
    ws = os.path.join(workdir, "ws-" + arm)
    ob = os.path.join(workdir, "ob-" + arm)
    if os.path.isdir(ob):
        subprocess.run(["bazel", "--output_base=" + ob, "shutdown"], cwd=ws if os.path.isdir(ws)
                       else workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.rmtree(ws, ignore_errors=True)
    subprocess.run(["cp", "-a", os.path.join(HERE, "fixtures", "repo"), ws], check=True)
    with open(os.path.join(ws, "WORKSPACE"), "w") as f:
        f.write('local_repository(name = "trawl", path = %r)\n'
                'load("@trawl//bazel:repositories.bzl", "trawl_repositories")\n'
                'trawl_repositories(trawl = %r)\n' % (checkout, trawl))
    os.makedirs(os.path.join(ws, "tools"))
    os.symlink(os.path.join(checkout, "bazel", "tools_bazel"), os.path.join(ws, "tools", "bazel"))
    with open(os.path.join(ws, "BUILD"), "w") as f:
        f.write(BUILD)
    return ws, ob


def query(ws, ob, warm=False, n=0):
    """One query; warm: in the workspace's server, the BUILD file given a new
    comment first (so the package is evaluated again, as bazel_glob.py's warm
    arms do)."""
    if warm:
        with open(os.path.join(ws, "BUILD"), "w") as f:
            f.write("# run %d\n" % n + BUILD)
    t0 = time.perf_counter()
    p = subprocess.run(["bazel", "--output_base=" + ob] + ([] if warm else ["--batch"]) +
                       ["query", "labels(srcs, //:srcs)"],
                       cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - t0
    if p.returncode != 0:
        sys.stderr.write(p.stderr.decode("latin-1")[-3000:])
        sys.exit("bazel_ab: the query failed in %s" % ws)
    return seconds, sorted(p.stdout.split())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--runs", type=int, default=12)
    ap.add_argument("--workdir", default=os.path.join(CHECKOUT, "build", "bench-bazel-ab"))
    ap.add_argument("--trawl", default=os.path.join(CHECKOUT, "build", "plugins", "cli", "trawl"))
    ap.add_argument("--warm", action="store_true",
                    help="a server per workspace, kept running, instead of --batch")
    args = ap.parse_args()
    subprocess.run([sys.executable, os.path.join(HERE, "fixtures.py"), "--only", "repo"],
                   check=True, stdout=subprocess.DEVNULL)
    os.makedirs(args.workdir, exist_ok=True)
    arms = {a: setup(os.path.abspath(args.workdir), a, os.path.abspath(c),
                     os.path.abspath(args.trawl))
            for a, c in (("old", args.old), ("new", args.new))}
    answers = {}
    for a, (ws, ob) in arms.items():
        query(ws, ob)  # fetches and compiles; warms the page cache
        answers[a] = query(ws, ob)[1]
    if answers["old"] != answers["new"]:
        sys.exit("bazel_ab: the two answer differently (%d and %d paths)" % (
            len(answers["old"]), len(answers["new"])))
    times = {"old": [], "new": []}
    if args.warm:
        for a in arms:  # the servers started, everything loaded once
            query(*arms[a], warm=True, n=-1)
    for r in range(args.runs):
        for a in (["old", "new"] if r % 2 else ["new", "old"]):
            times[a].append(query(*arms[a], warm=args.warm, n=r)[0])
    if args.warm:
        for ws, ob in arms.values():
            subprocess.run(["bazel", "--output_base=" + ob, "shutdown"], cwd=ws,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print("bazel_ab: %s, %d paths each, %d rounds, %s seconds" % (
        time.strftime("%Y-%m-%d %H:%M"), len(answers["old"]), args.runs,
        "warm (server)" if args.warm else "cold (--batch)"))
    for a in ("old", "new"):
        print("%s (%s): median %.3f; %s" % (a, getattr(args, a), statistics.median(times[a]),
                                          " ".join("%.2f" % x for x in times[a])))
    print("median of the rounds' differences, new - old: %+.3f" % statistics.median(
        n - o for n, o in zip(times["new"], times["old"])))


if __name__ == "__main__":
    main()
