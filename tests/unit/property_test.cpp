// Property tests over generated patterns and paths (seeded and reproducible:
// TRAWL_PROPERTY_SEED=N replays another seed, TRAWL_PROPERTY_ROUNDS=N scales
// the run). For every dialect, with and without case folding:
//
//  (a) trawl_pattern_match equals the engine alone: the prefilters and the
//      strategy shortcuts never change an answer;
//  (b) whenever a path matches, may_match_below says yes for every proper
//      ancestor directory (a wrong "no" loses files silently);
//  (c) a matching path is at least min_length long, starts with the literal
//      prefix, ends with the literal suffix and the extension, and lies under
//      one of the roots;
//  (d) on a brace-free pattern both accept, the trawl and git dialects agree
//      (docs/patterns.md), except under case folding where the pattern has a
//      class or an escape (trawl folds those on purpose), and where git's
//      literal cut makes a "**" after a partial component a globstar;
//  (e) where trawl_pattern_suffix_decides() says so, a path matches exactly
//      when it ends with the literal suffix (the walker then decides alone).
//
// Paths are drawn half from the pattern itself (each wildcard instantiated,
// then sometimes mutated by one byte) so that matches are common. They are
// kept to the documented input: relative, normalised paths (no empty path,
// no empty component); the corpus pins what happens outside it.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_util.hpp"

using namespace testutil;

namespace {

const char kAlphabet[] = {'a', 'b', 'A', '.', 'c', '-'};

// A generated pattern: text plus enough structure to instantiate paths.
struct Atom {
  enum Kind { Lit, Escape, Star, Any, Class, Brace } kind = Lit;
  char byte = 0;                         // Lit, Escape
  std::string text;                      // Class: its text
  std::string members;                   // Class: bytes it certainly matches
  std::vector<std::vector<Atom>> alts;   // Brace
};

struct Comp {
  bool globstar = false;
  std::vector<Atom> atoms;
  std::vector<std::vector<Comp>> paths; // trawl: "{a/b,c}", alternatives of components
};

class Generator {
public:
  Generator(Rng &rng, TrawlDialect d) : rng_(rng), d_(d) {}

  std::vector<Comp> pattern()
  {
    return comps(1 + rng_.below(4), true);
  }

  std::vector<Comp> comps(unsigned n, bool top)
  {
    std::vector<Comp> v(n);
    for (Comp &c : v) {
      if (d_ != TRAWL_DIALECT_CMAKE && rng_.chance(22)) {
        c.globstar = true;
      } else if (d_ == TRAWL_DIALECT_TRAWL && top && rng_.chance(8)) {
        unsigned k = 1 + rng_.below(3);
        for (unsigned j = 0; j < k; j++)
          c.paths.push_back(comps(1 + rng_.below(2), false));
      } else {
        c.atoms = atoms(1 + rng_.below(4), 0);
      }
    }
    return v;
  }

  std::string render(const std::vector<Comp> &comps)
  {
    std::string s;
    for (size_t i = 0; i < comps.size(); i++) {
      if (i)
        s += '/';
      const Comp &c = comps[i];
      if (c.globstar) {
        s += "**";
      } else if (!c.paths.empty()) {
        s += '{';
        for (size_t j = 0; j < c.paths.size(); j++)
          s += (j ? "," : "") + render(c.paths[j]);
        s += '}';
      } else {
        s += render_atoms(c.atoms);
      }
    }
    return s;
  }

  // A path the pattern should match (before mutation).
  std::string instantiate(const std::vector<Comp> &comps)
  {
    std::vector<std::string> parts;
    for (const Comp &c : comps) {
      if (c.globstar) {
        unsigned n = rng_.below(3);
        for (unsigned k = 0; k < n; k++)
          parts.push_back(random_name(1 + rng_.below(3)));
      } else if (!c.paths.empty()) {
        parts.push_back(instantiate(c.paths[rng_.below(static_cast<unsigned>(c.paths.size()))]));
      } else {
        parts.push_back(fill(c.atoms));
      }
    }
    std::string s;
    for (size_t i = 0; i < parts.size(); i++)
      s += (i ? "/" : "") + parts[i];
    return s;
  }

  std::string random_path()
  {
    std::string s;
    unsigned n = 1 + rng_.below(4);
    for (unsigned i = 0; i < n; i++)
      s += (i ? "/" : "") + random_name(1 + rng_.below(3));
    return s;
  }

  std::string mutate(std::string s)
  {
    if (s.empty())
      return "a";
    size_t at = rng_.below(static_cast<unsigned>(s.size()));
    switch (rng_.below(4)) {
    case 0: s[at] = kAlphabet[rng_.below(sizeof kAlphabet)]; break;
    case 1: s.erase(at, 1); break;
    case 2: s.insert(at, 1, kAlphabet[rng_.below(sizeof kAlphabet)]); break;
    default: s.insert(at, 1, '/'); break;
    }
    return s;
  }

private:
  std::vector<Atom> atoms(unsigned n, int depth)
  {
    std::vector<Atom> v;
    for (unsigned i = 0; i < n; i++) {
      Atom a;
      unsigned r = rng_.below(100);
      if (r < 40) {
        a.byte = kAlphabet[rng_.below(sizeof kAlphabet)];
      } else if (r < 45 && (d_ == TRAWL_DIALECT_TRAWL || d_ == TRAWL_DIALECT_GIT)) {
        a.kind = Atom::Escape;
        a.byte = "*?[a{"[rng_.below(d_ == TRAWL_DIALECT_TRAWL ? 5 : 4)];
      } else if (r < 45) {
        a.byte = kAlphabet[rng_.below(sizeof kAlphabet)];
      } else if (r < 65) {
        a.kind = Atom::Star;
      } else if (r < 75) {
        a.kind = Atom::Any;
      } else if (r < 88 && d_ != TRAWL_DIALECT_BAZEL) {
        a.kind = Atom::Class;
        static const struct {
          const char *text, *members;
        } classes[] = {{"[ab]", "ab"}, {"[!a]", "b.c"}, {"[a-c]", "abc"}, {"[^.]", "aAb"},
                       {"[.A]", ".A"}, {"[]a]", "a"}, {"[-c]", "-c"}};
        const auto &k = classes[rng_.below(sizeof classes / sizeof classes[0])];
        a.text = k.text;
        a.members = k.members;
        // '[^' negates in cmake as well; '[:' does not occur.
      } else if (d_ == TRAWL_DIALECT_TRAWL && depth < 2) {
        a.kind = Atom::Brace;
        unsigned k = 1 + rng_.below(3);
        for (unsigned j = 0; j < k; j++)
          a.alts.push_back(atoms(rng_.below(3), depth + 1));
      } else {
        a.byte = kAlphabet[rng_.below(sizeof kAlphabet)];
      }
      v.push_back(a);
    }
    return v;
  }

  std::string render_atoms(const std::vector<Atom> &v)
  {
    std::string s;
    for (const Atom &a : v) {
      switch (a.kind) {
      case Atom::Lit: s += a.byte; break;
      case Atom::Escape: s += '\\'; s += a.byte; break;
      case Atom::Star: s += '*'; break;
      case Atom::Any: s += '?'; break;
      case Atom::Class: s += a.text; break;
      case Atom::Brace:
        s += '{';
        for (size_t j = 0; j < a.alts.size(); j++)
          s += (j ? "," : "") + render_atoms(a.alts[j]);
        s += '}';
        break;
      }
    }
    return s;
  }

  std::string fill(const std::vector<Atom> &v)
  {
    std::string s;
    for (const Atom &a : v) {
      switch (a.kind) {
      case Atom::Lit: s += a.byte; break;
      case Atom::Escape: s += a.byte; break;
      case Atom::Star: s += random_name(rng_.below(3)); break;
      case Atom::Any: s += kAlphabet[rng_.below(sizeof kAlphabet)]; break;
      case Atom::Class: s += a.members[rng_.below(static_cast<unsigned>(a.members.size()))]; break;
      case Atom::Brace: s += fill(a.alts[rng_.below(static_cast<unsigned>(a.alts.size()))]); break;
      }
    }
    return s;
  }

  std::string random_name(unsigned n)
  {
    std::string s;
    for (unsigned i = 0; i < n; i++)
      s += kAlphabet[rng_.below(sizeof kAlphabet)];
    return s;
  }

  Rng &rng_;
  TrawlDialect d_;
};

// Relative and normalised: not empty, no empty component, no "." or "..".
bool normalised(const std::string &path)
{
  if (path.empty())
    return false;
  size_t start = 0;
  for (;;) {
    size_t slash = path.find('/', start);
    std::string comp = path.substr(start, slash == std::string::npos ? slash : slash - start);
    if (comp.empty() || comp == "." || comp == "..")
      return false;
    if (slash == std::string::npos)
      return true;
    start = slash + 1;
  }
}

// The sanitizer build looks for memory errors, not for volume: a quarter of
// the rounds there.
#if defined(__SANITIZE_ADDRESS__)
const uint64_t kDefaultRounds = 3000;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
const uint64_t kDefaultRounds = 3000;
#else
const uint64_t kDefaultRounds = 12000;
#endif
#else
const uint64_t kDefaultRounds = 12000;
#endif

uint64_t env_number(const char *name, uint64_t fallback)
{
  const char *v = g_getenv(name);
  return v && *v ? g_ascii_strtoull(v, nullptr, 10) : fallback;
}

const char *dialect_name(TrawlDialect d)
{
  static const char *const names[] = {"trawl", "git", "cmake", "bazel"};
  return names[d];
}

class Properties : public ::testing::TestWithParam<std::tuple<TrawlDialect, unsigned>> {
protected:
  // Report at most a few failures of each property, with a reproducer.
  void fail(int property, const std::string &what, const std::string &text,
            const std::string &path)
  {
    if (++failures_[property] > 5)
      return;
    ADD_FAILURE() << "property (" << char('a' + property) << ") " << what << "\n  dialect "
                  << dialect_name(dialect_) << (icase_ ? " icase" : "") << ", pattern "
                  << show(text) << ", path " << show(path) << "\n  seed " << seed_
                  << " (TRAWL_PROPERTY_SEED)";
  }

  TrawlDialect dialect_ = TRAWL_DIALECT_TRAWL;
  bool icase_ = false;
  uint64_t seed_ = 0;
  int failures_[5] = {0, 0, 0, 0, 0};
};

TEST_P(Properties, HoldOnGeneratedPatterns)
{
  dialect_ = std::get<0>(GetParam());
  unsigned flags = std::get<1>(GetParam());
  icase_ = flags != 0;
  seed_ = env_number("TRAWL_PROPERTY_SEED", 20260101) * 8 + unsigned(dialect_) * 2 + flags;
  const uint64_t rounds = env_number("TRAWL_PROPERTY_ROUNDS", kDefaultRounds);
  Rng rng(seed_);
  Generator gen(rng, dialect_);

  uint64_t compiled = 0, matches = 0, checked = 0, compared = 0, by_suffix = 0;
  for (uint64_t round = 0; round < rounds; round++) {
    std::vector<Comp> comps = gen.pattern();
    std::string text = gen.render(comps);
    Pattern p = compile(text, dialect_, flags);
    if (!p)
      continue; // e.g. bazel's '.' segments, or '**' inside a segment
    compiled++;

    Pattern twin; // (d): the git reading of a brace-free trawl pattern
    bool braces = text.find_first_of("{}") != std::string::npos;
    bool folds_differently = icase_ && text.find_first_of("[\\") != std::string::npos;
    // git's literal cut: the bytes before the first wildcard are compared on
    // their own, so a "**" right after them (not after '/') is a globstar in
    // the git dialect and a '*' in the trawl dialect (docs/patterns.md).
    size_t first = text.find_first_of("*?[\\");
    bool cut = first != std::string::npos && first > 0 && text[first - 1] != '/' &&
               text.compare(first, 2, "**") == 0;
    if (dialect_ == TRAWL_DIALECT_TRAWL && !braces && !folds_differently && !cut)
      twin = compile(text, TRAWL_DIALECT_GIT, flags);
    const bool decides = trawl_pattern_suffix_decides(p.get());
    by_suffix += decides;

    for (int k = 0; k < 12; k++) {
      std::string path = k < 6 ? gen.instantiate(comps) : gen.random_path();
      if (k % 3 == 2)
        path = gen.mutate(path);
      if (!normalised(path))
        continue;
      checked++;

      bool m = match(p.get(), path);
      if (m != engine(p.get(), path))
        fail(0, std::string("trawl_pattern_match says ") + (m ? "yes" : "no") +
                    ", the engine alone the opposite", text, path);
      if (decides && m != ends_with(path, suffix(p.get()), false))
        fail(4, std::string("the suffix decides, yet trawl_pattern_match says ") +
                    (m ? "yes" : "no") + " and the suffix the opposite",
             text, path);
      if (twin) {
        compared++;
        if (m != match(twin.get(), path))
          fail(3, std::string("the trawl dialect says ") + (m ? "yes" : "no") +
                      ", the git dialect the opposite", text, path);
      }
      if (!m)
        continue;
      matches++;

      for (const std::string &dir : ancestors(path))
        if (!below(p.get(), dir))
          fail(1, "a matching path's directory " + show(dir) + " is pruned", text, path);

      if (path.size() < trawl_pattern_min_length(p.get()))
        fail(2, "shorter than min_length " + std::to_string(trawl_pattern_min_length(p.get())),
             text, path);
      if (!starts_with(path, prefix(p.get()), icase_))
        fail(2, "does not start with the prefix " + show(prefix(p.get())), text, path);
      if (!ends_with(path, suffix(p.get()), icase_))
        fail(2, "does not end with the suffix " + show(suffix(p.get())), text, path);
      if (!ends_with(path, extension(p.get()), icase_))
        fail(2, "does not end with the extension " + show(extension(p.get())), text, path);
      bool rooted = false;
      for (const std::string &r : roots(p.get()))
        rooted = rooted || under_root(path, r, icase_);
      if (!rooted)
        fail(2, "lies under none of the roots", text, path);
    }
  }
  // The generator must actually exercise the properties.
  EXPECT_GT(compiled, rounds / 2);
  EXPECT_GT(matches, checked / 10) << "too few matches to say anything";
  if (dialect_ == TRAWL_DIALECT_TRAWL && !icase_) {
    EXPECT_GT(compared, checked / 4);
  }
  // CMake's and Bazel's readings of "**/*.x" are not suffix tests (Bazel's
  // '*' refuses a leading '.'), nor is any pattern under case folding.
  if (!icase_ && (dialect_ == TRAWL_DIALECT_TRAWL || dialect_ == TRAWL_DIALECT_GIT)) {
    EXPECT_GT(by_suffix, 0u) << "no pattern the suffix decides: (e) said nothing";
  }
  RecordProperty("suffix_decides", static_cast<int>(by_suffix));
  RecordProperty("patterns", static_cast<int>(compiled));
  RecordProperty("matches", static_cast<int>(matches));
}

std::string param_name(const ::testing::TestParamInfo<Properties::ParamType> &info)
{
  return std::string(dialect_name(std::get<0>(info.param))) +
         (std::get<1>(info.param) ? "_icase" : "");
}

INSTANTIATE_TEST_SUITE_P(
    AllDialects, Properties,
    ::testing::Combine(::testing::Values(TRAWL_DIALECT_TRAWL, TRAWL_DIALECT_GIT,
                                         TRAWL_DIALECT_CMAKE, TRAWL_DIALECT_BAZEL),
                       ::testing::Values(0u, unsigned(TRAWL_PATTERN_ICASE))),
    param_name);

} // namespace
