#!/usr/bin/env python3
r"""Hand-written cases for trawl_glob() in real Bazel, one bazel query:

    glob_cases.py TRAWL_EXE WORKDIR

 facts    glob()'s behaviour that trawl_glob() copies (docs/bazel.md,
          shared/INTEGRATION.md): each is asserted of native glob() with a
          hand-written answer, and trawl_glob() must give the same answer.
 errors   a table of bad calls: native glob() and trawl_glob() must both fail,
          and both messages must hold the row's text (the table is checked
          against Bazel's own message too); calls native accepts must be
          accepted and answered alike.
 names    a tree of hostile file names ('"', '\', "'''", newlines, bytes that
          are not UTF-8, Starlark code) globbed both ways; index.bzl must be
          ASCII.
 limits   the documented differences, asserted as they are: the bazel-*
          links at the top (glob() follows them, trawl_glob() does not), a
          FIFO (glob() leaves it out, trawl_glob() lists it).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bazelws  # noqa: E402
from bazelws import star  # noqa: E402

# (call arguments, text both messages must hold; None: must not fail)
ERRORS = [
    ('"*.c"', "parameter 'include' got value of type 'string', want 'sequence'"),
    ('depset(["*.c"])', "parameter 'include' got value of type 'depset', want 'sequence'"),
    ("[1]", "expected value of type 'string' for element 0"),
    ('["*.c"], exclude = "x"', "parameter 'exclude' got value of type 'string', want 'sequence'"),
    ('["*.c"], exclude = None', "parameter 'exclude' got value of type 'NoneType', want 'sequence'"),
    ('["*.c"], exclude = [1]', "expected value of type 'string' for element 0"),
    ('["*.c"], exclude_directories = True',
     "parameter 'exclude_directories' got value of type 'bool', want 'int'"),
    ('["*.c"], allow_empty = 1', "expected boolean for argument `allow_empty`"),
    ('["*.c"], ["a.c"], 0, True, 5', "accepts no more than 4 positional arguments but got 5"),
    ('["*.c"], bogus = 1', "got unexpected keyword argument"),
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
    ('["*.c"], exclude = ["a**"]', "recursive wildcard must be its own segment"),
    ('["*.c"], exclude = ["x/**/*y**"]', "recursive wildcard must be its own segment"),
    ('["*.c"], exclude = ["/x*"]', "pattern cannot be absolute"),
    ('["*.c"], exclude = ["a//*"]', "empty segment not permitted"),
    ('["*.c"], exclude = ["./*"]', "segment '.' not permitted"),
    ('["nope.c"], allow_empty = False', "glob pattern 'nope.c' didn't match anything, but allow_empty is set to False"),
    ('["d"], allow_empty = False', "glob pattern 'd' didn't match anything, but allow_empty is set to False"),
    ('["*.c", "nope"], allow_empty = False', "glob pattern 'nope' didn't match anything"),
    ('["*.c"], exclude = ["a.c"], allow_empty = False',
     "all files in the glob have been excluded, but allow_empty is set to False"),
    ('[], allow_empty = False', "all files in the glob have been excluded"),
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
]

# Facts of native glob(): (name, call, expected answer).
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
    ("gitignored trees are read", '["**/m.c"]', ["node_modules/m.c"]),
    (".bazelignore'd trees are not", '["ign/*"]', []),
]


def main():
    trawl, workdir = os.path.abspath(sys.argv[1]), sys.argv[2]
    ws = bazelws.Workspace(workdir, "cases", trawl=trawl)
    w = ws.write
    subprocess.run(["git", "init", "-q", ws.root], check=True)
    w(".gitignore", b"node_modules/\n")
    w(".bazelignore", b"ign\n")
    w("ignored.bzl", b"IGNORED = {}\n")
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
    lines = ['load("@trawl//bazel:glob.bzl", "trawl_glob")']
    for name, call, want in FACTS:
        lines.append(
            "n = glob(%s)\nt = trawl_glob(%s)\nw = %s\n"
            "print('FACT', n == w, t == n, %r, n, t)" % (
                call, call, "[" + ", ".join(star(x.encode("latin-1")) for x in want) + "]", name))
    w("facts/BUILD", ("\n".join(lines) + "\n").encode())
    # The fact about .bazelignore needs facts/ign in .bazelignore.
    w(".bazelignore", b"ign\nfacts/ign\n")

    # errors/: two packages per row.
    w("errors/a.c", b"")
    for i, (call, _) in enumerate(ERRORS):
        for side, fn in (("n", "glob"), ("t", "trawl_glob")):
            pkg = "errors/%s%02d" % (side, i)
            w(pkg + "/a.c", b"")
            os.makedirs(ws.path(pkg + "/d"), exist_ok=True)
            w(pkg + "/BUILD", ('load("@trawl//bazel:glob.bzl", "trawl_glob")\n'
                               "print('RESULT', %s(%s))\n" % (fn, call)).encode())

    # names/: hostile file names, in the top and a directory of their own.
    hostile = [b'q"x', b"back\\slash.c", b"'''", b"tri'''ple.c", b"new\nline.c", b"cr\rx.c",
               b"\xff\xfe.c", "é.c".encode(), b'x", fail("pwned"), "', b"\\000", b"\\", b'"',
               b"tab\tx.c", b"%s.c", b"$(x).c", b"{a,b}.c", b"[x].c", b"a b.c", b"#.c",
               b"\x85.c", b"\x7f.c", b"\x01.c", b"\\\\\\\".c"]
    for h in hostile:
        w(b"names/" + h, b"")
        w(b"names/" + h.replace(b"/", b"_") + b".d/in.c", b"")
    w("names/BUILD", b'load("//:check.bzl", "check")\n' + b"\n".join(
        b"check(%s, %s, exclude_directories = %d)" % (star(b"n%d" % i).encode(), p, ed)
        for i, (p, ed) in enumerate([(b'["**"]', 0), (b'["**"]', 1), (b'["*"]', 0),
                                      (b'["**/*.c"]', 1), (b'["*.c"]', 1),
                                      (b'["**/in.c"]', 1), (b'["*\\"*"]', 1),
                                      (b'["**"], exclude = ["**/*.c"]', 0)])) + b"\n")

    # limits/: the bazel-* links at the top, a FIFO.
    os.makedirs(ws.path("limits"))
    w("out/o.c", b"")
    os.symlink(ws.path("out"), ws.path("bazel-out"))
    os.mkfifo(ws.path("limits/fifo.c"))
    w("limits/f.c", b"")
    w("limits/BUILD", b'load("@trawl//bazel:glob.bzl", "trawl_glob")\n'
                      b"print('LIMIT fifo', glob(['*.c']), trawl_glob(['*.c']))\n")
    w("BUILD", b'load("@trawl//bazel:glob.bzl", "trawl_glob")\n'
               b"print('LIMIT links', glob(['bazel-*/**']), trawl_glob(['bazel-*/**']))\n")

    p = ws.bazel(["query", "--keep_going", "//...:all"])
    err = p.stderr
    bad = 0

    def failed(msg):
        nonlocal bad
        print("FAIL: " + msg)
        bad += 1

    # facts
    facts = bazelws.debug_lines(err, b"FACT ")
    if len(facts) != len(FACTS):
        failed("%d facts reported, %d asserted" % (len(facts), len(FACTS)))
    for line in facts:
        if not line.startswith(b"True True "):
            failed("fact: " + line.decode("latin-1"))

    # errors
    blocks = bazelws.error_blocks(err, ws.root)
    results = {}
    for line in err.split(b"\n"):
        m = bazelws.DEBUG_RE.match(line)
        if m and m.group(2).startswith(b"RESULT "):
            pkg = os.path.relpath(os.path.dirname(m.group(1).decode("latin-1")), ws.root)
            results[pkg] = m.group(2)
    for i, (call, text) in enumerate(ERRORS):
        n, t = "errors/n%02d" % i, "errors/t%02d" % i
        if text is None:
            if n in blocks or t in blocks or n not in results or results.get(n) != results.get(t):
                failed("%s: native %s, trawl_glob %s" % (call, blocks.get(n) or results.get(n),
                                                         blocks.get(t) or results.get(t)))
            continue
        nmsg, tmsg = blocks.get(n, ""), blocks.get(t, "")
        if text not in nmsg:
            failed("%s: the table says %r, native glob() said: %s" % (call, text, nmsg or results.get(n)))
        if text not in tmsg:
            failed("%s: %r expected, trawl_glob() said: %s" % (call, text, tmsg or results.get(t)))
        elif "trawl_glob" not in tmsg:
            failed("%s: the message does not name trawl_glob: %s" % (call, tmsg))

    # names
    cases = bazelws.debug_lines(err, b"TRAWLCASE ")
    if len(cases) != 8 or any(not c.startswith(b"ok ") for c in cases):
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
    if lim.get(b"fifo") != b'fifo ["f.c"] ["f.c", "fifo.c"]':
        failed("fifo: %r" % lim.get(b"fifo"))
    if lim.get(b"links") != b'links ["bazel-out/o.c"] []':
        failed("bazel-* links: %r" % lim.get(b"links"))

    unexpected = [k for k in blocks if not k.startswith("errors/")]
    for k in unexpected:
        failed("package %s: %s" % (k, blocks[k]))
    print("glob_cases: %d facts, %d error rows, %d hostile names, %d failures" % (
        len(FACTS), len(ERRORS), len(hostile), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
