/* trawl — the command line: shared declarations of the subcommands.
 *
 * Exit codes (DESIGN.md): 0 success, 1 nothing matched (`match`) or a change
 * was found (`check`), 2 usage or pattern error, 3 an I/O error stopped the
 * walk. Messages go to stderr prefixed "trawl: ".
 */
#ifndef TRAWL_CLI_H
#define TRAWL_CLI_H

#include <stdbool.h>
#include <glib.h>

#include "trawl/trawl.h"

enum {
  EXIT_OK = 0,
  EXIT_NONE = 1,
  EXIT_USAGE = 2,
  EXIT_IO = 3,
};

/* `trawl [OPTIONS] PATTERN...`, the walk; ARGV[0] is the program. Returns
 * the exit code. */
int cli_walk(int argc, char **argv);

/* `trawl explain [OPTIONS] PATTERN... -- PATH...`; ARGV[0] is "explain". */
int cli_explain(int argc, char **argv);

/* `trawl batch [OPTIONS] QUERIES|-`, many queries answered by shared walks;
 * ARGV[0] is "batch". Returns the exit code. */
int cli_batch(int argc, char **argv);

/* Print the warning and write error of a cached run on cache file PATH
 * (cmd-walk.c), one line each. */
void cli_report_cache(const char *path, const trawl_cache_report *report);

/* `trawl check --cache FILE...`; ARGV[0] is "check" (cmd-check.c). */
int cli_check(int argc, char **argv);

/* `trawl meson …`, the Meson plugin; ARGV[0] is "meson" (cmd-meson.c). */
int cli_meson(int argc, char **argv);

/* `trawl match …`; ARGV[0] is "match". Returns the exit code. */
int cli_match(int argc, char **argv);

/* Parse a --dialect value; false (with a message printed) if unknown. */
bool cli_parse_dialect(const char *name, TrawlDialect *out);

/* The dialect called NAME ("trawl", "git", "cmake", "bazel"); false, and
 * nothing printed, if there is none. */
bool cli_dialect_from_name(const char *name, TrawlDialect *out);

/* Print a pattern compile error with a caret under the offending byte. */
void cli_report_pattern_error(const char *pattern, const GError *error);

/* The same for a pattern of LEN bytes, its message preceded by WHERE
 * ("queries.jsonl:3: include[1]: ") and printed as cli_print_message
 * does. */
void cli_report_pattern_error_at(const char *where, const char *pattern, size_t len,
                                 const GError *error);

/* Print "trawl: MESSAGE" and a newline on stderr, each control byte of
 * MESSAGE written as \ooo, so that a name in it cannot forge a line. */
void cli_print_message(const char *message);

#endif /* TRAWL_CLI_H */
