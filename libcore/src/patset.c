/* trawl — pattern sets: many patterns, one keyed index.
 *
 * The idea is a screen, not a matcher: every pattern is filed under keys that
 * any path it matches must carry, a query computes the keys the path carries
 * and runs trawl_pattern_match() on the patterns filed under them, and
 * nothing else decides an answer. So the set is exact as long as the filing
 * is sound: if a pattern matches a path, one of the pattern's keys is among
 * the path's. A pattern with braces is filed once per alternative (the path
 * matches some alternative, and carries that alternative's key); a pattern
 * with an alternative that yields no key is not filed at all but run for
 * every path (the "always" list).
 *
 * Keys, from the compiled IR (pattern-private.h), most selective first:
 *   exact     the alternative is all literal: the whole path (hash);
 *   basename  its last component is a literal: the path's last component;
 *   prefix    the literal bytes every match starts with (hashed at each
 *             length some key has, on one forward pass);
 *   suffix /  the literal bytes every match ends with (one backward pass);
 *   extension a suffix that starts with '.' and has no '/' is probed only
 *             where the path's last component has a '.';
 *   screen    the longest literal the alternative requires anywhere: all of
 *             them go into one Aho–Corasick automaton (a dense DFA over byte
 *             classes), run once over the path.
 * Prefix and suffix keys win over a screen literal of up to twice their
 * length: an anchored probe is cheaper and rarer to hit. Case-folding
 * patterns are filed, folded, in a second index queried with folded bytes.
 *
 * A probe that no key answers is the common case, so each table refuses it
 * before any lookup: by the lengths its keys have, (prefix and suffix) the
 * byte its keys of that length end with, and a filter of two bits a key on
 * the keys' hashes. A query still probes once per key length the path
 * reaches; these make a refused probe a few instructions and a branch that
 * goes the same way nearly every time.
 */
#include <stdlib.h>

#include "trawl/patset.h"
#include "pattern-private.h"

/* The hash tables, one per key class (the screen is apart). */
enum table_kind { T_EXACT, T_BASENAME, T_EXTENSION, T_PREFIX, T_SUFFIX, N_TABLES };
#define K_SCREEN N_TABLES

/* Prefix, suffix and extension keys are cut to this many bytes (a shorter
 * prefix is still a prefix), so their lengths fit a 256-bit map. */
#define KEY_MAX_LEN 255
/* Each key table has a filter (see filter_bits) of at least this many bits
 * per key, in at least FILTER_MIN_WORDS and at most FILTER_MAX_WORDS
 * 64-bit words. */
#define FILTER_BITS_PER_KEY 16
#define FILTER_MIN_WORDS 4
#define FILTER_MAX_WORDS (UINT32_C(1) << 20) /* the hash bits that pick a word */
/* Screen literals are cut to this many bytes: any piece of a required
 * literal is required, and short literals keep the automaton small. */
#define SCREEN_MAX_LEN 32
/* Largest screen automaton, in transition cells; a larger one is not built
 * and its patterns go to the always list. */
#define SCREEN_MAX_CELLS (UINT32_C(16) << 20) /* also keeps row offsets < 2^31 */
/* Screen literals a query remembers having run (later ones may run twice). */
#define SCREEN_SEEN 32

#define NONE UINT32_MAX
#define STATE_OUT (UINT32_C(1) << 31) /* transition flag: the target has output */

static const unsigned table_key_flag[N_TABLES + 1] = {
  TRAWL_PATSET_KEY_EXACT, TRAWL_PATSET_KEY_BASENAME, TRAWL_PATSET_KEY_EXTENSION,
  TRAWL_PATSET_KEY_PREFIX, TRAWL_PATSET_KEY_SUFFIX, TRAWL_PATSET_KEY_SCREEN,
};
/* Exact, basename and prefix keys are hashed first byte first; extension and
 * suffix keys last byte first. */
static const bool table_backward[N_TABLES] = {false, false, true, false, true};
/* Prefix and suffix tables are probed at every length some key has, so they
 * keep the map of the bytes keys end with (extension keys all end with '.'). */
static const bool table_ends[N_TABLES] = {false, false, false, true, true};

/* A key and the patterns filed under it: ids[first .. first + count). */
struct entry {
  uint32_t hash;
  uint32_t key_off, key_len; /* in keys */
  uint32_t first, count;
};

struct table {
  uint32_t *slots; /* entry index + 1; 0 is empty */
  uint32_t mask;
  struct entry *entries;
  uint32_t n_entries;
  uint32_t max_len;
  uint64_t lengths[4]; /* bit L: a key of L bytes (L <= KEY_MAX_LEN) */
  uint64_t *ends;      /* prefix, suffix: bit L % 64 of ends[c]: a key of L
                        * bytes whose last byte hashed is c; else NULL */
  uint64_t *filter;    /* see filter_bits() */
  uint32_t filter_mask; /* words in filter, less 1 */
};

/* Aho–Corasick as a complete DFA: delta[state * n_classes + class]. */
struct screen {
  uint32_t *delta;  /* target state * n_classes, | STATE_OUT when it has output */
  uint32_t *lit;    /* per state: the entry of the literal ending here, or NONE */
  uint32_t *dict;   /* per state: nearest fail-chain state with a literal, or NONE */
  struct entry *entries;
  uint32_t n_entries, n_states, n_classes;
  uint8_t classes[256];
};

struct index {
  bool used;
  bool forward;  /* some exact or prefix key: query_forward() has work */
  bool backward; /* some basename, extension or suffix key: query_backward() */
  struct table tables[N_TABLES];
  struct screen screen;
};

struct TrawlPatset {
  const TrawlPattern **patterns;
  size_t n;
  unsigned *keys_of; /* per pattern: TrawlPatsetKey flags */
  uint32_t n_always; /* ids[0 .. n_always): the always list */
  uint32_t *ids;
  char *keys;
  struct index index[2]; /* [0] case-sensitive patterns, [1] folding ones */
};

/* ---- hashing ------------------------------------------------------------ */

#define HASH_SEED UINT64_C(0xcbf29ce484222325)

static inline uint64_t
hash_step(uint64_t h, uint8_t c)
{
  return (h ^ c) * UINT64_C(0x100000001b3); /* FNV-1a, one byte */
}

/* The mixed hash: its high half is the key's hash (it picks the slot and is
 * kept in the entry), its low half the filter's bits. */
static inline uint64_t
hash_final(uint64_t h)
{
  h ^= h >> 31;
  h *= UINT64_C(0xbf58476d1ce4e5b9);
  h ^= h >> 29;
  return h;
}

static inline uint8_t
byte_at(const char *s, size_t i, bool fold)
{
  uint8_t c = (uint8_t)s[i];
  return fold ? trawl_fold(c) : c;
}

static uint64_t
hash_key(const char *key, size_t len, bool backward)
{
  uint64_t h = HASH_SEED;
  for (size_t i = 0; i < len; i++)
    h = hash_step(h, (uint8_t)key[backward ? len - 1 - i : i]);
  return hash_final(h);
}

/* The filter in front of a key table: two bits of one 64-bit word, all
 * three picked by the low half of a key's mixed hash, are set for every key.
 * A probe whose two bits are not both set has no key, for one load. With
 * 16-32 bits a key, a probe of an absent key passes 1 time in 60-190 (one
 * bit a key: 1 in 16-32). On the benchmark's paths two bits took the lookups
 * that found nothing, for 1,000 `**` "/FileN.txt" basenames, from 7.7% of
 * the queries to 1.3%. */
static inline uint64_t
filter_bits(uint64_t m)
{
  return (UINT64_C(1) << (m & 63)) | (UINT64_C(1) << ((m >> 6) & 63));
}

static inline uint32_t
filter_word(const struct table *t, uint64_t m)
{
  return (uint32_t)(m >> 12) & t->filter_mask;
}

/* ---- queries ------------------------------------------------------------ */

/* What a query does with the patterns it finds. */
struct sink {
  enum { SINK_ANY, SINK_ALL, SINK_COUNT } mode;
  GArray *out;
  size_t count;
};

/* Run patterns ids[FIRST .. FIRST + COUNT) against PATH; true when the query is decided. */
static bool
run_entry(const TrawlPatset *set, uint32_t first, uint32_t count,
          const char *path, size_t len, struct sink *k)
{
  if (count == 0)
    return false;
  const uint32_t *ids = set->ids + first;
  if (k->mode == SINK_COUNT) {
    k->count += count;
    return false;
  }
  for (uint32_t i = 0; i < count; i++) {
    if (!trawl_pattern_match(set->patterns[ids[i]], path, len))
      continue;
    if (k->mode == SINK_ANY)
      return true;
    guint id = ids[i];
    g_array_append_val(k->out, id);
  }
  return false;
}

static inline bool
has_length(const struct table *t, size_t len)
{
  return len <= KEY_MAX_LEN && ((t->lengths[len >> 6] >> (len & 63)) & 1);
}

/* Could prefix or suffix table T have a key of LEN bytes whose last byte
 * hashed is C? Exact for the length; for the byte, a filter that needs no
 * hash: `dirN/` keys end with '/', which a path seldom has there. It also
 * stops the path heads that pass the hash filter by chance, and they matter
 * more than the filter's rate says: the paths of a tree share a few heads,
 * and one that passes costs a lookup on every path under it. (With the hash
 * filter alone, "third" passed for 1,000 `dirN/` keys and "infra/pk" for
 * 1,000 `prefixN` keys: a lookup for 11% of the queries; with this map, 0%
 * and 0.1%.) */
static inline bool
may_end(const struct table *t, size_t len, uint8_t c)
{
  return has_length(t, len) && ((t->ends[c] >> (len & 63)) & 1);
}

static bool
key_equal(const char *key, const char *s, size_t len, bool fold)
{
  for (size_t i = 0; i < len; i++)
    if ((uint8_t)key[i] != byte_at(s, i, fold))
      return false;
  return true;
}

/* Find the key of hash HV, the LEN bytes at S, in T and run what is filed. */
static bool
lookup(const TrawlPatset *set, const struct table *t, uint32_t hv, const char *s,
       size_t len, bool fold, const char *path, size_t path_len, struct sink *k)
{
  for (uint32_t i = hv & t->mask;; i = (i + 1) & t->mask) {
    const uint32_t e = t->slots[i];
    if (e == 0)
      return false;
    const struct entry *en = &t->entries[e - 1];
    if (en->hash == hv && en->key_len == len &&
        key_equal(set->keys + en->key_off, s, len, fold))
      return run_entry(set, en->first, en->count, path, path_len, k);
  }
}

/* Look the LEN bytes at S (running hash H) up in T and run what is filed.
 * The filter answers most probes, the ones no key could answer, with one
 * load and a branch that is almost always taken the same way. */
static inline bool
probe(const TrawlPatset *set, const struct table *t, uint64_t h, const char *s,
      size_t len, bool fold, const char *path, size_t path_len, struct sink *k)
{
  const uint64_t m = hash_final(h);
  const uint64_t bits = filter_bits(m);
  if ((t->filter[filter_word(t, m)] & bits) != bits)
    return false;
  return lookup(set, t, (uint32_t)(m >> 32), s, len, fold, path, path_len, k);
}

/* Exact and prefix keys: one pass from the first byte. */
static inline bool
query_forward(const TrawlPatset *set, const struct index *x, const char *path,
              size_t len, struct sink *k, const bool fold)
{
  const struct table *pre = &x->tables[T_PREFIX], *exact = &x->tables[T_EXACT];
  const size_t stop = exact->n_entries ? len : MIN(len, (size_t)pre->max_len);
  uint64_t h = HASH_SEED;
  for (size_t i = 0; i < stop; i++) {
    const uint8_t c = byte_at(path, i, fold);
    h = hash_step(h, c);
    if (may_end(pre, i + 1, c) && probe(set, pre, h, path, i + 1, fold, path, len, k))
      return true;
  }
  return exact->n_entries && probe(set, exact, h, path, len, fold, path, len, k);
}

/* Basename, extension and suffix keys: the last component is hashed once
 * for the basename table, then one pass from the last byte hashes as far as
 * the longest suffix key, or the longest extension key within the last
 * component, probing extension keys at its dots only. */
static inline bool
query_backward(const TrawlPatset *set, const struct index *x, const char *path,
               size_t len, struct sink *k, const bool fold)
{
  const struct table *base = &x->tables[T_BASENAME], *ext = &x->tables[T_EXTENSION],
                     *suf = &x->tables[T_SUFFIX];
  size_t base_at = len; /* where the last component starts */
  if (base->n_entries || ext->n_entries) {
    while (base_at > 0 && path[base_at - 1] != '/')
      base_at--;
  }
  if (base->n_entries) {
    uint64_t h = HASH_SEED;
    for (size_t i = base_at; i < len; i++)
      h = hash_step(h, byte_at(path, i, fold));
    if (probe(set, base, h, path + base_at, len - base_at, fold, path, len, k))
      return true;
  }
  const size_t ext_max = ext->n_entries ? MIN(len - base_at, (size_t)ext->max_len) : 0;
  const size_t stop = MAX(ext_max, MIN(len, (size_t)suf->max_len));
  uint64_t h = HASH_SEED;
  for (size_t n = 1; n <= stop; n++) {
    const char *at = path + len - n;
    const uint8_t c = byte_at(at, 0, fold);
    h = hash_step(h, c);
    if (c == '.' && n <= ext_max && has_length(ext, n) &&
        probe(set, ext, h, at, n, fold, path, len, k))
      return true;
    if (may_end(suf, n, c) && probe(set, suf, h, at, n, fold, path, len, k))
      return true;
  }
  return false;
}

/* Interior literals: one pass of the automaton. */
static inline bool
query_screen(const TrawlPatset *set, const struct index *x, const char *path,
             size_t len, struct sink *k, const bool fold)
{
  const struct screen *sc = &x->screen;
  uint32_t seen[SCREEN_SEEN];
  unsigned n_seen = 0;
  uint32_t st = 0;
  for (size_t i = 0; i < len; i++) {
    st = sc->delta[(st & ~STATE_OUT) + sc->classes[byte_at(path, i, fold)]];
    if (!(st & STATE_OUT))
      continue;
    uint32_t t = (st & ~STATE_OUT) / sc->n_classes;
    if (sc->lit[t] == NONE)
      t = sc->dict[t];
    for (; t != NONE; t = sc->dict[t]) {
      const uint32_t e = sc->lit[t];
      bool again = false;
      for (unsigned j = 0; j < n_seen && !again; j++)
        again = seen[j] == e;
      if (again)
        continue;
      if (n_seen < SCREEN_SEEN)
        seen[n_seen++] = e;
      const struct entry *en = &sc->entries[e];
      if (run_entry(set, en->first, en->count, path, len, k))
        return true;
    }
  }
  return false;
}

static bool
query(const TrawlPatset *set, const char *path, size_t len, struct sink *k)
{
  g_return_val_if_fail(set != NULL, false);
  g_return_val_if_fail(path != NULL || len == 0, false);
  if (run_entry(set, 0, set->n_always, path, len, k))
    return true;
  /* FOLD is a constant in each call: the byte loops are compiled twice. A
   * pass with nothing to probe is not called: its entry and exit alone
   * would cost more than the probe. */
  const struct index *x = &set->index[0];
  if (x->used && ((x->forward && query_forward(set, x, path, len, k, false)) ||
                  (x->backward && query_backward(set, x, path, len, k, false)) ||
                  (x->screen.n_entries && query_screen(set, x, path, len, k, false))))
    return true;
  x = &set->index[1];
  return x->used && ((x->forward && query_forward(set, x, path, len, k, true)) ||
                     (x->backward && query_backward(set, x, path, len, k, true)) ||
                     (x->screen.n_entries && query_screen(set, x, path, len, k, true)));
}

bool
trawl_patset_any(const TrawlPatset *set, const char *path, size_t len)
{
  struct sink k = {.mode = SINK_ANY};
  return query(set, path, len, &k);
}

static int
compare_guint(const void *a, const void *b)
{
  guint x = *(const guint *)a, y = *(const guint *)b;
  return (x > y) - (x < y);
}

size_t
trawl_patset_matches(const TrawlPatset *set, const char *path, size_t len,
                     GArray *out)
{
  g_return_val_if_fail(out != NULL && g_array_get_element_size(out) == sizeof(guint), 0);
  const guint start = out->len;
  struct sink k = {.mode = SINK_ALL, .out = out};
  query(set, path, len, &k);
  /* Keys are found in no useful order and a pattern may be found twice. */
  const size_t n = out->len - start;
  if (n < 2)
    return n;
  guint *v = &g_array_index(out, guint, start);
  qsort(v, n, sizeof(guint), compare_guint);
  size_t w = 1;
  for (size_t r = 1; r < n; r++)
    if (v[r] != v[w - 1])
      v[w++] = v[r];
  g_array_set_size(out, start + (guint)w);
  return w;
}

size_t
trawl_patset_candidates(const TrawlPatset *set, const char *path, size_t len)
{
  struct sink k = {.mode = SINK_COUNT};
  query(set, path, len, &k);
  return k.count;
}

size_t
trawl_patset_size(const TrawlPatset *set)
{
  g_return_val_if_fail(set != NULL, 0);
  return set->n;
}

unsigned
trawl_patset_pattern_keys(const TrawlPatset *set, size_t index)
{
  g_return_val_if_fail(set != NULL && index < set->n, 0);
  return set->keys_of[index];
}

/* ---- choosing keys ------------------------------------------------------ */

/* A key of one alternative: KIND (a table or K_SCREEN), bytes in the pool. */
struct pending {
  uint32_t pattern;
  uint8_t fold;
  uint8_t kind;
  uint32_t off, len;
};

struct builder {
  GString *pool;    /* key bytes, folded for folding patterns */
  GArray *pending;  /* struct pending */
};

static void
add_key(struct builder *b, uint32_t pattern, bool fold, int kind,
        const char *s1, size_t n1, const char *s2, size_t n2)
{
  struct pending k = {.pattern = pattern, .fold = fold, .kind = (uint8_t)kind,
                      .off = (uint32_t)b->pool->len, .len = (uint32_t)(n1 + n2)};
  g_string_append_len(b->pool, s1, (gssize)n1);
  g_string_append_len(b->pool, s2, (gssize)n2);
  if (fold)
    for (size_t i = k.off; i < b->pool->len; i++)
      b->pool->str[i] = (char)trawl_fold((uint8_t)b->pool->str[i]);
  g_array_append_val(b->pending, k);
}

/* The longest literal every match of alternative A contains, cut to
 * SCREEN_MAX_LEN: a literal component, a literal run of a wildcard
 * component, or git's cut. */
static const char *
required_literal(const TrawlPattern *p, const struct alt *a, size_t *len)
{
  const char *best = p->strip;
  size_t best_len = p->strip_len;
  for (uint32_t i = 0; i < a->comp_count; i++) {
    const struct comp *c = &p->comps[a->comp_first + i];
    if (c->kind == COMP_LITERAL && c->lit_len > best_len) {
      best = p->lits + c->lit_off;
      best_len = c->lit_len;
    } else if (c->kind == COMP_WILD) {
      for (uint32_t j = 0; j < c->op_count; j++) {
        const struct op *o = &p->ops[c->op_first + j];
        if (o->kind == OP_LIT && o->len > best_len) {
          best = p->lits + o->arg;
          best_len = o->len;
        }
      }
    }
  }
  *len = MIN(best_len, (size_t)SCREEN_MAX_LEN);
  return best;
}

/* File alternative A of pattern ID under one key; false if it has none. */
static bool
key_alternative(struct builder *b, uint32_t id, const TrawlPattern *p,
                const struct alt *a)
{
  const bool fold = p->icase;
  const char *strip = p->strip ? p->strip : "";
  const size_t sl = p->strip_len;
  const char *alt_prefix = p->lits + a->prefix_off;

  if (a->strategy == STRAT_EXACT) {
    add_key(b, id, fold, T_EXACT, strip, sl, alt_prefix, a->prefix_len);
    return true;
  }
  const uint32_t n = a->comp_count;
  const struct comp *last = n ? &p->comps[a->comp_first + n - 1] : NULL;
  /* With git's cut the last component may be glued to the cut bytes ("ab**"
   * "/x" takes "abx"): it is not the path's last component by itself. */
  if (last && last->kind == COMP_LITERAL && sl == 0) {
    add_key(b, id, fold, T_BASENAME, p->lits + last->lit_off, last->lit_len, "", 0);
    return true;
  }

  /* Prefix: git's cut, then the alternative's own prefix. */
  size_t pre_len = MIN(sl + a->prefix_len, (size_t)KEY_MAX_LEN);
  size_t pre_cut = MIN(sl, pre_len);
  size_t suf_len = MIN((size_t)a->suffix_len, (size_t)KEY_MAX_LEN);
  const char *suf = p->lits + a->suffix_off + a->suffix_len - suf_len;
  size_t lit_len;
  const char *lit = required_literal(p, a, &lit_len);

  if (pre_len == 0 && suf_len == 0 && lit_len == 0)
    return false;
  if (2 * suf_len >= 2 * pre_len && 2 * suf_len >= lit_len) {
    bool ext = suf[0] == '.' && memchr(suf, '/', suf_len) == NULL;
    add_key(b, id, fold, ext ? T_EXTENSION : T_SUFFIX, suf, suf_len, "", 0);
  } else if (2 * pre_len >= lit_len) {
    add_key(b, id, fold, T_PREFIX, strip, pre_cut, alt_prefix, pre_len - pre_cut);
  } else {
    add_key(b, id, fold, K_SCREEN, lit, lit_len, "", 0);
  }
  return true;
}

/* ---- building the tables and the automaton ------------------------------ */

static gint
compare_pending(gconstpointer x, gconstpointer y, gpointer data)
{
  const struct pending *a = x, *b = y;
  const char *pool = data;
  if (a->fold != b->fold)
    return a->fold < b->fold ? -1 : 1;
  if (a->kind != b->kind)
    return a->kind < b->kind ? -1 : 1;
  if (a->len != b->len)
    return a->len < b->len ? -1 : 1;
  int c = memcmp(pool + a->off, pool + b->off, a->len);
  if (c)
    return c;
  return (a->pattern > b->pattern) - (a->pattern < b->pattern);
}

static void
table_build(struct table *t, GArray *entries, bool backward, bool ends, const char *keys)
{
  t->n_entries = entries->len;
  t->entries = (struct entry *)(void *)g_array_free(entries, FALSE);
  if (t->n_entries == 0)
    return;
  uint32_t cap = 8;
  while (cap < 2 * t->n_entries)
    cap *= 2;
  t->mask = cap - 1;
  t->slots = g_new0(uint32_t, cap);
  uint32_t words = FILTER_MIN_WORDS;
  while (words < FILTER_MAX_WORDS &&
         64 * (uint64_t)words < FILTER_BITS_PER_KEY * (uint64_t)t->n_entries)
    words *= 2;
  t->filter_mask = words - 1;
  t->filter = g_new0(uint64_t, words);
  if (ends)
    t->ends = g_new0(uint64_t, 256);
  for (uint32_t e = 0; e < t->n_entries; e++) {
    struct entry *en = &t->entries[e];
    const uint64_t m = hash_key(keys + en->key_off, en->key_len, backward);
    t->filter[filter_word(t, m)] |= filter_bits(m);
    en->hash = (uint32_t)(m >> 32);
    uint32_t i = en->hash & t->mask;
    while (t->slots[i])
      i = (i + 1) & t->mask;
    t->slots[i] = e + 1;
    t->max_len = MAX(t->max_len, en->key_len);
    if (en->key_len <= KEY_MAX_LEN)
      t->lengths[en->key_len >> 6] |= UINT64_C(1) << (en->key_len & 63);
    if (ends) {
      g_assert(en->key_len > 0); /* key_alternative() files no empty prefix or suffix */
      const uint8_t c = (uint8_t)keys[en->key_off + (backward ? 0 : en->key_len - 1)];
      t->ends[c] |= UINT64_C(1) << (en->key_len & 63);
    }
  }
}

/* Byte classes of the literals: each byte some literal uses is a class of
 * its own, every other byte is class 0. Returns the number of classes. */
static uint32_t
screen_classes(uint8_t classes[256], const struct entry *lits, uint32_t n,
               const char *keys)
{
  memset(classes, 0, 256);
  uint32_t k = 1;
  for (uint32_t e = 0; e < n; e++)
    for (uint32_t i = 0; i < lits[e].key_len; i++) {
      uint8_t c = (uint8_t)keys[lits[e].key_off + i];
      if (classes[c] == 0)
        classes[c] = (uint8_t)k++;
    }
  return k;
}

/* Cells an automaton of these literals could need, at most. */
static uint64_t
screen_cells(const struct entry *lits, uint32_t n, const char *keys)
{
  uint8_t classes[256];
  uint64_t states = 1;
  for (uint32_t e = 0; e < n; e++)
    states += lits[e].key_len;
  return states * screen_classes(classes, lits, n, keys);
}

static void
screen_build(struct screen *sc, GArray *entries, const char *keys)
{
  sc->n_entries = entries->len;
  sc->entries = (struct entry *)(void *)g_array_free(entries, FALSE);
  if (sc->n_entries == 0)
    return;
  const uint32_t nc = sc->n_classes =
      screen_classes(sc->classes, sc->entries, sc->n_entries, keys);
  uint32_t max_states = 1;
  for (uint32_t e = 0; e < sc->n_entries; e++)
    max_states += sc->entries[e].key_len;

  /* The trie: 0 in delta is "no edge" (the root is nobody's child). */
  uint32_t *delta = g_new0(uint32_t, (size_t)max_states * nc);
  uint32_t *lit = g_new(uint32_t, max_states);
  uint32_t *dict = g_new(uint32_t, max_states);
  uint32_t n_states = 1;
  lit[0] = dict[0] = NONE;
  for (uint32_t e = 0; e < sc->n_entries; e++) {
    uint32_t s = 0;
    for (uint32_t i = 0; i < sc->entries[e].key_len; i++) {
      uint32_t *cell = &delta[(size_t)s * nc +
                              sc->classes[(uint8_t)keys[sc->entries[e].key_off + i]]];
      if (*cell == 0) {
        lit[n_states] = dict[n_states] = NONE;
        *cell = n_states++;
      }
      s = *cell;
    }
    lit[s] = e; /* literals are distinct: one per state */
  }

  /* Breadth first: a state's missing edges are its fail state's edges, and
   * the fail state, being shallower, is complete by then. */
  uint32_t *fail = g_new0(uint32_t, n_states);
  uint32_t *queue = g_new(uint32_t, n_states);
  uint32_t head = 0, tail = 0;
  for (uint32_t c = 0; c < nc; c++)
    if (delta[c])
      queue[tail++] = delta[c];
  while (head < tail) {
    const uint32_t s = queue[head++];
    for (uint32_t c = 0; c < nc; c++) {
      uint32_t *cell = &delta[(size_t)s * nc + c];
      const uint32_t via_fail = delta[(size_t)fail[s] * nc + c];
      if (*cell == 0) {
        *cell = via_fail;
        continue;
      }
      const uint32_t u = *cell;
      fail[u] = via_fail;
      dict[u] = lit[via_fail] != NONE ? via_fail : dict[via_fail];
      queue[tail++] = u;
    }
  }
  /* Targets become row offsets (no multiply in the query's loop), flagged
   * when the target has output. */
  for (size_t i = 0; i < (size_t)n_states * nc; i++) {
    const uint32_t t = delta[i];
    delta[i] = t * nc | (lit[t] != NONE || dict[t] != NONE ? STATE_OUT : 0);
  }
  g_free(fail);
  g_free(queue);
  sc->delta = g_renew(uint32_t, delta, (size_t)n_states * nc);
  sc->lit = g_renew(uint32_t, lit, n_states);
  sc->dict = g_renew(uint32_t, dict, n_states);
  sc->n_states = n_states;
}

/* Turn the sorted pending keys of one index into its tables and automaton. */
static void
index_build(TrawlPatset *set, struct index *x, const struct pending *k,
            size_t n, GArray *ids)
{
  GArray *entries[N_TABLES + 1];
  for (int t = 0; t <= N_TABLES; t++)
    entries[t] = g_array_new(FALSE, FALSE, sizeof(struct entry));
  for (size_t i = 0; i < n;) {
    size_t j = i;
    struct entry en = {.key_off = k[i].off, .key_len = k[i].len, .first = ids->len};
    uint32_t last = NONE;
    for (; j < n && k[j].kind == k[i].kind && k[j].len == k[i].len &&
           memcmp(set->keys + k[j].off, set->keys + k[i].off, k[i].len) == 0;
         j++) {
      if (k[j].pattern == last)
        continue;
      last = k[j].pattern;
      g_array_append_val(ids, last);
      en.count++;
    }
    g_array_append_val(entries[k[i].kind], en);
    x->used = true;
    i = j;
  }
  for (int t = 0; t < N_TABLES; t++)
    table_build(&x->tables[t], entries[t], table_backward[t], table_ends[t], set->keys);
  x->forward = x->tables[T_EXACT].n_entries || x->tables[T_PREFIX].n_entries;
  x->backward = x->tables[T_BASENAME].n_entries || x->tables[T_EXTENSION].n_entries ||
                x->tables[T_SUFFIX].n_entries;
  screen_build(&x->screen, entries[K_SCREEN], set->keys);
}

/* A screen too large to build: its patterns go to the always list. */
static void
drop_oversized_screens(TrawlPatset *set, struct builder *b)
{
  for (int f = 0; f < 2; f++) {
    GArray *lits = g_array_new(FALSE, FALSE, sizeof(struct entry));
    for (guint i = 0; i < b->pending->len; i++) {
      const struct pending *k = &g_array_index(b->pending, struct pending, i);
      if (k->fold == f && k->kind == K_SCREEN) {
        struct entry en = {.key_off = k->off, .key_len = k->len};
        g_array_append_val(lits, en);
      }
    }
    if (screen_cells((struct entry *)(void *)lits->data, lits->len, b->pool->str) >
        SCREEN_MAX_CELLS)
      for (guint i = 0; i < b->pending->len; i++) {
        const struct pending *k = &g_array_index(b->pending, struct pending, i);
        if (k->fold == f && k->kind == K_SCREEN)
          set->keys_of[k->pattern] = TRAWL_PATSET_KEY_ALWAYS;
      }
    g_array_free(lits, TRUE);
  }
}

TrawlPatset *
trawl_patset_new(const TrawlPattern *const *patterns, size_t n)
{
  g_return_val_if_fail(patterns != NULL || n == 0, NULL);
  g_return_val_if_fail(n < NONE, NULL);
  TrawlPatset *set = g_new0(TrawlPatset, 1);
  set->n = n;
  set->patterns = g_new0(const TrawlPattern *, MAX(n, 1));
  set->keys_of = g_new0(unsigned, MAX(n, 1));
  if (n)
    memcpy(set->patterns, patterns, n * sizeof *patterns);

  struct builder b = {g_string_new(NULL), g_array_new(FALSE, FALSE, sizeof(struct pending))};
  for (size_t i = 0; i < n; i++) {
    const TrawlPattern *p = patterns[i];
    g_return_val_if_fail(p != NULL, NULL);
    if (p->nothing)
      continue; /* never a match: never run */
    const guint before = b.pending->len;
    bool keyed = true;
    for (size_t a = 0; a < p->n_alts && keyed; a++)
      keyed = key_alternative(&b, (uint32_t)i, p, &p->alts[a]);
    if (!keyed) {
      g_array_set_size(b.pending, before);
      set->keys_of[i] = TRAWL_PATSET_KEY_ALWAYS;
    }
  }
  drop_oversized_screens(set, &b);

  /* Keys of patterns that ended up in the always list are dropped. */
  GArray *ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  guint kept = 0;
  for (guint i = 0; i < b.pending->len; i++) {
    struct pending k = g_array_index(b.pending, struct pending, i);
    if (set->keys_of[k.pattern] == TRAWL_PATSET_KEY_ALWAYS)
      continue;
    g_array_index(b.pending, struct pending, kept++) = k;
  }
  g_array_set_size(b.pending, kept);
  for (size_t i = 0; i < n; i++)
    if (set->keys_of[i] == TRAWL_PATSET_KEY_ALWAYS) {
      uint32_t id = (uint32_t)i;
      g_array_append_val(ids, id);
    }
  set->n_always = ids->len;
  for (guint i = 0; i < b.pending->len; i++) {
    const struct pending *k = &g_array_index(b.pending, struct pending, i);
    set->keys_of[k->pattern] |= table_key_flag[k->kind];
  }

  g_array_sort_with_data(b.pending, compare_pending, b.pool->str);
  set->keys = g_string_free(b.pool, FALSE);
  const struct pending *k = (const struct pending *)(void *)b.pending->data;
  size_t split = 0;
  while (split < b.pending->len && !k[split].fold)
    split++;
  index_build(set, &set->index[0], k, split, ids);
  if (split < b.pending->len)
    index_build(set, &set->index[1], k + split, b.pending->len - split, ids);
  g_array_free(b.pending, TRUE);
  set->ids = (uint32_t *)(void *)g_array_free(ids, FALSE);
  return set;
}

void
trawl_patset_free(TrawlPatset *set)
{
  if (set == NULL)
    return;
  for (int f = 0; f < 2; f++) {
    struct index *x = &set->index[f];
    for (int t = 0; t < N_TABLES; t++) {
      g_free(x->tables[t].slots);
      g_free(x->tables[t].entries);
      g_free(x->tables[t].filter);
      g_free(x->tables[t].ends);
    }
    g_free(x->screen.delta);
    g_free(x->screen.lit);
    g_free(x->screen.dict);
    g_free(x->screen.entries);
  }
  g_free(set->ids);
  g_free(set->keys);
  g_free(set->keys_of);
  g_free(set->patterns);
  g_free(set);
}
