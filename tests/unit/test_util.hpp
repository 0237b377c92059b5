// Helpers shared by the unit tests: an owning pattern handle, exact-size
// buffers (so that AddressSanitizer catches a read past a path's LEN bytes),
// and the private test hooks of pattern-private.h.
#ifndef TRAWL_TESTS_TEST_UTIL_HPP
#define TRAWL_TESTS_TEST_UTIL_HPP

#include <stdint.h>
#include <string.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <glib.h>

#include "trawl/pattern.h"

// The private header is C without linkage markers of its own.
extern "C" {
#include "pattern-private.h"
}

namespace testutil {

struct PatternFree {
  void operator()(TrawlPattern *p) const { trawl_pattern_free(p); }
};
using Pattern = std::unique_ptr<TrawlPattern, PatternFree>;

struct ErrorFree {
  void operator()(GError *e) const { g_error_free(e); }
};
using Error = std::unique_ptr<GError, ErrorFree>;

// A heap copy of BYTES with no terminator and no slack: reading byte LEN is
// an overflow the sanitizer build reports.
class Exact {
public:
  explicit Exact(const std::string &bytes)
    : len_(bytes.size()), data_(new char[bytes.size() ? bytes.size() : 1])
  {
    if (len_)
      std::memcpy(data_.get(), bytes.data(), len_);
  }
  const char *data() const { return data_.get(); }
  size_t size() const { return len_; }

private:
  size_t len_;
  std::unique_ptr<char[]> data_;
};

// Compile TEXT; on failure the pattern is null and *ERROR (if given) holds
// the error.
inline Pattern compile(const std::string &text, TrawlDialect dialect = TRAWL_DIALECT_TRAWL,
                       unsigned flags = 0, Error *error = nullptr)
{
  Exact buf(text);
  GError *e = nullptr;
  TrawlPattern *p = trawl_pattern_compile(buf.data(), buf.size(), dialect, flags, &e);
  if (error)
    error->reset(e);
  else if (e)
    g_error_free(e);
  return Pattern(p);
}

inline bool match(const TrawlPattern *p, const std::string &path)
{
  Exact buf(path);
  return trawl_pattern_match(p, buf.data(), buf.size());
}

inline bool match_entry(const TrawlPattern *p, const std::string &path, TrawlEntryType type)
{
  Exact buf(path);
  return trawl_pattern_match_entry(p, buf.data(), buf.size(), type);
}

inline bool engine(const TrawlPattern *p, const std::string &path, uint64_t *steps = nullptr)
{
  Exact buf(path);
  uint64_t local = 0;
  return trawl_pattern_match_engine(p, buf.data(), buf.size(), steps ? steps : &local);
}

inline bool below(const TrawlPattern *p, const std::string &dir)
{
  Exact buf(dir);
  return trawl_pattern_may_match_below(p, buf.data(), buf.size());
}

inline std::string prefix(const TrawlPattern *p)
{
  size_t n = 0;
  const char *s = trawl_pattern_literal_prefix(p, &n);
  return std::string(s ? s : "", s ? n : 0);
}

inline std::string suffix(const TrawlPattern *p)
{
  size_t n = 0;
  const char *s = trawl_pattern_literal_suffix(p, &n);
  return std::string(s ? s : "", s ? n : 0);
}

// The extension, or "" when there is none (has_ext tells them apart).
inline std::string extension(const TrawlPattern *p, bool *has_ext = nullptr)
{
  size_t n = 0;
  const char *s = trawl_pattern_extension(p, &n);
  if (has_ext)
    *has_ext = s != nullptr;
  return std::string(s ? s : "", s ? n : 0);
}

inline std::vector<std::string> roots(const TrawlPattern *p)
{
  const GPtrArray *r = trawl_pattern_roots(p);
  std::vector<std::string> out;
  for (guint i = 0; i < r->len; i++)
    out.emplace_back(static_cast<const char *>(g_ptr_array_index(r, i)));
  return out;
}

inline bool ascii_equal(const std::string &a, const std::string &b, bool icase)
{
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); i++)
    if (icase ? g_ascii_tolower(a[i]) != g_ascii_tolower(b[i]) : a[i] != b[i])
      return false;
  return true;
}

inline bool starts_with(const std::string &s, const std::string &head, bool icase)
{
  return s.size() >= head.size() && ascii_equal(s.substr(0, head.size()), head, icase);
}

inline bool ends_with(const std::string &s, const std::string &tail, bool icase)
{
  return s.size() >= tail.size() && ascii_equal(s.substr(s.size() - tail.size()), tail, icase);
}

// Is PATH the directory ROOT or below it ("" is the root of everything)?
inline bool under_root(const std::string &path, const std::string &root, bool icase)
{
  if (root.empty())
    return true;
  return ascii_equal(path, root, icase) || starts_with(path, root + "/", icase);
}

// The proper ancestor directories of PATH, from the root "" down; empty when
// PATH is not normalised (an empty component has no directory to ask about).
inline std::vector<std::string> ancestors(const std::string &path)
{
  std::vector<std::string> out{""};
  for (size_t i = 0; i < path.size(); i++) {
    if (path[i] != '/')
      continue;
    if (i == 0 || path[i - 1] == '/' || i + 1 == path.size())
      return {};
    out.push_back(path.substr(0, i));
  }
  return out;
}

// Escape bytes for messages.
inline std::string show(const std::string &bytes)
{
  std::string out = "\"";
  for (unsigned char c : bytes) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      g_snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// splitmix64: the same sequence on every platform and standard library, for
// the seeded generated tests.
class Rng {
public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next()
  {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  unsigned below(unsigned n) { return static_cast<unsigned>(next() % n); }
  bool chance(unsigned percent) { return below(100) < percent; }

private:
  uint64_t state_;
};

} // namespace testutil

#endif
