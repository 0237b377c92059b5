/* trawl — the plan's insides, for the cache (private; plan.c, cache.c). */
#ifndef TRAWL_PLAN_PRIVATE_H
#define TRAWL_PLAN_PRIVATE_H

#include <string.h>
#include <sys/types.h>

#include "trawl/plan.h"
#include "memo.h"
#include "walk-shared.h"

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

enum { ARENA_BLOCK = 64 * 1024 };

/* A copy of the LEN bytes at S, NUL-terminated, in A. Inline: a result is
 * copied once per walk, and GStringChunk's call with its checks and
 * g_ptr_array_add() were 150 instructions a result (callgrind, flat20k). */
static inline const char *
arena_copy(struct arena *a, const char *s, size_t len)
{
  if (G_UNLIKELY(len + 1 > a->left)) {
    const size_t size = MAX((size_t)ARENA_BLOCK, len + 1);
    if (a->blocks == NULL)
      a->blocks = g_ptr_array_new_with_free_func(g_free);
    a->at = (char *)g_malloc(size);
    a->left = size;
    g_ptr_array_add(a->blocks, a->at);
  }
  char *copy = a->at;
  memcpy(copy, s, len);
  copy[len] = '\0';
  a->at += len + 1;
  a->left -= len + 1;
  return copy;
}

static inline void
arena_clear(struct arena *a)
{
  if (a->blocks)
    g_ptr_array_unref(a->blocks);
  memset(a, 0, sizeof *a);
}

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
  struct arena prev_arena; /* their paths */
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

/* Forget the previous results (plan->previous, plan->prev_arena). */
void plan_previous_clear(trawl_plan *plan);

/* Close the groups' roots, opened by plan_group() (for a re-check's stats,
 * which then need not open them again). */
void plan_close_roots(trawl_plan *plan);

/* Walk every group (with its memos, if set) and file the results. */
bool plan_walk(trawl_plan *plan, GError **error);

/* Compile the patterns of a plan read from a cache, if not yet (cache.c);
 * false with ERROR set (and the plan's queries without them) if one does
 * not compile. */
bool plan_patterns(trawl_plan *plan, GError **error);

/* A cache file's header (cache.c has the layout). */
#define CACHE_MAGIC "TRAWLC\x1a\n"
#define CACHE_FORMAT 4u
#define HEADER_SIZE 56

/* Test hook (tests/fuzz/fuzz_cache.c): load cache file PATH as a run does
 * and read all of it as the runs would — every walk's directory entries,
 * its records into a memo (a replay) and through the pass a run of an
 * unchanged tree makes — touching no other file. Returns how many results
 * the passes handed over, -1 if the file is not trusted (*WHY set, to
 * free), or -2 if its records do not check out. */
long cache_read_all(const char *path, char **why);

G_END_DECLS

#endif /* TRAWL_PLAN_PRIVATE_H */
