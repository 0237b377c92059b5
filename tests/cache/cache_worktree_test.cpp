// Result caches inside git work trees (issue 13): a change to what git
// ignores — an ignore file below the root edited, replaced, created or
// deleted, a rule of info/exclude or of the excludes file meeting a new
// file — is seen by the re-check (`trawl check`'s) and by a cached run, in
// either order, with the work tree's top at the root and above it.
//
// Each case is a row: the tree before, one change, and the query. Its
// expectation is a fresh walk's, never written by hand; that the change
// matters at all (the fresh answer differs from the cached one) is asserted
// too, so a row cannot pass by changing nothing.
#include <functional>
#include <fstream>
#include <sstream>

#include "walk_util.hpp"

#include "trawl/cache.h"
#include "trawl/plan.h"

using namespace walktest;

namespace {

void settle()
{
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
}

void spit(const std::string &path, const std::string &data)
{
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << data;
}

void append(const std::string &path, const std::string &data)
{
  std::ofstream f(path, std::ios::binary | std::ios::app);
  f << data;
}

// git's configuration for a test: TMP/gitconfig as the global file (naming
// TMP/excludes as the excludes file), no system file.
struct GitEnv {
  explicit GitEnv(const TempDir &tmp)
  {
    spit(tmp / "gitconfig", "[core]\n\texcludesFile = " + tmp / "excludes" + "\n");
    setenv("GIT_CONFIG_GLOBAL", (tmp / "gitconfig").c_str(), 1);
    setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
  }
  ~GitEnv()
  {
    unsetenv("GIT_CONFIG_GLOBAL");
    unsetenv("GIT_CONFIG_NOSYSTEM");
  }
};

const unsigned kIgnore = TRAWL_IGNORE_VCS | TRAWL_IGNORE_DOT;

struct Answer {
  std::vector<std::string> results;
  bool changed = false, trusted = false;
};

// One query (INCLUDES) on ROOT, through the cache CACHE (FLAGS: 0, a cached
// run; TRAWL_CACHE_WRITE_ON_CHANGE, a re-check), or fresh when CACHE is "".
Answer query(const std::string &root, const std::string &include, const std::string &cache,
          unsigned flags = 0)
{
  Pattern p = compile(include);
  const TrawlPattern *list[] = {p.get()};
  TrawlWalkOptions o;
  trawl_walk_options_init(&o);
  o.ignore = kIgnore;
  TrawlQuery tq{};
  tq.root = root.c_str();
  tq.includes = list;
  tq.n_includes = 1;
  tq.options = &o;
  Plan plan(trawl_plan_new());
  trawl_plan_add(plan.get(), &tq);
  Answer r;
  GError *error = nullptr;
  if (cache.empty()) {
    EXPECT_TRUE(trawl_plan_run(plan.get(), &error));
  } else {
    TrawlCacheReport rep;
    EXPECT_TRUE(trawl_cache_run(plan.get(), cache.c_str(), flags, &rep, &error));
    r.changed = rep.changed;
    r.trusted = rep.trusted;
    trawl_cache_report_clear(&rep);
  }
  if (error) {
    ADD_FAILURE() << error->message;
    g_error_free(error);
  }
  r.results = strings_of(trawl_plan_results(plan.get(), 0));
  return r;
}

// A row: files to make below the root (path, content; ".git/..." paths go
// below the work tree's top), the change, made with the top's and the
// root's paths.
struct Row {
  const char *name;
  std::vector<std::pair<std::string, std::string>> before;
  std::function<void(const std::string &top, const std::string &root)> change;
  const char *include = "**/*";
};

const Row kRows[] = {
  {"GitignoreBelowEditedInPlace",
   {{"src/a.c", ""}, {"src/b.o", ""}, {"src/.gitignore", "*.zzz\n"}},
   [](const std::string &, const std::string &root) {
     append(root + "/src/.gitignore", "*.o\n");
   }},
  {"GitignoreBelowReplacedByRename",
   {{"src/a.c", ""}, {"src/b.o", ""}, {"src/.gitignore", "*.zzz\n"}},
   [](const std::string &, const std::string &root) {
     spit(root + "/src/.gitignore.tmp", "*.zzz\n*.o\n");
     rename((root + "/src/.gitignore.tmp").c_str(), (root + "/src/.gitignore").c_str());
   }},
  {"GitignoreCreatedInARecordedDirectory",
   {{"src/a.c", ""}, {"src/build/e", ""}, {"src/build/f", ""}},
   [](const std::string &, const std::string &root) {
     spit(root + "/src/build/.gitignore", "e\n");
   }},
  {"GitignoreBelowDeleted",
   {{"src/a.c", ""}, {"src/b.o", ""}, {"src/.gitignore", "*.o\n"}},
   [](const std::string &, const std::string &root) {
     unlink((root + "/src/.gitignore").c_str());
   }},
  {"GitignoreBelowUnchangedNewFileDeeper",
   {{"src/a.c", ""}, {"src/sub/a.c", ""}, {"src/.gitignore", "*.o\n"}},
   [](const std::string &, const std::string &root) {
     spit(root + "/src/sub/x.o", "");
     spit(root + "/src/sub/y.c", "");
   }},
  {"InfoExcludeNewFileBelow",
   {{"src/a.c", ""}, {".git/info/exclude", "*.o\n"}},
   [](const std::string &, const std::string &root) {
     spit(root + "/src/new.o", "");
     spit(root + "/src/new.c", "");
   }},
  {"ExcludesFileNewFileBelow",
   {{"src/a.c", ""}},
   [](const std::string &, const std::string &root) {
     spit(root + "/src/new.obj", "");
     spit(root + "/src/new.c", "");
   }},
  {"DotIgnoreBelowEditedInPlace",
   {{"src/a.c", ""}, {"src/b.o", ""}, {"src/.ignore", "*.zzz\n"}},
   [](const std::string &, const std::string &root) {
     append(root + "/src/.ignore", "*.o\n");
   }},
  {"RootGitignoreEditedInPlace",
   {{"src/a.c", ""}, {"src/b.o", ""}, {".gitignore", "*.zzz\n"}},
   [](const std::string &, const std::string &root) {
     append(root + "/.gitignore", "*.o\n");
   }},
  {"GitignoreAboveTheRootEditedInPlace",
   {{"src/a.c", ""}, {"src/b.o", ""}},
   [](const std::string &top, const std::string &) {
     append(top + "/.gitignore", "*.o\n");
   }},
  // A nested repository's rules come from inside its .git: its sources are
  // stamped with the directory holding it (issue 24).
  {"NestedRepositoryInfoExcludeEditedInPlace",
   {{"sub/a.c", ""}, {"sub/b.o", ""}, {"sub/.git/HEAD", "ref: refs/heads/main\n"},
    {"sub/.git/objects/.keep", ""}, {"sub/.git/refs/.keep", ""},
    {"sub/.git/info/exclude", "*.zzz\n"}},
   [](const std::string &, const std::string &root) {
     append(root + "/sub/.git/info/exclude", "*.o\n");
   }},
  {"LiteralStartGitignoreEditedInPlace",
   {{"src/lib/a.c", ""}, {"src/lib/b.o", ""}, {"src/lib/.gitignore", "*.zzz\n"}},
   [](const std::string &, const std::string &root) {
     append(root + "/src/lib/.gitignore", "*.o\n");
   },
   "src/lib/**"},
};

enum Top { TOP_AT_ROOT, TOP_ABOVE };
enum Order { CHECK_FIRST, RUN_FIRST };

using Param = std::tuple<size_t, Top, Order>;

class CacheWorkTree : public ::testing::TestWithParam<Param> {};

TEST_P(CacheWorkTree, ChangeIsSeen)
{
  const Row &row = kRows[std::get<0>(GetParam())];
  const Top where = std::get<1>(GetParam());
  const Order order = std::get<2>(GetParam());
  TempDir tmp;
  GitEnv git(tmp);
  spit(tmp / "excludes", "*.obj\n");
  const std::string top = tmp / "top";
  make_dir(top);
  ASSERT_EQ(system(("git init -q '" + top + "'").c_str()), 0);
  const std::string root = where == TOP_AT_ROOT ? top : top + "/w";
  if (where == TOP_ABOVE)
    make_dir(root);
  for (const auto &[path, content] : row.before) {
    const std::string base = path.rfind(".git/", 0) == 0 ? top : root;
    add_file(base, path);
    spit(base + "/" + path, content);
  }
  const std::string cache = tmp / "c.cache";
  settle();
  const Answer primed = query(root, row.include, cache);
  EXPECT_EQ(primed.results, query(root, row.include, "").results);
  settle();
  row.change(top, root);
  settle();
  const std::vector<std::string> now = query(root, row.include, "").results;
  ASSERT_NE(now, primed.results) << "the change makes no difference: the row tests nothing";

  if (order == CHECK_FIRST) {
    const Answer check = query(root, row.include, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
    EXPECT_TRUE(check.trusted);
    EXPECT_TRUE(check.changed) << "the re-check says unchanged";
    EXPECT_EQ(check.results, now);
  } else {
    const Answer cached = query(root, row.include, cache);
    EXPECT_TRUE(cached.trusted);
    EXPECT_TRUE(cached.changed);
    EXPECT_EQ(cached.results, now) << "the cached run answers from a stale record";
  }
  // And from then on: answered as a fresh walk, and unchanged.
  settle();
  const Answer cached = query(root, row.include, cache);
  EXPECT_EQ(cached.results, now);
  const Answer check = query(root, row.include, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
  EXPECT_FALSE(check.changed);
  EXPECT_EQ(check.results, now);
}

std::string param_name(const ::testing::TestParamInfo<Param> &info)
{
  return std::string(kRows[std::get<0>(info.param)].name) +
         (std::get<1>(info.param) == TOP_AT_ROOT ? "_TopAtRoot" : "_TopAbove") +
         (std::get<2>(info.param) == CHECK_FIRST ? "_CheckFirst" : "_RunFirst");
}

INSTANTIATE_TEST_SUITE_P(Rows, CacheWorkTree,
                         ::testing::Combine(::testing::Range<size_t>(0, std::size(kRows)),
                                            ::testing::Values(TOP_AT_ROOT, TOP_ABOVE),
                                            ::testing::Values(CHECK_FIRST, RUN_FIRST)),
                         param_name);

} // namespace
