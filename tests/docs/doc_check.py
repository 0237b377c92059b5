#!/usr/bin/env python3
"""The docs, run: every command and example in README.md, docs/*.md and
docs/benchmarks/*.md (not the ADRs: records of decisions, as they were
taken), and every path they name (suite 'docs'; docs/index.md "Docs that CI keeps true").

usage: doc_check.py --source DIR --build DIR --trawl EXE [--only DOC]... [-v]

Prints TAP (meson's protocol 'tap': one test case per line, skips counted
apart). What each fenced block is, and what is done with it:

  transcript   lines starting with `$ ` are commands; the lines after one,
               up to the next `$ `, are what it prints (stdout and stderr,
               as they come). Each command runs in the doc's sandbox, one
               shell per block (a `cd` carries to the next block of the same
               doc), and its output must equal the lines shown, except that
               a line `...` stands for any lines, and times (`0.9 ms`,
               `milliseconds: 2.113`) are not compared. A command shown
               without output must exit 0. `$ cat FILE` of a FILE the sandbox
               lacks writes the lines shown into FILE first: the doc shows a
               file to make.
  commands     a `sh` block without `$ `: every line (continued by a final
               `\\`) is a command, run in the sandbox, and must exit 0.
  synopsis     an unlabelled block whose lines start with `trawl`: the
               command must exist, and every option it names must be in that
               command's --help.
  python       compiled (a syntax check); run when marked `run`.
  illustration an unlabelled block that is none of the above (output or a
               format shown without a command): nothing to run; skipped.
  other        c, cmake, meson, ninja, ini, ...: must be marked, `skip` with
               the reason or `file` (written into the sandbox for the blocks
               after it to use); an unmarked one fails.

Marks are HTML comments on the lines just before a block (several may be
stacked); a reader of the rendered page does not see them:

  <!-- doc-test skip: WHY -->    not run; the reason is printed with the skip
  <!-- doc-test setup: SHELL --> run SHELL in the sandbox first (may span lines)
  <!-- doc-test skip-command: PREFIX -- WHY -->  not run: the commands of
                                 the block that start with PREFIX
  <!-- doc-test fresh -->        run in a new empty directory (the blocks
                                 after it go on in the doc's own)
  <!-- doc-test file: NAME -->   write the block to NAME in the sandbox
  <!-- doc-test installed -->    with trawl installed (`meson install
                                 --destdir` of the build, once): PATH,
                                 PKG_CONFIG_PATH, CMAKE_PREFIX_PATH and
                                 LD_LIBRARY_PATH lead to the staged copy
  <!-- doc-test run -->          (python) run it too
  <!-- doc-test archive: WHY -->  (anywhere in the doc) a record of past
                                 runs: its blocks are not run (the commands
                                 as they ran then) and only its links are
                                 checked (the files it names were there then)
  <!-- doc-test not-here: NAME... -->  (anywhere in the doc) file names
                                 the path check must not look for: another
                                 project's, an example's, or made at run time

The sandbox: a temporary directory per doc, HOME and XDG_CONFIG_HOME inside
it (no user's git or trawl settings), git's identity set, LC_ALL=C.UTF-8,
`trawl` on PATH the one built. `scripts/run ARGS` runs as `trawl ARGS`
(scripts/run is bootstrap, build, then exactly that; the build is what the
suite has just done).

Paths: every inline code span, link and word of a fenced block that names a
file of this checkout must exist. A name is this checkout's when its first
component is a top-level entry of the checkout (tracked by git; `build/...`
is looked for in the build directory), or when it is a bare file name with
one of the checkout's source extensions (.c .h .cpp .py .sh .bzl .cmake
.md): then some tracked file must have that name. A link must lead to a file
or directory, and an anchor (`cli.md#json`) to a heading of that page.
Names with glob characters, absolute paths and URLs are not paths here, nor
are paths the checkout's .gitignore leaves out (bench/fixtures/repo: made by
running something).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

SOURCE_EXTS = (".c", ".h", ".cpp", ".py", ".sh", ".bzl", ".cmake", ".md")
SHELL_LANGS = ("sh", "bash", "shell", "console", "")


class Block:
    def __init__(self, doc, line, lang, text, marks):
        self.doc, self.line, self.lang, self.text, self.marks = doc, line, lang, text, marks

    def mark(self, key):
        for k, v in self.marks:
            if k == key:
                return v if v is not None else True
        return None

    @property
    def name(self):
        return "%s:%d" % (self.doc, self.line)


MARK_RE = re.compile(r"<!--\s*doc-test\s+([a-z-]+)(?::\s*(.*?))?\s*-->", re.S)


def parse(path, rel):
    """Fenced blocks with their marks, and the prose (text outside fences)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, prose, pending, marks_anywhere, i = [], [], [], [], 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^(\s*)(```+|~~~+)\s*([\w+-]*)\s*$", line)
        if m:
            fence, lang, start = m.group(2), m.group(3), i + 1
            body = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(fence):
                body.append(lines[i][len(m.group(1)):] if lines[i].startswith(m.group(1)) else lines[i])
                i += 1
            blocks.append(Block(rel, start, lang, "\n".join(body) + "\n", pending))
            pending = []
            i += 1
            continue
        if line.lstrip().startswith("<!--"):
            j, text = i, line
            while "-->" not in text and j + 1 < len(lines):
                j += 1
                text += "\n" + lines[j]
            for mm in MARK_RE.finditer(text):
                pending.append((mm.group(1), mm.group(2)))
                marks_anywhere.append((mm.group(1), mm.group(2)))
            prose.append((i + 1, text if not MARK_RE.search(text) else ""))
            i = j + 1
            continue
        if line.strip():
            pending = []
        prose.append((i + 1, line))
        i += 1
    return blocks, prose, marks_anywhere  # the marks outside code blocks


# ---------------------------------------------------------------------------
# Running.

class Sandbox:
    def __init__(self, args, doc, tmp):
        self.args = args
        self.base = os.path.join(tmp, re.sub(r"[^\w.-]", "_", doc))
        os.makedirs(os.path.join(self.base, "home", ".config"))
        self.work = os.path.join(self.base, "work")
        os.makedirs(self.work)
        self.cwd = self.work
        self.fresh_n = 0
        self.installed = None

    def env(self, installed):
        e = dict(os.environ)
        home = os.path.join(self.base, "home")
        e.update({
            "HOME": home, "XDG_CONFIG_HOME": os.path.join(home, ".config"),
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "doc", "GIT_AUTHOR_EMAIL": "doc@example.invalid",
            "GIT_COMMITTER_NAME": "doc", "GIT_COMMITTER_EMAIL": "doc@example.invalid",
            "LC_ALL": "C.UTF-8", "TZ": "UTC",
            "PATH": self.args.bin + os.pathsep + e.get("PATH", ""),
        })
        for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "MAKEFLAGS"):
            e.pop(k, None)
        if installed:
            st = self.args.staged()
            e["PATH"] = st["bin"] + os.pathsep + e["PATH"]
            e["PKG_CONFIG_PATH"] = st["pc"]
            e["CMAKE_PREFIX_PATH"] = st["prefix"]
            e["LD_LIBRARY_PATH"] = st["lib"]
        return e

    def run_script(self, commands, installed):
        """Runs the commands in one bash, in order, from the current directory;
        returns [(rc, output bytes)], and moves the current directory along."""
        d = tempfile.mkdtemp(dir=self.base, prefix="cmd-")
        script = ["cd %s || exit 99" % sh_quote(self.cwd)]
        for k, cmd in enumerate(commands):
            cmd = re.sub(r"^scripts/run\b", "trawl", cmd)
            script.append("{ %s\n} >%s/%d.out 2>&1 </dev/null; echo $? >%s/%d.rc" % (
                cmd, d, k, d, k))
        script.append("pwd >%s/pwd" % d)
        with open(os.path.join(d, "script"), "w") as f:
            f.write("\n".join(script) + "\n")
        p = subprocess.run(["bash", os.path.join(d, "script")], env=self.env(installed),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
        out = []
        for k in range(len(commands)):
            try:
                rc = int(open(os.path.join(d, "%d.rc" % k)).read())
                text = open(os.path.join(d, "%d.out" % k), "rb").read()
            except (OSError, ValueError):
                rc, text = None, p.stdout
            out.append((rc, text))
        try:
            self.cwd = open(os.path.join(d, "pwd")).read().strip() or self.cwd
        except OSError:
            pass
        return out


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def normalise(text):
    """Times are not compared (no test asserts a time)."""
    text = re.sub(r"\b\d+(\.\d+)? ms\b", "T ms", text)
    text = re.sub(r"(milliseconds:\s+)\d+(\.\d+)?", r"\1T", text)
    return text.rstrip()


def output_matches(shown, got):
    """The shown lines against the output; `...` is any number of lines."""
    want = [normalise(l) for l in shown]
    have = [normalise(l) for l in got]

    def match(i, j):
        if i == len(want):
            return j == len(have)
        if want[i] == "...":
            return any(match(i + 1, k) for k in range(j, len(have) + 1))
        return j < len(have) and want[i] == have[j] and match(i + 1, j + 1)
    return match(0, 0)


def join_continued(lines):
    out, cur = [], ""
    for l in lines:
        if l.endswith("\\"):
            cur += l[:-1] + " "
            continue
        out.append(cur + l)
        cur = ""
    if cur:
        out.append(cur)
    return out


def transcript(block):
    """[(command, [shown output lines])]."""
    steps = []
    lines = block.text.rstrip("\n").split("\n")
    i = 0
    while i < len(lines):
        l = lines[i]
        if l.startswith("$ "):
            cmd = l[2:]
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1] + " " + lines[i].lstrip("> ")
            steps.append([cmd, []])
        elif steps:
            steps[-1][1].append(l)
        i += 1
    return steps


def run_transcript(box, block):
    steps = transcript(block)
    setup = []
    for cmd, shown in steps:
        m = re.match(r"^cat\s+(\S+)\s*$", cmd)
        if m and not os.path.exists(os.path.join(box.cwd, m.group(1))):
            with open(os.path.join(box.cwd, m.group(1)), "w") as f:
                f.write("\n".join(shown) + "\n")
            setup.append(m.group(1))
    results = box.run_script([c for c, _ in steps], block.mark("installed"))
    problems = []
    for (cmd, shown), (rc, out) in zip(steps, results):
        got = out.decode("utf-8", "surrogateescape").rstrip("\n")
        got_lines = got.split("\n") if got else []
        shown = [l for l in shown]
        while shown and not shown[-1].strip():
            shown.pop()
        if rc is None:
            problems.append("`%s` did not run to its end:\n%s" % (cmd, got))
            break
        if shown:
            if not output_matches(shown, got_lines):
                problems.append("`%s` (exit %d) printed\n    %s\n  the doc shows\n    %s" % (
                    cmd, rc, "\n    ".join(got_lines), "\n    ".join(shown)))
        elif rc != 0:
            problems.append("`%s` exited %d:\n    %s" % (cmd, rc, "\n    ".join(got_lines)))
    return problems, len(steps)


def run_commands(box, block, counts):
    lines = [l for l in join_continued(block.text.rstrip("\n").split("\n"))
             if l.strip() and not l.lstrip().startswith("#")]
    for key, val in block.marks:
        if key == "skip-command":
            prefix, _, why = val.partition(" -- ")
            kept = [l for l in lines if not l.startswith(prefix.strip())]
            if len(kept) == len(lines):
                return ["skip-command %r: no command of the block starts with it" % prefix], 0
            counts["skipped commands"].append("%s (%s)" % (prefix.strip(), why.strip()))
            lines = kept
    results = box.run_script(lines, block.mark("installed"))
    problems = []
    for cmd, (rc, out) in zip(lines, results):
        if rc != 0:
            problems.append("`%s` exited %s:\n    %s" % (cmd, rc, out.decode(errors="replace")
                                                        .rstrip().replace("\n", "\n    ")))
    return problems, len(lines)


def help_text(args, sub):
    argv = [args.trawl] + ([sub] if sub else []) + ["--help"]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return p.returncode, p.stdout.decode(errors="replace")


def commands_of(args):
    out = subprocess.run([args.trawl, "help"], stdout=subprocess.PIPE).stdout.decode()
    part = out.split("Commands:", 1)[1].split("Options:", 1)[0]
    return set(re.findall(r"^  ([a-z][a-z-]*)\b", part, re.M))


def check_synopsis(args, block):
    problems, n = [], 0
    commands = commands_of(args)
    entries = []
    for l in block.text.rstrip("\n").split("\n"):
        if l.startswith("trawl"):
            entries.append(l)
        elif entries:
            entries[-1] += " " + l.strip()
    for e in entries:
        words = e.split()
        sub = words[1] if len(words) > 1 and re.fullmatch(r"[a-z][a-z-]*", words[1]) else None
        if sub and sub not in commands:
            problems.append("%s: no command %r in `trawl help`" % (e, sub))
            continue
        if sub == "help":
            continue
        rc, text = help_text(args, sub)
        if rc != 0:
            problems.append("`trawl %s--help` exited %d" % (sub + " " if sub else "", rc))
            continue
        # The options of this entry: before any run of spaces that starts its
        # description (`trawl check --cache FILE...         re-validate ...`).
        usage = re.split(r"\s{3,}", e.strip())[0]
        for opt in re.findall(r"(?<![\w-])(--?[A-Za-z0-9][\w-]*)", usage):
            n += 1
            if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(opt), text):
                problems.append("`%s`: %s is not in `trawl %s--help`" % (
                    usage, opt, sub + " " if sub else ""))
    return problems, n


# ---------------------------------------------------------------------------
# Paths.

def tracked(source):
    p = subprocess.run(["git", "-C", source, "ls-files", "-z"], stdout=subprocess.PIPE)
    if p.returncode == 0 and p.stdout:
        files = [f for f in p.stdout.decode("utf-8", "surrogateescape").split("\0") if f]
    else:  # not a git checkout (an unpacked tarball): what is on disk
        files = []
        for d, sub, names in os.walk(source):
            rel = os.path.relpath(d, source)
            sub[:] = [s for s in sub if not (rel == "." and (s.startswith("build") or s == ".git"))]
            files += [os.path.normpath(os.path.join(rel, n)) for n in names]
    files = [f for f in files if os.path.lexists(os.path.join(source, f))]
    tops = {f.split("/", 1)[0] for f in files}
    return tops, {os.path.basename(f) for f in files}


def slug(heading):
    """GitHub's anchor for a heading."""
    h = re.sub(r"`", "", heading.strip().lower())
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h)
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    in_fence = False
    for line in open(path, encoding="utf-8"):
        if re.match(r"^\s*(```|~~~)", line):
            in_fence = not in_fence
            continue
        m = None if in_fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            s = slug(m.group(1))
            k = seen.get(s, 0)
            seen[s] = k + 1
            out.add(s if k == 0 else "%s-%d" % (s, k))
    return out


PATH_TOKEN = re.compile(r"[A-Za-z0-9_.@+-][A-Za-z0-9_./@+-]*")


def candidates(text):
    """Words that could be paths: no glob or shell characters around them."""
    for tok in re.split(r"[\s,;:()\"'`=<>|&]+", text):
        tok = tok.rstrip(".")
        if not tok or not PATH_TOKEN.fullmatch(tok):
            continue
        if tok.startswith(("-", "@", "//")) or "//" in tok:
            continue
        yield tok


def git_ignores(source, path):
    p = subprocess.run(["git", "-C", source, "check-ignore", "-q", "--no-index", path],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p.returncode == 0


def check_name(args, doc_dir, tok, tops, names, not_ours):
    """None when fine or not a path of ours, else the problem."""
    if tok.startswith(("./", "../")):
        return None  # relative to some directory a reader is in: an example
    if "/" in tok:
        first, rest = tok.split("/", 1)
        if first == "build":
            # build/bench/floor_walk: a built program, where the build puts it.
            if rest.split("/", 1)[0] not in tops:
                return None  # build/out.c: a directory of an example tree
            built = os.path.join(args.build, rest)
            return None if os.path.exists(built.rstrip("/")) else \
                "%s: not in the build directory" % tok
        if first in tops and os.path.isdir(os.path.join(args.source, first)):
            target = os.path.join(args.source, tok).rstrip("/")
            if not os.path.exists(target) and not os.path.exists(os.path.join(args.build, tok)):
                if git_ignores(args.source, tok):
                    return None  # made by running something (bench/fixtures/repo)
                return "%s: no such file or directory in the checkout (or the build)" % tok
            if tok.endswith("/") and not os.path.isdir(target):
                return "%s: not a directory" % tok
        return None
    if tok.endswith(SOURCE_EXTS) and tok not in not_ours and not tok.startswith("."):
        if tok not in names:
            return "%s: no file of that name in the checkout or the build (if it is another " \
                "project's, name it in <!-- doc-test not-here: ... -->)" % tok
    return None


def check_paths(args, doc, blocks, prose, not_ours, tops, names, archive):
    problems, n = [], 0
    doc_dir = os.path.dirname(os.path.join(args.source, doc))
    seen = set()

    def note(line, tok):
        nonlocal n
        if tok in seen:
            return
        seen.add(tok)
        n += 1
        why = check_name(args, doc_dir, tok, tops, names, not_ours)
        if why:
            problems.append("%s:%d: %s" % (doc, line, why))

    for line, text in prose:
        for m in re.finditer(r"\[[^\]]*\]\(([^)\s]+)\)", text):
            target = m.group(1)
            if re.match(r"^[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(doc_dir, file_part)) if file_part else \
                os.path.join(args.source, doc)
            n += 1
            if not os.path.exists(dest):
                problems.append("%s:%d: link %s: no such file" % (doc, line, target))
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                problems.append("%s:%d: link %s: no heading #%s in %s" % (
                    doc, line, target, anchor, os.path.relpath(dest, args.source)))
        for m in re.finditer(r"`([^`]+)`", text) if not archive else ():
            span = m.group(1)
            if any(c in span for c in "*?[{$"):
                continue
            for tok in candidates(span):
                note(line, tok)
        # Plain words too: "see DESIGN.md", "in tests/walk/" (not inside code
        # spans or link targets, done above).
        plain = re.sub(r"`[^`]*`|\]\([^)]*\)|<[^>]*>|https?://\S+", " ", text)
        for tok in candidates(plain) if not archive else ():
            if "/" in tok or tok.endswith(SOURCE_EXTS):
                note(line, tok)
    for b in blocks if not archive else ():
        # Commands and illustrations; a transcript's arguments are an example's.
        if b.mark("file") or b.lang not in SHELL_LANGS or re.search(r"^\$ ", b.text, re.M):
            continue
        for k, l in enumerate(b.text.split("\n")):
            for tok in candidates(re.sub(r"'[^']*'|\"[^\"]*\"", " ", l.split(" #")[0])):
                if any(c in tok for c in "*?[{$"):
                    continue
                note(b.line + 1 + k, tok)
    return problems, n


# ---------------------------------------------------------------------------

def staged_install(args, tmp):
    cache = {}

    def get():
        if cache:
            return cache
        dest = os.path.join(tmp, "stage")
        p = subprocess.run(["meson", "install", "--no-rebuild", "--quiet", "-C", args.build,
                            "--destdir", dest], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            raise RuntimeError("meson install --destdir failed:\n" + p.stdout.decode(errors="replace"))
        pc = None
        for d, _, names in os.walk(dest):
            if "trawl.pc" in names:
                pc = os.path.join(d, "trawl.pc")
        if not pc:
            raise RuntimeError("no trawl.pc in the staged install")
        libdir = os.path.dirname(os.path.dirname(pc))
        prefix = None
        for d, _, names in os.walk(dest):
            if "trawl" in names and d.endswith("/bin"):
                prefix = os.path.dirname(d)
        # The staged trawl.pc names the configured prefix: point it at the copy
        # (pkg-config's own --define-prefix needs the .pc under PREFIX/lib*/pkgconfig).
        os.makedirs(os.path.join(tmp, "pc"))
        text = open(pc).read()
        text = re.sub(r"^prefix=.*$", "prefix=" + prefix, text, flags=re.M)
        with open(os.path.join(tmp, "pc", "trawl.pc"), "w") as f:
            f.write(text)
        cache.update({"prefix": prefix, "bin": os.path.join(prefix, "bin"),
                      "lib": libdir, "pc": os.path.join(tmp, "pc")})
        return cache
    return get


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--trawl", required=True)
    ap.add_argument("--only", action="append")
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args(argv[1:])
    args.source = os.path.abspath(args.source)
    args.build = os.path.abspath(args.build)
    args.trawl = os.path.abspath(args.trawl)

    docs = ["README.md"]
    for sub in ("docs", "docs/benchmarks"):  # the guides; the benchmark pages
        if os.path.isdir(os.path.join(args.source, sub)):
            docs += sorted(sub + "/" + f for f in os.listdir(os.path.join(args.source, sub))
                           if f.endswith(".md"))
    if args.only:
        docs = [d for d in docs if d in args.only]
    tops, names = tracked(args.source)
    tops.discard("build")
    for d, _, files in os.walk(args.build):  # generated files are named too
        names.update(files)

    tmp = tempfile.mkdtemp(prefix="trawl-docs-")
    bin_dir = os.path.join(tmp, "bin")
    os.makedirs(bin_dir)
    os.symlink(args.trawl, os.path.join(bin_dir, "trawl"))
    args.bin = bin_dir
    args.staged = staged_install(args, tmp)

    results = []  # (ok, name, skip reason, detail)
    counts = {"commands": 0, "outputs": 0, "options": 0, "paths": 0, "skipped commands": []}
    try:
        for doc in docs:
            blocks, prose, marks = parse(os.path.join(args.source, doc), doc)
            not_ours = set()
            for key, val in marks:
                if key == "not-here":
                    not_ours.update(val.split())
            archive = next((v for k, v in marks if k == "archive"), None)
            box = Sandbox(args, doc, tmp)
            for b in blocks:
                if archive:
                    results.append((True, b.name, "an archive: " + archive, None))
                    continue
                r = one_block(args, box, b, counts)
                if r:
                    results.append(r)
            problems, n = check_paths(args, doc, blocks, prose, not_ours, tops, names, archive)
            counts["paths"] += n
            results.append((not problems, "%s: the paths and links it names (%d)" % (doc, n),
                            None, "\n".join(problems)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print("TAP version 13")
    print("1..%d" % len(results))
    skips = {}
    for k, (ok, name, skip, detail) in enumerate(results, 1):
        if skip:
            print("ok %d - %s # SKIP %s" % (k, name, skip))
            reason = re.sub(r"\s+", " ", skip)
            skips[reason] = skips.get(reason, 0) + 1
            continue
        print("%s %d - %s" % ("ok" if ok else "not ok", k, name))
        if detail and (not ok or args.v):
            for l in detail.split("\n"):
                print("# " + l)
    failed = sum(1 for ok, _, skip, _ in results if not ok and not skip)
    print("# %d blocks and %d docs' paths: %d failed, %d skipped; %d commands run, %d outputs "
          "compared, %d options looked up, %d paths and links checked" % (
              sum(1 for r in results if "paths and links" not in r[1]), len(docs), failed,
              sum(skips.values()), counts["commands"], counts["outputs"], counts["options"],
              counts["paths"]))
    for reason, n in sorted(skips.items(), key=lambda kv: -kv[1]):
        print("# skipped %d: %s" % (n, reason))
    for c in counts["skipped commands"]:
        print("# skipped a command in a block that ran: %s" % c)
    return 1 if failed else 0


def one_block(args, box, b, counts):
    skip = b.mark("skip")
    if skip:
        return (True, b.name, skip if skip is not True else "marked skip", None)
    if b.mark("fresh"):
        home = box.cwd
        box.fresh_n += 1
        box.cwd = os.path.join(box.base, "fresh%d" % box.fresh_n)
        os.makedirs(box.cwd)
        try:
            return run_block(args, box, b, counts)
        finally:
            box.cwd = home
    return run_block(args, box, b, counts)


def run_block(args, box, b, counts):
    setup = b.mark("setup")
    if setup and setup is not True:
        (rc, out), = box.run_script([setup], b.mark("installed"))
        if rc != 0:
            return (False, b.name + " (setup)", None, "setup exited %s:\n%s" % (
                rc, out.decode(errors="replace")))
    name_to = b.mark("file")
    if name_to:
        with open(os.path.join(box.cwd, name_to), "w") as f:
            f.write(b.text)
        return None  # not a check of its own: the blocks after it use the file
    lang = b.lang.lower()
    try:
        if lang in SHELL_LANGS and re.search(r"^\$ ", b.text, re.M):
            problems, n = run_transcript(box, b)
            counts["commands"] += n
            counts["outputs"] += sum(1 for _, shown in transcript(b) if any(s.strip() for s in shown))
            return (not problems, b.name + ": transcript", None, "\n".join(problems))
        if lang in ("sh", "bash", "shell"):
            problems, n = run_commands(box, b, counts)
            counts["commands"] += n
            return (not problems, b.name + ": commands", None, "\n".join(problems))
        if lang == "" and re.match(r"trawl(\s|$)", b.text):
            problems, n = check_synopsis(args, b)
            counts["options"] += n
            return (not problems, b.name + ": synopsis", None, "\n".join(problems))
        if lang == "":
            return (True, b.name, "an illustration (output or a format shown without its command)",
                    None)
        if lang == "python":
            try:
                compile(b.text, b.name, "exec")
            except SyntaxError as e:
                return (False, b.name + ": python", None, "does not compile: %s" % e)
            if b.mark("run"):
                script = os.path.join(box.base, "block%d.py" % b.line)
                with open(script, "w") as f:
                    f.write(b.text)
                (rc, out), = box.run_script(["python3 " + sh_quote(script)], b.mark("installed"))
                problems = [] if rc == 0 else ["exited %s:\n%s" % (rc, out.decode(errors="replace"))]
                return (not problems, b.name + ": python, run", None, "\n".join(problems))
            return (True, b.name + ": python, compiles", None, None)
    except subprocess.TimeoutExpired as e:
        return (False, b.name, None, "timed out: %s" % e)
    except RuntimeError as e:
        return (False, b.name, None, str(e))
    return (False, b.name, None, "a %s block the test cannot run: mark it <!-- doc-test skip: WHY -->"
            " or <!-- doc-test file: NAME -->" % lang)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
