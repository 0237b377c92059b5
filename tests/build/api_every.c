/* Every public function of libtrawl, called and its answer checked, as a
 * program outside the project writes it: only <trawl/trawl.h>, built with
 * pkg-config against the installed library (tests/build/install.sh). The
 * file is C11 and C++11 at once (no designated initializers, every void *
 * cast), and install.sh builds and runs it as both; it also fails when a
 * function the headers declare TRAWL_API is not called here.
 *
 * usage: api_every TREE OTHER CACHE IGNORE-FILE
 *   TREE        a.c b.h src/c.c src/d/e.c build/gen.c, and .ignore saying build/
 *   OTHER       x.c (a second root)
 *   CACHE       a path for a cache file (not there yet)
 *   IGNORE-FILE an ignore file saying *.h
 * with TRAWL_WATCHMAN=off. Prints "ok N" (N: the checks) or the first
 * failed check, and exits 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trawl/trawl.h>

static unsigned checks;

#define CHECK(cond)                                                          \
  do {                                                                       \
    checks++;                                                                \
    if (!(cond)) {                                                           \
      fprintf(stderr, "api_every: line %d: %s\n", __LINE__, #cond);          \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

static TrawlPattern *compile(const char *text, TrawlDialect dialect)
{
  GError *error = NULL;
  TrawlPattern *p = trawl_pattern_compile(text, strlen(text), dialect, TRAWL_PATTERN_DEFAULT,
                                          &error);
  if (p == NULL) {
    fprintf(stderr, "api_every: %s\n", error->message);
    exit(1);
  }
  return p;
}

static const char *at(const GPtrArray *a, guint i)
{
  return (const char *)g_ptr_array_index(a, i);
}

/* The strings of A joined by spaces, in a buffer of the caller's. */
static const char *joined(const GPtrArray *a, char *buf, size_t size)
{
  buf[0] = '\0';
  for (guint i = 0; a && i < a->len; i++) {
    if (i)
      g_strlcat(buf, " ", size);
    g_strlcat(buf, at(a, i), size);
  }
  return buf;
}

static bool count_entry(const TrawlEntry *e, void *data)
{
  (void)e;
  (*(unsigned *)data)++;
  return true;
}

static bool sorted_entry(const TrawlEntry *e, void *data)
{
  GString *s = (GString *)data;
  g_string_append_printf(s, "%s%u:%s", s->len ? " " : "", e->root, e->path);
  return true;
}

static void plan_result(size_t q, const char *path, size_t len, void *data)
{
  GString *s = (GString *)data;
  g_string_append_printf(s, "%s%u:%.*s", s->len ? " " : "", (unsigned)q, (int)len, path);
}

static void watched(const char *path, void *data)
{
  (void)path;
  (*(unsigned *)data)++;
}

/* Takes two paths, then stops the list. */
static bool watched_two(const char *path, void *data)
{
  (void)path;
  return ++*(unsigned *)data < 2;
}

static void changed(size_t q, const char *path, bool added, void *data)
{
  (void)q;
  (void)path;
  (void)added;
  (*(unsigned *)data)++;
}

static void check_pattern(void)
{
  CHECK(strcmp(trawl_version(), TRAWL_VERSION_STRING) == 0);

  TrawlPattern *p = compile("src/**/*.c", TRAWL_DIALECT_TRAWL);
  CHECK(trawl_pattern_match(p, "src/d/e.c", 9));
  CHECK(!trawl_pattern_match(p, "a.c", 3));
  CHECK(trawl_pattern_may_match_below(p, "src", 3));
  CHECK(!trawl_pattern_may_match_below(p, "lib", 3));
  size_t len = 0;
  CHECK(memcmp(trawl_pattern_text(p, &len), "src/**/*.c", 10) == 0 && len == 10);
  CHECK(trawl_pattern_dialect(p) == TRAWL_DIALECT_TRAWL);
  CHECK(trawl_pattern_flags(p) == TRAWL_PATTERN_DEFAULT);
  CHECK(!trawl_pattern_matches_nothing(p));
  CHECK(memcmp(trawl_pattern_literal_prefix(p, &len), "src/", 4) == 0 && len == 4);
  CHECK(memcmp(trawl_pattern_literal_suffix(p, &len), ".c", 2) == 0 && len == 2);
  CHECK(memcmp(trawl_pattern_extension(p, &len), ".c", 2) == 0 && len == 2);
  CHECK(trawl_pattern_min_length(p) == 6); /* "src/.c" */
  const GPtrArray *roots = trawl_pattern_roots(p);
  CHECK(roots->len == 1 && strcmp(at(roots, 0), "src") == 0);
  CHECK(trawl_pattern_alternative_count(p) == 1);
  CHECK(!trawl_pattern_typed(p));
  CHECK(trawl_pattern_match_entry(p, "src/e.c", 7, TRAWL_ENTRY_FILE));
  trawl_pattern_free(p);

  TrawlPattern *braces = compile("{lib,src}/*.c", TRAWL_DIALECT_TRAWL);
  CHECK(trawl_pattern_alternative_count(braces) == 2);
  char buf[256];
  CHECK(strcmp(joined(trawl_pattern_roots(braces), buf, sizeof buf), "lib src") == 0);
  trawl_pattern_free(braces);

  /* The bazel dialect's "a/ **" selects a directory "a", never a file. */
  TrawlPattern *bazel = compile("a/**", TRAWL_DIALECT_BAZEL);
  CHECK(trawl_pattern_typed(bazel));
  CHECK(trawl_pattern_match_entry(bazel, "a", 1, TRAWL_ENTRY_DIR));
  CHECK(!trawl_pattern_match_entry(bazel, "a", 1, TRAWL_ENTRY_FILE));
  trawl_pattern_free(bazel);

  TrawlPattern *nothing = compile("[", TRAWL_DIALECT_GIT);
  CHECK(trawl_pattern_matches_nothing(nothing));
  trawl_pattern_free(nothing);

  GError *error = NULL;
  CHECK(trawl_pattern_compile("src/[a.c", 8, TRAWL_DIALECT_TRAWL, 0, &error) == NULL);
  CHECK(error != NULL && error->domain == trawl_pattern_error_quark());
  CHECK(error->code == TRAWL_PATTERN_ERROR_SYNTAX);
  CHECK(trawl_pattern_error_offset(error) == 4);
  g_clear_error(&error);

  GString *escaped = g_string_new(NULL);
  trawl_pattern_escape(escaped, "a*b{c}", 6);
  CHECK(strcmp(escaped->str, "a\\*b\\{c\\}") == 0);
  g_string_free(escaped, TRUE);
}

static void check_patset(void)
{
  TrawlPattern *c = compile("**/*.c", TRAWL_DIALECT_TRAWL);
  TrawlPattern *h = compile("*.h", TRAWL_DIALECT_TRAWL);
  const TrawlPattern *both[2];
  both[0] = c;
  both[1] = h;
  TrawlPatset *set = trawl_patset_new(both, 2);
  CHECK(trawl_patset_size(set) == 2);
  CHECK(trawl_patset_any(set, "b.h", 3));
  CHECK(!trawl_patset_any(set, "b.txt", 5));
  GArray *hits = g_array_new(FALSE, FALSE, sizeof(guint));
  CHECK(trawl_patset_matches(set, "src/c.c", 7, hits) == 1);
  CHECK(hits->len == 1 && g_array_index(hits, guint, 0) == 0);
  g_array_unref(hits);
  CHECK((trawl_patset_pattern_keys(set, 0) & TRAWL_PATSET_KEY_EXTENSION) != 0);
  CHECK(trawl_patset_candidates(set, "src/c.c", 7) >= 1);
  trawl_patset_free(set);
  trawl_pattern_free(c);
  trawl_pattern_free(h);
}

static void check_walker(const char *tree, const char *other, const char *ignore_file)
{
  char buf[512];
  GError *error = NULL;
  TrawlPattern *c = compile("**/*.c", TRAWL_DIALECT_TRAWL);
  TrawlPattern *d = compile("**/d/**", TRAWL_DIALECT_TRAWL);

  TrawlWalkOptions o;
  trawl_walk_options_init(&o);
  CHECK(o.types == TRAWL_ENTRY_FILE && o.ignore == (TRAWL_IGNORE_VCS | TRAWL_IGNORE_DOT));
  o.threads = 1;
  TrawlWalker *w = trawl_walker_new(&o);
  trawl_walker_add_root(w, tree);
  trawl_walker_add_include(w, c);
  trawl_walker_add_exclude(w, d);
  GPtrArray *paths = trawl_walker_collect(w, &error); /* build/ ignored by .ignore */
  CHECK(paths != NULL);
  CHECK(strcmp(joined(paths, buf, sizeof buf), "a.c src/c.c") == 0);
  g_ptr_array_unref(paths);
  CHECK(trawl_walker_problems(w)->len == 0);
  TrawlWalkStats st;
  trawl_walker_stats(w, &st);
  CHECK(st.results == 2 && st.dirs_opened >= 2);

  unsigned n = 0;
  CHECK(trawl_walker_run(w, count_entry, &n, &error) && n == 2);

  TrawlExplanation e;
  CHECK(trawl_walker_explain(w, "build/gen.c", &e, &error));
  CHECK(!e.selected && e.reason == TRAWL_EXPLAIN_IGNORED);
  CHECK(e.ignore_pattern != NULL && strcmp(e.ignore_pattern, "build/") == 0);
  trawl_explanation_clear(&e);
  CHECK(e.ignore_pattern == NULL);

  /* Two roots: run_sorted and collect_entries keep each path's root. */
  trawl_walker_add_root(w, other);
  GString *s = g_string_new(NULL);
  CHECK(trawl_walker_run_sorted(w, sorted_entry, s, &error));
  CHECK(strcmp(s->str, "0:a.c 0:src/c.c 1:x.c") == 0);
  g_string_free(s, TRUE);
  GPtrArray *entries = trawl_walker_collect_entries(w, &error);
  CHECK(entries != NULL && entries->len == 3);
  const TrawlEntry *last = (const TrawlEntry *)g_ptr_array_index(entries, 2);
  CHECK(last->root == 1 && strcmp(last->path, "x.c") == 0 && last->type == TRAWL_ENTRY_FILE);
  g_ptr_array_unref(entries);

  trawl_walker_free(w);

  /* An ignore file of one's own (*.h), applied after the tree's. */
  TrawlPattern *h = compile("*.h", TRAWL_DIALECT_TRAWL);
  w = trawl_walker_new(&o);
  trawl_walker_add_root(w, tree);
  trawl_walker_add_include(w, h);
  paths = trawl_walker_collect(w, &error);
  CHECK(paths != NULL && strcmp(joined(paths, buf, sizeof buf), "b.h") == 0);
  g_ptr_array_unref(paths);
  CHECK(trawl_walker_add_ignore_file(w, ignore_file, &error));
  paths = trawl_walker_collect(w, &error);
  CHECK(paths != NULL && paths->len == 0);
  g_ptr_array_unref(paths);
  trawl_walker_free(w);
  trawl_pattern_free(h);

  /* A root that is not there fails the run in TRAWL_WALK_ERROR. */
  w = trawl_walker_new(NULL);
  trawl_walker_add_root(w, "/nonexistent/trawl/root");
  CHECK(trawl_walker_collect(w, &error) == NULL);
  CHECK(error != NULL && error->domain == trawl_walk_error_quark());
  CHECK(error->code == TRAWL_WALK_ERROR_ROOT);
  g_clear_error(&error);
  trawl_walker_free(w);
  trawl_pattern_free(c);
  trawl_pattern_free(d);
}

/* A plan of two queries of TREE: C's includes, then H's (query 0 and 1). */
static TrawlPlan *make_plan(const char *tree, const TrawlPattern *c, const TrawlPattern *h,
                            const TrawlWalkOptions *o)
{
  TrawlPlan *plan = trawl_plan_new();
  const TrawlPattern *one[1];
  TrawlQuery q;
  memset(&q, 0, sizeof q);
  q.root = tree;
  q.includes = one;
  q.n_includes = 1;
  q.options = o;
  one[0] = c;
  CHECK(trawl_plan_add(plan, &q) == 0);
  one[0] = h; /* the plan copies the array */
  CHECK(trawl_plan_add(plan, &q) == 1);
  return plan;
}

static void check_plan_and_cache(const char *tree, const char *cache)
{
  char buf[512];
  GError *error = NULL;
  TrawlPattern *c = compile("**/*.c", TRAWL_DIALECT_TRAWL);
  TrawlPattern *h = compile("*.h", TRAWL_DIALECT_TRAWL);
  TrawlWalkOptions o;
  trawl_walk_options_init(&o);
  o.threads = 1;

  TrawlPlan *plan = make_plan(tree, c, h, &o);
  CHECK(trawl_plan_size(plan) == 2);
  CHECK(strcmp(trawl_plan_query_root(plan, 1), tree) == 0);
  CHECK(trawl_plan_run(plan, &error));
  CHECK(strcmp(joined(trawl_plan_results(plan, 0), buf, sizeof buf),
               "a.c src/c.c src/d/e.c") == 0);
  CHECK(strcmp(joined(trawl_plan_results(plan, 1), buf, sizeof buf), "b.h") == 0);
  CHECK(trawl_plan_error(plan, 0) == NULL);
  CHECK(trawl_plan_problems(plan, 0)->len == 0);
  CHECK(trawl_plan_groups(plan) == 1 && trawl_plan_group(plan, 1) == 0);
  TrawlWalkStats st;
  trawl_plan_stats(plan, 0, &st);
  CHECK(st.results == 4);
  GString *s = g_string_new(NULL);
  CHECK(trawl_plan_run_each(plan, plan_result, s, &error));
  /* Each query's in order; the queries' interleaved as the walk finds them. */
  CHECK(strstr(s->str, "0:a.c") != NULL && strstr(s->str, "1:b.h") != NULL);
  CHECK(strstr(s->str, "0:a.c") < strstr(s->str, "0:src/c.c"));
  CHECK(strstr(s->str, "0:src/c.c") < strstr(s->str, "0:src/d/e.c"));
  CHECK(strlen(s->str) == strlen("0:a.c 1:b.h 0:src/c.c 0:src/d/e.c"));
  g_string_free(s, TRUE);

  /* The digest of the results, whole and as they stream by. */
  CHECK(trawl_plan_run(plan, &error));
  char *whole = trawl_digest_plans(&plan, 1);
  TrawlDigest *dg = trawl_digest_new();
  for (size_t q = 0; q < 2; q++) {
    const GPtrArray *r = trawl_plan_results(plan, q);
    for (guint i = 0; i < r->len; i++)
      trawl_digest_result(dg, at(r, i), strlen(at(r, i)));
    trawl_digest_end_query(dg);
  }
  char *streamed = trawl_digest_finish(dg);
  CHECK(strlen(whole) == 64 && strcmp(whole, streamed) == 0);
  g_free(whole);
  g_free(streamed);
  trawl_plan_free(plan);

  /* The cache: written by the first run, trusted by the second. */
  CHECK(trawl_cache_watchman_setting(&error)); /* TRAWL_WATCHMAN=off */
  TrawlCacheReport rep;
  plan = make_plan(tree, c, h, &o);
  CHECK(trawl_cache_run(plan, cache, 0, &rep, &error));
  CHECK(!rep.trusted && rep.warning == NULL && rep.written && rep.changed);
  CHECK(rep.watchman == TRAWL_CACHE_WATCHMAN_OFF);
  CHECK(trawl_cache_previous_results(plan, 0) == NULL);
  trawl_cache_report_clear(&rep);
  trawl_plan_free(plan);

  plan = make_plan(tree, c, h, &o);
  CHECK(trawl_cache_run(plan, cache, 0, &rep, &error));
  CHECK(rep.trusted && rep.warning == NULL && !rep.changed);
  const GPtrArray *was = trawl_cache_previous_results(plan, 0);
  CHECK(was != NULL && strcmp(joined(was, buf, sizeof buf), "a.c src/c.c src/d/e.c") == 0);
  unsigned changes = 0;
  CHECK(trawl_cache_changes(plan, changed, &changes) == 0 && changes == 0);
  trawl_cache_report_clear(&rep);
  s = g_string_new(NULL);
  CHECK(trawl_cache_run_each(plan, cache, TRAWL_CACHE_HOLD_CHANGED, plan_result, s, &rep,
                             &error));
  CHECK(rep.trusted && strstr(s->str, "1:b.h") != NULL);
  CHECK(trawl_cache_store(plan, &rep)); /* nothing held: nothing changed */
  g_string_free(s, TRUE);
  trawl_cache_report_clear(&rep);
  trawl_plan_free(plan);

  /* What the cache file holds: its queries, and the paths to watch. */
  plan = trawl_cache_load_plan(cache, &error);
  CHECK(plan != NULL && trawl_plan_size(plan) == 2);
  trawl_plan_free(plan);
  unsigned watch = 0;
  bool always = true;
  CHECK(trawl_cache_watch(cache, watched, &watch, &always, &error));
  CHECK(watch >= 4); /* the root, src, src/d, build ... */
  unsigned two = 0;
  CHECK(trawl_cache_watch_until(cache, watched_two, &two, &always, &error));
  CHECK(two == 2 && always); /* stopped at two: a list cut short proves nothing */
  CHECK(trawl_cache_load_plan("/nonexistent/trawl.cache", &error) == NULL && error != NULL);
  g_clear_error(&error);

  /* A cache file that is not one: the run stands, the report says why in
   * TRAWL_CACHE_ERROR. */
  FILE *f = fopen(cache, "wb");
  CHECK(f != NULL);
  fputs("not a cache\n", f);
  fclose(f);
  plan = make_plan(tree, c, h, &o);
  CHECK(trawl_cache_run(plan, cache, 0, &rep, &error));
  CHECK(!rep.trusted && rep.warning != NULL);
  CHECK(rep.warning->domain == trawl_cache_error_quark());
  CHECK(rep.warning->code == TRAWL_CACHE_ERROR_UNTRUSTED);
  CHECK(strcmp(joined(trawl_plan_results(plan, 1), buf, sizeof buf), "b.h") == 0);
  trawl_cache_report_clear(&rep);
  CHECK(rep.warning == NULL);
  trawl_plan_free(plan);

  trawl_pattern_free(c);
  trawl_pattern_free(h);
}

int main(int argc, char **argv)
{
  if (argc != 5) {
    fprintf(stderr, "usage: api_every TREE OTHER CACHE IGNORE-FILE\n");
    return 2;
  }
  check_pattern();
  check_patset();
  check_walker(argv[1], argv[2], argv[4]);
  check_plan_and_cache(argv[1], argv[3]);
  printf("ok %u\n", checks);
  return 0;
}
