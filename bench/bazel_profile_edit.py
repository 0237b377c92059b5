#!/usr/bin/env python3
"""Bazel's own time for a `--batch` query after an edit, by its profile, per arm.

usage: bench/bazel_profile_edit.py WORKDIR [--arms native,trawl-gi] [--rounds 12]
                                   [--edit-dir DIR]

WORKDIR is a workdir of bench/bazel_glob.py in tree mode (WORKDIR/ARM/ws and
WORKDIR/ARM/ob for each arm, made by a run of it). Each round adds a file to
--edit-dir (default: programs, zstd's busiest) in every arm's workspace, runs
one `bazel --batch query 'labels(srcs, //...)' --profile=...` per arm (the
arms taking turns), removes the file and queries again. Per arm and edit it
prints the medians of the time from Bazel's first profile event to
"Finishing" (what the server did, the JVM's start and the client, the
wrapper included, left out) and of the client's wall time, and the median
of each round's ratio to the first arm. To Bazel a `--batch` command after an
add and one after a remove are the same command (a fresh server): a
difference between them is the client's or noise.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time


def query(ws, ob, profile):
    t = time.perf_counter()
    subprocess.run(["bazel", "--output_base=" + ob, "--batch", "query", "labels(srcs, //...)",
                    "--profile=" + profile], cwd=ws, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t
    with open(profile) as f:
        ev = json.load(f)["traceEvents"]
    t0 = min(e["ts"] for e in ev if "ts" in e)
    fin = [e for e in ev if e.get("name") == "Finishing"][0]["ts"]
    return wall * 1000, (fin - t0) / 1000


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workdir")
    ap.add_argument("--arms", default="native,trawl-gi")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--edit-dir", default="programs")
    a = ap.parse_args()
    arms = a.arms.split(",")
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        profile = os.path.join(tmp, "profile.json")
        for r in range(a.rounds):
            for op in ("add", "remove"):
                for arm in (arms if r % 2 == 0 else arms[::-1]):
                    ws = os.path.join(a.workdir, arm, "ws")
                    f = os.path.join(ws, a.edit_dir, "zz_trawl_profile.c")
                    if op == "add":
                        open(f, "w").close()
                    else:
                        os.unlink(f)
                    res.setdefault((op, arm), []).append(
                        query(ws, os.path.join(a.workdir, arm, "ob"), profile))
    print("| edit | arm | profile ms | wall ms | profile, rounds' ratio | wall, rounds' ratio |")
    print("|---|---|--:|--:|--:|--:|")
    for op in ("add", "remove"):
        base = res[(op, arms[0])]
        for arm in arms:
            x = res[(op, arm)]
            print("| %s | %s | %.0f | %.0f | %.3f | %.3f |" % (
                op, arm, statistics.median(v[1] for v in x), statistics.median(v[0] for v in x),
                statistics.median(v[1] / w[1] for v, w in zip(x, base)),
                statistics.median(v[0] / w[0] for v, w in zip(x, base))))


if __name__ == "__main__":
    main()
