/* trawl — the command line: the subcommands (cmd-*.c). Each parses its
 * arguments, calls the library, and chooses its exit code; what they read
 * and write alike is the command's I/O library (output.h, json.h,
 * options.h, report.h: plugins/cli/meson.build, tests/cli-io/).
 *
 * Exit codes (docs/cli.md): 0 success, 1 nothing matched (`match`) or a change
 * was found (`check`), 2 usage or pattern error, 3 an I/O error stopped the
 * walk. Messages go to stderr prefixed "trawl: ".
 */
#ifndef TRAWL_CLI_H
#define TRAWL_CLI_H

#include <stdbool.h>
#include <glib.h>

#include "trawl/trawl.h"
#include "options.h"
#include "report.h"

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

/* `trawl check --cache FILE...`; ARGV[0] is "check" (cmd-check.c). */
int cli_check(int argc, char **argv);

/* `trawl meson …`, the Meson plugin; ARGV[0] is "meson" (cmd-meson.c). */
int cli_meson(int argc, char **argv);

/* `trawl bazel-index …`, the Bazel plugin's indexer; ARGV[0] is
 * "bazel-index" (plugins/bazel/cmd-bazel-index.c). */
int cli_bazel_index(int argc, char **argv);

/* `trawl match …`; ARGV[0] is "match". Returns the exit code. */
int cli_match(int argc, char **argv);

#endif /* TRAWL_CLI_H */
