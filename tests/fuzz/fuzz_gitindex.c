/* trawl — libFuzzer target over the index reader (libcore/src/gitindex.c):
 * any bytes read as a repository's index file.
 *
 * The whole input is the file (a memfd, read through /proc/self/fd/N as a
 * path), so a seed is an index as git writes it (tests/fuzz/corpus-gitindex/:
 * formats 2, 3 and 4, a split index's main file, a sparse index). Each input
 * is read with 20-byte and with 32-byte object names.
 *
 * Invariants, each checked with abort() so that libFuzzer reports it:
 *  - gitindex_read() returns an index or sets an error, never both, never
 *    neither;
 *  - an index read has no more entries than the file could hold, each path
 *    readable to its end (AddressSanitizer checks the reads), a stage of
 *    0 to 3;
 *  - every entry's path is found as a file (its own entry, or a sparse
 *    directory above it), and every directory above it as a directory (a
 *    binary search over an array in the file's order, which a damaged
 *    file need not sort: then only that the lookups return);
 *  - a path one byte longer than an entry's is a lookup that returns.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gitindex.h"
#include "fuzz_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_fail(const char *what)
{
  fprintf(stderr, "fuzz_gitindex: %s\n", what);
  abort();
}

/* Is IX in git's order (bytewise by path)? Lookups are exact only then. */
static int
sorted(const struct gitindex *ix, const struct gitindex_entry *all)
{
  for (size_t i = 1; i < ix->n; i++) {
    const struct gitindex_entry *a = &all[i - 1], *b = &all[i];
    const size_t n = a->len < b->len ? a->len : b->len;
    const int c = memcmp(a->path, b->path, n);
    if (c > 0 || (c == 0 && a->len > b->len))
      return 0;
  }
  return 1;
}

/* Does ALL (IX's entries) hold PATH exactly: a scan, against the lookup. */
static int
holds(const struct gitindex *ix, const struct gitindex_entry *all, const char *path, size_t len)
{
  for (size_t i = 0; i < ix->n; i++)
    if (all[i].len == len && memcmp(all[i].path, path, len) == 0)
      return 1;
  return 0;
}

static void
check(const char *path, size_t size, size_t hash_len)
{
  GError *error = NULL;
  struct gitindex *ix = gitindex_read(path, hash_len, &error);
  if ((ix == NULL) == (error == NULL))
    fuzz_fail("gitindex_read: an index and an error, or neither");
  if (ix == NULL) {
    g_error_free(error);
    return;
  }
  if (ix->n > size / (40 + hash_len + 2) + 1)
    fuzz_fail("more entries than the file holds");
  struct gitindex_entry *all = gitindex_entries(ix);
  const int in_order = sorted(ix, all);
  char *longer = NULL;
  for (size_t i = 0; i < ix->n; i++) {
    const struct gitindex_entry *e = &all[i];
    if (e->stage > 3)
      fuzz_fail("a stage above 3");
    volatile char sink = 0;
    for (uint32_t k = 0; k < e->len; k++)
      sink ^= e->path[k];
    (void)sink;
    const int file = gitindex_has_file(ix, e->path, e->len);
    if (in_order && !(e->flags & GITINDEX_SPARSE_DIR) && !file)
      fuzz_fail("an entry's path is not found as a file");
    for (uint32_t k = 1; k + 1 < e->len; k++) {
      if (e->path[k] != '/')
        continue;
      const int dir = gitindex_has_dir(ix, e->path, k);
      if (in_order && !dir)
        fuzz_fail("a directory above an entry is not found");
    }
    longer = realloc(longer, (size_t)e->len + 1);
    memcpy(longer, e->path, e->len);
    longer[e->len] = 'x';
    const int found = gitindex_has_file(ix, longer, (size_t)e->len + 1);
    if (in_order && !ix->sparse && found != holds(ix, all, longer, (size_t)e->len + 1))
      fuzz_fail("a path one byte longer than an entry's is answered unlike a scan would");
    if (e->len > 0)
      (void)gitindex_has_dir(ix, longer, (size_t)e->len + 1);
  }
  free(longer);
  g_free(all);
  gitindex_free(ix);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  int fd = memfd_create("index", MFD_CLOEXEC);
  if (fd < 0)
    return 0;
  if (size > 0 && write(fd, data, size) != (ssize_t)size) {
    close(fd);
    return 0;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  check(path, size, 20);
  check(path, size, 32);
  close(fd);
  return 0;
}
