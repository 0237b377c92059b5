// Deep trees and descriptor limits. Built twice: walk-deep as it is, and
// walk-fdlimit with WALK_TEST_FD_LIMIT=64, which lowers RLIMIT_NOFILE's soft
// limit to 64 before any test runs (`ulimit -n 64`), so that every walk here
// also runs short of descriptors.
//
//   - a 1,000-level chain ("d/d/...") with a file at the bottom, walked from
//     the root and from a 1,000-component literal root;
//   - a comb: a 1,000-level chain of 10-byte names (11,000-byte paths, far
//     past PATH_MAX, which only descriptor-relative opens reach) with two
//     leaf directories at every level, so that a depth-first walk keeps many
//     parents waiting (under the limit of 64 it must open by path from the
//     root, in steps);
//   - a bushy tree (depth 5, three subdirectories each) against the nftw
//     reference.
// Expected results are built with the trees (nftw cannot walk past
// PATH_MAX); every walk runs on every route and both ways, with no problem.
#include <sys/resource.h>

#include "walk_util.hpp"

using namespace walktest;

#ifdef WALK_TEST_FD_LIMIT
// Before main, before any test: every walk of this executable is limited.
static const int fd_limit_applied = [] {
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0)
    return -1;
  lim.rlim_cur = WALK_TEST_FD_LIMIT;
  return setrlimit(RLIMIT_NOFILE, &lim);
}();

TEST(FdLimit, InEffect)
{
  ASSERT_EQ(fd_limit_applied, 0) << strerror(errno);
  struct rlimit lim;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &lim), 0);
  EXPECT_EQ(lim.rlim_cur, (rlim_t)WALK_TEST_FD_LIMIT);
}
#endif

namespace {

struct Built {
  std::vector<std::string> dirs;  // every directory, relative
  std::vector<std::string> files; // every file, relative
  std::string bottom_dir;         // the deepest chain directory
  std::string bottom_file;        // bottom_dir + "/bottom.c"
};

// A chain of LEVELS directories below ROOT ("d" each, or "level-NNNN" with
// LONG_NAMES), LEAVES leaf directories with a file "f.c" beside each link of
// the chain (made before or after it, alternately, so that either listing
// order occurs), and "bottom.c" at the bottom. Built with descriptor-relative
// calls: the paths may exceed PATH_MAX.
Built build_chain(const std::string &root, int levels, bool long_names, int leaves)
{
  Built b;
  int fd = open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  std::string rel;
  auto make_leaves = [&](int level) {
    for (int k = 0; k < leaves; k++) {
      std::string leaf = "leaf" + std::to_string(k);
      EXPECT_EQ(mkdirat(fd, leaf.c_str(), 0755), 0);
      int lfd = openat(fd, leaf.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      int ffd = openat(lfd, "f.c", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      EXPECT_GE(ffd, 0) << "level " << level;
      close(ffd);
      close(lfd);
      b.dirs.push_back(rel + leaf);
      b.files.push_back(rel + leaf + "/f.c");
    }
  };
  for (int i = 0; i < levels; i++) {
    char name[32];
    snprintf(name, sizeof name, long_names ? "level-%04d" : "d", i);
    if (i % 2)
      make_leaves(i);
    EXPECT_EQ(mkdirat(fd, name, 0755), 0) << "level " << i << ": " << strerror(errno);
    if (i % 2 == 0)
      make_leaves(i);
    int next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    EXPECT_GE(next, 0) << "level " << i << ": " << strerror(errno);
    close(fd);
    fd = next;
    rel += name;
    b.dirs.push_back(rel);
    b.bottom_dir = rel;
    rel += "/";
  }
  int ffd = openat(fd, "bottom.c", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  EXPECT_GE(ffd, 0);
  close(ffd);
  close(fd);
  b.bottom_file = rel + "bottom.c";
  b.files.push_back(b.bottom_file);
  std::sort(b.dirs.begin(), b.dirs.end());
  std::sort(b.files.begin(), b.files.end());
  return b;
}

// Walk Q over ROOT on every route, both ways: exactly WANT, no problem, and
// (unless OPENED is null) exactly the directories OPENED.
void expect_walk(Query &q, const std::string &root, const std::vector<std::string> &want,
                 const std::set<std::string> *opened)
{
  for (const Route &route : kRoutes) {
    route.apply(q);
    q.compile_all();
    for (int mode = 0; mode < 2; mode++) {
      Outcome o = mode == 0 ? walk_collect(q, {root}) : walk_run(q, {root});
      const std::string how = std::string(route.name) + (mode == 0 ? " (collect)" : " (run)");
      ASSERT_TRUE(o.ok) << how;
      EXPECT_EQ(o.paths.size(), want.size()) << how;
      EXPECT_TRUE(o.paths == want) << how << ": the results differ from the expected ones";
      EXPECT_TRUE(o.problems.empty()) << how << ": " << o.problems[0].message;
      check_counters(o, how);
      if (opened) {
        EXPECT_EQ(o.opened.size(), opened->size()) << how;
        EXPECT_TRUE(as_set(o.opened) == *opened) << how << ": other directories were read";
      }
    }
  }
}

std::set<std::string> with_root(const std::vector<std::string> &dirs)
{
  std::set<std::string> s(dirs.begin(), dirs.end());
  s.insert("");
  return s;
}

class ShortChain : public ::testing::Test {
protected:
  static void SetUpTestSuite()
  {
    tmp_ = new TempDir();
    chain_ = new Built(build_chain(tmp_->path(), 1000, false, 0));
  }
  static void TearDownTestSuite()
  {
    delete chain_;
    delete tmp_;
  }
  static TempDir *tmp_;
  static Built *chain_;
};
TempDir *ShortChain::tmp_;
Built *ShortChain::chain_;

TEST_F(ShortChain, FilesFromTheRoot)
{
  Query q;
  q.includes = {"**/*.c"};
  const auto opened = with_root(chain_->dirs);
  expect_walk(q, tmp_->path(), chain_->files, &opened);
}

TEST_F(ShortChain, EverythingWithDirectories)
{
  Query q;
  q.opt.types = TRAWL_ENTRY_FILE | TRAWL_ENTRY_DIR;
  std::vector<std::string> want = chain_->dirs;
  want.insert(want.end(), chain_->files.begin(), chain_->files.end());
  std::sort(want.begin(), want.end());
  expect_walk(q, tmp_->path(), want, nullptr);
}

TEST_F(ShortChain, DeepLiteralRoot)
{
  Query q;
  q.includes = {chain_->bottom_dir + "/*.c"};
  const std::set<std::string> opened = {chain_->bottom_dir};
  expect_walk(q, tmp_->path(), chain_->files, &opened);
}

TEST_F(ShortChain, MaxDepth)
{
  Query q;
  q.opt.types = TRAWL_ENTRY_DIR;
  q.opt.max_depth = 500;
  std::vector<std::string> want;
  for (const auto &d : chain_->dirs)
    if (d.size() <= 999) // 500 components of "d"
      want.push_back(d);
  ASSERT_EQ(want.size(), 500u);
  expect_walk(q, tmp_->path(), want, nullptr);
}

class Comb : public ::testing::Test {
protected:
  static void SetUpTestSuite()
  {
    tmp_ = new TempDir();
    comb_ = new Built(build_chain(tmp_->path(), 1000, true, 2));
  }
  static void TearDownTestSuite()
  {
    delete comb_;
    delete tmp_;
  }
  static TempDir *tmp_;
  static Built *comb_;
};
TempDir *Comb::tmp_;
Built *Comb::comb_;

TEST_F(Comb, EveryFile)
{
  ASSERT_EQ(comb_->files.size(), 2001u);
  Query q;
  q.includes = {"**/*.c"};
  const auto opened = with_root(comb_->dirs);
  expect_walk(q, tmp_->path(), comb_->files, &opened);
}

// An 11,000-byte literal root: opened in steps below PATH_MAX.
TEST_F(Comb, LiteralRootPastPathMax)
{
  Query q;
  q.includes = {comb_->bottom_dir + "/*.c"};
  const std::set<std::string> opened = {comb_->bottom_dir};
  expect_walk(q, tmp_->path(), {comb_->bottom_file}, &opened);
}

// The chain alone, its leaves excluded: paths past PATH_MAX all the way.
TEST_F(Comb, LeavesPruned)
{
  ASSERT_GT(comb_->bottom_file.size(), 10000u);
  Query q;
  q.includes = {"**/bottom.c"};
  q.excludes = {"**/leaf*"};
  std::vector<std::string> chain;
  for (const auto &d : comb_->dirs)
    if (d.find("leaf") == std::string::npos)
      chain.push_back(d);
  const auto opened = with_root(chain);
  expect_walk(q, tmp_->path(), {comb_->bottom_file}, &opened);
  q.opt.follow = true; // a chain of (device, inode) 1,000 long
  expect_walk(q, tmp_->path(), {comb_->bottom_file}, &opened);
}

#ifdef WALK_TEST_FD_LIMIT
// The caller holds most of the 64 descriptors: the walker's budget (half the
// limit) is more than there is, and it must still complete, opening by path
// (a thread needs about four: the directory it reads, the POSIX reader's
// duplicate, two for a path opened in steps). Serially with 8 descriptors
// free, with four threads with 24.
TEST_F(Comb, CallerHoldsMostDescriptors)
{
  for (const Route &route : kRoutes) {
    const int free_fds = route.threads > 1 ? 24 : 8;
    std::vector<int> held;
    while (open_fd_count() < WALK_TEST_FD_LIMIT - free_fds) {
      int fd = dup(0);
      if (fd < 0)
        fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
      ASSERT_GE(fd, 0) << strerror(errno);
      held.push_back(fd);
    }
    Query q;
    q.includes = {"**/*.c"};
    route.apply(q);
    q.compile_all();
    Outcome o = walk_collect(q, {tmp_->path()});
    for (int fd : held)
      close(fd);
    ASSERT_TRUE(o.ok) << route.name;
    EXPECT_TRUE(o.paths == comb_->files) << route.name << ": " << o.paths.size() << " results";
    EXPECT_TRUE(o.problems.empty()) << route.name << ": " << o.problems.size() << " problems, "
                                    << o.problems[0].message;
  }
}
#endif

// A bushy tree against the reference: depth 5, three subdirectories and two
// files in each directory.
void bushy(const std::string &root, const std::string &rel, int depth)
{
  const std::string here = rel.empty() ? root : root + "/" + rel;
  write_file(here + "/a.c");
  write_file(here + "/b b.h");
  if (depth == 5)
    return;
  for (const char *name : {"x", "y y", "z;"}) {
    make_dir(here + "/" + name);
    bushy(root, rel.empty() ? name : rel + "/" + name, depth + 1);
  }
}

TEST(Bushy, MatchesReference)
{
  TempDir tmp;
  bushy(tmp.path(), "", 0);
  const auto entries = scan(tmp.path());
  ASSERT_GT(entries.size(), 1000u);
  for (const std::vector<std::string> &inc :
       std::vector<std::vector<std::string>>{{"**/*.c"}, {}, {"x/**/*.h", "y y/*/z;/**"}}) {
    Query q;
    q.includes = inc;
    q.opt.types = inc.empty() ? TRAWL_ENTRY_FILE | TRAWL_ENTRY_DIR : TRAWL_ENTRY_FILE;
    q.compile_all();
    expect_walk(q, tmp.path(), paths_of(reference(q, entries)), nullptr);
  }
}

} // namespace
