#!/usr/bin/env python3
"""`trawl meson` from the command line, without Meson (docs/meson.md).

    cli.py TRAWL_EXE

- the output: each list's paths sorted and joined by '\\n', the lists joined
  by NUL, no trailing separator; each list exactly what `trawl` with the
  same patterns and options prints (a differential check on a git work
  tree with a .gitignore, and outside one), -C DIR printed as DIR/PATH;
- the grammar: --list, per-list options, attached values (-xPAT,
  --exclude=PAT), '--' and '\\-' for patterns that start with '-';
- errors, each exit 2 with nothing on stdout: an empty list (unless
  --allow-empty), a bad pattern (with its offset), an unknown option or
  dialect, a missing value, a list without a pattern, a missing -C
  directory, names Meson cannot carry (each named, escaped, in UTF-8);
- under Meson's variables: the cache in the build directory (a second run
  reads no directory), several lists in one walk, the build directory
  below the calling directory left out, and the registry of this
  configure run (one line per cache, started afresh by another run);
- --check is `trawl check` with "a list changed" made exit 0;
- the labels trawl check shows changes under: the meson.build that asked
  and the list as written there, paths relative to its directory;
- the subprojects directory left out (a pattern that starts with its path,
  or a root in it, asks for it), read from project() — another
  subproject_dir, one that is not a plain string (an error at its line and
  column) — and a subproject's own;
- --postconf outside Meson is a usage error.
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mesontest import check, check_in, environment, finish, run, settle


def write(root, rel, data=b""):
    path = os.path.join(os.fsencode(root), rel if isinstance(rel, bytes) else os.fsencode(rel))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def lines_of(trawl, root, args, env):
    """What `trawl -C ROOT ARGS` prints, as a list of paths."""
    rc, out, err = run([trawl, "-C", root] + args, env=env)
    assert rc == 0, err
    return out.splitlines()


def stat_of(err):
    return [l for l in err.splitlines() if "lists," in l or "list," in l]


def output_and_grammar(trawl, tmp, env):
    tree = os.path.join(tmp, "tree")
    for f in ("a.c", "b.h", "src/c.c", "src/d/e.c", "src/d/e.h", "src/skip/s.c", "lib/f.c",
              "-dash.c", "build/gen.c", "docs/x.md", ".hidden/h.c", "ign/i.c"):
        write(tree, f)
    write(tree, ".gitignore", b"ign/\n*.h\n")
    for where, git in (("outside a git work tree", False), ("in a git work tree", True)):
        if git:
            run(["git", "init", "-q", tree], env=env)
        lists = [["**/*.c"], ["src/**", "-x", "**/skip/**"], ["-H", "**/*.c"],
                 ["-I", "**/*.h"], ["--dialect", "git", "*.c"]]
        args = []
        for k, l in enumerate(lists):
            args += (["--list"] if k else []) + l
        rc, out, err = run([trawl, "meson"] + args, cwd=tree, env=env)
        check("%s: five lists, exit 0" % where, (rc, err), (0, ""))
        want = "\0".join("\n".join(lines_of(trawl, tree, l, env)) for l in lists)
        check("%s: each list is what trawl prints, joined by \\n, lists by NUL" % where,
              out, want)
        check("%s: no trailing separator" % where, out.endswith(("\n", "\0")), False)

    rc, out, err = run([trawl, "meson", "-C", "src", "**/*.c", "--list", "-Csrc/", "*.c",
                        "--list", "--root=.", "*.c", "--list", "-C", "./lib", "*.c"],
                       cwd=tree, env=env)
    check("-C DIR: paths printed as DIR/PATH", (rc, out.split("\0")),
          (0, ["src/c.c\nsrc/d/e.c\nsrc/skip/s.c", "src/c.c", "-dash.c\na.c", "./lib/f.c"]))
    rc, out, err = run([trawl, "meson", "**/*.c", "-x**/d/**", "--exclude=src/skip/**",
                        "--exclude", "build/**", "-x", "lib/*"], cwd=tree, env=env)
    check("excludes: attached and separate values", (rc, out), (0, "-dash.c\na.c\nsrc/c.c"))
    rc, out, err = run([trawl, "meson", "--", "-dash.c", "--list", "\\-dash.c"], cwd=tree, env=env)
    check("'--' and '\\-': patterns that start with '-'", (rc, out), (0, "-dash.c\0-dash.c"))
    rc, out, err = run([trawl, "meson", "none/*.c", "--allow-empty", "--list", "a.c"], cwd=tree,
                       env=env)
    check("--allow-empty: an empty list is empty", (rc, out), (0, "\0a.c"))

    errors = [
        (["none/*.c"], "list 1 (none/*.c) matched no file"),
        (["a.c", "--list", "none/*.c", "other"], "list 2 (none/*.c ...) matched no file"),
        (["src/[a"], "list 1: pattern 1: pattern \"src/[a\": byte 4: unclosed '['"),
        (["a.c", "-x", "{b"], "list 1: exclude 1:"),
        (["--frobnicate", "a.c"], "unknown option '--frobnicate'"),
        (["a.c", "--dialect", "perl"], "list 1: unknown dialect 'perl'"),
        (["a.c", "-x"], "--exclude needs a value"),
        (["a.c", "--list", "-H"], "list 2 has no pattern"),
        (["-C", "missing", "*.c"], "list 1: "),
        (["-C", "", "*.c"], "an empty directory name"),
        (["-j", "many", "*.c"], "--threads must be a number"),
    ]
    for args, message in errors:
        rc, out, err = run([trawl, "meson"] + args, cwd=tree, env=env)
        check("error %r: exit 2, nothing printed" % args, (rc, out), (2, ""))
        check_in("error %r: the message" % args, message, err)
    rc, out, err = run([trawl, "meson"], cwd=tree, env=env)
    check("no argument: usage, exit 2", (rc, out, "Usage: trawl meson" in err), (2, "", True))
    rc, out, err = run([trawl, "meson", "--postconf"], cwd=tree, env=env)
    check("--postconf outside Meson: exit 2", rc, 2)
    check_in("--postconf outside Meson: says how it is run", "meson.add_postconf_script", err)


def refused_names(trawl, tmp, env):
    tree = os.path.join(tmp, "names")
    write(tree, "ok.c")
    bad = [(b"nl\nx.c", "nl\\nx.c", "a newline"), (b"cr\rx.c", "cr\\rx.c", "carriage return"),
           (b"b\\s.c", "b\\\\s.c", "'\\' into '/'"), (b"p|p.c", "p|p.c", "'|'"),
           (b"l\xe9.c", "l\\xe9.c", "not UTF-8"), (b"t\xe2\x82.c", "t\\xe2\\x82.c", "not UTF-8"),
           (b"c\xc3\xa9\x01.c", "c\u00e9\\x01.c", None)]
    for name, _, _ in bad:
        write(tree, name)
    rc, out, err = run([trawl, "meson", "*.c"], cwd=tree, env=env, text=False)
    check("names Meson cannot carry: exit 2, nothing on stdout", (rc, out), (2, b""))
    try:
        text = err.decode("utf-8")
        check("names Meson cannot carry: the messages are UTF-8", True, True)
    except UnicodeDecodeError:
        text = err.decode("utf-8", "replace")
        check("names Meson cannot carry: the messages are UTF-8", False, True)
    for name, shown, why in bad:
        if why is None:
            continue
        line = [l for l in text.splitlines() if l.startswith("trawl: %s: " % shown)]
        check("%r is named once, escaped" % name, len(line), 1)
        check_in("%r: why" % name, why, line[0] if line else "")
    rc, out, err = run([trawl, "meson", "*.c", "-x", "{nl,cr,b,p,l,t}*"], cwd=tree, env=env,
                       text=False)
    check("a control byte other than CR and LF is carried", (rc, out),
          (0, b"c\xc3\xa9\x01.c\nok.c"))
    for i in range(60):
        write(tree, b"many|%02d.c" % i)
    rc, out, err = run([trawl, "meson", "many*.c"], cwd=tree, env=env)
    check("60 bad names: 50 shown, the rest counted", (rc, err.count("Meson cannot carry this"),
                                                       "and 10 more" in err), (2, 50, True))


def under_meson(trawl, tmp, env):
    src = os.path.join(tmp, "proj")
    for f in ("a.c", "src/b.c", "src/c.h", "sub/d.c", "b/inside-build.c"):
        write(src, f)
    settle()
    build = os.path.join(src, "b")
    menv = dict(env, MESON_SOURCE_ROOT=src, MESON_BUILD_ROOT=build, MESON_SUBDIR="")
    args = ["meson", "--stats", "**/*.c", "--list", "src/*.h", "--list", "-C", "sub", "*.c"]
    rc, out, err = run([trawl] + args, cwd=src, env=menv)
    check("under Meson: the answer, the build directory left out", (rc, out.split("\0")),
          (0, ["a.c\nsrc/b.c\nsub/d.c", "src/c.h", "sub/d.c"]))
    check_in("under Meson: three lists, one walk per root", "3 lists, 2 walks", err)
    tdir = os.path.join(build, "meson-private", "trawl")
    caches = sorted(f for f in os.listdir(tdir) if f.endswith(".cache"))
    check("under Meson: one cache in the build directory", len(caches), 1)
    rc, out2, err = run([trawl] + args, cwd=src, env=menv)
    check("under Meson: a second run, the same answer", (rc, out2), (0, out))
    check_in("under Meson: a second run reads no directory", "0 directories read", err)
    check_in("under Meson: a second run trusts the cache", "(cache trusted)", err)
    registry = open(os.path.join(tdir, "caches")).read().splitlines()
    check("registry: the header of this run, then the cache",
          (registry[0].startswith("trawl meson caches of configure run %d-" % os.getpid()),
           registry[1:]), (True, [os.path.join(tdir, caches[0])]))
    run([trawl, "meson", "sub/*.c"], cwd=src, env=menv)
    run([trawl, "meson", "sub/*.c"], cwd=src, env=menv)
    registry = open(os.path.join(tdir, "caches")).read().splitlines()
    check("registry: another call adds its cache, once", len(registry), 3)
    menv_sub = dict(menv, MESON_SUBDIR="sub")
    run([trawl, "meson", "*.c"], cwd=os.path.join(src, "sub"), env=menv_sub)
    check("registry: the same arguments in another directory, another cache",
          len(open(os.path.join(tdir, "caches")).read().splitlines()), 4)
    # Another configure run: a process in between (the shell does not
    # exec trawl: a command follows).
    p = subprocess.run(["sh", "-c", '"$0" meson sub/*.c >/dev/null; true', trawl], cwd=src,
                       env=menv)
    registry = open(os.path.join(tdir, "caches")).read().splitlines()
    check("registry: another configure run starts it afresh",
          (p.returncode, len(registry), registry[0].endswith("run %d-" % os.getpid())),
          (0, 2, False))
    # --check: `trawl check`, with "changed" a success for Ninja.
    cache = os.path.join(tdir, caches[0])
    stamp = os.path.join(tmp, "stamp")
    rc, out, err = run([trawl, "meson", "--check", "--touch", stamp, "--cache", cache], env=env)
    check("--check, nothing changed: exit 0, silent, no stamp",
          (rc, out, os.path.exists(stamp)), (0, "", False))
    write(src, "src/new.c")
    rc, out, err = run([trawl, "meson", "--check", "--touch", stamp, "--cache", cache], env=env)
    check("--check, a list changed: exit 0 (trawl check: 1), the change labelled by the list "
          "as written, the stamp", (rc, out.splitlines(), os.path.exists(stamp)),
          (0, ["meson.build: list 1: '**/*.c'", "+ src/new.c"], True))
    rc, out, err = run([trawl, "check", "--cache", cache], env=env)
    check("--check rewrote the cache as trawl check does", (rc, out), (0, ""))
    rc, out, err = run([trawl, "meson", "--check", "--touch", stamp], env=env)
    check("--check, a usage error: exit 2", rc, 2)
    rc, out, err = run([trawl, "meson", "--cache", os.path.join(tmp, "mine.cache"), "a.c"],
                       cwd=src, env=menv)
    check("--cache FILE: used and registered",
          (rc, os.path.isfile(os.path.join(tmp, "mine.cache")),
           os.path.join(tmp, "mine.cache") in open(os.path.join(tdir, "caches")).read()),
          (0, True, True))


def labels(trawl, tmp, env):
    """What trawl check calls each list (CACHE.labels, check-labels.h): the
    meson.build that asked, relative to the source root, the list's number
    and its arguments as written there (Meson string literals, without the
    options for all lists), and the prefix that makes its paths relative to
    that meson.build's directory."""
    src = os.path.join(tmp, "labelled")
    write(src, "meson.build", b"project('labelled', 'c')\n")
    for f in ("lib/a.c", "lib/it's\t.c", "other/o.c"):
        write(src, f)
    build = os.path.join(src, "b")
    os.makedirs(build)
    menv = dict(env, MESON_SOURCE_ROOT=src, MESON_BUILD_ROOT=build, MESON_SUBDIR="lib")
    args = ["meson", "*.c", "-j", "2", "--list", "-C", "../other", "-x", "x/**", "--stats", "*.c",
            "--list", "it's\t*.c", "--allow-empty"]
    rc, out, err = run([trawl] + args, cwd=os.path.join(src, "lib"), env=menv)
    check("labels: the answer", (rc, out.split("\0")),
          (0, ["a.c\nit's\t.c", "../other/o.c", "it's\t.c"]))
    tdir = os.path.join(build, "meson-private", "trawl")
    cache = [os.path.join(tdir, f) for f in os.listdir(tdir) if f.endswith(".cache")][0]
    with open(cache + ".labels", "rb") as f:
        text = f.read()
    check("labels: one entry per list, beside the cache", text.split(b"\0"), [
        b"trawl check labels 1\nlib/meson.build: list 1: '*.c'", b"",
        b"lib/meson.build: list 2: '-C', '../other', '-x', 'x/**', '*.c'", b"../other/",
        b"lib/meson.build: list 3: 'it\\'s\\t*.c', '--allow-empty'", b"", b""])
    before = os.stat(cache + ".labels").st_mtime_ns
    time.sleep(0.02)
    run([trawl] + args, cwd=os.path.join(src, "lib"), env=menv)
    check("labels: the same run again leaves the file alone",
          os.stat(cache + ".labels").st_mtime_ns, before)
    write(src, "other/n.c")
    write(src, b"lib/w\xff.c")
    rc, out, err = run([trawl, "check", "--cache", cache], cwd=build, env=env)
    check("labels: trawl check heads each list's changes with its label, paths as the list "
          "printed them, names escaped", (rc, out.splitlines()),
          (1, ["lib/meson.build: list 1: '*.c'", "+ w\\xff.c",
               "lib/meson.build: list 2: '-C', '../other', '-x', 'x/**', '*.c'",
               "+ ../other/n.c"]))


NON_DEFAULT = b"""# project(subproject_dir : 'no')
project('p2', 'c',  # subproject_dir : 'no'
  version : '1 (subproject_dir : \\'no\\')',
  default_options : ['subproject_dir=no', '''multi
line'''], license : f'x',
  subproject_dir : 'ext/deps')
subproject_dir = 'not this'
"""


def subprojects(trawl, tmp, env):
    """The subprojects directory (docs/meson.md, "The subprojects
    directory"): left out of every list whose root lies above it, unless a
    pattern starts with its path or the root is in it; read from the
    top-level project() call; below the root of the (sub)project that
    asks."""
    outer = os.path.join(tmp, "outer")
    proj = os.path.join(outer, "proj")
    write(proj, "meson.build", b"project('p', 'c')\n")
    for f in ("a.c", "src/s.c", "subprojects/z.wrap", "subprojects/dep/x.c",
              "subprojects/dep/subprojects/inner/y.c"):
        write(proj, f)

    def meson(cwd, subdir, args, root=proj):
        menv = dict(env, MESON_SOURCE_ROOT=root, MESON_BUILD_ROOT=os.path.join(root, "b"),
                    MESON_SUBDIR=subdir)
        rc, out, err = run([trawl, "meson"] + args, cwd=cwd, env=menv)
        return (rc, out) if rc == 0 else (rc, err)

    for args, want in [
            (["**/*.c"], "a.c\nsrc/s.c"),
            (["**"], "a.c\nmeson.build\nsrc/s.c"),
            (["subprojects/*.wrap"], "subprojects/z.wrap"),
            (["subprojects/**/*.c"], "subprojects/dep/subprojects/inner/y.c\nsubprojects/dep/x.c"),
            (["subproject[s]/**/*.c", "--allow-empty"], ""),
            # Asking is the list's: its other patterns reach in too.
            (["**/*.c", "subprojects/dep/*.c"],
             "a.c\nsrc/s.c\nsubprojects/dep/subprojects/inner/y.c\nsubprojects/dep/x.c"),
            (["-C", "subprojects/dep", "**/*.c"],
             "subprojects/dep/subprojects/inner/y.c\nsubprojects/dep/x.c"),
            (["-C", "..", "**/*.c"], "../proj/a.c\n../proj/src/s.c"),
            (["-C", "src", "**/*.c"], "src/s.c")]:
        check("subprojects: %r" % args, meson(proj, "", args), (0, want))
    check("subprojects: from a subproject, its own subprojects directory",
          meson(os.path.join(proj, "subprojects/dep"), "subprojects/dep", ["**/*.c"]), (0, "x.c"))
    rc, out, err = run([trawl, "meson", "**/*.c"], cwd=proj, env=env)
    check("subprojects: run by hand, without Meson's variables, nothing is left out", (rc, out),
          (0, "a.c\nsrc/s.c\nsubprojects/dep/subprojects/inner/y.c\nsubprojects/dep/x.c"))

    other = os.path.join(tmp, "other-dir")
    write(other, "meson.build", NON_DEFAULT)
    for f in ("a.c", "subprojects/s.c", "ext/deps/d/x.c", "ext/deps/d/ext/deps/n/y.c",
              "ext/e.c"):
        write(other, f)
    check("subproject_dir 'ext/deps': left out, and subprojects/ is any directory",
          meson(other, "", ["**/*.c"], other), (0, "a.c\next/e.c\nsubprojects/s.c"))
    check("subproject_dir 'ext/deps': from a subproject, its own",
          meson(os.path.join(other, "ext/deps/d"), "ext/deps/d", ["**/*.c"], other), (0, "x.c"))
    write(other, "meson.build", NON_DEFAULT.replace(b"'ext/deps'", b"'ext//deps/'"))
    check("subproject_dir 'ext//deps/': the same directory",
          meson(other, "", ["**/*.c"], other), (0, "a.c\next/e.c\nsubprojects/s.c"))

    for n, value in enumerate(["'a' + 'b'", "'a' / 'b'", "f'x'", "'''x'''", "'a\\tb'", "x"]):
        bad = os.path.join(tmp, "bad%d" % n)
        write(bad, "meson.build", ("project('p', 'c',\n  subproject_dir : %s)\n" % value).encode())
        write(bad, "a.c")
        rc, msg = meson(bad, "", ["**/*.c"], bad)
        check("subproject_dir : %s: exit 2" % value, rc, 2)
        check_in("subproject_dir : %s: the message names the file, line and column" % value,
                 "meson.build:2:20: subproject_dir is not one plain string", msg)


def main(argv):
    trawl = os.path.abspath(argv[1])
    with tempfile.TemporaryDirectory(prefix="trawl-meson-cli-") as tmp:
        env = environment(tmp)
        output_and_grammar(trawl, tmp, env)
        refused_names(trawl, tmp, env)
        under_meson(trawl, tmp, env)
        labels(trawl, tmp, env)
        subprojects(trawl, tmp, env)
    finish()


if __name__ == "__main__":
    main(sys.argv)
