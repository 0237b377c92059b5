"""Reader for the matcher corpus (tests/corpus/*.txt); the format is described
in tests/corpus/README.md. Standard library only: the CLI runner and the tool
checker import it, and tests/unit/corpus.cpp reads the same format in C++.

Every field comes back as bytes, escapes decoded."""

import os
import re

DIALECTS = ("trawl", "git", "cmake", "bazel")
FLAGS = ("-", "icase")
TYPES = (b"file", b"dir")
FACT_KEYS = ("prefix", "suffix", "ext", "minlen", "roots", "nothing", "alts")
_SIMPLE = {ord("\\"): b"\\", ord("t"): b"\t", ord("n"): b"\n",
           ord("r"): b"\r", ord("0"): b"\0"}
_HEX = re.compile(rb"[0-9a-fA-F]{2}")


class CorpusError(Exception):
    pass


class Row:
    """One case. kind is 'match', 'error', 'prune', 'facts' or 'escape'; args
    holds the fields after the pattern (decoded bytes). An escape row's args
    are those of a match row that says yes: [PATH, True]."""

    def __init__(self, file, line, kind, dialect, flags, pattern, args):
        self.file = file
        self.line = line
        self.kind = kind
        self.dialect = dialect
        self.flags = flags
        self.pattern = pattern
        self.args = args

    @property
    def icase(self):
        return self.flags == "icase"

    @property
    def where(self):
        return "%s:%d" % (os.path.basename(self.file), self.line)

    def __repr__(self):
        return "%s: %s %s %s %r %r" % (self.where, self.kind, self.dialect,
                                       self.flags, self.pattern, self.args)


def decode_field(raw, where):
    """Decode one field: '""' is the empty string, otherwise C-style escapes
    \\\\ \\t \\n \\r \\0 \\xHH; any other backslash sequence is an error."""
    if raw == b'""':
        return b""
    out = bytearray()
    i = 0
    while i < len(raw):
        c = raw[i]
        if c != ord("\\"):
            out.append(c)
            i += 1
            continue
        if i + 1 >= len(raw):
            raise CorpusError("%s: field ends in a lone backslash" % where)
        e = raw[i + 1]
        if e in _SIMPLE:
            out += _SIMPLE[e]
            i += 2
        elif e == ord("x") and _HEX.fullmatch(raw[i + 2:i + 4]):
            out.append(int(raw[i + 2:i + 4], 16))
            i += 4
        else:
            raise CorpusError("%s: unknown escape %r" % (where, raw[i:i + 4]))
    return bytes(out)


def encode_field(value):
    """The inverse of decode_field, for messages and generated rows."""
    if value == b"":
        return '""'
    out = []
    for b in value:
        if b == 0x5C:
            out.append("\\\\")
        elif b == 0x09:
            out.append("\\t")
        elif b == 0x0A:
            out.append("\\n")
        elif b == 0x0D:
            out.append("\\r")
        elif b == 0:
            out.append("\\0")
        elif b < 0x20 or b >= 0x7F:
            out.append("\\x%02x" % b)
        else:
            out.append(chr(b))
    s = "".join(out)
    if s == '""':
        s = "\\x22\\x22"
    return s


def _check_yes_no(value, where):
    if value not in (b"yes", b"no"):
        raise CorpusError("%s: expected 'yes' or 'no', got %r" % (where, value))
    return value == b"yes"


def parse_file(path):
    rows = []
    with open(path, "rb") as f:
        data = f.read()
    for lineno, line in enumerate(data.split(b"\n"), 1):
        if not line or line.startswith(b"#"):
            continue
        where = "%s:%d" % (os.path.basename(path), lineno)
        raw = line.split(b"\t")
        if len(raw) < 5:
            raise CorpusError("%s: too few fields (%d)" % (where, len(raw)))
        kind = raw[0].decode("ascii", "replace")
        dialect = raw[1].decode("ascii", "replace")
        flags = raw[2].decode("ascii", "replace")
        if dialect not in DIALECTS:
            raise CorpusError("%s: unknown dialect %r" % (where, dialect))
        if flags not in FLAGS:
            raise CorpusError("%s: unknown flags %r" % (where, flags))
        pattern = decode_field(raw[3], where)
        args = [decode_field(r, where) for r in raw[4:]]
        if kind == "match":
            # An optional TYPE: the path as a file or a directory
            # (trawl_pattern_match_entry); without it the match is untyped.
            if len(args) not in (2, 3) or (len(args) == 3 and args[2] not in TYPES):
                raise CorpusError("%s: match rows are: PATH yes|no [file|dir]" % where)
            args = [args[0], _check_yes_no(args[1], where),
                    args[2].decode() if len(args) == 3 else None]
        elif kind == "prune":
            if len(args) != 2:
                raise CorpusError("%s: %s rows have 6 fields" % (where, kind))
            args = [args[0], _check_yes_no(args[1], where)]
        elif kind == "error":
            if len(args) != 2 or not args[0].isdigit():
                raise CorpusError("%s: error rows are: offset reason" % where)
            args = [int(args[0]), args[1]]
        elif kind == "facts":
            if args[0].decode("ascii", "replace") not in FACT_KEYS:
                raise CorpusError("%s: unknown fact %r" % (where, args[0]))
        elif kind == "escape":
            if len(args) != 1 or dialect != "trawl" or flags != "-":
                raise CorpusError("%s: escape rows are: escape trawl - PATTERN PATH" % where)
            args = [args[0], True, None]
        else:
            raise CorpusError("%s: unknown row kind %r" % (where, kind))
        rows.append(Row(path, lineno, kind, dialect, flags, pattern, args))
    return rows


def corpus_files(directory):
    return sorted(os.path.join(directory, n) for n in os.listdir(directory)
                  if n.endswith(".txt"))


def load(directory):
    rows = []
    for path in corpus_files(directory):
        rows.extend(parse_file(path))
    return rows
