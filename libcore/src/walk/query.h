/* trawl — the queries of a walk as masks (private; the walker's files).
 *
 * A walk answers one query (a plain walker) or up to 64 (a shared walker,
 * plan.c); every directory item carries the set of queries that would have
 * opened it, every result the set it answers, as bits of a 64-bit mask. This
 * is where those sets are decided, each as a pure function of a path (or a
 * name, or a depth) and the queries' patterns and options: which queries
 * select a path as a result (select_mask), open a directory (open_mask),
 * see a hidden name (shown_mask), reach a depth (depth_masks), and where the
 * walks start (starts_plan). Nothing here touches the disk, so the walk and
 * `trawl explain` ask the same tables and cannot disagree. The per-entry
 * questions are inline: they run once per directory entry.
 */
#ifndef TRAWL_QUERY_H
#define TRAWL_QUERY_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <glib.h>

#include "../buf.h"
#include "../memo.h"
#include "trawl/patset.h"
#include "trawl/pattern.h"
#include "trawl/walk.h"

G_BEGIN_DECLS

/* Queries. A walk answers one or more queries: a plain walker has one (its
 * includes, excludes and options); a shared walker (trawl/plan.h) one per
 * query of its group. Every directory item carries the set of queries whose
 * own walk would have read it, and every result the set it answers, as bits
 * of a 64-bit mask: so each query gets exactly its own walk's results while
 * each directory is read once, and each entry is looked up once in a pattern
 * set built over every query's patterns. */
struct query {
  GPtrArray *includes;  /* const TrawlPattern * (borrowed) */
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
  GPtrArray *pats;      /* const TrawlPattern * */
  guint8 *owner;        /* the query of each */
  struct span *suffix;  /* the literal suffix each match ends with (len 0: none, or case-folded) */
  bool *by_suffix;      /* the suffix alone decides (trawl_pattern_suffix_decides) */
  struct tail *tail;    /* each suffix as the last word of a path ending with it */
  uint64_t *by_last;    /* shared lists of 2 to 64 without a set: per last byte of a
                           path, the patterns whose suffix allows it (256 masks) */
  TrawlPatset *set;    /* NULL when there are few */
  const TrawlPattern *one; /* the only pattern, if there is one */
  uint64_t all;         /* the queries with a pattern here */
  bool typed;           /* an include whose answer depends on the entry's type
                           (trawl_pattern_typed: bazel's "a/ **") */
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
  uint64_t exc_bazel;     /* the queries with a bazel exclude (closing_mask) */
  uint64_t rare;          /* select_mask's rare work: exc.all, every query when an
                             include is typed */
  struct patlist inc, exc;
  /* Start directories below another query's: path -> uint64_t * (the
   * queries starting there), and the directories on the way to them. NULL
   * when there are none. */
  GHashTable *nested;
  GHashTable *transit;
};

/* Make T, the tables of QUERIES (struct query *, borrowed for T's life):
 * lists of SET_MIN patterns or more go through pattern sets and a prune
 * index. qtab_clear() frees what qtab_init() made. */
void qtab_init(struct qtab *t, const GPtrArray *queries, unsigned set_min);
void qtab_clear(struct qtab *t);

/* The start directories of T's queries: in TOPS (char *, to free) those
 * below no other, with the queries starting there in MASKS (uint64_t); the
 * others, below another query's, in t->nested with the directories on the
 * way to them in t->transit. */
void starts_plan(struct qtab *t, GPtrArray *tops, GArray *masks);

/* Of the queries in WANT, those whose own walk would open directory PATH.
 * HITS and SCRATCH are the caller's working space. */
uint64_t open_mask(const struct qtab *t, const char *path, size_t len, uint64_t want, GArray *hits,
                   struct buf *scratch);

/* One query's questions (the walk's masks ask them; `trawl explain` asks
 * them of its one query): does include or exclude list PATS name hidden
 * entry NAME; which exclude of Q matches PATH (or, for a directory, covers
 * everything below it), or NULL; may Q's includes match below directory
 * PATH (through its prune index while a run has made one). */
bool names_hidden(const GPtrArray *pats, const char *name, size_t len);
const TrawlPattern *closing_exclude(const struct query *q, const char *path, size_t len, bool dir);
bool query_wants(const struct query *q, const char *path, size_t len);

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
static inline uint64_t
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
 * list of one query's patterns (a plain walk) stops at the first match.
 * Inline: it runs per entry. */
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
  const TrawlPattern *const *pats = (const TrawlPattern *const *)l->pats->pdata;
  for (guint i = 0; i < l->pats->len; i++)
    if (trawl_pattern_match(pats[i], path, len))
      return want;
  return 0;
}

/* patlist_match() of an entry that is not a directory, each pattern asked
 * with the type (trawl_pattern_match_entry). */
uint64_t patlist_match_file(const struct patlist *l, const char *path, size_t len, uint64_t want,
                            GArray *hits);

/* SEL (of include_mask) for an entry that is not a directory, when an
 * include is typed (bazel's "a/ **"): the queries with includes asked again
 * with the type. A typed answer is never a match the untyped one is not, so
 * only the hits are asked. Only the includes are typed: glob() matches its
 * excludes against the result paths, so an exclude "a/ **" removes a file
 * "a" too (Bazel 4.2.3). */
static inline uint64_t
retype_file(const struct qtab *t, const char *path, size_t len, uint64_t sel, GArray *hits)
{
  const uint64_t inc = sel & t->inc.all;
  return inc ? (sel & ~t->inc.all) | patlist_match_file(&t->inc, path, len, inc, hits) : sel;
}

/* Of the queries in WANT, those whose includes select PATH (or that have
 * none); DIR: the entry is a directory. */
static inline uint64_t
include_mask(const struct qtab *t, const char *path, size_t len, uint64_t want, GArray *hits,
             bool dir)
{
  const uint64_t sel = (want & ~t->inc.all) | patlist_match(&t->inc, path, len, want, hits);
  return !dir && t->inc.typed ? retype_file(t, path, len, sel, hits) : sel;
}

/* Of the queries in WANT, those PATH is a result of (before its type and
 * the ignore rules): include_mask(), less those an exclude matches. The
 * rare work, excludes and typed includes, sits behind one test (t->rare):
 * the walk pays nothing per entry for the typed includes it does not have. */
static inline uint64_t
select_mask(const struct qtab *t, const char *path, size_t len, uint64_t want, GArray *hits,
            bool dir)
{
  uint64_t sel = (want & ~t->inc.all) | patlist_match(&t->inc, path, len, want, hits);
  if (sel & t->rare) {
    if (!dir && t->inc.typed)
      sel = retype_file(t, path, len, sel, hits);
    if (sel & t->exc.all)
      sel &= ~patlist_match(&t->exc, path, len, sel, hits);
  }
  return sel;
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

G_END_DECLS

#endif /* TRAWL_QUERY_H */
