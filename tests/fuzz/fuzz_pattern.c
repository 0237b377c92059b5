/* trawl — libFuzzer target over pattern compilation and matching, in every
 * dialect.
 *
 * Input layout: one control byte, then a pattern, then zero or more paths,
 * separated by a separator byte. The control byte picks
 *   bits 0-1  the dialect (trawl, git, cmake, bazel),
 *   bit  2    TRAWL_PATTERN_ICASE,
 *   bit  3    the separator: '\n' when clear, NUL when set (so that patterns
 *             and paths may contain newlines, or NULs, but not both).
 * The printable controls '0'..'7' are the eight dialect × icase choices with
 * '\n' separators, which keeps the seed corpus readable: a file holding
 * "0*.c", a newline and "a.c" matches a.c against *.c in the trawl dialect.
 * The pattern text itself is also tried as a path (a literal pattern matches
 * its own text), and so are witnesses built from the compiled alternatives:
 * random paths rarely match, and the invariants about facts and ancestors
 * only bite on a match.
 *
 * Invariants, each checked with abort() so that libFuzzer reports it:
 *  - a failed compile sets a TRAWL_PATTERN_ERROR whose offset lies within
 *    the pattern;
 *  - trawl_pattern_match() (prefilters and strategy shortcuts) agrees with
 *    the bare engine, trawl_pattern_match_engine(), on every path;
 *  - trawl_pattern_match_entry() for a directory agrees with it, for a file
 *    never matches where it does not, and differs only for a typed pattern;
 *  - the engine stays within a generous O(path × pattern) step bound;
 *  - under ICASE, except in the git dialect (whose class quirks wildmatch
 *    dictates), a path and its ASCII upper-cased form get the same verdict;
 *  - a brace-free pattern that compiles in both the trawl and the git
 *    dialect matches the same paths in both (the trawl dialect is git's
 *    wildmatch plus braces), without ICASE: under it git keeps wildmatch's
 *    quirks ("[A]" and "\L" match no letter at all), the trawl dialect folds;
 *    and except where git's literal cut makes "a**" a globstar;
 *  - a match is at least trawl_pattern_min_length() long, starts with the
 *    literal prefix, ends with the literal suffix and the extension (ASCII
 *    case-insensitively under ICASE), and is not reported for a pattern that
 *    trawl_pattern_matches_nothing();
 *  - for a well-formed path (relative, no empty component), a match implies
 *    trawl_pattern_may_match_below() on every proper ancestor directory, and
 *    that the path lies under (or is) one of trawl_pattern_roots().
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern-private.h"
#include "trawl/pattern.h"
#include "fuzz_report.h"

/* Most paths taken from one input; the rest are ignored. */
#define MAX_PATHS 64
/* Alternatives of one pattern that witnesses are built from (the first ones
 * and the last), and the fillers tried for each. */
#define WITNESS_ALTS 4
#define WITNESS_VARIANTS 3
/* Steps the engine may take per (path byte + 2) × (pattern byte + 2) ×
 * alternative; far above what the O(n·m) algorithm needs. */
#define STEP_FACTOR 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const dialect_names[] = {"trawl", "git", "cmake", "bazel"};

/* Report which invariant broke, with the inputs, then abort. */
static void
violation(const char *what, const TrawlPattern *p, const char *path,
          size_t len)
{
  size_t tl;
  const char *text = trawl_pattern_text(p, &tl);
  fprintf(stderr, "fuzz_pattern: invariant violated: %s\n  dialect %s%s\n",
          what, dialect_names[trawl_pattern_dialect(p)],
          (trawl_pattern_flags(p) & TRAWL_PATTERN_ICASE) ? ", icase" : "");
  print_bytes("pattern", text, tl);
  print_bytes("path   ", path, len);
  abort();
}

static bool
has_prefix(const char *s, size_t n, const char *pre, size_t pn, bool icase)
{
  return n >= pn && trawl_bytes_equal(s, pre, pn, icase);
}

static bool
has_suffix(const char *s, size_t n, const char *suf, size_t sn, bool icase)
{
  return n >= sn && trawl_bytes_equal(s + n - sn, suf, sn, icase);
}

/* A path a walker could produce: non-empty, relative, no empty component
 * (so no leading, trailing or doubled '/'). */
static bool
well_formed(const char *path, size_t len)
{
  if (len == 0 || path[0] == '/' || path[len - 1] == '/')
    return false;
  for (size_t i = 1; i < len; i++)
    if (path[i] == '/' && path[i - 1] == '/')
      return false;
  return true;
}

/* Is PATH equal to ROOT or below it? The root "" covers every path. */
static bool
under_root(const char *path, size_t len, const char *root)
{
  size_t rl = strlen(root);
  if (rl == 0)
    return true;
  return len >= rl && memcmp(path, root, rl) == 0 &&
         (len == rl || path[rl] == '/');
}

static void
check_error(const GError *error, size_t pattern_len)
{
  if (error == NULL || error->domain != TRAWL_PATTERN_ERROR) {
    fprintf(stderr, "fuzz_pattern: compile failed without a TRAWL_PATTERN_ERROR\n");
    abort();
  }
  gssize off = trawl_pattern_error_offset(error);
  if (off < 0 || (size_t)off > pattern_len) {
    fprintf(stderr,
            "fuzz_pattern: error offset %" G_GSSIZE_FORMAT
            " outside the pattern (%zu bytes): %s\n",
            off, pattern_len, error->message);
    abort();
  }
}

/* Check PATH against P; GIT, when not NULL, is P's text compiled in the git
 * dialect, which must agree. */
static void
check_path(const TrawlPattern *p, const TrawlPattern *git, const char *path,
           size_t len)
{
  const bool icase = (trawl_pattern_flags(p) & TRAWL_PATTERN_ICASE) != 0;
  uint64_t steps = 0;
  const bool engine = trawl_pattern_match_engine(p, path, len, &steps);
  const bool matched = trawl_pattern_match(p, path, len);
  if (matched != engine)
    violation(matched ? "trawl_pattern_match is true but the engine says no"
                      : "trawl_pattern_match is false but the engine matches",
              p, path, len);
  if (trawl_pattern_match_entry(p, path, len, TRAWL_ENTRY_DIR) != matched)
    violation("the typed answer for a directory is not the untyped one", p, path, len);
  const bool as_file = trawl_pattern_match_entry(p, path, len, TRAWL_ENTRY_FILE);
  if (as_file && !matched)
    violation("a file matches where the untyped match does not", p, path, len);
  if (as_file != matched && !trawl_pattern_typed(p))
    violation("an untyped pattern answers a file otherwise", p, path, len);

  size_t tl;
  trawl_pattern_text(p, &tl);
  const uint64_t bound = (uint64_t)STEP_FACTOR * (len + 2) * (tl + 2) *
                         trawl_pattern_alternative_count(p);
  if (steps > bound)
    violation("the engine took more than O(path x pattern) steps", p, path, len);

  if (icase && trawl_pattern_dialect(p) != TRAWL_DIALECT_GIT) {
    char *upper = g_malloc(len + 1);
    for (size_t i = 0; i < len; i++)
      upper[i] = g_ascii_toupper(path[i]);
    bool same = trawl_pattern_match(p, upper, len) == matched;
    g_free(upper);
    if (!same)
      violation("under icase the upper-cased path gets another verdict", p,
                path, len);
  }

  if (git != NULL && trawl_pattern_match(git, path, len) != matched)
    violation(matched ? "the trawl dialect matches but the git dialect does not"
                      : "the git dialect matches but the trawl dialect does not",
              p, path, len);

  if (!matched)
    return;
  if (trawl_pattern_matches_nothing(p))
    violation("matches_nothing pattern matched", p, path, len);
  if (len < trawl_pattern_min_length(p))
    violation("match shorter than trawl_pattern_min_length", p, path, len);
  size_t n;
  const char *s = trawl_pattern_literal_prefix(p, &n);
  if (!has_prefix(path, len, s, n, icase))
    violation("match does not start with the literal prefix", p, path, len);
  s = trawl_pattern_literal_suffix(p, &n);
  if (!has_suffix(path, len, s, n, icase))
    violation("match does not end with the literal suffix", p, path, len);
  s = trawl_pattern_extension(p, &n);
  if (s != NULL && !has_suffix(path, len, s, n, icase))
    violation("match does not end with the extension", p, path, len);

  if (!well_formed(path, len))
    return;
  /* Every proper ancestor directory, the root ("", length 0) first. */
  if (!trawl_pattern_may_match_below(p, path, 0))
    violation("may_match_below(\"\") is false for a match", p, path, len);
  for (size_t i = 0; i < len; i++)
    if (path[i] == '/' && !trawl_pattern_may_match_below(p, path, i))
      violation("may_match_below is false for an ancestor of a match", p,
                path, len);
  bool covered = false;
  const GPtrArray *roots = trawl_pattern_roots(p);
  for (guint r = 0; r < roots->len && !covered; r++)
    covered = under_root(path, len, g_ptr_array_index(roots, r));
  if (!covered)
    violation("match lies under none of trawl_pattern_roots", p, path, len);
}

/* A path that alternative A of P probably matches: literals as written, '?'
 * and classes by one member, '*' and globstars by a filler that VARIANT
 * picks (nothing, one name, two names). */
static void
build_witness(const TrawlPattern *p, const struct alt *a, int variant,
              GString *out)
{
  static const char *const star_fill[WITNESS_VARIANTS] = {"", "s", "s.t"};
  static const char *const globstar_fill[WITNESS_VARIANTS] = {NULL, "d", "d/e"};
  g_string_truncate(out, 0);
  bool first = true;
  for (uint32_t i = 0; i < a->comp_count; i++) {
    const struct comp *c = &p->comps[a->comp_first + i];
    if (c->kind == COMP_GLOBSTAR && globstar_fill[variant] == NULL)
      continue; /* zero components */
    if (!first)
      g_string_append_c(out, '/');
    first = false;
    if (c->kind == COMP_GLOBSTAR) {
      g_string_append(out, globstar_fill[variant]);
    } else if (c->kind == COMP_LITERAL) {
      g_string_append_len(out, p->lits + c->lit_off, c->lit_len);
    } else {
      for (uint32_t k = 0; k < c->op_count; k++) {
        const struct op *o = &p->ops[c->op_first + k];
        if (o->kind == OP_LIT) {
          g_string_append_len(out, p->lits + o->arg, o->len);
        } else if (o->kind == OP_ANY) {
          g_string_append_c(out, 'q');
        } else if (o->kind == OP_STAR) {
          g_string_append(out, star_fill[variant]);
        } else {
          /* the first member, preferring a printable byte; an empty class
           * gets a byte it does not hold */
          unsigned pick = 256;
          for (unsigned b = 0; b < 256 && pick == 256; b++) {
            unsigned t = (b + 33) & 255;
            if ((p->classes[o->arg][t >> 6] >> (t & 63)) & 1)
              pick = t;
          }
          g_string_append_c(out, pick == 256 ? 'z' : (char)pick);
        }
      }
    }
  }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size == 0)
    return 0;
  const unsigned control = data[0];
  const TrawlDialect dialect = (TrawlDialect)(control & 3);
  const unsigned flags = (control & 4) ? TRAWL_PATTERN_ICASE : 0;
  const char sep = (control & 8) ? '\0' : '\n';
  const char *rest = (const char *)data + 1;
  size_t rest_len = size - 1;

  const char *end = memchr(rest, sep, rest_len);
  const size_t pattern_len = end ? (size_t)(end - rest) : rest_len;

  GError *error = NULL;
  TrawlPattern *p = trawl_pattern_compile(rest, pattern_len, dialect, flags, &error);
  if (p == NULL) {
    check_error(error, pattern_len);
    g_error_free(error);
    return 0;
  }
  if (error != NULL) {
    fprintf(stderr, "fuzz_pattern: compile succeeded but set an error\n");
    abort();
  }

  /* The git dialect's twin of a brace-free trawl pattern, if it has one.
   * Not where git's literal cut applies: a "**" right after the literal bytes
   * before the first wildcard, inside a component, is a globstar to git and a
   * '*' to the trawl dialect (docs/patterns.md). */
  size_t first = 0;
  while (first < pattern_len && !memchr("*?[\\", rest[first], 4))
    first++;
  bool cut = first > 0 && first + 1 < pattern_len && rest[first - 1] != '/' &&
             rest[first] == '*' && rest[first + 1] == '*';
  TrawlPattern *git = NULL;
  if (dialect == TRAWL_DIALECT_TRAWL && flags == 0 && !cut &&
      !memchr(rest, '{', pattern_len) && !memchr(rest, '}', pattern_len))
    git = trawl_pattern_compile(rest, pattern_len, TRAWL_DIALECT_GIT, flags, NULL);

  check_path(p, git, rest, pattern_len);
  size_t pos = pattern_len + 1;
  for (int k = 0; k < MAX_PATHS && pos <= rest_len; k++) {
    const char *e = memchr(rest + pos, sep, rest_len - pos);
    size_t n = e ? (size_t)(e - (rest + pos)) : rest_len - pos;
    check_path(p, git, rest + pos, n);
    pos += n + 1;
  }

  GString *witness = g_string_new(NULL);
  for (size_t i = 0; i < p->n_alts; i++) {
    if (i >= WITNESS_ALTS && i + 1 != p->n_alts)
      continue;
    for (int v = 0; v < WITNESS_VARIANTS; v++) {
      build_witness(p, &p->alts[i], v, witness);
      check_path(p, git, witness->str, witness->len);
    }
  }
  g_string_free(witness, TRUE);
  trawl_pattern_free(git);
  trawl_pattern_free(p);
  return 0;
}
