/* trawl — the cache file's layout (private; the files of libcore/src/cache/).
 *
 * The grammar of the file, its flags, and the readers of its fields, which
 * every pass over a cached walk uses: the reader of the whole file and the
 * passes over the records (cachefile.c), the re-check of the directories'
 * stamps (recheck.c), the watch list (watch.c). The writers are
 * cachefile.c's alone. Every reader checks each length against the end:
 * R->bad, once set, stays, and a bad read gives zeros and "".
 */
#ifndef TRAWL_CACHE_FORMAT_H
#define TRAWL_CACHE_FORMAT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <glib.h>

#include "../memo.h"
#include "watchman.h"

G_BEGIN_DECLS

/* The header: magic (8 bytes), format version (u32), zero (u32), body
 * length (u64), checksum of the index (u64), zero (u64: format 13 keeps a
 * sum per block of records, in its mark), index length (u64), dirs length
 * (u64). The body: the index, then
 * the dirs (every walk's dir entries, one walk's after another's, in the
 * walks' order: DIRS LENGTH bytes), then the records, little-endian
 * throughout:
 *
 *   index   := str version, str queries, str base, u32 n, walk[n]
 *   base    := nothing (the file holds every block it marks), or u64 size,
 *              u64 sum: the file holds only the blocks written since
 *              its base, the file PATH.base of SIZE bytes whose header's
 *              index sum is SUM (a whole file, the one it was written over:
 *              an overlay, format 14); a mark's WHERE may point into it
 *   queries := u32 n, query[n] (in a str: compared as one span of bytes)
 *   query   := str root, u32 n, pattern[n] (included), u32 n, pattern[n]
 *              (excluded), u8 hidden, u8 follow, u32 types, i32 max_depth,
 *              u8 one_file_system, u32 ignore
 *   pattern := str text, u32 dialect, u32 flags
 *   walk    := str root, u64 dev, u64 ino, u8 flags (WALK_PROBLEMS), u32 n,
 *              u64 members[n], str env, str watch, str rel, str clock,
 *              var recrawls (watchman's, before the walk; watch "": none),
 *              str cookies, var dev, var ino (the watch's cookie directory
 *              below the watch's root, "" the root, as the clock was taken;
 *              ino 0: unknown),
 *              u32 n, source[n], u32 n, u64 bytes (its N dirs: the next
 *              BYTES of the dirs, none without a dir: N 0 and BYTES 0 go
 *              together), u32 every, u32 k, mark[k] (K 0 with N 0 only),
 *              str keys, u32 m, var must[m]
 *   mark    := u64 at, u64 sum, u32 first, u64 rat, u64 rlen, u64 rsum,
 *              u64 dat, u32 key: a
 *              block of the walk's dirs and of their records. Its first
 *              dir is number FIRST (the first mark's 0, each after it
 *              larger by 1 to EVERY, the last's below N by at most EVERY),
 *              at AT in the walk's BYTES of dirs (the first 0, each after
 *              it larger, all below BYTES); that dir shares nothing with
 *              the one before it (SHARED 0), so that reading may start
 *              there (dir_cursor, cachefile.h). SUM is XXH3-64 of the
 *              block's dirs, the bytes from AT to the next mark's AT (the
 *              last's: to BYTES), checked before they are parsed. Its
 *              dirs' records are the RLEN bytes at RAT, their sum RSUM,
 *              checked before a record of the block is parsed: a dir's
 *              OFFSET is from RAT. AT places the block among the walk's
 *              dirs; where its bytes are is DAT: RAT and DAT are WHERE, a
 *              file's region of records (RAT) or of dirs (DAT), the base's
 *              (bit 0 set) or this file's own (clear), at the offset the
 *              other bits give (WHERE >> 1), the bytes within it. A block
 *              is copied as it is, sums and all, by a writer that keeps
 *              it (a check that walked only what changed): so a block
 *              holds 1 to EVERY dirs, not always EVERY, and corruption in
 *              a copied block is still found when it is read. KEY is where
 *              the path of the block's first dir is in KEYS: the bytes
 *              from KEY to the next mark's KEY (the last's: to the end of
 *              KEYS; the first mark's KEY 0, none after it smaller), each
 *              path after the one before in path order (format 15: a
 *              search by path reads no block, and a writer keeps a block
 *              whole by its path and the next one's without reading it);
 *              checked against the block's first dir when the block is
 *              read (a reader that finds them apart finds the file
 *              corrupt)
 *   must    := the dirs watchman can never vouch for (watchman_may_vouch()
 *              false: the root, racy, a start directory or on the way to
 *              one, a nested repository's, absent), by number, ascending:
 *              the first as is, each after it as its distance from the one
 *              before less one; all below n
 *   dirs    := per walk, in the walks' order, its dir[n] (BYTES long): the
 *              blocks its marks delimit
 *   source  := str path, u8 kind (IGNORE_SOURCE_*, or SOURCE_INDEX_RACY
 *              or SOURCE_RACY), stamp
 *   dir     := var shared, var len, bytes: its path, the first SHARED bytes
 *              of the path before it (the first's: none) and then LEN
 *              more; var live, stamp, var has, stamp, stamp,
 *              u8 flags (DIR_RACY | DIR_WAY | DIR_START | DIR_RULES_RACY |
 *              DIR_ASKED | DIR_REPO), [var len, bytes: with DIR_REPO, a
 *              nested repository's sources, as memo.h's repo_sources_add()
 *              writes them], [var q, question[q]: with DIR_ASKED, q at
 *              least 1], var n, var offset:
 *              its N records at OFFSET in its block's records
 *   question := var len, bytes name, u8 type (ASKED_*): a question the
 *              walk asked of the index about an entry of the directory
 *              (MEMO_ASKED in the memo, after its records); kept here and
 *              not among the records, so that a re-check after the index
 *              moved asks them again without reading the records
 *   records := rec...
 *   rec     := var len, bytes name, u8 kind (MEMO_* but MEMO_ASKED), u8
 *              type (a result's entry type, a subtree's
 *              MEMO_TRACKED_ONLY), var mask
 *   stamp   := u8 tag (STAMP_*; 0: nothing there), then var dev unless
 *              STAMP_DEV (the walk's), var ino, svar mtime_s, var mtime_ns,
 *              svar ctime_s and var ctime_ns unless STAMP_CTIME (the same
 *              as mtime), var size
 *   str     := u32 length, bytes
 *   var     := an unsigned number in N bytes, N from 1 to 9: the first
 *              byte's N-1 low bits are 0 and the next is 1 (N = 9: the
 *              first byte is 0), then the value, little-endian, in the
 *              rest of the N bytes' bits (7N of them for N < 9, 64 for 9);
 *              svar: zigzag (0, -1, 1, -2, ...), then var
 *
 * Plain fields rather than a serialization library: they are read at
 * memcpy speed, every length checked against the end; the queries, written
 * by one function, are compared as bytes. The index is read and checked on
 * every run, so it is kept small: a directory's path shares its start with
 * the one before it (they are in path order), a stamp leaves out the walk's
 * device and a ctime equal to the mtime, and numbers take the bytes they
 * need. The records have their own sums, a block's verified only when it
 * is read: `trawl check` on an unchanged tree reads the index alone and the
 * dirs; one that finds a change reads the records of the blocks it parses,
 * and copies the others unread into the new file (format 13), or leaves them
 * where they are and writes the new file over the last as its base, when
 * they are most of it (format 14, docs/cache.md "Writing over a base"). Why, with the numbers: docs/adr/0004-cache-file-read-cost.md. A
 * re-check with watchman's answer reads less still: the marks and their
 * keys let it find a directory by its path in a binary search over the
 * index and a read of one block, at most DIR_MARK_EVERY entries, the must
 * list names those it stats whatever watchman says, and
 * of the dirs it reads only the blocks those are in, each checked against
 * its mark's sum (docs/cache.md, "Watchman"). */
#define DIR_INDEX_MIN 10
#define REC_MIN 4
#define DIR_RACY 1
#define DIR_WAY 2
#define DIR_START 4
#define DIR_RULES_RACY 8
#define DIR_ASKED 16    /* its records hold questions asked of the index */
#define DIR_REPO 32     /* it holds a nested repository: its sources follow (memo.h) */
#define WALK_PROBLEMS 1 /* it had problems (a directory it could not read): no quick re-check */
#define DIR_MARK_EVERY 64 /* the writer's EVERY: a lookup by path reads at most this many dirs */
#define MARK_SIZE 56      /* a mark in the index: fixed width, for a binary search */
#define STAMP_PRESENT 1
#define STAMP_DEV 2     /* on the walk's device: not written */
#define STAMP_CTIME 4   /* ctime = mtime: not written */

/* Could watchman vouch for a directory recorded as WAS, its path PATH (LEN
 * bytes, below the walk's root), START_OR_WAY if it is a start directory or
 * on the way to one, if it named nothing in it? Not for the root, a racy
 * one, one holding a nested repository, a start directory or the way to
 * one, one that was not there, one in a version control directory (.git:
 * watchman reports nothing there; format 11): those are stat'ed every time.
 * The writer lists them (must, above) and the re-check reads that list
 * (recheck.c): one rule for both, here with the layout rather than in
 * either. (A walk whose root is itself in .git takes no clock: watchman.c.) */
static inline bool
watchman_may_vouch(const struct dir_stamp *was, const char *path, size_t len, bool start_or_way)
{
  return len > 0 && !was->racy && !was->rules_racy && !was->repo && !start_or_way &&
         was->st.present && !wm_vcs_path(path, len);
}

static inline guint64
get_le(const guint8 *p, int n)
{
  guint64 v = 0;
  for (int i = n; i-- > 0;)
    v = (v << 8) | p[i];
  return v;
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

/* A var (see the layout): its length is in its first byte, so it is one
 * load and a shift, not a loop over bytes that each say whether one
 * follows (LEB128). */
static inline guint64
r_var(struct rd *r)
{
  if (G_UNLIKELY(r->bad || r->p == r->end)) {
    r->bad = true;
    return 0;
  }
  const guint8 first = *r->p;
  const unsigned n = first ? (unsigned)__builtin_ctz(first) + 1 : 9;
  if (G_UNLIKELY((size_t)(r->end - r->p) < n)) {
    r->bad = true;
    return 0;
  }
  guint64 v;
  if (n == 9) {
    memcpy(&v, r->p + 1, 8);
    v = GUINT64_FROM_LE(v);
  } else if (G_LIKELY(r->end - r->p >= 8)) {
    memcpy(&v, r->p, 8);
    v = GUINT64_FROM_LE(v);
    if (n < 8)
      v &= ((guint64)1 << (8 * n)) - 1;
    v >>= n;
  } else {
    v = get_le(r->p, (int)n) >> n;
  }
  r->p += n;
  return v;
}

static inline gint64
r_svar(struct rd *r)
{
  const guint64 v = r_var(r);
  return (gint64)(v >> 1) ^ -(gint64)(v & 1);
}

static inline const char *
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

/* LEN bytes at R (LEN read before), or "" with R bad. */
static inline const char *
r_bytes(struct rd *r, size_t len)
{
  if (r->bad || (size_t)(r->end - r->p) < len) {
    r->bad = true;
    return "";
  }
  const char *s = (const char *)r->p;
  r->p += len;
  return s;
}

/* A count of items each at least MIN bytes long: no more than fit. */
static inline guint32
r_count(struct rd *r, size_t min)
{
  guint32 n = (guint32)r_le(r, 4);
  if (!r->bad && (size_t)(r->end - r->p) / min < n)
    r->bad = true;
  return r->bad ? 0 : n;
}

/* A stamp written by w_stamp() for a walk on device DEV. */
static inline void
r_stamp(struct rd *r, struct stamp *s, guint64 dev)
{
  memset(s, 0, sizeof *s);
  const guint8 tag = (guint8)r_le(r, 1);
  if (tag == 0)
    return;
  if (tag > (STAMP_PRESENT | STAMP_DEV | STAMP_CTIME) || !(tag & STAMP_PRESENT)) {
    r->bad = true;
    return;
  }
  s->present = true;
  s->dev = tag & STAMP_DEV ? dev : r_var(r);
  s->ino = r_var(r);
  s->mtime_s = r_svar(r);
  s->mtime_ns = (uint32_t)r_var(r);
  if (tag & STAMP_CTIME) {
    s->ctime_s = s->mtime_s;
    s->ctime_ns = s->mtime_ns;
  } else {
    s->ctime_s = r_svar(r);
    s->ctime_ns = (uint32_t)r_var(r);
  }
  s->size = r_var(r);
}

/* Step over a var (or svar) at R. */
static inline void
r_skip_var(struct rd *r)
{
  if (G_UNLIKELY(r->bad || r->p == r->end)) {
    r->bad = true;
    return;
  }
  const unsigned n = *r->p ? (unsigned)__builtin_ctz(*r->p) + 1 : 9;
  if (G_UNLIKELY((size_t)(r->end - r->p) < n))
    r->bad = true;
  else
    r->p += n;
}

/* Step over a stamp written by w_stamp(). */
static inline void
r_skip_stamp(struct rd *r)
{
  const guint8 tag = (guint8)r_le(r, 1);
  if (tag == 0)
    return;
  if (tag > (STAMP_PRESENT | STAMP_DEV | STAMP_CTIME) || !(tag & STAMP_PRESENT)) {
    r->bad = true;
    return;
  }
  const unsigned vars = 4 + (tag & STAMP_DEV ? 0 : 1) + (tag & STAMP_CTIME ? 0 : 2);
  for (unsigned k = 0; k < vars; k++)
    r_skip_var(r);
}

/* A directory's entry (in the dirs, format 10; in the index before). */
struct dir_entry {
  const char *path;     /* PATH's text, NUL-terminated */
  size_t len;
  guint64 live;
  struct dir_stamp was;
  guint8 flags;         /* DIR_* */
  const guint8 *asked;  /* with DIR_ASKED: its questions (r_question()), in the dirs */
  guint32 n_asked;
  guint32 n;            /* its records */
  guint64 off;
  const guint8 *body, *body_end; /* its bytes from LIVE to its questions' end, in the dirs
                                   (r_dir(): what a writer copies as it is) */
};

/* A question asked of the index (question in the layout); NAME points
 * into the dirs. */
struct question {
  const char *name;
  size_t len;
  guint8 type;          /* ASKED_* */
};

/* The question at R; R bad if it is not one a walk asks (a name of no
 * bytes, or with a '/' or a NUL in it). */
static inline void
r_question(struct rd *r, struct question *q)
{
  q->len = (size_t)r_var(r);
  q->name = r_bytes(r, r->bad ? 0 : q->len);
  q->type = (guint8)r_le(r, 1);
  if (!r->bad && (q->len == 0 || memchr(q->name, '/', q->len) || memchr(q->name, '\0', q->len)))
    r->bad = true;
}

/* With DIR_ASKED: E's questions, stepped over (each checked) and kept
 * where they are. */
static inline void
r_questions(struct rd *r, struct dir_entry *e)
{
  e->asked = NULL;
  e->n_asked = 0;
  if (!(e->flags & DIR_ASKED))
    return;
  const guint64 n = r_var(r);
  /* A question is three bytes at least. */
  if (n == 0 || n > (guint64)(r->end - r->p) / 3)
    r->bad = true;
  if (r->bad)
    return;
  e->asked = r->p;
  e->n_asked = (guint32)n;
  for (guint64 i = 0; i < n && !r->bad; i++) {
    struct question q;
    r_question(r, &q);
  }
}

/* Does the path that shares SHARED bytes with PATH (the entry before it's,
 * as the reader holds it) and goes on with REST (LEN bytes) come after it,
 * as a walk's entries do (in path order, each once)? Before a block's first
 * entry a cursor holds no path, and anything comes after it (the root's ""
 * too). */
static inline bool
path_after(const GString *path, guint64 shared, const char *rest, guint64 len)
{
  if (shared < path->len) {
    /* (A block's first entry shares nothing, though it could.) */
    const size_t n = path->len - (size_t)shared;
    const int c = memcmp(rest, path->str + shared, MIN((size_t)len, n));
    return c > 0 || (c == 0 && len > n);
  }
  return len > 0 || path->len == 0;
}

/* The next directory of a walk on device DEV, into E. PATH holds the path
 * of the entry before it (empty before the first) and gets this one's.
 * Bad (R) if it does not come after that one; with AGAIN, PATH holds this
 * entry's own (it was read once: dir_cursor_find()), and is not compared. */
static inline void
r_dir_read(struct rd *r, struct dir_entry *e, guint64 dev, GString *path, bool again)
{
  const guint64 shared = r_var(r), len = r_var(r);
  if (shared > path->len || len > (guint64)(r->end - r->p))
    r->bad = true;
  const char *rest = r_bytes(r, r->bad ? 0 : (size_t)len);
  if (!r->bad &&
      (memchr(rest, '\0', (size_t)len) || (!again && !path_after(path, shared, rest, len))))
    r->bad = true; /* no path a walk writes, or out of order */
  if (r->bad) {
    g_string_truncate(path, 0);
  } else if (shared + len < path->allocated_len) {
    memcpy(path->str + shared, rest, (size_t)len);
    path->len = (gsize)(shared + len);
    path->str[path->len] = '\0';
  } else {
    g_string_truncate(path, (gsize)shared);
    g_string_append_len(path, rest, (gssize)len);
  }
  e->path = path->str;
  e->len = path->len;
  e->body = r->p;
  e->live = r_var(r);
  r_stamp(r, &e->was.st, dev);
  e->was.has = (guint32)r_var(r);
  r_stamp(r, &e->was.ignore[0], dev);
  r_stamp(r, &e->was.ignore[1], dev);
  e->flags = (guint8)r_le(r, 1);
  e->was.repo = NULL;
  e->was.repo_len = 0;
  if (e->flags & DIR_REPO) {
    const guint64 n = r_var(r);
    if (n == 0 || n > G_MAXUINT32)
      r->bad = true;
    const char *blk = r_bytes(r, r->bad ? 0 : (size_t)n);
    if (!r->bad) {
      e->was.repo = (const uint8_t *)blk;
      e->was.repo_len = (uint32_t)n;
    }
  }
  r_questions(r, e);
  e->body_end = r->p;
  e->was.racy = e->flags & DIR_RACY;
  e->was.rules_racy = e->flags & DIR_RULES_RACY;
  e->n = (guint32)r_var(r);
  e->off = r_var(r);
}

static inline void
r_dir(struct rd *r, struct dir_entry *e, guint64 dev, GString *path)
{
  r_dir_read(r, e, dev, path, false);
}

/* Step over the rest of a directory entry at R, after its path (its
 * flags, questions, records' count and offset into E). */
static inline void
r_dir_rest(struct rd *r, struct dir_entry *e)
{
  r_skip_var(r);   /* live */
  r_skip_stamp(r); /* the directory's */
  r_skip_var(r);   /* has */
  r_skip_stamp(r); /* its ignore files' */
  r_skip_stamp(r);
  e->flags = (guint8)r_le(r, 1);
  if (e->flags & DIR_REPO)
    r_bytes(r, (size_t)r_var(r));
  r_questions(r, e);
  e->n = (guint32)r_var(r);
  e->off = r_var(r);
}

/* The next directory entry of a walk at R as r_dir() reads it, but its
 * stamps only stepped over (E's were, has and live are not filled): what a
 * pass that wants the paths and the records needs. */
static inline void
r_dir_skim(struct rd *r, struct dir_entry *e, GString *path)
{
  const guint64 shared = r_var(r), len = r_var(r);
  const char *rest = r_bytes(r, (!r->bad && shared <= path->len) ? (size_t)len : 0);
  if (shared > path->len ||
      (!r->bad && (memchr(rest, '\0', (size_t)len) || !path_after(path, shared, rest, len))))
    r->bad = true;
  if (r->bad) {
    g_string_truncate(path, 0);
  } else {
    g_string_truncate(path, (gsize)shared);
    g_string_append_len(path, rest, (gssize)len);
  }
  e->path = path->str;
  e->len = path->len;
  r_dir_rest(r, e);
}

/* A record (rec in the layout); NAME points into the records. */
struct rec_entry {
  const char *name;
  size_t len;
  guint8 kind, type;
  guint64 mask;
};

/* A record at R, its fields read, its name not looked into: one that
 * r_rec() has read already. */
static inline void
r_rec_again(struct rd *r, struct rec_entry *e)
{
  e->len = (size_t)r_var(r);
  e->name = r_bytes(r, e->len);
  e->kind = (guint8)r_le(r, 1);
  e->type = (guint8)r_le(r, 1);
  e->mask = r_var(r);
}

/* A record at R; R bad if it is not one a walk writes (a name of no bytes,
 * or with a '/' or a NUL in it). */
static inline void
r_rec(struct rd *r, struct rec_entry *e)
{
  r_rec_again(r, e);
  if (!r->bad && (e->len == 0 || memchr(e->name, '/', e->len) || memchr(e->name, '\0', e->len)))
    r->bad = true;
}

G_END_DECLS

#endif /* TRAWL_CACHE_FORMAT_H */
