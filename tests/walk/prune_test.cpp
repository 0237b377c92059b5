// Pruning: exactly which directories a query reads, as the private open hook
// records them (issue 3: a deterministic test per pruning rule, never a
// timing). Every case runs serial and with four threads, with both readers,
// and must read the same set each time; the counters must agree with the
// hook (dirs_opened), with the results (results) and with the listings of
// the directories read (entries_seen).
#include "walk_util.hpp"

using namespace walktest;

namespace {

// The fixture tree: sources, packages with a nested node_modules, a
// top-level node_modules and build output, docs, hidden directories.
class Prune : public ::testing::Test {
protected:
  static void SetUpTestSuite()
  {
    tmp_ = new TempDir();
    for (const char *f : {
           "src/a.ts", "src/x/b.ts", "src/x/test/c.c", "src/x/other/d.c", "src/x/other/deep/g.c",
           "src/y/test/e.c", "src/y/test/deep/f.c", "src/y/test/deep/f.ts",
           "packages/p/q.ts", "packages/p/node_modules/m/z.ts", "packages/r/s/t.ts",
           "node_modules/lib/n.ts", "node_modules/lib/sub/n2.ts",
           "build/out/o.ts", "build/gen/p.c",
           "docs/readme.md", "docs/api/index.md",
           ".github/workflows/ci.yml", ".github/x.yml", ".github/.hidden-in/y.yml",
           ".hidden/h.ts", ".hidden/in/h2.ts",
           "README.md", "top.ts",
         })
      add_file(tmp_->path(), f);
  }
  static void TearDownTestSuite()
  {
    delete tmp_;
    tmp_ = nullptr;
  }

  struct Expect {
    std::set<std::string> opened;
    std::vector<std::string> results;
  };

  // Run the query on every route; check the opened set and the results.
  static void expect_walk(Query &q, const Expect &want)
  {
    for (const Route &route : kRoutes) {
      route.apply(q);
      q.compile_all();
      const std::string what = std::string(route.name) + " " + q.describe();
      for (int mode = 0; mode < 2; mode++) {
        Outcome o = mode == 0 ? walk_collect(q, {tmp_->path()}) : walk_run(q, {tmp_->path()});
        const std::string how = what + (mode == 0 ? " (collect)" : " (run)");
        ASSERT_TRUE(o.ok) << how;
        EXPECT_EQ(as_set(o.opened), want.opened)
          << how << "\nread: " << show(o.opened) << "\nwanted: " << show(want.opened);
        EXPECT_EQ(o.paths, want.results) << how << "\n" << diff(o.paths, want.results);
        EXPECT_TRUE(o.problems.empty()) << how;
        check_counters(o, how);
        uint64_t listed = 0;
        for (const auto &d : o.opened)
          listed += listing_size(tmp_->path(), d);
        EXPECT_EQ(o.stats.entries_seen, listed) << how << ": entries_seen is not the sum of "
                                                         "the listings read";
      }
    }
  }

  static TempDir *tmp_;
};

TempDir *Prune::tmp_ = nullptr;

// Rule 1: literal roots. Only the subtrees of src and packages are read; the
// root itself is not read (the walk starts at the literal directories).
TEST_F(Prune, LiteralRootsBraces)
{
  Query q;
  q.includes = {"{src,packages}/**/*.ts"};
  expect_walk(q, {{"src", "src/x", "src/x/test", "src/x/other", "src/x/other/deep", "src/y",
                   "src/y/test", "src/y/test/deep", "packages", "packages/p",
                   "packages/p/node_modules", "packages/p/node_modules/m", "packages/r",
                   "packages/r/s"},
                  {"packages/p/node_modules/m/z.ts", "packages/p/q.ts", "packages/r/s/t.ts",
                   "src/a.ts", "src/x/b.ts", "src/y/test/deep/f.ts"}});
}

// Literal roots from several includes; one below another is read once.
TEST_F(Prune, LiteralRootsSeveralIncludes)
{
  Query q;
  q.includes = {"docs/*.md", "src/x/**/*.c", "src/x/test/*.c"};
  expect_walk(q, {{"docs", "src/x", "src/x/test", "src/x/other", "src/x/other/deep"},
                  {"docs/readme.md", "src/x/other/d.c", "src/x/other/deep/g.c", "src/x/test/c.c"}});
}

// A literal root that does not exist: nothing read, nothing found, no problem.
TEST_F(Prune, MissingLiteralRoot)
{
  Query q;
  q.includes = {"nosuch/**/*.c"};
  expect_walk(q, {{}, {}});
}

// Rule 2: a subtree no include can match below stays closed.
TEST_F(Prune, NoMatchBelow)
{
  Query q;
  q.includes = {"src/*/test/*.c"};
  expect_walk(q, {{"src", "src/x", "src/y", "src/x/test", "src/y/test"},
                  {"src/x/test/c.c", "src/y/test/e.c"}});
  TrawlWalkStats st;
  {
    // src/x/other and src/y/test/deep are left closed by the pattern.
    q.opt.threads = 1;
    q.compile_all();
    Outcome o = walk_collect(q, {tmp_->path()});
    st = o.stats;
  }
  EXPECT_EQ(st.dirs_pruned, 2u);
}

// A pattern without a literal root still prunes by depth: "*/*.ts" reads the
// root and its visible children, nothing deeper.
TEST_F(Prune, NoMatchBelowByDepth)
{
  Query q;
  q.includes = {"*/*.ts"};
  expect_walk(q, {{"", "src", "packages", "node_modules", "build", "docs"},
                  {"src/a.ts"}});
}

// Rule 3: covering excludes close their subtrees whatever the includes name.
TEST_F(Prune, CoveringExcludes)
{
  Query q;
  q.includes = {"**/*.ts"};
  q.excludes = {"**/node_modules/**", "build/**"};
  expect_walk(q, {{"", "src", "src/x", "src/x/test", "src/x/other", "src/x/other/deep", "src/y",
                   "src/y/test", "src/y/test/deep", "packages", "packages/p", "packages/r",
                   "packages/r/s", "docs", "docs/api"},
                  {"packages/p/q.ts", "packages/r/s/t.ts", "src/a.ts", "src/x/b.ts",
                   "src/y/test/deep/f.ts", "top.ts"}});
}

TEST_F(Prune, CoveringExcludeBeatsLiteralRoot)
{
  Query q;
  q.includes = {"node_modules/**/*.ts", "packages/**/*.ts"};
  q.excludes = {"**/node_modules/**"};
  expect_walk(q, {{"packages", "packages/p", "packages/r", "packages/r/s"},
                  {"packages/p/q.ts", "packages/r/s/t.ts"}});
}

// An exclude that matches a directory (not only one that covers it) closes it.
TEST_F(Prune, ExcludeMatchingDirectory)
{
  Query q;
  q.includes = {"**/*.c"};
  q.excludes = {"build", "src/*/other", "**/deep"};
  expect_walk(q, {{"", "src", "src/x", "src/x/test", "src/y", "src/y/test", "packages",
                   "packages/p", "packages/p/node_modules", "packages/p/node_modules/m",
                   "packages/r", "packages/r/s", "node_modules", "node_modules/lib",
                   "node_modules/lib/sub", "docs", "docs/api"},
                  {"src/x/test/c.c", "src/y/test/e.c"}});
}

// An exclude that matches an ancestor of a literal root closes it too: the
// literal root must not reopen what the exclude closed.
TEST_F(Prune, ExcludeMatchingAncestorOfLiteralRoot)
{
  Query q;
  q.includes = {"src/x/test/*.c", "src/y/**/*.c"};
  q.excludes = {"src/x", "src/*"};
  expect_walk(q, {{}, {}});
}

// Rule 4: hidden directories stay closed ...
TEST_F(Prune, HiddenClosed)
{
  Query q;
  q.includes = {"**/*.yml"};
  expect_walk(q, {{"", "src", "src/x", "src/x/test", "src/x/other", "src/x/other/deep", "src/y",
                   "src/y/test", "src/y/test/deep", "packages", "packages/p",
                   "packages/p/node_modules", "packages/p/node_modules/m", "packages/r",
                   "packages/r/s", "node_modules", "node_modules/lib", "node_modules/lib/sub",
                   "build", "build/out", "build/gen", "docs", "docs/api"},
                  {}});
}

// ... unless options.hidden ...
TEST_F(Prune, HiddenOption)
{
  Query q;
  q.includes = {".*/**/*.yml"};
  q.opt.hidden = true;
  expect_walk(q, {{"", ".github", ".github/workflows", ".github/.hidden-in", ".hidden",
                   ".hidden/in"},
                  {".github/.hidden-in/y.yml", ".github/workflows/ci.yml", ".github/x.yml"}});
}

// ... or a pattern names the component literally: only that one opens.
TEST_F(Prune, HiddenNamedByPattern)
{
  Query q;
  q.includes = {".github/**/*.yml"};
  expect_walk(q, {{".github", ".github/workflows"},
                  {".github/workflows/ci.yml", ".github/x.yml"}});
}

TEST_F(Prune, HiddenNamedBelowGlobstar)
{
  Query q;
  q.includes = {"**/.github/*.yml"};
  q.excludes = {"src/**", "packages/**", "node_modules/**", "build/**", "docs/**"};
  // .github/workflows may hold ".github/workflows/.github/a.yml": it is read.
  expect_walk(q, {{"", ".github", ".github/workflows"}, {".github/x.yml"}});
}

// A component that starts with a literal '.' names every hidden name it
// matches ('.*' names them all) ...
TEST_F(Prune, HiddenNamedByDotStar)
{
  Query q;
  q.includes = {".*/**/*.yml"};
  expect_walk(q, {{"", ".github", ".github/workflows", ".github/.hidden-in", ".hidden",
                   ".hidden/in"},
                  {".github/.hidden-in/y.yml", ".github/workflows/ci.yml", ".github/x.yml"}});
}

// ... but a class is not a literal '.': "[.]github" names nothing.
TEST_F(Prune, HiddenNotNamedByClass)
{
  Query q;
  q.includes = {"[.]github/**/*.yml"};
  expect_walk(q, {{""}, {}});
}

// Depth: max_depth 2 reads the root and the first level only.
TEST_F(Prune, MaxDepth)
{
  Query q;
  q.opt.max_depth = 2;
  q.opt.types = TRAWL_ENTRY_FILE | TRAWL_ENTRY_DIR;
  expect_walk(q, {{"", "src", "packages", "node_modules", "build", "docs"},
                  {"README.md", "build", "build/gen", "build/out", "docs", "docs/api",
                   "docs/readme.md", "node_modules", "node_modules/lib", "packages",
                   "packages/p", "packages/r", "src", "src/a.ts", "src/x", "src/y", "top.ts"}});
}

// A literal root that is a file, or below one: nothing read, no problem.
TEST_F(Prune, LiteralRootNotADirectory)
{
  Query q;
  q.includes = {"top.ts/*", "README.md/x/**", "src/a.ts/*.c"};
  expect_walk(q, {{}, {}});
}

// A literal root at or below max_depth can hold no result: it is not read.
TEST_F(Prune, MaxDepthBelowLiteralRoot)
{
  Query q;
  q.includes = {"src/x/test/*.c", "docs/**"};
  q.opt.max_depth = 2;
  expect_walk(q, {{"docs"}, {"docs/readme.md"}});
}

// max_depth 0 reports nothing (and need read nothing but the root).
TEST_F(Prune, MaxDepthZero)
{
  for (const Route &route : kRoutes) {
    Query q;
    q.opt.max_depth = 0;
    q.opt.types = TRAWL_ENTRY_FILE | TRAWL_ENTRY_DIR;
    route.apply(q);
    q.compile_all();
    Outcome o = walk_collect(q, {tmp_->path()});
    ASSERT_TRUE(o.ok);
    EXPECT_EQ(o.paths, std::vector<std::string>{}) << route.name;
    EXPECT_LE(o.opened.size(), 1u) << route.name << ": " << show(o.opened);
  }
}

// No include: everything visible is read and reported.
TEST_F(Prune, EverythingVisible)
{
  Query q;
  q.excludes = {"**/node_modules", "build/**", "src/x/**"};
  expect_walk(q, {{"", "src", "src/y", "src/y/test", "src/y/test/deep", "packages", "packages/p",
                   "packages/r", "packages/r/s", "docs", "docs/api"},
                  {"README.md", "docs/api/index.md", "docs/readme.md", "packages/p/q.ts",
                   "packages/r/s/t.ts", "src/a.ts", "src/y/test/deep/f.c", "src/y/test/deep/f.ts",
                   "src/y/test/e.c", "top.ts"}});
}

// A literal root through a link is a link: without follow it is not entered.
TEST_F(Prune, LiteralRootThroughLinkNotFollowed)
{
  TempDir tmp;
  add_file(tmp.path(), "real/sub/a.c");
  make_link("real", tmp / "ln");
  for (const char *pattern : {"ln/*.c", "ln/sub/*.c", "ln/**/*.c"}) {
    Query q;
    q.includes = {pattern};
    for (const Route &route : kRoutes) {
      route.apply(q);
      q.compile_all();
      Outcome o = walk_collect(q, {tmp.path()});
      ASSERT_TRUE(o.ok);
      EXPECT_EQ(o.paths, std::vector<std::string>{})
        << route.name << " " << pattern << ": the walk entered the link 'ln' without follow";
      EXPECT_EQ(o.opened, std::vector<std::string>{}) << route.name << " " << pattern;
    }
  }
}

// Case-insensitive patterns have no case-sensitive literal root: "SRC/**"
// under ICASE finds src/.
TEST_F(Prune, IcaseLiteralRoot)
{
  Query q;
  q.includes = {"SRC/X/*.TS"};
  q.flags = TRAWL_PATTERN_ICASE;
  q.compile_all();
  ASSERT_TRUE(trawl_pattern_match(q.inc[0].get(), "src/x/b.ts", 10));
  for (const Route &route : kRoutes) {
    route.apply(q);
    q.compile_all();
    Outcome o = walk_collect(q, {tmp_->path()});
    ASSERT_TRUE(o.ok);
    EXPECT_EQ(o.paths, std::vector<std::string>{"src/x/b.ts"}) << route.name;
  }
}

} // namespace
