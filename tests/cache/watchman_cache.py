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
"""
import os
import pwd
import shutil
import signal
import re
import subprocess
import sys
import tempfile
import time

FILTER = os.environ.get("TRAWL_WATCHMAN_TEST_FILTER", "*CacheProperty*:CacheWatchman.*")
# Settings of tree_changes.hpp this suite leaves out: WORKTREE (4), a linked
# work tree as the root. Its `.git` is a file, so watchman 4.9.0 makes its
# sync cookies in the root itself and every check re-reads the root: the
# answers stay right, but the quick path is never taken (docs/cache.md,
# "Watchman", limits; issue 25). The stat path's suites cover the setting.
LEFT_OUT_SETTINGS = {4}


def gtest_filter(exe):
    """FILTER less the CacheProperty instances of LEFT_OUT_SETTINGS, named
    from the binary's own list (GetParam() = (seed, setting))."""
    out = subprocess.run([exe, "--gtest_list_tests", "--gtest_filter=" + FILTER],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    left_out, suite = [], ""
    for line in out.splitlines():
        if not line.startswith(" "):
            suite = line.strip()
            continue
        m = re.match(r"\s+(\S+)\s+# GetParam\(\) = \((\d+), (\d+)\)", line)
        if m and suite.startswith("Seeds/CacheProperty") and int(m.group(3)) in LEFT_OUT_SETTINGS:
            left_out.append(suite + m.group(1))
    return FILTER + ("-" + ":".join(left_out) if left_out else "")


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
        p = subprocess.run([exe, "--gtest_filter=" + gtest_filter(exe)], env=env,
                           stdout=subprocess.PIPE, text=True)
        sys.stdout.write(p.stdout)
        lines = [l for l in p.stdout.splitlines() if l.startswith("[watchman] CacheProperty ")]
        ok = p.returncode == 0
        # Every sequence asserted watchman answered and was restarted; and
        # the rows ran, not skipped.
        sequences = p.stdout.count("[       OK ] Seeds/CacheProperty.")
        if len(lines) != sequences or sequences == 0:
            print("FAIL: %d sequences, %d [watchman] lines" % (sequences, len(lines)))
            ok = False
        if "[  SKIPPED ]" in p.stdout or "[       OK ] CacheWatchman." not in p.stdout:
            print("FAIL: the CacheWatchman rows did not run")
            ok = False
        return 0 if ok else 1
    finally:
        stop(d, signal.SIGTERM)
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
