// The walker against an independent reference, on seeded generated trees.
//
// Every tree is built from names that trouble a walker or a printer (spaces,
// newlines, ';', '[', quotes, glob metacharacters, leading dots, bytes that
// are not UTF-8), with links to files, to directories, to ancestors and to
// nothing. Every query (generated includes, excludes and options; one in
// five in the git, bazel or cmake dialect) runs through
// trawl_walker_collect (sorted) and trawl_walker_run (callback, sorted
// here), serial and with four threads (helpers from the first directory),
// with the Linux and the POSIX reader, and must return exactly what the
// reference of walk_util.hpp (nftw plus trawl_pattern_match) selects,
// without reading a directory twice, a directory that is not one (a link),
// or one the rules keep closed.
#include "walk_gen.hpp"
#include "walk_util.hpp"

using namespace walktest;
using namespace walkgen;

namespace {

// Must the walk leave directory DIR closed (hidden and not named, excluded
// or below an excluded directory)?
std::string closed_reason(const Query &q, const std::string &dir)
{
  const auto comps = components(dir);
  std::string prefix;
  for (const auto &c : comps) {
    prefix += (prefix.empty() ? "" : "/") + c;
    if (!q.opt.hidden && c[0] == '.' && !any_match(q.dot_components, c))
      return "hidden";
    if (exclude_closes(q, prefix))
      return "excluded";
  }
  // (Depth: see Prune.MaxDepthBelowLiteralRoot; a literal root deeper than
  // max_depth is a wasted read, not a wrong result.)
  return "";
}

// Run Q over ROOT on every route and both ways; compare with the reference.
// Returns how many of the walks used helper threads.
unsigned check_query(const Query &q, const std::string &root, const std::vector<FsEntry> &entries,
                     const std::set<std::string> &real_dirs)
{
  const auto want = reference(q, entries);
  const auto want_paths = paths_of(want);
  unsigned parallel = 0;
  for (const Route &route : kRoutes) {
    Query rq;
    rq.includes = q.includes;
    rq.excludes = q.excludes;
    rq.flags = q.flags;
    rq.dialect = q.dialect;
    rq.opt = q.opt;
    route.apply(rq);
    rq.compile_all();
    const std::string what = std::string(route.name) + " " + q.describe();

    Outcome c = walk_collect(rq, {root});
    EXPECT_TRUE(c.ok) << what;
    EXPECT_EQ(c.paths, want_paths) << what << " (collect)\n" << diff(c.paths, want_paths);
    EXPECT_TRUE(c.problems.empty()) << what << ": " << c.problems[0].message;
    check_counters(c, what + " (collect)");

    Outcome r = walk_run(rq, {root});
    EXPECT_TRUE(r.ok) << what;
    EXPECT_EQ(r.typed, want) << what << " (run)\n" << diff(r.paths, want_paths);
    EXPECT_TRUE(r.problems.empty()) << what;
    check_counters(r, what + " (run)");

    Outcome s = walk_run(rq, {root}, 0, true);
    EXPECT_TRUE(s.ok) << what;
    EXPECT_EQ(s.typed, want) << what << " (run_sorted)\n" << diff(s.paths, want_paths);
    check_counters(s, what + " (run_sorted)");

    for (const Outcome *o : {&c, &r, &s}) {
      parallel += o->stats.threads_used > 1;
      for (const auto &d : o->opened) {
        if (d.empty())
          continue;
        EXPECT_TRUE(real_dirs.count(d)) << what << ": read " << show(d)
                                        << ", which is not a directory of the tree (a link?)";
        std::string why = closed_reason(q, d);
        EXPECT_EQ(why, "") << what << ": read " << show(d) << ", which must stay closed";
      }
    }
  }
  return parallel;
}

class GeneratedTree : public ::testing::TestWithParam<uint32_t> {};

TEST_P(GeneratedTree, MatchesReference)
{
  const uint32_t seed = GetParam();
  TempDir tmp;
  Rng rng(seed);
  generate_dir(rng, tmp.path(), "", 0);
  const auto entries = scan(tmp.path());
  ASSERT_GT(entries.size(), 50u);
  std::set<std::string> real_dirs;
  for (const auto &e : entries)
    if (e.kind == 'd')
      real_dirs.insert(e.path);
  const TreeFacts facts = facts_of(entries);

  unsigned parallel = 0;
  // A few fixed queries first, then generated ones.
  const std::vector<std::vector<std::string>> fixed = {
    {}, {"**"}, {"**/*.c"}, {"src/**"}, {".github/**/*.yml"}, {"**/.*"},
  };
  for (const auto &inc : fixed) {
    Query q;
    q.includes = inc;
    q.compile_all();
    parallel += check_query(q, tmp.path(), entries, real_dirs);
  }
  for (int i = 0; i < 50 && !HasFailure(); i++) {
    Query q;
    gen_query(rng, facts, q);
    parallel += check_query(q, tmp.path(), entries, real_dirs);
  }
  EXPECT_GT(parallel, 0u) << "no walk of seed " << seed << " took the parallel route";
}

INSTANTIATE_TEST_SUITE_P(Seeds, GeneratedTree, ::testing::Values(1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u));

// Following links: the walker against a reference that follows them too
// (walk_util.hpp's follow_scan), on trees with links to siblings, to
// ancestors (loops) and to nothing.
class GeneratedFollow : public ::testing::TestWithParam<uint32_t> {};

TEST_P(GeneratedFollow, MatchesReference)
{
  const uint32_t seed = GetParam();
  TempDir tmp;
  Rng rng(seed * 7919u);
  // A smaller tree: every followed link to a directory repeats its subtree.
  const std::string root = tmp.path();
  std::vector<std::string> dirs;
  for (const char *d : {"src", "src/core", "src/core/util", "lib", "lib/x", "docs", ".cfg", "pkg/a b"}) {
    make_dirs(root, d);
    dirs.push_back(d);
  }
  const std::set<std::string> dir_set(dirs.begin(), dirs.end());
  for (const auto &d : dirs)
    for (unsigned i = 0, n = 1 + rng.below(3); i < n; i++) {
      std::string f = d + "/" + rng.pick(kFileBases) + rng.pick(kExts);
      if (!dir_set.count(f))
        write_file(root + "/" + f);
    }
  write_file(root + "/top.c");
  // Links: each run draws a few of these.
  const std::pair<const char *, const char *> links[] = {
    {"src/to-lib", "../lib"},        {"lib/x/up", "../.."},     {"src/core/self", "."},
    {"docs/to-core", "../src/core"}, {"pkg/a b/root", "../.."}, {"dangling.c", "nowhere"},
    {"lib/file-link.c", "../top.c"}, {".cfg/to-docs", "../docs"}, {"src/core/util/back", "../.."},
  };
  for (const auto &l : links)
    if (rng.chance(2))
      make_link(l.second, root + "/" + l.first);

  std::vector<std::string> loops;
  const auto entries = follow_scan(root, &loops);
  const TreeFacts facts = facts_of(scan(root));
  for (int i = 0; i < 25 && !HasFailure(); i++) {
    Query q;
    if (i == 0)
      q.compile_all();
    else
      gen_query(rng, facts, q);
    q.opt.follow = true;
    const auto want = reference(q, entries);
    const auto want_paths = paths_of(want);
    for (const Route &route : kRoutes) {
      Query rq;
      rq.includes = q.includes;
      rq.excludes = q.excludes;
      rq.flags = q.flags;
      rq.dialect = q.dialect;
      rq.opt = q.opt;
      route.apply(rq);
      rq.compile_all();
      const std::string what = std::string(route.name) + " " + q.describe();
      Outcome c = walk_collect(rq, {root});
      EXPECT_TRUE(c.ok) << what;
      EXPECT_EQ(c.paths, want_paths) << what << " (collect)\n" << diff(c.paths, want_paths);
      check_counters(c, what);
      Outcome r = walk_run(rq, {root});
      EXPECT_EQ(r.typed, want) << what << " (run)\n" << diff(r.paths, want_paths);
      check_counters(r, what);
      Outcome s = walk_run(rq, {root}, 0, true);
      EXPECT_EQ(s.typed, want) << what << " (run_sorted)\n" << diff(s.paths, want_paths);
      check_counters(s, what);
      for (const auto &p : c.problems)
        EXPECT_EQ(p.code, TRAWL_WALK_ERROR_LOOP) << what << ": " << p.message;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, GeneratedFollow, ::testing::Values(1u, 2u, 3u, 4u));

// Several roots: results carry their root's index; collect merges them;
// collect_entries keeps each path's root, in run_sorted's order.
TEST(MultipleRoots, IndexAndMerge)
{
  TempDir a, b;
  Rng ra(11), rb(12);
  generate_dir(ra, a.path(), "", 0);
  generate_dir(rb, b.path(), "", 0);
  Query q;
  q.includes = {"**/*.c", "**/*.ts"};
  q.compile_all();
  const auto want_a = reference(q, scan(a.path()));
  const auto want_b = reference(q, scan(b.path()));
  std::vector<std::string> merged = paths_of(want_a);
  for (const auto &p : paths_of(want_b))
    merged.push_back(p);
  std::sort(merged.begin(), merged.end());

  for (const Route &route : kRoutes) {
    Query rq;
    rq.includes = q.includes;
    route.apply(rq);
    rq.compile_all();
    Outcome c = walk_collect(rq, {a.path(), b.path()});
    EXPECT_EQ(c.paths, merged) << route.name << "\n" << diff(c.paths, merged);

    {
      Walker w = make_walker(rq, {a.path(), b.path()}, nullptr);
      GPtrArray *entries = trawl_walker_collect_entries(w.get(), nullptr);
      ASSERT_NE(entries, nullptr);
      std::vector<std::pair<std::string, unsigned>> got[2];
      std::vector<unsigned> order;
      for (guint i = 0; i < entries->len; i++) {
        const auto *e = static_cast<const TrawlEntry *>(g_ptr_array_index(entries, i));
        ASSERT_LT(e->root, 2u) << route.name;
        EXPECT_EQ(e->len, strlen(e->path));
        EXPECT_EQ(e->queries, 1u);
        got[e->root].push_back({std::string(e->path, e->len), (unsigned)e->type});
        order.push_back(e->root);
      }
      g_ptr_array_unref(entries);
      EXPECT_TRUE(std::is_sorted(order.begin(), order.end())) << route.name << ": roots interleaved";
      EXPECT_EQ(paths_of(got[0]), paths_of(want_a)) << route.name << ": not root 0's, sorted";
      EXPECT_EQ(got[0], want_a) << route.name;
      EXPECT_EQ(got[1], want_b) << route.name;
    }

    struct PerRoot {
      std::mutex lock;
      std::vector<std::pair<std::string, unsigned>> seen[2];
      bool bad = false;
    } per;
    Walker w = make_walker(rq, {a.path(), b.path()}, nullptr);
    auto fn = [](const TrawlEntry *e, void *data) -> bool {
      auto *p = static_cast<PerRoot *>(data);
      std::lock_guard<std::mutex> guard(p->lock);
      if (e->root > 1)
        p->bad = true;
      else
        p->seen[e->root].push_back({std::string(e->path, e->len), (unsigned)e->type});
      return true;
    };
    ASSERT_TRUE(trawl_walker_run(w.get(), fn, &per, nullptr));
    EXPECT_FALSE(per.bad) << "a root index out of range";
    std::sort(per.seen[0].begin(), per.seen[0].end());
    std::sort(per.seen[1].begin(), per.seen[1].end());
    EXPECT_EQ(per.seen[0], want_a) << route.name;
    EXPECT_EQ(per.seen[1], want_b) << route.name;
  }
}

// The parallel route again and again, with 2 to 8 threads and the default
// count, helpers from the first directory: for ThreadSanitizer, and for
// races that only show once in many runs.
TEST(Parallel, ManyRunsManyThreads)
{
  TempDir tmp;
  Rng rng(99);
  generate_dir(rng, tmp.path(), "", 0);
  const auto entries = scan(tmp.path());
  Query q;
  q.includes = {"**/*.c", "**/*.ts", "{src,lib}/**"};
  q.excludes = {"**/node_modules/**"};
  q.opt.hidden = true;
  q.compile_all();
  const auto want = reference(q, entries);
  const auto want_paths = paths_of(want);
  ASSERT_GT(want.size(), 20u);
  for (int i = 0; i < 40 && !HasFailure(); i++) {
    Query rq;
    rq.includes = q.includes;
    rq.excludes = q.excludes;
    rq.opt.hidden = true;
    rq.opt.threads = i % 8 == 7 ? 0 : 2 + i % 7;
    rq.opt.reader = i % 2 ? TRAWL_READER_POSIX : TRAWL_READER_LINUX;
    rq.helper_floor = 0;
    rq.compile_all();
    Outcome c = walk_collect(rq, {tmp.path()});
    EXPECT_EQ(c.paths, want_paths) << "run " << i << "\n" << diff(c.paths, want_paths);
    check_counters(c, "collect");
    Outcome r = walk_run(rq, {tmp.path()});
    EXPECT_EQ(r.typed, want) << "run " << i << "\n" << diff(r.paths, want_paths);
    check_counters(r, "run");
  }
}

// With the default helper floor, a small walk stays on the calling thread
// and a wide one (600 sibling directories) starts its helpers.
TEST(Parallel, HelpersStartLazily)
{
  TempDir tmp;
  make_dir(tmp / "small");
  make_dir(tmp / "wide");
  make_dir(tmp / "narrow");
  for (int i = 0; i < 5; i++)
    make_dir(tmp / ("small/d" + std::to_string(i)));
  for (int i = 0; i < 600; i++)
    make_dir(tmp / ("wide/d" + std::to_string(i)));
  // 300 directories, never more than 2 queued at once depth first: 150
  // levels, each with two subdirectories, one of them empty.
  std::string chain = tmp / "narrow";
  for (int i = 0; i < 150; i++) {
    make_dir(chain + "/e");
    chain += "/d";
    make_dir(chain);
  }
  for (const std::string which : {"small", "wide", "narrow"}) {
    Query q;
    q.opt.threads = 4;
    q.opt.types = TRAWL_ENTRY_DIR;
    q.compile_all();
    Outcome o = walk_collect(q, {tmp / which});
    ASSERT_TRUE(o.ok);
    if (which == "small") {
      EXPECT_EQ(o.paths.size(), 5u);
      EXPECT_EQ(o.stats.threads_used, 1u) << "helpers started for 5 directories";
    } else if (which == "wide") {
      EXPECT_EQ(o.paths.size(), 600u);
      EXPECT_EQ(o.stats.threads_used, 4u) << "no helper for 600 directories";
    } else {
      EXPECT_EQ(o.paths.size(), 300u);
      EXPECT_EQ(o.stats.threads_used, 4u) << "no helper for a narrow tree of 300 directories";
    }
  }
}

// Listings larger than the Linux reader's 64 KiB buffer (3,000 names of 60
// to 255 bytes), on both readers.
TEST(Listing, BigDirectory)
{
  TempDir tmp;
  make_dir(tmp / "big");
  std::vector<std::string> want;
  for (int i = 0; i < 3000; i++) {
    std::string name = std::string(60 + (size_t)(i * 37) % 196, 'n');
    name.replace(0, 5, std::to_string(10000 + i));
    name += i % 3 ? ".c" : ".h";
    name = name.substr(name.size() > 255 ? name.size() - 255 : 0);
    write_file(tmp / ("big/" + name));
    if (i % 3)
      want.push_back("big/" + name);
  }
  std::sort(want.begin(), want.end());
  for (const Route &route : kRoutes) {
    Query q;
    q.includes = {"**/*.c"};
    route.apply(q);
    q.compile_all();
    Outcome c = walk_collect(q, {tmp.path()});
    EXPECT_EQ(c.paths.size(), want.size()) << route.name;
    EXPECT_TRUE(c.paths == want) << route.name;
    EXPECT_EQ(c.stats.entries_seen, 3001u) << route.name;
    Outcome r = walk_run(q, {tmp.path()});
    EXPECT_TRUE(r.paths == want) << route.name;
  }
}

// The hidden rule is about entries below the root: a root whose own name
// starts with '.' is walked like any other, given by a path with '.' and
// '..' components or not.
TEST(Roots, HiddenRootName)
{
  TempDir tmp;
  add_file(tmp.path(), ".root/a.c");
  add_file(tmp.path(), ".root/sub/b.c");
  add_file(tmp.path(), ".root/.h/c.c");
  Query q;
  q.includes = {"**/*.c"};
  q.compile_all();
  for (const std::string &root : {tmp / ".root", tmp / "./.root/sub/..", tmp / ".root/"}) {
    Outcome o = walk_collect(q, {root});
    ASSERT_TRUE(o.ok) << root;
    EXPECT_EQ(o.paths, (std::vector<std::string>{"a.c", "sub/b.c"})) << root;
  }
}

// A walker runs any number of times with the same results; the problems and
// counters are those of the last run.
TEST(Rerun, SameResultsEveryTime)
{
  TempDir tmp;
  Rng rng(21);
  generate_dir(rng, tmp.path(), "", 0);
  Query q;
  q.includes = {"**/*.c"};
  q.opt.threads = 4;
  q.compile_all();
  const auto want = paths_of(reference(q, scan(tmp.path())));
  Walker w = make_walker(q, {tmp.path()}, nullptr);
  for (int i = 0; i < 5; i++) {
    GPtrArray *res = trawl_walker_collect(w.get(), nullptr);
    ASSERT_NE(res, nullptr);
    std::vector<std::string> got;
    for (guint k = 0; k < res->len; k++)
      got.push_back(static_cast<const char *>(res->pdata[k]));
    g_ptr_array_unref(res);
    EXPECT_EQ(got, want) << "run " << i;
    TrawlWalkStats st;
    trawl_walker_stats(w.get(), &st);
    EXPECT_EQ(st.results, want.size()) << "run " << i;
  }
}

// Sorted runs order whole paths bytewise without comparing them: each
// directory's names sorted with a '/' after a subdirectory's. The names here
// sit on both sides of '/' (0x2f): '-' 0x2d, '.' 0x2e, '0' 0x30, ' ' 0x20,
// 0xff; and a directory reported itself precedes its sibling "a.b" while its
// entries follow it.
TEST(Sorted, OrderAroundTheSlash)
{
  TempDir tmp;
  for (const char *rel : {"a/x", "a/y/z", "a.b", "a-b/y", "a0", "a b", "a\xff/q", "b",
                          "src/m.c", "src-x/m.c", "src.d/m.c", "src0/m.c", "src/sub/n.c"})
    add_file(tmp.path(), rel);
  struct Case {
    std::vector<std::string> includes;
    unsigned types;
  } cases[] = {
    {{}, TRAWL_ENTRY_FILE | TRAWL_ENTRY_DIR},
    {{"**"}, TRAWL_ENTRY_FILE},
    {{"src/**", "src-x/**", "src.d/**", "src0/**"}, TRAWL_ENTRY_FILE | TRAWL_ENTRY_DIR},
    {{"{src0,src.d,src,src-x}/*.c", "a*/**"}, TRAWL_ENTRY_FILE},
  };
  for (const Case &c : cases) {
    for (const Route &route : kRoutes) {
      Query q;
      q.includes = c.includes;
      q.opt.types = c.types;
      route.apply(q);
      q.compile_all();
      const auto want = reference(q, scan(tmp.path()));
      ASSERT_FALSE(want.empty());
      Outcome s = walk_run(q, {tmp.path()}, 0, true);
      EXPECT_EQ(s.typed, want) << route.name << " " << show(c.includes) << "\n"
                               << diff(s.paths, paths_of(want));
    }
  }
}

// An early stop in a sorted run: exactly the first N results, in order.
TEST(Sorted, EarlyStopKeepsThePrefix)
{
  TempDir tmp;
  Rng rng(31);
  generate_dir(rng, tmp.path(), "", 0);
  for (const Route &route : kRoutes) {
    Query q;
    q.includes = {"**"};
    q.opt.types = TRAWL_ENTRY_FILE | TRAWL_ENTRY_DIR;
    route.apply(q);
    q.compile_all();
    const auto want = reference(q, scan(tmp.path()));
    ASSERT_GT(want.size(), 20u);
    for (unsigned n : {1u, 7u, 20u}) {
      Outcome s = walk_run(q, {tmp.path()}, n, true);
      EXPECT_TRUE(s.ok);
      EXPECT_EQ(s.callbacks, n) << route.name;
      const std::vector<std::pair<std::string, unsigned>> first(want.begin(), want.begin() + n);
      EXPECT_EQ(s.typed, first) << route.name << " stop after " << n;
    }
  }
}

// Several roots in a sorted run: each root's results in order, the roots in
// the order added, each result with its root's index.
TEST(Sorted, RootsInTheOrderAdded)
{
  TempDir a, b;
  Rng ra(41), rb(42);
  generate_dir(ra, a.path(), "", 0);
  generate_dir(rb, b.path(), "", 0);
  Query q;
  q.includes = {"**/*.c", "**/*.ts"};
  q.opt.threads = 4;
  q.helper_floor = 0;
  q.compile_all();
  struct Seen {
    std::vector<std::pair<unsigned, std::string>> v;
  } seen;
  Walker w = make_walker(q, {b.path(), a.path()}, nullptr);
  auto fn = [](const TrawlEntry *e, void *data) -> bool {
    static_cast<Seen *>(data)->v.push_back({e->root, std::string(e->path, e->len)});
    return true;
  };
  ASSERT_TRUE(trawl_walker_run_sorted(w.get(), fn, &seen, nullptr));
  std::vector<std::pair<unsigned, std::string>> want;
  for (const auto &p : paths_of(reference(q, scan(b.path()))))
    want.push_back({0u, p});
  for (const auto &p : paths_of(reference(q, scan(a.path()))))
    want.push_back({1u, p});
  EXPECT_EQ(seen.v, want);
}

} // namespace
