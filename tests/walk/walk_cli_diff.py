#!/usr/bin/env python3
"""Differential test of `trawl PATTERN...` against find(1) and git ls-files.

    walk_cli_diff.py TRAWL_EXE [--seed N] [--trees T] [--keep]

For every seed, T trees are generated in a temporary directory from names
that trouble a walker or a printer: spaces, newlines, tabs, ';', '[', quotes,
backslashes, glob metacharacters, leading dots and bytes that are not UTF-8;
with links to files, to directories, to an ancestor (a loop when followed)
and to nothing. Each query below is answered by trawl (`-0`, the sorted
default, serial and with -j4) and by the real tool, and the two byte-string
lists must be equal, order included (trawl sorts bytewise; the tool's answer
is sorted here):

  find        the query spelled with find's own primaries: hidden entries
              pruned with `-name '.*' -prune` unless -H, -type, -maxdepth,
              -L for --follow, -prune for excludes, -name/-path for patterns
  git         `git ls-files -o -z` (every untracked file, hidden ones
              included, .git left out) against `trawl -H -x .git '**'`, and
              `git ls-files -o -z ':(glob)PAT'` against `trawl --dialect git`;
              then a third of the tree committed and a .gitignore written
              (build/, *.md, *.h), `git ls-files -co --exclude-standard -z`
              against `trawl -H '**'`: tracked files are never ignored

Finally the lines format is decoded (docs/cli.md's rule) and must give the
same list as -0: no name forges a second entry.

Exits 0 when every comparison agrees, 1 on a mismatch (each one printed),
77 (skipped) when neither find nor git is installed.
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

DIR_NAMES = [b"src", b"lib", b"test", b"node_modules", b"build", b".hidden", b".github",
             b"a b", b"semi;colon", b"new\nline", b"br[ack", b"quo'te", b'dq"uote',
             b"\xff\xfe", b"caf\xc3\xa9", b"{x,y}", b"back\\slash", b"-dash", b"st*r",
             b"q?", b"docs"]
FILE_BASES = [b"main", b"util", b"a", b"b b", b"x;y", b"n\nl", b"[1]", b"it's", b'"q"',
              b"\xe9t\xe9", b"\xc3\xa9t\xc3\xa9", b".env", b".hidden", b"README", b"st*r",
              b"c\\d", b"{a,b}", b"-opt", b"  lead", b"tab\there", b"cr\rx"]
EXTS = [b".c", b".h", b".ts", b".md", b"", b".txt"]
# Top-level directories every tree has, with names find's -path can spell.
FIXED_TOP = [b"src", b"build", b"docs"]


def generate(rng, root, depth=0):
    """A tree below ROOT (bytes); the root 8 to 12 directories wide."""
    used = set()
    for _ in range(rng.randrange(6)):
        name = rng.choice(FILE_BASES) + rng.choice(EXTS)
        if name not in used:
            used.add(name)
            with open(os.path.join(root, name), "wb") as f:
                f.write(b"x")
    n_dirs = 8 + rng.randrange(5) if depth == 0 else rng.randrange(max(0, 4 - depth))
    made = []
    names = list(FIXED_TOP) if depth == 0 else []
    names += [rng.choice(DIR_NAMES) for _ in range(n_dirs)]
    for name in names:
        if name in used:
            continue
        used.add(name)
        os.mkdir(os.path.join(root, name))
        made.append(name)
    if rng.randrange(4) == 0 and b"ln-file.c" not in used:
        used.add(b"ln-file.c")
        os.symlink(rng.choice(FILE_BASES) + b".c", os.path.join(root, b"ln-file.c"))
    if made and rng.randrange(4) == 0 and b"ln-dir" not in used:
        used.add(b"ln-dir")
        os.symlink(rng.choice(made), os.path.join(root, b"ln-dir"))
    if depth == 1 and root.endswith(b"/src") and rng.randrange(2) == 0:
        used.add(b"ln-root")  # back to the tree's root: a loop when followed
        os.symlink(b"..", os.path.join(root, b"ln-root"))
    if depth > 0 and rng.randrange(8) == 0 and b"ln-up" not in used:
        used.add(b"ln-up")
        os.symlink(b"..", os.path.join(root, b"ln-up"))
    if rng.randrange(8) == 0 and b"dangling.c" not in used:
        used.add(b"dangling.c")
        os.symlink(b"nowhere", os.path.join(root, b"dangling.c"))
    for name in made:
        generate(rng, os.path.join(root, name), depth + 1)


def split0(data):
    return data.split(b"\0")[:-1] if data else []


ESC = {ord('a'): 7, ord('b'): 8, ord('t'): 9, ord('n'): 10, ord('v'): 11, ord('f'): 12,
       ord('r'): 13, ord('"'): 34, ord('\\'): 92}


def unquote(line):
    """docs/cli.md: a line starting with '"' is a C string (git's quoting)."""
    if not line.startswith(b'"'):
        return line
    body, out, i = line[1:-1], bytearray(), 0
    while i < len(body):
        if body[i] != 0x5c:
            out.append(body[i])
            i += 1
        elif body[i + 1] in b"01234567":
            out.append(int(body[i + 1:i + 4], 8))
            i += 4
        else:
            out.append(ESC[body[i + 1]])
            i += 2
    return bytes(out)


class Checker:
    def __init__(self, trawl, root, label):
        self.trawl = trawl
        self.root = root
        self.label = label
        self.failures = 0
        self.comparisons = 0
        self.env = None

    def run_trawl(self, args, fmt="-0", ignore=False):
        cmd = [self.trawl, "-C", self.root, fmt] + ([] if ignore else ["-I"]) + args
        # With the ignore files, git's configuration is the one git had.
        p = subprocess.run(cmd, capture_output=True, env=self.env if ignore else None)
        return p, cmd

    def compare(self, what, trawl_args, expected, allow_exit=(0,), ignore=False):
        """IGNORE: with the ignore files (else -I)."""
        expected = sorted(expected)
        for jobs in ("-j1", "-j4"):
            p, cmd = self.run_trawl([jobs] + trawl_args, ignore=ignore)
            self.comparisons += 1
            got = split0(p.stdout)
            if p.returncode not in allow_exit or got != expected:
                self.failures += 1
                gs, es = set(got), set(expected)
                print(f"MISMATCH {self.label}: {what}\n  trawl: {cmd!r} exit {p.returncode}"
                      f"\n  stderr: {p.stderr[:400]!r}"
                      f"\n  only trawl: {sorted(gs - es)[:10]!r}"
                      f"\n  only {what.split()[0]}: {sorted(es - gs)[:10]!r}"
                      f"\n  order/duplicates differ: {gs == es}", file=sys.stdout)

    def check_lines(self, trawl_args):
        p0, _ = self.run_trawl(trawl_args)
        pl, cmd = self.run_trawl(trawl_args, fmt="--format=lines")
        self.comparisons += 1
        lines = pl.stdout.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        decoded = [unquote(line) for line in lines]
        if decoded != split0(p0.stdout):
            self.failures += 1
            print(f"MISMATCH {self.label}: lines format decodes to another list than -0"
                  f"\n  {cmd!r}", file=sys.stdout)


def find_list(root, args, follow=False):
    """Paths find prints (-print0), relative, without './'."""
    cmd = ["find"] + (["-L"] if follow else []) + ["."] + args
    p = subprocess.run(cmd, cwd=root, capture_output=True)
    # find -L exits 1 after reporting a loop; the listing is still complete.
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{cmd}: {p.stderr!r}")
    return [x[2:] if x.startswith(b"./") else x for x in split0(p.stdout)]


NOT_HIDDEN = ["-mindepth", "1", "-name", ".*", "-prune", "-o"]


def find_checks(c, root):
    c.compare("find: everything, hidden too", ["-H", "**"],
              find_list(root, ["-mindepth", "1", "!", "-type", "d", "-print0"]))
    c.compare("find: everything visible", ["**"],
              find_list(root, NOT_HIDDEN + ["!", "-type", "d", "-print0"]))
    c.compare("find: directories", ["-t", "d", "**"],
              find_list(root, NOT_HIDDEN + ["-type", "d", "-print0"]))
    c.compare("find: links, hidden too", ["-H", "-t", "l", "**"],
              find_list(root, ["-mindepth", "1", "-type", "l", "-print0"]))
    c.compare("find: two levels, files and directories", ["-H", "-d", "2", "-t", "f,d", "**"],
              find_list(root, ["-mindepth", "1", "-maxdepth", "2", "-print0"]))
    c.compare("find: *.c anywhere", ["**/*.c"],
              find_list(root, NOT_HIDDEN + ["!", "-type", "d", "-name", "*.c", "-print0"]))
    c.compare("find: a union of patterns", ["**/*.c", "src/**", "**/*.h", "docs/*"],
              find_list(root, NOT_HIDDEN + ["!", "-type", "d", "(", "-name", "*.c", "-o",
                                            "-path", "./src/*", "-o", "-name", "*.h", "-o",
                                            "(", "-path", "./docs/*", "!", "-path",
                                            "./docs/*/*", ")", ")", "-print0"]))
    c.compare("find: excludes", ["-H", "-x", "build/**", "-x", "**/node_modules", "**"],
              find_list(root, ["-mindepth", "1", "(", "-path", "./build", "-o", "-name",
                               "node_modules", ")", "-prune", "-o", "!", "-type", "d",
                               "-print0"]))
    c.compare("find: literal roots", ["{src,docs}/**"],
              find_list(root, NOT_HIDDEN + ["!", "-type", "d", "(", "-path", "./src/*", "-o",
                                            "-path", "./docs/*", ")", "-print0"]))
    c.compare("find -L: followed, hidden too", ["-H", "-L", "**"],
              find_list(root, ["-mindepth", "1", "!", "-type", "d", "-print0"], follow=True))
    c.compare("find -L: followed directories", ["-L", "-t", "d", "**"],
              find_list(root, NOT_HIDDEN + ["-type", "d", "-print0"], follow=True))
    # A literal root changes where the walk starts, not what it finds: the
    # tree's root is an ancestor of src/ln-root's target whatever the pattern.
    everything = find_list(root, ["-mindepth", "1", "!", "-type", "d", "-print0"], follow=True)
    c.compare("find -L: followed below a literal root", ["-H", "-L", "src/**"],
              [p for p in everything if p.startswith(b"src/")])


def git_checks(c, root, env):
    subprocess.run(["git", "init", "-q", root], check=True, env=env, capture_output=True)

    def ls(*pathspec):
        p = subprocess.run(["git", "-C", root, "ls-files", "-o", "-z", "--"] + list(pathspec),
                           check=True, env=env, capture_output=True)
        return split0(p.stdout)

    c.compare("git ls-files -o", ["-H", "-x", ".git", "**"], ls())
    for pat in ["**/*.c", "src/**", "*/*.h", "**/.*", "{src,docs}/**/*.c"]:
        if pat.startswith("{"):  # git has no braces: the union of the two
            want = ls(":(glob)src/**/*.c", ":(glob)docs/**/*.c")
        else:
            want = ls(":(glob)" + pat)
        c.compare(f"git ls-files -o ':(glob){pat}'",
                  ["--dialect", "git", "-x", ".git", pat] if not pat.startswith("{")
                  else ["-H", "-x", ".git", pat], want)
    # A third of the tree committed, then a .gitignore that matches some of
    # it: git's rules leave tracked files alone (issue 31). Every tree has
    # a tracked file in the ignored build/ and a tracked *.md, whatever the
    # seed drew.
    broot = os.fsencode(root)
    for rel in (b"build/kept.c", b"docs/kept.md"):
        with open(os.path.join(broot, rel), "wb") as f:
            f.write(b"x")
    rng = random.Random(broot)
    picked = [p for p in ls() if rng.randrange(3) == 0] + [b"build/kept.c", b"docs/kept.md"]
    genv = dict(env, GIT_LITERAL_PATHSPECS="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    subprocess.run(["git", "-C", root, "add", "-f", "--pathspec-from-file=-",
                    "--pathspec-file-nul"], input=b"".join(p + b"\0" for p in set(picked)),
                   check=True, env=genv, capture_output=True)
    subprocess.run(["git", "-C", root, "commit", "-qm", "a third"], check=True, env=genv,
                   capture_output=True)
    with open(os.path.join(broot, b".gitignore"), "wb") as f:
        f.write(b"build/\n*.md\n*.h\n")
    p = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard", "-z"],
                       check=True, env=env, capture_output=True)
    c.env = env
    c.compare("git ls-files -co --exclude-standard (a third committed, ignored files among it)",
              ["-H", "**"], sorted(set(split0(p.stdout))), ignore=True)
    os.unlink(os.path.join(broot, b".gitignore"))
    shutil.rmtree(os.path.join(root, ".git"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trawl")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("TRAWL_WALK_DIFF_SEED", 1)))
    ap.add_argument("--trees", type=int, default=4)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()

    have_find = shutil.which("find") is not None
    have_git = shutil.which("git") is not None
    if not have_find and not have_git:
        print("SKIP: neither find nor git is installed")
        return 77
    if not have_git:
        print("NOTE: git is not installed: only find is compared")

    tmp = tempfile.mkdtemp(prefix="trawl-walk-diff-")
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1", HOME=tmp,
               LC_ALL="C")
    failures = comparisons = 0
    try:
        for t in range(args.trees):
            seed = args.seed * 1000 + t
            rng = random.Random(seed)
            root = os.path.join(tmp, f"tree{t}")
            os.mkdir(root)
            generate(rng, os.fsencode(root))
            c = Checker(args.trawl, root, f"seed {seed} ({root})")
            if have_find:
                find_checks(c, root)
            if have_git:
                git_checks(c, root, env)
            c.check_lines(["-H", "**"])
            c.check_lines(["-H", "-t", "f,d,l", "**"])
            failures += c.failures
            comparisons += c.comparisons
    finally:
        if args.keep:
            print(f"trees kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"{comparisons} comparisons, {failures} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
