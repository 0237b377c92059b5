#!/usr/bin/env python3
"""Every point where trawl writes a cache or a stamp, killed (SIGKILL, as
`kill -9`) or failed (ENOSPC, EIO), one at a time (docs/reliability.md).

    kill_points.py TRAWL SHIM [--actions kill,ENOSPC,EIO] [--rounds N]

SHIM is tests/hardening/faults.c built as a library: preloaded, it counts
the calls that create, write, close, rename, touch or unlink a file in the
directory that holds the caches and stamps, and kills the process at (or
fails) the N-th. A run with no fault first counts the points; then each
point is tried with each action, from the same state: caches and stamps
written for the tree as it was (T0), the tree since changed (T1), a build
that has consumed T0's answers. After the faulted run, the build does what a
build does next — runs the step again, to its end, or for the batch another
build's check of the same cache and stamp (Bazel's output bases share them)
— and then:

- no torn file: no run warns that a cache is truncated or corrupt;
- never a stale "unchanged": the change reaches the build — the --touch
  stamp is newer than the build's last look, the --bump stamp holds T1's
  digest, the answers printed are T1's — and a check after that exits 0;
- no lost update: the cache then answers what a fresh walk does;
- a failed write is what docs/cli.md says: the results printed are right,
  one warning, the documented exit status.

The scenarios: `trawl --cache`, `trawl batch --cache --bump`, `trawl check`
with --touch, with --bump, and with --checked --depfile --touch (the Meson
and CMake plugins' edge). Every scenario and action must have at least one
point; the counts are printed. --rounds repeats the whole (the points are
the same each time; a round catches what timing changes).
"""
import argparse
import os
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hardlib import TORN, check, env_base, finish, git_tree, run, standard_files  # noqa: E402

OPS = "create,write,close,rename,utime,unlink"
PAST = time.time() - 3600


class World:
    def __init__(self, trawl, shim, top):
        self.trawl, self.shim, self.top = trawl, shim, top
        self.tree = os.path.join(top, "tree")
        self.state = os.path.join(top, "state")
        self.snap = os.path.join(top, "snap")
        self.scratch = os.path.join(top, "scratch")
        self.env = env_base(os.path.join(top, "home"))
        git_tree(self.tree, self.env, standard_files())
        self.queries = os.path.join(top, "q.jsonl")
        with open(self.queries, "w") as f:
            f.write('{"id": "c", "root": "%s", "include": ["**/*.c"]}\n' % self.tree)
            f.write('{"id": "all", "root": "%s/src", "include": ["**"], "type": ["f", "d"]}\n'
                    % self.tree)
        os.makedirs(self.state)
        os.makedirs(self.scratch)
        time.sleep(0.05)  # past the racy window: the records are trusted
        self.t(["-C", self.tree, "--cache", self.p("walk.cache"), "**/*.c"])
        self.t(["batch", "--cache", self.p("batch.cache"), "--bump", self.p("bump"),
                self.queries])
        for name in ("touch", "bump-check"):
            shutil.copy(self.p("bump"), self.p(name))
        shutil.copytree(self.state, self.snap)
        self.digest0 = open(self.p("bump")).read()
        # T1: a file added, one removed, a new directory with a file.
        open(os.path.join(self.tree, "src/a/new.c"), "w").close()
        os.unlink(os.path.join(self.tree, "src/b/f1.c"))
        os.makedirs(os.path.join(self.tree, "lib/sub/new"))
        open(os.path.join(self.tree, "lib/sub/new/n.c"), "w").close()
        time.sleep(0.05)
        self.fresh_walk = self.t(["-C", self.tree, "**/*.c"])[1]
        self.fresh_batch = self.t(["batch", self.queries])[1]
        self.t(["batch", "--bump", os.path.join(self.scratch, "digest"), self.queries])
        self.digest1 = open(os.path.join(self.scratch, "digest")).read()
        check("setup: T1 answers differently from T0", self.digest0 != self.digest1)

    def p(self, name):
        return os.path.join(self.state, name)

    def t(self, args, fault=None):
        env = dict(self.env)
        if fault:
            env.update(LD_PRELOAD=self.shim, TRAWL_FAULT_OPS=OPS, TRAWL_FAULT_PATH=self.state + "/",
                       **fault)
        return run([self.trawl] + args, env)

    def restore(self):
        shutil.rmtree(self.state)
        shutil.copytree(self.snap, self.state)
        os.utime(self.p("touch"), (PAST, PAST))

    def cache_answers(self, cache):
        """What CACHE answers now, and whether reading it warned."""
        if cache == "walk.cache":
            rc, out, err = self.t(["-C", self.tree, "--cache", self.p(cache), "**/*.c"])
            return out == self.fresh_walk, err
        rc, out, err = self.t(["batch", "--cache", self.p(cache), self.queries])
        return out == self.fresh_batch, err


def torn(err):
    return any(t in err for t in TORN)


# Each scenario: the command, the exit statuses a failed write may give
# (docs/cli.md), and what the build does next and must then see.
SCENARIOS = {
    "walk --cache": {
        "cmd": lambda w: ["-C", w.tree, "--cache", w.p("walk.cache"), "**/*.c"],
        "statuses": {0},
        "cache": "walk.cache",
    },
    "batch --cache --bump": {
        "cmd": lambda w: ["batch", "--cache", w.p("batch.cache"), "--bump", w.p("bump"),
                          w.queries],
        "statuses": {0, 3},
        "cache": "batch.cache",
        # What runs next may be another build's check of the same cache and
        # stamp (Bazel's output bases share them), not this batch again.
        "next": lambda w: ["check", "--bump", w.p("bump"), "--cache", w.p("batch.cache")],
    },
    "check --touch": {
        "cmd": lambda w: ["check", "--touch", w.p("touch"), "--cache", w.p("batch.cache")],
        "statuses": {1, 3},
        "cache": "batch.cache",
    },
    "check --bump": {
        "cmd": lambda w: ["check", "--bump", w.p("bump-check"), "--cache", w.p("batch.cache")],
        "statuses": {1, 3},
        "cache": "batch.cache",
    },
    "check --checked --depfile --touch": {
        "cmd": lambda w: ["check", "--checked", w.p("mark"), "--depfile", w.p("dep"), "--touch",
                          w.p("touch"), "--cache", w.p("walk.cache"), "--cache",
                          w.p("batch.cache")],
        "statuses": {1, 3},
        "cache": "batch.cache",
    },
}


def text(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return None


def told(w, name, out):
    """Has the change reached the build, after the faulted run and the next
    one to its end? OUT: what the next run printed."""
    if name == "walk --cache":
        return out == w.fresh_walk
    if name == "batch --cache --bump":
        return text(w.p("bump")) == w.digest1
    if name == "check --bump":
        return text(w.p("bump-check")) == w.digest1
    return os.path.exists(w.p("touch")) and os.stat(w.p("touch")).st_mtime > PAST + 1


def try_point(w, name, spec, action, k, counts):
    w.restore()
    fault = {"TRAWL_FAULT_AT": str(k), "TRAWL_FAULT_ACTION": action}
    rc, out, err = w.t(spec["cmd"](w), fault)
    where = "%s, %s at point %d" % (name, action, k)
    if action == "kill":
        if not check(where + ": killed there", rc == -signal.SIGKILL, "exit %d" % rc):
            return
    else:
        ok = rc in spec["statuses"] and not torn(err)
        lines = [ln for ln in err.splitlines() if ln]
        ok = ok and all(ln.startswith("trawl") for ln in lines)
        if name in ("walk --cache",):
            ok = ok and out == w.fresh_walk and len(lines) <= 1
        if name == "batch --cache --bump":
            ok = ok and out == w.fresh_batch
        if not check(where + ": documented status, right answers, no torn file", ok,
                     "exit %d, stderr %r" % (rc, err)):
            return
    # The build's next step, to its end (a failed or killed step runs
    # again; a check that said "changed" made it run the step that writes
    # the answers).
    rc2, out2, err2 = w.t(spec.get("next", spec["cmd"])(w))
    ok = not torn(err2) and rc2 in ({0, 1} if "next" in spec or name.startswith("check")
                                    else {0})
    check(where + ": the next run completes, no torn file", ok, "exit %d, %r" % (rc2, err2))
    check(where + ": the change reached the build (never a stale 'unchanged')",
          told(w, name, out2))
    if name.startswith("check") or "next" in spec:
        rc3, _, err3 = w.t(["check", "--cache", w.p(spec["cache"])])
        check(where + ": then a check finds nothing", rc3 == 0 and not torn(err3),
              "exit %d, %r" % (rc3, err3))
    same, err4 = w.cache_answers(spec["cache"])
    check(where + ": the cache answers what a fresh walk does", same and not torn(err4), err4)
    left = [f for f in os.listdir(w.state) if "." in f and len(f.rsplit(".", 1)[1]) == 6
            and f.rsplit(".", 1)[0] in ("walk.cache", "batch.cache", "bump", "bump-check", "dep")]
    counts["left"] = counts.get("left", 0) + len(left)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trawl")
    ap.add_argument("shim")
    ap.add_argument("--actions", default="kill,ENOSPC,EIO")
    ap.add_argument("--rounds", type=int, default=1)
    a = ap.parse_args()
    top = tempfile.mkdtemp(prefix="trawl-kill-")
    try:
        w = World(os.path.abspath(a.trawl), os.path.abspath(a.shim), top)
        totals = {}
        for r in range(a.rounds):
            for name, spec in SCENARIOS.items():
                w.restore()
                log = os.path.join(top, "points.log")
                if os.path.exists(log):
                    os.unlink(log)
                rc, _, err = w.t(spec["cmd"](w), {"TRAWL_FAULT_AT": "0", "TRAWL_FAULT_LOG": log})
                points = open(log).read().splitlines() if os.path.exists(log) else []
                check("%s: counted %d points (%s)" % (
                    name, len(points), " ".join(sorted({p.split()[1] for p in points}))),
                    len(points) > 0 and not torn(err))
                for action in a.actions.split(","):
                    counts = {}
                    for k in range(1, len(points) + 1):
                        try_point(w, name, spec, action, k, counts)
                    key = (name, action)
                    totals[key] = totals.get(key, 0) + len(points)
                    print("[points] %s, %s: %d tried, %d temporary files left behind" % (
                        name, action, len(points), counts.get("left", 0)))
        for (name, action), n in sorted(totals.items()):
            check("[covered] %s, %s: %d points" % (name, action, n), n > 0)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
