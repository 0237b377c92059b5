#!/usr/bin/env python3
"""A concurrent mutator during parallel walks, cached runs and trawl check
(docs/reliability.md).

    mutator.py TRAWL [--rounds N] [--seed S]

Two git work trees (the top at the root; the top two levels above it), with
.gitignore files at depths 0 to 3, info/exclude and an excludes file, about
450 directories (more than the walker's floor for helper threads) and 2,000
files. Part of each tree ("hot") belongs to a mutator thread that creates,
deletes, renames and moves files and directories, swaps a directory for a
link to it and a link back for a directory — every class in each round, in
a shuffled schedule, over and over — while a command runs; the rest
("cold") it never touches. Each round, in one of the trees in turn:

- a fresh walk first (the mutator stopped): what existed at the start;
- under the mutator: `trawl -j4 '**'` (sorted), `trawl -j4 --unsorted
  '**'`, `trawl --cache C '**'` and `trawl check --cache C`. Each must exit
  0 (1 for a check that saw a change) with nothing on stderr, print every
  path once (sorted when asked), print only paths that existed at some
  moment of the round (there at the start, or made by the mutator) — but
  below a directory that was moved away while the command ran, whose
  entries a walk reads through the descriptor it opened at the old path
  and reports under that path, as every walker that holds descriptors
  does (counted, docs/reliability.md) — and print every file that was
  there at the start and that no operation of the round touched, nor any
  directory above it;
- the mutator stopped: `trawl check --cache C`, then `trawl --cache C`,
  must equal a fresh walk — a cache written while directories changed
  under it never trusts one that changed while it was read. A check that
  says "unchanged" (exit 0) when the cache's answer is not the fresh one
  is a stale "unchanged".

Prints per class how many operations ran and how many ran while a command
was running, the rounds where helper threads took part, and the checks'
outcomes; fails unless every class ran during a command in every run.
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hardlib import check, env_base, finish, git_tree  # noqa: E402

CLASSES = ("create file", "delete file", "rename file", "move file", "create directory",
           "delete directory", "rename directory", "move directory", "directory to link",
           "link to directory")


class Tree:
    """A work tree and the mutator's model of its hot part: files, links
    and directories as paths relative to the walk's root."""

    def __init__(self, top, root, env, rng):
        self.top, self.root, self.rng = top, root, rng
        files = {".gitignore": "*.o\n/cold0/c0/\n"}
        rel = os.path.relpath(root, top)
        pre = "" if rel == "." else rel + "/"
        for c in range(12):
            files[pre + "cold%d/.gitignore" % c] = "*.tmp\n"
            for s in range(25):
                for f in range(4):
                    files[pre + "cold%d/c%d/f%d.c" % (c, s, f)] = ""
                if s % 5 == 0:
                    files[pre + "cold%d/c%d/.gitignore" % (c, s)] = "f3.c\n"
        self.dirs, self.files, self.links = set(), set(), {}
        for h in range(8):
            files[pre + "hot%d/.gitignore" % h] = "*.skip\n"
            self.dirs.add("hot%d" % h)
            for s in range(12):
                self.dirs.add("hot%d/h%d" % (h, s))
                for f in range(4):
                    name = "hot%d/h%d/f%d.%s" % (h, s, f, "c" if f < 3 else "o")
                    files[pre + name] = ""
                    self.files.add(name)
                if s == 0:
                    files[pre + "hot%d/h%d/sub/.gitignore" % (h, s)] = "x*\n"
                    self.dirs.add("hot%d/h%d/sub" % (h, s))
        git_tree(top, env, files)
        self.n = 0

    def p(self, rel):
        return os.path.join(self.root, rel)

    def fresh_name(self, stem):
        self.n += 1
        return "%s%d" % (stem, self.n)

    def below(self, d):
        """Every path of the model at or below directory D."""
        pre = d + "/"
        return {x for x in self.files | set(self.links) | self.dirs if x == d or x.startswith(pre)}

    def movable_dirs(self):
        return [d for d in self.dirs if d.count("/") >= 1]

    def op(self, kind):
        """Do one operation of KIND; returns (paths gone, paths made), or
        None when nothing of that kind can be done now."""
        rng = self.rng
        dirs = sorted(self.dirs)
        if kind == "create file":
            d = rng.choice(dirs)
            f = d + "/" + self.fresh_name("n") + rng.choice((".c", ".h", ".o", ""))
            open(self.p(f), "w").close()
            self.files.add(f)
            return set(), {f}
        if kind in ("delete file", "rename file", "move file"):
            if not self.files:
                return None
            f = rng.choice(sorted(self.files))
            if kind == "delete file":
                os.unlink(self.p(f))
                self.files.discard(f)
                return {f}, set()
            d = os.path.dirname(f) if kind == "rename file" else rng.choice(dirs)
            g = d + "/" + self.fresh_name("r") + ".c"
            os.rename(self.p(f), self.p(g))
            self.files.discard(f)
            self.files.add(g)
            return {f}, {g}
        if kind == "create directory":
            d = rng.choice(dirs) + "/" + self.fresh_name("d")
            os.mkdir(self.p(d))
            made = {d}
            for i in range(3):
                f = "%s/m%d.c" % (d, i)
                open(self.p(f), "w").close()
                made.add(f)
                self.files.add(f)
            self.dirs.add(d)
            return set(), made
        if kind in ("delete directory", "rename directory", "move directory",
                    "directory to link"):
            cands = self.movable_dirs()
            if not cands:
                return None
            d = rng.choice(sorted(cands))
            gone = self.below(d)
            if kind == "delete directory":
                shutil.rmtree(self.p(d))
                self.forget(gone)
                return gone, set()
            if kind == "rename directory":
                e = os.path.dirname(d) + "/" + self.fresh_name("rd")
            elif kind == "move directory":
                targets = [x for x in dirs if x != d and not x.startswith(d + "/")]
                e = rng.choice(targets) + "/" + self.fresh_name("md")
            else:
                e = d + "." + self.fresh_name("old")
            os.rename(self.p(d), self.p(e))
            made = self.move(gone, d, e)
            if kind == "directory to link":
                # A link where the directory was: to it, to a cold
                # directory, or out of the tree.
                target = rng.choice((os.path.basename(e), "../" * (d.count("/") + 1) + "cold1",
                                     "/usr/include"))
                os.symlink(target, self.p(d))
                self.links[d] = target
                made.add(d)
            return gone, made
        if kind == "link to directory":
            if not self.links:
                return None
            l = rng.choice(sorted(self.links))
            os.unlink(self.p(l))
            del self.links[l]
            os.mkdir(self.p(l))
            f = l + "/back.c"
            open(self.p(f), "w").close()
            self.dirs.add(l)
            self.files.add(f)
            return {l}, {l, f}
        raise ValueError(kind)

    def forget(self, paths):
        self.files -= paths
        self.dirs -= paths
        for x in paths:
            self.links.pop(x, None)

    def move(self, paths, d, e):
        moved = set()
        for x in paths:
            y = e + x[len(d):]
            moved.add(y)
            if x in self.files:
                self.files.discard(x)
                self.files.add(y)
            if x in self.dirs:
                self.dirs.discard(x)
                self.dirs.add(y)
            if x in self.links:
                self.links[y] = self.links.pop(x)
        return moved


class Mutator(threading.Thread):
    """Operations of every class, shuffled, one after another, until told
    to stop; each logged with its class, what it removed and made."""

    def __init__(self, tree, rng):
        super().__init__(daemon=True)
        self.tree, self.rng = tree, rng
        self.stop = threading.Event()
        self.log = []
        self.busy = threading.Event()  # set while a command runs

    def run(self):
        while not self.stop.is_set():
            schedule = list(CLASSES) + [self.rng.choice(CLASSES) for _ in range(6)]
            self.rng.shuffle(schedule)
            for kind in schedule:
                if self.stop.is_set():
                    break
                during = self.busy.is_set()
                r = self.tree.op(kind)
                if r is not None:
                    self.log.append((kind, during and self.busy.is_set(), r[0], r[1]))


def lines(b):
    return [x for x in b.decode("utf-8", "surrogateescape").split("\n") if x]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trawl")
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    trawl = os.path.abspath(a.trawl)
    rng = random.Random(a.seed)
    base = tempfile.mkdtemp(prefix="trawl-mutator-")
    counts = {k: [0, 0] for k in CLASSES}
    stats = {"rounds": 0, "helpers": 0, "checks under mutation": [0, 0],
             "after: check unchanged": 0, "after: check changed": 0, "steps": 0,
             "below a moved directory": 0}
    try:
        env = env_base(os.path.join(base, "home"))
        trees = [Tree(os.path.join(base, "top-at-root"), os.path.join(base, "top-at-root"),
                      env, rng),
                 Tree(os.path.join(base, "top-above"), os.path.join(base, "top-above", "a", "b"),
                      env, rng)]
        settings = ("the top at the root", "the top two levels above")
        for r in range(a.rounds):
            t = trees[r % 2]
            where = "round %d (%s)" % (r, settings[r % 2])
            cache = os.path.join(base, "cache-%d" % (r % 2))

            def t_run(args, **kw):
                return subprocess.run([trawl] + args, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, env=env, **kw)

            pre = set(lines(t_run(["-C", t.root, "**"]).stdout))
            m = Mutator(t, rng)
            m.start()
            time.sleep(0.002)
            results = {}
            for name, args in (("walk -j4", ["-j4", "--stats"]),
                               ("walk -j4 --unsorted", ["-j4", "--unsorted"]),
                               ("cached walk", ["--cache", cache]),
                               ("check", None)):
                m.busy.set()
                if args is None:
                    p = t_run(["check", "--cache", cache])
                else:
                    p = t_run(["-C", t.root] + args + ["**"])
                m.busy.clear()
                results[name] = p
            m.stop.set()
            m.join()
            gone, made, moved = set(), set(), set()
            for kind, during, g, mk in m.log:
                counts[kind][0] += 1
                counts[kind][1] += during
                gone |= g
                made |= mk
                if kind in ("rename directory", "move directory", "directory to link"):
                    moved |= {min(g, key=len)}  # the directory itself

            def touched(path):
                # The path, or a directory above it, gone or moved.
                parts = path.split("/")
                return any("/".join(parts[:i]) in gone for i in range(1, len(parts) + 1))

            def below_moved(path):
                # A directory above it moved away while the command ran:
                # the walk read it through its descriptor, and reports
                # what it held under the path it opened it at.
                parts = path.split("/")
                return any("/".join(parts[:i]) in moved for i in range(1, len(parts)))

            existed = pre | made
            stable = {x for x in pre if not touched(x)}
            for name, p in results.items():
                err = p.stderr.decode(errors="replace")
                if name == "walk -j4":
                    if "threads used:       1\n" not in err:
                        stats["helpers"] += 1
                    err = "".join(l + "\n" for l in err.splitlines() if not re.match(
                        r"trawl: (directories|entries|results|threads|milliseconds)", l))
                if name == "check":
                    stats["checks under mutation"][p.returncode == 1] += 1
                    ok = p.returncode in (0, 1) and err == ""
                    check_ok = check("%s: %s under the mutator: exit %d, nothing on stderr" % (
                        where, name, p.returncode), ok, err)
                    stats["steps"] += 1
                    continue
                got = lines(p.stdout)
                ok = p.returncode == 0 and err == ""
                if not ok:
                    check("%s: %s under the mutator: exit 0, nothing on stderr" % (where, name),
                          False, "exit %d %r" % (p.returncode, err))
                    continue
                dup = len(got) != len(set(got))
                unsorted = "unsorted" not in name and got != sorted(got, key=os.fsencode)
                ghosts = [x for x in got if x not in existed and not below_moved(x)]
                stats["below a moved directory"] += sum(
                    1 for x in got if x not in existed and below_moved(x))
                missed = [x for x in stable if x not in set(got)]
                stats["steps"] += 1
                if dup or unsorted or ghosts or missed:
                    check("%s: %s under the mutator: each path once%s, none that never "
                          "existed, none that stayed missing" % (
                              where, name, ", sorted" if "unsorted" not in name else ""),
                          False, "dup %s unsorted %s ghosts %r missed %r" % (
                              dup, unsorted, ghosts[:5], missed[:5]))
            # The mutator stopped: the cache must not trust what changed.
            fresh = t_run(["-C", t.root, "**"]).stdout
            c = t_run(["check", "--cache", cache])
            stats["after: check " + ("unchanged" if c.returncode == 0 else "changed")] += 1
            cached = t_run(["-C", t.root, "--cache", cache, "**"])
            again = t_run(["check", "--cache", cache])
            ok = c.returncode in (0, 1) and cached.stdout == fresh and again.returncode == 0
            if not ok:
                check("%s: after the mutator, the check (exit %d), the cached walk and another "
                      "check (exit %d) agree with a fresh walk" % (
                          where, c.returncode, again.returncode), False,
                      "check says %r; cached differs from fresh: %s" % (
                          c.stdout[:300], cached.stdout != fresh))
            stats["steps"] += 3
            stats["rounds"] += 1
    finally:
        shutil.rmtree(base, ignore_errors=True)
    for k in CLASSES:
        print("[classes] %-18s %6d operations, %6d while a command ran" % (k, *counts[k]))
    print("[rounds] %d rounds, %d steps compared; helper threads in %d of the sorted -j4 walks; "
          "checks under the mutator: %d unchanged, %d changed; after it: %d unchanged, "
          "%d changed" % (stats["rounds"], stats["steps"], stats["helpers"],
                          stats["checks under mutation"][0], stats["checks under mutation"][1],
                          stats["after: check unchanged"], stats["after: check changed"]))
    print("[rounds] paths reported below a directory moved while the walk was in it, "
          "which never existed as printed: %d" % stats["below a moved directory"])
    for k in CLASSES:
        check("[covered] %s ran while a command ran" % k, counts[k][1] > 0)
    check("[covered] helper threads took part", stats["helpers"] > 0)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
