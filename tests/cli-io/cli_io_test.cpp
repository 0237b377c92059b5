// The command's I/O library (plugins/cli: output.c, json.c, options.c,
// report.c), on its own: each format's quoting, the JSON reader's answers
// and refusals with their offsets, the tables several commands share, the
// option splitting, and the reports' lines. Rows of data; the same rules
// are run end to end through the command by tests/walk/*_cli.py.
#include <fcntl.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "json.h"
#include "options.h"
#include "output.h"
#include "queries.h"
#include "report.h"
}

namespace {

std::string lines(const std::string &s)
{
  GString *g = g_string_new(nullptr);
  output_lines_string(g, s.data(), s.size());
  std::string out(g->str, g->len);
  g_string_free(g, TRUE);
  return out;
}

std::string json(const std::string &s)
{
  GString *g = g_string_new(nullptr);
  output_json_string(g, s.data(), s.size());
  std::string out(g->str, g->len);
  g_string_free(g, TRUE);
  return out;
}

struct QuoteRow {
  std::string path, lines, json;
};

const QuoteRow kQuoteRows[] = {
  {"src/a.c", "src/a.c", "\"src/a.c\""},
  {"a b", "a b", "\"a b\""},
  {"new\nline", "\"new\\nline\"", "\"new\\nline\""},
  {"tab\there", "\"tab\\there\"", "\"tab\\there\""},
  {"q\"uote", "\"q\\\"uote\"", "\"q\\\"uote\""},
  {"back\\slash", "\"back\\\\slash\"", "\"back\\\\slash\""},
  {std::string("\x01x", 2), "\"\\001x\"", "\"\\u0001x\""},
  {"\x7f", "\"\\177\"", "\"\x7f\""},
  {"caf\xc3\xa9", "caf\xc3\xa9", "\"caf\xc3\xa9\""},                 // UTF-8 as it is
  {"\xff\xfe", "\xff\xfe", "\"\\udcff\\udcfe\""},                      // not UTF-8: surrogateescape
  {"\xc3", "\xc3", "\"\\udcc3\""},                                    // a sequence cut short
  {"it's", "it's", "\"it's\""},
};

TEST(CliIo, QuotingOfEveryFormat)
{
  for (const auto &r : kQuoteRows) {
    EXPECT_EQ(lines(r.path), r.lines) << "lines of " << r.path;
    EXPECT_EQ(json(r.path), r.json) << "json of " << r.path;
    // Not needing escaping (nor a check: bytes >= 0x80 are checked) means
    // the JSON form is the bytes between quotes.
    if (!output_json_needs_escaping(r.path.data(), r.path.size())) {
      EXPECT_EQ(json(r.path), "\"" + r.path + "\"") << r.path;
    }
  }
}

// All of file FD from its start; FD closed and NAME unlinked.
std::string slurp_and_remove(int fd, const char *name)
{
  std::string got;
  lseek(fd, 0, SEEK_SET);
  char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0)
    got.append(buf, (size_t)n);
  close(fd);
  unlink(name);
  return got;
}

// The output buffer through a file: the nul format writes each path and a
// NUL; the json format a document; a path longer than the buffer whole.
std::string through(OutputFormat format, const std::vector<std::string> &paths)
{
  char name[] = "/tmp/trawl-cli-io-XXXXXX";
  const int fd = mkstemp(name);
  EXPECT_GE(fd, 0);
  output out;
  output_init(&out, fd, format, nullptr, 0);
  output_begin(&out, "r", 1);
  for (const auto &p : paths)
    output_path(&out, p.data(), p.size());
  EXPECT_TRUE(output_end(&out));
  output_release(&out);
  return slurp_and_remove(fd, name);
}

TEST(CliIo, FormatsWriteWholeRecords)
{
  EXPECT_EQ(through(OUTPUT_NUL, {"a", "new\nline"}), std::string("a\0new\nline\0", 11));
  EXPECT_EQ(through(OUTPUT_LINES, {"a", "new\nline"}), "a\n\"new\\nline\"\n");
  const std::string json_doc = through(OUTPUT_JSON, {"a", "b"});
  json_error e;
  json_value *v = json_parse(json_doc.data(), json_doc.size(), &e);
  ASSERT_NE(v, nullptr) << e.message << " at " << e.offset << " in " << json_doc;
  json_value_free(v);
  const std::string big(OUTPUT_BUFFER_SIZE + 100, 'x');
  EXPECT_EQ(through(OUTPUT_LINES, {big}), big + "\n");
}

struct JsonRow {
  std::string text;
  bool ok;
  size_t offset; // of the error
};

const JsonRow kJsonRows[] = {
  {"{\"id\": 1, \"include\": [\"a\"]}", true, 0},
  {"[1, 2.5, -0, \"x\", true, false, null]", true, 0},
  {"\"\\udcff\"", true, 0},                 // a lone \udcXX: the byte
  {"\"\\ud800\"", false, 1},                // any other lone surrogate
  {"{\"a\": 1,}", false, 8},                // a trailing comma
  {"{'a': 1}", false, 1},                   // single quotes
  {"[1 2]", false, 3},
  {"NaN", false, 0},
  {"\"a\x01\"", false, 2},                  // a control byte in a string
  {"{\"a\": 1", false, 7},                  // ended too early: the input's length
  {std::string(65, '[') + std::string(65, ']'), false, 64}, // deeper than 64
};

TEST(CliIo, JsonReaderAnswersAndRefusals)
{
  for (const auto &r : kJsonRows) {
    json_error e;
    json_value *v = json_parse(r.text.data(), r.text.size(), &e);
    EXPECT_EQ(v != nullptr, r.ok) << r.text << ": " << (v ? "" : e.message);
    if (!r.ok && v == nullptr) {
      EXPECT_EQ(e.offset, r.offset) << r.text << ": " << e.message;
    }
    json_value_free(v);
  }
  json_error e;
  json_value *v = json_parse("\"\\udcff\"", 8, &e);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(std::string(v->str, v->len), "\xff");
  json_value_free(v);
}

TEST(CliIo, OneTableOfEntryTypes)
{
  const std::pair<const char *, unsigned> rows[] = {
    {"f", TRAWL_ENTRY_FILE}, {"file", TRAWL_ENTRY_FILE}, {"d", TRAWL_ENTRY_DIR},
    {"dir", TRAWL_ENTRY_DIR}, {"directory", TRAWL_ENTRY_DIR}, {"l", TRAWL_ENTRY_SYMLINK},
    {"symlink", TRAWL_ENTRY_SYMLINK}, {"files", 0}, {"", 0}, {"F", 0},
  };
  for (const auto &[name, type] : rows)
    EXPECT_EQ(cli_entry_type(name, strlen(name)), type) << name;
}

TEST(CliIo, DialectsAndTheHiddenRule)
{
  TrawlDialect d;
  for (const char *name : {"trawl", "git", "cmake", "bazel"})
    EXPECT_TRUE(cli_dialect_from_name(name, &d)) << name;
  EXPECT_FALSE(cli_dialect_from_name("Bazel", &d));
  EXPECT_FALSE(cli_hidden(false, TRAWL_DIALECT_TRAWL));
  EXPECT_TRUE(cli_hidden(true, TRAWL_DIALECT_TRAWL));
  for (TrawlDialect other : {TRAWL_DIALECT_GIT, TRAWL_DIALECT_CMAKE, TRAWL_DIALECT_BAZEL})
    EXPECT_TRUE(cli_hidden(false, other)) << "the compatibility dialects let the patterns decide";
}

std::vector<std::string> split(std::vector<std::string> args, const char *shorts,
                               std::vector<const char *> longs)
{
  std::vector<char *> argv;
  for (auto &a : args)
    argv.push_back(a.data());
  longs.push_back(nullptr);
  int argc = (int)argv.size();
  GPtrArray *owned = g_ptr_array_new_with_free_func(g_free);
  char **out = cli_split_attached(&argc, argv.data(), shorts, longs.data(), owned);
  std::vector<std::string> got(out, out + argc);
  g_free(out);
  g_ptr_array_unref(owned);
  return got;
}

TEST(CliIo, AttachedValuesAreSplit)
{
  using V = std::vector<std::string>;
  EXPECT_EQ(split({"trawl", "-j4", "a"}, "j", {}), (V{"trawl", "-j", "4", "a"}));
  EXPECT_EQ(split({"trawl", "-Hx*.o", "a"}, "Cxj", {}), (V{"trawl", "-Hx", "*.o", "a"}));
  // A value is never split again, nor anything after "--".
  EXPECT_EQ(split({"trawl", "-x", "-j4", "--", "-j2"}, "xj", {}),
            (V{"trawl", "-x", "-j4", "--", "-j2"}));
  EXPECT_EQ(split({"trawl", "--cache", "-j4", "-j1"}, "j", {"--cache"}),
            (V{"trawl", "--cache", "-j4", "-j", "1"}));
  EXPECT_EQ(split({"trawl", "-j", "3"}, "j", {}), (V{"trawl", "-j", "3"}));
}

// What report.c prints, read back from stderr.
std::string stderr_of(const std::function<void()> &fn)
{
  fflush(stderr);
  const int saved = dup(2);
  char name[] = "/tmp/trawl-cli-io-XXXXXX";
  const int fd = mkstemp(name);
  dup2(fd, 2);
  fn();
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  return slurp_and_remove(fd, name);
}

// The one escaper of what the command tells people (report.h): a name
// cannot forge a line, nor stop a reader that decodes UTF-8 (Meson).
TEST(CliIo, MessagesCannotForgeALine)
{
  EXPECT_EQ(stderr_of([] { cli_print_message("a\nb\x7f" "c"); }), "trawl: a\\nb\\x7fc\n");
  EXPECT_EQ(stderr_of([] { cli_print_message("t\tr\r\x01 '\\-' \xc3\xa9 \xff\xc3 \xe2\x82"); }),
            "trawl: t\\tr\\r\\x01 '\\-' \xc3\xa9 \\xff\\xc3 \\xe2\\x82\n");
}

TEST(CliIo, NamesAreShownWithTheirBackslashesDoubled)
{
  const struct {
    std::string name, shown;
  } rows[] = {
    {"plain.c", "plain.c"},
    {"back\\slash", "back\\\\slash"},
    {"new\nline\a\b\v\f", "new\\nline\\a\\b\\v\\f"},
    {std::string("nul\0x", 5), "nul\\x00x"},
    {"\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9"},          // UTF-8 as it is
    {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},          // four bytes
    {"lat\xe9n", "lat\\xe9n"},                        // not UTF-8
    {"over\xc0\xaflong", "over\\xc0\\xaflong"},        // an overlong '/'
    {"cut\xe2\x82", "cut\\xe2\\x82"},                  // a sequence cut short
    {"\xed\xa0\x80", "\\xed\\xa0\\x80"},                // a surrogate
  };
  for (const auto &row : rows) {
    GString *out = g_string_new(nullptr);
    cli_append_name(out, row.name.data(), row.name.size());
    EXPECT_EQ(std::string(out->str, out->len), row.shown) << row.name;
    g_string_free(out, TRUE);
  }
}

TEST(CliIo, APlanRunsStatsLine)
{
  TrawlPlan *plan = trawl_plan_new();
  TrawlQuery q{};
  q.root = "/nonexistent-trawl-root";
  trawl_plan_add(plan, &q);
  trawl_plan_run(plan, nullptr);
  const std::string line = stderr_of([&] {
    cli_report_plan_stats(1, "query", "queries", plan, nullptr, g_get_monotonic_time());
  });
  EXPECT_EQ(line.rfind("trawl: 1 query, 0 walks, 0 directories read, ", 0), 0u) << line;
  TrawlCacheReport rep{};
  rep.trusted = true;
  rep.written = true;
  rep.dirs_read = 1;
  rep.dirs_reused = 3;
  const std::string cached = stderr_of([&] {
    cli_report_plan_stats(2, "list", "lists", plan, &rep, g_get_monotonic_time());
  });
  EXPECT_EQ(cached.rfind("trawl: 2 lists, 0 walks, 1 directory read, 3 reused (cache trusted, written), ",
                         0),
            0u)
      << cached;
  trawl_plan_free(plan);
}

// The query schema (queries.c): a good line becomes a query with its
// options; each bad line is reported with its number and the key at fault,
// every one of them, and none is kept.
struct Decoded {
  std::string text; // the queries' ids point into it
  std::vector<struct query *> queries;
  unsigned bad = 0;
  std::string err;
};

Decoded decode(const std::string &text)
{
  Decoded d;
  d.text = text;
  GPtrArray *queries = g_ptr_array_new();
  GHashTable *ids = g_hash_table_new_full((GHashFunc)g_string_hash, (GEqualFunc)g_string_equal,
                                          [](gpointer p) { g_string_free((GString *)p, TRUE); },
                                          nullptr);
  struct query_reader r = {};
  r.name = "q.jsonl";
  r.threads = 2;
  r.queries = queries;
  r.ids = ids;
  d.err = stderr_of([&] { query_reader_decode(&r, d.text.data(), d.text.size()); });
  d.bad = r.bad_lines;
  for (guint i = 0; i < queries->len; i++)
    d.queries.push_back((struct query *)queries->pdata[i]);
  g_ptr_array_unref(queries);
  g_hash_table_unref(ids);
  return d;
}

TEST(CliIo, QuerySchema)
{
  const Decoded d = decode("{\"id\": \"a\", \"root\": \"src\", \"include\": [\"**/*.c\"], \"exclude\": [\"x/**\"],"
                     " \"type\": [\"f\", \"dir\"], \"max_depth\": 3, \"hidden\": true}\n"
                     "\n"
                     "{\"id\": 2, \"include\": [\"a*\"], \"dialect\": \"bazel\", \"ignore\": false,"
                     " \"follow\": true}\n");
  ASSERT_EQ(d.bad, 0u) << d.err;
  ASSERT_EQ(d.queries.size(), 2u);
  const struct query *a = d.queries[0], *b = d.queries[1];
  EXPECT_STREQ(a->root, "src");
  EXPECT_EQ(a->line, 1u);
  EXPECT_EQ(std::string(a->id, a->id_len), "\"a\"");
  EXPECT_EQ(a->includes->len, 1u);
  EXPECT_EQ(a->excludes->len, 1u);
  EXPECT_EQ(a->options.types, (unsigned)(TRAWL_ENTRY_FILE | TRAWL_ENTRY_DIR));
  EXPECT_EQ(a->options.max_depth, 3);
  EXPECT_TRUE(a->options.hidden);
  EXPECT_EQ(a->options.threads, 2u);
  EXPECT_EQ(b->line, 3u) << "a blank line still counts";
  EXPECT_EQ(b->dialect, TRAWL_DIALECT_BAZEL);
  EXPECT_TRUE(b->options.hidden) << "the compatibility dialects let the patterns decide";
  EXPECT_EQ(b->options.ignore, 0u);
  EXPECT_TRUE(b->options.follow);
  for (auto *q : d.queries)
    query_free(q);

  const std::pair<std::string, std::string> bad[] = {
    {"{\"include\": [\"a\"]}", "q.jsonl:1: id: missing"},
    {"{\"id\": 1}", "q.jsonl:1: include: missing"},
    {"{\"id\": 1, \"include\": [\"a[\"]}", "q.jsonl:1: include[0]: pattern"},
    {"{\"id\": 1, \"include\": [\"a\"], \"colour\": 1}", "q.jsonl:1: colour: unknown key"},
    {"{\"id\": 1, \"include\": [\"a\"], \"type\": [\"x\"]}", "q.jsonl:1: type[0]: unknown type"},
    {"{\"id\": 1, \"include\": [\"a\"], \"max_depth\": -1}", "q.jsonl:1: max_depth:"},
    {"{\"id\": 1, \"include\": [\"a\"]}\n{\"id\": 1, \"include\": [\"b\"]}",
     "q.jsonl:2: id: duplicate id 1 (first on line 1)"},
    {"[1]", "q.jsonl:1: a query is a JSON object"},
    {"{\"id\": 1,}", "q.jsonl:1:10: invalid JSON"},
  };
  for (const auto &[text, want] : bad) {
    Decoded e = decode(text);
    EXPECT_EQ(e.bad, 1u) << text;
    EXPECT_NE(e.err.find("trawl: " + want), std::string::npos) << text << "\n" << e.err;
    for (auto *q : e.queries)
      query_free(q);
  }
  Decoded two = decode("{\"id\": 1}\n{\"include\": 1}\n");
  EXPECT_EQ(two.bad, 2u) << "every bad line, not only the first";
  EXPECT_TRUE(two.queries.empty());
}

} // namespace
