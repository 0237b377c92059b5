#!/usr/bin/env python3
"""trawl_glob() in a CMake project whose sources live partly in a real git
submodule (issue 24): real cmake, Ninja and git.

usage: submodule.py TRAWL SOURCE_ROOT

The project of integration.py (`trawl_glob(srcs GLOB_RECURSE
CONFIGURE_DEPENDS GITIGNORE src/*.c ...)`, the module include()d from the
checkout), with `src/third_party` `git submodule add`ed from a local bare
repository holding lib/zero.c (compiled) and a .gitignore that leaves out
lib/skip.gen.c, made there untracked:
  - configure and build: the submodule's lib/zero.c is compiled, its
    ignored file is not;
  - build again: "ninja: no work to do", no re-configure, not even the
    check; `trawl check --stats` of the module's caches opens no directory
    and writes nothing (the submodule's sources are stamped, docs/cache.md);
  - add src/third_party/lib/extra.c: one build re-configures, compiles it
    and links it in (the program prints 43), in that same run;
  - build again: nothing runs.
"""
import glob
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "walk"))
from clitest import FAILURES, check  # noqa: E402
from integration import Project, nothing_ran, reconfigured, run, write  # noqa: E402


def main():
    trawl = os.path.abspath(sys.argv[1])
    src = os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory(prefix="trawl-cmake-submodule-") as tmp:
        remote_src = os.path.join(tmp, "remote-src")
        write(os.path.join(remote_src, "lib", "zero.c"), "int zero(void) { return 0; }\n")
        write(os.path.join(remote_src, ".gitignore"), "*.gen.c\n")
        git_id = ["-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run(["git", "init", "-q", remote_src], check=True)
        subprocess.run(["git", "-C", remote_src, "add", "-A"], check=True)
        subprocess.run(["git", "-C", remote_src] + git_id + ["commit", "-qm", "lib"], check=True)
        remote = os.path.join(tmp, "remote.git")
        subprocess.run(["git", "clone", "-q", "--bare", remote_src, remote], check=True)

        p = Project(tmp, "app", "Ninja", "include", src, trawl, None, False)
        rc, out = run(["git", "-C", p.dir, "-c", "protocol.file.allow=always", "submodule", "add",
                       "-q", remote, "src/third_party"])
        check("git submodule add", (rc, out), (0, ""))
        run(["git", "-C", p.dir] + git_id + ["commit", "-qam", "with a submodule"])
        # Untracked in the submodule, and its .gitignore matches it.
        write(os.path.join(p.dir, "src", "third_party", "lib", "skip.gen.c"),
              "#error ignored by the submodule\n")
        label = "Ninja, sources in a submodule"
        rc, out = p.configure()
        check("%s: configure" % label, rc, 0)
        rc, out = p.build_()
        check("%s: build; the submodule's file compiled, its ignored one not" % label,
              (rc, "third_party/lib/zero.c" in out, "skip.gen.c" in out, p.program()),
              (0, True, False, "1"))
        if rc != 0:
            print(out)
        time.sleep(0.05)  # past the racy window: the first check reads what was racy
        p.build_()
        rc, out = p.build_()
        check("%s: no change: ninja: no work to do, not even the check" % label,
              (rc, nothing_ran(p.generator, out)), (0, True))
        # The module's cache: STATE/cache (cmake/trawl/recheck.cmake).
        caches = [c for c in glob.glob(os.path.join(p.build, "**", "cache"), recursive=True)
                  if os.path.isfile(c)]
        rc, out = run([trawl, "check", "--stats"] + ["--cache=" + c for c in caches])
        check("%s: trawl check of the unchanged tree opens no directory, writes nothing" % label,
              (len(caches), rc, "directories opened 0," in out, "cache written" in out),
              (1, 0, True, False))

        time.sleep(0.02)
        write(os.path.join(p.dir, "src", "third_party", "lib", "extra.c"),
              "int extra(void) { return 42; }\n")
        time.sleep(0.02)
        rc, out = p.build_()
        check("%s: a source added inside the submodule: compiled in the same run" % label,
              (rc, reconfigured(out), p.program()), (0, True, "43"))
        time.sleep(0.05)
        p.build_()
        rc, out = p.build_()
        check("%s: then nothing runs" % label, (rc, nothing_ran(p.generator, out)), (0, True))
    if FAILURES:
        print("%d failed: %s" % (len(FAILURES), "; ".join(FAILURES)))
        sys.exit(1)
    print("all passed")


if __name__ == "__main__":
    main()
