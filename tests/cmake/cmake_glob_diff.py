#!/usr/bin/env python3
"""trawl_glob() against file(GLOB) and file(GLOB_RECURSE), in one configure.

usage: cmake_glob_diff.py TRAWL [TREES] [SEED]

Generates TREES (default 300) random trees and, for each, calls with the
same arguments; one CMakeLists.txt runs file() and trawl_glob() side by side
for every call and records each list that differs. Then it configures
again in the same build directory, where the answers come from the result
cache (the previous configure's queries asked first, in one process), and
compares again; and once more with the memo of the calls' lists removed.

Every run covers all of these settings (they are cycled through, not left
to the seed):
  - GLOB and GLOB_RECURSE; LIST_DIRECTORIES default, true and false;
    FOLLOW_SYMLINKS or not; RELATIVE none, the tree, a directory below it,
    the directory above it, a directory beside it; one or two globs a call;
  - relative globs and absolute ones, with "./", "//" or "x/.." in the
    directory part, or a directory that does not exist;
  - patterns with '*', '?', classes ('!' '^' ']' '-' ranges, a reversed
    range), "**", '\\', "." and ".." components, literal names;
  - trees inside a git work tree (.gitignore, .git entered by file()) and
    outside one; hidden files and directories, symbolic links to files, to
    directories (inside and outside the tree), dangling links, FIFOs, empty
    directories, names with spaces, brackets and bytes >= 0x80;
  - trawl_glob with and without CONFIGURE_DEPENDS, in its own argument
    order and in file()'s. Without, a call is file() itself (the argument
    handling is what is tested). With, the first configure answers a call
    with file() and asks trawl at the end, which must agree (no "files
    changed" warning); the re-configure takes every call's list from the
    memo the first one kept (docs/cmake.md), and a third, with the memo
    removed, plans every call again on answers from trawl's cache.
Not covered here (docs/cmake.md, limits): link loops, names a CMake list
cannot carry (tests/cmake/hostile.py), names of '~'."""
import itertools
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE = os.path.normpath(os.path.join(HERE, "..", "..", "cmake", "Trawl.cmake"))

FILE_NAMES = ["a.c", "b.c", "c.h", "x.txt", ".hid.c", ".h", "A.C", "a b.c", "\u00e9.c",
              "[x].c", "!a", "^b", "-c", "a-z", "1.c", "a.c.c", "x]y[.c", "ab", "src",
              "b\\c.c", "z"]
DIR_NAMES = ["src", "lib", "sub", ".dir", "a", "b.c", "deep", "x y", "[d]"]
COMPONENTS = ["*", "?", "*.c", "*.[ch]", "[a-c]*", "[!a]*", "[^.]*", "[]x]*", ".*", "a*",
              "*[", "x]*", "**", "s*", "?.c", "*.C", "[z-a]*", "[-a]*", "[a-]", "b\\*",
              "*\\c.c", "*b*", "[[]*", "."]


def bracket(s):
    """s as a CMake bracket argument (no evaluation at all)."""
    n = 1
    while ("]" + "=" * n + "]") in s or s.endswith("]" + "=" * n):
        n += 1
    return "[" + "=" * n + "[" + ("\n" if s.startswith("\n") else "") + s + "]" + "=" * n + "]"


def make_tree(rng, root, outside, git):
    os.makedirs(root)
    dirs = [""]

    def fill(rel, depth):
        for _ in range(int(rng.random() * 5)):
            name = FILE_NAMES[int(rng.random() * len(FILE_NAMES))]
            path = os.path.join(root, rel, name)
            if not os.path.exists(path):
                open(path, "w").close()
        if depth >= 3:
            return
        for _ in range(int(rng.random() * 3.2)):
            name = DIR_NAMES[int(rng.random() * len(DIR_NAMES))]
            sub = os.path.join(rel, name) if rel else name
            if os.path.lexists(os.path.join(root, sub)):
                continue
            os.makedirs(os.path.join(root, sub))
            dirs.append(sub)
            fill(sub, depth + 1)

    fill("", 0)
    # A target for directory links that holds no link itself and is no
    # ancestor of one: no loops.
    os.makedirs(os.path.join(root, "tgt", "in"))
    for f in ["t.c", ".t.c", "in/u.c"]:
        open(os.path.join(root, "tgt", f), "w").close()
    for rel in dirs:
        here = os.path.join(root, rel)
        r = rng.random()
        if r < 0.35:
            os.symlink(os.path.relpath(os.path.join(root, "tgt"), here), os.path.join(here, "dl"))
        elif r < 0.5:
            os.symlink(outside, os.path.join(here, "out"))
        if rng.random() < 0.3:
            os.symlink("nowhere", os.path.join(here, "dang.c"))
        if rng.random() < 0.3:
            os.symlink("a.c", os.path.join(here, "fl.c"))
        if rng.random() < 0.1:
            os.mkfifo(os.path.join(here, "fifo.c"))
        if rng.random() < 0.1:
            os.makedirs(os.path.join(here, "empty"), exist_ok=True)
    if git:
        subprocess.run(["git", "init", "-q", root], check=True)
        with open(os.path.join(root, ".gitignore"), "w") as f:
            f.write("*.txt\nsub/\n")
    return dirs


def random_pattern(rng, dirs):
    """1 to 3 components: the ones before the last mostly name directories
    (a real name or a wildcard), the last mostly matches something; a
    fifth of them are the odd ones of COMPONENTS."""
    r = rng.random()
    k = 1 if r < 0.55 else 2 if r < 0.9 else 3
    comps = []
    for i in range(k):
        r = rng.random()
        if i < k - 1:
            if r < 0.4 and len(dirs) > 1:
                comps.append(os.path.basename(dirs[1 + int(rng.random() * (len(dirs) - 1))]))
            elif r < 0.8:
                comps.append(rng.choice(["*", "?*", "[!.]*", "*[a-z]*", ".*", "[s-z]*"]))
            else:
                comps.append(COMPONENTS[int(rng.random() * len(COMPONENTS))])
        elif r < 0.6:
            comps.append(rng.choice(["*", "*.c", ".*", "*.[ch]", "[!a]*", "?*", "*[]]*"]))
        elif r < 0.85:
            comps.append(COMPONENTS[int(rng.random() * len(COMPONENTS))])
        else:
            comps.append(FILE_NAMES[int(rng.random() * len(FILE_NAMES))])
    return "/".join(comps)


SETTINGS = list(itertools.product(
    ["GLOB", "GLOB_RECURSE"],
    [None, "true", "false"],              # LIST_DIRECTORIES
    [False, True],                        # FOLLOW_SYMLINKS
    [None, "tree", "below", "above", "beside"],   # RELATIVE
    ["relative", "absolute", "dotted", "missing"],  # how the directory is written
    [False, True],                        # CONFIGURE_DEPENDS
))


def case_lines(rng, n, tree_rel, dirs, setting, proj):
    mode, ld, follow, rel, how, cd = setting
    exprs = []
    for _ in range(1 + int(rng.random() * 1.6)):
        pat = random_pattern(rng, dirs)
        sub = ""
        if rng.random() < 0.3 and len(dirs) > 1:
            sub = dirs[1 + int(rng.random() * (len(dirs) - 1))] + "/"
        if how == "relative":
            e = tree_rel + "/" + sub + pat
        elif how == "absolute":
            e = proj + "/" + tree_rel + "/" + sub + pat
        elif how == "dotted":
            e = rng.choice(["./", "trees//", "trees/../"]) + tree_rel + "/" + sub + pat
            e = e.replace("trees//trees/", "trees//").replace("trees/../trees/", "trees/../trees/")
        else:
            e = tree_rel + "/nope/" + sub + pat
        exprs.append(e)
    opts = []
    if ld is not None:
        opts += ["LIST_DIRECTORIES", ld]
    if follow:
        opts.append("FOLLOW_SYMLINKS")
    if rel is not None:
        where = {"tree": tree_rel, "below": tree_rel + "/" + (dirs[1] if len(dirs) > 1 else "x"),
                 "above": "trees", "beside": "elsewhere"}[rel]
        opts += ["RELATIVE", proj + "/" + where]
    args = " ".join(bracket(a) for a in opts + exprs)
    cd_arg = " CONFIGURE_DEPENDS" if cd else ""
    # Every other pair of calls in file()'s own order (the one-word
    # migration), with and without CONFIGURE_DEPENDS.
    call = ("trawl_glob(%s t%s %s)\n" if (n // 2) % 2 else "trawl_glob(t %s%s %s)\n") % (
        mode, cd_arg, args)
    return ("file(%s f %s)\n" % (mode, args) + call +
            "_diff_check(%d %s)\n" % (n, bracket(mode + " " + " ".join(opts + exprs))))


HEADER = r"""cmake_minimum_required(VERSION 3.20)
project(glob_diff NONE)
include(%s)
set(_diff_cases 0)
set(_diff_failed 0)
set(_diff_nonempty 0)
file(WRITE "${CMAKE_BINARY_DIR}/diff-report.txt" "")
function(_diff_check n what)
  math(EXPR cases "${_diff_cases} + 1")
  set(_diff_cases ${cases} PARENT_SCOPE)
  if(NOT "${f}" STREQUAL "")
    math(EXPR nonempty "${_diff_nonempty} + 1")
    set(_diff_nonempty ${nonempty} PARENT_SCOPE)
  elseif(DEFINED ENV{TRAWL_DIFF_EMPTY})
    file(APPEND "${CMAKE_BINARY_DIR}/empty.txt" "${what}\n")
  endif()
  if(NOT "${f}" STREQUAL "${t}")
    math(EXPR failed "${_diff_failed} + 1")
    set(_diff_failed ${failed} PARENT_SCOPE)
    file(APPEND "${CMAKE_BINARY_DIR}/diff-report.txt"
      "case ${n}: ${what}\n  file():     ${f}\n  trawl_glob: ${t}\n")
  endif()
endfunction()
"""
FOOTER = r"""
file(WRITE "${CMAKE_BINARY_DIR}/diff-count.txt" "${_diff_cases} ${_diff_failed} ${_diff_nonempty}")
"""


def configure(build, proj, trawl, first):
    args = ["cmake", "-S", proj, "-B", build, "-G", "Ninja", "-DTRAWL_EXECUTABLE=" + trawl] \
        if first else ["cmake", build]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.decode("utf-8", "replace")
    return p.returncode, out


def main():
    trawl = os.path.abspath(sys.argv[1])
    n_trees = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 15
    if shutil.which("cmake") is None or shutil.which("ninja") is None:
        print("cmake or ninja not found")
        return 77
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="trawl-glob-diff-")
    failed = 0
    try:
        proj = os.path.join(tmp, "proj")
        outside = os.path.join(tmp, "outside")
        os.makedirs(os.path.join(outside, "o"))
        for f in ["o.c", "o/p.c", ".o.c"]:
            open(os.path.join(outside, f), "w").close()
        os.makedirs(os.path.join(proj, "elsewhere"))
        body = [HEADER % bracket(MODULE)]
        order = SETTINGS[:]
        n = 0
        for t in range(n_trees):
            tree_rel = "trees/t%03d" % t
            dirs = make_tree(rng, os.path.join(proj, tree_rel), outside, git=(t % 2 == 0))
            for _ in range(3):
                setting = order[n % len(order)]
                body.append(case_lines(rng, n, tree_rel, dirs, setting, proj))
                n += 1
        body.append(FOOTER)
        with open(os.path.join(proj, "CMakeLists.txt"), "w", encoding="utf-8") as f:
            f.write("".join(body))
        if n < len(SETTINGS):
            print("FAIL: %d cases do not cover the %d settings" % (n, len(SETTINGS)))
            failed += 1
        build = os.path.join(tmp, "build")
        rounds = (("first configure", True), ("re-configure (memo)", False),
                  ("re-configure (cache, no memo)", False))
        for round_, first in rounds:
            if round_.endswith("no memo)"):
                # Planned again from the cache's answers, not taken from
                # the lists the previous configure kept.
                os.remove(os.path.join(build, "CMakeFiles", "trawl", "calls.digest"))
            rc, out = configure(build, proj, trawl, first)
            if rc != 0:
                print("FAIL %s: cmake exited %d\n%s" % (round_, rc, out[-4000:]))
                failed += 1
                continue
            with open(os.path.join(build, "diff-count.txt")) as f:
                cases, bad, nonempty = map(int, f.read().split())
            with open(os.path.join(build, "diff-report.txt"), encoding="utf-8",
                      errors="replace") as f:
                report = f.read()
            if bad:
                print("FAIL %s: %d of %d calls differ\n%s" % (round_, bad, cases, report[:6000]))
                failed += 1
            else:
                print("ok   %s: %d calls on %d trees, trawl_glob() == file() for each"
                      % (round_, cases, n_trees))
            # A comparison of empty lists proves little: a quarter of the calls
            # glob a directory that is missing, more than half of the others
            # must find something.
            if nonempty * 5 < cases * 2:
                print("FAIL %s: only %d of %d calls found anything" % (round_, nonempty, cases))
                failed += 1
            else:
                print("ok   %s: %d of them found something" % (round_, nonempty))
            # Nothing changes while the test configures: a call answered by
            # file() for now and by trawl at the end must agree with itself.
            if "files changed while CMake was configuring" in out:
                print("FAIL %s: trawl's answers at the end differ from file()'s at the call\n%s"
                      % (round_, out[-3000:]))
                failed += 1
            elif "trawl_glob" in out and "Warning" in out:
                print("note %s: warnings\n%s" % (round_, out[-3000:]))
    finally:
        if failed and os.environ.get("TRAWL_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp)
    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
