// Unit tests of ignore files (libcore/src/ignore.c): parsing and matching
// as gitignore(5) and git itself do, reading a file (errors, links, the size
// limit), finding core.excludesFile in git's configuration, and finding a
// repository's git directory.
//
// Every row of the tables below states what real git says for that ignore
// file and path: each was checked with git 2.39 as
//
//   git init R && printf TEXT > R/.gitignore && (create PATH as a file or dir)
//   cd R && GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME=...
//     git check-ignore -v -n --no-index -- PATH
//
// with a "!/PARENT/" line appended for every proper parent directory of
// PATH, so that git's own rule "a path below an ignored directory is
// ignored" (the walker's business, not ignore_file_match's) does not hide
// whether the rule matches PATH itself. `check-ignore -v` prints the rule as
// "[!]pattern[/]", which is what `shown` holds.
//
// Where ignore.c deliberately differs from git (docs/ignore.md), the test
// says so and pins trawl's behaviour.
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <glib.h>
#include <gtest/gtest.h>

#include "trawl/pattern.h"
#include "test_util.hpp"

// The private header is C without linkage markers of its own.
extern "C" {
#include "ignore.h"
}

using namespace std::string_literals;
using testutil::Exact;
using testutil::show;

namespace {

namespace fs = std::filesystem;

struct FileUnref {
  void operator()(ignore_file *f) const { ignore_file_unref(f); }
};
using File = std::unique_ptr<ignore_file, FileUnref>;

// Parse TEXT from an exact-size buffer (a read past its end is an overflow
// the sanitizer build reports).
File parse(const std::string &text, const char *source = ".gitignore")
{
  Exact buf(text);
  return File(ignore_file_parse(source, buf.data(), buf.size()));
}

const ignore_rule *match(const ignore_file *f, const std::string &path, bool is_dir)
{
  Exact buf(path);
  return ignore_file_match(f, buf.data(), buf.size(), is_dir);
}

// ---- the table -----------------------------------------------------------

enum class Verdict { None, Ignored, Reincluded };

struct Expect {
  Verdict verdict;
  unsigned line;     // the rule's line, 1-based
  const char *shown; // as `git check-ignore -v` prints it; nullptr: not checked
};

Expect none() { return {Verdict::None, 0, nullptr}; }
Expect ign(unsigned line, const char *shown = nullptr) { return {Verdict::Ignored, line, shown}; }
Expect neg(unsigned line, const char *shown = nullptr) { return {Verdict::Reincluded, line, shown}; }

constexpr bool kFile = false;
constexpr bool kDir = true;

struct Row {
  std::string text; // the ignore file
  std::string path; // relative to the file's directory
  bool is_dir;
  Expect expect;
};

void PrintTo(const Row &row, std::ostream *os)
{
  *os << "text " << show(row.text) << ", " << (row.is_dir ? "dir " : "file ") << show(row.path);
}

std::string describe(const ignore_rule *r)
{
  if (r == nullptr)
    return "no rule";
  return (r->negated ? "re-included by line "s : "ignored by line "s) + std::to_string(r->line) +
         " " + show(r->shown);
}

class IgnoreRows : public ::testing::TestWithParam<Row> {};

TEST_P(IgnoreRows, MatchesAsGitDoes)
{
  const Row &row = GetParam();
  File f = parse(row.text);
  ASSERT_TRUE(f);
  const ignore_rule *r = match(f.get(), row.path, row.is_dir);
  if (r != nullptr) {
    ASSERT_GE(r, f->rules);
    ASSERT_LT(r, f->rules + f->n);
  }
  switch (row.expect.verdict) {
  case Verdict::None:
    EXPECT_EQ(r, nullptr) << describe(r);
    return;
  case Verdict::Ignored:
  case Verdict::Reincluded:
    ASSERT_NE(r, nullptr) << "no rule matched";
    EXPECT_EQ(r->negated, row.expect.verdict == Verdict::Reincluded) << describe(r);
    EXPECT_EQ(r->line, row.expect.line) << describe(r);
    if (row.expect.shown) {
      EXPECT_EQ(std::string(r->shown), row.expect.shown) << describe(r);
    }
    break;
  }
}

// Blank lines and comments are skipped but still counted; "\#" and "\!"
// escape a leading '#' or '!'; a '#' elsewhere is an ordinary byte.
const Row kCommentRows[] = {
  {"\n\nfoo\n"s, "foo", kFile, ign(3, "foo")},
  {"# one\n\n# three\nx\n"s, "x", kFile, ign(4, "x")},
  {"#foo\n"s, "foo", kFile, none()},
  {"#foo\n"s, "#foo", kFile, none()},
  {"\\#foo\n"s, "#foo", kFile, ign(1, "\\#foo")},
  {"#foo\n\\#foo\n"s, "#foo", kFile, ign(2, "\\#foo")},
  {" #a\n"s, " #a", kFile, ign(1, " #a")},
  {"a#b\n"s, "a#b", kFile, ign(1, "a#b")},
  {"\\!a\n"s, "!a", kFile, ign(1, "\\!a")},
  {"\\!a\n"s, "a", kFile, none()},
  {"*\n!\\!a\n"s, "!a", kFile, neg(2, "!\\!a")},
  {"*\n!!a\n"s, "!a", kFile, neg(2, "!!a")},
};
INSTANTIATE_TEST_SUITE_P(Comments, IgnoreRows, ::testing::ValuesIn(kCommentRows));

// Trailing spaces are cut unless a backslash escapes them; tabs are kept; a
// trailing backslash leaves a pattern that matches nothing.
const Row kSpaceRows[] = {
  {"foo  \n"s, "foo", kFile, ign(1, "foo")},
  {"foo  \n"s, "foo  ", kFile, none()},
  {"foo \n"s, "foo ", kFile, none()},
  {"a b  \n"s, "a b", kFile, ign(1, "a b")},
  {"foo\\ \n"s, "foo ", kFile, ign(1, "foo\\ ")},
  {"foo\\ \n"s, "foo", kFile, none()},
  {"foo\\  \n"s, "foo ", kFile, ign(1, "foo\\ ")},
  {"foo\\  \n"s, "foo  ", kFile, none()},
  {"foo \\ \n"s, "foo  ", kFile, ign(1, "foo \\ ")},
  {"foo\\\\  \n"s, "foo\\", kFile, ign(1, "foo\\\\")},
  {"foo\\\n"s, "foo", kFile, none()},
  {"foo\\\n"s, "foo\\", kFile, none()},
  {"foo\\"s, "foo\\", kFile, none()},
  {"foo\t\n"s, "foo\t", kFile, ign(1, "foo\t")},
  {"foo\t\n"s, "foo", kFile, none()},
  {"   \n"s, "   ", kFile, none()},
  {"   \n"s, " ", kFile, none()},
  {"   \nx\n"s, "x", kFile, ign(2, "x")},
};
INSTANTIATE_TEST_SUITE_P(TrailingSpaces, IgnoreRows, ::testing::ValuesIn(kSpaceRows));

// '!' re-includes; within one file the last matching rule wins, negated or
// not.
const Row kNegationRows[] = {
  {"*.o\n!keep.o\n"s, "keep.o", kFile, neg(2, "!keep.o")},
  {"*.o\n!keep.o\n"s, "x.o", kFile, ign(1, "*.o")},
  {"*.o\n!keep.o\n"s, "d/keep.o", kFile, neg(2, "!keep.o")},
  {"!keep.o\n*.o\n"s, "keep.o", kFile, ign(2, "*.o")},
  {"a\na\n"s, "a", kFile, ign(2, "a")},
  {"*.o\n!*.o\n*.o\n"s, "x.o", kFile, ign(3, "*.o")},
  {"*.o\n!*.o\n"s, "x.o", kFile, neg(2, "!*.o")},
  {"!foo\n"s, "foo", kFile, neg(1, "!foo")},
  {"!foo\n"s, "bar", kFile, none()},
  {"*\n!*/\n"s, "d", kDir, neg(2, "!*/")},
  {"*\n!*/\n"s, "f", kFile, ign(1, "*")},
  {"foo\n!foo/\n"s, "foo", kFile, ign(1, "foo")},
  {"foo\n!foo/\n"s, "foo", kDir, neg(2, "!foo/")},
  {"*.log\n!important.log\nimportant.log\n"s, "important.log", kFile, ign(3, "important.log")},
};
INSTANTIATE_TEST_SUITE_P(Negation, IgnoreRows, ::testing::ValuesIn(kNegationRows));

// A trailing '/' restricts a rule to directories: a file of that name is
// not matched.
const Row kDirOnlyRows[] = {
  {"foo/\n"s, "foo", kDir, ign(1, "foo/")},
  {"foo/\n"s, "foo", kFile, none()},
  {"foo/\n"s, "x/y/foo", kDir, ign(1, "foo/")},
  {"foo/\n"s, "x/foo", kFile, none()},
  {"a/b/\n"s, "a/b", kDir, ign(1, "a/b/")},
  {"a/b/\n"s, "a/b", kFile, none()},
  {"a/b/\n"s, "x/a/b", kDir, none()},
  {"*.d/\n"s, "x/y.d", kDir, ign(1, "*.d/")},
  {"*.d/\n"s, "x/y.d", kFile, none()},
  {"foo//\n"s, "foo", kDir, none()},
  {"foo\n"s, "foo", kDir, ign(1, "foo")},
};
INSTANTIATE_TEST_SUITE_P(DirOnly, IgnoreRows, ::testing::ValuesIn(kDirOnlyRows));

// A leading or inner '/' anchors a rule to the file's directory; a rule with
// no '/' (but a trailing one) matches the basename at any depth.
const Row kAnchorRows[] = {
  {"/a\n"s, "a", kFile, ign(1, "/a")},
  {"/a\n"s, "x/a", kFile, none()},
  {"a\n"s, "a", kFile, ign(1, "a")},
  {"a\n"s, "x/a", kFile, ign(1, "a")},
  {"a\n"s, "x/y/a", kDir, ign(1, "a")},
  {"a/b\n"s, "a/b", kFile, ign(1, "a/b")},
  {"a/b\n"s, "x/a/b", kFile, none()},
  {"a/b\n"s, "a/b/c", kFile, none()},
  {"a/b\n"s, "a", kDir, none()},
  {"/a/b\n"s, "a/b", kFile, ign(1, "/a/b")},
  {"/a/b\n"s, "x/a/b", kFile, none()},
  {"//a\n"s, "a", kFile, none()},
  {"a\\/b\n"s, "a/b", kFile, ign(1, "a\\/b")},
  {"/a/\n"s, "a", kDir, ign(1, "/a/")},
  {"/a/\n"s, "x/a", kDir, none()},
  {"a/\n"s, "x/a", kDir, ign(1, "a/")},
  {"*/b\n"s, "a/b", kFile, ign(1, "*/b")},
  {"*/b\n"s, "x/a/b", kFile, none()},
  {"/*.c\n"s, "x.c", kFile, ign(1, "/*.c")},
  {"/*.c\n"s, "d/x.c", kFile, none()},
  {"*.o\n"s, "z.o", kFile, ign(1, "*.o")},
  {"*.o\n"s, "x/y/z.o", kFile, ign(1, "*.o")},
  {"*.o\n"s, ".o", kFile, ign(1, "*.o")},
  {"*.o\n"s, "x.o/y", kFile, none()},
  {"*\n"s, ".hidden", kFile, ign(1, "*")},
  {"*\n"s, "x/.hidden", kFile, ign(1, "*")},
};
INSTANTIATE_TEST_SUITE_P(Anchoring, IgnoreRows, ::testing::ValuesIn(kAnchorRows));

// "**/" leading, "/**" trailing, "/**/" inside; "**" anywhere else is a '*'
// that does not cross '/' (except where git's literal cut makes "a**" at the
// end of an anchored pattern a globstar).
const Row kGlobstarRows[] = {
  {"**/foo\n"s, "foo", kFile, ign(1, "**/foo")},
  {"**/foo\n"s, "x/foo", kDir, ign(1, "**/foo")},
  {"**/foo\n"s, "x/y/foo", kFile, ign(1, "**/foo")},
  {"**/foo\n"s, "x/foox", kFile, none()},
  {"**/foo/bar\n"s, "foo/bar", kFile, ign(1, "**/foo/bar")},
  {"**/foo/bar\n"s, "x/y/foo/bar", kFile, ign(1, "**/foo/bar")},
  {"**/foo/bar\n"s, "foo/x/bar", kFile, none()},
  {"abc/**\n"s, "abc", kDir, none()},
  {"abc/**\n"s, "abc/x", kFile, ign(1, "abc/**")},
  {"abc/**\n"s, "abc/x", kDir, ign(1, "abc/**")},
  {"abc/**\n"s, "abc/x/y", kFile, ign(1, "abc/**")},
  {"abc/**\n"s, "x/abc/y", kFile, none()},
  {"abc/**\n"s, "abcd/y", kFile, none()},
  {"a/**/b\n"s, "a/b", kFile, ign(1, "a/**/b")},
  {"a/**/b\n"s, "a/x/b", kFile, ign(1, "a/**/b")},
  {"a/**/b\n"s, "a/x/y/b", kFile, ign(1, "a/**/b")},
  {"a/**/b\n"s, "a/xb", kFile, none()},
  {"a/**/b\n"s, "x/a/b", kFile, none()},
  {"**\n"s, "a/b", kFile, ign(1, "**")},
  {"/**\n"s, "a/b", kFile, ign(1, "/**")},
  {"**/\n"s, "a/b", kDir, ign(1, "**/")},
  {"**/\n"s, "a/b", kFile, none()},
  {"a**b\n"s, "acb", kFile, ign(1, "a**b")},
  {"a**b\n"s, "y/acb", kFile, ign(1, "a**b")},
  {"x/a**b\n"s, "x/acb", kFile, ign(1, "x/a**b")},
  {"x/a**b\n"s, "x/ab", kFile, ign(1, "x/a**b")},
  {"x/a**b\n"s, "x/a/b", kFile, none()},
  {"x/a**b\n"s, "x/ac/db", kFile, none()},
  {"x/**b\n"s, "x/c/b", kFile, none()},
  {"x/a**\n"s, "x/ab/c", kFile, ign(1, "x/a**")},
  {"x/*\n"s, "x/a/b", kFile, none()},
};
INSTANTIATE_TEST_SUITE_P(Globstar, IgnoreRows, ::testing::ValuesIn(kGlobstarRows));

// '*', '?', classes, escapes; braces are literal.
const Row kWildcardRows[] = {
  {"a/*.c\n"s, "a/b.c", kFile, ign(1, "a/*.c")},
  {"a/*.c\n"s, "a/b/c.c", kFile, none()},
  {"a*\n"s, "abc", kFile, ign(1, "a*")},
  {"a?c\n"s, "abc", kFile, ign(1, "a?c")},
  {"a?c\n"s, "ac", kFile, none()},
  {"x/a?c\n"s, "x/a/c", kFile, none()},
  {"[a-c].o\n"s, "b.o", kFile, ign(1, "[a-c].o")},
  {"[a-c].o\n"s, "d.o", kFile, none()},
  {"[!a]\n"s, "b", kFile, ign(1, "[!a]")},
  {"[!a]\n"s, "a", kFile, none()},
  {"[^a]\n"s, "b", kFile, ign(1, "[^a]")},
  {"[^a]\n"s, "a", kFile, none()},
  {"[]]\n"s, "]", kFile, ign(1, "[]]")},
  {"[[:digit:]]x\n"s, "7x", kFile, ign(1, "[[:digit:]]x")},
  {"[\n"s, "[", kFile, none()},
  {"\\*\n"s, "*", kFile, ign(1, "\\*")},
  {"\\*\n"s, "a", kFile, none()},
  {"\\?\n"s, "?", kFile, ign(1, "\\?")},
  {"\\a\n"s, "a", kFile, ign(1, "\\a")},
  {"{a,b}\n"s, "{a,b}", kFile, ign(1, "{a,b}")},
  {"{a,b}\n"s, "a", kFile, none()},
  {"{a,b}\n"s, "b", kFile, none()},
  {"*.{c,h}\n"s, "x.c", kFile, none()},
  {"*.{c,h}\n"s, "x.{c,h}", kFile, ign(1, "*.{c,h}")},
  {"Foo\n"s, "foo", kFile, none()},
};
INSTANTIATE_TEST_SUITE_P(Wildcards, IgnoreRows, ::testing::ValuesIn(kWildcardRows));

// Line ends and odd bytes: CR before LF dropped, a lone CR elsewhere kept, a
// UTF-8 BOM skipped at the very start only, a last line without newline, a
// line cut at a NUL byte.
const Row kBytesRows[] = {
  {"foo\r\nbar\r\n"s, "foo", kFile, ign(1, "foo")},
  {"foo\r\nbar\r\n"s, "bar", kFile, ign(2, "bar")},
  {"foo\r\n"s, "foo\r", kFile, none()},
  {"foo  \r\n"s, "foo", kFile, ign(1, "foo")},
  {"foo\r\r\n"s, "foo\r", kFile, ign(1, "foo\r")},
  {"a\rb\n"s, "a\rb", kFile, ign(1, "a\rb")},
  {"a\rb\n"s, "a", kFile, none()},
  {"\r\nx\n"s, "x", kFile, ign(2, "x")},
  {"\xef\xbb\xbf" "foo\n"s, "foo", kFile, ign(1, "foo")},
  {"\xef\xbb\xbf#c\nfoo\n"s, "foo", kFile, ign(2, "foo")},
  {"\xef\xbb\xbf#c\n"s, "#c", kFile, none()},
  {"\xef\xbb\xbf\xef\xbb\xbf" "foo\n"s, "\xef\xbb\xbf" "foo", kFile, ign(1)},
  {"x\n\xef\xbb\xbf" "foo\n"s, "\xef\xbb\xbf" "foo", kFile, ign(2)},
  {"x\n\xef\xbb\xbf" "foo\n"s, "foo", kFile, none()},
  {"a\nb"s, "b", kFile, ign(2, "b")},
  {"a\n!b"s, "b", kFile, neg(2, "!b")},
  {"a\nb/"s, "b", kDir, ign(2, "b/")},
  {"a\0b\nc\n"s, "a", kFile, ign(1, "a")},
  {"a\0b\nc\n"s, "c", kFile, ign(2, "c")},
  {"\0a\nx\n"s, "a", kFile, none()},
  {"\0a\nx\n"s, "x", kFile, ign(2, "x")},
  {"*.o\0junk\n"s, "x.o", kFile, ign(1, "*.o")},
  {"a \0b\n"s, "a", kFile, ign(1, "a")},
  {"a\0\r\n"s, "a", kFile, ign(1, "a")},
};
INSTANTIATE_TEST_SUITE_P(Bytes, IgnoreRows, ::testing::ValuesIn(kBytesRows));

// Patterns that are empty once '!', a trailing '/' and a leading '/' are
// taken away match nothing.
const Row kEmptyRows[] = {
  {"!\n"s, "!", kFile, none()},
  {"!\n"s, "x", kFile, none()},
  {"/\n"s, "x", kDir, none()},
  {"/\n"s, "x", kFile, none()},
  {"//\n"s, "x", kDir, none()},
  {"!/\n"s, "x", kDir, none()},
  {"\\\n"s, "\\", kFile, none()},
  {"foo\\/\n"s, "foo", kDir, none()},
  {"foo\\/\n"s, "foo\\", kDir, none()},
};
INSTANTIATE_TEST_SUITE_P(Empty, IgnoreRows, ::testing::ValuesIn(kEmptyRows));

// A CR at the very end of the file, with no LF after it, is dropped: git
// appends a newline to every ignore file before splitting it.
const Row kFinalCrRows[] = {
  {"foo\r"s, "foo", kFile, ign(1, "foo")},
  {"a\nfoo\r"s, "foo", kFile, ign(2, "foo")},
  {"foo\r"s, "foo\r", kFile, none()},
};
INSTANTIATE_TEST_SUITE_P(FinalCr, IgnoreRows, ::testing::ValuesIn(kFinalCrRows));

// git puts no limit on a pattern's length (a line of 70,000 '*' then ".o"
// ignores x.o). A run of stars is "**" to wildmatch whatever its length, so
// ignore.c shortens runs before compiling and this still matches.
TEST(IgnoreLongPatterns, StarRunOverTheCompilerLimitStillMatches)
{
  File f = parse(std::string(TRAWL_PATTERN_MAX_LEN + 1, '*') + ".o\n");
  ASSERT_EQ(f->n, 1u);
  const ignore_rule *r = match(f.get(), "x.o", false);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->line, 1u);
}

// A deliberate divergence (docs/ignore.md): a rule still longer than the
// compiler's limit once star runs are shortened matches nothing; git would
// match "aaa...a.o" with it.
TEST(IgnoreLongPatterns, LiteralOverTheCompilerLimitMatchesNothing)
{
  const std::string name = std::string(TRAWL_PATTERN_MAX_LEN + 1, 'a') + ".o";
  File f = parse(name + "\n");
  ASSERT_EQ(f->n, 1u);
  EXPECT_EQ(f->rules[0].pattern, nullptr);
  EXPECT_EQ(match(f.get(), name, false), nullptr);
}

// ---- parsing: the rules themselves ----------------------------------------

TEST(IgnoreParse, RulesCarryLineShownAndFlags)
{
  File f = parse("# comment\n\n*.o\n!keep.o\nbuild/\n/top\na/b/\n!/x/y/\n\\#h\nlast"s,
                 "sub/.gitignore");
  ASSERT_TRUE(f);
  EXPECT_STREQ(f->source, "sub/.gitignore");
  EXPECT_EQ(f->refs, 1);
  struct Want {
    unsigned line;
    const char *shown;
    bool negated, dir_only, basename;
  };
  const Want want[] = {
    {3, "*.o", false, false, true},     {4, "!keep.o", true, false, true},
    {5, "build/", false, true, true},   {6, "/top", false, false, false},
    {7, "a/b/", false, true, false},    {8, "!/x/y/", true, true, false},
    {9, "\\#h", false, false, true},    {10, "last", false, false, true},
  };
  ASSERT_EQ(f->n, std::size(want));
  for (size_t i = 0; i < f->n; i++) {
    SCOPED_TRACE("rule " + std::to_string(i));
    const ignore_rule &r = f->rules[i];
    EXPECT_EQ(r.line, want[i].line);
    EXPECT_STREQ(r.shown, want[i].shown);
    EXPECT_EQ(r.negated, want[i].negated);
    EXPECT_EQ(r.dir_only, want[i].dir_only);
    EXPECT_EQ(r.basename, want[i].basename);
    EXPECT_NE(r.pattern, nullptr);
  }
}

TEST(IgnoreParse, EmptyInputsHaveNoRules)
{
  for (const std::string &text : {""s, "\n"s, "\n\n\n"s, "# a\n#b"s, "\xef\xbb\xbf"s,
                                  "\xef\xbb\xbf\n"s}) {
    File f = parse(text);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->n, 0u) << show(text);
    EXPECT_EQ(match(f.get(), "a", false), nullptr);
    EXPECT_EQ(match(f.get(), "a", true), nullptr);
  }
  // A null pointer is fine for no bytes.
  File f(ignore_file_parse("x", nullptr, 0));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->n, 0u);
}

TEST(IgnoreParse, EmptyPatternsMatchNothing)
{
  File f = parse("!\n/\n//\n!/\n"s);
  ASSERT_TRUE(f);
  for (size_t i = 0; i < f->n; i++)
    EXPECT_EQ(f->rules[i].pattern, nullptr) << show(f->rules[i].shown);
  for (const char *path : {"a", "!", "a/b"}) {
    EXPECT_EQ(match(f.get(), path, false), nullptr) << path;
    EXPECT_EQ(match(f.get(), path, true), nullptr) << path;
  }
}

TEST(IgnoreParse, OnlyLenBytesAreRead)
{
  // "*.o\nfoo": the second line is not part of the first 4 bytes.
  const char text[] = "*.o\nfoo";
  File f(ignore_file_parse("x", text, 4));
  ASSERT_EQ(f->n, 1u);
  EXPECT_STREQ(f->rules[0].shown, "*.o");
  // and a path is LEN bytes, not up to a NUL
  const char path[] = "a.ox";
  EXPECT_NE(ignore_file_match(f.get(), path, 3, false), nullptr);
  EXPECT_EQ(ignore_file_match(f.get(), path, 4, false), nullptr);
}

TEST(IgnoreParse, LongFileLineNumbers)
{
  std::string text;
  for (int i = 1; i <= 5000; i++)
    text += i % 3 == 0 ? "f" + std::to_string(i) + "\n" : (i % 3 == 1 ? "\n" : "# c\n");
  File f = parse(text);
  ASSERT_EQ(f->n, 5000u / 3);
  const ignore_rule *r = match(f.get(), "d/f4998", false);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->line, 4998u);
}

TEST(IgnoreParse, RefCounting)
{
  File f = parse("a\n"s);
  EXPECT_EQ(ignore_file_ref(f.get()), f.get());
  EXPECT_EQ(f->refs, 2);
  ignore_file_unref(f.get());
  EXPECT_EQ(f->refs, 1);
  EXPECT_EQ(ignore_file_ref(nullptr), nullptr);
  ignore_file_unref(nullptr);
}

// ---- temporary files ------------------------------------------------------

class TempDir {
public:
  TempDir()
  {
    std::string templ = (fs::path(g_get_tmp_dir()) / "trawl-ignore-XXXXXX").string();
    char *made = g_mkdtemp(&templ[0]);
    EXPECT_NE(made, nullptr) << "mkdtemp: " << g_strerror(errno);
    // Links resolved, so that paths compare with what the library builds.
    path_ = fs::canonical(templ);
  }
  ~TempDir()
  {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const fs::path &path() const { return path_; }
  std::string str(const std::string &rel = "") const
  {
    return rel.empty() ? path_.string() : (path_ / rel).string();
  }

  void write(const std::string &rel, const std::string &bytes) const
  {
    fs::path p = path_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(out.good()) << p;
  }
  void mkdir(const std::string &rel) const { fs::create_directories(path_ / rel); }

private:
  fs::path path_;
};

class Fd {
public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd()
  {
    if (fd_ >= 0)
      close(fd_);
  }
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  int get() const { return fd_; }

private:
  int fd_;
};

// ignore_file_read into a File; the errno result in *ERR.
File read_file(int dirfd, const std::string &name, bool nofollow, int *err,
               const char *source = "src")
{
  static ignore_file sentinel;
  ignore_file *out = &sentinel; // must be overwritten
  *err = ignore_file_read(dirfd, name.c_str(), nofollow, source, &out);
  if (out == &sentinel) {
    ADD_FAILURE() << "ignore_file_read left *out as it was";
    return File();
  }
  if (*err != 0) {
    EXPECT_EQ(out, nullptr) << "an error with a file";
  }
  return File(out);
}

// ---- ignore_file_read -----------------------------------------------------

TEST(IgnoreRead, ReadsAndParses)
{
  TempDir t;
  t.write(".gitignore", "\xef\xbb\xbf# x\r\n*.o\r\n!keep.o\r\nlast");
  Fd dir(open(t.str().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_GE(dir.get(), 0);
  int err = -1;
  File f = read_file(dir.get(), ".gitignore", true, &err, "sub/.gitignore");
  ASSERT_EQ(err, 0) << g_strerror(err);
  ASSERT_TRUE(f);
  EXPECT_STREQ(f->source, "sub/.gitignore");
  ASSERT_EQ(f->n, 3u);
  EXPECT_STREQ(f->rules[0].shown, "*.o");
  EXPECT_EQ(f->rules[0].line, 2u);
  const ignore_rule *r = match(f.get(), "d/keep.o", false);
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->negated);
  EXPECT_EQ(r->line, 3u);
  EXPECT_EQ(match(f.get(), "last", false), &f->rules[2]);
}

TEST(IgnoreRead, AbsolutePathFromCwd)
{
  TempDir t;
  t.write("ex", "*.tmp\n");
  int err = -1;
  File f = read_file(AT_FDCWD, t.str("ex"), false, &err);
  ASSERT_EQ(err, 0) << g_strerror(err);
  ASSERT_TRUE(f);
  EXPECT_NE(match(f.get(), "a/b.tmp", false), nullptr);
}

TEST(IgnoreRead, EmptyFileAndDevNull)
{
  TempDir t;
  t.write("empty", "");
  int err = -1;
  File f = read_file(AT_FDCWD, t.str("empty"), true, &err);
  ASSERT_EQ(err, 0);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->n, 0u);
  // Not a regular file: read to its end all the same.
  File n = read_file(AT_FDCWD, "/dev/null", false, &err);
  ASSERT_EQ(err, 0);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->n, 0u);
}

TEST(IgnoreRead, MissingFile)
{
  TempDir t;
  int err = -1;
  File f = read_file(AT_FDCWD, t.str("nope"), true, &err);
  EXPECT_EQ(err, ENOENT);
  EXPECT_FALSE(f);
  f = read_file(AT_FDCWD, t.str("nope"), false, &err);
  EXPECT_EQ(err, ENOENT);
  EXPECT_FALSE(f);
}

TEST(IgnoreRead, PathThroughAFile)
{
  TempDir t;
  t.write("file", "x\n");
  int err = -1;
  File f = read_file(AT_FDCWD, t.str("file/.gitignore"), true, &err);
  EXPECT_EQ(err, ENOTDIR);
  EXPECT_FALSE(f);
}

TEST(IgnoreRead, Directory)
{
  TempDir t;
  t.mkdir(".gitignore");
  int err = -1;
  File f = read_file(AT_FDCWD, t.str(".gitignore"), true, &err);
  EXPECT_EQ(err, EISDIR);
  EXPECT_FALSE(f);
}

TEST(IgnoreRead, SymlinkRefusedWithNofollowFollowedWithout)
{
  TempDir t;
  t.write("target", "*.o\n");
  ASSERT_EQ(symlink("target", t.str("link").c_str()), 0) << g_strerror(errno);
  ASSERT_EQ(symlink("missing", t.str("dangling").c_str()), 0) << g_strerror(errno);
  Fd dir(open(t.str().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_GE(dir.get(), 0);
  int err = -1;

  File f = read_file(dir.get(), "link", true, &err);
  EXPECT_EQ(err, ELOOP);
  EXPECT_FALSE(f);

  f = read_file(dir.get(), "link", false, &err);
  ASSERT_EQ(err, 0) << g_strerror(err);
  ASSERT_TRUE(f);
  ASSERT_EQ(f->n, 1u);
  EXPECT_STREQ(f->rules[0].shown, "*.o");

  f = read_file(dir.get(), "dangling", true, &err);
  EXPECT_EQ(err, ELOOP);
  EXPECT_FALSE(f);
  f = read_file(dir.get(), "dangling", false, &err);
  EXPECT_EQ(err, ENOENT);
  EXPECT_FALSE(f);
}

TEST(IgnoreRead, Unreadable)
{
  if (geteuid() == 0)
    GTEST_SKIP() << "running as root: permissions are not enforced";
  TempDir t;
  t.write("secret", "x\n");
  ASSERT_EQ(chmod(t.str("secret").c_str(), 0), 0);
  int err = -1;
  File f = read_file(AT_FDCWD, t.str("secret"), true, &err);
  EXPECT_EQ(err, EACCES);
  EXPECT_FALSE(f);
  chmod(t.str("secret").c_str(), 0600);
}

TEST(IgnoreRead, OverTheLimit)
{
  TempDir t;
  // A sparse file one byte over the limit: cheap to make, refused unread.
  std::string path = t.str("huge");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0) << g_strerror(errno);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(IGNORE_FILE_MAX) + 1), 0) << g_strerror(errno);
  close(fd);
  int err = -1;
  File f = read_file(AT_FDCWD, path, true, &err);
  EXPECT_EQ(err, EFBIG);
  EXPECT_FALSE(f);
}

// ---- core.excludesFile ----------------------------------------------------

// Sets environment variables for one test and restores them after.
class Env {
public:
  Env()
  {
    for (const char *name : {"HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM"}) {
      const char *v = getenv(name);
      saved_.emplace_back(name, v ? std::make_unique<std::string>(v) : nullptr);
    }
    // The host's /etc/gitconfig stays out of every test.
    set("GIT_CONFIG_NOSYSTEM", "1");
  }
  ~Env()
  {
    for (auto &[name, value] : saved_) {
      if (value)
        setenv(name.c_str(), value->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
  }
  Env(const Env &) = delete;
  Env &operator=(const Env &) = delete;

  void set(const char *name, const std::string &value) { setenv(name, value.c_str(), 1); }
  void unset(const char *name) { unsetenv(name); }

private:
  std::vector<std::pair<std::string, std::unique_ptr<std::string>>> saved_;
};

// ignore_excludes_file as a string; "(null)" for NULL.
std::string excludes(const std::string *common, const char *top)
{
  char *p = ignore_excludes_file(common ? common->c_str() : nullptr, top);
  std::string out = p ? p : "(null)";
  g_free(p);
  return out;
}

// A temporary HOME with no XDG_CONFIG_HOME and no GIT_CONFIG_GLOBAL.
class ExcludesTest : public ::testing::Test {
protected:
  void SetUp() override
  {
    home = t.str("home");
    t.mkdir("home");
    env.set("HOME", home);
    env.unset("XDG_CONFIG_HOME");
    env.unset("GIT_CONFIG_GLOBAL");
  }
  TempDir t;
  Env env;
  std::string home;
};

TEST_F(ExcludesTest, DefaultWithoutXdgIsHomeConfig)
{
  EXPECT_EQ(excludes(nullptr, nullptr), home + "/.config/git/ignore");
}

TEST_F(ExcludesTest, DefaultEmptyXdgIsHomeConfig)
{
  env.set("XDG_CONFIG_HOME", "");
  EXPECT_EQ(excludes(nullptr, nullptr), home + "/.config/git/ignore");
}

TEST_F(ExcludesTest, DefaultIsXdgConfigHome)
{
  env.set("XDG_CONFIG_HOME", t.str("xdg"));
  EXPECT_EQ(excludes(nullptr, nullptr), t.str("xdg") + "/git/ignore");
}

TEST_F(ExcludesTest, GitConfigGlobal)
{
  t.write("global", "[core]\n\texcludesFile = /abs/ignore\n");
  env.set("GIT_CONFIG_GLOBAL", t.str("global"));
  EXPECT_EQ(excludes(nullptr, nullptr), "/abs/ignore");
}

TEST_F(ExcludesTest, GitConfigGlobalReplacesHomeAndXdgConfig)
{
  t.write("home/.gitconfig", "[core]\n\texcludesFile = /from/home\n");
  t.write("global", "[user]\n\tname = x\n");
  env.set("GIT_CONFIG_GLOBAL", t.str("global"));
  EXPECT_EQ(excludes(nullptr, nullptr), home + "/.config/git/ignore");
}

TEST_F(ExcludesTest, HomeGitconfig)
{
  t.write("home/.gitconfig", "[core]\n\texcludesFile = /from/home\n");
  EXPECT_EQ(excludes(nullptr, nullptr), "/from/home");
}

TEST_F(ExcludesTest, XdgConfigThenHomeGitconfigWins)
{
  env.set("XDG_CONFIG_HOME", t.str("xdg"));
  t.write("xdg/git/config", "[core]\n\texcludesFile = /from/xdg\n");
  EXPECT_EQ(excludes(nullptr, nullptr), "/from/xdg");
  t.write("home/.gitconfig", "[core]\n\texcludesFile = /from/home\n");
  EXPECT_EQ(excludes(nullptr, nullptr), "/from/home");
}

TEST_F(ExcludesTest, HomeConfigGitConfigWithoutXdg)
{
  t.write("home/.config/git/config", "[core]\n\texcludesFile = /from/dot-config\n");
  EXPECT_EQ(excludes(nullptr, nullptr), "/from/dot-config");
}

TEST_F(ExcludesTest, TildeExpandsWithHome)
{
  t.write("global", "[core]\n\texcludesFile = ~/my-ignore\n");
  env.set("GIT_CONFIG_GLOBAL", t.str("global"));
  EXPECT_EQ(excludes(nullptr, nullptr), home + "/my-ignore");
}

TEST_F(ExcludesTest, Values)
{
  // value as written -> the path git uses (`git config --path core.excludesFile`)
  const std::pair<const char *, const char *> rows[] = {
    {"excludesFile = \"/a b/c\"", "/a b/c"},
    {"excludesFile = /p # a comment", "/p"},
    {"excludesFile = /p ; a comment", "/p"},
    {"excludesFile = \"/x;y#z\"", "/x;y#z"},
    {"excludesFile = /a\"b c\"d", "/ab cd"},
    {"excludesFile = \"/q\\\"r\"", "/q\"r"},
    {"excludesFile = /p\\\\q", "/p\\q"},
    {"excludesFile=/nospace", "/nospace"},
    {"excludesFile   =   /spaces   ", "/spaces"},
    {"\texcludesfile = /lower", "/lower"},
    {"ExcludesFile = /mixed", "/mixed"},
    {"EXCLUDESFILE = /upper", "/upper"},
  };
  for (const auto &[line, want] : rows) {
    t.write("global", "[core]\n"s + line + "\n");
    env.set("GIT_CONFIG_GLOBAL", t.str("global"));
    EXPECT_EQ(excludes(nullptr, nullptr), want) << line;
  }
}

TEST_F(ExcludesTest, SectionNames)
{
  const std::pair<const char *, const char *> rows[] = {
    {"[core]\nexcludesFile = /a\n", "/a"},
    {"[Core]\nexcludesFile = /a\n", "/a"},
    {"[core] excludesFile = /same-line\n", "/same-line"},
    {"[core \"sub\"]\nexcludesFile = /sub\n", nullptr},
    {"[core]\n[user]\nexcludesFile = /user\n", nullptr},
    {"[other]\nexcludesFile = /other\n[core]\n", nullptr},
    {"excludesFile = /no-section\n", nullptr},
    {"[core]\nexcludesFileX = /longer-key\n", nullptr},
    {"[core]\n# excludesFile = /comment\n", nullptr},
  };
  for (const auto &[text, want] : rows) {
    t.write("global", text);
    env.set("GIT_CONFIG_GLOBAL", t.str("global"));
    EXPECT_EQ(excludes(nullptr, nullptr), want ? want : home + "/.config/git/ignore") << text;
  }
}

TEST_F(ExcludesTest, LastSettingWins)
{
  t.write("global", "[core]\nexcludesFile = /first\n[core]\nexcludesFile = /second\n");
  env.set("GIT_CONFIG_GLOBAL", t.str("global"));
  EXPECT_EQ(excludes(nullptr, nullptr), "/second");
}

TEST_F(ExcludesTest, EmptyValueMeansNoFile)
{
  for (const char *line : {"excludesFile =", "excludesFile = \"\""}) {
    t.write("global", "[core]\n"s + line + "\n");
    env.set("GIT_CONFIG_GLOBAL", t.str("global"));
    EXPECT_EQ(excludes(nullptr, nullptr), "(null)") << line;
  }
}

TEST_F(ExcludesTest, RepositoryConfigOverridesGlobal)
{
  t.write("global", "[core]\nexcludesFile = /global\n");
  env.set("GIT_CONFIG_GLOBAL", t.str("global"));
  std::string common = t.str("repo/.git");
  t.write("repo/.git/config", "[core]\n\tbare = false\n");
  EXPECT_EQ(excludes(&common, t.str("repo").c_str()), "/global");
  t.write("repo/.git/config", "[core]\n\tbare = false\n\texcludesFile = /repo\n");
  EXPECT_EQ(excludes(&common, t.str("repo").c_str()), "/repo");
  // set to nothing in the repository: no excludes file at all
  t.write("repo/.git/config", "[core]\n\texcludesFile =\n");
  EXPECT_EQ(excludes(&common, t.str("repo").c_str()), "(null)");
}

// git joins a value continued by a backslash at the end of its line
// ("/p\" then "q" on the next line is "/pq"); config_scan reads the file
// line by line and keeps the backslash ("/p\"). Disabled until ignore.c
// agrees.
TEST_F(ExcludesTest, ValueContinuedOnTheNextLine)
{
  t.write("global", "[core]\nexcludesFile = /p\\\nq\n");
  env.set("GIT_CONFIG_GLOBAL", t.str("global"));
  EXPECT_EQ(excludes(nullptr, nullptr), "/pq");
}

TEST_F(ExcludesTest, RelativeValueIsRelativeToTop)
{
  t.write("global", "[core]\nexcludesFile = rel/ignore\n");
  env.set("GIT_CONFIG_GLOBAL", t.str("global"));
  EXPECT_EQ(excludes(nullptr, "/top"), "/top/rel/ignore");
}

// ---- ignore_git_dir, ignore_find_top --------------------------------------

std::string canon(const std::string &p)
{
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return ec ? p : c.string();
}

struct GitDir {
  std::string dir, common;
  bool found;
};

GitDir git_dir(const std::string &top)
{
  static char sentinel;
  char *common = &sentinel; // must be overwritten
  char *dir = ignore_git_dir(top.c_str(), &common);
  if (common == &sentinel) {
    ADD_FAILURE() << "ignore_git_dir left *common as it was";
    common = nullptr;
  }
  GitDir out{dir ? dir : "", common ? common : "", dir != nullptr};
  if (dir == nullptr) {
    EXPECT_EQ(common, nullptr);
  } else {
    EXPECT_NE(common, nullptr);
  }
  g_free(dir);
  g_free(common);
  return out;
}

// What git takes for a git directory: HEAD in it, objects/ and refs/ in its
// common directory (git's is_git_directory). Anything else named .git is an
// ordinary directory to git.
void make_git_dir(const TempDir &t, const std::string &rel, bool common = true)
{
  t.write(rel + "/HEAD", "ref: refs/heads/main\n");
  if (common) {
    t.mkdir(rel + "/objects");
    t.mkdir(rel + "/refs");
  }
}

TEST(IgnoreGitDir, DotGitDirectory)
{
  TempDir t;
  make_git_dir(t, "repo/.git");
  GitDir g = git_dir(t.str("repo"));
  ASSERT_TRUE(g.found);
  EXPECT_EQ(canon(g.dir), t.str("repo/.git"));
  EXPECT_EQ(canon(g.common), t.str("repo/.git"));
}

// git 2.39: `mkdir -p r/s/.git && touch r/s/x && echo x > r/.gitignore` —
// `git ls-files -o --exclude-standard` in r lists only .gitignore: s/.git
// is not a repository and r's rules apply inside s.
TEST(IgnoreGitDir, NotARepository)
{
  TempDir t;
  t.mkdir("empty/.git");
  EXPECT_FALSE(git_dir(t.str("empty")).found);
  t.write("headonly/.git/HEAD", "ref: refs/heads/main\n");
  EXPECT_FALSE(git_dir(t.str("headonly")).found);
  t.mkdir("norefs/.git/objects");
  t.write("norefs/.git/HEAD", "ref: refs/heads/main\n");
  EXPECT_FALSE(git_dir(t.str("norefs")).found);
  t.write("dangling/.git", "gitdir: /nonexistent/trawl\n");
  EXPECT_FALSE(git_dir(t.str("dangling")).found);
}

TEST(IgnoreGitDir, NoDotGit)
{
  TempDir t;
  t.mkdir("plain");
  EXPECT_FALSE(git_dir(t.str("plain")).found);
}

TEST(IgnoreGitDir, DotGitFileRelative)
{
  TempDir t;
  make_git_dir(t, "modules/sub");
  t.write("work/sub/.git", "gitdir: ../../modules/sub\n");
  GitDir g = git_dir(t.str("work/sub"));
  ASSERT_TRUE(g.found);
  EXPECT_EQ(canon(g.dir), t.str("modules/sub"));
  EXPECT_EQ(canon(g.common), t.str("modules/sub"));
}

TEST(IgnoreGitDir, DotGitFileAbsolute)
{
  TempDir t;
  make_git_dir(t, "elsewhere/g");
  t.write("work/.git", "gitdir: " + t.str("elsewhere/g") + "\n");
  GitDir g = git_dir(t.str("work"));
  ASSERT_TRUE(g.found);
  EXPECT_EQ(g.dir, t.str("elsewhere/g"));
  EXPECT_EQ(g.common, t.str("elsewhere/g"));
}

TEST(IgnoreGitDir, DotGitFileWithoutGitdir)
{
  TempDir t;
  t.write("work/.git", "not a gitdir line\n");
  EXPECT_FALSE(git_dir(t.str("work")).found);
}

TEST(IgnoreGitDir, LinkedWorkTreeCommondir)
{
  // As `git worktree add` lays it out: main/.git/worktrees/wt holds
  // "commondir" = "../.." and the work tree's .git file points there.
  TempDir t;
  t.mkdir("main/.git/info");
  make_git_dir(t, "main/.git");
  make_git_dir(t, "main/.git/worktrees/wt", false);
  t.write("main/.git/worktrees/wt/commondir", "../..\n");
  t.write("wt/.git", "gitdir: " + t.str("main/.git/worktrees/wt") + "\n");
  GitDir g = git_dir(t.str("wt"));
  ASSERT_TRUE(g.found);
  EXPECT_EQ(canon(g.dir), t.str("main/.git/worktrees/wt"));
  EXPECT_EQ(canon(g.common), t.str("main/.git"));
}

TEST(IgnoreGitDir, CommondirAbsolute)
{
  TempDir t;
  t.mkdir("common/objects");
  t.mkdir("common/refs");
  make_git_dir(t, "repo/.git", false);
  t.write("repo/.git/commondir", t.str("common") + "\n");
  GitDir g = git_dir(t.str("repo"));
  ASSERT_TRUE(g.found);
  EXPECT_EQ(canon(g.dir), t.str("repo/.git"));
  EXPECT_EQ(g.common, t.str("common"));
}

TEST(IgnoreFindTop, NearestDirectoryWithDotGit)
{
  TempDir t;
  make_git_dir(t, "repo/.git");
  make_git_dir(t, "repo/.git/modules/sub");
  t.mkdir("repo/a/b");
  t.mkdir("repo/a/sub/c");
  t.write("repo/a/sub/.git", "gitdir: ../../.git/modules/sub\n");
  auto top = [](const std::string &dir) {
    char *p = ignore_find_top(dir.c_str());
    std::string out = p ? p : "(null)";
    g_free(p);
    return out;
  };
  EXPECT_EQ(top(t.str("repo")), t.str("repo"));
  EXPECT_EQ(top(t.str("repo/a/b")), t.str("repo"));
  EXPECT_EQ(top(t.str("repo/a/sub/c")), t.str("repo/a/sub"));
  EXPECT_EQ(top(t.str("repo/a/sub")), t.str("repo/a/sub"));
}

} // namespace
