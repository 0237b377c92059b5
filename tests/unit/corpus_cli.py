#!/usr/bin/env python3
"""Replay the corpus's match and error rows through the `trawl match` command.

    corpus_cli.py TRAWL_EXE CORPUS_DIR

Match rows are grouped by (dialect, flags, pattern): one process per group,
its paths NUL-terminated on stdin (-0), which must print exactly the paths
the corpus expects to match, in input order, and exit 0 if any matched, 1 if
none did. Error rows must exit 2 with nothing on stdout and a message on
stderr that names the byte offset ("byte N") and contains the reason.

Skipped, and counted: rows whose path holds a NUL byte (a NUL ends a path on
stdin with -0) and rows whose pattern holds one (argv cannot carry it).

A sanitizer build of trawl starts slowly (~100 ms a process); against one,
only every eighth match run and every fourth error row are made, since the C
API runner already replays every row under the sanitizers. Set
TRAWL_CORPUS_CLI_ALL=1 to run everything anyway.
Prune and facts rows are for the C API only (tests/unit/corpus_test.cpp).
Standard library only.
"""

import os
import subprocess
import sys
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trawl_corpus  # noqa: E402

enc = trawl_corpus.encode_field


def command(exe, row):
    args = [exe, "match", "--dialect", row.dialect]
    if row.icase:
        args.append("--icase")
    if row.kind == "match" and row.args[2]:
        args += ["--type", row.args[2]]
    # '--' so that a pattern starting with '-' is not read as an option.
    return args + ["-0", "--", row.pattern]


def run_match_group(exe, rows, failures):
    proc = subprocess.run(command(exe, rows[0]),
                          input=b"".join(r.args[0] + b"\0" for r in rows),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    expected = [r.args[0] for r in rows if r.args[1]]
    want_rc = 0 if expected else 1
    got = proc.stdout.split(b"\0")
    if got and got[-1] == b"":
        got.pop()
    else:
        got.append(b"<missing terminator>")
    where = rows[0].where
    desc = "dialect %s%s pattern %s" % (rows[0].dialect, " --icase" if rows[0].icase else "",
                                        enc(rows[0].pattern))
    if proc.returncode != want_rc:
        failures.append("%s: %s: exit %d, expected %d; stderr: %s" % (
            where, desc, proc.returncode, want_rc, proc.stderr.decode("utf-8", "replace").strip()))
    if got != expected:
        first = {}
        for r in rows:
            first.setdefault(r.args[0], r)
        wrong = [p for p in OrderedDict.fromkeys(expected + got)
                 if (p in got) != (p in expected)]
        for p in wrong:
            r = first.get(p)
            failures.append("%s: %s path %s: printed %s, expected %s" % (
                r.where if r else where, desc, enc(p),
                "yes" if p in got else "no", "yes" if p in expected else "no"))
        if not wrong:
            failures.append("%s: %s: output %r, expected %r (order or repeats)" % (
                where, desc, got, expected))
    if proc.stderr and proc.returncode in (0, 1):
        failures.append("%s: %s: unexpected stderr: %s" % (
            where, desc, proc.stderr.decode("utf-8", "replace").strip()))


def run_error(exe, row, failures):
    proc = subprocess.run(command(exe, row), stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    desc = "%s: dialect %s pattern %s" % (row.where, row.dialect, enc(row.pattern))
    offset, reason = row.args
    if proc.returncode != 2:
        failures.append("%s: exit %d, expected 2" % (desc, proc.returncode))
    if proc.stdout:
        failures.append("%s: printed %r on stdout" % (desc, proc.stdout))
    if (b"byte %d" % offset) not in proc.stderr:
        failures.append("%s: stderr does not name byte %d: %s" % (
            desc, offset, proc.stderr.decode("utf-8", "replace").strip()))
    if reason not in proc.stderr:
        failures.append("%s: stderr lacks %r: %s" % (
            desc, reason.decode("utf-8", "replace"),
            proc.stderr.decode("utf-8", "replace").strip()))


def sanitized(exe):
    """Is EXE built with AddressSanitizer or UBSan?"""
    try:
        with open(exe, "rb") as f:
            data = f.read()
    except OSError:
        return False
    return b"__asan_init" in data or b"__ubsan_handle" in data


def main(argv):
    if len(argv) != 3:
        print("usage: corpus_cli.py TRAWL_EXE CORPUS_DIR", file=sys.stderr)
        return 2
    exe, corpus_dir = argv[1], argv[2]
    rows = trawl_corpus.load(corpus_dir)
    failures = []
    skipped = {"NUL in path": 0, "NUL in pattern": 0}
    groups = OrderedDict()
    errors = []
    for r in rows:
        # An escape row is a match row that says yes: the escaped pattern
        # matches its path through the command too.
        if r.kind not in ("match", "error", "escape"):
            continue
        if b"\0" in r.pattern:
            skipped["NUL in pattern"] += 1
            continue
        if r.kind == "error":
            errors.append(r)
        elif b"\0" in r.args[0]:
            skipped["NUL in path"] += 1
        else:
            groups.setdefault((r.dialect, r.flags, r.pattern, r.args[2]), []).append(r)

    runs = list(groups.values())
    stride = 1
    if sanitized(exe) and not os.environ.get("TRAWL_CORPUS_CLI_ALL"):
        stride = 8
        runs = runs[::stride]
        errors = errors[::stride // 2]
    # One process per run; run them side by side, report in corpus order.
    jobs = [(run_match_group, g) for g in runs] + [(run_error, r) for r in errors]

    def run(job):
        found = []
        job[0](exe, job[1], found)
        return found

    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        for found in pool.map(run, jobs):
            failures.extend(found)

    n_match = sum(len(g) for g in runs)
    for f in failures:
        print("FAIL " + f)
    if stride > 1:
        print("sanitizer build: every %dth match run and every %dth error row only "
              "(TRAWL_CORPUS_CLI_ALL=1 for all)" % (stride, stride // 2))
    print("%d match rows in %d runs, %d error rows; skipped: %s" % (
        n_match, len(runs), len(errors),
        ", ".join("%d (%s)" % (v, k) for k, v in skipped.items())))
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
