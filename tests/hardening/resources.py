#!/usr/bin/env python3
"""Resources running out (docs/reliability.md, "Resources").

    resources.py TRAWL SHIM              no space, read-only, EIO
    resources.py TRAWL SHIM --million DIR
                                         and a tree of 1,000,000 files
                                         (bench/fixtures.py --big, made in
                                         DIR when missing) under ulimit -v
                                         at twice the measured peak

The script runs itself again inside a mount namespace of its own (a user
namespace too when not root), where it mounts what it needs on directories
it made: nothing outside the namespace sees a mount, and it goes when the
script ends. SHIM is tests/hardening/faults.c built as a library.

- **No space**: the caches and stamps on a tmpfs of 512 KiB, filled up once
  a cache is written; the tree then changes. A cached walk prints the right
  answer, exit 0, one warning ("cache not written: ... No space left on
  device"); the old cache is kept byte for byte; nothing is left behind.
  trawl check: the --touch stamp is touched (it needs no space), exit 1,
  one warning, and once there is space again the next check tells the
  change again and writes the cache. batch --bump: the stamp cannot be
  rewritten: it is removed, exit 3, the answers printed, the cache kept.
- **Read-only build directory** (the state directory bind-mounted
  read-only): a cached walk, exit 0, right answers, one warning; trawl
  check with its stamp elsewhere, exit 1 and one warning; with the stamp in
  the read-only directory, exit 3 and the cache untouched.
- **EIO** (the shim: device-mapper's error target needs a kernel with
  device-mapper; this one does not): reading the cache fails — one warning,
  a full walk, the right answer; trawl check counts it as a change.
  Reading a directory of the tree fails — reported once as a problem, exit
  0 (3 with --strict), the rest of the answer right; the next cached run,
  the disk healed, reads it again and answers in full.
- **ulimit -v** (--million): trawl '**', trawl --cache (written, then
  trusted), trawl check and trawl batch on a 1,000,000-file tree, each
  with its address space limited to twice the peak measured without a
  limit: each completes with the same answer.
"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from hardlib import TORN, check, env_base, finish, git_tree, standard_files  # noqa: E402


def stderr_lines(err):
    return [ln for ln in err.splitlines() if ln.strip()]


class Env:
    def __init__(self, trawl, shim, top):
        self.trawl, self.shim, self.top = trawl, shim, top
        self.env = env_base(os.path.join(top, "home"))
        self.tree = os.path.join(top, "tree")
        files = standard_files()
        for d in range(60):
            for f in range(8):
                files["bulk/d%02d/some-longer-file-name-%02d.c" % (d, f)] = ""
        git_tree(self.tree, self.env, files)

    def run(self, args, extra=None):
        e = dict(self.env, **(extra or {}))
        p = subprocess.run([self.trawl] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=e)
        return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")

    def fresh(self, pattern="**/*.c"):
        return self.run(["-C", self.tree, pattern])[1]

    def grow(self, n):
        d = os.path.join(self.tree, "bulk", "grown%d" % n)
        os.makedirs(d)
        for i in range(40):
            open(os.path.join(d, "another-file-%02d.c" % i), "w").close()


def mount(*args):
    subprocess.run(["mount"] + list(args), check=True)


def no_space(e):
    small = os.path.join(e.top, "small")
    os.makedirs(small)
    mount("-t", "tmpfs", "-o", "size=512k", "trawl-hardening", small)
    try:
        cache = os.path.join(small, "cache")
        stamp = os.path.join(small, "stamp")
        bcache = os.path.join(small, "bcache")
        bump = os.path.join(small, "bump")
        q = os.path.join(e.top, "q.jsonl")
        with open(q, "w") as f:
            f.write('{"id": 1, "root": "%s", "include": ["**/*.c"]}\n' % e.tree)
        e.run(["-C", e.tree, "--cache", cache, "**/*.c"])
        e.run(["batch", "--cache", bcache, "--bump", bump, q])
        open(stamp, "w").close()
        old = open(cache, "rb").read()
        old_b = open(bcache, "rb").read()
        # Fill the file system to the last byte.
        fd = os.open(os.path.join(small, "filler"), os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError:
            pass
        try:
            while True:
                os.write(fd, b"\0")
        except OSError:
            pass
        os.close(fd)
        e.grow(1)
        fresh = e.fresh()
        rc, out, err = e.run(["-C", e.tree, "--cache", cache, "**/*.c"])
        lines = stderr_lines(err)
        check("no space: a cached walk answers right, exit 0, one warning naming the cause",
              rc == 0 and out == fresh and len(lines) == 1 and "cache not written" in lines[0]
              and "No space left on device" in lines[0], "exit %d %r" % (rc, err))
        check("no space: the old cache is kept, nothing left beside it",
              open(cache, "rb").read() == old and
              sorted(os.listdir(small)) == ["bcache", "bump", "cache", "filler", "stamp"],
              repr(sorted(os.listdir(small))))
        os.utime(stamp, (1, 1))
        rc, out, err = e.run(["check", "--touch", stamp, "--cache", cache])
        lines = stderr_lines(err)
        check("no space: trawl check tells the change (exit 1), touches the stamp, one warning",
              rc == 1 and os.stat(stamp).st_mtime > 1 and len(lines) == 1
              and "cache not written" in lines[0], "exit %d %r" % (rc, err))
        rc, out, err = e.run(["batch", "--cache", bcache, "--bump", bump, q])
        check("no space: batch --bump prints the answers, exit 3, removes the stamp it could not "
              "write, keeps the cache", rc == 3 and b"another-file-00.c" in out
              and not os.path.exists(bump) and open(bcache, "rb").read() == old_b
              and not any(t in err for t in TORN), "exit %d %r" % (rc, err))
        os.unlink(os.path.join(small, "filler"))
        os.utime(stamp, (1, 1))
        rc, out, err = e.run(["check", "--touch", stamp, "--cache", cache])
        check("no space, then space again: the next check tells the change again and writes the "
              "cache", rc == 1 and os.stat(stamp).st_mtime > 1 and err == ""
              and open(cache, "rb").read() != old, "exit %d %r" % (rc, err))
        rc, out, err = e.run(["check", "--cache", cache])
        check("no space, then space again: then a check finds nothing", rc == 0, err)
    finally:
        subprocess.run(["umount", small])


def read_only(e):
    state = os.path.join(e.top, "ro")
    os.makedirs(state)
    cache = os.path.join(state, "cache")
    stamp = os.path.join(state, "stamp")
    e.run(["-C", e.tree, "--cache", cache, "**/*.c"])
    open(stamp, "w").close()
    old = open(cache, "rb").read()
    mount("--bind", state, state)
    try:
        mount("-o", "remount,bind,ro", state)
        e.grow(2)
        fresh = e.fresh()
        rc, out, err = e.run(["-C", e.tree, "--cache", cache, "**/*.c"])
        lines = stderr_lines(err)
        check("read-only: a cached walk answers right, exit 0, one warning naming the cause",
              rc == 0 and out == fresh and len(lines) == 1 and "Read-only file system" in lines[0],
              "exit %d %r" % (rc, err))
        outside = os.path.join(e.top, "stamp-elsewhere")
        open(outside, "w").close()
        os.utime(outside, (1, 1))
        rc, out, err = e.run(["check", "--touch", outside, "--cache", cache])
        lines = stderr_lines(err)
        check("read-only: trawl check, its stamp elsewhere: exit 1, the stamp touched, one "
              "warning", rc == 1 and os.stat(outside).st_mtime > 1 and len(lines) == 1
              and "cache not written" in lines[0], "exit %d %r" % (rc, err))
        rc, out, err = e.run(["check", "--touch", stamp, "--cache", cache])
        check("read-only: trawl check, its stamp in the read-only directory: exit 3, naming "
              "the stamp, the cache untouched", rc == 3 and "--touch" in err
              and open(cache, "rb").read() == old, "exit %d %r" % (rc, err))
    finally:
        subprocess.run(["umount", state])
    rc, out, err = e.run(["check", "--cache", cache])
    check("read-only, then writable: the next check tells the change", rc == 1, err)


def eio(e):
    state = os.path.join(e.top, "eio")
    os.makedirs(state)
    cache = os.path.join(state, "cache")
    e.run(["-C", e.tree, "--cache", cache, "**/*.c"])
    fault = {"LD_PRELOAD": e.shim, "TRAWL_FAULT_OPS": "read", "TRAWL_FAULT_PATH": cache,
             "TRAWL_FAULT_AT": "1", "TRAWL_FAULT_ONWARD": "1", "TRAWL_FAULT_ACTION": "EIO"}
    fresh = e.fresh()
    rc, out, err = e.run(["-C", e.tree, "--cache", cache, "--stats", "**/*.c"], fault)
    warn = [ln for ln in stderr_lines(err) if not ln.startswith("trawl: ") or "cache " in ln
            and ":  " not in ln]
    check("EIO reading the cache: the right answer, exit 0, one warning naming the cause",
          rc == 0 and out == fresh and len(warn) == 1 and "Input/output error" in warn[0]
          and "not trusted" in err, "exit %d %r" % (rc, err))
    rc, out, err = e.run(["check", "--cache", cache], fault)
    check("EIO reading the cache: trawl check counts it as a change (exit 1)",
          rc == 1 and "Input/output error" in err, "exit %d %r" % (rc, err))
    # A directory of the tree that cannot be read.
    bad = os.path.join(e.tree, "bulk", "d07")
    dfault = {"LD_PRELOAD": e.shim, "TRAWL_FAULT_OPS": "getdents", "TRAWL_FAULT_PATH": bad,
              "TRAWL_FAULT_AT": "1", "TRAWL_FAULT_ONWARD": "1", "TRAWL_FAULT_ACTION": "EIO"}
    # Changed, so that the cached runs read it (a trusted record is not).
    open(os.path.join(bad, "new.c"), "w").close()
    fresh = e.fresh()
    want = b"".join(ln + b"\n" for ln in fresh.splitlines() if not ln.startswith(b"bulk/d07/"))
    for strict, cached in ((False, False), (True, False), (False, True), (True, True)):
        args = ["-C", e.tree] + (["--strict"] if strict else []) + \
            (["--cache", cache] if cached else []) + ["**/*.c"]
        rc, out, err = e.run(args, dfault)
        lines = stderr_lines(err)
        check("EIO reading a directory%s%s: reported once, exit %d, the rest right" % (
            " (--strict)" if strict else "", ", cached run" if cached else "",
            3 if strict else 0),
            rc == (3 if strict else 0) and out == want and len(lines) == 1
            and "bulk/d07" in lines[0] and "Input/output error" in lines[0],
            "exit %d %r" % (rc, err))
    rc, out, err = e.run(["-C", e.tree, "--cache", cache, "**/*.c"])
    check("EIO, then the disk healed: the next cached run reads it again, answers in full",
          rc == 0 and out == fresh and err == "", "exit %d %r" % (rc, err))


def peak_vm(cmd, env):
    """Run CMD; its peak address space (VmPeak, polled), its peak resident
    set (VmHWM) and its output."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    peak = rss = 0
    import threading
    out = {}

    def drain():
        out["o"], out["e"] = p.communicate()

    t = threading.Thread(target=drain)
    t.start()
    while t.is_alive():
        try:
            with open("/proc/%d/status" % p.pid) as f:
                for line in f:
                    if line.startswith("VmPeak:"):
                        peak = max(peak, int(line.split()[1]))
                    elif line.startswith("VmHWM:"):
                        rss = max(rss, int(line.split()[1]))
        except (FileNotFoundError, ProcessLookupError):
            pass
        time.sleep(0.002)
    t.join()
    return peak, rss, p.returncode, out["o"], out["e"]


def million(e, big_dir):
    root = os.path.join(big_dir, "big")
    if not os.path.isdir(root):
        subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "bench", "fixtures.py"),
                        "--big", "--only", "big", big_dir], check=True)
    state = os.path.join(e.top, "million")
    os.makedirs(state)
    q = os.path.join(e.top, "qbig.jsonl")
    with open(q, "w") as f:
        f.write('{"id": 1, "root": "%s", "include": ["**"]}\n' % root)
        f.write('{"id": 2, "root": "%s", "include": ["**/*.ts"]}\n' % root)
    cache = os.path.join(state, "cache")
    steps = [("trawl '**'", ["-C", root, "**"]),
             ("trawl --unsorted '**'", ["-C", root, "--unsorted", "**"]),
             ("trawl --cache (written)", ["-C", root, "--cache", cache, "**"]),
             ("trawl --cache (trusted)", ["-C", root, "--cache", cache, "**"]),
             ("trawl check", ["check", "--cache", cache]),
             ("trawl batch", ["batch", q])]
    for name, args in steps:
        if "(written)" in name and os.path.exists(cache):
            os.unlink(cache)
        peak, rss, rc, out, err = peak_vm([e.trawl] + args, e.env)
        if "(written)" in name:
            os.unlink(cache)
        limit = 2 * peak
        lines = out.count(b"\n") if b'"paths"' not in out else out.count(b'","') + 2
        def limited():
            resource.setrlimit(resource.RLIMIT_AS, (limit * 1024, limit * 1024))
        p = subprocess.run([e.trawl] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=e.env, preexec_fn=limited)
        if "unsorted" in name:
            same = sorted(p.stdout.split(b"\n")) == sorted(out.split(b"\n"))
        else:
            same = p.stdout == out
        check("1,000,000 files: %s: peak %d MiB of address space (%d MiB resident); under "
              "ulimit -v %d MiB: exit %d, the same answer (%d paths)" % (
                  name, peak // 1024, rss // 1024, limit // 1024, p.returncode, lines),
              rc == p.returncode and rc in (0,) and same,
              "unlimited exit %d, limited exit %d %r" % (rc, p.returncode, p.stderr[-500:]))


def main():
    args = sys.argv[1:]
    if os.environ.get("TRAWL_HARDENING_NS") != "1":
        # Again inside a mount namespace of its own (as tests/coarse/run.sh).
        env = dict(os.environ, TRAWL_HARDENING_NS="1")
        pre = ["unshare", "--mount", "--propagation", "private"]
        if os.geteuid() != 0:
            pre = ["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"]
        return subprocess.call(pre + [sys.executable, os.path.abspath(__file__)] + args, env=env)
    trawl, shim = os.path.abspath(args[0]), os.path.abspath(args[1])
    top = tempfile.mkdtemp(prefix="trawl-resources-")
    try:
        e = Env(trawl, shim, top)
        no_space(e)
        read_only(e)
        eio(e)
        if "--million" in args:
            million(e, os.path.abspath(args[args.index("--million") + 1]))
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
