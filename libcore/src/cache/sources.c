/* trawl — the ignore sources outside a cached walk (sources.h): found,
 * stamped before the walk, compared with the record, and the index's
 * answers asked again when it moved.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sources.h"
#include "../gitindex.h"
#include "../ignore.h"

/* A source's stamp now (memo.c: the one rule, a nested repository's too). */
static void
source_stamp(const char *path, guint8 kind, struct stamp *out)
{
  source_stamp_at(AT_FDCWD, path, kind, out);
}

static bool sources_recheck(struct sources *s, const struct cached_walk *was, const char *abs,
                            unsigned flags);

/* The sources of the walk of ROOT with options O. WAS, the cached walk (or
 * NULL): when its sources' stamps all hold, they are its sources still. */
void
sources_init(struct sources *s, const char *root, const TrawlWalkOptions *o,
             const struct cached_walk *was)
{
  s->stamps = g_array_new(FALSE, FALSE, sizeof(struct stamp));
  s->env = g_string_new(NULL);
  s->held = s->index_moved = false;
  G_STATIC_ASSERT((int)TRAWL_IGNORE_VCS == (int)IGNORE_VCS &&
                  (int)TRAWL_IGNORE_DOT == (int)IGNORE_DOT);
  char *abs = realpath(root, NULL);
  if (abs && was && sources_recheck(s, was, abs, o->ignore)) {
    free(abs);
    return;
  }
  s->paths = g_ptr_array_new_with_free_func(g_free);
  s->kinds = g_byte_array_new();
  s->index_moved = false;
  g_string_truncate(s->env, 0);
  g_array_set_size(s->stamps, 0);
  if (abs)
    ignore_sources(o->ignore, abs, s->paths, s->kinds, s->env);
  free(abs);
  for (guint i = 0; i < s->paths->len; i++) {
    struct stamp st;
    source_stamp(s->paths->pdata[i], s->kinds->data[i], &st);
    g_array_append_val(s->stamps, st);
  }
}

void
sources_clear(struct sources *s)
{
  g_ptr_array_unref(s->paths);
  g_byte_array_unref(s->kinds);
  g_array_unref(s->stamps);
  g_string_free(s->env, TRUE);
}

/* Is a source recorded as KIND the index? */
static bool
is_index(guint8 kind)
{
  return kind == IGNORE_SOURCE_INDEX || kind == SOURCE_INDEX_RACY;
}

/* Were W's sources stamped as SRC's are now (and not racy then)? The index
 * may differ: SRC->index_moved says so, and its answers decide
 * (index_recheck_*). */
bool
sources_unchanged(const struct cached_walk *w, struct sources *src)
{
  bool same = w->env->len == src->env->len && memcmp(w->env->str, src->env->str, w->env->len) == 0 &&
              w->paths->len == src->paths->len;
  for (guint i = 0; same && i < w->paths->len; i++) {
    const guint8 kind = w->kinds->data[i];
    const bool stamped = stamp_equal(&g_array_index(w->stamps, struct stamp, i),
                                     &g_array_index(src->stamps, struct stamp, i));
    same = strcmp(w->paths->pdata[i], src->paths->pdata[i]) == 0 &&
           (is_index(kind) ? src->kinds->data[i] == IGNORE_SOURCE_INDEX
                           : kind != SOURCE_RACY && stamped);
    if (same && is_index(kind) && (kind == SOURCE_INDEX_RACY || !stamped))
      src->index_moved = true;
  }
  return same;
}

/* Do WAS's sources hold for a walk of the root at ABS (absolute, links
 * resolved) with ignore FLAGS: the same environment, the same root, every
 * source stamped as recorded and none racy? Then they are the sources now
 * (S gets them, with the new stamps), without asking ignore_sources()
 * again: the list follows from ABS, FLAGS, the environment and the stamps
 * of what is in it (ignore.h), and finding it again (git's config files,
 * the `.git`s up to the top) costs more than the stats
 * (docs/adr/0004-cache-file-read-cost.md). */
static bool
sources_recheck(struct sources *s, const struct cached_walk *was, const char *abs,
                unsigned flags)
{
  ignore_sources_env(s->env);
  if (s->env->len != was->env->len || memcmp(s->env->str, was->env->str, s->env->len) != 0)
    return false;
  if (flags & (IGNORE_VCS | IGNORE_DOT)) {
    /* The first source is the root's own `.git`: the same root. */
    char *dotgit = g_build_filename(abs, ".git", NULL);
    const bool same = was->paths->len > 0 && strcmp(was->paths->pdata[0], dotgit) == 0;
    g_free(dotgit);
    if (!same)
      return false;
  } else if (was->paths->len > 0) {
    return false;
  }
  bool racy_index = false;
  for (guint i = 0; i < was->paths->len; i++) {
    struct stamp st;
    const guint8 kind = was->kinds->data[i];
    if (kind == SOURCE_RACY)
      return false;
    source_stamp(was->paths->pdata[i], kind, &st);
    const bool stamped = stamp_equal(&st, &g_array_index(was->stamps, struct stamp, i));
    if (is_index(kind)) {
      s->index_moved = s->index_moved || kind == SOURCE_INDEX_RACY || !stamped;
      racy_index = racy_index || kind == SOURCE_INDEX_RACY;
    } else if (!stamped) {
      return false;
    }
    g_array_append_val(s->stamps, st);
  }
  s->paths = g_ptr_array_ref(was->paths);
  if (racy_index) {
    /* The kinds to write: an index racy then is an index now. */
    s->kinds = g_byte_array_new();
    for (guint i = 0; i < was->kinds->len; i++) {
      const guint8 kind = is_index(was->kinds->data[i]) ? IGNORE_SOURCE_INDEX : was->kinds->data[i];
      g_byte_array_append(s->kinds, &kind, 1);
    }
  } else {
    s->kinds = g_byte_array_ref(was->kinds);
  }
  s->held = true;
  return true;
}

/* ---- the index's answers, asked again ---- */

struct asking {
  struct gitindex_reader *rd;
  GString *path;        /* the root's path below the top, then a question's path */
  size_t plen;
  GHashTable *changed;  /* char * -> NULL: directories whose answers changed */
};

static void
ask_again(const char *dir, size_t dlen, const char *name, size_t nlen, unsigned type, void *data)
{
  struct asking *a = data;
  g_string_truncate(a->path, a->plen);
  if (dlen) {
    g_string_append_len(a->path, dir, (gssize)dlen);
    g_string_append_c(a->path, '/');
  }
  g_string_append_len(a->path, name, (gssize)nlen);
  const bool now = type & ASKED_DIR ? gitindex_reader_has_dir(a->rd, a->path->str, a->path->len)
                                    : gitindex_reader_has_file(a->rd, a->path->str, a->path->len);
  if (now != ((type & ASKED_TRACKED) != 0))
    g_hash_table_add(a->changed, g_strndup(dir, dlen));
}

struct index_pending {
  struct gitindex_reader *rd;
  char *prefix;         /* the root's path below the top, with its '/', or "" */
};

struct index_pending *
index_recheck_start(const char *root, const struct sources *src)
{
  const char *index_path = NULL;
  for (guint i = 0; i < src->paths->len && index_path == NULL; i++)
    if (src->kinds->data[i] == IGNORE_SOURCE_INDEX)
      index_path = src->paths->pdata[i];
  char *abs = realpath(root, NULL);
  char *top = abs ? ignore_find_top(abs) : NULL;
  struct index_pending *p = NULL;
  if (index_path && top) {
    p = g_new0(struct index_pending, 1);
    /* Read as a walk reads it: its questions are asked once the directories
     * are stat'ed, and it reads (meanwhile, and then) only as far as they
     * need: a question about `build/` is answered early in a large index,
     * and the rest is never read (issue 31: reading all of 100,000 entries
     * beside the stats cost the re-check more than asking did). */
    p->rd = ignore_index_reader(index_path);
    /* Questions are asked by paths below the top, as the walk asked them. */
    const size_t tl = strlen(top);
    p->prefix = strcmp(top, abs) != 0 ? g_strconcat(abs + (tl == 1 ? 1 : tl + 1), "/", NULL)
                                      : g_strdup("");
  }
  free(abs);
  g_free(top);
  return p;
}

bool
index_recheck_finish(struct index_pending *p, const struct cached_walk *w, GHashTable **changed)
{
  *changed = NULL;
  struct asking a = {p->rd, g_string_new(p->prefix), 0,
                     g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL)};
  a.plen = a.path->len;
  bool ok = cached_walk_asked(w, ask_again, &a);
  /* Stopped where the questions left it, as a walk's read is: damage past
   * what they needed is not seen (docs/ignore.md), and one met before
   * answers nothing (an answer "tracked" waits for the whole file). */
  const GError *err = NULL;
  gitindex_reader_stop(p->rd, &err);
  ok = ok && err == NULL;
  gitindex_reader_free(p->rd);
  g_free(p->prefix);
  g_free(p);
  g_string_free(a.path, TRUE);
  if (!ok) {
    g_hash_table_unref(a.changed);
    return false;
  }
  *changed = a.changed;
  return true;
}


/* What the cache file writes of SRC. */
struct source_list
source_list_of(const struct sources *src)
{
  struct source_list l = {src->paths, src->kinds, src->stamps, src->env};
  return l;
}
