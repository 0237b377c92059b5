"""What the command-line tests of tests/walk share: a check that records
failures, a run of the command, a file written with its directories."""
import os
import subprocess

FAILURES = []


def check(what, got, want):
    if got != want:
        FAILURES.append(what)
        print("FAIL %s\n  got:  %r\n  want: %r" % (what, got, want))
    else:
        print("ok   %s" % what)


def run(trawl, args, env):
    """(exit status, stdout, stderr) of TRAWL ARGS, output decoded with
    surrogateescape."""
    p = subprocess.run([trawl] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    return p.returncode, p.stdout.decode("utf-8", "surrogateescape"), \
        p.stderr.decode("utf-8", "surrogateescape")


def write(path, text=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
