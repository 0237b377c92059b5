/* trawl — test hooks of the result cache (private; the tests and the fuzz
 * target include this, and the files that define the hooks). */
#ifndef TRAWL_CACHE_TESTING_H
#define TRAWL_CACHE_TESTING_H

#include <stdbool.h>

#include "trawl/plan.h"

/* Load cache file PATH as a run does and read all of it as the runs would
 * — every walk's directory entries, its records into a memo (a replay) and
 * through the pass a run of an unchanged tree makes, and every entry found
 * again by its path and its number through the marks (dir_cursor) —
 * touching no other file. Returns how many results the passes handed over,
 * -1 if the file is not trusted (*WHY set, to free), -2 if its records do
 * not check out, or -3 if a walk's marks or its list of the entries
 * watchman never vouches for disagree with its entries.
 * (tests/fuzz/fuzz_cache.c) */
long cache_read_all(const char *path, char **why);

/* How many directory entries of a cache's index the re-checks with
 * watchman have read, all threads together (walk_unchanged_but(),
 * dir_cursor): what tests/cache/cache_test.cpp bounds to show that a
 * check's work follows what watchman names, not the tree. */
extern unsigned long cache_test_dirs_decoded;

/* Did the last cached run of PLAN find nothing changed, and answer from the
 * records without a walk? */
bool cache_run_was_quick(const TrawlPlan *plan);

/* Are the patterns of PLAN, made from a cache file, still not compiled? */
bool cache_patterns_pending(const TrawlPlan *plan);

/* Called, when set, after a cached run's walk and before its cache is
 * written: a change made there is one made while the walk ran, after it
 * read what it changes (tests/cache/cache_test.cpp, CacheWatchman). */
extern void (*cache_test_after_walk)(void *data);
extern void *cache_test_after_walk_data;

#endif /* TRAWL_CACHE_TESTING_H */
