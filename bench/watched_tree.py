"""A fixture copied into a git work tree and watched by a private watchman
daemon: what the plugins' no-op benchmarks (bench/meson_noop.py,
bench/cmake_peers.py, --watchman) time their watchman arms against.

The fixture itself is never touched: it is copied (`cp -a`) into a
temporary directory, made a git repository unless it is one (every file
committed, as bench/watchman_check.py does), so that the watch's root has the `.git`
directory watchman 4.9.0 makes its sync cookies in (without one trawl never
asks it: docs/cache.md, "Sync cookies"). The daemon is started by
tests/cache/watchman_cache.py with its own socket, state file, log and pid
file in the same temporary directory, never the user's, and stopped by its
pid in close(). watchman 4.9.0's client ignores WATCHMAN_SOCK: every
`watchman` run here is given --sockname.

With below_top, the copy is a directory of the work tree, not its top: a
walk from it (a CMake glob enters hidden directories) then holds no `.git`,
where watchman makes a sync cookie at every question, moving the time of a
directory such a walk would record (and watch: Ninja would run the check
at every build).
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "cache"))
import watchman_cache  # noqa: E402


class WatchedTree:
    """SRC copied to self.tree (a git work tree) and watched by a private
    daemon on self.sock; self.env_watchman and self.env_stat are the
    environment of a run with the back-end (TRAWL_WATCHMAN=auto and the
    private socket) and without it (TRAWL_WATCHMAN=off)."""

    def __init__(self, src, name="tree", below_top=False):
        if shutil.which("watchman") is None:
            sys.exit("watchman is not installed (scripts/bootstrap installs it)")
        self.tmp = tempfile.mkdtemp(prefix="trawl-wm-bench-")
        self.daemon = os.path.join(self.tmp, "daemon")
        self.sock = os.path.join(self.daemon, "sock")
        # The work tree's top, which is watched, and the copy.
        self.top = os.path.join(self.tmp, "top" if below_top else name)
        self.tree = os.path.join(self.top, name) if below_top else self.top
        try:
            os.mkdir(self.daemon)
            if below_top:
                os.mkdir(self.top)
            subprocess.run(["cp", "-a", src, self.tree], check=True)
            git = ["git", "-C", self.top]
            quiet = dict(stdout=subprocess.DEVNULL, check=True)
            if not os.path.isdir(os.path.join(self.top, ".git")):  # (`repo` is one)
                subprocess.run(git + ["init", "-q"], **quiet)
                subprocess.run(git + ["add", "-A"], **quiet)
                subprocess.run(git + ["-c", "user.name=b", "-c", "user.email=b@b", "commit",
                                      "-qm", "t"], **quiet)
            watchman_cache.start(self.daemon, as_nobody=False)
            subprocess.run(["watchman", "--sockname=" + self.sock, "watch-project", self.top],
                           **quiet)
        except BaseException:
            self.close()
            raise
        base = {k: v for k, v in os.environ.items()
                if k not in ("WATCHMAN_SOCK", "TRAWL_WATCHMAN", "TRAWL_WATCHMAN_SOCK")}
        self.env_watchman = dict(base, TRAWL_WATCHMAN="auto", TRAWL_WATCHMAN_SOCK=self.sock)
        self.env_stat = dict(base, TRAWL_WATCHMAN="off")

    def close(self):
        """Stop the daemon (by its pid) and remove the copy."""
        watchman_cache.stop(self.daemon, signal.SIGTERM)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def assert_watchman_used(argv, cwd, env, who):
    """ARGV (a `trawl check` with its arguments) run with --stats in ENV must
    exit 0 (unchanged) and say that watchman answered, or the benchmark
    stops: a watchman arm that took the stat path would time the wrong thing."""
    p = subprocess.run(argv + ["--stats"], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    err = p.stderr.decode(errors="replace").strip()
    if p.returncode != 0 or "watchman used" not in err:
        sys.exit("%s: the watchman arm's check did not use watchman (exit %d): %s" % (
            who, p.returncode, err))
    return err
