/* trawl meson — where the project's subprojects directory is, which no
 * list may reach into (docs/meson.md, "The subprojects directory").
 *
 * Meson's sandbox refuses any file below a project's subprojects directory
 * ("Sandbox violation: Tried to grab file index.c from a nested
 * subproject"), and a wrap is cloned right there. That directory is the
 * top-level project's `subproject_dir` (default "subprojects"), below the
 * root of the (sub)project that asks. Meson hands a run_command() only
 * MESON_SOURCE_ROOT and MESON_SUBDIR, and writes project()'s keywords
 * nowhere a command can read while it configures (meson-info/ comes after,
 * from the previous run), so the keyword is read here from the top-level
 * meson.build itself: project() must be its first statement, and that
 * statement cannot use a variable, so in practice the value is one string
 * literal. Anything else is an error that says so, never a guess.
 *
 * The reader knows just enough of Meson's lexical rules (mparser.py's
 * Lexer) to find the keyword argument: comments run from '#' to the end of
 * the line, strings are '...' with backslash escapes or '''...''' without,
 * optionally f-prefixed, and brackets nest.
 */
#include <string.h>

#include "../cli/cli.h"
#include "meson-plugin.h"

#define DEFAULT_SUBPROJECT_DIR "subprojects"

/* A position in the file, for messages. */
struct reader {
  const char *path;
  const char *text;
  size_t len, pos;
};

static void
where(const struct reader *r, size_t pos, unsigned *line, unsigned *column)
{
  *line = 1;
  *column = 1;
  for (size_t i = 0; i < pos && i < r->len; i++) {
    if (r->text[i] == '\n') {
      (*line)++;
      *column = 1;
    } else {
      (*column)++;
    }
  }
}

static void
fail(const struct reader *r, size_t pos, GError **error, const char *why)
{
  unsigned line, column;
  where(r, pos, &line, &column);
  g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s:%u:%u: %s", r->path, line, column,
              why);
}

static void
skip_blanks(struct reader *r)
{
  while (r->pos < r->len) {
    const char c = r->text[r->pos];
    if (c == '#') {
      while (r->pos < r->len && r->text[r->pos] != '\n')
        r->pos++;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
               (c == '\\' && r->pos + 1 < r->len && r->text[r->pos + 1] == '\n')) {
      r->pos += c == '\\' ? 2 : 1;
    } else {
      return;
    }
  }
}

/* The length of the string literal at r->pos (its quotes and an 'f'
 * included), or 0 when there is none or it does not end. *PLAIN: a
 * single-quoted literal without escapes or prefix. */
static size_t
string_at(const struct reader *r, bool *plain)
{
  size_t at = r->pos;
  const bool f = at < r->len && r->text[at] == 'f';
  at += f;
  if (at >= r->len || r->text[at] != '\'')
    return 0;
  if (r->len - at >= 3 && strncmp(r->text + at, "'''", 3) == 0) {
    const char *end = g_strstr_len(r->text + at + 3, (gssize)(r->len - at - 3), "'''");
    *plain = false;
    return end ? (size_t)(end + 3 - (r->text + r->pos)) : 0;
  }
  *plain = !f;
  for (size_t i = at + 1; i < r->len; i++) {
    const char c = r->text[i];
    if (c == '\\') {
      *plain = false;
      i++;
    } else if (c == '\n') {
      return 0;
    } else if (c == '\'') {
      return i + 1 - r->pos;
    }
  }
  return 0;
}

static bool
is_identifier_byte(char c, bool first)
{
  return c == '_' || g_ascii_isalpha(c) || (!first && g_ascii_isdigit(c));
}

/* The length of the identifier at r->pos, or 0. */
static size_t
identifier_at(const struct reader *r)
{
  size_t n = 0;
  while (r->pos + n < r->len && is_identifier_byte(r->text[r->pos + n], n == 0))
    n++;
  return n;
}

/* After `subproject_dir` at depth 1 of project(): ": 'VALUE'" followed by
 * ',' or ')'. */
static char *
keyword_value(struct reader *r, GError **error)
{
  skip_blanks(r);
  if (r->pos >= r->len || r->text[r->pos] != ':') {
    fail(r, r->pos, error, "expected ':' after subproject_dir");
    return NULL;
  }
  r->pos++;
  skip_blanks(r);
  const size_t start = r->pos;
  bool plain = false;
  const size_t n = string_at(r, &plain);
  r->pos += n;
  skip_blanks(r);
  const bool ends = r->pos < r->len && (r->text[r->pos] == ',' || r->text[r->pos] == ')');
  if (n == 0 || !plain || !ends) {
    fail(r, start, error, "subproject_dir is not one plain string ('dir'), and trawl meson "
                          "reads it to leave the subprojects directory out of its lists");
    return NULL;
  }
  return g_strndup(r->text + start + 1, n - 2);
}

/* The subproject_dir keyword of the project() call in R, or
 * DEFAULT_SUBPROJECT_DIR. */
static char *
read_subproject_dir(struct reader *r, GError **error)
{
  skip_blanks(r);
  const size_t id = identifier_at(r);
  if (id != strlen("project") || strncmp(r->text + r->pos, "project", id) != 0)
    return g_strdup(DEFAULT_SUBPROJECT_DIR); /* Meson says what is wrong */
  r->pos += id;
  skip_blanks(r);
  if (r->pos >= r->len || r->text[r->pos] != '(')
    return g_strdup(DEFAULT_SUBPROJECT_DIR);
  r->pos++;
  for (unsigned depth = 1; depth > 0 && r->pos < r->len;) {
    skip_blanks(r);
    if (r->pos >= r->len)
      break;
    bool plain = false;
    size_t n = string_at(r, &plain);
    if (n == 0 && r->text[r->pos] != '\'')
      n = identifier_at(r);
    if (n > 0) {
      const bool keyword = depth == 1 && n == strlen("subproject_dir") &&
                           strncmp(r->text + r->pos, "subproject_dir", n) == 0;
      r->pos += n;
      if (keyword)
        return keyword_value(r, error);
      continue;
    }
    const char c = r->text[r->pos++];
    if (c == '(' || c == '[' || c == '{')
      depth++;
    else if (c == ')' || c == ']' || c == '}')
      depth--;
    else if (c == '\'')
      break; /* a string that does not end: Meson says so */
  }
  return g_strdup(DEFAULT_SUBPROJECT_DIR);
}

char *
meson_subproject_dir(const char *source_root, GError **error)
{
  char *path = g_build_filename(source_root, "meson.build", NULL);
  char *text = NULL;
  size_t len = 0;
  char *dir = NULL;
  GError *read_error = NULL;
  if (g_file_get_contents(path, &text, &len, &read_error)) {
    struct reader r = {path, text, len, 0};
    dir = read_subproject_dir(&r, error);
  } else if (g_error_matches(read_error, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
    /* Not Meson's run (it has read the file): nothing says otherwise. */
    dir = g_strdup(DEFAULT_SUBPROJECT_DIR);
    g_error_free(read_error);
  } else {
    g_propagate_error(error, read_error);
  }
  g_free(text);
  g_free(path);
  return dir;
}

/* The components of PATH, without empty ones ("a//b/" is a, b). */
static char **
components(const char *path)
{
  char **all = g_strsplit(path, "/", -1);
  GPtrArray *kept = g_ptr_array_new();
  for (char **c = all; *c; c++)
    if (**c != '\0')
      g_ptr_array_add(kept, g_strdup(*c));
  g_ptr_array_add(kept, NULL);
  g_strfreev(all);
  return (char **)g_ptr_array_free(kept, FALSE);
}

char *
meson_subprojects_path(const char *source_root, const char *subdir, const char *spdir)
{
  /* Each subproject lies in SPDIR/NAME below the project that holds it:
   * strip those pairs from the front of SUBDIR, as far as they go. */
  GString *root = g_string_new(source_root);
  char **parts = g_strsplit(subdir ? subdir : "", "/", -1);
  char **sp = components(spdir);
  const guint n_sp = g_strv_length(sp);
  for (char **p = parts; *p;) {
    guint k = 0;
    while (k < n_sp && p[k] && strcmp(p[k], sp[k]) == 0)
      k++;
    if (k < n_sp || p[k] == NULL || p[k][0] == '\0')
      break;
    for (guint i = 0; i <= k; i++) {
      g_string_append_c(root, '/');
      g_string_append(root, p[i]);
    }
    p += k + 1;
  }
  for (guint i = 0; i < n_sp; i++) {
    g_string_append_c(root, '/');
    g_string_append(root, sp[i]);
  }
  g_strfreev(sp);
  g_strfreev(parts);
  return g_string_free(root, FALSE);
}
