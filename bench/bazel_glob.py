#!/usr/bin/env python3
"""Native glob() against trawl_glob() in real Bazel: the `repo` fixture, or a
tree of packages (a small generated one, or any checkout), cold, warm, and
the edit loop.

usage: bench/bazel_glob.py TRAWL_EXE [--tree repo|small|PATH] [--runs N]
           [--workdir DIR] [--arms A,B,...] [--lanes L,...] [--package-depth D]
           [--edit-dir REL] [--warmup N]

--tree repo (the default): the `repo` fixture (bench/fixtures.py: 2,600
sources under src/ and packages/, 51,000 files in a gitignored
node_modules/) is copied into WORKDIR/ws and made a Bazel workspace that
sets trawl up as docs/bazel.md says (the given trawl, the tools/bazel
wrapper). The top BUILD file is one of:

  empty          nothing (what Bazel costs without any glob)
  index          only loads glob.bzl, so index.bzl (trawl's fixed cost)
  native         glob(["**/*.ts", "**/*.tsx"])                      7,400 paths
  native-scoped  glob(["{src,packages}/**/*.ts", ...]) as 4 patterns 2,600 paths
  trawl          trawl_glob(["**/*.ts", "**/*.tsx"])                 7,400 paths
  trawl-gi       trawl_glob(["**/*.ts", "**/*.tsx"], gitignore = True) 2,600 paths

Each arm is `bazel query 'labels(srcs, //:srcs)'` (through /usr/bin/bazel
and the wrapper, as a user runs it), measured two ways:

  cold  --batch: a new Bazel each time (the repository rule of @trawl_index
        runs each time too; its walk is answered from the cache).
  warm  one server for all runs; before each run the BUILD file gets a new
        comment, so the package is loaded again while everything Bazel
        caches (native's directory listings and globs, trawl's index.bzl)
        stays warm.

Before timing, every arm's answer is checked: trawl equals native, trawl-gi
equals native-scoped.

--tree small (a generated tree: 40 packages of C sources, 700 files, in
the shape of zstd's) or --tree PATH (a directory, or a git directory whose
HEAD is taken: a checkout of zstd or CMake): one workspace per arm, each a
git work tree (the tree's .gitignore files apply), with a package at the
top and at every directory down to --package-depth (default 2; hidden
ones not), each BUILD with two filegroups, srcs (**/*.c, *.cc, *.cxx, *.h)
and all (**), made by:

  native     glob()
  trawl      trawl_glob()
  trawl-gi   trawl_glob(..., gitignore = True)

(the native workspace has an empty WORKSPACE file, as before trawl, and a
tools/bazel that runs the real binary, so that all three list the same
files). Each is `bazel query
'labels(srcs, //...)'`, every label of every package. Lanes:

  cold        --batch, nothing changed
  edit-warm   one server per arm; each round adds a file to --edit-dir
              (default: the directory holding most files), renames it, then
              removes it, and each of the three is one query per arm; after
              --warmup rounds (default 5) not measured: a new server's JVM
              compiles as it goes, and its first rounds are 2x slower, by an
              amount that differs between arms (a user's server is warm)
  edit-batch  the same with --batch

The answers of every query are compared: trawl's with native's, trawl-gi's
with native's less what `git check-ignore` says git ignores (and .git).

Runs are interleaved (each round runs every arm once, in a rotating order);
the tables give the median and the ratio to native (or to the arm it
replaces), in tree mode the median of each round's ratio, the median of
each round's difference between them (paired: what one round's load did
to both), and CPU seconds (the client and what it
waited for, plus what the server used meanwhile). Prints Markdown for
docs/benchmarks.md.
"""
import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(HERE)

ARMS = {
    "empty": "",
    "index": "[]",
    "native": 'glob(["**/*.ts", "**/*.tsx"])',
    "native-scoped": 'glob(["src/**/*.ts", "src/**/*.tsx", "packages/**/*.ts", "packages/**/*.tsx"])',
    "trawl": 'trawl_glob(["**/*.ts", "**/*.tsx"])',
    "trawl-gi": 'trawl_glob(["**/*.ts", "**/*.tsx"], gitignore = True)',
}
SAME = [("trawl", "native"), ("trawl-gi", "native-scoped")]


def build_file(arm, n):
    head = "# run %d\n" % n
    if arm == "index" or arm.startswith("trawl"):
        head += 'load("@trawl//bazel:glob.bzl", "trawl_glob")\n'
    if not ARMS[arm]:
        return head + 'filegroup(name = "srcs")\n'
    return head + 'filegroup(name = "srcs", srcs = %s)\n' % ARMS[arm]


class Bench:
    def __init__(self, workdir, trawl):
        self.ws = os.path.join(workdir, "ws")
        self.ob = os.path.join(workdir, "ob")
        self.trawl = trawl
        self.n = 0

    def setup(self):
        subprocess.run([sys.executable, os.path.join(HERE, "fixtures.py"), "--only", "repo"],
                       check=True, stdout=subprocess.DEVNULL)
        src = os.path.join(HERE, "fixtures", "repo")
        if os.path.exists(self.ws):
            self.shutdown()
            shutil.rmtree(os.path.dirname(self.ws))
        os.makedirs(os.path.dirname(self.ws))
        subprocess.run(["cp", "-a", src, self.ws], check=True)
        with open(os.path.join(self.ws, "WORKSPACE"), "w") as f:
            f.write('local_repository(name = "trawl", path = %r)\n'
                    'load("@trawl//bazel:repositories.bzl", "trawl_repositories")\n'
                    'trawl_repositories(trawl = %r)\n' % (CHECKOUT, self.trawl))
        os.makedirs(os.path.join(self.ws, "tools"))
        os.symlink(os.path.join(CHECKOUT, "bazel", "tools_bazel"),
                   os.path.join(self.ws, "tools", "bazel"))

    def query(self, arm, batch):
        self.n += 1
        with open(os.path.join(self.ws, "BUILD"), "w") as f:
            f.write(build_file(arm, self.n))
        cmd = ["bazel", "--output_base=" + self.ob] + (["--batch"] if batch else []) + [
            "query", "labels(srcs, //:srcs)"]
        t0 = time.monotonic()
        p = subprocess.run(cmd, cwd=self.ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        dt = time.monotonic() - t0
        if p.returncode != 0:
            sys.stderr.write(p.stderr.decode("latin-1")[-3000:])
            raise SystemExit("bazel query failed for arm %s" % arm)
        return dt, sorted(p.stdout.split(b"\n"))

    def shutdown(self):
        if os.path.isdir(self.ob) and os.path.isdir(self.ws):
            subprocess.run(["bazel", "--output_base=" + self.ob, "shutdown"], cwd=self.ws,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def repo_main(args):
    args.arms = args.arms or ",".join(ARMS)
    run = [a for a in ARMS if a in args.arms.split(",")]
    unknown = set(args.arms.split(",")) - set(ARMS)
    if unknown or not run:
        sys.exit("--arms: unknown %s (the arms: %s)" % (", ".join(sorted(unknown)) or "none given",
                                                       ", ".join(ARMS)))
    b = Bench(os.path.abspath(args.workdir), os.path.abspath(args.trawl))
    b.setup()

    # The answers first (also warms the page cache and compiles the indexer).
    answers = {arm: b.query(arm, True)[1] for arm in run}
    for a, ref in SAME:
        if a in answers and ref in answers and answers[a] != answers[ref]:
            raise SystemExit("%s and %s answer differently (%d and %d paths)" % (
                a, ref, len(answers[a]) - 1, len(answers[ref]) - 1))
    counts = {arm: len([x for x in answers[arm] if x]) for arm in run}

    times = {mode: {arm: [] for arm in run} for mode in ("cold", "warm")}
    arms = list(run)
    for mode in ("cold", "warm"):
        batch = mode == "cold"
        if not batch:
            for arm in arms:  # start the server, load everything once
                b.query(arm, False)
        for r in range(args.runs):
            order = arms[r % len(arms):] + arms[:r % len(arms)]
            for arm in order:
                times[mode][arm].append(b.query(arm, batch)[0])
        if not batch:
            b.shutdown()

    med = {m: {a: statistics.median(t) for a, t in times[m].items()} for m in times}
    out = []
    out.append("| arm | paths | cold (`--batch`) median s | vs | warm (server) median s | vs |")
    out.append("|---|---|---|---|---|---|")
    vs = {a: ref for a, ref in SAME if a in run and ref in run}
    for arm in run:
        row = ["`%s`" % arm, str(counts[arm])]
        for m in ("cold", "warm"):
            row.append("%.3f" % med[m][arm])
            row.append("%.2f× %s" % (med[m][arm] / med[m][vs[arm]], vs[arm]) if arm in vs else "")
        out.append("| " + " | ".join(row) + " |")
    if "empty" in run:
        out.append("")
        out.append("Above the empty BUILD (the glob's own cost), median s: " + "; ".join(
            "%s cold %.3f, warm %.3f" % (a, med["cold"][a] - med["cold"]["empty"],
                                         med["warm"][a] - med["warm"]["empty"])
            for a in run if a != "empty"))
    out.append("")
    out.append("Median of the rounds' differences (each round ran every arm once, back to back), s: " +
               "; ".join("%s %s − %s %+.3f" % (m, a, vs[a], statistics.median(
                   x - y for x, y in zip(times[m][a], times[m][vs[a]])))
                         for m in ("cold", "warm") for a in vs))
    out.append("")
    out.append("Every run (s): " + "; ".join(
        "%s %s %s" % (m, a, " ".join("%.2f" % x for x in times[m][a]))
        for m in times for a in run))
    print("\n".join(out))
    return 0



# ---- a tree of packages, and the edit loop ---------------------------------

TREE_ARMS = {"native": "glob", "trawl": "trawl_glob", "trawl-gi": "trawl_glob"}
TREE_LANES = ["cold", "edit-warm", "edit-batch"]
PATTERNS = [("srcs", ["**/*.c", "**/*.cc", "**/*.cxx", "**/*.h"]), ("all", ["**"])]
QUERY = "labels(srcs, //...)"


def small_tree(dst):
    """40 packages of C sources in the shape of zstd's lib/, programs/,
    tests/, contrib/: 2 to 4 levels, 700 files, a .gitignore."""
    rng = random.Random(32)
    os.makedirs(dst)
    with open(os.path.join(dst, ".gitignore"), "w") as f:
        f.write("*.o\n")
    n = 0
    for top in ["lib", "programs", "tests", "contrib", "examples", "doc", "build"]:
        for sub in range(rng.randrange(3, 9)):
            for deeper in ([""] + ["d%d" % k for k in range(rng.randrange(0, 3))]):
                d = os.path.join(dst, top, "m%d" % sub, deeper)
                os.makedirs(d, exist_ok=True)
                for k in range(rng.randrange(2, 12)):
                    if n == 700:
                        return
                    ext = rng.choice([".c", ".c", ".h", ".md", ".txt", ""])
                    open(os.path.join(d, "f%d%s" % (k, ext)), "w").close()
                    n += 1


def tree_source(tree, workdir):
    """The tree's files in WORKDIR/src (made once)."""
    src = os.path.join(workdir, "src")
    if os.path.isdir(src):
        return src
    if tree == "small":
        small_tree(src)
    elif os.path.isfile(os.path.join(tree, "HEAD")) and os.path.isdir(os.path.join(tree, "objects")):
        os.makedirs(src)
        archive = subprocess.run(["git", "--git-dir=" + tree, "archive", "HEAD"],
                                 stdout=subprocess.PIPE, check=True).stdout
        subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
    else:
        subprocess.run(["cp", "-a", tree, src], check=True)
    return src


def packages_of(src, depth):
    out = [""]
    for dirpath, dirnames, _ in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        if rel != "." and rel.count("/") < depth:
            out.append(rel)
        if rel != "." and rel.count("/") + 1 >= depth:
            dirnames[:] = []
    return out


def starlark(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def server_cpu(ob):
    """CPU seconds the Bazel server of output base OB has used (with the
    children it waited for), or 0 when none runs."""
    try:
        with open(os.path.join(ob, "server", "server.pid.txt")) as f:
            pid = f.read().strip()
        with open("/proc/%s/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


class TreeArm:
    def __init__(self, workdir, arm, src, trawl, depth):
        self.arm = arm
        self.ws = os.path.join(workdir, arm, "ws")
        self.ob = os.path.join(workdir, arm, "ob")
        self.shutdown()
        if os.path.exists(os.path.join(workdir, arm)):
            subprocess.run(["chmod", "-R", "u+w", os.path.join(workdir, arm)])
            shutil.rmtree(os.path.join(workdir, arm))
        os.makedirs(os.path.dirname(self.ws))
        subprocess.run(["cp", "-a", src, self.ws], check=True)
        subprocess.run(["git", "init", "-q", self.ws], check=True)
        fn = TREE_ARMS[arm]
        with open(os.path.join(self.ws, "WORKSPACE"), "w") as f:
            # native: the workspace as it was before trawl (nothing of trawl
            # loaded, nothing fetched).
            if fn != "glob":
                f.write('local_repository(name = "trawl", path = %s)\n'
                        'load("@trawl//bazel:repositories.bzl", "trawl_repositories")\n'
                        'trawl_repositories(trawl = %s)\n' % (starlark(CHECKOUT), starlark(trawl)))
        gi = ", gitignore = True" if arm == "trawl-gi" else ""
        self.packages = packages_of(self.ws, depth)
        for pkg in self.packages:
            body = 'load("@trawl//bazel:glob.bzl", "trawl_glob")\n' if fn != "glob" else ""
            for name, pats in PATTERNS:
                body += 'filegroup(name = "%s", srcs = %s([%s]%s))\n' % (
                    name, fn, ", ".join(starlark(x) for x in pats), gi)
            with open(os.path.join(self.ws, pkg, "BUILD.bazel"), "w") as f:
                f.write(body)
        os.makedirs(os.path.join(self.ws, "tools"))
        if fn == "glob":
            with open(os.path.join(self.ws, "tools", "bazel"), "w") as f:
                f.write('#!/bin/sh\nexec "$BAZEL_REAL" "$@"\n')
            os.chmod(os.path.join(self.ws, "tools", "bazel"), 0o755)
        else:
            os.symlink(os.path.join(CHECKOUT, "bazel", "tools_bazel"),
                       os.path.join(self.ws, "tools", "bazel"))

    def query(self, batch):
        """(wall s, CPU s, sorted answer). CPU: the client and every process
        it waited for (in --batch, Bazel itself), and in server mode what
        the server used meanwhile (with the processes it waited for: the
        repository rule's)."""
        cmd = ["bazel", "--output_base=" + self.ob] + (["--batch"] if batch else []) + [
            "query", QUERY]
        server = 0.0 if batch else server_cpu(self.ob)
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        children = ru.ru_utime + ru.ru_stime
        t0 = time.monotonic()
        p = subprocess.run(cmd, cwd=self.ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wall = time.monotonic() - t0
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = ru.ru_utime + ru.ru_stime - children
        if not batch:
            cpu += server_cpu(self.ob) - server
        if p.returncode != 0:
            sys.stderr.write(p.stderr.decode("latin-1")[-3000:])
            raise SystemExit("bazel query failed for arm %s" % self.arm)
        return wall, cpu, sorted(p.stdout.split(b"\n"))

    def shutdown(self):
        if os.path.isdir(self.ob) and os.path.isdir(self.ws):
            subprocess.run(["bazel", "--output_base=" + self.ob, "shutdown"], cwd=self.ws,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def busiest_dir(src, packages):
    """The directory holding the most files (the edit goes there)."""
    best, most = "", -1
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        if len(filenames) > most:
            best, most = os.path.relpath(dirpath, src), len(filenames)
    return "" if best == "." else best


def tree_main(args):
    workdir = os.path.abspath(args.workdir)
    os.makedirs(workdir, exist_ok=True)
    src = tree_source(args.tree if args.tree == "small" else os.path.abspath(args.tree), workdir)
    arms = [a for a in TREE_ARMS if a in (args.arms or ",".join(TREE_ARMS)).split(",")]
    lanes = [l for l in TREE_LANES if l in (args.lanes or ",".join(TREE_LANES)).split(",")]
    if "native" not in arms or len(arms) < 2 or not lanes:
        sys.exit("--arms: native and at least one other (%s); --lanes: of %s" % (
            ", ".join(TREE_ARMS), ", ".join(TREE_LANES)))
    w = {a: TreeArm(workdir, a, src, os.path.abspath(args.trawl), args.package_depth) for a in arms}
    edit_dir = args.edit_dir if args.edit_dir is not None else busiest_dir(src, w["native"].packages)

    # The answers first (also compiles the indexer and warms the page cache):
    # trawl's must be native's; trawl-gi's native's less what git ignores,
    # as `git check-ignore` says (asked once, of native's labels).
    first = {a: w[a].query(True)[2] for a in arms}
    n_labels = len([x for x in first["native"] if x])
    ignored = set()
    if "trawl-gi" in arms:
        paths = [x.decode("latin-1").replace("//", "", 1).replace(":", "/", 1).lstrip("/")
                 for x in first["native"] if x]
        p = subprocess.run(["git", "-C", w["native"].ws, "check-ignore", "--no-index", "-z", "--stdin"],
                           input="\0".join(paths).encode("latin-1"), stdout=subprocess.PIPE)
        hits = set(p.stdout.decode("latin-1").split("\0"))
        ignored = {x for x, q in zip([x for x in first["native"] if x], paths)
                   if q in hits or q.startswith(".git/") or "/.git/" in q}
    want = {"trawl": first["native"], "trawl-gi": [x for x in first["native"] if x not in ignored]}
    compared = [a for a in arms if a != "native"]
    for a in compared:
        if first[a] != want[a]:
            sys.exit("%s answers differently from what it should (%d labels, %d expected)" % (
                a, len(first[a]) - 1, len(want[a]) - 1))
    print("bazel_glob: %s, %s: %d packages, %d labels (git ignores %d); edits in %s; load %s" % (
        time.strftime("%Y-%m-%d %H:%M"), args.tree, len(w["native"].packages), n_labels,
        len(ignored), edit_dir or "the top", " ".join("%.1f" % x for x in os.getloadavg())))

    ops = [("add", lambda ws: open(os.path.join(ws, edit_dir, "zz_trawl_bench.c"), "w").close()),
           ("rename", lambda ws: os.rename(os.path.join(ws, edit_dir, "zz_trawl_bench.c"),
                                           os.path.join(ws, edit_dir, "zz_trawl_bench2.c"))),
           ("remove", lambda ws: os.remove(os.path.join(ws, edit_dir, "zz_trawl_bench2.c")))]
    times = {}  # (lane, arm) -> [(wall, cpu)]

    def measure(lane, batch, rounds, edit, record=True):
        for r in range(rounds):
            order = arms[r % len(arms):] + arms[:r % len(arms)]
            for op, apply in (ops if edit else [("", None)]):
                if apply:
                    for a in arms:
                        apply(w[a].ws)
                got = {}
                for a in order:
                    wall, cpu, got[a] = w[a].query(batch)
                    if record:
                        times.setdefault((lane + (":" + op if op else ""), a), []).append((wall, cpu))
                for a in compared:
                    if got[a] != (got["native"] if a == "trawl" else
                                  [x for x in got["native"] if x not in ignored]):
                        sys.exit("%s %s: %s answers differently" % (lane, op, a))
            sys.stderr.write("%s: %s %d of %d, load %.1f\n" % (
                lane, "round" if record else "warm-up round", r + 1, rounds, os.getloadavg()[0]))

    for lane in lanes:
        batch = lane != "edit-warm"
        if not batch:
            for a in arms:  # the servers started, everything loaded once
                w[a].query(False)
            measure(lane, batch, args.warmup, True, record=False)
        measure(lane, batch, args.runs, lane.startswith("edit"))
        if not batch:
            for a in arms:
                w[a].shutdown()

    out = ["| lane | arm | median s | vs native | per round | paired − native, s | CPU s | CPU vs native |",
           "|---|---|--:|---|---|--:|--:|---|"]
    def order(key):
        lane, _, op = key.partition(":")
        return TREE_LANES.index(lane), [o for o, _ in ops].index(op) if op else 0
    for key in sorted({k for k, _ in times}, key=order):
        nat = times[(key, "native")]
        for a in arms:
            t = times[(key, a)]
            med = statistics.median(x for x, _ in t)
            cpu = statistics.median(c for _, c in t)
            row = ["`%s`" % key, a, "%.3f" % med, "", "", "", "%.2f" % cpu, ""]
            if a != "native":
                nmed = statistics.median(x for x, _ in nat)
                ncpu = statistics.median(c for _, c in nat)
                row[3] = "%.2f×" % (med / nmed)
                # The median of each round's ratio: both arms ran within
                # seconds of each other, so a load that moves between
                # rounds moves both.
                row[4] = "%.2f×" % statistics.median(x / y for (x, _), (y, _) in zip(t, nat))
                row[5] = "%+.3f" % statistics.median(x - y for (x, _), (y, _) in zip(t, nat))
                row[7] = "%.2f×" % (cpu / ncpu) if ncpu else ""
            out.append("| " + " | ".join(row) + " |")
    out.append("")
    out.append("Every run (wall s): " + "; ".join(
        "%s %s %s" % (k, a, " ".join("%.2f" % x for x, _ in t)) for (k, a), t in sorted(times.items())))
    print("\n".join(out))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trawl")
    ap.add_argument("--tree", default="repo",
                    help="repo (the fixture), small (generated), or a directory or git directory")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--arms", default=None,
                    help="the arms to run, comma-separated (default: all); e.g. "
                         "native-scoped,trawl-gi for more rounds of one pair in the same time")
    ap.add_argument("--lanes", default=None, help="tree mode: of " + ", ".join(TREE_LANES))
    ap.add_argument("--package-depth", type=int, default=2)
    ap.add_argument("--edit-dir", default=None)
    ap.add_argument("--warmup", type=int, default=5,
                    help="edit-warm: rounds run first and not measured (default 5)")
    args = ap.parse_args()
    if args.workdir is None:
        # build/bench-bazel, or build/bench-bazel-NAME for another tree (the
        # directory's name; a git directory named "repo": its parent's).
        tree = os.path.abspath(args.tree)
        name = args.tree if args.tree in ("repo", "small") else os.path.basename(
            os.path.dirname(tree) if os.path.basename(tree) == "repo" else tree)
        args.workdir = os.path.join(CHECKOUT, "build", "bench-bazel" +
                                    ("" if args.tree == "repo" else "-" + name))
    if args.tree == "repo":
        return repo_main(args)
    return tree_main(args)


if __name__ == "__main__":
    sys.exit(main())
