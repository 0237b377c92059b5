/* trawl — matcher benchmark: nanoseconds per match, trawl against glibc
 * fnmatch(FNM_PATHNAME) and a glob-to-regex translation run by PCRE2's JIT.
 *
 * Every case is one pattern and a set of generated paths that all share the
 * expected verdict. The three arms see the same bytes: before anything is
 * timed, every arm answers every path of every case and the run aborts if two
 * arms disagree with each other or with the expected verdict. An arm that
 * cannot express a pattern (fnmatch has no '**' and no braces) says "n/a"; an
 * arm that gives up (PCRE2 reports its match limit) says so and is not timed.
 *
 * Timing: each arm's loop is calibrated to run for at least --min-ms, then
 * the arms are measured round-robin for --rounds rounds, so that a burst of
 * host noise lands on all of them; the table gives the median of the rounds
 * and their spread. --iterations N instead runs every arm exactly N passes
 * over its paths, once, with no calibration: instruction counts under
 * `valgrind --tool=callgrind` are then comparable between runs and arms (the
 * run_<arm> functions hold each arm's loop; bench/callgrind.py reads them).
 *
 * The regex translation follows globset's approach (one anchored regex per
 * glob; globset's exact spelling differs in details): a "**" component and
 * its '/' become an optional group of any bytes ending in '/', '*' "[^/]*",
 * '?' "[^/]", braces an alternation, classes a
 * class that never matches '/', anchored at both ends. PCRE2 is a
 * backtracking engine, unlike the finite automata of the Rust regex crate
 * globset uses: on the adversarial rows it shows what PCRE2 does, not what
 * globset would.
 */
#define _GNU_SOURCE

#include <fnmatch.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#ifdef TRAWL_BENCH_PCRE2
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#endif

#include "trawl/pattern.h"

#include "bench_util.h"

/* Paths generated per case (the adversarial cases use fewer, longer ones). */
#define PATHS_PER_CASE 64
/* Default measurement: rounds per arm and the shortest timed run. */
#define DEFAULT_ROUNDS 11
#define DEFAULT_MIN_MS 20
/* Calibration stops raising the passes here, however fast a pass is. */
#define MAX_PASSES (UINT64_C(1) << 40)
/* Cells from this many ns are printed in whole microseconds. */
#define WHOLE_US_FROM 100000

enum arm { ARM_TRAWL, ARM_FNMATCH, ARM_PCRE2, N_ARMS };
static const char *const arm_names[N_ARMS] = {"trawl", "fnmatch", "pcre2-jit"};

/* What an arm answers for one path. */
enum verdict { V_NO, V_YES, V_GAVE_UP };

struct path {
  char *bytes; /* NUL-terminated, for fnmatch */
  size_t len;
};

struct inputs {
  struct path *paths;
  size_t n;
};

struct bench_case {
  const char *name;
  const char *pattern;
  bool fnmatch_ok; /* the pattern means the same to fnmatch(FNM_PATHNAME) */
  bool expect;     /* the verdict for every path */
  void (*generate)(struct inputs *in);
};

/* ---- deterministic path generation ------------------------------------- */

static uint64_t rng_state = BENCH_RNG_SEED;

static uint32_t
rng(void)
{
  return bench_rng(&rng_state);
}

/* Directory and file names; none of them is "test" and none ends in "_test". */
static const char *const dir_words[] = {
  "core", "io", "unix", "net", "http", "parser", "util", "internal",
  "platform", "linux", "detail", "impl", "v2", "common", "server", "client",
  "storage", "codec", "zlib", "third_party", "generated", "experimental",
};
static const char *const file_words[] = {
  "file", "main", "buffer", "socket", "reader", "writer", "stream", "format",
  "allocator", "hash_table", "x", "config_parser",
};

static const char *
dir_word(void)
{
  return dir_words[rng() % N_ELEMS(dir_words)];
}

static const char *
file_word(void)
{
  return file_words[rng() % N_ELEMS(file_words)];
}

static void
add_path(struct inputs *in, GString *s)
{
  struct path *p = &in->paths[in->n++];
  p->len = s->len;
  p->bytes = g_strndup(s->str, s->len);
}

/* FIRST, then DIRS random directories, then a file name, then EXT. */
static void
make_paths(struct inputs *in, const char *first, int dirs, const char *ext)
{
  GString *s = g_string_new(NULL);
  in->paths = g_new0(struct path, PATHS_PER_CASE);
  for (int i = 0; i < PATHS_PER_CASE; i++) {
    g_string_assign(s, first);
    for (int d = 0; d < dirs; d++)
      g_string_append_printf(s, "/%s", dir_word());
    g_string_append_printf(s, "/%s%s", file_word(), ext);
    add_path(in, s);
  }
  g_string_free(s, TRUE);
}

static void gen_src5_c(struct inputs *in) { make_paths(in, "src", 3, ".c"); }
static void gen_lib5_c(struct inputs *in) { make_paths(in, "lib", 3, ".c"); }
static void gen_src5_h(struct inputs *in) { make_paths(in, "src", 3, ".h"); }
static void gen_src20_c(struct inputs *in) { make_paths(in, "src", 18, ".c"); }

/* 5 components, not matching src/ * / * / * / *.c in assorted ways: another
 * top directory, another extension, a ".c" that is not the extension. */
static void
gen_nonmatch5_mixed(struct inputs *in)
{
  static const char *const firsts[] = {"lib", "src", "docs", "src"};
  static const char *const exts[] = {".c", ".h", ".md", ".cc"};
  GString *s = g_string_new(NULL);
  in->paths = g_new0(struct path, PATHS_PER_CASE);
  for (int i = 0; i < PATHS_PER_CASE; i++) {
    g_string_assign(s, firsts[i % 4]);
    for (int d = 0; d < 3; d++)
      g_string_append_printf(s, "/%s", dir_word());
    g_string_append_printf(s, "/%s%s", file_word(), exts[i % 4]);
    add_path(in, s);
  }
  g_string_free(s, TRUE);
}

/* 20 components under src/, ending in *_test.c, with a "test" directory
 * somewhere in the middle (WITH_TEST) or none at all. */
static void
make_test_paths(struct inputs *in, bool with_test)
{
  GString *s = g_string_new(NULL);
  in->paths = g_new0(struct path, PATHS_PER_CASE);
  for (int i = 0; i < PATHS_PER_CASE; i++) {
    g_string_assign(s, "src");
    int at = 2 + (int)(rng() % 14);
    for (int d = 0; d < 18; d++)
      g_string_append_printf(s, "/%s", with_test && d == at ? "test" : dir_word());
    g_string_append_printf(s, "/%s_test.c", file_word());
    add_path(in, s);
  }
  g_string_free(s, TRUE);
}

static void gen_test20_yes(struct inputs *in) { make_test_paths(in, true); }
static void gen_test20_no(struct inputs *in) { make_test_paths(in, false); }

/* 1 to 6 components, with a web extension (MATCH) or another one. */
static void
make_web_paths(struct inputs *in, bool match)
{
  static const char *const yes[] = {".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs"};
  static const char *const no[] = {".css", ".json", ".md", ".map", ".tsv", ".c"};
  GString *s = g_string_new(NULL);
  in->paths = g_new0(struct path, PATHS_PER_CASE);
  for (int i = 0; i < PATHS_PER_CASE; i++) {
    g_string_truncate(s, 0);
    int dirs = (int)(rng() % 6);
    for (int d = 0; d < dirs; d++)
      g_string_append_printf(s, "%s/", dir_word());
    g_string_append_printf(s, "%s%s", file_word(), (match ? yes : no)[i % 6]);
    add_path(in, s);
  }
  g_string_free(s, TRUE);
}

static void gen_web_yes(struct inputs *in) { make_web_paths(in, true); }
static void gen_web_no(struct inputs *in) { make_web_paths(in, false); }

/* Four runs of about 10,000 'a's, followed by TAIL. */
static void
make_a_runs(struct inputs *in, const char *tail)
{
  GString *s = g_string_new(NULL);
  in->paths = g_new0(struct path, 4);
  for (int i = 0; i < 4; i++) {
    g_string_truncate(s, 0);
    for (int k = 0; k < 10000 + i; k++)
      g_string_append_c(s, 'a');
    g_string_append(s, tail);
    add_path(in, s);
  }
  g_string_free(s, TRUE);
}

static void gen_a_run(struct inputs *in) { make_a_runs(in, ""); }
static void gen_a_run_ba(struct inputs *in) { make_a_runs(in, "ba"); }

/* 200 components "x/x/…/x/yx": every component but the last is the pattern's
 * final literal, and the last merely ends with it. */
static void
gen_x200(struct inputs *in)
{
  GString *s = g_string_new(NULL);
  in->paths = g_new0(struct path, 4);
  for (int i = 0; i < 4; i++) {
    g_string_truncate(s, 0);
    for (int k = 0; k < 199 + i; k++)
      g_string_append(s, "x/");
    g_string_append(s, "yx");
    add_path(in, s);
  }
  g_string_free(s, TRUE);
}

static const struct bench_case cases[] = {
  {"match, 5 components", "src/**/*.c", false, true, gen_src5_c},
  {"match, 5 components, no **", "src/*/*/*/*.c", true, true, gen_src5_c},
  {"non-match, other top dir", "src/**/*.c", false, false, gen_lib5_c},
  {"non-match, other extension", "src/**/*.c", false, false, gen_src5_h},
  {"non-match, 5 components, no **", "src/*/*/*/*.c", true, false, gen_nonmatch5_mixed},
  {"match, 20 components", "src/**/*.c", false, true, gen_src20_c},
  {"match, 20 components, engine", "src/**/test/**/*_test.c", false, true, gen_test20_yes},
  {"non-match, 20 components, engine", "src/**/test/**/*_test.c", false, false, gen_test20_no},
  {"brace catalog, match", "**/*.{ts,tsx,js,jsx,mjs,cjs}", false, true, gen_web_yes},
  {"brace catalog, non-match", "**/*.{ts,tsx,js,jsx,mjs,cjs}", false, false, gen_web_no},
  {"adversarial: 10,000 a", "a*a*a*a*a*a*a*b", true, false, gen_a_run},
  {"adversarial: 10,000 a + ba", "a*a*a*a*a*a*a*b", true, false, gen_a_run_ba},
  {"adversarial: 10,000 a, infix", "*a*a*a*a*a*a*a*b*", true, false, gen_a_run},
  {"adversarial: 10 ** vs 200 comps", "**/**/**/**/**/**/**/**/**/**/x", false, false, gen_x200},
};
#define N_CASES N_ELEMS(cases)

/* ---- glob to regex (globset's translation) ------------------------------ */

#ifdef TRAWL_BENCH_PCRE2

/* Append byte C to RE as a literal. */
static void
regex_literal(GString *re, char c)
{
  if (g_ascii_isalnum(c) || c == '/' || c == '_' || (unsigned char)c >= 0x80)
    g_string_append_c(re, c);
  else
    g_string_append_printf(re, "\\x%02x", (unsigned char)c);
}

/* Translate a trawl-dialect glob (the subset this benchmark uses: '*', '?',
 * '**' components, simple classes, '\' escapes, braces) into an anchored
 * PCRE2 pattern, as globset translates globs for its regex engine. */
static char *
glob_to_regex(const char *glob)
{
  GString *re = g_string_new("\\A(?:");
  const size_t n = strlen(glob);
  int depth = 0; /* open braces */
  for (size_t i = 0; i < n;) {
    const bool comp_start = i == 0 || glob[i - 1] == '/';
    if (comp_start && glob[i] == '*' && i + 1 < n && glob[i + 1] == '*' &&
        (i + 2 == n || glob[i + 2] == '/')) {
      if (i + 2 == n) {
        /* a trailing "**": at least one more byte (not a second '/') */
        g_string_append(re, "[^/].*");
        i += 2;
      } else {
        /* "** /": zero or more whole components */
        g_string_append(re, "(?:.*/)?");
        i += 3;
      }
      continue;
    }
    switch (glob[i]) {
    case '*':
      while (i < n && glob[i] == '*')
        i++;
      g_string_append(re, "[^/]*");
      continue;
    case '?':
      g_string_append(re, "[^/]");
      break;
    case '{':
      depth++;
      g_string_append(re, "(?:");
      break;
    case ',':
      if (depth > 0)
        g_string_append_c(re, '|');
      else
        regex_literal(re, ',');
      break;
    case '}':
      depth--;
      g_string_append_c(re, ')');
      break;
    case '\\':
      if (i + 1 < n)
        i++;
      regex_literal(re, glob[i]);
      break;
    case '[': {
      /* "[!…]" / "[^…]" and "[…]", never matching '/'; ranges kept. */
      size_t j = i + 1;
      bool neg = j < n && (glob[j] == '!' || glob[j] == '^');
      if (neg)
        j++;
      size_t first = j;
      g_string_append(re, neg ? "[^/" : "(?!/)[");
      while (j < n && (glob[j] != ']' || j == first)) {
        bool range = glob[j] == '-' && j != first && j + 1 < n && glob[j + 1] != ']';
        if (range)
          g_string_append_c(re, '-');
        else
          regex_literal(re, glob[j]);
        j++;
      }
      g_string_append_c(re, ']');
      i = j;
      break;
    }
    default:
      regex_literal(re, glob[i]);
      break;
    }
    i++;
  }
  g_string_append(re, ")\\z");
  return g_string_free(re, FALSE);
}
#endif /* TRAWL_BENCH_PCRE2 */

/* ---- the arms ----------------------------------------------------------- */

struct arm_state {
  TrawlPattern *trawl;
  const char *glob; /* for fnmatch */
#ifdef TRAWL_BENCH_PCRE2
  char *regex;
  pcre2_code *code;
  pcre2_match_data *match_data;
  pcre2_match_context *match_context;
  pcre2_jit_stack *jit_stack;
#endif
};

static enum verdict
verdict_trawl(const struct arm_state *st, const struct path *p)
{
  return trawl_pattern_match(st->trawl, p->bytes, p->len) ? V_YES : V_NO;
}

static enum verdict
verdict_fnmatch(const struct arm_state *st, const struct path *p)
{
  int rc = fnmatch(st->glob, p->bytes, FNM_PATHNAME);
  if (rc == 0)
    return V_YES;
  if (rc == FNM_NOMATCH)
    return V_NO;
  fprintf(stderr, "bench_match: fnmatch(\"%s\") failed: %d\n", st->glob, rc);
  abort();
}

#ifdef TRAWL_BENCH_PCRE2
static enum verdict
verdict_pcre2(const struct arm_state *st, const struct path *p)
{
  int rc = pcre2_jit_match(st->code, (PCRE2_SPTR)p->bytes, p->len, 0, 0,
                           st->match_data, st->match_context);
  if (rc >= 0)
    return V_YES;
  if (rc == PCRE2_ERROR_NOMATCH)
    return V_NO;
  if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
      rc == PCRE2_ERROR_JIT_STACKLIMIT)
    return V_GAVE_UP;
  fprintf(stderr, "bench_match: pcre2_jit_match(\"%s\") failed: %d\n", st->regex, rc);
  abort();
}
#endif

/* The timed loops, one function per arm so that callgrind can attribute
 * their instructions. Each returns the number of matches it saw. */
static NOINLINE size_t
run_trawl(const struct arm_state *st, const struct inputs *in, uint64_t passes)
{
  size_t hits = 0;
  for (uint64_t k = 0; k < passes; k++)
    for (size_t i = 0; i < in->n; i++)
      hits += trawl_pattern_match(st->trawl, in->paths[i].bytes, in->paths[i].len);
  return hits;
}

static NOINLINE size_t
run_fnmatch(const struct arm_state *st, const struct inputs *in, uint64_t passes)
{
  size_t hits = 0;
  for (uint64_t k = 0; k < passes; k++)
    for (size_t i = 0; i < in->n; i++)
      hits += fnmatch(st->glob, in->paths[i].bytes, FNM_PATHNAME) == 0;
  return hits;
}

#ifdef TRAWL_BENCH_PCRE2
static NOINLINE size_t
run_pcre2(const struct arm_state *st, const struct inputs *in, uint64_t passes)
{
  size_t hits = 0;
  for (uint64_t k = 0; k < passes; k++)
    for (size_t i = 0; i < in->n; i++)
      hits += pcre2_jit_match(st->code, (PCRE2_SPTR)in->paths[i].bytes,
                              in->paths[i].len, 0, 0, st->match_data,
                              st->match_context) >= 0;
  return hits;
}
#endif

static size_t
run_arm(enum arm a, const struct arm_state *st, const struct inputs *in,
        uint64_t passes)
{
  switch (a) {
  case ARM_TRAWL:
    return run_trawl(st, in, passes);
  case ARM_FNMATCH:
    return run_fnmatch(st, in, passes);
  default:
#ifdef TRAWL_BENCH_PCRE2
    return run_pcre2(st, in, passes);
#else
    return 0;
#endif
  }
}

static void
arm_state_init(struct arm_state *st, const struct bench_case *c)
{
  memset(st, 0, sizeof *st);
  GError *error = NULL;
  st->trawl = trawl_pattern_compile(c->pattern, strlen(c->pattern),
                                    TRAWL_DIALECT_TRAWL, 0, &error);
  if (st->trawl == NULL) {
    fprintf(stderr, "bench_match: %s\n", error->message);
    exit(1);
  }
  st->glob = c->pattern;
#ifdef TRAWL_BENCH_PCRE2
  st->regex = glob_to_regex(c->pattern);
  int code;
  PCRE2_SIZE off;
  st->code = pcre2_compile((PCRE2_SPTR)st->regex, PCRE2_ZERO_TERMINATED,
                           PCRE2_DOTALL, &code, &off, NULL);
  if (st->code == NULL) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(code, msg, sizeof msg);
    fprintf(stderr, "bench_match: regex \"%s\" at %zu: %s\n", st->regex,
            (size_t)off, (const char *)msg);
    exit(1);
  }
  if (pcre2_jit_compile(st->code, PCRE2_JIT_COMPLETE) != 0) {
    fprintf(stderr, "bench_match: PCRE2 JIT unavailable for \"%s\"\n", st->regex);
    exit(1);
  }
  st->match_data = pcre2_match_data_create_from_pattern(st->code, NULL);
  st->match_context = pcre2_match_context_create(NULL);
  st->jit_stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, NULL);
  pcre2_jit_stack_assign(st->match_context, NULL, st->jit_stack);
#endif
}

static void
arm_state_clear(struct arm_state *st)
{
  trawl_pattern_free(st->trawl);
#ifdef TRAWL_BENCH_PCRE2
  pcre2_jit_stack_free(st->jit_stack);
  pcre2_match_context_free(st->match_context);
  pcre2_match_data_free(st->match_data);
  pcre2_code_free(st->code);
  g_free(st->regex);
#endif
}

/* ---- measurement -------------------------------------------------------- */

struct options {
  unsigned rounds;
  double min_ns;
  uint64_t fixed_passes; /* 0: calibrate */
  const char *case_filter;
  const char *arm_filter;
  bool list;
};

struct cell {
  enum { CELL_NA, CELL_SKIPPED, CELL_GAVE_UP, CELL_TIMED } state;
  double median, lo, hi; /* ns per match */
  double gave_up_ns;     /* one call that gave up */
};

static bool
arm_available(enum arm a, const struct bench_case *c)
{
  if (a == ARM_FNMATCH)
    return c->fnmatch_ok;
#ifndef TRAWL_BENCH_PCRE2
  if (a == ARM_PCRE2)
    return false;
#endif
  return true;
}

static enum verdict
arm_verdict(enum arm a, const struct arm_state *st, const struct path *p)
{
  switch (a) {
  case ARM_TRAWL:
    return verdict_trawl(st, p);
  case ARM_FNMATCH:
    return verdict_fnmatch(st, p);
  default:
#ifdef TRAWL_BENCH_PCRE2
    return verdict_pcre2(st, p);
#else
    abort();
#endif
  }
}

/* Ask every available arm about every path; abort on any disagreement. An
 * arm that gives up on some path is marked and not timed. */
static void
check_verdicts(const struct bench_case *c, const struct arm_state *st,
               const struct inputs *in, struct cell cells[N_ARMS])
{
  for (int a = 0; a < N_ARMS; a++) {
    if (cells[a].state == CELL_NA || cells[a].state == CELL_SKIPPED)
      continue;
    for (size_t i = 0; i < in->n; i++) {
      double t0 = bench_now_ns();
      enum verdict v = arm_verdict((enum arm)a, st, &in->paths[i]);
      double t1 = bench_now_ns();
      if (v == V_GAVE_UP) {
        cells[a].state = CELL_GAVE_UP;
        cells[a].gave_up_ns = t1 - t0;
        break;
      }
      if ((v == V_YES) != c->expect) {
        fprintf(stderr,
                "bench_match: %s: arm %s says %s for \"%.80s%s\" (%zu bytes), "
                "expected %s\n",
                c->name, arm_names[a], v == V_YES ? "match" : "no match",
                in->paths[i].bytes, in->paths[i].len > 80 ? "..." : "",
                in->paths[i].len, c->expect ? "match" : "no match");
        abort();
      }
    }
  }
}

/* An arm and its inputs, for bench_calibrate(). */
struct arm_run {
  enum arm arm;
  const struct arm_state *st;
  const struct inputs *in;
};

static void
run_arm_passes(const void *ctx, uint64_t passes)
{
  const struct arm_run *r = ctx;
  run_arm(r->arm, r->st, r->in, passes);
}

static void
measure_case(const struct bench_case *c, const struct options *o,
             struct cell cells[N_ARMS])
{
  struct arm_state st;
  struct inputs in = {0};
  arm_state_init(&st, c);
  /* Each case's paths depend on its name only, not on which cases ran
   * before it: --case runs see the same bytes as a full run. */
  rng_state = BENCH_RNG_SEED ^ g_str_hash(c->name);
  c->generate(&in);

  for (int a = 0; a < N_ARMS; a++) {
    cells[a].state = arm_available((enum arm)a, c) ? CELL_TIMED : CELL_NA;
    if (cells[a].state == CELL_TIMED && o->arm_filter &&
        strcmp(o->arm_filter, arm_names[a]) != 0)
      cells[a].state = CELL_SKIPPED;
  }
  check_verdicts(c, &st, &in, cells);

  uint64_t passes[N_ARMS] = {0};
  double *samples[N_ARMS] = {0};
  const unsigned rounds = o->fixed_passes ? 1 : o->rounds;
  for (int a = 0; a < N_ARMS; a++) {
    if (cells[a].state != CELL_TIMED)
      continue;
    const struct arm_run run = {(enum arm)a, &st, &in};
    passes[a] = o->fixed_passes
                    ? o->fixed_passes
                    : bench_calibrate(run_arm_passes, &run, o->min_ns, MAX_PASSES);
    samples[a] = g_new(double, rounds);
  }
  const size_t expect_hits = c->expect ? in.n : 0;
  for (unsigned r = 0; r < rounds; r++) {
    for (int a = 0; a < N_ARMS; a++) {
      if (cells[a].state != CELL_TIMED)
        continue;
      double t0 = bench_now_ns();
      size_t hits = run_arm((enum arm)a, &st, &in, passes[a]);
      double dt = bench_now_ns() - t0;
      if (hits != expect_hits * passes[a]) {
        fprintf(stderr, "bench_match: %s: arm %s counted %zu matches, not %zu\n",
                c->name, arm_names[a], hits, (size_t)(expect_hits * passes[a]));
        abort();
      }
      samples[a][r] = dt / ((double)passes[a] * (double)in.n);
    }
  }
  for (int a = 0; a < N_ARMS; a++) {
    if (cells[a].state != CELL_TIMED)
      continue;
    cells[a].median = bench_median(samples[a], rounds);
    cells[a].lo = samples[a][0];
    cells[a].hi = samples[a][rounds - 1];
    g_free(samples[a]);
  }
  if (o->fixed_passes)
    printf("# %s: %zu paths x %" PRIu64 " passes\n", c->name, in.n, o->fixed_passes);

  for (size_t i = 0; i < in.n; i++)
    g_free(in.paths[i].bytes);
  g_free(in.paths);
  arm_state_clear(&st);
}

static void
format_ns(char *buf, size_t n, double ns)
{
  bench_format_ns(buf, n, ns, WHOLE_US_FROM);
}

static void
print_cell(const struct cell *c)
{
  char med[32], lo[32], hi[32];
  switch (c->state) {
  case CELL_NA:
    printf(" n/a |");
    break;
  case CELL_SKIPPED:
    printf(" — |");
    break;
  case CELL_GAVE_UP:
    format_ns(med, sizeof med, c->gave_up_ns);
    printf(" gave up after %s |", med);
    break;
  default:
    format_ns(med, sizeof med, c->median);
    format_ns(lo, sizeof lo, c->lo);
    format_ns(hi, sizeof hi, c->hi);
    if (c->lo == c->hi)
      printf(" %s |", med);
    else
      printf(" %s (%s–%s) |", med, lo, hi);
    break;
  }
}

static void
usage(FILE *f)
{
  fputs("usage: bench_match [--rounds N] [--min-ms MS] [--iterations N]\n"
        "                   [--case SUBSTRING] [--arm trawl|fnmatch|pcre2-jit] [--list]\n"
        "  --iterations N  run each arm exactly N passes over its paths, once\n"
        "                  (also TRAWL_BENCH_ITERATIONS=N); for callgrind\n",
        f);
}

static uint64_t
parse_count(const char *s, const char *what)
{
  return bench_parse_count("bench_match", s, what, usage);
}

static void
parse_options(int argc, char **argv, struct options *o)
{
  o->rounds = DEFAULT_ROUNDS;
  o->min_ns = DEFAULT_MIN_MS * 1e6;
  const char *env = getenv("TRAWL_BENCH_ITERATIONS");
  if (env && *env)
    o->fixed_passes = parse_count(env, "TRAWL_BENCH_ITERATIONS");
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--list") == 0) {
      o->list = true;
      continue;
    }
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
    else if (strcmp(a, "--case") == 0)
      o->case_filter = v;
    else if (strcmp(a, "--arm") == 0)
      o->arm_filter = v;
    else {
      usage(stderr);
      exit(2);
    }
    i++;
  }
  if (o->rounds == 0)
    o->rounds = 1;
}

int
main(int argc, char **argv)
{
  struct options o = {0};
  parse_options(argc, argv, &o);
  if (o.list) {
    for (size_t i = 0; i < N_CASES; i++)
      printf("%s\t%s\n", cases[i].name, cases[i].pattern);
    return 0;
  }

#ifdef __GLIBC__
  printf("# glibc %s", gnu_get_libc_version());
#else
  printf("# libc fnmatch");
#endif
#ifdef TRAWL_BENCH_PCRE2
  char version[64];
  pcre2_config(PCRE2_CONFIG_VERSION, version);
  printf(", PCRE2 %s (JIT)", version);
#else
  printf(", PCRE2 not built in");
#endif
  if (o.fixed_passes)
    printf("; fixed %" PRIu64 " passes, one round\n", o.fixed_passes);
  else
    printf("; median of %u rounds, each >= %.0f ms per arm; ns per match\n",
           o.rounds, o.min_ns / 1e6);

  printf("\n| case | pattern |");
  for (int a = 0; a < N_ARMS; a++)
    printf(" %s |", arm_names[a]);
  printf("\n|---|---|");
  for (int a = 0; a < N_ARMS; a++)
    printf("--:|");
  printf("\n");
  fflush(stdout);

  /* --case names one case exactly, or else every case containing it. */
  bool exact = false;
  for (size_t i = 0; i < N_CASES && o.case_filter; i++)
    exact = exact || strcmp(cases[i].name, o.case_filter) == 0;
  for (size_t i = 0; i < N_CASES; i++) {
    const struct bench_case *c = &cases[i];
    if (o.case_filter && (exact ? strcmp(c->name, o.case_filter) != 0
                                : strstr(c->name, o.case_filter) == NULL))
      continue;
    struct cell cells[N_ARMS];
    measure_case(c, &o, cells);
    printf("| %s | `%s` |", c->name, c->pattern);
    for (int a = 0; a < N_ARMS; a++)
      print_cell(&cells[a]);
    printf("\n");
    fflush(stdout);
  }
  return 0;
}
