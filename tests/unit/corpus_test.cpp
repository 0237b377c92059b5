// Replays every file of tests/corpus/ through the C API: one test per file,
// one failure per wrong row, each naming the row as file:line.
//
// Besides its own expectation, every matching row is also held to the
// properties the walker relies on: the engine alone agrees with
// trawl_pattern_match (prefilters and shortcuts change nothing), every
// ancestor directory of the path gets "yes" from may_match_below, and the
// path agrees with the pattern's facts (length, prefix, suffix, extension,
// roots).
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "corpus.hpp"
#include "test_util.hpp"

using corpus::Kind;
using corpus::Row;
using namespace testutil;

namespace {

std::string compile_failure(const Row &row, const Error &error)
{
  return row.where() + ": pattern does not compile: " +
         (error ? error->message : "(no error set)") + "\n  row: " + row.describe();
}

void check_match(const Row &row)
{
  Error error;
  Pattern p = compile(row.pattern, row.dialect, row.flags, &error);
  if (!p) {
    ADD_FAILURE() << compile_failure(row, error);
    return;
  }
  const bool untyped = match(p.get(), row.path);
  // The typed answers: a directory's is the untyped one, a file's never a
  // match the untyped one is not, and only a typed pattern's may differ.
  const bool as_dir = match_entry(p.get(), row.path, TRAWL_ENTRY_DIR);
  const bool as_file = match_entry(p.get(), row.path, TRAWL_ENTRY_FILE);
  EXPECT_EQ(as_dir, untyped) << row.where() << ": as a directory\n  row: " << row.describe();
  EXPECT_TRUE(!as_file || untyped) << row.where() << ": a file matches, untyped not\n  row: "
                                   << row.describe();
  EXPECT_TRUE(as_file == untyped || trawl_pattern_typed(p.get()))
      << row.where() << ": an untyped pattern answers by type\n  row: " << row.describe();
  bool got = row.type == TRAWL_ENTRY_UNKNOWN ? untyped : row.type == TRAWL_ENTRY_DIR ? as_dir
                                                                                     : as_file;
  if (got != row.expected)
    ADD_FAILURE() << row.where() << ": trawl_pattern_match" << (row.type ? "_entry" : "")
                  << " says " << (got ? "yes" : "no") << "\n  row: " << row.describe();
  bool eng = engine(p.get(), row.path); // untyped
  if (eng != untyped)
    ADD_FAILURE() << row.where() << ": the engine alone says " << (eng ? "yes" : "no")
                  << ", trawl_pattern_match says " << (untyped ? "yes" : "no")
                  << "\n  row: " << row.describe();
  if (!got)
    return;

  const bool icase = (row.flags & TRAWL_PATTERN_ICASE) != 0;
  for (const std::string &dir : ancestors(row.path))
    EXPECT_TRUE(below(p.get(), dir))
        << row.where() << ": the path matches, but may_match_below says no for its directory "
        << show(dir) << "\n  row: " << row.describe();
  EXPECT_GE(row.path.size(), trawl_pattern_min_length(p.get()))
      << row.where() << ": a match is shorter than min_length\n  row: " << row.describe();
  EXPECT_TRUE(starts_with(row.path, prefix(p.get()), icase))
      << row.where() << ": a match does not start with the literal prefix "
      << show(prefix(p.get())) << "\n  row: " << row.describe();
  EXPECT_TRUE(ends_with(row.path, suffix(p.get()), icase))
      << row.where() << ": a match does not end with the literal suffix "
      << show(suffix(p.get())) << "\n  row: " << row.describe();
  std::string ext = extension(p.get());
  EXPECT_TRUE(ends_with(row.path, ext, icase))
      << row.where() << ": a match does not end with the extension " << show(ext)
      << "\n  row: " << row.describe();
  std::vector<std::string> r = roots(p.get());
  EXPECT_TRUE(std::any_of(r.begin(), r.end(),
                          [&](const std::string &root) { return under_root(row.path, root, icase); }))
      << row.where() << ": a match lies under none of the roots\n  row: " << row.describe();
}

void check_error(const Row &row)
{
  Error error;
  Pattern p = compile(row.pattern, row.dialect, row.flags, &error);
  if (p) {
    ADD_FAILURE() << row.where() << ": the pattern compiles; expected an error at byte "
                  << row.offset << "\n  row: " << row.describe();
    return;
  }
  if (!error) {
    ADD_FAILURE() << row.where() << ": compile returned NULL without an error\n  row: "
                  << row.describe();
    return;
  }
  EXPECT_EQ(error->domain, TRAWL_PATTERN_ERROR) << row.where() << ": " << error->message;
  EXPECT_EQ(trawl_pattern_error_offset(error.get()), row.offset)
      << row.where() << ": wrong offset in \"" << error->message << "\"\n  row: " << row.describe();
  EXPECT_NE(std::string(error->message).find(row.reason), std::string::npos)
      << row.where() << ": the message \"" << error->message << "\" lacks \"" << row.reason
      << "\"\n  row: " << row.describe();
  std::string byte = "byte " + std::to_string(row.offset);
  EXPECT_NE(std::string(error->message).find(byte), std::string::npos)
      << row.where() << ": the message \"" << error->message << "\" does not say \"" << byte
      << "\"";
}

void check_prune(const Row &row)
{
  Error error;
  Pattern p = compile(row.pattern, row.dialect, row.flags, &error);
  if (!p) {
    ADD_FAILURE() << compile_failure(row, error);
    return;
  }
  bool got = below(p.get(), row.path);
  if (got != row.expected)
    ADD_FAILURE() << row.where() << ": may_match_below says " << (got ? "yes" : "no")
                  << "\n  row: " << row.describe();
}

// An escape row: the escaper makes PATTERN of PATH, and PATTERN matches
// PATH (check_match) as a literal: every match starts and ends with all of
// PATH, and there is one alternative.
void check_escape(const Row &row)
{
  GString *out = g_string_new(NULL);
  trawl_pattern_escape(out, row.path.data(), row.path.size());
  const std::string got(out->str, out->len);
  g_string_free(out, TRUE);
  EXPECT_EQ(show(got), show(row.pattern))
      << row.where() << ": trawl_pattern_escape\n  row: " << row.describe();
  check_match(row);
  Error error;
  Pattern p = compile(row.pattern, row.dialect, row.flags, &error);
  if (!p)
    return;
  EXPECT_EQ(show(prefix(p.get())), show(row.path))
      << row.where() << ": not literal (prefix)\n  row: " << row.describe();
  EXPECT_EQ(show(suffix(p.get())), show(row.path))
      << row.where() << ": not literal (suffix)\n  row: " << row.describe();
  EXPECT_EQ(trawl_pattern_alternative_count(p.get()), 1u) << row.where();
}

bool parse_count(const Row &row, size_t *out)
{
  if (row.values.size() != 1 || row.values[0].empty() ||
      row.values[0].find_first_not_of("0123456789") != std::string::npos) {
    ADD_FAILURE() << row.where() << ": '" << row.key << "' takes one number";
    return false;
  }
  *out = std::stoul(row.values[0]);
  return true;
}

bool one_value(const Row &row)
{
  if (row.values.size() == 1)
    return true;
  ADD_FAILURE() << row.where() << ": '" << row.key << "' takes one value";
  return false;
}

void check_facts(const Row &row)
{
  Error error;
  Pattern p = compile(row.pattern, row.dialect, row.flags, &error);
  if (!p) {
    ADD_FAILURE() << compile_failure(row, error);
    return;
  }
  const std::string ctx = row.where() + ": " + row.describe();
  size_t n = 0;
  if (row.key == "prefix") {
    if (one_value(row)) {
      EXPECT_EQ(show(prefix(p.get())), show(row.values[0])) << ctx;
    }
  } else if (row.key == "suffix") {
    if (one_value(row)) {
      EXPECT_EQ(show(suffix(p.get())), show(row.values[0])) << ctx;
    }
  } else if (row.key == "ext") {
    bool has = false;
    std::string ext = extension(p.get(), &has);
    if (row.values.empty()) {
      EXPECT_FALSE(has) << ctx << "\n  got extension " << show(ext);
    } else if (one_value(row)) {
      EXPECT_TRUE(has) << ctx << "\n  got no extension";
      EXPECT_EQ(show(ext), show(row.values[0])) << ctx;
    }
  } else if (row.key == "minlen") {
    if (parse_count(row, &n)) {
      EXPECT_EQ(trawl_pattern_min_length(p.get()), n) << ctx;
    }
  } else if (row.key == "alts") {
    if (parse_count(row, &n)) {
      EXPECT_EQ(trawl_pattern_alternative_count(p.get()), n) << ctx;
    }
  } else if (row.key == "nothing") {
    if (one_value(row)) {
      EXPECT_EQ(trawl_pattern_matches_nothing(p.get()) ? "yes" : "no", row.values[0]) << ctx;
    }
  } else if (row.key == "roots") {
    std::vector<std::string> got = roots(p.get()), want = row.values;
    EXPECT_TRUE(std::is_sorted(got.begin(), got.end())) << ctx << "\n  roots not sorted";
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    std::string g, w;
    for (const auto &s : got)
      g += show(s) + " ";
    for (const auto &s : want)
      w += show(s) + " ";
    EXPECT_EQ(g, w) << ctx;
  } else {
    ADD_FAILURE() << row.where() << ": unknown fact '" << row.key << "'";
  }
}

class CorpusFile : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusFile, EveryRowHolds)
{
  std::string error;
  std::vector<Row> rows = corpus::parse_file(GetParam(), &error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_FALSE(rows.empty()) << GetParam() << " holds no rows";
  for (const Row &row : rows) {
    switch (row.kind) {
    case Kind::Match: check_match(row); break;
    case Kind::Error: check_error(row); break;
    case Kind::Prune: check_prune(row); break;
    case Kind::Facts: check_facts(row); break;
    case Kind::Escape: check_escape(row); break;
    }
  }
  RecordProperty("rows", static_cast<int>(rows.size()));
}

std::string test_name(const ::testing::TestParamInfo<std::string> &info)
{
  std::string name = info.param.substr(info.param.rfind('/') + 1);
  name = name.substr(0, name.size() - 4); // ".txt"
  for (char &c : name)
    if (!g_ascii_isalnum(c))
      c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusFile,
                         ::testing::ValuesIn(corpus::list_files(TRAWL_CORPUS_DIR)), test_name);

// The runner must not pass by finding nothing to run.
TEST(CorpusFiles, AreThere)
{
  std::vector<std::string> files = corpus::list_files(TRAWL_CORPUS_DIR);
  EXPECT_GE(files.size(), 10u) << "corpus directory: " << TRAWL_CORPUS_DIR;
  size_t rows = 0;
  for (const auto &f : files) {
    std::string error;
    rows += corpus::parse_file(f, &error).size();
  }
  EXPECT_GE(rows, 500u);
}

} // namespace
