/* trawl — the walker: pruning decisions and the scheduler.
 *
 * A walk is a set of directory items. Processing one opens the directory
 * (openat on its parent's descriptor while the parent keeps it open, or on
 * the root's by relative path once descriptors run short), reads its listing
 * with the chosen reader, reports the entries that match, and turns each
 * subdirectory that can hold a match into a new item. Whether a
 * subdirectory is opened is decided from its path alone, before any system
 * call: some include may match below it (trawl_pattern_may_match_below), no
 * exclude matches it or covers it, it is not hidden unless a pattern names
 * it, it is not deeper than the depth limit.
 *
 * Scheduling: every thread owns a deque of items; it pushes and pops at the
 * back (LIFO: depth first, which keeps few descriptors open and the path
 * buffers warm) and steals from the front of another's (the oldest, largest
 * subtrees) — except in a sorted run, where a thief takes the item its
 * victim would read next, so that what it reads is printed soon rather than
 * held to the end (flat20k: 150 page faults instead of 230). The walk starts serial on the calling thread; helper threads
 * start only once the calling thread's deque holds HELPER_FLOOR items, so a
 * small walk never pays for threads. A shared count of pending items ends
 * the walk when it reaches zero. Locks are pthread's rather than GLib's:
 * GMutex is a bare futex on Linux, which ThreadSanitizer cannot see.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "dirread.h"
#include "ignore.h"
#include "memo.h"
#include "pattern-private.h"
#include "trawl/patset.h"
#include "trawl/walk.h"
#include "walk-private.h"

/* Directories read and queued before helper threads start. The sweep in
 * bench/walk_sweep.py (docs/benchmarks.md, 2026-11-29, 2 shared vCPUs) found
 * helpers slower than the serial route below 256 queued directories for
 * every file count tried, and about even above; rerun it on a machine with
 * more cores before lowering this. */
#define HELPER_FLOOR 256
/* Longest relative path handed to one openat(); longer ones are opened in
 * steps. */
#define OPEN_PATH_MAX 3072

G_DEFINE_QUARK(trawl-walk-error-quark, trawl_walk_error)

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
static struct node no_node;

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

/* Queries. A walk answers one or more queries: a plain walker has one (its
 * includes, excludes and options); a shared walker (trawl/plan.h) one per
 * query of its group. Every directory item carries the set of queries whose
 * own walk would have read it, and every result the set it answers, as bits
 * of a 64-bit mask: so each query gets exactly its own walk's results while
 * each directory is read once, and each entry is looked up once in a pattern
 * set built over every query's patterns. */
struct query {
  GPtrArray *includes;  /* const trawl_pattern * (borrowed) */
  GPtrArray *excludes;
  bool hidden;
  unsigned types;
  int max_depth;
  struct prune_index *prune; /* during a run, with many includes */
};

/* Many includes: which of them to ask whether a directory can hold a
 * match, found by their literal start directories (a match of "src/a/x.c"
 * lies below "src/a": no directory but the root's path to it and its
 * subtree need ask that include). */
struct prune_index {
  GPtrArray *anywhere;  /* includes starting at the root (and case-folded ones) */
  GHashTable *at;       /* struct span * start directory -> GPtrArray of includes */
  GHashTable *above;    /* struct span * directory above a start -> GPtrArray of includes */
};

#define QBIT(i) (UINT64_C(1) << (i))
/* From this many patterns on, an include or exclude list is looked up
 * through a pattern set (and the includes' start directories through a
 * prune index) rather than tried one by one. */
#define PATSET_MIN 8

/* A suffix of at most eight bytes as the bits it sets in the last eight
 * bytes of a path read as one little-endian word: one compare instead of a
 * byte loop. */
struct tail {
  uint64_t mask, bits;
  bool ok;              /* the suffix is at most eight bytes */
};

/* Every query's patterns of one kind, for one lookup per entry. */
struct patlist {
  GPtrArray *pats;      /* const trawl_pattern * */
  guint8 *owner;        /* the query of each */
  struct span *suffix;  /* the literal suffix each match ends with (len 0: none, or case-folded) */
  bool *by_suffix;      /* the suffix alone decides (trawl_pattern_suffix_decides) */
  struct tail *tail;    /* each suffix as the last word of a path ending with it */
  uint64_t *by_last;    /* shared lists of 2 to 64 without a set: per last byte of a
                           path, the patterns whose suffix allows it (256 masks) */
  trawl_patset *set;    /* NULL when there are few */
  const trawl_pattern *one; /* the only pattern, if there is one */
  uint64_t all;         /* the queries with a pattern here */
};

enum { KIND_FILE, KIND_DIR, KIND_SYMLINK };

/* The queries of a run, as masks. */
struct qtab {
  guint n;
  struct query **q;
  uint64_t every;
  uint64_t hidden;        /* options.hidden */
  uint64_t depth_limited; /* max_depth >= 0 */
  uint64_t types[3];      /* by KIND_*: the queries that report such an entry */
  struct patlist inc, exc;
  /* Start directories below another query's: path -> uint64_t * (the
   * queries starting there), and the directories on the way to them. NULL
   * when there are none. */
  GHashTable *nested;
  GHashTable *transit;
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
};

/* A worker's items: a ring of pointers, newest at the tail. (GQueue took a
 * list node per item from GSlice, whose slabs were 11 of the page faults of
 * a batch on flat20k, and a page touched first costs 10-20 us here.) */
struct deque {
  struct item **v;
  size_t head, length, cap;
};

static void
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

static struct item *
deque_pop_tail(struct deque *d)
{
  return d->length ? d->v[(d->head + --d->length) % d->cap] : NULL;
}

static struct item *
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
  trawl_walk_stats stats;
};

struct run {
  trawl_walker *w;
  trawl_entry_fn fn;
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
  struct qtab qt;
  /* Memos (sorted runs): the last walk's, trusted where stamps agree, and
   * this walk's; a stamp at or after racy_from is not trusted next time. */
  const struct walk_memo *memo_old;
  struct walk_memo *memo_out;
  struct timespec racy_from;
};

struct trawl_walker {
  trawl_walk_options opt;
  GPtrArray *roots;     /* char * */
  GPtrArray *queries;   /* struct query * */
  bool shared;          /* queries added by trawl_walker_add_query() */
  GPtrArray *includes;  /* query 0's of a plain walker */
  GPtrArray *excludes;
  GPtrArray *problems;  /* GError * */
  GPtrArray *ignore_files; /* struct ignore_file *: --ignore-file */
  trawl_walk_stats stats;
  trawl_open_hook open_hook;
  void *open_hook_data;
  unsigned helper_floor;
  unsigned patset_min;
  const struct walk_memo *memo_old;
  struct walk_memo *memo_out;
};

/* ---- configuration ---------------------------------------------------- */

static void
query_free(struct query *q)
{
  g_ptr_array_unref(q->includes);
  g_ptr_array_unref(q->excludes);
  g_free(q);
}

void
trawl_walk_options_init(trawl_walk_options *o)
{
  memset(o, 0, sizeof *o);
  o->types = TRAWL_ENTRY_FILE;
  o->max_depth = -1;
  o->ignore = TRAWL_IGNORE_VCS | TRAWL_IGNORE_DOT;
}

trawl_walker *
trawl_walker_new(const trawl_walk_options *options)
{
  trawl_walker *w = g_new0(trawl_walker, 1);
  if (options)
    w->opt = *options;
  else
    trawl_walk_options_init(&w->opt);
  if (w->opt.types == 0)
    w->opt.types = TRAWL_ENTRY_FILE;
  w->roots = g_ptr_array_new_with_free_func(g_free);
  w->includes = g_ptr_array_new();
  w->excludes = g_ptr_array_new();
  w->queries = g_ptr_array_new_with_free_func((GDestroyNotify)query_free);
  struct query *q = g_new0(struct query, 1);
  q->includes = g_ptr_array_ref(w->includes);
  q->excludes = g_ptr_array_ref(w->excludes);
  q->hidden = w->opt.hidden;
  q->types = w->opt.types;
  q->max_depth = w->opt.max_depth;
  g_ptr_array_add(w->queries, q);
  w->problems = g_ptr_array_new_with_free_func((GDestroyNotify)g_error_free);
  w->ignore_files = g_ptr_array_new_with_free_func((GDestroyNotify)ignore_file_unref);
  w->helper_floor = HELPER_FLOOR;
  w->patset_min = PATSET_MIN;
  return w;
}

trawl_walker *
trawl_walker_new_shared(const trawl_walk_options *options)
{
  trawl_walker *w = trawl_walker_new(options);
  g_ptr_array_set_size(w->queries, 0);
  w->shared = true;
  return w;
}

unsigned
trawl_walker_add_query(trawl_walker *w, const trawl_pattern *const *includes, size_t n_includes,
                       const trawl_pattern *const *excludes, size_t n_excludes,
                       const trawl_walk_options *options)
{
  g_return_val_if_fail(w->shared && w->queries->len < TRAWL_WALK_MAX_QUERIES, 0);
  trawl_walk_options defaults;
  if (options == NULL) {
    trawl_walk_options_init(&defaults);
    options = &defaults;
  }
  struct query *q = g_new0(struct query, 1);
  q->includes = g_ptr_array_new();
  for (size_t i = 0; i < n_includes; i++)
    g_ptr_array_add(q->includes, (gpointer)includes[i]);
  q->excludes = g_ptr_array_new();
  for (size_t i = 0; i < n_excludes; i++)
    g_ptr_array_add(q->excludes, (gpointer)excludes[i]);
  q->hidden = options->hidden;
  q->types = options->types ? options->types : TRAWL_ENTRY_FILE;
  q->max_depth = options->max_depth;
  g_ptr_array_add(w->queries, q);
  return w->queries->len - 1;
}

void
trawl_walker_free(trawl_walker *w)
{
  if (w == NULL)
    return;
  g_ptr_array_unref(w->roots);
  g_ptr_array_unref(w->includes);
  g_ptr_array_unref(w->excludes);
  g_ptr_array_unref(w->queries);
  g_ptr_array_unref(w->problems);
  g_ptr_array_unref(w->ignore_files);
  g_free(w);
}

void
trawl_walker_add_root(trawl_walker *w, const char *root)
{
  g_ptr_array_add(w->roots, g_strdup(root));
}

void
trawl_walker_add_include(trawl_walker *w, const trawl_pattern *p)
{
  g_return_if_fail(!w->shared);
  g_ptr_array_add(w->includes, (gpointer)p);
}

void
trawl_walker_add_exclude(trawl_walker *w, const trawl_pattern *p)
{
  g_return_if_fail(!w->shared);
  g_ptr_array_add(w->excludes, (gpointer)p);
}

bool
trawl_walker_add_ignore_file(trawl_walker *w, const char *path, GError **error)
{
  struct ignore_file *f = NULL;
  int err = ignore_file_read(AT_FDCWD, path, false, path, &f);
  if (err != 0) {
    g_set_error(error, TRAWL_WALK_ERROR, TRAWL_WALK_ERROR_IGNORE, "%s: %s", path,
                err == EFBIG ? "larger than 100 MiB" : g_strerror(err));
    return false;
  }
  g_ptr_array_add(w->ignore_files, f);
  return true;
}

void
trawl_walker_set_helper_floor(trawl_walker *w, unsigned floor)
{
  w->helper_floor = floor;
}

void
trawl_walker_set_memo(trawl_walker *w, const struct walk_memo *old, struct walk_memo *out)
{
  w->memo_old = old;
  w->memo_out = out;
}

void
trawl_walker_set_patset_min(trawl_walker *w, unsigned min)
{
  w->patset_min = min;
}

void
trawl_walker_set_open_hook(trawl_walker *w, trawl_open_hook hook, void *data)
{
  w->open_hook = hook;
  w->open_hook_data = data;
}

const GPtrArray *
trawl_walker_problems(const trawl_walker *w)
{
  return w->problems;
}

void
trawl_walker_stats(const trawl_walker *w, trawl_walk_stats *out)
{
  *out = w->stats;
}

/* ---- queries: the decisions ------------------------------------------- */

/* Does include or exclude list PATS name hidden entry NAME? */
static bool
names_hidden(const GPtrArray *pats, const char *name, size_t len)
{
  for (guint i = 0; i < pats->len; i++)
    if (trawl_pattern_names_hidden(pats->pdata[i], name, len))
      return true;
  return false;
}

/* The exclude of Q that matches PATH or (for a directory) covers everything
 * below it, or NULL. */
static const trawl_pattern *
closing_exclude(const struct query *q, const char *path, size_t len, bool dir)
{
  for (guint i = 0; i < q->excludes->len; i++) {
    const trawl_pattern *x = q->excludes->pdata[i];
    if (trawl_pattern_match(x, path, len) || (dir && trawl_pattern_covers_below(x, path, len)))
      return x;
  }
  return NULL;
}

static struct span *
span_new(const char *s, size_t len)
{
  struct span *k = g_malloc(sizeof *k + len);
  memcpy(k + 1, s, len);
  k->s = (const char *)(k + 1);
  k->len = len;
  return k;
}

static void
index_add(GHashTable *h, const char *s, size_t len, gpointer pattern)
{
  struct span key = {s, len};
  GPtrArray *list = g_hash_table_lookup(h, &key);
  if (list == NULL) {
    list = g_ptr_array_new();
    g_hash_table_insert(h, span_new(s, len), list);
  }
  if (list->len == 0 || list->pdata[list->len - 1] != pattern)
    g_ptr_array_add(list, pattern);
}

static struct prune_index *
prune_index_new(const GPtrArray *includes)
{
  struct prune_index *x = g_new0(struct prune_index, 1);
  x->anywhere = g_ptr_array_new();
  x->at = g_hash_table_new_full(span_hash, span_equal, g_free, (GDestroyNotify)g_ptr_array_unref);
  x->above = g_hash_table_new_full(span_hash, span_equal, g_free,
                                   (GDestroyNotify)g_ptr_array_unref);
  for (guint i = 0; i < includes->len; i++) {
    gpointer p = includes->pdata[i];
    const char *const *roots = trawl_pattern_roots(p, NULL);
    bool anywhere = false;
    for (; *roots; roots++) {
      const char *r = *roots;
      size_t len = strlen(r);
      if (len == 0) {
        anywhere = true;
        continue;
      }
      index_add(x->at, r, len, p);
      for (const char *c = strchr(r, '/'); c; c = strchr(c + 1, '/'))
        index_add(x->above, r, (size_t)(c - r), p);
    }
    /* (A pattern with no start directory matches nothing.) */
    if (anywhere)
      g_ptr_array_add(x->anywhere, p);
  }
  return x;
}

static void
prune_index_free(struct prune_index *x)
{
  if (x == NULL)
    return;
  g_ptr_array_unref(x->anywhere);
  g_hash_table_unref(x->at);
  g_hash_table_unref(x->above);
  g_free(x);
}

static bool
any_below(const GPtrArray *pats, const char *path, size_t len)
{
  for (guint i = 0; pats && i < pats->len; i++)
    if (trawl_pattern_may_match_below(pats->pdata[i], path, len))
      return true;
  return false;
}

/* May one of Q's includes match below directory PATH? With the prune index,
 * only those starting at the root, at PATH or above it, or below it are
 * asked: a match of any other lies outside PATH. */
static bool
query_wants(const struct query *q, const char *path, size_t len)
{
  if (q->includes->len == 0)
    return true;
  const struct prune_index *x = q->prune;
  if (x == NULL)
    return any_below(q->includes, path, len);
  if (any_below(x->anywhere, path, len))
    return true;
  for (size_t i = 1; i <= len; i++) {
    if (i < len && path[i] != '/')
      continue;
    struct span at = {path, i};
    if (any_below(g_hash_table_lookup(x->at, &at), path, len))
      return true;
  }
  struct span here = {path, len};
  return any_below(g_hash_table_lookup(x->above, &here), path, len);
}

/* Would Q's own walk open directory PATH, as far as its patterns tell? Some
 * include may match below it, and no exclude matches or covers it. */
static bool
query_opens(const struct query *q, const char *path, size_t len)
{
  return query_wants(q, path, len) && closing_exclude(q, path, len, true) == NULL;
}

/* A hidden name is visited only with options.hidden or when an include
 * names it. */
static bool
query_shows(const struct query *q, const char *name, size_t len)
{
  return q->hidden || name[0] != '.' || names_hidden(q->includes, name, len);
}

static void
patlist_init(struct patlist *l, const GPtrArray *queries, bool includes, unsigned set_min)
{
  l->pats = g_ptr_array_new();
  GByteArray *owner = g_byte_array_new();
  for (guint i = 0; i < queries->len; i++) {
    const struct query *q = queries->pdata[i];
    const GPtrArray *pats = includes ? q->includes : q->excludes;
    for (guint k = 0; k < pats->len; k++) {
      guint8 o = (guint8)i;
      g_ptr_array_add(l->pats, pats->pdata[k]);
      g_byte_array_append(owner, &o, 1);
    }
    if (pats->len)
      l->all |= QBIT(i);
  }
  l->owner = g_byte_array_free(owner, FALSE);
  /* Several queries' short lists are tried in turn; a pattern whose literal
   * suffix the path lacks is not tried at all (four one-pattern queries on
   * flat20k: trying the other three patterns was 9.6 M of 39 M instructions,
   * and a pattern set cost more than that). */
  l->suffix = g_new0(struct span, MAX(l->pats->len, 1u));
  l->by_suffix = g_new0(bool, MAX(l->pats->len, 1u));
  l->tail = g_new0(struct tail, MAX(l->pats->len, 1u));
  for (guint i = 0; i < l->pats->len; i++) {
    if (!(trawl_pattern_flags(l->pats->pdata[i]) & TRAWL_PATTERN_ICASE))
      l->suffix[i].s = trawl_pattern_literal_suffix(l->pats->pdata[i], &l->suffix[i].len);
    l->by_suffix[i] = trawl_pattern_suffix_decides(l->pats->pdata[i]);
    const size_t k = l->suffix[i].len;
    if (k <= 8) {
      struct tail *t = &l->tail[i];
      t->ok = true;
      t->mask = k == 0 ? 0 : ~UINT64_C(0) << (8 * (8 - k));
      for (size_t j = 0; j < k; j++)
        t->bits |= (uint64_t)(uint8_t)l->suffix[i].s[j] << (8 * (8 - k + j));
    }
  }
  if (l->pats->len == 1)
    l->one = l->pats->pdata[0];
  if (l->pats->len >= 2 && l->pats->len <= 64 && (l->all & (l->all - 1)) != 0) {
    l->by_last = g_new0(uint64_t, 256);
    for (guint i = 0; i < l->pats->len; i++)
      for (unsigned c = 0; c < 256; c++)
        if (l->suffix[i].len == 0 || (uint8_t)l->suffix[i].s[l->suffix[i].len - 1] == c)
          l->by_last[c] |= (uint64_t)1 << i;
  }
  if (l->pats->len >= MAX(set_min, 1u))
    l->set = trawl_patset_new((const trawl_pattern *const *)l->pats->pdata, l->pats->len);
}

static void
patlist_clear(struct patlist *l)
{
  trawl_patset_free(l->set);
  g_ptr_array_unref(l->pats);
  g_free(l->owner);
  g_free(l->suffix);
  g_free(l->by_suffix);
  g_free(l->tail);
  g_free(l->by_last);
  memset(l, 0, sizeof *l);
}

/* Does PATH (LEN bytes) end with X (always, when X is empty)? Inline: the
 * suffixes are short and a call to memcmp cost as much as the compare. */
static inline bool
ends_with(const char *path, size_t len, const struct span *x)
{
  if (x->len > len)
    return false;
  const char *p = path + len - x->len;
  for (size_t k = x->len; k-- > 0;)
    if (p[k] != x->s[k])
      return false;
  return true;
}

/* Does PATH (LEN bytes) end with pattern I's suffix? */
static inline bool
tail_match(const struct patlist *l, unsigned i, const char *path, size_t len)
{
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  const struct tail *t = &l->tail[i];
  if (t->ok && len >= 8) {
    uint64_t w;
    memcpy(&w, path + len - 8, 8);
    return (w & t->mask) == t->bits;
  }
#endif
  return ends_with(path, len, &l->suffix[i]);
}

/* Does pattern I of L match PATH (LEN bytes)? Its suffix first, inline. */
static inline bool
pattern_hit(const struct patlist *l, unsigned i, const char *path, size_t len)
{
  return tail_match(l, i, path, len) &&
         (l->by_suffix[i] || trawl_pattern_match(l->pats->pdata[i], path, len));
}

/* patlist_match() of a list shared by several queries: which of them. */
static uint64_t
patlist_match_shared(const struct patlist *l, const char *path, size_t len, uint64_t want,
                     GArray *hits)
{
  uint64_t got = 0;
  if (l->set) {
    g_array_set_size(hits, 0);
    trawl_patset_matches(l->set, path, len, hits);
    for (guint i = 0; i < hits->len; i++)
      got |= QBIT(l->owner[g_array_index(hits, guint, i)]);
    return got & want;
  }
  if (l->by_last && len > 0) {
    /* Only the patterns whose suffix ends with the path's last byte (the
     * four extensions of issue 5's batch: one or two of four). */
    for (uint64_t m = l->by_last[(uint8_t)path[len - 1]]; m && got != want; m &= m - 1) {
      const unsigned i = (unsigned)__builtin_ctzll(m);
      const uint64_t b = QBIT(l->owner[i]);
      if ((want & ~got & b) && pattern_hit(l, i, path, len))
        got |= b;
    }
    return got;
  }
  for (guint i = 0; i < l->pats->len && got != want; i++) {
    const uint64_t b = QBIT(l->owner[i]);
    if ((want & ~got & b) && pattern_hit(l, i, path, len))
      got |= b;
  }
  return got;
}

/* Of the queries in WANT, those with a pattern in L that matches PATH. A
 * list of one query's patterns (a plain walk) stops at the first match,
 * inline: per entry, the call alone was 40 instructions (callgrind). */
static inline uint64_t
patlist_match(const struct patlist *l, const char *path, size_t len, uint64_t want, GArray *hits)
{
  want &= l->all;
  if (want == 0)
    return 0;
  if (l->one) {
    const bool hit = l->by_suffix[0] ? tail_match(l, 0, path, len)
                                     : trawl_pattern_match(l->one, path, len);
    return hit ? want : 0;
  }
  if (G_UNLIKELY((l->all & (l->all - 1)) != 0))
    return patlist_match_shared(l, path, len, want, hits);
  if (l->set)
    return trawl_patset_any(l->set, path, len) ? want : 0;
  const trawl_pattern *const *pats = (const trawl_pattern *const *)l->pats->pdata;
  for (guint i = 0; i < l->pats->len; i++)
    if (trawl_pattern_match(pats[i], path, len))
      return want;
  return 0;
}

static void
qtab_init(struct qtab *t, const GPtrArray *queries, unsigned set_min)
{
  memset(t, 0, sizeof *t);
  t->n = queries->len;
  t->q = (struct query **)queries->pdata;
  for (guint i = 0; i < t->n; i++) {
    const struct query *q = t->q[i];
    t->every |= QBIT(i);
    if (q->hidden)
      t->hidden |= QBIT(i);
    if (q->max_depth >= 0)
      t->depth_limited |= QBIT(i);
    if (q->types & TRAWL_ENTRY_FILE)
      t->types[KIND_FILE] |= QBIT(i);
    if (q->types & TRAWL_ENTRY_DIR)
      t->types[KIND_DIR] |= QBIT(i);
    /* A link that is not followed is reported with the files as well. */
    if (q->types & (TRAWL_ENTRY_SYMLINK | TRAWL_ENTRY_FILE))
      t->types[KIND_SYMLINK] |= QBIT(i);
    t->q[i]->prune = q->includes->len >= MAX(set_min, 1u) ? prune_index_new(q->includes) : NULL;
  }
  patlist_init(&t->inc, queries, true, set_min);
  patlist_init(&t->exc, queries, false, set_min);
}

static void
qtab_clear(struct qtab *t)
{
  for (guint i = 0; i < t->n; i++) {
    prune_index_free(t->q[i]->prune);
    t->q[i]->prune = NULL;
  }
  patlist_clear(&t->inc);
  patlist_clear(&t->exc);
  if (t->nested)
    g_hash_table_unref(t->nested);
  if (t->transit)
    g_hash_table_unref(t->transit);
}

/* Of the queries in WANT, those PATH is a result of (before its type and
 * the ignore rules): an include matches (or it has none), no exclude does. */
static inline uint64_t
select_mask(const struct qtab *t, const char *path, size_t len, uint64_t want, GArray *hits)
{
  uint64_t sel = (want & ~t->inc.all) | patlist_match(&t->inc, path, len, want, hits);
  if (sel & t->exc.all)
    sel &= ~patlist_match(&t->exc, path, len, sel, hits);
  return sel;
}

/* Of the queries in WANT, those with an exclude that matches directory PATH
 * or covers everything below it. Through the set, the covering ones are
 * found among the excludes that match PATH/x: an exclude that matches
 * every path below PATH matches that one. SCRATCH is a buffer for it. */
static uint64_t
closing_mask(const struct qtab *t, const char *path, size_t len, uint64_t want, GArray *hits,
             struct buf *scratch)
{
  const struct patlist *l = &t->exc;
  uint64_t got = 0;
  if (l->set == NULL) {
    for (guint i = 0; i < l->pats->len; i++) {
      uint64_t b = QBIT(l->owner[i]);
      const trawl_pattern *x = l->pats->pdata[i];
      if ((want & ~got & b) && (trawl_pattern_match(x, path, len) ||
                                trawl_pattern_covers_below(x, path, len)))
        got |= b;
    }
    return got;
  }
  got = patlist_match(l, path, len, want, hits);
  if ((want & ~got) == 0)
    return got;
  buf_cut(scratch, 0);
  buf_add(scratch, path, len);
  buf_add(scratch, "/x", 2);
  g_array_set_size(hits, 0);
  trawl_patset_matches(l->set, scratch->data, scratch->len, hits);
  for (guint i = 0; i < hits->len; i++) {
    guint k = g_array_index(hits, guint, i);
    uint64_t b = QBIT(l->owner[k]);
    if ((want & ~got & b) && trawl_pattern_covers_below(l->pats->pdata[k], path, len))
      got |= b;
  }
  return got;
}

/* Of the queries in WANT, those whose own walk would open directory PATH. */
static uint64_t
open_mask(const struct qtab *t, const char *path, size_t len, uint64_t want, GArray *hits,
          struct buf *scratch)
{
  uint64_t got = 0;
  for (uint64_t m = want; m; m &= m - 1) {
    unsigned i = (unsigned)__builtin_ctzll(m);
    if (query_wants(t->q[i], path, len))
      got |= QBIT(i);
  }
  if (got & t->exc.all)
    got &= ~closing_mask(t, path, len, got, hits, scratch);
  return got;
}

/* Of the queries in LIVE, those that see entry NAME (hidden or not). */
static inline uint64_t
shown_mask(const struct qtab *t, const char *name, size_t len, uint64_t live)
{
  if (name[0] != '.')
    return live;
  uint64_t ok = live & t->hidden;
  for (uint64_t m = live & ~ok; m; m &= m - 1) {
    unsigned i = (unsigned)__builtin_ctzll(m);
    if (names_hidden(t->q[i]->includes, name, len))
      ok |= QBIT(i);
  }
  return ok;
}

/* Of the queries in LIVE, those that report entries at DEPTH, and those
 * that open directories there. */
static inline void
depth_masks(const struct qtab *t, int depth, uint64_t live, uint64_t *report, uint64_t *descend)
{
  *report = *descend = live;
  for (uint64_t m = live & t->depth_limited; m; m &= m - 1) {
    unsigned i = (unsigned)__builtin_ctzll(m);
    if (depth > t->q[i]->max_depth)
      *report &= ~QBIT(i);
    if (depth >= t->q[i]->max_depth)
      *descend &= ~QBIT(i);
  }
}

/* ---- problems ---------------------------------------------------------- */

static void
add_problem(struct run *run, unsigned root, const char *path, TrawlWalkError code,
            const char *what)
{
  const char *r = run->w->roots->pdata[root];
  char *shown = path[0] == '\0' ? g_strdup(r)
                : strcmp(r, ".") == 0 ? g_strdup(path)
                : g_strconcat(r, "/", path, NULL);
  pthread_mutex_lock(&run->problem_lock);
  g_ptr_array_add(run->w->problems,
                  g_error_new(TRAWL_WALK_ERROR, code, "%s: %s", shown, what));
  pthread_mutex_unlock(&run->problem_lock);
  g_free(shown);
}

/* Report a loop once per KEY (the looping link's or directory's own device
 * and inode), however many paths reach it. */
static void
report_loop_once(struct run *run, unsigned root, const char *path,
                 const struct stat *key, const char *what)
{
  char *k = g_strdup_printf("%ju:%ju", (uintmax_t)key->st_dev, (uintmax_t)key->st_ino);
  pthread_mutex_lock(&run->problem_lock);
  bool first = g_hash_table_add(run->loops, k);
  pthread_mutex_unlock(&run->problem_lock);
  if (first)
    add_problem(run, root, path, TRAWL_WALK_ERROR_LOOP, what);
}

/* ---- items and descriptors -------------------------------------------- */

static void
dirref_unref(struct run *run, struct dirref *d)
{
  if (d && g_atomic_int_dec_and_test(&d->refs)) {
    close(d->fd);
    g_atomic_int_add(&run->open_fds, -1);
    g_free(d);
  }
}

static void
chain_unref(struct chain *c)
{
  while (c && g_atomic_int_dec_and_test(&c->refs)) {
    struct chain *up = c->up;
    g_free(c);
    c = up;
  }
}

/* Is the directory ST one of the chain's (device, inode)? */
static bool
chain_has(const struct chain *c, const struct stat *st)
{
  for (; c; c = c->up)
    if (c->dev == st->st_dev && c->ino == st->st_ino)
      return true;
  return false;
}

static void
item_free(struct run *run, struct item *it)
{
  dirref_unref(run, it->parent);
  chain_unref(it->chain);
  ignore_frame_unref(it->ig);
  g_free(it->path);
  g_free(it);
}

/* openat() a relative path of any length: in steps of at most
 * OPEN_PATH_MAX bytes, each ending at a '/'. */
static int
open_relative(int base, const char *path, int flags)
{
  const int dir_flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  int fd = base, owned = -1;
  while (strlen(path) > OPEN_PATH_MAX) {
    const char *cut = path + OPEN_PATH_MAX;
    while (cut > path && *cut != '/')
      cut--;
    if (cut == path)
      break; /* one component over the limit: let the kernel refuse it */
    char *step = g_strndup(path, (size_t)(cut - path));
    int next = openat(fd, step, dir_flags);
    int err = errno;
    g_free(step);
    if (owned >= 0)
      close(owned);
    if (next < 0) {
      errno = err;
      return -1;
    }
    fd = owned = next;
    path = cut + 1;
  }
  int result = openat(fd, path, flags);
  int err = errno;
  if (owned >= 0)
    close(owned);
  errno = err;
  return result;
}

static struct chain *
chain_new(const struct stat *st, struct chain *up)
{
  struct chain *c = g_new0(struct chain, 1);
  c->dev = st->st_dev;
  c->ino = st->st_ino;
  c->up = up; /* takes the caller's reference */
  c->refs = 1;
  return c;
}

/* A literal start directory ("src/x" of "src/x/ **"): one component at a
 * time, so that without --follow no link on the way is followed, and with it
 * every directory on the way joins the loop-detection chain. */
static int
open_start(struct run *run, struct item *it)
{
  const bool follow = run->w->opt.follow;
  const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
  /* Directories on the way need only search permission, as in a path
   * lookup: O_PATH where the system has it. */
#ifdef O_PATH
  const int pass = O_PATH | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
#else
  const int pass = flags;
#endif
  int fd = fcntl(run->root_fds[it->root], F_DUPFD_CLOEXEC, 0);
  const char *p = it->path;
  while (fd >= 0) {
    const char *slash = strchr(p, '/');
    char *comp = slash ? g_strndup(p, (size_t)(slash - p)) : g_strdup(p);
    int next = openat(fd, comp, slash ? pass : flags);
    int err = errno;
    g_free(comp);
    close(fd);
    errno = err;
    fd = next;
    if (fd < 0 || slash == NULL)
      break;
    struct stat st;
    if (follow && fstat(fd, &st) == 0)
      it->chain = chain_new(&st, it->chain);
    p = slash + 1;
  }
  return fd;
}

static int
open_item(struct run *run, struct item *it)
{
  int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (it->via_link ? 0 : O_NOFOLLOW);
  int root_fd = run->root_fds[it->root];
  if (it->len == 0)
    return fcntl(root_fd, F_DUPFD_CLOEXEC, 0);
  if (it->start)
    return open_start(run, it);
  if (it->parent)
    return openat(it->parent->fd, it->path + it->name_off, flags);
  return open_relative(root_fd, it->path, flags);
}

/* Make every queued item open by path, closing the parent descriptors they
 * shared. */
static void
shed_descriptors(struct run *run)
{
  for (unsigned i = 0; i < run->n_workers; i++) {
    struct worker *wk = &run->workers[i];
    pthread_mutex_lock(&wk->lock);
    for (size_t k = 0; k < wk->deque.length; k++) {
      struct item *queued = deque_at(&wk->deque, k);
      dirref_unref(run, queued->parent);
      queued->parent = NULL;
    }
    pthread_mutex_unlock(&wk->lock);
  }
}

/* ---- the per-directory step --------------------------------------------- */

static void
push(struct worker *wk, struct item *it)
{
  g_atomic_int_inc(&wk->run->pending);
  pthread_mutex_lock(&wk->lock);
  deque_push_tail(&wk->deque, it);
  pthread_mutex_unlock(&wk->lock);
}

static void
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

/* Merge sort with insertion-sorted runs: O(n log n) whatever the names,
 * and the comparison inlined (qsort's indirect calls and memcmp were half
 * the cost of sorting a 50-entry directory). TMP holds N records. */
static void
sort_recs(struct rec *v, size_t n, struct rec *tmp)
{
  if (n <= 16) {
    for (size_t i = 1; i < n; i++) {
      struct rec r = v[i];
      size_t j = i;
      for (; j > 0 && compare_recs(&r, &v[j - 1]) < 0; j--)
        v[j] = v[j - 1];
      v[j] = r;
    }
    return;
  }
  size_t half = n / 2;
  sort_recs(v, half, tmp);
  sort_recs(v + half, n - half, tmp);
  if (compare_recs(&v[half - 1], &v[half]) <= 0)
    return;
  memcpy(tmp, v, half * sizeof *v);
  size_t i = 0, j = half, k = 0;
  while (i < half && j < n)
    v[k++] = compare_recs(&v[j], &tmp[i]) < 0 ? v[j++] : tmp[i++];
  while (i < half)
    v[k++] = tmp[i++];
}

/* The memo entry of the directory whose sorted records are NODE: the
 * records, with each subtree's live queries. */
static struct memo_dir *
memo_of(const struct item *it, const struct node *node)
{
  size_t names = 0;
  for (guint i = 0; i < node->n; i++)
    names += node->recs[i].len;
  struct memo_dir *d = memo_dir_new(it->root, it->path, it->len, node->n, names);
  char *at = memo_dir_names(d);
  for (guint i = 0; i < node->n; i++) {
    const struct rec *r = &node->recs[i];
    struct memo_rec *m = &d->recs[i];
    memcpy(at, r->name, r->len);
    m->name = at;
    m->len = r->len;
    at += r->len;
    m->type = r->type;
    if (r->kind == REC_RESULT) {
      m->kind = MEMO_RESULT;
      m->mask = r->child.queries;
    } else {
      m->kind = r->child.item->via_link ? MEMO_SUBTREE_LINK : MEMO_SUBTREE;
      m->mask = r->child.item->live;
    }
  }
  d->live = it->live;
  d->start = it->start;
  return d;
}

/* Turn the records of directory IT, just read, into its node, publish it at
 * its slot, and queue its subdirectories, the first in order on top. For
 * the next walk's memo: the entry REPLAYED (a reference) if the records
 * came from one, else a new one with HEAD, if there is a memo to make. */
static void
finish_node(struct worker *wk, struct item *it, const struct dir_stamp *head,
            struct memo_dir *replayed)
{
  struct node **slot = it->slot;
  const guint n = (guint)wk->n_recs;
  struct rec *recs = wk->recs;
  size_t names = 0;
  for (guint i = 0; i < n; i++)
    names += recs[i].len;
  struct node *node = g_malloc(sizeof *node + n * sizeof(struct rec) + names);
  node->n = n;
  char *at = (char *)&node->recs[n];
  for (guint i = 0; i < n; i++) {
    node->recs[i] = recs[i];
    copy_short(at, recs[i].name, recs[i].len);
    node->recs[i].name = at;
    at += recs[i].len;
  }
  if (n > 16 && wk->sort_cap < n / 2 + 1) {
    wk->sort_cap = n;
    wk->sort_tmp = g_renew(struct rec, wk->sort_tmp, n);
  }
  sort_recs(node->recs, n, wk->sort_tmp);
  if (replayed) {
    g_ptr_array_add(wk->memos, replayed);
  } else if (head) {
    struct memo_dir *d = memo_of(it, node);
    d->was = *head;
    g_ptr_array_add(wk->memos, d);
  }
  /* Slots are empty before the node is seen by the printing thread. */
  for (guint i = n; i-- > 0;) {
    struct rec *r = &node->recs[i];
    if (r->kind != REC_SUBTREE)
      continue;
    struct item *child = r->child.item;
    r->child.node = NULL;
    child->slot = &r->child.node;
    g_ptr_array_add(wk->kids, child);
  }
  g_atomic_pointer_set(slot, node);
  for (guint i = 0; i < wk->kids->len; i++)
    push(wk, wk->kids->pdata[i]);
  g_ptr_array_set_size(wk->kids, 0);
  wk->n_recs = 0;
}

/* Print, on the calling thread, every result of a sorted run that no
 * unread directory comes before, freeing each node once printed. At the end
 * of the walk (DONE), a directory never processed (an early stop) counts as
 * empty. */
static void
emit_ready(struct run *run, bool done)
{
  GArray *frames = run->frames;
  struct buf *path = &run->out_path;
  for (;;) {
    if (frames->len == 0) {
      if (run->next_top == run->tops->len)
        return;
      struct top *top = run->tops->pdata[run->next_top];
      struct node *node = g_atomic_pointer_get(&top->node);
      if (node == NULL && !done)
        return;
      run->next_top++;
      if (node != NULL && node != &no_node) {
        buf_cut(path, 0);
        buf_add(path, top->key, strlen(top->key));
        struct frame f = {node, 0, path->len};
        g_array_append_val(frames, f);
      }
      continue;
    }
    struct frame *f = &g_array_index(frames, struct frame, frames->len - 1);
    if (f->next == f->node->n) {
      g_free(f->node);
      g_array_set_size(frames, frames->len - 1);
      continue;
    }
    struct rec *r = &f->node->recs[f->next];
    if (r->kind == REC_SUBTREE) {
      struct node *child = g_atomic_pointer_get(&r->child.node);
      if (child == NULL && !done)
        return;
      f->next++;
      if (child == NULL || child == &no_node)
        continue;
      buf_cut(path, f->base);
      buf_add(path, r->name, r->len);
      buf_addc(path, '/');
      struct frame down = {child, 0, path->len};
      g_array_append_val(frames, down); /* f is stale from here */
      continue;
    }
    f->next++;
    if (g_atomic_int_get(&run->stop))
      continue;
    buf_cut(path, f->base);
    buf_add(path, r->name, r->len);
    unsigned root = ((struct top *)run->tops->pdata[run->next_top - 1])->root;
    trawl_entry e = {path->data, path->len, (TrawlEntryType)r->type, root, r->child.queries};
    if (!run->fn(&e, run->data))
      g_atomic_int_set(&run->stop, 1);
  }
}

/* Do the ignore rules in force (FRAME) leave out the entry whose match path
 * is in WK's path buffer? The lstat type decides IS_DIR: a link to a
 * directory is not one, for git. */
static bool
ignored(const struct ignore_ctx *igc, const struct ignore_frame *frame, struct worker *wk,
        bool is_dir)
{
  if (igc == NULL)
    return false;
  const struct ignore_rule *r = ignore_verdict(igc, frame, wk->path.data, wk->path.len,
                                               is_dir, NULL);
  return r && !r->negated;
}

static void
report(struct worker *wk, unsigned root, TrawlEntryType type, uint64_t queries)
{
  struct run *run = wk->run;
  wk->stats.results++;
  const size_t plen = run->ig ? run->ig[root].plen : 0;
  trawl_entry e = {wk->path.data + plen, wk->path.len - plen, type, root, queries};
  if (!run->fn(&e, run->data))
    g_atomic_int_set(&run->stop, 1);
}

/* ---- memos: the last walk's directories, trusted by their stamps ----- */

/* Record in D the rules directory FD holds, as HAS says (its listing, or a
 * probe): which, and the stamps of its ignore files, racy or not. */
static void
record_rules(const struct run *run, int fd, unsigned has, struct dir_stamp *d)
{
  d->has = has;
  ignore_file_stamps(fd, "", has, d->ignore);
  d->rules_racy = stamp_racy(&d->ignore[0], &run->racy_from) ||
                  stamp_racy(&d->ignore[1], &run->racy_from);
}

/* Record that start directory IT was not there: its appearing is a change. */
static void
memo_missing(struct worker *wk, const struct item *it)
{
  struct memo_dir *d = memo_dir_new(it->root, it->path, it->len, 0, 0);
  d->live = it->live;
  d->start = it->start;
  g_ptr_array_add(wk->memos, d);
}

/* Replay directory IT from the last walk's memo when its stamp (and its
 * ignore files') say it is as it was then (dir_check()): its results and
 * subdirectories as recorded, without reading it. False, with nothing done,
 * when it must be read; IT->fresh set when its own rules changed, so that
 * nothing below is replayed either. */
static bool
replay(struct worker *wk, struct item *it)
{
  struct run *run = wk->run;
  const trawl_walk_options *o = &run->w->opt;
  if (run->memo_old == NULL || it->fresh || (it->start && o->follow))
    return false;
  const struct memo_dir *m = walk_memo_lookup(run->memo_old, it->root, it->path, it->len);
  if (m == NULL || m->way || m->live != it->live)
    return false;
  /* The directory the walk would open: a start directory component by
   * component, as open_start() does. One with rules of its own — ignore
   * files, or the `.git` that makes it the top of a work tree, whose
   * info/exclude and excludes file apply below and without which no
   * `.gitignore` below is read — is opened, to enter them as a walk reading
   * it would: a directory below may be read, and must see the rules a fresh
   * walk does. */
  const int root_fd = run->root_fds[it->root];
  struct ignore_ctx *igc = run->ig ? &run->ig[it->root] : NULL;
  const unsigned rules_here = igc ? m->was.has & (HAS_GITIGNORE | HAS_DOTIGNORE | HAS_DOTGIT) : 0;
  int fd = -1;
  if (it->start)
    fd = open_start(run, it);
  else if (rules_here)
    fd = it->len ? open_relative(root_fd, it->path,
                                 O_RDONLY | O_DIRECTORY | O_CLOEXEC |
                                 (it->via_link ? 0 : O_NOFOLLOW))
                 : fcntl(root_fd, F_DUPFD_CLOEXEC, 0);
  struct stat st;
  bool ok;
  if (fd >= 0)
    ok = fstat(fd, &st) == 0;
  else if (it->start || rules_here)
    ok = false;
  else if (it->len == 0)
    ok = fstat(root_fd, &st) == 0;
  else
    ok = fstatat(root_fd, it->path, &st, it->via_link ? 0 : AT_SYMLINK_NOFOLLOW) == 0;
  const enum dir_verdict verdict =
      dir_check(&m->was, ok && S_ISDIR(st.st_mode) ? &st : NULL, fd >= 0 ? fd : root_fd,
                fd >= 0 ? "" : it->path);
  if (verdict != DIR_SAME) {
    if (fd >= 0)
      close(fd);
    it->fresh = verdict == DIR_RULES_CHANGED;
    return false;
  }
  if (!m->was.st.present) {
    /* A start directory that was not there, and still is not. */
    if (run->memo_out)
      g_ptr_array_add(wk->memos, memo_dir_ref(m));
    wk->stats.dirs_reused++;
    return true;
  }
  struct ignore_frame *frame = NULL;
  if (igc) {
    size_t base = igc->plen + it->len + (it->len ? 1 : 0);
    frame = rules_here ? ignore_frame_enter(igc, it->ig, fd, it->path, base, m->was.has)
                       : ignore_frame_ref(it->ig);
  }
  if (fd >= 0)
    close(fd);
  struct chain *here = NULL;
  if (o->follow) {
    if (it->chain)
      g_atomic_int_inc(&it->chain->refs);
    here = chain_new(&st, it->chain);
  }
  const int depth = it->depth + 1;
  for (guint i = 0; i < m->n; i++) {
    const struct memo_rec *r = &m->recs[i];
    if (r->kind == MEMO_RESULT) {
      wk->stats.results++;
      add_rec(wk, r->name, r->len, REC_RESULT, r->type, NULL, r->mask);
      continue;
    }
    struct item *child = g_new0(struct item, 1);
    /* (Names in a memo are not NUL-terminated.) */
    child->len = it->len ? it->len + 1 + r->len : r->len;
    child->path = g_malloc(child->len + 1);
    if (it->len) {
      memcpy(child->path, it->path, it->len);
      child->path[it->len] = '/';
    }
    memcpy(child->path + child->len - r->len, r->name, r->len);
    child->path[child->len] = '\0';
    child->name_off = it->len ? it->len + 1 : 0;
    child->root = it->root;
    child->depth = depth;
    child->via_link = r->kind == MEMO_SUBTREE_LINK;
    child->live = r->mask;
    child->ig = ignore_frame_ref(frame);
    if (here) {
      g_atomic_int_inc(&here->refs);
      child->chain = here;
    }
    add_rec(wk, r->name, r->len, REC_SUBTREE, 0, child, 0);
  }
  wk->stats.dirs_reused++;
  finish_node(wk, it, NULL, run->memo_out ? memo_dir_ref(m) : NULL);
  it->slot = NULL;
  chain_unref(here);
  ignore_frame_unref(frame);
  return true;
}

static void
process(struct worker *wk, struct item *it)
{
  struct run *run = wk->run;
  const trawl_walker *w = run->w;
  const trawl_walk_options *o = &w->opt;

  if (run->sorted && replay(wk, it))
    return;
  int fd = open_item(run, it);
  if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
    /* Out of descriptors (the caller holds more than the budget assumed):
     * stop sharing parents, give back every shared descriptor that queued
     * items hold, and open by path. */
    g_atomic_int_set(&run->fd_budget, 0);
    dirref_unref(run, it->parent);
    it->parent = NULL;
    shed_descriptors(run);
    fd = open_item(run, it);
  }
  if (fd < 0) {
    int err = errno;
    /* Gone, or replaced by something that is not a directory: not an error. */
    if (err != ENOENT && err != ENOTDIR && err != ELOOP)
      add_problem(run, it->root, it->path, TRAWL_WALK_ERROR_READ, g_strerror(err));
    else if (run->memo_out && run->sorted && (it->start || it->len == 0))
      memo_missing(wk, it);
    return;
  }
  struct chain *here = NULL;
  /* For the next walk's memo: the stamp before the listing is read. */
  struct dir_stamp head;
  bool memo = run->memo_out != NULL && run->sorted;
  if (o->follow || o->one_file_system || memo) {
    struct stat st;
    if (fstat(fd, &st) != 0) {
      memo = false;
    } else {
      if (memo) {
        memset(&head, 0, sizeof head);
        stamp_of(&head.st, &st, false);
        head.racy = stamp_racy(&head.st, &run->racy_from);
      }
      if (o->one_file_system && st.st_dev != run->root_devs[it->root]) {
        close(fd);
        return;
      }
      if (o->follow) {
        /* Through a followed link, a plain directory can be its own
         * ancestor too ("to-core/util/back/core"): check every one. */
        if (chain_has(it->chain, &st)) {
          report_loop_once(run, it->root, it->path, &st,
                           "directory loop through a followed link, not entered");
          close(fd);
          return;
        }
        if (it->chain)
          g_atomic_int_inc(&it->chain->refs);
        here = chain_new(&st, it->chain);
      }
    }
  }
  /* The parent descriptor is no longer needed. */
  dirref_unref(run, it->parent);
  it->parent = NULL;

  const bool posix = o->reader == TRAWL_READER_POSIX || !dirread_linux_available();
  int err = posix ? dirread_posix(fd, &wk->listing) : dirread_linux(fd, &wk->listing);
  if (err == EMFILE || err == ENFILE) {
    /* The POSIX reader needs a descriptor of its own: make room as above. */
    g_atomic_int_set(&run->fd_budget, 0);
    shed_descriptors(run);
    err = posix ? dirread_posix(fd, &wk->listing) : dirread_linux(fd, &wk->listing);
  }
  wk->stats.dirs_opened++;
  if (w->open_hook)
    w->open_hook(it->root, it->path, w->open_hook_data);
  if (err != 0 && err != ENOENT)
    add_problem(run, it->root, it->path, TRAWL_WALK_ERROR_READ, g_strerror(err));
  if (err != 0)
    memo = false; /* a partial listing is no record */

  const struct listing_entry *ents = wk->listing.entries;
  const size_t n = wk->listing.n;
  const char *names = wk->listing.names.data;
  const int depth = it->depth + 1;
  const struct qtab *qt = &run->qt;
  const uint64_t live = it->live;
  uint64_t report_here, descend;
  depth_masks(qt, depth, live, &report_here, &descend);
  struct dirref *shared = NULL;
  const bool sorted = run->sorted;

  /* The path buffer holds the match path: the root's path below its work
   * tree's top (ignore rules are matched from there), then the path below
   * the root, which is what patterns see and results carry. */
  struct ignore_ctx *igc = run->ig ? &run->ig[it->root] : NULL;
  const size_t plen = igc ? igc->plen : 0;
  buf_cut(&wk->path, 0);
  if (plen)
    buf_add(&wk->path, igc->prefix, plen);
  if (it->len) {
    buf_add(&wk->path, it->path, it->len);
    buf_addc(&wk->path, '/');
  }
  const size_t base = wk->path.len;

  /* The ignore files of this directory: the listing says whether there are
   * any, so looking costs nothing. */
  struct ignore_frame *frame = NULL;
  const bool skip_dotgit = igc && (o->ignore & TRAWL_IGNORE_VCS);
  if (igc) {
    unsigned has = 0;
    for (size_t i = 0; i < n; i++)
      if (names[ents[i].name_off] == '.')
        has |= ignore_has_of(names + ents[i].name_off, ents[i].name_len, ents[i].type == DT_LNK);
    frame = has ? ignore_frame_enter(igc, it->ig, fd, it->path, base, has)
                : ignore_frame_ref(it->ig);
    /* A nested repository's rules come from inside its .git as well:
     * never trusted. (The top's are the cache's to check.) */
    const bool nested_repo = (has & HAS_DOTGIT) && !(it->len == 0 && igc->plen == 0);
    if (memo) {
      record_rules(run, fd, has, &head);
      head.racy = head.racy || nested_repo;
    }
    /* Read again, for whatever reason: if its own rules are not those the
     * last walk decided below it with, nothing below is replayed. */
    if (run->memo_old && !it->fresh) {
      const struct memo_dir *m = walk_memo_lookup(run->memo_old, it->root, it->path, it->len);
      if (nested_repo || (m ? dir_check_rules(&m->was, has, fd, "") != DIR_SAME
                            : (has & (HAS_GITIGNORE | HAS_DOTIGNORE | HAS_DOTGIT)) != 0))
        it->fresh = true;
    }
  }

  for (size_t i = 0; i < n && !g_atomic_int_get(&run->stop); i++) {
    const char *name = names + ents[i].name_off;
    const size_t nlen = ents[i].name_len;
    wk->stats.entries_seen++;
    const uint64_t shown = shown_mask(qt, name, nlen, live);
    if (shown == 0 && qt->nested == NULL)
      continue;
    /* A repository's own directory is never listed or entered. */
    if (skip_dotgit && nlen == 4 && memcmp(name, ".git", 4) == 0)
      continue;
    buf_cut(&wk->path, base);
    buf_add(&wk->path, name, nlen);
    const char *rel = wk->path.data + plen;
    const size_t rlen = wk->path.len - plen;
    /* An entry no query here sees may still be the way to another query's
     * start directory below. */
    bool on_the_way = false;
    if (qt->nested) {
      on_the_way = g_hash_table_contains(qt->transit, rel) || g_hash_table_contains(qt->nested, rel);
      if (shown == 0 && !on_the_way)
        continue;
    }

    unsigned type = ents[i].type;
    if (type == DT_UNKNOWN) {
      struct stat st;
      if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        continue; /* vanished */
      type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
    }
    bool via_link = false;
    TrawlEntryType kind = type == DT_DIR ? TRAWL_ENTRY_DIR
                          : type == DT_LNK ? TRAWL_ENTRY_SYMLINK : TRAWL_ENTRY_FILE;
    if (o->follow && kind != TRAWL_ENTRY_FILE) {
      /* Following links, any directory may be its own ancestor: a link to
       * one, or a plain directory reached through a followed link
       * ("to-core/util/back/core"). Such an entry is neither reported nor
       * entered, and each loop is reported once, keyed by the link's own
       * (device, inode) or the directory's. */
      struct stat st;
      bool is_link = kind == TRAWL_ENTRY_SYMLINK;
      /* What a link leads to can change with no stamp here changing: a
       * directory with links to follow is read every time. */
      if (is_link && memo)
        head.racy = true;
      if (fstatat(fd, name, &st, is_link ? 0 : AT_SYMLINK_NOFOLLOW) == 0) {
        if (is_link)
          kind = S_ISDIR(st.st_mode) ? TRAWL_ENTRY_DIR : TRAWL_ENTRY_FILE;
        via_link = is_link && kind == TRAWL_ENTRY_DIR;
        if (kind == TRAWL_ENTRY_DIR && chain_has(here, &st)) {
          struct stat key_st = st;
          if (is_link)
            fstatat(fd, name, &key_st, AT_SYMLINK_NOFOLLOW);
          report_loop_once(run, it->root, rel, &key_st,
                           is_link ? "symbolic link loop, not followed"
                                   : "directory loop through a followed link, not entered");
          continue;
        }
      }
    }

    const unsigned k = kind == TRAWL_ENTRY_DIR ? KIND_DIR
                       : kind == TRAWL_ENTRY_SYMLINK ? KIND_SYMLINK : KIND_FILE;
    uint64_t hit = shown & report_here & qt->types[k];
    if (hit) {
      hit = select_mask(qt, rel, rlen, hit, wk->hits);
      if (hit && !ignored(igc, frame, wk, type == DT_DIR)) {
        if (sorted) {
          wk->stats.results++;
          add_rec(wk, name, nlen, REC_RESULT, kind, NULL, hit);
        } else {
          report(wk, it->root, kind, hit);
        }
      }
    }
    if (kind != TRAWL_ENTRY_DIR)
      continue;
    uint64_t opens = shown & descend;
    if (opens)
      opens = open_mask(qt, rel, rlen, opens, wk->hits, &wk->scratch);
    if (on_the_way) {
      const uint64_t *starting = g_hash_table_lookup(qt->nested, rel);
      if (starting)
        opens |= *starting;
      on_the_way = g_hash_table_contains(qt->transit, rel);
    }
    if ((opens == 0 && !on_the_way) || ignored(igc, frame, wk, type == DT_DIR)) {
      if (shown & descend)
        wk->stats.dirs_pruned++;
      continue;
    }
    struct item *child = g_new0(struct item, 1);
    child->live = opens;
    child->fresh = it->fresh;
    child->path = g_strndup(rel, rlen);
    child->len = rlen;
    child->ig = ignore_frame_ref(frame);
    child->name_off = it->len ? it->len + 1 : 0;
    child->root = it->root;
    child->depth = depth;
    child->via_link = via_link;
    if (here) {
      g_atomic_int_inc(&here->refs);
      child->chain = here;
    }
    /* Children open themselves with openat(this fd) while descriptors
     * last; past the budget they open by path from the root. */
    if (shared == NULL && g_atomic_int_get(&run->open_fds) < g_atomic_int_get(&run->fd_budget)) {
      shared = g_new0(struct dirref, 1);
      shared->fd = fd;
      shared->refs = 1;
      g_atomic_int_inc(&run->open_fds);
    }
    if (shared) {
      g_atomic_int_inc(&shared->refs);
      child->parent = shared;
    }
    if (sorted)
      add_rec(wk, name, nlen, REC_SUBTREE, 0, child, 0);
    else
      push(wk, child);
  }
  if (sorted) {
    finish_node(wk, it, memo ? &head : NULL, NULL);
    /* Once published, the slot (in the parent's node) belongs to the
     * printing thread, which may free it at any moment. */
    it->slot = NULL;
  }
  if (shared)
    dirref_unref(run, shared);
  else
    close(fd);
  chain_unref(here);
  ignore_frame_unref(frame);
}

/* ---- the scheduler -------------------------------------------------------- */

static struct item *
take(struct worker *wk)
{
  struct run *run = wk->run;
  pthread_mutex_lock(&wk->lock);
  struct item *it = deque_pop_tail(&wk->deque);
  pthread_mutex_unlock(&wk->lock);
  for (unsigned k = 1; it == NULL && k < run->n_workers; k++) {
    struct worker *victim = &run->workers[(wk->index + k) % run->n_workers];
    pthread_mutex_lock(&victim->lock);
    it = run->sorted ? deque_pop_tail(&victim->deque) : deque_pop_head(&victim->deque);
    pthread_mutex_unlock(&victim->lock);
  }
  return it;
}

static gpointer worker_main(gpointer data);

static void
start_helpers(struct run *run)
{
  if (run->n_workers < 2 || !g_atomic_int_compare_and_exchange(&run->started, 0, 1))
    return;
  for (unsigned i = 1; i < run->n_workers; i++)
    run->workers[i].thread = g_thread_new("trawl-walk", worker_main, &run->workers[i]);
}

static void
finish_item(struct run *run)
{
  if (g_atomic_int_dec_and_test(&run->pending)) {
    pthread_mutex_lock(&run->idle_lock);
    pthread_cond_broadcast(&run->idle_cond);
    pthread_mutex_unlock(&run->idle_lock);
  }
}

static gpointer
worker_main(gpointer data)
{
  struct worker *wk = data;
  struct run *run = wk->run;
  for (;;) {
    if (g_atomic_int_get(&run->stop)) {
      /* Drain what is left without processing it. */
      struct item *it = take(wk);
      if (it == NULL)
        break;
      item_free(run, it);
      finish_item(run);
      continue;
    }
    struct item *it = take(wk);
    if (it == NULL) {
      if (g_atomic_int_get(&run->pending) == 0)
        break;
      /* Nothing to take, but work is in flight: nap until it ends or a
       * moment passes (new items are not signalled, so as not to pay a
       * broadcast per directory). */
      pthread_mutex_lock(&run->idle_lock);
      if (g_atomic_int_get(&run->pending) != 0) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += 200 * 1000;
        if (until.tv_nsec >= 1000000000L) {
          until.tv_sec++;
          until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&run->idle_cond, &run->idle_lock, &until);
      }
      pthread_mutex_unlock(&run->idle_lock);
      continue;
    }
    process(wk, it);
    /* Not read (gone, unreadable, a loop, another file system): an empty
     * node, so that printing goes on past it. */
    if (it->slot)
      g_atomic_pointer_set(it->slot, &no_node);
    item_free(run, it);
    if (run->sorted && wk->index == 0)
      emit_ready(run, false);
    /* Enough work shown: directories read and queued together. (Queued
     * alone never grows in a narrow, deep tree, where depth-first keeps
     * the deque short: big's 38,383 directories never started a helper.) */
    if (wk->index == 0 && !g_atomic_int_get(&run->started) && wk->deque.length > 0 &&
        wk->stats.dirs_opened + wk->deque.length >= run->w->helper_floor)
      start_helpers(run);
    finish_item(run);
  }
  return NULL;
}

/* Literal start directories of Q's includes, none below another, each once
 * (in the order the includes give them). A hash of them all, and each
 * one's ancestors looked up in it: a source list of 1,000 files spent 10
 * times the walk's own work comparing every pair. */
static GPtrArray *
start_dirs(const struct query *q)
{
  GPtrArray *dirs = g_ptr_array_new();
  if (q->includes->len == 0)
    g_ptr_array_add(dirs, (gpointer) "");
  for (guint i = 0; i < q->includes->len; i++) {
    const char *const *roots = trawl_pattern_roots(q->includes->pdata[i], NULL);
    for (; *roots; roots++)
      g_ptr_array_add(dirs, (gpointer)*roots);
  }
  GHashTable *all = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < dirs->len; i++)
    g_hash_table_add(all, dirs->pdata[i]);
  GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
  GPtrArray *kept = g_ptr_array_new();
  const bool at_root = g_hash_table_contains(all, "");
  char *up = NULL;
  size_t up_cap = 0;
  for (guint i = 0; i < dirs->len; i++) {
    const char *d = dirs->pdata[i];
    bool covered = at_root && d[0] != '\0';
    for (const char *c = strchr(d, '/'); c && !covered; c = strchr(c + 1, '/')) {
      size_t n = (size_t)(c - d);
      if (n + 1 > up_cap) {
        up_cap = 2 * (n + 1);
        up = g_realloc(up, up_cap);
      }
      memcpy(up, d, n);
      up[n] = '\0';
      covered = g_hash_table_contains(all, up);
    }
    /* Of equal ones, the first. */
    if (!covered && g_hash_table_add(seen, (gpointer)d))
      g_ptr_array_add(kept, (gpointer)d);
  }
  g_free(up);
  g_hash_table_unref(seen);
  g_hash_table_unref(all);
  g_ptr_array_free(dirs, TRUE);
  return kept;
}

/* May start directory D be walked? Not when an exclude closes it or one of
 * its ancestors, nor when its entries would lie deeper than the limit.
 * *DEPTH receives its depth in components. */
static bool
start_allowed(const struct query *q, const char *d, int *depth)
{
  size_t len = strlen(d);
  *depth = len ? 1 : 0;
  for (size_t i = 0; i <= len && len; i++) {
    if (i < len && d[i] != '/')
      continue;
    if (closing_exclude(q, d, i, true))
      return false;
    if (i < len)
      (*depth)++;
  }
  if (q->max_depth >= 0 && *depth + 1 > q->max_depth)
    return false;
  return len == 0 || query_opens(q, d, len);
}

/* The start directories of the run's queries: in TOPS (char *, to free)
 * those below no other, with the queries starting there in MASKS
 * (uint64_t); the others, below another query's, in qt->nested with the
 * directories on the way to them in qt->transit. */
static void
plan_starts(struct qtab *qt, GPtrArray *tops, GArray *masks)
{
  GHashTable *want = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  for (guint i = 0; i < qt->n; i++) {
    GPtrArray *starts = start_dirs(qt->q[i]);
    for (guint k = 0; k < starts->len; k++) {
      const char *d = starts->pdata[k];
      int depth;
      if (!start_allowed(qt->q[i], d, &depth))
        continue;
      uint64_t *mask = g_hash_table_lookup(want, d);
      if (mask == NULL) {
        mask = g_new0(uint64_t, 1);
        g_hash_table_insert(want, g_strdup(d), mask);
      }
      *mask |= QBIT(i);
    }
    g_ptr_array_free(starts, TRUE);
  }
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init(&iter, want);
  while (g_hash_table_iter_next(&iter, &key, &value)) {
    const char *d = key;
    /* Below another start directory? ("" is above every other.) */
    bool below = d[0] != '\0' && g_hash_table_contains(want, "");
    for (const char *c = strchr(d, '/'); c && !below; c = strchr(c + 1, '/')) {
      char *up = g_strndup(d, (gsize)(c - d));
      below = g_hash_table_contains(want, up);
      g_free(up);
    }
    if (!below) {
      g_ptr_array_add(tops, g_strdup(d));
      g_array_append_val(masks, *(uint64_t *)value);
      continue;
    }
    if (qt->nested == NULL) {
      qt->nested = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
      qt->transit = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    }
    g_hash_table_insert(qt->nested, g_strdup(d), g_memdup2(value, sizeof(uint64_t)));
    for (const char *c = strchr(d, '/'); c; c = strchr(c + 1, '/'))
      g_hash_table_add(qt->transit, g_strndup(d, (gsize)(c - d)));
  }
  g_hash_table_unref(want);
}

struct igprob {
  struct run *run;
  unsigned root;
};

/* An ignore file that could not be read: a problem; the walk goes on
 * without it, as git goes on with a warning. */
static void
ignore_problem(void *data, const char *source, int err)
{
  struct igprob *p = data;
  const char *what = err == EFBIG ? "ignore file larger than 100 MiB, not read"
                     : err == ELOOP ? "ignore file is a symbolic link, not read"
                                    : g_strerror(err);
  if (g_path_is_absolute(source)) {
    pthread_mutex_lock(&p->run->problem_lock);
    g_ptr_array_add(p->run->w->problems,
                    g_error_new(TRAWL_WALK_ERROR, TRAWL_WALK_ERROR_IGNORE, "%s: %s", source, what));
    pthread_mutex_unlock(&p->run->problem_lock);
  } else {
    add_problem(p->run, p->root, source, TRAWL_WALK_ERROR_IGNORE, what);
  }
}

/* Directory FD (PATH, LEN bytes, below root R) on the way to a start
 * directory: its ignore files (HAS_* in *HAS) decide below it, though it
 * is not read. Recorded, so that a cache sees them change (docs/cache.md);
 * and false when the last walk's record of it (a replay's) says they
 * differ — edited in place, no stamp of a directory changes, and nothing
 * below may then be replayed. */
static bool
way_dir(struct run *run, unsigned r, int fd, const char *path, size_t len, unsigned *has)
{
  *has = ignore_probe(fd);
  const bool record = run->memo_out && run->sorted;
  if (!record && run->memo_old == NULL)
    return true; /* no cache: nothing to stamp */
  struct stat st;
  if (record && fstat(fd, &st) == 0) {
    struct memo_dir *d = memo_dir_new(r, path, len, 0, 0);
    d->way = true;
    stamp_of(&d->was.st, &st, false);
    d->was.racy = stamp_racy(&d->was.st, &run->racy_from);
    record_rules(run, fd, *has, &d->was);
    g_ptr_array_add(run->workers[0].memos, d);
  }
  if (run->memo_old == NULL)
    return true;
  const struct memo_dir *m = walk_memo_lookup(run->memo_old, r, path, len);
  return m && dir_check_rules(&m->was, *has, fd, "") == DIR_SAME;
}

/* The ignore rules for start directory D of root R, read from the root
 * and every directory on the way (their listings are not read), in *FRAME;
 * *SAME false when one of those ignore files is not as the last walk's
 * record has it. False when D or a directory on the way is ignored (or is
 * `.git`). */
static bool
start_not_ignored(struct run *run, unsigned r, const char *d, struct ignore_frame **frame,
                  bool *same)
{
  *frame = NULL;
  *same = true;
  if (run->ig == NULL)
    return true;
  struct ignore_ctx *c = &run->ig[r];
  struct ignore_frame *f = ignore_frame_ref(c->above);
  size_t len = strlen(d);
  if (len == 0) {
    *frame = f;
    return true;
  }
  const bool vcs = c->flags & IGNORE_VCS;
  int root_fd = run->root_fds[r];
  unsigned has;
  *same = way_dir(run, r, root_fd, "", 0, &has);
  struct ignore_frame *next = ignore_frame_enter(c, f, root_fd, "", c->plen, has);
  ignore_frame_unref(f);
  f = next;
  GString *m = g_string_new(c->prefix);
  bool ok = true;
  for (size_t i = 0; i <= len && ok; i++) {
    if (i < len && d[i] != '/')
      continue;
    /* d[0..i) is a directory on the way, the last one D itself. */
    const char *slash = memrchr(d, '/', i);
    const char *name = slash ? slash + 1 : d;
    if (vcs && d + i - name == 4 && memcmp(name, ".git", 4) == 0) {
      ok = false;
      break;
    }
    g_string_truncate(m, c->plen);
    g_string_append_len(m, d, (gssize)i);
    const struct ignore_rule *rule = ignore_verdict(c, f, m->str, m->len, true, NULL);
    if (rule && !rule->negated) {
      ok = false;
      break;
    }
    if (i == len)
      break;
    char *sub = g_strndup(d, i);
    int fd = openat(root_fd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
      *same = way_dir(run, r, fd, sub, i, &has) && *same;
      next = ignore_frame_enter(c, f, fd, sub, c->plen + i + 1, has);
      ignore_frame_unref(f);
      f = next;
      close(fd);
    }
    g_free(sub);
  }
  g_string_free(m, TRUE);
  if (!ok) {
    ignore_frame_unref(f);
    return false;
  }
  *frame = f;
  return true;
}

/* Bytewise order of the start directories' subtrees. */
static int
compare_tops(const void *pa, const void *pb)
{
  const struct top *a = *(struct top *const *)pa, *b = *(struct top *const *)pb;
  if (a->root != b->root)
    return a->root < b->root ? -1 : 1;
  return strcmp(a->key, b->key);
}

static bool
walk(trawl_walker *w, trawl_entry_fn fn, void *data, bool sorted, GError **error)
{
  g_ptr_array_set_size(w->problems, 0);
  memset(&w->stats, 0, sizeof w->stats);
  if (w->roots->len == 0)
    trawl_walker_add_root(w, ".");

  struct run run = {.w = w, .fn = fn, .data = data, .sorted = sorted};
  run.root_fds = g_new0(int, w->roots->len);
  run.root_devs = g_new0(dev_t, w->roots->len);
  for (guint r = 0; r < w->roots->len; r++) {
    const char *root = w->roots->pdata[r];
    int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
      g_set_error(error, TRAWL_WALK_ERROR, TRAWL_WALK_ERROR_ROOT, "%s: %s", root,
                  g_strerror(errno));
      for (guint k = 0; k < r; k++)
        close(run.root_fds[k]);
      if (fd >= 0)
        close(fd);
      g_free(run.root_fds);
      g_free(run.root_devs);
      return false;
    }
    run.root_fds[r] = fd;
    run.root_devs[r] = st.st_dev;
  }

  /* Shared descriptors may use half of what is left; the rest is for the
   * directories being read and the caller. */
  struct rlimit lim;
  rlim_t soft = getrlimit(RLIMIT_NOFILE, &lim) == 0 ? lim.rlim_cur : 256;
  if (soft == RLIM_INFINITY || soft > 8192)
    soft = 8192;
  run.fd_budget = (gint)(soft / 2 > 16 ? soft / 2 - 8 : 4);

  unsigned threads = w->opt.threads ? w->opt.threads : g_get_num_processors();
  run.n_workers = MAX(threads, 1u);
  run.workers = g_new0(struct worker, run.n_workers);
  pthread_mutex_init(&run.idle_lock, NULL);
  pthread_condattr_t cattr;
  pthread_condattr_init(&cattr);
  pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
  pthread_cond_init(&run.idle_cond, &cattr);
  pthread_condattr_destroy(&cattr);
  pthread_mutex_init(&run.problem_lock, NULL);
  /* Ignore files: per root, its work tree and the files above it. */
  G_STATIC_ASSERT((int)TRAWL_IGNORE_VCS == (int)IGNORE_VCS &&
                  (int)TRAWL_IGNORE_DOT == (int)IGNORE_DOT &&
                  (int)TRAWL_IGNORE_NO_REQUIRE_GIT == (int)IGNORE_NO_REQUIRE_GIT);
  struct igprob *probs = NULL;
  if (w->opt.ignore || w->ignore_files->len) {
    run.ig = g_new0(struct ignore_ctx, w->roots->len);
    probs = g_new0(struct igprob, w->roots->len);
    for (guint r = 0; r < w->roots->len; r++) {
      probs[r].run = &run;
      probs[r].root = r;
      ignore_ctx_init(&run.ig[r], w->opt.ignore, run.root_fds[r], w->roots->pdata[r],
                      w->ignore_files->len ? w->ignore_files : NULL, ignore_problem, &probs[r]);
    }
  }

  run.loops = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  if (sorted) {
    run.memo_old = w->memo_old;
    run.memo_out = w->memo_out;
  }
  if (run.memo_out) {
    racy_from_now(&run.racy_from);
    g_hash_table_remove_all(run.memo_out->dirs);
    run.memo_out->racy = 0;
  }
  for (unsigned i = 0; i < run.n_workers; i++) {
    struct worker *wk = &run.workers[i];
    wk->run = &run;
    wk->index = i;
    pthread_mutex_init(&wk->lock, NULL);
    memset(&wk->deque, 0, sizeof wk->deque);
    listing_init(&wk->listing);
    wk->hits = g_array_new(FALSE, FALSE, sizeof(guint));
    wk->memos = g_ptr_array_new();
    if (sorted) {
      wk->kids = g_ptr_array_new();
    }
  }

  /* The start items, in order (sorted runs print them in this order). */
  qtab_init(&run.qt, w->queries, w->patset_min);
  GPtrArray *starts = g_ptr_array_new_with_free_func(g_free);
  GArray *start_masks = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  plan_starts(&run.qt, starts, start_masks);
  GPtrArray *tops = g_ptr_array_new();
  for (guint r = 0; r < w->roots->len; r++) {
    struct chain *root_chain = NULL;
    struct stat st;
    if (w->opt.follow && fstat(run.root_fds[r], &st) == 0)
      root_chain = chain_new(&st, NULL);
    for (guint i = 0; i < starts->len; i++) {
      const char *d = starts->pdata[i];
      struct ignore_frame *frame = NULL;
      bool same;
      if (!start_not_ignored(&run, r, d, &frame, &same))
        continue;
      struct item *it = g_new0(struct item, 1);
      it->path = g_strdup(d);
      it->len = strlen(d);
      it->root = r;
      it->depth = 0;
      for (const char *c = d; *c; c++)
        it->depth += *c == '/' || c == d;
      it->live = g_array_index(start_masks, uint64_t, i);
      it->start = it->len > 0;
      it->ig = frame;
      /* Rules from above changed: nothing below is replayed. */
      it->fresh = !same;
      if (it->start && root_chain) {
        g_atomic_int_inc(&root_chain->refs);
        it->chain = root_chain;
      }
      struct top *top = g_new0(struct top, 1);
      top->root = r;
      top->key = it->len ? g_strconcat(d, "/", NULL) : g_strdup("");
      top->item = it;
      if (sorted)
        it->slot = &top->node;
      g_ptr_array_add(tops, top);
    }
    chain_unref(root_chain);
  }
  g_ptr_array_free(starts, TRUE);
  g_array_free(start_masks, TRUE);
  /* The start directories are disjoint subtrees: their order is that of
   * their paths with a '/' after each. The first is queued last, on top. */
  g_ptr_array_sort(tops, compare_tops);
  for (guint i = tops->len; i-- > 0;) {
    struct top *top = tops->pdata[i];
    push(&run.workers[0], top->item);
    top->item = NULL;
  }
  run.tops = tops;
  run.frames = g_array_new(FALSE, FALSE, sizeof(struct frame));

  worker_main(&run.workers[0]);
  for (unsigned i = 1; i < run.n_workers; i++)
    if (run.workers[i].thread)
      g_thread_join(run.workers[i].thread);

  w->stats.threads_used = g_atomic_int_get(&run.started) ? run.n_workers : 1;
  for (unsigned i = 0; i < run.n_workers; i++) {
    struct worker *wk = &run.workers[i];
    w->stats.dirs_opened += wk->stats.dirs_opened;
    w->stats.dirs_pruned += wk->stats.dirs_pruned;
    w->stats.entries_seen += wk->stats.entries_seen;
    w->stats.results += wk->stats.results;
    w->stats.dirs_reused += wk->stats.dirs_reused;
    for (guint k = 0; k < wk->memos->len; k++) {
      if (run.memo_out)
        walk_memo_add(run.memo_out, wk->memos->pdata[k]);
      memo_dir_unref(wk->memos->pdata[k]);
    }
    g_ptr_array_free(wk->memos, TRUE);
    if (wk->kids) {
      g_free(wk->recs);
      g_ptr_array_free(wk->kids, TRUE);
      g_free(wk->sort_tmp);
    }
    buf_free(&wk->path);
    buf_free(&wk->scratch);
    listing_free(&wk->listing);
    g_array_free(wk->hits, TRUE);
    g_free(wk->deque.v);
    pthread_mutex_destroy(&wk->lock);
  }
  if (sorted)
    emit_ready(&run, true);
  for (guint i = 0; i < tops->len; i++) {
    struct top *top = tops->pdata[i];
    g_free(top->key);
    g_free(top);
  }
  g_ptr_array_free(tops, TRUE);
  g_array_free(run.frames, TRUE);
  buf_free(&run.out_path);
  for (guint r = 0; r < w->roots->len; r++)
    close(run.root_fds[r]);
  g_free(run.root_fds);
  g_free(run.root_devs);
  g_free(run.workers);
  pthread_mutex_destroy(&run.idle_lock);
  pthread_cond_destroy(&run.idle_cond);
  pthread_mutex_destroy(&run.problem_lock);
  g_hash_table_unref(run.loops);
  qtab_clear(&run.qt);
  if (run.ig) {
    for (guint r = 0; r < w->roots->len; r++)
      ignore_ctx_clear(&run.ig[r]);
    g_free(run.ig);
    g_free(probs);
  }
  return true;
}

bool
trawl_walker_run(trawl_walker *w, trawl_entry_fn fn, void *data, GError **error)
{
  g_return_val_if_fail(fn != NULL, false);
  return walk(w, fn, data, false, error);
}

bool
trawl_walker_run_sorted(trawl_walker *w, trawl_entry_fn fn, void *data, GError **error)
{
  g_return_val_if_fail(fn != NULL, false);
  return walk(w, fn, data, true, error);
}

static bool
collect_one(const trawl_entry *e, void *data)
{
  g_ptr_array_add(data, g_strndup(e->path, e->len));
  return true;
}

static int
compare_paths(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

GPtrArray *
trawl_walker_collect(trawl_walker *w, GError **error)
{
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  if (!walk(w, collect_one, out, true, error)) {
    g_ptr_array_unref(out);
    return NULL;
  }
  /* Each root's results come sorted; merged, they are sorted again. */
  if (w->roots->len > 1)
    g_ptr_array_sort(out, compare_paths);
  return out;
}

/* ---- explain ---------------------------------------------------------------- */

void
trawl_explanation_clear(trawl_explanation *e)
{
  g_free(e->directory);
  g_free(e->ignore_source);
  g_free(e->ignore_pattern);
  g_free(e->ignore_match);
  memset(e, 0, sizeof *e);
}

static void
explain_fail(trawl_explanation *e, TrawlExplainReason reason, const char *dir)
{
  if (e->reason != TRAWL_EXPLAIN_INCLUDED)
    return; /* the first failure stands */
  e->reason = reason;
  if (dir)
    e->directory = g_strdup(dir);
}

static void
explain_rule(trawl_explanation *e, const struct ignore_rule *r, const struct ignore_file *from,
             const char *match)
{
  e->ignore_source = g_strdup(from->source);
  e->ignore_line = r->line;
  e->ignore_pattern = g_strdup(r->shown);
  e->ignore_negated = r->negated;
  e->ignore_match = g_strdup(match);
}

bool
trawl_walker_explain(trawl_walker *w, const char *path, trawl_explanation *out, GError **error)
{
  memset(out, 0, sizeof *out);
  g_return_val_if_fail(!w->shared, false);
  const struct query *q = w->queries->pdata[0];
  if (w->roots->len == 0)
    trawl_walker_add_root(w, ".");
  const char *root = w->roots->pdata[0];
  int root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) {
    g_set_error(error, TRAWL_WALK_ERROR, TRAWL_WALK_ERROR_ROOT, "%s: %s", root, g_strerror(errno));
    return false;
  }
  const trawl_walk_options *o = &w->opt;
  /* The path as the walk would spell it: no "./", no empty components. */
  GString *norm = g_string_new(NULL);
  char **parts = g_strsplit(path, "/", -1);
  for (char **p = parts; *p; p++) {
    if (**p == '\0' || strcmp(*p, ".") == 0)
      continue;
    if (norm->len)
      g_string_append_c(norm, '/');
    g_string_append(norm, *p);
  }
  g_strfreev(parts);

  struct ignore_ctx igc;
  const bool use_ig = o->ignore || w->ignore_files->len;
  if (use_ig)
    ignore_ctx_init(&igc, o->ignore, root_fd, root, w->ignore_files->len ? w->ignore_files : NULL,
                    NULL, NULL);
  struct ignore_frame *frame = use_ig ? ignore_frame_ref(igc.above) : NULL;
  const bool vcs = use_ig && (o->ignore & TRAWL_IGNORE_VCS);
  GString *m = g_string_new(use_ig ? igc.prefix : "");
  const size_t plen = m->len;
  bool ignored_above = false;
  out->reason = TRAWL_EXPLAIN_INCLUDED;

  int depth = 0;
  size_t len = norm->len;
  for (size_t i = 0; i <= len; i++) {
    if (i > 0 && i < len && norm->str[i] != '/')
      continue;
    /* norm[0..i): the root (i == 0), a directory above the path, or the path. */
    const bool last = i == len;
    char *rel = g_strndup(norm->str, i);
    const char *slash = strrchr(rel, '/');
    const char *name = slash ? slash + 1 : rel;
    struct stat st;
    bool exists = i == 0 || fstatat(root_fd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
    bool is_dir = i == 0 || (exists && S_ISDIR(st.st_mode));
    if (i > 0) {
      depth++;
      if (last && !exists) {
        explain_fail(out, TRAWL_EXPLAIN_MISSING, NULL);
      } else if (last) {
        out->type = S_ISDIR(st.st_mode) ? TRAWL_ENTRY_DIR
                    : S_ISLNK(st.st_mode) ? TRAWL_ENTRY_SYMLINK : TRAWL_ENTRY_FILE;
      }
      if (!query_shows(q, name, strlen(name)))
        explain_fail(out, TRAWL_EXPLAIN_HIDDEN, last ? NULL : rel);
      if (vcs && strcmp(name, ".git") == 0)
        explain_fail(out, TRAWL_EXPLAIN_GIT_DIR, last ? NULL : rel);
      if (o->max_depth >= 0 && depth > o->max_depth)
        explain_fail(out, TRAWL_EXPLAIN_DEPTH, NULL);
      if (!last && exists && S_ISLNK(st.st_mode)) {
        struct stat target;
        if (!o->follow || fstatat(root_fd, rel, &target, 0) != 0 || !S_ISDIR(target.st_mode))
          explain_fail(out, TRAWL_EXPLAIN_LINK, rel);
        else
          is_dir = true;
      }
      if (!last) {
        const trawl_pattern *x = closing_exclude(q, rel, i, true);
        bool wanted = q->includes->len == 0;
        for (guint k = 0; k < q->includes->len && !wanted; k++)
          wanted = trawl_pattern_may_match_below(q->includes->pdata[k], rel, i);
        if (!wanted)
          explain_fail(out, TRAWL_EXPLAIN_PRUNED, rel);
        if (x) {
          if (out->reason == TRAWL_EXPLAIN_INCLUDED)
            out->exclude = x;
          explain_fail(out, TRAWL_EXPLAIN_EXCLUDED, rel);
        }
      }
      /* The ignore verdict, from the rules of the directories above. */
      if (use_ig && !ignored_above && exists) {
        g_string_truncate(m, plen);
        g_string_append(m, rel);
        const struct ignore_file *from = NULL;
        const struct ignore_rule *r = ignore_verdict(&igc, frame, m->str, m->len,
                                                     S_ISDIR(st.st_mode), &from);
        if (r && (!r->negated || last))
          explain_rule(out, r, from, rel);
        if (r && !r->negated) {
          ignored_above = true;
          explain_fail(out, TRAWL_EXPLAIN_IGNORED, last ? NULL : rel);
        }
      }
    }
    if (!last && use_ig && !ignored_above && is_dir) {
      int fd = i == 0 ? dup(root_fd) : openat(root_fd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd >= 0) {
        struct ignore_frame *next = ignore_frame_enter(&igc, frame, fd, rel,
                                                       plen + (i ? i + 1 : 0), ignore_probe(fd));
        ignore_frame_unref(frame);
        frame = next;
        close(fd);
      }
    }
    if (last && exists) {
      unsigned kind = out->type;
      bool wanted = (o->types & kind) ||
                    (kind == TRAWL_ENTRY_SYMLINK && (o->types & TRAWL_ENTRY_FILE));
      if (o->follow && kind == TRAWL_ENTRY_SYMLINK) {
        struct stat target;
        if (fstatat(root_fd, rel, &target, 0) == 0)
          wanted = o->types & (S_ISDIR(target.st_mode) ? TRAWL_ENTRY_DIR : TRAWL_ENTRY_FILE);
      }
      if (!wanted)
        explain_fail(out, TRAWL_EXPLAIN_TYPE, NULL);
      for (guint k = 0; k < q->includes->len && out->include == NULL; k++)
        if (trawl_pattern_match(q->includes->pdata[k], rel, i))
          out->include = q->includes->pdata[k];
      if (q->includes->len > 0 && out->include == NULL)
        explain_fail(out, TRAWL_EXPLAIN_NOT_INCLUDED, NULL);
      const trawl_pattern *x = closing_exclude(q, rel, i, false);
      if (x && out->exclude == NULL) {
        if (out->reason == TRAWL_EXPLAIN_INCLUDED)
          out->exclude = x;
        explain_fail(out, TRAWL_EXPLAIN_EXCLUDED, NULL);
      }
    }
    g_free(rel);
  }
  if (len == 0)
    explain_fail(out, TRAWL_EXPLAIN_NOT_INCLUDED, NULL); /* the root itself is never a result */
  out->selected = out->reason == TRAWL_EXPLAIN_INCLUDED;
  ignore_frame_unref(frame);
  if (use_ig)
    ignore_ctx_clear(&igc);
  g_string_free(m, TRUE);
  g_string_free(norm, TRUE);
  close(root_fd);
  return true;
}
