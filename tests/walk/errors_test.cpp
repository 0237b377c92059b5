// Errors and early stops:
//   - an unreadable directory is one problem (TRAWL_WALK_ERROR_READ) and is
//     skipped while the rest of the walk completes (run as root, the test
//     switches its effective ids to nobody's, since root reads anything);
//   - an entry that vanishes while the walk runs is not a problem (deleted
//     from the callback, and by a thread racing the walk);
//   - a root that is missing, not a directory, or unreadable fails the run
//     with TRAWL_WALK_ERROR_ROOT, and nothing is called;
//   - a callback that returns false stops the walk: far fewer calls than
//     the tree has results, nothing leaked (the sanitizer builds check), the
//     walker reusable.
#include <atomic>
#include <thread>

#include "walk_util.hpp"

using namespace walktest;

namespace {

class Unreadable : public ::testing::Test {
protected:
  void SetUp() override
  {
    // Readable by nobody all the way down, but for 'locked'.
    chmod(tmp_.path().c_str(), 0755);
    for (const char *f : {"a.c", "open/b.c", "open/deep/c.c", "locked/in.c", "locked/sub/d.c",
                          "z/locked2/e.c", "z/f.c"})
      add_file(tmp_.path(), f);
    chmod((tmp_ / "locked").c_str(), 0);
    chmod((tmp_ / "z/locked2").c_str(), 0);
  }
  void TearDown() override
  {
    chmod((tmp_ / "locked").c_str(), 0755);
    chmod((tmp_ / "z/locked2").c_str(), 0755);
  }
  // Skip when this process reads 'locked' anyway.
  bool enforced()
  {
    int fd = open((tmp_ / "locked").c_str(), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
      close(fd);
      return false;
    }
    return true;
  }
  TempDir tmp_;
};

TEST_F(Unreadable, ReportedOnceAndSkipped)
{
  AsNobody nobody;
  if (!nobody.ok())
    GTEST_SKIP() << "running as root and cannot become nobody: " << nobody.why();
  if (!enforced())
    GTEST_SKIP() << "permissions are not enforced for this process (uid " << geteuid() << ")";

  Query q;
  q.includes = {"**/*.c"};
  for (const Route &route : kRoutes) {
    route.apply(q);
    q.compile_all();
    for (int mode = 0; mode < 2; mode++) {
      Outcome o = mode == 0 ? walk_collect(q, {tmp_.path()}) : walk_run(q, {tmp_.path()});
      const std::string how = std::string(route.name) + (mode == 0 ? " (collect)" : " (run)");
      ASSERT_TRUE(o.ok) << how;
      EXPECT_EQ(o.paths, (std::vector<std::string>{"a.c", "open/b.c", "open/deep/c.c", "z/f.c"}))
        << how;
      ASSERT_EQ(o.problems.size(), 2u) << how;
      std::vector<std::string> messages;
      for (const auto &p : o.problems) {
        EXPECT_EQ(p.code, TRAWL_WALK_ERROR_READ) << how << ": " << p.message;
        messages.push_back(p.message);
      }
      std::sort(messages.begin(), messages.end());
      EXPECT_EQ(messages[0].rfind(tmp_.path() + "/locked: ", 0), 0u) << how << ": " << messages[0];
      EXPECT_EQ(messages[1].rfind(tmp_.path() + "/z/locked2: ", 0), 0u) << how << ": "
                                                                           << messages[1];
      EXPECT_EQ(as_set(o.opened), (std::set<std::string>{"", "open", "open/deep", "z"})) << how;
      check_counters(o, how);
    }
  }
}

// The directory itself is still an entry of its parent's listing.
TEST_F(Unreadable, StillListedAsDirectory)
{
  AsNobody nobody;
  if (!nobody.ok())
    GTEST_SKIP() << "running as root and cannot become nobody: " << nobody.why();
  if (!enforced())
    GTEST_SKIP() << "permissions are not enforced for this process";
  Query q;
  q.opt.types = TRAWL_ENTRY_DIR;
  q.opt.threads = 1;
  q.compile_all();
  Outcome o = walk_collect(q, {tmp_.path()});
  ASSERT_TRUE(o.ok);
  EXPECT_EQ(o.paths, (std::vector<std::string>{"locked", "open", "open/deep", "z", "z/locked2"}));
  EXPECT_EQ(o.problems.size(), 2u);
}

// An unreadable literal root of the includes: one problem, no results.
TEST_F(Unreadable, LiteralRoot)
{
  AsNobody nobody;
  if (!nobody.ok())
    GTEST_SKIP() << "running as root and cannot become nobody: " << nobody.why();
  if (!enforced())
    GTEST_SKIP() << "permissions are not enforced for this process";
  Query q;
  q.includes = {"locked/**/*.c", "open/*.c"};
  for (const Route &route : kRoutes) {
    route.apply(q);
    q.compile_all();
    Outcome o = walk_collect(q, {tmp_.path()});
    ASSERT_TRUE(o.ok) << route.name;
    EXPECT_EQ(o.paths, std::vector<std::string>{"open/b.c"}) << route.name;
    ASSERT_EQ(o.problems.size(), 1u) << route.name;
    EXPECT_EQ(o.problems[0].code, TRAWL_WALK_ERROR_READ);
    EXPECT_EQ(o.problems[0].message.rfind(tmp_.path() + "/locked: ", 0), 0u)
      << o.problems[0].message;
  }
}

// With the default root "." (no root added), a problem names the path as
// the walk prints it: relative, without "./".
TEST_F(Unreadable, DefaultRootMessage)
{
  // Back to the directory the test started in by its descriptor, once root
  // again: nobody may not be allowed into it (a clone in a `mktemp -d`
  // directory, mode 0700).
  const int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(cwd, 0);
  Outcome o;
  {
    AsNobody nobody;
    if (!nobody.ok())
      GTEST_SKIP() << "running as root and cannot become nobody: " << nobody.why();
    if (!enforced())
      GTEST_SKIP() << "permissions are not enforced for this process";
    ASSERT_EQ(chdir(tmp_.path().c_str()), 0);
    Query q;
    q.includes = {"**/*.c"};
    q.opt.threads = 1;
    q.compile_all();
    o = walk_collect(q, {});
  }
  EXPECT_EQ(fchdir(cwd), 0);
  close(cwd);
  ASSERT_TRUE(o.ok);
  EXPECT_EQ(o.paths, (std::vector<std::string>{"a.c", "open/b.c", "open/deep/c.c", "z/f.c"}));
  std::vector<std::string> messages;
  for (const auto &p : o.problems)
    messages.push_back(p.message.substr(0, p.message.find(": ")));
  std::sort(messages.begin(), messages.end());
  EXPECT_EQ(messages, (std::vector<std::string>{"locked", "z/locked2"}));
}

// A directory that can be searched but not listed (mode 0111): a literal
// root below it is reached all the same (as `ls xonly/sub` reaches it), a
// walk that must list it reports it once.
TEST(SearchOnly, LiteralRootThrough)
{
  TempDir tmp;
  chmod(tmp.path().c_str(), 0755);
  add_file(tmp.path(), "xonly/sub/a.c");
  add_file(tmp.path(), "b.c");
  chmod((tmp / "xonly").c_str(), 0111);
  {
    AsNobody nobody;
    if (!nobody.ok())
      GTEST_SKIP() << "running as root and cannot become nobody: " << nobody.why();
    int fd = open((tmp / "xonly").c_str(), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
      close(fd);
      GTEST_SKIP() << "permissions are not enforced for this process";
    }
    for (const Route &route : kRoutes) {
      Query q;
      q.includes = {"xonly/sub/*.c"};
      route.apply(q);
      q.compile_all();
      Outcome o = walk_collect(q, {tmp.path()});
      ASSERT_TRUE(o.ok);
      EXPECT_EQ(o.paths, std::vector<std::string>{"xonly/sub/a.c"}) << route.name;
      EXPECT_TRUE(o.problems.empty()) << route.name << ": " << o.problems[0].message;
      EXPECT_EQ(o.opened, std::vector<std::string>{"xonly/sub"}) << route.name;

      Query all;
      all.includes = {"**/*.c"};
      route.apply(all);
      all.compile_all();
      Outcome a = walk_collect(all, {tmp.path()});
      ASSERT_TRUE(a.ok);
      EXPECT_EQ(a.paths, std::vector<std::string>{"b.c"}) << route.name;
      ASSERT_EQ(a.problems.size(), 1u) << route.name;
      EXPECT_EQ(a.problems[0].code, TRAWL_WALK_ERROR_READ);
    }
  }
  chmod((tmp / "xonly").c_str(), 0755);
}

// An unreadable root fails the run.
TEST_F(Unreadable, UnreadableRootFails)
{
  AsNobody nobody;
  if (!nobody.ok())
    GTEST_SKIP() << "running as root and cannot become nobody: " << nobody.why();
  if (!enforced())
    GTEST_SKIP() << "permissions are not enforced for this process";
  Query q;
  q.compile_all();
  Outcome o = walk_collect(q, {tmp_ / "locked"});
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.error_code, TRAWL_WALK_ERROR_ROOT);
}

// ---- missing roots ------------------------------------------------------------

TEST(MissingRoot, FailsWithRootError)
{
  TempDir tmp;
  add_file(tmp.path(), "file.c");
  add_file(tmp.path(), "dir/x.c");
  const std::vector<std::vector<std::string>> cases = {
    {tmp / "nosuch"},
    {tmp / "file.c"},
    {tmp / "dir", tmp / "nosuch"},
    {tmp / "nosuch", tmp / "dir"},
    {tmp / "nosuch/deeper"},
  };
  for (const auto &roots : cases) {
    for (const Route &route : kRoutes) {
      Query q;
      route.apply(q);
      q.compile_all();
      Outcome c = walk_collect(q, roots);
      EXPECT_FALSE(c.ok) << show(roots);
      EXPECT_EQ(c.error_code, TRAWL_WALK_ERROR_ROOT) << show(roots);
      EXPECT_TRUE(c.opened.empty()) << show(roots);
      Outcome r = walk_run(q, roots);
      EXPECT_FALSE(r.ok) << show(roots);
      EXPECT_EQ(r.error_code, TRAWL_WALK_ERROR_ROOT) << show(roots);
      EXPECT_EQ(r.callbacks, 0u) << show(roots);
      EXPECT_TRUE(r.opened.empty()) << show(roots);
    }
  }
}

TEST(MissingRoot, MessageNamesTheRoot)
{
  TempDir tmp;
  const std::string missing = tmp / "no such dir";
  Walker w(trawl_walker_new(nullptr));
  trawl_walker_add_root(w.get(), missing.c_str());
  GError *error = nullptr;
  EXPECT_EQ(trawl_walker_collect(w.get(), &error), nullptr);
  ASSERT_NE(error, nullptr);
  EXPECT_TRUE(g_error_matches(error, TRAWL_WALK_ERROR, TRAWL_WALK_ERROR_ROOT));
  EXPECT_NE(std::string(error->message).find(missing), std::string::npos) << error->message;
  g_error_free(error);
  // Without an error location it fails all the same.
  EXPECT_EQ(trawl_walker_collect(w.get(), nullptr), nullptr);
}

// ---- entries that vanish ----------------------------------------------------------

// Build the tree the vanishing tests share: stable files, and a victim
// subtree of many directories.
void vanish_tree(const std::string &root, std::vector<std::string> *stable)
{
  for (int i = 0; i < 12; i++) {
    std::string f = "keep" + std::to_string(i) + "/k.c";
    add_file(root, f);
    stable->push_back(f);
  }
  add_file(root, "a.c");
  stable->push_back("a.c");
  for (int i = 0; i < 20; i++)
    for (int j = 0; j < 5; j++)
      add_file(root, "victim/d" + std::to_string(i) + "/e" + std::to_string(j) + "/v.c");
  add_file(root, "victim/v.c");
  std::sort(stable->begin(), stable->end());
}

struct Deleter {
  std::string root;
  std::atomic<bool> done{false};
  std::mutex lock;
  std::vector<std::string> seen;
};

// Delete the victim subtree the first time the walk reports a path in it
// (its listing is read, its subdirectories queued but not yet opened).
bool delete_on_victim(const TrawlEntry *e, void *data)
{
  auto *d = static_cast<Deleter *>(data);
  std::string path(e->path, e->len);
  if (path.rfind("victim/", 0) == 0 && !d->done.exchange(true))
    remove_tree(d->root + "/victim");
  std::lock_guard<std::mutex> guard(d->lock);
  d->seen.push_back(path);
  return true;
}

TEST(Vanishing, DeletedFromTheCallback)
{
  for (const Route &route : kRoutes) {
    TempDir tmp;
    std::vector<std::string> stable;
    vanish_tree(tmp.path(), &stable);
    Query q;
    q.includes = {"**/*.c"};
    route.apply(q);
    q.compile_all();
    Deleter d;
    d.root = tmp.path();
    Walker w = make_walker(q, {tmp.path()}, nullptr);
    GError *error = nullptr;
    ASSERT_TRUE(trawl_walker_run(w.get(), delete_on_victim, &d, &error)) << route.name;
    EXPECT_TRUE(d.done) << route.name << ": the victim was never reported";
    const GPtrArray *problems = trawl_walker_problems(w.get());
    EXPECT_EQ(problems->len, 0u)
      << route.name << ": " << (problems->len ? static_cast<GError *>(problems->pdata[0])->message : "");
    std::sort(d.seen.begin(), d.seen.end());
    for (const auto &s : stable)
      EXPECT_TRUE(std::binary_search(d.seen.begin(), d.seen.end(), s)) << route.name << ": " << s;
    size_t victims = 0;
    for (const auto &s : d.seen)
      victims += s.rfind("victim/", 0) == 0;
    // Serially the deletion comes before any victim subdirectory is read.
    if (route.threads == 1) {
      EXPECT_EQ(victims, 1u) << route.name;
    }
    EXPECT_LT(victims, 101u) << route.name;
  }
}

// A thread creates and deletes directories (and replaces one with a file)
// while walks run: no walk reports a problem, every stable file is found.
TEST(Vanishing, RacingDeleter)
{
  TempDir tmp;
  std::vector<std::string> stable;
  vanish_tree(tmp.path(), &stable);
  make_dir(tmp / "churn");
  std::atomic<bool> stop{false};
  const std::string churn = tmp / "churn";
  check_fd_leaks = false; // the racer opens files of its own
  std::thread racer([&] {
    unsigned n = 0;
    while (!stop) {
      std::string a = churn + "/c" + std::to_string(n % 8);
      std::string b = a + "/sub", c = b + "/deeper";
      mkdir(a.c_str(), 0755);
      mkdir(b.c_str(), 0755);
      mkdir(c.c_str(), 0755);
      write_file(c + "/f.c");
      write_file(b + "/g.c");
      unlink((c + "/f.c").c_str());
      rmdir(c.c_str());
      unlink((b + "/g.c").c_str());
      rmdir(b.c_str());
      rmdir(a.c_str());
      // The same name, now a file.
      write_file(a);
      unlink(a.c_str());
      n++;
    }
  });
  for (int i = 0; i < 40; i++) {
    const Route &route = kRoutes[i % 4];
    Query q;
    q.includes = {"**/*.c"};
    q.opt.follow = i % 3 == 0; // stats every directory entry: more to vanish
    route.apply(q);
    q.compile_all();
    Outcome o = i % 2 ? walk_run(q, {tmp.path()}) : walk_collect(q, {tmp.path()});
    ASSERT_TRUE(o.ok);
    EXPECT_TRUE(o.problems.empty()) << route.name << ": " << o.problems[0].message;
    for (const auto &s : stable)
      EXPECT_TRUE(std::binary_search(o.paths.begin(), o.paths.end(), s)) << route.name << ": " << s;
    if (HasFailure())
      break;
  }
  stop = true;
  racer.join();
  check_fd_leaks = true;
}

// ---- early stop ------------------------------------------------------------------

class EarlyStop : public ::testing::Test {
protected:
  static void SetUpTestSuite()
  {
    tmp_ = new TempDir();
    // 100 directories of 40 files, two levels: 4,000 results.
    for (int i = 0; i < 20; i++)
      for (int j = 0; j < 5; j++) {
        std::string dir = tmp_->path() + "/d" + std::to_string(i) + "/e" + std::to_string(j);
        make_dirs(tmp_->path(), "d" + std::to_string(i) + "/e" + std::to_string(j));
        for (int k = 0; k < 40; k++)
          write_file(dir + "/f" + std::to_string(k) + ".c");
      }
  }
  static void TearDownTestSuite()
  {
    delete tmp_;
    tmp_ = nullptr;
  }
  static TempDir *tmp_;
};

TempDir *EarlyStop::tmp_ = nullptr;

TEST_F(EarlyStop, CallbackStopsTheWalk)
{
  for (unsigned stop_after : {1u, 10u, 100u}) {
    for (const Route &route : kRoutes) {
      for (int rep = 0; rep < 10; rep++) {
        Query q;
        q.includes = {"**/*.c"};
        route.apply(q);
        q.compile_all();
        Outcome o = walk_run(q, {tmp_->path()}, stop_after);
        ASSERT_TRUE(o.ok) << route.name;
        EXPECT_GE(o.callbacks, stop_after) << route.name;
        // At most one more call per other thread (already past its check).
        EXPECT_LE(o.callbacks, stop_after + route.threads - 1) << route.name;
        EXPECT_EQ(o.stats.results, o.callbacks) << route.name;
        EXPECT_TRUE(o.problems.empty()) << route.name;
        // The tree has 121 directories; a stop within the first leaf's 40
        // results leaves most of them unread.
        if (stop_after <= 10) {
          EXPECT_LT(o.opened.size(), 60u) << route.name;
        }
      }
    }
  }
}

// After an early stop the same walker walks everything again.
TEST_F(EarlyStop, WalkerReusable)
{
  Query q;
  q.includes = {"**/*.c"};
  q.opt.threads = 4;
  q.compile_all();
  Walker w = make_walker(q, {tmp_->path()}, nullptr);
  Sink stopper;
  stopper.stop_after = 5;
  ASSERT_TRUE(trawl_walker_run(w.get(), sink_entry, &stopper, nullptr));
  EXPECT_LE(stopper.calls, 8u);
  Sink all;
  ASSERT_TRUE(trawl_walker_run(w.get(), sink_entry, &all, nullptr));
  EXPECT_EQ(all.calls, 4000u);
  std::set<std::pair<std::string, unsigned>> unique(all.seen.begin(), all.seen.end());
  EXPECT_EQ(unique.size(), 4000u);
}

} // namespace
