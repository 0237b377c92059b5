// Shared walks (trawl/plan.h): many queries, one traversal per root.
//
// The property: every query of a plan gets exactly what a walker configured
// with that query alone collects, while the shared walk reads each directory
// at most once and only directories some query's own walk reads (or the
// directories on the way to a start directory below another query's).
// Checked on the generated trees and queries of the reference test, through
// the public API and through a shared walker on the parallel route; then
// the grouping rules and the cases that make sharing subtle, by hand.
#include "walk_gen.hpp"
#include "walk_util.hpp"

#include "trawl/plan.h"

using namespace walktest;
using namespace walkgen;

namespace {

std::vector<const TrawlPattern *> raw(const std::vector<Pattern> &v)
{
  std::vector<const TrawlPattern *> out;
  for (const auto &p : v)
    out.push_back(p.get());
  return out;
}

// Add Q (root ROOT) to PLAN; the pattern arrays are copied by the plan.
size_t add(TrawlPlan *plan, const Query &q, const std::string &root)
{
  auto inc = raw(q.inc), exc = raw(q.exc);
  TrawlQuery tq = {};
  tq.root = root.c_str();
  tq.includes = inc.data();
  tq.n_includes = inc.size();
  tq.excludes = exc.data();
  tq.n_excludes = exc.size();
  tq.options = &q.opt;
  return trawl_plan_add(plan, &tq);
}

std::vector<std::string> results(const TrawlPlan *plan, size_t q)
{
  const GPtrArray *paths = trawl_plan_results(plan, q);
  EXPECT_NE(paths, nullptr);
  return strings_of(paths);
}

Query make(std::vector<std::string> includes, std::vector<std::string> excludes = {})
{
  Query q;
  q.includes = std::move(includes);
  q.excludes = std::move(excludes);
  q.opt.threads = 1;
  q.compile_all();
  return q;
}

// The queries, moved into a vector (a Query owns its compiled patterns).
template <typename... Q> std::vector<Query> group(Q &&...q)
{
  std::vector<Query> v;
  (v.push_back(std::move(q)), ...);
  return v;
}

// A shared walker over QUERIES (all on ROOT), run sorted; per query its
// results, and the directories read (in LOG).
std::vector<std::vector<std::string>> shared_walk(const std::vector<Query> &queries,
                                                  const std::string &root, unsigned threads,
                                                  HookLog &log, TrawlWalkStats *stats = nullptr)
{
  TrawlWalkOptions opt = queries[0].opt;
  opt.threads = threads;
  Walker w(trawl_walker_new_shared(&opt));
  trawl_walker_add_root(w.get(), root.c_str());
  if (threads > 1)
    trawl_walker_set_helper_floor(w.get(), 0);
  trawl_walker_set_open_hook(w.get(), record_open, &log);
  std::vector<std::vector<const TrawlPattern *>> keep;
  keep.reserve(2 * queries.size()); // the references below stay valid
  for (const auto &q : queries) {
    keep.push_back(raw(q.inc));
    auto &inc = keep.back();
    keep.push_back(raw(q.exc));
    auto &exc = keep.back();
    trawl_walker_add_query(w.get(), inc.data(), inc.size(), exc.data(), exc.size(), &q.opt);
  }
  std::vector<std::vector<std::string>> out(queries.size());
  auto fn = [](const TrawlEntry *e, void *data) -> bool {
    auto *o = static_cast<std::vector<std::vector<std::string>> *>(data);
    EXPECT_NE(e->queries, 0u);
    for (size_t i = 0; i < o->size(); i++)
      if (e->queries & (UINT64_C(1) << i))
        (*o)[i].push_back(std::string(e->path, e->len));
    EXPECT_EQ(e->queries >> o->size(), 0u) << "a bit beyond the queries";
    return true;
  };
  GError *error = nullptr;
  EXPECT_TRUE(trawl_walker_run_sorted(w.get(), fn, &out, &error));
  if (error)
    g_error_free(error);
  if (stats)
    trawl_walker_stats(w.get(), stats);
  return out;
}

std::set<std::string> ancestors_of(const std::set<std::string> &dirs)
{
  std::set<std::string> out;
  for (const auto &d : dirs)
    for (size_t i = d.find('/'); i != std::string::npos; i = d.find('/', i + 1))
      out.insert(d.substr(0, i));
  return out;
}

// Every query of QUERIES in one shared walk (public plan, serial; shared
// walker, four threads from the first directory) against separate walks.
void check_group(const std::vector<Query> &queries, const std::string &root,
                 const std::string &what)
{
  std::vector<std::vector<std::string>> want;
  std::set<std::string> separate_dirs;
  for (const auto &q : queries) {
    Outcome o = walk_collect(q, {root});
    EXPECT_TRUE(o.ok) << what;
    want.push_back(o.paths);
    separate_dirs.insert(o.opened.begin(), o.opened.end());
  }

  Plan plan(trawl_plan_new());
  for (const auto &q : queries)
    add(plan.get(), q, root);
  GError *error = nullptr;
  EXPECT_TRUE(trawl_plan_run(plan.get(), &error)) << what;
  if (error)
    g_error_free(error);
  EXPECT_EQ(trawl_plan_groups(plan.get()), (queries.size() + 63) / 64) << what;
  for (size_t i = 0; i < queries.size(); i++) {
    EXPECT_EQ(trawl_plan_error(plan.get(), i), nullptr);
    auto got = results(plan.get(), i);
    EXPECT_EQ(got, want[i]) << what << "\nquery " << i << ": " << queries[i].describe() << "\n"
                            << diff(got, want[i]);
  }

  // The same plan run again handing each result over (trawl_plan_run_each):
  // the same lists, each query's in order, and nothing kept.
  std::vector<std::vector<std::string>> each(queries.size());
  auto collect = [](size_t q, const char *path, size_t len, void *data) {
    auto *o = static_cast<std::vector<std::vector<std::string>> *>(data);
    EXPECT_EQ(path[len], '\0');
    (*o).at(q).push_back(std::string(path, len));
  };
  EXPECT_TRUE(trawl_plan_run_each(plan.get(), collect, &each, nullptr)) << what;
  for (size_t i = 0; i < queries.size(); i++) {
    EXPECT_EQ(each[i], want[i]) << what << " (run_each)\nquery " << i << ": "
                                << queries[i].describe() << "\n" << diff(each[i], want[i]);
    EXPECT_TRUE(results(plan.get(), i).empty()) << what << ": run_each kept results";
  }

  if (queries.size() > 64)
    return;
  for (unsigned threads : {1u, 4u}) {
    HookLog log;
    auto got = shared_walk(queries, root, threads, log);
    for (size_t i = 0; i < queries.size(); i++)
      EXPECT_EQ(got[i], want[i]) << what << " threads " << threads << "\nquery " << i << ": "
                                 << queries[i].describe() << "\n"
                                 << diff(got[i], want[i]);
    std::set<std::string> read;
    for (const auto &d : log.opened) {
      EXPECT_TRUE(read.insert(d).second) << what << ": " << show(d) << " read twice";
    }
    // What the shared walk reads: what the separate walks read, and the
    // directories on the way to a start directory below another query's.
    const auto way = ancestors_of(separate_dirs);
    for (const auto &d : read)
      EXPECT_TRUE(separate_dirs.count(d) || way.count(d))
          << what << ": read " << show(d) << ", which no query's own walk reads";
    for (const auto &d : separate_dirs)
      EXPECT_TRUE(read.count(d)) << what << ": never read " << show(d);
  }
}

class GeneratedPlan : public ::testing::TestWithParam<uint32_t> {};

TEST_P(GeneratedPlan, EqualsSeparateWalks)
{
  const uint32_t seed = GetParam();
  TempDir tmp;
  Rng rng(seed);
  generate_dir(rng, tmp.path(), "", 0);
  const auto entries = scan(tmp.path());
  const TreeFacts facts = facts_of(entries);
  for (int round = 0; round < 12 && !HasFailure(); round++) {
    std::vector<Query> queries(2 + rng.below(12));
    for (auto &q : queries) {
      gen_query(rng, facts, q);
      q.opt.threads = 1;
    }
    check_group(queries, tmp.path(),
                "seed " + std::to_string(seed) + " round " + std::to_string(round));
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, GeneratedPlan, ::testing::Values(1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u));

// Pattern sets and the prune index (from 8 patterns on) against trying
// every pattern: each generated query walked with both forced, and groups
// of queries (whose lists add up) the same way. The index may leave closed
// a directory the loop opens (one no include's literal start directory
// leads to), never the other way round.
class GeneratedSets : public ::testing::TestWithParam<uint32_t> {};

TEST_P(GeneratedSets, SameAnswersAsLoops)
{
  const uint32_t seed = GetParam();
  TempDir tmp;
  Rng rng(seed);
  generate_dir(rng, tmp.path(), "", 0);
  const TreeFacts facts = facts_of(scan(tmp.path()));
  for (int round = 0; round < 40 && !HasFailure(); round++) {
    Query loop, set;
    gen_query(rng, facts, loop);
    // More patterns than the generator's few: the sets see real lists.
    unsigned extra = rng.below(12);
    for (unsigned i = 0; i < extra; i++) {
      std::string t = gen_include(rng, facts);
      auto &list = rng.chance(3) ? loop.excludes : loop.includes;
      if (loop.dialect != TRAWL_DIALECT_TRAWL && t.find('{') != std::string::npos)
        continue;
      TrawlPattern *p = trawl_pattern_compile(t.data(), t.size(), loop.dialect, loop.flags, nullptr);
      if (p)
        list.push_back(t);
      trawl_pattern_free(p);
    }
    set.includes = loop.includes;
    set.excludes = loop.excludes;
    set.flags = loop.flags;
    set.dialect = loop.dialect;
    set.opt = loop.opt;
    loop.patset_min = UINT_MAX;
    set.patset_min = 1;
    loop.compile_all();
    set.compile_all();
    Outcome a = walk_collect(loop, {tmp.path()});
    Outcome b = walk_collect(set, {tmp.path()});
    EXPECT_EQ(b.paths, a.paths) << loop.describe() << "\n" << diff(b.paths, a.paths);
    const auto opened_loop = as_set(a.opened);
    for (const auto &d : b.opened)
      EXPECT_TRUE(opened_loop.count(d)) << loop.describe() << ": the index opened " << show(d);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, GeneratedSets, ::testing::Values(1u, 2u, 3u, 4u, 5u, 6u));

TEST(Plan, FourExtensionsOneWalk)
{
  TempDir tmp;
  for (const char *f : {"a.ts", "b.js", "c.md", "d.txt", "e.c", "src/f.ts", "src/g.md",
                        "src/deep/h.txt", "docs/i.js"})
    add_file(tmp.path(), f);
  auto qs = group(make({"**/*.ts"}), make({"**/*.js"}), make({"**/*.md"}), make({"**/*.txt"}));
  Plan plan(trawl_plan_new());
  for (const auto &q : qs)
    add(plan.get(), q, tmp.path());
  ASSERT_TRUE(trawl_plan_run(plan.get(), nullptr));
  EXPECT_EQ(trawl_plan_groups(plan.get()), 1u);
  EXPECT_EQ(results(plan.get(), 0), (std::vector<std::string>{"a.ts", "src/f.ts"}));
  EXPECT_EQ(results(plan.get(), 1), (std::vector<std::string>{"b.js", "docs/i.js"}));
  EXPECT_EQ(results(plan.get(), 2), (std::vector<std::string>{"c.md", "src/g.md"}));
  EXPECT_EQ(results(plan.get(), 3), (std::vector<std::string>{"d.txt", "src/deep/h.txt"}));
  TrawlWalkStats st;
  trawl_plan_stats(plan.get(), 0, &st);
  EXPECT_EQ(st.dirs_opened, 4u); // the root, src, src/deep, docs: once each
  check_group(qs, tmp.path(), "four extensions");
}

// The structs a caller allocates end in reserved slots that later fields
// take (docs/library.md, "Structs a caller allocates"): the library writes
// them as zero, whatever the caller's memory held, so a program built against
// a later header reads a later field as 0 from this library; and it never
// reads them from a caller, so a later field set there changes nothing here.
template <typename T> bool reserved_zero(const T &s)
{
  for (uint64_t r : s.reserved)
    if (r != 0)
      return false;
  return true;
}

TEST(Abi, ReservedSlotsWrittenAsZeroAndNeverRead)
{
  TempDir tmp;
  for (const char *f : {"a.c", "src/b.c", "src/c.h"})
    add_file(tmp.path(), f);
  TrawlWalkOptions o;
  memset(&o, 0xff, sizeof o);
  trawl_walk_options_init(&o);
  EXPECT_TRUE(reserved_zero(o));
  o.threads = 1;
  Pattern c = compile("**/*.c");
  const TrawlPattern *inc[] = {c.get()};

  // A query and options whose reserved slots hold garbage answer as zeroed ones.
  TrawlWalkOptions dirty = o;
  memset(dirty.reserved, 0xa5, sizeof dirty.reserved);
  Plan plan(trawl_plan_new());
  for (const TrawlWalkOptions *opt : {&o, &dirty}) {
    TrawlQuery q{};
    q.root = tmp.path().c_str();
    q.includes = inc;
    q.n_includes = 1;
    q.options = opt;
    if (opt == &dirty)
      memset(q.reserved, 0x5a, sizeof q.reserved);
    trawl_plan_add(plan.get(), &q);
  }
  ASSERT_TRUE(trawl_plan_run(plan.get(), nullptr));
  EXPECT_EQ(results(plan.get(), 0), (std::vector<std::string>{"a.c", "src/b.c"}));
  EXPECT_EQ(results(plan.get(), 1), results(plan.get(), 0));
  EXPECT_EQ(trawl_plan_groups(plan.get()), 1u) << "reserved slots told the queries apart";

  TrawlWalkStats st;
  memset(&st, 0xff, sizeof st);
  trawl_plan_stats(plan.get(), 0, &st);
  EXPECT_TRUE(reserved_zero(st));
  EXPECT_EQ(st.results, 2u);

  Walker w(trawl_walker_new(&dirty));
  trawl_walker_add_root(w.get(), tmp.path().c_str());
  trawl_walker_add_include(w.get(), c.get());
  GPtrArray *paths = trawl_walker_collect(w.get(), nullptr);
  ASSERT_NE(paths, nullptr);
  EXPECT_EQ(strings_of(paths), (std::vector<std::string>{"a.c", "src/b.c"}));
  g_ptr_array_unref(paths);
  memset(&st, 0xff, sizeof st);
  trawl_walker_stats(w.get(), &st);
  EXPECT_TRUE(reserved_zero(st));
  EXPECT_EQ(st.results, 2u);

  TrawlExplanation e;
  memset(&e, 0xff, sizeof e);
  ASSERT_TRUE(trawl_walker_explain(w.get(), "src/c.h", &e, nullptr));
  EXPECT_TRUE(reserved_zero(e));
  EXPECT_EQ(e.reason, TRAWL_EXPLAIN_NOT_INCLUDED);
  trawl_explanation_clear(&e);
}

TEST(Plan, OneQuerysExcludeDoesNotCloseAnothersDirectory)
{
  TempDir tmp;
  for (const char *f : {"a.c", "build/gen.c", "build/sub/x.c", "node_modules/m/i.js", "src/b.c"})
    add_file(tmp.path(), f);
  auto qs = group(make({"**/*.c"}, {"build/**", "**/node_modules/**"}), make({"build/**/*.c"}),
                  make({"**/*.js"}));
  HookLog log;
  auto got = shared_walk(qs, tmp.path(), 1, log);
  EXPECT_EQ(got[0], (std::vector<std::string>{"a.c", "src/b.c"}));
  EXPECT_EQ(got[1], (std::vector<std::string>{"build/gen.c", "build/sub/x.c"}));
  EXPECT_EQ(got[2], (std::vector<std::string>{"node_modules/m/i.js"}));
  check_group(qs, tmp.path(), "exclude of one, directory of another");
}

TEST(Plan, StartDirectoryBelowAnotherQuerys)
{
  TempDir tmp;
  for (const char *f : {"src/a.c", "src/x/y.c", "src/x/deep/z.c", "src/x/deep/more/w.c",
                        "other/q.c"})
    add_file(tmp.path(), f);
  // src/*.c never opens src/x; src/x/deep/** starts below src: the shared
  // walk passes through src/x for it.
  auto qs = group(make({"src/*.c"}), make({"src/x/deep/**"}));
  HookLog log;
  auto got = shared_walk(qs, tmp.path(), 1, log);
  EXPECT_EQ(got[0], (std::vector<std::string>{"src/a.c"}));
  EXPECT_EQ(got[1], (std::vector<std::string>{"src/x/deep/more/w.c", "src/x/deep/z.c"}));
  EXPECT_EQ(as_set(log.opened),
            (std::set<std::string>{"src", "src/x", "src/x/deep", "src/x/deep/more"}));
  check_group(qs, tmp.path(), "nested start");
}

TEST(Plan, StartDirectoryThroughAHiddenOne)
{
  TempDir tmp;
  for (const char *f : {"a.c", ".cfg/x/b.c", ".cfg/c.c", ".cfg/x/.h/d.c"})
    add_file(tmp.path(), f);
  // The first query does not see .cfg; the second starts in .cfg/x.
  auto qs = group(make({"**/*.c"}), make({".cfg/x/*.c"}));
  HookLog log;
  auto got = shared_walk(qs, tmp.path(), 1, log);
  EXPECT_EQ(got[0], (std::vector<std::string>{"a.c"}));
  EXPECT_EQ(got[1], (std::vector<std::string>{".cfg/x/b.c"}));
  check_group(qs, tmp.path(), "nested start through a hidden directory");
}

TEST(Plan, OptionsDifferWithinAGroup)
{
  TempDir tmp;
  for (const char *f : {"a.c", ".h/b.c", "d1/d2/d3/c.c", "d1/e.c"})
    add_file(tmp.path(), f);
  Query hidden = make({"**/*.c"});
  hidden.opt.hidden = true;
  Query shallow = make({"**/*.c"});
  shallow.opt.max_depth = 2;
  Query dirs = make({"**"});
  dirs.opt.types = TRAWL_ENTRY_DIR;
  Query plain = make({"**/*.c"});
  auto qs = group(std::move(hidden), std::move(shallow), std::move(dirs), std::move(plain));
  HookLog log;
  auto got = shared_walk(qs, tmp.path(), 1, log);
  EXPECT_EQ(got[0], (std::vector<std::string>{".h/b.c", "a.c", "d1/d2/d3/c.c", "d1/e.c"}));
  EXPECT_EQ(got[1], (std::vector<std::string>{"a.c", "d1/e.c"}));
  EXPECT_EQ(got[2], (std::vector<std::string>{"d1", "d1/d2", "d1/d2/d3"}));
  EXPECT_EQ(got[3], (std::vector<std::string>{"a.c", "d1/d2/d3/c.c", "d1/e.c"}));
  check_group(qs, tmp.path(), "options");
}

TEST(Plan, GroupsByRootAndTraversalPolicy)
{
  TempDir tmp;
  add_file(tmp.path(), "a/x.c");
  add_file(tmp.path(), "b/y.c");
  Query q = make({"**/*.c"});
  Query no_ignore = make({"**/*.c"});
  no_ignore.opt.ignore = 0;
  Query follow = make({"**/*.c"});
  follow.opt.follow = true;
  Plan plan(trawl_plan_new());
  size_t q0 = add(plan.get(), q, tmp.path());
  size_t q1 = add(plan.get(), q, tmp.path() + "/a/..");   // the same directory
  size_t q2 = add(plan.get(), q, tmp.path() + "/a");      // another root
  size_t q3 = add(plan.get(), no_ignore, tmp.path());     // another ignore policy
  size_t q4 = add(plan.get(), follow, tmp.path() + "/."); // another link policy
  size_t q5 = add(plan.get(), no_ignore, tmp.path() + "/"); // with q3
  ASSERT_TRUE(trawl_plan_run(plan.get(), nullptr));
  EXPECT_EQ(trawl_plan_groups(plan.get()), 4u);
  EXPECT_EQ(trawl_plan_group(plan.get(), q0), trawl_plan_group(plan.get(), q1));
  EXPECT_NE(trawl_plan_group(plan.get(), q0), trawl_plan_group(plan.get(), q2));
  EXPECT_NE(trawl_plan_group(plan.get(), q0), trawl_plan_group(plan.get(), q3));
  EXPECT_NE(trawl_plan_group(plan.get(), q0), trawl_plan_group(plan.get(), q4));
  EXPECT_EQ(trawl_plan_group(plan.get(), q3), trawl_plan_group(plan.get(), q5));
  const std::vector<std::string> both = {"a/x.c", "b/y.c"};
  for (size_t i : {q0, q1, q3, q4, q5})
    EXPECT_EQ(results(plan.get(), i), both) << "query " << i;
  EXPECT_EQ(results(plan.get(), q2), std::vector<std::string>{"x.c"});
}

TEST(Plan, MissingRootFailsOnlyItsQuery)
{
  TempDir tmp;
  add_file(tmp.path(), "a.c");
  Query q = make({"**/*.c"});
  Plan plan(trawl_plan_new());
  add(plan.get(), q, tmp.path());
  add(plan.get(), q, tmp.path() + "/missing");
  add(plan.get(), q, tmp.path() + "/a.c"); // not a directory
  GError *error = nullptr;
  EXPECT_FALSE(trawl_plan_run(plan.get(), &error));
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->code, TRAWL_WALK_ERROR_ROOT);
  EXPECT_NE(std::string(error->message).find("missing"), std::string::npos) << error->message;
  g_error_free(error);
  EXPECT_EQ(trawl_plan_error(plan.get(), 0), nullptr);
  EXPECT_EQ(results(plan.get(), 0), std::vector<std::string>{"a.c"});
  for (size_t i : {1u, 2u}) {
    ASSERT_NE(trawl_plan_error(plan.get(), i), nullptr);
    EXPECT_TRUE(results(plan.get(), i).empty());
    EXPECT_EQ(trawl_plan_problems(plan.get(), i)->len, 0u);
  }
  EXPECT_EQ(trawl_plan_groups(plan.get()), 1u);
}

TEST(Plan, MoreThan64QueriesSplit)
{
  TempDir tmp;
  std::vector<Query> qs;
  for (int i = 0; i < 70; i++) {
    add_file(tmp.path(), "d" + std::to_string(i % 7) + "/f" + std::to_string(i) + ".x" +
                             std::to_string(i));
    qs.push_back(make({"**/*.x" + std::to_string(i)}));
  }
  check_group(qs, tmp.path(), "70 queries");
  Plan plan(trawl_plan_new());
  for (const auto &q : qs)
    add(plan.get(), q, tmp.path());
  ASSERT_TRUE(trawl_plan_run(plan.get(), nullptr));
  for (size_t i = 0; i < qs.size(); i++) {
    EXPECT_EQ(results(plan.get(), i).size(), 1u);
    EXPECT_EQ(trawl_plan_group(plan.get(), i), i / 64);
  }
}

TEST(Plan, RunAgainReplacesResults)
{
  TempDir tmp;
  add_file(tmp.path(), "a.c");
  Query q = make({"**/*.c"});
  Plan plan(trawl_plan_new());
  add(plan.get(), q, tmp.path());
  ASSERT_TRUE(trawl_plan_run(plan.get(), nullptr));
  EXPECT_EQ(results(plan.get(), 0), std::vector<std::string>{"a.c"});
  add_file(tmp.path(), "b.c");
  ASSERT_TRUE(trawl_plan_run(plan.get(), nullptr));
  EXPECT_EQ(results(plan.get(), 0), (std::vector<std::string>{"a.c", "b.c"}));
}

TEST(Plan, ManyPatternsPerQueryUseTheSet)
{
  // Past PATSET_MIN patterns the lists are looked up through a pattern
  // set; the answers must not change (also with several queries at once).
  TempDir tmp;
  std::vector<std::string> many, every;
  for (int i = 0; i < 40; i++) {
    add_file(tmp.path(), "d" + std::to_string(i % 5) + "/n" + std::to_string(i) + ".e" +
                             std::to_string(i % 13));
    many.push_back("**/*.e" + std::to_string(i));
    every.push_back("d" + std::to_string(i % 5) + "/n" + std::to_string(i) + ".e*");
  }
  std::vector<std::string> excl = {"**/n1.*", "**/n2*", "d3/**", "**/*.e7", "d4/n4.e4",
                                   "**/n3?.*", "**/d0/n0*", "**/*9*", "**/none"};
  auto all = [&] { return group(make(many), make(every, excl), make({"**"}, excl), make(many, excl)); };
  for (auto &q : all()) {
    const std::string what = "alone: " + q.describe();
    check_group(group(std::move(q)), tmp.path(), what);
  }
  check_group(all(), tmp.path(), "together");
}

} // namespace
