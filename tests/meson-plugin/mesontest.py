"""What the Meson plugin's tests share: checks that record failures, an
environment of their own, and projects written into a temporary directory,
configured and built by the real meson and ninja."""
import os
import shutil
import subprocess
import sys
import time

FAILURES = []


def check(what, got, want):
    if got != want:
        FAILURES.append(what)
        print("FAIL %s\n  got:  %r\n  want: %r" % (what, got, want))
    else:
        print("ok   %s" % what)


def check_in(what, needle, haystack):
    """NEEDLE occurs in HAYSTACK (the output of a run, shown when not)."""
    if needle in haystack:
        print("ok   %s" % what)
    else:
        FAILURES.append(what)
        print("FAIL %s\n  %r is not in:\n%s" % (what, needle, indent(haystack)))


def check_not_in(what, needle, haystack):
    if needle not in haystack:
        print("ok   %s" % what)
    else:
        FAILURES.append(what)
        print("FAIL %s\n  %r is in:\n%s" % (what, needle, indent(haystack)))


def indent(text):
    return "\n".join("    " + line for line in text.splitlines()[-40:])


def finish():
    if FAILURES:
        print("%d failed: %s" % (len(FAILURES), "; ".join(FAILURES)))
        sys.exit(1)
    print("all passed")


def environment(tmp, trawl=None, bindir="bin"):
    """An environment for meson, ninja and trawl: git's configuration files
    and HOME inside TMP (the caches record them), a UTF-8 locale (Meson
    decodes a command's output with the locale's encoding), and, when
    TRAWL is given, a PATH whose first directory, TMP/BINDIR, holds only
    `trawl`."""
    home = os.path.join(tmp, "home")
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"),
               GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.path.join(home, "gitconfig"),
               LC_ALL="C.UTF-8", LANG="C.UTF-8")
    for name in ("MESON_SOURCE_ROOT", "MESON_BUILD_ROOT", "MESON_SUBDIR", "MESONINTROSPECT"):
        env.pop(name, None)
    path = [d for d in env.get("PATH", "/usr/bin:/bin").split(os.pathsep)
            if not os.path.exists(os.path.join(d, "trawl"))]
    if trawl:
        bindir = os.path.join(tmp, bindir)
        os.makedirs(bindir, exist_ok=True)
        link = os.path.join(bindir, "trawl")
        if not os.path.lexists(link):
            os.symlink(os.path.abspath(trawl), link)
        path.insert(0, bindir)
    env["PATH"] = os.pathsep.join(path)
    return env


def run(args, cwd=None, env=None, text=True):
    """(exit status, stdout, stderr) of ARGS; with TEXT, decoded as UTF-8
    with surrogateescape."""
    p = subprocess.run(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if not text:
        return p.returncode, p.stdout, p.stderr
    return (p.returncode, p.stdout.decode("utf-8", "surrogateescape"),
            p.stderr.decode("utf-8", "surrogateescape"))


# A source file that says it is linked in: its constructor prints its
# name, so running the program lists exactly the files that were compiled
# and linked, in whatever order.
SOURCE = '#include <stdio.h>\n__attribute__((constructor)) static void hello(void) { puts("%s"); }\n'
MAIN = "int main(void) { return 0; }\n"


def settle():
    """Let the directories just changed age past trawl's racy window (two
    ticks of the kernel's coarse clock), so that a cache trusts them."""
    time.sleep(0.05)


class Project:
    """A Meson project in ROOT, built in build directories below it (or
    anywhere)."""

    def __init__(self, root, env, git=True):
        self.root = root
        self.env = env
        os.makedirs(root, exist_ok=True)
        if git:
            run(["git", "init", "-q", root], env=env)

    def path(self, rel):
        if isinstance(rel, bytes):
            return os.path.join(os.fsencode(self.root), rel)
        return os.path.join(self.root, rel)

    def write(self, rel, text=None):
        """Write REL (bytes or str; default: a SOURCE naming it)."""
        p = os.fsencode(self.path(rel))
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if text is None:
            text = SOURCE % os.fsdecode(rel).encode("ascii", "backslashreplace").decode()
        with open(p, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode())

    def remove(self, rel):
        os.remove(os.fsencode(self.path(rel)))

    def setup(self, build="b", *extra):
        return run(["meson", "setup", *extra, build], cwd=self.root, env=self.env)

    def run_meson(self, args, where="."):
        """(exit status, stdout, stderr) of meson ARGS in the directory
        WHERE (relative to the root)."""
        return run(["meson"] + args, cwd=self.path(where), env=self.env)

    def ninja(self, build="b"):
        """(exit status, everything ninja printed)."""
        rc, out, err = run(["ninja", "-C", build], cwd=self.root, env=self.env)
        return rc, out + err

    def watched(self, build="b"):
        """The paths a no-op ninja run stats to decide whether the check
        runs: the check's depfile, which Ninja keeps in .ninja_deps."""
        rc, out, err = run(["ninja", "-C", build, "-t", "deps", "meson-private/trawl/checked"],
                           cwd=self.root, env=self.env)
        return [l.strip() for l in out.splitlines() if l.startswith("    ")]

    def program(self, build="b", name="prog"):
        """The sorted lines the program prints: the files linked into it."""
        rc, out, err = run([os.path.join(self.root, build, name)], env=self.env)
        return sorted(out.splitlines()) if rc == 0 else ("exit %d" % rc, err)

    def mtime(self, rel):
        return os.stat(self.path(rel)).st_mtime_ns

    def remove_tree(self):
        shutil.rmtree(self.root, ignore_errors=True)


def git_repository(dest, files, env):
    """A git repository in DEST holding FILES ({relative path: str, bytes,
    or (bytes, mode)}) in one commit: what a wrap-git's url names."""
    for rel, data in files.items():
        path = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        mode = None
        if isinstance(data, tuple):
            data, mode = data
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        if mode is not None:
            os.chmod(path, mode)
    git = ["git", "-C", dest, "-c", "user.name=trawl tests", "-c", "user.email=tests@invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "import"]):
        rc, out, err = run(git + args, env=env)
        assert rc == 0, (args, out, err)
    return dest


def trawl_sources(source_root, env):
    """trawl's own files, as a clone of it holds them ({relative path:
    (bytes, mode)}): what git lists in SOURCE_ROOT (tracked, and new files not
    ignored), or, outside a work tree, every file but build directories."""
    rc, out, _ = run(["git", "-C", source_root, "ls-files", "-z", "--cached", "--others",
                      "--exclude-standard"], env=env, text=False)
    if rc == 0:
        names = [os.fsdecode(n) for n in out.split(b"\0") if n]
    else:
        names = []
        for top, dirs, files in os.walk(source_root):
            rel = os.path.relpath(top, source_root)
            dirs[:] = [d for d in dirs if not (rel == "." and (d.startswith("build") or
                                                                 d == ".git"))]
            names += [os.path.normpath(os.path.join(rel, f)) for f in files]
    sources = {}
    for name in names:
        path = os.path.join(source_root, name)
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, "rb") as f:
                sources[name] = (f.read(), os.stat(path).st_mode & 0o777)
    return sources


REGENERATED = "Regenerating build files"
NO_WORK = "ninja: no work to do."
RECHECK = "Re-checking the file lists found by trawl"
