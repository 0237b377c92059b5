/* trawl — the compiled form of a pattern, shared by pattern.c (which builds
 * it) and match.c (which runs it). Private: not installed.
 *
 * A pattern is a list of alternatives (its braces expanded). An alternative is
 * a list of components (the pattern split at '/'); a component is either a
 * globstar ("**" alone, any number of whole path components), a literal, or a
 * short program of ops (literal runs, '?', '*', classes) matched against one
 * path component. Each alternative also carries the facts the prefilters use
 * and the strategy chosen for it at compile time.
 */
#ifndef TRAWL_PATTERN_PRIVATE_H
#define TRAWL_PATTERN_PRIVATE_H

#include <stdint.h>
#include <string.h>

#include "trawl/pattern.h"

enum op_kind {
  OP_LIT,   /* arg: offset into lits, len: byte count */
  OP_ANY,   /* one byte, never '/' */
  OP_STAR,  /* any run of bytes within the component */
  OP_CLASS, /* arg: index into classes */
};

struct op {
  uint8_t kind;
  uint32_t arg;
  uint32_t len;
};

enum comp_kind {
  COMP_GLOBSTAR, /* zero or more whole components */
  COMP_LITERAL,  /* exactly the bytes lits[lit_off .. lit_off + lit_len) */
  COMP_WILD,     /* ops[op_first .. op_first + op_count) */
};

struct comp {
  uint8_t kind;
  uint8_t guard;     /* bazel: GUARD_* bits (0 in every other dialect) */
  bool needs_one;    /* globstar followed by an escaped '/': no zero match */
  uint32_t op_first;
  uint32_t op_count;
  uint32_t lit_off;  /* COMP_LITERAL */
  uint32_t lit_len;
  uint32_t last_star; /* COMP_WILD: index of the last OP_STAR, or NO_STAR */
  uint32_t tail_len;  /* bytes the ops after it (or all ops, without a star) take */
};

#define NO_STAR UINT32_MAX

enum {
  GUARD_DOT = 1 << 0, /* a name starting with '.' does not match */
  GUARD_EOL = 1 << 1, /* Bazel matches the segment by a regular expression: '*'
                         takes no line terminator, \n \r or 0x85 (match.c) */
};

/* How an alternative is decided once its prefix and suffix have matched. */
enum strategy {
  STRAT_EXACT,         /* the whole alternative is literal: prefix == path */
  STRAT_STAR,          /* prefix, then '*' within one component, then suffix */
  STRAT_GLOBSTAR_STAR, /* prefix ending in '/', "**" then "*", suffix (no '/') */
  STRAT_GLOBSTAR_TAIL, /* prefix ending in '/', then a trailing "**" */
  STRAT_ENGINE,        /* anything else: the component engine */
};

struct alt {
  uint32_t comp_first;
  uint32_t comp_count;
  uint32_t head_count;  /* components before the first globstar */
  uint32_t skip_comps;  /* leading literal components the prefix check covers */
  uint32_t skip_bytes;  /* where the component after them starts */
  bool has_globstar;
  uint8_t strategy;
  bool guard_last;      /* strategy shortcut must refuse a last component starting with '.' */
  uint32_t min_len;
  uint32_t prefix_off, prefix_len; /* literal bytes every match starts with (in lits) */
  uint32_t suffix_off, suffix_len; /* literal bytes every match ends with */
  uint32_t ext_off, ext_len;       /* required extension of the last component, or 0 */
};

struct TrawlPattern {
  char *text;
  size_t text_len;
  TrawlDialect dialect;
  unsigned flags;
  bool icase;
  bool nothing;         /* matches no path (git dialect: malformed) */
  bool typed;           /* bazel: an alternative ends in a globstar after another
                           component, which matches zero of them only for a
                           directory (trawl_pattern_match_entry) */
  uint32_t typed_comps; /* typed, and the components before that globstar hold
                           no globstar: how many there are (else 0) */
  size_t min_len;

  struct alt *alts;
  size_t n_alts;
  struct comp *comps;
  struct op *ops;
  uint64_t (*classes)[4]; /* 256-bit membership maps, '/' never a member */
  char *lits;

  /* whole-pattern facts (own storage) */
  char *prefix;
  size_t prefix_len;
  char *suffix;
  size_t suffix_len;
  char *ext;
  size_t ext_len;
  GPtrArray *roots;     /* char * (owned) */

  /* git: the literal bytes before the first wildcard, compared on their own
   * when they end inside a component and a "**" follows (see pattern.c). The
   * alternatives then match what follows them. */
  char *strip;
  size_t strip_len;
};

static inline uint8_t
trawl_fold(uint8_t c)
{
  return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + ('a' - 'A')) : c;
}

static inline bool
trawl_bytes_equal(const char *a, const char *b, size_t n, bool icase)
{
  if (!icase) {
    /* Most literals in patterns are a few bytes: a loop beats a call. */
    if (n > 16)
      return memcmp(a, b, n) == 0;
    for (size_t i = 0; i < n; i++)
      if (a[i] != b[i])
        return false;
    return true;
  }
  for (size_t i = 0; i < n; i++)
    if (trawl_fold((uint8_t)a[i]) != trawl_fold((uint8_t)b[i]))
      return false;
  return true;
}

/* The engine alone, without the prefilters or strategy shortcuts, counting
 * the elementary steps it takes into *STEPS (for the linear-time tests). */
bool trawl_pattern_match_engine(const TrawlPattern *p, const char *path,
                                size_t len, uint64_t *steps);

/* Does component C of P match the LEN bytes at S (one path component)? */
bool trawl_comp_match(const TrawlPattern *p, const struct comp *c,
                      const char *s, size_t len, uint64_t *steps);

/* Is P matched by exactly the paths that end with its literal suffix
 * (trawl_pattern_literal_suffix(), case-sensitive)? The walker then decides
 * with the suffix alone. `**` then `/` then `*.ts` is; the same below
 * `src/`, `*.ts` alone (one component), and bazel's (no hidden last name)
 * are not. */
bool trawl_pattern_suffix_decides(const TrawlPattern *p);

/* Does every path strictly below directory DIR match P? True when an
 * alternative ends in a globstar ("build/ **") and what precedes it matches
 * DIR: the walker then leaves DIR closed for an exclude. */
bool trawl_pattern_covers_below(const TrawlPattern *p, const char *dir,
                                size_t len);

/* Given that P matches PATH (LEN bytes), does it match PATH as an entry
 * that is not a directory (trawl_pattern_match_entry)? Only a typed pattern
 * may say no: a bazel one ending in a globstar after another component,
 * which must then take at least one component, so the pattern without it
 * must match a proper leading part of the path: what
 * trawl_pattern_covers_below() asks of a directory. When that part has no
 * globstar it has a fixed number of components (typed_comps), and the path
 * needs one more: "src/ **" matches a file when it has a '/'. Apart from
 * the matcher's own functions so that the untyped path, every dialect's,
 * keeps its code as compiled before (bench/match_ab.py). */
bool trawl_pattern_file_ok(const TrawlPattern *p, const char *path, size_t len);

/* Does P name a hidden entry NAME explicitly: does one of its components
 * start with a literal '.' and match NAME? (".github/ **", "**" "/.env") */
bool trawl_pattern_names_hidden(const TrawlPattern *p, const char *name,
                                size_t len);

#endif /* TRAWL_PATTERN_PRIVATE_H */
