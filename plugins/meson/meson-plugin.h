/* trawl meson — what the Meson plugin's discovery (cmd-meson.c), its
 * postconf step (meson-postconf.c), its reading of the project
 * (meson-project.c) and its registry (meson-registry.c) share: where they
 * keep their files in a Meson build directory, which caches the configure
 * run used, and where the project's subprojects are. docs/meson.md
 * describes the whole plugin. The arrows: cmd-meson.c -> meson-postconf.c
 * (`--postconf`), meson-project.c, meson-registry.c; meson-postconf.c ->
 * meson-registry.c.
 */
#ifndef TRAWL_CLI_MESON_PLUGIN_H
#define TRAWL_CLI_MESON_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <glib.h>

/* The plugin's files, relative to the build directory: the result caches
 * of `trawl meson` (and the registry, meson-registry.c), and the stamp the
 * re-check touches when a list changed (a dependency of build.ninja). */
#define MESON_TRAWL_DIR "meson-private/trawl"
#define MESON_TRAWL_STAMP MESON_TRAWL_DIR "/stamp"

/* ---- meson-registry.c: the caches of the current configure run ---- */

/* An id of the Meson process that started this one: Meson runs both
 * run_command() and postconf scripts as its own children, so every
 * discovery of one configure run and its postconf step see the same id,
 * and the next run another (the parent's pid and, on Linux, its start
 * time, so that a reused pid is not mistaken for it). Free with g_free. */
char *meson_configure_id(void);

/* List CACHE (relative to BASE unless absolute) in BUILD_ROOT's registry
 * for this configure run, once; a registry of another run is started
 * afresh. False with ERROR set when it cannot be written. */
bool meson_registry_add(const char *build_root, const char *base, const char *cache,
                        GError **error);

/* The caches BUILD_ROOT's registry lists for this configure run, as paths
 * relative to BUILD_ROOT where they lie below it (char *, owned); NULL when
 * it lists none or belongs to another run. */
GPtrArray *meson_registry_read(const char *build_root);

/* ---- meson-postconf.c ---- */

/* `trawl meson --postconf [--floor]`, run by Meson after it wrote
 * build.ninja (meson.add_postconf_script); ARGV[0] is "meson". Returns
 * the exit code. */
int meson_postconf(int argc, char **argv);

/* ---- meson-project.c ---- */

/* The top-level project's subproject_dir, read from the project() call of
 * SOURCE_ROOT/meson.build ("subprojects" when it has none, or there is no
 * such file); NULL with ERROR
 * set (naming the file, line and column) when the file cannot be read or
 * the keyword is not one plain string. Free with g_free. */
char *meson_subproject_dir(const char *source_root, GError **error);

/* The subprojects directory Meson's sandbox closes to a meson.build in
 * SUBDIR (MESON_SUBDIR: relative to SOURCE_ROOT, "" at the top): SPDIR
 * below the root of the (sub)project SUBDIR belongs to, each subproject
 * lying in SPDIR/NAME below the one that holds it. Free with g_free. */
char *meson_subprojects_path(const char *source_root, const char *subdir, const char *spdir);

/* Why Meson cannot take NAME (LEN bytes) from trawl meson's output into
 * files(), or NULL when it can: the output is the lists' names joined by
 * '\n' (the lists by NUL), which Meson decodes and splits. (cmd-meson.c;
 * tests/fuzz/fuzz_writers.c splits it back as Meson does.) */
const char *meson_refuses(const char *name, size_t len);

#endif /* TRAWL_CLI_MESON_PLUGIN_H */
