/* trawl meson — what the Meson plugin's discovery (cmd-meson.c) and its
 * postconf step (meson-postconf.c) share: where they keep their files in
 * a Meson build directory, and which configure run a process belongs to.
 * docs/meson.md describes the whole plugin.
 */
#ifndef TRAWL_CLI_MESON_PLUGIN_H
#define TRAWL_CLI_MESON_PLUGIN_H

/* The plugin's files, relative to the build directory: the result caches
 * of `trawl meson`, the registry that lists the caches used by the
 * current configure run, and the stamp the re-check touches when a list
 * changed (a dependency of build.ninja). */
#define MESON_TRAWL_DIR "meson-private/trawl"
#define MESON_TRAWL_REGISTRY MESON_TRAWL_DIR "/caches"
#define MESON_TRAWL_STAMP MESON_TRAWL_DIR "/stamp"

/* The first line of a registry, before the configure run's id. */
#define MESON_TRAWL_REGISTRY_HEADER "trawl meson caches of configure run "

/* An id of the Meson process that started this one: Meson runs both
 * run_command() and postconf scripts as its own children, so every
 * discovery of one configure run and its postconf step see the same id,
 * and the next run another (the parent's pid and, on Linux, its start
 * time, so that a reused pid is not mistaken for it). Free with g_free. */
char *meson_configure_id(void);

/* `trawl meson --postconf [--floor]`, run by Meson after it wrote
 * build.ninja (meson.add_postconf_script); ARGV[0] is "meson". Returns
 * the exit code. */
int meson_postconf(int argc, char **argv);

/* Append NAME (LEN bytes) to OUT for a message that Meson will decode as
 * UTF-8: valid UTF-8 as it is, '\\' doubled, control bytes as \n \r \t or
 * \xNN, and every byte that is not part of valid UTF-8 as \xNN. */
void meson_append_shown(GString *out, const char *name, size_t len);

#endif /* TRAWL_CLI_MESON_PLUGIN_H */
