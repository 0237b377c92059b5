#!/usr/bin/env python3
"""What the coarse suites rely on (tests/coarse/meson.build), checked first.

    run.sh python3 shim_test.py SHIM

- TMPDIR is on ramfs, and its stamps are the kernel's coarse clock: a stamp
  lies between CLOCK_REALTIME_COARSE read before the change and the fine
  time after it, some stamps are earlier than the change (a fine stamp
  never is), and two changes in one tick give equal stamps;
- SHIM (coarse.c) preloaded with TRAWL_COARSE_GRAN_NS=N cuts every time
  read to a multiple of N, a time set explicitly reads back cut as the file
  system would store it, a time read and set back reads back unchanged; a
  bad setting stops the process with exit 2 and a message naming it;
- SHIM with TRAWL_COARSE_LAG_NS=L puts CLOCK_REALTIME L ahead of the
  coarse clock and of the stamps, which stay the kernel's (between the
  coarse clock before the change and CLOCK_REALTIME less L after it); a
  bad setting stops the process the same way.

Each "at least once" is tried a bounded number of times; a tick is 4 ms,
a pair of changes takes microseconds.
"""
import os
import subprocess
import sys
import tempfile
import time

CLOCK_REALTIME_COARSE = 5  # <linux/time.h>; not in Python 3.11's time module

failures = 0


def check(what, ok, detail=""):
    global failures
    if ok:
        print("ok   %s" % what)
    else:
        failures += 1
        print("FAIL %s %s" % (what, detail))


def fstype(path):
    """The type of the file system mounted at PATH, from mountinfo."""
    found = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            if fields[4] == path:
                found = fields[sep + 1]
    return found


def coarse_stamps(tmp):
    top = tempfile.gettempdir()
    check("TMPDIR is on ramfs", fstype(top) == "ramfs", repr(fstype(top)))
    within = True
    earlier = 0
    detail = ""
    for i in range(50):
        d = os.path.join(tmp, "d%d" % i)
        os.mkdir(d)
        os.stat(d)  # looked at: a multigrain file system would stamp finely now
        low = time.clock_gettime_ns(CLOCK_REALTIME_COARSE)
        fine = time.clock_gettime_ns(time.CLOCK_REALTIME)
        open(os.path.join(d, "f"), "w").close()
        high = time.clock_gettime_ns(time.CLOCK_REALTIME)
        st = os.stat(d)
        if not low <= st.st_mtime_ns <= high:
            within = False
            detail = "%d not in [%d, %d]" % (st.st_mtime_ns, low, high)
        earlier += st.st_mtime_ns < fine
    check("a stamp lies between the coarse clock before the change and the time after it",
          within, detail)
    check("some stamps are earlier than their change (%d of 50)" % earlier, earlier > 0)

    d = os.path.join(tmp, "pairs")
    os.mkdir(d)
    equal = tries = 0
    while equal == 0 and tries < 1000:
        open(os.path.join(d, "a%d" % tries), "w").close()
        first = os.stat(d)
        open(os.path.join(d, "b%d" % tries), "w").close()
        second = os.stat(d)
        equal += (first.st_mtime_ns, first.st_ctime_ns) == (second.st_mtime_ns, second.st_ctime_ns)
        tries += 1
    check("two changes in one tick give equal stamps (within %d tries)" % tries, equal > 0)


def cut_times(tmp, gran):
    """In a child with the shim preloaded (TRAWL_COARSE_GRAN_NS=GRAN)."""
    ok = True
    for i in range(20):
        d = os.path.join(tmp, "c%d" % i)
        os.mkdir(d)
        open(os.path.join(d, "f"), "w").close()
        for path in (d, os.path.join(d, "f")):
            st = os.stat(path)
            ok = ok and all(t % gran == 0 for t in (st.st_atime_ns, st.st_mtime_ns, st.st_ctime_ns))
    check("every time read is a multiple of %d ns" % gran, ok)
    f = os.path.join(tmp, "c0", "f")
    x = 1700000000 * 10**9 + 123456789
    os.utime(f, ns=(x, x))
    got = os.stat(f).st_mtime_ns
    check("a time set explicitly reads back cut", got == x // gran * gran, "%d" % got)
    st = os.stat(tmp)
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    check("a time read and set back reads back unchanged", os.stat(tmp).st_mtime_ns == st.st_mtime_ns)


def lagging(tmp, lag):
    """In a child with the shim preloaded (TRAWL_COARSE_LAG_NS=LAG)."""
    behind = []
    within = True
    detail = ""
    for i in range(20):
        coarse = time.clock_gettime_ns(CLOCK_REALTIME_COARSE)
        fine = time.clock_gettime_ns(time.CLOCK_REALTIME)
        behind.append(fine - coarse)
        f = os.path.join(tmp, "l%d" % i)
        open(f, "w").close()
        # The kernel's own time after the change: the shim's less its lag.
        # (Not the coarse clock after it: from Linux 6.13 a stamp can be
        # pulled up to a fine time just handed out elsewhere, the floor.)
        after = time.clock_gettime_ns(time.CLOCK_REALTIME) - lag
        stamp = os.stat(f).st_mtime_ns
        if not coarse <= stamp <= after:
            within = False
            detail = "%d not in [%d, %d]" % (stamp, coarse, after)
    check("CLOCK_REALTIME is at least %d ns ahead of the coarse clock" % lag, min(behind) >= lag,
          "(least %d)" % min(behind))
    check("a stamp still lies between the coarse clock before its change and the kernel's "
          "time after it", within, detail)


def main(argv):
    if len(argv) == 3 and argv[1] == "--lag":
        with tempfile.TemporaryDirectory() as tmp:
            lagging(tmp, int(argv[2]))
        return 1 if failures else 0
    if len(argv) == 3 and argv[1] == "--cut":
        with tempfile.TemporaryDirectory() as tmp:
            cut_times(tmp, int(argv[2]))
        return 1 if failures else 0
    shim = os.path.abspath(argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        coarse_stamps(tmp)
    # Each setting in a child with the shim preloaded, which checks it.
    for name, value, mode, what in (
            ("TRAWL_COARSE_GRAN_NS", "1000000000", "--cut", "times"),
            ("TRAWL_COARSE_GRAN_NS", "2000000000", "--cut", "times"),
            ("TRAWL_COARSE_GRAN_NS", "10000000", "--cut", "times"),
            ("TRAWL_COARSE_LAG_NS", "20000000", "--lag", "clock")):
        env = dict(os.environ, LD_PRELOAD=shim, **{name: value})
        p = subprocess.run([sys.executable, os.path.abspath(__file__), mode, value], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        sys.stdout.write(p.stdout.decode())
        check("%s=%s: the checks of its %s pass" % (name, value, what), p.returncode == 0,
              "(exit %d)" % p.returncode)
    for name, value in (("TRAWL_COARSE_GRAN_NS", "2s"), ("TRAWL_COARSE_GRAN_NS", "0"),
                        ("TRAWL_COARSE_GRAN_NS", "20000000000"), ("TRAWL_COARSE_LAG_NS", "-1"),
                        ("TRAWL_COARSE_LAG_NS", "2000000000")):
        env = dict(os.environ, LD_PRELOAD=shim, **{name: value})
        p = subprocess.run([sys.executable, "-c", "pass"], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        check("%s=%s: exit 2 with a message naming it" % (name, value),
              p.returncode == 2 and ("%s=%s:" % (name, value)).encode() in p.stderr,
              "(exit %d, %r)" % (p.returncode, p.stderr))
    print("%d failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
