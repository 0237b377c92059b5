// Result caches (trawl_cache_run, docs/cache.md): a cached run
// answers what a fresh run does, reads only what changed, and never trusts a
// cache file that does not check out — nor leaves a torn one behind.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>

// XXH3 compiled in from the header, as cache.c has it.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "tree_changes.hpp"
#include "walk_gen.hpp"
#include "walk_util.hpp"

#include "trawl/cache.h"
#include "trawl/plan.h"

// The private header is C without linkage markers of its own.
extern "C" {
#include "cache/cache-testing.h"
#include "cache/cachefile.h"
#include "cache/format.h"
#include "trawl/version.h"
}

using namespace walktest;
using namespace walkgen;

namespace {

void settle()
{
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

std::string slurp(const std::string &path)
{
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void spit(const std::string &path, const std::string &data)
{
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << data;
}

// A plan of one query per include list, all on ROOT.
struct Fixture {
  std::vector<Pattern> pats;
  std::vector<std::vector<const TrawlPattern *>> lists;
  Plan plan{trawl_plan_new()};

  Fixture(const std::string &root, const std::vector<std::vector<std::string>> &queries,
          unsigned ignore = 0, const std::vector<unsigned> &types = {})
  {
    lists.reserve(queries.size());
    for (const auto &q : queries) {
      lists.emplace_back();
      for (const auto &t : q) {
        pats.push_back(compile(t));
        lists.back().push_back(pats.back().get());
      }
      TrawlWalkOptions o;
      trawl_walk_options_init(&o);
      o.threads = 1;
      o.ignore = ignore;
      if (lists.size() <= types.size())
        o.types = types[lists.size() - 1];
      TrawlQuery tq{};
      tq.root = root.c_str();
      tq.includes = lists.back().data();
      tq.n_includes = lists.back().size();
      tq.options = &o;
      trawl_plan_add(plan.get(), &tq);
    }
  }

  std::vector<std::string> results(size_t q) const
  {
    return strings_of(trawl_plan_results(plan.get(), q));
  }
};

struct CacheRun {
  bool ok;
  bool trusted, changed, written;
  std::string warning, write_error;
  uint64_t read, reused;
  std::string watchman; // the report's word on watchman ("" when off)
};

// A report's GError as the tests compare it: its message ("" for none), once
// its domain and code are checked.
std::string report_message(const GError *e, TrawlCacheError code)
{
  if (e == nullptr)
    return "";
  EXPECT_EQ(e->domain, TRAWL_CACHE_ERROR) << e->message;
  EXPECT_EQ(e->code, static_cast<int>(code)) << e->message;
  return e->message;
}

// The report's word on watchman, as `trawl` prints it ("" when off).
std::string watchman_word(const TrawlCacheReport &rep)
{
  switch (rep.watchman) {
  case TRAWL_CACHE_WATCHMAN_OFF:
    EXPECT_EQ(rep.watchman_error, nullptr);
    return "";
  case TRAWL_CACHE_WATCHMAN_USED:
    EXPECT_EQ(rep.watchman_error, nullptr);
    return "used: " + std::to_string(rep.watchman_changes) + " paths changed";
  case TRAWL_CACHE_WATCHMAN_NOT_USED:
    return "not used (" + report_message(rep.watchman_error, TRAWL_CACHE_ERROR_WATCHMAN) + ")";
  }
  ADD_FAILURE() << "watchman " << rep.watchman;
  return "?";
}

CacheRun run(Fixture &f, const std::string &cache, unsigned flags = 0)
{
  TrawlCacheReport rep;
  memset(&rep, 0xff, sizeof rep); // the run fills all of it, its reserved slots with zero
  GError *error = nullptr;
  CacheRun r{};
  r.ok = trawl_cache_run(f.plan.get(), cache.c_str(), flags, &rep, &error);
  if (error)
    g_error_free(error);
  for (uint64_t slot : rep.reserved)
    EXPECT_EQ(slot, 0u) << "a reserved slot of the report (docs/library.md)";
  r.trusted = rep.trusted;
  r.changed = rep.changed;
  r.written = rep.written;
  r.warning = report_message(rep.warning, TRAWL_CACHE_ERROR_UNTRUSTED);
  r.write_error = report_message(rep.write_error, TRAWL_CACHE_ERROR_WRITE);
  r.read = rep.dirs_read;
  r.reused = rep.dirs_reused;
  r.watchman = watchman_word(rep);
  trawl_cache_report_clear(&rep);
  return r;
}

// What trawl_cache_changes() tells after PLAN's cached run, as `trawl
// check` prints it ("Q + path", "Q - path"), and how many it says there are.
std::vector<std::string> changes_told(const TrawlPlan *plan, size_t *n = nullptr)
{
  std::vector<std::string> told;
  const size_t k = trawl_cache_changes(
      plan,
      [](size_t q, const char *path, bool added, void *data) {
        static_cast<std::vector<std::string> *>(data)->push_back(std::to_string(q) +
                                                                 (added ? " + " : " - ") + path);
      },
      &told);
  if (n)
    *n = k;
  return told;
}

// The same questions asked without a cache.
std::vector<std::string> fresh(const std::string &root, const std::vector<std::string> &inc,
                               unsigned ignore = 0)
{
  Fixture f(root, {inc}, ignore);
  EXPECT_TRUE(trawl_plan_run(f.plan.get(), nullptr));
  return f.results(0);
}

void make_tree(const std::string &root)
{
  for (const char *p : {"a.c", "b.h", "src/c.c", "src/d/e.c", "lib/f.c", "lib/g.md"})
    add_file(root, p);
}

// ROOT/p/qK/rJ/f.c for K below QS and J below RS: QS * RS + QS + 1
// directories below ROOT.
void make_grid(const std::string &root, int qs, int rs)
{
  for (int k = 0; k < qs; k++)
    for (int j = 0; j < rs; j++)
      add_file(root, "p/q" + std::to_string(k) + "/r" + std::to_string(j) + "/f.c");
}

// TMP/tree made and settled, and walked once for **/*.c into the cache
// TMP/c.cache, whose path is returned.
std::string prime(const TempDir &tmp)
{
  make_dir(tmp / "tree");
  make_tree(tmp / "tree");
  const std::string cache = tmp / "c.cache";
  settle();
  Fixture f(tmp / "tree", {{"**/*.c"}});
  run(f, cache);
  return cache;
}

// trawl_cache_watch_until(): the same paths as trawl_cache_watch() in the
// same order, as many as the caller takes; a list stopped sets ALWAYS (it
// proves nothing), one taken whole does not.
TEST(Cache, AWatchListStoppedShortProvesNothing)
{
  TempDir tmp;
  const std::string cache = prime(tmp);
  settle();
  std::vector<std::string> all;
  bool always = true;
  GError *error = nullptr;
  ASSERT_TRUE(trawl_cache_watch(
      cache.c_str(),
      [](const char *path, void *data) { static_cast<std::vector<std::string> *>(data)->push_back(path); },
      &all, &always, &error));
  ASSERT_FALSE(always) << "a settled cache's list proves it";
  ASSERT_GE(all.size(), 4u);
  struct Taking {
    size_t limit;
    std::vector<std::string> got;
  };
  for (size_t limit : {size_t{1}, all.size() / 2, all.size() - 1, all.size(), all.size() + 5}) {
    Taking t{limit, {}};
    always = false;
    ASSERT_TRUE(trawl_cache_watch_until(
        cache.c_str(),
        [](const char *path, void *data) {
          Taking *tk = static_cast<Taking *>(data);
          tk->got.push_back(path);
          return tk->got.size() < tk->limit;
        },
        &t, &always, &error))
        << (error ? error->message : "");
    const size_t want = std::min(limit, all.size());
    EXPECT_EQ(t.got, std::vector<std::string>(all.begin(), all.begin() + want)) << "limit " << limit;
    // Stopped at its last path, the list is still cut short: the callback
    // said no more, so nothing says the rest was empty.
    EXPECT_EQ(always, limit <= all.size()) << "limit " << limit;
  }
}

TEST(Cache, SecondRunReadsNothing)
{
  TempDir tmp;
  make_dir(tmp / "tree");
  make_tree(tmp / "tree");
  const std::string cache = tmp / "c.cache";
  settle();
  Fixture f(tmp / "tree", {{"**/*.c"}, {"**/*.md", "*.h"}});
  CacheRun r1 = run(f, cache);
  EXPECT_TRUE(r1.ok);
  EXPECT_FALSE(r1.trusted);
  EXPECT_EQ(r1.warning, ""); // no file yet: nothing to warn about
  EXPECT_TRUE(r1.changed);
  EXPECT_TRUE(r1.written);
  EXPECT_EQ(r1.read, 4u);
  EXPECT_EQ(f.results(0), (std::vector<std::string>{"a.c", "lib/f.c", "src/c.c", "src/d/e.c"}));
  const std::string bytes = slurp(cache);

  Fixture g(tmp / "tree", {{"**/*.c"}, {"**/*.md", "*.h"}});
  CacheRun r2 = run(g, cache);
  EXPECT_TRUE(r2.trusted);
  EXPECT_EQ(r2.read, 0u);
  EXPECT_EQ(r2.reused, 4u);
  EXPECT_FALSE(r2.changed);
  EXPECT_FALSE(r2.written);
  EXPECT_EQ(slurp(cache), bytes);
  EXPECT_EQ(g.results(0), f.results(0));
  EXPECT_EQ(g.results(1), (std::vector<std::string>{"b.h", "lib/g.md"}));
}

// The index moved (git wrote it again): the walk's recorded questions are
// asked again, and they are kept in the directory entries the check reads
// anyway (format.h, question), so a check whose answers are the same reads
// no records; one whose answer differs reads the directory again.
TEST(Cache, TheIndexsQuestionsAreAskedAgainWithoutTheRecords)
{
  TempDir tmp;
  const std::string root = tmp / "tree";
  make_dir(root);
  treechanges::git(root, {"init", "-q"});
  for (const char *p : {"src/a.c", "src/gen.c", "build/keep.c", "build/junk.c", "docs/x.md"})
    add_file(root, p);
  treechanges::git(root, {"add", "src/a.c", "build/keep.c"});
  spit(root + "/.gitignore", "gen.c\nbuild/\n");
  const std::string cache = tmp / "c.cache";
  const unsigned ignore = TRAWL_IGNORE_VCS | TRAWL_IGNORE_DOT;
  settle();
  {
    Fixture f(root, {{"**/*.c"}}, ignore);
    run(f, cache);
    EXPECT_EQ(f.results(0), (std::vector<std::string>{"build/keep.c", "src/a.c"}));
  }
  treechanges::git(root, {"add", "docs/x.md"}); // changes no answer
  settle();
  {
    const unsigned long before = cache_test_records_read;
    Fixture f(root, {{"**/*.c"}}, ignore);
    CacheRun r = run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
    EXPECT_TRUE(r.trusted);
    EXPECT_FALSE(r.changed);
    EXPECT_EQ(r.read, 0u);
    EXPECT_TRUE(cache_run_was_quick(f.plan.get()));
    EXPECT_EQ(cache_test_records_read, before) << "the records were read to ask the questions";
  }
  treechanges::git(root, {"add", "-f", "src/gen.c"}); // changes one
  settle();
  {
    Fixture f(root, {{"**/*.c"}}, ignore);
    CacheRun r = run(f, cache);
    EXPECT_TRUE(r.changed);
    EXPECT_EQ(r.read, 1u) << "src, whose answer differs, alone";
    EXPECT_EQ(f.results(0), (std::vector<std::string>{"build/keep.c", "src/a.c", "src/gen.c"}));
  }
  // And the questions came back from the entries into the memo it replayed
  // and wrote: the next change to build's answer is seen too.
  treechanges::git(root, {"rm", "-q", "--cached", "build/keep.c"});
  settle();
  {
    Fixture f(root, {{"**/*.c"}}, ignore);
    CacheRun r = run(f, cache);
    EXPECT_TRUE(r.changed);
    EXPECT_EQ(f.results(0), (std::vector<std::string>{"src/a.c", "src/gen.c"}));
  }
}

// A cache whose index or records are larger than what is read into the heap
// (cache.c, READ_INTO_HEAP_MAX: 64 KB) is read into a mapping instead: both
// routes give the same answers. 6,000 files with long names make about
// 200 KB (cache format 3).
TEST(Cache, LargeCacheReadThroughAMapping)
{
  TempDir tmp;
  make_dir(tmp / "tree");
  for (int d = 0; d < 60; d++)
    for (int i = 0; i < 100; i++)
      add_file(tmp / "tree", "dir" + std::to_string(d) + "/a_file_with_a_long_name_" +
                                 std::to_string(i) + ".c");
  const std::string cache = tmp / "c.cache";
  settle();
  {
    Fixture f(tmp / "tree", {{"**/*.c"}});
    run(f, cache);
    EXPECT_EQ(f.results(0).size(), 6000u);
  }
  struct stat st;
  ASSERT_EQ(stat(cache.c_str(), &st), 0);
  EXPECT_GT(st.st_size, 2 * 64 * 1024) << "too small to take the mapped route";
  add_file(tmp / "tree", "dir7/new.c");
  settle();
  Fixture g(tmp / "tree", {{"**/*.c"}});
  CacheRun r = run(g, cache); // replays 60 directories from the records
  EXPECT_TRUE(r.trusted);
  EXPECT_EQ(r.read, 1u);
  EXPECT_EQ(g.results(0), fresh(tmp / "tree", {"**/*.c"}));
  EXPECT_EQ(g.results(0).size(), 6001u);
}

// From 512 directories on (cache.c, CHECK_THREADS_FROM) a re-check shares
// its stats among threads, each share starting in the middle of the index
// with the path of the entry before it: paths are written as the length
// they share with the one before (format 3). A share that started from the
// wrong path would stat paths never recorded and find "a change": the
// answer would still be right (the walk that follows replays the records),
// so what is asserted is that the re-check needed no walk (cache_run_was_quick()).
TEST(Cache, ManyDirectoriesAreReCheckedInShares)
{
  TempDir tmp;
  make_dir(tmp / "tree");
  make_grid(tmp / "tree", 24, 27);
  const std::string cache = tmp / "c.cache";
  settle();
  {
    Fixture f(tmp / "tree", {{"**/*.c"}});
    run(f, cache);
    EXPECT_EQ(f.results(0).size(), 24u * 27u);
  }
  {
    Fixture f(tmp / "tree", {{"**/*.c"}});
    CacheRun r = run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
    EXPECT_TRUE(r.trusted);
    EXPECT_FALSE(r.changed);
    EXPECT_EQ(r.read, 0u);
    EXPECT_EQ(r.reused, 24u * 27u + 24u + 2u);
    EXPECT_TRUE(cache_run_was_quick(f.plan.get())) << "a directory's stamp did not match: a share stat'ed another path";
  }
  for (const char *p : {"p/q0/r0/new.c", "p/q12/r13/new.c", "p/q23/r26/new.c"}) {
    add_file(tmp / "tree", p);
    settle();
    Fixture f(tmp / "tree", {{"**/*.c"}});
    CacheRun r = run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
    EXPECT_TRUE(r.changed) << p;
    EXPECT_EQ(r.read, 1u) << p;
    EXPECT_FALSE(cache_run_was_quick(f.plan.get())) << p;
    EXPECT_EQ(f.results(0), fresh(tmp / "tree", {"**/*.c"})) << p;
  }
}

// The re-check with watchman's answer (walk_unchanged_but()) finds each name
// through the index's marks: a name no walk records (in .git, which every git
// command writes) costs a search, not a pass over every entry; a named
// directory is stat'ed, and a change in it found. Each answer, and the count
// of directories stat'ed, is the one a pass over every entry gives (forced
// here by names too many to search for). Issue 25.
struct Touched {
  GHashTable *t = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, nullptr);
  Touched(std::initializer_list<std::string> names)
  {
    for (const auto &n : names) // as cache.c's touch_name(): the name, and its directory
      add(n), add(n.rfind('/') == std::string::npos ? "" : n.substr(0, n.rfind('/')));
  }
  void add(const std::string &n) { g_hash_table_add(t, g_strdup(n.c_str())); }
  ~Touched() { g_hash_table_unref(t); }
};

struct Recheck {
  bool same;
  uint64_t checked;
  unsigned long decoded;
};

Recheck recheck(const cached_walk *w, int root_fd, GHashTable *touched)
{
  Recheck r{};
  const unsigned long before = cache_test_dirs_decoded;
  r.same = walk_unchanged_but(w, root_fd, touched, &r.checked);
  r.decoded = cache_test_dirs_decoded - before;
  return r;
}

// RECHECK's answer for TOUCHED, checked against a pass over every entry:
// the same names and as many more as the walk has directories, none of
// them recorded.
Recheck recheck_both(const cached_walk *w, int root_fd, std::initializer_list<std::string> names)
{
  Touched few(names), many(names);
  for (guint32 i = 0; i < w->n_dirs; i++)
    many.add(".git/objects/" + std::to_string(i));
  const Recheck a = recheck(w, root_fd, few.t), b = recheck(w, root_fd, many.t);
  if (b.same) { // else it stopped at the first that differs
    EXPECT_EQ(b.decoded, w->n_dirs) << "not the pass over every entry";
  }
  EXPECT_EQ(a.same, b.same);
  EXPECT_EQ(a.checked, b.checked);
  return a;
}

TEST(Cache, WatchmansNamesAreFoundThroughTheMarks)
{
  TempDir tmp;
  make_dir(tmp / "tree");
  make_grid(tmp / "tree", 40, 25);
  make_dir(tmp / "tree/.git");
  const guint32 dirs = 40 * 25 + 40 + 2;
  for (const char *pattern : {"**/*.c", "p/q3/**/*.c"}) {
    SCOPED_TRACE(pattern);
    const std::string cache = tmp / "c.cache";
    unlink(cache.c_str());
    settle();
    for (int k = 0; k < 2; k++) { // written, then written again with nothing racy
      Fixture f(tmp / "tree", {{pattern}});
      run(f, cache);
      settle();
    }
    char *why = nullptr;
    EXPECT_GE(cache_read_all(cache.c_str(), &why), 0) << "the marks disagree with the entries";
    g_free(why);
    cache_file *c = cache_load(cache.c_str(), &why);
    ASSERT_NE(c, nullptr) << why;
    const cached_walk *w = static_cast<const cached_walk *>(c->walks->pdata[0]);
    const bool all = pattern[0] == '*';
    // Never vouched for: the root, or the start directory p/q3 (the walk
    // starts there: the root is not recorded) and none of the 25 below it.
    const guint32 must = 1;
    EXPECT_EQ(w->n_dirs, all ? dirs : 1 + 25);
    EXPECT_EQ(w->n_must, must);
    const int root_fd = open((tmp / "tree").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(root_fd, 0);

    // Of the file, only the blocks of entries that hold what is stat'ed or
    // searched for are read (each checked against its sum), not the region
    // of every entry: nothing named, the listed entry's block alone; names
    // in .git, the one block where they would be (the search is over the
    // keys in the index, format 15).
    {
      cache_file *fc = cache_load(cache.c_str(), &why);
      ASSERT_NE(fc, nullptr) << why;
      const cached_walk *fw = static_cast<const cached_walk *>(fc->walks->pdata[0]);
      EXPECT_EQ(fw->n_marks, (fw->n_dirs + fw->mark_every - 1) / fw->mark_every);
      Touched none({});
      guint64 checked = 0;
      unsigned long before = cache_test_blocks_read;
      EXPECT_TRUE(walk_unchanged_but(fw, root_fd, none.t, &checked));
      EXPECT_EQ(cache_test_blocks_read - before, 1u) << "not the listed entry's block alone";
      if (all) { // (for the start directory's 26, four names are searched by a pass)
        Touched git({".git/index", ".git/x", ".git"});
        before = cache_test_blocks_read;
        EXPECT_TRUE(walk_unchanged_but(fw, root_fd, git.t, &checked));
        EXPECT_LE(cache_test_blocks_read - before, 1u) << "a search read blocks for their keys";
        EXPECT_LT(cache_test_blocks_read - before, fw->n_marks);
      }
      EXPECT_FALSE(fc->dirs_checked) << "the region of every entry was read";
      cache_file_free(fc);
    }

    // Names no walk records: the root and the start directory's way stat'ed.
    Recheck r = recheck_both(w, root_fd, {".git/index", ".git/x", ".git"});
    EXPECT_TRUE(r.same);
    EXPECT_EQ(r.checked, must);
    if (all) { // three names (and their directories) searched for, each between two marks
      EXPECT_LE(r.decoded, 4 * (w->mark_every + 1) + must) << "the work follows the tree";
    }
    // Nothing named: the list alone.
    Touched none({});
    r = recheck(w, root_fd, none.t);
    EXPECT_TRUE(r.same);
    EXPECT_EQ(r.checked, must);
    EXPECT_EQ(r.decoded, must);

    // A recorded directory named, unchanged: stat'ed and found the same.
    r = recheck_both(w, root_fd, {"p/q3/r17/f.c"});
    EXPECT_TRUE(r.same);
    EXPECT_EQ(r.checked, must + 1);
    // In the index's (bytewise) order: the first entry below the root, one
    // at a mark and those around it, the last; each found and stat'ed.
    std::vector<std::string> order;
    for (int k = 0; k < 40; k++)
      for (int j = -1; j < 25; j++)
        if (all || k == 3)
          order.push_back("p/q" + std::to_string(k) + (j < 0 ? "" : "/r" + std::to_string(j)));
    if (all)
      order.push_back("p");
    std::sort(order.begin(), order.end());
    ASSERT_EQ(order.size() + all, w->n_dirs);
    const size_t mark = w->mark_every - all; // entry MARK_EVERY, in ORDER
    for (size_t k : {size_t{0}, mark - 1, mark, mark + 1, order.size() - 1}) {
      if (k >= order.size() || (!all && k == 0))
        continue; // past the last; the start directory p/q3, listed: stat'ed anyway
      const std::string &d = order[k];
      r = recheck_both(w, root_fd, {d + "/x"});
      EXPECT_TRUE(r.same) << d;
      EXPECT_EQ(r.checked, must + 1) << d;
    }

    // A change deep in the tree: that directory is stat'ed, and differs.
    add_file(tmp / "tree", "p/q3/r17/new.c");
    settle();
    r = recheck_both(w, root_fd, {"p/q3/r17/new.c", ".git/index"});
    EXPECT_FALSE(r.same);
    EXPECT_EQ(r.checked, must + 1);
    // Named elsewhere only: watchman vouches for it (its answer is trusted).
    r = recheck_both(w, root_fd, {"p/q4/r1/y.c"});
    EXPECT_TRUE(r.same);
    unlink((tmp / "tree/p/q3/r17/new.c").c_str());
    close(root_fd);
    cache_file_free(c);
  }
}

// Lookups by path through one cursor (a directory's children, looked up
// as the walk leaves them unentered: walk/replay.c): in path order, each
// goes on from where the last stopped in its block, so every entry is read
// about once, not up to a block's worth per lookup; in any other order, and
// with paths no entry has between them (a lookup that passes its place
// starts the next at the mark), each answer is still the entry's. Issue 25.
TEST(Cache, LookupsInPathOrderReadEachEntryOnce)
{
  TempDir tmp;
  make_dir(tmp / "tree");
  make_grid(tmp / "tree", 40, 25);
  const std::string cache = tmp / "c.cache";
  settle();
  Fixture f(tmp / "tree", {{"**/*.c"}});
  run(f, cache);
  char *why = nullptr;
  cache_file *c = cache_load(cache.c_str(), &why);
  ASSERT_NE(c, nullptr) << why;
  const cached_walk *w = static_cast<const cached_walk *>(c->walks->pdata[0]);
  ASSERT_GE(w->n_marks, 8u);
  std::vector<std::string> paths; // every entry's, in the file's (path) order
  {
    dir_cursor cur;
    dir_cursor_init(&cur, w);
    dir_entry e;
    for (guint32 i = 0; i < w->n_dirs; i++) {
      ASSERT_TRUE(dir_cursor_at(&cur, i, &e));
      paths.emplace_back(e.path, e.len);
    }
    dir_cursor_clear(&cur);
  }
  auto lookups = [&](const std::vector<guint32> &order, bool between) {
    dir_cursor cur;
    dir_cursor_init(&cur, w);
    const unsigned long before = cache_test_dirs_decoded;
    for (guint32 k : order) {
      dir_entry e;
      guint32 i = G_MAXUINT32;
      if (between) { // just after the entry's path: no entry has it
        const std::string p = paths[k] + "!";
        EXPECT_FALSE(dir_cursor_find(&cur, p.data(), p.size(), &i, &e)) << p;
      }
      EXPECT_TRUE(dir_cursor_find(&cur, paths[k].data(), paths[k].size(), &i, &e)) << paths[k];
      EXPECT_EQ(i, k);
      EXPECT_EQ(std::string(e.path, e.len), paths[k]);
    }
    EXPECT_FALSE(cur.bad);
    dir_cursor_clear(&cur);
    return cache_test_dirs_decoded - before;
  };
  std::vector<guint32> up, down;
  for (guint32 i = 0; i < w->n_dirs; i++)
    up.push_back(i);
  down.assign(up.rbegin(), up.rend());
  // In path order: each entry skimmed once and the one found read again.
  EXPECT_LE(lookups(up, false), 2 * (unsigned long)w->n_dirs);
  // Backwards: every lookup starts at its mark again, and still finds it.
  EXPECT_GT(lookups(down, false), 4 * (unsigned long)w->n_dirs);
  lookups(up, true);
  lookups(down, true);
  cache_file_free(c);
}

TEST(Cache, OneChangeReadsOneDirectoryAndReportsTheDifference)
{
  TempDir tmp;
  const std::string cache = prime(tmp);
  add_file(tmp / "tree", "src/d/new.c");
  unlink((tmp / "tree/lib/f.c").c_str());
  settle();
  Fixture f(tmp / "tree", {{"**/*.c"}});
  CacheRun r = run(f, cache);
  EXPECT_TRUE(r.trusted);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(r.written);
  EXPECT_EQ(r.read, 2u); // src/d and lib
  EXPECT_EQ(f.results(0), fresh(tmp / "tree", {"**/*.c"}));
  const GPtrArray *was = trawl_cache_previous_results(f.plan.get(), 0);
  ASSERT_NE(was, nullptr);
  EXPECT_EQ(strings_of(was),
            (std::vector<std::string>{"a.c", "lib/f.c", "src/c.c", "src/d/e.c"}));
}

// A literal start directory that was not there is recorded as missing; when
// it appears, the re-check sees it and the cached run walks it (its parent,
// on the way, is not read: the start directory's own record decides).
TEST(Cache, AStartDirectoryThatAppearsIsWalked)
{
  TempDir tmp;
  make_dir(tmp / "tree");
  make_tree(tmp / "tree");
  const std::string cache = tmp / "c.cache";
  settle();
  {
    Fixture f(tmp / "tree", {{"gen/**/*.c"}});
    run(f, cache);
    EXPECT_TRUE(f.results(0).empty());
  }
  settle();
  {
    Fixture f(tmp / "tree", {{"gen/**/*.c"}});
    CacheRun r = run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
    EXPECT_FALSE(r.changed);
    EXPECT_EQ(r.read, 0u);
  }
  add_file(tmp / "tree", "gen/x/made.c");
  settle();
  {
    Fixture f(tmp / "tree", {{"gen/**/*.c"}});
    CacheRun r = run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
    EXPECT_TRUE(r.changed) << "the re-check missed the start directory that appeared";
    EXPECT_EQ(f.results(0), (std::vector<std::string>{"gen/x/made.c"}));
  }
}

// trawl_cache_changes(): what was added to and removed from each query's
// results, in bytewise order, query by query; and the digest of all the
// results, which changes exactly when an answer does.
TEST(Cache, ChangesAndDigest)
{
  TempDir tmp;
  const std::string cache = prime(tmp); // **/*.c: a.c lib/f.c src/c.c src/d/e.c
  auto digest = [&]() {
    Fixture f(tmp / "tree", {{"**/*.c"}});
    EXPECT_TRUE(trawl_plan_run(f.plan.get(), nullptr));
    TrawlPlan *plans[] = {f.plan.get(), nullptr};
    char *d = trawl_digest_plans(plans, 2);
    std::string out = d;
    g_free(d);
    return out;
  };
  const std::string before = digest();
  EXPECT_EQ(before.size(), 64u);
  EXPECT_EQ(digest(), before) << "the same answers, another digest";
  {
    // The streaming form (trawl batch --bump) makes the same digest.
    Fixture f(tmp / "tree", {{"**/*.c"}});
    ASSERT_TRUE(trawl_plan_run(f.plan.get(), nullptr));
    TrawlDigest *d = trawl_digest_new();
    for (const std::string &r : f.results(0))
      trawl_digest_result(d, r.data(), r.size());
    trawl_digest_end_query(d);
    char *hex = trawl_digest_finish(d);
    EXPECT_EQ(std::string(hex), before) << "streamed, another digest";
    g_free(hex);
  }
  add_file(tmp / "tree", "lib/b.c");
  add_file(tmp / "tree", "src/d/z.c");
  unlink((tmp / "tree/src/c.c").c_str());
  settle();
  Fixture f(tmp / "tree", {{"**/*.c"}, {"*.h"}});
  unlink(cache.c_str()); // a cache of these two queries first
  run(f, cache);
  unlink((tmp / "tree/b.h").c_str());
  add_file(tmp / "tree", "a.h");
  add_file(tmp / "tree", "lib/a.c");
  unlink((tmp / "tree/src/d/z.c").c_str());
  settle();
  Fixture g(tmp / "tree", {{"**/*.c"}, {"*.h"}});
  EXPECT_TRUE(run(g, cache, TRAWL_CACHE_WRITE_ON_CHANGE).changed);
  size_t n = 0;
  const std::vector<std::string> got = changes_told(g.plan.get(), &n);
  EXPECT_EQ(got, (std::vector<std::string>{"0 + lib/a.c", "0 - src/d/z.c", "1 + a.h", "1 - b.h"}));
  EXPECT_EQ(n, got.size());
  EXPECT_EQ(trawl_cache_changes(g.plan.get(), nullptr, nullptr), n);
  EXPECT_NE(digest(), before);
}

// A path that stays a result of one query and leaves another's (a file
// replaced by a directory, with one query listing both types, the other
// files alone): told for the one it left, and not for the other. One walk
// serves both, so the change is in one record's queries, not its name.
TEST(Cache, AChangeInWhichQueriesHoldAPath)
{
  TempDir tmp;
  make_dir(tmp / "tree");
  add_file(tmp / "tree", "x");
  add_file(tmp / "tree", "y.c");
  const std::string cache = tmp / "c.cache";
  const std::vector<unsigned> types = {TRAWL_ENTRY_FILE, TRAWL_ENTRY_FILE | TRAWL_ENTRY_DIR};
  settle();
  {
    Fixture f(tmp / "tree", {{"*"}, {"*"}}, 0, types);
    run(f, cache);
    EXPECT_EQ(f.results(0), (std::vector<std::string>{"x", "y.c"}));
    EXPECT_EQ(f.results(1), (std::vector<std::string>{"x", "y.c"}));
  }
  unlink((tmp / "tree/x").c_str());
  make_dir(tmp / "tree/x");
  settle();
  Fixture g(tmp / "tree", {{"*"}, {"*"}}, 0, types);
  EXPECT_TRUE(run(g, cache, TRAWL_CACHE_WRITE_ON_CHANGE).changed);
  const std::vector<std::string> got = changes_told(g.plan.get());
  EXPECT_EQ(got, (std::vector<std::string>{"0 - x"}));
  EXPECT_EQ(g.results(1), (std::vector<std::string>{"x", "y.c"}));
}

// A check asked for its changes alone leaves unentered what cannot have
// changed, and keeps it: "a" and "a.b" both left whole, whose subtrees
// interleave in path order ("a" < "a.b" < "a.b/y" < "a/x"): what is below
// "a" is kept though "a.b" comes between (found by the hardening mutator,
// which renames directories to "NAME.oldN": the pass over the entries
// once passed "a" at "a.b" and dropped "a/x" as gone).
TEST(Cache, ACheckForItsChangesKeepsWhatItLeavesUnentered)
{
  TempDir tmp;
  make_dir(tmp / "tree");
  for (const char *f : {"a/x/f.c", "a.b/y/g.c", "a/h.c", "c/h.c"})
    add_file(tmp / "tree", f);
  const std::string cache = tmp / "c.cache";
  settle();
  {
    Fixture f(tmp / "tree", {{"**"}});
    run(f, cache);
  }
  settle();
  {
    Fixture f(tmp / "tree", {{"**"}});
    run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE); // what was racy read again: settled
  }
  add_file(tmp / "tree", "c/new.c");
  settle();
  Fixture g(tmp / "tree", {{"**"}});
  CacheRun r = run(g, cache, TRAWL_CACHE_WRITE_ON_CHANGE | TRAWL_CACHE_CHANGES_ONLY);
  EXPECT_TRUE(cache_run_was_partial(g.plan.get()));
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(r.written);
  EXPECT_EQ(r.read, 1u) << "c alone";
  const std::vector<std::string> got = changes_told(g.plan.get());
  EXPECT_EQ(got, (std::vector<std::string>{"0 + c/new.c"}));
  // The cache written holds all of it: the next run, from its records alone.
  Fixture h(tmp / "tree", {{"**"}});
  CacheRun again = run(h, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
  EXPECT_FALSE(again.changed);
  EXPECT_EQ(again.read, 0u);
  EXPECT_EQ(h.results(0), (std::vector<std::string>{"a.b/y/g.c", "a/h.c", "a/x/f.c", "c/h.c",
                                                    "c/new.c"}));
}

// The little-endian u64 at AT of DATA (a header's field).
uint64_t le_at(const std::string &data, size_t at)
{
  uint64_t v = 0;
  for (int i = 8; i-- > 0;)
    v = v << 8 | (uint8_t)data[at + i];
  return v;
}

// CACHE of **/*.c over TMP's tree written, then written again with
// nothing racy.
void settle_cache(TempDir &tmp, const std::string &cache)
{
  settle();
  for (int k = 0; k < 2; k++) {
    Fixture f(tmp / "tree", {{"**/*.c"}});
    run(f, cache, k ? TRAWL_CACHE_WRITE_ON_CHANGE : 0);
    settle();
  }
}

// A tree of N directories below a/, each with one f.c, and c/h.c; and
// CACHE of it settled (settle_cache()). The files, in path order.
std::vector<std::string> settled_blocks(TempDir &tmp, int n, const std::string &cache)
{
  make_dir(tmp / "tree");
  std::vector<std::string> all;
  for (int k = 0; k < n; k++) {
    char name[32];
    snprintf(name, sizeof name, "a/d%04d/f.c", k);
    add_file(tmp / "tree", name);
    all.push_back(name);
  }
  add_file(tmp / "tree", "c/h.c");
  all.push_back("c/h.c");
  settle_cache(tmp, cache);
  return all;
}

// A check for its changes copies every block of entries below a directory
// it leaves unentered as it is, its records unread and unchecked (format
// 13): a block that is corrupt there is copied corrupt, sum and all, and
// the next run that reads it finds it so, walks in full and answers right.
// Issue 25.
TEST(Cache, ACheckForItsChangesCopiesTheBlocksItDoesNotEnter)
{
  TempDir tmp;
  const std::string cache = tmp / "c.cache";
  std::vector<std::string> all = settled_blocks(tmp, 1000, cache);
  // Block 2 is below "a/" from its first entry to the next block's: its
  // records, a byte of them flipped.
  std::string data = slurp(cache);
  char *why = nullptr;
  cache_file *c = cache_load(cache.c_str(), &why);
  ASSERT_NE(c, nullptr) << why;
  const cached_walk *w = static_cast<const cached_walk *>(c->walks->pdata[0]);
  ASSERT_GE(w->n_marks, 5u);
  const std::string mark(reinterpret_cast<const char *>(w->marks) + MARK_SIZE * 2, MARK_SIZE);
  const uint64_t rat = le_at(mark, 20) >> 1, rlen = le_at(mark, 28); // (a whole file's own)
  ASSERT_EQ(le_at(mark, 20) & 1, 0u);
  ASSERT_GT(rlen, 4u);
  const size_t at = HEADER_SIZE + le_at(data, 40) + le_at(data, 48) + rat + rlen / 2;
  cache_file_free(c);
  data[at] ^= 0x01;
  spit(cache, data);

  add_file(tmp / "tree", "c/new.c");
  settle();
  const unsigned long before = cache_test_records_read;
  {
    Fixture g(tmp / "tree", {{"**/*.c"}});
    CacheRun r = run(g, cache, TRAWL_CACHE_WRITE_ON_CHANGE | TRAWL_CACHE_CHANGES_ONLY);
    EXPECT_TRUE(cache_run_was_partial(g.plan.get()));
    EXPECT_TRUE(r.written);
    EXPECT_EQ(r.warning, "");
    EXPECT_EQ(changes_told(g.plan.get()), (std::vector<std::string>{"0 + c/new.c"}));
    EXPECT_EQ(r.reused + r.read, 2u + 1000 + 1) << "every directory: replayed, kept or read";
  }
  EXPECT_EQ(cache_test_records_read, before) << "the records were read whole";

  // Most of the file kept: the new one is written over the last, its base
  // (format 14), where the block stays, neither copied nor read.
  const std::string written = slurp(cache);
  const std::string flipped = data.substr(at - 8, 17);
  EXPECT_TRUE(slurp(cache + ".base") == data) << "the last file is not the base";
  EXPECT_EQ(written.find(flipped), std::string::npos) << "the block was copied";

  // The next run that wants the records reads that block: not trusted.
  all.push_back("c/new.c");
  std::sort(all.begin(), all.end());
  Fixture h(tmp / "tree", {{"**/*.c"}});
  CacheRun again = run(h, cache);
  EXPECT_FALSE(again.trusted);
  EXPECT_NE(again.warning.find("corrupt (its records"), std::string::npos) << again.warning;
  EXPECT_EQ(h.results(0), all);
  Fixture k(tmp / "tree", {{"**/*.c"}});
  CacheRun after = run(k, cache);
  EXPECT_TRUE(after.trusted);
  EXPECT_EQ(after.warning, "");
  EXPECT_EQ(k.results(0), all);
}

// The inode of PATH (0: none there).
ino_t inode_of(const std::string &path)
{
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

// NAME added to TMP's tree and to ALL (kept in path order), then settled.
void add_settled(TempDir &tmp, std::vector<std::string> &all, const std::string &name)
{
  add_file(tmp / "tree", name);
  all.push_back(name);
  std::sort(all.begin(), all.end());
  settle();
}

// A run of **/*.c over TMP's tree with CACHE trusts it, finds nothing
// changed and answers ALL, as a walk does (WHAT names the step).
void expect_settled_answer(TempDir &tmp, const std::string &cache,
                           const std::vector<std::string> &all, const std::string &what)
{
  Fixture h(tmp / "tree", {{"**/*.c"}});
  CacheRun again = run(h, cache);
  EXPECT_TRUE(again.trusted) << what;
  EXPECT_FALSE(again.changed) << what;
  EXPECT_EQ(again.warning, "") << what;
  EXPECT_EQ(h.results(0), all) << what;
}

// A check for its changes that leaves most of the last file as it was
// writes only what changed, over that file as its base (format 14): the
// last file becomes PATH.base (the very file: a link), the new one holds
// the blocks it made and points into the base for the rest. The next
// change writes over the same base; one that would leave less than half of
// the file in the base writes a whole file again, and the base goes. Each
// answer is a walk's. Issue 25.
TEST(Cache, ACheckForItsChangesWritesOverABase)
{
  TempDir tmp;
  const std::string cache = tmp / "c.cache", base = cache + ".base";
  std::vector<std::string> all = settled_blocks(tmp, 1000, cache);
  const std::string whole = slurp(cache);
  const ino_t was = inode_of(cache);
  ASSERT_EQ(inode_of(base), 0u);
  const unsigned flags = TRAWL_CACHE_WRITE_ON_CHANGE | TRAWL_CACHE_CHANGES_ONLY;
  for (const char *name : {"c/new.c", "c/new2.c"}) {
    add_settled(tmp, all, name);
    Fixture g(tmp / "tree", {{"**/*.c"}});
    CacheRun r = run(g, cache, flags);
    EXPECT_TRUE(cache_run_was_partial(g.plan.get()));
    EXPECT_TRUE(r.written);
    EXPECT_EQ(r.warning, "");
    EXPECT_EQ(inode_of(base), was) << name << ": the base is not the first file";
    EXPECT_TRUE(slurp(base) == whole) << name;
    EXPECT_LT(slurp(cache).size() * 2, whole.size()) << name << ": not written over the base";
    // Read through the base: the answer a walk gives, from the records.
    expect_settled_answer(tmp, cache, all, name);
  }
  // Most directories changed: a whole file, and no base.
  for (int k = 0; k < 1000; k += 2) {
    char name[32];
    snprintf(name, sizeof name, "a/d%04d/g.c", k);
    add_file(tmp / "tree", name);
    all.push_back(name);
  }
  std::sort(all.begin(), all.end());
  settle();
  Fixture g(tmp / "tree", {{"**/*.c"}});
  CacheRun r = run(g, cache, flags);
  EXPECT_TRUE(r.written);
  EXPECT_EQ(inode_of(base), 0u) << "a whole file left its base behind";
  EXPECT_GT(slurp(cache).size(), whole.size());
  Fixture h(tmp / "tree", {{"**/*.c"}});
  CacheRun again = run(h, cache);
  EXPECT_TRUE(again.trusted);
  EXPECT_EQ(h.results(0), all);
}

// Every directory entry of cache file PATH (through its base), in the
// file's order: false in *ORDERED when a path does not come after the one
// before it (a reader's binary search would miss entries).
std::vector<std::string> entries_of(const std::string &path, bool *ordered)
{
  std::vector<std::string> v;
  *ordered = true;
  char *why = nullptr;
  cache_file *c = cache_load(path.c_str(), &why);
  EXPECT_NE(c, nullptr) << why;
  if (c == nullptr) {
    g_free(why);
    return v;
  }
  for (guint i = 0; i < c->walks->len; i++) {
    const cached_walk *w = static_cast<const cached_walk *>(c->walks->pdata[i]);
    rd r;
    EXPECT_TRUE(cached_walk_dirs(w, &r.p, &r.end));
    r.bad = false;
    GString *p = g_string_new(nullptr);
    std::string before;
    for (guint32 k = 0; k < w->n_dirs && !r.bad; k++) {
      dir_entry e;
      r_dir_skim(&r, &e, p);
      const std::string now(e.path, e.len);
      if (k > 0 && !(before < now))
        *ordered = false;
      v.push_back(now);
      before = now;
    }
    EXPECT_FALSE(r.bad);
    g_string_free(p, TRUE);
  }
  cache_file_free(c);
  return v;
}

// settled_blocks()'s tree of 1,000 directories, its cache settled, and the
// cache file's bytes.
struct SettledFile {
  TempDir tmp;
  const std::string cache = tmp / "c.cache";
  const std::vector<std::string> all = settled_blocks(tmp, 1000, cache);
  std::string data = slurp(cache);
};

// A cache file whose directory entries are out of path order is corrupt,
// though every sum holds (a writer's bug, sealed as a writer seals): a
// lookup's binary search would miss what follows. Not trusted, the warning
// says so, and the answer is a walk's. Issue 25.
TEST(Cache, AFileWhoseEntriesAreOutOfOrderIsNotTrusted)
{
  SettledFile s;
  std::string &data = s.data;
  // "a/d0070" follows "a/d0069": it shares 5 bytes and goes on with "70"
  // (vars of one byte: 5 and 2). "60" puts it before the entry before it,
  // in the middle of block 1.
  const std::string entry("\x0b\x05" "70", 4);
  const size_t index_len = le_at(data, 40), dirs_len = le_at(data, 48);
  const size_t at = data.find(entry, HEADER_SIZE + index_len);
  ASSERT_NE(at, std::string::npos);
  ASSERT_LT(at, HEADER_SIZE + index_len + dirs_len); // (the first: a/d0170's is the same)
  data[at + 2] = '6';
  // Sealed again: each block's sums in its mark, the index's in the header.
  uint8_t *body = reinterpret_cast<uint8_t *>(&data[HEADER_SIZE]);
  ASSERT_TRUE(cache_test_seal(body, index_len, body + index_len, dirs_len,
                              body + index_len + dirs_len,
                              data.size() - HEADER_SIZE - index_len - dirs_len));
  const uint64_t sum = XXH3_64bits(body, index_len);
  for (int k = 0; k < 8; k++)
    data[24 + k] = static_cast<char>(sum >> (8 * k));
  spit(s.cache, data);
  Fixture f(s.tmp / "tree", {{"**/*.c"}});
  CacheRun r = run(f, s.cache);
  EXPECT_FALSE(r.trusted);
  EXPECT_EQ(r.warning, "is corrupt (its directory entries and records do not agree)");
  EXPECT_EQ(f.results(0), s.all);
  Fixture g(s.tmp / "tree", {{"**/*.c"}});
  CacheRun again = run(g, s.cache);
  EXPECT_TRUE(again.trusted) << again.warning;
  EXPECT_EQ(g.results(0), s.all);
}

// A cache file whose keys (each block's first path, in the index: format
// 15) disagree with the blocks is corrupt, though every sum holds (a
// writer's bug, sealed as a writer seals): a lookup's binary search over
// them would miss what is there. A key that is not its block's first path
// is found when the block is read, by a run that reads the entries whole
// and by a lookup that reads the block alone: not trusted, the warning says
// so, and the answer is a walk's. Keys out of path order are found when the
// index is read. Issue 25.
TEST(Cache, AFileWhoseKeysDisagreeWithItsBlocksIsNotTrusted)
{
  struct Case {
    const char *name, *key;
    bool loads;
  };
  // Block 2's key: its first entry (the root, "a" and a/d0000 to a/d0061
  // are block 0's 64 entries, a/d0062 to a/d0125 block 1's).
  for (const Case &k : {Case{"not its block's", "a/d0127", true},
                        Case{"out of order", "a/d0026", false}}) {
    SettledFile s;
    std::string &data = s.data;
    const size_t index_len = le_at(data, 40);
    const size_t at = data.find("a/d0126", HEADER_SIZE);
    ASSERT_LT(at, HEADER_SIZE + index_len) << "the key is not in the index";
    data.replace(at, 7, k.key);
    // The index's sum sealed again (the blocks' are as they were).
    const uint8_t *body = reinterpret_cast<const uint8_t *>(&data[HEADER_SIZE]);
    const uint64_t sum = XXH3_64bits(body, index_len);
    for (int b = 0; b < 8; b++)
      data[24 + b] = static_cast<char>(sum >> (8 * b));
    spit(s.cache, data);
    char *why = nullptr;
    cache_file *c = cache_load(s.cache.c_str(), &why);
    EXPECT_EQ(c != nullptr, k.loads) << k.name << ": " << (why ? why : "");
    if (c) {
      // A lookup reads block 2 alone and finds it so (not its sum).
      dir_cursor cur;
      dir_cursor_init(&cur, static_cast<const cached_walk *>(c->walks->pdata[0]));
      dir_entry e;
      guint32 i;
      EXPECT_FALSE(dir_cursor_find(&cur, "a/d0127", 7, &i, &e)) << k.name;
      EXPECT_TRUE(cur.bad);
      EXPECT_FALSE(cur.corrupt) << k.name << ": its sum held";
      dir_cursor_clear(&cur);
      cache_file_free(c);
    } else {
      EXPECT_STREQ(why, "is corrupt (its records do not parse)") << k.name;
    }
    g_free(why);
    Fixture f(s.tmp / "tree", {{"**/*.c"}});
    CacheRun r = run(f, s.cache);
    EXPECT_FALSE(r.trusted) << k.name;
    if (k.loads) {
      EXPECT_EQ(r.warning, "is corrupt (its directory entries and records do not agree)");
    }
    EXPECT_EQ(f.results(0), s.all) << k.name;
    Fixture g(s.tmp / "tree", {{"**/*.c"}});
    CacheRun again = run(g, s.cache);
    EXPECT_TRUE(again.trusted) << k.name << ": " << again.warning;
    EXPECT_EQ(g.results(0), s.all) << k.name;
  }
}

// A check for its changes keeps whole, unread, every block all of whose
// entries are below the directories it leaves unentered, though they are
// below two of them: the blocks where one top-level directory's entries
// end and the next one's begin are not parsed or written again. One whose
// entries a new directory goes between is. Issue 25.
TEST(Cache, ACheckForItsChangesKeepsTheBlocksBetweenTwoUnenteredDirectoriesWhole)
{
  TempDir tmp;
  const std::string cache = tmp / "c.cache";
  make_dir(tmp / "tree");
  // 100 top-level directories of 6 entries each and the root's: 601
  // entries, 10 blocks of 64, each but the first beginning in one
  // directory and ending in another.
  std::vector<std::string> all;
  for (int t = 0; t < 100; t++)
    for (int s = 0; s < 5; s++) {
      char name[32];
      snprintf(name, sizeof name, "t%03d/s%d/f.c", t, s);
      add_file(tmp / "tree", name);
      all.push_back(name);
    }
  std::sort(all.begin(), all.end());
  settle_cache(tmp, cache);
  const unsigned flags = TRAWL_CACHE_WRITE_ON_CHANGE | TRAWL_CACHE_CHANGES_ONLY;
  auto check = [&](const char *name, unsigned long parsed, std::vector<std::string> told) {
    add_settled(tmp, all, name);
    char *why = nullptr;
    cache_file *c = cache_load(cache.c_str(), &why);
    ASSERT_NE(c, nullptr) << why;
    const guint32 blocks = static_cast<const cached_walk *>(c->walks->pdata[0])->n_marks;
    cache_file_free(c);
    unsigned long was[3];
    std::copy(std::begin(cache_test_split_blocks), std::end(cache_test_split_blocks), was);
    Fixture g(tmp / "tree", {{"**/*.c"}});
    CacheRun r = run(g, cache, flags);
    EXPECT_TRUE(cache_run_was_partial(g.plan.get())) << name;
    EXPECT_TRUE(r.written) << name;
    EXPECT_EQ(r.warning, "") << name;
    EXPECT_EQ(changes_told(g.plan.get()), told) << name;
    EXPECT_EQ(cache_test_split_blocks[2] - was[2], parsed) << name << ": blocks parsed";
    EXPECT_EQ(cache_test_split_blocks[0] + cache_test_split_blocks[1] - was[0] - was[1],
              blocks - parsed)
        << name << ": blocks kept whole";
    EXPECT_GE(cache_test_split_blocks[1] - was[1], 5u) << name << ": kept whole by every path";
    bool ordered;
    entries_of(cache, &ordered);
    EXPECT_TRUE(ordered) << name << ": the entries are not in path order";
    expect_settled_answer(tmp, cache, all, name);
  };
  // A file at the top: the root's block alone is parsed (of 10).
  check("new.c", 1, {"0 + new.c"});
  // A directory between t050's entries and t051's, in block 4 (entries 256
  // to 319: t050's are 301 to 306): that block is parsed too, and the new
  // directory's entry goes in its place.
  check("t050x/f.c", 2, {"0 + t050x/f.c"});
  // A change below t051, after it: found by its path.
  check("t051/s0/g.c", 2, {"0 + t051/s0/g.c"});
}

// Where the last file cannot have a second name (no /proc, a file system
// without hard links), the base is a copy of it: the write still happens,
// and reads the same. Issue 25.
TEST(Cache, ABaseIsACopyWhereAFileCannotHaveTwoNames)
{
  TempDir tmp;
  const std::string cache = tmp / "c.cache", base = cache + ".base";
  std::vector<std::string> all = settled_blocks(tmp, 1000, cache);
  const std::string whole = slurp(cache);
  const ino_t was = inode_of(cache);
  add_settled(tmp, all, "c/new.c");
  cache_test_no_links = true;
  Fixture g(tmp / "tree", {{"**/*.c"}});
  CacheRun r = run(g, cache, TRAWL_CACHE_WRITE_ON_CHANGE | TRAWL_CACHE_CHANGES_ONLY);
  cache_test_no_links = false;
  EXPECT_TRUE(r.written);
  EXPECT_EQ(r.write_error, "");
  EXPECT_NE(inode_of(base), 0u) << "no base";
  EXPECT_NE(inode_of(base), was) << "a link, not a copy";
  EXPECT_TRUE(slurp(base) == whole) << "the base is not the last file";
  EXPECT_LT(slurp(cache).size() * 2, whole.size()) << "not written over the base";
  Fixture h(tmp / "tree", {{"**/*.c"}});
  CacheRun again = run(h, cache);
  EXPECT_TRUE(again.trusted);
  EXPECT_EQ(again.warning, "");
  EXPECT_EQ(h.results(0), all);
}

// A file written over a base needs that base, as it was: gone, replaced by
// another file, or cut short, the cache is not trusted (the warning says
// why), the run walks in full, answers right and writes a whole file; a
// block of the base that does not check out is found when it is read.
// Issue 25.
TEST(Cache, AFileWrittenOverABaseNeedsIt)
{
  TempDir tmp;
  const std::string cache = tmp / "c.cache", base = cache + ".base";
  std::vector<std::string> all = settled_blocks(tmp, 1000, cache);
  add_settled(tmp, all, "c/new.c");
  {
    Fixture g(tmp / "tree", {{"**/*.c"}});
    CacheRun r = run(g, cache, TRAWL_CACHE_WRITE_ON_CHANGE | TRAWL_CACHE_CHANGES_ONLY);
    ASSERT_TRUE(r.written);
    ASSERT_NE(inode_of(base), 0u);
  }
  const std::string over = slurp(cache), was = slurp(base);
  struct Case {
    const char *what, *warning;
    std::string base; // "" : none
    bool names_base;  // the warning names the base
  };
  std::string other = was; // the same size, another index's sum
  other[24] ^= 0x01;
  // A byte of block 2's records (below a/: kept in the base), the header
  // and the index as they were.
  char *why = nullptr;
  cache_file *c = cache_load(base.c_str(), &why);
  ASSERT_NE(c, nullptr) << why;
  const cached_walk *w = static_cast<const cached_walk *>(c->walks->pdata[0]);
  const std::string mark(reinterpret_cast<const char *>(w->marks) + MARK_SIZE * 2, MARK_SIZE);
  const size_t at = HEADER_SIZE + le_at(was, 40) + le_at(was, 48) + (le_at(mark, 20) >> 1) +
                    le_at(mark, 28) / 2;
  cache_file_free(c);
  std::string flipped = was;
  flipped[at] ^= 0x01;
  const std::vector<Case> cases = {
      {"gone", "cannot be read (No such file or directory)", "", true},
      {"another file", "another file took its place", other, true},
      {"cut short", "another file took its place", was.substr(0, was.size() - 1), true},
      {"a block corrupt", "corrupt (its records", flipped, false},
  };
  for (const Case &k : cases) {
    spit(cache, over);
    unlink(base.c_str());
    if (!k.base.empty())
      spit(base, k.base);
    Fixture g(tmp / "tree", {{"**/*.c"}});
    CacheRun r = run(g, cache);
    EXPECT_FALSE(r.trusted) << k.what;
    EXPECT_NE(r.warning.find(k.warning), std::string::npos) << k.what << ": " << r.warning;
    if (k.names_base) {
      EXPECT_NE(r.warning.find(base), std::string::npos) << k.what << ": " << r.warning;
    }
    EXPECT_EQ(g.results(0), all) << k.what;
    EXPECT_TRUE(r.written) << k.what;
    EXPECT_EQ(inode_of(base), 0u) << k.what << ": the whole file written left the base";
    Fixture h(tmp / "tree", {{"**/*.c"}});
    CacheRun again = run(h, cache);
    EXPECT_TRUE(again.trusted) << k.what;
    EXPECT_EQ(h.results(0), all) << k.what;
  }
}

// The descriptors this process has open.
size_t open_fds()
{
  size_t n = 0;
  GDir *d = g_dir_open("/proc/self/fd", 0, nullptr);
  if (d == nullptr)
    return 0;
  while (g_dir_read_name(d))
    n++;
  g_dir_close(d);
  return n;
}

// A check for its changes that holds its write (trawl check) holds no
// descriptor for it, though it copies blocks from the last file: that file
// is opened again to be copied, and if another file took its place, the
// write fails and the cache there is left, so that the next check finds
// the change again. Issue 25.
TEST(Cache, AHeldWriteHoldsNoDescriptorAndCopiesFromTheFileItRead)
{
  TempDir tmp;
  const std::string cache = tmp / "c.cache";
  settled_blocks(tmp, 300, cache);
  const std::string before = slurp(cache);
  add_file(tmp / "tree", "c/new.c");
  settle();
  const unsigned flags =
      TRAWL_CACHE_WRITE_ON_CHANGE | TRAWL_CACHE_CHANGES_ONLY | TRAWL_CACHE_HOLD_CHANGED;
  for (bool replace : {true, false}) {
    spit(cache, before);
    const size_t fds = open_fds();
    Fixture g(tmp / "tree", {{"**/*.c"}});
    CacheRun r = run(g, cache, flags);
    EXPECT_TRUE(cache_run_was_partial(g.plan.get()));
    EXPECT_TRUE(r.changed);
    EXPECT_FALSE(r.written) << "held";
    EXPECT_EQ(open_fds(), fds) << "a descriptor held for the write";
    if (replace) { // the same bytes, another file
      const std::string other = tmp / "other";
      spit(other, before);
      ASSERT_EQ(rename(other.c_str(), cache.c_str()), 0);
    }
    TrawlCacheReport rep;
    memset(&rep, 0, sizeof rep);
    EXPECT_EQ(trawl_cache_store(g.plan.get(), &rep), !replace);
    const std::string why = report_message(rep.write_error, TRAWL_CACHE_ERROR_WRITE);
    trawl_cache_report_clear(&rep);
    if (replace) {
      EXPECT_NE(why.find("another file took the place"), std::string::npos) << why;
      EXPECT_EQ(slurp(cache), before) << "the cache there was not left as it was";
      continue;
    }
    EXPECT_EQ(why, "");
    Fixture h(tmp / "tree", {{"**/*.c"}});
    CacheRun again = run(h, cache);
    EXPECT_TRUE(again.trusted);
    EXPECT_FALSE(again.changed);
    EXPECT_EQ(h.results(0).size(), 300u + 2);
  }
}

// A check for its changes reads the records of the blocks it enters alone,
// each checked against its sum: one that does not check out is not
// trusted, and the check walks in full and answers right. Issue 25.
TEST(Cache, ACheckForItsChangesChecksTheRecordsItReads)
{
  TempDir tmp;
  const std::string cache = tmp / "c.cache";
  settled_blocks(tmp, 100, cache);
  // The last block holds "c": a byte of its one record ("h.c") flipped.
  std::string data = slurp(cache);
  char *why = nullptr;
  cache_file *c = cache_load(cache.c_str(), &why);
  ASSERT_NE(c, nullptr) << why;
  const cached_walk *w = static_cast<const cached_walk *>(c->walks->pdata[0]);
  const std::string mark(reinterpret_cast<const char *>(w->marks) + MARK_SIZE * (w->n_marks - 1),
                         MARK_SIZE);
  const size_t recs_at = HEADER_SIZE + le_at(data, 40) + le_at(data, 48);
  const size_t from = recs_at + (le_at(mark, 20) >> 1), to = from + le_at(mark, 28);
  cache_file_free(c);
  const size_t at = data.find("h.c", from);
  ASSERT_LT(at, to) << "c's record is not in the last block";
  data[at] ^= 0x02; // "j.c"
  spit(cache, data);

  add_file(tmp / "tree", "c/new.c");
  settle();
  Fixture g(tmp / "tree", {{"**/*.c"}});
  CacheRun r = run(g, cache, TRAWL_CACHE_WRITE_ON_CHANGE | TRAWL_CACHE_CHANGES_ONLY);
  EXPECT_FALSE(r.trusted);
  EXPECT_NE(r.warning.find("corrupt (its records"), std::string::npos) << r.warning;
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(r.written);
  Fixture h(tmp / "tree", {{"**/*.c"}});
  CacheRun again = run(h, cache);
  EXPECT_TRUE(again.trusted);
  EXPECT_EQ(again.warning, "");
  EXPECT_EQ(h.results(0).size(), 100u + 2);
  EXPECT_EQ(h.results(0).back(), "c/new.c");
}

TEST(Cache, BadFilesAreNotTrustedAndAreReplaced)
{
  TempDir tmp;
  const std::string cache = prime(tmp);
  const std::string good = slurp(cache);
  ASSERT_GT(good.size(), 100u);
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x20;
  std::string index_flipped = good; // a byte of the first walk's root path, in the index
  index_flipped[good.find("tree")] ^= 0x01;
  std::string recs_flipped = good;  // the last record's mask, in the records
  recs_flipped[good.size() - 1] ^= 0x01;
  std::string dirs_flipped = good;  // a byte of a directory's entry, in the region of them
  dirs_flipped[HEADER_SIZE + le_at(good, 40) + le_at(good, 48) / 2] ^= 0x01;
  std::string version = good;
  version[8] = static_cast<char>(CACHE_FORMAT + 1); // the next format's, not this one's
  const std::vector<std::pair<std::string, std::string>> bad = {
    {"", "truncated"},
    {good.substr(0, 40), "truncated"},
    {good.substr(0, good.size() - 1), "truncated"},
    {good + "x", "truncated"},
    {flipped, "corrupt"},
    {index_flipped, "corrupt (its checksum"},
    {recs_flipped, "corrupt (its records"},
    {dirs_flipped, "corrupt (a block of its directory entries"},
    {version, "format version " + std::to_string(CACHE_FORMAT + 1) + ","},
    {std::string(200, 'x'), "not a trawl cache"},
  };
  for (const auto &[data, why] : bad) {
    spit(cache, data);
    Fixture f(tmp / "tree", {{"**/*.c"}});
    CacheRun r = run(f, cache);
    EXPECT_TRUE(r.ok);
    EXPECT_FALSE(r.trusted) << why;
    EXPECT_NE(r.warning.find(why), std::string::npos) << "warning: " << r.warning;
    EXPECT_EQ(f.results(0), fresh(tmp / "tree", {"**/*.c"}));
    EXPECT_TRUE(r.written);
    Fixture g(tmp / "tree", {{"**/*.c"}});
    EXPECT_TRUE(run(g, cache).trusted) << "not replaced after: " << why;
  }
}

// A byte flipped in one block of a walk's directory entries (those between
// two marks, format 10) is caught when that block is read: by a lookup
// through the marks, which answers nothing from it, by the re-check with
// watchman's answer when it needs that block ("changed", never "as
// recorded"), and by any pass over every entry; a re-check that needs only
// other blocks reads only those, each checked. A run then trusts nothing of
// the file, says so, and replaces it.
TEST(Cache, ABlockOfEntriesThatDoesNotCheckOutIsCaughtWhenRead)
{
  TempDir tmp;
  make_dir(tmp / "tree");
  for (int k = 0; k < 40; k++)
    for (int j = 0; j < 5; j++)
      add_file(tmp / "tree", "p/q" + std::to_string(k) + "/r" + std::to_string(j) + "/f.c");
  const std::string cache = tmp / "c.cache";
  settle();
  for (int k = 0; k < 2; k++) { // written, then written again with nothing racy
    Fixture f(tmp / "tree", {{"**/*.c"}});
    run(f, cache);
    settle();
  }
  char *why = nullptr;
  ASSERT_GE(cache_read_all(cache.c_str(), &why), 0) << (why ? why : "");
  std::string data = slurp(cache);
  // The last block's place in the file, and a path in it and one in block 1.
  cache_file *c = cache_load(cache.c_str(), &why);
  ASSERT_NE(c, nullptr) << why;
  const cached_walk *w = static_cast<const cached_walk *>(c->walks->pdata[0]);
  ASSERT_EQ(w->n_dirs, 40u * 5 + 40 + 2);
  const guint32 every = w->mark_every, last = w->n_marks - 1;
  ASSERT_EQ(w->n_marks, 4u);
  auto mark = [&](guint32 m) {
    return le_at(std::string((const char *)w->marks + MARK_SIZE * m, 8), 0);
  };
  const size_t at = HEADER_SIZE + le_at(data, 40) + w->dirs_off + (mark(last) + w->dirs_bytes) / 2;
  std::string in_one, in_last;
  {
    dir_cursor cur;
    dir_cursor_init(&cur, w);
    dir_entry e;
    ASSERT_TRUE(dir_cursor_at(&cur, every + 1, &e));
    in_one.assign(e.path, e.len);
    ASSERT_TRUE(dir_cursor_at(&cur, last * every + 1, &e));
    in_last.assign(e.path, e.len);
    dir_cursor_clear(&cur);
  }
  cache_file_free(c);
  data[at] ^= 0x01;
  spit(cache, data);

  c = cache_load(cache.c_str(), &why); // the index holds
  ASSERT_NE(c, nullptr) << why;
  w = static_cast<const cached_walk *>(c->walks->pdata[0]);
  const int root_fd = open((tmp / "tree").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(root_fd, 0);
  {
    dir_cursor cur;
    dir_cursor_init(&cur, w);
    dir_entry e;
    guint32 i;
    EXPECT_TRUE(dir_cursor_at(&cur, every + 1, &e));
    EXPECT_TRUE(dir_cursor_find(&cur, in_one.data(), in_one.size(), &i, &e));
    EXPECT_FALSE(cur.corrupt);
    EXPECT_FALSE(dir_cursor_at(&cur, last * every + 1, &e)) << "an entry of a bad block read";
    EXPECT_TRUE(cur.corrupt);
    dir_cursor_clear(&cur);
    dir_cursor_init(&cur, w);
    EXPECT_FALSE(dir_cursor_find(&cur, in_last.data(), in_last.size(), &i, &e));
    EXPECT_TRUE(cur.corrupt);
    dir_cursor_clear(&cur);
  }
  guint64 checked = 0;
  Touched none({}), one({in_one + "/x"}), in({in_last + "/x"});
  unsigned long before = cache_test_blocks_read;
  EXPECT_TRUE(walk_unchanged_but(w, root_fd, none.t, &checked)) << "the bad block is not needed";
  EXPECT_EQ(cache_test_blocks_read - before, 1u);
  EXPECT_TRUE(walk_unchanged_but(w, root_fd, one.t, &checked)) << "the bad block is not needed";
  EXPECT_FALSE(walk_unchanged_but(w, root_fd, in.t, &checked)) << "a bad block trusted";
  EXPECT_FALSE(c->dirs_checked);
  const guint8 *from, *to;
  EXPECT_FALSE(cached_walk_dirs(w, &from, &to)) << "the region read whole checked out";
  EXPECT_FALSE(walk_unchanged(w, root_fd)) << "a bad block trusted by the stat path";
  EXPECT_EQ(cached_memo(w), nullptr);
  close(root_fd);
  cache_file_free(c);
  EXPECT_EQ(cache_read_all(cache.c_str(), &why), -4);
  g_free(why);

  Fixture f(tmp / "tree", {{"**/*.c"}});
  CacheRun r = run(f, cache);
  EXPECT_FALSE(r.trusted);
  EXPECT_NE(r.warning.find("is corrupt (a block of its directory entries"), std::string::npos)
      << r.warning;
  EXPECT_EQ(f.results(0), fresh(tmp / "tree", {"**/*.c"}));
  EXPECT_TRUE(r.written);
  Fixture g(tmp / "tree", {{"**/*.c"}});
  EXPECT_TRUE(run(g, cache).trusted) << "not replaced";
}

// A cache another trawl wrote is not trusted, even when every checksum
// holds: a new trawl may decide differently. The version string in the
// index is changed and the index's checksum made right again.
TEST(Cache, AnotherTrawlVersionIsNotTrusted)
{
  TempDir tmp;
  const std::string cache = prime(tmp);
  std::string data = slurp(cache);
  const std::string version = TRAWL_VERSION_STRING;
  auto le = [&](size_t at, int n) {
    uint64_t v = 0;
    for (int i = n; i-- > 0;)
      v = v << 8 | (uint8_t)data[at + i];
    return v;
  };
  ASSERT_EQ(le(HEADER_SIZE, 4), version.size());
  ASSERT_EQ(data.substr(HEADER_SIZE + 4, version.size()), version);
  data[HEADER_SIZE + 4 + version.size() - 1] ^= 0x01; // "0.1.0" -> "0.1.1"
  const uint64_t index_len = le(40, 8);
  uint64_t sum = XXH3_64bits(data.data() + HEADER_SIZE, (size_t)index_len);
  for (int i = 0; i < 8; i++, sum >>= 8)
    data[24 + i] = (char)(sum & 0xff);
  spit(cache, data);
  Fixture f(tmp / "tree", {{"**/*.c"}});
  CacheRun r = run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
  EXPECT_FALSE(r.trusted);
  EXPECT_NE(r.warning.find("was written by trawl"), std::string::npos) << r.warning;
  EXPECT_TRUE(r.changed) << "a cache not trusted says nothing of the tree";
}

// A start directory is opened component by component, no link on the way
// (without --follow): "a" turned into a link to where "a" went leads to the
// very same "a/b", stamp and all, but a walk does not go through it. The
// re-check must not either.
TEST(Cache, AStartDirectoryBehindALinkIsNotReached)
{
  TempDir tmp;
  make_dir(tmp / "tree");
  add_file(tmp / "tree", "a/b/c.c");
  const std::string cache = tmp / "c.cache";
  settle();
  {
    Fixture f(tmp / "tree", {{"a/b/**"}});
    run(f, cache);
    EXPECT_EQ(f.results(0), (std::vector<std::string>{"a/b/c.c"}));
  }
  ASSERT_EQ(rename((tmp / "tree/a").c_str(), (tmp / "tree/x").c_str()), 0);
  make_link("x", tmp / "tree/a");
  settle();
  Fixture f(tmp / "tree", {{"a/b/**"}});
  CacheRun r = run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(f.results(0), fresh(tmp / "tree", {"a/b/**"}));
  EXPECT_TRUE(f.results(0).empty());
}

TEST(Cache, OtherQueriesOrRootsAreNotTrusted)
{
  TempDir tmp;
  make_dir(tmp / "one");
  make_dir(tmp / "two");
  make_tree(tmp / "one");
  add_file(tmp / "two", "only.c");
  const std::string cache = tmp / "c.cache";
  ASSERT_EQ(symlink("one", (tmp / "root").c_str()), 0);
  {
    Fixture f(tmp / "root", {{"**/*.c"}});
    EXPECT_TRUE(run(f, cache).written);
  }
  {
    Fixture f(tmp / "root", {{"**/*.h"}});
    CacheRun r = run(f, cache);
    EXPECT_FALSE(r.trusted);
    EXPECT_EQ(r.warning, "was written for other queries");
  }
  {
    Fixture f(tmp / "root", {{"**/*.h"}});
    EXPECT_TRUE(run(f, cache).trusted);
  }
  // The same root spelled the same way, another directory behind it.
  unlink((tmp / "root").c_str());
  ASSERT_EQ(symlink("two", (tmp / "root").c_str()), 0);
  Fixture f(tmp / "root", {{"**/*.h"}});
  CacheRun r = run(f, cache);
  EXPECT_FALSE(r.trusted);
  EXPECT_EQ(r.warning, "was written for other roots");
}

// A root that is gone: the run fails with the root's own error, the cache is
// not trusted, and no warning says it was written for other roots (until
// 2026-12-02 `trawl check` printed both, the second one wrong).
TEST(Cache, ARootGoneIsTheRunsErrorNotOtherRoots)
{
  TempDir tmp;
  make_dir(tmp / "root");
  make_tree(tmp / "root");
  const std::string cache = tmp / "c.cache";
  {
    Fixture f(tmp / "root", {{"**/*.c"}});
    EXPECT_TRUE(run(f, cache).written);
  }
  ASSERT_EQ(system(("rm -rf '" + (tmp / "root") + "'").c_str()), 0);
  Fixture f(tmp / "root", {{"**/*.c"}});
  CacheRun r = run(f, cache);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.trusted);
  EXPECT_EQ(r.warning, "");
}

// git's configuration for a test: TMP/gitconfig (empty) as the global file,
// no system file; unset again when it goes.
struct GitEnv {
  std::string global;
  explicit GitEnv(const TempDir &tmp) : global(tmp / "gitconfig")
  {
    spit(global, "");
    setenv("GIT_CONFIG_GLOBAL", global.c_str(), 1);
    setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
  }
  ~GitEnv()
  {
    unsetenv("GIT_CONFIG_GLOBAL");
    unsetenv("GIT_CONFIG_NOSYSTEM");
  }
};

// TMP/repo, a git repository holding make_tree() (in TMP/repo/SUB when SUB
// is given); its path.
std::string make_repo(const TempDir &tmp, const std::string &sub = "")
{
  const std::string repo = tmp / "repo";
  make_dir(repo);
  EXPECT_EQ(system(("git init -q '" + repo + "'").c_str()), 0);
  const std::string tree = sub.empty() ? repo : repo + "/" + sub;
  if (!sub.empty())
    make_dir(tree);
  make_tree(tree);
  return repo;
}

TEST(Cache, IgnoreSourcesOutsideTheWalk)
{
  TempDir tmp;
  const std::string repo = make_repo(tmp, "sub");
  GitEnv git(tmp);
  const std::string &global = git.global;
  const std::string cache = tmp / "c.cache";
  const unsigned ig = TRAWL_IGNORE_VCS | TRAWL_IGNORE_DOT;
  settle();
  {
    Fixture f(repo + "/sub", {{"**/*.c"}}, ig);
    run(f, cache);
    EXPECT_EQ(f.results(0).size(), 4u);
  }
  // info/exclude edited in place, then a .gitignore above the root made:
  // the walk is not trusted, and sees them.
  spit(repo + "/.git/info/exclude", "lib/\n");
  settle();
  {
    Fixture f(repo + "/sub", {{"**/*.c"}}, ig);
    CacheRun r = run(f, cache);
    EXPECT_TRUE(r.trusted);
    EXPECT_GT(r.read, 0u);
    EXPECT_EQ(f.results(0), fresh(repo + "/sub", {"**/*.c"}, ig));
    EXPECT_EQ(f.results(0), (std::vector<std::string>{"a.c", "src/c.c", "src/d/e.c"}));
  }
  spit(repo + "/.gitignore", "d/\n");
  settle();
  {
    Fixture f(repo + "/sub", {{"**/*.c"}}, ig);
    run(f, cache);
    EXPECT_EQ(f.results(0), (std::vector<std::string>{"a.c", "src/c.c"}));
  }
  // The excludes file named in the global config, then edited.
  spit(tmp / "excludes", "a.c\n");
  spit(global, "[core]\n\texcludesFile = " + tmp / "excludes" + "\n");
  settle();
  {
    Fixture f(repo + "/sub", {{"**/*.c"}}, ig);
    run(f, cache);
    EXPECT_EQ(f.results(0), (std::vector<std::string>{"src/c.c"}));
  }
  spit(tmp / "excludes", "nothing\n");
  settle();
  {
    Fixture f(repo + "/sub", {{"**/*.c"}}, ig);
    CacheRun r = run(f, cache);
    EXPECT_TRUE(r.changed);
    EXPECT_EQ(f.results(0), (std::vector<std::string>{"a.c", "src/c.c"}));
  }
  // Unchanged since: trusted whole.
  settle();
  {
    Fixture f(repo + "/sub", {{"**/*.c"}}, ig);
    CacheRun r = run(f, cache);
    EXPECT_EQ(r.read, 0u);
  }
}

// A `.git` above the root that is not a repository (no HEAD, objects or
// refs) does not make a work tree; `git init` in it later does, and its
// .gitignore then applies. The sources are re-checked by their stamps alone
// (cache format 2), so those of the `.git` that is not yet a repository must
// be among them: the re-check says "changed", and both runs see the rule.
TEST(Cache, AGitDirectoryBecomingARepositoryIsSeen)
{
  TempDir tmp;
  const std::string outer = tmp / "outer";
  make_dir(outer);
  make_dir(outer + "/.git");
  spit(outer + "/.gitignore", "*.c\n");
  make_dir(outer + "/sub");
  make_tree(outer + "/sub");
  GitEnv git(tmp);
  const std::string cache = tmp / "c.cache";
  const unsigned ig = TRAWL_IGNORE_VCS | TRAWL_IGNORE_DOT;
  settle();
  {
    Fixture f(outer + "/sub", {{"**/*.c"}}, ig);
    run(f, cache);
    EXPECT_EQ(f.results(0).size(), 4u) << "no repository yet: the .gitignore is not read";
  }
  settle();
  {
    Fixture f(outer + "/sub", {{"**/*.c"}}, ig);
    CacheRun r = run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
    EXPECT_TRUE(r.trusted);
    EXPECT_FALSE(r.changed);
  }
  ASSERT_EQ(system(("git init -q '" + outer + "'").c_str()), 0);
  settle();
  {
    Fixture f(outer + "/sub", {{"**/*.c"}}, ig);
    CacheRun r = run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
    EXPECT_TRUE(r.changed) << "the re-check missed the new repository";
    EXPECT_EQ(f.results(0), fresh(outer + "/sub", {"**/*.c"}, ig));
    EXPECT_TRUE(f.results(0).empty());
  }
}

// The environment chooses git's configuration and its excludes file
// (XDG_CONFIG_HOME here): another environment is another set of outside
// sources, whatever their stamps.
TEST(Cache, AnotherEnvironmentIsSeen)
{
  TempDir tmp;
  const std::string repo = make_repo(tmp);
  GitEnv git(tmp);
  for (const char *x : {"xdg1", "xdg2"}) {
    make_dir(tmp / x);
    make_dir(tmp / x + "/git");
  }
  spit(tmp / "xdg1/git/ignore", "nothing\n");
  spit(tmp / "xdg2/git/ignore", "*.c\n");
  const std::string cache = tmp / "c.cache";
  const unsigned ig = TRAWL_IGNORE_VCS | TRAWL_IGNORE_DOT;
  setenv("XDG_CONFIG_HOME", (tmp / "xdg1").c_str(), 1);
  settle();
  {
    Fixture f(repo, {{"**/*.c"}}, ig);
    run(f, cache);
    EXPECT_EQ(f.results(0).size(), 4u);
  }
  setenv("XDG_CONFIG_HOME", (tmp / "xdg2").c_str(), 1);
  {
    Fixture f(repo, {{"**/*.c"}}, ig);
    CacheRun r = run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
    EXPECT_TRUE(r.changed) << "another excludes file, chosen by the environment, was missed";
    EXPECT_TRUE(f.results(0).empty());
  }
  unsetenv("XDG_CONFIG_HOME");
}

// An outside source stamped in the tick of the run that records it may
// change again unseen (git's racy timestamps): it is recorded as racy, and
// the next run does not trust the walk by its stamps (it reads it again).
// The collision is forced by stamping info/exclude a second ahead.
TEST(Cache, ARacyOutsideSourceIsNotTrusted)
{
  TempDir tmp;
  const std::string repo = make_repo(tmp);
  GitEnv git(tmp);
  const std::string cache = tmp / "c.cache";
  const unsigned ig = TRAWL_IGNORE_VCS | TRAWL_IGNORE_DOT;
  spit(repo + "/.git/info/exclude", "*.md\n");
  settle();
  struct timespec times[2];
  clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec += 1;
  times[1] = times[0];
  ASSERT_EQ(utimensat(AT_FDCWD, (repo + "/.git/info/exclude").c_str(), times, 0), 0);
  {
    Fixture f(repo, {{"**/*.c"}}, ig);
    run(f, cache);
  }
  Fixture f(repo, {{"**/*.c"}}, ig);
  CacheRun r = run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
  EXPECT_TRUE(r.trusted);
  EXPECT_GT(r.read, 0u) << "a racy outside source was trusted";
  EXPECT_FALSE(cache_run_was_quick(f.plan.get()));
}

TEST(Cache, FailedWriteKeepsTheOldFile)
{
  TempDir tmp;
  const std::string cache = prime(tmp);
  const std::string before = slurp(cache);
  add_file(tmp / "tree", "lib/new.c");
  settle();
  // No room: files may not grow past 64 bytes (SIGXFSZ ignored, so the
  // write fails with EFBIG, as it would with ENOSPC).
  struct rlimit old;
  getrlimit(RLIMIT_FSIZE, &old);
  struct rlimit small = {64, old.rlim_max};
  signal(SIGXFSZ, SIG_IGN);
  setrlimit(RLIMIT_FSIZE, &small);
  Fixture f(tmp / "tree", {{"**/*.c"}});
  CacheRun r = run(f, cache);
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, SIG_DFL);
  EXPECT_TRUE(r.ok);
  EXPECT_FALSE(r.written);
  EXPECT_NE(r.write_error.find("c.cache"), std::string::npos) << r.write_error;
  EXPECT_EQ(f.results(0), fresh(tmp / "tree", {"**/*.c"}));
  EXPECT_EQ(slurp(cache), before);
  // No temporary file left behind.
  size_t entries = 0;
  for (const auto &e : scan(tmp.path()))
    entries += e.path.find("c.cache") != std::string::npos;
  EXPECT_EQ(entries, 1u);
}

TEST(Cache, ConcurrentWritersNeverTearTheFile)
{
  TempDir tmp;
  make_dir(tmp / "tree");
  make_tree(tmp / "tree");
  for (int i = 0; i < 30; i++)
    add_file(tmp / "tree", "d" + std::to_string(i % 6) + "/f" + std::to_string(i) + ".c");
  const std::string cache = tmp / "c.cache";
  std::vector<pid_t> kids;
  for (int k = 0; k < 4; k++) {
    pid_t pid = fork();
    if (pid == 0) {
      // Each writer changes the tree a little and writes the cache again.
      for (int i = 0; i < 25; i++) {
        const std::string mine = tmp / ("tree/w" + std::to_string(k) + ".c");
        write_file(mine, std::to_string(i));
        unlink(mine.c_str());
        Fixture f(tmp / "tree", {{"**/*.c"}});
        CacheRun r = run(f, cache);
        if (!r.ok || (!r.warning.empty() && r.warning.find("other") == std::string::npos))
          _exit(1);
      }
      _exit(0);
    }
    kids.push_back(pid);
  }
  unsigned loads = 0;
  bool done = false;
  while (!done) {
    done = true;
    for (pid_t p : kids)
      done = done && waitpid(p, nullptr, WNOHANG) != 0;
    GError *error = nullptr;
    TrawlPlan *p = trawl_cache_load_plan(cache.c_str(), &error);
    if (p) {
      loads++;
      trawl_plan_free(p);
    } else {
      EXPECT_TRUE(g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
          << "a reader saw a torn file: " << error->message;
      g_error_free(error);
    }
  }
  for (pid_t p : kids) {
    int status = 0;
    waitpid(p, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer saw a bad file";
  }
  EXPECT_GT(loads, 0u);
}

TEST(Cache, PlanFromCacheAsksTheSameQuestions)
{
  TempDir tmp;
  make_dir(tmp / "tree");
  make_tree(tmp / "tree");
  const std::string cache = tmp / "c.cache";
  settle();
  {
    Fixture f(tmp / "tree", {{"**/*.c", "lib/**"}, {"*.h"}});
    run(f, cache);
  }
  GError *error = nullptr;
  Plan p(trawl_cache_load_plan(cache.c_str(), &error));
  ASSERT_NE(p, nullptr) << error->message;
  EXPECT_EQ(trawl_plan_size(p.get()), 2u);
  TrawlCacheReport rep;
  EXPECT_TRUE(trawl_cache_run(p.get(), cache.c_str(), TRAWL_CACHE_WRITE_ON_CHANGE, &rep,
                              nullptr));
  EXPECT_TRUE(rep.trusted) << (rep.warning ? rep.warning->message : "");
  EXPECT_FALSE(rep.changed);
  EXPECT_FALSE(rep.written);
  trawl_cache_report_clear(&rep);
  EXPECT_EQ(strings_of(trawl_plan_results(p.get(), 0)),
            (std::vector<std::string>{"a.c", "lib/f.c", "lib/g.md", "src/c.c", "src/d/e.c"}));
  EXPECT_TRUE(cache_run_was_quick(p.get()));
  EXPECT_TRUE(cache_patterns_pending(p.get())) << "the re-check compiled patterns it did not need";
  EXPECT_EQ(trawl_cache_load_plan((tmp / "none").c_str(), nullptr), nullptr);

  // A change: the plan's patterns are compiled for the walk, and ask what
  // they asked when the cache was written.
  add_file(tmp / "tree", "lib/h.c");
  add_file(tmp / "tree", "x.h");
  settle();
  {
    Plan q(trawl_cache_load_plan(cache.c_str(), &error));
    ASSERT_NE(q, nullptr) << error->message;
    EXPECT_TRUE(trawl_cache_run(q.get(), cache.c_str(), TRAWL_CACHE_WRITE_ON_CHANGE, &rep,
                                nullptr));
    EXPECT_TRUE(rep.trusted);
    EXPECT_TRUE(rep.changed);
    EXPECT_EQ(rep.dirs_read, 2u);
    trawl_cache_report_clear(&rep);
    EXPECT_FALSE(cache_patterns_pending(q.get()));
    EXPECT_EQ(strings_of(trawl_plan_results(q.get(), 0)), fresh(tmp / "tree", {"**/*.c", "lib/**"}));
    EXPECT_EQ(strings_of(trawl_plan_results(q.get(), 1)), (std::vector<std::string>{"b.h", "x.h"}));
  }

  // A query added to a plan read from a cache: the plan asks three
  // questions now, not the file's two.
  Plan q(trawl_cache_load_plan(cache.c_str(), &error));
  ASSERT_NE(q, nullptr) << error->message;
  Pattern md = compile("**/*.md");
  const TrawlPattern *mds[] = {md.get()};
  const std::string root = tmp / "tree";
  TrawlQuery extra{};
  extra.root = root.c_str();
  extra.includes = mds;
  extra.n_includes = 1;
  EXPECT_EQ(trawl_plan_add(q.get(), &extra), 2u);
  EXPECT_TRUE(trawl_cache_run(q.get(), cache.c_str(), TRAWL_CACHE_WRITE_ON_CHANGE, &rep,
                              nullptr));
  EXPECT_FALSE(rep.trusted);
  EXPECT_NE(report_message(rep.warning, TRAWL_CACHE_ERROR_UNTRUSTED), "");
  trawl_cache_report_clear(&rep);
  EXPECT_EQ(strings_of(trawl_plan_results(q.get(), 0)), fresh(tmp / "tree", {"**/*.c", "lib/**"}));
  EXPECT_EQ(strings_of(trawl_plan_results(q.get(), 2)), (std::vector<std::string>{"lib/g.md"}));
}

// Why NOBODY (in effect) is not kept out of the directory LOCKED (mode
// 0): "" when it is, and a test of an unreadable directory can run.
std::string not_kept_out(const AsNobody &nobody, const std::string &locked)
{
  if (!nobody.ok())
    return "running as root and cannot become nobody: " + nobody.why();
  const int fd = open(locked.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    return "";
  close(fd);
  return "permissions are not enforced for this process (uid " + std::to_string(geteuid()) + ")";
}

// A directory the walk could not read has no stamp: making it readable
// (chmod changes its own ctime, not its parent's mtime) changes no stamp
// recorded. So a walk with a problem is never re-checked by stamps alone:
// it is walked again (replayed where it can be), the problem told again,
// and once the directory can be read its files are found. Run as nobody,
// since root reads anything; skipped where that cannot be.
TEST(Cache, AnUnreadableDirectoryIsTriedAgain)
{
  TempDir tmp;
  chmod(tmp.path().c_str(), 0777);
  make_dir(tmp / "tree");
  chmod((tmp / "tree").c_str(), 0755);
  for (const char *p : {"a.c", "open/b.c", "locked/c.c"})
    add_file(tmp / "tree", p);
  chmod((tmp / "tree/locked").c_str(), 0);
  const std::string cache = tmp / "c.cache";
  settle();
  {
    AsNobody nobody;
    const std::string why = not_kept_out(nobody, tmp / "tree/locked");
    if (!why.empty())
      GTEST_SKIP() << why;
    Fixture f(tmp / "tree", {{"**/*.c"}});
    run(f, cache);
    EXPECT_EQ(f.results(0), (std::vector<std::string>{"a.c", "open/b.c"}));
    EXPECT_EQ(trawl_plan_problems(f.plan.get(), 0)->len, 1u);
  }
  settle();
  {
    AsNobody nobody;
    Fixture f(tmp / "tree", {{"**/*.c"}});
    CacheRun r = run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
    EXPECT_TRUE(r.trusted);
    EXPECT_FALSE(r.changed);
    EXPECT_EQ(r.read, 0u);
    EXPECT_FALSE(cache_run_was_quick(f.plan.get()));
    EXPECT_EQ(trawl_plan_problems(f.plan.get(), 0)->len, 1u) << "the problem is told again";
  }
  chmod((tmp / "tree/locked").c_str(), 0755);
  {
    AsNobody nobody;
    Fixture f(tmp / "tree", {{"**/*.c"}});
    CacheRun r = run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
    EXPECT_TRUE(r.changed);
    EXPECT_EQ(r.read, 1u);
    EXPECT_EQ(f.results(0), (std::vector<std::string>{"a.c", "locked/c.c", "open/b.c"}));
    EXPECT_EQ(trawl_plan_problems(f.plan.get(), 0)->len, 0u);
  }
}

// A walk with a problem, in a git work tree whose index git then wrote
// again: the run that answers from it asks the index again for both
// reasons at once, with one reader (until 2026-12-04 a second replaced the
// first, which leaked: LeakSanitizer, in the sanitized run of this suite).
// Run as nobody, as above.
TEST(Cache, AWalkWithAProblemAfterTheIndexMovedAsksTheIndexOnce)
{
  TempDir tmp;
  chmod(tmp.path().c_str(), 0777);
  const std::string tree = tmp / "tree";
  make_dir(tree);
  chmod(tree.c_str(), 0755);
  ASSERT_EQ(system(("git init -q '" + tree + "'").c_str()), 0);
  for (const char *p : {"a.c", "b.c", "open/b.c", "locked/c.c"})
    add_file(tree, p);
  spit(tree + "/.gitignore", "/b.c\n"); // so the walk asks the index whether b.c is tracked
  // The work tree nobody's, as git wants a repository's owner to be the
  // user who reads it (root's git told so).
  const std::string git = "git -c safe.directory='*' -C '" + tree + "' ";
  ASSERT_EQ(system((git + "add a.c && chown -R nobody '" + tree + "'").c_str()), 0);
  chmod((tmp / "tree/locked").c_str(), 0);
  const std::string cache = tmp / "c.cache";
  // git's excludes file where nobody can read it: not root's.
  const std::string home = g_getenv("HOME") ? g_getenv("HOME") : "";
  g_setenv("HOME", tmp.path().c_str(), TRUE);
  struct HomeBack {
    std::string home;
    ~HomeBack() { g_setenv("HOME", home.c_str(), TRUE); }
  } back{home};
  settle();
  {
    AsNobody nobody;
    const std::string why = not_kept_out(nobody, tmp / "tree/locked");
    if (!why.empty())
      GTEST_SKIP() << why;
    Fixture f(tree, {{"**/*.c"}}, TRAWL_IGNORE_VCS | TRAWL_IGNORE_DOT);
    run(f, cache);
    EXPECT_EQ(f.results(0), (std::vector<std::string>{"a.c", "open/b.c"}));
    EXPECT_EQ(trawl_plan_problems(f.plan.get(), 0)->len, 1u);
  }
  // b.c tracked now: git keeps it, and so does the walk.
  ASSERT_EQ(system((git + "add -f b.c && chown nobody '" + tree + "/.git/index'").c_str()), 0);
  settle();
  {
    AsNobody nobody;
    Fixture f(tree, {{"**/*.c"}}, TRAWL_IGNORE_VCS | TRAWL_IGNORE_DOT);
    CacheRun r = run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
    EXPECT_TRUE(r.changed);
    EXPECT_EQ(f.results(0), (std::vector<std::string>{"a.c", "b.c", "open/b.c"}));
    EXPECT_EQ(trawl_plan_problems(f.plan.get(), 0)->len, 1u) << "the problem is told again";
  }
}

// A cached run of an unchanged tree hands over the records' results in the
// order a walk prints them: start directories by their path and a `/`
// (`src-x` and `src.y` before `src`, whose entries sort as `src/...`), a
// nested one inside its parent's pass, each directory's subdirectories at
// their place among its files. Compared, in order, with a fresh walk.
TEST(Cache, ResultsFromTheRecordsComeInTheWalksOrder)
{
  TempDir tmp;
  make_dir(tmp / "tree");
  for (const char *p : {"src/a.c", "src/a/b.c", "src/a.b/c.c", "src/a-b.c", "src-x/d.c",
                        "src.y/e.c", "src.y/f/g.c", "top.c", "lib/h.c"})
    add_file(tmp / "tree", p);
  settle();
  // Start directories only (the root is on the way), then with the root read.
  const std::vector<std::vector<std::string>> starts = {{"{src,src-x,src.y}/**"},
                                                        {"src/a/**", "src.y/**/*.c"}};
  std::vector<std::vector<std::string>> all = starts;
  all.push_back({"**/*.c"});
  int k = 0;
  for (const auto &queries : {starts, all}) {
    SCOPED_TRACE(k ? "with the root read" : "start directories only");
    const std::string cache = tmp / ("c" + std::to_string(k++) + ".cache");
    {
      Fixture f(tmp / "tree", queries);
      run(f, cache);
    }
    Fixture f(tmp / "tree", queries);
    std::vector<std::vector<std::string>> got(queries.size());
    TrawlCacheReport rep;
    ASSERT_TRUE(trawl_cache_run_each(
        f.plan.get(), cache.c_str(), 0,
        [](size_t q, const char *path, size_t len, void *data) {
          (*static_cast<std::vector<std::vector<std::string>> *>(data))[q].emplace_back(path,
                                                                                       len);
        },
        &got, &rep, nullptr));
    EXPECT_TRUE(rep.trusted);
    EXPECT_EQ(rep.dirs_read, 0u);
    trawl_cache_report_clear(&rep);
    EXPECT_TRUE(cache_run_was_quick(f.plan.get()));
    for (size_t q = 0; q < queries.size(); q++) {
      EXPECT_EQ(got[q], fresh(tmp / "tree", queries[q])) << show(queries[q]);
      EXPECT_TRUE(std::is_sorted(got[q].begin(), got[q].end())) << show(queries[q]);
    }
    EXPECT_EQ(got[0].front(), "src-x/d.c");
    // And kept, as trawl_plan_results() lists them after such a run.
    Fixture g(tmp / "tree", queries);
    run(g, cache);
    EXPECT_TRUE(cache_run_was_quick(g.plan.get()));
    for (size_t q = 0; q < queries.size(); q++)
      EXPECT_EQ(g.results(q), got[q]);
  }
}

// With the watchman back-end (run by tests/cache/watchman_cache.py,
// which starts a private daemon): a change made while a walk runs, in a
// directory it has read already, is after the clock the cache records, so
// the next re-check is told of it. The directory's record is old (not
// racy), so without a clock taken before the walk nothing would stat it:
// the stale answer would stand.
void add_late(void *data)
{
  add_file(*static_cast<const std::string *>(data), "src/d/late.c");
}

// The watchman rows, run by tests/cache/watchman_cache.py against its
// private daemon, as the property test runs: as nobody when root (the
// daemon is nobody's then), in a temporary directory nobody owns.
class CacheWatchman : public ::testing::Test {
protected:
  void SetUp() override
  {
    if (!getenv("TRAWL_TEST_WATCHMAN"))
      GTEST_SKIP() << "run with a private watchman daemon by tests/cache/watchman_cache.py";
    if (geteuid() == 0) {
      const struct passwd *pw = getpwnam("nobody");
      ASSERT_NE(pw, nullptr);
      ASSERT_EQ(lchown(tmp.path().c_str(), pw->pw_uid, pw->pw_gid), 0);
    }
    as.emplace();
    ASSERT_TRUE(as->ok()) << as->why();
  }
  TempDir tmp; // (removed after `as` gives the ids back)
  std::optional<AsNobody> as;
};

TEST_F(CacheWatchman, AChangeWhileTheWalkRunsIsNamedNextTime)
{
  make_dir(tmp / "tree");
  make_tree(tmp / "tree");
  // Where watchman makes its sync cookies: not the root (docs/cache.md,
  // "Watchman", sync cookies).
  make_dir(tmp / "tree/.git");
  const std::string cache = tmp / "c.cache";
  settle();
  {
    // The first run has no watch to ask yet; it makes one (TRAWL_WATCHMAN=on)
    // and records its clock.
    Fixture f(tmp / "tree", {{"**/*.c"}});
    CacheRun r = run(f, cache);
    EXPECT_TRUE(r.written);
  }
  add_file(tmp / "tree", "src/d/first.c"); // a change for the second run to read
  settle();
  {
    const std::string root = tmp / "tree";
    cache_test_after_walk = add_late;
    cache_test_after_walk_data = const_cast<std::string *>(&root);
    Fixture f(tmp / "tree", {{"**/*.c"}});
    CacheRun r = run(f, cache);
    cache_test_after_walk = nullptr;
    EXPECT_EQ(r.watchman.rfind("used", 0), 0u) << r.watchman;
    EXPECT_TRUE(r.written);
    EXPECT_EQ(f.results(0),
              (std::vector<std::string>{"a.c", "lib/f.c", "src/c.c", "src/d/e.c", "src/d/first.c"}));
  }
  settle();
  Fixture g(tmp / "tree", {{"**/*.c"}});
  CacheRun r = run(g, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
  EXPECT_EQ(r.watchman.rfind("used", 0), 0u) << r.watchman;
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(g.results(0), fresh(tmp / "tree", {"**/*.c"}));
  EXPECT_EQ(g.results(0), (std::vector<std::string>{"a.c", "lib/f.c", "src/c.c", "src/d/e.c",
                                                    "src/d/first.c", "src/d/late.c"}));
}

// A check that finds every directory as recorded, watchman's answer naming
// many paths (files edited in place: their directory is stat'ed and is as
// recorded), records the answer's clock, so that the next answer starts
// there (cache.c, CLOCK_REFRESH_NAMES: 256).
TEST_F(CacheWatchman, ALongAnswerWithNothingChangedRecordsItsClock)
{
  make_dir(tmp / "tree");
  make_dir(tmp / "tree/.git");
  make_dir(tmp / "tree/many");
  for (int i = 0; i < 300; i++)
    spit(tmp / ("tree/many/f" + std::to_string(i) + ".c"), "x");
  const std::string cache = tmp / "c.cache";
  settle();
  {
    Fixture f(tmp / "tree", {{"**/*.c"}});
    EXPECT_TRUE(run(f, cache).written);
  }
  settle();
  {
    // What was racy read once more: then nothing is.
    Fixture f(tmp / "tree", {{"**/*.c"}});
    run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
  }
  settle();
  for (int i = 0; i < 300; i++)
    spit(tmp / ("tree/many/f" + std::to_string(i) + ".c"), "y");
  settle();
  {
    Fixture f(tmp / "tree", {{"**/*.c"}});
    CacheRun r = run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
    EXPECT_EQ(r.watchman, "used: 300 paths changed");
    EXPECT_EQ(r.read, 0u);
    EXPECT_FALSE(r.changed);
    EXPECT_TRUE(r.written) << "the new clock was not recorded";
  }
  Fixture f(tmp / "tree", {{"**/*.c"}});
  CacheRun r = run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
  EXPECT_EQ(r.watchman, "used: 0 paths changed");
  EXPECT_EQ(r.read, 0u);
  EXPECT_FALSE(r.written);
  EXPECT_EQ(f.results(0).size(), 300u);
}

// A cache written over a base records a new clock as it records the rest:
// over the same base, its own blocks as they were (cache_store_clocks()).
// Issue 25.
// NAME added to TMP's tree (ALL) and a check for its changes with watchman
// run on CACHE, which it writes over a base: that base's inode (0: none).
ino_t checked_over_a_base(TempDir &tmp, const std::string &cache, std::vector<std::string> &all,
                          const std::string &name)
{
  add_settled(tmp, all, name);
  Fixture f(tmp / "tree", {{"**/*.c"}});
  CacheRun r = run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE | TRAWL_CACHE_CHANGES_ONLY);
  EXPECT_EQ(r.watchman.rfind("used", 0), 0u) << name << ": " << r.watchman;
  EXPECT_TRUE(r.written) << name;
  return inode_of(cache + ".base");
}

// With watchman, a check for its changes reads of the entries only the
// blocks it must (format 15: each block's first path in the index): the
// lookups of what it replays read the block each is in, not the blocks a
// binary search passes; the blocks below a directory it leaves unentered
// from their first entry to the next block's are kept by their keys,
// unread; the region of every entry is never read whole. Issue 25.
TEST_F(CacheWatchman, ACheckForItsChangesReadsOnlyTheBlocksItMust)
{
  make_dir(tmp / "tree");
  make_dir(tmp / "tree/.git"); // (watchman watches the project's root)
  const std::string cache = tmp / "c.cache";
  std::vector<std::string> all = settled_blocks(tmp, 1000, cache);
  add_settled(tmp, all, "c/new.c");
  const unsigned long blocks = cache_test_blocks_read, whole = cache_test_dirs_read_whole;
  const unsigned long kept_by_keys = cache_test_split_blocks[0];
  {
    Fixture f(tmp / "tree", {{"**/*.c"}});
    CacheRun r = run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE | TRAWL_CACHE_CHANGES_ONLY);
    EXPECT_EQ(r.watchman.rfind("used", 0), 0u) << r.watchman;
    EXPECT_TRUE(cache_run_was_partial(f.plan.get()));
    EXPECT_TRUE(r.written);
    EXPECT_EQ(changes_told(f.plan.get()), (std::vector<std::string>{"0 + c/new.c"}));
  }
  // 1,003 entries, 16 blocks: the root's (it holds "a", unentered) and the
  // last (it holds "c", read again) are read; the 14 between them are
  // below "a/" from their first entry to the next one's.
  EXPECT_EQ(cache_test_dirs_read_whole, whole) << "the region of every entry was read";
  EXPECT_EQ(cache_test_split_blocks[0] - kept_by_keys, 14u) << "blocks not kept by their keys";
  EXPECT_EQ(cache_test_blocks_read - blocks, 2u) << "blocks kept by their keys were read";
  expect_settled_answer(tmp, cache, all, "after c/new.c");
}

// With watchman, a check for its changes copies a block it kept by its
// keys without having read it, when the block is not in the base the new
// file is written over (one the last check wrote): it reads it to copy it,
// and the file written answers as a walk does. Issue 25.
TEST_F(CacheWatchman, ACheckCopiesABlockItKeptUnreadFromTheLastFile)
{
  make_dir(tmp / "tree");
  make_dir(tmp / "tree/.git"); // (watchman watches the project's root)
  const std::string cache = tmp / "c.cache", base = cache + ".base";
  std::vector<std::string> all = settled_blocks(tmp, 1000, cache);
  const unsigned flags = TRAWL_CACHE_WRITE_ON_CHANGE | TRAWL_CACHE_CHANGES_ONLY;
  // The first check enters a/ and a/d0500: the block that holds it is
  // written again, in the new file; the rest stays in the base.
  const ino_t was = checked_over_a_base(tmp, cache, all, "a/d0500/g.c");
  ASSERT_NE(was, 0u) << "not written over a base";
  // The second leaves a/ unentered: that block is below "a/" from its first
  // entry to the next one's, kept by its keys, and copied from the last file.
  add_settled(tmp, all, "c/new.c");
  const unsigned long whole = cache_test_dirs_read_whole, filled = cache_test_split_filled;
  {
    Fixture f(tmp / "tree", {{"**/*.c"}});
    CacheRun r = run(f, cache, flags);
    EXPECT_EQ(r.watchman.rfind("used", 0), 0u) << r.watchman;
    EXPECT_TRUE(cache_run_was_partial(f.plan.get()));
    EXPECT_TRUE(r.written);
    EXPECT_EQ(r.write_error, "");
    EXPECT_EQ(changes_told(f.plan.get()), (std::vector<std::string>{"0 + c/new.c"}));
  }
  EXPECT_EQ(inode_of(base), was) << "not written over the same base";
  EXPECT_EQ(cache_test_dirs_read_whole, whole) << "the region of every entry was read";
  EXPECT_GE(cache_test_split_filled - filled, 1u) << "no block read to be copied";
  char *why = nullptr;
  EXPECT_GE(cache_read_all(cache.c_str(), &why), 0) << (why ? why : "");
  g_free(why);
  bool ordered;
  entries_of(cache, &ordered);
  EXPECT_TRUE(ordered);
  expect_settled_answer(tmp, cache, all, "after c/new.c");
}

TEST_F(CacheWatchman, AClockRecordedOverABaseKeepsTheBase)
{
  make_dir(tmp / "tree");
  make_dir(tmp / "tree/.git");
  // More files than directories, to be edited in place: a clock is worth
  // recording when watchman names more paths than there are directories.
  make_dir(tmp / "tree/many");
  for (int k = 0; k < 1100; k++)
    spit(tmp / ("tree/many/m" + std::to_string(k) + ".txt"), "x");
  const std::string cache = tmp / "c.cache", base = cache + ".base";
  std::vector<std::string> all = settled_blocks(tmp, 1000, cache);
  const unsigned flags = TRAWL_CACHE_WRITE_ON_CHANGE | TRAWL_CACHE_CHANGES_ONLY;
  const ino_t was = checked_over_a_base(tmp, cache, all, "c/new.c");
  ASSERT_NE(was, 0u) << "not written over a base";
  // Files edited in place: their directories as recorded, a long answer.
  for (int k = 0; k < 1100; k++)
    spit(tmp / ("tree/many/m" + std::to_string(k) + ".txt"), "y");
  settle();
  {
    Fixture f(tmp / "tree", {{"**/*.c"}});
    CacheRun r = run(f, cache, flags);
    EXPECT_EQ(r.watchman, "used: 1100 paths changed");
    EXPECT_FALSE(r.changed);
    EXPECT_TRUE(r.written) << "the new clock was not recorded";
    EXPECT_EQ(r.write_error, "");
  }
  EXPECT_EQ(inode_of(base), was) << "the base was not kept";
  Fixture f(tmp / "tree", {{"**/*.c"}});
  CacheRun r = run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
  EXPECT_EQ(r.watchman, "used: 0 paths changed");
  EXPECT_TRUE(r.trusted);
  EXPECT_FALSE(r.written);
  EXPECT_EQ(r.warning, "");
  EXPECT_EQ(f.results(0), all);
}

// `trawl check` with watchman's answer (TRAWL_CACHE_CHANGES_ONLY) walks only
// the directories that may have changed and those on the way to them, and
// keeps the rest of the record as it was. Every class of change of the tree
// itself (tree_changes.hpp: its files, directories, links, ignore files at
// every depth, a `.git` in it), each in a work tree of its own whose cache
// was settled: the check takes that path, tells exactly the results that
// changed, and the cache it writes answers as a fresh walk does. (The
// property suite meets the path too, where its sequences allow: a source
// outside the walk that changed, an index whose answers moved, or a walk
// with problems leave the whole record to be walked.)
// Without watchman (TRAWL_WATCHMAN=off), the check's one pass of stats
// stands for its answer: the directories not as recorded are those it
// would name.
void check_every_tree_change(bool watchman)
{
  using namespace treechanges;
  const std::vector<Change> classes = all_changes(false);
  unsigned n = 0, partial = 0;
  for (const Change &c : classes) {
    SCOPED_TRACE(c.name());
    TempDir tmp;
    Rng rng(sequence_seed(1000 + n++, TOP_AT_ROOT));
    World world(tmp.path(), TOP_AT_ROOT, rng);
    const TreeFacts facts = facts_of(scan(world.root));
    const std::vector<std::vector<std::string>> incs = {{gen_include(rng, facts)}, {"**"}};
    const unsigned ig = world.ignore;
    Enforced as(world);
    ASSERT_TRUE(as.ok()) << as.why();
    auto answer = [&]() {
      Fixture f(world.root, incs, ig);
      EXPECT_TRUE(trawl_plan_run(f.plan.get(), nullptr));
      return std::vector<std::vector<std::string>>{f.results(0), f.results(1)};
    };
    const std::string cache = tmp / "p.cache";
    {
      Fixture f(world.root, incs, ig);
      EXPECT_TRUE(run(f, cache).written);
    }
    settle();
    {
      // What was racy read again and written: the record settled.
      Fixture f(world.root, incs, ig);
      run(f, cache, TRAWL_CACHE_WRITE_ON_CHANGE);
    }
    settle();
    const auto before = answer();
    const std::string what = world.apply(rng, c, [](const std::string &) {});
    settle();
    const auto now = answer();
    std::vector<std::string> want;
    for (size_t q = 0; q < 2; q++) {
      std::vector<std::string> plus, minus;
      std::set_difference(now[q].begin(), now[q].end(), before[q].begin(), before[q].end(),
                          std::back_inserter(plus));
      std::set_difference(before[q].begin(), before[q].end(), now[q].begin(), now[q].end(),
                          std::back_inserter(minus));
      std::vector<std::string> both;
      for (const std::string &p : plus)
        both.push_back(std::to_string(q) + " + " + p);
      for (const std::string &p : minus)
        both.push_back(std::to_string(q) + " - " + p);
      std::sort(both.begin(), both.end(), [](const std::string &x, const std::string &y) {
        return x.compare(4, std::string::npos, y, 4, std::string::npos) < 0;
      });
      want.insert(want.end(), both.begin(), both.end());
    }
    Fixture g(world.root, incs, ig);
    CacheRun r = run(g, cache, TRAWL_CACHE_WRITE_ON_CHANGE | TRAWL_CACHE_CHANGES_ONLY);
    // (Quick: nothing recorded changed, nothing walked. A `.git` made or
    // removed at the root changes the walk's sources, and is where watchman
    // keeps its cookies: all of it is walked, with watchman or without.)
    if (!watchman) {
      EXPECT_EQ(r.watchman, "");
    }
    if (c.kind != DOTGIT_ROOT) {
      if (watchman) {
        EXPECT_EQ(r.watchman.rfind("used", 0), 0u) << r.watchman;
      }
      EXPECT_TRUE(cache_run_was_quick(g.plan.get()) || cache_run_was_partial(g.plan.get()))
          << what;
      partial += cache_run_was_partial(g.plan.get());
    }
    EXPECT_EQ(r.changed, now != before) << what;
    EXPECT_EQ(changes_told(g.plan.get()), want) << what;
    EXPECT_TRUE(g.results(0).empty() && g.results(1).empty());
    Fixture h(world.root, incs, ig);
    CacheRun hr = run(h, cache);
    EXPECT_TRUE(hr.trusted) << hr.warning;
    for (size_t q = 0; q < 2; q++)
      EXPECT_EQ(h.results(q), now[q]) << what << "\n" << diff(h.results(q), now[q]);
  }
  // Most changes are where the queries look.
  EXPECT_GT(partial, classes.size() / 2);
  printf("[partial] %s: %u of %zu classes checked on part of the record\n",
         watchman ? "watchman" : "stat path", partial, classes.size());
}

TEST(CacheWatchmanClasses, EveryChangeOfTheTreeIsCheckedOnPartOfTheRecord)
{
  if (!getenv("TRAWL_TEST_WATCHMAN"))
    GTEST_SKIP() << "run with a private watchman daemon by tests/cache/watchman_cache.py";
  check_every_tree_change(true);
}

TEST(CacheClasses, EveryChangeOfTheTreeIsCheckedOnPartOfTheRecord)
{
  if (getenv("TRAWL_TEST_WATCHMAN"))
    GTEST_SKIP() << "the stat path's: run without watchman";
  check_every_tree_change(false);
}

// The property through the cache file, in the settings users have (a git
// work tree with its top at the root or above it, none with no-require-git,
// nested repositories) and through every class of change tree_changes.hpp
// has, each in every sequence: after each change, a re-check (the quick path
// when nothing recorded changed), a cached run, or a cached run handing its
// results over answers what a fresh run does, with the same problems, and
// the re-check says "changed" exactly when the answer differs from the
// cache's. Run as nobody when root, so that an unreadable directory is one.
class CacheProperty : public ::testing::TestWithParam<std::tuple<uint32_t, treechanges::Setting>> {};

TEST_P(CacheProperty, EveryStepEqualsAFreshRun)
{
  using namespace treechanges;
  const uint32_t seed = std::get<0>(GetParam());
  const Setting setting = std::get<1>(GetParam());
  // Odd seeds write blocks of 3 entries (an even seed's, a writer's 64):
  // the small trees span many, so that checks for their changes keep them
  // whole, by their first paths and by every path, and parse them as on a
  // large tree; counted below.
  struct Every {
    explicit Every(unsigned n) { cache_test_mark_every = n; }
    ~Every() { cache_test_mark_every = 0; }
  } every(seed % 2 ? 3 : 0);
  unsigned long split_was[3];
  std::copy(std::begin(cache_test_split_blocks), std::end(cache_test_split_blocks), split_was);
  TempDir tmp;
  Rng rng(sequence_seed(seed, setting));
  World world(tmp.path(), setting, rng);
  const TreeFacts facts = facts_of(scan(world.root));
  // Query 0 generated (literal start directories, pruning); query 1 every
  // file, so that every directory is in every sequence's records.
  std::vector<std::vector<std::string>> incs(2);
  for (unsigned i = 0, n = 1 + rng.below(2); i < n; i++)
    incs[0].push_back(gen_include(rng, facts));
  incs[1] = {"**"};
  const unsigned ig = world.ignore;
  Enforced as(world);
  ASSERT_TRUE(as.ok()) << as.why();
  const std::string cache = tmp / "p.cache";
  {
    Fixture f(world.root, incs, ig);
    run(f, cache);
  }
  auto problems_of = [](const TrawlPlan *plan, size_t q) {
    std::vector<std::string> v;
    const GPtrArray *p = trawl_plan_problems(plan, q);
    for (guint i = 0; i < p->len; i++)
      v.push_back(static_cast<const GError *>(p->pdata[i])->message);
    return v;
  };
  // A fresh run of the same plan (the two queries share a walk, and so its
  // problems).
  auto answer = [&](std::vector<std::vector<std::string>> *problems) {
    Fixture f(world.root, incs, ig);
    EXPECT_TRUE(trawl_plan_run(f.plan.get(), nullptr));
    std::vector<std::vector<std::string>> v;
    for (size_t q = 0; q < incs.size(); q++) {
      v.push_back(f.results(q));
      if (problems)
        problems->push_back(problems_of(f.plan.get(), q));
    }
    return v;
  };
  std::vector<std::vector<std::string>> last = answer(nullptr);
  std::string history;
  unsigned steps = 0, quick = 0, quick_each = 0, partial = 0, modes[4] = {0, 0, 0, 0};
  // The watch list (trawl_cache_watch), as `trawl check --depfile` hands it
  // to Ninja: after each cached run, its paths and a mark as `--checked`
  // leaves it (the file system's time as the run began, less 1 ns). Before
  // the next run, when the list does not say "always" and no path in it is
  // newer than the mark or gone, Ninja would not run the check: then the
  // answer must be the cache's. Valid only when the cache holds what the
  // run saw (it read nothing, or wrote the cache). Changes that move no
  // mtime (BLIND: an mtime put back, permissions) are a re-check's to see.
  struct Watch {
    bool valid = false, always = false;
    std::vector<std::string> paths;
    struct timespec mark {};
  } watch;
  bool blind = false;
  unsigned skippable = 0, watched = 0;
  // TRAWL_TEST_WATCHMAN (tests/cache/watchman_cache.py): the runs ask a
  // private watchman daemon; TRAWL_TEST_WATCHMAN_RESTART, a command that
  // kills it and starts it again, is run once, halfway through.
  const char *wm_test = getenv("TRAWL_TEST_WATCHMAN");
  const char *wm_restart = getenv("TRAWL_TEST_WATCHMAN_RESTART");
  unsigned wm_used = 0, wm_quick = 0, wm_restarts = 0, wm_fallbacks = 0, wm_used_after = 0;
  bool wm_restarted = false;
  std::map<std::string, unsigned> wm_why; // why not, in which class, how often
  std::string wm_class = "the first run";
  const std::string shadow = tmp / "shadow.cache";
  std::map<std::string, unsigned> shadow_partial; // per class: re-checks given part of the record
  const std::string mark_file = tmp / "p.mark";
  auto fs_now = [&]() {
    std::ofstream(mark_file).put('x');
    EXPECT_EQ(utimensat(AT_FDCWD, mark_file.c_str(), nullptr, 0), 0);
    struct stat st;
    EXPECT_EQ(stat(mark_file.c_str(), &st), 0);
    struct timespec t = st.st_mtim;
    if (t.tv_nsec > 0) {
      t.tv_nsec--;
    } else {
      t.tv_sec--;
      t.tv_nsec = 999999999;
    }
    return t;
  };
  auto newer_than_mark = [&](const std::string &path) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0)
      return true;
    return st.st_mtim.tv_sec > watch.mark.tv_sec ||
           (st.st_mtim.tv_sec == watch.mark.tv_sec && st.st_mtim.tv_nsec > watch.mark.tv_nsec);
  };

  // After each step: one of the four kinds of cached run, in turn (the
  // seed picks where the turn starts), against a fresh run: a run, a
  // re-check that writes on a change, one that hands the results over, and
  // a re-check asked for its changes alone (`trawl check`), which keeps no
  // results and, with watchman's answer, leaves unentered what cannot have
  // changed.
  auto verify = [&](const std::string &what) {
    history += "\n  " + printable(what);
    const unsigned mode = (seed + steps) % 4;
    const bool changes_only = mode == 3, check = mode == 1 || changes_only, each = mode == 2;
    const char *how = changes_only ? " (changes)" : check ? " (check)" : each ? " (each)" : " (run)";
    // Would Ninja skip the check? (Decided before anything is run.)
    std::string why_run;
    if (!watch.valid)
      why_run = "no valid list";
    else if (watch.always)
      why_run = "always";
    else
      for (const std::string &p : watch.paths)
        if (newer_than_mark(p)) {
          why_run = p;
          break;
        }
    const bool skipped = why_run.empty() && !blind;
    // (The copy for the re-check below, before this step's run writes.)
    const bool have_shadow = wm_test && treechanges::exists(cache);
    if (have_shadow) {
      // With its base, when it is written over one (a FILE.base of its
      // own name's).
      std::ifstream in(cache, std::ios::binary);
      std::ofstream(shadow, std::ios::binary | std::ios::trunc) << in.rdbuf();
      unlink((shadow + ".base").c_str());
      if (treechanges::exists(cache + ".base")) {
        std::ifstream base(cache + ".base", std::ios::binary);
        std::ofstream(shadow + ".base", std::ios::binary | std::ios::trunc) << base.rdbuf();
      }
    }
    watch.mark = fs_now();
    Fixture f(world.root, incs, ig);
    std::vector<std::vector<std::string>> got(2);
    CacheRun r;
    if (each) {
      TrawlCacheReport rep;
      GError *error = nullptr;
      r.ok = trawl_cache_run_each(
          f.plan.get(), cache.c_str(), 0,
          [](size_t q, const char *path, size_t len, void *data) {
            (*static_cast<std::vector<std::vector<std::string>> *>(data))[q].emplace_back(path, len);
          },
          &got, &rep, &error);
      EXPECT_TRUE(r.ok) << (error ? error->message : "");
      g_clear_error(&error);
      r.trusted = rep.trusted;
      r.changed = rep.changed;
      r.written = rep.written;
      r.warning = report_message(rep.warning, TRAWL_CACHE_ERROR_UNTRUSTED);
      r.read = rep.dirs_read;
      r.reused = rep.dirs_reused;
      r.watchman = watchman_word(rep);
      trawl_cache_report_clear(&rep);
    } else {
      r = run(f, cache,
              (check ? TRAWL_CACHE_WRITE_ON_CHANGE : 0) | (changes_only ? TRAWL_CACHE_CHANGES_ONLY : 0));
      got = {f.results(0), f.results(1)};
      partial += cache_run_was_partial(f.plan.get());
      EXPECT_TRUE(changes_only || !cache_run_was_partial(f.plan.get()));
    }
    std::vector<std::vector<std::string>> problems;
    const std::vector<std::vector<std::string>> now = answer(&problems);
    for (size_t q = 0; q < 2; q++) {
      if (changes_only) {
        EXPECT_TRUE(got[q].empty()) << "asked for its changes alone, a run keeps no results";
        got[q] = now[q]; // what the next runs check: the cache it wrote
      }
      EXPECT_EQ(got[q], now[q]) << "seed " << seed << ", " << setting_name(setting) << ", step "
                                << steps << how << " read " << r.read << " reused " << r.reused
                                << (cache_run_was_quick(f.plan.get()) ? " (from the records)" : "") << " query "
                                << show(incs[q]) << "\nsteps:" << history << "\n"
                                << diff(got[q], now[q]);
      EXPECT_EQ(problems_of(f.plan.get(), q), problems[q])
          << "seed " << seed << ", " << setting_name(setting) << ", step " << steps << how
          << ": the problems told, query " << show(incs[q]) << "\nsteps:" << history;
    }
    EXPECT_TRUE(r.trusted) << r.warning;
    if (r.written) {
      bool ordered;
      entries_of(cache, &ordered);
      EXPECT_TRUE(ordered) << "seed " << seed << ", " << setting_name(setting) << ", step "
                           << steps << how << ": the entries written are not in path order"
                           << "\nsteps:" << history;
    }
    // Handed over, the results are not compared: "changed" says they may be.
    if (!each || now != last) {
      EXPECT_EQ(r.changed, now != last)
          << "seed " << seed << ", " << setting_name(setting) << ", step " << steps << how
          << " read " << r.read << " reused " << r.reused << "\nquery 0: " << diff(now[0], last[0])
          << "\nquery 1: " << diff(now[1], last[1]) << "\nsteps:" << history;
    }
    // What changed, as `trawl check` prints it (trawl_cache_changes(): from
    // the memos, directory by directory, when both are there): the
    // difference between what the cache held and the fresh answer, query by
    // query, in bytewise order. (Handed over, the results are not kept.)
    std::vector<std::string> want;
    for (size_t q = 0; q < 2; q++) {
      size_t i = 0, j = 0;
      while (i < now[q].size() || j < last[q].size()) {
        const int c = i == now[q].size()    ? 1
                      : j == last[q].size() ? -1
                                            : now[q][i].compare(last[q][j]);
        if (c < 0)
          want.push_back(std::to_string(q) + " + " + now[q][i]);
        else if (c > 0)
          want.push_back(std::to_string(q) + " - " + last[q][j]);
        i += c <= 0;
        j += c >= 0;
      }
    }
    if (!each) {
      EXPECT_EQ(changes_told(f.plan.get()), want)
          << "seed " << seed << ", " << setting_name(setting) << ", step " << steps << how
          << ": the changes told\nsteps:" << history;
    }
    // With watchman, every step is also re-checked as `trawl check` does
    // (asked for its changes alone: the walk given part of the record where
    // watchman's answer allows, the rest kept as it was), on a copy of the
    // cache as it was before this step's run: whatever the turn, every class
    // of change meets that path. The changes it tells are the fresh answer's,
    // and the cache it writes answers as a fresh walk does.
    if (wm_test && have_shadow) {
      Fixture g(world.root, incs, ig);
      CacheRun sr = run(g, shadow, TRAWL_CACHE_WRITE_ON_CHANGE | TRAWL_CACHE_CHANGES_ONLY);
      const bool was_partial = cache_run_was_partial(g.plan.get());
      shadow_partial[wm_class] += was_partial;
      EXPECT_TRUE(sr.trusted) << sr.warning;
      EXPECT_EQ(sr.changed, now != last)
          << "seed " << seed << ", " << setting_name(setting) << ", step " << steps
          << " (changes, on a copy" << (was_partial ? ", partial" : "") << ")\nsteps:" << history;
      EXPECT_EQ(changes_told(g.plan.get()), want)
          << "seed " << seed << ", " << setting_name(setting) << ", step " << steps
          << " (changes, on a copy" << (was_partial ? ", partial" : "")
          << "): the changes told\nsteps:" << history;
      Fixture h(world.root, incs, ig);
      CacheRun hr = run(h, shadow);
      EXPECT_TRUE(hr.trusted) << hr.warning;
      for (size_t q = 0; q < 2; q++)
        EXPECT_EQ(h.results(q), now[q])
            << "seed " << seed << ", " << setting_name(setting) << ", step " << steps
            << ": a run from the cache written by the check on a copy"
            << (was_partial ? " (partial)" : "") << ", query " << show(incs[q])
            << "\nsteps:" << history << "\n" << diff(h.results(q), now[q]);
    }
    if (skipped) {
      skippable++;
      for (size_t q = 0; q < 2; q++)
        EXPECT_EQ(now[q], last[q])
            << "seed " << seed << ", " << setting_name(setting) << ", step " << steps
            << ": no watched path is newer than the mark, yet the answer changed; query "
            << show(incs[q]) << "\nsteps:" << history << "\n" << diff(now[q], last[q]);
    }
    watch.valid = r.read == 0 || r.written;
    watch.always = false;
    watch.paths.clear();
    if (watch.valid) {
      GError *error = nullptr;
      EXPECT_TRUE(trawl_cache_watch(
          cache.c_str(),
          [](const char *path, void *data) {
            static_cast<std::vector<std::string> *>(data)->push_back(path);
          },
          &watch.paths, &watch.always, &error))
          << (error ? error->message : "");
      g_clear_error(&error);
      watched += !watch.always;
    }
    quick_each += each && r.read == 0;
    quick += check && r.read == 0 && !r.changed;
    // With the watchman back-end on (tests/cache/watchman_cache.py): how often it
    // answered, and never right after its daemon was restarted.
    const bool used = r.watchman.rfind("used", 0) == 0;
    wm_used += used;
    if (!used && wm_test)
      wm_why[r.watchman + " [in: " + wm_class + "]"]++;
    wm_quick += used && r.read == 0 && !r.changed;
    if (wm_restarted) {
      EXPECT_FALSE(used) << "watchman answered for a clock of the daemon before its restart: "
                         << r.watchman;
      wm_fallbacks += !used;
      wm_restarted = false;
    }
    wm_used_after += used && wm_restarts > 0;
    // What the cache holds now: rewritten when changed (check) or when a
    // directory was read (run).
    if (r.changed || !check)
      last = now;
    modes[mode]++;
    steps++;
  };

  Counts counts;
  const std::vector<Change> classes = all_changes(true, setting != NO_REPO, setting == NESTED);
  const std::vector<Change> plan = schedule(rng, classes, 40);
  for (size_t i = 0; i < plan.size(); i++) {
    const Change &c = plan[i];
    if (HasFailure())
      break;
    if (wm_test && wm_restart && i == plan.size() / 2) {
      EXPECT_EQ(system(wm_restart), 0) << wm_restart;
      wm_restarts++;
      wm_restarted = true;
    }
    blind = c.kind == MTIME_RESTORED || c.kind == UNREADABLE;
    wm_class = c.name();
    const std::string what = world.apply(rng, c, verify);
    counts[c.name()]++;
    // Half the changes wait out the racy window; the rest are checked in
    // the tick they were made in (and so is every same-granule change).
    if (c.kind != SAME_GRANULE && rng.chance(2))
      settle();
    verify(what);
    blind = false;
    // And every fourth change, nothing more: the first run reads what was
    // racy, the second takes the quick path (unless a problem or a nested
    // repository keeps it from it).
    if (steps % 4 == 0) {
      settle();
      verify("nothing");
      verify("nothing again");
    }
  }
  for (const Change &c : classes)
    EXPECT_GT(counts[c.name()], 0u) << c.name() << " never happened";
  // (Nested repositories too: their sources are stamped, issue 24.)
  EXPECT_GT(quick, 0u) << "the re-check never took the quick path";
  EXPECT_GT(quick_each, 0u) << "the cached runs handing results over never read none";
  EXPECT_GT(watched, 0u) << "the watch list always said \"always\"";
  // (Where watchman answers too: each question makes a sync cookie in the
  // `.git`, which the watch list does not hold.)
  EXPECT_GT(skippable, 0u) << "no step left every watched path older than the mark";
  const bool cookies_in_dotgit = wm_test && setting != NO_REPO && setting != WORKTREE;
  for (unsigned m = 0; m < 4; m++)
    EXPECT_GT(modes[m], 0u);
  if (wm_test) {
    // Without a `.git` directory at the watch's root, which is the walk's
    // (no work tree; a linked one, whose `.git` is a file), watchman would
    // make its sync cookies in the root, changing its stamp at every
    // question: the back-end does not ask, and the stat path answers
    // (docs/cache.md, "Watchman").
    // (Elsewhere only while `.git` at the root is gone.)
    unsigned wm_in_root = 0;
    for (const auto &[why, n] : wm_why)
      if (why.find("sync cookies in the walk's root") != std::string::npos) {
        wm_in_root += n;
        if (cookies_in_dotgit) {
          EXPECT_NE(why.find("[in: .git at the root]"), std::string::npos) << why;
        }
      }
    if (!cookies_in_dotgit) {
      EXPECT_GT(wm_in_root, steps / 2) << "the back-end asked where its cookies change the root";
    } else {
      EXPECT_GT(wm_used, steps / 2) << "watchman answered at too few steps";
      if (setting != NESTED) {
        EXPECT_GT(wm_quick, 0u) << "watchman never vouched for a whole unchanged tree";
      }
      EXPECT_GT(partial, 0u) << "no check asked for its changes left a directory unentered";
      if (wm_restart) {
        EXPECT_GT(wm_used_after, 0u) << "watchman never answered again after its restart";
      }
    }
    if (wm_restart) {
      EXPECT_EQ(wm_restarts, 1u);
      EXPECT_EQ(wm_fallbacks, 1u) << "no step right after the restart";
    }
    std::string never;
    for (const Change &c : classes)
      if (shadow_partial[c.name()] == 0)
        never += " | " + c.name();
    printf("[partial] CacheProperty seed %u setting %d: classes never re-checked on part of the "
           "record:%s\n", seed, (int)setting, never.c_str());
    printf("[watchman] CacheProperty seed %u setting %d: used at %u of %u steps, the whole tree"
           " vouched for at %u, part of the record walked at %u; restarts %u, used after %u\n",
           seed, (int)setting, wm_used, steps, wm_quick, partial, wm_restarts, wm_used_after);
    for (const auto &[why, n] : wm_why)
      printf("[watchman]   %u x %s\n", n, why.c_str());
  }
  print_counts("CacheProperty", seed, setting, counts, steps);
  unsigned long split[3];
  for (int k = 0; k < 3; k++)
    split[k] = cache_test_split_blocks[k] - split_was[k];
  printf("[blocks] CacheProperty seed %u setting %d: blocks of %u entries; split: %lu kept whole"
         " by their first paths, %lu by every path, %lu parsed\n",
         seed, (int)setting, cache_test_mark_every ? cache_test_mark_every : 64u, split[0],
         split[1], split[2]);
  if (cache_test_mark_every) {
    EXPECT_GT(split[0], 0u) << "no block kept whole by its first paths";
    EXPECT_GT(split[1], 0u) << "no block kept whole by every path in it";
    EXPECT_GT(split[2], 0u) << "no block parsed";
  }
  printf("[watch] CacheProperty seed %u setting %d: a list at %u of %u steps, %u of them with"
         " nothing newer than the mark\n", seed, (int)setting, watched, steps, skippable);
}

// Seeds 1 to 2 in each of the five settings, or 1 to N with
// TRAWL_CACHE_PROPERTY_SEEDS=N: docs/cache.md, "Tests", has a long run.
INSTANTIATE_TEST_SUITE_P(
    Seeds, CacheProperty,
    ::testing::Combine(::testing::ValuesIn(seeds_from_env("TRAWL_CACHE_PROPERTY_SEEDS", 2)),
                       ::testing::ValuesIn(treechanges::kSettings)));

} // namespace
