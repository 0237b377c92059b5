/* trawl — queries as JSON lines, trawl batch's schema (queries.h). */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../libcore/src/json/json.h"
#include "options.h"
#include "queries.h"
#include "report.h"

/* Longest value text quoted back in a message. */
#define SHOWN_VALUE_MAX 40

void
query_free(struct query *q)
{
  g_free(q->root);
  g_ptr_array_unref(q->includes);
  g_ptr_array_unref(q->excludes);
  g_free(q);
}

void
query_reader_error(struct query_reader *b, const char *field, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  char *message = field ? g_strdup_printf("%s:%u: %s: %s", b->name, b->line, field, what)
                        : g_strdup_printf("%s:%u: %s", b->name, b->line, what);
  cli_print_message(message);
  g_free(message);
  g_free(what);
  b->line_bad = true;
}

/* V's text as written, shortened for a message. Free with g_free. */
static char *
shown_value(const char *line, const json_value *v)
{
  size_t len = v->end - v->start;
  if (len <= SHOWN_VALUE_MAX)
    return g_strndup(line + v->start, len);
  char *head = g_strndup(line + v->start, SHOWN_VALUE_MAX);
  /* The line is valid UTF-8: only a sequence cut in two stops this. */
  const char *end;
  g_utf8_validate(head, SHOWN_VALUE_MAX, &end);
  head[end - head] = '\0';
  char *shown = g_strconcat(head, "...", NULL);
  g_free(head);
  return shown;
}

/* ---- The keys ---- */

/* What a key's decoder gets: the line (for value texts) and the query. */
struct decode {
  struct query_reader *b;
  struct query *q;
  const char *line;
};

static void
wrong_type(struct decode *d, const char *field, const char *want, const json_value *v)
{
  query_reader_error(d->b, field, "expected %s, not %s", want, json_kind_name(v));
}

static bool
expect_bool(struct decode *d, const char *field, const json_value *v, bool *out)
{
  if (v->kind != JSON_TRUE && v->kind != JSON_FALSE) {
    wrong_type(d, field, "true or false", v);
    return false;
  }
  *out = v->kind == JSON_TRUE;
  return true;
}

/* The key that makes ids equal exactly when their decoded values are: the
 * string's bytes, or the integer's text (-0 is 0). */
static GString *
id_key(const char *line, const json_value *v)
{
  if (v->kind == JSON_STRING) {
    GString *key = g_string_new("s");
    g_string_append_len(key, v->str, (gssize)v->len);
    return key;
  }
  GString *key = g_string_new("i");
  g_string_append_len(key, line + v->start, (gssize)(v->end - v->start));
  if (strcmp(key->str, "i-0") == 0)
    g_string_assign(key, "i0");
  return key;
}

static void
decode_id(struct decode *d, const json_value *v)
{
  if (v->kind != JSON_STRING && !(v->kind == JSON_NUMBER && v->integer)) {
    wrong_type(d, "id", "a string or an integer", v);
    return;
  }
  GString *key = id_key(d->line, v);
  gpointer first = g_hash_table_lookup(d->b->ids, key);
  if (first != NULL) {
    char *shown = shown_value(d->line, v);
    query_reader_error(d->b, "id", "duplicate id %s (first on line %u)", shown, GPOINTER_TO_UINT(first));
    g_free(shown);
    g_string_free(key, TRUE);
    return;
  }
  g_hash_table_insert(d->b->ids, key, GUINT_TO_POINTER(d->b->line));
  d->q->id = d->line + v->start;
  d->q->id_len = v->end - v->start;
}

static void
decode_root(struct decode *d, const json_value *v)
{
  if (v->kind != JSON_STRING) {
    wrong_type(d, "root", "a string", v);
  } else if (v->len == 0) {
    query_reader_error(d->b, "root", "empty (\".\" is the current directory)");
  } else if (memchr(v->str, '\0', v->len) != NULL) {
    query_reader_error(d->b, "root", "holds a NUL byte (\\u0000)");
  } else {
    g_free(d->q->root);
    d->q->root = g_strdup(v->str);
  }
}

static void
decode_dialect(struct decode *d, const json_value *v)
{
  if (v->kind != JSON_STRING) {
    wrong_type(d, "dialect", "a string", v);
    d->q->dialect_ok = false;
  } else if (strlen(v->str) != v->len || !cli_dialect_from_name(v->str, &d->q->dialect)) {
    char *shown = shown_value(d->line, v);
    query_reader_error(d->b, "dialect", "unknown dialect %s (expected \"trawl\", \"git\", \"cmake\" "
               "or \"bazel\")", shown);
    g_free(shown);
    d->q->dialect_ok = false;
  }
}

/* An array of patterns: each compiled in the query's dialect into OUT,
 * every bad one reported. */
static void
decode_patterns(struct decode *d, const char *key, const json_value *v, GPtrArray *out)
{
  if (v->kind != JSON_ARRAY) {
    wrong_type(d, key, "an array of strings", v);
    return;
  }
  for (size_t i = 0; i < v->n; i++) {
    const json_value *item = v->items[i];
    char *field = g_strdup_printf("%s[%zu]", key, i);
    if (item->kind != JSON_STRING) {
      wrong_type(d, field, "a string", item);
    } else if (d->q->dialect_ok) {
      GError *error = NULL;
      TrawlPattern *p = trawl_pattern_compile(item->str, item->len, d->q->dialect, 0, &error);
      if (p != NULL) {
        g_ptr_array_add(out, p);
      } else {
        char *where = g_strdup_printf("%s:%u: %s: ", d->b->name, d->b->line, field);
        cli_report_pattern_error_at(where, item->str, item->len, error);
        g_free(where);
        g_error_free(error);
        d->b->line_bad = true;
      }
    }
    g_free(field);
  }
}

static void
decode_include(struct decode *d, const json_value *v)
{
  if (v->kind == JSON_ARRAY && v->n == 0) {
    query_reader_error(d->b, "include", "an empty array: a query needs a pattern (\"**\" is every "
               "file)");
    return;
  }
  decode_patterns(d, "include", v, d->q->includes);
}

static void
decode_exclude(struct decode *d, const json_value *v)
{
  decode_patterns(d, "exclude", v, d->q->excludes);
}

static void
decode_hidden(struct decode *d, const json_value *v)
{
  expect_bool(d, "hidden", v, &d->q->hidden);
}

static void
decode_ignore(struct decode *d, const json_value *v)
{
  bool ignore;
  if (expect_bool(d, "ignore", v, &ignore))
    d->q->options.ignore = ignore ? TRAWL_IGNORE_VCS | TRAWL_IGNORE_DOT : 0;
}

static void
decode_follow(struct decode *d, const json_value *v)
{
  expect_bool(d, "follow", v, &d->q->options.follow);
}

static void
decode_type(struct decode *d, const json_value *v)
{
  if (v->kind != JSON_ARRAY) {
    wrong_type(d, "type", "an array of \"f\", \"d\", \"l\"", v);
    return;
  }
  if (v->n == 0) {
    query_reader_error(d->b, "type", "an empty array (give one or more of \"f\", \"d\", \"l\")");
    return;
  }
  unsigned mask = 0;
  bool ok = true;
  for (size_t i = 0; i < v->n; i++) {
    const json_value *item = v->items[i];
    char *field = g_strdup_printf("type[%zu]", i);
    const unsigned type = item->kind == JSON_STRING ? cli_entry_type(item->str, item->len) : 0;
    if (item->kind != JSON_STRING) {
      wrong_type(d, field, "a string", item);
      ok = false;
    } else if (type == 0) {
      char *shown = shown_value(d->line, item);
      query_reader_error(d->b, field, "unknown type %s (expected \"f\", \"d\" or \"l\")", shown);
      g_free(shown);
      ok = false;
    } else {
      mask |= type;
    }
    g_free(field);
  }
  if (ok)
    d->q->options.types = mask;
}

static void
decode_max_depth(struct decode *d, const json_value *v)
{
  if (v->kind != JSON_NUMBER || !v->integer) {
    wrong_type(d, "max_depth", "an integer 0 or more", v);
    return;
  }
  char *text = g_strndup(d->line + v->start, v->end - v->start);
  guint64 depth = 0;
  if (text[0] == '-' && strcmp(text, "-0") != 0)
    query_reader_error(d->b, "max_depth", "expected an integer 0 or more, not %s", text);
  else if (!g_ascii_string_to_unsigned(text[0] == '-' ? text + 1 : text, 10, 0, INT_MAX,
                                       &depth, NULL))
    query_reader_error(d->b, "max_depth", "%s is too large (at most %d)", text, INT_MAX);
  else
    d->q->options.max_depth = (int)depth;
  g_free(text);
}

/* The keys, in the order they are decoded (the dialect before the patterns
 * it compiles). */
static const struct key {
  const char *name;
  bool required;
  void (*decode)(struct decode *d, const json_value *v);
} keys[] = {
  {"id", true, decode_id},
  {"root", false, decode_root},
  {"dialect", false, decode_dialect},
  {"include", true, decode_include},
  {"exclude", false, decode_exclude},
  {"hidden", false, decode_hidden},
  {"ignore", false, decode_ignore},
  {"follow", false, decode_follow},
  {"type", false, decode_type},
  {"max_depth", false, decode_max_depth},
};

/* The index in keys[] of the member name NAME (LEN bytes), or -1. */
static int
key_index(const char *name, size_t len)
{
  for (size_t k = 0; k < G_N_ELEMENTS(keys); k++)
    if (strlen(keys[k].name) == len && memcmp(keys[k].name, name, len) == 0)
      return (int)k;
  return -1;
}

/* Decode the object V of the current line into Q. */
static void
decode_query(struct query_reader *b, struct query *q, const char *line, const json_value *v)
{
  const json_value *given[G_N_ELEMENTS(keys)] = {NULL};
  for (size_t m = 0; m < v->n; m++) {
    const json_member *member = &v->members[m];
    int k = key_index(member->name, member->name_len);
    if (k < 0) {
      char *name = g_strndup(member->name, member->name_len);
      query_reader_error(b, name, "unknown key (the keys are id, root, include, exclude, dialect, "
                 "hidden, ignore, follow, type, max_depth)");
      g_free(name);
    } else if (given[k] != NULL) {
      query_reader_error(b, keys[k].name, "duplicate key");
    } else {
      given[k] = member->value;
    }
  }
  struct decode d = {b, q, line};
  for (size_t k = 0; k < G_N_ELEMENTS(keys); k++) {
    if (given[k] != NULL)
      keys[k].decode(&d, given[k]);
    else if (keys[k].required)
      query_reader_error(b, keys[k].name, "missing (every query needs an %s)", keys[k].name);
  }
  /* As the walk command: hidden entries are a rule of the trawl dialect;
   * the others let their patterns decide. */
  q->options.hidden = cli_hidden(q->hidden, q->dialect);
}

/* Decode line number B->line, LEN bytes at LINE; a good query is kept. */
static void
decode_line(struct query_reader *b, const char *line, size_t len)
{
  json_error error;
  json_value *v = json_parse(line, len, &error);
  if (v == NULL) {
    char *message = g_strdup_printf("%s:%u:%zu: invalid JSON: %s", b->name, b->line,
                                    error.offset + 1, error.message);
    cli_print_message(message);
    g_free(message);
    b->line_bad = true;
    return;
  }
  if (v->kind != JSON_OBJECT) {
    query_reader_error(b, NULL, "a query is a JSON object, not %s", json_kind_name(v));
    json_value_free(v);
    return;
  }
  struct query *q = g_new0(struct query, 1);
  q->line = b->line;
  q->root = g_strdup(".");
  q->dialect = TRAWL_DIALECT_TRAWL;
  q->dialect_ok = true;
  q->includes = g_ptr_array_new_with_free_func((GDestroyNotify)trawl_pattern_free);
  q->excludes = g_ptr_array_new_with_free_func((GDestroyNotify)trawl_pattern_free);
  trawl_walk_options_init(&q->options);
  q->options.threads = b->threads;
  decode_query(b, q, line, v);
  json_value_free(v);
  if (b->line_bad)
    query_free(q);
  else
    g_ptr_array_add(b->queries, q);
}

static bool
blank(const char *s, size_t len)
{
  for (size_t i = 0; i < len; i++)
    if (!json_is_space(s[i]))
      return false;
  return true;
}

bool
query_reader_decode(struct query_reader *b, const char *text, size_t len)
{
  size_t start = 0;
  for (b->line = 1; start < len; b->line++) {
    const char *nl = memchr(text + start, '\n', len - start);
    size_t end = nl ? (size_t)(nl - text) : len;
    if (!blank(text + start, end - start)) {
      b->line_bad = false;
      decode_line(b, text + start, end - start);
      b->bad_lines += b->line_bad;
    }
    start = end + 1;
  }
  return b->bad_lines == 0;
}

