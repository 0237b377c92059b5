/* trawl — `trawl check --checked FILE` (check-mark.h says why the time is
 * what it is). */
#define _POSIX_C_SOURCE 200809L /* futimens, utimensat */
#include "check-mark.h"
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool
check_mark_begin(const char *path, struct timespec *start)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, FILE_MODE);
  struct stat st;
  if (fd < 0 || futimens(fd, NULL) != 0 || fstat(fd, &st) != 0) {
    fprintf(stderr, "trawl: --checked %s: %s\n", path, strerror(errno));
    if (fd >= 0)
      close(fd);
    return false;
  }
  close(fd);
  *start = st.st_mtim;
  return true;
}

bool
check_mark_end(const char *path, const struct timespec *start)
{
  struct timespec before = *start;
  if (before.tv_nsec > 0) {
    before.tv_nsec--;
  } else {
    before.tv_sec--;
    before.tv_nsec = 999999999;
  }
  const struct timespec times[2] = {before, before};
  if (utimensat(AT_FDCWD, path, times, 0) != 0) {
    fprintf(stderr, "trawl: --checked %s: %s\n", path, strerror(errno));
    return false;
  }
  return true;
}
