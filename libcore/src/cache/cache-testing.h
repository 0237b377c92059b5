/* trawl — test hooks of the result cache (private; the tests and the fuzz
 * target include this, and the files that define the hooks). */
#ifndef TRAWL_CACHE_TESTING_H
#define TRAWL_CACHE_TESTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trawl/plan.h"

/* Load cache file PATH as a run does and read all of it as the runs would
 * — every entry by its number and found again by its path through the
 * marks a block at a time from the file (dir_cursor, as the re-check with
 * watchman reads them), then every walk's directory entries read whole,
 * its records into a memo (a replay) and through the pass a run of an
 * unchanged tree makes, and every entry found again through the marks —
 * touching no other file. Returns how many results the passes handed over,
 * -1 if the file is not trusted (*WHY set, to free), -2 if its records do
 * not check out, -3 if a walk's marks or its list of the entries watchman
 * never vouches for disagree with its entries, or -4 if a block of its
 * directory entries does not check out against its sum.
 * (tests/fuzz/fuzz_cache.c) */
long cache_read_all(const char *path, char **why);

/* Write into INDEX (INDEX_LEN bytes, a cache file's index) the sums of each
 * block its marks delimit, of the directory entries DIRS (DIRS_LEN bytes,
 * the region that follows the index) and of the records RECS (RECS_LEN, the
 * rest), as a writer does: so that a fuzzed index and body reach the
 * parsers of a block. False (INDEX as it
 * was) if the index does not parse. (tests/fuzz/fuzz_cache.c) */
bool cache_test_seal(uint8_t *index, size_t index_len, const uint8_t *dirs, size_t dirs_len,
                     const uint8_t *recs, size_t recs_len);

/* How many blocks of directory entries (those between two marks) have been
 * read from a cache file one at a time and checked against their sums (a
 * dir_cursor's, the cache's region not read whole), all threads together:
 * what tests/cache/cache_test.cpp bounds to show that the re-check with
 * watchman reads the blocks it needs, not the file's every entry. */
extern unsigned long cache_test_blocks_read;

/* How many times a cache file's region of directory entries has been read
 * whole (and every block checked), all threads together: what
 * tests/cache/cache_test.cpp counts to show that a check for its changes
 * reads only the blocks it must. */
extern unsigned long cache_test_dirs_read_whole;

/* How many blocks of directory entries a check for its changes kept whole
 * without reading them and then read to copy them (split_fill()). */
extern unsigned long cache_test_split_filled;

/* How many directory entries of a cache's index the re-checks with
 * watchman have read, all threads together (walk_unchanged_but(),
 * dir_cursor): what tests/cache/cache_test.cpp bounds to show that a
 * check's work follows what watchman names, not the tree. */
extern unsigned long cache_test_dirs_decoded;

/* How many times a cache file's records have been read (and checked
 * against their sum), all threads together: what tests/cache/cache_test.cpp
 * counts to show that asking the index's recorded questions again reads the
 * directory entries alone. */
extern unsigned long cache_test_records_read;

/* Did the last cached run of PLAN find nothing changed, and answer from the
 * records without a walk? */
bool cache_run_was_quick(const TrawlPlan *plan);

/* Was the last cached run of PLAN's walk given part of its record, the
 * rest left unentered (TRAWL_CACHE_CHANGES_ONLY with watchman's answer)? */
bool cache_run_was_partial(const TrawlPlan *plan);

/* Are the patterns of PLAN, made from a cache file, still not compiled? */
bool cache_patterns_pending(const TrawlPlan *plan);

/* Called, when set, after a cached run's walk and before its cache is
 * written: a change made there is one made while the walk ran, after it
 * read what it changes (tests/cache/cache_test.cpp, CacheWatchman). */
extern void (*cache_test_after_walk)(void *data);
extern void *cache_test_after_walk_data;

/* When set, a cache written over a base makes that base as it does where
 * a file cannot have a second name (no /proc, a file system without hard
 * links): a copy of the last file, not a link to it. */
extern bool cache_test_no_links;

/* The blocks checks for their changes have split (cached_walk_split()),
 * all threads together: [0] kept whole by their first paths (below one
 * directory left unentered), [1] kept whole by every path in them (each a
 * directory left unentered or below one, none the walk holds between
 * them), [2] parsed. */
extern unsigned long cache_test_split_blocks[3];

/* When not 0, the entries a writer puts in a block (at most; DIR_MARK_EVERY
 * when 0), in the files it writes from then on: small blocks, so that the
 * small trees of tests/cache/cache_test.cpp's property test span many and
 * a check for its changes keeps, parses and writes blocks as it does on a
 * large tree. */
extern unsigned cache_test_mark_every;

#endif /* TRAWL_CACHE_TESTING_H */
