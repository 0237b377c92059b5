#!/usr/bin/env python3
"""The command's ignore options and `trawl explain`, end to end.

    ignore_cli.py TRAWL_EXE

On one hand-made work tree: the default reads .gitignore (and never prints
.git), -I reads nothing, --no-require-git applies .gitignore outside a work
tree, --ignore-file adds a file of the lowest precedence (also with -I), a
missing --ignore-file is exit 2 naming it; `trawl explain` in both formats,
its exit status (0 all selected, 1 one not, 2 usage), and that its verdicts
agree with what the walk prints for every path of the tree. git itself is not
run here (tests/diff/git_ignore_diff.py compares with git).
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from clitest import FAILURES, check, run, write


def lines(text):
    return [l for l in text.split("\n") if l]


def main(argv):
    trawl = os.path.abspath(argv[1])
    with tempfile.TemporaryDirectory(prefix="trawl-ignore-cli-") as tmp:
        env = dict(os.environ, HOME=tmp, XDG_CONFIG_HOME=os.path.join(tmp, "xdg"),
                   GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.path.join(tmp, "gitconfig"))
        write(env["GIT_CONFIG_GLOBAL"], "[core]\n\texcludesFile = %s/global-ignore\n" % tmp)
        write(os.path.join(tmp, "global-ignore"), "*.tmp\n")
        repo = os.path.join(tmp, "repo")
        for d in (".git/objects", ".git/refs", ".git/info"):
            os.makedirs(os.path.join(repo, d))
        write(os.path.join(repo, ".git/HEAD"), "ref: refs/heads/main\n")
        write(os.path.join(repo, ".git/info/exclude"), "*.ex\n")
        write(os.path.join(repo, ".gitignore"), "build/\n*.o\n!keep.o\n")
        for f in ("a.c", "a.o", "keep.o", "a.tmp", "a.ex", "a.log", "build/out.c",
                  "src/b.c", "src/b.o", "src/.hidden.c"):
            write(os.path.join(repo, f))
        extra = os.path.join(tmp, "extra-ignore")
        write(extra, "*.log\n!a.o\n")

        code, out, _ = run(trawl, ["-C", repo, "**"], env)
        check("default: .gitignore, info/exclude, excludes file", (code, lines(out)),
              (0, ["a.c", "a.log", "keep.o", "src/b.c"]))
        code, out, _ = run(trawl, ["-C", repo, "-H", "**"], env)
        check("-H: .gitignore listed, .git never", lines(out),
              [".gitignore", "a.c", "a.log", "keep.o", "src/.hidden.c", "src/b.c"])
        code, out, _ = run(trawl, ["-C", repo, "-I", "-H", "**"], env)
        check("-I: everything, .git included", ".git/HEAD" in lines(out) and "build/out.c" in
              lines(out) and "a.o" in lines(out), True)
        code, out, _ = run(trawl, ["-C", repo, "--ignore-file", extra, "**"], env)
        check("--ignore-file: lowest precedence (its !a.o loses to .gitignore's *.o)",
              lines(out), ["a.c", "keep.o", "src/b.c"])
        code, out, _ = run(trawl, ["-C", repo, "-I", "--ignore-file", extra, "**"], env)
        check("--ignore-file applies with -I", "a.log" in lines(out) or code != 0, False)
        code, out, err = run(trawl, ["-C", repo, "--ignore-file", tmp + "/missing", "**"], env)
        check("missing --ignore-file: exit 2, named, nothing printed",
              (code, "missing" in err, out), (2, True, ""))

        plain = os.path.join(tmp, "tarball")
        write(os.path.join(plain, ".gitignore"), "*.o\n")
        write(os.path.join(plain, "x.c"))
        write(os.path.join(plain, "x.o"))
        code, out, _ = run(trawl, ["-C", plain, "**"], env)
        check("outside a work tree .gitignore is not read", lines(out), ["x.c", "x.o"])
        code, out, _ = run(trawl, ["-C", plain, "--no-require-git", "**"], env)
        check("--no-require-git reads it", lines(out), ["x.c"])

        # explain: formats and exit codes.
        code, out, _ = run(trawl, ["explain", "-C", repo, "**", "--", "a.c", "src/b.c"], env)
        check("explain: all selected, exit 0", (code, len(lines(out))), (0, 2))
        code, out, _ = run(trawl, ["explain", "-C", repo, "**", "--", "a.c", "build/out.c"], env)
        check("explain: one not selected, exit 1", code, 1)
        check("explain lines: the directory and the rule",
              lines(out)[1], "build/out.c: not selected, ignored (at directory build); "
              "ignore rule .gitignore:1:build/ matched build")
        code, out, _ = run(trawl, ["explain", "-C", repo, "--format", "json", "**", "--",
                                   "keep.o", "a.ex", "a.tmp", "src/.hidden.c", "nope"], env)
        objs = [json.loads(l) for l in lines(out)]
        check("explain json: re-included", (objs[0]["selected"], objs[0]["ignore"]["pattern"],
                                            objs[0]["ignore"]["negated"]), (True, "!keep.o", True))
        check("explain json: info/exclude", (objs[1]["reason"], objs[1]["ignore"]["source"],
                                             objs[1]["ignore"]["line"]),
              ("ignored", ".git/info/exclude", 1))
        check("explain json: the excludes file by absolute path",
              (objs[2]["ignore"]["source"], objs[2]["ignore"]["pattern"]),
              (os.path.join(tmp, "global-ignore"), "*.tmp"))
        check("explain json: hidden", objs[3]["reason"], "hidden")
        check("explain json: missing", (objs[4]["reason"], objs[4]["type"]), ("missing", "missing"))
        code, _, err = run(trawl, ["explain", "-C", repo, "**"], env)
        check("explain without paths: exit 2", code, 2)
        code, _, err = run(trawl, ["explain", "-C", repo, "[", "--", "a.c"], env)
        check("explain with a bad pattern: exit 2", code, 2)

        # explain agrees with the walk on every path of the tree.
        every = []
        for d, dirs, files in os.walk(repo):
            dirs[:] = [x for x in dirs]
            for name in dirs + files:
                every.append(os.path.relpath(os.path.join(d, name), repo))
        for opts in (["-H"], [], ["-I", "-H"], ["-t", "f", "-t", "d"], ["-x", "src/**"]):
            _, out, _ = run(trawl, ["-C", repo] + opts + ["**"], env)
            walked = set(lines(out))
            _, out, _ = run(trawl, ["explain", "-C", repo, "--format", "json"] + opts +
                            ["**", "--"] + every, env)
            said = {o["path"] for o in map(json.loads, lines(out)) if o["selected"]}
            check("explain == walk with %s" % (" ".join(opts) or "defaults"), said, walked)
    print("ignore_cli: %d failures" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
