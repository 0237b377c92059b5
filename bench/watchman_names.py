#!/usr/bin/env python3
"""`trawl check` with watchman when its answer names only paths no walk records.

usage: bench/watchman_names.py [--rounds N] FIXTURE TRAWL...

FIXTURE is a tree (bench/fixtures.py; `big`: 1,000,000 files in 38,383
directories), copied into a temporary directory and given a `.git` (git init:
watchman makes its sync cookies there). A private watchman daemon
(tests/cache/watchman_cache.py starts and stops it; never the user's) watches
it. Each TRAWL binary writes its own cache of `-I '**'` (twice: nothing
racy), then `trawl check --cache` with TRAWL_WATCHMAN=auto is measured in two
states: the tree unchanged, and after `touch .git/x` (watchman then names a
path in .git, as after any git command; no answer changes). Before timing,
each check must exit 0 and its --stats say watchman was used. Per binary and
state: CPU (user + system) by `perf stat -r N` (task-clock, the mean and its
spread as perf prints it), and instructions by `valgrind --tool=callgrind`
(one run: steadier than time on a shared machine). Each cache's size is
printed with its header's index length and directory entries' length (the
latter 0 before format 10, where the entries are in the index).
"""
import argparse
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "cache"))
import watchman_cache  # noqa: E402


def check(trawl, cache, env, stats=False):
    args = [trawl, "check", "--cache", cache] + (["--stats"] if stats else [])
    return subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def perf_ms(trawl, cache, env, rounds):
    p = subprocess.run(["perf", "stat", "-r", str(rounds), "-e", "task-clock", "-x,", trawl, "check",
                        "--cache", cache], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    for line in p.stderr.splitlines():
        f = line.split(",")
        if len(f) > 3 and f[2].startswith("task-clock"):
            return "%.2f ms (± %s)" % (float(f[0]), f[3])
    raise SystemExit("perf: " + p.stderr)


def instructions(trawl, cache, env, tmp):
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + os.path.join(tmp, "cg.out"),
                        trawl, "check", "--cache", cache], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if m is None:
        raise SystemExit("callgrind: " + p.stderr)
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("fixture")
    ap.add_argument("trawl", nargs="+")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="trawl-wmnames-")
    d = os.path.join(tmp, "daemon")
    os.mkdir(d)
    try:
        tree = os.path.join(tmp, "tree")
        subprocess.run(["cp", "-a", a.fixture, tree], check=True)
        subprocess.run(["git", "init", "-q", tree], check=True)
        watchman_cache.start(d, as_nobody=False)
        sock = os.path.join(d, "sock")
        subprocess.run(["watchman", "--sockname=" + sock, "watch-project", tree], stdout=subprocess.DEVNULL,
                       check=True)
        env = dict({k: v for k, v in os.environ.items() if k != "WATCHMAN_SOCK"}, TRAWL_WATCHMAN="auto",
                   TRAWL_WATCHMAN_SOCK=sock)
        caches = []
        for i, trawl in enumerate(a.trawl):
            cache = os.path.join(tmp, "c%d.cache" % i)
            for _ in range(2):
                subprocess.run([trawl, "-C", tree, "--cache", cache, "-I", "**"], env=env,
                               stdout=subprocess.DEVNULL, check=True)
            caches.append(cache)
            with open(cache, "rb") as f:
                head = f.read(56)
            print("%-40s cache %s bytes: format %d, index %s, entries %s" %
                  (trawl, format(os.path.getsize(cache), ","), struct.unpack_from("<I", head, 8)[0],
                   format(struct.unpack_from("<Q", head, 40)[0], ","),
                   format(struct.unpack_from("<Q", head, 48)[0], ",")), flush=True)
        for state in ("unchanged", "touch .git/x"):
            if state != "unchanged":
                open(os.path.join(tree, ".git", "x"), "w").close()
            for trawl, cache in zip(a.trawl, caches):
                p = check(trawl, cache, env, stats=True)
                err = p.stderr.decode(errors="replace")
                if p.returncode != 0 or "watchman used" not in err:
                    raise SystemExit("%s, %s: exit %d: %s" % (trawl, state, p.returncode, err))
                said = re.search(r"watchman used: .*", err).group(0)
                print("%-14s %-40s %s; %s instructions; %s" %
                      (state, trawl, perf_ms(trawl, cache, env, a.rounds),
                       format(instructions(trawl, cache, env, tmp), ","), said), flush=True)
        return 0
    finally:
        watchman_cache.stop(d, signal.SIGTERM)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
