#!/usr/bin/env python3
"""`trawl check` of one change, or of none, by several trawl builds, with a
private watchman, the same settled cache copied back before every check.

usage: bench/check_ab.py TREE ROUNDS [--cg] [--cg-out=DIR] [--perf] [--syscalls] [--unchanged] NAME=TRAWL...

TREE (e.g. bench/fixtures/big) is copied into a temporary git repository
that a private watchman daemon watches (tests/cache/watchman_cache.py starts
and stops it; never the user's). Each TRAWL writes its own cache of `-I '**'`
(each build reads only its own format), checks it once more so that nothing
is racy, and the cache is saved. Then one file is added at the top (not with
--unchanged), and each round runs every build's `trawl check` once, the
builds taking turns, its saved cache copied back first (and any FILE.base it
left removed), so that every check does the same work: prints the file added
(exit 1) or nothing (exit 0). Reported: the medians of ROUNDS of wall, user
and system milliseconds (getrusage), or with --cg callgrind's instructions
(valgrind; --cg-out=DIR keeps each build's last profile there as NAME.cg.out,
for callgrind_annotate), and the size of the file the last check wrote and of its base.
With --perf, each timed check runs under `perf stat -e task-clock,page-faults`
and the medians of those are reported too (the CPU the check took, and the
pages it touched for the first time). With --syscalls, one more check of each build under `strace -f -c` after the
rounds: its system calls counted by name (counts only: strace's own cost
swamps their times).
Only ratios between builds from one run mean anything on a shared machine.
"""
import os, sys, shutil, subprocess, tempfile, time, resource, statistics, signal
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tests", "cache"))
import watchman_cache  # noqa: E402
if len(sys.argv) < 4:
    sys.exit(__doc__.strip().splitlines()[3])
tree_src, rounds = sys.argv[1], int(sys.argv[2])
cg_out = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--cg-out=")), None)
cg = "--cg" in sys.argv or cg_out is not None
unchanged = "--unchanged" in sys.argv
syscalls = "--syscalls" in sys.argv
perf = "--perf" in sys.argv
bins = [a.split("=", 1) for a in sys.argv[3:] if "=" in a and not a.startswith("--")]
tmp = tempfile.mkdtemp(prefix="ab14-")
d = os.path.join(tmp, "daemon"); os.mkdir(d)
tree = os.path.join(tmp, "tree")
subprocess.run(["cp", "-a", tree_src, tree], check=True)
subprocess.run(["git", "init", "-q", tree], check=True)
watchman_cache.start(d, as_nobody=False)
sock = os.path.join(d, "sock")
try:
    subprocess.run(["watchman", "--sockname=" + sock, "watch-project", tree], stdout=subprocess.DEVNULL, check=True)
    env = dict(os.environ, TRAWL_WATCHMAN="auto", TRAWL_WATCHMAN_SOCK=sock)
    saved = {}
    for name, b in bins:
        c = os.path.join(tmp, name + ".cache")
        subprocess.run([b, "-C", tree, "--cache", c, "-I", "**"], env=env, stdout=subprocess.DEVNULL, check=True)
        time.sleep(1)
        subprocess.run([b, "check", "--cache", c], env=env, stdout=subprocess.DEVNULL)
        saved[name] = open(c, "rb").read()
    time.sleep(1)
    if not unchanged:
        open(os.path.join(tree, "added1.txt"), "w").close()
    time.sleep(0.5)
    res = {n: [] for n, _ in bins}
    for r in range(rounds):
        order = bins if r % 2 == 0 else bins[::-1]
        for name, b in order:
            c = os.path.join(tmp, name + ".cache")
            with open(c + ".new", "wb") as f: f.write(saved[name])
            os.rename(c + ".new", c)
            if os.path.exists(c + ".base"): os.unlink(c + ".base")
            if cg:
                out = os.path.join(tmp, name + ".cg.out")
                p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, b, "check", "--cache", c], env=env, capture_output=True)
                tot = [l for l in p.stderr.decode().splitlines() if "Collected" in l][0].split()[-1]
                res[name].append(int(tot))
                if cg_out:
                    shutil.copy(out, os.path.join(cg_out, name + ".cg.out"))
            else:
                pre = ["perf", "stat", "-x,", "-e", "task-clock,page-faults", "-o", c + ".perf", "--"] if perf else []
                ru0 = resource.getrusage(resource.RUSAGE_CHILDREN); t0 = time.perf_counter()
                p = subprocess.run(pre + [b, "check", "--cache", c], env=env, capture_output=True)
                t1 = time.perf_counter(); ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                row = [(t1 - t0) * 1000, (ru1.ru_utime - ru0.ru_utime) * 1000, (ru1.ru_stime - ru0.ru_stime) * 1000]
                if perf:
                    got = {}
                    for line in open(c + ".perf"):
                        f = line.strip().split(",")
                        if len(f) > 2 and f[0] and f[0][0].isdigit():
                            got[f[2]] = float(f[0])
                    row += [got.get("task-clock", 0.0), got.get("page-faults", 0.0)]
                res[name].append(tuple(row))
            if (p.returncode != 0) if unchanged else (p.returncode != 1 or b"added1.txt" not in p.stdout):
                sys.exit("%s: exit %d %s %s" % (name, p.returncode, p.stdout[:200], p.stderr[:300]))
    for name, _ in bins:
        v = res[name]
        if cg:
            print("%s: %.2f M instructions (median of %d)" % (name, statistics.median(v) / 1e6, len(v)))
        else:
            print("%s: wall %.1f ms, user %.1f, system %.1f (medians of %d)" % (name, statistics.median(x[0] for x in v), statistics.median(x[1] for x in v), statistics.median(x[2] for x in v), len(v)))
            if perf:
                print("   task clock %.2f ms, page faults %d (perf stat, medians)" % (statistics.median(x[3] for x in v), statistics.median(x[4] for x in v)))
        c = os.path.join(tmp, name + ".cache")
        print("   file %d bytes, base %s" % (os.path.getsize(c), os.path.getsize(c + ".base") if os.path.exists(c + ".base") else "none"))
        if syscalls:
            b = dict(bins)[name]
            with open(c + ".new", "wb") as f: f.write(saved[name])
            os.rename(c + ".new", c)
            if os.path.exists(c + ".base"): os.unlink(c + ".base")
            out = os.path.join(tmp, name + ".strace")
            subprocess.run(["strace", "-f", "-c", "-o", out, b, "check", "--cache", c], env=env, capture_output=True)
            counts = {}
            for line in open(out):
                f = line.split()
                if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
                    counts[f[-1]] = int(f[3])
            top = sorted(counts.items(), key=lambda kv: -kv[1])[:8]
            print("   system calls %d: %s" % (sum(counts.values()), ", ".join("%s %d" % kv for kv in top)))
finally:
    watchman_cache.stop(d, signal.SIGTERM)
    shutil.rmtree(tmp, ignore_errors=True)
