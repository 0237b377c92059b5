/* trawl — the ignore sources outside a cached walk (private; cache.c,
 * sources.c).
 *
 * A walk's answer rests on ignore files outside the directories it reads:
 * the excludes file, info/exclude, git's config that names them, the `.git`s
 * up to the top, the index (ignore.h: ignore_sources()). A cached run
 * stamps them before it walks, and trusts the record only when they are
 * stamped as recorded — but for the index, which git writes often and
 * mostly without changing an answer: its questions are asked again
 * (index_recheck_*) and only the directories whose answer changed are read.
 */
#ifndef TRAWL_CACHE_SOURCES_H
#define TRAWL_CACHE_SOURCES_H

#include <stdbool.h>
#include <glib.h>

#include "cachefile.h"
#include "trawl/walk.h"

G_BEGIN_DECLS

/* The sources of one walk: paths, kinds and stamps (taken before the walk);
 * ENV, the environment that chose them. */
struct sources {
  GPtrArray *paths;
  GByteArray *kinds;
  GArray *stamps;       /* struct stamp */
  GString *env;
  bool held;            /* they are the cached walk's, every stamp as recorded (but the
                           index's, which INDEX_MOVED tells) */
  bool index_moved;     /* the index is not stamped as recorded (or was racy then): its
                           answers are to be asked again (index_recheck_*) */
};

/* The sources of the walk of ROOT with options O, stamped now. WAS, the
 * cached walk (or NULL): when its sources' stamps all hold, they are its
 * sources still (S->held), found without asking again. */
void sources_init(struct sources *s, const char *root, const TrawlWalkOptions *o,
                  const struct cached_walk *was);
void sources_clear(struct sources *s);

/* Were W's sources stamped as SRC's are now (and not racy then)? The index
 * may differ: SRC->index_moved says so, and its answers decide
 * (index_recheck_*). */
bool sources_unchanged(const struct cached_walk *w, struct sources *src);

/* The index of walk W (of ROOT, its sources SRC) changed: ask it again
 * every question the walk asked of it, in two steps, so that the index is
 * read (in a thread of its own when it is large: gitindex.h) while the
 * caller stats the recorded directories. index_recheck_start() starts
 * reading it: NULL when that cannot be (no index among the sources, no
 * work tree above ROOT): nothing of the walk is to be trusted.
 * index_recheck_finish() asks, and frees P: into *CHANGED the directories
 * (char *, relative to the root) where an answer differs (none: the walk's
 * answer stands, and so does the cache's); false when that cannot be known
 * (the index or the records cannot be read): nothing of the walk is to be
 * trusted. */
struct index_pending;
struct index_pending *index_recheck_start(const char *root, const struct sources *src);
bool index_recheck_finish(struct index_pending *p, const struct cached_walk *w,
                          GHashTable **changed);

/* What the cache file writes of SRC. */
struct source_list source_list_of(const struct sources *src);

G_END_DECLS

#endif /* TRAWL_CACHE_SOURCES_H */
