/* trawl — a repository's index, read as git reads it (see gitindex.h).
 *
 * The file is mapped and walked entry by entry: a header ("DIRC", the
 * version, the count), the entries (stat data, mode, object name, flags,
 * then the path: NUL-terminated and padded to eight bytes in formats 2 and
 * 3; in format 4 a number of bytes to drop from the end of the previous
 * path and the bytes to put in their place), the extensions (four-byte
 * signature, length; one whose signature starts with a capital letter may
 * be skipped, any other must be understood), and the checksum. A split
 * index's `link` extension names the shared index, and two EWAH bitmaps
 * say which of its entries the entries of this file replace (those come
 * first, their paths left empty) and which are deleted; the rest of this
 * file's entries are added. The result is one array of paths sorted as git
 * writes them (bytewise, then by stage; not checked, as git does not check
 * it when it reads), looked up by binary search: a file
 * is one search, a directory one search for the first path not before
 * "dir/", and a sparse index one more per ancestor for a `dir/` entry.
 *
 * Learned from gitformat-index(5) and from indexes git 2.39 writes (tests/
 * unit/gitindex_test.cpp reads every format it makes), not from its code.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gitindex.h"

#define HEADER_LEN 12
#define STAT_LEN 40           /* ctime, mtime (seconds, nanoseconds), dev, ino, mode, uid, gid, size */
#define MODE_AT 24            /* the mode's offset in an entry */
#define NAME_MASK 0x0fffu     /* the flags' name length; this value: 0xfff or longer */
#define FLAG_EXTENDED 0x4000u /* format 3 and later: sixteen more bits of flags follow */
#define STAGE_SHIFT 12
#define XFLAG_SKIP_WORKTREE 0x4000u
#define XFLAG_INTENT_TO_ADD 0x2000u
#define MODE_TYPE 0170000u
#define MODE_DIR 0040000u
#define MODE_GITLINK 0160000u
#define TYPE_DIR (MODE_DIR >> 12)         /* the mode's top four bits, */
#define TYPE_GITLINK (MODE_GITLINK >> 12) /* its byte at MODE_AT + 2 shifted by four */
#define MARK_STEP 8          /* every how many entries in place an offset is kept */
#define PREFETCH_AHEAD 2048   /* bytes: how far ahead of the parse the entries are asked for */
#define PUBLISH_STEP 256      /* a reader's thread tells how far it is after every this many entries */
#define FIRST_TARGET 4096     /* entries a reader's thread reads before a question asks for more */
#define THREAD_FROM (1u << 20) /* bytes: a smaller index is read by the thread that asks, at once */

static inline uint32_t
be32(const guint8 *p)
{
  uint32_t v;
  memcpy(&v, p, 4);
  return GUINT32_FROM_BE(v);
}

static inline unsigned
be16(const guint8 *p)
{
  return (unsigned)p[0] << 8 | p[1];
}

static uint64_t
be64(const guint8 *p)
{
  return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/* One file of an index, parsed: its entries in the file's order, and the
 * extensions that matter here. */
struct index_file {
  char *path;
  void *map;
  size_t len;
  unsigned version;
  struct gitindex_entry *entries; /* spelt out: format 4, and a split index's two files */
  uint32_t n;
  /* Formats 2 and 3: the entries where they are, from FIRST, with the offset
   * of every MARK_STEP-th (gitindex.h). */
  const guint8 *first;
  struct gitindex_mark *marks;
  char *keys;           /* the marked entries' paths, side by side */
  size_t keys_len, keys_cap;
  size_t fixed;
  GByteArray *names;    /* format 4: the paths spelt out (entries hold offsets until done) */
  const guint8 *link;   /* the `link` extension (a split index), or NULL */
  size_t link_len;
  bool sparse;          /* it holds sparse directory entries */
};

/* A read in a thread of its own (gitindex.h, "reading in a thread"). */
struct gitindex_reader {
  char *path;
  size_t hash_len;
  GThread *thread;            /* NULL: it was read by the thread that started it */
  /* pthread's, not GLib's: ThreadSanitizer sees these. */
  pthread_mutex_t lock;
  pthread_cond_t cond;        /* PARSED moved (when WAITERS) or DONE set; under LOCK */
  gint waiters;               /* questions waiting on COND (atomic) */
  /* The read goes only as far as the questions need: it pauses once it has
   * read TARGET entries (atomic; raised under LOCK), until a question it
   * cannot answer raises it (to the end: a walk asking past the first
   * entries asks about paths all along the index, and wakes it once; one
   * asking about its first directories never) or STOP is set (the walk is
   * over). */
  pthread_cond_t more;        /* TARGET raised or STOP set; under LOCK */
  gint target;
  gint stop;                  /* atomic */
  bool stopped;               /* the read ended so, not at the file's end: no IX, no ERROR */
  /* The entries read so far, when the file may be answered early (EARLY):
   * VIEW has FIRST, FIXED, MARKS and KEYS set before PARSED first moves,
   * and they do not move while it is read (KEYS is as long as the entries'
   * bytes). */
  bool early;
  struct gitindex view;
  gint parsed;                /* entries read and checked (atomic) */
  gint sparse_seen;           /* a sparse directory entry among them (atomic) */
  gint done;                  /* the read has ended (atomic); then IX, or NULL and ERROR */
  struct gitindex *ix;
  GError *error;
  /* What an early read that did not become IX leaves: the questions may
   * still be looking at it, so it is freed with RD. */
  void *left_map;
  size_t left_len;
  struct gitindex_mark *left_marks;
  char *left_keys;
};

static gint test_delay_us;                  /* gitindex_reader_test_delay() */
static gsize thread_from = THREAD_FROM;     /* gitindex_reader_test_thread_from() */

/* The error of a read stopped where it was (never shown). */
#define STOPPED_QUARK g_quark_from_static_string("trawl-gitindex-stopped")

/* Pause RD's read, PARSED entries read, until a question asks for more;
 * false when it is to stop instead. */
static bool
reader_park(struct gitindex_reader *rd, size_t parsed)
{
  pthread_mutex_lock(&rd->lock);
  while (!g_atomic_int_get(&rd->stop) && (size_t)g_atomic_int_get(&rd->target) <= parsed)
    pthread_cond_wait(&rd->more, &rd->lock);
  const bool go = !g_atomic_int_get(&rd->stop);
  pthread_mutex_unlock(&rd->lock);
  return go;
}

/* Ask RD's read to go on until it has read at least WANT entries. */
static void
reader_demand(struct gitindex_reader *rd, gint want)
{
  if (g_atomic_int_get(&rd->target) >= want)
    return;
  pthread_mutex_lock(&rd->lock);
  if (g_atomic_int_get(&rd->target) < want) {
    g_atomic_int_set(&rd->target, want);
    pthread_cond_signal(&rd->more);
  }
  pthread_mutex_unlock(&rd->lock);
}

/* Tell RD's questions that the first PARSED entries are read (SPARSE: one of
 * them is a sparse directory). */
static void
publish(struct gitindex_reader *rd, size_t parsed, bool sparse)
{
  if (sparse)
    g_atomic_int_set(&rd->sparse_seen, 1);
  g_atomic_int_set(&rd->parsed, (gint)parsed);
  /* A question about to wait counts itself, then looks at PARSED again:
   * either it sees this value or this sees it waiting (both are full
   * barriers). */
  if (g_atomic_int_get(&rd->waiters)) {
    pthread_mutex_lock(&rd->lock);
    pthread_cond_broadcast(&rd->cond);
    pthread_mutex_unlock(&rd->lock);
  }
  const gint delay = g_atomic_int_get(&test_delay_us);
  if (G_UNLIKELY(delay))
    g_usleep((gulong)delay);
}

static void
index_file_clear(struct index_file *f)
{
  if (f->map)
    munmap(f->map, f->len);
  g_free(f->entries);
  g_free(f->marks);
  g_free(f->keys);
  if (f->names)
    g_byte_array_unref(f->names);
  g_free(f->path);
  memset(f, 0, sizeof *f);
}

static bool
corrupt(GError **error, const struct index_file *f, const char *what)
{
  g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: corrupt index (%s)", f->path, what);
  return false;
}

/* git's variable-length number of format 4 (and of OFS_DELTA): seven bits
 * a byte, high bit set when another follows, each continuation adding one
 * so that every number has a single spelling. */
static bool
read_varint(const guint8 **pp, const guint8 *end, uint64_t *out)
{
  const guint8 *p = *pp;
  if (p == end)
    return false;
  uint64_t v = *p & 127;
  while (*p++ & 128) {
    if (p == end || v > (UINT64_MAX >> 7) - 1)
      return false;
    v = ((v + 1) << 7) | (*p & 127);
  }
  *pp = p;
  *out = v;
  return true;
}

/* The GITINDEX_* bits of an entry's extended flags XFLAGS. */
static inline unsigned
xflags_kind(unsigned xflags)
{
  return (xflags & XFLAG_SKIP_WORKTREE ? GITINDEX_SKIP_WORKTREE : 0) |
         (xflags & XFLAG_INTENT_TO_ADD ? GITINDEX_INTENT_TO_ADD : 0);
}

/* The entry of format 2 or 3 at E (FIXED bytes of stat data, object name
 * and flags; already checked by parse_entries), into OUT; where the next
 * one starts. */
static inline const guint8 *
in_place(const guint8 *e, size_t fixed, struct gitindex_entry *out)
{
  const unsigned flags = be16(e + fixed - 2);
  const guint8 *name = e + fixed;
  unsigned kind = 0;
  if (G_UNLIKELY(flags & FLAG_EXTENDED)) {
    kind = xflags_kind(be16(name));
    name += 2;
  }
  const unsigned type = e[MODE_AT + 2] >> 4;
  if (G_UNLIKELY(type == TYPE_DIR || type == TYPE_GITLINK))
    kind |= type == TYPE_DIR ? GITINDEX_SPARSE_DIR : GITINDEX_GITLINK;
  size_t len = flags & NAME_MASK;
  if (G_UNLIKELY(len == NAME_MASK))
    len = strlen((const char *)name); /* its NUL was found before the checksum */
  out->path = (const char *)name;
  out->len = (uint32_t)len;
  out->flags = (uint8_t)kind;
  out->stage = (uint8_t)((flags >> STAGE_SHIFT) & 3);
  return e + (((size_t)(name - e) + len + 8) & ~(size_t)7);
}

/* Spell out the entries F holds in place (a split index merges arrays). */
static void
spell_out(struct index_file *f)
{
  if (f->entries)
    return;
  f->entries = g_new(struct gitindex_entry, f->n ? f->n : 1);
  const guint8 *e = f->first;
  for (uint32_t i = 0; i < f->n; i++)
    e = in_place(e, f->fixed, &f->entries[i]);
}

/* What an entry's mode and flags say, at E (FIXED bytes of stat data,
 * object name and flags); *NAME where its path starts. False when the
 * extended flags do not fit or may not be there. */
static inline bool
entry_head(struct index_file *f, const guint8 *e, size_t fixed, const guint8 *end,
           struct gitindex_entry *out, const guint8 **name)
{
  const unsigned flags = be16(e + fixed - 2);
  const uint32_t type = be32(e + MODE_AT) & MODE_TYPE;
  unsigned kind = 0;
  *name = e + fixed;
  if (G_UNLIKELY(flags & FLAG_EXTENDED)) {
    if (f->version < 3 || end - *name < 2)
      return false;
    kind = xflags_kind(be16(*name));
    *name += 2;
  }
  /* Files and links are most entries; a sparse directory or a submodule
   * is the rare one. */
  if (G_UNLIKELY(type == MODE_DIR || type == MODE_GITLINK)) {
    kind |= type == MODE_DIR ? GITINDEX_SPARSE_DIR : GITINDEX_GITLINK;
    f->sparse = f->sparse || type == MODE_DIR;
  }
  out->flags = (uint8_t)kind;
  out->stage = (uint8_t)((flags >> STAGE_SHIFT) & 3);
  out->len = flags & NAME_MASK; /* formats 2 and 3: the path's length, if below 0xfff */
  return true;
}

/* The entries of F (mapped), from *AT to END; *AT then where the
 * extensions start. The path of an entry of format 2 or 3 is kept where it
 * is (NUL-terminated, padded with NULs to a multiple of eight bytes); one of
 * format 4 is spelt out into F->names, from the previous one's start and
 * its own bytes. */
static bool
parse_entries(struct index_file *f, size_t hash_len, const guint8 **at, const guint8 *end,
              GError **error, struct gitindex_reader *rd)
{
  const guint8 *p = *at;
  const size_t fixed = STAT_LEN + hash_len + 2;
  if (f->version != 4) {
    /* The hot loop of a large index (a hundred thousand entries is common):
     * each entry checked where it is and stepped over, every MARK_STEP-th
     * one's offset and path kept; nothing else is written (an array of
     * every entry cost more in page faults than the loop does). Where the
     * next entry starts depends on this one's length, so without help each
     * entry waits for memory in turn: the bytes PREFETCH_AHEAD on are asked
     * for early (issue 31: stepping over a 10 MB index went from 2.3 to 1.4
     * ms, docs/benchmarks.md). */
    f->first = p;
    f->fixed = fixed;
    f->marks = g_new(struct gitindex_mark, f->n / MARK_STEP + 1);
    /* Read early (RD): room for every path, so that the keys never move
     * under a question (only the pages written are ever touched). */
    f->keys_cap = rd ? (size_t)(end - p) + 1
                     : MIN((size_t)(f->n / MARK_STEP + 1) * 48, (size_t)1 << 26);
    f->keys = g_malloc(f->keys_cap);
    if (rd) {
      rd->view.first = f->first;
      rd->view.fixed = fixed;
      rd->view.marks = f->marks;
      rd->view.keys = f->keys;
    }
    for (uint32_t i = 0; i < f->n; i++) {
      const guint8 *e = p;
      __builtin_prefetch(e + PREFETCH_AHEAD); /* an entry spans about two lines */
      __builtin_prefetch(e + PREFETCH_AHEAD + 64);
      if (G_UNLIKELY((size_t)(end - e) < fixed))
        return corrupt(error, f, "an entry runs past the end");
      const unsigned flags = be16(e + fixed - 2);
      const guint8 *name = e + fixed;
      if (G_UNLIKELY(flags & FLAG_EXTENDED)) {
        if (f->version < 3 || end - name < 2)
          return corrupt(error, f, "an entry runs past the end, or has flags it may not");
        name += 2;
      }
      if (G_UNLIKELY(e[MODE_AT + 2] >> 4 == TYPE_DIR))
        f->sparse = true;
      size_t len = flags & NAME_MASK;
      if (G_UNLIKELY(len == NAME_MASK)) {
        const guint8 *nul = memchr(name, '\0', (size_t)(end - name));
        if (nul == NULL)
          return corrupt(error, f, "a path runs past the end");
        len = (size_t)(nul - name);
      }
      /* One NUL at least after the path, then up to the eight-byte mark. */
      const size_t size = ((size_t)(name - e) + len + 8) & ~(size_t)7;
      if (G_UNLIKELY((size_t)(end - e) < size))
        return corrupt(error, f, "an entry runs past the end");
      if (i % MARK_STEP == 0) {
        struct gitindex_mark *m = &f->marks[i / MARK_STEP];
        m->at = (size_t)(e - f->first);
        m->key = f->keys_len;
        m->len = len;
        if (G_UNLIKELY(f->keys_cap - f->keys_len < len)) {
          f->keys_cap = MAX(2 * f->keys_cap, f->keys_len + len);
          f->keys = g_realloc(f->keys, f->keys_cap);
        }
        memcpy(f->keys + f->keys_len, name, len);
        f->keys_len += len;
      }
      p = e + size;
      if (rd && (i + 1) % PUBLISH_STEP == 0) {
        publish(rd, i + 1, f->sparse);
        if ((gint)(i + 1) >= g_atomic_int_get(&rd->target) && !reader_park(rd, i + 1)) {
          g_set_error_literal(error, STOPPED_QUARK, 0, "stopped");
          return false;
        }
      }
    }
    if (rd)
      publish(rd, f->n, f->sparse);
    *at = p;
    return true;
  }
  f->entries = g_new(struct gitindex_entry, f->n ? f->n : 1);
  /* Allocated from the start: a path of no bytes (a split index's
   * replaced entries) still points somewhere. */
  f->names = g_byte_array_sized_new((guint)MIN((size_t)f->n * 16 + 64, (size_t)1 << 26));
  size_t prev_off = 0, prev_len = 0; /* the previous path in f->names */
  for (uint32_t i = 0; i < f->n; i++) {
    struct gitindex_entry *out = &f->entries[i];
    const guint8 *name;
    if ((size_t)(end - p) < fixed || !entry_head(f, p, fixed, end, out, &name))
      return corrupt(error, f, "an entry runs past the end, or has flags it may not");
    p = name;
    uint64_t strip;
    if (!read_varint(&p, end, &strip) || strip > prev_len)
      return corrupt(error, f, "a path's prefix is longer than the path before it");
    const guint8 *nul = memchr(p, '\0', (size_t)(end - p));
    if (nul == NULL)
      return corrupt(error, f, "a path runs past the end");
    const size_t keep = prev_len - (size_t)strip, add = (size_t)(nul - p);
    const size_t off = f->names->len;
    /* The kept prefix is copied from the previous path (after the array
     * may have moved), then the new bytes. */
    g_byte_array_set_size(f->names, (guint)(off + keep + add));
    memmove(f->names->data + off, f->names->data + prev_off, keep);
    memcpy(f->names->data + off + keep, p, add);
    out->path = (const char *)(uintptr_t)off; /* an offset until the array is done */
    out->len = (uint32_t)(keep + add);
    prev_off = off;
    prev_len = keep + add;
    p = nul + 1;
  }
  for (uint32_t i = 0; i < f->n; i++)
    f->entries[i].path = (const char *)f->names->data + (uintptr_t)f->entries[i].path;
  *at = p;
  return true;
}

/* Map and parse the index file PATH into F. MISSING_OK: a file that is not
 * there is an empty index. */
/* Is there a `sharedindex.*` file in the directory of the index PATH (or
 * can that not be told)? */
static bool
shared_index_beside(const char *path)
{
  char *dir = g_path_get_dirname(path);
  DIR *d = opendir(dir);
  g_free(dir);
  if (d == NULL)
    return true;
  bool found = false;
  const struct dirent *de;
  while (!found && (de = readdir(d)) != NULL)
    found = strncmp(de->d_name, "sharedindex.", 12) == 0;
  closedir(d);
  return found;
}

/* RD: the main index of a read in a thread, answered early when it may be
 * (gitindex.h). */
static bool
parse_file(struct index_file *f, const char *path, size_t hash_len, bool missing_ok,
           GError **error, struct gitindex_reader *rd)
{
  memset(f, 0, sizeof *f);
  f->path = g_strdup(path);
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    const int err = errno;
    if (fd >= 0)
      close(fd);
    if (err == ENOENT && missing_ok) {
      f->version = 2;
      f->entries = g_new(struct gitindex_entry, 1);
      return true;
    }
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "%s: %s", path,
                g_strerror(err));
    return false;
  }
  if (!S_ISREG(st.st_mode) || (size_t)st.st_size < HEADER_LEN + hash_len) {
    close(fd);
    return corrupt(error, f, "shorter than a header and a checksum");
  }
  /* Mapped, as git maps it: git replaces an index by renaming a new file
   * over it, never by writing into it. */
  f->len = (size_t)st.st_size;
  f->map = mmap(NULL, f->len, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  close(fd);
  if (f->map == MAP_FAILED) {
    f->map = NULL;
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "%s: %s", path,
                g_strerror(err));
    return false;
  }
  const guint8 *data = f->map;
  const guint8 *end = data + f->len - hash_len; /* the checksum is not checked (gitindex.h) */
  if (memcmp(data, "DIRC", 4) != 0)
    return corrupt(error, f, "no DIRC signature");
  f->version = be32(data + 4);
  if (f->version < 2 || f->version > 4) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                "%s: index format version %u, not 2, 3 or 4", path, f->version);
    return false;
  }
  f->n = be32(data + 8);
  if (f->n > (size_t)(end - data) / (STAT_LEN + hash_len + 2))
    return corrupt(error, f, "more entries than fit");
  const guint8 *p = data + HEADER_LEN;
  /* Looked at once the file is open: a split index names a shared index
   * that was there before it was (gitindex.h). */
  if (rd && f->version != 4 && f->n <= (uint32_t)G_MAXINT && !shared_index_beside(path))
    rd->early = true;
  if (!parse_entries(f, hash_len, &p, end, error, rd && rd->early ? rd : NULL))
    return false;
  /* The extensions, up to the checksum. */
  while (p < end) {
    if (end - p < 8)
      return corrupt(error, f, "an extension's header runs into the checksum");
    const guint8 *sig = p;
    const uint32_t size = be32(p + 4);
    p += 8;
    if ((size_t)(end - p) < size)
      return corrupt(error, f, "an extension runs into the checksum");
    if (memcmp(sig, "link", 4) == 0) {
      f->link = p;
      f->link_len = size;
    } else if (memcmp(sig, "sdir", 4) == 0) {
      /* A sparse index: its directory entries are known by their mode. */
    } else if (!(sig[0] >= 'A' && sig[0] <= 'Z')) {
      /* Not optional: what it changes is not known (git stops too). */
      g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                  "%s: index extension '%.4s' is not understood", path, (const char *)sig);
      return false;
    }
    p += size;
  }
  return true;
}

/* Mark with BIT, in MARKS (N of them), every position the EWAH bitmap at P
 * (LEN bytes) sets, into *USED its length: 32-bit count of bits, 32-bit count
 * of 64-bit words, the words, 32-bit position of the last marker word. Each
 * marker word says how many clean words (all zeros, or all ones: bit 0)
 * follow it (bits 1-32), then how many literal words (bits 33-63). False when
 * it does not parse or sets a position past N. */
static bool
ewah_mark(const guint8 *p, size_t len, guint8 *marks, size_t n, guint8 bit, size_t *used)
{
  if (len < 8)
    return false;
  const uint32_t words = be32(p + 4);
  if ((len - 8) / 8 < words || len - 8 - (size_t)words * 8 < 4)
    return false;
  const guint8 *w = p + 8;
  uint64_t pos = 0;
  for (uint32_t k = 0; k < words;) {
    const uint64_t marker = be64(w + 8 * (size_t)k++);
    const uint64_t run = ((marker >> 1) & 0xffffffffu) * 64, literal = marker >> 33;
    if (marker & 1) {
      if (pos + run > n)
        return false;
      for (uint64_t i = 0; i < run; i++)
        marks[pos + i] |= bit;
    }
    pos += run;
    for (uint64_t l = 0; l < literal; l++, pos += 64) {
      if (k == words)
        return false;
      const uint64_t word = be64(w + 8 * (size_t)k++);
      for (uint64_t bits = word; bits; bits &= bits - 1) {
        const uint64_t at = pos + (uint64_t)__builtin_ctzll(bits);
        if (at >= n)
          return false;
        marks[at] |= bit;
      }
    }
  }
  *used = 8 + (size_t)words * 8 + 4;
  return true;
}

/* Bytewise order of paths (a shorter one first when it is a prefix of the
 * other), then of stages: git's order of entries. */
static int
compare_paths(const char *a, size_t alen, const char *b, size_t blen)
{
  const int c = memcmp(a, b, MIN(alen, blen));
  return c ? c : alen < blen ? -1 : alen > blen;
}

static int
compare_entries(const void *pa, const void *pb)
{
  const struct gitindex_entry *a = pa, *b = pb;
  const int c = compare_paths(a->path, a->len, b->path, b->len);
  return c ? c : (int)a->stage - (int)b->stage;
}

enum { MARK_DELETE = 1, MARK_REPLACE = 2 };

/* The entries of the split index MAIN on top of its shared index BASE, into
 * OUT: BASE's, the first ones of MAIN in place of those the replace bitmap
 * marks (keeping BASE's paths), without those the delete bitmap marks, and
 * then the rest of MAIN's added. */
static bool
merge_split(const struct index_file *main, const struct index_file *base, size_t hash_len,
            GArray *out, GError **error)
{
  guint8 *marks = g_new0(guint8, base->n ? base->n : 1);
  const guint8 *p = main->link + hash_len;
  size_t left = main->link_len - hash_len, used;
  bool ok = true;
  if (left > 0) {
    ok = ewah_mark(p, left, marks, base->n, MARK_DELETE, &used);
    if (ok) {
      p += used;
      left -= used;
      ok = ewah_mark(p, left, marks, base->n, MARK_REPLACE, &used) && used == left;
    }
  }
  if (!ok) {
    g_free(marks);
    return corrupt(error, main, "a bitmap of its link extension does not parse");
  }
  uint32_t next = 0; /* MAIN's next replacement */
  for (uint32_t i = 0; i < base->n && ok; i++) {
    struct gitindex_entry e = base->entries[i];
    if (marks[i] & MARK_REPLACE) {
      if (next == main->n || main->entries[next].len != 0) {
        ok = corrupt(error, main, "a replaced entry is missing, or has a path");
        break;
      }
      const struct gitindex_entry *r = &main->entries[next++];
      e.flags = r->flags;
      e.stage = r->stage;
    }
    if (!(marks[i] & MARK_DELETE))
      g_array_append_val(out, e);
  }
  /* The added entries, sorted as the file has them, merged in: the result
   * is in git's order, as lookups need. */
  const guint kept = out->len;
  for (uint32_t i = next; i < main->n && ok; i++)
    if (main->entries[i].len == 0)
      ok = corrupt(error, main, "an added entry has no path");
  if (ok && next < main->n) {
    const struct gitindex_entry *add = main->entries + next;
    const size_t n_add = main->n - next;
    struct gitindex_entry *old = g_memdup2(out->data, kept * sizeof *old);
    g_array_set_size(out, (guint)(kept + n_add));
    struct gitindex_entry *to = (struct gitindex_entry *)(void *)out->data;
    size_t i = 0, j = 0, k = 0;
    while (i < kept || j < n_add)
      to[k++] = j == n_add || (i < kept && compare_entries(&old[i], &add[j]) <= 0) ? old[i++]
                                                                                : add[j++];
    g_free(old);
  }
  g_free(marks);
  return ok;
}

/* Move the mapping and the names of F into slot K of IX. */
static void
keep_file(struct gitindex *ix, int k, struct index_file *f)
{
  ix->map[k] = f->map;
  ix->map_len[k] = f->len;
  f->map = NULL;
  if (f->names) {
    ix->names[k] = (char *)g_byte_array_free(f->names, FALSE);
    f->names = NULL;
  }
}

/* Is the shared index's name HASH (HASH_LEN bytes) all zeros: none? */
static bool
all_zero(const guint8 *hash, size_t hash_len)
{
  for (size_t i = 0; i < hash_len; i++)
    if (hash[i])
      return false;
  return true;
}

/* What of MAIN an early read's questions may still be looking at, kept in
 * RD (when there is one) until RD is freed. */
static void
leave_for_questions(struct gitindex_reader *rd, struct index_file *main)
{
  if (rd == NULL || !rd->early)
    return;
  rd->left_map = main->map;
  rd->left_len = main->len;
  rd->left_marks = main->marks;
  rd->left_keys = main->keys;
  main->map = NULL;
  main->marks = NULL;
  main->keys = NULL;
}

static struct gitindex *
read_index(const char *path, size_t hash_len, GError **error, struct gitindex_reader *rd)
{
  struct index_file main, base;
  memset(&base, 0, sizeof base);
  if (!parse_file(&main, path, hash_len, true, error, rd)) {
    leave_for_questions(rd, &main);
    index_file_clear(&main);
    return NULL;
  }
  struct gitindex *ix = g_new0(struct gitindex, 1);
  ix->version = main.version;
  GArray *all = g_array_new(FALSE, FALSE, sizeof(struct gitindex_entry));
  bool ok = true;
  if (main.link && main.link_len < hash_len) {
    ok = corrupt(error, &main, "its link extension is too short");
  } else if (main.link && !all_zero(main.link, hash_len)) {
    char *hex = g_malloc(2 * hash_len + 1);
    for (size_t i = 0; i < hash_len; i++)
      g_snprintf(hex + 2 * i, 3, "%02x", main.link[i]);
    char *dir = g_path_get_dirname(path);
    char *name = g_strconcat("sharedindex.", hex, NULL);
    char *shared = g_build_filename(dir, name, NULL);
    ok = parse_file(&base, shared, hash_len, false, error, NULL);
    if (ok && base.link)
      ok = corrupt(error, &base, "a shared index that is split again");
    if (ok) {
      spell_out(&main);
      spell_out(&base);
    }
    ok = ok && merge_split(&main, &base, hash_len, all, error);
    ix->split = true;
    g_free(shared);
    g_free(name);
    g_free(dir);
    g_free(hex);
  }
  if (!ok) {
    g_array_unref(all);
    leave_for_questions(rd, &main);
    index_file_clear(&main);
    index_file_clear(&base);
    g_free(ix);
    return NULL;
  }
  if (ix->split) {
    ix->n = all->len;
    ix->entries = (struct gitindex_entry *)(void *)g_array_free(all, FALSE);
  } else {
    /* Not split: the entries as parsed, spelt out (format 4) or in place. */
    g_array_unref(all);
    ix->n = main.n;
    ix->entries = main.entries;
    ix->first = main.first;
    ix->marks = main.marks;
    ix->fixed = main.fixed;
    ix->keys = main.keys;
    main.entries = NULL;
    main.marks = NULL;
    main.keys = NULL;
  }
  ix->sparse = main.sparse || base.sparse;
  /* (A split index read early: its main file's marks, not kept by IX.) */
  if (ix->split && rd && rd->early) {
    rd->left_marks = main.marks;
    rd->left_keys = main.keys;
    main.marks = NULL;
    main.keys = NULL;
  }
  keep_file(ix, 0, &main);
  keep_file(ix, 1, &base);
  index_file_clear(&main);
  index_file_clear(&base);
  return ix;
}

struct gitindex *
gitindex_read(const char *path, size_t hash_len, GError **error)
{
  g_return_val_if_fail(hash_len == 20 || hash_len == 32, NULL);
  return read_index(path, hash_len, error, NULL);
}

void
gitindex_free(struct gitindex *ix)
{
  if (ix == NULL)
    return;
  for (int k = 0; k < 2; k++) {
    if (ix->map[k])
      munmap(ix->map[k], ix->map_len[k]);
    g_free(ix->names[k]);
  }
  g_free(ix->entries);
  g_free(ix->marks);
  g_free(ix->keys);
  g_free(ix);
}

/* ---- lookups ---- */

/* Where entry E stands against PATH (LEN bytes) followed by TAIL (LEN2
 * bytes): below 0 before it, 0 equal, above 0 after. */
static inline int
key_cmp(const struct gitindex_entry *e, const char *path, size_t len, const char *tail,
        size_t len2)
{
  int c = memcmp(e->path, path, MIN(e->len, len));
  if (c == 0 && e->len < len)
    c = -1;
  else if (c == 0) {
    const size_t rest = e->len - len;
    c = memcmp(e->path + len, tail, MIN(rest, len2));
    if (c == 0)
      c = rest < len2 ? -1 : rest > len2;
  }
  return c;
}

/* Is the marked entry I of IX (in place) before PATH then TAIL? */
static inline bool
mark_before(const struct gitindex *ix, size_t i, const char *path, size_t len, const char *tail,
            size_t len2)
{
  const struct gitindex_entry key = {ix->keys + ix->marks[i].key, (uint32_t)ix->marks[i].len, 0,
                                     0};
  return key_cmp(&key, path, len, tail, len2) < 0;
}

/* Where this thread's last search of marks ended, and in which. */
static _Thread_local struct {
  const struct gitindex_mark *marks;
  size_t at;
} finger;

/* The first entry of IX not before PATH then TAIL, into *OUT; false when
 * every entry is before it. Spelt out: a binary search. In place: a binary
 * search of the marked entries' paths (copied out, side by side: a search
 * of the mapped entries waited for memory at every step), then a step at a
 * time from the last one before (at most MARK_STEP), whose bytes are asked
 * for all at once first. */
static bool
first_not_before(const struct gitindex *ix, const char *path, size_t len, const char *tail,
                 size_t len2, struct gitindex_entry *out)
{
  if (ix->entries) {
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (key_cmp(&ix->entries[mid], path, len, tail, len2) < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == ix->n)
      return false;
    *out = ix->entries[lo];
    return true;
  }
  if (ix->n == 0)
    return false;
  const size_t n_marks = (ix->n + MARK_STEP - 1) / MARK_STEP;
  size_t lo = 0, hi = n_marks;
  /* A walk asks about paths near the one before (its directories in
   * order): the search starts where this thread's last one ended and
   * gallops from there, so that it reads marks near those it read. Any
   * start gives the same answer. */
  const size_t f = finger.marks == ix->marks && finger.at <= n_marks ? finger.at : n_marks / 2;
  if (f < n_marks && mark_before(ix, f, path, len, tail, len2)) {
    size_t step = 1, i = f + 1;
    lo = f + 1;
    while (i < n_marks && mark_before(ix, i, path, len, tail, len2)) {
      lo = i + 1;
      step *= 2;
      i = f + step;
    }
    hi = MIN(i, n_marks);
  } else {
    size_t step = 1;
    hi = f;
    while (step <= f && !mark_before(ix, f - step, path, len, tail, len2)) {
      hi = f - step;
      step *= 2;
    }
    lo = step <= f ? f - step + 1 : 0;
  }
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (mark_before(ix, mid, path, len, tail, len2))
      lo = mid + 1;
    else
      hi = mid;
  }
  finger.marks = ix->marks;
  finger.at = lo;
  if (lo == 0) { /* the first entry is not before it */
    in_place(ix->first, ix->fixed, out);
    return true;
  }
  const guint8 *e = ix->first + ix->marks[lo - 1].at;
  const guint8 *stop = lo < n_marks ? ix->first + ix->marks[lo].at : e;
  for (const guint8 *q = e + 64; q < stop; q += 64)
    __builtin_prefetch(q);
  for (size_t i = (lo - 1) * MARK_STEP; i < ix->n; i++) {
    e = in_place(e, ix->fixed, out);
    if (key_cmp(out, path, len, tail, len2) >= 0)
      return true;
  }
  return false;
}

/* Is there an entry named exactly PATH (LEN bytes) then TAIL (LEN2 bytes)?
 * Its flags in *FLAGS. */
static bool
has_exact(const struct gitindex *ix, const char *path, size_t len, const char *tail,
          size_t len2, unsigned *flags)
{
  struct gitindex_entry e;
  if (!first_not_before(ix, path, len, tail, len2, &e) || e.len != len + len2 ||
      memcmp(e.path, path, len) != 0 || memcmp(e.path + len, tail, len2) != 0)
    return false;
  *flags = e.flags;
  return true;
}

/* Is a directory above PATH (LEN bytes) a sparse directory entry? */
static bool
sparse_above(const struct gitindex *ix, const char *path, size_t len)
{
  for (size_t i = 0; i < len; i++) {
    unsigned flags;
    if (path[i] == '/' && has_exact(ix, path, i + 1, "", 0, &flags) &&
        (flags & GITINDEX_SPARSE_DIR))
      return true;
  }
  return false;
}

bool
gitindex_has_file(const struct gitindex *ix, const char *path, size_t len)
{
  unsigned flags;
  return has_exact(ix, path, len, "", 0, &flags) || (ix->sparse && sparse_above(ix, path, len));
}

bool
gitindex_has_dir(const struct gitindex *ix, const char *path, size_t len)
{
  g_return_val_if_fail(len > 0, false);
  struct gitindex_entry e;
  if (first_not_before(ix, path, len, "/", 1, &e) && e.len > len &&
      memcmp(e.path, path, len) == 0 && e.path[len] == '/')
    return true;
  unsigned flags;
  if (has_exact(ix, path, len, "", 0, &flags) && (flags & GITINDEX_GITLINK))
    return true;
  return ix->sparse && sparse_above(ix, path, len);
}

struct gitindex_entry *
gitindex_entries(const struct gitindex *ix)
{
  if (ix->entries)
    return g_memdup2(ix->entries, (ix->n ? ix->n : 1) * sizeof *ix->entries);
  struct gitindex_entry *all = g_new(struct gitindex_entry, ix->n ? ix->n : 1);
  const guint8 *e = ix->first;
  for (size_t i = 0; i < ix->n; i++)
    e = in_place(e, ix->fixed, &all[i]);
  return all;
}

/* ---- reading in a thread of its own ---- */

static gpointer
reader_main(gpointer data)
{
  struct gitindex_reader *rd = data;
  struct gitindex *ix = read_index(rd->path, rd->hash_len, &rd->error, rd);
  if (rd->error && rd->error->domain == STOPPED_QUARK) {
    g_clear_error(&rd->error);
    rd->stopped = true;
  }
  pthread_mutex_lock(&rd->lock);
  rd->ix = ix;
  g_atomic_int_set(&rd->done, 1);
  pthread_cond_broadcast(&rd->cond);
  pthread_mutex_unlock(&rd->lock);
  return NULL;
}

struct gitindex_reader *
gitindex_reader_start(const char *path, size_t hash_len)
{
  g_return_val_if_fail(hash_len == 20 || hash_len == 32, NULL);
  struct gitindex_reader *rd = g_new0(struct gitindex_reader, 1);
  rd->path = g_strdup(path);
  rd->hash_len = hash_len;
  pthread_mutex_init(&rd->lock, NULL);
  pthread_cond_init(&rd->cond, NULL);
  pthread_cond_init(&rd->more, NULL);
  rd->target = FIRST_TARGET;
  /* A thread costs more than reading a small index (a few thousand
   * entries: tens of microseconds; starting a thread and waiting for it,
   * a few hundred, docs/benchmarks.md "The index"). */
  struct stat st;
  if (stat(path, &st) == 0 && (gsize)st.st_size >= (gsize)g_atomic_pointer_get(&thread_from)) {
    GError *err = NULL;
    rd->thread = g_thread_try_new("trawl-index", reader_main, rd, &err);
    if (rd->thread)
      return rd;
    g_error_free(err);
  }
  rd->ix = read_index(path, hash_len, &rd->error, NULL);
  g_atomic_int_set(&rd->done, 1);
  return rd;
}

/* Wait, under RD's lock, until PARSED is no longer SEEN (SEEN < 0: until the
 * read has ended), or the read has ended. */
static void
reader_wait(struct gitindex_reader *rd, gint seen)
{
  pthread_mutex_lock(&rd->lock);
  g_atomic_int_inc(&rd->waiters);
  while (!g_atomic_int_get(&rd->done) && (seen < 0 || g_atomic_int_get(&rd->parsed) == seen))
    pthread_cond_wait(&rd->cond, &rd->lock);
  g_atomic_int_add(&rd->waiters, -1);
  pthread_mutex_unlock(&rd->lock);
}

/* What the entries V holds (the first V->n of the index) say of PATH as a
 * file or a directory: 0 not held, 1 held, -1 not decided yet (they all
 * sort before it). */
static int
decide(const struct gitindex *v, const char *path, size_t len, bool is_dir)
{
  struct gitindex_entry e;
  if (!first_not_before(v, path, len, is_dir ? "/" : "", is_dir, &e))
    return -1;
  if (is_dir ? e.len > len && memcmp(e.path, path, len) == 0 && e.path[len] == '/'
             : e.len == len && memcmp(e.path, path, len) == 0)
    return 1;
  unsigned flags;
  /* A submodule at PATH, and PATH's ancestors, sort before E. */
  if (is_dir && has_exact(v, path, len, "", 0, &flags) && (flags & GITINDEX_GITLINK))
    return 1;
  return v->sparse && sparse_above(v, path, len) ? 1 : 0;
}

static bool
reader_ask(struct gitindex_reader *rd, const char *path, size_t len, bool is_dir)
{
  gint seen = 0;
  for (;;) {
    if (g_atomic_int_get(&rd->done)) {
      if (rd->ix == NULL)
        return false;
      return is_dir ? gitindex_has_dir(rd->ix, path, len) : gitindex_has_file(rd->ix, path, len);
    }
    const gint parsed = g_atomic_int_get(&rd->parsed);
    if (parsed != seen) {
      seen = parsed;
      struct gitindex v = rd->view;
      v.n = (size_t)parsed;
      v.sparse = g_atomic_int_get(&rd->sparse_seen) != 0;
      const int d = decide(&v, path, len, is_dir);
      if (d == 0)
        return false;
      if (d == 1) {
        /* Held: told once the whole file is read (a damaged one holds nothing). */
        reader_demand(rd, G_MAXINT);
        reader_wait(rd, -1);
        continue;
      }
    }
    /* Undecided, and the read paused where it was asked to: the walk's
     * questions have gone past its first entries, so they are about paths
     * all along the index, and it reads on to the end (a read that pauses
     * again, twice as far on, makes the walker wait for it each time). */
    if (parsed >= g_atomic_int_get(&rd->target))
      reader_demand(rd, G_MAXINT);
    reader_wait(rd, seen);
  }
}

bool
gitindex_reader_has_file(struct gitindex_reader *rd, const char *path, size_t len)
{
  return reader_ask(rd, path, len, false);
}

bool
gitindex_reader_has_dir(struct gitindex_reader *rd, const char *path, size_t len)
{
  g_return_val_if_fail(len > 0, false);
  return reader_ask(rd, path, len, true);
}

const struct gitindex *
gitindex_reader_wait(struct gitindex_reader *rd, const GError **error)
{
  if (!g_atomic_int_get(&rd->done)) {
    reader_demand(rd, G_MAXINT);
    reader_wait(rd, -1);
  }
  if (error)
    *error = rd->error;
  return rd->ix;
}

bool
gitindex_reader_done(struct gitindex_reader *rd)
{
  return g_atomic_int_get(&rd->done) != 0;
}

void
gitindex_reader_read_all(struct gitindex_reader *rd)
{
  reader_demand(rd, G_MAXINT);
}

bool
gitindex_reader_stop(struct gitindex_reader *rd, const GError **error)
{
  if (!g_atomic_int_get(&rd->done)) {
    pthread_mutex_lock(&rd->lock);
    g_atomic_int_set(&rd->stop, 1);
    pthread_cond_signal(&rd->more);
    pthread_mutex_unlock(&rd->lock);
    reader_wait(rd, -1);
  }
  if (error)
    *error = rd->error;
  return !rd->stopped;
}

void
gitindex_reader_free(struct gitindex_reader *rd)
{
  if (rd == NULL)
    return;
  gitindex_reader_stop(rd, NULL);
  if (rd->thread)
    g_thread_join(rd->thread);
  gitindex_free(rd->ix);
  if (rd->error)
    g_error_free(rd->error);
  if (rd->left_map)
    munmap(rd->left_map, rd->left_len);
  g_free(rd->left_marks);
  g_free(rd->left_keys);
  pthread_mutex_destroy(&rd->lock);
  pthread_cond_destroy(&rd->cond);
  pthread_cond_destroy(&rd->more);
  g_free(rd->path);
  g_free(rd);
}

void
gitindex_reader_test_thread_from(size_t bytes)
{
  g_atomic_pointer_set(&thread_from, bytes ? bytes : 1);
}

void
gitindex_reader_test_delay(unsigned us)
{
  g_atomic_int_set(&test_delay_us, (gint)MIN(us, (unsigned)G_MAXINT));
}
