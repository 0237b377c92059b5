/* trawl — the matching engine.
 *
 * Every alternative of a pattern is first screened by facts computed at
 * compile time: the minimum length, the literal prefix and the literal
 * suffix. Most real patterns are then decided by those facts alone
 * ("src/ **" + "/ *.c" is a prefix, a suffix and a length; "*.{ts,tsx}" a
 * suffix and the absence of '/'), so the engine below runs only for the rest.
 *
 * The engine matches component by component. Because '*', '?' and classes
 * never cross '/', a component of the pattern matches exactly one component of
 * the path, and inside one component the classic single-backtrack glob
 * algorithm is exact and O(n·m): on a mismatch, retry from the most recent
 * '*' one byte further on; an earlier '*' never needs revisiting, since the
 * later one can absorb whatever the earlier would have. The same argument one
 * level up handles globstars: they split the pattern into chunks of plain
 * components; the first chunk is anchored at the start of the path, the last
 * at its end, and each chunk between is placed at its leftmost fit after the
 * previous one (a later fit never helps, because the next globstar absorbs
 * the gap). Nothing is ever tried twice from the same state, so matching is
 * O(path length × pattern length) in the worst case, with no recursion and
 * no allocation.
 */
#include "pattern-private.h"

static bool
class_has(const TrawlPattern *p, uint32_t cls, uint8_t c)
{
  return (p->classes[cls][c >> 6] >> (c & 63)) & 1;
}

static const char *
find_byte(const char *s, size_t n, char c)
{
  return n ? memchr(s, c, n) : NULL;
}

/* End of the component starting at POS. Components are short: a plain
 * loop over the first bytes beats a memchr call, and memchr (vectorised)
 * takes over for a long one (both measured with bench_match). */
static size_t
component_end(const char *path, size_t len, size_t pos)
{
  const size_t quick = pos + 24 < len ? pos + 24 : len;
  while (pos < quick) {
    if (path[pos] == '/')
      return pos;
    pos++;
  }
  const char *slash = find_byte(path + pos, len - pos, '/');
  return slash ? (size_t)(slash - path) : len;
}

/* Ops without a star against exactly the bytes they take. */
static bool
fixed_match(const TrawlPattern *p, const struct op *ops, uint32_t n,
            const char *s, uint64_t *steps)
{
  for (uint32_t i = 0; i < n; i++) {
    const struct op *o = &ops[i];
    (*steps)++;
    if (o->kind == OP_LIT) {
      if (!trawl_bytes_equal(s, p->lits + o->arg, o->len, p->icase))
        return false;
      s += o->len;
    } else {
      if (o->kind == OP_CLASS && !class_has(p, o->arg, (uint8_t)*s))
        return false;
      s++;
    }
  }
  return true;
}

/* The bytes Java's '.' does not take without DOTALL, of those a Latin-1
 * name (Bazel 4.2.3 decodes names so) can hold. */
static inline bool
eol_byte(uint8_t c)
{
  return c == '\n' || c == '\r' || c == 0x85;
}

G_GNUC_NO_INLINE static bool
has_eol(const char *s, size_t len)
{
  for (size_t i = 0; i < len; i++)
    if (eol_byte((uint8_t)s[i]))
      return true;
  return false;
}

static bool
no_eol(const char *s, size_t from, size_t to)
{
  return !has_eol(s + from, to - from);
}

/* A segment Bazel matches by a regular expression (GUARD_EOL) against a
 * component S holding a line terminator, which no '*' may take. Its ops are
 * literal runs and single stars (bazel has no classes and refuses '?').
 * Each run after a star is placed at its leftmost fit, the last one (with
 * no star after it) at the end. Leftmost is exact. Say run R fits at A and
 * at a later B, with no terminator in the star before B. If R holds one, at
 * smallest offset j, the byte at A + j is one, so A + j >= B, and R at B
 * holds it at offset j - (B - A) < j: impossible. So R holds none, and
 * neither do the bytes from A + |R| to B + |R| (the star's before B, R's at
 * B): the next star may take them, and every fit of the next run after B
 * is one after A. */
G_GNUC_NO_INLINE static bool
comp_match_eol(const TrawlPattern *p, const struct comp *c, const char *s, size_t len,
               uint64_t *steps)
{
  const struct op *ops = p->ops + c->op_first;
  const uint32_t n = c->op_count;
  size_t ti = 0;
  bool star = false;
  for (uint32_t i = 0; i < n; i++) {
    const struct op *o = &ops[i];
    (*steps)++;
    if (o->kind == OP_STAR) {
      star = true;
      continue;
    }
    const char *lit = p->lits + o->arg;
    size_t at = ti;
    if (star && i + 1 == n) {
      if (len - ti < o->len)
        return false;
      at = len - o->len;
    } else if (star) {
      for (;; at++) {
        (*steps)++;
        if (len - at < o->len)
          return false;
        if (trawl_bytes_equal(s + at, lit, o->len, p->icase))
          break;
        if (eol_byte((uint8_t)s[at]))
          return false;
      }
    }
    if (len - at < o->len || !trawl_bytes_equal(s + at, lit, o->len, p->icase) ||
        (star && !no_eol(s, ti, at)))
      return false;
    ti = at + o->len;
    star = false;
  }
  return star ? no_eol(s, ti, len) : ti == len;
}

/* A COMP_WILD component without its guards: comp_match()'s body, written
 * once for it and for eol_match(); forced inline so that comp_match() is
 * compiled as one function, as before the guards came. */
static inline __attribute__((always_inline)) bool
wild_match(const TrawlPattern *p, const struct comp *c, const char *s,
           size_t len, uint64_t *steps)
{
  const bool icase = p->icase;
  const struct op *ops = p->ops + c->op_first;
  if (c->op_count == 1 && c->last_star == 0)
    return true; /* a lone '*' takes any component */
  if (c->last_star == NO_STAR)
    return len == c->tail_len && fixed_match(p, ops, c->op_count, s, steps);

  /* What follows the last '*' has a fixed length: it must match the end of
   * the component. Then the last '*' is trailing and takes whatever is left
   * between the earlier ops and that end (musl's order: tail first). */
  if (len < c->tail_len ||
      !fixed_match(p, ops + c->last_star + 1, c->op_count - c->last_star - 1,
                   s + len - c->tail_len, steps))
    return false;
  len -= c->tail_len;

  const uint32_t n = c->last_star;
  uint32_t pi = 0, star_pi = NO_STAR;
  size_t ti = 0, star_ti = 0;
  uint64_t k = 0;
  for (;;) {
    k++;
    const struct op *o = &ops[pi];
    switch (o->kind) {
    case OP_STAR:
      if (pi == n) {
        *steps += k;
        return true;
      }
      star_pi = pi++;
      star_ti = ti;
      continue;
    case OP_LIT:
      if (len - ti >= o->len &&
          trawl_bytes_equal(s + ti, p->lits + o->arg, o->len, icase)) {
        ti += o->len;
        pi++;
        k += o->len;
        continue;
      }
      break;
    case OP_ANY:
      if (ti < len) {
        ti++;
        pi++;
        continue;
      }
      break;
    default:
      if (ti < len && class_has(p, o->arg, (uint8_t)s[ti])) {
        ti++;
        pi++;
        continue;
      }
      break;
    }
    /* Mismatch: let the last '*' take one more byte, or fail. */
    if (star_pi == NO_STAR || star_ti >= len) {
      *steps += k;
      return false;
    }
    ti = ++star_ti;
    pi = star_pi + 1;
    const struct op *next = &ops[pi];
    if (next->kind == OP_LIT && !icase) {
      /* The next literal can only start at its first byte: skip to it. */
      const char *hit = find_byte(s + ti, len - ti, p->lits[next->arg]);
      if (hit == NULL) {
        *steps += k;
        return false;
      }
      ti = star_ti = (size_t)(hit - s);
    }
  }
}

/* A segment Bazel matches by a regular expression (GUARD_EOL), apart: only
 * the bazel dialect comes here. */
G_GNUC_NO_INLINE static bool
eol_match(const TrawlPattern *p, const struct comp *c, const char *s, size_t len,
          uint64_t *steps)
{
  if (has_eol(s, len))
    return comp_match_eol(p, c, s, len, steps);
  return wild_match(p, c, s, len, steps);
}

static inline bool
comp_match(const TrawlPattern *p, const struct comp *c, const char *s,
           size_t len, uint64_t *steps)
{
  if (c->kind == COMP_LITERAL)
    return len == c->lit_len && trawl_bytes_equal(s, p->lits + c->lit_off, len, p->icase);
  if (c->kind == COMP_GLOBSTAR)
    return true;
  if (c->guard) { /* bazel only */
    if ((c->guard & GUARD_DOT) && len > 0 && s[0] == '.')
      return false;
    if (c->guard & GUARD_EOL)
      return eol_match(p, c, s, len, steps);
  }
  return wild_match(p, c, s, len, steps);
}

bool
trawl_comp_match(const TrawlPattern *p, const struct comp *c, const char *s,
                 size_t len, uint64_t *steps)
{
  return comp_match(p, c, s, len, steps);
}

/* Match COUNT consecutive components C against the path from offset POS (a
 * component start). On success *END is where the last one ends: at a '/' or
 * at LEN. */
static bool
chunk_match(const TrawlPattern *p, const struct comp *c, uint32_t count,
            const char *path, size_t len, size_t pos, size_t *end,
            uint64_t *steps)
{
  for (uint32_t i = 0; i < count; i++) {
    if (pos > len)
      return false;
    size_t e = component_end(path, len, pos);
    if (!comp_match(p, &c[i], path + pos, e - pos, steps))
      return false;
    pos = e + 1;
  }
  *end = pos - 1;
  return true;
}

/* Offset where the last COUNT components of PATH start, or SIZE_MAX when it
 * has fewer. */
static size_t
tail_start(const char *path, size_t len, uint32_t count)
{
  size_t i = len;
  while (count > 0) {
    while (i > 0 && path[i - 1] != '/')
      i--;
    if (--count == 0)
      return i;
    if (i == 0)
      return SIZE_MAX;
    i--;
  }
  return i;
}

/* Offset just past the component starting at POS (after its '/'), or
 * SIZE_MAX when it is the last one. */
static size_t
skip_component(const char *path, size_t len, size_t pos)
{
  if (pos > len)
    return SIZE_MAX;
  const char *slash = find_byte(path + pos, len - pos, '/');
  return slash ? (size_t)(slash - path) + 1 : SIZE_MAX;
}

/* Match alternative A from its component SKIP (at offset AT): the caller has
 * already compared everything before. */
static bool
alt_engine(const TrawlPattern *p, const struct alt *a, const char *path,
           size_t len, uint32_t skip, size_t at, uint64_t *steps)
{
  const struct comp *c = p->comps + a->comp_first;
  const uint32_t n = a->comp_count;
  size_t end;

  if (!a->has_globstar)
    return chunk_match(p, c + skip, n - skip, path, len, at, &end, steps) && end == len;

  /* Head: the components before the first globstar, anchored at the start. */
  size_t cur = at; /* the first path component still free */
  if (a->head_count > skip) {
    if (!chunk_match(p, c + skip, a->head_count - skip, path, len, at, &end, steps))
      return false;
    cur = end + 1;
  }

  /* Tail: the components after the last globstar, anchored at the end. */
  uint32_t last_gs = n - 1;
  while (c[last_gs].kind != COMP_GLOBSTAR)
    last_gs--;
  const uint32_t tail_count = n - last_gs - 1;
  size_t tail_at = len + 1;
  if (tail_count > 0) {
    tail_at = tail_start(path, len, tail_count);
    if (tail_at == SIZE_MAX)
      return false;
  }
  /* Middle chunks must end before the tail's '/' (or by the end). */
  const size_t limit = tail_count > 0 ? (tail_at == 0 ? 0 : tail_at - 1) : len;

  /* Each globstar, then the chunk after it at its leftmost fit. */
  for (uint32_t g = a->head_count; g < n;) {
    size_t earliest = cur;
    if (c[g].needs_one && (earliest = skip_component(path, len, cur)) == SIZE_MAX)
      return false;
    if (g == last_gs) {
      /* Trailing: git needs the '/' and a component after it, Bazel not even
       * that (untyped; trawl_pattern_match_entry for a file). */
      if (tail_count == 0)
        return p->dialect == TRAWL_DIALECT_BAZEL || cur <= len;
      return tail_at >= earliest &&
             chunk_match(p, c + g + 1, tail_count, path, len, tail_at, &end, steps) &&
             end == len;
    }
    uint32_t next = g + 1;
    while (c[next].kind != COMP_GLOBSTAR)
      next++;
    size_t q = earliest;
    for (;;) {
      (*steps)++;
      if (q > len)
        return false;
      if (chunk_match(p, c + g + 1, next - g - 1, path, len, q, &end, steps)) {
        if (end > limit)
          return false; /* a later fit would end later still */
        break;
      }
      if ((q = skip_component(path, len, q)) == SIZE_MAX)
        return false;
    }
    cur = end + 1;
    g = next;
  }
  return false; /* not reached: the loop ends at the last globstar */
}

static bool
prefix_suffix_ok(const TrawlPattern *p, const struct alt *a, const char *path,
                 size_t len)
{
  if (len < a->min_len)
    return false;
  if (a->prefix_len &&
      (len < a->prefix_len ||
       !trawl_bytes_equal(path, p->lits + a->prefix_off, a->prefix_len, p->icase)))
    return false;
  if (a->suffix_len &&
      (len < a->suffix_len ||
       !trawl_bytes_equal(path + len - a->suffix_len, p->lits + a->suffix_off,
                          a->suffix_len, p->icase)))
    return false;
  return true;
}

static bool
alt_match(const TrawlPattern *p, const struct alt *a, const char *path,
          size_t len)
{
  if (!prefix_suffix_ok(p, a, path, len))
    return false;
  const size_t pl = a->prefix_len, sl = a->suffix_len;
  switch (a->strategy) {
  case STRAT_EXACT:
    return len == pl;
  case STRAT_STAR:
    if (len < pl + sl || find_byte(path + pl, len - pl - sl, '/'))
      return false;
    return !(a->guard_last && len > pl && path[pl] == '.');
  case STRAT_GLOBSTAR_STAR: {
    if (len < pl + sl)
      return false;
    if (a->guard_last) {
      size_t b = len;
      while (b > 0 && path[b - 1] != '/')
        b--;
      if (b < len && path[b] == '.')
        return false;
    }
    return true;
  }
  case STRAT_GLOBSTAR_TAIL:
    return len >= pl;
  default: {
    uint64_t steps = 0;
    return alt_engine(p, a, path, len, a->skip_comps, a->skip_bytes, &steps);
  }
  }
}

bool
trawl_pattern_suffix_decides(const TrawlPattern *p)
{
  if (p->nothing || p->icase || p->strip_len || p->n_alts != 1)
    return false;
  const struct alt *a = &p->alts[0];
  return a->strategy == STRAT_GLOBSTAR_STAR && a->prefix_len == 0 && !a->guard_last &&
         a->suffix_len > 0 && a->suffix_len == p->suffix_len && a->min_len <= a->suffix_len &&
         p->min_len <= a->suffix_len;
}

/* git's literal cut (pattern.c): compare it, then match what follows. */
static bool
strip_cut(const TrawlPattern *p, const char **path, size_t *len)
{
  if (p->strip_len == 0)
    return true;
  if (*len < p->strip_len || !trawl_bytes_equal(*path, p->strip, p->strip_len, p->icase))
    return false;
  *path += p->strip_len;
  *len -= p->strip_len;
  return true;
}

bool
trawl_pattern_match(const TrawlPattern *p, const char *path, size_t len)
{
  if (len < p->min_len || !strip_cut(p, &path, &len))
    return false;
  for (size_t i = 0; i < p->n_alts; i++)
    if (alt_match(p, &p->alts[i], path, len))
      return true;
  return false;
}

bool
trawl_pattern_typed(const TrawlPattern *p)
{
  return p->typed;
}

bool
trawl_pattern_file_ok(const TrawlPattern *p, const char *path, size_t len)
{
  if (!p->typed)
    return true;
  if (p->typed_comps) {
    uint32_t slashes = 0;
    for (const char *at = path, *end = path + len; slashes < p->typed_comps; at++, slashes++)
      if ((at = find_byte(at, (size_t)(end - at), '/')) == NULL)
        return false;
    return true;
  }
  for (size_t i = 0; i < len; i++)
    if (path[i] == '/' && trawl_pattern_covers_below(p, path, i))
      return true;
  return false;
}

bool
trawl_pattern_match_entry(const TrawlPattern *p, const char *path, size_t len,
                          TrawlEntryType type)
{
  if (!trawl_pattern_match(p, path, len))
    return false;
  return type == TRAWL_ENTRY_DIR || type == TRAWL_ENTRY_UNKNOWN ||
         trawl_pattern_file_ok(p, path, len);
}

bool
trawl_pattern_match_engine(const TrawlPattern *p, const char *path, size_t len,
                           uint64_t *steps)
{
  uint64_t local = 0;
  if (steps == NULL)
    steps = &local;
  if (p->nothing || !strip_cut(p, &path, &len))
    return false;
  for (size_t i = 0; i < p->n_alts; i++)
    if (alt_engine(p, &p->alts[i], path, len, 0, 0, steps))
      return true;
  return false;
}

/* Can a path below DIR match alternative A? Walk DIR's components against
 * the head (the components before the first globstar): once the head is
 * used up at a globstar, the globstar absorbs the rest of DIR and the
 * remaining pattern can always be completed below it. */
static bool
alt_may_match_below(const TrawlPattern *p, const struct alt *a,
                    const char *dir, size_t len)
{
  const struct comp *c = p->comps + a->comp_first;
  uint64_t steps = 0;
  uint32_t i = 0;
  size_t pos = 0;
  while (len > 0 && pos <= len) {
    if (i == a->head_count)
      return a->has_globstar;
    const char *slash = find_byte(dir + pos, len - pos, '/');
    size_t e = slash ? (size_t)(slash - dir) : len;
    if (!trawl_comp_match(p, &c[i], dir + pos, e - pos, &steps))
      return false;
    i++;
    pos = e + 1;
  }
  return i < a->comp_count;
}

bool
trawl_pattern_may_match_below(const TrawlPattern *p, const char *dir,
                              size_t len)
{
  if (p->nothing)
    return false;
  if (p->strip_len) {
    const size_t cut = p->strip_len;
    if (len == 0)
      return true;
    if (len < cut) /* DIR must lead into the cut: "x/" of "x/ab" */
      return p->strip[len] == '/' && trawl_bytes_equal(dir, p->strip, len, p->icase);
    if (!trawl_bytes_equal(dir, p->strip, cut, p->icase))
      return false;
    if (len == cut) /* the rest starts with an empty component: stay open */
      return true;
    dir += cut;
    len -= cut;
  }
  for (size_t i = 0; i < p->n_alts; i++)
    if (alt_may_match_below(p, &p->alts[i], dir, len))
      return true;
  return false;
}

bool
trawl_pattern_covers_below(const TrawlPattern *p, const char *dir, size_t len)
{
  if (p->nothing || !strip_cut(p, &dir, &len))
    return false;
  for (size_t i = 0; i < p->n_alts; i++) {
    const struct alt *a = &p->alts[i];
    const struct comp *c = p->comps + a->comp_first;
    if (a->comp_count < 2 || c[a->comp_count - 1].kind != COMP_GLOBSTAR)
      continue;
    /* The alternative without its trailing globstar, matched against DIR. */
    struct alt stem = *a;
    stem.comp_count--;
    stem.has_globstar = false;
    for (uint32_t k = 0; k < stem.comp_count && !stem.has_globstar; k++)
      stem.has_globstar = c[k].kind == COMP_GLOBSTAR;
    if (stem.head_count > stem.comp_count)
      stem.head_count = stem.comp_count;
    uint64_t steps = 0;
    if (alt_engine(p, &stem, dir, len, 0, 0, &steps))
      return true;
  }
  return false;
}

bool
trawl_pattern_names_hidden(const TrawlPattern *p, const char *name, size_t len)
{
  if (p->nothing || len == 0 || name[0] != '.')
    return false;
  uint64_t steps = 0;
  for (size_t i = 0; i < p->n_alts; i++) {
    const struct alt *a = &p->alts[i];
    for (uint32_t k = 0; k < a->comp_count; k++) {
      const struct comp *c = &p->comps[a->comp_first + k];
      bool dot;
      if (c->kind == COMP_LITERAL)
        dot = c->lit_len > 0 && p->lits[c->lit_off] == '.';
      else if (c->kind == COMP_WILD)
        dot = p->ops[c->op_first].kind == OP_LIT && p->lits[p->ops[c->op_first].arg] == '.';
      else
        dot = false;
      if (dot && comp_match(p, c, name, len, &steps))
        return true;
    }
  }
  return false;
}
