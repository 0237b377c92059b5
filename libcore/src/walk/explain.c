/* trawl — `trawl explain`: why a path is, or is not, a result (trawl/walk.h).
 *
 * The path is followed from the root component by component, as a walk
 * would reach it, asking at each step the questions the walk asks — hidden,
 * `.git`, depth, a link, pruned by the includes, closed by an exclude,
 * ignored by a rule (reading each directory's ignore files on the way) — and
 * at the path itself whether its type is wanted and which include and
 * exclude match. The first reason that fails stands. The questions go to the
 * query tables the walk itself uses (query.h: shown_mask, depth_masks,
 * query_wants with its prune index, the type masks, select_mask); only
 * which pattern decided is looked up here, for the answer to name it.
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
trawl_explanation_clear(TrawlExplanation *e)
{
  g_free(e->directory);
  g_free(e->ignore_source);
  g_free(e->ignore_pattern);
  g_free(e->ignore_match);
  g_free(e->outside_link);
  g_free(e->outside_target);
  memset(e, 0, sizeof *e);
}

static void
explain_fail(TrawlExplanation *e, TrawlExplainReason reason, const char *dir)
{
  if (e->reason != TRAWL_EXPLAIN_INCLUDED)
    return; /* the first failure stands */
  e->reason = reason;
  if (dir)
    e->directory = g_strdup(dir);
}

static void
explain_rule(TrawlExplanation *e, const struct ignore_rule *r, const struct ignore_file *from,
             const char *match)
{
  if (e->ignore_source)
    return; /* the first ignored directory's rule stands (git check-ignore's) */
  e->ignore_source = g_strdup(from->source);
  e->ignore_line = r->line;
  e->ignore_pattern = g_strdup(r->shown);
  e->ignore_negated = r->negated;
  e->ignore_match = g_strdup(match);
}

/* With follow, the link REL (below ROOT, whose real path is ROOT_REAL):
 * recorded in E when it is the first on the way that leads outside the
 * root. */
static void
explain_link(TrawlExplanation *e, const char *root, const char *root_real, const char *rel)
{
  if (e->outside_link || root_real == NULL)
    return;
  char *at = g_build_filename(root, rel, NULL);
  char *target = realpath(at, NULL);
  g_free(at);
  const size_t n = strlen(root_real);
  const bool inside = target && strncmp(target, root_real, n) == 0 &&
                      (target[n] == '/' || target[n] == '\0' || strcmp(root_real, "/") == 0);
  if (target && !inside) {
    e->outside_link = g_strdup(rel);
    e->outside_target = g_strdup(target);
  }
  free(target);
}

bool
trawl_walker_explain(TrawlWalker *w, const char *path, TrawlExplanation *out, GError **error)
{
  memset(out, 0, sizeof *out);
  g_return_val_if_fail(!w->shared, false);
  const struct query *q = w->queries->pdata[0];
  walker_default_root(w);
  const char *root = w->roots->pdata[0];
  int root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) {
    g_set_error(error, TRAWL_WALK_ERROR, TRAWL_WALK_ERROR_ROOT, "%s: %s", root, g_strerror(errno));
    return false;
  }
  const TrawlWalkOptions *o = &w->opt;
  struct qtab qt;
  qtab_init(&qt, w->queries, w->patset_min);
  GArray *hits = g_array_new(FALSE, FALSE, sizeof(guint));
  const uint64_t self = QBIT(0);
  /* The path as the walk would spell it: no "./", no empty components. */
  GString *norm = g_string_new(NULL);
  char **parts = g_strsplit(path, "/", -1);
  bool up = false;
  for (char **p = parts; *p; p++) {
    if (**p == '\0' || strcmp(*p, ".") == 0)
      continue;
    up = up || strcmp(*p, "..") == 0;
    if (norm->len)
      g_string_append_c(norm, '/');
    g_string_append(norm, *p);
  }
  g_strfreev(parts);
  if (up) {
    /* A walk reports paths below its root only: a path through `..` is
     * never one, wherever it leads, and nothing there is looked at. */
    out->reason = TRAWL_EXPLAIN_OUTSIDE;
    g_string_free(norm, TRUE);
    qtab_clear(&qt);
    g_array_free(hits, TRUE);
    close(root_fd);
    return true;
  }
  char *root_real = o->follow ? realpath(root, NULL) : NULL;

  struct ignore_ctx igc;
  const bool use_ig = o->ignore || w->ignore_files->len;
  if (use_ig)
    ignore_ctx_init(&igc, o->ignore, root_fd, root, w->ignore_files->len ? w->ignore_files : NULL,
                    NULL, NULL);
  struct ignore_frame *frame = use_ig ? ignore_frame_ref(igc.above) : NULL;
  const bool vcs = use_ig && (o->ignore & TRAWL_IGNORE_VCS);
  GString *m = g_string_new(use_ig ? igc.prefix : "");
  const size_t plen = m->len;
  bool ignored_above = false;
  /* Below a directory git's rules leave out but the index holds paths in,
   * as a walk enters it: only tracked paths (step.c, keep_entry). */
  bool tracked_only = false;
  char *kept_at = NULL; /* that directory */
  out->reason = TRAWL_EXPLAIN_INCLUDED;

  int depth = 0;
  size_t len = norm->len;
  /* Below a link the walk does not follow nothing is looked at: the walk
   * never goes there, and it may lead out of the root. */
  bool behind_link = false;
  for (size_t i = 0; i <= len; i++) {
    if (i > 0 && i < len && norm->str[i] != '/')
      continue;
    /* norm[0..i): the root (i == 0), a directory above the path, or the path. */
    const bool last = i == len;
    char *rel = g_strndup(norm->str, i);
    const char *slash = strrchr(rel, '/');
    const char *name = slash ? slash + 1 : rel;
    struct stat st;
    bool exists = i == 0 || (!behind_link && fstatat(root_fd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0);
    bool is_dir = i == 0 || (exists && S_ISDIR(st.st_mode));
    if (i > 0) {
      depth++;
      if (last && !exists) {
        explain_fail(out, TRAWL_EXPLAIN_MISSING, NULL);
      } else if (last) {
        out->type = S_ISDIR(st.st_mode) ? TRAWL_ENTRY_DIR
                    : S_ISLNK(st.st_mode) ? TRAWL_ENTRY_SYMLINK : TRAWL_ENTRY_FILE;
      }
      if (shown_mask(&qt, name, strlen(name), self) == 0)
        explain_fail(out, TRAWL_EXPLAIN_HIDDEN, last ? NULL : rel);
      if (vcs && strcmp(name, ".git") == 0)
        explain_fail(out, TRAWL_EXPLAIN_GIT_DIR, last ? NULL : rel);
      uint64_t report_at, descend_at;
      depth_masks(&qt, depth, self, &report_at, &descend_at);
      if (report_at == 0)
        explain_fail(out, TRAWL_EXPLAIN_DEPTH, NULL);
      if (!last && exists && S_ISLNK(st.st_mode)) {
        struct stat target;
        if (!o->follow || fstatat(root_fd, rel, &target, 0) != 0 || !S_ISDIR(target.st_mode)) {
          explain_fail(out, TRAWL_EXPLAIN_LINK, rel);
          behind_link = true;
        } else {
          is_dir = true;
        }
      }
      if (o->follow && exists && S_ISLNK(st.st_mode))
        explain_link(out, root, root_real, rel);
      if (!last) {
        const TrawlPattern *x = closing_exclude(q, rel, i, true);
        if (!query_wants(q, rel, i))
          explain_fail(out, TRAWL_EXPLAIN_PRUNED, rel);
        if (x) {
          if (out->reason == TRAWL_EXPLAIN_INCLUDED)
            out->exclude = x;
          explain_fail(out, TRAWL_EXPLAIN_EXCLUDED, rel);
        }
      }
      /* The ignore verdict, from the rules of the directories above; where
       * git's would leave it out, the index's. */
      if (use_ig && !ignored_above && exists) {
        g_string_truncate(m, plen);
        g_string_append(m, rel);
        const bool dir = S_ISDIR(st.st_mode);
        const struct ignore_file *from = NULL;
        const struct ignore_rule *r = ignore_verdict(&igc, frame, m->str, m->len, dir, &from);
        const bool left_out = r && !r->negated;
        if (r && (left_out || last) && !tracked_only)
          explain_rule(out, r, from, rel);
        if (left_out && !from->vcs) {
          /* .ignore and the caller's files leave tracked paths out too. */
          ignored_above = true;
          explain_fail(out, TRAWL_EXPLAIN_IGNORED, kept_at ? kept_at : last ? NULL : rel);
        } else if (left_out || tracked_only) {
          if (ignore_tracked(&igc, frame, m->str, m->len, dir, NULL)) {
            out->tracked = true;
            if (!tracked_only)
              kept_at = g_strdup(rel);
            tracked_only = true;
          } else {
            ignored_above = true;
            explain_fail(out, TRAWL_EXPLAIN_IGNORED, kept_at ? kept_at : last ? NULL : rel);
          }
        }
      }
    }
    if (!last && use_ig && !ignored_above && is_dir) {
      int fd = i == 0 ? dup(root_fd) : openat(root_fd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd >= 0) {
        struct ignore_frame *next = ignore_frame_enter(&igc, frame, fd, rel,
                                                       plen + (i ? i + 1 : 0), ignore_probe(fd));
        /* A repository's top: its own rules and index below. */
        if (next != frame && next->top)
          tracked_only = false;
        ignore_frame_unref(frame);
        frame = next;
        close(fd);
      }
    }
    if (last && exists) {
      unsigned kind = out->type;
      const unsigned k = kind == TRAWL_ENTRY_DIR ? KIND_DIR
                         : kind == TRAWL_ENTRY_SYMLINK ? KIND_SYMLINK : KIND_FILE;
      bool wanted = (qt.types[k] & self) != 0;
      bool dir = kind == TRAWL_ENTRY_DIR;
      if (o->follow && kind == TRAWL_ENTRY_SYMLINK) {
        struct stat target;
        if (fstatat(root_fd, rel, &target, 0) == 0) {
          dir = S_ISDIR(target.st_mode);
          wanted = (qt.types[dir ? KIND_DIR : KIND_FILE] & self) != 0;
        }
      }
      if (!wanted)
        explain_fail(out, TRAWL_EXPLAIN_TYPE, NULL);
      /* Selected as the walk selects (select_mask's two halves), then the
       * pattern that decided, named. */
      const bool included = include_mask(&qt, rel, i, self, hits, dir) != 0;
      const TrawlEntryType as = dir ? TRAWL_ENTRY_DIR : TRAWL_ENTRY_FILE;
      for (guint p = 0; included && p < q->includes->len && out->include == NULL; p++)
        if (trawl_pattern_match_entry(q->includes->pdata[p], rel, i, as))
          out->include = q->includes->pdata[p];
      if (!included)
        explain_fail(out, TRAWL_EXPLAIN_NOT_INCLUDED, NULL);
      const bool excluded = patlist_match(&qt.exc, rel, i, self, hits) != 0;
      const TrawlPattern *x = excluded ? closing_exclude(q, rel, i, false) : NULL;
      if (x && out->exclude == NULL) {
        if (out->reason == TRAWL_EXPLAIN_INCLUDED)
          out->exclude = x;
        explain_fail(out, TRAWL_EXPLAIN_EXCLUDED, NULL);
      }
    }
    g_free(rel);
  }
  if (len == 0)
    explain_fail(out, TRAWL_EXPLAIN_NOT_INCLUDED, NULL); /* the root itself is never a result */
  out->selected = out->reason == TRAWL_EXPLAIN_INCLUDED;
  /* Kept by the index above it, left out below: not tracked after all. */
  out->tracked = out->tracked && !ignored_above;
  g_free(kept_at);
  g_array_free(hits, TRUE);
  qtab_clear(&qt);
  ignore_frame_unref(frame);
  if (use_ig)
    ignore_ctx_clear(&igc);
  g_string_free(m, TRUE);
  g_string_free(norm, TRUE);
  free(root_real);
  close(root_fd);
  return true;
}
