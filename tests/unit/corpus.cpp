// Reader for the matcher corpus; see corpus.hpp and tests/corpus/README.md.
#include "corpus.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <glib.h>

namespace corpus {

namespace {

int hex_value(char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

// '""' is the empty string; otherwise \\ \t \n \r \0 \xHH.
bool decode(const std::string &raw, std::string *out, std::string *why)
{
  out->clear();
  if (raw == "\"\"")
    return true;
  for (size_t i = 0; i < raw.size(); i++) {
    if (raw[i] != '\\') {
      out->push_back(raw[i]);
      continue;
    }
    if (i + 1 >= raw.size()) {
      *why = "field ends in a lone backslash";
      return false;
    }
    char e = raw[++i];
    switch (e) {
    case '\\': out->push_back('\\'); break;
    case 't': out->push_back('\t'); break;
    case 'n': out->push_back('\n'); break;
    case 'r': out->push_back('\r'); break;
    case '0': out->push_back('\0'); break;
    case 'x': {
      int hi = i + 1 < raw.size() ? hex_value(raw[i + 1]) : -1;
      int lo = i + 2 < raw.size() ? hex_value(raw[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        *why = "\\x needs two hex digits";
        return false;
      }
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
      break;
    }
    default:
      *why = std::string("unknown escape \\") + e;
      return false;
    }
  }
  return true;
}

std::vector<std::string> split_tabs(const std::string &line)
{
  std::vector<std::string> fields;
  size_t start = 0;
  for (;;) {
    size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string::npos ? tab : tab - start));
    if (tab == std::string::npos)
      return fields;
    start = tab + 1;
  }
}

bool parse_dialect(const std::string &name, TrawlDialect *out)
{
  static const struct {
    const char *name;
    TrawlDialect dialect;
  } table[] = {
    {"trawl", TRAWL_DIALECT_TRAWL},
    {"git", TRAWL_DIALECT_GIT},
    {"cmake", TRAWL_DIALECT_CMAKE},
    {"bazel", TRAWL_DIALECT_BAZEL},
  };
  for (const auto &entry : table)
    if (name == entry.name) {
      *out = entry.dialect;
      return true;
    }
  return false;
}

bool parse_yes_no(const std::string &s, bool *out)
{
  if (s != "yes" && s != "no")
    return false;
  *out = s == "yes";
  return true;
}

std::string base_name(const std::string &path)
{
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Parse one non-comment line into *ROW; false with *WHY on error.
bool parse_line(const std::string &line, Row *row, std::string *why)
{
  std::vector<std::string> raw = split_tabs(line);
  if (raw.size() < 5) {
    *why = "too few fields";
    return false;
  }
  const std::string &kind = raw[0];
  if (kind == "match")
    row->kind = Kind::Match;
  else if (kind == "error")
    row->kind = Kind::Error;
  else if (kind == "prune")
    row->kind = Kind::Prune;
  else if (kind == "facts")
    row->kind = Kind::Facts;
  else if (kind == "escape")
    row->kind = Kind::Escape;
  else {
    *why = "unknown row kind '" + kind + "'";
    return false;
  }
  row->dialect_name = raw[1];
  if (!parse_dialect(raw[1], &row->dialect)) {
    *why = "unknown dialect '" + raw[1] + "'";
    return false;
  }
  if (raw[2] == "-")
    row->flags = 0;
  else if (raw[2] == "icase")
    row->flags = TRAWL_PATTERN_ICASE;
  else {
    *why = "unknown flags '" + raw[2] + "'";
    return false;
  }
  std::vector<std::string> args;
  for (size_t i = 3; i < raw.size(); i++) {
    std::string value;
    if (!decode(raw[i], &value, why))
      return false;
    args.push_back(value);
  }
  row->pattern = args[0];
  args.erase(args.begin());
  switch (row->kind) {
  case Kind::Match:
    if (args.size() == 3 && (args[2] == "file" || args[2] == "dir")) {
      row->type = args[2] == "file" ? TRAWL_ENTRY_FILE : TRAWL_ENTRY_DIR;
      args.pop_back();
    }
    if (args.size() != 2 || !parse_yes_no(args[1], &row->expected)) {
      *why = "match rows are: PATH yes|no [file|dir]";
      return false;
    }
    row->path = args[0];
    return true;
  case Kind::Prune:
    if (args.size() != 2 || !parse_yes_no(args[1], &row->expected)) {
      *why = kind + " rows are: PATH yes|no";
      return false;
    }
    row->path = args[0];
    return true;
  case Kind::Error: {
    char *end = nullptr;
    if (args.size() != 2 || args[0].empty() ||
        (row->offset = std::strtol(args[0].c_str(), &end, 10), *end != '\0')) {
      *why = "error rows are: OFFSET REASON";
      return false;
    }
    row->reason = args[1];
    return true;
  }
  case Kind::Facts:
    row->key = args[0];
    row->values.assign(args.begin() + 1, args.end());
    return true;
  case Kind::Escape:
    if (args.size() != 1 || row->dialect != TRAWL_DIALECT_TRAWL || row->flags != 0) {
      *why = "escape rows are: escape trawl - PATTERN PATH";
      return false;
    }
    row->path = args[0];
    row->expected = true;
    return true;
  }
  return false;
}

} // namespace

std::string escape(const std::string &bytes)
{
  if (bytes.empty())
    return "\"\"";
  std::string out;
  for (unsigned char c : bytes) {
    char buf[8];
    switch (c) {
    case '\\': out += "\\\\"; break;
    case '\t': out += "\\t"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\0': out += "\\0"; break;
    default:
      if (c < 0x20 || c >= 0x7f) {
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        out += buf;
      } else {
        out.push_back(static_cast<char>(c));
      }
    }
  }
  return out;
}

std::string Row::where() const
{
  return file + ":" + std::to_string(line);
}

std::string Row::describe() const
{
  static const char *const kinds[] = {"match", "error", "prune", "facts", "escape"};
  std::ostringstream s;
  s << kinds[static_cast<int>(kind)] << ' ' << dialect_name << ' '
    << (flags & TRAWL_PATTERN_ICASE ? "icase" : "-") << ' ' << escape(pattern);
  switch (kind) {
  case Kind::Match:
  case Kind::Prune:
    s << ' ' << escape(path) << ' ' << (expected ? "yes" : "no");
    if (type != TRAWL_ENTRY_UNKNOWN)
      s << ' ' << (type == TRAWL_ENTRY_DIR ? "dir" : "file");
    break;
  case Kind::Escape:
    s << ' ' << escape(path);
    break;
  case Kind::Error:
    s << ' ' << offset << ' ' << reason;
    break;
  case Kind::Facts:
    s << ' ' << key;
    for (const auto &v : values)
      s << ' ' << escape(v);
    break;
  }
  return s.str();
}

std::vector<Row> parse_file(const std::string &path, std::string *error)
{
  std::vector<Row> rows;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open";
    return rows;
  }
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    lineno++;
    if (line.empty() || line[0] == '#')
      continue;
    Row row;
    row.file = base_name(path);
    row.line = lineno;
    std::string why;
    if (!parse_line(line, &row, &why)) {
      *error = row.where() + ": " + why;
      return rows;
    }
    rows.push_back(row);
  }
  return rows;
}

std::vector<std::string> list_files(const std::string &dir)
{
  std::vector<std::string> files;
  GDir *d = g_dir_open(dir.c_str(), 0, nullptr);
  if (d == nullptr)
    return files;
  while (const char *name = g_dir_read_name(d))
    if (g_str_has_suffix(name, ".txt"))
      files.push_back(dir + "/" + name);
  g_dir_close(d);
  std::sort(files.begin(), files.end());
  return files;
}

} // namespace corpus
