/* trawl — what `trawl check` calls a query (check-labels.h). */
#include <string.h>

#include "files.h"
#include "check-labels.h"

#define HEADER "trawl check labels 1\n"

struct check_labels {
  char *text;               /* the whole file */
  GPtrArray *fields;        /* const char *, into TEXT: label, prefix, label, ... */
};

static char *
labels_path(const char *cache)
{
  return g_strconcat(cache, ".labels", NULL);
}

bool
check_labels_write(const char *cache, const GPtrArray *labels, const GPtrArray *prefixes,
                   GError **error)
{
  g_return_val_if_fail(labels->len == prefixes->len, false);
  GString *text = g_string_new(HEADER);
  for (guint i = 0; i < labels->len; i++) {
    g_string_append(text, labels->pdata[i]);
    g_string_append_c(text, '\0');
    g_string_append(text, prefixes->pdata[i]);
    g_string_append_c(text, '\0');
  }
  char *path = labels_path(cache);
  char *old = NULL;
  size_t old_len = 0;
  bool ok = true;
  /* Each configure writes the same labels again: leave the file alone. */
  if (!g_file_get_contents(path, &old, &old_len, NULL) || old_len != text->len ||
      memcmp(old, text->str, text->len) != 0)
    ok = file_write(path, text->str, text->len, error);
  g_free(old);
  g_free(path);
  g_string_free(text, TRUE);
  return ok;
}

check_labels *
check_labels_read(const char *cache, size_t n)
{
  char *path = labels_path(cache);
  char *text = NULL;
  size_t len = 0;
  bool ok = g_file_get_contents(path, &text, &len, NULL);
  g_free(path);
  if (!ok)
    return NULL;
  check_labels *l = g_new0(check_labels, 1);
  l->text = text;
  l->fields = g_ptr_array_new();
  const size_t header = strlen(HEADER);
  ok = len >= header && memcmp(text, HEADER, header) == 0;
  /* Every field ends in NUL: the last one at len - 1. */
  for (size_t at = header; ok && at < len;) {
    const char *end = memchr(text + at, '\0', len - at);
    ok = end != NULL;
    if (ok) {
      g_ptr_array_add(l->fields, text + at);
      at = (size_t)(end - text) + 1;
    }
  }
  if (!ok || l->fields->len != 2 * n) {
    check_labels_free(l);
    return NULL;
  }
  return l;
}

const char *
check_labels_label(const check_labels *labels, size_t q)
{
  return labels->fields->pdata[2 * q];
}

const char *
check_labels_prefix(const check_labels *labels, size_t q)
{
  return labels->fields->pdata[2 * q + 1];
}

void
check_labels_free(check_labels *labels)
{
  if (labels == NULL)
    return;
  g_ptr_array_unref(labels->fields);
  g_free(labels->text);
  g_free(labels);
}
