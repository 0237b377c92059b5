#!/usr/bin/env python3
"""File names against the real Meson and Ninja (docs/meson.md, "Names").

    names.py TRAWL_EXE

- Every name in ACCEPTED — quotes, '@', '$', '${…}', '@0@', '@INPUT@',
  spaces, shell and Ninja metacharacters, control bytes, UTF-8 — goes from
  `trawl meson` through files() into a program that is built, and each file
  is compiled and linked exactly once (the program lists them). A file
  with such a name added later is compiled in the same ninja run. The
  project's directory and the directory trawl lies in have such names too,
  so the check edge's command must quote them for Ninja and the shell.
- Every name in REFUSED — not UTF-8, a newline, a carriage return, '\\',
  '|' — is an error that names the file (escaped, in valid UTF-8) when
  Meson configures; Meson prints trawl's message, not a traceback. Added to
  a configured tree, it stops each ninja run until it is gone: never a
  build that silently misses it.
- The control: the same REFUSED names handed to Meson by hand (`cat` into
  files()) fail to configure or to build with Meson 1.0.1. Should a later
  Meson carry one of them, this fails, and the refusal can be lifted.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mesontest import (MAIN, REGENERATED, SOURCE, Project, check, check_in,
                       check_not_in, environment, finish, run, settle)

ACCEPTED = [
    "q'uote", 'dq"uote', "at@sign", "dollar$x", "${HOME}", "${x", "$$", "@0@", "@INPUT@",
    "@OUTPUT@", "@SOURCE_ROOT@", "sp ace", " lead", "trail ", "co:lon", "ha#sh", "tab\tx",
    "ctl\x01x", "esc\x1bx", "del\x7fx", "vt\x0bx", "ff\x0cx", "semi;x", "amp&x", "star*x",
    "qm?x", "br[x", "br]x", "br{x}", "tilde~x", "pct%x", "%s", "back`tick", "$(echo hi)",
    "lt<gt>", "eq=x", "comma,x", "excl!x", "paren(x)", "-dash", "café", "日本", "ls\u2028x",
    "nbsp\u00a0x", "x.c", "we$ird dir/@0@ 'x'",
]

# (name under src/, as bytes; how trawl shows it in the error).
REFUSED = [
    (b"nl\nx", "src/nl\\nx.c"),
    (b"cr\rx", "src/cr\\rx.c"),
    (b"back\\slash", "src/back\\\\slash.c"),
    (b"pi|pe", "src/pi|pe.c"),
    (b"lat\xe9x", "src/lat\\xe9x.c"),
    (b"over\xc0\xaflong", "src/over\\xc0\\xaflong.c"),
    (b"d|ir/x", "src/d|ir/x.c"),
]

TOP = """project('names', 'c')
trawl = find_program('trawl')
meson.add_postconf_script(trawl, 'meson', '--postconf')
r = run_command(trawl, 'meson', 'src/**/*.c', check : false)
assert(r.returncode() == 0, r.stderr())
executable('prog', 'main.c', files(r.stdout().split('\\n')))
"""

BY_HAND = """project('byhand', 'c')
executable('prog', 'main.c', files(run_command('cat', 'name.txt', check : true).stdout()))
"""


BY_HAND_LIST = """project('byhand', 'c')
names = run_command('cat', 'names.txt', check : true).stdout().split('\\n')
executable('prog', 'main.c', files(names))
"""


def recompiled(out):
    """The objects a ninja run compiled (Ninja's status lines)."""
    return sorted(l.split("Compiling C object ", 1)[1] for l in out.split("\n[")
                  if "Compiling C object " in l)


def source_id(i):
    return SOURCE % ("n%d" % i)


def accepted(tmp, env, root):
    p = Project(root, env)
    p.write("meson.build", TOP)
    p.write("main.c", MAIN)
    want = []
    for i, name in enumerate(ACCEPTED):
        p.write("src/%s.c" % name, source_id(i))
        want.append("n%d" % i)
    settle()
    rc, out, err = p.setup()
    check("hostile names: setup succeeds", rc, 0)
    rc, out = p.ninja()
    check("hostile names: the build succeeds", rc, 0)
    check("hostile names: each file compiled and linked once", p.program(), sorted(want))
    rc, out = p.ninja()
    check("hostile names: a second run succeeds", rc, 0)
    check_not_in("hostile names: a second run does not regenerate", REGENERATED, out)
    # Ninja 1.11 reads some of these names back from gcc's depfiles as
    # other paths (`ninja -d explain`: "q'uote.c" becomes "q" and "uote.c",
    # which do not exist), so their objects are compiled again on every
    # run, whoever listed them. The same names handed to Meson by hand
    # must show exactly the same.
    trawl_again = recompiled(out)
    h = Project(root + " by hand", env, git=False)
    h.write("meson.build", BY_HAND_LIST)
    h.write("main.c", MAIN)
    for i, name in enumerate(ACCEPTED):
        h.write("src/%s.c" % name, source_id(i))
    h.write("names.txt", "\n".join("src/%s.c" % name for name in ACCEPTED))
    rc, out, err = h.setup()
    rc, out = h.ninja()
    check("hostile names by hand: builds the same program", h.program(), p.program())
    rc, out = h.ninja()
    check("hostile names: a second run compiles again exactly what it does by hand",
          trawl_again, recompiled(out))
    print("     (compiled again on every run, with or without trawl: %d of %d)"
          % (len(trawl_again), len(ACCEPTED)))
    n = len(ACCEPTED)
    p.write("src/new $x @0@ 'q' \"d\" ${y}.c", source_id(n))
    want.append("n%d" % n)
    rc, out = p.ninja()
    check("hostile names: one more, ninja succeeds", rc, 0)
    check_in("hostile names: one more, regenerated in the same run", REGENERATED, out)
    check("hostile names: one more, compiled", p.program(), sorted(want))
    return p, want


def refused(tmp, env, p, want):
    # A fresh configure of the tree with every refused name in it.
    for name, _ in REFUSED:
        p.write(b"src/" + name + b".c", source_id(999))
    rc, out, err = run(["meson", "setup", "b-refused"], cwd=p.root, env=env, text=False)
    text = (out + err).decode("utf-8", "replace")
    check("refused names: setup fails", rc != 0, True)
    check("refused names: Meson's output is UTF-8", _is_utf8(out + err), True)
    check_not_in("refused names: Meson prints trawl's message, not a traceback", "Traceback",
                 text)
    for _, shown in REFUSED:
        check_in("refused names: %s is named" % shown,
                 "trawl: %s: Meson cannot carry this file name" % shown, text)
    for name, _ in REFUSED:
        p.remove(b"src/" + name + b".c")

    # Added to the configured tree: every run stops until it is gone.
    bad, shown = REFUSED[0]
    p.write(b"src/" + bad + b".c", source_id(999))
    for attempt in ("first", "second"):
        rc, out = p.ninja()
        check("a refused name added: the %s ninja run fails" % attempt, rc != 0, True)
        check_in("a refused name added: the %s run names it" % attempt,
                 "trawl: %s: Meson cannot carry this file name" % shown, out)
    p.remove(b"src/" + bad + b".c")
    rc, out = p.ninja()
    check("the refused name removed: ninja succeeds", rc, 0)
    check("the refused name removed: the program is as before", p.program(), sorted(want))
    rc, out = p.ninja()
    check_not_in("the refused name removed: then no regeneration", REGENERATED, out)


def by_hand(tmp, env):
    """Each REFUSED name handed to Meson without trawl: Meson 1.0.1 and
    Ninja cannot build it."""
    for k, (name, shown) in enumerate(REFUSED):
        p = Project(os.path.join(tmp, "byhand%d" % k), env, git=False)
        p.write("meson.build", BY_HAND)
        p.write("main.c", MAIN)
        p.write(b"src/" + name + b".c", source_id(k))
        p.write("name.txt", b"src/" + name + b".c")
        rc, out, err = p.setup()
        built = False
        if rc == 0:
            rc, out = p.ninja()
            built = rc == 0 and p.program() == ["n%d" % k]
        check("control: Meson alone cannot build %s" % shown, built, False)


def _is_utf8(data):
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def main(argv):
    trawl = os.path.abspath(argv[1])
    with tempfile.TemporaryDirectory(prefix="trawl-meson-names-") as tmp:
        env = environment(tmp, trawl, bindir="b $'in @0@")
        p, want = accepted(tmp, env, os.path.join(tmp, "pro $'j ${x} @0@"))
        refused(tmp, env, p, want)
        by_hand(tmp, env)
    finish()


if __name__ == "__main__":
    main(sys.argv)
