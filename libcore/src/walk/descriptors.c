/* trawl — a walk's items and descriptors.
 *
 * An item's directory is opened with openat() on its parent's descriptor,
 * which the parent's subdirectories share (struct dirref) while the run has
 * descriptors to spare (half of what RLIMIT_NOFILE leaves); past that budget,
 * or once the process runs out (EMFILE), items open by their path from the
 * root, in steps of OPEN_PATH_MAX bytes so that no path is too long. A
 * literal start directory is opened component by component, so that no link
 * on the way is followed unless links are. Following links, every directory
 * on the way down joins a chain of (device, inode) pairs that tells a loop.
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
dirref_unref(struct run *run, struct dirref *d)
{
  if (d && g_atomic_int_dec_and_test(&d->refs)) {
    close(d->fd);
    g_atomic_int_add(&run->open_fds, -1);
    g_free(d);
  }
}

void
chain_unref(struct chain *c)
{
  while (c && g_atomic_int_dec_and_test(&c->refs)) {
    struct chain *up = c->up;
    g_free(c);
    c = up;
  }
}

/* Is the directory ST one of the chain's (device, inode)? */
bool
chain_has(const struct chain *c, const struct stat *st)
{
  for (; c; c = c->up)
    if (c->dev == st->st_dev && c->ino == st->st_ino)
      return true;
  return false;
}

void
item_free(struct run *run, struct item *it)
{
  dirref_unref(run, it->parent);
  chain_unref(it->chain);
  ignore_frame_unref(it->ig);
  g_free(it->path);
  g_free(it);
}

/* openat() a relative path of any length: in steps of at most
 * OPEN_PATH_MAX bytes, each ending at a '/'. */
int
open_relative(int base, const char *path, int flags)
{
  const int dir_flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  int fd = base, owned = -1;
  while (strlen(path) > OPEN_PATH_MAX) {
    const char *cut = path + OPEN_PATH_MAX;
    while (cut > path && *cut != '/')
      cut--;
    if (cut == path)
      break; /* one component over the limit: let the kernel refuse it */
    char *step = g_strndup(path, (size_t)(cut - path));
    int next = openat(fd, step, dir_flags);
    int err = errno;
    g_free(step);
    if (owned >= 0)
      close(owned);
    if (next < 0) {
      errno = err;
      return -1;
    }
    fd = owned = next;
    path = cut + 1;
  }
  int result = openat(fd, path, flags);
  int err = errno;
  if (owned >= 0)
    close(owned);
  errno = err;
  return result;
}

struct chain *
chain_new(const struct stat *st, struct chain *up)
{
  struct chain *c = g_new0(struct chain, 1);
  c->dev = st->st_dev;
  c->ino = st->st_ino;
  c->up = up; /* takes the caller's reference */
  c->refs = 1;
  return c;
}

/* A literal start directory ("src/x" of "src/x/ **"): one component at a
 * time, so that without --follow no link on the way is followed, and with it
 * every directory on the way joins the loop-detection chain. */
int
open_start(struct run *run, struct item *it)
{
  const bool follow = run->w->opt.follow;
  const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
  /* Directories on the way need only search permission, as in a path
   * lookup: O_PATH where the system has it. */
#ifdef O_PATH
  const int pass = O_PATH | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
#else
  const int pass = flags;
#endif
  int fd = fcntl(run->root_fds[it->root], F_DUPFD_CLOEXEC, 0);
  const char *p = it->path;
  while (fd >= 0) {
    const char *slash = strchr(p, '/');
    char *comp = slash ? g_strndup(p, (size_t)(slash - p)) : g_strdup(p);
    int next = openat(fd, comp, slash ? pass : flags);
    int err = errno;
    g_free(comp);
    close(fd);
    errno = err;
    fd = next;
    if (fd < 0 || slash == NULL)
      break;
    struct stat st;
    if (follow && fstat(fd, &st) == 0)
      it->chain = chain_new(&st, it->chain);
    p = slash + 1;
  }
  return fd;
}

int
open_item(struct run *run, struct item *it)
{
  int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (it->via_link ? 0 : O_NOFOLLOW);
  int root_fd = run->root_fds[it->root];
  if (it->len == 0)
    return fcntl(root_fd, F_DUPFD_CLOEXEC, 0);
  if (it->start)
    return open_start(run, it);
  if (it->parent)
    return openat(it->parent->fd, it->path + it->name_off, flags);
  return open_relative(root_fd, it->path, flags);
}

/* Make every queued item open by path, closing the parent descriptors they
 * shared. */
void
shed_descriptors(struct run *run)
{
  for (unsigned i = 0; i < run->n_workers; i++) {
    struct worker *wk = &run->workers[i];
    pthread_mutex_lock(&wk->lock);
    for (size_t k = 0; k < wk->deque.length; k++) {
      struct item *queued = deque_at(&wk->deque, k);
      dirref_unref(run, queued->parent);
      queued->parent = NULL;
    }
    pthread_mutex_unlock(&wk->lock);
  }
}
