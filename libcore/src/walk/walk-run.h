/* trawl — the walker's insides (private to its files).
 *
 * A walk is a set of directory items. Processing one (step.c) opens the
 * directory — openat() on its parent's descriptor while the parent keeps it
 * open, or on the root's by relative path once descriptors run short
 * (descriptors.c) — reads its listing with the chosen reader (dirread.h),
 * reports the entries the queries select (query.h) and turns each
 * subdirectory some query would open into a new item. Items are scheduled
 * over worker threads (sched.c). A sorted run builds a node per directory
 * and prints them in order (sorted.c); with a memo, a directory whose stamp
 * says it is as the last walk recorded is replayed instead of read
 * (replay.c). walker.c holds the public API, explain.c `trawl explain`.
 *
 * The arrows: walker.c -> sched.c -> {step.c, replay.c, sorted.c,
 * descriptors.c, query.h}; step.c -> {replay.c, sorted.c, descriptors.c,
 * query.h}, and back to sched.c for problem_add() (the queue and its step);
 * replay.c -> {sorted.c, descriptors.c, memo.h}; explain.c -> {walker.c,
 * query.h, ignore.h}. sched_push(), here, is the one way into the queue.
 * Everything here is shared only among the walker's files; walk-testing.h's
 * hooks, only by walker.c (which defines them) and the tests.
 */
#ifndef TRAWL_WALK_RUN_H
#define TRAWL_WALK_RUN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <glib.h>

#include "../buf.h"
#include "../dirread.h"
#include "../ignore.h"
#include "../memo.h"
#include "query.h"
#include "trawl/walk.h"
#include "walk-shared.h"

G_BEGIN_DECLS

/* Directories read and queued before helper threads start: below this many,
 * on two cores, helpers cost a walk more than they save, whatever the
 * number of files (bench/walk_sweep.py; the numbers in docs/benchmarks.md,
 * "The walker's helper floor"). Rerun the sweep on a machine with more
 * cores before lowering it. */
#ifndef HELPER_FLOOR /* -DHELPER_FLOOR=N: bench/thread_policy.py builds variants */
#define HELPER_FLOOR 256
#endif
/* Longest relative path handed to one openat(); longer ones are opened in
 * steps. */
#define OPEN_PATH_MAX 3072

/* A directory descriptor shared by the items of its subdirectories. */
struct dirref {
  int fd;
  gint refs;
};

/* (device, inode) of a directory and its ancestors, for --follow. */
struct chain {
  dev_t dev;
  ino_t ino;
  struct chain *up;
  gint refs;
};

/* Sorted runs (trawl_walker_run_sorted, collect) never sort whole paths.
 * Each directory read becomes a node holding its results and the
 * subdirectories it entered, sorted by name with a '/' after a
 * subdirectory's name — the order their paths take in a bytewise sort of
 * whole paths ("a" < "a.b" < "a/x"). The subdirectories are queued so that
 * the first in order is read next, which makes the order directories are
 * read in the order their results are printed in: the calling thread prints
 * each node's results as soon as the node and the subtrees before them are
 * read, and frees it. A serial walk so holds only the nodes of the
 * directories above the one being read; a parallel one holds what the
 * helpers read ahead of the printing. */
enum { REC_RESULT, REC_SUBTREE };

/* A question a directory's reading asked of the index (step.c, keep_entry),
 * kept for its memo entry: the entry's name (in the listing) and ASKED_*. */
struct asked {
  const char *name;
  uint32_t len;
  uint8_t type;
};

struct node;

struct rec {
  uint64_t key;         /* the first 8 bytes of name and terminator, big-endian */
  const char *name;     /* in the node's block */
  uint32_t len;
  uint8_t kind;         /* REC_RESULT or REC_SUBTREE */
  uint8_t type;         /* TrawlEntryType of a result */
  union {
    struct node *node;  /* a subtree's directory, once read (NULL if it could not be) */
    struct item *item;  /* while the node is being built */
    uint64_t queries;   /* a result: the queries it answers */
  } child;
};

struct node {
  guint n;
  struct rec recs[];    /* then the names */
};

/* The node of a directory that could not be read, or was not. A slot holds
 * NULL until its directory has been processed. */
extern struct node no_node;

/* A start directory of a sorted run and the node read there. */
struct top {
  unsigned root;
  char *key;            /* its path and a '/', or "" for the root itself */
  struct node *node;
  struct item *item;    /* its item, until queued */
};

/* Where the printing of a sorted run stands: a node and its next record. */
struct frame {
  struct node *node;
  guint next;
  gsize base;           /* length of the node's directory path, with its '/' */
};

struct item {
  char *path;           /* relative to the root; "" for the root */
  size_t len;
  size_t name_off;      /* start of the last component in path */
  unsigned root;
  int depth;            /* components in path */
  bool via_link;        /* reached through a followed symbolic link */
  bool start;           /* a literal start directory: opened component by component */
  struct dirref *parent;
  struct chain *chain;  /* the parent's chain (follow mode) */
  struct node **slot;   /* sorted runs: where this directory's node goes */
  struct ignore_frame *ig; /* the ignore rules in force in this directory's parent */
  uint64_t live;        /* the queries that read this directory (0: on the way to a
                           start directory below it, for another query) */
  bool fresh;           /* read it whatever the memo says (an ignore file above changed) */
  bool tracked_only;    /* git's rules leave it (or a directory above) out, and the index
                           holds paths below it: entered for those alone */
};

/* A worker's items: a ring of pointers, newest at the tail: no list node
 * to allocate per item (docs/adr/0005-no-calls-per-entry.md). */
struct deque {
  struct item **v;
  size_t head, length, cap;
};

static inline void
deque_push_tail(struct deque *d, struct item *it)
{
  if (d->length == d->cap) {
    const size_t cap = d->cap ? 2 * d->cap : 64;
    struct item **v = g_new(struct item *, cap);
    for (size_t i = 0; i < d->length; i++)
      v[i] = d->v[(d->head + i) % d->cap];
    g_free(d->v);
    d->v = v;
    d->head = 0;
    d->cap = cap;
  }
  d->v[(d->head + d->length++) % d->cap] = it;
}
static inline struct item *
deque_pop_tail(struct deque *d)
{
  return d->length ? d->v[(d->head + --d->length) % d->cap] : NULL;
}
static inline struct item *
deque_pop_head(struct deque *d)
{
  if (d->length == 0)
    return NULL;
  struct item *it = d->v[d->head];
  d->head = (d->head + 1) % d->cap;
  d->length--;
  return it;
}
static inline struct item *
deque_at(const struct deque *d, size_t i)
{
  return d->v[(d->head + i) % d->cap];
}

struct worker {
  struct run *run;
  unsigned index;
  pthread_mutex_t lock;
  struct deque deque;
  GThread *thread;
  struct listing listing;
  struct buf path;      /* the entry path being built */
  struct rec *recs;     /* sorted runs: the directory being read */
  size_t n_recs, cap_recs;
  GPtrArray *kids;      /* sorted runs: its subdirectories' items */
  struct rec *sort_tmp; /* sorted runs: merge space */
  size_t sort_cap;
  GArray *hits;         /* guint: pattern-set answers */
  struct buf scratch;
  GPtrArray *memos;     /* struct memo_dir *: the directories it read or replayed */
  GPtrArray *tops;      /* char *: those it left unentered (struct memo_partial) */
  GArray *asked;        /* struct asked: the questions of the directory being read */
  TrawlWalkStats stats;
};

struct run {
  TrawlWalker *w;
  TrawlEntryFunc fn;
  void *data;
  bool sorted;          /* build nodes; FN is called by the calling thread, in order */
  GPtrArray *tops;      /* sorted runs: struct top *, in order */
  guint next_top;
  GArray *frames;       /* struct frame: the nodes being printed */
  struct buf out_path;
  struct worker *workers;
  unsigned n_workers;
  gint started;         /* helpers started (0 or 1) */
  gint pending;         /* items queued or being processed */
  gint stop;
  gint open_fds;        /* shared descriptors held by dirrefs */
  gint fd_budget;
  pthread_mutex_t idle_lock;
  pthread_cond_t idle_cond;
  pthread_mutex_t problem_lock;
  GHashTable *loops;    /* "dev:ino" of each looping link reported */
  int *root_fds;
  dev_t *root_devs;
  struct ignore_ctx *ig; /* per root; NULL when no ignore file is read */
  struct igprob *igprobs; /* per root: where its ignore contexts report problems */
  struct qtab qt;
  /* Memos (sorted runs): the last walk's, trusted where stamps agree, and
   * this walk's; a stamp at or after racy_from is not trusted next time. */
  const struct walk_memo *memo_old;
  struct walk_memo *memo_out;
  struct timespec racy_from;
  GHashTable *ways;     /* "root/path" -> struct memo_dir *: the directories on the way
                           to start directories, while they are planned */
};

struct TrawlWalker {
  TrawlWalkOptions opt;
  GPtrArray *roots;     /* char * */
  GPtrArray *queries;   /* struct query * */
  bool shared;          /* queries added by trawl_walker_add_query() */
  GPtrArray *includes;  /* query 0's of a plain walker */
  GPtrArray *excludes;
  GPtrArray *problems;  /* GError * */
  GPtrArray *ignore_files; /* struct ignore_file *: --ignore-file */
  TrawlWalkStats stats;
  void (*open_hook)(unsigned root, const char *path, void *data); /* walk-testing.h */
  void *open_hook_data;
  unsigned helper_floor;
  unsigned patset_min;
  const struct walk_memo *memo_old;
  struct walk_memo *memo_out;
};

/* ---- walker.c: the public API ---- */

/* Give W the root "." when none was added (trawl/walk.h). Before a run
 * or an explanation. */
void walker_default_root(TrawlWalker *w);

/* ---- sched.c: the scheduler ---- */

/* Walk W (a root at least: walker_default_root()): every root, every start
 * directory, with FN called for each result (in order, on the calling
 * thread, when SORTED). False with ERROR set when a root cannot be
 * opened. */
bool run_walk(TrawlWalker *w, TrawlEntryFunc fn, void *data, bool sorted, GError **error);

/* Queue IT on WK's deque (WK's thread): the one way into the queue, for
 * the scheduler, a directory's step and the sorted output alike. */
static inline void
sched_push(struct worker *wk, struct item *it)
{
  g_atomic_int_inc(&wk->run->pending);
  pthread_mutex_lock(&wk->lock);
  deque_push_tail(&wk->deque, it);
  pthread_mutex_unlock(&wk->lock);
}

/* Add a problem of RUN: PATH below root ROOT (shown as the walk shows it),
 * CODE, WHAT. Any thread. */
void problem_add(struct run *run, unsigned root, const char *path, TrawlWalkError code,
                 const char *what);

/* problem_add() once per KEY (the looping link's or directory's own device
 * and inode), however many paths reach it. */
void problem_loop_once(struct run *run, unsigned root, const char *path, const struct stat *key,
                       const char *what);

/* ---- step.c: one directory ---- */

/* Read directory IT (or replay it, replay.c), report its results and queue
 * its subdirectories. */
void step_dir(struct worker *wk, struct item *it);

/* ---- descriptors.c: items, shared descriptors, the loop chain ---- */

void dirref_unref(struct run *run, struct dirref *d);
void chain_unref(struct chain *c);
/* Is the directory ST one of the chain's (device, inode)? */
bool chain_has(const struct chain *c, const struct stat *st);
/* A link of the chain for ST, above UP (taking the caller's reference). */
struct chain *chain_new(const struct stat *st, struct chain *up);
void item_free(struct run *run, struct item *it);
/* openat() a relative path of any length. */
int open_relative(int base, const char *path, int flags);
/* Open start directory IT component by component (no link on the way
 * unless following them). */
int open_start(struct run *run, struct item *it);
/* Open directory IT as the walk does: start directory, parent descriptor,
 * or path from the root. */
int open_item(struct run *run, struct item *it);
/* Make every queued item open by path, closing the parent descriptors they
 * shared. */
void shed_descriptors(struct run *run);

/* ---- sorted.c: sorted output ---- */

/* The node of the records WK holds for the directory just read or
 * replayed, sorted (WK's records are emptied). */
struct node *node_make(struct worker *wk);
/* Publish NODE at IT's slot and queue its subdirectories, the first in
 * order on top. The node is then the printing thread's: IT->slot is
 * cleared. */
void node_publish(struct worker *wk, struct item *it, struct node *node);
/* Print every result no unread directory comes before (the calling
 * thread); DONE at the end of the walk. */
void nodes_emit(struct run *run, bool done);

static inline void
add_rec(struct worker *wk, const char *name, size_t len, unsigned kind, unsigned type,
        struct item *child, uint64_t queries)
{
  if (G_UNLIKELY(wk->n_recs == wk->cap_recs)) {
    wk->cap_recs = wk->cap_recs ? wk->cap_recs * 2 : 256;
    wk->recs = g_renew(struct rec, wk->recs, wk->cap_recs);
  }
  /* The sort key: name, then '/' for a subtree or nothing for a result
   * (names hold neither '/' nor NUL, so 0 pads below every byte). */
  unsigned char head[8] = {0};
  if (len >= 8) {
    memcpy(head, name, 8);
  } else {
    copy_short(head, name, len);
    head[len] = kind == REC_SUBTREE ? '/' : 0;
  }
  uint64_t key;
  memcpy(&key, head, 8);
  key = GUINT64_FROM_BE(key);
  struct rec *r = &wk->recs[wk->n_recs++];
  r->key = key;
  r->name = name;
  r->len = (uint32_t)len;
  r->kind = (uint8_t)kind;
  r->type = (uint8_t)type;
  if (child)
    r->child.item = child;
  else
    r->child.queries = queries;
}

/* Bytewise order of the paths the records stand for: a result's path ends
 * after its name, a subtree's continue with '/'. The first 8 bytes compare
 * as one integer. */
static inline int
compare_recs(const struct rec *a, const struct rec *b)
{
  if (a->key != b->key)
    return a->key < b->key ? -1 : 1;
  const unsigned char *x = (const unsigned char *)a->name;
  const unsigned char *y = (const unsigned char *)b->name;
  const uint32_t n = MIN(a->len, b->len);
  for (uint32_t i = 8; i < n; i++)
    if (x[i] != y[i])
      return x[i] - y[i];
  int ca = a->len > n ? x[n] : a->kind == REC_SUBTREE ? '/' : 0;
  int cb = b->len > n ? y[n] : b->kind == REC_SUBTREE ? '/' : 0;
  return ca - cb;
}

/* ---- replay.c: memos, recorded and replayed ---- */

/* Record in WK's memos directory IT, read with the stamp HEAD, whose sorted
 * records are NODE (not yet published), with the questions WK asked of the
 * index there (emptied). */
void memo_record(struct worker *wk, const struct item *it, const struct node *node,
                 const struct dir_stamp *head, GBytes **repo);
/* Record in D the rules directory FD (REL, of root ROOT) holds, as HAS
 * says, a nested repository's sources into *REPO. */
void record_rules(const struct run *run, unsigned root, int fd, const char *rel, unsigned has,
                  struct dir_stamp *d, GBytes **repo);
/* Record that start directory IT was not there. */
void memo_missing(struct worker *wk, const struct item *it);
/* Replay directory IT from the last walk's memo when dir_check() says it
 * is as recorded; false, with nothing done, when it must be read. */
bool replay_dir(struct worker *wk, struct item *it);
/* The ignore rules for start directory D of root R, from the directories
 * on the way, in *FRAME; *SAME false when one of them is not as the last
 * walk recorded; *TRACKED_ONLY when D, or one on the way, is one git's rules
 * leave out but the index holds paths below. False when D or one on the way
 * is ignored. */
bool start_not_ignored(struct run *run, unsigned r, const char *d, struct ignore_frame **frame,
                       bool *same, bool *tracked_only);
/* File the records of the directories on the way (start_not_ignored()) in
 * the memo, once every start directory is planned. */
void way_records(struct run *run);

G_END_DECLS

#endif /* TRAWL_WALK_RUN_H */
