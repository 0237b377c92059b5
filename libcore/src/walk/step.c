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

static void
report(struct worker *wk, unsigned root, TrawlEntryType type, uint64_t queries)
{
  struct run *run = wk->run;
  wk->stats.results++;
  const size_t plen = run->ig ? run->ig[root].plen : 0;
  TrawlEntry e = {wk->path.data + plen, wk->path.len - plen, type, root, queries};
  if (!run->fn(&e, run->data))
    g_atomic_int_set(&run->stop, 1);
}

/* Entry NAME (NLEN bytes) of directory IT, of KIND, is a result for the
 * queries HIT: a record of a sorted run's node, or handed over now. */
static inline void
result(struct worker *wk, struct item *it, const char *name, size_t nlen, TrawlEntryType kind,
       uint64_t hit)
{
  if (wk->run->sorted) {
    wk->stats.results++;
    add_rec(wk, name, nlen, REC_RESULT, kind, NULL, hit);
  } else {
    report(wk, it->root, kind, hit);
  }
}

/* What the steps of one directory share. */
struct dir_read {
  int fd;
  struct chain *here;       /* following links: this directory's link of the chain */
  struct dir_stamp head;    /* for the next walk's memo */
  GBytes *repo;             /* holds head.repo */
  bool memo;                /* record it */
  struct ignore_ctx *igc;   /* NULL: no ignore file is read */
  struct ignore_frame *frame; /* the rules in force here */
  size_t plen;              /* the root's path below its work tree's top, in WK's path */
  size_t base;              /* this directory's match path, with its '/', in WK's path */
  int depth;                /* of its entries */
  uint64_t report_here, descend; /* the live queries that report entries here, open them */
  bool skip_dotgit;         /* a repository's own directory is neither listed nor entered */
  bool tracked_only;        /* only what the index holds is listed and entered here */
  struct dirref *shared;    /* this directory's descriptor, for its subdirectories */
};

/* What the rules say of an entry. */
enum keep {
  KEEP,                     /* no rule leaves it out */
  KEEP_TRACKED,             /* git's rules would, but the index holds it (a directory:
                               paths below it, entered for those alone) */
  LEAVE_OUT,
};

/* Do the ignore rules in force leave out the entry NAME (NLEN bytes, in the
 * listing) whose match path is in WK's path buffer? The lstat type decides
 * IS_DIR: a link to a directory is not one, for git. Where git's rules
 * would leave it out — a rule of .gitignore, info/exclude or the excludes
 * file, or an ignored directory above (D->tracked_only) — the index has the
 * last word: git ignores untracked paths only. It is asked then alone, so a
 * walk whose rules leave nothing out never reads it; the answer is recorded
 * for the memo (a cache asks again when the index changes). A rule of
 * .ignore or of the caller's files leaves out tracked paths too: they are
 * not git's. */
static enum keep keep_asked(struct worker *wk, struct dir_read *d, const char *name,
                           size_t nlen, bool is_dir, const struct ignore_rule *r);

static inline enum keep
keep_entry(struct worker *wk, struct dir_read *d, const char *name, size_t nlen, bool is_dir)
{
  if (d->igc == NULL)
    return KEEP;
  const struct ignore_rule *r = ignore_verdict(d->igc, d->frame, wk->path.data, wk->path.len,
                                               is_dir, NULL);
  /* Most entries: no rule matches them, and no directory above was left
   * out. The rest, out of line: the common path stays as short as it was. */
  if (G_LIKELY(r == NULL && !d->tracked_only))
    return KEEP;
  return keep_asked(wk, d, name, nlen, is_dir, r);
}

/* keep_entry() where a rule matches the entry, or a directory above was
 * left out. */
static enum keep
keep_asked(struct worker *wk, struct dir_read *d, const char *name, size_t nlen, bool is_dir,
           const struct ignore_rule *r)
{
  const bool left_out = r && !r->negated;
  if (left_out && !r->vcs)
    return LEAVE_OUT;
  if (!left_out && !d->tracked_only)
    return KEEP;
  bool top;
  const bool tracked = ignore_tracked(d->igc, d->frame, wk->path.data, wk->path.len, is_dir, &top);
  /* A nested repository's questions are not recorded: everything in it is
   * read again by every walk (enter_rules). */
  if (d->memo && top) {
    /* NAME is the listing's, copied when the memo entry is made. */
    const struct asked q = {name, (uint32_t)nlen,
                            (uint8_t)((is_dir ? ASKED_DIR : 0) | (tracked ? ASKED_TRACKED : 0))};
    g_array_append_val(wk->asked, q);
  }
  return tracked ? KEEP_TRACKED : LEAVE_OUT;
}

/* Open directory IT as the walk does, giving back shared descriptors when
 * the process runs out. -1 when it cannot be: gone or not a directory (a
 * start directory missing is recorded as such), or a problem. */
static int
open_dir(struct worker *wk, struct item *it)
{
  struct run *run = wk->run;
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
  }
  return fd;
}

/* The directory's own stat, before its listing is read: its stamp for the
 * memo, the device for --one-file-system, the loop chain for --follow.
 * False when it is not to be read (another file system, a loop). */
static bool
stat_dir(struct worker *wk, struct item *it, struct dir_read *d)
{
  struct run *run = wk->run;
  const TrawlWalkOptions *o = &run->w->opt;
  if (!o->follow && !o->one_file_system && !d->memo)
    return true;
  struct stat st;
  if (fstat(d->fd, &st) != 0) {
    d->memo = false;
    return true;
  }
  if (d->memo) {
    stamp_of(&d->head.st, &st, false);
    d->head.racy = stamp_racy(&d->head.st, &run->racy_from);
  }
  if (o->one_file_system && st.st_dev != run->root_devs[it->root])
    return false;
  if (o->follow) {
    /* Through a followed link, a plain directory can be its own ancestor
     * too ("to-core/util/back/core"): check every one. */
    if (chain_has(it->chain, &st)) {
      problem_loop_once(run, it->root, it->path, &st,
                        "directory loop through a followed link, not entered");
      return false;
    }
    if (it->chain)
      g_atomic_int_inc(&it->chain->refs);
    d->here = chain_new(&st, it->chain);
  }
  return true;
}

/* Read the listing into WK's, with the chosen reader; a partial listing is
 * a problem and no record. */
static void
read_listing(struct worker *wk, struct item *it, struct dir_read *d)
{
  struct run *run = wk->run;
  const TrawlWalker *w = run->w;
  const bool posix = w->opt.reader == TRAWL_READER_POSIX || !dirread_linux_available();
  int err = posix ? dirread_posix(d->fd, &wk->listing) : dirread_linux(d->fd, &wk->listing);
  if (err == EMFILE || err == ENFILE) {
    /* The POSIX reader needs a descriptor of its own: make room as above. */
    g_atomic_int_set(&run->fd_budget, 0);
    shed_descriptors(run);
    err = posix ? dirread_posix(d->fd, &wk->listing) : dirread_linux(d->fd, &wk->listing);
  }
  wk->stats.dirs_opened++;
  if (w->open_hook)
    w->open_hook(it->root, it->path, w->open_hook_data);
  if (err != 0 && err != ENOENT)
    problem_add(run, it->root, it->path, TRAWL_WALK_ERROR_READ, g_strerror(err));
  if (err != 0)
    d->memo = false;
}

/* The path buffer holds the match path: the root's path below its work
 * tree's top (ignore rules are matched from there), then the path below the
 * root, which is what patterns see and results carry. */
static void
start_path(struct worker *wk, struct item *it, struct dir_read *d)
{
  d->plen = d->igc ? d->igc->plen : 0;
  buf_cut(&wk->path, 0);
  if (d->plen)
    buf_add(&wk->path, d->igc->prefix, d->plen);
  if (it->len) {
    buf_add(&wk->path, it->path, it->len);
    buf_addc(&wk->path, '/');
  }
  d->base = wk->path.len;
}

/* The rules this directory holds: its ignore files and `.git` (the listing
 * says whether there are any, so looking costs nothing), entered for what
 * lies below, recorded for the memo, and compared with the last walk's
 * record — if they are not those it decided below with, nothing below is
 * replayed. */
static void
enter_rules(struct worker *wk, struct item *it, struct dir_read *d)
{
  struct run *run = wk->run;
  if (d->igc == NULL)
    return;
  const struct listing_entry *ents = wk->listing.entries;
  const char *names = wk->listing.names.data;
  unsigned has = 0;
  for (size_t i = 0; i < wk->listing.n; i++)
    if (names[ents[i].name_off] == '.')
      has |= ignore_has_of(names + ents[i].name_off, ents[i].name_len, ents[i].type == DT_LNK);
  d->frame = has ? ignore_frame_enter(d->igc, it->ig, d->fd, it->path, d->base, has)
                 : ignore_frame_ref(it->ig);
  /* A repository's top starts its own work tree: below it, its own index
   * and rules decide, whatever the outer rules said of the directory. */
  d->tracked_only = it->tracked_only && !(d->frame && d->frame != it->ig && d->frame->top);
  /* (A nested repository's rules come from inside its .git as well: its
   * sources are recorded and compared with the rest of its rules.) */
  if (d->memo)
    record_rules(run, it->root, d->fd, it->path, has, &d->head, &d->repo);
  if (run->memo_old && !it->fresh) {
    const struct memo_dir *m = walk_memo_lookup(run->memo_old, it->root, it->path, it->len);
    if (m ? dir_check_rules(&m->was, has, d->fd, "") != DIR_SAME
          : (has & (HAS_GITIGNORE | HAS_DOTIGNORE | HAS_DOTGIT)) != 0)
      it->fresh = true;
  }
}

/* Entry NAME of type TYPE (DT_*): what it is once links are looked
 * through (following them), into *KIND and *VIA_LINK. False when it is not
 * to be visited: gone, or (following links) a loop, reported once per loop,
 * keyed by the link's own (device, inode) or the directory's. */
static bool
entry_kind(struct worker *wk, struct item *it, struct dir_read *d, const char *name,
           unsigned type, const char *rel, TrawlEntryType *kind, bool *via_link)
{
  *via_link = false;
  *kind = type == DT_DIR ? TRAWL_ENTRY_DIR
          : type == DT_LNK ? TRAWL_ENTRY_SYMLINK : TRAWL_ENTRY_FILE;
  if (!wk->run->w->opt.follow || *kind == TRAWL_ENTRY_FILE)
    return true;
  /* Following links, any directory may be its own ancestor: a link to one,
   * or a plain directory reached through a followed link. */
  struct stat st;
  const bool is_link = *kind == TRAWL_ENTRY_SYMLINK;
  /* What a link leads to can change with no stamp here changing: a
   * directory with links to follow is read every time. */
  if (is_link && d->memo)
    d->head.racy = true;
  if (fstatat(d->fd, name, &st, is_link ? 0 : AT_SYMLINK_NOFOLLOW) != 0)
    return true;
  if (is_link)
    *kind = S_ISDIR(st.st_mode) ? TRAWL_ENTRY_DIR : TRAWL_ENTRY_FILE;
  *via_link = is_link && *kind == TRAWL_ENTRY_DIR;
  if (*kind == TRAWL_ENTRY_DIR && chain_has(d->here, &st)) {
    struct stat key_st = st;
    if (is_link)
      fstatat(d->fd, name, &key_st, AT_SYMLINK_NOFOLLOW);
    problem_loop_once(wk->run, it->root, rel, &key_st,
                      is_link ? "symbolic link loop, not followed"
                              : "directory loop through a followed link, not entered");
    return false;
  }
  return true;
}

/* A new item for subdirectory REL (RLEN bytes) of IT, read for the queries
 * OPENS: it opens itself with openat() on this directory's descriptor while
 * descriptors last, past the budget by path from the root. */
static struct item *
child_item(struct worker *wk, struct item *it, struct dir_read *d, const char *rel, size_t rlen,
           uint64_t opens, bool via_link, bool tracked_only)
{
  struct run *run = wk->run;
  struct item *child = g_new0(struct item, 1);
  child->live = opens;
  child->fresh = it->fresh;
  child->tracked_only = tracked_only;
  child->path = g_strndup(rel, rlen);
  child->len = rlen;
  child->ig = ignore_frame_ref(d->frame);
  child->name_off = it->len ? it->len + 1 : 0;
  child->root = it->root;
  child->depth = d->depth;
  child->via_link = via_link;
  if (d->here) {
    g_atomic_int_inc(&d->here->refs);
    child->chain = d->here;
  }
  if (d->shared == NULL && g_atomic_int_get(&run->open_fds) < g_atomic_int_get(&run->fd_budget)) {
    d->shared = g_new0(struct dirref, 1);
    d->shared->fd = d->fd;
    d->shared->refs = 1;
    g_atomic_int_inc(&run->open_fds);
  }
  if (d->shared) {
    g_atomic_int_inc(&d->shared->refs);
    child->parent = d->shared;
  }
  return child;
}

/* One entry of the listing: which queries see it, select it (a result),
 * and, a directory, would open it (a new item). The questions are masks
 * over the live queries (query.h); the ignore rules are asked only of an
 * entry some query wants. */
static void
visit(struct worker *wk, struct item *it, struct dir_read *d, const struct listing_entry *e)
{
  struct run *run = wk->run;
  const struct qtab *qt = &run->qt;
  const char *name = wk->listing.names.data + e->name_off;
  const size_t nlen = e->name_len;
  wk->stats.entries_seen++;
  const uint64_t shown = shown_mask(qt, name, nlen, it->live);
  if (shown == 0 && qt->nested == NULL)
    return;
  if (d->skip_dotgit && nlen == 4 && memcmp(name, ".git", 4) == 0)
    return;
  buf_cut(&wk->path, d->base);
  buf_add(&wk->path, name, nlen);
  const char *rel = wk->path.data + d->plen;
  const size_t rlen = wk->path.len - d->plen;
  /* An entry no query here sees may still be the way to another query's
   * start directory below. */
  bool on_the_way = false;
  if (qt->nested) {
    on_the_way = g_hash_table_contains(qt->transit, rel) || g_hash_table_contains(qt->nested, rel);
    if (shown == 0 && !on_the_way)
      return;
  }
  unsigned type = e->type;
  if (type == DT_UNKNOWN) {
    struct stat st;
    if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
      return; /* vanished */
    type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
  }
  TrawlEntryType kind;
  bool via_link;
  if (!entry_kind(wk, it, d, name, type, rel, &kind, &via_link))
    return;

  /* A result? The rules are asked once, and only of an entry a query wants.
   * Files and links first, apart: most entries, and the shortest path. */
  const unsigned k = kind == TRAWL_ENTRY_DIR ? KIND_DIR
                     : kind == TRAWL_ENTRY_SYMLINK ? KIND_SYMLINK : KIND_FILE;
  uint64_t hit = shown & d->report_here & qt->types[k];
  if (kind != TRAWL_ENTRY_DIR) {
    if (hit && (hit = select_mask(qt, rel, rlen, hit, wk->hits, false)) &&
        keep_entry(wk, d, name, nlen, false) != LEAVE_OUT)
      result(wk, it, name, nlen, kind, hit);
    return;
  }
  int keep = -1; /* enum keep, once asked */
  if (hit) {
    hit = select_mask(qt, rel, rlen, hit, wk->hits, true);
    if (hit && (keep = keep_entry(wk, d, name, nlen, type == DT_DIR)) != LEAVE_OUT)
      result(wk, it, name, nlen, kind, hit);
  }

  /* A directory to open? */
  uint64_t opens = shown & d->descend;
  if (opens)
    opens = open_mask(qt, rel, rlen, opens, wk->hits, &wk->scratch);
  if (on_the_way) {
    const uint64_t *starting = g_hash_table_lookup(qt->nested, rel);
    if (starting)
      opens |= *starting;
    on_the_way = g_hash_table_contains(qt->transit, rel);
  }
  if ((opens == 0 && !on_the_way) ||
      (keep < 0 ? (keep = keep_entry(wk, d, name, nlen, type == DT_DIR)) : keep) == LEAVE_OUT) {
    if (shown & d->descend)
      wk->stats.dirs_pruned++;
    return;
  }
  struct item *child = child_item(wk, it, d, rel, rlen, opens, via_link,
                                  d->tracked_only || keep == KEEP_TRACKED);
  if (run->sorted)
    add_rec(wk, name, nlen, REC_SUBTREE, 0, child, 0);
  else
    sched_push(wk, child);
}

void
step_dir(struct worker *wk, struct item *it)
{
  struct run *run = wk->run;
  if (run->sorted && replay_dir(wk, it))
    return;
  struct dir_read d;
  memset(&d, 0, sizeof d);
  d.fd = open_dir(wk, it);
  if (d.fd < 0)
    return;
  d.memo = run->memo_out != NULL && run->sorted;
  if (!stat_dir(wk, it, &d)) {
    close(d.fd);
    return;
  }
  /* The parent descriptor is no longer needed. */
  dirref_unref(run, it->parent);
  it->parent = NULL;
  read_listing(wk, it, &d);

  d.depth = it->depth + 1;
  depth_masks(&run->qt, d.depth, it->live, &d.report_here, &d.descend);
  d.igc = run->ig ? &run->ig[it->root] : NULL;
  d.skip_dotgit = d.igc && (run->w->opt.ignore & TRAWL_IGNORE_VCS);
  start_path(wk, it, &d);
  enter_rules(wk, it, &d);
  for (size_t i = 0; i < wk->listing.n && !g_atomic_int_get(&run->stop); i++)
    visit(wk, it, &d, &wk->listing.entries[i]);

  if (run->sorted) {
    struct node *node = node_make(wk);
    if (d.memo)
      memo_record(wk, it, node, &d.head, &d.repo);
    node_publish(wk, it, node);
  }
  if (d.shared)
    dirref_unref(run, d.shared);
  else
    close(d.fd);
  chain_unref(d.here);
  ignore_frame_unref(d.frame);
  if (d.repo)
    g_bytes_unref(d.repo);
}
