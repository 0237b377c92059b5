#!/usr/bin/env python3
"""The CMake module's escaper against libcore's rule, row by row.

usage: escape.py SOURCE_ROOT

cmake/trawl/text.cmake's _trawl_literal writes the pattern that matches
exactly a path, in CMake script, which cannot call the C escaper
(trawl_pattern_escape()). Every escape row of tests/corpus/escaper.txt — the
rows unit-corpus holds the C escaper to — goes through _trawl_literal in one
`cmake -P` and must come out as the row's pattern, byte for byte. A path
reaches CMake in a bracket argument and comes back in hex, so that no byte
is read as syntax on the way; a row CMake cannot carry (CR, LF or NUL in
the path) is counted as skipped, and none may be: every row is run."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "unit"))
import trawl_corpus  # noqa: E402


def bracket(s):
    """S as a CMake bracket argument (no CR, LF or NUL in S)."""
    eq = b"="
    while b"]" + eq + b"]" in s or s.endswith(b"]" + eq):
        eq += b"="
    return b"[" + eq + b"[" + s + b"]" + eq + b"]"


def main(argv):
    if len(argv) != 2:
        print("usage: escape.py SOURCE_ROOT", file=sys.stderr)
        return 2
    top = argv[1]
    rows = [r for r in trawl_corpus.parse_file(os.path.join(top, "tests", "corpus", "escaper.txt"))
            if r.kind == "escape"]
    run = [r for r in rows if not any(c in r.args[0] for c in (b"\r", b"\n", b"\0"))]
    if len(rows) < 30 or len(run) != len(rows):
        print("FAIL: %d escape rows, %d of them runnable" % (len(rows), len(run)))
        return 1
    with tempfile.TemporaryDirectory(prefix="trawl-escape-") as tmp:
        out = os.path.join(tmp, "out")
        script = os.path.join(tmp, "escape.cmake")
        with open(script, "wb") as f:
            f.write(b'include("%s/cmake/trawl/text.cmake")\n' % top.encode())
            f.write(b'file(WRITE "${OUT}" "")\n')
            for r in run:
                f.write(b"_trawl_literal(o %s)\n" % bracket(r.args[0]))
                f.write(b'string(HEX "${o}" h)\nfile(APPEND "${OUT}" "${h}\\n")\n')
        p = subprocess.run(["cmake", "-DOUT=" + out, "-P", script],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode != 0:
            print("FAIL: cmake -P: %s" % p.stderr.decode(errors="replace"))
            return 1
        with open(out) as f:
            got = [bytes.fromhex(line) for line in f.read().split("\n")[:-1]]
    failures = 0
    for r, g in zip(run, got + [None] * (len(run) - len(got))):
        if g != r.pattern:
            failures += 1
            print("FAIL %s: _trawl_literal(%r) gave %r, libcore's rule %r"
                  % (r.where, r.args[0], g, r.pattern))
    print("%d rows, %d failed" % (len(run), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
