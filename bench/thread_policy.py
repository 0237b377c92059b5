#!/usr/bin/env python3
"""The default thread policy against -j 1, on every fixture (issue 14).

usage: bench/thread_policy.py [--fixtures DIR] [--rounds N] [--jobs N,...] TRAWL [TRAWL...]

Without -j a walk may use every online CPU; helper threads start once the
calling thread has read and queued HELPER_FLOOR directories (walk-run.h).
The goal: the default is never slower than -j 1 by more than 5 %. Each
TRAWL is a build of the command (for a sweep, builds that differ only in
-DHELPER_FLOOR=N, named after it). Lanes:

  repo **            trawl -C repo -H '**'                      149 directories read
  repo ts            trawl -C repo '{src,packages}/**/*.{ts,tsx}'  437
  flat20k **         trawl -C flat20k -I '**'                   401
  big **             trawl -C big -I '**'                   38,383 (if generated)
  batch flat20k      trawl batch: four globs over flat20k       401

For each lane and build, `-j 1` and the default (and, with --jobs, each -j N
of the sweep) run interleaved (the order rotated each round), each a fresh
process; every run must print the same bytes as the first. The ratio of each
arm to -j 1 is taken per round, and its median and the threads the arm used
(--stats) are reported. Only the ratios mean
anything on a shared machine.
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


def lanes(fx, tmp):
    q = os.path.join(tmp, "q.jsonl")
    with open(q, "w") as f:
        for ext in ("ts", "js", "md", "txt"):
            f.write(json.dumps({"id": ext, "root": os.path.join(fx, "flat20k"),
                                "include": ["**/*." + ext]}) + "\n")
    out = [
        ("repo **", "repo", lambda j: ["-C", os.path.join(fx, "repo"), "-H"] + j + ["**"]),
        ("repo ts", "repo", lambda j: ["-C", os.path.join(fx, "repo")] + j +
         ["{src,packages}/**/*.{ts,tsx}"]),
        ("flat20k **", "flat20k", lambda j: ["-C", os.path.join(fx, "flat20k"), "-I"] + j + ["**"]),
        ("big **", "big", lambda j: ["-C", os.path.join(fx, "big"), "-I"] + j + ["**"]),
        ("batch flat20k", "flat20k", lambda j: ["batch"] + j + [q]),
    ]
    return [(n, a) for n, need, a in out if os.path.isdir(os.path.join(fx, need))]


def run(argv):
    t0 = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return time.perf_counter() - t0, p.stdout, p.stderr


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures", default=os.path.join(HERE, "fixtures"))
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--jobs", default="",
                    help="also these -j values, each against -j 1 (a sweep: 2,4,8)")
    ap.add_argument("trawl", nargs="+")
    a = ap.parse_args(argv[1:])
    jobs = [int(j) for j in a.jobs.split(",") if j]
    print("| lane | build | arm | ÷ -j 1, median (min–max) | threads used |")
    print("|---|---|---|--:|--:|")
    with tempfile.TemporaryDirectory(prefix="trawl-threads-") as tmp:
        for name, make in lanes(a.fixtures, tmp):
            want = None
            for exe in a.trawl:
                serial = [exe] + make(["-j1"])
                arms = [("default", [exe] + make([]))]
                arms += [("-j %d" % j, [exe] + make(["-j%d" % j])) for j in jobs]
                for argv_ in [serial] + [x for _, x in arms]:
                    _, out, err = run(argv_)
                    if want is None:
                        want = out
                    if out != want:
                        sys.exit("thread_policy: %s: %s answers differently" % (name, exe))
                threads = {}
                for label, argv_ in arms:
                    threads[label] = "-"
                    if not name.startswith("batch"):
                        _, _, err = run(argv_ + ["--stats"])
                        m = re.search(rb"threads used:\s+(\d+)", err)
                        threads[label] = m.group(1).decode() if m else "?"
                # Each round runs -j 1 and every arm, the order rotated; each
                # arm's ratio to that round's -j 1.
                ratios = {label: [] for label, _ in arms}
                everyone = [("-j 1", serial)] + arms
                for r in range(a.rounds):
                    shift = r % len(everyone)
                    t = {}
                    for label, argv_ in everyone[shift:] + everyone[:shift]:
                        t[label] = run(argv_)[0]
                    for label, _ in arms:
                        ratios[label].append(t[label] / t["-j 1"])
                for label, _ in arms:
                    print("| %s | %s | %s | %.3f (%.2f–%.2f) | %s |" % (
                        name, os.path.basename(exe), label, statistics.median(ratios[label]),
                        min(ratios[label]), max(ratios[label]), threads[label]))
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
