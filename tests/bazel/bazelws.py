"""Shared helpers of the Bazel tests: a workspace that uses trawl_glob(),
real Bazel run on it, and Starlark written from Python.

Every test gets its own workspace directory and output base under the
directory it is given (the meson build directory's tests/bazel/), and
passes --output_user_root so that all of them share one user root. Debian's
Bazel has nothing to extract (its install base is /usr/share/bazel), so an
output base costs only the repository rules: with the meson-built trawl
given to trawl_repositories(), that is asking it `trawl bazel-index --id`
(a fraction of a second).
"""
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(HERE))


def star(b):
    """A Starlark string literal for the bytes b, written independently of
    the indexer (plugins/bazel/cmd-bazel-index.c): Bazel reads a .bzl file as Latin-1, so byte N is the
    character N; everything outside printable ASCII is an octal escape."""
    out = ['"']
    for c in b:
        if c in (0x22, 0x5C):
            out.append("\\" + chr(c))
        elif 0x20 <= c < 0x7F:
            out.append(chr(c))
        else:
            out.append("\\%03o" % c)
    out.append('"')
    return "".join(out)


def star_list(items):
    return "[" + ", ".join(star(i) for i in items) + "]"


class Workspace:
    """A workspace directory with trawl set up as docs/bazel.md says."""

    def __init__(self, base, name, trawl=None, fresh=True):
        self.base = os.path.abspath(base)
        self.root = os.path.join(self.base, name, "ws")
        self.output_base = os.path.join(self.base, name, "ob")
        self.user_root = os.path.join(self.base, "user-root")
        if fresh and os.path.exists(os.path.join(self.base, name)):
            self.shutdown()
            subprocess.run(["chmod", "-R", "u+w", os.path.join(self.base, name)])
            shutil.rmtree(os.path.join(self.base, name))
        os.makedirs(self.root, exist_ok=True)
        os.makedirs(self.user_root, exist_ok=True)
        args = "" if trawl is None else "trawl = %s" % star(os.fsencode(trawl))
        self.write("WORKSPACE", (
            'local_repository(name = "trawl", path = %s)\n'
            'load("@trawl//bazel:repositories.bzl", "trawl_repositories")\n'
            "trawl_repositories(%s)\n" % (star(os.fsencode(CHECKOUT)), args)).encode())

    def path(self, rel):
        return os.path.join(self.root, rel)

    def write(self, rel, data):
        p = os.path.join(os.fsencode(self.root), rel if isinstance(rel, bytes) else os.fsencode(rel))
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)

    def startup(self, batch):
        args = ["--output_user_root=" + self.user_root, "--output_base=" + self.output_base]
        if batch:
            args.append("--batch")
        return args

    def bazel(self, args, batch=True, binary="bazel", env=None, check=None):
        """Runs BINARY STARTUP ARGS in the workspace; returns the
        CompletedProcess (stdout and stderr as bytes)."""
        cmd = [binary] + self.startup(batch) + args
        e = dict(os.environ)
        e.pop("BAZEL_REAL", None)
        e.pop("TRAWL_CHECKED", None)
        if env:
            e.update(env)
        p = subprocess.run(cmd, cwd=self.root, env=e, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        if check is not None and p.returncode != check:
            sys.stderr.write(p.stderr.decode("latin-1"))
            raise SystemExit("FAIL: %s exited %d, expected %d" % (" ".join(cmd), p.returncode, check))
        return p

    def shutdown(self):
        if os.path.isdir(self.output_base):
            subprocess.run(["bazel"] + self.startup(False) + ["shutdown"], cwd=self.root
                           if os.path.isdir(self.root) else "/", stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)


DEBUG_RE = re.compile(rb"^DEBUG: (.*?):\d+:\d+: (.*)$")


def debug_lines(stderr, tag):
    """The print() lines of the run that start with TAG (bytes), as they
    were printed (Bazel prints a string's characters as Latin-1 bytes)."""
    out = []
    for line in stderr.split(b"\n"):
        m = DEBUG_RE.match(line)
        if m and m.group(2).startswith(tag):
            out.append(m.group(2)[len(tag):].strip())
    return out


def error_blocks(stderr, root):
    """The errors of a --keep_going run, by package: {package: text}. A
    block starts at a line 'ERROR: ...' and runs to the next line that starts
    with 'ERROR:', 'DEBUG:', 'INFO:' or 'WARNING:'; its package is the first
    ROOT/PKG/BUILD it names (a traceback's 'File "..."' line)."""
    blocks = {}
    pkg_re = re.compile(re.escape(os.fsencode(root)) + rb"/(.*?)/?BUILD(?:\.bazel)?[\":]")
    cur = []
    def flush():
        if cur and cur[0].startswith(b"ERROR:"):
            for line in cur:
                m = pkg_re.search(line)
                if m:
                    pkg = m.group(1).decode("latin-1")
                    blocks[pkg] = blocks.get(pkg, "") + b"\n".join(cur).decode("latin-1") + "\n"
                    break
    for line in stderr.split(b"\n"):
        if line.startswith((b"ERROR:", b"DEBUG:", b"INFO:", b"WARNING:", b"Loading")):
            flush()
            cur = [line]
        else:
            cur.append(line)
    flush()
    return blocks


# A .bzl every test package loads: native glob() against trawl_glob() on the
# same arguments, in the same package. A case prints one line
#   TRAWLCASE <ok|DIFF> <native count> <trawl count> <repr of the id>
# and, when the answers differ, the paths only one of them has; the test
# fails on any DIFF. With gitignore, the expected answer is native's less the
# paths the test found git to ignore (ignored.bzl: IGNORED[package], relative
# to the package; a package reached through a link has its own entry).
CHECK_BZL = r'''
load("@trawl//bazel:glob.bzl", "trawl_glob")
load("//:ignored.bzl", "IGNORED")

def _show(xs):
    return ", ".join([repr(x) for x in xs[:8]]) + (" ..." if len(xs) > 8 else "")

def check(id, include, exclude = [], exclude_directories = 1, gitignore = False):
    id = "%s@%s" % (id, native.package_name())
    ignored = IGNORED.get(native.package_name(), {})
    n = native.glob(include, exclude = exclude, exclude_directories = exclude_directories)
    # glob() writes ':' before a path starting with '@'; IGNORED has the
    # path as it is on disk.
    want = [p for p in n if (p[1:] if p.startswith(":@") else p) not in ignored] if gitignore else n
    t = trawl_glob(include, exclude = exclude, exclude_directories = exclude_directories,
                   gitignore = gitignore)
    if t == want:
        print("TRAWLCASE ok %d %d %r" % (len(n), len(t), id))
    else:
        only_w = [p for p in want if p not in t]
        only_t = [p for p in t if p not in want]
        print("TRAWLCASE DIFF %d %d %r" % (len(n), len(t), id))
        print("TRAWLDIFF %s include=%r exclude=%r exclude_directories=%d gitignore=%r: only expected: [%s]; only trawl_glob: [%s]; order same: %r" % (
            id, include, exclude, exclude_directories, gitignore, _show(only_w), _show(only_t),
            sorted(t) == sorted(want)))
'''
