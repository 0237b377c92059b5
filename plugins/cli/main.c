/* trawl — entry point: dispatch to a subcommand (cli.h). */
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
  "  batch [OPTIONS] QUERIES|-\n"
  "        answer many queries, given as JSON lines (root, include, exclude,\n"
  "        ...), with one walk per root; prints one JSON line of paths per\n"
  "        query; see trawl batch --help\n"
  "  check [--touch STAMP | --bump STAMP] --cache FILE...\n"
  "        re-validate result caches (trawl --cache, trawl batch --cache);\n"
  "        exit 1 and print what changed if an answer did, else 0\n"
  "  meson [OPTIONS] PATTERN... [--list PATTERN...]...\n"
  "        source lists for Meson's run_command(); see docs/meson.md\n"
  "  bazel-index --root DIR --state NAME\n"
  "        what git ignores in a Bazel workspace, for trawl_glob() (run by\n"
  "        its tools/bazel wrapper); see docs/bazel.md\n"
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
  /* The environment's switch for the caches' watchman back-end: a value
   * that is none of its own is a usage error, whatever the command. */
  GError *error = NULL;
  if (!trawl_cache_watchman_setting(&error)) {
    fprintf(stderr, "trawl: %s\n", error->message);
    g_error_free(error);
    return EXIT_USAGE;
  }
  /* "Usage: trawl match ..." in --help (GLib names the program after
   * argv[0] unless told): the man pages are made from --help. */
  static const char *const commands[] = {"match", "batch", "explain", "check", "meson",
                                         "bazel-index"};
  g_set_prgname("trawl");
  for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
    if (strcmp(cmd, commands[i]) == 0) {
      char *name = g_strconcat("trawl ", cmd, NULL);
      g_set_prgname(name);
      g_free(name);
    }
  if (strcmp(cmd, "match") == 0)
    return cli_match(argc - 1, argv + 1);
  if (strcmp(cmd, "batch") == 0)
    return cli_batch(argc - 1, argv + 1);
  if (strcmp(cmd, "explain") == 0)
    return cli_explain(argc - 1, argv + 1);
  if (strcmp(cmd, "check") == 0)
    return cli_check(argc - 1, argv + 1);
  if (strcmp(cmd, "meson") == 0)
    return cli_meson(argc - 1, argv + 1);
  if (strcmp(cmd, "bazel-index") == 0)
    return cli_bazel_index(argc - 1, argv + 1);
  return cli_walk(argc, argv);
}
