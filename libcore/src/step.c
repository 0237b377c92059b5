/* trawl — one directory of a walk: read it, report what the queries select,
 * queue what they open.
 *
 * A directory is replayed from the last walk's memo when its stamp allows
 * (replay.c); otherwise it is opened (descriptors.c), stamped before its
 * listing is read (for the next walk's memo), read, and its ignore files
 * entered (the listing tells whether there are any, so looking costs
 * nothing). Then each entry: which queries see it (hidden or not), select it
 * (includes, excludes, type, depth) and, for a directory, would open it —
 * each a mask over the walk's queries (query.h), and the ignore rules asked
 * only for entries some query wants. A directory no query opens is not
 * opened: that is the pruning.
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

/* Report a loop once per KEY (the looping link's or directory's own device
 * and inode), however many paths reach it. */
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

/* Do the ignore rules in force (FRAME) leave out the entry whose match path
 * is in WK's path buffer? The lstat type decides IS_DIR: a link to a
 * directory is not one, for git. */
static bool
ignored(const struct ignore_ctx *igc, const struct ignore_frame *frame, struct worker *wk,
        bool is_dir)
{
  if (igc == NULL)
    return false;
  const struct ignore_rule *r = ignore_verdict(igc, frame, wk->path.data, wk->path.len,
                                               is_dir, NULL);
  return r && !r->negated;
}

static void
report(struct worker *wk, unsigned root, TrawlEntryType type, uint64_t queries)
{
  struct run *run = wk->run;
  wk->stats.results++;
  const size_t plen = run->ig ? run->ig[root].plen : 0;
  trawl_entry e = {wk->path.data + plen, wk->path.len - plen, type, root, queries};
  if (!run->fn(&e, run->data))
    g_atomic_int_set(&run->stop, 1);
}

void
step_dir(struct worker *wk, struct item *it)
{
  struct run *run = wk->run;
  const trawl_walker *w = run->w;
  const trawl_walk_options *o = &w->opt;

  if (run->sorted && replay_dir(wk, it))
    return;
  int fd = open_item(run, it);
  if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
    /* Out of descriptors (the caller holds more than the budget assumed):
     * stop sharing parents, give back every shared descriptor that queued
     * items hold, and open by path. */
    g_atomic_int_set(&run->fd_budget, 0);
    dirref_unref(run, it->parent);
    it->parent = NULL;
    shed_descriptors(run);
    fd = open_item(run, it);
  }
  if (fd < 0) {
    int err = errno;
    /* Gone, or replaced by something that is not a directory: not an error. */
    if (err != ENOENT && err != ENOTDIR && err != ELOOP)
      problem_add(run, it->root, it->path, TRAWL_WALK_ERROR_READ, g_strerror(err));
    else if (run->memo_out && run->sorted && (it->start || it->len == 0))
      memo_missing(wk, it);
    return;
  }
  struct chain *here = NULL;
  /* For the next walk's memo: the stamp before the listing is read. */
  struct dir_stamp head;
  bool memo = run->memo_out != NULL && run->sorted;
  if (o->follow || o->one_file_system || memo) {
    struct stat st;
    if (fstat(fd, &st) != 0) {
      memo = false;
    } else {
      if (memo) {
        memset(&head, 0, sizeof head);
        stamp_of(&head.st, &st, false);
        head.racy = stamp_racy(&head.st, &run->racy_from);
      }
      if (o->one_file_system && st.st_dev != run->root_devs[it->root]) {
        close(fd);
        return;
      }
      if (o->follow) {
        /* Through a followed link, a plain directory can be its own
         * ancestor too ("to-core/util/back/core"): check every one. */
        if (chain_has(it->chain, &st)) {
          problem_loop_once(run, it->root, it->path, &st,
                           "directory loop through a followed link, not entered");
          close(fd);
          return;
        }
        if (it->chain)
          g_atomic_int_inc(&it->chain->refs);
        here = chain_new(&st, it->chain);
      }
    }
  }
  /* The parent descriptor is no longer needed. */
  dirref_unref(run, it->parent);
  it->parent = NULL;

  const bool posix = o->reader == TRAWL_READER_POSIX || !dirread_linux_available();
  int err = posix ? dirread_posix(fd, &wk->listing) : dirread_linux(fd, &wk->listing);
  if (err == EMFILE || err == ENFILE) {
    /* The POSIX reader needs a descriptor of its own: make room as above. */
    g_atomic_int_set(&run->fd_budget, 0);
    shed_descriptors(run);
    err = posix ? dirread_posix(fd, &wk->listing) : dirread_linux(fd, &wk->listing);
  }
  wk->stats.dirs_opened++;
  if (w->open_hook)
    w->open_hook(it->root, it->path, w->open_hook_data);
  if (err != 0 && err != ENOENT)
    problem_add(run, it->root, it->path, TRAWL_WALK_ERROR_READ, g_strerror(err));
  if (err != 0)
    memo = false; /* a partial listing is no record */

  const struct listing_entry *ents = wk->listing.entries;
  const size_t n = wk->listing.n;
  const char *names = wk->listing.names.data;
  const int depth = it->depth + 1;
  const struct qtab *qt = &run->qt;
  const uint64_t live = it->live;
  uint64_t report_here, descend;
  depth_masks(qt, depth, live, &report_here, &descend);
  struct dirref *shared = NULL;
  const bool sorted = run->sorted;

  /* The path buffer holds the match path: the root's path below its work
   * tree's top (ignore rules are matched from there), then the path below
   * the root, which is what patterns see and results carry. */
  struct ignore_ctx *igc = run->ig ? &run->ig[it->root] : NULL;
  const size_t plen = igc ? igc->plen : 0;
  buf_cut(&wk->path, 0);
  if (plen)
    buf_add(&wk->path, igc->prefix, plen);
  if (it->len) {
    buf_add(&wk->path, it->path, it->len);
    buf_addc(&wk->path, '/');
  }
  const size_t base = wk->path.len;

  /* The ignore files of this directory: the listing says whether there are
   * any, so looking costs nothing. */
  struct ignore_frame *frame = NULL;
  const bool skip_dotgit = igc && (o->ignore & TRAWL_IGNORE_VCS);
  if (igc) {
    unsigned has = 0;
    for (size_t i = 0; i < n; i++)
      if (names[ents[i].name_off] == '.')
        has |= ignore_has_of(names + ents[i].name_off, ents[i].name_len, ents[i].type == DT_LNK);
    frame = has ? ignore_frame_enter(igc, it->ig, fd, it->path, base, has)
                : ignore_frame_ref(it->ig);
    /* A nested repository's rules come from inside its .git as well:
     * never trusted. (The top's are the cache's to check.) */
    const bool nested_repo = (has & HAS_DOTGIT) && !(it->len == 0 && igc->plen == 0);
    if (memo) {
      record_rules(run, fd, has, &head);
      head.racy = head.racy || nested_repo;
    }
    /* Read again, for whatever reason: if its own rules are not those the
     * last walk decided below it with, nothing below is replayed. */
    if (run->memo_old && !it->fresh) {
      const struct memo_dir *m = walk_memo_lookup(run->memo_old, it->root, it->path, it->len);
      if (nested_repo || (m ? dir_check_rules(&m->was, has, fd, "") != DIR_SAME
                            : (has & (HAS_GITIGNORE | HAS_DOTIGNORE | HAS_DOTGIT)) != 0))
        it->fresh = true;
    }
  }

  for (size_t i = 0; i < n && !g_atomic_int_get(&run->stop); i++) {
    const char *name = names + ents[i].name_off;
    const size_t nlen = ents[i].name_len;
    wk->stats.entries_seen++;
    const uint64_t shown = shown_mask(qt, name, nlen, live);
    if (shown == 0 && qt->nested == NULL)
      continue;
    /* A repository's own directory is never listed or entered. */
    if (skip_dotgit && nlen == 4 && memcmp(name, ".git", 4) == 0)
      continue;
    buf_cut(&wk->path, base);
    buf_add(&wk->path, name, nlen);
    const char *rel = wk->path.data + plen;
    const size_t rlen = wk->path.len - plen;
    /* An entry no query here sees may still be the way to another query's
     * start directory below. */
    bool on_the_way = false;
    if (qt->nested) {
      on_the_way = g_hash_table_contains(qt->transit, rel) || g_hash_table_contains(qt->nested, rel);
      if (shown == 0 && !on_the_way)
        continue;
    }

    unsigned type = ents[i].type;
    if (type == DT_UNKNOWN) {
      struct stat st;
      if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        continue; /* vanished */
      type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
    }
    bool via_link = false;
    TrawlEntryType kind = type == DT_DIR ? TRAWL_ENTRY_DIR
                          : type == DT_LNK ? TRAWL_ENTRY_SYMLINK : TRAWL_ENTRY_FILE;
    if (o->follow && kind != TRAWL_ENTRY_FILE) {
      /* Following links, any directory may be its own ancestor: a link to
       * one, or a plain directory reached through a followed link
       * ("to-core/util/back/core"). Such an entry is neither reported nor
       * entered, and each loop is reported once, keyed by the link's own
       * (device, inode) or the directory's. */
      struct stat st;
      bool is_link = kind == TRAWL_ENTRY_SYMLINK;
      /* What a link leads to can change with no stamp here changing: a
       * directory with links to follow is read every time. */
      if (is_link && memo)
        head.racy = true;
      if (fstatat(fd, name, &st, is_link ? 0 : AT_SYMLINK_NOFOLLOW) == 0) {
        if (is_link)
          kind = S_ISDIR(st.st_mode) ? TRAWL_ENTRY_DIR : TRAWL_ENTRY_FILE;
        via_link = is_link && kind == TRAWL_ENTRY_DIR;
        if (kind == TRAWL_ENTRY_DIR && chain_has(here, &st)) {
          struct stat key_st = st;
          if (is_link)
            fstatat(fd, name, &key_st, AT_SYMLINK_NOFOLLOW);
          problem_loop_once(run, it->root, rel, &key_st,
                           is_link ? "symbolic link loop, not followed"
                                   : "directory loop through a followed link, not entered");
          continue;
        }
      }
    }

    const unsigned k = kind == TRAWL_ENTRY_DIR ? KIND_DIR
                       : kind == TRAWL_ENTRY_SYMLINK ? KIND_SYMLINK : KIND_FILE;
    uint64_t hit = shown & report_here & qt->types[k];
    if (hit) {
      hit = select_mask(qt, rel, rlen, hit, wk->hits);
      if (hit && !ignored(igc, frame, wk, type == DT_DIR)) {
        if (sorted) {
          wk->stats.results++;
          add_rec(wk, name, nlen, REC_RESULT, kind, NULL, hit);
        } else {
          report(wk, it->root, kind, hit);
        }
      }
    }
    if (kind != TRAWL_ENTRY_DIR)
      continue;
    uint64_t opens = shown & descend;
    if (opens)
      opens = open_mask(qt, rel, rlen, opens, wk->hits, &wk->scratch);
    if (on_the_way) {
      const uint64_t *starting = g_hash_table_lookup(qt->nested, rel);
      if (starting)
        opens |= *starting;
      on_the_way = g_hash_table_contains(qt->transit, rel);
    }
    if ((opens == 0 && !on_the_way) || ignored(igc, frame, wk, type == DT_DIR)) {
      if (shown & descend)
        wk->stats.dirs_pruned++;
      continue;
    }
    struct item *child = g_new0(struct item, 1);
    child->live = opens;
    child->fresh = it->fresh;
    child->path = g_strndup(rel, rlen);
    child->len = rlen;
    child->ig = ignore_frame_ref(frame);
    child->name_off = it->len ? it->len + 1 : 0;
    child->root = it->root;
    child->depth = depth;
    child->via_link = via_link;
    if (here) {
      g_atomic_int_inc(&here->refs);
      child->chain = here;
    }
    /* Children open themselves with openat(this fd) while descriptors
     * last; past the budget they open by path from the root. */
    if (shared == NULL && g_atomic_int_get(&run->open_fds) < g_atomic_int_get(&run->fd_budget)) {
      shared = g_new0(struct dirref, 1);
      shared->fd = fd;
      shared->refs = 1;
      g_atomic_int_inc(&run->open_fds);
    }
    if (shared) {
      g_atomic_int_inc(&shared->refs);
      child->parent = shared;
    }
    if (sorted)
      add_rec(wk, name, nlen, REC_SUBTREE, 0, child, 0);
    else
      sched_push(wk, child);
  }
  if (sorted) {
    node_finish(wk, it, memo ? &head : NULL, NULL);
    /* Once published, the slot (in the parent's node) belongs to the
     * printing thread, which may free it at any moment. */
    it->slot = NULL;
  }
  if (shared)
    dirref_unref(run, shared);
  else
    close(fd);
  chain_unref(here);
  ignore_frame_unref(frame);
}
