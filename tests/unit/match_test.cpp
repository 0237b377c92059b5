// Unit tests of the matching engine (libcore/src/match.c): the pruning
// predicate may_match_below, linear time measured with the engine's step
// counter (never a wall clock), and matching one compiled pattern from many
// threads at once.
#include <atomic>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_util.hpp"

using namespace testutil;

namespace {

// ---- may_match_below -----------------------------------------------------

struct PruneCase {
  const char *dir;
  bool yes;
};

void expect_prune(const char *text, TrawlDialect d, unsigned flags,
                  std::initializer_list<PruneCase> cases)
{
  Pattern p = compile(text, d, flags);
  ASSERT_TRUE(p) << text;
  for (const auto &c : cases)
    EXPECT_EQ(below(p.get(), c.dir), c.yes) << "pattern " << text << ", dir " << show(c.dir);
}

TEST(MayMatchBelow, TheExampleOfTheIssue)
{
  expect_prune("src/*/test/*.c", TRAWL_DIALECT_TRAWL, 0,
               {{"", true},
                {"src", true},
                {"src/x", true},
                {"src/x/test", true},
                {"src/x/other", false},
                {"src/x/test/y", false},
                {"lib", false}});
}

TEST(MayMatchBelow, LiteralRootsAndGlobstars)
{
  expect_prune("{src,packages}/**/*.ts", TRAWL_DIALECT_TRAWL, 0,
               {{"", true}, {"src", true}, {"packages/a/b/c", true}, {"docs", false}, {"srcs", false}});
  expect_prune("a/b", TRAWL_DIALECT_TRAWL, 0, {{"a", true}, {"a/b", false}, {"b", false}});
  expect_prune("**", TRAWL_DIALECT_TRAWL, 0, {{"", true}, {"x/y/z", true}});
  expect_prune("a/**/b/*.c", TRAWL_DIALECT_TRAWL, 0,
               {{"a", true}, {"a/x/y/z", true}, {"b", false}});
}

TEST(MayMatchBelow, OnlyTheLenBytesOfTheDirectoryAreRead)
{
  Pattern p = compile("src/*.c");
  ASSERT_TRUE(p);
  EXPECT_TRUE(trawl_pattern_may_match_below(p.get(), "src/x", 3));
  EXPECT_FALSE(trawl_pattern_may_match_below(p.get(), "src/x", 5));
  EXPECT_TRUE(trawl_pattern_may_match_below(p.get(), "", 0));
}

TEST(MayMatchBelow, IcaseDirectories)
{
  expect_prune("Src/*.c", TRAWL_DIALECT_TRAWL, TRAWL_PATTERN_ICASE,
               {{"src", true}, {"SRC", true}, {"lib", false}});
  expect_prune("Src/*.c", TRAWL_DIALECT_TRAWL, 0, {{"src", false}, {"Src", true}});
}

TEST(MayMatchBelow, BazelHiddenSegments)
{
  expect_prune("*/x", TRAWL_DIALECT_BAZEL, 0, {{".h", true}, {"h", true}});
  expect_prune("*h/x", TRAWL_DIALECT_BAZEL, 0, {{".h", false}, {"xh", true}});
  expect_prune("**/x", TRAWL_DIALECT_BAZEL, 0, {{".a/.b", true}});
}

// ---- linear time ---------------------------------------------------------
//
// The engine is O(path length x pattern length) (match.c). Each test runs it
// alone through trawl_pattern_match_engine, which counts elementary steps,
// and asserts a bound of that product, with the pattern length taken after
// brace expansion (alternatives x text length bounds it). A backtracking
// matcher needs exponentially many steps on these inputs.

struct EngineRun {
  bool matched;
  uint64_t steps;
};

EngineRun run_engine(const TrawlPattern *p, const std::string &path)
{
  uint64_t steps = 0;
  bool m = engine(p, path, &steps);
  return {m, steps};
}

uint64_t product_bound(const TrawlPattern *p, const std::string &path)
{
  size_t len = 0;
  trawl_pattern_text(p, &len);
  return uint64_t(trawl_pattern_alternative_count(p)) * (len + 1) * (path.size() + 1);
}

TEST(LinearTime, StarsAgainstTenThousandBytes)
{
  const std::string text = "a*a*a*a*a*a*a*b";
  Pattern p = compile(text);
  ASSERT_TRUE(p);
  std::string as(10000, 'a');

  EngineRun miss = run_engine(p.get(), as);
  EXPECT_FALSE(miss.matched);
  // 15 pattern bytes x 10,001 positions.
  EXPECT_LE(miss.steps, uint64_t(15) * 10001) << "steps " << miss.steps;
  EXPECT_LE(miss.steps, product_bound(p.get(), as));
  EXPECT_FALSE(match(p.get(), as));

  EngineRun hit = run_engine(p.get(), as + "b");
  EXPECT_TRUE(hit.matched);
  EXPECT_LE(hit.steps, uint64_t(15) * 10002) << "steps " << hit.steps;
  EXPECT_TRUE(match(p.get(), as + "b"));

  // The same inside a deeper path, every component adversarial.
  Pattern deep = compile("**/" + text + "/" + text);
  ASSERT_TRUE(deep);
  std::string path = std::string(2000, 'a') + "/" + std::string(2000, 'a') + "/" +
                     std::string(2000, 'a');
  EngineRun r = run_engine(deep.get(), path);
  EXPECT_FALSE(r.matched);
  EXPECT_LE(r.steps, product_bound(deep.get(), path)) << "steps " << r.steps;
}

TEST(LinearTime, ClassesAndQuestionMarksToo)
{
  Pattern p = compile("*[a]*?*[!b]*a*a*a*[b-c]");
  ASSERT_TRUE(p);
  std::string as(10000, 'a');
  EngineRun r = run_engine(p.get(), as);
  EXPECT_FALSE(r.matched);
  EXPECT_LE(r.steps, product_bound(p.get(), as)) << "steps " << r.steps;
}

TEST(LinearTime, TwentyNestedBracePairs)
{
  // {a*{a*{a*...{a*b,c}...,c},c}: 21 alternatives, each an adversarial star
  // run, the longest twenty 'a*' long.
  std::string text;
  for (int i = 0; i < 20; i++)
    text += "{a*";
  text += "b";
  for (int i = 0; i < 20; i++)
    text += ",c}";
  Pattern p = compile(text);
  ASSERT_TRUE(p) << text;
  EXPECT_EQ(trawl_pattern_alternative_count(p.get()), 21u);
  std::string as(10000, 'a');
  EngineRun r = run_engine(p.get(), as);
  EXPECT_FALSE(r.matched);
  EXPECT_LE(r.steps, product_bound(p.get(), as)) << "steps " << r.steps;
  EXPECT_FALSE(match(p.get(), as));
  EXPECT_TRUE(match(p.get(), as + "b"));
  EXPECT_TRUE(match(p.get(), "aac"));

  // Twenty pairs nested the other way, each an alternation of two wildcards.
  std::string wide;
  for (int i = 0; i < 20; i++)
    wide += "{*a,";
  wide += "*b";
  wide += std::string(20, '}');
  Pattern q = compile(wide);
  ASSERT_TRUE(q) << wide;
  EngineRun s = run_engine(q.get(), as + "c");
  EXPECT_FALSE(s.matched);
  EXPECT_LE(s.steps, product_bound(q.get(), as + "c")) << "steps " << s.steps;
}

TEST(LinearTime, GlobstarsAgainstTwoHundredComponents)
{
  std::string text;
  for (int i = 0; i < 100; i++)
    text += "**/";
  text += "x";
  std::string path;
  for (int i = 0; i < 200; i++)
    path += "d/";
  Pattern p = compile(text);
  ASSERT_TRUE(p);

  EngineRun miss = run_engine(p.get(), path + "y");
  EXPECT_FALSE(miss.matched);
  EXPECT_LE(miss.steps, product_bound(p.get(), path + "y")) << "steps " << miss.steps;
  EngineRun hit = run_engine(p.get(), path + "x");
  EXPECT_TRUE(hit.matched);
  EXPECT_LE(hit.steps, product_bound(p.get(), path + "x")) << "steps " << hit.steps;

  // Globstars separated by components: each middle chunk is placed once, at
  // its leftmost fit; the last one ('b') is never found.
  std::string chunks;
  for (int i = 0; i < 50; i++)
    chunks += "**/a/";
  chunks += "**/b/**/x";
  std::string as;
  for (int i = 0; i < 200; i++)
    as += "a/";
  Pattern q = compile(chunks);
  ASSERT_TRUE(q);
  EngineRun r = run_engine(q.get(), as + "x");
  EXPECT_FALSE(r.matched);
  EXPECT_LE(r.steps, product_bound(q.get(), as + "x")) << "steps " << r.steps;
  EXPECT_TRUE(match(q.get(), as + "b/x"));

  // Stars inside the chunks as well.
  std::string starry;
  for (int i = 0; i < 30; i++)
    starry += "**/*a*a*/";
  starry += "**/*b";
  Pattern s = compile(starry);
  ASSERT_TRUE(s);
  std::string long_as;
  for (int i = 0; i < 200; i++)
    long_as += std::string(20, 'a') + "/";
  long_as += "aaaa";
  EngineRun t = run_engine(s.get(), long_as);
  EXPECT_FALSE(t.matched);
  EXPECT_LE(t.steps, product_bound(s.get(), long_as)) << "steps " << t.steps;
}

TEST(LinearTime, EveryDialectIsBounded)
{
  std::string as(5000, 'a');
  struct {
    TrawlDialect d;
    const char *text;
  } cases[] = {
    {TRAWL_DIALECT_GIT, "a*a*a*a*a*a*a*b"},
    {TRAWL_DIALECT_CMAKE, "a*a*a*a*a*a*a*b"},
    {TRAWL_DIALECT_BAZEL, "a*a*a*a*a*a*a*b"},
    {TRAWL_DIALECT_BAZEL, "**/a*a*a*a*b"},
  };
  for (const auto &c : cases) {
    Pattern p = compile(c.text, c.d);
    ASSERT_TRUE(p) << c.text;
    EngineRun r = run_engine(p.get(), as);
    EXPECT_FALSE(r.matched) << c.text;
    EXPECT_LE(r.steps, product_bound(p.get(), as)) << c.text << ": steps " << r.steps;
  }
}

// ---- threads -------------------------------------------------------------

struct ThreadJob {
  const TrawlPattern *pattern;
  const std::vector<std::string> *paths;
  const std::vector<bool> *expected;
  std::atomic<int> *mismatches;
  int rounds;
};

gpointer match_many(gpointer data)
{
  auto *job = static_cast<ThreadJob *>(data);
  for (int r = 0; r < job->rounds; r++)
    for (size_t i = 0; i < job->paths->size(); i++) {
      const std::string &path = (*job->paths)[i];
      bool m = trawl_pattern_match(job->pattern, path.data(), path.size());
      bool b = trawl_pattern_may_match_below(job->pattern, path.data(), path.size());
      (void)b;
      if (m != (*job->expected)[i])
        job->mismatches->fetch_add(1);
    }
  return nullptr;
}

TEST(Threads, OnePatternManyThreads)
{
  const char *texts[] = {"src/**/*.{c,h}", "**/[a-m]*x*y*.c", "{a,b/**}/*[!z]"};
  std::vector<std::string> paths;
  const char *parts[] = {"src", "a", "b", "lib", "x", "yz", "m.c", "axy.c", "q.h", "z"};
  guint32 seed = 7;
  for (int i = 0; i < 2000; i++) {
    std::string path;
    int n = 1 + i % 5;
    for (int k = 0; k < n; k++) {
      seed = seed * 1103515245u + 12345u;
      path += (k ? "/" : "") + std::string(parts[(seed >> 16) % 10]);
    }
    paths.push_back(path);
  }
  for (const char *text : texts) {
    Pattern p = compile(text);
    ASSERT_TRUE(p) << text;
    std::vector<bool> expected;
    int hits = 0;
    for (const auto &path : paths) {
      expected.push_back(match(p.get(), path));
      hits += expected.back();
    }
    EXPECT_GT(hits, 0) << text;

    std::atomic<int> mismatches{0};
    const int n_threads = 8;
    std::vector<ThreadJob> jobs(n_threads, ThreadJob{p.get(), &paths, &expected, &mismatches, 20});
    std::vector<GThread *> threads;
    for (int t = 0; t < n_threads; t++)
      threads.push_back(g_thread_new("match", match_many, &jobs[t]));
    for (GThread *t : threads)
      g_thread_join(t);
    EXPECT_EQ(mismatches.load(), 0) << text;
  }
}

gpointer compile_many(gpointer data)
{
  auto *failures = static_cast<std::atomic<int> *>(data);
  for (int i = 0; i < 300; i++) {
    GError *error = nullptr;
    TrawlPattern *p = trawl_pattern_compile("{a,b}/**/*.c", 12, TRAWL_DIALECT_TRAWL, 0, &error);
    if (!p || !trawl_pattern_match(p, "a/x/y.c", 7))
      failures->fetch_add(1);
    trawl_pattern_free(p);
    TrawlPattern *bad = trawl_pattern_compile("a/[b", 4, TRAWL_DIALECT_TRAWL, 0, &error);
    if (bad || trawl_pattern_error_offset(error) != 2)
      failures->fetch_add(1);
    g_clear_error(&error);
  }
  return nullptr;
}

TEST(Threads, CompileAndFailFromManyThreads)
{
  std::atomic<int> failures{0};
  std::vector<GThread *> threads;
  for (int t = 0; t < 8; t++)
    threads.push_back(g_thread_new("compile", compile_many, &failures));
  for (GThread *t : threads)
    g_thread_join(t);
  EXPECT_EQ(failures.load(), 0);
}

} // namespace
