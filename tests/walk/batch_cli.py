#!/usr/bin/env python3
"""`trawl batch` end to end.

    batch_cli.py TRAWL_EXE [--seed N] [--seeds K] [--keep]

1. Malformed input, one table row per fault: bad JSON of many kinds (a
   truncated line, trailing commas, bytes that are not UTF-8, a bare control
   character, ...), unknown and repeated keys, a repeated id, a missing id or
   include, a wrong type for every key, a bad dialect, a bad pattern in one
   query among good ones, roots that are missing or not directories. Each
   row is put on line 3 of a file between good queries and a blank line:
   exit 2, nothing on stdout, and stderr names line 3 (with the column, for
   JSON syntax) and the field, and no other line. Several bad lines are all
   reported.
2. Grouped == separate: on generated trees (random directories and files,
   hidden names, a git work tree with .gitignore files, node_modules, links,
   names that need escaping), random queries over several spellings of a
   few roots, all answered by one `trawl batch`, must give for every query
   exactly the paths of a separate `trawl -C ROOT ... --format json` with
   the equivalent options, order included. --stats must count one walk per
   (root directory, ignore, follow), and the directories the batch read may
   not exceed what the separate walks read together.
3. The output: ids echoed exactly as written (strings with escapes, large
   and negative integers), input order, paths escaped byte for byte as
   `trawl --format json` escapes them, empty input, '-' for stdin, CRLF
   lines, problems printed once per walk, --strict, --stats, options.

Exits 0 when everything holds, 1 with every failure printed.
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "diff"))
from diffgen import sanitizer_said  # noqa: E402

FAILURES = []
CHECKS = [0]
TALLY = {"nonempty": 0, "paths": 0}


def check(what, ok, detail=""):
    CHECKS[0] += 1
    if not ok:
        FAILURES.append(what)
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "backslashreplace")
        print("FAIL %s%s" % (what, ("\n  " + detail.replace("\n", "\n  ")) if detail else ""))


class Trawl:
    def __init__(self, exe, cwd, env):
        self.exe, self.cwd, self.env = exe, cwd, env

    def run(self, args, stdin=None):
        p = subprocess.run([self.exe] + args, input=stdin, cwd=self.cwd, env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        err = p.stderr.decode("utf-8", "surrogateescape")
        if sanitizer_said(err):
            check("no sanitizer report: trawl %s" % " ".join(args), False, err[:3000])
        return p.returncode, p.stdout, err

    def batch(self, lines, args=(), name="q.jsonl"):
        """Write LINES (str or bytes each) to NAME and run `trawl batch`."""
        data = b"".join((l.encode() if isinstance(l, str) else l) + b"\n" for l in lines)
        with open(os.path.join(self.cwd, name), "wb") as f:
            f.write(data)
        return self.run(["batch"] + list(args) + [name])


def q(**kw):
    return json.dumps(kw)


# ---- 1. Malformed input ----

GOOD = '{"id": "g%d", "include": ["*.c"]}'

# (label, the bad line, what stderr must say after "q.jsonl:3": a field
# (": FIELD:") or a JSON column (":COL: invalid JSON")).
MALFORMED = [
    ("truncated line", '{"id": 1, "include": ["a"', ("col", 26)),
    ("truncated in a string", '{"id": 1, "include": ["a', ("col", 23)),
    ("trailing comma in an object", '{"id": 1, "include": ["a"],}', ("col", 28)),
    ("trailing comma in an array", '{"id": 1, "include": ["a",]}', ("col", 27)),
    ("missing comma", '{"id": 1 "include": ["a"]}', ("col", 10)),
    ("missing colon", '{"id" 1, "include": ["a"]}', ("col", 7)),
    ("single quotes", "{'id': 1, 'include': ['a']}", ("col", 2)),
    ("unquoted key", '{id: 1, "include": ["a"]}', ("col", 2)),
    ("trailing garbage", '{"id": 1, "include": ["a"]} x', ("col", 29)),
    ("two objects", '{"id": 1, "include": ["a"]}{"id": 2}', ("col", 28)),
    ("invalid UTF-8 byte", b'{"id": "\xff", "include": ["a"]}', ("col", 9)),
    ("overlong UTF-8", b'{"id": 1, "include": ["\xc0\xaf"]}', ("col", 24)),
    ("UTF-8 surrogate", b'{"id": 1, "include": ["\xed\xa0\x80"]}', ("col", 24)),
    ("truncated UTF-8", b'{"id": 1, "include": ["\xe2\x82"]}', ("col", 24)),
    ("bare tab in a string", '{"id": 1, "include": ["a\tb"]}', ("col", 25)),
    ("bare CR in a string", '{"id": 1, "include": ["a\rb"]}', ("col", 25)),
    ("bare NUL in a string", b'{"id": 1, "include": ["a\0b"]}', ("col", 25)),
    ("NUL outside a string", b'{"id": 1,\0 "include": ["a"]}', ("col", 10)),
    ("bad escape", '{"id": 1, "include": ["a\\x"]}', ("col", 25)),
    ("short \\u escape", '{"id": 1, "include": ["\\u12"]}', ("col", 24)),
    ("lone high surrogate", '{"id": 1, "include": ["\\ud800"]}', ("col", 24)),
    ("lone low surrogate", '{"id": 1, "include": ["\\udc00"]}', ("col", 24)),
    ("leading zero", '{"id": 01, "include": ["a"]}', ("col", 8)),
    ("bare minus", '{"id": -, "include": ["a"]}', ("col", 8)),
    ("NaN", '{"id": NaN, "include": ["a"]}', ("col", 8)),
    ("True", '{"id": 1, "include": ["a"], "hidden": True}', ("col", 39)),
    ("comment", '{"id": 1, "include": ["a"]} // x', ("col", 29)),
    ("byte order mark", b'\xef\xbb\xbf{"id": 1, "include": ["a"]}', ("col", 1)),
    ("nesting too deep", '{"id": 1, "include": ["a"], "x": ' + "[" * 70 + "]" * 70 + "}",
     ("col", 34 + 63)),
    ("not an object: array", '[{"id": 1, "include": ["a"]}]', ("msg", "JSON object")),
    ("not an object: string", '"x"', ("msg", "JSON object")),
    ("not an object: null", "null", ("msg", "JSON object")),
    ("unknown key", '{"id": 1, "include": ["a"], "colour": "red"}', ("field", "colour")),
    ("unknown key, case", '{"id": 1, "Include": ["a"]}', ("field", "Include")),
    ("duplicate key", '{"id": 1, "include": ["a"], "include": ["b"]}', ("field", "include")),
    ("duplicate key, escaped", '{"id": 1, "include": ["a"], "\\u0069d": 2}', ("field", "id")),
    ("duplicate id", '{"id": "g1", "include": ["a"]}', ("field", "id")),
    ("duplicate id, escaped", '{"id": "\\u00671", "include": ["a"]}', ("field", "id")),
    ("missing id", '{"include": ["a"]}', ("field", "id")),
    ("missing include", '{"id": 1}', ("field", "include")),
    ("empty include", '{"id": 1, "include": []}', ("field", "include")),
    ("empty object", "{}", ("field", "id")),
    ("id true", '{"id": true, "include": ["a"]}', ("field", "id")),
    ("id null", '{"id": null, "include": ["a"]}', ("field", "id")),
    ("id fraction", '{"id": 1.5, "include": ["a"]}', ("field", "id")),
    ("id exponent", '{"id": 1e3, "include": ["a"]}', ("field", "id")),
    ("id array", '{"id": [1], "include": ["a"]}', ("field", "id")),
    ("id object", '{"id": {}, "include": ["a"]}', ("field", "id")),
    ("root number", '{"id": 1, "root": 1, "include": ["a"]}', ("field", "root")),
    ("root array", '{"id": 1, "root": ["."], "include": ["a"]}', ("field", "root")),
    ("root null", '{"id": 1, "root": null, "include": ["a"]}', ("field", "root")),
    ("root empty", '{"id": 1, "root": "", "include": ["a"]}', ("field", "root")),
    ("root with NUL", '{"id": 1, "root": ".\\u0000", "include": ["a"]}', ("field", "root")),
    ("include string", '{"id": 1, "include": "a"}', ("field", "include")),
    ("include object", '{"id": 1, "include": {}}', ("field", "include")),
    ("include number", '{"id": 1, "include": ["a", 2]}', ("field", "include[1]")),
    ("include null", '{"id": 1, "include": [null]}', ("field", "include[0]")),
    ("include nested", '{"id": 1, "include": [["a"]]}', ("field", "include[0]")),
    ("include with NUL", '{"id": 1, "include": ["a\\u0000b"]}', ("field", "include[0]")),
    ("exclude string", '{"id": 1, "include": ["a"], "exclude": "b"}', ("field", "exclude")),
    ("exclude number", '{"id": 1, "include": ["a"], "exclude": ["b", 1]}', ("field", "exclude[1]")),
    ("hidden string", '{"id": 1, "include": ["a"], "hidden": "yes"}', ("field", "hidden")),
    ("hidden number", '{"id": 1, "include": ["a"], "hidden": 1}', ("field", "hidden")),
    ("hidden null", '{"id": 1, "include": ["a"], "hidden": null}', ("field", "hidden")),
    ("ignore string", '{"id": 1, "include": ["a"], "ignore": "no"}', ("field", "ignore")),
    ("ignore number", '{"id": 1, "include": ["a"], "ignore": 0}', ("field", "ignore")),
    ("follow string", '{"id": 1, "include": ["a"], "follow": "true"}', ("field", "follow")),
    ("follow array", '{"id": 1, "include": ["a"], "follow": [true]}', ("field", "follow")),
    ("dialect number", '{"id": 1, "include": ["a"], "dialect": 1}', ("field", "dialect")),
    ("dialect array", '{"id": 1, "include": ["a"], "dialect": ["git"]}', ("field", "dialect")),
    ("dialect unknown", '{"id": 1, "include": ["a"], "dialect": "perl"}', ("field", "dialect")),
    ("dialect case", '{"id": 1, "include": ["a"], "dialect": "Git"}', ("field", "dialect")),
    ("dialect empty", '{"id": 1, "include": ["a"], "dialect": ""}', ("field", "dialect")),
    ("type string", '{"id": 1, "include": ["a"], "type": "f"}', ("field", "type")),
    ("type empty", '{"id": 1, "include": ["a"], "type": []}', ("field", "type")),
    ("type unknown", '{"id": 1, "include": ["a"], "type": ["f", "x"]}', ("field", "type[1]")),
    ("type long name misspelt", '{"id": 1, "include": ["a"], "type": ["files"]}', ("field", "type[0]")),
    ("type number", '{"id": 1, "include": ["a"], "type": [1]}', ("field", "type[0]")),
    ("max_depth negative", '{"id": 1, "include": ["a"], "max_depth": -1}', ("field", "max_depth")),
    ("max_depth fraction", '{"id": 1, "include": ["a"], "max_depth": 1.5}', ("field", "max_depth")),
    ("max_depth string", '{"id": 1, "include": ["a"], "max_depth": "3"}', ("field", "max_depth")),
    ("max_depth exponent", '{"id": 1, "include": ["a"], "max_depth": 1e2}', ("field", "max_depth")),
    ("max_depth huge", '{"id": 1, "include": ["a"], "max_depth": 99999999999}', ("field", "max_depth")),
    ("bad pattern among good ones", '{"id": 1, "include": ["**/*.c", "a[", "*.h"]}',
     ("field", "include[1]")),
    ("bad brace", '{"id": 1, "include": ["{a,b"]}', ("field", "include[0]")),
    ("bad exclude pattern", '{"id": 1, "include": ["**"], "exclude": ["ok", "x\\\\"]}',
     ("field", "exclude[1]")),
    ("bad pattern in its dialect", '{"id": 1, "include": ["a**b/c"], "dialect": "bazel"}',
     ("field", "include[0]")),
    ("missing root", '{"id": 1, "root": "no/such/dir", "include": ["a"]}', ("field", "root")),
    ("root is a file", '{"id": 1, "root": "afile", "include": ["a"]}', ("field", "root")),
]


def malformed_checks(t):
    with open(os.path.join(t.cwd, "afile"), "w") as f:
        f.write("x")
    for label, bad, (kind, want) in MALFORMED:
        code, out, err = t.batch([GOOD % 1, "", bad, GOOD % 4])
        if kind == "col":
            said = "q.jsonl:3:%d: invalid JSON: " % want in err
        elif kind == "field":
            said = "q.jsonl:3: %s: " % want in err
        else:
            said = re.search(r"q\.jsonl:3: .*%s" % want, err) is not None
        lines = set(re.findall(r"q\.jsonl:(\d+):", err))
        check("malformed: %s: exit 2, stdout empty, stderr names line 3 and %s %s"
              % (label, kind, want),
              code == 2 and out == b"" and said and lines == {"3"},
              "exit %d, stdout %r\nstderr: %s" % (code, out[:200], err))

    # Several bad lines: every one reported, no good one.
    lines = [GOOD % 1, '{"id": 2, "include": ["a["]}', GOOD % 3, "",
             '{"id": 5, "include": ["a"],}', '{"id": 6, "hidden": 1, "include": ["b"]}',
             GOOD % 7, '{"id": 8, "root": "no/such", "include": ["a"]}', GOOD % 9,
             '{"id": "g1", "include": ["a"]}']
    code, out, err = t.batch(lines)
    named = set(re.findall(r"q\.jsonl:(\d+):", err))
    # Line 8's root is checked only once every line is well-formed.
    check("several bad lines: all reported, exit 2, nothing printed",
          code == 2 and out == b"" and named == {"2", "5", "6", "10"},
          "exit %d, lines named %s\nstderr: %s" % (code, sorted(named), err))
    check("a bad line with several faults: each field named",
          all(("q.jsonl:6: %s:" % f) in err for f in ("hidden",)) and
          "q.jsonl:5:28: invalid JSON" in err, err)
    code, out, err = t.batch(['{"id": 1, "hidden": 1, "follow": "x", "include": ["a[", "b{"],'
                              ' "bogus": 0}'])
    check("one line, every bad field reported",
          code == 2 and out == b"" and all("q.jsonl:1: %s:" % f in err for f in
                                           ("hidden", "follow", "include[0]", "include[1]",
                                            "bogus")), err)
    check("a pattern error shows the caret line", "\n  a[\n   ^\n" in err, err)

    # Roots: every query whose root cannot be walked, nothing printed.
    code, out, err = t.batch([GOOD % 1, '{"id": 2, "root": "nope", "include": ["*"]}', GOOD % 3,
                              '{"id": 4, "root": "afile", "include": ["*"]}'])
    check("missing roots: both named, exit 2, nothing printed",
          code == 2 and out == b"" and "q.jsonl:2: root: nope" in err and
          "q.jsonl:4: root: afile" in err and "q.jsonl:1:" not in err, err)

    code, out, err = t.run(["batch", "no-such-file.jsonl"])
    check("unreadable QUERIES: exit 2 naming it", code == 2 and out == b"" and
          "no-such-file.jsonl" in err, err)
    code, out, err = t.run(["batch", "."])
    check("a directory as QUERIES: exit 2 naming it", code == 2 and out == b"" and
          "trawl: .:" in err, err)
    code, out, err = t.run(["batch", "-"], stdin=b'{"id": 1}\n')
    check("stdin is named <stdin> in messages", code == 2 and "<stdin>:1: include:" in err, err)


# ---- 2. Grouped == separate ----

DIR_NAMES = [b"src", b"lib", b"include", b"test", b"node_modules", b"build", b".hidden",
             b".cache", b"docs", b"a", b"b", b"vendor", b"sub dir", b"caf\xc3\xa9"]
FILE_BASES = [b"main", b"util", b"x", b".env", b".hidden", b"README", b"keep", b"we ird",
              b"\xff\xfe", b'q"uote', b"n\nl", b"back\\slash", b"tab\tx"]
EXTS = [b".c", b".h", b".ts", b".md", b"", b".o", b".txt"]
IGNORE_RULES = ["build/", "*.o", "!keep.o", "*.log", "/docs/", "node_modules/", "*.txt"]

# Patterns that compile in every dialect, and those only the trawl dialect
# reads as intended.
COMMON_INCLUDES = ["**/*.c", "src/**", "**/.hidden/*", "**", "*.c", "lib/*", "**/*.o",
                   "docs/*.md", "*/*/*", "**/main*", "sub dir/*", "**/b/**", ".cache/**",
                   "**/keep.o", "**/*", "a/**/b/*", "**/.*", "**/node_modules/**",
                   "include/**/*.h"]
# '?' in every dialect but bazel (Bazel 4.2.3 refuses it, and so does the dialect).
NOT_BAZEL_INCLUDES = ["?/*"]
TRAWL_INCLUDES = ["{a,b}/*.h", "src/**/*.{c,h}", "[a-m]*/**", "{src,lib}/**",
                  "**/{.hidden,.cache}/*"]
EXCLUDES = ["**/node_modules/**", "build/**", "**/*.o", "**/.hidden", "src/**/*.h", "lib",
            "**/test/**", "*.c", "**/b", "docs/**"]
DIALECTS = ["trawl", "git", "cmake", "bazel"]


def generate(rng, root, depth=0):
    used = set()
    for _ in range(rng.randrange(6)):
        name = rng.choice(FILE_BASES) + rng.choice(EXTS)
        if name not in used:
            used.add(name)
            with open(os.path.join(root, name), "wb") as f:
                f.write(b"x")
    names = [b"src", b"lib", b"node_modules", b".hidden"] if depth == 0 else []
    names += [rng.choice(DIR_NAMES) for _ in range(rng.randrange(max(1, 5 - depth)))]
    made = []
    for name in names:
        if name in used or depth >= 4:
            continue
        used.add(name)
        os.mkdir(os.path.join(root, name))
        made.append(name)
    if rng.randrange(3) == 0:
        with open(os.path.join(root, b".gitignore"), "w") as f:
            f.write("\n".join(rng.sample(IGNORE_RULES, 2)) + "\n")
    if rng.randrange(8) == 0:
        with open(os.path.join(root, b".ignore"), "w") as f:
            f.write(rng.choice(IGNORE_RULES) + "\n")
    if made and rng.randrange(5) == 0 and b"ln-dir" not in used:
        os.symlink(rng.choice(made), os.path.join(root, b"ln-dir"))
    if depth == 1 and rng.randrange(6) == 0 and b"ln-up" not in used:
        os.symlink(b"..", os.path.join(root, b"ln-up"))  # a loop when followed
    if rng.randrange(6) == 0 and b"ln-file.c" not in used:
        os.symlink(b"main.c", os.path.join(root, b"ln-file.c"))
    for name in made:
        generate(rng, os.path.join(root, name), depth + 1)


def random_query(rng, qid, roots):
    dialect = rng.choice(DIALECTS) if rng.randrange(3) == 0 else None
    pool = COMMON_INCLUDES + (TRAWL_INCLUDES if dialect in (None, "trawl") else []) + (
        NOT_BAZEL_INCLUDES if dialect != "bazel" else [])
    query = {"id": qid, "root": rng.choice(roots),
             "include": rng.sample(pool, rng.randrange(1, 4))}
    if rng.randrange(2):
        query["exclude"] = rng.sample(EXCLUDES, rng.randrange(0, 3))
    if dialect:
        query["dialect"] = dialect
    for key, chance in (("hidden", 2), ("ignore", 4), ("follow", 6)):
        if rng.randrange(chance) == 0:
            query[key] = rng.choice([True, False])
    if rng.randrange(3) == 0:
        query["type"] = rng.sample(["f", "d", "l"], rng.randrange(1, 4))
    if rng.randrange(4) == 0:
        query["max_depth"] = rng.randrange(0, 5)
    return query


def separate_args(query):
    """The walk command's options for QUERY."""
    args = ["-C", query.get("root", ".")]
    for x in query.get("exclude", []):
        args += ["-x", x]
    if query.get("hidden"):
        args.append("-H")
    if query.get("ignore") is False:
        args.append("-I")
    if query.get("follow"):
        args.append("-L")
    if "type" in query:
        args += ["-t", ",".join(query["type"])]
    if "max_depth" in query:
        args += ["-d", str(query["max_depth"])]
    if "dialect" in query:
        args += ["--dialect", query["dialect"]]
    return args + ["--format", "json", "--stats", "--"] + query["include"]


STATS = re.compile(r"^trawl: (\d+) quer(?:y|ies), (\d+) walks?, (\d+) director(?:y|ies) read, "
                   r"[0-9.]+ ms$", re.M)


def expected_walks(queries, cwd):
    keys = {}
    for query in queries:
        st = os.stat(os.path.join(cwd, query.get("root", ".")))
        key = (st.st_dev, st.st_ino, query.get("ignore", True), query.get("follow", False))
        keys[key] = keys.get(key, 0) + 1
    return sum((n + 63) // 64 for n in keys.values())


def compare_seed(t, seed, have_git):
    rng = random.Random(seed)
    tree = "tree%d" % seed
    top = os.path.join(t.cwd, tree)
    os.mkdir(top)
    if have_git and rng.randrange(4):
        subprocess.run(["git", "init", "-q", top], check=True, env=t.env, capture_output=True)
    generate(rng, os.fsencode(top))
    if not os.path.isdir(os.path.join(top, "src", "a")):
        os.makedirs(os.path.join(top, "src", "a"))
    # One directory spelled four ways, and two below it. (The default root,
    # ".", is the directory that holds every tree: tested in output_checks.)
    roots = [tree, "./" + tree, tree + "/src/..", top, os.path.join(top, "src"),
             os.path.join(top, "src", "a")]
    queries = [random_query(rng, i if i % 3 else "q%d" % i, roots) for i in range(36)]
    lines = []
    for query in queries:
        lines.append(json.dumps(query))
        if rng.randrange(6) == 0:
            lines.append(rng.choice(["", "   ", "\t\r"]))
    label = "seed %d (%s)" % (seed, top)

    results = {}
    for jobs in ("-j1", "-j3"):
        code, out, err = t.batch(lines, args=[jobs, "--stats"], name="s%d.jsonl" % seed)
        recs = [json.loads(l) for l in out.decode("utf-8", "surrogateescape").splitlines()]
        check("%s %s: exit 0, one line per query, ids in order" % (label, jobs),
              code == 0 and [r["id"] for r in recs] == [x["id"] for x in queries],
              "exit %d\nstderr: %s" % (code, err[:2000]))
        if code != 0:
            return 0
        results[jobs] = recs
        m = STATS.search(err)
        want = expected_walks(queries, t.cwd)
        check("%s %s: --stats counts %d walks" % (label, jobs, want),
              m is not None and int(m.group(1)) == len(queries) and int(m.group(2)) == want,
              err[-500:])
        results[jobs + "dirs"] = int(m.group(3)) if m else 0
    check("%s: -j1 and -j3 agree" % label, results["-j1"] == results["-j3"])

    separate_dirs = 0
    for rec in results["-j1"]:
        TALLY["nonempty"] += bool(rec["paths"])
        TALLY["paths"] += len(rec["paths"])
    for query, rec in zip(queries, results["-j1"]):
        code, out, err = t.run(separate_args(query))
        m = re.search(r"directories opened: (\d+)", err)
        separate_dirs += int(m.group(1)) if m else 0
        want = json.loads(out.decode("utf-8", "surrogateescape"))["paths"] if code == 0 else None
        if want != rec["paths"]:
            only_b = sorted(set(rec["paths"]) - set(want or []))[:8]
            only_s = sorted(set(want or []) - set(rec["paths"]))[:8]
            check("%s: query %r == separate run" % (label, query["id"]), False,
                  "query: %s\nseparate: trawl %s (exit %d)\nonly batch: %r\nonly separate: %r\n"
                  "order differs only: %s"
                  % (json.dumps(query), " ".join(separate_args(query)), code, only_b, only_s,
                     sorted(want or []) == sorted(rec["paths"])))
        else:
            check("%s: query %r == separate run" % (label, query["id"]), True)
    check("%s: the batch read no more directories (%d) than the separate walks (%d)"
          % (label, results["-j1dirs"], separate_dirs), results["-j1dirs"] <= separate_dirs)
    return len(queries)


def grouping_checks(t):
    """Same root spelled three ways, every per-query setting different: one walk."""
    top = os.path.join(t.cwd, "g")
    for d in ("src/a", "lib", ".h", "node_modules/m"):
        os.makedirs(os.path.join(top, d))
    for f in ("src/a/x.c", "src/y.h", "lib/z.c", ".h/w.c", "node_modules/m/n.c", "top.c"):
        open(os.path.join(top, f), "w").close()
    base = [
        {"include": ["**/*.c"]},
        {"root": "g/.", "include": ["src/**"], "hidden": True, "type": ["f", "d"]},
        {"root": os.path.join(top, "lib", ".."), "include": ["**"], "exclude": ["lib/**"],
         "max_depth": 2},
        {"include": ["**/*.c"], "dialect": "git"},
        {"include": ["*"], "dialect": "bazel", "type": ["d"]},
        {"include": ["**/n.c"], "exclude": ["**/node_modules/**"]},
    ]
    queries = []
    for i, extra in enumerate(base):
        query = {"id": i, "root": "g"}
        query.update(extra)
        queries.append(query)
    code, out, err = t.batch([json.dumps(x) for x in queries], args=["--stats"])
    m = STATS.search(err)
    check("grouping: one root spelled three ways, other settings differing: 1 walk",
          code == 0 and m is not None and m.group(1, 2) == ("6", "1"), err)
    queries.append({"id": "noignore", "root": "g", "include": ["**"], "ignore": False})
    queries.append({"id": "follow", "root": "g", "include": ["**"], "follow": True})
    queries.append({"id": "other", "root": "g/src", "include": ["**"]})
    code, out, err = t.batch([json.dumps(x) for x in queries], args=["--stats"])
    m = STATS.search(err)
    check("grouping: ignore, follow and another root each make a walk: 4 walks",
          code == 0 and m is not None and m.group(1, 2) == ("9", "4"), err)
    many = [{"id": i, "root": "g", "include": ["**/*.c"]} for i in range(130)]
    code, out, err = t.batch([json.dumps(x) for x in many], args=["--stats"])
    m = STATS.search(err)
    check("grouping: 130 queries of one root: 3 walks of at most 64",
          code == 0 and m is not None and m.group(1, 2) == ("130", "3"), err)
    recs = [json.loads(l) for l in out.splitlines()]
    check("grouping: 130 queries answered alike", len(recs) == 130 and
          all(r["paths"] == recs[0]["paths"] for r in recs) and recs[0]["paths"] ==
          ["lib/z.c", "node_modules/m/n.c", "src/a/x.c", "top.c"] and
          [r["id"] for r in recs] == list(range(130)), out[:300])


# ---- 3. The output ----

def output_checks(t):
    top = os.path.join(t.cwd, "o")
    os.makedirs(os.path.join(top, "d"))
    names = [b"plain.c", b"n\nl.c", b'q"uote.c', b"back\\slash.c", b"\xff.c", b"caf\xc3\xa9.c",
             b"tab\t.c", b"\x01ctl.c", b"d/x.c"]
    for n in names:
        open(os.path.join(os.fsencode(top), n), "wb").close()

    # Ids echoed exactly, whitespace around them dropped, input order kept.
    ids = ['"a\\u0041\\"\\\\\\/\u00e9\\ud83d\\ude00\\n"', "12345678901234567890", "-0", "-7",
           '""', '"\\udcff"', "1"]
    lines = ['{"include": ["*.c"], "id" :  %s , "root": "o"}' % i for i in ids]
    code, out, err = t.batch(lines)
    got = out.decode("utf-8", "surrogateescape").split("\n")
    check("ids echoed exactly as written, in input order",
          code == 0 and [l[len('{"id":'):l.index(',"paths":')] for l in got[:-1]] == ids and
          got[-1] == "", "exit %d\n%s\n%s" % (code, out[:600], err))
    code, out, err = t.batch(['{"id": 0, "include": ["*"]}', '{"id": -0, "include": ["*"]}'])
    check("0 and -0 are the same id", code == 2 and "q.jsonl:2: id:" in err, err)
    code, out, err = t.batch(['{"id": 1, "include": ["*"]}', '{"id": "1", "include": ["*"]}'])
    check("1 and \"1\" are different ids", code == 0, err)

    # Paths escaped byte for byte as the walk's json format escapes them.
    code, out, err = t.batch(['{"id": 1, "root": "o", "include": ["**"], "hidden": true}'])
    code2, doc, _ = t.run(["-C", "o", "-H", "--format", "json", "**"])
    raw = [l.rstrip(b",") for l in doc.split(b"\n")[1:-2]]
    check("paths escaped byte for byte as `trawl --format json`",
          code == 0 and code2 == 0 and out == b'{"id":1,"paths":[' + b",".join(raw) + b"]}\n",
          "%r\n%r" % (out, doc))
    check("one line per query, whatever the names", out.count(b"\n") == 1)

    # Long names and paths (a spool keeps lengths under 128 in one byte each,
    # longer ones as varints): the same bytes as the walk's json format.
    deep = os.path.join(t.cwd, "long")
    names = ["n" * 130, "m" * 200 + "\t", "x"]
    os.makedirs(os.path.join(deep, names[0], names[1]))
    for d in ([], [names[0]], [names[0], names[1]]):
        for n in names:
            open(os.path.join(deep, *d, n + ".c"), "w").close()
    code, out, err = t.batch(['{"id": 1, "root": "long", "include": ["**/*.c"]}',
                              '{"id": 2, "root": "long", "include": ["**/x.c"]}'])
    code2, doc, _ = t.run(["-C", "long", "--format", "json", "**/*.c"])
    raw = [l.rstrip(b",") for l in doc.split(b"\n")[1:-2]]
    code3, doc3, _ = t.run(["-C", "long", "--format", "json", "**/x.c"])
    raw3 = [l.rstrip(b",") for l in doc3.split(b"\n")[1:-2]]
    check("paths of 130 to 470 bytes, as `trawl --format json` prints them",
          code == 0 and code2 == 0 and code3 == 0 and len(raw) == 9 and
          out == b'{"id":1,"paths":[' + b",".join(raw) + b']}\n{"id":2,"paths":[' +
          b",".join(raw3) + b"]}\n", "%r\n%r" % (out[:400], doc[:400]))

    code, out, err = t.batch(['{"id": 1, "include": ["o/d/*"]}'])
    check("no root: the current directory", (code, out) == (0, b'{"id":1,"paths":["o/d/x.c"]}\n'),
          "%r %s" % (out, err))

    # The entry types have one table with the walk's --type: the long names
    # are the short ones.
    code, out, err = t.batch(['{"id": 1, "include": ["o/**"], "type": ["file", "directory"]}',
                              '{"id": 1, "include": ["o/**"], "type": ["f", "d"]}'.replace('"id": 1', '"id": 2')])
    lines = out.split(b"\n")
    check("type: \"file\" and \"directory\" are \"f\" and \"d\"",
          code == 0 and len(lines) == 3 and lines[0][len(b'{"id":1'):] == lines[1][len(b'{"id":2'):]
          and b'"o/d"' in lines[0], "%r %s" % (out, err))

    # A root that is not UTF-8, given as Python writes it (surrogateescape).
    odd = os.path.join(os.fsencode(t.cwd), b"r\xff")
    os.mkdir(odd)
    open(os.path.join(odd, b"\xfe.c"), "wb").close()
    code, out, err = t.batch([json.dumps({"id": 1, "root": os.fsdecode(b"r\xff"),
                                          "include": [os.fsdecode(b"\xfe.c")]})])
    check("a root and a pattern that are not UTF-8, as \\udcXX escapes",
          (code, out) == (0, b'{"id":1,"paths":["\\udcfe.c"]}\n'), "%r %s" % (out, err))

    # Empty input, blank lines, stdin, CRLF.
    code, out, err = t.batch([])
    check("empty input: no output, exit 0", (code, out, err) == (0, b"", ""), err)
    code, out, err = t.batch(["", "  \t", "\r"])
    check("blank lines only: no output, exit 0", (code, out) == (0, b""), err)
    code, out, err = t.run(["batch", "-"], stdin=b'{"id": "s", "root": "o", "include": '
                           b'["d/*"]}\r\n\r\n{"id": 2, "root": "o", "include": ["x"]}\r\n')
    check("'-' reads stdin; CRLF lines", code == 0 and
          out == b'{"id":"s","paths":["d/x.c"]}\n{"id":2,"paths":[]}\n', "%r %s" % (out, err))
    code, out, err = t.run(["batch", "-"], stdin=b"")
    check("empty stdin: no output, exit 0", (code, out) == (0, b""), err)
    code, out, err = t.run(["batch", "-"], stdin=b'{"id": 1, "root": "o", "include": ["d/*"]}')
    check("a last line without a newline", code == 0 and out == b'{"id":1,"paths":["d/x.c"]}\n',
          err)

    # Problems: once per walk; --strict makes them exit 3, the output stays.
    loop = os.path.join(t.cwd, "loop")
    os.makedirs(os.path.join(loop, "d"))
    open(os.path.join(loop, "d", "f.c"), "w").close()
    os.symlink("..", os.path.join(loop, "d", "up"))
    qs = ['{"id": %d, "root": "loop", "include": ["**/*.c"], "follow": true}' % i
          for i in range(3)]
    code, out, err = t.batch(qs)
    problems = [l for l in err.splitlines() if l.startswith("trawl: ")]
    _, _, one = t.run(["-C", "loop", "-L", "**/*.c"])
    check("a walk's problem is printed once for its three queries",
          code == 0 and len(out.splitlines()) == 3 and len(problems) == 1 and
          problems == [l for l in one.splitlines() if l.startswith("trawl: ")], err + one)
    code, out, err = t.batch(qs, args=["--strict"])
    check("--strict: exit 3 after a problem, every query still printed",
          code == 3 and len(out.splitlines()) == 3, err)
    code, out, err = t.batch(['{"id": 1, "root": "loop", "include": ["**/*.c"]}'],
                             args=["--strict"])
    check("--strict without a problem: exit 0", code == 0 and err == "", err)

    # Options.
    code, out, err = t.batch(['{"id": 1, "root": "o", "include": ["d/*"]}'],
                             args=["--stats", "-j4", "--format", "json"])
    check("--stats: one line in its format", code == 0 and
          re.fullmatch(r"trawl: 1 query, 1 walk, \d+ director(y|ies) read, [0-9.]+ ms\n", err)
          is not None, err)
    code, out, err = t.batch(['{"id": 1, "root": "o", "include": ["d/*"]}'], args=["-j1"])
    code2, out2, _ = t.batch(['{"id": 1, "root": "o", "include": ["d/*"]}'], args=["-j", "2"])
    check("-j1 and -j 2 accepted", code == 0 and code2 == 0 and out == out2, err)
    for args, what in ((["--format", "lines"], "--format lines"), (["-j", "-1"], "-j -1"),
                       (["-j", "x"], "-j x"), (["--bogus"], "an unknown option")):
        code, out, err = t.batch(['{"id": 1, "include": ["*"]}'], args=args)
        check("%s: exit 2, nothing printed" % what, code == 2 and out == b"", err)
    code, out, err = t.run(["batch"])
    check("no QUERIES: exit 2", code == 2 and out == b"" and "QUERIES" in err, err)
    code, out, err = t.run(["batch", "a", "b"])
    check("two QUERIES: exit 2", code == 2 and out == b"", err)
    code, out, err = t.run(["batch", "--help"])
    check("batch --help: exit 0, the keys listed", code == 0 and b"max_depth" in out, err)
    code, out, err = t.run(["help"])
    check("trawl help lists batch", code == 0 and b"batch [OPTIONS] QUERIES|-" in out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trawl")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("TRAWL_BATCH_SEED", 1)))
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    exe = os.path.abspath(args.trawl)
    have_git = shutil.which("git") is not None
    if not have_git:
        print("NOTE: git is not installed: no tree is a work tree")

    tmp = tempfile.mkdtemp(prefix="trawl-batch-cli-")
    env = dict(os.environ, HOME=tmp, XDG_CONFIG_HOME=os.path.join(tmp, "xdg"),
               GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", LC_ALL="C")
    t = Trawl(exe, tmp, env)
    answered = 0
    try:
        malformed_checks(t)
        output_checks(t)
        grouping_checks(t)
        for k in range(args.seeds):
            answered += compare_seed(t, args.seed * 1000 + k, have_git)
    finally:
        if args.keep:
            print("kept %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print("batch_cli: %d checks (%d malformed rows; %d generated queries over %d seeds, %d of "
          "them with results, %d paths compared), %d failures"
          % (CHECKS[0], len(MALFORMED), answered, args.seeds, TALLY["nonempty"], TALLY["paths"],
             len(FAILURES)))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
