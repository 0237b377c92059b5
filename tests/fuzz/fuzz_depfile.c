/* trawl — libFuzzer target over the depfile writer of `trawl check
 * --depfile` (plugins/cli/depfile.c), read back as Ninja 1.11 reads a
 * depfile.
 *
 * An input is NUL-separated byte strings: the first is the target (the
 * --checked mark), the rest the paths a cache watches; bit 0 of the first
 * byte says whether the cache cannot be proved ("always"). Invariants,
 * each checked with abort():
 *  - depfile_ninja_path() is idempotent (Ninja's canonical form of its own
 *    answer is itself) and never empty;
 *  - a path depfile_append_path() accepts, read back by this file's reader
 *    of Ninja's depfile syntax, is exactly that path, one path;
 *  - the whole depfile (depfile_text) reads back as the target and the
 *    accepted paths, in order, followed by the never-there path exactly
 *    when some path was refused or the cache cannot be proved; when the
 *    target or that path cannot be written the writer says so.
 * The reader here follows Ninja 1.11's rules for the bytes the writer may
 * emit (learned from Ninja's depfile_parser.in.cc and its behaviour: a
 * blank or a newline ends a path, backslash-newline continues the line,
 * "\ " is a blank and "\#" a '#', "$$" a '$', a backslash and any other
 * byte are those two bytes, a ':' ends the target); a byte outside what the writer
 * should emit is a violation. Whether real Ninja agrees is
 * tests/hardening/depfile_ninja.py's question: with TRAWL_FUZZ_DUMP=FILE
 * set, each depfile and what it must read back as are appended to FILE,
 * and that script feeds them all to `ninja` and `ninja -t deps`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>

#include "depfile.h"
#include "fuzz_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NEVER "never-there.always"

static const char *cur_data;
static size_t cur_size;

static void
violation(const char *what, const char *extra, size_t extra_len)
{
  fprintf(stderr, "fuzz_depfile: invariant violated: %s\n", what);
  print_bytes("input", cur_data, cur_size);
  if (extra)
    print_bytes("also", extra, extra_len);
  abort();
}

/* TEXT read as Ninja reads a depfile: the target into *TARGET, the inputs
 * into DEPS (char *, owned). False when TEXT holds what the writer should
 * never emit (the reader cannot vouch for Ninja there). */
static bool
ninja_read(const char *text, size_t len, char **target, GPtrArray *deps)
{
  GString *word = g_string_new(NULL);
  bool have_target = false, in_word = false;
  *target = NULL;
  for (size_t i = 0; i <= len; i++) {
    const char c = i < len ? text[i] : '\n';
    bool end = false;
    if (c == '\\' && i + 1 < len && text[i + 1] == '\n') {
      i++;
      end = true; /* a continued line: a blank */
    } else if (c == '\\' && i + 1 < len && (text[i + 1] == ' ' || text[i + 1] == '#')) {
      g_string_append_c(word, text[++i]);
      in_word = true;
    } else if (c == '\\' && i + 1 < len && text[i + 1] == '\\') {
      g_string_free(word, TRUE);
      return false; /* never emitted: Ninja counts backslash runs */
    } else if (c == '\\' && i + 1 < len) {
      /* Any other byte after a backslash: the two as they are ("\$$"
       * is "\$" and then a '$' on its own). */
      g_string_append_c(word, c);
      g_string_append_c(word, text[++i]);
      in_word = true;
      if (text[i] == '$' || text[i] == ' ' || (unsigned char)text[i] < 0x20) {
        g_string_free(word, TRUE);
        return false;
      }
    } else if (c == '$' && i + 1 < len && text[i + 1] == '$') {
      g_string_append_c(word, '$');
      i++;
      in_word = true;
    } else if (c == '$') {
      g_string_free(word, TRUE);
      return false;
    } else if (c == ' ' || c == '\n') {
      end = true;
    } else if ((unsigned char)c < 0x20 || c == 0x7f || strchr("\"&'*;<>?^`|", c)) {
      g_string_free(word, TRUE);
      return false;
    } else if (c == ':' && !have_target) {
      *target = g_strndup(word->str, word->len);
      have_target = true;
      g_string_truncate(word, 0);
      in_word = false;
    } else if (c == ':') {
      g_string_free(word, TRUE);
      return false;
    } else {
      g_string_append_c(word, c);
      in_word = true;
    }
    if (end && in_word) {
      if (!have_target) {
        g_string_free(word, TRUE);
        return false; /* a path before the target's ':' */
      }
      g_ptr_array_add(deps, g_strndup(word->str, word->len));
      g_string_truncate(word, 0);
      in_word = false;
    }
  }
  g_string_free(word, TRUE);
  return have_target;
}

static void
hex(FILE *f, const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++)
    fprintf(f, "%02x", (unsigned char)s[i]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  cur_data = (const char *)data;
  cur_size = size;
  const bool always = size > 0 && (data[0] & 1);
  /* The byte strings between NULs: the target, then the paths. */
  GPtrArray *parts = g_ptr_array_new_with_free_func(g_free);
  size_t start = 0;
  for (size_t i = 0; i <= size; i++)
    if (i == size || data[i] == 0) {
      g_ptr_array_add(parts, g_strndup((const char *)data + start, i - start));
      start = i + 1;
    }
  const char *target = parts->pdata[0];
  GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
  GPtrArray *kept = g_ptr_array_new();
  /* Each path once, as depfile_write() lists them (Ninja keeps one). */
  GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
  bool refused = false;
  for (guint i = 1; i < parts->len; i++) {
    char *p = depfile_ninja_path(parts->pdata[i]);
    if (g_hash_table_contains(seen, p)) {
      g_free(p);
      continue;
    }
    g_hash_table_add(seen, p);
    char *again = depfile_ninja_path(p);
    if (*p == '\0')
      violation("a canonical path is empty", p, 0);
    if (strcmp(p, again) != 0)
      violation("depfile_ninja_path is not idempotent", again, strlen(again));
    g_free(again);
    GString *one = g_string_new("t:");
    if (depfile_append_path(one, p)) {
      char *t = NULL;
      GPtrArray *deps = g_ptr_array_new_with_free_func(g_free);
      if (!ninja_read(one->str, one->len, &t, deps) || deps->len != 1 ||
          strcmp(deps->pdata[0], p) != 0 || strcmp(t, "t") != 0)
        violation("an accepted path does not read back as itself", one->str, one->len);
      g_free(t);
      g_ptr_array_unref(deps);
      g_ptr_array_add(kept, p);
    } else {
      refused = true;
    }
    g_string_free(one, TRUE);
    g_ptr_array_add(paths, p);
  }
  GString *text = g_string_new(NULL);
  bool ok = depfile_text(text, target, (const char *const *)paths->pdata, paths->len, NEVER,
                         always);
  GString *t_alone = g_string_new(NULL);
  const bool target_ok = depfile_append_path(t_alone, target) && *target != '\0';
  g_string_free(t_alone, TRUE);
  if (ok && target_ok) {
    char *t = NULL;
    GPtrArray *deps = g_ptr_array_new_with_free_func(g_free);
    if (!ninja_read(text->str, text->len, &t, deps))
      violation("the depfile holds what the writer should never emit", text->str, text->len);
    if (strcmp(t, target) != 0)
      violation("the target does not read back as itself", t, strlen(t));
    const guint want = kept->len + ((refused || always) ? 1 : 0);
    if (deps->len != want)
      violation("the depfile reads back as another number of paths", text->str, text->len);
    for (guint i = 0; i < kept->len; i++)
      if (strcmp(deps->pdata[i], kept->pdata[i]) != 0)
        violation("a path reads back as another", deps->pdata[i], strlen(deps->pdata[i]));
    if ((refused || always) && strcmp(deps->pdata[deps->len - 1], NEVER) != 0)
      violation("the never-there path is missing", text->str, text->len);
    const char *dump = getenv("TRAWL_FUZZ_DUMP");
    FILE *f = dump ? fopen(dump, "a") : NULL;
    if (f) {
      /* The depfile, then each path Ninja must record, in hex. */
      hex(f, text->str, text->len);
      for (guint i = 0; i < deps->len; i++) {
        fputc(' ', f);
        hex(f, deps->pdata[i], strlen(deps->pdata[i]));
      }
      fputc('\n', f);
      fclose(f);
    }
    g_free(t);
    g_ptr_array_unref(deps);
  } else if (ok != target_ok && *target != '\0') {
    violation("depfile_text's answer is not whether the target can be written", target,
              strlen(target));
  }
  g_string_free(text, TRUE);
  g_hash_table_unref(seen);
  g_ptr_array_unref(kept);
  g_ptr_array_unref(paths);
  g_ptr_array_unref(parts);
  return 0;
}
