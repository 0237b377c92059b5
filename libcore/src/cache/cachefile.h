/* trawl — the result cache's file (private to libcore/src/cache/).
 *
 * A cache file records a plan's walks: per walk its root, the ignore
 * sources outside the walked directories with their stamps, and every
 * directory's stamp and records (memo.h). This is its reader and writer
 * (cachefile.c), and the passes over a cached walk that need no plan: its
 * results from the records, in the walk's order (rec_pass, cachefile.c),
 * the questions it asked of the index (cached_walk_asked, cachefile.c),
 * and the re-check of every directory's stamp (walk_unchanged,
 * recheck.c). The layout is in format.h; docs/cache.md tells what is
 * recorded and why.
 */
#ifndef TRAWL_CACHEFILE_H
#define TRAWL_CACHEFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <glib.h>

#include "../arena.h"
#include "../memo.h"
#include "watchman.h"
#include "trawl/pattern.h"
#include "trawl/walk.h"

G_BEGIN_DECLS

/* The header (format.h has the layout). */
#define CACHE_MAGIC "TRAWLC\x1a\n"
#define CACHE_FORMAT 15u
#define HEADER_SIZE 56

/* An outside source's kind, when its stamp was racy when recorded: the
 * index (whose answers a cache asks again, whatever its stamp), and any
 * other (not trusted). */
#define SOURCE_INDEX_RACY 0xfe
#define SOURCE_RACY 0xff

struct cache_file;

/* One walk of a cache file. */
struct cached_walk {
  char *root;
  guint64 dev, ino;
  GArray *members;      /* guint64 */
  GString *env;
  struct wm_at clock;   /* watchman's clock before the walk (clock.watch NULL: none) */
  const guint8 *clock_at, *clock_end; /* where the index holds it */
  GPtrArray *paths;     /* the sources */
  GByteArray *kinds;
  GArray *stamps;
  guint64 dirs_off;     /* its directories' entries: where in its file's region of them */
  guint64 dirs_bytes;   /* (cached_walk_dirs(), or a block at a time: dir_cursor) */
  guint32 n_dirs;
  guint32 mark_every;   /* a block holds at most this many entries (format.h: marks) */
  guint32 n_marks;
  const guint8 *marks;  /* the marks (format.h), checked: in order, inside the entries and
                           the records (the sums when a block is read) */
  const char *keys;     /* their blocks' first paths (format.h: keys), checked: in path
                           order (against the blocks' first entries when those are read) */
  guint64 keys_len;
  gchar **rec_blocks;   /* per mark: its records, read alone and checked (block_records()),
                           when the records were not read whole */
  guint8 **dirs_blocks;  /* per mark: its entries, read alone (walk_block(), cachefile.c) and
                           checked, kept for every reader after (set and read atomically:
                           cursors run in several threads) */
  const guint8 *must_at, *must_end; /* the entries watchman never vouches for (format.h: must) */
  guint32 n_must;
  struct cache_file *file;
  bool problems;        /* the walk had problems (WALK_PROBLEMS) */
};

struct cache_file {
  const gchar *index;   /* the index: the walks point into it */
  gsize index_len;
  gchar *index_data;    /* where it was read into (release()d) */
  gsize index_data_len;
  int fd;               /* the file, open until its records and its directory entries are
                           read (-1 then), or until cache_file_close() */
  char *path;           /* where it was opened, and what it was then: to open it again */
  guint64 dev, ino, size;
  guint64 dirs_at, dirs_len; /* where the directory entries are in it */
  gchar *dirs_data;     /* they, once read whole */
  const guint8 *dirs;
  bool dirs_checked, dirs_ok; /* read whole, and every block checked out: its sum, and its
                                first entry against its key */
  bool dirs_sums_ok;    /* every block's sum (DIRS_OK false else: the keys) */
  guint64 recs_at, recs_len; /* where the records are in it */
  gchar *recs_data;     /* the records, once read whole */
  const guint8 *recs, *recs_end;
  guint64 index_sum;    /* the header's: what a file written over this one binds (base) */
  /* The base (format.h: base): the file this one was written over, whose
   * blocks its marks may point into; opened, checked and closed with it. */
  bool has_base;
  guint64 base_size, base_sum; /* as the index binds it: its size, its index's sum */
  int base_fd;
  char *base_path;
  guint64 base_dev, base_ino;
  guint64 base_dirs_at, base_dirs_len, base_recs_at, base_recs_len;
  gchar *base_recs_data; /* its records, once read whole */
  const guint8 *base_recs;
  guint64 own_dirs_len; /* this file's own region of entries (DIRS_LEN: the walks' entries
                           as the marks place them, what DIRS holds once read) */
  bool records_loaded;  /* read whole (recs NULL: they could not be), not yet checked */
  bool records_checked, records_ok; /* and every block of them checked against its sum */
  char *version;
  const guint8 *queries; /* w_queries()'s bytes, in the index */
  size_t queries_len;
  GPtrArray *walks;     /* struct cached_walk * */
};

/* Write C (loaded from PATH, its records checked or not) to PATH again as
 * it is but for each walk's clock: CLOCKS[i] for walk i. False with *WHY
 * set (to free) if its records do not check out or it cannot be written.
 * For a re-check that found every directory as recorded (run_write()). */
bool cache_store_clocks(const char *path, struct cache_file *c, const struct wm_at *clocks,
                        char **why);

/* Cache file PATH, checked: NULL with *WHY set (to free; NULL too: no such
 * file). The header and the index are read, not the records. */
struct cache_file *cache_load(const char *path, char **why);
void cache_file_free(struct cache_file *c);

/* cache_load() for a caller that must have the file: NULL with ERROR set
 * (G_FILE_ERROR) naming PATH and why it cannot be used. */
struct cache_file *cache_open(const char *path, GError **error);

/* Close C's file (a run that read what it needs of it; a later read opens
 * it again, and finds nothing if another file took its place). */
void cache_file_close(struct cache_file *c);

/* Read C's records whole and check every block of them against its sum
 * (once; the file is closed when its directory entries are read too):
 * c->records_ok. */
void records_read(struct cache_file *c);

/* Cached walk W's directory entries, all of them, into [*AT, *END): its
 * file's region of entries read whole and every block checked against its
 * sum the first time any walk's are wanted (c->dirs_ok). False if they
 * cannot be read or do not check out: then nothing of the file is to be
 * trusted. What a pass over every entry reads them through. */
bool cached_walk_dirs(const struct cached_walk *w, const guint8 **at, const guint8 **end);

/* The memo of cached walk W, parsed now; NULL if the records do not check
 * out. */
struct walk_memo *cached_memo(const struct cached_walk *w);

/* The memo of the directories of cached walk W named in HOT (char *, a
 * set; a name the record does not have is passed over), parsed now; NULL if
 * their blocks' records do not check out or the entries do not parse. What
 * a walk that leaves the rest unentered needs (memo.h, struct
 * memo_partial): the records of those blocks alone are read. */
struct walk_memo *cached_memo_part(const struct cached_walk *w, GHashTable *hot);

/* An entry of a cached walk below a directory a walk left unentered: kept
 * as it is, its bytes copied (cache_write_walk()); or a whole block of
 * such entries (N_BLOCK > 0), copied with its sums, unparsed. */
struct kept_entry {
  const char *path;     /* in the split's arena: the entry's, or the block's first's */
  size_t len;
  const guint8 *body;   /* dir_entry.body: from its live queries to its questions' end
                           (a block: its entries, NULL until read: split_fill()) */
  size_t body_len;
  guint32 n;            /* its records: RECS_LEN bytes at RECS (a block: RECS NULL when
                           they are at RFROM in the split's file, unread) */
  const guint8 *recs;
  guint64 recs_len, rfrom;
  bool must;            /* one watchman never vouches for (format.h, must) */
  /* A block: N_BLOCK entries, their bytes BODY (BODY_LEN) with sum SUM,
   * their records RECS (RECS_LEN) with sum RSUM; the must list's entries
   * among them, by number from the block's first: MUSTS of the split's
   * MUSTS from MUST_FROM on. */
  guint32 n_block;
  guint64 sum, rsum;
  guint32 must_from, musts;
  guint64 dwhere, rwhere; /* a block: where its entries and records are (format.h: mark) */
};

/* What cached_walk_split() found. */
struct split {
  GArray *kept;         /* struct kept_entry, in path order */
  guint64 entries;      /* the entries they hold (a block: its N_BLOCK) */
  GArray *musts;        /* guint32: the blocks' must lists */
  const struct cache_file *file; /* the cache file the blocks' records are in */
  struct arena arena;
};

/* Read the entries of the blocks S keeps whole that a file written as
 * OVERLAY (OVER_*) copies, when the split did not read them (their BODY
 * NULL): from S's file, which the split read. False with *WHY set (to
 * free) if they cannot be read. */
bool split_fill(struct split *s, int overlay, char **why);

/* One pass over cached walk W's blocks after a walk given PREV, part of
 * W's record (cached_memo_part()), that recorded NOW: into OUT->kept every
 * entry at or below one of the directories it left unentered (NOW->tops),
 * a whole block where all of its entries are (it is not parsed, nor are
 * its records read or checked: the writer copies it with its sums); to FN
 * (with DATA) every other that PREV does not hold, as the memo entry WAS,
 * with NOW's entry of it (NULL: a directory no longer there or no longer
 * entered). False if the entries or the parsed blocks' records do not
 * parse or check out, or a directory left unentered has no entry (OUT to
 * clear all the same). OUT points into W's file: keep it until written. */
bool cached_walk_split(const struct cached_walk *w, const struct walk_memo *now,
                       const struct walk_memo *prev, struct split *out,
                       void (*fn)(const struct memo_dir *now, const struct memo_dir *was,
                                  void *data),
                       void *data);
void split_clear(struct split *s);

/* Where a pass over a cached walk's records hands its results: query Q's
 * PATH (LEN bytes, NUL-terminated, valid during the call). */
typedef void (*rec_emit_fn)(size_t q, const char *path, size_t len, void *data);

/* Hand every result of cached walk W (its file's records read and checked)
 * to FN, each query's in the order a walk of the same tree prints them;
 * MEMBERS (size_t) turn a record's mask bits into query indices. False if
 * the records do not parse (FN may have had some results). */
bool rec_pass(const struct cached_walk *w, const GArray *members, rec_emit_fn fn, void *data);

/* Is every directory cached walk W recorded (below ROOT_FD, its root) as
 * recorded (dir_check(), memo.h), none racy? One stat per directory,
 * nothing read. */
bool walk_unchanged(const struct cached_walk *w, int root_fd);

/* Every directory cached walk W records (below ROOT_FD) that is not as
 * recorded (walk_unchanged()'s rule, each stat'ed), into CHANGED (char *
 * paths relative to the root, a set taking them); false if the entries do
 * not parse. For a check asked for its changes alone without watchman:
 * what watchman's answer would name (cache.c, run_partial()). */
bool walk_changed(const struct cached_walk *w, int root_fd, GHashTable *changed);

/* Does watchman vouch for the directory PATH (LEN bytes, NUL-terminated,
 * relative to the root) recorded as WAS: nothing in TOUCHED names it, and it
 * is none of those it never vouches for (the root, a racy one, one holding
 * a nested repository, a start directory or the way to one (START_OR_WAY),
 * one that was not there)? Its stamp is then as recorded, and neither the
 * re-check nor the replay stats it. */
bool watchman_vouches(const struct dir_stamp *was, size_t len, bool start_or_way, GHashTable *touched,
                      const char *path);

/* walk_unchanged() of only the directories watchman cannot vouch for:
 * those in TOUCHED (char * paths relative to the root; a directory named
 * as changed, or holding an entry named so), and those it never vouches
 * for (the root, a racy one, a start directory and the way to one). Into
 * *CHECKED how many were stat'ed. Its work: the names' and those
 * directories', found through the marks (dir_cursor), not the whole
 * index's — unless the names are so many that one pass over the index
 * costs less. */
bool walk_unchanged_but(const struct cached_walk *w, int root_fd, GHashTable *touched,
                        guint64 *checked);

/* Hand FN (with DATA) the path (LEN bytes, NUL-terminated, valid during
 * the call) of every directory cached walk W lists as one watchman never
 * vouches for (format.h, must); false if the list or the entries do not
 * parse. */
bool cached_walk_must(const struct cached_walk *w,
                      void (*fn)(const char *path, size_t len, void *data), void *data);

/* A reader of a cached walk's directory entries that starts at the mark
 * before the one it wants (format.h, marks): at most DIR_MARK_EVERY entries
 * read per lookup, and only the blocks it reads (the entries from one mark
 * to the next) taken from the file, each checked against its sum before a
 * byte of it is read and kept with the walk for every reader after — or
 * from the region, when it was read whole. PATH holds the last entry's
 * path; BAD, once set, stays (CORRUPT too: a block could not be read or did
 * not check out). */
struct dir_entry;
struct dir_cursor {
  const struct cached_walk *w;
  const guint8 *start, *p, *end; /* where its block starts, where entry NEXT starts, and
                                   where the block ends */
  guint32 next;
  guint32 block;        /* the block P is in (G_MAXUINT32: none) */
  GString *path;
  bool bad, corrupt;
};
void dir_cursor_init(struct dir_cursor *c, const struct cached_walk *w);
void dir_cursor_clear(struct dir_cursor *c);

/* Entry I (below w->n_dirs) into E, its path in C's (valid until C's next
 * call); false if the entries do not parse there (C bad). */
bool dir_cursor_at(struct dir_cursor *c, guint32 i, struct dir_entry *e);

/* The entry whose path is PATH (LEN bytes) into E and its number into *I,
 * by a binary search over the marks and a read of at most DIR_MARK_EVERY
 * entries (they are in path order, compare_dirs()); false if there is none
 * or the entries do not parse (then C bad). */
bool dir_cursor_find(struct dir_cursor *c, const char *path, size_t len, guint32 *i,
                     struct dir_entry *e);

/* Hand FN every question cached walk W asked of the index: the
 * directory's path (DLEN bytes, relative to the root; a directory on the way
 * to a start directory included), the name of the entry asked about and the
 * question's type (ASKED_* of memo.h: the answer too). They are kept in the
 * directory entries (format.h): the records are not read. False if the
 * entries do not check out or parse. */
bool cached_walk_asked(const struct cached_walk *w,
                       void (*fn)(const char *dir, size_t dlen, const char *name, size_t nlen,
                                  unsigned type, void *data),
                       void *data);

/* ---- writing ---- */

/* A walk to record: its root as given, device and inode, whether it had
 * problems, its members (size_t query indices), its memo. */
struct walk_record {
  const char *root;
  uint64_t dev, ino;
  bool problems;
  const GArray *members;
  const struct walk_memo *memo;
  const struct wm_at *clock;   /* watchman's clock taken before the walk, or NULL */
  const struct split *kept;    /* a walk that left directories unentered: the entries of
                                  the last record below them, written as they were (NULL:
                                  none) */
  int overlay;                 /* OVER_*: the blocks of KEPT in the base pointed to */
};

/* The ignore sources of a walk: paths, kinds (IGNORE_SOURCE_*), stamps
 * (struct stamp) taken before the walk, and the environment that chose
 * them. */
struct source_list {
  const GPtrArray *paths;
  const GByteArray *kinds;
  const GArray *stamps;
  const GString *env;
};

/* The records of a file being written: BYTES, and between them ranges of
 * the last cache file's (or its base's) copied as they are, unread (struct
 * rec_splice, in order), from the file at FROM[PART].path as long as it is
 * the one read (its device, inode and size: it is opened again to be
 * copied, so that a write held for later holds no descriptor). LEN is all
 * of them. OVERLAY: the file is written over a base (format.h: base), the
 * last file (OVER_LAST: made the base, a link to it) or the last file's
 * base (OVER_BASE), whose blocks its marks point into: those blocks are
 * neither copied nor read. */
struct rec_splice {
  guint64 at;           /* before BYTES' byte AT */
  guint64 from, len;    /* the file's bytes */
  guint32 part;         /* 0: the last file; 1: its base */
};
struct rec_from {
  char *path;
  guint64 dev, ino, size;
};
enum { OVER_NONE, OVER_LAST, OVER_BASE };
struct recs_out {
  GByteArray *bytes;
  GArray *splices;
  struct rec_from from[2];
  int overlay;
  guint64 len;
};
void recs_out_init(struct recs_out *o, guint reserve);
/* O is written over a base, as OVERLAY (OVER_*) says, C the last file. */
void recs_out_over(struct recs_out *o, const struct cache_file *c, int overlay);
void recs_out_clear(struct recs_out *o);

/* Start index B: the trawl VERSION that writes it, the QUERIES' bytes
 * (cache_query_write()), the base it is written over (OVER: NULL, none;
 * else the last file, OVER_LAST, or its base, OVER_BASE) and how many walks
 * follow. */
void cache_index_begin(GByteArray *b, const char *version, const GByteArray *queries,
                       const struct cache_file *over, int overlay, size_t n_walks);

/* Is it worth writing over a base (format.h: base) after a walk whose
 * records' rest, kept from OLD, is SPLITS (N of them): OVER_LAST,
 * OVER_BASE, or OVER_NONE (a whole file, when the blocks left where they
 * are would be less than half of it, or OLD is not at PATH). */
int cache_overlay_choice(const struct cache_file *old, const char *path,
                         const struct split *const *splits, size_t n);

/* Append walk W with its sources SRC to index B, its directory entries to
 * DIRS (each block's sum to B, with its mark), its records to RECS (a block
 * kept whole as a range of its file's); a source stamped at or after
 * RACY_FROM is recorded as racy. */
void cache_write_walk(GByteArray *b, GByteArray *dirs, struct recs_out *recs,
                      const struct walk_record *w, const struct source_list *src,
                      const struct timespec *racy_from);

/* Write INDEX (the version, the queries, the walks), DIRS and RECS to PATH
 * through a temporary file renamed into place (RECS' ranges of another file
 * copied in the kernel, copy_file_range(), where it can); over a base
 * (RECS->overlay), the last file made the base first (a link, PATH.base),
 * or the base checked to be there; a whole file removes PATH.base after it.
 * False with *WHY set. */
bool cache_store(const char *path, const GByteArray *index, const GByteArray *dirs,
                 const struct recs_out *recs, char **why);

/* ---- the queries: written and read as data ---- */

/* Start N queries in B, then write each: what decides a result (not
 * threads or the reader). Compared as bytes. */
void cache_queries_begin(GByteArray *b, size_t n);
void cache_query_write(GByteArray *b, const char *root, const GPtrArray *includes,
                       const GPtrArray *excludes, const TrawlWalkOptions *o);

/* A pattern and a query as read back (texts in the caller's bytes). */
struct cached_pattern {
  const char *text;
  size_t len;
  unsigned dialect, flags;
};
struct cached_query {
  const char *root;
  size_t root_len;
  const struct cached_pattern *includes;
  size_t n_includes;
  const struct cached_pattern *excludes;
  size_t n_excludes;
  TrawlWalkOptions opt;
};

/* Called with each query I of the bytes read; false stops. */
typedef bool (*cache_query_fn)(size_t i, const struct cached_query *q, void *data);

/* Read the queries BYTES (LEN) hold, calling FN for each; false if FN
 * stopped or the bytes do not parse. */
bool cache_queries_read(const guint8 *bytes, size_t len, cache_query_fn fn, void *data);

G_END_DECLS

#endif /* TRAWL_CACHEFILE_H */
