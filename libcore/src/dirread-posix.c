/* trawl — the portable directory reader: fdopendir/readdir on a duplicate of
 * the descriptor (fdopendir takes ownership of what it is given). */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* d_type */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "dirread.h"

void
listing_init(struct listing *l)
{
  memset(l, 0, sizeof *l);
}

void
listing_clear(struct listing *l)
{
  l->n = 0;
  l->names.len = 0;
}

void
listing_free(struct listing *l)
{
  g_free(l->entries);
  g_free(l->raw);
  buf_free(&l->names);
  memset(l, 0, sizeof *l);
}

int
dirread_posix(int fd, struct listing *l)
{
  listing_clear(l);
  int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0)
    return errno;
  DIR *dir = fdopendir(copy);
  if (dir == NULL) {
    int err = errno;
    close(copy);
    return err;
  }
  int err = 0;
  for (;;) {
    errno = 0;
    struct dirent *d = readdir(dir);
    if (d == NULL) {
      err = errno;
      break;
    }
    const char *name = d->d_name;
    if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
      continue;
    size_t len = strlen(name);
#ifdef _DIRENT_HAVE_D_TYPE
    uint8_t type = d->d_type;
#else
    uint8_t type = DT_UNKNOWN;
#endif
    listing_add(l, name, len, type);
  }
  closedir(dir);
  return err;
}
