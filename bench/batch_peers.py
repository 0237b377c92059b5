#!/usr/bin/env python3
"""Four globs of one configure run: one `trawl batch` against separate walks.

usage: bench/batch_peers.py [--fixtures DIR] [--rounds N] [--warmup N] [SHAPE]

The question (issue 5): on SHAPE (default flat20k, from bench/fixtures.py),
the files matching `**/*.ts`, `**/*.js`, `**/*.md` and `**/*.txt`, each list
separately, as a build system's four glob calls want them. Arms:

  floor              bench/floor_walk --print with the four suffixes: one
                     traversal at the system-call floor, printing the union
  trawl batch        the four queries as JSON lines, one shared walk
  trawl, one glob    `trawl '**/*.ts'`: one single-pattern walk, the cost the
                     batch is measured against
  trawl, four runs   four `trawl` processes, one per glob
  trawl, one braced  `trawl '**/*.{ts,js,md,txt}'`: one walk, the union only
  find               one find with four -name tests (the union)
  rg                 `rg --files -uuu` with four -g globs (the union)
  fd, four -e        one fd with four extensions (the union)
  fd, four runs      four fd processes
  cmake -P           a CMake script with the four file(GLOB_RECURSE) calls

An arm that runs several processes runs them one after another, as a build
does; its wall time is the whole sequence. Before timing, every arm runs once
and its answer must agree: per glob where the arm answers per glob (batch, the
four-run arms, cmake), the union otherwise, against the union and the per-glob
lists of the floor and of the first trawl arm. Timing: one process (or
sequence) per run, arms interleaved with the order rotated each round; the
ratio to the floor is taken per round, then the median. Only the ratios mean
anything on a shared machine.
"""
import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import walk_peers  # noqa: E402  (run_once, busy_seconds, own_seconds, ms)

EXTS = ["ts", "js", "md", "txt"]
TRAWL = os.path.join(ROOT, "build", "plugins", "cli", "trawl")


class Arm:
    def __init__(self, label, cmds, parse, per_glob):
        self.label = label
        self.cmds = cmds            # argv lists, run in sequence
        self.parse = parse          # outputs -> {ext: set} or set
        self.per_glob = per_glob
        self.wall = []
        self.cpu = []


def lines(out):
    return set(p[2:] if p.startswith(b"./") else p for p in out.split(b"\n") if p)


def union_of(outs):
    return lines(b"".join(outs))


def per_run(outs):
    return {e: lines(o) for e, o in zip(EXTS, outs)}


def batch_parse(outs):
    got = {}
    for line in outs[0].splitlines():
        obj = json.loads(line)
        got[obj["id"]] = set(p.encode() for p in obj["paths"])
    return got


def cmake_parse(outs):
    got = {}
    for line in outs[0].decode().splitlines():
        if "=" in line:
            ext, _, rest = line.partition("=")
            got[ext] = set(p.encode() for p in rest.split(";") if p)
    return got


def arms_for(root, floor, tmp):
    fd = shutil.which("fdfind") or shutil.which("fd")
    rg = shutil.which("rg")
    cmake = shutil.which("cmake")
    queries = os.path.join(tmp, "queries.jsonl")
    with open(queries, "w") as f:
        for e in EXTS:
            f.write(json.dumps({"id": e, "include": ["**/*." + e]}) + "\n")
    script = os.path.join(tmp, "globs.cmake")
    with open(script, "w") as f:
        for e in EXTS:
            f.write('file(GLOB_RECURSE %s LIST_DIRECTORIES false RELATIVE "${CMAKE_CURRENT_SOURCE_DIR}" '
                    '"${CMAKE_CURRENT_SOURCE_DIR}/*.%s")\n' % (e, e))
        for e in EXTS:
            f.write('execute_process(COMMAND "${CMAKE_COMMAND}" -E echo "%s=${%s}")\n' % (e, e))
    floor_args = [floor, "--print"] + sum((["--ext", "." + e] for e in EXTS), []) + ["."]
    arms = [Arm("floor, serial", [floor_args], union_of, False)]
    if os.access(TRAWL, os.X_OK):
        arms += [
            Arm("trawl batch -j1", [[TRAWL, "batch", "-j", "1", queries]], batch_parse, True),
            Arm("trawl batch", [[TRAWL, "batch", queries]], batch_parse, True),
            Arm("trawl -j1, one glob (.ts only)", [[TRAWL, "-j1", "**/*.ts"]], None, False),
            Arm("trawl -j1, four runs", [[TRAWL, "-j1", "**/*." + e] for e in EXTS], per_run, True),
            Arm("trawl -j1, one braced glob", [[TRAWL, "-j1", "**/*.{%s}" % ",".join(EXTS)]],
                union_of, False),
        ]
    arms.append(Arm("find", [["find", ".", "-type", "f", "("] +
                             sum((["-name", "*." + e, "-o"] for e in EXTS), [])[:-1] + [")"]],
                    union_of, False))
    if rg:
        arms.append(Arm("rg --files -uuu", [[rg, "--files", "-uuu"] +
                                           sum((["-g", "*." + e] for e in EXTS), [])],
                        union_of, False))
    if fd:
        arms.append(Arm("fd -u, four -e", [[fd, "-u", "-t", "f"] + sum((["-e", e] for e in EXTS), [])],
                        union_of, False))
        arms.append(Arm("fd -u, four runs", [[fd, "-u", "-t", "f", "-e", e] for e in EXTS],
                        per_run, True))
    if cmake:
        arms.append(Arm("cmake -P, four GLOB_RECURSE", [[cmake, "-P", script]], cmake_parse, True))
    return arms


def run_arm(arm, keep):
    wall = cpu = 0.0
    outs = []
    for argv in arm.cmds:
        w, c, code, out, err = walk_peers.run_once(argv, keep)
        if code != 0:
            sys.exit("batch_peers: %s: %s exited %d: %s" % (
                arm.label, shlex.join(argv), code, err.decode(errors="replace")[:300]))
        wall += w
        cpu += c
        outs.append(out)
    return wall, cpu, outs


def check(arms):
    ref_union, ref_each = None, None
    problems = []
    for arm in arms:
        _, _, outs = run_arm(arm, True)
        if arm.parse is None:  # the one-glob reference: the .ts list
            got_ts = lines(outs[0])
            if ref_each and got_ts != ref_each["ts"]:
                problems.append("%s: not the .ts list" % arm.label)
            continue
        got = arm.parse(outs)
        if arm.per_glob:
            union = set().union(*got.values())
            if ref_each is None:
                ref_each = got
            elif got != ref_each:
                problems.append("%s: per-glob lists differ from the first per-glob arm" % arm.label)
        else:
            union = got
        if ref_union is None:
            ref_union = union
        elif union != ref_union:
            problems.append("%s: %d paths, the floor %d" % (arm.label, len(union), len(ref_union)))
    return problems, ref_union, ref_each


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shape", nargs="?", default="flat20k")
    ap.add_argument("--fixtures", default=os.path.join(HERE, "fixtures"))
    ap.add_argument("--floor", default=os.path.join(ROOT, "build", "bench", "floor_walk"))
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--warmup", type=int, default=2)
    a = ap.parse_args()
    root = os.path.join(a.fixtures, a.shape)
    if not os.path.isdir(root):
        sys.exit("batch_peers: no %s (python3 bench/fixtures.py %s)" % (root, a.fixtures))
    os.chdir(root)
    with tempfile.TemporaryDirectory() as tmp:
        arms = arms_for(root, a.floor, tmp)
        problems, union, each = check(arms)
        if problems:
            sys.exit("batch_peers: the arms disagree:\n  " + "\n  ".join(problems))
        busy0, own0 = walk_peers.busy_seconds(), walk_peers.own_seconds()
        for r in range(a.warmup + a.rounds):
            shift = r % len(arms)
            for arm in arms[shift:] + arms[:shift]:
                wall, cpu, _ = run_arm(arm, False)
                if r >= a.warmup:
                    arm.wall.append(wall)
                    arm.cpu.append(cpu)
        busy = walk_peers.busy_seconds() - busy0 - (walk_peers.own_seconds() - own0)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    print("- Date: %s; trawl commit %s; %s, %d timed rounds after %d warm-up, arms interleaved" % (
        subprocess.run(["date", "-u"], capture_output=True, text=True).stdout.strip(), commit,
        a.shape, a.rounds, a.warmup))
    print("- Answer: %s files in all (%s)" % (
        format(len(union), ","), ", ".join("%s %d" % (e, len(each[e])) for e in EXTS) if each else "-"))
    print("\n| arm | processes | wall ms, median (min–max) | × floor | × one-glob trawl | CPU ms |")
    print("|---|--:|--:|--:|--:|--:|")
    floor = arms[0]
    one = next((x for x in arms if x.parse is None), None)
    for arm in arms:
        rf = statistics.median(x / y for x, y in zip(arm.wall, floor.wall))
        ro = statistics.median(x / y for x, y in zip(arm.wall, one.wall)) if one else float("nan")
        print("| %s | %d | %s (%s–%s) | %.2f | %.2f | %s |" % (
            arm.label, len(arm.cmds), walk_peers.ms(statistics.median(arm.wall)),
            walk_peers.ms(min(arm.wall)), walk_peers.ms(max(arm.wall)), rf, ro,
            walk_peers.ms(statistics.median(arm.cpu))))
    print("\nOther processes kept %.2f CPUs busy on average meanwhile." % (
        busy / max(sum(sum(x.wall) for x in arms), 1e-9)))


if __name__ == "__main__":
    main()
