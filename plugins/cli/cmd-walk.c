/* trawl [OPTIONS] PATTERN... — the default command: walk a root and print
 * the paths that the patterns select (docs/cli.md is its reference).
 *
 * Shape: parse the options, compile every pattern and exclude (all errors
 * are reported before exiting), check the root, then print each result
 * from the walker's callback: sorted, on this thread as the walk goes
 * (trawl_walker_run_sorted), or (--unsorted) from the walker's threads under
 * the output's mutex. Problems the walk survived are
 * printed afterwards; --stats reads the walker's counters and a monotonic
 * clock.
 */
#define _POSIX_C_SOURCE 200809L /* getcwd, stat */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"
#include "trawl/cache.h"
#include "trawl/plan.h"
#include "trawl/walk.h"

/* -d and -j when not given. */
#define UNSET_NUMBER INT_MIN

static const char walk_description[] =
  "Prints the paths below the root that any PATTERN matches and no --exclude\n"
  "does, relative to the root, sorted bytewise, one per line. Quote the\n"
  "patterns so the shell does not expand them; `trawl '**'` lists everything.\n"
  "A PATTERN that starts with '-' goes after '--'.\n"
  "\n"
  "Inside a git work tree, what .gitignore, .git/info/exclude and git's\n"
  "excludes file leave out is left out, and .ignore files apply anywhere;\n"
  "-I reads none (docs/ignore.md). `trawl explain PATTERN... -- PATH...`\n"
  "says why a path is or is not printed.\n"
  "\n"
  "Output formats (docs/cli.md):\n"
  "  lines  one path per line; a path with a control byte, '\"' or '\\' is\n"
  "         printed as a C string in double quotes, as git quotes paths\n"
  "  null   each path followed by a NUL byte (same as -0)\n"
  "  json   {\"root\": \"...\", \"paths\": [...]}; bytes that are not UTF-8\n"
  "         are \\udcXX escapes (Python's surrogateescape)\n"
  "\n"
  "Exit status: 0 the walk completed (also when nothing matched); 2 usage\n"
  "error, bad pattern or missing root; 3 an I/O error stopped the walk, or\n"
  "--strict and a problem (an unreadable directory, a link loop) was reported.\n"
  "\n"
  "Other commands: `trawl match --help`, `trawl help`.";

static const char explain_description[] =
  "Takes the options of the walk (trawl --help) and its patterns, then '--'\n"
  "and the paths to explain, relative to the root. For each PATH prints\n"
  "whether the walk would print it and why: the include that matched, or\n"
  "the first check that left it out (no include, an --exclude, an ignore\n"
  "rule, hidden, a directory above never opened, depth, type), and the\n"
  "ignore rule that decided it as FILE:LINE:PATTERN (as git check-ignore -v).\n"
  "--format json prints one JSON object per path (docs/cli.md).\n"
  "\n"
  "Exit status: 0 every PATH would be printed; 1 one would not; 2 usage error.";

/* The command line, as GOption fills it. */
struct walk_args {
  char *root;
  char **excludes;
  gboolean hidden, no_ignore, no_require_git, follow;
  char **ignore_files;
  bool explain;        /* `trawl explain`: PATHS are explained, not walked */
  char **paths;
  int n_paths;
  char **types;
  int max_depth;
  int threads;
  gboolean print0, unsorted, absolute, strict, stats, version;
  char *dialect;
  char *format;
  char *cache;         /* --cache FILE */
};

/* One run: what the callback and the reports need. */
struct walk_run {
  output out;
  GPtrArray *patterns; /* TrawlPattern *, includes then excludes */
  TrawlWalker *walker;
};

static bool
parse_types(char **values, unsigned *mask)
{
  *mask = 0;
  for (char **v = values; v && *v; v++) {
    char **names = g_strsplit(*v, ",", -1);
    for (char **name = names; *name; name++) {
      const unsigned type = cli_entry_type(*name, strlen(*name));
      if (type == 0) {
        fprintf(stderr, "trawl: unknown --type '%s' (expected " CLI_ENTRY_TYPES_SHOWN ")\n",
                *name);
        g_strfreev(names);
        return false;
      }
      *mask |= type;
    }
    g_strfreev(names);
  }
  if (*mask == 0)
    *mask = TRAWL_ENTRY_FILE;
  return true;
}

static bool
parse_format(const struct walk_args *args, OutputFormat *format)
{
  *format = args->print0 ? OUTPUT_NUL : OUTPUT_LINES;
  if (args->format == NULL)
    return true;
  static const struct {
    const char *name;
    OutputFormat format;
  } table[] = {
    {"lines", OUTPUT_LINES},
    {"null", OUTPUT_NUL},
    {"json", OUTPUT_JSON},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(table); i++) {
    if (strcmp(args->format, table[i].name) == 0) {
      if (args->print0 && table[i].format != OUTPUT_NUL) {
        fprintf(stderr, "trawl: -0 conflicts with --format %s\n", args->format);
        return false;
      }
      *format = table[i].format;
      return true;
    }
  }
  fprintf(stderr, "trawl: unknown --format '%s' (expected lines, null or json)\n",
          args->format);
  return false;
}

/* A -d or -j value: UNSET_NUMBER gives FALLBACK, a negative is an error. */
static bool
parse_count(int value, const char *option, int fallback, int *out)
{
  if (value == UNSET_NUMBER) {
    *out = fallback;
    return true;
  }
  if (value < 0) {
    fprintf(stderr, "trawl: %s must be 0 or more, not %d\n", option, value);
    return false;
  }
  *out = value;
  return true;
}

/* Build the walker's options from the command line. */
static bool
walk_options(const struct walk_args *args, TrawlDialect dialect,
             TrawlWalkOptions *options)
{
  trawl_walk_options_init(options);
  /* Hidden entries are a rule of the trawl dialect; the compatibility
   * dialects (git, cmake, bazel) decide about them in their patterns, as
   * the real tools do. */
  options->hidden = cli_hidden(args->hidden, dialect);
  options->follow = args->follow;
  options->ignore = args->no_ignore ? 0
                    : TRAWL_IGNORE_VCS | TRAWL_IGNORE_DOT |
                        (args->no_require_git ? TRAWL_IGNORE_NO_REQUIRE_GIT : 0);
  if (!parse_types(args->types, &options->types))
    return false;
  int depth, threads;
  if (!parse_count(args->max_depth, "--max-depth", -1, &depth) ||
      !parse_count(args->threads, "--threads", 0, &threads))
    return false;
  options->max_depth = depth;
  options->threads = (unsigned)threads;
  return true;
}

/* Compile TEXTS into RUN->patterns; every error is reported. */
static bool
compile_patterns(struct walk_run *run, char **texts, int n, TrawlDialect dialect)
{
  bool ok = true;
  for (int i = 0; i < n; i++) {
    GError *error = NULL;
    TrawlPattern *p = trawl_pattern_compile(texts[i], strlen(texts[i]), dialect,
                                            0, &error);
    if (p == NULL) {
      cli_report_pattern_error(texts[i], error);
      g_error_free(error);
      ok = false;
      continue;
    }
    g_ptr_array_add(run->patterns, p);
  }
  return ok;
}

/* A missing root is a usage error with a message that names it. */
static bool
check_root(const char *root)
{
  struct stat st;
  if (stat(root, &st) != 0) {
    fprintf(stderr, "trawl: root '%s': %s\n", root, strerror(errno));
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    fprintf(stderr, "trawl: root '%s' is not a directory\n", root);
    return false;
  }
  return true;
}

/* The current directory, or NULL with a message. */
static char *
current_dir(void)
{
  for (size_t size = 256;; size *= 2) {
    char *buf = g_malloc(size);
    if (getcwd(buf, size) != NULL)
      return buf;
    int err = errno;
    g_free(buf);
    if (err != ERANGE) {
      fprintf(stderr, "trawl: cannot get the current directory: %s\n", strerror(err));
      return NULL;
    }
  }
}

/* ROOT as an absolute path, without resolving symbolic links: the current
 * directory joined with ROOT, with empty and "." components dropped. ".."
 * is kept, so the path names what ROOT names even through a symlink. */
static char *
absolute_root(const char *root)
{
  GString *abs;
  if (root[0] == '/') {
    abs = g_string_new("/");
  } else {
    char *cwd = current_dir();
    if (cwd == NULL)
      return NULL;
    abs = g_string_new(cwd);
    g_free(cwd);
  }
  char **parts = g_strsplit(root, "/", -1);
  for (char **part = parts; *part; part++) {
    if (**part == '\0' || strcmp(*part, ".") == 0)
      continue;
    if (abs->str[abs->len - 1] != '/')
      g_string_append_c(abs, '/');
    g_string_append(abs, *part);
  }
  g_strfreev(parts);
  return g_string_free(abs, FALSE);
}

static bool
print_entry(const TrawlEntry *entry, void *data)
{
  struct walk_run *run = data;
  return output_path_locked(&run->out, entry->path, entry->len);
}

/* Sorted: called on this thread, in order, as the walk goes. */
static bool
print_sorted(const TrawlEntry *entry, void *data)
{
  struct walk_run *run = data;
  output_path(&run->out, entry->path, entry->len);
  return run->out.error == 0;
}

/* Microseconds as milliseconds. */
static double
ms(gint64 us)
{
  return (double)us / 1e3;
}

static void
report_stats(const TrawlWalker *walker, gint64 start, gint64 printed)
{
  TrawlWalkStats stats;
  trawl_walker_stats(walker, &stats);
  fprintf(stderr,
          "trawl: directories opened: %" G_GUINT64_FORMAT "\n"
          "trawl: directories pruned: %" G_GUINT64_FORMAT "\n"
          "trawl: entries seen:       %" G_GUINT64_FORMAT "\n"
          "trawl: results:            %" G_GUINT64_FORMAT "\n"
          "trawl: threads used:       %u\n"
          "trawl: milliseconds:       %.3f\n",
          stats.dirs_opened, stats.dirs_pruned, stats.entries_seen, stats.results,
          stats.threads_used, ms(printed - start));
}

/* ---- trawl explain ---- */

static const char *const reason_names[] = {
  [TRAWL_EXPLAIN_INCLUDED] = "included",
  [TRAWL_EXPLAIN_NOT_INCLUDED] = "not-included",
  [TRAWL_EXPLAIN_EXCLUDED] = "excluded",
  [TRAWL_EXPLAIN_IGNORED] = "ignored",
  [TRAWL_EXPLAIN_HIDDEN] = "hidden",
  [TRAWL_EXPLAIN_PRUNED] = "pruned",
  [TRAWL_EXPLAIN_DEPTH] = "depth",
  [TRAWL_EXPLAIN_TYPE] = "type",
  [TRAWL_EXPLAIN_MISSING] = "missing",
  [TRAWL_EXPLAIN_GIT_DIR] = "git-dir",
  [TRAWL_EXPLAIN_LINK] = "link",
  [TRAWL_EXPLAIN_OUTSIDE] = "outside",
};

static const char *
type_name(unsigned type)
{
  return type == TRAWL_ENTRY_DIR ? "dir" : type == TRAWL_ENTRY_SYMLINK ? "symlink"
         : type == TRAWL_ENTRY_FILE ? "file" : "missing";
}

static void
json_field(GString *out, const char *key, const char *value)
{
  g_string_append_printf(out, ", \"%s\": ", key);
  if (value)
    output_json_string(out, value, strlen(value));
  else
    g_string_append(out, "null");
}

static const char *
pattern_text(const TrawlPattern *p)
{
  return p ? trawl_pattern_text(p, NULL) : NULL;
}

static void
explain_json(GString *out, const char *path, const TrawlExplanation *e)
{
  g_string_append(out, "{\"path\": ");
  output_json_string(out, path, strlen(path));
  g_string_append_printf(out, ", \"selected\": %s, \"type\": \"%s\", \"reason\": \"%s\"",
                         e->selected ? "true" : "false", type_name(e->type),
                         reason_names[e->reason]);
  g_string_append(out, ", \"ignore\": ");
  if (e->ignore_source) {
    g_string_append(out, "{\"source\": ");
    output_json_string(out, e->ignore_source, strlen(e->ignore_source));
    g_string_append_printf(out, ", \"line\": %u, \"pattern\": ", e->ignore_line);
    output_json_string(out, e->ignore_pattern, strlen(e->ignore_pattern));
    g_string_append_printf(out, ", \"negated\": %s", e->ignore_negated ? "true" : "false");
    json_field(out, "match", e->ignore_match);
    g_string_append_c(out, '}');
  } else {
    g_string_append(out, "null");
  }
  g_string_append_printf(out, ", \"tracked\": %s", e->tracked ? "true" : "false");
  json_field(out, "include", pattern_text(e->include));
  json_field(out, "exclude", pattern_text(e->exclude));
  json_field(out, "directory", e->directory);
  g_string_append(out, ", \"outside\": ");
  if (e->outside_link) {
    g_string_append(out, "{\"link\": ");
    output_json_string(out, e->outside_link, strlen(e->outside_link));
    json_field(out, "target", e->outside_target);
    g_string_append_c(out, '}');
  } else {
    g_string_append(out, "null");
  }
  g_string_append(out, "}\n");
}

static void
explain_lines(GString *out, const char *path, const TrawlExplanation *e)
{
  output_lines_string(out, path, strlen(path));
  if (e->selected) {
    g_string_append(out, ": selected, include ");
    const char *inc = pattern_text(e->include);
    if (inc)
      output_lines_string(out, inc, strlen(inc));
    else
      g_string_append(out, "(none given: everything)");
  } else {
    g_string_append(out, ": not selected, ");
    switch (e->reason) {
    case TRAWL_EXPLAIN_NOT_INCLUDED: g_string_append(out, "no include matches"); break;
    case TRAWL_EXPLAIN_EXCLUDED:
      g_string_append(out, "excluded by ");
      output_lines_string(out, pattern_text(e->exclude), strlen(pattern_text(e->exclude)));
      break;
    case TRAWL_EXPLAIN_IGNORED: g_string_append(out, "ignored"); break;
    case TRAWL_EXPLAIN_HIDDEN: g_string_append(out, "hidden (-H shows it)"); break;
    case TRAWL_EXPLAIN_PRUNED: g_string_append(out, "never opened: no include can match below"); break;
    case TRAWL_EXPLAIN_DEPTH: g_string_append(out, "deeper than --max-depth"); break;
    case TRAWL_EXPLAIN_TYPE: g_string_append_printf(out, "a %s, not a type asked for (-t)", type_name(e->type)); break;
    case TRAWL_EXPLAIN_MISSING: g_string_append(out, "no such file"); break;
    case TRAWL_EXPLAIN_GIT_DIR: g_string_append(out, "a repository's .git"); break;
    case TRAWL_EXPLAIN_LINK: g_string_append(out, "below a symbolic link that is not followed (-L)"); break;
    case TRAWL_EXPLAIN_OUTSIDE: g_string_append(out, "not below the root ('..'): a walk never goes there"); break;
    case TRAWL_EXPLAIN_INCLUDED: break;
    }
    if (e->directory) {
      g_string_append(out, " (at directory ");
      output_lines_string(out, e->directory, strlen(e->directory));
      g_string_append_c(out, ')');
    }
  }
  if (e->outside_link) {
    g_string_append(out, "; through ");
    output_lines_string(out, e->outside_link, strlen(e->outside_link));
    g_string_append(out, ", a link that leaves the root (to ");
    output_lines_string(out, e->outside_target, strlen(e->outside_target));
    g_string_append_c(out, ')');
  }
  if (e->tracked)
    g_string_append(out, "; tracked: not ignored");
  if (e->ignore_source) {
    g_string_append(out, e->tracked         ? " (else ignore rule "
                         : e->ignore_negated ? "; re-included by "
                                             : "; ignore rule ");
    output_lines_string(out, e->ignore_source, strlen(e->ignore_source));
    g_string_append_printf(out, ":%u:", e->ignore_line);
    output_lines_string(out, e->ignore_pattern, strlen(e->ignore_pattern));
    if (e->ignore_match && strcmp(e->ignore_match, "") != 0) {
      g_string_append(out, " matched ");
      output_lines_string(out, e->ignore_match, strlen(e->ignore_match));
    }
    if (e->tracked)
      g_string_append_c(out, ')');
  }
  g_string_append_c(out, '\n');
}

/* `trawl explain`: one answer per path; exit 0 when every path is selected,
 * 1 when one is not. */
static int
explain_paths(struct walk_run *run, const struct walk_args *args, int n_patterns)
{
  (void)n_patterns;
  bool json = args->format && strcmp(args->format, "json") == 0;
  if (args->format && !json && strcmp(args->format, "lines") != 0) {
    fprintf(stderr, "trawl: explain prints lines or json, not '%s'\n", args->format);
    return EXIT_USAGE;
  }
  if (args->n_paths == 0) {
    fprintf(stderr, "trawl: explain needs PATH arguments after '--' (see trawl explain --help)\n");
    return EXIT_USAGE;
  }
  GString *out = g_string_new(NULL);
  int status = EXIT_OK;
  for (int i = 0; i < args->n_paths; i++) {
    TrawlExplanation e;
    GError *error = NULL;
    if (!trawl_walker_explain(run->walker, args->paths[i], &e, &error)) {
      cli_print_message(error->message);
      g_error_free(error);
      g_string_free(out, TRUE);
      return EXIT_USAGE;
    }
    if (json)
      explain_json(out, args->paths[i], &e);
    else
      explain_lines(out, args->paths[i], &e);
    if (!e.selected)
      status = EXIT_NONE;
    trawl_explanation_clear(&e);
  }
  fwrite(out->str, 1, out->len, stdout);
  fflush(stdout);
  g_string_free(out, TRUE);
  return status;
}

/* Walk and print; returns the exit code. */
static int
walk_and_print(struct walk_run *run, const struct walk_args *args)
{
  GError *error = NULL;
  gint64 start = g_get_monotonic_time();
  bool ran;
  if (args->unsorted)
    ran = trawl_walker_run(run->walker, print_entry, run, &error);
  else
    ran = trawl_walker_run_sorted(run->walker, print_sorted, run, &error);
  /* A walk that could not run found nothing: no document that says so. */
  bool written = true;
  if (ran)
    written = output_end(&run->out);
  else
    output_abort(&run->out);
  gint64 printed = g_get_monotonic_time();

  int status = EXIT_OK;
  if (!ran) {
    g_assert(error != NULL);
    cli_print_message(error->message);
    bool root = g_error_matches(error, TRAWL_WALK_ERROR, TRAWL_WALK_ERROR_ROOT);
    status = root ? EXIT_USAGE : EXIT_IO;
    g_error_free(error);
  }
  unsigned problems = cli_report_walker_problems(run->walker);
  if (!written) {
    cli_report_write_error(run->out.error);
    status = EXIT_IO;
  }
  if (status == EXIT_OK && args->strict && problems > 0)
    status = EXIT_IO;
  if (args->stats)
    report_stats(run->walker, start, printed);
  return status;
}

struct cached_print {
  struct walk_run *run;
  guint64 count;
};

static void
print_cached(size_t q, const char *path, size_t len, void *data)
{
  (void)q;
  struct cached_print *p = data;
  p->count++;
  if (p->run->out.error == 0)
    output_path(&p->run->out, path, len);
}

/* The walk through a plan of one query that keeps its results in the
 * cache file ARGS->cache: printed as they come, as a walk's are, not kept
 * in the plan. */
static int
walk_cached(struct walk_run *run, const struct walk_args *args, int n, const char *root,
            const TrawlWalkOptions *options)
{
  gint64 start = g_get_monotonic_time();
  TrawlPlan *plan = trawl_plan_new();
  TrawlQuery q = {.root = root,
                  .includes = (const TrawlPattern *const *)run->patterns->pdata,
                  .n_includes = (size_t)n,
                  .excludes = (const TrawlPattern *const *)run->patterns->pdata + n,
                  .n_excludes = run->patterns->len - (size_t)n,
                  .options = options};
  trawl_plan_add(plan, &q);
  TrawlCacheReport rep;
  GError *error = NULL;
  struct cached_print printer = {run, 0};
  bool ran = trawl_cache_run_each(plan, args->cache, 0, print_cached, &printer, &rep, &error);
  cli_report_cache(args->cache, &rep);
  int status = EXIT_OK;
  if (!ran) {
    output_abort(&run->out);
    cli_print_message(error->message);
    status = g_error_matches(error, TRAWL_WALK_ERROR, TRAWL_WALK_ERROR_ROOT) ? EXIT_USAGE : EXIT_IO;
    g_error_free(error);
  } else {
    if (!output_end(&run->out)) {
      cli_report_write_error(run->out.error);
      status = EXIT_IO;
    }
  }
  gint64 printed = g_get_monotonic_time();
  const GPtrArray *problems = trawl_plan_problems(plan, 0);
  for (unsigned i = 0; i < problems->len; i++)
    cli_print_message(((const GError *)problems->pdata[i])->message);
  if (status == EXIT_OK && args->strict && problems->len > 0)
    status = EXIT_IO;
  if (args->stats && trawl_plan_groups(plan) > 0) {
    /* The cache's counts: a run of an unchanged tree has no walk. */
    fprintf(stderr,
            "trawl: directories opened: %" G_GUINT64_FORMAT "\n"
            "trawl: directories reused: %" G_GUINT64_FORMAT "\n"
            "trawl: results:            %" G_GUINT64_FORMAT "\n"
            "trawl: cache:              %s%s\n"
            "trawl: milliseconds:       %.3f\n",
            rep.dirs_read, rep.dirs_reused, printer.count,
            rep.trusted ? "trusted" : "not trusted", rep.written ? ", written" : "",
            ms(printed - start));
    cli_report_watchman(NULL, &rep);
  }
  trawl_cache_report_clear(&rep);
  trawl_plan_free(plan);
  return status;
}

/* The walk with parsed options and the N PATTERNS; returns the exit code. */
static int
walk_command(const struct walk_args *args, char **patterns, int n)
{
  if (n == 0) {
    fprintf(stderr, "trawl: a PATTERN is required; `trawl '**'` lists every file "
                    "(see trawl --help)\n");
    return EXIT_USAGE;
  }
  TrawlDialect dialect = TRAWL_DIALECT_TRAWL;
  OutputFormat format;
  TrawlWalkOptions options;
  if ((args->dialect && !cli_parse_dialect(args->dialect, &dialect)) ||
      !parse_format(args, &format) || !walk_options(args, dialect, &options))
    return EXIT_USAGE;

  struct walk_run run = {
    .patterns = g_ptr_array_new_with_free_func((GDestroyNotify)trawl_pattern_free),
  };
  int n_excludes = args->excludes ? (int)g_strv_length(args->excludes) : 0;
  bool compiled = compile_patterns(&run, patterns, n, dialect);
  compiled = compile_patterns(&run, args->excludes, n_excludes, dialect) && compiled;
  const char *root = args->root ? args->root : ".";
  char *absolute = NULL;
  int status = EXIT_USAGE;
  if (!compiled || !check_root(root) ||
      (args->absolute && (absolute = absolute_root(root)) == NULL))
    goto out;

  if (args->cache && (args->ignore_files || args->explain || args->unsorted)) {
    fprintf(stderr, "trawl: --cache does not go with %s\n",
            args->explain ? "explain" : args->unsorted ? "--unsorted" : "--ignore-file");
    goto out;
  }
  run.walker = trawl_walker_new(&options);
  trawl_walker_add_root(run.walker, root);
  for (char **f = args->ignore_files; f && *f; f++) {
    GError *error = NULL;
    if (!trawl_walker_add_ignore_file(run.walker, *f, &error)) {
      fprintf(stderr, "trawl: --ignore-file %s\n", error->message);
      g_error_free(error);
      goto out;
    }
  }
  for (unsigned i = 0; i < run.patterns->len; i++) {
    if (i < (unsigned)n)
      trawl_walker_add_include(run.walker, run.patterns->pdata[i]);
    else
      trawl_walker_add_exclude(run.walker, run.patterns->pdata[i]);
  }

  if (args->explain) {
    status = explain_paths(&run, args, n);
    goto out;
  }

  /* With --absolute every path is preceded by "<absolute root>/" ("/" when
   * the root is "/"), and json's "root" is the absolute root. */
  const char *shown_root = absolute ? absolute : root;
  char *prefix = absolute == NULL ? g_strdup("")
                 : g_str_has_suffix(absolute, "/") ? g_strdup(absolute)
                 : g_strconcat(absolute, "/", NULL);
  output_init(&run.out, STDOUT_FILENO, format, prefix, strlen(prefix));
  g_free(prefix);
  /* Someone watching a terminal sees each result as it is found. */
  run.out.flush_each = args->unsorted && isatty(STDOUT_FILENO);
  output_begin(&run.out, shown_root, strlen(shown_root));
  status = args->cache ? walk_cached(&run, args, n, root, &options) : walk_and_print(&run, args);
  output_release(&run.out);

out:
  trawl_walker_free(run.walker);
  g_ptr_array_unref(run.patterns);
  g_free(absolute);
  return status;
}

/* The options whose value may be attached ("-j4", "-x*.o"). */
static const char short_with_value[] = "Cxtdj";
static const char *const long_with_value[] = {
  "--root", "--exclude", "--type", "--max-depth", "--threads", "--dialect", "--format",
  "--ignore-file", "--cache", NULL,
};

/* GOption leaves "--" among the arguments when one after it starts with
 * '-'; the first "--" only ends the options and is never a pattern. */
static void
drop_separator(int *argc, char **argv)
{
  for (int i = 1; i < *argc; i++) {
    if (strcmp(argv[i], "--") == 0) {
      memmove(argv + i, argv + i + 1, (size_t)(*argc - i - 1) * sizeof *argv);
      (*argc)--;
      return;
    }
  }
}

static int
walk_or_explain(int argc, char **argv, bool explain)
{
  struct walk_args args = {
    .max_depth = UNSET_NUMBER,
    .threads = UNSET_NUMBER,
    .explain = explain,
  };
  /* FILENAME arguments: GOption converts STRING ones from the locale's
   * charset and would refuse a root or pattern that is not UTF-8. */
  GOptionEntry entries[] = {
    {"root", 'C', 0, G_OPTION_ARG_FILENAME, &args.root,
     "Walk DIR and print paths relative to it (default .)", "DIR"},
    {"exclude", 'x', 0, G_OPTION_ARG_FILENAME_ARRAY, &args.excludes,
     "Leave out paths PATTERN matches, and directories it covers (repeatable)",
     "PATTERN"},
    {"hidden", 'H', 0, G_OPTION_ARG_NONE, &args.hidden,
     "Include hidden entries (names starting with '.')", NULL},
    {"no-ignore", 'I', 0, G_OPTION_ARG_NONE, &args.no_ignore,
     "Do not read ignore files (.gitignore, .ignore, info/exclude, the excludes file)", NULL},
    {"no-require-git", 0, 0, G_OPTION_ARG_NONE, &args.no_require_git,
     "Apply .gitignore files outside a git work tree too", NULL},
    {"ignore-file", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args.ignore_files,
     "Also apply the ignore file FILE (gitignore syntax, relative to the root; "
     "lowest precedence; repeatable)", "FILE"},
    {"follow", 'L', 0, G_OPTION_ARG_NONE, &args.follow,
     "Follow symbolic links (loops are detected and reported)", NULL},
    {"type", 't', 0, G_OPTION_ARG_STRING_ARRAY, &args.types,
     "Entry types to print: f file, d directory, l symlink; repeatable or "
     "comma-separated (default f)", "f|d|l"},
    {"max-depth", 'd', 0, G_OPTION_ARG_INT, &args.max_depth,
     "Print entries at most N levels below the root (1: its own entries)", "N"},
    {"threads", 'j', 0, G_OPTION_ARG_INT, &args.threads,
     "Use at most N threads (default: online CPUs; 1: serial)", "N"},
    {"print0", '0', 0, G_OPTION_ARG_NONE, &args.print0,
     "End each path with a NUL byte (--format null)", NULL},
    {"unsorted", 0, 0, G_OPTION_ARG_NONE, &args.unsorted,
     "Print paths as they are found, in no particular order", NULL},
    {"absolute", 0, 0, G_OPTION_ARG_NONE, &args.absolute,
     "Print absolute paths (the root's absolute path, then the path)", NULL},
    {"dialect", 0, 0, G_OPTION_ARG_STRING, &args.dialect,
     "Pattern dialect: trawl (default), git, cmake or bazel", "D"},
    {"format", 0, 0, G_OPTION_ARG_STRING, &args.format,
     "Output format: lines (default), null or json", "F"},
    {"strict", 0, 0, G_OPTION_ARG_NONE, &args.strict,
     "Exit 3 if a problem was reported (unreadable directory, link loop)", NULL},
    {"stats", 0, 0, G_OPTION_ARG_NONE, &args.stats,
     "Print walk counters and times to stderr", NULL},
    {"cache", 0, 0, G_OPTION_ARG_FILENAME, &args.cache,
     "Keep the results in FILE and, next time, read only the directories that "
     "changed since (docs/cache.md)", "FILE"},
    {"version", 0, 0, G_OPTION_ARG_NONE, &args.version, "Print the version", NULL},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionContext *ctx = g_option_context_new(explain ? "PATTERN... -- PATH..." : "PATTERN...");
  g_option_context_set_summary(ctx, explain
    ? "Say for each PATH whether `trawl [OPTIONS] PATTERN...` would print it, and why."
    : "Find the files below a root that the patterns match.");
  g_option_context_set_description(ctx, explain ? explain_description : walk_description);
  g_option_context_add_main_entries(ctx, entries, NULL);

  GPtrArray *owned = g_ptr_array_new_with_free_func(g_free);
  char **split = cli_split_attached(&argc, argv, short_with_value, long_with_value, owned);
  char **rest = split;
  if (explain) {
    /* The paths are everything after the first "--"; patterns come before. */
    for (int i = 1; i < argc; i++) {
      if (strcmp(split[i], "--") == 0) {
        args.paths = split + i + 1;
        args.n_paths = argc - i - 1;
        split[i] = NULL;
        argc = i;
        break;
      }
    }
  }
  GError *error = NULL;
  int status = EXIT_USAGE;
  if (!g_option_context_parse(ctx, &argc, &rest, &error)) {
    fprintf(stderr, "trawl: %s (see trawl --help)\n", error->message);
    g_error_free(error);
  } else if (args.version) {
    printf("trawl %s\n", trawl_version());
    status = EXIT_OK;
  } else {
    drop_separator(&argc, rest);
    status = walk_command(&args, rest + 1, argc - 1);
  }
  g_free(args.root);
  g_free(args.cache);
  g_strfreev(args.excludes);
  g_strfreev(args.ignore_files);
  g_strfreev(args.types);
  g_free(args.dialect);
  g_free(args.format);
  g_option_context_free(ctx);
  g_free(split);
  g_ptr_array_unref(owned);
  return status;
}

int
cli_walk(int argc, char **argv)
{
  return walk_or_explain(argc, argv, false);
}

int
cli_explain(int argc, char **argv)
{
  return walk_or_explain(argc, argv, true);
}
