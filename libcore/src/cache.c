/* trawl — result caches: a plan run through a cache file, re-validated by
 * stamps (trawl/cache.h, docs/cache.md).
 *
 * A cached run groups the plan's queries, reads the cache file (cachefile.h)
 * and finds whether it is this plan's (same trawl version, same queries, same
 * roots). Each walk's ignore sources outside the walked directories are
 * stamped and compared with the record; then, if every directory recorded
 * is as recorded (one stat each, walk_unchanged), nothing is walked at all
 * and the answer is the records' (the quick path of `trawl check`);
 * otherwise the plan walks with the record as its memo, re-reading only what
 * changed (replay.c), and the new record is written when it differs. The
 * cache's state for a plan lives beside it (plan_attach), so the plan knows
 * nothing of files; a plan made from a cache file compiles its patterns only
 * when it walks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "cache-testing.h"
#include "cachefile.h"
#include "ignore.h"
#include "memo.h"
#include "plan-shared.h"
#include "trawl/cache.h"
#include "trawl/version.h"

/* ---- the cache's state beside a plan ---- */

/* Per group of the run that read the cache. */
struct cgroup {
  const struct cached_walk *cached; /* its walk in the cache file (NULL: none trusted) */
  struct walk_memo *memo_prev;      /* the cache's record, trusted or not: the previous results */
  struct walk_memo *memo;           /* this run's record */
  bool trusted;                     /* memo_prev may be replayed: the sources held */
};

struct cache_state {
  unsigned run;            /* plan_runs() of the run that read a cache file of this plan */
  bool trusted;            /* that run read one */
  bool quick;              /* it found nothing changed without walking: the results are the cache's */
  struct cache_file *file; /* that file, while its walks are needed */
  char *path;              /* a plan made from a cache file: where (its first run loads it no more) */
  struct cgroup *groups;
  guint n_groups;
  GPtrArray *previous;     /* per query, GPtrArray of char *: the cache's results, made on demand */
  struct arena prev_arena; /* their paths */
  GByteArray *pending;     /* a plan made from a cache file: its queries as the file has them,
                            * their patterns not compiled until a walk needs them */
  GError *pending_error;   /* they did not compile */
  GByteArray *held, *held_recs; /* TRAWL_CACHE_HOLD_CHANGED: the index and the records a
                                 * changed run would have written, until
                                 * trawl_plan_store_cache() writes them */
  char *held_path;         /* where */
};

static void
groups_clear(struct cache_state *st)
{
  for (guint g = 0; g < st->n_groups; g++) {
    walk_memo_free(st->groups[g].memo_prev);
    walk_memo_free(st->groups[g].memo);
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
  arena_clear(&st->prev_arena);
}

static void
held_clear(struct cache_state *st)
{
  g_clear_pointer(&st->held, g_byte_array_unref);
  g_clear_pointer(&st->held_recs, g_byte_array_unref);
  g_clear_pointer(&st->held_path, g_free);
}

static void
state_free(gpointer data)
{
  struct cache_state *st = data;
  held_clear(st);
  groups_clear(st);
  previous_clear(st);
  cache_file_free(st->file);
  g_free(st->path);
  if (st->pending)
    g_byte_array_unref(st->pending);
  g_clear_error(&st->pending_error);
  g_free(st);
}

/* PLAN's cache state, made if it has none. */
static struct cache_state *
state_of(trawl_plan *plan)
{
  struct cache_state *st = plan_attached(plan);
  if (st == NULL) {
    st = g_new0(struct cache_state, 1);
    plan_attach(plan, st, state_free);
  }
  return st;
}

/* The state of PLAN's last run, if that run was a cached one. */
static const struct cache_state *
last_run(const trawl_plan *plan)
{
  const struct cache_state *st = plan_attached(plan);
  return st && st->run == plan_runs(plan) && st->trusted ? st : NULL;
}

/* ---- ignore sources outside the walk ---- */

/* A source's stamp now. A directory (a `.git`) counts only as being one:
 * git writes in it all the time. */
static void
source_stamp(const char *path, guint8 kind, struct stamp *out)
{
  struct stat st;
  memset(out, 0, sizeof *out);
  if (kind == IGNORE_SOURCE_ENTRY) {
    out->present = lstat(path, &st) == 0;
    return;
  }
  if (stat(path, &st) != 0)
    return;
  if (kind == IGNORE_SOURCE_EXISTS || S_ISDIR(st.st_mode)) {
    out->present = true;
    out->size = S_ISDIR(st.st_mode) ? 1 : 0;
    return;
  }
  stamp_of(out, &st, true);
}

/* The sources of one walk: paths, kinds and stamps (taken before the walk);
 * ENV, the environment that chose them. */
struct sources {
  GPtrArray *paths;
  GByteArray *kinds;
  GArray *stamps;       /* struct stamp */
  GString *env;
  bool held;            /* they are the cached walk's, every stamp as recorded */
};

static bool sources_recheck(struct sources *s, const struct cached_walk *was, const char *abs,
                            unsigned flags);

/* The sources of the walk of ROOT with options O. WAS, the cached walk (or
 * NULL): when its sources' stamps all hold, they are its sources still. */
static void
sources_init(struct sources *s, const char *root, const trawl_walk_options *o,
             const struct cached_walk *was)
{
  s->stamps = g_array_new(FALSE, FALSE, sizeof(struct stamp));
  s->env = g_string_new(NULL);
  s->held = false;
  G_STATIC_ASSERT((int)TRAWL_IGNORE_VCS == (int)IGNORE_VCS &&
                  (int)TRAWL_IGNORE_DOT == (int)IGNORE_DOT);
  char *abs = realpath(root, NULL);
  if (abs && was && sources_recheck(s, was, abs, o->ignore)) {
    free(abs);
    return;
  }
  s->paths = g_ptr_array_new_with_free_func(g_free);
  s->kinds = g_byte_array_new();
  g_string_truncate(s->env, 0);
  g_array_set_size(s->stamps, 0);
  if (abs)
    ignore_sources(o->ignore, abs, s->paths, s->kinds, s->env);
  free(abs);
  for (guint i = 0; i < s->paths->len; i++) {
    struct stamp st;
    source_stamp(s->paths->pdata[i], s->kinds->data[i], &st);
    g_array_append_val(s->stamps, st);
  }
}

static void
sources_clear(struct sources *s)
{
  g_ptr_array_unref(s->paths);
  g_byte_array_unref(s->kinds);
  g_array_unref(s->stamps);
  g_string_free(s->env, TRUE);
}

/* Were W's sources stamped as SRC's are now (and not racy then)? */
static bool
sources_unchanged(const struct cached_walk *w, const struct sources *src)
{
  bool same = w->env->len == src->env->len && memcmp(w->env->str, src->env->str, w->env->len) == 0 &&
              w->paths->len == src->paths->len;
  for (guint i = 0; same && i < w->paths->len; i++)
    same = w->kinds->data[i] != SOURCE_RACY && strcmp(w->paths->pdata[i], src->paths->pdata[i]) == 0 &&
           stamp_equal(&g_array_index(w->stamps, struct stamp, i),
                       &g_array_index(src->stamps, struct stamp, i));
  return same;
}

/* Do WAS's sources hold for a walk of the root at ABS (absolute, links
 * resolved) with ignore FLAGS: the same environment, the same root, every
 * source stamped as recorded and none racy? Then they are the sources now
 * (S gets them, with the new stamps), without asking ignore_sources()
 * again: the list follows from ABS, FLAGS, the environment and the stamps
 * of what is in it (ignore.h), and finding it again (git's config files,
 * the `.git`s up to the top) costs more than the stats
 * (docs/adr/0004-cache-file-read-cost.md). */
static bool
sources_recheck(struct sources *s, const struct cached_walk *was, const char *abs,
                unsigned flags)
{
  ignore_sources_env(s->env);
  if (s->env->len != was->env->len || memcmp(s->env->str, was->env->str, s->env->len) != 0)
    return false;
  if (flags & (IGNORE_VCS | IGNORE_DOT)) {
    /* The first source is the root's own `.git`: the same root. */
    char *dotgit = g_build_filename(abs, ".git", NULL);
    const bool same = was->paths->len > 0 && strcmp(was->paths->pdata[0], dotgit) == 0;
    g_free(dotgit);
    if (!same)
      return false;
  } else if (was->paths->len > 0) {
    return false;
  }
  for (guint i = 0; i < was->paths->len; i++) {
    struct stamp st;
    if (was->kinds->data[i] == SOURCE_RACY)
      return false;
    source_stamp(was->paths->pdata[i], was->kinds->data[i], &st);
    if (!stamp_equal(&st, &g_array_index(was->stamps, struct stamp, i)))
      return false;
    g_array_append_val(s->stamps, st);
  }
  s->paths = g_ptr_array_ref(was->paths);
  s->kinds = g_byte_array_ref(was->kinds);
  s->held = true;
  return true;
}

/* What the cache file writes of SRC. */
static struct source_list
source_list_of(const struct sources *src)
{
  struct source_list l = {src->paths, src->kinds, src->stamps, src->env};
  return l;
}

/* ---- runs ---- */

void
trawl_cache_report_clear(trawl_cache_report *r)
{
  g_free(r->warning);
  g_free(r->write_error);
  memset(r, 0, sizeof *r);
}

/* The queries as the cache records them (cachefile.h). */
static void
w_queries(GByteArray *b, trawl_plan *plan, const struct cache_state *st)
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
        !stamp_equal(&d->was.ignore[1], &o->was.ignore[1]))
      return false;
  }
  return true;
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
previous_build(const trawl_plan *plan, struct cache_state *st)
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
  for (guint i = 0; i < st->previous->len; i++)
    g_ptr_array_add(st->previous->pdata[i], NULL);
}

const char *const *
trawl_plan_previous_results(const trawl_plan *plan, size_t q, size_t *n)
{
  if (n)
    *n = 0;
  struct cache_state *st = (struct cache_state *)last_run(plan);
  if (st == NULL || q >= trawl_plan_size(plan))
    return NULL;
  if (st->previous == NULL)
    previous_build(plan, st);
  GPtrArray *list = st->previous->pdata[q];
  if (n)
    *n = list->len - 1;
  return (const char *const *)list->pdata;
}

/* trawl_plan_results() of a run that took the quick path. */
static const char *const *
quick_results(const trawl_plan *plan, size_t q, size_t *n)
{
  return trawl_plan_previous_results(plan, q, n);
}

struct watching {
  const char *root;
  trawl_watch_fn fn;
  void *data;
  GString *path;
};

static void
watch_below_root(const char *rel, void *data)
{
  struct watching *w = data;
  g_string_assign(w->path, w->root);
  if (rel[0]) {
    if (w->path->len && w->path->str[w->path->len - 1] != '/')
      g_string_append_c(w->path, '/');
    g_string_append(w->path, rel);
  }
  w->fn(w->path->str, w->data);
}

/* Cache file PATH, or NULL and ERROR naming it and why it cannot be used. */
static struct cache_file *
cache_open(const char *path, GError **error)
{
  char *why = NULL;
  struct cache_file *c = cache_load(path, &why);
  if (c == NULL)
    g_set_error(error, G_FILE_ERROR, why ? G_FILE_ERROR_INVAL : G_FILE_ERROR_NOENT, "%s %s",
                path, why ? why : "does not exist");
  g_free(why);
  return c;
}

bool
trawl_cache_watch(const char *path, trawl_watch_fn fn, void *data, bool *always, GError **error)
{
  struct cache_file *c = cache_open(path, error);
  *always = c == NULL;
  if (c == NULL)
    return false;
  bool ok = true;
  GString *buf = g_string_new(NULL);
  for (guint i = 0; i < c->walks->len && ok; i++) {
    const struct cached_walk *w = c->walks->pdata[i];
    struct watching wt = {w->root, fn, data, buf};
    ok = cached_walk_watch(w, watch_below_root, &wt, always);
    /* The directory holding the root: where the root itself is replaced
     * (by another directory or a link to an old one, which keep their own
     * times). */
    char *parent = g_build_filename(w->root, "..", NULL);
    fn(parent, data);
    g_free(parent);
    for (guint k = 0; k < w->paths->len; k++) {
      const char *p = w->paths->pdata[k];
      const guint8 kind = w->kinds->data[k];
      *always = *always || kind == SOURCE_RACY;
      /* A file that is there as itself: an edit, a rename over it or its
       * deletion shows on it (a missing input is a change to a build
       * tool). A directory (a `.git`: only its being one counts, and git
       * writes in it all the time) or a name not there by the directory
       * that holds it, where its making or removal shows. */
      struct stat st;
      if (stat(p, &st) == 0 && !S_ISDIR(st.st_mode)) {
        fn(p, data);
        continue;
      }
      /* The nearest directory up that is there (a missing one would be
       * taken for a change every time). */
      char *dir = g_path_get_dirname(p);
      while (stat(dir, &st) != 0 && strcmp(dir, "/") != 0 && strcmp(dir, ".") != 0) {
        char *up = g_path_get_dirname(dir);
        g_free(dir);
        dir = up;
      }
      fn(dir, data);
      g_free(dir);
    }
  }
  if (!ok) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: its index does not parse", path);
    *always = true;
  }
  g_string_free(buf, TRUE);
  cache_file_free(c);
  return ok;
}

size_t
trawl_plan_changes(const trawl_plan *plan, trawl_change_fn fn, void *data)
{
  size_t changes = 0;
  for (size_t q = 0; q < trawl_plan_size(plan); q++) {
    size_t n = 0, m = 0;
    const char *const *now = trawl_plan_results(plan, q, &n);
    const char *const *was = trawl_plan_previous_results(plan, q, &m);
    if (was == NULL)
      m = 0;
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

/* The digest's format, in one place: each result with its NUL, each query
 * ended by a newline. */
struct trawl_digest {
  GChecksum *ck;
};

trawl_digest *
trawl_digest_new(void)
{
  trawl_digest *d = g_new(trawl_digest, 1);
  d->ck = g_checksum_new(G_CHECKSUM_SHA256);
  return d;
}

void
trawl_digest_result(trawl_digest *d, const char *path, size_t len)
{
  g_checksum_update(d->ck, (const guchar *)path, (gssize)len);
  g_checksum_update(d->ck, (const guchar *)"", 1);
}

void
trawl_digest_end_query(trawl_digest *d)
{
  g_checksum_update(d->ck, (const guchar *)"\n", 1);
}

char *
trawl_digest_finish(trawl_digest *d)
{
  char *hex = g_strdup(g_checksum_get_string(d->ck));
  g_checksum_free(d->ck);
  g_free(d);
  return hex;
}

char *
trawl_plans_digest(trawl_plan *const *plans, size_t n)
{
  trawl_digest *d = trawl_digest_new();
  for (size_t p = 0; p < n; p++) {
    const trawl_plan *plan = plans[p];
    for (size_t q = 0; plan && q < trawl_plan_size(plan); q++) {
      size_t count;
      const char *const *r = trawl_plan_results(plan, q, &count);
      for (size_t i = 0; i < count; i++)
        trawl_digest_result(d, r[i], strlen(r[i]));
      trawl_digest_end_query(d);
    }
  }
  return trawl_digest_finish(d);
}

bool
cache_run_was_quick(const trawl_plan *plan)
{
  const struct cache_state *st = last_run(plan);
  return st && st->quick;
}

bool
cache_patterns_pending(const trawl_plan *plan)
{
  const struct cache_state *st = plan_attached(plan);
  return st && st->pending;
}

bool
trawl_plan_run_cached(trawl_plan *plan, const char *path, unsigned flags,
                      trawl_cache_report *report, GError **error)
{
  memset(report, 0, sizeof *report);
  struct cache_state *st = state_of(plan);
  held_clear(st);
  previous_clear(st);
  groups_clear(st);
  st->trusted = st->quick = false;

  /* Is there a cache, and is it this plan's? (A plan made from it has it
   * loaded already, for its first run.) */
  char *why = NULL;
  struct cache_file *cache = NULL;
  if (st->file && st->path && strcmp(st->path, path) == 0) {
    cache = st->file;
    st->file = NULL;
    g_clear_pointer(&st->path, g_free);
  } else {
    cache_file_free(st->file);
    st->file = NULL;
    cache = cache_load(path, &why);
  }
  GByteArray *queries = g_byte_array_new();
  w_queries(queries, plan, st);
  if (cache && strcmp(cache->version, TRAWL_VERSION_STRING) != 0)
    why = g_strdup_printf("was written by trawl %s", cache->version);
  else if (cache && (cache->queries_len != queries->len ||
                     memcmp(cache->queries, queries->data, queries->len) != 0))
    why = g_strdup("was written for other queries");
  GError *first = NULL;
  const bool grouped = plan_group(plan, &first);
  st->run = plan_runs(plan);
  const guint n_groups = (guint)trawl_plan_groups(plan);
  st->groups = g_new0(struct cgroup, n_groups);
  st->n_groups = n_groups;
  struct plan_group_view *gv = g_new0(struct plan_group_view, MAX(n_groups, 1u));
  for (guint g = 0; g < n_groups; g++)
    plan_group_view(plan, g, &gv[g]);
  if (cache && why == NULL) {
    bool same = cache->walks->len == n_groups;
    for (guint g = 0; same && g < n_groups; g++)
      same = walk_matches(&gv[g], cache->walks->pdata[g]);
    if (!same)
      why = g_strdup("was written for other roots");
  }
  bool usable = cache && why == NULL;
  report->trusted = st->trusted = usable;
  report->warning = why;

  /* Each walk's sources, stamped before it reads them (a change after that
   * shows next time), and the record it may trust. */
  struct timespec racy_from;
  racy_from_now(&racy_from);
  struct sources *src = g_new0(struct sources, MAX(n_groups, 1u));
  bool all_trusted = usable;
  for (guint g = 0; g < n_groups; g++) {
    struct plan_query_view q0;
    plan_query_view(plan, g_array_index(gv[g].members, size_t, 0), &q0);
    sources_init(&src[g], gv[g].root, q0.opt, usable ? cache->walks->pdata[g] : NULL);
    if (usable) {
      struct cgroup *cg = &st->groups[g];
      cg->cached = cache->walks->pdata[g];
      cg->trusted = src[g].held || sources_unchanged(cg->cached, &src[g]);
      all_trusted = all_trusted && cg->trusted;
    }
  }
  if (usable)
    st->file = cache, cache = NULL;

  /* When every directory recorded is stamped as recorded, nothing is
   * walked or replayed at all: the answer is the cache's (trawl check, and
   * a cached run of an unchanged tree, whose results come from the records
   * in the walk's order, rec_pass()). A walk that could not read a
   * directory is walked again (replayed where it can be): that directory
   * has no stamp to prove it still cannot be read, and its problem is told
   * again. */
  bool quick = all_trusted && grouped;
  for (guint g = 0; quick && g < n_groups; g++)
    quick = !st->groups[g].cached->problems && walk_unchanged(st->groups[g].cached, gv[g].root_fd);
  plan_close_roots(plan);
  /* A run whose results are wanted now takes them from the records: they
   * must check out first (else it walks, as when they do not for a replay). */
  if (quick && (!(flags & TRAWL_CACHE_WRITE_ON_CHANGE) || plan_each_set(plan))) {
    if (!st->file->records_checked)
      records_read(st->file);
    quick = st->file->records_ok;
  }
  bool walked = true;
  if (quick) {
    st->quick = true;
    plan_set_results(plan, quick_results);
    for (guint g = 0; g < n_groups; g++)
      report->dirs_reused += st->groups[g].cached->n_dirs;
  } else {
    bool records = true;
    for (guint g = 0; usable && g < n_groups; g++) {
      struct cgroup *cg = &st->groups[g];
      cg->memo_prev = cached_memo(cg->cached);
      records = records && cg->memo_prev != NULL;
      if (!cg->trusted || cg->memo_prev == NULL)
        all_trusted = false;
    }
    if (usable && !records) {
      /* The index held, the records do not: nothing of it is trusted. */
      report->warning = g_strdup("is corrupt (its records' checksum does not match)");
      report->trusted = st->trusted = usable = false;
      for (guint g = 0; g < n_groups; g++) {
        struct cgroup *cg = &st->groups[g];
        walk_memo_free(cg->memo_prev);
        cg->memo_prev = NULL;
        cg->cached = NULL;
        cg->trusted = false;
      }
    }
    for (guint g = 0; g < n_groups; g++) {
      struct cgroup *cg = &st->groups[g];
      cg->memo = walk_memo_new();
      plan_group_set_memos(plan, g, cg->trusted ? cg->memo_prev : NULL, cg->memo);
    }
    walked = plan_walk(plan, first ? NULL : &first);
    for (guint g = 0; g < n_groups; g++) {
      trawl_walk_stats ws;
      trawl_plan_stats(plan, g, &ws);
      report->dirs_read += ws.dirs_opened;
      report->dirs_reused += ws.dirs_reused;
    }
  }
  /* Nothing read, and every record the cache held replayed (no start
   * directory newly ignored, say): the results are the records'. */
  bool replayed_all = !quick && all_trusted && report->dirs_read == 0 && walked;
  for (guint g = 0; replayed_all && g < n_groups; g++)
    replayed_all = st->groups[g].memo_prev && same_records(st->groups[g].memo, st->groups[g].memo_prev);
  report->changed = !usable;
  if (usable && !quick && !replayed_all && plan_each_set(plan)) {
    /* The results were handed over, not kept: they may differ. */
    report->changed = true;
  } else if (usable && !quick && !replayed_all) {
    for (size_t i = 0; i < trawl_plan_size(plan) && !report->changed; i++) {
      size_t n = 0, m = 0;
      const char *const *is = trawl_plan_results(plan, i, &n);
      const char *const *was = trawl_plan_previous_results(plan, i, &m);
      report->changed = n != m;
      for (size_t k = 0; k < n && !report->changed; k++)
        report->changed = strcmp(is[k], was[k]) != 0;
    }
  }
  /* A re-check rewrites an unchanged answer only when that spares the next
   * one reading: some directory it read again (a racy one, since settled)
   * can now be trusted. One that is read every time (a nested repository,
   * links followed, still racy) is not worth a write per build. */
  uint64_t racy_now = 0;
  for (guint g = 0; !quick && g < n_groups; g++)
    racy_now += st->groups[g].memo ? st->groups[g].memo->racy : 0;
  const bool write = (flags & TRAWL_CACHE_WRITE_ON_CHANGE)
                         ? report->changed || report->dirs_read > racy_now
                         : report->changed || report->dirs_read > 0;
  /* A run that could not answer every query records nothing. */
  if (write && grouped && walked && !quick) {
    GByteArray *body = g_byte_array_new(), *recs = g_byte_array_new();
    cache_index_begin(body, TRAWL_VERSION_STRING, queries, n_groups);
    for (guint g = 0; g < n_groups; g++) {
      struct walk_record w = {gv[g].root, (uint64_t)gv[g].dev, (uint64_t)gv[g].ino, false,
                              gv[g].members, st->groups[g].memo};
      w.problems = trawl_plan_problems(plan, g_array_index(gv[g].members, size_t, 0))->len > 0;
      const struct source_list sl = source_list_of(&src[g]);
      cache_write_walk(body, recs, &w, &sl, &racy_from);
    }
    if ((flags & TRAWL_CACHE_HOLD_CHANGED) && report->changed) {
      st->held = body;
      st->held_recs = recs;
      st->held_path = g_strdup(path);
    } else {
      report->written = cache_store(path, body, recs, &report->write_error);
      g_byte_array_unref(body);
      g_byte_array_unref(recs);
    }
  }
  for (guint g = 0; g < n_groups; g++)
    sources_clear(&src[g]);
  g_free(src);
  g_free(gv);
  cache_file_free(cache);
  g_byte_array_unref(queries);
  if (first)
    g_propagate_error(error, first);
  return grouped && walked;
}

bool
trawl_plan_store_cache(trawl_plan *plan, trawl_cache_report *report)
{
  struct cache_state *st = plan_attached(plan);
  if (st == NULL || st->held == NULL)
    return true;
  g_free(report->write_error);
  report->write_error = NULL;
  report->written = cache_store(st->held_path, st->held, st->held_recs, &report->write_error);
  held_clear(st);
  return report->written;
}

bool
trawl_plan_run_each_cached(trawl_plan *plan, const char *path, unsigned flags,
                           trawl_plan_result_fn fn, void *data, trawl_cache_report *report,
                           GError **error)
{
  g_return_val_if_fail(fn != NULL, false);
  plan_set_each(plan, fn, data);
  bool ok = trawl_plan_run_cached(plan, path, flags, report, error);
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

/* ---- a plan from a cache file ---- */

struct reading {
  trawl_plan *plan;
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
    trawl_pattern *p = trawl_pattern_compile(list[j].text, list[j].len,
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
    trawl_query tq = {root, (const trawl_pattern *const *)inc->pdata, inc->len,
                      (const trawl_pattern *const *)exc->pdata, exc->len, &q->opt};
    trawl_plan_add(r->plan, &tq);
    g_free(root);
  } else if (ok) {
    plan_query_add_patterns(r->plan, i, (const trawl_pattern *const *)inc->pdata, inc->len,
                            (const trawl_pattern *const *)exc->pdata, exc->len);
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
plan_patterns(trawl_plan *plan, GError **error)
{
  struct cache_state *st = plan_attached(plan);
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
trawl_plan *
trawl_plan_new_from_cache(const char *path, GError **error)
{
  struct cache_file *cache = cache_open(path, error);
  if (cache == NULL)
    return NULL;
  trawl_plan *plan = trawl_plan_new();
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
  /* Kept for trawl_plan_run_cached() on the same file: one load. */
  st->file = cache;
  st->path = g_strdup(path);
  return plan;
}
