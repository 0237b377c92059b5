/* trawl-bazel-index — every package of a Bazel workspace, indexed for trawl_glob().
 *
 * One `trawl batch` run walks the workspace once per view (everything, and
 * what git does not ignore), following directory links and entering hidden
 * directories as glob() does, leaving out what .bazelignore names and the
 * `bazel-*` links at the top. This program partitions the paths into
 * packages (a directory holding a BUILD or BUILD.bazel file owns everything
 * below it up to the next such directory, as glob() stops there) and writes
 * them as one Starlark file that glob.bzl loads:
 *
 *   PACKAGES = {"pkg": (FILES, DIRS, GI_FILES, GI_DIRS), ...}
 *
 * DIRS is the package's directories (relative to it, the package's own
 * left out), sorted bytewise and joined by "//". FILES is a dict from a key
 * of the file's base name (the text after its last '.'; "/." for a name
 * starting with '.'; "/" for a name without '.') to the names, grouped by
 * their directory: "D//NAME/NAME//D//NAME", where D is the directory's
 * position in DIRS, in decimal, or empty for the package's own (no path
 * holds "//", no name "/"). Under a key of the first kind, a name is
 * written without ".KEY", which every one of them ends with. A pattern's
 * last segment picks the keys it can match (`*.ts` needs only "ts") and its
 * literal leading directories the directories, so trawl_glob() touches only
 * the paths it may return. Bazel's cost to read the index grows with its
 * size (docs/bazel.md), so each directory is written once per key, and as
 * a number: the `repo` fixture's is 0.7 MB, where one path per file made
 * 3.4 MB and one directory path per key 1.4 MB.
 * GI_FILES and GI_DIRS are the same for the gitignore view (GI_FILES's
 * numbers still count in DIRS), or None when equal to the full view. Every byte outside printable ASCII, and '"' and '\', is written as an
 * octal escape: the file is ASCII, and no file name can change its meaning.
 * The output holds no absolute path and no time, and is a function of the
 * tree alone (packages, keys and paths in bytewise order).
 *
 * The paths trawl prints are already in bytewise order, and taking off a
 * package's prefix keeps that order; only the grouping by key and directory
 * sorts.
 *
 * Usage: trawl-bazel-index --trawl EXE --root DIR --out FILE [--cache FILE]
 *                          [--state DIR] [--bump STAMP [--keep DIR --tag TAG]]
 * --state names trawl's own directory (relative to the root), never walked.
 * --bump makes STAMP hold the digest of the answers indexed (`trawl batch
 * --bump`); --keep then keeps a copy of the index as DIR/index-DIGEST-TAG.bzl,
 * which the repository rule takes instead of indexing again when the
 * wrapper's check found the stamp current (docs/bazel.md, "Freshness"). The
 * name is the answer's, so a kept index is never another answer's; the
 * three newest are kept.
 * Exit 0 on success, 2 for bad usage, 3 when trawl fails or a file cannot be
 * read or written (the message is printed).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
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
#include <unistd.h>

extern char **environ;

/* The queries sent to trawl batch, by id. */
enum {
  Q_FILES,     /* every file (links followed; dangling ones too, see Q_DANGLING) */
  Q_DIRS,      /* every directory */
  Q_DANGLING,  /* with links followed, type l is what could not be followed */
  Q_GI_FILES,  /* the same as Q_FILES, leaving out what git ignores */
  Q_GI_DIRS,
  N_QUERIES
};

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

/* Reads ROOT/.bazelignore (if any) into the excludes. */
static void
read_bazelignore(const char *root, buf *excludes, size_t *n_excludes)
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
    if (normalise_ignore_line(text.data + i, j - i, &norm))
      exclude_tree(excludes, n_excludes, norm.data, norm.len);
    if (j < text.len && text.data[j] == '\r' && j + 1 < text.len && text.data[j + 1] == '\n')
      j++;
    i = j + 1;
  }
  free(text.data);
  free(name.data);
  free(norm.data);
}

/* The links named bazel-* in the top directory: Bazel's convenience links
 * into its output base. glob() would follow them into build outputs;
 * trawl_glob() never does (docs/bazel.md). */
static void
exclude_output_links(const char *root, buf *excludes, size_t *n_excludes)
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
    buf tmp = {0};
    literal_pattern(&tmp, e->d_name, strlen(e->d_name));
    if (*n_excludes)
      buf_byte(excludes, ',');
    json_string(excludes, tmp.data, tmp.len);
    free(tmp.data);
    (*n_excludes)++;
  }
  closedir(d);
}

/* ---- running trawl batch ---------------------------------------------- */

/* Runs `EXE batch [--cache FILE] [--bump STAMP] -` with the queries on its stdin; returns
 * its whole stdout. Its stderr (problems of the walk) goes to ours. */
static buf
run_trawl(const char *exe, const char *cache, const char *bump, const buf *queries)
{
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0)
    fail(3, "pipe: %s", strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, in[0]);
  posix_spawn_file_actions_addclose(&fa, in[1]);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  posix_spawn_file_actions_addclose(&fa, out[1]);
  char *argv[8];
  int argc = 0;
  argv[argc++] = (char *)exe;
  argv[argc++] = (char *)"batch";
  if (cache) {
    argv[argc++] = (char *)"--cache";
    argv[argc++] = (char *)cache;
  }
  if (bump) {
    argv[argc++] = (char *)"--bump";
    argv[argc++] = (char *)bump;
  }
  argv[argc++] = (char *)"-";
  argv[argc] = NULL;
  pid_t pid;
  int rc = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    fail(3, "%s: %s", exe, strerror(rc));
  close(in[0]);
  close(out[1]);
  /* trawl batch reads all of its input before it writes anything. */
  size_t off = 0;
  while (off < queries->len) {
    ssize_t w = write(in[1], queries->data + off, queries->len - off);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      break; /* trawl failed; its status says why */
    }
    off += (size_t)w;
  }
  close(in[1]);
  buf result = {0};
  char chunk[65536];
  for (;;) {
    ssize_t r = read(out[0], chunk, sizeof chunk);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    buf_add(&result, chunk, (size_t)r);
  }
  close(out[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      fail(3, "waitpid: %s", strerror(errno));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail(3, "%s batch failed (status %d)", exe,
         WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  if (!result.data)
    buf_grow(&result, 0);
  return result;
}

/* Splits trawl batch's output into the paths of each query. */
static void
parse_answers(char *text, path_list lists[N_QUERIES])
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

/* One entry of the index: a path relative to its package, with the
 * package's index and the base name's key. */
typedef struct {
  uint32_t pkg;          /* index into the sorted packages */
  const char *rel;       /* relative to the package */
  size_t rel_len;
  size_t dir_len;        /* of rel's directory part (0: the package's own) */
  const char *key;       /* key of the base name (files only) */
  size_t key_len;
} entry;

typedef struct {
  entry *v;
  size_t n;
} entry_list;

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

/* Entries of one package, ordered by (key, directory, name). */
static int
cmp_key_entry(const void *x, const void *y)
{
  const entry *a = *(const entry *const *)x, *b = *(const entry *const *)y;
  int c = cmp_bytes(a->key, a->key_len, b->key, b->key_len);
  if (c)
    return c;
  c = cmp_bytes(a->rel, a->dir_len, b->rel, b->dir_len);
  if (c)
    return c;
  return cmp_bytes(a->rel, a->rel_len, b->rel, b->rel_len);
}

/* The position of directory d[0..n) among the package's DIRS (sorted),
 * which holds every directory a file of the package is in. */
static size_t
dir_number(const char *d, size_t n, const entry *dirs, size_t nd)
{
  size_t lo = 0, hi = nd;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = cmp_bytes(dirs[mid].rel, dirs[mid].rel_len, d, n);
    if (c == 0)
      return mid;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  fail(3, "a file's directory '%.*s' is not among its package's directories", (int)n, d);
  return 0;
}

/* Writes FILES for the entries es[0..n) (see the top): each key's names
 * grouped under the number of their directory in dirs[0..nd), "" for the
 * package's own, the key's ".KEY" left off the names. */
static void
write_files(buf *b, entry *es, size_t n, const entry *dirs, size_t nd)
{
  entry **order = malloc((n ? n : 1) * sizeof *order);
  if (!order)
    die_oom();
  for (size_t i = 0; i < n; i++)
    order[i] = &es[i];
  qsort(order, n, sizeof *order, cmp_key_entry);
  buf_byte(b, '{');
  for (size_t i = 0; i < n;) {
    size_t j = i;
    if (i)
      buf_str(b, ", ");
    buf_byte(b, '"');
    starlark_bytes(b, order[i]->key, order[i]->key_len);
    buf_str(b, "\": \"");
    /* "/." and "/" are no extension; "" (a name ending in '.') is. */
    const size_t strip =
      order[i]->key_len && order[i]->key[0] == '/' ? 0 : order[i]->key_len + 1;
    const entry *dir = NULL;
    for (; j < n && order[j]->key_len == order[i]->key_len &&
           memcmp(order[j]->key, order[i]->key, order[i]->key_len) == 0; j++) {
      const entry *e = order[j];
      size_t dl = e->dir_len;
      size_t skip = dl ? dl + 1 : 0;
      if (!dir || dir->dir_len != dl || memcmp(dir->rel, e->rel, dl) != 0) {
        if (dir)
          buf_str(b, "//");
        if (dl) {
          char num[24];
          snprintf(num, sizeof num, "%zu", dir_number(e->rel, dl, dirs, nd));
          buf_str(b, num);
        }
        buf_str(b, "//");
        dir = e;
      } else {
        buf_byte(b, '/');
      }
      starlark_bytes(b, e->rel + skip, e->rel_len - skip - strip);
    }
    buf_byte(b, '"');
    i = j;
  }
  buf_byte(b, '}');
  free(order);
}

static void
write_dirs(buf *b, entry *es, size_t n)
{
  buf_byte(b, '"');
  for (size_t i = 0; i < n; i++) {
    if (i)
      buf_str(b, "//");
    starlark_bytes(b, es[i].rel, es[i].rel_len);
  }
  buf_byte(b, '"');
}

static bool
same_entries(const entry *a, size_t an, const entry *b, size_t bn)
{
  if (an != bn)
    return false;
  for (size_t i = 0; i < an; i++)
    if (cmp_bytes(a[i].rel, a[i].rel_len, b[i].rel, b[i].rel_len) != 0)
      return false;
  return true;
}

/* The key of a base name, as glob.bzl computes it for patterns. */
static void
name_key(const char *base, size_t n, const char **key, size_t *key_len)
{
  if (n && base[0] == '.') {
    *key = "/.";
    *key_len = 2;
    return;
  }
  const char *dot = last_byte(base, '.', n);
  if (!dot) {
    *key = "/";
    *key_len = 1;
    return;
  }
  *key = dot + 1;
  *key_len = n - (size_t)(dot + 1 - base);
}

/* Assigns each path of l to its package; paths that are themselves
 * packages (directories) or have no package are left out. Entries come out
 * grouped by package in the packages' order, each package's in path order. */
static entry_list
partition(const path_list *l, const pkg_set *set, const path *pkgs, size_t n_pkgs,
          bool files)
{
  /* Count per package first, so that each package's entries are
   * contiguous and keep the walk's order. */
  size_t *count = calloc(n_pkgs + 1, sizeof *count);
  uint32_t *which = malloc((l->n ? l->n : 1) * sizeof *which);
  if (!count || !which)
    die_oom();
  /* The owner depends on the directory part alone, and the walk's order
   * keeps a directory's names together: the last directory's is kept. */
  const char *last_dir = NULL;
  size_t last_dir_len = 0;
  uint32_t last_which = UINT32_MAX;
  for (size_t i = 0; i < l->n; i++) {
    const path *p = &l->v[i];
    which[i] = UINT32_MAX;
    if (!files && pkg_has(set, p->p, p->n))
      continue; /* a subpackage is no directory of its parent's */
    const char *slash = last_byte(p->p, '/', p->n);
    const size_t dlen = slash ? (size_t)(slash - p->p) : 0;
    if (!last_dir || dlen != last_dir_len || memcmp(p->p, last_dir, dlen) != 0) {
      last_dir = p->p;
      last_dir_len = dlen;
      last_which = UINT32_MAX;
      size_t o = owner(set, p->p, p->n);
      if (o != (size_t)-1) {
        path key = {p->p, o};
        const path *hit = bsearch(&key, pkgs, n_pkgs, sizeof *pkgs, cmp_path);
        last_which = (uint32_t)(hit - pkgs);
      }
    }
    if (last_which == UINT32_MAX)
      continue;
    which[i] = last_which;
    count[which[i]]++;
  }
  size_t *start = calloc(n_pkgs + 1, sizeof *start);
  if (!start)
    die_oom();
  for (size_t k = 0; k < n_pkgs; k++)
    start[k + 1] = start[k] + count[k];
  entry_list out = {malloc((start[n_pkgs] ? start[n_pkgs] : 1) * sizeof(entry)), start[n_pkgs]};
  if (!out.v)
    die_oom();
  for (size_t i = 0; i < l->n; i++) {
    if (which[i] == UINT32_MAX)
      continue;
    const path *p = &l->v[i];
    size_t plen = pkgs[which[i]].n;
    entry *e = &out.v[start[which[i]]++];
    e->pkg = which[i];
    e->rel = p->p + (plen ? plen + 1 : 0);
    e->rel_len = p->n - (plen ? plen + 1 : 0);
    const char *rel_slash = last_byte(e->rel, '/', e->rel_len);
    e->dir_len = rel_slash ? (size_t)(rel_slash - e->rel) : 0;
    if (files) {
      const char *base = rel_slash ? rel_slash + 1 : e->rel;
      name_key(base, e->rel_len - (size_t)(base - e->rel), &e->key, &e->key_len);
    } else {
      e->key = NULL;
      e->key_len = 0;
    }
  }
  free(count);
  free(which);
  free(start);
  return out;
}

/* Leaves out of files the paths in dangling (both sorted bytewise). */
static void
subtract_sorted(path_list *files, const path_list *dangling)
{
  size_t w = 0, d = 0;
  for (size_t i = 0; i < files->n; i++) {
    while (d < dangling->n && cmp_path(&dangling->v[d], &files->v[i]) < 0)
      d++;
    if (d < dangling->n && cmp_path(&dangling->v[d], &files->v[i]) == 0)
      continue;
    files->v[w++] = files->v[i];
  }
  files->n = w;
}

/* The half-open range of package k's entries in a partitioned list. */
static void
range_of(const entry_list *l, uint32_t k, size_t *lo, size_t *hi, size_t *cursor)
{
  size_t i = *cursor;
  while (i < l->n && l->v[i].pkg < k)
    i++;
  *lo = i;
  while (i < l->n && l->v[i].pkg == k)
    i++;
  *hi = i;
  *cursor = i;
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
  /* As trawl's own files (plugins/cli/files.h): 0664 less the umask, never
   * writable by others (mkstemp made it 0600). One thread: umask() read and
   * put back. */
  const mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fd, 0664 & ~(mask | 0002)) != 0 || close(fd) != 0 ||
      rename(tmp.data, file) != 0) {
    unlink(tmp.data);
    fail(3, "%s: %s", file, strerror(errno));
  }
  free(tmp.data);
}

enum { KEPT = 3 }; /* kept indexes, the newest */

/* DIR/index-DIGEST-TAG.bzl: the index O under the digest STAMP holds (that
 * of the answers it was made from: trawl batch --bump wrote it). Then every
 * other kept index but the newest KEPT - 1 is removed. */
static void
keep_index(const char *dir, const char *tag, const char *stamp, const buf *o)
{
  char digest[65];
  FILE *f = fopen(stamp, "r");
  size_t n = f ? fread(digest, 1, 64, f) : 0;
  if (f)
    fclose(f);
  digest[n] = 0;
  if (n != 64 || strspn(digest, "0123456789abcdef") != 64)
    fail(3, "%s: not a digest (trawl batch --bump wrote it)", stamp);
  buf name = {0};
  buf_str(&name, dir);
  buf_str(&name, "/index-");
  buf_str(&name, digest);
  buf_str(&name, "-");
  buf_str(&name, tag);
  buf_str(&name, ".bzl");
  write_file(name.data, o);

  /* The others, newest first; a name vanishing meanwhile (another run's
   * pruning) is no trouble. */
  DIR *d = opendir(dir);
  if (!d)
    fail(3, "%s: %s", dir, strerror(errno));
  struct kept {
    char *name;
    struct timespec mtime;
  } *v = NULL;
  size_t nv = 0, cap = 0;
  const char *mine = strrchr(name.data, '/') + 1;
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
      fail(3, "%s/%s: %s", dir, v[i].name, strerror(errno));
  }
  for (size_t i = 0; i < nv; i++)
    free(v[i].name);
  free(v);
  closedir(d);
  free(name.data);
}

static const char usage[] =
  "usage: trawl-bazel-index --trawl EXE --root DIR --out FILE [--cache FILE] [--state DIR] "
  "[--bump STAMP [--keep DIR --tag TAG]] (TAG: a-z, 0-9, '-')";

int
main(int argc, char **argv)
{
  const char *exe = NULL, *root = NULL, *out = NULL, *cache = NULL, *state = NULL;
  const char *bump = NULL, *keep = NULL, *tag = NULL;
  for (int i = 1; i < argc; i++) {
    const char **slot = NULL;
    if (strcmp(argv[i], "--trawl") == 0)
      slot = &exe;
    else if (strcmp(argv[i], "--root") == 0)
      slot = &root;
    else if (strcmp(argv[i], "--out") == 0)
      slot = &out;
    else if (strcmp(argv[i], "--cache") == 0)
      slot = &cache;
    else if (strcmp(argv[i], "--state") == 0)
      slot = &state;
    else if (strcmp(argv[i], "--bump") == 0)
      slot = &bump;
    else if (strcmp(argv[i], "--keep") == 0)
      slot = &keep;
    else if (strcmp(argv[i], "--tag") == 0)
      slot = &tag;
    if (!slot || i + 1 == argc)
      fail(2, "%s", usage);
    *slot = argv[++i];
  }
  /* The tag is part of a file name. */
  if (!exe || !root || !out || (keep && (!bump || !tag)) || (tag && !keep) ||
      (tag && (!*tag || strspn(tag, "0123456789abcdefghijklmnopqrstuvwxyz-") != strlen(tag))))
    fail(2, "%s", usage);

  /* The excludes: what .bazelignore names, and the output links. */
  buf excludes = {0};
  size_t n_excludes = 0;
  buf_grow(&excludes, 0);
  read_bazelignore(root, &excludes, &n_excludes);
  exclude_output_links(root, &excludes, &n_excludes);
  /* trawl's own directory is a package of its own (its BUILD file stops
   * glob() there), and changes while Bazel runs: never walked. */
  if (state)
    exclude_tree(&excludes, &n_excludes, state, strlen(state));

  buf queries = {0};
  static const struct {
    const char *type;
    const char *ignore;
  } q[N_QUERIES] = {
    [Q_FILES] = {"f", "false"},   [Q_DIRS] = {"d", "false"}, [Q_DANGLING] = {"l", "false"},
    [Q_GI_FILES] = {"f", "true"}, [Q_GI_DIRS] = {"d", "true"},
  };
  for (int i = 0; i < N_QUERIES; i++) {
    char head[64];
    snprintf(head, sizeof head, "{\"id\":%d,\"root\":", i);
    buf_str(&queries, head);
    json_string(&queries, root, strlen(root));
    buf_str(&queries, ",\"include\":[\"**\"],\"exclude\":[");
    buf_add(&queries, excludes.data, excludes.len);
    buf_str(&queries, "],\"hidden\":true,\"follow\":true,\"ignore\":");
    buf_str(&queries, q[i].ignore);
    buf_str(&queries, ",\"type\":[\"");
    buf_str(&queries, q[i].type);
    buf_str(&queries, "\"]}\n");
  }
  buf answers = run_trawl(exe, cache, bump, &queries);
  path_list lists[N_QUERIES] = {{0}};
  parse_answers(answers.data, lists);

  /* A dangling link is no file to glob(). */
  subtract_sorted(&lists[Q_FILES], &lists[Q_DANGLING]);
  subtract_sorted(&lists[Q_GI_FILES], &lists[Q_DANGLING]);

  /* The packages: directories holding a BUILD or BUILD.bazel file. */
  pkg_set set = {0};
  path_list pkgs = {0};
  for (size_t i = 0; i < lists[Q_FILES].n; i++) {
    path *p = &lists[Q_FILES].v[i];
    const char *slash = last_byte(p->p, '/', p->n);
    const char *base = slash ? slash + 1 : p->p;
    if (!is_build_file(base, p->n - (size_t)(base - p->p)))
      continue;
    size_t dir = slash ? (size_t)(slash - p->p) : 0;
    if (!pkg_has(&set, p->p, dir)) {
      pkg_add(&set, p->p, dir);
      list_add(&pkgs, p->p, dir);
    }
  }
  qsort(pkgs.v, pkgs.n, sizeof *pkgs.v, cmp_path);

  entry_list files = partition(&lists[Q_FILES], &set, pkgs.v, pkgs.n, true);
  entry_list dirs = partition(&lists[Q_DIRS], &set, pkgs.v, pkgs.n, false);
  entry_list gi_files = partition(&lists[Q_GI_FILES], &set, pkgs.v, pkgs.n, true);
  entry_list gi_dirs = partition(&lists[Q_GI_DIRS], &set, pkgs.v, pkgs.n, false);

  buf o = {0};
  buf_str(&o, "# Generated by trawl-bazel-index (trawl's bazel/index.c) for trawl_glob():\n"
              "# every package's files and directories. Do not edit.\n"
              "FORMAT = 2\n"
              "PACKAGES = {\n");
  size_t cf = 0, cd = 0, cgf = 0, cgd = 0;
  for (uint32_t k = 0; k < pkgs.n; k++) {
    size_t f0, f1, d0, d1, gf0, gf1, gd0, gd1;
    range_of(&files, k, &f0, &f1, &cf);
    range_of(&dirs, k, &d0, &d1, &cd);
    range_of(&gi_files, k, &gf0, &gf1, &cgf);
    range_of(&gi_dirs, k, &gd0, &gd1, &cgd);
    buf_str(&o, "    \"");
    starlark_bytes(&o, pkgs.v[k].p, pkgs.v[k].n);
    buf_str(&o, "\": (");
    write_files(&o, files.v + f0, f1 - f0, dirs.v + d0, d1 - d0);
    buf_str(&o, ", ");
    write_dirs(&o, dirs.v + d0, d1 - d0);
    buf_str(&o, ", ");
    if (same_entries(files.v + f0, f1 - f0, gi_files.v + gf0, gf1 - gf0))
      buf_str(&o, "None");
    else
      write_files(&o, gi_files.v + gf0, gf1 - gf0, dirs.v + d0, d1 - d0);
    buf_str(&o, ", ");
    if (same_entries(dirs.v + d0, d1 - d0, gi_dirs.v + gd0, gd1 - gd0))
      buf_str(&o, "None");
    else
      write_dirs(&o, gi_dirs.v + gd0, gd1 - gd0);
    buf_str(&o, "),\n");
  }
  buf_str(&o, "}\n");

  write_file(out, &o);
  if (keep)
    keep_index(keep, tag, bump, &o);
  return 0;
}
