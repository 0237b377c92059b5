"""trawl_glob(): glob(), less what git ignores, without entering it.

    load("@trawl//bazel:glob.bzl", "trawl_glob")
    filegroup(name = "srcs", srcs = trawl_glob(["**/*.ts"], gitignore = True))

trawl_glob(include, exclude, exclude_directories, allow_empty) is glob():
Bazel lists the directories and keeps track of them, so that an edit
reloads only the packages whose listings changed, as it does for glob().

With gitignore = True, what git ignores is left out, and a directory git
ignores is never listed. The repository rule in repositories.bzl has
trawl walk the workspace and writes, per package (`trawl bazel-index`): IGN,
each path git ignores whose directory it does not ignore (glob() takes them
as excludes), and TAINT, each directory that holds an ignored directory
somewhere below it, with its subdirectories that git does not ignore. A pattern is split into patterns
that glob() answers without entering an ignored directory: below a
directory outside TAINT, the rest of the pattern as it is (`src/**/*.ts`);
at a directory in TAINT, what the pattern takes from it (`*.ts`), and the
same split again in each subdirectory the pattern can enter. glob()'s
answer to those, less IGN, is the answer. The index changes only when
what git ignores, or where, changes (or the packages do); a file added,
removed or renamed changes a listing, not the index.

A directory segment is matched against a TAINT subdirectory as Bazel
4.2.3's UnixGlob.matches() does (`*` and `**` match any name; otherwise a
name starting with '.' needs a segment starting with '.'; `*S` compares
the end, `S*` the start, any other segment with a wildcard is a Java
regular expression in which '(' and ')' vanish and a wildcard matches no
line terminator).

docs/bazel.md has the semantics, the errors and the limits; tests/bazel/
compares the answers with native glob() in real Bazel.
"""

load("@trawl_index//:index.bzl", "CHECKED", "LEFT_OUT", "PACKAGES")

_TERMINATORS = ("\n", "\r", "\205")

# Segment kinds.
_LITERAL = 0  # no wildcard
_STAR = 1  # exactly "*"
_GLOBSTAR = 2  # exactly "**"
_SUFFIX = 3  # "*S": one '*', first
_PREFIX = 4  # "S*": one '*', last
_REGEX = 5  # anything else with a wildcard

# glob()'s messages (Bazel 4.2.3), word for word: trawl_glob(gitignore =
# True) says them after "trawl_glob: " (tests/bazel/glob_cases.py compares
# them; without gitignore, glob() says its own).
_HINT = " (the default value of allow_empty can be set with --incompatible_disallow_empty_glob)."
_EMPTY_INCLUDE = "glob pattern '%s' didn't match anything, but allow_empty is set to False" + _HINT
_ALL_EXCLUDED = "all files in the glob have been excluded, but allow_empty is set to False" + _HINT

def _error(msg):
    fail("trawl_glob: " + msg)

def _check_strings(value, name):
    if type(value) not in ("list", "tuple", "range"):
        _error("in call to glob(), parameter '%s' got value of type '%s', want 'sequence'" %
               (name, type(value)))

def _check_elements(value):
    for i, p in enumerate(value):
        if type(p) != "string":
            _error("expected value of type 'string' for element %d of 'glob' argument, but got %r (%s)" %
                   (i, p, type(p)))

def _pattern_error(pattern):
    """Bazel's UnixGlob.checkPatternForError(): the message, or None."""
    if not pattern:
        return "pattern cannot be empty"
    if pattern[0] == "/":
        return "pattern cannot be absolute"
    for seg in pattern.split("/"):
        if not seg:
            return "empty segment not permitted"
        if seg == "." or seg == "..":
            return "segment '%s' not permitted" % seg
        if "**" in seg and seg != "**":
            return "recursive wildcard must be its own segment"
    return None

def _exclude_error(pattern):
    """The message glob() gives for an exclude, or None. Bazel checks only the
    excludes it matches by segments: not one without wildcard (an exact
    path), nor one of the form HEAD**/*TAIL with HEAD and TAIL free of
    wildcards (UnixGlob.removeExcludes())."""
    if "*" not in pattern and "?" not in pattern:
        return None
    pos = pattern.find("**/*")
    if pos >= 0:
        head = pattern[:pos]
        tail = pattern[pos + 4:]
        if "*" not in head and "?" not in head and "*" not in tail and "?" not in tail:
            return None
    err = _pattern_error(pattern)
    return "%s (in glob pattern '%s')" % (err, pattern) if err else None

def _kind(seg):
    if seg == "**":
        return _GLOBSTAR
    if seg == "*":
        return _STAR
    stars = seg.count("*")
    if stars == 0:
        return _LITERAL
    if stars == 1 and seg[0] == "*":
        return _SUFFIX
    if stars == 1 and seg[-1] == "*":
        return _PREFIX
    return _REGEX

def _regex_match(seg, name):
    """Java's Pattern.matches for the regex glob() makes of seg: '*' is '.*',
    '(' and ')' vanish, '.' matches no line terminator."""
    toks = [c for c in seg.elems() if c != "(" and c != ")"]

    # reach[i]: the first i bytes of name are matched by the tokens so far.
    reach = [True] + [False] * len(name)
    for t in toks:
        nxt = [False] * (len(name) + 1)
        if t == "*":
            on = False
            for i in range(len(name) + 1):
                if reach[i]:
                    on = True
                elif i > 0 and name[i - 1] in _TERMINATORS:
                    on = False
                nxt[i] = on
        else:
            for i in range(len(name)):
                if reach[i] and name[i] == t:
                    nxt[i + 1] = True
        reach = nxt
    return reach[len(name)]

def _segment_matches(seg, kind, name):
    """UnixGlob.matches(seg, name) for a segment of an include."""
    if kind == _STAR or kind == _GLOBSTAR:
        return True
    if kind == _LITERAL:
        return seg == name
    if name[0] == "." and seg[0] != ".":
        return False
    if kind == _SUFFIX:
        return name.endswith(seg[1:])
    if kind == _PREFIX:
        return name.startswith(seg[:-1])
    return _regex_match(seg, name)

def _native_pattern(d, rest):
    """A pattern glob() can take for the directory d ("" the package's own)
    followed by the segments rest, and the directory its answer must be
    under ("" when it names d exactly). A component of d holding a
    wildcard cannot be written literally (glob() has no escape): it is
    written as "*", which matches every name, and the answer filtered."""
    comps = d.split("/") if d else []
    loose = False
    for i, c in enumerate(comps):
        if "*" in c or "?" in c:
            comps[i] = "*"
            loose = True
    return "/".join(comps + rest), (d if loose else "")

def _split(include, taint, directories):
    """The include's pattern split at the directories in TAINT (see the top):
    [(glob() pattern, directory its answer must be under or "")]."""
    segs = include.split("/")
    kinds = [_kind(s) for s in segs]
    n = len(segs)
    out = []
    stack = [("", 0)]

    # Each state is a directory in TAINT and the segment to match next;
    # every state pushed is one directory further down, or one segment
    # further on, so this ends.
    for _ in range(1 << 30):
        if not stack:
            break
        d, i = stack.pop()
        if i == n:
            # The whole pattern names d itself: a directory, listed when
            # directories are.
            if d and directories:
                out.append(_native_pattern(d, []))
            continue
        seg = segs[i]
        kind = kinds[i]
        if kind == _GLOBSTAR:
            stack.append((d, i + 1))  # '**' taking no component
            if i == n - 1:
                out.append(_native_pattern(d, ["*"]))  # '**' taking d's entries
            nxt = i
        elif i == n - 1:
            out.append(_native_pattern(d, [seg]))  # what d holds
            continue
        else:
            nxt = i + 1
        for c in taint[d]:
            if kind == _GLOBSTAR or _segment_matches(seg, kind, c):
                path = d + "/" + c if d else c
                if path in taint:
                    stack.append((path, nxt))
                elif nxt < n:
                    out.append(_native_pattern(path, segs[nxt:]))
                elif directories:
                    out.append(_native_pattern(path, []))
    return out

def _plain(path):
    """A path of glob()'s answer as it is on disk (glob() writes ':' before a
    path starting with '@', so that it is no repository name)."""
    return path[1:] if path.startswith(":@") else path

def _glob_less(patterns, exclude, exclude_directories, ign, ign_wild):
    """glob()'s answer to the split patterns, less the paths git ignores:
    ign, exact paths, go to glob() as excludes (an exact exclude removes
    that path, as it is on disk); ign_wild, paths glob() would take as
    patterns, are filtered here."""
    exclude = exclude + ign
    exact = []
    found = []
    for p, under in patterns:
        if not under:
            exact.append(p)
            continue
        for q in native.glob([p], exclude, exclude_directories, allow_empty = True):
            plain = _plain(q)
            if plain == under or plain.startswith(under + "/"):
                found.append(q)
    if exact:
        if not found and not ign_wild:
            return native.glob(exact, exclude, exclude_directories, allow_empty = True)
        found += native.glob(exact, exclude, exclude_directories, allow_empty = True)
    return sorted({q: None for q in found if _plain(q) not in ign_wild}.keys())

def _unknown(package):
    how = ("The last command that indexed it went through tools/bazel, so the package was made " +
           "after that command's check (while it ran), or trawl's walk did not enter its " +
           "directory (see the warnings printed when the index was made): run the command again.") if CHECKED else (
        "This command did not go through tools/bazel (the real binary was run, or the wrapper's " +
        "check failed), and this Bazel server made the index before the package existed: run " +
        "the command through tools/bazel (docs/bazel.md, Setup); it indexes what changed.")
    _error(("gitignore = True: package '%s' is not in trawl's index of the workspace. " % package) + how)

def trawl_glob(include = [], exclude = [], exclude_directories = 1, allow_empty = True, *, gitignore = False):
    """glob(include, exclude, exclude_directories, allow_empty); with
    gitignore = True, less what git ignores."""
    if gitignore == False:
        # glob() itself: it checks its own arguments, with its own
        # messages; nothing here for a new Bazel to interpret in every
        # package first.
        return native.glob(include, exclude, exclude_directories, allow_empty = allow_empty)
    _check_strings(include, "include")
    _check_strings(exclude, "exclude")
    if type(exclude_directories) != "int":
        _error("in call to glob(), parameter 'exclude_directories' got value of type '%s', want 'int'" %
               type(exclude_directories))
    _check_elements(include)
    _check_elements(exclude)
    if type(allow_empty) != "bool":
        _error("expected boolean for argument `allow_empty`, got `%s`" % (allow_empty,))
    if type(gitignore) != "bool":
        _error("expected boolean for argument `gitignore`, got `%s`" % (gitignore,))
    for p in include:
        if "?" in p:
            _error("wildcard ? forbidden")
        err = _pattern_error(p)
        if err:
            _error(err)
    exclude = list(exclude)
    directories = exclude_directories == 0

    ign = []
    ign_wild = {}
    entry = None
    if gitignore and native.repository_name() == "@":
        package = native.package_name()
        if package not in PACKAGES:
            # A package reached through a top-level bazel-* link (a copied
            # workspace's): trawl does not walk there, glob() answers.
            if package.split("/")[0] not in LEFT_OUT:
                _unknown(package)
        else:
            entry = PACKAGES[package]
    if entry == True:
        # Git ignores the package's own directory, so everything in it.
        if include and not allow_empty:
            _error(_EMPTY_INCLUDE % include[0])
        for e in exclude:
            err = _exclude_error(e)
            if err:
                _error(err)
        if not allow_empty:
            _error(_ALL_EXCLUDED)
        return []
    if entry:
        ign, ign_wild = entry[0], entry[1]
        parts = [_split(p, entry[2], directories) if entry[2] else [(p, "")] for p in include]
    else:
        parts = [[(p, "")] for p in include]

    # Each include's answer, when glob() would fail on an empty one.
    if not allow_empty:
        for i, p in enumerate(include):
            if not _glob_less(parts[i], [], exclude_directories, ign, ign_wild):
                _error(_EMPTY_INCLUDE % p)
    for e in exclude:
        err = _exclude_error(e)
        if err:
            _error(err)
    if entry:
        result = _glob_less([q for part in parts for q in part], exclude, exclude_directories, ign,
                            ign_wild)
    else:
        result = native.glob(include, exclude, exclude_directories, allow_empty = True)
    if not result and not allow_empty:
        _error(_ALL_EXCLUDED)
    return result
