/* trawl — pattern compilation: glob text to the component IR of
 * pattern-private.h, with errors that carry byte offsets, and the facts the
 * prefilters and the walker's planner use.
 *
 * Compilation runs in three phases. The lexer (one per dialect) turns the
 * text into tokens: literal bytes, separators, '?', runs of '*', classes
 * (already reduced to 256-bit membership maps, so that a dialect's class
 * quirks cost nothing at match time), and — in the trawl dialect only — brace
 * tokens. The expander multiplies the braces out into flat token sequences,
 * one per alternative, bounded in count, size and depth. The builder splits
 * each sequence at separators into components, marks globstars, merges
 * literal runs, and derives each alternative's prefix, suffix, extension,
 * minimum length and matching strategy; the pattern's own facts are what the
 * alternatives share.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pattern-private.h"

/* Deepest brace nesting accepted; keeps the expander's recursion bounded. */
#define MAX_BRACE_DEPTH 256
/* Most tokens all alternatives together may hold after brace expansion. */
#define MAX_EXPANDED_TOKENS (1u << 20)

enum tok_kind { T_LIT, T_SEP, T_ANY, T_STAR, T_CLASS, T_LBRACE, T_COMMA, T_RBRACE };

struct tok {
  uint8_t kind;
  uint8_t byte;   /* T_LIT */
  uint32_t count; /* T_STAR: stars in the run; T_CLASS: class index */
  uint32_t off;   /* byte offset in the pattern text */
};

struct classmap {
  uint64_t w[4];
};

struct builder {
  const char *text;
  size_t len;
  TrawlDialect dialect;
  bool icase;
  bool nothing;
  GArray *toks;    /* struct tok */
  GArray *classes; /* struct classmap */
  GArray *alts;    /* struct alt */
  GArray *comps;   /* struct comp */
  GArray *ops;     /* struct op */
  GString *lits;
  size_t expanded_tokens;
};

/* ---- errors ---------------------------------------------------------- */

typedef struct {
  gssize offset;
} TrawlPatternErrorPrivate;

static void
trawl_pattern_error_private_init(TrawlPatternErrorPrivate *priv)
{
  priv->offset = -1;
}

static void
trawl_pattern_error_private_copy(const TrawlPatternErrorPrivate *src,
                                 TrawlPatternErrorPrivate *dest)
{
  dest->offset = src->offset;
}

static void
trawl_pattern_error_private_clear(TrawlPatternErrorPrivate *priv)
{
  (void)priv;
}

G_DEFINE_EXTENDED_ERROR(TrawlPatternError, trawl_pattern_error)

gssize
trawl_pattern_error_offset(const GError *error)
{
  if (error == NULL || error->domain != TRAWL_PATTERN_ERROR)
    return -1;
  TrawlPatternErrorPrivate *priv = trawl_pattern_error_get_private(error);
  return priv ? priv->offset : -1;
}

static void G_GNUC_PRINTF(5, 6)
fail(GError **error, const struct builder *b, size_t offset,
     TrawlPatternError code, const char *fmt, ...)
{
  if (error == NULL)
    return;
  va_list ap;
  va_start(ap, fmt);
  char *reason = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  /* Escape the text so that a newline or a stray byte cannot garble the
   * message; show at most a screenful of it. */
  size_t shown = MIN(b->len, 200);
  char *raw = g_strndup(b->text, shown);
  for (size_t i = 0; i < shown; i++)
    if (raw[i] == '\0')
      raw[i] = '?';
  char *esc = g_strescape(raw, NULL);
  g_set_error(error, TRAWL_PATTERN_ERROR, code, "pattern \"%s%s\": byte %zu: %s",
              esc, shown < b->len ? "..." : "", offset, reason);
  TrawlPatternErrorPrivate *priv = trawl_pattern_error_get_private(*error);
  if (priv)
    priv->offset = (gssize)offset;
  g_free(esc);
  g_free(raw);
  g_free(reason);
}

/* ---- classes ----------------------------------------------------------- */

static void
map_set(struct classmap *m, unsigned c)
{
  m->w[c >> 6] |= UINT64_C(1) << (c & 63);
}

static bool
map_has(const struct classmap *m, unsigned c)
{
  return (m->w[c >> 6] >> (c & 63)) & 1;
}

static bool is_upper(unsigned c) { return c >= 'A' && c <= 'Z'; }
static bool is_lower(unsigned c) { return c >= 'a' && c <= 'z'; }
static bool is_digit(unsigned c) { return c >= '0' && c <= '9'; }
static bool is_alpha(unsigned c) { return is_upper(c) || is_lower(c); }
static bool is_alnum(unsigned c) { return is_alpha(c) || is_digit(c); }
static bool is_graph(unsigned c) { return c > 32 && c < 127; }

/* The POSIX classes git's wildmatch knows, on ASCII only (bytes >= 0x80 are
 * in none of them). Returns -1 for an unknown name. */
static int
posix_class_has(const char *name, size_t n, unsigned c, bool icase)
{
#define IS(s) (n == sizeof(s) - 1 && memcmp(name, s, n) == 0)
  if (IS("alnum")) return is_alnum(c);
  if (IS("alpha")) return is_alpha(c);
  if (IS("blank")) return c == ' ' || c == '\t';
  if (IS("cntrl")) return c < 32 || c == 127;
  if (IS("digit")) return is_digit(c);
  if (IS("graph")) return is_graph(c);
  if (IS("lower")) return is_lower(c);
  if (IS("print")) return c >= 32 && c < 127;
  if (IS("punct")) return is_graph(c) && !is_alnum(c);
  /* git's own ctype: no '\v' or '\f' */
  if (IS("space")) return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  if (IS("upper")) return is_upper(c) || (icase && is_lower(c));
  if (IS("xdigit")) return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  return -1;
#undef IS
}

/* A bracket expression of the git and trawl dialects, parsed into items and
 * evaluated for every byte at compile time. The rules follow wildmatch's
 * observable behaviour: '!' or '^' negates; the first member may be ']';
 * '\' escapes the next byte; "a-z" is a range when a plain member precedes
 * the '-' and the byte after it is not ']'; "[:name:]" is a POSIX class and
 * "[:" without a closing ":]" is a plain '['. A class never matches '/'.
 *
 * Under ICASE the git dialect reproduces wildmatch exactly: the path byte is
 * lowered first, ranges and [:upper:] also try its upper case, but a plain
 * member is compared as written ("[A]" matches neither "a" nor "A"). The
 * trawl dialect folds every member instead (documented divergence).
 *
 * Returns the offset just past the closing ']', or 0 with *REASON set. */
struct class_item {
  uint8_t kind; /* 0 byte, 1 range, 2 posix */
  uint8_t lo, hi;
  size_t name_off, name_len;
};

static bool
class_items_have(const struct builder *b, const struct class_item *items,
                 size_t n, unsigned t)
{
  for (size_t i = 0; i < n; i++) {
    const struct class_item *it = &items[i];
    switch (it->kind) {
    case 0:
      if (t == it->lo)
        return true;
      break;
    case 1:
      if (t >= it->lo && t <= it->hi)
        return true;
      if (b->icase && b->dialect == TRAWL_DIALECT_GIT && is_lower(t) &&
          t - 32 >= it->lo && t - 32 <= it->hi)
        return true;
      break;
    default:
      if (posix_class_has(b->text + it->name_off, it->name_len, t,
                          b->icase && b->dialect == TRAWL_DIALECT_GIT) > 0)
        return true;
      break;
    }
  }
  return false;
}

static size_t
lex_git_class(struct builder *b, size_t open, struct classmap *map,
              const char **reason, size_t *where)
{
  const char *s = b->text;
  size_t len = b->len;
  size_t i = open + 1;
  bool negated = false;
  if (i < len && (s[i] == '!' || s[i] == '^')) {
    negated = true;
    i++;
  }
  GArray *items = g_array_new(FALSE, FALSE, sizeof(struct class_item));
  unsigned prev = 0; /* last plain member, 0 after a range or a class */
  bool first = true;
  size_t end = 0;
  *where = open;
  *reason = "unclosed '['";
  for (;;) {
    if (i >= len)
      goto out;
    unsigned c = (uint8_t)s[i];
    if (c == ']' && !first) {
      end = i + 1;
      break;
    }
    first = false;
    struct class_item it = {0};
    if (c == '\\') {
      if (++i >= len)
        goto out;
      it.lo = (uint8_t)s[i];
      prev = it.lo;
      i++;
    } else if (c == '-' && prev != 0 && i + 1 < len && s[i + 1] != ']') {
      i++;
      unsigned hi = (uint8_t)s[i];
      if (hi == '\\') {
        if (++i >= len)
          goto out;
        hi = (uint8_t)s[i];
      }
      it.kind = 1;
      it.lo = (uint8_t)prev;
      it.hi = (uint8_t)hi;
      prev = 0;
      i++;
    } else if (c == '[' && i + 1 < len && s[i + 1] == ':') {
      size_t j = i + 2;
      while (j < len && s[j] != ']')
        j++;
      if (j >= len)
        goto out;
      if (j < i + 3 || s[j - 1] != ':') {
        it.lo = '[';
        prev = '[';
        i++;
      } else {
        it.kind = 2;
        it.name_off = i + 2;
        it.name_len = j - 1 - (i + 2);
        if (posix_class_has(s + it.name_off, it.name_len, 'a', false) < 0) {
          *reason = "unknown character class";
          *where = i;
          goto out;
        }
        prev = 0;
        i = j + 1;
      }
    } else {
      it.lo = (uint8_t)c;
      prev = c;
      i++;
    }
    g_array_append_val(items, it);
  }

  memset(map, 0, sizeof *map);
  const struct class_item *v = (const struct class_item *)(void *)items->data;
  for (unsigned t = 0; t < 256; t++) {
    if (t == '/')
      continue;
    bool in;
    if (!b->icase)
      in = class_items_have(b, v, items->len, t);
    else if (b->dialect == TRAWL_DIALECT_GIT)
      in = class_items_have(b, v, items->len, trawl_fold((uint8_t)t));
    else
      in = class_items_have(b, v, items->len, t) ||
           class_items_have(b, v, items->len, trawl_fold((uint8_t)t)) ||
           (is_lower(t) && class_items_have(b, v, items->len, t - 32));
    if (in != negated)
      map_set(map, t);
  }
out:
  g_array_free(items, TRUE);
  return end;
}

/* A bracket expression of CMake's file(GLOB): the bracket text is found the
 * way CMake finds it (after an optional '!' or '^' and an optional leading
 * ']', up to the next ']'); when there is none the '[' is literal. The body is
 * then read as the old Spencer regex CMake hands it to reads a set: ']' or
 * '-' first are members, '-' last is a member, "x-y" a range, no escapes and
 * no POSIX classes; a reversed range makes the regex invalid, and the class
 * then matches nothing. Returns the offset past ']', or 0 when literal. */
static size_t
lex_cmake_class(struct builder *b, size_t open, struct classmap *map)
{
  const char *s = b->text;
  /* CMake splits the pattern at '/' before it reads brackets: a class ends
   * with its component. */
  const char *slash = memchr(s + open, '/', b->len - open);
  size_t len = slash ? (size_t)(slash - s) : b->len;
  size_t j = open + 1;
  if (j < len && (s[j] == '!' || s[j] == '^'))
    j++;
  if (j < len && s[j] == ']')
    j++;
  while (j < len && s[j] != ']')
    j++;
  if (j >= len)
    return 0;

  size_t k = open + 1;
  bool negated = false;
  if (s[k] == '!' || s[k] == '^') {
    negated = true;
    k++;
  }
  struct classmap in = {{0}};
  bool valid = true;
  if (k < j && (s[k] == ']' || s[k] == '-'))
    map_set(&in, (uint8_t)s[k++]);
  while (k < j) {
    if (s[k] == '-') {
      k++;
      if (k >= j) {
        map_set(&in, '-');
      } else {
        unsigned lo = (uint8_t)s[k - 2] + 1;
        unsigned hi = (uint8_t)s[k];
        if (lo > hi + 1)
          valid = false;
        for (; lo <= hi; lo++)
          map_set(&in, lo);
        k++;
      }
    } else {
      map_set(&in, (uint8_t)s[k++]);
    }
  }
  memset(map, 0, sizeof *map);
  if (valid) {
    for (unsigned t = 0; t < 256; t++) {
      bool has = map_has(&in, t);
      if (b->icase)
        has = has || map_has(&in, trawl_fold((uint8_t)t)) ||
              (is_lower(t) && map_has(&in, t - 32));
      if (has != negated && t != '/')
        map_set(map, t);
    }
  }
  return j + 1;
}

/* ---- lexers ------------------------------------------------------------ */

static void
emit(struct builder *b, uint8_t kind, uint8_t byte, uint32_t count, size_t off)
{
  struct tok t = {kind, byte, count, (uint32_t)off};
  g_array_append_val(b->toks, t);
}

static uint32_t
add_class(struct builder *b, const struct classmap *m)
{
  g_array_append_val(b->classes, *m);
  return b->classes->len - 1;
}

/* git and trawl: wildmatch syntax; STRICT turns malformed input into errors
 * (trawl) instead of a pattern that matches nothing (git); BRACES adds
 * {a,b} alternation. */
static bool
lex_wildmatch(struct builder *b, bool strict, bool braces, GError **error)
{
  const char *s = b->text;
  size_t len = b->len;
  size_t brace_open[MAX_BRACE_DEPTH];
  size_t depth = 0;
  for (size_t i = 0; i < len;) {
    uint8_t c = (uint8_t)s[i];
    switch (c) {
    case '\\':
      if (i + 1 >= len) {
        if (strict) {
          fail(error, b, i, TRAWL_PATTERN_ERROR_SYNTAX,
               "trailing '\\' escapes nothing");
          return false;
        }
        b->nothing = true;
        return true;
      }
      if (s[i + 1] == '/') {
        /* count 1 marks an escaped separator: after "**" it does not
         * let the globstar match zero components (wildmatch's rule). */
        emit(b, T_SEP, '/', 1, i);
      } else if (b->icase && !strict && is_upper((uint8_t)s[i + 1])) {
        /* wildmatch folds the path byte but not an escaped pattern byte:
         * under icase "\A" matches nothing. An empty class says so. */
        struct classmap none = {{0}};
        emit(b, T_CLASS, 0, add_class(b, &none), i);
      } else {
        emit(b, T_LIT, (uint8_t)s[i + 1], 0, i);
      }
      i += 2;
      break;
    case '*': {
      size_t j = i;
      while (j < len && s[j] == '*')
        j++;
      emit(b, T_STAR, 0, (uint32_t)(j - i), i);
      i = j;
      break;
    }
    case '?':
      emit(b, T_ANY, 0, 0, i++);
      break;
    case '[': {
      struct classmap m;
      const char *reason;
      size_t where;
      size_t end = lex_git_class(b, i, &m, &reason, &where);
      if (end == 0) {
        if (strict) {
          fail(error, b, where, TRAWL_PATTERN_ERROR_SYNTAX, "%s", reason);
          return false;
        }
        b->nothing = true;
        return true;
      }
      emit(b, T_CLASS, 0, add_class(b, &m), i);
      i = end;
      break;
    }
    case '/':
      emit(b, T_SEP, '/', 0, i++);
      break;
    case '{':
      if (!braces)
        goto literal;
      if (depth == MAX_BRACE_DEPTH) {
        fail(error, b, i, TRAWL_PATTERN_ERROR_TOO_LONG,
             "braces nested more than %d deep", MAX_BRACE_DEPTH);
        return false;
      }
      brace_open[depth++] = i;
      emit(b, T_LBRACE, 0, 0, i++);
      break;
    case ',':
      if (!braces || depth == 0)
        goto literal;
      emit(b, T_COMMA, 0, 0, i++);
      break;
    case '}':
      if (!braces)
        goto literal;
      if (depth == 0) {
        fail(error, b, i, TRAWL_PATTERN_ERROR_SYNTAX,
             "unmatched '}' (write '\\}' for a literal brace)");
        return false;
      }
      depth--;
      emit(b, T_RBRACE, 0, 0, i++);
      break;
    default:
    literal:
      emit(b, T_LIT, c, 0, i++);
      break;
    }
  }
  if (depth > 0) {
    fail(error, b, brace_open[depth - 1], TRAWL_PATTERN_ERROR_SYNTAX,
         "unclosed '{'");
    return false;
  }
  return true;
}

static bool
lex_cmake(struct builder *b)
{
  const char *s = b->text;
  for (size_t i = 0; i < b->len;) {
    uint8_t c = (uint8_t)s[i];
    if (c == '*') {
      emit(b, T_STAR, 0, 1, i++);
    } else if (c == '?') {
      emit(b, T_ANY, 0, 0, i++);
    } else if (c == '/') {
      emit(b, T_SEP, '/', 0, i++);
    } else if (c == '[') {
      struct classmap m;
      size_t end = lex_cmake_class(b, i, &m);
      if (end == 0) {
        emit(b, T_LIT, c, 0, i++);
      } else {
        emit(b, T_CLASS, 0, add_class(b, &m), i);
        i = end;
      }
    } else {
      emit(b, T_LIT, c, 0, i++);
    }
  }
  return true;
}

/* Does Bazel 4.2.3 match segment SEG (N bytes, no '?') by a regular
 * expression (UnixGlob.matches)? Not "*" or "**", not one without '*' (it
 * is looked up by name), not one whose only '*' is its first or last byte
 * (a suffix or prefix compare); every other: there '*' is ".*", which takes
 * no line terminator, and '(' ')' are the expression's own. */
static bool
bazel_regex_segment(const char *seg, size_t n)
{
  size_t stars = 0;
  for (size_t i = 0; i < n; i++)
    stars += seg[i] == '*';
  if (stars == 0 || (n == 2 && stars == 2))
    return false;
  return !(stars == 1 && (seg[0] == '*' || seg[n - 1] == '*'));
}

/* Bazel's glob(): the segment rules are checked on the text, the way Bazel
 * checks them before globbing. */
static bool
lex_bazel(struct builder *b, GError **error)
{
  const char *s = b->text;
  size_t len = b->len;
  if (len == 0) {
    fail(error, b, 0, TRAWL_PATTERN_ERROR_SYNTAX, "pattern cannot be empty");
    return false;
  }
  if (s[0] == '/') {
    fail(error, b, 0, TRAWL_PATTERN_ERROR_SYNTAX, "pattern cannot be absolute");
    return false;
  }
  for (size_t start = 0; start <= len;) {
    const char *slash = memchr(s + start, '/', len - start);
    size_t end = slash ? (size_t)(slash - s) : len;
    size_t n = end - start;
    const char *seg = s + start;
    if (n == 0) {
      fail(error, b, start, TRAWL_PATTERN_ERROR_SYNTAX,
           "empty segment not permitted");
      return false;
    }
    if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.')) {
      fail(error, b, start, TRAWL_PATTERN_ERROR_SYNTAX,
           "segment '%.*s' not permitted", (int)n, seg);
      return false;
    }
    const char *dstar = g_strstr_len(seg, (gssize)n, "**");
    if (dstar && n != 2) {
      fail(error, b, (size_t)(dstar - s), TRAWL_PATTERN_ERROR_SYNTAX,
           "recursive wildcard '**' must be its own segment");
      return false;
    }
    /* Where Bazel 4.2.3 answers otherwise than its documentation, refuse
     * rather than answer differently. '?': an include with one is an error,
     * an exclude's is a literal byte in some segments and any byte in
     * others. '(' and ')': regular-expression syntax in the segments Bazel
     * matches by a regular expression (bazel_regex_segment). */
    const char *q = memchr(seg, '?', n);
    if (q) {
      fail(error, b, (size_t)(q - s), TRAWL_PATTERN_ERROR_SYNTAX,
           "wildcard ? forbidden (Bazel 4.2.3 refuses it in an include, and reads it "
           "literally in some excludes)");
      return false;
    }
    if (bazel_regex_segment(seg, n)) {
      for (size_t i = 0; i < n; i++)
        if (seg[i] == '(' || seg[i] == ')') {
          fail(error, b, start + i, TRAWL_PATTERN_ERROR_SYNTAX,
               "'%c' in a segment with '*' in the middle (Bazel 4.2.3 reads it as "
               "regular-expression syntax)", seg[i]);
          return false;
        }
    }
    for (size_t i = start; i < end;) {
      if (s[i] == '*') {
        size_t j = i;
        while (j < end && s[j] == '*')
          j++;
        emit(b, T_STAR, 0, (uint32_t)(j - i), i);
        i = j;
      } else if (s[i] == '?') {
        emit(b, T_ANY, 0, 0, i++);
      } else {
        emit(b, T_LIT, (uint8_t)s[i], 0, i);
        i++;
      }
    }
    if (end < len)
      emit(b, T_SEP, '/', 0, end);
    start = end + 1;
  }
  return true;
}

/* ---- brace expansion ---------------------------------------------------- */

/* A sequence is a GArray of struct tok; a set of sequences a GPtrArray. */
static GPtrArray *
seqset_new(void)
{
  GPtrArray *set = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  g_ptr_array_add(set, g_array_new(FALSE, FALSE, sizeof(struct tok)));
  return set;
}

/* Expand tokens from *I up to the matching ',' or '}' (or the end) into every
 * sequence they stand for. NULL with ERROR set when a bound is exceeded. */
static GPtrArray *
expand(struct builder *b, size_t *i, GError **error)
{
  const struct tok *toks = (const struct tok *)(void *)b->toks->data;
  size_t n = b->toks->len;
  GPtrArray *result = seqset_new();
  while (*i < n) {
    const struct tok *t = &toks[*i];
    if (t->kind == T_COMMA || t->kind == T_RBRACE)
      break;
    if (t->kind != T_LBRACE) {
      for (guint k = 0; k < result->len; k++)
        g_array_append_val((GArray *)result->pdata[k], *t);
      b->expanded_tokens += result->len;
      (*i)++;
    } else {
      size_t brace_off = t->off;
      (*i)++;
      GPtrArray *choices = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
      for (;;) {
        GPtrArray *sub = expand(b, i, error);
        if (sub == NULL) {
          g_ptr_array_unref(choices);
          g_ptr_array_unref(result);
          return NULL;
        }
        for (guint k = 0; k < sub->len; k++)
          g_ptr_array_add(choices, g_array_ref(sub->pdata[k]));
        g_ptr_array_unref(sub);
        /* The lexer balanced the braces: a ',' or '}' is next. */
        uint8_t kind = toks[*i].kind;
        (*i)++;
        if (kind == T_RBRACE)
          break;
      }
      if ((size_t)result->len * choices->len > TRAWL_PATTERN_MAX_ALTERNATIVES) {
        fail(error, b, brace_off, TRAWL_PATTERN_ERROR_TOO_LONG,
             "braces expand to more than %d alternatives",
             TRAWL_PATTERN_MAX_ALTERNATIVES);
        g_ptr_array_unref(choices);
        g_ptr_array_unref(result);
        return NULL;
      }
      GPtrArray *product = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
      for (guint r = 0; r < result->len; r++) {
        GArray *head = result->pdata[r];
        for (guint c = 0; c < choices->len; c++) {
          GArray *tail = choices->pdata[c];
          GArray *seq = g_array_sized_new(FALSE, FALSE, sizeof(struct tok),
                                          head->len + tail->len);
          g_array_append_vals(seq, head->data, head->len);
          g_array_append_vals(seq, tail->data, tail->len);
          b->expanded_tokens += seq->len;
          g_ptr_array_add(product, seq);
        }
      }
      g_ptr_array_unref(choices);
      g_ptr_array_unref(result);
      result = product;
    }
    if (b->expanded_tokens > MAX_EXPANDED_TOKENS) {
      fail(error, b, t->off, TRAWL_PATTERN_ERROR_TOO_LONG,
           "braces expand to more than %u bytes of pattern",
           MAX_EXPANDED_TOKENS);
      g_ptr_array_unref(result);
      return NULL;
    }
  }
  return result;
}

/* ---- building alternatives --------------------------------------------- */

static uint32_t
add_lits(struct builder *b, const char *bytes, size_t n)
{
  uint32_t off = (uint32_t)b->lits->len;
  g_string_append_len(b->lits, bytes, (gssize)n);
  return off;
}

static bool
is_globstar_run(const struct builder *b, uint32_t stars)
{
  switch (b->dialect) {
  case TRAWL_DIALECT_CMAKE:
    return false;
  case TRAWL_DIALECT_BAZEL:
    return stars == 2;
  default:
    return stars >= 2;
  }
}

/* Build one component from tokens T[0..N) (no separators among them). */
static void
build_comp(struct builder *b, const struct tok *t, size_t n)
{
  struct comp c = {0};
  uint32_t stars = 0;
  bool only_stars = n > 0, all_lit = true;
  for (size_t i = 0; i < n; i++) {
    if (t[i].kind == T_STAR)
      stars += t[i].count;
    else
      only_stars = false;
    if (t[i].kind != T_LIT)
      all_lit = false;
  }
  if (only_stars && is_globstar_run(b, stars)) {
    c.kind = COMP_GLOBSTAR;
  } else if (all_lit) {
    c.kind = COMP_LITERAL;
    c.lit_off = (uint32_t)b->lits->len;
    for (size_t i = 0; i < n; i++)
      g_string_append_c(b->lits, (char)t[i].byte);
    c.lit_len = (uint32_t)n;
  } else {
    c.kind = COMP_WILD;
    c.op_first = b->ops->len;
    for (size_t i = 0; i < n;) {
      struct op o = {0};
      if (t[i].kind == T_LIT) {
        o.kind = OP_LIT;
        o.arg = (uint32_t)b->lits->len;
        while (i < n && t[i].kind == T_LIT)
          g_string_append_c(b->lits, (char)t[i++].byte);
        o.len = (uint32_t)b->lits->len - o.arg;
      } else if (t[i].kind == T_STAR) {
        o.kind = OP_STAR;
        while (i < n && t[i].kind == T_STAR)
          i++;
      } else if (t[i].kind == T_ANY) {
        o.kind = OP_ANY;
        i++;
      } else {
        o.kind = OP_CLASS;
        o.arg = t[i].count;
        i++;
      }
      g_array_append_val(b->ops, o);
    }
    c.op_count = b->ops->len - c.op_first;
    c.last_star = NO_STAR;
    c.tail_len = 0;
    for (uint32_t i = c.op_count; i-- > 0;) {
      const struct op *o = &g_array_index(b->ops, struct op, c.op_first + i);
      if (o->kind == OP_STAR) {
        c.last_star = i;
        break;
      }
      c.tail_len += o->kind == OP_LIT ? o->len : 1;
    }
    if (b->dialect == TRAWL_DIALECT_BAZEL) {
      const struct op *first = &g_array_index(b->ops, struct op, c.op_first);
      bool lone_star = c.op_count == 1 && first->kind == OP_STAR;
      bool dot_first = first->kind == OP_LIT && b->lits->str[first->arg] == '.';
      uint32_t n_stars = 0;
      for (uint32_t i = 0; i < c.op_count; i++)
        n_stars += first[i].kind == OP_STAR;
      const struct op *last = first + c.op_count - 1;
      /* bazel_regex_segment() on the ops (a '*' is one op, '?' refused). */
      bool regex = !(n_stars == 1 && (first->kind == OP_STAR || last->kind == OP_STAR));
      c.guard = (uint8_t)((!lone_star && !dot_first ? GUARD_DOT : 0) | (regex ? GUARD_EOL : 0));
    }
  }
  g_array_append_val(b->comps, c);
}

static const struct comp *
comp_at(const struct builder *b, uint32_t i)
{
  return &g_array_index(b->comps, struct comp, i);
}

static const struct op *
op_at(const struct builder *b, uint32_t i)
{
  return &g_array_index(b->ops, struct op, i);
}

/* Trawl-dialect checks on one expanded alternative: paths are relative and
 * normalised, so a pattern that could only match something else is a
 * mistake worth naming. */
static bool
check_trawl_shape(struct builder *b, const struct tok *t, size_t n, GError **error)
{
  if (n == 0) {
    fail(error, b, 0, TRAWL_PATTERN_ERROR_SYNTAX,
         b->len == 0 ? "empty pattern" : "an alternative of the braces is empty");
    return false;
  }
  if (t[0].kind == T_SEP) {
    fail(error, b, t[0].off, TRAWL_PATTERN_ERROR_SYNTAX,
         "absolute pattern: paths are relative to the root");
    return false;
  }
  if (t[n - 1].kind == T_SEP) {
    fail(error, b, t[n - 1].off, TRAWL_PATTERN_ERROR_SYNTAX,
         "trailing '/': write 'dir/**' for everything below a directory");
    return false;
  }
  for (size_t start = 0; start <= n;) {
    size_t end = start;
    while (end < n && t[end].kind != T_SEP)
      end++;
    size_t k = end - start;
    if (k == 0) {
      fail(error, b, t[start].off, TRAWL_PATTERN_ERROR_SYNTAX,
           "empty path component ('//')");
      return false;
    }
    bool dots = k <= 2;
    for (size_t i = start; i < end && dots; i++)
      dots = t[i].kind == T_LIT && t[i].byte == '.';
    if (dots) {
      fail(error, b, t[start].off, TRAWL_PATTERN_ERROR_SYNTAX,
           "'.' and '..' components never match: paths are normalised");
      return false;
    }
    start = end + 1;
  }
  return true;
}

/* The literal bytes at the start of a component's match, and at its end. */
static void
comp_edges(const struct builder *b, const struct comp *c, const char **head,
           size_t *head_len, const char **tail, size_t *tail_len)
{
  *head_len = *tail_len = 0;
  *head = *tail = b->lits->str;
  if (c->kind == COMP_LITERAL) {
    *head = *tail = b->lits->str + c->lit_off;
    *head_len = *tail_len = c->lit_len;
  } else if (c->kind == COMP_WILD) {
    const struct op *f = op_at(b, c->op_first);
    const struct op *l = op_at(b, c->op_first + c->op_count - 1);
    if (f->kind == OP_LIT) {
      *head = b->lits->str + f->arg;
      *head_len = f->len;
    }
    if (l->kind == OP_LIT) {
      *tail = b->lits->str + l->arg;
      *tail_len = l->len;
    }
  }
}

static uint32_t
comp_min_len(const struct builder *b, const struct comp *c)
{
  if (c->kind == COMP_LITERAL)
    return c->lit_len;
  uint32_t n = 0;
  for (uint32_t i = 0; i < c->op_count; i++) {
    const struct op *o = op_at(b, c->op_first + i);
    n += o->kind == OP_LIT ? o->len : o->kind == OP_STAR ? 0 : 1;
  }
  return n;
}

/* Prefix, suffix, extension, minimum length and strategy of alternative A. */
static void
derive_alt_facts(struct builder *b, struct alt *a)
{
  const uint32_t n = a->comp_count;
  const bool bazel = b->dialect == TRAWL_DIALECT_BAZEL;
  GString *buf = g_string_new(NULL);

  /* Prefix: whole literal components, each with the '/' after it, then the
   * leading literal of the first wildcard component. The '/' before a
   * globstar is required except before Bazel's trailing one ("a/ **"
   * matches "a"). */
  for (uint32_t i = 0; i < n; i++) {
    const struct comp *c = comp_at(b, a->comp_first + i);
    const char *h, *t;
    size_t hl, tl;
    if (c->kind == COMP_GLOBSTAR)
      break;
    comp_edges(b, c, &h, &hl, &t, &tl);
    g_string_append_len(buf, h, (gssize)hl);
    if (c->kind != COMP_LITERAL || i + 1 == n)
      break;
    const struct comp *next = comp_at(b, a->comp_first + i + 1);
    if (bazel && next->kind == COMP_GLOBSTAR && i + 2 == n)
      break;
    g_string_append_c(buf, '/');
  }
  a->prefix_len = (uint32_t)buf->len;
  a->prefix_off = add_lits(b, buf->str, buf->len);

  /* Suffix: the same from the end; the '/' after a globstar is not required
   * ("** /b" matches "b"). */
  g_string_truncate(buf, 0);
  for (uint32_t i = n; i-- > 0;) {
    const struct comp *c = comp_at(b, a->comp_first + i);
    const char *h, *t;
    size_t hl, tl;
    if (c->kind == COMP_GLOBSTAR)
      break;
    comp_edges(b, c, &h, &hl, &t, &tl);
    g_string_prepend_len(buf, t, (gssize)tl);
    if (c->kind != COMP_LITERAL || i == 0)
      break;
    if (comp_at(b, a->comp_first + i - 1)->kind == COMP_GLOBSTAR)
      break;
    g_string_prepend_c(buf, '/');
  }
  a->suffix_len = (uint32_t)buf->len;
  a->suffix_off = add_lits(b, buf->str, buf->len);

  /* Extension: from the last '.' of the last component's literal tail. */
  a->ext_len = 0;
  if (n > 0) {
    const struct comp *last = comp_at(b, a->comp_first + n - 1);
    const char *h, *t;
    size_t hl, tl;
    comp_edges(b, last, &h, &hl, &t, &tl);
    const char *dot = NULL;
    for (size_t j = tl; j-- > 0 && !dot;)
      if (t[j] == '.')
        dot = t + j;
    if (dot) {
      a->ext_off = (uint32_t)(dot - b->lits->str);
      a->ext_len = (uint32_t)(t + tl - dot);
    }
  }

  /* Minimum length: every non-globstar component's minimum, the separators
   * between them, and what a trailing globstar must add (git and trawl: a
   * '/' and at least one byte; Bazel: nothing). */
  uint32_t min = 0, plain = 0;
  bool needs_one = false;
  a->has_globstar = false;
  a->head_count = n;
  for (uint32_t i = 0; i < n; i++) {
    const struct comp *c = comp_at(b, a->comp_first + i);
    if (c->kind == COMP_GLOBSTAR) {
      if (!a->has_globstar)
        a->head_count = i;
      a->has_globstar = true;
      if (c->needs_one) {
        needs_one = true;
        min++;
      }
      continue;
    }
    min += comp_min_len(b, c);
    plain++;
  }
  if (plain > 1)
    min += plain - 1;
  /* A trailing globstar (git, trawl) needs the '/' before it. */
  if (n > 1 && comp_at(b, a->comp_first + n - 1)->kind == COMP_GLOBSTAR && !bazel)
    min += 1;
  a->min_len = min;

  /* Strategy: after the literal leading components, the shapes that the
   * prefix, the suffix and the length decide alone. */
  uint32_t k = 0;
  while (k < n && comp_at(b, a->comp_first + k)->kind == COMP_LITERAL)
    k++;
  const struct comp *r0 = k < n ? comp_at(b, a->comp_first + k) : NULL;
  const struct comp *r1 = k + 1 < n ? comp_at(b, a->comp_first + k + 1) : NULL;
  /* The engine may start after leading literal components whose bytes, and
   * the '/' after each, the prefix check has already compared. */
  a->skip_comps = 0;
  a->skip_bytes = 0;
  for (uint32_t i = 0; i < a->head_count; i++) {
    const struct comp *c = comp_at(b, a->comp_first + i);
    if (c->kind != COMP_LITERAL || i + 1 == n ||
        a->skip_bytes + c->lit_len + 1 > a->prefix_len)
      break;
    a->skip_comps++;
    a->skip_bytes += c->lit_len + 1;
  }

  a->strategy = STRAT_ENGINE;
  a->guard_last = false;
  if (needs_one) {
    /* rare ("**\\/"): the engine handles it */
  } else if (k == n) {
    a->strategy = STRAT_EXACT;
  } else if (n - k == 1 && r0->kind == COMP_GLOBSTAR && !bazel) {
    a->strategy = STRAT_GLOBSTAR_TAIL;
  } else if (n - k == 2 && r0->kind == COMP_GLOBSTAR && r1->kind == COMP_WILD) {
    const struct op *o = op_at(b, r1->op_first);
    if (o->kind == OP_STAR && !(r1->guard & GUARD_EOL) &&
        (r1->op_count == 1 || (r1->op_count == 2 && o[1].kind == OP_LIT))) {
      a->strategy = STRAT_GLOBSTAR_STAR;
      a->guard_last = (r1->guard & GUARD_DOT) != 0;
    }
  } else if (n - k == 1 && r0->kind == COMP_WILD) {
    const struct op *o = op_at(b, r0->op_first);
    uint32_t m = r0->op_count, s = 0;
    if (m > 0 && o[0].kind == OP_LIT)
      s = 1;
    /* Not a segment Bazel matches by a regular expression: there '*' does
     * not take every byte, which only the engine checks. */
    bool shape = s < m && o[s].kind == OP_STAR &&
                 (m == s + 1 || (m == s + 2 && o[s + 1].kind == OP_LIT)) &&
                 !(r0->guard & GUARD_EOL);
    if (shape) {
      a->strategy = STRAT_STAR;
      /* A leading literal that is not '.' already keeps Bazel's dot rule. */
      a->guard_last = (r0->guard & GUARD_DOT) && s == 0;
    }
  }
  g_string_free(buf, TRUE);
}

static bool
build_alt(struct builder *b, const struct tok *t, size_t n, GError **error)
{
  if (b->dialect == TRAWL_DIALECT_TRAWL && !check_trawl_shape(b, t, n, error))
    return false;
  struct alt a = {0};
  a.comp_first = b->comps->len;
  for (size_t start = 0; start <= n;) {
    size_t end = start;
    while (end < n && t[end].kind != T_SEP)
      end++;
    size_t k = end - start;
    /* CMake normalises the pattern's path first: "a//b", "a/./b" and
     * "./a/b" are "a/b" (a leading '/' stays: the pattern is absolute). */
    bool skip = b->dialect == TRAWL_DIALECT_CMAKE &&
                ((k == 0 && start > 0) ||
                 (k == 1 && t[start].kind == T_LIT && t[start].byte == '.'));
    if (!skip) {
      build_comp(b, k ? t + start : NULL, k);
      guint cn = b->comps->len;
      struct comp *last = &g_array_index(b->comps, struct comp, cn - 1);
      if (last->kind == COMP_GLOBSTAR && end < n && t[end].count == 1)
        last->needs_one = true;
      /* "**" followed by "**" is one globstar. */
      if (cn - a.comp_first >= 2 && last->kind == COMP_GLOBSTAR &&
          comp_at(b, cn - 2)->kind == COMP_GLOBSTAR) {
        g_array_index(b->comps, struct comp, cn - 2).needs_one |= last->needs_one;
        g_array_set_size(b->comps, cn - 1);
      }
    }
    start = end + 1;
  }
  if (b->comps->len == a.comp_first) /* cmake "." or "./": the root itself */
    build_comp(b, NULL, 0);
  a.comp_count = b->comps->len - a.comp_first;
  derive_alt_facts(b, &a);
  g_array_append_val(b->alts, a);
  return true;
}

/* ---- whole-pattern facts ------------------------------------------------ */

static void
derive_pattern_facts(TrawlPattern *p)
{
  bool icase = p->icase;
  const struct alt *a0 = &p->alts[0];
  size_t pre = a0->prefix_len, suf = a0->suffix_len;
  size_t min = a0->min_len;
  bool same_ext = a0->ext_len > 0;
  for (size_t i = 1; i < p->n_alts; i++) {
    const struct alt *a = &p->alts[i];
    const char *x = p->lits + a0->prefix_off, *y = p->lits + a->prefix_off;
    size_t k = 0;
    while (k < pre && k < a->prefix_len && trawl_bytes_equal(x + k, y + k, 1, icase))
      k++;
    pre = k;
    const char *xe = p->lits + a0->suffix_off + a0->suffix_len;
    const char *ye = p->lits + a->suffix_off + a->suffix_len;
    k = 0;
    while (k < suf && k < a->suffix_len &&
           trawl_bytes_equal(xe - k - 1, ye - k - 1, 1, icase))
      k++;
    suf = k;
    min = MIN(min, a->min_len);
    same_ext = same_ext && a->ext_len == a0->ext_len &&
               trawl_bytes_equal(p->lits + a->ext_off, p->lits + a0->ext_off,
                                 a0->ext_len, icase);
  }
  p->prefix = g_strndup(p->lits + a0->prefix_off, pre);
  p->prefix_len = pre;
  p->suffix = g_strndup(p->lits + a0->suffix_off + a0->suffix_len - suf, suf);
  p->suffix_len = suf;
  if (same_ext) {
    p->ext = g_strndup(p->lits + a0->ext_off, a0->ext_len);
    p->ext_len = a0->ext_len;
  }
  p->min_len = min;
}

static int
compare_roots(const void *x, const void *y)
{
  return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Literal leading directories: the literal components before the first
 * wildcard, not counting the last component of an all-literal alternative
 * (it names the entry, not a directory). Case-folded patterns must start at
 * the root: the directory on disk may be spelled in any case. */
static void
derive_roots(TrawlPattern *p)
{
  GPtrArray *roots = g_ptr_array_new();
  if (!p->nothing) {
    for (size_t i = 0; i < p->n_alts && !p->icase; i++) {
      const struct alt *a = &p->alts[i];
      uint32_t k = 0;
      while (k < a->comp_count && p->comps[a->comp_first + k].kind == COMP_LITERAL)
        k++;
      if (k == a->comp_count)
        k--;
      GString *r = g_string_new(NULL);
      for (uint32_t j = 0; j < k; j++) {
        const struct comp *c = &p->comps[a->comp_first + j];
        if (j)
          g_string_append_c(r, '/');
        g_string_append_len(r, p->lits + c->lit_off, c->lit_len);
      }
      /* A walk started in a directory never sees the directory itself: one
       * the pattern matches (bazel's "src/ **" matches "src") starts from
       * its parent. */
      if (k > 0 && trawl_pattern_match(p, r->str, r->len)) {
        const char *slash = strrchr(r->str, '/');
        g_string_truncate(r, slash ? (gsize)(slash - r->str) : 0);
      }
      g_ptr_array_add(roots, g_string_free(r, FALSE));
    }
    if (p->icase)
      g_ptr_array_add(roots, g_strdup(""));
  }
  if (roots->len > 1)
    qsort(roots->pdata, roots->len, sizeof(char *), compare_roots);
  /* Sorted, a root's ancestors come before it: keep those no kept root
   * contains. */
  GPtrArray *kept = g_ptr_array_new();
  for (guint i = 0; i < roots->len; i++) {
    char *r = roots->pdata[i];
    bool covered = false;
    for (guint j = 0; j < kept->len && !covered; j++) {
      const char *k = kept->pdata[j];
      size_t kl = strlen(k);
      covered = kl == 0 || (strncmp(r, k, kl) == 0 && (r[kl] == '/' || r[kl] == '\0'));
    }
    if (covered)
      g_free(r);
    else
      g_ptr_array_add(kept, r);
  }
  g_ptr_array_free(roots, TRUE);
  g_ptr_array_set_free_func(kept, g_free);
  p->roots = kept;
}

/* ---- public ----------------------------------------------------------- */

static void *
steal_array(GArray *a)
{
  return g_array_free(a, FALSE);
}

static TrawlPattern *compile_plain(const char *text, size_t len,
                                   TrawlDialect dialect, unsigned flags,
                                   GError **error);

/* Where git's pathspec matching would cut PATTERN before handing it to
 * wildmatch: git compares the bytes before the first wildcard ('*', '?',
 * '[' or '\\') on their own and runs wildmatch on the rest, so a "**" right
 * after that cut counts as starting the pattern: "a**" takes "a/b", and
 * "a**" followed by "/b" takes "ab". The cut changes the meaning only there;
 * 0 elsewhere. */
static size_t
git_literal_cut(const char *text, size_t len)
{
  size_t f = 0;
  while (f < len && !strchr("*?[\\", text[f]))
    f++;
  if (f == 0 || f + 1 >= len || text[f - 1] == '/' || text[f] != '*' || text[f + 1] != '*')
    return 0;
  return f;
}

TrawlPattern *
trawl_pattern_compile(const char *text, size_t len, TrawlDialect dialect,
                      unsigned flags, GError **error)
{
  size_t cut = 0;
  if (dialect == TRAWL_DIALECT_GIT && len <= TRAWL_PATTERN_MAX_LEN &&
      (len == 0 || memchr(text, '\0', len) == NULL))
    cut = git_literal_cut(text, len);
  if (cut == 0)
    return compile_plain(text, len, dialect, flags, error);

  TrawlPattern *p = compile_plain(text + cut, len - cut, dialect, flags, error);
  if (p == NULL)
    return NULL;
  g_free(p->text);
  p->text = g_strndup(text, len);
  p->text_len = len;
  p->strip = g_strndup(text, cut);
  p->strip_len = cut;
  if (!p->nothing) {
    char *prefix = g_strconcat(p->strip, p->prefix, NULL);
    g_free(p->prefix);
    p->prefix = prefix;
    p->prefix_len += cut;
    p->min_len += cut;
    /* Roots: the directory part of the cut (the rest starts with "**"). */
    const char *slash = strrchr(p->strip, '/');
    g_ptr_array_set_size(p->roots, 0);
    g_ptr_array_add(p->roots, (slash && !p->icase)
                                  ? g_strndup(p->strip, (size_t)(slash - p->strip))
                                  : g_strdup(""));
  }
  return p;
}

static TrawlPattern *
compile_plain(const char *text, size_t len, TrawlDialect dialect,
              unsigned flags, GError **error)
{
  g_return_val_if_fail(text != NULL || len == 0, NULL);
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);

  struct builder b = {
    .text = text ? text : "",
    .len = len,
    .dialect = dialect,
    .icase = (flags & TRAWL_PATTERN_ICASE) != 0,
  };
  if (dialect > TRAWL_DIALECT_BAZEL) {
    fail(error, &b, 0, TRAWL_PATTERN_ERROR_DIALECT, "unknown dialect %d", (int)dialect);
    return NULL;
  }
  if (len > TRAWL_PATTERN_MAX_LEN) {
    b.len = 200;
    fail(error, &b, TRAWL_PATTERN_MAX_LEN, TRAWL_PATTERN_ERROR_TOO_LONG,
         "pattern is %zu bytes; the limit is %d", len, TRAWL_PATTERN_MAX_LEN);
    return NULL;
  }
  const char *nul = len ? memchr(b.text, '\0', len) : NULL;
  if (nul) {
    fail(error, &b, (size_t)(nul - b.text), TRAWL_PATTERN_ERROR_NUL,
         "embedded NUL byte");
    return NULL;
  }

  b.toks = g_array_new(FALSE, FALSE, sizeof(struct tok));
  b.classes = g_array_new(FALSE, FALSE, sizeof(struct classmap));
  b.alts = g_array_new(FALSE, FALSE, sizeof(struct alt));
  b.comps = g_array_new(FALSE, FALSE, sizeof(struct comp));
  b.ops = g_array_new(FALSE, FALSE, sizeof(struct op));
  b.lits = g_string_new(NULL);

  bool ok;
  switch (dialect) {
  case TRAWL_DIALECT_TRAWL: ok = lex_wildmatch(&b, true, true, error); break;
  case TRAWL_DIALECT_GIT: ok = lex_wildmatch(&b, false, false, error); break;
  case TRAWL_DIALECT_CMAKE: ok = lex_cmake(&b); break;
  default: ok = lex_bazel(&b, error); break;
  }

  GPtrArray *seqs = NULL;
  if (ok && !b.nothing) {
    size_t i = 0;
    seqs = expand(&b, &i, error);
    ok = seqs != NULL;
  }
  for (guint i = 0; ok && seqs && i < seqs->len; i++) {
    GArray *seq = seqs->pdata[i];
    ok = build_alt(&b, (const struct tok *)(void *)seq->data, seq->len, error);
  }
  if (seqs)
    g_ptr_array_unref(seqs);
  g_array_free(b.toks, TRUE);

  if (!ok) {
    g_array_free(b.classes, TRUE);
    g_array_free(b.alts, TRUE);
    g_array_free(b.comps, TRUE);
    g_array_free(b.ops, TRUE);
    g_string_free(b.lits, TRUE);
    return NULL;
  }

  TrawlPattern *p = g_new0(TrawlPattern, 1);
  p->text = g_strndup(b.text, len);
  p->text_len = len;
  p->dialect = dialect;
  p->flags = flags;
  p->icase = b.icase;
  p->nothing = b.nothing;
  p->n_alts = b.alts->len;
  p->alts = steal_array(b.alts);
  p->comps = steal_array(b.comps);
  p->ops = steal_array(b.ops);
  p->classes = steal_array(b.classes);
  p->lits = g_string_free(b.lits, FALSE);
  /* Bazel has no braces: one alternative. */
  if (dialect == TRAWL_DIALECT_BAZEL && p->n_alts == 1) {
    const struct alt *a = &p->alts[0];
    const uint32_t n = a->comp_count;
    p->typed = n > 1 && p->comps[a->comp_first + n - 1].kind == COMP_GLOBSTAR;
    p->typed_comps = p->typed ? n - 1 : 0;
    for (uint32_t k = 0; k + 1 < n && p->typed_comps; k++)
      if (p->comps[a->comp_first + k].kind == COMP_GLOBSTAR)
        p->typed_comps = 0;
  }
  if (p->nothing || p->n_alts == 0) {
    p->nothing = true;
    p->prefix = g_strdup("");
    p->suffix = g_strdup("");
    p->min_len = SIZE_MAX;
  } else {
    derive_pattern_facts(p);
  }
  derive_roots(p);
  return p;
}

void
trawl_pattern_free(TrawlPattern *p)
{
  if (p == NULL)
    return;
  g_free(p->text);
  g_free(p->alts);
  g_free(p->comps);
  g_free(p->ops);
  g_free(p->classes);
  g_free(p->lits);
  g_free(p->prefix);
  g_free(p->suffix);
  g_free(p->ext);
  if (p->roots)
    g_ptr_array_unref(p->roots);
  g_free(p->strip);
  g_free(p);
}

/* The bytes the trawl dialect reads as syntax somewhere in a pattern: the
 * wildcards, a class's brackets and negations, the braces and their comma,
 * the escape itself. Each is escaped wherever it stands (a '\' before any
 * byte makes it literal): one rule, simpler to state and to check than
 * escaping only where a byte would count. '/' is a path's separator and
 * stays one. */
static const char escaped_bytes[] = "*?[]{}\\,!^";

void
trawl_pattern_escape(GString *out, const char *path, size_t len)
{
  for (size_t i = 0; i < len; i++) {
    if (path[i] != '\0' && strchr(escaped_bytes, path[i]) != NULL)
      g_string_append_c(out, '\\');
    g_string_append_c(out, path[i]);
  }
}

const char *
trawl_pattern_text(const TrawlPattern *p, size_t *len)
{
  if (len)
    *len = p->text_len;
  return p->text;
}

TrawlDialect
trawl_pattern_dialect(const TrawlPattern *p)
{
  return p->dialect;
}

unsigned
trawl_pattern_flags(const TrawlPattern *p)
{
  return p->flags;
}

bool
trawl_pattern_matches_nothing(const TrawlPattern *p)
{
  return p->nothing;
}

const char *
trawl_pattern_literal_prefix(const TrawlPattern *p, size_t *len)
{
  if (len)
    *len = p->prefix_len;
  return p->prefix;
}

const char *
trawl_pattern_literal_suffix(const TrawlPattern *p, size_t *len)
{
  if (len)
    *len = p->suffix_len;
  return p->suffix;
}

const char *
trawl_pattern_extension(const TrawlPattern *p, size_t *len)
{
  if (len)
    *len = p->ext_len;
  return p->ext;
}

size_t
trawl_pattern_min_length(const TrawlPattern *p)
{
  return p->min_len;
}

const GPtrArray *
trawl_pattern_roots(const TrawlPattern *p)
{
  return p->roots;
}

size_t
trawl_pattern_alternative_count(const TrawlPattern *p)
{
  return p->n_alts;
}
