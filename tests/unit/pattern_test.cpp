// Unit tests of the pattern compiler (libcore/src/pattern.c): the compile /
// free lifecycle, the error domain and its offsets, limits that can only be
// built in code (over-long input, deep braces), and the facts the walker's
// planner reads. Row-by-row behaviour lives in tests/corpus/.
#include <cstring>
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_util.hpp"

using namespace testutil;

namespace {

const TrawlDialect all_dialects[] = {TRAWL_DIALECT_TRAWL, TRAWL_DIALECT_GIT,
                                     TRAWL_DIALECT_CMAKE, TRAWL_DIALECT_BAZEL};

// ---- lifecycle -----------------------------------------------------------

TEST(PatternLifecycle, CompileMatchFree)
{
  GError *error = nullptr;
  TrawlPattern *p = trawl_pattern_compile("src/*.c", 7, TRAWL_DIALECT_TRAWL, 0, &error);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(error, nullptr);
  EXPECT_TRUE(trawl_pattern_match(p, "src/a.c", 7));
  EXPECT_FALSE(trawl_pattern_match(p, "src/a.h", 7));
  trawl_pattern_free(p);
}

TEST(PatternLifecycle, FreeNullIsAllowed)
{
  trawl_pattern_free(nullptr);
}

TEST(PatternLifecycle, AccessorsReportWhatWasCompiled)
{
  for (TrawlDialect d : all_dialects) {
    for (unsigned flags : {0u, unsigned(TRAWL_PATTERN_ICASE)}) {
      Pattern p = compile("a/*.c", d, flags);
      ASSERT_TRUE(p);
      size_t len = 0;
      const char *text = trawl_pattern_text(p.get(), &len);
      EXPECT_EQ(std::string(text, len), "a/*.c");
      EXPECT_EQ(trawl_pattern_text(p.get(), nullptr), text);
      EXPECT_EQ(trawl_pattern_dialect(p.get()), d);
      EXPECT_EQ(trawl_pattern_flags(p.get()), flags);
    }
  }
}

TEST(PatternLifecycle, PatternOwnsACopyOfItsText)
{
  char buf[] = "src/**/*.c";
  TrawlPattern *p = trawl_pattern_compile(buf, sizeof buf - 1, TRAWL_DIALECT_TRAWL, 0, nullptr);
  ASSERT_NE(p, nullptr);
  std::memset(buf, 'x', sizeof buf - 1);
  size_t len = 0;
  const char *text = trawl_pattern_text(p, &len);
  EXPECT_EQ(std::string(text, len), "src/**/*.c");
  EXPECT_TRUE(trawl_pattern_match(p, "src/a/b.c", 9));
  trawl_pattern_free(p);
}

TEST(PatternLifecycle, OnlyLenBytesOfTheTextAreRead)
{
  // "abc" followed by bytes that would change the meaning if read.
  const char text[] = {'a', 'b', 'c', '*', '/', '['};
  Pattern p(trawl_pattern_compile(text, 3, TRAWL_DIALECT_TRAWL, 0, nullptr));
  ASSERT_TRUE(p);
  EXPECT_TRUE(match(p.get(), "abc"));
  EXPECT_FALSE(match(p.get(), "abcd"));
}

TEST(PatternLifecycle, OnlyLenBytesOfThePathAreRead)
{
  Pattern p = compile("abc");
  ASSERT_TRUE(p);
  EXPECT_TRUE(trawl_pattern_match(p.get(), "abc/def", 3));
  EXPECT_FALSE(trawl_pattern_match(p.get(), "abc/def", 7));
  EXPECT_FALSE(trawl_pattern_match(p.get(), "abc", 2));
}

TEST(PatternLifecycle, EmptyTextMayBeNull)
{
  Error error;
  GError *e = nullptr;
  TrawlPattern *p = trawl_pattern_compile(nullptr, 0, TRAWL_DIALECT_TRAWL, 0, &e);
  error.reset(e);
  EXPECT_EQ(p, nullptr);
  ASSERT_TRUE(error);
  EXPECT_TRUE(g_error_matches(error.get(), TRAWL_PATTERN_ERROR, TRAWL_PATTERN_ERROR_SYNTAX));
  EXPECT_EQ(trawl_pattern_error_offset(error.get()), 0);
}

TEST(PatternLifecycle, ErrorsMayBeIgnored)
{
  EXPECT_EQ(trawl_pattern_compile("[", 1, TRAWL_DIALECT_TRAWL, 0, nullptr), nullptr);
  EXPECT_EQ(trawl_pattern_compile("a\0b", 3, TRAWL_DIALECT_GIT, 0, nullptr), nullptr);
}

TEST(PatternLifecycle, ManyPatternsCompileAndFree)
{
  // Leaks and double frees show in the sanitizer build.
  const char *texts[] = {"*",        "**/*.c",     "{a,{b,c}}/**/x", "[[:alpha:]]*",
                         "a\\*b",    "src/*/t/*.c", "*{,.min}.js",    "{a,b}{c,d}{e,f}"};
  for (int round = 0; round < 50; round++)
    for (TrawlDialect d : all_dialects)
      for (const char *t : texts) {
        Error error;
        Pattern p = compile(t, d, round % 2 ? TRAWL_PATTERN_ICASE : 0, &error);
        if (p) {
          roots(p.get());
          match(p.get(), "src/a/b.c");
        }
      }
}

// ---- errors --------------------------------------------------------------

TEST(PatternError, DomainIsRegistered)
{
  EXPECT_NE(TRAWL_PATTERN_ERROR, 0u);
  EXPECT_EQ(TRAWL_PATTERN_ERROR, trawl_pattern_error_quark());
}

TEST(PatternError, MessageNamesPatternOffsetAndReason)
{
  Error error;
  EXPECT_FALSE(compile("src/[a.c", TRAWL_DIALECT_TRAWL, 0, &error));
  ASSERT_TRUE(error);
  EXPECT_TRUE(g_error_matches(error.get(), TRAWL_PATTERN_ERROR, TRAWL_PATTERN_ERROR_SYNTAX));
  EXPECT_EQ(trawl_pattern_error_offset(error.get()), 4);
  std::string msg = error->message;
  EXPECT_NE(msg.find("src/[a.c"), std::string::npos) << msg;
  EXPECT_NE(msg.find("byte 4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unclosed '['"), std::string::npos) << msg;
}

TEST(PatternError, OffsetOfOtherErrorsIsMinusOne)
{
  EXPECT_EQ(trawl_pattern_error_offset(nullptr), -1);
  Error other(g_error_new_literal(G_FILE_ERROR, G_FILE_ERROR_NOENT, "no such file"));
  EXPECT_EQ(trawl_pattern_error_offset(other.get()), -1);
}

TEST(PatternError, OffsetSurvivesCopy)
{
  Error error;
  EXPECT_FALSE(compile("a/b/{c", TRAWL_DIALECT_TRAWL, 0, &error));
  ASSERT_TRUE(error);
  Error copy(g_error_copy(error.get()));
  EXPECT_EQ(trawl_pattern_error_offset(copy.get()), 4);
  EXPECT_STREQ(copy->message, error->message);
}

TEST(PatternError, EmbeddedNulInEveryDialect)
{
  const std::string text("src/\0x", 6);
  for (TrawlDialect d : all_dialects) {
    Error error;
    EXPECT_FALSE(compile(text, d, 0, &error)) << "dialect " << d;
    ASSERT_TRUE(error);
    EXPECT_TRUE(g_error_matches(error.get(), TRAWL_PATTERN_ERROR, TRAWL_PATTERN_ERROR_NUL))
        << error->message;
    EXPECT_EQ(trawl_pattern_error_offset(error.get()), 4);
    EXPECT_TRUE(g_utf8_validate(error->message, -1, nullptr));
  }
}

TEST(PatternError, OverLongInputInEveryDialect)
{
  const size_t max = TRAWL_PATTERN_MAX_LEN;
  for (TrawlDialect d : all_dialects) {
    // Exactly the limit compiles.
    std::string at_limit(max, 'a');
    Pattern ok = compile(at_limit, d);
    ASSERT_TRUE(ok) << "dialect " << d;
    EXPECT_TRUE(match(ok.get(), at_limit));

    // One byte more does not, whatever the bytes.
    for (char fill : {'a', '*', '{'}) {
      std::string over(max + 1, fill);
      Error error;
      EXPECT_FALSE(compile(over, d, 0, &error)) << "dialect " << d;
      ASSERT_TRUE(error);
      EXPECT_TRUE(g_error_matches(error.get(), TRAWL_PATTERN_ERROR, TRAWL_PATTERN_ERROR_TOO_LONG))
          << error->message;
      EXPECT_EQ(trawl_pattern_error_offset(error.get()), static_cast<gssize>(max));
      // The message shows the start of the pattern, not all of it.
      EXPECT_LT(std::strlen(error->message), 1024u);
      EXPECT_NE(std::string(error->message).find("65536"), std::string::npos) << error->message;
    }
  }
}

TEST(PatternError, TooManyAlternatives)
{
  std::string text;
  for (int i = 0; i < 12; i++)
    text += "{a,b}";
  Pattern p = compile(text); // 4096 alternatives: the limit
  ASSERT_TRUE(p);
  EXPECT_EQ(trawl_pattern_alternative_count(p.get()), size_t(TRAWL_PATTERN_MAX_ALTERNATIVES));
  EXPECT_TRUE(match(p.get(), std::string(12, 'b')));

  Error error;
  EXPECT_FALSE(compile(text + "{a,b}", TRAWL_DIALECT_TRAWL, 0, &error));
  ASSERT_TRUE(error);
  EXPECT_TRUE(g_error_matches(error.get(), TRAWL_PATTERN_ERROR, TRAWL_PATTERN_ERROR_TOO_LONG));
  EXPECT_EQ(trawl_pattern_error_offset(error.get()), 60);
}

TEST(PatternError, BracesNestedTooDeep)
{
  const int limit = 256;
  std::string ok = std::string(limit, '{') + "a" + std::string(limit, '}');
  Pattern p = compile(ok);
  ASSERT_TRUE(p);
  EXPECT_TRUE(match(p.get(), "a"));

  std::string deep = std::string(limit + 44, '{') + "a" + std::string(limit + 44, '}');
  Error error;
  EXPECT_FALSE(compile(deep, TRAWL_DIALECT_TRAWL, 0, &error));
  ASSERT_TRUE(error);
  EXPECT_TRUE(g_error_matches(error.get(), TRAWL_PATTERN_ERROR, TRAWL_PATTERN_ERROR_TOO_LONG));
  EXPECT_EQ(trawl_pattern_error_offset(error.get()), limit);
}

// Deliberately passes a value outside the enum, which C++ (and clang's
// -fsanitize=enum) calls undefined; the library is C and checks for it.
#if defined(__clang__)
__attribute__((no_sanitize("enum")))
#endif
static TrawlPattern *
compile_with_raw_dialect(int raw, GError **error)
{
  TrawlDialect dialect;
  std::memcpy(&dialect, &raw, sizeof dialect);
  return trawl_pattern_compile("*.c", 3, dialect, 0, error);
}

TEST(PatternError, UnknownDialect)
{
  GError *raw_error = nullptr;
  EXPECT_EQ(compile_with_raw_dialect(42, &raw_error), nullptr);
  Error error(raw_error);
  ASSERT_TRUE(error);
  EXPECT_TRUE(g_error_matches(error.get(), TRAWL_PATTERN_ERROR, TRAWL_PATTERN_ERROR_DIALECT));
  EXPECT_EQ(trawl_pattern_error_offset(error.get()), 0);
}

TEST(PatternError, MessagesAreUtf8WhateverThePattern)
{
  const std::string texts[] = {"\xff[", "caf\xc3\xa9/{", "\x01\x02}", "a\n[b", "\x80\\"};
  for (const auto &t : texts) {
    Error error;
    EXPECT_FALSE(compile(t, TRAWL_DIALECT_TRAWL, 0, &error)) << show(t);
    ASSERT_TRUE(error);
    EXPECT_TRUE(g_utf8_validate(error->message, -1, nullptr)) << show(error->message);
    EXPECT_EQ(std::string(error->message).find('\n'), std::string::npos) << show(error->message);
  }
}

TEST(PatternError, GitDialectCompilesMalformedPatternsToNothing)
{
  for (const char *t : {"[", "a[b", "x/[[:alpha:]", "[[:foo:]]", "a\\", "src/*\\"}) {
    Error error;
    Pattern p = compile(t, TRAWL_DIALECT_GIT, 0, &error);
    ASSERT_TRUE(p) << t << ": " << (error ? error->message : "");
    EXPECT_TRUE(trawl_pattern_matches_nothing(p.get())) << t;
    EXPECT_FALSE(match(p.get(), t)) << t;
    EXPECT_FALSE(below(p.get(), "")) << t;
    EXPECT_TRUE(roots(p.get()).empty()) << t;
  }
}

TEST(PatternError, TrawlDialectRejectsWhatGitAccepts)
{
  for (const char *t : {"[", "a[b", "[[:foo:]]", "a\\", "/a", "a//b", "a/", "./a", "}"}) {
    Error error;
    EXPECT_FALSE(compile(t, TRAWL_DIALECT_TRAWL, 0, &error)) << t;
    ASSERT_TRUE(error) << t;
    EXPECT_TRUE(g_error_matches(error.get(), TRAWL_PATTERN_ERROR, TRAWL_PATTERN_ERROR_SYNTAX))
        << error->message;
  }
}

// ---- facts ---------------------------------------------------------------

TEST(PatternFacts, BraceExpandedRoots)
{
  Pattern p = compile("{src,packages}/**/*.ts");
  ASSERT_TRUE(p);
  const GPtrArray *r = trawl_pattern_roots(p.get());
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->len, 2u);
  std::vector<std::string> got = roots(p.get());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"packages", "src"}));
  EXPECT_EQ(trawl_pattern_alternative_count(p.get()), 2u);
  EXPECT_EQ(suffix(p.get()), ".ts");
  EXPECT_EQ(extension(p.get()), ".ts");
  EXPECT_EQ(prefix(p.get()), "");
}

TEST(PatternFacts, IcaseRootIsTheRoot)
{
  Pattern p = compile("{src,packages}/**/*.ts", TRAWL_DIALECT_TRAWL, TRAWL_PATTERN_ICASE);
  ASSERT_TRUE(p);
  EXPECT_EQ(roots(p.get()), std::vector<std::string>{""});
  EXPECT_TRUE(below(p.get(), "SRC"));
  EXPECT_TRUE(match(p.get(), "Packages/x/A.TS"));
}

TEST(PatternFacts, RootsNeverNest)
{
  struct {
    const char *text;
    std::vector<std::string> roots;
  } cases[] = {
    {"{a,a/b,a/b/c}/x", {"a"}},
    {"{a/b/c,a/b}/**", {"a/b"}},
    {"{a/b,a/c}/x", {"a/b", "a/c"}},
    {"{ab,a}/x", {"a", "ab"}},
    {"{a,*}/x", {""}},
    {"x{,/y}", {""}},
  };
  for (const auto &c : cases) {
    Pattern p = compile(c.text);
    ASSERT_TRUE(p) << c.text;
    std::vector<std::string> got = roots(p.get());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, c.roots) << c.text;
  }
}

TEST(PatternFacts, PrefixSuffixExtensionMinLength)
{
  struct {
    const char *text;
    const char *prefix, *suffix, *ext; // ext nullptr: none
    size_t min;
  } cases[] = {
    {"src/**/*.c", "src/", ".c", ".c", 6},
    {"src/*/test/*.c", "src/", ".c", ".c", 12},
    {"*.c", "", ".c", ".c", 2},
    {"Makefile", "Makefile", "Makefile", nullptr, 8},
    {"a/b/c.txt", "a/b/c.txt", "a/b/c.txt", ".txt", 9},
    {"*{,.min}.js", "", ".js", ".js", 3},
    {"*.{c,h}", "", "", nullptr, 2},
    {"**", "", "", nullptr, 0},
    {"a/**", "a/", "", nullptr, 2},
    {"a?c", "a", "c", nullptr, 3},
  };
  for (const auto &c : cases) {
    Pattern p = compile(c.text);
    ASSERT_TRUE(p) << c.text;
    EXPECT_EQ(prefix(p.get()), c.prefix) << c.text;
    EXPECT_EQ(suffix(p.get()), c.suffix) << c.text;
    bool has = false;
    std::string ext = extension(p.get(), &has);
    EXPECT_EQ(has, c.ext != nullptr) << c.text;
    if (c.ext) {
      EXPECT_EQ(ext, c.ext) << c.text;
    }
    EXPECT_EQ(trawl_pattern_min_length(p.get()), c.min) << c.text;
  }
}

TEST(PatternFacts, IcaseLiteralFactsAreReportedAsWritten)
{
  Pattern p = compile("SRC/*.C", TRAWL_DIALECT_TRAWL, TRAWL_PATTERN_ICASE);
  ASSERT_TRUE(p);
  EXPECT_EQ(prefix(p.get()), "SRC/");
  EXPECT_EQ(suffix(p.get()), ".C");
  EXPECT_EQ(extension(p.get()), ".C");
  EXPECT_TRUE(match(p.get(), "src/x.c"));
}

TEST(PatternFacts, PointersLiveAsLongAsThePattern)
{
  Pattern p = compile("{lib,src}/a/**/*.rs");
  ASSERT_TRUE(p);
  size_t n1 = 0, n2 = 0;
  const char *a = trawl_pattern_literal_prefix(p.get(), &n1);
  const GPtrArray *r1 = trawl_pattern_roots(p.get());
  const char *root0 = static_cast<const char *>(g_ptr_array_index(r1, 0));
  match(p.get(), "src/a/b/c.rs");
  EXPECT_EQ(trawl_pattern_literal_prefix(p.get(), &n2), a);
  EXPECT_EQ(n1, n2);
  EXPECT_EQ(trawl_pattern_roots(p.get()), r1);
  EXPECT_EQ(g_ptr_array_index(trawl_pattern_roots(p.get()), 0), root0);
}

TEST(PatternFacts, AlternativeCount)
{
  EXPECT_EQ(trawl_pattern_alternative_count(compile("a").get()), 1u);
  EXPECT_EQ(trawl_pattern_alternative_count(compile("{a,b}{c,d}").get()), 4u);
  EXPECT_EQ(trawl_pattern_alternative_count(compile("{a,{b,{c,d}}}").get()), 4u);
  EXPECT_EQ(trawl_pattern_alternative_count(compile("{a,b}", TRAWL_DIALECT_GIT).get()), 1u);
  EXPECT_EQ(trawl_pattern_alternative_count(compile("{a,b}", TRAWL_DIALECT_CMAKE).get()), 1u);
  EXPECT_EQ(trawl_pattern_alternative_count(compile("{a,b}", TRAWL_DIALECT_BAZEL).get()), 1u);
}

} // namespace

// ---- typed matching (issue 28) ---------------------------------------------

// Only a bazel pattern ending in a globstar after another component answers
// by type; every other answers trawl_pattern_match()'s for every type.
TEST(TypedMatch, WhichPatternsAreTyped)
{
  struct Case {
    const char *text;
    TrawlDialect dialect;
    bool typed;
  } cases[] = {
      {"a/**", TRAWL_DIALECT_BAZEL, true},     {"*/**", TRAWL_DIALECT_BAZEL, true},
      {"**/b/**", TRAWL_DIALECT_BAZEL, true},  {"a/**/**", TRAWL_DIALECT_BAZEL, true},
      {"**", TRAWL_DIALECT_BAZEL, false},      {"a/**/b", TRAWL_DIALECT_BAZEL, false},
      {"a/**", TRAWL_DIALECT_TRAWL, false},    {"a/**", TRAWL_DIALECT_GIT, false},
      {"a/**", TRAWL_DIALECT_CMAKE, false},    {"{a,b}/**", TRAWL_DIALECT_TRAWL, false},
  };
  for (const auto &c : cases) {
    Pattern p = compile(c.text, c.dialect);
    ASSERT_TRUE(p) << c.text;
    EXPECT_EQ(trawl_pattern_typed(p.get()), c.typed) << c.text << " dialect " << c.dialect;
  }
}

// A link that is not followed is not a directory; unknown is untyped.
TEST(TypedMatch, EveryTypeValue)
{
  Pattern p = compile("a/**", TRAWL_DIALECT_BAZEL);
  ASSERT_TRUE(p);
  EXPECT_TRUE(match_entry(p.get(), "a", TRAWL_ENTRY_UNKNOWN));
  EXPECT_TRUE(match_entry(p.get(), "a", TRAWL_ENTRY_DIR));
  EXPECT_FALSE(match_entry(p.get(), "a", TRAWL_ENTRY_FILE));
  EXPECT_FALSE(match_entry(p.get(), "a", TRAWL_ENTRY_SYMLINK));
  EXPECT_TRUE(match_entry(p.get(), "a/b", TRAWL_ENTRY_SYMLINK));
  EXPECT_FALSE(match_entry(p.get(), "b/a", TRAWL_ENTRY_DIR));
  EXPECT_FALSE(match_entry(p.get(), "ab", TRAWL_ENTRY_FILE));
  EXPECT_FALSE(match_entry(p.get(), "", TRAWL_ENTRY_FILE));
}
