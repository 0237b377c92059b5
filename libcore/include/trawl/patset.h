/* trawl — the match service: pattern sets.
 *
 * A pattern set answers "does any of these N patterns match this path?" and
 * "which ones?" without running all N. Each pattern is indexed at build time
 * by what its matches must contain (a whole literal path, a literal last
 * component, an extension, a literal prefix or suffix, or an interior literal
 * found by one Aho–Corasick pass); a query runs only the patterns whose key
 * the path carries, plus a short list of patterns nothing could be derived
 * for. Every answer is decided by trawl_pattern_match(), so a set answers
 * exactly what a loop over its patterns answers. docs/patsets.md has the
 * index and the argument.
 *
 * Ownership: the set borrows the patterns (they must outlive it) and copies
 * the array of pointers. trawl_patset_free() frees the set, not the patterns.
 *
 * Threads: a built set is immutable. Any number of threads may query one set
 * at once; trawl_patset_any() never allocates, trawl_patset_matches() only
 * grows the caller's array.
 */
#ifndef TRAWL_PATSET_H
#define TRAWL_PATSET_H

#include <stdbool.h>
#include <stddef.h>
#include <glib.h>

#include "trawl/export.h"
#include "trawl/pattern.h"

G_BEGIN_DECLS

typedef struct TrawlPatset TrawlPatset;

/* How a pattern is indexed (trawl_patset_pattern_keys): a pattern with
 * braces may be keyed in several classes, one key per alternative. */
typedef enum {
  TRAWL_PATSET_KEY_EXACT = 1 << 0,     /* the whole path is a literal */
  TRAWL_PATSET_KEY_BASENAME = 1 << 1,  /* the last component is a literal */
  TRAWL_PATSET_KEY_EXTENSION = 1 << 2, /* the last component ends in ".ext" */
  TRAWL_PATSET_KEY_PREFIX = 1 << 3,    /* the path starts with a literal */
  TRAWL_PATSET_KEY_SUFFIX = 1 << 4,    /* the path ends with a literal */
  TRAWL_PATSET_KEY_SCREEN = 1 << 5,    /* the path contains a literal */
  TRAWL_PATSET_KEY_ALWAYS = 1 << 6,    /* unkeyed: run for every path */
} TrawlPatsetKey;

/* Build a set of the N patterns in PATTERNS (borrowed; none NULL). N may be 0.
 * Pattern i of the array is index i in every answer. Returns a new set (free
 * with trawl_patset_free); never fails. */
TRAWL_API TrawlPatset *trawl_patset_new(const TrawlPattern *const *patterns,
                                        size_t n);

/* Release a set (not its patterns); NULL is allowed. */
TRAWL_API void trawl_patset_free(TrawlPatset *set);

/* Number of patterns in the set. */
TRAWL_API size_t trawl_patset_size(const TrawlPatset *set);

/* Does any pattern match the whole of PATH (LEN bytes)? Never allocates. */
TRAWL_API bool trawl_patset_any(const TrawlPatset *set, const char *path,
                                size_t len);

/* Append to OUT (a GArray of guint) the index of every pattern that matches
 * PATH (LEN bytes), ascending, each once. Returns how many were appended. */
TRAWL_API size_t trawl_patset_matches(const TrawlPatset *set,
                                      const char *path, size_t len,
                                      GArray *out);

/* ---- Introspection (tests, tuning, benchmarks) ---- */

/* The TrawlPatsetKey classes pattern INDEX is keyed in; 0 for a pattern that
 * matches nothing (it is never run). */
TRAWL_API unsigned trawl_patset_pattern_keys(const TrawlPatset *set,
                                             size_t index);

/* How many pattern runs a query for PATH would make (a pattern found under
 * two keys counts twice); matching stops at none of them. Never allocates. */
TRAWL_API size_t trawl_patset_candidates(const TrawlPatset *set,
                                         const char *path, size_t len);

G_END_DECLS

#endif /* TRAWL_PATSET_H */
