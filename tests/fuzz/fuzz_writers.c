/* trawl — libFuzzer target over the text writers that carry file names
 * into the three build systems: any byte string in, either a refusal or
 * text that the build system reads back as exactly those bytes.
 *
 *  - CMake (plugins/cmake/format-cmake.c, `trawl batch --format cmake`):
 *    cmake_argument() of any NUL-free bytes is one argument that
 *    evaluates to exactly them; names cmake_listable() accepts, set as a
 *    list between two plain elements, come back out of the list (split as
 *    CMake splits it) each exactly.
 *  - Meson (plugins/meson/cmd-meson.c, `trawl meson`): names
 *    meson_refuses() accepts, joined by '\n' as the output is, come back
 *    out of Meson's reading of it (decoded as UTF-8 with universal
 *    newlines, split at '\n') each exactly.
 *  - Starlark (plugins/bazel/cmd-bazel-index.c, the index glob.bzl loads): a name written
 *    between double quotes by starlark_bytes() is a string literal Bazel
 *    reads as exactly those bytes.
 *
 * An input is one byte choosing the writer (its value mod 3), then the
 * names, separated by NUL. Each writer's output is read back here by a
 * reader of the build system's syntax written for this file from the
 * documentation and the tools' behaviour (CMake's bracket and quoted
 * arguments and cmExpandList; Python's universal newlines; Starlark's
 * escapes), sharing no code with the writer; a byte the writer should
 * never emit is a violation. Whether the real tools agree is
 * tests/hardening/replay.py's question: with TRAWL_FUZZ_DUMP=FILE,
 * every name and what the writer made of it are appended to FILE, and
 * that script reads them all back through cmake -P, meson and bazel.
 */
/* The indexer's writer is static in its command's file: take it whole —
 * first, so that its feature macros hold. */
#include "../../plugins/bazel/cmd-bazel-index.c"

#include <glib.h>

#include "format-cmake.h"
#include "meson-plugin.h"
#include "fuzz_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* cmd-meson.c hands `--postconf` and `--check` to these: never here. */
#include "cli.h"
int
cli_check(int argc, char **argv)
{
  (void)argc, (void)argv;
  abort();
}
int
meson_postconf(int argc, char **argv)
{
  (void)argc, (void)argv;
  abort();
}

static const char *cur_data;
static size_t cur_size;

static void
violation(const char *what, const char *extra, size_t extra_len)
{
  fprintf(stderr, "fuzz_writers: invariant violated: %s\n", what);
  print_bytes("input", cur_data, cur_size);
  if (extra)
    print_bytes("also", extra, extra_len);
  abort();
}

static FILE *dump_file;

static void
dump(const char *kind, const char *name, size_t n, const char *text, size_t tn)
{
  if (dump_file == NULL)
    return;
  fprintf(dump_file, "%s ", kind);
  for (size_t i = 0; i < n; i++)
    fprintf(dump_file, "%02x", (unsigned char)name[i]);
  fputc(' ', dump_file);
  for (size_t i = 0; i < tn; i++)
    fprintf(dump_file, "%02x", (unsigned char)text[i]);
  fputc('\n', dump_file);
}

/* ---- CMake ---- */

/* One CMake argument at TEXT (N bytes), evaluated into OUT: a bracket
 * argument (its first newline dropped, CR LF read as LF) or a quoted one
 * (the escapes CMake evaluates; an unescaped '$' or '\' the writer should
 * never emit). Returns the bytes it took, 0 when TEXT is not one such
 * argument. */
static size_t
cmake_read(const char *t, size_t n, GString *out)
{
  if (n >= 2 && t[0] == '[') {
    size_t level = 1;
    while (level < n && t[level] == '=')
      level++;
    if (level >= n || t[level] != '[')
      return 0;
    size_t i = level + 1; /* past "[=...=[" */
    level--;              /* the number of '=' */
    if (i < n && t[i] == '\n')
      i++;
    else if (i + 1 < n && t[i] == '\r' && t[i + 1] == '\n')
      i += 2;
    for (; i < n; i++) {
      if (t[i] == ']') {
        size_t k = 0;
        while (i + 1 + k < n && t[i + 1 + k] == '=')
          k++;
        if (k == level && i + 1 + k < n && t[i + 1 + k] == ']')
          return i + 2 + k;
      }
      if (t[i] == '\r' && i + 1 < n && t[i + 1] == '\n')
        continue; /* CR LF is LF */
      g_string_append_c(out, t[i]);
    }
    return 0;
  }
  if (n >= 2 && t[0] == '"') {
    for (size_t i = 1; i < n; i++) {
      char c = t[i];
      if (c == '"')
        return i + 1;
      if (c == '$' || c == '\r' || c == '\n')
        return 0; /* a reference, or a line end CMake would read its own way */
      if (c == '\\') {
        if (++i >= n)
          return 0;
        switch (t[i]) {
        case '\\': case '"': case '$': g_string_append_c(out, t[i]); break;
        case 'r': g_string_append_c(out, '\r'); break;
        case 'n': g_string_append_c(out, '\n'); break;
        default: return 0;
        }
        continue;
      }
      g_string_append_c(out, c);
    }
  }
  return 0;
}

/* LIST split as CMake splits a list (cmExpandList): at each ';' outside
 * '[' ... ']' — a count that ']' takes down even below zero — and not
 * escaped by '\' ("\;" is ';'). */
static GPtrArray *
cmake_split(const char *s, size_t n)
{
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  GString *cur = g_string_new(NULL);
  long depth = 0;
  for (size_t i = 0; i <= n; i++) {
    if (i == n || (s[i] == ';' && depth == 0)) {
      g_ptr_array_add(out, g_strndup(cur->str, cur->len));
      g_string_truncate(cur, 0);
      continue;
    }
    if (s[i] == '\\' && i + 1 < n && s[i + 1] == ';') {
      g_string_append_c(cur, ';');
      i++;
      continue;
    }
    if (s[i] == '[')
      depth++;
    else if (s[i] == ']')
      depth--;
    g_string_append_c(cur, s[i]);
  }
  g_string_free(cur, TRUE);
  return out;
}

static void
check_cmake(GPtrArray *names)
{
  GString *list = g_string_new("first");
  GPtrArray *listed = g_ptr_array_new();
  for (guint i = 0; i < names->len; i++) {
    const char *name = names->pdata[i];
    const size_t len = strlen(name);
    GString *arg = g_string_new(NULL), *back = g_string_new(NULL);
    cmake_argument(arg, name, len);
    if (cmake_read(arg->str, arg->len, back) != arg->len)
      violation("a CMake argument does not read as one argument", arg->str, arg->len);
    if (back->len != len || memcmp(back->str, name, len) != 0)
      violation("a CMake argument evaluates to other bytes", arg->str, arg->len);
    dump(cmake_listable(name, len) ? "cmake-list" : "cmake", name, len, arg->str, arg->len);
    if (cmake_listable(name, len) && len > 0) {
      g_string_append_c(list, ';');
      g_string_append_len(list, name, (gssize)len);
      g_ptr_array_add(listed, (gpointer)name);
    }
    g_string_free(arg, TRUE);
    g_string_free(back, TRUE);
  }
  g_string_append(list, ";last");
  GPtrArray *split = cmake_split(list->str, list->len);
  if (split->len != listed->len + 2)
    violation("a list of listable names splits into another number", list->str, list->len);
  for (guint i = 0; i < listed->len; i++)
    if (strcmp(split->pdata[i + 1], listed->pdata[i]) != 0)
      violation("a listable name comes out of the list changed", split->pdata[i + 1],
                strlen(split->pdata[i + 1]));
  g_ptr_array_unref(split);
  g_ptr_array_unref(listed);
  g_string_free(list, TRUE);
}

/* ---- Meson ---- */

static void
check_meson(GPtrArray *names)
{
  GString *out = g_string_new(NULL);
  GPtrArray *kept = g_ptr_array_new();
  for (guint i = 0; i < names->len; i++) {
    const char *name = names->pdata[i];
    if (*name == '\0' || meson_refuses(name, strlen(name)))
      continue;
    if (kept->len)
      g_string_append_c(out, '\n');
    g_string_append(out, name);
    g_ptr_array_add(kept, (gpointer)name);
    dump("meson", name, strlen(name), name, strlen(name));
  }
  if (kept->len == 0) {
    g_string_free(out, TRUE);
    g_ptr_array_unref(kept);
    return;
  }
  /* Meson's reading: UTF-8 (a byte that is not would be replaced),
   * universal newlines (CR LF and CR become LF), then split('\n'). */
  if (!g_utf8_validate_len(out->str, out->len, NULL))
    violation("the output is not UTF-8", out->str, out->len);
  GString *text = g_string_new(NULL);
  for (size_t i = 0; i < out->len; i++) {
    if (out->str[i] == '\r') {
      g_string_append_c(text, '\n');
      if (i + 1 < out->len && out->str[i + 1] == '\n')
        i++;
    } else {
      g_string_append_c(text, out->str[i]);
    }
  }
  char **lines = g_strsplit(text->str, "\n", -1);
  if (g_strv_length(lines) != kept->len)
    violation("Meson would read another number of names", out->str, out->len);
  for (guint i = 0; i < kept->len; i++)
    if (strcmp(lines[i], kept->pdata[i]) != 0)
      violation("Meson would read a name changed", lines[i], strlen(lines[i]));
  g_strfreev(lines);
  g_string_free(text, TRUE);
  g_string_free(out, TRUE);
  g_ptr_array_unref(kept);
}

/* ---- Starlark ---- */

/* The double-quoted Starlark string literal at T (N bytes) read into OUT
 * as Bazel reads it (\\ \" and octal escapes of up to three digits,
 * each a byte); false when it is not one literal of the kinds the writer
 * should emit. */
static bool
starlark_read(const char *t, size_t n, GString *out)
{
  if (n < 2 || t[0] != '"' || t[n - 1] != '"')
    return false;
  for (size_t i = 1; i + 1 < n; i++) {
    unsigned char c = (unsigned char)t[i];
    if (c == '"' || c < 0x20 || c >= 0x7f)
      return false;
    if (c != '\\') {
      g_string_append_c(out, (char)c);
      continue;
    }
    if (++i + 1 >= n)
      return false;
    if (t[i] == '\\' || t[i] == '"') {
      g_string_append_c(out, t[i]);
    } else if (t[i] >= '0' && t[i] <= '7') {
      unsigned v = 0, k = 0;
      for (; k < 3 && i + 1 < n && t[i] >= '0' && t[i] <= '7'; k++, i++)
        v = v * 8 + (unsigned)(t[i] - '0');
      i--;
      if (v > 0377)
        return false; /* Bazel refuses it */
      g_string_append_c(out, (char)v);
    } else {
      return false;
    }
  }
  return true;
}

static void
check_starlark(GPtrArray *names)
{
  for (guint i = 0; i < names->len; i++) {
    const char *name = names->pdata[i];
    const size_t len = strlen(name);
    GString *b = g_string_new("\"");
    starlark_bytes(b, name, len);
    g_string_append_c(b, '"');
    const char *bp = b->str;
    const size_t bn = b->len;
    GString *back = g_string_new(NULL);
    if (!starlark_read(bp, bn, back))
      violation("a Starlark string is not one literal", bp, bn);
    if (back->len != len || memcmp(back->str, name, len) != 0)
      violation("a Starlark string reads as other bytes", bp, bn);
    dump("starlark", name, len, bp, bn);
    g_string_free(back, TRUE);
    g_string_free(b, TRUE);
  }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  cur_data = (const char *)data;
  cur_size = size;
  if (size == 0)
    return 0;
  const char *path = getenv("TRAWL_FUZZ_DUMP");
  dump_file = path ? fopen(path, "a") : NULL;
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  size_t start = 1;
  for (size_t i = 1; i <= size; i++)
    if (i == size || data[i] == 0) {
      g_ptr_array_add(names, g_strndup((const char *)data + start, i - start));
      start = i + 1;
    }
  switch (data[0] % 3) {
  case 0: check_cmake(names); break;
  case 1: check_meson(names); break;
  default: check_starlark(names); break;
  }
  g_ptr_array_unref(names);
  if (dump_file)
    fclose(dump_file);
  dump_file = NULL;
  return 0;
}
