#!/usr/bin/env python3
"""A no-op ninja with trawl's Meson plugin, against a hand-written list.

usage: bench/meson_noop.py [--fixtures DIR] [--rounds N] [--configure-rounds N]
                          [--watch-limit N] [--watchman] [SHAPE...]

SHAPE: flat20k (default), big (bench/fixtures.py). Two Meson projects beside
the fixture, each with one custom_target whose inputs are the fixture's
files (flat20k: all 20,000, `**`; big: the 100,000 `.c` files, `**/*.c`), so
that Ninja tracks every one as a build input, as it does sources — nothing
is compiled, a no-op run is all there is:

  hand    meson.build lists every file in files(), written out by this
          script from os.walk (Meson's recommendation)
  trawl   files(run_command(trawl, 'meson', '-C', FIXTURE, PATTERN).stdout()
          .split('\\n')), with meson.add_postconf_script(trawl, 'meson',
          '--postconf'): Ninja runs `trawl check` only when a path in the
          check's depfile is newer than its mark (docs/meson.md)

Both are configured and built once; both must list exactly os.walk's files
(`meson introspect --targets`), or the script stops. Then, interleaved, the
order rotated each round, each run 30 ms after the last change:

  ninja, hand            `ninja -C BUILD`, nothing to do
  ninja, trawl           the same. Through a depfile (watch lists up to
                         --watch-limit paths): nothing changed, so no command
                         runs (the script stops if the check ran: Ninja
                         prints each edge it runs); beyond it, the check runs and changes nothing
  ninja, trawl without its edges
                         a copy of the trawl build with what trawl's postconf
                         step added cut out: the re-check's own cost is
                         trawl minus this, free of the two projects' other
                         differences
  trawl check alone      `trawl check` with the check edge's arguments, on
                         the same cache (what the goal compares with)
  ninja, trawl's edge running true   (the check on every build only)
                         a copy of the trawl build whose check rule runs
                         `true` instead: what Ninja itself costs for running
                         any command before its manifest check (it resets
                         its graph, State::Reset()), the floor of that wiring
  ninja, trawl, a directory's time moved   (through a depfile only)
                         the first directory of the fixture touched first
                         (untimed): the check runs once, reads it, finds the
                         same answers, writes the cache and the depfile back
                         (what an editor's temporary file costs a build)

Every ninja run must say "no work to do" and must not regenerate, or the
script stops. The overhead is median(ninja, trawl) - median(ninja, hand)
(and - median(ninja, trawl without its edges)), and also the median over
rounds of that round's difference; the goal is at most 1.2x the median of
`trawl check` alone. Then configure time: `meson
setup` of an empty build directory, and `meson setup --reconfigure` (trawl:
its cache warm), alternating (none with --configure-rounds 0). Only ratios
between arms run side by side mean anything on a shared machine.

--watchman: each fixture is first copied into a git work tree watched by a
private watchman daemon (bench/watched_tree.py: its own socket, state file
and log, stopped at the end; never the user's), and the projects are made
beside the copy. The trawl project is configured with watchman (its cache
records a clock), and two arms are added, the same build and cache in
another environment:

  ninja, trawl, watchman         TRAWL_WATCHMAN=auto with the private socket
  trawl check alone, watchman

Every other arm runs with TRAWL_WATCHMAN=off ("ninja, trawl" is the stat
path), but the one that moves a directory's time, which runs with watchman
(a check with it off would write the cache back without a clock). Before
timing, `trawl check --stats` with watchman must say "watchman used"; then a
table of each ninja arm's ratio to `ninja, hand` (issue 25's goal on big: at
most 1.06x), by medians and per round, and the check alone's stat path over
watchman. The CPU column counts ninja and its commands, not the daemon.
"""
import argparse
import itertools
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import watched_tree  # noqa: E402
TRAWL = os.path.join(ROOT, "build", "plugins", "cli", "trawl")

PATTERNS = {"flat20k": ("**", lambda name: True),
            "big": ("**/*.c", lambda name: name.endswith(".c"))}

TARGET = """custom_target('sources', input : srcs, output : 'sources.stamp',
  command : ['touch', '@OUTPUT@'], build_by_default : true)
"""


def hand_project(files):
    lines = ["project('hand')", "srcs = files("]
    lines += ["  '%s'," % f for f in files]
    lines += [")", TARGET]
    return "\n".join(lines)


def trawl_project(trawl, rel, pattern, watch_limit=None):
    limit = "" if watch_limit is None else ", '--watch-limit', '%d'" % watch_limit
    return ("""project('trawl')
trawl = find_program('%s')
meson.add_postconf_script(trawl, 'meson', '--postconf'""" + limit + """)
r = run_command(trawl, 'meson', '-C', '%s', '%s', check : false)
assert(r.returncode() == 0, r.stderr())
srcs = files(r.stdout().split('\\n'))
%s""") % (trawl, rel, pattern, TARGET)


def timed(argv, cwd=None, env=None):
    """(wall seconds, CPU seconds, exit status, output) of one run; the CPU
    time (user + system, from wait4) includes the processes it waited for,
    so ninja's counts its commands'. ENV: the run's environment (None: this
    process's)."""
    start = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    p.stdout.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, p.returncode, out.decode(errors="replace")


def must(argv, cwd=None, env=None):
    seconds, _, code, out = timed(argv, cwd, env)
    if code != 0:
        sys.exit("meson_noop: %s failed:\n%s" % (" ".join(argv), out[-3000:]))
    return seconds, out


def listed(build):
    """The inputs of the custom target, as meson introspect names them."""
    _, out = must(["meson", "introspect", "--targets", build])
    for t in json.loads(out):
        if t["name"] == "sources":
            return sorted(os.path.normpath(s) for ts in t["target_sources"] for s in ts["sources"])
    sys.exit("meson_noop: no target 'sources' in %s" % build)


def check_command(build):
    """The check edge's command from build.ninja (`exec TRAWL meson --check
    ARGS`), and `TRAWL check ARGS` as argv: the same check, alone."""
    text = open(os.path.join(build, "build.ninja")).read()
    rule = text.split("\nrule TRAWL_MESON_CHECK\n", 1)[1]
    command = rule.split("\n", 1)[0].split("command = ", 1)[1].replace("$$", "$")
    words = shlex.split(command)
    if words[0] != "exec" or words[2:4] != ["meson", "--check"]:
        sys.exit("meson_noop: an unexpected check command: %s" % command)
    # Without the mark and the depfile: the check itself (and a mark moved
    # outside Ninja would make Ninja take its recorded depfile as stale).
    args, i = [], 4
    while i < len(words):
        if words[i] in ("--checked", "--depfile"):
            i += 2
            continue
        args.append(words[i])
        i += 1
    return [words[1], "check"] + args


def ms(seconds):
    return "%.2f" % (seconds * 1e3)


def quartiles(xs):
    q = statistics.quantiles(xs, n=4)
    return q[0], statistics.median(xs), q[2]


def is_git(tree, d):
    """Whether D is TREE's .git or below it."""
    g = os.path.join(tree, ".git")
    return d == g or d.startswith(g + os.sep)


def walk_files(tree, wanted):
    """os.walk's files under TREE that WANTED takes (a .git left out: the
    watched copy is a git work tree), relative to TREE."""
    for d, dirs, fs in os.walk(tree):
        dirs[:] = [x for x in dirs if not (d == tree and x == ".git")]
        for f in fs:
            if wanted(f):
                yield os.path.relpath(os.path.join(d, f), tree)


def bench_shape(shape, tree, work, rounds, configure_rounds, watch_limit, watched=None):
    """SHAPE's tables. TREE: the fixture (or, with WATCHED, a WatchedTree,
    its watched copy); WORK: where the projects go."""
    pattern, wanted = PATTERNS[shape]
    base = os.path.join(work, shape)
    rel = os.path.relpath(tree, os.path.join(base, "hand"))
    files = sorted(os.path.join(rel, f) for f in walk_files(tree, wanted))
    # The environments: without --watchman this process's, as before;
    # with it, TRAWL_WATCHMAN=off for every arm but the watchman ones.
    stat_env = watched.env_stat if watched else None
    wm_env = watched.env_watchman if watched else None
    projects = {"hand": hand_project(files),
                "trawl": trawl_project(TRAWL, rel, pattern, watch_limit)}
    builds = {}
    print("\n### %s: %d files (%s), %d directories" % (
        shape, len(files), pattern,
        sum(1 for d, _, _ in os.walk(tree) if not is_git(tree, d))))
    for arm, text in projects.items():
        src = os.path.join(base, arm)
        os.makedirs(src, exist_ok=True)
        with open(os.path.join(src, "meson.build"), "w") as f:
            f.write(text)
        builds[arm] = os.path.join(src, "build")
        shutil.rmtree(builds[arm], ignore_errors=True)
        # (With --watchman the cache is written with watchman's clock.)
        env = wm_env if arm == "trawl" and watched else stat_env
        must(["meson", "setup", builds[arm]], cwd=src, env=env)
        must(["ninja", "-C", builds[arm]], env=env)
    want = sorted(os.path.normpath(os.path.join(base, "hand", f)) for f in files)
    for arm, build in builds.items():
        if listed(build) != want:
            sys.exit("meson_noop: the %s project does not list os.walk's files" % arm)
    print("both projects list the same %d files as os.walk" % len(want))

    argv = check_command(builds["trawl"])
    code = subprocess.run(argv, cwd=builds["trawl"], env=stat_env).returncode
    if code != 0:
        sys.exit("meson_noop: the check says the tree changed (%d)" % code)
    stats = subprocess.run(argv + ["--stats"], cwd=builds["trawl"], env=stat_env,
                           stderr=subprocess.PIPE)
    print("check: %s" % stats.stderr.decode().strip())
    if watched:
        print("check, watchman: %s" % watched_tree.assert_watchman_used(
            argv, builds["trawl"], wm_env, "meson_noop"))
    text = open(os.path.join(builds["trawl"], "build.ninja")).read()
    watch = "depfile = meson-private/trawl/checked.d" in text
    # The trawl build with trawl's edges cut out (what postconf appended, and
    # the stamp on Meson's regeneration edge): the same build.ninja
    # otherwise, so that trawl minus this is the re-check's own cost, free
    # of the two projects' other differences.
    bare = builds["trawl"] + "-bare"
    shutil.rmtree(bare, ignore_errors=True)
    shutil.copytree(builds["trawl"], bare, symlinks=True)
    cut = text[:text.index("\n# trawl meson --postconf")].replace(
        " | meson-private/trawl/stamp\n", "\n") + "\n"
    with open(os.path.join(bare, "build.ninja"), "w") as f:
        f.write(cut)
    os.utime(os.path.join(bare, "build.ninja"),
             ns=(time.time_ns(), os.stat(os.path.join(builds["trawl"], "build.ninja")).st_mtime_ns))
    must(["ninja", "-C", bare], env=stat_env)
    # The first ninja after a configure runs the check once (Ninja learns
    # its depfile from a run); then a no-op runs nothing.
    must(["ninja", "-C", builds["trawl"]], env=wm_env if watched else None)
    if watch:
        # (Ninja keeps a deps = gcc depfile in .ninja_deps and deletes it.)
        _, deps = must(["ninja", "-C", builds["trawl"], "-t", "deps",
                        "meson-private/trawl/checked"], env=stat_env)
        print("wiring: the check through a depfile; %s" % deps.splitlines()[0].split(": ", 1)[1])
        if ".always" in deps:
            sys.exit("meson_noop: the check runs every time:\n%s" % deps[:2000])
    else:
        print("wiring: the check on every build (beyond --watch-limit)")
        # The same build with the check's command `true`: Ninja runs an edge
        # before its manifest check and does what it does after any (the
        # stamp is restat, untouched: build.ninja stays clean).
        floor = builds["trawl"] + "-true"
        shutil.rmtree(floor, ignore_errors=True)
        shutil.copytree(builds["trawl"], floor, symlinks=True)
        head, rest = text.split("\nrule TRAWL_MESON_CHECK\n", 1)
        line, tail = rest.split("\n", 1)
        if "command = " not in line:
            sys.exit("meson_noop: an unexpected check rule: %s" % line)
        with open(os.path.join(floor, "build.ninja"), "w") as f:
            f.write(head + "\nrule TRAWL_MESON_CHECK\n" + line.split("command = ")[0] +
                    "command = true\n" + tail)
        os.utime(os.path.join(floor, "build.ninja"),
                 ns=(time.time_ns(),
                     os.stat(os.path.join(builds["trawl"], "build.ninja")).st_mtime_ns))
        must(["ninja", "-C", floor], env=stat_env)
    # A directory of the fixture whose time is moved: the check runs, reads
    # it, finds the same answers (what an editor's temporary file costs).
    touched = os.path.join(tree, sorted(d for d in os.listdir(tree) if d != ".git" and
                                        os.path.isdir(os.path.join(tree, d)))[0])
    ninja_trawl = ["ninja", "-C", builds["trawl"]]
    arms = {
        "ninja, hand": (["ninja", "-C", builds["hand"]], None, stat_env),
        "ninja, trawl": (ninja_trawl, None, stat_env),
        "ninja, trawl without its edges": (["ninja", "-C", bare], None, stat_env),
        "trawl check alone": (argv, builds["trawl"], stat_env),
    }
    if not watch:
        arms["ninja, trawl's edge running true"] = (["ninja", "-C", floor], None, stat_env)
    if watched:
        # The same build and cache; only the environment differs.
        arms["ninja, trawl, watchman"] = (ninja_trawl, None, wm_env)
        arms["trawl check alone, watchman"] = (argv, builds["trawl"], wm_env)
    if watch:
        # With --watchman through watchman: a check with it off would write
        # the cache back without a clock, and the watchman arms would then
        # take the stat path.
        arms["ninja, trawl, a directory's time moved"] = (
            ninja_trawl, None, wm_env if watched else None)
    times = {a: [] for a in arms}
    cpu = {a: [] for a in arms}
    names = list(arms)
    for r in range(rounds + 2):
        order = names[r % len(names):] + names[:r % len(names)]
        for a in order:
            argv_a, cwd, env = arms[a]
            if a.endswith("moved"):
                os.utime(touched)
            # Past the racy window, so that the check trusts what it read.
            time.sleep(0.03)
            seconds, cpu_seconds, code, out = timed(argv_a, cwd, env)
            if code != 0 or (a.startswith("ninja") and
                             ("no work to do" not in out or "Regenerating" in out)):
                sys.exit("meson_noop: %s was not a no-op (exit %d):\n%s" % (a, code, out))
            # (Ninja prints each edge it runs: the check's description.)
            ran = out.count("Re-checking the file lists")
            if a in ("ninja, trawl", "ninja, trawl, watchman", "ninja, trawl's edge running true") \
                    and ran != (0 if watch else 1):
                sys.exit("meson_noop: the check ran %d times (want %d):\n%s" % (
                    ran, 0 if watch else 1, out))
            if a.endswith("moved") and ran != 1:
                sys.exit("meson_noop: the check did not run once after a directory moved:\n%s" % out)
            if r >= 2:  # two warm-up rounds
                times[a].append(seconds)
                cpu[a].append(cpu_seconds)
    print("\n%d rounds; milliseconds, each a process started from Python; wall (CPU: user +"
          " system, with the processes it waited for):\n" % rounds)
    print("| arm | wall q1 | wall median | wall q3 | CPU median |")
    print("|---|---:|---:|---:|---:|")
    for a in names:
        q1, med, q3 = quartiles(times[a])
        print("| %s | %s | %s | %s | %s |" % (a, ms(q1), ms(med), ms(q3),
                                             ms(statistics.median(cpu[a]))))
    trawl_arms = [("ninja, trawl", "trawl check alone")]
    if watched:
        trawl_arms.append(("ninja, trawl, watchman", "trawl check alone, watchman"))
    for label, data in (("wall", times), ("CPU", cpu)):
        for arm, alone in trawl_arms:
            check_med = statistics.median(data[alone])
            for base in ("ninja, hand", "ninja, trawl without its edges"):
                overhead = statistics.median(data[arm]) - statistics.median(data[base])
                paired = statistics.median(t - h for t, h in zip(data[arm], data[base]))
                print("\n%s: %s over `%s` %s ms (medians), %s ms (median of the rounds'"
                      " differences) = %.2fx and %.2fx %s (goal: at most 1.2x)" % (
                          label, arm[len("ninja, "):], base, ms(overhead), ms(paired),
                          overhead / check_med, paired / check_med, alone))
    if watched:
        # Issue 25's goal: the no-op with trawl at most 1.06x the one with
        # the hand-written list.
        print("\nratios to `ninja, hand` (median / median; median of the rounds' ratios):\n")
        print("| arm | wall | wall, per round | CPU | CPU, per round |")
        print("|---|---:|---:|---:|---:|")
        for arm in [a for a in names if a.startswith("ninja, trawl")]:  # (and its floor)
            cells = []
            for data in (times, cpu):
                h = data["ninja, hand"]
                cells += ["%.3f" % (statistics.median(data[arm]) / statistics.median(h)),
                          "%.3f" % statistics.median(t / x for t, x in zip(data[arm], h))]
            print("| %s | %s |" % (arm, " | ".join(cells)))
        if "ninja, trawl's edge running true" in times:
            # What trawl adds to Ninja's own cost of running a command there.
            for data, label in ((times, "wall"), (cpu, "CPU")):
                t, f = data["ninja, trawl, watchman"], data["ninja, trawl's edge running true"]
                print("\n%s: trawl, watchman over `ninja, trawl's edge running true` %s ms"
                      " (medians), %s ms (median of the rounds' differences)" % (
                          label, ms(statistics.median(t) - statistics.median(f)),
                          ms(statistics.median(a - b for a, b in zip(t, f)))))
        for data, label in ((times, "wall"), (cpu, "CPU")):
            s, w = data["trawl check alone"], data["trawl check alone, watchman"]
            print("\n%s: trawl check alone, stat path / watchman: %.2fx (medians), %.2fx (per"
                  " round)" % (label, statistics.median(s) / statistics.median(w),
                               statistics.median(a / b for a, b in zip(s, w))))
    if configure_rounds == 0:
        return

    setup = {"hand": [], "trawl": []}
    again = {"hand": [], "trawl": []}
    for r in range(configure_rounds):
        for arm in (["hand", "trawl"] if r % 2 == 0 else ["trawl", "hand"]):
            src = os.path.dirname(builds[arm])
            shutil.rmtree(builds[arm])
            seconds, _ = must(["meson", "setup", builds[arm]], cwd=src, env=stat_env)
            setup[arm].append(seconds)
            seconds, _ = must(["meson", "setup", "--reconfigure", builds[arm]], cwd=src,
                              env=stat_env)
            again[arm].append(seconds)
    print("\nconfigure, %d rounds, seconds (median, min-max):\n" % configure_rounds)
    print("| | hand | trawl | trawl / hand |")
    print("|---|---:|---:|---:|")
    for label, data in (("meson setup, empty build directory", setup),
                        ("meson setup --reconfigure", again)):
        h, t = statistics.median(data["hand"]), statistics.median(data["trawl"])
        print("| %s | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | %.2f |" % (
            label, h, min(data["hand"]), max(data["hand"]), t, min(data["trawl"]),
            max(data["trawl"]), t / h))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fixtures", default=os.path.join(HERE, "fixtures"))
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--configure-rounds", type=int, default=4)
    ap.add_argument("--watch-limit", type=int, default=None,
                    help="passed to the postconf step (default: its own, 2,000 paths)")
    ap.add_argument("--watchman", action="store_true",
                    help="each fixture copied into a git work tree watched by a private "
                         "watchman daemon, and the watchman arms beside the stat path")
    ap.add_argument("shapes", nargs="*", default=["flat20k"])
    args = ap.parse_args(argv[1:])
    for shape in args.shapes:
        if shape not in PATTERNS:
            sys.exit("meson_noop: unknown shape %s (flat20k or big)" % shape)
    if not os.access(TRAWL, os.X_OK):
        sys.exit("meson_noop: build trawl first (%s)" % TRAWL)
    fixtures = os.path.abspath(args.fixtures)
    print("meson_noop: %s, trawl %s, %s" % (
        time.strftime("%Y-%m-%d %H:%M"), subprocess.run([TRAWL, "--version"], stdout=subprocess.PIPE)
        .stdout.decode().split()[-1], subprocess.run(["git", "-C", ROOT, "rev-parse", "--short",
                                                      "HEAD"], stdout=subprocess.PIPE)
        .stdout.decode().strip()))
    for shape in args.shapes:
        tree = os.path.join(fixtures, shape)
        if not os.path.isdir(tree):
            sys.exit("meson_noop: no %s; run bench/fixtures.py%s first" % (
                tree, " --big" if shape == "big" else ""))
    if args.watchman:
        print("watchman %s, a private daemon per shape" % subprocess.run(
            ["watchman", "--version"], stdout=subprocess.PIPE).stdout.decode().strip())
        for shape in args.shapes:
            with watched_tree.WatchedTree(os.path.join(fixtures, shape), shape) as watched:
                bench_shape(shape, watched.tree, os.path.join(watched.tmp, "projects"), args.rounds,
                            args.configure_rounds, args.watch_limit, watched)
        return
    with tempfile.TemporaryDirectory(prefix="meson-noop-", dir=fixtures) as work:
        for shape in args.shapes:
            bench_shape(shape, os.path.join(fixtures, shape), work, args.rounds,
                        args.configure_rounds, args.watch_limit)


if __name__ == "__main__":
    main(sys.argv)
