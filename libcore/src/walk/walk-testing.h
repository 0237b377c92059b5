/* trawl — test hooks of the walker (private; the tests and bench/ include
 * this, and walker.c, which defines them). Nothing in libcore calls them.
 */
#ifndef TRAWL_WALK_TESTING_H
#define TRAWL_WALK_TESTING_H

#include "trawl/walk.h"

/* Called with the root index and the relative path ("" for the root) of
 * every directory the walker reads, from the worker thread that reads it:
 * the tests assert exactly which directories a query opened. */
typedef void (*trawl_open_hook)(unsigned root, const char *path, void *data);

/* Install (or, with NULL, remove) the hook. */
void trawl_walker_set_open_hook(TrawlWalker *w, trawl_open_hook hook, void *data);

/* Directories the calling thread must have queued before helper threads
 * start (default HELPER_FLOOR in walk-run.h); 0 starts them at once. For
 * the sweep in bench/ that chooses the default. */
void trawl_walker_set_helper_floor(TrawlWalker *w, unsigned floor);

/* Patterns from which a run looks includes and excludes up through pattern
 * sets and a prune index (default PATSET_MIN in query.h); 0 or 1 always,
 * UINT_MAX never. The tests run both ways and compare. */
void trawl_walker_set_patset_min(TrawlWalker *w, unsigned min);

#endif /* TRAWL_WALK_TESTING_H */
