/* trawl check — the build-time hook: re-validate result caches, and say
 * whether any glob's answer changed.
 *
 *   trawl check [--touch STAMP | --bump STAMP] [--stats] --cache FILE...
 *
 * Each cache file holds the queries it was written for; they are asked
 * again through trawl_cache_run(), which stats the recorded
 * directories and reads only the changed ones. If some query's results
 * changed: the paths added and removed printed, STAMP touched (mtime) or
 * rewritten (content: a digest of the new results), and only then the
 * cache rewritten, exit 1. Otherwise nothing is written and the exit is 0. A cache
 * that cannot be read says nothing about the tree: it counts as a change,
 * so that the build runs the step that writes it again. docs/cli.md,
 * docs/cache.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "check-labels.h"
#include "check-mark.h"
#include "depfile.h"
#include "cli.h"
#include "stamp.h"
#include "trawl/cache.h"
#include "trawl/plan.h"

static const char check_description[] =
  "Re-checks the result caches written by `trawl --cache FILE` or\n"
  "`trawl batch --cache FILE`: stats the directories they recorded, reads\n"
  "only those that changed, and compares each query's results with the\n"
  "cached ones. Prints the paths added (+) and removed (-), a header line\n"
  "\"FILE: query N (ROOT)\" before each query's changes (or the label the\n"
  "command that wrote FILE left beside it: trawl meson's lists).\n"
  "\n"
  "Exit status: 0 nothing changed (nothing is written); 1 some results\n"
  "changed (the cache is rewritten and STAMP touched or rewritten), or a\n"
  "cache could not be read (it says nothing; the step that writes it must\n"
  "run again); 2 usage error.";

/* Where on_change() prints: the cache, its plan, its labels (read at its
 * first change), the query last headed. */
struct changes {
  const char *cache;
  const TrawlPlan *plan;
  check_labels *labels;   /* NULL: none, or not read yet */
  bool labels_read;
  size_t headed;          /* the query whose header was printed, + 1 */
  GString *line;
};

/* TrawlCacheChangeFunc: a header line before a query's first change — its label
 * (check-labels.h), else "CACHE: query N (ROOT)" — then the change, each
 * name shown as messages show it (report.h). */
static void
on_change(size_t q, const char *path, bool added, void *data)
{
  struct changes *c = data;
  if (!c->labels_read) {
    c->labels = check_labels_read(c->cache, trawl_plan_size(c->plan));
    c->labels_read = true;
  }
  GString *line = c->line;
  g_string_truncate(line, 0);
  if (c->headed != q + 1) {
    if (c->labels) {
      const char *label = check_labels_label(c->labels, q);
      cli_append_text(line, label, strlen(label));
    } else {
      const char *root = trawl_plan_query_root(c->plan, q);
      cli_append_name(line, c->cache, strlen(c->cache));
      g_string_append_printf(line, ": query %zu (", q);
      cli_append_name(line, root, strlen(root));
      g_string_append_c(line, ')');
    }
    g_string_append_c(line, '\n');
    c->headed = q + 1;
  }
  g_string_append(line, added ? "+ " : "- ");
  if (c->labels) {
    const char *prefix = check_labels_prefix(c->labels, q);
    GString *full = g_string_new(prefix);
    g_string_append(full, path);
    cli_append_name(line, full->str, full->len);
    g_string_free(full, TRUE);
  } else {
    cli_append_name(line, path, strlen(path));
  }
  g_string_append_c(line, '\n');
  fwrite(line->str, 1, line->len, stdout);
}

static bool
touch(const char *stamp)
{
  int fd = open(stamp, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, FILE_MODE);
  if (fd < 0 || futimens(fd, NULL) != 0) {
    fprintf(stderr, "trawl: --touch %s: %s\n", stamp, strerror(errno));
    if (fd >= 0)
      close(fd);
    return false;
  }
  close(fd);
  return true;
}

/* One cache's re-check, its file held back when it changed. */
struct held_cache {
  const char *cache;
  TrawlPlan *plan;
  bool owned;              /* freed with this (else in `plans`, for --bump) */
  TrawlCacheReport report;
  bool unproven;           /* its run failed (a root gone) */
  double ms;
};

static void
held_free(gpointer data)
{
  struct held_cache *h = data;
  if (h->owned)
    trawl_plan_free(h->plan);
  trawl_cache_report_clear(&h->report);
  g_free(h);
}

/* After H's cache was written (or not): its write error and --stats line;
 * whether the depfile cannot prove it (a directory read and not written
 * back, or a run that failed). */
static bool
held_done(struct held_cache *h, bool stats)
{
  const TrawlCacheReport *rep = &h->report;
  if (rep->write_error) {
    char *m = g_strdup_printf("cache not written: %s", rep->write_error->message);
    cli_print_message(m);
    g_free(m);
  }
  if (stats)
    fprintf(stderr, "trawl: %s: directories opened %" G_GUINT64_FORMAT ", reused %"
            G_GUINT64_FORMAT "%s, %.3f ms\n", h->cache, rep->dirs_read, rep->dirs_reused,
            rep->written ? ", cache written" : "", h->ms);
  if (stats)
    cli_report_watchman(h->cache, rep);
  return h->unproven || (rep->dirs_read > 0 && !rep->written);
}

/* How many plans whose check found nothing changed --bump keeps, each
 * with its cache file open, and its base if it was written over one (its
 * records are read only if the digest is needed): a few, and an eighth of
 * the descriptors at most, two a plan. Beyond, each is freed and, if the
 * digest is needed, made again from its file. */
static guint
bump_open_max(void)
{
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
    return 64;
  return (guint)MIN((rlim_t)64, rl.rlim_cur / 16);
}

/* --bump's digest of every cache's results, the caches in order: PLANS[i],
 * or where it was let go (RELEASED[i], its path), the plan of that cache
 * file run again from it (nothing written that would say "current" before
 * the stamp is told: a change found now is held and dropped, and the next
 * check finds it again). */
static char *
bump_digest(GPtrArray *plans, GPtrArray *released)
{
  TrawlDigest *d = trawl_digest_new();
  for (guint i = 0; i < plans->len; i++) {
    TrawlPlan *plan = plans->pdata[i];
    const char *path = released->pdata[i];
    if (path) {
      TrawlCacheReport rep;
      plan = trawl_cache_load_plan(path, NULL);
      if (plan && !trawl_cache_run(plan, path, TRAWL_CACHE_WRITE_ON_CHANGE |
                                                   TRAWL_CACHE_HOLD_CHANGED, &rep, NULL)) {
        trawl_plan_free(plan);
        plan = NULL; /* counts as none, as a cache that could not be loaded */
      }
      if (plan)
        trawl_cache_report_clear(&rep);
    }
    for (size_t q = 0; plan && q < trawl_plan_size(plan); q++) {
      const GPtrArray *r = trawl_plan_results(plan, q);
      for (guint k = 0; k < r->len; k++)
        trawl_digest_result(d, r->pdata[k], strlen(r->pdata[k]));
      trawl_digest_end_query(d);
    }
    if (path)
      trawl_plan_free(plan);
  }
  return trawl_digest_finish(d);
}

int
cli_check(int argc, char **argv)
{
  char **caches = NULL, *touch_stamp = NULL, *bump_stamp = NULL, *checked = NULL;
  char *depfile = NULL, *watch_limit_text = NULL;
  guint64 watch_limit = G_MAXUINT64;
  gboolean stats = FALSE;
  GOptionEntry entries[] = {
    {"cache", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &caches,
     "A cache file to re-check (repeatable: one process for every glob of a build)", "FILE"},
    {"touch", 0, 0, G_OPTION_ARG_FILENAME, &touch_stamp,
     "When results changed, set STAMP's modification time to now (Ninja, Make)", "STAMP"},
    {"bump", 0, 0, G_OPTION_ARG_FILENAME, &bump_stamp,
     "When results changed, rewrite STAMP with a digest of the results (Bazel)", "STAMP"},
    {"checked", 0, 0, G_OPTION_ARG_FILENAME, &checked,
     "Leave FILE's modification time just before the check began (Ninja; check-mark.h)",
     "FILE"},
    {"depfile", 0, 0, G_OPTION_ARG_FILENAME, &depfile,
     "With --checked: write FILE, a depfile of every path the caches depend on, with the mark "
     "as its target (Ninja; depfile.h)", "FILE"},
    {"watch-limit", 0, 0, G_OPTION_ARG_STRING, &watch_limit_text,
     "With --depfile: beyond N paths, a depfile that makes the check run on every build "
     "(Ninja stats every path it lists on every build)", "N"},
    {"stats", 0, 0, G_OPTION_ARG_NONE, &stats,
     "Print per cache the directories read and reused to stderr", NULL},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionContext *ctx = g_option_context_new("--cache FILE...");
  g_option_context_set_summary(ctx, "trawl check: re-validate result caches.");
  g_option_context_set_description(ctx, check_description);
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *error = NULL;
  int status = EXIT_USAGE;
  GPtrArray *plans = g_ptr_array_new_with_free_func((GDestroyNotify)trawl_plan_free);
  GPtrArray *released = g_ptr_array_new(); /* beside PLANS: a cache's path, its plan let go */
  guint kept_open = 0;
  const guint keep_max = bump_open_max();
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "trawl check: %s\n", error->message);
    g_error_free(error);
    goto out;
  }
  if (argc > 1) {
    fprintf(stderr, "trawl check: unexpected argument '%s' (caches go after --cache)\n", argv[1]);
    goto out;
  }
  if (caches == NULL && checked == NULL) {
    fprintf(stderr, "trawl check: --cache FILE is required\n");
    goto out;
  }
  if (depfile && !checked) {
    fprintf(stderr, "trawl check: --depfile goes with --checked (its target)\n");
    goto out;
  }
  if (watch_limit_text) {
    if (!depfile) {
      fprintf(stderr, "trawl check: --watch-limit goes with --depfile\n");
      goto out;
    }
    if (!g_ascii_string_to_unsigned(watch_limit_text, 10, 0, G_MAXUINT64 - 1, &watch_limit,
                                    &error)) {
      fprintf(stderr, "trawl check: --watch-limit '%s': %s\n", watch_limit_text, error->message);
      g_error_free(error);
      goto out;
    }
  }
  if (touch_stamp && bump_stamp) {
    fprintf(stderr, "trawl check: --touch and --bump do not go together\n");
    goto out;
  }

  struct timespec check_start;
  if (checked && !check_mark_begin(checked, &check_start)) {
    status = EXIT_IO;
    goto out;
  }
  bool changed = false;
  /* With --depfile, a cache whose records are not what the tree is now
   * (a directory read again, the answers the same, the cache kept) would
   * leave out of the depfile what that directory holds now: a new
   * directory, say, where a file may appear next. So every directory read
   * is written back, and a cache that could not be is watched "always". */
  bool unproven = false;
  /* The caches whose answers changed are written last, after the stamp:
   * a check killed between the two leaves a stamp touched and a cache
   * that tells the change again, never a cache that says "current" to a
   * build that was not told (TRAWL_CACHE_HOLD_CHANGED). */
  GPtrArray *held = g_ptr_array_new_with_free_func(held_free);
  /* Only the changes are printed; --bump's digest needs the results. */
  const unsigned flags = (depfile ? 0 : TRAWL_CACHE_WRITE_ON_CHANGE) | TRAWL_CACHE_HOLD_CHANGED |
                         (bump_stamp ? 0 : TRAWL_CACHE_CHANGES_ONLY);
  for (char **c = caches; c && *c; c++) {
    const gint64 start = g_get_monotonic_time();
    TrawlPlan *plan = trawl_cache_load_plan(*c, &error);
    /* Kept for --bump's digest only: a plan whose check found nothing
     * changed keeps its cache file open (its records are read only when
     * its results are asked), one descriptor per cache, up to
     * bump_open_max() of them (below). */
    if (bump_stamp) {
      g_ptr_array_add(plans, plan);
      g_ptr_array_add(released, NULL);
    }
    if (plan == NULL) {
      char *m = g_strdup_printf("cache %s; counted as a change", error->message);
      cli_print_message(m);
      g_free(m);
      g_clear_error(&error);
      changed = true;
      continue;
    }
    struct held_cache *h = g_new0(struct held_cache, 1);
    h->cache = *c;
    h->plan = plan;
    h->owned = !bump_stamp;
    TrawlCacheReport *rep = &h->report;
    bool ran = trawl_cache_run(plan, *c, flags, rep, &error);
    h->unproven = !ran;
    if (!ran) {
      /* A root that is gone: its results are gone too. */
      char *m = g_strdup_printf("%s: %s", *c, error->message);
      cli_print_message(m);
      g_free(m);
      g_clear_error(&error);
    }
    if (rep->warning) {
      char *m = g_strdup_printf("cache %s %s; counted as a change", *c, rep->warning->message);
      cli_print_message(m);
      g_free(m);
    }
    if (rep->changed) {
      changed = true;
      struct changes ch = {.cache = *c, .plan = plan, .line = g_string_new(NULL)};
      trawl_cache_changes(plan, on_change, &ch);
      check_labels_free(ch.labels);
      g_string_free(ch.line, TRUE);
    }
    h->ms = (double)(g_get_monotonic_time() - start) / 1e3;
    if (rep->changed) {
      g_ptr_array_add(held, h);
    } else {
      unproven = unproven || held_done(h, stats);
      held_free(h);
      /* Nothing changed: kept open for the digest, up to a few. */
      if (bump_stamp && kept_open++ >= keep_max) {
        trawl_plan_free(plan);
        plans->pdata[plans->len - 1] = NULL;
        released->pdata[released->len - 1] = *c;
      }
    }
  }
  fflush(stdout);
  status = changed ? EXIT_NONE : EXIT_OK;
  if (changed && touch_stamp && !touch(touch_stamp))
    status = EXIT_IO;
  if (changed && bump_stamp) {
    char *digest = bump_digest(plans, released);
    if (!stamp_bump(bump_stamp, digest))
      status = EXIT_IO;
    g_free(digest);
  }
  /* A stamp that could not be told keeps the caches as they were: the
   * next check finds the change again and tries the stamp again. */
  for (guint i = 0; i < held->len; i++) {
    struct held_cache *h = held->pdata[i];
    if (status != EXIT_IO)
      trawl_cache_store(h->plan, &h->report);
    unproven = held_done(h, stats) || unproven;
  }
  g_ptr_array_unref(held);
  /* After the caches are rewritten: the depfile is what they record now. */
  if (depfile && !depfile_write(depfile, checked, caches,
                                caches ? (int)g_strv_length(caches) : 0, unproven, watch_limit))
    status = EXIT_IO;
  if (checked && !check_mark_end(checked, &check_start))
    status = EXIT_IO;

out:
  g_ptr_array_unref(plans);
  g_ptr_array_unref(released);
  g_strfreev(caches);
  g_free(touch_stamp);
  g_free(bump_stamp);
  g_free(checked);
  g_free(depfile);
  g_free(watch_limit_text);
  g_option_context_free(ctx);
  return status;
}
