#!/usr/bin/env python3
"""Instructions per match for every arm of bench_match, under callgrind.

Runs `bench_match --iterations N --case NAME` once per case under
`valgrind --tool=callgrind`, reads the inclusive instruction count of each
arm's loop (run_trawl, run_fnmatch, run_pcre2) with callgrind_annotate and
divides it by the matches that loop made. Deterministic: the counts do not
move with host load, unlike the wall-time table (they also ignore what
instructions cost: cache misses, branch mispredictions, the JIT's code).

usage: bench/callgrind.py BUILD_DIR/bench/bench_match [ITERATIONS]
"""
import os
import re
import subprocess
import sys
import tempfile

ARMS = [("trawl", "run_trawl"), ("fnmatch", "run_fnmatch"),
        ("pcre2-jit", "run_pcre2")]


def cases(bench):
    out = subprocess.run([bench, "--list"], check=True, text=True,
                         capture_output=True).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def measure(bench, name, iterations, workdir):
    out_file = os.path.join(workdir, "callgrind.out")
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out_file,
         bench, "--iterations", str(iterations), "--case", name],
        check=True, text=True, capture_output=True)
    m = re.search(r"^# .*: (\d+) paths x (\d+) passes$", run.stdout, re.M)
    matches = int(m.group(1)) * int(m.group(2))
    row = [l for l in run.stdout.splitlines() if l.startswith("| ")][-1]
    annotate = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", out_file],
        check=True, text=True, capture_output=True).stdout
    counts = {}
    for arm, fn in ARMS:
        m = re.search(r"^\s*([\d,]+) \([^)]*\)\s+\S*:%s \[" % fn, annotate, re.M)
        counts[arm] = int(m.group(1).replace(",", "")) / matches if m else None
    return counts, row


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    bench = argv[1]
    iterations = int(argv[2]) if len(argv) > 2 else 200
    print("instructions per match (callgrind, %d passes over each case's paths)"
          % iterations)
    print()
    print("| case | pattern | " + " | ".join(a for a, _ in ARMS) + " |")
    print("|---|---|" + "--:|" * len(ARMS))
    with tempfile.TemporaryDirectory(prefix="trawl-callgrind-") as workdir:
        for name, pattern in cases(bench):
            counts, row = measure(bench, name, iterations, workdir)
            cells = []
            for i, (arm, _) in enumerate(ARMS):
                # n/a and gave-up cells come from the bench's own row.
                bench_cell = row.strip("|").split("|")[2 + i].strip()
                if counts[arm] is not None:
                    cells.append("{:,.0f}".format(counts[arm]))
                elif bench_cell == "n/a" or bench_cell.startswith("gave up"):
                    cells.append(bench_cell.split(" after")[0])
                else:
                    cells.append("?")
            print("| %s | `%s` | %s |" % (name, pattern, " | ".join(cells)),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
