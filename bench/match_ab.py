#!/usr/bin/env python3
"""Two builds of bench_match, case by case: trawl's instructions per match.

usage: bench/match_ab.py BEFORE/bench/bench_match AFTER/bench/bench_match [ITERATIONS]

For a change to the matcher that must not cost the untyped path anything
(issue 28). Each case of `bench_match --list` runs once per binary under
`valgrind --tool=callgrind --toggle-collect=run_trawl`: only the
instructions executed inside the trawl arm's loop (and what it calls) are
counted, divided by the matches it made. Deterministic. Unlike
bench/callgrind.py, which reads each arm's inclusive count from
callgrind_annotate, the count does not depend on how the compiler split
and inlined the matcher (a tail call moved 58 instructions per match out of
that attribution between two builds that executed the same number).
"""
import re
import subprocess
import sys


def cases(bench):
    out = subprocess.run([bench, "--list"], check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def per_match(bench, name, iterations):
    r = subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=run_trawl",
                        "--callgrind-out-file=/dev/null", bench, "--iterations", str(iterations),
                        "--case", name], capture_output=True, text=True, check=True)
    m = re.search(r"^# .*: (\d+) paths x (\d+) passes$", r.stdout, re.M)
    return int(re.search(r"Collected : (\d+)", r.stderr).group(1)) / (int(m.group(1)) * int(m.group(2)))


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    before, after = argv[1], argv[2]
    iterations = int(argv[3]) if len(argv) > 3 else 50
    print("| case | pattern | before | after | after ÷ before |")
    print("|---|---|--:|--:|--:|")
    for name, pattern in cases(after):
        b, a = per_match(before, name, iterations), per_match(after, name, iterations)
        print("| %s | `%s` | %.1f | %.1f | %.3f |" % (name, pattern, b, a, a / b))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
