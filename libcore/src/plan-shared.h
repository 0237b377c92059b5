/* trawl — the plan's API for the rest of libcore (private; cache/cache.c).
 *
 * A plan groups queries and walks each group once (trawl/plan.h). The result
 * cache (cache/cache.c) runs a plan in steps of its own — group, check the
 * stamps, walk with memos or not at all — and keeps state of its own beside
 * it. This
 * is what it may ask of a plan and keep with one; plan.c knows nothing of
 * caches or files (a cache's state is an opaque struct to it). The arrow
 * runs one way: cache/cache.c -> plan-shared.h.
 */
#ifndef TRAWL_PLAN_SHARED_H
#define TRAWL_PLAN_SHARED_H

#include <sys/types.h>

#include "trawl/plan.h"

G_BEGIN_DECLS

struct walk_memo;

/* ---- the queries ---- */

/* What query Q was added with. */
struct plan_query_view {
  const char *root;
  const GPtrArray *includes;     /* const TrawlPattern * */
  const GPtrArray *excludes;
  const TrawlWalkOptions *opt;
};
void plan_query_view(const TrawlPlan *plan, size_t q, struct plan_query_view *out);

/* Give query Q the patterns INCLUDES and EXCLUDES (added to what it has;
 * borrowed, as trawl_plan_add() borrows). For a plan whose queries were
 * added before their patterns were compiled. */
void plan_query_add_patterns(TrawlPlan *plan, size_t q, const TrawlPattern *const *includes,
                             size_t n_includes, const TrawlPattern *const *excludes,
                             size_t n_excludes);

/* Free P with PLAN (patterns compiled for a plan of one's own making). */
void plan_own_pattern(TrawlPlan *plan, TrawlPattern *p);

/* Called before the plan's patterns are needed (a query added, a walk):
 * false with ERROR set if they cannot be made (then no query is answered).
 * For a plan whose patterns are compiled only when a walk needs them. */
typedef bool (*plan_prepare_fn)(TrawlPlan *plan, GError **error);
void plan_set_prepare(TrawlPlan *plan, plan_prepare_fn fn);

/* ---- a run, in steps ---- */

/* Start a run: group the queries (trawl/plan.h, "Grouping") with each
 * group's root opened; false with ERROR set for the first root that
 * failed (its queries have trawl_plan_error()). Results and problems of
 * the last run are forgotten. */
bool plan_group(TrawlPlan *plan, GError **error);

/* How many runs plan_group() has started: a run's own state is its while
 * this count stays. */
unsigned plan_runs(const TrawlPlan *plan);

/* Group G of the current run: its root as the first member gave it, the
 * root's descriptor (open from plan_group() to plan_close_roots(), -1
 * then), device and inode, and its members (size_t query indices; bit i of
 * a result's mask is members[i]). */
struct plan_group_view {
  const char *root;
  int root_fd;
  dev_t dev;
  ino_t ino;
  const GArray *members;
};
void plan_group_view(const TrawlPlan *plan, size_t g, struct plan_group_view *out);

/* Close the groups' roots. */
void plan_close_roots(TrawlPlan *plan);

/* The memos group G's walk trusts (OLD, may be NULL) and records into
 * (OUT, may be NULL); borrowed until the next run (walk-shared.h). */
void plan_group_set_memos(TrawlPlan *plan, size_t g, const struct walk_memo *old,
                          struct walk_memo *out);

/* Walk every group and file the results (or hand them over, as set). */
bool plan_walk(TrawlPlan *plan, GError **error);

/* Hand every result to FN as trawl_plan_run_each() does (NULL: keep them). */
void plan_set_each(TrawlPlan *plan, TrawlPlanResultFunc fn, void *data);
bool plan_each_set(const TrawlPlan *plan);

/* The current run's results come from FN instead of the walks (the cache's
 * records, when nothing changed): trawl_plan_results() asks it. Until the
 * next plan_group(). */
typedef const GPtrArray *(*plan_results_fn)(const TrawlPlan *plan, size_t q);
void plan_set_results(TrawlPlan *plan, plan_results_fn fn);

/* ---- the cache's state, kept with the plan ---- */

/* The state of PLAN's cached runs (cache/cache.c's; opaque here): ST, freed
 * with FREE when the plan is, or when another is kept. */
struct cache_state;
typedef void (*plan_cache_free_fn)(struct cache_state *st);
void plan_keep_cache(TrawlPlan *plan, struct cache_state *st, plan_cache_free_fn free);
/* What plan_keep_cache() kept, or NULL. */
struct cache_state *plan_cache(const TrawlPlan *plan);

G_END_DECLS

#endif /* TRAWL_PLAN_SHARED_H */
