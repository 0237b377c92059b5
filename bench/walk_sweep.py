#!/usr/bin/env python3
"""Sweep tree shapes to choose the walker's helper floor (issue 3).

For each shape -- D directories under the root, F files in each -- run
bench_walk with helper threads forced off (-j 1) and forced on from the
first directory (-j 2 --floor 0), each run a fresh process, arms alternating,
and report the median wall time of each and their ratio. Every run must
report the same result count, or the sweep stops.

    bench/walk_sweep.py build/bench/bench_walk [--reps 9] [--dir /dev/shm/trawl-sweep]
                        [--sorted] [--dirs 1,2,...] [--files 8,64,...]

A flat shape puts D items in the calling thread's deque after the first
directory, so the smallest D at which the helpers pay is the floor the
walker should use (HELPER_FLOOR, libcore/src/walk/walk-run.h).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys

DIRS = [1, 2, 4, 8, 16, 32, 64, 256, 1024]
FILES = [8, 64, 512]


def make_shape(base, dirs, files):
    root = os.path.join(base, f"d{dirs}-f{files}")
    if os.path.isdir(root):
        return root
    tmp = root + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    for d in range(dirs):
        sub = os.path.join(tmp, f"dir{d:05}")
        os.mkdir(sub)
        for f in range(files):
            ext = ".c" if f % 2 else ".h"
            os.close(os.open(os.path.join(sub, f"f{f:05}{ext}"), os.O_CREAT | os.O_WRONLY, 0o644))
    os.rename(tmp, root)
    return root


def run(exe, root, arm):
    args = [exe] + arm + [root, "**/*.c"]
    out = subprocess.run(args, check=True, stdout=subprocess.PIPE, text=True).stdout.split()
    fields = dict(zip(out[::2], out[1::2]))
    return int(fields["results"]), int(fields["threads"]), float(fields["us"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("exe")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--dirs", default=",".join(map(str, DIRS)), help="D values, comma-separated")
    ap.add_argument("--files", default=",".join(map(str, FILES)), help="F values, comma-separated")
    ap.add_argument("--sorted", action="store_true",
                    help="both arms sorted (trawl_walker_run_sorted), as the command runs")
    ap.add_argument("--dir", default="/dev/shm/trawl-sweep" if os.path.isdir("/dev/shm") else "/tmp/trawl-sweep")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    arms = {"serial": ["-j", "1"], "helpers": ["-j", "2", "--floor", "0"]}
    if a.sorted:
        arms = {k: v + ["--sorted"] for k, v in arms.items()}
    print(f"| dirs | files/dir | serial µs | helpers µs | helpers / serial |")
    print(f"|--:|--:|--:|--:|--:|")
    for files in [int(x) for x in a.files.split(",")]:
        for dirs in [int(x) for x in a.dirs.split(",")]:
            if dirs * files > 600_000:
                continue
            root = make_shape(a.dir, dirs, files)
            times = {k: [] for k in arms}
            expect = None
            for _ in range(a.reps):
                for name, arm in arms.items():
                    results, threads, us = run(a.exe, root, arm)
                    if expect is None:
                        expect = results
                    if results != expect:
                        sys.exit(f"{root}: {name} found {results}, expected {expect}")
                    times[name].append(us)
            s = statistics.median(times["serial"])
            h = statistics.median(times["helpers"])
            print(f"| {dirs} | {files} | {s:.0f} | {h:.0f} | {h / s:.2f} |", flush=True)


if __name__ == "__main__":
    main()
