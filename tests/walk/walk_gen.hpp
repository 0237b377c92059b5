// Seeded generated trees and queries for the walker's tests
// (reference_test.cpp, plan_test.cpp): names that trouble a walker or a
// printer, links of every kind, and queries over them in every dialect.
#ifndef TRAWL_TESTS_WALK_GEN_HPP
#define TRAWL_TESTS_WALK_GEN_HPP

#include <random>

#include "walk_util.hpp"

namespace walkgen {

using namespace walktest;

// A deterministic generator (std::mt19937 is specified bit for bit).
class Rng {
public:
  explicit Rng(uint32_t seed) : gen_(seed) {}
  unsigned below(unsigned n) { return n ? (unsigned)(gen_() % n) : 0; }
  bool chance(unsigned one_in) { return below(one_in) == 0; }
  template <typename T, size_t N> const T &pick(const T (&a)[N]) { return a[below(N)]; }
  template <typename T> const T &pick(const std::vector<T> &v) { return v[below((unsigned)v.size())]; }

private:
  std::mt19937 gen_;
};

inline const char *const kDirNames[] = {
  "src", "lib", "test", "pkg", "node_modules", "build", ".hidden", ".github",
  "a b", "semi;colon", "new\nline", "br[ack", "quo'te", "dq\"uote", "\xff\xfe",
  "caf\xc3\xa9", "{x,y}", "back\\slash", "-dash", "st*r", "q?", "docs", "x",
  "workflows", "Src",
};
inline const char *const kFileBases[] = {
  "main", "util", "a", "b b", "x;y", "n\nl", "[1]", "it's", "\"q\"", "\xe9t\xe9",
  "\xc3\xa9t\xc3\xa9", ".env", ".hidden", "README", "st*r", "c\\d", "{a,b}", "-opt",
  "  lead", "tab\there", "b", "Main",
};
inline const char *const kExts[] = {".c", ".h", ".ts", ".md", ".yml", ".txt", "", ".C"};

// Build a tree below ROOT: the root wide enough (10 to 14 directories) for
// the parallel route to start its helpers, four levels at most.
inline void generate_dir(Rng &rng, const std::string &root, const std::string &rel, int depth)
{
  std::set<std::string> used;
  auto fresh = [&](const std::string &name) { return used.insert(name).second; };
  const std::string here = rel.empty() ? root : root + "/" + rel;
  auto child = [&](const std::string &name) { return rel.empty() ? name : rel + "/" + name; };

  unsigned files = rng.below(7);
  for (unsigned i = 0; i < files; i++) {
    std::string name = std::string(rng.pick(kFileBases)) + rng.pick(kExts);
    if (fresh(name))
      write_file(here + "/" + name);
  }
  unsigned dirs = depth == 0 ? 10 + rng.below(5) : depth < 4 ? rng.below(5 - (unsigned)depth) : 0;
  std::vector<std::string> made;
  for (unsigned i = 0; i < dirs; i++) {
    std::string name = rng.pick(kDirNames);
    if (!fresh(name))
      continue;
    make_dir(here + "/" + name);
    made.push_back(name);
  }
  // Links: to a file, to a directory (a sibling, an ancestor, itself), to
  // nothing.
  if (rng.chance(4)) {
    std::string name = "ln-file" + std::string(rng.pick(kExts));
    if (fresh(name))
      make_link(std::string(rng.pick(kFileBases)) + ".c", here + "/" + name);
  }
  if (rng.chance(5) && !made.empty()) {
    std::string name = rng.chance(3) ? ".ln-dir" : "ln-dir";
    if (fresh(name))
      make_link(rng.pick(made), here + "/" + name);
  }
  if (rng.chance(8)) {
    std::string name = "ln-up";
    if (fresh(name))
      make_link(rng.chance(2) ? ".." : ".", here + "/" + name);
  }
  if (rng.chance(8)) {
    std::string name = "dangling.c";
    if (fresh(name))
      make_link("does-not-exist", here + "/" + name);
  }
  for (const auto &name : made)
    generate_dir(rng, root, child(name), depth + 1);
}

// Escape the glob metacharacters of a name.
inline std::string escape(const std::string &s)
{
  std::string out;
  for (char c : s) {
    if (strchr("*?[]{}\\,", c))
      out += '\\';
    out += c;
  }
  return out;
}

inline std::string upper(std::string s)
{
  for (char &c : s)
    if (c >= 'a' && c <= 'z')
      c = (char)(c - 'a' + 'A');
  return s;
}

struct TreeFacts {
  std::vector<std::string> top_dirs, dirs, files, names;
};

inline TreeFacts facts_of(const std::vector<FsEntry> &entries)
{
  TreeFacts f;
  for (const auto &e : entries) {
    std::string name = e.path.substr(e.path.rfind('/') == std::string::npos ? 0 : e.path.rfind('/') + 1);
    f.names.push_back(name);
    if (e.kind == 'd') {
      f.dirs.push_back(e.path);
      if (e.path.find('/') == std::string::npos)
        f.top_dirs.push_back(e.path);
    } else {
      f.files.push_back(e.path);
    }
  }
  if (f.top_dirs.empty())
    f.top_dirs.push_back("src");
  if (f.dirs.empty())
    f.dirs.push_back("src");
  if (f.files.empty())
    f.files.push_back("a.c");
  return f;
}

inline std::string escaped_path(const std::string &path)
{
  std::string out;
  for (const auto &c : components(path))
    out += (out.empty() ? "" : "/") + escape(c);
  return out;
}

inline std::string gen_include(Rng &rng, const TreeFacts &f)
{
  const char *ext = rng.pick(kExts);
  std::string e = *ext ? ext : ".c";
  switch (rng.below(27)) {
  case 0: return "**";
  case 1: return "**/*" + e;
  case 2: return "*" + e;
  case 3: return escape(rng.pick(f.top_dirs)) + "/**/*" + e;
  case 4: return "{" + escape(rng.pick(f.top_dirs)) + "," + escape(rng.pick(f.top_dirs)) + "}/**/*" + e;
  case 5: return escape(rng.pick(f.top_dirs)) + "/*/" + escape(rng.pick(kDirNames)) + "/*" + e;
  case 6: return "**/" + escape(rng.pick(kDirNames)) + "/**";
  case 7: return ".github/**/*.yml";
  case 8: return "**/.env";
  case 9: return "**/.hidden/**";
  case 10: return escaped_path(rng.pick(f.files));
  case 11: return escaped_path(rng.pick(f.dirs)) + "/*";
  case 12: return "**/*[ab]*";
  case 13: return "**/?" + e;
  case 14: return "*/*";
  case 15: return escaped_path(rng.pick(f.dirs)) + "/**";
  case 16: return "**/" + escape(rng.pick(f.names));
  case 17: return ".*/**";
  case 18: return "**/*.{c,h}";
  case 19: return escape(rng.pick(f.top_dirs)) + "/**/.*";
  case 20: return "{" + escaped_path(rng.pick(f.dirs)) + "," + escaped_path(rng.pick(f.dirs)) + "}/*";
  case 22: return "s**/*" + e;            // '**' inside a component is '*'
  case 23: return "**/.*/**";
  case 24: return "*/**/*";
  case 25: return "**/**/*" + e;
  default: return "*/" + escape(rng.pick(kDirNames)) + "/*";
  }
}

inline std::string gen_exclude(Rng &rng, const TreeFacts &f)
{
  switch (rng.below(13)) {
  case 10: return "{build,node_modules}/**";
  case 11: return "**/{test,lib}/**";
  case 12: return "**/.*";
  case 0: return "**/node_modules/**";
  case 1: return "build/**";
  case 2: return "**/*.md";
  case 3: return "**/test";
  case 4: return escape(rng.pick(f.top_dirs));
  case 5: return "*/" + escape(rng.pick(kDirNames)) + "/**";
  case 6: return "**/.hidden";
  case 7: return "**/*;*";
  case 8: return escaped_path(rng.pick(f.dirs));
  default: return "**/lib";
  }
}

inline void gen_query(Rng &rng, const TreeFacts &f, Query &q)
{
  // One query in five in another dialect (no braces there), with hidden
  // entries shown: the compatibility dialects let the pattern decide.
  const TrawlDialect dialects[] = {TRAWL_DIALECT_GIT, TRAWL_DIALECT_BAZEL, TRAWL_DIALECT_CMAKE};
  if (rng.chance(5))
    q.dialect = rng.pick(dialects);
  auto fits = [&](const std::string &t) {
    if (q.dialect != TRAWL_DIALECT_TRAWL && t.find('{') != std::string::npos)
      return false;
    // Not every template compiles in every dialect (bazel: "s**").
    TrawlPattern *p = trawl_pattern_compile(t.data(), t.size(), q.dialect, 0, nullptr);
    trawl_pattern_free(p);
    return p != nullptr;
  };
  unsigned n_inc = rng.below(4); // 0: no include, everything matches
  for (unsigned i = 0; i < n_inc; i++) {
    std::string t = gen_include(rng, f);
    while (!fits(t))
      t = gen_include(rng, f);
    q.includes.push_back(t);
  }
  unsigned n_exc = rng.chance(2) ? 0 : 1 + rng.below(2);
  for (unsigned i = 0; i < n_exc; i++) {
    std::string t = gen_exclude(rng, f);
    while (!fits(t))
      t = gen_exclude(rng, f);
    q.excludes.push_back(t);
  }
  if (rng.chance(8)) {
    q.flags = TRAWL_PATTERN_ICASE;
    for (auto *list : {&q.includes, &q.excludes})
      for (auto &t : *list)
        if (t.find("[:") == std::string::npos && rng.chance(2))
          t = upper(t);
  }
  q.opt.hidden = q.dialect != TRAWL_DIALECT_TRAWL || rng.chance(3);
  const unsigned types[] = {TRAWL_ENTRY_FILE, TRAWL_ENTRY_FILE, TRAWL_ENTRY_FILE | TRAWL_ENTRY_DIR,
                            TRAWL_ENTRY_DIR, TRAWL_ENTRY_SYMLINK,
                            TRAWL_ENTRY_FILE | TRAWL_ENTRY_DIR | TRAWL_ENTRY_SYMLINK};
  q.opt.types = rng.pick(types);
  const int depths[] = {-1, -1, -1, 1, 2, 3};
  q.opt.max_depth = rng.pick(depths);
  q.compile_all();
}

} // namespace walkgen

#endif // TRAWL_TESTS_WALK_GEN_HPP
