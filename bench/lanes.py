#!/usr/bin/env python3
"""Two builds of the `trawl` command, lane by lane: instructions and wall time.

usage: bench/lanes.py [--fixtures DIR] [--rounds N] [--no-callgrind] [--lanes L,...]
                      BEFORE_TRAWL AFTER_TRAWL

For a change that must not cost anything (issue 14's restructuring): each
lane is one command run by both binaries on the same fixture (bench/fixtures.py):

  walk-repo      trawl -j1 -C repo -H '**'            (every file git would list)
  walk-repo-ts   trawl -j1 -C repo '{src,packages}/**/*.{ts,tsx}'
  walk-flat20k   trawl -j1 -C flat20k -I '**'
  walk-big       trawl -j1 -C big -I '**'             (1,000,000 files; if generated)
  batch-flat20k  trawl batch -j1: four globs (**/*.ts, **/*.js, **/*.md, **/*.txt)
  check-repo     trawl check --cache FILE on an unchanged repo (the cache warm)

First both binaries run every lane once and must print the same bytes (the
cache lane: both exit 0 and print nothing). Then, unless --no-callgrind, each
lane runs once per binary under `valgrind --tool=callgrind` and the total
instruction count of the process is reported (deterministic: the same binary
and input give the same count, whatever the machine is doing). Then wall
time: the two binaries interleaved, the order alternating each round; the
ratio AFTER / BEFORE is taken per round and the median reported. Only the
ratios mean anything on a shared machine, and only beside the instruction
counts.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def lanes(fixtures, tmp):
    repo = os.path.join(fixtures, "repo")
    flat = os.path.join(fixtures, "flat20k")
    big = os.path.join(fixtures, "big")
    queries = os.path.join(tmp, "q.jsonl")
    with open(queries, "w") as f:
        for ext in ("ts", "js", "md", "txt"):
            f.write(json.dumps({"id": ext, "root": flat, "include": ["**/*." + ext]}) + "\n")
    out = [
        ("walk-repo", repo, lambda t, c: [t, "-j1", "-C", repo, "-H", "**"]),
        ("walk-repo-ts", repo, lambda t, c: [t, "-j1", "-C", repo, "{src,packages}/**/*.{ts,tsx}"]),
        ("walk-flat20k", flat, lambda t, c: [t, "-j1", "-C", flat, "-I", "**"]),
        ("walk-big", big, lambda t, c: [t, "-j1", "-C", big, "-I", "**"]),
        ("batch-flat20k", flat, lambda t, c: [t, "batch", "-j1", queries]),
        ("check-repo", repo, lambda t, c: [t, "check", "--cache", c]),
    ]
    return [(name, argv) for name, need, argv in out if os.path.isdir(need)]


def run(argv):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout


def callgrind(argv, tmp):
    out = os.path.join(tmp, "cg.out")
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + argv,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    m = re.search(rb"Collected : (\d+)", p.stderr)
    if not m:
        sys.exit("lanes: no count from callgrind: %s" % p.stderr.decode(errors="replace")[-500:])
    return int(m.group(1))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fixtures", default=os.path.join(ROOT, "bench", "fixtures"))
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--lanes", default="")
    ap.add_argument("before")
    ap.add_argument("after")
    a = ap.parse_args(argv[1:])
    bins = [os.path.abspath(a.before), os.path.abspath(a.after)]
    with tempfile.TemporaryDirectory(prefix="trawl-lanes-") as tmp:
        # A cache per binary, each written by its own build (the format may
        # differ between them), then left warm: the tree does not change.
        caches = []
        for i, t in enumerate(bins):
            c = os.path.join(tmp, "c%d.cache" % i)
            run([t, "-j1", "-C", os.path.join(a.fixtures, "repo"), "--cache", c, "-H", "**"])
            caches.append(c)
        time.sleep(0.1)
        chosen = [l for l in lanes(a.fixtures, tmp) if not a.lanes or l[0] in a.lanes.split(",")]
        print("| lane | instructions before | after | after ÷ before | wall ms before (median) | "
              "after | after ÷ before, median of rounds |")
        print("|---|--:|--:|--:|--:|--:|--:|")
        for name, make in chosen:
            argvs = [make(bins[i], caches[i]) for i in range(2)]
            outs = [run(x) for x in argvs]
            if outs[0] != outs[1]:
                sys.exit("lanes: %s: the two builds answer differently" % name)
            if name.startswith("check") and outs[0] != (0, b""):
                sys.exit("lanes: %s: the cache is not unchanged: %r" % (name, outs[0]))
            ir = [None, None] if a.no_callgrind else [callgrind(x, tmp) for x in argvs]
            walls = [[], []]
            ratios = []
            for r in range(a.rounds):
                order = (0, 1) if r % 2 == 0 else (1, 0)
                got = {}
                for i in order:
                    t0 = time.perf_counter()
                    run(argvs[i])
                    got[i] = (time.perf_counter() - t0) * 1000
                    walls[i].append(got[i])
                ratios.append(got[1] / got[0])
            irs = ("%d" % ir[0], "%d" % ir[1], "%.4f" % (ir[1] / ir[0])) if ir[0] else ("-", "-", "-")
            print("| %s | %s | %s | %s | %.2f | %.2f | %.3f |" % (
                name, irs[0], irs[1], irs[2], statistics.median(walls[0]),
                statistics.median(walls[1]), statistics.median(ratios)))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
