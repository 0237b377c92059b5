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
 *
 * ENTRY is None when git ignores nothing in the package; True when git
 * ignores the package's own directory (everything in it); otherwise
 * (IGN, TAINT): IGN a dict of the paths (relative to the package) that git
 * ignores while it does not ignore their directory — files, and the
 * topmost ignored directories, which are not entered (plus, in the top
 * package, the LEFT_OUT links) — and TAINT a dict from each directory that
 * holds one of those directories somewhere below it ("" the package's own)
 * to its subdirectories that git does not ignore, sorted (subpackages are
 * not subdirectories: glob() stops at them). Every byte outside printable
 * ASCII, and '"' and '\', is written as an octal escape: the file is ASCII,
 * and no file name can change its meaning. It holds no absolute path and no
 * time and depends on the tree alone, so that it only changes when what git
 * ignores, or where, changes (or the packages do): a file added, removed or
 * renamed that git does not ignore leaves it as it is.
 *
 * The index is kept as STATE/index-DIGEST.bzl, DIGEST its XXH3-128 in hex
 * (content-addressed: an index is never another's, and one made again is
 * the same file, so Bazel sees no change); STATE/stamp holds "DIGEST QUERIES
 * TRAWL": the digest, a hash of the queries asked (they change with
 * .bazelignore and the bazel-* links) and the trawl executable that wrote
 * the cache. The newest KEPT indexes are kept.
 *
 * Each run first re-checks: with the same queries and trawl, and the
 * stamp's index kept, `trawl check` says whether any answer changed; when
 * none did, or only files that git does not ignore were added or removed
 * (the same change in both views, no BUILD file among them), the index
 * stands. Otherwise `trawl batch --cache` answers (reading only the
 * directories that changed) and the index is made again. The wrapper
 * (tools/bazel) runs this before every command; the repository rule when
 * the wrapper did not.
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

/* Whether trawl check's output (with STATE/cache.labels: a label line
 * before each query's changes, then "- PATH" and "+ PATH" lines, names
 * shown as messages show them) says only that files git does not ignore
 * were added or removed: the same lines under F and GF, nothing under
 * another label, no BUILD file among them. Then the index stands. */
static bool
only_plain_files(const buf *out)
{
  const char *text = out->data ? out->data : "";
  const char *f0 = NULL, *f1 = NULL, *g0 = NULL, *g1 = NULL;
  const char **open_end = NULL;
  const char *p = text;
  while (*p) {
    const char *eol = strchr(p, '\n');
    const char *next = eol ? eol + 1 : p + strlen(p);
    const size_t len = (size_t)((eol ? eol : next) - p);
    if (len >= 2 && (p[0] == '-' || p[0] == '+') && p[1] == ' ') {
      if (!open_end)
        return false;
      const char *slash = last_byte(p + 2, '/', len - 2);
      const char *base = slash ? slash + 1 : p + 2;
      if (is_build_file(base, (size_t)(p + len - base)))
        return false;
    } else if (len == 1 && p[0] == 'F' && !f0) {
      f0 = next;
      open_end = &f1;
    } else if (len == 2 && memcmp(p, "GF", 2) == 0 && !g0) {
      if (open_end)
        *open_end = p;
      g0 = next;
      open_end = &g1;
    } else {
      return false; /* another label, or a message: it says something else */
    }
    p = next;
  }
  if (open_end)
    *open_end = p;
  return f0 && g0 && f1 - f0 == g1 - g0 && memcmp(f0, g0, (size_t)(f1 - f0)) == 0;
}

/* ---- the index ---------------------------------------------------------- */

/* The directory part of p[0..n) ("" for a name at the top). */
static size_t
dir_len(const char *p, size_t n)
{
  const char *slash = last_byte(p, '/', n);
  return slash ? (size_t)(slash - p) : 0;
}

/* Whether directory d[0..n) is one git does not ignore: the top, or in GD. */
static bool
kept_dir(const pkg_set *gd, const char *d, size_t n)
{
  return n == 0 || pkg_has(gd, d, n);
}

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

/* Writes index.bzl for the answers (see the top of this file) to O. */
static void
make_index(path_list lists[N_QUERIES], const path_list *left_out, buf *o)
{
  /* A dangling BUILD link makes no package (Q_DANGLING is sorted, as the
   * files are). */
  pkg_set dangling = {0};
  for (size_t i = 0; i < lists[Q_DANGLING].n; i++)
    pkg_add(&dangling, lists[Q_DANGLING].v[i].p, lists[Q_DANGLING].v[i].n);
  pkg_set set = {0};
  path_list pkgs = {0};
  for (size_t i = 0; i < lists[Q_FILES].n; i++) {
    path *p = &lists[Q_FILES].v[i];
    const size_t d = dir_len(p->p, p->n);
    const char *base = d ? p->p + d + 1 : p->p;
    if (!is_build_file(base, p->n - (size_t)(base - p->p)) || pkg_has(&dangling, p->p, p->n))
      continue;
    if (!pkg_has(&set, p->p, d)) {
      pkg_add(&set, p->p, d);
      list_add(&pkgs, p->p, d);
    }
  }
  qsort(pkgs.v, pkgs.n, sizeof *pkgs.v, cmp_path);

  pkg_set gd = {0};
  for (size_t i = 0; i < lists[Q_GI_DIRS].n; i++)
    pkg_add(&gd, lists[Q_GI_DIRS].v[i].p, lists[Q_GI_DIRS].v[i].n);

  /* A package whose own directory git ignores: everything in it is. */
  bool *all_ignored = calloc(pkgs.n ? pkgs.n : 1, sizeof *all_ignored);
  if (!all_ignored)
    die_oom();
  for (size_t k = 0; k < pkgs.n; k++)
    all_ignored[k] = pkgs.v[k].n && !pkg_has(&gd, pkgs.v[k].p, pkgs.v[k].n);

  /* IGN: the directories git ignores below one it does not (the walk
   * reading no ignore file lists both), the files likewise, and the links
   * left out at the top. TAINT: every directory above an ignored one. */
  item_list ign = {0}, tainted = {0};
  pkg_set taint = {0};
  for (size_t i = 0; i < lists[Q_DIRS].n; i++) {
    const path *p = &lists[Q_DIRS].v[i];
    if (pkg_has(&gd, p->p, p->n) || !kept_dir(&gd, p->p, dir_len(p->p, p->n)) ||
        pkg_has(&set, p->p, p->n))
      continue; /* kept; below an ignored one; a package (glob() stops there) */
    uint32_t k = owner_index(&set, &pkgs, p->p, p->n);
    if (k == UINT32_MAX || all_ignored[k])
      continue;
    item_add(&ign, k, p->p, p->n);
    taint_above(&taint, &tainted, &pkgs, k, p->p, p->n);
  }
  for (size_t i = 0; i < left_out->n; i++) {
    uint32_t k = owner_index(&set, &pkgs, left_out->v[i].p, left_out->v[i].n);
    if (k == UINT32_MAX || all_ignored[k])
      continue;
    item_add(&ign, k, left_out->v[i].p, left_out->v[i].n);
    taint_above(&taint, &tainted, &pkgs, k, left_out->v[i].p, left_out->v[i].n);
  }
  /* Files: in Q_FILES and not in Q_GI_FILES (both sorted), in a directory
   * git does not ignore. */
  const path_list *f = &lists[Q_FILES], *gf = &lists[Q_GI_FILES];
  for (size_t i = 0, j = 0; i < f->n; i++) {
    while (j < gf->n && cmp_path(&gf->v[j], &f->v[i]) < 0)
      j++;
    if (j < gf->n && cmp_path(&gf->v[j], &f->v[i]) == 0)
      continue;
    const path *p = &f->v[i];
    if (!kept_dir(&gd, p->p, dir_len(p->p, p->n)))
      continue;
    uint32_t k = owner_index(&set, &pkgs, p->p, p->n);
    if (k == UINT32_MAX || all_ignored[k])
      continue;
    item_add(&ign, k, p->p, p->n);
  }
  qsort(ign.v, ign.n, sizeof *ign.v, cmp_item);
  qsort(tainted.v, tainted.n, sizeof *tainted.v, cmp_item);

  /* A tainted directory's subdirectories: those git does not ignore (Q_GI_DIRS,
   * sorted, so each directory's come in order), not packages. */
  item_list children = {0};
  for (size_t i = 0; i < lists[Q_GI_DIRS].n; i++) {
    const path *p = &lists[Q_GI_DIRS].v[i];
    const size_t d = dir_len(p->p, p->n);
    if (pkg_has(&taint, p->p, d) && !pkg_has(&set, p->p, p->n)) {
      uint32_t k = owner_index(&set, &pkgs, p->p, p->n);
      if (k != UINT32_MAX)
        item_add(&children, k, p->p, p->n);
    }
  }
  qsort(children.v, children.n, sizeof *children.v, cmp_child);

  buf_str(o, "# Generated by trawl-bazel-index (trawl's bazel/index.c) for trawl_glob(): what\n"
             "# git ignores in each package. Do not edit.\n"
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
    buf_str(o, "({");
    for (size_t i = i0; i < ii; i++) {
      path r = relative(&pkgs, k, ign.v[i].p.p, ign.v[i].p.n);
      buf_str(o, i > i0 ? ", \"" : "\"");
      starlark_bytes(o, r.p, r.n);
      buf_str(o, "\": None");
    }
    buf_str(o, "}, {");
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
  buf_str(o, "}\n");
  free(all_ignored);
  free(ign.v);
  free(tainted.v);
  free(children.v);
  free(taint.slots);
  free(gd.slots);
  free(set.slots);
  free(dangling.slots);
  free(pkgs.v);
}

/* ---- the stamp and the kept indexes --------------------------------------- */

/* STATE/stamp: "DIGEST QUERIES TRAWL\n" (see the top). */
typedef struct {
  char digest[33];   /* XXH3-128, hex; "" when there is no stamp */
  char queries[17];  /* XXH3-64 of the queries' text */
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

/* STATE/cache.labels (plugins/cli/check-labels.h): trawl check then heads
 * each query's changes with its label, which only_plain_files() reads. */
static void
write_labels(const char *cache)
{
  buf b = {0}, name = {0};
  buf_str(&b, "trawl check labels 1\n");
  for (int q = 0; q < N_QUERIES; q++) {
    buf_add(&b, label[q], strlen(label[q]) + 1);
    buf_byte(&b, '\0'); /* no prefix */
  }
  buf_str(&name, cache);
  buf_str(&name, ".labels");
  write_file(name.data, &b);
  free(b.data);
  free(name.data);
}

/* ---- main ------------------------------------------------------------ */

static const char usage[] = "usage: trawl-bazel-index --trawl EXE --root DIR --state NAME";

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
  if (!exe || !root || !state_name || !*state_name || state_name[0] == '/')
    fail(2, "%s", usage);
  buf state_buf = {0};
  buf_str(&state_buf, root);
  buf_byte(&state_buf, '/');
  buf_str(&state_buf, state_name);
  const char *state = state_buf.data;
  char *cache = state_file(state, "cache");
  char *stamp_file = state_file(state, "stamp");
  char *trawl_path = realpath(exe, NULL);
  if (!trawl_path)
    fail(3, "%s: %s", exe, strerror(errno));

  /* The queries: the whole workspace, as glob() walks it, less what
   * .bazelignore names, the output links and trawl's own directory (a
   * package of its own that changes while Bazel runs). `.git` is listed
   * (git ignores it) but not entered. */
  buf excludes = {0};
  size_t n_excludes = 0;
  buf_grow(&excludes, 0);
  path_list left_out = {0};
  read_bazelignore(root, &excludes, &n_excludes);
  exclude_output_links(root, &excludes, &n_excludes, &left_out);
  exclude_tree(&excludes, &n_excludes, state_name, strlen(state_name));
  buf queries = {0};
  static const struct {
    const char *type, *ignore, *include, *exclude;
  } q[N_QUERIES] = {
    [Q_FILES] = {"f", "false", "\"**\"", ",\"**/.git/**\""},
    [Q_GI_FILES] = {"f", "true", "\"**\"", ""},
    [Q_DIRS] = {"d", "false", "\"**\"", ",\"**/.git/**\""},
    [Q_GI_DIRS] = {"d", "true", "\"**\"", ""},
    [Q_DANGLING] = {"l", "false", "\"**/BUILD\",\"**/BUILD.bazel\"", ""},
  };
  for (int i = 0; i < N_QUERIES; i++) {
    char head[64];
    snprintf(head, sizeof head, "{\"id\":%d,\"root\":", i);
    buf_str(&queries, head);
    json_string(&queries, root, strlen(root));
    buf_str(&queries, ",\"include\":[");
    buf_str(&queries, q[i].include);
    buf_str(&queries, "],\"exclude\":[");
    buf_add(&queries, excludes.data, excludes.len);
    buf_str(&queries, n_excludes ? q[i].exclude : q[i].exclude + (*q[i].exclude == ','));
    buf_str(&queries, "],\"hidden\":true,\"follow\":true,\"ignore\":");
    buf_str(&queries, q[i].ignore);
    buf_str(&queries, ",\"type\":[\"");
    buf_str(&queries, q[i].type);
    buf_str(&queries, "\"]}\n");
  }
  char qhash[17];
  queries_hash(&queries, qhash);

  /* The index stands when the cache holds these queries' answers as the
   * stamp's trawl wrote them, its index is kept, and the tree's answers
   * have not changed but for files git does not ignore. */
  stamp st = {0};
  read_stamp(stamp_file, &st);
  buf out = {0};
  const bool same = st.digest[0] && strcmp(st.queries, qhash) == 0 &&
                    strcmp(st.trawl.data, trawl_path) == 0;
  if (same) {
    char *kept = kept_name(state, st.digest);
    const bool have = access(kept, R_OK) == 0;
    free(kept);
    if (have) {
      char *check[] = {(char *)exe, "check", "--cache", cache, NULL};
      int rc = run(check, NULL, &out);
      if (rc == 0 || (rc == 1 && only_plain_files(&out))) {
        printf("%s\n", st.digest);
        return 0;
      }
      if (rc != 1)
        fail(3, "%s check failed (status %d)", exe, rc);
    }
  } else if (unlink(cache) != 0 && errno != ENOENT) {
    /* Another trawl's cache, or other queries': trawl would say so, and
     * read everything anyway. */
    fail(3, "%s: %s", cache, strerror(errno));
  }

  char *batch[] = {(char *)exe, "batch", "--cache", cache, "-", NULL};
  int rc = run(batch, &queries, &out);
  if (rc != 0)
    fail(3, "%s batch failed (status %d)", exe, rc);
  path_list lists[N_QUERIES] = {{0}};
  parse_answers(out.data, lists);
  buf index = {0};
  make_index(lists, &left_out, &index);
  char digest[33];
  digest_of(&index, digest);
  keep_index(state, digest, &index);
  write_labels(cache);
  if (!same || strcmp(st.digest, digest) != 0) {
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
