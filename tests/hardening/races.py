#!/usr/bin/env python3
"""Builds racing builds on one cache (docs/reliability.md).

    races.py TRAWL [--rounds N] [--seed S]

One git work tree (ignore files at several depths), one cache, one stamp.
Each round changes the tree (a file added or removed, a directory added or
removed, a .gitignore edited, or nothing) and then, in turn:

- two checks: two `trawl check --touch STAMP --cache C` at once;
- the Bazel pattern: `trawl batch --cache C --bump STAMP` (the index rule)
  racing `trawl check --bump STAMP --cache C` (another output base's
  wrapper), on the same cache and the same stamp;
- a kill: one of those commands, or a cached walk, killed (SIGKILL) at a
  random moment of its run, a second command of the kind running beside it
  in half the rounds.

After each, with nothing running, the invariants:
- no torn file: no command warned that the cache is truncated or corrupt;
- never a stale "unchanged": when the tree's answers differ from what the
  build last took, the build is told — the --touch stamp moved past the
  moment the build last looked, or the --bump stamp holds the digest of
  the tree's answers, after one more check as the next build would run;
- no lost update: that check's cache then answers what a fresh walk does,
  and a check after it exits 0.
Each kind runs every round; the counts are printed.
"""
import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hardlib import TORN, check, env_base, finish, git_tree, standard_files  # noqa: E402


def torn(err):
    return any(t in err for t in TORN)


class World:
    def __init__(self, trawl, top, rng):
        self.trawl, self.top, self.rng = trawl, top, rng
        self.env = env_base(os.path.join(top, "home"))
        self.tree = os.path.join(top, "tree")
        files = standard_files()
        for d in range(30):
            for f in range(20):
                files["bulk/d%02d/f%02d.c" % (d, f)] = ""
        git_tree(self.tree, self.env, files)
        self.state = os.path.join(top, "state")
        os.makedirs(self.state)
        self.cache = os.path.join(self.state, "cache")
        self.stamp = os.path.join(self.state, "stamp")
        self.queries = os.path.join(top, "q.jsonl")
        with open(self.queries, "w") as f:
            f.write('{"id": "c", "root": "%s", "include": ["**/*.c"]}\n' % self.tree)
            f.write('{"id": "h", "root": "%s/src", "include": ["**/*.h"], "type": ["f", "d"]}\n'
                    % self.tree)
        self.n = 0

    def cmd(self, args):
        return [self.trawl] + args

    def run(self, args):
        p = subprocess.run(self.cmd(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=self.env)
        return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")

    def digest(self):
        """The digest of the tree's answers now (no cache)."""
        out = os.path.join(self.top, "digest")
        self.run(["batch", "--bump", out, self.queries])
        return open(out).read()

    def change(self):
        """One change of the tree, or none; its name."""
        rng, t = self.rng, self.tree
        self.n += 1
        kind = rng.choice(("add file", "remove file", "add directory", "remove directory",
                           "edit .gitignore", "nothing"))
        if kind == "add file":
            d = os.path.join(t, "bulk", "d%02d" % rng.randrange(30))
            open(os.path.join(d, "new%d.c" % self.n), "w").close()
        elif kind == "remove file":
            d = os.path.join(t, "bulk", "d%02d" % rng.randrange(30))
            names = sorted(os.listdir(d))
            if names:
                os.unlink(os.path.join(d, rng.choice(names)))
        elif kind == "add directory":
            d = os.path.join(t, "src", "a", "n%d" % self.n)
            os.makedirs(d)
            open(os.path.join(d, "x.c"), "w").close()
        elif kind == "remove directory":
            cands = [x for x in os.listdir(os.path.join(t, "src", "a")) if x.startswith("n")]
            if cands:
                shutil.rmtree(os.path.join(t, "src", "a", rng.choice(cands)))
        elif kind == "edit .gitignore":
            p = os.path.join(t, "src", "a", ".gitignore")
            with open(p, "a") as f:
                f.write("f%d.c\n" % rng.randrange(3))
        return kind


def together(world, cmds, kill_after=None):
    """Run CMDS at once; with KILL_AFTER (seconds), SIGKILL the first after
    that long. Returns [(exit, stderr)]."""
    procs = []
    for i, c in enumerate(cmds):
        procs.append(subprocess.Popen(world.cmd(c), stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, env=world.env))
        # At once means before the others start: starting a second process
        # takes longer than a check, so killing after it missed the first.
        if i == 0 and kill_after == 0:
            procs[0].send_signal(signal.SIGKILL)
    if kill_after:
        time.sleep(kill_after)
        procs[0].send_signal(signal.SIGKILL)
    out = []
    for p in procs:
        err = p.stderr.read().decode("utf-8", "replace")
        out.append((p.wait(), err))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trawl")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    top = tempfile.mkdtemp(prefix="trawl-races-")
    counts = {}

    def count(key):
        counts[key] = counts.get(key, 0) + 1

    try:
        w = World(os.path.abspath(a.trawl), top, rng)
        # The build's first look: a cache, a stamp, answers taken.
        w.run(["batch", "--cache", w.cache, "--bump", w.stamp, w.queries])
        # How long a check takes here, to spread the kills over a run.
        t0 = time.monotonic()
        w.run(["-C", w.tree, "--cache", w.cache + ".timing", "**"])
        span = max(time.monotonic() - t0, 0.005)
        for r in range(a.rounds):
            for kind in ("two checks", "batch racing check", "a kill"):
                change = w.change()
                count("change: " + change)
                fresh = w.digest()
                # The build last took the cache's answers; the --touch stamp
                # is older than its last look.
                past = time.time() - 100
                if not os.path.exists(w.stamp):
                    open(w.stamp, "w").close()
                os.utime(w.stamp, (past, past))
                with open(w.stamp) as f:
                    before = f.read()
                where = "round %d, %s after %s" % (r, kind, change)
                if kind == "two checks":
                    res = together(w, [["check", "--touch", w.stamp, "--cache", w.cache]] * 2)
                    mode = "touch"
                elif kind == "batch racing check":
                    res = together(w, [["batch", "--cache", w.cache, "--bump", w.stamp, w.queries],
                                       ["check", "--bump", w.stamp, "--cache", w.cache]])
                    mode = "bump"
                else:
                    victim = rng.choice((["check", "--touch", w.stamp, "--cache", w.cache],
                                         ["check", "--bump", w.stamp, "--cache", w.cache],
                                         ["batch", "--cache", w.cache, "--bump", w.stamp,
                                          w.queries],
                                         ["-C", w.tree, "--cache", w.cache + ".walk",
                                          "**/*.c"]))
                    cmds = [victim] + ([victim] if rng.random() < 0.5 else [])
                    # Round 0 kills at once, so that every run kills one
                    # midway; the others at a random moment. A loaded
                    # machine can still let the first finish before the
                    # signal: round 0 then tries again, up to 50 times.
                    res = together(w, cmds, kill_after=0 if r == 0 else rng.uniform(0, span * 1.5))
                    tries = 1
                    tried = list(res)
                    while r == 0 and res[0][0] != -signal.SIGKILL and tries < 50:
                        res = together(w, cmds, kill_after=0)
                        tried += res
                        tries += 1
                    mode = "bump" if "--bump" in victim else "touch" if "--touch" in victim \
                        else "walk"
                    where += " (%s killed)" % victim[0]
                    count("kill: %s, %s" % (victim[0] if victim[0] != "-C" else "walk",
                                            "killed" if res[0][0] == -signal.SIGKILL
                                            else "finished first"))
                count(kind)
                ran = tried if kind == "a kill" else res
                bad = [e for rc, e in ran if torn(e) or rc not in (0, 1, -signal.SIGKILL)]
                if bad:
                    check("%s: no torn file, no failure" % where, False, repr(bad))
                # The next build: its check, as the build runs it.
                if mode == "bump":
                    rc, _, err = w.run(["check", "--bump", w.stamp, "--cache", w.cache])
                    told = open(w.stamp).read() == fresh
                    count("bump: %s" % ("rewritten" if before != fresh else "same answers"))
                elif mode == "touch":
                    rc, _, err = w.run(["check", "--touch", w.stamp, "--cache", w.cache])
                    moved = os.stat(w.stamp).st_mtime > past + 1
                    # Told when the stamp moved, or when nothing had to be told:
                    # the answers the build took are BEFORE's digest (the
                    # stamp's content, from the last round's batch --bump).
                    told = moved or before == fresh
                    count("touch: %s" % ("moved" if moved else "not moved"))
                else:
                    # A walk's answer is what it prints: a killed one is run
                    # again; its cache (its own: other queries) must then
                    # answer as a fresh walk.
                    rc, out, err = w.run(["-C", w.tree, "--cache", w.cache + ".walk", "**/*.c"])
                    told = out == w.run(["-C", w.tree, "**/*.c"])[1]
                    rc = 0 if rc == 0 else rc
                    w.run(["check", "--bump", w.stamp, "--cache", w.cache])
                if torn(err) or rc not in (0, 1):
                    check("%s: the next check completes, no torn file" % where, False, err)
                if not told:
                    check("%s: the change reached the build (never a stale 'unchanged')" % where,
                          False, "stamp %r fresh %r (%s)" % (before, fresh, mode))
                # No lost update: the cache is the tree's, and says so.
                rc2, _, err2 = w.run(["check", "--cache", w.cache])
                _, out3, _ = w.run(["batch", "--cache", w.cache, "--bump", w.stamp, w.queries])
                _, out4, _ = w.run(["batch", w.queries])
                if rc2 != 0 or out3 != out4 or torn(err2):
                    check("%s: then the cache answers what a fresh walk does" % where, False,
                          "check exit %d %s" % (rc2, err2))
                count("steps")
        for k in sorted(counts):
            print("[counts] %s: %d" % (k, counts[k]))
        for kind in ("two checks", "batch racing check", "a kill"):
            check("[covered] %s: %d rounds" % (kind, counts.get(kind, 0)), counts.get(kind, 0) > 0)
        check("[covered] a command killed midway", any(
            k.startswith("kill:") and k.endswith("killed") for k in counts))
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
