#!/usr/bin/env python3
"""Long include and exclude lists in a walk: pattern sets against a loop.

    python3 bench/walk_sets.py [--fixtures DIR] [--rounds N] [--exe PATH]

On the `repo` fixture (bench/fixtures.py; ignore files off, -I, so that only
the lists decide), each list is walked by build/bench/bench_walk twice per
round, in alternating order, in fresh processes: once as trawl walks it (from
8 patterns on: one pattern-set lookup per entry, the prune index for
directories) and once trying every pattern in turn (the walker's private
knob --patset-min 4294967295). Both arms must return the same results (count
and an order-independent checksum of the paths) and read the same number of
directories, or the script stops. Prints a markdown table of medians; the
ratio loop / set is the evidence, not the milliseconds (a shared, noisy
machine).

The lists, each at 10 and at 1,000 patterns (drawn with a fixed seed from the
fixture itself, so that they match real paths):
  sources     literal file paths, as a Meson source list names them
  dirs        `DIR/*.ts` for directories of the tree
  extensions  `**/*.extN`, two of them real (.ts, .tsx)
  excludes    include `**/*.ts`, excludes `**/nameN/**` (some real directory names)
"""
import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LOOP = "4294967295"


def tree_of(root):
    files, dirs = [], []
    for d, sub, names in os.walk(root):
        sub[:] = sorted(s for s in sub if not s.startswith("."))
        rel = os.path.relpath(d, root)
        if rel != ".":
            dirs.append(rel)
        for n in sorted(names):
            if not n.startswith("."):
                files.append(n if rel == "." else rel + "/" + n)
    return files, dirs


def lists(root, n, rng):
    files, dirs = tree_of(root)
    own = [f for f in files if not f.startswith("node_modules/")]
    names = sorted({d.rsplit("/", 1)[-1] for d in dirs})
    out = {}
    out["sources"] = ([p for p in rng.sample(own, n)], [])
    ts_dirs = sorted({f.rsplit("/", 1)[0] for f in own if f.endswith(".ts") and "/" in f})
    out["dirs"] = ([d + "/*.ts" for d in rng.sample(ts_dirs, min(n, len(ts_dirs)))], [])
    exts = ["**/*.ts", "**/*.tsx"] + ["**/*.ext%d" % i for i in range(n - 2)]
    out["extensions"] = (exts, [])
    excl = ["**/%s/**" % x for x in rng.sample(names, min(n // 10, len(names)))]
    excl += ["**/name%d/**" % i for i in range(n - len(excl))]
    out["excludes"] = (["**/*.ts"], excl)
    return out


def run(exe, root, inc_file, exc_file, extra, arm):
    args = [exe, "-j", "1", "-I", "--patset-min", arm, "--includes-from", inc_file]
    if exc_file:
        args += ["--excludes-from", exc_file]
    args += [root] + extra
    out = subprocess.run(args, check=True, stdout=subprocess.PIPE, text=True).stdout.split()
    f = dict(zip(out[::2], out[1::2]))
    return (int(f["results"]), int(f["dirs"]), f["sum"]), float(f["us"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fixtures", default=os.path.join(HERE, "fixtures"))
    ap.add_argument("--exe", default=os.path.join(ROOT, "build", "bench", "bench_walk"))
    ap.add_argument("--rounds", type=int, default=11)
    a = ap.parse_args()
    root = os.path.join(a.fixtures, "repo")
    if not os.path.isdir(root):
        sys.exit("walk_sets: no %s (python3 bench/fixtures.py %s)" % (root, a.fixtures))
    print("| list | patterns | results | dirs read | set ms | loop ms | loop / set |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (10, 1000):
            for name, (inc, exc) in lists(root, n, random.Random(7)).items():
                inc_file = os.path.join(tmp, name + ".inc")
                with open(inc_file, "w") as f:
                    f.write("\n".join(inc) + "\n")
                exc_file = None
                if exc:
                    exc_file = os.path.join(tmp, name + ".exc")
                    with open(exc_file, "w") as f:
                        f.write("\n".join(exc) + "\n")
                times = {"1": [], LOOP: []}
                answers = set()
                for r in range(a.rounds):
                    for arm in (("8", LOOP) if r % 2 else (LOOP, "8")):
                        ans, us = run(a.exe, root, inc_file, exc_file, [], arm)
                        answers.add(ans)
                        times["1" if arm == "8" else LOOP].append(us / 1000)
                if len(answers) != 1:
                    sys.exit("walk_sets: %s/%d: the arms disagree: %s" % (name, n, answers))
                (results, dirs, _), = answers
                s, l = statistics.median(times["1"]), statistics.median(times[LOOP])
                print("| %s | %d | %d | %d | %.2f | %.2f | %.2f |" %
                      (name, len(inc) + len(exc), results, dirs, s, l, l / s))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
