/* trawl — `trawl batch --format cmake`: the answers as a CMake script that
 * `include()` reads back (docs/cli.md, "trawl batch"; the CMake plugin,
 * cmake/Trawl.cmake, is its user).
 *
 * For the K-th query of the input (K = 1, 2, ... in input order) the script
 * sets
 *
 *   TRAWL_BATCH_<K>_ID            the query's id, its JSON text as written
 *   TRAWL_BATCH_<K>               the paths a CMake list can carry, as a list
 *   TRAWL_BATCH_<K>_UNLISTABLE    how many paths it cannot carry (0 or more)
 *   TRAWL_BATCH_<K>_UNLISTABLE_<J>  each of those (J = 1, 2, ...), alone
 *
 * and at the end TRAWL_BATCH_COUNT, the number of queries.
 *
 * Every value is written as an argument CMake does not evaluate, so that no
 * file name can change what the script does: a bracket argument
 * `[==[` NEWLINE path `]==]` with one '=' more than the longest run of '='
 * after a ']' in the path (CMake drops a newline right after the opening
 * bracket; the one written there is that newline). CMake's reader turns
 * CR LF into LF inside a bracket argument, so a path holding CR LF is written
 * as a quoted argument instead, with \\ \" \$ \r \n escaped.
 *
 * A CMake list is one string with ';' between the elements, and
 * cmExpandList splits it at each ';' that is neither escaped by a '\'
 * before it nor inside '[' ... ']'. So an element can be carried in a list
 * only if it holds no ';', its '[' and ']' balance (their counts are equal),
 * and it does not end in '\' (which would escape the ';' after it). The
 * other paths are set one per variable, where they are one string.
 *
 * Threads: none; the writer is used by the thread that prints.
 */
#ifndef TRAWL_CLI_FORMAT_CMAKE_H
#define TRAWL_CLI_FORMAT_CMAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <glib.h>

#include "../cli/output.h"

/* One query's writer: the paths that go on the list are written as they
 * come; the others wait in UNLISTABLE until cmake_query_end(). */
typedef struct {
  size_t query;          /* K, 1-based */
  size_t unlistable;     /* paths set apart so far */
  GString *held;         /* their set() commands */
} cmake_writer;

/* Can a CMake list carry S (LEN bytes) as one element? */
bool cmake_listable(const char *s, size_t len);

/* Append S (LEN bytes, any bytes but NUL) to OUT as one CMake argument that
 * evaluates to exactly S. */
void cmake_argument(GString *out, const char *s, size_t len);

/* Start query K (1-based) whose id's text is ID (ID_LEN bytes). */
void cmake_query_begin(output *out, cmake_writer *w, size_t k, const char *id, size_t id_len);

/* One path of the current query (sorted order). FIRST is unused (the json
 * writer's signature); DATA is the cmake_writer. */
void cmake_query_path(output *out, bool first, const char *path, size_t len, void *data);

/* End the current query: close its list, write the paths set apart. */
void cmake_query_end(output *out, cmake_writer *w);

/* After the last query: TRAWL_BATCH_COUNT. */
void cmake_batch_end(output *out, size_t count);

#endif /* TRAWL_CLI_FORMAT_CMAKE_H */
