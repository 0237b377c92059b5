/* trawl — a walk's queries as masks: pattern lists, the prune index, start
 * directories (query.h).
 *
 * Each query's includes and excludes are gathered into two pattern lists
 * over every query of the walk, so that an entry is matched once for all of
 * them: through a pattern set when a list is long, otherwise pattern by
 * pattern, skipping those whose literal suffix the path lacks. Whether a
 * directory is opened asks each live query whether one of its includes may
 * match below it — through a prune index of the includes' literal start
 * directories when there are many (a match of "src/a/x.c" lies below
 * "src/a": no directory but the root's way to it and its subtree need ask
 * that include) — and whether one of its excludes closes it. The start
 * directories are the includes' literal prefixes, none below another.
 */
#include <string.h>

#include "../pattern-private.h"
#include "query.h"

/* Does include or exclude list PATS name hidden entry NAME? */
bool
names_hidden(const GPtrArray *pats, const char *name, size_t len)
{
  for (guint i = 0; i < pats->len; i++)
    if (trawl_pattern_names_hidden(pats->pdata[i], name, len))
      return true;
  return false;
}

/* Does exclude X close directory PATH: match it (`-x` leaves a directory it
 * matches closed) or cover everything below it? A bazel exclude only by
 * covering: glob() matches its excludes against the result paths, so "*x*"
 * removes a directory "dx" but not "dx/in.c" (Bazel 4.2.3). */
static bool
closes(const TrawlPattern *x, const char *path, size_t len)
{
  return (trawl_pattern_dialect(x) != TRAWL_DIALECT_BAZEL && trawl_pattern_match(x, path, len)) ||
         trawl_pattern_covers_below(x, path, len);
}

/* The exclude of Q that matches PATH or (for a directory) closes it, or
 * NULL. */
const TrawlPattern *
closing_exclude(const struct query *q, const char *path, size_t len, bool dir)
{
  for (guint i = 0; i < q->excludes->len; i++) {
    const TrawlPattern *x = q->excludes->pdata[i];
    if (dir ? closes(x, path, len) : trawl_pattern_match(x, path, len))
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
    const GPtrArray *roots = trawl_pattern_roots(p);
    bool anywhere = false;
    for (guint k = 0; k < roots->len; k++) {
      const char *r = roots->pdata[k];
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
bool
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
      l->typed |= includes && trawl_pattern_typed(pats->pdata[k]);
    }
    if (pats->len)
      l->all |= QBIT(i);
  }
  l->owner = g_byte_array_free(owner, FALSE);
  /* Several queries' short lists are tried in turn; a pattern whose literal
   * suffix the path lacks is not tried at all, which costs less than a
   * pattern set for a few patterns (docs/adr/0005-no-calls-per-entry.md). */
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
    l->set = trawl_patset_new((const TrawlPattern *const *)l->pats->pdata, l->pats->len);
}

uint64_t
patlist_match_file(const struct patlist *l, const char *path, size_t len, uint64_t want,
                   GArray *hits)
{
  uint64_t got = 0;
  if (l->one) /* it is the one that matched */
    return trawl_pattern_file_ok(l->one, path, len) ? want : 0;
  if (l->set) {
    g_array_set_size(hits, 0);
    trawl_patset_matches(l->set, path, len, hits);
    for (guint i = 0; i < hits->len && got != want; i++) {
      const guint k = g_array_index(hits, guint, i);
      const uint64_t b = QBIT(l->owner[k]);
      if ((want & ~got & b) && trawl_pattern_file_ok(l->pats->pdata[k], path, len))
        got |= b;
    }
    return got;
  }
  for (guint i = 0; i < l->pats->len && got != want; i++) {
    const uint64_t b = QBIT(l->owner[i]);
    if ((want & ~got & b) &&
        trawl_pattern_match_entry(l->pats->pdata[i], path, len, TRAWL_ENTRY_FILE))
      got |= b;
  }
  return got;
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


void
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
    for (guint k = 0; k < q->excludes->len; k++)
      if (trawl_pattern_dialect(q->excludes->pdata[k]) == TRAWL_DIALECT_BAZEL)
        t->exc_bazel |= QBIT(i);
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
  t->rare = t->exc.all | (t->inc.typed ? t->every : 0);
}

void
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
  /* A query with a bazel exclude asks each of its own (closes()). */
  for (uint64_t m = want & t->exc_bazel; m; m &= m - 1) {
    const unsigned i = (unsigned)__builtin_ctzll(m);
    if (closing_exclude(t->q[i], path, len, true))
      got |= QBIT(i);
  }
  want &= ~t->exc_bazel;
  if (want == 0)
    return got;
  if (l->set == NULL) {
    for (guint i = 0; i < l->pats->len; i++) {
      uint64_t b = QBIT(l->owner[i]);
      const TrawlPattern *x = l->pats->pdata[i];
      if ((want & ~got & b) && (trawl_pattern_match(x, path, len) ||
                                trawl_pattern_covers_below(x, path, len)))
        got |= b;
    }
    return got;
  }
  got |= patlist_match(l, path, len, want, hits);
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
uint64_t
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
    const GPtrArray *roots = trawl_pattern_roots(q->includes->pdata[i]);
    for (guint k = 0; k < roots->len; k++)
      g_ptr_array_add(dirs, roots->pdata[k]);
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
void
starts_plan(struct qtab *qt, GPtrArray *tops, GArray *masks)
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
