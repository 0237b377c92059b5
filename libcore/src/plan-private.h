/* trawl — the plan's insides, for the cache (private; plan.c, cache.c). */
#ifndef TRAWL_PLAN_PRIVATE_H
#define TRAWL_PLAN_PRIVATE_H

#include <sys/types.h>

#include "trawl/plan.h"
#include "memo.h"
#include "walk-private.h"

G_BEGIN_DECLS

/* A query's result paths of the last run, NULL-terminated once it ended;
 * they point into the plan's arena. */
struct pathvec {
  const char **v;
  size_t n, cap;
};

/* Storage for result paths: copied one after another into blocks. */
struct arena {
  GPtrArray *blocks;       /* char *, freed with the arena */
  char *at;
  size_t left;
};

struct pquery {
  char *root;
  GPtrArray *includes;     /* const trawl_pattern * (borrowed) */
  GPtrArray *excludes;
  trawl_walk_options opt;
  /* Results of the last run. */
  struct pathvec paths;
  GError *error;
  size_t group;
};

struct group {
  trawl_walker *walker;    /* made by plan_walk(): a re-check that finds nothing changed needs none */
  GArray *members;         /* size_t: query indices, bit i of an entry's mask is members[i] */
  dev_t dev;               /* its root */
  ino_t ino;
  char *root;              /* as the first member gave it */
  int root_fd;             /* open from plan_group() to plan_close_roots() (-1 then) */
  struct walk_memo *memo_old; /* the cache's record, trusted (NULL: walk it all) */
  struct walk_memo *memo;     /* this run's record, when caching */
  struct walk_memo *memo_prev; /* the cache's record, trusted or not: the previous results */
  const struct cached_walk *cached; /* its walk in plan->cache_file */
  bool sources_held;       /* its ignore sources are as the cache recorded them */
};

struct trawl_plan {
  GPtrArray *queries;      /* struct pquery * */
  GPtrArray *groups;       /* struct group * of the last run */
  struct arena arena;      /* result paths */
  trawl_plan_result_fn each; /* set: results are handed to it, not kept */
  void *each_data;
  GPtrArray *no_problems;  /* empty, for queries whose root failed */
  GPtrArray *owned;        /* trawl_pattern *: a plan read from a cache owns its patterns */
  GByteArray *pending;     /* a plan read from a cache: its queries as the file has them, their
                            * patterns not compiled until a walk needs them (plan_patterns()) */
  GError *pending_error;   /* they did not compile */
  GPtrArray *previous;     /* per query, GPtrArray of char *: the cache's results, made on demand */
  bool cache_trusted;      /* the last run_cached() read a cache file of this plan */
  bool quick;              /* it found nothing changed without walking: the results are the cache's */
  struct cache_file *cache_file; /* that file, while its walks are needed */
  char *cache_path;        /* where it was read from */
};

struct cache_file;
struct cached_walk;
void cache_file_free(struct cache_file *c);

/* Group the queries (filling plan->groups, each with its walker) and check
 * their roots; false with ERROR set for the first root that failed. */
bool plan_group(trawl_plan *plan, GError **error);

/* Close the groups' roots, opened by plan_group() (for a re-check's stats,
 * which then need not open them again). */
void plan_close_roots(trawl_plan *plan);

/* Walk every group (with its memos, if set) and file the results. */
bool plan_walk(trawl_plan *plan, GError **error);

/* Compile the patterns of a plan read from a cache, if not yet (cache.c);
 * false with ERROR set (and the plan's queries without them) if one does
 * not compile. */
bool plan_patterns(trawl_plan *plan, GError **error);

G_END_DECLS

#endif /* TRAWL_PLAN_PRIVATE_H */
