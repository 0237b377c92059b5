#!/usr/bin/env python3
"""The Meson and CMake re-checks through real Ninja, with coarse file times.

    run.sh python3 ninja_tick.py TRAWL SOURCE_ROOT

Ninja decides whether to run the re-check by comparing times itself: the
check's mark (`trawl check --checked`, whose time is the file system's time
when the check began, less 1 ns) against every directory the caches depend
on (the depfile). On a kernel that stamps with its coarse clock (run.sh:
TMPDIR on ramfs) a change in the tick the check began has that very time.

For a Meson project (`trawl meson`, its postconf) and a CMake one
(trawl_glob with CONFIGURE_DEPENDS, the Ninja generator), in git work trees:
- a matching file created right after a no-op build ("ninja: no work to
  do.") is compiled by the next build;
- a matching file created while the check runs, 0.5 to 3 ms after it began
  (in its tick, most of the times, and after it looked at the directory,
  some of them: each try prints which) is compiled by that build or the
  next one.
"""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "meson-plugin"))
from mesontest import (MAIN, NO_WORK, Project, check, check_in, environment, finish,  # noqa: E402
                       run, settle)
from regen import TOP  # noqa: E402  (the Meson project regen.py builds)

CMAKE_LISTS = """cmake_minimum_required(VERSION 3.20)
project(app C)
include("{src}/cmake/Trawl.cmake")
trawl_glob(srcs GLOB_RECURSE CONFIGURE_DEPENDS GITIGNORE src/*.c)
add_executable(prog main.c ${{srcs}})
"""

AFTER_NO_OP = 2
DURING_CHECK = 6


class MesonProject(Project):
    name = "Meson"

    def configure(self):
        return self.setup()[:2]

    def mark(self):
        return self.path("b/meson-private/trawl/checked")


class CMakeProject(Project):
    name = "CMake"

    def __init__(self, root, env, src, trawl):
        super().__init__(root, env)
        self.write("CMakeLists.txt", CMAKE_LISTS.format(src=src))
        self.args = ["cmake", "-S", root, "-B", self.path("b"), "-G", "Ninja",
                     "-DTRAWL_EXECUTABLE=" + os.path.abspath(trawl)]

    def configure(self):
        return run(self.args, env=self.env)[:2]

    def mark(self):
        for top, _, files in os.walk(self.path("b")):
            if "checked" in files:
                return os.path.join(top, "checked")
        return None


def scenario(p):
    what = p.name
    p.write("main.c", MAIN)
    p.write(".gitignore", "*.gen.c\n")
    files = ["src/a.c"]
    p.write("src/a.c")
    settle()
    rc, out = p.configure()
    check("%s: configure" % what, rc, 0)
    rc, out = p.ninja()
    check("%s: first build" % what, (rc, p.program()), (0, sorted(files)))
    check("%s: the check leaves a mark" % what, p.mark() is not None, True)
    settle()
    rc, out = p.ninja()
    check_in("%s: a no-op build" % what, NO_WORK, out)

    for i in range(AFTER_NO_OP):
        rc, out = p.ninja()
        check_in("%s, after no-op %d: no work to do" % (what, i), NO_WORK, out)
        f = "src/after-no-op-%d.c" % i
        p.write(f)
        files.append(f)
        rc, out = p.ninja()
        check("%s: %s, created right after a no-op build, is compiled by the next" % (what, f),
              (rc, p.program()), (0, sorted(files)))
        settle()

    sharp = 0
    for i in range(DURING_CHECK):
        # Something the check must look at, old enough not to be racy.
        p.write("src/notes-%d.txt" % i, "")
        settle()
        mark = p.mark()
        before = began = os.stat(mark).st_mtime_ns
        build = subprocess.Popen(["ninja", "-C", "b"], cwd=p.root, env=p.env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        # The check begins by setting its mark to the file system's "now".
        while began == before and build.poll() is None:
            began = os.stat(mark).st_mtime_ns
        # A moment later, so that it has looked at src: later each try.
        until = time.perf_counter() + 0.0005 * (i + 1)
        while time.perf_counter() < until:
            pass
        f = "src/during-%d.c" % i
        p.write(f)
        created = os.stat(p.path("src")).st_mtime_ns
        files.append(f)
        build.communicate()
        check("%s, during check %d: that build succeeds" % (what, i), build.returncode, 0)
        seen = f in p.program()
        rc, out = p.ninja()
        check("%s: %s, created while the check ran, is compiled by then" % (what, f),
              (rc, p.program()), (0, sorted(files)))
        in_tick = created == began
        sharp += in_tick and not seen
        print("     %s: created %s the check began, compiled by %s build" % (
            f, "in the tick" if in_tick else "%.1f ms after" % ((created - began) / 1e6),
            "that" if seen else "the next"))
        settle()
    print("[tick] %s: %d of %d files created while the check ran were made in the tick it "
          "began, after it had looked (left to the next build)" % (what, sharp, DURING_CHECK))


def main(argv):
    trawl, src = argv[1], os.path.abspath(argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        env = environment(tmp, trawl)
        m = MesonProject(os.path.join(tmp, "meson"), env)
        m.write("meson.build", TOP % "")
        scenario(m)
        scenario(CMakeProject(os.path.join(tmp, "cmake"), env, src, trawl))
    finish()


if __name__ == "__main__":
    main(sys.argv)
