/* trawl — what several commands read from their arguments the same way
 * (the command's I/O): dialect names, entry types, the hidden rule, and
 * options whose value is attached ("-j4").
 */
#ifndef TRAWL_CLI_OPTIONS_H
#define TRAWL_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <glib.h>

#include "trawl/pattern.h"
#include "trawl/walk.h"

/* The dialect called NAME ("trawl", "git", "cmake", "bazel"); false, and
 * nothing printed, if there is none. */
bool cli_dialect_from_name(const char *name, TrawlDialect *out);

/* The same, printing "unknown dialect" when there is none. */
bool cli_parse_dialect(const char *name, TrawlDialect *out);

/* The entry type (TRAWL_ENTRY_*) called NAME, LEN bytes: "f", "file", "d",
 * "dir", "directory", "l", "symlink"; 0 if none. One table for the walk's
 * --type and a batch query's "type". */
unsigned cli_entry_type(const char *name, size_t len);

/* The names cli_entry_type() knows, for messages: "f, d or l". */
#define CLI_ENTRY_TYPES_SHOWN "f, d or l"

/* options.hidden for a query in DIALECT whose own hidden flag is HIDDEN:
 * hidden entries are a rule of the trawl dialect; in the compatibility
 * dialects the patterns decide alone. */
static inline bool
cli_hidden(bool hidden, TrawlDialect dialect)
{
  return hidden || dialect != TRAWL_DIALECT_TRAWL;
}

/* GOption reads "-j 4" but not "-j4": split an option letter that takes a
 * value (one of SHORT_WITH_VALUE) from the value attached to it ("-j4" ->
 * "-j" "4", "-Hx*.o" -> "-Hx" "*.o"). Arguments that are themselves values
 * (after one of SHORT_WITH_VALUE or LONG_WITH_VALUE, NULL-terminated), and
 * all after "--", are copied as they are. Returns a new NULL-terminated
 * vector (free with g_free) and its length in *ARGC; its strings are
 * ARGV's or, for split options, new ones added to OWNED. */
char **cli_split_attached(int *argc, char **argv, const char *short_with_value,
                          const char *const *long_with_value, GPtrArray *owned);

#endif /* TRAWL_CLI_OPTIONS_H */
