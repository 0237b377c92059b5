#!/usr/bin/env python3
"""Remove each comparison the result cache's answers rest on, one at a time,
and see which tests then fail (docs/cache.md, "What an answer depends on").

    cache_mutants.py SOURCE_CHECKOUT BUILD_DIR [--modes fine,coarse] [NAME...]

SOURCE_CHECKOUT must be a clean checkout whose BUILD_DIR is configured (not
the one you work in: its files are edited while this runs, and put back).
For each mutant: the edit is made (its text must be found exactly once, so a
mutant that no longer fits the code is reported, not skipped), the suites'
programs are rebuilt, the cache's suites run — cache-freshness, walk-memo,
cache-runs, cache-worktree, walk-ignore and tests/cache/cache_cli.py —
and the tests that failed are listed, in each mode:

- fine: as scripts/test runs them, on this machine's file times (every
  change to a directory trawl has looked at gets a time of its own);
- coarse: the same on the kernel's coarse clock (tests/coarse/run.sh: /tmp
  on ramfs), and Freshness.ChangedAgainInTheGrain* on vfat's 2 s and
  exFAT's 10 ms times (tests/coarse/coarse.c preloaded), as suite
  'coarse' runs them.

A mutant no test kills in any mode is a comparison no test pins: the script
exits 1 and names it (but for GUARDS, below: comparisons no change of the
tree can reach, kept as guards). It takes about two minutes a mutant and
mode on two cores; it is not part of scripts/test.
"""
import os
import re
import subprocess
import sys

# name -> (file, [(old, new), ...]): the comparison removed.
MUTANTS = {
    "directory stamp not compared": ("libcore/src/memo.c", [
        ("  if (!stamp_equal(&is, &was->st))\n    return DIR_CHANGED;", "")]),
    "stamp: inode not compared": ("libcore/src/memo.c", [
        ("return a->dev == b->dev && a->ino == b->ino &&", "return a->dev == b->dev &&")]),
    "stamp: mtime not compared": ("libcore/src/memo.c", [
        ("a->mtime_s == b->mtime_s &&\n         a->mtime_ns == b->mtime_ns &&", "")]),
    "stamp: ctime not compared": ("libcore/src/memo.c", [
        ("a->ctime_s == b->ctime_s && a->ctime_ns == b->ctime_ns &&", "")]),
    "stamp: size not compared": ("libcore/src/memo.c", [
        ("&&\n         a->size == b->size;", ";")]),
    "directory gone not seen": ("libcore/src/memo.c", [
        ("  if (was->racy || now == NULL)\n    return DIR_CHANGED;",
         "  if (was->racy)\n    return DIR_CHANGED;\n  if (now == NULL)\n    return DIR_SAME;")]),
    "start directory appearing not seen": ("libcore/src/memo.c", [
        ("    return now ? DIR_CHANGED : DIR_SAME;", "    return DIR_SAME;")]),
    "racy directory trusted": ("libcore/src/memo.c", [
        ("  if (was->racy || now == NULL)", "  if (now == NULL)")]),
    "racy ignore file trusted": ("libcore/src/memo.c", [
        ("  if (was->rules_racy)\n    return DIR_RULES_CHANGED;\n", ""),
        ("if (was->rules_racy || was->has != has_now)", "if (was->has != has_now)")]),
    "racy rule: nothing is racy": ("libcore/src/memo.c", [
        ("  return s->present &&\n", "  return false && s->present &&\n")]),
    # The racy window (issue 30): on fine times a change after a reading has
    # a stamp of its own, and none of these can fail there.
    "racy window: no granule": ("libcore/src/memo.c", [
        ("  const long granule = MAX(2 * res.tv_nsec, 1000000L);", "  const long granule = 0;")]),
    "racy window: half the granule (one tick)": ("libcore/src/memo.c", [
        ("  const long granule = MAX(2 * res.tv_nsec, 1000000L);",
         "  const long granule = MAX(2 * res.tv_nsec, 1000000L) / 2;")]),
    "racy window: whole seconds have no grain": ("libcore/src/memo.c", [
        ("  {1000000000u, 2000000000LL},", "  {1000000000u, 0},")]),
    "racy window: hundredths have no grain": ("libcore/src/memo.c", [
        ("  {10000000u, 10000000LL},", "  {10000000u, 0},")]),
    "ignore files and .git (has) not compared": ("libcore/src/memo.c", [
        ("if (was->rules_racy || was->has != has_now)", "if (was->rules_racy)")]),
    "ignore file stamps not compared": ("libcore/src/memo.c", [
        ("    if (!stamp_equal(&now[k], &was->ignore[k]))\n      return DIR_RULES_CHANGED;", "")]),
    "a directory read again keeps what was replayed below it": ("libcore/src/walk/step.c", [
        ("    if (m ? dir_check_rules(&m->was, has, d->fd, \"\") != DIR_SAME\n"
         "          : (has & (HAS_GITIGNORE | HAS_DOTIGNORE | HAS_DOTGIT)) != 0)",
         "    if (m == NULL && (has & (HAS_GITIGNORE | HAS_DOTIGNORE | HAS_DOTGIT)) != 0)")]),
    "the way to a start directory not compared": ("libcore/src/walk/replay.c", [
        ("  return m && dir_check_rules(&m->was, *has, fd, \"\") == DIR_SAME;", "  return m != NULL;")]),
    "a replayed directory enters no rules (issue 13)": ("libcore/src/walk/replay.c", [
        ("igc ? m->was.has & (HAS_GITIGNORE | HAS_DOTIGNORE | HAS_DOTGIT) : 0;",
         "igc ? m->was.has & (HAS_GITIGNORE | HAS_DOTIGNORE) : 0;")]),
    "the queries that read a directory not compared": ("libcore/src/walk/replay.c", [
        ("if (m == NULL || m->way || m->live != it->live)", "if (m == NULL || m->way)")]),
    "a nested repository's sources not compared (issue 24)": ("libcore/src/memo.c", [
        ("  if (was->repo && !repo_sources_hold(was->repo, was->repo_len, at, dir))\n"
         "    return DIR_RULES_CHANGED;\n", "")]),
    "links followed trusted": ("libcore/src/walk/step.c", [
        ("  if (is_link && d->memo)\n    d->head.racy = true;\n", "")]),
    "start directory reached through a link": ("libcore/src/cache/recheck.c", [
        ("there = (!(e->flags & DIR_START) || reachable(root_fd, e->path, e->len)) &&",
         "there = (true || reachable(root_fd, e->path, e->len)) &&")]),
    "trawl version not compared": ("libcore/src/cache/cache.c", [
        ("  if (r->cache && strcmp(r->cache->version, TRAWL_VERSION_STRING) != 0)",
         "  if (r->cache && false)")]),
    "queries not compared": ("libcore/src/cache/cache.c", [
        ("  else if (r->cache && (r->cache->queries_len != r->queries->len ||\n"
         "                        memcmp(r->cache->queries, r->queries->data, r->queries->len) != 0))",
         "  else if (r->cache && false)")]),
    "roots and grouping not compared": ("libcore/src/cache/cache.c", [
        ("      same = walk_matches(&r->gv[g], r->cache->walks->pdata[g]);", "")]),
    "outside sources' stamps not compared": ("libcore/src/cache/sources.c", [
        ("                           : kind != SOURCE_RACY && stamped);",
         "                           : kind != SOURCE_RACY);"),
        ("    } else if (!stamped) {\n      return false;\n    }", "    }")]),
    "the index's stamp not compared": ("libcore/src/cache/sources.c", [
        ("    if (same && is_index(kind) && (kind == SOURCE_INDEX_RACY || !stamped))",
         "    if (same && is_index(kind) && kind == SOURCE_INDEX_RACY)"),
        ("      s->index_moved = s->index_moved || kind == SOURCE_INDEX_RACY || !stamped;",
         "      s->index_moved = s->index_moved || kind == SOURCE_INDEX_RACY;")]),
    "the index's answers not compared": ("libcore/src/cache/sources.c", [
        ("  if (now != ((type & ASKED_TRACKED) != 0))\n    g_hash_table_add",
         "  if (now && !now)\n    g_hash_table_add")]),
    "a directory whose answer changed replayed": ("libcore/src/cache/cache.c", [
        ("      ((struct memo_dir *)d)->was.racy = true;", "      (void)d;")]),
    "racy index trusted": ("libcore/src/cache/cachefile.c", [
        ("  return kind == IGNORE_SOURCE_INDEX ? SOURCE_INDEX_RACY : SOURCE_RACY;",
         "  return kind == IGNORE_SOURCE_INDEX ? IGNORE_SOURCE_INDEX : SOURCE_RACY;")]),
    "outside sources' list not compared": ("libcore/src/cache/sources.c", [
        ("    same = strcmp(w->paths->pdata[i], src->paths->pdata[i]) == 0 &&", "    same ="),
        ("              w->paths->len == src->paths->len;", "              true;")]),
    "outside sources' environment not compared": ("libcore/src/cache/sources.c", [
        ("  bool same = w->env->len == src->env->len && memcmp(w->env->str, src->env->str, w->env->len) == 0 &&",
         "  bool same ="),
        ("  if (s->env->len != was->env->len || memcmp(s->env->str, was->env->str, s->env->len) != 0)\n"
         "    return false;", "")]),
    "racy outside source trusted": ("libcore/src/cache/cachefile.c", [
        ("    w_u8(b, stamp_racy(st, racy_from) ? racy_kind(src->kinds->data[i]) : src->kinds->data[i]);",
         "    (void)racy_from;\n    w_u8(b, false ? racy_kind(src->kinds->data[i]) : src->kinds->data[i]);")]),
    "a walk with problems re-checked by stamps": ("libcore/src/cache/cache.c", [
        ("    quick = !st->groups[g].cached->problems &&\n", "    quick =\n")]),
    "index checksum not compared": ("libcore/src/cache/cachefile.c", [
        ("  else if (*why == NULL && checksum((const guint8 *)index, index_len) != index_sum)",
         "  else if (false)")]),
    "records checksum not compared": ("libcore/src/cache/cachefile.c", [
        ("  return checksum(mark_recs(w, m), (gsize)mark_rlen(w, m)) == mark_rsum(w, m);",
         "  return checksum(mark_recs(w, m), (gsize)mark_rlen(w, m)) == mark_rsum(w, m) || true;")]),
    "a block's records' checksum not compared when read alone": ("libcore/src/cache/cachefile.c", [
        ("          checksum((const guint8 *)b, len) != mark_rsum(w, m)) {",
         "          (checksum((const guint8 *)b, len) != mark_rsum(w, m) && false)) {")]),
    "a block's checksum not compared when read alone": ("libcore/src/cache/cachefile.c", [
        ("          checksum(b, (gsize)len) != mark_sum(w, m)) {",
         "          (checksum(b, (gsize)len) != mark_sum(w, m) && false)) {")]),
    # Format 15: each block's first path (its key) in the index.
    "a block's key not compared with its first entry": ("libcore/src/cache/cachefile.c", [
        ("  return !r.bad && shared == 0 && len == klen && memcmp(s, key, klen) == 0;",
         "  return true || (!r.bad && shared == 0 && len == klen && memcmp(s, key, klen) == 0);")]),
    "the keys' order not compared": ("libcore/src/cache/cachefile.c", [
        ("    if (before && compare_paths(before, before_len, key, len) >= 0)",
         "    if (before && compare_paths(before, before_len, key, len) >= 0 && false)")]),
    "the blocks' checksums not compared when read whole": ("libcore/src/cache/cachefile.c", [
        ("  return checksum(data + from, (gsize)(block_end(w, m) - from)) == mark_sum(w, m);",
         "  return checksum(data + from, (gsize)(block_end(w, m) - from)) == mark_sum(w, m) || true;")]),
    "a base of another size taken": ("libcore/src/cache/cachefile.c", [
        ("  } else if ((guint64)st.st_size != size || !pread_all(fd, h, HEADER_SIZE, 0) ||",
         "  } else if (!pread_all(fd, h, HEADER_SIZE, 0) ||"),
        ("             get_le(h + 24, 8) != sum || get_le(h + 16, 8) != size - HEADER_SIZE ||",
         "             get_le(h + 24, 8) != sum ||")]),
    "a base's index sum not compared": ("libcore/src/cache/cachefile.c", [
        ("             get_le(h + 24, 8) != sum || get_le(h + 16, 8) != size - HEADER_SIZE ||",
         "             get_le(h + 16, 8) != size - HEADER_SIZE ||")]),
}

# The suites' programs, by their place in the build.
SUITES = ["tests/cache/cache-freshness", "tests/walk/walk-memo", "tests/cache/cache-runs",
          "tests/cache/cache-worktree", "tests/walk/walk-ignore"]
# The coarse mode's runs of the freshness test on a file system's grain.
GRAINS = {"vfat": "2000000000", "exfat": "10000000"}
GRAIN_TEST = "--gtest_filter=Freshness.ChangedAgainInTheGrain*"
MODES = ["fine", "coarse"]
# Guards no input can reach, and so no test can pin: listed, run, and not
# counted as survivors (docs/cache.md says why of each).
GUARDS = {"stamp: inode not compared", "stamp: mtime not compared", "stamp: size not compared",
          "the queries that read a directory not compared", "outside sources' list not compared",
          "racy index trusted"}


def failed_gtests(label, cmd, env=None):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=900,
                           env=env)
        out = p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return [label + " (timeout)"]
    names = sorted(set(re.findall(r"^\[  FAILED  \] (\S+?)(?:,| \(|$)", out, re.M)))
    failed = ["%s %s" % (label, n) for n in names]
    if p.returncode != 0 and not names:
        failed.append("%s (exit %d)" % (label, p.returncode))
    return failed


def run_tests(src, build, mode):
    """The tests that fail in MODE, each as "SUITE NAME"."""
    wrap = [os.path.join(src, "tests/coarse/run.sh")] if mode == "coarse" else []
    failed = []
    for t in SUITES:
        failed += failed_gtests(os.path.basename(t), wrap + [os.path.join(build, t)])
    if mode == "coarse":
        shim = os.path.join(build, "tests/coarse/libtrawl-coarse.so")
        for fs, gran in GRAINS.items():
            env = dict(os.environ, LD_PRELOAD=shim, TRAWL_COARSE_GRAN_NS=gran)
            failed += failed_gtests("cache-freshness-" + fs, wrap + [
                os.path.join(build, "tests/cache/cache-freshness"), GRAIN_TEST], env)
    p = subprocess.run(wrap + [sys.executable, os.path.join(src, "tests/cache/cache_cli.py"),
                               os.path.join(build, "plugins/cli/trawl")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.decode("utf-8", "replace")
    failed += ["cache_cli.py: " + l[5:] for l in out.splitlines() if l.startswith("FAIL ")]
    return failed


def rebuild(build):
    """Only what the runs need: the suites' programs, trawl and the shim."""
    targets = SUITES + [
        "plugins/cli/trawl", "tests/coarse/libtrawl-coarse.so"]
    return subprocess.run(["ninja", "-C", build] + targets, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)


def report(mode, failed):
    print("   %s: %d failed" % (mode, len(failed)))
    by_suite = {}
    for f in failed:
        by_suite.setdefault(f.split(" ", 1)[0], []).append(f.split(" ", 1)[-1])
    for suite, names in by_suite.items():
        more = " and %d more" % (len(names) - 4) if len(names) > 4 else ""
        print("      %s %d: %s%s" % (suite, len(names), ", ".join(names[:4]), more))


def main(argv):
    src, build = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    rest = argv[3:]
    modes = MODES
    if rest[:1] == ["--modes"]:
        modes = rest[1].split(",")
        rest = rest[2:]
    only = set(rest)
    survivors = []
    for name, (path, edits) in MUTANTS.items():
        if only and name not in only:
            continue
        full = os.path.join(src, path)
        with open(full) as f:
            original = f.read()
        text = original
        bad = [old for old, _ in edits if text.count(old) != 1]
        if bad:
            print("MUTANT DOES NOT FIT: %s: %r" % (name, bad[0][:60]))
            survivors.append(name + " (does not fit the code)")
            continue
        for old, new in edits:
            text = text.replace(old, new)
        try:
            with open(full, "w") as f:
                f.write(text)
            b = rebuild(build)
            if b.returncode != 0:
                print("MUTANT DOES NOT BUILD: %s\n%s" % (name, b.stdout.decode()[-2000:]))
                survivors.append(name + " (does not build)")
                continue
            failed = {mode: run_tests(src, build, mode) for mode in modes}
        finally:
            with open(full, "w") as f:
                f.write(original)
        print("== %s: %s" % (name, ", ".join("%s %d failed" % (m, len(failed[m])) for m in modes)))
        for mode in modes:
            report(mode, failed[mode])
        sys.stdout.flush()
        if not any(failed.values()) and name not in GUARDS:
            survivors.append(name)
    rebuild(build)
    print("\nsurvivors (no test failed): %s" % (", ".join(survivors) if survivors else "none"))
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
