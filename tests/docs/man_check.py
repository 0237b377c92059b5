#!/usr/bin/env python3
"""The man pages (docs/man): `meson install` puts trawl.1 and one
trawl-COMMAND.1 for every command `trawl help` lists into MANDIR/man1, and
each page holds every option of that command's --help (the page is made
from it: a command or an option without its page fails here).

usage: man_check.py BUILD_DIR TRAWL
"""
import os
import re
import subprocess
import sys
import tempfile


def options(text):
    return set(re.findall(r"(?<![\w-])(--?[A-Za-z0-9][\w-]*)", text))


def main(argv):
    build, trawl = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    with tempfile.TemporaryDirectory(prefix="trawl-man-") as tmp:
        p = subprocess.run(["meson", "install", "--no-rebuild", "--quiet", "-C", build,
                            "--destdir", tmp], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            sys.exit("FAIL: meson install --destdir:\n" + p.stdout.decode(errors="replace"))
        pages = {}
        for d, _, names in os.walk(tmp):
            if d.endswith("/man1"):
                pages.update({n: os.path.join(d, n) for n in names})
        help_all = subprocess.run([trawl, "help"], stdout=subprocess.PIPE, check=True).stdout.decode()
        commands = re.findall(r"^  ([a-z][a-z-]*) ", help_all.split("Commands:")[1], re.M)
        commands = [c for c in commands if c != "help"]
        if not commands:
            sys.exit("FAIL: no command in `trawl help`")
        failed = []
        for cmd in [""] + commands:
            page = "trawl%s.1" % ("-" + cmd if cmd else "")
            if page not in pages:
                failed.append("%s: not installed (installed: %s)" % (page, sorted(pages)))
                continue
            roff = open(pages[page], encoding="utf-8").read()
            text = re.sub(r"\\f[BIRP]|\\[,/&]", "", roff).replace("\\-", "-").replace("\\e", "\\")
            helptext = subprocess.run([trawl] + ([cmd] if cmd else []) + ["--help"],
                                      stdout=subprocess.PIPE, check=True).stdout.decode()
            missing = sorted(o for o in options(helptext) if o not in options(text))
            if missing:
                failed.append("%s: options of --help missing: %s" % (page, " ".join(missing)))
            if not re.search(r"^\.TH %s " % re.escape(page[:-2].upper()), roff, re.M):
                failed.append("%s: its title is not %s" % (page, page[:-2].upper()))
            print("ok: %s, %d options" % (page, len(options(helptext))))
        if failed:
            sys.exit("FAIL:\n  " + "\n  ".join(failed))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
