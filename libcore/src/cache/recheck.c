/* trawl — the re-check of a cached walk: is every directory it recorded
 * as recorded? (cachefile.h, walk_unchanged)
 *
 * A no-op build's whole question: each directory of the walk's index is
 * stat'ed as the walk would open it and its stamp compared by the walk's
 * own rule (dir_check(), memo.c); nothing is read. The index is read entry
 * by entry (format.h) — no memo is made — and from CHECK_THREADS_FROM
 * directories on the stats are shared among up to four threads, each
 * starting where its share of the index does, all stopping at the first
 * directory that differs.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "cache-testing.h"
#include "cachefile.h"
#include "format.h"

/* Is path PATH (LEN bytes) below ROOT_FD reachable through directories
 * only, no link on the way, as a walk opens a start directory? */
static bool
reachable(int root_fd, const char *path, size_t len)
{
  char *p = g_strndup(path, len);
  bool ok = true;
  for (size_t i = 1; i <= len && ok; i++) {
    if (i < len && p[i] != '/')
      continue;
    char c = p[i];
    p[i] = '\0';
    struct stat st;
    ok = fstatat(root_fd, p, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
    p[i] = c;
  }
  g_free(p);
  return ok;
}

/* Is directory E (below ROOT_FD) as recorded (dir_check(), the walk's
 * rule)? Its stat is taken as the walk would open it: a start directory
 * component by component, no link on the way. */
static bool
entry_unchanged(const struct dir_entry *e, int root_fd)
{
  struct stat st;
  bool there;
  if (e->len == 0)
    there = fstat(root_fd, &st) == 0;
  else
    there = (!(e->flags & DIR_START) || reachable(root_fd, e->path, e->len)) &&
            fstatat(root_fd, e->path, &st, AT_SYMLINK_NOFOLLOW) == 0;
  there = there && S_ISDIR(st.st_mode);
  return dir_check(&e->was, there ? &st : NULL, root_fd, e->path) == DIR_SAME;
}

/* A share of the entries for one thread of walk_unchanged(): N entries of
 * the index from AT on, PATH the path of the entry before them (their
 * paths share its start), DEV the walk's device. */
struct share {
  const guint8 *at, *end;
  guint32 n;
  int root_fd;
  guint64 dev;
  GString *path;        /* the share's own */
  gint *differs;        /* shared: set when any entry differs */
};

static gpointer
check_share(gpointer data)
{
  struct share *sh = data;
  struct rd r = {sh->at, sh->end, false};
  for (guint32 i = 0; i < sh->n && !g_atomic_int_get(sh->differs); i++) {
    struct dir_entry e;
    r_dir(&r, &e, sh->dev, sh->path);
    if (r.bad || !entry_unchanged(&e, sh->root_fd))
      g_atomic_int_set(sh->differs, 1);
  }
  return NULL;
}

/* From this many directories on, the stats are shared among threads: a
 * stat is mostly the kernel's path lookup, and two threads' lookups run
 * side by side. Not from fewer: starting and joining a thread costs as much
 * as a few dozen stats (docs/adr/0004-cache-file-read-cost.md). */
#define CHECK_THREADS_FROM 512

/* Is every directory cached walk W recorded (below ROOT_FD, its root as
 * plan_group() opened it) stamped as then,
 * with its ignore files, and none of them racy? Then a walk would replay
 * every one and find what the cache holds: the check of a no-op build,
 * one stat per directory and nothing read. */
bool
walk_unchanged(const struct cached_walk *w, int root_fd)
{
  gint differs = 0;
  const unsigned threads =
      w->n_dirs >= CHECK_THREADS_FROM ? MIN(g_get_num_processors(), 4u) : 1;
  struct share shares[4];
  GThread *helpers[4] = {NULL};
  /* Every entry: its file's region of them read and checked whole (a
   * block that does not check out: not as recorded). */
  struct rd r;
  if (!cached_walk_dirs(w, &r.p, &r.end))
    return false;
  r.bad = false;
  /* Where each share starts, and the path there: the entries are as long
   * as their paths, and each path is told by the one before it. */
  GString *path = g_string_new(NULL);
  for (unsigned t = 0; t < threads; t++) {
    const guint32 from = (guint32)((guint64)w->n_dirs * t / threads);
    const guint32 to = (guint32)((guint64)w->n_dirs * (t + 1) / threads);
    shares[t] = (struct share){r.p,     r.end, to - from, root_fd, w->dev,
                               g_string_new_len(path->str, (gssize)path->len), &differs};
    for (guint32 i = from; t + 1 < threads && i < to; i++) {
      struct dir_entry e;
      r_dir(&r, &e, w->dev, path);
    }
  }
  g_string_free(path, TRUE);
  differs = r.bad;
  /* The helpers started set DIFFERS as they go: read it atomically. */
  for (unsigned t = 1; t < threads && !g_atomic_int_get(&differs); t++)
    helpers[t] = g_thread_new("trawl-check", check_share, &shares[t]);
  if (!g_atomic_int_get(&differs))
    check_share(&shares[0]);
  for (unsigned t = 1; t < threads; t++)
    if (helpers[t])
      g_thread_join(helpers[t]);
  for (unsigned t = 0; t < threads; t++)
    g_string_free(shares[t].path, TRUE);
  return !differs;
}

/* The rule of cachefile.h: what watchman's answer lets the re-check and
 * the replay leave unstat'ed (the part that needs no answer: format.h's
 * watchman_may_vouch()). */
bool
watchman_vouches(const struct dir_stamp *was, size_t len, bool start_or_way, GHashTable *touched,
                 const char *path)
{
  return watchman_may_vouch(was, path, len, start_or_way) && !g_hash_table_contains(touched, path);
}

/* walk_unchanged_but() by reading every entry: for names so many that
 * finding each costs more. */
static bool
each_unchanged_but(const struct cached_walk *w, int root_fd, GHashTable *touched,
                   guint64 *checked)
{
  struct rd r;
  if (!cached_walk_dirs(w, &r.p, &r.end))
    return false;
  r.bad = false;
  GString *path = g_string_new(NULL);
  bool same = true;
  guint32 i = 0;
  for (; i < w->n_dirs && same; i++) {
    struct dir_entry e;
    r_dir(&r, &e, w->dev, path);
    if (r.bad)
      break;
    if (watchman_vouches(&e.was, e.len, (e.flags & (DIR_START | DIR_WAY)) != 0, touched, e.path))
      continue;
    (*checked)++;
    same = entry_unchanged(&e, root_fd);
  }
  __atomic_fetch_add(&cache_test_dirs_decoded, i, __ATOMIC_RELAXED);
  g_string_free(path, TRUE);
  return same && !r.bad;
}

static int
compare_numbers(gconstpointer a, gconstpointer b)
{
  const guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
  return (x > y) - (x < y);
}

/* Watchman names every path created, deleted, renamed or changed since its
 * clock; a directory it does not name, and none of whose entries it names,
 * has the stamp it had (cachefile.h). The rule that trusts a directory is
 * still dir_check(): this only leaves out the stats that could not find a
 * difference. Those it cannot vouch for are stat'ed every time: the root
 * (a change of the query's own root is not reported), a racy record, a
 * start directory and the way to one (a link put on the way changes no
 * name below it), and a directory holding a nested repository (its
 * sources are in its .git, where watchman names nothing). The writer
 * listed those (format.h, must); each name is looked for through the marks
 * (dir_cursor_find()), so the entries read are the names' and the list's,
 * not the index's (a name in .git, which every git command writes and no
 * walk records, costs a search), and of the file only the blocks that hold
 * them are read, each checked against its sum (one that does not check out:
 * not as recorded). The directories are stat'ed in the
 * index's order, as a pass over every entry would, so the same one is the
 * first found to differ and *CHECKED is the same. */
bool
walk_unchanged_but(const struct cached_walk *w, int root_fd, GHashTable *touched,
                   guint64 *checked)
{
  *checked = 0;
  /* A search reads half the entries between two marks, on average. */
  if ((guint64)g_hash_table_size(touched) * (w->mark_every / 2 + 1) >= w->n_dirs)
    return each_unchanged_but(w, root_fd, touched, checked);
  GArray *numbers = g_array_sized_new(FALSE, FALSE, sizeof(guint32), w->n_must + 8);
  struct rd must = {w->must_at, w->must_end, false};
  guint32 at = 0;
  for (guint32 k = 0; k < w->n_must; k++) {
    const guint32 gap = (guint32)r_var(&must); /* checked by the reader */
    at = k ? at + gap + 1 : gap;
    g_array_append_val(numbers, at);
  }
  const guint32 listed = numbers->len;
  struct dir_cursor c;
  dir_cursor_init(&c, w);
  GHashTableIter it;
  gpointer name;
  g_hash_table_iter_init(&it, touched);
  while (g_hash_table_iter_next(&it, &name, NULL)) {
    struct dir_entry e;
    guint32 i;
    /* One watchman could never vouch for is listed already. */
    if (dir_cursor_find(&c, name, strlen(name), &i, &e) &&
        watchman_may_vouch(&e.was, e.path, e.len, (e.flags & (DIR_START | DIR_WAY)) != 0))
      g_array_append_val(numbers, i);
  }
  if (numbers->len > listed)
    g_array_sort(numbers, compare_numbers);
  bool same = !c.bad && !must.bad;
  for (guint k = 0; k < numbers->len && same; k++) {
    const guint32 i = g_array_index(numbers, guint32, k);
    if (k > 0 && i == g_array_index(numbers, guint32, k - 1))
      continue;
    struct dir_entry e;
    same = dir_cursor_at(&c, i, &e);
    if (same) {
      (*checked)++;
      same = entry_unchanged(&e, root_fd);
    }
  }
  dir_cursor_clear(&c);
  g_array_unref(numbers);
  return same;
}

bool
cached_walk_must(const struct cached_walk *w,
                 void (*fn)(const char *path, size_t len, void *data), void *data)
{
  struct rd must = {w->must_at, w->must_end, false};
  struct dir_cursor c;
  dir_cursor_init(&c, w);
  guint32 at = 0;
  bool ok = true;
  for (guint32 k = 0; k < w->n_must && ok; k++) {
    const guint32 gap = (guint32)r_var(&must); /* checked by the reader */
    at = k ? at + gap + 1 : gap;
    struct dir_entry e;
    ok = !must.bad && dir_cursor_at(&c, at, &e);
    if (ok)
      fn(e.path, e.len, data);
  }
  dir_cursor_clear(&c);
  return ok;
}

bool
walk_changed(const struct cached_walk *w, int root_fd, GHashTable *changed)
{
  struct rd r;
  if (!cached_walk_dirs(w, &r.p, &r.end))
    return false;
  r.bad = false;
  GString *path = g_string_new(NULL);
  for (guint32 i = 0; i < w->n_dirs && !r.bad; i++) {
    struct dir_entry e;
    r_dir(&r, &e, w->dev, path);
    if (!r.bad && !entry_unchanged(&e, root_fd))
      g_hash_table_add(changed, g_strndup(e.path, e.len));
  }
  g_string_free(path, TRUE);
  return !r.bad;
}
