/* trawl — memos: what a sorted walk records, and its replay next time.
 *
 * A sorted walk given a memo records, for every directory it reads, the
 * stamp it had before its listing was read and what the walk decided there
 * (its results and the subdirectories entered, with their query masks), and
 * for every directory on the way to a start directory the rules it holds.
 * The next walk, given that memo, asks dir_check() (memo.c, the one rule)
 * of each directory before opening it: when it is as recorded, its records
 * are replayed — the same names, so the same decisions — and nothing is
 * read; the rules it holds (ignore files, and the `.git` of a work tree's
 * top) are entered all the same, for the directories below that may be
 * read. When its rules changed, it and everything below are read again.
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

/* The memo entry of the directory IT whose sorted records are NODE: the
 * records, with each subtree's live queries, and the questions ASKED
 * (struct asked) of the index there. */
static struct memo_dir *
memo_of_node(const struct item *it, const struct node *node, const GArray *asked)
{
  size_t names = 0;
  for (guint i = 0; i < node->n; i++)
    names += node->recs[i].len;
  for (guint i = 0; i < asked->len; i++)
    names += g_array_index(asked, struct asked, i).len;
  struct memo_dir *d = memo_dir_new(it->root, it->path, it->len, node->n + asked->len, names);
  char *at = memo_dir_names(d);
  /* The questions after the records (a pass over the records skips them). */
  for (guint i = 0; i < asked->len; i++) {
    const struct asked *q = &g_array_index(asked, struct asked, i);
    struct memo_rec *m = &d->recs[node->n + i];
    memcpy(at, q->name, q->len);
    m->name = at;
    m->len = q->len;
    m->kind = MEMO_ASKED;
    m->type = q->type;
    m->mask = 0;
    at += q->len;
  }
  for (guint i = 0; i < node->n; i++) {
    const struct rec *r = &node->recs[i];
    struct memo_rec *m = &d->recs[i];
    memcpy(at, r->name, r->len);
    m->name = at;
    m->len = r->len;
    at += r->len;
    m->type = r->type;
    if (r->kind == REC_RESULT) {
      m->kind = MEMO_RESULT;
      m->mask = r->child.queries;
    } else {
      m->kind = r->child.item->via_link ? MEMO_SUBTREE_LINK : MEMO_SUBTREE;
      m->type = r->child.item->tracked_only ? MEMO_TRACKED_ONLY : 0;
      m->mask = r->child.item->live;
    }
  }
  d->live = it->live;
  d->start = it->start;
  return d;
}

void
memo_record(struct worker *wk, const struct item *it, const struct node *node,
            const struct dir_stamp *head, GBytes **repo)
{
  struct memo_dir *d = memo_of_node(it, node, wk->asked);
  d->was = *head;
  d->repo_own = *repo; /* moved: it holds head->repo */
  *repo = NULL;
  g_ptr_array_add(wk->memos, d);
  g_array_set_size(wk->asked, 0);
}

/* Record in D the rules directory FD (REL, relative to root ROOT) holds,
 * as HAS says (its listing, or a probe): which, and the stamps of its
 * ignore files, racy or not; and when it holds a nested repository's
 * `.git`, that repository's sources (ignore_repo_sources()), stamped, into
 * *REPO, which D->repo then points into (NULL: none). Its rules come from
 * inside its `.git` as well as from its ignore files; the top repository's
 * are the cache's outside sources. */
void
record_rules(const struct run *run, unsigned root, int fd, const char *rel, unsigned has,
             struct dir_stamp *d, GBytes **repo)
{
  d->has = has;
  ignore_file_stamps(fd, "", has, d->ignore);
  d->rules_racy = stamp_racy(&d->ignore[0], &run->racy_from) ||
                  stamp_racy(&d->ignore[1], &run->racy_from);
  d->repo = NULL;
  d->repo_len = 0;
  *repo = NULL;
  const struct ignore_ctx *igc = run->ig ? &run->ig[root] : NULL;
  if (!(has & HAS_DOTGIT) || igc == NULL || !(igc->flags & IGNORE_VCS) ||
      (rel[0] == '\0' && igc->plen == 0))
    return;
  char *abs = rel[0] ? g_build_filename(igc->root_abs, rel, NULL) : g_strdup(igc->root_abs);
  GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
  GByteArray *kinds = g_byte_array_new();
  ignore_repo_sources(abs, paths, kinds);
  GByteArray *b = g_byte_array_new();
  const size_t alen = strlen(abs);
  bool racy = false;
  for (guint i = 0; i < paths->len; i++) {
    const char *p = paths->pdata[i];
    /* Below the directory (its `.git`, a submodule's "../.git/modules/sm"
     * as the `.git` file names it): relative to it, as a walk that moved
     * with the tree finds it. */
    const char *at = strncmp(p, abs, alen) == 0 && p[alen] == '/' ? p + alen + 1 : p;
    racy = repo_sources_add(b, fd, at, kinds->data[i], &run->racy_from) || racy;
  }
  d->rules_racy = d->rules_racy || racy;
  *repo = g_byte_array_free_to_bytes(b);
  gsize len;
  d->repo = g_bytes_get_data(*repo, &len);
  d->repo_len = (uint32_t)len;
  g_ptr_array_unref(paths);
  g_byte_array_unref(kinds);
  g_free(abs);
}

/* Record that start directory IT was not there: its appearing is a change. */
void
memo_missing(struct worker *wk, const struct item *it)
{
  struct memo_dir *d = memo_dir_new(it->root, it->path, it->len, 0, 0);
  d->live = it->live;
  d->start = it->start;
  g_ptr_array_add(wk->memos, d);
}

/* Is directory PATH (LEN bytes, NUL-terminated, below root ROOT) one the
 * walk leaves unentered, its whole subtree as the memo's record has it
 * (struct memo_partial): the memo holds part of a record, and PATH is
 * none of the directories that may have changed nor on the way to one? */
static bool
left_whole(const struct run *run, unsigned root, const char *path, size_t len)
{
  const struct memo_partial *p = run->memo_old->partial;
  return p && run->memo_out && run->memo_out->tops && root == 0 && len > 0 &&
         !g_hash_table_contains(p->hot, path);
}

/* Was IT, a subdirectory of a directory read again (not replayed), in
 * that directory's record as it is now: a subdirectory (not a link)
 * entered for the same queries, for its tracked paths alone or not as
 * now; and is its own record there, its stamp as now (memo_partial.recorded,
 * dir_check(); or the check's own stat of every recorded directory found
 * it so, memo_partial.stated)? Then a walk that leaves it unentered (left_whole()) has
 * its record's subtree below it. (A replayed directory's subdirectories
 * need no such look: a subdirectory removed or replaced moves the stamp of
 * the directory that holds it.) */
static bool
recorded_as_now(const struct run *run, const struct item *it)
{
  const size_t plen = it->name_off ? it->name_off - 1 : 0;
  const struct memo_dir *up = walk_memo_lookup(run->memo_old, it->root, it->path, plen);
  if (up == NULL || up->way || it->len == 0)
    return false;
  const char *name = it->path + it->name_off;
  const size_t nlen = it->len - it->name_off;
  /* The records are in the order the walk prints them (walk-run.h,
   * compare_recs()): by name, a subdirectory's with a '/' after it; the
   * questions after them all. */
  guint lo = 0, hi = up->n;
  while (hi > lo && up->recs[hi - 1].kind == MEMO_ASKED)
    hi--;
  while (lo < hi) {
    const guint mid = lo + (hi - lo) / 2;
    const struct memo_rec *r = &up->recs[mid];
    const size_t n = MIN(r->len, nlen);
    int c = memcmp(r->name, name, n);
    if (c == 0) {
      const int cr = r->len > n ? (unsigned char)r->name[n] : r->kind == MEMO_RESULT ? 0 : '/';
      const int ci = nlen > n ? (unsigned char)name[n] : '/';
      c = cr - ci;
    }
    if (c != 0) {
      if (c < 0)
        lo = mid + 1;
      else
        hi = mid;
      continue;
    }
    if (r->kind != MEMO_SUBTREE || r->mask != it->live ||
        ((r->type & MEMO_TRACKED_ONLY) != 0) != it->tracked_only)
      return false;
    /* And the record holds it, as it is now: the old parent may list one
     * no walk could open (removed while that walk ran), and a directory
     * now at its path may be another (its parent, or one above, replaced:
     * watchman names those, not the paths below them). */
    const struct memo_partial *p = run->memo_old->partial;
    struct dir_stamp was;
    if (!p->recorded(p, it->path, it->len, it->live, &was))
      return false;
    if (p->stated)
      return true;
    const int root_fd = run->root_fds[it->root];
    struct stat st;
    const bool there = fstatat(root_fd, it->path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                       S_ISDIR(st.st_mode);
    return dir_check(&was, there ? &st : NULL, root_fd, it->path) == DIR_SAME;
  }
  return false;
}

/* Replay directory IT from the last walk's memo when its stamp (and its
 * ignore files') say it is as it was then (dir_check()): its results and
 * subdirectories as recorded, without reading it. False, with nothing done,
 * when it must be read; IT->fresh set when its own rules changed, so that
 * nothing below is replayed either. */
bool
replay_dir(struct worker *wk, struct item *it)
{
  struct run *run = wk->run;
  const TrawlWalkOptions *o = &run->w->opt;
  if (run->memo_old == NULL || it->fresh || (it->start && o->follow))
    return false;
  const struct memo_dir *m = walk_memo_lookup(run->memo_old, it->root, it->path, it->len);
  if (m == NULL && !it->start && !it->via_link && !o->follow &&
      left_whole(run, it->root, it->path, it->len) && recorded_as_now(run, it)) {
    /* A subdirectory of one read again, as recorded there, none of whose
     * directories may have changed: left unentered. */
    g_ptr_array_add(wk->tops, g_strdup(it->path));
    return true;
  }
  if (m == NULL || m->way || m->live != it->live)
    return false;
  /* The directory the walk would open: a start directory component by
   * component, as open_start() does. One with rules of its own — ignore
   * files, or the `.git` that makes it the top of a work tree, whose
   * info/exclude and excludes file apply below and without which no
   * `.gitignore` below is read — is opened, to enter them as a walk reading
   * it would: a directory below may be read, and must see the rules a fresh
   * walk does. */
  const int root_fd = run->root_fds[it->root];
  struct ignore_ctx *igc = run->ig ? &run->ig[it->root] : NULL;
  const unsigned rules_here = igc ? m->was.has & (HAS_GITIGNORE | HAS_DOTIGNORE | HAS_DOTGIT) : 0;
  int fd = -1;
  if (it->start)
    fd = open_start(run, it);
  else if (rules_here)
    fd = it->len ? open_relative(root_fd, it->path,
                                 O_RDONLY | O_DIRECTORY | O_CLOEXEC |
                                 (it->via_link ? 0 : O_NOFOLLOW))
                 : fcntl(root_fd, F_DUPFD_CLOEXEC, 0);
  struct stat st;
  enum dir_verdict verdict;
  if (m->vouched && !it->start && !it->via_link && !o->follow) {
    /* A cache's record watchman vouches for: no change was named in it or
     * of it since the clock the cache recorded, so its stamp is as
     * recorded (cache/cache.c, vouch()). */
    verdict = DIR_SAME;
  } else {
    bool ok;
    if (fd >= 0)
      ok = fstat(fd, &st) == 0;
    else if (it->start || rules_here)
      ok = false;
    else if (it->len == 0)
      ok = fstat(root_fd, &st) == 0;
    else
      ok = fstatat(root_fd, it->path, &st, it->via_link ? 0 : AT_SYMLINK_NOFOLLOW) == 0;
    verdict = dir_check(&m->was, ok && S_ISDIR(st.st_mode) ? &st : NULL, fd >= 0 ? fd : root_fd,
                        fd >= 0 ? "" : it->path);
  }
  if (verdict != DIR_SAME) {
    if (fd >= 0)
      close(fd);
    it->fresh = verdict == DIR_RULES_CHANGED;
    return false;
  }
  if (!m->was.st.present) {
    /* A start directory that was not there, and still is not. */
    if (run->memo_out)
      g_ptr_array_add(wk->memos, memo_dir_ref(m));
    wk->stats.dirs_reused++;
    return true;
  }
  struct ignore_frame *frame = NULL;
  if (igc) {
    size_t base = igc->plen + it->len + (it->len ? 1 : 0);
    frame = rules_here ? ignore_frame_enter(igc, it->ig, fd, it->path, base, m->was.has)
                       : ignore_frame_ref(it->ig);
  }
  if (fd >= 0)
    close(fd);
  struct chain *here = NULL;
  if (o->follow) {
    if (it->chain)
      g_atomic_int_inc(&it->chain->refs);
    here = chain_new(&st, it->chain);
  }
  const int depth = it->depth + 1;
  const bool partial = run->memo_old->partial && !o->follow;
  for (guint i = 0; i < m->n; i++) {
    const struct memo_rec *r = &m->recs[i];
    if (r->kind == MEMO_RESULT) {
      wk->stats.results++;
      add_rec(wk, r->name, r->len, REC_RESULT, r->type, NULL, r->mask);
      continue;
    }
    if (r->kind == MEMO_ASKED)
      continue; /* kept in the memo entry, which is the one replayed */
    /* (Names in a memo are not NUL-terminated.) */
    const size_t clen = it->len ? it->len + 1 + r->len : r->len;
    char *cpath = g_malloc(clen + 1);
    if (it->len) {
      memcpy(cpath, it->path, it->len);
      cpath[it->len] = '/';
    }
    memcpy(cpath + clen - r->len, r->name, r->len);
    cpath[clen] = '\0';
    if (r->kind == MEMO_SUBTREE && partial && left_whole(run, it->root, cpath, clen)) {
      /* As recorded, and nothing below it may have changed: left
       * unentered (its results are not told: a partial memo's walk is
       * asked for its changes alone). */
      g_ptr_array_add(wk->tops, cpath);
      continue;
    }
    struct item *child = g_new0(struct item, 1);
    child->len = clen;
    child->path = cpath;
    child->name_off = it->len ? it->len + 1 : 0;
    child->root = it->root;
    child->depth = depth;
    child->via_link = r->kind == MEMO_SUBTREE_LINK;
    child->tracked_only = (r->type & MEMO_TRACKED_ONLY) != 0;
    child->live = r->mask;
    child->ig = ignore_frame_ref(frame);
    if (here) {
      g_atomic_int_inc(&here->refs);
      child->chain = here;
    }
    add_rec(wk, r->name, r->len, REC_SUBTREE, 0, child, 0);
  }
  wk->stats.dirs_reused++;
  struct node *node = node_make(wk);
  if (run->memo_out)
    g_ptr_array_add(wk->memos, memo_dir_ref(m));
  node_publish(wk, it, node);
  chain_unref(here);
  ignore_frame_unref(frame);
  return true;
}

/* The record of a directory on the way, with the question QNAME (QLEN
 * bytes; NULL: none) asked there of the next one on the way, and the
 * index's answer, TRACKED. Several start directories may pass one
 * directory and ask about different ones below it: one record holds all
 * their questions (RUN->ways, moved to the memo by way_records()). */
static void
way_record(struct run *run, struct memo_dir *d, const char *qname, size_t qlen, bool tracked)
{
  char *key = g_strdup_printf("%u/%s", d->root, d->path);
  struct memo_dir *had = g_hash_table_lookup(run->ways, key);
  const guint n = (had ? had->n : 0) + (qname ? 1 : 0);
  size_t names = qlen;
  for (guint i = 0; had && i < had->n; i++) {
    names += had->recs[i].len;
    if (qname && had->recs[i].len == qlen && memcmp(had->recs[i].name, qname, qlen) == 0) {
      qname = NULL; /* asked already by another start directory */
      names -= qlen;
    }
  }
  struct memo_dir *rec = memo_dir_new(d->root, d->path, d->len, had && !qname ? had->n : n, names);
  rec->was = d->was;
  rec->repo_own = d->repo_own ? g_bytes_ref(d->repo_own) : NULL;
  rec->way = true;
  char *at = memo_dir_names(rec);
  guint k = 0;
  for (guint i = 0; had && i < had->n; i++, k++) {
    rec->recs[k] = had->recs[i];
    memcpy(at, had->recs[i].name, had->recs[i].len);
    rec->recs[k].name = at;
    at += had->recs[i].len;
  }
  if (qname) {
    struct memo_rec *q = &rec->recs[k];
    memcpy(at, qname, qlen);
    q->name = at;
    q->len = (uint32_t)qlen;
    q->kind = MEMO_ASKED;
    q->type = ASKED_DIR | (tracked ? ASKED_TRACKED : 0);
    q->mask = 0;
  }
  g_hash_table_replace(run->ways, key, rec);
  memo_dir_unref(d);
}

void
way_records(struct run *run)
{
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, run->ways);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    g_ptr_array_add(run->workers[0].memos, value); /* its reference, moved */
    g_hash_table_iter_steal(&it);
    g_free(key);
  }
}

/* Directory FD (PATH, LEN bytes, below root R) on the way to a start
 * directory: its ignore files (HAS_* in *HAS) decide below it, though it
 * is not read. Its record, made in *REC (NULL when not recording) for the
 * caller to file with the question it asks there (way_record()), so that a
 * cache sees them change (docs/cache.md); false when the last walk's
 * record of it (a replay's) says they differ — edited in place, no stamp
 * of a directory changes, and nothing below may then be replayed. */
static bool
way_dir(struct run *run, unsigned r, int fd, const char *path, size_t len, unsigned *has,
        struct memo_dir **rec)
{
  *rec = NULL;
  *has = ignore_probe(fd);
  const bool record = run->memo_out && run->sorted;
  if (!record && run->memo_old == NULL)
    return true; /* no cache: nothing to stamp */
  struct stat st;
  if (record && fstat(fd, &st) == 0) {
    struct memo_dir *d = memo_dir_new(r, path, len, 0, 0);
    d->way = true;
    stamp_of(&d->was.st, &st, false);
    d->was.racy = stamp_racy(&d->was.st, &run->racy_from);
    record_rules(run, r, fd, path, *has, &d->was, &d->repo_own);
    *rec = d;
  }
  if (run->memo_old == NULL)
    return true;
  const struct memo_dir *m = walk_memo_lookup(run->memo_old, r, path, len);
  return m && dir_check_rules(&m->was, *has, fd, "") == DIR_SAME;
}

/* The ignore rules for start directory D of root R, read from the root
 * and every directory on the way (their listings are not read), in *FRAME;
 * *SAME false when one of those ignore files is not as the last walk's
 * record has it. False when D or a directory on the way is ignored (or is
 * `.git`) — unless git's rules are what leave it out and the index holds
 * paths below it: then *TRACKED_ONLY, D entered for those alone, as a walk
 * from the root would enter it (step.c, keep_entry). */
bool
start_not_ignored(struct run *run, unsigned r, const char *d, struct ignore_frame **frame,
                  bool *same, bool *tracked_only)
{
  *frame = NULL;
  *same = true;
  *tracked_only = false;
  if (run->ig == NULL)
    return true;
  struct ignore_ctx *c = &run->ig[r];
  struct ignore_frame *f = ignore_frame_ref(c->above);
  size_t len = strlen(d);
  if (len == 0) {
    *frame = f;
    return true;
  }
  const bool vcs = c->flags & IGNORE_VCS;
  int root_fd = run->root_fds[r];
  unsigned has;
  struct memo_dir *rec; /* the last directory's on the way, until its question is known */
  *same = way_dir(run, r, root_fd, "", 0, &has, &rec);
  struct ignore_frame *next = ignore_frame_enter(c, f, root_fd, "", c->plen, has);
  ignore_frame_unref(f);
  f = next;
  GString *m = g_string_new(c->prefix);
  bool ok = true, tracked = false;
  for (size_t i = 0; i <= len && ok; i++) {
    if (i < len && d[i] != '/')
      continue;
    /* d[0..i) is a directory on the way, the last one D itself. */
    const char *slash = memrchr(d, '/', i);
    const char *name = slash ? slash + 1 : d;
    const size_t nlen = (size_t)(d + i - name);
    if (vcs && nlen == 4 && memcmp(name, ".git", 4) == 0) {
      ok = false;
      break;
    }
    g_string_truncate(m, c->plen);
    g_string_append_len(m, d, (gssize)i);
    const struct ignore_file *from = NULL;
    const struct ignore_rule *rule = ignore_verdict(c, f, m->str, m->len, true, &from);
    const bool left_out = rule && !rule->negated;
    bool asked = false, held = false, top = false;
    if (left_out && !from->vcs) {
      ok = false;
    } else if (left_out || tracked) {
      held = ignore_tracked(c, f, m->str, m->len, true, &top);
      asked = top;
      ok = held;
      tracked = true;
    }
    if (rec)
      way_record(run, rec, asked ? name : NULL, nlen, held);
    rec = NULL;
    if (!ok || i == len)
      break;
    char *sub = g_strndup(d, i);
    int fd = openat(root_fd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
      *same = way_dir(run, r, fd, sub, i, &has, &rec) && *same;
      next = ignore_frame_enter(c, f, fd, sub, c->plen + i + 1, has);
      /* A repository's top: its own rules and index from here. */
      if (next != f && next->top)
        tracked = false;
      ignore_frame_unref(f);
      f = next;
      close(fd);
    }
    g_free(sub);
  }
  if (rec)
    way_record(run, rec, NULL, 0, false);
  g_string_free(m, TRUE);
  if (!ok) {
    ignore_frame_unref(f);
    return false;
  }
  *tracked_only = tracked;
  *frame = f;
  return true;
}
