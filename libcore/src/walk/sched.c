/* trawl — the scheduler: a walk's items over worker threads.
 *
 * Every thread owns a deque of items; it pushes and pops at the back (LIFO:
 * depth first, which keeps few descriptors open and the path buffers warm)
 * and steals from the front of another's (the oldest, largest subtrees) —
 * except in a sorted run, where a thief takes the item its victim would read
 * next, so that what it reads is printed soon rather than held to the end
 * (docs/adr/0003-sorted-steal.md). The walk starts serial on the calling
 * thread; helper threads start only once the calling thread has read and
 * queued HELPER_FLOOR directories, so a small walk never pays for threads.
 * A shared count of pending items ends the walk when it reaches zero. Locks
 * are pthread's rather than GLib's: GMutex is a bare futex on Linux, which
 * ThreadSanitizer cannot see.
 *
 * run_walk() runs in phases, each a function below: the roots opened; the
 * workers, locks and ignore contexts (ignore.h) made; the query tables
 * (query.h) and the start directories planned and queued in order (each
 * with the ignore rules of the directories on the way, replay.c); the
 * calling thread working until nothing is pending; the workers' counters
 * and memos gathered; the rest of a sorted run printed (sorted.c).
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

struct igprob {
  struct run *run;
  unsigned root;
};

static gpointer worker_main(gpointer data);

static struct item *
take(struct worker *wk)
{
  struct run *run = wk->run;
  pthread_mutex_lock(&wk->lock);
  struct item *it = deque_pop_tail(&wk->deque);
  pthread_mutex_unlock(&wk->lock);
  for (unsigned k = 1; it == NULL && k < run->n_workers; k++) {
    struct worker *victim = &run->workers[(wk->index + k) % run->n_workers];
    pthread_mutex_lock(&victim->lock);
    it = run->sorted ? deque_pop_tail(&victim->deque) : deque_pop_head(&victim->deque);
    pthread_mutex_unlock(&victim->lock);
  }
  return it;
}

static void
start_helpers(struct run *run)
{
  if (run->n_workers < 2 || !g_atomic_int_compare_and_exchange(&run->started, 0, 1))
    return;
  for (unsigned i = 1; i < run->n_workers; i++)
    run->workers[i].thread = g_thread_new("trawl-walk", worker_main, &run->workers[i]);
}

static void
finish_item(struct run *run)
{
  if (g_atomic_int_dec_and_test(&run->pending)) {
    pthread_mutex_lock(&run->idle_lock);
    pthread_cond_broadcast(&run->idle_cond);
    pthread_mutex_unlock(&run->idle_lock);
  }
}

static gpointer
worker_main(gpointer data)
{
  struct worker *wk = data;
  struct run *run = wk->run;
  for (;;) {
    if (g_atomic_int_get(&run->stop)) {
      /* Drain what is left without processing it. */
      struct item *it = take(wk);
      if (it == NULL)
        break;
      item_free(run, it);
      finish_item(run);
      continue;
    }
    struct item *it = take(wk);
    if (it == NULL) {
      if (g_atomic_int_get(&run->pending) == 0)
        break;
      /* Nothing to take, but work is in flight: nap until it ends or a
       * moment passes (new items are not signalled, so as not to pay a
       * broadcast per directory). */
      pthread_mutex_lock(&run->idle_lock);
      if (g_atomic_int_get(&run->pending) != 0) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += 200 * 1000;
        if (until.tv_nsec >= 1000000000L) {
          until.tv_sec++;
          until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&run->idle_cond, &run->idle_lock, &until);
      }
      pthread_mutex_unlock(&run->idle_lock);
      continue;
    }
    step_dir(wk, it);
    /* Not read (gone, unreadable, a loop, another file system): an empty
     * node, so that printing goes on past it. */
    if (it->slot)
      g_atomic_pointer_set(it->slot, &no_node);
    item_free(run, it);
    if (run->sorted && wk->index == 0)
      nodes_emit(run, false);
    /* Enough work shown: directories read and queued together. (Queued
     * alone never grows in a narrow, deep tree, where depth-first keeps
     * the deque short: big's 38,383 directories never started a helper.) */
    if (wk->index == 0 && !g_atomic_int_get(&run->started) && wk->deque.length > 0 &&
        wk->stats.dirs_opened + wk->deque.length >= run->w->helper_floor)
      start_helpers(run);
    finish_item(run);
  }
  return NULL;
}

/* ---- a run's problems (any thread) ---- */

/* The walk's error domain (trawl/walk.h), here where a run makes its
 * errors: every other file that makes one calls into the scheduler, never
 * the scheduler into it. */
G_DEFINE_QUARK(trawl-walk-error-quark, trawl_walk_error)

void
problem_add(struct run *run, unsigned root, const char *path, TrawlWalkError code,
            const char *what)
{
  const char *r = run->w->roots->pdata[root];
  char *shown = path[0] == '\0' ? g_strdup(r)
                : strcmp(r, ".") == 0 ? g_strdup(path)
                : g_strconcat(r, "/", path, NULL);
  pthread_mutex_lock(&run->problem_lock);
  g_ptr_array_add(run->w->problems,
                  g_error_new(TRAWL_WALK_ERROR, code, "%s: %s", shown, what));
  pthread_mutex_unlock(&run->problem_lock);
  g_free(shown);
}

void
problem_loop_once(struct run *run, unsigned root, const char *path,
                 const struct stat *key, const char *what)
{
  char *k = g_strdup_printf("%ju:%ju", (uintmax_t)key->st_dev, (uintmax_t)key->st_ino);
  pthread_mutex_lock(&run->problem_lock);
  bool first = g_hash_table_add(run->loops, k);
  pthread_mutex_unlock(&run->problem_lock);
  if (first)
    problem_add(run, root, path, TRAWL_WALK_ERROR_LOOP, what);
}

/* An ignore file or an index that could not be read: a problem; the walk
 * goes on without it, as git goes on with a warning. */
static void
ignore_problem(void *data, const char *source, const char *what)
{
  struct igprob *p = data;
  if (g_path_is_absolute(source)) {
    pthread_mutex_lock(&p->run->problem_lock);
    g_ptr_array_add(p->run->w->problems,
                    g_error_new(TRAWL_WALK_ERROR, TRAWL_WALK_ERROR_IGNORE, "%s: %s", source, what));
    pthread_mutex_unlock(&p->run->problem_lock);
  } else {
    problem_add(p->run, p->root, source, TRAWL_WALK_ERROR_IGNORE, what);
  }
}

/* Root by root, the start directories' subtrees in the order a walk prints
 * them (subtree_order(); a top's key is its path and a '/'). */
static int
compare_tops(const void *pa, const void *pb)
{
  const struct top *a = *(struct top *const *)pa, *b = *(struct top *const *)pb;
  if (a->root != b->root)
    return a->root < b->root ? -1 : 1;
  const size_t la = strlen(a->key), lb = strlen(b->key);
  return subtree_order(a->key, la ? la - 1 : 0, b->key, lb ? lb - 1 : 0);
}

/* ---- a run, phase by phase ---- */

/* Open RUN's roots; false with ERROR set (nothing left open) when one
 * cannot be. */
static bool
run_open_roots(struct run *run, GError **error)
{
  const TrawlWalker *w = run->w;
  run->root_fds = g_new0(int, w->roots->len);
  run->root_devs = g_new0(dev_t, w->roots->len);
  for (guint r = 0; r < w->roots->len; r++) {
    const char *root = w->roots->pdata[r];
    int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
      g_set_error(error, TRAWL_WALK_ERROR, TRAWL_WALK_ERROR_ROOT, "%s: %s", root,
                  g_strerror(errno));
      for (guint k = 0; k < r; k++)
        close(run->root_fds[k]);
      if (fd >= 0)
        close(fd);
      g_free(run->root_fds);
      g_free(run->root_devs);
      return false;
    }
    run->root_fds[r] = fd;
    run->root_devs[r] = st.st_dev;
  }
  return true;
}

/* Everything RUN's workers share and each one's own: the descriptor
 * budget, the threads, the locks, the ignore contexts of the roots, the
 * memos. */
static void
run_prepare(struct run *run)
{
  TrawlWalker *w = run->w;
  /* Shared descriptors may use half of what is left; the rest is for the
   * directories being read and the caller. */
  struct rlimit lim;
  rlim_t soft = getrlimit(RLIMIT_NOFILE, &lim) == 0 ? lim.rlim_cur : 256;
  if (soft == RLIM_INFINITY || soft > 8192)
    soft = 8192;
  run->fd_budget = (gint)(soft / 2 > 16 ? soft / 2 - 8 : 4);

  unsigned threads = w->opt.threads ? w->opt.threads : g_get_num_processors();
  run->n_workers = MAX(threads, 1u);
  run->workers = g_new0(struct worker, run->n_workers);
  pthread_mutex_init(&run->idle_lock, NULL);
  pthread_condattr_t cattr;
  pthread_condattr_init(&cattr);
  pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
  pthread_cond_init(&run->idle_cond, &cattr);
  pthread_condattr_destroy(&cattr);
  pthread_mutex_init(&run->problem_lock, NULL);
  /* Ignore files: per root, its work tree and the files above it. */
  G_STATIC_ASSERT((int)TRAWL_IGNORE_VCS == (int)IGNORE_VCS &&
                  (int)TRAWL_IGNORE_DOT == (int)IGNORE_DOT &&
                  (int)TRAWL_IGNORE_NO_REQUIRE_GIT == (int)IGNORE_NO_REQUIRE_GIT);
  if (w->opt.ignore || w->ignore_files->len) {
    run->ig = g_new0(struct ignore_ctx, w->roots->len);
    run->igprobs = g_new0(struct igprob, w->roots->len);
    for (guint r = 0; r < w->roots->len; r++) {
      run->igprobs[r].run = run;
      run->igprobs[r].root = r;
      ignore_ctx_init(&run->ig[r], w->opt.ignore, run->root_fds[r], w->roots->pdata[r],
                      w->ignore_files->len ? w->ignore_files : NULL, ignore_problem,
                      &run->igprobs[r]);
    }
  }

  run->loops = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  run->ways = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                    (GDestroyNotify)memo_dir_unref);
  if (run->sorted) {
    run->memo_old = w->memo_old;
    run->memo_out = w->memo_out;
  }
  if (run->memo_out) {
    racy_from_now(&run->racy_from);
    g_hash_table_remove_all(run->memo_out->dirs);
    run->memo_out->racy = 0;
    if (run->memo_out->tops)
      g_ptr_array_set_size(run->memo_out->tops, 0);
    else if (run->memo_old && run->memo_old->partial)
      run->memo_out->tops = g_ptr_array_new_with_free_func(g_free);
  }
  for (unsigned i = 0; i < run->n_workers; i++) {
    struct worker *wk = &run->workers[i];
    wk->run = run;
    wk->index = i;
    pthread_mutex_init(&wk->lock, NULL);
    memset(&wk->deque, 0, sizeof wk->deque);
    listing_init(&wk->listing);
    wk->hits = g_array_new(FALSE, FALSE, sizeof(guint));
    wk->memos = g_ptr_array_new();
    wk->tops = g_ptr_array_new_with_free_func(g_free);
    wk->asked = g_array_new(FALSE, FALSE, sizeof(struct asked));
    if (run->sorted) {
      wk->kids = g_ptr_array_new();
    }
  }
}

/* Plan RUN's start directories (query.h) and queue their items on the
 * calling thread's deque, in the order a sorted run prints them, each with
 * the ignore rules of the directories on the way (replay.c). */
static void
run_queue_starts(struct run *run)
{
  TrawlWalker *w = run->w;
  qtab_init(&run->qt, w->queries, w->patset_min);
  GPtrArray *starts = g_ptr_array_new_with_free_func(g_free);
  GArray *start_masks = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  starts_plan(&run->qt, starts, start_masks);
  GPtrArray *tops = g_ptr_array_new();
  for (guint r = 0; r < w->roots->len; r++) {
    struct chain *root_chain = NULL;
    struct stat st;
    if (w->opt.follow && fstat(run->root_fds[r], &st) == 0)
      root_chain = chain_new(&st, NULL);
    for (guint i = 0; i < starts->len; i++) {
      const char *d = starts->pdata[i];
      struct ignore_frame *frame = NULL;
      bool same, tracked_only;
      if (!start_not_ignored(run, r, d, &frame, &same, &tracked_only))
        continue;
      struct item *it = g_new0(struct item, 1);
      it->path = g_strdup(d);
      it->len = strlen(d);
      it->root = r;
      it->depth = 0;
      for (const char *c = d; *c; c++)
        it->depth += *c == '/' || c == d;
      it->live = g_array_index(start_masks, uint64_t, i);
      it->start = it->len > 0;
      it->ig = frame;
      it->tracked_only = tracked_only;
      /* Rules from above changed: nothing below is replayed. */
      it->fresh = !same;
      if (it->start && root_chain) {
        g_atomic_int_inc(&root_chain->refs);
        it->chain = root_chain;
      }
      struct top *top = g_new0(struct top, 1);
      top->root = r;
      top->key = it->len ? g_strconcat(d, "/", NULL) : g_strdup("");
      top->item = it;
      if (run->sorted)
        it->slot = &top->node;
      g_ptr_array_add(tops, top);
    }
    chain_unref(root_chain);
  }
  way_records(run);
  g_hash_table_unref(run->ways);
  run->ways = NULL;
  g_ptr_array_free(starts, TRUE);
  g_array_free(start_masks, TRUE);
  /* The start directories are disjoint subtrees: their order is that of
   * their paths with a '/' after each. The first is queued last, on top. */
  g_ptr_array_sort(tops, compare_tops);
  for (guint i = tops->len; i-- > 0;) {
    struct top *top = tops->pdata[i];
    sched_push(&run->workers[0], top->item);
    top->item = NULL;
  }
  run->tops = tops;
  run->frames = g_array_new(FALSE, FALSE, sizeof(struct frame));
}

/* The calling thread works until nothing is pending, then waits for the
 * helpers it started. */
static void
run_work(struct run *run)
{
  worker_main(&run->workers[0]);
  for (unsigned i = 1; i < run->n_workers; i++)
    if (run->workers[i].thread)
      g_thread_join(run->workers[i].thread);
}

/* Each worker's counters and memo entries into the walker's, and the
 * worker freed. */
static void
run_gather(struct run *run)
{
  TrawlWalker *w = run->w;
  w->stats.threads_used = g_atomic_int_get(&run->started) ? run->n_workers : 1;
  for (unsigned i = 0; i < run->n_workers; i++) {
    struct worker *wk = &run->workers[i];
    w->stats.dirs_opened += wk->stats.dirs_opened;
    w->stats.dirs_pruned += wk->stats.dirs_pruned;
    w->stats.entries_seen += wk->stats.entries_seen;
    w->stats.results += wk->stats.results;
    w->stats.dirs_reused += wk->stats.dirs_reused;
    for (guint k = 0; k < wk->memos->len; k++) {
      if (run->memo_out)
        walk_memo_add(run->memo_out, wk->memos->pdata[k]);
      memo_dir_unref(wk->memos->pdata[k]);
    }
    g_ptr_array_free(wk->memos, TRUE);
    for (guint k = 0; k < wk->tops->len; k++)
      if (run->memo_out && run->memo_out->tops)
        g_ptr_array_add(run->memo_out->tops, g_steal_pointer(&wk->tops->pdata[k]));
    g_ptr_array_unref(wk->tops);
    g_array_free(wk->asked, TRUE);
    if (wk->kids) {
      g_free(wk->recs);
      g_ptr_array_free(wk->kids, TRUE);
      g_free(wk->sort_tmp);
    }
    buf_free(&wk->path);
    buf_free(&wk->scratch);
    listing_free(&wk->listing);
    g_array_free(wk->hits, TRUE);
    g_free(wk->deque.v);
    pthread_mutex_destroy(&wk->lock);
  }
}

/* What is left of RUN once its results are out. */
static void
run_clear(struct run *run)
{
  const TrawlWalker *w = run->w;
  for (guint i = 0; i < run->tops->len; i++) {
    struct top *top = run->tops->pdata[i];
    g_free(top->key);
    g_free(top);
  }
  g_ptr_array_free(run->tops, TRUE);
  g_array_free(run->frames, TRUE);
  buf_free(&run->out_path);
  for (guint r = 0; r < w->roots->len; r++)
    close(run->root_fds[r]);
  g_free(run->root_fds);
  g_free(run->root_devs);
  g_free(run->workers);
  pthread_mutex_destroy(&run->idle_lock);
  pthread_cond_destroy(&run->idle_cond);
  pthread_mutex_destroy(&run->problem_lock);
  g_hash_table_unref(run->loops);
  qtab_clear(&run->qt);
  if (run->ig) {
    for (guint r = 0; r < w->roots->len; r++)
      ignore_ctx_clear(&run->ig[r]);
    g_free(run->ig);
    g_free(run->igprobs);
  }
}

bool
run_walk(TrawlWalker *w, TrawlEntryFunc fn, void *data, bool sorted, GError **error)
{
  g_ptr_array_set_size(w->problems, 0);
  memset(&w->stats, 0, sizeof w->stats);
  struct run run = {.w = w, .fn = fn, .data = data, .sorted = sorted};
  if (!run_open_roots(&run, error))
    return false;
  run_prepare(&run);
  run_queue_starts(&run);
  run_work(&run);
  /* An index read in a thread of its own may have answered every question
   * before it was read to its end: its problem, if any, is told now. */
  if (run.ig)
    for (guint r = 0; r < w->roots->len; r++)
      ignore_ctx_settle(&run.ig[r]);
  run_gather(&run);
  /* The results not printed yet, every directory now read. */
  if (sorted)
    nodes_emit(&run, true);
  run_clear(&run);
  return true;
}
