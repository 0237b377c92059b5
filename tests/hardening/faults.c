/* trawl tests — a fault at a chosen call (LD_PRELOAD): the process killed
 * there (SIGKILL, as `kill -9` would), or the call failing with an errno.
 *
 * The hardening tests (tests/hardening/, docs/reliability.md) ask what a
 * process leaves behind when it is killed, or the disk fails, at any point
 * where it writes a file. A kill at a random time hits few of those points;
 * this shim counts the calls of the kinds asked for and faults the N-th, so
 * that a test can try each point in turn. Device-mapper's `error` target
 * would give real EIO, but needs a kernel with device-mapper; this one
 * does not (docs/reliability.md says where each fault comes from).
 *
 *   TRAWL_FAULT_OPS     kinds of call counted, comma-separated:
 *                       create  open/openat/creat with O_CREAT, linkat
 *                       open    open/openat without O_CREAT
 *                       write   write, pwrite, writev, copy_file_range (to its
 *                               output)
 *                       read    read, pread
 *                       getdents  syscall(SYS_getdents64) (the directory reader)
 *                       rename  rename, renameat, renameat2
 *                       utime   futimens, utimensat
 *                       close   close
 *                       unlink  unlink, unlinkat
 *   TRAWL_FAULT_PATH    count only calls on a path holding this text (for a
 *                       descriptor, the path /proc/self/fd shows; for a
 *                       rename, the new name)
 *   TRAWL_FAULT_AT      the call to fault, from 1; 0 or unset: none (count only)
 *   TRAWL_FAULT_ONWARD  set: fault every counted call from TRAWL_FAULT_AT on
 *   TRAWL_FAULT_ACTION  kill (the default), or an errno name: EIO, ENOSPC,
 *                       EDQUOT, EROFS, EACCES, EPERM, EFBIG
 *   TRAWL_FAULT_LOG     append "N KIND PATH" to this file for every counted
 *                       call, so that a test knows how many points there are
 *
 * A kill at a write writes the first half of the buffer first: a process
 * killed while the kernel copies a large write leaves part of it. A write
 * that fails with an errno writes nothing. A setting that cannot be parsed
 * stops the process (exit 2): a shim that silently did nothing would make
 * its tests pass.
 */
#undef _FILE_OFFSET_BITS /* open and open64 are both defined here */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

enum kind {
  K_CREATE = 1 << 0,
  K_OPEN = 1 << 1,
  K_WRITE = 1 << 2,
  K_READ = 1 << 3,
  K_GETDENTS = 1 << 4,
  K_RENAME = 1 << 5,
  K_UTIME = 1 << 6,
  K_CLOSE = 1 << 7,
  K_UNLINK = 1 << 8,
};

static const struct {
  const char *name;
  unsigned kind;
} kinds[] = {
  {"create", K_CREATE}, {"open", K_OPEN},     {"write", K_WRITE},
  {"read", K_READ},     {"getdents", K_GETDENTS}, {"rename", K_RENAME},
  {"utime", K_UTIME},   {"close", K_CLOSE},   {"unlink", K_UNLINK},
};

static const struct {
  const char *name;
  int value;
} errnos[] = {
  {"EIO", EIO},     {"ENOSPC", ENOSPC}, {"EDQUOT", EDQUOT}, {"EROFS", EROFS},
  {"EACCES", EACCES}, {"EPERM", EPERM}, {"EFBIG", EFBIG},
};

static unsigned ops;          /* kinds counted; 0: the shim does nothing */
static const char *path_text; /* only paths holding this */
static long at;               /* the call faulted, from 1 */
static int onward;
static int action;            /* 0: kill; else the errno */
static const char *log_path;
static atomic_long count;

static void
die(const char *what, const char *value)
{
  fprintf(stderr, "trawl-faults: %s=%s: not understood (tests/hardening/faults.c)\n", what,
          value);
  _exit(2);
}

__attribute__((constructor)) static void
faults_init(void)
{
  const char *v = getenv("TRAWL_FAULT_OPS");
  if (v == NULL || *v == '\0')
    return;
  char *list = strdup(v);
  for (char *save = NULL, *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
    unsigned k = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
      if (strcmp(w, kinds[i].name) == 0)
        k = kinds[i].kind;
    if (k == 0)
      die("TRAWL_FAULT_OPS", v);
    ops |= k;
  }
  free(list);
  path_text = getenv("TRAWL_FAULT_PATH");
  if (path_text && *path_text == '\0')
    path_text = NULL;
  v = getenv("TRAWL_FAULT_AT");
  if (v && *v) {
    char *end;
    errno = 0;
    at = strtol(v, &end, 10);
    if (errno || *end || at < 0)
      die("TRAWL_FAULT_AT", v);
  }
  onward = getenv("TRAWL_FAULT_ONWARD") != NULL;
  v = getenv("TRAWL_FAULT_ACTION");
  if (v && *v && strcmp(v, "kill") != 0) {
    for (size_t i = 0; i < sizeof errnos / sizeof errnos[0]; i++)
      if (strcmp(v, errnos[i].name) == 0)
        action = errnos[i].value;
    if (action == 0)
      die("TRAWL_FAULT_ACTION", v);
  }
  log_path = getenv("TRAWL_FAULT_LOG");
}

/* FN: the next definition of NAME (libc's), found once. */
#define REAL(name)                                                                                 \
  static __typeof__(&name) real_##name;                                                            \
  __typeof__(&name) fn = __atomic_load_n(&real_##name, __ATOMIC_ACQUIRE);                          \
  if (fn == NULL) {                                                                                \
    fn = (__typeof__(&name))dlsym(RTLD_NEXT, #name);                                               \
    if (fn == NULL)                                                                                \
      abort();                                                                                     \
    __atomic_store_n(&real_##name, fn, __ATOMIC_RELEASE);                                          \
  }

static const char *
kind_name(unsigned k)
{
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (kinds[i].kind == k)
      return kinds[i].name;
  return "?";
}

/* The path descriptor FD names, into BUF. */
static const char *
fd_path(int fd, char *buf, size_t size)
{
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, buf, size - 1);
  buf[n > 0 ? n : 0] = '\0';
  return buf;
}

static void
log_call(long n, unsigned k, const char *path)
{
  char line[4200];
  int len = snprintf(line, sizeof line, "%ld %s %s\n", n, kind_name(k), path);
  if (len <= 0)
    return;
  if (len >= (int)sizeof line)
    len = (int)sizeof line - 1;
  /* Through the system call: the wrappers below must not count it. */
  int fd = (int)syscall(SYS_openat, AT_FDCWD, log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
                        0644);
  if (fd >= 0) {
    (void)syscall(SYS_write, fd, line, (size_t)len);
    (void)syscall(SYS_close, fd);
  }
}

/* Is this call of kind K on PATH (or descriptor FD) the one to fault?
 * Then 1 (the caller fails it with errno set, or kills the process). */
static int
fault(unsigned k, const char *path, int fd)
{
  if (!(ops & k))
    return 0;
  char buf[4096];
  if (path == NULL)
    path = fd_path(fd, buf, sizeof buf);
  if (path_text && strstr(path, path_text) == NULL)
    return 0;
  long n = atomic_fetch_add(&count, 1) + 1;
  if (log_path)
    log_call(n, k, path);
  if (at == 0 || n < at || (n > at && !onward))
    return 0;
  errno = action;
  return 1;
}

static void
kill_now(void)
{
  kill(getpid(), SIGKILL);
  for (;;)
    pause();
}

/* ---- the wrappers ---- */

static int
open_common(int at_fd, const char *path, int flags, mode_t mode, int (*real)(int, const char *, int, ...))
{
  unsigned k = (flags & O_CREAT) ? K_CREATE : K_OPEN;
  if (fault(k, path, -1)) {
    if (action == 0)
      kill_now();
    return -1;
  }
  return real(at_fd, path, flags, mode);
}

static int
real_openat_fn(int at_fd, const char *path, int flags, ...)
{
  va_list ap;
  va_start(ap, flags);
  mode_t mode = va_arg(ap, mode_t);
  va_end(ap);
  return (int)syscall(SYS_openat, at_fd, path, flags | O_LARGEFILE, mode);
}

static mode_t
mode_of(int flags, va_list ap)
{
  return ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) ? va_arg(ap, mode_t) : 0;
}

int
open(const char *path, int flags, ...)
{
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return open_common(AT_FDCWD, path, flags, mode, real_openat_fn);
}

int
open64(const char *path, int flags, ...)
{
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return open_common(AT_FDCWD, path, flags, mode, real_openat_fn);
}

int
openat(int at_fd, const char *path, int flags, ...)
{
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return open_common(at_fd, path, flags, mode, real_openat_fn);
}

int
openat64(int at_fd, const char *path, int flags, ...)
{
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return open_common(at_fd, path, flags, mode, real_openat_fn);
}

/* What _FORTIFY_SOURCE builds call for an open() without a mode. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int at_fd, const char *path, int flags);
int __openat64_2(int at_fd, const char *path, int flags);

int
__open_2(const char *path, int flags)
{
  return open_common(AT_FDCWD, path, flags, 0, real_openat_fn);
}

int
__open64_2(const char *path, int flags)
{
  return open_common(AT_FDCWD, path, flags, 0, real_openat_fn);
}

int
__openat_2(int at_fd, const char *path, int flags)
{
  return open_common(at_fd, path, flags, 0, real_openat_fn);
}

int
__openat64_2(int at_fd, const char *path, int flags)
{
  return open_common(at_fd, path, flags, 0, real_openat_fn);
}

int
creat(const char *path, mode_t mode)
{
  return open_common(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, real_openat_fn);
}

ssize_t
write(int fd, const void *data, size_t n)
{
  REAL(write)
  if (fault(K_WRITE, NULL, fd)) {
    if (action == 0) {
      fn(fd, data, n / 2);
      kill_now();
    }
    return -1;
  }
  return fn(fd, data, n);
}

ssize_t
pwrite(int fd, const void *data, size_t n, off_t off)
{
  REAL(pwrite)
  if (fault(K_WRITE, NULL, fd)) {
    if (action == 0) {
      fn(fd, data, n / 2, off);
      kill_now();
    }
    return -1;
  }
  return fn(fd, data, n, off);
}

ssize_t
pwrite64(int fd, const void *data, size_t n, off64_t off)
{
  REAL(pwrite64)
  if (fault(K_WRITE, NULL, fd)) {
    if (action == 0) {
      fn(fd, data, n / 2, off);
      kill_now();
    }
    return -1;
  }
  return fn(fd, data, n, off);
}

ssize_t
writev(int fd, const struct iovec *iov, int n)
{
  REAL(writev)
  if (fault(K_WRITE, NULL, fd)) {
    if (action == 0)
      kill_now();
    return -1;
  }
  return fn(fd, iov, n);
}

/* A copy in the kernel from another file (the cache's blocks kept as they
 * were): a write to OUT. */
ssize_t
copy_file_range(int in, off64_t *in_off, int out, off64_t *out_off, size_t n, unsigned flags)
{
  REAL(copy_file_range)
  if (fault(K_WRITE, NULL, out)) {
    if (action == 0) {
      fn(in, in_off, out, out_off, n / 2, flags);
      kill_now();
    }
    return -1;
  }
  return fn(in, in_off, out, out_off, n, flags);
}

ssize_t
read(int fd, void *data, size_t n)
{
  REAL(read)
  if (fault(K_READ, NULL, fd)) {
    if (action == 0)
      kill_now();
    return -1;
  }
  return fn(fd, data, n);
}

ssize_t
pread(int fd, void *data, size_t n, off_t off)
{
  REAL(pread)
  if (fault(K_READ, NULL, fd)) {
    if (action == 0)
      kill_now();
    return -1;
  }
  return fn(fd, data, n, off);
}

ssize_t
pread64(int fd, void *data, size_t n, off64_t off)
{
  REAL(pread64)
  if (fault(K_READ, NULL, fd)) {
    if (action == 0)
      kill_now();
    return -1;
  }
  return fn(fd, data, n, off);
}

long
syscall(long number, ...)
{
  va_list ap;
  va_start(ap, number);
  long a[6];
  for (int i = 0; i < 6; i++)
    a[i] = va_arg(ap, long);
  va_end(ap);
  if (number == SYS_getdents64 && fault(K_GETDENTS, NULL, (int)a[0])) {
    if (action == 0)
      kill_now();
    return -1;
  }
  /* libc's syscall(), by its address: this definition hides the name. */
  static long (*real)(long, ...);
  if (real == NULL)
    real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
  return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static int
rename_common(const char *to)
{
  if (fault(K_RENAME, to, -1)) {
    if (action == 0)
      kill_now();
    return 1;
  }
  return 0;
}

int
rename(const char *from, const char *to)
{
  REAL(rename)
  return rename_common(to) ? -1 : fn(from, to);
}

int
renameat(int from_at, const char *from, int to_at, const char *to)
{
  REAL(renameat)
  return rename_common(to) ? -1 : fn(from_at, from, to_at, to);
}

int
renameat2(int from_at, const char *from, int to_at, const char *to, unsigned flags)
{
  REAL(renameat2)
  return rename_common(to) ? -1 : fn(from_at, from, to_at, to, flags);
}

/* A new name for a file (the cache's base: cachefile.c) counts as a
 * create. */
int
linkat(int from_at, const char *from, int to_at, const char *to, int flags)
{
  REAL(linkat)
  if (fault(K_CREATE, to, -1)) {
    if (action == 0)
      kill_now();
    return -1;
  }
  return fn(from_at, from, to_at, to, flags);
}

int
futimens(int fd, const struct timespec times[2])
{
  REAL(futimens)
  if (fault(K_UTIME, NULL, fd)) {
    if (action == 0)
      kill_now();
    return -1;
  }
  return fn(fd, times);
}

int
utimensat(int at_fd, const char *path, const struct timespec times[2], int flags)
{
  REAL(utimensat)
  if (fault(K_UTIME, path, -1)) {
    if (action == 0)
      kill_now();
    return -1;
  }
  return fn(at_fd, path, times, flags);
}

int
close(int fd)
{
  REAL(close)
  if (fault(K_CLOSE, NULL, fd)) {
    if (action == 0)
      kill_now();
    fn(fd); /* close(2) frees the descriptor even when it fails */
    errno = action;
    return -1;
  }
  return fn(fd);
}

int
unlink(const char *path)
{
  REAL(unlink)
  if (fault(K_UNLINK, path, -1)) {
    if (action == 0)
      kill_now();
    return -1;
  }
  return fn(path);
}

int
unlinkat(int at_fd, const char *path, int flags)
{
  REAL(unlinkat)
  if (fault(K_UNLINK, path, -1)) {
    if (action == 0)
      kill_now();
    return -1;
  }
  return fn(at_fd, path, flags);
}
