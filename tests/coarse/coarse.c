/* trawl tests — a file system's time granularity, on any file system
 * (LD_PRELOAD).
 *
 * The coarse suites (meson.build beside this file) run in /tmp on ramfs,
 * whose stamps come from the kernel's coarse clock itself: a 4 ms tick at
 * HZ=250, as on Debian 12's 6.1 (docs/cache.md, "Coarse and fine file
 * times"). Some file systems keep coarser times than that clock: vfat 2 s
 * (its ctime is its mtime since Linux 5.19), exFAT 10 ms, ext4 with
 * 128-byte inodes 1 s. The kernel cuts every time it stores down to the
 * file system's granularity (timestamp_truncate(), and vfat's own code for
 * its 2 s: a change's "now" and a time set with utimensat alike), so
 * cutting every time a process reads down to it shows what that file
 * system would hold — for the times set to "now" and the ones set
 * explicitly.
 *
 * Preloaded with TRAWL_COARSE_GRAN_NS=N (nanoseconds, 1 to 10 s), every
 * st_atim, st_mtim and st_ctim that stat, lstat, fstat, fstatat (and their
 * 64-bit names), statx (its birth time too) and the __xstat family of
 * glibc before 2.33 hand back is rounded down to a multiple of N. A value
 * that is not a number in range stops the process (exit 2): a shim that
 * silently did nothing would make its tests pass.
 */
#undef _FILE_OFFSET_BITS /* stat and stat64 are both defined here */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NS 1000000000LL

static int64_t gran = 1;
static int64_t lag = 0;

/* The setting NAME, a number of nanoseconds from LOW to HIGH, into *TO;
 * unset or empty leaves *TO. */
static void
setting(const char *name, long long low, long long high, int64_t *to)
{
  const char *v = getenv(name);
  if (v == NULL || *v == '\0')
    return;
  char *end;
  errno = 0;
  const long long n = strtoll(v, &end, 10);
  if (errno || *end != '\0' || n < low || n > high) {
    fprintf(stderr, "trawl-coarse: %s=%s: not a number of nanoseconds from %lld to %lld\n", name,
            v, low, high);
    _exit(2);
  }
  *to = n;
}

__attribute__((constructor)) static void
coarse_init(void)
{
  setting("TRAWL_COARSE_GRAN_NS", 1, 10 * NS, &gran);
  setting("TRAWL_COARSE_LAG_NS", 0, NS, &lag);
}

/* The time SEC.NSEC rounded down to the granularity (toward the past for
 * times before 1970 too, as the kernel's cut of the nanoseconds is). Times
 * beyond what 64 bits of nanoseconds hold (the year 2262) stay as they
 * are. */
static void
cut(int64_t *sec, int64_t *nsec)
{
  if (gran == 1 || *sec <= -9000000000LL || *sec >= 9000000000LL)
    return;
  int64_t t = *sec * NS + *nsec;
  int64_t r = t % gran;
  t -= r < 0 ? r + gran : r;
  r = t % NS;
  *sec = (t - (r < 0 ? r + NS : r)) / NS;
  *nsec = r < 0 ? r + NS : r;
}

static void
cut_ts(struct timespec *ts)
{
  int64_t s = ts->tv_sec, n = ts->tv_nsec;
  cut(&s, &n);
  ts->tv_sec = (time_t)s;
  ts->tv_nsec = (long)n;
}

static void
cut_sx(struct statx_timestamp *ts)
{
  int64_t s = ts->tv_sec, n = ts->tv_nsec;
  cut(&s, &n);
  ts->tv_sec = s;
  ts->tv_nsec = (uint32_t)n;
}

#define CUT_STAT(st)                                                                               \
  do {                                                                                             \
    cut_ts(&(st)->st_atim);                                                                        \
    cut_ts(&(st)->st_mtim);                                                                        \
    cut_ts(&(st)->st_ctim);                                                                        \
  } while (0)

/* FN: the next definition of NAME (libc's), found once. */
#define REAL(name)                                                                                 \
  static __typeof__(&name) real_##name;                                                            \
  __typeof__(&name) fn = __atomic_load_n(&real_##name, __ATOMIC_ACQUIRE);                          \
  if (fn == NULL) {                                                                                \
    fn = (__typeof__(&name))dlsym(RTLD_NEXT, #name);                                               \
    if (fn == NULL) {                                                                              \
      errno = ENOSYS;                                                                              \
      return -1;                                                                                   \
    }                                                                                              \
    __atomic_store_n(&real_##name, fn, __ATOMIC_RELEASE);                                          \
  }

/* Each wrapper calls the real function and cuts what it filled. */
#define WRAP(name, params, args, st)                                                               \
  int name params                                                                                  \
  {                                                                                                \
    REAL(name)                                                                                     \
    int rc = fn args;                                                                              \
    if (rc == 0)                                                                                   \
      CUT_STAT(st);                                                                                \
    return rc;                                                                                     \
  }

WRAP(stat, (const char *path, struct stat *st), (path, st), st)
WRAP(stat64, (const char *path, struct stat64 *st), (path, st), st)
WRAP(lstat, (const char *path, struct stat *st), (path, st), st)
WRAP(lstat64, (const char *path, struct stat64 *st), (path, st), st)
WRAP(fstat, (int fd, struct stat *st), (fd, st), st)
WRAP(fstat64, (int fd, struct stat64 *st), (fd, st), st)
WRAP(fstatat, (int at, const char *path, struct stat *st, int flags), (at, path, st, flags), st)
WRAP(fstatat64, (int at, const char *path, struct stat64 *st, int flags), (at, path, st, flags),
     st)

/* Programs built against glibc before 2.33 call these. */
int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstat(int ver, int fd, struct stat *st);
int __fxstat64(int ver, int fd, struct stat64 *st);
int __fxstatat(int ver, int at, const char *path, struct stat *st, int flags);
int __fxstatat64(int ver, int at, const char *path, struct stat64 *st, int flags);

WRAP(__xstat, (int ver, const char *path, struct stat *st), (ver, path, st), st)
WRAP(__xstat64, (int ver, const char *path, struct stat64 *st), (ver, path, st), st)
WRAP(__lxstat, (int ver, const char *path, struct stat *st), (ver, path, st), st)
WRAP(__lxstat64, (int ver, const char *path, struct stat64 *st), (ver, path, st), st)
WRAP(__fxstat, (int ver, int fd, struct stat *st), (ver, fd, st), st)
WRAP(__fxstat64, (int ver, int fd, struct stat64 *st), (ver, fd, st), st)
WRAP(__fxstatat, (int ver, int at, const char *path, struct stat *st, int flags),
     (ver, at, path, st, flags), st)
WRAP(__fxstatat64, (int ver, int at, const char *path, struct stat64 *st, int flags),
     (ver, at, path, st, flags), st)

int
statx(int at, const char *path, int flags, unsigned int mask, struct statx *sx)
{
  REAL(statx)
  int rc = fn(at, path, flags, mask, sx);
  if (rc == 0) {
    cut_sx(&sx->stx_atime);
    cut_sx(&sx->stx_btime);
    cut_sx(&sx->stx_ctime);
    cut_sx(&sx->stx_mtime);
  }
  return rc;
}

int
clock_gettime(clockid_t id, struct timespec *ts)
{
  REAL(clock_gettime)
  int rc = fn(id, ts);
  if (rc == 0 && id == CLOCK_REALTIME && lag) {
    int64_t t = (int64_t)ts->tv_nsec + lag;
    ts->tv_sec += (time_t)(t / NS);
    ts->tv_nsec = (long)(t % NS);
  }
  return rc;
}
