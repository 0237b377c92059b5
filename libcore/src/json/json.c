/* trawl — the JSON reader (json.h has the accepted language).
 *
 * Recursive descent over the bytes, one pass, no tokenizer: each value
 * starts at a byte that tells its kind ('{', '[', '"', '-', a digit, 't',
 * 'f', 'n'), and its parser leaves the position just after its text, which
 * is how every value knows its [start, end). Recursion is bounded by
 * JSON_MAX_DEPTH, so hostile input cannot exhaust the stack. UTF-8 is
 * checked where it can occur at all, inside strings (anywhere else a byte
 * >= 0x80 is simply not a token); the first error stops the parse and
 * keeps its offset, so a message can point at the column.
 */
#include "json.h"

#include <stdarg.h>
#include <string.h>
#include <glib.h>

struct reader {
  const char *s;
  size_t len;
  size_t pos;
  unsigned depth;
  json_error *error;
  bool failed;
};

static void fail(struct reader *r, size_t offset, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

/* Record the first error only: later ones are consequences of it. */
static void
fail(struct reader *r, size_t offset, const char *fmt, ...)
{
  if (r->failed)
    return;
  r->failed = true;
  r->error->offset = offset;
  va_list ap;
  va_start(ap, fmt);
  g_vsnprintf(r->error->message, sizeof r->error->message, fmt, ap);
  va_end(ap);
}

bool
json_is_space(char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void
skip_space(struct reader *r)
{
  while (r->pos < r->len && json_is_space(r->s[r->pos]))
    r->pos++;
}

static bool
at_end(const struct reader *r)
{
  return r->pos >= r->len;
}

/* "expected X": pointing at the byte found, or at the end. */
static void
expected(struct reader *r, const char *what)
{
  if (at_end(r))
    fail(r, r->pos, "expected %s before the end of the line", what);
  else
    fail(r, r->pos, "expected %s", what);
}

static json_value *
new_value(JsonKind kind, size_t start)
{
  json_value *v = g_new0(json_value, 1);
  v->kind = kind;
  v->start = start;
  return v;
}

void
json_value_free(json_value *v)
{
  if (v == NULL)
    return;
  g_free(v->str);
  for (size_t i = 0; v->kind == JSON_ARRAY && i < v->n; i++)
    json_value_free(v->items[i]);
  for (size_t i = 0; v->kind == JSON_OBJECT && i < v->n; i++) {
    g_free(v->members[i].name);
    json_value_free(v->members[i].value);
  }
  g_free(v->items);
  g_free(v->members);
  g_free(v);
}

const char *
json_kind_name(const json_value *v)
{
  switch (v->kind) {
  case JSON_NULL: return "null";
  case JSON_FALSE: return "false";
  case JSON_TRUE: return "true";
  case JSON_NUMBER: return v->integer ? "an integer" : "a number";
  case JSON_STRING: return "a string";
  case JSON_ARRAY: return "an array";
  case JSON_OBJECT: return "an object";
  }
  return "a value";
}

/* ---- Strings ---- */

/* The value of the 4 hex digits at S, or -1. */
static long
hex4(const char *s)
{
  long v = 0;
  for (int i = 0; i < 4; i++) {
    int d = g_ascii_xdigit_value(s[i]);
    if (d < 0)
      return -1;
    v = v * 16 + d;
  }
  return v;
}

/* The \uXXXX escape at r->pos (just after the backslash's 'u'), and a
 * second one for a surrogate pair; appends the decoded bytes to OUT. */
static bool
unicode_escape(struct reader *r, GString *out)
{
  size_t esc = r->pos - 2; /* the backslash */
  long cp = r->len - r->pos >= 4 ? hex4(r->s + r->pos) : -1;
  if (cp < 0) {
    fail(r, esc, "\\u needs four hex digits");
    return false;
  }
  r->pos += 4;
  if (cp >= 0xd800 && cp <= 0xdbff) {
    long lo = -1;
    if (r->len - r->pos >= 6 && r->s[r->pos] == '\\' && r->s[r->pos + 1] == 'u')
      lo = hex4(r->s + r->pos + 2);
    if (lo < 0xdc00 || lo > 0xdfff) {
      fail(r, esc, "lone surrogate \\u%04lx: a high surrogate needs a low one (\\udc00-\\udfff) "
           "right after it", cp);
      return false;
    }
    r->pos += 6;
    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
  } else if (cp >= 0xdc80 && cp <= 0xdcff) {
    /* surrogateescape: one raw byte (json.h). */
    g_string_append_c(out, (char)(cp - 0xdc00));
    return true;
  } else if (cp >= 0xdc00 && cp <= 0xdfff) {
    fail(r, esc, "lone surrogate \\u%04lx", cp);
    return false;
  }
  char utf8[6];
  g_string_append_len(out, utf8, g_unichar_to_utf8((gunichar)cp, utf8));
  return true;
}

/* The string at r->pos (its opening quote); returns its decoded bytes. */
static GString *
read_string(struct reader *r)
{
  g_assert(r->s[r->pos] == '"');
  size_t open = r->pos++;
  GString *out = g_string_new(NULL);
  for (;;) {
    /* Copy the run of plain bytes in one piece. */
    size_t run = r->pos;
    while (r->pos < r->len) {
      unsigned char c = (unsigned char)r->s[r->pos];
      if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80)
        break;
      r->pos++;
    }
    g_string_append_len(out, r->s + run, (gssize)(r->pos - run));
    if (at_end(r)) {
      fail(r, open, "unterminated string");
      break;
    }
    unsigned char c = (unsigned char)r->s[r->pos];
    if (c == '"') {
      r->pos++;
      return out;
    }
    if (c < 0x20) {
      if (c == 0)
        fail(r, r->pos, "a NUL byte in a string (write \\u0000)");
      else
        fail(r, r->pos, "a control character (U+%04X) in a string must be escaped", c);
      break;
    }
    if (c >= 0x80) {
      gunichar u = g_utf8_get_char_validated(r->s + r->pos, (gssize)(r->len - r->pos));
      if (u == (gunichar)-1 || u == (gunichar)-2) {
        fail(r, r->pos, "invalid UTF-8");
        break;
      }
      size_t n = (size_t)g_utf8_skip[c];
      g_string_append_len(out, r->s + r->pos, (gssize)n);
      r->pos += n;
      continue;
    }
    /* A backslash. */
    if (r->len - r->pos < 2) {
      fail(r, open, "unterminated string");
      break;
    }
    char e = r->s[r->pos + 1];
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *k = e ? strchr(from, e) : NULL;
    r->pos += 2;
    if (k) {
      g_string_append_c(out, to[k - from]);
    } else if (e == 'u') {
      if (!unicode_escape(r, out))
        break;
    } else {
      if ((unsigned char)e >= 0x20 && (unsigned char)e < 0x7f)
        fail(r, r->pos - 2, "invalid escape \\%c", e);
      else
        fail(r, r->pos - 2, "invalid escape");
      break;
    }
  }
  g_string_free(out, TRUE);
  return NULL;
}

static json_value *
parse_string(struct reader *r)
{
  size_t start = r->pos;
  GString *s = read_string(r);
  if (s == NULL)
    return NULL;
  json_value *v = new_value(JSON_STRING, start);
  v->len = s->len;
  v->str = g_string_free(s, FALSE);
  v->end = r->pos;
  return v;
}

/* ---- Numbers and literals ---- */

static size_t
skip_digits(struct reader *r)
{
  size_t from = r->pos;
  while (r->pos < r->len && g_ascii_isdigit(r->s[r->pos]))
    r->pos++;
  return r->pos - from;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static json_value *
parse_number(struct reader *r)
{
  size_t start = r->pos;
  if (r->s[r->pos] == '-')
    r->pos++;
  if (!at_end(r) && r->s[r->pos] == '0') {
    r->pos++;
    if (!at_end(r) && g_ascii_isdigit(r->s[r->pos])) {
      fail(r, start, "invalid number: a leading zero");
      return NULL;
    }
  } else if (skip_digits(r) == 0) {
    fail(r, start, "invalid number: a digit must follow '-'");
    return NULL;
  }
  bool integer = true;
  if (!at_end(r) && r->s[r->pos] == '.') {
    r->pos++;
    integer = false;
    if (skip_digits(r) == 0) {
      fail(r, start, "invalid number: a digit must follow '.'");
      return NULL;
    }
  }
  if (!at_end(r) && (r->s[r->pos] == 'e' || r->s[r->pos] == 'E')) {
    r->pos++;
    integer = false;
    if (!at_end(r) && (r->s[r->pos] == '+' || r->s[r->pos] == '-'))
      r->pos++;
    if (skip_digits(r) == 0) {
      fail(r, start, "invalid number: a digit must follow the exponent's 'e'");
      return NULL;
    }
  }
  json_value *v = new_value(JSON_NUMBER, start);
  v->integer = integer;
  v->end = r->pos;
  return v;
}

static json_value *
parse_literal(struct reader *r)
{
  static const struct {
    const char *text;
    JsonKind kind;
  } table[] = {{"true", JSON_TRUE}, {"false", JSON_FALSE}, {"null", JSON_NULL}};
  for (size_t i = 0; i < G_N_ELEMENTS(table); i++) {
    size_t n = strlen(table[i].text);
    if (r->s[r->pos] == table[i].text[0]) {
      if (r->len - r->pos < n || memcmp(r->s + r->pos, table[i].text, n) != 0) {
        fail(r, r->pos, "invalid literal (expected %s)", table[i].text);
        return NULL;
      }
      json_value *v = new_value(table[i].kind, r->pos);
      r->pos += n;
      v->end = r->pos;
      return v;
    }
  }
  expected(r, "a value");
  return NULL;
}

/* ---- Arrays and objects ---- */

static json_value *parse_value(struct reader *r);

/* After '[' or '{': one level deeper, or an error. */
static bool
enter(struct reader *r)
{
  if (++r->depth > JSON_MAX_DEPTH) {
    fail(r, r->pos, "nesting deeper than %d levels", JSON_MAX_DEPTH);
    return false;
  }
  r->pos++;
  skip_space(r);
  return true;
}

/* After an element or a member: ',' and more, or CLOSE. Returns true while
 * another element follows. */
static bool
next_or_close(struct reader *r, char close, const char *what)
{
  skip_space(r);
  if (!at_end(r) && r->s[r->pos] == ',') {
    r->pos++;
    skip_space(r);
    if (!at_end(r) && r->s[r->pos] == close) {
      fail(r, r->pos, "expected %s after ',' (no trailing comma)", what);
      return false;
    }
    return true;
  }
  if (!at_end(r) && r->s[r->pos] == close) {
    r->pos++;
    return false;
  }
  expected(r, close == ']' ? "',' or ']'" : "',' or '}'");
  return false;
}

static json_value *
parse_array(struct reader *r)
{
  json_value *v = new_value(JSON_ARRAY, r->pos);
  if (!enter(r))
    return v;
  GPtrArray *items = g_ptr_array_new();
  if (!at_end(r) && r->s[r->pos] == ']') {
    r->pos++;
  } else {
    do {
      json_value *item = parse_value(r);
      if (item == NULL)
        break;
      g_ptr_array_add(items, item);
    } while (next_or_close(r, ']', "a value"));
  }
  r->depth--;
  v->n = items->len;
  v->items = (json_value **)g_ptr_array_free(items, FALSE);
  v->end = r->pos;
  return v;
}

static json_value *
parse_object(struct reader *r)
{
  json_value *v = new_value(JSON_OBJECT, r->pos);
  if (!enter(r))
    return v;
  GArray *members = g_array_new(FALSE, FALSE, sizeof(json_member));
  if (!at_end(r) && r->s[r->pos] == '}') {
    r->pos++;
  } else {
    do {
      if (at_end(r) || r->s[r->pos] != '"') {
        expected(r, "a member name in double quotes");
        break;
      }
      GString *name = read_string(r);
      if (name == NULL)
        break;
      skip_space(r);
      if (at_end(r) || r->s[r->pos] != ':') {
        g_string_free(name, TRUE);
        expected(r, "':'");
        break;
      }
      r->pos++;
      skip_space(r);
      json_value *value = parse_value(r);
      if (value == NULL) {
        g_string_free(name, TRUE);
        break;
      }
      json_member m = {.name_len = name->len, .value = value};
      m.name = g_string_free(name, FALSE);
      g_array_append_val(members, m);
    } while (next_or_close(r, '}', "a member"));
  }
  r->depth--;
  v->n = members->len;
  v->members = (json_member *)(void *)g_array_free(members, FALSE);
  v->end = r->pos;
  return v;
}

/* The value at r->pos (no whitespace before it); NULL after an error. An
 * array or object cut short by an error is returned whole so far and freed
 * by the caller of json_parse. */
static json_value *
parse_value(struct reader *r)
{
  if (at_end(r)) {
    expected(r, "a value");
    return NULL;
  }
  json_value *v;
  switch (r->s[r->pos]) {
  case '{': v = parse_object(r); break;
  case '[': v = parse_array(r); break;
  case '"': return parse_string(r);
  case '-': case '0': case '1': case '2': case '3': case '4':
  case '5': case '6': case '7': case '8': case '9':
    return parse_number(r);
  default: return parse_literal(r);
  }
  if (r->failed) {
    json_value_free(v);
    return NULL;
  }
  return v;
}

json_value *
json_parse(const char *text, size_t len, json_error *error)
{
  struct reader r = {.s = text, .len = len, .error = error};
  skip_space(&r);
  json_value *v = parse_value(&r);
  if (v == NULL)
    return NULL;
  skip_space(&r);
  if (!at_end(&r)) {
    fail(&r, r.pos, "unexpected text after the value");
    json_value_free(v);
    return NULL;
  }
  return v;
}
