#!/usr/bin/env python3
"""valgrind memcheck over the command (docs/reliability.md).

    valgrind.py TRAWL [--dirs N] [--quick | --watchman]

A git work tree with ignore files at several depths and N directories (300
by default: more than the walker's floor for helper threads, so that -j4
walks in parallel). Every command below runs under memcheck
(--leak-check=full; a definite or indirect leak, an invalid read or write,
a use of an uninitialised value, a bad free are errors: exit 99) and must
print what it prints without valgrind: walks (serial, parallel, unsorted,
json, null, with a cache written, trusted, and after a change), batch
(json, cmake, with a cache and --bump), check (unchanged, changed with
--touch, with --checked and --depfile, a corrupt cache), explain (lines
and json), match, and trawl meson. Every command runs, each time; with
--quick (suite hardening), one of each kind. With --watchman, the commands
that read or write a cache, asking a private watchman daemon (started and
stopped here, its own socket and state): the socket, the BSER answers and
the back-end's paths under memcheck; each must say "watchman used" or
"watchman not used" in --stats, and the trusted ones "used".
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cache"))
from hardlib import check, env_base, finish, git_tree, standard_files  # noqa: E402
import watchman_cache  # noqa: E402

VALGRIND = ["valgrind", "-q", "--error-exitcode=99", "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect", "--show-leak-kinds=definite,indirect",
            "--track-origins=yes"]


def main():
    trawl = os.path.abspath(sys.argv[1])
    dirs = int(sys.argv[sys.argv.index("--dirs") + 1]) if "--dirs" in sys.argv else 300
    quick = "--quick" in sys.argv
    watchman = "--watchman" in sys.argv
    if shutil.which("valgrind") is None:
        print("valgrind not found (scripts/bootstrap installs it)")
        return 1
    top = tempfile.mkdtemp(prefix="trawl-valgrind-")
    os.chmod(top, 0o755)
    wm = None
    try:
        env = env_base(os.path.join(top, "home"))
        if watchman:
            if shutil.which("watchman") is None:
                print("watchman not found (scripts/bootstrap installs it)")
                return 1
            wm = os.path.join(top, "watchman")
            os.makedirs(wm)
            watchman_cache.start(wm, as_nobody=False)
            env = dict(env, TRAWL_WATCHMAN="on", TRAWL_WATCHMAN_SOCK=os.path.join(wm, "sock"))
        tree = os.path.join(top, "tree")
        files = standard_files()
        for d in range(dirs):
            files["bulk/d%03d/f.c" % d] = ""
        git_tree(tree, env, files)
        s = os.path.join(top, "state")
        os.makedirs(s)
        q = os.path.join(top, "q.jsonl")
        with open(q, "w") as f:
            f.write('{"id": 1, "root": "%s", "include": ["**/*.c"], "exclude": ["bulk/d00*/**"]}\n'
                    % tree)
            f.write('{"id": "h", "root": "%s/src", "include": ["**"], "type": ["f", "d"], '
                    '"hidden": true}\n' % tree)
        lines = os.path.join(top, "paths")
        with open(lines, "w") as f:
            f.write("src/a.c\nx/y.h\nsrc/a/b/c.c\n")
        p = lambda n: os.path.join(s, n)  # noqa: E731
        steps = [
            ("walk -j1", ["-C", tree, "-j1", "**"]),
            ("walk -j4", ["-C", tree, "-j4", "--stats", "**/*.{c,h}"]),
            ("walk --unsorted", ["-C", tree, "--unsorted", "-j4", "**"]),
            ("walk --format json -t f,d", ["-C", tree, "--format", "json", "-t", "f,d", "src/**"]),
            ("walk -0 -H -I", ["-C", tree, "-0", "-H", "-I", "**"]),
            ("walk --cache (written)", ["-C", tree, "--cache", p("w"), "**/*.c"]),
            ("walk --cache (trusted)", ["-C", tree, "--cache", p("w"), "**/*.c"]),
            ("batch", ["batch", q]),
            ("batch --format cmake", ["batch", "--format", "cmake", q]),
            ("batch --cache --bump", ["batch", "--cache", p("b"), "--bump", p("bump"), q]),
            ("check (unchanged)", ["check", "--cache", p("w"), "--cache", p("b")]),
            ("CHANGE", None),
            ("walk --cache (after a change)", ["-C", tree, "--cache", p("w"), "**/*.c"]),
            ("check --touch (changed)", ["check", "--touch", p("t"), "--cache", p("b")]),
            ("CHANGE", None),
            ("check --checked --depfile", ["check", "--checked", p("m"), "--depfile", p("d"),
                                           "--bump", p("bump"), "--cache", p("w"),
                                           "--cache", p("b")]),
            ("CORRUPT", None),
            ("check (corrupt cache)", ["check", "--cache", p("w")]),
            ("explain", ["explain", "-C", tree, "**/*.c", "--", "src/a.c", "src/x.o",
                         "build/out.c", "src/gen/g.c", "nope.c"]),
            ("explain --format json -L", ["explain", "-C", tree, "-L", "--format", "json", "**",
                                          "--", "src/keep.o", "src/a/x.skip"]),
            ("match", ["match", "--dialect", "git", "src/**/*.c", "-"]),
            ("meson", ["meson", "-C", tree, "**/*.c", "--list", "-C", tree, "src/**/*.h"]),
        ]
        if watchman:
            # The commands with a cache, each telling the back-end.
            keep = ("walk --cache (written)", "walk --cache (trusted)", "batch --cache --bump",
                    "check (unchanged)", "CHANGE", "walk --cache (after a change)",
                    "check --touch (changed)", "check --checked --depfile")
            def stats(args):
                if args is None or args[0] == "batch":
                    return args
                return args + ["--stats"] if args[0] == "check" else ["--stats"] + args
            steps = [(name, stats(args)) for name, args in steps if name in keep]
        elif quick:
            # One of each command (suite hardening); the rest by hand.
            keep = ("walk -j4", "walk --cache (written)", "walk --cache (trusted)",
                    "batch --cache --bump", "CHANGE", "check --checked --depfile", "explain")
            steps = [x for x in steps if x[0] in keep]
        n = 0
        for name, args in steps:
            if args is None:
                n += 1
                if name == "CHANGE":
                    os.makedirs(os.path.join(tree, "src", "new%d" % n))
                    open(os.path.join(tree, "src", "new%d" % n, "n.c"), "w").close()
                    open(os.path.join(tree, "bulk", "d001", "n%d.c" % n), "w").close()
                else:
                    with open(p("w"), "r+b") as f:
                        f.seek(70)
                        f.write(b"\xff\xfe")
                continue
            stdin = open(lines) if name == "match" else subprocess.DEVNULL
            menv = dict(env, MESON_BUILD_ROOT=s, MESON_SOURCE_ROOT=tree, MESON_SUBDIR="")
            e = menv if name == "meson" else env
            # Without valgrind first, on copies of the state, for the output.
            shutil.copytree(s, s + ".plain")
            plain = subprocess.run([trawl] + [a.replace(s, s + ".plain") for a in args],
                                   stdin=open(lines) if name == "match" else subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env=dict(e, MESON_BUILD_ROOT=s + ".plain")
                                   if name == "meson" else e)
            shutil.rmtree(s + ".plain")
            r = subprocess.run(VALGRIND + [trawl] + args, stdin=stdin, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=e)
            err = r.stderr.decode("utf-8", "replace")
            clean = r.returncode != 99 and "==" not in err
            if "unsorted" in name:
                r.stdout = b"\n".join(sorted(r.stdout.split(b"\n")))
                plain.stdout = b"\n".join(sorted(plain.stdout.split(b"\n")))
            same = r.returncode == plain.returncode and (
                r.stdout == plain.stdout or name.startswith("check") or name == "meson")
            check("valgrind: %s: no error, no leak; exit %d and output as without valgrind" % (
                name, r.returncode), clean and same,
                "exit %d (plain %d)\n%s" % (r.returncode, plain.returncode, err[-3000:]))
            if watchman and args[0] != "batch":
                told = [l for l in err.splitlines() if "watchman" in l]
                want = "watchman used" if name in ("walk --cache (trusted)",
                                                   "check (unchanged)") else "watchman"
                check("valgrind: %s: the back-end told: %s" % (name, told[:1]),
                      any(want in l for l in told), err[-2000:])
    finally:
        if wm:
            watchman_cache.stop(wm, signal.SIGTERM)
        shutil.rmtree(top, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
