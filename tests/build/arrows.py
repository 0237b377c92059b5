#!/usr/bin/env python3
"""The arrows of docs/architecture.md, as the objects have them.

usage: arrows.py BUILD_DIR [ARCHITECTURE_MD]

From `nm` of libcore's static library and of the command's objects: which
file calls (or reads) a symbol another file defines. Two files that reach
each other, directly or round a longer circle, are one module in two files;
the page says the arrows run one way, and names the one pair allowed to
call each other, a work queue and its step: walk/sched.c and walk/step.c.
Every other circle fails, named with the symbols that close it. Also: the
command's I/O library (plugins/cli/meson.build, cli_io) calls no
subcommand and no plugin, and libcore calls nothing of the command.

With ARCHITECTURE_MD: its list of every arrow, file by file (the lines
"- `FILE` → `FILE`, ..." of the section "Every arrow"), must be the arrows
the objects have, no more and no fewer, so that the page stays true (the
command's calls into libcore aside: they go through the public headers).
An arrow is a call or a reference to data (a table, an error domain); a
header included for its types alone is none."""
import re
import collections
import os
import subprocess
import sys

ALLOWED = [{"libcore/walk/sched", "libcore/walk/step"}]


def symbols(objects):
    """{file: (defined, undefined)} from nm of OBJECTS (an archive or .o files)."""
    out = {}
    for obj in objects:
        p = subprocess.run(["nm", obj], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, check=True)
        member = obj
        for line in p.stdout.splitlines():
            if line.endswith(":") and " " not in line:
                member = line[:-1]
                continue
            parts = line.split()
            if not parts:
                continue
            d, u = out.setdefault(member, (set(), set()))
            if len(parts) == 3 and parts[1] in "TDBRC":
                d.add(parts[2])
            elif len(parts) == 2 and parts[0] == "U":
                u.add(parts[1])
    return out


def name(member, prefix):
    """libcore/walk/sched for src_walk_sched.c.o; plugins/meson/cmd-meson for
    .._meson_cmd-meson.c.o (Meson's object names)."""
    base = os.path.basename(member)
    for ext in (".c.o", ".o"):
        if base.endswith(ext):
            base = base[:-len(ext)]
    if base.startswith("src_"):
        base = base[4:]
        for folder in ("walk_", "cache_", "json_"):
            if base.startswith(folder):
                base = folder[:-1] + "/" + base[len(folder):]
        return "libcore/" + base
    if base.startswith(".._"):
        return "plugins/" + base[3:].replace("_", "/", 1)
    return prefix + base


def graph(files):
    owner = {}
    for f, (d, _) in files.items():
        for s in d:
            owner[s] = f
    edges = collections.defaultdict(dict)
    for f, (_, u) in files.items():
        for s in u:
            g = owner.get(s)
            if g and g != f:
                edges[f].setdefault(g, []).append(s)
    return edges


def circles(edges):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    nodes = set(edges) | {g for e in edges.values() for g in e}

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def shown(f):
    """A file as the page names it: libcore's below libcore/src, the
    plugins' below plugins/, except plugins/cmake/'s and plugins/bazel/'s, in
    full: cmake/ and bazel/ at the top of the checkout are other folders
    (what CMake and Bazel load), and a reader (and tests/docs/doc_check.py)
    would look there."""
    if f.startswith("plugins/cmake/") or f.startswith("plugins/bazel/"):
        return f + ".c"
    for top in ("libcore/", "plugins/"):
        if f.startswith(top):
            return f[len(top):] + ".c"
    return f


def documented(path):
    """{(from, to)} of the page's section "Every arrow"."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r"^#+ Every arrow.*?$(.*?)(?=^#)", text, re.M | re.S)
    if not m:
        return None
    out = set()
    for line in m.group(1).splitlines():
        lm = re.match(r"^- `([^`]+)` → (.*)$", line)
        if lm:
            for to in re.findall(r"`([^`]+)`", lm.group(2)):
                out.add((lm.group(1), to))
    return out


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    build = argv[1]
    lib = symbols([os.path.join(build, "libcore", "libtrawlcore.a")])
    objs = os.path.join(build, "plugins", "cli", "trawl.p")
    # (os.listdir, not glob: Meson names a plugin's objects ".._meson_….o".)
    cli = symbols(sorted(os.path.join(objs, o) for o in os.listdir(objs) if o.endswith(".o")) +
                  [os.path.join(build, "plugins", "cli", "libtrawl-cli-io.a")])
    files = {name(m, "libcore/"): v for m, v in lib.items()}
    files.update({name(m, "plugins/cli/"): v for m, v in cli.items()})
    if len(lib) < 20 or len(cli) < 10:
        print("FAIL: found %d library objects and %d of the command's" % (len(lib), len(cli)))
        return 1
    edges = graph(files)
    failures = 0
    for comp in circles(edges):
        if comp in ALLOWED:
            print("ok   %s call each other (allowed: the queue and its step)" % " and ".join(sorted(comp)))
            continue
        failures += 1
        print("FAIL a circle: %s" % ", ".join(sorted(comp)))
        for f in sorted(comp):
            for g, syms in sorted(edges.get(f, {}).items()):
                if g in comp:
                    print("       %s -> %s (%s)" % (f, g, ", ".join(sorted(syms)[:4])))
    io = {"json", "output", "options", "queries", "report", "format-cmake"}
    for f, targets in sorted(edges.items()):
        for g, syms in sorted(targets.items()):
            wrong = (f.startswith("libcore/") and not g.startswith("libcore/")) or \
                (os.path.basename(f) in io and os.path.basename(g) not in io and
                 not g.startswith("libcore/"))
            if wrong:
                failures += 1
                print("FAIL %s -> %s (%s)" % (f, g, ", ".join(sorted(syms)[:4])))
    if len(argv) == 3:
        # (The command's calls into libcore go through the public headers,
        # whichever file defines a function: not listed.)
        have = {(shown(f), shown(g)) for f, t in edges.items() for g in t
                if not (f.startswith("plugins/") and g.startswith("libcore/"))}
        said = documented(argv[2])
        if said is None:
            failures += 1
            print("FAIL %s has no section \"Every arrow\"" % argv[2])
        else:
            for a, b in sorted(have - said):
                failures += 1
                print("FAIL %s → %s is in the code, not on the page" % (a, b))
            for a, b in sorted(said - have):
                failures += 1
                print("FAIL %s → %s is on the page, not in the code" % (a, b))
            if have == said:
                print("ok   the page's %d arrows are the code's" % len(said))
    print("%d files, %d arrows between them, %d failures" % (
        len(files), sum(len(t) for t in edges.values()), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
