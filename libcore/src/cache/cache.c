/* trawl — result caches: a plan run through a cache file, re-validated by
 * stamps (trawl/cache.h, docs/cache.md).
 *
 * A cached run (trawl_cache_run) goes in phases, each a function
 * below: the cache file read and found to be this plan's or not (same trawl
 * version, same queries: cachefile.h), the queries grouped and the roots
 * compared; each walk's ignore sources outside the walked directories
 * stamped and compared with the record (sources.h); then, if every
 * directory recorded is as recorded (one stat each, walk_unchanged,
 * recheck.c), nothing is walked at all and the answer is the records' (the
 * quick path of `trawl check`); otherwise the plan walks with the record as
 * its memo, re-reading only what changed (walk/replay.c); the answer
 * compared with the cache's; the new record written when it is worth it.
 * The cache's state for a plan is kept with it (plan_keep_cache), opaque to
 * the plan, which knows nothing of files; a plan made from a cache file
 * compiles its patterns only when it walks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../arena.h"
#include "cache-testing.h"
#include "cachefile.h"
#include "format.h"
#include "sources.h"
#include "watchman.h"
#include "../ignore.h"
#include "../memo.h"
#include "../plan-shared.h"
#include "trawl/cache.h"
#include "trawl/version.h"

/* ---- the cache's state beside a plan ---- */

/* Per group of the run that read the cache. */
struct cgroup {
  const struct cached_walk *cached; /* its walk in the cache file (NULL: none trusted) */
  struct walk_memo *memo_prev;      /* the cache's record, trusted or not: the previous results */
  struct walk_memo *memo;           /* this run's record */
  bool trusted;                     /* memo_prev may be replayed: the sources held */
  GHashTable *asked;                /* the index changed: the directories (char *, relative to
                                       the root) where it now answers a question otherwise */
  struct index_pending *index;      /* the index changed: being read again (run_trust() to
                                       run_quick()), for ASKED */
  struct memo_partial partial;      /* memo_prev holds part of the record (partial.hot set):
                                       the directories that may have changed (run_partial()) */
  GMutex lock;                      /* then, for partial_recorded(): */
  struct dir_cursor cursor;         /* the record's entries, looked up by the walk's threads */
  struct split split;               /* then, the rest of the record, as it stays */
};

/* A result that differs from the cache's: query Q's PATH, ADDED or gone. */
struct change {
  size_t q;
  const char *path;
  bool added;
};

struct cache_state {
  unsigned run;            /* plan_runs() of the run that read a cache file of this plan */
  bool trusted;            /* that run read one */
  bool quick;              /* it found nothing changed without walking: the results are the cache's */
  bool partial;            /* its walks were given part of their records (run_partial()) */
  struct cache_file *file; /* that file, while its walks are needed */
  char *path;              /* a plan made from a cache file: where (its first run loads it no more) */
  struct cgroup *groups;
  guint n_groups;
  GPtrArray *previous;     /* per query, GPtrArray of char *: the cache's results, made on demand */
  GArray *changes;         /* struct change: the results that differ from the cache's, by query
                              and path, when run_compare() found them from the memos (or
                              from the lists: TRAWL_CACHE_CHANGES_ONLY) */
  GPtrArray *none;         /* TRAWL_CACHE_CHANGES_ONLY: what trawl_plan_results() lists */
  struct arena prev_arena; /* their paths */
  GByteArray *pending;     /* a plan made from a cache file: its queries as the file has them,
                            * their patterns not compiled until a walk needs them */
  GError *pending_error;   /* they did not compile */
  GByteArray *held, *held_dirs; /* TRAWL_CACHE_HOLD_CHANGED: the index, the
                                 * directory entries and the records a changed
                                 * run would have written, until
                                 * trawl_cache_store() writes them */
  struct recs_out held_recs;    /* (its ranges of the last file: its own descriptor) */
  char *held_path;         /* where */
};

static void
groups_clear(struct cache_state *st)
{
  for (guint g = 0; g < st->n_groups; g++) {
    walk_memo_free(st->groups[g].memo_prev);
    walk_memo_free(st->groups[g].memo);
    if (st->groups[g].asked)
      g_hash_table_unref(st->groups[g].asked);
    if (st->groups[g].partial.hot) {
      g_hash_table_unref(st->groups[g].partial.hot);
      dir_cursor_clear(&st->groups[g].cursor);
      g_mutex_clear(&st->groups[g].lock);
    }
    split_clear(&st->groups[g].split);
  }
  g_free(st->groups);
  st->groups = NULL;
  st->n_groups = 0;
}

static void
previous_clear(struct cache_state *st)
{
  if (st->previous)
    g_ptr_array_unref(st->previous);
  st->previous = NULL;
  if (st->changes)
    g_array_unref(st->changes);
  st->changes = NULL;
  arena_clear(&st->prev_arena);
}

static void
held_clear(struct cache_state *st)
{
  g_clear_pointer(&st->held, g_byte_array_unref);
  g_clear_pointer(&st->held_dirs, g_byte_array_unref);
  recs_out_clear(&st->held_recs);
  g_clear_pointer(&st->held_path, g_free);
}

static void
state_free(struct cache_state *st)
{
  held_clear(st);
  groups_clear(st);
  previous_clear(st);
  if (st->none)
    g_ptr_array_unref(st->none);
  cache_file_free(st->file);
  g_free(st->path);
  if (st->pending)
    g_byte_array_unref(st->pending);
  g_clear_error(&st->pending_error);
  g_free(st);
}

/* PLAN's cache state, made if it has none. */
static struct cache_state *
state_of(TrawlPlan *plan)
{
  struct cache_state *st = plan_cache(plan);
  if (st == NULL) {
    st = g_new0(struct cache_state, 1);
    plan_keep_cache(plan, st, state_free);
  }
  return st;
}

/* The state of PLAN's last run, if that run was a cached one. */
static const struct cache_state *
last_run(const TrawlPlan *plan)
{
  const struct cache_state *st = plan_cache(plan);
  return st && st->run == plan_runs(plan) && st->trusted ? st : NULL;
}

/* ---- runs ---- */

G_DEFINE_QUARK(trawl-cache-error-quark, trawl_cache_error)

/* *SLOT, a TRAWL_CACHE_ERROR of CODE saying WHY (taken; NULL: none). */
static void
report_error(GError **slot, TrawlCacheError code, char *why)
{
  g_clear_error(slot);
  if (why)
    *slot = g_error_new_literal(TRAWL_CACHE_ERROR, (int)code, why);
  g_free(why);
}

void
trawl_cache_report_clear(TrawlCacheReport *r)
{
  g_clear_error(&r->watchman_error);
  g_clear_error(&r->warning);
  g_clear_error(&r->write_error);
  memset(r, 0, sizeof *r);
}

/* The queries as the cache records them (cachefile.h). */
static void
w_queries(GByteArray *b, TrawlPlan *plan, const struct cache_state *st)
{
  if (st && st->pending) {
    /* A plan from a cache, its patterns not compiled: the file's bytes are
     * what this would write. */
    g_byte_array_append(b, st->pending->data, st->pending->len);
    return;
  }
  const size_t n = trawl_plan_size(plan);
  cache_queries_begin(b, n);
  for (size_t i = 0; i < n; i++) {
    struct plan_query_view q;
    plan_query_view(plan, i, &q);
    cache_query_write(b, q.root, q.includes, q.excludes, q.opt);
  }
}

/* Does cached walk W have group G's root and queries? */
static bool
walk_matches(const struct plan_group_view *g, const struct cached_walk *w)
{
  bool same = w->dev == (guint64)g->dev && w->ino == (guint64)g->ino &&
              w->members->len == g->members->len;
  for (guint i = 0; same && i < w->members->len; i++)
    same = g_array_index(w->members, guint64, i) == g_array_index(g->members, size_t, i);
  return same;
}

/* Is NOW the record OLD was, entry for entry? A replayed entry is the very
 * one of the old record; a directory on the way is made again each run. */
static bool
same_records(const struct walk_memo *now, const struct walk_memo *old)
{
  if (g_hash_table_size(now->dirs) != g_hash_table_size(old->dirs))
    return false;
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, now->dirs);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    const struct memo_dir *d = value;
    const struct memo_dir *o = walk_memo_lookup(old, d->root, d->path, d->len);
    if (o == d)
      continue;
    if (o == NULL || !d->way || !o->way || d->was.has != o->was.has ||
        !stamp_equal(&d->was.st, &o->was.st) || !stamp_equal(&d->was.ignore[0], &o->was.ignore[0]) ||
        !stamp_equal(&d->was.ignore[1], &o->was.ignore[1]) ||
        d->was.repo_len != o->was.repo_len ||
        (d->was.repo_len && memcmp(d->was.repo, o->was.repo, d->was.repo_len) != 0))
      return false;
  }
  return true;
}

/* Make every directory of MEMO named in DIRS (char *, relative to the
 * root) one to read again: racy (dir_check()). */
static void
read_again(struct walk_memo *memo, GHashTable *dirs)
{
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, dirs);
  while (g_hash_table_iter_next(&it, &key, NULL)) {
    const struct memo_dir *d = walk_memo_lookup(memo, 0, key, strlen(key));
    if (d)
      ((struct memo_dir *)d)->was.racy = true; /* the memo's own, parsed for this run */
  }
}

/* Mark every directory of MEMO that watchman vouches for (watchman_vouches():
 * nothing in TOUCHED names it) to be replayed without a stat: only those
 * the changes touch go through dir_check(). */
static void
vouch(struct walk_memo *memo, GHashTable *touched)
{
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, memo->dirs);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    struct memo_dir *d = value; /* the memo's own, parsed for this run */
    d->vouched = watchman_vouches(&d->was, d->len, d->start || d->way, touched, d->path);
  }
}

/* ---- the cache's results ---- */

static void
keep_previous(size_t q, const char *path, size_t len, void *data)
{
  struct cache_state *st = data;
  g_ptr_array_add(st->previous->pdata[q], (gpointer)arena_copy(&st->prev_arena, path, len));
}

/* ST->previous from the cache's records: every result recorded, per query,
 * sorted bytewise (rec_pass()). */
static void
previous_build(const TrawlPlan *plan, struct cache_state *st)
{
  st->previous = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
  for (size_t i = 0; i < trawl_plan_size(plan); i++)
    g_ptr_array_add(st->previous, g_ptr_array_new());
  for (guint g = 0; g < st->n_groups; g++) {
    const struct cached_walk *w = st->groups[g].cached;
    if (w == NULL)
      continue;
    struct plan_group_view gv;
    plan_group_view(plan, g, &gv);
    if (!w->file->records_checked)
      records_read(w->file);
    if (!rec_pass(w, gv.members, keep_previous, st)) {
      /* Unreadable after all: nothing of this walk. */
      for (guint m = 0; m < gv.members->len; m++)
        g_ptr_array_set_size(st->previous->pdata[g_array_index(gv.members, size_t, m)], 0);
    }
  }
}

const GPtrArray *
trawl_cache_previous_results(const TrawlPlan *plan, size_t q)
{
  struct cache_state *st = (struct cache_state *)last_run(plan);
  if (st == NULL || q >= trawl_plan_size(plan))
    return NULL;
  if (st->previous == NULL)
    previous_build(plan, st);
  return st->previous->pdata[q];
}

/* trawl_plan_results() of a run that took the quick path. */
static const GPtrArray *
quick_results(const TrawlPlan *plan, size_t q)
{
  return trawl_cache_previous_results(plan, q);
}

/* Every result of PLAN's last run that differs from the cache's, from
 * the two lists (a merge of each query's, sorted), to FN (with DATA). */
static size_t
list_changes(const TrawlPlan *plan, TrawlCacheChangeFunc fn, void *data)
{
  size_t changes = 0;
  for (size_t q = 0; q < trawl_plan_size(plan); q++) {
    const GPtrArray *now_list = trawl_plan_results(plan, q);
    const GPtrArray *was_list = trawl_cache_previous_results(plan, q);
    const size_t n = now_list->len, m = was_list ? was_list->len : 0;
    const char *const *now = (const char *const *)now_list->pdata;
    const char *const *was = was_list ? (const char *const *)was_list->pdata : NULL;
    /* A merge of two sorted lists. */
    size_t i = 0, j = 0;
    while (i < n || j < m) {
      const int c = i == n ? 1 : j == m ? -1 : strcmp(now[i], was[j]);
      if (c == 0) {
        i++, j++;
        continue;
      }
      changes++;
      if (fn)
        fn(q, c < 0 ? now[i] : was[j], c < 0, data);
      if (c < 0)
        i++;
      else
        j++;
    }
  }
  return changes;
}

size_t
trawl_cache_changes(const TrawlPlan *plan, TrawlCacheChangeFunc fn, void *data)
{
  const struct cache_state *st = last_run(plan);
  if (st && st->changes) {
    for (guint i = 0; fn && i < st->changes->len; i++) {
      const struct change *c = &g_array_index(st->changes, struct change, i);
      fn(c->q, c->path, c->added, data);
    }
    return st->changes->len;
  }
  return list_changes(plan, fn, data);
}

static void
keep_change(size_t q, const char *path, bool added, void *data)
{
  struct cache_state *st = data;
  struct change c = {q, path, added}; /* the plan's, or the previous results' */
  g_array_append_val(st->changes, c);
}

/* trawl_plan_results() of a run asked for its changes alone. */
static const GPtrArray *
no_results(const TrawlPlan *plan, size_t q)
{
  (void)q;
  return ((const struct cache_state *)plan_cache(plan))->none;
}

void (*cache_test_after_walk)(void *data);
void *cache_test_after_walk_data;

bool
cache_run_was_quick(const TrawlPlan *plan)
{
  const struct cache_state *st = last_run(plan);
  return st && st->quick;
}

bool
cache_run_was_partial(const TrawlPlan *plan)
{
  const struct cache_state *st = last_run(plan);
  return st && st->partial;
}

bool
cache_patterns_pending(const TrawlPlan *plan)
{
  const struct cache_state *st = plan_cache(plan);
  return st && st->pending;
}

/* ---- a cached run, phase by phase ---- */

/* What the phases of one cached run of a plan hand each other. */
struct cached_run {
  TrawlPlan *plan;
  struct cache_state *st;
  const char *path;
  unsigned flags;
  TrawlCacheReport *report;
  struct cache_file *cache;     /* the file read, until trusted (then st->file) */
  GByteArray *queries;          /* the plan's queries as a cache file records them */
  GError *first;                /* the first error of the run */
  bool grouped;                 /* every root opened */
  bool usable;                  /* the file is this plan's */
  bool all_trusted;             /* and every group's record may be replayed */
  bool quick;                   /* nothing changed: nothing walked */
  bool walked;                  /* the walks (if any) ran */
  guint n_groups;
  struct plan_group_view *gv;
  struct sources *src;          /* per group */
  struct timespec racy_from;    /* the sources' stamps at or after it are racy */
  struct wm_at *clocks;         /* per group: watchman's clock before the walk (watch NULL: none) */
  GHashTable **touched;         /* per group: the directories watchman cannot vouch for as
                                   unchanged since the cache's clock (NULL: it cannot say) */
  bool *stated;                 /* per group: TOUCHED is walk_changed()'s, every other
                                   directory recorded was just stat'ed and found as recorded */
  guint64 wm_names;             /* the paths watchman named, every group */
  bool partial;                 /* the walks were given part of their records (run_partial()) */
  bool split_bad;               /* and the rest of a record did not parse (memo_changes()) */
};

/* Is there a cache file at R->path, and is it this plan's (same trawl
 * version, same queries)? R->cache, and why not (to free), or NULL. (A plan
 * made from the file has it loaded already, for its first run.) */
static char *
run_load(struct cached_run *r)
{
  struct cache_state *st = r->st;
  char *why = NULL;
  if (st->file && st->path && strcmp(st->path, r->path) == 0) {
    r->cache = st->file;
    st->file = NULL;
    g_clear_pointer(&st->path, g_free);
  } else {
    cache_file_free(st->file);
    st->file = NULL;
    r->cache = cache_load(r->path, &why);
  }
  r->queries = g_byte_array_new();
  w_queries(r->queries, r->plan, st);
  if (r->cache && strcmp(r->cache->version, TRAWL_VERSION_STRING) != 0)
    why = g_strdup_printf("was written by trawl %s", r->cache->version);
  else if (r->cache && (r->cache->queries_len != r->queries->len ||
                        memcmp(r->cache->queries, r->queries->data, r->queries->len) != 0))
    why = g_strdup("was written for other queries");
  return why;
}

/* Group the plan's queries, each group's root opened, and compare the
 * roots with the file's walks: R->usable, and the report's word on it
 * (WHY, taken). */
static void
run_group(struct cached_run *r, char *why)
{
  struct cache_state *st = r->st;
  r->grouped = plan_group(r->plan, &r->first);
  st->run = plan_runs(r->plan);
  r->n_groups = (guint)trawl_plan_groups(r->plan);
  st->groups = g_new0(struct cgroup, r->n_groups);
  st->n_groups = r->n_groups;
  r->gv = g_new0(struct plan_group_view, MAX(r->n_groups, 1u));
  for (guint g = 0; g < r->n_groups; g++)
    plan_group_view(r->plan, g, &r->gv[g]);
  /* A root that could not be opened (gone, or no descriptor left) is in
   * no group (R->grouped false): the run's error, said by it, not "other
   * roots". */
  if (r->cache && why == NULL && r->grouped) {
    bool same = r->cache->walks->len == r->n_groups;
    for (guint g = 0; same && g < r->n_groups; g++)
      same = walk_matches(&r->gv[g], r->cache->walks->pdata[g]);
    if (!same)
      why = g_strdup("was written for other roots");
  }
  r->usable = r->cache && why == NULL && r->grouped;
  r->report->trusted = st->trusted = r->usable;
  report_error(&r->report->warning, TRAWL_CACHE_ERROR_UNTRUSTED, why);
}

/* Add PATH (LEN bytes, relative to a root) and the directory holding it to
 * TOUCHED: watchman named it, so its own stamp and its directory's may
 * differ. */
static void
touch_name(GHashTable *touched, const char *path)
{
  g_hash_table_add(touched, g_strdup(path));
  const char *slash = strrchr(path, '/');
  g_hash_table_add(touched, g_strndup(path, slash ? (gsize)(slash - path) : 0));
}

/* Ask watchman (TRAWL_WATCHMAN: docs/cache.md, "Watchman") for each
 * group's clock now, and, for a walk the cache recorded with a clock, what
 * changed since: R->clocks, R->touched, and the report's word on it (each
 * reason for the stat path, once). */
static void
run_watchman(struct cached_run *r)
{
  r->clocks = g_new0(struct wm_at, MAX(r->n_groups, 1u));
  r->touched = g_new0(GHashTable *, MAX(r->n_groups, 1u));
  r->stated = g_new0(bool, MAX(r->n_groups, 1u));
  enum wm_mode mode;
  if (!wm_mode_from_env(&mode) || mode == WM_OFF || r->n_groups == 0)
    return;
  /* Walks that all follow links can use no answer and need no clock: no
   * connection either (about 1 ms: the Bazel wrapper's every command). */
  bool any_may = false;
  for (guint g = 0; g < r->n_groups && !any_may; g++) {
    struct plan_query_view q0;
    plan_query_view(r->plan, g_array_index(r->gv[g].members, size_t, 0), &q0);
    any_may = !q0.opt->follow;
  }
  char *why = NULL;
  struct wm *wm = r->grouped && any_may ? wm_connect(mode, &why) : NULL;
  if (!r->grouped)
    why = g_strdup("a root could not be opened");
  else if (!any_may)
    why = g_strdup("links are followed (they may lead out of the watch)");
  guint used = 0;
  for (guint g = 0; wm && g < r->n_groups; g++) {
    char *gwhy = NULL;
    struct plan_query_view q0;
    plan_query_view(r->plan, g_array_index(r->gv[g].members, size_t, 0), &q0);
    /* The root as opened: its real path, where watchman's names are. */
    char *proc = g_strdup_printf("/proc/self/fd/%d", r->gv[g].root_fd);
    char *real = g_file_read_link(proc, NULL);
    g_free(proc);
    const struct cached_walk *was =
        r->usable ? (const struct cached_walk *)r->cache->walks->pdata[g] : NULL;
    char *at = was && was->clock.watch
                   ? g_build_filename(was->clock.watch, was->clock.rel, NULL)
                   : NULL;
    if (q0.opt->follow) {
      gwhy = g_strdup("links are followed (they may lead out of the watch)");
    } else if (real == NULL || real[0] != '/') {
      gwhy = g_strdup("the root's real path is unknown");
    } else if (was == NULL || at == NULL || strcmp(at, real) != 0) {
      gwhy = g_strdup(was == NULL ? "no cache to compare with"
                      : at == NULL ? "the cache has no clock (written without watchman)"
                                   : "the root is not where the cache's clock was taken");
    } else {
      /* One question: what changed since the cache's clock, and the clock
       * now (as of the question: after it, nothing is read). */
      GPtrArray *names = NULL;
      if (wm_since(wm, &was->clock, &names, &r->clocks[g], &gwhy)) {
        r->touched[g] = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        for (guint i = 0; i < names->len; i++)
          touch_name(r->touched[g], names->pdata[i]);
        r->wm_names += names->len;
        g_ptr_array_unref(names);
        used++;
      }
    }
    g_free(at);
    /* No answer to trust: a clock still, for the cache to record (a walk
     * that follows links records none: it will never use one). */
    char *cwhy = NULL;
    if (r->touched[g] == NULL && !q0.opt->follow && real && real[0] == '/' &&
        !wm_clock_of(wm, real, &r->clocks[g], &cwhy) && gwhy == NULL)
      gwhy = cwhy, cwhy = NULL;
    g_free(cwhy);
    g_free(real);
    if (gwhy && why == NULL)
      why = gwhy;
    else
      g_free(gwhy);
  }
  wm_close(wm);
  if (used == r->n_groups) {
    r->report->watchman = TRAWL_CACHE_WATCHMAN_USED;
    r->report->watchman_changes = r->wm_names;
    g_free(why);
  } else {
    r->report->watchman = TRAWL_CACHE_WATCHMAN_NOT_USED;
    report_error(&r->report->watchman_error, TRAWL_CACHE_ERROR_WATCHMAN,
                 why ? why : g_strdup("?"));
  }
}

/* Each walk's sources, stamped before it reads them (a change after that
 * shows next time), and whether the record it may trust holds
 * (R->all_trusted). */
static void
run_trust(struct cached_run *r)
{
  struct cache_state *st = r->st;
  /* Watchman's clock first: a change after it is named next time, and
   * everything below is read after it. */
  run_watchman(r);
  racy_from_now(&r->racy_from);
  r->src = g_new0(struct sources, MAX(r->n_groups, 1u));
  r->all_trusted = r->usable;
  for (guint g = 0; g < r->n_groups; g++) {
    struct plan_query_view q0;
    plan_query_view(r->plan, g_array_index(r->gv[g].members, size_t, 0), &q0);
    sources_init(&r->src[g], r->gv[g].root, q0.opt,
                 r->usable ? r->cache->walks->pdata[g] : NULL);
    if (r->usable) {
      struct cgroup *cg = &st->groups[g];
      cg->cached = r->cache->walks->pdata[g];
      cg->trusted = r->src[g].held || sources_unchanged(cg->cached, &r->src[g]);
      /* The index changed (git writes it often, mostly changing no answer):
       * the walk's questions are asked again, and only the directories
       * where an answer differs are read again. It is read from now, while
       * run_quick() stats the directories; the questions are asked there. */
      /* A walk that had problems is told them again by a run that answers
       * from it: a directory it could not read is read again (run_quick()),
       * and an index it could not read is asked again, whatever its stamp
       * (a replay answers the questions from the records and never reads
       * it; a fresh walk would tell it again). A walk of no index asks
       * nothing. (Both at once start one reader: until 2026-12-04 the
       * second replaced the first, which leaked.) */
      if (cg->trusted && (r->src[g].index_moved || cg->cached->problems)) {
        cg->index = index_recheck_start(r->gv[g].root, &r->src[g]);
        if (cg->index == NULL && r->src[g].index_moved)
          cg->trusted = false;
      }
      r->all_trusted = r->all_trusted && cg->trusted;
    }
  }
  if (r->usable)
    st->file = r->cache, r->cache = NULL;
}

/* When every directory recorded is stamped as recorded, nothing is walked
 * or replayed at all: the answer is the cache's (trawl check, and a cached
 * run of an unchanged tree, whose results come from the records in the
 * walk's order, rec_pass()). A walk that could not read a directory is
 * walked again (replayed where it can be): that directory has no stamp to
 * prove it still cannot be read, and its problem is told again. The
 * groups' roots are closed after. */
static bool
run_quick(struct cached_run *r)
{
  struct cache_state *st = r->st;
  bool quick = r->all_trusted && r->grouped;
  for (guint g = 0; quick && g < r->n_groups; g++)
    quick = !st->groups[g].cached->problems &&
            (r->touched[g] ? walk_unchanged_but(st->groups[g].cached, r->gv[g].root_fd,
                                                r->touched[g], &r->report->dirs_stated)
                           : walk_unchanged(st->groups[g].cached, r->gv[g].root_fd));
  /* A check asked for its changes alone, without watchman's answer, on a
   * tree that changed: the directories that did, each stat'ed (one pass,
   * as the replay would make), stand for the answer (run_partial()): the
   * others were just found as recorded. */
  for (guint g = 0; !quick && (r->flags & TRAWL_CACHE_CHANGES_ONLY) && r->all_trusted &&
                    r->grouped && !plan_each_set(r->plan) && g < r->n_groups; g++) {
    if (r->touched[g] || st->groups[g].cached->problems)
      continue;
    GHashTable *changed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    if (walk_changed(st->groups[g].cached, r->gv[g].root_fd, changed)) {
      r->touched[g] = changed;
      r->stated[g] = true;
    } else {
      g_hash_table_unref(changed);
    }
  }
  /* The index read again meanwhile: its questions asked. An answer that
   * changed, or an index that cannot be read, and nothing is quick. */
  for (guint g = 0; g < r->n_groups; g++) {
    struct cgroup *cg = &st->groups[g];
    if (cg->index == NULL)
      continue;
    if (!index_recheck_finish(cg->index, cg->cached, &cg->asked))
      cg->trusted = r->all_trusted = false;
    cg->index = NULL;
    quick = quick && cg->trusted && g_hash_table_size(cg->asked) == 0;
  }
  quick = quick && r->all_trusted;
  plan_close_roots(r->plan);
  /* A run whose results are wanted now takes them from the records: they
   * must check out first (else it walks, as when they do not for a replay). */
  if (quick && (!(r->flags & TRAWL_CACHE_WRITE_ON_CHANGE) || plan_each_set(r->plan))) {
    if (!st->file->records_checked)
      records_read(st->file);
    quick = st->file->records_ok;
  }
  return quick;
}

/* Add PATH (LEN bytes) and every directory on the way to it to HOT. */
static void
hot_add(const char *path, size_t len, void *data)
{
  GHashTable *hot = data;
  for (;;) {
    if (!g_hash_table_add(hot, g_strndup(path, len)))
      return; /* and the way to it, with it */
    if (len == 0)
      return;
    const char *slash = memrchr(path, '/', len);
    len = slash ? (size_t)(slash - path) : 0;
  }
}

/* memo_partial.recorded: the group's record looked up through its marks,
 * one lookup at a time. */
static bool
partial_recorded(const struct memo_partial *p, const char *path, size_t len, uint64_t live,
                 struct dir_stamp *was)
{
  struct cgroup *cg = (struct cgroup *)((char *)p - offsetof(struct cgroup, partial));
  g_mutex_lock(&cg->lock);
  struct dir_entry e;
  guint32 i;
  /* (Not one holding a nested repository: its sources are in the
   * cursor's block, which the next lookup may replace; one such is stat'ed
   * every time anyway, so it is hot, never here.) */
  const bool found = dir_cursor_find(&cg->cursor, path, len, &i, &e) && e.live == live &&
                     !(e.flags & (DIR_WAY | DIR_START)) && e.was.repo == NULL;
  if (found)
    *was = e.was;
  g_mutex_unlock(&cg->lock);
  return found;
}

/* May the walks be given only part of their records (memo.h, struct
 * memo_partial; TRAWL_CACHE_CHANGES_ONLY)? When each walk has an answer to
 * what may have changed (watchman's, or the check's own stats: run_quick()),
 * every record is trusted, none had problems (a directory that could not
 * be read is read again, to tell it), and the index, if it moved, answers
 * every question as before. The directories that may have changed are
 * then those named (and those holding what watchman named), those
 * watchman never vouches for, and every one on the way to them:
 * the rest of each record stays as it is, and is not even read. Each
 * group's memo_prev then holds those of them it has (CG->partial). False
 * (nothing done) otherwise, or when a record does not parse. */
static bool
run_partial(struct cached_run *r)
{
  struct cache_state *st = r->st;
  if (!(r->flags & TRAWL_CACHE_CHANGES_ONLY) || plan_each_set(r->plan) || !r->usable ||
      !r->all_trusted)
    return false;
  for (guint g = 0; g < r->n_groups; g++) {
    const struct cgroup *cg = &st->groups[g];
    if (r->touched[g] == NULL || cg->cached->problems ||
        (cg->asked && g_hash_table_size(cg->asked) > 0))
      return false;
  }
  for (guint g = 0; g < r->n_groups; g++) {
    struct cgroup *cg = &st->groups[g];
    GHashTable *hot = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, r->touched[g]);
    while (g_hash_table_iter_next(&it, &key, NULL))
      hot_add(key, strlen(key), hot);
    if (!cached_walk_must(cg->cached, hot_add, hot) ||
        (cg->memo_prev = cached_memo_part(cg->cached, hot)) == NULL) {
      g_hash_table_unref(hot);
      for (guint k = 0; k < g; k++) {
        struct cgroup *done = &st->groups[k];
        walk_memo_free(done->memo_prev);
        done->memo_prev = NULL;
        g_clear_pointer(&done->partial.hot, g_hash_table_unref);
        dir_cursor_clear(&done->cursor);
        g_mutex_clear(&done->lock);
      }
      return false;
    }
    cg->partial.hot = hot;
    cg->partial.stated = r->stated[g];
    cg->partial.recorded = partial_recorded;
    g_mutex_init(&cg->lock);
    dir_cursor_init(&cg->cursor, cg->cached);
    cg->memo_prev->partial = &cg->partial;
  }
  return true;
}

/* Walk the plan, each group with the record it may trust as its memo
 * (records that do not check out: none is trusted), each recording anew. */
static void
run_walk_memos(struct cached_run *r)
{
  struct cache_state *st = r->st;
  TrawlCacheReport *report = r->report;
  bool records = true;
  r->partial = run_partial(r);
  for (guint g = 0; r->usable && g < r->n_groups; g++) {
    struct cgroup *cg = &st->groups[g];
    if (!r->partial)
      cg->memo_prev = cached_memo(cg->cached);
    records = records && cg->memo_prev != NULL;
    if (cg->memo_prev && cg->asked)
      read_again(cg->memo_prev, cg->asked);
    if (cg->memo_prev && r->touched[g])
      vouch(cg->memo_prev, r->touched[g]);
    if (!cg->trusted || cg->memo_prev == NULL)
      r->all_trusted = false;
  }
  if (r->usable && !records) {
    /* The index held, the directory entries or the records do not: nothing
     * of it is trusted. */
    const struct cache_file *f = st->file;
    report_error(&report->warning, TRAWL_CACHE_ERROR_UNTRUSTED,
                 g_strdup(f->records_checked && !f->records_ok
                              ? "is corrupt (its records' checksum does not match)"
                          : f->dirs_checked && !f->dirs_sums_ok
                              ? "is corrupt (a block of its directory entries does not match "
                                "its checksum)"
                              : "is corrupt (its directory entries and records do not agree)"));
    report->trusted = st->trusted = r->usable = false;
    for (guint g = 0; g < r->n_groups; g++) {
      struct cgroup *cg = &st->groups[g];
      walk_memo_free(cg->memo_prev);
      cg->memo_prev = NULL;
      cg->cached = NULL;
      cg->trusted = false;
    }
  }
  for (guint g = 0; g < r->n_groups; g++) {
    struct cgroup *cg = &st->groups[g];
    cg->memo = walk_memo_new();
    plan_group_set_memos(r->plan, g, cg->trusted ? cg->memo_prev : NULL, cg->memo);
  }
  r->walked = plan_walk(r->plan, r->first ? NULL : &r->first);
  if (cache_test_after_walk)
    cache_test_after_walk(cache_test_after_walk_data);
  for (guint g = 0; g < r->n_groups; g++) {
    TrawlWalkStats ws;
    trawl_plan_stats(r->plan, g, &ws);
    report->dirs_read += ws.dirs_opened;
    report->dirs_reused += ws.dirs_reused;
  }
}

static int
compare_changes(gconstpointer a, gconstpointer b)
{
  const struct change *x = a, *y = b;
  return x->q != y->q ? (x->q < y->q ? -1 : 1) : strcmp(x->path, y->path);
}

/* The result records of D (none for a directory on the way, whose records
 * no pass over the results reads), by name, into OUT (struct memo_rec *). */
static void
results_of(const struct memo_dir *d, GPtrArray *out)
{
  g_ptr_array_set_size(out, 0);
  for (guint i = 0; d && !d->way && i < d->n; i++)
    if (d->recs[i].kind == MEMO_RESULT)
      g_ptr_array_add(out, (gpointer)&d->recs[i]);
}

static int
compare_rec_names(const struct memo_rec *a, const struct memo_rec *b)
{
  const int c = memcmp(a->name, b->name, MIN(a->len, b->len));
  return c ? c : (a->len > b->len) - (a->len < b->len);
}

static gint
compare_rec_ptrs(gconstpointer a, gconstpointer b)
{
  return compare_rec_names(*(const struct memo_rec *const *)a,
                           *(const struct memo_rec *const *)b);
}

/* ST->changes gets a change for each query in BITS (the walk's members by
 * bit, MEMBERS) at record REC of directory D; PATH is room to make it. */
static void
change_add(struct cache_state *st, GString *path, const GArray *members, uint64_t bits,
           const struct memo_dir *d, const struct memo_rec *rec, bool added)
{
  for (; bits; bits &= bits - 1) {
    const unsigned b = (unsigned)__builtin_ctzll(bits);
    if (b >= members->len)
      continue;
    g_string_truncate(path, 0);
    g_string_append_len(path, d->path, (gssize)d->len);
    if (d->len)
      g_string_append_c(path, '/');
    g_string_append_len(path, rec->name, (gssize)rec->len);
    struct change c = {g_array_index(members, size_t, b),
                       arena_copy(&st->prev_arena, path->str, path->len), added};
    g_array_append_val(st->changes, c);
  }
}

/* The results that differ between directory NOW of this run and WAS of
 * the cache (either NULL: not there), by name. */
static void
dir_changes(struct cache_state *st, GString *path, const GArray *members,
            const struct memo_dir *now, const struct memo_dir *was, GPtrArray *a, GPtrArray *b)
{
  results_of(now, a);
  results_of(was, b);
  g_ptr_array_sort(a, compare_rec_ptrs);
  g_ptr_array_sort(b, compare_rec_ptrs);
  guint i = 0, j = 0;
  while (i < a->len || j < b->len) {
    const struct memo_rec *x = i < a->len ? a->pdata[i] : NULL;
    const struct memo_rec *y = j < b->len ? b->pdata[j] : NULL;
    const int c = x == NULL ? 1 : y == NULL ? -1 : compare_rec_names(x, y);
    if (c <= 0)
      change_add(st, path, members, c < 0 ? x->mask : x->mask & ~y->mask, now, x, true);
    if (c >= 0)
      change_add(st, path, members, c > 0 ? y->mask : y->mask & ~x->mask, was, y, false);
    i += c <= 0;
    j += c >= 0;
  }
}

/* What a split hands each directory of the record not in the partial
 * memo (cached_walk_split()). */
struct split_ctx {
  struct cache_state *st;
  GString *path;
  const GArray *members;
  GPtrArray *a, *b;
  GHashTable *compared;  /* the walk's entries compared so */
};

static void
split_dir(const struct memo_dir *now, const struct memo_dir *was, void *data)
{
  struct split_ctx *x = data;
  dir_changes(x->st, x->path, x->members, now, was, x->a, x->b);
  if (now)
    g_hash_table_add(x->compared, (gpointer)now);
}

/* R's changes (ST->changes) from the memos, every group having both this
 * run's and the cache's: a directory replayed is the very record the cache
 * held, and has none; one read again, new or gone is compared result by
 * result. What this spares is the cache's every result spelt out and
 * compared (issue 25: a third of a check that finds one file added). The
 * walk's record holds every directory it read or replayed, the cache's
 * every one it held (a directory on the way holds no result). A walk given
 * part of its record (run_partial()) left the rest unentered: one pass over
 * the record's entries finds what it keeps of them (CG->split, for the
 * writer) and those gone, which are compared too (R->split_bad when it
 * does not parse). False (nothing made) when some group lacks either. */
static bool
memo_changes(struct cached_run *r)
{
  struct cache_state *st = r->st;
  for (guint g = 0; g < r->n_groups; g++)
    if (st->groups[g].memo == NULL || st->groups[g].memo_prev == NULL)
      return false;
  st->changes = g_array_new(FALSE, FALSE, sizeof(struct change));
  GString *path = g_string_new(NULL);
  GPtrArray *a = g_ptr_array_new(), *b = g_ptr_array_new();
  for (guint g = 0; g < r->n_groups; g++) {
    const struct walk_memo *now = st->groups[g].memo, *was = st->groups[g].memo_prev;
    const GArray *members = r->gv[g].members;
    GHashTableIter it;
    gpointer key, value;
    /* A partial memo: the rest of the record's entries, one pass. */
    struct split_ctx x = {st, path, members, a, b, NULL};
    if (was->partial) {
      struct cgroup *cg = &st->groups[g];
      x.compared = g_hash_table_new(NULL, NULL);
      if (cached_walk_split(cg->cached, now, was, &cg->split, split_dir, &x))
        r->report->dirs_reused += cg->split.entries;
      else
        r->split_bad = true;
    }
    g_hash_table_iter_init(&it, now->dirs);
    while (g_hash_table_iter_next(&it, &key, &value)) {
      const struct memo_dir *d = value;
      const struct memo_dir *o = walk_memo_lookup(was, d->root, d->path, d->len);
      if (o != d && !(x.compared && g_hash_table_contains(x.compared, d)))
        dir_changes(st, path, members, d, o, a, b);
    }
    g_hash_table_iter_init(&it, was->dirs);
    while (g_hash_table_iter_next(&it, &key, &value)) {
      const struct memo_dir *o = value;
      if (walk_memo_lookup(now, o->root, o->path, o->len) == NULL)
        dir_changes(st, path, members, NULL, o, a, b);
    }
    if (x.compared)
      g_hash_table_unref(x.compared);
  }
  g_ptr_array_unref(a);
  g_ptr_array_unref(b);
  g_string_free(path, TRUE);
  g_array_sort(st->changes, compare_changes);
  return true;
}

/* Do the results differ from the cache's? (report->changed) */
static void
run_compare(struct cached_run *r)
{
  struct cache_state *st = r->st;
  TrawlCacheReport *report = r->report;
  /* Nothing read, and every record the cache held replayed (no start
   * directory newly ignored, say): the results are the records'. */
  bool replayed_all = !r->partial && !r->quick && r->all_trusted && report->dirs_read == 0 &&
                      r->walked;
  for (guint g = 0; replayed_all && g < r->n_groups; g++)
    replayed_all = st->groups[g].memo_prev &&
                   same_records(st->groups[g].memo, st->groups[g].memo_prev);
  report->changed = !r->usable;
  if (r->partial) {
    /* What the walks left unentered is as recorded: only the changes from
     * the memos can be told. A record whose rest does not parse: told as
     * a change, and not written (the next run walks). */
    memo_changes(r);
    report->changed = st->changes->len > 0 || r->split_bad;
    if (r->split_bad) {
      g_array_set_size(st->changes, 0);
      report_error(&report->warning, TRAWL_CACHE_ERROR_UNTRUSTED,
                   g_strdup("is corrupt (its directory entries and records do not agree)"));
    }
  } else if (r->usable && !r->quick && !replayed_all && plan_each_set(r->plan)) {
    /* The results were handed over, not kept: they may differ. */
    report->changed = true;
  } else if (r->usable && !r->quick && !replayed_all && memo_changes(r)) {
    report->changed = st->changes->len > 0;
  } else if (r->usable && !r->quick && !replayed_all) {
    for (size_t i = 0; i < trawl_plan_size(r->plan) && !report->changed; i++) {
      const GPtrArray *is = trawl_plan_results(r->plan, i);
      const GPtrArray *was = trawl_cache_previous_results(r->plan, i);
      report->changed = is->len != (was ? was->len : 0);
      for (guint k = 0; k < is->len && !report->changed; k++)
        report->changed = strcmp(is->pdata[k], was->pdata[k]) != 0;
    }
  }
}

/* A check that found every directory as recorded rewrites the cache only
 * for a newer watchman clock, once the answer since the recorded one names
 * at least this many paths and as many as the directories recorded (a
 * build directory in the root, say, changes at every build and is
 * recorded by no walk): the answer grows with every change since the
 * clock, and hashing its names then costs about what the rewrite does, once
 * (docs/cache.md, "Watchman"). */
#define CLOCK_REFRESH_NAMES 256

/* Rewrite the cache as it is with the clocks of watchman's answers, when
 * R found every directory as recorded and the answers grew long. */
static void
run_refresh_clocks(struct cached_run *r)
{
  struct cache_state *st = r->st;
  guint64 dirs = 0;
  bool clocked = r->quick && st->file != NULL;
  for (guint g = 0; clocked && g < r->n_groups; g++) {
    clocked = r->report->watchman == TRAWL_CACHE_WATCHMAN_USED && r->touched[g] &&
              r->clocks[g].clock;
    dirs += st->groups[g].cached->n_dirs;
  }
  if (!clocked || r->wm_names < MAX((guint64)CLOCK_REFRESH_NAMES, dirs))
    return;
  char *why = NULL;
  r->report->written = cache_store_clocks(r->path, st->file, r->clocks, &why);
  report_error(&r->report->write_error, TRAWL_CACHE_ERROR_WRITE, why);
}

/* Write the new record to R->path when it is worth a write. */
static void
run_write(struct cached_run *r)
{
  struct cache_state *st = r->st;
  TrawlCacheReport *report = r->report;
  run_refresh_clocks(r);
  /* A re-check rewrites an unchanged answer only when that spares the next
   * one reading: some directory it read again (a racy one, since settled)
   * can now be trusted, or a directory on the way to a start (stamped,
   * never read) that was racy and is no longer. One that is read every
   * time (links followed, still racy) is not worth a write per build. */
  uint64_t racy_now = 0, racy_was = 0;
  for (guint g = 0; !r->quick && g < r->n_groups; g++) {
    racy_now += st->groups[g].memo ? st->groups[g].memo->racy : 0;
    racy_was += st->groups[g].memo_prev ? st->groups[g].memo_prev->racy : 0;
  }
  /* Not an index that changed and gave the same answers: writing the cache
   * again would cost more than asking it again next time (one read of the
   * index; docs/cache.md). */
  const bool write = report->changed || racy_was > racy_now ||
                     report->dirs_read > ((r->flags & TRAWL_CACHE_WRITE_ON_CHANGE) ? racy_now : 0);
  /* A run that could not answer every query records nothing; nor one
   * whose record's rest, which it would keep, does not parse. */
  if (!write || !r->grouped || !r->walked || r->quick || r->split_bad)
    return;
  /* (About the last file's size: a walk given part of its record copies
   * most of it.) */
  const struct cache_file *was = r->partial ? st->file : NULL;
  GByteArray *body = g_byte_array_new();
  GByteArray *dirs = g_byte_array_sized_new(was ? (guint)was->dirs_len + 4096 : 0);
  /* (A walk given part of its record copies most of its records from the
   * last file, unread: those it makes are few.) */
  struct recs_out recs;
  recs_out_init(&recs, was ? 4096 : 0);
  /* Over a base when most of the last file stays as it is: only what
   * changed is written (format.h: base). */
  int overlay = OVER_NONE;
  if (was) {
    const struct split **splits = g_new(const struct split *, r->n_groups);
    for (guint g = 0; g < r->n_groups; g++)
      splits[g] = &st->groups[g].split;
    overlay = cache_overlay_choice(was, r->path, splits, r->n_groups);
    g_free(splits);
  }
  if (overlay != OVER_NONE)
    recs_out_over(&recs, was, overlay);
  /* The blocks kept whole that are copied, read now (the split read only
   * what it had to). */
  for (guint g = 0; r->partial && g < r->n_groups; g++) {
    char *why = NULL;
    if (!split_fill(&st->groups[g].split, overlay, &why)) {
      report_error(&report->write_error, TRAWL_CACHE_ERROR_WRITE, why);
      g_byte_array_unref(body);
      g_byte_array_unref(dirs);
      recs_out_clear(&recs);
      return;
    }
  }
  cache_index_begin(body, TRAWL_VERSION_STRING, r->queries, was, overlay, r->n_groups);
  for (guint g = 0; g < r->n_groups; g++) {
    const struct plan_group_view *gv = &r->gv[g];
    const struct cgroup *cg = &st->groups[g];
    struct walk_record w = {gv->root, (uint64_t)gv->dev, (uint64_t)gv->ino, false,
                            gv->members, cg->memo, &r->clocks[g],
                            r->partial ? &cg->split : NULL, overlay};
    w.problems = trawl_plan_problems(r->plan, g_array_index(gv->members, size_t, 0))->len > 0;
    const struct source_list sl = source_list_of(&r->src[g]);
    cache_write_walk(body, dirs, &recs, &w, &sl, &r->racy_from);
  }
  if ((r->flags & TRAWL_CACHE_HOLD_CHANGED) && report->changed) {
    st->held = body;
    st->held_dirs = dirs;
    st->held_recs = recs;
    st->held_path = g_strdup(r->path);
    return;
  }
  char *why = NULL;
  report->written = cache_store(r->path, body, dirs, &recs, &why);
  report_error(&report->write_error, TRAWL_CACHE_ERROR_WRITE, why);
  g_byte_array_unref(body);
  g_byte_array_unref(dirs);
  recs_out_clear(&recs);
}

bool
trawl_cache_run(TrawlPlan *plan, const char *path, unsigned flags,
                TrawlCacheReport *report, GError **error)
{
  memset(report, 0, sizeof *report);
  struct cache_state *st = state_of(plan);
  held_clear(st);
  previous_clear(st);
  groups_clear(st);
  st->trusted = st->quick = st->partial = false;
  struct cached_run r = {.plan = plan, .st = st, .path = path, .flags = flags,
                         .report = report, .walked = true};
  run_group(&r, run_load(&r));
  run_trust(&r);
  r.quick = run_quick(&r);
  if (r.quick) {
    st->quick = true;
    plan_set_results(plan, quick_results);
    for (guint g = 0; g < r.n_groups; g++)
      report->dirs_reused += st->groups[g].cached->n_dirs;
  } else {
    run_walk_memos(&r);
  }
  st->partial = r.partial;
  run_compare(&r);
  run_write(&r);
  /* A walk given part of its record read what it needs of the file (its
   * records were not read whole, so the file is still open): closed, so
   * that a plan held for its write (TRAWL_CACHE_HOLD_CHANGED) holds no
   * descriptor, as before format 13 (a later read opens it again). */
  if (r.partial)
    cache_file_close(st->file);
  if (flags & TRAWL_CACHE_CHANGES_ONLY) {
    /* The changes kept (from the lists when not from the memos: none when
     * nothing changed), the results not. */
    if (st->changes == NULL) {
      st->changes = g_array_new(FALSE, FALSE, sizeof(struct change));
      if (!r.quick && report->changed)
        list_changes(plan, keep_change, st);
    }
    if (st->none == NULL)
      st->none = g_ptr_array_new();
    plan_set_results(plan, no_results);
  }
  for (guint g = 0; g < r.n_groups; g++) {
    sources_clear(&r.src[g]);
    wm_at_clear(&r.clocks[g]);
    if (r.touched[g])
      g_hash_table_unref(r.touched[g]);
  }
  g_free(r.src);
  g_free(r.clocks);
  g_free(r.touched);
  g_free(r.stated);
  g_free(r.gv);
  cache_file_free(r.cache);
  g_byte_array_unref(r.queries);
  if (r.first)
    g_propagate_error(error, r.first);
  return r.grouped && r.walked;
}

bool
trawl_cache_store(TrawlPlan *plan, TrawlCacheReport *report)
{
  struct cache_state *st = plan_cache(plan);
  if (st == NULL || st->held == NULL)
    return true;
  char *why = NULL;
  report->written = cache_store(st->held_path, st->held, st->held_dirs, &st->held_recs, &why);
  report_error(&report->write_error, TRAWL_CACHE_ERROR_WRITE, why);
  held_clear(st);
  return report->written;
}

bool
trawl_cache_run_each(TrawlPlan *plan, const char *path, unsigned flags,
                     TrawlPlanResultFunc fn, void *data, TrawlCacheReport *report,
                     GError **error)
{
  g_return_val_if_fail(fn != NULL, false);
  plan_set_each(plan, fn, data);
  bool ok = trawl_cache_run(plan, path, flags, report, error);
  plan_set_each(plan, NULL, NULL);
  const struct cache_state *st = last_run(plan);
  for (guint g = 0; ok && st && st->quick && g < st->n_groups; g++) {
    struct plan_group_view gv;
    plan_group_view(plan, g, &gv);
    if (!rec_pass(st->groups[g].cached, gv.members, fn, data)) {
      /* The records' checksum held: a writer's bug. */
      g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: its records do not parse", path);
      ok = false;
    }
  }
  return ok;
}

bool
trawl_cache_watchman_setting(GError **error)
{
  enum wm_mode mode;
  if (wm_mode_from_env(&mode))
    return true;
  g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
              "TRAWL_WATCHMAN='%s': not auto, on or off", g_getenv("TRAWL_WATCHMAN"));
  return false;
}

/* ---- a plan from a cache file ---- */

struct reading {
  TrawlPlan *plan;
  bool add;             /* add each query; else give each of PLAN's its patterns */
  bool compile;         /* compile the patterns (else only the queries are added) */
  GError *error;
};

/* Compile LIST's N patterns for PLAN (it owns them) into OUT; false with
 * R->error set if one does not compile. */
static bool
compile_list(struct reading *r, const struct cached_pattern *list, size_t n, GPtrArray *out)
{
  for (size_t j = 0; j < n; j++) {
    GError *perr = NULL;
    TrawlPattern *p = trawl_pattern_compile(list[j].text, list[j].len,
                                            (TrawlDialect)list[j].dialect, list[j].flags, &perr);
    if (p == NULL) {
      g_set_error(&r->error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                  "a cache holds a pattern that does not compile: %s", perr->message);
      g_error_free(perr);
      return false;
    }
    plan_own_pattern(r->plan, p);
    g_ptr_array_add(out, p);
  }
  return true;
}

static bool
read_query(size_t i, const struct cached_query *q, void *data)
{
  struct reading *r = data;
  if (!r->add && i >= trawl_plan_size(r->plan)) {
    g_set_error(&r->error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "a cache's queries do not parse");
    return false;
  }
  GPtrArray *inc = g_ptr_array_new(), *exc = g_ptr_array_new();
  bool ok = !r->compile || (compile_list(r, q->includes, q->n_includes, inc) &&
                            compile_list(r, q->excludes, q->n_excludes, exc));
  if (ok && r->add) {
    char *root = g_strndup(q->root, q->root_len);
    TrawlQuery tq = {.root = root,
                     .includes = (const TrawlPattern *const *)inc->pdata, .n_includes = inc->len,
                     .excludes = (const TrawlPattern *const *)exc->pdata, .n_excludes = exc->len,
                     .options = &q->opt};
    trawl_plan_add(r->plan, &tq);
    g_free(root);
  } else if (ok) {
    plan_query_add_patterns(r->plan, i, (const TrawlPattern *const *)inc->pdata, inc->len,
                            (const TrawlPattern *const *)exc->pdata, exc->len);
  }
  g_ptr_array_unref(inc);
  g_ptr_array_unref(exc);
  return ok;
}

/* Read the queries BYTES hold into PLAN (reading R's way). False with
 * R->error set if a pattern does not compile or the bytes do not parse. */
static bool
read_queries(const guint8 *bytes, size_t len, struct reading *r)
{
  const bool ok = cache_queries_read(bytes, len, read_query, r);
  if (!ok && r->error == NULL)
    /* The index's checksum held: a writer's bug. */
    g_set_error(&r->error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "a cache's queries do not parse");
  return ok;
}

/* plan_prepare_fn of a plan made from a cache file: its patterns compiled
 * once a walk needs them. */
static bool
plan_patterns(TrawlPlan *plan, GError **error)
{
  struct cache_state *st = plan_cache(plan);
  if (st == NULL)
    return true;
  if (st->pending_error) {
    if (error)
      *error = g_error_copy(st->pending_error);
    return false;
  }
  if (st->pending == NULL)
    return true;
  GByteArray *bytes = st->pending;
  st->pending = NULL;
  struct reading r = {plan, false, true, NULL};
  const bool ok = read_queries(bytes->data, bytes->len, &r);
  g_byte_array_unref(bytes);
  if (!ok) {
    st->pending_error = r.error;
    if (error)
      *error = g_error_copy(r.error);
  }
  return ok;
}

/* A plan from a cache file compiles its patterns only when it walks: a
 * re-check that finds nothing changed needs none, nor a walker
 * (docs/adr/0004-cache-file-read-cost.md). Not when another trawl version wrote the
 * file: its patterns are compiled at once, so one that no longer compiles
 * is told now. */
TrawlPlan *
trawl_cache_load_plan(const char *path, GError **error)
{
  struct cache_file *cache = cache_open(path, error);
  if (cache == NULL)
    return NULL;
  TrawlPlan *plan = trawl_plan_new();
  const bool lazy = strcmp(cache->version, TRAWL_VERSION_STRING) == 0;
  struct reading r = {plan, true, !lazy, NULL};
  if (!read_queries(cache->queries, cache->queries_len, &r)) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: %s", path, r.error->message);
    g_error_free(r.error);
    cache_file_free(cache);
    trawl_plan_free(plan);
    return NULL;
  }
  struct cache_state *st = state_of(plan);
  if (lazy) {
    st->pending = g_byte_array_sized_new((guint)cache->queries_len);
    g_byte_array_append(st->pending, cache->queries, (guint)cache->queries_len);
    plan_set_prepare(plan, plan_patterns);
  }
  /* Kept for trawl_cache_run() on the same file: one load. */
  st->file = cache;
  st->path = g_strdup(path);
  return plan;
}
