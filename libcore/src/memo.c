/* trawl — walk memos: storage of the directory entries (see memo.h). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <string.h>
#include <time.h>

#include "ignore.h"
#include "memo.h"

struct memo_key {
  unsigned root;
  size_t len;
  const char *path;
};

static guint
key_hash(gconstpointer p)
{
  const struct memo_key *k = p;
  guint h = 5381u + k->root;
  for (size_t i = 0; i < k->len; i++)
    h = h * 33 + (guchar)k->path[i];
  return h;
}

static gboolean
key_equal(gconstpointer a, gconstpointer b)
{
  const struct memo_key *x = a, *y = b;
  return x->root == y->root && x->len == y->len && memcmp(x->path, y->path, x->len) == 0;
}

guint
span_hash(gconstpointer p)
{
  const struct span *k = p;
  guint h = 5381;
  for (size_t i = 0; i < k->len; i++)
    h = h * 33 + (guchar)k->s[i];
  return h;
}

gboolean
span_equal(gconstpointer a, gconstpointer b)
{
  const struct span *x = a, *y = b;
  return x->len == y->len && memcmp(x->s, y->s, x->len) == 0;
}

struct walk_memo *
walk_memo_new(void)
{
  struct walk_memo *m = g_new0(struct walk_memo, 1);
  m->dirs = g_hash_table_new_full(key_hash, key_equal, g_free, (GDestroyNotify)memo_dir_unref);
  return m;
}

void
walk_memo_free(struct walk_memo *m)
{
  if (m == NULL)
    return;
  g_hash_table_unref(m->dirs);
  if (m->tops)
    g_ptr_array_unref(m->tops);
  g_free(m);
}

const struct memo_dir *
walk_memo_lookup(const struct walk_memo *m, unsigned root, const char *path, size_t len)
{
  struct memo_key k = {root, len, path};
  return g_hash_table_lookup(m->dirs, &k);
}

void
walk_memo_add(struct walk_memo *m, struct memo_dir *d)
{
  struct memo_key *k = g_new(struct memo_key, 1);
  k->root = d->root;
  k->len = d->len;
  k->path = d->path; /* lives as long as D, which the table holds */
  const struct memo_dir *old = walk_memo_lookup(m, d->root, d->path, d->len);
  if (old && old->was.racy)
    m->racy--;
  g_hash_table_replace(m->dirs, k, memo_dir_ref(d));
  if (d->was.racy)
    m->racy++;
}

struct memo_dir *
memo_dir_new(unsigned root, const char *path, size_t len, guint n, size_t names)
{
  struct memo_dir *d = g_malloc0(sizeof *d + n * sizeof(struct memo_rec) + names + len + 1);
  d->refs = 1;
  d->root = root;
  d->n = n;
  char *at = (char *)&d->recs[n] + names;
  memcpy(at, path, len);
  at[len] = '\0';
  d->path = at;
  d->len = len;
  return d;
}

char *
memo_dir_names(struct memo_dir *d)
{
  return (char *)&d->recs[d->n];
}

struct memo_dir *
memo_dir_ref(const struct memo_dir *d)
{
  struct memo_dir *m = (struct memo_dir *)d;
  g_atomic_int_inc(&m->refs);
  return m;
}

void
memo_dir_unref(struct memo_dir *d)
{
  if (d && g_atomic_int_dec_and_test(&d->refs)) {
    if (d->repo_own)
      g_bytes_unref(d->repo_own);
    g_free(d);
  }
}

void
stamp_of(struct stamp *out, const struct stat *st, bool with_size)
{
  memset(out, 0, sizeof *out);
  out->present = true;
  out->dev = (uint64_t)st->st_dev;
  out->ino = (uint64_t)st->st_ino;
  out->mtime_s = (int64_t)st->st_mtim.tv_sec;
  out->mtime_ns = (uint32_t)st->st_mtim.tv_nsec;
  out->ctime_s = (int64_t)st->st_ctim.tv_sec;
  out->ctime_ns = (uint32_t)st->st_ctim.tv_nsec;
  out->size = with_size ? (uint64_t)st->st_size : 0;
}

bool
stamp_equal(const struct stamp *a, const struct stamp *b)
{
  if (a->present != b->present)
    return false;
  if (!a->present)
    return true;
  return a->dev == b->dev && a->ino == b->ino && a->mtime_s == b->mtime_s &&
         a->mtime_ns == b->mtime_ns && a->ctime_s == b->ctime_s && a->ctime_ns == b->ctime_ns &&
         a->size == b->size;
}

/* ---- the rule: is this directory as recorded? ------------------------------ */

void
ignore_file_stamps(int at, const char *dir, unsigned has, struct stamp out[2])
{
  const size_t dlen = strlen(dir);
  for (unsigned k = 0; k < IGNORE_FILES; k++) {
    memset(&out[k], 0, sizeof out[k]);
    if (!(has & ignore_file_has[k]))
      continue;
    const char *name = ignore_file_name[k];
    char small[512];
    char *path = small;
    const size_t need = dlen + 1 + strlen(name) + 1;
    if (dlen) {
      if (need > sizeof small)
        path = g_malloc(need);
      memcpy(path, dir, dlen);
      path[dlen] = '/';
      strcpy(path + dlen + 1, name);
    }
    struct stat st;
    if (fstatat(at, dlen ? path : name, &st, AT_SYMLINK_NOFOLLOW) == 0)
      stamp_of(&out[k], &st, true);
    if (path != small)
      g_free(path);
  }
}

void
source_stamp_at(int at, const char *path, unsigned kind, struct stamp *out)
{
  struct stat st;
  memset(out, 0, sizeof *out);
  if (kind == IGNORE_SOURCE_ENTRY) {
    out->present = fstatat(at, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
    return;
  }
  if (fstatat(at, path, &st, 0) != 0)
    return;
  if (kind == IGNORE_SOURCE_GITDIR) {
    /* Its listing's every change moves its mtime and ctime. */
    stamp_of(out, &st, false);
    return;
  }
  if (kind == IGNORE_SOURCE_EXISTS || S_ISDIR(st.st_mode)) {
    out->present = true;
    out->size = S_ISDIR(st.st_mode) ? 1 : 0;
    return;
  }
  stamp_of(out, &st, true);
}

/* ---- a nested repository's sources (memo.h) ---- */

#define REPO_STAMP_BYTES (8 + 8 + 8 + 4 + 8 + 4 + 8)

static void
put_u(GByteArray *b, uint64_t v, int n)
{
  guint8 bytes[8];
  for (int i = 0; i < n; i++)
    bytes[i] = (guint8)(v >> (8 * i));
  g_byte_array_append(b, bytes, (guint)n);
}

static uint64_t
get_u(const uint8_t *p, int n)
{
  uint64_t v = 0;
  for (int i = n; i-- > 0;)
    v = (v << 8) | p[i];
  return v;
}

bool
repo_sources_add(GByteArray *b, int at, const char *path, unsigned kind,
                 const struct timespec *from)
{
  const size_t len = MIN(strlen(path), 0xffff);
  struct stamp st;
  source_stamp_at(at, path, kind, &st);
  put_u(b, kind, 1);
  put_u(b, len, 2);
  g_byte_array_append(b, (const guint8 *)path, (guint)len);
  put_u(b, st.present, 1);
  if (st.present) {
    put_u(b, st.dev, 8);
    put_u(b, st.ino, 8);
    put_u(b, (uint64_t)st.mtime_s, 8);
    put_u(b, st.mtime_ns, 4);
    put_u(b, (uint64_t)st.ctime_s, 8);
    put_u(b, st.ctime_ns, 4);
    put_u(b, st.size, 8);
  }
  return stamp_racy(&st, from);
}

/* The source at *P: its kind, path and stamp; false when it does not
 * parse. */
static bool
repo_source_read(const uint8_t **p, const uint8_t *end, unsigned *kind, const char **path,
                 size_t *plen, struct stamp *st)
{
  const uint8_t *q = *p;
  memset(st, 0, sizeof *st);
  if (end - q < 4)
    return false;
  *kind = q[0];
  *plen = (size_t)get_u(q + 1, 2);
  q += 3;
  if ((size_t)(end - q) < *plen + 1)
    return false;
  *path = (const char *)q;
  q += *plen;
  const uint8_t present = *q++;
  if (present > 1 || *plen == 0 || memchr(*path, '\0', *plen))
    return false;
  if (present) {
    if (end - q < REPO_STAMP_BYTES)
      return false;
    st->present = true;
    st->dev = get_u(q, 8);
    st->ino = get_u(q + 8, 8);
    st->mtime_s = (int64_t)get_u(q + 16, 8);
    st->mtime_ns = (uint32_t)get_u(q + 24, 4);
    st->ctime_s = (int64_t)get_u(q + 28, 8);
    st->ctime_ns = (uint32_t)get_u(q + 36, 4);
    st->size = get_u(q + 40, 8);
    q += REPO_STAMP_BYTES;
  }
  *p = q;
  return true;
}

bool
repo_sources_next(const uint8_t **p, const uint8_t *end, const char **path, size_t *plen,
                  unsigned *kind)
{
  struct stamp st;
  if (*p < end && repo_source_read(p, end, kind, path, plen, &st))
    return true;
  *p = end;
  return false;
}

bool
repo_sources_hold(const uint8_t *blk, size_t len, int at, const char *dir)
{
  const uint8_t *p = blk, *end = blk + len;
  const size_t dlen = strlen(dir);
  GString *path = g_string_sized_new(dlen + 64);
  bool same = true;
  while (same && p < end) {
    unsigned kind;
    const char *name;
    size_t nlen;
    struct stamp was, now;
    same = repo_source_read(&p, end, &kind, &name, &nlen, &was);
    if (!same)
      break;
    g_string_truncate(path, 0);
    if (dlen && name[0] != '/') {
      g_string_append_len(path, dir, (gssize)dlen);
      g_string_append_c(path, '/');
    }
    g_string_append_len(path, name, (gssize)nlen);
    source_stamp_at(at, path->str, kind, &now);
    same = stamp_equal(&was, &now);
  }
  g_string_free(path, TRUE);
  return same;
}

enum dir_verdict
dir_check_rules(const struct dir_stamp *was, unsigned has_now, int at, const char *dir)
{
  if (was->rules_racy || was->has != has_now)
    return DIR_RULES_CHANGED;
  /* A nested repository's rules come from inside its `.git` as well. */
  if (was->repo && !repo_sources_hold(was->repo, was->repo_len, at, dir))
    return DIR_RULES_CHANGED;
  if (!(was->has & (ignore_file_has[0] | ignore_file_has[1])))
    return DIR_SAME;
  struct stamp now[IGNORE_FILES];
  ignore_file_stamps(at, dir, was->has, now);
  for (unsigned k = 0; k < IGNORE_FILES; k++)
    if (!stamp_equal(&now[k], &was->ignore[k]))
      return DIR_RULES_CHANGED;
  return DIR_SAME;
}

enum dir_verdict
dir_check(const struct dir_stamp *was, const struct stat *now, int at, const char *dir)
{
  if (!was->st.present) /* a start directory that was not there */
    return now ? DIR_CHANGED : DIR_SAME;
  if (was->rules_racy)
    return DIR_RULES_CHANGED;
  if (was->racy || now == NULL)
    return DIR_CHANGED;
  struct stamp is;
  stamp_of(&is, now, false);
  if (!stamp_equal(&is, &was->st))
    return DIR_CHANGED;
  /* The same stamp: the same names, so the same `has`. Its ignore files,
   * edited in place, change no directory's stamp. */
  return dir_check_rules(was, was->has, at, dir);
}

int
subtree_order(const char *a, size_t alen, const char *b, size_t blen)
{
  if (alen == 0 || blen == 0)
    return (alen != 0) - (blen != 0);
  const size_t n = MIN(alen, blen);
  const int c = memcmp(a, b, n);
  if (c)
    return c;
  const int ca = alen > n ? (unsigned char)a[n] : '/';
  const int cb = blen > n ? (unsigned char)b[n] : '/';
  return ca - cb;
}

void
racy_from_now(struct timespec *from)
{
  /* A change is stamped with the coarse clock, which shows the time of its
   * last update: it trails the fine clock by up to a tick, plus the phase
   * of the tick at which updates run (up to another): two ticks, on a
   * machine whose ticks come on time. On a loaded virtual machine they
   * come late, and the coarse clock trails by more (15.7 ms at HZ=250 on
   * a 2-core VM with both cores busy: docs/cache.md). So the window also
   * reaches back to the coarse clock's own reading: every change from now
   * on is stamped at or after it, however late its tick. */
  struct timespec res = {0, 0}, coarse = {0, 0};
  clock_getres(CLOCK_REALTIME_COARSE, &res);
  const long granule = MAX(2 * res.tv_nsec, 1000000L);
  clock_gettime(CLOCK_REALTIME_COARSE, &coarse);
  clock_gettime(CLOCK_REALTIME, from);
  from->tv_nsec -= granule;
  while (from->tv_nsec < 0) {
    from->tv_nsec += 1000000000L;
    from->tv_sec--;
  }
  if (coarse.tv_sec < from->tv_sec ||
      (coarse.tv_sec == from->tv_sec && coarse.tv_nsec < from->tv_nsec))
    *from = coarse;
}

/* File systems that keep coarser times than the kernel's clock, known by
 * what their times look like: whole seconds (vfat keeps 2 s, ext4 with
 * 128-byte inodes 1 s) and hundredths (exFAT: 10 ms). A time cut to one
 * of these grains is also the stamp of a change up to a grain after it;
 * finer times are taken as the clock's own. */
static const struct {
  uint32_t divides; /* the nanoseconds of such a time */
  int64_t grain;    /* ns */
} time_grains[] = {
  {1000000000u, 2000000000LL},
  {10000000u, 10000000LL},
};

/* Is a time of SEC seconds and NS nanoseconds, or a change up to its grain
 * later, at or after FROM? */
static bool
time_racy(int64_t sec, uint32_t ns, const struct timespec *from)
{
  int64_t grain = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(time_grains) && grain == 0; i++)
    if (ns % time_grains[i].divides == 0)
      grain = time_grains[i].grain;
  /* Far from FROM (more than any grain): decided by the seconds, which
   * keeps the nanoseconds below from overflowing. */
  if (sec < from->tv_sec - 3)
    return false;
  if (sec > from->tv_sec + 3)
    return true;
  return (sec - from->tv_sec) * 1000000000LL + ns - from->tv_nsec + grain >= 0;
}

bool
stamp_racy(const struct stamp *s, const struct timespec *from)
{
  return s->present &&
         (time_racy(s->mtime_s, s->mtime_ns, from) || time_racy(s->ctime_s, s->ctime_ns, from));
}
