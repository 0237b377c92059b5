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
 * is. docs/cache.md has the rules; cache.c stores memos in files.
 */
#ifndef TRAWL_MEMO_H
#define TRAWL_MEMO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
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

enum { MEMO_RESULT, MEMO_SUBTREE, MEMO_SUBTREE_LINK };

struct memo_rec {
  const char *name;     /* in the directory's block */
  uint32_t len;
  uint8_t kind;         /* MEMO_* */
  uint8_t type;         /* TrawlEntryType of a result */
  uint64_t mask;        /* a result's queries; a subtree's live queries */
};

struct memo_dir {
  gint refs;
  unsigned root;
  const char *path;     /* relative to the root, "" for the root; in the block */
  size_t len;
  uint64_t live;        /* the queries that read it */
  struct stamp st;      /* present false: a start directory that was not there */
  unsigned has;         /* HAS_* of ignore.h: ignore files in its listing */
  struct stamp ignore[2]; /* .gitignore and .ignore, as read (present false: not read) */
  bool racy;            /* stamped too close to the read to be trusted */
  bool start;           /* a start directory: opened from the root component by component */
  bool way;             /* not read: a directory on the way to a start directory, recorded
                           for its ignore files (no records) */
  guint n;
  struct memo_rec recs[]; /* sorted as the walk prints them; then the names and path */
};

/* Every directory of a walk, by root and path. */
struct walk_memo {
  GHashTable *dirs;     /* "root\0path" (struct memo_key) -> struct memo_dir * */
  uint64_t racy;        /* how many are racy */
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
