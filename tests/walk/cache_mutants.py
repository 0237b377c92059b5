#!/usr/bin/env python3
"""Remove each comparison the result cache's answers rest on, one at a time,
and see which tests then fail (docs/cache.md, "What an answer depends on").

    cache_mutants.py SOURCE_CHECKOUT BUILD_DIR [NAME...]

SOURCE_CHECKOUT must be a clean checkout whose BUILD_DIR is configured (not
the one you work in: its files are edited while this runs, and put back).
For each mutant: the edit is made (its text must be found exactly once, so a
mutant that no longer fits the code is reported, not skipped), BUILD_DIR is
rebuilt, the cache's suites run — walk-freshness, walk-memo, walk-cache,
walk-cache-worktree, walk-ignore and tests/walk/cache_cli.py — and the tests that failed are
listed. A mutant no test kills is a comparison no test pins: the script
exits 1 and names it (but for GUARDS, below: comparisons no change of the
tree can reach, kept as guards). It takes about two minutes a mutant on two cores; it
is not part of scripts/test.
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
        ("  if (!s->present)\n    return false;\n  if (s->mtime_s", "  return false;\n  if (s->mtime_s")]),
    "ignore files and .git (has) not compared": ("libcore/src/memo.c", [
        ("if (was->rules_racy || was->has != has_now)", "if (was->rules_racy)")]),
    "ignore file stamps not compared": ("libcore/src/memo.c", [
        ("    if (!stamp_equal(&now[k], &was->ignore[k]))\n      return DIR_RULES_CHANGED;", "")]),
    "a directory read again keeps what was replayed below it": ("libcore/src/step.c", [
        ("    if (nested_repo || (m ? dir_check_rules(&m->was, has, d->fd, \"\") != DIR_SAME\n"
         "                          : (has & (HAS_GITIGNORE | HAS_DOTIGNORE | HAS_DOTGIT)) != 0))",
         "    if (nested_repo || (m == NULL && (has & (HAS_GITIGNORE | HAS_DOTIGNORE | HAS_DOTGIT)) != 0))")]),
    "the way to a start directory not compared": ("libcore/src/replay.c", [
        ("  return m && dir_check_rules(&m->was, *has, fd, \"\") == DIR_SAME;", "  return m != NULL;")]),
    "a replayed directory enters no rules (issue 13)": ("libcore/src/replay.c", [
        ("igc ? m->was.has & (HAS_GITIGNORE | HAS_DOTIGNORE | HAS_DOTGIT) : 0;",
         "igc ? m->was.has & (HAS_GITIGNORE | HAS_DOTIGNORE) : 0;")]),
    "the queries that read a directory not compared": ("libcore/src/replay.c", [
        ("if (m == NULL || m->way || m->live != it->live)", "if (m == NULL || m->way)")]),
    "a nested repository trusted": ("libcore/src/step.c", [
        ("    d->head.racy = d->head.racy || nested_repo;", "")]),
    "links followed trusted": ("libcore/src/step.c", [
        ("  if (is_link && d->memo)\n    d->head.racy = true;\n", "")]),
    "start directory reached through a link": ("libcore/src/cachefile.c", [
        ("there = (!(e->flags & DIR_START) || reachable(root_fd, e->path, e->len)) &&",
         "there = (true || reachable(root_fd, e->path, e->len)) &&")]),
    "trawl version not compared": ("libcore/src/cache.c", [
        ("  if (cache && strcmp(cache->version, TRAWL_VERSION_STRING) != 0)",
         "  if (cache && false)")]),
    "queries not compared": ("libcore/src/cache.c", [
        ("  else if (cache && (cache->queries_len != queries->len ||\n"
         "                     memcmp(cache->queries, queries->data, queries->len) != 0))",
         "  else if (cache && false)")]),
    "roots and grouping not compared": ("libcore/src/cache.c", [
        ("      same = walk_matches(&gv[g], cache->walks->pdata[g]);", "")]),
    "outside sources' stamps not compared": ("libcore/src/cache.c", [
        ("                           : kind != SOURCE_RACY && stamped);",
         "                           : kind != SOURCE_RACY);"),
        ("    } else if (!stamped) {\n      return false;\n    }", "    }")]),
    "the index's stamp not compared": ("libcore/src/cache.c", [
        ("    if (same && is_index(kind) && (kind == SOURCE_INDEX_RACY || !stamped))",
         "    if (same && is_index(kind) && kind == SOURCE_INDEX_RACY)"),
        ("      s->index_moved = s->index_moved || kind == SOURCE_INDEX_RACY || !stamped;",
         "      s->index_moved = s->index_moved || kind == SOURCE_INDEX_RACY;")]),
    "the index's answers not compared": ("libcore/src/cache.c", [
        ("  if (now != ((type & ASKED_TRACKED) != 0))\n    g_hash_table_add",
         "  if (now && !now)\n    g_hash_table_add")]),
    "a directory whose answer changed replayed": ("libcore/src/cache.c", [
        ("      ((struct memo_dir *)d)->was.racy = true;", "      (void)d;")]),
    "racy index trusted": ("libcore/src/cachefile.c", [
        ("  return kind == IGNORE_SOURCE_INDEX ? SOURCE_INDEX_RACY : SOURCE_RACY;",
         "  return kind == IGNORE_SOURCE_INDEX ? IGNORE_SOURCE_INDEX : SOURCE_RACY;")]),
    "outside sources' list not compared": ("libcore/src/cache.c", [
        ("    same = strcmp(w->paths->pdata[i], src->paths->pdata[i]) == 0 &&", "    same ="),
        ("              w->paths->len == src->paths->len;", "              true;")]),
    "outside sources' environment not compared": ("libcore/src/cache.c", [
        ("  bool same = w->env->len == src->env->len && memcmp(w->env->str, src->env->str, w->env->len) == 0 &&",
         "  bool same ="),
        ("  if (s->env->len != was->env->len || memcmp(s->env->str, was->env->str, s->env->len) != 0)\n"
         "    return false;", "")]),
    "racy outside source trusted": ("libcore/src/cachefile.c", [
        ("    w_u8(b, stamp_racy(st, racy_from) ? racy_kind(src->kinds->data[i]) : src->kinds->data[i]);",
         "    (void)racy_from;\n    w_u8(b, false ? racy_kind(src->kinds->data[i]) : src->kinds->data[i]);")]),
    "a walk with problems re-checked by stamps": ("libcore/src/cache.c", [
        ("    quick = !st->groups[g].cached->problems &&\n", "    quick =\n")]),
    "index checksum not compared": ("libcore/src/cachefile.c", [
        ("  else if (*why == NULL && checksum((const guint8 *)index, index_len) != index_sum)",
         "  else if (false)")]),
    "records checksum not compared": ("libcore/src/cachefile.c", [
        ("  c->records_ok = c->recs && checksum(c->recs, c->recs_len) == c->recs_sum;",
         "  c->records_ok = c->recs != NULL;")]),
}

SUITES = ["walk-freshness", "walk-memo", "walk-cache", "walk-cache-worktree", "walk-ignore"]
# Guards no input can reach, and so no test can pin: listed, run, and not
# counted as survivors (docs/cache.md says why of each).
GUARDS = {"stamp: inode not compared", "stamp: mtime not compared", "stamp: size not compared",
          "the queries that read a directory not compared", "outside sources' list not compared",
          "racy index trusted"}


def run_tests(src, build):
    failed = []
    for t in SUITES:
        exe = os.path.join(build, "tests/walk", t)
        try:
            p = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=900)
            out = p.stdout.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            failed.append(t + " (timeout)")
            continue
        names = sorted(set(re.findall(r"^\[  FAILED  \] (\S+?)(?:,| \(|$)", out, re.M)))
        failed += ["%s %s" % (t, n) for n in names]
        if p.returncode != 0 and not names:
            failed.append("%s (exit %d)" % (t, p.returncode))
    p = subprocess.run([sys.executable, os.path.join(src, "tests/walk/cache_cli.py"),
                        os.path.join(build, "plugins/cli/trawl")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.decode("utf-8", "replace")
    failed += ["cache_cli.py: " + l[5:] for l in out.splitlines() if l.startswith("FAIL ")]
    return failed


def main(argv):
    src, build = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    only = set(argv[3:])
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
            b = subprocess.run(["ninja", "-C", build], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if b.returncode != 0:
                print("MUTANT DOES NOT BUILD: %s\n%s" % (name, b.stdout.decode()[-2000:]))
                survivors.append(name + " (does not build)")
                continue
            failed = run_tests(src, build)
        finally:
            with open(full, "w") as f:
                f.write(original)
        print("== %s: %d failed" % (name, len(failed)))
        by_suite = {}
        for f in failed:
            by_suite.setdefault(f.split(" ", 1)[0], []).append(f.split(" ", 1)[-1])
        for suite, names in by_suite.items():
            more = " and %d more" % (len(names) - 4) if len(names) > 4 else ""
            print("   %s %d: %s%s" % (suite, len(names), ", ".join(names[:4]), more))
        sys.stdout.flush()
        if not failed and name not in GUARDS:
            survivors.append(name)
    subprocess.run(["ninja", "-C", build], stdout=subprocess.DEVNULL)
    print("\nsurvivors (no test failed): %s" % (", ".join(survivors) if survivors else "none"))
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
