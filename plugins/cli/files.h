/* trawl — the files the command writes beside a build: stamps, depfiles,
 * the labels of a cache, the Meson plugin's lists and patched build file.
 *
 * Each is created with mode FILE_MODE less the umask, as every file a
 * build writes is (so a build directory shared by a group stays shared),
 * and is never writable by others whatever the umask: a file others may
 * write would let them change what the build does. The cache files
 * themselves follow the same rule (libcore/src/cache/cachefile.c).
 */
#ifndef TRAWL_CLI_FILES_H
#define TRAWL_CLI_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <glib.h>

/* The mode a file is created with, before the umask. */
#define FILE_MODE 0664

/* Write LEN bytes of TEXT to PATH whole: to a temporary file beside it,
 * renamed over it, so that a reader sees the old file or the new; false
 * with ERROR set. */
bool file_write(const char *path, const char *text, size_t len, GError **error);

#endif /* TRAWL_CLI_FILES_H */
