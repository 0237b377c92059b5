// The one rule for "is this directory as recorded?" (memo.h: dir_check,
// dir_check_rules, stamp_racy), used by the walk's replay and by the cache's
// re-check alike. Each row records a directory as a walk does, makes one
// change, and names the verdict; every row runs with the ignore files looked
// up from the directory's own descriptor (the walk) and by path from the
// root's (the cache's re-check).
#include <sys/time.h>

#include <chrono>
#include <functional>
#include <iostream>

#include "walk_util.hpp"

extern "C" {
#include "ignore.h"
#include "memo.h"
}

using namespace walktest;

namespace {

void settle()
{
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

void spit(const std::string &path, const std::string &data)
{
  write_file(path, data);
}

// Record directory ROOT/d as a walk would: its stamp, what it holds, its
// ignore files' stamps, racy or not against a reading that starts now.
dir_stamp record(const std::string &root)
{
  dir_stamp d{};
  struct timespec from;
  racy_from_now(&from);
  const std::string dir = root + "/d";
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) {
    stamp_of(&d.st, &st, false);
    int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    d.has = ignore_probe(fd);
    ignore_file_stamps(fd, "", d.has, d.ignore);
    close(fd);
  }
  d.racy = stamp_racy(&d.st, &from);
  d.rules_racy = stamp_racy(&d.ignore[0], &from) || stamp_racy(&d.ignore[1], &from);
  return d;
}

enum Lookup { FROM_ITS_FD, BY_PATH_FROM_THE_ROOT };

// The verdicts on ROOT/d now: dir_check, and dir_check_rules with what a
// probe shows now.
std::pair<dir_verdict, dir_verdict> verdicts(const dir_stamp &was, const std::string &root,
                                             Lookup how)
{
  const std::string dir = root + "/d";
  struct stat st;
  const bool there = lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  int root_fd = open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int fd = there ? open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  const int at = how == FROM_ITS_FD && fd >= 0 ? fd : root_fd;
  const char *path = how == FROM_ITS_FD && fd >= 0 ? "" : "d";
  const dir_verdict whole = dir_check(&was, there ? &st : nullptr, at, path);
  const unsigned has_now = fd >= 0 ? ignore_probe(fd) : 0;
  const dir_verdict rules = dir_check_rules(&was, has_now, at, path);
  if (fd >= 0)
    close(fd);
  close(root_fd);
  return {whole, rules};
}

struct Row {
  const char *name;
  std::function<void(const std::string &d)> before; // d: the directory's path
  std::function<void(const std::string &d)> change;
  dir_verdict whole, rules;
  bool racy_record = false; // record right after BEFORE, in its tick
};

void append(const std::string &path, const std::string &text)
{
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, text.data(), text.size()), (ssize_t)text.size());
  close(fd);
}

void restore_mtime(const std::string &path, const std::function<void()> &change)
{
  struct stat st;
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  change();
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0);
}

// Set PATH's mtime a second ahead of now.
void stamp_ahead(const std::string &path)
{
  struct timespec times[2];
  clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec += 1;
  times[1] = times[0];
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0);
}

auto nothing = [](const std::string &) {};
auto gitignore = [](const std::string &d) { spit(d + "/.gitignore", "*.o\n"); };
auto dotignore = [](const std::string &d) { spit(d + "/.ignore", "*.o\n"); };

const Row kRows[] = {
  {"NothingChanged", gitignore, nothing, DIR_SAME, DIR_SAME},
  {"FileCreated", nothing, [](const std::string &d) { spit(d + "/new.c", ""); }, DIR_CHANGED,
   DIR_SAME},
  {"FileDeleted", [](const std::string &d) { spit(d + "/old.c", ""); },
   [](const std::string &d) { unlink((d + "/old.c").c_str()); }, DIR_CHANGED, DIR_SAME},
  {"FileCreatedMtimeRestored", nothing,
   [](const std::string &d) { restore_mtime(d, [&] { spit(d + "/new.c", ""); }); }, DIR_CHANGED,
   DIR_SAME},
  {"DirectoryReplaced", nothing,
   [](const std::string &d) {
     make_dir(d + ".new");
     remove_tree(d);
     ASSERT_EQ(rename((d + ".new").c_str(), d.c_str()), 0);
   },
   DIR_CHANGED, DIR_SAME},
  {"DirectoryGone", nothing, [](const std::string &d) { remove_tree(d); }, DIR_CHANGED,
   DIR_SAME},
  {"DirectoryTurnedIntoALink", nothing,
   [](const std::string &d) {
     remove_tree(d);
     ASSERT_EQ(symlink(".", d.c_str()), 0);
   },
   DIR_CHANGED, DIR_SAME},
  {"GitignoreEditedInPlace", gitignore, [](const std::string &d) { append(d + "/.gitignore", "x\n"); },
   DIR_RULES_CHANGED, DIR_RULES_CHANGED},
  {"DotignoreEditedInPlace", dotignore, [](const std::string &d) { append(d + "/.ignore", "x\n"); },
   DIR_RULES_CHANGED, DIR_RULES_CHANGED},
  {"GitignoreSameSizeMtimeRestored", gitignore,
   [](const std::string &d) {
     restore_mtime(d + "/.gitignore", [&] { spit(d + "/.gitignore", "*.h\n"); });
   },
   DIR_RULES_CHANGED, DIR_RULES_CHANGED},
  {"GitignoreReplacedByARename", gitignore,
   [](const std::string &d) {
     spit(d + "/.gitignore.new", "*.h\n");
     ASSERT_EQ(rename((d + "/.gitignore.new").c_str(), (d + "/.gitignore").c_str()), 0);
   },
   DIR_CHANGED, DIR_RULES_CHANGED},
  {"GitignoreCreated", nothing, gitignore, DIR_CHANGED, DIR_RULES_CHANGED},
  {"GitignoreDeleted", gitignore, [](const std::string &d) { unlink((d + "/.gitignore").c_str()); },
   DIR_CHANGED, DIR_RULES_CHANGED},
  {"DotGitCreated", nothing, [](const std::string &d) { make_dir(d + "/.git"); }, DIR_CHANGED,
   DIR_RULES_CHANGED},
  // Racy records, forced: a stamp a second ahead is in the reading's tick
  // whatever the machine's load (a change right after the read would be).
  {"RacyDirectory", [](const std::string &d) { stamp_ahead(d); }, nothing, DIR_CHANGED, DIR_SAME,
   true},
  {"RacyIgnoreFile",
   [](const std::string &d) {
     gitignore(d);
     settle();
     stamp_ahead(d + "/.gitignore"); // the file alone: the directory's stamp stays old
   },
   nothing, DIR_RULES_CHANGED, DIR_RULES_CHANGED, true},
};

class Freshness : public ::testing::TestWithParam<std::tuple<size_t, Lookup>> {};

TEST_P(Freshness, Verdict)
{
  const Row &row = kRows[std::get<0>(GetParam())];
  const Lookup how = std::get<1>(GetParam());
  TempDir tmp;
  const std::string d = tmp / "d";
  make_dir(d);
  spit(d + "/a.c", "");
  settle();
  row.before(d);
  if (!row.racy_record)
    settle();
  const dir_stamp was = record(tmp.path());
  ASSERT_EQ(was.racy || was.rules_racy, row.racy_record) << "the record is not as the row needs";
  settle();
  row.change(d);
  const auto [whole, rules] = verdicts(was, tmp.path(), how);
  EXPECT_EQ(whole, row.whole) << "dir_check";
  EXPECT_EQ(rules, row.rules) << "dir_check_rules";
}

std::string name_of(const ::testing::TestParamInfo<std::tuple<size_t, Lookup>> &info)
{
  return std::string(kRows[std::get<0>(info.param)].name) +
         (std::get<1>(info.param) == FROM_ITS_FD ? "_FromItsFd" : "_ByPath");
}

INSTANTIATE_TEST_SUITE_P(Rows, Freshness,
                         ::testing::Combine(::testing::Range<size_t>(0, std::size(kRows)),
                                            ::testing::Values(FROM_ITS_FD, BY_PATH_FROM_THE_ROOT)),
                         name_of);

// A change, the record of its directory, another change, nothing between:
// where stamps come from the kernel's coarse clock (before Linux 6.13), or
// the file system keeps coarser times (vfat, exFAT), the second change
// often leaves the stamp as the first left it, and only the record being
// racy makes the directory read again. Tried over a dozen ticks or more, so
// that the record falls at every phase of one. On fine stamps each change
// has its own and this cannot fail; tests/coarse runs it where it can
// (ramfs, and vfat's and exFAT's granularities), and prints how often the
// stamp was kept.
TEST(Freshness, ChangedAgainInTheGrainOfItsRecord)
{
  TempDir tmp;
  const std::string root = tmp.path();
  const std::string d = root + "/d";
  make_dir(d);
  const int kTries = 250;
  int kept = 0;
  for (int i = 0; i < kTries; i++) {
    spit(d + "/a" + std::to_string(i), "");
    const dir_stamp was = record(root);
    spit(d + "/b" + std::to_string(i), "");
    struct stat st;
    ASSERT_EQ(stat(d.c_str(), &st), 0);
    stamp now;
    stamp_of(&now, &st, false);
    kept += stamp_equal(&now, &was.st);
    for (Lookup how : {FROM_ITS_FD, BY_PATH_FROM_THE_ROOT})
      ASSERT_EQ(verdicts(was, root, how).first, DIR_CHANGED)
          << "try " << i << ": a file created after the record, unseen (the record "
          << (was.racy ? "racy" : "not racy") << ", the stamp "
          << (stamp_equal(&now, &was.st) ? "kept" : "changed") << ")";
  }
  std::cout << "[grain] the second change kept the first one's stamp in " << kept << " of "
            << kTries << " tries\n";
}

// A start directory recorded as not there: still not there is the same,
// there now is a change.
TEST(Freshness, StartDirectoryNotThere)
{
  TempDir tmp;
  dir_stamp was{};
  EXPECT_EQ(dir_check(&was, nullptr, AT_FDCWD, tmp.path().c_str()), DIR_SAME);
  struct stat st;
  ASSERT_EQ(stat(tmp.path().c_str(), &st), 0);
  EXPECT_EQ(dir_check(&was, &st, AT_FDCWD, tmp.path().c_str()), DIR_CHANGED);
}

// The racy rule: from FROM on; a time cut to whole seconds (vfat keeps 2 s)
// from two seconds before it, one cut to hundredths (exFAT) from 10 ms
// before it — the mtime or the ctime alone.
TEST(Freshness, RacyRule)
{
  struct timespec from = {1000, 25000000};
  auto at = [](int64_t s, uint32_t ns) {
    stamp st{};
    st.present = true;
    st.mtime_s = st.ctime_s = s;
    st.mtime_ns = st.ctime_ns = ns;
    return st;
  };
  stamp s = at(1000, 25000000);
  EXPECT_TRUE(stamp_racy(&s, &from)) << "at FROM";
  s = at(1000, 24999999);
  EXPECT_FALSE(stamp_racy(&s, &from)) << "just before FROM";
  s.ctime_s = 1001;
  EXPECT_TRUE(stamp_racy(&s, &from)) << "a ctime after FROM";
  s = at(999, 0);
  EXPECT_TRUE(stamp_racy(&s, &from)) << "whole seconds, within two seconds before";
  s = at(998, 0);
  EXPECT_FALSE(stamp_racy(&s, &from)) << "whole seconds, more than two seconds before";
  s = at(1000, 20000000);
  EXPECT_TRUE(stamp_racy(&s, &from)) << "hundredths, within 10 ms before";
  s = at(1000, 10000000);
  EXPECT_FALSE(stamp_racy(&s, &from)) << "hundredths, more than 10 ms before";
  s = at(990, 123);
  s.mtime_s = 999;
  s.mtime_ns = 0;
  EXPECT_TRUE(stamp_racy(&s, &from)) << "the mtime alone in whole seconds, within two";
  s = at(1000, 25000000);
  s.present = false;
  EXPECT_FALSE(stamp_racy(&s, &from)) << "nothing there";
}

// The order of subtrees, the one rule the walk's start directories and the
// cache's pass over its records share.
TEST(Freshness, SubtreeOrder)
{
  const std::pair<std::string, std::string> before[] = {
    {"", "a"},          // the root first
    {"", ".x"},
    {"a.b", "a"},       // "a.b" < "a/..."
    {"a-x", "a"},       // '-' < '/'
    {"a", "ab"},        // "a/..." < "ab"
    {"a", "a\xff"},
    {"a/b", "a/c"},
    {"x", "\xc3\xa9"}, // bytes, unsigned
  };
  for (const auto &[a, b] : before) {
    EXPECT_LT(subtree_order(a.data(), a.size(), b.data(), b.size()), 0) << a << " < " << b;
    EXPECT_GT(subtree_order(b.data(), b.size(), a.data(), a.size()), 0) << b << " > " << a;
  }
  EXPECT_EQ(subtree_order("a", 1, "a", 1), 0);
  EXPECT_EQ(subtree_order("", 0, "", 0), 0);
}

// Every name an ignore file has, and its bit: one table.
TEST(Freshness, IgnoreFileNames)
{
  EXPECT_EQ(ignore_has_of(".gitignore", 10, false), (unsigned)HAS_GITIGNORE);
  EXPECT_EQ(ignore_has_of(".ignore", 7, false), (unsigned)HAS_DOTIGNORE);
  EXPECT_EQ(ignore_has_of(".git", 4, false), (unsigned)HAS_DOTGIT);
  EXPECT_EQ(ignore_has_of(".git", 4, true), 0u) << "a link named .git is no repository";
  EXPECT_EQ(ignore_has_of(".gitignorex", 11, false), 0u);
  EXPECT_EQ(ignore_has_of(".gitignore", 9, false), 0u);
}

} // namespace
