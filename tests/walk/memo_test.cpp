// Walk memos (memo.h): a walk that trusts the last walk's record of every
// directory whose stamp is unchanged returns exactly what a fresh walk does.
//
// The property test runs in each setting users have — git work trees with
// the top at the root or above it, no work tree (no-require-git), nested
// repositories — and through every class of change inside a tree
// (tree_changes.hpp), each in every sequence, comparing after every step the
// memo walk with a fresh one (serial, and parallel with helpers from the
// first directory). The rest pins what is read: nothing when nothing
// changed, one directory for a one-file change, a racy directory read
// again, the subtree below an edited ignore file.
#include <sys/time.h>

#include <chrono>

#include "tree_changes.hpp"
#include "walk_gen.hpp"
#include "walk_util.hpp"

#include "memo.h"

using namespace walktest;
using namespace walkgen;

namespace {

struct MemoFree {
  void operator()(walk_memo *m) const { walk_memo_free(m); }
};
using Memo = std::unique_ptr<walk_memo, MemoFree>;

struct Result {
  std::vector<std::string> paths;
  TrawlWalkStats stats;
  std::vector<std::string> opened;
  std::vector<std::string> problems;
};

// One sorted walk of Q over ROOT, trusting OLD (may be null), recording
// into OUT (may be null).
Result walk(const Query &q, const std::string &root, const walk_memo *old, walk_memo *out)
{
  HookLog log;
  Walker w = make_walker(q, {root}, &log);
  trawl_walker_set_memo(w.get(), old, out);
  Result r;
  GError *error = nullptr;
  GPtrArray *res = trawl_walker_collect(w.get(), &error);
  EXPECT_NE(res, nullptr) << (error ? error->message : "");
  if (error)
    g_error_free(error);
  if (res) {
    for (guint i = 0; i < res->len; i++)
      r.paths.push_back(static_cast<const char *>(res->pdata[i]));
    g_ptr_array_unref(res);
  }
  trawl_walker_stats(w.get(), &r.stats);
  r.opened = log.opened;
  const GPtrArray *problems = trawl_walker_problems(w.get());
  for (guint i = 0; i < problems->len; i++)
    r.problems.push_back(static_cast<const GError *>(problems->pdata[i])->message);
  std::sort(r.problems.begin(), r.problems.end());
  return r;
}

// Wait out the racy window: stamps older than two clock ticks are trusted.
void settle()
{
  std::this_thread::sleep_for(std::chrono::milliseconds(15));
}

Query plain(std::vector<std::string> includes, unsigned ignore = 0)
{
  Query q;
  q.includes = std::move(includes);
  q.opt.threads = 1;
  q.opt.ignore = ignore;
  q.compile_all();
  return q;
}

// ---- the property test ------------------------------------------------

// In each setting users have (tree_changes.hpp), through every class of
// change inside the tree — each in every sequence — a memo walk after each
// change answers what a fresh walk does, with the same problems. (The
// sources outside the walk are the cache's to re-check, cache_test.cpp.)
// Serial, or parallel with helpers from the first directory; run as nobody
// when root, so that an unreadable directory is one.
class MemoProperty : public ::testing::TestWithParam<std::tuple<uint32_t, treechanges::Setting>> {};

TEST_P(MemoProperty, EveryStepEqualsAFreshWalk)
{
  using namespace treechanges;
  const uint32_t seed = std::get<0>(GetParam());
  const Setting setting = std::get<1>(GetParam());
  TempDir tmp;
  Rng rng(sequence_seed(seed, setting));
  World world(tmp.path(), setting, rng);
  const TreeFacts facts = facts_of(scan(world.root));
  Enforced as(world);
  ASSERT_TRUE(as.ok()) << as.why();
  unsigned steps = 0, reused = 0, parallel_steps = 0;
  Counts counts;
  const std::vector<Change> classes = all_changes(false, false, setting == NESTED);
  // Two rounds, each with its own query and every class: a generated one
  // (literal start directories, pruning), serial; then every entry (the
  // whole tree replayed or read), on the parallel route.
  for (int round = 0; round < 2 && !HasFailure(); round++) {
    Query q;
    gen_query(rng, facts, q);
    if (round == 1)
      q.includes = {"**"};
    q.opt.follow = false;
    q.opt.ignore = world.ignore;
    const bool parallel = round == 1;
    q.opt.threads = parallel ? 4 : 1;
    q.helper_floor = parallel ? 0 : -1;
    q.compile_all();
    Memo memo(walk_memo_new());
    walk(q, world.root, nullptr, memo.get());
    std::string history;
    auto verify = [&](const std::string &what) {
      history += "\n  " + printable(what);
      Memo next(walk_memo_new());
      Result cached = walk(q, world.root, memo.get(), next.get());
      Result fresh = walk(q, world.root, nullptr, nullptr);
      EXPECT_EQ(cached.paths, fresh.paths)
          << "seed " << seed << ", " << setting_name(setting) << ", round " << round << " "
          << q.describe() << "\nsteps:" << history << "\n" << diff(cached.paths, fresh.paths);
      EXPECT_EQ(cached.problems, fresh.problems)
          << "seed " << seed << ", " << setting_name(setting) << ", round " << round
          << "\nsteps:" << history;
      steps++;
      parallel_steps += parallel;
      reused += cached.stats.dirs_reused > 0;
      memo = std::move(next);
    };
    for (const Change &c : schedule(rng, classes, 20)) {
      if (HasFailure())
        break;
      const std::string what = world.apply(rng, c, verify);
      counts[c.name()]++;
      if (c.kind != SAME_GRANULE && rng.chance(2))
        settle();
      verify(what);
    }
  }
  for (const Change &c : classes)
    EXPECT_GE(counts[c.name()], 2u) << c.name() << " did not happen in both rounds";
  EXPECT_GT(parallel_steps, 0u);
  EXPECT_GT(reused, steps / 10) << "the memo was hardly ever trusted: the test tests little";
  print_counts("MemoProperty", seed, setting, counts, steps);
}

// Seeds 1 to 2 in each of the five settings, or 1 to N with
// TRAWL_MEMO_PROPERTY_SEEDS=N.
INSTANTIATE_TEST_SUITE_P(
    Seeds, MemoProperty,
    ::testing::Combine(::testing::ValuesIn(seeds_from_env("TRAWL_MEMO_PROPERTY_SEEDS", 2)),
                       ::testing::ValuesIn(treechanges::kSettings)));

// ---- what is read ------------------------------------------------------

TEST(Memo, NothingChangedNothingRead)
{
  TempDir tmp;
  for (const char *f : {"a.c", "src/b.c", "src/x/c.c", "lib/d.h", "lib/e.c"})
    add_file(tmp.path(), f);
  Query q = plain({"**/*.c"});
  settle();
  Memo m1(walk_memo_new()), m2(walk_memo_new());
  Result first = walk(q, tmp.path(), nullptr, m1.get());
  EXPECT_EQ(first.stats.dirs_opened, 4u);
  EXPECT_EQ(m1->racy, 0u);
  Result again = walk(q, tmp.path(), m1.get(), m2.get());
  EXPECT_EQ(again.paths, first.paths);
  EXPECT_EQ(again.stats.dirs_opened, 0u);
  EXPECT_EQ(again.stats.dirs_reused, 4u);
  EXPECT_TRUE(again.opened.empty());
  EXPECT_EQ(g_hash_table_size(m2->dirs), 4u);
}

TEST(Memo, OneFileChangeReadsOneDirectory)
{
  TempDir tmp;
  for (const char *f : {"a.c", "src/b.c", "src/x/c.c", "lib/d.h", "lib/e.c"})
    add_file(tmp.path(), f);
  Query q = plain({"**/*.c"});
  settle();
  Memo m1(walk_memo_new()), m2(walk_memo_new());
  walk(q, tmp.path(), nullptr, m1.get());
  add_file(tmp.path(), "src/x/new.c");
  settle();
  Result r = walk(q, tmp.path(), m1.get(), m2.get());
  EXPECT_EQ(r.paths, (std::vector<std::string>{"a.c", "lib/e.c", "src/b.c", "src/x/c.c",
                                               "src/x/new.c"}));
  EXPECT_EQ(r.opened, std::vector<std::string>{"src/x"});
  EXPECT_EQ(r.stats.dirs_reused, 3u);
  // A new directory is walked whole.
  add_file(tmp.path(), "lib/n/m/z.c");
  settle();
  Memo m3(walk_memo_new());
  r = walk(q, tmp.path(), m2.get(), m3.get());
  EXPECT_EQ(as_set(r.opened), (std::set<std::string>{"lib", "lib/n", "lib/n/m"}));
  EXPECT_EQ(r.paths.size(), 6u);
}

TEST(Memo, RacyDirectoryIsReadAgain)
{
  TempDir tmp;
  for (const char *f : {"a.c", "src/b.c", "lib/e.c"})
    add_file(tmp.path(), f);
  Query q = plain({"**/*.c"});
  settle();
  Memo m1(walk_memo_new()), m2(walk_memo_new()), m3(walk_memo_new()), m4(walk_memo_new());
  walk(q, tmp.path(), nullptr, m1.get());
  // Force the collision: src stamped in the tick of the walk that records it
  // (here, a second ahead), as a change right after the read would be.
  struct timespec times[2];
  clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec += 1;
  times[1] = times[0];
  ASSERT_EQ(utimensat(AT_FDCWD, (tmp / "src").c_str(), times, 0), 0);
  Result r2 = walk(q, tmp.path(), m1.get(), m2.get());
  EXPECT_EQ(r2.opened, std::vector<std::string>{"src"}); // its stamp changed
  EXPECT_EQ(m2->racy, 1u);
  // Unchanged since, but racy when recorded: read again, and again until
  // the stamp is older than the walk that records it.
  Result r3 = walk(q, tmp.path(), m2.get(), m3.get());
  EXPECT_EQ(r3.opened, std::vector<std::string>{"src"});
  EXPECT_EQ(r3.stats.dirs_reused, 2u);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  Memo m5(walk_memo_new());
  walk(q, tmp.path(), m3.get(), m4.get());
  Result r5 = walk(q, tmp.path(), m4.get(), m5.get());
  EXPECT_TRUE(r5.opened.empty());
  EXPECT_EQ(m5->racy, 0u);
}

// Following links, what a link leads to can change with nothing in its
// directory changing: a link to a file whose target becomes a directory.
// A directory with links to follow is therefore never trusted.
TEST(Memo, LinksFollowedAreReadEveryTime)
{
  TempDir tmp;
  add_file(tmp.path(), "p/a.c");
  add_file(tmp.path(), "q/t");
  make_link("../q/t", tmp / "p/l");
  // (The whole tree: a start directory below the root is never replayed
  // when following links, so p must be an ordinary directory of the walk.)
  Query q = plain({"**"});
  q.opt.follow = true;
  q.opt.types = TRAWL_ENTRY_FILE | TRAWL_ENTRY_DIR;
  q.compile_all();
  settle();
  Memo m1(walk_memo_new()), m2(walk_memo_new());
  walk(q, tmp.path(), nullptr, m1.get());
  // q/t, a file, becomes a directory with a file in it: p is not touched.
  unlink((tmp / "q/t").c_str());
  add_file(tmp.path(), "q/t/x.c");
  settle();
  Result cached = walk(q, tmp.path(), m1.get(), m2.get());
  Result fresh = walk(q, tmp.path(), nullptr, nullptr);
  EXPECT_EQ(cached.paths, fresh.paths);
  EXPECT_EQ(fresh.paths, (std::vector<std::string>{"p", "p/a.c", "p/l", "p/l/x.c", "q", "q/t",
                                                   "q/t/x.c"}));
}

TEST(Memo, IgnoreFileEditedInPlace)
{
  TempDir tmp;
  for (const char *f : {"a.c", "src/b.c", "src/x/c.c", "src/x/y/d.c", "lib/e.c"})
    add_file(tmp.path(), f);
  write_file(tmp / "src/.ignore", "nothing\n");
  Query q = plain({"**/*.c"}, TRAWL_IGNORE_DOT);
  settle();
  Memo m1(walk_memo_new()), m2(walk_memo_new());
  Result r1 = walk(q, tmp.path(), nullptr, m1.get());
  EXPECT_EQ(r1.paths.size(), 5u);
  struct stat before, after;
  ASSERT_EQ(stat((tmp / "src").c_str(), &before), 0);
  write_file(tmp / "src/.ignore", "x/\n"); // rewritten in place: src's stamp stays
  ASSERT_EQ(stat((tmp / "src").c_str(), &after), 0);
  ASSERT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
  settle();
  Result r2 = walk(q, tmp.path(), m1.get(), m2.get());
  EXPECT_EQ(r2.paths, (std::vector<std::string>{"a.c", "lib/e.c", "src/b.c"}));
  // src and everything below it that is still walked are read again.
  EXPECT_EQ(r2.opened, std::vector<std::string>{"src"});
  EXPECT_EQ(r2.stats.dirs_reused, 2u); // the root and lib
}

// The same above a literal start directory: `src/x/**` opens src/x
// directly, and the ignore files of the root and src, on the way, are read
// but their listings are not. One edited in place changes no stamp of a
// directory; the start directory and everything below it is read again,
// as it is for its own ignore file. (Found by the cache's property test on
// seed 214 of 500.)
TEST(Memo, IgnoreFileOnTheWayEditedInPlace)
{
  TempDir tmp;
  for (const char *f : {"src/x/a.c", "src/x/y/b.c", "src/x/y/c.h"})
    add_file(tmp.path(), f);
  write_file(tmp / "src/.ignore", "nothing\n");
  write_file(tmp / ".ignore", "nothing\n");
  Query q = plain({"src/x/**"}, TRAWL_IGNORE_DOT);
  settle();
  Memo m1(walk_memo_new()), m2(walk_memo_new()), m3(walk_memo_new());
  Result r1 = walk(q, tmp.path(), nullptr, m1.get());
  EXPECT_EQ(r1.paths, (std::vector<std::string>{"src/x/a.c", "src/x/y/b.c", "src/x/y/c.h"}));
  write_file(tmp / "src/.ignore", "*.c\n"); // in place: src's stamp stays
  settle();
  Result r2 = walk(q, tmp.path(), m1.get(), m2.get());
  EXPECT_EQ(r2.paths, (std::vector<std::string>{"src/x/y/c.h"}));
  EXPECT_EQ(r2.opened, (std::vector<std::string>{"src/x", "src/x/y"}));
  EXPECT_EQ(r2.stats.dirs_reused, 0u);
  write_file(tmp / ".ignore", "y/\n"); // the root's, the same
  settle();
  Result r3 = walk(q, tmp.path(), m2.get(), m3.get());
  EXPECT_EQ(r3.paths, std::vector<std::string>{});
  EXPECT_EQ(r3.opened, std::vector<std::string>{"src/x"});
}

TEST(Memo, ParallelRunsRecordEveryDirectory)
{
  TempDir tmp;
  Rng rng(99);
  generate_dir(rng, tmp.path(), "", 0);
  Query q = plain({"**"});
  q.opt.threads = 4;
  q.helper_floor = 0;
  q.compile_all();
  settle();
  Memo m1(walk_memo_new()), m2(walk_memo_new());
  Result r1 = walk(q, tmp.path(), nullptr, m1.get());
  EXPECT_EQ(g_hash_table_size(m1->dirs), r1.stats.dirs_opened);
  Result r2 = walk(q, tmp.path(), m1.get(), m2.get());
  EXPECT_EQ(r2.paths, r1.paths);
  EXPECT_EQ(r2.stats.dirs_opened, 0u);
  EXPECT_EQ(r2.stats.dirs_reused, r1.stats.dirs_opened);
}

} // namespace
