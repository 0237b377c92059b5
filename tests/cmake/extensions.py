#!/usr/bin/env python3
"""trawl_glob()'s extensions beyond file(): GITIGNORE, EXCLUDE, PATTERNS,
ROOT, HIDDEN, and how they combine with file()'s options.

usage: extensions.py TRAWL SOURCE_ROOT

One configure of a project in a git work tree. The expected lists are
written out by hand for the small tree below, except GITIGNORE's, whose
oracle is git itself (`git check-ignore` on every path file() lists). Two
files that .gitignore matches are committed (lib/generated.c, its own rule;
lib/out/kept.c, in an ignored directory): git's rules leave tracked files
alone, so GITIGNORE keeps them (issue 31)."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "walk"))
from clitest import FAILURES, check  # noqa: E402

FILES = ["src/a.c", "src/b.h", "src/gen/x.c", "src/legacy/old.c", "src/.hidden/h.c",
         "src/.dot.c", "src/test/t_test.c", "src/y.log", "src/deep/er/z.c",
         "include/api.h", "docs/readme.md", "vendor/lib.c", "vendor/.git/keep.c",
         "lib/generated.c", "lib/out/kept.c", "lib/out/stale.c"]
GITIGNORE = "gen/\n*.log\n/vendor/\ngenerated.c\nout/\n"
# Committed, though .gitignore matches them.
TRACKED = ["lib/generated.c", "lib/out/kept.c"]

CALLS = [
    # (name, arguments, expected paths relative to the project, or None:
    # computed from file() and git)
    ("gi", "GLOB_RECURSE src/*.c GITIGNORE", None),
    ("gi_all", "GLOB_RECURSE * GITIGNORE", None),
    ("ex", 'GLOB_RECURSE src/*.c EXCLUDE "src/legacy/**" "**/*_test.c"',
     ["src/.dot.c", "src/.hidden/h.c", "src/a.c", "src/deep/er/z.c", "src/gen/x.c"]),
    ("pat", 'PATTERNS "{src,include}/**/*.{c,h}"',
     ["include/api.h", "src/a.c", "src/b.h", "src/deep/er/z.c", "src/gen/x.c",
      "src/legacy/old.c", "src/test/t_test.c"]),
    ("pat_hidden", 'PATTERNS "src/**/*.c" HIDDEN EXCLUDE "src/gen/**"',
     ["src/.dot.c", "src/.hidden/h.c", "src/a.c", "src/deep/er/z.c", "src/legacy/old.c",
      "src/test/t_test.c"]),
    ("pat_gi", 'PATTERNS "**/*.c" GITIGNORE',
     ["lib/generated.c", "lib/out/kept.c", "src/a.c", "src/deep/er/z.c", "src/legacy/old.c",
      "src/test/t_test.c"]),
    # With CONFIGURE_DEPENDS: a pattern that starts with a wildcard stopped
    # CMake when the module planned its own watch list ("REGEX ... matched
    # an empty string"; found by tests/hardening/plugins.py). The list is
    # trawl check's now; the rows stay.
    ("pat_gi_cd", 'PATTERNS "**/*.c" GITIGNORE CONFIGURE_DEPENDS',
     ["lib/generated.c", "lib/out/kept.c", "src/a.c", "src/deep/er/z.c", "src/legacy/old.c",
      "src/test/t_test.c"]),
    ("root_cd", 'PATTERNS "*.c" ROOT src CONFIGURE_DEPENDS', ["src/a.c"]),
    ("root", "GLOB *.c ROOT src", ["src/.dot.c", "src/a.c"]),
    # RELATIVE, like file()'s options, applies to what follows it.
    ("root_rel", 'ROOT src RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}/src PATTERNS "**/*.c" '
     'EXCLUDE "gen/**"', ["deep/er/z.c", "legacy/old.c", "test/t_test.c", "a.c"]),
    ("rel_after", 'PATTERNS "*.c" ROOT src RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}/src',
     ["src/a.c"]),
    ("pat_dirs", 'LIST_DIRECTORIES true PATTERNS "src/*"',
     ["src/a.c", "src/b.h", "src/deep", "src/gen", "src/legacy", "src/test", "src/y.log"]),
    ("mixed", 'GLOB_RECURSE include/*.h PATTERNS "docs/*.md" EXCLUDE "**/api.h"',
     ["docs/readme.md"]),
    ("ex_glob_dir", 'GLOB_RECURSE src/deep/*.c EXCLUDE "src/deep/er/**"', []),
]


def main():
    trawl, src = (os.path.abspath(a) for a in sys.argv[1:3])
    for tool in ("cmake", "ninja", "git"):
        if shutil.which(tool) is None:
            print("%s not found" % tool)
            return 77
    tmp = tempfile.mkdtemp(prefix="trawl-cmake-ext-")
    try:
        proj = os.path.join(tmp, "proj")
        for f in FILES:
            os.makedirs(os.path.dirname(os.path.join(proj, f)), exist_ok=True)
            open(os.path.join(proj, f), "w").close()
        with open(os.path.join(proj, ".gitignore"), "w") as f:
            f.write(GITIGNORE)
        subprocess.run(["git", "init", "-q", proj], check=True)
        git = ["git", "-C", proj, "-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run(git + ["add", "-f"] + TRACKED, check=True)
        subprocess.run(git + ["commit", "-qm", "tracked, and ignored by .gitignore"], check=True)
        out = os.path.join(tmp, "out")
        os.makedirs(out)
        body = ["cmake_minimum_required(VERSION 3.20)\nproject(ext NONE)\n",
                'include("%s/cmake/Trawl.cmake")\n' % src]
        for name, args, want in CALLS:
            body.append("trawl_glob(%s %s)\n" % (name, args))
            body.append('string(REPLACE ";" "\\n" v "${%s}")\nfile(WRITE "%s/%s" "${v}")\n'
                        % (name, out, name))
            if want is None:
                fargs = args.replace("GLOB_RECURSE ", "").replace(" GITIGNORE", "")
                body.append("file(GLOB_RECURSE %s_file %s)\n" % (name, fargs))
                body.append('string(REPLACE ";" "\\n" v "${%s_file}")\n'
                            'file(WRITE "%s/%s.file" "${v}")\n' % (name, out, name))
        with open(os.path.join(proj, "CMakeLists.txt"), "w") as f:
            f.write("".join(body))
        p = subprocess.run(["cmake", "-S", proj, "-B", os.path.join(tmp, "b"), "-G", "Ninja",
                            "-DTRAWL_EXECUTABLE=" + trawl],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            check("configure", p.stdout.decode()[-3000:], "exit 0")
            return 1
        for name, args, want in CALLS:
            got = [line for line in open(os.path.join(out, name)).read().split("\n") if line]
            if want is None:
                listed = [line for line in open(os.path.join(out, name + ".file")).read()
                          .split("\n") if line]
                rel = [os.path.relpath(x, proj) for x in listed]
                ignored = subprocess.run(["git", "-C", proj, "check-ignore", "--stdin"],
                                         input="\n".join(rel).encode(),
                                         stdout=subprocess.PIPE).stdout.decode().split("\n")
                want_abs = [x for x, r in zip(listed, rel)
                            if r not in ignored and not r.startswith(".git/")
                            and r != ".git"]
                check("%s: file() minus what git ignores (%d of %d)"
                      % (args, len(want_abs), len(listed)), got, want_abs)
                kept = [os.path.join(proj, t) for t in TRACKED
                        if os.path.join(proj, t) in listed]
                if kept:
                    check("%s: the committed files .gitignore matches are kept" % args,
                          [k for k in kept if k in got], kept)
                continue
            if name == "root_rel":   # the one call RELATIVE applies to
                want_paths = sorted(want)
            else:
                want_paths = sorted(os.path.join(proj, w) for w in want)
            check("trawl_glob(%s)" % args, got, want_paths)
    finally:
        shutil.rmtree(tmp)
    print("%d failed" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
