/* trawl — ignore files read as git reads them (private).
 *
 * An ignore file is parsed once into rules (gitignore(5)): blank lines and
 * '#' comments skipped, a UTF-8 byte-order mark skipped, a CR before each LF
 * dropped, trailing spaces trimmed unless escaped, '!' negates, one trailing
 * '/' restricts a rule to directories, a rule with no other '/' matches the
 * basename at any depth, any other rule is matched (wildmatch, WM_PATHNAME,
 * git's literal cut: the git dialect of pattern.h) against the path relative
 * to the file's directory, a leading '/' dropped. A line is cut at a NUL
 * byte, as git's C strings cut it. Within one file the last matching rule
 * wins.
 *
 * Where the files come from and in which order they are consulted is the
 * walker's business (walk/step.c, walk/replay.c); this file also finds the
 * repository a directory belongs to and the excludes file git's
 * configuration names.
 */
#ifndef TRAWL_IGNORE_H
#define TRAWL_IGNORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <glib.h>

#include "gitindex.h"
#include "trawl/pattern.h"

/* Files larger than this are not read (a problem is reported instead). */
#define IGNORE_FILE_MAX (100u * 1024 * 1024)

struct ignore_rule {
  TrawlPattern *pattern; /* git dialect; NULL: the rule matches nothing */
  char *shown;            /* as `git check-ignore -v` prints it: [!]pattern[/] */
  unsigned line;          /* 1-based line in the file */
  bool negated;           /* '!': a match re-includes */
  bool dir_only;          /* trailing '/': matches directories only */
  bool vcs;               /* its file is one of git's (ignore_file.vcs) */
  bool basename;          /* no '/' in the pattern: matched against the last component */
  const char *suffix;     /* the pattern's literal suffix (trawl_pattern_literal_suffix), */
  size_t suffix_len;      /* compared first, inline (0: none) */
};

struct ignore_file {
  gint refs;
  char *source;           /* the file's name as shown (relative to the root, or absolute) */
  bool vcs;               /* one of git's (.gitignore, info/exclude, the excludes file):
                             its rules leave a tracked path alone (ignore_tracked) */
  struct ignore_rule *rules;
  size_t n;
  /* The last bytes of the paths a rule may match, as 256-bit sets: for files
   * (rules without a trailing '/') and for directories (all rules). A rule
   * with a literal suffix allows its last byte only, one without allows
   * every byte. A path whose last byte is in neither set of a file skips it
   * without a call (ignore_verdict). */
  uint64_t last_file[4], last_dir[4];
};

/* Parse LEN bytes of DATA (any bytes) as an ignore file shown as SOURCE.
 * Never fails; a line that cannot be compiled becomes a rule that matches
 * nothing. Returns a file with one reference. */
struct ignore_file *ignore_file_parse(const char *source, const char *data, size_t len);

/* Read NAME relative to directory DIRFD (AT_FDCWD allowed) and parse it.
 * NOFOLLOW: refuse a symbolic link (git does not follow in-tree ignore
 * files). Returns 0 and *OUT, or an errno value with *OUT NULL: ENOENT (or
 * ENOTDIR) when there is no such file, EFBIG when it is larger than
 * IGNORE_FILE_MAX, ELOOP for a link refused, others as the system said. */
int ignore_file_read(int dirfd, const char *name, bool nofollow, const char *source,
                     struct ignore_file **out);

struct ignore_file *ignore_file_ref(struct ignore_file *f);
void ignore_file_unref(struct ignore_file *f);

/* The last rule of F that matches PATH (LEN bytes, relative to the file's
 * directory, no leading '/'), an entry that is a directory when IS_DIR; NULL
 * if none does. */
const struct ignore_rule *ignore_file_match(const struct ignore_file *f, const char *path,
                                            size_t len, bool is_dir);

/* ---- repositories and configuration ---------------------------------------- */

/* The git directory of the repository whose top is directory TOP (absolute
 * path): TOP/.git when it is a directory, the directory a `.git` file names
 * ("gitdir: PATH", relative to TOP) otherwise; NULL when TOP has no `.git`.
 * *COMMON receives the common directory (where info/ and config live; a
 * linked work tree's `commondir` file names it), to free with g_free(). */
char *ignore_git_dir(const char *top, char **common);

/* Search upward from the absolute directory DIR for a work tree: the first
 * directory (DIR included) holding `.git`. Returns it, or NULL. */
char *ignore_find_top(const char *dir);

/* The excludes file git uses for a repository with common directory COMMON
 * (NULL: no repository): core.excludesFile from the system, global and
 * repository configuration (the last one set wins; `~/` expanded), else
 * $XDG_CONFIG_HOME/git/ignore or ~/.config/git/ignore. The global
 * configuration is $GIT_CONFIG_GLOBAL when set, else $XDG_CONFIG_HOME/git/config
 * and ~/.gitconfig; the system one /etc/gitconfig unless GIT_CONFIG_NOSYSTEM.
 * A relative path is relative to TOP. Returns a path to g_free(), or NULL. */
char *ignore_excludes_file(const char *common, const char *top);


/* ---- the rules in force in a directory --------------------------------------- */

enum {
  IGNORE_VCS = 1 << 0,            /* .gitignore, info/exclude, excludes file (TRAWL_IGNORE_VCS) */
  IGNORE_DOT = 1 << 1,            /* .ignore (TRAWL_IGNORE_DOT) */
  IGNORE_NO_REQUIRE_GIT = 1 << 2, /* .gitignore outside a work tree too */
};

/* What a directory listing showed. */
enum {
  HAS_GITIGNORE = 1 << 0,
  HAS_DOTIGNORE = 1 << 1,
  HAS_DOTGIT = 1 << 2,
};

/* The ignore files a directory may hold, and the one place their names are
 * written: ignore_file_name[k] shows as ignore_file_has[k] in HAS, and its
 * stamp is ignore[k] of a record (memo.h). */
enum { IGNORE_FILE_GIT, IGNORE_FILE_DOT, IGNORE_FILES };
extern const char *const ignore_file_name[IGNORE_FILES];
extern const unsigned ignore_file_has[IGNORE_FILES];

/* The HAS_* bit directory entry NAME (LEN bytes) stands for, or 0; a link
 * named `.git` is no repository. */
unsigned ignore_has_of(const char *name, size_t len, bool is_link);

/* A repository met by a walk: its top, as a length of the match path. */
struct ignore_repo {
  gint refs;
  size_t base;                 /* the top's path in the match path, with its '/' */
  struct ignore_file *info;    /* $GIT_DIR/info/exclude, or NULL */
  struct ignore_file *global;  /* the excludes file, or NULL */
  char *index_path;            /* $GIT_DIR/index */
  pthread_mutex_t index_lock;  /* held by the worker that starts reading it, the first time it
                                  is asked (a pthread mutex: ThreadSanitizer sees it, not GLib's) */
  gint index_started;          /* READER is set (atomic) */
  struct gitindex_reader *reader; /* the index, read in a thread of its own from the first question */
  gint index_told;             /* its problem, if any, has been told (atomic) */
};

/* A file of rules in force, and where the paths it matches start. */
struct ignore_slot {
  const struct ignore_file *file;
  size_t base;
};

/* The ignore files of one directory and of those above it (immutable once
 * made; shared by reference between the items below it). */
struct ignore_frame {
  gint refs;
  struct ignore_frame *up;
  struct ignore_file *dot;     /* this directory's .ignore */
  struct ignore_file *git;     /* this directory's .gitignore */
  struct ignore_repo *repo;    /* the repository the directory is in */
  size_t base;                 /* the directory's path in the match path, with its '/' */
  bool top;                    /* the directory is its repository's top */
  /* Every file in force here that holds a rule, in the order a verdict asks
   * them (ignore_verdict): the frames' .ignore files up the chain, their
   * .gitignore files up to the repository's top, info/exclude, the excludes
   * file. Made once per frame, so that an entry's verdict is one loop. */
  struct ignore_slot *chain;
  size_t n_chain;
};

/* Problems met while reading ignore files and indexes: what could not be
 * read, SOURCE (shown as a rule's file is: relative to the root when below
 * it, else absolute), and WHAT went wrong. Called once per source and run. */
typedef void (*ignore_problem_fn)(void *data, const char *source, const char *what);

/* Per root and run. Paths are matched as "match paths": the root's path
 * below its work tree's top (PREFIX, PLEN bytes with its '/'; empty outside a
 * work tree) followed by the path relative to the root. */
struct ignore_ctx {
  unsigned flags;
  char *root_abs;              /* the root, absolute, links resolved */
  char *top;                   /* its work tree's top, or NULL */
  char *prefix;
  size_t plen;
  struct ignore_frame *above;  /* the frames of the directories above the root, or NULL */
  GPtrArray *custom;           /* struct ignore_file * added by the caller, relative to the root */
  pthread_mutex_t lock;        /* guards GLOBALS (held while one is read); pthread's,
                                  as in walk/sched.c: TSan cannot see a GMutex */
  GHashTable *globals;         /* excludes file path -> struct ignore_file * (or a NULL value) */
  pthread_mutex_t report_lock; /* guards REPORTED */
  GHashTable *reported;        /* sources of the problems reported */
  ignore_problem_fn problem;
  void *problem_data;
  GPtrArray *reading;          /* struct ignore_repo * (referenced) whose index is being read;
                                  under LOCK */
};

/* Prepare CTX for the root ROOT_FD (path ROOT): find its work tree, read the
 * ignore files of the directories above it. CUSTOM (may be NULL) is
 * referenced. */
void ignore_ctx_init(struct ignore_ctx *ctx, unsigned flags, int root_fd, const char *root,
                     GPtrArray *custom, ignore_problem_fn problem, void *problem_data);
void ignore_ctx_clear(struct ignore_ctx *ctx);

/* No more questions: stop every index CTX's walk started reading where its
 * read is (it reads only as far as the questions need: gitindex.h), and tell
 * the problem of each whose read met one (a question answered early did not
 * wait for it). Called once the walk's workers are done, before its
 * problems are gathered; ignore_ctx_clear() does it too. */
void ignore_ctx_settle(struct ignore_ctx *ctx);

/* The frame in force in directory DIRFD (REL: its path relative to the root,
 * "" for the root; BASE: its match-path length with the '/'), whose listing
 * showed HAS, below frame UP (may be NULL). Returns a new reference: UP's
 * when the directory adds nothing. */
struct ignore_frame *ignore_frame_enter(struct ignore_ctx *ctx, struct ignore_frame *up,
                                        int dirfd, const char *rel, size_t base, unsigned has);

/* What a walk of the root ROOT_ABS (absolute, links resolved) with ignore
 * FLAGS reads or looks for outside the directories it walks, for a cache to
 * stamp (cache/sources.c): every `.git` from the root up to its work tree's top (up
 * to / outside one), for each of them that leads to a git directory (a
 * repository or not) its HEAD, objects and refs (whether they exist) and
 * its commondir file, the top repository's info/exclude and config, git's
 * system and global config files, the excludes file, and the .gitignore and
 * .ignore files of the directories from the top down to the root's parent.
 * Everything the list itself was decided by is in it: when every one is
 * stamped as before (and ROOT_ABS and ENV are the same), so is the list.
 * Appends to PATHS (char *, to free) and KINDS (guint8: IGNORE_SOURCE_*);
 * ENV receives the environment variables that choose among them. */
enum {
  IGNORE_SOURCE_STAMP,  /* its content matters: stamp it (absent too) */
  IGNORE_SOURCE_EXISTS, /* only whether it exists (and is a directory) matters */
  IGNORE_SOURCE_ENTRY,  /* only whether the name exists, a link not followed (HEAD) */
  IGNORE_SOURCE_INDEX,  /* the top repository's index: only the answers a walk had from it
                           matter, which a cache asks again when it changed
                           (cache/sources.c) */
  IGNORE_SOURCE_GITDIR, /* a nested repository's git directory, stamped whole: the names in
                           it (HEAD, commondir, objects/, refs/, index) as its listing */
};
void ignore_sources(unsigned flags, const char *root_abs, GPtrArray *paths, GByteArray *kinds,
                    GString *env);

/* The sources of a repository nested in a walk (docs/cache.md), whose top
 * is directory DIR_ABS (absolute): its `.git`, what makes it a repository
 * (HEAD, commondir, objects/, refs/: its git directory stamped whole when
 * that is its own common directory), and, when it is one, its
 * info/exclude, index, config and the excludes file — as ignore_sources()
 * lists the top's, the index by its stamp (a nested repository's questions
 * are not recorded: a change of its index reads it again). The config
 * files above the repository are the top's sources. */
void ignore_repo_sources(const char *dir_abs, GPtrArray *paths, GByteArray *kinds);

/* Append to ENV the environment variables that choose the sources (what
 * ignore_sources() appends to its ENV). */
void ignore_sources_env(GString *env);

/* HAS for directory DIRFD found by looking (when no listing was read). */
unsigned ignore_probe(int dirfd);

struct ignore_frame *ignore_frame_ref(struct ignore_frame *f);
void ignore_frame_unref(struct ignore_frame *f);

/* Does the index of frame F's repository hold the entry at match path MPATH
 * (MLEN bytes, below F's directory): the file itself, or (IS_DIR) paths
 * below the directory? git's rules leave such an entry alone. The index is
 * read the first time its repository is asked (a problem told if it cannot
 * be: then nothing is tracked). False outside a repository. *TOP (may be
 * NULL) is set when the repository asked is the one whose top is at the
 * start of the match path (the walk's own; not one nested in it). */
bool ignore_tracked(struct ignore_ctx *ctx, const struct ignore_frame *f, const char *mpath,
                    size_t mlen, bool is_dir, bool *top);

/* The index file INDEX_PATH ($GIT_DIR/index) being read for its repository
 * (the length of object names from its configuration; gitindex_reader_*,
 * in a thread of its own when it is large). */
struct gitindex_reader *ignore_index_reader(const char *index_path);

/* The rule that decides whether the entry at match path MPATH (MLEN bytes,
 * below the directory of frame F) is ignored: the last matching rule of the
 * first file in precedence order that has one — .ignore files deepest first,
 * then .gitignore files deepest first up to the repository's top, then
 * info/exclude, then the excludes file, then the caller's files. NULL: no
 * rule matched. *FROM (may be NULL) receives the rule's file. */
const struct ignore_rule *ignore_verdict(const struct ignore_ctx *ctx,
                                         const struct ignore_frame *f, const char *mpath,
                                         size_t mlen, bool is_dir,
                                         const struct ignore_file **from);

#endif /* TRAWL_IGNORE_H */
