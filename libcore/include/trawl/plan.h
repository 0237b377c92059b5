/* trawl — shared walks: many queries, one traversal per root.
 *
 * A configure run asks many glob questions of one tree. A plan takes them
 * all as queries (a root, includes, excludes and the walk options), groups
 * the queries that can share one traversal, walks each group once, and hands
 * every query its own results: exactly what a walker with that query's
 * configuration alone would return (trawl_walker_collect), each path once.
 *
 * Grouping (docs/plans.md): queries share a walk when their roots are the
 * same directory (device and inode) and they agree on what changes the
 * traversal itself — options.follow, options.one_file_system and
 * options.ignore. Everything else may differ within a group: includes and
 * their literal start directories (overlapping or not), excludes (one
 * query's exclude never closes a directory another query needs), hidden,
 * types, max_depth. A directory is opened once for all the queries that need
 * it, and each entry is matched against all of their patterns through one
 * pattern-set lookup. A group holds at most 64 queries; more are split.
 *
 * Ownership: the plan borrows the patterns (they must outlive it) and copies
 * the query structs, their pattern arrays, roots and options.
 *
 * Threads: a run walks its groups on helper threads as a walker does
 * (each query's options.threads), but hands results over on the thread that
 * called it: trawl_plan_run_each()'s callback, and the arrays of
 * trawl_plan_results(), belong to that thread. One plan runs one run at a
 * time; distinct plans may run at once from distinct threads.
 */
#ifndef TRAWL_PLAN_H
#define TRAWL_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <glib.h>

#include "trawl/export.h"
#include "trawl/pattern.h"
#include "trawl/walk.h"

G_BEGIN_DECLS

/* One question: what one TrawlWalker would be configured with. Fill it with
 * a designated initializer ({.root = ..., .includes = ...}) or from zero:
 * a field added later takes a reserved slot and means at zero what the
 * query meant before it. */
typedef struct {
  const char *root;                     /* directory; NULL means "." */
  const TrawlPattern *const *includes; /* borrowed; none: everything */
  size_t n_includes;
  const TrawlPattern *const *excludes; /* borrowed */
  size_t n_excludes;
  const TrawlWalkOptions *options;    /* NULL: trawl_walk_options_init() */
  uint64_t reserved[4];                 /* zero: initialize by name or with {0}; never read */
} TrawlQuery;

typedef struct TrawlPlan TrawlPlan;

/* An empty plan. Free with trawl_plan_free(). */
TRAWL_API TrawlPlan *trawl_plan_new(void);

/* Release a plan and its results; NULL is allowed. */
TRAWL_API void trawl_plan_free(TrawlPlan *plan);

/* Add a query (copied; its patterns borrowed). Returns its index: 0, 1, ...
 * in the order added. */
TRAWL_API size_t trawl_plan_add(TrawlPlan *plan, const TrawlQuery *query);

/* Number of queries added. */
TRAWL_API size_t trawl_plan_size(const TrawlPlan *plan);

/* The root of query Q, as added. */
TRAWL_API const char *trawl_plan_query_root(const TrawlPlan *plan, size_t q);

/* Group the queries and walk every group once. Returns false only if some
 * query could not be answered at all (its root is missing or not a readable
 * directory): ERROR then names the first such query's root, and
 * trawl_plan_error() tells which queries failed; the other queries are
 * answered all the same. Problems below a root do not fail a run (see
 * trawl_plan_problems). A plan may be run again: results are replaced. */
TRAWL_API bool trawl_plan_run(TrawlPlan *plan, GError **error);

/* Called with each result of query Q: PATH (LEN bytes, NUL-terminated,
 * relative to Q's root; valid during the call only). Each query's results
 * come in the order trawl_plan_results() lists them, one call at a time, on
 * the thread that runs the plan. */
typedef void (*TrawlPlanResultFunc)(size_t q, const char *path, size_t len, void *data);

/* trawl_plan_run(), handing every result to FN as the walks find them
 * instead of keeping it: trawl_plan_results() then lists nothing. For a
 * caller that writes the results out in its own form (trawl batch): the plan
 * holds no copy of them. */
TRAWL_API bool trawl_plan_run_each(TrawlPlan *plan, TrawlPlanResultFunc fn, void *data,
                                   GError **error);

/* The results of query Q after a run: an array of NUL-terminated paths
 * relative to its root, sorted bytewise, each once (as trawl_walker_collect()
 * returns them). Owned by the plan until the next run or trawl_plan_free():
 * do not change or unref it. */
TRAWL_API const GPtrArray *trawl_plan_results(const TrawlPlan *plan, size_t q);

/* Why query Q has no results (its root could not be walked), or NULL. */
TRAWL_API const GError *trawl_plan_error(const TrawlPlan *plan, size_t q);

/* Problems (TRAWL_WALK_ERROR GErrors) of the walk that answered query Q:
 * shared by every query of its group. Never NULL after a run. */
TRAWL_API const GPtrArray *trawl_plan_problems(const TrawlPlan *plan, size_t q);

/* The walk that answered query Q (0 .. trawl_plan_groups() - 1), and how many
 * walks the last run made. */
TRAWL_API size_t trawl_plan_group(const TrawlPlan *plan, size_t q);
TRAWL_API size_t trawl_plan_groups(const TrawlPlan *plan);

/* Counters of walk G of the last run. */
TRAWL_API void trawl_plan_stats(const TrawlPlan *plan, size_t g, TrawlWalkStats *out);

G_END_DECLS

#endif /* TRAWL_PLAN_H */
