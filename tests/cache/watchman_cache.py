#!/usr/bin/env python3
"""The cache's property test and its watchman rows with the watchman back-end on.

    watchman_cache.py CACHE_RUNS        run them against a private daemon
    watchman_cache.py --restart DIR     (the property test's restart command)

A private watchman daemon (Debian 12's 4.9.0) is started here with its own
socket, state file, log and pid file in a temporary directory, and stopped
afterwards by its pid: never the user's own (TRAWL_WATCHMAN_SOCK points the
runs at it, and WATCHMAN_SOCK is removed). As root the daemon runs as nobody,
as the property test's runs do (tree_changes.hpp, Enforced), so that they can
reach its socket. Halfway through each sequence the test runs `--restart`:
the daemon is killed (SIGKILL) and started again from its state file, and the
next re-check must not trust the old clocks. docs/cache.md, "Watchman".

Every change class of tree_changes.hpp in every setting, one seed each
(meson.build), counted as the stat suite counts them. In the two settings
whose watch root is the walk's root without a `.git` directory (no work
tree; a linked work tree, whose `.git` is a file) watchman 4.9.0 would make
its sync cookies in the root: there the runs must not ask it (the stat path,
at once, with the reason in the report), and the answers are checked as
everywhere else.
"""
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time

FILTER = os.environ.get("TRAWL_WATCHMAN_TEST_FILTER",
                        "*CacheProperty*:CacheWatchman.*:CacheWatchmanClasses.*")


def daemon_args(d):
    return ["watchman", "--sockname=" + os.path.join(d, "sock"),
            "--statefile=" + os.path.join(d, "state"),
            "--logfile=" + os.path.join(d, "log"),
            "--pidfile=" + os.path.join(d, "pid")]


def start(d, as_nobody=True):
    """Start the daemon (the client spawns it with these paths), as nobody
    when root (unless not AS_NOBODY), and wait until it answers."""
    user = None
    if os.geteuid() == 0 and as_nobody:
        user = pwd.getpwnam("nobody").pw_uid
    env = {k: v for k, v in os.environ.items() if k != "WATCHMAN_SOCK"}
    # The client spawns the daemon and asks it; right after a SIGKILL the
    # first try may meet the old socket ("Connection reset by peer").
    for attempt in range(5):
        p = subprocess.run(daemon_args(d) + ["version"], env=env, user=user,
                           stdout=subprocess.DEVNULL, timeout=60)
        if p.returncode == 0:
            break
        time.sleep(0.5)
    else:
        raise SystemExit("watchman: the daemon in %s did not start" % d)
    for _ in range(200):
        if os.path.exists(os.path.join(d, "pid")):
            return
        time.sleep(0.05)
    raise SystemExit("watchman: no pid file in " + d)


def pid_of(d):
    with open(os.path.join(d, "pid")) as f:
        return int(f.read().strip())


def stop(d, sig):
    """Kill the daemon of D by its pid, and wait until it is gone."""
    try:
        pid = pid_of(d)
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return
    for _ in range(400):
        if not os.path.exists("/proc/%d" % pid) or \
                open("/proc/%d/stat" % pid).read().split()[2] == "Z":
            break
        time.sleep(0.025)
    else:
        os.kill(pid, signal.SIGKILL)
    try:
        os.unlink(os.path.join(d, "pid"))
    except OSError:
        pass


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--restart":
        stop(sys.argv[2], signal.SIGKILL)
        start(sys.argv[2])
        return 0
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    if shutil.which("watchman") is None:
        print("watchman is not installed (scripts/bootstrap installs it)", file=sys.stderr)
        return 1
    exe = sys.argv[1]
    d = tempfile.mkdtemp(prefix="trawl-watchman-")
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(d, nobody.pw_uid, nobody.pw_gid)
    os.chmod(d, 0o755)
    try:
        start(d)
        env = {k: v for k, v in os.environ.items() if k != "WATCHMAN_SOCK"}
        env.update({
            "TRAWL_WATCHMAN": "on",
            "TRAWL_WATCHMAN_SOCK": os.path.join(d, "sock"),
            "TRAWL_TEST_WATCHMAN": "1",
            "TRAWL_TEST_WATCHMAN_RESTART": "%s %s --restart %s" % (
                sys.executable, os.path.abspath(__file__), d),
        })
        p = subprocess.run([exe, "--gtest_filter=" + FILTER], env=env,
                           stdout=subprocess.PIPE, text=True, errors="replace")
        sys.stdout.write(p.stdout)
        lines = [l for l in p.stdout.splitlines() if l.startswith("[watchman] CacheProperty ")]
        ok = p.returncode == 0
        # Every sequence asserted watchman answered and was restarted; and
        # the rows ran, not skipped.
        sequences = p.stdout.count("[       OK ] Seeds/CacheProperty.")
        if len(lines) != sequences or sequences == 0:
            print("FAIL: %d sequences, %d [watchman] lines" % (sequences, len(lines)))
            ok = False
        if ("[  SKIPPED ]" in p.stdout or "[       OK ] CacheWatchman." not in p.stdout or
                "[       OK ] CacheWatchmanClasses." not in p.stdout):
            print("FAIL: the CacheWatchman rows did not run")
            ok = False
        return 0 if ok else 1
    finally:
        stop(d, signal.SIGTERM)
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
