#!/usr/bin/env python3
"""trawl_glob() in real CMake projects: configure, build, and rebuild after
the sources change, with Ninja, Ninja Multi-Config and Unix Makefiles, the
module taken from an installed package and from the source checkout.

usage: integration.py TRAWL SOURCE_ROOT BUILD_ROOT [--times-only]

--times-only (suite 'coarse', on the kernel's coarse file times): only the
runs whose outcome rests on file times: each generator once (with the
installed package), the 1,500 directories and the escaped names; not the
other ways of getting the module, nor compiling trawl, which no file time
decides and which the plain run covers.

The project is a C program in a git work tree whose sources come from
    trawl_glob(srcs GLOB_RECURSE CONFIGURE_DEPENDS GITIGNORE src/*.c
               EXCLUDE "src/skip/**")
main.c prints one() + extra(), extra being a weak symbol that src/extra.c
defines, so the program's output tells whether extra.c was linked in. For
each generator and each way of getting the module:
  - configure and build; the program prints 1;
  - build again: nothing runs (Ninja: "ninja: no work to do."), no
    re-configure;
  - add src/extra.c: one build re-configures, compiles it and links it in
    (the program prints 43), in that same run;
  - build again: nothing;
  - add a file that does not match (src/notes.txt), one EXCLUDE leaves out
    (src/skip/z.c) and one git ignores (src/x.gen.c): the build checks
    (Ninja) but does not re-configure, and nothing is rebuilt;
  - edit the .gitignore (in the project's top, above src/) in place so
    that it no longer ignores src/x.gen.c: one build re-configures and
    compiles it;
  - delete src/extra.c: one build re-configures and links without it
    (prints 1);
  - build again: nothing.
And once more with 1,500 directories below src/, more than one depfile
takes (the watched paths are split over several edges), where a watched
directory is also deleted; and with watched directories whose names the
depfile must escape (' ', '#', '$') or cannot carry ('"').
The ways of getting the module: find_package(Trawl CONFIG) from a
`meson install --destdir` of this build (Trawl::trawl), include() of the
checkout's cmake/Trawl.cmake (there, once, with no trawl given: the module
compiles trawl with the project's C compiler), add_subdirectory(), and
FetchContent (FETCHCONTENT_SOURCE_DIR_TRAWL pointing at the checkout: no
network)."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "walk"))
from clitest import FAILURES, check  # noqa: E402

MAIN_C = r"""#include <stdio.h>
int one(void);
__attribute__((weak)) int extra(void);
int main(void) { printf("%d\n", one() + (extra ? extra() : 0)); return 0; }
"""

HEADERS = {
    "package": "find_package(Trawl CONFIG REQUIRED)\n",
    "include": "include(\"{src}/cmake/Trawl.cmake\")\n",
    "subdir": "add_subdirectory(\"{src}/cmake\" trawl)\n",
    "fetch": ("include(FetchContent)\n"
              "FetchContent_Declare(trawl GIT_REPOSITORY https://trawl.invalid/trawl.git\n"
              "  SOURCE_SUBDIR cmake)\n"
              "FetchContent_MakeAvailable(trawl)\n"),
}

BODY = """trawl_glob(srcs GLOB_RECURSE CONFIGURE_DEPENDS GITIGNORE src/*.c EXCLUDE "src/skip/**")
add_executable(app ${srcs})
"""


def write(path, text=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def run(args, cwd=None, env=None):
    p = subprocess.run(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return p.returncode, p.stdout.decode("utf-8", "replace")


class Project:
    def __init__(self, tmp, name, generator, how, src, trawl, prefix, build_trawl):
        self.label = "%s, %s" % (generator, how)
        self.dir = os.path.join(tmp, name)
        self.build = os.path.join(tmp, name + "-build")
        self.generator = generator
        write(os.path.join(self.dir, "src", "main.c"), MAIN_C)
        write(os.path.join(self.dir, "src", "one.c"), "int one(void) { return 1; }\n")
        write(os.path.join(self.dir, ".gitignore"), "*.gen.c\n")
        write(os.path.join(self.dir, "CMakeLists.txt"),
              "cmake_minimum_required(VERSION 3.20)\nproject(it C)\n" +
              HEADERS[how].format(src=src) + BODY)
        subprocess.run(["git", "init", "-q", self.dir], check=True)
        self.args = ["cmake", "-S", self.dir, "-B", self.build, "-G", generator]
        if how == "package":
            self.args.append("-DCMAKE_PREFIX_PATH=" + prefix)
        elif how == "fetch":
            self.args.append("-DFETCHCONTENT_SOURCE_DIR_TRAWL=" + src)
        if how != "package" and not build_trawl:
            self.args.append("-DTRAWL_EXECUTABLE=" + trawl)
        # No trawl on the PATH: the module must find its own; a trawl it
        # compiles is kept in this test's own cache directory.
        self.env = dict(os.environ, PATH="/usr/local/bin:/usr/bin:/bin",
                        XDG_CACHE_HOME=os.path.join(tmp, "xdg-cache"))

    def configure(self):
        return run(self.args, env=self.env)

    def build_(self):
        if self.generator == "Unix Makefiles":
            return run(["make", "-C", self.build], env=self.env)
        return run(["ninja", "-C", self.build], env=self.env)

    def program(self):
        exe = os.path.join(self.build, "app")
        if self.generator == "Ninja Multi-Config":
            exe = os.path.join(self.build, "Debug", "app")
        return run([exe])[1].strip()


def reconfigured(out):
    return "Configuring done" in out


def nothing_ran(generator, out):
    if generator.startswith("Ninja"):
        return "ninja: no work to do." in out and "trawl:" not in out and \
            not reconfigured(out)
    return not reconfigured(out) and "Building C" not in out and "Linking" not in out


def scenario(p):
    label = p.label
    rc, out = p.configure()
    if rc != 0:
        check("%s: configure" % label, out[-3000:], "exit 0")
        return
    rc, out = p.build_()
    check("%s: first build succeeds, program prints 1" % label, (rc, p.program()), (0, "1"))
    rc, out = p.build_()
    check("%s: no change: nothing runs, no re-configure" % label,
          (rc, nothing_ran(p.generator, out)), (0, True))
    if not nothing_ran(p.generator, out):
        print(out[-2000:])

    def change(f):
        f()
        time.sleep(0.02)   # past the clock tick of the change (docs/cmake.md)

    change(lambda: write(os.path.join(p.dir, "src", "extra.c"),
                         "int extra(void) { return 42; }\n"))
    rc, out = p.build_()
    check("%s: add a matching file: re-configured, compiled, linked in one run" % label,
          (rc, reconfigured(out), "extra.c" in out, p.program()), (0, True, True, "43"))
    rc, out = p.build_()
    check("%s: then nothing runs" % label, (rc, nothing_ran(p.generator, out)), (0, True))

    def others():
        write(os.path.join(p.dir, "src", "notes.txt"), "not a source\n")
        write(os.path.join(p.dir, "src", "skip", "z.c"), "int z(void) { return 7; }\n")
        write(os.path.join(p.dir, "src", "x.gen.c"), "int gen(void) { return 8; }\n")

    change(others)
    rc, out = p.build_()
    check("%s: add a non-matching, an excluded and a git-ignored file: no re-configure, "
          "nothing rebuilt" % label,
          (rc, reconfigured(out), "Building C" in out, p.program()), (0, False, False, "43"))
    if p.generator.startswith("Ninja"):
        check("%s: ... but the globs were re-checked" % label, "trawl: re-checking" in out, True)
    rc, out = p.build_()
    check("%s: then nothing runs" % label, (rc, nothing_ran(p.generator, out)), (0, True))

    # A new directory: the check reads it and watches it from then on; with
    # nothing in it no answer changed, so nothing re-configures. Then a
    # source in it is compiled in the same run.
    change(lambda: os.makedirs(os.path.join(p.dir, "src", "newdir")))
    rc, out = p.build_()
    check("%s: a new empty directory: no re-configure" % label, (rc, reconfigured(out)),
          (0, False))
    change(lambda: write(os.path.join(p.dir, "src", "newdir", "deep.c"),
                         "int deep(void) { return 9; }\n"))
    rc, out = p.build_()
    check("%s: a source in it: re-configured, compiled in the same run" % label,
          (rc, reconfigured(out), "deep.c" in out), (0, True, True))
    change(lambda: shutil.rmtree(os.path.join(p.dir, "src", "newdir")))
    rc, out = p.build_()
    check("%s: the directory removed: re-configured" % label, (rc, reconfigured(out)), (0, True))
    rc, out = p.build_()
    check("%s: then nothing runs" % label, (rc, nothing_ran(p.generator, out)), (0, True))

    # The .gitignore above the globbed directory, edited in place (no
    # directory changes): x.gen.c is no longer ignored.
    change(lambda: write(os.path.join(p.dir, ".gitignore"), "*.log\n"))
    rc, out = p.build_()
    check("%s: edit the .gitignore above in place: re-configured, the file it ignored compiled"
          % label, (rc, reconfigured(out), "x.gen.c" in out), (0, True, True))
    rc, out = p.build_()
    check("%s: then nothing runs" % label, (rc, nothing_ran(p.generator, out)), (0, True))

    change(lambda: os.remove(os.path.join(p.dir, "src", "extra.c")))
    rc, out = p.build_()
    check("%s: delete a matching file: re-configured and re-linked without it" % label,
          (rc, reconfigured(out), p.program()), (0, True, "1"))
    rc, out = p.build_()
    check("%s: then nothing runs" % label, (rc, nothing_ran(p.generator, out)), (0, True))


def many_directories(tmp, src, trawl):
    """More watched directories than the check's depfile lists (2,000,
    docs/cmake.md): the depfile names a path never there and the check runs
    on every build, which is all it costs; the same promises."""
    p = Project(tmp, "many", "Ninja", "include", src, trawl, None, False)
    for i in range(2500):
        os.makedirs(os.path.join(p.dir, "src", "d%04d" % i))
    label = "Ninja, 2,500 directories"
    rc, out = p.configure()
    check("%s: configure" % label, rc, 0)
    rc, out = p.build_()
    rc, out = p.build_()
    with open(os.path.join(p.build, "CMakeFiles", "trawl", "watch.d")) as f:
        listed = f.read().splitlines()
    check("%s: the check's depfile lists a path never there, and nothing else" % label,
          (len(listed), listed[-1].strip().endswith(".always")), (2, True))
    check("%s: no change: the check runs, nothing else" % label,
          (rc, "trawl: re-checking" in out, reconfigured(out)), (0, True, False))
    # Once: for build.ninja. The target that gives its commands their rules
    # is not in ALL, so the build's own turn does not reach the check again
    # (until 2026-12-02 it ran twice a build, the never-there path still
    # missing after the manifest's turn).
    check("%s: no change: the check runs once" % label, out.count("trawl: re-checking"), 1)
    time.sleep(0.02)
    write(os.path.join(p.dir, "src", "d2499", "extra.c"), "int extra(void) { return 42; }\n")
    time.sleep(0.02)
    rc, out = p.build_()
    check("%s: a matching file in the last directory: compiled in the same run" % label,
          (rc, reconfigured(out), p.program()), (0, True, "43"))
    write(os.path.join(p.dir, "src", "d0700", "notes.txt"))
    time.sleep(0.02)
    rc, out = p.build_()
    check("%s: a file that does not match: checked, no re-configure" % label,
          (rc, "trawl: re-checking" in out, reconfigured(out)), (0, True, False))
    shutil.rmtree(os.path.join(p.dir, "src", "d2499"))
    time.sleep(0.02)
    rc, out = p.build_()
    check("%s: delete a directory with a source: re-configured, re-linked" % label,
          (rc, reconfigured(out), p.program()), (0, True, "1"))


def watched_names(tmp, src, trawl):
    """Watched directories whose names Ninja's depfile must escape (a blank,
    '#', '$'): still "no work to do", and a source added in one compiled in
    the same run. And one it cannot carry ('"'): the check runs on every
    build (its depfile names a path never there), still same run."""
    p = Project(tmp, "names", "Ninja", "include", src, trawl, None, False)
    for d in ("a b", "c#d", "e$f"):
        os.makedirs(os.path.join(p.dir, "src", d))
    label = "Ninja, watched names to escape"
    rc, out = p.configure()
    check("%s: configure" % label, rc, 0)
    p.build_()
    rc, out = p.build_()
    check("%s: no change: ninja: no work to do" % label, (rc, nothing_ran(p.generator, out)),
          (0, True))
    for d in ("a b", "c#d", "e$f"):
        time.sleep(0.02)
        write(os.path.join(p.dir, "src", d, "extra.c"), "int extra(void) { return 42; }\n")
        time.sleep(0.02)
        rc, out = p.build_()
        check("%s: a source added in %r: compiled in the same run" % (label, d),
              (rc, reconfigured(out), p.program()), (0, True, "43"))
        os.remove(os.path.join(p.dir, "src", d, "extra.c"))
        time.sleep(0.02)
        rc, out = p.build_()
        check("%s: deleted again: re-linked without it" % label, (rc, p.program()), (0, "1"))
        rc, out = p.build_()
        check("%s: then nothing runs" % label, (rc, nothing_ran(p.generator, out)), (0, True))

    q = Project(tmp, "quote", "Ninja", "include", src, trawl, None, False)
    os.makedirs(os.path.join(q.dir, "src", 'g"h'))
    label = "Ninja, a watched name no depfile carries"
    rc, out = q.configure()
    check("%s: configure" % label, rc, 0)
    q.build_()
    rc, out = q.build_()
    check("%s: no change: the check runs on every build, nothing else" % label,
          (rc, "trawl: re-checking" in out, reconfigured(out)), (0, True, False))
    time.sleep(0.02)
    write(os.path.join(q.dir, "src", 'g"h', "extra.c"), "int extra(void) { return 42; }\n")
    time.sleep(0.02)
    rc, out = q.build_()
    check("%s: a source added there: compiled in the same run" % label,
          (rc, reconfigured(out), q.program()), (0, True, "43"))


def compiled_once(tmp, src):
    """The module compiles trawl once per machine: a second build directory
    of another project finds it in the cache; two configures that race on an
    empty cache both succeed and leave one binary; a changed source compiles
    it again."""
    cache = os.path.join(tmp, "race-cache")
    projects = []
    for n in range(3):
        d = os.path.join(tmp, "once%d" % n)
        write(os.path.join(d, "src", "a.c"), "int main(void) { return 0; }\n")
        write(os.path.join(d, "CMakeLists.txt"),
              "cmake_minimum_required(VERSION 3.20)\nproject(once C)\n"
              "include(%s/cmake/Trawl.cmake)\n"
              "trawl_glob(srcs GLOB CONFIGURE_DEPENDS src/*.c)\n"
              "add_executable(app ${srcs})\n" % src)
        projects.append(d)
    env = dict(os.environ, PATH="/usr/bin:/bin", XDG_CACHE_HOME=cache)
    racers = [subprocess.Popen(["cmake", "-S", d, "-B", d + "-build", "-G", "Ninja"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
              for d in projects[:2]]
    outs = [r.communicate()[0].decode("utf-8", "replace") for r in racers]
    left = sorted(os.listdir(glob.glob(os.path.join(cache, "trawl", "cmake", "*"))[0]))
    check("two configures racing on an empty cache: both succeed, one trawl, no temporary left",
          ([r.returncode for r in racers], left), ([0, 0], ["recipe", "trawl"]))
    if any(r.returncode for r in racers):
        print("\n".join(outs))
    rc, out = run(["cmake", "-S", projects[2], "-B", projects[2] + "-build", "-G", "Ninja"],
                  env=env)
    check("a third build directory finds it: nothing compiled",
          (rc, "building trawl" in out), (0, False))
    rc, out = run(["ninja", "-C", projects[2] + "-build"], env=env)
    check("... and builds", rc, 0)
    # Another checkout of the same sources, one of them changed: compiled again.
    copy = os.path.join(tmp, "trawl-copy")
    for part in ("cmake", "libcore", "plugins"):
        shutil.copytree(os.path.join(src, part), os.path.join(copy, part))
    shutil.copy(os.path.join(src, "sources.txt"), copy)
    with open(os.path.join(copy, "plugins", "cli", "main.c"), "a") as f:
        f.write("/* changed */\n")
    with open(os.path.join(projects[2], "CMakeLists.txt")) as f:
        text = f.read().replace(src + "/cmake", copy + "/cmake")
    write(os.path.join(projects[2], "CMakeLists.txt"), text)
    rc, out = run(["cmake", "-S", projects[2], "-B", projects[2] + "-b2", "-G", "Ninja"], env=env)
    check("a changed source is compiled again, beside the first",
          (rc, "building trawl" in out,
           len(glob.glob(os.path.join(cache, "trawl", "cmake", "*", "trawl")))), (0, True, 2))


def main():
    trawl, src, build_root = (os.path.abspath(a) for a in sys.argv[1:4])
    times_only = sys.argv[4:] == ["--times-only"]
    if sys.argv[4:] and not times_only:
        print("usage: integration.py TRAWL SOURCE_ROOT BUILD_ROOT [--times-only]",
              file=sys.stderr)
        return 2
    for tool in ("cmake", "ninja", "make", "git", "cc"):
        if shutil.which(tool) is None:
            print("%s not found" % tool)
            return 77
    tmp = tempfile.mkdtemp(prefix="trawl-cmake-it-")
    try:
        stage = os.path.join(tmp, "stage")
        rc, out = run(["meson", "install", "--no-rebuild", "--quiet", "-C", build_root,
                       "--destdir", stage])
        configs = [os.path.join(d, f) for d, _, fs in os.walk(stage) for f in fs
                   if f == "TrawlConfig.cmake"]
        check("meson install puts TrawlConfig.cmake under lib/cmake/Trawl",
              (rc, [c.endswith("/lib/cmake/Trawl/TrawlConfig.cmake") for c in configs]),
              (0, [True]))
        if rc != 0 or not configs:
            print(out)
            return 1
        prefix = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(configs[0]))))
        for f in ("TrawlConfigVersion.cmake", "Trawl.cmake"):
            check("installed: " + f, os.path.exists(os.path.join(os.path.dirname(configs[0]), f)),
                  True)
        plan = [
            ("Ninja", "include", True),         # the module compiles trawl here
            ("Ninja", "package", False),
            ("Ninja", "subdir", False),
            ("Ninja", "fetch", False),
            ("Unix Makefiles", "package", False),
            ("Unix Makefiles", "include", False),
            ("Ninja Multi-Config", "package", False),
            ("Ninja Multi-Config", "include", False),
        ]
        if times_only:
            plan = [step for step in plan if step[1] == "package"]
        for n, (generator, how, build_trawl) in enumerate(plan):
            p = Project(tmp, "p%d" % n, generator, how, src, trawl, prefix, build_trawl)
            scenario(p)
            if build_trawl:
                built = glob.glob(os.path.join(tmp, "xdg-cache", "trawl", "cmake", "*", "trawl"))
                check("%s: trawl was compiled once, into the user's cache directory" % p.label,
                      [os.access(b, os.X_OK) for b in built], [True])
        if not times_only:
            compiled_once(tmp, src)
        many_directories(tmp, src, trawl)
        watched_names(tmp, src, trawl)
    finally:
        shutil.rmtree(tmp)
    print("%d failed" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
