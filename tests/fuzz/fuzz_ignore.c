/* trawl — libFuzzer target over ignore files (libcore/src/ignore.c): any
 * bytes parsed as a .gitignore, then paths matched against the rules.
 *
 * The whole input is the ignore file, so a seed is an ordinary ignore file
 * (tests/fuzz/corpus-ignore/). Paths tried: every line of the input (cut at
 * a NUL or CR, with a leading '!' and leading '/' taken away), the input's
 * bytes split at '\n' and NUL as one long path, fixed paths ("a", "a/b",
 * "a/b/c.o", ...), each rule's own text when it holds no wildcard, and for a
 * path without '/' the same name one directory down; each as a file and as a
 * directory.
 *
 * Invariants, each checked with abort() so that libFuzzer reports it:
 *  - there are no more rules than lines; rule line numbers increase
 *    strictly, lie within 1..lines, and name a line that is neither empty
 *    nor a '#' comment;
 *  - a rule's `shown` holds no '\n', is a prefix of its line (the BOM
 *    skipped on line 1) and does not end with a space that no backslash
 *    escapes; what the parser cut off the line's content (the line up to a
 *    NUL, less a CR before its '\n') is spaces only, the first of them not
 *    escaped (a CR ending a last line without '\n' may go too, as git
 *    drops it);
 *  - `negated` is exactly "shown starts with '!'", `dir_only` exactly "what
 *    follows the '!' is not empty and ends with '/'", `basename` exactly
 *    "no '/' in it otherwise";
 *  - ignore_file_match() returns NULL or a pointer to one of the file's
 *    rules, that rule has a compiled pattern, and a directory-only rule is
 *    returned only for a directory;
 *  - asking for a directory never gives an earlier rule than asking for a
 *    file of the same path (the rules that match a file match a directory);
 *  - a basename rule that matches NAME also matches "q/NAME": the verdict
 *    there is that rule or a later one;
 *  - a rule without wildcards matches its own text (as a directory, so
 *    that a trailing '/' does not matter): the verdict is that rule or a
 *    later one.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ignore.h"
#include "fuzz_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Lines of one input looked at as paths; the rest are ignored. */
#define MAX_LINE_PATHS 32

static const uint8_t *cur_data;
static size_t cur_size;

/* Report which invariant broke, with the input, then abort. */
static void
violation(const char *what, const struct ignore_rule *r, const char *path, size_t len)
{
  fprintf(stderr, "fuzz_ignore: invariant violated: %s\n", what);
  print_bytes("ignore file", (const char *)cur_data, cur_size);
  if (r != NULL) {
    fprintf(stderr, "  rule of line %u (negated %d, dir_only %d, basename %d)\n", r->line,
            r->negated, r->dir_only, r->basename);
    print_bytes("shown", r->shown, strlen(r->shown));
  }
  if (path != NULL)
    print_bytes("path", path, len);
  abort();
}

/* The lines of the input as ignore_file_parse must see them: after a
 * leading UTF-8 BOM, split at '\n'; no line after a final '\n'. */
struct line {
  const char *s;
  size_t len;
  bool nl; /* a '\n' ends it */
};

static struct line *
split_lines(const char *data, size_t len, size_t *count)
{
  if (len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0) {
    data += 3;
    len -= 3;
  }
  size_t cap = 1;
  for (size_t i = 0; i < len; i++)
    cap += data[i] == '\n';
  struct line *lines = g_new(struct line, cap);
  size_t n = 0, start = 0;
  while (start < len) {
    const char *nl = memchr(data + start, '\n', len - start);
    size_t end = nl ? (size_t)(nl - data) : len;
    lines[n].s = data + start;
    lines[n].len = end - start;
    lines[n].nl = nl != NULL;
    n++;
    start = end + 1;
  }
  *count = n;
  return lines;
}

/* The index of R in F, or -1 for NULL; aborts on a pointer that is neither. */
static long
rule_index(const struct ignore_file *f, const struct ignore_rule *r, const char *path, size_t len,
           bool is_dir)
{
  if (r == NULL)
    return -1;
  for (size_t i = 0; i < f->n; i++) {
    if (r != &f->rules[i])
      continue;
    if (r->pattern == NULL)
      violation("a rule without a pattern matched", r, path, len);
    if (r->dir_only && !is_dir)
      violation("a directory-only rule matched a file", r, path, len);
    return (long)i;
  }
  violation("ignore_file_match returned a pointer outside the rules", NULL, path, len);
  return -2;
}

static long
match_index(const struct ignore_file *f, const char *path, size_t len, bool is_dir)
{
  /* An exact-size copy, so that a read past LEN bytes is an overflow. */
  char *copy = g_malloc(len ? len : 1);
  if (len)
    memcpy(copy, path, len);
  long i = rule_index(f, ignore_file_match(f, copy, len, is_dir), path, len, is_dir);
  g_free(copy);
  return i;
}

/* Match PATH both ways and check what relates the two verdicts, and for a
 * name without '/' the same name one directory down. */
static void
check_path(const struct ignore_file *f, const char *path, size_t len)
{
  long as_file = match_index(f, path, len, false);
  long as_dir = match_index(f, path, len, true);
  if (as_file >= 0 && as_dir < as_file)
    violation("a directory gets an earlier rule than a file of the same path",
              &f->rules[as_file], path, len);
  if (len == 0 || memchr(path, '/', len) != NULL)
    return;
  char *below = g_malloc(len + 2);
  memcpy(below, "q/", 2);
  memcpy(below + 2, path, len);
  for (int d = 0; d < 2; d++) {
    long here = d ? as_dir : as_file;
    if (here < 0 || !f->rules[here].basename)
      continue;
    long there = match_index(f, below, len + 2, d);
    if (there < here)
      violation("a basename rule that matches NAME misses q/NAME", &f->rules[here], below,
                len + 2);
  }
  g_free(below);
}

static void
check_rules(const struct ignore_file *f, const struct line *lines, size_t n_lines)
{
  if (f->n > n_lines)
    violation("more rules than lines", NULL, NULL, 0);
  unsigned prev = 0;
  for (size_t i = 0; i < f->n; i++) {
    const struct ignore_rule *r = &f->rules[i];
    if (r->shown == NULL)
      violation("a rule without shown text", NULL, NULL, 0);
    if (r->line <= prev || r->line > n_lines)
      violation("rule line numbers do not increase within 1..lines", r, NULL, 0);
    prev = r->line;
    const struct line *l = &lines[r->line - 1];
    if (l->len == 0 || l->s[0] == '#')
      violation("a rule from an empty or comment line", r, l->s, l->len);

    const size_t sl = strlen(r->shown);
    if (memchr(r->shown, '\n', sl) != NULL)
      violation("shown holds a newline", r, NULL, 0);
    if (sl > l->len || memcmp(r->shown, l->s, sl) != 0)
      violation("shown is not a prefix of its line", r, l->s, l->len);
    /* Backslashes right before the end of shown: an odd run escapes what
     * follows. */
    size_t k = 0;
    while (k < sl && r->shown[sl - 1 - k] == '\\')
      k++;
    if (sl > 0 && r->shown[sl - 1] == ' ') {
      size_t e = 0;
      while (e + 1 < sl && r->shown[sl - 2 - e] == '\\')
        e++;
      if (e % 2 == 0)
        violation("shown ends with a space no backslash escapes", r, NULL, 0);
    }
    /* What was cut off the line's content (the line up to a NUL, less a CR
     * before its '\n') is spaces only, the first of them not escaped. A CR
     * ending the last line without a '\n' may be cut or kept: git cuts it
     * (it appends a newline to the file), ignore.c keeps it for now. */
    size_t content = l->len;
    const char *nul = memchr(l->s, '\0', l->len);
    if (nul)
      content = (size_t)(nul - l->s);
    else if (l->nl && content > 0 && l->s[content - 1] == '\r')
      content--;
    if (sl > content)
      violation("shown is longer than its line's content", r, l->s, l->len);
    if (!nul && !l->nl && content > sl && l->s[content - 1] == '\r')
      content--;
    for (size_t j = sl; j < content; j++)
      if (l->s[j] != ' ')
        violation("more than trailing spaces were cut from the line", r, l->s, l->len);
    if (content > sl && k % 2 == 1)
      violation("an escaped trailing space was cut", r, l->s, l->len);

    const char *body = r->shown;
    size_t bl = sl;
    if (r->negated != (bl > 0 && body[0] == '!'))
      violation("negated disagrees with a leading '!'", r, NULL, 0);
    if (r->negated) {
      body++;
      bl--;
    }
    if (r->dir_only != (bl > 0 && body[bl - 1] == '/'))
      violation("dir_only disagrees with a trailing '/'", r, NULL, 0);
    if (r->dir_only)
      bl--;
    if (r->basename != (memchr(body, '/', bl) == NULL))
      violation("basename disagrees with the '/' in the pattern", r, NULL, 0);
  }
}

/* A rule whose text holds no wildcard matches that text as a path. */
static void
check_literal_rules(const struct ignore_file *f)
{
  for (size_t i = 0; i < f->n; i++) {
    const struct ignore_rule *r = &f->rules[i];
    if (r->pattern == NULL)
      continue;
    const char *body = r->shown + r->negated;
    size_t bl = strlen(body) - r->dir_only;
    if (!r->basename && bl > 0 && body[0] == '/') {
      body++;
      bl--;
    }
    if (bl == 0 || body[0] == '/')
      continue;
    bool literal = true;
    for (size_t k = 0; k < bl && literal; k++)
      literal = memchr("*?[\\", body[k], 4) == NULL;
    if (!literal)
      continue;
    long got = match_index(f, body, bl, true);
    if (got < (long)i)
      violation("a rule without wildcards does not match its own text", r, body, bl);
  }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  cur_data = data;
  cur_size = size;
  const char *text = (const char *)data;
  struct ignore_file *f = ignore_file_parse("fuzz/.gitignore", text, size);
  if (f == NULL || f->refs != 1 || (f->n > 0 && f->rules == NULL) ||
      strcmp(f->source, "fuzz/.gitignore") != 0)
    violation("ignore_file_parse returned a malformed file", NULL, NULL, 0);

  size_t n_lines;
  struct line *lines = split_lines(text, size, &n_lines);
  check_rules(f, lines, n_lines);

  /* A second reference keeps the file alive across the first unref. */
  struct ignore_file *ref = ignore_file_ref(f);
  if (ref != f || f->refs != 2)
    violation("ignore_file_ref", NULL, NULL, 0);
  ignore_file_unref(f);

  static const char *const fixed[] = {"a", "a/b", "a/b/c.o", "b", ".gitignore", "x/y/z",
                                      "foo", "build", "a.o", "", "/", "a//b"};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    check_path(ref, fixed[i], strlen(fixed[i]));

  for (size_t i = 0; i < n_lines && i < MAX_LINE_PATHS; i++) {
    const char *s = lines[i].s;
    size_t n = lines[i].len;
    const char *cut = memchr(s, '\0', n);
    if (cut)
      n = (size_t)(cut - s);
    cut = memchr(s, '\r', n);
    if (cut)
      n = (size_t)(cut - s);
    check_path(ref, s, n);
    if (n > 0 && s[0] == '!') {
      s++;
      n--;
    }
    while (n > 0 && s[0] == '/') {
      s++;
      n--;
    }
    check_path(ref, s, n);
  }

  /* The whole input as one path: '\n' and NUL become '/'. */
  char *joined = g_malloc(size ? size : 1);
  for (size_t i = 0; i < size; i++)
    joined[i] = (data[i] == '\n' || data[i] == '\0') ? '/' : (char)data[i];
  check_path(ref, joined, size);
  g_free(joined);

  check_literal_rules(ref);

  g_free(lines);
  ignore_file_unref(ref);
  return 0;
}
