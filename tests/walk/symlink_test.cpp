// Symbolic links: not followed by default (a link is an entry of its own,
// reported with the files; a link to a directory is not entered); with
// options.follow a link takes its target's type, a link to a directory is
// entered, and a link back to an ancestor is a loop, detected by (device,
// inode), reported once in the problems (TRAWL_WALK_ERROR_LOOP), and the walk
// completes. Every case runs on every route (serial, four threads; Linux and
// POSIX readers) and both ways (collect, callback).
#include "walk_util.hpp"

using namespace walktest;

namespace {

using Typed = std::vector<std::pair<std::string, unsigned>>;
const unsigned F = TRAWL_ENTRY_FILE, D = TRAWL_ENTRY_DIR, L = TRAWL_ENTRY_SYMLINK;

struct Want {
  Typed results;
  std::set<std::string> opened;
  std::vector<std::string> loops; // paths of the LOOP problems, sorted
};

void expect_walk(Query &q, const std::string &root, const Want &want)
{
  std::vector<std::string> want_paths = paths_of(want.results);
  for (const Route &route : kRoutes) {
    route.apply(q);
    q.compile_all();
    const std::string what = std::string(route.name) + " " + q.describe();
    for (int mode = 0; mode < 2; mode++) {
      Outcome o = mode == 0 ? walk_collect(q, {root}) : walk_run(q, {root});
      const std::string how = what + (mode == 0 ? " (collect)" : " (run)");
      ASSERT_TRUE(o.ok) << how;
      if (mode == 1)
        EXPECT_EQ(o.typed, want.results) << how << "\n" << diff(o.paths, want_paths);
      else
        EXPECT_EQ(o.paths, want_paths) << how << "\n" << diff(o.paths, want_paths);
      EXPECT_EQ(as_set(o.opened), want.opened) << how << "\nread: " << show(o.opened);
      check_counters(o, how);
      std::vector<std::string> loops;
      for (const auto &p : o.problems) {
        EXPECT_EQ(p.code, TRAWL_WALK_ERROR_LOOP) << how << ": " << p.message;
        // "ROOT/PATH: reason": keep PATH.
        std::string m = p.message.substr(0, p.message.find(": "));
        loops.push_back(m.compare(0, root.size() + 1, root + "/") == 0 ? m.substr(root.size() + 1)
                                                                       : m);
      }
      std::sort(loops.begin(), loops.end());
      EXPECT_EQ(loops, want.loops) << how;
    }
  }
}

class Links : public ::testing::Test {
protected:
  void SetUp() override
  {
    add_file(tmp_.path(), "a.c");
    add_file(tmp_.path(), "dir/x.c");
    add_file(tmp_.path(), "dir/sub/y.c");
    make_link("a.c", tmp_ / "link_file");
    make_link("dir", tmp_ / "link_dir");
    make_link("nowhere", tmp_ / "dangling.c");
  }
  TempDir tmp_;
};

TEST_F(Links, NotFollowedByDefault)
{
  Query q;
  q.includes = {"**"};
  expect_walk(q, tmp_.path(),
              {{{"a.c", F}, {"dangling.c", L}, {"dir/sub/y.c", F}, {"dir/x.c", F},
                {"link_dir", L}, {"link_file", L}},
               {"", "dir", "dir/sub"},
               {}});
}

TEST_F(Links, NotFollowedTypes)
{
  Query q;
  q.opt.types = TRAWL_ENTRY_SYMLINK;
  expect_walk(q, tmp_.path(),
              {{{"dangling.c", L}, {"link_dir", L}, {"link_file", L}}, {"", "dir", "dir/sub"}, {}});
  Query d;
  d.opt.types = TRAWL_ENTRY_DIR;
  expect_walk(d, tmp_.path(), {{{"dir", D}, {"dir/sub", D}}, {"", "dir", "dir/sub"}, {}});
}

// A pattern that names the link's inside does not enter it either.
TEST_F(Links, NotFollowedThroughPattern)
{
  Query q;
  q.includes = {"link_dir/**", "*/sub/*.c"};
  expect_walk(q, tmp_.path(), {{{"dir/sub/y.c", F}}, {"", "dir", "dir/sub"}, {}});
}

TEST_F(Links, Followed)
{
  Query q;
  q.opt.follow = true;
  expect_walk(q, tmp_.path(),
              {{{"a.c", F}, {"dangling.c", L}, {"dir/sub/y.c", F}, {"dir/x.c", F},
                {"link_dir/sub/y.c", F}, {"link_dir/x.c", F}, {"link_file", F}},
               {"", "dir", "dir/sub", "link_dir", "link_dir/sub"},
               {}});
}

TEST_F(Links, FollowedTypes)
{
  Query q;
  q.opt.follow = true;
  q.opt.types = TRAWL_ENTRY_DIR | TRAWL_ENTRY_SYMLINK;
  expect_walk(q, tmp_.path(),
              {{{"dangling.c", L}, {"dir", D}, {"dir/sub", D}, {"link_dir", D},
                {"link_dir/sub", D}},
               {"", "dir", "dir/sub", "link_dir", "link_dir/sub"},
               {}});
}

// With follow, a literal root that is a link is entered like any other.
TEST_F(Links, FollowedLiteralRoot)
{
  Query q;
  q.opt.follow = true;
  q.includes = {"link_dir/*.c"};
  expect_walk(q, tmp_.path(), {{{"link_dir/x.c", F}}, {"link_dir"}, {}});
  Query deeper;
  deeper.opt.follow = true;
  deeper.includes = {"link_dir/sub/*.c"};
  expect_walk(deeper, tmp_.path(), {{{"link_dir/sub/y.c", F}}, {"link_dir/sub"}, {}});
}

// Two links to one directory are both entered: that is no loop.
TEST(LinksFollow, TwoLinksToOneDirectory)
{
  TempDir tmp;
  add_file(tmp.path(), "dir/x.c");
  make_link("dir", tmp / "p");
  make_link("dir", tmp / "q");
  Query q;
  q.opt.follow = true;
  expect_walk(q, tmp.path(), {{{"dir/x.c", F}, {"p/x.c", F}, {"q/x.c", F}}, {"", "dir", "p", "q"}, {}});
}

// A link to an ancestor: one problem, the rest complete.
TEST(LinksFollow, LoopToAncestorReportedOnce)
{
  TempDir tmp;
  add_file(tmp.path(), "top.c");
  add_file(tmp.path(), "a/f.c");
  add_file(tmp.path(), "a/b/g.c");
  make_link("../..", tmp / "a/b/back");
  Query q;
  q.opt.follow = true;
  expect_walk(q, tmp.path(),
              {{{"a/b/g.c", F}, {"a/f.c", F}, {"top.c", F}}, {"", "a", "a/b"}, {"a/b/back"}});
  // Not followed, the same link is a plain entry and no problem.
  Query plain;
  plain.opt.types = TRAWL_ENTRY_SYMLINK;
  expect_walk(plain, tmp.path(), {{{"a/b/back", L}}, {"", "a", "a/b"}, {}});
}

TEST(LinksFollow, LoopToItself)
{
  TempDir tmp;
  add_file(tmp.path(), "d/f.c");
  make_link(".", tmp / "d/self");
  Query q;
  q.opt.follow = true;
  expect_walk(q, tmp.path(), {{{"d/f.c", F}}, {"", "d"}, {"d/self"}});
}

// One looping link reached by two paths (directly, and through another
// followed link) is one problem.
TEST(LinksFollow, LoopReachedTwiceReportedOnce)
{
  TempDir tmp;
  add_file(tmp.path(), "a/f.c");
  make_link("..", tmp / "a/loop");
  make_link("a", tmp / "b");
  for (const Route &route : kRoutes) {
    Query q;
    q.opt.follow = true;
    route.apply(q);
    q.compile_all();
    Outcome o = walk_collect(q, {tmp.path()});
    ASSERT_TRUE(o.ok);
    EXPECT_EQ(o.paths, (std::vector<std::string>{"a/f.c", "b/f.c"})) << route.name;
    ASSERT_EQ(o.problems.size(), 1u) << route.name;
    EXPECT_EQ(o.problems[0].code, TRAWL_WALK_ERROR_LOOP);
    const std::string &m = o.problems[0].message;
    EXPECT_TRUE(m.rfind(tmp / "a/loop: ", 0) == 0 || m.rfind(tmp / "b/loop: ", 0) == 0) << m;
  }
}

// p and q link to each other: each is a loop once inside the other.
TEST(LinksFollow, MutualLinks)
{
  TempDir tmp;
  add_file(tmp.path(), "p/f.c");
  add_file(tmp.path(), "q/g.c");
  make_link("../q", tmp / "p/to-q");
  make_link("../p", tmp / "q/to-p");
  Query q;
  q.opt.follow = true;
  expect_walk(q, tmp.path(),
              {{{"p/f.c", F}, {"p/to-q/g.c", F}, {"q/g.c", F}, {"q/to-p/f.c", F}},
               {"", "p", "q", "p/to-q", "q/to-p"},
               {"p/to-q/to-p", "q/to-p/to-q"}});
}

// The root is an ancestor of every path, whatever literal directory the walk
// starts from: "a/**/*.c" finds what "**/*.c" finds below a/, and a link back
// to the root is a loop in both.
TEST(LinksFollow, LoopDetectionDoesNotDependOnLiteralRoots)
{
  TempDir tmp;
  add_file(tmp.path(), "top.c");
  add_file(tmp.path(), "a/f.c");
  add_file(tmp.path(), "a/b/g.c");
  make_link("../..", tmp / "a/b/back");
  Query q;
  q.opt.follow = true;
  q.includes = {"a/**/*.c"};
  expect_walk(q, tmp.path(), {{{"a/b/g.c", F}, {"a/f.c", F}}, {"a", "a/b"}, {"a/b/back"}});
}

// A followed link to a file is a file: not reported as a link.
TEST(LinksFollow, LinkToFileTakesFileType)
{
  TempDir tmp;
  add_file(tmp.path(), "real.c");
  make_link("real.c", tmp / "alias.c");
  Query q;
  q.opt.follow = true;
  q.opt.types = TRAWL_ENTRY_SYMLINK;
  expect_walk(q, tmp.path(), {{}, {""}, {}});
  Query f;
  f.opt.follow = true;
  expect_walk(f, tmp.path(), {{{"alias.c", F}, {"real.c", F}}, {""}, {}});
}

// one_file_system: a followed link into another file system (a directory
// of our own in /dev/shm, a tmpfs) is not entered, from the root or as a
// literal root.
TEST(LinksFollow, OneFileSystem)
{
  struct stat tmp_st, shm_st;
  TempDir tmp;
  char shm[] = "/dev/shm/trawl-walk-XXXXXX";
  if (stat("/dev/shm", &shm_st) != 0 || stat(tmp.path().c_str(), &tmp_st) != 0 ||
      shm_st.st_dev == tmp_st.st_dev || mkdtemp(shm) == nullptr)
    GTEST_SKIP() << "no writable /dev/shm on another file system";
  add_file(shm, "b.c");
  add_file(tmp.path(), "a.c");
  make_link(shm, tmp / "other");
  Query all;
  all.opt.follow = true;
  expect_walk(all, tmp.path(), {{{"a.c", F}, {"other/b.c", F}}, {"", "other"}, {}});
  Query one;
  one.opt.follow = true;
  one.opt.one_file_system = true;
  expect_walk(one, tmp.path(), {{{"a.c", F}}, {""}, {}});
  Query literal;
  literal.opt.follow = true;
  literal.opt.one_file_system = true;
  literal.includes = {"other/*.c"};
  expect_walk(literal, tmp.path(), {{}, {}, {}});
  remove_tree(shm);
}

} // namespace
