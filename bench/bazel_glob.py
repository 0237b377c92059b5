#!/usr/bin/env python3
"""Native glob() against trawl_glob() in real Bazel, on the `repo` fixture.

usage: bench/bazel_glob.py TRAWL_EXE [--runs N] [--workdir DIR] [--arms A,B,...]

The `repo` fixture (bench/fixtures.py: 2,600 sources under src/ and
packages/, 51,000 files in a gitignored node_modules/) is copied into
WORKDIR/ws and made a Bazel workspace that sets trawl up as docs/bazel.md
says (the given trawl, the tools/bazel wrapper). The top BUILD file is one of:

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
equals native-scoped. Runs are interleaved (each round runs every arm once,
in a rotating order); the table gives the median and the ratio to the arm
it replaces, and a line the median of each round's difference between them
(paired: what one round's load did to both). Prints a Markdown section for
docs/benchmarks.md.
"""
import argparse
import os
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trawl")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workdir", default=os.path.join(CHECKOUT, "build", "bench-bazel"))
    ap.add_argument("--arms", default=",".join(ARMS),
                    help="the arms to run, comma-separated (default: all); e.g. "
                         "native-scoped,trawl-gi for more rounds of one pair in the same time")
    args = ap.parse_args()
    run = [a for a in ARMS if a in args.arms.split(",")]
    unknown = set(args.arms.split(",")) - set(ARMS)
    if unknown or not run:
        ap.error("--arms: unknown %s (the arms: %s)" % (", ".join(sorted(unknown)) or "none given",
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


if __name__ == "__main__":
    sys.exit(main())
