#!/usr/bin/env python3
"""Project shapes seen when trawl was adopted in real projects, written
here (no third-party file), with the real meson and ninja (docs/meson.md).

    meson_shapes.py TRAWL_EXE

- `dotdot`: the Meson project lives two levels down in a git work tree
  (build/meson/, as zstd's does), and its meson.build files reach the
  sources through `..`: several lists in several subdirectories, an
  exclude, .gitignore files at two depths, the build directory inside the
  Meson project. Added, deleted, excluded and ignored files; the check's
  output labelled by the list as written.
- `wrapped`: a top-level `'**/*.c'` next to a wrap subproject in a
  subproject_dir of the project's own ('contrib'), cloned by Meson from a
  git repository, the subproject discovering its own sources with trawl
  too; no .gitignore. Meson's sandbox refuses every file of the clone to
  the top-level project, so the top list must leave it out; the
  subproject's own list picks up a file in the same ninja run.
- `no-git`: a tree outside any git work tree, the build directory inside
  it, `'**/*.c'`: the build directory is left out, listed and watched by
  nothing, so that building (which writes into it) is no change.

Each program prints the names of the files linked into it
(mesontest.SOURCE), so "compiled" is read from the program itself.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mesontest import (MAIN, NO_WORK, RECHECK, REGENERATED, SOURCE, Project, check, check_in,
                       check_not_in, environment, finish, git_repository, settle)


def newer_than_mark(p, build):
    """What made Ninja run the check: the watched paths newer than the
    mark, or gone (a depfile that lists CHECKED.d.always: unproven)."""
    mark = os.stat(p.path(os.path.join(build, "meson-private/trawl/checked"))).st_mtime_ns
    newer = []
    for w in p.watched(build):
        try:
            if os.stat(w).st_mtime_ns > mark:
                newer.append(w)
        except FileNotFoundError:
            newer.append(w + " (gone)")
    return newer


def no_op(p, what, build, check_may_run=False):
    """A ninja run with nothing to do, which runs no command at all — unless
    CHECK_MAY_RUN: then the check may run once (directories that were racy
    when a walk recorded them), and the run after it runs nothing."""
    if check_may_run:
        settle()
        rc, out = p.ninja(build)
        check("%s: ninja succeeds, no work, no regeneration" % what,
              (rc, NO_WORK in out, REGENERATED in out), (0, True, False))
    watched_before = newer_than_mark(p, build)
    rc, out = p.ninja(build)
    check("%s: ninja succeeds" % what, rc, 0)
    check_in("%s: no work to do" % what, NO_WORK, out)
    check_not_in("%s: the check did not even run" % what, RECHECK, out)
    if RECHECK in out:
        print("  watched paths newer than the mark before that run: %r" % watched_before)
    check_not_in("%s: no regeneration" % what, REGENERATED, out)


def changed(p, what, build, want, label=None, name="prog"):
    """One ninja run regenerates and builds; the program NAME then holds
    WANT; with LABEL, the check printed it (the list as written, the
    change)."""
    rc, out = p.ninja(build)
    check("%s: ninja succeeds in one run" % what, rc, 0)
    check_in("%s: Meson regenerates in that run" % what, REGENERATED, out)
    if label:
        check_in("%s: the check names the list as written, and the change" % what, label, out)
    check("%s: the program holds exactly the files" % what, p.program(build, name), sorted(want))
    no_op(p, what + ", then", build)


DOTDOT_TOP = """project('shapes', 'c')
trawl = find_program('trawl')
meson.add_postconf_script(trawl, 'meson', '--postconf')
subdir('lib')
subdir('programs')
"""
DOTDOT_LIB = """r = run_command(trawl, 'meson',
  '-C', '../../../lib', '**/*.c', '-x', 'legacy/**',
  '--list', '-C', '../../../lib', '**/*.h', '-x', 'legacy/**',
  check : false)
assert(r.returncode() == 0, r.stderr())
found = r.stdout().split('\\0')
libshapes = static_library('shapes', files(found[0].split('\\n')), files(found[1].split('\\n')))
"""
DOTDOT_PROGRAMS = """r = run_command(trawl, 'meson', '-C', '../../../programs', '*.c', check : false)
assert(r.returncode() == 0, r.stderr())
executable('prog', files(r.stdout().split('\\n')), link_whole : libshapes)
"""
LIB_LIST = "lib/meson.build: list 1: '-C', '../../../lib', '**/*.c', '-x', 'legacy/**'"


def dotdot(tmp, env):
    p = Project(os.path.join(tmp, "dotdot"), env)
    p.write(".gitignore", "*.tmp\n")
    p.write("lib/.gitignore", "generated/\n")
    p.write("build/meson/meson.build", DOTDOT_TOP)
    p.write("build/meson/lib/meson.build", DOTDOT_LIB)
    p.write("build/meson/programs/meson.build", DOTDOT_PROGRAMS)
    p.write("programs/main.c", MAIN)
    p.write("lib/zstd.h", "")
    p.write("lib/common/mem.h", "")
    files = ["lib/common/entropy.c", "lib/common/xxhash.c", "lib/compress/compress.c",
             "lib/compress/fast.c", "lib/decompress/decompress.c", "programs/util.c"]
    for f in files + ["lib/legacy/v01.c", "lib/generated/gen.c", "tests/fuzz.c"]:
        p.write(f)
    settle()
    build = "build/meson/builddir"
    rc, out, err = p.run_meson(["setup", "builddir"], "build/meson")
    check("dotdot: setup in build/meson succeeds", rc, 0)
    if rc != 0:
        print(out + err)
    rc, out = p.ninja(build)
    check("dotdot: builds", rc, 0)
    check("dotdot: the program holds the files found through ..",
          p.program(build, "programs/prog"), sorted(files))
    no_op(p, "dotdot: no change", build)

    p.write("lib/compress/new.c")
    files.append("lib/compress/new.c")
    prog = "programs/prog"
    changed(p, "dotdot: a file added through ..", build, files,
            LIB_LIST + "\n+ ../../../lib/compress/new.c\n", prog)
    p.write("lib/compress/mt/pool.c")
    files.append("lib/compress/mt/pool.c")
    changed(p, "dotdot: a new directory with a file", build, files, name=prog)
    p.remove("programs/util.c")
    files.remove("programs/util.c")
    changed(p, "dotdot: a file deleted in another list's directory", build, files,
            "programs/meson.build: list 1: '-C', '../../../programs', '*.c'\n"
            "- ../../../programs/util.c\n", prog)

    # Excluded and ignored directories are not entered, so not watched.
    for f in ("lib/legacy/v02.c", "lib/generated/gen2.c", "tests/fuzz2.c"):
        p.write(f)
    settle()
    no_op(p, "dotdot: files added in excluded, ignored and unlisted directories", build)
    # An ignored file in a listed directory: the check reads it, nothing
    # changed.
    p.write("lib/common/scratch.tmp")
    settle()
    rc, out = p.ninja(build)
    check("dotdot: an ignored file in a listed directory: the check runs",
          (rc, RECHECK in out, REGENERATED in out, NO_WORK in out), (0, True, False, True))


TINY = """project('tiny', 'c')
trawl = find_program('trawl')
r = run_command(trawl, 'meson', 'src/**/*.c', check : false)
assert(r.returncode() == 0, r.stderr())
tiny_lib = static_library('tiny', files(r.stdout().split('\\n')))
meson.override_dependency('tiny', declare_dependency(link_whole : tiny_lib))
"""
TINY_WRAP = """[wrap-git]
url = %s
revision = head
directory = tiny

[provide]
dependency_names = tiny
"""
WRAPPED_TOP = """project('wrapped', 'c', subproject_dir : 'contrib')
trawl = find_program('trawl')
meson.add_postconf_script(trawl, 'meson', '--postconf')
tiny_dep = dependency('tiny')
r = run_command(trawl, 'meson', '**/*.c', '-x', 'tools/**', check : false)
assert(r.returncode() == 0, r.stderr())
executable('prog', files(r.stdout().split('\\n')), dependencies : tiny_dep)
"""


def wrapped(tmp, env):
    tiny_files = ["src/t1.c", "src/deep/t2.c"]
    upstream = git_repository(os.path.join(tmp, "upstream", "tiny.git"), dict(
        [("meson.build", TINY), ("examples/ex.c", MAIN)] +
        [(f, SOURCE % ("contrib/tiny/" + f)) for f in tiny_files]), env)
    p = Project(os.path.join(tmp, "wrapped"), env)
    p.write("meson.build", WRAPPED_TOP)
    p.write("contrib/tiny.wrap", TINY_WRAP % upstream)
    p.write("main.c", MAIN)
    p.write("tools/gen.c", MAIN)
    files = ["app/core/a.c", "app/core/b.c", "app/ui/c.c"]
    for f in files:
        p.write(f)
    files += ["contrib/tiny/" + f for f in tiny_files]
    settle()
    rc, out, err = p.setup()
    check("wrapped: setup succeeds (no sandbox violation)", rc, 0)
    if rc != 0:
        print(out + err)
    check("wrapped: Meson cloned the subproject into contrib/",
          os.path.isfile(p.path("contrib/tiny/src/t1.c")), True)
    rc, out = p.ninja()
    check("wrapped: builds", rc, 0)
    check("wrapped: the program holds the project's files and the subproject's",
          p.program(), sorted(files))
    # The clone was made by this very configure, just before its walk (seen
    # once, under load, to make the check run a second time).
    no_op(p, "wrapped: no change", "b", check_may_run=True)
    p.write("contrib/tiny/src/deep/t3.c")
    files.append("contrib/tiny/src/deep/t3.c")
    changed(p, "wrapped: a file added to the subproject's list", "b", files,
            "contrib/tiny/meson.build: list 1: 'src/**/*.c'\n+ src/deep/t3.c\n")
    p.write("contrib/tiny/examples/ex2.c")
    settle()
    no_op(p, "wrapped: a file added to the clone outside every list", "b")
    p.write("app/ui/d.c")
    files.append("app/ui/d.c")
    changed(p, "wrapped: a file added to the top-level list", "b", files,
            "meson.build: list 1: '**/*.c', '-x', 'tools/**'\n+ app/ui/d.c\n")


NO_GIT = """project('nogit', 'c')
trawl = find_program('trawl')
meson.add_postconf_script(trawl, 'meson', '--postconf')
r = run_command(trawl, 'meson', '**/*.c', check : false)
assert(r.returncode() == 0, r.stderr())
executable('prog', files(r.stdout().split('\\n')))
"""


def no_git(tmp, env):
    """Outside a work tree the check also watches every directory up to /
    (where a .git may appear), and /tmp changes all the time: whether a
    no-op runs the check is the watch list's to say, not its output."""
    p = Project(os.path.join(tmp, "no-git"), env, git=False)
    p.write("meson.build", NO_GIT)
    p.write("main.c", MAIN)
    files = ["src/a.c"]
    p.write("src/a.c")
    settle()
    rc, out, err = p.setup()
    check("no git: setup succeeds", rc, 0)
    rc, out = p.ninja()
    check("no git: builds", rc, 0)
    check("no git: the build directory's own C files are not listed", p.program(), files)
    build = p.path("b")

    def quiet(what):
        rc, out = p.ninja()
        check("%s: no work to do, no regeneration" % what,
              (rc, NO_WORK in out, REGENERATED in out), (0, True, False))
        watched = p.watched()
        check("%s: the check watches the tree" % what, p.path("src") in watched, True)
        check("%s: and nothing in the build directory" % what,
              [w for w in watched if w == build or w.startswith(build + "/")], [])

    quiet("no git: no change")
    p.write("src/a.c", SOURCE % "src/a.c" + "/* edited */\n")
    rc, out = p.ninja()
    check("no git: an edit is compiled", (rc, "Compiling" in out), (0, True))
    quiet("no git: after a build wrote into the build directory")
    p.write("src/b.c")
    files.append("src/b.c")
    rc, out = p.ninja()
    check("no git: a file added: one run regenerates and builds",
          (rc, REGENERATED in out, p.program()), (0, True, sorted(files)))
    quiet("no git: a file added, then")


def main(argv):
    trawl = os.path.abspath(argv[1])
    with tempfile.TemporaryDirectory(prefix="trawl-meson-shapes-") as tmp:
        env = environment(tmp, trawl)
        dotdot(tmp, env)
        wrapped(tmp, env)
        no_git(tmp, env)
    finish()


if __name__ == "__main__":
    main(sys.argv)
