/* trawl — shared walks: queries grouped by root and traversal policy, each
 * group answered by one walk of a walker holding all its queries.
 *
 * The walker does the sharing (walk/query.h): every directory item carries the
 * set of queries that would have opened it, and every entry is matched once
 * against all their patterns. This file only groups, runs and files the
 * results per query. It knows nothing of caches: cache/cache.c runs a plan in
 * steps through plan-shared.h, and keeps its state beside it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"
#include "plan-shared.h"
#include "walk/walk-shared.h"

struct pquery {
  char *root;
  GPtrArray *includes;     /* const TrawlPattern * (borrowed) */
  GPtrArray *excludes;
  TrawlWalkOptions opt;
  GPtrArray *paths;        /* results of the last run: char * into the plan's arena */
  GError *error;
  size_t group;
};

struct group {
  TrawlWalker *walker;    /* made by plan_walk(): a run that does not walk needs none */
  GArray *members;         /* size_t: query indices, bit i of an entry's mask is members[i] */
  dev_t dev;               /* its root */
  ino_t ino;
  char *root;              /* as the first member gave it */
  int root_fd;             /* open from plan_group() to plan_close_roots() (-1 then) */
  const struct walk_memo *memo_old; /* borrowed: plan_group_set_memos() */
  struct walk_memo *memo_out;
};

struct TrawlPlan {
  GPtrArray *queries;      /* struct pquery * */
  GPtrArray *groups;       /* struct group * of the last run */
  struct arena arena;      /* result paths */
  TrawlPlanResultFunc each; /* set: results are handed to it, not kept */
  void *each_data;
  GPtrArray *no_problems;  /* empty, for queries whose root failed */
  GPtrArray *owned;        /* TrawlPattern *: freed with the plan */
  plan_prepare_fn prepare; /* before the patterns are needed */
  plan_results_fn results; /* this run's results come from it */
  unsigned runs;
  struct cache_state *cache; /* the cache's state, kept with the plan (plan-shared.h) */
  plan_cache_free_fn cache_free;
};

static void
pquery_free(struct pquery *q)
{
  g_free(q->root);
  g_ptr_array_unref(q->includes);
  g_ptr_array_unref(q->excludes);
  g_ptr_array_unref(q->paths);
  g_clear_error(&q->error);
  g_free(q);
}

static void
group_free(struct group *g)
{
  if (g->root_fd >= 0)
    close(g->root_fd);
  trawl_walker_free(g->walker);
  g_array_unref(g->members);
  g_free(g->root);
  g_free(g);
}

TrawlPlan *
trawl_plan_new(void)
{
  TrawlPlan *plan = g_new0(TrawlPlan, 1);
  plan->queries = g_ptr_array_new_with_free_func((GDestroyNotify)pquery_free);
  plan->groups = g_ptr_array_new_with_free_func((GDestroyNotify)group_free);
  plan->no_problems = g_ptr_array_new();
  return plan;
}

void
trawl_plan_free(TrawlPlan *plan)
{
  if (plan == NULL)
    return;
  g_ptr_array_unref(plan->queries);
  g_ptr_array_unref(plan->groups);
  g_ptr_array_unref(plan->no_problems);
  if (plan->owned)
    g_ptr_array_unref(plan->owned);
  if (plan->cache_free)
    plan->cache_free(plan->cache);
  arena_clear(&plan->arena);
  g_free(plan);
}

size_t
trawl_plan_add(TrawlPlan *plan, const TrawlQuery *query)
{
  /* Patterns still to be made come first: the queries added before are
   * theirs. (A failure is kept for the next run to report.) */
  if (plan->prepare)
    plan->prepare(plan, NULL);
  struct pquery *q = g_new0(struct pquery, 1);
  q->paths = g_ptr_array_new();
  q->root = g_strdup(query->root ? query->root : ".");
  q->includes = g_ptr_array_sized_new((guint)query->n_includes);
  for (size_t i = 0; i < query->n_includes; i++)
    g_ptr_array_add(q->includes, (gpointer)query->includes[i]);
  q->excludes = g_ptr_array_sized_new((guint)query->n_excludes);
  for (size_t i = 0; i < query->n_excludes; i++)
    g_ptr_array_add(q->excludes, (gpointer)query->excludes[i]);
  if (query->options)
    q->opt = *query->options;
  else
    trawl_walk_options_init(&q->opt);
  if (q->opt.types == 0)
    q->opt.types = TRAWL_ENTRY_FILE;
  g_ptr_array_add(plan->queries, q);
  return plan->queries->len - 1;
}

size_t
trawl_plan_size(const TrawlPlan *plan)
{
  return plan->queries->len;
}

const char *
trawl_plan_query_root(const TrawlPlan *plan, size_t q)
{
  g_return_val_if_fail(q < plan->queries->len, NULL);
  return ((const struct pquery *)plan->queries->pdata[q])->root;
}

/* What a group's members must agree on: the root directory and the options
 * that change which directories are read or how. */
struct gkey {
  dev_t dev;
  ino_t ino;
  bool follow, one_file_system;
  unsigned ignore;
};

static bool
same_group(const struct gkey *a, const struct gkey *b)
{
  return a->dev == b->dev && a->ino == b->ino && a->follow == b->follow &&
         a->one_file_system == b->one_file_system && a->ignore == b->ignore;
}

struct sink {
  TrawlPlan *plan;
  struct group *group;
};

static bool
file_result(const TrawlEntry *e, void *data)
{
  struct sink *s = data;
  const char *copy = NULL;
  uint64_t mask = e->queries;
  while (mask) {
    unsigned bit = (unsigned)__builtin_ctzll(mask);
    mask &= mask - 1;
    size_t qi = g_array_index(s->group->members, size_t, bit);
    if (s->plan->each) {
      s->plan->each(qi, e->path, e->len, s->plan->each_data);
      continue;
    }
    struct pquery *q = s->plan->queries->pdata[qi];
    if (copy == NULL)
      copy = arena_copy(&s->plan->arena, e->path, e->len);
    g_ptr_array_add(q->paths, (gpointer)copy);
  }
  return true;
}

bool
plan_group(TrawlPlan *plan, GError **error)
{
  g_ptr_array_set_size(plan->groups, 0);
  plan->results = NULL;
  plan->runs++;
  arena_clear(&plan->arena);

  /* Group: in the order queries were added, each joins the first group
   * with its key and room left. */
  GArray *keys = g_array_new(FALSE, FALSE, sizeof(struct gkey));
  bool ok = true;
  for (guint i = 0; i < plan->queries->len; i++) {
    struct pquery *q = plan->queries->pdata[i];
    g_clear_error(&q->error);
    g_ptr_array_set_size(q->paths, 0);
    q->group = (size_t)-1;
    struct stat st;
    int fd = open(q->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
      q->error = g_error_new(TRAWL_WALK_ERROR, TRAWL_WALK_ERROR_ROOT, "%s: %s", q->root,
                             g_strerror(errno));
      if (fd >= 0)
        close(fd);
      if (ok && error)
        *error = g_error_copy(q->error);
      ok = false;
      continue;
    }
    struct gkey k = {st.st_dev, st.st_ino, q->opt.follow, q->opt.one_file_system,
                     q->opt.ignore};
    guint g = 0;
    for (; g < plan->groups->len; g++) {
      struct group *grp = plan->groups->pdata[g];
      if (same_group(&g_array_index(keys, struct gkey, g), &k) &&
          grp->members->len < TRAWL_WALK_MAX_QUERIES)
        break;
    }
    if (g == plan->groups->len) {
      struct group *grp = g_new0(struct group, 1);
      grp->root = g_strdup(q->root);
      grp->root_fd = fd;
      fd = -1;
      grp->dev = st.st_dev;
      grp->ino = st.st_ino;
      grp->members = g_array_new(FALSE, FALSE, sizeof(size_t));
      g_ptr_array_add(plan->groups, grp);
      g_array_append_val(keys, k);
    }
    if (fd >= 0)
      close(fd);
    struct group *grp = plan->groups->pdata[g];
    size_t qi = i;
    g_array_append_val(grp->members, qi);
    q->group = g;
  }
  g_array_unref(keys);
  return ok;
}


void
plan_close_roots(TrawlPlan *plan)
{
  for (guint g = 0; g < plan->groups->len; g++) {
    struct group *grp = plan->groups->pdata[g];
    if (grp->root_fd >= 0)
      close(grp->root_fd);
    grp->root_fd = -1;
  }
}

/* Group GRP's walker, made now: its root and every member's query. */
static void
group_walker(TrawlPlan *plan, struct group *grp)
{
  if (grp->walker)
    return;
  const struct pquery *q0 = plan->queries->pdata[g_array_index(grp->members, size_t, 0)];
  TrawlWalkOptions go = q0->opt;
  grp->walker = trawl_walker_new_shared(&go);
  trawl_walker_add_root(grp->walker, q0->root);
  for (guint m = 0; m < grp->members->len; m++) {
    const struct pquery *q = plan->queries->pdata[g_array_index(grp->members, size_t, m)];
    trawl_walker_add_query(grp->walker, (const TrawlPattern *const *)q->includes->pdata,
                           q->includes->len, (const TrawlPattern *const *)q->excludes->pdata,
                           q->excludes->len, &q->opt);
  }
}

bool
plan_walk(TrawlPlan *plan, GError **error)
{
  bool ok = true;
  GError *perr = NULL;
  if (plan->prepare && !plan->prepare(plan, &perr)) {
    /* Patterns that could not be made (a cache's that no longer compiles):
     * no query is answered. */
    for (guint i = 0; i < plan->queries->len; i++) {
      struct pquery *q = plan->queries->pdata[i];
      g_clear_error(&q->error);
      q->error = g_error_copy(perr);
    }
    g_propagate_error(error, perr);
    return false;
  }
  for (guint g = 0; g < plan->groups->len; g++) {
    struct group *grp = plan->groups->pdata[g];
    group_walker(plan, grp);
    struct sink s = {plan, grp};
    trawl_walker_set_memo(grp->walker, grp->memo_old, grp->memo_out);
    GError *err = NULL;
    if (!trawl_walker_run_sorted(grp->walker, file_result, &s, &err)) {
      /* The root went away between the check and the walk. */
      for (guint m = 0; m < grp->members->len; m++) {
        struct pquery *q = plan->queries->pdata[g_array_index(grp->members, size_t, m)];
        g_ptr_array_set_size(q->paths, 0);
        q->error = g_error_copy(err);
      }
      if (ok && error)
        *error = g_error_copy(err);
      ok = false;
      g_error_free(err);
    }
  }
  return ok;
}

bool
trawl_plan_run(TrawlPlan *plan, GError **error)
{
  GError *first = NULL;
  bool grouped = plan_group(plan, &first);
  plan_close_roots(plan);
  bool walked = plan_walk(plan, first ? NULL : &first);
  if (first)
    g_propagate_error(error, first);
  return grouped && walked;
}

bool
trawl_plan_run_each(TrawlPlan *plan, TrawlPlanResultFunc fn, void *data, GError **error)
{
  g_return_val_if_fail(fn != NULL, false);
  plan->each = fn;
  plan->each_data = data;
  const bool ok = trawl_plan_run(plan, error);
  plan->each = NULL;
  plan->each_data = NULL;
  return ok;
}

const GPtrArray *
trawl_plan_results(const TrawlPlan *plan, size_t q)
{
  g_return_val_if_fail(q < plan->queries->len, NULL);
  if (plan->results)
    return plan->results(plan, q);
  const struct pquery *pq = plan->queries->pdata[q];
  return pq->paths;
}

const GError *
trawl_plan_error(const TrawlPlan *plan, size_t q)
{
  g_return_val_if_fail(q < plan->queries->len, NULL);
  return ((struct pquery *)plan->queries->pdata[q])->error;
}

const GPtrArray *
trawl_plan_problems(const TrawlPlan *plan, size_t q)
{
  g_return_val_if_fail(q < plan->queries->len, NULL);
  struct pquery *pq = plan->queries->pdata[q];
  if (pq->group >= plan->groups->len)
    return plan->no_problems;
  struct group *grp = plan->groups->pdata[pq->group];
  return grp->walker ? trawl_walker_problems(grp->walker) : plan->no_problems;
}

size_t
trawl_plan_group(const TrawlPlan *plan, size_t q)
{
  g_return_val_if_fail(q < plan->queries->len, (size_t)-1);
  return ((struct pquery *)plan->queries->pdata[q])->group;
}

size_t
trawl_plan_groups(const TrawlPlan *plan)
{
  return plan->groups->len;
}

void
trawl_plan_stats(const TrawlPlan *plan, size_t g, TrawlWalkStats *out)
{
  memset(out, 0, sizeof *out);
  g_return_if_fail(g < plan->groups->len);
  struct group *grp = plan->groups->pdata[g];
  if (grp->walker)
    trawl_walker_stats(grp->walker, out);
}

/* ---- plan-shared.h ---- */

void
plan_query_view(const TrawlPlan *plan, size_t q, struct plan_query_view *out)
{
  g_return_if_fail(q < plan->queries->len);
  const struct pquery *pq = plan->queries->pdata[q];
  out->root = pq->root;
  out->includes = pq->includes;
  out->excludes = pq->excludes;
  out->opt = &pq->opt;
}

void
plan_query_add_patterns(TrawlPlan *plan, size_t q, const TrawlPattern *const *includes,
                        size_t n_includes, const TrawlPattern *const *excludes,
                        size_t n_excludes)
{
  g_return_if_fail(q < plan->queries->len);
  struct pquery *pq = plan->queries->pdata[q];
  for (size_t i = 0; i < n_includes; i++)
    g_ptr_array_add(pq->includes, (gpointer)includes[i]);
  for (size_t i = 0; i < n_excludes; i++)
    g_ptr_array_add(pq->excludes, (gpointer)excludes[i]);
}

void
plan_own_pattern(TrawlPlan *plan, TrawlPattern *p)
{
  if (plan->owned == NULL)
    plan->owned = g_ptr_array_new_with_free_func((GDestroyNotify)trawl_pattern_free);
  g_ptr_array_add(plan->owned, p);
}

void
plan_set_prepare(TrawlPlan *plan, plan_prepare_fn fn)
{
  plan->prepare = fn;
}

unsigned
plan_runs(const TrawlPlan *plan)
{
  return plan->runs;
}

void
plan_group_view(const TrawlPlan *plan, size_t g, struct plan_group_view *out)
{
  g_return_if_fail(g < plan->groups->len);
  const struct group *grp = plan->groups->pdata[g];
  out->root = grp->root;
  out->root_fd = grp->root_fd;
  out->dev = grp->dev;
  out->ino = grp->ino;
  out->members = grp->members;
}

void
plan_group_set_memos(TrawlPlan *plan, size_t g, const struct walk_memo *old,
                     struct walk_memo *out)
{
  g_return_if_fail(g < plan->groups->len);
  struct group *grp = plan->groups->pdata[g];
  grp->memo_old = old;
  grp->memo_out = out;
}

void
plan_set_each(TrawlPlan *plan, TrawlPlanResultFunc fn, void *data)
{
  plan->each = fn;
  plan->each_data = data;
}

bool
plan_each_set(const TrawlPlan *plan)
{
  return plan->each != NULL;
}

void
plan_set_results(TrawlPlan *plan, plan_results_fn fn)
{
  plan->results = fn;
}

void
plan_keep_cache(TrawlPlan *plan, struct cache_state *st, plan_cache_free_fn free_fn)
{
  if (plan->cache_free)
    plan->cache_free(plan->cache);
  plan->cache = st;
  plan->cache_free = free_fn;
}

struct cache_state *
plan_cache(const TrawlPlan *plan)
{
  return plan->cache;
}
