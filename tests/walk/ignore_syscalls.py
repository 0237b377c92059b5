#!/usr/bin/env python3
"""Looking for ignore files costs no system call (issue 4).

    ignore_syscalls.py TRAWL_EXE

The directory listing the walk reads anyway says whether `.gitignore`,
`.ignore` or `.git` is there, so a directory without them must cost exactly
what it costs with ignore files turned off, and a directory with a
`.gitignore` one more open. fd, for comparison, makes about five failing
statx calls per directory to find out.

Two trees in one git work tree, the second with K more directories than the
first (each directory holds three files), are walked under strace; the test
asserts, from the differences between the two runs (so that start-up,
dynamic loading and the work-tree setup cancel out):

  - opens grow by exactly K (one per directory), with ignore files read as
    with -I;
  - stat-family and access calls do not grow at all;
  - with a .gitignore in every leaf directory (G more of them), opens grow
    by exactly K + G (each directory, each .gitignore) and stats by exactly
    G (the fstat that checks each file's size before it is read): reading a
    file costs, looking for one does not.

Exits 77 (skipped) when strace is missing or cannot trace here (no ptrace in
the sandbox).
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

STATS = {"stat", "lstat", "fstat", "newfstatat", "fstatat64", "statx", "access", "faccessat",
         "faccessat2", "readlink", "readlinkat"}
OPENS = {"open", "openat", "openat2"}


def make_repo(top, dirs, gitignore_everywhere):
    os.makedirs(os.path.join(top, ".git", "objects"))
    os.makedirs(os.path.join(top, ".git", "refs"))
    with open(os.path.join(top, ".git", "HEAD"), "w") as f:
        f.write("ref: refs/heads/main\n")
    with open(os.path.join(top, ".gitignore"), "w") as f:
        f.write("*.o\n")
    for i in range(dirs):
        d = os.path.join(top, "d%03d" % (i // 10), "e%03d" % i)
        os.makedirs(d, exist_ok=True)
        for name in ("a.c", "b.h", "c.o"):
            open(os.path.join(d, name), "w").close()
        if gitignore_everywhere:
            with open(os.path.join(d, ".gitignore"), "w") as f:
                f.write("b.h\n")


def count_dirs(top):
    """Directories below TOP (itself included, .git not) and .gitignore files."""
    n = g = 0
    for _, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        n += 1
        g += ".gitignore" in filenames
    return n, g


def traced_calls(trawl, root, extra, env):
    log = os.path.join(root + ".strace")
    cmd = ["strace", "-f", "-qq", "-o", log, trawl, "-j1", "-C", root] + extra + ["**"]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    if out.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), out.returncode,
                                                out.stderr.decode(errors="replace")))
    calls = collections.Counter()
    with open(log, errors="replace") as f:
        for line in f:
            m = re.match(r"(?:\d+\s+)?(\w+)\(", line)
            if m:
                calls[m.group(1)] += 1
    os.unlink(log)
    return calls, out.stdout


def group(calls, names):
    return sum(n for call, n in calls.items() if call in names)


def main(argv):
    trawl = os.path.abspath(argv[1])
    if shutil.which("strace") is None:
        print("strace is not installed: skipped")
        return 77
    if subprocess.run(["strace", "-qq", "-o", "/dev/null", "true"],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
        print("strace cannot trace here: skipped")
        return 77
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null")
    # LeakSanitizer cannot run under ptrace; the sanitizer build is traced
    # without it (its own system calls are the same in both runs).
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
    failures = 0
    with tempfile.TemporaryDirectory(prefix="trawl-syscalls-") as tmp:
        env["HOME"] = tmp
        env["XDG_CONFIG_HOME"] = os.path.join(tmp, "xdg")
        for everywhere in (False, True):
            small, large = (os.path.join(tmp, "%s-%d" % ("gi" if everywhere else "plain", n))
                            for n in (40, 160))
            make_repo(small, 40, everywhere)
            make_repo(large, 160, everywhere)
            (n_large, g_large), (n_small, g_small) = count_dirs(large), count_dirs(small)
            k, g = n_large - n_small, g_large - g_small
            for label, extra in (("ignore files read", []), ("-I", ["-I"])):
                if everywhere and extra:
                    continue
                a, out_a = traced_calls(trawl, small, extra, env)
                b, out_b = traced_calls(trawl, large, extra, env)
                read = g if not extra else 0
                want_opens, want_stats = k + read, read
                d_opens = group(b, OPENS) - group(a, OPENS)
                d_stats = group(b, STATS) - group(a, STATS)
                what = "%s%s" % (label, ", a .gitignore in every leaf directory" if everywhere else "")
                print("%s: %d more directories, %d more .gitignore: %+d opens (want %+d), "
                      "%+d stat-family calls (want %+d)"
                      % (what, k, g, d_opens, want_opens, d_stats, want_stats))
                if d_opens != want_opens or d_stats != want_stats:
                    failures += 1
                    print("MISMATCH: %s\n  small: %s\n  large: %s" % (what, dict(a), dict(b)))
                # The walk found the files: .o ignored unless -I.
                n_o = out_b.count(b".o\n")
                if (n_o == 0) != (not extra):
                    failures += 1
                    print("MISMATCH: %s: %d .o files printed" % (what, n_o))
    print("ignore_syscalls: %d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
