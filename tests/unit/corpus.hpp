// Reader for the matcher corpus, tests/corpus/*.txt (format in
// tests/corpus/README.md; tests/unit/trawl_corpus.py reads the same files for
// the CLI runner and the tool checker).
#ifndef TRAWL_TESTS_CORPUS_HPP
#define TRAWL_TESTS_CORPUS_HPP

#include <string>
#include <vector>

#include "trawl/pattern.h"

namespace corpus {

enum class Kind { Match, Error, Prune, Facts, Escape };

// One line of a corpus file. Every byte string is decoded (escapes resolved).
struct Row {
  std::string file; // base name, for messages
  int line = 0;
  Kind kind = Kind::Match;
  TrawlDialect dialect = TRAWL_DIALECT_TRAWL;
  unsigned flags = 0;
  std::string dialect_name;
  std::string pattern;
  // Match / Prune: the path or directory and the expected answer. Escape:
  // the path PATTERN is the escape of (expected: yes, it matches).
  std::string path;
  bool expected = false;
  // Match: the path's type when the row gives one (file, dir), else unknown.
  TrawlEntryType type = TRAWL_ENTRY_UNKNOWN;
  // Error: the byte offset and a substring of the message.
  long offset = -1;
  std::string reason;
  // Facts: the key and its values.
  std::string key;
  std::vector<std::string> values;

  // "file.txt:12" for failure messages.
  std::string where() const;
  // The row as written in the corpus (escaped), for failure messages.
  std::string describe() const;
};

// Parse one corpus file; on a malformed line, *ERROR is set to
// "file:line: reason" and the rows read so far are returned.
std::vector<Row> parse_file(const std::string &path, std::string *error);

// The *.txt files of DIR, sorted by name.
std::vector<std::string> list_files(const std::string &dir);

// Escape bytes for a message the way the corpus writes them.
std::string escape(const std::string &bytes);

} // namespace corpus

#endif
