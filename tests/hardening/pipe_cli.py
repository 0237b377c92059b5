#!/usr/bin/env python3
"""A reader that stops early (`trawl '**' | head -1`): every command that
prints a lot ends quietly (docs/cli.md, "Exit status").

    pipe_cli.py TRAWL

Each command's output is more than a pipe holds; the reader takes 100
bytes and closes its end. With SIGPIPE at its default the command dies of
it, as any filter does; with SIGPIPE ignored (some build tools and
services start their children so) its write fails with EPIPE, and it exits
3 without a word. Either way stderr is empty. Each command is tried both
ways, every run.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hardlib import check, env_base, finish, git_tree, run  # noqa: E402


def main():
    trawl = os.path.abspath(sys.argv[1])
    top = tempfile.mkdtemp(prefix="trawl-pipe-")
    try:
        env = env_base(os.path.join(top, "home"))
        tree = os.path.join(top, "tree")
        # About 250 KB of paths: more than a pipe's 64 KiB.
        files = {".gitignore": "*.o\n"}
        for d in range(40):
            for f in range(120):
                files["dir-%02d/a-fairly-long-file-name-%04d.c" % (d, f)] = ""
        git_tree(tree, env, files)
        cache = os.path.join(top, "cache")
        run([trawl, "-C", tree, "--cache", cache, "**/*.c"], env)
        # trawl check's + lines: a cache of an empty tree, then the files.
        filled = os.path.join(top, "filled")
        git_tree(filled, env, {".gitignore": "*.o\n"})
        check_cache = os.path.join(top, "check-cache")
        run([trawl, "-C", filled, "--cache", check_cache, "**/*.c"], env)
        for name in files:
            if name.endswith(".c"):
                os.makedirs(os.path.dirname(os.path.join(filled, name)), exist_ok=True)
                open(os.path.join(filled, name), "w").close()
        queries = os.path.join(top, "q.jsonl")
        with open(queries, "w") as f:
            f.write('{"id": 1, "root": "%s", "include": ["**"]}\n' % tree)
        lines = os.path.join(top, "lines")
        with open(lines, "w") as f:
            for i in range(20000):
                f.write("some/path/name-%06d.c\n" % i)
        commands = {
            "walk": [trawl, "-C", tree, "**"],
            "walk -j1": [trawl, "-C", tree, "-j1", "**"],
            "walk --unsorted": [trawl, "-C", tree, "--unsorted", "**"],
            "walk --format json": [trawl, "-C", tree, "--format", "json", "**"],
            "walk -0": [trawl, "-C", tree, "-0", "**"],
            "walk --cache, from the cache": [trawl, "-C", tree, "--cache", cache, "**/*.c"],
            "walk --cache, writing it": [trawl, "-C", tree, "--cache", cache + ".new", "**/*.c"],
            "batch": [trawl, "batch", queries],
            "batch --format cmake": [trawl, "batch", "--format", "cmake", queries],
            "match -": [trawl, "match", "**", "-"],
        }
        for name, cmd in commands.items():
            for ignored in (False, True):
                if os.path.exists(cache + ".new"):
                    os.unlink(cache + ".new")
                stdin = open(lines) if cmd[-1] == "-" else subprocess.DEVNULL
                p = subprocess.Popen(
                    cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                    preexec_fn=(lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN))
                    if ignored else None)
                head = p.stdout.read(100)
                p.stdout.close()
                err = p.stderr.read().decode("utf-8", "replace")
                rc = p.wait()
                want = 3 if ignored else -signal.SIGPIPE
                how = "SIGPIPE ignored" if ignored else "SIGPIPE default"
                check("%s, %s: exit %d, nothing on stderr" % (name, how, want),
                      rc == want and err == "" and len(head) == 100,
                      "exit %d, stderr %r" % (rc, err))
        # trawl check prints what changed: thousands of + lines.
        for ignored in (False, True):
            shutil.copy(check_cache, check_cache + ".try")
            p = subprocess.Popen(
                [trawl, "check", "--cache", check_cache + ".try"], stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, env=env,
                preexec_fn=(lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN))
                if ignored else None)
            p.stdout.read(100)
            p.stdout.close()
            err = p.stderr.read().decode("utf-8", "replace")
            rc = p.wait()
            how = "SIGPIPE ignored" if ignored else "SIGPIPE default"
            # Ignored: the change is still a change (exit 1).
            want = 1 if ignored else -signal.SIGPIPE
            check("check, %s: exit %d, nothing on stderr" % (how, want),
                  rc == want and err == "", "exit %d, stderr %r" % (rc, err))
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
