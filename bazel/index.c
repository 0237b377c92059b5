/* trawl-bazel-index — what git ignores in a Bazel workspace, per package, for trawl_glob().
 *
 * trawl_glob(gitignore = True) lets Bazel's glob() list the directories
 * (Bazel then tracks each listing, so an edit reloads only the packages
 * whose listings changed) and needs from trawl only where git's ignore
 * rules cut the tree (bazel/glob.bzl). This program asks `trawl batch
 * --cache` for the workspace walked as glob() walks it (links followed,
 * hidden entries entered, what .bazelignore names, trawl's own directory
 * and the `bazel-*` links at the top left out), once reading no ignore
 * file and once as git does, and writes index.bzl:
 *
 *   LEFT_OUT = {"bazel-bin": None, ...}    the top-level bazel-* links
 *   PACKAGES = {"pkg": ENTRY, ...}          every package of the walk
 *   CHECKED = True
 *
 * ENTRY is None when git ignores nothing in the package; True when git
 * ignores the package's own directory (everything in it); otherwise
 * (IGN, IGN_WILD, TAINT): IGN the paths (relative to the package) that git
 * ignores while it does not ignore their directory — files, and the
 * topmost ignored directories, which are not entered (plus, in the top
 * package, the LEFT_OUT links) — as a list, which glob() takes as exact
 * excludes, but those with a wildcard in them ('*' or '?': glob() would
 * take them as patterns), in the dict IGN_WILD; TAINT a dict from each directory that
 * holds one of those directories somewhere below it ("" the package's own)
 * to its subdirectories that git does not ignore, sorted (subpackages are
 * not subdirectories: glob() stops at them). Every byte outside printable
 * ASCII, and '"' and '\', is written as an octal escape: the file is ASCII,
 * and no file name can change its meaning. It holds no absolute path and no
 * time and depends on the tree alone, so that it only changes when what git
 * ignores, or where, changes (or the packages do): a file added, removed or
 * renamed that git does not ignore leaves it as it is. CHECKED says that
 * the command ran through the wrapper: the repository rule links a kept
 * index only for the wrapper, and writes False in the copy it makes when it
 * indexes itself (glob.bzl's message about a package it does not know).
 *
 * The index is kept as STATE/index-DIGEST.bzl, DIGEST its XXH3-128 in hex
 * (content-addressed: an index is never another's, and one made again is
 * the same file, so Bazel sees no change). The newest KEPT are kept.
 *
 * The walk is cut in parts: the top directory's own entries, and each
 * directory at the top with everything below it. Each part has its own
 * trawl cache and a file of its facts (what the index is made of: BUILD
 * files, the directories git does not ignore, what it ignores below them)
 * in STATE/parts/, named by a hash of this indexer's name and the part's
 * queries, so that a part whose queries change (.bazelignore edited, a
 * bazel-* link made) starts afresh, alone. Cutting matters because trawl
 * check reads and writes a whole cache when anything in it changed: an
 * edit costs the check of its part (docs/benchmarks.md, "Bazel: the edit
 * loop"). STATE/stamp holds "DIGEST PARTS TRAWL": the index's digest, a
 * hash of the parts' names, and the trawl that wrote the caches (another's
 * are not trusted: everything is made again).
 *
 * Each run first re-checks every part with `trawl check`. A part where
 * nothing changed, or only files that git does not ignore were added or
 * removed (the same change in both views, no BUILD file among them), keeps
 * its facts. The others are asked again (`trawl batch --cache`: only the
 * directories that changed are read), and the index is made again from
 * every part's facts. The wrapper (tools/bazel) runs this before every
 * command; the repository rule when the wrapper did not.
 *
 * Usage: trawl-bazel-index --trawl EXE --root DIR --state NAME
 * NAME is trawl's directory, relative to DIR (never walked). The index's
 * digest is printed on stdout. Exit 0 on success, 2 for bad usage, 3 when
 * trawl fails or a file cannot be read or written (the message is printed).
 */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* POSIX.1-2008 and realpath() */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
/* XXH3 from the header alone, as libcore's cache file takes it. */
#define XXH_INLINE_ALL
#include <xxhash.h>

extern char **environ;

/* The queries sent to trawl batch, by id; their labels in trawl check's
 * output (STATE/cache.labels). */
enum {
  Q_FILES,     /* every file (links followed; a dangling link too) */
  Q_GI_FILES,  /* the same, leaving out what git ignores */
  Q_DIRS,      /* every directory */
  Q_GI_DIRS,
  Q_DANGLING,  /* BUILD and BUILD.bazel links that cannot be followed */
  N_QUERIES
};
static const char *const label[N_QUERIES] = {"F", "GF", "D", "GD", "B"};

enum { KEPT = 3 }; /* indexes kept in STATE, the newest */

/* Which indexer made an index (a line of it): the repository rule compiles
 * this file with -DTRAWL_INDEXER=<a hash of its text>, and takes a kept
 * index only from the indexer it compiled. An index the wrapper made with
 * the indexer of before an upgrade is not taken. */
#ifndef TRAWL_INDEXER
#define TRAWL_INDEXER "dev"
#endif

/* ---- small growable buffers ------------------------------------------- */

typedef struct {
  char *data;
  size_t len, cap;
} buf;

static void
die_oom(void)
{
  fputs("trawl-bazel-index: out of memory\n", stderr);
  exit(3);
}

static void
buf_grow(buf *b, size_t more)
{
  if (b->len + more + 1 <= b->cap)
    return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + more + 1)
    cap *= 2;
  char *d = realloc(b->data, cap);
  if (!d)
    die_oom();
  b->data = d;
  b->cap = cap;
}

static void
buf_add(buf *b, const void *p, size_t n)
{
  buf_grow(b, n);
  memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
}

static void
buf_str(buf *b, const char *s)
{
  buf_add(b, s, strlen(s));
}

static void
buf_byte(buf *b, char c)
{
  buf_add(b, &c, 1);
}

static void
fail(int status, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("trawl-bazel-index: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(status);
}

/* ---- a path: bytes and length (names may hold any byte but NUL and '/') */

typedef struct {
  char *p;
  size_t n;
} path;

typedef struct {
  path *v;
  size_t n, cap;
} path_list;

static void
list_add(path_list *l, char *p, size_t n)
{
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 64;
    l->v = realloc(l->v, l->cap * sizeof *l->v);
    if (!l->v)
      die_oom();
  }
  l->v[l->n].p = p;
  l->v[l->n].n = n;
  l->n++;
}

/* The last byte c in p[0..n), or NULL (memrchr is not in POSIX). */
static const char *
last_byte(const char *p, int c, size_t n)
{
  while (n--)
    if (p[n] == (char)c)
      return p + n;
  return NULL;
}

/* ---- JSON: the queries out, the answers in ---------------------------- */

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
  unsigned c = s[0];
  size_t len;
  uint32_t cp;
  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
    cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    cp = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (n < len)
    return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
      (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
    return 0;
  return len;
}

/* A JSON string for the bytes s[0..n): bytes that are not UTF-8 as
 * \udcXX, which trawl batch reads back as the byte (docs/cli.md). */
static void
json_string(buf *b, const char *s, size_t n)
{
  const unsigned char *u = (const unsigned char *)s;
  buf_byte(b, '"');
  for (size_t i = 0; i < n;) {
    unsigned c = u[i];
    if (c == '"' || c == '\\') {
      buf_byte(b, '\\');
      buf_byte(b, (char)c);
      i++;
    } else if (c < 0x20 || c == 0x7f) {
      char esc[8];
      snprintf(esc, sizeof esc, "\\u%04x", c);
      buf_str(b, esc);
      i++;
    } else if (c < 0x80) {
      buf_byte(b, (char)c);
      i++;
    } else {
      size_t len = utf8_len(u + i, n - i);
      if (len) {
        buf_add(b, s + i, len);
        i += len;
      } else {
        char esc[8];
        snprintf(esc, sizeof esc, "\\udc%02x", c);
        buf_str(b, esc);
        i++;
      }
    }
  }
  buf_byte(b, '"');
}

static int
hex4(const char *s, unsigned *out)
{
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char c = s[i];
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f')
      v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      v |= (unsigned)(c - 'A' + 10);
    else
      return 0;
  }
  *out = v;
  return 1;
}

static void
utf8_put(buf *b, uint32_t cp)
{
  char o[4];
  size_t n;
  if (cp < 0x80) {
    o[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    o[0] = (char)(0xc0 | (cp >> 6));
    o[1] = (char)(0x80 | (cp & 0x3f));
    n = 2;
  } else if (cp < 0x10000) {
    o[0] = (char)(0xe0 | (cp >> 12));
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[2] = (char)(0x80 | (cp & 0x3f));
    n = 3;
  } else {
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    n = 4;
  }
  buf_add(b, o, n);
}

/* Decodes the JSON string starting at *s (at its opening quote) into out;
 * leaves *s after the closing quote. trawl wrote it, so it is well formed;
 * anything else is a failure all the same. */
static void
json_read_string(const char **s, buf *out)
{
  const char *p = *s;
  if (*p != '"')
    fail(3, "unexpected output from trawl batch (a string was expected)");
  p++;
  out->len = 0;
  for (;;) {
    char c = *p;
    if (c == '\0')
      fail(3, "unexpected output from trawl batch (an unterminated string)");
    if (c == '"') {
      p++;
      break;
    }
    if (c != '\\') {
      const char *run = p;
      while (*p && *p != '"' && *p != '\\')
        p++;
      buf_add(out, run, (size_t)(p - run));
      continue;
    }
    c = p[1];
    p += 2;
    switch (c) {
    case '"': case '\\': case '/': buf_byte(out, c); break;
    case 'b': buf_byte(out, '\b'); break;
    case 'f': buf_byte(out, '\f'); break;
    case 'n': buf_byte(out, '\n'); break;
    case 'r': buf_byte(out, '\r'); break;
    case 't': buf_byte(out, '\t'); break;
    case 'u': {
      unsigned u, lo;
      if (!hex4(p, &u))
        fail(3, "unexpected output from trawl batch (a bad \\u escape)");
      p += 4;
      if (u >= 0xdc80 && u <= 0xdcff) {
        buf_byte(out, (char)(u - 0xdc00)); /* one raw byte */
      } else if (u >= 0xd800 && u <= 0xdbff && p[0] == '\\' && p[1] == 'u' &&
                 hex4(p + 2, &lo) && lo >= 0xdc00 && lo <= 0xdfff) {
        p += 6;
        utf8_put(out, 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00));
      } else {
        utf8_put(out, u);
      }
      break;
    }
    default:
      fail(3, "unexpected output from trawl batch (a bad escape)");
    }
  }
  *s = p;
}

/* ---- .bazelignore and the top directory -------------------------------- */

/* Appends a trawl-dialect pattern naming exactly the path s[0..n): every
 * byte that could be syntax is escaped. */
static void
literal_pattern(buf *b, const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    if (strchr("*?[]{}\\,!^", s[i]) && s[i] != '\0')
      buf_byte(b, '\\');
    buf_byte(b, s[i]);
  }
}

/* Bazel's reading of one .bazelignore line (4.2.3, checked by
 * tests/bazel): taken as it is (no trimming), '#' starts a comment line,
 * then normalised as a path: empty and '.' segments dropped, '..' takes
 * the segment before it off. An absolute path, or one that climbs out,
 * can name nothing inside the workspace. Returns false for those. */
static bool
normalise_ignore_line(const char *line, size_t n, buf *out)
{
  out->len = 0;
  if (n == 0 || line[0] == '#' || line[0] == '/')
    return false;
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    while (j < n && line[j] != '/')
      j++;
    size_t seg = j - i;
    if (seg == 0 || (seg == 1 && line[i] == '.')) {
      /* nothing */
    } else if (seg == 2 && line[i] == '.' && line[i + 1] == '.') {
      if (out->len == 0)
        return false;
      const char *slash = last_byte(out->data, '/', out->len);
      out->len = slash ? (size_t)(slash - out->data) : 0;
    } else {
      if (out->len)
        buf_byte(out, '/');
      buf_add(out, line + i, seg);
    }
    i = j + 1;
  }
  if (out->data)
    out->data[out->len] = '\0';
  return out->len > 0;
}

/* Appends to excludes the two trawl patterns that leave out the directory
 * p[0..n) and everything below it. */
static void
exclude_tree(buf *excludes, size_t *n_excludes, const char *p, size_t n)
{
  buf tmp = {0};
  literal_pattern(&tmp, p, n);
  if (*n_excludes)
    buf_byte(excludes, ',');
  json_string(excludes, tmp.data, tmp.len);
  buf_byte(excludes, ',');
  buf_str(&tmp, "/**");
  json_string(excludes, tmp.data, tmp.len);
  free(tmp.data);
  *n_excludes += 2;
}

/* Reads ROOT/.bazelignore (if any) into the excludes; the paths it names
 * that are top-level names go to TOP too. */
static void
read_bazelignore(const char *root, buf *excludes, size_t *n_excludes, path_list *top)
{
  buf name = {0}, norm = {0};
  buf_str(&name, root);
  buf_str(&name, "/.bazelignore");
  FILE *f = fopen(name.data, "rb");
  if (!f) {
    if (errno != ENOENT)
      fail(3, "%s: %s", name.data, strerror(errno));
    free(name.data);
    return;
  }
  buf text = {0};
  char chunk[65536];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
    buf_add(&text, chunk, got);
  if (ferror(f))
    fail(3, "%s: cannot be read", name.data);
  fclose(f);
  /* Lines end at "\n", "\r\n" or a lone "\r", as Java's line readers split. */
  size_t i = 0;
  while (i < text.len) {
    size_t j = i;
    while (j < text.len && text.data[j] != '\n' && text.data[j] != '\r')
      j++;
    if (normalise_ignore_line(text.data + i, j - i, &norm)) {
      exclude_tree(excludes, n_excludes, norm.data, norm.len);
      if (!memchr(norm.data, '/', norm.len)) {
        char *copy = strdup(norm.data);
        if (!copy)
          die_oom();
        list_add(top, copy, norm.len);
      }
    }
    if (j < text.len && text.data[j] == '\r' && j + 1 < text.len && text.data[j + 1] == '\n')
      j++;
    i = j + 1;
  }
  free(text.data);
  free(name.data);
  free(norm.data);
}
/* ---- packages ---------------------------------------------------------- */

/* An open-addressing set of package directories (paths without a
 * trailing '/'; "" for the top). */
typedef struct {
  path *slots;
  size_t cap, n;
} pkg_set;

static uint64_t
hash_bytes(const char *p, size_t n)
{
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)p[i];
    h *= 1099511628211ull;
  }
  return h;
}

static bool
pkg_has(const pkg_set *s, const char *p, size_t n)
{
  if (!s->cap)
    return false;
  for (size_t i = hash_bytes(p, n) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
    if (!s->slots[i].p)
      return false;
    if (s->slots[i].n == n && memcmp(s->slots[i].p, p, n) == 0)
      return true;
  }
}

static void
pkg_add(pkg_set *s, char *p, size_t n)
{
  if (pkg_has(s, p, n))
    return;
  if (2 * (s->n + 1) > s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    path *slots = calloc(cap, sizeof *slots);
    if (!slots)
      die_oom();
    for (size_t k = 0; k < s->cap; k++) {
      if (!s->slots[k].p)
        continue;
      size_t i = hash_bytes(s->slots[k].p, s->slots[k].n) & (cap - 1);
      while (slots[i].p)
        i = (i + 1) & (cap - 1);
      slots[i] = s->slots[k];
    }
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
  }
  size_t i = hash_bytes(p, n) & (s->cap - 1);
  while (s->slots[i].p)
    i = (i + 1) & (s->cap - 1);
  s->slots[i].p = p;
  s->slots[i].n = n;
  s->n++;
}

/* The package that owns path p: the longest directory above p (strictly)
 * that is a package. Returns its length, or (size_t)-1 when there is none
 * (only possible when the top has no BUILD file). */
static size_t
owner(const pkg_set *s, const char *p, size_t n)
{
  size_t end = n;
  for (;;) {
    const char *slash = end ? last_byte(p, '/', end) : NULL;
    if (!slash)
      return pkg_has(s, "", 0) ? 0 : (size_t)-1;
    end = (size_t)(slash - p);
    if (pkg_has(s, p, end))
      return end;
  }
}

static bool
is_build_file(const char *base, size_t n)
{
  return (n == 5 && memcmp(base, "BUILD", 5) == 0) ||
         (n == 11 && memcmp(base, "BUILD.bazel", 11) == 0);
}
/* ---- writing Starlark -------------------------------------------------- */

static bool
starlark_plain(unsigned char c)
{
  return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

static void
starlark_bytes(buf *b, const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    size_t run = i;
    while (run < n && starlark_plain((unsigned char)s[run]))
      run++;
    if (run > i) {
      buf_add(b, s + i, run - i);
      i = run;
      if (i == n)
        break;
    }
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      buf_byte(b, '\\');
      buf_byte(b, (char)c);
    } else if (c < 0x20 || c >= 0x7f) {
      char esc[5];
      snprintf(esc, sizeof esc, "\\%03o", c);
      buf_str(b, esc);
    } else {
      buf_byte(b, (char)c);
    }
  }
}

static int
cmp_bytes(const char *a, size_t an, const char *b, size_t bn)
{
  int c = memcmp(a, b, an < bn ? an : bn);
  if (c)
    return c;
  return an < bn ? -1 : an > bn;
}

static int
cmp_path(const void *x, const void *y)
{
  const path *a = x, *b = y;
  return cmp_bytes(a->p, a->n, b->p, b->n);
}

/* ---- writing -------------------------------------------------------- */

/* Writes O to FILE: beside it, then renamed over it, so that a reader sees
 * the old file or the new one. */
static void
write_file(const char *file, const buf *o)
{
  buf tmp = {0};
  buf_str(&tmp, file);
  buf_str(&tmp, ".XXXXXX");
  int fd = mkstemp(tmp.data);
  if (fd < 0)
    fail(3, "%s: %s", tmp.data, strerror(errno));
  size_t off = 0;
  while (off < o->len) {
    ssize_t w = write(fd, o->data + off, o->len - off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      unlink(tmp.data);
      fail(3, "%s: %s", tmp.data, strerror(errno));
    }
    off += (size_t)w;
  }
  if (fchmod(fd, 0644) != 0 || close(fd) != 0 || rename(tmp.data, file) != 0) {
    unlink(tmp.data);
    fail(3, "%s: %s", file, strerror(errno));
  }
  free(tmp.data);
}

/* The links named bazel-* in the top directory: Bazel's convenience links
 * into an output base (this one's, or a copied workspace's). trawl does not
 * walk them: build outputs are no sources, and an execroot links back to
 * the whole workspace. Their names go to NAMES, sorted, so that the
 * queries made of them are the same text for the same links. */
static void
exclude_output_links(const char *root, buf *excludes, size_t *n_excludes, path_list *names)
{
  DIR *d = opendir(root);
  if (!d)
    fail(3, "%s: %s", root, strerror(errno));
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, "bazel-", 6) != 0)
      continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(st.st_mode))
      continue;
    char *copy = strdup(e->d_name);
    if (!copy)
      die_oom();
    list_add(names, copy, strlen(copy));
  }
  closedir(d);
  qsort(names->v, names->n, sizeof *names->v, cmp_path);
  for (size_t i = 0; i < names->n; i++) {
    buf tmp = {0};
    literal_pattern(&tmp, names->v[i].p, names->v[i].n);
    if (*n_excludes)
      buf_byte(excludes, ',');
    json_string(excludes, tmp.data, tmp.len);
    free(tmp.data);
    (*n_excludes)++;
  }
}

/* ---- running trawl ------------------------------------------------------ */

/* Runs ARGV with IN on its stdin (NULL: nothing) and returns its exit
 * status (128 + N for a signal); its stdout goes to OUT. Its stderr
 * (problems of the walk) goes to ours. */
static int
run(char *const argv[], const buf *in, buf *out)
{
  int to[2], from[2];
  if (pipe(to) != 0 || pipe(from) != 0)
    fail(3, "pipe: %s", strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, to[0], 0);
  posix_spawn_file_actions_adddup2(&fa, from[1], 1);
  posix_spawn_file_actions_addclose(&fa, to[0]);
  posix_spawn_file_actions_addclose(&fa, to[1]);
  posix_spawn_file_actions_addclose(&fa, from[0]);
  posix_spawn_file_actions_addclose(&fa, from[1]);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    fail(3, "%s: %s", argv[0], strerror(rc));
  close(to[0]);
  close(from[1]);
  /* trawl reads all of its input before it writes anything. */
  size_t off = 0;
  while (in && off < in->len) {
    ssize_t w = write(to[1], in->data + off, in->len - off);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      break; /* trawl failed; its status says why */
    }
    off += (size_t)w;
  }
  close(to[1]);
  out->len = 0;
  buf_grow(out, 0);
  char chunk[65536];
  for (;;) {
    ssize_t r = read(from[0], chunk, sizeof chunk);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    buf_add(out, chunk, (size_t)r);
  }
  close(from[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      fail(3, "waitpid: %s", strerror(errno));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Splits trawl batch's output into the paths of each query. */
static void
parse_answers(const char *text, path_list lists[N_QUERIES])
{
  const char *p = text;
  buf s = {0};
  for (int q = 0; q < N_QUERIES; q++) {
    int id;
    int used = 0;
    if (sscanf(p, "{\"id\":%d,\"paths\":[%n", &id, &used) != 1 || used == 0 || id != q)
      fail(3, "unexpected output from trawl batch (query %d)", q);
    p += used;
    while (*p == '"') {
      json_read_string(&p, &s);
      char *copy = malloc(s.len + 1);
      if (!copy)
        die_oom();
      memcpy(copy, s.data ? s.data : "", s.len + 1);
      list_add(&lists[q], copy, s.len);
      if (*p == ',')
        p++;
    }
    if (p[0] != ']' || p[1] != '}' || p[2] != '\n')
      fail(3, "unexpected output from trawl batch (end of query %d)", q);
    p += 3;
  }
  free(s.data);
}

/* ---- what each part of the walk says ------------------------------------- */

/* The directory part of p[0..n) ("" for a name at the top). */
static size_t
dir_len(const char *p, size_t n)
{
  const char *slash = last_byte(p, '/', n);
  return slash ? (size_t)(slash - p) : 0;
}

/* What the index is made of, for one part of the walk or merged from all:
 * every list sorted bytewise. */
typedef struct {
  path_list builds;    /* BUILD and BUILD.bazel files that are no dangling link */
  path_list kept;      /* directories git does not ignore */
  path_list ign_dirs;  /* directories git ignores, in one it does not */
  path_list ign_files; /* files git ignores, in a directory it does not */
} facts;

enum { N_FACTS = 4 };
static const char fact_kind[N_FACTS] = {'b', 'k', 'd', 'f'};

static path_list *
fact_list(facts *f, int i)
{
  path_list *l[N_FACTS] = {&f->builds, &f->kept, &f->ign_dirs, &f->ign_files};
  return l[i];
}

/* Whether directory d[0..n) is one git does not ignore: the top, or in GD. */
static bool
kept_dir(const pkg_set *gd, const char *d, size_t n)
{
  return n == 0 || pkg_has(gd, d, n);
}

/* One part's facts from trawl batch's answers to its queries. */
static void
summarize(path_list lists[N_QUERIES], facts *out)
{
  pkg_set dangling = {0}, gd = {0};
  for (size_t i = 0; i < lists[Q_DANGLING].n; i++)
    pkg_add(&dangling, lists[Q_DANGLING].v[i].p, lists[Q_DANGLING].v[i].n);
  for (size_t i = 0; i < lists[Q_GI_DIRS].n; i++) {
    pkg_add(&gd, lists[Q_GI_DIRS].v[i].p, lists[Q_GI_DIRS].v[i].n);
    list_add(&out->kept, lists[Q_GI_DIRS].v[i].p, lists[Q_GI_DIRS].v[i].n);
  }
  for (size_t i = 0; i < lists[Q_FILES].n; i++) {
    const path *p = &lists[Q_FILES].v[i];
    const size_t d = dir_len(p->p, p->n);
    const char *base = d ? p->p + d + 1 : p->p;
    if (is_build_file(base, p->n - (size_t)(base - p->p)) && !pkg_has(&dangling, p->p, p->n))
      list_add(&out->builds, p->p, p->n);
  }
  /* Ignored: listed by the walk that reads no ignore file, not by the one
   * that does, below a directory git does not ignore (the lists are
   * sorted: one pass each). */
  for (size_t i = 0; i < lists[Q_DIRS].n; i++) {
    const path *p = &lists[Q_DIRS].v[i];
    if (!pkg_has(&gd, p->p, p->n) && kept_dir(&gd, p->p, dir_len(p->p, p->n)))
      list_add(&out->ign_dirs, p->p, p->n);
  }
  const path_list *f = &lists[Q_FILES], *gf = &lists[Q_GI_FILES];
  for (size_t i = 0, j = 0; i < f->n; i++) {
    while (j < gf->n && cmp_path(&gf->v[j], &f->v[i]) < 0)
      j++;
    if (j < gf->n && cmp_path(&gf->v[j], &f->v[i]) == 0)
      continue;
    if (kept_dir(&gd, f->v[i].p, dir_len(f->v[i].p, f->v[i].n)))
      list_add(&out->ign_files, f->v[i].p, f->v[i].n);
  }
  free(dangling.slots);
  free(gd.slots);
}

/* A part's facts as a file: per fact, its kind byte, the path, NUL. */
static void
write_facts(const char *file, facts *f)
{
  buf b = {0};
  buf_grow(&b, 0);
  for (int k = 0; k < N_FACTS; k++) {
    const path_list *l = fact_list(f, k);
    for (size_t i = 0; i < l->n; i++) {
      buf_byte(&b, fact_kind[k]);
      buf_add(&b, l->v[i].p, l->v[i].n);
      buf_byte(&b, '\0');
    }
  }
  write_file(file, &b);
  free(b.data);
}

/* Adds a part's facts file to F (its paths point into the file's text,
 * which is kept); false when it cannot be read or is not such a file. */
static bool
read_facts(const char *file, facts *f)
{
  FILE *in = fopen(file, "rb");
  if (!in)
    return false;
  buf text = {0};
  char chunk[65536];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, in)) > 0)
    buf_add(&text, chunk, got);
  const bool ok = !ferror(in);
  fclose(in);
  if (!ok)
    return false;
  for (size_t i = 0; i < text.len;) {
    const char *nul = memchr(text.data + i + 1, '\0', text.len - i - 1);
    const char *k = memchr(fact_kind, text.data[i], N_FACTS);
    if (!nul || !k)
      return false;
    list_add(fact_list(f, (int)(k - fact_kind)), text.data + i + 1,
             (size_t)(nul - (text.data + i + 1)));
    i = (size_t)(nul - text.data) + 1;
  }
  return true;
}

/* Sorts each list and drops repeats (a top-level directory is in the top's
 * part and its own). */
static void
settle_facts(facts *f)
{
  for (int k = 0; k < N_FACTS; k++) {
    path_list *l = fact_list(f, k);
    qsort(l->v, l->n, sizeof *l->v, cmp_path);
    size_t w = 0;
    for (size_t i = 0; i < l->n; i++)
      if (!w || cmp_path(&l->v[w - 1], &l->v[i]) != 0)
        l->v[w++] = l->v[i];
    l->n = w;
  }
}

/* ---- the index ---------------------------------------------------------- */

/* One path of IGN or TAINT: the package it is in, and the path itself
 * (relative to the workspace). */
typedef struct {
  uint32_t pkg;
  path p;
} item;

typedef struct {
  item *v;
  size_t n, cap;
} item_list;

static void
item_add(item_list *l, uint32_t pkg, const char *p, size_t n)
{
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 64;
    l->v = realloc(l->v, l->cap * sizeof *l->v);
    if (!l->v)
      die_oom();
  }
  l->v[l->n].pkg = pkg;
  l->v[l->n].p.p = (char *)p;
  l->v[l->n].p.n = n;
  l->n++;
}

static int
cmp_item(const void *x, const void *y)
{
  const item *a = x, *b = y;
  if (a->pkg != b->pkg)
    return a->pkg < b->pkg ? -1 : 1;
  return cmp_path(&a->p, &b->p);
}

/* Subdirectories by package, then by their directory (the order of the
 * tainted directories), then by name. */
static int
cmp_child(const void *x, const void *y)
{
  const item *a = x, *b = y;
  if (a->pkg != b->pkg)
    return a->pkg < b->pkg ? -1 : 1;
  int c = cmp_bytes(a->p.p, dir_len(a->p.p, a->p.n), b->p.p, dir_len(b->p.p, b->p.n));
  return c ? c : cmp_path(&a->p, &b->p);
}

/* The package that owns p (see owner()), as its index in pkgs, or
 * UINT32_MAX when none does. */
static uint32_t
owner_index(const pkg_set *set, const path_list *pkgs, const char *p, size_t n)
{
  size_t o = owner(set, p, n);
  if (o == (size_t)-1)
    return UINT32_MAX;
  path key = {(char *)p, o};
  const path *hit = bsearch(&key, pkgs->v, pkgs->n, sizeof *pkgs->v, cmp_path);
  return (uint32_t)(hit - pkgs->v);
}

/* p relative to package k (which owns it). */
static path
relative(const path_list *pkgs, uint32_t k, const char *p, size_t n)
{
  size_t skip = pkgs->v[k].n ? pkgs->v[k].n + 1 : 0;
  path r = {(char *)p + skip, n - skip};
  return r;
}

/* Marks p's directory and every one above it, up to its package's own,
 * as tainted (in TAINT, set and list). */
static void
taint_above(pkg_set *taint, item_list *tainted, const path_list *pkgs, uint32_t k,
            const char *p, size_t n)
{
  const size_t top = pkgs->v[k].n;
  size_t d = dir_len(p, n);
  for (;;) {
    if (d < top)
      d = top; /* the package's own directory */
    if (pkg_has(taint, p, d))
      return; /* and so every one above */
    pkg_add(taint, (char *)p, d);
    item_add(tainted, k, p, d);
    if (d == top)
      return;
    d = dir_len(p, d);
  }
}

/* Writes index.bzl for the facts of the whole walk (see the top of this
 * file) to O. */
static void
make_index(const facts *all, const path_list *left_out, buf *o)
{
  pkg_set set = {0};
  path_list pkgs = {0};
  for (size_t i = 0; i < all->builds.n; i++) {
    const path *p = &all->builds.v[i];
    const size_t d = dir_len(p->p, p->n);
    if (!pkg_has(&set, p->p, d)) {
      pkg_add(&set, p->p, d);
      list_add(&pkgs, p->p, d);
    }
  }
  qsort(pkgs.v, pkgs.n, sizeof *pkgs.v, cmp_path);
  pkg_set gd = {0};
  for (size_t i = 0; i < all->kept.n; i++)
    pkg_add(&gd, all->kept.v[i].p, all->kept.v[i].n);

  /* A package whose own directory git ignores: everything in it is. */
  bool *all_ignored = calloc(pkgs.n ? pkgs.n : 1, sizeof *all_ignored);
  if (!all_ignored)
    die_oom();
  for (size_t k = 0; k < pkgs.n; k++)
    all_ignored[k] = pkgs.v[k].n && !pkg_has(&gd, pkgs.v[k].p, pkgs.v[k].n);

  /* IGN: the ignored directories (not packages: glob() stops at those),
   * the links left out at the top, the ignored files. TAINT: every
   * directory above an ignored directory or a link left out. */
  item_list ign = {0}, tainted = {0};
  pkg_set taint = {0};
  const path_list *below[2] = {&all->ign_dirs, left_out};
  for (int b = 0; b < 2; b++) {
    for (size_t i = 0; i < below[b]->n; i++) {
      const path *p = &below[b]->v[i];
      if (pkg_has(&set, p->p, p->n))
        continue;
      uint32_t k = owner_index(&set, &pkgs, p->p, p->n);
      if (k == UINT32_MAX || all_ignored[k])
        continue;
      item_add(&ign, k, p->p, p->n);
      taint_above(&taint, &tainted, &pkgs, k, p->p, p->n);
    }
  }
  for (size_t i = 0; i < all->ign_files.n; i++) {
    const path *p = &all->ign_files.v[i];
    uint32_t k = owner_index(&set, &pkgs, p->p, p->n);
    if (k != UINT32_MAX && !all_ignored[k])
      item_add(&ign, k, p->p, p->n);
  }
  qsort(ign.v, ign.n, sizeof *ign.v, cmp_item);
  qsort(tainted.v, tainted.n, sizeof *tainted.v, cmp_item);

  /* A tainted directory's subdirectories: those git does not ignore, not
   * packages. */
  item_list children = {0};
  for (size_t i = 0; i < all->kept.n; i++) {
    const path *p = &all->kept.v[i];
    if (pkg_has(&taint, p->p, dir_len(p->p, p->n)) && !pkg_has(&set, p->p, p->n)) {
      uint32_t k = owner_index(&set, &pkgs, p->p, p->n);
      if (k != UINT32_MAX)
        item_add(&children, k, p->p, p->n);
    }
  }
  qsort(children.v, children.n, sizeof *children.v, cmp_child);

  buf_str(o, "# Generated by trawl-bazel-index (trawl's bazel/index.c) for trawl_glob(): what\n"
             "# git ignores in each package. Do not edit.\n"
             "# indexer " TRAWL_INDEXER "\n"
             "FORMAT = 3\n"
             "LEFT_OUT = {");
  for (size_t i = 0; i < left_out->n; i++) {
    buf_str(o, i ? ", \"" : "\"");
    starlark_bytes(o, left_out->v[i].p, left_out->v[i].n);
    buf_str(o, "\": None");
  }
  buf_str(o, "}\nPACKAGES = {\n");
  size_t ci = 0, ti = 0, ii = 0;
  for (uint32_t k = 0; k < pkgs.n; k++) {
    buf_str(o, "    \"");
    starlark_bytes(o, pkgs.v[k].p, pkgs.v[k].n);
    buf_str(o, "\": ");
    const size_t i0 = ii;
    while (ii < ign.n && ign.v[ii].pkg == k)
      ii++;
    if (all_ignored[k]) {
      buf_str(o, "True,\n");
      continue;
    }
    if (ii == i0) {
      buf_str(o, "None,\n");
      continue;
    }
    /* IGN in two: the paths glob() can take as excludes (exact paths), and
     * those it cannot (a wildcard in them), which glob.bzl filters. */
    for (int wild = 0; wild < 2; wild++) {
      buf_str(o, wild ? ", {" : "([");
      bool first = true;
      for (size_t i = i0; i < ii; i++) {
        path r = relative(&pkgs, k, ign.v[i].p.p, ign.v[i].p.n);
        if ((memchr(r.p, '*', r.n) || memchr(r.p, '?', r.n)) != wild)
          continue;
        buf_str(o, first ? "\"" : ", \"");
        first = false;
        starlark_bytes(o, r.p, r.n);
        buf_str(o, wild ? "\": None" : "\"");
      }
      buf_str(o, wild ? "}" : "]");
    }
    buf_str(o, ", {");
    for (size_t t0 = ti; ti < tainted.n && tainted.v[ti].pkg == k; ti++) {
      const path *t = &tainted.v[ti].p;
      buf_str(o, ti > t0 ? ", \"" : "\"");
      if (t->n > pkgs.v[k].n) {
        path r = relative(&pkgs, k, t->p, t->n);
        starlark_bytes(o, r.p, r.n);
      }
      buf_str(o, "\": [");
      /* Its subdirectories: the children whose directory it is (both
       * lists are in the order of those directories). */
      while (ci < children.n && children.v[ci].pkg == k &&
             cmp_bytes(children.v[ci].p.p, dir_len(children.v[ci].p.p, children.v[ci].p.n),
                       t->p, t->n) < 0)
        ci++;
      for (size_t c0 = ci; ci < children.n && children.v[ci].pkg == k; ci++) {
        const path *c = &children.v[ci].p;
        const size_t cd = dir_len(c->p, c->n);
        if (cmp_bytes(c->p, cd, t->p, t->n) != 0)
          break;
        buf_str(o, ci > c0 ? ", \"" : "\"");
        const size_t skip = cd ? cd + 1 : 0;
        starlark_bytes(o, c->p + skip, c->n - skip);
        buf_byte(o, '"');
      }
      buf_byte(o, ']');
    }
    buf_str(o, "}),\n");
  }
  buf_str(o, "}\nCHECKED = True\n");
  free(all_ignored);
  free(ign.v);
  free(tainted.v);
  free(children.v);
  free(taint.slots);
  free(gd.slots);
  free(set.slots);
  free(pkgs.v);
}

/* ---- the stamp and the kept indexes --------------------------------------- */

/* STATE/stamp: "DIGEST PARTS TRAWL\n" (see the top). */
typedef struct {
  char digest[33];   /* XXH3-128, hex; "" when there is no stamp */
  char queries[17];  /* XXH3-64 of the parts' names */
  buf trawl;         /* the trawl executable (resolved) that wrote the cache */
} stamp;

static void
read_stamp(const char *file, stamp *s)
{
  s->digest[0] = s->queries[0] = '\0';
  s->trawl.len = 0;
  buf_grow(&s->trawl, 0);
  FILE *f = fopen(file, "rb");
  if (!f)
    return;
  char line[4200];
  size_t n = fread(line, 1, sizeof line - 1, f);
  fclose(f);
  line[n] = '\0';
  char *nl = memchr(line, '\n', n);
  if (n < 32 + 1 + 16 + 1 + 1 || !nl || line[32] != ' ' || line[49] != ' ' ||
      strspn(line, "0123456789abcdef") != 32 || strspn(line + 33, "0123456789abcdef") != 16)
    return; /* not ours, or cut short: as good as none */
  memcpy(s->digest, line, 32);
  s->digest[32] = '\0';
  memcpy(s->queries, line + 33, 16);
  s->queries[16] = '\0';
  buf_add(&s->trawl, line + 50, (size_t)(nl - (line + 50)));
}

static void
hex(char *out, const void *p, size_t n)
{
  const unsigned char *u = p;
  for (size_t i = 0; i < n; i++)
    snprintf(out + 2 * i, 3, "%02x", u[i]);
}

static void
digest_of(const buf *o, char out[33])
{
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(o->data, o->len));
  hex(out, c.digest, sizeof c.digest);
}

static void
queries_hash(const buf *q, char out[17])
{
  XXH64_canonical_t c;
  XXH64_canonicalFromHash(&c, XXH3_64bits(q->data, q->len));
  hex(out, c.digest, sizeof c.digest);
}

static char *
state_file(const char *state, const char *name)
{
  buf b = {0};
  buf_str(&b, state);
  buf_byte(&b, '/');
  buf_str(&b, name);
  return b.data;
}

static char *
kept_name(const char *state, const char *digest)
{
  buf b = {0};
  buf_str(&b, state);
  buf_str(&b, "/index-");
  buf_str(&b, digest);
  buf_str(&b, ".bzl");
  return b.data;
}

/* Keeps the index O as STATE/index-DIGEST.bzl (an index already kept under
 * that name is the same text: its time is only made the newest), then
 * removes every other kept index but the newest KEPT - 1. */
static void
keep_index(const char *state, const char *digest, const buf *o)
{
  char *name = kept_name(state, digest);
  if (utimensat(AT_FDCWD, name, NULL, 0) != 0) {
    if (errno != ENOENT)
      fail(3, "%s: %s", name, strerror(errno));
    write_file(name, o);
  }
  /* The others, newest first; a name vanishing meanwhile (another run's
   * pruning) is no trouble. */
  DIR *d = opendir(state);
  if (!d)
    fail(3, "%s: %s", state, strerror(errno));
  struct kept {
    char *name;
    struct timespec mtime;
  } *v = NULL;
  size_t nv = 0, cap = 0;
  const char *mine = strrchr(name, '/') + 1;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    size_t len = strlen(e->d_name);
    if (strncmp(e->d_name, "index-", 6) != 0 || len < 10 ||
        strcmp(e->d_name + len - 4, ".bzl") != 0 || strcmp(e->d_name, mine) == 0)
      continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    if (nv == cap) {
      cap = cap ? 2 * cap : 8;
      v = realloc(v, cap * sizeof *v);
      if (!v)
        die_oom();
    }
    v[nv].name = strdup(e->d_name);
    if (!v[nv].name)
      die_oom();
    v[nv++].mtime = st.st_mtim;
  }
  for (size_t i = 0; i < nv; i++) {
    size_t newer = 0;
    for (size_t j = 0; j < nv; j++)
      if (v[j].mtime.tv_sec > v[i].mtime.tv_sec ||
          (v[j].mtime.tv_sec == v[i].mtime.tv_sec && v[j].mtime.tv_nsec > v[i].mtime.tv_nsec) ||
          (v[j].mtime.tv_sec == v[i].mtime.tv_sec && v[j].mtime.tv_nsec == v[i].mtime.tv_nsec &&
           strcmp(v[j].name, v[i].name) < 0))
        newer++;
    if (newer >= KEPT - 1 && unlinkat(dirfd(d), v[i].name, 0) != 0 && errno != ENOENT)
      fail(3, "%s/%s: %s", state, v[i].name, strerror(errno));
  }
  for (size_t i = 0; i < nv; i++)
    free(v[i].name);
  free(v);
  closedir(d);
  free(name);
}


/* ---- the parts of the walk ------------------------------------------------ */

/* The walk is cut in parts, each with its own cache, so that an edit costs
 * a check of its part: trawl check reads and writes a whole cache file
 * when anything in it changed. A part is the top directory's own entries
 * ("", the pattern `*`), or one directory at the top and all below it. */
typedef struct {
  path name;      /* "" or the top-level directory */
  char id[17];    /* XXH3-64 of the indexer and the queries, in hex: its
                     files in STATE/parts/ */
  buf queries;    /* its queries, as trawl batch reads them */
  bool redo;      /* its facts are to be made again */
} part;

typedef struct {
  part *v;
  size_t n, cap;
} part_list;

/* Appends the five queries of the part whose include prefix is PREFIX
 * (a pattern: "" for the top's own entries, else "DIR/") to Q. */
static void
part_queries(buf *q, const char *root, const buf *prefix, const buf *excludes, size_t n_excludes)
{
  static const struct {
    const char *type, *ignore, *last, *exclude;
  } spec[N_QUERIES] = {
    [Q_FILES] = {"f", "false", "**", "**/.git/**"},
    [Q_GI_FILES] = {"f", "true", "**", NULL},
    [Q_DIRS] = {"d", "false", "**", "**/.git/**"},
    [Q_GI_DIRS] = {"d", "true", "**", NULL},
    [Q_DANGLING] = {"l", "false", "**/BUILD", NULL},
  };
  for (int i = 0; i < N_QUERIES; i++) {
    char head[64];
    snprintf(head, sizeof head, "{\"id\":%d,\"root\":", i);
    buf_str(q, head);
    json_string(q, root, strlen(root));
    buf_str(q, ",\"include\":[");
    /* Two patterns for BUILD and BUILD.bazel; and a directory's part lists
     * the directory itself, so that its facts know whether git ignores it. */
    const bool dirs = i == Q_DIRS || i == Q_GI_DIRS;
    for (int b = 0; b < (i == Q_DANGLING || (dirs && prefix->len) ? 2 : 1); b++) {
      buf tmp = {0};
      buf_add(&tmp, prefix->data ? prefix->data : "", prefix->len);
      if (!prefix->len) /* the top's own entries */
        buf_str(&tmp, i == Q_DANGLING ? (b ? "BUILD.bazel" : "BUILD") : "*");
      else if (i == Q_DANGLING)
        buf_str(&tmp, b ? "**/BUILD.bazel" : "**/BUILD");
      else if (dirs && b)
        tmp.len--; /* "DIR" */
      else
        buf_str(&tmp, spec[i].last);
      if (b)
        buf_byte(q, ',');
      json_string(q, tmp.data, tmp.len);
      free(tmp.data);
    }
    buf_str(q, "],\"exclude\":[");
    buf_add(q, excludes->data, excludes->len);
    if (spec[i].exclude) {
      if (n_excludes)
        buf_byte(q, ',');
      buf_byte(q, '"');
      buf_str(q, spec[i].exclude);
      buf_byte(q, '"');
    }
    buf_str(q, "],\"hidden\":true,\"follow\":true,\"ignore\":");
    buf_str(q, spec[i].ignore);
    buf_str(q, ",\"type\":[\"");
    buf_str(q, spec[i].type);
    buf_str(q, "\"]}\n");
  }
}

static bool
listed(const path_list *l, const char *name)
{
  for (size_t i = 0; i < l->n; i++)
    if (l->v[i].n == strlen(name) && memcmp(l->v[i].p, name, l->v[i].n) == 0)
      return true;
  return false;
}

/* The parts: the top's own entries, and each directory at the top (a link
 * to one too) but .git, trawl's own directory, a link left out, or one
 * .bazelignore names (NOT). Sorted, so that the queries are the same text
 * for the same tree. */
static void
make_parts(const char *root, const char *state_name, const path_list *not,
           const path_list *left_out, const buf *excludes, size_t n_excludes, part_list *parts)
{
  DIR *d = opendir(root);
  if (!d)
    fail(3, "%s: %s", root, strerror(errno));
  path_list names = {0};
  list_add(&names, strdup(""), 0);
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    struct stat st;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
        strcmp(e->d_name, ".git") == 0 || strcmp(e->d_name, state_name) == 0 ||
        listed(not, e->d_name) || listed(left_out, e->d_name) ||
        fstatat(dirfd(d), e->d_name, &st, 0) != 0 ||
        !S_ISDIR(st.st_mode))
      continue;
    char *copy = strdup(e->d_name);
    if (!copy)
      die_oom();
    list_add(&names, copy, strlen(copy));
  }
  closedir(d);
  qsort(names.v, names.n, sizeof *names.v, cmp_path);
  parts->v = calloc(names.n, sizeof *parts->v);
  if (!parts->v)
    die_oom();
  parts->n = names.n;
  for (size_t k = 0; k < names.n; k++) {
    part *p = &parts->v[k];
    p->name = names.v[k];
    buf prefix = {0};
    if (p->name.n) {
      literal_pattern(&prefix, p->name.p, p->name.n);
      buf_byte(&prefix, '/');
    }
    part_queries(&p->queries, root, &prefix, excludes, n_excludes);
    free(prefix.data);
    /* Named by what it asks, and who asks: a part whose queries change
     * (.bazelignore edited, another indexer) starts afresh, alone. */
    XXH3_state_t *h = XXH3_createState();
    if (!h)
      die_oom();
    XXH3_64bits_reset(h);
    XXH3_64bits_update(h, TRAWL_INDEXER "\n", strlen(TRAWL_INDEXER "\n"));
    XXH3_64bits_update(h, p->queries.data, p->queries.len);
    XXH64_canonical_t c;
    XXH64_canonicalFromHash(&c, XXH3_64bits_digest(h));
    XXH3_freeState(h);
    hex(p->id, c.digest, sizeof c.digest);
  }
  free(names.v);
}

/* STATE/parts/ID.NAME */
static char *
part_file(const char *state, const part *p, const char *suffix)
{
  buf b = {0};
  buf_str(&b, state);
  buf_str(&b, "/parts/");
  buf_str(&b, p->id);
  buf_str(&b, suffix);
  return b.data;
}

/* The part's cache.labels (plugins/cli/check-labels.h): trawl check then
 * heads each query's changes with "LABEL ID", which classify() reads. */
static void
write_labels(const char *state, const part *p)
{
  buf b = {0};
  buf_str(&b, "trawl check labels 1\n");
  for (int q = 0; q < N_QUERIES; q++) {
    char text[64];
    snprintf(text, sizeof text, "%s %s", label[q], p->id);
    buf_add(&b, text, strlen(text) + 1);
    buf_byte(&b, '\0'); /* no prefix */
  }
  char *name = part_file(state, p, ".cache.labels");
  write_file(name, &b);
  free(name);
  free(b.data);
}

/* Marks the parts whose facts trawl check's output OUT (see write_labels())
 * says may have changed: any but those where only
 * files git does not ignore were added or removed (the same lines under F
 * and GF, no BUILD file among them). False when the output cannot be read
 * so (a message, or no change at all although the status said one): then
 * every part is to be made again. */
static bool
classify(const buf *out, part_list *parts)
{
  const char *text = out->data ? out->data : "";
  size_t n = parts->n;
  /* Per part: where its F and GF lines start and end; whether anything
   * else changed. */
  const char **f0 = calloc(4 * n + 1, sizeof *f0);
  bool *other = calloc(n + 1, sizeof *other);
  if (!f0 || !other)
    die_oom();
  const char **f1 = f0 + n, **g0 = f0 + 2 * n, **g1 = f0 + 3 * n;
  const char **open_end = NULL;
  size_t cur = SIZE_MAX;
  bool any = false, readable = true;
  for (const char *p = text; *p && readable;) {
    const char *eol = strchr(p, '\n');
    const char *next = eol ? eol + 1 : p + strlen(p);
    const size_t len = (size_t)((eol ? eol : next) - p);
    if (len >= 2 && (p[0] == '-' || p[0] == '+') && p[1] == ' ') {
      if (cur == SIZE_MAX) {
        readable = false;
        break;
      }
      const char *slash = last_byte(p + 2, '/', len - 2);
      const char *base = slash ? slash + 1 : p + 2;
      if (is_build_file(base, (size_t)(p + len - base)))
        other[cur] = true;
    } else {
      /* A header: "LABEL ID". */
      if (open_end)
        *open_end = p;
      open_end = NULL;
      const char *sp = memchr(p, ' ', len);
      size_t k = 0;
      while (sp && k < n && !(p + len - (sp + 1) == 16 && memcmp(sp + 1, parts->v[k].id, 16) == 0))
        k++;
      if (!sp || k == n) {
        readable = false;
        break;
      }
      cur = k;
      any = true;
      const size_t ll = (size_t)(sp - p);
      if (ll == 1 && p[0] == 'F' && !f0[k]) {
        f0[k] = next;
        open_end = &f1[k];
      } else if (ll == 2 && memcmp(p, "GF", 2) == 0 && !g0[k]) {
        g0[k] = next;
        open_end = &g1[k];
      } else {
        other[k] = true;
      }
    }
    p = next;
  }
  if (open_end)
    *open_end = text + strlen(text);
  for (size_t k = 0; readable && k < n; k++) {
    if (!f0[k] && !g0[k] && !other[k])
      continue; /* unchanged */
    parts->v[k].redo = other[k] || !f0[k] || !g0[k] || f1[k] - f0[k] != g1[k] - g0[k] ||
                       memcmp(f0[k], g0[k], (size_t)(f1[k] - f0[k])) != 0;
  }
  free(f0);
  free(other);
  return readable && any;
}

/* Removes the files in STATE/parts/ of every part but those in KEEP (all
 * of them when KEEP is NULL); a name vanishing meanwhile is no trouble. */
static void
clear_parts(const char *dir, const part_list *keep)
{
  DIR *d = opendir(dir);
  if (!d)
    return;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.')
      continue;
    bool kept = false;
    for (size_t k = 0; keep && !kept && k < keep->n; k++)
      kept = strncmp(e->d_name, keep->v[k].id, 16) == 0 && e->d_name[16] == '.';
    if (!kept && unlinkat(dirfd(d), e->d_name, 0) != 0 && errno != ENOENT)
      fail(3, "%s/%s: %s", dir, e->d_name, strerror(errno));
  }
  closedir(d);
}

/* ---- main ------------------------------------------------------------ */

static const char usage[] = "usage: trawl-bazel-index --trawl EXE --root DIR --state NAME";

/* Makes part K's facts again: trawl batch --cache answers its queries
 * (reading only what changed since the cache), and they are summed up in
 * STATE/parts/ID.facts. */
static void
redo_part(const char *exe, const char *state, part *p, facts *f)
{
  char *cache = part_file(state, p, ".cache");
  char *batch[] = {(char *)exe, "batch", "--cache", cache, "-", NULL};
  buf out = {0};
  int rc = run(batch, &p->queries, &out);
  if (rc != 0)
    fail(3, "%s batch failed (status %d)", exe, rc);
  path_list lists[N_QUERIES] = {{0}};
  parse_answers(out.data, lists);
  summarize(lists, f);
  char *name = part_file(state, p, ".facts");
  write_facts(name, f);
  write_labels(state, p);
  free(name);
  free(cache);
}

int
main(int argc, char **argv)
{
  const char *exe = NULL, *root = NULL, *state_name = NULL;
  for (int i = 1; i < argc; i++) {
    const char **slot = NULL;
    if (strcmp(argv[i], "--trawl") == 0)
      slot = &exe;
    else if (strcmp(argv[i], "--root") == 0)
      slot = &root;
    else if (strcmp(argv[i], "--state") == 0)
      slot = &state_name;
    if (!slot || i + 1 == argc)
      fail(2, "%s", usage);
    *slot = argv[++i];
  }
  if (!exe || !root || !state_name || !*state_name || strchr(state_name, '/'))
    fail(2, "%s", usage);
  buf state_buf = {0};
  buf_str(&state_buf, root);
  buf_byte(&state_buf, '/');
  buf_str(&state_buf, state_name);
  const char *state = state_buf.data;
  char *stamp_file = state_file(state, "stamp");
  char *parts_dir = state_file(state, "parts");
  char *trawl_path = realpath(exe, NULL);
  if (!trawl_path)
    fail(3, "%s: %s", exe, strerror(errno));

  /* The queries: the whole workspace, as glob() walks it, less what
   * .bazelignore names, the output links and trawl's own directory (a
   * package of its own that changes while Bazel runs), cut in parts. `.git`
   * is listed (git ignores it) but not entered. */
  buf excludes = {0};
  size_t n_excludes = 0;
  buf_grow(&excludes, 0);
  path_list left_out = {0}, not_parts = {0};
  read_bazelignore(root, &excludes, &n_excludes, &not_parts);
  exclude_output_links(root, &excludes, &n_excludes, &left_out);
  exclude_tree(&excludes, &n_excludes, state_name, strlen(state_name));
  part_list parts = {0};
  make_parts(root, state_name, &not_parts, &left_out, &excludes, n_excludes, &parts);
  buf ids = {0};
  for (size_t k = 0; k < parts.n; k++)
    buf_add(&ids, parts.v[k].id, 16);
  char qhash[17];
  queries_hash(&ids, qhash);

  /* The caches are trusted by the trawl that wrote them only: another's,
   * and everything made from them, go. */
  stamp st = {0};
  read_stamp(stamp_file, &st);
  const bool same_trawl = st.digest[0] && strcmp(st.trawl.data, trawl_path) == 0;
  if (!same_trawl)
    clear_parts(parts_dir, NULL);
  if (mkdir(parts_dir, 0755) != 0 && errno != EEXIST)
    fail(3, "%s: %s", parts_dir, strerror(errno));

  /* A part with no cache (new, or its queries changed) is made afresh;
   * trawl check re-checks the others, and says which may have changed. */
  size_t checked = 0;
  char **check = malloc((2 * parts.n + 3) * sizeof *check);
  if (!check)
    die_oom();
  check[checked++] = (char *)exe;
  check[checked++] = "check";
  for (size_t k = 0; k < parts.n; k++) {
    part *p = &parts.v[k];
    char *cache = part_file(state, p, ".cache");
    char *facts_file = part_file(state, p, ".facts");
    p->redo = access(cache, R_OK) != 0 || access(facts_file, R_OK) != 0;
    free(facts_file);
    if (p->redo) {
      free(cache);
      continue;
    }
    check[checked++] = "--cache";
    check[checked++] = cache;
  }
  check[checked] = NULL;
  if (checked > 2) {
    buf out = {0};
    int rc = run(check, NULL, &out);
    if (rc != 0 && rc != 1)
      fail(3, "%s check failed (status %d)", exe, rc);
    if (rc == 1 && !classify(&out, &parts))
      for (size_t k = 0; k < parts.n; k++)
        parts.v[k].redo = true;
  }
  bool any = false;
  for (size_t k = 0; k < parts.n; k++)
    any = any || parts.v[k].redo;
  if (!any && strcmp(st.queries, qhash) == 0) {
    char *kept = kept_name(state, st.digest);
    const bool have = access(kept, R_OK) == 0;
    free(kept);
    if (have) {
      printf("%s\n", st.digest);
      return 0;
    }
  }
  if (any)
    clear_parts(parts_dir, &parts);

  /* Every part's facts: made again, or as the last run left them. */
  facts all;
  memset(&all, 0, sizeof all);
  for (size_t k = 0; k < parts.n; k++) {
    part *p = &parts.v[k];
    char *name = part_file(state, p, ".facts");
    if (p->redo || !read_facts(name, &all))
      redo_part(exe, state, p, &all);
    free(name);
  }
  settle_facts(&all);
  buf index = {0};
  make_index(&all, &left_out, &index);
  char digest[33];
  digest_of(&index, digest);
  keep_index(state, digest, &index);
  if (!same_trawl || strcmp(st.digest, digest) != 0 || strcmp(st.queries, qhash) != 0) {
    buf s = {0};
    buf_str(&s, digest);
    buf_byte(&s, ' ');
    buf_str(&s, qhash);
    buf_byte(&s, ' ');
    buf_str(&s, trawl_path);
    buf_byte(&s, '\n');
    write_file(stamp_file, &s);
    free(s.data);
  }
  printf("%s\n", digest);
  return 0;
}
