/* trawl — watchman, asked which recorded directories are worth a stat
 * (private; cache.c, docs/cache.md "Watchman").
 *
 * BSER over watchman's unix socket, one request and one answer, as the
 * `watchman` client itself talks: never the client process, which costs
 * more than the stat path it would save. Nothing here trusts anything: it
 * tells the cache which paths changed since a clock, or why it cannot (then
 * the cache stats everything, as without watchman).
 */
#ifndef TRAWL_CACHE_WATCHMAN_H
#define TRAWL_CACHE_WATCHMAN_H

#include <stdbool.h>
#include <string.h>
#include <glib.h>

G_BEGIN_DECLS

/* Is a path (LEN bytes, '/' between its names) in a version control
 * directory: has it a name .git, .hg or .svn? Watchman's `ignore_vcs`
 * (those three by default) leaves what changes in them unreported, so it
 * can vouch for nothing there (a walk that enters .git: CMake's
 * GLOB_RECURSE from the top). Any depth, not only the watch's root: a
 * nested repository's, whatever watchman does with it, is stat'ed too. */
static inline bool
wm_vcs_path(const char *path, size_t len)
{
  size_t at = 0;
  while (at < len) {
    size_t end = at;
    while (end < len && path[end] != '/')
      end++;
    const size_t n = end - at;
    if ((n == 4 && (memcmp(path + at, ".git", 4) == 0 || memcmp(path + at, ".svn", 4) == 0)) ||
        (n == 3 && memcmp(path + at, ".hg", 3) == 0))
      return true;
    at = end + 1;
  }
  return false;
}

/* TRAWL_WATCHMAN: off (never connect), auto (the default: use a watch that
 * is there, never start the daemon or add a watch), on (also add a watch,
 * `watch-project`, when a cache is written). */
enum wm_mode { WM_OFF, WM_AUTO, WM_ON };

/* The mode the environment asks for; false (and WM_OFF) when TRAWL_WATCHMAN
 * holds anything else. */
bool wm_mode_from_env(enum wm_mode *mode);

/* A connection to the daemon. */
struct wm;

/* Connect in MODE (not WM_OFF): TRAWL_WATCHMAN_SOCK, else WATCHMAN_SOCK,
 * else watchman's default socket. NULL with *WHY set (to free): no socket,
 * not running. */
struct wm *wm_connect(enum wm_mode mode, char **why);
void wm_close(struct wm *w);

/* Where a walk's root stands in a watch: the watch's root, the walk's root
 * below it ("" the watch's root), the clock and the watch's recrawls as of
 * the question; and the directory where watchman makes the watch's sync
 * cookies (below the watch's root, "" the root itself; NULL: unknown), with
 * its device and inode as the clock was taken. */
struct wm_at {
  char *watch;
  char *rel;
  char *clock;
  guint64 recrawls;
  char *cookies;
  guint64 cookies_dev, cookies_ino;
};
void wm_at_clear(struct wm_at *a);

/* The watch holding directory REAL (a real path), and its clock now: *AT.
 * Mode auto: only a watch that is there; on: made if there is none. False
 * with *WHY set (to free). */
bool wm_clock_of(struct wm *w, const char *real, struct wm_at *at, char **why);

/* The paths below WAS->rel of WAS->watch that changed since WAS->clock,
 * relative to WAS->rel, into *NAMES (char *, to free), and the clock of
 * the answer into *NOW (WAS's watch, root and cookie directory). False with
 * *WHY set (to free) when the answer cannot be trusted to name every
 * change: a fresh instance (the daemon restarted, another watch), a
 * recrawl since, the watch gone, any error; and, without asking, when the
 * answer could not come at once: the cookie directory is not WAS's (gone
 * or replaced since the clock), or it is the walk's root itself. */
bool wm_since(struct wm *w, const struct wm_at *was, GPtrArray **names, struct wm_at *now,
              char **why);

/* The one BSER value of the LEN bytes at P, read into the JSON reader's
 * tree (json.h; numbers read, not kept), or NULL when they are not exactly
 * one (tests/fuzz/fuzz_bser.c). */
struct json_value *wm_bser_value(const guint8 *p, size_t len);

G_END_DECLS

#endif /* TRAWL_CACHE_WATCHMAN_H */
