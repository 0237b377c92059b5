#!/usr/bin/env python3
"""CPU and wall time of builds of trawl, interleaved in one run.

usage: bench/cpu_ab.py ROUNDS DIR ARGS... -- BIN BIN...

Each BIN is run with ARGS in DIR (stdout to /dev/null) once per round, the
order rotating and reversed every other round; first every BIN's output must
be the same bytes. Prints per BIN the median CPU time (user + system, from
the child's rusage) and wall time, and the median of the rounds' ratios to
the first BIN. Only ratios from one run mean anything on a shared machine.
"""
import os
import statistics
import subprocess
import sys
import time


def main(argv):
    if "--" not in argv or len(argv) < 4:
        sys.exit(__doc__)
    cut = argv.index("--")
    rounds, cwd, args, bins = int(argv[0]), argv[1], argv[2:cut], argv[cut + 1:]
    first = None
    for b in bins:
        out = subprocess.run([b] + args, cwd=cwd, stdout=subprocess.PIPE, check=True).stdout
        if first is None:
            first = out
        elif out != first:
            sys.exit("cpu_ab: %s prints something else than %s" % (b, bins[0]))
    cpu = {b: [] for b in bins}
    wall = {b: [] for b in bins}
    devnull = os.open(os.devnull, os.O_WRONLY)
    for r in range(rounds):
        order = bins[r % len(bins):] + bins[:r % len(bins)]
        for b in (order[::-1] if r % 2 else order):
            t = time.perf_counter()
            pid = os.fork()
            if pid == 0:
                os.chdir(cwd)
                os.dup2(devnull, 1)
                os.execv(b, [b] + args)
            _, status, ru = os.wait4(pid, 0)
            wall[b].append(time.perf_counter() - t)
            cpu[b].append(ru.ru_utime + ru.ru_stime)
            if status != 0:
                sys.exit("cpu_ab: %s exited with status %d" % (b, status))
    base = bins[0]
    print("%-40s %9s %7s %9s %7s" % ("build", "CPU ms", "ratio", "wall ms", "ratio"))
    for b in bins:
        rc = statistics.median(c / d for c, d in zip(cpu[b], cpu[base]))
        rw = statistics.median(c / d for c, d in zip(wall[b], wall[base]))
        print("%-40s %9.2f %7.3f %9.2f %7.3f" % (b, 1e3 * statistics.median(cpu[b]), rc,
                                                1e3 * statistics.median(wall[b]), rw))


if __name__ == "__main__":
    main(sys.argv[1:])
