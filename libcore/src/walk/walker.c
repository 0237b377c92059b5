/* trawl — the walker's public face: configuration, runs, results
 * (trawl/walk.h). The walk itself is sched.c's; see walk-run.h for the map.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "walk-run.h"
#include "walk-testing.h"

static void
query_free(struct query *q)
{
  g_ptr_array_unref(q->includes);
  g_ptr_array_unref(q->excludes);
  g_free(q);
}

void
trawl_walk_options_init(TrawlWalkOptions *o)
{
  memset(o, 0, sizeof *o);
  o->types = TRAWL_ENTRY_FILE;
  o->max_depth = -1;
  o->ignore = TRAWL_IGNORE_VCS | TRAWL_IGNORE_DOT;
}

TrawlWalker *
trawl_walker_new(const TrawlWalkOptions *options)
{
  TrawlWalker *w = g_new0(TrawlWalker, 1);
  if (options)
    w->opt = *options;
  else
    trawl_walk_options_init(&w->opt);
  if (w->opt.types == 0)
    w->opt.types = TRAWL_ENTRY_FILE;
  w->roots = g_ptr_array_new_with_free_func(g_free);
  w->includes = g_ptr_array_new();
  w->excludes = g_ptr_array_new();
  w->queries = g_ptr_array_new_with_free_func((GDestroyNotify)query_free);
  struct query *q = g_new0(struct query, 1);
  q->includes = g_ptr_array_ref(w->includes);
  q->excludes = g_ptr_array_ref(w->excludes);
  q->hidden = w->opt.hidden;
  q->types = w->opt.types;
  q->max_depth = w->opt.max_depth;
  g_ptr_array_add(w->queries, q);
  w->problems = g_ptr_array_new_with_free_func((GDestroyNotify)g_error_free);
  w->ignore_files = g_ptr_array_new_with_free_func((GDestroyNotify)ignore_file_unref);
  w->helper_floor = HELPER_FLOOR;
  w->patset_min = PATSET_MIN;
  return w;
}

TrawlWalker *
trawl_walker_new_shared(const TrawlWalkOptions *options)
{
  TrawlWalker *w = trawl_walker_new(options);
  g_ptr_array_set_size(w->queries, 0);
  w->shared = true;
  return w;
}

unsigned
trawl_walker_add_query(TrawlWalker *w, const TrawlPattern *const *includes, size_t n_includes,
                       const TrawlPattern *const *excludes, size_t n_excludes,
                       const TrawlWalkOptions *options)
{
  g_return_val_if_fail(w->shared && w->queries->len < TRAWL_WALK_MAX_QUERIES, 0);
  TrawlWalkOptions defaults;
  if (options == NULL) {
    trawl_walk_options_init(&defaults);
    options = &defaults;
  }
  struct query *q = g_new0(struct query, 1);
  q->includes = g_ptr_array_new();
  for (size_t i = 0; i < n_includes; i++)
    g_ptr_array_add(q->includes, (gpointer)includes[i]);
  q->excludes = g_ptr_array_new();
  for (size_t i = 0; i < n_excludes; i++)
    g_ptr_array_add(q->excludes, (gpointer)excludes[i]);
  q->hidden = options->hidden;
  q->types = options->types ? options->types : TRAWL_ENTRY_FILE;
  q->max_depth = options->max_depth;
  g_ptr_array_add(w->queries, q);
  return w->queries->len - 1;
}

void
trawl_walker_free(TrawlWalker *w)
{
  if (w == NULL)
    return;
  g_ptr_array_unref(w->roots);
  g_ptr_array_unref(w->includes);
  g_ptr_array_unref(w->excludes);
  g_ptr_array_unref(w->queries);
  g_ptr_array_unref(w->problems);
  g_ptr_array_unref(w->ignore_files);
  g_free(w);
}

void
trawl_walker_add_root(TrawlWalker *w, const char *root)
{
  g_ptr_array_add(w->roots, g_strdup(root));
}

void
walker_default_root(TrawlWalker *w)
{
  if (w->roots->len == 0)
    trawl_walker_add_root(w, ".");
}

void
trawl_walker_add_include(TrawlWalker *w, const TrawlPattern *p)
{
  g_return_if_fail(!w->shared);
  g_ptr_array_add(w->includes, (gpointer)p);
}

void
trawl_walker_add_exclude(TrawlWalker *w, const TrawlPattern *p)
{
  g_return_if_fail(!w->shared);
  g_ptr_array_add(w->excludes, (gpointer)p);
}

bool
trawl_walker_add_ignore_file(TrawlWalker *w, const char *path, GError **error)
{
  struct ignore_file *f = NULL;
  int err = ignore_file_read(AT_FDCWD, path, false, path, &f);
  if (err != 0) {
    g_set_error(error, TRAWL_WALK_ERROR, TRAWL_WALK_ERROR_IGNORE, "%s: %s", path,
                err == EFBIG ? "larger than 100 MiB" : g_strerror(err));
    return false;
  }
  g_ptr_array_add(w->ignore_files, f);
  return true;
}

void
trawl_walker_set_helper_floor(TrawlWalker *w, unsigned floor)
{
  w->helper_floor = floor;
}

void
trawl_walker_set_memo(TrawlWalker *w, const struct walk_memo *old, struct walk_memo *out)
{
  w->memo_old = old;
  w->memo_out = out;
}

void
trawl_walker_set_patset_min(TrawlWalker *w, unsigned min)
{
  w->patset_min = min;
}

void
trawl_walker_set_open_hook(TrawlWalker *w, trawl_open_hook hook, void *data)
{
  w->open_hook = hook;
  w->open_hook_data = data;
}

const GPtrArray *
trawl_walker_problems(const TrawlWalker *w)
{
  return w->problems;
}

void
trawl_walker_stats(const TrawlWalker *w, TrawlWalkStats *out)
{
  *out = w->stats;
}

bool
trawl_walker_run(TrawlWalker *w, TrawlEntryFunc fn, void *data, GError **error)
{
  g_return_val_if_fail(fn != NULL, false);
  walker_default_root(w);
  return run_walk(w, fn, data, false, error);
}

bool
trawl_walker_run_sorted(TrawlWalker *w, TrawlEntryFunc fn, void *data, GError **error)
{
  g_return_val_if_fail(fn != NULL, false);
  walker_default_root(w);
  return run_walk(w, fn, data, true, error);
}

static bool
collect_one(const TrawlEntry *e, void *data)
{
  g_ptr_array_add(data, g_strndup(e->path, e->len));
  return true;
}

static int
compare_paths(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A sorted walk of W whose results FN puts, each a block to g_free(), into
 * a new array; NULL with ERROR set when the walk could not run. */
static GPtrArray *
collect_with(TrawlWalker *w, TrawlEntryFunc fn, GError **error)
{
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  walker_default_root(w);
  if (!run_walk(w, fn, out, true, error)) {
    g_ptr_array_unref(out);
    return NULL;
  }
  return out;
}

GPtrArray *
trawl_walker_collect(TrawlWalker *w, GError **error)
{
  GPtrArray *out = collect_with(w, collect_one, error);
  /* Each root's results come sorted; merged, they are sorted again. */
  if (out && w->roots->len > 1)
    g_ptr_array_sort(out, compare_paths);
  return out;
}

/* A copy of E in one block, its path after it (g_free() frees both). */
static bool
collect_entry(const TrawlEntry *e, void *data)
{
  TrawlEntry *copy = g_malloc(sizeof *copy + e->len + 1);
  char *path = (char *)(copy + 1);
  memcpy(path, e->path, e->len);
  path[e->len] = '\0';
  *copy = *e;
  copy->path = path;
  g_ptr_array_add(data, copy);
  return true;
}

GPtrArray *
trawl_walker_collect_entries(TrawlWalker *w, GError **error)
{
  return collect_with(w, collect_entry, error);
}
