#!/usr/bin/env python3
"""trawl through a wrap, with no trawl installed, adopted as docs/meson.md
("Adoption") says, and nothing more.

    wrap.py SOURCE_ROOT

A project in a git work tree, with no .gitignore at all, whose
subprojects/trawl.wrap (`[provide] program_names = trawl`) names a git
repository made of this source tree; no trawl on PATH. `meson setup`
clones it into subprojects/trawl/ (a few hundred .c files, and a .git of
its own) and find_program('trawl') configures the subproject, which
compiles trawl with the system compiler (plugins/meson/bootstrap.sh) so
that Meson can run it while it configures. The project's top-level
`'**/*.c'` then lists its own sources and none of the clone's — Meson's
sandbox would stop the configure ("Tried to grab file ... from a nested
subproject") — builds, picks up a new file in the same ninja run, leaves
alone a file added to the clone, and has nothing to do when nothing
changed; a pattern that starts with the subprojects directory's path asks
for what is in it. A reconfigure does not compile trawl again.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mesontest import (MAIN, NO_WORK, RECHECK, REGENERATED, Project, check, check_in, check_not_in,
                       environment, finish, git_repository, run, settle, trawl_sources)

WRAP = """[wrap-git]
url = %s
revision = head
directory = trawl

[provide]
program_names = trawl
"""

TOP = """project('wrapped', 'c')
trawl = find_program('trawl')
meson.add_postconf_script(trawl, 'meson', '--postconf')
r = run_command(trawl, 'meson', '**/*.c', check : false)
assert(r.returncode() == 0, r.stderr())
executable('prog', files(r.stdout().split('\\n')))

wraps = run_command(trawl, 'meson', 'subprojects/*.wrap', check : false)
assert(wraps.returncode() == 0, wraps.stderr())
message('wraps asked for: ' + wraps.stdout())
"""


def main(argv):
    source_root = os.path.abspath(argv[1])
    with tempfile.TemporaryDirectory(prefix="trawl-meson-wrap-") as tmp:
        env = environment(tmp)
        check("no trawl on PATH", run(["sh", "-c", "command -v trawl"], env=env)[0] != 0, True)
        upstream = git_repository(os.path.join(tmp, "upstream", "trawl.git"),
                                  trawl_sources(source_root, env), env)
        p = Project(os.path.join(tmp, "wrapped"), env)
        p.write("meson.build", TOP)
        p.write("main.c", MAIN)
        p.write("subprojects/trawl.wrap", WRAP % upstream)
        files = ["src/a.c", "src/b/c.c"]  # and main.c, which prints nothing
        for f in files:
            p.write(f)
        check("no .gitignore anywhere in the project",
              [d for d, _, fs in os.walk(p.root) if ".gitignore" in fs], [])
        settle()
        rc, out, err = p.setup()
        check("wrap: setup succeeds (no sandbox violation)", rc, 0)
        if rc != 0:
            print(out + err)
        check("wrap: Meson cloned trawl into subprojects/trawl",
              os.path.isfile(p.path("subprojects/trawl/libcore/src/match.c")), True)
        boot = p.path("b/subprojects/trawl/plugins/meson/trawl")
        check_in("wrap: find_program gets the compiled trawl", "Program %s found: YES (overridden)"
                 % boot, out)
        check_in("wrap: a pattern that starts with the subprojects directory asks for it",
                 "wraps asked for: subprojects/trawl.wrap\n", out)
        check("wrap: it runs", run([boot, "--version"], env=env)[0], 0)
        rc, out = p.ninja()
        check("wrap: builds", rc, 0)
        check("wrap: the program holds the project's files, none of the clone's", p.program(),
              sorted(files))
        rc, out = p.ninja()
        check_in("wrap: no change, no work", NO_WORK, out)
        check_not_in("wrap: no change, no regeneration", REGENERATED, out)
        p.write("src/b/d.c")
        files.append("src/b/d.c")
        rc, out = p.ninja()
        check("wrap: a file added, ninja succeeds", rc, 0)
        check_in("wrap: a file added, Meson regenerates in the same run", REGENERATED, out)
        check_in("wrap: the change is labelled by the list as written",
                 "meson.build: list 1: '**/*.c'\n+ src/b/d.c\n", out)
        check("wrap: a file added, compiled", p.program(), sorted(files))
        # The walk never entered the clone: nothing it holds is watched.
        # (Not where bootstrap.sh looks: trawl would be compiled again.)
        p.write("subprojects/trawl/tests/new.c")
        p.write("subprojects/trawl/new/x.c")
        settle()
        rc, out = p.ninja()
        check("wrap: files added in the clone, ninja succeeds", rc, 0)
        check_in("wrap: files added in the clone, no work", NO_WORK, out)
        check_not_in("wrap: files added in the clone, not even the check runs", RECHECK, out)
        check_not_in("wrap: files added in the clone, no regeneration", REGENERATED, out)
        before = os.stat(boot).st_mtime_ns
        rc, out, err = p.setup("b", "--reconfigure")
        check("wrap: reconfigure succeeds", rc, 0)
        check("wrap: reconfigure does not compile trawl again", os.stat(boot).st_mtime_ns, before)
        rc, out = p.ninja()
        check_in("wrap: after reconfigure, no work", NO_WORK, out)
    finish()


if __name__ == "__main__":
    main(sys.argv)
