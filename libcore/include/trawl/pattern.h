/* trawl — the match service: compiled glob patterns.
 *
 * A pattern is compiled once from its text and a dialect, then matched against
 * any number of paths. Paths are byte strings relative to a root, separated by
 * '/', never starting with "./"; they need not be UTF-8 and are passed with an
 * explicit length. Every byte is matched as it is, a NUL included.
 *
 * Ownership: trawl_pattern_compile() returns a pattern the caller frees with
 * trawl_pattern_free(). Every pointer a query function returns points into the
 * pattern and lives as long as it does.
 *
 * Threads: a compiled pattern is immutable. Any number of threads may call the
 * match and query functions on one pattern at once; matching never allocates.
 *
 * Dialects (docs/patterns.md has the full syntax):
 *   TRAWL_DIALECT_TRAWL  git's wildmatch plus {a,b} alternation; malformed input
 *                        is an error with a byte offset.
 *   TRAWL_DIALECT_GIT    exactly git's wildmatch with WM_PATHNAME, as
 *                        `git ls-files ':(glob)PAT'` applies it; malformed
 *                        classes and a trailing '\' compile but match nothing.
 *   TRAWL_DIALECT_CMAKE  file(GLOB): '*', '?', '[...]'; no '**', no braces, '\'
 *                        is an ordinary byte.
 *   TRAWL_DIALECT_BAZEL  glob(): '*', '?', '**' as a whole segment only; a
 *                        segment starting with '.' needs a pattern segment
 *                        starting with '.', except exactly '*' or '**'.
 */
#ifndef TRAWL_PATTERN_H
#define TRAWL_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <glib.h>

#include "trawl/export.h"

G_BEGIN_DECLS

typedef enum {
  TRAWL_DIALECT_TRAWL = 0,
  TRAWL_DIALECT_GIT,
  TRAWL_DIALECT_CMAKE,
  TRAWL_DIALECT_BAZEL,
} TrawlDialect;

/* What an entry is: the walk reports it (trawl/walk.h), the typed match
 * (trawl_pattern_match_entry) takes it. */
typedef enum {
  TRAWL_ENTRY_UNKNOWN = 0,      /* not known: the match is untyped */
  TRAWL_ENTRY_FILE = 1 << 0,    /* regular files, and anything not below */
  TRAWL_ENTRY_DIR = 1 << 1,     /* directories */
  TRAWL_ENTRY_SYMLINK = 1 << 2, /* symbolic links (not followed) */
} TrawlEntryType;

typedef enum {
  TRAWL_PATTERN_DEFAULT = 0,
  TRAWL_PATTERN_ICASE = 1 << 0, /* ASCII case folding of pattern and path */
} TrawlPatternFlags;

/* Longest pattern text accepted, in bytes. */
#define TRAWL_PATTERN_MAX_LEN 65536
/* Most alternatives a pattern's braces may expand to. */
#define TRAWL_PATTERN_MAX_ALTERNATIVES 4096

/* Errors from trawl_pattern_compile(), in TRAWL_PATTERN_ERROR. The message
 * names the pattern, the byte offset and the reason; the offset is also
 * available from trawl_pattern_error_offset(). */
#define TRAWL_PATTERN_ERROR (trawl_pattern_error_quark())
typedef enum {
  TRAWL_PATTERN_ERROR_SYNTAX,   /* unclosed '[' or '{', trailing '\', bad segment … */
  TRAWL_PATTERN_ERROR_NUL,      /* an embedded NUL byte */
  TRAWL_PATTERN_ERROR_TOO_LONG, /* over TRAWL_PATTERN_MAX_LEN, or too many alternatives */
  TRAWL_PATTERN_ERROR_DIALECT,  /* unknown dialect value */
} TrawlPatternError;

typedef struct TrawlPattern TrawlPattern;

/* The error domain of pattern compilation. */
TRAWL_API GQuark trawl_pattern_error_quark(void);

/* Byte offset into the pattern text that a TRAWL_PATTERN_ERROR points at, or
 * -1 when the error is of another domain. */
TRAWL_API gssize trawl_pattern_error_offset(const GError *error);

/* Compile LEN bytes of TEXT in DIALECT with FLAGS (TrawlPatternFlags). Returns
 * a new pattern (free with trawl_pattern_free), or NULL with ERROR set. */
TRAWL_API TrawlPattern *trawl_pattern_compile(const char *text, size_t len,
                                              TrawlDialect dialect,
                                              unsigned flags, GError **error);

/* Release a pattern; NULL is allowed. */
TRAWL_API void trawl_pattern_free(TrawlPattern *p);

/* Does the whole of PATH (LEN bytes) match? Never allocates. */
TRAWL_API bool trawl_pattern_match(const TrawlPattern *p, const char *path,
                                   size_t len);

/* Does PATH (LEN bytes) match as an entry of TYPE? The answer of
 * trawl_pattern_match() except where the dialect's tool decides by the type:
 * in the bazel dialect a trailing "/ **" matches zero segments only for a
 * directory ("a/ **" matches a directory "a", never a file "a", as glob()
 * selects). Anything but TRAWL_ENTRY_DIR is not a directory;
 * TRAWL_ENTRY_UNKNOWN answers as trawl_pattern_match(). A typed answer is
 * never a match the untyped one is not. Never allocates. */
TRAWL_API bool trawl_pattern_match_entry(const TrawlPattern *p, const char *path,
                                         size_t len, TrawlEntryType type);

/* Can the answer of trawl_pattern_match_entry() for some path depend on its
 * type (false: it is always trawl_pattern_match()'s)? */
TRAWL_API bool trawl_pattern_typed(const TrawlPattern *p);

/* Can any path strictly below directory DIR (LEN bytes, relative, no trailing
 * '/'; LEN 0 is the root) match? false means the walker may leave DIR closed:
 * a wrong false loses files, so any doubt answers true. */
TRAWL_API bool trawl_pattern_may_match_below(const TrawlPattern *p,
                                             const char *dir, size_t len);

/* The pattern text as compiled (not NUL-terminated in general). */
TRAWL_API const char *trawl_pattern_text(const TrawlPattern *p, size_t *len);

/* The dialect and flags the pattern was compiled with. */
TRAWL_API TrawlDialect trawl_pattern_dialect(const TrawlPattern *p);
TRAWL_API unsigned trawl_pattern_flags(const TrawlPattern *p);

/* Append to OUT the trawl-dialect pattern that matches exactly PATH (LEN
 * bytes, components separated by '/'): each byte the dialect reads as
 * syntax anywhere, `*?[]{}\,!^`, preceded by '\'. The one rule for every
 * writer of patterns: the command's plugins call this; the CMake module,
 * which cannot, follows it (cmake/trawl/text.cmake, _trawl_literal), and
 * tests/corpus/escaper.txt holds both to it. */
TRAWL_API void trawl_pattern_escape(GString *out, const char *path, size_t len);

/* ---- Facts computed at compile time (for prefilters and the planner) ----
 *
 * A pattern with braces is a set of alternatives; the whole-pattern facts are
 * those every alternative shares. Under TRAWL_PATTERN_ICASE literal facts are
 * reported as written and compared ASCII-case-insensitively. */

/* True if the pattern can match no path at all (git dialect: malformed). */
TRAWL_API bool trawl_pattern_matches_nothing(const TrawlPattern *p);

/* Bytes every match starts with; *LEN may be 0. */
TRAWL_API const char *trawl_pattern_literal_prefix(const TrawlPattern *p,
                                                   size_t *len);

/* Bytes every match ends with; *LEN may be 0. */
TRAWL_API const char *trawl_pattern_literal_suffix(const TrawlPattern *p,
                                                   size_t *len);

/* The extension (".c", with its dot) every match's last component ends with,
 * or NULL when there is none common to all alternatives. */
TRAWL_API const char *trawl_pattern_extension(const TrawlPattern *p,
                                              size_t *len);

/* Fewest bytes a matching path can have. */
TRAWL_API size_t trawl_pattern_min_length(const TrawlPattern *p);

/* The literal leading directories a walk must start from to find every match:
 * "{src,packages}/x.c" gives "src" and "packages"; "" means the root itself.
 * None is below another; none for a pattern that matches nothing. An array
 * of NUL-terminated strings, sorted bytewise, owned by P (do not change or
 * unref it). */
TRAWL_API const GPtrArray *trawl_pattern_roots(const TrawlPattern *p);

/* Number of alternatives the braces expanded to (1 without braces). */
TRAWL_API size_t trawl_pattern_alternative_count(const TrawlPattern *p);

G_END_DECLS

#endif /* TRAWL_PATTERN_H */
