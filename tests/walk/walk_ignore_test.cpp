// Ignore files (docs/ignore.md), through the walker:
//   - sources and precedence: .ignore files deepest first, then .gitignore
//     files deepest first up to the repository's top, then info/exclude,
//     then the excludes file git's configuration names, then the caller's
//     files; the first file with a matching rule decides, with its last
//     matching line, and a deciding '!' re-includes;
//   - the work-tree rule: .gitignore, info/exclude and the excludes file only
//     inside a work tree (TRAWL_IGNORE_NO_REQUIRE_GIT: .gitignore anyway),
//     .ignore anywhere; nested repositories (a `.git` directory or file) and
//     linked work trees (commondir);
//   - `.git` never reported or entered with TRAWL_IGNORE_VCS, an ordinary
//     hidden directory with options.ignore 0;
//   - pruning: an ignored directory is never opened, nor anything below it,
//     whatever a rule re-includes, literal start directories included (the
//     open hook records exactly which directories a walk reads);
//   - walking from a subdirectory: every ancestor's rules apply, anchored
//     ones included; the root itself is walked even when an ancestor's rule
//     ignores it (the divergence from git that fd and rg share);
//   - bad ignore files (a symbolic link, over 100 MiB, binary bytes): a
//     TRAWL_WALK_ERROR_IGNORE problem, once, and the rest of the walk right;
//   - trawl_walker_explain: the deciding rule as `git check-ignore -v` names
//     it, and the same verdict as the walk for every entry of the trees.
//
// The work trees are made by hand (a `.git` directory, `.git/info/exclude`);
// git itself is not run here (tests/diff/git_ignore_diff.py compares against
// it). Every test runs with a private git environment: HOME, XDG_CONFIG_HOME
// and GIT_CONFIG_GLOBAL point into a temporary directory and
// GIT_CONFIG_NOSYSTEM is set, so the user's own excludes file cannot leak in;
// the environment is restored when the test ends.
//
// Every result check runs on each route of kRoutes, through
// trawl_walker_collect, trawl_walker_run and trawl_walker_run_sorted.
#include <cstdlib>
#include <optional>

#include "walk_util.hpp"

using namespace walktest;

namespace {

constexpr off_t kOverLimit = (off_t)100 * 1024 * 1024 + 1; // one byte over 100 MiB

// ---- running the walker with the caller's ignore files --------------------

enum class Mode { Collect, Run, RunSorted };

const char *mode_name(Mode m)
{
  return m == Mode::Collect ? "collect" : m == Mode::Run ? "run" : "run_sorted";
}

void add_ignore_files(TrawlWalker *w, const std::vector<std::string> &files)
{
  for (const auto &f : files) {
    GError *error = nullptr;
    EXPECT_TRUE(trawl_walker_add_ignore_file(w, f.c_str(), &error)) << f;
    if (error) {
      ADD_FAILURE() << "add_ignore_file " << f << ": " << error->message;
      g_error_free(error);
    }
  }
}

// walk_collect / walk_run, or (with CUSTOM ignore files, which walk_util's
// runners cannot add) the same done here.
Outcome walk_mode(const Query &q, const std::vector<std::string> &roots,
                  const std::vector<std::string> &custom, Mode mode)
{
  if (custom.empty()) {
    switch (mode) {
    case Mode::Collect:
      return walk_collect(q, roots);
    case Mode::Run:
      return walk_run(q, roots, 0, false);
    case Mode::RunSorted:
      return walk_run(q, roots, 0, true);
    }
  }
  Outcome out;
  HookLog log;
  Walker w = make_walker(q, roots, &log);
  add_ignore_files(w.get(), custom);
  GError *error = nullptr;
  if (mode == Mode::Collect) {
    GPtrArray *res = trawl_walker_collect(w.get(), &error);
    out.ok = res != nullptr;
    if (res) {
      for (guint i = 0; i < res->len; i++)
        out.paths.push_back(static_cast<const char *>(res->pdata[i]));
      g_ptr_array_unref(res);
    }
  } else {
    Sink sink;
    sink.sorted = mode == Mode::RunSorted;
    out.ok = sink.sorted ? trawl_walker_run_sorted(w.get(), sink_entry, &sink, &error)
                         : trawl_walker_run(w.get(), sink_entry, &sink, &error);
    EXPECT_FALSE(sink.bad_entry);
    EXPECT_FALSE(sink.other_thread);
    if (!sink.sorted)
      std::sort(sink.seen.begin(), sink.seen.end());
    out.typed = sink.seen;
    out.paths = paths_of(sink.seen);
    out.callbacks = sink.calls;
  }
  if (error) {
    out.error_code = error->code;
    g_error_free(error);
  }
  finish(w.get(), log, out);
  return out;
}

// What a walk must give: the results (any order here; sorted before the
// comparison, and collect and run_sorted must give them in that order), the
// directories read when set, the problems' messages (any order; all
// TRAWL_WALK_ERROR_IGNORE).
struct Want {
  std::vector<std::string> results;
  std::optional<std::set<std::string>> opened;
  std::vector<std::string> problems;
};

// The directory an open-hook record names ("N:path" for root N > 0).
std::string opened_dir(const std::vector<std::string> &roots, const std::string &rec)
{
  size_t root = 0;
  std::string path = rec;
  size_t colon = rec.find(':');
  if (colon != std::string::npos && colon > 0 &&
      rec.find_first_not_of("0123456789") == colon) {
    root = std::stoul(rec.substr(0, colon));
    path = rec.substr(colon + 1);
  }
  return path.empty() ? roots.at(root) : roots.at(root) + "/" + path;
}

void expect_walk(Query &q, const std::vector<std::string> &roots, Want want,
                 const std::vector<std::string> &custom = {})
{
  std::sort(want.results.begin(), want.results.end());
  std::sort(want.problems.begin(), want.problems.end());
  for (const Route &route : kRoutes) {
    route.apply(q);
    q.compile_all();
    for (Mode mode : {Mode::Collect, Mode::Run, Mode::RunSorted}) {
      const std::string how = std::string(route.name) + " (" + mode_name(mode) + ") " +
                              q.describe() + " ignore=" + std::to_string(q.opt.ignore);
      Outcome o = walk_mode(q, roots, custom, mode);
      ASSERT_TRUE(o.ok) << how;
      std::vector<std::string> got = o.paths;
      if (roots.size() > 1 && mode == Mode::RunSorted)
        std::sort(got.begin(), got.end()); // root by root: compared as a set
      EXPECT_EQ(got, want.results) << how << "\n" << diff(got, want.results);
      if (want.opened) {
        EXPECT_EQ(as_set(o.opened), *want.opened)
          << how << "\nread: " << show(o.opened) << "\nwanted: " << show(*want.opened);
      }
      std::vector<std::string> problems;
      for (const auto &p : o.problems) {
        EXPECT_EQ(p.code, TRAWL_WALK_ERROR_IGNORE) << how << ": " << p.message;
        problems.push_back(p.message);
      }
      std::sort(problems.begin(), problems.end());
      EXPECT_EQ(problems, want.problems) << how << "\n" << diff(problems, want.problems);
      check_counters(o, how);
      uint64_t listed = 0;
      for (const auto &d : o.opened) {
        std::string dir = opened_dir(roots, d);
        listed += listing_size(dir, "");
      }
      EXPECT_EQ(o.stats.entries_seen, listed) << how;
    }
  }
}

// ---- explain ------------------------------------------------------------------

struct Why {
  bool ok = false;
  bool selected = false;
  TrawlExplainReason reason = TRAWL_EXPLAIN_INCLUDED;
  std::optional<std::string> directory;
  std::optional<std::string> source; // the deciding rule's file; unset: no rule
  unsigned line = 0;
  std::string pattern;
  bool negated = false;
  std::string match;
};

Why explain(const Query &q0, const std::string &root, const std::string &path,
            const std::vector<std::string> &custom = {})
{
  Query q;
  q.includes = q0.includes;
  q.excludes = q0.excludes;
  q.flags = q0.flags;
  q.dialect = q0.dialect;
  q.opt = q0.opt;
  q.compile_all();
  Walker w = make_walker(q, {root}, nullptr);
  add_ignore_files(w.get(), custom);
  TrawlExplanation e;
  GError *error = nullptr;
  Why why;
  why.ok = trawl_walker_explain(w.get(), path.c_str(), &e, &error);
  if (!why.ok) {
    ADD_FAILURE() << "explain " << path << ": " << (error ? error->message : "?");
    if (error)
      g_error_free(error);
    return why;
  }
  why.selected = e.selected;
  why.reason = e.reason;
  if (e.directory)
    why.directory = e.directory;
  if (e.ignore_source) {
    why.source = e.ignore_source;
    why.line = e.ignore_line;
    why.pattern = e.ignore_pattern ? e.ignore_pattern : "";
    why.negated = e.ignore_negated;
    why.match = e.ignore_match ? e.ignore_match : "";
  } else {
    EXPECT_EQ(e.ignore_pattern, nullptr) << path;
    EXPECT_EQ(e.ignore_match, nullptr) << path;
  }
  trawl_explanation_clear(&e);
  return why;
}

// The rule explain names for PATH: "SOURCE:LINE:PATTERN" (check-ignore -v),
// "" when none.
std::string rule_of(const Why &w)
{
  return w.source ? *w.source + ":" + std::to_string(w.line) + ":" + w.pattern : "";
}

// Explain must give every entry of ROOT the walk's verdict.
void expect_explain_agrees(const Query &q, const std::string &root,
                           const std::vector<std::string> &results,
                           const std::vector<std::string> &custom = {})
{
  const std::set<std::string> got(results.begin(), results.end());
  for (const FsEntry &e : scan(root)) {
    Why w = explain(q, root, e.path, custom);
    EXPECT_EQ(w.selected, got.count(e.path) == 1)
      << "explain " << show(e.path) << " under " << root << ": reason " << w.reason << " rule "
      << rule_of(w);
  }
}

// ---- trees --------------------------------------------------------------------

// mkdir -p PATH (absolute).
void make_path(const std::string &path)
{
  for (size_t i = 1; i <= path.size(); i++)
    if (i == path.size() || path[i] == '/')
      make_dir(path.substr(0, i));
}

// Write PATH, making its directories.
void put(const std::string &path, const std::string &content)
{
  make_path(path.substr(0, path.rfind('/')));
  write_file(path, content);
}

// A work tree at DIR, made by hand: `.git` with HEAD, an object, and
// info/exclude holding EXCLUDE.
void make_repo(const std::string &dir, const std::string &exclude = "")
{
  make_path(dir);
  make_dirs(dir, ".git/info");
  make_dirs(dir, ".git/objects/ab");
  make_dirs(dir, ".git/refs/heads");
  put(dir + "/.git/HEAD", "ref: refs/heads/main\n");
  put(dir + "/.git/objects/ab/cd", "blob");
  put(dir + "/.git/info/exclude", exclude);
}

void add_files(const std::string &base, const std::vector<std::string> &files)
{
  make_path(base);
  for (const auto &f : files)
    add_file(base, f);
}

void make_sparse(const std::string &path, off_t size)
{
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path << ": " << strerror(errno);
  ASSERT_EQ(ftruncate(fd, size), 0) << path << ": " << strerror(errno);
  close(fd);
}

std::string real(const std::string &path)
{
  char *r = realpath(path.c_str(), nullptr);
  if (r == nullptr) {
    ADD_FAILURE() << "realpath " << path << ": " << strerror(errno);
    return path;
  }
  std::string out = r;
  free(r);
  return out;
}

// Do A and B name the same file?
bool same_file(const std::string &a, const std::string &b)
{
  struct stat sa, sb;
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

// ---- the fixture: a temporary tree and a private git environment ----------------

class Ignore : public ::testing::Test {
protected:
  void SetUp() override
  {
    // A `.git` above the temporary directory would make every tree here part
    // of that work tree.
    for (std::string d = real(tmp_.path()); !d.empty() && d != "/";
         d = d.substr(0, d.rfind('/'))) {
      struct stat st;
      if (lstat((d + "/.git").c_str(), &st) == 0)
        GTEST_SKIP() << "the temporary directory is inside a git work tree: " << d;
      if (d.rfind('/') == 0)
        break;
    }
    make_dirs(env_.path(), "home");
    make_dirs(env_.path(), "xdg/git");
    save("HOME", (env_ / "home").c_str());
    save("XDG_CONFIG_HOME", (env_ / "xdg").c_str());
    save("GIT_CONFIG_GLOBAL", (env_ / "gitconfig").c_str()); // absent until a test writes it
    save("GIT_CONFIG_NOSYSTEM", "1");
  }

  void TearDown() override
  {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->had)
        setenv(it->name.c_str(), it->value.c_str(), 1);
      else
        unsetenv(it->name.c_str());
    }
    saved_.clear();
  }

  // Set NAME (NULL: unset), restoring its first value when the test ends.
  void save(const char *name, const char *value)
  {
    bool known = false;
    for (const auto &s : saved_)
      known = known || s.name == name;
    if (!known) {
      const char *old = getenv(name);
      saved_.push_back({name, old != nullptr, old ? old : ""});
    }
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }

  // The global git configuration names FILE as the excludes file.
  void global_excludes(const std::string &file)
  {
    put(env_ / "gitconfig", "[core]\n\texcludesFile = " + file + "\n");
  }

  std::string path(const std::string &rel) const { return tmp_ / rel; }

  struct Saved {
    std::string name;
    bool had;
    std::string value;
  };
  std::vector<Saved> saved_;
  TempDir tmp_; // the trees
  TempDir env_; // HOME, XDG_CONFIG_HOME, the global configuration
};

// ---- the work tree and `.git` ------------------------------------------------------

void make_basic_repo(const std::string &repo)
{
  make_repo(repo);
  put(repo + "/.gitignore", "*.o\nbuild/\n");
  add_files(repo, {"main.c", "main.o", "src/a.c", "src/a.o", "build/out.c", "build/gen/g.c",
                   "docs/readme.md"});
}

// .gitignore applies in a work tree; the ignored directory is never read,
// `.git` is neither read nor reported.
TEST_F(Ignore, GitignoreInWorkTree)
{
  const std::string repo = path("repo");
  make_basic_repo(repo);
  Query q;
  expect_walk(q, {repo}, {{"docs/readme.md", "main.c", "src/a.c"}, {{"", "docs", "src"}}, {}});
  // Hidden and directories too: .gitignore is a result, `.git` still is not.
  q.opt.hidden = true;
  q.opt.types = TRAWL_ENTRY_FILE | TRAWL_ENTRY_DIR;
  expect_walk(q, {repo},
              {{".gitignore", "docs", "docs/readme.md", "main.c", "src", "src/a.c"},
               {{"", "docs", "src"}},
               {}});
  expect_explain_agrees(q, repo,
                        {".gitignore", "docs", "docs/readme.md", "main.c", "src", "src/a.c"});
}

// `.git` is never entered, even when a pattern names it or hidden is on.
TEST_F(Ignore, GitDirNeverEnteredWithVcs)
{
  const std::string repo = path("repo");
  make_basic_repo(repo);
  Query q;
  q.opt.hidden = true;
  q.includes = {".git/**"};
  expect_walk(q, {repo}, {{}, {{}}, {}});
  q.includes = {"**/HEAD", "**/exclude"};
  expect_walk(q, {repo}, {{}, {{"", "docs", "src"}}, {}});
  Why w = explain(q, repo, ".git/info/exclude");
  EXPECT_FALSE(w.selected);
  EXPECT_EQ(w.reason, TRAWL_EXPLAIN_GIT_DIR);
  EXPECT_EQ(w.directory, std::optional<std::string>(".git"));
}

// options.ignore 0: no ignore file is read, `.git` is an ordinary hidden
// directory.
TEST_F(Ignore, IgnoreZeroReadsNothing)
{
  const std::string repo = path("repo");
  make_basic_repo(repo);
  put(repo + "/.ignore", "*.c\n");
  Query q;
  q.opt.ignore = 0;
  expect_walk(q, {repo},
              {{"build/gen/g.c", "build/out.c", "docs/readme.md", "main.c", "main.o", "src/a.c",
                "src/a.o"},
               {{"", "build", "build/gen", "docs", "src"}},
               {}});
  q.opt.hidden = true;
  q.opt.types = TRAWL_ENTRY_FILE | TRAWL_ENTRY_DIR;
  expect_walk(q, {repo},
              {{".git", ".git/HEAD", ".git/info", ".git/info/exclude", ".git/objects",
                ".git/objects/ab", ".git/objects/ab/cd", ".git/refs", ".git/refs/heads",
                ".gitignore", ".ignore", "build",
                "build/gen", "build/gen/g.c", "build/out.c", "docs", "docs/readme.md", "main.c",
                "main.o", "src", "src/a.c", "src/a.o"},
               {{"", ".git", ".git/info", ".git/objects", ".git/objects/ab", ".git/refs",
                 ".git/refs/heads", "build",
                 "build/gen", "docs", "src"}},
               {}});
  // A pattern naming `.git` literally opens it (no hidden option needed).
  Query named;
  named.opt.ignore = 0;
  named.includes = {".git/**"};
  expect_walk(named, {repo},
              {{".git/HEAD", ".git/info/exclude", ".git/objects/ab/cd"},
               {{".git", ".git/info", ".git/objects", ".git/objects/ab", ".git/refs",
                 ".git/refs/heads"}},
               {}});
  Why w = explain(q, repo, "build/out.c");
  EXPECT_TRUE(w.selected);
  EXPECT_FALSE(w.source.has_value());
}

// Outside a work tree: .ignore applies, .gitignore only with
// TRAWL_IGNORE_NO_REQUIRE_GIT, the excludes file never.
TEST_F(Ignore, OutsideWorkTree)
{
  const std::string plain = path("plain");
  add_files(plain, {"a.c", "a.o", "a.log", "a.glob", "sub/b.c", "sub/b.o", "sub/b.tmp",
                    "sub/b.log"});
  put(plain + "/.gitignore", "*.o\n");
  put(plain + "/.ignore", "*.log\n");
  put(plain + "/sub/.gitignore", "*.tmp\n");
  put(env_ / "excludes", "*.glob\n");
  global_excludes(env_ / "excludes");

  Query q; // VCS | DOT
  const std::vector<std::string> dot_only = {"a.c", "a.glob", "a.o", "sub/b.c", "sub/b.o",
                                             "sub/b.tmp"};
  expect_walk(q, {plain}, {dot_only, {{"", "sub"}}, {}});
  expect_explain_agrees(q, plain, dot_only);
  q.opt.ignore = TRAWL_IGNORE_DOT;
  expect_walk(q, {plain}, {dot_only, {{"", "sub"}}, {}});
  q.opt.ignore = TRAWL_IGNORE_VCS;
  expect_walk(q, {plain},
              {{"a.c", "a.glob", "a.log", "a.o", "sub/b.c", "sub/b.log", "sub/b.o", "sub/b.tmp"},
               {{"", "sub"}},
               {}});
  q.opt.ignore = TRAWL_IGNORE_VCS | TRAWL_IGNORE_DOT | TRAWL_IGNORE_NO_REQUIRE_GIT;
  expect_walk(q, {plain}, {{"a.c", "a.glob", "sub/b.c"}, {{"", "sub"}}, {}});
  expect_explain_agrees(q, plain, {"a.c", "a.glob", "sub/b.c"});
  Why w = explain(q, plain, "sub/b.tmp");
  EXPECT_EQ(rule_of(w), "sub/.gitignore:1:*.tmp");
  EXPECT_EQ(w.reason, TRAWL_EXPLAIN_IGNORED);
}

// A `.git` at the root's parent makes the root part of a work tree.
TEST_F(Ignore, WorkTreeAboveRoot)
{
  const std::string repo = path("repo");
  make_repo(repo);
  add_files(repo, {"sub/a.c", "sub/a.o", "sub/deep/b.c", "sub/deep/b.o"});
  put(repo + "/sub/.gitignore", "*.o\n");
  Query q;
  expect_walk(q, {repo + "/sub"}, {{"a.c", "deep/b.c"}, {{"", "deep"}}, {}});
}

// Rules with a '/' in a file above the root: only those that a path below
// the root can match are kept for the walk (ignore.c), and each kind here
// decides one file as `git ls-files -o --exclude-standard` does from `sub`.
TEST_F(Ignore, RulesWithSlashAboveRoot)
{
  const std::string repo = path("repo");
  make_repo(repo);
  add_files(repo, {"sub/a.c", "sub/a.o", "sub/deep/b.o", "sub/deep/keep.o", "sub/deep/i.txt",
                   "sub/gen/c.c", "sub/gen/d.h", "sub/x/e.c", "sub/y/tmp/f.c", "sub/y/k.c",
                   "sub/g.log", "sub/other/h.c"});
  put(repo + "/.gitignore", "/sub/deep/*.o\n"   // anchored, below the root: b.o
                            "!sub/deep/keep.o\n" // its exception
                            "**/gen/*.c\n"       // a leading globstar: gen/c.c
                            "sub/x/\n"           // a directory below the root: x
                            "sub/**/tmp/\n"      // a globstar between: y/tmp
                            "/*.log\n"           // the top's own names: not g.log
                            "/other/\n"          // a directory at the top: not sub/other
                            "/sub/*.c\n");       // the root's own names: a.c
  Query q;
  expect_walk(q, {repo + "/sub"},
              {{"a.o", "deep/i.txt", "deep/keep.o", "g.log", "gen/d.h", "other/h.c", "y/k.c"},
               {{"", "deep", "gen", "other", "y"}},
               {}});
}

// ---- precedence ----------------------------------------------------------------------

// Each source against the next one down, a deeper file against a shallower
// one, .ignore at any depth against .gitignore, the last matching line
// within a file.
TEST_F(Ignore, Precedence)
{
  const std::string repo = path("repo");
  make_repo(repo, "only_info.t\n"
                  "git_over_info.t\n"
                  "!info_over_global.t\n");
  put(env_ / "excludes", "only_global.t\n"
                                "info_over_global.t\n"
                                "!global_over_custom.t\n");
  global_excludes(env_ / "excludes");
  const std::string custom = path("custom-ignore");
  put(custom, "only_custom.t\n"
                     "global_over_custom.t\n");
  put(repo + "/.gitignore", "only_git.t\n"
                                   "dot_over_git.t\n"
                                   "!git_over_info.t\n"
                                   "deep_over_shallow.t\n"
                                   "last*.t\n"
                                   "!last_kept.t\n"
                                   "!first_neg.t\n"
                                   "first*.t\n");
  put(repo + "/.ignore", "only_dot.t\n"
                                "!dot_over_git.t\n"
                                "!dot_any_depth.t\n"
                                "shallow_dot.t\n");
  put(repo + "/sub/.gitignore", "!deep_over_shallow.t\n"
                                       "dot_any_depth.t\n");
  put(repo + "/sub/.ignore", "!shallow_dot.t\n");
  const std::vector<std::string> names = {
    "only_custom.t", "only_global.t", "only_info.t", "only_git.t", "only_dot.t",
    "global_over_custom.t", "info_over_global.t", "git_over_info.t", "dot_over_git.t",
    "last_kept.t", "last_dropped.t", "first_neg.t", "plain.t"};
  for (const auto &n : names) {
    add_file(repo, n);
    add_file(repo, "sub/" + n);
  }
  add_files(repo, {"sub/deep_over_shallow.t", "deep_over_shallow.t", "sub/dot_any_depth.t",
                   "sub/shallow_dot.t", "shallow_dot.t"});

  const std::vector<std::string> kept = {
    "global_over_custom.t", "info_over_global.t", "git_over_info.t", "dot_over_git.t",
    "last_kept.t", "plain.t"};
  std::vector<std::string> want;
  for (const auto &n : kept) {
    want.push_back(n);
    want.push_back("sub/" + n);
  }
  for (const char *n : {"sub/deep_over_shallow.t", "sub/dot_any_depth.t", "sub/shallow_dot.t"})
    want.push_back(n);

  Query q;
  expect_walk(q, {repo}, {want, {{"", "sub"}}, {}}, {custom});
  expect_explain_agrees(q, repo, want, {custom});

  const std::string ex = env_ / "excludes";
  struct Case {
    const char *path;
    std::string rule;
    bool selected;
  };
  const Case cases[] = {
    {"only_custom.t", custom + ":1:only_custom.t", false},
    {"sub/only_global.t", ex + ":1:only_global.t", false},
    {"only_info.t", ".git/info/exclude:1:only_info.t", false},
    {"sub/only_git.t", ".gitignore:1:only_git.t", false},
    {"only_dot.t", ".ignore:1:only_dot.t", false},
    {"global_over_custom.t", ex + ":3:!global_over_custom.t", true},
    {"info_over_global.t", ".git/info/exclude:3:!info_over_global.t", true},
    {"git_over_info.t", ".gitignore:3:!git_over_info.t", true},
    {"sub/dot_over_git.t", ".ignore:2:!dot_over_git.t", true},
    {"deep_over_shallow.t", ".gitignore:4:deep_over_shallow.t", false},
    {"sub/deep_over_shallow.t", "sub/.gitignore:1:!deep_over_shallow.t", true},
    {"sub/dot_any_depth.t", ".ignore:3:!dot_any_depth.t", true},
    {"shallow_dot.t", ".ignore:4:shallow_dot.t", false},
    {"sub/shallow_dot.t", "sub/.ignore:1:!shallow_dot.t", true},
    {"last_kept.t", ".gitignore:6:!last_kept.t", true},
    {"last_dropped.t", ".gitignore:5:last*.t", false},
    {"first_neg.t", ".gitignore:8:first*.t", false},
    {"plain.t", "", true},
  };
  for (const Case &c : cases) {
    Why w = explain(q, repo, c.path, {custom});
    EXPECT_EQ(rule_of(w), c.rule) << c.path;
    EXPECT_EQ(w.selected, c.selected) << c.path;
    EXPECT_EQ(w.reason, c.selected ? TRAWL_EXPLAIN_INCLUDED : TRAWL_EXPLAIN_IGNORED) << c.path;
    EXPECT_FALSE(w.directory.has_value()) << c.path;
    if (w.source) {
      EXPECT_EQ(w.negated, c.selected) << c.path;
      EXPECT_EQ(w.match, c.path) << c.path;
    }
  }
}

// ---- pruning -------------------------------------------------------------------------

void make_prune_repo(const std::string &repo)
{
  make_repo(repo);
  put(repo + "/.gitignore", "node_modules/\n"
                                   "!node_modules/keep.js\n"
                                   "!node_modules/lib/\n"
                                   "build/*\n"
                                   "!build/keep/\n");
  put(repo + "/src/.ignore", "gen\n");
  add_files(repo, {"node_modules/keep.js", "node_modules/lib/n.js", "node_modules/lib/sub/m.js",
                   "build/keep/k.c", "build/drop/d.c", "build/top.c", "src/a.c",
                   "src/node_modules/x.js", "src/gen/g.c", "src/gen/deeper/h.c", "src/other/gen",
                   "src/other/o.c"});
}

// An ignored directory is never read, and nothing below it is reported even
// when a rule re-includes it; a directory whose contents are ignored is read
// and a re-included child of it is entered.
TEST_F(Ignore, IgnoredDirectoryNeverOpened)
{
  const std::string repo = path("repo");
  make_prune_repo(repo);
  Query q;
  const std::set<std::string> opened = {"", "build", "build/keep", "src", "src/other"};
  expect_walk(q, {repo}, {{"build/keep/k.c", "src/a.c", "src/other/o.c"}, opened, {}});
  q.opt.types = TRAWL_ENTRY_FILE | TRAWL_ENTRY_DIR;
  const std::vector<std::string> with_dirs = {"build", "build/keep", "build/keep/k.c", "src",
                                              "src/a.c", "src/other", "src/other/o.c"};
  expect_walk(q, {repo}, {with_dirs, opened, {}});
  expect_explain_agrees(q, repo, with_dirs);

  // An ancestor was the ignored one: its rule, and that directory.
  Why w = explain(q, repo, "node_modules/lib/n.js");
  EXPECT_FALSE(w.selected);
  EXPECT_EQ(w.reason, TRAWL_EXPLAIN_IGNORED);
  EXPECT_EQ(w.directory, std::optional<std::string>("node_modules"));
  EXPECT_EQ(rule_of(w), ".gitignore:1:node_modules/");
  EXPECT_EQ(w.match, "node_modules");
  EXPECT_FALSE(w.negated);
  w = explain(q, repo, "node_modules/keep.js"); // re-included, but below an ignored directory
  EXPECT_FALSE(w.selected);
  EXPECT_EQ(w.directory, std::optional<std::string>("node_modules"));
  EXPECT_EQ(rule_of(w), ".gitignore:1:node_modules/");
  w = explain(q, repo, "build/drop/d.c");
  EXPECT_EQ(w.directory, std::optional<std::string>("build/drop"));
  EXPECT_EQ(rule_of(w), ".gitignore:4:build/*");
  EXPECT_EQ(w.match, "build/drop");
  w = explain(q, repo, "build/keep");
  EXPECT_TRUE(w.selected);
  EXPECT_EQ(rule_of(w), ".gitignore:5:!build/keep/");
  EXPECT_TRUE(w.negated);
  EXPECT_EQ(w.match, "build/keep");
  w = explain(q, repo, "src/gen/deeper/h.c");
  EXPECT_EQ(w.directory, std::optional<std::string>("src/gen"));
  EXPECT_EQ(rule_of(w), "src/.ignore:1:gen");
  w = explain(q, repo, "src/other/gen"); // a file: the rule has no trailing '/'
  EXPECT_EQ(w.reason, TRAWL_EXPLAIN_IGNORED);
  EXPECT_FALSE(w.directory.has_value());
  EXPECT_EQ(rule_of(w), "src/.ignore:1:gen");
}

// Literal start directories are not roots: an ignored one, or one below an
// ignored directory, opens nothing.
TEST_F(Ignore, LiteralStartDirectories)
{
  const std::string repo = path("repo");
  make_prune_repo(repo);
  struct Case {
    std::vector<std::string> includes;
    std::vector<std::string> results;
    std::set<std::string> opened;
  };
  const Case cases[] = {
    {{"node_modules/**"}, {}, {}},
    {{"node_modules/lib/**/*.js"}, {}, {}},
    {{"node_modules/keep.js"}, {}, {}},
    {{"src/gen/**/*.c"}, {}, {}},
    {{"src/gen/deeper/*.c"}, {}, {}},
    {{"build/drop/*.c"}, {}, {}},
    {{"build/keep/*.c"}, {"build/keep/k.c"}, {"build/keep"}},
    {{"build/**/*.c"}, {"build/keep/k.c"}, {"build", "build/keep"}},
    {{"{src,node_modules}/**/*.js"}, {}, {"src", "src/other"}},
    {{"src/**/*.c"}, {"src/a.c", "src/other/o.c"}, {"src", "src/other"}},
  };
  for (const Case &c : cases) {
    Query q;
    q.includes = c.includes;
    SCOPED_TRACE(show(c.includes));
    expect_walk(q, {repo}, {c.results, c.opened, {}});
  }
}

// ---- walking from a subdirectory -------------------------------------------------------

// Every ancestor's ignore files apply, anchored rules matched from the top,
// info/exclude and the excludes file too.
TEST_F(Ignore, SubdirectoryRootAppliesAncestors)
{
  const std::string repo = path("repo");
  make_repo(repo, "/sub/dir/only_info.txt\n");
  put(repo + "/.gitignore", "/sub/dir/gen/*.c\n*.o\n");
  put(repo + "/.ignore", "*.bak\n");
  put(repo + "/sub/.gitignore", "*.tmp\n/dir/anchored_sub.txt\n");
  put(env_ / "excludes", "/sub/dir/only_global.txt\n");
  global_excludes(env_ / "excludes");
  add_files(repo, {"sub/dir/gen/x.c", "sub/dir/gen/x.h", "sub/dir/gen/z.o", "sub/dir/y.c",
                   "sub/dir/a.o", "sub/dir/t.tmp", "sub/dir/q.bak", "sub/dir/only_info.txt",
                   "sub/dir/only_global.txt", "sub/dir/anchored_sub.txt", "sub/dir/keep.txt",
                   "sub/dir/sub/dir/gen/x.c", "other/o.c"});
  const std::string root = repo + "/sub/dir";
  Query q;
  const std::vector<std::string> want = {"gen/x.h", "keep.txt", "sub/dir/gen/x.c", "y.c"};
  expect_walk(q, {root}, {want, {{"", "gen", "sub", "sub/dir", "sub/dir/gen"}}, {}});
  expect_explain_agrees(q, root, want);

  // The rules above the root are named by their absolute paths.
  const std::string top = real(repo);
  Why w = explain(q, root, "gen/x.c");
  EXPECT_EQ(rule_of(w), top + "/.gitignore:1:/sub/dir/gen/*.c");
  EXPECT_EQ(w.match, "gen/x.c");
  EXPECT_EQ(w.reason, TRAWL_EXPLAIN_IGNORED);
  w = explain(q, root, "anchored_sub.txt");
  EXPECT_EQ(rule_of(w), top + "/sub/.gitignore:2:/dir/anchored_sub.txt");
  w = explain(q, root, "q.bak");
  EXPECT_EQ(rule_of(w), top + "/.ignore:1:*.bak");
  w = explain(q, root, "only_info.txt");
  EXPECT_EQ(rule_of(w), top + "/.git/info/exclude:1:/sub/dir/only_info.txt");
  w = explain(q, root, "only_global.txt");
  EXPECT_EQ(rule_of(w), env_ / "excludes" + ":1:/sub/dir/only_global.txt");

  // A literal start directory below such a root: the same rules on the way.
  q.includes = {"gen/*"};
  expect_walk(q, {root}, {{"gen/x.h"}, {{"gen"}}, {}});
}

// The root itself is walked even when an ancestor's rule ignores it; the
// rules from above still apply inside it. From the top, the same directory
// as a literal start directory opens nothing.
TEST_F(Ignore, RootIgnoredByAncestorIsWalked)
{
  const std::string repo = path("repo");
  make_repo(repo);
  put(repo + "/.gitignore", "build/\n*.o\n");
  add_files(repo, {"build/out.c", "build/x.o", "build/gen/y.c", "build/gen/y.o", "src/s.c"});
  const std::string build = repo + "/build";
  Query q;
  expect_walk(q, {build}, {{"gen/y.c", "out.c"}, {{"", "gen"}}, {}});
  expect_explain_agrees(q, build, {"gen/y.c", "out.c"});
  Why w = explain(q, build, "out.c");
  EXPECT_TRUE(w.selected);
  EXPECT_FALSE(w.source.has_value());
  w = explain(q, build, "gen/y.o");
  EXPECT_EQ(rule_of(w), real(repo) + "/.gitignore:2:*.o");
  EXPECT_EQ(w.reason, TRAWL_EXPLAIN_IGNORED);

  q.includes = {"build/**"};
  expect_walk(q, {repo}, {{}, {{}}, {}});
  q.includes = {};
  expect_walk(q, {repo}, {{"src/s.c"}, {{"", "src"}}, {}});
}

// The caller's ignore files: patterns relative to the root (not the top),
// applied after every other source, in the order given, whatever
// options.ignore says and outside work trees too.
TEST_F(Ignore, CustomIgnoreFiles)
{
  const std::string repo = path("repo");
  make_repo(repo);
  put(repo + "/.gitignore", "*.o\n");
  add_files(repo, {"sub/gen/x.c", "sub/gen/y.h", "sub/a.c", "sub/a.o", "sub/keep.log",
                   "sub/other.log", "sub/sub/gen/x.c"});
  const std::string first = path("first"), second = path("second");
  put(first, "/gen/*.c\n!keep.log\n");
  put(second, "*.log\n!*.o\n");
  const std::string root = repo + "/sub";
  Query q;
  const std::vector<std::string> want = {"a.c", "gen/y.h", "keep.log", "sub/gen/x.c"};
  expect_walk(q, {root}, {want, {{"", "gen", "sub", "sub/gen"}}, {}}, {first, second});
  expect_explain_agrees(q, root, want, {first, second});
  Why w = explain(q, root, "keep.log", {first, second});
  EXPECT_EQ(rule_of(w), first + ":2:!keep.log");
  EXPECT_TRUE(w.selected);
  w = explain(q, root, "other.log", {first, second});
  EXPECT_EQ(rule_of(w), second + ":1:*.log");
  w = explain(q, root, "a.o", {first, second}); // the .gitignore decides first
  EXPECT_EQ(rule_of(w), real(repo) + "/.gitignore:1:*.o");

  q.opt.ignore = 0; // the caller's files still apply
  expect_walk(q, {root}, {{"a.c", "a.o", "gen/y.h", "keep.log", "sub/gen/x.c"}, {}, {}},
              {first, second});

  const std::string plain = path("plain");
  add_files(plain, {"gen/x.c", "gen/y.h", "z.log"});
  Query outside;
  expect_walk(outside, {plain}, {{"gen/y.h"}, {{"", "gen"}}, {}}, {first, second});
}

// trawl_walker_add_ignore_file refuses what it cannot read.
TEST_F(Ignore, CustomIgnoreFileErrors)
{
  const std::string big = path("big"), dir = path("dir"), target = path("target"),
                    link = path("link");
  make_sparse(big, kOverLimit);
  make_dir(dir);
  put(target, "*.c\n");
  make_link(target, link);
  Walker w(trawl_walker_new(nullptr));
  for (const std::string &bad : {path("missing"), big, dir}) {
    GError *error = nullptr;
    EXPECT_FALSE(trawl_walker_add_ignore_file(w.get(), bad.c_str(), &error)) << bad;
    ASSERT_NE(error, nullptr) << bad;
    EXPECT_EQ(error->domain, TRAWL_WALK_ERROR) << bad;
    EXPECT_EQ(error->code, TRAWL_WALK_ERROR_IGNORE) << bad;
    EXPECT_NE(std::string(error->message).find(bad), std::string::npos) << error->message;
    g_error_free(error);
  }
  // A link is fine here: the caller named it.
  GError *error = nullptr;
  EXPECT_TRUE(trawl_walker_add_ignore_file(w.get(), link.c_str(), &error));
  EXPECT_EQ(error, nullptr);
  const std::string plain = path("plain");
  add_files(plain, {"a.c", "a.h"});
  Query q;
  expect_walk(q, {plain}, {{"a.h"}, {{""}}, {}}, {link});
}

// ---- nested repositories and linked work trees ------------------------------------------

TEST_F(Ignore, NestedRepository)
{
  const std::string outer = path("outer");
  make_repo(outer, "*.tmp\n");
  make_dirs(outer, ".git/modules/sm/info");
  make_dirs(outer, ".git/modules/sm/objects");
  make_dirs(outer, ".git/modules/sm/refs");
  put(outer + "/.git/modules/sm/HEAD", "ref: refs/heads/main\n");
  put(outer + "/.git/modules/sm/info/exclude", "*.sm\n");
  put(outer + "/.gitignore", "*.gen\n");
  put(outer + "/.ignore", "*.dot\n");
  make_repo(outer + "/inner", "*.bak\n");
  put(outer + "/inner/.gitignore", "*.out\n");
  // A submodule: `.git` is a file naming the git directory.
  make_dir(outer + "/sm");
  put(outer + "/sm/.git", "gitdir: ../.git/modules/sm\n");
  add_files(outer, {"a.gen", "a.tmp", "a.out", "a.bak", "a.dot", "a.c", "inner/b.gen",
                    "inner/b.tmp", "inner/b.out", "inner/b.bak", "inner/b.dot", "inner/b.c",
                    "inner/deep/c.gen", "inner/deep/c.out", "sm/s.sm", "sm/s.gen", "sm/s.tmp",
                    "sm/s.c"});
  Query q;
  const std::vector<std::string> expected = {"a.bak", "a.c", "a.out", "inner/b.c",
                                             "inner/b.gen", "inner/b.tmp", "inner/deep/c.gen",
                                             "sm/s.c", "sm/s.gen", "sm/s.tmp"};
  expect_walk(q, {outer}, {expected, {{"", "inner", "inner/deep", "sm"}}, {}});
  expect_explain_agrees(q, outer, expected);

  Why w = explain(q, outer, "inner/b.out");
  EXPECT_EQ(rule_of(w), "inner/.gitignore:1:*.out");
  w = explain(q, outer, "inner/deep/c.out");
  EXPECT_EQ(rule_of(w), "inner/.gitignore:1:*.out");
  w = explain(q, outer, "inner/b.bak");
  EXPECT_EQ(rule_of(w), "inner/.git/info/exclude:1:*.bak");
  w = explain(q, outer, "inner/b.dot"); // .ignore files above still apply
  EXPECT_EQ(rule_of(w), ".ignore:1:*.dot");
  w = explain(q, outer, "inner/b.gen");
  EXPECT_TRUE(w.selected);
  EXPECT_FALSE(w.source.has_value());
  // The submodule's info/exclude, in the outer git directory. The name is
  // shown as the `.git` file's "gitdir:" leads there ("sm/../.git/modules/
  // sm/info/exclude", not normalized): only the file it names is pinned.
  w = explain(q, outer, "sm/s.sm");
  EXPECT_EQ(w.line, 1u);
  EXPECT_EQ(w.pattern, "*.sm");
  ASSERT_TRUE(w.source.has_value());
  EXPECT_TRUE(same_file(outer + "/" + *w.source, outer + "/.git/modules/sm/info/exclude"))
    << *w.source;
  w = explain(q, outer, "a.tmp");
  EXPECT_EQ(rule_of(w), ".git/info/exclude:1:*.tmp");

  // From inside the nested repository: only its own rules.
  expect_walk(q, {outer + "/inner/deep"}, {{"c.gen"}, {{""}}, {}});
  // As literal start directories.
  q.includes = {"inner/deep/*", "sm/*"};
  expect_walk(q, {outer}, {{"inner/deep/c.gen", "sm/s.c", "sm/s.gen", "sm/s.tmp"},
                           {{"inner/deep", "sm"}}, {}});
}

// The outer repository's rules can ignore the nested repository itself: it
// is not opened.
TEST_F(Ignore, NestedRepositoryIgnoredByOuter)
{
  const std::string outer = path("outer");
  make_repo(outer);
  put(outer + "/.gitignore", "vendor/\n");
  make_repo(outer + "/vendor");
  add_files(outer, {"a.c", "vendor/v.c", "vendor/lib/w.c"});
  Query q;
  expect_walk(q, {outer}, {{"a.c"}, {{""}}, {}});
  q.includes = {"vendor/**"};
  expect_walk(q, {outer}, {{}, {{}}, {}});
  // Walked as a root, it is its own work tree.
  q.includes = {};
  expect_walk(q, {outer + "/vendor"}, {{"lib/w.c", "v.c"}, {{"", "lib"}}, {}});
}

// A linked work tree: `.git` names a git directory whose commondir holds
// info/exclude.
TEST_F(Ignore, LinkedWorkTreeCommondir)
{
  const std::string main_repo = path("main");
  make_repo(main_repo, "*.ex\n");
  make_dirs(main_repo, ".git/worktrees/wt");
  put(main_repo + "/.git/worktrees/wt/commondir", "../..\n");
  put(main_repo + "/.git/worktrees/wt/HEAD", "ref: refs/heads/wt\n");
  const std::string wt = path("wt");
  make_dir(wt);
  put(wt + "/.git", "gitdir: " + main_repo + "/.git/worktrees/wt\n");
  put(wt + "/.gitignore", "*.o\n");
  add_files(wt, {"a.c", "a.ex", "a.o", "sub/b.ex", "sub/b.c"});
  Query q;
  expect_walk(q, {wt}, {{"a.c", "sub/b.c"}, {{"", "sub"}}, {}});
  Why w = explain(q, wt, "sub/b.ex");
  EXPECT_EQ(w.reason, TRAWL_EXPLAIN_IGNORED);
  EXPECT_EQ(w.pattern, "*.ex");
  ASSERT_TRUE(w.source.has_value());
  EXPECT_TRUE(g_path_is_absolute(w.source->c_str())) << *w.source;
  EXPECT_TRUE(same_file(*w.source, main_repo + "/.git/info/exclude")) << *w.source;
}

// ---- the excludes file -----------------------------------------------------------------

TEST_F(Ignore, ExcludesFileFromConfiguration)
{
  const std::string repo = path("repo");
  make_repo(repo);
  const std::vector<std::string> files = {"a.c", "a.g1", "a.g2", "a.g3", "a.g4"};
  add_files(repo, files);
  put(env_ / "ex1", "*.g1\n");
  put(env_ / "home/ex2", "*.g2\n");
  put(env_ / "xdg/git/ignore", "*.g3\n");
  put(env_ / "ex4", "*.g4\n");
  Query q;

  // core.excludesFile in $GIT_CONFIG_GLOBAL, an absolute path.
  global_excludes(env_ / "ex1");
  expect_walk(q, {repo}, {{"a.c", "a.g2", "a.g3", "a.g4"}, {{""}}, {}});
  Why w = explain(q, repo, "a.g1");
  EXPECT_EQ(rule_of(w), env_ / "ex1" + ":1:*.g1");

  // "~/" is $HOME.
  global_excludes("~/ex2");
  expect_walk(q, {repo}, {{"a.c", "a.g1", "a.g3", "a.g4"}, {{""}}, {}});

  // Not set: $XDG_CONFIG_HOME/git/ignore.
  put(env_ / "gitconfig", "[user]\n\tname = x\n");
  expect_walk(q, {repo}, {{"a.c", "a.g1", "a.g2", "a.g4"}, {{""}}, {}});

  // The repository's configuration wins over the global one.
  global_excludes(env_ / "ex1");
  put(repo + "/.git/config", "[core]\n\texcludesfile = " + (env_ / "ex4") + "\n");
  expect_walk(q, {repo}, {{"a.c", "a.g1", "a.g2", "a.g3"}, {{""}}, {}});
  unlink((repo + "/.git/config").c_str());

  // Without GIT_CONFIG_GLOBAL: ~/.gitconfig.
  save("GIT_CONFIG_GLOBAL", nullptr);
  put(env_ / "home/.gitconfig", "[core]\n\texcludesFile = " + (env_ / "ex1") + "\n");
  expect_walk(q, {repo}, {{"a.c", "a.g2", "a.g3", "a.g4"}, {{""}}, {}});

  // Outside a work tree it is never read, --no-require-git or not.
  const std::string plain = path("plain");
  add_files(plain, files);
  expect_walk(q, {plain}, {files, {{""}}, {}});
  q.opt.ignore |= TRAWL_IGNORE_NO_REQUIRE_GIT;
  expect_walk(q, {plain}, {files, {{""}}, {}});
}

// ---- bad ignore files -------------------------------------------------------------------

// In-tree ignore files that are symbolic links are not read: one problem
// each, the walk completes, everything else as if they were absent.
TEST_F(Ignore, SymlinkIgnoreFilesNotRead)
{
  const std::string repo = path("repo");
  make_repo(repo);
  put(repo + "/rules.txt", "*.c\n");
  make_link("rules.txt", repo + "/.gitignore");
  add_files(repo, {"a.c", "sub/b.c", "sub2/c.c", "sub2/c.o"});
  make_link("../rules.txt", repo + "/sub/.ignore");
  put(repo + "/sub2/.gitignore", "*.o\n");
  Query q;
  const std::vector<std::string> want = {"a.c", "rules.txt", "sub/b.c", "sub2/c.c"};
  expect_walk(q, {repo},
              {want,
               {{"", "sub", "sub2"}},
               {repo + "/.gitignore: ignore file is a symbolic link, not read",
                repo + "/sub/.ignore: ignore file is a symbolic link, not read"}});
  expect_explain_agrees(q, repo, want);
}

// A bad ignore file above the root (read before the walk starts): the same
// problem, named by its absolute path.
TEST_F(Ignore, BadIgnoreFileAboveRoot)
{
  const std::string repo = path("repo");
  make_repo(repo);
  put(repo + "/rules.txt", "*.c\n");
  make_link("rules.txt", repo + "/.gitignore");
  add_files(repo, {"sub/dir/a.c", "sub/dir/a.o"});
  make_sparse(repo + "/sub/.ignore", kOverLimit);
  put(repo + "/sub/dir/.gitignore", "*.o\n");
  Query q;
  const std::string top = real(repo);
  expect_walk(q, {repo + "/sub/dir"},
              {{"a.c"},
               {{""}},
               {top + "/.gitignore: ignore file is a symbolic link, not read",
                top + "/sub/.ignore: ignore file larger than 100 MiB, not read"}});
}

// A bad ignore file is one problem, however many start directories read it
// (docs/ignore.md: "is reported once as a problem"). Each start directory
// reads the files of the root and of the directories on its way again;
// ignore.c reports each source once per run.
TEST_F(Ignore, BadIgnoreFileReportedOnce)
{
  const std::string repo = path("repo");
  make_repo(repo);
  put(repo + "/rules.txt", "*.c\n");
  make_link("rules.txt", repo + "/.gitignore");
  add_files(repo, {"a/x.c", "b/y.c", "c/z.c"});
  Query q;
  q.includes = {"a/*.c", "b/*.c"};
  expect_walk(q, {repo},
              {{"a/x.c", "b/y.c"},
               {{"a", "b"}},
               {repo + "/.gitignore: ignore file is a symbolic link, not read"}});
}

// Over 100 MiB (sparse files): not read, a problem each, the rest right.
TEST_F(Ignore, OversizedIgnoreFiles)
{
  const std::string repo = path("repo");
  make_repo(repo);
  make_sparse(repo + "/.gitignore", kOverLimit);
  make_sparse(repo + "/.git/info/exclude", kOverLimit);
  make_sparse(env_ / "excludes", kOverLimit);
  global_excludes(env_ / "excludes");
  add_files(repo, {"a.c", "a.o", "sub/b.c", "sub/b.o"});
  put(repo + "/sub/.gitignore", "*.o\n");
  Query q;
  expect_walk(q, {repo},
              {{"a.c", "a.o", "sub/b.c"},
               {{"", "sub"}},
               {repo + "/.gitignore: ignore file larger than 100 MiB, not read",
                repo + "/.git/info/exclude: ignore file larger than 100 MiB, not read",
                env_ / "excludes" + ": ignore file larger than 100 MiB, not read"}});
}

// Binary ignore files (random bytes, NULs, CRs) are parsed like any other:
// nothing crashes, and the readable rules among the bytes still work.
TEST_F(Ignore, BinaryIgnoreFiles)
{
  const std::string repo = path("repo");
  make_repo(repo);
  std::mt19937 rng(20240611);
  auto noise = [&rng](size_t n) {
    std::string s;
    for (size_t i = 0; i < n; i++) {
      char c = (char)(rng() & 0xff);
      // No wildcard, so no noise line can match one of the short names here.
      if (c == '*' || c == '?' || c == '[' || c == '\\')
        c = '\0';
      s += c;
    }
    return s;
  };
  std::string gitignore = std::string("\xef\xbb\xbf*.bom\r\n") + noise(4096) +
                          "\n*.o\n" + std::string("*.tmp\0junk", 10) + "\n" + noise(4096);
  std::string dotignore = noise(2048) + "\n!keep.o\r\n" + noise(2048);
  put(repo + "/.gitignore", gitignore);
  put(repo + "/sub/.ignore", dotignore);
  add_files(repo, {"a.c", "a.o", "a.tmp", "a.bom", "sub/keep.o", "sub/drop.o", "sub/b.c"});
  Query q;
  const std::vector<std::string> want = {"a.c", "sub/b.c", "sub/keep.o"};
  expect_walk(q, {repo}, {want, {{"", "sub"}}, {}});
  expect_explain_agrees(q, repo, want);
}

// ---- odds and ends ----------------------------------------------------------------------

// A rule for directories only looks at the entry itself: a symbolic link to
// a directory is not one, nor is a file.
TEST_F(Ignore, DirectoryRuleLooksAtTheLinkItself)
{
  const std::string repo = path("repo");
  make_repo(repo);
  put(repo + "/.gitignore", "lnk/\ndirlike/\n");
  add_files(repo, {"real/f.c", "dirlike"});
  make_link("real", repo + "/lnk");
  Query q;
  expect_walk(q, {repo}, {{"dirlike", "lnk", "real/f.c"}, {{"", "real"}}, {}});
  q.opt.types = TRAWL_ENTRY_SYMLINK;
  expect_walk(q, {repo}, {{"lnk"}, {{"", "real"}}, {}});
  // Followed, the link is entered: `lnk/` does not match it.
  q.opt.follow = true;
  q.opt.types = TRAWL_ENTRY_FILE | TRAWL_ENTRY_DIR;
  expect_walk(q, {repo},
              {{"dirlike", "lnk", "lnk/f.c", "real", "real/f.c"}, {{"", "lnk", "real"}}, {}});
}

// Each root has its own work tree (or none).
TEST_F(Ignore, SeveralRoots)
{
  const std::string repo = path("repo");
  make_repo(repo);
  put(repo + "/.gitignore", "*.o\n");
  add_files(repo, {"alpha/a1.c", "alpha/a1.o"});
  const std::string plain = path("plain");
  add_files(plain, {"b1.c", "b1.o", "b1.log"});
  put(plain + "/.gitignore", "*.c\n");
  put(plain + "/.ignore", "*.log\n");
  Query q;
  expect_walk(q, {repo + "/alpha", plain}, {{"a1.c", "b1.c", "b1.o"}, {{"", "1:"}}, {}});
}

// Many directories with ignore files of their own, read by several threads
// at once, several times over (the TSan build runs this suite).
TEST_F(Ignore, ManyIgnoreFiles)
{
  const std::string repo = path("repo");
  make_repo(repo);
  put(repo + "/.gitignore", "*.o\n");
  std::vector<std::string> want;
  std::set<std::string> opened = {""};
  for (int i = 0; i < 24; i++) {
    char d[8];
    snprintf(d, sizeof d, "d%02d", i);
    const std::string dir = d;
    add_files(repo, {dir + "/x.c", dir + "/x.o", dir + "/keep.o", dir + "/sub/y.c",
                     dir + "/sub/y.tmp", dir + "/gone/z.c"});
    put(repo + "/" + dir + "/.gitignore", "!keep.o\ngone/\n");
    if (i % 2)
      put(repo + "/" + dir + "/sub/.ignore", "*.tmp\n");
    want.insert(want.end(), {dir + "/keep.o", dir + "/sub/y.c", dir + "/x.c"});
    if (i % 2 == 0)
      want.push_back(dir + "/sub/y.tmp");
    opened.insert({dir, dir + "/sub"});
  }
  Query q;
  for (int round = 0; round < 3; round++)
    expect_walk(q, {repo}, {want, opened, {}});
}

} // namespace
