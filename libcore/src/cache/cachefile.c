/* trawl — the result cache's file: its reader and writer, and the passes
 * over a cached walk's records (cachefile.h, docs/cache.md).
 *
 * The file: a 56-byte header (magic, format version, lengths, a checksum of
 * the index and one of the records), then the index — the trawl version,
 * the queries (pattern texts, dialects, flags, options, roots) and per walk
 * its root, its ignore sources outside the walked directories with their
 * stamps, and the marks into its directory entries with each block's sum —
 * then the directories' entries (their stamps), then the records of the
 * memos (memo.h). The layout is written out in format.h, with the readers
 * of its fields; the writers are here. Anything that does not check out is
 * not trusted. The index is read (and checked) alone; the directory entries
 * whole when a pass over every one needs them, else a block at a time
 * (dir_cursor: the re-check with watchman's answer), each block checked
 * against its sum before it is parsed; the records only when a run needs
 * them, which a re-check of an unchanged tree does not. This file knows
 * memos and stamps, never a plan: cache.c runs plans.
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
/* XXH3, compiled in from the header: no library to load at start-up. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "../arena.h"
#include "cache-testing.h"
#include "cachefile.h"
#include "format.h"
#include "../ignore.h"

/* The first read of a cache file: the header, and the index if it fits
 * (a larger one takes a second read). Since format 15 the index holds a
 * 56-byte mark and a path (its key) for every 64 directories: 62,450 bytes
 * for `big`'s 38,383 directories (paths of 49 bytes on average), so 64 KB
 * holds it for up to about 40,000 such directories (format 14's 52-byte
 * marks without keys: 32 KB for 38,500). */
#define FIRST_READ 65536

static void
put_le(guint8 *p, guint64 v, int n)
{
  for (int i = 0; i < n; i++)
    p[i] = (guint8)(v >> (8 * i));
}

/* XXH3 (64 bits): corruption, not malice, is what it guards against; it
 * takes eight bytes at a time where CRC-32 looks a table up per byte
 * (docs/adr/0004-cache-file-read-cost.md). */
static guint64
checksum(const guint8 *data, gsize len)
{
  return XXH3_64bits(data, len);
}

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

/* V as a var (format.h) at T (room for 9 bytes); its length. */
static unsigned
put_var(guint8 *t, guint64 v)
{
  unsigned n = 1;
  while (n < 9 && v >> (7 * n))
    n++;
  if (n == 9) {
    t[0] = 0;
    put_le(t + 1, v, 8);
  } else {
    put_le(t, (v << n) | ((guint64)1 << (n - 1)), (int)n);
  }
  return n;
}

static void
w_var(GByteArray *b, guint64 v)
{
  guint8 t[9];
  g_byte_array_append(b, t, put_var(t, v));
}

/* Record R (rec in the layout), in one append: a cache holds one per
 * result, and an append a field costs more than encoding the record
 * (issue 25: a third of the write of a one-file change on flat20k). */
static void
w_rec(GByteArray *b, const struct memo_rec *r)
{
  guint8 t[512];
  if (r->len > sizeof t - 20) {
    w_var(b, r->len);
    g_byte_array_append(b, (const guint8 *)r->name, r->len);
    w_u8(b, r->kind);
    w_u8(b, r->type);
    w_var(b, r->mask);
    return;
  }
  unsigned n = put_var(t, r->len);
  memcpy(t + n, r->name, r->len);
  n += r->len;
  t[n++] = r->kind;
  t[n++] = r->type;
  n += put_var(t + n, r->mask);
  g_byte_array_append(b, t, n);
}

static void
w_svar(GByteArray *b, gint64 v)
{
  w_var(b, ((guint64)v << 1) ^ (guint64)(v >> 63));
}

static void
w_str(GByteArray *b, const char *s, size_t len)
{
  w_le(b, len, 4);
  g_byte_array_append(b, (const guint8 *)s, (guint)len);
}

/* Stamp S of something in a walk on device DEV. */
static void
w_stamp(GByteArray *b, const struct stamp *s, guint64 dev)
{
  if (!s->present) {
    w_u8(b, 0);
    return;
  }
  const bool same_c = s->ctime_s == s->mtime_s && s->ctime_ns == s->mtime_ns;
  w_u8(b, STAMP_PRESENT | (s->dev == dev ? STAMP_DEV : 0) | (same_c ? STAMP_CTIME : 0));
  if (s->dev != dev)
    w_var(b, s->dev);
  w_var(b, s->ino);
  w_svar(b, s->mtime_s);
  w_var(b, s->mtime_ns);
  if (!same_c) {
    w_svar(b, s->ctime_s);
    w_var(b, s->ctime_ns);
  }
  w_var(b, s->size);
}

static void
cached_walk_free(struct cached_walk *w)
{
  g_free(w->root);
  g_array_unref(w->members);
  g_string_free(w->env, TRUE);
  wm_at_clear(&w->clock);
  g_ptr_array_unref(w->paths);
  g_byte_array_unref(w->kinds);
  g_array_unref(w->stamps);
  for (guint32 m = 0; w->rec_blocks && m < w->n_marks; m++)
    g_free(w->rec_blocks[m]);
  g_free(w->rec_blocks);
  for (guint32 m = 0; w->dirs_blocks && m < w->n_marks; m++)
    g_free(w->dirs_blocks[m]);
  g_free(w->dirs_blocks);
  g_free(w);
}

/* Up to this many bytes are read into the heap, more into a mapping of
 * their own (read_at): a small mapping costs more to make and unmap than
 * the heap pages it saves, a large read into the heap a page fault a page
 * (docs/adr/0004-cache-file-read-cost.md). */
#define READ_INTO_HEAP_MAX (64 * 1024)

static void
release(gchar *data, gsize len)
{
  if (data == NULL)
    return;
  if (len <= READ_INTO_HEAP_MAX)
    g_free(data);
  else
    munmap(data, len);
}

void
cache_file_free(struct cache_file *c)
{
  if (c == NULL)
    return;
  release(c->index_data, c->index_data_len);
  release(c->dirs_data, c->dirs_len);
  release(c->recs_data, c->recs_len);
  release(c->base_recs_data, c->base_recs_len);
  if (c->fd >= 0)
    close(c->fd);
  if (c->base_fd >= 0)
    close(c->base_fd);
  g_free(c->path);
  g_free(c->base_path);
  g_free(c->version);
  if (c->walks)
    g_ptr_array_unref(c->walks);
  g_free(c);
}

/* The memo entry of directory entry E (r_dir()), its records read from
 * RECS; NULL if they do not parse. */
static struct memo_dir *
memo_of_entry(const struct dir_entry *e, const guint8 *recs, const guint8 *recs_end)
{
  const guint32 n = e->n;
  const guint64 off = e->off;
  if (off > (guint64)(recs_end - recs))
    return NULL;
  struct rd rr = {recs + off, recs_end, false};
  if ((size_t)(rr.end - rr.p) / REC_MIN < n)
    return NULL;
  /* First pass: the names' total length (the questions were checked by
   * r_dir()). */
  size_t names = 0;
  for (guint32 i = 0; i < n && !rr.bad; i++) {
    struct rec_entry rec;
    r_rec(&rr, &rec);
    names += rec.len;
  }
  struct rd qr = {e->asked, e->body_end, false};
  for (guint32 i = 0; i < e->n_asked; i++) {
    struct question q;
    r_question(&qr, &q);
    names += q.len;
  }
  if (rr.bad)
    return NULL;
  rr.p = recs + off;
  struct memo_dir *d = memo_dir_new(0, e->path, e->len, n + e->n_asked, names);
  char *at = memo_dir_names(d);
  for (guint32 i = 0; i < n; i++) {
    struct rec_entry rec;
    r_rec_again(&rr, &rec); /* checked in the first pass */
    memcpy(at, rec.name, rec.len);
    struct memo_rec *m = &d->recs[i];
    m->name = at;
    m->len = (uint32_t)rec.len;
    m->kind = rec.kind < MEMO_ASKED ? rec.kind : MEMO_RESULT;
    m->type = rec.type;
    m->mask = rec.mask;
    at += rec.len;
  }
  /* The questions after the records, as a walk's memo has them. */
  qr.p = e->asked;
  for (guint32 i = 0; i < e->n_asked; i++) {
    struct question q;
    r_question(&qr, &q);
    memcpy(at, q.name, q.len);
    struct memo_rec *m = &d->recs[n + i];
    m->name = at;
    m->len = (uint32_t)q.len;
    m->kind = MEMO_ASKED;
    m->type = q.type;
    m->mask = 0;
    at += q.len;
  }
  d->live = e->live;
  d->was = e->was;
  if (e->was.repo) {
    /* Its own copy: the memo may outlive the file's index. */
    d->repo_own = g_bytes_new(e->was.repo, e->was.repo_len);
    d->was.repo = g_bytes_get_data(d->repo_own, NULL);
  }
  d->way = e->flags & DIR_WAY;
  d->start = e->flags & DIR_START;
  return d;
}

/* Mark M of W's fields (format.h: mark), read where they are: fixed
 * width, so that a search over them reads only those it looks at. */
static guint64
mark_u64(const struct cached_walk *w, guint32 m, size_t field)
{
  guint64 v;
  memcpy(&v, w->marks + MARK_SIZE * (size_t)m + field, 8);
  return GUINT64_FROM_LE(v);
}

static guint64
mark_at(const struct cached_walk *w, guint32 m)
{
  return mark_u64(w, m, 0);
}

static guint64
mark_sum(const struct cached_walk *w, guint32 m)
{
  return mark_u64(w, m, 8);
}

static guint32
mark_u32(const struct cached_walk *w, guint32 m, size_t field)
{
  guint32 v;
  memcpy(&v, w->marks + MARK_SIZE * (size_t)m + field, 4);
  return GUINT32_FROM_LE(v);
}

/* The number of block M's first entry; N_DIRS past the last block. */
static guint32
mark_first(const struct cached_walk *w, guint32 m)
{
  return m >= w->n_marks ? w->n_dirs : mark_u32(w, m, 16);
}

/* Where block M's records are (format.h: WHERE), how long, their sum. */
static guint64
mark_rat(const struct cached_walk *w, guint32 m)
{
  return mark_u64(w, m, 20);
}

static guint64
mark_rlen(const struct cached_walk *w, guint32 m)
{
  return mark_u64(w, m, 28);
}

static guint64
mark_rsum(const struct cached_walk *w, guint32 m)
{
  return mark_u64(w, m, 36);
}

/* Where block M's entries are (format.h: WHERE). */
static guint64
mark_dat(const struct cached_walk *w, guint32 m)
{
  return mark_u64(w, m, 44);
}

/* Where in W's keys (format.h: keys) block M's first path starts; the
 * keys' length past the last block. */
static guint64
mark_kat(const struct cached_walk *w, guint32 m)
{
  return m >= w->n_marks ? w->keys_len : mark_u32(w, m, 52);
}

/* Block M's first path (format.h: keys), *LEN bytes, not NUL-terminated. */
static const char *
mark_key(const struct cached_walk *w, guint32 m, size_t *len)
{
  const guint64 at = mark_kat(w, m);
  *len = (size_t)(mark_kat(w, m + 1) - at);
  return w->keys + at;
}

unsigned long cache_test_blocks_read;
unsigned long cache_test_dirs_read_whole;

/* Block M of cached walk W's entries, to *END: from the region when it
 * was read whole (every block checked then), else read alone from the file
 * the first time it is wanted, checked against its sum before anything
 * reads it, and kept with W (cursors in several threads share it: the
 * first to put it there wins); its first entry checked against its key.
 * NULL if it cannot be read or does not check out (*CORRUPT set), or its
 * first entry is not its key. */
static const guint8 *
walk_block(const struct cached_walk *w, guint32 m, const guint8 **end, bool *corrupt);

/* Bytewise, a prefix first: the order of a walk's entries. */
static int
compare_paths(const char *a, size_t alen, const char *b, size_t blen)
{
  const int k = memcmp(a, b, MIN(alen, blen));
  return k ? k : (alen > blen) - (alen < blen);
}

/* Is the first entry of block M of W, at AT (to END), the path its key
 * says (it shares nothing, and is the key's bytes)? */
static bool
block_key_ok(const struct cached_walk *w, guint32 m, const guint8 *at, const guint8 *end)
{
  struct rd r = {at, end, false};
  const guint64 shared = r_var(&r), len = r_var(&r);
  size_t klen;
  const char *key = mark_key(w, m, &klen);
  const char *s = r_bytes(&r, r.bad || shared || len != klen ? 0 : (size_t)len);
  return !r.bad && shared == 0 && len == klen && memcmp(s, key, klen) == 0;
}

/* Is a block of LEN bytes at WHERE (format.h) within file C's region of
 * entries (DIRS) or of records? */
static bool
where_ok(const struct cache_file *c, guint64 where, guint64 len, bool dirs)
{
  const bool base = where & 1;
  const guint64 off = where >> 1;
  const guint64 region = base ? (dirs ? c->base_dirs_len : c->base_recs_len)
                              : (dirs ? c->own_dirs_len : c->recs_len);
  return (!base || c->has_base) && off <= region && len <= region - off;
}

/* The block entry I is in (below w->n_dirs): a binary search over the
 * marks' first entries. */
static guint32
block_of(const struct cached_walk *w, guint32 i)
{
  guint32 lo = 0, hi = w->n_marks; /* the block is below HI, and LO or after */
  while (hi - lo > 1) {
    const guint32 mid = lo + (hi - lo) / 2;
    if (mark_first(w, mid) <= i)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* Cached walk W's marks and the entries watchman never vouches for
 * (format.h: marks, must), checked: a mark out of order, outside the walk's
 * entries or the file's RECS_LEN bytes of records, a block of no entry or
 * of more than EVERY, or a number past the last entry, is a walk that does
 * not parse. The marks are read again where they are (fixed width: a
 * binary search); their sums when their blocks are read; the numbers, few,
 * in order. */
static void
read_marks(struct rd *r, struct cached_walk *w, const struct cache_file *c)
{
  w->mark_every = (guint32)r_le(r, 4);
  if (w->mark_every == 0)
    r->bad = true;
  const guint32 n_marks = r_count(r, MARK_SIZE);
  if (!r->bad && (n_marks == 0) != (w->n_dirs == 0))
    r->bad = true;
  w->marks = r->p;
  w->n_marks = r->bad ? 0 : n_marks;
  for (guint32 m = 0; m < w->n_marks && !r->bad; m++) {
    const guint64 off = mark_at(w, m), rat = mark_rat(w, m), rlen = mark_rlen(w, m);
    const guint32 first = mark_first(w, m), next = mark_first(w, m + 1);
    if (off >= w->dirs_bytes || (m == 0 ? off != 0 : off <= mark_at(w, m - 1)) ||
        (m == 0 && first != 0) || next <= first || next - first > w->mark_every ||
        !where_ok(c, rat, rlen, false))
      r->bad = true;
    else if (!where_ok(c, mark_dat(w, m),
                       (m + 1 < w->n_marks && mark_at(w, m + 1) > off ? mark_at(w, m + 1)
                                                                       : w->dirs_bytes) - off,
                       true))
      r->bad = true;
  }
  if (!r->bad)
    r->p += MARK_SIZE * (size_t)n_marks;
  /* The blocks' first paths: in path order, none with a NUL (one look
   * over them all). */
  size_t keys_len;
  w->keys = r_str(r, &keys_len);
  w->keys_len = keys_len;
  if ((w->n_marks == 0 && keys_len) || memchr(w->keys, '\0', keys_len))
    r->bad = true;
  const char *before = NULL;
  size_t before_len = 0;
  for (guint32 m = 0; m < w->n_marks && !r->bad; m++) {
    const guint64 at = mark_kat(w, m), to = mark_kat(w, m + 1);
    if ((m == 0 && at != 0) || to < at || to > w->keys_len) {
      r->bad = true;
      break;
    }
    size_t len;
    const char *key = mark_key(w, m, &len);
    if (before && compare_paths(before, before_len, key, len) >= 0)
      r->bad = true;
    before = key;
    before_len = len;
  }
  if (r->bad)
    w->n_marks = 0;
  else
    w->dirs_blocks = g_new0(guint8 *, w->n_marks);
  w->n_must = r_count(r, 1);
  w->must_at = r->p;
  guint64 at = 0;
  for (guint32 k = 0; k < w->n_must && !r->bad; k++) {
    const guint64 gap = r_var(r);
    if (gap >= w->n_dirs || (k > 0 && gap >= w->n_dirs - at - 1))
      r->bad = true;
    at = k ? at + gap + 1 : gap;
  }
  w->must_end = r->p;
}

/* The next walk at R, its entries the next of the DIRS_LEN bytes of them
 * after *USED bytes (*USED then past them); its blocks in file C's regions
 * (or its base's). */
static struct cached_walk *
read_walk(struct rd *r, guint64 *used, guint64 dirs_len, const struct cache_file *c)
{
  struct cached_walk *w = g_new0(struct cached_walk, 1);
  size_t len;
  const char *root = r_str(r, &len);
  w->root = g_strndup(root, len);
  w->dev = r_le(r, 8);
  w->ino = r_le(r, 8);
  const guint8 wflags = (guint8)r_le(r, 1);
  w->problems = (wflags & WALK_PROBLEMS) != 0;
  w->members = g_array_new(FALSE, FALSE, sizeof(guint64));
  guint32 n = r_count(r, 8);
  for (guint32 i = 0; i < n; i++) {
    guint64 m = r_le(r, 8);
    g_array_append_val(w->members, m);
  }
  const char *env = r_str(r, &len);
  w->env = g_string_new_len(env, (gssize)len);
  /* Watchman's clock, taken before the walk read anything (an empty
   * watch: none). A field holding a NUL is no clock (the walk never writes
   * one). */
  size_t wlen, rlen, clen;
  w->clock_at = r->p;
  const char *watch = r_str(r, &wlen);
  const char *rel = r_str(r, &rlen);
  const char *clock = r_str(r, &clen);
  w->clock.recrawls = r_var(r);
  /* The watch's cookie directory, its inode 0 when unknown. */
  size_t klen;
  const char *cookies = r_str(r, &klen);
  w->clock.cookies_dev = r_var(r);
  w->clock.cookies_ino = r_var(r);
  w->clock_end = r->p;
  if (!r->bad && wlen && clen && !memchr(watch, '\0', wlen) && !memchr(rel, '\0', rlen) &&
      !memchr(clock, '\0', clen)) {
    w->clock.watch = g_strndup(watch, wlen);
    w->clock.rel = g_strndup(rel, rlen);
    w->clock.clock = g_strndup(clock, clen);
    if (w->clock.cookies_ino && !memchr(cookies, '\0', klen))
      w->clock.cookies = g_strndup(cookies, klen);
  }
  w->paths = g_ptr_array_new_with_free_func(g_free);
  w->kinds = g_byte_array_new();
  w->stamps = g_array_new(FALSE, FALSE, sizeof(struct stamp));
  n = r_count(r, 4 + 1 + 1);
  for (guint32 i = 0; i < n && !r->bad; i++) {
    const char *p = r_str(r, &len);
    g_ptr_array_add(w->paths, g_strndup(p, len));
    w_u8(w->kinds, (guint8)r_le(r, 1));
    struct stamp st;
    r_stamp(r, &st, w->dev);
    g_array_append_val(w->stamps, st);
  }
  /* Its entries, in the region after the walks' before it: each at least
   * DIR_INDEX_MIN bytes, and none without a block (its sum) covering it. */
  w->n_dirs = (guint32)r_le(r, 4);
  w->dirs_bytes = r_le(r, 8);
  w->dirs_off = *used;
  if (!r->bad && (w->dirs_bytes > dirs_len - *used || w->dirs_bytes / DIR_INDEX_MIN < w->n_dirs ||
                  (w->n_dirs == 0) != (w->dirs_bytes == 0)))
    r->bad = true;
  if (!r->bad)
    *used += w->dirs_bytes;
  read_marks(r, w, c);
  return w;
}

/* LEN bytes of file FD from offset AT into BUF; false with errno set (0:
 * the file is shorter than that). */
static bool
pread_all(int fd, void *buf, gsize len, guint64 at)
{
  size_t got = 0;
  while (got < len) {
    ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)(at + got));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      errno = n < 0 ? errno : 0;
      return false;
    }
    got += (size_t)n;
  }
  return true;
}

/* LEN bytes (at least one) to free with release(): in the heap when they
 * are few, else in memory mapped with MAP_POPULATE. NULL if there is no
 * memory for them. */
static gchar *
buf_new(gsize len)
{
  if (len <= READ_INTO_HEAP_MAX)
    return g_malloc(len);
  void *buf =
      mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  return buf == MAP_FAILED ? NULL : buf;
}

/* LEN bytes (at least one) of file FD from offset AT, to free with
 * release(): in the heap when they are few, else in memory mapped with
 * MAP_POPULATE, where one system call makes the pages rather than a page
 * fault each. Read, not mapped from the file: a file truncated by someone
 * else meanwhile is then short data, not SIGBUS. NULL with errno set (0:
 * the file is shorter than that). */
static gchar *
read_at(int fd, guint64 at, gsize len)
{
  gchar *buf = buf_new(len);
  if (buf == NULL)
    return NULL;
  if (!pread_all(fd, buf, len, at)) {
    const int err = errno;
    release(buf, len);
    errno = err;
    return NULL;
  }
  return buf;
}

/* Close C's file once nothing more is to be read from it: its records and
 * its directory entries read whole. (Until then it stays open: a reader
 * reads the file it opened, whichever file a writer renames over it.) */
static void
file_done(struct cache_file *c)
{
  if (c->fd >= 0 && c->records_loaded && c->dirs_checked)
    cache_file_close(c);
}

/* The file at PATH if it is still the one that was DEV, INO and SIZE
 * bytes, opened (to close); else -1 with errno set (ESTALE: another file
 * took its place). */
static int
open_again(const char *path, guint64 dev, guint64 ino, guint64 size)
{
  int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) : -1;
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (guint64)st.st_dev != dev ||
                  (guint64)st.st_ino != ino || (guint64)st.st_size != size)) {
    close(fd);
    fd = -1;
    errno = ESTALE;
  }
  return fd;
}

/* The descriptor of C (BASE false) or of its base, or that file opened
 * again (*OPENED set: to close). */
static int
file_fd(const struct cache_file *c, bool base, bool *opened)
{
  const int fd = base ? c->base_fd : c->fd;
  *opened = fd < 0;
  if (fd >= 0)
    return fd;
  return base ? open_again(c->base_path, c->base_dev, c->base_ino, c->base_size)
              : open_again(c->path, c->dev, c->ino, c->size);
}

/* Where in its file (C's, or its base's: WHERE bit 0) the bytes at WHERE
 * (format.h) of the region of entries (DIRS) or of records are. */
static guint64
where_at(const struct cache_file *c, guint64 where, bool dirs)
{
  return ((where & 1) ? (dirs ? c->base_dirs_at : c->base_recs_at)
                      : (dirs ? c->dirs_at : c->recs_at)) + (where >> 1);
}

/* LEN bytes of C's region (or its base's, WHERE bit 0) of entries (DIRS)
 * or of records at WHERE (format.h) into BUF; false if they cannot be
 * read. */
static bool
read_where(const struct cache_file *c, guint64 where, bool dirs, void *buf, gsize len)
{
  bool opened;
  const int fd = file_fd(c, where & 1, &opened);
  const bool ok = fd >= 0 && pread_all(fd, buf, len, where_at(c, where, dirs));
  if (opened && fd >= 0)
    close(fd);
  return ok;
}

void
cache_file_close(struct cache_file *c)
{
  if (c && c->fd >= 0) {
    close(c->fd);
    c->fd = -1;
  }
  if (c && c->base_fd >= 0) {
    close(c->base_fd);
    c->base_fd = -1;
  }
}

/* LEN bytes (at least one) at AT of cache file C (BASE: of its base), read
 * whole (read_at()); NULL if they cannot be read. */
static gchar *
read_region(const struct cache_file *c, bool base, guint64 at, gsize len)
{
  bool opened;
  const int fd = file_fd(c, base, &opened);
  gchar *data = fd >= 0 ? read_at(fd, at, len) : NULL;
  if (opened && fd >= 0)
    close(fd);
  return data;
}

/* Read cache file C's records whole, unchecked (once): c->recs, NULL if
 * they cannot be read. What a writer that copies blocks unparsed reads
 * them through (their sums go with them). */
static void
records_load(struct cache_file *c)
{
  static const guint8 none[1];
  if (c->records_loaded)
    return;
  c->records_loaded = true;
  if (c->recs_len == 0) {
    c->recs = c->recs_end = none;
  } else {
    c->recs_data = read_region(c, false, c->recs_at, c->recs_len);
    c->recs = (const guint8 *)c->recs_data;
    c->recs_end = c->recs ? c->recs + c->recs_len : NULL;
  }
  /* The base's too: a block's records may be in either (mark_recs()). */
  if (c->has_base && c->recs) {
    c->base_recs_data =
        c->base_recs_len ? read_region(c, true, c->base_recs_at, c->base_recs_len) : NULL;
    c->base_recs = c->base_recs_len ? (const guint8 *)c->base_recs_data : none;
    if (c->base_recs == NULL)
      c->recs = c->recs_end = NULL;
  }
  file_done(c);
}

/* Where block M of W's records are, its file's records (and its base's)
 * read whole (records_load()). */
static const guint8 *
mark_recs(const struct cached_walk *w, guint32 m)
{
  const struct cache_file *c = w->file;
  const guint64 where = mark_rat(w, m);
  return ((where & 1) ? c->base_recs : c->recs) + (where >> 1);
}

/* Does block M of W have its records, read whole (records_load()), as its
 * mark's sum says? */
static bool
block_records_ok(const struct cached_walk *w, guint32 m)
{
  return checksum(mark_recs(w, m), (gsize)mark_rlen(w, m)) == mark_rsum(w, m);
}

/* Read cache file C's records whole and check every block of every walk
 * against its sum (once; the file is closed when its directory entries are
 * read too). */
unsigned long cache_test_records_read;

void
records_read(struct cache_file *c)
{
  if (c->records_checked)
    return;
  __atomic_fetch_add(&cache_test_records_read, 1, __ATOMIC_RELAXED);
  records_load(c);
  c->records_checked = true;
  bool ok = c->recs != NULL;
  for (guint i = 0; ok && i < c->walks->len; i++) {
    const struct cached_walk *w = c->walks->pdata[i];
    for (guint32 m = 0; ok && m < w->n_marks; m++)
      ok = block_records_ok(w, m);
  }
  c->records_ok = ok;
}

/* Block M of W's records, checked against its sum, into [*AT, *END): from
 * the file's records when they were read whole, else read alone (and kept
 * with W: W's file then stays open until freed). False if they cannot be
 * read or do not check out. Not for two threads at once. */
static bool
block_records(const struct cached_walk *w, guint32 m, const guint8 **at, const guint8 **end)
{
  struct cache_file *c = w->file;
  const gsize len = (gsize)mark_rlen(w, m);
  if (c->records_checked) {
    if (!c->records_ok)
      return false;
    *at = mark_recs(w, m);
  } else if (c->records_loaded) {
    if (c->recs == NULL || !block_records_ok(w, m))
      return false;
    *at = mark_recs(w, m);
  } else {
    struct cached_walk *ww = (struct cached_walk *)w; /* its own cache of blocks read */
    if (ww->rec_blocks == NULL)
      ww->rec_blocks = g_new0(gchar *, w->n_marks);
    if (ww->rec_blocks[m] == NULL) {
      gchar *b = g_malloc(len + 1);
      const bool read = read_where(c, mark_rat(w, m), false, b, len);
      if (!read || checksum((const guint8 *)b, len) != mark_rsum(w, m)) {
        g_free(b);
        return false;
      }
      ww->rec_blocks[m] = b;
    }
    *at = (const guint8 *)ww->rec_blocks[m];
  }
  *end = *at + len;
  return true;
}

/* Where block M of W ends in W's entries: at the next mark, or at their
 * end. */
static guint64
block_end(const struct cached_walk *w, guint32 m)
{
  return m + 1 < w->n_marks ? mark_at(w, m + 1) : w->dirs_bytes;
}

/* Does block M of W, at DATA (W's entries), check out against its sum? */
static bool
block_ok(const struct cached_walk *w, guint32 m, const guint8 *data)
{
  const guint64 from = mark_at(w, m);
  return checksum(data + from, (gsize)(block_end(w, m) - from)) == mark_sum(w, m);
}

/* The walks' directory entries of cache file C, each block from where
 * its mark says (its file's region, or its base's), in the order the marks
 * place them: a run of blocks that follow each other in their file in one
 * read (a whole file's: one per walk). NULL if they cannot be read. */
static gchar *
dirs_gather(const struct cache_file *c)
{
  /* Each file opened (again) once for every run of blocks. */
  bool opened[2] = {false, false};
  int fd[2] = {-1, -1};
  fd[0] = file_fd(c, false, &opened[0]);
  if (c->has_base)
    fd[1] = file_fd(c, true, &opened[1]);
  gchar *buf = fd[0] >= 0 && (!c->has_base || fd[1] >= 0) ? buf_new(c->dirs_len) : NULL;
  bool ok = buf != NULL;
  for (guint i = 0; ok && i < c->walks->len; i++) {
    const struct cached_walk *w = c->walks->pdata[i];
    guint32 m = 0;
    while (ok && m < w->n_marks) {
      const guint64 from = mark_at(w, m), where = mark_dat(w, m);
      guint32 k = m + 1;
      while (k < w->n_marks && mark_dat(w, k) == where + ((mark_at(w, k) - from) << 1))
        k++;
      const guint64 to = k < w->n_marks ? mark_at(w, k) : w->dirs_bytes;
      ok = pread_all(fd[where & 1], buf + w->dirs_off + from, (gsize)(to - from),
                     where_at(c, where, true));
      m = k;
    }
  }
  for (int k = 0; k < 2; k++)
    if (opened[k] && fd[k] >= 0)
      close(fd[k]);
  if (!ok && buf) {
    release(buf, c->dirs_len);
    buf = NULL;
  }
  return buf;
}

/* Read cache file C's directory entries whole and check every block of
 * every walk against its sum (once; the blocks cover the walks' entries:
 * read_walk()). */
static void
dirs_read(struct cache_file *c)
{
  static const guint8 none[1];
  c->dirs_checked = true;
  if (c->dirs_len == 0) {
    c->dirs = none;
  } else {
    c->dirs_data = dirs_gather(c);
    c->dirs = (const guint8 *)c->dirs_data;
  }
  __atomic_fetch_add(&cache_test_dirs_read_whole, 1, __ATOMIC_RELAXED);
  bool sums = c->dirs != NULL, keys = true;
  for (guint i = 0; sums && keys && i < c->walks->len; i++) {
    const struct cached_walk *w = c->walks->pdata[i];
    const guint8 *at = c->dirs + w->dirs_off;
    /* (Not again the blocks a cursor read from the same file and
     * checked: a cache file is never written in place.) Each block's
     * first entry its key, as a cursor reading it alone checks. */
    for (guint32 m = 0; sums && keys && m < w->n_marks; m++) {
      sums = (w->dirs_blocks && __atomic_load_n(&w->dirs_blocks[m], __ATOMIC_ACQUIRE)) ||
             block_ok(w, m, at);
      keys = block_key_ok(w, m, at + mark_at(w, m), at + block_end(w, m));
    }
  }
  c->dirs_sums_ok = sums;
  c->dirs_ok = sums && keys;
  file_done(c);
}

bool
cached_walk_dirs(const struct cached_walk *w, const guint8 **at, const guint8 **end)
{
  struct cache_file *c = w->file;
  if (!c->dirs_checked)
    dirs_read(c);
  if (!c->dirs_ok) {
    *at = *end = NULL;
    return false;
  }
  *at = c->dirs + w->dirs_off;
  *end = *at + w->dirs_bytes;
  return true;
}

/* The memo of cached walk W, parsed now; NULL if the records do not check
 * out (their checksum is verified the first time). */
struct walk_memo *
cached_memo(const struct cached_walk *w)
{
  struct cache_file *c = w->file;
  if (!c->records_checked)
    records_read(c);
  struct rd r;
  if (!c->records_ok || !cached_walk_dirs(w, &r.p, &r.end))
    return NULL;
  r.bad = false;
  struct walk_memo *m = walk_memo_new();
  GString *path = g_string_new(NULL);
  guint32 b = 0; /* the block entry I is in: its records are where its mark says */
  for (guint32 i = 0; i < w->n_dirs && !r.bad; i++) {
    if (i == mark_first(w, b + 1))
      b++;
    struct dir_entry e;
    r_dir(&r, &e, w->dev, path);
    const guint8 *recs = mark_recs(w, b);
    struct memo_dir *d = r.bad ? NULL : memo_of_entry(&e, recs, recs + mark_rlen(w, b));
    if (d == NULL)
      r.bad = true;
    else {
      walk_memo_add(m, d);
      memo_dir_unref(d);
    }
  }
  g_string_free(path, TRUE);
  if (r.bad || r.p != r.end) {
    walk_memo_free(m);
    return NULL;
  }
  return m;
}

static int
compare_strs(gconstpointer a, gconstpointer b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

struct walk_memo *
cached_memo_part(const struct cached_walk *w, GHashTable *hot)
{
  struct walk_memo *m = walk_memo_new();
  struct dir_cursor cur;
  dir_cursor_init(&cur, w);
  bool ok = true;
  /* In path order: the cursor goes on through a block rather than search
   * it again (dir_cursor_find()). */
  GPtrArray *keys = g_ptr_array_sized_new(g_hash_table_size(hot));
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, hot);
  while (g_hash_table_iter_next(&it, &key, NULL))
    g_ptr_array_add(keys, key);
  g_ptr_array_sort(keys, compare_strs);
  for (guint k = 0; ok && k < keys->len; k++) {
    const char *path = keys->pdata[k];
    struct dir_entry e;
    guint32 i;
    if (!dir_cursor_find(&cur, path, strlen(path), &i, &e)) {
      ok = !cur.bad; /* none: a name of a file, or of a new directory */
      continue;
    }
    const guint8 *at, *end;
    struct memo_dir *d = block_records(w, block_of(w, i), &at, &end) ? memo_of_entry(&e, at, end)
                                                                      : NULL;
    if (d == NULL) {
      ok = false;
    } else {
      walk_memo_add(m, d);
      memo_dir_unref(d);
    }
  }
  g_ptr_array_unref(keys);
  dir_cursor_clear(&cur);
  if (!ok) {
    walk_memo_free(m);
    return NULL;
  }
  return m;
}

/* Is PATH one of the directories a walk left unentered (TOPS, *TOP set),
 * or below one (PREFIXES: theirs with '/')? Asked in path order: *T_IS and
 * *T_BELOW go on from where the last path left them. */
static bool
kept_path(const char *path, const GPtrArray *tops, const GPtrArray *prefixes, guint *t_is,
          guint *t_below, bool *top)
{
  while (*t_is < tops->len && strcmp(tops->pdata[*t_is], path) < 0)
    (*t_is)++;
  while (*t_below < prefixes->len && strcmp(prefixes->pdata[*t_below], path) < 0 &&
         !g_str_has_prefix(path, prefixes->pdata[*t_below]))
    (*t_below)++;
  *top = *t_is < tops->len && strcmp(tops->pdata[*t_is], path) == 0;
  return *top ||
         (*t_below < prefixes->len && g_str_has_prefix(path, prefixes->pdata[*t_below]));
}

/* Is every one of the N entries at AT (to END) kept (kept_path(), which
 * the pointers go on with: the caller restores them if not), and how many
 * of them are tops (*N_TOPS)? False too if they do not parse: the parse
 * says so. */
static bool
block_all_kept(const guint8 *at, const guint8 *end, guint32 n, const GPtrArray *tops,
               const GPtrArray *prefixes, guint *t_is, guint *t_below, guint *n_tops,
               GString *path)
{
  struct rd r = {at, end, false};
  g_string_truncate(path, 0);
  *n_tops = 0;
  size_t below = 0; /* the last entry was below a top: its prefix's length */
  size_t last = 0;  /* the last entry's length (PATH holds its first BELOW bytes, or all) */
  for (guint32 i = 0; i < n; i++) {
    struct dir_entry e;
    bool top;
    const guint64 shared = r_var(&r), len = r_var(&r);
    const char *rest = r_bytes(&r, (!r.bad && shared <= last) ? (size_t)len : 0);
    if (r.bad || shared > last || memchr(rest, '\0', (size_t)len))
      return false;
    last = (size_t)(shared + len);
    r_dir_rest(&r, &e);
    if (r.bad)
      return false;
    /* Most are below the top the entry before them was below: they
     * share its prefix with it (a block's first shares nothing), and
     * their paths need not be put together. */
    if (below && shared >= below)
      continue;
    /* (Its order checked as r_dir() does, with what PATH holds: the first
     * BELOW bytes of the last entry, or all of it.) */
    if (!path_after(path, shared, rest, len))
      return false;
    g_string_truncate(path, (gsize)shared);
    g_string_append_len(path, rest, (gssize)len);
    if (!kept_path(path->str, tops, prefixes, t_is, t_below, &top))
      return false;
    *n_tops += top;
    below = top ? 0 : strlen(prefixes->pdata[*t_below]);
  }
  return r.p == end;
}

/* Memo entries (struct memo_dir *) in path order. */
static int
compare_dirs(gconstpointer a, gconstpointer b)
{
  const struct memo_dir *x = *(const struct memo_dir *const *)a;
  const struct memo_dir *y = *(const struct memo_dir *const *)b;
  return compare_paths(x->path, x->len, y->path, y->len);
}

/* Does the walk hold a directory (WALKED, its memo's in path order) from
 * KEY on, and before NEXT (NULL: to the end)? Asked in path order: *AT
 * goes on past those before KEY. */
static bool
walked_within(const GPtrArray *walked, guint *at, const GString *key, const GString *next)
{
  while (*at < walked->len) {
    const struct memo_dir *d = walked->pdata[*at];
    if (compare_paths(d->path, d->len, key->str, key->len) >= 0)
      break;
    (*at)++;
  }
  if (*at == walked->len)
    return false;
  const struct memo_dir *d = walked->pdata[*at];
  return next == NULL || compare_paths(d->path, d->len, next->str, next->len) < 0;
}

unsigned long cache_test_split_blocks[3];

/* Block M of cached walk W's entries into [*AT, *END), for a split
 * (walk_block()), *SINGLES counting those read alone. When those come to a
 * quarter of the blocks, the region is read whole: one read then costs
 * less than the rest one at a time. False if it cannot be read or does not
 * check out. */
static bool
split_block(const struct cached_walk *w, guint32 m, guint32 *singles, const guint8 **at,
            const guint8 **end)
{
  struct cache_file *c = w->file;
  if (!c->dirs_checked && *singles >= w->n_marks / 4 + 1) {
    const guint8 *all, *all_end;
    if (!cached_walk_dirs(w, &all, &all_end))
      return false;
  }
  *singles += !c->dirs_checked;
  bool corrupt;
  *at = walk_block(w, m, end, &corrupt);
  return *at != NULL;
}

bool
cached_walk_split(const struct cached_walk *w, const struct walk_memo *now,
                  const struct walk_memo *prev, struct split *out,
                  void (*fn)(const struct memo_dir *now, const struct memo_dir *was, void *data),
                  void *data)
{
  struct cache_file *c = w->file;
  out->kept = g_array_new(FALSE, FALSE, sizeof(struct kept_entry));
  out->musts = g_array_new(FALSE, FALSE, sizeof(guint32));
  out->entries = 0;
  out->file = c;
  /* A block kept whole by its key and the next block's (format.h: keys)
   * is not read: neither its entries nor its records (the writer copies
   * them, with their sums, or leaves them where they are: split_fill()).
   * The others are read and checked (split_block()), their records too
   * when they are parsed. */
  guint32 singles = 0;
  /* An entry is kept when it is a top, or below one. The tops in path
   * order, and apart from them their prefixes ("top/") in path order: the
   * paths below a top are together in path order, those below different
   * tops apart, so one pass over each list finds them. The two orders
   * differ ("a" < "a.b" < "a.b/" < "a/": the entries below "a" come after
   * those of "a.b"). (The tops are borrowed: not g_ptr_array_copy(), which
   * would free them too.) */
  GPtrArray *tops = g_ptr_array_sized_new(now->tops->len);
  GPtrArray *prefixes = g_ptr_array_new_with_free_func(g_free);
  for (guint k = 0; k < now->tops->len; k++) {
    g_ptr_array_add(tops, now->tops->pdata[k]);
    g_ptr_array_add(prefixes, g_strconcat(now->tops->pdata[k], "/", NULL));
  }
  g_ptr_array_sort(tops, compare_strs);
  g_ptr_array_sort(prefixes, compare_strs);
  guint t_is = 0, t_below = 0, tops_found = 0;
  GString *path = g_string_new(NULL), *key = g_string_new(NULL), *next_key = g_string_new(NULL);
  GPtrArray *walked = NULL; /* the directories NOW holds, in path order (when asked) */
  guint w_at = 0;
  /* The must list, read along (numbers ascending): for the blocks kept
   * whole, which are not parsed. */
  struct rd must = {w->must_at, w->must_end, false};
  guint32 musts = 0, next_must = G_MAXUINT32;
  if (w->n_must > 0) {
    next_must = (guint32)r_var(&must);
    musts = 1;
  }
  bool ok = true;
  for (guint32 b = 0; b < w->n_marks && ok; b++) {
    const guint32 first = mark_first(w, b), next = mark_first(w, b + 1);
    const guint64 rlen = mark_rlen(w, b);
    const guint8 *at = NULL, *end = NULL; /* its entries, once read */
    /* Kept whole: its first entry and the next block's both below one
     * top, so every entry between them is (a prefix's paths are together
     * in path order), and none the walk entered is among them. (The last
     * block is not.) The keys say so: the block is not read. */
    bool whole = false;
    const bool last_block = b + 1 == w->n_marks;
    size_t klen;
    const char *kp = mark_key(w, b, &klen);
    g_string_truncate(key, 0);
    g_string_append_len(key, kp, (gssize)klen);
    if (!last_block) {
      kp = mark_key(w, b + 1, &klen);
      g_string_truncate(next_key, 0);
      g_string_append_len(next_key, kp, (gssize)klen);
      while (t_below < prefixes->len && strcmp(prefixes->pdata[t_below], key->str) < 0 &&
             !g_str_has_prefix(key->str, prefixes->pdata[t_below]))
        t_below++;
      whole = t_below < prefixes->len && g_str_has_prefix(key->str, prefixes->pdata[t_below]) &&
              g_str_has_prefix(next_key->str, prefixes->pdata[t_below]);
    }
    /* Or kept whole because every entry in it is kept (a top, or below
     * one), read for their paths alone, and no directory the walk holds
     * goes between them: the blocks where one top's entries end and the
     * next one's begin, which would be written again. */
    if (whole) {
      __atomic_fetch_add(&cache_test_split_blocks[0], 1, __ATOMIC_RELAXED);
    } else if (tops->len) {
      if (walked == NULL) {
        walked = g_ptr_array_sized_new(g_hash_table_size(now->dirs));
        GHashTableIter it;
        gpointer d;
        g_hash_table_iter_init(&it, now->dirs);
        while (g_hash_table_iter_next(&it, NULL, &d))
          g_ptr_array_add(walked, d);
        g_ptr_array_sort(walked, compare_dirs);
      }
      if (!walked_within(walked, &w_at, key, last_block ? NULL : next_key)) {
        if (!split_block(w, b, &singles, &at, &end)) {
          ok = false;
          break;
        }
        const guint was_is = t_is, was_below = t_below;
        guint n_tops = 0;
        whole = block_all_kept(at, end, next - first, tops, prefixes, &t_is, &t_below, &n_tops,
                               path);
        if (whole) {
          tops_found += n_tops;
          __atomic_fetch_add(&cache_test_split_blocks[1], 1, __ATOMIC_RELAXED);
        } else {
          t_is = was_is;
          t_below = was_below;
        }
      }
    }
    if (whole) {
      const guint32 from = out->musts->len;
      while (next_must < next) {
        if (next_must >= first) {
          const guint32 rel = next_must - first;
          g_array_append_val(out->musts, rel);
        }
        next_must = musts < w->n_must ? next_must + (guint32)r_var(&must) + 1 : G_MAXUINT32;
        musts++;
      }
      /* Its entries where they are when they were read (else read when
       * they are copied: split_fill()), its records from the file when
       * they were not read whole. */
      const guint64 rat = mark_rat(w, b);
      if (at == NULL && c->dirs_checked && c->dirs_ok)
        at = c->dirs + w->dirs_off + mark_at(w, b);
      else if (at == NULL)
        at = __atomic_load_n(&w->dirs_blocks[b], __ATOMIC_ACQUIRE);
      struct kept_entry k = {arena_copy(&out->arena, key->str, key->len), key->len, at,
                             (size_t)(block_end(w, b) - mark_at(w, b)), 0,
                             c->records_loaded && c->recs ? mark_recs(w, b) : NULL, rlen,
                             ((rat & 1) ? c->base_recs_at : c->recs_at) + (rat >> 1), false,
                             next - first, mark_sum(w, b), mark_rsum(w, b), from,
                             out->musts->len - from, mark_dat(w, b), rat};
      g_array_append_val(out->kept, k);
      out->entries += next - first;
      continue;
    }
    if (at == NULL && !split_block(w, b, &singles, &at, &end)) {
      ok = false;
      break;
    }
    /* Parsed: its records read and checked first. */
    __atomic_fetch_add(&cache_test_split_blocks[2], 1, __ATOMIC_RELAXED);
    const guint8 *recs, *recs_end;
    if (!block_records(w, b, &recs, &recs_end)) {
      ok = false;
      break;
    }
    struct rd r = {at, end, false};
    g_string_truncate(path, 0);
    gint last = -1; /* the kept entry whose records end where the next entry's start */
    for (guint32 i = first; i < next && ok; i++) {
      struct dir_entry e;
      r_dir(&r, &e, w->dev, path);
      if (r.bad || e.off > rlen) {
        ok = false;
        break;
      }
      if (last >= 0) {
        struct kept_entry *k = &g_array_index(out->kept, struct kept_entry, last);
        if (recs + e.off < k->recs) {
          ok = false;
          break;
        }
        k->recs_len = (guint64)(recs + e.off - k->recs);
        last = -1;
      }
      bool top;
      const bool kept = kept_path(e.path, tops, prefixes, &t_is, &t_below, &top);
      tops_found += top;
      if (kept) {
        struct kept_entry k = {arena_copy(&out->arena, e.path, e.len), e.len, e.body,
                               (size_t)(e.body_end - e.body), e.n, recs + e.off, 0, 0,
                               !watchman_may_vouch(&e.was, e.path, e.len,
                                                   (e.flags & (DIR_START | DIR_WAY)) != 0),
                               0, 0, 0, 0, 0, 0, 0};
        g_array_append_val(out->kept, k);
        out->entries++;
        last = (gint)out->kept->len - 1;
        continue;
      }
      if (walk_memo_lookup(prev, 0, e.path, e.len))
        continue;
      /* Not left unentered, and not in PREV: walked without it (read
       * again below rules that changed), or gone (or no longer entered). */
      struct memo_dir *d = memo_of_entry(&e, recs, recs + rlen);
      if (d == NULL) {
        ok = false;
        break;
      }
      fn(walk_memo_lookup(now, 0, e.path, e.len), d, data);
      memo_dir_unref(d);
    }
    /* The block's last entry kept: its records end the block's. */
    if (ok && last >= 0) {
      struct kept_entry *k = &g_array_index(out->kept, struct kept_entry, last);
      k->recs_len = (guint64)(recs + rlen - k->recs);
    }
    ok = ok && r.p == end;
    while (next_must < next) {
      next_must = musts < w->n_must ? next_must + (guint32)r_var(&must) + 1 : G_MAXUINT32;
      musts++;
    }
  }
  g_string_free(path, TRUE);
  g_string_free(key, TRUE);
  g_string_free(next_key, TRUE);
  /* Every directory left unentered is in the record (the walk made sure:
   * memo_partial.recorded): else the record and its entries disagree. */
  ok = ok && !must.bad && tops_found == tops->len;
  if (walked)
    g_ptr_array_unref(walked);
  g_ptr_array_unref(tops);
  g_ptr_array_unref(prefixes);
  return ok;
}

void
split_clear(struct split *s)
{
  s->file = NULL;
  if (s->kept)
    g_array_unref(s->kept);
  s->kept = NULL;
  if (s->musts)
    g_array_unref(s->musts);
  s->musts = NULL;
  arena_clear(&s->arena);
}

/* ---- reading entries from the marks, a block at a time ---- */

unsigned long cache_test_dirs_decoded;

void
dir_cursor_init(struct dir_cursor *c, const struct cached_walk *w)
{
  *c = (struct dir_cursor){.w = w, .block = G_MAXUINT32, .path = g_string_new(NULL)};
}

void
dir_cursor_clear(struct dir_cursor *c)
{
  g_string_free(c->path, TRUE);
  c->path = NULL;
}

static const guint8 *
walk_block(const struct cached_walk *w, guint32 m, const guint8 **end, bool *corrupt)
{
  struct cache_file *f = w->file;
  const guint64 from = mark_at(w, m), len = block_end(w, m) - from;
  const guint8 *at;
  *corrupt = false;
  if (f->dirs_checked) {
    *corrupt = !f->dirs_sums_ok;
    if (!f->dirs_ok)
      return NULL;
    at = f->dirs + w->dirs_off + from;
  } else {
    at = __atomic_load_n(&w->dirs_blocks[m], __ATOMIC_ACQUIRE);
    if (at == NULL) {
      guint8 *b = g_malloc((gsize)len);
      __atomic_fetch_add(&cache_test_blocks_read, 1, __ATOMIC_RELAXED);
      if (!read_where(f, mark_dat(w, m), true, b, (gsize)len) ||
          checksum(b, (gsize)len) != mark_sum(w, m)) {
        g_free(b);
        *corrupt = true;
        return NULL;
      }
      guint8 *was = NULL;
      if (__atomic_compare_exchange_n(&w->dirs_blocks[m], &was, b, false, __ATOMIC_ACQ_REL,
                                      __ATOMIC_ACQUIRE)) {
        at = b;
      } else {
        g_free(b);
        at = was;
      }
    }
  }
  *end = at + len;
  return block_key_ok(w, m, at, *end) ? at : NULL;
}

/* C at the start of block M (its first entry: walk_block()). False (C bad;
 * corrupt too if the block cannot be read or does not check out) if it is
 * not to be read. */
static bool
cursor_block(struct dir_cursor *c, guint32 m)
{
  g_string_truncate(c->path, 0); /* so an entry there that shares anything is bad */
  bool corrupt;
  const guint8 *end, *at = walk_block(c->w, m, &end, &corrupt);
  if (at == NULL) {
    c->bad = true;
    c->corrupt = corrupt;
    c->block = G_MAXUINT32;
    c->start = c->p = c->end = NULL;
    return false;
  }
  c->block = m;
  c->next = mark_first(c->w, m);
  c->start = c->p = at;
  c->end = end;
  return true;
}

/* C at the start of entry I: from where it is, if I is ahead of it in the
 * same block, else from the start of I's block (read again only if C holds
 * another). */
static void
cursor_seek(struct dir_cursor *c, guint32 i)
{
  const struct cached_walk *w = c->w;
  if (c->bad)
    return;
  if (c->block == G_MAXUINT32 || i < mark_first(w, c->block) || i >= mark_first(w, c->block + 1)) {
    if (!cursor_block(c, block_of(w, i)))
      return;
  } else if (i < c->next) {
    c->p = c->start;
    c->next = mark_first(w, c->block);
    g_string_truncate(c->path, 0);
  }
  struct rd r = {c->p, c->end, c->bad};
  for (; c->next < i && !r.bad; c->next++) {
    struct dir_entry e;
    r_dir_skim(&r, &e, c->path);
    __atomic_fetch_add(&cache_test_dirs_decoded, 1, __ATOMIC_RELAXED);
  }
  c->p = r.p;
  c->bad = r.bad;
}

/* Read the entry C is at into E, and step past it; AGAIN when C's path is
 * that entry's own (found by a skim of it). */
static bool
cursor_read(struct dir_cursor *c, struct dir_entry *e, bool again)
{
  struct rd r = {c->p, c->end, c->bad};
  r_dir_read(&r, e, c->w->dev, c->path, again);
  __atomic_fetch_add(&cache_test_dirs_decoded, 1, __ATOMIC_RELAXED);
  c->p = r.p;
  c->next++;
  c->bad = r.bad;
  return !r.bad;
}

bool
dir_cursor_at(struct dir_cursor *c, guint32 i, struct dir_entry *e)
{
  g_return_val_if_fail(i < c->w->n_dirs, false);
  cursor_seek(c, i);
  return !c->bad && cursor_read(c, e, false);
}

bool
dir_cursor_find(struct dir_cursor *c, const char *path, size_t len, guint32 *i,
                struct dir_entry *e)
{
  const struct cached_walk *w = c->w;
  if (c->bad || w->n_dirs == 0)
    return false;
  /* The last mark whose key (its block's first path) is PATH or before
   * it: a search over the index alone. */
  guint32 lo = 0, hi = w->n_marks; /* the mark is below HI, and LO or after */
  bool any = false;
  while (lo < hi) {
    const guint32 mid = lo + (hi - lo) / 2;
    size_t klen;
    const char *k = mark_key(w, mid, &klen);
    if (compare_paths(k, klen, path, len) <= 0) {
      lo = mid + 1;
      any = true;
    } else {
      hi = mid;
    }
  }
  if (!any)
    return false;
  /* Then the entries from that mark on, in path order, up to the next:
   * from where C is when it is in that block past an entry before PATH
   * (C's path is the last entry's), so that lookups in path order (a
   * directory's children, the walk's) read each entry of a block once. */
  const guint32 from = mark_first(w, lo - 1);
  const guint32 to = mark_first(w, lo);
  if (!(c->block == lo - 1 && c->next > from && c->next <= to &&
        compare_paths(c->path->str, c->path->len, path, len) < 0))
    cursor_seek(c, from);
  while (!c->bad && c->next < to) {
    struct rd r = {c->p, c->end, false};
    struct dir_entry skim;
    r_dir_skim(&r, &skim, c->path);
    __atomic_fetch_add(&cache_test_dirs_decoded, 1, __ATOMIC_RELAXED);
    if (r.bad) {
      c->bad = true;
      return false;
    }
    const int k = compare_paths(skim.path, skim.len, path, len);
    if (k == 0) {
      /* Read it again whole: it shares with C's path what it shared with
       * the path before it. */
      *i = c->next;
      return cursor_read(c, e, true);
    }
    c->p = r.p;
    c->next++;
    if (k > 0)
      return false;
  }
  return false;
}

/* Is every entry of cached walk W read by its number, and found again by
 * its path, through a cursor (C's own: a block at a time from the file,
 * until the region is read whole)? False, with *CORRUPT set when a block
 * did not check out, if not. */
static bool
cursor_agrees(const struct cached_walk *w, bool *corrupt)
{
  struct dir_cursor c, by_path;
  dir_cursor_init(&c, w);
  dir_cursor_init(&by_path, w);
  GString *path = g_string_new(NULL);
  bool ok = true;
  for (guint32 i = 0; i < w->n_dirs && ok; i++) {
    struct dir_entry e, found;
    guint32 at = G_MAXUINT32;
    ok = dir_cursor_at(&c, i, &e);
    if (ok) {
      g_string_truncate(path, 0);
      g_string_append_len(path, e.path, (gssize)e.len);
      ok = dir_cursor_find(&by_path, path->str, path->len, &at, &found) && at == i &&
           found.len == path->len && memcmp(found.path, path->str, path->len) == 0;
    }
  }
  *corrupt = c.corrupt || by_path.corrupt;
  g_string_free(path, TRUE);
  dir_cursor_clear(&c);
  dir_cursor_clear(&by_path);
  return ok;
}

/* Do cached walk W's marks and its list of the entries watchman never
 * vouches for say what its entries (read whole) do, and is each entry found
 * by its path through the marks? A writer's bug otherwise (cache_read_all). */
static bool
marks_agree(const struct cached_walk *w)
{
  struct rd r;
  if (!cached_walk_dirs(w, &r.p, &r.end))
    return false;
  r.bad = false;
  const guint8 *dirs_at = r.p;
  struct rd must = {w->must_at, w->must_end, false};
  GString *path = g_string_new(NULL);
  struct dir_cursor c;
  dir_cursor_init(&c, w);
  guint32 next_must = 0, musts = 0, b = 0;
  bool ok = true;
  for (guint32 i = 0; i < w->n_dirs && ok; i++) {
    if (i == mark_first(w, b)) {
      struct rd peek = r;
      ok = (guint64)(r.p - dirs_at) == mark_at(w, b) && r_var(&peek) == 0;
      b++;
    }
    if (musts < w->n_must && (musts == 0 || i > next_must)) {
      const guint64 gap = r_var(&must);
      next_must = musts ? next_must + (guint32)gap + 1 : (guint32)gap;
      musts++;
    }
    struct dir_entry e, found;
    r_dir(&r, &e, w->dev, path);
    guint32 at = G_MAXUINT32;
    ok = ok && !r.bad &&
         watchman_may_vouch(&e.was, e.path, e.len, (e.flags & (DIR_START | DIR_WAY)) != 0) ==
             !(musts > 0 && next_must == i) &&
         dir_cursor_find(&c, e.path, e.len, &at, &found) && at == i &&
         dir_cursor_at(&c, i, &found) && found.len == e.len && memcmp(found.path, e.path, e.len) == 0;
  }
  ok = ok && musts == w->n_must && r.p == r.end && b == w->n_marks;
  dir_cursor_clear(&c);
  g_string_free(path, TRUE);
  return ok;
}

/* Why a cache file that ST describes is not this process's to read, or
 * NULL. A cache decides what a build compiles: one that another user
 * could have written (left in a shared build directory) is not parsed at
 * all, as git refuses a repository another user owns. As git does, root
 * under sudo may read the files of the user who ran sudo (SUDO_UID):
 * `sudo ninja install` in that user's build directory. */
static char *
not_ours(const struct stat *st)
{
  if (!S_ISREG(st->st_mode))
    return g_strdup("is not a regular file");
  const uid_t me = geteuid();
  if (st->st_uid == me)
    return NULL;
  const char *sudo = me == 0 ? getenv("SUDO_UID") : NULL;
  char *end;
  if (sudo && *sudo) {
    errno = 0;
    unsigned long id = strtoul(sudo, &end, 10);
    if (errno == 0 && *end == '\0' && id == (unsigned long)st->st_uid)
      return NULL;
  }
  return g_strdup_printf("is owned by another user (uid %lu, not %lu)",
                         (unsigned long)st->st_uid, (unsigned long)me);
}

/* A cache file of no file yet (its descriptors -1): its regions DIRS_LEN
 * and RECS_LEN bytes. */
static struct cache_file *
cache_file_new(guint64 dirs_len, guint64 recs_len)
{
  struct cache_file *c = g_new0(struct cache_file, 1);
  c->fd = c->base_fd = -1;
  c->own_dirs_len = dirs_len;
  c->recs_len = recs_len;
  return c;
}

/* The base INDEX (INDEX_LEN bytes, checked) names (format.h: base): false
 * if it names none, or not so that it parses (index_parse() refuses it). */
static bool
index_base(const gchar *index, gsize index_len, guint64 *size, guint64 *sum)
{
  struct rd r = {(const guint8 *)index, (const guint8 *)index + index_len, false};
  size_t n;
  r_str(&r, &n);
  r_str(&r, &n);
  const char *base = r_str(&r, &n);
  if (r.bad || n != 16)
    return false;
  *size = get_le((const guint8 *)base, 8);
  *sum = get_le((const guint8 *)base + 8, 8);
  return true;
}

/* The walks of INDEX (INDEX_LEN bytes, checked) into C (cache_file_new(),
 * its base opened if it has one: its regions' lengths known), their
 * entries in its regions (or its base's): C, or NULL (C freed) if the
 * index does not parse. */
static struct cache_file *
index_parse(const gchar *index, gsize index_len, struct cache_file *c)
{
  struct rd r = {(const guint8 *)index, (const guint8 *)index + index_len, false};
  c->index = index;
  c->index_len = index_len;
  size_t n;
  const char *s = r_str(&r, &n);
  c->version = g_strndup(s, n);
  c->queries = (const guint8 *)r_str(&r, &c->queries_len);
  const char *base = r_str(&r, &n);
  if (n != (c->has_base ? 16u : 0u) ||
      (n && (get_le((const guint8 *)base, 8) != c->base_size ||
             get_le((const guint8 *)base + 8, 8) != c->base_sum)))
    r.bad = true;
  c->walks = g_ptr_array_new_with_free_func((GDestroyNotify)cached_walk_free);
  guint32 walks = r_count(&r, 36);
  /* The walks' entries: a whole file's are its region, every byte of it
   * some walk's (and so some block's); an overlay's come from its own and
   * its base's, so at most as many. */
  const guint64 bound = c->own_dirs_len + (c->has_base ? c->base_dirs_len : 0);
  guint64 used = 0;
  for (guint32 i = 0; i < walks && !r.bad; i++) {
    struct cached_walk *w = read_walk(&r, &used, bound, c);
    w->file = c;
    g_ptr_array_add(c->walks, w);
  }
  c->dirs_len = used;
  if (!r.bad && (r.p != r.end || (!c->has_base && used != c->own_dirs_len)))
    r.bad = true;
  if (r.bad) {
    cache_file_free(c);
    return NULL;
  }
  return c;
}

/* Open the base (format.h) of cache file PATH into C, as the index binds
 * it: SIZE bytes, its index's sum SUM. NULL, or why it cannot be used. */
static char *
base_open(struct cache_file *c, const char *path, guint64 size, guint64 sum)
{
  c->base_path = g_strconcat(path, ".base", NULL);
  int fd = open(c->base_path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  struct stat st;
  guint8 h[HEADER_SIZE];
  char *why = NULL;
  if (fd < 0 || fstat(fd, &st) != 0)
    why = g_strdup_printf("is written over %s, which cannot be read (%s)", c->base_path,
                          g_strerror(errno));
  else if ((why = not_ours(&st)) != NULL) {
    char *t = g_strdup_printf("is written over %s, which %s", c->base_path, why);
    g_free(why);
    why = t;
  } else if ((guint64)st.st_size != size || !pread_all(fd, h, HEADER_SIZE, 0) ||
             memcmp(h, CACHE_MAGIC, 8) != 0 || get_le(h + 8, 4) != CACHE_FORMAT ||
             get_le(h + 24, 8) != sum || get_le(h + 16, 8) != size - HEADER_SIZE ||
             get_le(h + 40, 8) > size - HEADER_SIZE ||
             get_le(h + 48, 8) > size - HEADER_SIZE - get_le(h + 40, 8))
    why = g_strdup_printf("is written over %s, and another file took its place", c->base_path);
  if (why) {
    if (fd >= 0)
      close(fd);
    return why;
  }
  c->has_base = true;
  c->base_fd = fd;
  c->base_size = size;
  c->base_sum = sum;
  c->base_dev = (guint64)st.st_dev;
  c->base_ino = (guint64)st.st_ino;
  c->base_dirs_at = HEADER_SIZE + get_le(h + 40, 8);
  c->base_dirs_len = get_le(h + 48, 8);
  c->base_recs_at = c->base_dirs_at + c->base_dirs_len;
  c->base_recs_len = size - c->base_recs_at;
  return NULL;
}

/* Cache file PATH, checked: NULL with *WHY set (NULL too: no such file).
 * The header and the index are read, not the directory entries or the
 * records: they stay in the file, kept open, until a run needs them. */
struct cache_file *
cache_load(const char *path, char **why)
{
  *why = NULL;
  /* O_NONBLOCK: a FIFO in its place must not hang the build (it is then
   * refused, not read); it changes nothing for a regular file. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    if (errno != ENOENT)
      *why = g_strdup_printf("cannot be read (%s)", g_strerror(errno));
    if (fd >= 0)
      close(fd);
    return NULL;
  }
  if ((*why = not_ours(&st)) != NULL) {
    close(fd);
    return NULL;
  }
  /* The header and, when they fit in FIRST_READ bytes, the index: one
   * read. */
  const guint64 size = st.st_size > 0 ? (guint64)st.st_size : 0;
  const gsize first_len = (gsize)MIN(MAX(size, (guint64)HEADER_SIZE), (guint64)FIRST_READ);
  gchar *first = g_malloc(first_len);
  const guint8 *h = (const guint8 *)first;
  ssize_t got;
  do
    got = pread(fd, first, first_len, 0);
  while (got < 0 && errno == EINTR);
  if (got < 0)
    *why = g_strdup_printf("cannot be read (%s)", g_strerror(errno));
  else if (got < HEADER_SIZE || size < HEADER_SIZE)
    *why = g_strdup("is truncated");
  else if (memcmp(h, CACHE_MAGIC, 8) != 0)
    *why = g_strdup("is not a trawl cache");
  else if (get_le(h + 8, 4) != CACHE_FORMAT)
    *why = g_strdup_printf("has format version %u, not %u", (unsigned)get_le(h + 8, 4),
                           CACHE_FORMAT);
  else if (get_le(h + 16, 8) != size - HEADER_SIZE || get_le(h + 40, 8) > size - HEADER_SIZE ||
           get_le(h + 48, 8) > size - HEADER_SIZE - get_le(h + 40, 8))
    *why = g_strdup("is truncated");
  else if (get_le(h + 40, 8) == 0 || get_le(h + 40, 8) > ((guint64)1 << 36))
    *why = g_strdup(get_le(h + 40, 8) ? "is too large" : "is truncated");
  else if (get_le(h + 32, 8) != 0)
    *why = g_strdup("is corrupt (its header does not parse)");
  const guint64 index_len = *why ? 0 : get_le(h + 40, 8);
  const guint64 index_sum = *why ? 0 : get_le(h + 24, 8);
  const guint64 dirs_len = *why ? 0 : get_le(h + 48, 8);
  gchar *index_data = NULL;
  gsize index_data_len = 0;
  const gchar *index = NULL;
  if (*why == NULL && (guint64)got >= HEADER_SIZE + index_len) {
    index_data = first, index_data_len = first_len;
    index = first + HEADER_SIZE;
    first = NULL;
  } else if (*why == NULL) {
    index = index_data = read_at(fd, HEADER_SIZE, index_len);
    index_data_len = index_len;
  }
  g_free(first);
  if (*why == NULL && index == NULL)
    *why = errno ? g_strdup_printf("cannot be read (%s)", g_strerror(errno))
                 : g_strdup("is truncated"); /* it shrank meanwhile */
  else if (*why == NULL && checksum((const guint8 *)index, index_len) != index_sum)
    *why = g_strdup("is corrupt (its checksum does not match)");
  if (*why) {
    release(index_data, index_data_len);
    close(fd);
    return NULL;
  }
  /* The index now; the directory entries and the records when they are
   * first needed (a re-check that finds nothing changed never reads the
   * records, nor with watchman's answer more than a few blocks of entries). */
  struct cache_file *c = cache_file_new(dirs_len, size - HEADER_SIZE - index_len - dirs_len);
  guint64 base_size, base_sum;
  if (index_base(index, index_len, &base_size, &base_sum) &&
      (*why = base_open(c, path, base_size, base_sum)) != NULL) {
    cache_file_free(c);
    release(index_data, index_data_len);
    close(fd);
    return NULL;
  }
  c = index_parse(index, index_len, c);
  if (c == NULL) {
    /* The checksum held: a writer's bug, not a disk's. Still not trusted. */
    *why = g_strdup("is corrupt (its records do not parse)");
    release(index_data, index_data_len);
    close(fd);
    return NULL;
  }
  c->index_data = index_data;
  c->index_data_len = index_data_len;
  c->fd = fd;
  c->path = g_strdup(path);
  c->dev = (guint64)st.st_dev;
  c->ino = (guint64)st.st_ino;
  c->size = size;
  c->index_sum = index_sum;
  c->dirs_at = HEADER_SIZE + index_len;
  c->recs_at = HEADER_SIZE + index_len + dirs_len;
  return c;
}

/* Write BODY to PATH through a temporary file renamed into place: a reader
 * sees the old file or the new, never a part of either. */
struct cache_file *
cache_open(const char *path, GError **error)
{
  char *why = NULL;
  struct cache_file *c = cache_load(path, &why);
  if (c == NULL)
    g_set_error(error, G_FILE_ERROR, why ? G_FILE_ERROR_INVAL : G_FILE_ERROR_NOENT, "%s %s",
                path, why ? why : "does not exist");
  g_free(why);
  return c;
}

/* LEN bytes at P to FD; false with errno set (EIO for a write of none). */
static bool
write_all(int fd, const guint8 *p, size_t len)
{
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = EIO;
      return false;
    }
    p += n;
    len -= (size_t)n;
  }
  return true;
}

/* LEN bytes of file FROM_FD at AT to FD, where FD's file offset is: in the
 * kernel (copy_file_range()), else through a buffer. False with errno set
 * (EIO: the file copied from is shorter). */
static bool
copy_range(int from_fd, guint64 at, guint64 len, int fd)
{
  bool kernel = true;
  guint8 *buf = NULL;
  bool ok = true;
  while (ok && len > 0) {
    const size_t want = (size_t)MIN(len, (guint64)1 << 30);
    ssize_t n;
    if (kernel) {
      off64_t from = (off64_t)at;
      n = copy_file_range(from_fd, &from, fd, NULL, want, 0);
      if (n < 0 && (errno == ENOSYS || errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP)) {
        kernel = false; /* not between these files: copy through memory */
        continue;
      }
    } else {
      if (buf == NULL)
        buf = g_malloc(64 * 1024);
      n = pread(from_fd, buf, (size_t)MIN(want, (size_t)64 * 1024), (off_t)at);
      if (n > 0 && !write_all(fd, buf, (size_t)n))
        n = -1;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = EIO;
      ok = false;
      break;
    }
    at += (guint64)n;
    len -= (guint64)n;
  }
  g_free(buf);
  return ok;
}

bool cache_test_no_links;
unsigned cache_test_mark_every;

bool
cache_store(const char *path, const GByteArray *index, const GByteArray *dirs,
            const struct recs_out *recs, char **why)
{
  guint8 h[HEADER_SIZE] = {0};
  memcpy(h, CACHE_MAGIC, 8);
  put_le(h + 8, CACHE_FORMAT, 4);
  put_le(h + 16, (guint64)index->len + dirs->len + recs->len, 8);
  put_le(h + 24, checksum(index->data, index->len), 8);
  put_le(h + 40, index->len, 8);
  put_le(h + 48, dirs->len, 8);

  /* Over a base: the last file made it (a link to the very file read,
   * through its descriptor), or it checked to be the one read. */
  char *base = g_strconcat(path, ".base", NULL);
  bool ok = true;
  const char *replaced = NULL; /* the file another took the place of */
  int err = 0;
  if (recs->overlay != OVER_NONE) {
    const struct rec_from *f = &recs->from[recs->overlay == OVER_LAST ? 0 : 1];
    const int fd = open_again(f->path, f->dev, f->ino, f->size);
    ok = fd >= 0;
    replaced = !ok && errno == ESTALE ? f->path : NULL;
    if (ok && recs->overlay == OVER_LAST) {
      char *link = g_strconcat(path, ".base.XXXXXX", NULL);
      char *proc = g_strdup_printf("/proc/self/fd/%d", fd);
      /* A name no other file has: made, then replaced by the link. */
      int tfd = g_mkstemp_full(link, O_WRONLY | O_CLOEXEC, 0664);
      ok = tfd >= 0 && close(tfd) == 0 && unlink(link) == 0;
      bool made = ok && !cache_test_no_links &&
                  linkat(AT_FDCWD, proc, AT_FDCWD, link, AT_SYMLINK_FOLLOW) == 0;
      if (ok && !made) {
        /* No /proc, or no second name for a file here: a copy of the file
         * read (as a whole file's write would copy it). */
        tfd = open(link, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0664);
        made = tfd >= 0;
        ok = made && copy_range(fd, 0, f->size, tfd);
        if (tfd >= 0 && close(tfd) != 0)
          ok = false;
      }
      if (ok && rename(link, base) != 0)
        ok = false;
      if (!ok && made) {
        const int e = errno;
        unlink(link);
        errno = e;
      }
      g_free(link);
      g_free(proc);
    }
    if (!ok)
      err = errno;
    if (fd >= 0)
      close(fd);
  }

  char *tmp = g_strconcat(path, ".XXXXXX", NULL);
  /* 0664 less the umask, as a build's own files are: a build directory
   * shared by a group stays shared, and no umask makes it writable by
   * others (a cache others may write could change a build's answers). */
  int fd = ok ? g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0664) : -1;
  if (ok && fd < 0)
    err = errno;
  /* (A walk of no directory has no entries: DIRS may have no data at all.) */
  ok = fd >= 0 && write_all(fd, h, HEADER_SIZE) && write_all(fd, index->data, index->len) &&
       (dirs->len == 0 || write_all(fd, dirs->data, dirs->len));
  /* The records: the bytes made, and between them the ranges of the last
   * file (or its base) kept as they were. */
  int from[2] = {-1, -1};
  guint64 done = 0;
  for (guint k = 0; ok && k <= recs->splices->len; k++) {
    const struct rec_splice *sp =
        k < recs->splices->len ? &g_array_index(recs->splices, struct rec_splice, k) : NULL;
    if (sp && from[sp->part] < 0) {
      const struct rec_from *f = &recs->from[sp->part];
      if ((from[sp->part] = open_again(f->path, f->dev, f->ino, f->size)) < 0) {
        ok = false, replaced = errno == ESTALE ? f->path : NULL;
        break;
      }
    }
    const guint64 upto = sp ? sp->at : recs->bytes->len;
    ok = (upto == done || write_all(fd, recs->bytes->data + done, (size_t)(upto - done))) &&
         (sp == NULL || copy_range(from[sp->part], sp->from, sp->len, fd));
    done = upto;
  }
  for (int k = 0; k < 2; k++)
    if (from[k] >= 0)
      close(from[k]);
  if (!ok && fd >= 0)
    err = errno;
  if (fd >= 0 && close(fd) != 0 && ok) {
    err = errno;
    ok = false;
  }
  if (ok && rename(tmp, path) != 0) {
    err = errno;
    ok = false;
  }
  /* A whole file needs no base: one left by the file it replaced goes. */
  if (ok && recs->overlay == OVER_NONE)
    unlink(base);
  if (!ok) {
    /* (Then the next run finds the change again, from the file now there.) */
    *why = replaced ? g_strdup_printf("%s: another file took the place of the one it copies "
                                      "from (%s)", path, replaced)
                    : g_strdup_printf("%s: %s", path, g_strerror(err));
    if (fd >= 0)
      unlink(tmp);
  }
  g_free(tmp);
  g_free(base);
  return ok;
}

/* A source of kind KIND whose stamp is racy: the index stays an index
 * (its answers are asked again whatever its stamp says); any other is not
 * trusted. */
static guint8
racy_kind(guint8 kind)
{
  return kind == IGNORE_SOURCE_INDEX ? SOURCE_INDEX_RACY : SOURCE_RACY;
}

/* Watchman's clock of a walk, as the index holds it (NULL: none). */
static void
w_clock(GByteArray *b, const struct wm_at *clock)
{
  const bool clocked = clock && clock->watch && clock->clock;
  w_str(b, clocked ? clock->watch : "", clocked ? strlen(clock->watch) : 0);
  w_str(b, clocked ? clock->rel : "", clocked ? strlen(clock->rel) : 0);
  w_str(b, clocked ? clock->clock : "", clocked ? strlen(clock->clock) : 0);
  w_var(b, clocked ? clock->recrawls : 0);
  const bool cookies = clocked && clock->cookies;
  w_str(b, cookies ? clock->cookies : "", cookies ? strlen(clock->cookies) : 0);
  w_var(b, cookies ? clock->cookies_dev : 0);
  w_var(b, cookies ? clock->cookies_ino : 0);
}

/* The head of a walk's entry in the index: its root, problems, members,
 * and its sources SRC, stamps at or after RACY_FROM written as racy. */
static void
w_walk_head(GByteArray *b, const char *root, guint64 dev, guint64 ino, bool problems,
            const GArray *members, const struct source_list *src,
            const struct wm_at *clock, const struct timespec *racy_from)
{
  w_str(b, root, strlen(root));
  w_le(b, dev, 8);
  w_le(b, ino, 8);
  w_u8(b, problems ? WALK_PROBLEMS : 0);
  w_le(b, members->len, 4);
  for (guint i = 0; i < members->len; i++)
    w_le(b, g_array_index(members, size_t, i), 8);
  w_str(b, src->env->str, src->env->len);
  w_clock(b, clock);
  w_le(b, src->paths->len, 4);
  for (guint i = 0; i < src->paths->len; i++) {
    const struct stamp *st = &g_array_index(src->stamps, struct stamp, i);
    const char *p = src->paths->pdata[i];
    w_str(b, p, strlen(p));
    w_u8(b, stamp_racy(st, racy_from) ? racy_kind(src->kinds->data[i]) : src->kinds->data[i]);
    w_stamp(b, st, dev);
  }
}

/* A mark as the writer makes it (format.h: mark). */
struct mark_w {
  guint64 at, sum;
  guint32 first;
  guint64 rat, rlen, rsum, dat;
  guint64 arr;          /* where its records start in RECS' bytes (the open block's) */
  guint32 kat;          /* where its first path is in the keys */
};

/* End the block being written (OPEN, of *IN_OPEN entries: none, nothing
 * to end), its entries in DIRS from OPEN->dat's offset, its records in
 * RECS from OPEN->arr: its mark, with both sums, to MARKS, and *AT (the
 * walk's entries so far) past it. */
static void
close_block(GArray *marks, struct mark_w *open, guint32 *in_open, const GByteArray *dirs,
            guint64 *at, const struct recs_out *recs)
{
  if (*in_open == 0)
    return;
  static const guint8 none[1];
  const guint64 own = open->dat >> 1;
  open->sum = checksum(dirs->data + own, (gsize)(dirs->len - own));
  *at += dirs->len - own;
  open->rlen = recs->bytes->len - open->arr;
  /* (A block of directories that hold nothing has no records: RECS may
   * have no data at all.) */
  open->rsum = checksum(open->rlen ? recs->bytes->data + open->arr : none, (gsize)open->rlen);
  g_array_append_val(marks, *open);
  *in_open = 0;
}

void
recs_out_init(struct recs_out *o, guint reserve)
{
  o->bytes = g_byte_array_sized_new(reserve);
  o->splices = g_array_new(FALSE, FALSE, sizeof(struct rec_splice));
  memset(o->from, 0, sizeof o->from);
  o->overlay = OVER_NONE;
  o->len = 0;
}

void
recs_out_clear(struct recs_out *o)
{
  if (o->splices)
    g_array_unref(o->splices);
  if (o->bytes)
    g_byte_array_unref(o->bytes);
  g_free(o->from[0].path);
  g_free(o->from[1].path);
  memset(o, 0, sizeof *o);
}

void
recs_out_over(struct recs_out *o, const struct cache_file *c, int overlay)
{
  o->overlay = overlay;
  if (o->from[0].path == NULL)
    o->from[0] = (struct rec_from){g_strdup(c->path), c->dev, c->ino, c->size};
  if (o->from[1].path == NULL && c->has_base)
    o->from[1] = (struct rec_from){g_strdup(c->base_path), c->base_dev, c->base_ino, c->base_size};
}

/* The bytes of a cache file's walks: their entries and their records. */
static guint64
file_bytes(const struct cache_file *c)
{
  guint64 n = c->dirs_len;
  for (guint i = 0; i < c->walks->len; i++) {
    const struct cached_walk *w = c->walks->pdata[i];
    for (guint32 m = 0; m < w->n_marks; m++)
      n += mark_rlen(w, m);
  }
  return n;
}

/* Does block KE, kept whole, stay where it is in a file written as
 * OVERLAY (OVER_*): in the base, which holds both its entries and its
 * records? Else it is copied. */
static bool
block_stays(const struct kept_entry *ke, int overlay)
{
  const guint64 part = (guint64)(overlay == OVER_BASE);
  return ke->n_block && overlay != OVER_NONE && (ke->dwhere & 1) == part &&
         (ke->rwhere & 1) == part;
}

int
cache_overlay_choice(const struct cache_file *old, const char *path,
                     const struct split *const *splits, size_t n)
{
  if (old == NULL || old->path == NULL || strcmp(old->path, path) != 0)
    return OVER_NONE;
  const int overlay = old->has_base ? OVER_BASE : OVER_LAST;
  guint64 left = 0; /* the bytes of the blocks that would stay where they are */
  for (size_t i = 0; i < n; i++) {
    for (guint k = 0; splits[i] && splits[i]->kept && k < splits[i]->kept->len; k++) {
      const struct kept_entry *ke = &g_array_index(splits[i]->kept, struct kept_entry, k);
      if (block_stays(ke, overlay))
        left += ke->body_len + ke->recs_len;
    }
  }
  return left > 0 && left >= file_bytes(old) / 2 ? overlay : OVER_NONE;
}

unsigned long cache_test_split_filled;

bool
split_fill(struct split *s, int overlay, char **why)
{
  for (guint k = 0; s->kept && k < s->kept->len; k++) {
    struct kept_entry *ke = &g_array_index(s->kept, struct kept_entry, k);
    if (!ke->n_block || ke->body || block_stays(ke, overlay))
      continue;
    guint8 *body = (guint8 *)arena_alloc(&s->arena, ke->body_len);
    if (!read_where(s->file, ke->dwhere, true, body, ke->body_len)) {
      const int err = errno;
      *why = g_strdup_printf("%s: its directory entries cannot be read again (%s)",
                             s->file->path, err ? g_strerror(err) : "the file is shorter");
      return false;
    }
    ke->body = body;
    __atomic_fetch_add(&cache_test_split_filled, 1, __ATOMIC_RELAXED);
  }
  return true;
}

/* LEN bytes to O: from memory (P), or from SPLIT's file (PART 0) or its
 * base (1) at FROM (P NULL), joined to the range before when they follow
 * it in the same file. */
static void
recs_append(struct recs_out *o, const guint8 *p, guint64 len, const struct split *split,
            guint64 from, guint32 part)
{
  if (p != NULL || len == 0) {
    if (len)
      g_byte_array_append(o->bytes, p, (guint)len);
    o->len += len;
    return;
  }
  /* (One cache file's: every walk's split is of the file the run read.) */
  recs_out_over(o, split->file, o->overlay);
  struct rec_splice *last = o->splices->len
                                ? &g_array_index(o->splices, struct rec_splice, o->splices->len - 1)
                                : NULL;
  if (last && last->at == o->bytes->len && last->part == part && last->from + last->len == from) {
    last->len += len;
  } else {
    const struct rec_splice sp = {o->bytes->len, from, len, part};
    g_array_append_val(o->splices, sp);
  }
  o->len += len;
}

void
cache_write_walk(GByteArray *b, GByteArray *dirs, struct recs_out *recs,
                 const struct walk_record *g, const struct source_list *src,
                 const struct timespec *racy_from)
{
  const guint32 every = cache_test_mark_every ? cache_test_mark_every : DIR_MARK_EVERY;
  w_walk_head(b, g->root, g->dev, g->ino, g->problems, g->members, src, g->clock, racy_from);
  /* In path order, so that the same walk writes the same file. */
  GPtrArray *all = g_ptr_array_new();
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, g->memo->dirs);
  while (g_hash_table_iter_next(&it, &key, &value))
    g_ptr_array_add(all, value);
  g_ptr_array_sort(all, compare_dirs);
  GByteArray *index = b;
  b = dirs; /* the entries: in the region of them */
  guint64 at = 0; /* the walk's entries so far, as the marks place them */
  const char *before = "";
  size_t before_len = 0;
  /* (Room for the marks: a block kept whole is one, the entries written
   * one in EVERY.) */
  GArray *marks = g_array_sized_new(FALSE, FALSE, sizeof(struct mark_w),
                                    (g->kept ? g->kept->kept->len : 0) + all->len / every + 1);
  GArray *must = g_array_new(FALSE, FALSE, sizeof(guint32));
  GByteArray *keys = g_byte_array_new(); /* the blocks' first paths */
  struct mark_w open = {0}; /* the block being written: where it starts */
  guint32 in_open = 0, nth = 0;
  /* The walk's entries and those kept (both in path order, no path in
   * both; a block kept whole holds no path of the walk's) merged. */
  const struct kept_entry *kept = g->kept ? (const struct kept_entry *)g->kept->kept->data : NULL;
  const guint n_kept = g->kept ? g->kept->kept->len : 0;
  guint i = 0, j = 0;
  while (i < all->len || j < n_kept) {
    const struct memo_dir *d = i < all->len ? all->pdata[i] : NULL;
    const struct kept_entry *ke = j < n_kept ? &kept[j] : NULL;
    if (d && ke) {
      const int c = memcmp(d->path, ke->path, MIN(d->len, ke->len));
      if ((c ? c : (d->len > ke->len) - (d->len < ke->len)) < 0)
        ke = NULL;
      else
        d = NULL;
    }
    if (ke && ke->n_block) {
      /* A block as it was, with its sums: after the one being written.
       * Over a base that holds it, it stays there; else it is copied. */
      close_block(marks, &open, &in_open, b, &at, recs);
      const guint32 kat = keys->len;
      g_byte_array_append(keys, (const guint8 *)ke->path, (guint)ke->len);
      if (block_stays(ke, g->overlay)) {
        const struct mark_w m = {at, ke->sum, nth, ke->rwhere | 1, ke->recs_len, ke->rsum,
                                 ke->dwhere | 1, 0, kat};
        g_array_append_val(marks, m);
      } else {
        const struct mark_w m = {at, ke->sum, nth, recs->len << 1, ke->recs_len, ke->rsum,
                                 (guint64)b->len << 1, 0, kat};
        g_array_append_val(marks, m);
        g_assert(ke->body != NULL); /* (split_fill()) */
        g_byte_array_append(b, ke->body, (guint)ke->body_len);
        recs_append(recs, ke->recs, ke->recs_len, g->kept, ke->rfrom, (guint32)(ke->rwhere & 1));
      }
      at += ke->body_len;
      for (guint k = 0; k < ke->musts; k++) {
        const guint32 n = nth + g_array_index(g->kept->musts, guint32, ke->must_from + k);
        g_array_append_val(must, n);
      }
      nth += ke->n_block;
      j++;
      continue;
    }
    const char *p = d ? d->path : ke->path;
    const size_t plen = d ? d->len : ke->len;
    size_t shared = 0;
    /* A block's first entry: reading may start here, its path written
     * whole. */
    if (in_open == 0) {
      open.at = at;
      open.dat = (guint64)b->len << 1;
      open.first = nth;
      open.rat = recs->len << 1;
      open.arr = recs->bytes->len;
      open.kat = keys->len;
      g_byte_array_append(keys, (const guint8 *)p, (guint)plen);
    } else {
      while (shared < before_len && shared < plen && before[shared] == p[shared])
        shared++;
    }
    if (d ? !watchman_may_vouch(&d->was, d->path, d->len, d->start || d->way) : ke->must)
      g_array_append_val(must, nth);
    w_var(b, shared);
    w_var(b, plen - shared);
    g_byte_array_append(b, (const guint8 *)p + shared, (guint)(plen - shared));
    before = p;
    before_len = plen;
    nth++;
    if (ke) {
      /* As the last record has it, but where its records now are. */
      g_byte_array_append(b, ke->body, (guint)ke->body_len);
      w_var(b, ke->n);
      w_var(b, recs->len - (open.rat >> 1));
      recs_append(recs, ke->recs, ke->recs_len, NULL, 0, 0);
      j++;
    } else {
      i++;
      w_var(b, d->live);
      w_stamp(b, &d->was.st, (guint64)g->dev);
      w_var(b, d->was.has);
      w_stamp(b, &d->was.ignore[0], (guint64)g->dev);
      w_stamp(b, &d->was.ignore[1], (guint64)g->dev);
      guint asked = 0;
      for (guint k = 0; k < d->n; k++)
        asked += d->recs[k].kind == MEMO_ASKED;
      w_u8(b, (d->was.racy ? DIR_RACY : 0) | (d->was.rules_racy ? DIR_RULES_RACY : 0) |
                  (d->way ? DIR_WAY : 0) | (d->start ? DIR_START : 0) | (asked ? DIR_ASKED : 0) |
                  (d->was.repo ? DIR_REPO : 0));
      if (d->was.repo) {
        w_var(b, d->was.repo_len);
        g_byte_array_append(b, d->was.repo, d->was.repo_len);
      }
      /* The questions in the entry, the rest in the records (format.h). */
      if (asked) {
        w_var(b, asked);
        for (guint k = 0; k < d->n; k++) {
          const struct memo_rec *r = &d->recs[k];
          if (r->kind != MEMO_ASKED)
            continue;
          w_var(b, r->len);
          g_byte_array_append(b, (const guint8 *)r->name, r->len);
          w_u8(b, r->type);
        }
      }
      w_var(b, d->n - asked);
      w_var(b, recs->len - (open.rat >> 1));
      const guint before_recs = recs->bytes->len;
      for (guint k = 0; k < d->n; k++) {
        const struct memo_rec *r = &d->recs[k];
        if (r->kind != MEMO_ASKED)
          w_rec(recs->bytes, r);
      }
      recs->len += recs->bytes->len - before_recs;
    }
    if (++in_open == every)
      close_block(marks, &open, &in_open, b, &at, recs);
  }
  close_block(marks, &open, &in_open, b, &at, recs);
  const guint64 bytes = at;
  b = index;
  w_le(b, nth, 4);
  w_le(b, bytes, 8);
  w_le(b, every, 4);
  w_le(b, marks->len, 4);
  /* Each mark in one append (an append a field was most of the index's
   * writing: seven for each of big's 600 marks). */
  for (guint k = 0; k < marks->len; k++) {
    const struct mark_w *m = &g_array_index(marks, struct mark_w, k);
    guint8 t[MARK_SIZE];
    put_le(t, m->at, 8);
    put_le(t + 8, m->sum, 8);
    put_le(t + 16, m->first, 4);
    put_le(t + 20, m->rat, 8);
    put_le(t + 28, m->rlen, 8);
    put_le(t + 36, m->rsum, 8);
    put_le(t + 44, m->dat, 8);
    put_le(t + 52, m->kat, 4);
    g_byte_array_append(b, t, MARK_SIZE);
  }
  w_str(b, (const char *)keys->data, keys->len);
  w_le(b, must->len, 4);
  for (guint k = 0; k < must->len; k++) {
    const guint32 n = g_array_index(must, guint32, k);
    w_var(b, k ? n - g_array_index(must, guint32, k - 1) - 1 : n);
  }
  g_array_unref(marks);
  g_array_unref(must);
  g_byte_array_unref(keys);
  g_ptr_array_unref(all);
}

void
cache_query_write(GByteArray *b, const char *root, const GPtrArray *includes,
                  const GPtrArray *excludes, const TrawlWalkOptions *o)
{
  w_str(b, root, strlen(root));
  for (int k = 0; k < 2; k++) {
    const GPtrArray *pats = k ? excludes : includes;
    w_le(b, pats->len, 4);
    for (guint j = 0; j < pats->len; j++) {
      size_t len;
      const char *text = trawl_pattern_text(pats->pdata[j], &len);
      w_str(b, text, len);
      w_le(b, (guint32)trawl_pattern_dialect(pats->pdata[j]), 4);
      w_le(b, trawl_pattern_flags(pats->pdata[j]), 4);
    }
  }
  w_u8(b, o->hidden != 0);
  w_u8(b, o->follow != 0);
  w_le(b, o->types, 4);
  w_le(b, (guint32)(gint32)o->max_depth, 4);
  w_u8(b, o->one_file_system != 0);
  w_le(b, o->ignore, 4);
}

bool
cache_store_clocks(const char *path, struct cache_file *c, const struct wm_at *clocks, char **why)
{
  if (!c->records_checked)
    records_read(c);
  if (!c->records_ok) {
    *why = g_strdup("its records do not check out");
    return false;
  }
  if (!c->dirs_checked)
    dirs_read(c);
  if (!c->dirs_ok) {
    *why = g_strdup("its directory entries do not check out");
    return false;
  }
  GByteArray *index = g_byte_array_sized_new((guint)c->index_len + 64);
  const guint8 *at = (const guint8 *)c->index;
  for (guint i = 0; i < c->walks->len; i++) {
    const struct cached_walk *w = c->walks->pdata[i];
    g_byte_array_append(index, at, (guint)(w->clock_at - at));
    w_clock(index, &clocks[i]);
    at = w->clock_end;
  }
  g_byte_array_append(index, at, (guint)((const guint8 *)c->index + c->index_len - at));
  /* The file's own entries and records as they are (its marks say where,
   * in them or in its base, which stays). */
  GByteArray *dirs = g_byte_array_new();
  g_byte_array_set_size(dirs, (guint)c->own_dirs_len);
  if (c->own_dirs_len && !read_where(c, 0, true, dirs->data, dirs->len)) {
    *why = g_strdup("its directory entries cannot be read");
    g_byte_array_unref(index);
    g_byte_array_unref(dirs);
    return false;
  }
  struct recs_out recs;
  recs_out_init(&recs, 0);
  g_byte_array_append(recs.bytes, c->recs, (guint)(c->recs_end - c->recs));
  recs.len = recs.bytes->len;
  if (c->has_base)
    recs_out_over(&recs, c, OVER_BASE);
  const bool ok = cache_store(path, index, dirs, &recs, why);
  g_byte_array_unref(index);
  g_byte_array_unref(dirs);
  recs_out_clear(&recs);
  return ok;
}

void
cache_index_begin(GByteArray *b, const char *version, const GByteArray *queries,
                  const struct cache_file *over, int overlay, size_t n_walks)
{
  w_str(b, version, strlen(version));
  w_str(b, (const char *)queries->data, queries->len);
  /* The base: the last file, or the one it was written over. */
  if (over && overlay != OVER_NONE) {
    w_le(b, 16, 4);
    w_le(b, overlay == OVER_LAST ? over->size : over->base_size, 8);
    w_le(b, overlay == OVER_LAST ? over->index_sum : over->base_sum, 8);
  } else {
    w_le(b, 0, 4);
  }
  w_le(b, n_walks, 4);
}

void
cache_queries_begin(GByteArray *b, size_t n)
{
  w_le(b, n, 4);
}

/* The fixed part of a query after its patterns (cache_query_write()). */
#define QUERY_MIN (4 + 4 + 4 + 1 + 1 + 4 + 4 + 1 + 4)

/* One list of patterns at R into OUT (struct cached_pattern). */
static void
r_patterns(struct rd *r, GArray *out)
{
  g_array_set_size(out, 0);
  const guint32 n = r_count(r, 12);
  for (guint32 j = 0; j < n && !r->bad; j++) {
    struct cached_pattern p;
    p.text = r_str(r, &p.len);
    p.dialect = (guint32)r_le(r, 4);
    p.flags = (guint32)r_le(r, 4);
    if (!r->bad)
      g_array_append_val(out, p);
  }
}

bool
cache_queries_read(const guint8 *bytes, size_t len, cache_query_fn fn, void *data)
{
  struct rd r = {bytes, bytes + len, false};
  const guint32 n = r_count(&r, QUERY_MIN);
  GArray *lists[2] = {g_array_new(FALSE, FALSE, sizeof(struct cached_pattern)),
                      g_array_new(FALSE, FALSE, sizeof(struct cached_pattern))};
  bool ok = true;
  for (guint32 i = 0; i < n && ok && !r.bad; i++) {
    struct cached_query q;
    q.root = r_str(&r, &q.root_len);
    r_patterns(&r, lists[0]);
    r_patterns(&r, lists[1]);
    trawl_walk_options_init(&q.opt);
    q.opt.hidden = r_le(&r, 1);
    q.opt.follow = r_le(&r, 1);
    q.opt.types = (unsigned)r_le(&r, 4);
    q.opt.max_depth = (int)(gint32)(guint32)r_le(&r, 4);
    q.opt.one_file_system = r_le(&r, 1);
    q.opt.ignore = (unsigned)r_le(&r, 4);
    q.includes = (const struct cached_pattern *)(void *)lists[0]->data;
    q.n_includes = lists[0]->len;
    q.excludes = (const struct cached_pattern *)(void *)lists[1]->data;
    q.n_excludes = lists[1]->len;
    if (!r.bad)
      ok = fn(i, &q, data);
  }
  g_array_unref(lists[0]);
  g_array_unref(lists[1]);
  return ok && !r.bad && r.p == r.end;
}

/* ---- the cached results, straight from the records ---- */

/* A directory of a cached walk, from the index: where its records are. */
struct rec_dir {
  struct span path;     /* in rec_tree.paths */
  const guint8 *at, *end; /* in the records read whole: its own start, its block's end */
  guint32 n;
  guint8 flags;         /* DIR_* */
};

/* Every directory of cached walk W, by path: what a pass over its records
 * in the walk's order needs, and nothing of the records copied (a memo of
 * them, cached_memo(), would copy every name). */
struct rec_tree {
  struct rec_dir *dirs;
  guint n;
  GHashTable *by_path;  /* struct span * (in dirs) -> struct rec_dir * */
  struct arena paths;
};

static void
rec_tree_clear(struct rec_tree *t)
{
  g_free(t->dirs);
  if (t->by_path)
    g_hash_table_unref(t->by_path);
  arena_clear(&t->paths);
  memset(t, 0, sizeof *t);
}

/* T from cached walk W's index (its file's records read whole), its
 * records' offsets checked against their blocks'; false (T cleared) if
 * they do not parse. */
static bool
rec_tree_init(struct rec_tree *t, const struct cached_walk *w)
{
  memset(t, 0, sizeof *t);
  struct rd r;
  if (!cached_walk_dirs(w, &r.p, &r.end))
    return false;
  r.bad = false;
  t->dirs = g_new0(struct rec_dir, w->n_dirs);
  t->by_path = g_hash_table_new(span_hash, span_equal);
  GString *path = g_string_new(NULL);
  guint32 b = 0;
  for (guint32 i = 0; i < w->n_dirs && !r.bad; i++) {
    if (i == mark_first(w, b + 1))
      b++;
    struct dir_entry e;
    r_dir(&r, &e, w->dev, path);
    const guint64 rlen = mark_rlen(w, b);
    if (r.bad || e.off > rlen || (rlen - e.off) / REC_MIN < e.n)
      r.bad = true;
    struct rec_dir *d = &t->dirs[t->n++];
    d->path.s = arena_copy(&t->paths, e.path, e.len);
    d->path.len = e.len;
    d->at = r.bad ? NULL : mark_recs(w, b) + e.off;
    d->end = r.bad ? NULL : mark_recs(w, b) + rlen;
    d->n = e.n;
    d->flags = e.flags;
    g_hash_table_insert(t->by_path, &d->path, d);
  }
  g_string_free(path, TRUE);
  if (r.bad || r.p != r.end) {
    rec_tree_clear(t);
    return false;
  }
  return true;
}

struct rec_pass {
  const struct rec_tree *t;
  const GArray *members; /* size_t: the walk's queries, by bit */
  GString *path;        /* the directory's path, then an entry's */
  rec_emit_fn fn;
  void *data;
  bool bad;
};

/* Directory D's records and, at each subdirectory's place, its own: the
 * order a walk prints them in (its records are in that order, a
 * subdirectory's name sorting with a `/` after it), so bytewise without
 * comparing two paths (walking.md, "Sorted output"). A subdirectory's path
 * is longer than its parent's: no cycle, however the records read. */
static void
rec_pass_dir(struct rec_pass *p, const struct rec_dir *d)
{
  struct rd r = {d->at, d->end, false};
  const gsize base = p->path->len;
  for (guint32 i = 0; i < d->n && !r.bad && !p->bad; i++) {
    struct rec_entry rec;
    r_rec(&r, &rec);
    if (r.bad)
      break;
    g_string_truncate(p->path, base);
    if (base)
      g_string_append_c(p->path, '/');
    g_string_append_len(p->path, rec.name, (gssize)rec.len);
    if (rec.kind == MEMO_ASKED)
      continue;
    if (rec.kind != MEMO_RESULT) {
      const struct span key = {p->path->str, p->path->len};
      const struct rec_dir *sub = g_hash_table_lookup(p->t->by_path, &key);
      if (sub && !(sub->flags & DIR_WAY))
        rec_pass_dir(p, sub);
      continue;
    }
    for (uint64_t bits = rec.mask; bits; bits &= bits - 1) {
      const unsigned b = (unsigned)__builtin_ctzll(bits);
      if (b < p->members->len)
        p->fn(g_array_index(p->members, size_t, b), p->path->str, p->path->len, p->data);
    }
  }
  if (r.bad)
    p->bad = true;
  g_string_truncate(p->path, base);
}

/* Start directories in the order the walk takes them (subtree_order()). */
static int
compare_starts(gconstpointer a, gconstpointer b)
{
  const struct rec_dir *x = *(const struct rec_dir *const *)a;
  const struct rec_dir *y = *(const struct rec_dir *const *)b;
  return subtree_order(x->path.s, x->path.len, y->path.s, y->path.len);
}

/* Hand every result of cached walk W (group GRP's; its file's records read
 * and checked) to FN, each query's in the order a walk of the same tree
 * prints them: from the root, if it was read (every other directory is
 * below it), else from each start directory below no other, in path order.
 * False if the records do not parse (FN may have had some results). */
bool
rec_pass(const struct cached_walk *w, const GArray *members, rec_emit_fn fn, void *data)
{
  const struct cache_file *c = w->file;
  struct rec_tree t;
  if (!c->records_ok || !rec_tree_init(&t, w))
    return false;
  GPtrArray *tops = g_ptr_array_new();
  for (guint i = 0; i < t.n; i++) {
    const struct rec_dir *d = &t.dirs[i];
    if (!(d->flags & DIR_WAY) && (d->path.len == 0 || (d->flags & DIR_START)))
      g_ptr_array_add(tops, (gpointer)d);
  }
  g_ptr_array_sort(tops, compare_starts);
  struct rec_pass p = {&t, members, g_string_new(NULL), fn, data, false};
  const struct rec_dir *top = NULL;
  for (guint i = 0; i < tops->len && !p.bad; i++) {
    const struct rec_dir *d = tops->pdata[i];
    /* One below the last one taken came in its pass (they sort after it). */
    if (top && (top->path.len == 0 ||
                (d->path.len > top->path.len && d->path.s[top->path.len] == '/' &&
                 memcmp(d->path.s, top->path.s, top->path.len) == 0)))
      continue;
    top = d;
    g_string_truncate(p.path, 0);
    g_string_append_len(p.path, d->path.s, (gssize)d->path.len);
    rec_pass_dir(&p, d);
  }
  g_string_free(p.path, TRUE);
  g_ptr_array_unref(tops);
  rec_tree_clear(&t);
  return !p.bad;
}

bool
cached_walk_asked(const struct cached_walk *w,
                  void (*fn)(const char *dir, size_t dlen, const char *name, size_t nlen,
                             unsigned type, void *data),
                  void *data)
{
  struct rd r;
  if (!cached_walk_dirs(w, &r.p, &r.end))
    return false;
  r.bad = false;
  GString *path = g_string_new(NULL);
  for (guint32 i = 0; i < w->n_dirs && !r.bad; i++) {
    struct dir_entry e;
    r_dir_skim(&r, &e, path);
    /* The questions are in the entries (checked there): the records are
     * not read. */
    struct rd qr = {e.asked, r.p, false};
    for (guint32 k = 0; !r.bad && k < e.n_asked; k++) {
      struct question q;
      r_question(&qr, &q);
      fn(e.path, e.len, q.name, q.len, q.type, data);
    }
  }
  g_string_free(path, TRUE);
  return !r.bad && r.p == r.end;
}

static void
count_result(size_t q, const char *path, size_t len, void *data)
{
  (void)q;
  g_assert(strlen(path) == len);
  ++*(long *)data;
}

long
cache_read_all(const char *path, char **why)
{
  struct cache_file *c = cache_load(path, why);
  if (c == NULL)
    return -1;
  /* The blocks first, one at a time from the file, as the re-check with
   * watchman's answer reads them; then the region whole. */
  long blocks = 0;
  for (guint i = 0; i < c->walks->len; i++) {
    bool corrupt = false;
    if (!cursor_agrees(c->walks->pdata[i], &corrupt) && blocks == 0)
      blocks = corrupt ? -4 : -3;
  }
  const guint8 *at, *end;
  long results = 0;
  if (c->walks->len && !cached_walk_dirs(c->walks->pdata[0], &at, &end))
    results = c->dirs_sums_ok ? -3 : -4;
  records_read(c);
  if (results >= 0 && !c->records_ok)
    results = -2;
  /* A group of 64 queries: every bit of a mask is a query. */
  GArray *members = g_array_new(FALSE, FALSE, sizeof(size_t));
  for (size_t q = 0; q < 64; q++)
    g_array_append_val(members, q);
  for (guint i = 0; i < c->walks->len && results >= 0; i++) {
    const struct cached_walk *w = c->walks->pdata[i];
    if (!marks_agree(w)) {
      results = -3;
      break;
    }
    struct walk_memo *m = cached_memo(w);
    walk_memo_free(m);
    if (!rec_pass(w, members, count_result, &results) && results >= 0)
      results = -2;
  }
  g_array_unref(members);
  cache_file_free(c);
  return results >= 0 && blocks < 0 ? blocks : results;
}

bool
cache_test_seal(uint8_t *index, size_t index_len, const uint8_t *dirs, size_t dirs_len,
                const uint8_t *recs, size_t recs_len)
{
  struct cache_file *c = index_parse((const gchar *)index, index_len,
                                     cache_file_new(dirs_len, recs_len));
  if (c == NULL)
    return false;
  for (guint i = 0; i < c->walks->len; i++) {
    const struct cached_walk *w = c->walks->pdata[i];
    for (guint32 m = 0; m < w->n_marks; m++) {
      const guint64 from = mark_at(w, m);
      const guint64 sum = checksum(dirs + (mark_dat(w, m) >> 1), (gsize)(block_end(w, m) - from));
      const guint64 rsum = checksum(recs + (mark_rat(w, m) >> 1), (gsize)mark_rlen(w, m));
      put_le(index + (w->marks - index) + MARK_SIZE * (size_t)m + 8, sum, 8);
      put_le(index + (w->marks - index) + MARK_SIZE * (size_t)m + 36, rsum, 8);
    }
  }
  cache_file_free(c);
  return true;
}
