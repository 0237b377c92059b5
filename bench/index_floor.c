/* What touching a git index costs, the floor under reading it (issue 31):
 * map FILE, then read one byte of every 64-byte line, independent loads.
 *
 *   cc -std=c11 -O2 bench/index_floor.c -o /tmp/index_floor
 *   /tmp/index_floor tracked100k/.git/index
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double
now_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int
main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: index_floor FILE\n");
    return 2;
  }
  int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
    perror(argv[1]);
    return 2;
  }
  const double t0 = now_ms();
  const unsigned char *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (m == MAP_FAILED) {
    perror(argv[1]);
    return 2;
  }
  unsigned sum = 0;
  for (off_t i = 0; i < st.st_size; i += 64)
    sum += m[i];
  const double t1 = now_ms();
  printf("%s: %lld bytes, every line touched in %.3f ms (sum %u)\n", argv[1], (long long)st.st_size,
         t1 - t0, sum);
  return 0;
}
