#!/usr/bin/env python3
r"""Differential test: trawl_glob() against native glob(), in real Bazel.

    glob_diff.py TRAWL_EXE WORKDIR [--seed N] [--packages P] [--cases C]

One workspace holds P generated packages (default 24) and C cases each
(default 24), and a single `bazel query --batch --keep_going` evaluates
them all: in every package, a generated BUILD file calls check() (from
bazelws.CHECK_BZL) per case, which compares native.glob() and trawl_glob()
on the same arguments. The test fails if any case differs, if any package
fails to load, if a case did not report, or if too few cases were
non-empty (a generator that stopped producing matches proves nothing).

Settings every run covers (each workspace has all of them):
 - a git work tree: .gitignore files at the top and below (ignored
   directories, ignored extensions, negations, anchored and '**/' rules),
   .git/info/exclude; cases with gitignore = True expect native's answer
   less what git ignores (asked of `git check-ignore --no-index` in a copy
   of the tree with every followed link made a real directory, since
   trawl applies the rules to the path through a link; `.git` itself and
   everything below an ignored directory count as ignored);
 - packages below packages (BUILD and BUILD.bazel), a directory named BUILD
   (no package), a subdirectory holding a WORKSPACE file (no boundary);
 - names starting with '@' (glob() writes ':' before such a path), at
   random and in fixed/, where directories named with wildcards ('w*d',
   'q?d', 'x**y', '(p*'), hidden ones and '@d' each hold a directory git
   ignores (gitignore = True must split its patterns at them), with cases
   of their own; fixed/ign, a package whose own directory git ignores;
 - hidden files and directories, names with bytes that Bazel's regular
   expressions treat apart ('\n', '\r', 0x85), with '(' and ')', quotes,
   backslashes, spaces, '#', bytes that are not UTF-8, UTF-8;
 - links to files, to directories inside and outside the workspace, and
   dangling links (no link leads to a directory above it: Bazel fails on
   those, see docs/bazel.md);
 - .bazelignore entries (as written, with './' and a trailing '/', a
   comment, one that names nothing);
 - include patterns with literal segments, '*', '**', '*.EXT', 'PREFIX*',
   '*SUFFIX', wildcards inside a segment; excludes of every form that
   removeExcludes() treats apart (no wildcard, 'HEAD**/*TAIL', by
   segments, with '?'); exclude_directories 0 and 1; gitignore False and
   True.
Errors, hostile file names in a small tree, and the facts of glob() itself
are tests/bazel/glob_cases.py.
"""
import argparse
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bazelws  # noqa: E402
from bazelws import star, star_list  # noqa: E402

WORDS = [b"a", b"b", b"src", b"lib", b"test", b"x", b"gen", b"out", b"node_modules",
         b"util", b"core", b"doc", b"keep"]
EXTS = [b".c", b".ts", b".tsx", b".d.ts", b".test.ts", b".h", b"", b".x", b".", b".c.x"]
ODD = [b"(", b")", b" ", b"#", b"+", b"~", b",", b"[", b"]", b"{", b"}", b"\\", b'"', b"'",
       b"\n", b"\r", b"\x85", b"\xe9", "é".encode(), b"$", b"%", b"-", b"=", b"'''"]
RESERVED = {b"BUILD", b"BUILD.bazel", b".git", b".trawl", b"WORKSPACE", b".bazelignore"}


def make_name(rng, hidden_p=0.12):
    parts = []
    r = rng.random()
    if r < hidden_p:
        parts.append(b".")
    elif r < hidden_p + 0.06:
        parts.append(b"@")  # glob() writes ':' before a path starting with '@'
    parts.append(rng.choice(WORDS))
    if rng.random() < 0.25:
        parts.append(rng.choice(ODD))
        if rng.random() < 0.5:
            parts.append(rng.choice(WORDS))
    name = b"".join(parts)
    return name


class Tree:
    def __init__(self, root):
        self.root = root  # bytes
        self.files = []  # relative paths (bytes)
        self.dirs = []
        self.packages = [b""]

    def abs(self, rel):
        return os.path.join(self.root, rel) if rel else self.root


def fill(rng, tree, rel, depth, in_pkg_dir):
    os.makedirs(tree.abs(rel), exist_ok=True)
    used = set()
    for _ in range(rng.randrange(0, 6)):
        n = make_name(rng) + rng.choice(EXTS)
        if n in used or n in RESERVED or n in (b".", b".."):
            continue
        used.add(n)
        p = os.path.join(rel, n) if rel else n
        open(tree.abs(p), "wb").close()
        tree.files.append(p)
    if depth >= 4:
        return
    for _ in range(rng.randrange(0, 4 if depth < 2 else 3)):
        n = make_name(rng, 0.2)
        if rng.random() < 0.1:
            n += rng.choice([b".ts", b".d"])
        if n in used or n in RESERVED:
            continue
        used.add(n)
        p = os.path.join(rel, n) if rel else n
        tree.dirs.append(p)
        fill(rng, tree, p, depth + 1, False)
        r = rng.random()
        if depth >= 1 and r < 0.10:
            build = rng.choice([b"BUILD", b"BUILD.bazel"])
            open(tree.abs(os.path.join(p, build)), "wb").close()
            tree.packages.append(p)
        elif r < 0.12:
            os.makedirs(tree.abs(os.path.join(p, b"BUILD")), exist_ok=True)  # a directory
        elif r < 0.14:
            open(tree.abs(os.path.join(p, b"WORKSPACE")), "wb").close()


FIXED = [b"@a.c", b"@b.o", b"@d/k.c", b"@d/ign/x.c", b"w*d/k.c", b"w*d/ign/y.c", b"q?d/k.c",
         b"q?d/ign/z.c", b"x**y/k.c", b"x**y/ign/u.c", b"(p*/k.c", b"(p*/ign/v.c", b"ign/i.c",
         b"@d/.h/k.c", b"@d/.h/ign/w.c"]
FIXED_CASES = {
    b"": [(b'["fixed/**"]', 0), (b'["fixed/**"]', 1), (b'["fixed/*/*.c"]', 1),
          (b'["fixed/*/k.c"]', 0), (b'["**/@*"]', 0), (b'["fixed/@d/**"]', 0),
          (b'["fixed/w*d/*"]', 0), (b'["fixed/*"]', 0), (b'["fixed/*/**/*.c"]', 1),
          (b'["fixed/**/k.c"], exclude = ["fixed/@d/**"]', 1)],
    b"fixed/ign": [(b'["**"]', 0), (b'["*.c"]', 1)],
}


def under(p, d):
    return d == b"" or p == d or p.startswith(d + b"/")


def add_links(rng, tree, outside):
    """Links to files, dangling ones, and links to directories whose
    subtree holds no link (so that no walk loops)."""
    targets = []
    for d in rng.sample(tree.dirs, min(len(tree.dirs), 5)):
        targets.append(d)
    homes = [d for d in [b""] + tree.dirs if not any(under(d, t) for t in targets)]
    made = 0
    for home in rng.sample(homes, min(len(homes), 10)):
        kind = rng.random()
        name = b"ln" + str(made).encode() + rng.choice([b"", b".c", b".ts", b"(l)"])
        lp = os.path.join(home, name) if home else name
        if os.path.lexists(tree.abs(lp)):
            continue
        if kind < 0.45 and targets:
            t = rng.choice(targets)
            os.symlink(os.path.relpath(tree.abs(t), tree.abs(home)), tree.abs(lp))
        elif kind < 0.55:
            os.symlink(outside, tree.abs(lp))
        elif kind < 0.8 and tree.files:
            t = rng.choice(tree.files)
            os.symlink(os.path.relpath(tree.abs(t), tree.abs(home)), tree.abs(lp))
        else:
            os.symlink(b"nowhere/at/all", tree.abs(lp))
        made += 1


def write_ignores(rng, tree):
    """.gitignore files, info/exclude and .bazelignore."""
    def lines_for(d):
        out = [b"*.x", b"node_modules/", b"/gen", b"**/out", b"!keep.x", b"*.d.ts", b"# comment"]
        names = [os.path.basename(p) for p in tree.files + tree.dirs if os.path.dirname(p) == d]
        for n in rng.sample(names, min(len(names), 2)):
            if b"\n" not in n and b"\r" not in n and not n.endswith((b" ", b"\\")):
                esc = b"".join(b"\\" + bytes([c]) if c in b"*?[]!#\\" else bytes([c]) for c in n)
                out.append(esc)
        return rng.sample(out, rng.randrange(1, len(out) + 1))
    for d in [b""] + rng.sample(tree.dirs, min(len(tree.dirs), 4)):
        with open(tree.abs(os.path.join(d, b".gitignore")), "wb") as f:
            f.write(b"\n".join(lines_for(d)) + b"\n")
        tree.files.append(os.path.join(d, b".gitignore"))
    with open(tree.abs(b".git/info/exclude"), "ab") as f:
        f.write(b"*.excl\n")
    top = [d for d in tree.dirs if b"/" not in d and not any(under(pk, d) for pk in tree.packages if pk)]
    lines = [b"# a comment", b"no/such/dir"]
    for d in rng.sample(top, min(len(top), 2)):
        if b"\n" in d or b"\r" in d:
            continue
        lines.append(rng.choice([d, b"./" + d, d + b"/"]))
    with open(tree.abs(b".bazelignore"), "wb") as f:
        f.write(b"\n".join(lines) + b"\n")


def package_view(tree, pkg):
    """Every path glob() can reach from the package (files and
    directories, relative to it): links followed, subpackages and
    .bazelignore'd directories not entered. Used to pick patterns that
    hit something."""
    out = []
    base = tree.abs(pkg)
    for dirpath, dirnames, filenames in os.walk(base, followlinks=True):
        rel = os.path.relpath(dirpath, base)
        rel = b"" if rel == b"." else rel
        keep = []
        for d in dirnames:
            full = os.path.join(dirpath, d)
            p = os.path.join(rel, d) if rel else d
            if (os.path.isfile(os.path.join(full, b"BUILD")) or
                    os.path.isfile(os.path.join(full, b"BUILD.bazel")) or d == b".trawl"):
                continue
            keep.append(d)
            out.append(p)
        dirnames[:] = keep
        for f in filenames:
            if os.path.exists(os.path.join(dirpath, f)):
                out.append(os.path.join(rel, f) if rel else f)
    return out


def all_packages(tree):
    """Every package as Bazel sees it, links followed: (path, real path)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(tree.root, followlinks=True):
        rel = os.path.relpath(dirpath, tree.root)
        rel = b"" if rel == b"." else rel
        if rel == b".git" or rel == b".trawl":
            dirnames[:] = []
            continue
        if rel == b"" or os.path.isfile(os.path.join(dirpath, b"BUILD")) or \
                os.path.isfile(os.path.join(dirpath, b"BUILD.bazel")):
            out.append(rel)
    return out


def seg_variants(rng, comp, is_last):
    """A pattern segment for a path component: it, or a wildcard form."""
    r = rng.random()
    if r < 0.35:
        return comp
    if r < 0.5:
        return b"*"
    body = comp.lstrip(b".")
    dots = comp[:len(comp) - len(body)]
    if r < 0.65 and b"." in body:
        return dots + b"*" + body[body.rindex(b"."):]
    if r < 0.75 and len(comp) > 1:
        return comp[: rng.randrange(1, len(comp))] + b"*"
    if r < 0.85 and len(comp) > 1:
        k = rng.randrange(1, len(comp))
        return b"*" + comp[k:]
    if r < 0.95 and len(comp) > 2:
        k = rng.randrange(1, len(comp) - 1)
        return comp[:k] + b"*" + comp[k + 1:] if rng.random() < 0.5 else comp[:k] + b"*" + comp[k:] + b"*"
    return b"(" + comp[:1] + b"*" if comp[:1] != b"*" else b"*"


def valid(p, include):
    if not p or p.startswith(b"/"):
        return False
    if include and b"?" in p:
        return False
    for s in p.split(b"/"):
        if not s or s in (b".", b"..") or (b"**" in s and s != b"**"):
            return False
    return True


def make_pattern(rng, view, include=True):
    r = rng.random()
    if r < 0.15 or not view:
        return rng.choice([b"**", b"*", b"**/*", b"**/*.ts", b"**/*.c", b"*/**", b"**/.*",
                           b"**/*.d.ts", b"*.c", b"**/BUILD", b"**/*.x"])
    p = rng.choice(view)
    comps = p.split(b"/")
    segs = []
    for i, c in enumerate(comps):
        if rng.random() < 0.15:
            segs.append(b"**")
        segs.append(seg_variants(rng, c, i == len(comps) - 1))
    if rng.random() < 0.12:
        segs.append(b"**")
    if not include and rng.random() < 0.2:
        k = rng.randrange(len(segs))
        s = segs[k]
        if len(s) > 1 and s not in (b"**",):
            j = rng.randrange(len(s))
            segs[k] = s[:j] + b"?" + s[j + 1:]
    pat = b"/".join(segs)
    while b"**/**" in pat:
        pat = pat.replace(b"**/**", b"**")
    return pat


def make_exclude(rng, view):
    r = rng.random()
    if r < 0.25 and view:
        return rng.choice(view)  # no wildcard: that exact path
    if r < 0.45:
        head = b""
        if view and rng.random() < 0.5:
            v = rng.choice(view)
            head = v[: rng.randrange(0, len(v) + 1)]
        tail = rng.choice([b".ts", b".c", b"x", b"/keep", b"", b".d.ts", b"t"])
        if b"*" in head or b"?" in head:
            head = b""
        return head + b"**/*" + tail
    return make_pattern(rng, view, include=False)


def ignored_paths(tree, mirror):
    """Every path of the tree (as glob() reaches it, links followed) that
    git ignores, asked in the mirror; plus .git and everything below."""
    paths = []
    for dirpath, dirnames, filenames in os.walk(mirror):
        rel = os.path.relpath(dirpath, mirror)
        rel = b"" if rel == b"." else rel
        if rel == b".git":
            dirnames[:] = []
            continue
        for n in dirnames + filenames:
            paths.append(os.path.join(rel, n) if rel else n)
    p = subprocess.run(["git", "-C", mirror, "check-ignore", "--no-index", "-z", "--stdin"],
                       input=b"".join(x + b"\0" for x in paths), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if p.returncode not in (0, 1):
        raise SystemExit("git check-ignore failed: " + p.stderr.decode("latin-1"))
    direct = set(x for x in p.stdout.split(b"\0") if x)
    ignored = set()
    for x in paths:
        parts = x.split(b"/")
        if any(b"/".join(parts[:i]) in direct for i in range(1, len(parts) + 1)):
            ignored.add(x)
    return ignored


def make_mirror(src, dst):
    """A copy of the tree with links followed (files empty but .gitignore),
    and a fresh git repository with the same info/exclude."""
    os.makedirs(dst)
    subprocess.run(["git", "init", "-q", dst], check=True)
    with open(os.path.join(src, b".git/info/exclude"), "rb") as f:
        excl = f.read()
    with open(os.path.join(dst, b".git/info/exclude"), "wb") as f:
        f.write(excl)
    for dirpath, dirnames, filenames in os.walk(src, followlinks=True):
        rel = os.path.relpath(dirpath, src)
        if rel == b".git" or rel.startswith(b".git/"):
            dirnames[:] = []
            continue
        out = os.path.join(dst, rel)
        os.makedirs(out, exist_ok=True)
        for f in filenames:
            s = os.path.join(dirpath, f)
            if not os.path.exists(s):
                continue  # dangling
            with open(os.path.join(out, f), "wb") as o:
                if f == b".gitignore":
                    with open(s, "rb") as i:
                        o.write(i.read())
    # .git itself: ignored by definition (see ignored_paths).


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trawl")
    ap.add_argument("workdir")
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--packages", type=int, default=24)
    ap.add_argument("--cases", type=int, default=24)
    args = ap.parse_args()
    rng = random.Random(args.seed)

    ws = bazelws.Workspace(args.workdir, "diff-%d" % args.seed, trawl=os.path.abspath(args.trawl))
    root = os.fsencode(ws.root)
    subprocess.run(["git", "init", "-q", ws.root], check=True)
    outside = os.fsencode(os.path.join(ws.base, "diff-%d" % args.seed, "outside"))
    os.makedirs(os.path.join(outside, b"o"), exist_ok=True)
    for n in [b"o1.c", b"o2.ts", b".oh.c", b"o/o3.ts"]:
        open(os.path.join(outside, n), "wb").close()

    tree = Tree(root)
    for k in range(args.packages):
        d = b"p%02d" % k
        tree.dirs.append(d)
        fill(rng, tree, d, 1, True)
        open(tree.abs(d + b"/BUILD"), "wb").close()
        tree.packages.append(d)
    # Some files at the top too (the top package globs everything).
    fill(rng, tree, b"", 3, True)
    # And, whatever the seed, names glob() rewrites ('@' first) and
    # directories whose names a glob() pattern cannot spell (a wildcard in
    # them), each above a directory git ignores, so that gitignore = True
    # must split its patterns there; a package whose own directory git
    # ignores.
    for f in FIXED:
        p = b"fixed/" + f
        os.makedirs(os.path.dirname(tree.abs(p)), exist_ok=True)
        open(tree.abs(p), "wb").close()
        tree.files.append(p)
    with open(tree.abs(b"fixed/.gitignore"), "wb") as fh:
        fh.write(b"ign/\n*.o\n")
    open(tree.abs(b"fixed/ign/BUILD"), "wb").close()
    tree.packages.append(b"fixed/ign")
    add_links(rng, tree, outside)
    write_ignores(rng, tree)
    ws.write("check.bzl", bazelws.CHECK_BZL.encode())

    mirror = os.path.join(os.fsencode(ws.base), b"diff-%d" % args.seed, b"mirror")
    make_mirror(root, mirror)
    ignored = ignored_paths(tree, mirror)

    # What git ignores, for every package Bazel will see (also through links).
    ign = []
    for pkg in all_packages(tree):
        pre = pkg + b"/" if pkg else b""
        gone = [p for p in package_view(tree, pkg) if pre + p in ignored or
                (pre + p).split(b"/")[0] == b".git"]
        ign.append("    %s: {%s}," % (star(pkg), ", ".join("%s: True" % star(p) for p in sorted(gone))))
    ws.write("ignored.bzl", ("IGNORED = {\n" + "\n".join(ign) + "\n}\n").encode())

    cases_in = {}
    for pkg in tree.packages:
        if not os.path.isdir(tree.abs(pkg)):
            continue
        view = package_view(tree, pkg)
        pre = pkg + b"/" if pkg else b""
        lines = ['load("//:check.bzl", "check")']
        for c in range(args.cases):
            inc = []
            while len(inc) < rng.choice([1, 1, 1, 2, 3]):
                p = make_pattern(rng, view)
                if valid(p, True):
                    inc.append(p)
            exc = []
            for _ in range(rng.choice([0, 0, 1, 1, 2])):
                e = make_exclude(rng, view)
                # Excludes that native rejects are glob_cases.py's; here only
                # forms that removeExcludes() accepts.
                if b"*" not in e and b"?" not in e:
                    exc.append(e)
                elif b"**/*" in e and not any(ch in part for part in
                                              e.split(b"**/*", 1) for ch in b"*?"):
                    exc.append(e)
                elif valid(e, False):
                    exc.append(e)
            ed = rng.choice([0, 1, 1])
            gi = rng.random() < 0.4
            cid = "%s#%d" % (pkg.decode("latin-1") or "top", c)
            lines.append("check(%s, %s, exclude = %s, exclude_directories = %d, gitignore = %s)" % (
                star(cid.encode("latin-1")), star_list(inc), star_list(exc), ed,
                "True" if gi else "False"))
        for k, (inc, ed) in enumerate(FIXED_CASES.get(pkg, [])):
            for gi in ("False", "True"):
                cid = "%s#fixed%d%s" % (pkg.decode("latin-1") or "top", k, gi[0])
                lines.append("check(%s, %s, exclude_directories = %d, gitignore = %s)" % (
                    star(cid.encode("latin-1")), inc.decode("latin-1"), ed, gi))
        cases_in[os.path.realpath(tree.abs(pkg))] = args.cases + 2 * len(FIXED_CASES.get(pkg, []))
        name = b"BUILD.bazel" if os.path.exists(tree.abs(pre + b"BUILD.bazel")) else b"BUILD"
        ws.write(pre + name, ("\n".join(lines) + "\n").encode())

    # Each package's cases run once for every path Bazel reaches it by. A
    # directory whose path is no valid package name (a space at the end, a
    # byte that is not ASCII, a control byte) still stops glob() but loads as
    # no package: its cases may not report; all the others must.
    def plain(pkg):
        return all(c in b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-"
                   for c in pkg)
    counts = [(cases_in.get(os.path.realpath(tree.abs(pkg)), 0), plain(pkg))
              for pkg in all_packages(tree)]
    total = sum(n for n, ok in counts if ok)
    most = sum(n for n, ok in counts)

    # Through the wrapper, as docs/bazel.md sets a workspace up.
    os.makedirs(ws.path("tools"))
    os.symlink(os.path.join(bazelws.CHECKOUT, "bazel", "tools_bazel"), ws.path("tools/bazel"))
    p = ws.bazel(["query", "--keep_going", "//...:all"])
    errors = bazelws.error_blocks(p.stderr, ws.root)
    cases = bazelws.debug_lines(p.stderr, b"TRAWLCASE ")
    diffs = bazelws.debug_lines(p.stderr, b"TRAWLDIFF ")
    bad = 0
    for pkg, text in sorted(errors.items()):
        print("FAIL: package %r did not load:\n%s" % (pkg, text))
        bad += 1
    if p.returncode != 0 or (b"ERROR:" in p.stderr and not errors):
        for line in p.stderr.split(b"\n"):
            if line.startswith(b"ERROR:"):
                print(line.decode("latin-1"))
        print("FAIL: bazel query exited %d" % p.returncode)
        bad += 1
    nonempty = sum(1 for c in cases if c.split(b" ")[1] != b"0")
    for d in diffs:
        print("FAIL: " + d.decode("latin-1"))
        bad += 1
    if not total <= len(cases) <= most:
        print("FAIL: %d cases reported; between %d and %d expected" % (len(cases), total, most))
        bad += 1
    if cases and nonempty < len(cases) // 3:
        print("FAIL: only %d of %d cases matched anything" % (nonempty, len(cases)))
        bad += 1
    print("glob_diff: seed %d: %d packages, %d cases, %d non-empty, %d failures" % (
        args.seed, len(tree.packages), len(cases), nonempty, bad))
    if bad:
        print("the workspace is kept in %s" % ws.root)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
