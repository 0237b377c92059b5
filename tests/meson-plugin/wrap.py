#!/usr/bin/env python3
"""trawl through a wrap, with no trawl installed (docs/meson.md, "Adoption").

    wrap.py SOURCE_ROOT

A project with subprojects/trawl.wrap (`[provide] program_names = trawl`)
whose directory is this source tree, and no trawl on PATH: find_program
('trawl') configures the subproject, which compiles trawl with the system
compiler (plugins/meson/bootstrap.sh) so that Meson can run it while it
configures; the project then discovers, builds, picks up a new file in the
same ninja run, and has nothing to do when nothing changed. A reconfigure
does not compile trawl again.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mesontest import (MAIN, NO_WORK, REGENERATED, Project, check, check_in, check_not_in,
                       environment, finish, run, settle)

WRAP = """[wrap-git]
url = https://example.invalid/trawl.git
revision = head
directory = trawl

[provide]
program_names = trawl
"""

TOP = """project('wrapped', 'c')
trawl = find_program('trawl')
meson.add_postconf_script(trawl, 'meson', '--postconf')
r = run_command(trawl, 'meson', 'src/**/*.c', check : false)
assert(r.returncode() == 0, r.stderr())
executable('prog', 'main.c', files(r.stdout().split('\\n')))
"""


def main(argv):
    source_root = os.path.abspath(argv[1])
    with tempfile.TemporaryDirectory(prefix="trawl-meson-wrap-") as tmp:
        env = environment(tmp)
        check("no trawl on PATH", run(["sh", "-c", "command -v trawl"], env=env)[0] != 0, True)
        p = Project(os.path.join(tmp, "wrapped"), env)
        p.write("meson.build", TOP)
        p.write("main.c", MAIN)
        p.write("subprojects/trawl.wrap", WRAP)
        # The wrap's directory is already there (as after a download).
        os.symlink(source_root, p.path("subprojects/trawl"))
        p.write(".gitignore", "/subprojects/trawl\n")
        files = ["src/a.c", "src/b/c.c"]
        for f in files:
            p.write(f)
        settle()
        rc, out, err = p.setup()
        check("wrap: setup succeeds", rc, 0)
        if rc != 0:
            print(out + err)
        boot = p.path("b/subprojects/trawl/plugins/meson/trawl")
        check_in("wrap: find_program gets the compiled trawl", "Program %s found: YES (overridden)"
                 % boot, out)
        check("wrap: it runs", run([boot, "--version"], env=env)[0], 0)
        rc, out = p.ninja()
        check("wrap: builds", rc, 0)
        check("wrap: the program holds the files found", p.program(), sorted(files))
        rc, out = p.ninja()
        check_in("wrap: no change, no work", NO_WORK, out)
        check_not_in("wrap: no change, no regeneration", REGENERATED, out)
        p.write("src/b/d.c")
        files.append("src/b/d.c")
        rc, out = p.ninja()
        check("wrap: a file added, ninja succeeds", rc, 0)
        check_in("wrap: a file added, Meson regenerates in the same run", REGENERATED, out)
        check("wrap: a file added, compiled", p.program(), sorted(files))
        before = os.stat(boot).st_mtime_ns
        rc, out, err = p.setup("b", "--reconfigure")
        check("wrap: reconfigure succeeds", rc, 0)
        check("wrap: reconfigure does not compile trawl again", os.stat(boot).st_mtime_ns, before)
        rc, out = p.ninja()
        check_in("wrap: after reconfigure, no work", NO_WORK, out)
    finish()


if __name__ == "__main__":
    main(sys.argv)
