/* trawl — the Linux directory reader: getdents64 into a 64 KiB buffer per
 * call, so that a directory of a few thousand entries costs one or two
 * system calls and no libc stream (the floor walker in bench/ does the
 * same). d_type is passed through; the walker stats only DT_UNKNOWN. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "dirread.h"

#if defined(__linux__)
#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel's record; glibc < 2.30 has no getdents64() wrapper. */
struct linux_dirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

enum { GETDENTS_BUFFER = 64 * 1024 };

bool
dirread_linux_available(void)
{
  return true;
}

int
dirread_linux(int fd, struct listing *l)
{
  /* Per listing, from the heap: pages the kernel never writes are never
   * touched. (A static __thread buffer was zeroed whole at start-up: 16 page
   * faults before the first directory.) malloc's alignment suits the
   * records. */
  if (l->raw == NULL)
    l->raw = g_malloc(GETDENTS_BUFFER);
  char *buf = l->raw;
  listing_clear(l);
  for (;;) {
    long n = syscall(SYS_getdents64, fd, buf, GETDENTS_BUFFER);
    if (n == 0)
      return 0;
    if (n < 0)
      return errno == EINTR ? 0 : errno;
    for (long pos = 0; pos < n;) {
      const struct linux_dirent64 *d = (const void *)(buf + pos);
      pos += d->d_reclen;
      const char *name = d->d_name;
      if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
        continue;
      size_t len = strlen(name);
      listing_add(l, name, len, d->d_type);
    }
  }
}

#else

bool
dirread_linux_available(void)
{
  return false;
}

int
dirread_linux(int fd, struct listing *l)
{
  (void)fd;
  listing_clear(l);
  return ENOSYS;
}

#endif
