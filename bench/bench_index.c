/* trawl — the index reader against libgit2's (docs/adr/0006-index-reader.md).
 *
 * usage: bench_index [--rounds N] INDEX_FILE...
 *
 * For each index file (a repository's .git/index; its shared index beside
 * it): both arms read it and ask it what a walk asks — every entry's path
 * as a file, and every directory above one as a directory (is there a path
 * below it?) — and their answers must agree (the entry count, every
 * answer) before anything is timed. Then N rounds (default 15), the arms
 * taking turns, each round one read and every question: the median of each
 * arm, and the median of the rounds' ratios, are printed. Also, once per
 * arm: the time to read alone, and whether libgit2 reads the index at all
 * (it refuses extensions it does not know: a split index's `link`, a
 * sparse index's `sdir`).
 *
 *   trawl    gitindex_read() (gitindex.c): the file mapped, entries walked
 *            once, paths kept where they are (format 4's spelt out), no
 *            checksum; lookups by binary search.
 *   libgit2  git_index_open() on the file (a bare index: no repository, so
 *            no config read), git_index_find() for a file,
 *            git_index_find_prefix() for a directory (its path and '/').
 *
 * Built only when libgit2 is installed (Debian: libgit2-dev).
 */
#include <git2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "bench_util.h"
#include "gitindex.h"

/* The questions a walk would ask of one index: its files and directories. */
struct questions {
  GPtrArray *files; /* char * */
  GPtrArray *dirs;  /* char *, each with its '/' */
};

static void
questions_of(const struct gitindex *ix, struct questions *q)
{
  q->files = g_ptr_array_new_with_free_func(g_free);
  q->dirs = g_ptr_array_new_with_free_func(g_free);
  GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
  struct gitindex_entry *all = gitindex_entries(ix);
  for (size_t i = 0; i < ix->n; i++) {
    const struct gitindex_entry *e = &all[i];
    if (e->flags & GITINDEX_SPARSE_DIR)
      continue;
    g_ptr_array_add(q->files, g_strndup(e->path, e->len));
    for (uint32_t k = 0; k < e->len; k++) {
      if (e->path[k] != '/')
        continue;
      char *d = g_strndup(e->path, k + 1);
      if (g_hash_table_contains(seen, d)) {
        g_free(d);
        continue;
      }
      g_hash_table_add(seen, d);
      g_ptr_array_add(q->dirs, d);
    }
  }
  g_free(all);
  g_hash_table_steal_all(seen);
  g_hash_table_unref(seen);
}

/* One round of an arm: read the index and ask every question; the number
 * of answers that were yes (they must all be). */
static NOINLINE size_t
trawl_round(const char *path, const struct questions *q, size_t *entries)
{
  GError *error = NULL;
  struct gitindex *ix = gitindex_read(path, 20, &error);
  if (ix == NULL) {
    fprintf(stderr, "bench_index: %s\n", error->message);
    exit(1);
  }
  size_t yes = 0;
  for (guint i = 0; i < q->files->len; i++) {
    const char *f = q->files->pdata[i];
    yes += gitindex_has_file(ix, f, strlen(f));
  }
  for (guint i = 0; i < q->dirs->len; i++) {
    const char *d = q->dirs->pdata[i];
    yes += gitindex_has_dir(ix, d, strlen(d) - 1);
  }
  *entries = ix->n;
  gitindex_free(ix);
  return yes;
}

static NOINLINE size_t
libgit2_round(const char *path, const struct questions *q, size_t *entries)
{
  git_index *ix = NULL;
  if (git_index_open(&ix, path) != 0) {
    *entries = 0;
    return 0;
  }
  size_t yes = 0, at;
  for (guint i = 0; i < q->files->len; i++)
    yes += git_index_find(&at, ix, q->files->pdata[i]) == 0;
  for (guint i = 0; i < q->dirs->len; i++)
    yes += git_index_find_prefix(&at, ix, q->dirs->pdata[i]) == 0;
  *entries = git_index_entrycount(ix);
  git_index_free(ix);
  return yes;
}

/* Reading alone. */
static NOINLINE bool
trawl_read(const char *path)
{
  struct gitindex *ix = gitindex_read(path, 20, NULL);
  gitindex_free(ix);
  return ix != NULL;
}

static NOINLINE bool
libgit2_read(const char *path)
{
  git_index *ix = NULL;
  const bool ok = git_index_open(&ix, path) == 0;
  git_index_free(ix);
  return ok;
}

int
main(int argc, char **argv)
{
  int rounds = 15, first = 1;
  if (argc > 2 && strcmp(argv[1], "--rounds") == 0) {
    rounds = atoi(argv[2]);
    first = 3;
  }
  if (first >= argc || rounds < 1) {
    fprintf(stderr, "usage: bench_index [--rounds N] INDEX_FILE...\n");
    return 2;
  }
  git_libgit2_init();
  printf("%-40s %9s %9s | %10s %10s %7s | %10s %10s %7s\n", "index", "entries", "questions",
         "trawl ms", "libgit2 ms", "ratio", "read only", "libgit2", "ratio");
  for (int a = first; a < argc; a++) {
    const char *path = argv[a];
    GError *error = NULL;
    struct gitindex *ix = gitindex_read(path, 20, &error);
    if (ix == NULL) {
      fprintf(stderr, "bench_index: %s\n", error->message);
      return 1;
    }
    struct questions q;
    questions_of(ix, &q);
    const size_t asked = q.files->len + q.dirs->len;
    gitindex_free(ix);
    size_t n_trawl, n_git;
    const size_t yes_trawl = trawl_round(path, &q, &n_trawl);
    const size_t yes_git = libgit2_round(path, &q, &n_git);
    if (n_git == 0 && n_trawl > 0) {
      const git_error *e = git_error_last();
      printf("%-40s %9zu %9zu | libgit2 does not read it: %s\n", path, n_trawl, asked,
             e ? e->message : "(no message)");
      g_ptr_array_unref(q.files);
      g_ptr_array_unref(q.dirs);
      continue;
    }
    if (n_trawl != n_git || yes_trawl != asked || yes_git != asked) {
      fprintf(stderr,
              "bench_index: %s: the arms disagree (entries %zu and %zu, yes %zu and %zu of %zu)\n",
              path, n_trawl, n_git, yes_trawl, yes_git, asked);
      return 1;
    }
    double *t = g_new(double, rounds), *g = g_new(double, rounds), *r = g_new(double, rounds);
    double *tr = g_new(double, rounds), *gr = g_new(double, rounds), *rr = g_new(double, rounds);
    for (int i = 0; i < rounds; i++) {
      /* The order alternates: neither arm always runs on a warm cache. */
      for (int k = 0; k < 2; k++) {
        const bool ours = (k == 0) == (i % 2 == 0);
        double t0 = bench_now_ns();
        size_t n;
        if (ours)
          trawl_round(path, &q, &n);
        else
          libgit2_round(path, &q, &n);
        (ours ? t : g)[i] = (bench_now_ns() - t0) / 1e6;
        t0 = bench_now_ns();
        if (!(ours ? trawl_read(path) : libgit2_read(path)))
          return 1;
        (ours ? tr : gr)[i] = (bench_now_ns() - t0) / 1e6;
      }
      r[i] = t[i] / g[i];
      rr[i] = tr[i] / gr[i];
    }
    printf("%-40s %9zu %9zu | %10.3f %10.3f %7.3f | %10.3f %10.3f %7.3f\n", path, n_trawl, asked,
           bench_median(t, (size_t)rounds), bench_median(g, (size_t)rounds),
           bench_median(r, (size_t)rounds), bench_median(tr, (size_t)rounds),
           bench_median(gr, (size_t)rounds), bench_median(rr, (size_t)rounds));
    g_free(t), g_free(g), g_free(r), g_free(tr), g_free(gr), g_free(rr);
    g_ptr_array_unref(q.files);
    g_ptr_array_unref(q.dirs);
  }
  git_libgit2_shutdown();
  return 0;
}
