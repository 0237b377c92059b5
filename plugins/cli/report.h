/* trawl — what the commands tell on stderr (the command's I/O, shared by
 * every cmd-*.c and the plugins built into the command).
 *
 * Every line starts "trawl: ". A name in a message or a report (a path, a
 * pattern) is shown as cli_append_name() writes it — the one escaper of
 * what the command tells people: a file name cannot forge a line of its
 * own, and a byte that is not UTF-8 cannot stop a reader that decodes the
 * text as UTF-8 (Meson does, for a configure-time command's output).
 */
#ifndef TRAWL_CLI_REPORT_H
#define TRAWL_CLI_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <glib.h>

#include "trawl/cache.h"
#include "trawl/plan.h"
#include "trawl/walk.h"

/* Append NAME (LEN bytes, any bytes) to OUT as it is shown to people:
 * valid UTF-8 as it is, '\\' doubled, control bytes as \a \b \t \n \v \f
 * \r or \xNN, and every byte that is not part of valid UTF-8 as \xNN. */
void cli_append_name(GString *out, const char *name, size_t len);

/* Append TEXT (LEN bytes) as cli_append_name() does but with '\\' as it
 * is: a message's own text holds some ("write '\-'"). */
void cli_append_text(GString *out, const char *text, size_t len);

/* Print "trawl: MESSAGE" and a newline on stderr, MESSAGE shown by
 * cli_append_text(). */
void cli_print_message(const char *message);

/* Tell that writing the output failed with ERR ("trawl: writing output:
 * ..."), but for a reader that went away (EPIPE: `trawl '**' | head -1`
 * with SIGPIPE ignored), which is no error to tell: the command stops as
 * quietly as SIGPIPE would have stopped it, with exit 3. */
void cli_report_write_error(int err);

/* Print a pattern compile error, and a caret under the offending byte when
 * the pattern prints as one plain line. */
void cli_report_pattern_error(const char *pattern, const GError *error);

/* The same for a pattern of LEN bytes, its message preceded by WHERE
 * ("queries.jsonl:3: include[1]: ") and printed as cli_print_message()
 * does. */
void cli_report_pattern_error_at(const char *where, const char *pattern, size_t len,
                                 const GError *error);

/* A cached run's warning and write error on cache file PATH, one line
 * each. */
void cli_report_cache(const char *path, const TrawlCacheReport *report);

/* The problems (a directory that could not be read, a link loop) of every
 * walk of PLAN's last run, once per walk however many queries shared it,
 * each through PRINT (cli_print_message when NULL). Returns how many. */
unsigned cli_report_plan_problems(const TrawlPlan *plan, void (*print)(const char *message));

/* The same for one walker's run. */
unsigned cli_report_walker_problems(const TrawlWalker *walker);

/* One --stats line of a plan's run: "trawl: 3 queries, 1 walk, 12
 * directories read[, 40 reused (cache trusted[, written])], 1.2 ms" —
 * N of the things asked (ONE / MANY: "query" / "queries"), the walks, the
 * directories read (the cache's count when CACHE is not NULL: a run of an
 * unchanged tree has no walk), and the time since START (a monotonic
 * clock, microseconds). */
void cli_report_plan_stats(size_t n, const char *one, const char *many, const TrawlPlan *plan,
                           const TrawlCacheReport *cache, gint64 start);

/* With CACHE's watchman back-end asked (not TRAWL_WATCHMAN=off), a --stats
 * line on it: "trawl: [FILE: ]watchman used: N paths changed, M
 * directories stat'ed" or "... watchman not used (WHY)" — why the stat
 * path was taken (docs/cache.md, "Watchman"). cli_report_plan_stats()
 * prints it after its own. */
void cli_report_watchman(const char *file, const TrawlCacheReport *cache);

#endif /* TRAWL_CLI_REPORT_H */
