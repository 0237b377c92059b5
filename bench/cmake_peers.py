#!/usr/bin/env python3
"""The CMake plugin against CMake's own globs: no-op builds and configures.

usage: bench/cmake_peers.py [--fixtures DIR] [--rounds N] [--configure-rounds N]
                            [--trawl EXE] [--no-make] [--noop-calls 1,10] [--watchman]
                            [SHAPE...]

SHAPE: flat20k (default; 20,000 files in 400 directories) or big (1,000,000
files, 38,383 directories), from bench/fixtures.py. The projects take their
sources from the tree with GLOB_RECURSE: 1 call (`*.ts`, 5,000 files on
flat20k), 10 calls (ten patterns, each over the whole tree), or, for the
configure, 50 calls (`f00.*` ... `f49.*`, 400 files each; on big, patterns
for one name each, a few thousand files, `utils0.c` ...). Each call
walks the whole tree either way. The lists become a custom target's SOURCES (nothing is
compiled: the build itself is empty, what is timed is the check). Arms:

  no-op build, N calls (a build right after a build, nothing changed), with
  Ninja and with Unix Makefiles (`make -s`)
    none    file(GLOB_RECURSE) without CONFIGURE_DEPENDS: nothing is checked
    cmake   file(GLOB_RECURSE ... CONFIGURE_DEPENDS): VerifyGlobs.cmake
            re-runs every glob (a `cmake -P`) on every build
    trawl   trawl_glob(... GLOB_RECURSE CONFIGURE_DEPENDS): Ninja stats the
            watched directories (the check's depfile) and runs nothing
            (on big, beyond 2,000 paths, it runs `trawl check`); make runs
            `trawl check` (the target every target depends on)
  overhead = arm - none, per round; the ratio of the overheads per round,
  then the median.

  configure with 50 calls (`cmake -S -B` into a fresh build directory, and
  again into the configured one, a re-configure)
    none    the same project, the same targets, the lists written out: what
            configuring costs without globbing
    cmake   file(GLOB_RECURSE ... CONFIGURE_DEPENDS): one walk per call
    trawl   trawl_glob(): fresh, one `trawl batch` per call and one with the
            cache at the end; re-configure, one `trawl batch` for all calls,
            from the cache

  calls per configure (--calls 10,100,1000,5000): a recursive macro that
  globs each directory once (flecs's GroupSources: `GLOB children RELATIVE
  dir dir/*`), over a generated tree of 5,000 directories of 3 files; the
  macro visits the first N directories. Re-configure of an unchanged tree,
  first configure, and (with CONFIGURE_DEPENDS) the build that picks up an
  added source; arms
    file      file(GLOB ...)                 trawl     trawl_glob(GLOB ...)
    file-cd   file(GLOB ... CONFIGURE_DEPENDS)  trawl-cd  trawl_glob(GLOB ... CONFIGURE_DEPENDS)
  and, with --callgrind, the instructions of one re-configure of each arm
  (valgrind: the same count whatever the machine's load).

Before any timing, every arm's lists are compared with file()'s (each
configure writes them out) and must be equal, and every no-op build must
say "ninja: no work to do." where it should. Arms interleaved, order
rotated every round. Only the ratios mean anything on a shared machine.
--configure-rounds 0: no configure table.

--watchman: each fixture is first copied into a directory of a git work
tree (not its top: CMake's globs enter hidden directories, and a walk of
the top would record `.git`, where watchman makes a sync cookie at every
question, so Ninja would run the check at every build) whose top is watched
by a private watchman daemon (bench/watched_tree.py: its own socket, state
file and log, stopped at the end; never the user's). The no-op builds get a
fourth arm, `trawl, watchman`: the trawl arm's build and cache (configured
with watchman, so the cache records a clock) with TRAWL_WATCHMAN=auto and
the private socket; every other arm runs with TRAWL_WATCHMAN=off, so
`trawl` is the stat path. Before timing, `trawl check --stats` of that cache
with watchman must say "watchman used". The table's extra columns: its
median and overhead, and per round, then the median, the ratios
watchman / trawl, trawl / none and watchman / none. The configure table runs
as without it.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODULE = os.path.join(ROOT, "cmake", "Trawl.cmake")
sys.path.insert(0, HERE)
import watched_tree  # noqa: E402

NOOP_PATTERNS = {
    1: ["*.ts"],
    10: ["*.ts", "*.js", "*.md", "*.txt", "f0*.ts", "f1*.js", "f2*", "*[0-4].md", "f?9.*",
         "*s"],
}


# big's names are a stem, a digit and an extension (bench/fixtures.py): a
# pattern for one stem, digit and extension (`utils0.c`) lists a few
# thousand of its million files (every glob still walks the whole tree), so
# that the lists CMake then handles stay small.
BIG_STEMS = ["utils", "helpers", "types", "core", "parse", "format", "constants", "errors",
             "stream", "options"]


def noop_patterns(shape, calls):
    if shape == "big":
        return ["%s%d.c" % (BIG_STEMS[i], i) for i in range(calls)]
    return NOOP_PATTERNS[calls]


def configure_patterns(shape):
    if shape == "big":
        return ["%s%d.c" % (BIG_STEMS[i % 10], i // 10) for i in range(50)]
    return ["f%02d.*" % i for i in range(50)]


def project_text(arm, tree, patterns, dump, lists=None):
    """CMakeLists.txt of ARM: none, cmake, trawl, or noglob (the same
    targets with the LISTS written out: what the project costs without
    globbing)."""
    lines = ["cmake_minimum_required(VERSION 3.20)", "project(bench NONE)"]
    if arm == "trawl":
        lines.append('include("%s")' % MODULE)
    lines.append('file(WRITE "%s" "")' % dump)
    if arm == "noglob":
        for n, l in enumerate(lists):
            lines.append("set(s%d [==[%s]==])" % (n, ";".join(l)))
            lines.append("add_custom_target(t%d SOURCES ${s%d})" % (n, n))
    else:
        for n, p in enumerate(patterns):
            expr = "%s/%s" % (tree, p)
            if arm == "none":
                lines.append('file(GLOB_RECURSE s%d "%s")' % (n, expr))
            elif arm == "cmake":
                lines.append('file(GLOB_RECURSE s%d CONFIGURE_DEPENDS "%s")' % (n, expr))
            else:
                lines.append('trawl_glob(s%d GLOB_RECURSE CONFIGURE_DEPENDS "%s")' % (n, expr))
            lines.append('string(REPLACE ";" "\\n" l "${s%d}")' % n)
            lines.append('file(APPEND "%s" "== %d\\n${l}\\n")' % (dump, n))
            lines.append("add_custom_target(t%d SOURCES ${s%d})" % (n, n))
    return "\n".join(lines) + "\n"


def run(args, env=None):
    t0 = time.perf_counter()
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    return time.perf_counter() - t0, p.returncode, p.stdout.decode("utf-8", "replace")


class Arm:
    def __init__(self, label, src, build, trawl):
        self.label = label
        self.src = src
        self.build = build
        self.trawl = trawl
        self.times = []
        self.env = None   # the environment of its runs (None: this process's)

    generator = "Ninja"

    def configure_args(self):
        return ["cmake", "-S", self.src, "-B", self.build, "-G", self.generator,
                "-DTRAWL_EXECUTABLE=" + self.trawl]

    def build_args(self):
        if self.generator == "Unix Makefiles":
            return ["make", "-s", "-C", self.build]
        return ["ninja", "-C", self.build]


def make_arm(tmp, name, arm, tree, patterns, trawl, lists=None):
    src = os.path.join(tmp, name)
    os.makedirs(src)
    dump = os.path.join(tmp, name + ".lists")
    with open(os.path.join(src, "CMakeLists.txt"), "w") as f:
        f.write(project_text(arm, tree, patterns, dump, lists))
    a = Arm(arm, src, os.path.join(tmp, name + "-build"), trawl)
    a.dump = dump
    return a


def same_lists(arms, what):
    ref = None
    for a in arms:
        if a.label == "noglob":
            continue
        with open(a.dump, "rb") as f:
            got = f.read()
        if ref is None:
            ref, ref_label = got, a.label
        elif got != ref:
            sys.exit("cmake_peers: %s: the %s arm's lists differ from the %s arm's"
                     % (what, a.label, ref_label))
    return sum(1 for line in ref.split(b"\n") if line and not line.startswith(b"== "))


def rounds(arms, n, step):
    for r in range(n):
        order = arms[r % len(arms):] + arms[:r % len(arms)]
        for a in order:
            step(a)


def med(xs):
    return statistics.median(xs)


def noop(shape, tree, tmp, calls, n_rounds, trawl, generator, watched=None):
    tag = "make" if generator == "Unix Makefiles" else "ninja"
    arms = [make_arm(tmp, "noop%d-%s-%s" % (calls, tag, arm), arm, tree,
                     noop_patterns(shape, calls), trawl) for arm in ("none", "cmake", "trawl")]
    for a in arms:
        a.generator = generator
        # With --watchman, trawl's cache is written with watchman's clock.
        a.env = (watched.env_watchman if a.label == "trawl" else watched.env_stat) \
            if watched else None
        _, rc, out = run(a.configure_args(), a.env)
        if rc != 0:
            sys.exit("cmake_peers: configure %s: %s" % (a.label, out[-2000:]))
        for _ in range(2):   # the first build runs the first check
            _, rc, out = run(a.build_args(), a.env)
            if rc != 0:
                sys.exit("cmake_peers: build %s: %s" % (a.label, out[-2000:]))
    files = same_lists(arms, "%s, %d calls" % (shape, calls))
    if watched:
        # The same build and cache as trawl's, only the environment differs:
        # trawl with TRAWL_WATCHMAN=off, this with the private daemon.
        tr = arms[2]
        wm = Arm("trawl, watchman", tr.src, tr.build, trawl)
        wm.generator, wm.env = generator, watched.env_watchman
        tr.env = watched.env_stat
        arms.append(wm)
        check = [trawl, "check", "--cache", os.path.join(tr.build, "CMakeFiles", "trawl", "cache")]
        watched_tree.assert_watchman_used(check, tr.build, wm.env, "cmake_peers")

    def quiet(a, out):
        """A no-op build: no re-configure; Ninja also says there was nothing
        to do (and, for trawl, did not even run the check)."""
        if "Configuring done" in out or "Re-running CMake" in out:
            return False
        if generator == "Unix Makefiles":
            return True
        if a.label.startswith("trawl") and shape == "big":
            # Beyond 2,000 watched paths the check runs on every build
            # (docs/cmake.md): that is its no-op.
            return "Re-running CMake" not in out
        return "ninja: no work to do." in out and not (
            a.label.startswith("trawl") and "trawl: re-checking" in out)

    for a in arms:
        _, rc, out = run(a.build_args(), a.env)
        if rc != 0 or not quiet(a, out):
            sys.exit("cmake_peers: %s: a no-op build did work:\n%s" % (a.label, out[-2000:]))

    def step(a):
        t, rc, out = run(a.build_args(), a.env)
        if rc != 0 or not quiet(a, out):
            sys.exit("cmake_peers: %s: %s" % (a.label, out[-2000:]))
        a.times.append(t)

    rounds(arms, n_rounds, step)
    none, cmake, tr = arms[:3]
    over_c = [c - n for c, n in zip(cmake.times, none.times)]
    over_t = [t - n for t, n in zip(tr.times, none.times)]
    ratio = [t / c for t, c in zip(over_t, over_c) if c > 0]
    row = "| %s | %s | %d | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.3f (%.3f-%.3f) |" % (
        shape, tag, calls, "{:,}".format(files), 1e3 * med(none.times), 1e3 * med(cmake.times),
        1e3 * med(tr.times), 1e3 * med(over_c), 1e3 * med(over_t), med(ratio),
        min(ratio), max(ratio))
    if watched:
        wm = arms[3]
        over_w = [w - n for w, n in zip(wm.times, none.times)]
        row += " %.1f | %.1f | %.3f | %.3f | %.3f |" % (
            1e3 * med(wm.times), 1e3 * med(over_w),
            med(w / t for w, t in zip(wm.times, tr.times)),
            med(t / n for t, n in zip(tr.times, none.times)),
            med(w / n for w, n in zip(wm.times, none.times)))
    print(row)
    sys.stdout.flush()


def configure50(shape, tree, tmp, n_rounds, trawl):
    pats = configure_patterns(shape)
    arms = [make_arm(tmp, "conf-%s" % arm, arm, tree, pats, trawl) for arm in ("cmake", "trawl")]
    _, rc, out = run(arms[0].configure_args())
    if rc != 0:
        sys.exit("cmake_peers: configure cmake: %s" % out[-2000:])
    with open(arms[0].dump) as f:
        lists = [chunk.split("\n")[1:] for chunk in f.read().split("== ")[1:]]
    lists = [[p for p in l if p] for l in lists]
    arms.insert(0, make_arm(tmp, "conf-noglob", "noglob", tree, pats, trawl, lists))
    for a in arms:
        _, rc, out = run(a.configure_args())
        if rc != 0:
            sys.exit("cmake_peers: configure %s: %s" % (a.label, out[-2000:]))
    files = same_lists(arms, "%s, 50 calls" % shape)
    fresh = {a.label: [] for a in arms}
    again = {a.label: [] for a in arms}

    def step(a):
        shutil.rmtree(a.build)
        t, rc, out = run(a.configure_args())
        if rc != 0:
            sys.exit("cmake_peers: %s: %s" % (a.label, out[-2000:]))
        fresh[a.label].append(t)
        t, rc, out = run(["cmake", a.build])
        if rc != 0:
            sys.exit("cmake_peers: %s: %s" % (a.label, out[-2000:]))
        again[a.label].append(t)

    rounds(arms, n_rounds, step)
    same_lists(arms, "%s, 50 calls, after the rounds" % shape)
    for what, d in (("fresh", fresh), ("re-configure", again)):
        base = d["noglob"]
        oc = [c - b for c, b in zip(d["cmake"], base)]
        ot = [t - b for t, b in zip(d["trawl"], base)]
        ratio = [t / c for t, c in zip(ot, oc) if c > 0]
        print("| %s | %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.3f (%.3f-%.3f) |" % (
            shape, what, "{:,}".format(files), 1e3 * med(base), 1e3 * med(d["cmake"]),
            1e3 * med(d["trawl"]), 1e3 * med(oc), 1e3 * med(ot), med(ratio), min(ratio),
            max(ratio)))
        sys.stdout.flush()


def calls_tree(tmp, n_dirs=5000):
    """n_dirs directories (src/, 50 x 100), 3 files each, in a git work tree."""
    root = os.path.join(tmp, "dirs")
    k = 0
    for a in range(50):
        for b in range(n_dirs // 50):
            d = os.path.join(root, "src", "a%02d" % a, "b%03d" % b)
            os.makedirs(d)
            for name in ("x.c", "y.h", "z.txt"):
                open(os.path.join(d, name), "w").close()
            k += 1
    subprocess.run(["git", "init", "-q", root], check=True)
    return root


CALLS_MACRO = r"""
macro(walk_dirs curdir)
  if(visited LESS {limit})
    {call}
    math(EXPR visited "${{visited}} + 1")
    string(REPLACE ";" "\n" l "${{children}}")
    file(APPEND "{dump}" "== ${{curdir}}\n${{l}}\n")
    foreach(child ${{children}})
      if(IS_DIRECTORY {tree}/${{curdir}}/${{child}})
        walk_dirs(${{curdir}}/${{child}})
      endif()
    endforeach()
  endif()
endmacro()
"""

CALLS_ARMS = {
    "file": "file(GLOB children RELATIVE {tree}/${{curdir}} {tree}/${{curdir}}/*)",
    "trawl": "trawl_glob(GLOB children RELATIVE {tree}/${{curdir}} {tree}/${{curdir}}/*)",
    "file-cd": "file(GLOB children CONFIGURE_DEPENDS RELATIVE {tree}/${{curdir}} "
               "{tree}/${{curdir}}/*)",
    "trawl-cd": "trawl_glob(GLOB children CONFIGURE_DEPENDS RELATIVE {tree}/${{curdir}} "
                "{tree}/${{curdir}}/*)",
}


def calls_project(tmp, arm, tree, limit):
    src = os.path.join(tmp, "calls%d-%s" % (limit, arm))
    os.makedirs(src)
    dump = src + ".lists"
    text = ["cmake_minimum_required(VERSION 3.20)", "project(calls NONE)",
            'include("%s")' % MODULE, "set(visited 0)", 'file(WRITE "%s" "")' % dump,
            CALLS_MACRO.format(limit=limit, dump=dump, tree=tree,
                               call=CALLS_ARMS[arm].format(tree=tree)),
            "walk_dirs(src)"]
    with open(os.path.join(src, "CMakeLists.txt"), "w") as f:
        f.write("\n".join(text) + "\n")
    a = Arm(arm, src, src + "-build", None)
    a.dump = dump
    return a


def calls_sweep(tmp, counts, n_rounds, trawl, callgrind):
    tree = calls_tree(tmp, max(5000, max(counts)))
    print("\nCalls per configure: a glob per directory in a macro, arms interleaved, %d rounds "
          "(ms, medians; ratio = trawl / file per round, then the median):\n" % n_rounds)
    print("| calls | step | file | trawl_glob | ratio | file CONFIGURE_DEPENDS | "
          "trawl_glob CONFIGURE_DEPENDS | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    sys.stdout.flush()
    cg = []
    for limit in counts:
        arms = [calls_project(tmp, arm, tree, limit) for arm in CALLS_ARMS]
        for a in arms:
            a.trawl = trawl
        times = {(a.label, step): [] for a in arms for step in ("first", "again", "add")}
        added = os.path.join(tree, "src", "a00", "b000", "added%d.c")

        def step(a, r=[0]):
            shutil.rmtree(a.build, ignore_errors=True)
            t, rc, out = run(a.configure_args())
            if rc != 0:
                sys.exit("cmake_peers: %s: %s" % (a.label, out[-2000:]))
            times[(a.label, "first")].append(t)
            t, rc, out = run(["cmake", a.build])
            if rc != 0:
                sys.exit("cmake_peers: %s: %s" % (a.label, out[-2000:]))
            times[(a.label, "again")].append(t)
            if a.label.endswith("-cd"):
                _, rc, out = run(a.build_args())
                _, rc, out = run(a.build_args())
                if a.label == "trawl-cd" and "ninja: no work to do." not in out:
                    sys.exit("cmake_peers: trawl-cd: a no-op build did work:\n" + out[-2000:])
                r[0] += 1
                path = added % r[0]
                open(path, "w").close()
                t, rc, out = run(a.build_args())
                os.remove(path)
                if rc != 0 or "Re-running CMake" not in out:
                    sys.exit("cmake_peers: %s: the build did not pick up %s:\n%s"
                             % (a.label, path, out[-2000:]))
                times[(a.label, "add")].append(t)

        rounds(arms, n_rounds, step)
        for a in arms:
            run(["cmake", a.build])   # the tree as it is, for the comparison
        same_lists(arms, "%d calls" % limit)
        for what in ("first", "again", "add"):
            cells = []
            for plain, tr in (("file", "trawl"), ("file-cd", "trawl-cd")):
                f, t = times[(plain, what)], times[(tr, what)]
                if not f:
                    cells += ["", "", ""]
                    continue
                ratio = [b / a for a, b in zip(f, t)]
                cells += ["%.0f" % (1e3 * med(f)), "%.0f" % (1e3 * med(t)),
                          "%.2f" % med(ratio)]
            label = {"first": "first configure", "again": "re-configure, unchanged",
                     "add": "build after a source is added"}[what]
            print("| %d | %s | %s |" % (limit, label, " | ".join(cells)))
            sys.stdout.flush()
        if callgrind:
            counts_cg = {}
            for a in arms:
                p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                                    "cmake", a.build], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
                line = [l for l in p.stdout.splitlines() if "Collected" in l]
                counts_cg[a.label] = int(line[-1].split()[-1]) if line else 0
            cg.append((limit, counts_cg))
    if cg:
        print("\nInstructions of one re-configure of an unchanged tree (callgrind, the cmake "
              "process only):\n")
        print("| calls | file | trawl_glob | ratio | file CONFIGURE_DEPENDS | trawl_glob "
              "CONFIGURE_DEPENDS | ratio |")
        print("|---|---|---|---|---|---|---|")
        for limit, c in cg:
            print("| %d | %s | %s | %.2f | %s | %s | %.2f |" % (
                limit, "{:,}".format(c["file"]), "{:,}".format(c["trawl"]),
                c["trawl"] / c["file"], "{:,}".format(c["file-cd"]),
                "{:,}".format(c["trawl-cd"]), c["trawl-cd"] / c["file-cd"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shapes", nargs="*", default=["flat20k"])
    ap.add_argument("--fixtures", default=os.path.join(HERE, "fixtures"))
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--configure-rounds", type=int, default=5)
    ap.add_argument("--trawl", default=os.path.join(ROOT, "build", "plugins", "cli", "trawl"))
    ap.add_argument("--no-make", dest="generators", action="store_const", const=["Ninja"],
                    default=["Ninja", "Unix Makefiles"],
                    help="no-op builds with Ninja only (not also `make`)")
    ap.add_argument("--calls", default=None,
                    help="only the calls-per-configure lane, with these counts (10,100,1000,5000)")
    ap.add_argument("--noop-calls", default="1,10",
                    help="the no-op builds' numbers of calls (default 1,10)")
    ap.add_argument("--calls-rounds", type=int, default=3)
    ap.add_argument("--callgrind", action="store_true",
                    help="with --calls: also count one re-configure's instructions")
    ap.add_argument("--watchman", action="store_true",
                    help="each fixture copied into a git work tree watched by a private "
                         "watchman daemon, and a no-op arm with watchman beside the stat path")
    a = ap.parse_args()
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    cmake = subprocess.run(["cmake", "--version"], capture_output=True, text=True).stdout
    ninja = subprocess.run(["ninja", "--version"], capture_output=True, text=True).stdout
    print("- Date: %s; trawl commit %s; %s, Ninja %s; arms interleaved, order rotated" % (
        subprocess.run(["date", "-u"], capture_output=True, text=True).stdout.strip(), commit,
        cmake.splitlines()[0], ninja.strip()))
    if a.calls:
        with tempfile.TemporaryDirectory(prefix="trawl-cmake-calls-") as tmp:
            calls_sweep(tmp, [int(x) for x in a.calls.split(",")], a.calls_rounds,
                        os.path.abspath(a.trawl), a.callgrind)
        return 0
    for shape in a.shapes:
        tree = os.path.join(os.path.abspath(a.fixtures), shape)
        if not os.path.isdir(tree):
            sys.exit("cmake_peers: no %s (python3 bench/fixtures.py %s%s)" % (
                tree, "--big " if shape == "big" else "", a.fixtures))
        watched = None
        if a.watchman:
            # (The tree below the work tree's top: CMake's globs enter .git.)
            watched = watched_tree.WatchedTree(tree, shape, below_top=True)
            tree = watched.tree
        try:
            with tempfile.TemporaryDirectory(prefix="trawl-cmake-bench-") as tmp:
                bench_shape(a, shape, tree, tmp, watched)
        finally:
            if watched:
                watched.close()


def bench_shape(a, shape, tree, tmp, watched):
    print("\nNo-op builds, %s, %d rounds (ms, medians):\n" % (shape, a.rounds))
    head = ("| tree | build | calls | files listed | none | cmake | trawl | cmake's overhead "
            "| trawl's overhead | trawl / cmake overhead (min-max) |")
    rule = "|---|---|---|---|---|---|---|---|---|---|"
    if watched:
        # trawl: TRAWL_WATCHMAN=off; trawl, watchman: the private daemon's
        # watch of the same copy; ratios per round, then the median.
        print("(trawl: the stat path, TRAWL_WATCHMAN=off; trawl, watchman: the same build "
              "and cache with the private daemon)\n")
        head += (" trawl, watchman | its overhead | watchman / trawl | trawl / none "
                 "| watchman / none |")
        rule += "---|---|---|---|---|"
    print(head)
    print(rule)
    for generator in a.generators:
        for calls in [int(c) for c in a.noop_calls.split(",")]:
            noop(shape, tree, tmp, calls, a.rounds, a.trawl, generator, watched)
    if a.configure_rounds == 0:
        return
    print("\nConfigure with 50 calls, %s, %d rounds (ms, medians; overhead = arm - "
          "no glob):\n" % (shape, a.configure_rounds))
    print("| tree | configure | files listed | no glob | cmake | trawl | cmake's overhead "
          "| trawl's overhead | trawl / cmake overhead (min-max) |")
    print("|---|---|---|---|---|---|---|---|---|")
    configure50(shape, tree, tmp, a.configure_rounds, a.trawl)


if __name__ == "__main__":
    sys.exit(main())
