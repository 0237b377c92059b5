#!/usr/bin/env python3
"""Confinement (docs/reliability.md, docs/walking.md "Nothing outside the
root"): what the command reads, reports and writes, and whose files it
trusts.

    confine.py TRAWL

- **Nothing outside the root without -L.** A git work tree whose root
  holds links out of it (to a directory, to a file, to its parent, an
  absolute one, a dangling one, one deeper down) and a directory `outside`
  beside it. Each command — walks in every dialect and type, a start
  directory through a link, the cache written, trusted and re-checked,
  batch, explain (paths through links and through `..`) — runs under
  strace: no system call may name a path that resolves into `outside`
  (the last component followed unless the call does not follow it) or
  hand back a descriptor there, and no path printed may lie there.
- **With -L, a link leaving the root is reported as such**: the walk
  prints what lies below it as paths below the link, and `trawl explain -L`
  names the link and where it leads, for each link that leaves (and for
  none that stays inside).
- **Cache and stamp files honour the umask and are never writable by
  others**: under umask 000, 002, 022 and 077, every file the command
  creates (walk and batch caches, --bump and --touch stamps, the --checked
  mark, the depfile, trawl meson's cache, registry and labels) has mode
  0664 less the umask.
- **A cache file another user owns is refused, not parsed**: one warning
  naming the owner, the right answer, and no byte of it read (strace); as
  root and as nobody; root under sudo accepts the sudo user's
  (SUDO_UID); a FIFO in its place is refused without hanging.

Every case runs each time; a machine where strace cannot trace fails here.
"""
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hardlib import check, env_base, finish, git_tree, run, standard_files  # noqa: E402

# System calls that name a path relative to a descriptor (or AT_FDCWD) as
# their first two arguments, and those that take a path alone.
AT_CALLS = ("openat", "newfstatat", "statx", "readlinkat", "faccessat", "faccessat2",
            "fstatat64", "mkdirat", "unlinkat", "renameat", "renameat2", "utimensat",
            "name_to_handle_at", "fchmodat", "fchownat")
PATH_CALLS = ("open", "stat", "lstat", "access", "readlink", "chdir", "statfs", "truncate",
              "mkdir", "rmdir", "unlink", "rename", "creat", "getxattr", "lgetxattr")
LINE = re.compile(r'^(?:\d+ +)?(\w+)\((.*)\) += (.*)$')


def resolve(base, path, follow):
    full = path if path.startswith("/") else os.path.join(base, path)
    if follow:
        return os.path.realpath(full)
    head, tail = os.path.split(full.rstrip("/") or "/")
    if tail in ("", ".", ".."):
        return os.path.realpath(full)
    return os.path.join(os.path.realpath(head), tail)


def touched_outside(log, outside, cwd):
    """The lines of strace log LOG that name a path in OUTSIDE or hand
    back a descriptor there."""
    bad = []
    for line in log.splitlines():
        if ("<" + outside + "/") in line or ("<" + outside + ">") in line:
            bad.append(line)
            continue
        m = LINE.match(line)
        if not m:
            continue
        call, args = m.group(1), m.group(2)
        if call in AT_CALLS:
            a = re.match(r'(AT_FDCWD|-?\d+(?:<([^>]*)>)?), "((?:[^"\\]|\\.)*)"', args)
            if not a:
                continue
            base = cwd if a.group(1) == "AT_FDCWD" else (a.group(2) or "")
            path = a.group(3).encode().decode("unicode_escape")
        elif call in PATH_CALLS:
            a = re.match(r'"((?:[^"\\]|\\.)*)"', args)
            if not a:
                continue
            base, path = cwd, a.group(1).encode().decode("unicode_escape")
        else:
            continue
        follow = not any(f in args for f in ("AT_SYMLINK_NOFOLLOW", "O_NOFOLLOW")) \
            and call not in ("lstat", "readlinkat", "readlink", "lgetxattr")
        if path == "" and "AT_EMPTY_PATH" in args:
            continue
        r = resolve(base, path, follow)
        if r == outside or r.startswith(outside + "/"):
            bad.append(line)
    return bad


def traced(trawl, args, env, cwd, log):
    cmd = ["strace", "-f", "-qq", "-y", "-s", "4096", "-o", log,
           "-e", "trace=%file,%desc,getdents64", trawl] + args
    # LeakSanitizer stops the world with ptrace, which strace holds: in the
    # sanitizer build, no leak check under the tracer (the rest of the suite
    # has it).
    env = dict(env, ASAN_OPTIONS=env.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    with open(log, errors="replace") as f:
        return p.returncode, p.stdout.decode("utf-8", "surrogateescape"), \
            p.stderr.decode("utf-8", "replace"), f.read()


def confinement(trawl, top):
    env = env_base(os.path.join(top, "home"))
    outside = os.path.join(top, "outside")
    root = os.path.join(top, "ws")
    files = standard_files()
    git_tree(root, env, files)
    for rel in ("x.c", "sub/y.c", ".gitignore", ".hidden/h.c", "BUILD"):
        p = os.path.join(outside, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write("*.tmp\n" if rel == ".gitignore" else "")
    links = {
        "ext": "../outside",
        "xl.c": "../outside/x.c",
        "up": "..",
        "abs": outside,
        "dangling.c": "../outside/nope.c",
        "src/a/deep/back": "../../../../outside/sub",
    }
    for name, target in links.items():
        os.symlink(target, os.path.join(root, name))
    os.symlink(".", os.path.join(root, "self"))  # a loop, inside
    os.symlink("src/a", os.path.join(root, "inner"))  # a link that stays inside
    cwd = os.path.join(top, "cwd")
    os.makedirs(cwd)
    state = os.path.join(top, "state")
    os.makedirs(state)
    queries = os.path.join(top, "q.jsonl")
    with open(queries, "w") as f:
        f.write('{"id": 1, "root": "%s", "include": ["**"], "type": ["f", "d", "l"]}\n' % root)
        f.write('{"id": 2, "root": "%s", "include": ["ext/**", "up/**"]}\n' % root)
        f.write('{"id": 3, "root": "%s", "include": ["**/*.c"], "hidden": true, '
                '"dialect": "bazel"}\n' % root)
    log = os.path.join(top, "strace.log")
    cache = os.path.join(state, "c")
    commands = [
        ["-C", root, "**"],
        ["-C", root, "-H", "-t", "f,d,l", "**"],
        ["-C", root, "-j1", "**"],
        ["-C", root, "-I", "**"],
        ["-C", root, "ext/**", "up/outside/**", "abs/*", "src/a/deep/back/*"],
        ["-C", root, "--dialect", "cmake", "**"],
        ["-C", root, "--dialect", "bazel", "**"],
        ["-C", root, "--dialect", "git", "**"],
        ["-C", root, "--cache", cache, "-t", "f,l", "**"],
        ["-C", root, "--cache", cache, "-t", "f,l", "**"],
        ["check", "--cache", cache],
        ["batch", "--cache", os.path.join(state, "b"), queries],
        ["batch", "--cache", os.path.join(state, "b"), queries],
        ["check", "--cache", os.path.join(state, "b")],
        ["explain", "-C", root, "-H", "**", "--", "ext/x.c", "up/outside/x.c", "../outside/x.c",
         "src/../../outside/x.c", "xl.c", "abs/sub/y.c", "src/a/deep/back/y.c"],
        ["explain", "-C", root, "--dialect", "bazel", "**", "--", "../outside/x.c", "ext/x.c"],
    ]
    for args in commands:
        rc, out, err, trace = traced(trawl, args, env, cwd, log)
        bad = touched_outside(trace, outside, cwd)
        printed_outside = [p for p in out.splitlines()
                           if p and not p.startswith(("../", "src/../")) and
                           os.path.realpath(os.path.join(root, p.split(": ")[0].strip('"')))
                           .startswith(outside + "/") and
                           ("selected, include" in p or args[0] != "explain")
                           and not os.path.islink(os.path.join(root, p.split(": ")[0]))]
        check("without -L: %s reads nothing outside the root" % " ".join(args[:6]),
              rc in (0, 1) and not bad, "exit %d %s %s" % (rc, err, "\n".join(bad[:5])))
        check("without -L: %s reports nothing outside the root" % " ".join(args[:6]),
              not printed_outside, repr(printed_outside[:5]))
    # What the explanation says of a path through '..'.
    rc, out, _ = run([trawl, "explain", "-C", root, "-H", "**", "--", "../outside/x.c"], env)
    check("explain: a path through '..' is not selected, 'outside'",
          rc == 1 and "not below the root" in out.decode(), out)

    # With -L: links leaving the root are followed and named.
    rc, out, err = run([trawl, "-C", root, "-L", "-t", "f", "**"], env)
    paths = out.decode().splitlines()
    check("-L: the walk prints what lies below a link leaving the root as paths below the link",
          rc == 0 and "ext/x.c" in paths and "ext/sub/y.c" in paths and "abs/x.c" in paths
          and "src/a/deep/back/y.c" in paths and "xl.c" in paths
          and not any(p.startswith("..") or p.startswith("/") for p in paths),
          repr(paths) + err)
    leaving = {"ext/x.c": "ext", "xl.c": "xl.c", "abs/sub/y.c": "abs",
               "src/a/deep/back/y.c": "src/a/deep/back", "up/outside/x.c": "up"}
    staying = ["inner/f0.c", "src/a/f0.c", "self/src/a/f0.c"]
    rc, out, err = run([trawl, "explain", "-C", root, "-L", "--format", "json", "**", "--"]
                       + list(leaving) + staying, env)
    import json
    answers = [json.loads(line) for line in out.decode().splitlines()]
    for a in answers:
        if a["path"] in leaving:
            o = a.get("outside")
            check("-L: explain %s names %s as a link that leaves the root" % (
                a["path"], leaving[a["path"]]),
                o is not None and o["link"] == leaving[a["path"]]
                and (o["target"] == outside or o["target"].startswith(outside + "/")
                     or o["target"] == top), repr(a))
        else:
            check("-L: explain %s names no link (it stays inside)" % a["path"],
                  a.get("outside") is None, repr(a))
    rc, out, _ = run([trawl, "explain", "-C", root, "-L", "**", "--", "ext/x.c"], env)
    check("-L: explain's line says it", b"through ext, a link that leaves the root" in out, out)


def modes(trawl, top):
    env = env_base(os.path.join(top, "home"))
    root = os.path.join(top, "modes-tree")
    git_tree(root, env, standard_files())
    for umask in (0o000, 0o002, 0o022, 0o077):
        state = os.path.join(top, "modes-%03o" % umask)
        os.makedirs(state)
        os.chmod(state, 0o777)

        def u(args, extra=None):
            e = dict(env, **(extra or {}))
            return subprocess.run([trawl] + args, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, env=e, cwd=root,
                                  preexec_fn=lambda: os.umask(umask)).returncode

        q = os.path.join(top, "modes-q.jsonl")
        with open(q, "w") as f:
            f.write('{"id": 1, "root": "%s", "include": ["**/*.c"]}\n' % root)
        s = lambda n: os.path.join(state, n)  # noqa: E731
        u(["-C", root, "--cache", s("walk.cache"), "**/*.h"])
        u(["batch", "--cache", s("batch.cache"), "--bump", s("batch.bump"), q])
        u(["meson", "**/*.c"], {"MESON_BUILD_ROOT": state, "MESON_SOURCE_ROOT": root,
                                "MESON_SUBDIR": ""})
        new = os.path.join(root, "src/new%03o.c" % umask)
        open(new, "w").close()
        u(["check", "--touch", s("touch"), "--checked", s("mark"), "--depfile", s("dep"),
           "--cache", s("walk.cache"), "--cache", s("batch.cache")])
        u(["check", "--bump", s("check.bump"), "--cache", s("batch.cache")])
        os.unlink(new)
        u(["check", "--bump", s("check.bump"), "--cache", s("batch.cache")])
        made, wrong = [], {}
        want = 0o664 & ~umask
        for d, dirs, names in os.walk(state):
            for n in dirs + names:
                path = os.path.join(d, n)
                rel = os.path.relpath(path, state)
                mode = stat.S_IMODE(os.lstat(path).st_mode)
                made.append(rel)
                # A directory: the umask taken off, never writable by others.
                ok = (mode == want) if n in names else not (mode & umask or mode & 0o002)
                if not ok:
                    wrong[rel] = oct(mode)
        kinds = {"walk.cache", "batch.cache", "batch.bump", "touch", "mark", "dep", "check.bump"}
        check("umask %03o: %d files, each mode %03o (never writable by others): %s" % (
            umask, len(made), want, " ".join(sorted(made))),
            kinds <= set(made) and len(made) >= len(kinds) + 3 and not wrong,
            repr(wrong) + " " + repr(made))


def owners(trawl, top):
    env = env_base(os.path.join(top, "home"))
    root = os.path.join(top, "owners-tree")
    git_tree(root, env, standard_files())
    state = os.path.join(top, "owners")
    os.makedirs(state)
    os.chmod(state, 0o777)
    os.chmod(top, 0o755)
    nobody = 65534
    cache = os.path.join(state, "c")
    fresh = run([trawl, "-C", root, "**/*.c"], env)[1]
    log = os.path.join(top, "owners.log")

    def fresh_cache(uid):
        if os.path.lexists(cache):
            os.unlink(cache)
        run([trawl, "-C", root, "--cache", cache, "**/*.c"], env)
        os.chown(cache, uid, -1)

    # As root, a cache nobody owns.
    for cmd in (["-C", root, "--cache", cache, "--stats", "**/*.c"], ["check", "--cache", cache]):
        fresh_cache(nobody)
        rc, out, err, trace = traced(trawl, cmd, env, state, log)
        read = [ln for ln in trace.splitlines()
                if re.match(r'(\d+ +)?(read|pread64|mmap)\(\d+<%s>' % re.escape(cache), ln)]
        what = "trawl " + cmd[0] if cmd[0] == "check" else "a cached walk"
        check("as root, %s refuses a cache nobody owns: one warning naming the owner" % what,
              "is owned by another user (uid 65534, not 0)" in err and err.count("trawl: cache /") == 1,
              err)
        check("as root, %s reads no byte of it" % what, not read, "\n".join(read[:3]))
        if cmd[0] != "check":
            check("as root, %s answers right and says the cache was not trusted" % what,
                  rc == 0 and out == fresh.decode() and "cache:              not trusted" in err,
                  err)
        else:
            check("as root, trawl check counts it as a change", rc == 1, "exit %d" % rc)
    # Root under sudo: the sudo user's cache is accepted.
    fresh_cache(nobody)
    rc, out, err = run([trawl, "-C", root, "--cache", cache, "--stats", "**/*.c"],
                       dict(env, SUDO_UID=str(nobody)))
    check("as root under sudo (SUDO_UID), the sudo user's cache is trusted",
          rc == 0 and "cache:              trusted" in err and out == fresh, err)
    # As nobody, a cache root owns.
    fresh_cache(0)
    p = subprocess.run(["setpriv", "--reuid=%d" % nobody, "--regid=%d" % nobody,
                        "--clear-groups", trawl, "-C", root, "--cache", cache, "--stats",
                        "**/*.c"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    err = p.stderr.decode()
    check("as nobody, a cache root owns is refused and replaced, the answer right",
          p.returncode == 0 and "is owned by another user (uid 0, not 65534)" in err
          and p.stdout == fresh and os.stat(cache).st_uid == nobody, err)
    # A FIFO in its place.
    os.unlink(cache)
    os.mkfifo(cache)
    try:
        p = subprocess.run([trawl, "check", "--cache", cache], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=env, timeout=30)
        check("a FIFO in a cache's place is refused at once, counted as a change",
              p.returncode == 1 and b"is not a regular file" in p.stderr, p.stderr)
    except subprocess.TimeoutExpired:
        check("a FIFO in a cache's place is refused at once, counted as a change", False,
              "hung")


def main():
    trawl = os.path.abspath(sys.argv[1])
    if subprocess.run(["strace", "-qq", "-o", "/dev/null", "true"]).returncode != 0:
        print("strace cannot trace here")
        return 1
    top = tempfile.mkdtemp(prefix="trawl-confine-")
    try:
        confinement(trawl, top)
        modes(trawl, top)
        if os.geteuid() == 0:
            owners(trawl, top)
        else:
            check("owners: needs root (to own files as another user)", False)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
