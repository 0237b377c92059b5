#!/usr/bin/env python3
"""Differential test of trawl's matcher against real git.

    git_wildmatch_diff.py TRAWL_EXE [--seed N] [--seeds K] [--trees T]
                          [--patterns P] [--byte-table yes|no] [--batch B]
                          [--no-slots] [--jobs J] [--max-report M] [--keep]
                          [--dump FILE]

First a fixed byte table: one file 'q' + B for every byte B (but NUL and '/')
against fixed patterns asking every POSIX class, the awkward bracket forms,
ranges across the case boundary and escaped letters, so that each of those is
checked against all 254 bytes, plain and icase, whatever the seed. Then, for
every seed, T trees are generated in a temporary directory (each one a
fresh `git init`, with GIT_CONFIG_GLOBAL=/dev/null, GIT_CONFIG_NOSYSTEM=1 and
HOME in the temporary directory) from a file-name alphabet that stresses a
glob matcher: letters of both cases, digits, '.', leading dots, '-', '_',
spaces, '[', ']', '*', '?', '\\', '!', '^', '{', '}', ',', control bytes and
bytes that are not UTF-8. For each tree, P patterns are generated from a
grammar over the same alphabet (most of them derived from a path of the tree,
so that a good share select something; some deliberately malformed), and
every pattern is evaluated three ways:

  git        git ls-files -o -z -- ':(glob)PAT'
             against trawl match --dialect git -0 PAT -
  git icase  git ls-files -o -z -- ':(glob,icase)PAT'
             against trawl match --dialect git --icase -0 PAT -
  trawl      trawl match --dialect trawl -0 PAT' -   (PAT' = PAT with '{', '}'
             and ',' escaped) against git's selection, unless trawl rejects
             the pattern (exit 2). Not under icase: the trawl dialect folds
             class members, git deliberately does not.

trawl is always fed the full list of files (`git ls-files -o -z`, untracked
files relative to the repository root) on stdin, one run per pattern and way;
git's answer is the set it prints. Every path of the tree is one verdict.
Starting a process is what costs, so git answers many patterns in one run
(see git_select_batch; --no-slots asks it one pattern at a time instead).
A pattern starting with '-' reaches trawl as '\\-...' while `trawl match --`
does not end option parsing (checked at start; a NOTE says so).

CI runs the defaults (seed 1, the byte table and 3 trees of 150 patterns).
Against a sanitizer build of trawl (detected in the executable), where every
process starts ten to thirty times slower, the defaults shrink to one tree of
40 patterns without the byte table: that run looks for memory errors and
undefined behaviour (any sanitizer report is a mismatch), the plain build's
run checks the semantics.

Pathspec rules that are not wildmatch
-------------------------------------
`git ls-files ':(glob)PAT'` is wildmatch(PAT, path, WM_PATHNAME) plus rules of
git's pathspec layer. Each one was established with real git (2.39) and is
either modelled here or excluded from generation:

 L (modelled)  Literal rule. Before any wildmatch, git compares the pattern
               text itself, byte for byte (ASCII-case-insensitively under
               icase), with the path: a path equal to the text, or below the
               text as a directory (text + '/' is a prefix of the path, or the
               text ends in '/' and is a prefix of the path), is selected
               whatever wildcards the text contains. So `src` selects
               `src/a.c`, `a*` selects the file `a*/f`, `[ab]` selects the file
               `[ab]` as well as `a`. The expected selection is trawl's plus
               these paths; wildcard-free patterns are therefore kept.
 Q (in the git dialect)  git's literal cut. git compares the pattern's
               leading bytes up to the first '*', '?', '[' or '\\' on their own
               and hands only the rest of the pattern and of the path to
               wildmatch. When the cut ends inside a component and the rest
               starts with '**', wildmatch sees those stars at the start of its
               pattern and takes them for a whole-component '**': git's `x**`
               selects `xfoo/bar/b`, `ab/c**` selects `ab/cd/e`. The git dialect
               applies the same cut (docs/patterns.md), so these patterns are
               compared like any other. The trawl dialect keeps such a '**' as
               '*' (docs/patterns.md), so it is not compared on them: git has no
               pure-wildmatch answer there.
 N (excluded)  Normalisation. git normalises the pathspec text as a path
               before matching: `./a`, `a//b`, `a/./b`, `a/../b` become `a`,
               `a/b`, `a/b`, `b`; a pattern that is empty or `.` selects
               everything; a leading '/' or a `..` climbing out is fatal
               ("outside repository"). Patterns with an empty, '.' or '..'
               component (other than one trailing '/'), or a leading '/', are
               not generated.
 T (kept)      A trailing '/' needs no rule of its own: wildmatch never matches
               a file with it, and L selects what is below a literal directory
               (`src/`); git agrees.
 M (kept)      ':' or '(' after the `:(glob)` magic is an ordinary byte; '!' and
               '^' at the start are ordinary too (no exclude magic without ':').

Exit status: 0 when every verdict agrees, 1 on any mismatch (a short report of
the pattern, the path, git's and trawl's verdicts, the seed and a shell
reproducer is printed for the first ones), 77 (skip) when git is missing.
Default seed 1, so CI is deterministic; TRAWL_DIFF_SEED / TRAWL_DIFF_SEEDS in
the environment or --seed / --seeds choose others (e.g. --seeds 20 locally).
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import diffgen
from diffgen import sanitizer_said, show


def pick_byte(rng):
    return diffgen.pick_byte(rng, ALPHABET, LETTERS[0])


def name_ok(name):
    return diffgen.name_ok(name, 60)


# ---------------------------------------------------------------------------
# Alphabet

LETTERS = b"abcxyzABCXYZ"
DIGITS = b"0129"
PLAIN_PUNCT = b".-_ "
SPECIAL = b"[]*?\\!^{},"
OTHER_PUNCT = b":#~+=@%$&'\"()<>|;`"
CONTROL = b"\t\n\x0b\x0c\x01\x7f"
HIGH = bytes([0x80, 0xA9, 0xC3, 0xE9, 0xFE, 0xFF])

ALPHABET = [
    (LETTERS, 46),
    (DIGITS, 8),
    (PLAIN_PUNCT, 13),
    (SPECIAL, 20),
    (OTHER_PUNCT, 5),
    (CONTROL, 2),
    (HIGH, 6),
]
EXTENSIONS = [b".c", b".h", b".C", b".txt", b".tar.gz", b".d", b".cc", b".x-y"]

GLOB_SPECIAL = b"*?[\\"  # the bytes git's pathspec layer treats as wildcards






def fresh_name(rng):
    while True:
        n = bytes(pick_byte(rng) for _ in range(rng.choice([1, 1, 2, 2, 3, 3, 4, 5, 6, 8])))
        r = rng.random()
        if r < 0.30:
            n += rng.choice(EXTENSIONS)
        if rng.random() < 0.12:
            n = b"." + n
        if rng.random() < 0.08:  # a case twin of a plain name
            n = n.swapcase()
        if name_ok(n):
            return n


# ---------------------------------------------------------------------------
# Trees


def make_tree(rng):
    """Generate a tree: the list of its file paths (directories are implied;
    none is empty, since git lists files only)."""
    pool = [fresh_name(rng) for _ in range(rng.randint(18, 30))]
    # Case twins and near-twins make icase and classes interesting.
    for n in list(pool[:6]):
        t = n.swapcase()
        if t != n and name_ok(t):
            pool.append(t)
    target = rng.randint(120, 200)
    files = []
    children = {}  # directory -> names used in it

    def choose_name():
        return rng.choice(pool) if rng.random() < 0.7 else fresh_name(rng)

    def fill(rel, depth):
        used = children.setdefault(rel, set())
        n_entries = rng.randint(4, 10) if depth == 0 else rng.randint(1, 7)
        for _ in range(n_entries):
            if len(files) >= target:
                return
            name = choose_name()
            if name in used:
                continue
            used.add(name)
            path = rel + b"/" + name if rel else name
            if depth < 4 and rng.random() < (0.45 if depth < 2 else 0.25):
                before = len(files)
                fill(path, depth + 1)
                if len(files) == before:
                    files.append(path + b"/f")
            else:
                files.append(path)

    while len(files) < target // 2:
        fill(b"", 0)
    return files


def materialize(root, files):
    for p in files:
        full = os.path.join(root, p)
        d = os.path.dirname(full)
        if not os.path.isdir(d):
            os.makedirs(d)
        with open(full, "wb"):
            pass


# ---------------------------------------------------------------------------
# Patterns

POSIX = {
    b"alnum": lambda c: chr(c).isalnum() and c < 128,
    b"alpha": lambda c: chr(c).isalpha() and c < 128,
    b"blank": lambda c: c in b" \t",
    b"cntrl": lambda c: c < 32 or c == 127,
    b"digit": lambda c: chr(c).isdigit() and c < 128,
    b"graph": lambda c: 33 <= c <= 126,
    b"lower": lambda c: chr(c).islower() and c < 128,
    b"print": lambda c: 32 <= c <= 126,
    b"punct": lambda c: 33 <= c <= 126 and not chr(c).isalnum(),
    b"space": lambda c: c in b" \t\n\r\x0b\x0c",
    b"upper": lambda c: chr(c).isupper() and c < 128,
    b"xdigit": lambda c: c < 128 and chr(c) in "0123456789abcdefABCDEF",
}


def swapcase_maybe(rng, b, p=0.12):
    if rng.random() < p:
        return bytes([b]).swapcase()[0]
    return b


def literal(rng, b):
    """Pattern text for the byte B, usually matching exactly B."""
    if b in GLOB_SPECIAL:
        if rng.random() < 0.88:
            return b"\\" + bytes([b])
        return bytes([b])  # left bare: changes the meaning, sometimes malformed
    b = swapcase_maybe(rng, b)
    if rng.random() < 0.04:
        return b"\\" + bytes([b])  # a needless escape
    return bytes([b])


def class_char(rng, b, first):
    """B as a member of a bracket expression."""
    if b == ord("]"):
        return b"]" if first and rng.random() < 0.6 else b"\\]"
    if b == ord("\\"):
        return b"\\\\"
    if b in b"!^" and first:
        return b"\\" + bytes([b])
    if b == ord("["):
        return b"\\[" if rng.random() < 0.5 else b"["
    if b == ord("-"):
        return b"\\-" if rng.random() < 0.5 else b"-"
    if rng.random() < 0.05:
        return b"\\" + bytes([b])
    return bytes([b])


def range_end(b):
    if b in b"]\\-[!^":
        return b"\\" + bytes([b])
    return bytes([b])


def bracket(rng, target, negate=None):
    """A bracket expression that (mostly) matches the byte TARGET, or with
    NEGATE set, one that (mostly) does not match a byte other than TARGET."""
    if negate is None:
        negate = rng.random() < 0.18
    items = []
    if negate:
        # Members that exclude something else, so TARGET still matches.
        for _ in range(rng.randint(1, 3)):
            o = pick_byte(rng)
            if o != target:
                items.append(("c", o))
        if not items:
            items.append(("c", ord("q") if target != ord("q") else ord("r")))
    else:
        r = rng.random()
        if r < 0.40:
            items.append(("c", swapcase_maybe(rng, target, 0.1)))
            for _ in range(rng.randint(0, 2)):
                items.append(("c", pick_byte(rng)))
        elif r < 0.72:
            lo = max(1, target - rng.randint(0, 6))
            hi = min(255, target + rng.randint(0, 6))
            if rng.random() < 0.08:
                lo, hi = hi, lo  # a reversed range
            items.append(("r", swapcase_maybe(rng, lo, 0.15), swapcase_maybe(rng, hi, 0.15)))
        else:
            names = [n for n, f in POSIX.items() if f(target)]
            if names and rng.random() < 0.9:
                items.append(("p", rng.choice(names)))
            else:
                items.append(("p", rng.choice(list(POSIX))))
        if rng.random() < 0.2:
            items.append(("c", pick_byte(rng)))
        if rng.random() < 0.1:
            o = pick_byte(rng)
            items.append(("r", o, min(255, o + rng.randint(0, 20))))
        rng.shuffle(items)
    out = b"["
    if negate:
        out += b"!" if rng.random() < 0.6 else b"^"
    for i, it in enumerate(items):
        if it[0] == "c":
            out += class_char(rng, it[1], i == 0)
        elif it[0] == "r":
            out += range_end(it[1]) + b"-" + range_end(it[2])
        else:
            out += b"[:" + it[1] + b":]"
    return out + b"]"


MALFORMED = [
    b"[", b"[a", b"[!", b"[^", b"[]", b"[!]", b"[^]", b"\\", b"[[:foo:]]",
    b"[[:alpha:]", b"[[:alpha]", b"[[:Alpha:]]", b"[z-a]", b"[a-]", b"[-a]",
    b"[]-]", b"[\\", b"[a\\]", b"[[:]]", b"[[::]]", b"[[:alpha:]-z]", b"[a-[:digit:]]",
    b"[]]", b"[!]]", b"[\\]]", b"[[]", b"[[:space:]", b"[--0]", b"[*-]", b"[[=a=]]",
    b"[[.a.]]", b"]", b"[a-\\", b"[:alpha:]",
]

# Things that may stand for a '/' (only '\/' and '[/]'-like ones ever should).
SLASH_STANDINS = [b"?", b"*", b"**", b"[!a]", b"[^x]", b"[+-0]", b"[[:punct:]]",
                  b"[/]", b"\\/", b"[!/]", b"[.-0]", b"*/", b"/*", b"**/", b"/**/"]


def mutate_component(rng, comp):
    r = rng.random()
    if r < 0.07:
        return b"*"
    if r < 0.09:
        return b"?" * len(comp)
    if r < 0.11:
        return b"*" + comp[-1:].replace(b"\\", b"\\\\").replace(b"*", b"\\*")
    out = b""
    i = 0
    while i < len(comp):
        x = rng.random()
        if x < 0.11:
            j = i + rng.randint(0, min(4, len(comp) - i))
            out += b"*" if rng.random() < 0.8 else rng.choice([b"**", b"***"])
            i = j
        elif x < 0.19:
            out += b"?"
            i += 1
        elif x < 0.30:
            out += bracket(rng, comp[i])
            i += 1
        else:
            out += literal(rng, comp[i])
            i += 1
    if rng.random() < 0.05:
        out += b"*"
    return out


def pattern_from_path(rng, path):
    comps = path.split(b"/")
    tail = b""
    if len(comps) > 1 and rng.random() < 0.18:
        comps = comps[: rng.randint(1, len(comps) - 1)]
        tail = rng.choice([b"", b"/", b"/*", b"/**", b"/**/*", b"/*/*", b"/?*", b"**"])
    parts = []
    i = 0
    while i < len(comps):
        r = rng.random()
        if r < 0.10:
            k = rng.randint(0, min(3, len(comps) - i))
            parts.append(b"**")
            i += k
            continue
        if r < 0.20 and comps[i]:
            parts.append(literal_component(rng, comps[i]))
        else:
            parts.append(mutate_component(rng, comps[i]))
        i += 1
    if not parts:
        parts = [b"**"]
    out = parts[0]
    for p in parts[1:]:
        if rng.random() < 0.04:
            out += rng.choice(SLASH_STANDINS) + p
        else:
            out += b"/" + p
    return out + tail


def literal_component(rng, comp):
    return b"".join(literal(rng, b) for b in comp)


def random_token(rng, pool):
    r = rng.random()
    if r < 0.30:
        return literal(rng, pick_byte(rng))
    if r < 0.45:
        name = rng.choice(pool)
        return literal_component(rng, name[: rng.randint(1, len(name))])
    if r < 0.60:
        return b"*"
    if r < 0.70:
        return b"?"
    if r < 0.74:
        return b"**"
    if r < 0.92:
        return bracket(rng, pick_byte(rng))
    return rng.choice(MALFORMED)


def random_pattern(rng, pool):
    comps = []
    for _ in range(rng.choice([1, 1, 2, 2, 3, 4])):
        r = rng.random()
        if r < 0.15:
            comps.append(b"**")
        elif r < 0.25:
            comps.append(b"*")
        else:
            comps.append(b"".join(random_token(rng, pool) for _ in range(rng.randint(1, 4))))
    return b"/".join(comps)


def inject_malformed(rng, pat):
    m = rng.choice(MALFORMED)
    where = rng.random()
    if where < 0.4 or not pat:
        return pat + m
    if where < 0.6:
        return m + pat
    i = rng.randrange(len(pat))
    return pat[:i] + m + pat[i:]


def excluded_by_pathspec(pat):
    """Rule N of the module comment: patterns git normalises or refuses."""
    if pat in (b"", b".") or pat.startswith(b"/"):
        return True
    comps = pat.split(b"/")
    if comps[-1] == b"":
        comps = comps[:-1]  # one trailing '/' is kept (rule T)
    return any(c in (b"", b".", b"..") for c in comps)


def gen_pattern(rng, files, pool):
    while True:
        r = rng.random()
        if r < 0.72:
            pat = pattern_from_path(rng, rng.choice(files))
        else:
            pat = random_pattern(rng, pool)
        if rng.random() < 0.08:
            pat = inject_malformed(rng, pat)
        if rng.random() < 0.01:
            pat = pat + b"\\"
        if len(pat) > 200 or b"\0" in pat:
            continue
        if not excluded_by_pathspec(pat):
            return pat


# ---------------------------------------------------------------------------
# The pathspec model (rule L; rule Q only to know where the trawl dialect differs)


def casefold(b):
    return b.lower()  # bytes.lower() folds ASCII only, as git does


def literal_rule(pat, path, icase):
    """Rule L: git selects PATH by the pattern text alone."""
    if icase:
        pat, path = casefold(pat), casefold(path)
    if not path.startswith(pat):
        return False
    return len(path) == len(pat) or pat.endswith(b"/") or path[len(pat)] == ord("/")


def literal_prefix_len(pat):
    for i, b in enumerate(pat):
        if b in GLOB_SPECIAL:
            return i
    return len(pat)


def quirk_split(pat):
    """Rule Q: (cut, rest) when git's literal cut changes the meaning."""
    n = literal_prefix_len(pat)
    if 0 < n < len(pat) and not pat[:n].endswith(b"/") and pat[n:].startswith(b"**"):
        return pat[:n], pat[n:]
    return None


# ---------------------------------------------------------------------------
# Running git and trawl


class Env:
    def __init__(self, trawl, tmp):
        self.trawl = trawl
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            GIT_CONFIG_GLOBAL="/dev/null",
            GIT_CONFIG_NOSYSTEM="1",
            HOME=tmp,
            XDG_CONFIG_HOME=os.path.join(tmp, ".config"),
            LC_ALL="C",
            LANG="C",
        )
        self.env = env
        self.dashdash = None  # does `trawl match -- -x` take '-x' as the pattern?


def run_git(env, repo, args):
    p = subprocess.run(["git", "-C", repo] + args, env=env.env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise GitError(p.stderr.decode(errors="replace").strip())
    return p.stdout


class GitError(Exception):
    pass


def git_select(env, repo, pat, icase):
    """git's selection for PAT in a repository holding the tree at its root."""
    magic = b":(glob,icase)" if icase else b":(glob)"
    out = run_git(env, repo, ["ls-files", "-o", "-z", "--", magic + pat])
    return set(x for x in out.split(b"\0") if x)


def slot(icase, j):
    return b"%s%03d" % (b"i" if icase else b"p", j)


def git_select_batch(env, repo, pats):
    """git's selections for PATS, plain and icase, in one git run.

    Starting a process costs more than matching, so the tree is copied into
    slot directories p000/, i000/, p001/, ... and pattern j is asked as
    ':(glob)p00j/PAT' and ':(glob,icase)i00j/PAT' together. A slot name is a
    literal leading component (digits: icase cannot reach another slot), so
    each pathspec sees exactly the tree it would see at the root: wildmatch
    continues after a '/' as at the start, rule L compares 'p00j/PAT' with
    'p00j/path' as PAT with path, and rule Q's literal prefix 'p00j/...' ends
    in '/' exactly when PAT's is empty. (--no-slots asks one pattern at a time
    at the root instead, to confirm that.) Returns [(plain set, icase set)];
    a set is a GitError when git refused the pattern."""
    specs = []
    for j, pat in enumerate(pats):
        specs.append(b":(glob)" + slot(False, j) + b"/" + pat)
        specs.append(b":(glob,icase)" + slot(True, j) + b"/" + pat)
    try:
        out = run_git(env, repo, ["ls-files", "-o", "-z", "--"] + specs)
    except GitError:
        # Find the pattern git refuses; the others still count.
        res = []
        for j, pat in enumerate(pats):
            pair = []
            for icase in (False, True):
                try:
                    pair.append(git_select_batch_one(env, repo, j, pat, icase))
                except GitError as e:
                    pair.append(e)
            res.append(tuple(pair))
        return res
    res = [(set(), set()) for _ in pats]
    for x in out.split(b"\0"):
        if not x:
            continue
        head, _, rest = x.partition(b"/")
        res[int(head[1:])][head[:1] == b"i"].add(rest)
    return res


def git_select_batch_one(env, repo, j, pat, icase):
    magic = b":(glob,icase)" if icase else b":(glob)"
    out = run_git(env, repo, ["ls-files", "-o", "-z", "--", magic + slot(icase, j) + b"/" + pat])
    return set(x.partition(b"/")[2] for x in out.split(b"\0") if x)


def trawl_select(env, dialect, icase, pat, paths):
    """(exit status, selected set, stderr) of one trawl match run."""
    args = [env.trawl, "match", "--dialect", dialect, "-0"]
    if icase:
        args.append("--icase")
    if pat.startswith(b"-"):
        if env.dashdash:
            args.append("--")
        else:
            # The CLI cannot take a pattern starting with '-' (see main);
            # '\-' means the same byte in both dialects.
            pat = b"\\" + pat
    args += [pat, "-"]
    data = b"".join(p + b"\0" for p in paths)
    p = subprocess.run(args, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sel = set(p.stdout.split(b"\0")[:-1]) if p.stdout else set()
    err = p.stderr.decode(errors="replace").strip()
    if len(err) > 600:
        err = err[:600] + " ..."
    return p.returncode, sel, err


def trawl_pattern_arg(env, pat):
    """PAT as trawl_select passes it, quoted for a shell."""
    if not pat.startswith(b"-"):
        return show(pat)
    return "-- " + show(pat) if env.dashdash else show(b"\\" + pat)


def probe_dashdash(env):
    """Does `trawl match -- -x -` take '-x' as the pattern?"""
    p = subprocess.run([env.trawl, "match", "--dialect", "git", "-0", "--", "-x", "-"],
                       input=b"-x\0y\0", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode == 0 and p.stdout == b"-x\0"


def escape_braces(pat):
    """PAT for the trawl dialect: '{', '}' and ',' escaped (an escape in git
    means the byte itself, inside and outside brackets alike)."""
    out = bytearray()
    i = 0
    while i < len(pat):
        b = pat[i]
        if b == ord("\\") and i + 1 < len(pat):
            out += pat[i:i + 2]
            i += 2
            continue
        if b in b"{},":
            out += b"\\"
        out.append(b)
        i += 1
    return bytes(out)


def has_wildcard(pat):
    return any(b in GLOB_SPECIAL for b in pat)


class Mismatch:
    def __init__(self, seed, tree, mode, pat, trawl_pat, path, git_says, trawl_says, note=""):
        self.seed, self.tree, self.mode = seed, tree, mode
        self.pat, self.trawl_pat, self.path = pat, trawl_pat, path
        self.git_says, self.trawl_says, self.note = git_says, trawl_says, note




def says(b):
    return "selects" if b else "does not select"


def evaluate(env, seed, tree, universe, pat, git_sets):
    """Compare trawl with git's selections GIT_SETS (plain, icase) for PAT:
    (verdicts compared, mismatches, stats)."""
    verdicts = 0
    mismatches = []
    stats = {"git_nonempty": 0, "quirk": 0, "trawl_compared": 0, "trawl_rejected": 0,
             "dash_skipped": 0, "evaluations": 0}
    q = quirk_split(pat)
    stats["quirk"] = int(bool(q))
    stats["dash_skipped"] = int(pat.startswith(b"-") and not env.dashdash)

    for icase, g in zip((False, True), git_sets):
        mode = "git icase" if icase else "git"
        if isinstance(g, GitError):
            mismatches.append(Mismatch(seed, tree, mode, pat, pat, b"", "fatal: %s" % g, "-",
                                       "git refused the pattern: a generator bug"))
            continue
        if not icase and g:
            stats["git_nonempty"] = 1
        lit = set(p for p in universe if literal_rule(pat, p, icase))
        note = "expected = trawl + rule L"
        if q:
            note += "; git's literal cut (rule Q) applies: %s, then %s" % (show(q[0]),
                                                                       show(q[1]))
        rc, t, err = trawl_select(env, "git", icase, pat, universe)
        stats["evaluations"] += 1
        if rc not in (0, 1) or (rc == 0) != bool(t) or sanitizer_said(err):
            mismatches.append(Mismatch(seed, tree, mode + " exit", pat, pat, b"",
                                       "accepts the pattern",
                                       "exit %d with %d selected: %s" % (rc, len(t), err),
                                       "the git dialect accepts every pattern; "
                                       "exit 0 iff something matched"))
            continue
        expected = t | lit
        verdicts += len(universe)
        for p in sorted(g ^ expected):
            mismatches.append(Mismatch(seed, tree, mode, pat, pat, p, says(p in g),
                                       says(p in expected), note))

        if icase or q:
            continue
        # The trawl dialect must be pure wildmatch where git's answer is.
        tpat = escape_braces(pat)
        rc, tt, err = trawl_select(env, "trawl", False, tpat, universe)
        stats["evaluations"] += 1
        if rc == 2 and not sanitizer_said(err):
            stats["trawl_rejected"] = 1
            continue
        if rc not in (0, 1) or (rc == 0) != bool(tt) or sanitizer_said(err):
            mismatches.append(Mismatch(seed, tree, "trawl dialect exit", pat, tpat, b"", "-",
                                       "exit %d with %d selected: %s" % (rc, len(tt), err),
                                       "exit 0 iff something matched"))
            continue
        stats["trawl_compared"] = 1
        if has_wildcard(pat):
            skip = lit  # rule L selected these; wildmatch's verdict is unknown
            gw = g
        else:
            skip = set()
            gw = set(p for p in g if p == pat)  # without wildcards, wildmatch is equality
        for p in universe:
            if p in skip:
                continue
            verdicts += 1
            if (p in gw) != (p in tt):
                mismatches.append(Mismatch(seed, tree, "trawl dialect", pat, tpat, p,
                                           says(p in gw), says(p in tt),
                                           "git's selection less rule-L paths"))
    return verdicts, mismatches, stats


# ---------------------------------------------------------------------------
# Reporting




def one_file_check(env, tmp, m):
    """git's verdict on the path in a repository holding only that path, with
    the pattern asked at the root (no slot): True if it is the same."""
    if not m.path:
        return None
    d = tempfile.mkdtemp(prefix="one-", dir=tmp)
    try:
        run_git(env, d, ["init", "-q"])
        materialize(os.fsencode(d), [m.path])
        g = m.path in git_select(env, d, m.pat, m.mode == "git icase")
        return g == (m.git_says == says(True))
    except (OSError, GitError):
        return None
    finally:
        shutil.rmtree(d, ignore_errors=True)


def report(env, tmp, m):
    icase = m.mode.startswith("git icase")
    dialect = "trawl" if m.mode.startswith("trawl") else "git"
    magic = b":(glob,icase)" if icase else b":(glob)"
    lines = ["MISMATCH [%s] seed %d, tree %s" % (m.mode, m.seed, m.tree),
             "  pattern  %s" % show(m.pat)]
    if m.trawl_pat != m.pat:
        lines.append("  as trawl %s" % show(m.trawl_pat))
    if m.path:
        lines.append("  path     %s" % show(m.path))
    lines.append("  git      %s  (git ls-files -o -- %s)" % (m.git_says, show(magic + m.pat)))
    lines.append("  trawl    %s  (trawl match --dialect %s%s)" %
                 (m.trawl_says, dialect, " --icase" if icase else ""))
    if m.note:
        lines.append("  note     %s" % m.note)
    if m.path:
        alone = one_file_check(env, tmp, m)
        if alone is not None:
            lines.append("  alone    git %s in a repository holding only this path" %
                         ("answers the same" if alone else "answers differently"))
        dirn = m.path.rsplit(b"/", 1)[0] if b"/" in m.path else None
        lines.append(
            "  repro    cd \"$(mktemp -d)\" && git init -q && %s: > %s && "
            "git ls-files -o -z -- %s | tr '\\0' '\\n'; printf '%%s\\0' %s | "
            "%s match --dialect %s%s -0 %s - | tr '\\0' '\\n'" %
            ("mkdir -p %s && " % show(dirn) if dirn else "", show(m.path),
             show(magic + m.pat), show(m.path), env.trawl, dialect,
             " --icase" if icase else "", trawl_pattern_arg(env, m.trawl_pat)))
    return "\n".join(lines)


# ---------------------------------------------------------------------------


def random_tree(seed, tree, n_patterns):
    rng = random.Random("trawl-git-diff:%d:%d" % (seed, tree))
    files = sorted(make_tree(rng))
    names = sorted(set(c for p in files for c in p.split(b"/")))
    return files, [gen_pattern(rng, files, names) for _ in range(n_patterns)]


def byte_table():
    """A fixed tree, one file 'q' + B for every byte B but NUL and '/', and
    fixed patterns that ask every POSIX class, the awkward brackets, ranges
    across the case boundary and escaped letters of both cases, so that each
    is checked against every byte (icase too) whatever the seeds."""
    files = sorted(b"q" + bytes([c]) for c in range(1, 256) if c != ord("/"))
    files += [b"q/q", b"q/Q", b"Q/q"]  # and '/' against the bracket forms
    body = [b"[[:%s:]]" % n for n in POSIX] + [b"[![:%s:]]" % n for n in POSIX]
    body += [b"[[:alpha:][:digit:]]", b"[[:upper:]_]", b"[^[:lower:]0]", b"[[:foo:]]",
             b"[[:alpha:]", b"[[:ALPHA:]]", b"[[:]]", b"[[=a=]]", b"[[.a.]]", b"[:alpha:]"]
    body += [b"?", b"*", b"**", b"[!q]", b"[^a]", b"[A-z]", b"[Z-a]", b"[a-Z]", b"[A-C]",
             b"[a-c]", b"[A]", b"[a]", b"[Aa]", b"[!-~]", b"[\x01-\x7f]", b"[\x80-\xff]",
             b"[\xff-\x80]", b"[--0]", b"[+-0]", b"[]-a]", b"[]]", b"[!]]", b"[\\]]", b"[\\\\]",
             b"[[]", b"[\\[]", b"[a-]", b"[-a]", b"[]-]", b"[\\-]", b"[z-a]", b"[x-\\]",
             b"[[:alpha:]-z]", b"[a-[:digit:]]", b"[!]", b"[]", b"[", b"\\", b"[\\",
             b"[\\A-\\C]", b"[\\a]", b"[\\A]", b"[Z-\\a]", b"[*-?]", b"[!a-z]", b"[^A-Z]"]
    body += [b"\\" + bytes([c]) for c in b"AZaz[]*?\\!-.^ \x80\xff"]
    return files, [b"q" + x for x in body] + [b"?/q", b"q/[[:upper:]]", b"[Qq]/?",
                                              b"q[/]q", b"q[!a]q", b"q?q", b"q*q", b"q[--0]q"]


def run_tree(env, pool, args, seed, tree, files, pats, tmp, totals, mismatches):
    repo = os.path.join(tmp, "s%d-t%s" % (seed, tree))
    os.mkdir(repo)
    run_git(env, repo, ["init", "-q"])
    batch = args.batch
    if args.no_slots:
        materialize(os.fsencode(repo), files)
        universe = [p for p in run_git(env, repo, ["ls-files", "-o", "-z"]).split(b"\0") if p]
        listed = {b"": set(universe)}
    else:
        for icase in (False, True):
            for j in range(min(batch, len(pats))):
                materialize(os.path.join(os.fsencode(repo), slot(icase, j)), files)
        listed = {}
        for x in run_git(env, repo, ["ls-files", "-o", "-z"]).split(b"\0"):
            if x:
                head, _, rest = x.partition(b"/")
                listed.setdefault(head, set()).add(rest)
        universe = sorted(listed[slot(False, 0)])
    if any(v != set(files) for v in listed.values()):
        bad = sorted(set(files) ^ set(universe))[:5]
        raise SystemExit("git_wildmatch_diff: seed %d tree %s: git lists other files than "
                         "were created (a generator bug): %s" %
                         (seed, tree, ", ".join(show(p) for p in bad)))

    def git_job(chunk):
        if args.no_slots:
            res = []
            for pat in chunk:
                pair = []
                for icase in (False, True):
                    try:
                        pair.append(git_select(env, repo, pat, icase))
                    except GitError as e:
                        pair.append(e)
                res.append(tuple(pair))
            return res
        return git_select_batch(env, repo, chunk)

    chunks = [pats[i:i + batch] for i in range(0, len(pats), batch)]
    git_sets = [s for res in pool.map(git_job, chunks) for s in res]
    results = pool.map(lambda jp: evaluate(env, seed, tree, universe, jp[1], git_sets[jp[0]]),
                       enumerate(pats))
    for v, mm, st in results:
        totals["verdicts"] += v
        mismatches.extend(mm)
        for k, x in st.items():
            totals[k] += x
    totals["trees"] += 1
    totals["patterns"] += len(pats)
    totals["files"] += len(universe)
    if not args.keep:
        shutil.rmtree(repo, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trawl", help="path of the trawl executable")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("TRAWL_DIFF_SEED", "1")))
    ap.add_argument("--seeds", type=int, default=int(os.environ.get("TRAWL_DIFF_SEEDS", "1")),
                    help="run seeds SEED .. SEED+SEEDS-1")
    ap.add_argument("--trees", type=int, help="trees per seed (default 3; 1 when sanitized)")
    ap.add_argument("--patterns", type=int,
                    help="patterns per tree (default 150; 40 when sanitized)")
    ap.add_argument("--byte-table", choices=["yes", "no"],
                    help="run the fixed byte table (default yes; no when sanitized)")
    ap.add_argument("--batch", type=int, default=50, help="patterns per git run")
    ap.add_argument("--no-slots", action="store_true",
                    help="ask git one pattern at a time at the repository root (slow)")
    ap.add_argument("--jobs", type=int, default=0, help="parallel processes (0: CPUs)")
    ap.add_argument("--max-report", type=int, default=10)
    ap.add_argument("--keep", action="store_true", help="keep the temporary trees")
    ap.add_argument("--dump", metavar="FILE",
                    help="write every mismatch to FILE, one JSON object a line")
    args = ap.parse_args()

    if shutil.which("git") is None:
        print("git_wildmatch_diff: git not found, skipping")
        return 77
    start = time.monotonic()
    # A sanitizer build starts each process ten to thirty times slower here;
    # its run is smaller so that it stays well inside the time budget. The
    # plain build's run is the semantic check, this one looks for memory errors.
    with open(args.trawl, "rb") as exe:
        sanitized = any(x in exe.read() for x in (b"__asan_init", b"__ubsan_handle_"))
    if args.trees is None:
        args.trees = 1 if sanitized else 3
    if args.patterns is None:
        args.patterns = 40 if sanitized else 150
    if args.byte_table is None:
        args.byte_table = "no" if sanitized else "yes"
    shm = "/dev/shm"
    base = shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None
    tmp = tempfile.mkdtemp(prefix="trawl-gitdiff-", dir=base)
    env = Env(os.path.abspath(args.trawl), tmp)
    env.dashdash = probe_dashdash(env)
    jobs = args.jobs or min(8, os.cpu_count() or 2)
    totals = dict.fromkeys(["trees", "files", "patterns", "verdicts", "evaluations",
                            "git_nonempty", "quirk", "trawl_compared", "trawl_rejected",
                            "dash_skipped"], 0)
    mismatches = []
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            if args.byte_table == "yes":
                files, pats = byte_table()
                run_tree(env, pool, args, 0, "bytes", files, pats, tmp, totals, mismatches)
            for seed in range(args.seed, args.seed + args.seeds):
                for tree in range(args.trees):
                    files, pats = random_tree(seed, tree, args.patterns)
                    run_tree(env, pool, args, seed, tree, files, pats, tmp, totals,
                             mismatches)
        if args.dump:
            with open(args.dump, "w") as out:
                for m in mismatches:
                    out.write(json.dumps({k: (v.decode("latin-1") if isinstance(v, bytes) else v)
                                          for k, v in vars(m).items()}) + "\n")
        # One report per (seed, tree, mode, pattern): its first path, and a count.
        groups = {}
        for m in mismatches:
            groups.setdefault((m.seed, m.tree, m.mode, m.pat), []).append(m)
        for ms in list(groups.values())[: args.max_report]:
            print(report(env, tmp, ms[0]))
            if len(ms) > 1:
                print("  and      %d more paths: %s" % (len(ms) - 1, ", ".join(
                    "%s (git %s)" % (show(m.path), m.git_says) for m in ms[1:4])
                    + (", ..." if len(ms) > 4 else "")))
            if ms[0].tree == "bytes":
                rerun = "--seeds 0  (the fixed byte table runs on every invocation)"
            else:
                rerun = "--seed %d --trees %d --patterns %d" % (ms[0].seed, args.trees,
                                                               args.patterns)
            print("  rerun    %s %s %s" % (os.path.abspath(__file__), env.trawl, rerun))
        if len(groups) > args.max_report:
            print("... and %d more patterns with mismatches" % (len(groups) - args.max_report))
        if totals["dash_skipped"]:
            print("NOTE: `trawl match -- -PAT` does not take -PAT as the pattern; the %d "
                  "patterns starting with '-' were given to trawl as '\\-PAT'" %
                  totals["dash_skipped"])
    finally:
        if args.keep:
            print("trees kept in %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    t = totals
    git_evals = 2 * t["patterns"]
    print("git_wildmatch_diff%s: seeds %d..%d: %d trees (%d files), %d patterns (%d select "
          "something in git, %d under rule Q), %d git + %d trawl evaluations (trawl dialect: "
          "%d compared, %d rejected), %d verdicts compared, %d mismatches, %.1f s" %
          (" (sanitizer build, smaller run)" if sanitized else "",
           args.seed, args.seed + args.seeds - 1, t["trees"], t["files"], t["patterns"],
           t["git_nonempty"], t["quirk"], git_evals, t["evaluations"], t["trawl_compared"],
           t["trawl_rejected"], t["verdicts"], len(mismatches), time.monotonic() - start))
    if mismatches:
        where = sorted(set("the byte table" if m.tree == "bytes" else "seed %d" % m.seed
                           for m in mismatches))
        print("FAILED: mismatches in %s" % ", ".join(where))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
