/* bench_walk — one walk of trawl's walker, timed, for the scheduler sweep
 * and the pattern-list benchmark.
 *
 *   bench_walk [-j N] [--floor F] [--sorted] [--reader linux|posix] [-I] [--patset-min N]
 *              [--includes-from FILE] [--excludes-from FILE] ROOT PATTERN... [-x PATTERN]...
 *
 * Prints one line: results, directories opened, threads used, the wall
 * time of the walk alone in microseconds (patterns compiled before the clock
 * starts), and an order-independent checksum of the result paths, so that
 * arms can be shown to agree. Every run is a fresh process, so that arms are
 * compared under the same conditions; bench/walk_sweep.py and
 * bench/walk_sets.py drive it. --patset-min is the walker's private knob:
 * 1 looks every list up through pattern sets and the prune index, a large
 * number tries every pattern in turn. The -from files hold one pattern per
 * line. --sorted runs trawl_walker_run_sorted(), as the command does: the
 * results handed over in order on the calling thread.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trawl/trawl.h"
#include "walk/walk-shared.h"
#include "walk/walk-testing.h"

static double
now_us(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

struct tally {
  unsigned long results;
  unsigned long sum; /* of the paths' hashes: the same whatever the order */
};

static bool
count_one(const TrawlEntry *e, void *data)
{
  struct tally *t = data;
  unsigned long h = 1469598103934665603ul;
  for (size_t i = 0; i < e->len; i++)
    h = (h ^ (unsigned char)e->path[i]) * 1099511628211ul;
  __atomic_fetch_add(&t->results, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&t->sum, h, __ATOMIC_RELAXED);
  return true;
}

/* Add every line of PATH to LIST (the strings leak with the process). */
static bool
read_lines(const char *path, GPtrArray *list)
{
  char *text = NULL;
  GError *error = NULL;
  if (!g_file_get_contents(path, &text, NULL, &error)) {
    fprintf(stderr, "bench_walk: %s\n", error->message);
    return false;
  }
  char **lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++)
    if (**l)
      g_ptr_array_add(list, *l);
  g_free(lines); /* the strings live on in LIST */
  g_free(text);
  return true;
}

int
main(int argc, char **argv)
{
  TrawlWalkOptions o;
  trawl_walk_options_init(&o);
  long floor = -1;
  long patset_min = -1;
  bool sorted = false;
  const char *root = NULL;
  GPtrArray *pats = g_ptr_array_new_with_free_func((GDestroyNotify)trawl_pattern_free);
  TrawlWalker *w = NULL;
  GPtrArray *inc = g_ptr_array_new(), *exc = g_ptr_array_new();
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-j") == 0 && i + 1 < argc) {
      o.threads = (unsigned)atoi(argv[++i]);
    } else if (strcmp(a, "--floor") == 0 && i + 1 < argc) {
      floor = atol(argv[++i]);
    } else if (strcmp(a, "--sorted") == 0) {
      sorted = true;
    } else if (strcmp(a, "--reader") == 0 && i + 1 < argc) {
      o.reader = strcmp(argv[++i], "posix") == 0 ? TRAWL_READER_POSIX : TRAWL_READER_LINUX;
    } else if (strcmp(a, "-x") == 0 && i + 1 < argc) {
      g_ptr_array_add(exc, argv[++i]);
    } else if (strcmp(a, "-I") == 0) {
      o.ignore = 0;
    } else if (strcmp(a, "--patset-min") == 0 && i + 1 < argc) {
      patset_min = atol(argv[++i]);
    } else if (strcmp(a, "--includes-from") == 0 && i + 1 < argc) {
      if (!read_lines(argv[++i], inc))
        return 2;
    } else if (strcmp(a, "--excludes-from") == 0 && i + 1 < argc) {
      if (!read_lines(argv[++i], exc))
        return 2;
    } else if (root == NULL) {
      root = a;
    } else {
      g_ptr_array_add(inc, (gpointer)a);
    }
  }
  if (root == NULL) {
    fprintf(stderr, "usage: bench_walk [-j N] [--floor F] [--sorted] [--reader R] [-I]\n"
                    "                  [--patset-min N] [--includes-from F] [--excludes-from F]\n"
                    "                  ROOT PATTERN... "
                    "[-x P]...\n");
    return 2;
  }
  w = trawl_walker_new(&o);
  trawl_walker_add_root(w, root);
  if (floor >= 0)
    trawl_walker_set_helper_floor(w, (unsigned)floor);
  if (patset_min >= 0)
    trawl_walker_set_patset_min(w, (unsigned)patset_min);
  for (int k = 0; k < 2; k++) {
    GPtrArray *src = k ? exc : inc;
    for (guint i = 0; i < src->len; i++) {
      const char *t = src->pdata[i];
      GError *error = NULL;
      TrawlPattern *p = trawl_pattern_compile(t, strlen(t), TRAWL_DIALECT_TRAWL, 0, &error);
      if (p == NULL) {
        fprintf(stderr, "bench_walk: %s\n", error->message);
        return 2;
      }
      g_ptr_array_add(pats, p);
      if (k)
        trawl_walker_add_exclude(w, p);
      else
        trawl_walker_add_include(w, p);
    }
  }
  struct tally tally = {0, 0};
  GError *error = NULL;
  double t0 = now_us();
  bool ok = sorted ? trawl_walker_run_sorted(w, count_one, &tally, &error)
                   : trawl_walker_run(w, count_one, &tally, &error);
  double t1 = now_us();
  if (!ok) {
    fprintf(stderr, "bench_walk: %s\n", error->message);
    return 2;
  }
  TrawlWalkStats st;
  trawl_walker_stats(w, &st);
  printf("results %lu dirs %lu threads %u us %.0f sum %016lx\n", tally.results,
         (unsigned long)st.dirs_opened, st.threads_used, t1 - t0, tally.sum);
  trawl_walker_free(w);
  g_ptr_array_unref(pats);
  g_ptr_array_unref(inc);
  g_ptr_array_unref(exc);
  return 0;
}
