/* trawl — result caches: a plan's walks recorded in a file, re-validated by
 * stamps (trawl/plan.h, docs/cache.md).
 *
 * The file: a 56-byte header (magic, format version, lengths, a CRC-32 of
 * the index and one of the records), then the index — the trawl version,
 * the queries (a GVariant: pattern texts, dialects, flags, options, roots)
 * and per walk its root, its ignore sources outside the walked directories
 * with their stamps, and its directories' stamps — then the records of the
 * memos (memo.h). The layout is written out below, before the reader.
 * Anything that does not check out is not trusted: the run walks in full
 * and writes a new file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "ignore.h"
#include "plan-private.h"
#include "trawl/version.h"

#define CACHE_MAGIC "TRAWLC\x1a\n"
#define CACHE_FORMAT 1u
#define HEADER_SIZE 56

#define PAT_T "(ayuu)"
#define OPT_T "(bbuibu)"
#define QUERY_T "(aya" PAT_T "a" PAT_T OPT_T ")"
#define QUERIES_T "a" QUERY_T

/* ---- values ----------------------------------------------------------------- */

static GVariant *
bytes_v(const char *s, size_t len)
{
  return g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, s, len, 1);
}

static const char *
bytes_of(GVariant *v, size_t *len)
{
  gsize n = 0;
  const char *s = g_variant_get_fixed_array(v, &n, 1);
  *len = n;
  return s ? s : "";
}

static char *
bytes_dup(GVariant *v)
{
  size_t len;
  const char *s = bytes_of(v, &len);
  return g_strndup(s, len);
}

static GVariant *
patterns_v(const GPtrArray *pats)
{
  GVariantBuilder b;
  g_variant_builder_init(&b, G_VARIANT_TYPE("a" PAT_T));
  for (guint j = 0; j < pats->len; j++) {
    const trawl_pattern *p = pats->pdata[j];
    size_t len;
    const char *text = trawl_pattern_text(p, &len);
    g_variant_builder_add(&b, "(@ayuu)", bytes_v(text, len), (guint32)trawl_pattern_dialect(p),
                          (guint32)trawl_pattern_flags(p));
  }
  return g_variant_builder_end(&b);
}

/* The queries as the cache records them: everything that decides a result
 * (not threads or the reader). */
static GVariant *
queries_v(const trawl_plan *plan)
{
  GVariantBuilder qs;
  g_variant_builder_init(&qs, G_VARIANT_TYPE("a" QUERY_T));
  for (guint i = 0; i < plan->queries->len; i++) {
    const struct pquery *q = plan->queries->pdata[i];
    const trawl_walk_options *o = &q->opt;
    g_variant_builder_add(&qs, "(@ay@a" PAT_T "@a" PAT_T OPT_T ")",
                          bytes_v(q->root, strlen(q->root)), patterns_v(q->includes),
                          patterns_v(q->excludes), (gboolean)o->hidden, (gboolean)o->follow,
                          (guint32)o->types, (gint32)o->max_depth, (gboolean)o->one_file_system,
                          (guint32)o->ignore);
  }
  return g_variant_builder_end(&qs);
}

/* ---- ignore sources outside the walk ------------------------------------------ */

/* A source's stamp now. A directory (a `.git`) counts only as being one:
 * git writes in it all the time. */
static void
source_stamp(const char *path, guint8 kind, struct stamp *out)
{
  struct stat st;
  memset(out, 0, sizeof *out);
  if (stat(path, &st) != 0)
    return;
  if (kind == IGNORE_SOURCE_EXISTS || S_ISDIR(st.st_mode)) {
    out->present = true;
    out->size = S_ISDIR(st.st_mode) ? 1 : 0;
    return;
  }
  stamp_of(out, &st, true);
}

/* The sources of one walk: paths, kinds and stamps (taken before the walk);
 * ENV, the environment that chose them. */
struct sources {
  GPtrArray *paths;
  GByteArray *kinds;
  GArray *stamps;       /* struct stamp */
  GString *env;
};

static void
sources_init(struct sources *s, const struct group *g, const trawl_walk_options *o)
{
  s->paths = g_ptr_array_new_with_free_func(g_free);
  s->kinds = g_byte_array_new();
  s->stamps = g_array_new(FALSE, FALSE, sizeof(struct stamp));
  s->env = g_string_new(NULL);
  G_STATIC_ASSERT((int)TRAWL_IGNORE_VCS == (int)IGNORE_VCS &&
                  (int)TRAWL_IGNORE_DOT == (int)IGNORE_DOT);
  char *abs = realpath(g->root, NULL);
  if (abs)
    ignore_sources(o->ignore, abs, s->paths, s->kinds, s->env);
  free(abs);
  for (guint i = 0; i < s->paths->len; i++) {
    struct stamp st;
    source_stamp(s->paths->pdata[i], s->kinds->data[i], &st);
    g_array_append_val(s->stamps, st);
  }
}

static void
sources_clear(struct sources *s)
{
  g_ptr_array_unref(s->paths);
  g_byte_array_unref(s->kinds);
  g_array_unref(s->stamps);
  g_string_free(s->env, TRUE);
}

/* A stamp from the last 20 ms, or whole seconds from the last two seconds:
 * the file may change again and look the same. */
static bool
source_racy(const struct stamp *s, const struct timespec *now)
{
  if (!s->present || (s->mtime_s == 0 && s->ctime_s == 0))
    return false;
  const int64_t newest_s = MAX(s->mtime_s, s->ctime_s);
  if (s->mtime_ns == 0 && s->ctime_ns == 0)
    return newest_s + 2 >= now->tv_sec;
  const int64_t newest = MAX(s->mtime_s * 1000000000LL + s->mtime_ns,
                             s->ctime_s * 1000000000LL + s->ctime_ns);
  return newest >= (int64_t)now->tv_sec * 1000000000LL + now->tv_nsec - 20000000LL;
}

/* ---- the file ----------------------------------------------------------------- */

static void
put_le(guint8 *p, guint64 v, int n)
{
  for (int i = 0; i < n; i++)
    p[i] = (guint8)(v >> (8 * i));
}

static guint64
get_le(const guint8 *p, int n)
{
  guint64 v = 0;
  for (int i = n; i-- > 0;)
    v = (v << 8) | p[i];
  return v;
}

static guint32
checksum(const guint8 *data, gsize len)
{
  /* CRC-32 (zlib): corruption, not malice, is what it guards against, and
   * it is cheap — SHA-256 was 5.2 M of a 9.1 M-instruction cached run of the
   * repo fixture (callgrind), MD5 still a fifth of one over 53,000 files. */
  uLong crc = crc32(0L, Z_NULL, 0);
  while (len > 0) {
    uInt chunk = len > (1u << 30) ? (1u << 30) : (uInt)len;
    crc = crc32(crc, data, chunk);
    data += chunk;
    len -= chunk;
  }
  return (guint32)crc;
}


/* The header: magic (8 bytes), format version (u32), zero (u32), body
 * length (u64), CRC-32 of the index (u32), CRC-32 of the records (u32),
 * index length (u64), zero (16 bytes). The body: the index, then the
 * records, little-endian throughout:
 *
 *   index   := str version, str queries (a GVariant QUERIES_T in normal
 *              form), u32 n, walk[n]
 *   walk    := str root, u64 dev, u64 ino, u32 n, u64 members[n], str env,
 *              u32 n, source[n], u32 n, u64 bytes, dir[n] (BYTES long)
 *   source  := str path, u8 kind (IGNORE_SOURCE_*, or SOURCE_RACY), stamp
 *   dir     := str path, u64 live, stamp, u32 has, stamp, stamp,
 *              u8 flags (DIR_RACY | DIR_WAY | DIR_START), u32 n, u64 offset: its N
 *              records at OFFSET in the records
 *   records := rec...
 *   rec     := str name, u8 kind (MEMO_*), u8 type, u64 mask
 *   stamp   := u64 dev, u64 ino, i64 mtime_s, u32 mtime_ns, i64 ctime_s,
 *              u32 ctime_ns, u64 size, u8 present
 *   str     := u32 length, bytes
 *
 * Plain records rather than one GVariant: reading a GVariant child by child
 * cost 500 instructions a record (a 130 KB cache of the repo fixture took
 * 78 M instructions to load, five times its walk); this is read at memcpy
 * speed, every length checked against the end. The records have their own
 * checksum, verified only when they are read: `trawl check` on an unchanged
 * tree reads the index alone. */
#define SOURCE_RACY 0xff
#define DIR_INDEX_MIN (4 + 8 + STAMP_SIZE * 3 + 4 + 1 + 4 + 8)
#define DIR_RACY 1
#define DIR_WAY 2
#define DIR_START 4
#define STAMP_SIZE 49

static void
w_u8(GByteArray *b, guint8 v)
{
  g_byte_array_append(b, &v, 1);
}

static void
w_le(GByteArray *b, guint64 v, int n)
{
  guint8 t[8];
  put_le(t, v, n);
  g_byte_array_append(b, t, (guint)n);
}

static void
w_str(GByteArray *b, const char *s, size_t len)
{
  w_le(b, len, 4);
  g_byte_array_append(b, (const guint8 *)s, (guint)len);
}

static void
w_stamp(GByteArray *b, const struct stamp *s)
{
  w_le(b, s->dev, 8);
  w_le(b, s->ino, 8);
  w_le(b, (guint64)s->mtime_s, 8);
  w_le(b, s->mtime_ns, 4);
  w_le(b, (guint64)s->ctime_s, 8);
  w_le(b, s->ctime_ns, 4);
  w_le(b, s->size, 8);
  w_u8(b, s->present);
}

struct rd {
  const guint8 *p, *end;
  bool bad;
};

static inline guint64
r_le(struct rd *r, int n)
{
  if (G_UNLIKELY(r->bad || r->end - r->p < n)) {
    r->bad = true;
    return 0;
  }
  guint64 v = 0;
  if (n == 8) {
    memcpy(&v, r->p, 8);
    v = GUINT64_FROM_LE(v);
  } else if (n == 4) {
    guint32 u;
    memcpy(&u, r->p, 4);
    v = GUINT32_FROM_LE(u);
  } else {
    v = get_le(r->p, n);
  }
  r->p += n;
  return v;
}

static const char *
r_str(struct rd *r, size_t *len)
{
  *len = (size_t)r_le(r, 4);
  if (r->bad || (size_t)(r->end - r->p) < *len) {
    r->bad = true;
    *len = 0;
    return "";
  }
  const char *s = (const char *)r->p;
  r->p += *len;
  return s;
}

/* A count of items each at least MIN bytes long: no more than fit. */
static guint32
r_count(struct rd *r, size_t min)
{
  guint32 n = (guint32)r_le(r, 4);
  if (!r->bad && (size_t)(r->end - r->p) / min < n)
    r->bad = true;
  return r->bad ? 0 : n;
}

static void
r_stamp(struct rd *r, struct stamp *s)
{
  s->dev = r_le(r, 8);
  s->ino = r_le(r, 8);
  s->mtime_s = (int64_t)r_le(r, 8);
  s->mtime_ns = (uint32_t)r_le(r, 4);
  s->ctime_s = (int64_t)r_le(r, 8);
  s->ctime_ns = (uint32_t)r_le(r, 4);
  s->size = r_le(r, 8);
  s->present = r_le(r, 1) != 0;
}

/* One walk of a cache file. */
struct cached_walk {
  char *root;
  guint64 dev, ino;
  GArray *members;      /* guint64 */
  GString *env;
  GPtrArray *paths;     /* the sources */
  GByteArray *kinds;
  GArray *stamps;
  const guint8 *dirs_at;  /* the directories' index entries, in the file's data */
  const guint8 *dirs_end;
  guint32 n_dirs;
  struct cache_file *file;
  struct walk_memo *memo; /* parsed from them on demand */
};

static void
cached_walk_free(struct cached_walk *w)
{
  g_free(w->root);
  g_array_unref(w->members);
  g_string_free(w->env, TRUE);
  g_ptr_array_unref(w->paths);
  g_byte_array_unref(w->kinds);
  g_array_unref(w->stamps);
  g_free(w);
}

static void
release(gchar *data, gsize len)
{
  if (data)
    munmap(data, len);
}

struct cache_file {
  gchar *data;          /* the whole file: the walks point into it */
  gsize data_len;
  const guint8 *recs, *recs_end; /* the records */
  guint32 recs_crc;
  bool records_checked, records_ok;
  char *version;
  GVariant *queries;
  GPtrArray *walks;     /* struct cached_walk * */
};

void
cache_file_free(struct cache_file *c)
{
  if (c == NULL)
    return;
  release(c->data, c->data_len);
  g_free(c->version);
  if (c->queries)
    g_variant_unref(c->queries);
  if (c->walks)
    g_ptr_array_unref(c->walks);
  g_free(c);
}

static struct memo_dir *
read_dir(struct rd *r, const guint8 *recs, const guint8 *recs_end)
{
  size_t plen;
  const char *path = r_str(r, &plen);
  guint64 live = r_le(r, 8);
  struct stamp st, ig[2];
  r_stamp(r, &st);
  guint32 has = (guint32)r_le(r, 4);
  r_stamp(r, &ig[0]);
  r_stamp(r, &ig[1]);
  const guint8 flags = (guint8)r_le(r, 1);
  const guint32 n = (guint32)r_le(r, 4);
  const guint64 off = r_le(r, 8);
  if (r->bad || off > (guint64)(recs_end - recs))
    return NULL;
  struct rd rr = {recs + off, recs_end, false};
  if ((size_t)(rr.end - rr.p) / 14 < n)
    return NULL;
  /* First pass: the names' total length. */
  size_t names = 0;
  for (guint32 i = 0; i < n && !rr.bad; i++) {
    size_t len;
    r_str(&rr, &len);
    r_le(&rr, 10);
    names += len;
  }
  if (rr.bad)
    return NULL;
  rr.p = recs + off;
  struct memo_dir *d = memo_dir_new(0, path, plen, n, names);
  char *at = memo_dir_names(d);
  for (guint32 i = 0; i < n; i++) {
    size_t len;
    const char *name = r_str(&rr, &len);
    memcpy(at, name, len);
    struct memo_rec *m = &d->recs[i];
    m->name = at;
    m->len = (uint32_t)len;
    guint8 kind = (guint8)r_le(&rr, 1);
    m->kind = kind <= MEMO_SUBTREE_LINK ? kind : MEMO_RESULT;
    m->type = (uint8_t)r_le(&rr, 1);
    m->mask = r_le(&rr, 8);
    at += len;
  }
  d->live = live;
  d->st = st;
  d->has = has;
  d->ignore[0] = ig[0];
  d->ignore[1] = ig[1];
  d->racy = flags & DIR_RACY;
  d->way = flags & DIR_WAY;
  d->start = flags & DIR_START;
  return d;
}

static struct cached_walk *
read_walk(struct rd *r)
{
  struct cached_walk *w = g_new0(struct cached_walk, 1);
  size_t len;
  const char *root = r_str(r, &len);
  w->root = g_strndup(root, len);
  w->dev = r_le(r, 8);
  w->ino = r_le(r, 8);
  w->members = g_array_new(FALSE, FALSE, sizeof(guint64));
  guint32 n = r_count(r, 8);
  for (guint32 i = 0; i < n; i++) {
    guint64 m = r_le(r, 8);
    g_array_append_val(w->members, m);
  }
  const char *env = r_str(r, &len);
  w->env = g_string_new_len(env, (gssize)len);
  w->paths = g_ptr_array_new_with_free_func(g_free);
  w->kinds = g_byte_array_new();
  w->stamps = g_array_new(FALSE, FALSE, sizeof(struct stamp));
  n = r_count(r, 4 + 1 + STAMP_SIZE);
  for (guint32 i = 0; i < n && !r->bad; i++) {
    const char *p = r_str(r, &len);
    g_ptr_array_add(w->paths, g_strndup(p, len));
    w_u8(w->kinds, (guint8)r_le(r, 1));
    struct stamp st;
    r_stamp(r, &st);
    g_array_append_val(w->stamps, st);
  }
  w->n_dirs = r_count(r, DIR_INDEX_MIN);
  guint64 bytes = r_le(r, 8);
  if (!r->bad && (guint64)(r->end - r->p) < bytes)
    r->bad = true;
  if (!r->bad) {
    w->dirs_at = r->p;
    w->dirs_end = r->p + bytes;
    r->p += bytes;
  }
  return w;
}

/* The memo of cached walk W, parsed now; NULL if the records do not check
 * out (their checksum is verified the first time). */
static struct walk_memo *
cached_memo(const struct cached_walk *w)
{
  struct cache_file *c = w->file;
  if (!c->records_checked) {
    c->records_ok = checksum(c->recs, (gsize)(c->recs_end - c->recs)) == c->recs_crc;
    c->records_checked = true;
  }
  if (!c->records_ok)
    return NULL;
  struct rd r = {w->dirs_at, w->dirs_end, false};
  struct walk_memo *m = walk_memo_new();
  for (guint32 i = 0; i < w->n_dirs && !r.bad; i++) {
    struct memo_dir *d = read_dir(&r, c->recs, c->recs_end);
    if (d == NULL)
      r.bad = true;
    else {
      walk_memo_add(m, d);
      memo_dir_unref(d);
    }
  }
  if (r.bad || r.p != r.end) {
    walk_memo_free(m);
    return NULL;
  }
  return m;
}

/* The contents of file PATH (*LEN bytes, at least one) in memory mapped
 * with MAP_POPULATE: one system call makes the pages rather than a page
 * fault each (in this VM a fault costs 15-30 us: reading a 2 MB cache into
 * malloc'd memory took 520 of them). Read, not mapped from the file: a file
 * truncated by someone else meanwhile is then short data, not SIGBUS.
 * NULL with *WHY set (NULL too: no such file). */
static gchar *
read_whole(const char *path, gsize *len, char **why)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    if (errno != ENOENT)
      *why = g_strdup_printf("cannot be read (%s)", g_strerror(errno));
    if (fd >= 0)
      close(fd);
    return NULL;
  }
  if (st.st_size <= 0 || st.st_size > ((off_t)1 << 36)) {
    *why = g_strdup(st.st_size <= 0 ? "is truncated" : "is too large");
    close(fd);
    return NULL;
  }
  size_t size = (size_t)st.st_size;
  void *buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
                   -1, 0);
  if (buf == MAP_FAILED) {
    *why = g_strdup_printf("cannot be read (%s)", g_strerror(errno));
    close(fd);
    return NULL;
  }
  size_t got = 0;
  while (got < size) {
    ssize_t n = read(fd, (char *)buf + got, size - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  close(fd);
  *len = got; /* shorter if it shrank meanwhile: the header check says so */
  if (got == 0) {
    munmap(buf, size);
    *why = g_strdup("is truncated");
    return NULL;
  }
  return buf;
}

/* Cache file PATH, checked: NULL with *WHY set (NULL too: no such file). */
static struct cache_file *
cache_load(const char *path, char **why)
{
  *why = NULL;
  gsize len = 0;
  gchar *data = read_whole(path, &len, why);
  if (data == NULL)
    return NULL;
  const guint8 *h = (const guint8 *)data;
  if (len < HEADER_SIZE)
    *why = g_strdup("is truncated");
  else if (memcmp(h, CACHE_MAGIC, 8) != 0)
    *why = g_strdup("is not a trawl cache");
  else if (get_le(h + 8, 4) != CACHE_FORMAT)
    *why = g_strdup_printf("has format version %u, not %u", (unsigned)get_le(h + 8, 4),
                           CACHE_FORMAT);
  else if (get_le(h + 16, 8) != len - HEADER_SIZE || get_le(h + 32, 8) > len - HEADER_SIZE)
    *why = g_strdup("is truncated");
  else if (checksum(h + HEADER_SIZE, get_le(h + 32, 8)) != get_le(h + 24, 4))
    *why = g_strdup("is corrupt (its checksum does not match)");
  if (*why) {
    release(data, len);
    return NULL;
  }
  /* The index now; the records' checksum when they are first needed (a
   * re-check that finds nothing changed never reads them). */
  const guint64 index_len = get_le(h + 32, 8);
  struct rd r = {h + HEADER_SIZE, h + HEADER_SIZE + index_len, false};
  struct cache_file *c = g_new0(struct cache_file, 1);
  c->recs = h + HEADER_SIZE + index_len;
  c->recs_end = h + len;
  c->recs_crc = (guint32)get_le(h + 28, 4);
  size_t n;
  const char *s = r_str(&r, &n);
  c->version = g_strndup(s, n);
  s = r_str(&r, &n);
  if (!r.bad) {
    void *copy = g_memdup2(s, n); /* aligned for GVariant, and owned by it */
    GVariant *q = g_variant_new_from_data(G_VARIANT_TYPE(QUERIES_T), copy, n, FALSE, g_free, copy);
    c->queries = g_variant_ref_sink(q);
    if (!g_variant_is_normal_form(c->queries))
      r.bad = true;
  }
  c->walks = g_ptr_array_new_with_free_func((GDestroyNotify)cached_walk_free);
  guint32 walks = r_count(&r, 36);
  for (guint32 i = 0; i < walks && !r.bad; i++) {
    struct cached_walk *w = read_walk(&r);
    w->file = c;
    g_ptr_array_add(c->walks, w);
  }
  if (!r.bad && r.p != r.end)
    r.bad = true;
  c->data = data;
  c->data_len = len;
  if (r.bad) {
    /* The checksum held: a writer's bug, not a disk's. Still not trusted. */
    *why = g_strdup("is corrupt (its records do not parse)");
    cache_file_free(c);
    return NULL;
  }
  return c;
}

/* Write BODY to PATH through a temporary file renamed into place: a reader
 * sees the old file or the new, never a part of either. */
static bool
cache_store(const char *path, GByteArray *index, const GByteArray *recs, char **why)
{
  guint8 h[HEADER_SIZE] = {0};
  memcpy(h, CACHE_MAGIC, 8);
  put_le(h + 8, CACHE_FORMAT, 4);
  put_le(h + 16, (guint64)index->len + recs->len, 8);
  put_le(h + 24, checksum(index->data, index->len), 4);
  put_le(h + 28, checksum(recs->data, recs->len), 4);
  put_le(h + 32, index->len, 8);
  g_byte_array_append(index, recs->data, recs->len);
  const guint8 *data = index->data;
  const gsize len = index->len;

  char *tmp = g_strconcat(path, ".XXXXXX", NULL);
  int fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0644);
  int err = errno;
  bool ok = fd >= 0;
  for (int part = 0; ok && part < 2; part++) {
    const guint8 *p = part ? data : h;
    size_t left = part ? len : HEADER_SIZE;
    while (left > 0) {
      ssize_t n = write(fd, p, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        err = n < 0 ? errno : EIO;
        ok = false;
        break;
      }
      p += n;
      left -= (size_t)n;
    }
  }
  if (fd >= 0 && close(fd) != 0 && ok) {
    err = errno;
    ok = false;
  }
  if (ok && rename(tmp, path) != 0) {
    err = errno;
    ok = false;
  }
  if (!ok) {
    *why = g_strdup_printf("%s: %s", path, g_strerror(err));
    if (fd >= 0)
      unlink(tmp);
  }
  g_free(tmp);
  return ok;
}

static int
compare_dirs(gconstpointer a, gconstpointer b)
{
  const struct memo_dir *x = *(const struct memo_dir *const *)a;
  const struct memo_dir *y = *(const struct memo_dir *const *)b;
  int c = memcmp(x->path, y->path, MIN(x->len, y->len));
  return c ? c : (x->len > y->len) - (x->len < y->len);
}

static void
write_walk(GByteArray *b, GByteArray *recs, const struct group *g, const struct sources *src,
           const struct timespec *now)
{
  w_str(b, g->root, strlen(g->root));
  w_le(b, (guint64)g->dev, 8);
  w_le(b, (guint64)g->ino, 8);
  w_le(b, g->members->len, 4);
  for (guint i = 0; i < g->members->len; i++)
    w_le(b, g_array_index(g->members, size_t, i), 8);
  w_str(b, src->env->str, src->env->len);
  w_le(b, src->paths->len, 4);
  for (guint i = 0; i < src->paths->len; i++) {
    const struct stamp *st = &g_array_index(src->stamps, struct stamp, i);
    const char *p = src->paths->pdata[i];
    w_str(b, p, strlen(p));
    w_u8(b, source_racy(st, now) ? SOURCE_RACY : src->kinds->data[i]);
    w_stamp(b, st);
  }
  /* In path order, so that the same walk writes the same file. */
  GPtrArray *all = g_ptr_array_new();
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, g->memo->dirs);
  while (g_hash_table_iter_next(&it, &key, &value))
    g_ptr_array_add(all, value);
  g_ptr_array_sort(all, compare_dirs);
  w_le(b, all->len, 4);
  const guint at = b->len;
  w_le(b, 0, 8); /* the records' length, filled in below */
  for (guint i = 0; i < all->len; i++) {
    const struct memo_dir *d = all->pdata[i];
    w_str(b, d->path, d->len);
    w_le(b, d->live, 8);
    w_stamp(b, &d->st);
    w_le(b, d->has, 4);
    w_stamp(b, &d->ignore[0]);
    w_stamp(b, &d->ignore[1]);
    w_u8(b, (d->racy ? DIR_RACY : 0) | (d->way ? DIR_WAY : 0) | (d->start ? DIR_START : 0));
    w_le(b, d->n, 4);
    w_le(b, recs->len, 8);
    for (guint k = 0; k < d->n; k++) {
      const struct memo_rec *r = &d->recs[k];
      w_str(recs, r->name, r->len);
      w_u8(recs, r->kind);
      w_u8(recs, r->type);
      w_le(recs, r->mask, 8);
    }
  }
  put_le(b->data + at, b->len - at - 8, 8);
  g_ptr_array_unref(all);
}

/* ---- runs ------------------------------------------------------------------------ */

void
trawl_cache_report_clear(trawl_cache_report *r)
{
  g_free(r->warning);
  g_free(r->write_error);
  memset(r, 0, sizeof *r);
}

static int
compare_strings(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* plan->previous from the memos the cache held (kept in plan->prev_memos
 * by the run): every result recorded, per query, sorted. */
static void
previous_build(trawl_plan *plan)
{
  plan->previous = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
  for (guint i = 0; i < plan->queries->len; i++)
    g_ptr_array_add(plan->previous, g_ptr_array_new_with_free_func(g_free));
  for (guint g = 0; g < plan->groups->len; g++) {
    struct group *grp = plan->groups->pdata[g];
    if (grp->memo_prev == NULL && grp->cached)
      grp->memo_prev = cached_memo(grp->cached);
    const struct walk_memo *m = grp->memo_prev;
    if (m == NULL)
      continue;
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, m->dirs);
    while (g_hash_table_iter_next(&it, &key, &value)) {
      const struct memo_dir *d = value;
      for (guint i = 0; i < d->n; i++) {
        const struct memo_rec *r = &d->recs[i];
        if (r->kind != MEMO_RESULT)
          continue;
        for (uint64_t bits = r->mask; bits; bits &= bits - 1) {
          unsigned b = (unsigned)__builtin_ctzll(bits);
          if (b >= grp->members->len)
            continue;
          size_t q = g_array_index(grp->members, size_t, b);
          GString *p = g_string_new_len(d->path, (gssize)d->len);
          if (d->len)
            g_string_append_c(p, '/');
          g_string_append_len(p, r->name, (gssize)r->len);
          g_ptr_array_add(plan->previous->pdata[q], g_string_free(p, FALSE));
        }
      }
    }
  }
  for (guint i = 0; i < plan->previous->len; i++) {
    GPtrArray *list = plan->previous->pdata[i];
    g_ptr_array_sort(list, compare_strings);
    g_ptr_array_add(list, NULL);
  }
}

const char *const *
trawl_plan_previous_results(const trawl_plan *plan, size_t q, size_t *n)
{
  if (n)
    *n = 0;
  if (!plan->cache_trusted || q >= plan->queries->len)
    return NULL;
  if (plan->previous == NULL)
    previous_build((trawl_plan *)plan);
  GPtrArray *list = plan->previous->pdata[q];
  if (n)
    *n = list->len - 1;
  return (const char *const *)list->pdata;
}

/* Is path PATH (LEN bytes) below ROOT_FD reachable through directories
 * only, no link on the way, as a walk opens a start directory? */
static bool
reachable(int root_fd, const char *path, size_t len)
{
  char *p = g_strndup(path, len);
  bool ok = true;
  for (size_t i = 1; i <= len && ok; i++) {
    if (i < len && p[i] != '/')
      continue;
    char c = p[i];
    p[i] = '\0';
    struct stat st;
    ok = fstatat(root_fd, p, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
    p[i] = c;
  }
  g_free(p);
  return ok;
}

/* Is every directory cached walk W recorded (below ROOT) stamped as then,
 * with its ignore files, and none of them racy? Then a walk would replay
 * every one and find what the cache holds: the check of a no-op build,
 * one stat per directory and nothing read. */
/* Is the directory whose index entry starts at R's position (below
 * ROOT_FD) as recorded? BUF is scratch space. */
static bool
entry_unchanged(struct rd *r, int root_fd, GString *buf)
{
  size_t plen;
  const char *path = r_str(r, &plen);
  r_le(r, 8);
  struct stamp was, ig[2];
  r_stamp(r, &was);
  const guint32 has = (guint32)r_le(r, 4);
  r_stamp(r, &ig[0]);
  r_stamp(r, &ig[1]);
  const guint8 flags = (guint8)r_le(r, 1);
  r_le(r, 4); /* the records' count and place: not needed here */
  r_le(r, 8);
  if (r->bad || (flags & DIR_RACY))
    return false;
  g_string_assign(buf, "");
  g_string_append_len(buf, path, (gssize)plen);
  struct stat st;
  bool there;
  if (plen == 0)
    there = fstat(root_fd, &st) == 0;
  else
    there = (!(flags & DIR_START) || reachable(root_fd, path, plen)) &&
            fstatat(root_fd, buf->str, &st, AT_SYMLINK_NOFOLLOW) == 0;
  there = there && S_ISDIR(st.st_mode);
  if (!was.present)
    return !there; /* a start directory not there, still not there */
  struct stamp now;
  if (!there)
    return false;
  stamp_of(&now, &st, false);
  if (!stamp_equal(&now, &was))
    return false;
  for (unsigned k = 0; k < 2; k++) {
    if (!(has & (k ? HAS_DOTIGNORE : HAS_GITIGNORE)))
      continue;
    if (plen)
      g_string_append_c(buf, '/');
    g_string_append(buf, k ? ".ignore" : ".gitignore");
    struct stamp is;
    memset(&is, 0, sizeof is);
    if (fstatat(root_fd, buf->str, &st, AT_SYMLINK_NOFOLLOW) == 0)
      stamp_of(&is, &st, true);
    if (!stamp_equal(&is, &ig[k]))
      return false;
    g_string_truncate(buf, plen);
  }
  return true;
}

/* A share of the entries for one thread of walk_unchanged(). */
struct share {
  const guint8 *const *entries; /* where each entry starts */
  const guint8 *end;
  guint32 from, to;
  int root_fd;
  gint *differs;        /* shared: set when any entry differs */
};

static gpointer
check_share(gpointer data)
{
  struct share *sh = data;
  GString *buf = g_string_new(NULL);
  for (guint32 i = sh->from; i < sh->to && !g_atomic_int_get(sh->differs); i++) {
    struct rd r = {sh->entries[i], sh->end, false};
    if (!entry_unchanged(&r, sh->root_fd, buf))
      g_atomic_int_set(sh->differs, 1);
  }
  g_string_free(buf, TRUE);
  return NULL;
}

/* From this many directories on, the stats are shared among threads: a
 * stat costs 4-5 us here, mostly in the kernel's path lookup, and the
 * lookups of two threads run side by side. */
#define CHECK_THREADS_FROM 512

/* Is every directory cached walk W recorded (below ROOT) stamped as then,
 * with its ignore files, and none of them racy? Then a walk would replay
 * every one and find what the cache holds: the check of a no-op build,
 * one stat per directory and nothing read. */
static bool
walk_unchanged(const struct cached_walk *w, const char *root)
{
  int root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    return false;
  /* Where each entry starts. */
  const guint8 **entries = g_new(const guint8 *, MAX(w->n_dirs, 1u));
  struct rd r = {w->dirs_at, w->dirs_end, false};
  const size_t rest = 8 + STAMP_SIZE + 4 + 2 * STAMP_SIZE + 1 + 4 + 8;
  for (guint32 i = 0; i < w->n_dirs && !r.bad; i++) {
    entries[i] = r.p;
    size_t plen;
    r_str(&r, &plen);
    if (r.bad || (size_t)(r.end - r.p) < rest)
      r.bad = true;
    else
      r.p += rest;
  }
  gint differs = r.bad;
  unsigned threads = w->n_dirs >= CHECK_THREADS_FROM ? MIN(g_get_num_processors(), 4u) : 1;
  struct share shares[4];
  GThread *helpers[4] = {NULL};
  for (unsigned t = 0; t < threads && !differs; t++) {
    shares[t] = (struct share){(const guint8 *const *)entries, w->dirs_end,
                               (guint32)((guint64)w->n_dirs * t / threads),
                               (guint32)((guint64)w->n_dirs * (t + 1) / threads), root_fd, &differs};
    if (t > 0)
      helpers[t] = g_thread_new("trawl-check", check_share, &shares[t]);
  }
  if (!differs)
    check_share(&shares[0]);
  for (unsigned t = 1; t < threads; t++)
    if (helpers[t])
      g_thread_join(helpers[t]);
  g_free(entries);
  close(root_fd);
  return !differs;
}

/* Does cached walk W have group G's root and queries? */
static bool
walk_matches(const struct group *g, const struct cached_walk *w)
{
  bool same = w->dev == (guint64)g->dev && w->ino == (guint64)g->ino &&
              w->members->len == g->members->len;
  for (guint i = 0; same && i < w->members->len; i++)
    same = g_array_index(w->members, guint64, i) == g_array_index(g->members, size_t, i);
  return same;
}

/* Were W's sources stamped as SRC's are now (and not racy then)? */
static bool
sources_unchanged(const struct cached_walk *w, const struct sources *src)
{
  bool same = w->env->len == src->env->len && memcmp(w->env->str, src->env->str, w->env->len) == 0 &&
              w->paths->len == src->paths->len;
  for (guint i = 0; same && i < w->paths->len; i++)
    same = w->kinds->data[i] != SOURCE_RACY && strcmp(w->paths->pdata[i], src->paths->pdata[i]) == 0 &&
           stamp_equal(&g_array_index(w->stamps, struct stamp, i),
                       &g_array_index(src->stamps, struct stamp, i));
  return same;
}

/* Is NOW the record OLD was, entry for entry? A replayed entry is the very
 * one of the old record; a directory on the way is made again each run. */
static bool
same_records(const struct walk_memo *now, const struct walk_memo *old)
{
  if (g_hash_table_size(now->dirs) != g_hash_table_size(old->dirs))
    return false;
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, now->dirs);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    const struct memo_dir *d = value;
    const struct memo_dir *o = walk_memo_lookup(old, d->root, d->path, d->len);
    if (o == d)
      continue;
    if (o == NULL || !d->way || !o->way || d->has != o->has || !stamp_equal(&d->st, &o->st) ||
        !stamp_equal(&d->ignore[0], &o->ignore[0]) || !stamp_equal(&d->ignore[1], &o->ignore[1]))
      return false;
  }
  return true;
}

bool
trawl_plan_run_cached(trawl_plan *plan, const char *path, unsigned flags,
                      trawl_cache_report *report, GError **error)
{
  memset(report, 0, sizeof *report);
  if (plan->previous)
    g_ptr_array_unref(plan->previous);
  plan->previous = NULL;
  plan->cache_trusted = false;

  /* Is there a cache, and is it this plan's? (A plan made from it has it
   * loaded already.) */
  char *why = NULL;
  struct cache_file *cache = NULL;
  if (plan->cache_file && plan->cache_path && strcmp(plan->cache_path, path) == 0) {
    cache = plan->cache_file;
    plan->cache_file = NULL;
    g_clear_pointer(&plan->cache_path, g_free); /* once: a later run reads the file again */
  } else {
    cache = cache_load(path, &why);
  }
  GVariant *queries = g_variant_ref_sink(queries_v(plan));
  if (cache && strcmp(cache->version, TRAWL_VERSION_STRING) != 0)
    why = g_strdup_printf("was written by trawl %s", cache->version);
  else if (cache && !g_variant_equal(cache->queries, queries))
    why = g_strdup("was written for other queries");
  GError *first = NULL;
  const bool grouped = plan_group(plan, &first);
  if (cache && why == NULL) {
    bool same = cache->walks->len == plan->groups->len;
    for (guint g = 0; same && g < plan->groups->len; g++)
      same = walk_matches(plan->groups->pdata[g], cache->walks->pdata[g]);
    if (!same)
      why = g_strdup("was written for other roots");
  }
  bool usable = cache && why == NULL;
  report->trusted = plan->cache_trusted = usable;
  report->warning = why;

  /* Each walk's sources, stamped before it reads them (a change after that
   * shows next time), and the record it may trust. */
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  struct sources *src = g_new0(struct sources, plan->groups->len);
  bool all_trusted = usable;
  for (guint g = 0; g < plan->groups->len; g++) {
    struct group *grp = plan->groups->pdata[g];
    const struct pquery *q0 = plan->queries->pdata[g_array_index(grp->members, size_t, 0)];
    sources_init(&src[g], grp, &q0->opt);
    grp->memo = walk_memo_new();
    if (usable) {
      grp->cached = cache->walks->pdata[g];
      grp->sources_held = sources_unchanged(grp->cached, &src[g]);
      all_trusted = all_trusted && grp->sources_held;
    }
  }
  if (usable)
    plan->cache_file = cache, cache = NULL;

  /* A re-check (trawl check): when every directory recorded is stamped as
   * recorded, nothing is walked or replayed at all — the answer is the
   * cache's. */
  bool quick = false;
  if ((flags & TRAWL_CACHE_WRITE_ON_CHANGE) && all_trusted && grouped) {
    quick = true;
    for (guint g = 0; quick && g < plan->groups->len; g++) {
      const struct group *grp = plan->groups->pdata[g];
      quick = walk_unchanged(grp->cached, grp->root);
    }
  }
  bool walked = true;
  if (quick) {
    plan->quick = true;
    for (guint g = 0; g < plan->groups->len; g++)
      report->dirs_reused += ((const struct group *)plan->groups->pdata[g])->cached->n_dirs;
  } else {
    bool records = true;
    for (guint g = 0; usable && g < plan->groups->len; g++) {
      struct group *grp = plan->groups->pdata[g];
      grp->memo_prev = cached_memo(grp->cached);
      records = records && grp->memo_prev != NULL;
      if (grp->sources_held && grp->memo_prev)
        grp->memo_old = grp->memo_prev;
      else
        all_trusted = false;
    }
    if (usable && !records) {
      /* The index held, the records do not: nothing of it is trusted. */
      report->warning = g_strdup("is corrupt (its records' checksum does not match)");
      report->trusted = plan->cache_trusted = usable = false;
      for (guint g = 0; g < plan->groups->len; g++) {
        struct group *grp = plan->groups->pdata[g];
        walk_memo_free(grp->memo_prev);
        grp->memo_prev = grp->memo_old = NULL;
        grp->cached = NULL;
      }
    }
    walked = plan_walk(plan, first ? NULL : &first);
    for (guint g = 0; g < plan->groups->len; g++) {
      trawl_walk_stats st;
      trawl_walker_stats(((struct group *)plan->groups->pdata[g])->walker, &st);
      report->dirs_read += st.dirs_opened;
      report->dirs_reused += st.dirs_reused;
    }
  }
  /* Nothing read, and every record the cache held replayed (no start
   * directory newly ignored, say): the results are the records'. */
  bool replayed_all = !quick && all_trusted && report->dirs_read == 0 && walked;
  for (guint g = 0; replayed_all && g < plan->groups->len; g++) {
    const struct group *grp = plan->groups->pdata[g];
    replayed_all = grp->memo_prev && same_records(grp->memo, grp->memo_prev);
  }
  report->changed = !usable;
  if (usable && !quick && !replayed_all) {
    for (guint i = 0; i < plan->queries->len && !report->changed; i++) {
      size_t n = 0, m = 0;
      const char *const *is = trawl_plan_results(plan, i, &n);
      const char *const *was = trawl_plan_previous_results(plan, i, &m);
      report->changed = n != m;
      for (size_t k = 0; k < n && !report->changed; k++)
        report->changed = strcmp(is[k], was[k]) != 0;
    }
  }
  const bool write = (flags & TRAWL_CACHE_WRITE_ON_CHANGE)
                         ? report->changed
                         : report->changed || report->dirs_read > 0;
  /* A run that could not answer every query records nothing. */
  if (write && grouped && walked && !quick) {
    GByteArray *body = g_byte_array_new(), *recs = g_byte_array_new();
    w_str(body, TRAWL_VERSION_STRING, strlen(TRAWL_VERSION_STRING));
    w_str(body, g_variant_get_data(queries), g_variant_get_size(queries));
    w_le(body, plan->groups->len, 4);
    for (guint g = 0; g < plan->groups->len; g++)
      write_walk(body, recs, plan->groups->pdata[g], &src[g], &now);
    report->written = cache_store(path, body, recs, &report->write_error);
    g_byte_array_unref(body);
    g_byte_array_unref(recs);
  }
  for (guint g = 0; g < plan->groups->len; g++)
    sources_clear(&src[g]);
  g_free(src);
  cache_file_free(cache);
  g_variant_unref(queries);
  if (first)
    g_propagate_error(error, first);
  return grouped && walked;
}

/* ---- a plan from a cache file ----------------------------------------------------- */

trawl_plan *
trawl_plan_new_from_cache(const char *path, GError **error)
{
  char *why = NULL;
  struct cache_file *cache = cache_load(path, &why);
  if (cache == NULL) {
    g_set_error(error, G_FILE_ERROR, why ? G_FILE_ERROR_INVAL : G_FILE_ERROR_NOENT, "%s %s",
                path, why ? why : "does not exist");
    g_free(why);
    return NULL;
  }
  trawl_plan *plan = trawl_plan_new();
  plan->owned = g_ptr_array_new_with_free_func((GDestroyNotify)trawl_pattern_free);
  GVariant *qs = cache->queries;
  const gsize n = g_variant_n_children(qs);
  bool ok = true;
  for (gsize i = 0; i < n && ok; i++) {
    GVariant *root_v, *inc_v, *exc_v;
    gboolean hidden, follow, ofs;
    guint32 types, ignore;
    gint32 max_depth;
    g_variant_get_child(qs, i, "(@ay@a" PAT_T "@a" PAT_T OPT_T ")", &root_v, &inc_v, &exc_v,
                        &hidden, &follow, &types, &max_depth, &ofs, &ignore);
    GPtrArray *lists[2] = {g_ptr_array_new(), g_ptr_array_new()};
    for (int k = 0; k < 2 && ok; k++) {
      GVariant *l = k ? exc_v : inc_v;
      for (gsize j = 0; j < g_variant_n_children(l) && ok; j++) {
        GVariant *text_v;
        guint32 dialect, pflags;
        g_variant_get_child(l, j, "(@ayuu)", &text_v, &dialect, &pflags);
        size_t len;
        const char *text = bytes_of(text_v, &len);
        GError *perr = NULL;
        trawl_pattern *p = trawl_pattern_compile(text, len, (TrawlDialect)dialect, pflags, &perr);
        if (p == NULL) {
          g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s holds a pattern that does not "
                      "compile: %s", path, perr->message);
          g_error_free(perr);
          ok = false;
        } else {
          g_ptr_array_add(plan->owned, p);
          g_ptr_array_add(lists[k], p);
        }
        g_variant_unref(text_v);
      }
    }
    if (ok) {
      trawl_walk_options o;
      trawl_walk_options_init(&o);
      o.hidden = hidden;
      o.follow = follow;
      o.types = types;
      o.max_depth = max_depth;
      o.one_file_system = ofs;
      o.ignore = ignore;
      char *root = bytes_dup(root_v);
      trawl_query q = {root, (const trawl_pattern *const *)lists[0]->pdata, lists[0]->len,
                       (const trawl_pattern *const *)lists[1]->pdata, lists[1]->len, &o};
      trawl_plan_add(plan, &q);
      g_free(root);
    }
    g_ptr_array_unref(lists[0]);
    g_ptr_array_unref(lists[1]);
    g_variant_unref(root_v);
    g_variant_unref(inc_v);
    g_variant_unref(exc_v);
  }
  if (!ok) {
    cache_file_free(cache);
    trawl_plan_free(plan);
    return NULL;
  }
  /* Kept for trawl_plan_run_cached() on the same file: one load. */
  plan->cache_file = cache;
  plan->cache_path = g_strdup(path);
  return plan;
}
