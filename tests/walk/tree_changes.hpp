// The settings users walk in and the changes their trees go through, for
// the property tests of memos and caches (memo_test.cpp, cache_test.cpp).
//
// A setting is where the tree sits: a git work tree whose top is the root,
// one whose top is two levels above it, no work tree at all (walked with
// "no require git"), a work tree with nested repositories inside, and a
// linked work tree (git worktree add) whose top is the root. Each
// has its own git configuration (GIT_CONFIG_GLOBAL, XDG_CONFIG_HOME, HOME),
// so the excludes file and core.excludesFile are the test's.
//
// In the settings with a repository, a random part of the tree (ignored
// files among it) is committed when it is made, so that tracked files that
// rules match, and tracked files in ignored directories, are in every
// sequence; the index classes (git add, rm --cached and commit of an
// ignored path, a checkout that changes the index, skip-worktree, and an
// unrelated git add) are the cache's to re-check.
//
// A change class is one kind of thing that happens to a tree. A sequence is
// a schedule that holds every class the test claims at least once, in an
// order the seed decides, with more random ones between: the seed never
// decides whether a class is covered. Classes whose precondition does not
// hold (deleting an ignore file that is not there) first make it hold, as a
// step of its own that is checked too, so the class itself always happens.
#ifndef TRAWL_TESTS_WALK_TREE_CHANGES_HPP
#define TRAWL_TESTS_WALK_TREE_CHANGES_HPP

#include <pwd.h>
#include <sys/stat.h>

#include <functional>
#include <optional>
#include <map>

#include "walk_gen.hpp"
#include "walk_util.hpp"

namespace treechanges {

using namespace walktest;
using walkgen::Rng;

enum Setting { TOP_AT_ROOT, TOP_ABOVE, NO_REPO, NESTED, WORKTREE };
inline const Setting kSettings[] = {TOP_AT_ROOT, TOP_ABOVE, NO_REPO, NESTED, WORKTREE};

// The RNG seed of sequence SEED in SETTING: one stride per seed, wider than
// the settings, so that no two (seed, setting) pairs share a sequence (with
// a stride of 4 and five settings, seed 1's linked work tree was seed 2's
// first setting).
constexpr uint32_t kSeedStride = 8;
static_assert(sizeof kSettings / sizeof kSettings[0] <= kSeedStride,
              "more settings than the seed stride: sequences would repeat");
inline uint32_t sequence_seed(uint32_t seed, Setting s) { return seed * kSeedStride + (uint32_t)s; }

inline const char *setting_name(Setting s)
{
  switch (s) {
  case TOP_AT_ROOT: return "work tree, top at the root";
  case TOP_ABOVE: return "work tree, top above the root";
  case NO_REPO: return "no work tree, no-require-git";
  case WORKTREE: return "a linked work tree (git worktree add) as the root";
  default: return "work tree with nested repositories";
  }
}

enum Kind {
  CREATE_FILE, DELETE_FILE, RENAME_FILE, CREATE_DIR, DELETE_DIR, RENAME_DIR, RENAME_ACROSS,
  IGNORE_FILE,      // a source (below) changed by an op, in a band
  CONFIG_EXCLUDES,  // core.excludesFile pointed elsewhere, or back
  DIR_TO_LINK, FILE_TO_DIR,
  MTIME_RESTORED,   // a change, then the directory's mtime put back
  SAME_GRANULE,     // a change, a cached run, a change: all in one clock tick
  SEVERAL_IN_ONE_TICK,
  UNREADABLE,       // a directory made unreadable, checked, made readable, checked
  DOTGIT_ROOT, DOTGIT_ABOVE, DOTGIT_SUB, // a `.git` created or removed, checked, put back
  // The index of the repository the root is in (settings with one).
  INDEX_ADD,        // git add -f of an ignored path
  INDEX_REMOVE,     // git rm --cached of a tracked path that rules ignore
  INDEX_COMMIT,     // git add -f of an ignored path, and git commit
  INDEX_CHECKOUT,   // git checkout of a branch whose index differs by an ignored path
  INDEX_SKIP,       // git update-index --[no-]skip-worktree of a tracked path
  INDEX_UNRELATED,  // git add of an untracked path no rule ignores
  // A repository nested in the walk (setting NESTED), at the band's depth
  // (made there first when there is none).
  NESTED_SOURCE,    // its info/exclude, or the excludes file its config names, by an op
  NESTED_CONFIG,    // its config's core.excludesFile set, or unset
  NESTED_RETARGET,  // its `.git` a gitdir: file, pointed at another git directory
  NESTED_DIR_FILE,  // its `.git` turned from a directory into a gitdir: file (or back),
                    // checked, and turned back
  SUBMODULE_ADD,    // git submodule add of a local bare repository
  SUBMODULE_DEINIT, // git submodule deinit -f of one
};
enum Source { GITIGNORE, DOTIGNORE, INFO_EXCLUDE, EXCLUDES_FILE, NESTED_INFO, NESTED_EXCLUDES };
enum Op { EDIT, REPLACE, CREATE, DELETE };
// Where a .gitignore or .ignore is: above the root, at the root, or 1, 2,
// or 3 and more levels below it.
enum Band { ABOVE, DEPTH0, DEPTH1, DEPTH2, DEPTH3 };

struct Change {
  Kind kind;
  Source source = GITIGNORE;
  Op op = EDIT;
  Band band = DEPTH0;

  std::string name() const
  {
    static const char *const kinds[] = {
      "create file", "delete file", "rename file", "create directory", "delete directory",
      "rename directory", "rename across directories", "", "core.excludesFile elsewhere",
      "directory to link", "file to directory", "mtime restored", "same granule as the write",
      "several in one tick", "unreadable and readable again", ".git at the root",
      ".git above the root", ".git in a subdirectory", "git add -f of an ignored path",
      "git rm --cached of an ignored path", "git commit of an ignored path",
      "git checkout changing the index", "git update-index --skip-worktree",
      "git add of an unrelated path", "", "nested core.excludesFile set or unset",
      "nested gitdir: retargeted", "nested .git directory to file and back",
      "git submodule add", "git submodule deinit"};
    static const char *const sources[] = {".gitignore", ".ignore", "info/exclude", "excludes file",
                                          "nested info/exclude", "nested excludes file"};
    static const char *const ops[] = {"edited in place", "replaced by a rename", "created", "deleted"};
    static const char *const bands[] = {" above the root", " at the root", " at depth 1",
                                        " at depth 2", " at depth 3+"};
    if (kind > NESTED_SOURCE)
      return std::string(kinds[kind]) + bands[band];
    if (kind == NESTED_SOURCE)
      return std::string(sources[source]) + bands[band] + " " + ops[op];
    if (kind != IGNORE_FILE)
      return kinds[kind];
    return std::string(sources[source]) + (source <= DOTIGNORE ? bands[band] : "") + " " + ops[op];
  }
  bool operator<(const Change &o) const { return name() < o.name(); }
};

// Every class: the tree's own, and with OUTSIDE those of the sources outside
// the walk (info/exclude, the excludes file, the config, a .gitignore or
// .ignore above the root, a .git above it, with INDEX the index), which only
// a cache re-checks; with NESTED those of nested repositories at depths 1,
// 2 and 3+ (their sources are the walk's own: recorded with the directory
// holding the `.git`), and with OUTSIDE and NESTED real submodules (which
// change the top's index too).
inline std::vector<Change> all_changes(bool outside, bool index = false, bool nested = false)
{
  std::vector<Change> v;
  for (Band b : {DEPTH1, DEPTH2, DEPTH3}) {
    if (!nested)
      break;
    for (Source s : {NESTED_INFO, NESTED_EXCLUDES})
      for (Op op : {EDIT, REPLACE, CREATE, DELETE})
        v.push_back({NESTED_SOURCE, s, op, b});
    for (Kind k : {NESTED_CONFIG, NESTED_RETARGET, NESTED_DIR_FILE})
      v.push_back({k, GITIGNORE, EDIT, b});
    if (outside)
      for (Kind k : {SUBMODULE_ADD, SUBMODULE_DEINIT})
        v.push_back({k, GITIGNORE, EDIT, b});
  }
  if (outside && index)
    for (Kind k : {INDEX_ADD, INDEX_REMOVE, INDEX_COMMIT, INDEX_CHECKOUT, INDEX_SKIP,
                   INDEX_UNRELATED})
      v.push_back({k});
  for (Kind k : {CREATE_FILE, DELETE_FILE, RENAME_FILE, CREATE_DIR, DELETE_DIR, RENAME_DIR,
                 RENAME_ACROSS, DIR_TO_LINK, FILE_TO_DIR, MTIME_RESTORED, SAME_GRANULE,
                 SEVERAL_IN_ONE_TICK, UNREADABLE, DOTGIT_ROOT, DOTGIT_SUB})
    v.push_back({k});
  if (outside)
    v.push_back({DOTGIT_ABOVE});
  for (Source s : {GITIGNORE, DOTIGNORE})
    for (Op op : {EDIT, REPLACE, CREATE, DELETE})
      for (Band b : {ABOVE, DEPTH0, DEPTH1, DEPTH2, DEPTH3})
        if (b != ABOVE || outside)
          v.push_back({IGNORE_FILE, s, op, b});
  if (outside) {
    for (Source s : {INFO_EXCLUDE, EXCLUDES_FILE})
      for (Op op : {EDIT, REPLACE, CREATE, DELETE})
        v.push_back({IGNORE_FILE, s, op, DEPTH0});
    v.push_back({CONFIG_EXCLUDES});
  }
  return v;
}

// Every class of CLASSES once, plus EXTRA drawn at random, shuffled.
inline std::vector<Change> schedule(Rng &rng, const std::vector<Change> &classes, unsigned extra)
{
  std::vector<Change> v = classes;
  for (unsigned i = 0; i < extra; i++)
    v.push_back(rng.pick(classes));
  for (size_t i = v.size(); i > 1; i--)
    std::swap(v[i - 1], v[rng.below((unsigned)i)]);
  return v;
}

// How many of each class a run made, by name.
using Counts = std::map<std::string, unsigned>;

inline const char *const kRules[] = {"*.c\n", "*.h\n!main.h\n", "src/\n", "/lib\n",
                                     "*.md\n**/x/**\n", "!*.c\n", "test\n", ".hidden/\n",
                                     "b*\n", "*.txt\n!a*\n", "mv-*\n", "*\n!*/\n!*.c\n"};

// The global configuration's constant part. Run as nobody (Enforced) with
// the real user root, git's local transport (a submodule's clone) takes the
// remote for another user's: trust every directory.
inline const char kSafe[] = "[safe]\n\tdirectory = *\n";

inline void put(const std::string &path, const std::string &content)
{
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return; // its directory may be gone: nothing happens, which is also a step
  if (write(fd, content.data(), content.size()) < 0)
    ADD_FAILURE() << "write " << show(path);
  close(fd);
}

inline bool exists(const std::string &path)
{
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// Copy the tree FROM (files and directories) to TO.
// A file's bytes ("" when it cannot be read).
inline std::string read_text(const std::string &path)
{
  std::string data;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  char buf[4096];
  ssize_t n;
  while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0)
    data.append(buf, (size_t)n);
  if (fd >= 0)
    close(fd);
  return data;
}

inline void copy_tree(const std::string &from, const std::string &to)
{
  make_dir(to);
  for (const auto &e : scan(from)) {
    const std::string src = from + "/" + e.path, dst = to + "/" + e.path;
    if (e.kind == 'd') {
      make_dir(dst);
    } else if (e.kind == 'f') {
      put(dst, read_text(src));
    }
  }
}

// Run git ARGS in directory DIR with INPUT on its standard input; its
// standard output. EXIT_OK: the exit statuses that are not failures (the
// first one: 0).
inline std::string git(const std::string &dir, const std::vector<std::string> &args,
                       const std::string &input = "", std::vector<int> exit_ok = {0})
{
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0) {
    ADD_FAILURE() << "pipe";
    return "";
  }
  const pid_t pid = fork();
  if (pid == 0) {
    // As nobody (Enforced), only the effective ids are nobody's. git runs
    // some commands as /bin/sh scripts (`git submodule`), and dash, like
    // bash, sets its effective ids back to the real ones (root's) unless
    // given -p: the submodule's files were root's, in nobody's tree, and
    // nobody could not remove them. The child takes the effective ids as
    // all three.
    const uid_t uid = geteuid();
    const gid_t gid = getegid();
    if (setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0)
      _exit(126);
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]);
    close(in[1]);
    close(out[0]);
    close(out[1]);
    std::vector<char *> argv{const_cast<char *>("git"), const_cast<char *>("-C"),
                             const_cast<char *>(dir.c_str())};
    for (const std::string &a : args)
      argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    execvp("git", argv.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  // Small inputs (a few paths): the pipe holds them.
  if (!input.empty() && write(in[1], input.data(), input.size()) != (ssize_t)input.size())
    ADD_FAILURE() << "write to git";
  close(in[1]);
  std::string output;
  char buf[4096];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof buf)) > 0)
    output.append(buf, (size_t)n);
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (std::find(exit_ok.begin(), exit_ok.end(), code) == exit_ok.end()) {
    std::string cmd = "git -C " + show(dir);
    for (const std::string &a : args)
      cmd += " " + show(a);
    ADD_FAILURE() << cmd << ": exit " << code;
  }
  return output;
}

// NUL-separated LIST, split.
inline std::vector<std::string> split0(const std::string &list)
{
  std::vector<std::string> v;
  for (size_t at = 0; at < list.size();) {
    const size_t end = list.find('\0', at);
    v.push_back(list.substr(at, end - at));
    at = end == std::string::npos ? list.size() : end + 1;
  }
  return v;
}

// A tree in one setting, with its git configuration in the environment
// while it lives.
class World {
public:
  World(const std::string &tmp, Setting setting, Rng &rng) : tmp_(tmp), setting_(setting)
  {
    make_dir(tmp + "/xdg");
    make_dir(tmp + "/xdg/git");
    put(tmp + "/xdg/git/ignore", "*.txt\n");
    put(tmp + "/other-excludes", "*.md\n");
    put(tmp + "/gitconfig", kSafe);
    setenv("GIT_CONFIG_GLOBAL", (tmp + "/gitconfig").c_str(), 1);
    setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
    setenv("XDG_CONFIG_HOME", (tmp + "/xdg").c_str(), 1);
    old_home_ = getenv("HOME") ? getenv("HOME") : "";
    setenv("HOME", tmp.c_str(), 1);
    // Paths given to git are names, whatever bytes they hold; commits need
    // an author.
    setenv("GIT_LITERAL_PATHSPECS", "1", 1);
    for (const char *v : {"GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"})
      setenv(v, "t", 1);
    for (const char *v : {"GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"})
      setenv(v, "t@t", 1);
    // A repository's `.git` as git makes it, copied wherever one is made.
    if (system(("git init -q '" + tmp + "/template'").c_str()) != 0)
      ADD_FAILURE() << "git init";
    put(tmp + "/nested-excludes", "*.h\n");
    std::string top;
    switch (setting) {
    case TOP_AT_ROOT:
    case NESTED:
      top = root = tmp + "/top";
      break;
    case WORKTREE:
      // The main work tree elsewhere, with a commit to branch from; the
      // root is the linked one, whose `.git` is a gitdir: file and whose
      // info/exclude and config are the main one's (its commondir).
      make_dir(tmp + "/main");
      copy_tree(tmp + "/template/.git", tmp + "/main/.git");
      git(tmp + "/main", {"commit", "-q", "--allow-empty", "-m", "main"});
      git(tmp + "/main", {"worktree", "add", "-q", "-b", "linked", tmp + "/top"});
      top = root = tmp + "/top";
      break;
    case TOP_ABOVE:
      top = tmp + "/top";
      root = top + "/w/r";
      break;
    case NO_REPO:
      root = tmp + "/plain/r";
      break;
    }
    make_dir(tmp + "/" + (setting == NO_REPO ? "plain" : "top"));
    if (setting == TOP_ABOVE)
      make_dir(top + "/w");
    make_dir(root);
    if (!top.empty() && setting != WORKTREE)
      copy_tree(tmp + "/template/.git", top + "/.git");
    walkgen::generate_dir(rng, root, "", 0);
    if (setting == NESTED) {
      // Two directories below the root become repositories of their own.
      auto dirs = dirs_below();
      for (int i = 0; i < 2 && dirs.size() > 1; i++) {
        const std::string d = dirs[1 + rng.below((unsigned)dirs.size() - 1)];
        if (!exists(at(d) + "/.git"))
          copy_tree(tmp + "/template/.git", at(d) + "/.git");
        put(at(d) + "/.gitignore", rng.pick(kRules));
      }
    }
    ignore = TRAWL_IGNORE_VCS | TRAWL_IGNORE_DOT |
             (setting == NO_REPO ? (unsigned)TRAWL_IGNORE_NO_REQUIRE_GIT : 0u);
    info_exclude_ = (setting == TOP_ABOVE  ? top
                     : setting == NO_REPO  ? tmp + "/plain"
                     : setting == WORKTREE ? tmp + "/main"
                                           : root) +
                    "/.git/info/exclude";
    top_ = top;
    below_top_ = setting == TOP_ABOVE ? "w/r/" : "";
    if (!top.empty()) {
      // Rules that match, so that ignored files are tracked from the start
      // (the root's .gitignore from kRules, plus one for .o files), then a
      // third of every file, ignored or not, committed.
      put(root + "/.gitignore", std::string(rng.pick(kRules)) + "*.o\n");
      const auto files = files_below();
      for (size_t i = 0; i < 3 && !files.empty(); i++)
        put(at(files[rng.below((unsigned)files.size())] + ".o"), "x");
      std::vector<std::string> pick;
      for (const std::string &f : untracked(true))
        if (rng.chance(3))
          pick.push_back(f);
      for (const std::string &f : untracked(false))
        if (f.size() > 2 && f.compare(f.size() - 2, 2, ".o") == 0 && pick.empty())
          pick.push_back(f); /* at least one ignored file */
      add(pick);
      git(top_, {"commit", "-q", "--allow-empty", "-m", "a third of the tree"});
    }
    if (setting == NESTED) {
      // The remote of the submodules: a bare repository with a few files
      // and rules of its own.
      const std::string src = tmp + "/remote-src";
      make_dir(src);
      copy_tree(tmp + "/template/.git", src + "/.git");
      make_dir(src + "/lib");
      put(src + "/a.c", "x");
      put(src + "/b.h", "x");
      put(src + "/lib/x.c", "x");
      put(src + "/lib/y.md", "x");
      put(src + "/.gitignore", "*.o\n");
      git(src, {"add", "-A"});
      git(src, {"commit", "-q", "-m", "remote"});
      git(tmp, {"clone", "-q", "--bare", src, tmp + "/remote.git"});
      make_dir(tmp + "/gitdirs");
    }
  }

  ~World()
  {
    unsetenv("GIT_CONFIG_GLOBAL");
    unsetenv("GIT_CONFIG_NOSYSTEM");
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("GIT_LITERAL_PATHSPECS");
    for (const char *v : {"GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME", "GIT_AUTHOR_EMAIL",
                          "GIT_COMMITTER_EMAIL"})
      unsetenv(v);
    setenv("HOME", old_home_.c_str(), 1);
  }

  // Hand every file of the world to UID:GID (a test that runs as nobody).
  void give_to(uid_t uid, gid_t gid) const
  {
    if (lchown(tmp_.c_str(), uid, gid) != 0)
      ADD_FAILURE() << "lchown " << tmp_;
    for (const auto &e : scan(tmp_))
      if (lchown((tmp_ + "/" + e.path).c_str(), uid, gid) != 0)
        ADD_FAILURE() << "lchown " << e.path;
  }

  // Make change C; CHECK(what) is called after a step that needs checking
  // on its own (a precondition made, the first half of a two-part class).
  // Returns what was done.
  std::string apply(Rng &rng, const Change &c, const std::function<void(const std::string &)> &check)
  {
    auto dirs = dirs_below();
    auto files = files_below();
    const std::string name = std::string(rng.pick(walkgen::kFileBases)) + rng.pick(walkgen::kExts);
    switch (c.kind) {
    case CREATE_FILE: {
      const std::string f = in(rng.pick(dirs), name);
      put(at(f), "x");
      return "create " + f;
    }
    case DELETE_FILE: {
      if (files.empty()) {
        put(at(in(rng.pick(dirs), name)), "x");
        check("create a file to delete");
        files = files_below();
      }
      const std::string f = rng.pick(files);
      unlink(at(f).c_str());
      return "delete " + f;
    }
    case RENAME_FILE:
    case RENAME_ACROSS:
    case RENAME_DIR: {
      const bool dir = c.kind == RENAME_DIR || (c.kind == RENAME_ACROSS && rng.chance(2));
      if (dir && dirs.size() < 2) {
        make_dir(at(in("", "made")));
        check("make a directory to rename");
        dirs = dirs_below();
      }
      if (!dir && files.empty()) {
        put(at(in("", name)), "x");
        check("create a file to rename");
        files = files_below();
      }
      const std::string from = dir ? dirs[1 + rng.below((unsigned)dirs.size() - 1)] : rng.pick(files);
      const size_t slash = from.rfind('/');
      const std::string parent = slash == std::string::npos ? "" : from.substr(0, slash);
      std::string to_dir = parent;
      if (c.kind == RENAME_ACROSS) {
        std::vector<std::string> across;
        for (const auto &d : dirs)
          if (d != parent && d != from && d.rfind(from + "/", 0) != 0)
            across.push_back(d);
        if (across.empty()) {
          make_dir(at("across"));
          check("make a directory to rename into");
          across.push_back("across");
        }
        to_dir = rng.pick(across);
      }
      const std::string to = in(to_dir, std::string("mv-") + rng.pick(walkgen::kFileBases));
      if (to.rfind(from + "/", 0) == 0 || to == from)
        return "nothing (rename onto itself)";
      rename(at(from).c_str(), at(to).c_str());
      return "mv " + from + " " + to;
    }
    case CREATE_DIR: {
      const std::string d = in(rng.pick(dirs), rng.pick(walkgen::kDirNames));
      mkdir(at(d).c_str(), 0755);
      put(at(in(d, name)), "x");
      return "mkdir " + d;
    }
    case DELETE_DIR: {
      if (dirs.size() < 2) {
        make_dir(at("made"));
        check("make a directory to delete");
        dirs = dirs_below();
      }
      const std::string d = dirs[1 + rng.below((unsigned)dirs.size() - 1)];
      remove_tree(at(d));
      return "rm -r " + d;
    }
    case DIR_TO_LINK: {
      if (dirs.size() < 2) {
        make_dir(at("made"));
        check("make a directory to link");
        dirs = dirs_below();
      }
      const std::string d = dirs[1 + rng.below((unsigned)dirs.size() - 1)];
      remove_tree(at(d));
      if (symlink(rng.chance(2) ? "." : "..", at(d).c_str()) != 0)
        ADD_FAILURE() << "symlink " << show(d);
      return "link " + d;
    }
    case FILE_TO_DIR: {
      if (files.empty()) {
        put(at(in("", name)), "x");
        check("create a file to turn into a directory");
        files = files_below();
      }
      const std::string f = rng.pick(files);
      unlink(at(f).c_str());
      mkdir(at(f).c_str(), 0755);
      put(at(in(f, name)), "x");
      return "file to directory " + f;
    }
    case MTIME_RESTORED: {
      const std::string d = rng.pick(dirs);
      struct stat st;
      if (stat(at(d).c_str(), &st) != 0)
        return "nothing";
      put(at(in(d, name)), "x");
      struct timespec times[2] = {st.st_atim, st.st_mtim};
      utimensat(AT_FDCWD, at(d).c_str(), times, AT_SYMLINK_NOFOLLOW);
      return "create " + in(d, name) + ", mtime of " + show(d) + " restored";
    }
    case SAME_GRANULE: {
      // A change, the cached run that records it (racy: in the walk's own
      // tick), and a second change to the same directory, at once.
      const std::string d = rng.pick(dirs);
      put(at(in(d, name)), "x");
      check("a change just before the cache is written (same granule)");
      put(at(in(d, std::string("g-") + name)), "x");
      return "create " + in(d, name) + ", a cached run, create " + in(d, "g-" + name);
    }
    case SEVERAL_IN_ONE_TICK: {
      std::string what;
      for (Kind k : {CREATE_FILE, DELETE_FILE, CREATE_DIR})
        what += apply(rng, {k}, [](const std::string &) {}) + "; ";
      return what;
    }
    case UNREADABLE: {
      if (dirs.size() < 2) {
        make_dir(at("made"));
        put(at("made/a.c"), "x");
        check("make a directory to lock");
        dirs = dirs_below();
      }
      const std::string d = dirs[1 + rng.below((unsigned)dirs.size() - 1)];
      chmod(at(d).c_str(), 0);
      check("chmod 0 " + show(d));
      chmod(at(d).c_str(), 0755);
      return "chmod 0, then 0755 " + d;
    }
    case DOTGIT_ROOT:
    case DOTGIT_ABOVE:
    case DOTGIT_SUB: {
      // Made (or removed), checked, and put back: the setting stays.
      if (c.kind == DOTGIT_SUB && dirs.size() < 2) {
        make_dir(at("made"));
        check("make a directory for a repository");
        dirs = dirs_below();
      }
      const std::string d = c.kind == DOTGIT_ROOT    ? root
                            : c.kind == DOTGIT_ABOVE ? root.substr(0, root.rfind('/'))
                                                     : at(dirs[1 + rng.below((unsigned)dirs.size() - 1)]);
      check(toggle_git(d));
      return toggle_git(d);
    }
    case CONFIG_EXCLUDES:
      excludes_elsewhere_ = !excludes_elsewhere_;
      put(tmp_ + "/gitconfig", std::string(kSafe) +
                                   (excludes_elsewhere_ ? "[core]\n\texcludesFile = " + tmp_ +
                                                              "/other-excludes\n"
                                                        : ""));
      return excludes_elsewhere_ ? "core.excludesFile set to other-excludes"
                                 : "core.excludesFile unset";
    case IGNORE_FILE:
      return ignore_file(rng, c, check);
    case NESTED_SOURCE:
    case NESTED_CONFIG:
    case NESTED_RETARGET:
    case NESTED_DIR_FILE:
      return nested_change(rng, c, check);
    case SUBMODULE_ADD:
      return submodule_add(rng, c.band, check);
    case SUBMODULE_DEINIT: {
      std::vector<std::string> subs = submodules(c.band);
      if (subs.empty()) {
        const std::string what = submodule_add(rng, c.band, check);
        check(what + " to deinit it");
        subs = submodules(c.band);
      }
      if (subs.empty()) {
        // (Counted, the class must have happened.)
        ADD_FAILURE() << "no submodule at " << c.name() << " to deinit, one just added";
        return "nothing (no submodule)";
      }
      const std::string d = rng.pick(subs);
      gitmodules_file(check);
      git(top_, {"submodule", "deinit", "-q", "-f", "--", d});
      return "git submodule deinit -f " + show(d);
    }
    case INDEX_ADD:
    case INDEX_COMMIT: {
      const std::string f = an_ignored(rng, check);
      if (f.empty())
        return "nothing (no ignored file)";
      add({f});
      if (c.kind == INDEX_ADD)
        return "git add -f " + show(f);
      git(top_, {"commit", "-q", "-m", "one more"});
      return "git add -f " + show(f) + " && git commit";
    }
    case INDEX_REMOVE: {
      auto tracked = ignored_tracked();
      if (tracked.empty()) {
        const std::string f = an_ignored(rng, check);
        add({f});
        check("git add -f " + show(f) + " to remove it");
        tracked = ignored_tracked();
      }
      if (tracked.empty())
        return "nothing (no tracked file that rules ignore)";
      const std::string f = rng.pick(tracked);
      // (--sparse: the skip-worktree class may have marked it, and git
      // leaves such an entry alone without it.)
      git(top_, {"rm", "-q", "--cached", "--sparse", "--", f});
      return "git rm --cached " + show(f);
    }
    case INDEX_CHECKOUT:
      return checkout(rng, check);
    case INDEX_SKIP: {
      const auto tracked = split0(git(top_, {"ls-files", "-c", "-z", "--", below_top_ + "."}));
      if (tracked.empty())
        return "nothing (nothing tracked)";
      const std::string f = rng.pick(tracked);
      const bool on = rng.chance(2);
      git(top_, {"update-index", on ? "--skip-worktree" : "--no-skip-worktree", "--", f});
      return std::string("git update-index --") + (on ? "" : "no-") + "skip-worktree " + show(f);
    }
    case INDEX_UNRELATED: {
      auto free = untracked(false);
      if (free.empty()) {
        put(at(in(rng.pick(dirs), "unrelated.c")), "x");
        check("create a file to add");
        free = untracked(false);
      }
      if (free.empty())
        return "nothing (every untracked file ignored)";
      const std::string f = rng.pick(free);
      add({f});
      return "git add " + show(f);
    }
    }
    return "nothing";
  }

  std::string root;
  unsigned ignore = 0;

private:
  std::string at(const std::string &rel) const { return rel.empty() ? root : root + "/" + rel; }
  static std::string in(const std::string &dir, const std::string &name)
  {
    return dir.empty() ? name : dir + "/" + name;
  }

  // The directories below the root ("" first), and its files, leaving out
  // what is inside any `.git`.
  std::vector<std::string> dirs_below() const
  {
    std::vector<std::string> v{""};
    for (const auto &e : scan(root))
      if (e.kind == 'd' && !in_dotgit(e.path))
        v.push_back(e.path);
    return v;
  }
  std::vector<std::string> files_below() const
  {
    std::vector<std::string> v;
    for (const auto &e : scan(root))
      if (e.kind != 'd' && !in_dotgit(e.path))
        v.push_back(e.path);
    return v;
  }
  static bool in_dotgit(const std::string &path)
  {
    return path == ".git" || path.rfind(".git/", 0) == 0 || path.find("/.git/") != std::string::npos ||
           (path.size() >= 5 && path.compare(path.size() - 5, 5, "/.git") == 0);
  }

  // Untracked files below the root (paths from the top): the ignored ones
  // too when IGNORED, else only those no rule ignores.
  std::vector<std::string> untracked(bool ignored) const
  {
    std::vector<std::string> v;
    const std::string where = below_top_ + ".";
    for (const std::string &f :
         split0(git(top_, {"ls-files", "-o", "-z", "--exclude-standard", "--", where})))
      if (!f.empty() && f.back() != '/')
        v.push_back(f);
    if (ignored)
      for (const std::string &f : split0(git(
               top_, {"ls-files", "-o", "-i", "-z", "--exclude-standard", "--", where})))
        if (!f.empty() && f.back() != '/')
          v.push_back(f);
    return v;
  }

  // Tracked files below the root that the rules ignore (paths from the top).
  std::vector<std::string> ignored_tracked() const
  {
    return split0(git(top_, {"ls-files", "-c", "-i", "-z", "--exclude-standard", "--",
                             below_top_ + "."}));
  }

  // An untracked file below the root that the rules ignore (a path from the
  // top), made (with a rule) when there is none.
  std::string an_ignored(Rng &rng, const std::function<void(const std::string &)> &check)
  {
    std::vector<std::string> v;
    const std::string where = below_top_ + ".";
    for (const std::string &f : split0(git(
             top_, {"ls-files", "-o", "-i", "-z", "--exclude-standard", "--", where})))
      if (!f.empty() && f.back() != '/')
        v.push_back(f);
    if (v.empty()) {
      const std::string f = in(rng.pick(dirs_below()), "made.o");
      put(at(f), "x");
      int fd = open((root + "/.gitignore").c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
      if (fd >= 0) {
        if (write(fd, "\n*.o\n", 5) != 5)
          ADD_FAILURE() << "write .gitignore";
        close(fd);
      }
      check("create an ignored file " + show(f));
      return below_top_ + f;
    }
    return rng.pick(v);
  }

  // git add -f PATHS (from the top).
  void add(const std::vector<std::string> &paths)
  {
    std::string list;
    for (const std::string &p : paths)
      list += p + '\0';
    if (!list.empty())
      git(top_, {"add", "-f", "--pathspec-from-file=-", "--pathspec-file-nul"}, list);
  }

  // Check out the other of two branches whose indexes differ by an ignored
  // path: `side` commits one that the branch it was made from does not
  // hold (made, with its own steps, the first time).
  std::string checkout(Rng &rng, const std::function<void(const std::string &)> &check)
  {
    const std::string head =
        git(top_, {"symbolic-ref", "-q", "--short", "HEAD"}, "", {0, 1});
    const std::string now = head.substr(0, head.find('\n'));
    const bool has_side = !git(top_, {"branch", "--list", "side"}).empty();
    if (!has_side || base_branch_.empty()) {
      base_branch_ = now == "side" || now.empty() ? "master" : now;
      git(top_, {"commit", "-q", "--allow-empty", "-m", "before side"});
      git(top_, {"checkout", "-q", "-B", "side"});
      const std::string f = an_ignored(rng, check);
      add({f});
      git(top_, {"commit", "-q", "-m", "side holds " + f});
      check("branch side holding " + show(f));
      return switch_to(base_branch_) + " (from side)";
    }
    return switch_to(now == "side" ? base_branch_ : "side");
  }

  // git checkout BRANCH; when git refuses (an untracked file in the way of
  // one BRANCH tracks: a later class made a file where the last checkout
  // removed one, and no rule ignores it now), again with -f, as a user
  // would.
  std::string switch_to(const std::string &branch)
  {
    git(top_, {"checkout", "-q", branch}, "", {0, 1});
    const std::string head = git(top_, {"symbolic-ref", "-q", "--short", "HEAD"}, "", {0, 1});
    if (head.substr(0, head.find('\n')) == branch)
      return "git checkout " + branch;
    git(top_, {"checkout", "-q", "-f", branch});
    return "git checkout -f " + branch + " (untracked files in the way)";
  }

  std::string toggle_git(const std::string &dir)
  {
    const std::string g = dir + "/.git";
    struct stat st;
    if (lstat(g.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      // A gitdir: file (a linked work tree's, a submodule's): kept, to be
      // put back as it was.
      saved_gitfiles_[dir] = read_text(g);
      unlink(g.c_str());
      return "rm " + show(g.substr(tmp_.size() + 1));
    }
    if (exists(g)) {
      remove_tree(g);
      return "rm -r " + show(g.substr(tmp_.size() + 1));
    }
    if (auto it = saved_gitfiles_.find(dir); it != saved_gitfiles_.end()) {
      put(g, it->second);
      saved_gitfiles_.erase(it);
      return "put back " + show(g.substr(tmp_.size() + 1));
    }
    copy_tree(tmp_ + "/template/.git", g);
    return "git init " + show(dir.substr(tmp_.size()));
  }

  // A directory in band B (made, as a chain of new directories, if there is
  // none that deep).
  std::string dir_in_band(Rng &rng, Band b)
  {
    if (b == ABOVE)
      return "";
    const size_t want = (size_t)(b - DEPTH0);
    if (want == 0)
      return root;
    std::vector<std::string> fit;
    std::string deepest;
    size_t deepest_n = 0;
    for (const auto &d : dirs_below()) {
      const size_t n = d.empty() ? 0 : 1 + (size_t)std::count(d.begin(), d.end(), '/');
      if (n == want || (b == DEPTH3 && n >= want))
        fit.push_back(d);
      if (n >= deepest_n && n < want) {
        deepest = d;
        deepest_n = n;
      }
    }
    if (!fit.empty())
      return at(rng.pick(fit));
    std::string d = deepest;
    for (size_t n = deepest_n; n < want; n++) {
      d = in(d, "deep");
      mkdir(at(d).c_str(), 0755);
    }
    return at(d);
  }

  std::string ignore_file(Rng &rng, const Change &c, const std::function<void(const std::string &)> &check)
  {
    std::string path;
    switch (c.source) {
    case GITIGNORE:
    case DOTIGNORE: {
      std::string dir = dir_in_band(rng, c.band);
      if (c.band == ABOVE) {
        // The root's parent, or (top above the root) the top itself.
        dir = setting_ == TOP_ABOVE && rng.chance(2) ? tmp_ + "/top"
                                                    : root.substr(0, root.rfind('/'));
      }
      path = dir + (c.source == GITIGNORE ? "/.gitignore" : "/.ignore");
      break;
    }
    case INFO_EXCLUDE:
      path = info_exclude_;
      make_dir(path.substr(0, path.rfind("/.git/")) + "/.git");
      make_dir(path.substr(0, path.rfind('/')));
      break;
    case EXCLUDES_FILE:
      path = excludes_elsewhere_ ? tmp_ + "/other-excludes" : tmp_ + "/xdg/git/ignore";
      break;
    case NESTED_INFO:
    case NESTED_EXCLUDES:
      return "nothing (a nested repository's: nested_change)";
    }
    return change_file(rng, path, c.op, check);
  }

  // Change the file at PATH by OP (made or removed first, and checked, when
  // OP needs it there or not).
  std::string change_file(Rng &rng, const std::string &path, Op op,
                          const std::function<void(const std::string &)> &check)
  {
    const std::string shown = show(path.substr(tmp_.size() + 1));
    const bool there = exists(path);
    if (op == CREATE && there) {
      unlink(path.c_str());
      check("delete " + shown + " to create it");
    } else if (op != CREATE && !there) {
      put(path, rng.pick(kRules));
      check("create " + shown + " to change it");
    }
    const std::string rules = rng.pick(kRules);
    switch (op) {
    case EDIT: {
      // In place: the same inode, other rules.
      int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
      if (fd >= 0) {
        if (write(fd, rules.data(), rules.size()) < 0)
          ADD_FAILURE() << "write " << shown;
        close(fd);
      }
      return "edit " + shown + " in place: +" + show(rules);
    }
    case REPLACE:
      put(path + ".new", rules);
      rename((path + ".new").c_str(), path.c_str());
      return "replace " + shown + " by a rename: " + show(rules);
    case CREATE:
      put(path, rules);
      return "create " + shown + ": " + show(rules);
    case DELETE:
      unlink(path.c_str());
      return "delete " + shown;
    }
    return "nothing";
  }


  // The directories (relative to the root) at band B's depth (3+: 3 and
  // more); OUTSIDE_NESTED: none inside a nested repository.
  std::vector<std::string> at_depth(Band b, bool repos_only, bool outside_nested = false) const
  {
    const size_t want = (size_t)(b - DEPTH0);
    std::vector<std::string> v;
    for (const auto &d : dirs_below()) {
      if (d.empty())
        continue;
      const size_t n = 1 + (size_t)std::count(d.begin(), d.end(), '/');
      if (!(n == want || (b == DEPTH3 && n >= want)))
        continue;
      if (repos_only && !exists(at(d) + "/.git"))
        continue;
      bool inside = false;
      for (size_t i = 0; outside_nested && i <= d.size() && !inside; i++)
        if (i == d.size() || d[i] == '/')
          inside = exists(at(d.substr(0, i)) + "/.git");
      if (!inside)
        v.push_back(d);
    }
    return v;
  }

  bool is_submodule(const std::string &d) const
  {
    struct stat st;
    return lstat((at(d) + "/.git").c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           read_text(at(d) + "/.git").find("/modules/") != std::string::npos;
  }

  // A nested repository (relative to the root) at band B's depth, made
  // there (and checked) when there is none.
  // DIR_ONLY: one whose `.git` is a directory (a submodule's git directory
  // in the top's .git/modules is not moved: as nobody, git's submodule
  // helpers leave it where a rename is refused).
  std::string nested_repo(Rng &rng, Band b, const std::function<void(const std::string &)> &check,
                          bool dir_only = false)
  {
    std::vector<std::string> repos;
    struct stat st;
    for (const std::string &d : at_depth(b, true))
      if (exists(git_dir_of(d) + "/HEAD") && exists(git_dir_of(d) + "/config") &&
          (!dir_only || (lstat((at(d) + "/.git").c_str(), &st) == 0 && S_ISDIR(st.st_mode))))
        repos.push_back(d);
    if (!repos.empty())
      return rng.pick(repos);
    std::string d = dir_in_band(rng, b);
    d = d == root ? "" : d.substr(root.size() + 1);
    remove_tree(at(d) + "/.git");
    copy_tree(tmp_ + "/template/.git", at(d) + "/.git");
    check("git init " + show(d) + " (a nested repository)");
    return d;
  }

  // The git directory repository D's `.git` leads to (absolute).
  std::string git_dir_of(const std::string &d) const
  {
    const std::string g = at(d) + "/.git";
    struct stat st;
    if (lstat(g.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      return g;
    std::string text = read_text(g);
    if (text.rfind("gitdir: ", 0) != 0)
      return g;
    text = text.substr(8, text.find('\n') == std::string::npos ? std::string::npos
                                                               : text.find('\n') - 8);
    return text[0] == '/' ? text : at(d) + "/" + text;
  }

  // Turn repository D's `.git` directory into a gitdir: file naming it,
  // moved elsewhere; or (a file) the git directory it names moved into its
  // place.
  std::string flip_dotgit(const std::string &d)
  {
    const std::string g = at(d) + "/.git";
    struct stat st;
    if (lstat(g.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      const std::string target = git_dir_of(d);
      flipped_from_[at(d)] = {read_text(g), target};
      unlink(g.c_str());
      if (rename(target.c_str(), g.c_str()) != 0)
        ADD_FAILURE() << "mv " << show(target) << " " << show(g) << ": " << strerror(errno);
      return "gitdir: file " + show(d + "/.git") + " to the directory it names";
    }
    const std::string moved = tmp_ + "/gitdirs/g" + std::to_string(gitdirs_++);
    rename(g.c_str(), moved.c_str());
    put(g, "gitdir: " + moved + "\n");
    return ".git directory " + show(d + "/.git") + " to a gitdir: file";
  }

  // Put back what flip_dotgit() turned.
  std::string unflip_dotgit(const std::string &d)
  {
    const std::string g = at(d) + "/.git";
    auto it = flipped_from_.find(at(d));
    if (it == flipped_from_.end()) {
      const std::string target = git_dir_of(d);
      unlink(g.c_str());
      rename(target.c_str(), g.c_str());
      return "and back to a directory";
    }
    rename(g.c_str(), it->second.second.c_str());
    put(g, it->second.first);
    flipped_from_.erase(it);
    return "and back to a gitdir: file";
  }

  std::string nested_change(Rng &rng, const Change &c,
                            const std::function<void(const std::string &)> &check)
  {
    const std::string d = nested_repo(rng, c.band, check, c.kind == NESTED_DIR_FILE);
    const std::string gd = git_dir_of(d);
    const std::string config = gd + "/config";
    switch (c.kind) {
    case NESTED_SOURCE: {
      if (c.source == NESTED_INFO) {
        make_dir(gd + "/info");
        return show(d) + ": " + change_file(rng, gd + "/info/exclude", c.op, check);
      }
      const std::string named = tmp_ + "/nested-excludes";
      if (!excludes_set(config)) {
        set_excludes(config, true);
        check(show(d) + ": core.excludesFile set");
      }
      return show(d) + ": " + change_file(rng, named, c.op, check);
    }
    case NESTED_CONFIG: {
      const bool set = excludes_set(config);
      set_excludes(config, !set);
      return show(d) + ": core.excludesFile " + (set ? "unset" : "set");
    }
    case NESTED_RETARGET: {
      const std::string g = at(d) + "/.git";
      struct stat st;
      if (lstat(g.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
        flip_dotgit(d);
        check(show(d) + ": .git to a gitdir: file to retarget");
      }
      // Another git directory, with rules of its own.
      const std::string other = tmp_ + "/gitdirs/g" + std::to_string(gitdirs_++);
      copy_tree(tmp_ + "/template/.git", other);
      make_dir(other + "/info");
      const std::string rules = rng.pick(kRules);
      put(other + "/info/exclude", rules);
      put(g, "gitdir: " + other + "\n");
      return show(d) + ": gitdir: retargeted to a repository excluding " + show(rules);
    }
    default: {
      check(show(d) + ": " + flip_dotgit(d));
      return show(d) + ": " + unflip_dotgit(d);
    }
    }
  }

  // The line a nested repository's config gets for core.excludesFile
  // (written as git config would; git's own `git config -f` would need the
  // git directory where the tree's changes may have moved it).
  std::string excludes_line() const { return "[core]\n\texcludesFile = " + tmp_ + "/nested-excludes\n"; }
  bool excludes_set(const std::string &config) const
  {
    return read_text(config).find(excludes_line()) != std::string::npos;
  }
  void set_excludes(const std::string &config, bool on) const
  {
    std::string text = read_text(config);
    const size_t at_line = text.find(excludes_line());
    if (on && at_line == std::string::npos)
      text += excludes_line();
    else if (!on && at_line != std::string::npos)
      text.erase(at_line, excludes_line().size());
    put(config + ".new", text);
    rename((config + ".new").c_str(), config.c_str());
  }

  // The submodules the top's index holds (paths from the root) whose work
  // trees are there, at band B's depth.
  std::vector<std::string> submodules(Band b) const
  {
    std::vector<std::string> v;
    const auto depth = at_depth(b, true);
    for (const std::string &e : split0(git(top_, {"ls-files", "-s", "-z"}))) {
      if (e.rfind("160000 ", 0) != 0 || e.find('\t') == std::string::npos)
        continue;
      const std::string path = e.substr(e.find('\t') + 1);
      if (std::find(depth.begin(), depth.end(), path) != depth.end() && is_submodule(path))
        v.push_back(path);
    }
    return v;
  }

  // The top's .gitmodules as git submodule needs it: a file (or none when
  // the index has none), not skip-worktree. The tree's changes may have
  // deleted, renamed, or turned it into a directory, and the index classes
  // made it skip-worktree; git submodule add and deinit then stop ("please
  // make sure that the .gitmodules file is in the working tree", "Failed
  // to register submodule"). Put right, and checked, when it is not.
  void gitmodules_file(const std::function<void(const std::string &)> &check)
  {
    const std::string gm = top_ + "/.gitmodules";
    struct stat st;
    const bool file = lstat(gm.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    const std::string tag = git(top_, {"ls-files", "-t", "--", ".gitmodules"});
    const bool indexed = !tag.empty(), skip = tag.rfind("S ", 0) == 0;
    if ((file && !skip) || (!indexed && !exists(gm)))
      return;
    if (skip)
      git(top_, {"update-index", "--no-skip-worktree", "--", ".gitmodules"});
    if (!file) {
      remove_tree(gm);
      if (indexed) // (git show, not checkout: it passes over skip-worktree paths)
        put(gm, git(top_, {"show", ":.gitmodules"}));
    }
    check(std::string(skip ? "git update-index --no-skip-worktree .gitmodules; " : "") +
          (file ? "" : indexed ? "put .gitmodules back from the index" : "remove what is at .gitmodules"));
  }

  // git submodule add of the bare remote at a new path at band B's depth,
  // below directories of its own (names git takes as they are in a
  // submodule's config key), outside any nested repository.
  std::string submodule_add(Rng &, Band b, const std::function<void(const std::string &)> &check)
  {
    gitmodules_file(check);
    std::string parent;
    const Band up = (Band)(b - 1);
    // A chain of plain directories, none a repository (the tree's changes
    // may have linked, replaced or initialized one of an earlier chain).
    for (unsigned k = 0; up != DEPTH0; k++) {
      const std::string name = "smd" + std::to_string(k);
      parent = up == DEPTH1 ? name : up == DEPTH2 ? name + "/smd" : name + "/smd/smd";
      bool plain = true;
      for (size_t i = 1; i <= parent.size() && plain; i++) { // (below the root, the top)
        if (i < parent.size() && parent[i] != '/')
          continue;
        struct stat st;
        const std::string p = at(parent.substr(0, i));
        plain = (lstat(p.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) && !exists(p + "/.git");
      }
      if (!plain)
        continue;
      if (!exists(at(parent))) {
        make_dirs(root, parent);
        check("mkdir -p " + show(parent) + " for a submodule");
      }
      break;
    }
    const std::string path = in(parent, "sm" + std::to_string(submodules_++));
    // (Local submodules need protocol.file.allow.)
    git(top_, {"-c", "protocol.file.allow=always", "submodule", "add", "-q", "--force",
               tmp_ + "/remote.git", below_top_ + path});
    return "git submodule add " + show(path);
  }

  std::string tmp_;
  Setting setting_;
  std::map<std::string, std::string> saved_gitfiles_; // dir -> its `.git` file's text
  std::map<std::string, std::pair<std::string, std::string>> flipped_from_; // dir -> its `.git`
                                                                           // file's text, target
  unsigned gitdirs_ = 0;    // git directories made in gitdirs/
  unsigned submodules_ = 0; // submodules added
  std::string old_home_;
  std::string info_exclude_;
  bool excludes_elsewhere_ = false;
  std::string top_;       // the repository's top ("" when there is none)
  std::string below_top_; // the root's path below it, with a '/' ("" at the top)
  std::string base_branch_; // the branch `side` was made from
};

// Run BODY as nobody when running as root (permissions are then enforced
// and "unreadable" means something), with the world handed to nobody first;
// as the user otherwise. False, with WHY, when permissions would not be
// enforced.
class Enforced {
public:
  explicit Enforced(const World &w)
  {
    if (geteuid() == 0) {
      const struct passwd *pw = getpwnam("nobody");
      if (pw == nullptr) {
        why_ = "no user 'nobody'";
        return;
      }
      w.give_to(pw->pw_uid, pw->pw_gid);
      as_.emplace();
      if (!as_->ok()) {
        why_ = as_->why();
        return;
      }
    }
  }
  bool ok() const { return why_.empty(); }
  const std::string &why() const { return why_; }

private:
  std::optional<AsNobody> as_;
  std::string why_;
};

// One line on stdout with the count of every class a sequence made, for
// the long runs' tallies (docs/cache.md, "Tests"):
//   [changes] TEST seed N setting S steps M | class=count | class=count ...
inline void print_counts(const char *test, uint32_t seed, Setting setting, const Counts &counts,
                         unsigned steps)
{
  std::string line = std::string("[changes] ") + test + " seed " + std::to_string(seed) +
                     " setting " + std::to_string((int)setting) + " steps " + std::to_string(steps);
  for (const auto &[name, n] : counts)
    line += " | " + name + "=" + std::to_string(n);
  printf("%s\n", line.c_str());
}

} // namespace treechanges

#endif // TRAWL_TESTS_WALK_TREE_CHANGES_HPP
