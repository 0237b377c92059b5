// Unit tests of the index reader (libcore/src/gitindex.c) against indexes
// real git writes: formats 2, 3 and 4, a split index (and one in format 4),
// a sparse index, skip-worktree and intent-to-add entries, a merge's
// stages, a submodule, a path longer than 0xfff bytes, a SHA-256
// repository. Each index is read by gitindex_read() and compared entry by
// entry with `git ls-files --sparse -s -t -z` (path, stage, mode, the
// skip-worktree tag); then the lookups are asked for every path and every
// directory of the listing, and for near misses. Damaged files (cut short,
// a byte flipped, an extension nobody knows) are refused with an error that
// names the file, never read in part. The same questions are asked of the
// index read in a thread of its own (gitindex_reader_*), slowed down so that
// they meet the read midway, from two threads at once, in order and in
// reverse: every answer the same as gitindex_read()'s, and "not held"
// given before the read ends where the entries read decide it. Skipped when
// git is not installed.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <glib.h>
#include <gtest/gtest.h>

extern "C" {
#include "gitindex.h"
#include <trawl/trawl.h>
}

namespace {

bool have_git()
{
  return system("git --version >/dev/null 2>&1") == 0;
}

// A temporary directory with a repository in it, and git run there with a
// configuration of its own.
class Repo {
public:
  Repo()
  {
    char tmpl[] = "/tmp/trawl-gitindex-XXXXXX";
    const char *d = mkdtemp(tmpl);
    EXPECT_NE(d, nullptr);
    dir_ = d ? d : "/nonexistent";
  }
  ~Repo() { run("rm -rf '" + dir_ + "'"); }

  // Run shell SCRIPT in the repository's directory (made by `git init` in
  // the script), with the test's git environment; its output.
  std::string sh(const std::string &script, int *status = nullptr) const
  {
    const std::string full =
        "cd '" + dir_ + "' && export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME='" +
        dir_ + "' GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t " +
        "GIT_COMMITTER_EMAIL=t@t && " + script;
    FILE *p = popen(("bash -ec " + quote(full) + " 2>&1").c_str(), "r");
    std::string out;
    char buf[4096];
    size_t n;
    while (p && (n = fread(buf, 1, sizeof buf, p)) > 0)
      out.append(buf, n);
    const int st = p ? pclose(p) : -1;
    if (status)
      *status = st;
    else
      EXPECT_EQ(st, 0) << script << "\n" << out;
    return out;
  }

  std::string path(const std::string &rel) const { return dir_ + "/" + rel; }

private:
  static std::string quote(const std::string &s)
  {
    std::string q = "'";
    for (char c : s)
      q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  }
  static void run(const std::string &cmd)
  {
    if (system(cmd.c_str()) != 0)
      ADD_FAILURE() << cmd;
  }
  std::string dir_;
};

struct Entry {
  std::string path;
  unsigned stage = 0;
  unsigned flags = 0; // GITINDEX_SPARSE_DIR | GITINDEX_GITLINK | GITINDEX_SKIP_WORKTREE
  bool operator==(const Entry &o) const
  {
    return path == o.path && stage == o.stage && flags == o.flags;
  }
};

std::ostream &operator<<(std::ostream &os, const Entry &e)
{
  return os << e.path << " stage " << e.stage << " flags " << e.flags;
}

// git's own listing of the index of REPO (directory WHERE): every entry,
// sparse directories as `dir/`, in index order.
std::vector<Entry> git_entries(const Repo &repo, const std::string &where = ".")
{
  const std::string out = repo.sh("git -C '" + where + "' ls-files --sparse -s -t -z");
  std::vector<Entry> v;
  size_t at = 0;
  while (at < out.size()) {
    const size_t end = out.find('\0', at);
    const std::string rec = out.substr(at, end - at);
    at = end + 1;
    // "T MODE OID STAGE\tPATH"
    const size_t tab = rec.find('\t');
    std::istringstream head(rec.substr(0, tab));
    std::string tag, mode, oid;
    unsigned stage = 0;
    head >> tag >> mode >> oid >> stage;
    Entry e;
    e.path = rec.substr(tab + 1);
    e.stage = stage;
    if (mode == "040000")
      e.flags |= GITINDEX_SPARSE_DIR;
    if (mode == "160000")
      e.flags |= GITINDEX_GITLINK;
    if (tag == "S")
      e.flags |= GITINDEX_SKIP_WORKTREE;
    v.push_back(e);
  }
  return v;
}

struct IndexFree {
  void operator()(gitindex *ix) const { gitindex_free(ix); }
};
using Index = std::unique_ptr<gitindex, IndexFree>;

Index read_index(const std::string &path, size_t hash_len = 20, std::string *error = nullptr)
{
  GError *e = nullptr;
  gitindex *ix = gitindex_read(path.c_str(), hash_len, &e);
  if (error)
    *error = e ? e->message : "";
  else if (e)
    ADD_FAILURE() << e->message;
  if (e)
    g_error_free(e);
  return Index(ix);
}

std::vector<Entry> our_entries(const gitindex *ix, unsigned mask = ~0u)
{
  std::vector<Entry> v;
  gitindex_entry *all = gitindex_entries(ix);
  for (size_t i = 0; i < ix->n; i++) {
    const gitindex_entry &e = all[i];
    Entry x;
    x.path.assign(e.path, e.len);
    x.stage = e.stage;
    x.flags = e.flags & mask;
    v.push_back(x);
  }
  g_free(all);
  return v;
}

bool has_file(const gitindex *ix, const std::string &p)
{
  // An exact-size copy: a read past the path is an overflow ASan reports.
  std::vector<char> buf(p.begin(), p.end());
  return gitindex_has_file(ix, buf.data(), buf.size());
}

bool has_dir(const gitindex *ix, const std::string &p)
{
  std::vector<char> buf(p.begin(), p.end());
  return gitindex_has_dir(ix, buf.data(), buf.size());
}

struct ReaderFree {
  void operator()(gitindex_reader *rd) const { gitindex_reader_free(rd); }
};
using Reader = std::unique_ptr<gitindex_reader, ReaderFree>;

// A question: a path, and whether it is asked as a directory.
using Question = std::pair<std::string, bool>;

bool ask(gitindex_reader *rd, const Question &q)
{
  std::vector<char> buf(q.first.begin(), q.first.end());
  return q.second ? gitindex_reader_has_dir(rd, buf.data(), buf.size())
                  : gitindex_reader_has_file(rd, buf.data(), buf.size());
}

// The index at PATH read in a thread of its own, slowed by DELAY_US every
// 256 entries, asked QS from two threads at once (one in order, one in
// reverse): every answer equal to IX's (the index read by gitindex_read()).
void reader_agrees(const std::string &path, size_t hash_len, const gitindex *ix,
                   const std::vector<Question> &qs, unsigned delay_us)
{
  std::vector<char> want(qs.size());
  for (size_t i = 0; i < qs.size(); i++) {
    std::vector<char> buf(qs[i].first.begin(), qs[i].first.end());
    want[i] = qs[i].second ? gitindex_has_dir(ix, buf.data(), buf.size())
                           : gitindex_has_file(ix, buf.data(), buf.size());
  }
  gitindex_reader_test_delay(delay_us);
  gitindex_reader_test_thread_from(0);
  Reader rd(gitindex_reader_start(path.c_str(), hash_len));
  std::vector<char> got_fwd(qs.size()), got_back(qs.size());
  std::thread back([&] {
    for (size_t i = qs.size(); i-- > 0;)
      got_back[i] = ask(rd.get(), qs[i]);
  });
  for (size_t i = 0; i < qs.size(); i++)
    got_fwd[i] = ask(rd.get(), qs[i]);
  back.join();
  gitindex_reader_test_delay(0);
  gitindex_reader_test_thread_from(1u << 20);
  const GError *err = nullptr;
  EXPECT_NE(gitindex_reader_wait(rd.get(), &err), nullptr);
  EXPECT_EQ(err, nullptr);
  for (size_t i = 0; i < qs.size(); i++) {
    EXPECT_EQ(got_fwd[i], want[i]) << qs[i].first << (qs[i].second ? "/" : "");
    EXPECT_EQ(got_back[i], want[i]) << qs[i].first << (qs[i].second ? "/" : "");
  }
}

// The entries agree with git's, and every lookup with the listing: each
// file found, each directory above one found, names that are not there not
// found; and the index read in a thread of its own answers each the same.
void agree(const Repo &repo, const std::string &index = ".git/index",
           const std::string &where = ".", size_t hash_len = 20)
{
  std::vector<Question> qs;
  const std::vector<Entry> want = git_entries(repo, where);
  Index ix = read_index(repo.path(index), hash_len);
  ASSERT_TRUE(ix);
  EXPECT_EQ(our_entries(ix.get(), GITINDEX_SPARSE_DIR | GITINDEX_GITLINK |
                                      GITINDEX_SKIP_WORKTREE),
            want);
  std::set<std::string> dirs;
  for (const Entry &e : want) {
    qs.push_back({e.path, false});
    qs.push_back({e.path, true});
    qs.push_back({e.path + "x", false});
    qs.push_back({e.path.substr(0, e.path.size() - 1), false});
    if (e.flags & GITINDEX_SPARSE_DIR) {
      // Its whole tree: anything below, files and directories.
      const std::string d = e.path.substr(0, e.path.size() - 1);
      qs.push_back({d + "/any", false});
      qs.push_back({d + "/any/deeper", true});
      EXPECT_TRUE(has_dir(ix.get(), d)) << d;
      EXPECT_TRUE(has_file(ix.get(), d + "/any")) << d;
      EXPECT_TRUE(has_dir(ix.get(), d + "/any/deeper")) << d;
      EXPECT_FALSE(has_file(ix.get(), d)) << d;
    } else {
      EXPECT_TRUE(has_file(ix.get(), e.path)) << e.path;
      EXPECT_FALSE(has_file(ix.get(), e.path + "x")) << e.path;
      // A submodule is a directory with paths below it; a file is not.
      EXPECT_EQ(has_dir(ix.get(), e.path), (e.flags & GITINDEX_GITLINK) != 0) << e.path;
    }
    for (size_t i = 0; i < e.path.size(); i++)
      if (e.path[i] == '/')
        dirs.insert(e.path.substr(0, i));
  }
  for (const std::string &d : dirs) {
    qs.push_back({d, true});
    qs.push_back({d, false});
    qs.push_back({d + "x", true});
    qs.push_back({d + ".", true});
    qs.push_back({d + "0", false});
    qs.push_back({d.substr(0, d.size() - 1), true});
    EXPECT_TRUE(has_dir(ix.get(), d)) << d;
    EXPECT_FALSE(has_file(ix.get(), d)) << d;
    EXPECT_FALSE(has_dir(ix.get(), d + "x")) << d;
    if (d.size() > 1 && !dirs.count(d.substr(0, d.size() - 1))) {
      EXPECT_FALSE(has_dir(ix.get(), d.substr(0, d.size() - 1))) << d;
    }
  }
  // Before the first path, after the last.
  qs.push_back({"!", false});
  qs.push_back({"!", true});
  qs.push_back({"~~", false});
  qs.push_back({"~~", true});
  qs.erase(std::remove_if(qs.begin(), qs.end(), [](const Question &q) { return q.first.empty(); }),
           qs.end());
  for (unsigned delay : {0u, 300u})
    reader_agrees(repo.path(index), hash_len, ix.get(), qs, delay);
}

#define NEED_GIT()                                                                                 \
  do {                                                                                             \
    if (!have_git())                                                                               \
      GTEST_SKIP() << "git is not installed";                                                      \
  } while (0)

// A tree with directories, names that share long prefixes (format 4
// compresses them), names that sort around '/' ("a.b" < "a/" < "a0").
const char *const kTree =
    "git init -q . && mkdir -p a/b/c src/lib docs a.b && "
    "touch a/x a/b/y a/b/c/z a.b/q a0 'sp ace' src/lib/one.c src/lib/two.c src/main.c "
    "docs/readme.md && git add . && git commit -qm one";

// Enough entries that a lookup in formats 2 and 3 (read where they are in
// the file, through the offset of every eighth) starts from a mark and
// steps across many: names around '/' ("d.x" < "d/" < "d0") at every
// boundary, a skip-worktree entry (format 3) here and there, and a merge's
// stages, whose three entries of one path may straddle a mark.
const char *const kManyEntries =
    "git init -q . && for d in a a.b a/b a0 b c/d/e c.d c0 dd; do mkdir -p $d; "
    "for i in $(seq 1 37); do touch $d/f$i $d/f$i.c; done; done && "
    "git add . && git commit -qm one && "
    "git checkout -qb side && echo side > c/d/e/f7 && git commit -qam side && "
    "git checkout -q - && echo main > c/d/e/f7 && git commit -qam main && "
    "(git merge -q side || true)";

TEST(GitIndex, ManyEntriesInEveryFormat)
{
  NEED_GIT();
  Repo r;
  r.sh(kManyEntries);
  for (const char *version : {"2", "3", "4"}) {
    r.sh(std::string("git update-index --index-version ") + version);
    if (std::string(version) == "3")
      r.sh("git update-index --skip-worktree a/f3 a0/f30.c dd/f9");
    Index ix = read_index(r.path(".git/index"));
    ASSERT_TRUE(ix);
    EXPECT_EQ(ix->version, (unsigned)atoi(version));
    EXPECT_GT(ix->n, 600u);
    // In place but format 4 (its paths are spelt out: prefix-compressed).
    EXPECT_EQ(ix->entries == NULL, std::string(version) != "4");
    agree(r);
    unsigned staged = 0;
    for (const Entry &e : our_entries(ix.get()))
      staged += e.stage != 0;
    EXPECT_EQ(staged, 3u) << version;
  }
}

TEST(GitIndex, Format2)
{
  NEED_GIT();
  Repo r;
  r.sh(kTree);
  r.sh("git update-index --index-version 2");
  Index ix = read_index(r.path(".git/index"));
  ASSERT_TRUE(ix);
  EXPECT_EQ(ix->version, 2u);
  agree(r);
  EXPECT_TRUE(has_dir(ix.get(), "a"));
  EXPECT_TRUE(has_dir(ix.get(), "a.b"));
  EXPECT_FALSE(has_dir(ix.get(), "a/b/c/z"));
  EXPECT_FALSE(has_dir(ix.get(), "s"));
  EXPECT_FALSE(has_file(ix.get(), "a/b"));
}

TEST(GitIndex, Format3SkipWorktreeAndIntentToAdd)
{
  NEED_GIT();
  Repo r;
  r.sh(kTree);
  r.sh("git update-index --skip-worktree a/b/y src/main.c && mkdir new && touch new/x later.c && "
       "git add -N later.c new/x");
  Index ix = read_index(r.path(".git/index"));
  ASSERT_TRUE(ix);
  EXPECT_EQ(ix->version, 3u); // extended flags make git write format 3
  agree(r);
  unsigned ita = 0, skip = 0;
  for (const Entry &e : our_entries(ix.get())) {
    if (e.flags & GITINDEX_INTENT_TO_ADD) {
      ita++;
      EXPECT_TRUE(e.path == "later.c" || e.path == "new/x") << e.path;
    }
    skip += (e.flags & GITINDEX_SKIP_WORKTREE) != 0;
  }
  EXPECT_EQ(ita, 2u);
  EXPECT_EQ(skip, 2u);
  EXPECT_TRUE(has_file(ix.get(), "later.c"));
  EXPECT_TRUE(has_dir(ix.get(), "new"));
}

TEST(GitIndex, Format4)
{
  NEED_GIT();
  Repo r;
  r.sh(kTree);
  r.sh("git update-index --index-version 4 && git update-index --skip-worktree docs/readme.md");
  Index ix = read_index(r.path(".git/index"));
  ASSERT_TRUE(ix);
  EXPECT_EQ(ix->version, 4u);
  agree(r);
}

TEST(GitIndex, PathLongerThanTheFlagsCanSay)
{
  NEED_GIT();
  Repo r;
  // An entry needs no file: --cacheinfo adds a path of 4,400 bytes.
  std::string longp;
  for (int i = 0; i < 20; i++)
    longp += std::string(219, (char)('a' + i)) + "/";
  longp += "end.c";
  ASSERT_GT(longp.size(), 0xfffu);
  r.sh(kTree + std::string(" && git update-index --add --cacheinfo "
                           "100644,e69de29bb2d1d6434b8b29ae775ad8c2e48c5391,") +
       longp);
  for (const char *v : {"2", "4"}) {
    r.sh(std::string("git update-index --index-version ") + v);
    agree(r);
    Index ix = read_index(r.path(".git/index"));
    ASSERT_TRUE(ix);
    EXPECT_TRUE(has_file(ix.get(), longp));
    EXPECT_TRUE(has_dir(ix.get(), longp.substr(0, 220 * 19 - 1)));
  }
}

TEST(GitIndex, SplitIndex)
{
  NEED_GIT();
  for (const char *version : {"2", "4"}) {
    SCOPED_TRACE(std::string("format ") + version);
    Repo r;
    r.sh(kTree);
    r.sh(std::string("git update-index --index-version ") + version +
         " && git update-index --split-index");
    // Changes on top of the shared index: an entry replaced (its flags),
    // one deleted, two added, one of them sorting first.
    r.sh("git -c splitIndex.maxPercentChange=100 update-index --skip-worktree src/lib/one.c && "
         "git -c splitIndex.maxPercentChange=100 rm -q --cached docs/readme.md && "
         "touch 0first zz && git -c splitIndex.maxPercentChange=100 add 0first zz");
    const std::string shared = r.sh("ls .git | grep -c '^sharedindex\\.' || true");
    EXPECT_EQ(shared, "1\n");
    Index ix = read_index(r.path(".git/index"));
    ASSERT_TRUE(ix);
    EXPECT_TRUE(ix->split);
    agree(r);
    EXPECT_FALSE(has_file(ix.get(), "docs/readme.md"));
    EXPECT_FALSE(has_dir(ix.get(), "docs"));
    EXPECT_TRUE(has_file(ix.get(), "0first"));
    // Its shared index missing: an error naming it, not an empty index.
    r.sh("rm .git/sharedindex.*");
    std::string why;
    EXPECT_FALSE(read_index(r.path(".git/index"), 20, &why));
    EXPECT_NE(why.find("sharedindex."), std::string::npos) << why;
  }
}

TEST(GitIndex, SparseIndex)
{
  NEED_GIT();
  Repo r;
  r.sh(kTree);
  r.sh("git sparse-checkout init --cone --sparse-index && git sparse-checkout set src");
  const std::vector<Entry> want = git_entries(r);
  bool any_sparse = false;
  for (const Entry &e : want)
    any_sparse = any_sparse || (e.flags & GITINDEX_SPARSE_DIR);
  ASSERT_TRUE(any_sparse) << "git wrote no sparse directory entry";
  Index ix = read_index(r.path(".git/index"));
  ASSERT_TRUE(ix);
  EXPECT_TRUE(ix->sparse);
  agree(r);
  // a/ and docs/ stand for their trees: git knows a/b/c/z, and so do we
  // (and anything else below them, which git would look up in the tree).
  EXPECT_TRUE(has_file(ix.get(), "a/b/c/z"));
  EXPECT_TRUE(has_dir(ix.get(), "a/b"));
  EXPECT_TRUE(has_file(ix.get(), "docs/readme.md"));
  EXPECT_TRUE(has_file(ix.get(), "src/main.c"));
  EXPECT_FALSE(has_file(ix.get(), "src/none.c"));
  EXPECT_FALSE(has_dir(ix.get(), "srcx"));
}

TEST(GitIndex, MergeStages)
{
  NEED_GIT();
  Repo r;
  r.sh(kTree);
  r.sh("git checkout -qb side && echo side > a/x && git commit -qam side && "
       "git checkout -q - && echo main > a/x && git commit -qam main && "
       "(git merge -q side || true)");
  Index ix = read_index(r.path(".git/index"));
  ASSERT_TRUE(ix);
  unsigned staged = 0;
  for (const Entry &e : our_entries(ix.get()))
    staged += e.stage != 0;
  EXPECT_EQ(staged, 3u);
  agree(r);
}

TEST(GitIndex, SubmoduleIsADirectoryWithPathsBelow)
{
  NEED_GIT();
  Repo r;
  r.sh(kTree);
  r.sh("git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),vendor/sub");
  agree(r);
  Index ix = read_index(r.path(".git/index"));
  ASSERT_TRUE(ix);
  EXPECT_TRUE(has_dir(ix.get(), "vendor/sub"));
  EXPECT_TRUE(has_dir(ix.get(), "vendor"));
}

TEST(GitIndex, Sha256)
{
  NEED_GIT();
  Repo r;
  int st = 0;
  r.sh("git init -q --object-format=sha256 probe", &st);
  if (st != 0)
    GTEST_SKIP() << "this git makes no SHA-256 repositories";
  r.sh("rm -rf probe && git init -q --object-format=sha256 . && mkdir -p d/e && touch d/e/f g && "
       "git add . && git update-index --skip-worktree g");
  agree(r, ".git/index", ".", 32);
  // Read with the wrong length, it does not parse.
  std::string why;
  EXPECT_FALSE(read_index(r.path(".git/index"), 20, &why));
}

TEST(GitIndex, MissingIsEmpty)
{
  NEED_GIT();
  Repo r;
  r.sh("git init -q .");
  Index ix = read_index(r.path(".git/index"));
  ASSERT_TRUE(ix);
  EXPECT_EQ(ix->n, 0u);
  EXPECT_FALSE(has_file(ix.get(), "a"));
  EXPECT_FALSE(has_dir(ix.get(), "a"));
}

// Write BYTES to PATH.
void put(const std::string &path, const std::string &bytes)
{
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string slurp(const std::string &path)
{
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(GitIndex, DamagedFilesAreRefused)
{
  NEED_GIT();
  Repo r;
  r.sh(kTree);
  for (const char *v : {"2", "3", "4"}) {
    SCOPED_TRACE(std::string("format ") + v);
    r.sh(std::string("git update-index --index-version ") + v);
    const std::string good = slurp(r.path(".git/index"));
    const std::string bad = r.path("bad-index");
    std::string why;
    // Cut anywhere before the checksum's last byte: refused, or (cut
    // inside the extensions) refused too; never a crash or a read past.
    for (size_t cut = 0; cut + 1 < good.size(); cut += 1 + cut / 16) {
      put(bad, good.substr(0, cut));
      Index ix = read_index(bad, 20, &why);
      EXPECT_FALSE(ix) << "cut at " << cut;
      EXPECT_NE(why.find(bad), std::string::npos) << why;
      // Read in a thread, slowed after its entries: no path held (those
      // before the cut were read, but an index that does not parse holds
      // nothing), the same error.
      gitindex_reader_test_delay(2000);
      gitindex_reader_test_thread_from(0);
      Reader rd(gitindex_reader_start(bad.c_str(), 20));
      EXPECT_FALSE(ask(rd.get(), {"a/x", false})) << "cut at " << cut;
      EXPECT_FALSE(ask(rd.get(), {"a", true})) << "cut at " << cut;
      EXPECT_FALSE(ask(rd.get(), {"a/b/c/z", false})) << "cut at " << cut;
      const GError *err = nullptr;
      EXPECT_EQ(gitindex_reader_wait(rd.get(), &err), nullptr);
      gitindex_reader_test_delay(0);
      gitindex_reader_test_thread_from(1u << 20);
      EXPECT_EQ(err ? std::string(err->message) : "", why);
    }
    // Every byte of the header and the entries flipped in turn: refused,
    // or read (a stat field, an object name) — never past the file.
    for (size_t i = 0; i < good.size(); i++) {
      std::string b = good;
      b[i] = (char)(b[i] ^ 0x5a);
      put(bad, b);
      Index ix = read_index(bad, 20, &why);
      (void)ix;
    }
    std::string b = good;
    b[5] = 9; // version 0x00000903
    put(bad, b);
    EXPECT_FALSE(read_index(bad, 20, &why));
    EXPECT_NE(why.find("format version"), std::string::npos) << why;
  }
  // A required extension nobody knows, in front of the checksum.
  const std::string good = slurp(r.path(".git/index"));
  std::string b = good.substr(0, good.size() - 20) + std::string("zzzz\0\0\0\0", 8) +
                  good.substr(good.size() - 20);
  put(r.path("bad-index"), b);
  std::string why;
  EXPECT_FALSE(read_index(r.path("bad-index"), 20, &why));
  EXPECT_NE(why.find("'zzzz'"), std::string::npos) << why;
  // An optional one is skipped.
  b = good.substr(0, good.size() - 20) + std::string("ZZZZ\0\0\0\2ab", 10) +
      good.substr(good.size() - 20);
  put(r.path("bad-index"), b);
  EXPECT_TRUE(read_index(r.path("bad-index"), 20, &why)) << why;
}

// Read in a thread of its own, an index answers "not held" as soon as the
// entries read decide it, and "held" only once it has been read whole (one
// that turned out damaged would hold nothing). Formats 2 and 3 only, and
// not when a shared index lies beside it (a split index's main file holds
// only its changes).
TEST(GitIndex, AReaderAnswersNotHeldBeforeTheEnd)
{
  NEED_GIT();
  Repo r;
  r.sh(kManyEntries);
  r.sh("git update-index --index-version 2");
  const std::string index = r.path(".git/index");
  {
    // Under a megabyte: read at once by the thread that asks.
    Reader rd(gitindex_reader_start(index.c_str(), 20));
    EXPECT_TRUE(gitindex_reader_done(rd.get()));
    EXPECT_TRUE(ask(rd.get(), {"a/b/f1", false}));
  }
  gitindex_reader_test_thread_from(0);
  // 700 entries: three pauses of 20 ms, at 256, 512 and the end.
  gitindex_reader_test_delay(20000);
  {
    Reader rd(gitindex_reader_start(index.c_str(), 20));
    // "a/b/f1x" sorts among the first entries; "a/nothing" before "a.b/".
    EXPECT_FALSE(ask(rd.get(), {"a/b/f1x", false}));
    EXPECT_FALSE(ask(rd.get(), {"a/nothing", true}));
    EXPECT_FALSE(gitindex_reader_done(rd.get())) << "answered only once read whole";
    EXPECT_TRUE(ask(rd.get(), {"a/b/f1", false}));
    EXPECT_TRUE(gitindex_reader_done(rd.get())) << "a held path answered early";
    EXPECT_TRUE(ask(rd.get(), {"dd", true}));
    EXPECT_FALSE(ask(rd.get(), {"dd/none", false}));
  }
  {
    // A path after the last entry waits for the end too.
    Reader rd(gitindex_reader_start(index.c_str(), 20));
    EXPECT_FALSE(ask(rd.get(), {"zz", false}));
    EXPECT_TRUE(gitindex_reader_done(rd.get()));
  }
  r.sh("git update-index --index-version 4");
  {
    Reader rd(gitindex_reader_start(index.c_str(), 20));
    EXPECT_FALSE(ask(rd.get(), {"a/b/f1x", false}));
    EXPECT_TRUE(gitindex_reader_done(rd.get())) << "format 4 answered early";
  }
  r.sh("git update-index --index-version 2 && git update-index --split-index && "
       "ls .git/sharedindex.*");
  {
    Reader rd(gitindex_reader_start(index.c_str(), 20));
    EXPECT_FALSE(ask(rd.get(), {"a/b/f1x", false}));
    EXPECT_TRUE(gitindex_reader_done(rd.get())) << "a split index answered early";
    EXPECT_TRUE(ask(rd.get(), {"a/b/f1", false}));
  }
  gitindex_reader_test_delay(0);
  gitindex_reader_test_thread_from(1u << 20);
  // A missing file is an empty index.
  Reader rd(gitindex_reader_start(r.path(".git/none").c_str(), 20));
  EXPECT_FALSE(ask(rd.get(), {"a", true}));
  const GError *err = nullptr;
  ASSERT_NE(gitindex_reader_wait(rd.get(), &err), nullptr);
  EXPECT_EQ(err, nullptr);
}

// Through the walker: its questions answered early from an index whose
// end turns out not to parse (a required extension nobody knows), the walk
// still tells the index's problem, once, as when it is read first
// (ignore_ctx_settle: no question waited for the end, since none was about
// a path the index holds). With two workers and with one.
TEST(GitIndex, AWalkTellsAProblemFoundAfterItsLastQuestion)
{
  NEED_GIT();
  Repo r;
  r.sh("git init -q . && mkdir -p src/a src/b && touch src/a/keep.c src/b/two.c && "
       "for i in $(seq 1 600); do touch src/a/f$i.c; done && git add . && "
       "touch src/a/junk.o src/b/junk.o && "
       "printf '*.o\n' > .gitignore");
  const std::string index = r.path(".git/index");
  const std::string good = slurp(index);
  put(index, good.substr(0, good.size() - 20) + std::string("zzzz\0\0\0\0", 8) +
                 good.substr(good.size() - 20));
  for (unsigned threads : {1u, 2u}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    // The read pauses 30 ms after each 256 entries: the walk's question
    // about src/a/junk.o is decided by the first ones.
    gitindex_reader_test_delay(30000);
    gitindex_reader_test_thread_from(0);
    TrawlWalkOptions o;
    trawl_walk_options_init(&o);
    o.threads = threads;
    TrawlWalker *w = trawl_walker_new(&o);
    trawl_walker_add_root(w, r.path("").c_str());
    GError *err = nullptr;
    TrawlPattern *p = trawl_pattern_compile("**/*.o", 6, TRAWL_DIALECT_TRAWL, 0, &err);
    ASSERT_TRUE(p) << (err ? err->message : "");
    trawl_walker_add_include(w, p);
    GPtrArray *got = trawl_walker_collect(w, &err);
    gitindex_reader_test_delay(0);
    gitindex_reader_test_thread_from(1u << 20);
    ASSERT_TRUE(got) << (err ? err->message : "");
    EXPECT_EQ(got->len, 0u);
    const GPtrArray *probs = trawl_walker_problems(w);
    ASSERT_EQ(probs->len, 1u);
    const std::string msg = static_cast<GError *>(probs->pdata[0])->message;
    EXPECT_NE(msg.find(".git/index"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'zzzz' is not understood"), std::string::npos) << msg;
    g_ptr_array_unref(got);
    trawl_pattern_free(p);
    trawl_walker_free(w);
  }
}

// A reader reads only as far as the questions need: 4,096 entries, then
// twice as many as read whenever a question needs more, all of them for a
// path held; stopped, it ends where it is, with no index and no error, and
// never sees damage past that point.
TEST(GitIndex, AReaderReadsOnlyAsFarAsItsQuestionsNeed)
{
  NEED_GIT();
  Repo r;
  // 20,000 entries, d00000/f ... d19999/f, and a required extension nobody
  // knows after them: the file is damaged at its very end.
  r.sh("git init -q . && blob=$(git hash-object -w --stdin </dev/null) && "
       "for i in $(seq -f '%05g' 0 19999); do printf '100644 %s 0\\td%s/f\\n' $blob $i; done | "
       "git update-index --index-info && git update-index --index-version 2");
  const std::string good = slurp(r.path(".git/index"));
  const std::string bad = r.path("bad-index");
  put(bad, good.substr(0, good.size() - 20) + std::string("zzzz\0\0\0\0", 8) +
               good.substr(good.size() - 20));
  gitindex_reader_test_thread_from(0);
  {
    Reader rd(gitindex_reader_start(bad.c_str(), 20));
    EXPECT_FALSE(ask(rd.get(), {"d00010/g", false}));
    EXPECT_FALSE(ask(rd.get(), {"d00100", false}));
    EXPECT_FALSE(ask(rd.get(), {"d00200/f/x", true}));
    g_usleep(50000); // time to read on past its first 4,096 entries, were it to
    EXPECT_FALSE(gitindex_reader_done(rd.get())) << "read on without a question past them";
    const GError *err = nullptr;
    EXPECT_FALSE(gitindex_reader_stop(rd.get(), &err)) << "read to the end";
    EXPECT_EQ(err, nullptr) << "the damage at the end was seen";
    EXPECT_EQ(gitindex_reader_wait(rd.get(), &err), nullptr);
    EXPECT_EQ(err, nullptr);
  }
  {
    // A question past the first 4,096 entries: the questions are about
    // paths all along the index, and it reads on to the end without being
    // asked again (pausing again further on would make the walker wait).
    Reader rd(gitindex_reader_start(bad.c_str(), 20));
    EXPECT_FALSE(ask(rd.get(), {"d00010/g", false}));
    EXPECT_FALSE(ask(rd.get(), {"d05000/g", false}));
    for (int i = 0; i < 500 && !gitindex_reader_done(rd.get()); i++)
      g_usleep(10000);
    EXPECT_TRUE(gitindex_reader_done(rd.get())) << "paused again before the end";
    const GError *err = nullptr;
    EXPECT_TRUE(gitindex_reader_stop(rd.get(), &err));
    ASSERT_NE(err, nullptr) << "the damage at the end was not seen";
  }
  {
    // A held path needs the whole file: the damage is found, nothing held.
    Reader rd(gitindex_reader_start(bad.c_str(), 20));
    EXPECT_FALSE(ask(rd.get(), {"d00010/f", false}));
    const GError *err = nullptr;
    EXPECT_TRUE(gitindex_reader_stop(rd.get(), &err));
    ASSERT_NE(err, nullptr);
    EXPECT_NE(std::string(err->message).find("'zzzz' is not understood"), std::string::npos);
  }
  {
    // The good file: a path near its end is asked, read to the end.
    Reader rd(gitindex_reader_start(r.path(".git/index").c_str(), 20));
    EXPECT_TRUE(ask(rd.get(), {"d19990", true}));
    EXPECT_FALSE(ask(rd.get(), {"d19999/g", false}));
    EXPECT_TRUE(gitindex_reader_done(rd.get()));
    const GError *err = nullptr;
    EXPECT_TRUE(gitindex_reader_stop(rd.get(), &err));
    EXPECT_EQ(err, nullptr);
    EXPECT_EQ(gitindex_reader_wait(rd.get(), &err)->n, 20000u);
  }
  // Freed while paused: it stops (no thread left waiting).
  Reader rd(gitindex_reader_start(r.path(".git/index").c_str(), 20));
  EXPECT_FALSE(ask(rd.get(), {"d00001/g", false}));
  gitindex_reader_test_thread_from(1u << 20);
}

} // namespace
