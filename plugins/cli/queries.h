/* trawl — queries as JSON lines: the schema of `trawl batch` (docs/cli.md,
 * "Queries"), decoded and validated for any command that takes queries so.
 *
 * Each line that is not blank is one JSON object; every bad key of every bad
 * line is reported (on stderr, "NAME:LINE: KEY: what"), not only the first.
 * A pattern is compiled in its query's dialect when its line is decoded; a
 * pattern that does not compile is a bad key with its byte and a caret.
 */
#ifndef TRAWL_CLI_QUERIES_H
#define TRAWL_CLI_QUERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <glib.h>

#include "trawl/pattern.h"
#include "trawl/walk.h"

/* One query, as decoded from its line. */
struct query {
  unsigned line;             /* 1-based line of the input */
  const char *id;            /* the id's text as written, in the input */
  size_t id_len;
  char *root;
  TrawlDialect dialect;
  bool dialect_ok;           /* false: the patterns are not compiled */
  bool hidden;
  GPtrArray *includes;       /* TrawlPattern *, owned */
  GPtrArray *excludes;
  TrawlWalkOptions options;
};

/* Free a query and its patterns. */
void query_free(struct query *q);

/* The input and everything decoded from it. Fill NAME, THREADS (every
 * query's options.threads), QUERIES (an empty array freeing with
 * query_free) and IDS (g_hash_table_new_full(g_string_hash, g_string_equal,
 * free a GString, NULL)) before decoding. */
struct query_reader {
  const char *name;          /* the input as messages name it */
  unsigned line;             /* the line being decoded */
  bool line_bad;             /* a problem of it was reported */
  unsigned bad_lines;
  unsigned threads;
  GPtrArray *queries;        /* struct query *, in input order */
  GHashTable *ids;           /* GString key -> first line (ids are unique) */
};

/* Report a problem of R's current line (R->line): "NAME:LINE: FIELD: what"
 * (no FIELD: "NAME:LINE: what"), and mark the line bad. */
void query_reader_error(struct query_reader *r, const char *field, const char *fmt, ...)
  G_GNUC_PRINTF(3, 4);

/* Decode every line of the LEN bytes at TEXT into R->queries, reporting
 * every bad line; false if any was bad. */
bool query_reader_decode(struct query_reader *r, const char *text, size_t len);

#endif /* TRAWL_CLI_QUERIES_H */
