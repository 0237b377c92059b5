/* trawl — the plan's insides, for the cache (private; plan.c, cache.c). */
#ifndef TRAWL_PLAN_PRIVATE_H
#define TRAWL_PLAN_PRIVATE_H

#include <sys/types.h>

#include "trawl/plan.h"
#include "memo.h"
#include "walk-private.h"

G_BEGIN_DECLS

struct pquery {
  char *root;
  GPtrArray *includes;     /* const trawl_pattern * (borrowed) */
  GPtrArray *excludes;
  trawl_walk_options opt;
  /* Results of the last run. */
  GPtrArray *paths;        /* char * into the plan's chunk, NULL-terminated */
  GError *error;
  size_t group;
};

struct group {
  trawl_walker *walker;
  GArray *members;         /* size_t: query indices, bit i of an entry's mask is members[i] */
  dev_t dev;               /* its root */
  ino_t ino;
  char *root;              /* as the first member gave it */
  struct walk_memo *memo_old; /* the cache's record, trusted (NULL: walk it all) */
  struct walk_memo *memo;     /* this run's record, when caching */
};

struct trawl_plan {
  GPtrArray *queries;      /* struct pquery * */
  GPtrArray *groups;       /* struct group * of the last run */
  GStringChunk *chunk;     /* result paths */
  GPtrArray *no_problems;  /* empty, for queries whose root failed */
  GPtrArray *owned;        /* trawl_pattern *: a plan read from a cache owns its patterns */
  GPtrArray *previous;     /* per query, GPtrArray of char *: the cache's results, or NULL */
};

/* Group the queries (filling plan->groups, each with its walker) and check
 * their roots; false with ERROR set for the first root that failed. */
bool plan_group(trawl_plan *plan, GError **error);

/* Walk every group (with its memos, if set) and file the results. */
bool plan_walk(trawl_plan *plan, GError **error);

G_END_DECLS

#endif /* TRAWL_PLAN_PRIVATE_H */
