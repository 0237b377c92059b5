#!/usr/bin/env python3
"""A Meson project whose sources live partly in a real git submodule
(issue 24), with the real meson, ninja and git.

    submodule.py TRAWL_EXE

`src/third_party` is `git submodule add`ed from a local bare repository;
`trawl meson 'src/**/*.c'` finds the project's files and the submodule's.
- a no-op build says "ninja: no work to do", regenerates nothing and runs
  not even the check; `trawl check --stats` of the caches opens no
  directory and writes nothing (the submodule's sources — its `.git` file,
  `.git/modules/src/third_party`'s HEAD, info/exclude, config, index — are
  stamped, docs/cache.md);
- a file added inside the submodule is compiled in the same run;
- the submodule's own info/exclude, edited, drops the untracked file it
  names in the same run.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mesontest import (MAIN, SOURCE, Project, check, check_in, check_not_in, environment,
                       finish, git_repository, run, settle)
from regen import TOP, changed, no_op


def main(argv):
    trawl = os.path.abspath(argv[1])
    with tempfile.TemporaryDirectory(prefix="trawl-meson-submodule-") as tmp:
        env = environment(tmp, trawl)
        sub = "src/third_party"
        remote_files = {"lib/a.c": SOURCE % (sub + "/lib/a.c"),
                        "lib/b.c": SOURCE % (sub + "/lib/b.c"),
                        "lib/skip.o.c": SOURCE % (sub + "/lib/skip.o.c"),
                        ".gitignore": "*.o.c\n"}
        src = git_repository(os.path.join(tmp, "remote-src"), remote_files, env)
        remote = os.path.join(tmp, "remote.git")
        rc, out, err = run(["git", "clone", "-q", "--bare", src, remote], env=env)
        check("a bare repository for the remote", rc, 0)

        p = Project(os.path.join(tmp, "app"), env)
        p.write("meson.build", TOP % "")
        p.write("main.c", MAIN)
        p.write("src/own.c")
        git = ["git", "-C", p.root, "-c", "user.name=t", "-c", "user.email=t@t",
               "-c", "protocol.file.allow=always"]
        rc, out, err = run(git + ["submodule", "add", "-q", remote, sub], env=env)
        check("git submodule add", (rc, err), (0, ""))
        run(git + ["add", "-A"], env=env)
        run(git + ["commit", "-qm", "with a submodule"], env=env)
        files = ["src/own.c", sub + "/lib/a.c", sub + "/lib/b.c"]
        settle()
        rc, out, err = p.setup()
        check("setup succeeds", rc, 0)
        rc, out = p.ninja()
        check("first build succeeds", rc, 0)
        check("first build: the project's files and the submodule's (its .gitignore obeyed)",
              p.program(), sorted(files))
        no_op(p, "no change", check_may_run=True)
        no_op(p, "no change, again")

        caches = [os.path.join("meson-private/trawl", f)
                  for f in os.listdir(p.path("b/meson-private/trawl")) if f.endswith(".cache")]
        rc, out, err = run([trawl, "check", "--stats"] + ["--cache=" + c for c in caches],
                           cwd=p.path("b"), env=env)
        check("trawl check of the unchanged tree: nothing changed", rc, 0)
        check_in("trawl check of the unchanged tree: no directory read, the submodule's neither",
                 "directories opened 0,", err)
        check_not_in("trawl check of the unchanged tree: the cache is not written",
                     "cache written", err)

        p.write(sub + "/lib/new.c")
        files.append(sub + "/lib/new.c")
        changed(p, "a file added inside the submodule", files)

        modules = os.path.join(p.root, ".git", "modules", sub)
        with open(os.path.join(modules, "info", "exclude"), "a") as f:
            f.write("new.c\n")
        # (Not b.c: the submodule's index holds it, and a tracked file is
        # never ignored.)
        files.remove(sub + "/lib/new.c")
        changed(p, "the submodule's info/exclude edited in place", files)
    finish()


if __name__ == "__main__":
    main(sys.argv)
