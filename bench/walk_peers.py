#!/usr/bin/env python3
"""Walk a benchmark fixture with the floor walker and its peers; check, then time.

usage: bench/walk_peers.py [OPTIONS] SHAPE...

SHAPE is one of bench/fixtures.py's shapes, or `empty`: an empty directory the
script makes itself, whose table is each arm's start-up cost alone.

  --fixtures DIR   where bench/fixtures.py wrote the shapes (default bench/fixtures)
  --floor PATH     the floor walker (default build/bench/floor_walk)
  --threads N      threads for the floor's threaded arm (default: online CPUs)
  --rounds N       timed rounds (default 21); --warmup N untimed rounds first (2)
  --question Q     only the question(s) named (all, ts, scoped, gitignore; repeatable)
  --check-only     run the equality check, time nothing
  --hyperfine      time with hyperfine (-N, --warmup, --runs) instead of the
                   interleaved rounds; it runs each arm's rounds back to back

Each fixture is asked a few questions, each answered by several arms: the
floor walker (bench/floor_walk: serial and threaded, printing the paths; and
serial printing only its counts), find, and whichever of fd (Debian: fdfind),
rg and git are installed.  Every arm runs in the fixture's directory.  On a
fixture that is not a git work tree, git's arm is its walk of untracked files,
`git ls-files -o`, with an empty repository outside the tree (--git-dir,
--work-tree=.): every file is untracked, so it lists them all.

Before anything is timed, every arm runs once and its output (paths, with any
leading "./" removed) must be the same set as the serial floor's and have the
size the fixture's stamp recorded; the count-only floor must report that size.
Any difference stops the run: no arm can be fast by finding less.

Timing: one process per run, wall time from spawn to exit with its stdout
drained through a pipe (as a build tool reading the list would), and the
child's user+system CPU time from wait4.  In each round every arm runs once,
in an order rotated by one each round, so drift in the host's load lands on
all arms alike.  Reported: the median over rounds and the fastest and slowest
round, and the ratio to the serial floor that prints paths, taken per round
(arm / floor in the same round) and then the median.  Ratios are the result;
absolute times belong to this host at this moment.  Below each table: how many
CPUs other processes kept busy meanwhile (from /proc/stat, less this script
and everything it ran), which is what a threaded arm's ratio has to be read
against: with one CPU taken, a second thread has nowhere to run.
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
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class Arm:
    def __init__(self, label, argv, counts_from=None):
        self.label = label
        self.argv = argv
        # rg exits 1 when it lists nothing (the empty directory)
        self.ok_codes = (0, 1) if os.path.basename(argv[0]) == "rg" else (0,)
        self.counts_from = counts_from  # floor key ("files", "matched") or None: paths
        self.wall = []
        self.cpu = []


def find_tool(*names):
    for n in names:
        path = shutil.which(n)
        if path:
            return path
    return None


def floor_arms(floor, threads, args, label_scope=""):
    """Serial and threaded floor printing paths, and serial counting only."""
    counts_from = "matched" if "--ext" in args else "files"
    arms = [Arm("floor, serial%s" % label_scope, [floor, "--print"] + args)]
    if threads > 1:
        arms.append(Arm("floor, %d threads%s" % (threads, label_scope),
                        [floor, "-j", str(threads), "--print"] + args))
    arms.append(Arm("floor, serial, counts only%s" % label_scope, [floor] + args, counts_from))
    return arms


TRAWL = os.path.join(ROOT, "build", "plugins", "cli", "trawl")


def trawl_arms(args):
    """trawl's own walk, serial and with its default threads. The unrestricted
    questions pass -I (no ignore files), like fd -u and rg -uuu."""
    if not os.access(TRAWL, os.X_OK):
        return []
    return [Arm("trawl -j1", [TRAWL, "-j1"] + args), Arm("trawl", [TRAWL] + args)]


_UNTRACKED = None


def untracked_git(git):
    """argv prefix of git's walk of untracked files (`git ls-files -o`) for a
    tree that is not a work tree: an empty repository outside it, made once,
    whose index holds nothing, so that every file is untracked and listed."""
    global _UNTRACKED
    if _UNTRACKED is None:
        _UNTRACKED = tempfile.TemporaryDirectory(prefix="walk_peers-git-")
        subprocess.run([git, "init", "-q", "--bare", _UNTRACKED.name], check=True)
    return [git, "--git-dir=" + _UNTRACKED.name, "--work-tree=.", "ls-files", "-o"]


def questions(shape, stamp, floor, threads, root):
    """(name, description, expected count, arms) for one fixture."""
    fd = find_tool("fdfind", "fd")
    rg = find_tool("rg")
    git = find_tool("git")
    c = stamp["counts"]
    out = []
    # git on a tree that is no work tree of its own: its untracked walk.
    git_o = untracked_git(git) if git and not os.path.exists(os.path.join(root, ".git")) else None
    if shape == "empty":
        arms = floor_arms(floor, threads, ["."])
        arms.append(Arm("find", ["find", ".", "-type", "f"]))
        if fd:
            arms.append(Arm("fd -u", [fd, "-u", "-t", "f"]))
        if rg:
            arms.append(Arm("rg --files -uuu", [rg, "--files", "-uuu"]))
        return [("start-up", "an empty directory: process start and exit only", 0, arms)]

    arms = floor_arms(floor, threads, ["."])
    arms += trawl_arms(["-I", "-H", "**"])
    arms.append(Arm("find", ["find", ".", "-type", "f"]))
    if fd:
        arms.append(Arm("fd -u", [fd, "-u", "-t", "f"]))
    if rg:
        arms.append(Arm("rg --files -uuu", [rg, "--files", "-uuu"]))
    if git_o:
        arms.append(Arm("git ls-files -o", git_o))
    out.append(("all", "every regular file, hidden and ignored ones included" +
                (" (.git too)" if os.path.exists(os.path.join(root, ".git")) else ""),
                c["files_with_git"] if "files_with_git" in c else c["files"], arms))

    if shape == "repo":
        exts, globs, fd_e = [".ts", ".tsx"], "*.{ts,tsx}", ["-e", "ts", "-e", "tsx"]
        expected, text = c["ts_tsx"], "`**/*.{ts,tsx}`, nothing pruned"
        find_names = ["(", "-name", "*.ts", "-o", "-name", "*.tsx", ")"]
    else:
        exts, globs, fd_e = [".ts"], "*.ts", ["-e", "ts"]
        expected, text = c["ts"], "`**/*.ts`, nothing pruned"
        find_names = ["-name", "*.ts"]
    ext_args = [a for e in exts for a in ("--ext", e)]
    arms = floor_arms(floor, threads, ext_args + ["."])
    arms += trawl_arms(["-I", "-H", "**/" + globs])
    arms.append(Arm("find", ["find", ".", "-type", "f"] + find_names))
    if fd:
        arms.append(Arm("fd -u -e", [fd, "-u", "-t", "f"] + fd_e))
    if rg:
        arms.append(Arm("rg --files -uuu -g", [rg, "--files", "-uuu", "-g", globs]))
    if git_o:
        arms.append(Arm("git ls-files -o", git_o + ["--", "*.ts"]))
    out.append(("ts", text, expected, arms))

    if shape == "repo":
        scoped = "{src,packages}/**/*.{ts,tsx}"
        arms = floor_arms(floor, threads, ext_args + ["src", "packages"], ", opens src packages")
        arms.append(Arm("floor, serial, skips node_modules .git",
                        [floor, "--print", "--skip", "node_modules", "--skip", ".git"]
                        + ext_args + ["."]))
        arms += trawl_arms([scoped])
        arms.append(Arm("find src packages", ["find", "src", "packages", "-type", "f"] + find_names))
        if fd:
            arms.append(Arm("fd -u, full-path glob",
                            [fd, "-u", "-t", "f", "-p", "-g", os.path.join(root, scoped)]))
            arms.append(Arm("fd (gitignore)", [fd, "-t", "f"] + fd_e))
        if rg:
            arms.append(Arm("rg --files -uuu -g", [rg, "--files", "-uuu", "-g", scoped]))
            arms.append(Arm("rg --files -g (gitignore)", [rg, "--files", "-g", globs]))
        if git:
            arms.append(Arm("git ls-files (index)", [git, "ls-files", "--", "*.ts", "*.tsx"]))
        out.append(("scoped", "`{src,packages}/**/*.{ts,tsx}`: the floor opens src and "
                    "packages only; fd and rg either match the pattern over the whole tree "
                    "(-u) or skip node_modules through .gitignore", c["scoped_ts_tsx"], arms))

        # Issue 4: the same files found through the root .gitignore (node_modules/).
        arms = floor_arms(floor, threads, ["--skip", "node_modules", "--skip", ".git"]
                          + ext_args + ["."], ", skips node_modules .git")
        arms += trawl_arms(["**/" + globs])
        if fd:
            arms.append(Arm("fd (gitignore)", [fd, "-t", "f"] + fd_e))
        if rg:
            arms.append(Arm("rg --files -g (gitignore)", [rg, "--files", "-g", globs]))
        if git:
            arms.append(Arm("git ls-files -co --exclude-standard",
                            [git, "ls-files", "-co", "--exclude-standard", "--", "*.ts", "*.tsx"]))
            arms.append(Arm("git ls-files (index)", [git, "ls-files", "--", "*.ts", "*.tsx"]))
        out.append(("gitignore", "`**/*.{ts,tsx}` honouring the root .gitignore "
                    "(`node_modules/`): every arm reads the root and skips node_modules",
                    c["scoped_ts_tsx"], arms))
    return out


def spawn(argv):
    """Starts argv with stdout on a pipe, stderr on a second pipe; returns pid, fds."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=[
        (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2),
        (os.POSIX_SPAWN_CLOSE, out_r), (os.POSIX_SPAWN_CLOSE, err_r)])
    os.close(out_w)
    os.close(err_w)
    return pid, out_r, err_r


def drain(fd, keep):
    chunks = []
    while True:
        b = os.read(fd, 1 << 20)
        if not b:
            break
        if keep:
            chunks.append(b)
    os.close(fd)
    return b"".join(chunks)


def run_once(argv, keep):
    """(wall seconds, cpu seconds, exit status, stdout, stderr) of one run."""
    start = time.perf_counter()
    pid, out_r, err_r = spawn(argv)
    out = drain(out_r, keep)  # stderr is small: read it after stdout ends
    err = drain(err_r, True)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status), out, err


def floor_count(text, key):
    for word in text.split():
        if word.startswith(key + "="):
            return int(word.split("=", 1)[1])
    return None


def check(name, expected, arms):
    """Runs every arm once; returns a list of problems (empty: all agree)."""
    problems, reference = [], None
    for arm in arms:
        _, _, code, out, err = run_once(arm.argv, True)
        if code not in arm.ok_codes:
            problems.append("%s exited %d: %s" % (arm.label, code, err.decode(errors="replace")[:300]))
            continue
        if arm.counts_from:
            n = floor_count(out.decode(), arm.counts_from)
            if n != expected:
                problems.append("%s counted %s, the stamp says %d" % (arm.label, n, expected))
            continue
        paths = set(p[2:] if p.startswith(b"./") else p for p in out.split(b"\n") if p)
        lines = out.count(b"\n")
        if lines != len(paths):
            problems.append("%s printed %d lines for %d paths" % (arm.label, lines, len(paths)))
        if len(paths) != expected:
            problems.append("%s found %d, the stamp says %d" % (arm.label, len(paths), expected))
        if reference is None:
            reference = (arm.label, paths)
        elif paths != reference[1]:
            extra = sorted(paths - reference[1])[:3]
            missing = sorted(reference[1] - paths)[:3]
            problems.append("%s differs from %s: extra %s, missing %s" % (
                arm.label, reference[0], extra, missing))
    return problems


def time_interleaved(arms, rounds, warmup):
    for r in range(warmup + rounds):
        shift = r % len(arms)
        for arm in arms[shift:] + arms[:shift]:
            wall, cpu, code, _, err = run_once(arm.argv, False)
            if code not in arm.ok_codes:
                sys.exit("walk_peers: %s failed while timing: %s" % (arm.label, err.decode()[:300]))
            if r >= warmup:
                arm.wall.append(wall)
                arm.cpu.append(cpu)


def time_hyperfine(arms, rounds, warmup):
    with tempfile.TemporaryDirectory() as tmp:
        export = os.path.join(tmp, "hyperfine.json")
        cmd = ["hyperfine", "-N", "--style", "none", "--warmup", str(warmup), "--runs", str(rounds),
               "--export-json", export] + [shlex.join(a.argv) for a in arms]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(export) as f:
            results = json.load(f)["results"]
    for arm, res in zip(arms, results):
        arm.wall = res["times"]
        arm.cpu = [res["user"] + res["system"]]  # hyperfine reports their means only


def busy_seconds():
    """CPU time every process on the host has used so far (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def own_seconds():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def ms(seconds):
    return "%.1f" % (seconds * 1000) if seconds < 0.1 else "%.0f" % (seconds * 1000)


def report(name, text, expected, arms, root, paired):
    ref = arms[0]
    print("\n#### %s — %s: %s files\n" % (name, text, format(expected, ",")))
    print("| arm | command | wall ms, median (min–max) | × serial floor | CPU ms |")
    print("|---|---|--:|--:|--:|")
    for arm in arms:
        if paired:
            ratio = statistics.median(a / b for a, b in zip(arm.wall, ref.wall))
        else:
            ratio = statistics.median(arm.wall) / statistics.median(ref.wall)
        shown = shlex.join([os.path.basename(arm.argv[0])] + arm.argv[1:]).replace(root, "$PWD")
        if _UNTRACKED is not None:
            shown = shown.replace(_UNTRACKED.name, "EMPTY.git")
        print("| %s | `%s` | %s (%s–%s) | %.2f | %s |" % (
            arm.label, shown, ms(statistics.median(arm.wall)), ms(min(arm.wall)),
            ms(max(arm.wall)), ratio, ms(statistics.median(arm.cpu))))


def version(argv):
    try:
        out = subprocess.run(argv, capture_output=True, text=True, check=False).stdout
        return out.splitlines()[0].strip() if out else "?"
    except OSError:
        return None


def describe_host(args):
    with open("/proc/cpuinfo") as f:
        model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    tools = [version(["find", "--version"]), version([find_tool("fdfind", "fd") or "false", "--version"]),
             version(["rg", "--version"]), version(["git", "--version"])]
    if args.hyperfine:
        tools.append(version(["hyperfine", "--version"]))
    print("- Date: %s (`date -u`); trawl commit %s; floor: `%s`" % (
        subprocess.run(["date", "-u"], capture_output=True, text=True).stdout.strip(), commit,
        os.path.relpath(args.floor, ROOT)))
    print("- Host: %s, %d online CPUs (%s), Linux %s" % (
        os.uname().nodename, os.cpu_count(), model, os.uname().release))
    print("- Tools: %s" % "; ".join(t for t in tools if t and t != "?"))
    print("- Timing: %s" % ("hyperfine -N, %d warm-up and %d timed runs per arm, back to back"
                            % (args.warmup, args.rounds) if args.hyperfine else
                            "%d warm-up and %d timed rounds, arms interleaved, order rotated each round"
                            % (args.warmup, args.rounds)))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("shapes", nargs="+")
    ap.add_argument("--fixtures", default=os.path.join(HERE, "fixtures"))
    ap.add_argument("--floor", default=os.path.join(ROOT, "build", "bench", "floor_walk"))
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--question", action="append")
    ap.add_argument("--check-only", action="store_true")
    ap.add_argument("--hyperfine", action="store_true")
    args = ap.parse_args(argv[1:])
    args.floor = os.path.abspath(args.floor)
    if not os.access(args.floor, os.X_OK):
        sys.exit("walk_peers: no floor walker at %s (ninja -C build bench/floor_walk)" % args.floor)
    if args.hyperfine and not shutil.which("hyperfine"):
        sys.exit("walk_peers: --hyperfine, but hyperfine is not installed (Debian: hyperfine)")
    missing = [t for t in ("fdfind", "rg") if not find_tool(t, "fd" if t == "fdfind" else t)]
    if missing:
        print("walk_peers: not installed, their arms are left out: %s" % ", ".join(missing),
              file=sys.stderr)

    describe_host(args)
    failed = False
    empty = tempfile.TemporaryDirectory(prefix="walk_peers-empty-")
    for shape in args.shapes:
        if shape == "empty":
            root, stamp = empty.name, {"counts": {"files": 0}}
        else:
            root = os.path.join(os.path.abspath(args.fixtures), shape)
            stamp_file = os.path.join(os.path.abspath(args.fixtures), ".stamps", shape + ".json")
            try:
                with open(stamp_file) as f:
                    stamp = json.load(f)
            except OSError:
                sys.exit("walk_peers: no stamp for %s; run bench/fixtures.py %s first" % (
                    shape, "--big" if shape == "big" else ""))
        os.chdir(root)
        print("\n### %s (%s)" % (shape, root.replace(ROOT + "/", "")))
        for name, text, expected, arms in questions(shape, stamp, args.floor, args.threads, root):
            if args.question and name not in args.question:
                continue
            problems = check(name, expected, arms)
            if problems:
                failed = True
                print("\n%s/%s: the arms disagree, nothing timed:\n  %s" % (
                    shape, name, "\n  ".join(problems)))
                continue
            if args.check_only:
                print("\n%s/%s: %d arms agree on %d files" % (shape, name, len(arms), expected))
                continue
            load = os.getloadavg()[0]
            busy, own, start = busy_seconds(), own_seconds(), time.monotonic()
            (time_hyperfine if args.hyperfine else time_interleaved)(arms, args.rounds, args.warmup)
            others = (busy_seconds() - busy - (own_seconds() - own)) / (time.monotonic() - start)
            report(name, text, expected, arms, root, not args.hyperfine)
            print("\nWhile this table was timed, other processes kept %.2f of the %d CPUs busy "
                  "(/proc/stat less this script and its children); load average %.1f before, "
                  "%.1f after." % (max(others, 0.0), os.cpu_count(), load, os.getloadavg()[0]))
            sys.stdout.flush()
    os.chdir("/")
    empty.cleanup()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
