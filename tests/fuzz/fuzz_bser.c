/* trawl — libFuzzer target over the BSER reader of the cache's watchman
 * back-end (libcore/src/cache/watchman.c, wm_bser_value()): any bytes read
 * as one answer's value, as a daemon (or whatever listens on its socket)
 * could send them. Seeds (tests/fuzz/corpus-bser/): watchman 4.9.0's
 * answers to `clock`, `query` (names that are not UTF-8 among them),
 * `get-config` and an error, and a template (which 4.9.0 writes for lists
 * of objects).
 *
 * Invariants, each checked with abort() so that libFuzzer reports it:
 *  - the reader returns (AddressSanitizer checks that it reads only the
 *    input), a tree or NULL;
 *  - every string of a tree is NUL-terminated at its length, and no longer
 *    than the input;
 *  - a tree has at most two values per input byte (every value takes a
 *    byte, but a template's objects, which take none of their own, are
 *    bounded by the bytes left);
 *  - the same input read again gives a tree of the same shape.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/watchman.h"
#include "json/json.h"
#include "fuzz_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_fail(const char *what, const uint8_t *data, size_t size)
{
  fprintf(stderr, "fuzz_bser: %s\n", what);
  print_bytes("input", (const char *)data, size);
  abort();
}

/* The values of tree V, its strings checked against SIZE. */
static size_t
count(const json_value *v, size_t size, const uint8_t *data)
{
  size_t n = 1;
  if (v->kind == JSON_STRING && (v->str == NULL || v->len > size || v->str[v->len] != '\0'))
    fuzz_fail("a string not as long as it says", data, size);
  for (size_t i = 0; v->kind == JSON_ARRAY && i < v->n; i++)
    n += count(v->items[i], size, data);
  for (size_t i = 0; v->kind == JSON_OBJECT && i < v->n; i++) {
    const json_member *m = &v->members[i];
    if (m->name == NULL || m->name_len > size)
      fuzz_fail("a member name longer than the input", data, size);
    n += count(m->value, size, data);
  }
  return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  json_value *v = wm_bser_value(data, size);
  json_value *again = wm_bser_value(data, size);
  if ((v == NULL) != (again == NULL))
    fuzz_fail("read twice, once a value and once none", data, size);
  if (v) {
    const size_t n = count(v, size, data);
    if (n > 2 * size)
      fuzz_fail("more values than the input could hold", data, size);
    if (count(again, size, data) != n)
      fuzz_fail("read twice, two shapes", data, size);
  }
  json_value_free(v);
  json_value_free(again);
  return 0;
}
