"""trawl_glob(): native glob()'s answers from one pruned walk of the workspace.

    load("@trawl//bazel:glob.bzl", "trawl_glob")
    filegroup(name = "srcs", srcs = trawl_glob(["src/**/*.ts"], exclude = ["**/*.test.ts"]))

The repository rule in repositories.bzl walks the workspace once, in C, and
writes every package's files and directories into @trawl_index//:index.bzl,
grouped by the key of their base name (bazel/index.c). Here a pattern is
matched against that index the way Bazel 4.2.3's glob() matches the tree:

- An include's literal leading segments and its last segment choose the
  candidates: `src/**/*.ts` takes the names of the "ts" group in directories
  under `src/` (each directory is tested once, not each path). When the
  pattern is only that (a literal directory, then `*.EXT`, `*` or `**`, or
  `**` and one of those), the candidates are the answer; otherwise each
  candidate is matched segment by segment.
- A segment matches a name as UnixGlob.matches() does: `*` and `**` match
  any name; otherwise a name starting with '.' needs a segment starting with
  '.'; `*S` compares the end, `S*` the start, and other wildcard segments
  are Java regular expressions in which '(' and ')' vanish and a wildcard
  matches no line terminator ('\n', '\r', '\205'). An include's segment
  without wildcard names the entry exactly.
- Excludes are removed from the answer as UnixGlob.removeExcludes() does:
  a pattern without wildcard removes that exact path; `HEAD**/*TAIL` with
  literal HEAD and TAIL removes the paths that start with HEAD and end with
  TAIL (no hidden rule, no segments); any other is matched by segments.

docs/bazel.md has the semantics, the errors and the limits;
tests/bazel/ proves the answers equal native glob()'s with real Bazel.
"""

load("@trawl_index//:index.bzl", "PACKAGES")

_HIDDEN = "/."  # key of a base name starting with '.'
_NOEXT = "/"  # key of a base name without '.'
_TERMINATORS = ("\n", "\r", "\205")

# Segment kinds.
_LITERAL = 0  # no wildcard
_STAR = 1  # exactly "*"
_GLOBSTAR = 2  # exactly "**"
_SUFFIX = 3  # "*S": one '*', first
_PREFIX = 4  # "S*": one '*', last
_REGEX = 5  # anything else with a wildcard

def _error(msg):
    fail("trawl_glob: " + msg)

def _check_strings(value, name):
    if type(value) not in ("list", "tuple"):
        _error("parameter '%s' got value of type '%s', want 'sequence'" % (name, type(value)))
    for i, p in enumerate(value):
        if type(p) != "string":
            _error("expected value of type 'string' for element %d of '%s', but got %r (%s)" %
                   (i, name, p, type(p)))

def _pattern_error(pattern):
    """Bazel's checkPatternForError(): the message, or None."""
    if not pattern:
        return "pattern cannot be empty"
    if pattern[0] == "/":
        return "pattern cannot be absolute"
    for i, seg in enumerate(pattern.split("/")):
        if not seg:
            return "empty segment not permitted (segment %d)" % (i + 1)
        if seg == "." or seg == "..":
            return "segment '%s' not permitted (segment %d)" % (seg, i + 1)
        if "**" in seg and seg != "**":
            return "recursive wildcard must be its own segment (segment %d, '%s')" % (i + 1, seg)
    return None

def _kind(seg, include):
    if seg == "**":
        return _GLOBSTAR
    if seg == "*":
        return _STAR
    stars = seg.count("*")
    if stars == 0 and (include or "?" not in seg):
        return _LITERAL
    if stars == 1 and seg[0] == "*":
        return _SUFFIX
    if stars == 1 and seg[-1] == "*":
        return _PREFIX
    return _REGEX

def _regex_match(seg, name):
    """Java's Pattern.matches for the regex glob() makes of seg: '*' is '.*',
    '?' is '.', '(' and ')' vanish, '.' matches no line terminator."""
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
                if reach[i] and (name[i] == t or (t == "?" and name[i] not in _TERMINATORS)):
                    nxt[i + 1] = True
        reach = nxt
    return reach[len(name)]

def _segment_matches(seg, kind, name):
    """UnixGlob.matches(seg, name) (and equality for an include's literal)."""
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

def _compile(pattern, include):
    segs = pattern.split("/")
    kinds = []
    for s in segs:
        k = _kind(s, include)
        if k == _LITERAL and not include:
            # In an exclude a segment without wildcard is still a regex:
            # its '(' and ')' vanish, and the hidden rule holds.
            k = _REGEX if ("(" in s or ")" in s) else _LITERAL
        kinds.append(k)
    return struct(segs = segs, kinds = kinds)

def _path_matches(pat, path):
    """Whether the pattern's segments match the path's components; '**' takes
    zero or more components (the usual single-backtrack star algorithm, over
    components)."""
    segs = pat.segs
    kinds = pat.kinds
    comps = path.split("/")
    n = len(segs)
    m = len(comps)
    si = 0
    ci = 0
    star = -1
    mark = 0
    for _ in range((n + 1) * (m + 1) + 1):
        if ci >= m:
            break
        if si < n and kinds[si] == _GLOBSTAR:
            star = si
            mark = ci
            si += 1
        elif si < n and _segment_matches(segs[si], kinds[si], comps[ci]):
            si += 1
            ci += 1
        elif star >= 0:
            mark += 1
            ci = mark
            si = star + 1
        else:
            return False
    for _ in range(n):
        if si < n and kinds[si] == _GLOBSTAR:
            si += 1
    return si == n

def _lower_bound(items, key):
    lo = 0
    hi = len(items)
    for _ in range(64):
        if lo >= hi:
            break
        mid = (lo + hi) // 2
        if items[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo

def _prefix_range(items, prefix):
    """The slice of sorted items that start with prefix."""
    if not prefix:
        return items
    lo = _lower_bound(items, prefix)
    hi = len(items)
    a = lo
    for _ in range(64):
        if a >= hi:
            break
        mid = (a + hi) // 2
        if items[mid].startswith(prefix):
            a = mid + 1
        else:
            hi = mid
    return items[lo:a]

def _split(joined):
    return joined.split("//") if joined else []

def _expand(joined, key, numbered, prefix, direct):
    """The paths of one key's group ("D//NAME/NAME//D//NAME", see
    bazel/index.c: D a directory's number in the list numbered, "" for the
    package's own; each NAME without ".KEY" where KEY is an extension)
    below prefix ("" or a directory ending in '/'); with direct, only those
    in the prefix directory itself. In no particular order. The work in
    Starlark is per directory, not per path: a directory outside the prefix
    is skipped whole, and one replace() puts its path before each of its
    names and the extension after ("//DIR/NAME.KEY//DIR/NAME.KEY"), so that
    one split() at the end makes the list."""
    parts = joined.split("//")
    here = prefix[:-1]
    ext = "" if key == _HIDDEN or key == _NOEXT else "." + key
    chunks = []
    for i in range(0, len(parts) - 1, 2):
        n = parts[i]
        d = numbered[int(n)] if n else ""
        if direct:
            if d != here:
                continue
        elif prefix and not (d + "/").startswith(prefix):
            continue
        lead = "//" + d + "/" if d else "//"
        chunks.append(lead + parts[i + 1].replace("/", ext + lead) + ext)
    return "".join(chunks).split("//")[1:] if chunks else []

def _keys_for(seg, kind, groups):
    """The keys of the groups whose names the last segment can match, and
    whether every name of those groups matches it."""
    if kind == _STAR or kind == _GLOBSTAR:
        return groups.keys(), True
    if kind == _LITERAL:
        k = _HIDDEN if seg[0] == "." else (seg[seg.rfind(".") + 1:] if "." in seg else _NOEXT)
        return [k], False
    visible = [k for k in groups.keys() if k != _HIDDEN]
    if seg[0] == ".":
        return [_HIDDEN], False
    if kind == _SUFFIX:
        tail = seg[1:]
        dot = tail.rfind(".")
        if dot >= 0:
            ext = tail[dot + 1:]
            return [ext], tail == "." + ext
    return visible, False

def _match_files(pattern, pat, groups, numbered):
    """The files the include matches, sorted, and the keys they came from
    (numbered: the package's directories, which the groups number)."""
    segs = pat.segs
    kinds = pat.kinds
    n = len(segs)

    # Literal leading segments make a directory prefix.
    lead = 0
    for k in kinds:
        if k != _LITERAL:
            break
        lead += 1
    if lead == n:
        # No wildcard at all: that one path, if it is a file.
        k = _keys_for(segs[-1], _LITERAL, groups)[0][0]
        joined = groups.get(k)
        if not joined:
            return [], [k]
        found = _expand(joined, k, numbered, pattern[:pattern.rfind("/") + 1], True)
        return ([pattern] if pattern in found else []), [k]

    prefix = "/".join(segs[:lead]) + "/" if lead else ""
    last = n - 1
    if kinds[last] == _GLOBSTAR:
        # A file below the prefix matches a trailing '**' only with one
        # component at least: 'x/**' is 'x/**/*' for files.
        segs = segs + ["*"]
        kinds = kinds + [_STAR]
        pat = struct(segs = segs, kinds = kinds)
        last += 1
    keys, whole = _keys_for(segs[last], kinds[last], groups)

    # Exact without a per-path test: PREFIX/**/LAST or PREFIX/LAST where LAST
    # chose its names exactly by their key.
    direct = whole and last == lead
    exact = direct or (whole and last == lead + 1 and kinds[lead] == _GLOBSTAR)
    found = []
    for k in keys:
        joined = groups.get(k)
        if joined:
            found += _expand(joined, k, numbered, prefix, direct)
    found = sorted(found)
    if exact:
        return found, keys
    return [p for p in found if _path_matches(pat, p)], keys

def _match_dirs(pat, dirs):
    lead = 0
    for k in pat.kinds:
        if k != _LITERAL:
            break
        lead += 1
    prefix = "/".join(pat.segs[:lead])
    return [d for d in _prefix_range(dirs, prefix) if _path_matches(pat, d)]

def _remove_excludes(paths, excludes):
    """UnixGlob.removeExcludes(): exact paths, HEAD**/*TAIL, then segments."""
    if not excludes or not paths:
        return paths
    exact = {}
    head_tail = []
    complex = []
    for i, e in enumerate(excludes):
        if "*" not in e and "?" not in e:
            exact[e] = True
            continue
        pos = e.find("**/*")
        if pos >= 0:
            head = e[:pos]
            tail = e[pos + 4:]
            if "*" not in head and "?" not in head and "*" not in tail and "?" not in tail:
                head_tail.append((head, tail))
                continue
        err = _pattern_error(e)
        if err:
            _error("exclude[%d]: %s (in glob pattern %r)" % (i, err, e))
        complex.append(_compile(e, False))
    out = []
    for p in paths:
        if p in exact:
            continue
        gone = False
        for head, tail in head_tail:
            if p.startswith(head) and p.endswith(tail):
                gone = True
                break
        if not gone:
            for pat in complex:
                if _path_matches(pat, p):
                    gone = True
                    break
        if not gone:
            out.append(p)
    return out

def trawl_glob(include = [], exclude = [], exclude_directories = 1, allow_empty = True, *, gitignore = False):
    """native.glob()'s answer, from the workspace index; with gitignore = True,
    less what git ignores."""
    _check_strings(include, "include")
    _check_strings(exclude, "exclude")
    if type(exclude_directories) != "int":
        _error("parameter 'exclude_directories' got value of type '%s', want 'int'" %
               type(exclude_directories))
    if type(allow_empty) != "bool":
        _error("expected boolean for argument `allow_empty`, got `%r`" % (allow_empty,))
    if type(gitignore) != "bool":
        _error("expected boolean for argument `gitignore`, got `%r`" % (gitignore,))

    compiled = []
    for i, p in enumerate(include):
        if "?" in p:
            _error("include[%d] %r: wildcard ? forbidden (at byte %d)" % (i, p, p.find("?")))
        err = _pattern_error(p)
        if err:
            _error("include[%d] %r: %s" % (i, p, err))
        compiled.append(_compile(p, True))

    if native.repository_name() != "@":
        # The index covers the main workspace; elsewhere glob() answers.
        return native.glob(include, exclude, exclude_directories, allow_empty)
    package = native.package_name()
    entry = PACKAGES.get(package)
    if entry == None:
        _error(("package '%s' is not in trawl's index of the workspace: the index is older " +
                "than the package. Run Bazel through tools/bazel (docs/bazel.md), or " +
                "`bazel sync --only=trawl_index`.") % package)
    groups, dirs_joined = entry[0], entry[1]
    numbered = _split(entry[1])
    if gitignore:
        groups = entry[2] if entry[2] != None else groups
        dirs_joined = entry[3] if entry[3] != None else dirs_joined
    dirs = (numbered if dirs_joined == entry[1] else _split(dirs_joined)) if exclude_directories == 0 else []

    # A file has one key: when the includes took their files from keys no
    # other include took, their answers are disjoint, and one sort unites
    # them (no per-path Starlark loop).
    results = []
    seen_keys = {}
    disjoint = not dirs
    for i, p in enumerate(include):
        got, keys = _match_files(p, compiled[i], groups, numbered)
        for k in keys:
            if k in seen_keys:
                disjoint = False
            seen_keys[k] = True
        if dirs:
            more = _match_dirs(compiled[i], dirs)
            if more:
                got = sorted(got + more)
        if not got and not allow_empty:
            _error(("glob pattern '%s' didn't match anything, but allow_empty is set to " +
                    "False") % p)
        results.append(got)
    if len(results) == 1:
        result = results[0]
    elif disjoint:
        result = sorted([q for got in results for q in got])
    else:
        found = {}
        for got in results:
            for q in got:
                found[q] = True
        result = sorted(found.keys())
    result = _remove_excludes(result, exclude)
    if not result and not allow_empty:
        _error("all files in the glob have been excluded, but allow_empty is set to False")
    return result
