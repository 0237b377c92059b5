#!/usr/bin/env python3
"""Re-validating an unchanged tree through the result cache, against walking it.

usage: bench/cache_peers.py [--fixtures DIR] [--rounds N] [--warmup N] [SHAPE...]

SHAPE: repo (default), flat20k, big (bench/fixtures.py). The question on
repo is git's: every file not ignored, tracked or not (`trawl -H '**'` with
the root .gitignore, = `git ls-files -co --exclude-standard`); on flat20k and
big, every file (`trawl -I '**'`). Arms, each one process per run:

  floor                     bench/floor_walk --print (repo: skipping node_modules
                            and .git): the system-call floor of one walk
  trawl, full walk          trawl -j1, no cache
  trawl --cache, unchanged  trawl -j1 --cache FILE, the cache warm and the tree
                            unchanged since: stats instead of reads
  trawl check, unchanged    trawl check --cache FILE: the build-time hook
  git ls-files -co ...      (repo) git's own listing of the same files
  git status -uall, u.c.    (repo) `git status --porcelain -uall` with
                            core.untrackedCache=true, warm: git's re-validation
                            by directory stats (it prints nothing here: every
                            file is tracked)
  git ls-files              (repo) the index alone, no walk

repo is copied to a temporary directory first (git's untracked cache is
written into the copy's index). Every arm that lists files must print the same
set as the full trawl walk, or the script stops; the cache arms must report
(with --stats) that they read no directory. Arms interleaved, order rotated
each round; the ratio to the full trawl walk is taken per round, then the
median. Only ratios mean anything on a shared machine.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import walk_peers  # noqa: E402

TRAWL = os.path.join(ROOT, "build", "plugins", "cli", "trawl")


class Arm:
    def __init__(self, label, argv, lists=True):
        self.label = label
        self.argv = argv
        self.lists = lists
        self.wall = []
        self.cpu = []


def stat_ms(err, pattern):
    import re
    m = re.search(pattern, err)
    if not m:
        sys.exit("cache_peers: no time in: %s" % err.decode(errors="replace"))
    return float(m.group(1))


def paths(out):
    return set(p[2:] if p.startswith(b"./") else p for p in out.split(b"\n") if p)


def shape_arms(shape, root, floor, cache):
    git = shutil.which("git")
    if shape == "repo":
        query = ["-H", "**"]
        arms = [Arm("floor, serial", [floor, "--print", "--skip", "node_modules", "--skip", ".git", "."])]
    else:
        query = ["-I", "**"]
        arms = [Arm("floor, serial", [floor, "--print", "."])]
    arms += [
        Arm("trawl -j1, full walk", [TRAWL, "-j1"] + query),
        Arm("trawl -j1 --cache, unchanged", [TRAWL, "-j1", "--cache", cache] + query),
        Arm("trawl check --cache, unchanged", [TRAWL, "check", "--cache", cache], lists=False),
    ]
    if shape == "repo" and git:
        arms += [
            Arm("git ls-files -co --exclude-standard", [git, "ls-files", "-co", "--exclude-standard"]),
            Arm("git status --porcelain -uall (untracked cache)",
                [git, "status", "--porcelain", "-uall"], lists=False),
            Arm("git ls-files (index only)", [git, "ls-files"]),
        ]
    return arms, query


def prepare(shape, src, tmp):
    if shape != "repo":
        return src
    root = os.path.join(tmp, "repo")
    subprocess.run(["cp", "-a", src, root], check=True)
    git = ["git", "-C", root]
    subprocess.run(git + ["config", "core.untrackedCache", "true"], check=True)
    subprocess.run(git + ["update-index", "--untracked-cache"], check=True,
                   stdout=subprocess.DEVNULL)
    for _ in range(2):  # the first status fills the untracked cache, the second settles it
        subprocess.run(git + ["status", "--porcelain", "-uall"], check=True, stdout=subprocess.DEVNULL)
    return root


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shapes", nargs="*", default=["repo"])
    ap.add_argument("--fixtures", default=os.path.join(HERE, "fixtures"))
    ap.add_argument("--floor", default=os.path.join(ROOT, "build", "bench", "floor_walk"))
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--warmup", type=int, default=2)
    a = ap.parse_args()
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    print("- Date: %s; trawl commit %s; %d timed rounds after %d warm-up, arms interleaved" % (
        subprocess.run(["date", "-u"], capture_output=True, text=True).stdout.strip(), commit,
        a.rounds, a.warmup))
    for shape in a.shapes:
        src = os.path.join(a.fixtures, shape)
        if not os.path.isdir(src):
            sys.exit("cache_peers: no %s (python3 bench/fixtures.py %s%s)" % (
                src, "--big " if shape == "big" else "", a.fixtures))
        with tempfile.TemporaryDirectory(prefix="trawl-cache-bench-") as tmp:
            root = prepare(shape, src, tmp)
            cache = os.path.join(tmp, "bench.cache")
            os.chdir(root)
            arms, query = shape_arms(shape, root, a.floor, cache)
            # Warm the cache, then check every arm once.
            _, _, code, _, err = walk_peers.run_once([TRAWL, "-j1", "--cache", cache] + query, False)
            if code != 0:
                sys.exit("cache_peers: %s" % err.decode(errors="replace"))
            reference = None
            for arm in arms:
                _, _, code, out, err = walk_peers.run_once(arm.argv, True)
                if code != 0:
                    sys.exit("cache_peers: %s exited %d: %s" % (arm.label, code, err[:300]))
                if arm.lists:
                    got = paths(out)
                    if reference is None and "trawl" in arm.label:
                        reference = got
                    if reference is not None and got != reference:
                        sys.exit("cache_peers: %s lists %d paths, trawl %d" % (
                            arm.label, len(got), len(reference)))
            _, _, _, _, err = walk_peers.run_once(
                [TRAWL, "-j1", "--cache", cache, "--stats"] + query, True)
            if b"directories opened: 0" not in err:
                sys.exit("cache_peers: the warm cache still read directories:\n" + err.decode())
            for r in range(a.warmup + a.rounds):
                shift = r % len(arms)
                for arm in arms[shift:] + arms[:shift]:
                    wall, cpu, code, _, err = walk_peers.run_once(arm.argv, False)
                    if code != 0:
                        sys.exit("cache_peers: %s failed: %s" % (arm.label, err[:300]))
                    if r >= a.warmup:
                        arm.wall.append(wall)
                        arm.cpu.append(cpu)
            full = arms[1]
            print("\n#### %s — %s files (`trawl %s`)\n" % (shape, format(len(reference), ","),
                                                          " ".join(query)))
            print("| arm | wall ms, median (min–max) | × full trawl walk | CPU ms |")
            print("|---|--:|--:|--:|")
            for arm in arms:
                ratio = statistics.median(x / y for x, y in zip(arm.wall, full.wall))
                print("| %s | %s (%s–%s) | %.2f | %s |" % (
                    arm.label, walk_peers.ms(statistics.median(arm.wall)),
                    walk_peers.ms(min(arm.wall)), walk_peers.ms(max(arm.wall)), ratio,
                    walk_peers.ms(statistics.median(arm.cpu))))
            # The same two questions timed inside the process (--stats): the
            # work a re-check does against a walk's, without the process
            # start-up (about 6 ms here) that both pay.
            inside = {"walk": [], "check": []}
            for r in range(a.rounds):
                _, _, _, _, err = walk_peers.run_once([TRAWL, "-j1", "--stats"] + query, True)
                inside["walk"].append(stat_ms(err, rb"milliseconds:\s+([\d.]+)"))
                _, _, _, _, err = walk_peers.run_once([TRAWL, "check", "--stats", "--cache", cache], True)
                inside["check"].append(stat_ms(err, rb", ([\d.]+) ms"))
            w, c = statistics.median(inside["walk"]), statistics.median(inside["check"])
            print("\nInside the process (`--stats`), median of %d: full walk %.2f ms, `trawl check` "
                  "%.2f ms: the re-check %.1f× faster." % (a.rounds, w, c, w / c))
            os.chdir(ROOT)


if __name__ == "__main__":
    main()
