/* trawl batch [OPTIONS] QUERIES — many queries, one walk per root
 * (docs/cli.md, "trawl batch", is its reference).
 *
 * Shape: read the whole input; decode each line that is not blank into a
 * query — the JSON reader (json.h), then the key table below, then the
 * patterns compiled in the query's dialect — and report every bad line,
 * not only the first. If any line was bad, stop: exit 2. Otherwise add the
 * queries to one plan (trawl/plan.h) and run it: queries that share a root
 * and the settings that shape the traversal share one walk. Only when
 * every query has been answered is anything printed: one JSON line per
 * query, in input order. A consumer never sees part of an answer as if it
 * were the whole.
 */
#define _POSIX_C_SOURCE 200809L /* open, read */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "format-cmake.h"
#include "json.h"
#include "output.h"
#include "trawl/plan.h"

/* -j when not given. */
#define UNSET_NUMBER INT_MIN
/* Longest value text quoted back in a message. */
#define SHOWN_VALUE_MAX 40

static const char batch_description[] =
  "QUERIES is a file of JSON lines, or '-' for stdin. Each line that is not\n"
  "blank is one query, an object with the keys:\n"
  "  id         a string or an integer, echoed back as written (required,\n"
  "             unique)\n"
  "  root       the directory to walk (default \".\"), as -C\n"
  "  include    array of patterns (required, at least one)\n"
  "  exclude    array of patterns (default []), as -x\n"
  "  dialect    \"trawl\" (default), \"git\", \"cmake\" or \"bazel\", as --dialect\n"
  "  hidden     true: visit hidden entries, as -H (default false)\n"
  "  ignore     false: read no ignore file, as -I (default true)\n"
  "  follow     true: follow symbolic links, as -L (default false)\n"
  "  type       array of \"f\", \"d\", \"l\" (default [\"f\"]), as -t\n"
  "  max_depth  an integer 0 or more, as -d (default unlimited)\n"
  "Each query gets exactly what `trawl` with those options prints; queries\n"
  "with the same root and the same ignore and follow settings share one walk.\n"
  "\n"
  "Prints one line per query, in input order, once every query is answered:\n"
  "  {\"id\":ID,\"paths\":[\"PATH\",...]}\n"
  "paths sorted bytewise and escaped as `trawl --format json` escapes them.\n"
  "\n"
  "A bad line (invalid JSON, an unknown or repeated key, a wrong type, a bad\n"
  "pattern, a repeated id) or a root that cannot be walked is reported as\n"
  "QUERIES:LINE: KEY: why; every bad line is reported, and nothing is printed\n"
  "on stdout.\n"
  "\n"
  "Exit status: 0 every query was answered; 2 usage error, a bad line or a\n"
  "root that cannot be walked; 3 writing the output failed, or --strict and\n"
  "a problem (an unreadable directory, a link loop) was reported.";

/* One query, as decoded from its line. */
struct query {
  unsigned line;             /* 1-based line of the input */
  const char *id;            /* the id's text as written, in the input */
  size_t id_len;
  char *root;
  TrawlDialect dialect;
  bool dialect_ok;           /* false: the patterns are not compiled */
  bool hidden;
  GPtrArray *includes;       /* trawl_pattern *, owned */
  GPtrArray *excludes;
  trawl_walk_options options;
};

/* The input and everything decoded from it. */
struct batch {
  const char *name;          /* the input as messages name it */
  unsigned line;             /* the line being decoded */
  bool line_bad;             /* a problem of it was reported */
  unsigned bad_lines;
  unsigned threads;
  bool cmake;                /* --format cmake */
  GPtrArray *queries;        /* struct query *, in input order */
  GHashTable *ids;           /* GString key (id_key) -> first line */
};

static void
query_free(struct query *q)
{
  g_free(q->root);
  g_ptr_array_unref(q->includes);
  g_ptr_array_unref(q->excludes);
  g_free(q);
}

static void line_error(struct batch *b, const char *field, const char *fmt, ...)
  G_GNUC_PRINTF(3, 4);

/* Report a problem of the current line: "NAME:LINE: FIELD: what". */
static void
line_error(struct batch *b, const char *field, const char *fmt, ...)
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
  struct batch *b;
  struct query *q;
  const char *line;
};

static void
wrong_type(struct decode *d, const char *field, const char *want, const json_value *v)
{
  line_error(d->b, field, "expected %s, not %s", want, json_kind_name(v));
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
    line_error(d->b, "id", "duplicate id %s (first on line %u)", shown, GPOINTER_TO_UINT(first));
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
    line_error(d->b, "root", "empty (\".\" is the current directory)");
  } else if (memchr(v->str, '\0', v->len) != NULL) {
    line_error(d->b, "root", "holds a NUL byte (\\u0000)");
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
    line_error(d->b, "dialect", "unknown dialect %s (expected \"trawl\", \"git\", \"cmake\" "
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
      trawl_pattern *p = trawl_pattern_compile(item->str, item->len, d->q->dialect, 0, &error);
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
    line_error(d->b, "include", "an empty array: a query needs a pattern (\"**\" is every "
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
  static const struct {
    const char *name;
    unsigned type;
  } table[] = {{"f", TRAWL_ENTRY_FILE}, {"d", TRAWL_ENTRY_DIR}, {"l", TRAWL_ENTRY_SYMLINK}};
  if (v->kind != JSON_ARRAY) {
    wrong_type(d, "type", "an array of \"f\", \"d\", \"l\"", v);
    return;
  }
  if (v->n == 0) {
    line_error(d->b, "type", "an empty array (give one or more of \"f\", \"d\", \"l\")");
    return;
  }
  unsigned mask = 0;
  bool ok = true;
  for (size_t i = 0; i < v->n; i++) {
    const json_value *item = v->items[i];
    char *field = g_strdup_printf("type[%zu]", i);
    size_t k = 0;
    while (item->kind == JSON_STRING && k < G_N_ELEMENTS(table) &&
           strcmp(item->str, table[k].name) != 0)
      k++;
    if (item->kind != JSON_STRING) {
      wrong_type(d, field, "a string", item);
      ok = false;
    } else if (k == G_N_ELEMENTS(table) || item->len != 1) {
      char *shown = shown_value(d->line, item);
      line_error(d->b, field, "unknown type %s (expected \"f\", \"d\" or \"l\")", shown);
      g_free(shown);
      ok = false;
    } else {
      mask |= table[k].type;
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
    line_error(d->b, "max_depth", "expected an integer 0 or more, not %s", text);
  else if (!g_ascii_string_to_unsigned(text[0] == '-' ? text + 1 : text, 10, 0, INT_MAX,
                                       &depth, NULL))
    line_error(d->b, "max_depth", "%s is too large (at most %d)", text, INT_MAX);
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
decode_query(struct batch *b, struct query *q, const char *line, const json_value *v)
{
  const json_value *given[G_N_ELEMENTS(keys)] = {NULL};
  for (size_t m = 0; m < v->n; m++) {
    const json_member *member = &v->members[m];
    int k = key_index(member->name, member->name_len);
    if (k < 0) {
      char *name = g_strndup(member->name, member->name_len);
      line_error(b, name, "unknown key (the keys are id, root, include, exclude, dialect, "
                 "hidden, ignore, follow, type, max_depth)");
      g_free(name);
    } else if (given[k] != NULL) {
      line_error(b, keys[k].name, "duplicate key");
    } else {
      given[k] = member->value;
    }
  }
  struct decode d = {b, q, line};
  for (size_t k = 0; k < G_N_ELEMENTS(keys); k++) {
    if (given[k] != NULL)
      keys[k].decode(&d, given[k]);
    else if (keys[k].required)
      line_error(b, keys[k].name, "missing (every query needs an %s)", keys[k].name);
  }
  /* As the walk command: hidden entries are a rule of the trawl dialect;
   * the others let their patterns decide. */
  q->options.hidden = q->hidden || q->dialect != TRAWL_DIALECT_TRAWL;
}

/* Decode line number B->line, LEN bytes at LINE; a good query is kept. */
static void
decode_line(struct batch *b, const char *line, size_t len)
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
    line_error(b, NULL, "a query is a JSON object, not %s", json_kind_name(v));
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

/* Decode every line of the LEN bytes at TEXT; false if any was bad. */
static bool
decode_input(struct batch *b, const char *text, size_t len)
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

/* ---- Input and output ---- */

/* The whole of PATH ("-": stdin) into *OUT; false with a message. */
static bool
read_input(const char *path, const char *name, GString *out)
{
  int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
  int err = 0;
  if (fd < 0) {
    err = errno;
  } else {
    char buf[64 * 1024];
    for (;;) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0) {
        g_string_append_len(out, buf, n);
      } else if (n == 0) {
        break;
      } else if (errno != EINTR) {
        err = errno;
        break;
      }
    }
    if (fd != STDIN_FILENO)
      close(fd);
  }
  if (err == 0)
    return true;
  char *message = g_strdup_printf("%s: %s", name, g_strerror(err));
  cli_print_message(message);
  g_free(message);
  return false;
}

/* ---- The answers ---- */

/* One query's paths, handed over while the walk runs (trawl_plan_run_each)
 * and kept until every query is answered: each as the length of the part it
 * shares with the one before (they come sorted) and the rest, in blocks that
 * are never grown or copied. Here a page touched for the first time costs
 * 10-20 us: the plan's own copies and pointer arrays were 140 page faults
 * more than one walk printing the same 20,000 paths (flat20k, four globs),
 * the paths as JSON 70, shared prefixes left out about 30. */
struct block {
  guint8 *data;
  size_t len, size;
};

/* Bytes of our own: GString's calls were half the cost of a path here. */
struct text {
  char *s;
  size_t len, size;
};

/* Make T the first SHARED bytes it holds, then the REST bytes at FROM. */
static inline void
text_splice(struct text *t, size_t shared, const char *from, size_t rest)
{
  if (shared + rest > t->size) {
    t->size = MAX(2 * t->size, shared + rest);
    t->s = g_realloc(t->s, t->size);
  }
  output_copy(t->s + shared, from, rest);
  t->len = shared + rest;
}

/* How many bytes A and B (N bytes each at least) have in common at the
 * start; eight at a time. */
static inline size_t
common_prefix(const char *a, const char *b, size_t n)
{
  size_t i = 0;
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  for (; i + 8 <= n; i += 8) {
    guint64 x, y;
    memcpy(&x, a + i, 8);
    memcpy(&y, b + i, 8);
    if (x != y)
      return i + (size_t)(__builtin_ctzll(x ^ y) >> 3);
  }
#endif
  while (i < n && a[i] == b[i])
    i++;
  return i;
}

struct spool {
  GArray *blocks;            /* struct block; the last one's len is size - left */
  guint8 *at;                /* where the next path goes, in the last block */
  size_t left;               /* bytes free there */
  struct text last;          /* the path before */
  size_t n;                  /* paths */
};

#define SPOOL_BLOCK (64 * 1024)

/* Start a block with room for N bytes at least. */
static void
spool_grow(struct spool *sp, size_t n)
{
  if (sp->blocks->len)
    g_array_index(sp->blocks, struct block, sp->blocks->len - 1).len -= sp->left;
  const size_t size = MAX((size_t)SPOOL_BLOCK, n);
  struct block fresh = {g_malloc(size), size, size};
  g_array_append_val(sp->blocks, fresh);
  sp->at = fresh.data;
  sp->left = size;
}

static guint8 *
put_varint(guint8 *at, size_t v)
{
  for (; v >= 0x80; v >>= 7)
    *at++ = (guint8)(v | 0x80);
  *at++ = (guint8)v;
  return at;
}

static const guint8 *
get_varint(const guint8 *at, size_t *v)
{
  size_t x = 0;
  for (unsigned shift = 0;; shift += 7) {
    const guint8 b = *at++;
    x |= (size_t)(b & 0x7f) << shift;
    if (b < 0x80)
      break;
  }
  *v = x;
  return at;
}

/* trawl_plan_result_fn: PATH, a result of query Q, onto its spool. */
static void
spool_path(size_t q, const char *path, size_t len, void *data)
{
  struct spool *sp = (struct spool *)data + q;
  const size_t shared = common_prefix(path, sp->last.s, MIN(len, sp->last.len));
  const size_t rest = len - shared;
  if (G_UNLIKELY(sp->left < 2 * 10 + rest))
    spool_grow(sp, 2 * 10 + rest);
  guint8 *at = sp->at;
  if (G_LIKELY(shared < 0x80 && rest < 0x80)) {
    at[0] = (guint8)shared;
    at[1] = (guint8)rest;
    at += 2;
  } else {
    at = put_varint(at, shared);
    at = put_varint(at, rest);
  }
  output_copy(at, path + shared, rest);
  at += rest;
  sp->left -= (size_t)(at - sp->at);
  sp->at = at;
  text_splice(&sp->last, shared, path + shared, rest);
  sp->n++;
}

static struct spool *
spools_new(size_t n)
{
  struct spool *sp = g_new0(struct spool, MAX(n, 1u));
  for (size_t i = 0; i < n; i++) {
    sp[i].blocks = g_array_new(FALSE, FALSE, sizeof(struct block));
  }
  return sp;
}

static void
spools_free(struct spool *sp, size_t n)
{
  for (size_t i = 0; sp && i < n; i++) {
    for (guint k = 0; k < sp[i].blocks->len; k++)
      g_free(g_array_index(sp[i].blocks, struct block, k).data);
    g_array_unref(sp[i].blocks);
    g_free(sp[i].last.s);
  }
  g_free(sp);
}

/* output_json_item() for print_spool(). */
static void
json_item(output *out, bool first, const char *s, size_t len, void *data)
{
  (void)data;
  output_json_item(out, first, s, len);
}

/* SP's paths, each handed to ITEM (json_item: an item of a JSON array) with
 * DATA, onto OUT. */
static void
print_spool(output *out, const struct spool *sp,
            void (*item)(output *, bool, const char *, size_t, void *), void *data)
{
  struct text path = {NULL, 0, 0};
  bool first = true;
  for (guint k = 0; k < sp->blocks->len; k++) {
    const struct block *bl = &g_array_index(sp->blocks, struct block, k);
    const size_t used = k + 1 < sp->blocks->len ? bl->len : bl->size - sp->left;
    for (const guint8 *at = bl->data, *end = bl->data + used; at < end;) {
      size_t shared, rest;
      at = get_varint(at, &shared);
      at = get_varint(at, &rest);
      text_splice(&path, shared, (const char *)at, rest);
      at += rest;
      item(out, first, path.s, path.len, data);
      first = false;
    }
  }
  g_free(path.s);
}

/* Print every query's record from SPOOLS; false if writing failed (errno
 * in *ERR). */
static bool
print_results(const struct batch *b, const struct spool *spools, int *err)
{
  output out;
  output_init(&out, STDOUT_FILENO, OUTPUT_LINES, "", 0);
  for (guint i = 0; i < b->queries->len && out.error == 0; i++) {
    const struct query *q = b->queries->pdata[i];
    if (b->cmake) { /* --format cmake (format-cmake.h) */
      cmake_writer w;
      cmake_query_begin(&out, &w, i + 1, q->id, q->id_len);
      print_spool(&out, &spools[i], cmake_query_path, &w);
      cmake_query_end(&out, &w);
      continue;
    }
    output_raw(&out, "{\"id\":", 6);
    output_raw(&out, q->id, q->id_len);
    output_raw(&out, ",\"paths\":[", 10);
    print_spool(&out, &spools[i], json_item, NULL);
    output_raw(&out, "]}\n", 3);
  }
  if (b->cmake)
    cmake_batch_end(&out, b->queries->len);
  bool ok = output_end(&out);
  *err = out.error;
  output_release(&out);
  return ok;
}

/* Print each walk's problems once (its queries share them); returns how
 * many. */
static unsigned
report_problems(const struct batch *b, const trawl_plan *plan)
{
  size_t groups = trawl_plan_groups(plan);
  bool *seen = g_new0(bool, groups + 1);
  unsigned count = 0;
  for (guint i = 0; i < b->queries->len; i++) {
    size_t g = trawl_plan_group(plan, i);
    if (g >= groups || seen[g])
      continue;
    seen[g] = true;
    const GPtrArray *problems = trawl_plan_problems(plan, i);
    for (guint k = 0; k < problems->len; k++)
      cli_print_message(((const GError *)problems->pdata[k])->message);
    count += problems->len;
  }
  g_free(seen);
  return count;
}

/* Each query whose root could not be walked, by its line. */
static void
report_root_errors(struct batch *b, const trawl_plan *plan)
{
  for (guint i = 0; i < b->queries->len; i++) {
    const GError *error = trawl_plan_error(plan, i);
    if (error == NULL)
      continue;
    b->line = ((const struct query *)b->queries->pdata[i])->line;
    line_error(b, "root", "%s", error->message);
  }
}

static void
report_stats(const struct batch *b, const trawl_plan *plan, gint64 start,
             const trawl_cache_report *cache)
{
  size_t groups = trawl_plan_groups(plan);
  /* With a cache, its counts: a run of an unchanged tree has no walk. */
  guint64 dirs = cache ? cache->dirs_read : 0, reused = cache ? cache->dirs_reused : 0;
  for (size_t g = 0; !cache && g < groups; g++) {
    trawl_walk_stats stats;
    trawl_plan_stats(plan, g, &stats);
    dirs += stats.dirs_opened;
  }
  double ms = (double)(g_get_monotonic_time() - start) / 1e3;
  GString *reuse = g_string_new(NULL);
  if (cache)
    g_string_printf(reuse, ", %" G_GUINT64_FORMAT " reused (cache %s%s)", reused,
                    cache->trusted ? "trusted" : "not trusted", cache->written ? ", written" : "");
  fprintf(stderr, "trawl: %u %s, %zu %s, %" G_GUINT64_FORMAT " %s read%s, %.1f ms\n",
          b->queries->len, b->queries->len == 1 ? "query" : "queries", groups,
          groups == 1 ? "walk" : "walks", dirs, dirs == 1 ? "directory" : "directories",
          reuse->str, ms);
  g_string_free(reuse, TRUE);
}

/* Answer the decoded queries; returns the exit code. */
static int
run_queries(struct batch *b, bool strict, bool stats, gint64 start, const char *cache)
{
  trawl_plan *plan = trawl_plan_new();
  for (guint i = 0; i < b->queries->len; i++) {
    const struct query *q = b->queries->pdata[i];
    trawl_query tq = {
      .root = q->root,
      .includes = (const trawl_pattern *const *)q->includes->pdata,
      .n_includes = q->includes->len,
      .excludes = (const trawl_pattern *const *)q->excludes->pdata,
      .n_excludes = q->excludes->len,
      .options = &q->options,
    };
    trawl_plan_add(plan, &tq);
  }
  int status = EXIT_OK;
  trawl_cache_report rep;
  memset(&rep, 0, sizeof rep);
  /* The results go straight into the spools, with a cache too (from its
   * records, when the tree is as it was). */
  struct spool *spools = spools_new(b->queries->len);
  bool ran = cache ? trawl_plan_run_each_cached(plan, cache, 0, spool_path, spools, &rep, NULL)
                   : trawl_plan_run_each(plan, spool_path, spools, NULL);
  if (cache)
    cli_report_cache(cache, &rep);
  if (!ran) {
    report_root_errors(b, plan);
    status = EXIT_USAGE;
  } else {
    int err = 0;
    bool written = print_results(b, spools, &err);
    unsigned problems = report_problems(b, plan);
    if (!written) {
      fprintf(stderr, "trawl: writing output: %s\n", g_strerror(err));
      status = EXIT_IO;
    } else if (strict && problems > 0) {
      status = EXIT_IO;
    }
  }
  if (stats)
    report_stats(b, plan, start, cache ? &rep : NULL);
  trawl_cache_report_clear(&rep);
  spools_free(spools, b->queries->len);
  trawl_plan_free(plan);
  return status;
}

/* ---- The command line ---- */

/* GOption reads "-j 4" but not "-j4": ARGV with "-jN" split into "-j" "N",
 * up to "--". A new vector (free with g_free); its new strings are added
 * to OWNED. */
static char **
split_args(int *argc, char **argv, GPtrArray *owned)
{
  GPtrArray *out = g_ptr_array_new();
  bool options = true;
  for (int i = 0; i < *argc; i++) {
    options = options && strcmp(argv[i], "--") != 0;
    if (i > 0 && options && strncmp(argv[i], "-j", 2) == 0 && argv[i][2] != '\0') {
      char *value = g_strdup(argv[i] + 2);
      g_ptr_array_add(owned, value);
      g_ptr_array_add(out, (char *)"-j");
      g_ptr_array_add(out, value);
    } else {
      g_ptr_array_add(out, argv[i]);
    }
  }
  *argc = (int)out->len;
  g_ptr_array_add(out, NULL);
  return (char **)g_ptr_array_free(out, FALSE);
}

static void
free_gstring(gpointer s)
{
  g_string_free(s, TRUE);
}

int
cli_batch(int argc, char **argv)
{
  gint64 start = g_get_monotonic_time();
  gboolean stats = FALSE, strict = FALSE;
  int threads = UNSET_NUMBER;
  char *format = NULL, *cache = NULL;
  GOptionEntry entries[] = {
    {"threads", 'j', 0, G_OPTION_ARG_INT, &threads,
     "Use at most N threads in each walk (default: online CPUs; 1: serial)", "N"},
    {"format", 0, 0, G_OPTION_ARG_STRING, &format,
     "Output format: json (the default, one JSON line per query) or cmake (a CMake "
     "script setting TRAWL_BATCH_<K>, docs/cli.md)", "F"},
    {"strict", 0, 0, G_OPTION_ARG_NONE, &strict,
     "Exit 3 if a problem was reported (unreadable directory, link loop)", NULL},
    {"stats", 0, 0, G_OPTION_ARG_NONE, &stats,
     "Print the number of queries, walks and directories read, and the time, to stderr",
     NULL},
    {"cache", 0, 0, G_OPTION_ARG_FILENAME, &cache,
     "Keep the results in FILE and, next time, read only the directories that changed "
     "since (docs/cache.md; trawl check re-validates it)", "FILE"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionContext *ctx = g_option_context_new("QUERIES|-");
  g_option_context_set_summary(ctx, "Answer many queries, given as JSON lines, with one walk "
                                    "per root.");
  g_option_context_set_description(ctx, batch_description);
  g_option_context_add_main_entries(ctx, entries, NULL);

  GPtrArray *owned = g_ptr_array_new_with_free_func(g_free);
  char **args = split_args(&argc, argv, owned);
  char **rest = args;
  GError *error = NULL;
  int status = EXIT_USAGE;
  if (!g_option_context_parse(ctx, &argc, &rest, &error)) {
    fprintf(stderr, "trawl: %s (see trawl batch --help)\n", error->message);
    g_error_free(error);
    goto out;
  }
  /* GOption leaves "--" among the arguments when one after it starts
   * with '-'. */
  if (argc >= 2 && strcmp(rest[1], "--") == 0) {
    rest++;
    argc--;
  }
  if (argc != 2) {
    fprintf(stderr, "trawl: batch takes one QUERIES argument, a file of JSON lines or '-' "
                    "for stdin (see trawl batch --help)\n");
    goto out;
  }
  if (format != NULL && strcmp(format, "json") != 0 && strcmp(format, "cmake") != 0) {
    fprintf(stderr, "trawl: unknown --format '%s' (batch prints json or cmake)\n", format);
    goto out;
  }
  if (threads != UNSET_NUMBER && threads < 0) {
    fprintf(stderr, "trawl: --threads must be 0 or more, not %d\n", threads);
    goto out;
  }

  const char *path = rest[1];
  struct batch b = {
    .name = strcmp(path, "-") == 0 ? "<stdin>" : path,
    .threads = threads == UNSET_NUMBER ? 0 : (unsigned)threads,
    .cmake = format != NULL && strcmp(format, "cmake") == 0,
    .queries = g_ptr_array_new_with_free_func((GDestroyNotify)query_free),
    .ids = g_hash_table_new_full((GHashFunc)g_string_hash, (GEqualFunc)g_string_equal,
                                 free_gstring, NULL),
  };
  GString *input = g_string_new(NULL);
  if (read_input(path, b.name, input) && decode_input(&b, input->str, input->len))
    status = run_queries(&b, strict, stats, start, cache);
  g_string_free(input, TRUE);
  g_hash_table_unref(b.ids);
  g_ptr_array_unref(b.queries);

out:
  g_free(format);
  g_free(cache);
  g_option_context_free(ctx);
  g_free(args);
  g_ptr_array_unref(owned);
  return status;
}
