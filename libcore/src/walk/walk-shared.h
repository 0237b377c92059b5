/* trawl — the walker's private API for the rest of libcore (plan.c): shared
 * walks and memos. Not installed; the command and the plugins reach
 * these through trawl/plan.h.
 */
#ifndef TRAWL_WALK_SHARED_H
#define TRAWL_WALK_SHARED_H

#include "trawl/walk.h"

/* ---- Shared walks (plan.c) ----
 *
 * A shared walker answers several queries in one traversal: each has its
 * own includes, excludes, hidden, types and max_depth (from OPTIONS); the
 * walker's own options give the rest (follow, one_file_system, ignore,
 * threads, reader). Each result carries in TrawlEntry.queries the bits of
 * the queries it answers, and each query's results are exactly those of a
 * plain walker configured with that query alone. */
#define TRAWL_WALK_MAX_QUERIES 64

/* A walker without a query of its own: trawl_walker_add_include/exclude
 * and trawl_walker_explain() are not for it. */
TrawlWalker *trawl_walker_new_shared(const TrawlWalkOptions *options);

/* Add a query (patterns borrowed); returns its bit index. At most
 * TRAWL_WALK_MAX_QUERIES. */
unsigned trawl_walker_add_query(TrawlWalker *w, const TrawlPattern *const *includes,
                                size_t n_includes, const TrawlPattern *const *excludes,
                                size_t n_excludes, const TrawlWalkOptions *options);

/* Memos (memo.h): a sorted run given OLD replays every directory whose
 * stamp is as OLD recorded it (and not racy) instead of reading it, and
 * records every directory it reads or replays into OUT (emptied first).
 * Either may be NULL. The caller sees to it that OLD came from a walk with
 * the same roots, queries and options, and that no ignore source outside
 * the walked directories changed since. */
struct walk_memo;
void trawl_walker_set_memo(TrawlWalker *w, const struct walk_memo *old, struct walk_memo *out);

#endif /* TRAWL_WALK_SHARED_H */
