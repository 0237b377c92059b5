#!/usr/bin/env python3
"""`trawl check` with and without watchman, and git status with its fsmonitor hook.

usage: bench/watchman_check.py [--fixtures DIR] [--rounds N] [SHAPE...]

SHAPE: flat20k (default), big (bench/fixtures.py; big is 1,000,000 files in
38,383 directories). The tree is copied into a temporary directory and made a
git repository (every file committed, core.untrackedCache on). A private
watchman daemon (tests/cache/watchman_cache.py starts and stops it; never the
user's) watches it. Arms, one process per run, interleaved, order rotated:

  trawl check, stat path     TRAWL_WATCHMAN=off: one stat per recorded directory
  trawl check, watchman      TRAWL_WATCHMAN=auto with the private socket
  watchman client, since     `watchman -j` asked the same `since` query: what
                             spawning the client would cost before any work
  git status, fsmonitor      git status --porcelain -uall with core.fsmonitor =
                             git's fsmonitor-watchman hook, pointed at the
                             private daemon by a `watchman` first on its PATH
                             (watchman 4.9.0's client ignores WATCHMAN_SOCK)

Two questions: the tree unchanged; and one file added before each round
(every arm then sees one new file since its own last run). Each round runs
every shape (their order rotating, as the arms' does), so that a ratio
between shapes, the same arm on 1,000,000 files and on 20,000, is taken
within one run too: a table of those follows the shapes' own. Before timing,
every arm is run once and must agree: the check arms exit 0 (unchanged) or 1
with the same added path, git prints no line or that path as untracked, and
the watchman arm's --stats must say watchman was used. Before each arm,
untimed, watchman is asked for its clock with a sync, so that it has taken
in what the arm before did (git status writes in .git): otherwise the next
arm's own sync waits for it, and `big`'s watchman arm paid for git's
events (2026-12-04: 0.4 ms of a 2 ms check). Only ratios taken within one
round mean anything on a shared machine.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "cache"))
import walk_peers  # noqa: E402
import watchman_cache  # noqa: E402

TRAWL = os.path.join(ROOT, "build", "plugins", "cli", "trawl")
HOOK = "/usr/share/git-core/templates/hooks/fsmonitor-watchman.sample"


def run(argv, env, keep=True):
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        return walk_peers.run_once(argv, keep)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shapes", nargs="*", default=["flat20k"])
    ap.add_argument("--fixtures", default=os.path.join(HERE, "fixtures"))
    ap.add_argument("--rounds", type=int, default=15)
    a = ap.parse_args()
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    print("- Date: %s; trawl commit %s; watchman %s; %d timed rounds after 2 warm-up" % (
        subprocess.run(["date", "-u"], capture_output=True, text=True).stdout.strip(), commit,
        subprocess.run(["watchman", "--version"], capture_output=True, text=True).stdout.strip(),
        a.rounds))
    shapes = []
    try:
        for shape in a.shapes:
            shapes.append(setup(shape, a.fixtures))
        measure(shapes, a.rounds)
    finally:
        os.chdir(ROOT)
        for sh in shapes:
            watchman_cache.stop(sh["daemon"], signal.SIGTERM)
            shutil.rmtree(sh["tmp"], ignore_errors=True)


def setup(shape, fixtures):
    """SHAPE copied into a temporary git repository, watched by a private
    daemon of its own, with a cache per trawl arm and the four arms."""
    src = os.path.join(fixtures, shape)
    if not os.path.isdir(src):
        sys.exit("watchman_check: no %s (bench/fixtures.py)" % src)
    tmp = tempfile.mkdtemp(prefix="trawl-wm-bench-")
    d = os.path.join(tmp, "daemon")
    os.mkdir(d)
    sh = {"shape": shape, "tmp": tmp, "daemon": d, "added": 0}
    tree = os.path.join(tmp, "tree")
    sh["tree"] = tree
    subprocess.run(["cp", "-a", src, tree], check=True)
    git = ["git", "-C", tree]
    quiet = dict(stdout=subprocess.DEVNULL, check=True)
    subprocess.run(git + ["init", "-q"], **quiet)
    subprocess.run(git + ["add", "-A"], **quiet)
    subprocess.run(git + ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "t"],
                   **quiet)
    os.makedirs(os.path.join(tree, ".git", "hooks"), exist_ok=True)
    hook = os.path.join(tree, ".git", "hooks", "query-watchman")
    shutil.copy(HOOK, hook)
    os.chmod(hook, 0o755)
    subprocess.run(git + ["config", "core.untrackedCache", "true"], **quiet)
    subprocess.run(git + ["config", "core.fsmonitor", hook], **quiet)
    watchman_cache.start(d, as_nobody=False)
    sock = os.path.join(d, "sock")
    base = {k: v for k, v in os.environ.items() if k != "WATCHMAN_SOCK"}
    subprocess.run(["watchman", "--sockname=" + sock, "watch-project", tree], **quiet)
    # A cache per trawl arm: one that found a change rewrites its own.
    cache_off, cache = os.path.join(tmp, "off.cache"), os.path.join(tmp, "c.cache")
    env_wm = dict(base, TRAWL_WATCHMAN="auto", TRAWL_WATCHMAN_SOCK=sock)
    env_off = dict(base, TRAWL_WATCHMAN="off")
    # git's hook runs `watchman -j`, and watchman 4.9.0's client does not
    # read WATCHMAN_SOCK: without this it starts the user's own daemon (state
    # in /tmp/$USER-state) and leaves it running. A `watchman` first on the
    # hook's PATH points it at the private one.
    shim_dir = os.path.join(tmp, "bin")
    os.mkdir(shim_dir)
    with open(os.path.join(shim_dir, "watchman"), "w") as f:
        f.write('#!/bin/sh\nexec %s --sockname=%s "$@"\n' % (shutil.which("watchman"), sock))
    os.chmod(os.path.join(shim_dir, "watchman"), 0o755)
    env_git = dict(base, WATCHMAN_SOCK=sock, PATH=shim_dir + os.pathsep + base.get("PATH", ""))
    os.chdir(tree)
    for c, env in ((cache_off, env_off), (cache, env_wm)):
        _, _, code, _, err = run([TRAWL, "--cache", c, "-I", "**"], env, False)
        if code != 0:
            sys.exit(err.decode())
    for _ in range(3):  # git: the fsmonitor token and untracked cache settle
        run(["git", "-c", "safe.directory=*", "status", "--porcelain", "-uall"], env_git)
    clock = json.loads(subprocess.run(["watchman", "--sockname=" + sock, "clock", tree],
                                      capture_output=True, text=True).stdout)["clock"]
    query = json.dumps(["query", tree, {"since": clock, "fields": ["name"]}])
    qfile = os.path.join(tmp, "q.json")
    with open(qfile, "w") as f:
        f.write(query)
    sh["cache"], sh["env_wm"] = cache, env_wm
    sh["sock"] = sock
    sh["settle"] = json.dumps(["clock", tree, {"sync_timeout": 10000}])
    sh["arms"] = [
        ("trawl check, stat path", [TRAWL, "check", "--cache", cache_off], env_off),
        ("trawl check, watchman", [TRAWL, "check", "--cache", cache], env_wm),
        ("watchman client, since", ["sh", "-c", "exec watchman --sockname=%s -j < %s" % (sock, qfile)],
         env_git),
        ("git status, fsmonitor", ["git", "-c", "safe.directory=*", "status", "--porcelain", "-uall"],
         env_git),
    ]
    os.chdir(ROOT)
    return sh


def one_round(sh, question, r, walls, misses):
    """Every arm once on shape SH (a file added first, for that question),
    each answer checked; the walls of a timed round appended to WALLS."""
    os.chdir(sh["tree"])
    name = None
    if question != "unchanged":
        sh["added"] += 1
        added = sh["added"]
        name = "d000/added%03d.txt" % added if sh["shape"] == "flat20k" else "added%03d.txt" % added
        if not os.path.isdir(os.path.dirname(name) or "."):
            name = "added%03d.txt" % added
        open(name, "w").close()
    arms = sh["arms"]
    shift = r % len(arms)
    for label, argv, env in arms[shift:] + arms[:shift]:
        # Untimed: watchman takes in what the arm before did (git status
        # writes in .git; a file was added) before the next arm is timed, so
        # that no arm waits, in its sync, on another arm's events.
        subprocess.run(["watchman", "--sockname=" + sh["sock"], "-j"], input=sh["settle"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
        wall, _, code, out, err = run(argv, env)
        # Same answers before any timing counts.
        if label.startswith("trawl"):
            want = 0 if name is None else 1
            if code != want or (name and ("+ " + name).encode() not in out):
                sys.exit("%s: exit %d, %s %s" % (label, code, out[:200], err[:200]))
        elif label.startswith("git") and code != 0:
            sys.exit("%s: exit %d: %s" % (label, code, err[:300]))
        elif label.startswith("git"):
            # Untracked: every file added so far.
            lines = [l for l in out.split(b"\n") if l]
            if len(lines) != sh["added"] or (name and ("?? " + name).encode() not in lines):
                # Told in the table, not hidden: its time is then not comparable.
                misses[label] = misses.get(label, 0) + 1
        if r >= 2:
            walls[label].append(wall)
    if r == 0:
        _, _, _, _, err = run([TRAWL, "check", "--stats", "--cache", sh["cache"]], sh["env_wm"])
        if b"watchman used" not in err:
            sys.exit("watchman arm did not use watchman: %s" % err.decode())
    os.chdir(ROOT)


def measure(shapes, rounds):
    """Each question's rounds, every shape in each round (the order of the
    shapes and of the arms rotating): ratios between shapes are then from
    one run, as ratios between arms are."""
    labels = [label for label, _, _ in shapes[0]["arms"]]
    for question in ("unchanged", "one file added"):
        walls = {sh["shape"]: {label: [] for label in labels} for sh in shapes}
        misses = {sh["shape"]: {} for sh in shapes}
        for r in range(2 + rounds):
            k = r % len(shapes)
            for sh in shapes[k:] + shapes[:k]:
                one_round(sh, question, r, walls[sh["shape"]], misses[sh["shape"]])
        for sh in shapes:
            w_shape = walls[sh["shape"]]
            print("\n#### %s, %s\n" % (sh["shape"], question))
            print("| arm | wall ms, median (min–max) | × stat path (per round) |")
            print("|---|--:|--:|")
            m = misses[sh["shape"]]
            if m:
                print("| (git status missed the added file in %d of %d runs: not the same "
                      "answer, its time is not comparable) | | |" % (sum(m.values()), 2 + rounds))
            stat_path = w_shape[labels[0]]
            for label in labels:
                w = w_shape[label]
                ratio = statistics.median(x / y for x, y in zip(w, stat_path))
                print("| %s | %s (%s–%s) | %.2f |" % (
                    label, walk_peers.ms(statistics.median(w)), walk_peers.ms(min(w)),
                    walk_peers.ms(max(w)), ratio))
        if len(shapes) > 1:
            first = shapes[0]["shape"]
            print("\n#### %s: each shape against %s, the same arm, per round\n" % (question, first))
            print("| arm | " + " | ".join(sh["shape"] + " ÷ " + first for sh in shapes[1:]) + " |")
            print("|---|" + "--:|" * (len(shapes) - 1))
            for label in labels:
                cells = []
                for sh in shapes[1:]:
                    pairs = zip(walls[sh["shape"]][label], walls[first][label])
                    cells.append("%.2f" % statistics.median(x / y for x, y in pairs))
                print("| %s | %s |" % (label, " | ".join(cells)))

if __name__ == "__main__":
    main()
