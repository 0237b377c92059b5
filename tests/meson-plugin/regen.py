#!/usr/bin/env python3
"""Re-configuration with the real meson and ninja (docs/meson.md).

    regen.py TRAWL_EXE

Projects whose sources come from `trawl meson`, wired with
meson.add_postconf_script(trawl, 'meson', '--postconf'), in git work trees
with a .gitignore:

- a matching file added is compiled in the same ninja run (Meson
  regenerates first); a file that does not match, or is ignored, causes no
  regeneration and build.ninja is not touched; a file deleted is re-linked
  without; a no-op run says "ninja: no work to do" and does not regenerate;
- committed files that .gitignore matches (one by its own rule, one in an
  ignored directory) are compiled; `git add` of an unrelated file causes no
  regeneration; `git rm --cached` of one of them re-links without it in
  the same run (issue 31);
- `meson setup --reconfigure` and `--wipe` keep all of that working;
- a second build directory of the same tree notices a change after the
  first one has already acted on it, and neither disturbs the other;
- subdirectories that each discover their own sources, several lists from
  one run_command() (one walk), -C and --allow-empty lists;
- the floor (--floor): a change stops the build with a message, the next run
  regenerates and compiles it;
- the version guard: a Meson version not in the verified list, or a
  regeneration edge of another shape, gets the floor; Meson's own edge is
  left as it was;
- errors while configuring: an empty list and a bad pattern stop `meson
  setup` with trawl's message.

Each program prints the names of the files linked into it (mesontest.SOURCE),
so "compiled" and "re-linked without" are read from the program itself.
"""
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mesontest import (MAIN, NO_WORK, RECHECK, REGENERATED, Project, check, check_in, check_not_in,
                       environment, finish, run, settle)

TOP = """project('app', 'c')
trawl = find_program('trawl')
meson.add_postconf_script(trawl, 'meson', '--postconf'%s)

r = run_command(trawl, 'meson', 'src/**/*.c', check : false)
assert(r.returncode() == 0, r.stderr())
executable('prog', 'main.c', files(r.stdout().split('\\n')))
"""



def no_op(p, what, build="b", check_may_run=False):
    """A ninja run with nothing to do: no regeneration, build.ninja
    untouched, "no work to do" — and, unless something the check depends on
    changed (CHECK_MAY_RUN), no command at all: not even the check."""
    before = p.mtime(os.path.join(build, "build.ninja"))
    if check_may_run:
        # Past the racy window (two clock ticks): a directory the check
        # reads within it is recorded racy, and read again by the next run.
        time.sleep(0.05)
    rc, out = p.ninja(build)
    check("%s: ninja succeeds" % what, rc, 0)
    check_in("%s: ninja has no work to do" % what, NO_WORK, out)
    check_not_in("%s: no regeneration" % what, REGENERATED, out)
    check("%s: build.ninja untouched" % what, p.mtime(os.path.join(build, "build.ninja")), before)
    if check_may_run:
        # And once it has run, the next run has nothing to do either.
        rc, out = p.ninja(build)
        check_in("%s, again: ninja has no work to do" % what, NO_WORK, out)
    # (Ninja prints the description of every edge it runs.)
    check_not_in("%s: the check did not run (nothing it depends on changed)" % what, RECHECK,
                 out)


def changed(p, what, want, build="b"):
    """A ninja run after a change of the file set: one run regenerates and
    builds, and the program then holds exactly WANT."""
    rc, out = p.ninja(build)
    check("%s: ninja succeeds in one run" % what, rc, 0)
    check_in("%s: Meson regenerates in that run" % what, REGENERATED, out)
    check("%s: the program holds exactly the files" % what, p.program(build), sorted(want))
    no_op(p, what + ", then", build)


def single_project(tmp, env, trawl):
    p = Project(os.path.join(tmp, "single"), env)
    p.write("meson.build", TOP % "")
    p.write("main.c", MAIN)
    p.write(".gitignore", "*.gen.c\nsrc/generated/\n")
    files = ["src/a.c", "src/deep/b.c", "src/kept.gen.c", "src/generated/committed.c"]
    for f in files:
        p.write(f)
    # Committed, though .gitignore matches them: git's rules leave tracked
    # files alone, and so does trawl.
    git = ["git", "-C", p.root, "-c", "user.name=t", "-c", "user.email=t@t"]
    run(git + ["add", "-f", "src/kept.gen.c", "src/generated/committed.c", "main.c"], env=env)
    run(git + ["commit", "-qm", "tracked"], env=env)
    settle()
    rc, out, err = p.setup()
    check("setup succeeds", rc, 0)
    ninja_text = open(p.path("b/build.ninja")).read()
    check_in("build.ninja: the check edge", "rule TRAWL_MESON_CHECK\n", ninja_text)
    check_in("build.ninja: the stamp is an input of Meson's regeneration edge",
             " | meson-private/trawl/stamp\n", ninja_text)
    rc, out = p.ninja()
    check("first build succeeds", rc, 0)
    check("first build: the program holds the files found", p.program(), sorted(files))
    no_op(p, "no change")
    caches = [os.path.join("meson-private/trawl", f)
              for f in os.listdir(p.path("b/meson-private/trawl")) if f.endswith(".cache")]
    rc, out, err = run([trawl, "check", "--stats"] + ["--cache=" + c for c in caches],
                       cwd=p.path("b"), env=env)
    check("the check of an unchanged tree: one cache, nothing changed", (len(caches), rc), (1, 0))
    check_in("the check of an unchanged tree costs stats: no directory read",
             "directories opened 0,", err)

    p.write("src/deep/new.c")
    files.append("src/deep/new.c")
    changed(p, "a matching file added", files)

    p.write("notes.md")
    run(git + ["add", "notes.md"], env=env)
    no_op(p, "git add of an unrelated file", check_may_run=True)
    run(git + ["rm", "-q", "--cached", "src/kept.gen.c"], env=env)
    files.remove("src/kept.gen.c")
    changed(p, "git rm --cached of a committed file that .gitignore matches", files)

    for f in ("src/notes.txt", "src/x.h", "src/skip.gen.c", "src/generated/g.c", "other/o.c"):
        p.write(f)
    no_op(p, "non-matching and ignored files added", check_may_run=True)

    # A new directory holding nothing that matches: the check runs once and
    # lists it from then on, so a matching file made in it later is seen.
    p.write("src/later/README")
    no_op(p, "a new directory, nothing in it matching", check_may_run=True)
    p.write("src/later/l.c")
    files.append("src/later/l.c")
    changed(p, "then a matching file in the new directory", files)

    p.remove("src/a.c")
    files.remove("src/a.c")
    rc, out = p.ninja()
    check("a file deleted: ninja succeeds", rc, 0)
    check_in("a file deleted: Meson regenerates", REGENERATED, out)
    check_in("a file deleted: the program is linked again", "Linking target prog", out)
    check("a file deleted: the program no longer holds it", p.program(), sorted(files))
    no_op(p, "a file deleted, then")

    p.write("src/newdir/sub/x.c")
    files.append("src/newdir/sub/x.c")
    changed(p, "a new directory with a matching file", files)

    # --reconfigure and --wipe.
    rc, out, err = p.setup("b", "--reconfigure")
    check("setup --reconfigure succeeds", rc, 0)
    check_in("setup --reconfigure wires the check again", "rule TRAWL_MESON_CHECK\n",
             open(p.path("b/build.ninja")).read())
    rc, out = p.ninja()
    check("after --reconfigure: ninja succeeds", rc, 0)
    no_op(p, "after --reconfigure")
    p.write("src/r.c")
    files.append("src/r.c")
    changed(p, "after --reconfigure, a matching file added", files)
    rc, out, err = p.setup("b", "--wipe")
    check("setup --wipe succeeds", rc, 0)
    rc, out = p.ninja()
    check("after --wipe: ninja builds", rc, 0)
    check("after --wipe: the program holds the files", p.program(), sorted(files))
    no_op(p, "after --wipe")
    p.write("src/w.c")
    files.append("src/w.c")
    changed(p, "after --wipe, a matching file added", files)

    # A second build directory of the same tree, outside it.
    second = os.path.join(tmp, "single-second-build")
    rc, out, err = p.setup(second)
    check("a second build directory: setup succeeds", rc, 0)
    rc, out = p.ninja(second)
    check("a second build directory: builds", rc, 0)
    # (Made beside the tree: the root's parent is watched, where the root
    # itself would be replaced, so the check may run, once.)
    no_op(p, "first build directory, after the second was set up", check_may_run=True)
    p.write("src/two.c")
    files.append("src/two.c")
    changed(p, "a file added, first build directory", files)
    changed(p, "the same change, second build directory", files, second)
    no_op(p, "first build directory, after the second acted")
    p.remove("src/deep/b.c")
    files.remove("src/deep/b.c")
    changed(p, "a file deleted, second build directory first", files, second)
    changed(p, "the same deletion, first build directory", files)


SUB_TOP = """project('multi', 'c')
trawl = find_program('trawl')
meson.add_postconf_script(trawl, 'meson', '--postconf')
subdir('liba')
subdir('libb')
executable('prog', 'main.c', liba_srcs, libb_srcs, libb_extra, libb_opt)
"""
SUB_A = """r = run_command(trawl, 'meson', '**/*.c', check : false)
assert(r.returncode() == 0, r.stderr())
liba_srcs = files(r.stdout().split('\\n'))
"""
SUB_B = """r = run_command(trawl, 'meson', 'core/**/*.c',
  '--list', '-C', 'extra', '*.c', '--allow-empty',
  '--list', 'opt/*.c', '--allow-empty', check : false)
assert(r.returncode() == 0, r.stderr())
found = r.stdout().split('\\0')
libb_srcs = files(found[0].split('\\n'))
libb_extra = found[1] == '' ? [] : files(found[1].split('\\n'))
libb_opt = found[2] == '' ? [] : files(found[2].split('\\n'))
"""


def subdirectories(tmp, env):
    p = Project(os.path.join(tmp, "multi"), env)
    p.write("meson.build", SUB_TOP)
    p.write("liba/meson.build", SUB_A)
    p.write("libb/meson.build", SUB_B)
    p.write("main.c", MAIN)
    files = ["liba/a.c", "liba/x/y.c", "libb/core/c.c", "libb/extra/e.c"]
    for f in files:
        p.write(f)
    p.write("libb/extra/deeper/not-listed.c")  # '*.c' of extra/ only
    settle()
    rc, out, err = p.setup()
    check("subdirectories: setup succeeds", rc, 0)
    check("subdirectories: the check has two caches, one per run_command()",
          open(p.path("b/build.ninja")).read().count(" --cache meson-private/trawl/"), 2)
    rc, out = p.ninja()
    check("subdirectories: builds", rc, 0)
    check("subdirectories: each list holds its own directory's files", p.program(),
          sorted(files))
    no_op(p, "subdirectories, no change")
    p.write("libb/opt/o.c")
    files.append("libb/opt/o.c")
    changed(p, "subdirectories: an empty list gains a file", files)
    p.write("liba/x/z/n.c")
    files.append("liba/x/z/n.c")
    changed(p, "subdirectories: a file added below another subdirectory", files)
    p.remove("libb/extra/e.c")
    files.remove("libb/extra/e.c")
    changed(p, "subdirectories: a -C list loses its only file", files)


def floor_mode(tmp, env):
    p = Project(os.path.join(tmp, "floor"), env)
    p.write("meson.build", TOP % ", '--floor'")
    p.write("main.c", MAIN)
    files = ["src/a.c"]
    p.write("src/a.c")
    settle()
    rc, out, err = p.setup()
    check("floor: setup succeeds", rc, 0)
    ninja_text = open(p.path("b/build.ninja")).read()
    check_in("floor: the check is a default target", "default meson-private/trawl/check\n",
             ninja_text)
    check_not_in("floor: Meson's regeneration edge is left alone", "trawl/stamp", ninja_text)
    rc, out = p.ninja()
    check("floor: builds", rc, 0)
    check_in("floor: every run says it re-checks, and what a change does",
             "Re-checking the file lists found by trawl (a change stops the build: --floor)", out)
    rc, out = p.ninja()
    check("floor: a run without a change succeeds", rc, 0)
    check_not_in("floor: a run without a change does not regenerate", REGENERATED, out)
    p.write("src/b.c")
    files.append("src/b.c")
    rc, out = p.ninja()
    check("floor: a change stops the build", rc != 0, True)
    check_in("floor: with a message to run ninja again", "run ninja again", out)
    check_in("floor: naming the file", "+ src/b.c", out)
    rc, out = p.ninja()
    check("floor: the next run succeeds", rc, 0)
    check_in("floor: the next run regenerates", REGENERATED, out)
    check("floor: and the program holds the new file", p.program(), sorted(files))
    rc, out = p.ninja()
    check("floor: then a run without a change succeeds", rc, 0)
    check_not_in("floor: then no regeneration", REGENERATED, out)


def every_run(tmp, env, trawl):
    """Beyond --watch-limit (0 here: `big`'s 38,394 paths are beyond the
    2,000 by default) the check runs on every build, through an edge that
    restat leaves clean: still same run, still no regeneration on a no-op."""
    p = Project(os.path.join(tmp, "every-run"), env)
    p.write("meson.build", TOP % ", '--watch-limit', '0'")
    p.write("main.c", MAIN)
    files = ["src/a.c"]
    p.write("src/a.c")
    settle()
    rc, out, err = p.setup()
    check("every run: setup succeeds", rc, 0)
    text = open(p.path("b/build.ninja")).read()
    check_in("every run: the check edge runs every time",
             "build meson-private/trawl/stamp: TRAWL_MESON_CHECK | meson-private/trawl/always\n",
             text)
    check_not_in("every run: no depfile", "depfile = meson-private/trawl/checked.d", text)
    check_in("every run: the stamp is an input of the regeneration edge",
             " | meson-private/trawl/stamp\n", text)
    rc, out = p.ninja()
    check("every run: builds", rc, 0)
    for n in ("first", "second"):
        rc, out = p.ninja()
        check_in("every run, no-op %s: the check ran" % n, RECHECK, out)
        check_in("every run, no-op %s: no work to do" % n, NO_WORK, out)
        check_not_in("every run, no-op %s: no regeneration" % n, REGENERATED, out)
    p.write("src/b.c")
    files.append("src/b.c")
    rc, out = p.ninja()
    check("every run, a file added: one run succeeds", rc, 0)
    check_in("every run, a file added: Meson regenerates in that run", REGENERATED, out)
    check("every run, a file added: the program holds it", p.program(), sorted(files))
    menv = dict(env, MESON_SOURCE_ROOT=p.root, MESON_BUILD_ROOT=p.path("b"), MESON_SUBDIR="")
    rc, out, err = run([trawl, "meson", "--postconf", "--watch-limit", "x"], cwd=p.path("b"),
                       env=menv)
    check("every run: a bad --watch-limit is a usage error", rc, 2)
    check_in("every run: naming it", "--watch-limit 'x'", err)


def guard(tmp, env, trawl):
    """The wiring chosen from the Meson version and the edge's shape: the
    postconf step run by hand, after a discovery run by hand with Meson's
    variables, both children of this process (one "configure run")."""
    bare = TOP.replace("meson.add_postconf_script(trawl, 'meson', '--postconf'%s)\n", "")
    cases = [("1.0.1", None, "same run"), ("0.99.0", None, "floor"),
             ("1.0.1", " | extra.stamp", "floor")]
    for n, (version, regen_suffix, want) in enumerate(cases):
        p = Project(os.path.join(tmp, "guard%d" % n), env)
        p.write("meson.build", bare % ())
        p.write("main.c", MAIN)
        p.write("src/a.c")
        rc, out, err = p.setup()
        what = "guard (Meson %s%s)" % (version, ", edge " + regen_suffix if regen_suffix else "")
        check("%s: setup succeeds" % what, rc, 0)
        build = p.path("b")
        info_path = os.path.join(build, "meson-info", "meson-info.json")
        info = json.load(open(info_path))
        info["meson_version"]["full"] = version
        json.dump(info, open(info_path, "w"))
        ninja_path = os.path.join(build, "build.ninja")
        text = open(ninja_path).read()
        regen = [l for l in text.splitlines() if l.startswith("build build.ninja: REGENERATE_BUILD")]
        check("%s: one regeneration edge" % what, len(regen), 1)
        if regen_suffix:
            text = text.replace(regen[0] + "\n", regen[0] + regen_suffix + "\n")
            open(ninja_path, "w").write(text)
        menv = dict(env, MESON_SOURCE_ROOT=p.root, MESON_BUILD_ROOT=build, MESON_SUBDIR="")
        rc, out, err = run([trawl, "meson", "src/**/*.c"], cwd=p.root, env=menv)
        check("%s: discovery by hand" % what, (rc, out), (0, "src/a.c"))
        rc, out, err = run([trawl, "meson", "--postconf"], cwd=build, env=menv)
        check("%s: postconf succeeds" % what, rc, 0)
        after = open(ninja_path).read()
        if want == "same run":
            check_in("%s: same-run wiring" % what, "re-configures in the same run", out)
            check_in("%s: the stamp is an input of the regeneration edge" % what,
                     regen[0] + " | meson-private/trawl/stamp\n", after)
        else:
            check_in("%s: the floor" % what, "a change stops the build", out)
            check_in("%s: says why" % what, "verified on" if version != "1.0.1"
                     else "not in the shape verified", out)
            check("%s: Meson's edges are left as they were" % what,
                  after.startswith(text), True)
            check_in("%s: the check is a default target" % what,
                     "default meson-private/trawl/check\n", after)
        rc, out, err = run([trawl, "meson", "--postconf"], cwd=build, env=menv)
        check("%s: a second postconf changes nothing" % what,
              (rc, open(ninja_path).read()), (0, after))


def configure_errors(tmp, env):
    p = Project(os.path.join(tmp, "errors"), env)
    p.write("main.c", MAIN)
    p.write("src/a.c")
    p.write("meson.build", TOP.replace("'src/**/*.c'", "'nothing/**/*.c'") % "")
    rc, out, err = p.setup()
    check("an empty list: setup fails", rc != 0, True)
    check_in("an empty list: trawl's message", "list 1 (nothing/**/*.c) matched no file",
             out + err)
    p.write("meson.build", TOP.replace("'src/**/*.c'", "'src/[a'") % "")
    rc, out, err = p.setup("b2")
    check("a bad pattern: setup fails", rc != 0, True)
    check_in("a bad pattern: trawl's message with the offset",
             "list 1: pattern 1: pattern \"src/[a\": byte 4: unclosed '['", out + err)


def main(argv):
    trawl = os.path.abspath(argv[1])
    with tempfile.TemporaryDirectory(prefix="trawl-meson-regen-") as tmp:
        env = environment(tmp, trawl)
        single_project(tmp, env, trawl)
        subdirectories(tmp, env)
        floor_mode(tmp, env)
        every_run(tmp, env, trawl)
        guard(tmp, env, trawl)
        configure_errors(tmp, env)
    finish()


if __name__ == "__main__":
    main(sys.argv)
