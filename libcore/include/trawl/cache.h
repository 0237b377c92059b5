/* trawl — result caches: a plan's walks kept in a file and proved still true
 * by stamps (docs/cache.md).
 *
 * A cached run answers exactly what trawl_plan_run() would, reading only
 * the directories whose stamps changed since the cache file was written
 * (nothing at all when none did), and writes the file back when its record
 * changed. The file is written whole to a temporary name and renamed into
 * place: readers see the old file or the new one. Nothing about the file is
 * ever an error of the run: a file that is missing, corrupt or another's is
 * walked past and replaced (REPORT says why).
 *
 * Two families: trawl_cache_* run a plan against a cache file and read
 * what the file holds; trawl_digest_* (TrawlDigest) digest results, with no
 * file (docs/library.md, "Names").
 *
 * Ownership and threads: as trawl/plan.h; a plan remembers what its last
 * cached run read until it runs again or is freed.
 */
#ifndef TRAWL_CACHE_H
#define TRAWL_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

#include "trawl/export.h"
#include "trawl/plan.h"

G_BEGIN_DECLS

/* What a cached run's report says of the cache file and of watchman: none of
 * these is an error of the run (the results stand); each is a GError in
 * TRAWL_CACHE_ERROR whose message is one line. */
#define TRAWL_CACHE_ERROR (trawl_cache_error_quark())
typedef enum {
  TRAWL_CACHE_ERROR_UNTRUSTED, /* a cache file is there and was not used: truncated, corrupt,
                                  another format or trawl version's, other queries' or roots' */
  TRAWL_CACHE_ERROR_WRITE,     /* the cache file could not be written */
  TRAWL_CACHE_ERROR_WATCHMAN,  /* watchman was asked and could not answer for every walk */
} TrawlCacheError;

/* The error domain of a cached run's report. */
TRAWL_API GQuark trawl_cache_error_quark(void);

/* What a cached run did about watchman (docs/cache.md, "Watchman"). */
typedef enum {
  TRAWL_CACHE_WATCHMAN_OFF = 0, /* not asked: TRAWL_WATCHMAN=off, or a plan of no walk */
  TRAWL_CACHE_WATCHMAN_USED,    /* its answers told which directories to stat */
  TRAWL_CACHE_WATCHMAN_NOT_USED,/* asked, not used (watchman_error says why): every one stat'ed */
} TrawlCacheWatchman;

/* A cache file holds a plan's queries, every directory its walks read —
 * with its stamp (device, inode, mtime and ctime in ns) and what the walk
 * decided there — and the stamps of every ignore source outside the walked
 * directories. A cached run stats instead of reading: a directory whose
 * stamp is as recorded (and was not racy) is not read, its recorded
 * decisions stand; the results are exactly a fresh walk's. */
typedef struct {
  bool trusted;          /* a cache file was read and its records used */
  GError *warning;       /* TRAWL_CACHE_ERROR_UNTRUSTED: why an existing cache file was not
                            used ("is corrupt (...)"), or NULL */
  bool changed;          /* some query's results differ from the cache's (or there was none) */
  bool written;          /* the cache file was written */
  GError *write_error;   /* TRAWL_CACHE_ERROR_WRITE: why it could not be written (the results
                            stand), or NULL */
  uint64_t dirs_read;    /* directories read, every walk */
  uint64_t dirs_reused;  /* directories not read: their record was trusted */
  TrawlCacheWatchman watchman;
  uint64_t watchman_changes; /* watchman used: the paths its answers named */
  GError *watchman_error;    /* watchman not used: TRAWL_CACHE_ERROR_WATCHMAN, why */
  uint64_t dirs_stated;  /* with watchman used: the directories stat'ed (the others it vouched
                            for); without, every directory of a quick re-check is */
  uint64_t reserved[4];  /* written as zero */
} TrawlCacheReport;

typedef enum {
  /* Rewrite the cache file when some query's results changed, or when a
   * directory read again can now be trusted (one racy when recorded, since
   * settled), so that the next re-check reads nothing (trawl check).
   * Otherwise it is rewritten whenever a directory was read. */
  TRAWL_CACHE_WRITE_ON_CHANGE = 1 << 0,
  /* When some query's results changed, keep the file the run would write
   * instead of writing it, until trawl_cache_store(). A re-check that
   * tells a build of the change (a stamp touched) before the cache says it
   * is current can be killed between the two without the next re-check
   * finding nothing to tell: the reverse order would leave the build stale
   * for good (trawl check; docs/reliability.md). */
  TRAWL_CACHE_HOLD_CHANGED = 1 << 1,
  /* The run is asked what changed (REPORT->changed, trawl_cache_changes()),
   * not for the results: trawl_plan_results() then lists nothing. With
   * watchman's answer (docs/cache.md, "Watchman") the walk enters only the
   * directories that may have changed and those on the way to them, and
   * the cache file keeps the rest of its record as it was (trawl check). */
  TRAWL_CACHE_CHANGES_ONLY = 1 << 2,
} TrawlCacheFlags;

/* Run PLAN as trawl_plan_run() does, trusting the cache file PATH where it
 * holds, and write the cache back (to a temporary file renamed into place).
 * A cache file that is missing is made; one that is truncated, corrupt, of
 * another format version or trawl version, or written for other queries or
 * roots is not trusted (REPORT->warning says why) and is replaced. Errors as
 * trawl_plan_run(); trouble with the cache file itself is never an error,
 * only REPORT->warning or REPORT->write_error. Clear REPORT with
 * trawl_cache_report_clear(). */
TRAWL_API bool trawl_cache_run(TrawlPlan *plan, const char *path, unsigned flags,
                               TrawlCacheReport *report, GError **error);
TRAWL_API void trawl_cache_report_clear(TrawlCacheReport *report);

/* After trawl_cache_run() with TRAWL_CACHE_HOLD_CHANGED: write the
 * cache file that run held back, as it would have (REPORT->written,
 * REPORT->write_error); true when it was written or nothing was held. A
 * plan freed or run again first drops it: the cache file stays as it was,
 * and the next run finds the change again. */
TRAWL_API bool trawl_cache_store(TrawlPlan *plan, TrawlCacheReport *report);

/* trawl_cache_run(), handing every result to FN as
 * trawl_plan_run_each() does instead of keeping it (a tree unchanged since
 * the cache was written: from the cache's records, in the same order; then
 * trawl_plan_results() lists them too, from the records, when asked, else
 * nothing). REPORT->changed says whether the results may differ from the
 * cache's (a directory was read, or a record was not replayed), not that
 * they do. */
TRAWL_API bool trawl_cache_run_each(TrawlPlan *plan, const char *path, unsigned flags,
                                    TrawlPlanResultFunc fn, void *data,
                                    TrawlCacheReport *report, GError **error);

/* Is TRAWL_WATCHMAN one of auto, on, off (or unset: auto)? False with
 * ERROR naming it otherwise (a cached run then uses no watchman). */
TRAWL_API bool trawl_cache_watchman_setting(GError **error);

/* A plan of the queries cache file PATH was written for (patterns compiled
 * again, owned by the plan), or NULL with ERROR set when the file cannot be
 * read or is not a valid cache. */
TRAWL_API TrawlPlan *trawl_cache_load_plan(const char *path, GError **error);

/* After trawl_cache_run(): the results the cache file held for query
 * Q, as trawl_plan_results() lists results (owned by the plan until its next
 * run), or NULL when no cache file was trusted. */
TRAWL_API const GPtrArray *trawl_cache_previous_results(const TrawlPlan *plan, size_t q);

/* Called with each path a watch list holds (trawl_cache_watch). */
typedef void (*TrawlCacheWatchFunc)(const char *path, void *data);

/* What a re-check of cache file PATH depends on, as paths a build tool can
 * watch for a newer modification time (Ninja's depfiles): every directory
 * the cache recorded, the ignore files they hold, and the ignore sources
 * outside the walks — a file that is there as itself (an edit, a rename
 * over it or its deletion shows on it), a directory or a name that is not
 * there by the directory holding it. Each path is as the cache's root was given,
 * joined with the path below it; and ROOT/.. for each root, where the root
 * itself is replaced. *ALWAYS is set when no list of paths can
 * prove the cache current — a record racy or never trusted (a nested
 * repository, links followed), a walk that had problems: the re-check must
 * then run every time. False with ERROR set when the file cannot be read
 * or is not a valid cache (then nothing proves it either).
 *
 * What it proves: if no path is newer than a time T (or gone), and the
 * cache's records were the tree as it was at T (a cached run that began at
 * T read nothing, or wrote the cache: flags without
 * TRAWL_CACHE_WRITE_ON_CHANGE write every directory read), the tree answers
 * as the cache does — for changes that move modification times. A change
 * whose directory's mtime is put back, or a directory's permissions changed
 * (its ctime moves, no mtime does), is seen by a re-check, not by a list. */
TRAWL_API bool trawl_cache_watch(const char *path, TrawlCacheWatchFunc fn, void *data, bool *always,
                                 GError **error);

/* Called with each path of a watch list (trawl_cache_watch_until): false
 * stops the list there. */
typedef bool (*TrawlCacheWatchUntilFunc)(const char *path, void *data);

/* trawl_cache_watch(), for a caller that stops reading: FN is handed the
 * same paths in the same order until it returns false, and then no more
 * (nor is the rest of the file read). A list stopped proves nothing:
 * *ALWAYS is then set. For a build tool with a limit on the paths it
 * takes, whose re-check runs every time past it anyway. */
TRAWL_API bool trawl_cache_watch_until(const char *path, TrawlCacheWatchUntilFunc fn, void *data,
                                       bool *always, GError **error);

/* A change of query Q's results: PATH (NUL-terminated, valid during the
 * call) is in them now and was not in the cache's (ADDED), or the reverse. */
typedef void (*TrawlCacheChangeFunc)(size_t q, const char *path, bool added, void *data);

/* After trawl_cache_run(): every path added to or removed from each
 * query's results, compared with the cache's, handed to FN (may be NULL) —
 * query by query, each query's in bytewise order, an added and a removed
 * path in the order of their bytes. Returns how many. With no cache
 * trusted, every result counts as added. */
TRAWL_API size_t trawl_cache_changes(const TrawlPlan *plan, TrawlCacheChangeFunc fn, void *data);

/* A digest of every result of the N plans (each query's results in order,
 * the queries in order), as 64 hex digits (SHA-256; g_free() it): what
 * changes exactly when some answer does. For builds that hash contents
 * (`trawl check --bump`). A NULL plan counts as none. */
TRAWL_API char *trawl_digest_plans(TrawlPlan *const *plans, size_t n);

/* The same digest made from results as they stream by (a batch that writes
 * them out as they come, trawl_plan_run_each()): each query's results in
 * order, then trawl_digest_end_query(), the queries in order. */
typedef struct TrawlDigest TrawlDigest;
TRAWL_API TrawlDigest *trawl_digest_new(void);
TRAWL_API void trawl_digest_result(TrawlDigest *d, const char *path, size_t len);
TRAWL_API void trawl_digest_end_query(TrawlDigest *d);
/* The 64 hex digits (g_free() them); frees D. */
TRAWL_API char *trawl_digest_finish(TrawlDigest *d);

G_END_DECLS

#endif /* TRAWL_CACHE_H */
