/* trawl — `trawl check --depfile FILE` (depfile.h). */
#define _GNU_SOURCE /* memrchr, strchrnul */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "depfile.h"
#include "report.h"
#include "trawl/cache.h"

struct watch {
  GHashTable *seen;     /* char * (owned) */
  GPtrArray *order;     /* the same, in the order met */
  guint64 limit;        /* past this many, the list is not written: */
  bool over;            /* so it is no longer made: `big` (38,383 directories), 186–224 → 81–109 ms */
};

/* PATH as Ninja takes it (its CanonicalizePath: "." and empty components
 * dropped, "dir/.." taken away lexically), so that two spellings of one
 * path are listed once. "/" is written "/..": Ninja makes "/" an empty path
 * and then cannot record it ("Error writing to deps log"), while it keeps
 * "/.." as written and stats it (tried with Ninja 1.11.1). In one buffer,
 * in place: with a list split and joined anew for each path it was three
 * quarters of a check whose list ran past --watch-limit (12,000
 * instructions a path). */
char *
depfile_ninja_path(const char *path)
{
  const bool absolute = path[0] == '/';
  const size_t n = strlen(path);
  char *buf = g_malloc(n + 4); /* "/.." or "." fit too */
  char *out = buf + 1;         /* the components, '/' between them */
  size_t len = 0, kept = 0;
  for (const char *w = path; *w;) {
    const char *end = strchrnul(w, '/');
    const size_t wl = (size_t)(end - w);
    const bool up = wl == 2 && w[0] == '.' && w[1] == '.';
    if (wl == 0 || (wl == 1 && w[0] == '.')) {
      /* "." and empty components are dropped */
    } else if (up && kept > 0) {
      const char *last = memrchr(out, '/', len);
      const size_t from = last ? (size_t)(last - out) + 1 : 0;
      if (len - from == 2 && out[from] == '.' && out[from + 1] == '.') {
        out[len++] = '/'; /* "../..": kept */
        memcpy(out + len, "..", 2);
        len += 2;
        kept++;
      } else { /* "dir/..": both taken away */
        len = from ? from - 1 : 0;
        kept--;
      }
    } else if (up && absolute) {
      /* above "/" is "/" */
    } else {
      if (kept)
        out[len++] = '/';
      memcpy(out + len, w, wl);
      len += wl;
      kept++;
    }
    w = *end ? end + 1 : end;
  }
  if (absolute) {
    if (len == 0)
      memcpy(buf, "/..", 4);
    else {
      buf[0] = '/';
      out[len] = '\0';
    }
  } else if (len == 0) {
    memcpy(buf, ".", 2);
  } else {
    memmove(buf, out, len);
    buf[len] = '\0';
  }
  return buf;
}

/* Take PATH into the list; false once the list is over its limit (then
 * the caches' lists are read no further: the check runs every time). */
static bool
add_path(const char *path, void *data)
{
  struct watch *w = data;
  if (w->over)
    return false;
  char *copy = depfile_ninja_path(path);
  if (g_hash_table_contains(w->seen, copy)) {
    g_free(copy);
    return true;
  }
  g_hash_table_add(w->seen, copy);
  g_ptr_array_add(w->order, copy);
  if ((guint64)w->order->len > w->limit) {
    w->over = true;
    g_hash_table_remove_all(w->seen);
    g_ptr_array_set_size(w->order, 0);
    return false;
  }
  return true;
}

/* Append PATH to OUT escaped for a depfile; false when it cannot be. Ninja
 * 1.11 ends a path at any of `"&'*;<>?^`|` and at a control byte, takes a
 * ':' before a blank for the target's, and a backslash before a blank, a
 * '#' or the end as an escape (tried: every printable byte in a depfile,
 * read back with `ninja -t deps`; depfile_cli.py). It takes a backslash
 * and the byte after it as they are, so "\$$" is "\$" and a '$' that ends
 * the path: a backslash before a '$' cannot be written either
 * (fuzz_depfile, replayed through Ninja by tests/hardening/replay.py). */
bool
depfile_append_path(GString *out, const char *path)
{
  for (const char *c = path; *c; c++) {
    if ((unsigned char)*c < 0x20 || *c == 0x7f || strchr("\"&'*;<>?^`|:", *c) ||
        (*c == '\\' && (c[1] == ' ' || c[1] == '#' || c[1] == '\\' || c[1] == '$' ||
                         c[1] == '\0')))
      return false;
    if (*c == ' ' || *c == '#')
      g_string_append_c(out, '\\');
    if (*c == '$')
      g_string_append_c(out, '$');
    g_string_append_c(out, *c);
  }
  return true;
}

bool
depfile_text(GString *text, const char *target, const char *const *paths, size_t n,
             const char *never, bool always)
{
  bool ok = depfile_append_path(text, target);
  g_string_append_c(text, ':');
  GString *one = g_string_new(NULL);
  for (size_t i = 0; i < n; i++) {
    g_string_truncate(one, 0);
    if (depfile_append_path(one, paths[i])) {
      g_string_append(text, " \\\n  ");
      g_string_append_len(text, one->str, (gssize)one->len);
    } else {
      always = true;
    }
  }
  g_string_free(one, TRUE);
  if (always) {
    /* Never there: a missing input makes the check run every time. */
    g_string_append(text, " \\\n  ");
    ok = depfile_append_path(text, never) && ok;
  }
  g_string_append_c(text, '\n');
  return ok;
}

bool
depfile_write(const char *file, const char *target, char *const *caches, int n, bool always,
              guint64 limit)
{
  struct watch w = {g_hash_table_new(g_str_hash, g_str_equal),
                    g_ptr_array_new_with_free_func(g_free), limit, false};
  for (int i = 0; i < n && !w.over; i++) {
    bool this_always = false;
    GError *error = NULL;
    if (!trawl_cache_watch_until(caches[i], add_path, &w, &this_always, &error))
      g_error_free(error);
    always = always || this_always;
  }
  char *never = g_strconcat(file, ".always", NULL);
  unlink(never); /* never there, whether listed or not */
  GString *text = g_string_new(NULL);
  if (w.over)
    always = true;
  bool ok = depfile_text(text, target, (const char *const *)w.order->pdata, w.order->len, never,
                         always);
  g_free(never);
  GError *error = NULL;
  if (!ok) {
    char *m = g_strdup_printf("--depfile %s: the target %s cannot be written in a depfile", file,
                              target);
    cli_print_message(m);
    g_free(m);
  } else if (!file_write(file, text->str, text->len, &error)) {
    char *m = g_strdup_printf("--depfile %s", error->message);
    cli_print_message(m);
    g_free(m);
    g_error_free(error);
    ok = false;
  }
  g_string_free(text, TRUE);
  g_ptr_array_unref(w.order);
  g_hash_table_unref(w.seen);
  return ok;
}
