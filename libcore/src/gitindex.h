/* trawl — a repository's index, read as git reads it (private; included by
 * ignore.c and cache/sources.c, and by the tests, the fuzzer and bench/).
 *
 * git's rule: ignore rules apply to untracked paths only. A path the index
 * holds is never ignored, nor is a directory with tracked paths below it;
 * so the walker asks the index, by path, whenever one of git's rules would
 * leave something out (docs/ignore.md, "Tracked paths").
 *
 * The index is the one file `$GIT_DIR/index` (gitformat-index(5)): formats
 * 2, 3 and 4 (paths prefix-compressed), the split index (the `link`
 * extension: a shared index `$GIT_DIR/sharedindex.<hash>` and the changes
 * made on top of it), and the sparse index (`sdir`: a directory entry
 * `dir/` stands for every path of its tree). Every entry counts, whatever
 * its flags: skip-worktree, intent-to-add, a merge's stages. Read once and
 * asked by binary search: formats 2 and 3 where the entries are in the
 * mapped file, through the offset and a copy of the path of every
 * eighth (no array of a hundred thousand entries to fault in, and a
 * search that waits for the mapped file only in its last eight steps),
 * format 4 and a split index spelt out into one sorted array; the file's
 * checksum is not verified, as git does not verify it when it reads (only
 * fsck does).
 * docs/adr/0006-index-reader.md says why this is written here rather than
 * taken from libgit2.
 *
 * A gitindex is immutable once read: any thread may ask it.
 */
#ifndef TRAWL_GITINDEX_H
#define TRAWL_GITINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <glib.h>

G_BEGIN_DECLS

/* What an entry is, beyond its path. */
enum {
  GITINDEX_SPARSE_DIR = 1 << 0,   /* mode 040000: `dir/` of a sparse index, its whole tree */
  GITINDEX_GITLINK = 1 << 1,      /* mode 0160000: a submodule's commit */
  GITINDEX_SKIP_WORKTREE = 1 << 2,
  GITINDEX_INTENT_TO_ADD = 1 << 3,
};

struct gitindex_entry {
  const char *path;     /* relative to the top, not NUL-terminated; `dir/` for a sparse directory */
  uint32_t len;
  uint8_t flags;        /* GITINDEX_* */
  uint8_t stage;        /* 0, or 1-3 in a merge */
};

/* One of every eight entries read in place: where it is, from the
 * first entry, and where its path's copy is in the index's KEYS. */
struct gitindex_mark {
  size_t at;
  size_t key;
  size_t len;
};

struct gitindex {
  /* Sorted bytewise by path, then by stage: spelt out (format 4, a split
   * index), or NULL when the entries are read where they are in the file
   * (formats 2 and 3): then FIRST is the first, MARKS every eighth,
   * KEYS their paths side by side, FIXED each one's length before its path. */
  struct gitindex_entry *entries;
  size_t n;
  const guint8 *first;
  struct gitindex_mark *marks;
  char *keys;
  size_t fixed;
  unsigned version;     /* of the file read (2, 3 or 4) */
  bool split;           /* it had a shared index */
  bool sparse;          /* it holds sparse directory entries */
  /* Where the paths are: the files' bytes (the index, its shared index),
   * and each one's paths spelt out when it is in format 4. */
  void *map[2];
  size_t map_len[2];
  char *names[2];
};

/* Read the index file PATH (its shared index, for a split index, from the
 * same directory), whose object names are HASH_LEN bytes long (20: SHA-1,
 * 32: SHA-256). A missing file is an empty index (a repository with nothing
 * added yet). NULL with ERROR set (G_FILE_ERROR) naming the file and what is
 * wrong with it; never a partial index. Free with gitindex_free(). */
struct gitindex *gitindex_read(const char *path, size_t hash_len, GError **error);

void gitindex_free(struct gitindex *ix);

/* Every entry of IX, in order, spelt out (for the tests, the fuzzer and
 * bench/): an array of IX->n (at least one) to g_free(); its paths point
 * into IX. */
struct gitindex_entry *gitindex_entries(const struct gitindex *ix);

/* Does IX hold the file PATH (LEN bytes, relative to the top): an entry of
 * that name at any stage, or a sparse directory entry above it? */
bool gitindex_has_file(const struct gitindex *ix, const char *path, size_t len);

/* Does IX hold paths below the directory PATH (LEN bytes, relative to the
 * top; not "" ): an entry whose name starts with PATH/, a submodule at
 * PATH, or a sparse directory entry at or above it? */
bool gitindex_has_dir(const struct gitindex *ix, const char *path, size_t len);

/* ---- reading in a thread of its own ---------------------------------------- *
 *
 * A walk meets its first ignored path long before it needs most of its
 * answers, and a hundred thousand entries take a millisecond or two to step
 * over (docs/benchmarks.md, "The index"). So the walker starts the read in a
 * thread and asks at once: a question is answered as soon as the entries
 * read so far decide it, and the walker waits only for those. The entries
 * are sorted, so once the read has passed where PATH would be, "not held" is
 * decided (and PATH's ancestors, sorted before it, have been seen: a sparse
 * directory above it too). "Held" waits for the whole file: an index that
 * turns out damaged at its end is no index (every answer "not held"), so an
 * early "not held" is right either way, and an early "held" would not be.
 * Only formats 2 and 3, and only when the index's directory holds no
 * `sharedindex.*` file (looked at after the index is opened: a split index's
 * shared index is written before the index that names it, so one that names
 * a shared index found missing is damaged, and no index): a split index, and
 * format 4, are answered once read whole.
 *
 * And only as much is read as the questions need: the thread pauses after
 * the first 4,096 entries until a question they do not decide asks it to
 * read on (to the end: such a walk asks about paths all along the index),
 * and stops where it is when the walk is over (gitindex_reader_stop()). A walk that asks about its first
 * directories alone never reads the rest; damage past what it read is
 * then not seen. */
struct gitindex_reader;

/* Start reading PATH (as gitindex_read() does) in a thread; an index of
 * less than a megabyte, or one whose thread cannot be started, is read here
 * at once. Never NULL. */
struct gitindex_reader *gitindex_reader_start(const char *path, size_t hash_len);

/* gitindex_has_file() and gitindex_has_dir() of the index being read: the
 * answer they give once it is read (false when it cannot be), waiting only
 * until the entries read decide it. Any thread may ask. */
bool gitindex_reader_has_file(struct gitindex_reader *rd, const char *path, size_t len);
bool gitindex_reader_has_dir(struct gitindex_reader *rd, const char *path, size_t len);

/* Wait for the read's end: the index (RD's), or NULL with *ERROR set to why
 * (RD's; NULL when it was read). */
const struct gitindex *gitindex_reader_wait(struct gitindex_reader *rd, const GError **error);

/* Has the read ended? (Without waiting.) */
bool gitindex_reader_done(struct gitindex_reader *rd);

/* Read on to the end, whatever the questions need (a caller that will ask
 * about paths all along the index, later); without waiting. */
void gitindex_reader_read_all(struct gitindex_reader *rd);

/* No more questions: end the read where it is, without reading on. True
 * when it had read the whole file (then *ERROR as gitindex_reader_wait()
 * sets it), false when it stopped short (*ERROR NULL). */
bool gitindex_reader_stop(struct gitindex_reader *rd, const GError **error);

/* Stop the read (gitindex_reader_stop()), and free RD and its index. */
void gitindex_reader_free(struct gitindex_reader *rd);

/* For the tests: make every reader's thread pause for about US microseconds
 * after every 256 entries it reads (0: none), so that questions meet a read
 * in progress. */
void gitindex_reader_test_delay(unsigned us);

/* For the tests: read an index of BYTES or more in a thread (0: every one
 * that is there; the default, a megabyte). */
void gitindex_reader_test_thread_from(size_t bytes);

G_END_DECLS

#endif /* TRAWL_GITINDEX_H */
