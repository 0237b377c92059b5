/* trawl match — test paths against one pattern without touching the disk.
 *
 *   trawl match [--dialect D] [--icase] [-t f|d] [-0] PATTERN [PATH...]
 *
 * Paths come from the arguments, or from stdin (one per line, or
 * NUL-terminated with -0) when the only PATH is '-' or none is given. The
 * matching ones are printed in input order, terminated like the input. */
#define _POSIX_C_SOURCE 200809L /* getdelim */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct match_run {
  const TrawlPattern *pattern;
  TrawlEntryType type; /* every path's, or unknown */
  char terminator;
  size_t matched;
};

static void
check_path(struct match_run *run, const char *path, size_t len)
{
  if (trawl_pattern_match_entry(run->pattern, path, len, run->type)) {
    fwrite(path, 1, len, stdout);
    putchar(run->terminator);
    run->matched++;
  }
}

static bool
check_stdin(struct match_run *run)
{
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getdelim(&line, &cap, run->terminator, stdin)) > 0) {
    if (line[n - 1] == run->terminator)
      n--;
    check_path(run, line, (size_t)n);
  }
  bool ok = !ferror(stdin);
  free(line);
  if (!ok)
    perror("trawl: reading paths from stdin");
  return ok;
}

int
cli_match(int argc, char **argv)
{
  char *dialect_name = NULL, *type_name = NULL;
  gboolean icase = FALSE, nul = FALSE;
  GOptionEntry entries[] = {
    {"dialect", 0, 0, G_OPTION_ARG_STRING, &dialect_name,
     "Pattern dialect: trawl, git, cmake or bazel", "D"},
    {"icase", 'i', 0, G_OPTION_ARG_NONE, &icase, "ASCII case-insensitive", NULL},
    {"type", 't', 0, G_OPTION_ARG_STRING, &type_name,
     "Match every PATH as a file (f) or a directory (d); default: untyped", "f|d"},
    {"print0", '0', 0, G_OPTION_ARG_NONE, &nul,
     "Paths on stdin and output are NUL-terminated", NULL},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionContext *ctx = g_option_context_new("PATTERN [PATH...|-]");
  g_option_context_set_summary(ctx, "Print the PATHs that PATTERN matches.");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *error = NULL;
  int status = EXIT_USAGE;
  TrawlPattern *p = NULL;
  TrawlDialect dialect = TRAWL_DIALECT_TRAWL;

  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "trawl match: %s\n", error->message);
    goto out;
  }
  /* GOption leaves "--" in place when an argument after it starts with
   * '-'; it only ends the options, it is never the pattern. */
  if (argc >= 2 && strcmp(argv[1], "--") == 0) {
    argv[1] = argv[0];
    argv++;
    argc--;
  }
  if (argc < 2) {
    fprintf(stderr, "trawl match: a PATTERN is required\n");
    goto out;
  }
  if (dialect_name && !cli_parse_dialect(dialect_name, &dialect))
    goto out;
  TrawlEntryType type = TRAWL_ENTRY_UNKNOWN;
  if (type_name) {
    if (strcmp(type_name, "f") == 0 || strcmp(type_name, "file") == 0) {
      type = TRAWL_ENTRY_FILE;
    } else if (strcmp(type_name, "d") == 0 || strcmp(type_name, "dir") == 0 ||
               strcmp(type_name, "directory") == 0) {
      type = TRAWL_ENTRY_DIR;
    } else {
      fprintf(stderr, "trawl match: --type: unknown type \"%s\" (f or d)\n", type_name);
      goto out;
    }
  }
  const char *text = argv[1];
  p = trawl_pattern_compile(text, strlen(text), dialect,
                            icase ? TRAWL_PATTERN_ICASE : 0, &error);
  if (p == NULL) {
    cli_report_pattern_error(text, error);
    goto out;
  }

  static char buf[1 << 16];
  setvbuf(stdout, buf, _IOFBF, sizeof buf);
  struct match_run run = {p, type, nul ? '\0' : '\n', 0};
  bool from_stdin = argc == 2 || (argc == 3 && strcmp(argv[2], "-") == 0);
  if (from_stdin) {
    if (!check_stdin(&run)) {
      status = EXIT_IO;
      goto out;
    }
  } else {
    for (int i = 2; i < argc; i++)
      check_path(&run, argv[i], strlen(argv[i]));
  }
  if (fflush(stdout) != 0) {
    cli_report_write_error(errno);
    status = EXIT_IO;
    goto out;
  }
  status = run.matched ? EXIT_OK : EXIT_NONE;
out:
  trawl_pattern_free(p);
  g_clear_error(&error);
  g_free(dialect_name);
  g_free(type_name);
  g_option_context_free(ctx);
  return status;
}
