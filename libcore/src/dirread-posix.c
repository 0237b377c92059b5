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
  l->entries = g_array_new(FALSE, FALSE, sizeof(struct listing_entry));
  l->names = g_string_sized_new(4096);
}

void
listing_clear(struct listing *l)
{
  g_array_set_size(l->entries, 0);
  g_string_truncate(l->names, 0);
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
    struct listing_entry e = {(uint32_t)l->names->len, (uint32_t)len, type};
    g_string_append_len(l->names, name, (gssize)len + 1);
    g_array_append_val(l->entries, e);
  }
  closedir(dir);
  return err;
}
