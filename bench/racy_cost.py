#!/usr/bin/env python3
"""What the racy rule costs: how many directories `trawl check` reads again
right after a cache was written, on fine and on coarse file times.

usage: bench/racy_cost.py [--fixtures DIR] [--build DIR] [--rounds N] [SHAPE...]

SHAPE: repo (default), flat20k, wide (bench/fixtures.py; `**/*.{ts,tsx}` on
repo, `**/*.ts` on the others). The arms, each on a fresh copy of the
fixture (`cp -r`: every directory written moments before):

  fine      /var/tmp (ext4 here, Linux 6.13+: a directory looked at gets a
            fine time for its next change)
  coarse    /tmp on ramfs in a mount namespace (tests/coarse/run.sh): the
            kernel's coarse clock, a 4 ms tick here, as on Linux 6.1 ext4
  exFAT     coarse, times cut to 10 ms (tests/coarse/coarse.c preloaded)
  vfat      coarse, times cut to 2 s

Two sequences per arm, each directory count read from `--stats`:

  after a copy   the tree just copied; `trawl --cache` (the first walk, which
                 writes the cache), then `trawl check` at once, again at
                 once, after 3 s, and once more: what a configure right
                 after a checkout, and the builds after it, read again
  one new file   a file created in one directory the query reads (the tree
                 settled); `trawl check` (reads that directory), then at
                 once again, after 3 s, and once more: an edit, then builds

Counts, not times — but they depend on how long each step took against the
racy window, so each arm runs N rounds (default 3) and a cell shows the
range. Nothing is asserted.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
QUERIES = {"repo": "**/*.{ts,tsx}", "flat20k": "**/*.ts", "wide": "**/*.ts"}
GRAINS = {"coarse": None, "exFAT": "10000000", "vfat": "2000000000"}
ONE_FILE_DIR = {"repo": "src", "flat20k": "d000", "wide": "w0000"}


def opened(err):
    m = re.search(r"directories opened:? (\d+)", err)
    if not m:
        sys.exit("racy_cost: no count in: %s" % err)
    return int(m.group(1))


def trawl(env, *args):
    p = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    if p.returncode not in (0, 1):
        sys.exit("racy_cost: %s: exit %d\n%s" % (" ".join(args), p.returncode, p.stderr.decode()))
    return opened(p.stderr.decode())


def arm(build, fixtures, shape, base, grain):
    """The two sequences on a copy of SHAPE under BASE; GRAIN cuts times."""
    exe = os.path.join(build, "plugins", "cli", "trawl")
    env = dict(os.environ)
    if grain:
        env["LD_PRELOAD"] = os.path.join(build, "tests", "coarse", "libtrawl-coarse.so")
        env["TRAWL_COARSE_GRAN_NS"] = grain
    work = tempfile.mkdtemp(dir=base, prefix="racy-cost-")
    try:
        tree = os.path.join(work, shape)
        cache = os.path.join(work, "c.cache")
        subprocess.run(["cp", "-r", os.path.join(fixtures, shape), tree], check=True)
        def check():
            return trawl(env, exe, "check", "--stats", "--cache", cache)
        row = {"first walk": trawl(env, exe, "-C", tree, "--cache", cache, "--stats",
                                   QUERIES[shape])}
        row["copy: check"] = check()
        row["copy: again"] = check()
        time.sleep(3)
        row["copy: 3 s later"] = check()
        row["copy: once more"] = check()
        with open(os.path.join(tree, ONE_FILE_DIR[shape], "new.ts"), "w"):
            pass
        row["new file: check"] = check()
        row["new file: again"] = check()
        time.sleep(3)
        row["new file: 3 s later"] = check()
        row["new file: once more"] = check()
        return row
    finally:
        shutil.rmtree(work, ignore_errors=True)


def rounds(n, build, fixtures, shape, base, grain):
    """ARM's counts over N rounds: column -> [count per round]."""
    out = {}
    for _ in range(n):
        for col, count in arm(build, fixtures, shape, base, grain).items():
            out.setdefault(col, []).append(count)
    return out


def cell(counts):
    lo, hi = min(counts), max(counts)
    return "%d" % lo if lo == hi else "%d–%d" % (lo, hi)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fixtures", default=os.path.join(HERE, "fixtures"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("shapes", nargs="*", default=["repo"])
    a = ap.parse_args(argv[1:])
    fixtures, build = os.path.abspath(a.fixtures), os.path.abspath(a.build)
    if a.inside:  # the ramfs arms, in run.sh's namespace
        rows = {"%s %s" % (s, g): rounds(a.rounds, build, fixtures, s, "/tmp", grain)
                for s in a.shapes for g, grain in GRAINS.items()}
        print(json.dumps(rows))
        return 0
    for s in a.shapes:
        if not os.path.isdir(os.path.join(fixtures, s)):
            sys.exit("racy_cost: no %s under %s (bench/fixtures.py)" % (s, fixtures))
    rows = {"%s fine" % s: rounds(a.rounds, build, fixtures, s, "/var/tmp", None)
            for s in a.shapes}
    p = subprocess.run([os.path.join(ROOT, "tests", "coarse", "run.sh"), sys.executable,
                        os.path.abspath(__file__), "--inside", "--rounds", str(a.rounds),
                        "--fixtures", fixtures, "--build", build] + a.shapes,
                       stdout=subprocess.PIPE, check=True)
    rows.update(json.loads(p.stdout))
    cols = list(next(iter(rows.values())).keys())
    print("| shape, times | " + " | ".join(cols) + " |")
    print("|---|" + "--:|" * len(cols))
    for s in a.shapes:
        for g in ["fine"] + list(GRAINS):
            r = rows["%s %s" % (s, g)]
            print("| %s, %s | " % (s, g) + " | ".join(cell(r[c]) for c in cols) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
