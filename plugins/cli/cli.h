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

/* `trawl match …`; ARGV[0] is "match". Returns the exit code. */
int cli_match(int argc, char **argv);

/* Parse a --dialect value; false (with a message printed) if unknown. */
bool cli_parse_dialect(const char *name, TrawlDialect *out);

/* Print a pattern compile error with a caret under the offending byte. */
void cli_report_pattern_error(const char *pattern, const GError *error);

#endif /* TRAWL_CLI_H */
