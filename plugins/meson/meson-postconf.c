/* trawl meson --postconf — make every ninja run re-check the lists that
 * `trawl meson` found while Meson configured (docs/meson.md, "How
 * regeneration works").
 *
 * Meson runs postconf scripts once build.ninja is written. This one reads
 * the registry of the caches this configure run used (meson-registry.c) and
 * appends to build.ninja an edge that runs `trawl check` over them, with
 * restat, so that it costs the stats of the check and nothing else when no
 * list changed — and, in the common case below, not even that.
 *
 * Same run (the Meson versions in verified_meson[]): a stamp that `trawl
 * check --touch` touches only when a list changed is made an input of
 * Meson's own `build build.ninja: REGENERATE_BUILD ...` edge. Ninja brings
 * build.ninja up to date before anything else, so it runs the check first;
 * a change makes build.ninja out of date, Meson regenerates, and Ninja
 * goes on with the new manifest in the same run. That edge's text is
 * Meson's, not a documented interface, hence the version check (and the
 * shape of the line is checked too).
 *
 * And the check runs only when something it depends on changed: its edge's
 * output is the --checked mark (check-mark.h) and its depfile every path
 * the caches depend on (trawl check --depfile, depfile.h), so a no-op build
 * runs no command at all. (An edge that runs every time, even one that
 * restat leaves clean, costs Ninja 1.11 a reset of its whole graph in the
 * manifest step, more than the check itself.) A second edge, whose command
 * does nothing, turns "the check ran" into "the stamp is newer" only when
 * the check touched the stamp: restat.
 *
 * Unless the caches watch more than WATCH_LIMIT paths: then the check edge
 * runs on every build (restat). Ninja 1.11 stats every listed path on each
 * build, and after each run of the check reads the depfile in time
 * quadratic in its length, so that beyond a few thousand paths the watch
 * costs more than the check it spares (bench/meson_noop.py; the numbers in
 * docs/benchmarks.md, "Meson plugin"). --watch-limit N sets another limit
 * (0: never a depfile).
 *
 * The floor (any other version, or --floor): Meson's edges are left as they
 * are. The check is a default target of its own; a change makes it fail
 * with a message to run ninja again, touches meson-private/coredata.dat (an
 * input of build.ninja in every Meson so far) so that the next run
 * regenerates, and leaves a marker that keeps the check failing until a
 * configure run removes it: never a build that silently misses a file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../cli/cli.h"
#include "../cli/files.h"
#include "../../libcore/src/json/json.h"
#include "meson-plugin.h"
#include "trawl/cache.h"

/* Meson versions whose build.ninja this wiring was verified on, by
 * tests/meson-plugin with that Meson. */
static const char *const verified_meson[] = {"1.0.1"};

/* Paths watched at most through a depfile (above). */
#define WATCH_LIMIT 2000

/* Meson's edge that regenerates build.ninja, at the start of a line. */
static const char regen_edge[] = "build build.ninja: REGENERATE_BUILD ";

#define CHECK_RULE "TRAWL_MESON_CHECK"
/* What Ninja shows when the stamp edge runs (a rule without a description
 * shows its command, a bare ":"). It runs after every run of the check,
 * whose mark is then newer, whether or not a list changed: only a change
 * touches the stamp, and restat leaves build.ninja clean otherwise. */
#define STAMP_DESCRIPTION "Handing any change of the file lists found by trawl to Meson"
#define STAMP_RULE "TRAWL_MESON_STAMP"
#define ALWAYS MESON_TRAWL_DIR "/always"
#define CHECKED MESON_TRAWL_DIR "/checked"
#define DEPFILE MESON_TRAWL_DIR "/checked.d"
#define FLOOR_OUTPUT MESON_TRAWL_DIR "/check"
#define FLOOR_MARKER MESON_TRAWL_DIR "/changed"

static const char floor_message[] =
  "trawl: a file list found by trawl meson changed, so build.ninja is out of date; "
  "run ninja again (it re-configures first)";

/* Append WORD to OUT as one shell word inside a Ninja rule: quoted for
 * sh when it holds anything but plain characters, each '$' doubled for
 * Ninja. */
static void
append_word(GString *out, const char *word)
{
  bool plain = word[0] != '\0';
  for (const char *c = word; *c; c++)
    plain = plain && (g_ascii_isalnum(*c) || strchr("_./-+=,:@%", *c));
  if (!plain)
    g_string_append_c(out, '\'');
  for (const char *c = word; *c; c++) {
    if (*c == '\'' && !plain)
      g_string_append(out, "'\\''");
    else if (*c == '$')
      g_string_append(out, "$$");
    else
      g_string_append_c(out, *c);
  }
  if (!plain)
    g_string_append_c(out, '\'');
}

/* The Meson version that wrote BUILD_ROOT (meson-info/meson-info.json), or
 * NULL. Free with g_free. */
static char *
meson_version(const char *build_root)
{
  char *path = g_build_filename(build_root, "meson-info", "meson-info.json", NULL);
  char *text = NULL;
  size_t len = 0;
  char *version = NULL;
  json_error error;
  json_value *doc = NULL;
  if (g_file_get_contents(path, &text, &len, NULL))
    doc = json_parse(text, len, &error);
  for (size_t i = 0; doc && doc->kind == JSON_OBJECT && i < doc->n; i++) {
    const json_member *m = &doc->members[i];
    if (strcmp(m->name, "meson_version") != 0 || m->value->kind != JSON_OBJECT)
      continue;
    for (size_t k = 0; k < m->value->n; k++) {
      const json_member *f = &m->value->members[k];
      if (strcmp(f->name, "full") == 0 && f->value->kind == JSON_STRING)
        version = g_strdup(f->value->str);
    }
  }
  json_value_free(doc);
  g_free(text);
  g_free(path);
  return version;
}

static bool
verified(const char *version)
{
  for (size_t i = 0; version && i < G_N_ELEMENTS(verified_meson); i++)
    if (strcmp(version, verified_meson[i]) == 0)
      return true;
  return false;
}

/* Where in NINJA (LEN bytes) Meson's regeneration edge line ends — the
 * offset of its '\n' — when the line is there once and in the shape this
 * was verified on (no implicit or order-only inputs, no continuation);
 * otherwise 0. */
static size_t
regen_line_end(const char *ninja, size_t len)
{
  size_t found = 0, end = 0;
  for (const char *at = ninja; (at = g_strstr_len(at, (gssize)(len - (size_t)(at - ninja)),
                                                 regen_edge)) != NULL; at++) {
    if (at != ninja && at[-1] != '\n')
      continue;
    const char *nl = memchr(at, '\n', len - (size_t)(at - ninja));
    if (nl == NULL)
      return 0;
    char *line = g_strndup(at, (size_t)(nl - at));
    bool plain = strstr(line, " | ") == NULL && strstr(line, " || ") == NULL &&
                 !g_str_has_suffix(line, "$");
    g_free(line);
    if (!plain)
      return 0;
    found++;
    end = (size_t)(nl - ninja);
  }
  return found == 1 ? end : 0;
}

/* The command of the check edge: TRAWL CHECK over CACHES, touching
 * TOUCHED when a list changed (and, with DEPFILE, leaving the mark CHECKED
 * and the depfile). */
static GString *
check_command(const char *trawl, const char *check, const GPtrArray *caches,
              const char *touched, bool depfile)
{
  GString *cmd = g_string_new(NULL);
  append_word(cmd, trawl);
  g_string_append_printf(cmd, " %s --touch ", check);
  append_word(cmd, touched);
  if (depfile)
    g_string_append(cmd, " --checked " CHECKED " --depfile " DEPFILE);
  for (guint i = 0; i < caches->len; i++) {
    g_string_append(cmd, " --cache ");
    append_word(cmd, caches->pdata[i]);
  }
  return cmd;
}

/* This program's absolute path, for the check edge (Ninja runs it from the
 * build directory). NULL with a message when it cannot be found. */
static char *
own_path(void)
{
  char *self = g_file_read_link("/proc/self/exe", NULL);
  if (self == NULL)
    fprintf(stderr, "trawl: meson --postconf: cannot tell this program's path (/proc/self/exe: "
                    "%s)\n", g_strerror(errno));
  return self;
}

static bool
write_file(const char *path, const GString *text)
{
  GError *error = NULL;
  if (file_write(path, text->str, text->len, &error))
    return true;
  fprintf(stderr, "trawl: meson --postconf: %s\n", error->message);
  g_error_free(error);
  return false;
}

struct counting {
  size_t n, limit;
};

static bool
count_path(const char *path, void *data)
{
  (void)path;
  struct counting *c = data;
  return ++c->n <= c->limit;
}

/* How many paths the watch lists of CACHES (relative to BUILD_ROOT) hold,
 * repeats counted, up to one past LIMIT (no further is read); SIZE_MAX
 * when one cannot be read. */
static size_t
watched_paths(const char *build_root, const GPtrArray *caches, size_t limit)
{
  struct counting n = {0, limit};
  for (guint i = 0; i < caches->len && n.n <= limit; i++) {
    const char *c = caches->pdata[i];
    char *path = g_path_is_absolute(c) ? g_strdup(c) : g_build_filename(build_root, c, NULL);
    bool always = false;
    GError *error = NULL;
    const bool ok = trawl_cache_watch_until(path, count_path, &n, &always, &error);
    g_clear_error(&error);
    g_free(path);
    if (!ok)
      return SIZE_MAX;
  }
  return n.n;
}

static bool
write_empty(const char *path)
{
  GString *empty = g_string_new(NULL);
  bool ok = write_file(path, empty);
  g_string_free(empty, TRUE);
  return ok;
}

int
meson_postconf(int argc, char **argv)
{
  bool floor = false;
  guint64 watch_limit = WATCH_LIMIT;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--floor") == 0) {
      floor = true;
    } else if (strcmp(argv[i], "--watch-limit") == 0 && i + 1 < argc) {
      GError *error = NULL;
      if (!g_ascii_string_to_unsigned(argv[++i], 10, 0, G_MAXUINT32, &watch_limit, &error)) {
        fprintf(stderr, "trawl: meson --postconf: --watch-limit '%s': %s\n", argv[i],
                error->message);
        g_error_free(error);
        return EXIT_USAGE;
      }
    } else {
      fprintf(stderr, "trawl: meson --postconf: unexpected argument '%s' (only --floor, "
                      "--watch-limit N)\n", argv[i]);
      return EXIT_USAGE;
    }
  }
  const char *build_root = g_getenv("MESON_BUILD_ROOT");
  if (build_root == NULL || build_root[0] == '\0') {
    fprintf(stderr, "trawl: meson --postconf is run by Meson: "
                    "meson.add_postconf_script(trawl, 'meson', '--postconf')\n");
    return EXIT_USAGE;
  }
  int status = EXIT_IO;
  GPtrArray *caches = meson_registry_read(build_root);
  char *ninja_path = g_build_filename(build_root, "build.ninja", NULL);
  char *version = NULL, *trawl = NULL, *why_floor = NULL;
  char *ninja = NULL;
  size_t ninja_len = 0;
  GString *text = NULL, *cmd = NULL;
  if (caches == NULL || caches->len == 0) {
    printf("trawl: no trawl meson list in this configure run: nothing to re-check\n");
    status = EXIT_OK;
    goto out;
  }
  GError *error = NULL;
  if (!g_file_get_contents(ninja_path, &ninja, &ninja_len, &error)) {
    fprintf(stderr, "trawl: meson --postconf: %s\n", error->message);
    g_error_free(error);
    goto out;
  }
  if (strstr(ninja, "\nrule " CHECK_RULE "\n") != NULL) {
    /* A second add_postconf_script() of the same run. */
    status = EXIT_OK;
    goto out;
  }
  if ((trawl = own_path()) == NULL)
    goto out;
  version = meson_version(build_root);
  size_t regen_end = regen_line_end(ninja, ninja_len);
  bool same_run = !floor && verified(version) && regen_end > 0;
  const size_t watched = same_run ? watched_paths(build_root, caches, watch_limit) : SIZE_MAX;
  const bool watch = same_run && watched <= watch_limit;
  why_floor = floor ? g_strdup("--floor")
                    : !verified(version)
                      ? g_strdup_printf("trawl meson was not verified on Meson %s",
                                        version ? version : "of unknown version")
                      : g_strdup("Meson's regeneration edge is not in the shape verified");

  text = g_string_new_len(ninja, (gssize)ninja_len);
  if (text->len > 0 && text->str[text->len - 1] != '\n')
    g_string_append_c(text, '\n');
  g_string_append(text, "\n# trawl meson --postconf (docs/meson.md): re-check the file lists "
                        "trawl meson found\n");
  g_string_append(text, "rule " CHECK_RULE "\n command = ");
  if (same_run) {
    /* exec: Ninja runs every command through `sh -c`, and dash would
     * otherwise start the check as a second process. */
    cmd = check_command(trawl, "meson --check", caches, MESON_TRAWL_STAMP, watch);
    g_string_append_printf(text, "exec %s\n", cmd->str);
  } else {
    cmd = check_command(trawl, "check", caches, "meson-private/coredata.dat", false);
    g_string_append_printf(text,
                           "if test -e " FLOOR_MARKER "; then echo '%s'; exit 1; fi; "
                           "%s || { test $$? -eq 1 && : > " FLOOR_MARKER " && echo '%s'; "
                           "exit 1; }\n", floor_message, cmd->str, floor_message);
  }
  g_string_append(text, " description = Re-checking the file lists found by trawl");
  if (!same_run)
    g_string_append_printf(text, " (a change stops the build: %s)", why_floor);
  g_string_append(text, "\n restat = 1\n");
  if (watch) {
    g_string_append(text, " depfile = " DEPFILE "\n deps = gcc\n\n"
                          "rule " STAMP_RULE "\n command = :\n"
                          " description = " STAMP_DESCRIPTION "\n restat = 1\n\n"
                          "build " CHECKED ": " CHECK_RULE "\n"
                          "build " MESON_TRAWL_STAMP ": " STAMP_RULE " " CHECKED "\n");
    g_string_insert(text, (gssize)regen_end, " | " MESON_TRAWL_STAMP);
  } else if (same_run) {
    g_string_append(text, "\nbuild " ALWAYS ": phony\n\n"
                          "build " MESON_TRAWL_STAMP ": " CHECK_RULE " | " ALWAYS "\n");
    g_string_insert(text, (gssize)regen_end, " | " MESON_TRAWL_STAMP);
  } else {
    g_string_append(text, "\nbuild " ALWAYS ": phony\n\n");
    g_string_append(text, "build " FLOOR_OUTPUT ": " CHECK_RULE " | " ALWAYS "\n"
                          "default " FLOOR_OUTPUT "\n");
  }

  /* The stamp before build.ninja, so build.ninja is the newer (ninja's
   * cleandead, run by Meson before postconf scripts, removed it). */
  char *stamp = g_build_filename(build_root, MESON_TRAWL_STAMP, NULL);
  char *marker = g_build_filename(build_root, FLOOR_MARKER, NULL);
  bool ok = g_file_test(stamp, G_FILE_TEST_EXISTS) || write_empty(stamp);
  if (ok && unlink(marker) != 0 && errno != ENOENT) {
    fprintf(stderr, "trawl: meson --postconf: %s: %s\n", marker, g_strerror(errno));
    ok = false;
  }
  g_free(marker);
  g_free(stamp);
  if (!ok || !write_file(ninja_path, text))
    goto out;
  if (watch)
    printf("trawl: a ninja run re-checks %u trawl meson %s first when one of the %zu "
           "directories and ignore files they depend on changed, and re-configures in the same "
           "run when a list changed (Meson %s)\n", caches->len,
           caches->len == 1 ? "cache" : "caches", watched, version);
  else if (same_run) {
    char *why = watched == SIZE_MAX
                  ? g_strdup("a cache's watch list could not be read")
                  : g_strdup_printf("they depend on more paths than --watch-limit %"
                                    G_GUINT64_FORMAT, watch_limit);
    printf("trawl: every ninja run re-checks %u trawl meson %s first (%s), and re-configures "
           "in the same run when a list changed (Meson %s)\n", caches->len,
           caches->len == 1 ? "cache" : "caches", why, version);
    g_free(why);
  }
  else
    printf("trawl: every ninja run re-checks %u trawl meson %s; a change stops the build, and "
           "the next run re-configures (%s)\n", caches->len,
           caches->len == 1 ? "cache" : "caches", why_floor);
  status = EXIT_OK;

out:
  g_free(why_floor);
  if (cmd)
    g_string_free(cmd, TRUE);
  if (text)
    g_string_free(text, TRUE);
  g_free(ninja);
  g_free(trawl);
  g_free(version);
  g_free(ninja_path);
  if (caches)
    g_ptr_array_unref(caches);
  return status;
}
