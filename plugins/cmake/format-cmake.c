/* trawl — `trawl batch --format cmake` (format-cmake.h states the format
 * and why each rule is there).
 *
 * Each path costs one scan that answers both questions at once — can a list
 * carry it, and how many '=' its bracket argument needs — and one copy. */
#include "format-cmake.h"

#include <stdio.h>
#include <string.h>

/* What one scan of a path finds. */
struct scan {
  bool listable;
  bool crlf;          /* holds CR LF: not a bracket argument */
  size_t level;       /* '=' for its bracket argument */
};

static struct scan
scan_path(const char *s, size_t len)
{
  struct scan r = {true, false, 1};
  long depth = 0;
  for (size_t i = 0; i < len; i++) {
    switch (s[i]) {
    case ';':
      r.listable = false;
      break;
    case '[':
      depth++;
      break;
    case ']': {
      depth--;
      /* "]=...=" followed by ']' (or by the end, where the closing bracket
       * follows) would close a bracket argument of that level. */
      size_t run = 0;
      while (i + 1 + run < len && s[i + 1 + run] == '=')
        run++;
      if (run + 1 > r.level)
        r.level = run + 1;
      break;
    }
    case '\r':
      if (i + 1 < len && s[i + 1] == '\n')
        r.crlf = true;
      break;
    default:
      break;
    }
  }
  if (depth != 0 || (len > 0 && s[len - 1] == '\\'))
    r.listable = false;
  return r;
}

bool
cmake_listable(const char *s, size_t len)
{
  return scan_path(s, len).listable;
}

static void
append_argument(GString *out, const char *s, size_t len, const struct scan *r)
{
  if (!r->crlf) {
    g_string_append_c(out, '[');
    for (size_t i = 0; i < r->level; i++)
      g_string_append_c(out, '=');
    g_string_append(out, "[\n");
    g_string_append_len(out, s, (gssize)len);
    g_string_append_c(out, ']');
    for (size_t i = 0; i < r->level; i++)
      g_string_append_c(out, '=');
    g_string_append_c(out, ']');
    return;
  }
  /* A quoted argument: only '\' escapes, '$' starts a reference, '"' ends
   * it; CR and LF are escaped so that the reader's CR LF rule never sees
   * them. */
  g_string_append_c(out, '"');
  for (size_t i = 0; i < len; i++) {
    switch (s[i]) {
    case '\\': g_string_append(out, "\\\\"); break;
    case '"': g_string_append(out, "\\\""); break;
    case '$': g_string_append(out, "\\$"); break;
    case '\r': g_string_append(out, "\\r"); break;
    case '\n': g_string_append(out, "\\n"); break;
    default: g_string_append_c(out, s[i]); break;
    }
  }
  g_string_append_c(out, '"');
}

void
cmake_argument(GString *out, const char *s, size_t len)
{
  struct scan r = scan_path(s, len);
  append_argument(out, s, len, &r);
}

static void
write_gstring(output *out, const GString *s)
{
  output_raw(out, s->str, s->len);
}

void
cmake_query_begin(output *out, cmake_writer *w, size_t k, const char *id, size_t id_len)
{
  w->query = k;
  w->unlistable = 0;
  w->held = g_string_new(NULL);
  GString *line = g_string_new(NULL);
  g_string_printf(line, "set(TRAWL_BATCH_%zu_ID ", k);
  cmake_argument(line, id, id_len);
  g_string_append_printf(line, ")\nset(TRAWL_BATCH_%zu", k);
  write_gstring(out, line);
  g_string_free(line, TRUE);
}

void
cmake_query_path(output *out, bool first, const char *path, size_t len, void *data)
{
  (void)first;
  cmake_writer *w = data;
  struct scan r = scan_path(path, len);
  if (!r.listable) {
    w->unlistable++;
    g_string_append_printf(w->held, "set(TRAWL_BATCH_%zu_UNLISTABLE_%zu ", w->query,
                           w->unlistable);
    append_argument(w->held, path, len, &r);
    g_string_append(w->held, ")\n");
    return;
  }
  /* The common path: a bracket argument straight into the buffer. */
  if (!r.crlf && r.level == 1) {
    output_raw(out, "\n [=[\n", 6);
    output_raw(out, path, len);
    output_raw(out, "]=]", 3);
    return;
  }
  GString *arg = g_string_new("\n ");
  append_argument(arg, path, len, &r);
  write_gstring(out, arg);
  g_string_free(arg, TRUE);
}

void
cmake_query_end(output *out, cmake_writer *w)
{
  GString *tail = g_string_new(")\n");
  g_string_append_len(tail, w->held->str, (gssize)w->held->len);
  g_string_append_printf(tail, "set(TRAWL_BATCH_%zu_UNLISTABLE %zu)\n", w->query, w->unlistable);
  write_gstring(out, tail);
  g_string_free(tail, TRUE);
  g_string_free(w->held, TRUE);
  w->held = NULL;
}

void
cmake_batch_end(output *out, size_t count)
{
  char line[64];
  int n = snprintf(line, sizeof line, "set(TRAWL_BATCH_COUNT %zu)\n", count);
  output_raw(out, line, (size_t)n);
}
