/* trawl — test hooks of the walker (private, not installed). */
#ifndef TRAWL_WALK_PRIVATE_H
#define TRAWL_WALK_PRIVATE_H

#include "trawl/walk.h"

/* Called with the root index and the relative path ("" for the root) of
 * every directory the walker reads, from the worker thread that reads it:
 * the tests assert exactly which directories a query opened. */
typedef void (*trawl_open_hook)(unsigned root, const char *path, void *data);

/* Install (or, with NULL, remove) the hook. */
void trawl_walker_set_open_hook(trawl_walker *w, trawl_open_hook hook, void *data);

/* Directories the calling thread must have queued before helper threads
 * start (default HELPER_FLOOR in walk.c); 0 starts them at once. For the
 * sweep in bench/ that chooses the default. */
void trawl_walker_set_helper_floor(trawl_walker *w, unsigned floor);

/* Memos (memo.h): a sorted run given OLD replays every directory whose
 * stamp is as OLD recorded it (and not racy) instead of reading it, and
 * records every directory it reads or replays into OUT (emptied first).
 * Either may be NULL. The caller sees to it that OLD came from a walk with
 * the same roots, queries and options, and that no ignore source outside
 * the walked directories changed since. */
struct walk_memo;
void trawl_walker_set_memo(trawl_walker *w, const struct walk_memo *old, struct walk_memo *out);

/* Patterns from which a run looks includes and excludes up through pattern
 * sets and a prune index (default PATSET_MIN in walk.c); 0 or 1 always,
 * UINT_MAX never. The tests run both ways and compare. */
void trawl_walker_set_patset_min(trawl_walker *w, unsigned min);

/* ---- Shared walks (plan.c) ----
 *
 * A shared walker answers several queries in one traversal: each has its
 * own includes, excludes, hidden, types and max_depth (from OPTIONS); the
 * walker's own options give the rest (follow, one_file_system, ignore,
 * threads, reader). Each result carries in trawl_entry.queries the bits of
 * the queries it answers, and each query's results are exactly those of a
 * plain walker configured with that query alone. */
#define TRAWL_WALK_MAX_QUERIES 64

/* A walker without a query of its own: trawl_walker_add_include/exclude
 * and trawl_walker_explain() are not for it. */
trawl_walker *trawl_walker_new_shared(const trawl_walk_options *options);

/* Add a query (patterns borrowed); returns its bit index. At most
 * TRAWL_WALK_MAX_QUERIES. */
unsigned trawl_walker_add_query(trawl_walker *w, const trawl_pattern *const *includes,
                                size_t n_includes, const trawl_pattern *const *excludes,
                                size_t n_excludes, const trawl_walk_options *options);

#endif /* TRAWL_WALK_PRIVATE_H */
