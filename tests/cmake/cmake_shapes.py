#!/usr/bin/env python3
"""trawl_glob() in the shapes real projects give it, written here (no
third-party files): a glob per directory in a recursive macro (as flecs's
GroupSources does, 1,168 calls a configure there), a GLOB_RECURSE with
LIST_DIRECTORIES and RELATIVE in a macro, and a source tree reached through
'..' from the directory that globs.

usage: cmake_shapes.py TRAWL

Each project is a git work tree with .gitignore files at two depths. What
is asserted:
  - every call returns exactly what file() returns for the same arguments
    (one configure runs both, side by side);
  - how many `trawl batch` processes a configure starts (counted by a
    TRAWL_EXECUTABLE that logs its arguments): none for calls that ask
    nothing file() lacks; with CONFIGURE_DEPENDS, two on the first
    configure (the calls answered by file(), then all asked of trawl at the
    end, and the cache written) and one on a re-configure (the previous
    configure's queries asked together); with GITIGNORE and no
    CONFIGURE_DEPENDS, one a call on the first configure and one in all on
    a re-configure;
  - with CONFIGURE_DEPENDS and Ninja: a no-op build is "no work to do", and
    a source added deep in the tree, or in the tree reached through '..',
    is compiled in the same run."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "walk"))
from clitest import FAILURES, check  # noqa: E402

MODULE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                       "cmake", "Trawl.cmake"))


def write(path, text=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def run(args, env=None):
    p = subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def make_tree(root):
    """src/ with 3 x 4 x 3 directories, each holding C files, a header, a
    file git ignores and a hidden file; .gitignore at the top and below."""
    n = 0
    for a in range(3):
        for b in range(4):
            for c in range(3):
                d = os.path.join(root, "src", "m%d" % a, "p%d" % b, "q%d" % c)
                for name in ("x.c", "y.c", "z.h", "gen.o", ".hidden.c"):
                    write(os.path.join(d, name), "int v%d;\n" % n)
                    n += 1
    write(os.path.join(root, ".gitignore"), "*.o\n/build*/\n")
    write(os.path.join(root, "src", "m1", ".gitignore"), "p2/\n")
    write(os.path.join(root, "src", "main.c"), "int main(void) { return 0; }\n")
    subprocess.run(["git", "init", "-q", root], check=True)


# A recursive macro that globs each directory once, as flecs's GroupSources
# does; CALL is the glob call with its options, {dir} the directory.
MACRO = r"""
macro(walk_dirs curdir)
  {call}
  file(GLOB children_f RELATIVE ${{PROJECT_SOURCE_DIR}}/${{curdir}} ${{PROJECT_SOURCE_DIR}}/${{curdir}}/*)
  if(NOT "${{children}}" STREQUAL "${{children_f}}")
    math(EXPR diff_count "${{diff_count}} + 1")
    file(APPEND "${{CMAKE_BINARY_DIR}}/diffs.txt" "${{curdir}}: ${{children}} != ${{children_f}}\n")
  endif()
  math(EXPR call_count "${{call_count}} + 1")
  foreach(child ${{children_f}})
    if(IS_DIRECTORY ${{PROJECT_SOURCE_DIR}}/${{curdir}}/${{child}})
      walk_dirs(${{curdir}}/${{child}})
    endif()
  endforeach()
endmacro()
"""

# A GLOB_RECURSE of every directory below, LIST_DIRECTORIES and RELATIVE
# after it, as flecs's list_targets has it.
RECURSE = r"""
{recurse}
file(GLOB_RECURSE all_f LIST_DIRECTORIES true RELATIVE ${{PROJECT_SOURCE_DIR}}/src *)
if(NOT "${{all}}" STREQUAL "${{all_f}}")
  math(EXPR diff_count "${{diff_count}} + 1")
  file(APPEND "${{CMAKE_BINARY_DIR}}/diffs.txt" "recurse: ${{all}} != ${{all_f}}\n")
endif()
"""


def project(root, call, recurse, extra=""):
    write(os.path.join(root, "CMakeLists.txt"),
          "cmake_minimum_required(VERSION 3.20)\nproject(shapes C)\ninclude(%s)\n"
          "set(diff_count 0)\nset(call_count 0)\nfile(WRITE \"${CMAKE_BINARY_DIR}/diffs.txt\" \"\")\n"
          % MODULE + MACRO.format(call=call) + "walk_dirs(src)\n" +
          RECURSE.format(recurse=recurse) + extra +
          "file(WRITE \"${CMAKE_BINARY_DIR}/counts.txt\" \"${call_count} ${diff_count}\")\n")


class Counted:
    """A TRAWL_EXECUTABLE that logs each `trawl batch` on a file (the probe,
    which reads '-', is not counted)."""

    def __init__(self, tmp, trawl):
        self.log = os.path.join(tmp, "batch.log")
        self.exe = os.path.join(tmp, "counted-trawl")
        write(self.exe, '#!/bin/sh\ncase "$1 $*" in batch*" -") ;; batch*) echo "$*" >> "%s";; '
              'esac\nexec "%s" "$@"\n' % (self.log, trawl))
        os.chmod(self.exe, 0o755)

    def take(self):
        """The batches run since the last take()."""
        n = 0
        if os.path.exists(self.log):
            with open(self.log) as f:
                n = len(f.read().splitlines())
            os.remove(self.log)
        return n


def configure(root, build, counted, env=None):
    rc, out = run(["cmake", "-S", root, "-B", build, "-G", "Ninja",
                   "-DTRAWL_EXECUTABLE=" + counted.exe], env=env)
    counts = None
    if rc == 0:
        with open(os.path.join(build, "counts.txt")) as f:
            counts = tuple(int(x) for x in f.read().split())
        with open(os.path.join(build, "diffs.txt")) as f:
            diffs = f.read()
        if diffs:
            print(diffs[:3000])
    else:
        print(out[-3000:])
    return rc, counts, counted.take()


def shape_macro(tmp, counted):
    """The macro, with each way of calling trawl_glob()."""
    ways = [
        # (label, call, recurse, batches on the first configure, on a re-configure)
        ("nothing beyond file(), file()'s order",
         "trawl_glob(GLOB children RELATIVE ${PROJECT_SOURCE_DIR}/${curdir} "
         "${PROJECT_SOURCE_DIR}/${curdir}/*)",
         "trawl_glob(GLOB_RECURSE all LIST_DIRECTORIES true RELATIVE ${PROJECT_SOURCE_DIR}/src *)",
         0, 0),
        ("nothing beyond file(), trawl_glob()'s order",
         "trawl_glob(children GLOB RELATIVE ${PROJECT_SOURCE_DIR}/${curdir} "
         "${PROJECT_SOURCE_DIR}/${curdir}/*)",
         "trawl_glob(all GLOB_RECURSE LIST_DIRECTORIES true RELATIVE ${PROJECT_SOURCE_DIR}/src *)",
         0, 0),
        ("CONFIGURE_DEPENDS",
         "trawl_glob(GLOB children CONFIGURE_DEPENDS RELATIVE ${PROJECT_SOURCE_DIR}/${curdir} "
         "${PROJECT_SOURCE_DIR}/${curdir}/*)",
         "trawl_glob(GLOB_RECURSE all CONFIGURE_DEPENDS LIST_DIRECTORIES true RELATIVE "
         "${PROJECT_SOURCE_DIR}/src *)",
         2, 1),
    ]
    for n, (label, call, recurse, first, again) in enumerate(ways):
        root = os.path.join(tmp, "macro%d" % n)
        make_tree(root)
        project(root, call, recurse)
        build = os.path.join(tmp, "macro%d-build" % n)
        rc, counts, batches = configure(root, build, counted)
        dirs = counts[0] if counts else 0
        check("macro, %s: %d calls, each list equal to file()'s" % (label, dirs),
              (rc, counts[1] if counts else None, dirs > 40), (0, 0, True))
        check("macro, %s: first configure, trawl batch processes" % label, batches, first)
        rc, counts, batches = configure(root, build, counted)
        check("macro, %s: re-configure, unchanged: lists equal, %d trawl batch" % (label, again),
              (rc, counts[1] if counts else None, batches), (0, 0, again))
        write(os.path.join(root, "src", "m2", "p3", "q1", "new.c"), "int w;\n")
        os.makedirs(os.path.join(root, "src", "m0", "newdir"))
        rc, counts, batches = configure(root, build, counted)
        check("macro, %s: re-configure after a file and a directory appeared" % label,
              (rc, counts[1] if counts else None, counts[0] if counts else None),
              (0, 0, dirs + 1))
        if label == "CONFIGURE_DEPENDS":
            # The prefetch; the new directory's call answered by file(),
            # then by trawl at the end; the cache for all.
            check("macro, %s: ... batch processes: prefetch, the new directory, the cache" % label,
                  batches, 3)
            memo_and_watch(root, build, counted, dirs + 1)


def memo_count(build):
    """How many calls the memo (CMakeFiles/trawl/calls.cmake) holds, and
    when the file was written."""
    path = os.path.join(build, "CMakeFiles", "trawl", "calls.cmake")
    with open(path) as f:
        last = f.read().splitlines()[-1]
    return int(last.split()[-1].rstrip(")")), os.stat(path).st_mtime_ns


def memo_and_watch(root, build, counted, calls):
    """The lists the previous configure kept: taken whole when nothing
    changed (the memo is not even rewritten), and beside a call planned
    anew when the CMakeLists.txt gains one; either way the re-check still
    watches every directory."""
    n, when = memo_count(build)
    check("memo: one list kept per call with CONFIGURE_DEPENDS (and the GLOB_RECURSE)",
          n, calls + 1)
    rc, counts, batches = configure(root, build, counted)
    check("memo: a re-configure of an unchanged tree takes every list from it, rewrites nothing",
          (rc, counts[1] if counts else None, batches, memo_count(build)), (0, 0, 1, (n, when)))
    # One call more: the others from the memo, this one planned.
    with open(os.path.join(root, "CMakeLists.txt"), "a") as f:
        f.write("trawl_glob(GLOB extra CONFIGURE_DEPENDS src/m1/*)\nfile(GLOB extra_f src/m1/*)\n"
                "if(NOT \"${extra}\" STREQUAL \"${extra_f}\")\n"
                "  message(FATAL_ERROR \"differ: ${extra}\")\nendif()\n")
    rc, counts, batches = configure(root, build, counted)
    check("memo: with a call added, the others' lists from the memo, all equal to file()'s",
          (rc, counts[1] if counts else None, memo_count(build)[0]), (0, 0, n + 1))
    for k in range(2):
        rc, out = run(["ninja", "-C", build])
    check("memo: then a no-op build does no work", (rc, "ninja: no work to do." in out), (0, True))
    time.sleep(0.01)
    write(os.path.join(root, "src", "m0", "p1", "q0", "late.c"), "int late;\n")
    rc, out = run(["ninja", "-C", build])
    check("memo: a file added where only a call from the memo looks re-configures in that build",
          (rc, "Re-running CMake" in out), (0, True))
    with open(os.path.join(build, "diffs.txt")) as f:
        check("memo: ... and every list is file()'s again", f.read(), "")
    counted.take()


def shape_gitignore(tmp, counted):
    """GITIGNORE without CONFIGURE_DEPENDS: trawl answers every call; a
    re-configure asks them all in one process first."""
    root = os.path.join(tmp, "ignored")
    make_tree(root)
    call = ("trawl_glob(GLOB children GITIGNORE RELATIVE ${PROJECT_SOURCE_DIR}/${curdir} "
            "${PROJECT_SOURCE_DIR}/${curdir}/*)\n"
            "  file(APPEND \"${CMAKE_BINARY_DIR}/lists.txt\" \"${curdir}: ${children}\\n\")")
    # The comparison with file() is the macro's; here file() is filtered by
    # what git ignores, through git itself.
    write(os.path.join(root, "CMakeLists.txt"),
          "cmake_minimum_required(VERSION 3.20)\nproject(shapes C)\ninclude(%s)\n"
          "file(WRITE \"${CMAKE_BINARY_DIR}/lists.txt\" \"\")\n"
          "macro(walk_dirs curdir)\n  %s\n  foreach(child ${children})\n"
          "    if(IS_DIRECTORY ${PROJECT_SOURCE_DIR}/${curdir}/${child})\n"
          "      walk_dirs(${curdir}/${child})\n    endif()\n  endforeach()\nendmacro()\n"
          "walk_dirs(src)\n" % (MODULE, call))
    build = os.path.join(tmp, "ignored-build")
    lists = []
    for round_ in range(2):
        rc, out = run(["cmake", "-S", root, "-B", build, "-G", "Ninja",
                       "-DTRAWL_EXECUTABLE=" + counted.exe])
        batches = counted.take()
        with open(os.path.join(build, "lists.txt")) as f:
            lists.append(f.read())
        if round_ == 0:
            n_calls = len(lists[0].splitlines())
            check("GITIGNORE, no CONFIGURE_DEPENDS, first configure: one batch a call (%d)"
                  % n_calls, (rc, batches), (0, n_calls))
        else:
            check("GITIGNORE, no CONFIGURE_DEPENDS, re-configure: one batch in all, same lists",
                  (rc, batches, lists[1] == lists[0]), (0, 1, True))
    # What git ignores is left out: no gen.o, nothing of src/m1/p2.
    text = lists[0]
    check("GITIGNORE: ignored files and directories left out, hidden ones listed",
          ("gen.o" in text, "src/m1/p2" in text, "src/m1: .gitignore;p0;p1;p3" in text,
           ".hidden.c" in text), (False, False, True, True))


def shape_dotdot(tmp, counted):
    """The CMakeLists.txt is in cmake/, the sources it globs in ../src."""
    root = os.path.join(tmp, "dotdot")
    make_tree(root)
    write(os.path.join(root, "cmake", "CMakeLists.txt"),
          "cmake_minimum_required(VERSION 3.20)\nproject(dotdot C)\ninclude(%s)\n"
          "trawl_glob(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/../src/*.c)\n"
          "file(GLOB_RECURSE srcs_f ${CMAKE_CURRENT_SOURCE_DIR}/../src/*.c)\n"
          "if(NOT \"${srcs}\" STREQUAL \"${srcs_f}\")\n"
          "  message(FATAL_ERROR \"differ: ${srcs} != ${srcs_f}\")\nendif()\n"
          "add_executable(app ${srcs})\n" % MODULE)
    build = os.path.join(tmp, "dotdot-build")
    rc, out = run(["cmake", "-S", os.path.join(root, "cmake"), "-B", build, "-G", "Ninja",
                   "-DTRAWL_EXECUTABLE=" + counted.exe])
    check("'..': configure, the list equal to file()'s", rc, 0)
    if rc != 0:
        print(out[-3000:])
        return
    rc, out = run(["ninja", "-C", build])
    check("'..': builds", rc, 0)
    rc, out = run(["ninja", "-C", build])
    check("'..': a no-op build does no work", (rc, "ninja: no work to do." in out), (0, True))
    time.sleep(0.01)
    write(os.path.join(root, "src", "m0", "p1", "q2", "added.c"), "int added;\n")
    rc, out = run(["ninja", "-C", build])
    check("'..': a source added below ../src is compiled in the same run",
          (rc, "Re-running CMake" in out or "Configuring done" in out, "added.c" in out),
          (0, True, True))
    rc, out = run(["ninja", "-C", build])
    check("'..': ... and the next build does no work", (rc, "ninja: no work to do." in out),
          (0, True))
    counted.take()


def main():
    trawl = os.path.abspath(sys.argv[1])
    for tool in ("cmake", "ninja", "git"):
        if shutil.which(tool) is None:
            print("%s not found" % tool)
            return 77
    tmp = tempfile.mkdtemp(prefix="trawl-cmake-shapes-")
    try:
        counted = Counted(tmp, trawl)
        shape_macro(tmp, counted)
        shape_gitignore(tmp, counted)
        shape_dotdot(tmp, counted)
    finally:
        shutil.rmtree(tmp)
    print("%d failed" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
