/* trawl — the watch list of a cache file: the paths whose modification
 * times a build tool compares to know that a re-check would find nothing
 * changed (trawl/cache.h, trawl_cache_watch; the one list `trawl check
 * --depfile` writes for the Meson and CMake plugins alike).
 *
 * Every directory a cached walk recorded (a start directory that was not
 * there: the directory that would hold it), the ignore files each one
 * holds, the directory holding each root, and the ignore sources outside
 * the walk: a file as itself, a directory or a missing name by the nearest
 * directory above it that is there. A record that no list can prove (racy,
 * never trusted, a walk with problems) sets ALWAYS.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cachefile.h"
#include "format.h"
#include "../ignore.h"
#include "trawl/cache.h"

/* Where the list goes: FN until it says stop. */
struct sink {
  TrawlCacheWatchUntilFunc fn;
  void *data;
  bool stopped;
};

static void
emit(struct sink *s, const char *path)
{
  if (!s->stopped && !s->fn(path, s->data))
    s->stopped = true;
}

/* Hand FN what shows a change of the outside source at absolute PATH. A
 * file that is there as itself: an edit, a rename over it or its deletion
 * shows on it (a missing input is a change to a build tool); so does a
 * directory stamped whole (WHOLE: a nested repository's git directory). A
 * directory otherwise (a `.git`: only its being one counts, and git writes
 * in it all the time) or a name not there by the directory that holds it,
 * where its making or removal shows. */
static void
watch_source(const char *p, bool whole, struct sink *s)
{
  struct stat st;
  if (stat(p, &st) == 0 && (whole || !S_ISDIR(st.st_mode))) {
    emit(s, p);
    return;
  }
  /* The nearest directory up that is there (a missing one would be
   * taken for a change every time). */
  char *dir = g_path_get_dirname(p);
  while (stat(dir, &st) != 0 && strcmp(dir, "/") != 0 && strcmp(dir, ".") != 0) {
    char *up = g_path_get_dirname(dir);
    g_free(dir);
    dir = up;
  }
  emit(s, dir);
  g_free(dir);
}

/* Hand S the path below W's root of REL ("" the root). */
static void
emit_below_root(struct sink *s, const struct cached_walk *w, GString *buf, const char *rel)
{
  g_string_assign(buf, w->root);
  if (rel[0]) {
    if (buf->len && buf->str[buf->len - 1] != '/')
      g_string_append_c(buf, '/');
    g_string_append(buf, rel);
  }
  emit(s, buf->str);
}

/* Hand S the path of every directory cached walk W recorded and of each
 * ignore file one of them holds; *ALWAYS set as trawl_cache_watch() says.
 * False if the index does not parse or its directory entries do not check
 * out (as far as it was read: a list S stopped is not read to its end). */
static bool
cached_walk_watch(const struct cached_walk *w, struct sink *s, bool *always)
{
  struct rd r;
  if (!cached_walk_dirs(w, &r.p, &r.end))
    return false;
  r.bad = false;
  GString *path = g_string_new(NULL);
  GString *file = g_string_new(NULL);
  GString *full = g_string_new(NULL);
  *always = *always || w->problems;
  for (guint32 i = 0; i < w->n_dirs && !r.bad && !s->stopped; i++) {
    struct dir_entry e;
    r_dir(&r, &e, w->dev, path);
    if (r.bad)
      break;
    *always = *always || e.was.racy || e.was.rules_racy;
    if (!e.was.st.present) {
      /* A start directory that was not there: it appears in its parent. */
      const char *slash = strrchr(e.path, '/');
      g_string_assign(file, e.path);
      g_string_truncate(file, slash ? (gsize)(slash - e.path) : 0);
      emit_below_root(s, w, full, file->str);
      continue;
    }
    emit_below_root(s, w, full, e.path);
    /* A nested repository's sources, as the top's below. */
    const uint8_t *p = e.was.repo, *end = p ? p + e.was.repo_len : NULL;
    const char *src;
    size_t slen;
    unsigned kind;
    while (p && repo_sources_next(&p, end, &src, &slen, &kind)) {
      g_string_truncate(file, 0);
      if (src[0] != '/') {
        g_string_append(file, w->root);
        g_string_append_c(file, '/');
        if (e.len) {
          g_string_append(file, e.path);
          g_string_append_c(file, '/');
        }
      }
      g_string_append_len(file, src, (gssize)slen);
      char *clean = g_canonicalize_filename(file->str, NULL);
      watch_source(clean, kind == IGNORE_SOURCE_GITDIR, s);
      g_free(clean);
    }
    for (unsigned k = 0; k < IGNORE_FILES; k++) {
      if (!(e.was.has & ignore_file_has[k]))
        continue;
      g_string_assign(file, e.path);
      if (e.len)
        g_string_append_c(file, '/');
      g_string_append(file, ignore_file_name[k]);
      emit_below_root(s, w, full, file->str);
    }
  }
  const bool ok = !r.bad && (s->stopped || r.p == r.end);
  g_string_free(path, TRUE);
  g_string_free(file, TRUE);
  g_string_free(full, TRUE);
  return ok;
}

/* Is the source at absolute PATH, of KIND, one that only its git directory
 * could stand for in the list, and that git itself never makes or removes
 * there? Then it is left out: that directory is where git makes its
 * index.lock on most commands and watchman its sync cookie at every
 * question, so Ninja would run the check after any git command and, with
 * watchman, at every build. They are a git directory's `objects/` and
 * `refs/` (only their being there counts: git never removes them) and a
 * `commondir` that is not there (git makes one only in a linked work tree's
 * own git directory, as it makes that directory; there it is a file, and
 * listed). The check itself still stats them: one removed or made by hand
 * is seen by the next check that runs (docs/cache.md, "Skipping the
 * check"). */
static bool
left_to_the_check(const char *path, guint8 kind)
{
  if (kind == IGNORE_SOURCE_EXISTS)
    return true;
  const char *base = strrchr(path, '/');
  if (base == NULL || strcmp(base + 1, "commondir") != 0 || access(path, F_OK) == 0)
    return false;
  char *dir = g_strndup(path, (gsize)(base - path));
  char *head = g_build_filename(dir, "HEAD", NULL);
  const bool git_dir = access(head, F_OK) == 0;
  g_free(head);
  g_free(dir);
  return git_dir;
}

bool
trawl_cache_watch_until(const char *path, TrawlCacheWatchUntilFunc fn, void *data, bool *always,
                        GError **error)
{
  struct cache_file *c = cache_open(path, error);
  *always = c == NULL;
  if (c == NULL)
    return false;
  bool ok = true;
  struct sink s = {fn, data, false};
  for (guint i = 0; i < c->walks->len && ok && !s.stopped; i++) {
    const struct cached_walk *w = c->walks->pdata[i];
    ok = cached_walk_watch(w, &s, always);
    /* The directory holding the root: where the root itself is replaced
     * (by another directory or a link to an old one, which keep their own
     * times). */
    char *parent = g_build_filename(w->root, "..", NULL);
    emit(&s, parent);
    g_free(parent);
    for (guint k = 0; k < w->paths->len && !s.stopped; k++) {
      const char *p = w->paths->pdata[k];
      const guint8 kind = w->kinds->data[k];
      /* (An index racy when recorded is no reason: every check asks it
       * again whatever its stamp, so a check proves it as of the mark, and
       * a later write moves its time past the mark.) */
      *always = *always || kind == SOURCE_RACY;
      if (!left_to_the_check(p, kind))
        watch_source(p, false, &s);
    }
  }
  if (!ok) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: its index does not parse or does not check out", path);
    *always = true;
  }
  /* A list cut short proves nothing. */
  if (s.stopped)
    *always = true;
  cache_file_free(c);
  return ok;
}

struct every {
  TrawlCacheWatchFunc fn;
  void *data;
};

static bool
hand_on(const char *path, void *data)
{
  const struct every *e = data;
  e->fn(path, e->data);
  return true;
}

bool
trawl_cache_watch(const char *path, TrawlCacheWatchFunc fn, void *data, bool *always, GError **error)
{
  struct every e = {fn, data};
  return trawl_cache_watch_until(path, hand_on, &e, always, error);
}
