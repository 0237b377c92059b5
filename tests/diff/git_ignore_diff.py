#!/usr/bin/env python3
r"""Differential test of trawl's gitignore support against real git.

    git_ignore_diff.py TRAWL_EXE [--seed N] [--seeds K] [--trees T] [--tree I]
                       [--subdirs S] [--jobs J] [--max-report M]
                       [--minimise G] [--keep] [--dump FILE]

For every seed, T trees are generated, each in its own temporary directory
TMP (under /dev/shm when it is writable) holding the tree TMP/repo, a fresh
`git init` repository with a random part of the tree in its index, and its
configuration:
GIT_CONFIG_NOSYSTEM=1, HOME=TMP/home, XDG_CONFIG_HOME=TMP/xdg and
GIT_CONFIG_GLOBAL=TMP/gitconfig, a file the test writes. git and trawl both
run with exactly that environment.

What a tree holds
-----------------
 - Directories up to six levels deep, files and symbolic links (to files, to
   directories, dangling). Names come from an alphabet with letters, digits,
   spaces (leading and trailing), '.', leading dots, '-', '_', '[', ']', '*',
   '?', '!', '#', '{', '}', ',', '\', tabs, bytes that are not UTF-8, and
   rarely a trailing CR or a newline; some are spelled like brace expansions
   ('{a,b}'); names repeat across directories so that one pattern meets
   several of them. No name starts with '.git'.
 - One tree in four has a nested repository: a directory (existing or new)
   with its own `git init`, .gitignore files and info/exclude.
 - Some repositories (one outer in ten, three nested in ten) are made with
   `git init --separate-git-dir`: their .git is a 'gitdir:' file (as in a
   submodule) and their info/exclude lives outside the tree.
 - Ignore files: the root .gitignore (nine trees in ten), .gitignore files in
   up to four subdirectories (and in the nested repository), .git/info/exclude
   (sometimes appended to git's default text) and an excludes file:
     core.excludesFile in $GIT_CONFIG_GLOBAL naming a generated file, as an
       absolute path (quoted or not, the name sometimes with a space) or as
       '~/NAME'; the key in several spellings, '[core]' or '[Core]', the key
       on the section line or not, with or without a trailing comment;
     or core.excludesFile unset and $XDG_CONFIG_HOME/git/ignore written;
     or both set (the XDG file, a decoy starting with '*', must not be read);
     or core.excludesFile empty or naming a missing file while the decoy
       exists (no excludes file at all); or none.
   One repository in ten sets its own core.excludesFile in its config (a
   file of its own, or empty: no excludes file for that repository).
 - The index (git's rules apply to untracked paths only): about a third of
   the files and links and of the in-tree ignore files, added with `git add
   -f` to the repository they are in, whatever the rules say of them; and in
   every tree a file and a directory at the top that the root .gitignore's
   last lines ignore, the file and two files inside the directory tracked,
   one beside them not — so every tree, not the seed, holds a tracked file
   its own rule ignores and tracked files inside an ignored directory. The
   outer index's form goes by the tree's number: as git writes it, in
   format 4, split (a shared index with changes on top), or with
   skip-worktree and intent-to-add entries (format 3); every other group of
   four trees commits it. The run fails if it covered none of one of these.
 - Lines, generated mostly from the paths below the ignore file's directory
   so that a good share match (and the outer repository's files also name
   paths inside the nested one, which must not reach there): blank lines and
   lines of spaces, '#' comments, '\#' and '\!' escapes (and the unescaped
   forms), trailing spaces (unescaped: trimmed; '\ ': kept), a trailing
   backslash, '!' negations (of a file under an ignored 'D/*' or 'D/**',
   which re-includes it, and under an ignored 'D', which cannot; of one file
   of an ignored extension; anywhere), a trailing '/', a leading '/' and
   inner '/' (anchored to the file's directory), leading '**/', trailing
   '/**', inner '/**/', '**' glued to other bytes (acts as '*'), '*', '?',
   '[a-c]', '[!x]', '[^x]', escaped bytes inside brackets, braces (literal in
   git), whitelist groups ('*' then '!*/' then '!*.c' ...) and fixed forms
   ('/', '!', '\', '**/.*/**', ...). Files get CRLF line ends (all or some
   lines), rarely a line ending in CR CR LF, a UTF-8 BOM, and an unterminated
   last line (in a CRLF file, half the time ending in its CR: a file cut
   before its last LF).

What is compared
----------------
Every path is one verdict.

 listing         `git ls-files -co --exclude-standard -z` at the top (the
                 tracked files and the untracked ones not ignored), against
                 `trawl -C TOP -H -0 '**'` (files and symbolic links; sets).
                 git prints a nested repository as one entry 'sub/' and does
                 not enter it; trawl enters it with that repository's own
                 rules, so the expected set has 'sub/' replaced by
                 `git -C sub ls-files -co --exclude-standard -z`, prefixed
                 (rule N1).
 listing -C D    The same from S (default 2) random subdirectories D that git
                 does not ignore, outside the nested repository: `git -C D
                 ls-files ...` (relative to D) against `trawl -C D -H -0 '**'`,
                 which must apply the ignore files of D's ancestors.
 verdict         Every path of the tree (files, directories, symbolic links;
                 not .git nor anything in it): `git check-ignore -v -n
                 --no-index -z --stdin` against `trawl explain -C TOP --format
                 json -H -t f -t d -t l '**' -- PATH...` (many paths per run,
                 one JSON object a line). git's (source, line, pattern) must
                 equal trawl's "ignore" (source, line, pattern), and "ignore"
                 must be null when git printed no rule. "tracked" must be
                 true exactly when that rule ignores the path (or a
                 directory above it) and `git ls-files -c` holds the path (a
                 directory: a path below it), rule T. Paths inside the
                 nested repository take that repository's answer (rule N1),
                 sources named as in rule N2.
 verdict nested  The nested repository's paths again, with `trawl explain -C
                 sub`, against `git -C sub check-ignore ...` as it is.
 verdict -C D    The paths below each D with `trawl explain -C D`, against
                 git's answers at the top (rule N2 for the sources).
 consistency     Each explain object on its own (not compared with git):
                 "path" is the path given; "type" is what lstat says;
                 "reason" is "ignored" iff "ignore" is non-null and not
                 negated (the paths are visible with
                 -H, '**' matches them and every type is asked) and not
                 "tracked", and otherwise "included"; "selected" is
                 (reason == "included"); "negated" agrees with the pattern's
                 leading '!'; "match" is the first ancestor of the path that
                 git's own verdicts ignore, else the path (rule A); and the
                 exit status is 0 when every path is selected, 1 otherwise.
 git itself      (a NOTE, never a failure) the files git lists at the top are
                 exactly those tracked and those its check-ignore answers
                 leave unignored. It has held on every tree so far.

Rules of the expected values
----------------------------
Each was established with real git (2.39):

 N1 (modelled)  Nested repositories. `git ls-files -o` prints a directory
                holding a repository as 'sub/' and does not look inside;
                `git check-ignore` knows nothing of nested repositories and
                answers with the outer rules. So the paths inside take the
                answers of `git -C sub ...`, unless the outer rules ignore
                'sub' itself (or a directory above it): then git never lists
                'sub/', trawl does not enter it, and the outer check-ignore
                answer stands (the rule that ignored the directory, rule A).
 N2 (modelled)  Sources. git check-ignore -v names a .gitignore relative to
                the top of the repository that answers, info/exclude as
                '.git/info/exclude' (its absolute path when .git is a gitdir
                file) and an excludes file by its absolute, '~'-expanded path.
                trawl names a rule file relative to its root (-C) when it is
                inside it, by its absolute path otherwise: so the expected
                source is git's with the nested repository's path in front
                (-C TOP), as it is (-C sub), or relative to D / absolute
                (-C D).
 T (modelled)   Tracked paths. gitignore(5): the rules apply to untracked
                files; `git ls-files -co --exclude-standard` lists every
                tracked file, below an ignored directory too, and no
                untracked one there. check-ignore --no-index still names the
                rule that would apply (what "ignore" holds); asked without
                --no-index it takes paths as pathspecs against the index
                ('a*' answering for a tracked 'ab') and refuses literal
                ones, so "tracked" is modelled from `git ls-files -c`: a
                directory holding a tracked path is tracked (check-ignore
                prints nothing for it either).
 A (used for "match")  For a path below an ignored directory, check-ignore
                prints the rule that ignored the first such directory, top
                down, whatever the rules say of the path itself (a negation
                cannot re-include it).
 X (not modelled: git is asked)  The excludes file. core.excludesFile, when
                set at all (even empty, or naming a missing file), is the only
                one: $XDG_CONFIG_HOME/git/ignore is then not read. A
                repository's own core.excludesFile wins over the global one.
                '~/' is expanded, inside quotes too. Git keys and section
                names are case-insensitive; '#' and ';' start comments.

git behaviours established on the way (git 2.39; each reproduces in a fresh
`git init` with `touch` of the paths named):
 - CRLF: one CR before the LF is dropped, then trailing spaces are trimmed:
   `printf 'b \r\n'` ignores 'b'. Only one: `printf 'x\r\r\n'` is the
   pattern 'x<CR>' (`git check-ignore -v --no-index "$(printf 'x\r')"`
   prints it). An unterminated last line loses its CR too, git adding the
   missing LF first: `printf 'a\r'` ignores 'a' and not 'a<CR>'. A CR
   elsewhere is an ordinary byte: `printf 'b\r \n'` is 'b<CR>'; a tab is
   never trimmed: `printf 'q\t\n'` matches 'q<TAB>' only.
 - BOM: skipped at the very start of the file only (then '#' after it is a
   comment); a second one, or one at the start of a later line, belongs to
   the pattern: `printf 'a\n\xef\xbb\xbfc\n'` ignores the file named
   BOM + 'c', not 'c'.
 - A trailing backslash: `printf 'a\\\n'` matches neither 'a' nor 'a\'.
 - `\ ` keeps a trailing space and check-ignore prints the pattern as
   written: `printf 'b \\ \n'` ignores 'b  ' (two spaces) and prints
   'b \ '; `printf 'd\\ /\n'` ignores the directory 'd '.
 - Lines that come out empty ('\r\n', a lone '!', a lone '/') match nothing.
 - '**' next to other bytes is '*': 'u**v' ignores 'uzv', not 'u/z/v'.
 - A directory-only pattern does not match a symbolic link to a directory:
   with `ln -s d l`, 'l/' leaves 'l' alone.
 - An ignored .gitignore is still read: with '/d/*' at the top and '!x' in
   d/.gitignore, d/x is listed and d/.gitignore is not.
 - check-ignore -v prints a negated rule with its '!', a directory-only one
   with its '/', escapes as written ('\#x', '!\!y').
 - `git -C D check-ignore` prints paths relative to D but sources relative
   to the top; this test asks check-ignore at tops only.

Not generated, where trawl is known to differ from git:
 - [include] sections of the configuration and core.ignoreCase=true: trawl
   reads neither (docs/ignore.md says so).
 - A config value continued on the next line (`excludesFile = /a/b\` then
   `c`): git reads '/a/bc', trawl '/a/b\'.
 - A directory holding a `.git` that is no repository (an empty `.git`
   directory, a 'gitdir:' file naming nothing): git treats it as an ordinary
   directory and applies the outer rules inside; trawl takes it for a nested
   repository and stops them there.

CI runs the defaults: seed 1, T = 80 trees, S = 2. Against a sanitizer build
of trawl (detected in the executable), where every process starts ten to
thirty times slower, T shrinks to 12 and no mismatch is minimised: that run
looks for memory errors and undefined behaviour (a sanitizer report on
stderr is a mismatch), the plain build's run checks the semantics.

Exit status: 0 when every verdict agrees, 1 on any mismatch, 77 (skip) when
git is missing. Mismatches are grouped per tree and check; the first
--max-report groups are printed with git's and trawl's answers, a command
that rebuilds the tree (--seed N --tree I --keep keeps it on disk), and, for
the first --minimise groups, a minimised reproduction (ignore lines, files
and entries dropped while the mismatch stays) as a shell script. Default
seed 1, so CI is deterministic; TRAWL_DIFF_SEED / TRAWL_DIFF_SEEDS in the
environment or --seed / --seeds choose others (e.g. --seeds 20 locally).
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
    return diffgen.name_ok(name, 40)


# ---------------------------------------------------------------------------
# Names

LETTERS = b"abcxyzABXY"
DIGITS = b"019"
PLAIN_PUNCT = b".-_ "
SPECIAL = b"[]*?!#{},\\"
HIGH = bytes([0xC3, 0xE9, 0xFF])  # none of them a valid UTF-8 sequence alone
CONTROL = b"\t"

ALPHABET = [(LETTERS, 56), (DIGITS, 8), (PLAIN_PUNCT, 14), (SPECIAL, 14), (HIGH, 3),
            (CONTROL, 1)]
EXTENSIONS = [b".c", b".h", b".o", b".txt", b".log", b".tar.gz", b".md", b".d"]

WILD = b"*?[\\"  # bytes a pattern must escape to mean themselves






def fresh_name(rng, ext_p=0.35):
    while True:
        r = rng.random()
        if r < 0.04:  # a name spelled like a brace expansion (literal in git)
            n = b"{%s,%s}" % (bytes([rng.choice(LETTERS)]), bytes([rng.choice(LETTERS)]))
        else:
            n = bytes(pick_byte(rng) for _ in range(rng.choice([1, 1, 2, 2, 3, 4, 5, 6])))
            if rng.random() < ext_p:
                n += rng.choice(EXTENSIONS)
        x = rng.random()
        if x < 0.10:
            n = b"." + n
        elif x < 0.14:
            n = rng.choice([b"#", b"!", b"-", b" "]) + n
        if rng.random() < 0.04:
            n += rng.choice([b" ", b"  "])  # trailing spaces: `\ ` in a pattern
        r = rng.random()
        if r < 0.01:
            n += b"\n"  # argv and -z carry it; no pattern can spell it literally
        elif r < 0.02:
            n += b"\r"  # a pattern for it must not end its line with it
        if name_ok(n):
            return n


def join(a, b):
    return a + b"/" + b if a else b


def parent(p):
    return p.rsplit(b"/", 1)[0] if b"/" in p else b""


def ancestors(p):
    """Proper ancestors of P, top-down."""
    comps = p.split(b"/")
    return [b"/".join(comps[:i]) for i in range(1, len(comps))]


def below(p, d):
    """Is P strictly below directory D ('' is the root)?"""
    return p.startswith(d + b"/") if d else bool(p)


# ---------------------------------------------------------------------------
# The model of a tree: entries, ignore files, configuration


class IgnoreFile:
    """An ignore file: BOM flag and its lines, each with its own terminator
    (b"\\n", b"\\r\\n" or none for an unterminated last line)."""

    def __init__(self, bom, lines):
        self.bom = bom
        self.lines = lines

    def content(self):
        return (b"\xef\xbb\xbf" if self.bom else b"") + b"".join(self.lines)

    def copy(self):
        return IgnoreFile(self.bom, list(self.lines))


class Model:
    """One generated tree.

    entries   path -> 'd', 'f' or ('l', target)
    files     the ignore files in the repositories, path -> IgnoreFile:
              b'.gitignore', b'a/.gitignore', b'.git/info/exclude' and, for
              the nested repository N, b'N/.gitignore', b'N/.git/info/exclude'
              (written to the separate git directory when N is in sepgit)
    nested    the nested repository's path, or None
    sepgit    repositories ('' the outer one) made with --separate-git-dir:
              their .git is a 'gitdir:' file, their git directory T/gitdir-K
    outside   files outside the tree, path relative to T -> IgnoreFile
              (b'global-excludes', b'home/x', b'xdg/git/ignore', ...)
    gconfig   text of T/gitconfig ($GIT_CONFIG_GLOBAL); '@T@' stands for T
    lconfig   repository path -> text appended to its own config file
    default_exclude  info/exclude files appended to git's default text
    tracked   paths (entries and in-tree ignore files) added to the index of
              the repository they are in, with `git add -f`
    ita       paths added as intent-to-add (`git add -N -f`)
    form      how the outer index is written: 'plain', 'v4' (format 4),
              'split' (a split index with changes on top of the shared one)
              or 'skip' (skip-worktree entries: format 3)
    commit    the tracked paths are committed, not only added"""

    def __init__(self):
        self.entries = {}
        self.files = {}
        self.nested = None
        self.sepgit = set()
        self.outside = {}
        self.gconfig = b""
        self.lconfig = {}
        self.default_exclude = set()
        self.tracked = set()
        self.ita = set()
        self.form = "plain"
        self.commit = False

    def copy(self):
        m = Model()
        m.entries = dict(self.entries)
        m.files = {k: v.copy() for k, v in self.files.items()}
        m.nested = self.nested
        m.sepgit = set(self.sepgit)
        m.outside = {k: v.copy() for k, v in self.outside.items()}
        m.gconfig = self.gconfig
        m.lconfig = dict(self.lconfig)
        m.default_exclude = set(self.default_exclude)
        m.tracked = set(self.tracked)
        m.ita = set(self.ita)
        m.form = self.form
        m.commit = self.commit
        return m

    def all_files(self):
        """(label, IgnoreFile) of every ignore file, in the tree or not."""
        return sorted(self.files.items()) + [(b"\0" + k, v)  # no path has a NUL
                                              for k, v in sorted(self.outside.items())]

    def get_file(self, label):
        if label.startswith(b"\0"):
            return self.outside.get(label[1:])
        return self.files.get(label)

    def drop_file(self, label):
        if label.startswith(b"\0"):
            del self.outside[label[1:]]
        else:
            del self.files[label]
            self.default_exclude.discard(label)


def make_entries(rng, m):
    pool = [fresh_name(rng) for _ in range(rng.randint(8, 14))]
    dpool = [fresh_name(rng, 0.05) for _ in range(rng.randint(5, 9))] + pool[:2]
    target = rng.randint(45, 110)
    dirs = [b""]

    def choose_name(d=False):
        if rng.random() < 0.6:
            return rng.choice(dpool if d else pool)
        return fresh_name(rng, 0.05 if d else 0.35)

    def fill(rel, depth):
        for _ in range(rng.randint(3, 8) if depth == 0 else rng.randint(1, 6)):
            if len(m.entries) >= target:
                return
            isdir = depth < 5 and rng.random() < (0.38 if depth < 2 else 0.22)
            path = join(rel, choose_name(isdir))
            if path in m.entries:
                continue
            if isdir:
                m.entries[path] = "d"
                dirs.append(path)
                fill(path, depth + 1)
            else:
                m.entries[path] = "f"

    while len(m.entries) < target // 2:
        fill(b"", 0)
    # Symbolic links: to files, to directories, dangling.
    for _ in range(rng.randint(0, 6)):
        d = rng.choice(dirs)
        path = join(d, choose_name())
        if path in m.entries:
            continue
        r = rng.random()
        if r < 0.4:
            to = rng.choice([p for p, k in m.entries.items() if k == "f"])
        elif r < 0.8:
            to = rng.choice(dirs[1:] or [b""]) or b"."
        else:
            to = b"missing-" + fresh_name(rng)
        if to == path:
            continue
        target_rel = os.path.relpath(to, d or b".") if not to.startswith(b"missing-") else to
        m.entries[path] = ("l", target_rel)
    # A nested repository, one tree in four.
    if rng.random() < 0.25:
        cands = [d for d in dirs[1:] if d.count(b"/") < 2]
        if cands and rng.random() < 0.7:
            m.nested = rng.choice(cands)
        else:
            name = fresh_name(rng, 0.05)
            base = rng.choice([b""] + [d for d in dirs[1:] if d.count(b"/") == 0])
            path = join(base, name)
            if path not in m.entries:
                m.entries[path] = "d"
                dirs.append(path)
                target += rng.randint(8, 20)
                fill(path, 1)
                m.nested = path
    return dirs


# ---------------------------------------------------------------------------
# Patterns


def bracket(rng, c):
    """A bracket expression matching the byte C (mostly)."""
    def lit(b):
        return b"\\" + bytes([b]) if b in b"]\\-!^[" else bytes([b])

    r = rng.random()
    if r < 0.35:
        extra = bytes([pick_byte(rng)]) if rng.random() < 0.5 else b""
        return b"[" + lit(c) + b"".join(lit(x) for x in extra) + b"]"
    if r < 0.65:
        lo, hi = max(1, c - rng.randint(0, 3)), min(255, c + rng.randint(0, 3))
        return b"[" + lit(lo) + b"-" + lit(hi) + b"]"
    if r < 0.85:
        o = pick_byte(rng)
        if o == c:
            o = ord("q") if c != ord("q") else ord("r")
        return b"[" + rng.choice([b"!", b"^"]) + lit(o) + b"]"
    o = pick_byte(rng)  # probably does not match: a miss is a verdict too
    return b"[" + lit(o) + b"]"


def literal(rng, comp):
    out = b""
    for c in comp:
        if c in WILD:
            out += b"\\" + bytes([c]) if rng.random() < 0.92 else bytes([c])
        elif rng.random() < 0.02:
            out += b"\\" + bytes([c])  # a needless escape
        else:
            out += bytes([c])
    return out


def mutate(rng, comp):
    r = rng.random()
    if r < 0.06:
        return b"*"
    if r < 0.09 and len(comp) > 1:
        return b"*" + literal(rng, comp[-1:])
    if r < 0.12:
        return literal(rng, comp[:1]) + b"*"
    out = b""
    i = 0
    while i < len(comp):
        x = rng.random()
        if x < 0.09:
            out += b"*"
            i += rng.randint(0, min(3, len(comp) - i))
        elif x < 0.17:
            out += b"?"
            i += 1
        elif x < 0.27:
            out += bracket(rng, comp[i])
            i += 1
        else:
            out += literal(rng, comp[i:i + 1])
            i += 1
    return out


def render(rng, comp):
    r = rng.random()
    if r < 0.55:
        return literal(rng, comp)
    if r < 0.95:
        return mutate(rng, comp)
    k = rng.randint(0, len(comp))  # '**' inside a component acts as '*'
    return literal(rng, comp[:k]) + b"**" + literal(rng, comp[k + rng.randint(0, 2):])


def derived(rng, rel, kind):
    """A pattern for REL (relative to the ignore file's directory), of a
    random gitignore(5) form."""
    comps = rel.split(b"/")
    n = len(comps)
    if n > 1 and rng.random() < 0.08:  # aim at an ancestor instead
        comps = comps[:rng.randint(1, n - 1)]
        n = len(comps)
        kind = "d"
    rc = [render(rng, c) for c in comps]
    form = rng.choices(["base", "anchor", "path", "lead", "trail", "inner"],
                       [30, 16, 14, 14, 12, 10])[0]
    if form == "base":
        pat = rc[-1]
    elif form == "anchor":
        pat = b"/" + b"/".join(rc)
    elif form == "path":
        pat = b"/".join(rc) if n > 1 else b"/" + rc[0]
    elif form == "lead":
        pat = b"**/" + b"/".join(rc[rng.randint(0, n - 1):])
    elif form == "trail":
        k = rng.randint(1, n)
        pat = (b"/" if k == 1 and rng.random() < 0.4 else b"") + b"/".join(rc[:k]) + b"/**"
    else:
        i = rng.randint(0, n - 1)
        j = rng.randint(i, n - 1)
        pat = b"/".join(rc[:i]) + (b"/**/" if i else b"**/") + b"/".join(rc[j:])
    if rng.random() < (0.45 if kind == "d" else 0.25 if isinstance(kind, tuple) else 0.08):
        pat += b"/"
    return pat


GENERIC = [b"*.o", b"*.c", b".*", b"*~", b"?", b"[a-c]*", b"*.[ch]", b"x*",
           b"**/*.txt", b"*.tar.*", b"/**/a*", b"*.log", b"[!a]*", b"[^.]*", b"{a,b}",
           b"*.{c,h}", b"\\#*", b"\\!*", b"#*", b"!*.c", b"a**", b"**b", b"*/**/*.md", b"?/",
           b".*/", b"*\\ ", b"* ", b"\\ *", b".gitignore", b"*ignore", b"!.gitignore",
           b"**/.*/**", b"\\", b"/", b"!", b"a\\", b"*\\", b"!*/", b"**/*.d/"]
# Ignore everything, then re-include: the classic whitelist files.
WHITELISTS = [[b"*", b"!*/", b"!*.c"], [b"/*", b"!/*/", b"!/*.c", b"!.gitignore"],
              [b"**", b"!**/"], [b"*", b"!*.[ch]", b"!*/"], [b"**/*", b"!**/*.md", b"!*/"],
              [b"*.*", b"!*.h"], [b"*", b"!/*", b"!*.o"]]


def pick(rng, cands):
    """A candidate, files more often than directories, deeper ones more often."""
    files = [c for c in cands if c[1] != "d"]
    dirs = [c for c in cands if c[1] == "d"]
    pool = files if files and (not dirs or rng.random() < 0.75) else dirs
    w = [1 + c[0].count(b"/") for c in pool]
    return rng.choices(pool, w)[0]


def finish(rng, pat, negate_p):
    """Prefix and suffix decorations of one pattern line (no terminator)."""
    if pat.startswith(b"#") and rng.random() < 0.85:
        pat = b"\\" + pat  # else it is a comment
    if pat.startswith(b"!") and rng.random() < 0.85:
        pat = b"\\" + pat  # else a negation of the rest
    if pat.endswith(b" ") and not pat.endswith(b"\\ ") and rng.random() < 0.85:
        pat = pat[:-1] + b"\\ "  # else the trailing space is trimmed
    if rng.random() < negate_p:
        pat = b"!" + pat
    r = rng.random()
    if r < 0.08:
        pat += rng.choice([b" ", b"  ", b"   "])  # trimmed
    elif r < 0.09:
        pat += b"\\"  # a trailing backslash
    return pat


def gen_lines(rng, cands, n):
    """About N pattern lines (without terminators) for an ignore file whose
    candidates CANDS are (path relative to the file's directory, kind)."""
    out = []
    while len(out) < n:
        r = rng.random()
        if r < 0.05 or not cands:
            out.append(rng.choice([b"", b" ", b"   "]))
        elif r < 0.10:
            out.append(b"#" + rng.choice([b"", b" comment", derived(rng, *pick(rng, cands))]))
        elif r < 0.16:
            out.append(finish(rng, rng.choice(GENERIC), 0.1))
        elif r < 0.175:
            out.extend(rng.choice(WHITELISTS))
        elif r < 0.28:
            # An ignored directory and a negation below it: re-including
            # works below 'D/*' or 'D/**', never below an ignored 'D'.
            dirs = [(p, k) for p, k in cands if k == "d"]
            if not dirs:
                continue
            d, _ = rng.choice(dirs)
            kids = [(p[len(d) + 1:], k) for p, k in cands if p.startswith(d + b"/")]
            first = derived(rng, d, "d")
            if rng.random() < 0.6 and not first.endswith(b"/**"):
                first = first.rstrip(b"/") + rng.choice([b"/*", b"/**", b"/*/"])
            out.append(finish(rng, first, 0.0))
            if kids:
                kp, kk = rng.choice(kids)
                tail = derived(rng, kp, kk)
                r2 = rng.random()
                if r2 < 0.4:
                    neg = literal(rng, d) + (tail if tail.startswith(b"/") else b"/" + tail)
                elif r2 < 0.7:
                    neg = tail.lstrip(b"/")
                else:
                    neg = b"**/" + tail.lstrip(b"/")
                out.append(b"!" + finish(rng, neg, 0.0))
        elif r < 0.36:
            # An extension and a negation of one file that has it.
            exts = [(p, e) for p, k in cands if k != "d"
                    for e in EXTENSIONS if p.endswith(e)]
            if not exts:
                continue
            p, e = rng.choice(exts)
            out.append(finish(rng, rng.choice([b"*", b"**/*", b"/*"]) + e, 0.0))
            out.append(b"!" + finish(rng, derived(rng, p, "f"), 0.0))
        else:
            out.append(finish(rng, derived(rng, *pick(rng, cands)), 0.12))
    return out


def make_file(rng, lines):
    """Terminators, CRLF, BOM and an unterminated last line."""
    r = rng.random()
    crlf = "all" if r < 0.2 else "some" if r < 0.27 else "none"
    term = []
    for _ in lines:
        if rng.random() < 0.02:
            term.append(b"\r\r\n")  # git strips one CR
        elif crlf == "all" or (crlf == "some" and rng.random() < 0.5):
            term.append(b"\r\n")
        else:
            term.append(b"\n")
    if lines and rng.random() < 0.25:
        # Unterminated; a CRLF file cut before its last LF ends in CR, which
        # git drops too (it adds the missing LF first).
        term[-1] = b"\r" if crlf != "none" and rng.random() < 0.5 else b""
    return IgnoreFile(rng.random() < 0.12, [l + t for l, t in zip(lines, term)])


def make_ignore_files(rng, m, dirs):
    kinds = m.entries

    def cands_below(base):
        """The entries below BASE, relative to it, with their kinds."""
        out = []
        for p, k in kinds.items():
            if below(p, base):
                out.append((p[len(base) + 1:] if base else p, k))
        return out

    outer_dirs = [d for d in dirs if d and not (m.nested and below(d, m.nested))]
    # Outer repository: root .gitignore, some subdirectories, info/exclude.
    # Their candidates include paths inside the nested repository, whose
    # rules must not reach there (only the nested directory itself).
    if rng.random() < 0.9:
        m.files[b".gitignore"] = make_file(rng, gen_lines(rng, cands_below(b""),
                                                          rng.randint(3, 11)))
    for d in rng.sample(outer_dirs, min(len(outer_dirs), rng.randint(0, 4))):
        if d == m.nested:
            continue
        m.files[join(d, b".gitignore")] = make_file(rng, gen_lines(rng, cands_below(d),
                                                                   rng.randint(1, 8)))
    if rng.random() < 0.6:
        m.files[b".git/info/exclude"] = make_file(rng, gen_lines(rng, cands_below(b""),
                                                                 rng.randint(1, 6)))
        if rng.random() < 0.3:
            m.default_exclude.add(b".git/info/exclude")
    if m.nested:
        inner = [d for d in dirs if below(d, m.nested)]
        if rng.random() < 0.8:
            m.files[join(m.nested, b".gitignore")] = make_file(
                rng, gen_lines(rng, cands_below(m.nested), rng.randint(2, 8)))
        for d in rng.sample(inner, min(len(inner), rng.randint(0, 2))):
            m.files[join(d, b".gitignore")] = make_file(rng, gen_lines(rng, cands_below(d),
                                                                       rng.randint(1, 6)))
        if rng.random() < 0.6:
            m.files[join(m.nested, b".git/info/exclude")] = make_file(
                rng, gen_lines(rng, cands_below(m.nested), rng.randint(1, 5)))
    # The global excludes file: its patterns are relative to the work tree of
    # whichever repository asks.
    gc = cands_below(b"")
    if m.nested:
        gc += cands_below(m.nested)
    make_config(rng, m, gc, cands_below)


def make_config(rng, m, gc, cands_below):
    """$GIT_CONFIG_GLOBAL, the excludes file it names or the XDG default, and
    sometimes a repository's own core.excludesFile."""
    r = rng.random()
    mode = ("config" if r < 0.55 else "xdg" if r < 0.77 else "both" if r < 0.87 else
            "none" if r < 0.92 else "missing" if r < 0.96 else "empty")
    gfile = make_file(rng, gen_lines(rng, gc, rng.randint(1, 6)))
    decoy = make_file(rng, [b"*"] + gen_lines(rng, gc, 2))  # read by nobody
    if mode in ("xdg", "both", "missing", "empty"):
        m.outside[b"xdg/git/ignore"] = gfile if mode == "xdg" else decoy
    text = b"[user]\n\tname = nobody\n" if rng.random() < 0.3 else b""
    if mode in ("config", "both", "missing", "empty"):
        name = b"global excludes" if rng.random() < 0.3 else b"global-excludes"
        v = rng.random()
        if mode == "empty":
            value = rng.choice([b"", b'""'])
        elif mode == "missing":
            value = b"@T@/missing-excludes"
        elif v < 0.2:
            m.outside[b"home/" + name] = gfile
            value = rng.choice([b"~/", b'"~/']) + name
            value += b'"' if value.startswith(b'"') else b""
        else:
            m.outside[name] = gfile
            value = b"@T@/" + name
            if v < 0.35:
                value = b'"' + value + b'"'
        section = rng.choice([b"[core]\n\t", b"[core]\n\t", b"[Core]\n\t", b"[core]\n",
                              b"[core] "])
        key = rng.choice([b"excludesFile", b"excludesFile", b"excludesfile", b"ExcludesFile"])
        eq = rng.choice([b" = ", b" = ", b"=", b" =  "])
        comment = rng.choice([b"", b"", b"", b" # comment", b" ;c"])
        text += section + key + eq + value + comment + b"\n"
    m.gconfig = text
    # A repository's own core.excludesFile wins over the global one; empty,
    # it turns the excludes file off.
    for k, repo in enumerate([b""] + ([m.nested] if m.nested else [])):
        if rng.random() < 0.1:
            name = b"local-excludes-%d" % k
            if rng.random() < 0.25:
                m.lconfig[repo] = b"[core]\n\texcludesFile =\n"
            else:
                m.outside[name] = make_file(rng, gen_lines(rng, cands_below(repo),
                                                           rng.randint(1, 5)))
                m.lconfig[repo] = b"[core]\n\texcludesFile = @T@/" + name + b"\n"
    # Repositories whose .git is a 'gitdir:' file (as submodules have).
    if rng.random() < 0.1:
        m.sepgit.add(b"")
    if m.nested and rng.random() < 0.3:
        m.sepgit.add(m.nested)


INDEX_FORMS = ["plain", "v4", "split", "skip"]


def make_tracked(rng, m, tree):
    """What the index holds: a random part of the tree (files, links, ignore
    files; in the nested repository too), and in every tree a file and a
    directory at the top that the root .gitignore's last lines ignore, the
    file and most of the directory tracked — so that every tree has a
    tracked file its own rule ignores and tracked files inside an ignored
    directory, whatever the rules generated before say (the last rule of
    the root .gitignore decides for the top's entries: no .gitignore is
    deeper, info/exclude and the excludes file come after it). The index's
    form and whether the paths are committed go by the tree's number, so
    that every run has each of them."""
    tag = bytes(rng.choice(LETTERS) for _ in range(3))
    d = b"zz-tracked-dir-" + tag
    f = b"zz-tracked-file-" + tag + rng.choice(EXTENSIONS)
    m.entries[d] = "d"
    m.entries[f] = "f"
    inside = [join(d, b"a" + rng.choice(EXTENSIONS)), join(d, b"sub"),
              join(d, b"sub/b" + rng.choice(EXTENSIONS)), join(d, b"untracked")]
    for p in inside:
        m.entries[p] = "d" if p.endswith(b"/sub") else "f"
    rules = [rng.choice([b"/" + d + b"/", d + b"/", b"/" + d, d + b"*/"]),
             rng.choice([b"/" + f, f, b"zz-tracked-file-*"])]
    root = m.files.get(b".gitignore")
    if root is None:
        root = m.files[b".gitignore"] = IgnoreFile(False, [])
    if root.lines and not root.lines[-1].endswith(b"\n"):
        root.lines[-1] += b"\n"  # an unterminated last line: it ends here now
    root.lines += [r + b"\n" for r in rules]
    m.tracked |= {f, inside[0], inside[2]}
    for p, k in m.entries.items():
        if k != "d" and p not in inside and rng.random() < 0.3:
            m.tracked.add(p)
    for p in m.files:
        if b".git/" not in p and rng.random() < 0.4:
            m.tracked.add(p)
    m.form = INDEX_FORMS[tree % len(INDEX_FORMS)]
    m.commit = (tree // len(INDEX_FORMS)) % 2 == 1
    if m.form == "skip":
        # Intent-to-add entries too: in the index, so tracked.
        untracked = sorted(p for p, k in m.entries.items() if k == "f" and p not in m.tracked)
        m.ita = set(rng.sample(untracked, min(2, len(untracked))))


def generate(seed, tree):
    rng = random.Random("trawl-ignore-diff:%d:%d" % (seed, tree))
    m = Model()
    dirs = make_entries(rng, m)
    make_ignore_files(rng, m, dirs)
    make_tracked(rng, m, tree)
    # A directory that holds an ignore file must exist (they are all in dirs).
    return m


# ---------------------------------------------------------------------------
# Materialising a model, scanning the disk


class Env:
    def __init__(self, trawl):
        self.trawl = trawl
        self.base = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        self.base.update(LC_ALL="C", LANG="C")

    def for_tree(self, tdir):
        env = dict(self.base)
        env.update(GIT_CONFIG_NOSYSTEM="1",
                   HOME=os.path.join(tdir, "home"),
                   XDG_CONFIG_HOME=os.path.join(tdir, "xdg"),
                   GIT_CONFIG_GLOBAL=os.path.join(tdir, "gitconfig"),
                   GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                   GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
        return env


class GitError(Exception):
    pass


def run_git(env, cwd, args, data=None):
    p = subprocess.run(["git", "-C", cwd] + args, env=env, input=data,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0 and not (args[0] == "check-ignore" and p.returncode == 1):
        raise GitError("git %s: exit %d: %s" % (" ".join(args), p.returncode,
                                               p.stderr.decode(errors="replace").strip()))
    return p.stdout


def gitdir(m, bt, repo):
    """The git directory of repository REPO ('' the outer one) of M in BT."""
    if repo in m.sepgit:
        return os.path.join(bt, b"gitdir-%d" % (0 if repo == b"" else 1))
    return os.path.join(bt, b"repo", repo, b".git") if repo else os.path.join(bt, b"repo",
                                                                               b".git")


def file_path(m, bt, p):
    """Where the ignore file P of M lives on disk."""
    for repo in ([m.nested] if m.nested else []) + [b""]:
        if p == join(repo, b".git/info/exclude"):
            return os.path.join(gitdir(m, bt, repo), b"info", b"exclude")
    return os.path.join(bt, b"repo", p)


def materialize(env, tdir, m):
    """Create the tree of M in TDIR/repo, with TDIR/home, TDIR/xdg and
    TDIR/gitconfig. Returns the git environment."""
    bt = os.fsencode(tdir)
    root = os.path.join(bt, b"repo")
    for d in (b"home", b"xdg", b"repo"):
        os.makedirs(os.path.join(bt, d), exist_ok=True)
    genv = env.for_tree(tdir)
    with open(os.path.join(bt, b"gitconfig"), "wb") as f:
        f.write(m.gconfig.replace(b"@T@", bt))
    for p, f in m.outside.items():
        full = os.path.join(bt, p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as out:
            out.write(f.content())

    def init(repo):
        path = os.path.join(root, repo) if repo else root
        if repo in m.sepgit:
            run_git(genv, path, ["init", "-q", b"--separate-git-dir=" + gitdir(m, bt, repo)])
        else:
            run_git(genv, path, ["init", "-q"])
        if repo in m.lconfig:
            with open(os.path.join(gitdir(m, bt, repo), b"config"), "ab") as out:
                out.write(m.lconfig[repo].replace(b"@T@", bt))

    init(b"")
    for p in sorted(m.entries):
        k = m.entries[p]
        full = os.path.join(root, p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if k == "d":
            os.makedirs(full, exist_ok=True)
        elif k == "f":
            with open(full, "wb"):
                pass
        else:
            os.symlink(k[1], full)
    if m.nested:
        init(m.nested)
    for p, f in m.files.items():
        full = file_path(m, bt, p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        mode = "ab" if p in m.default_exclude else "wb"
        with open(full, mode) as out:
            out.write(f.content())
    track(genv, root, m)
    return genv


def index_ops(m):
    """What makes the index of M: per repository ('' the outer one), a list
    of (git arguments, paths read from stdin or None), in order."""
    there = set(m.entries) | set(m.files)
    ops = []
    for repo in [b""] + ([m.nested] if m.nested else []):
        def mine(paths):
            return sorted(p[len(repo) + 1:] if repo else p for p in paths
                          if p in there and (below(p, repo) if repo else
                                             not (m.nested and below(p, m.nested))))
        paths = mine(m.tracked)
        add = ["add", "-f", "--pathspec-from-file=-", "--pathspec-file-nul"]
        steps = []
        form = m.form if repo == b"" else "plain"
        if form == "split" and paths:
            # Half in the shared index, then changes on top of it: an entry
            # replaced (skip-worktree), the other half added.
            half = paths[:len(paths) // 2]
            steps += [(add, half), (["update-index", "--split-index"], None),
                      (["-c", "splitIndex.maxPercentChange=100"] + add, paths[len(half):])]
            if half:
                steps.append((["-c", "splitIndex.maxPercentChange=100", "update-index",
                               "--skip-worktree", "-z", "--stdin"], half[:1]))
        elif paths:
            steps.append((add, paths))
        if form == "v4":
            steps.append((["update-index", "--index-version", "4"], None))
        if form == "skip" and paths:
            steps.append((["update-index", "--skip-worktree", "-z", "--stdin"], paths[::2]))
        ita = mine(m.ita)
        if form == "skip" and ita:
            steps.append((["add", "-N", "-f", "--pathspec-from-file=-", "--pathspec-file-nul"],
                          ita))
        if m.commit and repo == b"":
            steps.append((["commit", "-q", "--allow-empty", "-m", "tracked"], None))
        ops.append((repo, steps))
    return ops


def track(genv, root, m):
    """Add M's tracked paths to the index of their repositories, as
    index_ops() says (names literal, whatever bytes they hold)."""
    env = dict(genv, GIT_LITERAL_PATHSPECS="1")
    for repo, steps in index_ops(m):
        cwd = os.path.join(root, repo) if repo else root
        for args, paths in steps:
            data = None if paths is None else b"".join(p + b"\0" for p in paths)
            run_git(env, cwd, args, data)


def scan(root):
    """Every path below ROOT but .git directories: path -> 'f', 'd' or 'l'."""
    out = {}

    def walk(rel):
        with os.scandir(os.path.join(root, rel) if rel else root) as it:
            for e in it:
                if e.name == b".git":
                    continue
                p = join(rel, e.name)
                if e.is_symlink():
                    out[p] = "l"
                elif e.is_dir():
                    out[p] = "d"
                    walk(p)
                else:
                    out[p] = "f"

    walk(b"")
    return out


# ---------------------------------------------------------------------------
# git's answers


def git_list(env, cwd):
    out = run_git(env, cwd, ["ls-files", "-co", "--exclude-standard", "-z"])
    return [x for x in out.split(b"\0") if x]


def git_tracked(env, cwd):
    """The paths in the index (`git ls-files -c`), and every directory above
    one: what git's rules leave alone (gitignore(5): they apply to untracked
    files only; `git check-ignore` says nothing of a directory holding
    tracked files). Not asked of check-ignore itself: it takes paths as
    pathspecs, a tracked 'ab' answering for an untracked 'a*', and refuses
    literal ones."""
    out = run_git(env, cwd, ["ls-files", "-c", "-z"])
    files = set(x for x in out.split(b"\0") if x)
    return files | set(a for f in files for a in ancestors(f))


def git_check(env, cwd, paths):
    """{path: None or (source, line, pattern)} from git check-ignore
    --no-index: the rule that decides, whether the path is tracked or not."""
    if not paths:
        return {}
    out = run_git(env, cwd, ["check-ignore", "-v", "-n", "--no-index", "-z", "--stdin"],
                  b"".join(p + b"\0" for p in paths))
    f = out.split(b"\0")
    if f and f[-1] == b"":
        f.pop()
    if len(f) != 4 * len(paths):
        raise GitError("git check-ignore printed %d fields for %d paths" % (len(f), len(paths)))
    res = {}
    for i in range(0, len(f), 4):
        src, line, pat, path = f[i:i + 4]
        res[path] = (src, int(line), pat) if src or line or pat else None
    if set(res) != set(paths):
        raise GitError("git check-ignore answered for other paths than asked")
    return res


def ignored(v):
    return v is not None and not v[2].startswith(b"!")


def expected_listing(env, root, cwd_rel, nested):
    """git's listing from ROOT/CWD_REL, the nested repository's 'sub/' entry
    replaced by that repository's own listing."""
    cwd = os.path.join(root, cwd_rel) if cwd_rel else root
    out = set()
    for x in git_list(env, cwd):
        if x.endswith(b"/"):
            full = join(cwd_rel, x[:-1])
            if full != nested:
                raise GitError("git listed a directory that is no nested repository: %r" % x)
            out |= set(x + y for y in git_list(env, os.path.join(root, nested)))
        else:
            out.add(x)
    return out


# ---------------------------------------------------------------------------
# trawl's answers

EXPLAIN_ARGS = ["--format", "json", "-H", "-t", "f", "-t", "d", "-t", "l", "**", "--"]




def trawl_list(env, genv, cwd):
    p = subprocess.run([env.trawl, "-C", cwd, "-H", "-0", "**"], env=genv,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = p.stderr.decode(errors="replace").strip()
    return p.returncode, set(p.stdout.split(b"\0")[:-1]), err


def trawl_explain(env, genv, cwd, paths):
    """[(path, object or None)] and a list of errors, in chunks of argv."""
    res, errors = [], []
    i = 0
    while i < len(paths):
        chunk, size = [], 0
        while i < len(paths) and (not chunk or size + len(paths[i]) < 60000):
            chunk.append(paths[i])
            size += len(paths[i]) + 1
            i += 1
        p = subprocess.run([env.trawl, "explain", "-C", cwd] + EXPLAIN_ARGS + chunk,
                           env=genv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        err = p.stderr.decode(errors="replace").strip()
        lines = p.stdout.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        objs = []
        try:
            objs = [json.loads(l.decode("utf-8", "surrogateescape")) for l in lines]
            ok = len(objs) == len(chunk) and all(isinstance(o, dict) for o in objs)
        except ValueError:
            ok = False
        if ok and p.returncode != (0 if all(o.get("selected") is True for o in objs) else 1):
            errors.append("exit %d, but exit 0 means every path would be printed and 1 that "
                          "one would not" % p.returncode)
        if p.returncode not in (0, 1) or not ok or sanitizer_said(err):
            errors.append("exit %d, %d lines for %d paths%s%s" % (
                p.returncode, len(lines), len(chunk),
                "" if ok else " (not one JSON object per path)",
                ": " + (err[:500] + " ..." if len(err) > 500 else err) if err else ""))
            res.extend((c, None) for c in chunk)
        else:
            res.extend(zip(chunk, objs))
    return res, errors


def enc(s):
    return s.encode("utf-8", "surrogateescape") if isinstance(s, str) else s


def trawl_rule(obj):
    ig = obj.get("ignore")
    if ig is None:
        return None
    try:
        return (enc(ig["source"]), int(ig["line"]), enc(ig["pattern"]))
    except (KeyError, TypeError, ValueError, AttributeError):
        return ("<malformed>", 0, repr(ig).encode())


TYPES = {"f": "file", "d": "dir", "l": "symlink"}


def consistency(obj, path, kind, expect_match):
    """Problems of one explain object on its own (not compared with git)."""
    probs = []
    if enc(obj.get("path", "")) != path:
        probs.append("path %r" % obj.get("path"))
    if obj.get("type") != TYPES[kind]:
        probs.append("type %r, the path is a %s" % (obj.get("type"), TYPES[kind]))
    ig = obj.get("ignore")
    reason = obj.get("reason")
    if ig is not None and not isinstance(ig, dict):
        return probs + ["ignore is %r" % (ig,)]
    is_ign = ig is not None and ig.get("negated") is False and obj.get("tracked") is False
    if ig is not None and ig.get("negated") not in (True, False):
        probs.append("ignore.negated %r" % ig.get("negated"))
    if obj.get("tracked") not in (True, False):
        probs.append("tracked %r" % obj.get("tracked"))
    if (reason == "ignored") != is_ign:
        probs.append("reason %r with ignore %s, tracked %r" % (reason, json.dumps(ig),
                                                              obj.get("tracked")))
    if not is_ign and reason != "included":
        probs.append("reason %r for a visible, not ignored path that '**' matches" % reason)
    if obj.get("selected") is not (reason == "included"):
        probs.append("selected %r with reason %r" % (obj.get("selected"), reason))
    if ig is not None:
        pat = enc(ig.get("pattern", ""))
        if bool(ig.get("negated")) != pat.startswith(b"!"):
            probs.append("negated %r but pattern %r" % (ig.get("negated"), pat))
        if expect_match is not None and enc(ig.get("match", "")) != expect_match:
            probs.append("match %r, expected %r (the first ignored ancestor, else the path)"
                         % (ig.get("match"), expect_match.decode("utf-8", "surrogateescape")))
    return probs


# ---------------------------------------------------------------------------
# Checking one tree


class Mismatch:
    def __init__(self, seed, tree, kind, path, git_says, trawl_says, note="", where=b""):
        self.seed, self.tree, self.kind, self.path = seed, tree, kind, path
        self.git_says, self.trawl_says, self.note, self.where = git_says, trawl_says, note, where


def rule_str(v):
    if v is None:
        return "no rule"
    return "%s:%d:%s" % (show(v[0]), v[1], show(v[2]))


def check_model(env, tdir, m, seed, tree, stats, subdirs=2, only=None):
    """Materialise M in TDIR and compare. ONLY = (kind, path, where) limits
    the work to what one mismatch needs (for the minimiser)."""
    genv = materialize(env, tdir, m)
    root = os.path.join(os.fsencode(tdir), b"repo")
    disk = scan(root)
    nested = m.nested
    mm = []
    notes = []

    def want(kind):
        return only is None or only[0] == kind

    outer = [p for p in disk if not (nested and below(p, nested))]
    inner = [p for p in disk if nested and below(p, nested)]
    inner_rel = [p[len(nested) + 1:] for p in inner]
    if only is not None and only[0].startswith("verdict"):
        full = (join(nested, only[1]) if only[0] == "verdict nested" else
                join(only[2], only[1]))
        keep = set([full] + ancestors(full))
        outer = [p for p in outer if p in keep]
        inner = [p for p in inner if p in keep]
        inner_rel = [p[len(nested) + 1:] for p in inner]
    g_outer = git_check(genv, root, sorted(outer + inner))
    g_inner = git_check(genv, os.path.join(root, nested), sorted(inner_rel)) if nested else {}
    t_outer = git_tracked(genv, root)
    t_inner = git_tracked(genv, os.path.join(root, nested)) if nested else set()
    sub_ignored = nested is not None and nested in g_outer and ignored(g_outer[nested])
    if only is not None and only[0] in ("listing -C D", "verdict -C D") and \
            ignored(g_outer.get(only[2])):
        return mm, disk, notes  # D is ignored now: not a tree the test would make

    def prefixed(v):
        if v is None or v[0].startswith(b"/"):
            return v
        return (join(nested, v[0]), v[1], v[2])

    # Expected verdicts for trawl -C ROOT and for trawl -C NESTED.
    exp_root = {p: g_outer[p] for p in outer}
    for p, q in zip(inner, inner_rel):
        exp_root[p] = g_outer[p] if sub_ignored else prefixed(g_inner[q])
    exp_sub = {q: g_inner[q] for q in inner_rel}
    # Expected "tracked": a rule would leave it out (its own, or an ignored
    # directory's above it), and the index holds it.
    tr_root = {p: ignored(g_outer[p]) and p in t_outer for p in outer}
    for p, q in zip(inner, inner_rel):
        tr_root[p] = (ignored(g_outer[p]) and p in t_outer if sub_ignored else
                      ignored(g_inner[q]) and q in t_inner)
    tr_sub = {q: ignored(g_inner[q]) and q in t_inner for q in inner_rel}

    def first_ignored(path, exp):
        for a in ancestors(path):
            if a in exp and ignored(exp[a]):
                return a
        return path

    for p in exp_root:
        v = exp_root[p]
        if ignored(v):
            stats["ignored"] += 1
        elif v is not None:
            stats["negated"] += 1
        else:
            stats["unmatched"] += 1
        if v is not None:
            stats["from_excludes_file" if v[0].startswith(b"/") else
                  "from_info_exclude" if v[0].endswith(b"info/exclude") else
                  "from_gitignore"] += 1
        if tr_root[p]:
            stats["tracked_kept"] += 1
            if disk[p] != "d":
                stats["tracked_own_rule" if first_ignored(p, exp_root) == p else
                      "tracked_below_ignored"] += 1

    def says(v, tracked):
        return rule_str(v) + (", tracked" if tracked else "")

    def compare_verdicts(kind, cwd, exp, exp_tr, kinds, where=b""):
        if not want(kind) or not exp or (only is not None and only[2] != where):
            return
        paths = sorted(exp)
        if only is not None:
            paths = [p for p in paths if p == only[1]]
        res, errors = trawl_explain(env, genv, cwd, paths)
        for e in errors:
            mm.append(Mismatch(seed, tree, kind + " error", b"", "-", e, where=where))
        for p, obj in res:
            if obj is None:
                continue
            stats["verdicts"] += 1
            got = trawl_rule(obj)
            got_tr = obj.get("tracked")
            if got != exp[p] or got_tr is not exp_tr[p]:
                mm.append(Mismatch(seed, tree, kind, p, says(exp[p], exp_tr[p]),
                                   says(got, got_tr), "trawl says %s" % json.dumps(obj), where))
            probs = consistency(obj, p, kinds[p], first_ignored(p, exp))
            if probs:
                mm.append(Mismatch(seed, tree, kind + " consistency", p, rule_str(exp[p]),
                                   "; ".join(probs), json.dumps(obj), where))

    compare_verdicts("verdict", root, exp_root, tr_root, disk)
    if nested:
        compare_verdicts("verdict nested", os.path.join(root, nested), exp_sub, tr_sub,
                         {q: disk[p] for p, q in zip(inner, inner_rel)})

    def compare_listing(kind, cwd_rel):
        if not want(kind) or (only is not None and only[2] != cwd_rel):
            return
        exp = expected_listing(genv, root, cwd_rel, nested)
        rc, got, err = trawl_list(env, genv, os.path.join(root, cwd_rel) if cwd_rel else root)
        if rc != 0 or sanitizer_said(err):
            mm.append(Mismatch(seed, tree, kind + " error", b"", "-",
                               "exit %d: %s" % (rc, err[:500]), where=cwd_rel))
        universe = set(p[len(cwd_rel) + 1:] if cwd_rel else p
                       for p, k in disk.items() if k != "d" and below(p, cwd_rel))
        stats["listed"] += len(universe | got)
        for p in sorted(exp ^ got):
            if only is not None and p != only[1]:
                continue
            mm.append(Mismatch(seed, tree, kind, p, "lists" if p in exp else "does not list",
                               "lists" if p in got else "does not list", where=cwd_rel))
        return exp

    exp_list = compare_listing("listing", b"")
    if only is None:
        # The oracle against itself: the files git lists are those tracked
        # and those check-ignore leaves unignored (it reports an ignored
        # ancestor's rule for the paths below it).
        by_check = set()
        for p in outer:
            if (ignored(g_outer[p]) and p not in t_outer) or (disk[p] == "d" and p != nested):
                continue
            if p != nested:
                by_check.add(p)
                continue
            for q in inner_rel:
                if disk[join(nested, q)] != "d" and (not ignored(g_inner[q]) or q in t_inner):
                    by_check.add(join(nested, q))
        stats["git_self_checked"] += 1
        if by_check != exp_list:
            notes.append("seed %d tree %d: git ls-files and git check-ignore disagree on %s" % (
                seed, tree, ", ".join(show(x) for x in sorted(by_check ^ exp_list)[:5])))
    # Subdirectories to list from: not ignored, not in the nested repository.
    rng = random.Random("trawl-ignore-diff-sub:%d:%s" % (seed, tree))
    cands = sorted(p for p in outer if disk[p] == "d" and p != nested
                   and not ignored(g_outer.get(p)))

    def from_d(d):
        """Expected verdicts for trawl explain -C D, from git's at the top:
        a rule file inside D is named relative to D, any other by its
        absolute path."""
        exp, exp_tr = {}, {}
        for p, v in exp_root.items():
            if not below(p, d):
                continue
            if v is not None and not v[0].startswith(b"/"):
                src = v[0][len(d) + 1:] if below(v[0], d) else os.path.join(root, v[0])
                v = (src, v[1], v[2])
            exp[p[len(d) + 1:]] = v
            exp_tr[p[len(d) + 1:]] = tr_root[p]
        return exp, exp_tr

    if only is not None:
        chosen = [only[2]] if only[0] in ("listing -C D", "verdict -C D") else []
    else:
        chosen = rng.sample(cands, min(subdirs, len(cands)))
    for d in chosen:
        compare_listing("listing -C D", d)
        compare_verdicts("verdict -C D", os.path.join(root, d), *from_d(d),
                         {p[len(d) + 1:]: k for p, k in disk.items() if below(p, d)}, where=d)
    return mm, disk, notes


# ---------------------------------------------------------------------------
# Reporting and minimising




def printf_word(b):
    """A printf format string writing exactly B."""
    out = []
    for c in b:
        if c == ord("%"):
            out.append("%%")
        elif c == ord("\\"):
            out.append("\\\\")
        elif c == ord("'"):
            out.append("'\\''")
        elif 32 <= c < 127:
            out.append(chr(c))
        else:
            out.append("\\%03o" % c)
    return "'" + "".join(out) + "'"


def sh_text(b):
    """printf arguments writing B, each '@T@' in it as "$T"."""
    parts = b.split(b"@T@")
    return "'%s'%s" % ("%s".join(printf_word(x)[1:-1] for x in parts),
                       ' "$T"' * (len(parts) - 1))


def repro_script(trawl, m, mis):
    """A shell script that builds the (minimised) tree and asks both tools."""
    lines = ["T=$(mktemp -d) && cd \"$T\" && mkdir home xdg && "
             "export GIT_CONFIG_NOSYSTEM=1 HOME=$T/home XDG_CONFIG_HOME=$T/xdg "
             "GIT_CONFIG_GLOBAL=$T/gitconfig"]
    lines.append("printf %s > gitconfig" % sh_text(m.gconfig))
    for p, f in sorted(m.outside.items()):
        if b"/" in p:
            lines.append("mkdir -p %s" % show(parent(p)))
        lines.append("printf %s > %s" % (printf_word(f.content()), show(p)))

    def gd(repo):
        if repo in m.sepgit:
            return '"$T"/gitdir-%d' % (0 if repo == b"" else 1)
        return show(join(repo, b".git"))

    def init(repo, where):
        sep = " --separate-git-dir=%s" % gd(repo) if repo in m.sepgit else ""
        lines.append("git -C %s init -q%s" % (where, sep))
        if repo in m.lconfig:
            lines.append("printf %s >> %s/config" % (sh_text(m.lconfig[repo]), gd(repo)))

    lines.append("mkdir repo && cd repo")
    init(b"", ".")
    for p in sorted(m.entries):
        k = m.entries[p]
        if k == "d":
            lines.append("mkdir %s" % show(p))
        elif k == "f":
            lines.append(": > %s" % show(p))
        else:
            lines.append("ln -s %s %s" % (show(k[1]), show(p)))
    if m.nested:
        init(m.nested, show(m.nested))
    for p, f in sorted(m.files.items()):
        op = ">>" if p in m.default_exclude else ">"
        where = show(p)
        for repo in ([m.nested] if m.nested else []) + [b""]:
            if p == join(repo, b".git/info/exclude"):
                where = gd(repo) + "/info/exclude"
        lines.append("printf %s %s %s" % (printf_word(f.content()), op, where))
    for repo, steps in index_ops(m):
        for args, paths in steps:
            cmd = "GIT_LITERAL_PATHSPECS=1 git -C %s %s" % (
                show(repo) if repo else ".", " ".join(args))
            if paths is not None:
                cmd = "printf %s | %s" % (printf_word(b"".join(x + b"\0" for x in paths)), cmd)
            lines.append(cmd)
    if mis.kind.startswith("verdict"):
        path = mis.path
        if mis.kind.startswith("verdict -C D"):
            cwd = show(mis.where)
            lines.append("git check-ignore -v -n --no-index -- %s   # from the top; trawl "
                         "names rule files outside %s by their absolute path" % (
                             show(join(mis.where, path)), cwd))
        elif mis.kind.startswith("verdict nested"):
            cwd = show(m.nested)
            lines.append("git -C %s check-ignore -v -n --no-index -- %s" % (cwd, show(path)))
        elif m.nested and below(path, m.nested):
            cwd = "."
            lines.append("git -C %s check-ignore -v -n --no-index -- %s   # the nested "
                         "repository's answer" % (show(m.nested), show(path[len(m.nested) + 1:])))
            lines.append("git check-ignore -v -n --no-index -- %s   # the outer one's, which "
                         "counts when it ignores %s" % (show(path), show(m.nested)))
        else:
            cwd = "."
            lines.append("git check-ignore -v -n --no-index -- %s" % show(path))
        lines.append("%s explain -C %s --format json -H -t f -t d -t l '**' -- %s" %
                     (trawl, cwd, show(path)))
    else:
        cwd = show(mis.where) if mis.where else "."
        lines.append("git -C %s ls-files -co --exclude-standard" % cwd)
        lines.append("%s -C %s -H '**'" % (trawl, cwd))
    return "\n".join("    " + l for l in lines)


def same_failure(a, b):
    return a.kind == b.kind and a.path == b.path and a.where == b.where


def minimise(env, tmp, m, mis, budget):
    """Greedy reduction of M that keeps MIS failing: (model, mismatch)."""
    deadline = time.monotonic() + budget
    counter = [0]
    only = (mis.kind, mis.path, mis.where)
    if mis.kind.endswith(" consistency"):
        only = (mis.kind[:-len(" consistency")], mis.path, mis.where)
    if mis.kind.startswith("verdict nested"):
        fullpath = join(m.nested, mis.path)
    else:
        fullpath = join(mis.where, mis.path)

    def fails(cand):
        if time.monotonic() > deadline:
            return None
        counter[0] += 1
        d = os.path.join(tmp, "min-%d" % counter[0])
        os.mkdir(d)
        try:
            res, _, _ = check_model(env, d, cand, mis.seed, mis.tree, Stats(), 0, only)
        except (OSError, GitError):
            return None
        finally:
            shutil.rmtree(d, ignore_errors=True)
        for r in res:
            if same_failure(r, mis):
                return r
        return None

    cur, last = m, mis

    def attempt(cand):
        nonlocal cur, last
        r = fails(cand)
        if r is not None:
            cur, last = cand, r
            return True
        return False

    def needed(p):
        """Entries that must stay: the path's ancestors and itself, the
        nested root and the directories of ignore files."""
        keep = set(ancestors(fullpath) + [fullpath]) if fullpath else set()
        if mis.where:
            keep |= set(ancestors(mis.where) + [mis.where])
        if cur.nested:
            keep.add(cur.nested)
            keep |= set(ancestors(cur.nested))
        for f in cur.files:
            d = parent(f)
            if not d.endswith(b".git/info") and d:
                keep |= set(ancestors(d) + [d])
        return p in keep

    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        # Whole ignore files and configuration.
        for f, _ in cur.all_files():
            c = cur.copy()
            c.drop_file(f)
            changed |= attempt(c)
        if cur.gconfig:
            c = cur.copy()
            c.gconfig = b""
            changed |= attempt(c)
        for r in sorted(cur.lconfig):
            c = cur.copy()
            del c.lconfig[r]
            changed |= attempt(c)
        for r in sorted(cur.sepgit):
            c = cur.copy()
            c.sepgit.discard(r)
            changed |= attempt(c)
        # The index: its form, then what it holds, in halves.
        if cur.form != "plain" or cur.commit or cur.ita:
            c = cur.copy()
            c.form, c.commit, c.ita = "plain", False, set()
            changed |= attempt(c)
        held = sorted(cur.tracked)
        step = max(1, len(held) // 2)
        while step >= 1 and held:
            for i in range(0, len(held), step):
                c = cur.copy()
                c.tracked -= set(held[i:i + step])
                if attempt(c):
                    changed = True
            held = sorted(cur.tracked)
            step //= 2
        # The nested repository, when the path is not in it.
        if cur.nested and not below(fullpath, cur.nested) and "nested" not in mis.kind:
            c = cur.copy()
            c.files = {k: v for k, v in c.files.items()
                       if not k.startswith(join(cur.nested, b".git/"))}
            c.nested = None
            c.sepgit.discard(cur.nested)
            c.lconfig.pop(cur.nested, None)
            changed |= attempt(c)
        # Lines, in halves and then one by one.
        for f, _ in cur.all_files():
            def get(model):
                return model.get_file(f)
            if get(cur) is None:
                continue
            n = len(get(cur).lines)
            step = max(1, n // 2)
            while step >= 1:
                i = 0
                while i < len(get(cur).lines):
                    c = cur.copy()
                    del get(c).lines[i:i + step]
                    if attempt(c):
                        changed = True
                    else:
                        i += step
                step //= 2
        # Entries: whole subtrees not needed, deepest last.
        for p in sorted(cur.entries, key=lambda x: (x.count(b"/"), x)):
            if p not in cur.entries or needed(p):
                continue
            c = cur.copy()
            for q in list(c.entries):
                if q == p or below(q, p):
                    del c.entries[q]
            c.files = {k: v for k, v in c.files.items() if not below(k, p)}
            changed |= attempt(c)
        # Decorations: BOM, CRLF, default info/exclude text.
        for f, src in cur.all_files():
            if cur.get_file(f) is None:
                continue
            if src.bom:
                c = cur.copy()
                c.get_file(f).bom = False
                changed |= attempt(c)
            for i, l in enumerate(cur.get_file(f).lines):
                if l.endswith(b"\r\n"):
                    c = cur.copy()
                    c.get_file(f).lines[i] = l[:-2] + b"\n"
                    changed |= attempt(c)
            if f in cur.default_exclude:
                c = cur.copy()
                c.default_exclude.discard(f)
                changed |= attempt(c)
    return cur, last


# ---------------------------------------------------------------------------


class Stats(dict):
    def __missing__(self, k):
        return 0


def run_tree(env, args, seed, tree, tmp):
    m = generate(seed, tree)
    tdir = os.path.join(tmp, "s%d-t%d" % (seed, tree))
    os.mkdir(tdir)
    stats = Stats()
    try:
        mm, disk, notes = check_model(env, tdir, m, seed, tree, stats, args.subdirs)
    except GitError as e:
        raise SystemExit("git_ignore_diff: seed %d tree %d: %s (a generator bug)" %
                         (seed, tree, e))
    stats["trees"] = 1
    stats["nested"] = int(bool(m.nested))
    stats["paths"] = len(disk)
    stats["ignore_files"] = len(m.all_files())
    stats["sepgit"] = len(m.sepgit)
    stats["lconfig"] = len(m.lconfig)
    stats["form_" + m.form] = 1
    stats["committed"] = int(m.commit)
    for _, f in m.all_files():
        stats["crlf_files"] += any(l.endswith(b"\r\n") for l in f.lines)
        stats["bom_files"] += f.bom
    if not args.keep:
        shutil.rmtree(tdir, ignore_errors=True)
    return mm, stats, m, notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trawl", help="path of the trawl executable")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("TRAWL_DIFF_SEED", "1")))
    ap.add_argument("--seeds", type=int, default=int(os.environ.get("TRAWL_DIFF_SEEDS", "1")),
                    help="run seeds SEED .. SEED+SEEDS-1")
    ap.add_argument("--trees", type=int, help="trees per seed (default 80; 12 when sanitized)")
    ap.add_argument("--tree", type=int, help="run only this tree of each seed")
    ap.add_argument("--subdirs", type=int, default=2,
                    help="subdirectories listed from, per tree (default 2)")
    ap.add_argument("--jobs", type=int, default=0, help="trees checked at once (0: CPUs)")
    ap.add_argument("--max-report", type=int, default=10)
    ap.add_argument("--minimise", type=int,
                    help="mismatch groups to minimise into a small reproduction "
                         "(default 2; 0 when sanitized)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary trees")
    ap.add_argument("--dump", metavar="FILE",
                    help="write every mismatch to FILE, one JSON object a line")
    args = ap.parse_args()

    if shutil.which("git") is None:
        print("git_ignore_diff: git not found, skipping")
        return 77
    start = time.monotonic()
    with open(args.trawl, "rb") as exe:
        sanitized = any(x in exe.read() for x in (b"__asan_init", b"__ubsan_handle_"))
    if args.trees is None:
        args.trees = 12 if sanitized else 80
    if args.minimise is None:
        args.minimise = 0 if sanitized else 2
    shm = "/dev/shm"
    base = shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None
    tmp = tempfile.mkdtemp(prefix="trawl-ignorediff-", dir=base)
    env = Env(os.path.abspath(args.trawl))
    jobs = args.jobs or min(8, os.cpu_count() or 2)
    totals = Stats()
    mismatches = []
    notes = []
    models = {}
    try:
        work = [(s, t) for s in range(args.seed, args.seed + args.seeds)
                for t in ([args.tree] if args.tree is not None else range(args.trees))]
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for (s, t), (mm, st, m, nt) in zip(work, pool.map(
                    lambda st: run_tree(env, args, st[0], st[1], tmp), work)):
                mismatches.extend(mm)
                notes.extend(nt)
                for k, v in st.items():
                    totals[k] += v
                if mm:
                    models[(s, t)] = m
        if args.dump:
            with open(args.dump, "w") as out:
                for x in mismatches:
                    out.write(json.dumps({k: (v.decode("latin-1") if isinstance(v, bytes) else v)
                                          for k, v in vars(x).items()}) + "\n")
        groups = {}
        for x in mismatches:
            groups.setdefault((x.seed, x.tree, x.kind, x.where), []).append(x)
        minimised = 0
        for ms in list(groups.values())[: args.max_report]:
            x = ms[0]
            print("MISMATCH [%s] seed %d, tree %d%s" % (
                x.kind, x.seed, x.tree, ", listed from %s" % show(x.where) if x.where else ""))
            if x.path:
                print("  path     %s" % show(x.path))
            print("  git      %s" % x.git_says)
            print("  trawl    %s" % x.trawl_says)
            if x.note:
                print("  note     %s" % x.note)
            if len(ms) > 1:
                print("  and      %d more: %s" % (len(ms) - 1, ", ".join(
                    "%s (git %s, trawl %s)" % (show(y.path), y.git_says, y.trawl_says)
                    for y in ms[1:4]) + (", ..." if len(ms) > 4 else "")))
            print("  rerun    %s %s --seed %d --tree %d --keep" % (
                os.path.abspath(__file__), env.trawl, x.seed, x.tree))
            if minimised < args.minimise and x.path and not x.kind.endswith("error"):
                minimised += 1
                small, last = minimise(env, tmp, models[(x.seed, x.tree)], x, 25)
                print("  minimal  (%d entries, %d ignore lines) git %s, trawl %s" % (
                    len(small.entries),
                    sum(len(f.lines) for _, f in small.all_files()),
                    last.git_says, last.trawl_says))
                print(repro_script(env.trawl, small, last))
        if len(groups) > args.max_report:
            print("... and %d more groups of mismatches" % (len(groups) - args.max_report))
        for n in notes:
            print("NOTE (git, not trawl): " + n)
    finally:
        if args.keep:
            print("trees kept in %s (each: repo/, gitconfig, home/, xdg/; run git and trawl "
                  "with GIT_CONFIG_NOSYSTEM=1 HOME=.../home XDG_CONFIG_HOME=.../xdg "
                  "GIT_CONFIG_GLOBAL=.../gitconfig)" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    t = totals
    print("git_ignore_diff%s: seeds %d..%d: %d trees (%d nested repositories, %d "
          "repositories with a gitdir file, %d with their own core.excludesFile; %d paths; "
          "%d ignore files, %d with CRLF, %d with a BOM; indexes: %s, %d committed); "
          "%d explain verdicts compared (git: %d ignored, %d "
          "re-included by a negation, %d no rule, %d kept by the index: %d tracked files their "
          "own rule ignores, %d inside an ignored directory; rules from .gitignore %d, "
          "info/exclude %d, excludes files %d), %d listing verdicts compared; git's listing and "
          "check-ignore agreed on %d of %d trees; %d mismatches, %.1f s" %
          (" (sanitizer build, smaller run)" if sanitized else "", args.seed,
           args.seed + args.seeds - 1, t["trees"], t["nested"], t["sepgit"], t["lconfig"],
           t["paths"], t["ignore_files"], t["crlf_files"], t["bom_files"],
           ", ".join("%d %s" % (t["form_" + f], f) for f in INDEX_FORMS), t["committed"],
           t["verdicts"], t["ignored"], t["negated"], t["unmatched"], t["tracked_kept"],
           t["tracked_own_rule"], t["tracked_below_ignored"], t["from_gitignore"],
           t["from_info_exclude"], t["from_excludes_file"], t["listed"],
           t["git_self_checked"] - len(notes), t["git_self_checked"], len(mismatches),
           time.monotonic() - start))
    # Every run covers what it claims: each tree is made to hold a tracked
    # file its own rule ignores and tracked files inside an ignored
    # directory (make_tracked), and the index forms go by tree number.
    uncovered = [what for what, n in (
        ("a tracked file its own rule ignores", t["tracked_own_rule"]),
        ("a tracked file inside an ignored directory", t["tracked_below_ignored"]))
        if n == 0]
    if args.tree is None and args.trees >= len(INDEX_FORMS):
        uncovered += ["an index in form '%s'" % f for f in INDEX_FORMS if t["form_" + f] == 0]
    if uncovered:
        print("FAILED: the run covered no " + ", no ".join(uncovered))
        return 1
    if mismatches:
        print("FAILED: mismatches in seed%s %s" % (
            "s" if len(set(x.seed for x in mismatches)) > 1 else "",
            ", ".join(str(s) for s in sorted(set(x.seed for x in mismatches)))))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
