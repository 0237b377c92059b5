// The settings users walk in and the changes their trees go through, for
// the property tests of memos and caches (memo_test.cpp, cache_test.cpp).
//
// A setting is where the tree sits: a git work tree whose top is the root,
// one whose top is two levels above it, no work tree at all (walked with
// "no require git"), and a work tree with nested repositories inside. Each
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

enum Setting { TOP_AT_ROOT, TOP_ABOVE, NO_REPO, NESTED };
inline const Setting kSettings[] = {TOP_AT_ROOT, TOP_ABOVE, NO_REPO, NESTED};

inline const char *setting_name(Setting s)
{
  switch (s) {
  case TOP_AT_ROOT: return "work tree, top at the root";
  case TOP_ABOVE: return "work tree, top above the root";
  case NO_REPO: return "no work tree, no-require-git";
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
};
enum Source { GITIGNORE, DOTIGNORE, INFO_EXCLUDE, EXCLUDES_FILE };
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
      "git add of an unrelated path"};
    if (kind != IGNORE_FILE)
      return kinds[kind];
    static const char *const sources[] = {".gitignore", ".ignore", "info/exclude", "excludes file"};
    static const char *const ops[] = {"edited in place", "replaced by a rename", "created", "deleted"};
    static const char *const bands[] = {" above the root", " at the root", " at depth 1",
                                        " at depth 2", " at depth 3+"};
    return std::string(sources[source]) + (source <= DOTIGNORE ? bands[band] : "") + " " + ops[op];
  }
  bool operator<(const Change &o) const { return name() < o.name(); }
};

// Every class: the tree's own, and with OUTSIDE those of the sources outside
// the walk (info/exclude, the excludes file, the config, a .gitignore or
// .ignore above the root, a .git above it, with INDEX the index), which only
// a cache re-checks.
inline std::vector<Change> all_changes(bool outside, bool index = false)
{
  std::vector<Change> v;
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
inline void copy_tree(const std::string &from, const std::string &to)
{
  make_dir(to);
  for (const auto &e : scan(from)) {
    const std::string src = from + "/" + e.path, dst = to + "/" + e.path;
    if (e.kind == 'd') {
      make_dir(dst);
    } else if (e.kind == 'f') {
      std::string data;
      int fd = open(src.c_str(), O_RDONLY | O_CLOEXEC);
      char buf[4096];
      ssize_t n;
      while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0)
        data.append(buf, (size_t)n);
      if (fd >= 0)
        close(fd);
      put(dst, data);
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
    put(tmp + "/gitconfig", "");
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
    std::string top;
    switch (setting) {
    case TOP_AT_ROOT:
    case NESTED:
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
    if (!top.empty())
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
    info_exclude_ = (setting == TOP_ABOVE ? top : setting == NO_REPO ? tmp + "/plain" : root) +
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
      put(tmp_ + "/gitconfig", excludes_elsewhere_ ? "[core]\n\texcludesFile = " + tmp_ +
                                                         "/other-excludes\n"
                                                   : "");
      return excludes_elsewhere_ ? "core.excludesFile set to other-excludes"
                                 : "core.excludesFile unset";
    case IGNORE_FILE:
      return ignore_file(rng, c, check);
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
      git(top_, {"rm", "-q", "--cached", "--", f});
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
      return "git checkout " + base_branch_ + " (" +
             git(top_, {"checkout", "-q", base_branch_}) + "from side)";
    }
    const std::string to = now == "side" ? base_branch_ : "side";
    git(top_, {"checkout", "-q", to});
    return "git checkout " + to;
  }

  std::string toggle_git(const std::string &dir)
  {
    const std::string g = dir + "/.git";
    if (exists(g)) {
      remove_tree(g);
      return "rm -r " + show(g.substr(tmp_.size() + 1));
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
    }
    const std::string shown = show(path.substr(tmp_.size() + 1));
    const bool there = exists(path);
    if (c.op == CREATE && there) {
      unlink(path.c_str());
      check("delete " + shown + " to create it");
    } else if (c.op != CREATE && !there) {
      put(path, rng.pick(kRules));
      check("create " + shown + " to change it");
    }
    const std::string rules = rng.pick(kRules);
    switch (c.op) {
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

  std::string tmp_;
  Setting setting_;
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
