#!/usr/bin/env python3
"""`trawl batch --format cmake` and `trawl check --checked`, end to end.

usage: format_cmake.py TRAWL

The script the cmake format prints is read back by real CMake (`cmake -P`,
which `include()`s it and writes every value it got into a file of its own),
and the bytes CMake ends up with are compared with the paths of the same
batch in the json format. The names: every hostile one the CMake plugin must
survive (issue 15) and a few hundred random ones drawn from the bytes that
matter to CMake's reader and lists. Which names a list cannot carry is
decided here independently (a ';', unbalanced '[' ']', a trailing '\\') and
compared with where the format put them. --checked: the mark is older than a
change made right after the check, and not older than a file touched before
it, beyond the nanosecond."""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "walk"))
from clitest import FAILURES, check  # noqa: E402

HOSTILE = [
    b"plain.c", b"${VAR}.c", b"$ENV{HOME}.c", b'q"uote.c', b"back\\slash.c", b"par).c",
    b"nl\nx.c", b"br[==[x.c", b"nu\xff\xfe.c", b'"); message(FATAL_ERROR x',
    b'") message(FATAL_ERROR x', b"cr\r\nlf.c", b"lone\rcr.c", b"\nlead.c", b"end]=",
    b"x]=]y", b"[ok].c", b"a;b.c", b"x[.c", b"y].c", b"trail\\", b"]]", b"[[", b"][",
    b"$<1:genex>.c", b"@VAR@.c", b"#comment.c", b"sp ace.c", b"\t.c", b"caf\xc3\xa9.c",
    b"]=]=]==]", b"\\;", b"x\\", b"tail\r",
]
ALPHABET = [b"a", b"b", b"[", b"]", b"=", b";", b"\\", b"$", b"{", b"}", b'"', b"\r",
            b"\n", b"(", b")", b"#", b" ", b"\xff", b"\xc3\xa9", b"@", b"<", b">"]


def expect_listable(name):
    return b";" not in name and name.count(b"[") == name.count(b"]") \
        and not name.endswith(b"\\")


def random_names(rng, n):
    names = set()
    while len(names) < n:
        k = 1 + int(rng.random() * 8)
        name = b"".join(ALPHABET[int(rng.random() * len(ALPHABET))] for _ in range(k))
        if name not in (b".", b".."):
            names.add(name)
    return sorted(names)


READER = r"""
include("${SCRIPT}")
set(i 0)
foreach(e IN LISTS TRAWL_BATCH_1)
  math(EXPR i "${i} + 1")
  file(WRITE "${OUT}/list-${i}" "${e}")
endforeach()
file(WRITE "${OUT}/list-count" "${i}")
foreach(j RANGE 1 ${TRAWL_BATCH_1_UNLISTABLE})
  if(j GREATER 0)
    file(WRITE "${OUT}/unlistable-${j}" "${TRAWL_BATCH_1_UNLISTABLE_${j}}")
  endif()
endforeach()
file(WRITE "${OUT}/unlistable-count" "${TRAWL_BATCH_1_UNLISTABLE}")
file(WRITE "${OUT}/id" "${TRAWL_BATCH_1_ID}")
file(WRITE "${OUT}/count" "${TRAWL_BATCH_COUNT}")
"""


def read(path):
    with open(path, "rb") as f:
        return f.read()


def round_trip(trawl, tmp, label, names):
    tree = os.path.join(tmp, label)
    os.makedirs(tree)
    for n in names:
        with open(os.path.join(os.fsencode(tree), n), "wb"):
            pass
    queries = os.path.join(tmp, label + ".jsonl")
    with open(queries, "w") as f:
        f.write(json.dumps({"id": "x;y", "root": tree, "include": ["*"]}) + "\n")
    js = subprocess.run([trawl, "batch", queries], stdout=subprocess.PIPE, check=True).stdout
    want = [p.encode("utf-8", "surrogateescape") for p in json.loads(js)["paths"]]
    check("%s: json lists every name" % label, want, sorted(names))
    script = os.path.join(tmp, label + ".cmake")
    with open(script, "wb") as f:
        subprocess.run([trawl, "batch", "--format", "cmake", queries], stdout=f, check=True)
    out = os.path.join(tmp, label + ".out")
    os.makedirs(out)
    reader = os.path.join(tmp, "reader.cmake")
    with open(reader, "w") as f:
        f.write(READER)
    p = subprocess.run(["cmake", "-DSCRIPT=" + script, "-DOUT=" + out, "-P", reader],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    check("%s: cmake reads the script back without a message" % label,
          (p.returncode, p.stdout.decode("utf-8", "replace")), (0, ""))
    n_list = int(read(os.path.join(out, "list-count")))
    n_un = int(read(os.path.join(out, "unlistable-count")))
    got_list = [read(os.path.join(out, "list-%d" % i)) for i in range(1, n_list + 1)]
    got_un = [read(os.path.join(out, "unlistable-%d" % j)) for j in range(1, n_un + 1)]
    check("%s: the list holds exactly the listable names, in order" % label,
          got_list, [n for n in want if expect_listable(n)])
    check("%s: every other name is set alone, in order" % label,
          got_un, [n for n in want if not expect_listable(n)])
    check("%s: id and count" % label,
          (read(os.path.join(out, "id")), read(os.path.join(out, "count"))), (b'"x;y"', b"1"))


def test_checked(trawl, tmp):
    tree = os.path.join(tmp, "mark-tree")
    os.makedirs(os.path.join(tree, "src"))
    cache = os.path.join(tmp, "mark.cache")
    queries = os.path.join(tmp, "mark.jsonl")
    with open(queries, "w") as f:
        f.write(json.dumps({"id": 1, "root": tree, "include": ["src/*.c"]}) + "\n")
    subprocess.run([trawl, "batch", "--cache", cache, queries], stdout=subprocess.PIPE, check=True)
    before = os.path.join(tmp, "before")
    mark = os.path.join(tmp, "mark")
    for round_ in range(20):
        with open(before, "w"):
            pass
        p = subprocess.run([trawl, "check", "--checked", mark, "--cache", cache])
        if p.returncode != 0:
            check("check --checked exits 0 on an unchanged tree", p.returncode, 0)
            return
        name = os.path.join(tree, "src", "n%d.txt" % round_)
        with open(name, "w"):
            pass
        m = os.stat(mark).st_mtime_ns
        if not (os.stat(os.path.join(tree, "src")).st_mtime_ns > m
                and m + 1 >= os.stat(before).st_mtime_ns):
            check("round %d: before <= mark + 1ns < a change made after" % round_, False, True)
            return
        os.remove(name)
    check("20 rounds: before <= mark + 1ns < a change made after", True, True)
    p = subprocess.run([trawl, "check", "--checked", os.path.join(tmp, "no", "such", "mark"),
                        "--cache", cache], stderr=subprocess.PIPE)
    check("--checked in a missing directory: exit 3 naming it",
          (p.returncode, b"no/such/mark" in p.stderr), (3, True))


def main():
    trawl = sys.argv[1]
    if shutil.which("cmake") is None:
        print("cmake not found")
        return 77
    tmp = tempfile.mkdtemp(prefix="trawl-format-cmake-")
    try:
        round_trip(trawl, tmp, "hostile", HOSTILE)
        round_trip(trawl, tmp, "random", random_names(random.Random(15), 300))
        p = subprocess.run([trawl, "batch", "--format", "xml", "-"], input=b"",
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check("--format xml: exit 2, nothing on stdout", (p.returncode, p.stdout), (2, b""))
        p = subprocess.run([trawl, "batch", "--format", "cmake", "-"], input=b"",
                           stdout=subprocess.PIPE)
        check("no query: only the count", p.stdout, b"set(TRAWL_BATCH_COUNT 0)\n")
        test_checked(trawl, tmp)
    finally:
        shutil.rmtree(tmp)
    print("%d failed" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
