// Helpers shared by the walker's suites: temporary trees, a reference
// selection computed without the walker (nftw(3) with FTW_PHYS plus
// trawl_pattern_match, applying the rules walk.h documents), and runners that
// walk a tree both ways (collect, callback) while recording every directory
// the walk reads through the private open hook.
//
// The reference rules, as walk.h and docs state them:
//   - a path is a result when some include matches it (or there is no
//     include), no exclude matches it, and no exclude matches one of its
//     ancestor directories (an excluded directory is not entered); a bazel
//     include is asked with the entry's type (trawl_pattern_match_entry: a
//     file is never matched by "a/ **" as "a"), and a bazel exclude only
//     leaves out the paths it matches, as glob() does (Bazel 4.2.3);
//   - a component starting with '.' is visited only with options.hidden or
//     when some include has a component that starts with a literal '.' and
//     matches that name;
//   - an entry deeper than max_depth (1: the root's own entries) is not
//     reported;
//   - types: files (and anything that is neither a directory nor a link),
//     directories, links; a link that is not followed is reported with the
//     files as well.
#ifndef TRAWL_TESTS_WALK_UTIL_HPP
#define TRAWL_TESTS_WALK_UTIL_HPP

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <glib.h>
#include <gtest/gtest.h>

#include "trawl/pattern.h"
#include "trawl/plan.h"
#include "trawl/walk.h"

// The private header is C without linkage markers of its own.
extern "C" {
#include "walk/walk-shared.h"
#include "walk/walk-testing.h"
}

namespace walktest {

// ---- small owning handles ---------------------------------------------------

struct PatternFree {
  void operator()(TrawlPattern *p) const { trawl_pattern_free(p); }
};
using Pattern = std::unique_ptr<TrawlPattern, PatternFree>;

struct WalkerFree {
  void operator()(TrawlWalker *w) const { trawl_walker_free(w); }
};
using Walker = std::unique_ptr<TrawlWalker, WalkerFree>;
struct PlanFree {
  void operator()(TrawlPlan *p) const { trawl_plan_free(p); }
};
using Plan = std::unique_ptr<TrawlPlan, PlanFree>;

inline Pattern compile(const std::string &text, unsigned flags = 0,
                       TrawlDialect dialect = TRAWL_DIALECT_TRAWL)
{
  GError *e = nullptr;
  TrawlPattern *p = trawl_pattern_compile(text.data(), text.size(), dialect, flags, &e);
  if (e) {
    ADD_FAILURE() << "pattern does not compile: " << text << ": " << e->message;
    g_error_free(e);
  }
  return Pattern(p);
}

// S with every byte outside printable ASCII written as \xNN, and with
// QUOTED a backslash before each '\\' and '"'.
inline std::string escaped(const std::string &s, bool quoted)
{
  std::string out;
  for (unsigned char c : s) {
    if (quoted && (c == '\\' || c == '"')) {
      out += '\\';
      out += (char)c;
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += (char)c;
    }
  }
  return out;
}

// A printable form of a byte string, for failure messages.
inline std::string show(const std::string &s)
{
  return "\"" + escaped(s, true) + "\"";
}

// S printable, unquoted: for a step's description, which may hold a path
// unquoted (a gtest failure message goes into meson's XML, which stops at
// a byte that is not UTF-8).
inline std::string printable(const std::string &s)
{
  return escaped(s, false);
}

inline std::string show(const std::vector<std::string> &v)
{
  std::string out = "[";
  for (size_t i = 0; i < v.size(); i++)
    out += (i ? ", " : "") + show(v[i]);
  return out + "]";
}

inline std::string show(const std::set<std::string> &v)
{
  return show(std::vector<std::string>(v.begin(), v.end()));
}

// What is in A and not in B, and the reverse, for failure messages.
inline std::string diff(const std::vector<std::string> &got,
                        const std::vector<std::string> &want)
{
  std::multiset<std::string> g(got.begin(), got.end()), w(want.begin(), want.end());
  std::vector<std::string> extra, missing;
  for (const auto &s : g)
    if (g.count(s) > w.count(s) && (extra.empty() || extra.back() != s))
      extra.push_back(s);
  for (const auto &s : w)
    if (w.count(s) > g.count(s) && (missing.empty() || missing.back() != s))
      missing.push_back(s);
  return "unexpected (or repeated): " + show(extra) + "\nmissing: " + show(missing);
}

// ---- the file system --------------------------------------------------------

// Remove a tree of any depth, holding one descriptor at a time: descend
// into the first subdirectory left, climb back through "..", and remove the
// emptied directory by name from its parent. Paths may exceed PATH_MAX, and
// it works under a low descriptor limit. (GNU rm takes seconds on a
// 1,000-level chain.) What cannot be removed (another user's files, when
// the test runs as nobody) is left, and passed over: without that, the
// directory holding it was entered again forever.
inline void remove_tree(const std::string &path)
{
  int cur = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (cur < 0) {
    unlink(path.c_str());
    return;
  }
  std::vector<std::string> names; // the way down from PATH
  std::vector<std::set<std::string>> left{{}}; // at each level, the names that stay
  for (;;) {
    fchmod(cur, 0755); // an unreadable directory of a test (we own it)
    int copy = dup(cur);
    DIR *d = copy >= 0 ? fdopendir(copy) : nullptr;
    std::string sub;
    bool found = false;
    while (d != nullptr && !found) {
      struct dirent *e = readdir(d);
      if (e == nullptr)
        break;
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
          left.back().count(e->d_name))
        continue;
      struct stat st;
      bool dir = e->d_type == DT_DIR ||
                 (e->d_type == DT_UNKNOWN &&
                  fstatat(cur, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode));
      if (!dir) {
        if (unlinkat(cur, e->d_name, 0) != 0)
          left.back().insert(e->d_name);
      } else {
        sub = e->d_name;
        found = true;
      }
    }
    if (d)
      closedir(d);
    else if (copy >= 0)
      close(copy);
    if (found) {
      int next = openat(cur, sub.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0) {
        fchmodat(cur, sub.c_str(), 0755, 0);
        next = openat(cur, sub.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      }
      if (next < 0) { // cannot enter it: give up on it
        if (unlinkat(cur, sub.c_str(), AT_REMOVEDIR) != 0)
          left.back().insert(sub);
        continue;
      }
      close(cur);
      cur = next;
      names.push_back(sub);
      left.emplace_back();
      continue;
    }
    if (names.empty())
      break;
    int up = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    close(cur);
    if (up < 0)
      return;
    left.pop_back();
    if (unlinkat(up, names.back().c_str(), AT_REMOVEDIR) != 0)
      left.back().insert(names.back());
    names.pop_back();
    cur = up;
  }
  close(cur);
  rmdir(path.c_str());
}

// A temporary directory removed with everything below it.
// Switch the effective user and group to nobody's while alive, when running
// as root; a no-op otherwise. ok() is false when the switch failed.
class AsNobody {
public:
  AsNobody()
  {
    if (geteuid() != 0)
      return;
    const struct passwd *pw = getpwnam("nobody");
    if (pw == nullptr) {
      why_ = "no user 'nobody'";
      return;
    }
    saved_gid_ = getegid();
    if (setegid(pw->pw_gid) != 0) {
      why_ = std::string("setegid: ") + strerror(errno);
      return;
    }
    if (seteuid(pw->pw_uid) != 0) {
      why_ = std::string("seteuid: ") + strerror(errno);
      if (setegid(saved_gid_) != 0)
        abort();
      return;
    }
    switched_ = true;
  }
  ~AsNobody()
  {
    if (switched_ && (seteuid(0) != 0 || setegid(saved_gid_) != 0))
      abort(); // the rest of the tests cannot run with the wrong ids
  }
  bool ok() const { return why_.empty(); }
  const std::string &why() const { return why_; }

private:
  bool switched_ = false;
  gid_t saved_gid_ = 0;
  std::string why_;
};

// Seeds 1 to DEFAULT_COUNT for a property test, or 1 to N when the
// environment variable VAR is N (a longer run by hand).
inline std::vector<uint32_t> seeds_from_env(const char *var, uint32_t default_count)
{
  const char *n = getenv(var);
  const uint32_t count = n && atoi(n) > 0 ? (uint32_t)atoi(n) : default_count;
  std::vector<uint32_t> seeds;
  for (uint32_t i = 1; i <= count; i++)
    seeds.push_back(i);
  return seeds;
}

class TempDir {
public:
  TempDir()
  {
    std::string tmpl = std::string(g_get_tmp_dir()) + "/trawl-walk-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) == nullptr)
      ADD_FAILURE() << "mkdtemp: " << strerror(errno);
    path_ = buf.data();
  }
  ~TempDir() { remove_tree(path_); }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return path_; }
  std::string operator/(const std::string &rel) const { return path_ + "/" + rel; }

private:
  std::string path_;
};

inline void make_dir(const std::string &path)
{
  if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
    ADD_FAILURE() << "mkdir " << show(path) << ": " << strerror(errno);
}

// Make every directory of PATH below BASE (like mkdir -p).
inline void make_dirs(const std::string &base, const std::string &rel)
{
  for (size_t i = 0; i <= rel.size(); i++)
    if (i == rel.size() || rel[i] == '/')
      make_dir(base + "/" + rel.substr(0, i));
}

inline void write_file(const std::string &path, const std::string &content = "x")
{
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    ADD_FAILURE() << "create " << show(path) << ": " << strerror(errno);
    return;
  }
  if (write(fd, content.data(), content.size()) != (ssize_t)content.size())
    ADD_FAILURE() << "write " << show(path);
  close(fd);
}

// Create file REL below BASE, with its directories.
inline void add_file(const std::string &base, const std::string &rel)
{
  size_t slash = rel.rfind('/');
  if (slash != std::string::npos)
    make_dirs(base, rel.substr(0, slash));
  write_file(base + "/" + rel);
}

inline void make_link(const std::string &target, const std::string &path)
{
  if (symlink(target.c_str(), path.c_str()) != 0)
    ADD_FAILURE() << "symlink " << show(path) << ": " << strerror(errno);
}

// One entry of a tree as the file system has it.
struct FsEntry {
  std::string path; // relative to the root
  char kind;        // 'f' file (or anything else), 'd' directory, 'l' link
};

namespace detail {
inline std::vector<FsEntry> *scan_out;
inline std::set<std::string> *scan_unreadable;
inline size_t scan_prefix;

inline int scan_one(const char *fpath, const struct stat *, int flag, struct FTW *ftw)
{
  if (ftw->level == 0)
    return 0;
  std::string rel(fpath + scan_prefix + 1);
  char kind = (flag == FTW_D || flag == FTW_DNR || flag == FTW_DP) ? 'd'
              : (flag == FTW_SL || flag == FTW_SLN)              ? 'l'
                                                                 : 'f';
  if (flag == FTW_DNR && scan_unreadable)
    scan_unreadable->insert(rel);
  scan_out->push_back({rel, kind});
  return 0;
}
} // namespace detail

// Every entry below ROOT (not following links), with the directories nftw
// could not read in *UNREADABLE. Paths must stay under PATH_MAX.
inline std::vector<FsEntry> scan(const std::string &root,
                                 std::set<std::string> *unreadable = nullptr)
{
  std::vector<FsEntry> out;
  detail::scan_out = &out;
  detail::scan_unreadable = unreadable;
  detail::scan_prefix = root.size();
  if (nftw(root.c_str(), detail::scan_one, 16, FTW_PHYS) != 0)
    ADD_FAILURE() << "nftw " << root << ": " << strerror(errno);
  detail::scan_out = nullptr;
  detail::scan_unreadable = nullptr;
  return out;
}

// ---- queries and the reference selection -----------------------------------

// Expand the braces of a pattern the way the trawl dialect does ("{a,b}",
// nestable; '\' escapes; braces inside classes are not generated by these
// tests).
inline std::vector<std::string> expand_braces(const std::string &s)
{
  size_t open = std::string::npos;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '\\') {
      i++;
    } else if (s[i] == '[') {
      size_t j = i + 1;
      if (j < s.size() && (s[j] == '!' || s[j] == '^'))
        j++;
      if (j < s.size() && s[j] == ']')
        j++;
      while (j < s.size() && s[j] != ']') {
        if (s[j] == '[' && j + 1 < s.size() && s[j + 1] == ':') {
          size_t end = s.find(":]", j + 2);
          j = end == std::string::npos ? s.size() : end + 2;
          continue;
        }
        j++;
      }
      i = j;
    } else if (s[i] == '{') {
      open = i;
      break;
    }
  }
  if (open == std::string::npos)
    return {s};
  std::vector<std::string> parts;
  int depth = 0;
  size_t start = open + 1, close = std::string::npos;
  for (size_t i = open + 1; i < s.size() && close == std::string::npos; i++) {
    if (s[i] == '\\') {
      i++;
    } else if (s[i] == '{') {
      depth++;
    } else if (s[i] == '}' && depth > 0) {
      depth--;
    } else if (s[i] == '}') {
      parts.push_back(s.substr(start, i - start));
      close = i;
    } else if (s[i] == ',' && depth == 0) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  if (close == std::string::npos)
    return {s};
  std::vector<std::string> out;
  for (const auto &p : parts)
    for (auto &e : expand_braces(s.substr(0, open) + p + s.substr(close + 1)))
      out.push_back(std::move(e));
  return out;
}

// A query: patterns (compiled) and options, plus what the reference needs.
struct Query {
  std::vector<std::string> includes, excludes;
  unsigned flags = 0; // TrawlPatternFlags of every pattern
  // The dialect of every pattern. The reference's hidden rule (the
  // components starting with '.', after brace expansion) is the trawl
  // dialect's: other dialects are generated with options.hidden.
  TrawlDialect dialect = TRAWL_DIALECT_TRAWL;
  TrawlWalkOptions opt;
  int helper_floor = -1; // >= 0: trawl_walker_set_helper_floor()
  unsigned patset_min = 0; // > 0: trawl_walker_set_patset_min()

  std::vector<Pattern> inc, exc;
  std::vector<Pattern> dot_components; // components of the includes starting with '.'

  Query() { trawl_walk_options_init(&opt); }

  void compile_all()
  {
    inc.clear();
    exc.clear();
    dot_components.clear();
    for (const auto &t : includes) {
      inc.push_back(compile(t, flags, dialect));
      for (const auto &alt : expand_braces(t)) {
        size_t start = 0;
        for (size_t i = 0; i <= alt.size(); i++) {
          if (i < alt.size() && alt[i] == '\\') {
            i++;
            continue;
          }
          if (i < alt.size() && alt[i] != '/')
            continue;
          std::string comp = alt.substr(start, i - start);
          start = i + 1;
          bool dot = (!comp.empty() && comp[0] == '.') ||
                     (comp.size() > 1 && comp[0] == '\\' && comp[1] == '.');
          if (dot)
            dot_components.push_back(compile(comp, flags, dialect));
        }
      }
    }
    for (const auto &t : excludes)
      exc.push_back(compile(t, flags, dialect));
  }

  std::string describe() const
  {
    std::string s = "includes " + show(includes) + " excludes " + show(excludes);
    s += " hidden=" + std::to_string(opt.hidden) + " follow=" + std::to_string(opt.follow) +
         " types=" + std::to_string(opt.types) + " max_depth=" + std::to_string(opt.max_depth) +
         " flags=" + std::to_string(flags) + " dialect=" + std::to_string(dialect);
    return s;
  }
};

inline bool any_match(const std::vector<Pattern> &pats, const std::string &path)
{
  for (const auto &p : pats)
    if (p && trawl_pattern_match(p.get(), path.data(), path.size()))
      return true;
  return false;
}

inline std::vector<std::string> components(const std::string &path)
{
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= path.size(); i++)
    if (i == path.size() || path[i] == '/') {
      out.push_back(path.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

// Does an exclude of Q leave directory DIR closed, everything below it out?
// One that matches it, except a bazel one (glob() leaves out the paths its
// excludes match, nothing below them).
inline bool exclude_closes(const Query &q, const std::string &dir)
{
  for (const auto &x : q.exc)
    if (x && trawl_pattern_dialect(x.get()) != TRAWL_DIALECT_BAZEL &&
        trawl_pattern_match(x.get(), dir.data(), dir.size()))
      return true;
  return false;
}

// Does the reference select this entry? KIND: 'f', 'd', 'l' (a link not
// followed, or a dangling one).
inline bool ref_selected(const Query &q, const std::string &path, char kind)
{
  const std::vector<std::string> comps = components(path);
  if (q.opt.max_depth >= 0 && (int)comps.size() > q.opt.max_depth)
    return false;
  if (!q.opt.hidden)
    for (const auto &c : comps)
      if (c[0] == '.' && !any_match(q.dot_components, c))
        return false;
  std::string prefix;
  for (size_t i = 0; i + 1 < comps.size(); i++) {
    prefix += (i ? "/" : "") + comps[i];
    if (exclude_closes(q, prefix))
      return false;
  }
  if (any_match(q.exc, path))
    return false;
  const TrawlEntryType as = kind == 'd' ? TRAWL_ENTRY_DIR : TRAWL_ENTRY_FILE;
  if (!q.inc.empty() &&
      std::none_of(q.inc.begin(), q.inc.end(), [&](const Pattern &p) {
        return p && trawl_pattern_match_entry(p.get(), path.data(), path.size(), as);
      }))
    return false;
  unsigned types = q.opt.types ? q.opt.types : (unsigned)TRAWL_ENTRY_FILE;
  switch (kind) {
  case 'd':
    return types & TRAWL_ENTRY_DIR;
  case 'l':
    return types & (TRAWL_ENTRY_SYMLINK | TRAWL_ENTRY_FILE);
  default:
    return types & TRAWL_ENTRY_FILE;
  }
}

inline unsigned entry_type(char kind)
{
  return kind == 'd'   ? (unsigned)TRAWL_ENTRY_DIR
         : kind == 'l' ? (unsigned)TRAWL_ENTRY_SYMLINK
                       : (unsigned)TRAWL_ENTRY_FILE;
}

// The expected results of Q over ENTRIES: sorted paths and their types.
inline std::vector<std::pair<std::string, unsigned>> reference(const Query &q,
                                                               const std::vector<FsEntry> &entries)
{
  std::vector<std::pair<std::string, unsigned>> out;
  for (const auto &e : entries)
    if (ref_selected(q, e.path, e.kind))
      out.push_back({e.path, entry_type(e.kind)});
  std::sort(out.begin(), out.end());
  return out;
}

// The strings of an array the library lists (trawl_plan_results(), ...).
inline std::vector<std::string> strings_of(const GPtrArray *a)
{
  std::vector<std::string> out;
  for (guint i = 0; a && i < a->len; i++)
    out.emplace_back(static_cast<const char *>(g_ptr_array_index(a, i)));
  return out;
}

inline std::vector<std::string> paths_of(const std::vector<std::pair<std::string, unsigned>> &v)
{
  std::vector<std::string> out;
  for (const auto &e : v)
    out.push_back(e.first);
  return out;
}

// A reference walk that follows links (for options.follow): entries below
// ROOT as the walk sees them, a followed link taking its target's kind, a
// link to a directory among the (device, inode) of its ancestors (the root
// included) left out and counted in *LOOPS. Not pruned: every reachable
// directory is read.
inline void follow_scan_dir(int dir_fd, const std::string &rel,
                            std::vector<std::pair<dev_t, ino_t>> &chain,
                            std::vector<FsEntry> &out, std::vector<std::string> *loops)
{
  DIR *d = fdopendir(dir_fd);
  if (d == nullptr) {
    close(dir_fd);
    return;
  }
  std::vector<std::string> names;
  while (struct dirent *e = readdir(d))
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
      names.push_back(e->d_name);
  int fd = dirfd(d);
  for (const auto &name : names) {
    std::string path = rel.empty() ? name : rel + "/" + name;
    struct stat st;
    if (fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    bool link = S_ISLNK(st.st_mode);
    if (link && fstatat(fd, name.c_str(), &st, 0) != 0) {
      out.push_back({path, 'l'}); // dangling
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      out.push_back({path, 'f'});
      continue;
    }
    bool loop = false;
    for (const auto &a : chain)
      loop = loop || (a.first == st.st_dev && a.second == st.st_ino);
    if (loop) {
      if (loops)
        loops->push_back(path);
      continue;
    }
    out.push_back({path, 'd'});
    int child = openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (child < 0)
      continue;
    chain.push_back({st.st_dev, st.st_ino});
    follow_scan_dir(child, path, chain, out, loops);
    chain.pop_back();
  }
  closedir(d);
}

inline std::vector<FsEntry> follow_scan(const std::string &root,
                                        std::vector<std::string> *loops = nullptr)
{
  std::vector<FsEntry> out;
  int fd = open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    ADD_FAILURE() << "open " << root;
    return out;
  }
  std::vector<std::pair<dev_t, ino_t>> chain{{st.st_dev, st.st_ino}};
  follow_scan_dir(fd, "", chain, out, loops);
  return out;
}

// ---- running the walker -------------------------------------------------------

struct Problem {
  int code;
  std::string message;
};

struct Outcome {
  bool ok = false;
  int error_code = -1;                                // TrawlWalkError when !ok
  std::vector<std::string> paths;                     // as returned (collect: sorted)
  std::vector<std::pair<std::string, unsigned>> typed; // run only: path, type
  std::vector<std::string> opened;                    // directories read, in order
  std::vector<Problem> problems;
  TrawlWalkStats stats{};
  unsigned callbacks = 0;
};

// Descriptors this process holds (/proc/self/fd), to catch a walk that
// leaks one. Tests with a thread of their own that opens files turn the
// check off.
inline bool check_fd_leaks = true;

inline int open_fd_count()
{
  DIR *d = opendir("/proc/self/fd");
  if (d == nullptr)
    return -1;
  int n = 0;
  while (struct dirent *e = readdir(d))
    n += e->d_name[0] != '.';
  closedir(d);
  return n - 1; // the one opendir holds
}

struct HookLog {
  std::mutex lock;
  std::vector<std::string> opened;
};

inline void record_open(unsigned root, const char *path, void *data)
{
  auto *log = static_cast<HookLog *>(data);
  std::lock_guard<std::mutex> guard(log->lock);
  log->opened.push_back(root ? std::to_string(root) + ":" + path : std::string(path));
}

// Build a walker for Q over ROOTS with the hook installed.
inline Walker make_walker(const Query &q, const std::vector<std::string> &roots, HookLog *log)
{
  Walker w(trawl_walker_new(&q.opt));
  if (q.helper_floor >= 0)
    trawl_walker_set_helper_floor(w.get(), (unsigned)q.helper_floor);
  if (q.patset_min > 0)
    trawl_walker_set_patset_min(w.get(), q.patset_min);
  for (const auto &r : roots)
    trawl_walker_add_root(w.get(), r.c_str());
  for (const auto &p : q.inc)
    if (p)
      trawl_walker_add_include(w.get(), p.get());
  for (const auto &p : q.exc)
    if (p)
      trawl_walker_add_exclude(w.get(), p.get());
  if (log)
    trawl_walker_set_open_hook(w.get(), record_open, log);
  return w;
}

inline void finish(TrawlWalker *w, HookLog &log, Outcome &out)
{
  const GPtrArray *problems = trawl_walker_problems(w);
  for (guint i = 0; i < problems->len; i++) {
    const GError *e = static_cast<const GError *>(problems->pdata[i]);
    EXPECT_EQ(e->domain, TRAWL_WALK_ERROR);
    out.problems.push_back({e->code, e->message});
  }
  trawl_walker_stats(w, &out.stats);
  out.opened = log.opened;
}

inline Outcome walk_collect(const Query &q, const std::vector<std::string> &roots)
{
  Outcome out;
  HookLog log;
  Walker w = make_walker(q, roots, &log);
  GError *error = nullptr;
  const int fds = open_fd_count();
  GPtrArray *res = trawl_walker_collect(w.get(), &error);
  if (check_fd_leaks) {
    EXPECT_EQ(open_fd_count(), fds) << "the walk leaked descriptors";
  }
  out.ok = res != nullptr;
  if (res) {
    EXPECT_EQ(error, nullptr);
    for (guint i = 0; i < res->len; i++)
      out.paths.push_back(static_cast<const char *>(res->pdata[i]));
    g_ptr_array_unref(res);
  } else {
    EXPECT_NE(error, nullptr);
    if (error) {
      EXPECT_EQ(error->domain, TRAWL_WALK_ERROR);
      out.error_code = error->code;
    }
  }
  if (error)
    g_error_free(error);
  finish(w.get(), log, out);
  return out;
}

struct Sink {
  std::mutex lock;
  std::vector<std::pair<std::string, unsigned>> seen;
  unsigned stop_after = 0; // 0: never stop
  unsigned calls = 0;
  bool bad_entry = false;
  bool sorted = false;         // trawl_walker_run_sorted: calls come on this thread
  std::thread::id caller = std::this_thread::get_id();
  bool other_thread = false;
};

inline bool sink_entry(const TrawlEntry *e, void *data)
{
  auto *s = static_cast<Sink *>(data);
  std::lock_guard<std::mutex> guard(s->lock);
  if (e->len != strlen(e->path))
    s->bad_entry = true;
  if (s->sorted && std::this_thread::get_id() != s->caller)
    s->other_thread = true;
  s->seen.push_back({std::string(e->path, e->len), (unsigned)e->type});
  s->calls++;
  return s->stop_after == 0 || s->calls < s->stop_after;
}

// trawl_walker_run, its results sorted here; or (SORTED) trawl_walker_run_sorted,
// its results kept in the order they came.
inline Outcome walk_run(const Query &q, const std::vector<std::string> &roots,
                        unsigned stop_after = 0, bool sorted = false)
{
  Outcome out;
  HookLog log;
  Sink sink;
  sink.stop_after = stop_after;
  sink.sorted = sorted;
  Walker w = make_walker(q, roots, &log);
  GError *error = nullptr;
  const int fds = open_fd_count();
  out.ok = sorted ? trawl_walker_run_sorted(w.get(), sink_entry, &sink, &error)
               : trawl_walker_run(w.get(), sink_entry, &sink, &error);
  if (check_fd_leaks) {
    EXPECT_EQ(open_fd_count(), fds) << "the walk leaked descriptors";
  }
  if (!out.ok) {
    EXPECT_NE(error, nullptr);
    if (error) {
      EXPECT_EQ(error->domain, TRAWL_WALK_ERROR);
      out.error_code = error->code;
    }
  } else {
    EXPECT_EQ(error, nullptr);
  }
  if (error)
    g_error_free(error);
  EXPECT_FALSE(sink.bad_entry) << "an entry's len differs from its path's length";
  EXPECT_FALSE(sink.other_thread) << "a sorted run called back from another thread";
  if (!sorted)
    std::sort(sink.seen.begin(), sink.seen.end());
  out.typed = sink.seen;
  out.paths = paths_of(sink.seen);
  out.callbacks = sink.calls;
  finish(w.get(), log, out);
  return out;
}

inline std::set<std::string> as_set(const std::vector<std::string> &v)
{
  return std::set<std::string>(v.begin(), v.end());
}

// Entries in directory DIR (relative to ROOT), "." and ".." left out.
inline size_t listing_size(const std::string &root, const std::string &dir)
{
  std::string path = dir.empty() ? root : root + "/" + dir;
  DIR *d = opendir(path.c_str());
  if (d == nullptr)
    return 0;
  size_t n = 0;
  while (struct dirent *e = readdir(d))
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
      n++;
  closedir(d);
  return n;
}

// The invariants every completed walk keeps: each directory is read once,
// the counters agree with what the hook and the sink saw.
inline void check_counters(const Outcome &o, const std::string &what)
{
  std::set<std::string> once(o.opened.begin(), o.opened.end());
  EXPECT_EQ(once.size(), o.opened.size()) << what << ": a directory was read twice: "
                                          << show(o.opened);
  EXPECT_EQ(o.stats.dirs_opened, o.opened.size()) << what;
  EXPECT_EQ(o.stats.results, o.paths.size()) << what;
  EXPECT_GE(o.stats.threads_used, 1u) << what;
}

// The option matrix every result check runs through. The parallel routes
// start their helpers at once (helper floor 0): the default floor keeps a
// test-sized tree on the serial route.
struct Route {
  unsigned threads;
  TrawlReader reader;
  const char *name;

  void apply(Query &q) const
  {
    q.opt.threads = threads;
    q.opt.reader = reader;
    q.helper_floor = threads > 1 ? 0 : -1;
  }
};
inline const Route kRoutes[] = {
  {1, TRAWL_READER_LINUX, "serial/linux"},
  {1, TRAWL_READER_POSIX, "serial/posix"},
  {4, TRAWL_READER_LINUX, "parallel/linux"},
  {4, TRAWL_READER_POSIX, "parallel/posix"},
};

} // namespace walktest

#endif // TRAWL_TESTS_WALK_UTIL_HPP
