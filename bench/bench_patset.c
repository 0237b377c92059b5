/* trawl — pattern-set benchmark: nanoseconds per path for "does any of N
 * patterns match?", a TrawlPatset against a loop over the compiled patterns
 * and against one PCRE2 alternation of the patterns translated to regexes.
 *
 * Inputs: lists of 10, 100, 1,000 and 10,000 patterns of one shape each
 * (the --shape names: ext "**" "/" "*.extN", dir "dirN/" "**", name "**"
 * "/nameN/" "**", file "**" "/FileN.txt", prefix "prefixN*", the five mixed,
 * and the infix-only list "**" "/" "*fooN*"), and one generated list
 * of paths shaped like a monorepo (default 50,000: most match nothing, some
 * carry a dirN, nameN, FileN, prefixN, fooN or .extN that a list names).
 *
 * Arms, all over the same paths:
 *   set          trawl_patset_any()
 *   set-matches  trawl_patset_matches() (every matching index)
 *   loop         trawl_pattern_match() on each pattern until one matches
 *   pcre2-jit    one anchored alternation "\A(?:re1|re2|…)\z", JIT-compiled
 *                (split into several alternations when PCRE2 finds one too
 *                large; the table says how many).
 * Before anything is timed, every path is asked of every arm: the set's
 * matches must equal the loop's list of matching patterns, index for index,
 * and every arm's yes/no must agree; the run aborts otherwise. The timed
 * loops recount their matches.
 *
 * Timing as bench_match (the shared part is bench_util.h): each arm's pass
 * over the paths is calibrated to at least --min-ms, the arms take turns for
 * --rounds rounds, the table gives the median. --iterations N runs each arm
 * exactly N passes once (for callgrind: run_set, run_set_matches, run_loop,
 * run_pcre2 hold the loops).
 */
#define _GNU_SOURCE

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TRAWL_BENCH_PCRE2
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#endif

#include "trawl/patset.h"
#include "trawl/pattern.h"

#include "bench_util.h"

#define DEFAULT_PATHS 50000
#define DEFAULT_ROUNDS 5
#define DEFAULT_MIN_MS 50
/* PCRE2's alternation costs about 0.4 ms per path at 1,000 patterns: past
 * 100 it is run only when asked (--pcre2-max), on fewer paths. */
#define DEFAULT_PCRE2_MAX 100
/* Numbers in the paths' tokens (dirK, .extK, …) are drawn below this. */
#define TOKEN_RANGE 10000
/* Builds timed per list, for the build-time median. */
#define BUILD_ROUNDS 5
/* Calibration stops raising the passes here, however fast a pass is. */
#define MAX_PASSES (UINT64_C(1) << 30)
/* Cells from this many ns are printed in whole microseconds. */
#define WHOLE_US_FROM 10000

enum arm { ARM_SET, ARM_SET_MATCHES, ARM_LOOP, ARM_PCRE2, N_ARMS };
static const char *const arm_names[N_ARMS] = {"set", "set-matches", "loop", "pcre2-jit"};

static const size_t sizes[] = {10, 100, 1000, 10000};

/* ---- deterministic generation ------------------------------------------- */

static uint64_t rng_state = BENCH_RNG_SEED;

static uint32_t
rng(void)
{
  return bench_rng(&rng_state);
}

static bool
chance(unsigned percent)
{
  return rng() % 100 < percent;
}

static const char *const tops[] = {"packages", "services", "libs", "tools", "third_party",
                                   "docs", "apps", "infra"};
static const char *const words[] = {
  "core", "io", "net", "http", "parser", "util", "internal", "platform", "detail", "impl",
  "v2", "common", "server", "client", "storage", "codec", "generated", "api", "web", "ui",
  "components", "hooks", "models", "views", "test", "testdata", "scripts", "config",
};
static const char *const files[] = {
  "main", "index", "buffer", "socket", "reader", "writer", "stream", "format", "allocator",
  "hash_table", "config_parser", "README", "handler", "service", "types", "errors",
};
static const char *const exts[] = {".c", ".h", ".cc", ".ts", ".tsx", ".js", ".json", ".md",
                                   ".py", ".go", ".rs", ".txt", ".yaml", ".tar.gz", ""};

struct path {
  char *bytes;
  size_t len;
};

/* One monorepo-like path into S. */
static void
make_path(GString *s)
{
  g_string_truncate(s, 0);
  if (chance(2)) { /* a top-level file: prefixK… */
    g_string_append_printf(s, "prefix%u%s", rng() % TOKEN_RANGE, exts[rng() % N_ELEMS(exts)]);
    return;
  }
  if (chance(10))
    g_string_append_printf(s, "dir%u", rng() % TOKEN_RANGE);
  else
    g_string_append(s, tops[rng() % N_ELEMS(tops)]);
  g_string_append_printf(s, "/pkg%u", rng() % 300);
  unsigned depth = 1 + rng() % 5;
  for (unsigned d = 0; d < depth; d++) {
    if (chance(3))
      g_string_append_printf(s, "/name%u", rng() % TOKEN_RANGE);
    else
      g_string_append_printf(s, "/%s", words[rng() % N_ELEMS(words)]);
  }
  if (chance(3)) {
    g_string_append_printf(s, "/File%u.txt", rng() % TOKEN_RANGE);
    return;
  }
  g_string_append_printf(s, "/%s", files[rng() % N_ELEMS(files)]);
  if (chance(5))
    g_string_append_printf(s, "_foo%u", rng() % TOKEN_RANGE);
  if (chance(8))
    g_string_append_printf(s, ".ext%u", rng() % TOKEN_RANGE);
  else
    g_string_append(s, exts[rng() % N_ELEMS(exts)]);
}

/* ---- pattern lists ------------------------------------------------------ */

struct shape {
  const char *name;
  const char *example;
  void (*format)(GString *s, size_t i);
};

static void fmt_ext(GString *s, size_t i) { g_string_printf(s, "**/*.ext%zu", i); }
static void fmt_dir(GString *s, size_t i) { g_string_printf(s, "dir%zu/**", i); }
static void fmt_name(GString *s, size_t i) { g_string_printf(s, "**/name%zu/**", i); }
static void fmt_file(GString *s, size_t i) { g_string_printf(s, "**/File%zu.txt", i); }
static void fmt_prefix(GString *s, size_t i) { g_string_printf(s, "prefix%zu*", i); }
static void fmt_infix(GString *s, size_t i) { g_string_printf(s, "**/*foo%zu*", i); }

static void
fmt_mixed(GString *s, size_t i)
{
  static void (*const each[])(GString *, size_t) = {fmt_ext, fmt_dir, fmt_name, fmt_file,
                                                    fmt_prefix};
  each[i % N_ELEMS(each)](s, i / N_ELEMS(each));
}

static const struct shape shapes[] = {
  {"ext", "**/*.extN", fmt_ext},
  {"dir", "dirN/**", fmt_dir},
  {"name", "**/nameN/**", fmt_name},
  {"file", "**/FileN.txt", fmt_file},
  {"prefix", "prefixN*", fmt_prefix},
  {"mixed", "the five above, in turn", fmt_mixed},
  {"infix", "**/*fooN*", fmt_infix},
};

/* ---- glob to regex (bench_match.c's translation, the subset used here) --- */

#ifdef TRAWL_BENCH_PCRE2
static void
regex_literal(GString *re, char c)
{
  if (g_ascii_isalnum(c) || c == '/' || c == '_' || (unsigned char)c >= 0x80)
    g_string_append_c(re, c);
  else
    g_string_append_printf(re, "\\x%02x", (unsigned char)c);
}

/* '*', '**' components and literal bytes: the shapes above use no more. */
static void
glob_to_regex(GString *re, const char *glob)
{
  const size_t n = strlen(glob);
  for (size_t i = 0; i < n;) {
    const bool comp_start = i == 0 || glob[i - 1] == '/';
    if (comp_start && glob[i] == '*' && i + 1 < n && glob[i + 1] == '*' &&
        (i + 2 == n || glob[i + 2] == '/')) {
      if (i + 2 == n) {
        g_string_append(re, "[^/].*"); /* trailing "**": one more byte at least */
        i += 2;
      } else {
        g_string_append(re, "(?:.*/)?"); /* "**" "/": zero or more components */
        i += 3;
      }
      continue;
    }
    if (glob[i] == '*') {
      while (i < n && glob[i] == '*')
        i++;
      g_string_append(re, "[^/]*");
      continue;
    }
    regex_literal(re, glob[i]);
    i++;
  }
}

struct regex {
  pcre2_code *code;
  pcre2_match_data *data;
};
#endif

/* ---- one case: a shape at a size ---------------------------------------- */

struct bench_case {
  const struct shape *shape;
  size_t size;
  char **globs;
  TrawlPattern **patterns;
  TrawlPatset *set;
  double build_ns;   /* median trawl_patset_new() */
  double compile_ns; /* all trawl_pattern_compile() calls, once */
#ifdef TRAWL_BENCH_PCRE2
  struct regex *regexes;
  size_t n_regexes;
  pcre2_match_context *match_context;
  pcre2_jit_stack *jit_stack;
#endif
};

#ifdef TRAWL_BENCH_PCRE2
/* Compile globs [FIRST, FIRST + N) as one alternation, or, when PCRE2 finds
 * it too large, as two halves, recursively. */
static void
compile_regexes(struct bench_case *c, size_t first, size_t n, GArray *out)
{
  GString *re = g_string_new("\\A(?:");
  for (size_t i = 0; i < n; i++) {
    if (i)
      g_string_append_c(re, '|');
    glob_to_regex(re, c->globs[first + i]);
  }
  g_string_append(re, ")\\z");
  int code;
  PCRE2_SIZE off;
  pcre2_code *rx = pcre2_compile((PCRE2_SPTR)re->str, re->len, PCRE2_DOTALL, &code, &off, NULL);
  if (rx == NULL && n > 1) {
    g_string_free(re, TRUE);
    compile_regexes(c, first, n / 2, out);
    compile_regexes(c, first + n / 2, n - n / 2, out);
    return;
  }
  if (rx == NULL || pcre2_jit_compile(rx, PCRE2_JIT_COMPLETE) != 0) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(code, msg, sizeof msg);
    fprintf(stderr, "bench_patset: regex of %zu bytes: %s\n", re->len, (const char *)msg);
    exit(1);
  }
  g_string_free(re, TRUE);
  struct regex r = {rx, pcre2_match_data_create_from_pattern(rx, NULL)};
  g_array_append_val(out, r);
}
#endif

static void
case_init(struct bench_case *c, const struct shape *shape, size_t size, bool with_pcre2)
{
  memset(c, 0, sizeof *c);
  c->shape = shape;
  c->size = size;
  c->globs = g_new0(char *, size);
  c->patterns = g_new0(TrawlPattern *, size);
  GString *s = g_string_new(NULL);
  for (size_t i = 0; i < size; i++) {
    shape->format(s, i);
    c->globs[i] = g_strdup(s->str);
  }
  g_string_free(s, TRUE);
  double t0 = bench_now_ns();
  for (size_t i = 0; i < size; i++) {
    GError *error = NULL;
    c->patterns[i] = trawl_pattern_compile(c->globs[i], strlen(c->globs[i]),
                                           TRAWL_DIALECT_TRAWL, 0, &error);
    if (c->patterns[i] == NULL) {
      fprintf(stderr, "bench_patset: %s\n", error->message);
      exit(1);
    }
  }
  c->compile_ns = bench_now_ns() - t0;
  double builds[BUILD_ROUNDS];
  for (int r = 0; r < BUILD_ROUNDS; r++) {
    trawl_patset_free(c->set);
    t0 = bench_now_ns();
    c->set = trawl_patset_new((const TrawlPattern *const *)c->patterns, size);
    builds[r] = bench_now_ns() - t0;
  }
  c->build_ns = bench_median(builds, BUILD_ROUNDS);
#ifdef TRAWL_BENCH_PCRE2
  if (with_pcre2) {
    GArray *rx = g_array_new(FALSE, FALSE, sizeof(struct regex));
    compile_regexes(c, 0, size, rx);
    c->n_regexes = rx->len;
    c->regexes = (struct regex *)(void *)g_array_free(rx, FALSE);
    c->match_context = pcre2_match_context_create(NULL);
    c->jit_stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, NULL);
    pcre2_jit_stack_assign(c->match_context, NULL, c->jit_stack);
  }
#else
  (void)with_pcre2;
#endif
}

static void
case_clear(struct bench_case *c)
{
  trawl_patset_free(c->set);
  for (size_t i = 0; i < c->size; i++) {
    trawl_pattern_free(c->patterns[i]);
    g_free(c->globs[i]);
  }
  g_free(c->patterns);
  g_free(c->globs);
#ifdef TRAWL_BENCH_PCRE2
  for (size_t i = 0; i < c->n_regexes; i++) {
    pcre2_match_data_free(c->regexes[i].data);
    pcre2_code_free(c->regexes[i].code);
  }
  g_free(c->regexes);
  pcre2_match_context_free(c->match_context);
  pcre2_jit_stack_free(c->jit_stack);
#endif
}

/* ---- the arms ----------------------------------------------------------- */

static bool
loop_any(const struct bench_case *c, const struct path *p)
{
  for (size_t k = 0; k < c->size; k++)
    if (trawl_pattern_match(c->patterns[k], p->bytes, p->len))
      return true;
  return false;
}

#ifdef TRAWL_BENCH_PCRE2
static bool
pcre2_any(const struct bench_case *c, const struct path *p)
{
  for (size_t k = 0; k < c->n_regexes; k++) {
    int rc = pcre2_jit_match(c->regexes[k].code, (PCRE2_SPTR)p->bytes, p->len, 0, 0,
                             c->regexes[k].data, c->match_context);
    if (rc >= 0)
      return true;
    if (rc != PCRE2_ERROR_NOMATCH) {
      fprintf(stderr, "bench_patset: pcre2_jit_match failed: %d\n", rc);
      abort();
    }
  }
  return false;
}
#endif

/* The timed loops, one function per arm (for callgrind). Each returns the
 * paths that matched (set-matches: the matching patterns). */
static NOINLINE size_t
run_set(const struct bench_case *c, const struct path *paths, size_t n, uint64_t passes)
{
  size_t hits = 0;
  for (uint64_t k = 0; k < passes; k++)
    for (size_t i = 0; i < n; i++)
      hits += trawl_patset_any(c->set, paths[i].bytes, paths[i].len);
  return hits;
}

static NOINLINE size_t
run_set_matches(const struct bench_case *c, const struct path *paths, size_t n,
                uint64_t passes)
{
  size_t hits = 0;
  GArray *out = g_array_sized_new(FALSE, FALSE, sizeof(guint), 64);
  for (uint64_t k = 0; k < passes; k++)
    for (size_t i = 0; i < n; i++) {
      g_array_set_size(out, 0);
      hits += trawl_patset_matches(c->set, paths[i].bytes, paths[i].len, out);
    }
  g_array_free(out, TRUE);
  return hits;
}

static NOINLINE size_t
run_loop(const struct bench_case *c, const struct path *paths, size_t n, uint64_t passes)
{
  size_t hits = 0;
  for (uint64_t k = 0; k < passes; k++)
    for (size_t i = 0; i < n; i++)
      hits += loop_any(c, &paths[i]);
  return hits;
}

#ifdef TRAWL_BENCH_PCRE2
static NOINLINE size_t
run_pcre2(const struct bench_case *c, const struct path *paths, size_t n, uint64_t passes)
{
  size_t hits = 0;
  for (uint64_t k = 0; k < passes; k++)
    for (size_t i = 0; i < n; i++)
      hits += pcre2_any(c, &paths[i]);
  return hits;
}
#endif

static size_t
run_arm(enum arm a, const struct bench_case *c, const struct path *paths, size_t n,
        uint64_t passes)
{
  switch (a) {
  case ARM_SET:
    return run_set(c, paths, n, passes);
  case ARM_SET_MATCHES:
    return run_set_matches(c, paths, n, passes);
  case ARM_LOOP:
    return run_loop(c, paths, n, passes);
  default:
#ifdef TRAWL_BENCH_PCRE2
    return run_pcre2(c, paths, n, passes);
#else
    return 0;
#endif
  }
}

/* An arm and its inputs, for bench_calibrate(). */
struct arm_run {
  enum arm arm;
  const struct bench_case *c;
  const struct path *paths;
  size_t n;
};

static void
run_arm_passes(const void *ctx, uint64_t passes)
{
  const struct arm_run *r = ctx;
  run_arm(r->arm, r->c, r->paths, r->n, passes);
}

/* Every path through every arm; abort on any disagreement. Returns the
 * expected counts: paths matched, and (pattern, path) matches. */
static void
check_arms(const struct bench_case *c, const struct path *paths, size_t n, bool with_pcre2,
           size_t *any_hits, size_t *all_hits)
{
  GArray *out = g_array_new(FALSE, FALSE, sizeof(guint));
  *any_hits = *all_hits = 0;
  for (size_t i = 0; i < n; i++) {
    const struct path *p = &paths[i];
    g_array_set_size(out, 0);
    trawl_patset_matches(c->set, p->bytes, p->len, out);
    size_t j = 0;
    for (size_t k = 0; k < c->size; k++) {
      if (!trawl_pattern_match(c->patterns[k], p->bytes, p->len))
        continue;
      if (j >= out->len || g_array_index(out, guint, j) != k) {
        fprintf(stderr, "bench_patset: %s/%zu: set and loop differ on \"%s\" (pattern %zu)\n",
                c->shape->name, c->size, p->bytes, k);
        abort();
      }
      j++;
    }
    bool any = j > 0;
    bool ok = j == out->len && trawl_patset_any(c->set, p->bytes, p->len) == any &&
              loop_any(c, p) == any;
#ifdef TRAWL_BENCH_PCRE2
    ok = ok && (!with_pcre2 || pcre2_any(c, p) == any);
#else
    (void)with_pcre2;
#endif
    if (!ok) {
      fprintf(stderr, "bench_patset: %s/%zu: arms disagree on \"%s\"\n", c->shape->name,
              c->size, p->bytes);
      abort();
    }
    *any_hits += any;
    *all_hits += j;
  }
  g_array_free(out, TRUE);
}

/* ---- measurement and the table ------------------------------------------ */

struct options {
  unsigned rounds;
  double min_ns;
  uint64_t fixed_passes;
  size_t n_paths;
  const char *shape_filter;
  size_t size_filter;
  size_t pcre2_max; /* the PCRE2 arm only for lists up to this size */
};

struct result {
  bool timed[N_ARMS];
  double median[N_ARMS]; /* ns per path */
};

static void
measure(const struct bench_case *c, const struct path *paths, size_t n,
        const struct options *o, bool with_pcre2, struct result *res)
{
  size_t any_hits, all_hits;
  check_arms(c, paths, n, with_pcre2, &any_hits, &all_hits);
  const unsigned rounds = o->fixed_passes ? 1 : o->rounds;
  uint64_t passes[N_ARMS] = {0};
  double *samples[N_ARMS] = {0};
  for (int a = 0; a < N_ARMS; a++) {
    res->timed[a] = a != ARM_PCRE2 || with_pcre2;
    if (!res->timed[a])
      continue;
    const struct arm_run run = {(enum arm)a, c, paths, n};
    passes[a] = o->fixed_passes ? o->fixed_passes
                                : bench_calibrate(run_arm_passes, &run, o->min_ns, MAX_PASSES);
    samples[a] = g_new(double, rounds);
  }
  for (unsigned r = 0; r < rounds; r++)
    for (int a = 0; a < N_ARMS; a++) {
      if (!res->timed[a])
        continue;
      double t0 = bench_now_ns();
      size_t hits = run_arm((enum arm)a, c, paths, n, passes[a]);
      double dt = bench_now_ns() - t0;
      size_t want = (a == ARM_SET_MATCHES ? all_hits : any_hits) * passes[a];
      if (hits != want) {
        fprintf(stderr, "bench_patset: %s/%zu: arm %s counted %zu, not %zu\n",
                c->shape->name, c->size, arm_names[a], hits, want);
        abort();
      }
      samples[a][r] = dt / ((double)passes[a] * (double)n);
    }
  for (int a = 0; a < N_ARMS; a++) {
    if (!res->timed[a])
      continue;
    res->median[a] = bench_median(samples[a], rounds);
    g_free(samples[a]);
  }
  printf("# %s/%zu: %zu paths x %" PRIu64 " passes (set); %zu paths match, %zu matches\n",
         c->shape->name, c->size, n, passes[ARM_SET], any_hits, all_hits);
}

static void
usage(FILE *f)
{
  fputs("usage: bench_patset [--rounds N] [--min-ms MS] [--iterations N] [--paths N]\n"
        "                    [--shape NAME] [--size N] [--pcre2-max N]\n"
        "  shapes: ext dir name file prefix mixed infix; sizes: 10 100 1000 10000\n",
        f);
}

static uint64_t
parse_count(const char *s, const char *what)
{
  return bench_parse_count("bench_patset", s, what, usage);
}

static void
parse_options(int argc, char **argv, struct options *o)
{
  o->rounds = DEFAULT_ROUNDS;
  o->min_ns = DEFAULT_MIN_MS * 1e6;
  o->n_paths = DEFAULT_PATHS;
  o->pcre2_max = DEFAULT_PCRE2_MAX;
  for (int i = 1; i < argc; i += 2) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      exit(0);
    }
    if (v == NULL) {
      usage(stderr);
      exit(2);
    }
    if (strcmp(a, "--rounds") == 0)
      o->rounds = (unsigned)parse_count(v, "--rounds");
    else if (strcmp(a, "--min-ms") == 0)
      o->min_ns = (double)parse_count(v, "--min-ms") * 1e6;
    else if (strcmp(a, "--iterations") == 0)
      o->fixed_passes = parse_count(v, "--iterations");
    else if (strcmp(a, "--paths") == 0)
      o->n_paths = (size_t)parse_count(v, "--paths");
    else if (strcmp(a, "--size") == 0)
      o->size_filter = (size_t)parse_count(v, "--size");
    else if (strcmp(a, "--pcre2-max") == 0)
      o->pcre2_max = (size_t)parse_count(v, "--pcre2-max");
    else if (strcmp(a, "--shape") == 0)
      o->shape_filter = v;
    else {
      usage(stderr);
      exit(2);
    }
  }
  if (o->rounds == 0)
    o->rounds = 1;
  if (o->n_paths == 0)
    o->n_paths = 1;
}

int
main(int argc, char **argv)
{
  struct options o = {0};
  parse_options(argc, argv, &o);
  bool with_pcre2 = true;
#ifdef TRAWL_BENCH_PCRE2
  char version[64];
  pcre2_config(PCRE2_CONFIG_VERSION, version);
  printf("# PCRE2 %s (JIT)", version);
#else
  with_pcre2 = false;
  printf("# PCRE2 not built in");
#endif
  struct path *paths = g_new0(struct path, o.n_paths);
  GString *s = g_string_new(NULL);
  size_t bytes = 0;
  for (size_t i = 0; i < o.n_paths; i++) {
    make_path(s);
    paths[i].len = s->len;
    paths[i].bytes = g_strndup(s->str, s->len);
    bytes += s->len;
  }
  g_string_free(s, TRUE);
  if (o.fixed_passes)
    printf("; %zu paths (mean %.1f bytes); fixed %" PRIu64 " passes, one round\n", o.n_paths,
           (double)bytes / (double)o.n_paths, o.fixed_passes);
  else
    printf("; %zu paths (mean %.1f bytes); median of %u rounds, each >= %.0f ms per arm\n",
           o.n_paths, (double)bytes / (double)o.n_paths, o.rounds, o.min_ns / 1e6);
  printf("\n| shape | patterns | paths matched | set | set-matches | loop | pcre2-jit "
         "| loop / set | pcre2 / set | set build | compile all |\n"
         "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  fflush(stdout);

  for (size_t sh = 0; sh < N_ELEMS(shapes); sh++) {
    if (o.shape_filter && strcmp(o.shape_filter, shapes[sh].name) != 0)
      continue;
    for (size_t z = 0; z < N_ELEMS(sizes); z++) {
      if (o.size_filter && o.size_filter != sizes[z])
        continue;
      struct bench_case c;
      const bool pcre2_here = with_pcre2 && sizes[z] <= o.pcre2_max;
      case_init(&c, &shapes[sh], sizes[z], pcre2_here);
      struct result res;
      measure(&c, paths, o.n_paths, &o, pcre2_here, &res);
      size_t matched = 0;
      for (size_t i = 0; i < o.n_paths; i++)
        matched += trawl_patset_any(c.set, paths[i].bytes, paths[i].len);
      char cell[N_ARMS][48], build[32], compile[32];
      for (int a = 0; a < N_ARMS; a++) {
        if (res.timed[a])
          bench_format_ns(cell[a], sizeof cell[a], res.median[a], WHOLE_US_FROM);
        else
          snprintf(cell[a], sizeof cell[a], "not run");
      }
#ifdef TRAWL_BENCH_PCRE2
      if (pcre2_here && c.n_regexes > 1) {
        size_t l = strlen(cell[ARM_PCRE2]);
        snprintf(cell[ARM_PCRE2] + l, sizeof cell[ARM_PCRE2] - l, " (%zu regexes)", c.n_regexes);
      }
#endif
      bench_format_ns(build, sizeof build, c.build_ns, WHOLE_US_FROM);
      bench_format_ns(compile, sizeof compile, c.compile_ns, WHOLE_US_FROM);
      char pcre_ratio[32] = "n/a";
      if (res.timed[ARM_PCRE2])
        snprintf(pcre_ratio, sizeof pcre_ratio, "%.1f×", res.median[ARM_PCRE2] / res.median[ARM_SET]);
      printf("| %s `%s` | %zu | %.1f%% | %s | %s | %s | %s | %.1f× | %s | %s | %s |\n",
             shapes[sh].name, shapes[sh].example, sizes[z],
             100.0 * (double)matched / (double)o.n_paths, cell[ARM_SET], cell[ARM_SET_MATCHES],
             cell[ARM_LOOP], cell[ARM_PCRE2], res.median[ARM_LOOP] / res.median[ARM_SET],
             pcre_ratio, build, compile);
      fflush(stdout);
      case_clear(&c);
    }
  }
  for (size_t i = 0; i < o.n_paths; i++)
    g_free(paths[i].bytes);
  g_free(paths);
  return 0;
}
