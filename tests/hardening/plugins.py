#!/usr/bin/env python3
"""The plugins under faults, and two build directories building at once,
with real CMake, Meson and Bazel (docs/reliability.md).

    plugins.py TRAWL SOURCE_ROOT [cmake] [meson] [bazel] [--race N]

A C program whose sources are every src/**/*.c and gen/**/*.c of a git work
tree (a .gitignore at the top and below), found by the plugin: trawl_glob()
with CONFIGURE_DEPENDS (CMake, Ninja), `trawl meson` and its postconf check
(Meson), trawl_glob() and the tools/bazel wrapper (Bazel, where a genrule
lists the sources instead of compiling them). Each source registers its
name when the program starts, so the program says what it was built from.

Faults, each in a project of its own, each after a configure and a build:
- trawl deleted, then trawl replaced by another version of itself (its
  caches are then another trawl's), then by a program that fails;
- the cache deleted, then corrupted (truncated; bytes flipped);
- a pattern that does not compile written into the build file;
- the root of a glob (gen/) removed.
Each time a source is added first, so that a build that goes on as if
nothing happened is stale. The build must either regenerate (exit 0, and
the program is built from exactly the tree's sources) or stop (exit not
0) with a message that names trawl and the cause; after the fault is
undone, the next build must be right. Never a build that succeeds stale.

--race N: two build directories of one source tree (two output bases for
Bazel), N rounds: a source added or removed, then both built at once; each
must be built from exactly the tree's sources. (CMake's first configures
race on compiling nothing: the trawl given is used.)
"""
import os
import shutil
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from hardlib import check, finish  # noqa: E402

SOURCE = r'''#include <stdio.h>
__attribute__((constructor)) static void reg(void) { puts("%s"); }
'''
MAIN = "int main(void) { return 0; }\n"


def sh(cmd, cwd, env, timeout=900, umask=None):
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout,
                       preexec_fn=None if umask is None else (lambda: os.umask(umask)))
    return p.returncode, p.stdout.decode("utf-8", "replace")


class Project:
    def __init__(self, kind, base, trawl, checkout):
        self.kind, self.base, self.checkout = kind, base, checkout
        self.src = os.path.join(base, "project")
        self.bin = os.path.join(base, "bin")
        os.makedirs(self.bin)
        self.trawl = os.path.join(self.bin, "trawl")
        shutil.copy(trawl, self.trawl)
        home = os.path.join(base, "home")
        os.makedirs(home)
        self.env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"),
                        XDG_CACHE_HOME=os.path.join(home, ".cache"), GIT_CONFIG_NOSYSTEM="1",
                        GIT_CONFIG_GLOBAL=os.path.join(home, "gitconfig"), LC_ALL="C.UTF-8",
                        PATH=self.bin + os.pathsep + os.environ["PATH"])
        for k in ("MESON_SOURCE_ROOT", "MESON_BUILD_ROOT", "MESON_SUBDIR", "BAZEL_REAL"):
            self.env.pop(k, None)
        os.makedirs(self.src)
        subprocess.run(["git", "init", "-q", self.src], check=True, env=self.env)
        self.write(".gitignore", "*.o\nbuild*/\n.trawl/\nbazel-*\n")
        self.write("src/.gitignore", "skip/\n")
        self.write("main.c", MAIN)
        for name in ("src/a.c", "src/sub/b.c", "gen/g.c", "src/skip/ignored.c"):
            self.add(name)
        self.write_build(good=True)
        self.builds = ["build1", "build2"]

    def write(self, rel, text):
        p = os.path.join(self.src, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)

    def add(self, rel):
        self.write(rel, SOURCE % rel)

    def expected(self):
        """The sources the program must be built from: every .c below src
        and gen that git does not ignore."""
        out = set()
        for top in ("src", "gen"):
            for d, dirs, files in os.walk(os.path.join(self.src, top)):
                dirs[:] = [x for x in dirs if x != "skip"]
                out |= {os.path.relpath(os.path.join(d, f), self.src) for f in files
                        if f.endswith(".c")}
        return out

    def write_build(self, good):
        bad = "" if good else ' "src/[*.c"'
        if self.kind == "cmake":
            self.write("CMakeLists.txt", (
                "cmake_minimum_required(VERSION 3.20)\nproject(p C)\n"
                'include("%s/cmake/Trawl.cmake")\n'
                'trawl_glob(srcs PATTERNS "src/**/*.c"%s GITIGNORE CONFIGURE_DEPENDS)\n'
                'trawl_glob(gens PATTERNS "**/*.c" ROOT gen CONFIGURE_DEPENDS)\n'
                "add_executable(app main.c ${srcs} ${gens})\n") % (self.checkout, bad))
        elif self.kind == "meson":
            self.write("meson.build", (
                "project('p', 'c')\ntrawl = find_program('trawl')\n"
                "r = run_command(trawl, 'meson', 'src/**/*.c'%s, '--list', '-C', 'gen', '**/*.c',"
                " check : false)\n"
                "assert(r.returncode() == 0, r.stderr())\n"
                "lists = r.stdout().split('\\0')\n"
                "srcs = files(lists[0].split('\\n')) + files(lists[1].split('\\n'))\n"
                "executable('app', 'main.c', srcs)\n"
                "meson.add_postconf_script(trawl, 'meson', '--postconf')\n") % (
                    ", '" + bad.strip(' "') + "'" if bad else ""))
        else:
            self.write("WORKSPACE", (
                'local_repository(name = "trawl", path = "%s")\n'
                'load("@trawl//bazel:repositories.bzl", "trawl_repositories")\n'
                'trawl_repositories(trawl = "%s")\n') % (self.checkout, self.trawl))
            # Bazel's dialect has no '[': '**' inside a segment fails instead.
            self.write("BUILD", (
                'load("@trawl//bazel:glob.bzl", "trawl_glob")\n'
                'genrule(name = "list", srcs = trawl_glob(["src/**/*.c"%s], gitignore = True) + '
                'trawl_glob(["gen/**/*.c"]), outs = ["list.txt"], '
                'cmd = "for f in $(SRCS); do echo $$f; done > $@")\n') % (
                    "" if good else ', "src/a**/*.c"'))
            os.makedirs(os.path.join(self.src, "tools"), exist_ok=True)
            tool = os.path.join(self.src, "tools", "bazel")
            if not os.path.exists(tool):
                shutil.copy(os.path.join(self.checkout, "bazel", "tools_bazel"), tool)
                os.chmod(tool, 0o755)

    def bdir(self, b):
        return os.path.join(self.base, b)

    def configure(self, b="build1"):
        if self.kind == "cmake":
            return sh(["cmake", "-G", "Ninja", "-S", self.src, "-B", self.bdir(b),
                       "-DTRAWL_EXECUTABLE=" + self.trawl], self.base, self.env)
        if self.kind == "meson":
            return sh(["meson", "setup", self.bdir(b), self.src], self.base, self.env)
        return 0, ""

    def build(self, b="build1"):
        """(exit status, output, the sources the program was built from or
        None)."""
        if self.kind in ("cmake", "meson"):
            rc, out = sh(["ninja", "-C", self.bdir(b)], self.base, self.env)
            if rc != 0:
                return rc, out, None
            prog = os.path.join(self.bdir(b), "app")
            p = subprocess.run([prog], stdout=subprocess.PIPE, env=self.env)
            return rc, out, set(p.stdout.decode().split())
        ob = self.bdir(b)
        # The server starts with the first command and keeps its umask: 0,
        # so that a file trawl's state directory gets writable by others
        # shows (modes(), below).
        rc, out = sh(["bazel", "--output_base=" + ob, "build", "//:list"], self.src, self.env,
                     umask=0)
        if rc != 0:
            return rc, out, None
        with open(os.path.join(ob, "execroot", "__main__", "bazel-out", "k8-fastbuild", "bin",
                               "list.txt")) as f:
            return rc, out, set(f.read().split())

    def caches(self, b="build1"):
        if self.kind == "cmake":
            root = os.path.join(self.bdir(b), "CMakeFiles", "trawl")
        elif self.kind == "meson":
            root = os.path.join(self.bdir(b), "meson-private", "trawl")
        else:
            root = os.path.join(self.src, ".trawl")
        out = []
        for d, _, files in os.walk(root):
            for f in files:
                p = os.path.join(d, f)
                with open(p, "rb") as fh:
                    if fh.read(8) == b"TRAWLC\x1a\n":
                        out.append(p)
        return out

    def shutdown(self):
        if self.kind == "bazel":
            for b in self.builds:
                if os.path.isdir(self.bdir(b)):
                    subprocess.run(["bazel", "--output_base=" + self.bdir(b), "shutdown"],
                                   cwd=self.src, env=self.env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)


def other_version(trawl, out):
    """A copy of TRAWL that says it is another version: its caches are not
    this one's."""
    data = open(trawl, "rb").read()
    v = subprocess.run([trawl, "--version"], stdout=subprocess.PIPE).stdout.split()[-1]
    w = v[:-1] + (b"9" if v[-1:] != b"9" else b"8")
    assert data.count(b"\0" + v + b"\0") == 1, "the version string is not where it was"
    with open(out, "wb") as f:
        f.write(data.replace(b"\0" + v + b"\0", b"\0" + w + b"\0"))
    os.chmod(out, 0o755)


def judge(p, what, rc, out, got, cause_words):
    """A build after a fault: right, or stopped naming trawl and the cause."""
    want = p.expected()
    if rc == 0:
        return check("%s %s: the build regenerated (built from the %d sources of the tree)" % (
            p.kind, what, len(want)), got == want,
            "STALE: built from %r, the tree has %r" % (sorted(got or []), sorted(want)))
    # A line of the output (CMake's message may take several: the block
    # around it) naming trawl and the cause; the project's own directory
    # is named so as not to say "trawl".
    lines = out.splitlines()
    said = [" ".join(x.strip() for x in lines[max(0, i - 3):i + 4]) for i, ln in enumerate(lines)
            if any(w.lower() in ln.lower() for w in cause_words)]
    said = [x for x in said if "trawl" in x.lower()]
    named = bool(said)
    print("     says: %s" % (said[0][:300] if said else "(nothing names trawl and the cause)"))
    return check("%s %s: the build stopped (exit %d) with a message naming trawl and the cause"
                 % (p.kind, what, rc), named, out[-1500:])


def recovered(p, what):
    rc, out, got = p.build()
    check("%s %s, undone: the next build is right" % (p.kind, what),
          rc == 0 and got == p.expected(), "exit %d %r %r" % (rc, out[-800:], got))


def faults(kind, trawl, checkout, top):
    n = [0]

    def fresh_project():
        n[0] += 1
        p = Project(kind, os.path.join(top, "%s-%d" % (kind, n[0])), trawl, checkout)
        rc, out = p.configure()
        rc2, out2, got = p.build()
        ok = check("%s: configured and built from the tree's sources" % kind,
                   rc == 0 and rc2 == 0 and got == p.expected(), out + out2)
        return p if ok else None

    # trawl deleted, replaced by another version, replaced by one that fails.
    p = fresh_project()
    if p and kind == "bazel":
        # Under umask 0, nothing in trawl's state directory is writable by
        # others (the wrapper's files, the rule's, the indexer's, trawl's).
        state = os.path.join(p.src, ".trawl")
        loose = [f for f in os.listdir(state) if not os.path.islink(os.path.join(state, f))
                 and os.stat(os.path.join(state, f)).st_mode & 0o002]
        check("bazel: under umask 0, no file of .trawl/ is writable by others (%d files)" %
              len(os.listdir(state)), not loose, repr(loose))
    if p:
        saved = p.trawl + ".saved"
        shutil.copy(p.trawl, saved)
        p.add("src/new1.c")
        os.unlink(p.trawl)
        judge(p, "trawl deleted", *p.build(), ["not found", "no such file", "missing"])
        shutil.copy(saved, p.trawl)
        recovered(p, "trawl deleted")
        p.add("src/new2.c")
        other_version(saved, p.trawl)
        judge(p, "trawl replaced by another version", *p.build(),
              ["was written by trawl", "version"])
        shutil.copy(saved, p.trawl)
        recovered(p, "trawl replaced by another version")
        p.add("src/new3.c")
        with open(p.trawl, "w") as f:
            f.write("#!/bin/sh\necho 'this trawl is broken' >&2\nexit 70\n")
        judge(p, "trawl replaced by a program that fails", *p.build(),
              ["broken", "exit", "status", "failed"])
        shutil.copy(saved, p.trawl)
        recovered(p, "trawl replaced by a program that fails")
        p.shutdown()

    # The cache deleted, truncated, flipped.
    p = fresh_project()
    if p:
        for what in ("deleted", "truncated", "corrupted (bytes flipped)"):
            caches = p.caches()
            check("%s: the build has caches to break (%d)" % (kind, len(caches)), caches)
            p.add("src/c-%s.c" % what.split()[0])
            for c in caches:
                if what == "deleted":
                    os.unlink(c)
                elif what == "truncated":
                    os.truncate(c, os.path.getsize(c) // 2)
                else:
                    data = bytearray(open(c, "rb").read())
                    for i in range(60, len(data), 97):
                        data[i] ^= 0x5A
                    open(c, "wb").write(bytes(data))
            judge(p, "cache " + what, *p.build(), ["cache"])
            recovered(p, "cache " + what)
        p.shutdown()

    # A pattern that does not compile.
    p = fresh_project()
    if p:
        p.write_build(good=False)
        judge(p, "a pattern that does not compile", *p.build(),
              ["unclosed", "src/[*.c", "must be its own segment"])
        p.write_build(good=True)
        recovered(p, "a pattern that does not compile")
        p.shutdown()

    # A root that disappears.
    p = fresh_project()
    if p:
        shutil.rmtree(os.path.join(p.src, "gen"))
        judge(p, "the root gen/ removed", *p.build(), ["gen"])
        p.add("gen/g.c")
        recovered(p, "the root gen/ removed")
        p.shutdown()


def race(kind, trawl, checkout, top, rounds):
    p = Project(kind, os.path.join(top, "%s-race" % kind), trawl, checkout)
    results = {}

    def build(b):
        results[b] = p.build(b)

    for b in p.builds:
        rc, out = p.configure(b)
        check("%s race: %s configured" % (kind, b), rc == 0, out)
    threads = [threading.Thread(target=build, args=(b,)) for b in p.builds]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ok, counts = True, {"added": 0, "removed": 0}
    for r in range(rounds):
        if r % 3 == 2:
            victims = sorted(x for x in p.expected() if "/r" in x)
            if victims:
                os.unlink(os.path.join(p.src, victims[0]))
                counts["removed"] += 1
        else:
            p.add("src/race/r%d.c" % r if r % 2 else "gen/r%d.c" % r)
            counts["added"] += 1
        results.clear()
        threads = [threading.Thread(target=build, args=(b,)) for b in p.builds]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        want = p.expected()
        for b in p.builds:
            rc, out, got = results[b]
            if rc != 0 or got != want:
                ok = check("%s race round %d: %s built from the tree's sources" % (kind, r, b),
                           False, "exit %d got %r want %r %s" % (rc, got, want, out[-800:]))
    check("%s race: %d rounds (%d added, %d removed), both build directories built from the "
          "tree's sources every time" % (kind, rounds, counts["added"], counts["removed"]), ok)
    p.shutdown()


def main():
    args = sys.argv[1:]
    trawl, checkout = os.path.abspath(args[0]), os.path.abspath(args[1])
    rounds = 0
    if "--race" in args:
        i = args.index("--race")
        rounds = int(args[i + 1])
        del args[i:i + 2]
    kinds = [k for k in args[2:] if k in ("cmake", "meson", "bazel")] or ["cmake", "meson"]
    top = tempfile.mkdtemp(prefix="hardening-plugins-")
    try:
        for kind in kinds:
            faults(kind, trawl, checkout, top)
            if rounds:
                race(kind, trawl, checkout, top, rounds)
    finally:
        subprocess.run(["chmod", "-R", "u+w", top])
        shutil.rmtree(top, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
