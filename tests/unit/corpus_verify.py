#!/usr/bin/env python3
"""Check the corpus's expectations against the real tools, not against trawl.

    corpus_verify.py CORPUS_DIR [--verbose]

Every match row whose answer a real tool can give is replayed through it:

  git rows, and trawl rows (docs/patterns.md: the trawl dialect agrees with git on
  every brace-free pattern both accept; under --icase only when the pattern
  has no class and no escape, where trawl folds on purpose):
      files are created in a scratch repository and listed with
      `git ls-files -o -z ':(glob)PAT'` (':(glob,icase)PAT'), with
      GIT_CONFIG_GLOBAL=/dev/null; a trawl pattern with braces is expanded
      first (expand_braces below, the shell's rule) and a path is selected
      when git selects it for any alternative;
  cmake rows (without icase):
      files are created in a scratch directory and listed with
      `file(GLOB res LIST_DIRECTORIES false RELATIVE dir "dir/PAT")`;
  bazel rows (without icase):
      each row's path is created as a file in a package of its own and as a
      directory in another, in one scratch workspace, and `glob([PAT])` (with
      exclude_directories = 0 for the directory) is asked in one `bazel
      --batch query` (Bazel 4.2.3, Debian's); a row typed `file` or `dir` is
      checked against that package alone, an untyped row's path is selected
      when either selects it. A pattern Bazel rejects fails its package
      only, and its rows are counted as skipped with the reason.

Rows a tool cannot answer are counted as skipped, with the reason: a path
that cannot be a file (NUL, empty, '.', '..' or '.git' components), and the
pathspec rules git applies outside wildmatch (a path equal to the pattern
text, a path below a pattern naming a leading directory, patterns git
normalises such as 'a//b', and the literal-prefix split: git compares the
bytes before the first wildcard, then runs wildmatch on the rest, so in
':(glob)a**' the '**' counts as a whole component and matches 'a/b');
docs/patterns.md keeps those out of the dialect.

Exit status: 0 all checked rows agree, 1 a row disagrees, 77 (skip) when
neither git nor cmake nor bazel is installed (the rows of a missing tool are
counted as skipped). Standard library only.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, OrderedDict
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trawl_corpus  # noqa: E402

SKIP = 77


def components(path):
    return path.split(b"/")


def file_path_problem(path):
    """Why PATH cannot be created as a file in a scratch tree, or None."""
    if not path:
        return "empty path"
    if b"\0" in path:
        return "NUL in path"
    if path.startswith(b"/"):
        return "absolute path"
    for c in components(path):
        if c in (b"", b".", b".."):
            return "path not normalised"
        if c.lower() == b".git":
            return ".git component"
    return None


def fold(b, icase):
    return b.lower() if icase else b


def git_pathspec_problem(row):
    """Why git's pathspec layer (not wildmatch) might decide ROW, or None."""
    pat, path = row.pattern, row.args[0]
    if b"\0" in pat:
        return "NUL in pattern"
    if not pat:
        return "empty pathspec"
    comps = components(pat)
    if pat.startswith(b"/") or any(c in (b"", b".", b"..") for c in comps[:-1]) \
            or comps[-1] in (b".", b".."):
        return "pathspec normalised by git"
    if pat.endswith(b"/"):
        return "pathspec directory match"
    wild = any(c in pat for c in (b"*", b"?", b"[", b"\\"))
    if wild and fold(path, row.icase) == fold(pat, row.icase):
        return "pathspec exact-text match"  # wildmatch alone might say no
    if fold(path, row.icase).startswith(fold(pat, row.icase) + b"/"):
        return "pathspec leading-directory match"
    n = 0
    while n < len(pat) and pat[n:n + 1] not in (b"*", b"?", b"[", b"\\"):
        n += 1
    if 0 < n < len(pat) and pat[n - 1:n] != b"/" and pat[n:n + 2] == b"**":
        return "pathspec literal-prefix split before '**'"
    return None


def class_end(pat, i):
    """Offset just past the bracket expression opening at PAT[i] (wildmatch's
    reading), or None when it is unterminated."""
    j = i + 1
    if j < len(pat) and pat[j:j + 1] in (b"!", b"^"):
        j += 1
    first = True
    while j < len(pat):
        c = pat[j:j + 1]
        if c == b"]" and not first:
            return j + 1
        first = False
        if c == b"\\":
            j += 2
        elif pat[j:j + 2] == b"[:":
            k = pat.find(b"]", j + 2)
            if k < 0:
                return None
            j = k + 1 if k >= j + 3 and pat[k - 1:k] == b":" else j + 1
        else:
            j += 1
    return None


def expand_braces(pat):
    """The brace-free alternatives of a trawl pattern, like the shell expands
    {a,b}: nestable, empty alternatives allowed; escapes and classes are
    copied as they are. None when the braces do not balance."""
    def seq(i, depth):
        # Alternatives from I up to a ',' or '}' at this depth.
        alts = [b""]
        while i < len(pat):
            c = pat[i:i + 1]
            if c in (b",", b"}") and depth > 0:
                return alts, i
            if c == b"\\":
                piece, i = pat[i:i + 2], i + 2
                alts = [a + piece for a in alts]
            elif c == b"[" and class_end(pat, i):
                end = class_end(pat, i)
                alts = [a + pat[i:end] for a in alts]
                i = end
            elif c == b"{":
                choices = []
                i += 1
                while True:
                    sub, i = seq(i, depth + 1)
                    if i >= len(pat):
                        raise ValueError("unclosed brace")
                    choices += sub
                    i += 1
                    if pat[i - 1:i] == b"}":
                        break
                alts = [a + ch for a in alts for ch in choices]
            elif c == b"}":
                raise ValueError("unmatched brace")
            else:
                alts = [a + c for a in alts]
                i += 1
        if depth > 0:
            raise ValueError("unclosed brace")
        return alts, i
    try:
        return seq(0, 0)[0]
    except ValueError:
        return None


def cmake_problem(row):
    pat, path = row.pattern, row.args[0]
    if row.icase:
        return "icase (CMake on Linux is case-sensitive)"
    if b";" in pat or b";" in path or b"\\" in path:
        return "';' or '\\' in a CMake path"
    if b"\0" in pat or pat.startswith(b"/"):
        return "pattern not expressible"
    return None


def partition(paths):
    """Split PATHS into groups in which no path is a directory of another."""
    groups = []
    for p in paths:
        for g in groups:
            if all(not (q.startswith(p + b"/") or p.startswith(q + b"/"))
                   for q in g):
                g.append(p)
                break
        else:
            groups.append([p])
    return groups


def make_tree(root, paths):
    for p in paths:
        full = os.path.join(root, p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb"):
            pass


def starlark_bytes(b):
    """A Starlark string literal whose text is the bytes B (Bazel reads a BUILD
    file as Latin-1: one character per byte)."""
    out = []
    for c in b:
        ch = chr(c)
        if ch in "\\\"":
            out.append("\\" + ch)
        elif 0x20 <= c < 0x7f:
            out.append(ch)
        else:
            out.append("\\%03o" % c)
    return '"' + "".join(out) + '"'


def bazel_problem(row):
    pat, path = row.pattern, row.args[0]
    if row.icase:
        return "icase (glob() has none)"
    if not pat or b"\0" in pat:
        return "pattern not expressible"
    if any(c in (b"BUILD", b"BUILD.bazel", b"WORKSPACE") for c in components(path)):
        return "path names a BUILD or WORKSPACE file"
    return None


class Row1:
    """ROW with its pattern replaced by one brace alternative."""

    def __init__(self, pattern, row):
        self.pattern = pattern
        self.args = row.args
        self.icase = row.icase


class Checker:
    def __init__(self, verbose):
        self.verbose = verbose
        self.have_git = shutil.which("git") is not None
        self.have_cmake = shutil.which("cmake") is not None
        self.have_bazel = shutil.which("bazel") is not None
        self.checked = Counter()
        self.skipped = Counter()
        self.failures = []
        self.env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null",
                        GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")
        self.tmp = tempfile.mkdtemp(prefix="trawl-corpus-verify-")
        self.n = 0

    def scratch(self):
        self.n += 1
        d = os.path.join(self.tmp, str(self.n))
        os.mkdir(d)
        return os.fsencode(d)

    def git_tree(self, paths):
        root = self.scratch()
        subprocess.run(["git", "init", "-q", root], check=True, env=self.env)
        make_tree(root, paths)
        return root

    def git_select(self, root, pattern, icase):
        magic = b":(glob,icase)" if icase else b":(glob)"
        out = subprocess.run(["git", "ls-files", "-o", "-z", b"--", magic + pattern],
                             cwd=root, env=self.env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        if out.returncode != 0:
            raise RuntimeError("git failed: %r" % out.stderr)
        return set(x for x in out.stdout.split(b"\0") if x)

    def git_select_many(self, root, keys):
        """git ls-files takes one pathspec per run: run them side by side.
        A key is (alternatives, icase); its selection is their union."""
        jobs = [(alt, icase) for alts, icase in keys for alt in alts]
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
            found = dict(zip(jobs, pool.map(lambda j: self.git_select(root, j[0], j[1]), jobs)))
        return [set().union(*(found[(alt, icase)] for alt in alts)) for alts, icase in keys]

    def cmake_tree(self, paths):
        root = self.scratch()
        make_tree(root, paths)
        return root

    def cmake_select_many(self, tree, patterns):
        """One `cmake -P` run (slow to start) lists every pattern in TREE."""
        root = self.scratch()
        for i, pattern in enumerate(patterns):
            with open(os.path.join(root, b"pat%d" % i), "wb") as f:
                f.write(pattern)
        script = os.path.join(root, b"glob.cmake")
        with open(script, "w") as f:
            f.write('foreach(i RANGE 0 %d)\n'
                    '  file(READ "${WORK}/pat${i}" PAT)\n'
                    '  file(GLOB res LIST_DIRECTORIES false RELATIVE "${DIR}" "${DIR}/${PAT}")\n'
                    '  file(WRITE "${WORK}/out${i}" "${res}")\n'
                    'endforeach()\n' % (len(patterns) - 1))
        r = subprocess.run(["cmake", b"-DWORK=" + root, b"-DDIR=" + tree, "-P", script],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env)
        if r.returncode != 0:
            raise RuntimeError("cmake failed: %r" % r.stderr)
        result = []
        for i in range(len(patterns)):
            with open(os.path.join(root, b"out%d" % i), "rb") as f:
                result.append(set(x for x in f.read().split(b";") if x))
        return result

    def run_groups(self, tool, groups, make, select_many):
        """Lay every path of GROUPS out in as few scratch trees as possible,
        then list each group's pattern in the trees that hold its paths."""
        everything = OrderedDict()
        for rows in groups.values():
            for r in rows:
                everything[r.args[0]] = True
        trees = [(make(part), set(part)) for part in partition(list(everything))]
        selected = {key: set() for key in groups}
        for root, held in trees:
            keys = [k for k, rows in groups.items() if any(r.args[0] in held for r in rows)]
            for key, found in zip(keys, select_many(root, keys)):
                selected[key] |= found
        for key, rows in groups.items():
            for r in rows:
                pattern = r.pattern
                got = r.args[0] in selected[key]
                self.checked[tool + ":" + r.dialect] += 1
                if got != r.args[1]:
                    self.failures.append("%s: %s says %s for %s pattern %s path %s "
                                         "(corpus expects %s)" % (
                                             r.where, tool, "yes" if got else "no",
                                             r.dialect, trawl_corpus.encode_field(pattern),
                                             trawl_corpus.encode_field(r.args[0]),
                                             "yes" if r.args[1] else "no"))
                elif self.verbose:
                    print("ok %s %s" % (tool, r))

    def admitted(self, tool, why, have):
        """Whether TOOL can answer a row: not when WHY says why not, or TOOL
        is not installed (counted as skipped, with the reason)."""
        if why or not have:
            self.skipped["%s: %s" % (tool, why or "not installed")] += 1
            return False
        return True

    def run(self, rows):
        git_groups = OrderedDict()
        cmake_groups = OrderedDict()
        bazel_rows = []
        for r in rows:
            # (An escape row is a match row that says yes.)
            if r.kind not in ("match", "escape"):
                continue
            if r.dialect == "git" or (
                    r.dialect == "trawl"
                    and not (r.icase and (b"[" in r.pattern or b"\\" in r.pattern))):
                alts = [r.pattern] if r.dialect == "git" else expand_braces(r.pattern)
                if not alts:
                    self.skipped["git: braces do not balance"] += 1
                    continue
                why = file_path_problem(r.args[0])
                for a in alts:
                    why = why or git_pathspec_problem(Row1(a, r))
                if self.admitted("git", why, self.have_git):
                    git_groups.setdefault((tuple(alts), r.icase), []).append(r)
            elif r.dialect == "cmake":
                why = file_path_problem(r.args[0]) or cmake_problem(r)
                if self.admitted("cmake", why, self.have_cmake):
                    cmake_groups.setdefault((r.pattern, r.icase), []).append(r)
            elif r.dialect == "bazel":
                why = file_path_problem(r.args[0]) or bazel_problem(r)
                if self.admitted("bazel", why, self.have_bazel):
                    bazel_rows.append(r)
            else:
                self.skipped["%s: no reference tool%s" % (
                    r.dialect, " (icase with classes or escapes)" if r.dialect == "trawl" else "")] += 1
        self.run_groups("git", git_groups, self.git_tree, self.git_select_many)
        self.run_groups("cmake", cmake_groups, self.cmake_tree,
                        lambda tree, keys: self.cmake_select_many(tree, [k[0] for k in keys]))
        self.run_bazel(bazel_rows)


    def bazel_select(self, rows):
        """Two packages per row, one `bazel --batch query` for them all: the
        path as a file, asked with glob([PAT]), and as a directory, asked with
        exclude_directories = 0. A typed row's answer is its own package's
        (glob() selects `a` for `a/**` only when `a` is a directory); an
        untyped row's is whether either selects it, as the untyped match
        answers. None when Bazel failed the packages."""
        ws = self.scratch()
        base = self.scratch()
        with open(os.path.join(ws, b"WORKSPACE"), "wb"):
            pass
        for i, r in enumerate(rows):
            for kind in ("f", "d"):
                pkg = os.path.join(ws, b"p%d%s" % (i, kind.encode()))
                if kind == "f":
                    make_tree(pkg, [r.args[0]])
                else:
                    os.makedirs(os.path.join(pkg, r.args[0]))
                with open(os.path.join(pkg, b"BUILD"), "w", encoding="latin-1") as f:
                    f.write('print("ROW %d %s", %s in glob([%s], exclude_directories = %d))\n' % (
                        i, kind, starlark_bytes(r.args[0]), starlark_bytes(r.pattern),
                        1 if kind == "f" else 0))
        p = subprocess.run(["bazel", b"--output_user_root=" + os.path.join(base, b"root"),
                            b"--output_base=" + os.path.join(base, b"ob"), "--batch", "query",
                            "--keep_going", "//...:all"],
                           cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, env=self.env)
        got = {}
        for line in p.stderr.split(b"\n"):
            at = line.find(b": ROW ")
            if line.startswith(b"DEBUG: ") and at >= 0:
                i, kind, answer = line[at + 6:].split(b" ")
                i = int(i)
                typed = rows[i].args[2]
                if typed is None or typed[0] == kind.decode():
                    got[i] = got.get(i, False) or answer == b"True"
        if not got and p.returncode != 0:
            raise RuntimeError("bazel failed: %r" % p.stderr[-2000:])
        return [got.get(i) for i in range(len(rows))]

    def run_bazel(self, rows):
        for r, got in zip(rows, self.bazel_select(rows) if rows else []):
            if got is None:
                self.skipped["bazel: Bazel 4.2.3 rejects the pattern"] += 1
                continue
            self.checked["bazel:bazel" + (" as a " + r.args[2] if r.args[2] else "")] += 1
            if got != r.args[1]:
                self.failures.append("%s: bazel says %s for pattern %s path %s%s (corpus expects %s)" % (
                    r.where, "yes" if got else "no", trawl_corpus.encode_field(r.pattern),
                    trawl_corpus.encode_field(r.args[0]),
                    " as a " + r.args[2] if r.args[2] else "", "yes" if r.args[1] else "no"))
            elif self.verbose:
                print("ok bazel %s" % (r,))

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    if not any(shutil.which(t) for t in ("git", "cmake", "bazel")):
        print("neither git nor cmake nor bazel is installed: skipping")
        return SKIP
    rows = trawl_corpus.load(argv[1])
    checker = Checker("--verbose" in argv[2:])
    try:
        checker.run(rows)
    finally:
        checker.close()
    for k, v in sorted(checker.checked.items()):
        print("checked %5d  %s rows" % (v, k))
    for k, v in sorted(checker.skipped.items()):
        print("skipped %5d  %s" % (v, k))
    for f in checker.failures:
        print("MISMATCH " + f)
    print("%d rows checked against real tools, %d disagree" % (
        sum(checker.checked.values()), len(checker.failures)))
    return 1 if checker.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
