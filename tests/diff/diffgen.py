"""Pieces the differential tests against git share: weighted random bytes for
file names, which names a test may create, bash-quoting of bytes for
reproduction commands, and spotting a sanitizer's report."""


def pick_byte(rng, alphabet, fallback):
    """One byte from ALPHABET, a list of (bytes, weight): a group by weight,
    then a byte of it uniformly. FALLBACK if rounding runs past the end."""
    total = sum(w for _, w in alphabet)
    r = rng.uniform(0, total)
    for chars, w in alphabet:
        if r < w:
            return chars[rng.randrange(len(chars))]
        r -= w
    return fallback


def name_ok(name, max_len):
    """May a test create a file of this name? Not empty, '.', '..', nothing
    with '/' or NUL, nothing starting with '.git' (a repository's own
    directory: stay clear), at most MAX_LEN bytes."""
    if not name or name in (b".", b"..") or b"/" in name or b"\0" in name:
        return False
    if name.lower().startswith(b".git"):
        return False
    return len(name) <= max_len


def show(b):
    """B as a bash $'...' word (every byte printable and unambiguous); a str
    is returned as it is."""
    if isinstance(b, str):
        return b
    out = []
    for c in b:
        if c == ord("'"):
            out.append("\\'")
        elif c == ord("\\"):
            out.append("\\\\")
        elif 32 <= c < 127:
            out.append(chr(c))
        else:
            out.append("\\x%02x" % c)
    return "$'" + "".join(out) + "'"


def sanitizer_said(err):
    """Did ASan, LSan or UBSan report something (whatever the exit status)?
    No generated name or pattern can spell these words."""
    return "Sanitizer" in err or "runtime error:" in err
