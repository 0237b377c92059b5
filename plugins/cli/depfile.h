/* trawl — `trawl check --depfile FILE`: what the checked caches depend on, as
 * a depfile (Make's syntax, as Ninja reads it) whose target is the --checked
 * mark (check-mark.h). A build tool that compares modification times can
 * then skip the check itself when nothing it depends on is newer than the
 * mark: a no-op build runs no command (docs/cli.md, docs/meson.md).
 *
 * The paths are trawl_cache_watch()'s. A path a depfile cannot carry (a
 * newline, a ':', a tab, a backslash before a blank), or a cache no list
 * can prove (ALWAYS), puts in its place a path that is never there: a
 * missing input makes the check run every time, which is slower and never
 * wrong.
 */
#ifndef TRAWL_CLI_DEPFILE_H
#define TRAWL_CLI_DEPFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <glib.h>

/* Write FILE (through a temporary file renamed into place) with target
 * TARGET and the watch lists of the N cache files CACHES; with ALWAYS (a
 * cache that does not record the tree as it is now), a path never there
 * too. More than LIMIT paths in all: the path never there alone, since a
 * build tool stats every listed path on every build, and beyond some count
 * that costs more than the check (G_MAXUINT64: no limit). The lists prove
 * the caches current only for caches written or found unchanged by the
 * check just run: the caller writes back every directory it read. false,
 * with a message naming FILE, when it cannot be written. */
bool depfile_write(const char *file, const char *target, char *const *caches, int n, bool always,
                   guint64 limit);

/* Append to TEXT the depfile with target TARGET and inputs the N PATHS
 * (each as depfile_ninja_path() spells it), a path refused by
 * depfile_append_path() left out and NEVER put in its place — NEVER is
 * listed too when ALWAYS. False when TARGET or NEVER cannot be written.
 * (tests/fuzz/fuzz_depfile.c reads it back as Ninja does.) */
bool depfile_text(GString *text, const char *target, const char *const *paths, size_t n,
                  const char *never, bool always);

/* Append PATH to OUT escaped as Ninja 1.11 reads a depfile's path; false
 * (OUT then holds a part) when no escaping can carry it. */
bool depfile_append_path(GString *out, const char *path);

/* PATH as Ninja canonicalizes it, so that two spellings of one path are
 * listed once (g_free() it). */
char *depfile_ninja_path(const char *path);

#endif /* TRAWL_CLI_DEPFILE_H */
