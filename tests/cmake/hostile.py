#!/usr/bin/env python3
"""trawl_glob() on hostile trees and bad input.

usage: hostile.py TRAWL SOURCE_ROOT

  - Names that change the meaning of CMake code if anything evaluates them
    (${VAR}, $ENV{X}, '"', '\\', ')', newlines, CR LF, "[==[", bytes that are
    not UTF-8, '") message(FATAL_ERROR x', "$<genex>") come back from
    trawl_glob() exactly as file() returns them, and nothing else happens
    (a variable the names refer to is set to a canary; no message runs).
    The project lives in a directory whose path has a space, a '$' and a
    quote, and is built with Ninja and Make.
  - A name a CMake list cannot carry (a ';', unbalanced '[' or ']', a
    trailing '\\'; '"); message(FATAL_ERROR x' has a ';') stops the configure
    with an error naming it; with SKIP_UNLISTABLE it is left out with a
    warning naming it, and the rest is what file() lists minus those.
  - A watched directory whose name a depfile cannot hold: the re-check then
    runs on every build, and a new source in that directory is compiled.
  - Bad input: LIST_DIRECTORIES without a bool, a glob without GLOB, a
    PATTERNS pattern that does not compile (trawl's message, with the
    offset), EXCLUDE with a glob outside ROOT.
  - No trawl: a C++-only project, a C compiler that fails, no GLib: an
    error that says what to install."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "walk"))
from clitest import FAILURES, check  # noqa: E402

LISTABLE = [b"plain.c", b"${VAR}.c", b"$ENV{X}.c", b'q"uote.c', b"back\\slash.c", b"par).c",
            b"nl\nx.c", b"nu\xff\xfe.c", b'") message(FATAL_ERROR x', b"cr\r\nlf.c",
            b"lone\rcr.c", b"\nlead.c", b"[==[x]==].c", b"$<1:genex>.c", b"@VAR@.c",
            b"#c.c", b"sp ace.c", b"\t.c", b"caf\xc3\xa9.c", b"x]=]y[[.c", b"][.c"]
UNLISTABLE = [b'"); message(FATAL_ERROR x', b"a;b.c", b"br[==[x.c", b"y].c", b"trail\\"]


def bracket(s):
    n = 1
    while ("]" + "=" * n + "]") in s or s.endswith("]" + "=" * n):
        n += 1
    return "[" + "=" * n + "[" + s + "]" + "=" * n + "]"


def run(args, env=None, cwd=None):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=cwd)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def make_files(d, names):
    os.makedirs(d, exist_ok=True)
    for n in names:
        with open(os.path.join(os.fsencode(d), n), "wb"):
            pass


def project(d, module, body, langs="C"):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "CMakeLists.txt"), "w") as f:
        f.write("cmake_minimum_required(VERSION 3.20)\nproject(h %s)\n" % langs +
                "include(%s)\n" % bracket(module) + body)


def configure(src, build, gen, *extra, env=None):
    return run(["cmake", "-S", src, "-B", build, "-G", gen] + list(extra), env=env)


def dump(var, out):
    """CMake code writing each element of list VAR into its own file."""
    return ("set(i 0)\nforeach(e IN LISTS %s)\n  math(EXPR i \"${i} + 1\")\n"
            "  file(WRITE \"%s/${i}\" \"${e}\")\nendforeach()\n"
            "file(WRITE \"%s/count\" \"${i}\")\n") % (var, out, out)


def read_dump(out):
    n = int(open(os.path.join(out, "count")).read())
    return [open(os.path.join(out, str(i)), "rb").read() for i in range(1, n + 1)]


def test_names(tmp, trawl, module):
    base = os.path.join(tmp, "proj $x'q")
    tree = os.path.join(base, "names")
    make_files(tree, LISTABLE)
    make_files(os.path.join(base, "src"), [])
    with open(os.path.join(base, "src", "main.c"), "w") as f:
        f.write("int main(void) { return 0; }\n")
    out_f = os.path.join(tmp, "dump-file")
    out_t = os.path.join(tmp, "dump-trawl")
    os.makedirs(out_f)
    os.makedirs(out_t)
    body = ('set(VAR "CANARY")\nset(ENV{X} "CANARY")\n'
            "file(GLOB f names/*)\n"
            "trawl_glob(t GLOB CONFIGURE_DEPENDS names/*)\n" +
            dump("f", out_f) + dump("t", out_t) +
            'trawl_glob(srcs GLOB_RECURSE CONFIGURE_DEPENDS src/*.c)\n'
            'add_executable(app ${srcs})\n')
    project(base, module, body)
    for gen, tool in (("Ninja", ["ninja", "-C"]), ("Unix Makefiles", ["make", "-C"])):
        build = os.path.join(tmp, "names-build " + gen.replace(" ", "-") + " $y")
        rc, out = configure(base, build, gen, "-DTRAWL_EXECUTABLE=" + trawl)
        check("%s: hostile names: configure succeeds, no message ran" % gen,
              (rc, "CMake Error" in out, " x\n" in out), (0, False, False))
        if rc != 0:
            print(out[-3000:])
            continue
        got_f, got_t = read_dump(out_f), read_dump(out_t)
        want = sorted(os.path.join(os.fsencode(tree), n) for n in LISTABLE)
        check("%s: file() lists the hostile names" % gen, got_f, want)
        check("%s: trawl_glob() lists exactly what file() lists" % gen, got_t, got_f)
        check("%s: no value was evaluated (no canary)" % gen,
              any(b"CANARY" in e for e in got_t), False)
        rc, out = run(tool + [build])
        check("%s: builds in a directory with ' ', '$' and a quote" % gen, rc, 0)
        rc, out = run(tool + [build])
        check("%s: ... and rebuilds as a no-op" % gen, (rc, "Configuring done" in out), (0, False))


def test_unlistable(tmp, trawl, module):
    base = os.path.join(tmp, "unlistable")
    make_files(os.path.join(base, "d"), [b"ok.c"] + UNLISTABLE)
    project(base, module, "trawl_glob(t GLOB CONFIGURE_DEPENDS d/*)\n")
    rc, out = configure(base, os.path.join(tmp, "u-build"), "Ninja", "-DTRAWL_EXECUTABLE=" + trawl)
    named = all(os.fsdecode(n).replace("\\", "\\\\" if False else "\\") .split("\n")[0] in out
                for n in [b"a;b.c", b"br[==[x.c", b"y].c"])
    check("a name a list cannot carry stops the configure, naming each",
          (rc != 0, "cannot carry" in out, named, "trail\\" in out), (True, True, True, True))
    out_t = os.path.join(tmp, "dump-u")
    os.makedirs(out_t)
    project(base, module, "trawl_glob(t GLOB d/* SKIP_UNLISTABLE)\n" + dump("t", out_t))
    rc, out = configure(base, os.path.join(tmp, "u-build2"), "Ninja",
                        "-DTRAWL_EXECUTABLE=" + trawl)
    check("SKIP_UNLISTABLE: a warning naming them, the rest listed",
          (rc, "left out" in out, "a;b.c" in out,
           read_dump(out_t) if rc == 0 else None),
          (0, True, True, [os.path.join(os.fsencode(base), b"d", b"ok.c")]))
    # A call that asks nothing of trawl is file() itself (docs/cmake.md):
    # the same list, cut at the ';' as file() cuts it, and no error.
    out_f = os.path.join(tmp, "dump-uf")
    os.makedirs(out_f)
    project(base, module, "trawl_glob(t GLOB d/*)\nfile(GLOB f d/*)\n" + dump("t", out_t) +
            dump("f", out_f))
    rc, out = configure(base, os.path.join(tmp, "u-build3"), "Ninja",
                        "-DTRAWL_EXECUTABLE=/nonexistent")
    check("a call with nothing beyond file() is file(): its list, and no trawl run",
          (rc, read_dump(out_t) if rc == 0 else None), (0, read_dump(out_f) if rc == 0 else 1))


def test_odd_directory(tmp, trawl, module):
    base = os.path.join(tmp, "odd")
    odd = os.path.join(base, "src", "we*ird")
    os.makedirs(odd)
    with open(os.path.join(base, "src", "main.c"), "w") as f:
        f.write("int f(void);\nint main(void) { return f(); }\n")
    with open(os.path.join(odd, "f.c"), "w") as f:
        f.write("int f(void) { return 0; }\n")
    project(base, module, "trawl_glob(srcs GLOB_RECURSE CONFIGURE_DEPENDS src/*.c)\n"
            "add_executable(app ${srcs})\n")
    build = os.path.join(tmp, "odd-build")
    rc, out = configure(base, build, "Ninja", "-DTRAWL_EXECUTABLE=" + trawl)
    check("a watched directory named with '*': configures", rc, 0)
    rc, out = run(["ninja", "-C", build])
    check("... and builds", rc, 0)
    rc, out = run(["ninja", "-C", build])
    check("... the check runs on every build (no depfile holds the name), nothing else",
          (rc, "trawl: re-checking" in out, "Configuring done" in out), (0, True, False))
    with open(os.path.join(odd, "g.c"), "w") as f:
        f.write("int g(void) { return 1; }\n")
    time.sleep(0.02)
    rc, out = run(["ninja", "-C", build])
    check("... a new source in it is compiled in the next run",
          (rc, "Configuring done" in out, "g.c" in out), (0, True, True))


def test_bad_input(tmp, trawl, module):
    base = os.path.join(tmp, "bad")
    os.makedirs(os.path.join(base, "src"))
    cases = [
        ("trawl_glob(x GLOB LIST_DIRECTORIES maybe src/*)", "LIST_DIRECTORIES missing bool value"),
        ("trawl_glob(x src/*.c)", "needs GLOB or GLOB_RECURSE"),
        ("trawl_glob(x PATTERNS \"src/[a\")", "unclosed '['"),
        ("trawl_glob(x GLOB /usr/include/*.h EXCLUDE \"x/**\")", "EXCLUDE patterns are relative"),
        ("trawl_glob(x)", "usage"),
    ]
    for n, (call, want) in enumerate(cases):
        project(base, module, call + "\n", langs="NONE")
        rc, out = configure(base, os.path.join(tmp, "bad-%d" % n), "Ninja",
                            "-DTRAWL_EXECUTABLE=" + trawl)
        flat = " ".join(out.split())   # CMake wraps long messages
        check("bad input %s: error '%s'" % (call, want), (rc != 0, want in flat), (True, True))


def flat(out):
    return " ".join(out.split())


def test_no_trawl(tmp, src):
    module = os.path.join(src, "cmake", "Trawl.cmake")
    env = dict(os.environ, PATH="/usr/bin:/bin")
    base = os.path.join(tmp, "cxx")
    os.makedirs(os.path.join(base, "src"))
    project(base, module, "trawl_glob(x GLOB CONFIGURE_DEPENDS src/*)\n", langs="CXX")
    rc, out = configure(base, os.path.join(tmp, "cxx-build"), "Ninja", env=env)
    out = flat(out)
    check("C++-only project, no trawl: an error saying to install trawl or enable C",
          (rc != 0, "does not enable C" in out, "install trawl" in out), (True, True, True))
    project(base, module, "trawl_glob(x GLOB src/*)\n", langs="CXX")
    rc, out = configure(base, os.path.join(tmp, "cxx-plain-build"), "Ninja", env=env)
    check("... a call with nothing beyond file() needs no trawl", rc, 0)

    wrapper = os.path.join(tmp, "fussy-cc")
    with open(wrapper, "w") as f:
        f.write('#!/bin/sh\ncase "$*" in *libcore/src*) echo "fussy-cc: no" >&2; exit 1;; '
                'esac\nexec cc "$@"\n')
    os.chmod(wrapper, 0o755)
    base = os.path.join(tmp, "fussy")
    os.makedirs(os.path.join(base, "src"))
    project(base, module, "trawl_glob(x GLOB CONFIGURE_DEPENDS src/*)\n")
    rc, out = configure(base, os.path.join(tmp, "fussy-build"), "Ninja",
                        "-DCMAKE_C_COMPILER=" + wrapper, env=env)
    out = flat(out)
    check("a C compiler that fails: the error shows its output and what to install",
          (rc != 0, "fussy-cc: no" in out, "libglib2.0-dev" in out), (True, True, True))

    rc, out = configure(base, os.path.join(tmp, "noglib-build"), "Ninja",
                        env=dict(env, PKG_CONFIG_LIBDIR="/nonexistent", PKG_CONFIG_PATH=""))
    out = flat(out)
    check("no GLib through pkg-config: an error naming the packages",
          (rc != 0, "libglib2.0-dev" in out), (True, True))


def main():
    trawl, src = (os.path.abspath(a) for a in sys.argv[1:3])
    module = os.path.join(src, "cmake", "Trawl.cmake")
    for tool in ("cmake", "ninja", "make", "cc"):
        if shutil.which(tool) is None:
            print("%s not found" % tool)
            return 77
    tmp = tempfile.mkdtemp(prefix="trawl-cmake-hostile-")
    try:
        test_names(tmp, trawl, module)
        test_unlistable(tmp, trawl, module)
        test_odd_directory(tmp, trawl, module)
        test_bad_input(tmp, trawl, module)
        test_no_trawl(tmp, src)
    finally:
        shutil.rmtree(tmp)
    print("%d failed" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
