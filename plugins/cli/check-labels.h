/* trawl — what `trawl check` calls a query when it prints its changes.
 *
 * By default a query's changes are headed "CACHE: query N (ROOT)", each
 * path relative to ROOT: all a cache file knows. A command that writes a
 * cache on someone's behalf knows better — `trawl meson` knows the
 * meson.build that asked, the list as it was written there, and where its
 * paths are relative to. It leaves that beside the cache, in CACHE.labels,
 * and `trawl check` uses it, read only when something changed (a check
 * that finds nothing changed opens nothing more).
 *
 * CACHE.labels: the line "trawl check labels 1", then for each query of
 * the cache, in order, LABEL NUL PREFIX NUL. LABEL heads the query's
 * changes (shown as a message: cli_append_text()); PREFIX goes before each
 * changed path (raw bytes). A file that does not hold exactly one entry per
 * query of the cache is not used.
 */
#ifndef TRAWL_CLI_CHECK_LABELS_H
#define TRAWL_CLI_CHECK_LABELS_H

#include <stdbool.h>
#include <stddef.h>
#include <glib.h>

typedef struct check_labels check_labels;

/* Write CACHE.labels with one entry per element of LABELS and PREFIXES
 * (char *, as many of each), unless it already holds exactly that; false
 * with ERROR set when it cannot be written. */
bool check_labels_write(const char *cache, const GPtrArray *labels, const GPtrArray *prefixes,
                        GError **error);

/* CACHE.labels for a cache of N queries, or NULL when there is none that
 * holds exactly N entries. Free with check_labels_free(). */
check_labels *check_labels_read(const char *cache, size_t n);

/* Query Q's label and prefix (owned by LABELS; Q < N). */
const char *check_labels_label(const check_labels *labels, size_t q);
const char *check_labels_prefix(const check_labels *labels, size_t q);

void check_labels_free(check_labels *labels);

#endif /* TRAWL_CLI_CHECK_LABELS_H */
