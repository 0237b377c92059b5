#!/usr/bin/env python3
r"""Hand-written cases for trawl_glob() in real Bazel, one bazel query:

    glob_cases.py TRAWL_EXE WORKDIR

 facts    glob()'s behaviour, asserted of native glob() with a hand-written
          answer; trawl_glob() must give the same answer, and with
          gitignore = True the row's answer for that. Among them the one
          name glob() rewrites (Bazel 4.2.3's StarlarkNativeModule.glob()):
          a path starting with '@' comes back with ':' in front, and the
          list is sorted after that; and tracked files, which git never
          ignores (a file, and files in a directory git ignores).
 errors   a table of bad calls with glob()'s message, word for word: native
          glob() must say it, trawl_glob() the same (without gitignore it
          hands the call to glob()), and trawl_glob(gitignore = True)
          "trawl_glob: " and the same, but for the interpreter's own
          messages about a call's arguments, which name the function (the
          row's text is then in both); calls native accepts must be accepted
          and answered alike.
 names    a tree of hostile file names ('"', '\', "'''", newlines, bytes that
          are not UTF-8, Starlark code), some of them ignored by git, globbed
          both ways; index.bzl must be ASCII.
 limits   where trawl_glob(gitignore = True) departs from glob() less what
          git ignores: the bazel-* links at the top (glob() follows them,
          gitignore = True leaves them out); and a FIFO (listed by neither).
 noise    no DEBUG line but the cases' own: trawl prints nothing on a
          normal command.
"""
import ast
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bazelws  # noqa: E402
from bazelws import star  # noqa: E402

# (call arguments, glob()'s message; None: must not fail). A message that
# starts with "~" is the interpreter's, about the call's arguments: it names
# the function, so only the rest must be in both.
_HINT = " (the default value of allow_empty can be set with --incompatible_disallow_empty_glob)."
ERRORS = [
    ('"*.c"', "in call to glob(), parameter 'include' got value of type 'string', want 'sequence'"),
    ('depset(["*.c"])', "in call to glob(), parameter 'include' got value of type 'depset', want 'sequence'"),
    ("[1]", "expected value of type 'string' for element 0 of 'glob' argument, but got 1 (int)"),
    ('["*.c", None]', "expected value of type 'string' for element 1 of 'glob' argument, but got None (NoneType)"),
    ('["*.c"], exclude = "x"', "in call to glob(), parameter 'exclude' got value of type 'string', want 'sequence'"),
    ('["*.c"], exclude = None', "in call to glob(), parameter 'exclude' got value of type 'NoneType', want 'sequence'"),
    ('["*.c"], exclude = [1]', "expected value of type 'string' for element 0 of 'glob' argument, but got 1 (int)"),
    ('["*.c"], exclude_directories = True',
     "in call to glob(), parameter 'exclude_directories' got value of type 'bool', want 'int'"),
    ('["*.c"], allow_empty = 1', "expected boolean for argument `allow_empty`, got `1`"),
    ('["*.c"], allow_empty = "no"', "expected boolean for argument `allow_empty`, got `no`"),
    ('["*.c"], ["a.c"], 0, True, 5', "~accepts no more than 4 positional arguments but got 5"),
    ('["*.c"], bogus = 1', "~got unexpected keyword argument"),
    ('["?.c"]', "wildcard ? forbidden"),
    ('["*.c", "a/?"]', "wildcard ? forbidden"),
    ('[""]', "pattern cannot be empty"),
    ('["/a"]', "pattern cannot be absolute"),
    ('["a//b"]', "empty segment not permitted"),
    ('["a/"]', "empty segment not permitted"),
    ('["**/"]', "empty segment not permitted"),
    ('["./a"]', "segment '.' not permitted"),
    ('["a/.."]', "segment '..' not permitted"),
    ('["a**"]', "recursive wildcard must be its own segment"),
    ('["***"]', "recursive wildcard must be its own segment"),
    ('["x/a**b/*"]', "recursive wildcard must be its own segment"),
    ('["*.c"], exclude = ["a**"]', "recursive wildcard must be its own segment (in glob pattern 'a**')"),
    ('["*.c"], exclude = ["x/**/*y**"]',
     "recursive wildcard must be its own segment (in glob pattern 'x/**/*y**')"),
    ('["*.c"], exclude = ["/x*"]', "pattern cannot be absolute (in glob pattern '/x*')"),
    ('["*.c"], exclude = ["a//*"]', "empty segment not permitted (in glob pattern 'a//*')"),
    ('["*.c"], exclude = ["./*"]', "segment '.' not permitted (in glob pattern './*')"),
    ('["nope.c"], allow_empty = False',
     "glob pattern 'nope.c' didn't match anything, but allow_empty is set to False" + _HINT),
    ('["d"], allow_empty = False',
     "glob pattern 'd' didn't match anything, but allow_empty is set to False" + _HINT),
    ('["*.c", "nope"], allow_empty = False',
     "glob pattern 'nope' didn't match anything, but allow_empty is set to False" + _HINT),
    ('["*.c"], exclude = ["a.c"], allow_empty = False',
     "all files in the glob have been excluded, but allow_empty is set to False" + _HINT),
    ('[], allow_empty = False',
     "all files in the glob have been excluded, but allow_empty is set to False" + _HINT),
    # Accepted by native glob(), so by trawl_glob() too.
    ("[]", None),
    ('["*.c"], exclude = [""]', None),
    ('["*.c"], exclude = ["/x"]', None),
    ('["*.c"], exclude = ["**/*/"]', None),
    ('["*.c"], exclude = ["r**/*c"]', None),
    ('["*.c"], exclude = ["?"]', None),
    ('["*.c"], exclude = ["a?c"]', None),
    ('["*.c"], exclude_directories = 2', None),
    ('["*.c"], exclude_directories = -1', None),
    ('("*.c",), exclude = ("a.c",)', None),
    ('include = ["*.c"], exclude = ["x"], exclude_directories = 0, allow_empty = True', None),
    ('["d"], exclude_directories = 0, allow_empty = False', None),
    ('["*.c", "*.c"]', None),
    ('["**"], exclude_directories = 0', None),
]

# Facts of native glob(): (name, call, expected answer[, the answer with
# gitignore = True when it differs]). FACTS in the package facts/, whose
# .gitignore (at the top) ignores node_modules/; AT_FACTS in ats/, whose
# .gitignore ignores *.o and ign/.
FACTS = [
    ("hidden file needs an explicit dot", '["*.c"]', ["B.c", "a.c", "fl.c", "z.c", "\351.c"]),
    ("a dot matches hidden files", '[".*"]', [".h.c"]),
    ("exactly * matches hidden files", '["*"]', [".h.c", "B.c", "BUILD", "a.c", "fl.c", "z.c", "\351.c"]),
    ("** enters hidden directories", '["**/x.c"]', [".d/x.c"]),
    ("glob stops at subpackages (BUILD)", '["**/y.c"]', []),
    ("glob stops at subpackages (BUILD.bazel)", '["sub2/**"]', []),
    ("a directory named BUILD makes no package", '["bd/**"]', ["bd/BUILD/q.c", "bd/w.c"]),
    ("directory links are followed", '["lnk/*"]', ["lnk/z2.c"]),
    ("dangling links are dropped", '["dang*"]', []),
    ("exclude_directories = 1 is the default", '["e/**"]', []),
    ("exclude_directories = 0 lists directories, a/** matches a",
     '["e/**"], exclude_directories = 0', ["e"]),
    ("results are sorted bytewise", '["*.c", "**/z2.c"]',
     ["B.c", "a.c", "d/z2.c", "fl.c", "lnk/z2.c", "z.c", "\351.c"]),
    ("an empty result is allowed by default", '["nothing"]', []),
    ("gitignored trees are read", '["**/m.c"]', ["node_modules/m.c"], []),
    (".bazelignore'd trees are not", '["ign/*"]', []),
]
AT_FACTS = [
    ("a path starting with '@' gets ':' in front, sorted after that", '["*"]',
     [".gitignore", ":@at.c", ":@b.o", "=.c", "BUILD", "z.c"],
     [".gitignore", ":@at.c", "=.c", "BUILD", "z.c"]),
    ("only at the start of the path", '["**/*.c"]',
     [":@at.c", ":@d/ign/q.c", ":@d/x.c", "=.c", "d/@y.c", "z.c"],
     [":@at.c", ":@d/x.c", "=.c", "d/@y.c", "z.c"]),
    ("a directory too", '["*"], exclude_directories = 0',
     [".gitignore", ":@at.c", ":@b.o", ":@d", "=.c", "BUILD", "d", "z.c"],
     [".gitignore", ":@at.c", ":@d", "=.c", "BUILD", "d", "z.c"]),
    ("an exclude names the path as it is on disk", '["*"], exclude = ["@at.c", ":@b.o"]',
     [".gitignore", ":@b.o", "=.c", "BUILD", "z.c"],
     [".gitignore", "=.c", "BUILD", "z.c"]),
    ("a pattern names it as it is on disk", '["@at.c", "@d/*"]', [":@at.c", ":@d/x.c"]),
]

# Tracked files (issue 31): in tracked/, whose .gitignore ignores *.o and
# out/, git's index holds t.o, out/k.c and out/d/k2.c. A tracked file is
# never ignored, in an ignored directory too; there nothing else is, and
# only the directories that hold a tracked path are entered (and listed).
TRACKED_FACTS = [
    ("a tracked file is never ignored", '["*.o"]', ["t.o", "u.o"], ["t.o"]),
    ("in an ignored directory, only what git tracks", '["**"]',
     [".gitignore", "BUILD", "a.c", "out/d/k2.c", "out/d/u2.c", "out/k.c", "out/s/s.c", "out/u.c",
      "t.o", "u.o"],
     [".gitignore", "BUILD", "a.c", "out/d/k2.c", "out/k.c", "t.o"]),
    ("and only the directories that hold a tracked path", '["out/**"], exclude_directories = 0',
     ["out", "out/d", "out/d/k2.c", "out/d/u2.c", "out/k.c", "out/s", "out/s/s.c", "out/u.c"],
     ["out", "out/d", "out/d/k2.c", "out/k.c"]),
]
TRACKED = ["t.o", "out/k.c", "out/d/k2.c"]


# What errors/.gitignore ignores in each package of errors/.
IGN_E = {"ign", "ign/i.c", "x.o"}


def fact_lines(facts):
    """Each fact as Starlark that prints 'FACT <native right> <trawl_glob
    right> <gitignore = True right> NAME native trawl_glob gitignore'."""
    def lit(xs):
        return "[" + ", ".join(star(x.encode("latin-1")) for x in xs) + "]"
    lines = ['load("@trawl//bazel:glob.bzl", "trawl_glob")']
    for fact in facts:
        name, call, want = fact[:3]
        gi = fact[3] if len(fact) > 3 else want
        lines.append(
            "n = glob(%s)\nt = trawl_glob(%s)\ng = trawl_glob(%s, gitignore = True)\n"
            "print('FACT', n == %s, t == n, g == %s, %r, n, t, g)" % (
                call, call, call, lit(want), lit(gi), name))
    return ("\n".join(lines) + "\n").encode()


def main():
    trawl, workdir = os.path.abspath(sys.argv[1]), sys.argv[2]
    ws = bazelws.Workspace(workdir, "cases", trawl=trawl)
    w = ws.write
    subprocess.run(["git", "init", "-q", ws.root], check=True)
    w(".gitignore", b"node_modules/\n")
    w(".bazelignore", b"ign\n")
    w("check.bzl", bazelws.CHECK_BZL.encode())
    os.makedirs(ws.path("tools"))
    os.symlink(os.path.join(bazelws.CHECKOUT, "bazel", "tools_bazel"), ws.path("tools/bazel"))

    # facts/
    for f in ["a.c", ".h.c", ".d/x.c", "sub/BUILD", "sub/y.c", "sub2/BUILD.bazel", "sub2/v.c",
              "bd/BUILD/q.c", "bd/w.c", "d/z2.c", "z.c", "B.c", "node_modules/m.c", "ign/i.c"]:
        w("facts/" + f, b"")
    w(b"facts/\xe9.c", b"")
    os.makedirs(ws.path("facts/e"))
    os.symlink("d", ws.path("facts/lnk"))
    os.symlink("nowhere", ws.path("facts/dang.c"))
    os.symlink("z.c", ws.path("facts/fl.c"))
    w("facts/BUILD", fact_lines(FACTS))
    w("ats/.gitignore", b"*.o\nign/\n")
    for f in ["@at.c", "@b.o", "=.c", "z.c", "@d/x.c", "@d/ign/q.c", "d/@y.c"]:
        w("ats/" + f, b"")
    w("ats/BUILD", fact_lines(AT_FACTS))
    w("tracked/.gitignore", b"*.o\nout/\n")
    for f in ["a.c", "t.o", "u.o", "out/k.c", "out/u.c", "out/s/s.c", "out/d/k2.c", "out/d/u2.c"]:
        w("tracked/" + f, b"")
    subprocess.run(["git", "-C", ws.root, "add", "-f"] + ["tracked/" + f for f in TRACKED], check=True)
    w("tracked/BUILD", fact_lines(TRACKED_FACTS))
    # The fact about .bazelignore needs facts/ign in .bazelignore.
    w(".bazelignore", b"ign\nfacts/ign\n")

    # errors/: three packages per row (glob(), trawl_glob(), with gitignore =
    # True), each holding what git ignores (IGN_E), so that gitignore = True
    # splits its patterns.
    w("errors/a.c", b"")
    w("errors/.gitignore", b"ign/\n*.o\n")
    for i, (call, _) in enumerate(ERRORS):
        for side, fn in (("n", "glob(%s)"), ("t", "trawl_glob(%s)"), ("g", "trawl_glob(%s, gitignore = True)")):
            pkg = "errors/%s%02d" % (side, i)
            for f in ["a.c", "ign/i.c", "x.o"]:
                w(pkg + "/" + f, b"")
            os.makedirs(ws.path(pkg + "/d"), exist_ok=True)
            w(pkg + "/BUILD", ('load("@trawl//bazel:glob.bzl", "trawl_glob")\n'
                               "print('RESULT', %s)\n" % (fn % call)).encode())

    # names/: hostile file names, in the top and a directory of their own.
    hostile = [b'q"x', b"back\\slash.c", b"'''", b"tri'''ple.c", b"new\nline.c", b"cr\rx.c",
               b"\xff\xfe.c", "é.c".encode(), b'x", fail("pwned"), "', b"\\000", b"\\", b'"',
               b"tab\tx.c", b"%s.c", b"$(x).c", b"{a,b}.c", b"[x].c", b"a b.c", b"#.c",
               b"\x85.c", b"\x7f.c", b"\x01.c", b"\\\\\\\".c"]
    # Each name once more with ".o", which names/.gitignore ignores.
    w("names/.gitignore", b"*.o\n")
    for h in hostile:
        w(b"names/" + h, b"")
        w(b"names/" + h + b".o", b"")
        w(b"names/" + h.replace(b"/", b"_") + b".d/in.c", b"")
    w("ignored.bzl", b"IGNORED = {%s: {%s}}\n" % (star(b"names").encode(), b", ".join(
        b"%s: True" % star(h + b".o").encode() for h in hostile)))
    w("names/BUILD", b'load("//:check.bzl", "check")\n' + b"\n".join(
        b"check(%s, %s, exclude_directories = %d, gitignore = %s)" % (
            star(b"n%d%s" % (i, gi)).encode(), p, ed, gi)
        for i, (p, ed) in enumerate([(b'["**"]', 0), (b'["**"]', 1), (b'["*"]', 0),
                                      (b'["**/*.c"]', 1), (b'["*.c"]', 1),
                                      (b'["**/in.c"]', 1), (b'["*\\"*"]', 1),
                                      (b'["**"], exclude = ["**/*.c"]', 0)])
        for gi in (b"False", b"True")) + b"\n")

    # limits/: the bazel-* links at the top, a FIFO.
    os.makedirs(ws.path("limits"))
    w("out/o.c", b"")
    os.symlink(ws.path("out"), ws.path("bazel-out"))
    os.mkfifo(ws.path("limits/fifo.c"))
    w("limits/f.c", b"")
    w("limits/BUILD", b'load("@trawl//bazel:glob.bzl", "trawl_glob")\n'
                      b"print('LIMIT fifo', glob(['*.c']), trawl_glob(['*.c']), "
                      b"trawl_glob(['*.c'], gitignore = True))\n")
    w("BUILD", b'load("@trawl//bazel:glob.bzl", "trawl_glob")\n'
               b"print('LIMIT links', glob(['bazel-*/**']), trawl_glob(['bazel-*/**']), "
               b"trawl_glob(['bazel-*/**'], gitignore = True))\n")

    p = ws.bazel(["query", "--keep_going", "//...:all"])
    err = p.stderr
    bad = 0

    def failed(msg):
        nonlocal bad
        print("FAIL: " + msg)
        bad += 1

    # facts
    facts = bazelws.debug_lines(err, b"FACT ")
    n_facts = len(FACTS) + len(AT_FACTS) + len(TRACKED_FACTS)
    if len(facts) != n_facts:
        failed("%d facts reported, %d asserted" % (len(facts), n_facts))
    for line in facts:
        if not line.startswith(b"True True True "):
            failed("fact (native right, trawl_glob the same, gitignore = True right): " +
                   line.decode("latin-1"))

    # errors
    blocks = bazelws.error_blocks(err, ws.root)
    results = {}
    for line in err.split(b"\n"):
        m = bazelws.DEBUG_RE.match(line)
        if m and m.group(2).startswith(b"RESULT "):
            pkg = os.path.relpath(os.path.dirname(m.group(1).decode("latin-1")), ws.root)
            results[pkg] = ast.literal_eval(m.group(2)[len(b"RESULT "):].decode("latin-1"))

    def message(block):
        """The error's own line: what follows "Error in F: " or "Error: "."""
        for line in block.split("\n"):
            m = re.match(r"Error(?: in \w+)?: (.*)$", line)
            if m:
                return m.group(1)
        return None

    for i, (call, text) in enumerate(ERRORS):
        n, t, g = "errors/n%02d" % i, "errors/t%02d" % i, "errors/g%02d" % i
        if text is None:
            if any(x in blocks or x not in results for x in (n, t, g)) or results[n] != results[t] or \
                    results[g] != [p for p in results[n] if p not in IGN_E]:
                failed("%s: native %s, trawl_glob %s, with gitignore = True %s" % (call, *(
                    blocks.get(x) or results.get(x) for x in (n, t, g))))
            continue
        nmsg = message(blocks.get(n, ""))
        if text.startswith("~"):
            if nmsg is None or text[1:] not in nmsg:
                failed("%s: the table says %r, native glob() said: %s" % (call, text, nmsg or results.get(n)))
        elif nmsg != text:
            failed("%s: the table says %r, native glob() said: %s" % (call, text, nmsg or results.get(n)))
        for x in (t, g):
            tmsg = message(blocks.get(x, ""))
            if text.startswith("~"):
                if tmsg is None or text[1:] not in tmsg or "trawl_glob" not in tmsg:
                    failed("%s: %r expected, %s said: %s" % (call, text, x, tmsg or results.get(x)))
            elif tmsg != ("trawl_glob: " + text if x == g else text):
                failed("%s: %r expected, %s said: %s" % (
                    call, "trawl_glob: " + text if x == g else text, x, tmsg or results.get(x)))

    # names
    cases = bazelws.debug_lines(err, b"TRAWLCASE ")
    if len(cases) != 16 or any(not c.startswith(b"ok ") for c in cases):
        failed("hostile names: %r" % cases)
        for d in bazelws.debug_lines(err, b"TRAWLDIFF "):
            print("  " + d.decode("latin-1"))
    if cases and int(cases[0].split(b" ")[1]) < 2 * len(hostile):
        failed("hostile names: '**' found only %s paths" % cases[0].split(b" ")[1])
    with open(os.path.join(ws.output_base, "external/trawl_index/index.bzl"), "rb") as f:
        index = f.read()
    if any(c >= 0x80 or (c < 0x20 and c != 0x0A) for c in index):
        failed("index.bzl is not printable ASCII")

    # limits
    lim = {l.split(b" ", 1)[0]: l for l in bazelws.debug_lines(err, b"LIMIT ")}
    if lim.get(b"fifo") != b'fifo ["f.c"] ["f.c"] ["f.c"]':
        failed("fifo: %r" % lim.get(b"fifo"))
    if lim.get(b"links") != b'links ["bazel-out/o.c"] ["bazel-out/o.c"] []':
        failed("bazel-* links: %r" % lim.get(b"links"))

    # noise: the only DEBUG lines are the cases' own prints.
    for line in err.split(b"\n"):
        if line.startswith(b"DEBUG:") and not any(
                tag in line for tag in (b": FACT ", b": RESULT ", b": TRAWLCASE ", b": TRAWLDIFF ",
                                        b": LIMIT ")):
            failed("a DEBUG line that is not the cases': " + line.decode("latin-1"))

    unexpected = [k for k in blocks if not k.startswith("errors/")]
    for k in unexpected:
        failed("package %s: %s" % (k, blocks[k]))
    print("glob_cases: %d facts, %d error rows, %d hostile names, %d failures" % (
        len(FACTS) + len(AT_FACTS), len(ERRORS), len(hostile), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
