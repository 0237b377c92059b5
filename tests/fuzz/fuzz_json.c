/* trawl — libFuzzer target over the JSON reader of `trawl batch`
 * (libcore/src/json/json.c): the whole input is one document.
 *
 * Invariants, each checked with abort() so that libFuzzer reports it:
 *  - the reader accepts exactly what a recognizer of this file's own
 *    accepts: a pushdown automaton with an explicit stack, written from
 *    RFC 8259's grammar and json.h's extra rules, sharing no code with the
 *    reader;
 *  - a refused input gets an error offset within 0..size and a message;
 *  - an accepted input is valid UTF-8 without a NUL byte (checked by a
 *    decoder of this file's own, Unicode table 3-7), and only JSON
 *    whitespace lies outside the value's [start, end);
 *  - every value's [start, end) lies inside its parent's, after its
 *    previous sibling's; a literal's text is exactly "true", "false" or
 *    "null", a string's starts and ends with '"', an array's with '[' and
 *    ']', an object's with '{' and '}'; a number is `integer` exactly when
 *    its text has no '.', 'e' or 'E'; no tree is deeper than
 *    JSON_MAX_DEPTH;
 *  - the text of a value (the first MAX_REPARSED of them), parsed alone,
 *    gives an equal tree;
 *  - the tree written back (strings and names by output_json_string, the
 *    writer of `trawl --format json`; numbers as written) reads back as an
 *    equal tree: for any decoded bytes, \u0000 and the surrogateescape
 *    bytes included, the writer's escaping is the reader's inverse;
 *  - the other way round, the input's own bytes, whatever they are,
 *    written as a JSON string by output_json_string, read back as exactly
 *    those bytes (the reader undoes every escape the writer makes), and
 *    output_json_item (trawl batch's paths) writes the same bytes.
 * Trees are equal when kinds, number texts, decoded string bytes, member
 * names and order all are.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>

#include "json.h"
#include "output.h"
#include "fuzz_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Values whose own text is parsed again, per input. */
#define MAX_REPARSED 64

static const char *cur_data;
static size_t cur_size;

static void
violation(const char *what, const char *extra, size_t extra_len)
{
  fprintf(stderr, "fuzz_json: invariant violated: %s\n", what);
  print_bytes("input", cur_data, cur_size);
  if (extra != NULL)
    print_bytes("also", extra, extra_len);
  abort();
}

/* Length of the valid UTF-8 sequence at S (N bytes left) starting with a
 * byte >= 0x80, or 0 (no overlong forms, no surrogates, <= U+10FFFF). */
static size_t
utf8_sequence(const unsigned char *s, size_t n)
{
  static const struct {
    unsigned char first_lo, first_hi, second_lo, second_hi;
    size_t len;
  } rows[] = {
    {0xc2, 0xdf, 0x80, 0xbf, 2}, {0xe0, 0xe0, 0xa0, 0xbf, 3}, {0xe1, 0xec, 0x80, 0xbf, 3},
    {0xed, 0xed, 0x80, 0x9f, 3}, {0xee, 0xef, 0x80, 0xbf, 3}, {0xf0, 0xf0, 0x90, 0xbf, 4},
    {0xf1, 0xf3, 0x80, 0xbf, 4}, {0xf4, 0xf4, 0x80, 0x8f, 4},
  };
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
    if (s[0] < rows[r].first_lo || s[0] > rows[r].first_hi)
      continue;
    if (n < rows[r].len || s[1] < rows[r].second_lo || s[1] > rows[r].second_hi)
      return 0;
    for (size_t i = 2; i < rows[r].len; i++)
      if (s[i] < 0x80 || s[i] > 0xbf)
        return 0;
    return rows[r].len;
  }
  return 0;
}

static bool
valid_utf8_no_nul(const char *s, size_t n)
{
  const unsigned char *u = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    if (u[i] == 0)
      return false;
    if (u[i] < 0x80) {
      i++;
      continue;
    }
    size_t k = utf8_sequence(u + i, n - i);
    if (k == 0)
      return false;
    i += k;
  }
  return true;
}

/* ---- The recognizer ---- */

static bool
rec_hex4(const unsigned char *s, size_t n, size_t at, long *out)
{
  if (at + 4 > n)
    return false;
  *out = 0;
  for (size_t k = at; k < at + 4; k++) {
    int d = g_ascii_xdigit_value((char)s[k]);
    if (d < 0)
      return false;
    *out = *out * 16 + d;
  }
  return true;
}

/* The string at s[*i] == '"'; moves *I past it. */
static bool
rec_string(const unsigned char *s, size_t n, size_t *i)
{
  size_t k = *i + 1;
  while (k < n) {
    unsigned char c = s[k];
    if (c == '"') {
      *i = k + 1;
      return true;
    }
    if (c < 0x20)
      return false;
    if (c >= 0x80) {
      size_t len = utf8_sequence(s + k, n - k);
      if (len == 0)
        return false;
      k += len;
      continue;
    }
    if (c != '\\') {
      k++;
      continue;
    }
    if (k + 1 >= n)
      return false;
    c = s[k + 1];
    if (c != 0 && strchr("\"\\/bfnrt", c) != NULL) {
      k += 2;
      continue;
    }
    long u, lo;
    if (c != 'u' || !rec_hex4(s, n, k + 2, &u))
      return false;
    k += 6;
    if (u >= 0xd800 && u <= 0xdbff) {
      /* A high surrogate: a low one must follow. */
      if (k + 2 > n || s[k] != '\\' || s[k + 1] != 'u' || !rec_hex4(s, n, k + 2, &lo) ||
          lo < 0xdc00 || lo > 0xdfff)
        return false;
      k += 6;
    } else if (u >= 0xdc00 && u <= 0xdfff && !(u >= 0xdc80 && u <= 0xdcff)) {
      return false; /* a lone low surrogate other than surrogateescape's */
    }
  }
  return false;
}

static bool
rec_digits(const unsigned char *s, size_t n, size_t *k)
{
  size_t from = *k;
  while (*k < n && s[*k] >= '0' && s[*k] <= '9')
    (*k)++;
  return *k > from;
}

static bool
rec_number(const unsigned char *s, size_t n, size_t *i)
{
  size_t k = *i;
  if (s[k] == '-')
    k++;
  if (k < n && s[k] == '0')
    k++;
  else if (!rec_digits(s, n, &k))
    return false;
  if (k < n && s[k] == '.') {
    k++;
    if (!rec_digits(s, n, &k))
      return false;
  }
  if (k < n && (s[k] == 'e' || s[k] == 'E')) {
    k++;
    if (k < n && (s[k] == '+' || s[k] == '-'))
      k++;
    if (!rec_digits(s, n, &k))
      return false;
  }
  *i = k;
  return true;
}

/* What the automaton expects next. */
enum rec_state { WANT_VALUE, WANT_VALUE_OR_CLOSE, WANT_KEY, WANT_KEY_OR_CLOSE, WANT_COLON,
                 WANT_COMMA_OR_CLOSE, WANT_END };

static bool
recognize(const unsigned char *s, size_t n)
{
  char stack[JSON_MAX_DEPTH];
  size_t depth = 0, i = 0;
  enum rec_state st = WANT_VALUE;
  for (;;) {
    while (i < n && json_is_space((char)s[i]))
      i++;
    if (i == n)
      return st == WANT_END;
    unsigned char c = s[i];
    bool value = false;
    switch (st) {
    case WANT_END:
      return false;
    case WANT_COLON:
      if (c != ':')
        return false;
      i++;
      st = WANT_VALUE;
      continue;
    case WANT_KEY_OR_CLOSE:
    case WANT_VALUE_OR_CLOSE:
      if (c == (st == WANT_KEY_OR_CLOSE ? '}' : ']')) {
        i++;
        depth--;
        value = true;
        break;
      }
      G_GNUC_FALLTHROUGH;
    case WANT_KEY:
      if (st == WANT_KEY || st == WANT_KEY_OR_CLOSE) {
        if (c != '"' || !rec_string(s, n, &i))
          return false;
        st = WANT_COLON;
        continue;
      }
      G_GNUC_FALLTHROUGH;
    case WANT_VALUE:
      if (c == '[' || c == '{') {
        if (depth == JSON_MAX_DEPTH)
          return false;
        stack[depth++] = (char)c;
        i++;
        st = c == '[' ? WANT_VALUE_OR_CLOSE : WANT_KEY_OR_CLOSE;
        continue;
      }
      if (c == '"') {
        if (!rec_string(s, n, &i))
          return false;
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        if (!rec_number(s, n, &i))
          return false;
      } else {
        static const char *const literals[] = {"true", "false", "null"};
        size_t k = 0;
        while (k < 3 && !(n - i >= strlen(literals[k]) &&
                          memcmp(s + i, literals[k], strlen(literals[k])) == 0))
          k++;
        if (k == 3)
          return false;
        i += strlen(literals[k]);
      }
      value = true;
      break;
    case WANT_COMMA_OR_CLOSE:
      if (c == ',') {
        i++;
        st = stack[depth - 1] == '[' ? WANT_VALUE : WANT_KEY;
        continue;
      }
      if (c != (stack[depth - 1] == '[' ? ']' : '}'))
        return false;
      i++;
      depth--;
      value = true;
      break;
    }
    g_assert(value);
    st = depth > 0 ? WANT_COMMA_OR_CLOSE : WANT_END;
  }
}

/* ---- The reader's trees ---- */

/* Check V (its text in TEXT) and its children; returns how deep it is. */
static unsigned
check_shape(const char *text, const json_value *v, size_t lo, size_t hi)
{
  if (v->start < lo || v->end > hi || v->start >= v->end)
    violation("a value's text lies outside its parent's", text + lo, hi - lo);
  const char *t = text + v->start;
  size_t n = v->end - v->start;
  static const char *const literal[] = {[JSON_NULL] = "null", [JSON_FALSE] = "false",
                                        [JSON_TRUE] = "true"};
  unsigned depth = 0;
  size_t after = v->start + 1;
  switch (v->kind) {
  case JSON_NULL: case JSON_FALSE: case JSON_TRUE:
    if (n != strlen(literal[v->kind]) || memcmp(t, literal[v->kind], n) != 0)
      violation("a literal's text is not its literal", t, n);
    break;
  case JSON_NUMBER: {
    bool plain = memchr(t, '.', n) == NULL && memchr(t, 'e', n) == NULL &&
                 memchr(t, 'E', n) == NULL;
    if (plain != v->integer)
      violation("integer disagrees with the number's text", t, n);
    break;
  }
  case JSON_STRING:
    if (n < 2 || t[0] != '"' || t[n - 1] != '"' || v->str == NULL || v->str[v->len] != '\0')
      violation("a string's text or bytes are malformed", t, n);
    break;
  case JSON_ARRAY:
    if (t[0] != '[' || t[n - 1] != ']')
      violation("an array's text is not in brackets", t, n);
    for (size_t i = 0; i < v->n; i++) {
      unsigned d = check_shape(text, v->items[i], after, v->end - 1);
      depth = MAX(depth, d);
      after = v->items[i]->end;
    }
    depth++;
    break;
  case JSON_OBJECT:
    if (t[0] != '{' || t[n - 1] != '}')
      violation("an object's text is not in braces", t, n);
    for (size_t i = 0; i < v->n; i++) {
      if (v->members[i].name == NULL || v->members[i].name[v->members[i].name_len] != '\0')
        violation("a member name is malformed", t, n);
      unsigned d = check_shape(text, v->members[i].value, after, v->end - 1);
      depth = MAX(depth, d);
      after = v->members[i].value->end;
    }
    depth++;
    break;
  }
  return depth;
}

static bool
same_tree(const char *ta, const json_value *a, const char *tb, const json_value *b)
{
  if (a->kind != b->kind || a->n != b->n)
    return false;
  switch (a->kind) {
  case JSON_NULL: case JSON_FALSE: case JSON_TRUE:
    return true;
  case JSON_NUMBER:
    return a->integer == b->integer && a->end - a->start == b->end - b->start &&
           memcmp(ta + a->start, tb + b->start, a->end - a->start) == 0;
  case JSON_STRING:
    return a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
  case JSON_ARRAY:
    for (size_t i = 0; i < a->n; i++)
      if (!same_tree(ta, a->items[i], tb, b->items[i]))
        return false;
    return true;
  case JSON_OBJECT:
    for (size_t i = 0; i < a->n; i++) {
      const json_member *ma = &a->members[i], *mb = &b->members[i];
      if (ma->name_len != mb->name_len || memcmp(ma->name, mb->name, ma->name_len) != 0 ||
          !same_tree(ta, ma->value, tb, mb->value))
        return false;
    }
    return true;
  }
  return false;
}

/* V written back as JSON: compact, strings in the output's escaping. */
static void
write_value(GString *out, const char *text, const json_value *v)
{
  switch (v->kind) {
  case JSON_NULL: g_string_append(out, "null"); break;
  case JSON_FALSE: g_string_append(out, "false"); break;
  case JSON_TRUE: g_string_append(out, "true"); break;
  case JSON_NUMBER:
    g_string_append_len(out, text + v->start, (gssize)(v->end - v->start));
    break;
  case JSON_STRING: output_json_string(out, v->str, v->len); break;
  case JSON_ARRAY:
    g_string_append_c(out, '[');
    for (size_t i = 0; i < v->n; i++) {
      if (i)
        g_string_append_c(out, ',');
      write_value(out, text, v->items[i]);
    }
    g_string_append_c(out, ']');
    break;
  case JSON_OBJECT:
    g_string_append_c(out, '{');
    for (size_t i = 0; i < v->n; i++) {
      if (i)
        g_string_append_c(out, ',');
      output_json_string(out, v->members[i].name, v->members[i].name_len);
      g_string_append_c(out, ':');
      write_value(out, text, v->members[i].value);
    }
    g_string_append_c(out, '}');
    break;
  }
}

/* Parse the text of V and of its descendants alone; *BUDGET limits how many. */
static void
check_reparse(const char *text, const json_value *v, unsigned *budget)
{
  if (*budget == 0)
    return;
  (*budget)--;
  size_t n = v->end - v->start;
  /* An exact-size copy, so that a read past the end is an overflow. */
  char *copy = g_malloc(n);
  memcpy(copy, text + v->start, n);
  json_error error;
  json_value *again = json_parse(copy, n, &error);
  if (again == NULL || again->start != 0 || again->end != n ||
      !same_tree(text, v, copy, again))
    violation("a value's own text does not parse to the same value", copy, n);
  json_value_free(again);
  g_free(copy);
  for (size_t i = 0; v->kind == JSON_ARRAY && i < v->n; i++)
    check_reparse(text, v->items[i], budget);
  for (size_t i = 0; v->kind == JSON_OBJECT && i < v->n; i++)
    check_reparse(text, v->members[i].value, budget);
}

/* Any bytes, written as a JSON string, read back as themselves. */
static void
check_bytes_round_trip(const char *text, size_t size)
{
  GString *written = g_string_new(NULL);
  output_json_string(written, text, size);
  json_error error;
  json_value *v = json_parse(written->str, written->len, &error);
  if (v == NULL || v->kind != JSON_STRING || v->len != size ||
      memcmp(v->str, text, size) != 0)
    violation("bytes written as a JSON string do not read back as themselves", written->str,
              written->len);
  json_value_free(v);

  /* trawl batch's writer, straight into the output's buffer (no flush at
   * these sizes: the bytes stay there), writes the same string: as the
   * first item of an array and after a ','. */
  output out;
  output_init(&out, -1, OUTPUT_LINES, "", 0);
  output_json_item(&out, true, text, size);
  output_json_item(&out, false, text, size);
  if (out.len != 2 * written->len + 1 || memcmp(out.buf, written->str, written->len) != 0 ||
      out.buf[written->len] != ',' ||
      memcmp(out.buf + written->len + 1, written->str, written->len) != 0)
    violation("output_json_item() writes other bytes than output_json_string()", out.buf,
              out.len);
  output_abort(&out);
  output_release(&out);
  g_string_free(written, TRUE);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  /* An exact-size copy, so that a read past SIZE is an overflow. */
  char *text = g_malloc(size ? size : 1);
  if (size)
    memcpy(text, data, size);
  cur_data = text;
  cur_size = size;
  check_bytes_round_trip(text, size);

  json_error error;
  memset(&error, 0, sizeof error);
  json_value *v = json_parse(text, size, &error);
  if ((v != NULL) != recognize((const unsigned char *)text, size))
    violation(v ? "the reader accepts what the recognizer refuses"
                : "the reader refuses what the recognizer accepts", error.message,
              v ? 0 : strlen(error.message));
  if (v == NULL) {
    if (error.offset > size || error.message[0] == '\0' ||
        memchr(error.message, '\0', sizeof error.message) == NULL)
      violation("a refusal without an offset inside the input or a message", NULL, 0);
    g_free(text);
    return 0;
  }

  if (!valid_utf8_no_nul(text, size))
    violation("accepted input that is not UTF-8, or holds NUL", NULL, 0);
  for (size_t i = 0; i < size; i++)
    if ((i < v->start || i >= v->end) && !json_is_space(text[i]))
      violation("accepted input with more than whitespace around the value", NULL, 0);
  if (check_shape(text, v, 0, size) > JSON_MAX_DEPTH)
    violation("a tree deeper than JSON_MAX_DEPTH", NULL, 0);

  unsigned budget = MAX_REPARSED;
  check_reparse(text, v, &budget);

  GString *written = g_string_new(NULL);
  write_value(written, text, v);
  json_value *back = json_parse(written->str, written->len, &error);
  if (back == NULL)
    violation("the tree written back does not parse", written->str, written->len);
  if (!same_tree(text, v, written->str, back))
    violation("the tree written back reads as another tree", written->str, written->len);
  json_value_free(back);
  g_string_free(written, TRUE);

  json_value_free(v);
  g_free(text);
  return 0;
}
