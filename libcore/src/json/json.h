/* trawl — a strict JSON reader (RFC 8259): `trawl batch`'s input lines;
 * and, as a tree of values only, watchman's BSER answers to the cache's
 * re-check (cache/watchman.c reads them into it).
 *
 * json_parse() reads one whole document held in memory into a tree of
 * values, or reports the first error with its byte offset. It accepts
 * exactly RFC 8259: objects, arrays, strings with every escape (\uXXXX
 * surrogate pairs included), numbers, true, false, null, whitespace between
 * tokens, and nothing after the value. It refuses input that is not UTF-8, a
 * NUL byte or an unescaped control character, a lone surrogate escape, and
 * nesting deeper than JSON_MAX_DEPTH. One extension, so that file names
 * that are not UTF-8 travel both ways: a lone low surrogate \udc80..\udcff
 * decodes to the single byte 0x80..0xff, as Python's surrogateescape does
 * and as `trawl --format json` writes such bytes (output.h). A string's
 * decoded bytes may therefore hold NUL (from \u0000) and bytes that are not
 * UTF-8; the caller decides where that is allowed.
 *
 * Duplicate member names are kept, in input order: whether they are an
 * error is the caller's rule. Every value records where its text lies in
 * the input, so a caller can echo a value exactly as it was written.
 *
 * Ownership: json_parse() returns a tree the caller frees with
 * json_value_free(); every pointer in it belongs to the tree. The tree does
 * not point into the input. No global state: any thread may parse.
 */
#ifndef TRAWL_JSON_H
#define TRAWL_JSON_H

#include <stdbool.h>
#include <stddef.h>

/* Deepest nesting of arrays and objects accepted; a document's top-level
 * array or object is level 1. Bounds the reader's recursion. */
#define JSON_MAX_DEPTH 64

typedef enum {
  JSON_NULL,
  JSON_FALSE,
  JSON_TRUE,
  JSON_NUMBER,
  JSON_STRING,
  JSON_ARRAY,
  JSON_OBJECT,
} JsonKind;

typedef struct json_value json_value;

/* One member of an object: its decoded name and its value. */
typedef struct {
  char *name;        /* name_len decoded bytes, NUL-terminated (may hold NUL) */
  size_t name_len;
  json_value *value;
} json_member;

struct json_value {
  JsonKind kind;
  size_t start, end;    /* the value's text is input bytes [start, end) */
  bool integer;         /* JSON_NUMBER without fraction or exponent */
  char *str;            /* JSON_STRING: len decoded bytes, NUL-terminated */
  size_t len;
  json_value **items;   /* JSON_ARRAY: n elements */
  json_member *members; /* JSON_OBJECT: n members, in input order */
  size_t n;
};

/* What json_parse() refused, and where. */
typedef struct {
  size_t offset;      /* byte offset of the offending byte (the input's length
                         when the input ended too early) */
  char message[128];  /* what was expected or found, without a trailing '.' */
} json_error;

/* Parse the LEN bytes of TEXT as one JSON document. Returns a new tree (free
 * with json_value_free), or NULL with *ERROR filled in. */
json_value *json_parse(const char *text, size_t len, json_error *error);

/* Free a tree from json_parse(); NULL is allowed. */
void json_value_free(json_value *v);

/* "a string", "an array", "true", ... for messages. Static storage. */
const char *json_kind_name(const json_value *v);

/* Is C a whitespace byte between JSON tokens (space, tab, LF, CR)? */
bool json_is_space(char c);

#endif /* TRAWL_JSON_H */
