// Pattern sets (trawl/patset.h): hand cases for every key class and edge, a
// deterministic check that a query runs only the patterns its keys name, and
// a generated property test: on seeded random pattern lists (realistic
// shapes and random globs, all four dialects, some case-folding) and random
// paths, trawl_patset_matches equals a loop over trawl_pattern_match, indices
// included, and trawl_patset_any equals "matches is not empty".
// TRAWL_PATSET_SEED=N replays another seed, TRAWL_PATSET_ROUNDS=N scales it.
#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "trawl/patset.h"
#include "test_util.hpp"

using namespace testutil;

namespace {

struct Spec {
  std::string text;
  TrawlDialect dialect = TRAWL_DIALECT_TRAWL;
  unsigned flags = 0;
};

// A set and the patterns it borrows.
class Set {
public:
  explicit Set(const std::vector<Spec> &specs)
  {
    for (const Spec &s : specs) {
      Pattern p = compile(s.text, s.dialect, s.flags);
      if (!p)
        continue;
      texts_.push_back(s.text);
      patterns_.push_back(std::move(p));
    }
    std::vector<const TrawlPattern *> raw;
    for (const Pattern &p : patterns_)
      raw.push_back(p.get());
    set_ = trawl_patset_new(raw.data(), raw.size());
  }
  explicit Set(const std::vector<std::string> &texts, unsigned flags = 0)
    : Set(specs(texts, flags))
  {
  }
  ~Set() { trawl_patset_free(set_); }
  Set(const Set &) = delete;
  Set &operator=(const Set &) = delete;

  size_t size() const { return patterns_.size(); }
  const std::string &text(size_t i) const { return texts_[i]; }
  unsigned keys(size_t i) const { return trawl_patset_pattern_keys(set_, i); }

  std::vector<guint> matches(const std::string &path) const
  {
    Exact buf(path);
    GArray *out = g_array_new(FALSE, FALSE, sizeof(guint));
    guint sentinel = 4242; // matches appends: what was there stays
    g_array_append_val(out, sentinel);
    size_t n = trawl_patset_matches(set_, buf.data(), buf.size(), out);
    EXPECT_EQ(n + 1, out->len);
    EXPECT_EQ(4242u, g_array_index(out, guint, 0));
    std::vector<guint> v(&g_array_index(out, guint, 0) + 1, &g_array_index(out, guint, 0) + out->len);
    g_array_free(out, TRUE);
    return v;
  }
  bool any(const std::string &path) const
  {
    Exact buf(path);
    return trawl_patset_any(set_, buf.data(), buf.size());
  }
  size_t candidates(const std::string &path) const
  {
    Exact buf(path);
    return trawl_patset_candidates(set_, buf.data(), buf.size());
  }
  // The reference: every pattern in turn.
  std::vector<guint> loop(const std::string &path) const
  {
    std::vector<guint> v;
    for (size_t i = 0; i < patterns_.size(); i++)
      if (match(patterns_[i].get(), path))
        v.push_back(static_cast<guint>(i));
    return v;
  }
  // matches == loop and any == !loop.empty(); the failure names the set.
  ::testing::AssertionResult agrees(const std::string &path) const
  {
    std::vector<guint> want = loop(path), got = matches(path);
    bool a = any(path);
    if (got == want && a == !want.empty())
      return ::testing::AssertionSuccess();
    auto list = [](const std::vector<guint> &v) {
      std::string s;
      for (guint i : v)
        s += " " + std::to_string(i);
      return s;
    };
    std::string pats;
    for (size_t i = 0; i < texts_.size(); i++)
      if (i < 12 || std::find(want.begin(), want.end(), i) != want.end())
      pats += "\n    " + std::to_string(i) + ": " + show(texts_[i]) + " keys " +
              std::to_string(keys(i));
    return ::testing::AssertionFailure()
           << "path " << show(path) << ": matches" << list(got) << ", loop" << list(want)
           << ", any " << a << pats;
  }
  TrawlPatset *get() const { return set_; }

private:
  static std::vector<Spec> specs(const std::vector<std::string> &texts, unsigned flags)
  {
    std::vector<Spec> v;
    for (const std::string &t : texts)
      v.push_back({t, TRAWL_DIALECT_TRAWL, flags});
    return v;
  }
  std::vector<Pattern> patterns_;
  std::vector<std::string> texts_;
  TrawlPatset *set_ = nullptr;
};

// splitmix64, for the hand cases that need volume.
struct Rng64 {
  explicit Rng64(uint64_t seed) : state(seed) {}
  uint64_t next()
  {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t state;
};

const std::vector<std::string> kProbePaths = {
  "", "a", "Makefile", "src/Makefile", "src/main.c", "src/main.h", "x.tar.gz", "a/x.tar.gz",
  "a/x.gz", "a/x.tar.gz.bak", ".tar.gz", "dir1/a/b", "dir1", "dir10/a", "prefix3x",
  "docs/foo1/bar", "a/foo12bar.c", "SRC/MAIN.C", "a/MAKEFILE", "a/b/c/d/e.c", "a.c/b",
  "src/main_test.go", "x/.c", "x/..c", "a//b", "/", "a/",
};

void expect_agrees(const Set &set)
{
  for (const std::string &path : kProbePaths)
    EXPECT_TRUE(set.agrees(path));
}

TEST(Patset, EmptySet)
{
  TrawlPatset *set = trawl_patset_new(nullptr, 0);
  EXPECT_EQ(0u, trawl_patset_size(set));
  EXPECT_FALSE(trawl_patset_any(set, "", 0));
  EXPECT_FALSE(trawl_patset_any(set, "a/b", 3));
  GArray *out = g_array_new(FALSE, FALSE, sizeof(guint));
  EXPECT_EQ(0u, trawl_patset_matches(set, "a/b", 3, out));
  EXPECT_EQ(0u, out->len);
  g_array_free(out, TRUE);
  trawl_patset_free(set);
  trawl_patset_free(nullptr);
}

TEST(Patset, EachKeyClass)
{
  Set set({"src/main.c", "**/Makefile", "**/*.c", "dir1/**", "**/*_test.go", "**/*foo1*", "*",
           "prefix3*"});
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_EXACT), set.keys(0));
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_BASENAME), set.keys(1));
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_EXTENSION), set.keys(2));
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_PREFIX), set.keys(3));
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_SUFFIX), set.keys(4));
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_SCREEN), set.keys(5));
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_ALWAYS), set.keys(6));
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_PREFIX), set.keys(7));
  EXPECT_EQ((std::vector<guint>{0, 2}), set.matches("src/main.c"));
  EXPECT_EQ((std::vector<guint>{1}), set.matches("a/b/Makefile"));
  EXPECT_EQ((std::vector<guint>{1, 6}), set.matches("Makefile"));
  EXPECT_EQ((std::vector<guint>{3}), set.matches("dir1/x/y"));
  EXPECT_EQ((std::vector<guint>{}), set.matches("dir10/x/y"));
  EXPECT_EQ((std::vector<guint>{4}), set.matches("a/b_test.go"));
  EXPECT_EQ((std::vector<guint>{2, 5}), set.matches("a/xfoo12.c"));
  EXPECT_EQ((std::vector<guint>{6, 7}), set.matches("prefix3"));
  expect_agrees(set);
}

TEST(Patset, MultiDotExtensions)
{
  Set set({"*.tar.gz", "**/*.gz", "**/*.tar", "**/.c", "**/*..c", "*.TAR.GZ"});
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_EXTENSION), set.keys(0));
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_EXTENSION), set.keys(1));
  EXPECT_EQ((std::vector<guint>{0, 1}), set.matches("x.tar.gz"));
  EXPECT_EQ((std::vector<guint>{1}), set.matches("a/x.tar.gz"));
  EXPECT_EQ((std::vector<guint>{0, 1}), set.matches(".tar.gz"));
  EXPECT_EQ((std::vector<guint>{}), set.matches("x.tar.gz.bak"));
  EXPECT_EQ((std::vector<guint>{2}), set.matches("a.gz/x.tar"));
  EXPECT_EQ((std::vector<guint>{3}), set.matches("x/.c"));
  EXPECT_EQ((std::vector<guint>{4}), set.matches("x/..c"));
  EXPECT_EQ((std::vector<guint>{5}), set.matches("x.TAR.GZ"));
  expect_agrees(set);
}

TEST(Patset, DuplicatesAndOrder)
{
  Set set({"**/*.c", "src/**", "**/*.c", "src/main.c", "src/**"});
  EXPECT_EQ((std::vector<guint>{0, 1, 2, 3, 4}), set.matches("src/main.c"));
  EXPECT_EQ((std::vector<guint>{1, 4}), set.matches("src/main.h"));
  expect_agrees(set);
}

TEST(Patset, BracesKeyEachAlternative)
{
  Set set({"{src/main.c,**/*.h,docs/**}", "{*,**/*.c}", "**/*.{c,cc,cpp}", "{a,ab}*",
           "{**/Makefile,**/CMakeLists.txt}"});
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_EXACT | TRAWL_PATSET_KEY_EXTENSION |
                     TRAWL_PATSET_KEY_PREFIX),
            set.keys(0));
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_ALWAYS), set.keys(1)); // '*' has no key
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_EXTENSION), set.keys(2));
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_PREFIX), set.keys(3));
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_BASENAME), set.keys(4));
  // "abc" carries both prefixes of pattern 3: found twice, reported once.
  EXPECT_EQ((std::vector<guint>{1, 3}), set.matches("abc"));
  EXPECT_EQ(2u + 1u, set.candidates("abc"));
  EXPECT_EQ((std::vector<guint>{0, 1, 2}), set.matches("src/main.c"));
  EXPECT_EQ((std::vector<guint>{4}), set.matches("x/CMakeLists.txt"));
  expect_agrees(set);
}

TEST(Patset, CaseFolding)
{
  std::vector<Spec> specs = {
    {"**/MAKEFILE", TRAWL_DIALECT_TRAWL, TRAWL_PATTERN_ICASE},
    {"**/Makefile", TRAWL_DIALECT_TRAWL, 0},
    {"**/*.C", TRAWL_DIALECT_TRAWL, TRAWL_PATTERN_ICASE},
    {"SRC/**", TRAWL_DIALECT_GIT, TRAWL_PATTERN_ICASE},
    {"**/*FOO*", TRAWL_DIALECT_CMAKE, TRAWL_PATTERN_ICASE},
    {"Src/Main.c", TRAWL_DIALECT_BAZEL, TRAWL_PATTERN_ICASE},
  };
  Set set(specs);
  EXPECT_EQ((std::vector<guint>{0}), set.matches("a/makefile"));
  EXPECT_EQ((std::vector<guint>{0, 1}), set.matches("a/Makefile"));
  EXPECT_EQ((std::vector<guint>{2, 3, 5}), set.matches("src/main.c"));
  EXPECT_EQ((std::vector<guint>{4}), set.matches("x/aFoOb"));
  expect_agrees(set);
}

TEST(Patset, Dialects)
{
  std::vector<Spec> specs = {
    {"ab**/x", TRAWL_DIALECT_GIT},     // git's cut: "ab" then "**/x"
    {"ab**", TRAWL_DIALECT_GIT},
    {"a[", TRAWL_DIALECT_GIT},         // malformed: matches nothing
    {"src/\\*.c", TRAWL_DIALECT_CMAKE}, // '\' is a byte
    {"*.c", TRAWL_DIALECT_CMAKE},
    {"**/*.c", TRAWL_DIALECT_BAZEL},
    {"**", TRAWL_DIALECT_BAZEL},
    {"**", TRAWL_DIALECT_TRAWL},
    {"**", TRAWL_DIALECT_GIT},
    {"x/**", TRAWL_DIALECT_BAZEL},
  };
  Set set(specs);
  ASSERT_EQ(specs.size(), set.size());
  EXPECT_EQ(0u, set.keys(2));
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_ALWAYS), set.keys(6));
  for (const char *path :
       {"abx", "ab/x", "abc/d/x", "ab", "abc", "a[", "src/\\x.c", "src\\/x.c", "x.c", "a/.x.c",
        "a/x.c", ".x.c", "x", "x/", "x/y", "", ".a/b"})
    EXPECT_TRUE(set.agrees(path));
  expect_agrees(set);
}

TEST(Patset, NothingMatchesAndEmptyPath)
{
  std::vector<Spec> specs = {{"a[", TRAWL_DIALECT_GIT}, {"[", TRAWL_DIALECT_GIT}};
  Set none(specs);
  EXPECT_EQ(0u, none.keys(0));
  EXPECT_EQ(0u, none.candidates("a["));
  EXPECT_FALSE(none.any("a["));
  Set set({"**", "*", "**/*", "a", "**/a"});
  EXPECT_TRUE(set.agrees(""));
  expect_agrees(set);
}

// Keys are cut (prefix and suffix keys to 255 bytes, screen literals to 32):
// a piece of a required literal is still required.
TEST(Patset, LongLiterals)
{
  std::string long_dir(300, 'd'), long_name(100, 'n');
  Set set({long_dir + "/**", "**/*" + long_name + "*", long_dir + "/x.c", "**/*" + long_name,
           "*." + std::string(300, 'e')});
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_PREFIX), set.keys(0));
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_SCREEN), set.keys(1));
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_EXACT), set.keys(2));
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_SUFFIX), set.keys(3));
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_SUFFIX), set.keys(4));
  for (const std::string &path :
       {long_dir + "/x.c", long_dir + "d/x.c", "a/" + long_name, "a/" + long_name + "x",
        "a/" + long_name.substr(1), long_dir.substr(1) + "/x.c",
        "x." + std::string(300, 'e'), "x." + std::string(299, 'e'),
        "x/." + std::string(300, 'e')})
    EXPECT_TRUE(set.agrees(path));
}

// A screen automaton over the size limit is not built: its patterns are run
// for every path instead, and the answers stay the loop's.
TEST(Patset, OversizedScreenFallsBack)
{
  Rng64 rng(7);
  std::vector<std::string> texts;
  for (int i = 0; i < 20000; i++) {
    std::string lit;
    for (int k = 0; k < 32; k++) {
      char c = static_cast<char>('!' + rng.next() % 90);
      lit += c == '/' ? 'x' : c;
    }
    std::string esc;
    for (char c : lit)
      esc += std::string("*?[]{}\\,").find(c) != std::string::npos ? std::string("\\") + c : std::string(1, c);
    texts.push_back("**/*" + esc + "*");
  }
  texts.push_back("**/*.c");
  Set set(texts);
  ASSERT_EQ(texts.size(), set.size());
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_ALWAYS), set.keys(0));
  EXPECT_EQ(unsigned(TRAWL_PATSET_KEY_EXTENSION), set.keys(20000));
  EXPECT_TRUE(set.agrees("a/b.c"));
  EXPECT_TRUE(set.agrees("x"));
}

// A query runs the patterns its keys name, no more: these bounds are the
// point of the index, so they are pinned without timing anything.
TEST(Patset, QueriesRunOnlyKeyedPatterns)
{
  std::vector<std::string> ext, dirs, files, infix, prefixes;
  for (int i = 0; i < 1000; i++) {
    ext.push_back("**/*.ext" + std::to_string(i));
    dirs.push_back("dir" + std::to_string(i) + "/**");
    files.push_back("**/File" + std::to_string(i) + ".txt");
    infix.push_back("**/*foo" + std::to_string(i) + "*");
    prefixes.push_back("prefix" + std::to_string(i) + "*");
  }
  Set e(ext), d(dirs), f(files), in(infix), p(prefixes);
  EXPECT_EQ(1u, e.candidates("a/b/x.ext5"));
  EXPECT_EQ(0u, e.candidates("a/b/x.md"));
  EXPECT_EQ(1u, d.candidates("dir12/x/y.c"));
  EXPECT_EQ(0u, d.candidates("src/dir12/y.c"));
  EXPECT_EQ(1u, f.candidates("a/File7.txt"));
  EXPECT_EQ(0u, f.candidates("a/File7.txt.bak"));
  EXPECT_EQ(1u, p.candidates("prefix7.c"));
  EXPECT_EQ(2u, p.candidates("prefix12.c"));   // "prefix1", "prefix12"
  EXPECT_EQ(2u, p.candidates("prefix12/a.c")); // "prefix1", "prefix12"
  EXPECT_EQ(3u, in.candidates("a/xfoo123y.c")); // foo1, foo12, foo123
  EXPECT_EQ(0u, in.candidates("a/fo/o123.c"));
  // The same literal twice in a path runs its patterns once.
  EXPECT_EQ(1u, in.candidates("foo7/foo7/foo7"));
  EXPECT_TRUE(in.agrees("a/xfoo123y.c"));
  EXPECT_TRUE(e.agrees("a/b/x.ext5"));
}

// Each key table refuses most probes before a lookup: by a filter on the
// key hashes and, for prefix and suffix keys, by the byte a key ends with in
// hashing order (its last byte; a suffix key's first). Neither may refuse a
// key that is there. 4,000 keys a table, case-sensitive and folded (the
// prefix and suffix keys end with letters, so folding reaches that byte):
// every key is found, and runs exactly its own pattern.
TEST(Patset, LargeTablesFindEveryKey)
{
  const int n = 4000;
  const unsigned classes[] = {TRAWL_PATSET_KEY_EXACT,  TRAWL_PATSET_KEY_BASENAME,
                              TRAWL_PATSET_KEY_EXTENSION, TRAWL_PATSET_KEY_PREFIX,
                              TRAWL_PATSET_KEY_PREFIX, TRAWL_PATSET_KEY_SUFFIX};
  for (unsigned flags : {0u, unsigned(TRAWL_PATTERN_ICASE)}) {
    std::vector<std::string> texts, paths;
    for (int i = 0; i < n; i++) {
      const std::string k = std::to_string(i);
      texts.insert(texts.end(), {"e/" + k + ".x", "**/B" + k, "**/*.x" + k, "d" + k + "/**",
                                 "p" + k + "q*", "**/*x" + k + "_s"});
      paths.insert(paths.end(), {"e/" + k + ".x", "a/B" + k, "a/f.x" + k, "d" + k + "/f",
                                 "p" + k + "q.c", "a/fx" + k + "_s"});
    }
    Set set(texts, flags);
    ASSERT_EQ(texts.size(), set.size());
    for (size_t i = 0; i < paths.size(); i++) {
      std::string path = paths[i];
      if (flags)
        std::transform(path.begin(), path.end(), path.begin(),
                       [](char c) { return g_ascii_toupper(c); });
      ASSERT_EQ(classes[i % 6], set.keys(i)) << show(texts[i]);
      ASSERT_EQ(1u, set.candidates(path)) << show(path);
      ASSERT_EQ((std::vector<guint>{guint(i)}), set.matches(path)) << show(path);
    }
    // Keys that are not there run nothing.
    for (const char *path : {"e/4000.x", "a/B4000", "a/f.x4000", "d4000/f", "p4000q.c",
                             "a/fx4000_s", "e/12", "a/B", "a/f.x", "d/f", "pq", "a/x_s"})
      EXPECT_EQ(0u, set.candidates(path)) << path;
  }
}

TEST(Patset, ConcurrentQueries)
{
  Set set({"**/*.c", "src/**", "**/Makefile", "**/*foo*", "*"});
  const std::vector<std::string> paths = {"src/a.c", "x/Makefile", "a/foo", "b", "c/d.h"};
  std::vector<std::vector<guint>> want;
  for (const std::string &p : paths)
    want.push_back(set.loop(p));
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; t++)
    threads.emplace_back([&, t] {
      GArray *out = g_array_new(FALSE, FALSE, sizeof(guint));
      for (int r = 0; r < 2000; r++) {
        const std::string &p = paths[size_t(r) % paths.size()];
        g_array_set_size(out, 0);
        trawl_patset_matches(set.get(), p.data(), p.size(), out);
        std::vector<guint> got(&g_array_index(out, guint, 0), &g_array_index(out, guint, 0) + out->len);
        bad[size_t(t)] += got != want[size_t(r) % paths.size()];
        bad[size_t(t)] += trawl_patset_any(set.get(), p.data(), p.size()) == got.empty();
      }
      g_array_free(out, TRUE);
    });
  for (std::thread &th : threads)
    th.join();
  EXPECT_EQ((std::vector<int>{0, 0, 0, 0}), bad);
}

// ---- generated lists ------------------------------------------------------

const char kAlphabet[] = {'a', 'b', 'A', '.', 'c', '-'};

class ListGen {
public:
  explicit ListGen(Rng &rng) : rng_(rng) {}

  std::string name(unsigned n)
  {
    std::string s;
    for (unsigned i = 0; i < n; i++)
      s += kAlphabet[rng_.below(sizeof kAlphabet)];
    return s;
  }

  // Realistic shapes with small numbers, so that lists share keys.
  std::string shape()
  {
    std::string n = std::to_string(rng_.below(4));
    switch (rng_.below(12)) {
    case 0: return "**/*.ext" + n;
    case 1: return "dir" + n + "/**";
    case 2: return "**/name" + n + "/**";
    case 3: return "**/File" + n + ".txt";
    case 4: return "prefix" + n + "*";
    case 5: return "**/*foo" + n + "*";
    case 6: return "*.tar.gz";
    case 7: return "dir" + n + "/file" + n + ".c";
    case 8: return "{dir" + n + "/**,**/*.ext" + n + "}";
    case 9: return "**/*" + name(1 + rng_.below(3)) + "*";
    case 10: return "**/" + name(1 + rng_.below(3)) + "/*.c";
    default: return name(1 + rng_.below(2)) + "*" + name(rng_.below(3));
    }
  }

  // A random glob over the small alphabet.
  std::string glob(TrawlDialect d)
  {
    std::string s;
    unsigned comps = 1 + rng_.below(4);
    for (unsigned c = 0; c < comps; c++) {
      if (c)
        s += '/';
      if (d != TRAWL_DIALECT_CMAKE && rng_.chance(25)) {
        s += "**";
        continue;
      }
      unsigned atoms = 1 + rng_.below(4);
      for (unsigned a = 0; a < atoms; a++) {
        unsigned r = rng_.below(100);
        if (r < 50)
          s += kAlphabet[rng_.below(sizeof kAlphabet)];
        else if (r < 68)
          s += '*';
        else if (r < 76)
          s += '?';
        else if (r < 84 && d != TRAWL_DIALECT_BAZEL)
          s += rng_.chance(50) ? "[ab]" : "[!.]";
        else if (r < 92 && d == TRAWL_DIALECT_TRAWL)
          s += "{" + name(rng_.below(3)) + "," + name(1 + rng_.below(2)) + "}";
        else if (r < 96 && (d == TRAWL_DIALECT_TRAWL || d == TRAWL_DIALECT_GIT))
          s += std::string("\\") + "*?[a"[rng_.below(4)];
        else
          s += name(2);
      }
    }
    return s;
  }

  // A path from pattern TEXT: wildcards filled in, braces resolved.
  std::string instantiate(const std::string &text)
  {
    std::string out;
    int depth = 0, skip_depth = -1; // inside an alternative being skipped
    for (size_t i = 0; i < text.size(); i++) {
      char c = text[i];
      bool skipping = skip_depth >= 0;
      if (c == '{') {
        depth++;
        continue;
      }
      if (c == ',' && depth > 0) {
        if (!skipping)
          skip_depth = depth; // took the first alternative: skip the rest
        continue;
      }
      if (c == '}' && depth > 0) {
        if (skip_depth == depth)
          skip_depth = -1;
        depth--;
        continue;
      }
      if (skipping)
        continue;
      if (c == '*' && i + 1 < text.size() && text[i + 1] == '*') {
        i++;
        unsigned n = rng_.below(3);
        std::string dirs;
        for (unsigned k = 0; k < n; k++)
          dirs += (k ? "/" : "") + name(1 + rng_.below(3));
        if (dirs.empty() && i + 1 < text.size() && text[i + 1] == '/')
          i++; // zero components: drop the '/'
        out += dirs.empty() && i + 1 >= text.size() ? name(1) : dirs;
      } else if (c == '*') {
        out += name(rng_.below(3));
      } else if (c == '?') {
        out += kAlphabet[rng_.below(sizeof kAlphabet)];
      } else if (c == '[') {
        size_t close = text.find(']', i + 2);
        out += 'a';
        if (close != std::string::npos)
          i = close;
      } else if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else {
        out += c;
      }
    }
    return out;
  }

  std::string mutate(std::string s)
  {
    if (s.empty())
      return "a";
    size_t at = rng_.below(static_cast<unsigned>(s.size()));
    switch (rng_.below(5)) {
    case 0: s[at] = kAlphabet[rng_.below(sizeof kAlphabet)]; break;
    case 1: s.erase(at, 1); break;
    case 2: s.insert(at, 1, kAlphabet[rng_.below(sizeof kAlphabet)]); break;
    case 3: s[at] = static_cast<char>(g_ascii_toupper(s[at])); break;
    default: s.insert(at, 1, '/'); break;
    }
    return s;
  }

private:
  Rng &rng_;
};

uint64_t env_number(const char *name, uint64_t fallback)
{
  const char *v = g_getenv(name);
  return v && *v ? g_ascii_strtoull(v, nullptr, 10) : fallback;
}

#if defined(__SANITIZE_ADDRESS__)
const uint64_t kDefaultLists = 250;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
const uint64_t kDefaultLists = 250;
#else
const uint64_t kDefaultLists = 1000;
#endif
#else
const uint64_t kDefaultLists = 1000;
#endif

TEST(PatsetProperty, MatchesEqualsTheLoop)
{
  const uint64_t seed = env_number("TRAWL_PATSET_SEED", 20261201);
  const uint64_t lists = env_number("TRAWL_PATSET_ROUNDS", kDefaultLists);
  Rng rng(seed);
  ListGen gen(rng);
  uint64_t queries = 0, hits = 0, patterns = 0;
  unsigned key_classes = 0, failures = 0;
  for (uint64_t l = 0; l < lists && failures < 5; l++) {
    std::vector<Spec> specs;
    unsigned n = 1 + rng.below(l % 4 == 0 ? 200 : 30);
    for (unsigned i = 0; i < n; i++) {
      Spec s;
      s.dialect = static_cast<TrawlDialect>(rng.below(4));
      s.flags = rng.chance(20) ? TRAWL_PATTERN_ICASE : 0;
      s.text = rng.chance(50) ? gen.shape() : gen.glob(s.dialect);
      if (s.dialect != TRAWL_DIALECT_TRAWL && s.text.find('{') != std::string::npos)
        s.dialect = TRAWL_DIALECT_TRAWL;
      specs.push_back(s);
    }
    Set set(specs);
    patterns += set.size();
    for (size_t i = 0; i < set.size(); i++)
      key_classes |= set.keys(i);
    for (int k = 0; k < 250; k++) {
      std::string path;
      if (set.size() && k % 4 != 3)
        path = gen.instantiate(set.text(rng.below(static_cast<unsigned>(set.size()))));
      else
        path = gen.name(1 + rng.below(3)) + "/" + gen.name(1 + rng.below(4));
      if (k % 3 == 2)
        path = gen.mutate(path);
      queries++;
      ::testing::AssertionResult r = set.agrees(path);
      if (!r) {
        ADD_FAILURE() << r.message() << "\n  list " << l << ", seed " << seed
                      << " (TRAWL_PATSET_SEED)";
        if (++failures >= 5)
          break;
      }
      hits += !set.loop(path).empty();
    }
  }
  // The generator must exercise every key class and find matches.
  EXPECT_EQ(0x7fu, key_classes);
  EXPECT_GT(hits, queries / 5);
  RecordProperty("queries", static_cast<int>(queries));
  RecordProperty("patterns", static_cast<int>(patterns));
}

} // namespace
