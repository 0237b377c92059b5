#!/usr/bin/env python3
r"""Differential test: the command's bazel dialect against native glob().

    cli_diff.py TRAWL_EXE WORKDIR [--seed N] [--packages P] [--cases C]

One workspace (a git work tree with .gitignore files at several depths)
holds P generated packages (default 8) with C generated cases each (default
12) plus fixed ones. Every case is answered by `trawl --dialect bazel -I -C
PKG [-t f,d] INCLUDE... -x EXCLUDE...` and, all of them at once, by `trawl
batch` (one query per case, "dialect": "bazel", "ignore": false); the two
must agree. The walk's answer is then written into the package's BUILD
file, and one `bazel --batch query --keep_going` (Bazel 4.2.3, the user root
the other bazel tests share) compares it with glob(INCLUDES, exclude =
EXCLUDES, exclude_directories = 0|1) in Starlark. The test fails on any
difference, a package that fails to load, a case that did not report, or
too few non-empty cases.

Gitignore is off (-I, "ignore": false): glob() reads no ignore file. The
.gitignore files are there all the same (a walk that read them would list
less), and are files glob() lists.

Every run covers, whatever the seed:
 - a file and a directory of the same shape under 'X/**', '*/**', 'X/*/**'
   and '**/X/**' (issue 28: glob() selects X for X/** only when it is a
   directory), with exclude_directories 0 and 1, and the same as excludes
   (glob() matches those against result paths, untyped);
 - names with '\n', '\r' and 0x85 against segments Bazel matches by a
   regular expression ('n*l', '*x*') and by a prefix or suffix ('n*',
   '*.c');
 - hidden files and directories against '*', '**', '.*', '*.c';
 - names with '(' and ')' against literal segments and '*(' / '(*';
 - '?' and '(' in a regular-expression segment: trawl refuses them (exit
   2, the pattern and the byte named; batch too), and Bazel is asked to
   show why: it fails an include with '?', and 'a*(b)*' selects 'ab'.
No links: tests/bazel/glob_diff.py covers them for trawl_glob().
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bazelws  # noqa: E402
from bazelws import star, star_list  # noqa: E402

WORDS = [b"a", b"b", b"src", b"x", b"gen", b"n", b"core", b"keep"]
EXTS = [b".c", b".ts", b"", b".x", b".c.x"]
ODD = [b"(", b")", b" ", b"#", b"\n", b"\r", b"\x85", b"\xe9", b"'", b"-"]
RESERVED = {b"BUILD", b"BUILD.bazel", b".git", b"WORKSPACE", b".bazelignore", b".gitignore"}

# The shapes issue 28 is about, in every package: FILE_X a file, DIR_X a
# directory holding one, each also one level down.
FIXED_FILES = [b"fx", b"dx/in.c", b"sub/fx", b"sub/dx/in.c", b"n\nl", b"nxl", b"r\rl",
               b"z\x85z", b"q\nq.c", b"sub/n\nl/k.c", b".h.c", b".hd/k.c", b"a(b)", b"x(y",
               b"ab", b"axbx"]
FIXED_DIRS = [b"empty", b"sub/empty.c"]
FIXED_CASES = [
    (["fx/**"], [], 1), (["fx/**"], [], 0), (["dx/**"], [], 0), (["dx/**"], [], 1),
    (["*/**"], [], 0), (["*/**"], [], 1), (["sub/*/**"], [], 0), (["**/fx/**"], [], 0),
    (["**/dx/**"], [], 0), (["**/*.c/**"], [], 0), (["**"], ["fx/**"], 1),
    (["**"], ["dx/**"], 0), (["**"], ["sub/**"], 0), (["**"], ["*/**"], 0),
    (["n*l", "*x*", "**/n*l/*"], [], 0), (["n*", "*l", "*.c", "**/*.c"], [], 1),
    (["**"], ["*x*"], 1), (["**"], ["n*l"], 1), (["z*z", "r*l", "q*q.c"], [], 1),
    (["*", ".*", "*.c", "**/.*"], [], 0), (["a(b)", "x(*", "*(y", "a*"], [], 1),
]
# Refused: (include, exclude, the byte trawl names, what Bazel 4.2.3 shows).
REFUSED = [
    (["x?"], [], 1, "include-error"),
    (["**"], ["a*(b)*"], 2, None),
    (["a*(b)*"], [], 2, "selects ab"),
]

CHECK_BZL = r'''
def check(id, got, want):
    g = {p: True for p in got}
    w = {p: True for p in want}
    extra = [p for p in got if p not in w]
    missing = [p for p in want if p not in g]
    if extra or missing:
        print("CLIDIFF DIFF %s glob() only: %r trawl only: %r" % (id, extra, missing))
    else:
        print("CLIDIFF ok %s %d" % (id, len(got)))

def show(id, got):
    print("CLIDIFF show %s %r" % (id, got))
'''


def make_name(rng, hidden_p=0.12):
    parts = [b"." if rng.random() < hidden_p else b"", rng.choice(WORDS)]
    if rng.random() < 0.3:
        parts.append(rng.choice(ODD))
        if rng.random() < 0.5:
            parts.append(rng.choice(WORDS))
    return b"".join(parts)


def fill(rng, root, rel, depth, files, dirs):
    os.makedirs(os.path.join(root, rel), exist_ok=True)
    used = set()
    for _ in range(rng.randrange(1, 6)):
        n = make_name(rng) + rng.choice(EXTS)
        if n in used or n in RESERVED:
            continue
        used.add(n)
        p = os.path.join(rel, n) if rel else n
        open(os.path.join(root, p), "wb").close()
        files.append(p)
    if depth >= 3:
        return
    for _ in range(rng.randrange(0, 3)):
        n = make_name(rng, 0.2)
        if n in used or n in RESERVED:
            continue
        used.add(n)
        p = os.path.join(rel, n) if rel else n
        dirs.append(p)
        fill(rng, root, p, depth + 1, files, dirs)


def segment_choices(name):
    """Bazel-dialect segments that match NAME (a path component), or may:
    the literal, '*', '*SUFFIX', 'PREFIX*', 'P*S' (a regular-expression
    segment to Bazel), '.*' for a hidden one; none the dialect refuses."""
    out = [b"*", name]
    if len(name) >= 2:
        out += [b"*" + name[-1:], name[:1] + b"*", name[:1] + b"*" + name[-1:]]
    if name.startswith(b".") and len(name) > 1:
        out.append(b".*")
    return [x for x in out if acceptable(x) and x not in (b".", b"..")]


def make_pattern(rng, paths):
    """A pattern built from a path of the package, so that it often matches."""
    p = rng.choice(paths)
    comps = p.split(b"/")
    out = []
    i = 0
    while i < len(comps):
        r = rng.random()
        if r < 0.15:
            out.append(b"**")
            i += rng.randrange(0, len(comps) - i + 1)
            continue
        out.append(rng.choice(segment_choices(comps[i])))
        i += 1
    if rng.random() < 0.3:
        # the trailing '/**' of issue 28, after a file or a directory
        out = out[:max(1, len(out) - rng.randrange(0, 2))] + [b"**"]
    pat = []
    for s in out:
        if s == b"**" and pat and pat[-1] == b"**":
            continue
        pat.append(s)
    return b"/".join(pat)


def regex_segment(seg):
    stars = seg.count(b"*")
    if stars == 0 or seg == b"**":
        return False
    return not (stars == 1 and (seg.startswith(b"*") or seg.endswith(b"*")))


def acceptable(pat):
    """The dialect's own rules (it refuses '?' and parentheses in a
    regular-expression segment); a generated pattern should compile."""
    if b"?" in pat or b"\0" in pat:
        return False
    return not any(regex_segment(s) and (b"(" in s or b")" in s) for s in pat.split(b"/"))


def run_walk(trawl, pkg_dir, inc, exc, ed):
    argv = [trawl, "--dialect", "bazel", "-I", "-C", pkg_dir, "--format", "null"]
    argv += ["-t", "f,d"] if ed == 0 else ["-t", "f"]
    for x in exc:
        argv += ["-x", x]
    argv += ["--"] + inc
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trawl")
    ap.add_argument("workdir")
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--packages", type=int, default=8)
    ap.add_argument("--cases", type=int, default=12)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    trawl = os.path.abspath(args.trawl)
    started = time.monotonic()

    ws = bazelws.Workspace(args.workdir, "cli-diff-%d" % args.seed)
    ws.write("WORKSPACE", b"")  # glob() alone: no repository rule to run
    ws.write("BUILD", b"")
    ws.write("check.bzl", CHECK_BZL.encode())
    root = os.fsencode(ws.root)
    subprocess.run(["git", "init", "-q", ws.root], check=True)
    ws.write(".gitignore", b"*.x\n")

    failures = []
    cases = []  # (pkg, id, include, exclude, ed)
    for k in range(args.packages):
        pkg = b"p%02d" % k
        files, dirs = [], []
        fill(rng, root, pkg, 0, files, dirs)
        files = [f[len(pkg) + 1:] for f in files]
        dirs = [d[len(pkg) + 1:] for d in dirs]
        for f in FIXED_FILES:
            full = os.path.join(root, pkg, f)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            open(full, "wb").close()
            files.append(f)
        for d in FIXED_DIRS:
            os.makedirs(os.path.join(root, pkg, d), exist_ok=True)
            dirs.append(d)
        # .gitignore files at two depths: files glob() lists, rules -I does not read
        with open(os.path.join(root, pkg, b".gitignore"), "wb") as f:
            f.write(b"gen/\n*.ts\n")
        with open(os.path.join(root, pkg, b"sub", b".gitignore"), "wb") as f:
            f.write(b"!keep.ts\nfx\n")
        open(os.path.join(root, pkg, b"BUILD"), "wb").close()
        every = files + dirs
        for i, (inc, exc, ed) in enumerate(FIXED_CASES):
            cases.append((pkg, "%s-f%d" % (pkg.decode(), i), [os.fsencode(x) for x in inc],
                          [os.fsencode(x) for x in exc], ed))
        made = 0
        while made < args.cases:
            inc = [make_pattern(rng, every) for _ in range(rng.randrange(1, 3))]
            exc = [make_pattern(rng, every) for _ in range(rng.randrange(0, 2))]
            if not all(acceptable(p) for p in inc + exc):
                continue
            cases.append((pkg, "%s-g%d" % (pkg.decode(), made), inc, exc, rng.choice([0, 1])))
            made += 1

    # The walk, case by case, and the batch, all cases at once.
    walk = {}
    for pkg, cid, inc, exc, ed in cases:
        p = run_walk(trawl, os.path.join(root, pkg), [os.fsdecode(x) for x in inc],
                     [os.fsdecode(x) for x in exc], ed)
        if p.returncode not in (0, 1):
            failures.append("%s: trawl exited %d: %s" % (cid, p.returncode, p.stderr.decode(errors="replace")))
            continue
        walk[cid] = [x for x in p.stdout.split(b"\0") if x]
    queries = "".join(json.dumps({
        "id": cid, "root": os.fsdecode(os.path.join(root, pkg)), "dialect": "bazel",
        "ignore": False, "type": ["f", "d"] if ed == 0 else ["f"],
        "include": [os.fsdecode(x) for x in inc], "exclude": [os.fsdecode(x) for x in exc]}) + "\n"
        for pkg, cid, inc, exc, ed in cases)
    b = subprocess.run([trawl, "batch", "-"], input=queries.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if b.returncode != 0:
        failures.append("trawl batch exited %d: %s" % (b.returncode, b.stderr.decode(errors="replace")))
    for line in b.stdout.decode().splitlines():
        o = json.loads(line)
        got = [os.fsencode(x) for x in o["paths"]]
        if o["id"] in walk and got != walk[o["id"]]:
            failures.append("%s: trawl batch %r, the walk %r" % (o["id"], got, walk[o["id"]]))

    # The refusals: trawl's exit and message, walk and batch.
    for i, (inc, exc, byte, _) in enumerate(REFUSED):
        p = run_walk(trawl, os.path.join(root, b"p00"), inc, exc, 1)
        bad = (exc or inc)[0]
        msg = p.stderr.decode(errors="replace")
        if p.returncode != 2 or ("pattern \"%s\": byte %d:" % (bad, byte)) not in msg:
            failures.append("refused %r: trawl exited %d: %s" % (bad, p.returncode, msg))
        q = json.dumps({"id": i, "root": ".", "dialect": "bazel", "include": inc, "exclude": exc})
        pb = subprocess.run([trawl, "batch", "-"], input=q.encode() + b"\n", cwd=ws.root,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if pb.returncode != 2 or ("byte %d" % byte) not in pb.stderr.decode(errors="replace"):
            failures.append("refused %r: trawl batch exited %d: %s" % (
                bad, pb.returncode, pb.stderr.decode(errors="replace")))

    # BUILD files: each case's glob() against the walk's answer.
    per_pkg = {}
    for pkg, cid, inc, exc, ed in cases:
        if cid in walk:
            per_pkg.setdefault(pkg, []).append(
                "check(%s, glob(%s, exclude = %s, exclude_directories = %d, allow_empty = True), %s)" % (
                    star(cid.encode()), star_list(inc), star_list(exc), ed, star_list(walk[cid])))
    for pkg, lines in per_pkg.items():
        ws.write(pkg + b"/BUILD", ('load("//:check.bzl", "check")\n' + "\n".join(lines) + "\n").encode("latin-1"))
    # What Bazel does with the refused patterns, each in a package of its own.
    for i, (inc, exc, byte, shows) in enumerate(REFUSED):
        if shows is None:
            continue
        d = b"refused%d" % i
        for f in (b"ab", b"a(b)", b"axbx", b"x"):
            ws.write(d + b"/" + f, b"")
        ws.write(d + b"/BUILD", ('load("//:check.bzl", "show")\nshow("refused%d", glob(%s, exclude = %s))\n' % (
            i, star_list([os.fsencode(x) for x in inc]), star_list([os.fsencode(x) for x in exc]))).encode())

    p = ws.bazel(["query", "--keep_going", "//...:all"])
    seen = set()
    nonempty = 0
    shown = {}
    for line in bazelws.debug_lines(p.stderr, b"CLIDIFF"):
        kind, rest = line.split(b" ", 1)
        if kind == b"ok":
            cid, n = rest.rsplit(b" ", 1)
            seen.add(cid.decode())
            nonempty += int(n) > 0
        elif kind == b"DIFF":
            cid = rest.split(b" ", 1)[0].decode()
            seen.add(cid)
            failures.append("DIFF %s (%s): %s" % (cid, next(c for c in cases if c[1] == cid)[2:],
                                                  rest.decode("latin-1")))
        elif kind == b"show":
            cid, got = rest.split(b" ", 1)
            shown[cid.decode()] = got
    errors = bazelws.error_blocks(p.stderr, ws.root)
    for pkg in per_pkg:
        if pkg.decode() in errors:
            failures.append("package %s failed to load:\n%s" % (pkg.decode(), errors[pkg.decode()]))
    for pkg, cid, inc, exc, ed in cases:
        if cid in walk and cid not in seen:
            failures.append("%s: no report from Bazel" % cid)
    for i, (inc, exc, byte, shows) in enumerate(REFUSED):
        name = "refused%d" % i
        if shows == "include-error":
            if "wildcard ? forbidden" not in errors.get(name, ""):
                failures.append("%s: Bazel did not refuse %r: %r" % (name, inc, errors.get(name)))
        elif shows == "selects ab":
            if b'"ab"' not in shown.get(name, b""):
                failures.append("%s: Bazel's glob(%r) no longer selects ab: %r" % (
                    name, inc, shown.get(name)))
    if nonempty < len(cases) // 2:
        failures.append("only %d of %d cases selected anything" % (nonempty, len(cases)))

    for f in failures:
        print("FAIL " + f)
    print("%d cases in %d packages (walk and batch agree, glob() compared), %d non-empty, "
          "%d refusals; %.1f s" % (len(cases), args.packages, nonempty, len(REFUSED),
                                   time.monotonic() - started))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
