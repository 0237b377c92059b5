/* trawl meson — source discovery for Meson (docs/meson.md is its
 * reference).
 *
 *   trawl meson [--cache FILE] [-j N] LIST [--list LIST]...
 *   trawl meson --postconf [--floor]          (meson-postconf.c)
 *   trawl meson --check CHECK-OPTIONS...      (the check edge's command)
 *
 * Meson runs discovery with run_command() while it configures, in the
 * calling meson.build's directory. Each LIST is one query — patterns,
 * excludes, options, an optional -C DIR — and all of them go into one plan,
 * so lists over the same directory share one walk, through a result cache
 * in the build directory. The answer is text for Meson's string methods,
 * Meson having no reader for anything richer: each list's paths, relative
 * to the calling directory, joined by '\n'; the lists joined by NUL. So
 * `files(out.split('\n'))` takes one list, `out.split('\0')` parts several.
 *
 * Meson cannot carry every file name. It decodes a command's output as
 * UTF-8 with universal newlines, turns '\' into '/', and writes '|' into
 * build.ninja unescaped (tests/meson-plugin checks each against Meson
 * itself). A matching name it cannot carry is an error that names the
 * file, and then nothing is printed: a list never silently lacks a file.
 * Every other byte goes through as it is — Meson's strings are data, not
 * code, and Meson quotes names for Ninja and the shell itself. An empty
 * list is an error too unless the list says --allow-empty: Meson's
 * `''.split('\n')` is [''], which files() refuses, and a pattern that
 * finds nothing is more often a typo than an intent.
 *
 * Every cache used while Meson configures is listed in the registry
 * (meson-registry.c) under the configure run's id, so that the postconf step
 * wires a `trawl check` of exactly those caches in front of Meson's own
 * check of build.ninja.
 */
#define _GNU_SOURCE /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cli/check-labels.h"
#include "../cli/cli.h"
#include "meson-plugin.h"
#include "trawl/cache.h"
#include "trawl/plan.h"

/* Bad names reported one by one before the rest is only counted. */
#define SHOWN_BAD_NAMES_MAX 50

static const char meson_usage[] =
  "Usage: trawl meson [--cache FILE] [-j N] LIST [--list LIST]...\n"
  "       trawl meson --postconf [--floor]\n"
  "       trawl meson --check [TRAWL CHECK OPTIONS]\n"
  "\n"
  "Source discovery for Meson, run from a meson.build with run_command():\n"
  "\n"
  "  r = run_command(trawl, 'meson', 'src/**/*.c', '-x', '**/test/**', check : false)\n"
  "  assert(r.returncode() == 0, r.stderr())\n"
  "  srcs = files(r.stdout().split('\\n'))\n"
  "\n"
  "A LIST is PATTERN... with its own options; --list starts the next one:\n"
  "  -x, --exclude PATTERN   leave out what PATTERN matches (repeatable)\n"
  "  -C, --root DIR          walk DIR, relative to the calling directory;\n"
  "                          paths are printed as DIR/PATH\n"
  "  -H, --hidden            visit hidden entries\n"
  "  -I, --no-ignore         read no ignore file (.gitignore, .ignore)\n"
  "  -L, --follow            follow symbolic links\n"
  "  --dialect D             trawl (default), git, cmake or bazel\n"
  "  --allow-empty           an empty list is not an error\n"
  "  --                      the rest of this list is patterns\n"
  "Options for all lists:\n"
  "  --cache FILE            the result cache (default: in the build directory)\n"
  "  -j, --threads N         at most N threads (default: online CPUs)\n"
  "  --stats                 print the lists, walks and directories read to stderr\n"
  "\n"
  "Prints each list's paths, relative to the calling directory, sorted,\n"
  "joined by '\\n'; several lists are joined by NUL (r.stdout().split('\\0')).\n"
  "Meson's build directory is left out, and so is the project's subprojects\n"
  "directory (subproject_dir), whose files Meson refuses, unless a pattern\n"
  "starts with its path ('subprojects/*.wrap') or -C is in it.\n"
  "A matching file whose name Meson cannot carry (not UTF-8, a newline, a\n"
  "carriage return, '\\' or '|') is an error naming it; so is an empty list\n"
  "without --allow-empty. Exit status: 0 answered; 2 usage error, bad\n"
  "pattern, missing root, a name Meson cannot carry, an empty list; 3 the\n"
  "output could not be written.\n"
  "\n"
  "--postconf, from meson.add_postconf_script(trawl, 'meson', '--postconf'),\n"
  "makes every ninja run re-check the lists first (docs/meson.md); that\n"
  "check is --check, `trawl check` with exit 1 (a list changed) made 0.\n";

/* One LIST of the command line. */
struct list {
  unsigned number;           /* 1-based, for messages */
  const char *dir;           /* -C DIR as given, or NULL */
  char *dialect_name;        /* --dialect, or NULL */
  gboolean hidden, no_ignore, follow, allow_empty;
  GPtrArray *written;        /* const char *, the list's arguments as written (argv) */
  GPtrArray *include_texts;  /* const char *, borrowed from argv */
  GPtrArray *exclude_texts;
  GPtrArray *includes;       /* TrawlPattern *, owned */
  GPtrArray *excludes;
  TrawlWalkOptions options;
  char *root;                /* the directory walked */
  GString *prefix;           /* printed before each path: "" or "DIR/" */
  GString *out;              /* the answer: paths joined by '\n' */
  size_t count;
};

struct discovery {
  GPtrArray *lists;          /* struct list *, in order */
  char *cache;               /* --cache FILE, or NULL */
  int threads;
  bool stats;                /* --stats */
  gint64 start;              /* monotonic, at the start of the command */
  GString *bad;              /* messages about names Meson cannot carry */
  size_t n_bad;
};

static struct list *
list_new(unsigned number)
{
  struct list *l = g_new0(struct list, 1);
  l->number = number;
  l->written = g_ptr_array_new();
  l->include_texts = g_ptr_array_new();
  l->exclude_texts = g_ptr_array_new();
  l->includes = g_ptr_array_new_with_free_func((GDestroyNotify)trawl_pattern_free);
  l->excludes = g_ptr_array_new_with_free_func((GDestroyNotify)trawl_pattern_free);
  trawl_walk_options_init(&l->options);
  l->prefix = g_string_new(NULL);
  l->out = g_string_new(NULL);
  return l;
}

static void
list_free(struct list *l)
{
  g_free(l->dialect_name);
  g_ptr_array_unref(l->written);
  g_ptr_array_unref(l->include_texts);
  g_ptr_array_unref(l->exclude_texts);
  g_ptr_array_unref(l->includes);
  g_ptr_array_unref(l->excludes);
  g_free(l->root);
  g_string_free(l->prefix, TRUE);
  g_string_free(l->out, TRUE);
  g_free(l);
}

/* ---- Messages ---- */

/* cli_print_message() of a formatted message. (Meson decodes a command's
 * stderr as UTF-8: a byte that is not would stop it with a traceback
 * instead of our message; cli_print_message() escapes every such byte.) */
static void meson_messagef(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

static void
meson_messagef(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  cli_print_message(m);
  g_free(m);
}

/* ---- Names Meson cannot carry ---- */

/* meson-plugin.h. Each reason was seen with Meson 1.0.1 and Ninja 1.11
 * (tests/meson-plugin/names.py builds every name by hand to show
 * that the accepted ones compile and the refused ones do not). */
const char *
meson_refuses(const char *name, size_t len)
{
  if (!g_utf8_validate_len(name, len, NULL))
    return "it is not UTF-8, and Meson decodes the output as UTF-8";
  for (size_t i = 0; i < len; i++) {
    switch (name[i]) {
    case '\n':
      return "a newline ends a line of the output";
    case '\r':
      return "Meson reads a carriage return as the end of a line";
    case '\\':
      return "Meson turns '\\' into '/' in the paths it writes to build.ninja";
    case '|':
      return "Meson writes '|' into build.ninja unescaped, where it ends a path";
    default:
      break;
    }
  }
  return NULL;
}

/* ---- The command line ---- */

/* Does ARGV[*I] give option SHORT ("-x", or NULL) or LONG ("--exclude")
 * with a value? The value may be attached (-xV, --exclude=V) or the next
 * argument. Sets *VALUE (NULL when it is missing) and advances *I past a
 * separate value. */
static bool
option_value(int argc, char **argv, int *i, const char *shortopt, const char *longopt,
             const char **value)
{
  const char *arg = argv[*i];
  size_t long_len = strlen(longopt);
  if (strcmp(arg, longopt) == 0 || (shortopt && strcmp(arg, shortopt) == 0)) {
    *value = *i + 1 < argc ? argv[++*i] : NULL;
    return true;
  }
  if (strncmp(arg, longopt, long_len) == 0 && arg[long_len] == '=') {
    *value = arg + long_len + 1;
    return true;
  }
  if (shortopt && strncmp(arg, shortopt, 2) == 0 && arg[2] != '\0') {
    *value = arg + 2;
    return true;
  }
  return false;
}

static bool
is_flag(const char *arg, const char *shortopt, const char *longopt)
{
  return strcmp(arg, longopt) == 0 || (shortopt && strcmp(arg, shortopt) == 0);
}

/* Read ARGV into D's lists; false (with a message) on a usage error. */
static bool
parse_args(int argc, char **argv, struct discovery *d)
{
  struct list *l = list_new(1);
  g_ptr_array_add(d->lists, l);
  bool patterns_only = false;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const char *value = NULL;
    const char *missing = NULL;
    const int first = i;
    bool of_list = true;  /* not --list, not an option for all lists */
    if (strcmp(arg, "--list") == 0) {
      l = list_new(d->lists->len + 1);
      g_ptr_array_add(d->lists, l);
      patterns_only = false;
      of_list = false;
    } else if (patterns_only || arg[0] != '-' || arg[1] == '\0') {
      g_ptr_array_add(l->include_texts, (gpointer)arg);
    } else if (strcmp(arg, "--") == 0) {
      patterns_only = true;
    } else if (option_value(argc, argv, &i, "-x", "--exclude", &value)) {
      if (value)
        g_ptr_array_add(l->exclude_texts, (gpointer)value);
      else
        missing = "--exclude";
    } else if (option_value(argc, argv, &i, "-C", "--root", &value)) {
      if (value && value[0] == '\0') {
        meson_messagef("meson: list %u: -C: an empty directory name (\".\" is the calling "
                       "directory)", l->number);
        return false;
      }
      l->dir = value;
      missing = value ? NULL : "--root";
    } else if (option_value(argc, argv, &i, NULL, "--dialect", &value)) {
      g_free(l->dialect_name);
      l->dialect_name = g_strdup(value);
      missing = value ? NULL : "--dialect";
    } else if (option_value(argc, argv, &i, NULL, "--cache", &value)) {
      g_free(d->cache);
      d->cache = g_strdup(value);
      missing = value ? NULL : "--cache";
      of_list = false;
    } else if (option_value(argc, argv, &i, "-j", "--threads", &value)) {
      guint64 n = 0;
      if (value == NULL) {
        missing = "--threads";
      } else if (!g_ascii_string_to_unsigned(value, 10, 0, 1024, &n, NULL)) {
        meson_messagef("meson: --threads must be a number from 0 to 1024, not '%s'", value);
        return false;
      }
      d->threads = (int)n;
      of_list = false;
    } else if (is_flag(arg, "-H", "--hidden")) {
      l->hidden = TRUE;
    } else if (is_flag(arg, "-I", "--no-ignore")) {
      l->no_ignore = TRUE;
    } else if (is_flag(arg, "-L", "--follow")) {
      l->follow = TRUE;
    } else if (is_flag(arg, NULL, "--allow-empty")) {
      l->allow_empty = TRUE;
    } else if (is_flag(arg, NULL, "--stats")) {
      d->stats = true;
      of_list = false;
    } else if (is_flag(arg, "-h", "--help")) {
      fputs(meson_usage, stdout);
      exit(EXIT_OK);
    } else {
      meson_messagef("meson: unknown option '%s' (a pattern that starts with '-' goes after "
                     "'--', or is written '\\-'; see trawl meson --help)", arg);
      return false;
    }
    if (missing) {
      meson_messagef("meson: %s needs a value", missing);
      return false;
    }
    for (int k = first; of_list && k <= i; k++)
      g_ptr_array_add(l->written, argv[k]);
  }
  for (guint k = 0; k < d->lists->len; k++) {
    l = d->lists->pdata[k];
    if (l->include_texts->len == 0) {
      meson_messagef("meson: list %u has no pattern (\"**\" is every file)", l->number);
      return false;
    }
  }
  return true;
}

/* Compile list L's patterns; every bad one is reported. */
static bool
compile_list(struct list *l)
{
  TrawlDialect dialect = TRAWL_DIALECT_TRAWL;
  if (l->dialect_name && !cli_dialect_from_name(l->dialect_name, &dialect)) {
    meson_messagef("meson: list %u: unknown dialect '%s' (expected trawl, git, cmake or "
                   "bazel)", l->number, l->dialect_name);
    return false;
  }
  bool ok = true;
  GPtrArray *texts[2] = {l->include_texts, l->exclude_texts};
  GPtrArray *outs[2] = {l->includes, l->excludes};
  const char *kinds[2] = {"pattern", "exclude"};
  for (int k = 0; k < 2; k++) {
    for (guint i = 0; i < texts[k]->len; i++) {
      const char *text = texts[k]->pdata[i];
      GError *error = NULL;
      TrawlPattern *p = trawl_pattern_compile(text, strlen(text), dialect, 0, &error);
      if (p != NULL) {
        g_ptr_array_add(outs[k], p);
        continue;
      }
      char *where = g_strdup_printf("meson: list %u: %s %u: ", l->number, kinds[k], i + 1);
      cli_report_pattern_error_at(where, text, strlen(text), error);
      g_free(where);
      g_error_free(error);
      ok = false;
    }
  }
  /* As the walk command: hidden entries are a rule of the trawl dialect;
   * the others let their patterns decide. */
  l->options.hidden = cli_hidden(l->hidden, dialect);
  l->options.follow = l->follow;
  if (l->no_ignore)
    l->options.ignore = 0;
  return ok;
}

/* The pattern that matches exactly PATH (trawl_pattern_escape()). */
static GString *
escape_as_pattern(const char *path)
{
  GString *p = g_string_new(NULL);
  trawl_pattern_escape(p, path, strlen(path));
  return p;
}

/* The path of DIR below ROOT (both canonical), or NULL when DIR is not
 * below ROOT. */
static const char *
path_below(const char *root, const char *dir)
{
  size_t n = strlen(root);
  if (n == 1 && root[0] == '/')
    return dir[0] == '/' && dir[1] != '\0' ? dir + 1 : NULL;
  return strncmp(dir, root, n) == 0 && dir[n] == '/' && dir[n + 1] != '\0' ? dir + n + 1 : NULL;
}

/* Leave the directory REL (below list L's root) out of L: an exclude that
 * covers it, so that the walk does not enter it. */
static void
exclude_dir(struct list *l, const char *rel)
{
  GString *pattern = escape_as_pattern(rel);
  g_string_append(pattern, "/**");
  TrawlPattern *p = trawl_pattern_compile(pattern->str, pattern->len, TRAWL_DIALECT_TRAWL, 0,
                                          NULL);
  if (p != NULL)
    g_ptr_array_add(l->excludes, p);
  g_string_free(pattern, TRUE);
}

/* Does a pattern of list L start with the path REL (of a directory below
 * its root), asking for what is inside it? */
static bool
names_dir(const struct list *l, const char *rel)
{
  GString *start = escape_as_pattern(rel);
  g_string_append_c(start, '/');
  bool named = false;
  for (guint i = 0; i < l->include_texts->len && !named; i++)
    named = g_str_has_prefix(l->include_texts->pdata[i], start->str);
  g_string_free(start, TRUE);
  return named;
}

/* Leave out of list L what Meson refuses or what holds no source of this
 * project, when it lies below L's root (ROOT, canonical):
 *
 * - Meson's build directory BUILD_ROOT: every build changes it, so a
 *   re-check would read it again and again. (Inside a git work tree the
 *   .gitignore Meson writes there hides it anyway; outside one it would
 *   not.)
 * - The project's subprojects directory SUBPROJECTS (meson-project.c),
 *   unless a pattern of L starts with its path: Meson's sandbox refuses any
 *   file in it, and a wrap is cloned there. A list whose root is in it asked
 *   for it too, and it is not below that root. */
static void
leave_out(struct list *l, const char *root, const char *build_root, const char *subprojects)
{
  const char *rel = build_root ? path_below(root, build_root) : NULL;
  if (rel)
    exclude_dir(l, rel);
  rel = subprojects ? path_below(root, subprojects) : NULL;
  if (rel && !names_dir(l, rel))
    exclude_dir(l, rel);
}

/* Where Meson's sandbox closes the subprojects directory to the calling
 * meson.build (meson-project.c), canonical, into *SUBPROJECTS: NULL when
 * Meson does not run this (no MESON_SOURCE_ROOT). False, with a message,
 * when the top-level meson.build does not say it plainly. */
static bool
find_subprojects(char **subprojects)
{
  *subprojects = NULL;
  const char *env = g_getenv("MESON_SOURCE_ROOT");
  char *source_root = env && env[0] ? realpath(env, NULL) : NULL;
  if (source_root == NULL)
    return true;
  GError *error = NULL;
  char *spdir = meson_subproject_dir(source_root, &error);
  if (spdir != NULL)
    *subprojects = meson_subprojects_path(source_root, g_getenv("MESON_SUBDIR"), spdir);
  else
    meson_messagef("meson: %s", error->message);
  g_clear_error(&error);
  g_free(spdir);
  free(source_root);
  return *subprojects != NULL;
}

/* Set list L's root (the calling directory BASE, or BASE/DIR) and the
 * prefix of its printed paths. */
static void
place_list(struct list *l, const char *base)
{
  if (l->dir == NULL) {
    l->root = g_strdup(base);
    return;
  }
  l->root = g_path_is_absolute(l->dir) ? g_strdup(l->dir) : g_build_filename(base, l->dir, NULL);
  g_string_assign(l->prefix, l->dir);
  while (l->prefix->len > 1 && l->prefix->str[l->prefix->len - 1] == '/')
    g_string_truncate(l->prefix, l->prefix->len - 1);
  if (strcmp(l->prefix->str, ".") == 0)
    g_string_truncate(l->prefix, 0);
  else if (l->prefix->str[l->prefix->len - 1] != '/')
    g_string_append_c(l->prefix, '/');
}

/* TrawlPlanResultFunc: PATH, a result of list Q, onto its answer, or onto
 * the bad names. */
static void
take_path(size_t q, const char *path, size_t len, void *data)
{
  struct discovery *d = data;
  struct list *l = d->lists->pdata[q];
  const size_t start = l->out->len;
  if (l->count++ > 0)
    g_string_append_c(l->out, '\n');
  const size_t name_start = l->out->len;
  g_string_append_len(l->out, l->prefix->str, (gssize)l->prefix->len);
  g_string_append_len(l->out, path, (gssize)len);
  const char *name = l->out->str + name_start;
  const size_t name_len = l->out->len - name_start;
  const char *why = meson_refuses(name, name_len);
  if (why == NULL)
    return;
  if (d->n_bad++ < SHOWN_BAD_NAMES_MAX) {
    g_string_append(d->bad, "trawl: ");
    cli_append_name(d->bad, name, name_len);
    g_string_append_printf(d->bad, ": Meson cannot carry this file name: %s (list %u)\n", why,
                           l->number);
  }
  g_string_truncate(l->out, start);
  l->count--;
}

/* The cache trawl meson keeps for these arguments in the build directory
 * BUILD_ROOT: named by a digest of the calling directory and the arguments,
 * so that every run_command() has its own. Its directory is made. */
static char *
default_cache(const char *build_root, const char *base, int argc, char **argv)
{
  GChecksum *ck = g_checksum_new(G_CHECKSUM_SHA256);
  g_checksum_update(ck, (const guchar *)base, (gssize)strlen(base) + 1);
  for (int i = 0; i < argc; i++)
    g_checksum_update(ck, (const guchar *)argv[i], (gssize)strlen(argv[i]) + 1);
  char *name = g_strndup(g_checksum_get_string(ck), 24);
  g_checksum_free(ck);
  char *dir = g_build_filename(build_root, MESON_TRAWL_DIR, NULL);
  g_mkdir_with_parents(dir, 0755);
  char *path = g_strdup_printf("%s/%s.cache", dir, name);
  g_free(dir);
  g_free(name);
  return path;
}

/* List CACHE in BUILD_ROOT's registry for this configure run
 * (meson-registry.c). A registry that cannot be written is reported: the
 * re-check would miss this cache. */
static bool
register_cache(const char *build_root, const char *base, const char *cache)
{
  GError *error = NULL;
  if (meson_registry_add(build_root, base, cache, &error))
    return true;
  meson_messagef("meson: %s (the build would not re-check this list)", error->message);
  g_error_free(error);
  return false;
}

/* Append TEXT to OUT as a Meson string literal: a label shows the list as
 * it was written in meson.build. */
static void
append_meson_string(GString *out, const char *text)
{
  g_string_append_c(out, '\'');
  for (const char *c = text;;) {
    const char *quote = strchr(c, '\'');
    size_t n = quote ? (size_t)(quote - c) : strlen(c);
    cli_append_name(out, c, n);
    if (quote == NULL)
      break;
    g_string_append(out, "\\'");
    c = quote + 1;
  }
  g_string_append_c(out, '\'');
}

/* Leave beside D's cache what trawl check calls each list
 * (check-labels.h): the meson.build that asked, the list's number and its
 * arguments as written there, and the prefix that makes its paths relative
 * to that meson.build's directory (BASE). */
static void
write_labels(const struct discovery *d, const char *base)
{
  const char *subdir = g_getenv("MESON_SUBDIR");
  char *meson_build = subdir == NULL ? g_build_filename(base, "meson.build", NULL)
                      : subdir[0] == '\0' ? g_strdup("meson.build")
                      : g_build_filename(subdir, "meson.build", NULL);
  GPtrArray *labels = g_ptr_array_new_with_free_func(g_free);
  GPtrArray *prefixes = g_ptr_array_new();
  for (guint i = 0; i < d->lists->len; i++) {
    const struct list *l = d->lists->pdata[i];
    GString *label = g_string_new(NULL);
    cli_append_name(label, meson_build, strlen(meson_build));
    g_string_append_printf(label, ": list %u:", l->number);
    for (guint k = 0; k < l->written->len; k++) {
      g_string_append(label, k ? ", " : " ");
      append_meson_string(label, l->written->pdata[k]);
    }
    g_ptr_array_add(labels, g_string_free(label, FALSE));
    g_ptr_array_add(prefixes, l->prefix->str);
  }
  GError *error = NULL;
  if (!check_labels_write(d->cache, labels, prefixes, &error)) {
    /* Only the names of changes suffer: they read "query N". */
    meson_messagef("meson: %s (a change would be shown by query number)", error->message);
    g_error_free(error);
  }
  g_ptr_array_unref(prefixes);
  g_ptr_array_unref(labels);
  g_free(meson_build);
}

/* Each list whose root could not be walked; returns how many. */
static unsigned
report_root_errors(const struct discovery *d, const TrawlPlan *plan)
{
  unsigned n = 0;
  for (guint i = 0; i < d->lists->len; i++) {
    const GError *error = trawl_plan_error(plan, i);
    if (error != NULL) {
      meson_messagef("meson: list %u: %s", ((struct list *)d->lists->pdata[i])->number,
                     error->message);
      n++;
    }
  }
  return n;
}

/* Walk and print; returns the exit code. */
static int
discover(struct discovery *d, const char *build_root, const char *base)
{
  TrawlPlan *plan = trawl_plan_new();
  for (guint i = 0; i < d->lists->len; i++) {
    struct list *l = d->lists->pdata[i];
    l->options.threads = (unsigned)d->threads;
    TrawlQuery q = {
      .root = l->root,
      .includes = (const TrawlPattern *const *)l->includes->pdata,
      .n_includes = l->includes->len,
      .excludes = (const TrawlPattern *const *)l->excludes->pdata,
      .n_excludes = l->excludes->len,
      .options = &l->options,
    };
    trawl_plan_add(plan, &q);
  }
  TrawlCacheReport rep;
  memset(&rep, 0, sizeof rep);
  bool ran = d->cache ? trawl_cache_run_each(plan, d->cache, 0, take_path, d, &rep, NULL)
                      : trawl_plan_run_each(plan, take_path, d, NULL);
  int status = EXIT_OK;
  if (rep.warning)
    meson_messagef("cache %s %s; walking in full and writing it again", d->cache,
                   rep.warning->message);
  if (rep.write_error)
    meson_messagef("cache not written: %s", rep.write_error->message);
  if (!ran) {
    report_root_errors(d, plan);
    status = EXIT_USAGE;
    goto out;
  }
  cli_report_plan_problems(plan, NULL);
  if (d->stats)
    cli_report_plan_stats(d->lists->len, "list", "lists", plan, d->cache ? &rep : NULL, d->start);
  if (d->n_bad > 0) {
    fputs(d->bad->str, stderr);
    if (d->n_bad > SHOWN_BAD_NAMES_MAX)
      meson_messagef("... and %zu more file names Meson cannot carry",
                     d->n_bad - SHOWN_BAD_NAMES_MAX);
    cli_print_message("rename them, or leave them out with --exclude (docs/meson.md)");
    status = EXIT_USAGE;
  }
  for (guint i = 0; i < d->lists->len; i++) {
    const struct list *l = d->lists->pdata[i];
    if (l->count == 0 && !l->allow_empty && d->n_bad == 0) {
      meson_messagef("meson: list %u (%s%s) matched no file; give it --allow-empty if that is "
                     "right, and read it with x == '' ? [] : files(x.split('\\n'))", l->number,
                     (const char *)l->include_texts->pdata[0],
                     l->include_texts->len > 1 ? " ..." : "");
      status = EXIT_USAGE;
    }
  }
  if (status != EXIT_OK)
    goto out;
  for (guint i = 0; i < d->lists->len; i++) {
    const struct list *l = d->lists->pdata[i];
    if (i > 0)
      fputc('\0', stdout);
    fwrite(l->out->str, 1, l->out->len, stdout);
  }
  if (fflush(stdout) != 0 || ferror(stdout)) {
    meson_messagef("writing output: %s", g_strerror(errno));
    status = EXIT_IO;
    goto out;
  }
  /* Registered only once the answer is out: a configure that failed here
   * has nothing to re-check. */
  if (build_root && d->cache && !register_cache(build_root, base, d->cache))
    status = EXIT_IO;
  if (d->cache)
    write_labels(d, base);

out:
  trawl_cache_report_clear(&rep);
  trawl_plan_free(plan);
  return status;
}

int
cli_meson(int argc, char **argv)
{
  if (argc >= 2 && strcmp(argv[1], "--postconf") == 0)
    return meson_postconf(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "--check") == 0) {
    /* The check edge's command (meson-postconf.c): `trawl check`, whose
     * exit 1 (a list changed, the stamp touched) is a success for Ninja.
     * One program, so that the edge's `sh -c` can exec it. */
    int status = cli_check(argc - 1, argv + 1);
    return status == EXIT_NONE ? EXIT_OK : status;
  }
  if (argc < 2) {
    fputs(meson_usage, stderr);
    return EXIT_USAGE;
  }
  struct discovery d = {
    .lists = g_ptr_array_new_with_free_func((GDestroyNotify)list_free),
    .bad = g_string_new(NULL),
    .start = g_get_monotonic_time(),
  };
  int status = EXIT_USAGE;
  char *base = g_get_current_dir();
  const char *build_env = g_getenv("MESON_BUILD_ROOT");
  char *build_root = build_env && build_env[0] ? realpath(build_env, NULL) : NULL;
  char *subprojects = NULL;
  if (!parse_args(argc, argv, &d) || !find_subprojects(&subprojects))
    goto out;
  bool ok = true;
  for (guint i = 0; i < d.lists->len; i++) {
    struct list *l = d.lists->pdata[i];
    ok = compile_list(l) && ok;
    place_list(l, base);
    char *root = realpath(l->root, NULL); /* NULL: reported by the run */
    if (root)
      leave_out(l, root, build_root, subprojects);
    free(root);
  }
  if (!ok)
    goto out;
  if (d.cache == NULL && build_root != NULL)
    d.cache = default_cache(build_root, base, argc, argv);
  status = discover(&d, build_root, base);

out:
  g_free(subprojects);
  free(build_root);
  g_free(base);
  g_free(d.cache);
  g_string_free(d.bad, TRUE);
  g_ptr_array_unref(d.lists);
  return status;
}
