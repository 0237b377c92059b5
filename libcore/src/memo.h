/* trawl — what a walk saw, for the next walk to trust (private).
 *
 * A memo records, for every directory a sorted walk read, the stamp it had
 * when read (device, inode, mtime and ctime to the nanosecond) and the
 * walk's decisions there: its results and the subdirectories it entered,
 * in order, with their query masks. A later walk given the memo stats each
 * directory instead of reading it; when the stamp is the same (and was not
 * racy, and the directory's own ignore files are unchanged), the names in
 * it are the same and so are the decisions, which are replayed. Otherwise
 * the directory is read again, and below a changed ignore file everything
 * is. docs/cache.md has the rules; cache/cachefile.c stores memos in files.
 */
#ifndef TRAWL_MEMO_H
#define TRAWL_MEMO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <glib.h>

G_BEGIN_DECLS

/* What identifies a version of a directory or a file. */
struct stamp {
  uint64_t dev, ino;
  int64_t mtime_s, ctime_s;
  uint32_t mtime_ns, ctime_ns;
  uint64_t size;        /* files (ignore files); 0 for directories */
  bool present;         /* false: the file did not exist */
};

enum { MEMO_RESULT, MEMO_SUBTREE, MEMO_SUBTREE_LINK, MEMO_ASKED };

/* A subtree's type: entered for its tracked paths alone (walk/walk-run.h,
 * item.tracked_only). */
#define MEMO_TRACKED_ONLY 1
/* A question's type: asked of a directory (does the index hold paths below
 * it?), not of a file (does it hold the file?); and the index's answer. */
#define ASKED_DIR 1
#define ASKED_TRACKED 2

struct memo_rec {
  const char *name;     /* in the directory's block */
  uint32_t len;
  uint8_t kind;         /* MEMO_* */
  uint8_t type;         /* a result's TrawlEntryType; a subtree's MEMO_TRACKED_ONLY; a
                           question's ASKED_* */
  uint64_t mask;        /* a result's queries; a subtree's live queries */
};

/* What a directory was when a walk read it (or passed it on the way to a
 * start directory): the inputs that the walk's decisions there and below
 * depend on, apart from the sources outside the walk (cache/sources.c). */
struct dir_stamp {
  struct stamp st;      /* present false: a start directory that was not there */
  unsigned has;         /* HAS_* of ignore.h: ignore files and `.git` in its listing */
  struct stamp ignore[2]; /* ignore_file_name[k], as read (present false: none) */
  bool racy;            /* its own stamp too close to the read to be trusted (or a
                           directory never to be trusted: links followed) */
  bool rules_racy;      /* an ignore file's (or a nested repository's source's) stamp too
                           close to the read */
  const uint8_t *repo;  /* the directory holds a nested repository's `.git`: its sources
                           (repo_sources_add()), REPO_LEN bytes; NULL: none */
  uint32_t repo_len;
};

/* The one rule for "is this directory as recorded?" (docs/cache.md, "When a
 * directory is read again"), for the walk's replay and the cache's re-check
 * alike. */
enum dir_verdict {
  DIR_SAME,             /* trust the record: same names, same decisions */
  DIR_CHANGED,          /* read it again */
  DIR_RULES_CHANGED,    /* read it again, and everything below: its rules changed */
};

/* Directory WAS now: NOW is its stat, NULL when it is not there or is not a
 * directory; its ignore files are looked up in directory AT / DIR (DIR ""
 * for AT itself). */
enum dir_verdict dir_check(const struct dir_stamp *was, const struct stat *now, int at,
                           const char *dir);

/* The rules of directory WAS (its ignore files, its `.git`) now, whose
 * listing or probe shows HAS_NOW, looked up in AT / DIR: DIR_SAME or
 * DIR_RULES_CHANGED. For a directory read again, or one on the way to a
 * start directory: whether what was decided below it still stands. */
enum dir_verdict dir_check_rules(const struct dir_stamp *was, unsigned has_now, int at,
                                 const char *dir);

/* An outside source's stamp now: PATH (relative to AT, or absolute) as
 * ignore_sources() lists it, of KIND (IGNORE_SOURCE_*: its stamp; whether
 * it exists; whether the name exists). A directory (a `.git`) counts only
 * as being one: git writes in it all the time. */
void source_stamp_at(int at, const char *path, unsigned kind, struct stamp *out);

/* A nested repository's sources (ignore_repo_sources()), recorded with the
 * directory that holds its `.git` (dir_stamp.repo), as a block of bytes
 * that the cache file keeps as it is: per source, u8 kind, u16 length and
 * the path (relative to the directory, or absolute), u8 present, and when
 * present its stamp's fields (u64 dev, ino, i64 mtime_s, u32 mtime_ns, i64
 * ctime_s, u32 ctime_ns, u64 size; little-endian). */
/* Append to B the source at PATH (relative to directory AT, or absolute)
 * of KIND, stamped now; true when its stamp is racy (at or after FROM). */
bool repo_sources_add(GByteArray *b, int at, const char *path, unsigned kind,
                      const struct timespec *from);
/* Is every source of block BLK (LEN bytes) stamped now, in directory AT /
 * DIR (DIR "" for AT itself), as recorded? False for a block that does not
 * parse. */
bool repo_sources_hold(const uint8_t *blk, size_t len, int at, const char *dir);
/* The next source of a block at *P (before END): its path into *PATH and
 * *PLEN (not NUL-terminated), its kind into *KIND; false at the end or when
 * it does not parse (*P at END then). */
bool repo_sources_next(const uint8_t **p, const uint8_t *end, const char **path, size_t *plen,
                       unsigned *kind);

/* The stamps of the ignore files HAS names in directory AT / DIR, into OUT
 * (present false: not there, or not named). */
void ignore_file_stamps(int at, const char *dir, unsigned has, struct stamp out[2]);

/* The order in which a walk prints two directories' subtrees, A and B (LEN
 * bytes each, relative to the root, "" the root itself): by their paths
 * with a '/' after each — "a.b" before "a", whose entries sort as "a/..." —
 * and the root first. The walk orders its start directories so (walk/sched.c),
 * and the cache's pass over the records follows it (cache/cachefile.c). */
int subtree_order(const char *a, size_t alen, const char *b, size_t blen);

/* Racy stamps (git's racy-timestamp rule): a file changed again within the
 * clock tick of its last change keeps its stamp. FROM gets the instant
 * from which stamps read from now on are racy: two ticks of the kernel's
 * coarse clock (file times come from it), at least 1 ms, before now. */
void racy_from_now(struct timespec *from);

/* Is S (present) at or after FROM, or its mtime or ctime cut to a file
 * system's grain (whole seconds: 2 s; hundredths: 10 ms) within that grain
 * before it? */
bool stamp_racy(const struct stamp *s, const struct timespec *from);

struct memo_dir {
  gint refs;
  unsigned root;
  const char *path;     /* relative to the root, "" for the root; in the block */
  size_t len;
  uint64_t live;        /* the queries that read it */
  struct dir_stamp was;
  bool start;           /* a start directory: opened from the root component by component */
  bool way;             /* not read: a directory on the way to a start directory, recorded
                           for its ignore files (no records) */
  bool vouched;         /* a cache's record that watchman vouches for (cache/cache.c,
                           vouch()): replayed without a stat */
  GBytes *repo_own;     /* holds was.repo, when it is not in a cache file's index */
  guint n;
  struct memo_rec recs[]; /* sorted as the walk prints them; then the names and path */
};

/* What a memo that holds only part of a cache's record knows of the rest
 * (cache/cache.c: a check that wants only the changes, told by watchman
 * which directories may have changed). HOT (char *, paths below root 0, a
 * set) names every directory that may have changed, and every one on the
 * way to such a directory: the memo holds those of them the record has.
 * Any other directory the record has is, with everything below it, as
 * recorded: a walk given the memo does not enter it (walk/replay.c), and
 * names it in its own memo's TOPS instead; its results are the record's. */
struct memo_partial {
  GHashTable *hot;
  /* Every directory recorded and not in HOT was stat'ed by this run, after
   * the record was written, and found as recorded (the check's own stats,
   * not watchman's names): a directory at its path now is the one
   * recorded, with no second stat. */
  bool stated;
  /* Does the record hold directory PATH (LEN bytes), not on the way to a
   * start directory nor one, read for the queries LIVE? Its stamp then
   * into *WAS (borrowed until the next call). (Any thread.) */
  bool (*recorded)(const struct memo_partial *p, const char *path, size_t len, uint64_t live,
                   struct dir_stamp *was);
};

/* Every directory of a walk, by root and path. */
struct walk_memo {
  GHashTable *dirs;     /* "root\0path" (struct memo_key) -> struct memo_dir * */
  uint64_t racy;        /* how many are racy */
  const struct memo_partial *partial; /* a memo of part of a record (NULL: all of it) */
  GPtrArray *tops;      /* a walk's memo, given a partial one: char *, the directories it
                           left unentered (below root 0); else NULL */
};

struct walk_memo *walk_memo_new(void);
void walk_memo_free(struct walk_memo *m);

/* The directory PATH (LEN bytes) of ROOT, or NULL. */
const struct memo_dir *walk_memo_lookup(const struct walk_memo *m, unsigned root,
                                        const char *path, size_t len);

/* Add D (taking a reference), replacing any entry for its path. */
void walk_memo_add(struct walk_memo *m, struct memo_dir *d);

/* A new directory entry with room for N records and NAMES bytes of names;
 * the caller fills recs[] (names copied with memo_dir_name) and the rest. */
struct memo_dir *memo_dir_new(unsigned root, const char *path, size_t len, guint n, size_t names);
char *memo_dir_names(struct memo_dir *d); /* where the names go */
struct memo_dir *memo_dir_ref(const struct memo_dir *d);
void memo_dir_unref(struct memo_dir *d);

/* A byte string that is not NUL-terminated, as a hash key (span_hash,
 * span_equal). */
struct span {
  const char *s;
  size_t len;
};
guint span_hash(gconstpointer p);
gboolean span_equal(gconstpointer a, gconstpointer b);

void stamp_of(struct stamp *out, const struct stat *st, bool with_size);
bool stamp_equal(const struct stamp *a, const struct stamp *b);

G_END_DECLS

#endif /* TRAWL_MEMO_H */
