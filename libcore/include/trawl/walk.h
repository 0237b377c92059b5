/* trawl — the walk service: a parallel, pattern-pruned directory walker.
 *
 * A walker is configured once (options, roots, include and exclude
 * patterns), then run any number of times. A run visits the directories that
 * can hold a match and no others: it starts at the literal leading
 * directories of the includes, leaves closed every directory below which no
 * include can match, every directory an exclude covers, and hidden
 * directories the patterns do not name; it reports each entry that an
 * include matches and no exclude does, with its path relative to its root.
 * Includes are asked with the entry's type (trawl_pattern_match_entry: the
 * bazel dialect's "a/ **" selects a directory "a", never a file), excludes
 * untyped; a bazel exclude closes a directory only when it matches
 * everything below it, as glob() leaves out only the paths it matches.
 *
 * Ownership: the walker borrows the patterns given to it (they must outlive
 * it) and copies the root strings. trawl_walker_collect() returns an array
 * the caller frees with g_ptr_array_unref().
 *
 * Threads: a run may use helper threads (options.threads, default the online
 * CPUs; they start only once the walk has shown enough work). The callback of
 * trawl_walker_run() is called from those threads, concurrently, in no
 * particular order; the entry it receives is valid during the call only.
 * One walker runs one walk at a time.
 *
 * Errors: a root that cannot be opened fails the run (TRAWL_WALK_ERROR_ROOT).
 * A directory that cannot be read below a root does not: it is skipped, the
 * rest completes, and the problem is listed by trawl_walker_problems(). An
 * entry that vanishes while the walk runs is not a problem.
 */
#ifndef TRAWL_WALK_H
#define TRAWL_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <glib.h>

#include "trawl/export.h"
#include "trawl/pattern.h"

G_BEGIN_DECLS

/* TrawlEntryType is declared in trawl/pattern.h (the typed match takes one). */

typedef enum {
  TRAWL_READER_DEFAULT = 0, /* the Linux reader where built, else POSIX */
  TRAWL_READER_LINUX,       /* getdents64 into a large buffer, openat(parent) */
  TRAWL_READER_POSIX,       /* opendir/readdir */
} TrawlReader;

/* Ignore files (docs/ignore.md). An ignored entry is not reported and an
 * ignored directory is not entered (git cannot re-include below one). */
typedef enum {
  TRAWL_IGNORE_VCS = 1 << 0,            /* .gitignore, $GIT_DIR/info/exclude and
                                           core.excludesFile, inside a git work tree;
                                           `.git` itself is skipped */
  TRAWL_IGNORE_DOT = 1 << 1,            /* .ignore files, anywhere */
  TRAWL_IGNORE_NO_REQUIRE_GIT = 1 << 2, /* .gitignore files outside a work tree too */
} TrawlIgnoreFlags;

typedef struct {
  bool hidden;          /* visit entries whose name starts with '.' */
  bool follow;          /* follow symbolic links (loops are detected) */
  unsigned types;       /* TrawlEntryType mask to report; 0 means files */
  int max_depth;        /* deepest entry reported (1: the root's own); < 0 unlimited */
  bool one_file_system; /* do not cross into other file systems */
  unsigned threads;     /* 0: online CPUs; 1: serial */
  TrawlReader reader;
  unsigned ignore;      /* TrawlIgnoreFlags; default VCS | DOT; 0: read no ignore file */
  uint64_t reserved[4]; /* zeroed by trawl_walk_options_init(); never read */
} TrawlWalkOptions;

/* A result. Only the library makes one and hands it over by pointer (a
 * caller never allocates one for it to fill), so fields are added at the
 * end. */
typedef struct {
  const char *path;     /* relative to its root, NUL-terminated */
  size_t len;
  TrawlEntryType type;  /* what it is (a followed link: what it points to) */
  unsigned root;        /* index of its root, in the order added */
  uint64_t queries;     /* a shared walk (trawl/plan.h): bit i for each query i it answers;
                           1 in a walker's own walk */
} TrawlEntry;

typedef struct {
  uint64_t dirs_opened;   /* directories read */
  uint64_t dirs_reused;   /* directories not read: a cache's record of them was trusted */
  uint64_t dirs_pruned;   /* subdirectories left closed by the patterns or ignore rules */
  uint64_t entries_seen;  /* directory entries examined */
  uint64_t results;       /* entries reported */
  unsigned threads_used;  /* threads that took part (1 when serial) */
  uint64_t reserved[4];   /* written as zero */
} TrawlWalkStats;

/* Called for each result, from worker threads; return false to stop. */
typedef bool (*TrawlEntryFunc)(const TrawlEntry *entry, void *data);

typedef struct TrawlWalker TrawlWalker;

#define TRAWL_WALK_ERROR (trawl_walk_error_quark())
typedef enum {
  TRAWL_WALK_ERROR_ROOT,    /* a root is missing or not a readable directory */
  TRAWL_WALK_ERROR_READ,    /* a directory could not be read (a problem) */
  TRAWL_WALK_ERROR_LOOP,    /* a followed link leads back to an ancestor (a problem) */
  TRAWL_WALK_ERROR_IGNORE,  /* an ignore file could not be read: unreadable, a link, over
                               100 MiB (a problem; the walk goes on without it) */
} TrawlWalkError;

/* The error domain of the walker. */
TRAWL_API GQuark trawl_walk_error_quark(void);

/* Options with their defaults: files only, no hidden, no follow, unlimited
 * depth, online CPUs, the default reader, ignore files as git and fd read
 * them (TRAWL_IGNORE_VCS | TRAWL_IGNORE_DOT). */
TRAWL_API void trawl_walk_options_init(TrawlWalkOptions *options);

/* A new walker with a copy of OPTIONS (NULL: defaults). Free with
 * trawl_walker_free(). */
TRAWL_API TrawlWalker *trawl_walker_new(const TrawlWalkOptions *options);

/* Release a walker; NULL is allowed. */
TRAWL_API void trawl_walker_free(TrawlWalker *w);

/* Add a root directory (copied); results carry its index. A walker given
 * none walks ".". */
TRAWL_API void trawl_walker_add_root(TrawlWalker *w, const char *root);

/* Add an include (borrowed). With no include, everything matches. */
TRAWL_API void trawl_walker_add_include(TrawlWalker *w, const TrawlPattern *p);

/* Read the ignore file PATH (gitignore syntax, patterns relative to each
 * root) and apply it after every other ignore file. False with ERROR set
 * (TRAWL_WALK_ERROR_IGNORE) when it cannot be read. Applies whatever
 * options.ignore says. */
TRAWL_API bool trawl_walker_add_ignore_file(TrawlWalker *w, const char *path, GError **error);

/* Add an exclude (borrowed): matching entries are not reported, and a
 * directory it matches, or covers ("build/ **"), is not entered. */
TRAWL_API void trawl_walker_add_exclude(TrawlWalker *w, const TrawlPattern *p);

/* Walk, calling FN for every result (unsorted, from worker threads). Returns
 * false with ERROR set only when the walk could not run (a bad root); an
 * early stop by FN is a success. */
TRAWL_API bool trawl_walker_run(TrawlWalker *w, TrawlEntryFunc fn, void *data,
                                GError **error);

/* Walk, then call FN on the calling thread for every result in order: the
 * roots in the order added, each root's results sorted bytewise by path.
 * FN returning false skips the rest. Errors as trawl_walker_run(). Holds the
 * results until the walk ends: each directory's names once, not whole
 * paths. */
TRAWL_API bool trawl_walker_run_sorted(TrawlWalker *w, TrawlEntryFunc fn, void *data,
                                       GError **error);

/* Walk and return the results as an array of NUL-terminated paths, relative
 * to their roots and sorted bytewise, or NULL with ERROR set. Over several
 * roots the roots' results are merged into one sorted array, which does not
 * say which root a path is below (nor tells apart one path found below two):
 * trawl_walker_collect_entries() does. Free with g_ptr_array_unref(). */
TRAWL_API GPtrArray *trawl_walker_collect(TrawlWalker *w, GError **error);

/* Walk and return the results as an array of TrawlEntry *, in the order of
 * trawl_walker_run_sorted(): the roots in the order added, each root's
 * results sorted bytewise by path; each entry's root is its root's index
 * (0 for the "." of a walker given no root), its path relative to that
 * root. Or NULL with ERROR set. Free with g_ptr_array_unref(): it frees the
 * entries and their paths. */
TRAWL_API GPtrArray *trawl_walker_collect_entries(TrawlWalker *w, GError **error);

/* Why a path is, or is not, a result (trawl_walker_explain). */
typedef enum {
  TRAWL_EXPLAIN_INCLUDED,     /* a result: an include matches, nothing leaves it out */
  TRAWL_EXPLAIN_NOT_INCLUDED, /* no include matches it */
  TRAWL_EXPLAIN_EXCLUDED,     /* an exclude matches it, or covers a directory above it */
  TRAWL_EXPLAIN_IGNORED,      /* an ignore rule leaves it, or a directory above it, out */
  TRAWL_EXPLAIN_HIDDEN,       /* it, or a directory above it, is hidden */
  TRAWL_EXPLAIN_PRUNED,       /* a directory above it is never opened: no include can
                                 match below it */
  TRAWL_EXPLAIN_DEPTH,        /* deeper than max_depth */
  TRAWL_EXPLAIN_TYPE,         /* its type is not among options.types */
  TRAWL_EXPLAIN_MISSING,      /* no such entry */
  TRAWL_EXPLAIN_GIT_DIR,      /* `.git`, or inside it */
  TRAWL_EXPLAIN_LINK,         /* a directory above it is a symbolic link, not followed */
  TRAWL_EXPLAIN_OUTSIDE,      /* a `..` component: not below the root, where a walk never
                                 goes (nothing is looked at) */
} TrawlExplainReason;

typedef struct {
  bool selected;
  TrawlExplainReason reason;   /* the first check that failed, in the walk's order */
  unsigned type;               /* TrawlEntryType (lstat), 0 when missing */
  const TrawlPattern *include; /* the first include that matches the path, or NULL */
  const TrawlPattern *exclude; /* the exclude that left it out, or NULL */
  char *directory;             /* the directory above it where the walk stopped, or NULL */
  /* The ignore rule that decides: the rule that ignores the first ignored
   * directory above the path, else the path's own last matching rule (a
   * negation included); ignore_source NULL when none matched. */
  char *ignore_source;         /* as git check-ignore -v shows it */
  unsigned ignore_line;
  char *ignore_pattern;        /* [!]pattern[/] */
  bool ignore_negated;
  char *ignore_match;          /* the path the rule matched: the path or that directory */
  /* With follow: the first symbolic link on the way (a directory above the
   * path, or the path itself) that leads outside the root, and where it
   * leads (its real path); NULL when none does. */
  char *outside_link;
  char *outside_target;
  /* The index holds the path (a directory: paths below it), and that kept
   * a rule of git's from leaving it out: git ignores untracked paths only.
   * The ignore_* fields then name the rule that would otherwise apply. */
  bool tracked;
  uint64_t reserved[4];        /* written as zero */
} TrawlExplanation;

/* Explain PATH (relative to the first root) as a walk with this walker's
 * configuration would decide it, without walking: the directories above it
 * are looked at one by one. False with ERROR set only when the root cannot
 * be opened. Release OUT with trawl_explanation_clear(). */
TRAWL_API bool trawl_walker_explain(TrawlWalker *w, const char *path, TrawlExplanation *out,
                                    GError **error);
TRAWL_API void trawl_explanation_clear(TrawlExplanation *e);

/* Problems of the last run that did not stop it, as GErrors in
 * TRAWL_WALK_ERROR, each naming its path; owned by the walker. */
TRAWL_API const GPtrArray *trawl_walker_problems(const TrawlWalker *w);

/* Counters of the last run. */
TRAWL_API void trawl_walker_stats(const TrawlWalker *w, TrawlWalkStats *out);

G_END_DECLS

#endif /* TRAWL_WALK_H */
