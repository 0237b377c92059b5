"""What the hardening tests share (tests/hardening/, docs/reliability.md): a
check that records failures, a run of the command, a git work tree with
ignore files at several depths, and the command's answer on it."""
import os
import subprocess
import sys

FAILURES = []

# The warnings a cache file that does not check out gives: a torn file
# would give one of them.
TORN = ("is truncated", "is corrupt", "is not a trawl cache", "has format version")


def check(what, ok, detail=""):
    if ok:
        print("ok   %s" % what)
    else:
        FAILURES.append(what)
        print("FAIL %s %s" % (what, detail))
    sys.stdout.flush()
    return ok


def finish():
    print("%d failed" % len(FAILURES))
    return 1 if FAILURES else 0


def env_base(home):
    """An environment whose git configuration is HOME's alone."""
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("GIT_") or k.startswith("TRAWL_FAULT"):
            del env[k]
    env.update(HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"),
               GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.path.join(home, ".gitconfig"),
               LC_ALL="C")
    return env


def run(cmd, env, **kw):
    """(exit status, stdout bytes, stderr text) of CMD."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, **kw)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def write(path, text=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def git_tree(top, env, files):
    """A git work tree at TOP: FILES (paths relative to TOP; a path ending
    in .gitignore gets lines of its own), an info/exclude and a global
    excludes file, so that every source of ignore rules is in play."""
    os.makedirs(top, exist_ok=True)
    subprocess.run(["git", "init", "-q", top], check=True, env=env)
    write(os.path.join(top, ".git", "info", "exclude"), "*.tmp\n")
    excludes = os.path.join(env["HOME"], "excludes")
    write(excludes, "*.bak\n")
    subprocess.run(["git", "config", "--file", env["GIT_CONFIG_GLOBAL"], "core.excludesFile",
                    excludes], check=True, env=env)
    for rel, text in files.items():
        write(os.path.join(top, rel), text)


def standard_files():
    """A small tree with .gitignore files at depths 0, 1 and 2, ignored
    files and directories, and files each source of rules leaves out."""
    files = {
        ".gitignore": "*.o\nbuild/\n",
        "src/.gitignore": "gen/\n!keep.o\n",
        "src/a/.gitignore": "*.skip\n",
        "src/keep.o": "",
        "src/x.o": "",
        "src/gen/g.c": "",
        "src/a/x.skip": "",
        "src/a/y.tmp": "",
        "src/a/z.bak": "",
        "build/out.c": "",
        "README": "",
    }
    for d in ("src", "src/a", "src/a/deep", "src/b", "lib", "lib/sub"):
        for i in range(3):
            files["%s/f%d.c" % (d, i)] = ""
            files["%s/f%d.h" % (d, i)] = ""
    return files
