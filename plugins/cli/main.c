/* trawl — entry point: dispatch to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
  "Usage: trawl [OPTIONS] PATTERN...\n"
  "       trawl COMMAND [OPTIONS] ...\n"
  "\n"
  "  trawl [OPTIONS] PATTERN...\n"
  "        print the paths below the root (-C DIR, default .) that a PATTERN\n"
  "        matches, sorted; `trawl '**'` lists every file; see trawl --help\n"
  "\n"
  "Commands:\n"
  "  match [--dialect D] [--icase] [-0] PATTERN [PATH...|-]\n"
  "        print the PATHs (or lines of stdin, with '-') that PATTERN matches;\n"
  "        exit 0 if any matched, 1 if none, 2 for a bad pattern\n"
  "  explain [OPTIONS] PATTERN... -- PATH...\n"
  "        say whether the walk would print each PATH, and why (which include,\n"
  "        exclude or ignore rule decided); see trawl explain --help\n"
  "  help  show this help\n"
  "\n"
  "Options:\n"
  "  -h, --help     show the options of the walk (trawl PATTERN...)\n"
  "  --version      print the version\n"
  "\n"
  "Dialects: trawl (default), git, cmake, bazel; see docs/patterns.md.\n"
  "The command is docs/cli.md.\n";

bool
cli_parse_dialect(const char *name, TrawlDialect *out)
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
  for (size_t i = 0; i < G_N_ELEMENTS(table); i++) {
    if (strcmp(name, table[i].name) == 0) {
      *out = table[i].dialect;
      return true;
    }
  }
  fprintf(stderr, "trawl: unknown dialect '%s' (expected trawl, git, cmake or bazel)\n",
          name);
  return false;
}

void
cli_report_pattern_error(const char *pattern, const GError *error)
{
  fprintf(stderr, "trawl: %s\n", error->message);
  gssize off = trawl_pattern_error_offset(error);
  size_t len = strlen(pattern);
  /* A caret line only helps when the pattern prints as one plain line. */
  bool plain = len <= 120 && off >= 0 && (size_t)off <= len;
  for (size_t i = 0; plain && i < len; i++)
    plain = (unsigned char)pattern[i] >= 0x20 && (unsigned char)pattern[i] < 0x7f;
  if (plain)
    fprintf(stderr, "  %s\n  %*s^\n", pattern, (int)off, "");
}

int
main(int argc, char **argv)
{
  if (argc < 2) {
    fputs(usage, stderr);
    return EXIT_USAGE;
  }
  /* Anything but a known command, an option included, is the walk:
   * `trawl -H '*.c'`, `trawl --help`. A pattern spelled like a command
   * goes after "--" (`trawl -- match`). */
  const char *cmd = argv[1];
  if (strcmp(cmd, "help") == 0) {
    fputs(usage, stdout);
    return EXIT_OK;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("trawl %s\n", trawl_version());
    return EXIT_OK;
  }
  if (strcmp(cmd, "match") == 0)
    return cli_match(argc - 1, argv + 1);
  if (strcmp(cmd, "explain") == 0)
    return cli_explain(argc - 1, argv + 1);
  return cli_walk(argc, argv);
}
